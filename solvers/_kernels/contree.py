"""ConTree kernels: optimal trees on raw numeric features by DP with branch-and-bound over thresholds.

Method (Briţa, van der Linden, Demirović, AAAI 2025), our own implementation
--------------------------------------------------------------------------
A node is a set of rows kept, at buffer level ``lvl``, as one list per feature sorted by that feature
(``S[lvl, f, :m]``).  Every boundary between two distinct values of a feature is a candidate split
``x <= t``; a split is identified by ``k``, the number of rows that go left.  ``solve`` returns the
node's *front*: ``ub[b]`` = fewest errors of a tree of the remaining depth with at most ``b`` splits
(``b = 0 .. kvec(d)``), and ``lb[b]`` a proven lower bound (equal to ``ub`` when the node is exact).
In single-tree mode ``kvec(d) = 1``: index 1 means "any number of splits".

Branch-and-bound over thresholds: for one feature the candidate positions form an interval that is
searched midpoint first.  An evaluated split at ``k_q`` with cost vector ``S_q`` bounds every other
split of the same feature: moving ``|k_j - k_q|`` rows from one child to the other raises no child's
optimum (a superset never has fewer errors) and lowers the other child's by at most one per row, so
``S_j[b] >= S_q[b] - |k_j - k_q|``.  Positions whose bound already reaches the node's best front for
every budget are cut off the interval's ends, the rest is split at the midpoint.  The bounds use each
child separately (the left child only grows to the right of an anchor, the right child only shrinks),
which prunes far more than the combined cost.
In front mode the one-split cost (two leaves) is known exactly for every position from one sweep.
A node of depth >= 3 in front mode solves its budget 2 (a split and one stump: depth two) first, as the depth-two
node over its rows, so only budgets >= 3 decide whether its splits are pruned (``prm[16]``).

Depth two: for a candidate root split every feature's sorted list is swept once, the rows routed to
the left or right child by a mark, with incremental class counts per child; a boundary whose stump
cannot beat the child's best (error changes by one per row) is skipped.  With two classes the sweep
first splits the list into the two children's (branch-free, with prefix counts) and then jumps over the
rows that cannot help, instead of routing and counting row by row.  Deeper nodes partition the
sorted lists into the next buffer level and recurse (left child first, then right into the same
level).  Solved nodes of depth >= 2 are cached under two 64-bit Zobrist sums of their rows and their
depth.  The first split searched at every node is the greedy (Gini) one, so a stopped run already
holds a CART-like tree and improves on it ("anytime"); the lower bound of a stopped node is the minimum
of what each unresolved interval and each split set aside can still reach.  Upper bounds are passed down
as per-budget cut-offs (``prm[3]``, ``_CUTS`` in the wrapper): a child only has to beat what its parent
still needs, plus the distance from its split to the far end of its interval (as ConTree), so one stopped
child still prunes its whole interval.  A node that stops at its cut-off is never reported exact: its
unsearched splits are bounded by the cut-off only (``_nothing_to_gain``).  Features are searched in Gini
order after a seed pass (one split per feature; at the root two: the Gini split, then the midpoint of its wider
half), so a stopped node bounds every feature; a deep root (``prm[13]``) seeds only once the run has evaluated many
splits, pausing the feature it is searching, so a run that is never stopped does not pay for the seeds.  A child
stopped mid-search keeps the larger of its own bound and the one its interval's anchors prove, so one stopped
child does not drop its split's bound to the sibling's.
A limited-discrepancy pass (``prm[14]`` >= 0, the wrapper's incumbent before the exact search) restricts the
nodes of depth >= 3 to their features' Gini splits within a discrepancy budget; it never caches those nodes and
its bounds are not proofs.
The wrapper pauses the exact search (``meta[1] = 2``, which unwinds it as a full cache table does) to run those
passes only when the search has not finished within a short effort, and once more for a bound on every root
feature (``root_block``: blocks of each feature's sorted list solved to a small cut-off; a split's child on that
feature contains every block on its side, and optima add up over disjoint rows), independent of the search's own.
Several threads can share one root (``prm[9]``), each on its own workspace, claiming features and sharing
their best costs.

Workspace ``ws`` (a tuple, unpacked by position): see ``solvers/contree.py``.
"""

import numpy as np
from numba import njit, uint64

BIG = 1 << 30
_MIX = np.uint64(0x9E3779B97F4A7C15)
STACK = 160  # DFS stack of threshold intervals per level (depth <= 2 log2(rows) + 2)


@njit(nogil=True, cache=True, inline="always")
def kvec(d, single, kcap):
    """Largest budget index of a node with remaining depth ``d``."""
    if d <= 0:
        return 0
    if single:
        return 1
    k = (1 << d) - 1
    return k if k < kcap else kcap


@njit(nogil=True, cache=True)
def cache_find(keys, h1, h2, d):
    cap = keys.shape[0]
    k = uint64(d + 1)
    s = np.int64((h1 ^ (k * _MIX)) & uint64(cap - 1))
    while keys[s, 2] != 0:
        if keys[s, 0] == h1 and keys[s, 1] == h2 and keys[s, 2] == k:
            return s
        s = (s + 1) & (cap - 1)
    return -1


@njit(nogil=True, cache=True)
def cache_slot(keys, h1, h2, d):
    """Slot of the entry or of the empty slot where it goes."""
    cap = keys.shape[0]
    k = uint64(d + 1)
    s = np.int64((h1 ^ (k * _MIX)) & uint64(cap - 1))
    while keys[s, 2] != 0:
        if keys[s, 0] == h1 and keys[s, 1] == h2 and keys[s, 2] == k:
            return s
        s = (s + 1) & (cap - 1)
    return s


@njit(nogil=True, cache=True)
def cache_rehash(keys, vals, cex, nkeys, nvals, ncex):
    for s in range(keys.shape[0]):
        if keys[s, 2] != 0:
            t = cache_slot(nkeys, keys[s, 0], keys[s, 1], np.int64(keys[s, 2]) - 1)
            nkeys[t, :] = keys[s, :]
            nvals[t, :, :] = vals[s, :, :]
            ncex[t] = cex[s]


@njit(nogil=True, cache=True, inline="always")
def _leaf(cnt):
    tot = 0
    mx = 0
    for c in range(cnt.shape[0]):
        tot += cnt[c]
        if cnt[c] > mx:
            mx = cnt[c]
    return tot - mx


@njit(nogil=True, cache=True)
def _combine(L, R, kc, kd, single, out):
    """``out[b]`` (b >= 1): best cost with at most ``b`` splits of a split whose children have fronts L, R."""
    out[0] = BIG
    if single:
        out[1] = L[kc] + R[kc]
        return
    for b in range(1, kd + 1):
        best = BIG
        rem = b - 1
        lo = rem - kc if rem > kc else 0
        hi = rem if rem < kc else kc
        for bl in range(lo, hi + 1):
            v = L[bl] + R[rem - bl]
            if v < best:
                best = v
        out[b] = best


@njit(nogil=True, cache=True)
def _positions(rk, yy, m, cnt, tmpc, pos, stu):
    """Candidate split positions ``k`` of one feature (sorted ranks ``rk``, labels ``yy``) and their one-split
    errors in ``stu``."""
    C = cnt.shape[0]
    tmpc[:] = 0
    n = 0
    prev = rk[0]
    for i in range(m):
        v = rk[i]
        if i > 0 and v != prev:
            ml = 0
            mr = 0
            for c in range(C):
                if tmpc[c] > ml:
                    ml = tmpc[c]
                if cnt[c] - tmpc[c] > mr:
                    mr = cnt[c] - tmpc[c]
            pos[n] = i
            stu[n] = m - ml - mr
            n += 1
        prev = v
        tmpc[yy[i]] += 1
    return n


@njit(nogil=True, cache=True)
def _boundaries(rk, m, pos):
    """Candidate split positions ``k`` of one feature (sorted ranks ``rk``): where the value changes."""
    n = 0
    for i in range(1, m):
        pos[n] = i
        n += rk[i] != rk[i - 1]
    return n


@njit(nogil=True, cache=True)
def _greedy(SR, SY, lvl, m, p, cnt, tmpc, gsc, gkf):
    """Feature and position of the best Gini split, the fewest one-split errors over all features and the feature
    and threshold rank of that stump;
    ``gsc[f]``/``gkf[f]``: the best Gini score of feature ``f`` (higher is better) and its position."""
    C = cnt.shape[0]
    best_g = -1.0
    bf = -1
    bk = -1
    best_stump = BIG
    s_f = -1
    s_r = 0
    for f in range(p):
        rk = SR[lvl, f]
        yy = SY[lvl, f]
        tmpc[:] = 0
        prev = rk[0]
        gsc[f] = -1.0
        gkf[f] = -1
        for i in range(m):
            v = rk[i]
            if i > 0 and v != prev:
                sl = 0.0
                sr = 0.0
                ml = 0
                mr = 0
                for c in range(C):
                    a = tmpc[c]
                    b = cnt[c] - a
                    sl += a * a
                    sr += b * b
                    if a > ml:
                        ml = a
                    if b > mr:
                        mr = b
                g = sl / i + sr / (m - i)
                if g > gsc[f]:
                    gsc[f] = g
                    gkf[f] = i
                if g > best_g + 1e-12:
                    best_g = g
                    bf = f
                    bk = i
                e = m - ml - mr
                if e < best_stump:
                    best_stump = e
                    s_f = f
                    s_r = rk[i - 1]
            prev = v
            tmpc[yy[i]] += 1
    return bf, bk, best_stump, s_f, s_r


@njit(nogil=True, cache=True, inline="always")
def _stump(tmp, cnt, ntot):
    ml = 0
    mr = 0
    for c in range(cnt.shape[0]):
        a = tmp[c]
        if a > ml:
            ml = a
        if cnt[c] - a > mr:
            mr = cnt[c] - a
    return ntot - ml - mr


@njit(nogil=True, cache=True, inline="always")
def _sweep2(buf, n1, c1, best):
    """Best stump errors (below ``best``) of a two-class child whose rows, in one feature's order, are packed in
    ``buf[:n1]`` as ``rank << 32 | class-1 rows before it``; ``c1`` class-1 rows in all.

    The prefix counts give a stump's errors at any position, so after a stump of ``e`` errors the sweep jumps
    the ``e - best`` rows that cannot beat ``best`` (one row changes the errors by at most one) instead of
    walking them; it ends when the rows still to come are of one class (every later stump is then no better).
    """
    j = 1
    while j < n1:
        while j < n1 and (buf[j] >> 32) == (buf[j - 1] >> 32):
            j += 1
        if j >= n1:
            break
        a1 = buf[j] & 0xFFFFFFFF
        a0 = j - a1
        r1 = c1 - a1
        r0 = n1 - j - r1
        e = (a0 if a0 < a1 else a1) + (r0 if r0 < r1 else r1)
        if e < best:
            best = e
            if best == 0:
                break
        if r0 == 0 or r1 == 0:
            break
        j += e - best + 1
    return best


@njit(nogil=True, cache=True, inline="always")
def _sweep2f(rk, P1, lo, hi, c1, best):
    """``_sweep2`` for the rows ``lo..hi-1`` of the split feature's own list (a child of a split on that feature
    is a run of it): ranks ``rk``, ``P1[i]`` class-1 rows among the first ``i``; nothing to partition."""
    n1 = hi - lo
    base = P1[lo]
    j = 1
    while j < n1:
        while j < n1 and rk[lo + j] == rk[lo + j - 1]:
            j += 1
        if j >= n1:
            break
        a1 = P1[lo + j] - base
        a0 = j - a1
        r1 = c1 - a1
        r0 = n1 - j - r1
        e = (a0 if a0 < a1 else a1) + (r0 if r0 < r1 else r1)
        if e < best:
            best = e
            if best == 0:
                break
        if r0 == 0 or r1 == 0:
            break
        j += e - best + 1
    return best


@njit(nogil=True, cache=True)
def _depth1_children(SR, SY, S, lvl, m, p, mark, cntL, cntR, tmpL, tmpR, capL, capR, out, bufL, bufR, f0, k, P1):
    """One sweep per feature: best stump errors of the left (mark 1) and right child; ``out = (L, R)``.

    The split is the first ``k`` rows of feature ``f0``'s list (``P1``: its prefix class-1 counts, two classes).
    Two classes: every other feature's list is first split into the children's lists in ``bufL``/``bufR``
    without a branch per row, with prefix counts, and ``_sweep2`` jumps through them; ``f0``'s own list needs
    no split (``_sweep2f``).  More classes: one pass per feature over its list, routing rows by their mark.

    ``capL``/``capR``: the caller needs a child's best stump only below this value (upper bound passed
    down): the search starts as if a stump of that cost were known, so it skips more.  A child whose
    reported best equals its cap (and is below its leaf) has no stump below the cap: the value is then a
    lower bound, not a tree's cost.

    A boundary is skipped while the stump cannot beat the child's best (one row changes the error by
    at most one).  A child drops out of a feature's sweep once no later boundary can beat its best
    (the skip reaches past its last row, or the rows still to come are of one class: then every later
    stump has a pure right side and a larger left side), and the sweep ends when both have dropped out;
    a child is done for good once it has a perfect stump.
    """
    C = cntL.shape[0]
    nL = 0
    for c in range(C):
        nL += cntL[c]
    nR = m - nL
    leafL = _leaf(cntL)
    leafR = _leaf(cntR)
    bestL = leafL if leafL < capL else capL
    bestR = leafR if leafR < capR else capR
    if bestL < 0:
        bestL = 0
    if bestR < 0:
        bestR = 0
    if C == 2:
        # two classes: each feature's list is split into the two children's lists (branch-free: the side of a row
        # is unpredictable) with prefix class counts, which the sweeps then jump through (``_sweep2``)
        c1L = np.int64(cntL[1])
        c1R = np.int64(cntR[1])
        for f in range(p):
            if bestL == 0 and bestR == 0:
                break
            if f == f0:
                if bestL > 0:
                    bestL = _sweep2f(SR[lvl, f], P1, 0, k, c1L, bestL)
                if bestR > 0:
                    bestR = _sweep2f(SR[lvl, f], P1, k, m, c1R, bestR)
                continue
            rows = S[lvl, f]
            rk = SR[lvl, f]
            yy = SY[lvl, f]
            jl = 0
            jr = 0
            sl = np.int64(0)
            sr = np.int64(0)
            for i in range(m):
                s = np.int64(mark[rows[i]] == 1)
                c = np.int64(yy[i])
                w = np.int64(rk[i]) << 32
                bufL[jl] = w | sl
                bufR[jr] = w | sr
                cs = c & s
                sl += cs
                sr += c - cs
                jl += s
                jr += 1 - s
            if bestL > 0:
                bestL = _sweep2(bufL, nL, c1L, bestL)
            if bestR > 0:
                bestR = _sweep2(bufR, nR, c1R, bestR)
        out[0] = leafL
        out[1] = bestL
        out[2] = leafR
        out[3] = bestR
        return
    for f in range(p):
        if bestL == 0 and bestR == 0:
            break
        rows = S[lvl, f]
        rk = SR[lvl, f]
        yy = SY[lvl, f]
        tmpL[:] = 0
        tmpR[:] = 0
        seenL = 0
        seenR = 0
        prevL = -1
        prevR = -1
        skipL = 0
        skipR = 0
        actL = bestL > 0
        actR = bestR > 0
        for i in range(m):
            if mark[rows[i]] == 1:
                if not actL:
                    continue
                v = rk[i]
                c = yy[i]
                if seenL > 0 and v != prevL and skipL <= 0:
                    e = _stump(tmpL, cntL, nL)
                    pure = False
                    for cc in range(C):
                        if cntL[cc] - tmpL[cc] == nL - seenL:
                            pure = True
                    if e < bestL:
                        bestL = e
                    skipL = e - bestL
                    if pure or bestL == 0 or skipL >= nL - 1 - seenL:
                        actL = False
                        if not actR:
                            break
                        continue
                skipL -= 1
                tmpL[c] += 1
                seenL += 1
                prevL = v
            else:
                if not actR:
                    continue
                v = rk[i]
                c = yy[i]
                if seenR > 0 and v != prevR and skipR <= 0:
                    e = _stump(tmpR, cntR, nR)
                    pure = False
                    for cc in range(C):
                        if cntR[cc] - tmpR[cc] == nR - seenR:
                            pure = True
                    if e < bestR:
                        bestR = e
                    skipR = e - bestR
                    if pure or bestR == 0 or skipR >= nR - 1 - seenR:
                        actR = False
                        if not actL:
                            break
                        continue
                skipR -= 1
                tmpR[c] += 1
                seenR += 1
                prevR = v
    out[0] = leafL
    out[1] = bestL
    out[2] = leafR
    out[3] = bestR


@njit(nogil=True, cache=True)
def _capped_child(leafv, best, cap, anchor, use_anchor, ub, lb):
    """Depth-one front ``ub``/``lb`` (budget 1) of a child swept with cut-off ``cap`` (see ``_depth1_children``).

    Below its cap the best stump is exact; at the cap no stump is below it, so the child's optimum is at
    least the cap (and at least the anchors' bound), and its leaf is the best tree known.
    """
    start = leafv if leafv < cap else cap
    if start < 0:
        start = 0
    if cap >= leafv or best < start:
        ub[1] = best
        lb[1] = best
        return
    ub[1] = leafv
    v = start
    if use_anchor and anchor > v:
        v = anchor
    lb[1] = v if v < leafv else leafv


@njit(nogil=True, cache=True)
def _partition(S, SR, SY, lvl, m, p, mark, want):
    """Rows of level ``lvl`` whose mark is ``want`` into level ``lvl + 1``, every feature's order kept."""
    cnt = 0
    for f in range(p):
        src = S[lvl, f]
        srk = SR[lvl, f]
        sy = SY[lvl, f]
        dst = S[lvl + 1, f]
        drk = SR[lvl + 1, f]
        dy = SY[lvl + 1, f]
        j = 0
        for i in range(m):
            r = src[i]
            if mark[r] == want:
                dst[j] = r
                drk[j] = srk[i]
                dy[j] = sy[i]
                j += 1
        cnt = j
    return cnt


@njit(nogil=True, cache=True)
def _set_mark(S, lvl, f, k, m, mark):
    rows = S[lvl, f]
    for i in range(k):
        mark[rows[i]] = 1
    for i in range(k, m):
        mark[rows[i]] = 0


@njit(nogil=True, cache=True)
def _bound_at(rec, kk, kc, kj, b, single):
    """Lower bound on the budget-``b`` cost of the split at ``kj`` from the interval's anchor splits.

    ``rec = [lo, hi, kl, kr, L_l, R_l, L_r, R_r]`` (children's lower-bound fronts of the left and right
    anchors, ``kk`` slots each; ``kl``/``kr`` -1 when absent).  The left child at ``kj`` contains the left
    anchor's left child and lies inside the right anchor's: ``L >= max(L_l, L_r - (kr - kj))``; the right
    child likewise: ``R >= max(R_r, R_l - (kj - kl))``.
    """
    kl = rec[2]
    kr = rec[3]
    best = BIG
    rem = b - 1
    lo = rem - kc if rem > kc else 0
    hi = rem if rem < kc else kc
    if single:
        lo = kc
        hi = kc
    for bl in range(lo, hi + 1):
        br = kc if single else rem - bl
        lv = 0
        rv = 0
        if kl >= 0:
            a = rec[4 + bl]
            if a > lv:
                lv = a
            a = rec[4 + kk + br] - (kj - kl)
            if a > rv:
                rv = a
        if kr >= 0:
            a = rec[4 + 2 * kk + bl] - (kr - kj)
            if a > lv:
                lv = a
            a = rec[4 + 3 * kk + br]
            if a > rv:
                rv = a
        if lv + rv < best:
            best = lv + rv
    return best


@njit(nogil=True, cache=True)
def _anchor_child(rec, kk, kc, kj, side, leafv, out):
    """Lower bounds (budgets ``0..kc``) of the left (``side`` 0) or right child of the split at ``kj`` from the
    interval's anchors (see ``_bound_at``); budget 0 is the child's leaf, exact."""
    kl = rec[2]
    kr = rec[3]
    out[0] = leafv
    for b in range(1, kc + 1):
        v = 0
        if side == 0:
            if kl >= 0 and rec[4 + b] > v:
                v = rec[4 + b]
            if kr >= 0 and rec[4 + 2 * kk + b] - (kr - kj) > v:
                v = rec[4 + 2 * kk + b] - (kr - kj)
        else:
            if kl >= 0 and rec[4 + kk + b] - (kj - kl) > v:
                v = rec[4 + kk + b] - (kj - kl)
            if kr >= 0 and rec[4 + 3 * kk + b] > v:
                v = rec[4 + 3 * kk + b]
        if v > leafv:
            v = leafv
        out[b] = v


@njit(nogil=True, cache=True)
def _raise_to_anchor(rec, kk, kc, kj, side, leafv, lb, tmp):
    """A child stopped before it finished: its lower bounds ``lb`` raised to what the interval's anchors prove
    (both are valid bounds of the same optimum, so their maximum is).  Without this a child stopped during its
    seed pass reports 0 and the split's bound (and the stopped node's) falls to the sibling's alone."""
    _anchor_child(rec, kk, kc, kj, side, leafv, tmp)
    for b in range(1, kc + 1):
        if tmp[b] > lb[b]:
            lb[b] = tmp[b]


@njit(nogil=True, cache=True)
def _prunable(rec, UB, kd, kk, kc, kj, b0, single, PR):
    """Whether the split at ``kj`` cannot improve any budget; if so its bounds lower ``PR`` (the least bound
    of every split set aside, which is the node's lower bound when the cut-off hid its optimum)."""
    for b in range(b0, kd + 1):
        if _bound_at(rec, kk, kc, kj, b, single) < UB[b]:
            return False
    for b in range(b0, kd + 1):
        v = _bound_at(rec, kk, kc, kj, b, single)
        if v < PR[b]:
            PR[b] = v
    return True


@njit(nogil=True, cache=True)
def _open_bounds(SEED, SEEDN, PAUSE, pn, SR, SY, lvl, m, p, cnt, tmpc, pos, stu, kk, kc, b0, single, EX):
    """A stopped node: lower ``EX`` to what the seeded and paused features' open intervals can still reach (their
    anchors bound every position); True when some feature was not started (nothing known beyond 0 then)."""
    for g in range(p):
        if SEEDN[lvl, g] == 0:
            return True
    for g in range(p):
        st = SEEDN[lvl, g]
        if st == -1:
            continue
        _positions(SR[lvl, g], SY[lvl, g], m, cnt, tmpc, pos, stu)
        nrec = pn if st == -2 else st
        for q in range(nrec):
            r3 = PAUSE[q] if st == -2 else SEED[lvl, g, q]
            for jj in range(r3[0], r3[1] + 1):
                for b in range(b0, kk):
                    v = _bound_at(r3, kk, kc, pos[jj], b, single)
                    if v < EX[b]:
                        EX[b] = v
    return False


@njit(nogil=True, cache=True)
def _cuts(UE, O, kc, kd, single, b0, h, out):
    """Cut-off for one child given the sibling's lower bounds ``O``: budget ``bc`` of the child matters only
    below ``max_b (UE[b] + h - O[b - 1 - bc])``.  ``h`` (the distance from the split to its interval's far end,
    as ConTree adds it): a child that reaches its cut-off still makes the split's bound prune the interval."""
    for bc in range(kc + 1):
        out[bc] = -BIG
    if single:
        out[0] = BIG
        out[kc] = UE[1] + h - O[kc]
        return
    for bc in range(kc + 1):
        v = -BIG
        for bo in range(kc + 1):
            b = bc + bo + 1
            if b > kd:
                break
            if b < b0 or UE[b] <= 0:
                continue  # nothing below 0 to find for budget b: no cut-off (not even ``h``) from it
            w = UE[b] + h - O[bo]
            if w > v:
                v = w
        if v < 0:
            v = 0  # nothing useful: the child need not split at all
        out[bc] = v
    out[0] = BIG  # a leaf costs nothing to evaluate


@njit(nogil=True, cache=True)
def _nothing_to_gain(UB, UE, PR, b0, kd):
    """Whether no split can improve any budget ``b0..kd``: a perfect tree is known, or every cut-off is <= 0.

    Cut-offs need not fall with the budget, so every budget is checked.  When the cut-offs end the search (not a
    perfect tree), the unsearched splits are bounded by 0 only: ``PR`` says so, and the node is then complete
    relative to its cut-offs (its lower bound 0 is at or above every cut-off), never exact by mistake.
    """
    if UB[b0] <= 0:
        return True
    for b in range(b0, kd + 1):
        if UE[b] > 0:
            return False
    for b in range(b0, kd + 1):
        if UB[b] > 0 and PR[b] > 0:
            PR[b] = 0
    return True


@njit(nogil=True, cache=True)
def solve(ws, lvl, m, d, cut, out_ub, out_lb, force, need_b):
    """Front of the node held at level ``lvl`` (``m`` rows, remaining depth ``d``).

    ``cut[b]``: the caller has no use for a budget-``b`` cost >= ``cut[b]`` (upper bound passed down).
    Returns 1 when ``ub`` is the optimum for every budget, 2 when complete relative to ``cut`` (``ub[b]``
    optimal where ``ub[b] < cut[b]``, else ``lb[b] = cut[b]``), 0 when stopped (``lb`` proven bounds).
    ``need_b`` >= 0 (tree rebuilding): a cached entry exact at that budget is enough.

    ``force``: ignore the stop flag (used to rebuild depth-2 nodes of a stopped run's tree).
    """
    (
        RK,
        y,
        z1,
        z2,
        S,
        mark,
        keys,
        cvals,
        cex,
        meta,
        flag,
        ctr,
        prm,
        VEC,
        CH,
        STK,
        POS,
        STU,
        CNT,
        TMP,
        SR,
        SY,
        SEED,
        SEEDN,
        CLAIM,
        PAUSE,
    ) = ws
    single = prm[0] != 0
    kcap = prm[1]
    p = RK.shape[0]
    C = CNT.shape[2]
    kd = kvec(d, single, kcap)
    kk = kd + 1
    UB = VEC[lvl, 0]
    EX = VEC[lvl, 1]
    PR = VEC[lvl, 11]  # least lower bound of the splits set aside or evaluated
    Lub = VEC[lvl, 2]
    Llb = VEC[lvl, 3]
    Rub = VEC[lvl, 4]
    Rlb = VEC[lvl, 5]
    Sub = VEC[lvl, 6]
    Slb = VEC[lvl, 7]
    UE = VEC[lvl, 8]  # effective upper bound: min(UB, cut)
    cutL = VEC[lvl, 9]
    cutR = VEC[lvl, 10]
    chf = CH[lvl, 0]
    chr_ = CH[lvl, 1]
    chb = CH[lvl, 2]
    cnt = CNT[lvl, 0]
    cntL = CNT[lvl, 1]
    cntR = CNT[lvl, 2]
    tmpc = CNT[lvl, 3]
    tmpR = CNT[lvl, 4]
    rows0 = S[lvl, 0]
    cnt[:] = 0
    h1 = uint64(0)
    h2 = uint64(0)
    for i in range(m):
        r = rows0[i]
        cnt[y[r]] += 1
        h1 += z1[r]
        h2 += z2[r]
    leaf = _leaf(cnt)
    for b in range(kk):
        UB[b] = leaf
        EX[b] = BIG
        PR[b] = BIG
        chf[b] = -1
        chr_[b] = 0
        chb[b] = 0
    if leaf == 0 or kd == 0 or m < 2:
        for b in range(kk):
            out_ub[b] = leaf
            out_lb[b] = leaf
        return 1
    ctr[1] += 1
    if d >= 2:
        s = cache_find(keys, h1, h2, d)
        hit = False
        if s >= 0:
            if cex[s] == 1 or (flag[0] != 0 and not force):
                hit = True
            elif need_b >= 0:
                hit = cvals[s, 0, need_b] == cvals[s, 1, need_b]
            elif cex[s] == 2:
                hit = True
                for b in range(1, kk):
                    if cvals[s, 1, b] != cvals[s, 0, b] and cvals[s, 1, b] < cut[b]:
                        hit = False
        if hit:
            for b in range(kk):
                out_ub[b] = cvals[s, 0, b]
                out_lb[b] = cvals[s, 1, b]
                chf[b] = cvals[s, 2, b]
                chr_[b] = cvals[s, 3, b]
                chb[b] = cvals[s, 4, b]
            return np.int64(cex[s])
    if (flag[0] != 0 and not force) or meta[1] != 0:
        for b in range(kk):
            out_ub[b] = leaf
            out_lb[b] = 0
        out_lb[0] = leaf
        return 0
    pos = POS[lvl]
    stu = STU[lvl]
    if d == 1:
        best = leaf
        for f in range(p):
            npos = _positions(SR[lvl, f], SY[lvl, f], m, cnt, tmpc, pos, stu)
            for j in range(npos):
                if stu[j] < best:
                    best = stu[j]
                    chf[1] = f
                    chr_[1] = SR[lvl, f, pos[j] - 1]
                    chb[1] = 1 << 8
        UB[1] = best
        for b in range(kk):
            out_ub[b] = UB[b]
            out_lb[b] = UB[b]
        return 1

    kc = kvec(d - 1, single, kcap)
    # a run-time -1: a literal argument makes numba compile a literal-typed overload whose cached copy
    # crashes when it recurses
    no_b = m - m - 1
    gsc = np.empty(p, dtype=np.float64)
    gkf = np.empty(p, dtype=np.int64)
    P1 = np.zeros(m + 1 if d == 2 and C == 2 else 1, dtype=np.int64)  # the split feature's prefix class-1 counts
    gf, gk, best_stump, stump_f, stump_r = _greedy(SR, SY, lvl, m, p, cnt, tmpc, gsc, gkf)
    # features in order of their best Gini split (``prm[7]``, as ConTree), else the greedy one then by index
    ford = np.argsort(-gsc, kind="mergesort")
    if prm[7] == 0:
        for fi in range(p):
            ford[fi] = gf if fi == 0 else (fi - 1 if fi - 1 < gf else fi)
            if gf < 0:
                ford[fi] = fi
    for b in range(kk):
        UE[b] = UB[b] if UB[b] < cut[b] else cut[b]
    b0 = 1
    if not single:
        b0 = 2  # one-split costs are exact per position: UB[1] is the best of them
        if best_stump < UB[1]:
            UB[1] = best_stump
            if best_stump < UE[1]:
                UE[1] = best_stump
            # its choice now: a run stopped before the search meets it still returns the best stump
            chf[1] = stump_f
            chr_[1] = stump_r
            chb[1] = 1 << 8
    stk = STK[lvl]
    exact = True
    stopped = False
    rem_lb_floor = BIG  # some feature not started when stopped: nothing known beyond 0
    # ``prm[8]``: two passes over the features, first one split per feature (its best Gini position) as a seed,
    # then each feature's full interval search starting from its seed's halves.  Every feature is then bounded
    # early (a stopped node's lower bound is the least bound of the seeds' halves, not 0) and the incumbent is
    # the best of the features' greedy splits before any interval is refined.
    npass = 2 if prm[8] == 1 or (prm[8] == 2 and lvl == 0) else 1
    # ``prm[14]`` >= 0: a limited-discrepancy pass (an incumbent, not a proof).  A node of depth >= 3 tries only its
    # features' Gini splits, in Gini order, the ``r``-th costing ``r`` of its discrepancy ``VEC[lvl, 13, 0]`` (what
    # is left goes to both children); depth-two nodes are solved exactly (and cached).  Its results are never
    # cached and its bounds are not proofs: the wrapper only keeps its trees as the exact search's incumbent.
    restricted = prm[14] >= 0 and d >= 3
    disc = VEC[lvl, 13, 0] if restricted else 0
    if restricted:
        npass = 2
    # ``prm[16]`` (front): budget 2 (a split and one stump) has depth two, so at a node of depth >= 3 it is the optimum
    # of budget 2 of the depth-two node over the same rows, solved exactly (and cached) before the search; budget 2
    # then no longer keeps this node's splits from being pruned (``b0 = 3``).  Its rows go to the next level (free:
    # the children are not partitioned yet), ``Lub``/``Llb``/``cutL`` are free until the first split.
    if not single and prm[16] != 0 and d >= 3 and kd >= 2 and not restricted and UE[2] > 0:
        for i in range(m):
            mark[rows0[i]] = 1
        _partition(S, SR, SY, lvl, m, p, mark, 1)
        for b in range(kk):
            cutL[b] = 0
        cutL[2] = BIG
        solve(ws, lvl + 1, m, d - d + 2, cutL, Lub, Llb, force, no_b)  # a run-time 2 (see ``no_b``)
        if Llb[2] == Lub[2]:
            b0 = 3
            if Lub[2] < UB[2]:
                UB[2] = Lub[2]
                chf[2] = CH[lvl + 1, 0, 2]
                chr_[2] = CH[lvl + 1, 1, 2]
                chb[2] = CH[lvl + 1, 2, 2]
        for b in range(2, kk):  # the larger budgets start from it (at most as many errors)
            if UB[b - 1] < UB[b]:
                UB[b] = UB[b - 1]
                chf[b] = chf[b - 1]
                chr_[b] = chr_[b - 1]
                chb[b] = chb[b - 1]
            if UB[b] < UE[b]:
                UE[b] = UB[b]
    # ``prm[13]`` > 0: the root seeds lazily.  Its interval searches start at once (each feature from its Gini
    # split), and only once the run has evaluated ``prm[13]`` splits (a run long enough that a time limit may stop
    # it) the feature being searched is paused (its open intervals kept in ``PAUSE``), every feature not yet
    # searched is seeded, and the search resumes.  A short run pays nothing for seeds it never needs.
    lazy = npass == 2 and lvl == 0 and prm[13] > 0 and not restricted
    # ``prm[9]`` > 1: this root is one of several threads over the same rows (own workspaces).  Each seeds the
    # features it has not searched, and they claim the features' interval searches one at a time from ``CLAIM[0]``
    # (a race can hand one feature to both: duplicate work, never a feature skipped) and share their best costs
    # through ``cut``.
    shared = lvl == 0 and prm[9] > 1 and not restricted
    # ``SEEDN[lvl, f]``: 0 not started, > 0 seeded (that many open intervals in ``SEED``), -1 searched or being
    # searched (its splits are in PR/EX, its open intervals on the stack), -2 paused (open intervals in ``PAUSE``)
    for g in range(p):
        SEEDN[lvl, g] = 0
    phase = 1 if npass == 1 or lazy else 0
    nxt0 = 0
    nxt1 = 0
    pend = -1
    pn = 0
    triggered = False
    split0 = ctr[3]
    while True:
        resume = False
        if phase == 0:
            if nxt0 >= p or (restricted and nxt0 > disc):
                if restricted:
                    break
                phase = 1
                continue
            fi = nxt0
            nxt0 += 1
            if SEEDN[lvl, ford[fi]] < 0:
                continue
        elif pend >= 0:
            fi = pend
            pend = -1
            resume = True
        elif shared:
            fi = CLAIM[0]
            CLAIM[0] = fi + 1
        else:
            fi = nxt1
            nxt1 += 1
        if fi >= p:
            break
        if _nothing_to_gain(UB, UE, PR, b0, kd) and (single or chf[1] >= 0 or UB[1] == leaf):
            break  # a perfect tree, or the caller wants nothing below 0 (and the one-split tree's choice is known)
        f = ford[fi]
        if (flag[0] != 0 and not force) or meta[1] != 0:
            stopped = True
            if _open_bounds(SEED, SEEDN, PAUSE, pn, SR, SY, lvl, m, p, cnt, tmpc, pos, stu, kk, kc, b0, single, EX):
                rem_lb_floor = 0
            break
        state = SEEDN[lvl, f]
        if phase == 1 and not resume and state == -1:
            continue  # its seeds settled it
        if single:
            npos = _boundaries(SR[lvl, f], m, pos)  # one tree: the one-split errors are not used
        else:
            npos = _positions(SR[lvl, f], SY[lvl, f], m, cnt, tmpc, pos, stu)
        if npos == 0:
            SEEDN[lvl, f] = -1
            continue
        if d == 2 and C == 2:
            sy = SY[lvl, f]
            for i in range(m):
                P1[i + 1] = P1[i] + sy[i]
        if not single and UB[1] < leaf:
            for j in range(npos):
                if stu[j] == UB[1] and chf[1] < 0:
                    chf[1] = f
                    chr_[1] = SR[lvl, f, pos[j] - 1]
                    chb[1] = 1 << 8
        rec = stk[0]
        rec[0] = 0
        rec[1] = npos - 1
        rec[2] = -1
        rec[3] = -1
        sp = 1
        first_j = -1
        if resume:
            for q in range(pn):
                stk[q, :] = PAUSE[q, :]
            sp = pn
        elif phase == 1 and state > 0:
            for q in range(state):
                stk[q, :] = SEED[lvl, f, q, :]
            sp = state
        elif npass == 1:
            if f == gf:
                for j in range(npos):
                    if pos[j] == gk:
                        first_j = j
        else:
            # a seed (or a lazy root's unseeded search) starts at the feature's best Gini split
            first_j = npos // 2
            for j in range(npos):
                if pos[j] == gkf[f]:
                    first_j = j
        SEEDN[lvl, f] = -1
        n_eval = 0
        nseed = prm[11] if lvl == 0 and prm[11] > 1 and not restricted else 1
        paused = False
        while sp > 0:
            if (flag[0] != 0 and not force) or meta[1] != 0:
                stopped = True
                break
            if _nothing_to_gain(UB, UE, PR, b0, kd):
                break
            if phase == 0 and n_eval >= nseed:
                break
            if lazy and not triggered and phase == 1 and first_j < 0 and (ctr[3] - split0 >= prm[13] or meta[2] != 0):
                # long enough to be stopped (that many splits, or ``meta[2]`` set by the wrapper at a share of its
                # time limit): pause this feature and seed every feature not yet searched
                triggered = True
                for q in range(sp):
                    PAUSE[q, :] = stk[q, :]
                pn = sp
                SEEDN[lvl, f] = -2
                pend = fi
                phase = 0
                nxt0 = 0
                paused = True
                break
            if phase == 0 and n_eval == 1 and sp == 2 and stk[0, 1] - stk[0, 0] > stk[1, 1] - stk[1, 0]:
                # the root's second seed splits the wider half of the first: a stopped root's bound is the least
                # over its open intervals, and the wide one (its anchor's child on that side is small) is weak
                for q in range(stk.shape[1]):
                    sw = stk[0, q]
                    stk[0, q] = stk[1, q]
                    stk[1, q] = sw
            n_eval += 1
            rec = stk[sp - 1]
            lo = rec[0]
            hi = rec[1]
            if first_j >= 0:
                j = first_j
                first_j = -1
            else:
                # cut the interval's ends that the anchors prove useless
                while lo <= hi and _prunable(rec, UE, kd, kk, kc, pos[lo], b0, single, PR):
                    lo += 1
                while hi >= lo and _prunable(rec, UE, kd, kk, kc, pos[hi], b0, single, PR):
                    hi -= 1
                if lo > hi:
                    sp -= 1
                    continue
                j = (lo + hi) // 2
            sp -= 1
            k = pos[j]
            ctr[3] += 1
            if prm[10] > 0 and ctr[3] >= prm[10] and flag[0] == 0:
                flag[0] = 2  # a stop after a fixed number of splits (tests: a stopped run that is reproducible)
            if prm[15] > 0 and ctr[3] >= prm[15] and meta[1] == 0:
                meta[1] = 2  # the exact-first phase paused after a fixed number of splits (tests, see the wrapper)
            if lvl == 0:
                ctr[0] += 1
            # --- evaluate the split (f, k)
            _set_mark(S, lvl, f, k, m, mark)
            cntL[:] = 0
            for i in range(k):
                cntL[SY[lvl, f, i]] += 1
            for c in range(C):
                cntR[c] = cnt[c] - cntL[c]
            ex_split = True
            if restricted:
                VEC[lvl + 1, 13, 0] = disc - fi  # both children's discrepancy
            if d == 2:
                leafL = _leaf(cntL)
                leafR = _leaf(cntR)
                capL = BIG
                capR = BIG
                if prm[6] != 0 and kc >= 1:
                    # Upper bound passed down (as ConTree does): a child's stump matters only while the split
                    # can still beat the node's best by more than ``h`` (the distance to the interval's far
                    # end), so a child that reaches its cap makes the split's bound prune its whole interval.
                    # The sibling's part is bounded by the interval's anchors.
                    _anchor_child(rec, kk, kc, k, 0, leafL, Llb)
                    _anchor_child(rec, kk, kc, k, 1, leafR, Rlb)
                    h = 0
                    if prm[6] == 1:
                        h = k - pos[lo] if k - pos[lo] > pos[hi] - k else pos[hi] - k
                    if single:
                        capL = UE[1] + h - Rlb[1]
                        capR = UE[1] + h - Llb[1]
                    elif kd >= b0:
                        # budget b = 1 (the child's stump) + bo (the sibling's budget) + 1
                        capL = -BIG
                        capR = -BIG
                        for b in range(b0, kd + 1):
                            bo = b - 2
                            if bo > kc or UE[b] <= 0:
                                continue
                            v = UE[b] + h - Rlb[bo]
                            if v > capL:
                                capL = v
                            v = UE[b] + h - Llb[bo]
                            if v > capR:
                                capR = v
                bufs = (POS[lvl + 1], STU[lvl + 1])  # free: the depth-one children are never partitioned
                _depth1_children(
                    SR, SY, S, lvl, m, p, mark, cntL, cntR, tmpc, tmpR, capL, capR, TMP[lvl], bufs[0], bufs[1], f, k, P1
                )
                t = TMP[lvl]
                Lub[0] = t[0]
                Rub[0] = t[2]
                if kc >= 1:
                    _capped_child(t[0], t[1], capL, Llb[1], prm[6] != 0, Lub, Llb)
                    _capped_child(t[2], t[3], capR, Rlb[1], prm[6] != 0, Rub, Rlb)
                Llb[0] = Lub[0]
                Rlb[0] = Rub[0]
                _combine(Lub, Rub, kc, kd, single, Sub)
                _combine(Llb, Rlb, kc, kd, single, Slb)
            else:
                # one child first (``prm[4]``: the larger one; else the left), then the sibling's bound from the
                # interval's anchors with it often proves the split useless without solving the sibling
                right_first = prm[4] != 0 and m - k > k
                hcut = 0
                if prm[3] >= 2:
                    hcut = k - pos[lo] if k - pos[lo] > pos[hi] - k else pos[hi] - k
                hfirst = hcut if prm[3] == 2 else 0  # 3: the first child gets the plain upper bound
                if right_first:
                    _anchor_child(rec, kk, kc, k, 0, _leaf(cntL), Llb)
                    if prm[5] == 0:
                        for b in range(1, kc + 1):
                            Llb[b] = 0  # trivial bound: the split is then set aside less often
                    mR = _partition(S, SR, SY, lvl, m, p, mark, 0)
                    _cuts(UE, Llb, kc, kd, single, b0, hfirst, cutR)
                    if prm[3] == 0:
                        cutR[:] = BIG
                    exA = solve(ws, lvl + 1, mR, d - 1, cutR, Rub, Rlb, force, no_b)
                    if exA == 0:
                        _raise_to_anchor(rec, kk, kc, k, 1, Rub[0], Rlb, VEC[lvl, 12])
                else:
                    _anchor_child(rec, kk, kc, k, 1, _leaf(cntR), Rlb)
                    if prm[5] == 0:
                        for b in range(1, kc + 1):
                            Rlb[b] = 0  # trivial bound: the split is then set aside less often
                    mL = _partition(S, SR, SY, lvl, m, p, mark, 1)
                    _cuts(UE, Rlb, kc, kd, single, b0, hfirst, cutL)
                    if prm[3] == 0:
                        cutL[:] = BIG
                    exA = solve(ws, lvl + 1, mL, d - 1, cutL, Lub, Llb, force, no_b)
                    if exA == 0:
                        _raise_to_anchor(rec, kk, kc, k, 0, Lub[0], Llb, VEC[lvl, 12])
                _combine(Llb, Rlb, kc, kd, single, Slb)
                # ``prm[12]`` (as ConTree): the sibling is set aside only when the first child's bound (with the
                # sibling's anchor bound) prunes the whole interval (``+ hcut``), not just this split.  Solving it
                # otherwise gives the split exact child bounds, which prune its neighbours: at depth 4 this halves
                # the splits evaluated at the root and depth 3, and the depth-2 sweeps below them.
                hopeless = True
                hsib = hcut if prm[12] != 0 else 0
                for b in range(b0, kd + 1):
                    if Slb[b] < UE[b] + hsib:
                        hopeless = False
                if hopeless:
                    for b in range(kk):
                        Sub[b] = BIG
                    if exA == 0:
                        ex_split = False
                else:
                    _set_mark(S, lvl, f, k, m, mark)
                    if right_first:
                        mL = _partition(S, SR, SY, lvl, m, p, mark, 1)
                        _cuts(UE, Rlb, kc, kd, single, b0, hcut, cutL)
                        if prm[3] == 0:
                            cutL[:] = BIG
                        exB = solve(ws, lvl + 1, mL, d - 1, cutL, Lub, Llb, force, no_b)
                        if exB == 0:
                            _raise_to_anchor(rec, kk, kc, k, 0, Lub[0], Llb, VEC[lvl, 12])
                    else:
                        mR = _partition(S, SR, SY, lvl, m, p, mark, 0)
                        _cuts(UE, Llb, kc, kd, single, b0, hcut, cutR)
                        if prm[3] == 0:
                            cutR[:] = BIG
                        exB = solve(ws, lvl + 1, mR, d - 1, cutR, Rub, Rlb, force, no_b)
                        if exB == 0:
                            _raise_to_anchor(rec, kk, kc, k, 1, Rub[0], Rlb, VEC[lvl, 12])
                    _combine(Lub, Rub, kc, kd, single, Sub)
                    _combine(Llb, Rlb, kc, kd, single, Slb)
                    if exA == 0 or exB == 0:
                        ex_split = False
            if not single:
                Slb[1] = stu[j]  # exact
            # --- update the node's front (best with at most b splits)
            thr_rank = SR[lvl, f, k - 1]
            for b in range(1, kk):
                if Sub[b] < UB[b]:
                    UB[b] = Sub[b]
                    chf[b] = f
                    chr_[b] = thr_rank
                    best_bl = 0
                    if not single:
                        # the left budget achieving Sub[b]
                        rem = b - 1
                        lo2 = rem - kc if rem > kc else 0
                        hi2 = rem if rem < kc else kc
                        bv = BIG
                        for bl in range(lo2, hi2 + 1):
                            v = Lub[bl] + Rub[rem - bl]
                            if v < bv:
                                bv = v
                                best_bl = bl
                    chb[b] = best_bl | (b << 8)  # left budget and the budget it was chosen for
                    if restricted:
                        chb[b] |= (disc - fi) << 16  # and the children's discrepancy, to rebuild the tree
            for b in range(1, kk):
                if UB[b - 1] < UB[b]:
                    UB[b] = UB[b - 1]
                    chf[b] = chf[b - 1]
                    chr_[b] = chr_[b - 1]
                    chb[b] = chb[b - 1]
            if shared:
                for b in range(kk):
                    if UB[b] < cut[b]:
                        cut[b] = UB[b]  # the other threads prune with it
            for b in range(kk):
                UE[b] = UB[b] if UB[b] < cut[b] else cut[b]
                if Slb[b] < PR[b]:
                    PR[b] = Slb[b]
            if not ex_split:
                exact = False
                for b in range(kk):
                    if Slb[b] < EX[b]:
                        EX[b] = Slb[b]
            if lvl == 0 and UB[kd] < ctr[4]:
                ctr[4] = UB[kd]
            # --- the two halves, anchored at this split's bounds: right half above, left half in place
            t = sp
            r2 = stk[t + 1]
            r2[0] = j + 1
            r2[1] = hi
            r2[2] = k
            r2[3] = rec[3]
            for b in range(kc + 1):
                r2[4 + b] = Llb[b]
                r2[4 + kk + b] = Rlb[b]
                r2[4 + 2 * kk + b] = rec[4 + 2 * kk + b]
                r2[4 + 3 * kk + b] = rec[4 + 3 * kk + b]
            rec[0] = lo
            rec[1] = j - 1
            rec[3] = k
            for b in range(kc + 1):
                rec[4 + 2 * kk + b] = Llb[b]
                rec[4 + 3 * kk + b] = Rlb[b]
            sp = t + 2
        if paused:
            continue
        if phase == 0 and not stopped and sp > 0:
            for q in range(sp):
                SEED[lvl, f, q, :] = stk[q, :]
            SEEDN[lvl, f] = sp
        if stopped:
            # what the unresolved intervals of this feature can still reach
            for q in range(sp):
                r3 = stk[q]
                for jj in range(r3[0], r3[1] + 1):
                    for b in range(b0, kk):
                        v = _bound_at(r3, kk, kc, pos[jj], b, single)
                        if v < EX[b]:
                            EX[b] = v
            exact = False
            # the other features: seeded or paused ones by their open intervals, searched ones are in PR/EX
            if _open_bounds(SEED, SEEDN, PAUSE, pn, SR, SY, lvl, m, p, cnt, tmpc, pos, stu, kk, kc, b0, single, EX):
                rem_lb_floor = 0
            break
    if restricted:
        # an incumbent only: its bounds prove nothing (0, the leaf at budget 0), and it is never cached
        for b in range(kk):
            out_ub[b] = UB[b]
            out_lb[b] = 0
        out_lb[0] = leaf
        return 0
    bounded = False
    if stopped or not exact:
        exact = False
        for b in range(kk):
            lbv = UB[b]
            if b >= b0 and PR[b] < lbv:
                lbv = PR[b]
            if EX[b] < lbv:
                lbv = EX[b]
            if b >= b0 and rem_lb_floor < lbv:
                lbv = rem_lb_floor
            out_lb[b] = lbv
    else:
        for b in range(kk):
            out_lb[b] = UB[b]
            if b >= b0 and PR[b] < UB[b]:
                out_lb[b] = PR[b]
            if out_lb[b] < UB[b]:
                bounded = True
    for b in range(kk):
        out_ub[b] = UB[b]
    # cache (exact entries always; a stopped node's bounds where nothing is stored yet, else merged with them).
    # The root is stored also when the table is full (``meta[1]``): the wrapper grows the table and runs again,
    # and a run stopped early in that rerun then still has the first run's incumbent, choices and bounds.
    code = 0
    if exact:
        code = 2 if bounded else 1
    root_unwind = lvl == 0 and meta[1] != 0
    if d >= 2 and (meta[1] == 0 or root_unwind) and (exact or flag[0] != 0 or root_unwind):
        s = cache_slot(keys, h1, h2, d)
        fresh = keys[s, 2] == 0
        if fresh and lvl != 0 and meta[0] * 10 >= keys.shape[0] * 7:
            if prm[2] != 0:
                meta[1] = 1  # table full: the wrapper grows it and runs again
        elif fresh or exact:
            if fresh:
                meta[0] += 1
                ctr[2] = meta[0]
            keys[s, 0] = h1
            keys[s, 1] = h2
            keys[s, 2] = uint64(d + 1)
            for b in range(kk):
                cvals[s, 0, b] = out_ub[b]
                cvals[s, 1, b] = out_lb[b]
                cvals[s, 2, b] = chf[b]
                cvals[s, 3, b] = chr_[b]
                cvals[s, 4, b] = chb[b]
            cex[s] = code
        elif cex[s] == 0:
            # two stopped searches of one node: per budget the better tree (with its choice) and the larger bound
            for b in range(kk):
                if out_ub[b] < cvals[s, 0, b]:
                    cvals[s, 0, b] = out_ub[b]
                    cvals[s, 2, b] = chf[b]
                    cvals[s, 3, b] = chr_[b]
                    cvals[s, 4, b] = chb[b]
                if out_lb[b] > cvals[s, 1, b]:
                    cvals[s, 1, b] = out_lb[b]
                out_ub[b] = cvals[s, 0, b]
                out_lb[b] = cvals[s, 1, b]
                chf[b] = cvals[s, 2, b]
                chr_[b] = cvals[s, 3, b]
                chb[b] = cvals[s, 4, b]
    return code


@njit(nogil=True, cache=True)
def build(ws, XT, lvl, m, d, b, feat, thr, left, right, value, nxt):
    """Rebuild the tree of budget index ``b`` of the node at level ``lvl``; returns its node number."""
    RK = ws[0]
    y = ws[1]
    S = ws[4]
    mark = ws[5]
    prm = ws[12]
    CH = ws[14]
    SR = ws[20]
    SY = ws[21]
    p = RK.shape[0]
    node = nxt[0]
    nxt[0] += 1
    rows0 = S[lvl, 0]
    for c in range(value.shape[1]):
        value[node, c] = 0
    for i in range(m):
        value[node, y[rows0[i]]] += 1
    feat[node] = -1
    left[node] = -1
    right[node] = -1
    thr[node] = 0.0
    if d == 0 or b == 0 or m < 2:
        return node
    single = prm[0] != 0
    kd = kvec(d, single, prm[1])
    bi = b if b < kd else kd
    oub = np.zeros(kd + 1, dtype=np.int64)
    olb = np.zeros(kd + 1, dtype=np.int64)
    cut = np.full(kd + 1, BIG, dtype=np.int64)
    # A stopped run rebuilds from the cached choices only: re-solving a depth-2 node exactly here ignored the time
    # limit (2 s limit, 20,000 x 60: 50-120 s).  A node it left without a split (not cached, or no split better
    # than its leaf found) gets its best stump, exact and one sweep per feature: never worse than the leaf.
    stopped_run = ws[10][0] != 0
    solve(ws, lvl, m, d, cut, oub, olb, d <= 2 and not stopped_run, bi)
    f = CH[lvl, 0, bi]
    if f < 0 and stopped_run and d >= 2:
        d = 1
        bi = 1
        solve(ws, lvl, m, 1, cut, oub, olb, True, bi)
        f = CH[lvl, 0, bi]
    r = CH[lvl, 1, bi]
    bl = CH[lvl, 2, bi]
    if f < 0:
        return node
    lo_v = -np.inf
    hi_v = np.inf
    nl = 0
    for i in range(m):
        row = rows0[i]
        x = XT[f, row]
        if RK[f, row] <= r:
            mark[row] = 1
            nl += 1
            if x > lo_v:
                lo_v = x
        else:
            mark[row] = 0
            if x < hi_v:
                hi_v = x
    if nl == 0 or nl == m:
        return node
    t = lo_v / 2.0 + hi_v / 2.0
    if not (lo_v <= t < hi_v):
        t = lo_v
    feat[node] = f
    thr[node] = t
    # a limited-discrepancy pass's choice also says what discrepancy its children had (``solve``, ``prm[14]``)
    VEC = ws[13]
    VEC[lvl + 1, 13, 0] = bl >> 16
    if single:
        bl = 1
        br = 1
    else:
        br = ((bl >> 8) & 255) - 1 - (bl & 255)
        bl = bl & 255
    mL = _partition(S, SR, SY, lvl, m, p, mark, 1)
    left[node] = build(ws, XT, lvl + 1, mL, d - 1, bl, feat, thr, left, right, value, nxt)
    for i in range(m):
        row = rows0[i]
        mark[row] = 1 if RK[f, row] <= r else 0
    mR = _partition(S, SR, SY, lvl, m, p, mark, 0)
    right[node] = build(ws, XT, lvl + 1, mR, d - 1, br, feat, thr, left, right, value, nxt)
    return node


@njit(nogil=True, cache=True)
def root_block(ws, n, f, lo, hi):
    """The root's rows at positions ``lo:hi`` of feature ``f``'s sorted list into level 1; their number.

    The wrapper's bound pass (``_bounds``) solves such blocks to a small cut-off: the rows of a root split's child
    on ``f`` are a prefix or a suffix of that list, so every block inside it bounds it (trees' errors add up over
    disjoint rows, so their optima do too)."""
    S = ws[4]
    mark = ws[5]
    rows = S[0, f]
    for i in range(lo):
        mark[rows[i]] = 0
    for i in range(lo, hi):
        mark[rows[i]] = 1
    for i in range(hi, n):
        mark[rows[i]] = 0
    return _partition(S, ws[20], ws[21], 0, n, ws[0].shape[0], mark, 1)
