"""MurTree dataset cache and similarity archive (numba kernels, arrays in and out).

Cache
-----
Open-addressing hash table keyed by a dataset (its instance set, as two independent 64-bit additive
Zobrist sums), a depth ``d`` and a node budget ``n`` (both normalised by the caller: ``d = min(d, n)``,
``n <= 2**d - 1``).  A slot takes 24 bytes (the table is most of a deep search's memory):

``keys[s] = (h1, h2 with its low 16 bits replaced by d * 4096 + n + 1)`` (0 in word 1 marks an empty
slot; two different sets collide with probability 2**-112) and ``vals[s] = (cost, packed)`` (int32):
``cost`` is the optimal number of errors when the entry is optimal and a lower bound otherwise (the weighted
objective's tables hold int64 or float64 costs, and the packed word as a number of the same type);
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
``lb(D) >= lb(D_old) - |D_old minus D|`` (each removed row lowers the error by at most one, a weighted row by
at most its weight times the largest cost of its class: :func:`row_pen`; the
optimal tree of ``D`` is also a tree for ``D_old``, with its leaves at least as large, so min leaf
support does not break the argument).
"""

import numpy as np
from numba import njit, uint64
from numba.core import types
from numba.extending import intrinsic, overload

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


# --------------------------------------------------------------------------------------- the objective's type
# The search and the depth-2 solver are compiled once per type of ``cm``, the workspace's cost matrix: a 1-D
# placeholder is plain misclassification (errors from int64 counts: the kernels' original code), a 2-D matrix
# ``cm[g, p]`` (int64: ``solvers.murtree`` rounds real weights to quanta; float64 compiles too) the weighted
# objective, where ``g`` is a row's group (its class and weight) and ``p`` a predicted class.  These helpers pick
# each variant's code at compile time, so the plain kernels compile to what they were.  Those with a branch or a
# loop are left to LLVM to inline (numba's IR inliner warns on them: NumbaIRAssumptionWarning); the branch-free
# ones numba inlines.


def _plain(cm):
    return isinstance(cm, types.Array) and cm.ndim == 1


def leaf_cost(cnt, C, cm):
    """The least cost of a leaf of group counts ``cnt[:C]`` (errors when ``cm`` is the plain placeholder)."""
    if cm.ndim == 1:
        return int(np.sum(cnt[:C]) - np.max(cnt[:C]))
    best = None
    for p in range(cm.shape[1]):  # the kernels' order of summation: the same float64 result
        s = cnt[0] * cm[0, p]
        for c in range(1, C):
            s += cnt[c] * cm[c, p]
        if best is None or s < best:
            best = s
    return best.item()


@overload(leaf_cost, jit_options={"nogil": True})
def _leaf_cost(cnt, C, cm):
    if _plain(cm):

        def plain(cnt, C, cm):
            tot = 0
            mx = 0
            for c in range(C):
                v = cnt[c]
                tot += v
                if v > mx:
                    mx = v
            return tot - mx

        return plain

    def weighted(cnt, C, cm):
        best = cnt[0] * cm[0, 0]
        for c in range(1, C):
            best += cnt[c] * cm[c, 0]
        for p in range(1, cm.shape[1]):
            s = cnt[0] * cm[0, p]
            for c in range(1, C):
                s += cnt[c] * cm[c, p]
            if s < best:
                best = s
        return best

    return weighted


def two_classes(cm):
    """Whether the depth-2 solver's two-group loop applies: plain errors, or a cost matrix of two classes."""
    return cm.ndim == 1 or cm.shape[1] == 2


@overload(two_classes, inline="always", jit_options={"nogil": True})
def _two_classes(cm):
    if _plain(cm):
        return lambda cm: True
    return lambda cm: cm.shape[1] == 2


def costs2(cm):
    """``(cm[0, 0], cm[0, 1], cm[1, 0], cm[1, 1])`` of a two-class objective (zeros for plain errors)."""
    return (0, 0, 0, 0) if cm.ndim == 1 else (cm[0, 0], cm[0, 1], cm[1, 0], cm[1, 1])


@overload(costs2, inline="always", jit_options={"nogil": True})
def _costs2(cm):
    if _plain(cm):
        return lambda cm: (np.int64(0), np.int64(0), np.int64(0), np.int64(0))
    return lambda cm: (cm[0, 0], cm[0, 1], cm[1, 0], cm[1, 1])


def leaf_cost2(z0, z1, cm, q):
    """:func:`leaf_cost` of two groups with counts ``z0`` and ``z1`` and two classes, ``q = costs2(cm)``."""
    if cm.ndim == 1:
        return min(z0, z1)
    return min(z0 * q[0] + z1 * q[2], z0 * q[1] + z1 * q[3])


@overload(leaf_cost2, jit_options={"nogil": True})
def _leaf_cost2(z0, z1, cm, q):
    if _plain(cm):
        return lambda z0, z1, cm, q: z0 if z0 < z1 else z1

    def weighted(z0, z1, cm, q):
        a = z0 * q[0] + z1 * q[2]  # predict class 0
        b = z0 * q[1] + z1 * q[3]  # predict class 1
        return a if a <= b else b  # ties: the lower class (the same cost either way)

    return weighted


def row_pen(cm, y, i):
    """How much removing row ``i`` (group ``y[i]``) can lower an optimum: 1 plain, else its largest cost."""
    return 1 if cm.ndim == 1 else cm[y[i]].max()


@overload(row_pen, jit_options={"nogil": True})
def _row_pen(cm, y, i):
    if _plain(cm):
        return lambda cm, y, i: 1

    def weighted(cm, y, i):
        g = y[i]
        mx = cm[g, 0]
        for p in range(1, cm.shape[1]):
            if cm[g, p] > mx:
                mx = cm[g, p]
        return mx

    return weighted


_INF = np.int64(1) << 60  # more than any integral cost (the weighted integral path keeps totals below 2**52)
_PEN_PLAIN = np.int64(1) << 40  # an invalid child in the depth-2 solver (more than any error count)
_PEN_INT = np.int64(1) << 59  # more than any integral weighted cost; four still fit in int64
_BIG = np.int64(1) << 62  # no child at all


def cost_inf(cm):
    """More than any cost of ``cm``'s objective (an int64 for integral costs, ``inf`` for real ones)."""
    return np.inf if cm.dtype.kind == "f" else int(_INF)


@overload(cost_inf, inline="always", jit_options={"nogil": True})
def _cost_inf(cm):
    if isinstance(cm.dtype, types.Float):
        return lambda cm: np.inf
    return lambda cm: _INF


def pen_big(cm):
    """The depth-2 solver's marks in ``cm``'s cost type: an invalid child's penalty and "no child"."""
    if cm.dtype.kind == "f":
        return 1e300, np.inf
    return (int(_PEN_PLAIN) if cm.ndim == 1 else int(_PEN_INT)), int(_BIG)


@overload(pen_big, inline="always", jit_options={"nogil": True})
def _pen_big(cm):
    if isinstance(cm.dtype, types.Float):
        return lambda cm: (1e300, np.inf)  # the wrapper keeps real totals below 1e300
    if _plain(cm):
        return lambda cm: (_PEN_PLAIN, _BIG)
    return lambda cm: (_PEN_INT, _BIG)


def below(x):
    """The largest cost strictly below ``x``: ``x - 1`` for integers, the next float down for reals."""
    return np.nextafter(x, -np.inf) if isinstance(x, float) else x - 1


@overload(below, inline="always", jit_options={"nogil": True})
def _below(x):
    if isinstance(x, types.Float):
        return lambda x: np.nextafter(x, -np.inf)
    return lambda x: x - 1


def above(x):
    """The smallest cost strictly above ``x``."""
    return np.nextafter(x, np.inf) if isinstance(x, float) else x + 1


@overload(above, inline="always", jit_options={"nogil": True})
def _above(x):
    if isinstance(x, types.Float):
        return lambda x: np.nextafter(x, np.inf)
    return lambda x: x + 1


def widen(x):
    """A cached cost as the search's cost type (int32 cache values become int64)."""
    return x


@overload(widen, inline="always", jit_options={"nogil": True})
def _widen(x):
    if isinstance(x, types.Integer):
        return lambda x: np.int64(x)
    return lambda x: x


def store_cost(vals, s, cost):
    """Write a cost into slot ``s`` of a cache table (an int32 table clips a bound: still a bound)."""
    vals[s, 0] = cost


@overload(store_cost, jit_options={"nogil": True})
def _store_cost(vals, s, cost):
    if vals.dtype == types.int32:

        def clipped(vals, s, cost):
            # a bound above int32 is clipped (still a bound); costs of optima are row counts
            vals[s, 0] = cost if cost < _COST_MAX else _COST_MAX

        return clipped

    def exact(vals, s, cost):
        vals[s, 0] = cost

    return exact


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
    return np.int64(vals[s, 1]) & 1


@njit(nogil=True, cache=True, inline="always")
def entry_feature(vals, s):
    """Root test of the optimum in slot ``s`` (-1: a leaf)."""
    return (np.int64(vals[s, 1]) >> 11) - 1


@njit(nogil=True, cache=True, inline="always")
def entry_nleft(vals, s):
    """Budget of the left child of the optimum in slot ``s``."""
    return (np.int64(vals[s, 1]) >> 1) & 1023


@njit(nogil=True, cache=True, inline="always")
def _set(vals, s, cost, optimal, feature, n_left):
    store_cost(vals, s, cost)
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
def archive_lb(arch_inst, arch_m, arch_h, arch_lb, slot, inst, m, h1, h2, d, n, y, cm):
    """Similarity lower bound of dataset ``inst[:m]`` from the one archived in ``slot`` (``y``: the rows' groups,
    ``cm``: the objective, see :func:`row_pen`)."""
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
            removed += row_pen(cm, y, v)
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
