"""MurTree's specialised depth-2 solver: optimal trees with 1, 2 and 3 splits by frequency counting.

The dataset's rows (sorted by class) are packed into per-feature bitsets, one block of 64-bit words
per class, so the class counts of a single test and of a pair of tests are popcounts of ANDed words:
``O(f * m)`` to pack and ``O(f^2 * m / 64)`` for all pairs.  From these counts every quadrant of a
depth-2 tree is known (inclusion-exclusion), and the best left and right child of each root is found
in ``O(f^2 * C)``.  The three optima (budgets 1, 2, 3) are stored in the cache at once.

Costs are numbers of errors.  Ties go to fewer splits: a candidate must be strictly better, and a
larger budget falls back to the smaller budget's tree when it is not strictly better.
"""

import numpy as np
from numba import njit, uint64

from solvers._kernels.murtree_cache import archive_put, cache_put, popcount64

_BIG = np.int64(1) << 62


@njit(nogil=True, cache=True, inline="always")
def _err(counts, C):
    tot = 0
    mx = 0
    for c in range(C):
        v = counts[c]
        tot += v
        if v > mx:
            mx = v
    return tot - mx


@njit(nogil=True, cache=True)
def _children(S, P, act, n_act, a, ccount, min_leaf, tmp):
    """Fewest errors of a one-split left (test a = 0) and right (test a = 1) child, any number of classes."""
    C = ccount.shape[0]
    LL = tmp[0]
    LR = tmp[1]
    RL = tmp[2]
    RR = tmp[3]
    f1 = act[a]
    best_l = _BIG
    best_r = _BIG
    for b in range(n_act):
        if b == a:
            continue
        f2 = act[b]
        nll = 0
        nlr = 0
        nrl = 0
        nrr = 0
        for c in range(C):
            p = P[c, a, b]
            s1 = S[f1, c]
            s2 = S[f2, c]
            RR[c] = p
            RL[c] = s1 - p
            LR[c] = s2 - p
            LL[c] = ccount[c] - s1 - s2 + p
            nll += LL[c]
            nlr += LR[c]
            nrl += RL[c]
            nrr += RR[c]
        if nll >= min_leaf and nlr >= min_leaf:
            e = _err(LL, C) + _err(LR, C)
            if e < best_l:
                best_l = e
        if nrl >= min_leaf and nrr >= min_leaf:
            e = _err(RL, C) + _err(RR, C)
            if e < best_r:
                best_r = e
    return best_l, best_r


@njit(nogil=True, cache=True)
def _children2(S, P, act, n_act, a, ccount, min_leaf):
    """:func:`_children` for two classes (an error is the smaller class count)."""
    f1 = act[a]
    n0 = ccount[0]
    n1 = ccount[1]
    s10 = S[f1, 0]
    s11 = S[f1, 1]
    best_l = _BIG
    best_r = _BIG
    for b in range(n_act):
        if b == a:
            continue
        f2 = act[b]
        p0 = np.int64(P[0, a, b])
        p1 = np.int64(P[1, a, b])
        s20 = S[f2, 0]
        s21 = S[f2, 1]
        rr0, rr1 = p0, p1
        rl0, rl1 = s10 - p0, s11 - p1
        lr0, lr1 = s20 - p0, s21 - p1
        ll0, ll1 = n0 - s10 - s20 + p0, n1 - s11 - s21 + p1
        if ll0 + ll1 >= min_leaf and lr0 + lr1 >= min_leaf:
            e = min(ll0, ll1) + min(lr0, lr1)
            if e < best_l:
                best_l = e
        if rl0 + rl1 >= min_leaf and rr0 + rr1 >= min_leaf:
            e = min(rl0, rl1) + min(rr0, rr1)
            if e < best_r:
                best_r = e
    return best_l, best_r


@njit(nogil=True, cache=True)
def depth2(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, tmp):
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

    Returns
    -------
    res : int64 (3, 3)
        Row ``b - 1`` holds ``(errors, root feature or -1, left budget)`` of the best tree with at most
        ``b`` splits.
    """
    F = XR.shape[1]
    C = ccount.shape[0]
    # pack the dataset into bitsets, word-major (bits[w, f]: rows of word w, test f) so that the inner
    # loops run over tests, contiguous and vectorisable; one block of words per class (rows are sorted)
    w = 0
    k0 = 0
    for c in range(C):
        end = k0 + ccount[c]
        while k0 < end:
            stop = min(k0 + 64, end)
            row = bits[w]
            row[:] = 0
            for j in range(stop - k0):
                xr = XR[inst[k0 + j]]
                sh = uint64(j)
                for f in range(F):
                    row[f] |= uint64(xr[f]) << sh
            w += 1
            k0 = stop
    W = w
    S[:, :] = 0
    w = 0
    for c in range(C):
        for _ in range((ccount[c] + 63) >> 6):
            row = bits[w]
            for f in range(F):
                S[f, c] += popcount64(row[f])
            w += 1
    n_act = 0
    for f in range(F):
        tot = 0
        for c in range(C):
            tot += S[f, c]
        # a test constant on the dataset, or leaving a side below min_leaf, is never a useful split
        if tot >= min_leaf and m - tot >= min_leaf:
            act[n_act] = f
            n_act += 1
    for w in range(W):
        for a in range(n_act):
            bitsA[w, a] = bits[w, act[a]]
    # pair counts over the active tests (by position in act), per class block
    P[:, :n_act, :n_act] = 0
    w = 0
    for c in range(C):
        Pc = P[c]
        for _ in range((ccount[c] + 63) >> 6):
            row = bitsA[w]
            for a in range(n_act):
                x = row[a]
                if x == 0:
                    continue
                Pa = Pc[a]
                for b in range(a + 1, n_act):
                    Pa[b] += popcount64(x & row[b])
            w += 1
        for a in range(n_act):
            for b in range(a + 1, n_act):
                Pc[b, a] = Pc[a, b]
    leaf = _err(ccount, C)
    res = np.empty((3, 3), dtype=np.int64)
    for b in range(3):
        res[b, 0] = leaf
        res[b, 1] = -1
        res[b, 2] = 0
    cnt_l = np.empty(C, dtype=np.int64)
    cnt_r = np.empty(C, dtype=np.int64)
    for a in range(n_act):
        f1 = act[a]
        for c in range(C):
            cnt_r[c] = S[f1, c]
            cnt_l[c] = ccount[c] - S[f1, c]
        err_l = _err(cnt_l, C)
        err_r = _err(cnt_r, C)
        if C == 2:
            best_l, best_r = _children2(S, P, act, n_act, a, ccount, min_leaf)
        else:
            best_l, best_r = _children(S, P, act, n_act, a, ccount, min_leaf, tmp)
        c1 = err_l + err_r
        if c1 < res[0, 0]:
            res[0, 0] = c1
            res[0, 1] = f1
            res[0, 2] = 0
        if best_l < _BIG:
            c2 = best_l + err_r
            if c2 < res[1, 0]:
                res[1, 0] = c2
                res[1, 1] = f1
                res[1, 2] = 1
        if best_r < _BIG:
            c2 = err_l + best_r
            if c2 < res[1, 0]:
                res[1, 0] = c2
                res[1, 1] = f1
                res[1, 2] = 0
            if best_l < _BIG:
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
def depth2_store(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, tmp,
                 keys, vals, meta, status, h1, h2, arch_inst, arch_m, arch_h, arch_lb, slot):
    """Run :func:`depth2` and store its three optima in the cache and the similarity archive."""
    res = depth2(XR, inst, m, ccount, min_leaf, bits, bitsA, S, P, act, tmp)
    for b in range(3):
        d = 1 if b == 0 else 2
        cache_put(keys, vals, meta, status, h1, h2, d, b + 1, res[b, 0], 1, res[b, 1], res[b, 2])
        archive_put(arch_inst, arch_m, arch_h, arch_lb, slot, inst, m, h1, h2, d, b + 1, res[b, 0])
    return res
