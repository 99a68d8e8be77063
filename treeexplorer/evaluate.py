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

__all__ = ["count_trees", "metrics_from_counts"]

_CHUNK_ROWS = 1 << 16


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
    trees = list(trees)
    if not trees:
        return [], np.zeros(0, dtype=np.int64)
    packed, bases = _pack(trees)
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    n = X.shape[0]
    starts = list(range(0, n, _CHUNK_ROWS)) or [0]
    total = np.zeros((int(bases[-1]), n_classes), dtype=np.int64)
    tests = np.zeros(len(trees), dtype=np.int64)
    done = 0

    def work(a):
        return count_forest(*packed, X[a : a + _CHUNK_ROWS], y[a : a + _CHUNK_ROWS], n_classes)

    with ThreadPoolExecutor(max(1, min(n_jobs, len(starts)))) as pool:
        for a, (c, t) in zip(starts, pool.map(work, starts)):
            total += c
            tests += t
            done = min(n, a + _CHUNK_ROWS)
            if progress is not None:
                progress(done, n)
    return [total[bases[i] : bases[i + 1]] for i in range(len(trees))], tests


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
