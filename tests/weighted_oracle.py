"""A brute-force oracle for the weighted, cost-sensitive objective (see ``treeexplorer.solvers._objective``).

Small data only: it tries every test at every node.  ``tests`` is a boolean matrix whose column ``t`` says which
rows go right at a split on test ``t`` (a 0/1 feature, or ``x > threshold`` for every threshold of a raw column).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np
from hypothesis import strategies as st
from treeexplorer.solvers._objective import weighted


@st.composite
def problems(draw, real=None, max_rows=24, max_features=5):
    """Small random 0/1 data, 2-3 classes, random weights (integer or real, some 0) and a random cost matrix:
    ``(X, y, n_classes, w, C, real)``."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(2, max_rows))
    f = draw(st.integers(1, max_features))
    k = draw(st.integers(2, 3))
    X = (rng.random((n, f)) < rng.uniform(0.2, 0.8)).astype(np.uint8)
    y = rng.integers(0, k, n)
    if real is None:
        real = draw(st.booleans())
    if real:
        w = rng.uniform(0.0, 3.0, n) * (rng.random(n) > 0.1)
        C = rng.uniform(0.0, 4.0, (k, k))
    else:
        w = rng.integers(0, 5, n).astype(np.float64)
        C = rng.integers(0, 6, (k, k)).astype(np.float64)
    if draw(st.booleans()):
        np.fill_diagonal(C, 0.0)  # the usual shape; a cost on the diagonal is allowed too
    if not w.sum() > 0:
        w[0] = 1.0
    if weighted(w, C, y, k).plain:  # all ones and the default costs: that is the plain path, tested elsewhere
        w[0] = 2.0
    return X, y, k, w, C, real


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

    Leaves predict their least-cost class; a leaf below the root needs ``min_leaf`` rows (the single leaf is always
    a tree, as the solvers have it).
    """
    tests = np.asarray(tests, dtype=bool)
    y = np.asarray(y, dtype=np.int64)
    n = y.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    C = 1.0 - np.eye(n_classes) if costs is None else np.asarray(costs, dtype=np.float64)
    right = [frozenset(np.flatnonzero(tests[:, t]).tolist()) for t in range(tests.shape[1])]

    def leaf(rows):
        if len(rows) < min_leaf and len(rows) < n:
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


def canonical_trees(tests, y, n_classes, depth, sample_weight=None, costs=None, min_leaf=1) -> list[tuple]:
    """Every canonical tree of depth <= ``depth``: ``(cost, splits, key)``, ``key`` naming its shape and tests.

    Canonical as the Rashomon sets have it: every leaf holds ``min_leaf`` rows (the single leaf is always a tree),
    and no internal node has leaves that all predict one class (a leaf predicts its least-cost class, lowest code
    on ties).  Costs are exact: ints when plain, else Fractions of the float weights and costs.
    """
    tests = np.asarray(tests, dtype=bool)
    y = [int(c) for c in y]
    k = n_classes
    if sample_weight is None and costs is None:
        w = [1] * len(y)
        C = [[int(t != p) for p in range(k)] for t in range(k)]
    else:
        w = [1] * len(y) if sample_weight is None else [Fraction(float(v)) for v in sample_weight]
        C = 1.0 - np.eye(k) if costs is None else np.asarray(costs, dtype=np.float64)
        C = [[Fraction(float(C[t, p])) for p in range(k)] for t in range(k)]

    def leaf(rows):
        mass = [0] * k
        for i in rows:
            mass[y[i]] += w[i]
        per = [sum(mass[t] * C[t][p] for t in range(k)) for p in range(k)]
        p = min(range(k), key=per.__getitem__)  # the first minimum: the lowest code on ties
        return per[p], p

    def rec(rows, d):
        e, c = leaf(rows)
        out = [(e, 0, "L", c)]
        if d == 0:
            return out
        for f in range(tests.shape[1]):
            lr = rows[~tests[rows, f]]
            rr = rows[tests[rows, f]]
            if len(lr) < min_leaf or len(rr) < min_leaf:
                continue
            left = rec(lr, d - 1)
            right = rec(rr, d - 1)
            for el, sl, kl, cl in left:
                for er, sr, kr, cr in right:
                    if kl == "L" and kr == "L" and cl == cr:
                        continue  # both leaves predict one class: the same classifier as the leaf
                    out.append((el + er, sl + sr + 1, f"({f} {kl} {kr})", -1))
        return out

    return [(e, s, key) for e, s, key, _ in rec(np.arange(len(y)), depth)]
