"""Registers MurTree (``solvers.murtree``: exact optimal trees on binary tests, every node budget) as ``murtree``."""

from __future__ import annotations

from treeexplorer.registry import (
    EXACT_SPARSITY,
    FRONT_MAX_NODES,
    Param,
    SolverSpec,
    register,
    report_count,
    whole_front,
)
from treeexplorer.solvers.murtree import murtree
from treeexplorer.tree import max_splits

__all__ = ["run", "SPEC"]


def run(
    X,
    y,
    n_classes,
    control,
    *,
    max_depth=3,
    max_nodes=None,
    sparsity=None,
    front=True,
    min_leaf_support=1,
    fewest_splits=True,
    sample_weight=None,
    costs=None,
):
    """Adapter entry point: ``X`` is the 0/1 test matrix, returns a :class:`solvers.RawFront` (``sample_weight``
    and ``costs``: the weighted objective, None when plain)."""
    return murtree(
        X,
        y,
        n_classes,
        max_depth=max_depth,
        max_nodes=max_nodes,
        sparsity=sparsity,
        front=front,
        min_leaf_support=min_leaf_support,
        fewest_splits=fewest_splits,
        control=control,
        sample_weight=sample_weight,
        costs=costs,
    )


def split_budgets(params: dict) -> int | None:
    """How many split budgets (0..K) a MurTree front covers: K = :func:`~treeexplorer.tree.max_splits` of its
    depth, capped by ``max_nodes`` (None when the depth is unknown)."""
    depth = params.get("max_depth")
    if not isinstance(depth, int) or depth < 0:
        return None
    nodes = params.get("max_nodes")
    return max_splits(depth, nodes if isinstance(nodes, int) and nodes >= 0 else None) + 1


def progress_words(p: dict, params: dict) -> tuple[str, float | None]:
    """MurTree's reports in words: the split budgets solved so far, of :func:`split_budgets`."""
    done, total = report_count(p, "budgets_done"), split_budgets(params)
    if total:
        return f"MurTree: optimal trees for {done} of {total} split budgets", min(1.0, done / total)
    return f"MurTree: optimal trees for {done} split budgets", None


SPEC = register(
    SolverSpec(
        name="murtree",
        input="binary",
        run=run,
        progress_words=progress_words,
        params=(
            Param(
                "max_depth",
                "int",
                3,
                "Deepest tree searched. Depth 4 takes seconds on a thousand rows and a hundred tests; each "
                "extra level multiplies the work by about the number of tests.",
                bounds=(0, 10),
            ),
            FRONT_MAX_NODES,
            EXACT_SPARSITY,
            whole_front("only the most accurate tree, with the fewest splits among equally accurate ones"),
            Param("min_leaf_support", "int", 1, "Minimum number of training rows in every leaf.", bounds=(1, None)),
            Param(
                "fewest_splits",
                "bool",
                True,
                "Single tree: among the most accurate trees prove the one with the fewest splits. Off: "
                "stop at the first most accurate tree (faster when many trees tie, e.g. perfect trees).",
            ),
        ),
        title="MurTree (optimal, every size)",
        description="Exact dynamic programming and search over trees on binary tests (Demirović et al., 2022): "
        "the fewest training errors for every number of splits up to max_nodes, at depth max_depth.",
        default_discretizer="mid",
        weighted=True,
    )
)
