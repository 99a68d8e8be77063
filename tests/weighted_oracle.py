"""A brute-force oracle for the weighted, cost-sensitive objective (see ``treeexplorer.solvers._objective``).

Small data only: it tries every test at every node.  ``tests`` is a boolean matrix whose column ``t`` says which
rows go right at a split on test ``t`` (a 0/1 feature, or ``x > threshold`` for every threshold of a raw column).
"""

from __future__ import annotations

from functools import cache

import numpy as np


def raw_tests(X: np.ndarray) -> np.ndarray:
    """Every ``x[:, j] > t`` split of a float matrix (``t`` between consecutive distinct values) as 0/1 columns."""
    cols = []
    for j in range(X.shape[1]):
        v = np.unique(X[:, j])
        for a, b in zip(v[:-1], v[1:]):
            cols.append(X[:, j] > (a + b) / 2)
    return np.array(cols, dtype=bool).T.reshape(X.shape[0], len(cols))


def oracle_costs(tests, y, n_classes, depth, sample_weight=None, costs=None, min_leaf=1) -> np.ndarray:
    """The least cost of a tree of depth <= ``depth`` with at most ``b`` splits, for ``b = 0 .. 2**depth - 1``.

    Leaves predict their least-cost class; a leaf needs ``min_leaf`` rows (``inf`` when no tree fits).
    """
    tests = np.asarray(tests, dtype=bool)
    y = np.asarray(y, dtype=np.int64)
    n = y.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    C = 1.0 - np.eye(n_classes) if costs is None else np.asarray(costs, dtype=np.float64)
    right = [frozenset(np.flatnonzero(tests[:, t]).tolist()) for t in range(tests.shape[1])]

    def leaf(rows):
        if len(rows) < min_leaf:
            return np.inf
        mass = np.zeros(n_classes)
        for i in rows:
            mass[y[i]] += w[i]
        return float(np.min(mass @ C))

    @cache
    def best(rows: frozenset, d: int) -> tuple:
        top = (1 << d) - 1
        out = [leaf(rows)] + [np.inf] * top
        if d > 0:
            sub = (1 << (d - 1)) - 1
            for r in right:
                go = rows & r
                if not go or len(go) == len(rows):
                    continue
                L, R = best(rows - go, d - 1), best(go, d - 1)
                for bl in range(sub + 1):
                    for br in range(sub + 1):
                        c = L[bl] + R[br]
                        b = bl + br + 1
                        if c < out[b]:
                            out[b] = c
        for b in range(1, top + 1):  # at most b splits
            out[b] = min(out[b], out[b - 1])
        return tuple(out)

    return np.array(best(frozenset(range(n)), depth))
