"""The last stage of a run: the solver's raw solutions turned into a :class:`~treeexplorer.front.Front`.

Each solution becomes a :class:`~treeexplorer.tree.Tree` over the user's columns, duplicates merge, every tree is
counted on the train and test rows (one pass each for all trees) and the front is sorted by size.  A cancel or
the time limit while assembling keeps a sample spread over the front (a ranked set: a prefix of its order), marked
not proven.
"""

from __future__ import annotations

import numpy as np

from treeexplorer.claims import make_search_space
from treeexplorer.evaluate import (
    count_forest_stoppable,
    forest_metrics,
    forest_scores,
    forest_shape,
    pack_forest,
    spread,
)
from treeexplorer.front import Front, FrontTree
from treeexplorer.prepared import Prepared, prepared_data_key
from treeexplorer.schema import Condition
from treeexplorer.solvers import Control
from treeexplorer.tree import Tree, settle_missing, shorten_thresholds

__all__ = ["assemble", "fill_metrics"]

_ASSEMBLY_POLL = 16  # solutions turned into trees between two looks at the control
# trees of a ranked set counted to the end after a stop: its best ones, at ~1/400 of the rest of a 100,000-tree pass
_RANKED_KEEP = 256
_ENGINE_SAMPLE = 64  # trees of a big ranked set counted to check the engine's own counts (the rest are not)


def assemble(prep, spec, resolved, parts, disc_name, notices, runtime, status, control=None) -> Front:
    """The front of ``parts``, a list of ``(features, raw, info)``: a solver's :class:`RawFront` over the matrix
    whose columns are ``features`` and what to add to each of its trees' ``info`` (e.g. the MID round)."""
    schema = prep.schema
    seen: dict = {}
    stats: dict = {}
    objective = ""
    stop = _assembly_stop(control)
    n_raw = sum(len(raw.solutions) for _, raw, _ in parts)
    cut = False
    for features, raw, extra in parts:
        objective = raw.objective
        stats.update(raw.stats)
        notices += [n for n in raw.stats.get("notices", []) if n not in notices]
        features = raw.features if raw.features is not None else features
        sols = raw.solutions
        # a long list (a CART path of hundreds of trees) is visited spread out, so that a stop keeps a sample
        # (a ranked set in its order, so that a stop keeps its best trees)
        spread = stop is not None and n_raw > _ASSEMBLY_POLL and not spec.ranked
        order = _spread_order(len(sols)) if spread else range(len(sols))
        for j, i in enumerate(order):
            if j >= 2 and j % _ASSEMBLY_POLL == 0 and stop is not None and stop():
                cut = True
                break
            sol = sols[i]
            tree = Tree.from_raw(sol.tree, features, schema)
            key = tree.structure_key()
            optimal = bool(sol.optimal) and status == "done"
            if key in seen:
                seen[key].optimal = seen[key].optimal or optimal
                continue
            seen[key] = FrontTree(0, tree, optimal, {}, {**sol.info, **extra})
    n_found = len(seen)
    entries = fill_metrics(list(seen.values()), prep, control, ranked=spec.ranked)
    if cut or len(entries) < n_found:
        why = "cancelled" if control.cancelled else "the time limit came"
        which = "the first of the order" if spec.ranked else "spread over the front"
        notices.append(
            f"{why} while assembling the front: {len(entries)} of the {n_raw} trees the solver found are shown "
            f"({which}); run again without the cancel, or with a longer time limit, for all"
        )
        status = "cancelled" if control.cancelled else "time_limit"
        for e in entries:  # as for any stopped run: nothing is called proven
            e.optimal = False
    if stop is None or not stop():  # the text's thresholds (cosmetic, a sort of every used column): not past a stop
        shorten_thresholds([e.tree for e in entries], prep.X_train, prep.X_test)
    trees = sorted(entries, key=lambda t: (t.metrics["splits"], -t.metrics["train_accuracy"], t.metrics["avg_tests"]))
    for i, t in enumerate(trees):
        t.id = i
    stats.pop("notices", None)
    n_tests = max((len(raw.features if raw.features is not None else feats) for feats, raw, _ in parts), default=0)
    feats = parts[-1][1].features if parts and parts[-1][1].features is not None else (parts[-1][0] if parts else [])
    if spec.input == "numeric" and disc_name == "raw":
        gap_tests = int(np.isnan(prep.X_train).any())  # the raw solver placed every gap it met
    else:
        gap_tests = sum(isinstance(f, Condition) and f.shows_missing for f in feats or ())
    search_space = make_search_space(spec.input, disc_name, n_tests, resolved.get("generator"), gap_tests)
    n_test = 0 if prep.y_test is None else len(prep.y_test)
    return Front(
        trees,
        spec.name,
        disc_name,
        objective,
        status,
        runtime,
        len(prep.y_train),
        n_test,
        prep.dataset.name,
        schema,
        dict(resolved),
        notices,
        stats,
        search_space,
        prepared_data_key(prep),
        [],
        {} if prep.weights is None or prep.weights.plain else prep.weights.to_dict(schema, len(prep.y_train), n_test),
    )


def fill_metrics(entries: list, prep: Prepared, control: Control | None, ranked: bool = False) -> list:
    """Counts and metrics of every tree, all trees in one pass over the train rows and one over the test rows.

    Whole arrays at a time (:func:`~treeexplorer.evaluate.forest_metrics`): a set of 100,000 trees costs the
    passes, not a Python loop of numpy calls per tree.  Stopped by a cancel or the time limit meanwhile, only a
    few trees spread over the front (``ranked``: the first :data:`_RANKED_KEEP` of the order) are counted on
    every row (:func:`~treeexplorer.evaluate.count_forest_stoppable`); returns the entries kept."""
    if not entries:  # a run stopped before its first tree (a Rashomon set at its time limit)
        return []
    n_classes = prep.schema.n_classes
    trees = [e.tree for e in entries]

    def progress(what):
        if control is None or control.progress is None:
            return None
        return lambda done, total: control.report("assembling", data=what, rows=done, of=total, trees=len(trees))

    stop = _assembly_stop(control)
    keep = {"keep": _RANKED_KEEP, "prefix": True} if ranked else {}
    packed = pack_forest(trees)  # once for every pass and the shapes
    shape = forest_shape(trees, packed)
    if ranked and len(trees) > _ENGINE_SAMPLE and _engine_counts_hold(trees, shape, prep, n_classes):
        # the Rashomon engine counted every node of its trees on the training rows (its order is by those
        # errors); checked on a sample, its counts save the pass over the training rows
        tr_counts, tr_bases, kept = np.concatenate([t.counts for t in trees]), shape["bases"], list(range(len(trees)))
        tr_tests = _tests_from_counts(tr_counts, shape, len(trees))
    else:
        tr_counts, tr_bases, tr_tests, kept = count_forest_stoppable(
            trees, prep.X_train, prep.y_train, n_classes, progress("train"), stop=stop, packed=packed, **keep
        )
    if len(kept) < len(entries):
        entries = [entries[i] for i in kept]
        trees = [e.tree for e in entries]
        packed = pack_forest(trees)
        shape = forest_shape(trees, packed)
    settle_missing(trees, prep.X_train, tr_counts, packed[0])  # before any pass that a gap's side changes
    has_test = prep.y_test is not None and len(prep.y_test) > 0
    if has_test:
        te_counts, _, te_tests, kept = count_forest_stoppable(
            trees, prep.X_test, prep.y_test, n_classes, progress("test"), stop=stop, packed=packed, **keep
        )
        if len(kept) < len(entries):  # stopped on the test rows: the kept trees' train counts picked out
            nodes = np.concatenate([np.arange(tr_bases[i], tr_bases[i + 1]) for i in kept])
            tr_counts, tr_tests = tr_counts[nodes], tr_tests[kept]
            entries = [entries[i] for i in kept]
            trees = [e.tree for e in entries]
            packed = pack_forest(trees)
            shape = forest_shape(trees, packed)
    bases = shape["bases"]
    tr = forest_metrics(trees, tr_counts, tr_tests, len(prep.y_train), shape)
    te = forest_metrics(trees, te_counts, te_tests, len(prep.y_test), shape) if has_test else None
    splits, leaves, depth = (shape[k].tolist() for k in ("splits", "leaves", "depth"))
    tr_err = tr["errors"].tolist()
    te_err = te["errors"].tolist() if has_test else None
    tr_s = _scores(trees, tr_counts, shape, prep, held_out=False)
    te_s = _scores(trees, te_counts, shape, prep, held_out=True) if has_test else None
    for i, e in enumerate(entries):
        e.tree = e.tree.with_counts(counts=tr_counts[bases[i] : bases[i + 1]])
        e.metrics = {  # metrics_dict's keys and values, from the arrays
            "splits": splits[i],
            "leaves": leaves[i],
            "depth": depth[i],
            "avg_tests": tr["avg_tests"][i],
            "train_accuracy": tr["accuracy"][i],
            "train_errors": tr_err[i],
            "test_accuracy": te["accuracy"][i] if has_test else None,
            "test_errors": te_err[i] if has_test else None,
            "test_avg_tests": te["avg_tests"][i] if has_test else None,
            "train_cost": tr_s["cost"][i],
            "train_balanced_accuracy": tr_s["balanced_accuracy"][i],
            "test_cost": te_s["cost"][i] if has_test else None,
            "test_balanced_accuracy": te_s["balanced_accuracy"][i] if has_test else None,
            "train_recall": tr_s["recall"][i],
            "train_precision": tr_s["precision"][i],
            "test_recall": te_s["recall"][i] if has_test else None,
            "test_precision": te_s["precision"][i] if has_test else None,
        }
    return entries


def _scores(trees, counts, shape, prep: Prepared, held_out: bool) -> dict:
    """:func:`~treeexplorer.evaluate.forest_scores` of the run's objective (``prep.weights``) on its training
    (or held-out) rows: from the counts, unless the rows carry weights of their own."""
    k = prep.schema.n_classes
    w = prep.weights
    plain = 1.0 - np.eye(k)
    if w is None or w.plain:
        return forest_scores(trees, counts, shape, plain)
    costs = w.costs if w.costs is not None else plain
    if w.source is None:  # class weights alone: a row's weight is its class's
        cw = w.class_weight if w.class_weight is not None else np.ones(k)
        return forest_scores(trees, counts, shape, cw[:, None] * costs)
    X, y = (prep.X_test, prep.y_test) if held_out else (prep.X_train, prep.y_train)
    rw = w.row_weights(y, held_out)
    rw = np.ones(len(y)) if rw is None else rw
    return forest_scores(trees, counts, shape, costs, row_weight=rw, X=X, y=y)


def _engine_counts_hold(trees, shape, prep: Prepared, n_classes: int) -> bool:
    """Whether the trees' own node counts (the solver's) are their counts on the training rows: every root holds
    the training rows' classes, and :data:`_ENGINE_SAMPLE` trees spread over the list, counted, agree at every
    node."""
    if any(t.counts.shape != (t.n_nodes, n_classes) for t in trees):
        return False
    roots = np.stack([t.counts[0] for t in trees])
    if not (roots == np.bincount(prep.y_train, minlength=n_classes)).all():
        return False
    sample = spread(len(trees), _ENGINE_SAMPLE)
    counts, bases, _, _ = count_forest_stoppable([trees[i] for i in sample], prep.X_train, prep.y_train, n_classes)
    return all(np.array_equal(counts[bases[j] : bases[j + 1]], trees[i].counts) for j, i in enumerate(sample))


def _tests_from_counts(counts: np.ndarray, shape: dict, n_trees: int) -> np.ndarray:
    """Each tree's tests over the rows its counts are of: the rows of each leaf times the leaf's depth."""
    depth = shape["node_depth"]
    leaves = np.flatnonzero((depth >= 0) & (shape["column"] < 0))
    tree_of = np.repeat(np.arange(n_trees), np.diff(shape["bases"]))[leaves]
    tests = np.zeros(n_trees, dtype=np.int64)
    np.add.at(tests, tree_of, counts[leaves].sum(axis=1) * depth[leaves])
    return tests


def _assembly_stop(control: Control | None):
    """What assembling polls: a cancel, or the run's whole time limit passed (the solver itself stops earlier,
    keeping a reserve for assembling, see :func:`treeexplorer.limits.assembly_reserve`)."""
    if control is None:
        return None
    limit = control.time_limit
    return lambda: control.cancelled or (limit is not None and control.elapsed >= limit)


def _spread_order(n: int) -> list[int]:
    """``0..n-1`` in an order whose every prefix is spread over the range: first, last, middle, quarters..."""
    if n <= 2:
        return list(range(n))
    order, seen = [0, n - 1], {0, n - 1}
    step = n - 1
    while len(order) < n:
        step = max(1, step // 2)
        for i in range(step, n, step):
            if i not in seen:
                seen.add(i)
                order.append(i)
    return order
