"""Rashomon sets: every canonical tree of a MurTree search space, best-first in order of errors (SORTD's idea).

A *subproblem* is a dataset (the rows reaching a node, given by its path), the depth left ``dd`` and an
*exact* number of splits ``s``; its *stream* is the sorted sequence of its canonical trees, extended lazily:

* ``s = 0``: the leaf (majority class);
* ``s = 1``: every single split whose two leaves hold rows and predict different classes, sorted (``LIST``);
* ``s >= 2``: a ``NODE``: a heap of entries ``(root test g, left splits sl, i, j)``, the tree made of the
  ``i``-th tree of the left child's stream ``(rows g = 0, dd - 1, sl)`` and the ``j``-th of the right
  child's ``(rows g = 1, dd - 1, s - 1 - sl)``.  An entry's key is a lower bound of its errors until both
  children's trees are materialised (then exact); popping an exact entry yields the next tree of the
  stream and pushes its successors ``(i + 1, j)`` (only from ``j = 0``) and ``(i, j + 1)``, so every pair
  is reached once (the lazy k-best sum of two sorted lists of Huang & Chiang).

Bounds (SORTD's first phase): the wrapper solves the root with MurTree first; a stream not yet opened is
bounded by MurTree's cached optimum or proven bound of its subproblem (``_fill_lb``, by the dataset's
Zobrist hash), so a candidate's key is tight before any of its children is searched.  A subproblem is
worked on only up to a bound (``_get``'s ``ub``: the next root stream's bound, less the sibling's bound
one level down), so a candidate that cannot reach the next tree is never expanded.

Canonical trees (each reached by one path of this recursion, so never twice): every leaf holds a row (a
test constant on a node's rows is not a split, which also rules out a test repeated on a path) and no
internal node has only leaves of one class.  Below a node with ``s >= 2`` splits one child is internal
and, canonical itself, predicts two classes; so the rule only removes single splits whose two leaves
agree, which ``LIST`` leaves out.

The root merges its streams ``s = 0..K`` by ``(errors, s)``: trees come out in non-decreasing errors,
fewer splits first on ties.  Depth-2 datasets count all their tests and pairs of tests at once with
bitsets (as MurTree's depth-2 solver), which gives the sorted single splits of each of their 2F children.

The weighted objective (``solvers.rashomon`` with ``sample_weight`` or ``costs``) runs the same code on rows
grouped by (class, weight), MurTree's groups: ``ds_cnt`` counts groups, ``cm[g, p]`` (``Workspace.cm``, int64, the
quanta of :class:`solvers.murtree._Weighted`) prices group ``g`` predicted as class ``p``, a leaf costs its least
``sum_g cnt[g] * cm[g, p]`` and predicts that class (lowest on ties), and "errors" below read "cost".  The
canonical rule is on those predictions.  A 1-D ``cm`` is the plain placeholder: :func:`leaf1`, :func:`leaf2`
and :func:`no_split` pick each variant's code at compile time, so the plain kernels compile to what they were.

Every structure lives in fixed pools (arrays of :data:`Workspace`); when one is full the run sets
``status = (1, pool)`` and unwinds with its state whole (children tables are published only when complete,
a popped heap entry goes back, a half-made heap is dropped), and the wrapper grows that pool (a copy) and goes
on where the run stopped: no work is redone.  Heaps order their entries totally (key, candidate, i, j), so the
trees come out the same whatever the pools' sizes.  A stop (``flag``, read between trees, between heap pops,
in the depth-2 pair counts and per test of their children) ends the run.
"""

from collections import namedtuple

import numpy as np
from numba import njit, uint64
from numba.extending import overload

from .murtree_cache import _plain, cache_find
from .murtree_d2 import pack_pairs

INF = np.int64(1) << 60

# stream kinds
EMPTY = 0
LEAF = 1
LIST = 2
NODE = 3

# dataset record columns (ds_i)
DD = 0  # depth left
PARENT = 1
G = 2  # parent's test
SIDE = 3  # 0: test false, 1: true
ROWS_OFF = 4  # own rows in ``rows``; -1: none (a depth-1 child of a depth-2 dataset, counted from pairs);
# ROWS_PARENT: not stored, the parent's rows on side SIDE of test G, gathered when needed (depth-2 children of
# depth-3 datasets: 2F of them per parent, most never searched, would take F x the parent's rows each)
ROWS_LEN = 5
CHILD_OFF = 6  # 2F child dataset ids in ``ipool`` (-1: not built)
STREAM_OFF = 7  # 2**DD stream ids in ``ipool`` (one per exact number of splits), then 2**DD lower bounds
FIRST_ERR = 8  # depth-1 children of depth-2 datasets: errors of the best single split (INF: none) ...
LIST_AT = 9  # ... and their sorted single splits: rows LIST_AT.. of ``lst``
LIST_N = 10
DS_COLS = 11
ROWS_PARENT = -2

# stream record columns (st_i)
KIND = 0
SDS = 1
SS = 2
SOL_OFF = 3  # trees found, in order: rows of ``sol`` (errors, entry's candidate, i, j)
SOL_LEN = 4
SOL_CAP = 5
HEAP_OFF = 6  # rows of ``heap`` (2 * errors + not exact, candidate, i, j)
HEAP_LEN = 7
HEAP_CAP = 8
LIST_OFF = 9  # rows of ``lst`` (errors, test); -1: not built yet
LIST_LEN = 10
INIT = 11
ST_COLS = 12

# frame columns of ``_get``'s stack
FR_ST = 0
FR_I = 1
FR_PH = 2  # 0: loop; 1: waiting for the left tree's errors; 2: for the right's
FR_C = 3
FR_A = 4
FR_B = 5
FR_KEY = 6
FR_LS = 7
FR_RS = 8
FR_EL = 9  # the left tree's errors (phase 2), the right's bound (phase 1)
FR_UB = 10  # the frame's bound: past it, a lower bound is returned instead of an exact tree
FR_COLS = 11

# pools (status[1] after an overflow; meta[pool] is the pool's fill)
P_DS = 0
P_ROWS = 1
P_IPOOL = 2
P_ST = 3
P_SOL = 4
P_HEAP = 5
P_CAND = 6
P_LIST = 7
N_POOLS = 8

Workspace = namedtuple(
    "Workspace",
    (
        "XT",  # tests x rows (0/1), rows sorted by class
        "XR",  # rows x tests
        "y",  # classes of the sorted rows
        "ds_i",  # datasets: DS_COLS int64 columns
        "ds_cnt",  # datasets: class counts
        "rows",  # int32 row pool (datasets of depth >= 2)
        "ipool",  # int64 pool: child tables and stream tables
        "st_i",  # streams: ST_COLS int64 columns
        "sol",  # (n, 4) trees of NODE streams
        "heap",  # (n, 4) heap entries of NODE streams
        "cand",  # (n, 4) candidates: (test, left splits, left stream, right stream)
        "lst",  # (n, 2) int32 LIST entries: (errors, test)
        "lcnt",  # (n, C) int32 LIST entries: class counts of the test-true leaf (a tree is written without its rows)
        "meta",  # fill of each pool
        "status",  # [overflow, pool, finished]
        "flag",  # the Control's stop flag
        "counters",  # the Control's progress counters: [trees, streams, datasets]
        "prm",  # [min_leaf]
        "bits",  # depth-2 counting: bitsets (words x tests)
        "bitsA",  # ... of the active tests
        "S",  # ... class counts per test
        "P",  # ... class counts per pair of active tests
        "act",  # ... active tests
        "ones",  # (F, C) scratch counts
        "scr",  # (2, N) int32 scratch rows
        "sort_key",  # (2F,) int64 scratch: sort keys, then (depth-2 counting) each test's index among the active ones
        "root",  # (K + 1, 2): root stream of each number of splits, next index
        "frames",  # (D + 2, FR_COLS) the explicit stack of ``_get`` (no recursion: a call passing ``ws`` costs
        # an atomic reference count per array)
        "z1",  # MurTree's Zobrist words of the rows (a dataset's hash is their sum) ...
        "z2",
        "keys",  # ... and its cache after solving the root: bounds of subproblems (murtree_cache)
        "vals",
        "ds_h",  # datasets: (h1, h2) uint64 (datasets with rows)
        "cm",  # the cost matrix (groups x classes, int64) of the weighted objective; 1-D placeholder: plain
    ),
)


@njit(nogil=True, cache=True, inline="always")
def _leaf(cnt):
    """(errors, majority class) of class counts; ties to the lowest class, as ``argmax``."""
    tot = 0
    mx = -1
    cls = 0
    for c in range(cnt.shape[0]):
        v = cnt[c]
        tot += v
        if v > mx:
            mx = v
            cls = c
    return tot - mx, cls


@njit(nogil=True, cache=True, inline="always")
def _leaf_row(cnts, k):
    """:func:`_leaf` of row ``k`` of a 2-D count array, and the row's total (no row view in hot paths)."""
    tot = 0
    mx = -1
    cls = 0
    for c in range(cnts.shape[1]):
        v = cnts[k, c]
        tot += v
        if v > mx:
            mx = v
            cls = c
    return tot - mx, cls, tot


@njit(nogil=True, cache=True)
def _leaf_w(cnt, cm):
    best = INF
    cls = 0
    for p in range(cm.shape[1]):
        v = np.int64(0)
        for g in range(cnt.shape[0]):
            v += cnt[g] * cm[g, p]
        if v < best:
            best = v
            cls = p
    return best, cls


@njit(nogil=True, cache=True)
def _leaf_row_w(cnts, k, cm):
    best, cls = _leaf_w(cnts[k], cm)
    return best, cls, cnts[k].sum()


@njit(nogil=True, cache=True)
def _no_split_w(cnts, k, cls, cm):
    for g in range(cnts.shape[1]):
        if cnts[k, g] > 0:
            for p in range(cm.shape[1]):
                if cm[g, p] < cm[g, cls] or (p < cls and cm[g, p] == cm[g, cls]):
                    return False
    return True


def leaf1(cnt, cm):
    """(cost, predicted class) of a leaf of counts ``cnt``: :func:`_leaf` when ``cm`` is the plain placeholder,
    else the least ``sum_g cnt[g] * cm[g, p]`` and its class, lowest on ties."""
    return _leaf(cnt) if cm.ndim == 1 else _leaf_w(cnt, cm)


@overload(leaf1, jit_options={"nogil": True})
def _leaf1(cnt, cm):
    if _plain(cm):
        return lambda cnt, cm: _leaf(cnt)
    return lambda cnt, cm: _leaf_w(cnt, cm)


def leaf2(cnts, k, cm):
    """:func:`leaf1` of row ``k`` of a 2-D count array, and the row's total (:func:`_leaf_row` when plain)."""
    return _leaf_row(cnts, k) if cm.ndim == 1 else _leaf_row_w(cnts, k, cm)


@overload(leaf2, jit_options={"nogil": True})
def _leaf2(cnts, k, cm):
    if _plain(cm):
        return lambda cnts, k, cm: _leaf_row(cnts, k)
    return lambda cnts, k, cm: _leaf_row_w(cnts, k, cm)


def no_split(cnts, k, err, cls, cm):
    """True when no canonical tree of dataset ``k`` (cost ``err``, predicting ``cls``) has a split: every leaf
    under it would predict ``cls``.  Plain: a pure node (``err == 0``).  Weighted: every group present prefers
    ``cls`` (strictly to each lower class), so every nonempty subset of its rows predicts ``cls``."""
    return err == 0 if cm.ndim == 1 else _no_split_w(cnts, k, cls, cm)


@overload(no_split, jit_options={"nogil": True})
def _no_split(cnts, k, err, cls, cm):
    if _plain(cm):
        return lambda cnts, k, err, cls, cm: err == 0
    return lambda cnts, k, err, cls, cm: _no_split_w(cnts, k, cls, cm)


@njit(nogil=True, cache=True, inline="always")
def _full(ws, pool):
    ws.status[0] = 1
    ws.status[1] = pool


@njit(nogil=True, cache=True, inline="always")
def _new_ds(ws, dd, parent, g, side, cnt):
    k = ws.meta[P_DS]
    ns = np.int64(1) << dd
    off = ws.meta[P_IPOOL]
    if k >= ws.ds_i.shape[0]:
        _full(ws, P_DS)
        return -1
    if off + 2 * ns > ws.ipool.shape[0]:
        _full(ws, P_IPOOL)
        return -1
    ws.ipool[off : off + ns] = -1
    ws.ipool[off + ns : off + 2 * ns] = 0  # lower bounds of each stream's first tree (see _fill_lb)
    ws.meta[P_IPOOL] = off + 2 * ns
    r = ws.ds_i[k]
    r[:] = -1
    r[DD] = dd
    r[PARENT] = parent
    r[G] = g
    r[SIDE] = side
    r[ROWS_LEN] = 0
    r[STREAM_OFF] = off
    r[FIRST_ERR] = INF
    ws.ds_cnt[k, :] = cnt
    ws.meta[P_DS] = k + 1
    ws.counters[2] = k + 1
    return k


@njit(nogil=True, cache=True, inline="always")
def _store_rows(ws, k, src, m):
    off = ws.meta[P_ROWS]
    if off + m > ws.rows.shape[0]:
        _full(ws, P_ROWS)
        return False
    ws.rows[off : off + m] = src[:m]
    ws.meta[P_ROWS] = off + m
    ws.ds_i[k, ROWS_OFF] = off
    ws.ds_i[k, ROWS_LEN] = m
    return True


@njit(nogil=True, cache=True, inline="always")
def _child_table(ws, k, F):
    off = ws.meta[P_IPOOL]
    if off + 2 * F > ws.ipool.shape[0]:
        _full(ws, P_IPOOL)
        return -1
    ws.ipool[off : off + 2 * F] = -1
    ws.meta[P_IPOOL] = off + 2 * F
    return off  # CHILD_OFF is set by the caller once every child is made: a full pool leaves none half-made


@njit(nogil=True, cache=True, inline="always")
def _rows_of(ws, k):
    """The rows of dataset ``k`` (rows ``0..ROWS_LEN - 1`` of the result): its own, or gathered from its
    parent's into ``scr[0]`` (ROWS_PARENT)."""
    off = ws.ds_i[k, ROWS_OFF]
    m = ws.ds_i[k, ROWS_LEN]
    if off >= 0:
        return ws.rows[off : off + m]
    p = ws.ds_i[k, PARENT]
    g = ws.ds_i[k, G]
    side = ws.ds_i[k, SIDE]
    po = ws.ds_i[p, ROWS_OFF]
    rows = ws.rows
    XT = ws.XT
    buf = ws.scr[0]
    n = 0
    for t in range(ws.ds_i[p, ROWS_LEN]):
        i = rows[po + t]
        if XT[g, i] == side:
            buf[n] = i
            n += 1
    return buf[:n]


@njit(nogil=True, cache=True)
def _build_list(ws, st):
    """Every canonical single split of the stream's dataset, sorted by (errors, test)."""
    k = ws.st_i[st, SDS]
    XR = ws.XR
    y = ws.y
    F = XR.shape[1]
    ones = ws.ones
    ones[:, :] = 0
    rows = _rows_of(ws, k)  # a dataset with rows (depth-1 children of depth-2 ones are counted apart)
    for t in range(rows.shape[0]):
        i = rows[t]
        c = y[i]
        for f in range(F):
            ones[f, c] += XR[i, f]
    cnt = ws.ds_cnt[k]
    m = cnt.sum()
    min_leaf = ws.prm[0]
    key = ws.sort_key
    cm = ws.cm
    plain = cm.ndim == 1  # weighted costs reach 2**50: (cost, test) sorted stably, not packed in one key
    n = 0
    left = np.empty(cnt.shape[0], dtype=np.int64)
    for f in range(F):
        nr = ones[f].sum()
        if nr < min_leaf or m - nr < min_leaf:
            continue
        for c in range(cnt.shape[0]):
            left[c] = cnt[c] - ones[f, c]
        el, cl = leaf1(left, cm)
        er, cr = leaf1(ones[f], cm)
        if cl == cr:
            continue
        if plain:
            key[n] = (el + er) * F + f
        else:
            key[n] = el + er
            key[F + n] = f
        n += 1
    off = ws.meta[P_LIST]
    if off + n > ws.lst.shape[0]:
        _full(ws, P_LIST)
        return False
    if plain:
        srt = np.sort(key[:n])
        for t in range(n):
            f = srt[t] % F
            ws.lst[off + t, 0] = srt[t] // F
            ws.lst[off + t, 1] = f
            ws.lcnt[off + t, :] = ones[f]
    else:
        order = np.argsort(key[:n], kind="mergesort")  # stable: ties keep the tests' order
        for t in range(n):
            f = key[F + order[t]]
            ws.lst[off + t, 0] = key[order[t]]
            ws.lst[off + t, 1] = f
            ws.lcnt[off + t, :] = ones[f]
    ws.meta[P_LIST] = off + n
    ws.st_i[st, LIST_OFF] = off
    ws.st_i[st, LIST_LEN] = n
    return True


@njit(nogil=True, cache=True)
def _d2_children(ws, k):
    """Children of a depth-2 dataset (depth-1 datasets) with the sorted list of their canonical single splits,
    from the class counts of every pair of tests (no row is read again)."""
    F = ws.XR.shape[1]
    cnt = ws.ds_cnt[k]
    C = cnt.shape[0]
    coff = _child_table(ws, k, F)
    if coff < 0:
        return False
    inst = _rows_of(ws, k)
    m = inst.shape[0]
    # the stop flag is read per word of rows (thousands of tests: seconds of pair counts); a stopped count
    # returns False with no pool full (status[0] = 0), which the callers pass up as a stop: the state is dropped
    n_act = pack_pairs(ws.XR, inst, m, cnt, ws.prm[0], ws.bits, ws.bitsA, ws.S, ws.P, ws.act, ws.flag, np.int64(1))
    if n_act < 0:
        return False
    S = ws.S
    P = ws.P
    act = ws.act
    min_leaf = ws.prm[0]
    key = ws.sort_key
    cl = np.empty(C, dtype=np.int64)
    t0 = np.empty(C, dtype=np.int64)
    t1 = np.empty(C, dtype=np.int64)
    pos = ws.sort_key[F:]  # test -> its index among the active tests
    lst = ws.lst  # read once: a read of ``ws.x`` in a loop costs an atomic reference count
    lcnt = ws.lcnt
    ds_i = ws.ds_i
    ipool = ws.ipool
    meta = ws.meta
    for a in range(n_act):
        pos[act[a]] = a
    flag = ws.flag
    cm = ws.cm
    plain = cm.ndim == 1  # weighted: C counts groups, priced by cm; (cost, test) sorted stably
    hs = np.empty(max(n_act, 1), dtype=np.int64)
    for a in range(n_act):
        # with thousands of tests this loop is seconds (2 x n_act children, each a sort of n_act keys): the
        # stop flag is read per test, and a stop returns False with no pool full, as a stopped pair count
        if flag[0] != 0:
            return False
        g = act[a]
        for c in range(C):
            cl[c] = cnt[c] - S[g, c]
        for side in range(2):
            ch = _new_ds(ws, 1, k, g, side, cl if side == 0 else S[g])
            if ch < 0:
                return False
            ipool[coff + 2 * g + side] = ch
            n = 0
            for b in range(n_act):
                if b == a:
                    continue
                h = act[b]
                lo = min(a, b)
                hi = max(a, b)
                if C == 2 and plain:  # an error is the smaller count: no scratch arrays
                    p0 = np.int64(P[0, lo, hi])
                    p1 = np.int64(P[1, lo, hi])
                    if side == 0:  # g = 0: h = 1 holds S[h] - p, h = 0 the rest
                        u0 = S[h, 0] - p0
                        u1 = S[h, 1] - p1
                        z0 = cnt[0] - S[g, 0] - u0
                        z1 = cnt[1] - S[g, 1] - u1
                    else:
                        u0 = p0
                        u1 = p1
                        z0 = S[g, 0] - p0
                        z1 = S[g, 1] - p1
                    if (z0 >= z1) != (u0 >= u1) and z0 + z1 >= min_leaf and u0 + u1 >= min_leaf:
                        key[n] = (min(z0, z1) + min(u0, u1)) * F + h
                        n += 1
                    continue
                for c in range(C):
                    p = np.int64(P[c, lo, hi])
                    if side == 0:
                        t1[c] = S[h, c] - p
                        t0[c] = cnt[c] - S[g, c] - t1[c]
                    else:
                        t1[c] = p
                        t0[c] = S[g, c] - p
                e0, c0 = leaf1(t0, cm)
                e1, c1 = leaf1(t1, cm)
                if c0 != c1 and t0.sum() >= min_leaf and t1.sum() >= min_leaf:
                    if plain:
                        key[n] = (e0 + e1) * F + h
                    else:
                        key[n] = e0 + e1
                        hs[n] = h
                    n += 1
            lo_ = meta[P_LIST]
            if lo_ + n > lst.shape[0]:
                _full(ws, P_LIST)
                return False
            if plain:
                srt = np.sort(key[:n])
            else:
                order = np.argsort(key[:n], kind="mergesort")  # stable: ties keep the tests' order
            for t in range(n):
                if plain:
                    h = srt[t] % F
                    lst[lo_ + t, 0] = srt[t] // F
                else:
                    h = hs[order[t]]
                    lst[lo_ + t, 0] = key[order[t]]
                lst[lo_ + t, 1] = h
                b = pos[h]
                lo = min(a, b)
                hi = max(a, b)
                for c in range(C):
                    p = np.int64(P[c, lo, hi])
                    lcnt[lo_ + t, c] = S[h, c] - p if side == 0 else p
            meta[P_LIST] = lo_ + n
            ds_i[ch, FIRST_ERR] = lst[lo_, 0] if n > 0 else INF
            ds_i[ch, LIST_AT] = lo_
            ds_i[ch, LIST_N] = n
    ds_i[k, CHILD_OFF] = coff
    return True


@njit(nogil=True, cache=True)
def _children(ws, k):
    """Children of a dataset of depth >= 3: every test's two sides, with their rows."""
    XT = ws.XT
    y = ws.y
    F = XT.shape[0]
    dd = ws.ds_i[k, DD]
    off = ws.ds_i[k, ROWS_OFF]
    m = ws.ds_i[k, ROWS_LEN]
    C = ws.ds_cnt.shape[1]
    coff = _child_table(ws, k, F)
    if coff < 0:
        return False
    min_leaf = ws.prm[0]
    cl = np.empty(C, dtype=np.int64)
    cr = np.empty(C, dtype=np.int64)
    bl = ws.scr[0]
    br = ws.scr[1]
    rows = ws.rows
    z1 = ws.z1
    z2 = ws.z2
    for g in range(F):
        ml = 0
        mr = 0
        cl[:] = 0
        cr[:] = 0
        hl1 = uint64(0)
        hl2 = uint64(0)
        hr1 = uint64(0)
        hr2 = uint64(0)
        for t in range(m):
            i = rows[off + t]
            if XT[g, i]:
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
        if ml < min_leaf or mr < min_leaf:
            continue
        L = _new_ds(ws, dd - 1, k, g, 0, cl)
        if L < 0:
            return False
        R = _new_ds(ws, dd - 1, k, g, 1, cr)
        if R < 0:
            return False
        if dd - 1 == 2:  # rows gathered from ours when needed (_rows_of)
            ws.ds_i[L, ROWS_OFF] = ROWS_PARENT
            ws.ds_i[L, ROWS_LEN] = ml
            ws.ds_i[R, ROWS_OFF] = ROWS_PARENT
            ws.ds_i[R, ROWS_LEN] = mr
        elif not (_store_rows(ws, L, bl, ml) and _store_rows(ws, R, br, mr)):
            return False
        ws.ds_h[L, 0] = hl1
        ws.ds_h[L, 1] = hl2
        ws.ds_h[R, 0] = hr1
        ws.ds_h[R, 1] = hr2
        _fill_lb(ws, L)
        _fill_lb(ws, R)
        ws.ipool[coff + 2 * g] = L
        ws.ipool[coff + 2 * g + 1] = R
    ws.ds_i[k, CHILD_OFF] = coff
    return True


@njit(nogil=True, cache=True, inline="always")
def _fill_lb(ws, k):
    """Lower bounds of the first tree of each stream of dataset ``k`` from MurTree's cache (``s`` exact splits
    cost at least the optimum, or a proven bound, of at most ``s`` or of any larger budget)."""
    dd = ws.ds_i[k, DD]
    ns = np.int64(1) << dd
    tab = ws.ds_i[k, STREAM_OFF] + ns
    h1 = ws.ds_h[k, 0]
    h2 = ws.ds_h[k, 1]
    keys = ws.keys
    best = np.int64(0)
    for b in range(ns - 1, 0, -1):
        q = cache_find(keys, h1, h2, min(dd, b), b)
        if q >= 0 and ws.vals[q, 0] > best:
            best = ws.vals[q, 0]
        ws.ipool[tab + b] = best


@njit(nogil=True, cache=True, inline="always")
def _stream(ws, k, s):
    """The stream of dataset ``k`` with exactly ``s`` splits (created on first use); -1 on a full pool."""
    so = ws.ds_i[k, STREAM_OFF]
    sid = ws.ipool[so + s]
    if sid >= 0:
        return sid
    sid = ws.meta[P_ST]
    if sid >= ws.st_i.shape[0]:
        _full(ws, P_ST)
        return -1
    r = ws.st_i[sid]
    r[:] = -1
    r[SDS] = k
    r[SS] = s
    r[SOL_LEN] = 0
    r[SOL_CAP] = 0
    r[HEAP_LEN] = 0
    r[HEAP_CAP] = 0
    r[INIT] = 0
    err, cls, m = leaf2(ws.ds_cnt, k, ws.cm)
    if s == 0:
        r[KIND] = LEAF
    elif m < 2 * ws.prm[0] or no_split(ws.ds_cnt, k, err, cls, ws.cm):
        r[KIND] = EMPTY  # a pure node: any split leaves two leaves of its class
    elif s == 1:
        r[KIND] = LIST
    else:
        r[KIND] = NODE
    if r[KIND] == LIST and ws.ds_i[k, ROWS_OFF] == -1:  # a depth-1 child of a depth-2 node: counted already
        r[LIST_OFF] = ws.ds_i[k, LIST_AT]
        r[LIST_LEN] = ws.ds_i[k, LIST_N]
    ws.meta[P_ST] = sid + 1
    ws.ipool[so + s] = sid
    ws.counters[1] = sid + 1
    return sid


@njit(nogil=True, cache=True, inline="always")
def _simple_at(st_i, ds_cnt, lst, cm, st, i):
    """Errors of the ``i``-th tree of a LEAF, LIST or EMPTY stream (INF past the end); -2 when the LIST is not
    built yet.  Arrays, not the workspace: each read of a workspace field is an atomic reference count."""
    kind = st_i[st, KIND]
    if kind == EMPTY:
        return INF
    if kind == LEAF:
        if i == 0:
            e, _, _ = leaf2(ds_cnt, st_i[st, SDS], cm)
            return e
        return INF
    lo = st_i[st, LIST_OFF]
    if lo < 0:
        return -2
    if i < st_i[st, LIST_LEN]:
        return lst[lo + i, 0]
    return INF


@njit(nogil=True, cache=True, inline="always")
def _simple_get(ws, st, i):
    """Errors of the ``i``-th tree of a LEAF, LIST or EMPTY stream (INF past the end); -1 on a full pool."""
    v = _simple_at(ws.st_i, ws.ds_cnt, ws.lst, ws.cm, st, i)
    if v != -2:
        return v
    if not _build_list(ws, st):
        return -1
    return _simple_at(ws.st_i, ws.ds_cnt, ws.lst, ws.cm, st, i)


@njit(nogil=True, cache=True, inline="always")
def _grow_region(r, meta, status, st, pool, col_off, col_len, col_cap, arr, need):
    """Make room for ``need`` rows in a stream's region of ``arr`` (moved to the pool's end, doubled)."""
    if r[st, col_len] + need <= r[st, col_cap]:
        return True
    cap = max(2 * r[st, col_cap], r[st, col_len] + need, 8)
    top = meta[pool]
    if top + cap > arr.shape[0]:
        status[0] = 1
        status[1] = pool
        return False
    old = r[st, col_off]
    for t in range(r[st, col_len]):
        for q in range(arr.shape[1]):  # no row views: each would cost an atomic reference count
            arr[top + t, q] = arr[old + t, q]
    r[st, col_off] = top
    r[st, col_cap] = cap
    meta[pool] = top + cap
    return True


@njit(nogil=True, cache=True, inline="always")
def _before(k0, c0, a0, b0, k1, c1, a1, b1):
    """Entry 1 before entry 0 in the heap's total order (key, candidate, i, j): ties never depend on the order
    of pushes, so a run whose pools grew gives the same trees in the same order."""
    if k1 != k0:
        return k1 < k0
    if c1 != c0:
        return c1 < c0
    if a1 != a0:
        return a1 < a0
    return b1 < b0


@njit(nogil=True, cache=True, inline="always")
def _push(h, st_i, meta, status, st, key, c, a, b):
    if not _grow_region(st_i, meta, status, st, P_HEAP, HEAP_OFF, HEAP_LEN, HEAP_CAP, h, 1):
        return False
    off = st_i[st, HEAP_OFF]
    n = st_i[st, HEAP_LEN]
    pos = n
    while pos > 0:
        par = (pos - 1) >> 1
        if not _before(h[off + par, 0], h[off + par, 1], h[off + par, 2], h[off + par, 3], key, c, a, b):
            break
        for q in range(4):
            h[off + pos, q] = h[off + par, q]
        pos = par
    h[off + pos, 0] = key
    h[off + pos, 1] = c
    h[off + pos, 2] = a
    h[off + pos, 3] = b
    st_i[st, HEAP_LEN] = n + 1
    return True


@njit(nogil=True, cache=True, inline="always")
def _pop(h, st_i, st, out):
    off = st_i[st, HEAP_OFF]
    n = st_i[st, HEAP_LEN] - 1
    for q in range(4):
        out[q] = h[off, q]
    st_i[st, HEAP_LEN] = n
    if n == 0:
        return
    last0 = h[off + n, 0]
    last1 = h[off + n, 1]
    last2 = h[off + n, 2]
    last3 = h[off + n, 3]
    pos = 0
    while True:
        ch = 2 * pos + 1
        if ch >= n:
            break
        r = off + ch
        if ch + 1 < n and _before(
            h[r, 0], h[r, 1], h[r, 2], h[r, 3], h[r + 1, 0], h[r + 1, 1], h[r + 1, 2], h[r + 1, 3]
        ):
            ch += 1
            r += 1
        if not _before(last0, last1, last2, last3, h[r, 0], h[r, 1], h[r, 2], h[r, 3]):
            break
        for q in range(4):
            h[off + pos, q] = h[off + ch, q]
        pos = ch
    h[off + pos, 0] = last0
    h[off + pos, 1] = last1
    h[off + pos, 2] = last2
    h[off + pos, 3] = last3


@njit(nogil=True, cache=True, inline="always")
def _table_lb(ipool, ds_i, k, s):
    return ipool[ds_i[k, STREAM_OFF] + (np.int64(1) << ds_i[k, DD]) + s]


@njit(nogil=True, cache=True, inline="always")
def _sbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, st, i):
    """What is known of the ``i``-th tree of stream ``st`` without work: ``2 * errors`` when exact (``INF``:
    none), ``2 * bound + 1`` for a lower bound."""
    kind = st_i[st, KIND]
    if kind == EMPTY:
        return 2 * INF
    k = st_i[st, SDS]
    if kind == LEAF:
        if i == 0:
            e, _, _ = leaf2(ds_cnt, k, cm)
            return 2 * e
        return 2 * INF
    if kind == LIST:
        lo = st_i[st, LIST_OFF]
        if lo >= 0:
            return 2 * lst[lo + i, 0] if i < st_i[st, LIST_LEN] else 2 * INF
        return 2 * _table_lb(ipool, ds_i, k, 1) + 1
    if i < st_i[st, SOL_LEN]:
        return 2 * sol[st_i[st, SOL_OFF] + i, 0]
    if st_i[st, INIT] == 0:
        return 2 * _table_lb(ipool, ds_i, k, st_i[st, SS]) + 1
    if st_i[st, HEAP_LEN] == 0:
        return 2 * INF
    return heap[st_i[st, HEAP_OFF], 0] | 1


@njit(nogil=True, cache=True, inline="always")
def _dbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, min_leaf, k, s):
    """:func:`_sbound` of the first tree of dataset ``k`` with ``s`` splits, its stream not necessarily made."""
    sid = ipool[ds_i[k, STREAM_OFF] + s]
    if sid >= 0:
        return _sbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, sid, 0)
    err, cls, m = leaf2(ds_cnt, k, cm)
    if s == 0:
        return 2 * err
    if m < 2 * min_leaf or no_split(ds_cnt, k, err, cls, cm):
        return 2 * INF
    if s == 1 and ds_i[k, ROWS_OFF] == -1:
        return 2 * ds_i[k, FIRST_ERR]
    return 2 * _table_lb(ipool, ds_i, k, s) + 1


@njit(nogil=True, cache=True)
def _node_init(ws, st):
    """Candidates of a NODE stream: every test and left budget, keyed by what is known of their best tree
    (exact from counts, else MurTree's bounds); candidates with no tree on a side are left out."""
    k = ws.st_i[st, SDS]
    s = ws.st_i[st, SS]
    dd = ws.ds_i[k, DD]
    F = ws.XT.shape[0]
    if ws.ds_i[k, CHILD_OFF] < 0:
        if dd == 2:
            if not _d2_children(ws, k):
                return False
        elif not _children(ws, k):
            return False
    # each field read once: a read of ``ws.x`` in the loop costs an atomic reference count
    st_i = ws.st_i
    ds_i = ws.ds_i
    ds_cnt = ws.ds_cnt
    ipool = ws.ipool
    lst = ws.lst
    sol = ws.sol
    heap = ws.heap
    cand = ws.cand
    meta = ws.meta
    status = ws.status
    cm = ws.cm
    min_leaf = ws.prm[0]
    coff = ds_i[k, CHILD_OFF]
    st_i[st, HEAP_LEN] = 0  # entries of an attempt cut short by a full pool (INIT is still 0)
    cap = (np.int64(1) << (dd - 1)) - 1
    lo = max(0, s - 1 - cap)
    hi = min(cap, s - 1)
    for g in range(F):
        L = ipool[coff + 2 * g]
        if L < 0:
            continue
        R = ipool[coff + 2 * g + 1]
        for sl in range(lo, hi + 1):
            sr = s - 1 - sl
            el = _dbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, min_leaf, L, sl)
            if el >= 2 * INF:
                continue
            er = _dbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, min_leaf, R, sr)
            if er >= 2 * INF:
                continue
            c = meta[P_CAND]
            if c >= cand.shape[0]:
                status[0] = 1
                status[1] = P_CAND
                return False
            cand[c, 0] = g
            cand[c, 1] = sl
            cand[c, 2] = -1  # streams created when the candidate is first popped
            cand[c, 3] = -1
            meta[P_CAND] = c + 1
            if not _push(heap, st_i, meta, status, st, 2 * ((el >> 1) + (er >> 1)) + ((el | er) & 1), c, 0, 0):
                return False
    st_i[st, INIT] = 1
    return True


@njit(nogil=True, cache=True, inline="always")
def _open(ws, st, c):
    """The two child streams of candidate ``c`` of NODE stream ``st`` (created on its first pop); False if full."""
    cand = ws.cand
    if cand[c, 2] >= 0 and cand[c, 3] >= 0:
        return True
    k = ws.st_i[st, SDS]
    coff = ws.ds_i[k, CHILD_OFF]
    g = cand[c, 0]
    sl = cand[c, 1]
    if cand[c, 2] < 0:
        ls = _stream(ws, ws.ipool[coff + 2 * g], sl)
        if ls < 0:
            return False
        cand[c, 2] = ls
    if cand[c, 3] < 0:
        rs = _stream(ws, ws.ipool[coff + 2 * g + 1], ws.st_i[st, SS] - 1 - sl)
        if rs < 0:
            return False
        cand[c, 3] = rs
    return True


@njit(nogil=True, cache=True, inline="always")
def _unwind(fr, d, heap, st_i, meta, status):
    """Put back the entries popped by frames ``0..d-1`` (each waiting for a child's tree): a stop for a full pool
    leaves every heap whole, and the run goes on once the pool has grown.  Each stream has the room (it lost
    the entry; its children are other streams)."""
    for j in range(d):
        _push(heap, st_i, meta, status, fr[j, FR_ST], fr[j, FR_KEY], fr[j, FR_C], fr[j, FR_A], fr[j, FR_B])


@njit(nogil=True, cache=True, inline="always")
def _get(ws, st0, i0, ub0):
    """The ``i0``-th tree of stream ``st0`` if its errors are at most ``ub0``: ``2 * errors`` (``INF``: no such
    tree), else ``2 * bound + 1`` with a lower bound above ``ub0``; -1 when stopped or full.

    A NODE stream pops its heap until its ``i0``-th tree is exact or its smallest key is above the bound.  An
    inexact entry needs its children's trees, got the same way one level down with the bound less the
    sibling's (MurTree's upper bounds): a stack of frames (``ws.frames``) instead of recursion.  An entry
    whose child is only bounded goes back with the better bound, above the frame's: no work is done for
    trees that cannot be reached within the bound.
    """
    st_i = ws.st_i
    if st_i[st0, KIND] != NODE:
        v = _simple_get(ws, st0, i0)
        return v if v < 0 else 2 * v
    fr = ws.frames
    cand = ws.cand
    heap = ws.heap  # fields read once: a read of ``ws.x`` in the loop costs an atomic reference count
    sol = ws.sol
    flag = ws.flag
    status = ws.status
    ds_i = ws.ds_i
    ds_cnt = ws.ds_cnt
    ipool = ws.ipool
    lst = ws.lst
    meta = ws.meta
    cm = ws.cm
    top = fr[fr.shape[0] - 1, :4]  # the last row is scratch for a popped entry
    d = 0
    fr[0, FR_ST] = st0
    fr[0, FR_I] = i0
    fr[0, FR_PH] = 0
    fr[0, FR_UB] = ub0
    ret = np.int64(0)
    while True:
        st = fr[d, FR_ST]
        ph = fr[d, FR_PH]
        if ph == 0:
            if st_i[st, INIT] == 0:
                if not _node_init(ws, st):
                    _unwind(fr, d, heap, st_i, meta, status)
                    return -1
            i = fr[d, FR_I]
            done = True
            if st_i[st, SOL_LEN] > i:
                ret = 2 * sol[st_i[st, SOL_OFF] + i, 0]
            elif st_i[st, HEAP_LEN] == 0:
                ret = 2 * INF
            elif (heap[st_i[st, HEAP_OFF], 0] >> 1) > fr[d, FR_UB]:
                ret = heap[st_i[st, HEAP_OFF], 0] | 1
            else:
                done = False
            if done:
                if d == 0:
                    return ret
                d -= 1
                continue
            if flag[0] != 0 or status[0] != 0:
                _unwind(fr, d, heap, st_i, meta, status)
                return -1
            # room first (a tree and its two successors): past the pop nothing can fill a pool but a child's
            # streams or lists, and then the popped entries go back (the run goes on after the pool grows)
            if not (
                _grow_region(st_i, meta, status, st, P_SOL, SOL_OFF, SOL_LEN, SOL_CAP, sol, 1)
                and _grow_region(st_i, meta, status, st, P_HEAP, HEAP_OFF, HEAP_LEN, HEAP_CAP, heap, 1)
            ):
                _unwind(fr, d, heap, st_i, meta, status)
                return -1
            _pop(heap, st_i, st, top)
            key = top[0]
            c = top[1]
            a = top[2]
            b = top[3]
            if (cand[c, 2] < 0 or cand[c, 3] < 0) and not _open(ws, st, c):
                _push(heap, st_i, meta, status, st, key, c, a, b)
                _unwind(fr, d, heap, st_i, meta, status)
                return -1
            if key & 1 == 0:  # exact: the stream's next tree
                n = st_i[st, SOL_LEN]
                q = st_i[st, SOL_OFF] + n
                sol[q, 0] = key >> 1
                sol[q, 1] = c
                sol[q, 2] = a
                sol[q, 3] = b
                st_i[st, SOL_LEN] = n + 1
                if b == 0 and not _push(heap, st_i, meta, status, st, key | 1, c, a + 1, b):
                    return -1
                if not _push(heap, st_i, meta, status, st, key | 1, c, a, b + 1):
                    return -1
                continue
            er = _sbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, cand[c, 3], b)
            if er >= 2 * INF:
                continue  # the right child has no ``b``-th tree
            fr[d, FR_KEY] = key
            fr[d, FR_C] = c
            fr[d, FR_A] = a
            fr[d, FR_B] = b
            fr[d, FR_EL] = er >> 1
            ls = cand[c, 2]
            if st_i[ls, KIND] == NODE:  # the left tree's errors from a frame below
                fr[d, FR_PH] = 1
                d += 1
                fr[d, FR_ST] = ls
                fr[d, FR_I] = a
                fr[d, FR_PH] = 0
                fr[d, FR_UB] = fr[d - 1, FR_UB] - (er >> 1)
                continue
            v = _simple_at(st_i, ds_cnt, lst, cm, ls, a)
            if v == -2:
                v = _simple_get(ws, ls, a)
            if v < 0:
                _unwind(fr, d + 1, heap, st_i, meta, status)
                return -1
            ret = 2 * v
            ph = 1
        if ph == 1:  # ret: the left tree (or its bound)
            fr[d, FR_PH] = 0
            el = ret >> 1
            if el >= INF:
                continue
            if ret & 1:
                if not _push(
                    heap, st_i, meta, status, st, 2 * (el + fr[d, FR_EL]) + 1, fr[d, FR_C], fr[d, FR_A], fr[d, FR_B]
                ):
                    return -1
                continue
            fr[d, FR_EL] = el
            rs = cand[fr[d, FR_C], 3]
            b = fr[d, FR_B]
            if st_i[rs, KIND] == NODE:
                fr[d, FR_PH] = 2
                d += 1
                fr[d, FR_ST] = rs
                fr[d, FR_I] = b
                fr[d, FR_PH] = 0
                fr[d, FR_UB] = fr[d - 1, FR_UB] - el
                continue
            v = _simple_at(st_i, ds_cnt, lst, cm, rs, b)
            if v == -2:
                v = _simple_get(ws, rs, b)
            if v < 0:
                _unwind(fr, d + 1, heap, st_i, meta, status)
                return -1
            ret = 2 * v
        # ph 2 (or 1 with a simple right child): ret is the right tree (or its bound)
        fr[d, FR_PH] = 0
        if (ret >> 1) >= INF:
            continue
        key = 2 * (fr[d, FR_EL] + (ret >> 1)) + (ret & 1)
        if not _push(heap, st_i, meta, status, st, key, fr[d, FR_C], fr[d, FR_A], fr[d, FR_B]):
            return -1


@njit(nogil=True, cache=True, inline="always")
def _write(ws, st0, i0, feat, left, right, value):
    """Write the ``i0``-th tree of stream ``st0`` (materialised) as flat arrays in preorder; number of nodes.

    A stack of (stream, index, parent node, side) in ``ws.frames`` instead of recursion.
    """
    fr = ws.frames
    st_i = ws.st_i  # each field read once: a read of ``ws.x`` in the loop costs an atomic reference count
    ds_cnt = ws.ds_cnt
    lst = ws.lst
    lcnt = ws.lcnt
    sol = ws.sol
    cand = ws.cand
    C = ds_cnt.shape[1]
    sp = 1
    fr[0, 0] = st0
    fr[0, 1] = i0
    fr[0, 2] = -1
    fr[0, 3] = 0
    nxt = 0
    while sp > 0:
        sp -= 1
        st = fr[sp, 0]
        i = fr[sp, 1]
        par = fr[sp, 2]
        me = nxt
        nxt += 1
        if par >= 0:
            if fr[sp, 3] == 0:
                left[par] = me
            else:
                right[par] = me
        k = st_i[st, SDS]
        for c in range(C):
            value[me, c] = ds_cnt[k, c]
        feat[me] = -1
        left[me] = -1
        right[me] = -1
        kind = st_i[st, KIND]
        if kind == LEAF:
            continue
        if kind == LIST:
            lo = st_i[st, LIST_OFF]
            feat[me] = lst[lo + i, 1]
            for c in range(C):
                value[nxt + 1, c] = lcnt[lo + i, c]
            for c in range(C):
                value[nxt, c] = ds_cnt[k, c] - value[nxt + 1, c]
            left[me] = nxt
            right[me] = nxt + 1
            for q in range(nxt, nxt + 2):
                feat[q] = -1
                left[q] = -1
                right[q] = -1
            nxt += 2
            continue
        row = st_i[st, SOL_OFF] + i
        c = sol[row, 1]
        feat[me] = cand[c, 0]
        # right first: the left subtree is popped (and numbered) first
        fr[sp, 0] = cand[c, 3]
        fr[sp, 1] = sol[row, 3]
        fr[sp, 2] = me
        fr[sp, 3] = 1
        fr[sp + 1, 0] = cand[c, 2]
        fr[sp + 1, 1] = sol[row, 2]
        fr[sp + 1, 2] = me
        fr[sp + 1, 3] = 0
        sp += 2
    return nxt


@njit(nogil=True, cache=True)
def enumerate_trees(
    ws, done, stop, write_from, max_key, wq, wp, out_feat, out_left, out_right, out_value, out_err, out_s
):
    """Trees ``done..stop-1`` of the root's order (the key ``wq * errors + wp * splits``, then splits); those from
    ``write_from`` are written to the ``out_*`` arrays at row ``t - write_from``.

    The key is the objective in integers: ``wq = 1, wp = 0`` orders by errors; ``errors / n + lambda * splits``
    with ``lambda * n = wp / wq`` is the key over ``wq * n``.  Each root stream has one number of splits, so
    its trees come out in non-decreasing key too, and merging the streams by key is exact.  The least key is
    taken when exact, else that stream is worked on only up to the errors that keep its key within the next
    stream's bound.  Returns the number of trees in order so far (a full pool sets ``status``; the run goes on
    from there once the wrapper has grown it).
    ``status[2]`` is set when no tree is left within ``max_key``.  A stop (``flag``) returns the count so far.
    """
    root = ws.root
    st_i = ws.st_i  # each field read once: a read of ``ws.x`` in the loop costs an atomic reference count
    ds_i = ws.ds_i
    ds_cnt = ws.ds_cnt
    ipool = ws.ipool
    lst = ws.lst
    sol = ws.sol
    heap = ws.heap
    flag = ws.flag
    counters = ws.counters
    cm = ws.cm
    K = root.shape[0] - 1
    heads = np.empty(K + 1, dtype=np.int64)  # _sbound of each root stream's next tree
    for s in range(K + 1):
        heads[s] = _sbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, root[s, 0], root[s, 1])
    weighted = wq != 1 or wp != 0
    t = done
    while t < stop:
        if flag[0] != 0:
            return t
        best = INF
        bs = -1
        nxt = INF  # the least key bound among the other streams
        for s in range(K + 1):
            v = heads[s] >> 1  # errors (INF: no tree)
            if weighted and v < INF:
                v = v * wq + wp * s
            if v < best:
                nxt = best
                best = v
                bs = s
            elif v < nxt:
                nxt = v
        if bs < 0 or best > max_key:
            ws.status[2] = 1
            return t
        if heads[bs] & 1:
            ub = min(nxt, max_key)  # as errors of stream bs: its key stays within ub
            if weighted and ub < INF:
                ub = (ub - wp * bs) // wq
            e = _get(ws, root[bs, 0], root[bs, 1], ub)
            if e < 0:
                return t  # stopped, or a full pool (status[0]): the state is whole, the caller grows it
            heads[bs] = e
            continue
        if t >= write_from:
            r = t - write_from
            nn = _write(ws, root[bs, 0], root[bs, 1], out_feat[r], out_left[r], out_right[r], out_value[r])
            out_err[r] = heads[bs] >> 1
            out_s[r] = bs
            for q in range(nn, out_feat.shape[1]):
                out_feat[r, q] = -2  # past the tree's nodes
        root[bs, 1] += 1
        heads[bs] = _sbound(st_i, ds_i, ds_cnt, ipool, lst, sol, heap, cm, root[bs, 0], root[bs, 1])
        t += 1
        counters[0] = t
    return t


@njit(nogil=True, cache=True)
def init_root(ws, depth, K, cnt):
    """The root dataset (all rows) and its streams for 0..K splits; False on a full pool."""
    k = _new_ds(ws, depth, -1, -1, -1, cnt)
    if k < 0:
        return False
    n = ws.XT.shape[1]
    idx = np.arange(n).astype(np.int32)
    if not _store_rows(ws, k, idx, n):
        return False
    h1 = uint64(0)
    h2 = uint64(0)
    for i in range(n):
        h1 += ws.z1[i]
        h2 += ws.z2[i]
    ws.ds_h[k, 0] = h1
    ws.ds_h[k, 1] = h2
    _fill_lb(ws, k)
    for s in range(K + 1):
        sid = _stream(ws, k, s)
        if sid < 0:
            return False
        ws.root[s, 0] = sid
        ws.root[s, 1] = 0
    return True
