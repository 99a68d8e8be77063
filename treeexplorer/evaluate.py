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

from treeexplorer.solvers._kernels.predict import count_forest

__all__ = ["count_trees", "count_trees_stoppable", "spread", "metrics_from_counts"]

_CHUNK_ROWS = 1 << 16
_CHUNK_WORK = 1 << 19  # rows x trees of one chunk when the count is stoppable (~0.05 s on a free core)


def _pack(trees) -> tuple:
    """Concatenate the trees' node arrays (global child indices) for :func:`count_forest`."""
    bases = np.cumsum([0] + [t.n_nodes for t in trees])
    cbases = np.cumsum([0] + [len(t.children) for t in trees])

    def cat(name):
        return np.concatenate([getattr(t, name) for t in trees])

    def shifted(name):  # child indices made global; -1 (no child) stays -1
        return np.concatenate([np.where(getattr(t, name) >= 0, getattr(t, name) + b, -1) for t, b in zip(trees, bases)])

    offsets = np.concatenate([t.child_offsets[:-1] + cb for t, cb in zip(trees, cbases)] + [cbases[-1:]])
    children = np.concatenate([t.children + b for t, b in zip(trees, bases)])
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
    trees = list(trees)
    if not trees:
        return [], np.zeros(0, dtype=np.int64), []
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    n = X.shape[0]
    kept = list(range(len(trees)))
    packed, bases = _pack(trees)
    total = np.zeros((int(bases[-1]), n_classes), dtype=np.int64)
    tests = np.zeros(len(trees), dtype=np.int64)
    # chunks of about the same work whatever the number of trees, so that ``stop`` is heard within ~0.1 s
    step = int(min(_CHUNK_ROWS, max(_CHUNK_ROWS // 64, _CHUNK_WORK // len(trees)))) if stop is not None else _CHUNK_ROWS
    starts = list(range(0, n, step)) or [0]

    def work(a, packed):
        return count_forest(*packed, X[a : a + step], y[a : a + step], n_classes)

    rows = None  # after a stop: the nodes of the kept trees in a full count
    with ThreadPoolExecutor(max(1, min(n_jobs, len(starts)))) as pool:
        pending, running = list(starts), []
        while pending or running:
            if rows is None and stop is not None and pending and len(trees) > keep and stop():
                kept = list(range(keep)) if prefix else spread(len(trees), keep)
                rows = np.concatenate([np.arange(bases[i], bases[i + 1]) for i in kept])
                total, tests = total[rows], tests[kept]
                packed, bases = _pack([trees[i] for i in kept])
            while pending and len(running) < max(1, n_jobs):
                a = pending.pop(0)
                running.append((a, rows is None, pool.submit(work, a, packed)))
            a, full, fut = running.pop(0)
            c, t = fut.result()
            if full and rows is not None:  # a chunk counted with every tree, before the stop
                c, t = c[rows], t[kept]
            total += c
            tests += t
            if progress is not None:
                progress(min(n, a + step), n)
    counts = [total[int(b) : int(e)] for b, e in zip(bases[:-1], bases[1:])]
    return counts, tests, kept


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
