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
def depth2(XT, y, inst, m, ccount, min_leaf, bits, S, P, act, wk, bm, tmp):
    """Optimal errors and roots for budgets 1, 2 and 3 on the dataset ``inst[:m]``.

    Parameters
    ----------
    XT : uint8 (F, N)
        Feature-major 0/1 matrix; rows sorted by class.
    y : int64 (N,)
        Class of each row.
    inst : int32 (>= m,)
        Ascending row indices of the dataset.
    ccount : int64 (C,)
        Class counts of the dataset.
    bits, S, P, act, wk, bm, tmp : workspaces
        ``(F, W)`` uint64, ``(F, C)`` int64, ``(F, F, C)`` int64, ``(F,)`` int64, ``(N,)`` int64,
        ``(N,)`` uint64 and ``(4, C)`` int64.

    Returns
    -------
    res : int64 (3, 3)
        Row ``b - 1`` holds ``(cost, root feature or -1, left budget)`` of the best tree with at most
        ``b`` splits.
    """
    F = XT.shape[0]
    C = ccount.shape[0]
    # word offset of each class block, and each row's word / bit
    W = 0
    k = 0
    for c in range(C):
        for p in range(ccount[c]):
            wk[k] = W + (p >> 6)
            bm[k] = uint64(1) << uint64(p & 63)
            k += 1
        W += (ccount[c] + 63) >> 6
    n_act = 0
    for f in range(F):
        xf = XT[f]
        for w in range(W):
            bits[f, w] = 0
        for k in range(m):
            if xf[inst[k]]:
                bits[f, wk[k]] |= bm[k]
        # class counts of the single test: popcount per class block
        w0 = 0
        tot = 0
        for c in range(C):
            nw = (ccount[c] + 63) >> 6
            s = 0
            for w in range(w0, w0 + nw):
                s += popcount64(bits[f, w])
            S[f, c] = s
            tot += s
            w0 += nw
        # a test constant on the dataset, or leaving a side below min_leaf, is never a useful split
        if tot >= min_leaf and m - tot >= min_leaf:
            act[n_act] = f
            n_act += 1
    # pair counts over the active tests (by position in act)
    for a in range(n_act):
        fa = act[a]
        for b in range(a + 1, n_act):
            fb = act[b]
            w0 = 0
            for c in range(C):
                nw = (ccount[c] + 63) >> 6
                s = 0
                for w in range(w0, w0 + nw):
                    s += popcount64(bits[fa, w] & bits[fb, w])
                P[a, b, c] = s
                P[b, a, c] = s
                w0 += nw
    leaf = _err(ccount, C)
    res = np.empty((3, 3), dtype=np.int64)
    for b in range(3):
        res[b, 0] = leaf
        res[b, 1] = -1
        res[b, 2] = 0
    LL = tmp[0]
    LR = tmp[1]
    RL = tmp[2]
    RR = tmp[3]
    cnt_l = np.empty(C, dtype=np.int64)
    cnt_r = np.empty(C, dtype=np.int64)
    for a in range(n_act):
        f1 = act[a]
        for c in range(C):
            cnt_r[c] = S[f1, c]
            cnt_l[c] = ccount[c] - S[f1, c]
        err_l = _err(cnt_l, C)
        err_r = _err(cnt_r, C)
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
                p = P[a, b, c]
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
def depth2_store(XT, y, inst, m, ccount, min_leaf, bits, S, P, act, wk, bm, tmp,
                 keys, vals, meta, status, h1, h2, arch_inst, arch_m, arch_h, arch_lb, lvl):
    """Run :func:`depth2` and store its three optima in the cache and the similarity archive."""
    res = depth2(XT, y, inst, m, ccount, min_leaf, bits, S, P, act, wk, bm, tmp)
    for b in range(3):
        d = 1 if b == 0 else 2
        cache_put(keys, vals, meta, status, h1, h2, d, b + 1, res[b, 0], 1, res[b, 1], res[b, 2])
        archive_put(arch_inst, arch_m, arch_h, arch_lb, lvl, inst, m, h1, h2, d, b + 1, res[b, 0])
    return res
