"""Registers ConTree (``solvers.contree``: proven optimal trees on raw numeric features) as ``contree``."""

from __future__ import annotations

from treeexplorer.limits import MemoryLimitError
from treeexplorer.registry import (
    EXACT_SPARSITY,
    FRONT_MAX_NODES,
    Param,
    SolverSpec,
    register,
    report_count,
    whole_front,
)
from treeexplorer.solvers.contree import contree

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
    max_memory_mb=2048,
    sample_weight=None,
    costs=None,
):
    """Adapter entry point: ``X`` holds the raw numeric columns, returns a :class:`solvers.RawFront`
    (``objective="cost"`` when ``sample_weight`` or ``costs`` is given: the weighted cost, exact)."""
    try:
        return contree(
            X,
            y,
            n_classes,
            max_depth=max_depth,
            max_nodes=max_nodes,
            sparsity=sparsity,
            front=front,
            max_memory_mb=max_memory_mb,
            control=control,
            sample_weight=sample_weight,
            costs=costs,
        )
    except MemoryError as exc:
        if not str(exc):  # the allocator's own: not the refusal below
            raise
        # ConTree refuses before allocating when its cache would pass max_memory_mb: a one-line refusal naming
        # the settings, like every other memory guard (a bare MemoryError reached the CLI as a traceback)
        raise MemoryLimitError(str(exc)) from None


def progress_words(p: dict, params: dict) -> tuple[str, float | None]:
    """ConTree's reports in words: root splits searched, and the best tree so far."""
    text = f"ConTree: {report_count(p, 'root_splits'):,} root splits searched"
    if "best_errors" in p and report_count(p, "root_splits"):
        text += f", best tree so far {report_count(p, 'best_errors'):,} errors"
    return text, None


SPEC = register(
    SolverSpec(
        name="contree",
        input="numeric",
        run=run,
        weighted=True,
        missing=True,
        progress_words=progress_words,
        params=(
            Param(
                "max_depth",
                "int",
                3,
                "Deepest tree searched. Depth 2 takes milliseconds, depth 3 seconds on ten thousand rows; "
                "depth 4 can take hours: set a time limit, the run then reports its gap to the optimum.",
                bounds=(0, 8),
            ),
            FRONT_MAX_NODES,
            EXACT_SPARSITY,
            whole_front("only the most accurate tree (faster)"),
            Param(
                "max_memory_mb",
                "int",
                2048,
                "Memory guard: the sorted row buffers must fit, and the cache of solved subproblems stops "
                "growing at this size.",
                bounds=(16, None),
            ),
        ),
        title="ConTree (optimal, raw numeric)",
        description="Exact dynamic programming with branch-and-bound over every threshold of the raw numeric "
        "columns (Briţa et al., 2025): the fewest training errors for every number of splits at depth "
        "max_depth, no discretizer; a stopped run reports its proven lower bound.",
    )
)
