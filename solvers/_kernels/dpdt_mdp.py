"""Breadth-first construction of DPDT's MDP as flat arrays.

A state is a set of training rows at a depth.  States are numbered level by level (children always have
larger ids than their parents), so backward induction is a single reverse sweep.  The rows of the states
of one level live contiguously in that level's pool; only two pools exist at a time.  Identical row sets
at one depth are one state: each set is keyed by a Zobrist hash (wrapping sum of one random 64-bit word
per row, computed while partitioning) and confirmed by comparing the rows, so a hash collision can never
merge two different states.

:func:`build_mdp` expands every depth but the last.  States at depth ``max_depth - 1`` do not create
children: every split there leads to two leaves and costs the same number of tests, so only the split
with the fewest errors is kept as the state's action, with its two leaf error counts
(:func:`last_level_actions`, which callers may run on several threads: those states are independent).
Pure states and single rows get no actions.
"""

import numpy as np
from numba import njit, types
from numba.typed import Dict

from solvers._kernels.dpdt_gen import (
    GEN_CART,
    GEN_CART_LEAVES,
    GEN_EXHAUSTIVE,
    GEN_HYBRID,
    best_exhaustive_leaf_split,
    generate_tests,
    last_depth_split,
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


@njit(nogil=True, cache=True)
def build_mdp(X, y, ranks, n_classes, max_depth, gen, k, d0, criterion, zobrist, max_states, max_pool, flag,
              counters):
    """Expand the MDP level by level, down to the states of the last depth (not expanded here).

    Parameters
    ----------
    X : float64 (n, p); y : int64 (n,)
    ranks : int64 (2, p, n)
        ``cart.feature_ranks(X)``.
    max_depth : int
        Horizon: a tree has at most this many tests on a path.
    gen, k, d0, criterion
        Tests-generating function (see :func:`dpdt_gen.generate_tests`).
    zobrist : int64 (n,)
        Random words hashing row sets.
    max_states, max_pool : int
        Memory guards: number of states, and rows stored in one level's pool.
    flag : int64 (1,)
        Cooperative stop: non-zero ends the expansion; unexpanded states keep only the leaf action.
    counters : int64 (>= 4,)
        Progress: depth being expanded, states so far, states expanded at this depth, states at this depth.

    Returns
    -------
    st_size, st_err, st_act0, st_nact : int64 (n_states,)
        Rows, errors of the majority leaf, first action and number of actions of every state.
    act_feat, act_thr, act_left, act_right, act_errl, act_errr : (n_actions,)
        Test of each action and its child states (-1: the child is a leaf whose errors are in act_err*).
    level_start : int64 (max_depth + 2,)
        States of depth ``d`` are ``level_start[d]:level_start[d+1]``.
    status : int
        ``STATUS_OK`` or which guard stopped the construction (the arrays are then incomplete).
    st_start : int64 (n_states,), pool : int32
        Rows of the states of the last depth: ``pool[st_start[s]:st_start[s] + st_size[s]]``.
    """
    n = X.shape[0]
    cap = 1024
    st_size = np.zeros(cap, dtype=np.int64)
    st_err = np.zeros(cap, dtype=np.int64)
    st_hash = np.zeros(cap, dtype=np.int64)
    st_start = np.zeros(cap, dtype=np.int64)
    st_chain = np.full(cap, -1, dtype=np.int64)
    st_act0 = np.zeros(cap, dtype=np.int64)
    st_nact = np.zeros(cap, dtype=np.int64)
    acap = 1024
    act_feat = np.zeros(acap, dtype=np.int64)
    act_thr = np.zeros(acap, dtype=np.float64)
    act_left = np.full(acap, -1, dtype=np.int64)
    act_right = np.full(acap, -1, dtype=np.int64)
    act_errl = np.zeros(acap, dtype=np.int64)
    act_errr = np.zeros(acap, dtype=np.int64)
    level_start = np.zeros(max_depth + 2, dtype=np.int64)
    status = STATUS_OK

    cur = np.arange(n).astype(np.int32)
    counts = np.zeros(n_classes, dtype=np.int64)
    h = 0
    for i in range(n):
        counts[y[i]] += 1
        h += zobrist[i]
    st_size[0] = n
    st_err[0] = n - counts.max()
    st_hash[0] = h
    n_states = 1
    n_act = 0
    level_start[1] = 1
    idx = np.empty(n, dtype=np.int64)
    stopped = False

    for d in range(max_depth - 1):
        a = level_start[d]
        b = level_start[d + 1]
        counters[0] = d
        counters[3] = b - a
        pcap = max(1024, 2 * n)
        nxt = np.empty(pcap, dtype=np.int32)
        end = 0
        table = Dict.empty(key_type=types.int64, value_type=types.int64)
        for s in range(a, b):
            if flag[0] != 0:
                stopped = True
                break
            counters[1] = n_states
            counters[2] = s - a
            size = st_size[s]
            st_act0[s] = n_act
            if size < 2 or st_err[s] == 0:
                continue
            for i in range(size):
                idx[i] = cur[st_start[s] + i]
            rows = idx[:size]
            feats, thrs = generate_tests(X, y, ranks, rows, n_classes, gen, k, d, d0, criterion)
            for j in range(feats.shape[0]):
                f = feats[j]
                t = thrs[j]
                if n_act >= acap:
                    acap *= 2
                    act_feat = _grow_i(act_feat, acap)
                    act_thr = _grow_f(act_thr, acap)
                    act_left = _grow_i(act_left, acap)
                    act_right = _grow_i(act_right, acap)
                    act_errl = _grow_i(act_errl, acap)
                    act_errr = _grow_i(act_errr, acap)
                act_feat[n_act] = f
                act_thr[n_act] = t
                for side in range(2):
                    if end + size > pcap:
                        pcap = max(2 * pcap, end + size)
                        if pcap > max_pool:
                            pcap = end + size
                        if pcap > max_pool:
                            status = STATUS_MAX_POOL
                            break
                        nxt = _grow_i(nxt, pcap)
                    pos = end
                    counts[:] = 0
                    h = 0
                    for i in range(size):
                        r = rows[i]
                        if (X[r, f] <= t) == (side == 0):
                            nxt[pos] = r
                            pos += 1
                            counts[y[r]] += 1
                            h += zobrist[r]
                    sz = pos - end
                    child = -1
                    if h in table:
                        c = table[h]
                        while c >= 0:
                            if st_size[c] == sz:
                                same = True
                                for i in range(sz):
                                    if nxt[st_start[c] + i] != nxt[end + i]:
                                        same = False
                                        break
                                if same:
                                    child = c
                                    break
                            c = st_chain[c]
                    if child < 0:
                        if n_states >= max_states:
                            status = STATUS_MAX_STATES
                            break
                        if n_states >= cap:
                            cap *= 2
                            st_size = _grow_i(st_size, cap)
                            st_err = _grow_i(st_err, cap)
                            st_hash = _grow_i(st_hash, cap)
                            st_start = _grow_i(st_start, cap)
                            st_chain = _grow_i(st_chain, cap)
                            st_act0 = _grow_i(st_act0, cap)
                            st_nact = _grow_i(st_nact, cap)
                        child = n_states
                        n_states += 1
                        st_size[child] = sz
                        st_err[child] = sz - counts.max()
                        st_hash[child] = h
                        st_start[child] = end
                        st_act0[child] = 0
                        st_nact[child] = 0
                        st_chain[child] = table[h] if h in table else -1
                        table[h] = child
                        end = pos
                    if side == 0:
                        act_left[n_act] = child
                    else:
                        act_right[n_act] = child
                if status != STATUS_OK:
                    break
                n_act += 1
                st_nact[s] += 1
            if status != STATUS_OK:
                break
        level_start[d + 2] = n_states
        counters[1] = n_states
        if status != STATUS_OK or stopped:
            # states left unexpanded (st_nact == 0) keep only their leaf action
            for dd in range(d + 2, max_depth + 1):
                level_start[dd + 1] = n_states
            break
        # the pool of this level's children becomes the current one (st_start of depth d+1 points into it)
        cur = nxt
    if max_depth >= 1 and not stopped and status == STATUS_OK:
        level_start[max_depth + 1] = n_states  # the last level creates no states
    return (st_size[:n_states], st_err[:n_states], st_act0[:n_states], st_nact[:n_states],
            act_feat[:n_act], act_thr[:n_act], act_left[:n_act], act_right[:n_act], act_errl[:n_act],
            act_errr[:n_act], level_start, status, st_start[:n_states], cur)


@njit(nogil=True, cache=True)
def last_level_actions(X, y, ranks, n_classes, gen, k, d, d0, criterion, pool, st_start, st_size, st_err, states,
                       flag, progress):
    """Best test of every state of the last depth listed in ``states`` (its children are leaves).

    Every test there costs the same, so a state needs only the test with the fewest leaf errors, and only
    when it beats the leaf.  States are independent: callers may split the list between threads (the
    kernel holds no GIL and writes only its own outputs).

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
    for j in range(n_s):
        if flag[0] != 0:
            break
        progress[0] = j
        s = states[j]
        size = st_size[s]
        n_done = j + 1
        if size < 2 or st_err[s] == 0:
            continue
        rows = pool[st_start[s]:st_start[s] + size].astype(np.int64)
        bf = -1
        bt = 0.0
        bel = 0
        ber = 0
        if gen == GEN_EXHAUSTIVE:
            bf, bt, bel, ber = best_exhaustive_leaf_split(X, y, ranks, rows, n_classes)
        elif gen == GEN_CART or gen == GEN_CART_LEAVES or gen == GEN_HYBRID:
            bf, bt, bel, ber, grown = last_depth_split(X, y, ranks, rows, n_classes, md, ml, greedy_only, criterion)
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
        if bf >= 0 and bel + ber < st_err[s]:
            out_f[j] = bf
            out_t[j] = bt
            out_el[j] = bel
            out_er[j] = ber
    progress[0] = n_done
    return out_f, out_t, out_el, out_er, n_grown, n_done
