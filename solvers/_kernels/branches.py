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
lowest ``lb`` (the paper's rule), to an unexpanded branch; *expansion* creates its children for every
test that splits its rows; *backpropagation* updates ``lb``/``ub`` along the path.  The search stops when
the root is complete (optimality proven) or when ``flag[0] != 0`` (time limit or cancel): the best tree
so far is returned either way.  There is no iteration cap; the only other stop is an explicit memory
budget for the branch store, which the caller reports.
"""

import numpy as np
from numba import njit

from solvers._kernels.branches_store import (
    BEST_ATTR,
    BEST_C0,
    BEST_C1,
    COMPLETE,
    DEPTH,
    EXPANDED,
    HEAP,
    HEAPLEN,
    LB,
    LITS,
    N_INT,
    UB,
    N,
    T,
    grow1,
    grow2,
    heap_pop,
    heapify,
    leaf_ref,
    lookup,
    rehash,
    sift_down,
)

# Approximate bytes per stored branch (int32 fields, hash, bounds, hash-table slots at load 1/2, growth
# slack), per literal and per heap entry: what the memory budget counts.
NODE_BYTES = 4 * N_INT + 8 + 16 + 2 * 12 + 24
LIT_BYTES = 4
ENTRY_BYTES = 20


@njit(nogil=True, cache=True)
def _final(d, n_rows, t, cost, max_depth, eps):
    # A branch is a leaf for good when pure, at the depth limit, or when even a perfect split (every row
    # correct, one split paid) cannot beat its leaf.
    return d >= max_depth or t == n_rows or n_rows - cost <= t + eps


@njit(nogil=True, cache=True)
def _ub(nf, c):
    return nf[c, UB] if c >= 0 else -c - 1.0


@njit(nogil=True, cache=True)
def _lb(nf, c):
    return nf[c, LB] if c >= 0 else -c - 1.0


@njit(nogil=True, cache=True)
def _complete(ni, c):
    return leaf_ref(c) or ni[c, COMPLETE] == 1


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
    """Child of ``v`` with literal ``lit`` added: ``(reference, n_nodes, n_lits)``.

    A final child is returned as a leaf reference without being stored; any other is looked up in the memo
    by its canonical (sorted) conjunction and created when new.
    """
    d = ni[v, DEPTH]
    if _final(d + 1, n_rows, t, cost, max_depth, eps):
        return -t - 1, n_nodes, n_lits
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
    n_lits = _new_node(ni, nh, nf, lits, n_lits, hk, hv, slot, n_nodes, h, cand, d + 1, n_rows, t, cost,
                       max_depth, eps)
    return n_nodes, n_nodes + 1, n_lits


@njit(nogil=True, cache=True)
def _take(v, a, c0, c1, ni, nf, cost, eps):
    # Record the split on ``a`` as v's best tree when its children's best trees beat the current one.
    val = _lb(nf, c0) + _lb(nf, c1) - cost
    if val > nf[v, LB] + eps:
        nf[v, LB] = val
        ni[v, BEST_ATTR] = a
        ni[v, BEST_C0] = c0
        ni[v, BEST_C1] = c1


@njit(nogil=True, cache=True)
def _refresh(v, ni, nf, ei, ek, cost, eps):
    """Bring v's top entry up to date, drop hopeless entries, set ub and the complete flag."""
    start = ni[v, HEAP]
    m = ni[v, HEAPLEN]
    while m > 0:
        a, c0, c1 = ei[start, 0], ei[start, 1], ei[start, 2]
        _take(v, a, c0, c1, ni, nf, cost, eps)
        key = _ub(nf, c0) + _ub(nf, c1) - cost
        if key <= nf[v, LB] + eps:
            m = heap_pop(ei, ek, start, m)
        elif key < ek[start] - eps:
            ek[start] = key
            sift_down(ei, ek, start, m, 0)
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
def literal_bits(X):
    """Row bitsets of every literal: ``bits[2a + s]`` has bit ``i`` set when ``X[i, a] == s``."""
    n, p = X.shape
    bits = np.zeros((2 * p, (n + 63) // 64), dtype=np.uint64)
    for i in range(n):
        w = i >> 6
        b = np.uint64(1) << np.uint64(i & 63)
        for a in range(p):
            bits[2 * a + X[i, a], w] |= b
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
def _expand(v, X, y, bits, cost, max_depth, eps, zob, ni, nh, nf, lits, n_lits, ei, ek, n_ent, hk, hv, n_nodes,
            rows, acc, cnt1, tot, used, cand):
    """Create v's children for every test that splits its rows; returns the new pool sizes."""
    p = X.shape[1]
    n_classes = tot.shape[0]
    d = ni[v, DEPTH]
    s = ni[v, LITS]
    nr = _branch_rows(bits, lits, s, d, X.shape[0], acc, rows)
    cnt1[:, :] = 0
    tot[:] = 0
    for r in range(nr):
        i = rows[r]
        yi = y[i]
        tot[yi] += 1
        row = X[i]
        ck = cnt1[yi]
        for a in range(p):  # contiguous and branch-free: vectorised by LLVM
            ck[a] += row[a]
    used[:] = 0
    for j in range(d):
        used[lits[s + j] >> 1] = 1
    start = n_ent
    m = 0
    for a in range(p):
        if used[a]:
            continue
        n1 = 0
        t1 = 0
        t0 = 0
        for k in range(n_classes):
            n1 += cnt1[k, a]
            t1 = max(t1, cnt1[k, a])
            t0 = max(t0, tot[k] - cnt1[k, a])
        if n1 == 0 or n1 == nr:  # sends every row one way: never better than not splitting
            continue
        c0, n_nodes, n_lits = _child(v, 2 * a, nr - n1, t0, ni, nh, nf, lits, n_lits, hk, hv, zob, n_nodes,
                                     cand, cost, max_depth, eps)
        c1, n_nodes, n_lits = _child(v, 2 * a + 1, n1, t1, ni, nh, nf, lits, n_lits, hk, hv, zob, n_nodes,
                                     cand, cost, max_depth, eps)
        _take(v, a, c0, c1, ni, nf, cost, eps)
        key = _ub(nf, c0) + _ub(nf, c1) - cost
        if key > nf[v, LB] + eps:
            ei[start + m, 0] = a
            ei[start + m, 1] = c0
            ei[start + m, 2] = c1
            ek[start + m] = key
            m += 1
    heapify(ei, ek, start, m)
    ni[v, HEAP] = start
    ni[v, HEAPLEN] = m
    ni[v, EXPANDED] = 1
    _refresh(v, ni, nf, ei, ek, cost, eps)
    return n_nodes, n_lits, n_ent + m


@njit(nogil=True, cache=True)
def _best_tree(ni):
    """Preorder arrays (feature, left, right) of the best tree recorded from the root."""
    # Count the tree's splits first (each stored branch appears at most once in it).
    n_split = 0
    stack = [0]
    while len(stack) > 0:
        v = stack.pop()
        if v >= 0 and ni[v, BEST_ATTR] >= 0:
            n_split += 1
            stack.append(np.int64(ni[v, BEST_C0]))
            stack.append(np.int64(ni[v, BEST_C1]))
    size = 2 * n_split + 1
    feature = np.full(size, -1, dtype=np.int64)
    left = np.full(size, -1, dtype=np.int64)
    right = np.full(size, -1, dtype=np.int64)
    todo = [(0, 0)]  # (branch reference, output index)
    out = 1
    while len(todo) > 0:
        v, k = todo.pop()
        if v < 0 or ni[v, BEST_ATTR] < 0:
            continue
        feature[k] = ni[v, BEST_ATTR]
        left[k] = out
        right[k] = out + 1
        # Push the 1 child first so the 0 child (left) is emitted next: preorder numbering.
        todo.append((np.int64(ni[v, BEST_C1]), out + 1))
        todo.append((np.int64(ni[v, BEST_C0]), out))
        out += 2
    return feature, left, right


@njit(nogil=True, cache=True)
def branches_search(X, y, n_classes, cost, max_depth, zob, max_bytes, flag, counters):
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
        ``counters[0]`` = iterations, ``counters[1]`` = branches stored.

    Returns
    -------
    feature, left, right : int64 arrays
        The best tree found (preorder; left is the 0 side of the test).
    ub, lb : float
        Root bounds in training rows (``lb`` is the best tree's value).
    complete : bool
        Whether optimality is proven.
    out_of_memory : bool
        Whether the memory budget stopped the search.
    iterations, n_branches : int
    """
    n, p = X.shape
    eps = 1e-9 * (n + 1.0)
    ni = np.zeros((1024, N_INT), dtype=np.int32)
    nh = np.zeros(1024, dtype=np.int64)
    nf = np.zeros((1024, 2), dtype=np.float64)
    lits = np.zeros(4096, dtype=np.int32)
    ei = np.zeros((4096, 3), dtype=np.int32)
    ek = np.zeros(4096, dtype=np.float64)
    hk = np.zeros(4096, dtype=np.int64)
    hv = np.full(4096, -1, dtype=np.int32)
    rows = np.empty(n, dtype=np.int64)
    bits = literal_bits(X)
    acc = np.empty(bits.shape[1], dtype=np.uint64)
    cnt1 = np.zeros((n_classes, p), dtype=np.int32)  # rows with test = 1, per class
    tot = np.zeros(n_classes, dtype=np.int64)
    used = np.zeros(p, dtype=np.int64)
    cand = np.zeros(p + 1, dtype=np.int32)
    path = np.zeros(p + 2, dtype=np.int64)
    step = np.zeros((p + 2, 3), dtype=np.int64)

    for i in range(n):
        tot[y[i]] += 1
    _, slot = lookup(hk, hv, ni, lits, 0, cand, 0)
    n_lits = _new_node(ni, nh, nf, lits, 0, hk, hv, slot, 0, 0, cand, 0, n, tot.max(), cost, max_depth, eps)
    n_nodes = 1
    n_ent = 0
    it = 0
    oom = False
    while ni[0, COMPLETE] == 0 and flag[0] == 0:
        # Selection: best bound first; inside it, the incomplete child with the lowest estimate.
        v = 0
        plen = 0
        while True:
            path[plen] = v
            plen += 1
            if ni[v, EXPANDED] == 0 or ni[v, COMPLETE] == 1:
                break
            _refresh(v, ni, nf, ei, ek, cost, eps)
            if ni[v, COMPLETE] == 1:
                break
            e = ni[v, HEAP]
            a, c0, c1 = ei[e, 0], ei[e, 1], ei[e, 2]
            step[plen - 1, 0] = a
            step[plen - 1, 1] = c0
            step[plen - 1, 2] = c1
            if _complete(ni, c0) or (not _complete(ni, c1) and nf[c1, LB] < nf[c0, LB]):
                v = c1
            else:
                v = c0
        # Expansion (room for 2p new branches is made first so the helpers never reallocate).
        if ni[v, COMPLETE] == 0 and ni[v, EXPANDED] == 0:
            need = n_nodes + 2 * p
            n_new_lits = n_lits + 2 * p * (ni[v, DEPTH] + 1)
            if need * NODE_BYTES + n_new_lits * LIT_BYTES + (n_ent + p) * ENTRY_BYTES > max_bytes:
                oom = True
                break
            ni = grow2(ni, need)
            nh = grow1(nh, need)
            nf = grow2(nf, need)
            lits = grow1(lits, n_new_lits)
            ei = grow2(ei, n_ent + p)
            ek = grow1(ek, n_ent + p)
            hk, hv = rehash(hk, hv, nh, n_nodes, need)
            n_nodes, n_lits, n_ent = _expand(v, X, y, bits, cost, max_depth, eps, zob, ni, nh, nf, lits, n_lits,
                                             ei, ek, n_ent, hk, hv, n_nodes, rows, acc, cnt1, tot, used, cand)
        # Backpropagation along the selection path.
        for j in range(plen - 2, -1, -1):
            u = path[j]
            _take(u, step[j, 0], step[j, 1], step[j, 2], ni, nf, cost, eps)
            if ni[u, COMPLETE] == 0:
                _refresh(u, ni, nf, ei, ek, cost, eps)
        it += 1
        counters[0] = it
        counters[1] = n_nodes
    feature, left, right = _best_tree(ni)
    return feature, left, right, nf[0, UB], nf[0, LB], ni[0, COMPLETE] == 1, oom, it, n_nodes
