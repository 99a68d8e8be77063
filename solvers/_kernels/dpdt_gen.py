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
    _midpoint,
    _open_node,
    _partition,
    cart_build_ranked,
    entropy_beats,
    gini_beats,
    next_open_node,
    node_impurity,
    open_children,
    record_split,
    sort_positions,
    sorted_copies,
    sorter,
    xlogx_table,
)

GEN_CART = 0  # split nodes of a depth-K CART (the paper's DPDT-K)
GEN_CART_LEAVES = 1  # split nodes of a best-first CART with L leaves (the reference code's variant)
GEN_TOPB = 2  # the B tests with the largest impurity decrease
GEN_EXHAUSTIVE = 3  # every threshold of every feature: the MDP holds every tree, the result is optimal
GEN_HYBRID = 4  # DPDT-K above depth d0, one greedy CART split below
# criterion code of the generators beyond cart's GINI / ENTROPY: the union of the tests both propose
BOTH = 2
assert BOTH - 2 == GINI and BOTH - 1 == ENTROPY  # the kernels derive both codes from BOTH at run time
# Arguments passed as typed int64 rather than literal constants: a literal argument (or a constant global) makes
# numba compile a separate specialisation of the called kernel for each constant, doubling the first-run compile.
_ZERO = np.int64(0)
_NO_DEPTH = np.int64(2**31)


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
    """Split tests of the CART fitted on rows ``idx`` (``criterion=BOTH``: the gini CART's, then the entropy
    CART's not among them).  One kernel with a loop over the impurities, not a wrapper calling a kernel per
    impurity: every kernel layer re-optimises all the code it calls on the first run."""
    lo = criterion - 2 if criterion == BOTH else criterion
    hi = criterion if criterion == BOTH else criterion + 1
    feat = np.empty(0, dtype=np.int64)
    thr = np.empty(0, dtype=np.float64)
    n = np.int64(0)
    for c in range(lo, hi):
        f, t, _, _, _, nn = cart_build_ranked(X, y, ranks, idx, n_classes, max_depth, max_leaves, np.int64(1), c)
        if n + nn > feat.shape[0]:
            feat2 = np.empty(n + nn, dtype=np.int64)
            thr2 = np.empty(n + nn, dtype=np.float64)
            for i in range(n):
                feat2[i] = feat[i]
                thr2[i] = thr[i]
            feat, thr = feat2, thr2
        for q in range(nn):
            if f[q] >= 0:
                feat[n] = f[q]
                thr[n] = t[q]
                n += 1
    # first occurrences: the first impurity's tests, then the second's not among them (as _union)
    return _dedupe(feat, thr, n)


@njit(nogil=True, cache=True)
def _cart_tests_sorted(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion, flag):
    """:func:`_cart_tests` given ``srt[f]``, the positions of ``idx`` sorted by feature f; a fit stopped by
    ``flag`` gives the tests of its tree so far.  Depth-first CART (``max_leaves <= 0``): grown depth by depth
    (:func:`_cart_tests_levels`, ``srt`` only read); best-first: by :func:`cart._grow` (``srt`` consumed, so
    copied for the first of two impurities)."""
    both = criterion == BOTH
    c1 = criterion - 2 if both else criterion
    if max_leaves <= 0:
        f1, t1 = _cart_tests_levels(X, y, idx, srt, n_classes, max_depth, c1, flag)
        if not both:
            return f1, t1
        f2, t2 = _cart_tests_levels(X, y, idx, srt, n_classes, max_depth, criterion - 1, flag)
        return _union(f1, t1, f2, t2)
    f1, t1 = _cart_tests_sorted_one(X, y, idx, srt.copy() if both else srt, n_classes, max_depth, max_leaves, c1, flag)
    if not both:
        return f1, t1
    f2, t2 = _cart_tests_sorted_one(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion - 1, flag)
    return _union(f1, t1, f2, t2)


@njit(nogil=True, cache=True)
def _cart_tests_sorted_one(X, y, idx, srt, n_classes, max_depth, max_leaves, criterion, flag):
    xc, yc = _gather(X, y, idx)
    f, t, _, _, _, nn = _grow(xc, yc, srt, n_classes, max_depth, max_leaves, np.int64(1), criterion, flag)
    feat = np.empty(nn, dtype=np.int64)
    thr = np.empty(nn, dtype=np.float64)
    n = np.int64(0)
    for k in range(nn):
        if f[k] >= 0:
            feat[n] = f[k]
            thr[n] = t[k]
            n += 1
    return _dedupe(feat, thr, n)


# inlined into its one caller (dpdt_mdp.level_tests): a kernel of its own would re-optimise every generator
@njit(nogil=True, cache=True, inline="always")
def generate_tests_sorted(X, y, ranks, idx, srt, n_classes, gen, k, depth, d0, criterion, flag):
    """:func:`generate_tests` reusing ``srt`` (positions of ``idx`` sorted by each feature, consumed) for
    the CART generators."""
    if gen == GEN_CART or gen == GEN_CART_LEAVES or gen == GEN_HYBRID:
        md = k
        ml = _ZERO
        if gen == GEN_CART_LEAVES:
            md = _NO_DEPTH
            ml = k
        elif gen == GEN_HYBRID and depth >= d0:
            md = np.int64(1)
        return _cart_tests_sorted(X, y, idx, srt, n_classes, md, ml, criterion, flag)
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
    feat, thr, gain = _all_tests(X, y, ranks, idx, n_classes, criterion, np.True_)
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
    if gen == GEN_CART or gen == GEN_CART_LEAVES or gen == GEN_HYBRID:
        md = k
        ml = _ZERO
        if gen == GEN_CART_LEAVES:
            md = _NO_DEPTH
            ml = k
        elif gen == GEN_HYBRID and depth >= d0:
            md = np.int64(1)
        return _cart_tests(X, y, ranks, idx, n_classes, md, ml, criterion)
    if gen == GEN_TOPB:
        if criterion == BOTH:
            f1, t1 = _top_b(X, y, ranks, idx, n_classes, k, criterion - 2)
            f2, t2 = _top_b(X, y, ranks, idx, n_classes, k, criterion - 1)
            return _union(f1, t1, f2, t2)
        return _top_b(X, y, ranks, idx, n_classes, k, criterion)
    feat, thr, _ = _all_tests(X, y, ranks, idx, n_classes, np.int64(GINI), np.False_)
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
    The CART is the one :func:`cart._grow` builds (depth-first with ``max_depth``, or best-first with
    ``max_leaves`` > 0).  One pass per feature finds its root split and the fewest errors of any
    threshold; when the root split reaches that bound (nothing can beat it) the CART is not grown.
    Otherwise a depth-first CART is grown depth by depth without moving rows (one pass per feature and
    depth, :func:`_grow_levels`); a best-first one split by split until a split reaches the bound.
    Each split is scored on all the state's rows.  ``greedy_only``: the CART's root split only (DPDT-1,
    and the hybrid below its depth ``d0``).

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
    """:func:`last_depth_split` given ``srt[f]``, the positions of ``idx`` sorted by feature f (read only).

    ``beat``: the caller only wants a test with fewer errors than this (the state's leaf); when no
    threshold has, the CART is not fitted and feature -1 is returned.  ``criterion=BOTH``: the best test
    of the gini CART's and the entropy CART's (the latter grown only when the former's best is not the
    fewest errors of any threshold; ties keep gini's).
    """
    if criterion != BOTH:
        return _last_split(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, beat)[:5]
    bf, bt, bel, ber, grown, bound = _last_split(
        X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion - 2, beat
    )
    if bf < 0 or bel + ber == bound:
        return bf, bt, bel, ber, grown  # nothing beats the leaf, or nothing beats this test
    f2, t2, el2, er2, grown2, _ = _last_split(
        X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion - 1, beat
    )
    if f2 >= 0 and el2 + er2 < bel + ber:
        return f2, t2, el2, er2, grown or grown2
    return bf, bt, bel, ber, grown or grown2


@njit(nogil=True, cache=True, inline="always")
def _scan_node2(xf, yc, order, a0, a1, counts, criterion, xlogx, f, best, with_bound, bound):
    """:func:`_scan_node` for two classes, with the class counts in registers: the general loop's
    read-modify-write of ``cl`` through memory is its slowest step.  The same integers, and the same
    floating-point sums in the same order, so the same split and bound."""
    bf, bpos, bthr, bproxy, bnum, bden, bel, ber = best
    n = a1 - a0
    t0 = counts[0]
    t1 = counts[1]
    h_l = 0.0
    h_r = xlogx[t0] + xlogx[t1] if criterion != GINI else 0.0
    c1 = 0
    xb = xf[order[a0]]
    for i in range(a0, a1 - 1):
        k = yc[order[i]]
        nl = i + 1 - a0
        if criterion != GINI:
            ck = c1 if k == 1 else nl - 1 - c1
            tk = t1 if k == 1 else t0
            h_l += xlogx[ck + 1] - xlogx[ck]
            h_r += xlogx[tk - ck - 1] - xlogx[tk - ck]
        c1 += k
        xa = xb
        xb = xf[order[i + 1]]
        if xb <= xa:
            continue
        c0 = nl - c1
        nr = n - nl
        r0 = t0 - c0
        r1 = t1 - c1
        mx = max(c0, c1)
        if criterion == GINI:
            sq_l = c0 * c0 + c1 * c1
            sq_r = r0 * r0 + r1 * r1
            better, proxy = gini_beats(sq_l, sq_r, nl, nr, n, bf, bproxy, bnum, bden)
        else:
            proxy = h_l - xlogx[nl] + h_r - xlogx[nr]
            better = entropy_beats(proxy, bf, bproxy)
        if with_bound:
            bound = min(bound, nl - mx + nr - max(r0, r1))  # branchless: cheaper than testing first
        if better:
            if criterion == GINI:
                bnum = sq_l * nr + sq_r * nl
                bden = nl * nr
            bf, bpos, bthr, bproxy, bel, ber = f, nl, _midpoint(xa, xb), proxy, nl - mx, nr - max(r0, r1)
    return (bf, bpos, bthr, bproxy, bnum, bden, bel, ber), bound


@njit(nogil=True, cache=True, inline="always")
def _scan_node(xf, yc, order, a0, a1, counts, criterion, xlogx, cl, f, best, with_bound, bound):
    """Fold feature ``f`` into one node's best split: :func:`cart._best_split`'s scan with ``min_leaf`` 1
    (same candidates in the same order, same arithmetic, so the same split).

    The node's rows, in increasing order of ``xf`` (feature f of the state's gathered rows), are
    ``order[a0:a1]``; ``counts`` are its class counts.  ``best`` is ``(feature, pos, threshold, proxy, num,
    den, errors_left, errors_right)`` so far (feature -1: none).  ``with_bound``: also lower ``bound`` to the
    fewest leaf errors of any threshold (the errors of the best split are then kept too).
    """
    n_classes = counts.shape[0]
    if n_classes == 2:
        return _scan_node2(xf, yc, order, a0, a1, counts, criterion, xlogx, f, best, with_bound, bound)
    bf, bpos, bthr, bproxy, bnum, bden, bel, ber = best
    n = a1 - a0
    big = 0  # the largest class: no threshold has fewer right errors than nr - big
    sq_r = 0
    h_r = 0.0
    for c in range(n_classes):
        cl[c] = 0
        big = max(big, counts[c])
        sq_r += counts[c] * counts[c]
        if criterion != GINI:
            h_r += xlogx[counts[c]]
    sq_l = 0
    h_l = 0.0
    mx = 0  # the largest class on the left (counts only grow)
    xb = xf[order[a0]]
    for i in range(a0, a1 - 1):
        k = yc[order[i]]
        ck = cl[k]
        if criterion == GINI:
            sq_l += 2 * ck + 1
            sq_r -= 2 * (counts[k] - ck) - 1
        else:
            h_l += xlogx[ck + 1] - xlogx[ck]
            h_r += xlogx[counts[k] - ck - 1] - xlogx[counts[k] - ck]
        cl[k] = ck + 1
        mx = max(mx, ck + 1)
        xa = xb
        xb = xf[order[i + 1]]
        if xb <= xa:
            continue
        nl = i + 1 - a0
        nr = n - nl
        if criterion == GINI:
            better, proxy = gini_beats(sq_l, sq_r, nl, nr, n, bf, bproxy, bnum, bden)
        else:
            proxy = h_l - xlogx[nl] + h_r - xlogx[nr]
            better = entropy_beats(proxy, bf, bproxy)
        # the right side's largest class only when needed: errors that may lower the bound, or the best's
        if better or (with_bound and nl - mx + max(nr - big, 0) < bound):
            mr = 0
            for c in range(n_classes):
                mr = max(mr, counts[c] - cl[c])
            if with_bound:
                bound = min(bound, nl - mx + nr - mr)
            if better:
                if criterion == GINI:
                    bnum = sq_l * nr + sq_r * nl
                    bden = nl * nr
                bf, bpos, bthr, bproxy, bel, ber = f, nl, _midpoint(xa, xb), proxy, nl - mx, nr - mr
    return (bf, bpos, bthr, bproxy, bnum, bden, bel, ber), bound


@njit(nogil=True, cache=True)
def _root_split(xc, yc, srt, total, criterion, xlogx):
    """CART's root split of a state's rows and, in the same pass, the fewest leaf errors of any threshold.

    ``srt[f]``: the rows (positions in ``xc``/``yc``) sorted by feature f.  Returns ``feature, pos,
    threshold, errors_left, errors_right`` of the split (feature -1: no feature takes two values) and the
    bound.
    """
    m = yc.shape[0]
    cl = np.zeros(total.shape[0], dtype=np.int64)
    best = (-1, 0, 0.0, -np.inf, 0, 1, 0, 0)
    bound = m
    for f in range(xc.shape[0]):
        if xc[f, srt[f, m - 1]] > xc[f, srt[f, 0]]:
            best, bound = _scan_node(xc[f], yc, srt[f], 0, m, total, criterion, xlogx, cl, f, best, True, bound)
    return best[0], best[1], best[2], best[6], best[7], bound


@njit(nogil=True, cache=True)
def _level_splits(xc, yc, srt, slot, counts, criterion, xlogx):
    """CART's split of every node of one depth of a tree grown on a state's rows.

    Row ``r`` lies in node ``slot[r]`` (-1: in no node to split); ``counts[s]`` are node s's class counts.
    For every feature, one pass over ``srt[f]`` lays the nodes' rows out side by side in f's order, then
    each node is scanned as :func:`_root_split` scans the root.  Returns ``feature, threshold`` per node.
    """
    m = yc.shape[0]
    n_slots, n_classes = counts.shape
    start = np.zeros(n_slots + 1, dtype=np.int64)
    for s in range(n_slots):
        start[s + 1] = start[s] + counts[s].sum()
    order = np.empty(start[n_slots], dtype=np.int64)
    fill = np.empty(n_slots, dtype=np.int64)
    feat = np.full(n_slots, -1, dtype=np.int64)
    pos = np.zeros(n_slots, dtype=np.int64)
    thr = np.zeros(n_slots, dtype=np.float64)
    proxy = np.full(n_slots, -np.inf)
    num = np.zeros(n_slots, dtype=np.int64)
    den = np.ones(n_slots, dtype=np.int64)
    cl = np.zeros(n_classes, dtype=np.int64)
    for f in range(xc.shape[0]):
        fill[:] = start[:n_slots]
        for i in range(m):
            r = srt[f, i]
            s = slot[r]
            if s >= 0:
                order[fill[s]] = r
                fill[s] += 1
        xf = xc[f]
        for s in range(n_slots):
            a0 = start[s]
            a1 = start[s + 1]
            if xf[order[a1 - 1]] <= xf[order[a0]]:
                continue  # constant feature in this node
            best = (feat[s], pos[s], thr[s], proxy[s], num[s], den[s], 0, 0)
            best, _ = _scan_node(xf, yc, order, a0, a1, counts[s], criterion, xlogx, cl, f, best, False, 0)
            feat[s], pos[s], thr[s], proxy[s], num[s], den[s] = best[:6]
    return feat, thr


@njit(nogil=True, cache=True)
def _split_errors(xc, yc, f, t, n_classes, cl, cr):
    """Leaf errors ``(left, right)`` of the test ``x[f] <= t`` on a state's gathered rows."""
    cl[:] = 0
    cr[:] = 0
    for i in range(yc.shape[0]):
        if xc[f, i] <= t:
            cl[yc[i]] += 1
        else:
            cr[yc[i]] += 1
    return cl.sum() - cl.max(), cr.sum() - cr.max()


@njit(nogil=True, cache=True)
def _grow_levels(xc, yc, srt, n_classes, max_depth, criterion, xlogx, f0, t0, el0, er0, score, flag):
    """A depth-``max_depth`` CART on a state's rows whose root split is ``x[f0] <= t0``, grown depth by
    depth: one pass per feature over the state's sorted rows finds the splits of all the nodes of a depth
    (:func:`_level_splits`), so rows are never partitioned.  It is the tree :func:`cart._grow` builds
    depth-first (a raised ``flag`` stops it after a whole depth).

    Returns ``feature, threshold, order``: per node (feature -1: a leaf), and the split nodes in preorder;
    with ``score``, also each split's leaf errors on all the state's rows (``el0``, ``er0``: the root's).
    """
    m = yc.shape[0]
    cap = _capacity(m, max_depth, np.int64(0))
    feat = np.full(cap, -1, dtype=np.int64)
    thr = np.zeros(cap, dtype=np.float64)
    left = np.full(cap, -1, dtype=np.int64)
    e_l = np.zeros(cap, dtype=np.int64)
    e_r = np.zeros(cap, dtype=np.int64)
    feat[0], thr[0], e_l[0], e_r[0] = f0, t0, el0, er0
    node = np.zeros(m, dtype=np.int64)  # each row's node at the current depth (-1: in a leaf)
    slot = np.empty(m, dtype=np.int64)
    child_slot = np.empty(cap, dtype=np.int64)
    cl = np.zeros(n_classes, dtype=np.int64)
    cr = np.zeros(n_classes, dtype=np.int64)
    n_nodes = 1
    first = 0  # ids [first, n_nodes) are the current depth's nodes
    for _ in range(1, max_depth):
        if flag[0] != 0:
            break
        # children of the current depth's split nodes (left, then right, in id order)
        lo = n_nodes
        for q in range(first, lo):
            if feat[q] >= 0:
                left[q] = n_nodes
                n_nodes += 2
        if n_nodes == lo:
            break
        counts = np.zeros((n_nodes - lo, n_classes), dtype=np.int64)
        for r in range(m):
            q = node[r]
            if q < 0 or feat[q] < 0:
                node[r] = -1
                continue
            c = left[q] if xc[feat[q], r] <= thr[q] else left[q] + 1
            node[r] = c
            counts[c - lo, yc[r]] += 1
        # nodes that can split: two rows or more, not pure
        n_slots = 0
        for c in range(lo, n_nodes):
            size = 0
            top = 0
            for k in range(n_classes):
                size += counts[c - lo, k]
                top = max(top, counts[c - lo, k])
            child_slot[c] = -1
            if size >= 2 and top < size:
                child_slot[c] = n_slots
                counts[n_slots] = counts[c - lo]
                n_slots += 1
        if n_slots == 0:
            break
        for r in range(m):
            slot[r] = child_slot[node[r]] if node[r] >= 0 else -1
        sf, st = _level_splits(xc, yc, srt, slot, counts[:n_slots], criterion, xlogx)
        for c in range(lo, n_nodes):
            sl = child_slot[c]
            if sl >= 0 and sf[sl] >= 0:
                feat[c] = sf[sl]
                thr[c] = st[sl]
                if score:
                    e_l[c], e_r[c] = _split_errors(xc, yc, feat[c], thr[c], n_classes, cl, cr)
        first = lo
    # preorder: node, left subtree, right subtree
    order = np.empty(n_nodes, dtype=np.int64)
    n_split = 0
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        q = stack[top]
        if feat[q] < 0:
            continue
        order[n_split] = q
        n_split += 1
        if left[q] >= 0:
            stack[top] = left[q] + 1
            stack[top + 1] = left[q]
            top += 2
    return feat, thr, order[:n_split], e_l, e_r


@njit(nogil=True, cache=True)
def _state_arrays(X, y, idx, n_classes, criterion):
    """A state's rows gathered feature by feature (``xc``, ``yc``), its class counts and, for entropy,
    ``xlogx[i] = i log i`` up to its size."""
    m = idx.shape[0]
    xc, yc = _gather(X, y, idx)
    total = np.zeros(n_classes, dtype=np.int64)
    for i in range(m):
        total[yc[i]] += 1
    return xc, yc, total, xlogx_table(m, criterion)


@njit(nogil=True, cache=True)
def _cart_tests_levels(X, y, idx, srt, n_classes, max_depth, criterion, flag):
    """:func:`_cart_tests_sorted_one` for a depth-first CART, grown by :func:`_grow_levels` (``srt`` is
    only read)."""
    m = idx.shape[0]
    xc, yc, total, xlogx = _state_arrays(X, y, idx, n_classes, criterion)
    if max_depth < 1 or total.max() == m:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)  # a leaf, as cart._grow leaves it
    f0, _, t0, _, _, _ = _root_split(xc, yc, srt, total, criterion, xlogx)
    if f0 < 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    feat, thr, order, _, _ = _grow_levels(
        xc, yc, srt, n_classes, max_depth, criterion, xlogx, f0, t0, _ZERO, _ZERO, np.False_, flag
    )
    return _dedupe(feat[order], thr[order], order.shape[0])


@njit(nogil=True, cache=True)
def _last_split(X, y, idx, srt, n_classes, max_depth, max_leaves, greedy_only, criterion, beat):
    """:func:`last_depth_split_sorted` for one impurity; also returns the fewest errors of any threshold."""
    xc, yc, total, xlogx = _state_arrays(X, y, idx, n_classes, criterion)
    bf, pos0, bt, bel, ber, bound = _root_split(xc, yc, srt, total, criterion, xlogx)
    if bound >= beat or bf < 0:
        return -1, 0.0, 0, 0, False, bound
    if greedy_only or bel + ber == bound:
        return bf, bt, bel, ber, False, bound

    if max_leaves <= 0:
        # the first split in preorder with the fewest errors
        feat, thr, order, e_l, e_r = _grow_levels(
            xc, yc, srt, n_classes, max_depth, criterion, xlogx, bf, bt, bel, ber, np.True_, np.zeros(1, dtype=np.int64)
        )
        best = order[0]
        for q in order:
            if e_l[q] + e_r[q] < e_l[best] + e_r[best]:
                best = q
        return feat[best], thr[best], e_l[best], e_r[best], True, bound
    return _grow_best_first(
        xc, yc, srt, n_classes, max_depth, max_leaves, criterion, xlogx, bf, pos0, bt, bel, ber, bound
    )


@njit(nogil=True, cache=True)
def _grow_best_first(xc, yc, srt, n_classes, max_depth, max_leaves, criterion, xlogx, bf, pos0, bt, bel, ber, bound):
    """The fewest-errors test of a best-first CART with ``max_leaves`` leaves, grown as :func:`cart._grow`
    grows it (the open node with the largest gain next) one split at a time, until a split reaches
    ``bound``.  The root split ``x[bf] <= bt`` sends its first ``pos0`` rows (in bf's order) left.
    Returns ``feature, threshold, errors_left, errors_right, True, bound``."""
    m = yc.shape[0]
    srt = srt.copy()  # reordered by the growth; the caller's order stays intact
    xs, ys = sorted_copies(xc, yc, srt)
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
    cl = np.zeros(n_classes, dtype=np.int64)
    cr = np.zeros(n_classes, dtype=np.int64)
    n_end[0] = m
    n_nodes = np.int64(1)
    one = np.int64(1)  # min_leaf
    _open_node(_ZERO, ys, n_start, n_end, n_depth, value, s_feat, s_gain, done, n_classes, one, criterion, max_depth, m)
    record_split(_ZERO, bf, pos0, bt, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, criterion, m)
    done[0] = True
    open_[0] = True
    best = bel + ber
    splits_left = max_leaves - 1
    while splits_left > 0:
        k = next_open_node(
            open_, done, n_nodes, xs, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, one,
            criterion, m, cl, cr, xlogx,
        )  # fmt: skip
        if k < 0:
            break
        open_[k] = False
        f = s_feat[k]
        if f < 0:
            continue
        splits_left -= 1
        if k > 0:
            # score this split on all the state's rows
            el, er = _split_errors(xc, yc, f, s_thr[k], n_classes, cl, cr)
            if el + er < best:
                best = el + er
                bf = f
                bt = s_thr[k]
                bel = el
                ber = er
                if best == bound:
                    break
        if splits_left == 0:
            break  # no more splits: no need to sort the children's rows
        _partition(srt, xs, ys, n_start[k], n_end[k], f, s_pos[k], mark, bi, bx, by)
        n_nodes = open_children(
            k, n_nodes, open_, ys, n_start, n_end, n_depth, value, s_feat, s_pos, s_gain, done, n_classes, one,
            criterion, max_depth, m,
        )  # fmt: skip
    return bf, bt, bel, ber, True, bound
