"""Backward induction for every α at once: exact piecewise-linear value functions.

In row-count units a tree below state ``s`` has ``T`` = total number of tests its rows go through and
``E`` = misclassified rows; its cost at trade-off α is ``E + α·T`` (dividing by the number of training
rows gives the paper's objective: error rate + α · expected tests per sample).  The value function
``V_s(α) = min over trees (E + α·T)`` is concave piecewise linear, and is exactly the lower convex hull
of the achievable ``(T, E)`` points.  Each state keeps that hull:

* leaf action: the point ``(0, errors of the majority class)``;
* test action with child states ``l`` and ``r``: the Minkowski sum of the two children's hulls (a merge
  of their edges by slope) shifted by ``T += |s|`` (every row of ``s`` takes the test);
* the state's hull: lower convex hull of the union, keeping only strict vertices with ``E`` decreasing.

Every vertex remembers which action and which child vertices produced it, so each root vertex is one
tree, optimal for the α interval between the slopes of its two hull edges.  All arithmetic is integer.
"""

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _grow(a, cap):
    b = np.empty(cap, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(nogil=True, cache=True)
def backward_hulls(st_size, st_err, st_act0, st_nact, act_left, act_right, act_errl, act_errr):
    """Lower convex hull of (tests, errors) of every state, children before parents.

    Returns
    -------
    h_start, h_count : int64 (n_states,)
        The hull of state ``s`` is vertices ``h_start[s] : h_start[s] + h_count[s]``, by increasing T.
    h_T, h_E : int64 (n_vertices,)
        Total tests and errors (row counts) of each vertex's tree.
    h_act : int64
        Action at the state (-1: leaf).
    h_li, h_ri : int64
        Vertex (global index) of the left / right child state's hull used (-1 for leaf children).
    """
    n_states = st_size.shape[0]
    h_start = np.zeros(n_states, dtype=np.int64)
    h_count = np.zeros(n_states, dtype=np.int64)
    cap = max(1024, 2 * n_states)
    h_T = np.empty(cap, dtype=np.int64)
    h_E = np.empty(cap, dtype=np.int64)
    h_act = np.empty(cap, dtype=np.int64)
    h_li = np.empty(cap, dtype=np.int64)
    h_ri = np.empty(cap, dtype=np.int64)
    n_v = 0
    ccap = 256
    c_T = np.empty(ccap, dtype=np.int64)
    c_E = np.empty(ccap, dtype=np.int64)
    c_act = np.empty(ccap, dtype=np.int64)
    c_li = np.empty(ccap, dtype=np.int64)
    c_ri = np.empty(ccap, dtype=np.int64)
    kept = np.empty(ccap, dtype=np.int64)
    for s in range(n_states - 1, -1, -1):
        size = st_size[s]
        # candidates: leaf, then every action's Minkowski sum
        need = 1
        for a in range(st_act0[s], st_act0[s] + st_nact[s]):
            if act_left[a] < 0:
                need += 1
            else:
                need += h_count[act_left[a]] + h_count[act_right[a]] - 1
        if need > ccap:
            ccap = max(2 * ccap, need)
            c_T = np.empty(ccap, dtype=np.int64)
            c_E = np.empty(ccap, dtype=np.int64)
            c_act = np.empty(ccap, dtype=np.int64)
            c_li = np.empty(ccap, dtype=np.int64)
            c_ri = np.empty(ccap, dtype=np.int64)
            kept = np.empty(ccap, dtype=np.int64)
        c_T[0] = 0
        c_E[0] = st_err[s]
        c_act[0] = -1
        c_li[0] = -1
        c_ri[0] = -1
        nc = 1
        for a in range(st_act0[s], st_act0[s] + st_nact[s]):
            if act_left[a] < 0:
                c_T[nc] = size
                c_E[nc] = act_errl[a] + act_errr[a]
                c_act[nc] = a
                c_li[nc] = -1
                c_ri[nc] = -1
                nc += 1
                continue
            l0 = h_start[act_left[a]]
            l1 = l0 + h_count[act_left[a]] - 1
            r0 = h_start[act_right[a]]
            r1 = r0 + h_count[act_right[a]] - 1
            i = l0
            j = r0
            while True:
                c_T[nc] = size + h_T[i] + h_T[j]
                c_E[nc] = h_E[i] + h_E[j]
                c_act[nc] = a
                c_li[nc] = i
                c_ri[nc] = j
                nc += 1
                if i == l1 and j == r1:
                    break
                if i == l1:
                    j += 1
                elif j == r1:
                    i += 1
                else:
                    # steeper (more negative) slope first: dE_l/dT_l < dE_r/dT_r
                    if (h_E[i + 1] - h_E[i]) * (h_T[j + 1] - h_T[j]) <= (h_E[j + 1] - h_E[j]) * (h_T[i + 1] - h_T[i]):
                        i += 1
                    else:
                        j += 1
        key = np.empty(nc, dtype=np.int64)
        for c in range(nc):
            key[c] = c_T[c] * (size + 1) + c_E[c]
        order = np.argsort(key, kind="mergesort")
        nk = 0
        for q in range(nc):
            c = order[q]
            if nk > 0 and c_E[c] >= c_E[kept[nk - 1]]:
                continue  # no fewer errors with at least as many tests
            while nk >= 2:
                o = kept[nk - 2]
                m = kept[nk - 1]
                if (c_E[m] - c_E[o]) * (c_T[c] - c_T[m]) >= (c_E[c] - c_E[m]) * (c_T[m] - c_T[o]):
                    nk -= 1  # m is not strictly below the segment o-c
                else:
                    break
            kept[nk] = c
            nk += 1
        if n_v + nk > cap:
            cap = max(2 * cap, n_v + nk)
            h_T = _grow(h_T, cap)
            h_E = _grow(h_E, cap)
            h_act = _grow(h_act, cap)
            h_li = _grow(h_li, cap)
            h_ri = _grow(h_ri, cap)
        h_start[s] = n_v
        h_count[s] = nk
        for q in range(nk):
            c = kept[q]
            h_T[n_v] = c_T[c]
            h_E[n_v] = c_E[c]
            h_act[n_v] = c_act[c]
            h_li[n_v] = c_li[c]
            h_ri[n_v] = c_ri[c]
            n_v += 1
    return h_start, h_count, h_T[:n_v], h_E[:n_v], h_act[:n_v], h_li[:n_v], h_ri[:n_v]


@njit(nogil=True, cache=True)
def extract_tree(vertex, act_feat, act_thr, act_left, act_right, h_act, h_li, h_ri, max_nodes):
    """The tree of one hull vertex as flat arrays (preorder, ``x <= threshold`` goes left)."""
    feature = np.full(max_nodes, -1, dtype=np.int64)
    threshold = np.zeros(max_nodes, dtype=np.float64)
    left = np.full(max_nodes, -1, dtype=np.int64)
    right = np.full(max_nodes, -1, dtype=np.int64)
    # stack of (vertex or -1 for a leaf child, parent node, is_left)
    st = np.empty((max_nodes + 1, 3), dtype=np.int64)
    st[0, 0] = vertex
    st[0, 1] = -1
    st[0, 2] = 0
    top = 1
    n = 0
    while top > 0:
        top -= 1
        v = st[top, 0]
        par = st[top, 1]
        k = n
        n += 1
        if par >= 0:
            if st[top, 2] == 1:
                left[par] = k
            else:
                right[par] = k
        if v < 0 or h_act[v] < 0:
            continue
        a = h_act[v]
        feature[k] = act_feat[a]
        threshold[k] = act_thr[a]
        if act_left[a] < 0:
            lv = -1
            rv = -1
        else:
            lv = h_li[v]
            rv = h_ri[v]
        st[top, 0] = rv
        st[top, 1] = k
        st[top, 2] = 0
        st[top + 1, 0] = lv
        st[top + 1, 1] = k
        st[top + 1, 2] = 1
        top += 2
    return feature[:n].copy(), threshold[:n].copy(), left[:n].copy(), right[:n].copy()
