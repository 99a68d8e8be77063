"""The Rashomon set's cloud on the Pareto plot: its trees grouped by where they are drawn.

A set holds up to 100,000 trees, most of them at a few places of the plot (the same complexity and the same
errors), so the cloud draws one faint marker per place whose size grows with the number of trees there (log
scale) rather than one marker per tree.  Each marker stands for the best tree of its place (the first in the set's
order): its hover names that tree, the count and the columns the trees there test; a click opens that tree.
Pure functions: the figure (:class:`treeexplorer.ui.paretofig.ParetoFigure`) turns their rows into data.
"""

from __future__ import annotations

import math
from collections import Counter

from treeexplorer.export import plural
from treeexplorer.rashomon import tree_columns
from treeexplorer.ui.views import X_MEASURES

__all__ = ["cloud_places", "cloud_size", "CLOUD_TIP_SETS"]

CLOUD_TIP_SETS = 3  # column sets named in a place's hover (the most frequent first)


def cloud_size(count: int) -> float:
    """A marker's size (screen pixels) for ``count`` trees at one place: 8 px for one, +7 px per factor of 10."""
    return 8.0 + 7.0 * math.log10(max(int(count), 1))


def _level(v):
    """A place's x: counts as they are, expected tests rounded (float noise would split one place in two)."""
    return round(float(v), 9) if isinstance(v, float) else int(v)


def cloud_places(
    trees, x: str, names: list[str], held_out: bool = False, base_errors: int | None = None, columns=None
) -> list[dict]:
    """The places of the cloud: ``trees`` grouped by complexity ``x`` and training (or held-out) errors.

    Parameters
    ----------
    trees : sequence of FrontTree
        The set's trees drawn, in the set's order (``id`` = rank).
    x : str
        The plot's complexity measure (a key of :data:`treeexplorer.ui.views.X_MEASURES`).
    names : list of str
        The data's column names (a tree's ``column`` indexes them).
    held_out : bool
        Group by held-out errors (the held-out layer); trees without held-out rows are left out.
    base_errors : int, optional
        The selected tree's training errors (the hover says each place's gap to it).
    columns : dict, optional
        ``{tree id: tuple of the columns it tests}`` (:func:`tree_columns`), filled as it is read: a caller
        drawing the same set again passes the same dict.

    Returns
    -------
    list of dict
        One per place, in the order of their best tree: ``x``, ``errors`` (training or held-out), ``accuracy``
        (of the same rows), ``train_errors``, ``count``, ``rank`` (the best tree there), ``splits`` (text: one
        number or a range), ``title`` and ``tip`` (the hover's lines, ``label\\tvalue`` each).
    """
    columns = {} if columns is None else columns

    def cols(t) -> tuple:
        if t.id not in columns:
            columns[t.id] = tuple(tree_columns(t.tree))
        return columns[t.id]

    places: dict = {}
    for t in trees:
        m = t.metrics
        errors = m["test_errors"] if held_out else m["train_errors"]
        if errors is None:
            continue
        key = (_level(m[x]), int(errors))
        places.setdefault(key, []).append(t)
    out = []
    for (level, errors), group in places.items():
        best = group[0]
        m = best.metrics
        splits = sorted({int(t.metrics["splits"]) for t in group})
        sets = Counter(cols(t) for t in group)
        n = len(group)
        title = f"{plural(n, 'tree')} of the Rashomon set" + (" · held-out ✕" if held_out else "")
        lines = [("trees here", f"{n:,}")]
        if x != "splits":
            lines.append((X_MEASURES[x].lower(), f"{level:.3f}" if isinstance(level, float) else str(level)))
        lines.append(("splits", str(splits[0]) if len(splits) == 1 else f"{splits[0]}–{splits[-1]}"))
        if held_out:
            lines += [("held-out errors", str(errors)), ("held-out acc", f"{m['test_accuracy']:.4f}")]
        train = sorted({int(t.metrics["train_errors"]) for t in group})
        gap = "" if base_errors is None or len(train) > 1 else f" ({train[0] - base_errors:+d} vs the selected tree)"
        span = str(train[0]) if len(train) == 1 else f"{train[0]}–{train[-1]}"
        lines += [("train errors", span + gap), ("train acc", f"{m['train_accuracy']:.4f}")]
        lines.append(("best here", f"#{best.id}: " + (", ".join(names[j] for j in cols(best)) or "—")))
        common = [f"{', '.join(names[j] for j in cols) or '—'} ({c})" for cols, c in sets.most_common(CLOUD_TIP_SETS)]
        more = len(sets) - CLOUD_TIP_SETS
        lines.append(("columns tested", "; ".join(common) + (f"; {more} more sets" if more > 0 else "")))
        lines.append(("", f"click: open alternative #{best.id} in the tree view"))
        out.append(
            {
                "x": level,
                "errors": int(errors),
                "accuracy": m["test_accuracy"] if held_out else m["train_accuracy"],
                "train_errors": int(m["train_errors"]),
                "count": n,
                "rank": int(best.id),
                "splits": int(m["splits"]),
                "title": title,
                "tip": "\n".join(f"{k}\t{v}" for k, v in lines),
            }
        )
    return out
