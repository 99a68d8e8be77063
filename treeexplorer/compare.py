"""Cross-run checks of optimality claims: is a "proven optimal" tree beaten by another run on the same data?

A proof holds only over the run's search space (its discretizer's tests, its depth limit, its objective), so
another run that searched elsewhere may find a tree with no more splits and fewer training errors.  The
explorer says so next to the claim (:func:`dominated_by`) and offers a re-run with more tests
(:func:`more_tests_rerun`, the rule in :mod:`treeexplorer.choices`).  Nothing here needs the data: only the fronts.
"""

from __future__ import annotations

from collections.abc import Mapping

from treeexplorer.choices import more_tests_label, more_tests_rerun
from treeexplorer.claims import optimality_text
from treeexplorer.front import COMPLEXITY_MEASURES, Front, FrontTree

__all__ = ["same_data", "dominated_by", "more_tests_label", "more_tests_rerun"]


def same_data(a: Front, b: Front) -> bool:
    """Whether two fronts were computed on the same training and test rows, so their metrics compare.

    Uses :attr:`Front.data_key` (a digest of the rows) when both fronts have one; otherwise (fronts read
    from an older JSON) the dataset name, target, classes, feature names and row counts must all agree.
    """
    if a.data_key and b.data_key:
        return a.data_key == b.data_key
    sa, sb = a.schema, b.schema
    return (
        a.dataset == b.dataset
        and sa.target == sb.target
        and tuple(sa.classes) == tuple(sb.classes)
        and sa.feature_names == sb.feature_names
        and (a.n_train, a.n_test) == (b.n_train, b.n_test)
    )


def _labelled(others) -> list[tuple[object, Front]]:
    if isinstance(others, Front):
        return [(0, others)]
    if isinstance(others, Mapping):
        return list(others.items())
    out = []
    for i, item in enumerate(others):
        out.append(item if isinstance(item, tuple) else (i, item))
    return out


def _beats(u: FrontTree, t: FrontTree, x: str) -> bool:
    """``u`` is no more complex along ``x`` and has fewer training errors, or as many and is simpler."""
    ux, tx = u.metrics[x], t.metrics[x]
    ue, te = u.metrics["train_errors"], t.metrics["train_errors"]
    if x == "avg_tests":  # a mean over rows: equal up to rounding
        ux, tx = round(ux, 9), round(tx, 9)
    return ux <= tx and (ue < te or (ue == te and ux < tx))


def _reasons(front: Front, other: Front, u: FrontTree) -> list[str]:
    """Why ``u`` lies outside ``front``'s search space, as far as the fronts tell."""
    reasons = []
    max_depth = front.params.get("max_depth")
    if max_depth is not None and u.metrics["depth"] > max_depth:
        reasons.append(f"its depth {u.metrics['depth']} exceeds this run's max_depth {max_depth}")
    support = front.params.get("min_leaf_support") or 1
    if support > 1:
        smallest = min(int(u.tree.counts[k].sum()) for k in u.tree.leaves)
        if smallest < support:
            reasons.append(f"it has a leaf of {smallest} rows (min_leaf_support {support})")
    ss, other_ss = front.search_space or {}, other.search_space or {}
    if ss.get("kind") == "tests" and other_ss != ss:
        n = ss.get("n_tests")
        tests = optimality_text(ss, short=True).removeprefix("over ")  # "16 MID tests"
        reasons.append(f"the {tests} exclude better thresholds" if n is not None else f"{tests} exclude better ones")
    if not reasons:
        reasons.append(f"this run's proof is for its own objective ({front.objective or 'see its solver'})")
    return reasons


_SIZE = {
    "splits": lambda v: f"{v} splits",
    "leaves": lambda v: f"{v} leaves",
    "depth": lambda v: f"depth {v}",
    "avg_tests": lambda v: f"{v:.3g} tests per row",
}


def _run_name(label) -> str:
    return f"run #{label}" if isinstance(label, int) else f"run {label}"


def dominated_by(
    front: Front, others, *, x: str = "splits", only_optimal: bool = True
) -> dict[int, tuple[object, int, str]]:
    """For each proven-optimal tree of ``front``, a tree of another run on the same data that beats it.

    Parameters
    ----------
    front : Front
        The run whose optimality claims are checked.
    others : Front, sequence or mapping
        The other runs: a mapping ``{label: Front}``, a sequence of fronts (labelled by position) or of
        ``(label, Front)`` pairs.  ``front`` itself and runs on other data (see :func:`same_data`) are
        skipped.
    x : {"splits", "leaves", "depth", "avg_tests"}
        The complexity measure (the front plot's axis).
    only_optimal : bool
        Check only the trees proven optimal (the claims that can mislead); ``False`` checks every tree.

    Returns
    -------
    dict
        ``{tree_id: (label, other_tree_id, text)}`` for the dominated trees only.  "Beats" means no more
        complex along ``x`` and fewer training errors, or as many errors and simpler; among several such
        trees the most accurate one (then the simplest, then the first run's) is named.  ``text``
        reads e.g. "dominated by run #3 (tree 4: 5 splits, train accuracy 0.9911): the 16 MID tests
        exclude better thresholds"; a label that is not an int is shown as given ("run cart-2").
    """
    if x not in COMPLEXITY_MEASURES:
        raise ValueError(f"x must be one of {COMPLEXITY_MEASURES}, got {x!r}")
    runs = [(label, other) for label, other in _labelled(others) if other is not front and same_data(front, other)]
    out = {}
    for t in front.trees:
        if only_optimal and not t.optimal:
            continue
        best = None
        for label, other in runs:
            for u in other.trees:
                if not _beats(u, t, x):
                    continue
                key = (u.metrics["train_errors"], u.metrics[x])
                if best is None or key < best[0]:
                    best = (key, label, other, u)
        if best is None:
            continue
        _, label, other, u = best
        acc = u.metrics["train_accuracy"]
        size = _SIZE[x](u.metrics[x])
        what = f"tree {u.id}: {size}, train accuracy {acc:.4f}"
        text = f"dominated by {_run_name(label)} ({what}): " + "; ".join(_reasons(front, other, u))
        out[t.id] = (label, u.id, text)
    return out
