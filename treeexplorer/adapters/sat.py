"""Registers the SAT solver (Avellaneda's minimum-depth / minimum-size perfect trees) with the registry."""

from __future__ import annotations

from treeexplorer.registry import Param, SolverSpec, register
from treeexplorer.solvers.sat import DEFAULT_MEMORY_MB, DEFAULT_SAT_SOLVER, SAT_SOLVERS, sat_tree

__all__ = ["run"]


def run(
    X,
    y,
    n_classes,
    control,
    *,
    max_depth=None,
    sat_solver=DEFAULT_SAT_SOLVER,
    minimize_size=True,
    conflicts="error",
    front=True,
    memory_mb=DEFAULT_MEMORY_MB,
):
    """Adapter entry point: ``X`` is the 0/1 test matrix, returns a :class:`solvers.RawFront`."""
    return sat_tree(
        X,
        y,
        n_classes,
        max_depth=max_depth,
        minimize_size=minimize_size,
        front=front,
        sat_solver=sat_solver,
        conflicts=conflicts,
        control=control,
        memory_mb=memory_mb,
    )


SPEC = register(
    SolverSpec(
        name="sat",
        input="binary",
        run=run,
        params=(
            Param(
                "max_depth",
                "int",
                None,
                "Deepest tree of the front (default: the minimum depth + 2). It is an error if no tree this "
                "shallow classifies every training row correctly.",
                bounds=(0, 30),
            ),
            Param(
                "sat_solver",
                "str",
                DEFAULT_SAT_SOLVER,
                "SAT solver used by python-sat. glucose4 was the fastest on the InferDT benchmarks here; "
                "CaDiCaL cannot be interrupted inside a call, so a time limit reacts more slowly with it.",
                choices=SAT_SOLVERS,
            ),
            Param(
                "minimize_size",
                "bool",
                True,
                "After finding the minimum depth, also minimise the number of nodes (DT_size). Off: return "
                "only the first tree of minimum depth found (DT_depth, faster; no front).",
            ),
            Param(
                "conflicts",
                "str",
                "error",
                "Rows with the same test values but different labels make a perfect tree impossible. "
                "'error' stops and lists them; 'majority' relabels each such group with its majority label.",
                choices=("error", "majority"),
            ),
            Param(
                "front",
                "bool",
                True,
                "Also return the smallest tree of each depth above the minimum (up to max_depth) when it is "
                "smaller; off: only the minimum-depth tree.",
            ),
            Param(
                "memory_mb",
                "int",
                DEFAULT_MEMORY_MB,
                "Memory for the SAT solver's clauses, in MB (about 100 bytes a clause; each example adds "
                "(2^depth - 1) x tests of them). When it is full the search stops with the best tree so far, "
                "not proven minimal, and says so.",
                bounds=(16, None),
            ),
        ),
        title="SAT (minimum depth, then size)",
        description="Avellaneda's SAT inference: the shallowest trees that classify every training row "
        "correctly, then the fewest nodes at each depth; no training error by construction, so "
        "best on small, clean data.",
        default_discretizer="exact",
    )
)
