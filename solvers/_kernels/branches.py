"""BRANCHES search (Chaouki, Read, Bifet): best-first DP + branch-and-bound over branches of binary tests.

Objective, in training rows: ``correct - cost * splits`` with ``cost = lambda * n``; dividing by ``n``
gives the paper's ``accuracy - lambda * splits``.

Each branch (conjunction of tests, memoised by its canonical sorted form, see ``branches_store``) keeps

* ``lb``: the value of the best tree found below it (starts as its leaf value),
* ``ub``: an upper bound on its optimum.  An unvisited branch starts from the purification bound
  ``max(leaf, rows - cost)`` (any split costs ``cost`` and cannot classify more than every row).

An expanded branch holds one entry per useful test ``a`` with bound ``ub(a=0) + ub(a=1) - cost``, in a
max-heap.  Because children are shared between parents (the lattice is a DAG), an entry's key can be
stale (too high); it is re-evaluated lazily when it reaches the top, which keeps every key a valid
upper bound.  An entry whose bound cannot beat ``lb`` is dropped for good (bounds only fall, ``lb`` only
rises).  A branch is complete when its heap is empty, i.e. ``ub == lb``.

One iteration: *selection* follows the top entry from the root, entering the incomplete child with the
lowest ``lb`` (the paper's rule; a child is stored, via the memo, when first entered), to an unexpanded
branch; *expansion* counts its rows per test and class once and adds an entry for every test that splits
them; *backpropagation* updates ``lb``/``ub`` along the path.  The search stops when
the root is complete (optimality proven) or when ``flag[0] != 0`` (time limit or cancel): the best tree
so far is returned either way.  There is no iteration cap; the only other stop is an explicit memory
budget for the branch store, which the caller reports.

Multiway splits: a one-hot group (the tests of one categorical column, partitioning the rows) is one more
action of a branch when at least 3 of its categories have rows there.  Its entry's bound is
``sum(ub(child)) - cost`` over one child per present category, the child of category ``c`` being the
branch with the literal "test c = 1" added (so it shares the memo with binary splits and adds one to the
depth).  Every bound argument above holds unchanged: a child's ``ub`` bounds its optimum, the split pays
``cost`` once, and an entry is dropped only when it cannot beat ``lb``.
"""

import numpy as np
from numba import njit
from numba.typed import List

from .branches_store import (
    BEST_ATTR,
    BEST_C0,
    BEST_C1,
    COMPLETE,
    DEPTH,
    E_ATTR,
    E_C0,
    E_C1,
    E_INT,
    E_N0,
    E_T0,
    E_T1,
    EXPANDED,
    FINAL,
    HEAP,
    HEAPLEN,
    LAZY,
    LB,
    LITS,
    M_INT,
    M_N,
    M_REF,
    M_T,
    M_TEST,
    N_INT,
    UB,
    N,
    T,
    compact_entries,
    grow1,
    grow2,
    grown_bytes,
    heap_pop,
    heapify,
    live_entries,
    lookup,
    rehash,
    rehash_bytes,
    sift_down,
)

_ZERO = np.int64(0)  # a typed zero argument: a literal 0 would compile the called kernel once more


@njit(nogil=True, cache=True)
def _final(d, n_rows, t, cost, max_depth, eps):
    # A branch is a leaf for good when pure, at the depth limit, or when even a perfect split (every row
    # correct, one split paid) cannot beat its leaf.
    return d >= max_depth or t == n_rows or n_rows - cost <= t + eps


@njit(nogil=True, cache=True)
def _ref_ub(nf, c, n_rows, t, cost):
    # Upper bound of a child reference (stored, lazy: purification bound, final: its leaf).
    if c >= 0:
        return nf[c, UB]
    if c == LAZY:
        return n_rows - cost
    return float(t)


@njit(nogil=True, cache=True)
def _ref_lb(nf, c, t):
    return nf[c, LB] if c >= 0 else float(t)


@njit(nogil=True, cache=True)
def _ref_open(ni, c):
    # Whether the search below a child reference is incomplete.
    return c == LAZY or (c >= 0 and ni[c, COMPLETE] == 0)


@njit(nogil=True, cache=True)
def _entry_ub(nf, ei, e, n_rows, cost, mp, p):
    # Bound of a split entry of a branch with n_rows rows: its children's bounds, one split paid (a
    # multiway split too pays cost once).
    if ei[e, E_ATTR] >= p:
        total = -cost
        for r in range(ei[e, E_C0], ei[e, E_C0] + ei[e, E_N0]):
            total += _ref_ub(nf, mp[r, M_REF], mp[r, M_N], mp[r, M_T], cost)
        return total
    return (
        _ref_ub(nf, ei[e, E_C0], ei[e, E_N0], ei[e, E_T0], cost)
        + _ref_ub(nf, ei[e, E_C1], n_rows - ei[e, E_N0], ei[e, E_T1], cost)
        - cost
    )


@njit(nogil=True, cache=True)
def _new_node(ni, nh, nf, lits, n_lits, hk, hv, slot, v, h, cand, d, n_rows, t, cost, max_depth, eps):
    # A stored branch starts from its leaf (lb) and the purification bound max(leaf, rows - cost) (ub).
    ni[v, :] = 0
    ni[v, T] = t
    ni[v, N] = n_rows
    ni[v, DEPTH] = d
    ni[v, LITS] = n_lits
    ni[v, BEST_ATTR] = -1
    nh[v] = h
    for j in range(d):
        lits[n_lits + j] = cand[j]
    hk[slot] = h
    hv[slot] = v
    nf[v, LB] = t
    if _final(d, n_rows, t, cost, max_depth, eps):
        nf[v, UB] = t
        ni[v, COMPLETE] = 1
    else:
        nf[v, UB] = n_rows - cost
    return n_lits + d


@njit(nogil=True, cache=True)
def _child(v, lit, n_rows, t, ni, nh, nf, lits, n_lits, hk, hv, zob, n_nodes, cand, cost, max_depth, eps):
    """Stored child of ``v`` with literal ``lit`` added: ``(node, n_nodes, n_lits)``.

    Looked up in the memo by its canonical (sorted) conjunction and created when new.
    """
    d = ni[v, DEPTH]
    s = ni[v, LITS]
    k = 0
    placed = False
    for j in range(d):
        lj = lits[s + j]
        if not placed and lit < lj:
            cand[k] = lit
            k += 1
            placed = True
        cand[k] = lj
        k += 1
    if not placed:
        cand[k] = lit
    h = nh[v] ^ zob[lit]
    c, slot = lookup(hk, hv, ni, lits, h, cand, d + 1)
    if c >= 0:
        return c, n_nodes, n_lits
    n_rows, t = np.int64(n_rows), np.int64(t)  # int32 or int64 at the call sites: _new_node compiles once
    n_lits = _new_node(ni, nh, nf, lits, n_lits, hk, hv, slot, n_nodes, h, cand, d + 1, n_rows, t, cost, max_depth, eps)
    return n_nodes, n_nodes + 1, n_lits


@njit(nogil=True, cache=True)
def _take(v, a, c0, t0, c1, t1, ni, nf, cost, eps, mp, p):
    # Record the split on ``a`` as v's best tree when its children's best trees beat the current one.
    # A multiway split (a >= p) passes its pool start as c0 and its number of children as c1.
    if a >= p:
        val = -cost
        for r in range(c0, c0 + c1):
            val += _ref_lb(nf, mp[r, M_REF], mp[r, M_T])
    else:
        val = _ref_lb(nf, c0, t0) + _ref_lb(nf, c1, t1) - cost
    if val > nf[v, LB] + eps:
        nf[v, LB] = val
        ni[v, BEST_ATTR] = a
        ni[v, BEST_C0] = c0
        ni[v, BEST_C1] = c1


@njit(nogil=True, cache=True)
def _entry_step(ei, e, p, out):
    # The fields _take needs for entry e: attr, c0, t0, c1, t1 (multiway: attr, pool start, 0, k, 0).
    out[0] = ei[e, E_ATTR]
    out[1] = ei[e, E_C0]
    if ei[e, E_ATTR] >= p:
        out[2] = 0
        out[3] = ei[e, E_N0]
        out[4] = 0
    else:
        out[2] = ei[e, E_T0]
        out[3] = ei[e, E_C1]
        out[4] = ei[e, E_T1]


@njit(nogil=True, cache=True)
def _take_entry(v, ei, e, ni, nf, cost, eps, mp, p):
    # int64 arguments (the entries are int32): _take compiles for one signature
    a = np.int64(ei[e, E_ATTR])
    c0 = np.int64(ei[e, E_C0])
    if a >= p:
        _take(v, a, c0, _ZERO, np.int64(ei[e, E_N0]), _ZERO, ni, nf, cost, eps, mp, p)
    else:
        t0, c1, t1 = np.int64(ei[e, E_T0]), np.int64(ei[e, E_C1]), np.int64(ei[e, E_T1])
        _take(v, a, c0, t0, c1, t1, ni, nf, cost, eps, mp, p)


@njit(nogil=True, cache=True)
def _refresh(v, ni, nf, eis, eks, shift, cost, eps, mp, p):
    """Bring v's top entry up to date, drop hopeless entries, set ub and the complete flag."""
    g = ni[v, HEAP]
    ei = eis[g >> shift]
    ek = eks[g >> shift]
    start = g & ((1 << shift) - 1)
    m = np.int64(ni[v, HEAPLEN])
    while m > 0:
        _take_entry(v, ei, start, ni, nf, cost, eps, mp, p)
        key = _entry_ub(nf, ei, start, np.int64(ni[v, N]), cost, mp, p)
        if key <= nf[v, LB] + eps:
            m = heap_pop(ei, ek, start, m)
        elif key < ek[start] - eps:
            ek[start] = key
            sift_down(ei, ek, start, m, _ZERO)
        else:
            ek[start] = key
            break
    ni[v, HEAPLEN] = m
    if m == 0:
        nf[v, UB] = nf[v, LB]
        ni[v, COMPLETE] = 1
    else:
        nf[v, UB] = max(nf[v, LB], ek[start])


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_INDEX = np.zeros(64, dtype=np.int64)
for _b in range(64):
    _BIT_INDEX[((1 << _b) * 0x03F79D71B4CB0A89 % 2**64) >> 58] = _b


@njit(nogil=True, cache=True)
def literal_bits(X, flag):
    """Row bitsets of every literal: ``bits[2a + s]`` has bit ``i`` set when ``X[i, a] == s``.

    Built a word (64 rows) at a time over tiles of tests, so each word is written once and the tile of ``X``
    stays in cache (row by row, the writes scattered over the 2p bitsets took 29 s on 15,000 x 150,000
    tests).  ``flag`` is looked at between words; once it is set the bitsets are left incomplete (the search
    then never reads them: it stops before its first iteration).
    """
    n, p = X.shape
    n_words = (n + 63) // 64
    bits = np.zeros((2 * p, n_words), dtype=np.uint64)
    one = np.uint64(1)
    for w in range(n_words):
        if flag[0] != 0:
            break
        i0 = w * 64
        i1 = min(n, i0 + 64)
        full = ~np.uint64(0) if i1 - i0 == 64 else (one << np.uint64(i1 - i0)) - one
        for a0 in range(0, p, 1024):
            for a in range(a0, min(p, a0 + 1024)):
                word = np.uint64(0)
                for i in range(i0, i1):
                    if X[i, a] != 0:
                        word |= one << np.uint64(i - i0)
                bits[2 * a + 1, w] = word
                bits[2 * a, w] = ~word & full
    return bits


@njit(nogil=True, cache=True)
def _branch_rows(bits, lits, s, d, n, acc, rows):
    # Rows satisfying every literal of lits[s:s+d]: AND of the literals' bitsets (64 rows per word), then
    # the set bits, found with a de Bruijn multiply.
    one = np.uint64(1)
    n_words = acc.shape[0]
    for k in range(n_words):
        acc[k] = ~np.uint64(0)
    if n & 63:
        acc[n_words - 1] = (one << np.uint64(n & 63)) - one
    for j in range(d):
        lit = lits[s + j]
        for k in range(n_words):
            acc[k] &= bits[lit, k]
    nr = 0
    for k in range(n_words):
        w = acc[k]
        while w != np.uint64(0):
            low = w & (~w + one)
            rows[nr] = (k << 6) + _BIT_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]
            nr += 1
            w ^= low
    return nr


@njit(nogil=True, cache=True)
def _wvals(cnt1, a, tot, Ci):
    """Weighted path: ``(t1, P1, t0, P0)`` of the two sides of test ``a`` from their class masses ``M``.

    A leaf's value is ``t = sum_c M[c] * max_p C[c, p] - min_p sum_c M[c] * C[c, p]`` and a perfect tree's
    (every row its cheapest class) ``P = sum_c M[c] * (max_p C[c, p] - min_p C[c, p])``: both add up over
    disjoint rows like correct counts and row counts, so the search, its memo and the purification bound
    (``P - cost`` for any split) hold unchanged, and maximising ``sum t - cost * splits`` minimises the
    weighted cost plus ``cost`` per split (``sum t = sum_c M[c] * max_p C[c, p] - total cost``).
    """
    k = tot.shape[0]
    r1 = np.int64(0)
    r0 = np.int64(0)
    p1 = np.int64(0)
    p0 = np.int64(0)
    for c in range(k):
        mx = Ci[c, 0]
        mn = Ci[c, 0]
        for q in range(1, k):
            mx = max(mx, Ci[c, q])
            mn = min(mn, Ci[c, q])
        m1 = np.int64(cnt1[c, a])
        m0 = np.int64(tot[c]) - m1
        r1 += m1 * mx
        r0 += m0 * mx
        p1 += m1 * (mx - mn)
        p0 += m0 * (mx - mn)
    b1 = r1
    b0 = r0
    for q in range(k):
        c1 = np.int64(0)
        c0 = np.int64(0)
        for c in range(k):
            m1 = np.int64(cnt1[c, a])
            c1 += m1 * Ci[c, q]
            c0 += (np.int64(tot[c]) - m1) * Ci[c, q]
        b1 = min(b1, c1)
        b0 = min(b0, c0)
    return r1 - b1, p1, r0 - b0, p0


@njit(nogil=True, cache=True)
def _expand(
    v,
    X,
    y,
    bits,
    cost,
    max_depth,
    eps,
    ni,
    nf,
    lits,
    eis,
    eks,
    shift,
    n_ent,
    rows,
    acc,
    cnt1,
    tot,
    used,
    gstart,
    gtests,
    mp,
    n_mp,
    group_only,
    wrow=None,
    Ci=None,
):
    """Add v's split entries (children lazy or final) for every test that splits its rows and every one-hot
    group with at least 3 categories among them (a multiway split); ``(entry count, pool size)``.

    The entries go at ``n_ent``, where the caller has made room for ``p + groups`` of them in one chunk,
    and the multiway children at ``n_mp`` in ``mp`` (room for ``p`` rows).  Tests with ``group_only`` set
    are used inside multiway splits only (never as binary splits).  With ``wrow`` (the weighted path, see
    :func:`branches_search`) ``cnt1`` and ``tot`` hold class masses and a branch's values come from ``_wvals``.
    """
    p = X.shape[1]
    n_classes = tot.shape[0]
    d = ni[v, DEPTH]
    s = ni[v, LITS]
    nr = _branch_rows(bits, lits, s, d, X.shape[0], acc, rows)
    cnt1[:, :] = 0
    tot[:] = 0
    if wrow is None:
        for r in range(nr):
            i = rows[r]
            yi = y[i]
            tot[yi] += 1
            row = X[i]
            ck = cnt1[yi]
            for a in range(p):  # contiguous and branch-free: vectorised by LLVM
                ck[a] += row[a]
    else:
        for r in range(nr):
            i = rows[r]
            yi = y[i]
            wi = wrow[i]
            tot[yi] += wi
            row = X[i]
            ck = cnt1[yi]
            for a in range(p):
                ck[a] += row[a] * wi
    nrv = nr
    if wrow is not None:
        nrv = np.int64(ni[v, N])  # the branch's perfect value, in place of its rows
    used[:] = group_only
    for j in range(d):
        used[lits[s + j] >> 1] = 1
    ei = eis[n_ent >> shift]
    ek = eks[n_ent >> shift]
    start = n_ent & ((1 << shift) - 1)
    m = np.int64(0)  # entries kept (typed: heapify compiles once)
    for a in range(p):
        if used[a]:
            continue
        n1 = np.int64(0)
        t1 = np.int64(0)
        t0 = np.int64(0)
        for k in range(n_classes):
            n1 += cnt1[k, a]
            t1 = max(t1, cnt1[k, a])
            t0 = max(t0, tot[k] - cnt1[k, a])
        n0 = nr - n1
        if wrow is not None:
            n0 = tot.sum() - n1  # masses (every weight >= 1: no mass, no rows)
        if n1 == 0 or n0 == 0:  # sends every row one way: never better than not splitting
            continue
        if wrow is not None:
            t1, n1, t0, n0 = _wvals(cnt1, a, tot, Ci)
        e = start + m
        ei[e, E_ATTR] = a
        ei[e, E_C0] = FINAL if _final(d + 1, n0, t0, cost, max_depth, eps) else LAZY
        ei[e, E_C1] = FINAL if _final(d + 1, n1, t1, cost, max_depth, eps) else LAZY
        ei[e, E_N0] = n0
        ei[e, E_T0] = t0
        ei[e, E_T1] = t1
        _take(
            v,
            np.int64(a),
            np.int64(ei[e, E_C0]),
            np.int64(t0),
            np.int64(ei[e, E_C1]),
            np.int64(t1),
            ni,
            nf,
            cost,
            eps,
            mp,
            p,
        )
        key = _entry_ub(nf, ei, e, nrv, cost, mp, p)
        if key > nf[v, LB] + eps:  # else the entry can never beat the best tree: not kept
            ek[e] = key
            m += 1
    # Multiway splits: one child per category present (the group's tests partition the rows, so the
    # child of category c is the branch with literal "test c = 1": the same lattice, the same memo).
    for g in range(gstart.shape[0] - 1):
        k = 0
        binary_too = False  # some present category is also a binary test
        for j in range(gstart[g], gstart[g + 1]):
            a = gtests[j]
            n1 = 0
            t1 = 0
            for c in range(n_classes):
                n1 += cnt1[c, a]
                t1 = max(t1, cnt1[c, a])
            if n1 == 0:
                continue
            if wrow is not None:
                t1, n1, _, _ = _wvals(cnt1, a, tot, Ci)
            r = n_mp + k
            mp[r, M_REF] = FINAL if _final(d + 1, n1, t1, cost, max_depth, eps) else LAZY
            mp[r, M_N] = n1
            mp[r, M_T] = t1
            mp[r, M_TEST] = a
            binary_too = binary_too or group_only[a] == 0
            k += 1
        if k < 2 or (k == 2 and binary_too):  # two categories: a binary test's partition, with its own entry
            continue
        e = start + m
        ei[e, E_ATTR] = p + g
        ei[e, E_C0] = n_mp
        ei[e, E_N0] = k
        ei[e, E_C1] = 0
        ei[e, E_T0] = 0
        ei[e, E_T1] = 0
        _take(v, np.int64(p + g), np.int64(n_mp), _ZERO, np.int64(k), _ZERO, ni, nf, cost, eps, mp, p)
        key = _entry_ub(nf, ei, e, nrv, cost, mp, p)
        kept = key > nf[v, LB] + eps
        if kept:
            ek[e] = key
            m += 1
        if kept or (ni[v, BEST_ATTR] == p + g and ni[v, BEST_C0] == n_mp):  # the pool rows are referenced
            n_mp += k
    heapify(ei, ek, start, m)
    ni[v, HEAP] = n_ent
    ni[v, HEAPLEN] = m
    ni[v, EXPANDED] = 1
    _refresh(v, ni, nf, eis, eks, shift, cost, eps, mp, p)
    return n_ent + m, n_mp


@njit(nogil=True, cache=True)
def _best_tree(ni, mp, p):
    """Arrays of the best tree recorded from the root: ``feature, left, right`` (binary nodes) and, per
    node, ``m_first, m_len`` into ``m_child, m_test`` (multiway nodes, whose ``feature`` is their first
    branch's test)."""
    # Count the tree's nodes first (each stored branch appears at most once in it).
    size = 1
    n_branch = 0
    stack = [0]
    while len(stack) > 0:
        v = stack.pop()
        if v < 0 or ni[v, BEST_ATTR] < 0:
            continue
        if ni[v, BEST_ATTR] >= p:
            for r in range(ni[v, BEST_C0], ni[v, BEST_C0] + ni[v, BEST_C1]):
                stack.append(np.int64(mp[r, M_REF]))
            size += ni[v, BEST_C1]
            n_branch += ni[v, BEST_C1]
        else:
            stack.append(np.int64(ni[v, BEST_C0]))
            stack.append(np.int64(ni[v, BEST_C1]))
            size += 2
    feature = np.full(size, -1, dtype=np.int64)
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    m_first = np.zeros(size, dtype=np.int64)
    m_len = np.zeros(size, dtype=np.int64)
    m_child = np.zeros(n_branch, dtype=np.int64)
    m_test = np.zeros(n_branch, dtype=np.int64)
    todo = [(0, 0)]  # (branch reference, output index)
    out = 1
    n_out = 0
    while len(todo) > 0:
        v, k = todo.pop()
        if v < 0 or ni[v, BEST_ATTR] < 0:
            continue
        if ni[v, BEST_ATTR] >= p:
            s, km = ni[v, BEST_C0], ni[v, BEST_C1]
            feature[k] = mp[s, M_TEST]
            m_first[k] = n_out
            m_len[k] = km
            for j in range(km):
                m_child[n_out + j] = out + j
                m_test[n_out + j] = mp[s + j, M_TEST]
            for j in range(km - 1, -1, -1):  # first branch emitted next: preorder numbering
                todo.append((np.int64(mp[s + j, M_REF]), out + j))
            n_out += km
            out += km
            continue
        feature[k] = ni[v, BEST_ATTR]
        left[k] = out
        right[k] = out + 1
        # Push the 1 child first so the 0 child (left) is emitted next: preorder numbering.
        todo.append((np.int64(ni[v, BEST_C1]), out + 1))
        todo.append((np.int64(ni[v, BEST_C0]), out))
        out += 2
    return feature, left, right, m_first, m_len, m_child, m_test


@njit(nogil=True, cache=True)
def branches_search(
    X, y, n_classes, cost, max_depth, zob, max_bytes, flag, counters, gstart, gtests, group_only, wrow=None, Ci=None
):
    """Run BRANCHES on a 0/1 matrix until the root is complete or ``flag[0] != 0``.

    Parameters
    ----------
    X : uint8 (n, p)
        Binary tests.
    y : int64 (n,)
        Class indices.
    n_classes : int
    cost : float
        Cost of one split in training rows (``lambda * n``).
    max_depth : int
        Depth limit (a large number for none).
    zob : int64 (2 * p,)
        Random words of the Zobrist hash, one per literal.
    max_bytes : int
        Memory budget of the branch store; the search stops (unproven) before exceeding it.
    flag, counters : int64 arrays of ``solvers.Control``
        ``counters[0]`` = iterations, ``counters[1]`` = branches stored, ``counters[2]`` = expansions.
    gstart, gtests : int64 arrays
        One-hot groups offered as multiway splits: group ``g`` is the tests ``gtests[gstart[g]:gstart[g+1]]``,
        which must partition the rows (every row has exactly one of them at 1).  ``gstart = [0]``: none.
    group_only : int64 array (p,)
        1 for a test that is only a branch of its group's multiway split, never a binary split.
    wrow, Ci : int32 (n,) and int64 (k, k), optional
        The weighted path: whole row weights (>= 1) and costs ``Ci[true, predicted]``.  Values are then in
        weighted units (``_wvals``: a leaf's ``t`` and a branch's perfect value in place of correct and row
        counts, all below 2**31) and ``cost`` is ``lambda`` times the total weight.  Numba compiles the plain
        call (both None) without any of it.

    Returns
    -------
    feature, left, right : int64 arrays
        The best tree found (left is the 0 side of a binary test).
    m_first, m_len, m_child, m_test : int64 arrays
        Its multiway nodes: node ``k``'s branches are ``m_child/m_test[m_first[k]:m_first[k] + m_len[k]]``
        (``m_len[k] == 0`` for other nodes).
    ub, lb : float
        Root bounds in training rows (``lb`` is the best tree's value).
    complete : bool
        Whether optimality is proven.
    out_of_memory : bool
        Whether the memory budget stopped the search.
    iterations, expansions, n_branches : int
        Iterations (selection + backpropagation; most also expand a branch), expansions and branches
        stored.
    """
    n, p = X.shape
    n_groups = gstart.shape[0] - 1
    n_act = p + n_groups  # most entries one expansion can add
    eps = 1e-9 * (n + 1.0)
    ni = np.zeros((1024, N_INT), dtype=np.int32)
    nh = np.zeros(1024, dtype=np.int64)
    nf = np.zeros((1024, 2), dtype=np.float64)
    lits = np.zeros(4096, dtype=np.int32)
    # Split entries live in fixed-size chunks (a node's entries never straddle two), so the pool grows
    # without copying: the memory budget can be used fully.
    shift = 14
    while (1 << shift) < n_act:
        shift += 1
    chunk = 1 << shift
    chunk_bytes = chunk * (4 * E_INT + 8)
    eis = List()
    eks = List()
    eis.append(np.empty((chunk, E_INT), dtype=np.int32))
    eks.append(np.empty(chunk, dtype=np.float64))
    mp = np.zeros((1024, M_INT), dtype=np.int32)
    n_mp = np.int64(0)
    hk = np.zeros(4096, dtype=np.int64)
    hv = np.full(4096, -1, dtype=np.int32)
    rows = np.empty(n, dtype=np.int64)
    bits = literal_bits(X, flag)
    acc = np.empty(bits.shape[1], dtype=np.uint64)
    cnt1 = np.zeros((n_classes, p), dtype=np.int32)  # rows with test = 1, per class
    tot = np.zeros(n_classes, dtype=np.int64)
    used = np.zeros(p, dtype=np.int64)
    cand = np.zeros(p + 1, dtype=np.int32)
    path = np.zeros(p + 2, dtype=np.int64)
    step = np.zeros((p + 2, 5), dtype=np.int64)  # split taken at each level: attr, c0, t0, c1, t1

    for i in range(n):
        tot[y[i]] += 1
    root_t = tot.max()
    root_n = np.int64(n)
    if wrow is not None:
        tot[:] = 0
        for i in range(n):
            tot[y[i]] += wrow[i]
        c1 = np.zeros((n_classes, 1), dtype=np.int64)
        c1[:, 0] = tot
        root_t, root_n, _, _ = _wvals(c1, 0, tot, Ci)
        eps = 1e-12 * (root_n + 1.0)  # values are whole numbers up to 2**31: ties only within float noise
    # the root, with int64 arguments as every later call passes them (a literal compiles a kernel once more)
    _, slot = lookup(hk, hv, ni, lits, _ZERO, cand, _ZERO)
    n_lits = _new_node(
        ni, nh, nf, lits, _ZERO, hk, hv, slot, _ZERO, _ZERO, cand, _ZERO, root_n, root_t, cost, max_depth, eps
    )
    n_nodes = np.int64(1)
    n_ent = np.int64(0)
    it = 0
    n_exp = 0
    oom = False
    while ni[0, COMPLETE] == 0 and flag[0] == 0:
        # Room for one iteration: a branch per level of the path and one node's entries, so the helpers
        # never reallocate; the memory budget is checked here.
        need = n_nodes + p + 2
        n_new_lits = n_lits + (p + 2) * (p + 1)
        if (n_ent & (chunk - 1)) + n_act > chunk:
            n_ent = ((n_ent >> shift) + 1) << shift
        if (n_ent >> shift) >= len(eis) and 2 * live_entries(ni, n_nodes) <= n_ent:
            n_ent, in_use = compact_entries(ni, n_nodes, eis, eks, shift)  # reuse the pool before growing it
            while len(eis) > in_use:
                eis.pop()
                eks.pop()
            if (n_ent & (chunk - 1)) + n_act > chunk:
                n_ent = ((n_ent >> shift) + 1) << shift
        new_chunk = (n_ent >> shift) >= len(eis)
        need_mp = n_mp + p if n_groups > 0 else 0
        held = (
            ni.nbytes + nh.nbytes + nf.nbytes + lits.nbytes + hk.nbytes + hv.nbytes + mp.nbytes + len(eis) * chunk_bytes
        )
        extra = (
            grown_bytes(ni, need)
            + grown_bytes(nh, need)
            + grown_bytes(nf, need)
            + grown_bytes(lits, n_new_lits)
            + rehash_bytes(hk, hv, need)
            + new_chunk * chunk_bytes
            + grown_bytes(mp, need_mp)
        )
        if held + extra > max_bytes:  # growing copies: old and new arrays coexist for a moment
            oom = True
            break
        ni = grow2(ni, need)
        nh = grow1(nh, need)
        nf = grow2(nf, need)
        lits = grow1(lits, n_new_lits)
        mp = grow2(mp, need_mp)
        if new_chunk:
            eis.append(np.empty((chunk, E_INT), dtype=np.int32))
            eks.append(np.empty(chunk, dtype=np.float64))
        hk, hv = rehash(hk, hv, nh, n_nodes, need)
        # Selection: best bound first; inside it, the incomplete child with the lowest estimate, stored
        # (looked up in the memo) as it is entered.
        v = np.int64(0)
        plen = 0
        while True:
            path[plen] = v
            plen += 1
            if ni[v, EXPANDED] == 0 or ni[v, COMPLETE] == 1:
                break
            _refresh(v, ni, nf, eis, eks, shift, cost, eps, mp, p)
            if ni[v, COMPLETE] == 1:
                break
            g = ni[v, HEAP]
            ei = eis[g >> shift]
            e = g & (chunk - 1)
            _entry_step(ei, e, p, step[plen - 1])
            if ei[e, E_ATTR] >= p:
                # Multiway: enter the incomplete child with the lowest estimate, as for a binary split.
                best_r = -1
                for r in range(ei[e, E_C0], ei[e, E_C0] + ei[e, E_N0]):
                    if _ref_open(ni, mp[r, M_REF]) and (
                        best_r < 0
                        or _ref_lb(nf, mp[r, M_REF], mp[r, M_T]) < _ref_lb(nf, mp[best_r, M_REF], mp[best_r, M_T])
                    ):
                        best_r = r
                if best_r < 0:
                    best_r = ei[e, E_C0]
                c = mp[best_r, M_REF]
                if c == LAZY:
                    c, n_nodes, n_lits = _child(
                        v,
                        2 * mp[best_r, M_TEST] + 1,
                        mp[best_r, M_N],
                        mp[best_r, M_T],
                        ni,
                        nh,
                        nf,
                        lits,
                        n_lits,
                        hk,
                        hv,
                        zob,
                        n_nodes,
                        cand,
                        cost,
                        max_depth,
                        eps,
                    )
                    mp[best_r, M_REF] = c
                v = np.int64(c)
                continue
            c0, c1 = ei[e, E_C0], ei[e, E_C1]
            side = 0
            if not _ref_open(ni, c0) or (
                _ref_open(ni, c1) and _ref_lb(nf, c1, ei[e, E_T1]) < _ref_lb(nf, c0, ei[e, E_T0])
            ):
                side = 1
            c = ei[e, E_C0 + side]
            if c == LAZY:
                n_side = ei[e, E_N0] if side == 0 else ni[v, N] - ei[e, E_N0]
                t_side = ei[e, E_T0] if side == 0 else ei[e, E_T1]
                c, n_nodes, n_lits = _child(
                    v,
                    2 * ei[e, E_ATTR] + side,
                    n_side,
                    t_side,
                    ni,
                    nh,
                    nf,
                    lits,
                    n_lits,
                    hk,
                    hv,
                    zob,
                    n_nodes,
                    cand,
                    cost,
                    max_depth,
                    eps,
                )
                ei[e, E_C0 + side] = c
            step[plen - 1, 0] = ei[e, E_ATTR]
            step[plen - 1, 1] = ei[e, E_C0]
            step[plen - 1, 2] = ei[e, E_T0]
            step[plen - 1, 3] = ei[e, E_C1]
            step[plen - 1, 4] = ei[e, E_T1]
            v = np.int64(c)
        # Expansion.
        if ni[v, COMPLETE] == 0 and ni[v, EXPANDED] == 0:
            n_ent, n_mp = _expand(
                v,
                X,
                y,
                bits,
                cost,
                max_depth,
                eps,
                ni,
                nf,
                lits,
                eis,
                eks,
                shift,
                n_ent,
                rows,
                acc,
                cnt1,
                tot,
                used,
                gstart,
                gtests,
                mp,
                n_mp,
                group_only,
                wrow,
                Ci,
            )
            n_exp += 1
        # Backpropagation along the selection path.
        for j in range(plen - 2, -1, -1):
            u = path[j]
            _take(u, step[j, 0], step[j, 1], step[j, 2], step[j, 3], step[j, 4], ni, nf, cost, eps, mp, p)
            if ni[u, COMPLETE] == 0:
                _refresh(u, ni, nf, eis, eks, shift, cost, eps, mp, p)
        it += 1
        counters[0] = it
        counters[1] = n_nodes
        counters[2] = n_exp
    feature, left, right, m_first, m_len, m_child, m_test = _best_tree(ni, mp, p)
    return (
        feature,
        left,
        right,
        m_first,
        m_len,
        m_child,
        m_test,
        nf[0, UB],
        nf[0, LB],
        ni[0, COMPLETE] == 1,
        oom,
        it,
        n_exp,
        n_nodes,
    )
