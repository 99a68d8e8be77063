"""Breadth-first construction of DPDT's MDP as flat arrays.

A state is a set of training rows at a depth.  States are numbered level by level (children always have
larger ids than their parents), so backward induction is a single reverse sweep.  The rows of the states
of one level live contiguously in that level's pool; only two pools exist at a time.  Identical row sets
at one depth are one state: each set is keyed by a Zobrist hash (wrapping sum of one random 64-bit word
per row, computed while partitioning) and confirmed by comparing the rows, so a hash collision can never
merge two different states.

:func:`expand_level` expands every depth but the last.  States at depth ``max_depth - 1`` do not create
children: every split there leads to two leaves and costs the same number of tests, so only the split
with the fewest errors is kept as the state's action, with its two leaf error counts
(:func:`last_level_actions`, which callers may run on several threads: those states are independent).
Pure states and single rows get no actions.
"""

import numpy as np
from numba import njit, types
from numba.typed import Dict

from .cart import positions_from_sorted, sort_positions, sorter
from .dpdt_gen import (
    GEN_CART,
    GEN_CART_LEAVES,
    GEN_EXHAUSTIVE,
    GEN_HYBRID,
    best_exhaustive_leaf_split,
    generate_tests,
    generate_tests_sorted,
    last_depth_split_sorted,
)

STATUS_OK = 0
STATUS_MAX_STATES = 1
STATUS_MAX_POOL = 2


@njit(nogil=True, cache=True)
def _grow_i(a, cap):
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(nogil=True, cache=True)
def _grow_f(a, cap):
    b = np.empty(cap, dtype=np.float64)
    b[: a.shape[0]] = a
    return b


# rows of the state table ``st`` (int64, (N_ST, capacity)) and of the action table ``act`` (int64)
# ST_SIB: the other child of the action that created the state when both were new (they then split the
# same parent's rows and are sorted together in one pass over it), else -1
ST_SIZE, ST_ERR, ST_START, ST_CHAIN, ST_ACT0, ST_NACT, ST_PARENT, ST_SIB = 0, 1, 2, 3, 4, 5, 6, 7
N_ST = 8
A_FEAT, A_LEFT, A_RIGHT, A_ERRL, A_ERRR = 0, 1, 2, 3, 4
N_A = 5


@njit(nogil=True, cache=True)
def _grow_rows(a, cap):
    b = np.zeros((a.shape[0], cap), dtype=a.dtype)
    # element by element: an array assignment compiles numba's shape-mismatch error (string formatting)
    for r in range(a.shape[0]):
        for i in range(a.shape[1]):
            b[r, i] = a[r, i]
    return b


@njit(nogil=True, cache=True)
def _rank_positions(ranks, rows):
    """Positions of ``rows`` sorted by every feature, from the global ranks."""
    srt = np.empty((ranks.shape[1], rows.shape[0]), dtype=np.int64)
    keys, buf, gloc, n_bits, use_global = sorter(ranks, rows)
    for f in range(ranks.shape[1]):
        sort_positions(ranks, rows, f, srt[f], keys, buf, gloc, n_bits, use_global)
    return srt


@njit(nogil=True, cache=True)
def _mark_subset(prow, rows, lmap, off):
    """``lmap[j] = off + i`` where ``prow[j] == rows[i]``: ``rows`` is a subset of ``prow``, both in
    increasing order (every state's rows are: the root's are 0..n-1 and children keep their parent's order)."""
    i = 0
    for j in range(prow.shape[0]):
        if i < rows.shape[0] and prow[j] == rows[i]:
            lmap[j] = off + i
            i += 1


@njit(nogil=True, cache=True)
def _split_order(psrt, lmap, m, m2):
    """Positions of two siblings' rows sorted by every feature, by one pass over ``psrt[f]`` (their
    parent's row positions sorted by feature f).  ``lmap[j]`` is ``i`` when the parent's j-th row is the
    first sibling's i-th, ``m + i`` when it is the second's (the siblings split the parent's rows)."""
    p = psrt.shape[0]
    # flat, with one spare slot: every row is written to both outputs and only the right one advances
    # (which child a row falls in is a coin toss for the branch predictor)
    flat = np.empty(p * m + 1, dtype=np.int64)
    flat2 = np.empty(p * m2 + 1, dtype=np.int64)
    for f in range(p):
        c = f * m
        c2 = f * m2
        for i in range(psrt.shape[1]):
            j = lmap[psrt[f, i]]
            second = j >= m
            flat[c] = j
            flat2[c2] = j - m
            c += 1 - second
            c2 += second
    return flat[: p * m].reshape((p, m)), flat2[: p * m2].reshape((p, m2))


@njit(nogil=True, cache=True)
def _sibling_next(st, states, j):
    """Id of ``states[j]``'s sibling when it is ``states[j + 1]`` and will be sorted too (else -1)."""
    if j + 1 >= states.shape[0]:
        return -1
    s2 = st[ST_SIB, states[j]]
    if s2 < 0 or s2 != states[j + 1] or st[ST_SIZE, s2] < 2 or st[ST_ERR, s2] == 0:
        return -1
    return s2


@njit(nogil=True, cache=True)
def _memo0():
    """:func:`_sorted_rows`'s memo before the first call."""
    none = np.int64(-1)  # not a literal inside the tuple: _sorted_rows then compiles for one memo type
    return none, np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.int64), none, np.empty((0, 0), dtype=np.int64)


@njit(nogil=True, cache=True)
def _sorted_rows(ranks, pool, pool_par, st, states, j, rows, lmap, memo):
    """Positions of state ``states[j]``'s ``rows`` sorted by every feature, walking a state list in order.

    A state's rows are a subset of its (first) parent's, whose rows (in ``pool_par``) are sorted once
    for all its children: they are listed together, having been created together.  Each child then takes
    its order from one pass over the parent's, and two siblings listed one after the other (they
    partition the parent's rows) from one pass for both, the second's order kept for the next call.
    That is proportional to the parent's size rather than the whole data set's, and keeps no copy of a
    depth's sorted rows.  ``lmap``: scratch of the data set's size.  ``memo``: ``(parent, its rows, their
    order, pending sibling, its order)`` carried from call to call (start with :func:`_memo0`).
    Returns ``srt, memo``.
    """
    cur, prow, psrt, pending, srt_next = memo
    s = states[j]
    if s == pending:
        return srt_next, (cur, prow, psrt, -1, srt_next)
    par = st[ST_PARENT, s]
    if par < 0:
        return _rank_positions(ranks, rows), memo  # the root
    if par != cur:
        a = st[ST_START, par]
        prow = pool_par[a : a + st[ST_SIZE, par]].astype(np.int64)
        # the root's rows are 0..n-1: their order is the global one, no copy (each thread would hold one)
        psrt = ranks[1] if par == 0 else _rank_positions(ranks, prow)
        cur = par
    m = rows.shape[0]
    s2 = _sibling_next(st, states, j)
    if s2 >= 0:
        rows2 = pool[st[ST_START, s2] : st[ST_START, s2] + st[ST_SIZE, s2]].astype(np.int64)
        _mark_subset(prow, rows, lmap, np.int64(0))
        _mark_subset(prow, rows2, lmap, m)
        srt, srt2 = _split_order(psrt, lmap, m, rows2.shape[0])
        return srt, (cur, prow, psrt, s2, srt2)
    lmap[: prow.shape[0]] = -1
    _mark_subset(prow, rows, lmap, np.int64(0))
    srt = np.empty((psrt.shape[0], m), dtype=np.int64)
    for f in range(psrt.shape[0]):
        positions_from_sorted(psrt[f], lmap, srt[f])
    return srt, (cur, prow, psrt, pending, srt_next)


@njit(nogil=True, cache=True)
def mdp_init(y, n_classes):
    """The root state (all rows, depth 0): state table, empty action tables and the depth-0 pool.

    Returns ``st, act, act_thr, pool``; the MDP then grows one depth at a time with :func:`level_tests`
    (independent per state: callers may run it on several threads) and :func:`expand_level`.
    """
    n = y.shape[0]
    st = np.zeros((N_ST, 1024), dtype=np.int64)
    counts = np.zeros(n_classes, dtype=np.int64)
    for i in range(n):
        counts[y[i]] += 1
    st[ST_SIZE, 0] = n
    st[ST_ERR, 0] = n - counts.max()
    st[ST_CHAIN, 0] = -1
    st[ST_PARENT, 0] = -1
    st[ST_SIB, 0] = -1
    act = np.zeros((N_A, 1024), dtype=np.int64)
    act_thr = np.zeros(1024, dtype=np.float64)
    return st, act, act_thr, np.arange(n).astype(np.int32)


@njit(nogil=True, cache=True)
def level_tests(X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st, states, pool_par, flag, progress):
    """Tests proposed at each listed state of depth ``d`` (none for pure states and single rows).

    Returns ``features, thresholds, offsets``: the tests of ``states[j]`` are ``offsets[j]:offsets[j+1]``.
    States after a stop (``flag``) get no tests.  ``pool_par``: the rows of the previous depth's states
    (:func:`_sorted_rows`).  Writes only its own outputs: safe to run on threads with disjoint state lists.
    """
    lmap = np.full(X.shape[0], -1, dtype=np.int64)
    n_s = states.shape[0]
    off = np.zeros(n_s + 1, dtype=np.int64)
    cap = 64
    feat = np.empty(cap, dtype=np.int64)
    thr = np.empty(cap, dtype=np.float64)
    n = 0
    memo = _memo0()
    for j in range(n_s):
        progress[0] = j
        s = states[j]
        size = st[ST_SIZE, s]
        if flag[0] == 0 and size >= 2 and st[ST_ERR, s] > 0:
            start = st[ST_START, s]
            rows = pool[start : start + size].astype(np.int64)
            srt, memo = _sorted_rows(ranks, pool, pool_par, st, states, j, rows, lmap, memo)
            f, t = generate_tests_sorted(X, y, ranks, rows, srt, n_classes, gen, k, d, d0, criterion, flag)
            if n + f.shape[0] > cap:
                cap = max(2 * cap, n + f.shape[0])
                feat = _grow_i(feat, cap)
                thr = _grow_f(thr, cap)
            feat[n : n + f.shape[0]] = f
            thr[n : n + f.shape[0]] = t
            n += f.shape[0]
        off[j + 1] = n
    progress[0] = n_s
    return feat[:n], thr[:n], off


@njit(nogil=True, cache=True)
def expand_level(
    X,
    y,
    n_classes,
    zobrist,
    a,
    b,
    pool,
    st,
    act,
    act_thr,
    n_states,
    n_act,
    t_feat,
    t_thr,
    t_off,
    max_states,
    max_pool,
    flag,
    counters,
):
    """Create the children of the states ``a:b`` (one depth) from their tests (:func:`level_tests`).

    Every test becomes an action whose two children are new states, or existing ones when the same
    rows were already reached at the next depth (Zobrist hash, confirmed row by row).

    Returns
    -------
    st, act, act_thr : the tables, grown when needed
    n_states, n_act : int
    pool : int32
        Rows of the new states (``st[ST_START]`` of the next depth points into it).
    status : int
        ``STATUS_OK`` or which memory guard stopped the expansion (the tables are then incomplete).
    stopped : bool
        ``flag`` was raised: the states not yet expanded keep only their leaf action.
    """
    n = X.shape[0]
    cnt_l = np.zeros(n_classes, dtype=np.int64)
    cnt_r = np.zeros(n_classes, dtype=np.int64)
    cnt_s = np.zeros(n_classes, dtype=np.int64)
    right_rows = np.empty(n, dtype=np.int32)
    status = STATUS_OK
    stopped = False
    # the children's rows take at most (tests x rows) of every state (less when children are shared):
    # sized once, so the pool is neither copied as it grows nor more than twice too large
    need = 0
    for s in range(a, b):
        need += (t_off[s - a + 1] - t_off[s - a]) * st[ST_SIZE, s]
    pcap = max(1024, min(need, max_pool))
    nxt = np.empty(pcap, dtype=np.int32)
    end = 0
    table = Dict.empty(key_type=types.int64, value_type=types.int64)
    for s in range(a, b):
        if flag[0] != 0:
            stopped = True
            break
        counters[1] = n_states
        counters[2] = s - a
        size = st[ST_SIZE, s]
        start = st[ST_START, s]
        st[ST_ACT0, s] = n_act
        # the state's class counts and hash: each test's right side is what its left side leaves
        cnt_s[:] = 0
        h_s = 0
        for i in range(size):
            cnt_s[y[pool[start + i]]] += 1
            h_s += zobrist[pool[start + i]]
        for j in range(t_off[s - a], t_off[s - a + 1]):
            f = t_feat[j]
            t = t_thr[j]
            if n_act >= act.shape[1]:
                act = _grow_rows(act, 2 * act.shape[1])
                act_thr = _grow_f(act_thr, 2 * act_thr.shape[0])
            act[A_FEAT, n_act] = f
            act_thr[n_act] = t
            n_new = 0
            if end + size > pcap:
                if end + size > max_pool:
                    status = STATUS_MAX_POOL
                    break
                # doubling, capped at the guard (growing by only what is needed would copy the pool at
                # every action once near the cap)
                pcap = min(max(2 * pcap, end + size), max_pool)
                nxt = _grow_i(nxt, pcap)
            # one pass splits the rows: the left side straight into the pool, the right side aside
            pl = end
            n_r = 0
            h_l = 0
            cnt_l[:] = 0
            for i in range(size):
                # no branch on the side (a coin toss for the predictor): write both, advance one
                r = pool[start + i]
                go = X[r, f] <= t
                nxt[pl] = r
                right_rows[n_r] = r
                pl += go
                n_r += 1 - go
                cnt_l[y[r]] += go
                h_l += zobrist[r] * go
            for c in range(n_classes):
                cnt_r[c] = cnt_s[c] - cnt_l[c]
            h_r = h_s - h_l  # int64 sums wrap around: exact
            for side in range(2):
                if side == 0:
                    pos = pl
                    h = h_l
                    counts = cnt_l
                else:
                    nxt[end : end + n_r] = right_rows[:n_r]
                    pos = end + n_r
                    h = h_r
                    counts = cnt_r
                sz = pos - end
                child = -1
                if h in table:
                    c = table[h]
                    while c >= 0:
                        if st[ST_SIZE, c] == sz:
                            same = True
                            c0 = st[ST_START, c]
                            for i in range(sz):
                                if nxt[c0 + i] != nxt[end + i]:
                                    same = False
                                    break
                            if same:
                                child = c
                                break
                        c = st[ST_CHAIN, c]
                if child < 0:
                    if n_states >= max_states:
                        status = STATUS_MAX_STATES
                        break
                    if n_states >= st.shape[1]:
                        st = _grow_rows(st, 2 * st.shape[1])
                    child = n_states
                    n_states += 1
                    n_new += 1
                    st[ST_SIZE, child] = sz
                    st[ST_ERR, child] = sz - counts.max()
                    st[ST_START, child] = end
                    st[ST_ACT0, child] = 0
                    st[ST_NACT, child] = 0
                    st[ST_CHAIN, child] = table[h] if h in table else -1
                    st[ST_PARENT, child] = s  # the first parent: its sorted rows give the child's
                    st[ST_SIB, child] = -1
                    table[h] = child
                    end = pos
                if side == 0:
                    act[A_LEFT, n_act] = child
                else:
                    act[A_RIGHT, n_act] = child
            if status != STATUS_OK:
                break
            if n_new == 2:
                left = act[A_LEFT, n_act]
                right = act[A_RIGHT, n_act]
                st[ST_SIB, left] = right
                st[ST_SIB, right] = left
            n_act += 1
            st[ST_NACT, s] += 1
        if status != STATUS_OK:
            break
    counters[1] = n_states
    return st, act, act_thr, n_states, n_act, nxt[:end], status, stopped


@njit(nogil=True, cache=True)
def last_level_actions(X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st, states, pool_par, flag, progress):
    """Best test of every state of the last depth listed in ``states`` (its children are leaves).

    Every test there costs the same, so a state needs only the test with the fewest leaf errors, and only
    when it beats the leaf.  States are independent: callers may split the list between threads (the
    kernel holds no GIL and writes only its own outputs).  ``pool_par``: the rows of the previous depth's
    states (:func:`_sorted_rows`).

    Returns
    -------
    feature, threshold, errors_left, errors_right : per listed state (feature -1: keep only the leaf)
    grown : int64
        States whose CART had to grow below its root split.
    n_done : int
        States processed before ``flag`` stopped the loop (the rest have feature -1).
    """
    n_s = states.shape[0]
    out_f = np.full(n_s, -1, dtype=np.int64)
    out_t = np.zeros(n_s, dtype=np.float64)
    out_el = np.zeros(n_s, dtype=np.int64)
    out_er = np.zeros(n_s, dtype=np.int64)
    n_grown = 0
    counts = np.zeros(n_classes, dtype=np.int64)
    cl = np.zeros(n_classes, dtype=np.int64)
    greedy_only = (gen == GEN_HYBRID and d >= d0) or (gen == GEN_CART and k == 1)
    if gen == GEN_CART_LEAVES:
        md, ml = 2**31, k
    elif gen == GEN_HYBRID and d >= d0:
        md, ml = 1, 0
    else:
        md, ml = k, 0
    n_done = 0
    lmap = np.full(X.shape[0], -1, dtype=np.int64)
    memo = _memo0()
    sorted_gen = gen == GEN_CART or gen == GEN_CART_LEAVES or gen == GEN_HYBRID
    for j in range(n_s):
        if flag[0] != 0:
            break
        progress[0] = j
        s = states[j]
        size = st[ST_SIZE, s]
        n_done = j + 1
        if size < 2 or st[ST_ERR, s] == 0:
            continue
        rows = pool[st[ST_START, s] : st[ST_START, s] + size].astype(np.int64)
        bf = -1
        bt = 0.0
        bel = 0
        ber = 0
        if gen == GEN_EXHAUSTIVE:
            bf, bt, bel, ber = best_exhaustive_leaf_split(X, y, ranks, rows, n_classes)
        elif sorted_gen:
            srt, memo = _sorted_rows(ranks, pool, pool_par, st, states, j, rows, lmap, memo)
            bf, bt, bel, ber, grown = last_depth_split_sorted(
                X, y, rows, srt, n_classes, md, ml, greedy_only, criterion, st[ST_ERR, s]
            )
            if grown:
                n_grown += 1
        else:
            # top-B: score every proposed test
            feats, thrs = generate_tests(X, y, ranks, rows, n_classes, gen, k, d, d0, criterion)
            best = size + 1
            for q in range(feats.shape[0]):
                f = feats[q]
                t = thrs[q]
                counts[:] = 0
                cl[:] = 0
                for i in range(size):
                    r = rows[i]
                    counts[y[r]] += 1
                    if X[r, f] <= t:
                        cl[y[r]] += 1
                nl = cl.sum()
                el = nl - cl.max()
                er = (size - nl) - (counts - cl).max()
                if el + er < best:
                    best = el + er
                    bf = f
                    bt = t
                    bel = el
                    ber = er
        if bf >= 0 and bel + ber < st[ST_ERR, s]:
            out_f[j] = bf
            out_t[j] = bt
            out_el[j] = bel
            out_er[j] = ber
    progress[0] = n_done
    return out_f, out_t, out_el, out_er, n_grown, n_done
