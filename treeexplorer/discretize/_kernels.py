"""Numba kernels of the supervised discretizers (MID ranking, its merge, MDLP cuts).

All kernels work on one feature summarised as ``cnt``: a ``(m, C)`` float64 matrix of class counts per
distinct value, values in increasing order.  Candidate ``k`` (``0 <= k < m - 1``) is the cut between
distinct values ``k`` and ``k + 1``.  A *segment* ``[lo, hi)`` is a run of distinct values not yet
separated by a chosen cut.

Gains are compared after rounding to ``2**-40`` (:func:`quantise`): the same split reached by
different floating-point paths must tie exactly, so that the documented tie rules (lower threshold, then
lower feature) decide, not rounding noise.
"""

import heapq

import numpy as np
from numba import njit

QUANTUM = 2.0**40


@njit(nogil=True, cache=True)
def quantise(g):
    """Gain rounded to a fixed grid (``2**-40`` bits), clamped at zero."""
    if g <= 0.0:
        return 0.0
    return np.floor(g * QUANTUM + 0.5)


@njit(nogil=True, cache=True)
def weighted_impurity(counts, gini):
    """``n * impurity(counts)``: entropy in bits (``gini=False``) or Gini index, times the row count."""
    n = 0.0
    for c in counts:
        n += c
    if n <= 0.0:
        return 0.0
    s = 0.0
    if gini:
        for c in counts:
            s += c * c
        return n - s / n
    for c in counts:
        if c > 0.0:
            s += c * np.log2(c)
    return n * np.log2(n) - s


@njit(nogil=True, cache=True)
def xlogx_table(n):
    """``k * log2(k)`` for ``k = 0..n``: counts are integers, so entropies need no ``log2`` call in loops."""
    tab = np.zeros(n + 1)
    for k in range(2, n + 1):
        tab[k] = k * np.log2(k)
    return tab


@njit(nogil=True, cache=True)
def _nimp(counts, gini, tab):
    """``n * impurity`` of integer ``counts``: entropy via the ``xlogx`` table, or Gini."""
    n = 0
    s = 0.0
    for c in counts:
        n += c
        s += c * c if gini else tab[c]
    if gini:
        return n - s / n if n > 0 else 0.0
    return tab[n] - s


@njit(nogil=True, cache=True)
def _segment_best(P, valid, lo, hi, gini, n_total, tab):
    """Best candidate cut inside segment ``[lo, hi)``: ``(k, gain, quantised gain)``; ``k = -1`` if none.

    ``P`` is the ``(m + 1, C)`` int64 prefix sum of the per-value class counts.  Ties keep the lowest ``k``.
    Hot loop: no temporary arrays, one pass over the classes per candidate.
    """
    C = P.shape[1]
    tot = P[hi] - P[lo]
    n_seg = 0
    for c in range(C):
        n_seg += tot[c]
    parent = _nimp(tot, gini, tab)
    best_k, best_g, best_q = -1, 0.0, -1.0
    for k in range(lo, hi - 1):
        if not valid[k]:
            continue
        nl = 0
        sl = 0.0
        sr = 0.0
        for c in range(C):
            l = P[k + 1, c] - P[lo, c]
            r = tot[c] - l
            nl += l
            if gini:
                sl += l * l
                sr += r * r
            else:
                sl += tab[l]
                sr += tab[r]
        nr = n_seg - nl
        if gini:
            imp = n_seg - sl / nl - sr / nr
        else:
            imp = tab[nl] - sl + tab[nr] - sr
        g = (parent - imp) / n_total
        q = quantise(g)
        if q > best_q:
            best_k, best_g, best_q = k, max(g, 0.0), q
    return best_k, best_g, best_q


@njit(nogil=True, cache=True)
def mid_rank_feature(cnt, valid, gini, n_total, limit=-1):
    """Greedy MID ranking of one numeric feature's candidate cuts.

    At each step the candidate that most reduces the weighted impurity of the feature's current partition
    (all earlier cuts applied) is taken; its gain is that reduction divided by ``n_total``.  Only the
    segment that was split changes, so segments wait in a max-heap keyed by their best candidate.

    Parameters
    ----------
    cnt : ndarray of float64, shape (m, C)
        Class counts per distinct value, values ascending.
    valid : ndarray of bool, shape (m - 1,)
        Which cuts are candidates.
    gini : bool
        Gini index instead of entropy.
    n_total : float
        Rows in the whole data (gains are fractions of it).
    limit : int
        Stop after this many cuts (``< 0``: rank every candidate).  The first ``limit`` cuts are the same
        either way; a whole ranking costs a scan of each segment ever split, up to ``O(m^2)`` on noisy data.

    Returns
    -------
    cuts : ndarray of int64
        Candidate indices in rank order (every valid candidate appears once, up to ``limit``).
    gains : ndarray of float64
        Gain of each, in bits (entropy) or Gini units.
    """
    m, C = cnt.shape
    P = np.zeros((m + 1, C), dtype=np.int64)
    for i in range(m):
        for c in range(C):
            P[i + 1, c] = P[i, c] + np.int64(cnt[i, c] + 0.5)
    tab = xlogx_table(P[m].sum())
    n_valid = 0
    for k in range(m - 1):
        if valid[k]:
            n_valid += 1
    size = n_valid if limit < 0 else min(n_valid, limit)
    cuts = np.empty(size, dtype=np.int64)
    gains = np.empty(size)
    if size == 0:
        return cuts, gains
    k, g, q = _segment_best(P, valid, 0, m, gini, n_total, tab)
    # key: (-quantised gain, cut) so equal gains take the lower threshold first
    heap = [(-q, k, 0, m, g)]
    out = 0
    while len(heap) > 0:
        _, k, lo, hi, g = heapq.heappop(heap)
        cuts[out] = k
        gains[out] = g
        out += 1
        if out == size:
            break
        for a, b in ((lo, k + 1), (k + 1, hi)):
            if b - a >= 2:
                kk, gg, qq = _segment_best(P, valid, a, b, gini, n_total, tab)
                if kk >= 0:
                    heapq.heappush(heap, (-qq, kk, a, b, gg))
    return cuts, gains


@njit(nogil=True, cache=True)
def merge_rankings(qgains, offsets):
    """Merge per-feature ranked lists into one order: largest head gain first, ties to the lower feature.

    ``qgains[offsets[f]:offsets[f + 1]]`` are feature ``f``'s quantised gains in its own rank order; each
    list keeps its order.  Returns global positions into ``qgains``.
    """
    n_feat = offsets.shape[0] - 1
    order = np.empty(qgains.shape[0], dtype=np.int64)
    heap = [(0.0, np.int64(0))]
    heap.pop()
    for f in range(n_feat):
        if offsets[f + 1] > offsets[f]:
            heapq.heappush(heap, (-qgains[offsets[f]], np.int64(f)))
    pos = offsets[:-1].copy()
    out = 0
    while len(heap) > 0:
        _, f = heapq.heappop(heap)
        order[out] = pos[f]
        out += 1
        pos[f] += 1
        if pos[f] < offsets[f + 1]:
            heapq.heappush(heap, (-qgains[pos[f]], f))
    return order


@njit(nogil=True, cache=True)
def mdlp_cuts(cnt, valid):
    """Fayyad & Irani (1993) recursive entropy discretization with the MDL stopping rule.

    In each segment ``S`` (``N`` rows) the candidate minimising the class entropy of the two parts is
    accepted when ``Gain > (log2(N - 1) + log2(3**k - 2) - (k Ent(S) - k1 Ent(S1) - k2 Ent(S2))) / N``
    (``k``, ``k1``, ``k2``: classes present), and both parts are split again.

    Returns
    -------
    cuts : ndarray of int64
        Accepted candidate indices, ascending.
    gains : ndarray of float64
        Each cut's gain as a fraction of all rows, i.e. its reduction of the feature's weighted entropy
        (the same unit as MID gains); the within-segment gain times ``N / n``.
    """
    m, C = cnt.shape
    P = np.zeros((m + 1, C), dtype=np.int64)
    for i in range(m):
        for c in range(C):
            P[i + 1, c] = P[i, c] + np.int64(cnt[i, c] + 0.5)
    n_total = 0.0
    for c in range(C):
        n_total += P[m, c]
    tab = xlogx_table(int(n_total + 0.5))
    cut_mark = np.zeros(max(m - 1, 0), dtype=np.bool_)
    cut_gain = np.zeros(max(m - 1, 0))
    stack = [(0, m)]
    left = np.empty(C)
    right = np.empty(C)
    while len(stack) > 0:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        k, g, _ = _segment_best(P, valid, lo, hi, False, 1.0, tab)
        if k < 0:
            continue
        tot = P[hi] - P[lo]
        N = 0.0
        for c in range(C):
            left[c] = P[k + 1, c] - P[lo, c]
            right[c] = tot[c] - left[c]
            N += tot[c]
        n1 = 0.0
        for c in range(C):
            n1 += left[c]
        n2 = N - n1
        ent = weighted_impurity(tot, False) / N
        ent1 = weighted_impurity(left, False) / n1
        ent2 = weighted_impurity(right, False) / n2
        gain = g / N  # _segment_best with n_total=1 returns the unnormalised reduction
        k0, k1, k2 = 0, 0, 0
        for c in range(C):
            k0 += tot[c] > 0
            k1 += left[c] > 0
            k2 += right[c] > 0
        delta = np.log2(3.0**k0 - 2.0) - (k0 * ent - k1 * ent1 - k2 * ent2)
        if gain > (np.log2(N - 1.0) + delta) / N:
            cut_mark[k] = True
            cut_gain[k] = g / n_total
            stack.append((lo, k + 1))
            stack.append((k + 1, hi))
    cuts = np.flatnonzero(cut_mark)
    return cuts, cut_gain[cuts]
