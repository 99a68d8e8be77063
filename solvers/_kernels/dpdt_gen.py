"""DPDT tests-generating functions: which binary tests ``x[f] <= t`` are actions at one MDP state.

Every generator sees only the state's rows ``idx`` and returns ``(features, thresholds)``.  Thresholds
are midpoints between consecutive distinct values of the state's rows, so every proposed test sends at
least one row each way.
"""

import numpy as np
from numba import njit

from .cart import (
    ENTROPY,
    GINI,
    _capacity,
    _gather,
    _grow,
    _open_node,
    _partition,
    _search_node,
    cart_build_ranked,
    node_impurity,
    sort_positions,
    sorter,
)

GEN_CART = 0  # split nodes of a depth-K CART (the paper's DPDT-K)
GEN_CART_LEAVES = 1  # split nodes of a best-first CART with L leaves (the reference code's variant)
GEN_TOPB = 2  # the B tests with the largest impurity decrease
GEN_EXHAUSTIVE = 3  # every threshold of every feature: the MDP holds every tree, the result is optimal
GEN_HYBRID = 4  # DPDT-K above depth d0, one greedy CART split below
# criterion code of the generators beyond cart's GINI / ENTROPY: the union of the tests both propose
BOTH = 2
assert BOTH - 2 == GINI and BOTH - 1 == ENTROPY  # the kernels derive both codes from BOTH at run time


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
def _union(f1, t1, f2, t2):
    """Tests ``(f1, t1)`` then those of ``(f2, t2)`` not among them (each list already without repeats)."""
    feat = np.concatenate((f1, f2))
    thr = np.concatenate((t1, t2))
    return _dedupe(feat, thr, feat.shape[0])


@njit(nogil=True, cache=True)
def _cart_tests(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion):
    # no recursion here: a recursive call with a constant argument compiles a literal-typed overload,
    # which crashes when numba loads it from its cache
    if criterion == BOTH:
        f1, t1 = _cart_tests_one(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion - 2)
        f2, t2 = _cart_tests_one(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion - 1)
        return _union(f1, t1, f2, t2)
    return _cart_tests_one(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion)


@njit(nogil=True, cache=True)
def _cart_tests_one(X, y, ranks, idx, n_classes, max_depth, max_leaves, criterion):
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
def _cart_tests_sorted(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion, flag):
    """:func:`_cart_tests` given ``srt[f]``, the positions of ``idx`` sorted by feature f (consumed); a fit
    stopped by ``flag`` gives the tests of its tree so far."""
    if criterion == BOTH:
        srt2 = srt.copy()
        f1, t1 = _cart_tests_sorted_one(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion - 2, flag)
        f2, t2 = _cart_tests_sorted_one(X, y, idx, srt2, n_classes, max_depth, max_leaves, criterion - 1, flag)
        return _union(f1, t1, f2, t2)
    return _cart_tests_sorted_one(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion, flag)


@njit(nogil=True, cache=True)
def _cart_tests_sorted_one(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion, flag):
    xc, yc = _gather(X, y, idx)
    f, t, _, _, _, nn = _grow(xc, yc, srt, n_classes, max_depth, max_leaves, 1, criterion, flag)
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
def generate_tests_sorted(X, y, ranks, idx, srt, n_classes, gen, k, depth, d0, criterion, flag):
    """:func:`generate_tests` reusing ``srt`` (positions of ``idx`` sorted by each feature, consumed) for
    the CART generators."""
    if gen == GEN_CART:
        return _cart_tests_sorted(X, y, idx, srt, n_classes, k, 0, criterion, flag)
    if gen == GEN_CART_LEAVES:
        return _cart_tests_sorted(X, y, idx, srt, n_classes, 2**31, k, criterion, flag)
    if gen == GEN_HYBRID:
        return _cart_tests_sorted(X, y, idx, srt, n_classes, k if depth < d0 else 1, 0, criterion, flag)
    return generate_tests(X, y, ranks, idx, n_classes, gen, k, depth, d0, criterion)


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
                gain[n] = (
                    imp - nl / m * node_impurity(cl, criterion) - (m - nl) / m * node_impurity(total - cl, criterion)
                )
            n += 1
    return feat[:n], thr[:n], gain[:n]


@njit(nogil=True, cache=True)
def _top_b(X, y, ranks, idx, n_classes, k, criterion):
    feat, thr, gain = _all_tests(X, y, ranks, idx, n_classes, criterion, True)
    order = np.argsort(-gain, kind="mergesort")[:k]
    return feat[order].copy(), thr[order].copy()


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
        Impurity used by CART and topb (0 gini, 1 entropy, ``BOTH``: the union of both's tests).

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
        if criterion == BOTH:
            f1, t1 = _top_b(X, y, ranks, idx, n_classes, k, criterion - 2)
            f2, t2 = _top_b(X, y, ranks, idx, n_classes, k, criterion - 1)
            return _union(f1, t1, f2, t2)
        return _top_b(X, y, ranks, idx, n_classes, k, criterion)
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
def last_depth_split(X, y, ranks, idx, n_classes, max_depth, max_leaves, greedy_only, criterion):
    """Fewest-errors test among the split nodes of the CART a generator fits on rows ``idx``.

    At the last depth of the MDP every test leads to two leaves, so a state needs only its best test.
    The CART (depth-first with ``max_depth``, or best-first with ``max_leaves`` > 0, exactly as
    :func:`cart._grow` builds it) is grown one split at a time and each new split is scored on all the
    state's rows by table look-up; growth stops as soon as a split reaches the fewest errors of any
    threshold (nothing can beat it), so most states never grow more than the root.  ``greedy_only``:
    the CART's root split only (DPDT-1, and the hybrid below its depth ``d0``).

    Returns
    -------
    feature, threshold, errors_left, errors_right : the chosen test (feature -1 if the rows cannot split)
    grown : bool
        Whether splits below the root were needed.
    """
    m = idx.shape[0]
    p = X.shape[1]
    srt = np.empty((p, m), dtype=np.int64)
    keys, buf, loc, n_bits, use_global = sorter(ranks, idx)
    for f in range(p):
        sort_positions(ranks, idx, f, srt[f], keys, buf, loc, n_bits, use_global)
    return last_depth_split_sorted(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, m + 1)


@njit(nogil=True, cache=True)
def last_depth_split_sorted(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, beat):
    """:func:`last_depth_split` given ``srt[f]``, the positions of ``idx`` sorted by feature f (consumed).

    ``beat``: the caller only wants a test with fewer errors than this (the state's leaf); when no
    threshold has, the CART is not fitted and feature -1 is returned.  ``criterion=BOTH``: the best test
    of the gini CART's and the entropy CART's (the latter grown only when the former's best is not the
    fewest errors of any threshold; ties keep gini's).
    """
    if criterion != BOTH:
        return _last_split(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, beat)[:5]
    srt2 = srt.copy()
    bf, bt, bel, ber, grown, bound = _last_split(
        X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion - 2, beat
    )
    if bf < 0 or bel + ber == bound:
        return bf, bt, bel, ber, grown  # nothing beats the leaf, or nothing beats this test
    f2, t2, el2, er2, grown2, _ = _last_split(
        X, y, idx, srt2, n_classes, max_depth, max_leaves, greedy_only, criterion - 1, beat
    )
    if f2 >= 0 and el2 + er2 < bel + ber:
        return f2, t2, el2, er2, grown or grown2
    return bf, bt, bel, ber, grown or grown2


@njit(nogil=True, cache=True)
def _last_split(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, beat):
    """:func:`last_depth_split_sorted` for one impurity; also returns the fewest errors of any threshold."""
    m = idx.shape[0]
    p = X.shape[1]
    xc, yc = _gather(X, y, idx)
    xs = np.empty((p, m), dtype=np.float64)
    ys = np.empty((p, m), dtype=np.int64)
    for f in range(p):
        for i in range(m):
            xs[f, i] = xc[f, srt[f, i]]
            ys[f, i] = yc[srt[f, i]]
    # err[f, nl]: leaf errors when the first nl rows in f's order go left; bound: fewest over thresholds
    err = np.empty((p, m + 1), dtype=np.int64)
    cl = np.zeros(n_classes, dtype=np.int64)
    cr = np.zeros(n_classes, dtype=np.int64)
    bound = m
    for f in range(p):
        cl[:] = 0
        mx = 0
        err[f, m] = 0
        for i in range(m - 1, -1, -1):
            c = ys[f, i]
            cl[c] += 1
            if cl[c] > mx:
                mx = cl[c]
            err[f, i] = (m - i) - mx
        cl[:] = 0
        mx = 0
        for i in range(m):
            c = ys[f, i]
            cl[c] += 1
            if cl[c] > mx:
                mx = cl[c]
            err[f, i + 1] += (i + 1) - mx
            if i + 1 < m and xs[f, i + 1] > xs[f, i] and err[f, i + 1] < bound:
                bound = err[f, i + 1]
    if bound >= beat:
        return -1, 0.0, 0, 0, False, bound

    xlogx = np.zeros(m + 1, dtype=np.float64)
    if criterion != GINI:
        for i in range(1, m + 1):
            xlogx[i] = i * np.log(i)
    cap = _capacity(m, max_depth, max_leaves)
    value = np.zeros((cap, n_classes), dtype=np.int64)
    n_start = np.zeros(cap, dtype=np.int64)
    n_end = np.zeros(cap, dtype=np.int64)
    n_depth = np.zeros(cap, dtype=np.int64)
    s_feat = np.full(cap, -1, dtype=np.int64)
    s_pos = np.zeros(cap, dtype=np.int64)
    s_thr = np.zeros(cap, dtype=np.float64)
    s_gain = np.zeros(cap, dtype=np.float64)
    done = np.zeros(cap, dtype=np.bool_)
    open_ = np.zeros(cap, dtype=np.bool_)
    mark = np.zeros(m, dtype=np.bool_)
    bi = np.empty(m, dtype=np.int64)
    bx = np.empty(m, dtype=np.float64)
    by = np.empty(m, dtype=np.int64)
    n_start[0] = 0
    n_end[0] = m
    n_nodes = 1
    _open_node(0, ys, n_start, n_end, n_depth, value, s_feat, s_gain, done, n_classes, 1, criterion, max_depth, m)
    if not done[0]:
        _search_node(
            0, xs, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, 1, criterion, m, cl, cr, xlogx
        )
        done[0] = True
    best = m + 1
    bf = -1
    bt = 0.0
    grown = False
    if s_feat[0] >= 0:
        bf = s_feat[0]
        bt = s_thr[0]
        best = err[bf, s_pos[0]]
    if bf >= 0 and best > bound and not greedy_only:
        grown = True
        x0 = xs.copy()  # the state's sorted values (xs is reordered as the CART grows)
        open_[0] = True
        splits_left = max_leaves - 1 if max_leaves > 0 else cap
        while splits_left > 0:
            # next node to split: best-first = largest gain (lazy search as in cart._grow); depth-first =
            # preorder, i.e. the deepest open node, left before right (the last one opened)
            k = -1
            if max_leaves > 0:
                for j in range(n_nodes):
                    if open_[j] and (k < 0 or s_gain[j] > s_gain[k]):
                        k = j
            else:
                for j in range(n_nodes - 1, -1, -1):
                    if open_[j]:
                        k = j
                        break
            if k < 0:
                break
            if not done[k]:
                _search_node(
                    k,
                    xs,
                    ys,
                    n_start,
                    n_end,
                    value,
                    s_feat,
                    s_pos,
                    s_thr,
                    s_gain,
                    n_classes,
                    1,
                    criterion,
                    m,
                    cl,
                    cr,
                    xlogx,
                )
                done[k] = True
                if max_leaves > 0:
                    continue
            open_[k] = False
            f = s_feat[k]
            if f < 0:
                continue
            splits_left -= 1
            if k > 0:
                # score this split on all the state's rows: x0[f] is sorted, so its left side is a prefix
                t = s_thr[k]
                lo = 0
                hi = m
                while lo < hi:
                    mid = (lo + hi) // 2
                    if x0[f, mid] <= t:
                        lo = mid + 1
                    else:
                        hi = mid
                e = err[f, lo]
                if e < best:
                    best = e
                    bf = f
                    bt = t
                    if best == bound:
                        break
            start = n_start[k]
            end = n_end[k]
            _partition(srt, xs, ys, start, end, f, s_pos[k], mark, bi, bx, by)
            # children: left gets the higher id in depth-first mode so it is split first (preorder)
            for side in range(2):
                c_id = n_nodes
                n_nodes += 1
                left_side = (side == 1) if max_leaves <= 0 else (side == 0)
                if left_side:
                    n_start[c_id] = start
                    n_end[c_id] = start + s_pos[k]
                else:
                    n_start[c_id] = start + s_pos[k]
                    n_end[c_id] = end
                n_depth[c_id] = n_depth[k] + 1
                _open_node(
                    c_id,
                    ys,
                    n_start,
                    n_end,
                    n_depth,
                    value,
                    s_feat,
                    s_gain,
                    done,
                    n_classes,
                    1,
                    criterion,
                    max_depth,
                    m,
                )
                open_[c_id] = True
    bel = 0
    ber = 0
    if bf >= 0:
        cl[:] = 0
        cr[:] = 0
        for i in range(m):
            r = idx[i]
            if X[r, bf] <= bt:
                cl[y[r]] += 1
            else:
                cr[y[r]] += 1
        bel = cl.sum() - cl.max()
        ber = cr.sum() - cr.max()
    return bf, bt, bel, ber, grown, bound
