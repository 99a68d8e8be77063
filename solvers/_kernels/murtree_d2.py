"""MurTree's specialised depth-2 solver: optimal trees with 1, 2 and 3 splits by frequency counting.

The dataset's rows (sorted by class) are packed into per-feature bitsets, one block of 64-bit words
per class, so the class counts of a single test and of a pair of tests are popcounts of ANDed words:
``O(f * m)`` to pack and ``O(f^2 * m / 64)`` for all pairs.  From these counts every quadrant of a
depth-2 tree is known (inclusion-exclusion), and the best left and right child of each root is found
in ``O(f^2 * C)``.  The three optima (budgets 1, 2, 3) are stored in the cache at once.

Costs are numbers of errors, or weighted costs with a 2-D ``cm`` (see ``murtree_cache.leaf_cost``: the
counts are then per group of rows of one class and weight, each group a class block of the bitsets).  Ties go
to fewer splits: a candidate must be strictly better, and a larger budget falls back to the smaller budget's
tree when it is not strictly better.
"""

import numpy as np
from numba import njit, uint64

from .murtree_cache import (
    _ONE,
    archive_put,
    cache_put,
    costs2,
    leaf_cost,
    leaf_cost2,
    pen_big,
    popcount64,
    two_classes,
)


@njit(nogil=True, cache=True, inline="always")
def _better(best, k, e):
    if e < best[k]:
        best[k] = e


@njit(nogil=True, cache=True)
def _children(S, P, act, n_act, ccount, min_leaf, tmp, best_l, best_r, cm):
    """Fewest errors of a one-split left (test 0) and right (test 1) child of every root test.

    Each pair ``a < b`` gives the four quadrants once; they serve root ``a`` split again by ``b``
    and root ``b`` split again by ``a``.
    """
    C = ccount.shape[0]
    q00 = tmp[0]
    q01 = tmp[1]
    q10 = tmp[2]
    q11 = tmp[3]
    for a in range(n_act):
        f1 = act[a]
        for b in range(a + 1, n_act):
            f2 = act[b]
            n00 = 0
            n01 = 0
            n10 = 0
            n11 = 0
            for c in range(C):
                p = np.int64(P[c, a, b])
                s1 = S[f1, c]
                s2 = S[f2, c]
                q11[c] = p
                q10[c] = s1 - p
                q01[c] = s2 - p
                q00[c] = ccount[c] - s1 - s2 + p
                n00 += q00[c]
                n01 += q01[c]
                n10 += q10[c]
                n11 += q11[c]
            ok00 = n00 >= min_leaf
            ok01 = n01 >= min_leaf
            ok10 = n10 >= min_leaf
            ok11 = n11 >= min_leaf
            e00 = leaf_cost(q00, C, cm)
            e01 = leaf_cost(q01, C, cm)
            e10 = leaf_cost(q10, C, cm)
            e11 = leaf_cost(q11, C, cm)
            if ok00 and ok01:
                _better(best_l, a, e00 + e01)
            if ok10 and ok11:
                _better(best_r, a, e10 + e11)
            if ok00 and ok10:
                _better(best_l, b, e00 + e10)
            if ok01 and ok11:
                _better(best_r, b, e01 + e11)


@njit(nogil=True, cache=True, inline="always")
def _mn(x, y):
    return x if x < y else y


@njit(nogil=True, cache=True)
def _children2(S, P, act, n_act, ccount, min_leaf, best_l, best_r, sa, cm):
    """:func:`_children` for two groups (an error is the smaller count; weighted, the cheaper of two classes).

    The pair counts are mirrored into the lower triangle (the diagonal holds the single counts: a test
    splitting its own side leaves an empty leaf, never a candidate), so that every root reads its own row
    with reductions only: the loop then vectorises (3x faster than one pass over ``a < b`` that also writes
    the other root's best, and that half of a depth-2 solve).  A child too small for ``min_leaf`` costs
    ``pen`` or more (see ``murtree_cache.pen_big``).
    """
    pen, big = pen_big(cm)
    q = costs2(cm)  # the four costs as scalars: the loop below stays vectorisable when weighted
    n0 = ccount[0]
    n1 = ccount[1]
    P0 = P[0]
    P1 = P[1]
    sa0 = sa[0]
    sa1 = sa[1]
    for b in range(n_act):
        sa0[b] = S[act[b], 0]
        sa1[b] = S[act[b], 1]
    for a in range(n_act):
        P0[a, a] = sa0[a]
        P1[a, a] = sa1[a]
        for b in range(a + 1, n_act):
            P0[b, a] = P0[a, b]
            P1[b, a] = P1[a, b]
    for a in range(n_act):
        s10 = sa0[a]
        s11 = sa1[a]
        pa0 = P0[a]
        pa1 = P1[a]
        bla = pen
        bra = pen
        for b in range(n_act):
            p0 = np.int64(pa0[b])  # test a = 1, test b = 1
            p1 = np.int64(pa1[b])
            s20 = sa0[b]
            s21 = sa1[b]
            a0 = s10 - p0  # test a = 1, test b = 0
            a1 = s11 - p1
            b0 = s20 - p0  # test a = 0, test b = 1
            b1 = s21 - p1
            z0 = n0 - s10 - s20 + p0  # both 0
            z1 = n1 - s11 - s21 + p1
            x00 = pen * np.int64(z0 + z1 < min_leaf)
            x01 = pen * np.int64(b0 + b1 < min_leaf)
            x10 = pen * np.int64(a0 + a1 < min_leaf)
            x11 = pen * np.int64(p0 + p1 < min_leaf)
            bla = _mn(bla, leaf_cost2(z0, z1, cm, q) + x00 + leaf_cost2(b0, b1, cm, q) + x01)
            bra = _mn(bra, leaf_cost2(a0, a1, cm, q) + x10 + leaf_cost2(p0, p1, cm, q) + x11)
        best_l[a] = bla if bla < pen else big
        best_r[a] = bra if bra < pen else big


@njit(nogil=True, cache=True)
def pack_pairs(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, flag, pairs):
    """Class counts of every test (``S[f, c]``) and of every pair of active tests (``P[c, a, b]``, ``a < b``
    by position in ``act``) on the rows ``inst[:m]``; returns the number of active tests.

    A test is active when both its sides hold ``min_leaf`` rows (a constant test is never a split).  The
    rows (sorted by class) are packed into bitsets, word-major (``bits[w, f]``: rows of word ``w``, test
    ``f``) so that the inner loops run over tests, contiguous; one block of words per class.  Arrays are
    indexed in 2-D rather than through row views: a view in an inner loop costs an atomic reference count.
    Shared by MurTree's depth-2 solver and the Rashomon enumeration (:mod:`.rashomon`).

    ``pairs == 0`` stops after the single counts (a depth-1 dataset needs no pair).  The pair counts cost
    ``C * n_act^2 / 2`` word operations (seconds with thousands of tests), so the stop flag is read once per
    64-row word of the count (and per row of the table while zeroing it); a stop returns -1 and leaves ``P``
    unusable.
    """
    F = XR.shape[1]
    C = ccount.shape[0]
    w = 0
    k0 = 0
    for c in range(C):
        end = k0 + ccount[c]
        while k0 < end:
            stop = min(k0 + 64, end)
            for f in range(F):
                bits[w, f] = 0
            for j in range(stop - k0):
                i = inst[k0 + j]
                sh = uint64(j)
                for f in range(F):
                    bits[w, f] |= uint64(XR[i, f]) << sh
            w += 1
            k0 = stop
    W = w
    S[:, :] = 0
    w = 0
    for c in range(C):
        for _ in range((ccount[c] + 63) >> 6):
            for f in range(F):
                S[f, c] += popcount64(bits[w, f])
            w += 1
    n_act = np.int64(0)  # int64, not a literal: its callers compile once
    for f in range(F):
        tot = 0
        for c in range(C):
            tot += S[f, c]
        if tot >= min_leaf and m - tot >= min_leaf:
            act[n_act] = f
            n_act += 1
    if pairs == 0:
        return n_act
    for w in range(W):
        for a in range(n_act):
            bitsA[w, a] = bits[w, act[a]]
    w = 0
    for c in range(C):
        for a in range(n_act):
            if flag[0] != 0:
                return np.int64(-1)
            for b in range(a + 1, n_act):
                P[c, a, b] = 0
        for _ in range((ccount[c] + 63) >> 6):
            if flag[0] != 0:
                return np.int64(-1)
            for a in range(n_act):
                x = bitsA[w, a]
                if x == 0:
                    continue
                # unsigned bounds: numba then skips its negative-index wraparound and the loop vectorises
                # (vpopcntq; 2-3x faster)
                for b in range(uint64(a + 1), uint64(n_act)):
                    P[c, a, b] += np.int32(popcount64(x & bitsA[w, b]))
            w += 1
    return n_act


@njit(nogil=True, cache=True)
def depth2(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, tmp, flag, pairs, cm):
    """Optimal errors and roots for budgets 1, 2 and 3 on the dataset ``inst[:m]``.

    Parameters
    ----------
    XR : uint8 (N, F)
        Row-major 0/1 matrix; rows sorted by class.
    inst : int32 (>= m,)
        Ascending row indices of the dataset.
    ccount : int64 (C,)
        Class counts of the dataset.
    bits, bitsA, S, P, act, tmp : workspaces
        ``(W, F)`` uint64 twice (``W >= N/64 + C``), ``(F, C)`` int64, ``(C, F, F)`` int32, ``(F,)``
        int64 and ``(4, C)`` int64.
    flag : int64 (1,)
        The Control's stop flag, read while the pairs are counted.
    pairs : int64
        0 for a depth-1 dataset: only budget 1 is solved (rows 2 and 3 copy it), without pair counts.
    cm : int64 (0,), or int64 or float64 (G, k)
        The objective: the plain placeholder, or the weighted cost of each group per predicted class.

    Returns
    -------
    res : (3, 3) of ``cm``'s type
        Row ``b - 1`` holds ``(errors, root feature or -1, left budget)`` of the best tree with at most
        ``b`` splits; errors -1 when the stop flag ended the pair counts.
    """
    C = ccount.shape[0]
    n_act = pack_pairs(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, flag, pairs)
    leaf = leaf_cost(ccount, C, cm)
    res = np.empty((3, 3), dtype=cm.dtype)
    for b in range(3):
        res[b, 0] = leaf if n_act >= 0 else -1
        res[b, 1] = -1
        res[b, 2] = 0
    if n_act < 0:
        return res
    cnt_l = np.empty(C, dtype=np.int64)
    cnt_r = np.empty(C, dtype=np.int64)
    pen, big = pen_big(cm)
    bl = np.empty(n_act, dtype=cm.dtype)
    br = np.empty(n_act, dtype=cm.dtype)
    bl[:] = big
    br[:] = big
    if pairs == 0:
        pass  # a depth-1 dataset: no child can split (bl, br stay _BIG)
    elif C == 2 and two_classes(cm):
        _children2(S, P, act, n_act, ccount, min_leaf, bl, br, np.empty((2, n_act), dtype=np.int64), cm)
    else:
        _children(S, P, act, n_act, ccount, min_leaf, tmp, bl, br, cm)
    for a in range(n_act):
        f1 = act[a]
        for c in range(C):
            cnt_r[c] = S[f1, c]
            cnt_l[c] = ccount[c] - S[f1, c]
        err_l = leaf_cost(cnt_l, C, cm)
        err_r = leaf_cost(cnt_r, C, cm)
        best_l = bl[a]
        best_r = br[a]
        c1 = err_l + err_r
        if c1 < res[0, 0]:
            res[0, 0] = c1
            res[0, 1] = f1
            res[0, 2] = 0
        if best_l < big:
            c2 = best_l + err_r
            if c2 < res[1, 0]:
                res[1, 0] = c2
                res[1, 1] = f1
                res[1, 2] = 1
        if best_r < big:
            c2 = err_l + best_r
            if c2 < res[1, 0]:
                res[1, 0] = c2
                res[1, 1] = f1
                res[1, 2] = 0
            if best_l < big:
                c3 = best_l + best_r
                if c3 < res[2, 0]:
                    res[2, 0] = c3
                    res[2, 1] = f1
                    res[2, 2] = 1
    # a larger budget never does worse: fall back to the smaller budget's tree unless strictly beaten.
    # Its children are then leaf-optimal for the extra budget (else the larger tree would be strictly
    # better), so (feature, n_left) with n_left + n_right = b - 1 still rebuilds the same cost.
    if res[0, 0] <= res[1, 0]:
        res[1, 0] = res[0, 0]
        res[1, 1] = res[0, 1]
        res[1, 2] = 0
    if res[1, 0] <= res[2, 0]:
        res[2, 0] = res[1, 0]
        res[2, 1] = res[1, 1]
        res[2, 2] = 1
    return res


@njit(nogil=True, cache=True)
def depth2_store(
    XR,
    inst,
    m,
    ccount,
    min_leaf,
    bits,
    bitsA,
    S,
    P,
    act,
    tmp,
    keys,
    vals,
    meta,
    status,
    h1,
    h2,
    arch_inst,
    arch_m,
    arch_h,
    arch_lb,
    slot,
    flag,
    pairs,
    cm,
):
    """Run :func:`depth2` and store its optima in the cache and the similarity archive (budget 1 alone when
    ``pairs == 0``; nothing when the stop flag ended it)."""
    res = depth2(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, tmp, flag, pairs, cm)
    if res[0, 0] < 0:
        return res
    for b in range(1 if pairs == 0 else 3):
        d = 1 if b == 0 else 2
        cache_put(keys, vals, meta, status, h1, h2, d, b + 1, res[b, 0], _ONE, np.int64(res[b, 1]), np.int64(res[b, 2]))
        archive_put(arch_inst, arch_m, arch_h, arch_lb, slot, inst, m, h1, h2, d, b + 1, res[b, 0])
    return res
