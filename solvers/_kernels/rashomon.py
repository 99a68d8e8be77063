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

Canonical trees (each reached by one path of this recursion, so never twice): every leaf holds a row (a
test constant on a node's rows is not a split, which also rules out a test repeated on a path) and no
internal node has only leaves of one class.  Below a node with ``s >= 2`` splits one child is internal
and, canonical itself, predicts two classes; so the rule only removes single splits whose two leaves
agree, which ``LIST`` leaves out.

The root merges its streams ``s = 0..K`` by ``(errors, s)``: trees come out in non-decreasing errors,
fewer splits first on ties.  Depth-2 datasets count all their tests and pairs of tests at once with
bitsets (as MurTree's depth-2 solver), which gives the best split of each of their 2F children.

Every structure lives in fixed pools (arrays of :data:`Workspace`); when one is full the run sets
``status = (1, pool)`` and unwinds, and the wrapper grows that pool and starts again (the run is
deterministic, so the trees come out the same).  A stopped run (``flag``) leaves the state unusable.
"""

from collections import namedtuple

import numpy as np
from numba import njit, uint64

from .murtree_cache import popcount64

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
ROWS_OFF = 4  # own rows in ``rows`` (-1: none, use the parent's rows on this side of G)
ROWS_LEN = 5
CHILD_OFF = 6  # 2F child dataset ids in ``ipool`` (-1: not built)
STREAM_OFF = 7  # 2**DD stream ids in ``ipool`` (one per exact number of splits)
FIRST_ERR = 8  # depth-1 datasets: errors of the best single split (INF: none), known before its list
FIRST_FEAT = 9
DS_COLS = 10

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
        "lst",  # (n, 2) LIST entries: (errors, test)
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
        "sort_key",  # (F,) int64 scratch
        "root",  # (K + 1, 2): root stream of each number of splits, next index
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
    if off + ns > ws.ipool.shape[0]:
        _full(ws, P_IPOOL)
        return -1
    ws.ipool[off : off + ns] = -1
    ws.meta[P_IPOOL] = off + ns
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
    ws.ds_i[k, CHILD_OFF] = off
    return off


@njit(nogil=True, cache=True)
def _side_counts(ws, k, h, out):
    """Class counts of the rows of dataset ``k`` with test ``h`` true."""
    out[:] = 0
    XT = ws.XT
    y = ws.y
    if ws.ds_i[k, ROWS_OFF] >= 0:
        off = ws.ds_i[k, ROWS_OFF]
        for t in range(ws.ds_i[k, ROWS_LEN]):
            i = ws.rows[off + t]
            if XT[h, i]:
                out[y[i]] += 1
    else:
        p = ws.ds_i[k, PARENT]
        g = ws.ds_i[k, G]
        side = ws.ds_i[k, SIDE]
        off = ws.ds_i[p, ROWS_OFF]
        for t in range(ws.ds_i[p, ROWS_LEN]):
            i = ws.rows[off + t]
            if XT[g, i] == side and XT[h, i]:
                out[y[i]] += 1


@njit(nogil=True, cache=True)
def _build_list(ws, st):
    """Every canonical single split of the stream's dataset, sorted by (errors, test)."""
    k = ws.st_i[st, SDS]
    XR = ws.XR
    y = ws.y
    F = XR.shape[1]
    ones = ws.ones
    ones[:, :] = 0
    if ws.ds_i[k, ROWS_OFF] >= 0:
        off = ws.ds_i[k, ROWS_OFF]
        for t in range(ws.ds_i[k, ROWS_LEN]):
            i = ws.rows[off + t]
            xr = XR[i]
            c = y[i]
            for f in range(F):
                ones[f, c] += xr[f]
    else:
        p = ws.ds_i[k, PARENT]
        g = ws.ds_i[k, G]
        side = ws.ds_i[k, SIDE]
        off = ws.ds_i[p, ROWS_OFF]
        for t in range(ws.ds_i[p, ROWS_LEN]):
            i = ws.rows[off + t]
            xr = XR[i]
            if xr[g] != side:
                continue
            c = y[i]
            for f in range(F):
                ones[f, c] += xr[f]
    cnt = ws.ds_cnt[k]
    m = cnt.sum()
    min_leaf = ws.prm[0]
    key = ws.sort_key
    n = 0
    left = np.empty(cnt.shape[0], dtype=np.int64)
    for f in range(F):
        nr = ones[f].sum()
        if nr < min_leaf or m - nr < min_leaf:
            continue
        for c in range(cnt.shape[0]):
            left[c] = cnt[c] - ones[f, c]
        el, cl = _leaf(left)
        er, cr = _leaf(ones[f])
        if cl == cr:
            continue
        key[n] = (el + er) * F + f
        n += 1
    off = ws.meta[P_LIST]
    if off + n > ws.lst.shape[0]:
        _full(ws, P_LIST)
        return False
    srt = np.sort(key[:n])
    for t in range(n):
        ws.lst[off + t, 0] = srt[t] // F
        ws.lst[off + t, 1] = srt[t] % F
    ws.meta[P_LIST] = off + n
    ws.st_i[st, LIST_OFF] = off
    ws.st_i[st, LIST_LEN] = n
    return True


@njit(nogil=True, cache=True)
def _pack(ws, inst, m, cnt):
    """Class counts of every test (``S``) and pair of active tests (``P``) on the rows ``inst[:m]``."""
    XR = ws.XR
    bits = ws.bits
    bitsA = ws.bitsA
    S = ws.S
    P = ws.P
    act = ws.act
    F = XR.shape[1]
    C = cnt.shape[0]
    min_leaf = ws.prm[0]
    w = 0
    k0 = 0
    for c in range(C):  # rows are sorted by class: one block of words per class
        end = k0 + cnt[c]
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
        for _ in range((cnt[c] + 63) >> 6):
            row = bits[w]
            for f in range(F):
                S[f, c] += popcount64(row[f])
            w += 1
    n_act = 0
    for f in range(F):
        tot = S[f].sum()
        if tot >= min_leaf and m - tot >= min_leaf:
            act[n_act] = f
            n_act += 1
    for w in range(W):
        for a in range(n_act):
            bitsA[w, a] = bits[w, act[a]]
    P[:, :n_act, :n_act] = 0
    w = 0
    for c in range(C):
        Pc = P[c]
        for _ in range((cnt[c] + 63) >> 6):
            row = bitsA[w]
            for a in range(n_act):
                x = row[a]
                if x == 0:
                    continue
                Pa = Pc[a]
                for b in range(a + 1, n_act):
                    Pa[b] += popcount64(x & row[b])
            w += 1
    return n_act


@njit(nogil=True, cache=True)
def _best_d1_two(S, P, act, n_act, a, n0, n1, min_leaf):
    """Two classes: the best canonical single split of each side of test ``act[a]`` (errors, test)."""
    g = act[a]
    s0 = S[g, 0]
    s1 = S[g, 1]
    bl = INF
    fl = -1
    br = INF
    fr = -1
    for b in range(n_act):
        if b == a:
            continue
        h = act[b]
        if a < b:
            p0 = np.int64(P[0, a, b])
            p1 = np.int64(P[1, a, b])
        else:
            p0 = np.int64(P[0, b, a])
            p1 = np.int64(P[1, b, a])
        t0 = S[h, 0]
        t1 = S[h, 1]
        a0 = s0 - p0  # g = 1, h = 0
        a1 = s1 - p1
        b0 = t0 - p0  # g = 0, h = 1
        b1 = t1 - p1
        z0 = n0 - s0 - t0 + p0  # both 0
        z1 = n1 - s1 - t1 + p1
        # left side (g = 0) split by h: leaves z and b; right side (g = 1): leaves a and p
        if z0 + z1 >= min_leaf and b0 + b1 >= min_leaf and (z0 >= z1) != (b0 >= b1):
            e = min(z0, z1) + min(b0, b1)
            if e < bl:
                bl = e
                fl = h
        if a0 + a1 >= min_leaf and p0 + p1 >= min_leaf and (a0 >= a1) != (p0 >= p1):
            e = min(a0, a1) + min(p0, p1)
            if e < br:
                br = e
                fr = h
    return bl, fl, br, fr


@njit(nogil=True, cache=True)
def _d2_children(ws, k):
    """Children of a depth-2 dataset (depth-1 datasets) with their best single split, by counting."""
    F = ws.XR.shape[1]
    cnt = ws.ds_cnt[k]
    C = cnt.shape[0]
    off = ws.ds_i[k, ROWS_OFF]
    m = ws.ds_i[k, ROWS_LEN]
    coff = _child_table(ws, k, F)
    if coff < 0:
        return False
    inst = ws.rows[off : off + m]
    n_act = _pack(ws, inst, m, cnt)
    S = ws.S
    P = ws.P
    act = ws.act
    min_leaf = ws.prm[0]
    cl = np.empty(C, dtype=np.int64)
    q00 = np.empty(C, dtype=np.int64)
    q01 = np.empty(C, dtype=np.int64)
    q10 = np.empty(C, dtype=np.int64)
    q11 = np.empty(C, dtype=np.int64)
    for a in range(n_act):
        g = act[a]
        for c in range(C):
            cl[c] = cnt[c] - S[g, c]
        L = _new_ds(ws, 1, k, g, 0, cl)
        if L < 0:
            return False
        R = _new_ds(ws, 1, k, g, 1, S[g])
        if R < 0:
            return False
        ws.ipool[coff + 2 * g] = L
        ws.ipool[coff + 2 * g + 1] = R
        if C == 2:
            bl, fl, br, fr = _best_d1_two(S, P, act, n_act, a, cnt[0], cnt[1], min_leaf)
            ws.ds_i[L, FIRST_ERR] = bl
            ws.ds_i[L, FIRST_FEAT] = fl
            ws.ds_i[R, FIRST_ERR] = br
            ws.ds_i[R, FIRST_FEAT] = fr
            continue
        bl = INF
        fl = -1
        br = INF
        fr = -1
        for b in range(n_act):
            if b == a:
                continue
            h = act[b]
            lo = min(a, b)
            hi = max(a, b)
            for c in range(C):
                p = np.int64(P[c, lo, hi])
                q11[c] = p
                q10[c] = S[g, c] - p
                q01[c] = S[h, c] - p
                q00[c] = cnt[c] - S[g, c] - S[h, c] + p
            e00, c00 = _leaf(q00)
            e01, c01 = _leaf(q01)
            e10, c10 = _leaf(q10)
            e11, c11 = _leaf(q11)
            if q00.sum() >= min_leaf and q01.sum() >= min_leaf and c00 != c01 and e00 + e01 < bl:
                bl = e00 + e01
                fl = h
            if q10.sum() >= min_leaf and q11.sum() >= min_leaf and c10 != c11 and e10 + e11 < br:
                br = e10 + e11
                fr = h
        ws.ds_i[L, FIRST_ERR] = bl
        ws.ds_i[L, FIRST_FEAT] = fl
        ws.ds_i[R, FIRST_ERR] = br
        ws.ds_i[R, FIRST_FEAT] = fr
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
    for g in range(F):
        xg = XT[g]
        ml = 0
        mr = 0
        cl[:] = 0
        cr[:] = 0
        for t in range(m):
            i = ws.rows[off + t]
            if xg[i]:
                br[mr] = i
                mr += 1
                cr[y[i]] += 1
            else:
                bl[ml] = i
                ml += 1
                cl[y[i]] += 1
        if ml < min_leaf or mr < min_leaf:
            continue
        L = _new_ds(ws, dd - 1, k, g, 0, cl)
        if L < 0 or not _store_rows(ws, L, bl, ml):
            return False
        R = _new_ds(ws, dd - 1, k, g, 1, cr)
        if R < 0 or not _store_rows(ws, R, br, mr):
            return False
        ws.ipool[coff + 2 * g] = L
        ws.ipool[coff + 2 * g + 1] = R
    return True


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
    err, _ = _leaf(ws.ds_cnt[k])
    m = ws.ds_cnt[k].sum()
    if s == 0:
        r[KIND] = LEAF
    elif err == 0 or m < 2 * ws.prm[0]:
        r[KIND] = EMPTY  # a pure node: any split leaves two leaves of its class
    elif s == 1:
        r[KIND] = LIST
    else:
        r[KIND] = NODE
    ws.meta[P_ST] = sid + 1
    ws.ipool[so + s] = sid
    ws.counters[1] = sid + 1
    if r[KIND] == LIST and ws.ds_i[k, ROWS_OFF] >= 0:  # depth-1 children of a depth-2 node: lazily
        if not _build_list(ws, sid):
            return -1
    return sid


@njit(nogil=True, cache=True, inline="always")
def _simple_get(ws, st, i):
    """Errors of the ``i``-th tree of a LEAF, LIST or EMPTY stream (INF past the end); -1 on a full pool."""
    kind = ws.st_i[st, KIND]
    if kind == EMPTY:
        return INF
    k = ws.st_i[st, SDS]
    if kind == LEAF:
        if i == 0:
            e, _ = _leaf(ws.ds_cnt[k])
            return e
        return INF
    if ws.st_i[st, LIST_OFF] < 0:
        if i == 0:
            return ws.ds_i[k, FIRST_ERR]
        if not _build_list(ws, st):
            return -1
    if i < ws.st_i[st, LIST_LEN]:
        return ws.lst[ws.st_i[st, LIST_OFF] + i, 0]
    return INF


@njit(nogil=True, cache=True, inline="always")
def _grow_region(ws, st, pool, col_off, col_len, col_cap, arr, need):
    """Make room for ``need`` rows in a stream's region of ``arr`` (moved to the pool's end, doubled)."""
    r = ws.st_i[st]
    if r[col_len] + need <= r[col_cap]:
        return True
    cap = max(2 * r[col_cap], r[col_len] + need, 8)
    top = ws.meta[pool]
    if top + cap > arr.shape[0]:
        _full(ws, pool)
        return False
    old = r[col_off]
    for t in range(r[col_len]):
        arr[top + t, :] = arr[old + t, :]
    r[col_off] = top
    r[col_cap] = cap
    ws.meta[pool] = top + cap
    return True


@njit(nogil=True, cache=True, inline="always")
def _push(ws, st, key, c, a, b):
    if not _grow_region(ws, st, P_HEAP, HEAP_OFF, HEAP_LEN, HEAP_CAP, ws.heap, 1):
        return False
    h = ws.heap
    off = ws.st_i[st, HEAP_OFF]
    n = ws.st_i[st, HEAP_LEN]
    pos = n
    while pos > 0:
        par = (pos - 1) >> 1
        if h[off + par, 0] <= key:
            break
        h[off + pos, :] = h[off + par, :]
        pos = par
    h[off + pos, 0] = key
    h[off + pos, 1] = c
    h[off + pos, 2] = a
    h[off + pos, 3] = b
    ws.st_i[st, HEAP_LEN] = n + 1
    return True


@njit(nogil=True, cache=True, inline="always")
def _pop(ws, st, out):
    h = ws.heap
    off = ws.st_i[st, HEAP_OFF]
    n = ws.st_i[st, HEAP_LEN] - 1
    out[:] = h[off, :]
    ws.st_i[st, HEAP_LEN] = n
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
        if ch + 1 < n and h[off + ch + 1, 0] < h[off + ch, 0]:
            ch += 1
        if h[off + ch, 0] >= last0:
            break
        h[off + pos, :] = h[off + ch, :]
        pos = ch
    h[off + pos, 0] = last0
    h[off + pos, 1] = last1
    h[off + pos, 2] = last2
    h[off + pos, 3] = last3


@njit(nogil=True, cache=True, inline="always")
def _first_simple(ws, k, s):
    """Errors of the best tree of dataset ``k`` with ``s <= 1`` splits (INF: none), without a stream when
    it is known (the leaf; a depth-1 child's best split); -1 on a full pool."""
    cnt = ws.ds_cnt[k]
    err, _ = _leaf(cnt)
    if s == 0:
        return err
    if err == 0 or cnt.sum() < 2 * ws.prm[0]:
        return INF
    if ws.ds_i[k, ROWS_OFF] < 0:
        return ws.ds_i[k, FIRST_ERR]
    st = _stream(ws, k, s)
    if st < 0:
        return -1
    return _simple_get(ws, st, 0)


@njit(nogil=True, cache=True)
def _node_init(ws, st):
    """Candidates of a NODE stream: every test and left budget, keyed by what is known of their best tree."""
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
    coff = ws.ds_i[k, CHILD_OFF]
    cap = (np.int64(1) << (dd - 1)) - 1
    lo = max(0, s - 1 - cap)
    hi = min(cap, s - 1)
    for g in range(F):
        L = ws.ipool[coff + 2 * g]
        if L < 0:
            continue
        R = ws.ipool[coff + 2 * g + 1]
        for sl in range(lo, hi + 1):
            sr = s - 1 - sl
            c = ws.meta[P_CAND]
            if c >= ws.cand.shape[0]:
                _full(ws, P_CAND)
                return False
            key = 0
            exact = True
            if sl <= 1:
                e = _first_simple(ws, L, sl)
                if e < 0:
                    return False
                if e >= INF:
                    continue
                key += e
            else:
                exact = False
            if sr <= 1:
                e = _first_simple(ws, R, sr)
                if e < 0:
                    return False
                if e >= INF:
                    continue
                key += e
            else:
                exact = False
            ws.cand[c, 0] = g
            ws.cand[c, 1] = sl
            ws.cand[c, 2] = -1  # streams created when the candidate is first popped
            ws.cand[c, 3] = -1
            ws.meta[P_CAND] = c + 1
            if not _push(ws, st, 2 * key + (0 if exact else 1), c, 0, 0):
                return False
    ws.st_i[st, INIT] = 1
    return True


@njit(nogil=True, cache=True)
def _get(ws, st, i):
    """Errors of the ``i``-th tree of stream ``st`` (INF past its end), extending it; -1 when stopped or full."""
    kind = ws.st_i[st, KIND]
    if kind != NODE:
        return _simple_get(ws, st, i)
    if ws.st_i[st, INIT] == 0:
        if not _node_init(ws, st):
            return -1
    top = np.empty(4, dtype=np.int64)
    while ws.st_i[st, SOL_LEN] <= i:
        if ws.flag[0] != 0 or ws.status[0] != 0:
            return -1
        if ws.st_i[st, HEAP_LEN] == 0:
            return INF
        _pop(ws, st, top)
        key = top[0]
        c = top[1]
        a = top[2]
        b = top[3]
        ls = ws.cand[c, 2]
        rs = ws.cand[c, 3]
        if ls < 0 or rs < 0:
            k = ws.st_i[st, SDS]
            coff = ws.ds_i[k, CHILD_OFF]
            g = ws.cand[c, 0]
            sl = ws.cand[c, 1]
            if ls < 0:
                ls = _stream(ws, ws.ipool[coff + 2 * g], sl)
                if ls < 0:
                    return -1
                ws.cand[c, 2] = ls
            if rs < 0:
                rs = _stream(ws, ws.ipool[coff + 2 * g + 1], ws.st_i[st, SS] - 1 - sl)
                if rs < 0:
                    return -1
                ws.cand[c, 3] = rs
        if key & 1 == 0:  # exact: the stream's next tree
            if not _grow_region(ws, st, P_SOL, SOL_OFF, SOL_LEN, SOL_CAP, ws.sol, 1):
                return -1
            n = ws.st_i[st, SOL_LEN]
            row = ws.sol[ws.st_i[st, SOL_OFF] + n]
            row[0] = key >> 1
            row[1] = c
            row[2] = a
            row[3] = b
            ws.st_i[st, SOL_LEN] = n + 1
            if b == 0 and not _push(ws, st, key | 1, c, a + 1, b):
                return -1
            if not _push(ws, st, key | 1, c, a, b + 1):
                return -1
            continue
        el = _get(ws, ls, a)
        if el < 0:
            return -1
        if el >= INF:
            continue
        er = _get(ws, rs, b)
        if er < 0:
            return -1
        if er >= INF:
            continue
        if not _push(ws, st, 2 * (el + er), c, a, b):
            return -1
    return ws.sol[ws.st_i[st, SOL_OFF] + i, 0]


@njit(nogil=True, cache=True)
def _write(ws, st, i, feat, left, right, value, nxt, tmp):
    """Write the ``i``-th tree of stream ``st`` (materialised) as flat arrays from node ``nxt``; next free node."""
    k = ws.st_i[st, SDS]
    me = nxt
    nxt += 1
    value[me, :] = ws.ds_cnt[k]
    feat[me] = -1
    left[me] = -1
    right[me] = -1
    kind = ws.st_i[st, KIND]
    if kind == LEAF:
        return nxt
    if kind == LIST:
        if ws.st_i[st, LIST_OFF] < 0:
            h = ws.ds_i[k, FIRST_FEAT]
        else:
            h = ws.lst[ws.st_i[st, LIST_OFF] + i, 1]
        feat[me] = h
        _side_counts(ws, k, h, tmp)
        left[me] = nxt
        value[nxt, :] = ws.ds_cnt[k] - tmp
        feat[nxt] = -1
        left[nxt] = -1
        right[nxt] = -1
        right[me] = nxt + 1
        value[nxt + 1, :] = tmp
        feat[nxt + 1] = -1
        left[nxt + 1] = -1
        right[nxt + 1] = -1
        return nxt + 2
    row = ws.sol[ws.st_i[st, SOL_OFF] + i]
    c = row[1]
    feat[me] = ws.cand[c, 0]
    left[me] = nxt
    nxt = _write(ws, ws.cand[c, 2], row[2], feat, left, right, value, nxt, tmp)
    right[me] = nxt
    return _write(ws, ws.cand[c, 3], row[3], feat, left, right, value, nxt, tmp)


@njit(nogil=True, cache=True)
def enumerate_trees(ws, done, stop, write_from, max_err, out_feat, out_left, out_right, out_value, out_err, out_s):
    """Trees ``done..stop-1`` of the root's order (errors, then splits); those from ``write_from`` are written
    to the ``out_*`` arrays at row ``t - write_from``.

    Returns the number of trees in order so far, or -1 when a pool is full (``status``).  ``status[2]`` is
    set when no tree is left within ``max_err`` errors.  A stop (``flag``) returns the count so far.
    """
    root = ws.root
    K = root.shape[0] - 1
    C = ws.ds_cnt.shape[1]
    tmp = np.empty(C, dtype=np.int64)
    t = done
    while t < stop:
        if ws.flag[0] != 0:
            return t
        best = INF
        bs = -1
        for s in range(K + 1):
            e = _get(ws, root[s, 0], root[s, 1])
            if e < 0:
                return t if ws.status[0] == 0 else -1
            if e < best:
                best = e
                bs = s
        if bs < 0 or best > max_err:
            ws.status[2] = 1
            return t
        if t >= write_from:
            r = t - write_from
            zero = r - r  # a run-time 0: a literal-typed overload of a recursive kernel crashes from numba's cache
            nn = _write(ws, root[bs, 0], root[bs, 1], out_feat[r], out_left[r], out_right[r], out_value[r], zero, tmp)
            out_err[r] = best
            out_s[r] = bs
            for q in range(nn, out_feat.shape[1]):
                out_feat[r, q] = -2  # past the tree's nodes
        root[bs, 1] += 1
        t += 1
        ws.counters[0] = t
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
    for s in range(K + 1):
        sid = _stream(ws, k, s)
        if sid < 0:
            return False
        ws.root[s, 0] = sid
        ws.root[s, 1] = 0
    return True
