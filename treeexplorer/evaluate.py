"""Counts and metrics of many trees in one pass over the data (front assembly at scale).

Assembling a front used to walk the rows three times per tree (counts, predictions, tests); on a million
rows and 60 trees that was most of a run.  Here every tree is evaluated in one pass: the rows are read
once, in chunks spread over threads (the kernel releases the GIL), and a progress callback hears after
each chunk.  Train metrics come from the training counts (errors = rows not of the leaf's class), held-out
metrics from a second pass over the test rows.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from treeexplorer.schema import OP_MULTI
from treeexplorer.solvers._kernels.predict import count_forest

__all__ = [
    "count_trees",
    "count_trees_stoppable",
    "count_forest_stoppable",
    "pack_forest",
    "forest_metrics",
    "spread",
    "metrics_from_counts",
    "forest_scores",
    "node_masses",
]

_CHUNK_ROWS = 1 << 16
_CHUNK_WORK = 1 << 19  # rows x trees of one chunk when the count is stoppable (~0.05 s on a free core)
_GROUP_NODES = 1 << 14  # nodes of the trees counted together over a chunk of rows (their arrays fit in cache)


def pack_forest(trees) -> tuple:
    """Concatenate the trees' node arrays (global child indices) for :func:`count_forest`.

    Whole arrays at a time: a set of 100,000 trees is packed in a few concatenations, not a loop per tree.
    """
    sizes = np.fromiter((t.n_nodes for t in trees), dtype=np.int64, count=len(trees))
    n_kids = np.fromiter((len(t.children) for t in trees), dtype=np.int64, count=len(trees))
    bases = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cbases = np.concatenate([[0], np.cumsum(n_kids)]).astype(np.int64)
    node_base = np.repeat(bases[:-1], sizes)

    def cat(name):
        return np.concatenate([getattr(t, name) for t in trees])

    def shifted(name):  # child indices made global; -1 (no child) stays -1
        a = cat(name)
        return np.where(a >= 0, a + node_base, -1)

    offsets = np.concatenate([np.concatenate([t.child_offsets[:-1] for t in trees]) + np.repeat(cbases[:-1], sizes)])
    offsets = np.concatenate([offsets, cbases[-1:]])
    children = cat("children") + np.repeat(bases[:-1], n_kids)
    return (
        bases[:-1].astype(np.int64),
        cat("column"),
        cat("op"),
        cat("value"),
        shifted("true_child"),
        shifted("false_child"),
        offsets.astype(np.int64),
        children.astype(np.int64),
        cat("child_values"),
    ), bases


def _slice(packed: tuple, bases: np.ndarray, a: int, b: int) -> tuple:
    """The packed arrays of trees ``a..b-1`` alone (child indices from 0), cut out of all the trees' pack."""
    roots, column, op, value, tc, fc, offsets, children, child_values = packed
    n0, n1 = int(bases[a]), int(bases[b])
    c0, c1 = int(offsets[n0]), int(offsets[n1])
    tc, fc = tc[n0:n1], fc[n0:n1]
    return (
        roots[a:b] - n0,
        column[n0:n1],
        op[n0:n1],
        value[n0:n1],
        np.where(tc >= 0, tc - n0, -1),
        np.where(fc >= 0, fc - n0, -1),
        offsets[n0 : n1 + 1] - c0,
        children[c0:c1] - n0,
        child_values[c0:c1],
    )


def _groups(trees, bases) -> list[tuple[int, int]]:
    """Consecutive runs of trees of about :data:`_GROUP_NODES` nodes: each is counted over the rows on its own,
    so that its nodes stay in the processor's cache while the rows stream past (a set of 100,000 trees in one
    pass read every tree's nodes from memory for every row)."""
    cuts = [0]
    while cuts[-1] < len(trees):
        a = cuts[-1]
        b = int(np.searchsorted(bases, bases[a] + _GROUP_NODES, side="right")) - 1
        cuts.append(min(len(trees), max(b, a + 1)))
    return list(zip(cuts[:-1], cuts[1:]))


def count_trees(trees, X, y, n_classes: int, progress=None, n_jobs: int = 2) -> tuple[list, np.ndarray]:
    """Class counts at every node of every tree on ``(X, y)``, and each tree's total number of tests.

    Parameters
    ----------
    trees : sequence of Tree
    X : ndarray of shape (n, p)
        Encoded matrix.
    y : ndarray of shape (n,)
        Class codes.
    n_classes : int
    progress : callable, optional
        ``progress(rows_done, rows_total)`` after each chunk of rows.
    n_jobs : int
        Threads sharing the chunks.

    Returns
    -------
    counts : list of ndarray
        ``counts[t]`` has shape ``(trees[t].n_nodes, n_classes)``.
    tests : ndarray of shape (len(trees),)
        Sum over the rows of the number of tests each row passes in each tree.
    """
    counts, tests, _ = count_trees_stoppable(trees, X, y, n_classes, progress, n_jobs)
    return counts, tests


def spread(n: int, k: int) -> list[int]:
    """``min(n, k)`` indices spread evenly over ``0..n-1``, the first and the last included."""
    if n <= k:
        return list(range(n))
    return sorted({int(round(i * (n - 1) / (k - 1))) for i in range(k)}) if k > 1 else [0]


def count_trees_stoppable(
    trees, X, y, n_classes: int, progress=None, n_jobs: int = 2, stop=None, keep: int = 8, prefix: bool = False
) -> tuple[list, np.ndarray, list[int]]:
    """:func:`count_trees` polling ``stop()`` between chunks of rows.

    Once ``stop()`` answers True, only ``keep`` trees spread over the list (:func:`spread`; ``prefix``: the
    first ``keep``) are counted on the rows left, which costs about ``keep / len(trees)`` of the rest of the
    pass.  Returns the counts and tests of the trees counted on every row and their indices in ``trees``.
    """
    total, bases, tests, kept = count_forest_stoppable(trees, X, y, n_classes, progress, n_jobs, stop, keep, prefix)
    counts = [total[int(b) : int(e)] for b, e in zip(bases[:-1], bases[1:])]
    return counts, tests, kept


def count_forest_stoppable(
    trees,
    X,
    y,
    n_classes: int,
    progress=None,
    n_jobs: int = 2,
    stop=None,
    keep: int = 8,
    prefix: bool = False,
    packed: tuple | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """:func:`count_trees_stoppable` with the counts of all the trees in one array (``packed``: the trees'
    :func:`pack_forest`, when the caller has it).

    Returns ``(counts, bases, tests, kept)``: the class counts of every node of the kept trees, tree after tree
    (tree ``t``'s nodes are ``counts[bases[t]:bases[t + 1]]``), their tests and their indices in ``trees``.
    """
    trees = list(trees)
    if not trees:
        return np.zeros((0, n_classes), dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), []
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    n = X.shape[0]
    packed, bases = pack_forest(trees) if packed is None else packed
    groups = _groups(trees, bases)
    packs = [_slice(packed, bases, a, b) for a, b in groups] if len(groups) > 1 else [packed]
    biggest = max(b - a for a, b in groups)
    # chunks of about the same work whatever the number of trees, so that ``stop`` is heard within ~0.1 s
    step = int(min(_CHUNK_ROWS, max(_CHUNK_ROWS // 64, _CHUNK_WORK // biggest))) if stop is not None else _CHUNK_ROWS
    units = [(r, g) for r in range(0, n, step) for g in range(len(groups))] if n else []
    total = np.zeros((int(bases[-1]), n_classes), dtype=np.int64)
    tests = np.zeros(len(trees), dtype=np.int64)
    done = 0

    def work(r, g):
        return count_forest(*packs[g], X[r : r + step], y[r : r + step], n_classes)

    stopped = False
    with ThreadPoolExecutor(max(1, min(n_jobs, len(units) or 1))) as pool:
        pending, running = list(units), []
        while pending or running:
            if not stopped and stop is not None and pending and len(trees) > keep and stop():
                stopped, pending = True, []
            while pending and len(running) < max(1, n_jobs):
                r, g = pending.pop(0)
                running.append((r, g, pool.submit(work, r, g)))
            if not running:  # stopped before anything ran
                break
            r, g, fut = running.pop(0)
            c, t = fut.result()
            if stopped:
                continue  # the kept trees are counted again below
            a, b = groups[g]
            total[bases[a] : bases[b]] += c
            tests[a:b] += t
            done += 1
            if progress is not None:  # in rows: the share of the pass done (every tree over every row)
                progress(n * done // len(units), n)
    if not stopped:
        return total, bases, tests, list(range(len(trees)))
    # stopped: a few trees (spread over the list, or its first ones) are counted on every row, costing about
    # ``keep / len(trees)`` of a whole pass
    kept = list(range(keep)) if prefix else spread(len(trees), keep)
    sub = [trees[i] for i in kept]
    packed, sub_bases = pack_forest(sub)
    total = np.zeros((int(sub_bases[-1]), n_classes), dtype=np.int64)
    tests = np.zeros(len(sub), dtype=np.int64)
    for r in range(0, n, _CHUNK_ROWS):
        c, t = count_forest(*packed, X[r : r + _CHUNK_ROWS], y[r : r + _CHUNK_ROWS], n_classes)
        total += c
        tests += t
    return total, sub_bases, tests, kept


def metrics_from_counts(tree, counts: np.ndarray, tests: int, n_rows: int) -> dict:
    """``errors``, ``accuracy`` and ``avg_tests`` of ``tree`` from its node ``counts`` on some rows.

    The same numbers as :meth:`Tree.evaluate` (a row is an error when its class is not its leaf's
    prediction), read off the counts instead of a fresh pass.
    """
    if n_rows == 0:
        return {"errors": 0, "accuracy": None, "avg_tests": None}
    leaves = tree.leaves
    c = counts[leaves]
    errors = int(c.sum() - c[np.arange(len(leaves)), tree.prediction[leaves]].sum())
    return {"errors": errors, "accuracy": 1.0 - errors / n_rows, "avg_tests": float(tests) / n_rows}


def forest_shape(trees, packed: tuple | None = None) -> dict:
    """Splits, leaves and depth of every tree, and the depth of every node, read off the packed node arrays
    (:meth:`Tree.n_splits`, :attr:`Tree.n_leaves`, :attr:`Tree.depth` for all trees at once).

    Returns a dict of arrays: ``splits``, ``leaves``, ``depth`` (one per tree), ``node_depth`` (one per node,
    tree after tree, -1 for a node no path reaches) and ``bases`` (tree ``t``'s nodes start at ``bases[t]``).
    """
    packed, bases = pack_forest(trees) if packed is None else packed
    roots, column, op, _, true_child, false_child, offsets, children, _ = packed
    depth = np.full(len(column), -1, dtype=np.int64)
    frontier, d = roots, 0
    while frontier.size:
        depth[frontier] = d
        inner = frontier[column[frontier] >= 0]
        multi = inner[op[inner] == OP_MULTI]
        binary = inner[op[inner] != OP_MULTI]
        kids = [true_child[binary], false_child[binary]]
        if multi.size:  # every branch of a multiway node (its CSR range of children)
            lens = offsets[multi + 1] - offsets[multi]
            first = np.repeat(offsets[multi] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
            kids.append(children[first + np.arange(int(lens.sum()))])
        frontier = np.concatenate(kids)
        frontier = frontier[frontier >= 0]
        d += 1
    tree_of = np.repeat(np.arange(len(trees)), np.diff(bases))
    reached = depth >= 0
    n = len(trees)
    return {
        "splits": np.bincount(tree_of[reached & (column >= 0)], minlength=n),
        "leaves": np.bincount(tree_of[reached & (column < 0)], minlength=n),
        "depth": np.maximum.reduceat(depth, bases[:-1]) if n else np.zeros(0, dtype=np.int64),
        "node_depth": depth,
        "bases": bases,
        "column": column,
    }


def forest_metrics(trees, counts: np.ndarray, tests: np.ndarray, n_rows: int, shape: dict | None = None) -> dict:
    """:func:`metrics_from_counts` of every tree at once: ``errors``, ``accuracy`` and ``avg_tests`` arrays.

    ``counts`` are the class counts of every node, tree after tree (:func:`count_forest_stoppable`), ``tests``
    each tree's total tests; ``shape`` is :func:`forest_shape` of ``trees`` (computed when not given).
    """
    n = len(trees)
    if n_rows == 0:
        return {"errors": np.zeros(n, dtype=np.int64), "accuracy": [None] * n, "avg_tests": [None] * n}
    shape = forest_shape(trees) if shape is None else shape
    bases = shape["bases"]
    leaf = (shape["node_depth"] >= 0) & (shape["column"] < 0)
    prediction = np.concatenate([t.prediction for t in trees])
    nodes = np.flatnonzero(leaf)
    wrong = counts[nodes].sum(axis=1) - counts[nodes, prediction[nodes]]  # rows of a leaf not of its class
    tree_of = np.repeat(np.arange(n), np.diff(bases))[nodes]
    errors = np.zeros(n, dtype=np.int64)
    np.add.at(errors, tree_of, wrong)
    return {
        "errors": errors,
        "accuracy": (1.0 - errors / n_rows).tolist(),
        "avg_tests": (np.asarray(tests, dtype=np.float64) / n_rows).tolist(),
    }


def _listed(a: np.ndarray) -> list:
    """Rows of a float array as lists, NaN (nothing to count) as None."""
    return [[None if v != v else v for v in row] for row in a.tolist()]


def forest_scores(
    trees, counts: np.ndarray, shape: dict, cost_matrix: np.ndarray, row_weight=None, X=None, y=None
) -> dict:
    """The objective's scores of every tree at once, from the node ``counts`` of some rows.

    Returns ``cost`` (``sum_i w_i * C[y_i, yhat_i]``), ``balanced_accuracy`` (mean recall over the classes
    present), and per-class ``recall`` and ``precision`` lists (None where no row counts).  ``cost_matrix`` is
    ``diag(class weights) @ C`` (``1 - I`` when plain: the cost is then the errors), applied to the counts; when
    the rows have weights of their own, ``row_weight`` (one per row of ``X``, ``y``, class weights folded in)
    with the plain ``C`` as ``cost_matrix``: the cost then needs a pass of each tree over the rows.
    """
    n = len(trees)
    k = counts.shape[1] if counts.ndim == 2 else 0
    bases = shape["bases"]
    leaf = (shape["node_depth"] >= 0) & (shape["column"] < 0)
    prediction = np.concatenate([t.prediction for t in trees]) if n else np.zeros(0, dtype=np.int64)
    nodes = np.flatnonzero(leaf)
    tree_of = np.repeat(np.arange(n), np.diff(bases))[nodes]
    pred = prediction[nodes]
    c = counts[nodes].astype(np.float64)
    slot = tree_of * k + pred
    hits = np.bincount(slot, weights=c[np.arange(len(nodes)), pred], minlength=n * k).reshape(n, k)
    predicted = np.bincount(slot, weights=c.sum(axis=1), minlength=n * k).reshape(n, k)
    support = counts[bases[:-1]].astype(np.float64)  # every tree's root: all the rows of each class
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(support > 0, hits / support, np.nan)
        precision = np.where(predicted > 0, hits / predicted, np.nan)
    present = support > 0
    balanced = np.where(present.any(axis=1), np.nansum(recall, axis=1) / np.maximum(present.sum(axis=1), 1), np.nan)
    if row_weight is None:
        per_leaf = (c @ cost_matrix)[np.arange(len(nodes)), pred]
        cost = np.bincount(tree_of, weights=per_leaf, minlength=n)
    else:  # weights of the rows' own: each row's cost under the leaf it reaches
        w = np.asarray(row_weight, dtype=np.float64)
        cost = np.array([float(np.sum(w * cost_matrix[y, t.predict_codes(X)])) for t in trees])
    return {
        "cost": cost.tolist(),
        "balanced_accuracy": [None if v != v else v for v in balanced.tolist()],
        "recall": _listed(recall),
        "precision": _listed(precision),
    }


def node_masses(tree, X, y, w) -> np.ndarray:
    """The weighted class mass (``sum of w`` of the rows of each class) reaching every node of ``tree``."""
    k = tree.n_classes
    mass = np.zeros((tree.n_nodes, k))
    rows = np.arange(len(y))
    # a row reaches every node on its path: the leaf's ancestors are found through the parent links
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    for node in range(tree.n_nodes):
        for child in tree.child_list(node):
            parent[child] = node
    node = tree.apply(X)
    while rows.size:
        np.add.at(mass, (node, y[rows]), w[rows])
        up = parent[node] >= 0
        rows, node = rows[up], parent[node[up]]
    return mass
