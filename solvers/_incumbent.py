"""A greedy incumbent for anytime searches on binary tests: a stopped exact search is never worse than it.

An exact search stopped by its time or memory limit returns its best tree so far, which on large data
can be a stump while a greedy tree is far better (1M rows, 60 s: BRANCHES' best was a stump at 0.525 while
a depth-3 tree reaches 0.708).  :func:`greedy_for_lambda` grows a CART tree (gini) on the 0/1 tests, on at
most ``max_rows`` sampled rows so that it costs a fraction of a second, counts it on every row, and prunes
it bottom-up for the exact objective ``correct/n - lambda * splits``.
"""

from __future__ import annotations

import numpy as np

from ._base import RawTree
from .cart import build_tree, fit_cart

__all__ = ["GreedyIncumbent", "sample_rows"]

_MAX_CELLS = 1 << 23  # rows x tests the greedy tree is grown on (about 320 MB of CART's working copies)
MAX_ROWS = 50_000
_ALWAYS_CELLS = 1 << 20  # below this the greedy tree takes a fraction of a second: grown whole even after a stop


def sample_rows(n: int, p: int, max_rows: int = MAX_ROWS) -> int:
    """Rows the greedy tree is grown on for ``n`` rows and ``p`` tests (CART works on float64 copies, about 40
    bytes a cell: few rows when there are very many tests)."""
    return min(n, max(1, min(max_rows, _MAX_CELLS // max(1, p))))


class GreedyIncumbent:
    """One greedy tree per data set, pruned per λ on demand (the tree is grown once, lazily).

    Parameters
    ----------
    X : uint8 array of shape (n, p)
        The 0/1 tests.
    y : int64 array of shape (n,)
    n_classes : int
    max_depth : int
        Depth of the greedy tree (the solver's depth limit, capped to keep it cheap).
    max_rows : int
        Rows the greedy tree is grown on (a seeded sample when there are more); counts use every row.
    """

    def __init__(self, X, y, n_classes: int, max_depth: int, max_rows: int = MAX_ROWS, seed: int = 0, flag=None):
        self.X, self.y, self.n_classes = X, y, n_classes
        self.max_depth, self.max_rows, self.seed = max_depth, max_rows, seed
        self.flag = flag  # a Control's stop flag: a large greedy tree stops there with its tree so far
        self._tree: RawTree | None = None

    def _grown(self) -> RawTree:
        if self._tree is None:
            n = self.X.shape[0]
            rows = np.arange(n)
            max_rows = sample_rows(n, self.X.shape[1], self.max_rows)
            if n > max_rows:
                rows = np.sort(np.random.default_rng(self.seed).choice(n, max_rows, replace=False))
            if self.flag is not None and self.flag[0] != 0 and len(rows) * self.X.shape[1] > _ALWAYS_CELLS:
                # stopped before it began: CART's float64 copies of the sample alone would take seconds
                self._tree = RawTree.leaf(np.bincount(self.y, minlength=self.n_classes))
                return self._tree
            Xs = self.X[rows].astype(np.float64)
            if self.flag is None or Xs.size <= _ALWAYS_CELLS:
                t = fit_cart(Xs, self.y[rows], self.max_depth, n_classes=self.n_classes)
            else:  # costs seconds: stopped with the run (nodes not yet split stay leaves)
                ys = np.ascontiguousarray(self.y[rows], dtype=np.int64)
                idx = np.arange(len(rows), dtype=np.int64)
                t = RawTree(*build_tree(Xs, ys, idx, self.n_classes, self.max_depth, 0, 1, 0, self.flag)[:5])
            self._tree = RawTree(
                t.feature, t.threshold, t.left, t.right, _route_counts(t, self.X, self.y, self.n_classes)
            )
        return self._tree

    def for_lambda(self, lam: float) -> tuple[RawTree, float]:
        """The greedy tree pruned for ``correct/n - lam * splits`` and that objective."""
        t = self._grown()
        n = self.X.shape[0]
        correct = t.value.max(axis=1)
        keep = np.zeros(t.n_nodes, dtype=bool)  # keep[k]: node k stays split
        best = correct.astype(np.float64)
        for k in _postorder(t):
            if t.feature[k] >= 0:
                split = best[t.left[k]] + best[t.right[k]] - lam * n
                if split > best[k]:
                    best[k], keep[k] = split, True
        return _extract(t, keep), float(best[0]) / n


def _postorder(t: RawTree) -> list[int]:
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        if t.feature[k] >= 0:
            stack += [t.left[k], t.right[k]]
    return order[::-1]


def _route_counts(t: RawTree, X, y, n_classes: int) -> np.ndarray:
    """Class counts at every node on all rows (rows sent down by the 0/1 tests: 1 goes right)."""
    value = np.zeros((t.n_nodes, n_classes), dtype=np.int64)
    stack = [(0, np.arange(X.shape[0]))]
    while stack:
        k, rows = stack.pop()
        value[k] = np.bincount(y[rows], minlength=n_classes)
        if t.feature[k] >= 0:
            on = X[rows, t.feature[k]] >= 1
            stack += [(t.left[k], rows[~on]), (t.right[k], rows[on])]
    return value


def _extract(t: RawTree, keep: np.ndarray) -> RawTree:
    """The subtree of ``t`` whose split nodes are those with ``keep`` (others become leaves), renumbered."""
    feature, left, right, value = [], [], [], []

    def add(k):
        i = len(feature)
        feature.append(int(t.feature[k]) if keep[k] else -1)
        left.append(-1)
        right.append(-1)
        value.append(t.value[k])
        if keep[k]:
            left[i] = add(t.left[k])
            right[i] = add(t.right[k])
        return i

    add(0)
    f = np.asarray(feature, dtype=np.int64)
    return RawTree(f, np.where(f >= 0, 0.5, 0.0), left, right, np.asarray(value))
