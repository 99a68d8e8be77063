"""MurTree's main search: depth- and node-budget-limited dynamic programming with bounds.

``solve`` returns the optimal cost (number of errors, or weighted cost: see the workspace's ``cm``) of a
dataset for a depth ``d`` and a budget of ``n`` splits when it is at most ``ub`` (the solution is then
cached), a lower bound greater than ``ub`` otherwise, or -1 when the run was stopped (time limit, cancel, or a
full cache): nothing is cached on the way out of a stopped search, so the cache only ever holds
proven facts.  Ties go to fewer splits: the leaf, then the optimum of the largest smaller budget
already solved, are the first incumbents and a split must be strictly better to replace them.

Work space ``ws`` is a :data:`Workspace` (named tuple of arrays); a dataset lives in a row
of ``bufs`` (ascending row indices), with its class counts in the same row of ``cnts``.  The root is
row 0; the children of a node at level ``l`` are written to rows ``2l+1`` and ``2l+2``.
"""

from collections import namedtuple

import numpy as np
from numba import njit, uint64

from .murtree_cache import (
    _NONE,
    _ONE,
    _ZERO,
    above,
    archive_lb,
    archive_put,
    below,
    cache_find,
    cache_put,
    cost_inf,
    entry_feature,
    entry_nleft,
    entry_optimal,
    leaf_cost,
    widen,
)
from .murtree_d2 import depth2_store

# The kernels' work space: arrays shared by the search, the depth-2 solver and the cache (built by
# ``solvers.murtree._workspace``, which documents each field).  A namedtuple is a plain tuple to numba:
# field access compiles to the same code as indexing.
Workspace = namedtuple(
    "Workspace",
    (
        "XT",  # tests x rows (0/1), rows sorted by class
        "y",  # classes of the sorted rows
        "z1",  # Zobrist words of the rows (two independent 64-bit hashes)
        "z2",
        "bufs",  # one dataset (ascending row indices) per buffer row; children of level l: rows 2l+1, 2l+2
        "cnts",  # class counts of each buffer row
        "keys",  # cache: (hash1, hash2 with depth and budget in its low bits) per slot (see murtree_cache)
        "vals",  # cache: (errors or lower bound, packed optimal flag, root test and left budget) per slot
        "meta",  # cache: [entries]
        "arch_inst",  # similarity archive: one dataset per buffer row ...
        "arch_m",  # ... its size (-1: empty) ...
        "arch_h",  # ... its hash ...
        "arch_lb",  # ... and its lower bounds per depth and budget
        "bits",  # depth-2 solver: per-feature bitsets of a dataset (word-major)
        "S",  # depth-2 solver: class counts per test
        "P",  # depth-2 solver: class counts per pair of tests
        "act",  # depth-2 solver: tests that split the dataset
        "prm",  # [min_leaf_support]
        "flag",  # the Control's stop flag
        "counters",  # the Control's progress counters
        "status",  # [cache full (1: grow it), incumbent errors, incumbent root test, its left budget]
        "XR",  # rows x tests (0/1), rows sorted by class
        "bitsA",  # depth-2 solver: bitsets of the active tests
        "tmp",  # depth-2 solver: scratch class counts
        "forder",  # test order per level (scratch)
        "cm",  # the objective: int64 (0,) plain errors, or the cost of each row group per predicted class
    ),
)


@njit(nogil=True, cache=True)
def _split(XT, y, z1, z2, bufs, cnts, row, m, f, rl, rr):
    """Partition dataset ``row`` on test ``f`` into rows ``rl`` (test 0) and ``rr`` (test 1)."""
    src = bufs[row]
    xf = XT[f]
    bl = bufs[rl]
    br = bufs[rr]
    cl = cnts[rl]
    cr = cnts[rr]
    cl[:] = 0
    cr[:] = 0
    ml = 0
    mr = 0
    hl1 = uint64(0)
    hl2 = uint64(0)
    hr1 = uint64(0)
    hr2 = uint64(0)
    for k in range(m):
        i = src[k]
        if xf[i]:
            br[mr] = i
            mr += 1
            cr[y[i]] += 1
            hr1 += z1[i]
            hr2 += z2[i]
        else:
            bl[ml] = i
            ml += 1
            cl[y[i]] += 1
            hl1 += z1[i]
            hl2 += z2[i]
    return ml, mr, hl1, hl2, hr1, hr2


@njit(nogil=True, cache=True)
def _gini_order(XT, y, inst, m, cnt, order):
    """Tests in order of increasing Gini impurity of their split: good incumbents early prune more."""
    F = XT.shape[0]
    C = cnt.shape[0]
    ones = np.zeros(C, dtype=np.int64)
    score = np.empty(F, dtype=np.float64)
    for f in range(F):
        xf = XT[f]
        ones[:] = 0
        for k in range(m):
            i = inst[k]
            ones[y[i]] += xf[i]
        n1 = 0
        sq1 = 0.0
        sq0 = 0.0
        for c in range(C):
            n1 += ones[c]
            sq1 += ones[c] * ones[c]
            sq0 += (cnt[c] - ones[c]) * (cnt[c] - ones[c])
        n0 = m - n1
        if n0 == 0 or n1 == 0:
            score[f] = np.inf
        else:
            score[f] = (n0 - sq0 / n0) + (n1 - sq1 / n1)
    order[:] = np.argsort(score, kind="mergesort")


@njit(nogil=True, cache=True, inline="always")
def _norm(d, n):
    return d if d < n else n


@njit(nogil=True, cache=True)
def _known_lb(ws, m, cnt, h1, h2, d, n):
    """Lower bound of a child from the cache only (exact leaf cost when the budget is 0)."""
    keys = ws.keys
    vals = ws.vals
    if n == 0:
        return leaf_cost(cnt, cnt.shape[0], ws.cm)
    s = cache_find(keys, h1, h2, d, n)
    if s >= 0:
        return widen(vals[s, 0])
    return _full_lb(keys, vals, h1, h2, d, n)


@njit(nogil=True, cache=True)
def _full_lb(keys, vals, h1, h2, d, n):
    """A bound of the full budget at the same depth also bounds any smaller budget (more splits never hurt)."""
    full = (1 << d) - 1
    if n >= full:
        return 0
    s = cache_find(keys, h1, h2, d, full)
    return widen(vals[s, 0]) if s >= 0 else np.int64(0)


@njit(nogil=True, cache=True)
def solve(ws, lvl, row, m, h1, h2, d, n, ub):
    """Optimal cost of dataset ``row`` with depth ``d`` and ``n`` splits if it is <= ``ub`` (see module)."""
    (
        XT,
        y,
        z1,
        z2,
        bufs,
        cnts,
        keys,
        vals,
        meta,
        arch_inst,
        arch_m,
        arch_h,
        arch_lb,
        bits,
        S,
        P,
        act,
        prm,
        flag,
        counters,
        status,
        XR,
        bitsA,
        tmp,
        forder,
        cm,
    ) = ws
    min_leaf = prm[0]
    C = cnts.shape[1]
    cnt = cnts[row]
    leaf = leaf_cost(cnt, C, cm)
    if n == 0 or leaf == 0 or m < 2 * min_leaf:
        return leaf
    if flag[0] != 0 or status[0] != 0:
        return -1
    lb = 0
    s = cache_find(keys, h1, h2, d, n)
    if s >= 0:
        if entry_optimal(vals, s) == 1:
            return widen(vals[s, 0])
        lb = widen(vals[s, 0])
    fl = _full_lb(keys, vals, h1, h2, d, n)
    if fl > lb:
        lb = fl
    if lb > ub:
        return lb
    inst = bufs[row]
    sim = archive_lb(arch_inst, arch_m, arch_h, arch_lb, row, inst, m, h1, h2, d, n, y, cm)
    if sim > lb:
        lb = sim
        if lb > ub:
            cache_put(keys, vals, meta, status, h1, h2, d, n, lb, _ZERO, _NONE, _ZERO)
            return lb
    if lb >= leaf:
        cache_put(keys, vals, meta, status, h1, h2, d, n, leaf, _ONE, _NONE, _ZERO)
        return leaf
    if d <= 2:
        counters[2] += 1
        res = depth2_store(
            XR,
            inst,
            m,
            cnt,
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
            row,
            flag,
            d - 1,  # a depth-1 dataset needs no pair counts
            cm,
        )
        if res[0, 0] < 0:  # stopped while counting pairs: nothing stored
            return -1
        counters[1] = meta[0]
        return res[n - 1, 0]
    # general case (d >= 3): search over root tests and budget splits.  Kept in this function: numba
    # caches self-recursion fine but crashes on cached mutual recursion.
    F = XT.shape[0]
    counters[3] += 1
    best = leaf
    best_f = -1
    best_nl = 0
    cap = (1 << (d - 1)) - 1
    # the optimum for the largest smaller budget already solved is an incumbent (a larger budget never
    # does worse); its children keep at least their budgets: n_left' = max(n_left, n - 1 - cap)
    for nn in range(n - 1, 0, -1):
        sp = cache_find(keys, h1, h2, _norm(d, nn), nn)
        if sp >= 0 and entry_optimal(vals, sp) == 1:
            if vals[sp, 0] < best:
                best = widen(vals[sp, 0])
                best_f = entry_feature(vals, sp)
                best_nl = entry_nleft(vals, sp)
                if best_f >= 0 and n - 1 - best_nl > cap:
                    best_nl = n - 1 - cap
            break
    rlb = cost_inf(cm)  # smallest lower bound among the candidates that were not beaten
    rl = 2 * lvl + 1
    rr = 2 * lvl + 2
    lo_nl = n - 1 - cap if n - 1 - cap > 0 else 0
    hi_nl = cap if cap < n - 1 else n - 1
    order = forder[lvl]
    _gini_order(XT, y, bufs[row], m, cnt, order)
    for fi in range(F):
        if best <= lb:
            break
        # read per test: with thousands of tests, a node whose candidates are all pruned by bounds never calls
        # ``solve`` (where the flag is read), and its splits alone ran seconds past a time limit
        if flag[0] != 0:
            return _stopped(status, lvl, best, best_f, best_nl)
        f = order[fi]
        ml, mr, hl1, hl2, hr1, hr2 = _split(XT, y, z1, z2, bufs, cnts, row, m, f, rl, rr)
        if ml < min_leaf or mr < min_leaf:
            continue
        cl = cnts[rl]
        cr = cnts[rr]
        left_first = leaf_cost(cl, cl.shape[0], cm) >= leaf_cost(cr, cr.shape[0], cm)
        for nl in range(lo_nl, hi_nl + 1):
            if best <= lb:
                break
            nr = n - 1 - nl
            dl = _norm(d - 1, nl)
            dr = _norm(d - 1, nr)
            bm = below(best)  # a split must be strictly better than the incumbent
            ubs = ub if ub < bm else bm
            lbl = _known_lb(ws, ml, cl, hl1, hl2, dl, nl)
            lbr = _known_lb(ws, mr, cr, hr1, hr2, dr, nr)
            if lbl + lbr > ubs:
                if lbl + lbr < rlb:
                    rlb = lbl + lbr
                continue
            if left_first:
                c1 = solve(ws, lvl + 1, rl, ml, hl1, hl2, dl, nl, ubs - lbr)
                if c1 < 0:
                    return _stopped(status, lvl, best, best_f, best_nl)
                if c1 > ubs - lbr:
                    if c1 + lbr < rlb:
                        rlb = c1 + lbr
                    continue
                c2 = solve(ws, lvl + 1, rr, mr, hr1, hr2, dr, nr, ubs - c1)
                if c2 < 0:
                    return _stopped(status, lvl, best, best_f, best_nl)
                if c2 > ubs - c1:
                    if c1 + c2 < rlb:
                        rlb = c1 + c2
                    continue
            else:
                c2 = solve(ws, lvl + 1, rr, mr, hr1, hr2, dr, nr, ubs - lbl)
                if c2 < 0:
                    return _stopped(status, lvl, best, best_f, best_nl)
                if c2 > ubs - lbl:
                    if c2 + lbl < rlb:
                        rlb = c2 + lbl
                    continue
                c1 = solve(ws, lvl + 1, rl, ml, hl1, hl2, dl, nl, ubs - c2)
                if c1 < 0:
                    return _stopped(status, lvl, best, best_f, best_nl)
                if c1 > ubs - c2:
                    if c1 + c2 < rlb:
                        rlb = c1 + c2
                    continue
            best = c1 + c2
            best_f = f
            best_nl = nl
    if flag[0] != 0 or status[0] != 0:
        return _stopped(status, lvl, best, best_f, best_nl)
    inst = bufs[row]
    if best <= ub:
        cache_put(keys, vals, meta, status, h1, h2, d, n, best, _ONE, best_f, best_nl)
        archive_put(arch_inst, arch_m, arch_h, arch_lb, row, inst, m, h1, h2, d, n, best)
        counters[1] = meta[0]
        return best
    # every candidate costs more than ub: the optimum is at least the smallest of their bounds
    nlb = rlb if rlb < best else best
    if nlb < above(ub):
        nlb = above(ub)
    if nlb < lb:
        nlb = lb
    cache_put(keys, vals, meta, status, h1, h2, d, n, nlb, _ZERO, _NONE, _ZERO)
    archive_put(arch_inst, arch_m, arch_h, arch_lb, row, inst, m, h1, h2, d, n, nlb)
    return nlb


@njit(nogil=True, cache=True)
def _stopped(status, lvl, best, best_f, best_nl):
    # the root keeps its incumbent (its children were solved to optimality) for an anytime answer
    if lvl == 0:
        status[1] = best
        status[2] = best_f
        status[3] = best_nl
    return -1


@njit(nogil=True, cache=True)
def _build(ws, lvl, row, m, h1, h2, d, n, force_f, force_nl, feat, left, right, value, nxt):
    """Write the optimal tree of a cached subproblem into flat arrays; returns the next free node."""
    (
        XT,
        y,
        z1,
        z2,
        bufs,
        cnts,
        keys,
        vals,
        meta,
        arch_inst,
        arch_m,
        arch_h,
        arch_lb,
        bits,
        S,
        P,
        act,
        prm,
        flag,
        counters,
        status,
        XR,
        bitsA,
        tmp,
        forder,
        cm,
    ) = ws
    me = nxt
    nxt += 1
    value[me, :] = cnts[row]
    feat[me] = -1
    left[me] = -1
    right[me] = -1
    f = force_f
    nl = force_nl
    if f == -2:
        if n == 0 or leaf_cost(cnts[row], cnts.shape[1], cm) == 0 or m < 2 * prm[0]:
            return nxt
        s = cache_find(keys, h1, h2, d, n)
        if s < 0 or entry_optimal(vals, s) == 0:
            # not cached: the children of a depth-2 tree are solved on demand, by the depth-2 solver
            # even after a stop (it is bounded and needs no flag; a depth-1 one counts no pair); deeper
            # ones by an unbounded search
            if d <= 2:
                depth2_store(
                    XR,
                    bufs[row],
                    m,
                    cnts[row],
                    prm[0],
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
                    row,
                    np.zeros(1, dtype=flag.dtype),
                    d - 1,
                    cm,
                )
            else:
                solve(ws, lvl, row, m, h1, h2, d, n, cost_inf(cm))
            s = cache_find(keys, h1, h2, d, n)
            if s < 0 or entry_optimal(vals, s) == 0:
                return -1
        f = entry_feature(vals, s)
        nl = entry_nleft(vals, s)
    if f < 0:
        return nxt
    nr = n - 1 - nl
    rl = 2 * lvl + 1
    rr = 2 * lvl + 2
    z0 = lvl - lvl  # run-time values, not literals (see solvers.murtree._solve_root)
    auto = z0 - 2
    ml, mr, hl1, hl2, hr1, hr2 = _split(XT, y, z1, z2, bufs, cnts, row, m, f, rl, rr)
    feat[me] = f
    left[me] = nxt
    nxt = _build(ws, lvl + 1, rl, ml, hl1, hl2, _norm(d - 1, nl), nl, auto, z0, feat, left, right, value, nxt)
    if nxt < 0:
        return -1
    # the left subtree's search may have reused row rr: split again
    ml, mr, hl1, hl2, hr1, hr2 = _split(XT, y, z1, z2, bufs, cnts, row, m, f, rl, rr)
    right[me] = nxt
    return _build(ws, lvl + 1, rr, mr, hr1, hr2, _norm(d - 1, nr), nr, auto, z0, feat, left, right, value, nxt)
