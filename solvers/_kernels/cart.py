"""CART in numba: greedy tree growth, depth-first or best-first (pruning: ``cart_prune``).

Everything here is callable from other ``njit`` code (DPDT fits a small CART on every MDP state).

Split search follows scikit-learn's ``BestSplitter`` with ``max_features=None``: for every feature the
samples are scanned in increasing value order, a split is allowed between two *distinct* consecutive
values leaving at least ``min_samples_leaf`` samples on each side, the threshold is the midpoint
``x[p-1]/2 + x[p]/2`` (the lower value when the midpoint rounds up to the upper one), and the first
split with a strictly better impurity proxy wins (features in index order, so ties go to the lowest
feature index and then the lowest threshold).  Class counts are integers, so impurities are exact
functions of counts and the split proxy is updated in O(1) per sample.  Ties are decided exactly: two
gini proxies that are equal as fractions can round apart in floating point (8/4 + 26/6 and 14/6 + 16/4
are both 19/3 but differ in the last bit), so near-equal gini proxies are compared with integers;
entropy proxies within a relative 1e-10 count as equal (the earlier split stays).

Sorting: at the root of a fit each feature of the fit's rows is sorted once (``cart_build``: argsort;
``cart_build_ranked``: radix sort of precomputed global ranks, several times faster for the many small
fits of DPDT); a split then partitions every feature's order stably (O(p·n) per tree level), so a fit
costs O(p·n·log n + depth·p·n) and never touches rows outside ``idx``.
"""

import numpy as np
from numba import njit

GINI = 0
ENTROPY = 1
# Split proxies closer than this (relative) are ties, broken exactly for gini (integer counts) and in
# favour of the earlier split for entropy.  Below EXACT_TIE_MAX_N rows the exact gini comparison of
# near-equal proxies cannot overflow int64 (|difference| <= TIE_TOL * n * (n^2/4)^2 < 2^63).
TIE_TOL = 1e-10
EXACT_TIE_MAX_N = 500_000


@njit(nogil=True, cache=True)
def node_impurity(counts, criterion):
    """Gini or entropy (log2) impurity of one node's class counts, as scikit-learn computes it."""
    n = 0
    for c in range(counts.shape[0]):
        n += counts[c]
    if n == 0:
        return 0.0
    imp = 0.0
    if criterion == GINI:
        sq = 0.0
        for c in range(counts.shape[0]):
            f = counts[c] / n
            sq += f * f
        imp = 1.0 - sq
    else:
        for c in range(counts.shape[0]):
            if counts[c] > 0:
                f = counts[c] / n
                imp -= f * np.log(f) / np.log(2.0)
    return imp


@njit(nogil=True, cache=True)
def argsort_stable(x):
    """Positions of ``x`` (float64, no NaN) in increasing order, ties in index order (as a stable argsort).

    LSD radix sort on the order-preserving 64-bit keys of the values, 16 bits a pass (a pass is skipped when
    all keys share its digit, e.g. the low bits of values read as float32): on a million rows several times
    faster than a comparison sort, which made sorting the columns most of a large CART fit.
    """
    m = x.shape[0]
    if m < 4096:
        return np.argsort(x, kind="mergesort")
    xx = x + 0.0  # contiguous, and -0.0 becomes 0.0 (equal values must tie)
    raw = xx.view(np.uint64)
    top = np.uint64(1) << np.uint64(63)
    mask = np.uint64(0xFFFF)
    keys = np.empty(m, dtype=np.uint64)
    for i in range(m):
        k = raw[i]
        keys[i] = ~k if k & top else k | top
    src_o = np.arange(m, dtype=np.int64)
    dst_o = np.empty(m, dtype=np.int64)
    src_k = keys
    dst_k = np.empty(m, dtype=np.uint64)
    cnt = np.empty(65537, dtype=np.int64)
    for q in range(4):
        sh = np.uint64(16 * q)
        cnt[:] = 0
        for i in range(m):
            cnt[np.int64((src_k[i] >> sh) & mask) + 1] += 1
        if cnt.max() == m:
            continue  # every key has the same digit here
        for b in range(65536):
            cnt[b + 1] += cnt[b]
        for i in range(m):
            d = np.int64((src_k[i] >> sh) & mask)
            j = cnt[d]
            dst_o[j] = src_o[i]
            dst_k[j] = src_k[i]
            cnt[d] = j + 1
        src_o, dst_o = dst_o, src_o
        src_k, dst_k = dst_k, src_k
    return src_o


@njit(nogil=True, cache=True, inline="always")
def _midpoint(x0, x1):
    """scikit-learn's threshold: the midpoint, or the lower value when the midpoint rounds up to x1."""
    t = x0 / 2.0 + x1 / 2.0
    if t == x1 or t == np.inf or t == -np.inf:
        t = x0
    return t


@njit(nogil=True, cache=True, inline="always")
def gini_beats(sq_l, sq_r, nl, nr, n, best_f, best_proxy, best_num, best_den):
    """Whether the gini split with proxy ``sq_l / nl + sq_r / nr`` beats the best so far (``best_f`` -1:
    none yet) of a node of ``n`` rows, whose proxy is ``best_num / best_den`` exactly.

    Returns ``(better, proxy)``; the proxy is computed (two divisions) only for a split near the best.
    """
    # most splits are far below the best: rule them out by (sq_l * nr + sq_r * nl) / (nl * nr) without
    # dividing; the margin (2 TIE_TOL) dwarfs the rounding of both sides, so only splits the test below
    # rejects anyway are skipped (best_proxy -inf: nothing is)
    if float(sq_l) * nr + float(sq_r) * nl < best_proxy * (1.0 - 2 * TIE_TOL) * (float(nl) * nr):
        return False, 0.0
    proxy = sq_l / nl + sq_r / nr
    if proxy < best_proxy - TIE_TOL * best_proxy:
        return False, proxy
    # proxy = num / den exactly; near a tie the floats may round either way, so decide by the exact sign
    # of num * best_den - best_num * den (small there, so int64 arithmetic is exact)
    if best_f >= 0 and abs(proxy - best_proxy) <= TIE_TOL * proxy and n < EXACT_TIE_MAX_N:
        return (sq_l * nr + sq_r * nl) * best_den - best_num * (nl * nr) > 0, proxy
    return proxy > best_proxy, proxy


@njit(nogil=True, cache=True, inline="always")
def entropy_beats(proxy, best_f, best_proxy):
    """Whether an entropy split with ``proxy`` beats the best so far (``best_f`` -1: none yet)."""
    # entropy proxies are sums of logarithms: equal ones may differ by rounding (accumulated over the
    # scan), so a split must beat the best by more than that to count as better
    return best_f < 0 or proxy > best_proxy + TIE_TOL * abs(best_proxy)


@njit(nogil=True, cache=True)
def _best_split(xs, ys, start, end, total, n_classes, min_leaf, criterion, cl, cr, xlogx):
    """Best split of the node whose samples are ``[start, end)`` of every feature's sorted copy.

    ``xs[f]``/``ys[f]`` hold the values / labels in increasing order of feature ``f`` within each node;
    ``total`` are the node's class counts.  Returns ``(feature, pos, threshold)``, ``pos`` = samples going
    left; feature -1 when no valid split exists.
    """
    p = xs.shape[0]
    n = end - start
    best_f = -1
    best_pos = 0
    best_thr = 0.0
    best_proxy = -np.inf
    best_num = 0
    best_den = 1
    # gini proxy: sum_c cl^2 / nl + sum_c cr^2 / nr (maximised); entropy: sum xlogx(c) - xlogx(n)
    sq_tot = 0.0
    for c in range(n_classes):
        if criterion == GINI:
            sq_tot += total[c] * total[c]
        else:
            sq_tot += xlogx[total[c]]
    for f in range(p):
        if xs[f, end - 1] <= xs[f, start]:
            continue  # constant feature in this node
        for c in range(n_classes):
            cl[c] = 0
            cr[c] = total[c]
        lo = start + min_leaf - 1
        hi = end - min_leaf
        # one loop per criterion: keeps the hot loop free of branches on the criterion
        if criterion == GINI:
            sq_l = 0
            sq_r = 0
            for c in range(n_classes):
                sq_r += total[c] * total[c]
            for i in range(start, hi):
                k = ys[f, i]
                sq_l += 2 * cl[k] + 1
                sq_r -= 2 * cr[k] - 1
                cl[k] += 1
                cr[k] -= 1
                if i < lo or xs[f, i + 1] <= xs[f, i]:
                    continue
                nl = i + 1 - start
                nr = n - nl
                better, proxy = gini_beats(sq_l, sq_r, nl, nr, n, best_f, best_proxy, best_num, best_den)
                if better:
                    num = sq_l * nr + sq_r * nl
                    den = nl * nr
                    best_proxy = proxy
                    best_num = num
                    best_den = den
                    best_f = f
                    best_pos = nl
                    best_thr = _midpoint(xs[f, i], xs[f, i + 1])
        else:
            el = 0.0
            er = sq_tot
            for i in range(start, hi):
                k = ys[f, i]
                el += xlogx[cl[k] + 1] - xlogx[cl[k]]
                er += xlogx[cr[k] - 1] - xlogx[cr[k]]
                cl[k] += 1
                cr[k] -= 1
                if i < lo or xs[f, i + 1] <= xs[f, i]:
                    continue
                nl = i + 1 - start
                proxy = el - xlogx[nl] + er - xlogx[n - nl]
                if entropy_beats(proxy, best_f, best_proxy):
                    best_proxy = proxy
                    best_f = f
                    best_pos = nl
                    best_thr = _midpoint(xs[f, i], xs[f, i + 1])
    return best_f, best_pos, best_thr


@njit(nogil=True, cache=True)
def _partition(srt, xs, ys, start, end, f_split, pos, mark, bi, bx, by):
    """Stably reorder every feature's sorted copy in ``[start, end)`` so the left samples come first."""
    p = srt.shape[0]
    for i in range(start, end):
        mark[srt[f_split, i]] = i < start + pos
    for f in range(p):
        if f == f_split:
            continue  # already ordered by this feature: left side is the prefix
        a = start
        b = 0
        for i in range(start, end):
            s = srt[f, i]
            if mark[s]:
                srt[f, a] = s
                xs[f, a] = xs[f, i]
                ys[f, a] = ys[f, i]
                a += 1
            else:
                bi[b] = s
                bx[b] = xs[f, i]
                by[b] = ys[f, i]
                b += 1
        for j in range(b):
            srt[f, a + j] = bi[j]
            xs[f, a + j] = bx[j]
            ys[f, a + j] = by[j]


@njit(nogil=True, cache=True)
def _capacity(n, max_depth, max_leaves):
    cap = 2 * n - 1
    if max_leaves > 0 and 2 * max_leaves - 1 < cap:
        cap = 2 * max_leaves - 1
    if max_depth < 40:
        full = (1 << (max_depth + 1)) - 1
        if full < cap:
            cap = full
    return cap


@njit(nogil=True, cache=True)
def _gather(X, y, idx):
    m = idx.shape[0]
    p = X.shape[1]
    xc = np.empty((p, m), dtype=np.float64)
    yc = np.empty(m, dtype=np.int64)
    for i in range(m):
        r = idx[i]
        yc[i] = y[r]
        for f in range(p):
            xc[f, i] = X[r, f]
    return xc, yc


@njit(nogil=True, cache=True)
def cart_build(X, y, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion):
    """Grow a CART tree on the rows ``idx`` of ``(X, y)`` (see :func:`cart_build_stoppable`, never stopped)."""
    return cart_build_stoppable(
        X, y, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, np.zeros(1, dtype=np.int64)
    )


@njit(nogil=True, cache=True)
def cart_build_stoppable(X, y, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag):
    """Grow a CART tree on the rows ``idx`` of ``(X, y)``.

    Parameters
    ----------
    X : float64 (n, p)
    y : int64 (n,), classes ``0..n_classes-1``
    idx : int64 (m,), rows to fit on (m >= 1)
    n_classes : int
    max_depth : int
        Use a large number (e.g. ``2**31``) for no limit.
    max_leaves : int
        ``<= 0``: unlimited, depth-first growth; otherwise best-first growth (largest weighted impurity
        decrease first) until this many leaves, as scikit-learn's ``BestFirstTreeBuilder``.
    min_samples_leaf : int
    criterion : int
        0 = gini, 1 = entropy.
    flag : int64 (1,)
        A ``Control``'s stop flag, looked at between features while sorting and between nodes while
        growing: once it is set the tree grown so far is returned, its nodes not yet split being leaves.

    Returns
    -------
    feature, threshold, left, right : arrays (n_nodes,)
        Leaves have feature -1 and children -1.  Depth-first trees are numbered in preorder.
    value : int64 (n_nodes, n_classes)
        Class counts of the fit's rows at every node.
    n_nodes : int
    """
    xc, yc, srt, sorted_all = sorted_rows_stoppable(X, y, idx, flag)
    if not sorted_all:
        return _leaf_only(yc, n_classes)
    return _grow(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag)


@njit(nogil=True, cache=True)
def sorted_rows_stoppable(X, y, idx, flag):
    """The rows ``idx`` gathered feature by feature (``xc`` (p, m), ``yc``) and ``srt[f]``, their positions sorted
    by feature f: the start of a fit.  The last value is False when ``flag`` stopped the sorting."""
    xc, yc = _gather(X, y, idx)
    p = X.shape[1]
    srt = np.empty((p, idx.shape[0]), dtype=np.int64)
    for f in range(p):
        if flag[0] != 0:
            return xc, yc, srt, False
        order = argsort_stable(xc[f])
        for i in range(order.shape[0]):  # element by element, as in _preorder
            srt[f, i] = order[i]
    return xc, yc, srt, True


@njit(nogil=True, cache=True)
def _leaf_only(yc, n_classes):
    """The single-leaf tree of the rows ``yc`` (a fit stopped before its root was searched)."""
    value = np.zeros((1, n_classes), dtype=np.int64)
    for i in range(yc.shape[0]):
        value[0, yc[i]] += 1
    minus = np.full(1, -1, dtype=np.int64)
    return minus, np.zeros(1, dtype=np.float64), minus.copy(), minus.copy(), value, 1


@njit(nogil=True, cache=True)
def feature_ranks(X):
    """Global sort of every feature, shared by all the fits on subsets of ``X``.

    Returns int64 ``(2, p, n)``: ``[0, f, i]`` is the position of row ``i`` when rows are sorted by
    feature ``f`` (ties by row index), ``[1, f, j]`` the row at position ``j``.
    """
    ranks, _ = feature_ranks_stoppable(X, np.zeros(1, dtype=np.int64))
    return ranks


@njit(nogil=True, cache=True)
def feature_ranks_stoppable(X, flag):
    """:func:`feature_ranks`, looking at ``flag`` between features; returns ``(ranks, complete)`` (the
    ranks are unusable when not complete)."""
    n, p = X.shape
    ranks = np.empty((2, p, n), dtype=np.int64)
    for f in range(p):
        if flag[0] != 0:
            return ranks, False
        order = argsort_stable(X[:, f])
        for j in range(n):
            ranks[0, f, order[j]] = j
            ranks[1, f, j] = order[j]
    return ranks, True


@njit(nogil=True, cache=True)
def sorter(ranks, idx):
    """Scratch space for :func:`sort_positions` on the rows ``idx``.

    A subset holding at least a quarter of the rows is sorted by one sequential pass over the global
    order (marking its rows); a smaller one by radix sort of its ranks.
    """
    n = ranks.shape[2]
    m = idx.shape[0]
    n_bits = 1
    while (1 << n_bits) < n:
        n_bits += 1
    use_global = 4 * m >= n
    loc = np.full(n if use_global else 0, -1, dtype=np.int64)
    if use_global:
        for i in range(m):
            loc[idx[i]] = i
    return np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64), loc, n_bits, use_global


@njit(nogil=True, cache=True)
def sort_positions(ranks, idx, f, order, keys, buf, loc, n_bits, use_global):
    """Positions ``0..m-1`` of ``idx`` in increasing order of feature ``f`` (ties by row), into ``order``."""
    if use_global:
        g = ranks[1, f]
        c = 0
        for i in range(g.shape[0]):
            j = loc[g[i]]
            if j >= 0:
                order[c] = j
                c += 1
        return
    for i in range(idx.shape[0]):
        keys[i] = ranks[0, f, idx[i]]
    rank_order(keys, order, buf, n_bits)


@njit(nogil=True, cache=True)
def positions_from_sorted(sorted_rows, loc, order):
    """Positions of a row subset in the order of ``sorted_rows`` (a sorted superset, e.g. the parent
    state's rows sorted by one feature); ``loc[r]`` is the position of row ``r`` in the subset, -1 if absent."""
    c = 0
    for i in range(sorted_rows.shape[0]):
        j = loc[sorted_rows[i]]
        if j >= 0:
            order[c] = j
            c += 1


@njit(nogil=True, cache=True)
def rank_order(keys, order, buf, n_bits):
    """Positions ``0..m-1`` sorted by the distinct integer ``keys`` (< 2**n_bits) into ``order``.

    Insertion sort for short inputs, LSD radix sort (8 bits a pass) otherwise: much faster than a
    comparison argsort for the small row sets DPDT fits CART on.
    """
    m = keys.shape[0]
    for i in range(m):
        order[i] = i
    if m <= 48:
        for i in range(1, m):
            o = order[i]
            k = keys[o]
            j = i - 1
            while j >= 0 and keys[order[j]] > k:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = o
        return
    cnt = np.zeros(257, dtype=np.int64)
    src = order
    dst = buf
    in_order = True
    shift = 0
    while shift < n_bits:
        cnt[:] = 0
        for i in range(m):
            cnt[((keys[src[i]] >> shift) & 255) + 1] += 1
        for b in range(256):
            cnt[b + 1] += cnt[b]
        for i in range(m):
            o = src[i]
            b = (keys[o] >> shift) & 255
            dst[cnt[b]] = o
            cnt[b] += 1
        src, dst = dst, src
        in_order = not in_order
        shift += 8
    if not in_order:
        for i in range(m):
            order[i] = src[i]


@njit(nogil=True, cache=True)
def cart_build_ranked(X, y, ranks, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion):
    """:func:`cart_build` given ``ranks = feature_ranks(X)``: no comparison sort per fit."""
    return cart_build_ranked_stoppable(
        X, y, ranks, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, np.zeros(1, dtype=np.int64)
    )


@njit(nogil=True, cache=True)
def cart_build_ranked_stoppable(X, y, ranks, idx, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag):
    """:func:`cart_build_ranked` stopped by ``flag`` as :func:`cart_build_stoppable`."""
    xc, yc = _gather(X, y, idx)
    p = X.shape[1]
    m = idx.shape[0]
    srt = np.empty((p, m), dtype=np.int64)
    keys, buf, loc, n_bits, use_global = sorter(ranks, idx)
    for f in range(p):
        if flag[0] != 0:
            return _leaf_only(yc, n_classes)
        sort_positions(ranks, idx, f, srt[f], keys, buf, loc, n_bits, use_global)
    return _grow(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag)


@njit(nogil=True, cache=True)
def _grow(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag):
    """CART growth on gathered rows ``xc`` (p, m), ``yc`` with ``srt[f]`` = positions sorted by feature f;
    ``flag`` set: the tree so far, its nodes not yet split being leaves.  ``max_leaves <= 0``: depth-first
    (:func:`grow_depth_first`), else best-first (:func:`grow_best_first`); a caller that knows which calls it
    directly, so that numba compiles only that one."""
    if max_leaves <= 0:
        return grow_depth_first(xc, yc, srt, n_classes, max_depth, min_samples_leaf, criterion, flag)
    return grow_best_first(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag)


@njit(nogil=True, cache=True)
def grow_depth_first(xc, yc, srt, n_classes, max_depth, min_samples_leaf, criterion, flag):
    """:func:`_grow` without a leaf limit: every node split as deep as ``max_depth`` allows."""
    p, m = xc.shape
    min_leaf = max(1, min_samples_leaf)
    xlogx = xlogx_table(m, criterion)
    cl = np.zeros(n_classes, dtype=np.int64)
    cr = np.zeros(n_classes, dtype=np.int64)
    xs, ys = sorted_copies(xc, yc, srt)
    mark = np.zeros(m, dtype=np.bool_)
    bi = np.empty(m, dtype=np.int64)
    bx = np.empty(m, dtype=np.float64)
    by = np.empty(m, dtype=np.int64)

    cap = _capacity(m, max_depth, np.int64(0))
    feature = np.full(cap, -1, dtype=np.int64)
    threshold = np.zeros(cap, dtype=np.float64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    value = np.zeros((cap, n_classes), dtype=np.int64)
    # per-node segment of the sorted copies
    n_start = np.zeros(cap, dtype=np.int64)
    n_end = np.zeros(cap, dtype=np.int64)
    n_depth = np.zeros(cap, dtype=np.int64)

    n_nodes = np.int64(1)  # typed int64, not a literal: _preorder compiles once
    n_start[0] = 0
    n_end[0] = m
    # Level order (a node's id is its place in breadth-first order), so that a stopped fit has split
    # every node above some depth rather than one deep branch; renumbered in preorder at the end, as
    # scikit-learn numbers its depth-first trees.  A node's split depends only on its own rows (its
    # segment of the sorted copies), so the order does not change the tree.
    k = 0
    while k < n_nodes:
        if flag[0] != 0:
            break
        start = n_start[k]
        end = n_end[k]
        depth = n_depth[k]
        nmax = 0
        for i in range(start, end):
            value[k, ys[0, i]] += 1
        for c in range(n_classes):
            if value[k, c] > nmax:
                nmax = value[k, c]
        k += 1
        n = end - start
        if depth >= max_depth or n < 2 or n < 2 * min_leaf or nmax == n:
            continue
        f, pos, thr = _best_split(xs, ys, start, end, value[k - 1], n_classes, min_leaf, criterion, cl, cr, xlogx)
        if f < 0:
            continue
        feature[k - 1] = f
        threshold[k - 1] = thr
        _partition(srt, xs, ys, start, end, f, pos, mark, bi, bx, by)
        left[k - 1] = n_nodes
        right[k - 1] = n_nodes + 1
        n_start[n_nodes] = start
        n_end[n_nodes] = start + pos
        n_start[n_nodes + 1] = start + pos
        n_end[n_nodes + 1] = end
        n_depth[n_nodes] = depth + 1
        n_depth[n_nodes + 1] = depth + 1
        n_nodes += 2
    # stopped: the nodes not yet looked at stay leaves, with their class counts
    for j in range(k, n_nodes):
        for i in range(n_start[j], n_end[j]):
            value[j, ys[0, i]] += 1
    return _preorder(feature, threshold, left, right, value, n_nodes)


@njit(nogil=True, cache=True)
def grow_best_first(xc, yc, srt, n_classes, max_depth, max_leaves, min_samples_leaf, criterion, flag):
    """:func:`_grow` with ``max_leaves > 0``: the node with the largest impurity decrease split first."""
    p, m = xc.shape
    min_leaf = max(1, min_samples_leaf)
    xlogx = xlogx_table(m, criterion)
    cl = np.zeros(n_classes, dtype=np.int64)
    cr = np.zeros(n_classes, dtype=np.int64)
    xs, ys = sorted_copies(xc, yc, srt)
    mark = np.zeros(m, dtype=np.bool_)
    bi = np.empty(m, dtype=np.int64)
    bx = np.empty(m, dtype=np.float64)
    by = np.empty(m, dtype=np.int64)

    cap = _capacity(m, max_depth, max_leaves)
    feature = np.full(cap, -1, dtype=np.int64)
    threshold = np.zeros(cap, dtype=np.float64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    value = np.zeros((cap, n_classes), dtype=np.int64)
    # per-node segment and pending split (best-first evaluates a node's split when it is created)
    n_start = np.zeros(cap, dtype=np.int64)
    n_end = np.zeros(cap, dtype=np.int64)
    n_depth = np.zeros(cap, dtype=np.int64)
    s_feat = np.full(cap, -1, dtype=np.int64)
    s_pos = np.zeros(cap, dtype=np.int64)
    s_thr = np.zeros(cap, dtype=np.float64)
    s_gain = np.zeros(cap, dtype=np.float64)

    n_nodes = np.int64(1)  # typed int64, not a literal: the helpers it is passed to compile once
    n_start[0] = 0
    n_end[0] = m
    # Best-first with lazy split search: a node's gain is at most (n / m) * impurity, so a node is
    # only searched when that bound could make it the next one expanded.  The expansion order (largest
    # gain, ties to the lowest id) and so the tree are exactly those of eager search; the leaves of the
    # final tree are mostly never searched.
    done = np.zeros(cap, dtype=np.bool_)  # split searched: s_gain exact, else s_gain holds the bound
    root = np.int64(0)
    _open_node(
        root, ys, n_start, n_end, n_depth, value, s_feat, s_gain, done, n_classes, min_leaf, criterion, max_depth, m
    )
    open_ = np.zeros(cap, dtype=np.bool_)
    open_[0] = True
    splits_left = max_leaves - 1
    while splits_left > 0 and flag[0] == 0:  # stopped: the open nodes stay leaves
        k = next_open_node(
            open_, done, n_nodes, xs, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, min_leaf,
            criterion, m, cl, cr, xlogx,
        )  # fmt: skip
        if k < 0 or flag[0] != 0:
            break
        open_[k] = False
        if s_feat[k] < 0:
            continue
        splits_left -= 1
        feature[k] = s_feat[k]
        threshold[k] = s_thr[k]
        _partition(srt, xs, ys, n_start[k], n_end[k], s_feat[k], s_pos[k], mark, bi, bx, by)
        left[k] = n_nodes
        right[k] = n_nodes + 1
        n_nodes = open_children(
            k, n_nodes, open_, ys, n_start, n_end, n_depth, value, s_feat, s_pos, s_gain, done, n_classes, min_leaf,
            criterion, max_depth, m,
        )  # fmt: skip
    return (
        feature[:n_nodes].copy(),
        threshold[:n_nodes].copy(),
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        value[:n_nodes].copy(),
        n_nodes,
    )


@njit(nogil=True, cache=True)
def _preorder(feature, threshold, left, right, value, n_nodes):
    """The first ``n_nodes`` of a tree renumbered in preorder (a node, its left subtree, its right one)."""
    new_id = np.empty(n_nodes, dtype=np.int64)
    stack = np.empty(n_nodes + 1, dtype=np.int64)
    stack[0] = 0
    top = 1
    c = 0
    while top > 0:
        top -= 1
        k = stack[top]
        new_id[k] = c
        c += 1
        if feature[k] >= 0:
            stack[top] = right[k]
            stack[top + 1] = left[k]
            top += 2
    f2 = np.empty(n_nodes, dtype=np.int64)
    t2 = np.empty(n_nodes, dtype=np.float64)
    l2 = np.full(n_nodes, -1, dtype=np.int64)
    r2 = np.full(n_nodes, -1, dtype=np.int64)
    v2 = np.empty((n_nodes, value.shape[1]), dtype=np.int64)
    for k in range(n_nodes):
        j = new_id[k]
        f2[j] = feature[k]
        t2[j] = threshold[k]
        # element by element: an array assignment compiles numba's shape-mismatch error (string formatting)
        for c in range(value.shape[1]):
            v2[j, c] = value[k, c]
        if feature[k] >= 0:
            l2[j] = new_id[left[k]]
            r2[j] = new_id[right[k]]
    return f2, t2, l2, r2, v2, n_nodes


@njit(nogil=True, cache=True)
def xlogx_table(m, criterion):
    """``i log i`` for i = 0 .. m, the entropy scan's terms (zeros for gini, which does not read them)."""
    xlogx = np.zeros(m + 1, dtype=np.float64)
    if criterion != GINI:
        for i in range(1, m + 1):
            xlogx[i] = i * np.log(i)
    return xlogx


@njit(nogil=True, cache=True)
def sorted_copies(xc, yc, srt):
    """Contiguous copies of the rows in every feature's sorted order (``xs[f]``, ``ys[f]``): the split scan
    then reads memory sequentially."""
    p, m = xc.shape
    xs = np.empty((p, m), dtype=np.float64)
    ys = np.empty((p, m), dtype=np.int64)
    for f in range(p):
        for i in range(m):
            xs[f, i] = xc[f, srt[f, i]]
            ys[f, i] = yc[srt[f, i]]
    return xs, ys


@njit(nogil=True, cache=True)
def next_open_node(
    open_, done, n_nodes, xs, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, min_leaf, criterion,
    m_total, cl, cr, xlogx,
):  # fmt: skip
    """Best-first growth's next node: the open one with the largest gain (ties: the lowest id), its split
    searched; -1 when none is open.  A node not yet searched holds an upper bound of its gain
    (:func:`_open_node`): it is searched and the pick made again, so the order is that of eager search."""
    while True:
        k = np.int64(-1)
        for j in range(n_nodes):
            if open_[j] and (k < 0 or s_gain[j] > s_gain[k]):
                k = j
        if k < 0 or done[k]:
            return k
        _search_node(
            k, xs, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, min_leaf, criterion, m_total,
            cl, cr, xlogx,
        )  # fmt: skip
        done[k] = True


@njit(nogil=True, cache=True)
def open_children(
    k, n_nodes, open_, ys, n_start, n_end, n_depth, value, s_feat, s_pos, s_gain, done, n_classes, min_leaf, criterion,
    max_depth, m_total,
):  # fmt: skip
    """Open node ``k``'s two children as ids ``n_nodes`` (left: its first ``s_pos[k]`` rows) and
    ``n_nodes + 1`` once its rows are partitioned; returns the new node count."""
    start = n_start[k]
    for c in range(2):
        c_id = n_nodes + c
        n_start[c_id] = start if c == 0 else start + s_pos[k]
        n_end[c_id] = start + s_pos[k] if c == 0 else n_end[k]
        n_depth[c_id] = n_depth[k] + 1
        _open_node(
            c_id, ys, n_start, n_end, n_depth, value, s_feat, s_gain, done, n_classes, min_leaf, criterion, max_depth,
            m_total,
        )  # fmt: skip
        open_[c_id] = True
    return n_nodes + 2


@njit(nogil=True, cache=True)
def _open_node(
    k, ys, n_start, n_end, n_depth, value, s_feat, s_gain, done, n_classes, min_leaf, criterion, max_depth, m_total
):
    """Class counts of a new node and the upper bound ``(n / m) * impurity`` of its gain (0: cannot split)."""
    start = n_start[k]
    end = n_end[k]
    n = end - start
    nmax = 0
    for i in range(start, end):
        value[k, ys[0, i]] += 1
    for c in range(n_classes):
        if value[k, c] > nmax:
            nmax = value[k, c]
    s_feat[k] = -1
    s_gain[k] = 0.0
    done[k] = True
    if n_depth[k] >= max_depth or n < 2 or n < 2 * min_leaf or nmax == n:
        return
    # the gain below subtracts non-negative terms from the same impurity: never above this bound
    s_gain[k] = (n / m_total) * (node_impurity(value[k], criterion) - 0.0)
    done[k] = False


@njit(nogil=True, cache=True)
def _search_node(
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
    min_leaf,
    criterion,
    m_total,
    cl,
    cr,
    xlogx,
):
    """Best split of node ``k`` and scikit-learn's weighted impurity improvement as its gain."""
    s_feat[k] = -1
    s_gain[k] = 0.0
    f, pos, thr = _best_split(xs, ys, n_start[k], n_end[k], value[k], n_classes, min_leaf, criterion, cl, cr, xlogx)
    if f >= 0:
        record_split(
            k, f, pos, thr, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, criterion, m_total
        )


@njit(nogil=True, cache=True)
def record_split(
    k, f, pos, thr, ys, n_start, n_end, value, s_feat, s_pos, s_thr, s_gain, n_classes, criterion, m_total
):
    """Store node ``k``'s split (``pos`` of its rows go left) and scikit-learn's weighted impurity
    improvement as its gain."""
    start = n_start[k]
    n = n_end[k] - start
    s_feat[k] = f
    s_pos[k] = pos
    s_thr[k] = thr
    lc = np.zeros(n_classes, dtype=np.int64)
    for i in range(start, start + pos):
        lc[ys[f, i]] += 1
    rc = value[k] - lc
    imp = node_impurity(value[k], criterion)
    imp_l = node_impurity(lc, criterion)
    imp_r = node_impurity(rc, criterion)
    s_gain[k] = (n / m_total) * (imp - (pos / n) * imp_l - ((n - pos) / n) * imp_r)
