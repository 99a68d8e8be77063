"""Registers BRANCHES (``solvers.branches``: optimal sparse trees by DP + branch-and-bound) as solver
``branches``."""

from __future__ import annotations

import numpy as np

from solvers.branches import DEFAULT_LAMBDAS, DEFAULT_MEMORY_MB, branches_front, parse_lambdas
from treeexplorer.registry import Param, SolverSpec, register
from treeexplorer.schema import OP_EQ, Condition

__all__ = ["run", "SPEC", "onehot_groups"]


def _lambdas_doc() -> str:
    return ", ".join(f"{v:g}" for v in DEFAULT_LAMBDAS)


PARAMS = (
    Param("sparsity", "float", 0.01,
          "λ: accuracy given up per split (objective = accuracy - λ·splits). Larger gives smaller trees; "
          "small values (below about 0.005) can take long without a depth limit.", bounds=(0.0, 1.0)),
    Param("max_depth", "int", None, "Maximum depth of the tree (default: no limit, as in the paper).",
          bounds=(0, None)),
    Param("front", "bool", True,
          f"Sweep λ over {_lambdas_doc()} down to the sparsity value and return each distinct optimal "
          "tree once; off: only the optimal tree for the sparsity value."),
    Param("lambdas", "str", None,
          "Comma-separated λ values to sweep instead of the default grid, e.g. 0.05,0.02,0.01 "
          "(used when front is on)."),
    Param("memory_mb", "int", DEFAULT_MEMORY_MB,
          "Memory for the search's store, in MB (about 32 bytes per test per branch explored). When it is "
          "full the search stops with the best tree so far, not proven optimal, and says so.",
          bounds=(16, None)),
    Param("multiway", "bool", True,
          "Split a categorical column with 3 or more categories into one branch per category, counted as "
          "ONE split (the paper's multiway splits); its one-vs-rest tests stay available. Needs every "
          "category's test (discretizers none, exact, quantile, uniform, mdlp; not a MID subset)."),
)


def onehot_groups(features, X: np.ndarray) -> list[list[int]]:
    """The tests of ``X`` that are the complete one-hot encoding of one categorical column.

    Parameters
    ----------
    features : sequence
        What each column of ``X`` is (a :class:`Condition` for a test).
    X : array of shape (n, p)
        The 0/1 test matrix.

    Returns
    -------
    list of list of int
        One group per column with at least 3 ``column = category`` tests that partition the rows (a
        discretizer that kept only some categories, like MID, gives no group for that column).
    """
    by_column: dict[int, list[int]] = {}
    for j, f in enumerate(features or ()):
        if isinstance(f, Condition) and f.op == OP_EQ:
            by_column.setdefault(f.column, []).append(j)
    return [g for g in by_column.values()
            if len(g) >= 3 and np.all(np.asarray(X)[:, g].sum(axis=1, dtype=np.int64) == 1)]


def run(X, y, n_classes, control, *, sparsity=0.01, max_depth=None, front=True, lambdas=None,
        memory_mb=DEFAULT_MEMORY_MB, multiway=True, features=None):
    """Adapter entry point: ``X`` is the 0/1 test matrix; returns a :class:`solvers.RawFront`."""
    if lambdas is not None:
        if not front:
            raise ValueError("lambdas is a sweep for the front; with front off give the one λ as sparsity")
        parse_lambdas(lambdas)  # a bad list fails before any search starts
    groups = onehot_groups(features, X) if multiway else None
    return branches_front(X, y, sparsity=sparsity, max_depth=max_depth, front=front, lambdas=lambdas,
                          n_classes=n_classes, control=control, memory_mb=memory_mb, groups=groups)


SPEC = register(SolverSpec(
    name="branches",
    input="binary",
    run=run,
    params=PARAMS,
    title="BRANCHES (optimal sparse trees)",
    description="Chaouki, Read & Bifet's dynamic programming with branch-and-bound: the tree maximising "
                "accuracy - λ·splits, proven optimal, for a sweep of λ values; no depth limit needed; "
                "categorical columns split multiway (one branch per category, one split).",
    default_discretizer="mid",
    wants_features=True,
))
