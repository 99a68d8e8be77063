"""Registers BRANCHES (``solvers.branches``: optimal sparse trees by DP + branch-and-bound) as solver
``branches``."""

from __future__ import annotations

import numpy as np

from treeexplorer.registry import Param, SolverSpec, register, report_count
from treeexplorer.schema import OP_EQ, Condition
from treeexplorer.solvers.branches import DEFAULT_LAMBDAS, DEFAULT_MEMORY_MB, branches_front, parse_lambdas

__all__ = ["run", "SPEC", "multiway_groups"]


def _lambdas_doc() -> str:
    return ", ".join(f"{v:g}" for v in DEFAULT_LAMBDAS)


PARAMS = (
    Param(
        "sparsity",
        "float",
        0.01,
        "λ: accuracy given up per split (objective = accuracy - λ·splits). Larger gives smaller trees; "
        "small values (below about 0.005) can take long without a depth limit.",
        bounds=(0.0, 1.0),
    ),
    Param(
        "max_depth", "int", None, "Maximum depth of the tree (default: no limit, as in the paper).", bounds=(0, None)
    ),
    Param(
        "front",
        "bool",
        True,
        f"Sweep λ over {_lambdas_doc()} down to the sparsity value and return each distinct optimal "
        "tree once; off: only the optimal tree for the sparsity value.",
    ),
    Param(
        "lambdas",
        "str",
        None,
        "Comma-separated λ values to sweep instead of the default grid, e.g. 0.05,0.02,0.01 (used when front is on).",
    ),
    Param(
        "memory_mb",
        "int",
        DEFAULT_MEMORY_MB,
        "Memory for the search's store, in MB (about 32 bytes per test per branch explored). When it is "
        "full the search stops with the best tree so far, not proven optimal, and says so.",
        bounds=(16, None),
    ),
    Param(
        "multiway",
        "bool",
        True,
        "Split a categorical column with 3 or more categories into one branch per category, counted as "
        "ONE split (the paper's multiway splits); its one-vs-rest tests stay available. Categories a "
        "discretizer left out (MID keeps the best tests) become branches of the multiway split only.",
    ),
)


def multiway_groups(features, X: np.ndarray, encoded: np.ndarray | None = None, schema=None):
    """One-hot groups of the categorical columns for multiway splits, completed where tests are missing.

    Parameters
    ----------
    features : sequence
        What each column of ``X`` is (a :class:`Condition` for a test).
    X : array of shape (n, p)
        The 0/1 test matrix.
    encoded : array of shape (n, n_columns), optional
        The encoded training table ``X`` was made from (categorical columns as codes).
    schema : Schema, optional
        Which columns of ``encoded`` are categorical.

    Returns
    -------
    X, features, groups, group_only
        ``X`` and ``features`` with a test appended for every category a discretizer left out of a
        categorical column it kept some tests of (MID keeps the best few); ``groups``: per categorical
        column with at least 3 training categories, its tests in category order; ``group_only``: the
        appended tests, which BRANCHES uses as multiway branches only, so the discretizer's choice of
        binary tests stands.  Without ``encoded``/``schema`` a column is a group only when its tests
        already partition the rows.
    """
    features = list(features or ())
    X = np.asarray(X)
    by_column: dict[int, dict[float, int]] = {}
    for j, f in enumerate(features):
        if isinstance(f, Condition) and f.op == OP_EQ:
            by_column.setdefault(f.column, {})[float(f.value)] = j
    groups, only, added = [], [], []
    for col, tests in by_column.items():
        if encoded is None or schema is None or not schema.columns[col].is_categorical:
            g = list(tests.values())
            if len(g) >= 3 and np.all(X[:, g].sum(axis=1, dtype=np.int64) == 1):
                groups.append(g)
            continue
        if np.isnan(encoded[:, col]).any():
            # gaps: the binary tests place them (either side, or "is missing"); a multiway node could only send
            # them to its fallback branch, which would not be learned
            continue
        codes = np.unique(encoded[:, col])
        if len(codes) < 3:
            continue
        g = []
        for c in codes:
            j = tests.get(float(c))
            if j is None:
                j = X.shape[1] + len(added)
                added.append((encoded[:, col] == c, Condition(col, OP_EQ, float(c))))
                only.append(j)
            g.append(j)
        groups.append(g)
    if added:
        X = np.hstack([X.astype(np.uint8), np.column_stack([a for a, _ in added]).astype(np.uint8)])
        features += [f for _, f in added]
    return X, features, groups, only


def run(
    X,
    y,
    n_classes,
    control,
    *,
    sparsity=0.01,
    max_depth=None,
    front=True,
    lambdas=None,
    memory_mb=DEFAULT_MEMORY_MB,
    multiway=True,
    features=None,
    encoded=None,
    schema=None,
    sample_weight=None,
    costs=None,
):
    """Adapter entry point: ``X`` is the 0/1 test matrix; returns a :class:`solvers.RawFront`
    (``objective="cost"`` with ``sample_weight`` or ``costs``: ``cost / total weight + λ·splits``, exact).

    ``features``, ``encoded`` and ``schema`` (given by the API) let multiway splits find and complete the
    one-hot groups (see :func:`multiway_groups`); when tests were added the front's ``features`` says so.
    """
    if lambdas is not None:
        if not front:
            raise ValueError("lambdas is a sweep for the front; with front off give the one λ as sparsity")
        parse_lambdas(lambdas)  # a bad list fails before any search starts
    groups, only, added = None, None, None
    if multiway:
        X_run, feats, groups, only = multiway_groups(features, X, encoded, schema)
        if only:
            X, added = X_run, feats
    raw = branches_front(
        X,
        y,
        sparsity=sparsity,
        max_depth=max_depth,
        front=front,
        lambdas=lambdas,
        n_classes=n_classes,
        control=control,
        memory_mb=memory_mb,
        groups=groups,
        group_only=only,
        sample_weight=sample_weight,
        costs=costs,
    )
    raw.features = added
    return raw


def progress_words(p: dict, params: dict) -> tuple[str, float | None]:
    """BRANCHES' reports in words: branches searched, or trees of the front found."""
    if "done" in p:
        return f"BRANCHES: {report_count(p, 'done')} trees of the front found", None
    if "branches" in p:
        return f"BRANCHES: searching ({report_count(p, 'branches'):,} branches)", None
    return "BRANCHES: searching", None


SPEC = register(
    SolverSpec(
        name="branches",
        input="binary",
        run=run,
        weighted=True,
        progress_words=progress_words,
        params=PARAMS,
        title="BRANCHES (optimal sparse trees)",
        description="Chaouki, Read & Bifet's dynamic programming with branch-and-bound: the tree maximising "
        "accuracy - λ·splits, proven optimal, for a sweep of λ values; no depth limit needed; "
        "categorical columns split multiway (one branch per category, one split).",
        default_discretizer="mid",
        wants_features=True,
    )
)
