"""MurTree dataset cache and similarity archive (numba kernels, arrays in and out).

Cache
-----
Open-addressing hash table keyed by a dataset (its instance set, as two independent 64-bit additive
Zobrist sums), a depth ``d`` and a node budget ``n`` (both normalised by the caller: ``d = min(d, n)``,
``n <= 2**d - 1``).  A slot takes 24 bytes (the table is most of a deep search's memory):

``keys[s] = (h1, h2 with its low 16 bits replaced by d * 4096 + n + 1)`` (0 in word 1 marks an empty
slot; two different sets collide with probability 2**-112) and ``vals[s] = (cost, packed)`` (int32):
``cost`` is the optimal number of errors when the entry is optimal and a lower bound otherwise;
``packed = optimal | n_left << 1 | (feature + 1) << 11`` holds the optimal root (``feature`` -1 for a
leaf, ``n_left`` the left child's budget): read it with :func:`entry_optimal`, :func:`entry_feature`
and :func:`entry_nleft`.  Features must be below ``MAX_FEATURES`` and budgets at most 1023.
``meta[0]`` counts the entries.  When the table is more than 70 % full an insertion is refused and
``status[0]`` is set: the search unwinds without storing anything and the wrapper grows the table and
resumes (everything cached so far is kept).

Similarity archive
------------------
Per slot (the buffer row of a dataset: its level and side) the last dataset seen there and its lower
bounds per ``(d, n)``; a new dataset ``D`` in the same slot gets
``lb(D) >= lb(D_old) - |D_old minus D|`` (each removed row lowers the error by at most one; the
optimal tree of ``D`` is also a tree for ``D_old``, with its leaves at least as large, so min leaf
support does not break the argument).
"""

import numpy as np
from numba import njit, uint64
from numba.core import types
from numba.extending import intrinsic

_EMPTY = 0
_MIX = np.uint64(0x9E3779B97F4A7C15)
# cache_put's flags passed as typed int64, not literals: a literal argument compiles a kernel once per constant
_ZERO = np.int64(0)
_ONE = np.int64(1)
_NONE = np.int64(-1)


@intrinsic
def popcount64(typingctx, x):
    """Number of set bits of a uint64 (LLVM ``ctpop``: one instruction on x86-64)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


MAX_FEATURES = 1 << 20  # the feature of a cached root takes 20 bits
_KBITS = uint64(0xFFFF)  # low bits of key word 1: depth and budget
_COST_MAX = (1 << 31) - 1


@njit(nogil=True, cache=True, inline="always")
def _key(d, n):
    return d * 4096 + n + 1


@njit(nogil=True, cache=True, inline="always")
def _word(h2, d, n):
    return (h2 & ~_KBITS) | uint64(_key(d, n))


@njit(nogil=True, cache=True, inline="always")
def _home(h1, d, n, cap):
    return np.int64((h1 ^ (uint64(_key(d, n)) * _MIX)) & uint64(cap - 1))


@njit(nogil=True, cache=True, inline="always")
def entry_optimal(vals, s):
    """1 when slot ``s`` holds an optimum, 0 for a lower bound."""
    return vals[s, 1] & 1


@njit(nogil=True, cache=True, inline="always")
def entry_feature(vals, s):
    """Root test of the optimum in slot ``s`` (-1: a leaf)."""
    return np.int64(vals[s, 1] >> 11) - 1


@njit(nogil=True, cache=True, inline="always")
def entry_nleft(vals, s):
    """Budget of the left child of the optimum in slot ``s``."""
    return np.int64((vals[s, 1] >> 1) & 1023)


@njit(nogil=True, cache=True, inline="always")
def _set(vals, s, cost, optimal, feature, n_left):
    # a bound above int32 is clipped (still a bound); costs of optima are row counts
    vals[s, 0] = cost if cost < _COST_MAX else _COST_MAX
    vals[s, 1] = optimal | (n_left << 1) | ((feature + 1) << 11)


@njit(nogil=True, cache=True)
def cache_find(keys, h1, h2, d, n):
    """Slot of ``(dataset, d, n)`` or -1."""
    cap = keys.shape[0]
    w = _word(h2, d, n)
    s = _home(h1, d, n, cap)
    while keys[s, 1] != _EMPTY:
        if keys[s, 1] == w and keys[s, 0] == h1:
            return s
        s = (s + 1) & (cap - 1)
    return -1


@njit(nogil=True, cache=True)
def cache_put(keys, vals, meta, status, h1, h2, d, n, cost, optimal, feature, n_left):
    """Store (or tighten) an entry; refuses and sets ``status[0] = 1`` when the table is 70 % full."""
    cap = keys.shape[0]
    w = _word(h2, d, n)
    s = _home(h1, d, n, cap)
    while keys[s, 1] != _EMPTY:
        if keys[s, 1] == w and keys[s, 0] == h1:
            if entry_optimal(vals, s) == 0 and (optimal == 1 or cost > vals[s, 0]):
                _set(vals, s, cost, optimal, feature, n_left)
            return
        s = (s + 1) & (cap - 1)
    if (meta[0] + 1) * 10 > cap * 7:
        status[0] = 1
        return
    keys[s, 0] = h1
    keys[s, 1] = w
    _set(vals, s, cost, optimal, feature, n_left)
    meta[0] += 1


@njit(nogil=True, cache=True)
def cache_rehash(keys, vals, new_keys, new_vals):
    """Copy every entry of a table into a larger empty one."""
    cap = new_keys.shape[0]
    for s in range(keys.shape[0]):
        w = keys[s, 1]
        if w == _EMPTY:
            continue
        h1 = keys[s, 0]
        k = w & _KBITS
        t = np.int64((h1 ^ (k * _MIX)) & uint64(cap - 1))
        while new_keys[t, 1] != _EMPTY:
            t = (t + 1) & (cap - 1)
        new_keys[t, 0] = h1
        new_keys[t, 1] = w
        new_vals[t, 0] = vals[s, 0]
        new_vals[t, 1] = vals[s, 1]


@njit(nogil=True, cache=True)
def archive_lb(arch_inst, arch_m, arch_h, arch_lb, slot, inst, m, h1, h2, d, n):
    """Similarity lower bound of dataset ``inst[:m]`` from the one archived in ``slot``."""
    old = arch_lb[slot, d, n]
    if arch_m[slot] < 0 or old <= 0:
        return 0
    if arch_h[slot, 0] == h1 and arch_h[slot, 1] == h2:
        return old
    # both index lists are ascending: count the archived rows missing from the new set
    a = arch_inst[slot]
    ma = arch_m[slot]
    removed = 0
    j = 0
    for i in range(ma):
        v = a[i]
        while j < m and inst[j] < v:
            j += 1
        if j < m and inst[j] == v:
            j += 1
        else:
            removed += 1
            if removed >= old:  # the bound is worthless
                return 0
    return old - removed


@njit(nogil=True, cache=True)
def archive_put(arch_inst, arch_m, arch_h, arch_lb, slot, inst, m, h1, h2, d, n, lb):
    """Remember a lower bound of dataset ``inst[:m]`` in ``slot`` (replacing another dataset)."""
    if arch_m[slot] < 0 or arch_h[slot, 0] != h1 or arch_h[slot, 1] != h2:
        # element by element: an array assignment compiles numba's shape-mismatch error (string formatting)
        for i in range(m):
            arch_inst[slot, i] = inst[i]
        arch_m[slot] = m
        arch_h[slot, 0] = h1
        arch_h[slot, 1] = h2
        arch_lb[slot, :, :] = 0
    if lb > arch_lb[slot, d, n]:
        arch_lb[slot, d, n] = lb
