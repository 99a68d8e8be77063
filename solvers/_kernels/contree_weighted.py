"""ConTree's weighted, cost-sensitive search: exact trees on raw numeric features for ``sum_i w[i] * C[y[i], yhat[i]]``.

A separate kernel so that the plain search (``contree.py``, integer error counts, its neighbour bound "a row moved
changes a tree's errors by at most one") stays exactly as it is.  The same dynamic program over (rows, remaining
depth), simpler:

* A node's rows are kept, at buffer level ``lvl``, as one list per feature sorted by that feature (``S[lvl, f, :m]``),
  partitioned stably into the next level for each child.  A split is identified by ``q``, the number of rows that go
  left; every boundary between two distinct values is a candidate, its threshold the midpoint of the two values.
* Costs are float64 sums of per-row costs ``RC[i, p] = w[i] * C[y[i], p]`` (whole numbers stay exact in float64 up to
  2**53, so integer weights need no path of their own).  A leaf costs ``min_p sum_i RC[i, p]``.
* Neighbour bound, weighted: adding row ``i`` to a set raises its optimum by at most ``rho[i] = max_p RC[i, p]``
  (the same tree, row ``i`` in some leaf) and removing it never raises it.  So a split at ``j`` to the right of an
  evaluated split ``q`` has a left child of at least ``L_q`` and a right child of at least ``R_q - (P[j] - P[q])``,
  ``P`` the prefix sums of ``rho`` along the feature's sorted list (mirrored to the left).  Each feature's
  positions are searched midpoint first between evaluated anchors; an interval whose bound reaches the node's best
  cost for every budget is skipped.
* Solved nodes of depth >= 2 are cached under two 64-bit Zobrist sums of their rows and their depth, with their
  choice (feature, threshold, children's budgets) per budget, from which the wrapper rebuilds the trees.

A node's value is a vector over budgets ``b = 0 .. kvec(d)`` (at most ``b`` splits; single-tree mode: index 1 is any
number of splits), every entry the cost of a tree that can be rebuilt.  When the control's flag is raised the search
stops: each node on the path keeps its best so far (cached as incomplete, ``cex = 2``, read only when rebuilding), so
a stopped run returns real trees, and its lower bound comes from the wrapper (nothing here is a proof then).
Return codes: 1 exact, 0 stopped, -1 cache table full (unwound; the wrapper grows it and searches again).

Missing values (NaN in ``X``, issue 49): a NaN has rank ``-1`` in ``RK``.  NaN sorts last, and partitions keep each
list's order, so in every feature's list of a node the rows present in that feature come first and its missing
rows form the list's tail.  A split is ``(feature, q, side)``: the first ``q`` present rows go left and the missing
block goes left (``side = 1``) or right (``side = 0``); the threshold is the midpoint as above.  A feature with gaps
at a node also offers ``q = mp`` (every present row, ``mp`` of them) with side 0: "present vs missing", its threshold
the largest present value at the node (``q = 0`` with side 1 is the same partition mirrored, so it is not tried).
Each side is searched as a feature of its own: the missing block stays on its side while the threshold moves, so the
neighbour bound holds unchanged (only present rows move; ``P`` sums over them).  On complete data there is one side
and no extra position: the search and its results are exactly those without this support.

Workspace ``W`` (a tuple, by position): 0 ranks ``RK`` int32 (p, n); 1 ``XT`` float64 (p, n); 2 ``RC`` float64
(n, k); 3 ``rho`` float64 (n,); 4, 5 Zobrist keys uint64 (n,); 6 ``S`` int32 (levels, p, n); 7 mark uint8 (n,);
8 cache keys uint64 (cap, 3); 9 cached costs float64 (cap, kb); 10 cached choices int64 (cap, 4, kb) (feature, left
budget, right budget, missing side); 11 cached thresholds float64 (cap, kb); 12 cache state uint8 (cap,) (0 empty,
1 exact, 2 incomplete); 13 ``meta`` int64 (entries, table full); 14 control flag; 15 control counters; 16 ``prm`` int64
(single, kcap, rebuilding, at the memory limit, stop after splits);
17 anchors' left-child costs float64 (levels, n, kb); 18 their right-child costs;
19 interval stack int64 (levels, STACK, 4); 20 positions int64 (levels, n); 21 penalty prefix float64 (levels, n+1);
22 class-cost scratch float64 (levels, 3, k); 23 budget scratch float64 (levels, 3, kb); 24 its arguments int64
(levels, 2, kb); 25 children's choices int64 (levels, 4, kb); 26 their thresholds float64 (levels, kb).
"""

import numpy as np
from numba import njit, uint64

from .contree import cache_find, cache_slot, kvec

STACK = 128  # midpoint-first DFS over one feature's positions: at most ~log2(rows) + 2 intervals pending
_INF = np.inf


@njit(nogil=True, cache=True, inline="always")
def _min_cost(v):
    best = v[0]
    for p in range(1, v.shape[0]):
        if v[p] < best:
            best = v[p]
    return best


@njit(nogil=True, cache=True)
def _combine_w(L, R, kc, kd, single, out, arg):
    """``out[b]`` (b >= 1): least cost with at most ``b`` splits of a split whose children have fronts L, R;
    ``arg[b]`` the left child's budget."""
    if single:
        out[1] = L[kc] + R[kc]
        arg[1] = kc
        return
    for b in range(1, kd + 1):
        best = _INF
        bi = 0
        rem = b - 1
        lo = rem - kc if rem > kc else 0
        hi = rem if rem < kc else kc
        for bl in range(lo, hi + 1):
            v = L[bl] + R[rem - bl]
            if v < best:
                best = v
                bi = bl
        out[b] = best
        arg[b] = bi


@njit(nogil=True, cache=True)
def _partition(S, lvl, m, p, mark, side):
    """The rows of level ``lvl`` with ``mark == side`` into level ``lvl + 1``, every feature's order kept."""
    for g in range(p):
        src = S[lvl, g]
        dst = S[lvl + 1, g]
        j = 0
        for t in range(m):
            r = src[t]
            if mark[r] == side:
                dst[j] = r
                j += 1


@njit(nogil=True, cache=True, inline="always")
def _present(RK, f, rows, m):
    """How many of the ``m`` rows of ``rows`` (a node's list sorted by ``f``) have ``f`` present: NaN rows are last."""
    mp = m
    while mp > 0 and RK[f, rows[mp - 1]] < 0:
        mp -= 1
    return mp


@njit(nogil=True, cache=True, inline="always")
def _two_leaves(pl, tot, k):
    a = pl[0]
    b = tot[0] - pl[0]
    for c in range(1, k):
        if pl[c] < a:
            a = pl[c]
        if tot[c] - pl[c] < b:
            b = tot[c] - pl[c]
    return a + b


@njit(nogil=True, cache=True)
def _stump(W, lvl, m, out, cf, ct, cl, cr, cm):
    """Depth one: the best single split over every feature, threshold and side of the missing rows (``out[1]``;
    ``out[0]`` is the leaf)."""
    RK, XT, RC, S = W[0], W[1], W[2], W[6]
    V = W[22]
    p = RK.shape[0]
    k = RC.shape[1]
    tot = V[lvl, 0]
    pl = V[lvl, 1]
    pm = V[lvl, 2]  # the present prefix plus the missing block (the left child when the missing rows go left)
    for f in range(p):
        rows = S[lvl, f]
        mp = _present(RK, f, rows, m)
        for c in range(k):
            pl[c] = 0.0
            pm[c] = 0.0
        for t in range(mp, m):
            r = rows[t]
            for c in range(k):
                pm[c] += RC[r, c]
        # the last present row closes "present vs missing" when the feature has gaps here
        for t in range(mp if mp < m else mp - 1):
            r = rows[t]
            for c in range(k):
                pl[c] += RC[r, c]
                pm[c] += RC[r, c]
            side = 0
            if t < mp - 1:
                s = rows[t + 1]
                if RK[f, r] == RK[f, s]:
                    continue
                v = _two_leaves(pl, tot, k)
                if mp < m:
                    v1 = _two_leaves(pm, tot, k)
                    if v1 < v:
                        v = v1
                        side = 1
                thr = 0.5 * (XT[f, r] + XT[f, s])
            else:
                v = _two_leaves(pl, tot, k)
                thr = XT[f, r]
            if v < out[1]:
                out[1] = v
                cf[1] = f
                ct[1] = thr
                cl[1] = 0
                cr[1] = 0
                cm[1] = side


@njit(nogil=True, cache=True)
def wsolve(W, lvl, m, d, out, cf, ct, cl, cr, cm):
    """The front of the node held at level ``lvl`` (``m`` rows) with remaining depth ``d``, into ``out[0..kd]``, and
    its choice per budget (``cf`` feature or -1 for a leaf, ``ct`` threshold, ``cl``/``cr`` children's budgets,
    ``cm`` 1 when the rows missing ``cf`` go left).
    Returns 1 exact, 0 stopped (best so far), -1 cache table full (unwinding)."""
    RK, XT, RC, rho, z1, z2, S, mark = W[0], W[1], W[2], W[3], W[4], W[5], W[6], W[7]
    keys, cval, cch, cthr, cex, meta, flag, counters, prm = W[8], W[9], W[10], W[11], W[12], W[13], W[14], W[15], W[16]
    AL, AR, STK, POS, PP, V, VB, VI, DC, DT = W[17], W[18], W[19], W[20], W[21], W[22], W[23], W[24], W[25], W[26]
    p = RK.shape[0]
    k = RC.shape[1]
    single = prm[0] != 0
    kd = kvec(d, single, prm[1])
    rows0 = S[lvl, 0]
    tot = V[lvl, 0]
    for c in range(k):
        tot[c] = 0.0
    for t in range(m):
        r = rows0[t]
        for c in range(k):
            tot[c] += RC[r, c]
    leaf = _min_cost(tot)
    for b in range(kd + 1):
        out[b] = leaf
        cf[b] = -1
        ct[b] = 0.0
        cl[b] = 0
        cr[b] = 0
        cm[b] = 0
    if d == 0 or kd == 0 or leaf <= 0.0 or m < 2:
        return 1
    counters[1] += 1
    if d == 1:
        _stump(W, lvl, m, out, cf, ct, cl, cr, cm)
        return 1
    h1 = uint64(0)
    h2 = uint64(0)
    for t in range(m):
        h1 += z1[rows0[t]]
        h2 += z2[rows0[t]]
    s = cache_find(keys, h1, h2, d)
    if s >= 0 and (cex[s] == 1 or prm[2] != 0):
        for b in range(kd + 1):
            out[b] = cval[s, b]
            cf[b] = cch[s, 0, b]
            cl[b] = cch[s, 1, b]
            cr[b] = cch[s, 2, b]
            cm[b] = cch[s, 3, b]
            ct[b] = cthr[s, b]
        return 1 if cex[s] == 1 else 0
    if flag[0] != 0:
        return 0
    kc = kvec(d - 1, single, prm[1])
    lbv = VB[lvl, 0]
    comb = VB[lvl, 1]
    arg = VI[lvl, 0]
    arg2 = VI[lvl, 1]
    pos = POS[lvl]
    P = PP[lvl]
    stk = STK[lvl]
    code = 1
    mp = m  # the current feature's present rows and threshold positions, from its side-0 pass
    nbnd = 0
    for fs in range(2 * p):
        if code != 1:
            break
        # each feature once with its missing rows right (side 0), then, if it has gaps here, once with them left
        f = fs >> 1
        side = fs & 1
        rows = S[lvl, f]
        if side == 0:
            mp = _present(RK, f, rows, m)
            nbnd = 0
            P[0] = 0.0
            for t in range(mp):
                P[t + 1] = P[t] + rho[rows[t]]
                if t > 0 and RK[f, rows[t - 1]] != RK[f, rows[t]]:
                    pos[nbnd] = t
                    nbnd += 1
            npos = nbnd
            if 0 < mp < m:
                pos[npos] = mp  # present vs missing
                npos += 1
        elif mp == m:
            continue
        else:
            npos = nbnd  # the same thresholds; present vs missing mirrored is the side-0 split at mp
        mm = (m - mp) * side  # missing rows that go left
        if npos == 0:
            continue
        top = 0
        stk[0, 0] = 0
        stk[0, 1] = npos - 1
        stk[0, 2] = -1
        stk[0, 3] = -1
        top = 1
        while top > 0:
            top -= 1
            i0 = stk[top, 0]
            i1 = stk[top, 1]
            a = stk[top, 2]
            z = stk[top, 3]
            if i0 > i1:
                continue
            if a >= 0 or z >= 0:
                for b in range(1, kd + 1):
                    lbv[b] = 0.0
                if a >= 0:
                    # splits right of anchor a: its left child only grows, its right child loses rows
                    D = P[pos[i1]] - P[pos[a]]
                    for b in range(kc + 1):
                        VB[lvl, 2, b] = max(AR[lvl, a, b] - D, 0.0)
                    _combine_w(AL[lvl, a], VB[lvl, 2], kc, kd, single, comb, arg2)
                    for b in range(1, kd + 1):
                        lbv[b] = max(lbv[b], comb[b])
                if z >= 0:
                    D = P[pos[z]] - P[pos[i0]]
                    for b in range(kc + 1):
                        VB[lvl, 2, b] = max(AL[lvl, z, b] - D, 0.0)
                    _combine_w(VB[lvl, 2], AR[lvl, z], kc, kd, single, comb, arg2)
                    for b in range(1, kd + 1):
                        lbv[b] = max(lbv[b], comb[b])
                prune = True
                for b in range(1, kd + 1):
                    if lbv[b] < out[b]:
                        prune = False
                        break
                if prune:
                    continue
            mid = (i0 + i1) // 2
            q = pos[mid]
            counters[3] += 1
            if prm[4] > 0 and counters[3] >= prm[4] and flag[0] == 0:
                flag[0] = 2  # a stop after a fixed number of splits (tests: a stopped run that is reproducible)
            if lvl == 0:
                counters[0] += 1
            # left child: the first q rows of f's list, and its missing tail on side 1
            for t in range(m):
                mark[rows[t]] = 1 if t < q else (side if t >= mp else 0)
            _partition(S, lvl, m, p, mark, 1)
            dc = DC[lvl + 1]
            rc = wsolve(W, lvl + 1, q + mm, d - 1, AL[lvl, mid], dc[0], DT[lvl + 1], dc[1], dc[2], dc[3])
            if rc < 0:
                return -1
            for t in range(m):  # the left child's search re-marked its own rows
                mark[rows[t]] = 1 if t < q else (side if t >= mp else 0)
            _partition(S, lvl, m, p, mark, 0)
            rc2 = wsolve(W, lvl + 1, m - q - mm, d - 1, AR[lvl, mid], dc[0], DT[lvl + 1], dc[1], dc[2], dc[3])
            if rc2 < 0:
                return -1
            _combine_w(AL[lvl, mid], AR[lvl, mid], kc, kd, single, comb, arg)
            thr = 0.5 * (XT[f, rows[q - 1]] + XT[f, rows[q]]) if q < mp else XT[f, rows[mp - 1]]
            for b in range(1, kd + 1):
                if comb[b] < out[b]:
                    out[b] = comb[b]
                    cf[b] = f
                    ct[b] = thr
                    cl[b] = arg[b]
                    cr[b] = kc if single else b - 1 - arg[b]
                    cm[b] = side
            for b in range(1, kd + 1):  # at most b splits: a tree with fewer fits (ties: fewer splits)
                if out[b - 1] <= out[b]:
                    out[b] = out[b - 1]
                    cf[b] = cf[b - 1]
                    ct[b] = ct[b - 1]
                    cl[b] = cl[b - 1]
                    cr[b] = cr[b - 1]
                    cm[b] = cm[b - 1]
            if rc == 0 or rc2 == 0 or flag[0] != 0:
                code = 0
                break
            if top + 2 > stk.shape[0]:
                return -1  # cannot happen (bisection depth); unwinding is safe
            stk[top, 0] = mid + 1
            stk[top, 1] = i1
            stk[top, 2] = mid
            stk[top, 3] = z
            stk[top + 1, 0] = i0
            stk[top + 1, 1] = mid - 1
            stk[top + 1, 2] = a
            stk[top + 1, 3] = mid
            top += 2
    # cache: exact entries for the search, a stopped node's best so far for rebuilding only
    if meta[0] * 2 >= keys.shape[0]:
        if code == 1 and prm[3] == 0:
            meta[1] = 1
            return -1
        return code
    s = cache_slot(keys, h1, h2, d)
    if keys[s, 2] == 0:
        meta[0] += 1
    keys[s, 0] = h1
    keys[s, 1] = h2
    keys[s, 2] = uint64(d + 1)
    for b in range(kd + 1):
        cval[s, b] = out[b]
        cch[s, 0, b] = cf[b]
        cch[s, 1, b] = cl[b]
        cch[s, 2, b] = cr[b]
        cch[s, 3, b] = cm[b]
        cthr[s, b] = ct[b]
    cex[s] = 1 if code == 1 else 2
    counters[2] = meta[0]
    return code


@njit(nogil=True, cache=True)
def wrehash(keys, cval, cch, cthr, cex, nkeys, ncval, ncch, ncthr, ncex):
    """Every entry of a full cache table into a larger one."""
    for s in range(keys.shape[0]):
        if keys[s, 2] != 0:
            t = cache_slot(nkeys, keys[s, 0], keys[s, 1], np.int64(keys[s, 2]) - 1)
            nkeys[t, :] = keys[s, :]
            ncval[t, :] = cval[s, :]
            ncch[t, :, :] = cch[s, :, :]
            ncthr[t, :] = cthr[s, :]
            ncex[t] = cex[s]
