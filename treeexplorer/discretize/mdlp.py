"""MDLP discretization (Fayyad & Irani, 1993), per numeric column.

Each column is split recursively at the boundary point of least class entropy while the information gain
passes the Minimum Description Length test; see :func:`treeexplorer.discretize._kernels.mdlp_cuts`.
"""

from __future__ import annotations

from treeexplorer.discretize._common import ColumnSummary, boundary_mask, midpoints
from treeexplorer.discretize._kernels import mdlp_cuts, weighted_impurity
from treeexplorer.schema import OP_LE, Condition

__all__ = ["mdlp_column", "split_gain"]


def mdlp_column(s: ColumnSummary) -> tuple[list[Condition], list[float]]:
    """Accepted MDLP cuts of one numeric column (ascending) and their gains (fraction of all rows, bits)."""
    cuts, gains = mdlp_cuts(s.counts, boundary_mask(s.counts))
    t = midpoints(s.values)[cuts]
    return [Condition(s.index, OP_LE, float(v)) for v in t], [float(g) for g in gains]


def split_gain(s: ColumnSummary, op: int, value: float) -> float:
    """Entropy reduction (bits, fraction of all rows) of one fixed test on a binary or categorical column."""
    counts = s.counts
    inside = counts[s.values == value].sum(axis=0)
    tot = counts.sum(axis=0)
    g = (
        weighted_impurity(tot, False) - weighted_impurity(inside, False) - weighted_impurity(tot - inside, False)
    ) / tot.sum()
    return float(max(g, 0.0))
