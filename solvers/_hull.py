"""Lower convex hull of a front and the α interval of each hull point (one home for DPDT and MurTree).

A front is a set of points ``(cost, errors)`` (integers: splits, or tests in rows).  The tree of point
``i`` minimises ``errors + α · cost`` exactly for the α in its interval; only the vertices of the lower
convex hull have a non-empty interval.  Arithmetic is exact (integers and :class:`fractions.Fraction`).
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["lower_hull", "hull_intervals"]


def lower_hull(costs, errors):
    """Indices of the lower convex hull's vertices, by increasing cost and strictly decreasing errors.

    Among equal points the first is kept; a point on a hull edge (collinear) is not a vertex, nor is a
    point with at least the cost and the errors of another (it never wins for α >= 0).

    Parameters
    ----------
    costs, errors : sequences of int

    Returns
    -------
    list of int
    """
    order = sorted(range(len(costs)), key=lambda i: (costs[i], errors[i], i))
    hull: list[int] = []
    for c in order:
        if hull and errors[c] >= errors[hull[-1]]:
            continue  # at least as costly, no fewer errors: dominated
        # drop the last vertex while it is on or above the segment from the one before it to c
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (errors[b] - errors[a]) * (costs[c] - costs[a]) >= (errors[c] - errors[a]) * (costs[b] - costs[a]):
                hull.pop()
            else:
                break
        hull.append(c)
    return hull


def hull_intervals(costs, errors, scale=1):
    """For every point: whether it is a hull vertex and the α interval where it is optimal.

    Parameters
    ----------
    costs, errors : sequences of int
    scale : int
        The objective is ``errors / scale + α · cost`` (e.g. ``scale`` = number of rows when errors
        are counts and α weighs splits); with ``scale=1`` α is in errors per unit of cost.

    Returns
    -------
    list of (bool, Fraction or None, Fraction or None)
        ``(on_hull, alpha_lo, alpha_hi)`` per point, in input order: the point's tree minimises the
        objective exactly for ``alpha_lo <= alpha <= alpha_hi`` (``alpha_hi`` None: unbounded; both
        None off the hull).
    """
    out: list[tuple[bool, Fraction | None, Fraction | None]] = [(False, None, None)] * len(costs)
    verts = lower_hull(costs, errors)
    for q, v in enumerate(verts):
        lo, hi = Fraction(0), None
        if q > 0:  # the edge to the cheaper neighbour: above its slope this vertex loses to it
            u = verts[q - 1]
            hi = Fraction(errors[u] - errors[v], scale * (costs[v] - costs[u]))
        if q + 1 < len(verts):
            w = verts[q + 1]
            lo = Fraction(errors[v] - errors[w], scale * (costs[w] - costs[v]))
        out[v] = (True, lo, hi)
    return out
