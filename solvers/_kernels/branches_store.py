"""Storage of the BRANCHES lattice: node table, memo (hash table of conjunctions) and per-node heaps.

A *branch* is a conjunction of binary tests; literal ``2*a + s`` means "test ``a`` has value ``s``".
Each node keeps its literals sorted in a shared pool, so a conjunction has one canonical form whatever
the order in which its tests were added.  The memo key is a Zobrist hash (XOR of one random word per
literal), which is order-independent and updated in O(1) from the parent; hits are confirmed by
comparing the sorted literal lists, so a hash collision can never merge two different branches.

Arrays are preallocated by the caller and grown (``grow1``/``grow2``/``rehash``, or a new chunk of the
entry pool) *between* iterations, so the helpers here never reallocate.  Node fields are int32 and the
hash lives in its own int64 array: the store's width is what bounds a search's memory.

Children are stored lazily.  A split entry of an expanded branch holds, per side, a reference and the
child's row count and leaf value: ``FINAL`` (a child that can only be a leaf: pure, at the depth limit, or
too small to pay for a split; never stored), ``LAZY`` (not stored yet: its bounds are still the
purification bound computed from those counts) or the id of a stored branch.  A lazy child is looked up in
the memo (and created if new) only when the selection enters it, so most children never cost a node.
"""

import numpy as np
from numba import njit

# Integer fields of a node (columns of ``ni``).
T = 0  # training rows of the majority class (the leaf's correct count)
N = 1  # training rows in the branch
DEPTH = 2  # number of literals
EXPANDED = 3  # 1 once the children of every useful test exist
COMPLETE = 4  # 1 when ub == lb (the branch's optimum is known)
LITS = 5  # start of the sorted literals in the pool
HEAP = 6  # start of the node's split entries in the entry pool (a max-heap on the entry bound)
HEAPLEN = 7  # live entries
BEST_ATTR = 8  # test of the best tree found so far (-1: a leaf)
BEST_C0 = 9  # its 0 child
BEST_C1 = 10  # its 1 child
N_INT = 11
# Fields of a split entry (columns of ``ei``) and the special child references.
E_ATTR = 0
E_C0 = 1  # reference of the 0 child; E_N0/E_T0 its rows and leaf value
E_C1 = 2  # reference of the 1 child; E_T1 its leaf value (its rows: the parent's minus E_N0)
E_N0 = 3
E_T0 = 4
E_T1 = 5
E_INT = 6
FINAL = -1
LAZY = -2
# A multiway entry (``E_ATTR >= p``: one-hot group ``E_ATTR - p``) keeps its k children in the multiway
# pool ``mp`` instead: ``E_C0`` is the start of its k rows there and ``E_N0`` is k.  A pool row holds one
# child: its reference (as above), rows, leaf value and the one-hot test whose 1 side selects it.  The
# pool only grows (rows of dropped entries are not reused): a branch's best tree may point into it.
M_REF = 0
M_N = 1
M_T = 2
M_TEST = 3
M_INT = 4
# Float fields (columns of ``nf``), in training rows: value = correct rows - cost * splits.
UB = 0
LB = 1


@njit(nogil=True, cache=True)
def _capacity(have, need):
    # Grow by half (not double) to limit the overshoot of a store that is most of the memory.
    cap = max(have, 16)
    while cap < need:
        cap += cap // 2
    return cap


@njit(nogil=True, cache=True)
def grow1(a, need):
    """``a`` itself when it has ``need`` slots, else a copy with 1.5x capacity (1-D)."""
    if need <= a.shape[0]:
        return a
    out = np.empty(_capacity(a.shape[0], need), dtype=a.dtype)
    # element by element: an array assignment compiles numba's shape-mismatch error (string formatting)
    for i in range(a.shape[0]):
        out[i] = a[i]
    return out


@njit(nogil=True, cache=True)
def grow2(a, need):
    """As :func:`grow1` for the rows of a 2-D array."""
    if need <= a.shape[0]:
        return a
    out = np.empty((_capacity(a.shape[0], need), a.shape[1]), dtype=a.dtype)
    for i in range(a.shape[0]):  # element by element, as grow1
        for j in range(a.shape[1]):
            out[i, j] = a[i, j]
    return out


@njit(nogil=True, cache=True)
def rehash(hk, hv, nh, n_nodes, need):
    """Hash table with room for ``need`` nodes at load <= 1/2 (the same arrays if they suffice)."""
    if 2 * need <= hk.shape[0]:
        return hk, hv
    cap = hk.shape[0]
    while cap < 2 * need:
        cap *= 2
    hk2 = np.zeros(cap, dtype=np.int64)
    hv2 = np.full(cap, -1, dtype=np.int32)
    mask = cap - 1
    for v in range(n_nodes):
        h = nh[v]
        pos = h & mask
        while hv2[pos] >= 0:
            pos = (pos + 1) & mask
        hk2[pos] = h
        hv2[pos] = v
    return hk2, hv2


@njit(nogil=True, cache=True)
def lookup(hk, hv, ni, lits, h, cand, d):
    """Node holding the sorted conjunction ``cand[:d]`` with hash ``h`` (or -1) and the probe slot."""
    mask = hk.shape[0] - 1
    pos = h & mask
    while True:
        v = hv[pos]
        if v < 0:
            return -1, pos
        if hk[pos] == h and ni[v, DEPTH] == d:
            s = ni[v, LITS]
            same = True
            for j in range(d):
                if lits[s + j] != cand[j]:
                    same = False
                    break
            if same:
                return v, pos
        pos = (pos + 1) & mask


@njit(nogil=True, cache=True)
def sift_down(ei, ek, start, m, pos):
    """Restore the max-heap on ``ek[start:start+m]`` below ``pos`` (entries move with their keys)."""
    while True:
        c = 2 * pos + 1
        if c >= m:
            return
        if c + 1 < m and ek[start + c + 1] > ek[start + c]:
            c += 1
        if ek[start + c] <= ek[start + pos]:
            return
        a, b = start + c, start + pos
        ek[a], ek[b] = ek[b], ek[a]
        for f in range(ei.shape[1]):
            ei[a, f], ei[b, f] = ei[b, f], ei[a, f]
        pos = c


@njit(nogil=True, cache=True)
def heapify(ei, ek, start, m):
    for pos in range(m // 2 - 1, -1, -1):
        sift_down(ei, ek, start, m, pos)


@njit(nogil=True, cache=True)
def heap_pop(ei, ek, start, m):
    """Drop the top entry; returns the new length."""
    m -= 1
    if m > 0:
        ek[start] = ek[start + m]
        for f in range(ei.shape[1]):
            ei[start, f] = ei[start + m, f]
        sift_down(ei, ek, start, m, np.int64(0))
    return m


@njit(nogil=True, cache=True)
def grown_bytes(a, need):
    """Bytes :func:`grow1`/:func:`grow2` would allocate to give ``a`` room for ``need`` rows (0: none)."""
    if need <= a.shape[0]:
        return 0
    return _capacity(a.shape[0], need) * (a.size // max(a.shape[0], 1)) * a.itemsize


@njit(nogil=True, cache=True)
def rehash_bytes(hk, hv, need):
    """Bytes :func:`rehash` would allocate for ``need`` nodes (0: none)."""
    if 2 * need <= hk.shape[0]:
        return 0
    cap = hk.shape[0]
    while cap < 2 * need:
        cap *= 2
    return cap * (hk.itemsize + hv.itemsize)


@njit(nogil=True, cache=True)
def live_entries(ni, n_nodes):
    """Entries still in some heap (the rest of the pool is garbage of completed or pruned splits)."""
    live = 0
    for v in range(n_nodes):
        live += ni[v, HEAPLEN]
    return live


@njit(nogil=True, cache=True)
def compact_entries(ni, n_nodes, eis, eks, shift):
    """Move every live heap down the chunked entry pool, in place; returns (pool size, chunks in use).

    Regions are moved in increasing start order and never straddle a chunk, so each lands at or before
    its old place and never over a region not yet moved.
    """
    chunk = 1 << shift
    mask = chunk - 1
    starts = np.empty(n_nodes, dtype=np.int64)
    for v in range(n_nodes):
        starts[v] = ni[v, HEAP] if ni[v, HEAPLEN] > 0 else -1
    pos = 0
    for v in np.argsort(starts):
        m = ni[v, HEAPLEN]
        if m == 0:
            continue
        if (pos & mask) + m > chunk:
            pos = ((pos >> shift) + 1) << shift
        g = ni[v, HEAP]
        src_i, src_k, s = eis[g >> shift], eks[g >> shift], g & mask
        dst_i, dst_k, d = eis[pos >> shift], eks[pos >> shift], pos & mask
        for j in range(m):
            dst_k[d + j] = src_k[s + j]
            for f in range(dst_i.shape[1]):
                dst_i[d + j, f] = src_i[s + j, f]
        ni[v, HEAP] = pos
        pos += m
    return pos, max(1, (pos + mask) >> shift)
