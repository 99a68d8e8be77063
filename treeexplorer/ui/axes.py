"""The Pareto plot's y axis: a frame around the trees worth comparing, and the "errors above the best" view.

With several fronts on one plot, the 0-split tree (the majority class, 0.44 on penguins) stretched the accuracy
axis from 0.45 to 1 while every tree with a split lay within 0.95-1: markers 6 px apart, fronts on top of each
other.  :func:`accuracy_window` frames the accuracies of the trees with at least one split; the trees below the
frame (:func:`clip_below`) are drawn on its bottom edge, as a pin pointing down, with a note.
:func:`errors_above_best` is the other view: each tree's training errors minus the fewest errors any shown tree
of at most its complexity has, so fronts that overlap in accuracy separate (the best is 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

__all__ = ["accuracy_window", "clip_below", "errors_above_best", "EDGE_MARKER"]

# A tree drawn on the bottom edge (its accuracy is below the frame): a pin pointing down (drawn at an angle of
# pi), a shape no run has (treeexplorer.render.layout.RUN_MARKERS).
EDGE_MARKER = "triangle_pin"


def accuracy_window(
    df: pd.DataFrame, extra: Iterable[float] = (), pad: float = 0.08, min_span: float = 0.02
) -> tuple[float, float] | None:
    """``(start, end)`` of an accuracy axis framing the trees with at least one split; ``None``: nothing to frame.

    Parameters
    ----------
    df : DataFrame
        The plot's points (:func:`treeexplorer.ui.views.points_frame`): ``splits``, ``train_accuracy`` and,
        when held-out points are shown, ``test_accuracy`` (NaN without held-out rows).
    extra : iterable of float
        Other accuracies drawn at one split or more (CV means, the exact front).
    pad : float
        Margin on each side, as a fraction of the span.
    min_span : float
        The span never shrinks below this (a single tree still gets an axis a few ticks wide).

    Returns
    -------
    tuple of float or None
        ``None`` when no tree has a split (the 0-split trees are then all there is: the axis is automatic),
        or when the frame would hold every point anyway (nothing lies below it).
    """
    if not len(df):
        return None
    split = df[df.splits >= 1]
    cols = [c for c in ("train_accuracy", "test_accuracy") if c in df]
    values = [float(v) for c in cols for v in split[c].tolist() if v == v and v >= 0]
    values += [float(v) for v in extra if v == v]
    if not values:
        return None
    lo, hi = min(values), max(values)
    span = max(hi - lo, min_span)
    mid = (lo + hi) / 2 if hi - lo < min_span else None
    if mid is not None:
        lo, hi = mid - span / 2, mid + span / 2
    start, end = lo - pad * span, hi + pad * span
    everything = [float(v) for c in cols for v in df[c].tolist() if v == v and v >= 0]
    if min(everything) >= start:
        return None  # every point is inside: the automatic range frames them as well
    return start, end


def clip_below(values: list[float], window: tuple[float, float] | None) -> tuple[list[float], list[bool]]:
    """Accuracies to draw (those below ``window`` on its bottom edge) and which ones were moved."""
    if window is None:
        return list(values), [False] * len(values)
    start, end = window
    edge = start + 0.02 * (end - start)
    moved = [v == v and v < start for v in values]
    return [edge if m else v for v, m in zip(values, moved)], moved


def errors_above_best(df: pd.DataFrame, x: str) -> list[int]:
    """Each tree's training errors minus the fewest errors of any tree *of its kind* in ``df`` with at most its
    ``x``.

    The runs' own staircases of this measure are then comparable on one scale whatever the accuracy: the best
    tree found at each complexity sits at 0, and a tree ``k`` errors worse sits at ``k``.  A tree with a
    multiway split (``df.multiway``: one branch per category, counted as one split) is compared only with
    multiway trees, a binary tree only with binary ones: a 3-way split does what two binary splits do.
    """
    if not len(df):
        return []
    if "multiway" in df.columns and df.multiway.nunique() > 1:
        out = pd.Series(0, index=df.index)
        for _, part in df.groupby("multiway"):
            out[part.index] = errors_above_best(part.drop(columns="multiway"), x)
        return [int(v) for v in out.tolist()]
    order = df.sort_values(x, kind="stable")
    best, out = math.inf, {}
    levels = order[x].tolist()
    errs = order.train_errors.tolist()
    idx = order.index.tolist()
    i = 0
    while i < len(levels):
        j = i
        while j < len(levels) and levels[j] == levels[i]:
            best = min(best, errs[j])
            j += 1
        for k in range(i, j):
            out[idx[k]] = int(errs[k] - best)
        i = j
    return [out[i] for i in df.index]
