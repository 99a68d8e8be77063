"""DPDT tests-generating functions: which binary tests ``x[f] <= t`` are actions at one MDP state.

Every generator sees only the state's rows ``idx`` and returns ``(features, thresholds)``.  Thresholds
are midpoints between consecutive distinct values of the state's rows, so every proposed test sends at
least one row each way.
"""

import numpy as np
from numba import njit

from solvers._kernels.cart import GINI, _midpoint, cart_build_ranked, node_impurity, sort_positions, sorter

GEN_CART = 0  # split nodes of a depth-K CART (the paper's DPDT-K)
GEN_CART_LEAVES = 1  # split nodes of a best-first CART with L leaves (the reference code's variant)
GEN_TOPB = 2  # the B tests with the largest impurity decrease
GEN_EXHAUSTIVE = 3  # every threshold of every feature: the MDP holds every tree, the result is optimal
GEN_HYBRID = 4  # DPDT-K above depth d0, one greedy CART split below


@njit(nogil=True, cache=True)
def _dedupe(feat, thr, n):
    """First occurrence of every (feature, threshold) pair among the first ``n``."""
    keep = np.ones(n, dtype=np.bool_)
    for i in range(n):
        for j in range(i):
            if keep[j] and feat[j] == feat[i] and thr[j] == thr[i]:
                keep[i] = False
                break
    m = 0
    for i in range(n):
        if keep[i]:
            feat[m] = feat[i]
            thr[m] = thr[i]
            m += 1
    return feat[:m].copy(), thr[:m].copy()


@njit(nogil=True, cache=True)
def _cart_tests(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion):
    f, t, _, _, _, nn = cart_build_ranked(X, y, ranks, idx, n_classes, max_depth, max_leaves, 1, criterion)
    feat = np.empty(nn, dtype=np.int64)
    thr = np.empty(nn, dtype=np.float64)
    n = 0
    for k in range(nn):
        if f[k] >= 0:
            feat[n] = f[k]
            thr[n] = t[k]
            n += 1
    return _dedupe(feat, thr, n)


@njit(nogil=True, cache=True)
def _all_tests(X, y, ranks, idx, n_classes, criterion, with_gain):
    """Every midpoint test of every feature on rows ``idx`` (and its impurity decrease when asked)."""
    m = idx.shape[0]
    p = X.shape[1]
    cap = p * max(m - 1, 0)
    feat = np.empty(cap, dtype=np.int64)
    thr = np.empty(cap, dtype=np.float64)
    gain = np.zeros(cap, dtype=np.float64)
    vals = np.empty(m, dtype=np.float64)
    order = np.empty(m, dtype=np.int64)
    keys, buf, loc, n_bits, use_global = sorter(ranks, idx)
    total = np.zeros(n_classes, dtype=np.int64)
    for i in range(m):
        total[y[idx[i]]] += 1
    imp = node_impurity(total, criterion) if with_gain else 0.0
    cl = np.zeros(n_classes, dtype=np.int64)
    n = 0
    for f in range(p):
        for i in range(m):
            vals[i] = X[idx[i], f]
        sort_positions(ranks, idx, f, order, keys, buf, loc, n_bits, use_global)
        cl[:] = 0
        for j in range(m - 1):
            a = order[j]
            b = order[j + 1]
            cl[y[idx[a]]] += 1
            if vals[b] <= vals[a]:
                continue
            feat[n] = f
            t = vals[a] / 2.0 + vals[b] / 2.0
            if t == vals[b]:
                t = vals[a]
            thr[n] = t
            if with_gain:
                nl = j + 1
                gain[n] = (imp - nl / m * node_impurity(cl, criterion)
                           - (m - nl) / m * node_impurity(total - cl, criterion))
            n += 1
    return feat[:n], thr[:n], gain[:n]


@njit(nogil=True, cache=True)
def generate_tests(X, y, ranks, idx, n_classes, gen, k, depth, d0, criterion):
    """Tests proposed at a state of ``depth`` holding rows ``idx``.

    Parameters
    ----------
    ranks : int64 (2, p, n)
        ``cart.feature_ranks(X)``: lets every state sort its rows without a comparison sort.
    gen : int
        One of ``GEN_*``.
    k : int
        CART depth (cart, hybrid), number of leaves (cart_leaves) or B (topb); unused by exhaustive.
    d0 : int
        Hybrid: states shallower than ``d0`` use DPDT-K, deeper ones the greedy split.
    criterion : int
        Impurity used by CART and topb (0 gini, 1 entropy).

    Returns
    -------
    features : int64 array, thresholds : float64 array
    """
    if gen == GEN_CART:
        return _cart_tests(X, y, ranks, idx, n_classes, k, 0, criterion)
    if gen == GEN_CART_LEAVES:
        return _cart_tests(X, y, ranks, idx, n_classes, 2**31, k, criterion)
    if gen == GEN_HYBRID:
        return _cart_tests(X, y, ranks, idx, n_classes, k if depth < d0 else 1, 0, criterion)
    if gen == GEN_TOPB:
        feat, thr, gain = _all_tests(X, y, ranks, idx, n_classes, criterion, True)
        order = np.argsort(-gain, kind="mergesort")[:k]
        return feat[order].copy(), thr[order].copy()
    feat, thr, _ = _all_tests(X, y, ranks, idx, n_classes, GINI, False)
    return feat, thr


@njit(nogil=True, cache=True)
def best_exhaustive_leaf_split(X, y, ranks, idx, n_classes):
    """Fewest errors of a split of rows ``idx`` into two leaves over every threshold.

    Returns ``(feature, threshold, errors_left, errors_right)``; feature -1 when no split exists.
    """
    m = idx.shape[0]
    p = X.shape[1]
    vals = np.empty(m, dtype=np.float64)
    order = np.empty(m, dtype=np.int64)
    keys, buf, loc, n_bits, use_global = sorter(ranks, idx)
    total = np.zeros(n_classes, dtype=np.int64)
    for i in range(m):
        total[y[idx[i]]] += 1
    cl = np.zeros(n_classes, dtype=np.int64)
    best_f = -1
    best_t = 0.0
    best_el = 0
    best_er = 0
    best = m + 1
    for f in range(p):
        for i in range(m):
            vals[i] = X[idx[i], f]
        sort_positions(ranks, idx, f, order, keys, buf, loc, n_bits, use_global)
        cl[:] = 0
        for j in range(m - 1):
            a = order[j]
            b = order[j + 1]
            cl[y[idx[a]]] += 1
            if vals[b] <= vals[a]:
                continue
            ml = 0
            mr = 0
            for c in range(n_classes):
                if cl[c] > ml:
                    ml = cl[c]
                if total[c] - cl[c] > mr:
                    mr = total[c] - cl[c]
            el = j + 1 - ml
            er = m - j - 1 - mr
            if el + er < best:
                best = el + er
                best_f = f
                t = vals[a] / 2.0 + vals[b] / 2.0
                if t == vals[b]:
                    t = vals[a]
                best_t = t
                best_el = el
                best_er = er
    return best_f, best_t, best_el, best_er


@njit(nogil=True, cache=True)
def root_split_and_bound(X, y, ranks, idx, n_classes, criterion):
    """CART's root split of rows ``idx`` and the fewest errors of any split into two leaves.

    One sorted pass per feature computes both.  The root split is chosen exactly as
    :func:`cart._best_split` does (same proxy arithmetic and tie rule), so when its leaf errors equal the
    bound, no other test of the CART can do better at the last depth and the CART need not be grown.

    Returns
    -------
    feature, threshold, errors_left, errors_right : CART's root split (feature -1 if none)
    bound : int
        Fewest leaf errors over every threshold of every feature.
    """
    m = idx.shape[0]
    p = X.shape[1]
    vals = np.empty(m, dtype=np.float64)
    labs = np.empty(m, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    keys, buf, loc, n_bits, use_global = sorter(ranks, idx)
    total = np.zeros(n_classes, dtype=np.int64)
    for i in range(m):
        total[y[idx[i]]] += 1
    xlogx = np.zeros(m + 1, dtype=np.float64)
    if criterion != GINI:
        for i in range(1, m + 1):
            xlogx[i] = i * np.log(i)
    sq_tot = 0.0
    sq_int = 0
    for c in range(n_classes):
        sq_int += total[c] * total[c]
        sq_tot += xlogx[total[c]]
    cl = np.zeros(n_classes, dtype=np.int64)
    suf = np.zeros(m, dtype=np.int64)
    best_proxy = -np.inf
    bf = -1
    bt = 0.0
    bel = 0
    ber = 0
    bound = m
    for f in range(p):
        sort_positions(ranks, idx, f, order, keys, buf, loc, n_bits, use_global)
        for i in range(m):
            vals[i] = X[idx[order[i]], f]
            labs[i] = y[idx[order[i]]]
        if vals[m - 1] <= vals[0]:
            continue
        # majority count of every suffix, by a reverse pass (the max of growing counts only grows)
        cl[:] = 0
        mx = 0
        for i in range(m - 1, 0, -1):
            k = labs[i]
            cl[k] += 1
            if cl[k] > mx:
                mx = cl[k]
            suf[i] = mx
        cl[:] = 0
        ml = 0
        if criterion == GINI:
            gl = 0
            gr = sq_int
            for i in range(m - 1):
                k = labs[i]
                gl += 2 * cl[k] + 1
                cl[k] += 1
                gr -= 2 * (total[k] - cl[k]) + 1
                if cl[k] > ml:
                    ml = cl[k]
                if vals[i + 1] <= vals[i]:
                    continue
                nl = i + 1
                nr = m - nl
                err = nl - ml + nr - suf[i + 1]
                if err < bound:
                    bound = err
                proxy = gl / nl + gr / nr
                if proxy > best_proxy:
                    best_proxy = proxy
                    bf = f
                    bt = _midpoint(vals[i], vals[i + 1])
                    bel = nl - ml
                    ber = nr - suf[i + 1]
        else:
            el = 0.0
            er = sq_tot
            for i in range(m - 1):
                k = labs[i]
                el += xlogx[cl[k] + 1] - xlogx[cl[k]]
                er += xlogx[total[k] - cl[k] - 1] - xlogx[total[k] - cl[k]]
                cl[k] += 1
                if cl[k] > ml:
                    ml = cl[k]
                if vals[i + 1] <= vals[i]:
                    continue
                nl = i + 1
                nr = m - nl
                err = nl - ml + nr - suf[i + 1]
                if err < bound:
                    bound = err
                proxy = el - xlogx[nl] + er - xlogx[nr]
                if proxy > best_proxy:
                    best_proxy = proxy
                    bf = f
                    bt = _midpoint(vals[i], vals[i + 1])
                    bel = nl - ml
                    ber = nr - suf[i + 1]
    return bf, bt, bel, ber, bound
