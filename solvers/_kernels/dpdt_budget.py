"""Backward induction over split budgets: the best tree of DPDT's MDP for every number of splits.

For a state ``s`` and a budget ``b``, ``V_s[b]`` is the lexicographically smallest ``(errors, tests)``
(both in rows) of the trees of the MDP below ``s`` with at most ``b`` splits (internal nodes):

* ``V_s[0]`` is the leaf ``(errors of the majority class, 0)``;
* ``V_s[b] = min(V_s[b - 1], min over actions, min over bl + br = b - 1 of
  V_l[bl] + V_r[br] + (0, |s|))`` (a last-depth action leads to two leaves: ``(errl + errr, |s|)``).

This is MurTree's DP over budgets, restricted to the MDP's actions: exact within the MDP.  Budgets beyond
what a state can use (``2^(depth left) - 1``, its rows - 1) are not stored: ``V_s[b]`` for a larger ``b``
is ``V_s[last]``.  Each entry remembers its action and the two children's budgets, so every root budget
is one tree.  Integer arithmetic throughout.
"""

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def budget_values(st_size, st_err, st_act0, st_nact, act_left, act_right, act_errl, act_errr, st_depth, max_depth, k):
    """``V_s[b]`` for every state and every budget ``b <= min(k, 2^(max_depth - depth) - 1, |s| - 1)``.

    Returns
    -------
    b_start, b_count : int64 (n_states,)
        State ``s``'s budgets ``0 .. b_count[s] - 1`` are entries ``b_start[s] + b``.
    b_E, b_T : int64
        Errors and tests (row counts) of each entry's tree.
    b_act, b_bl, b_br : int64
        Its action at the state (-1: leaf) and the budgets used in the left / right child state.
    """
    n_states = st_size.shape[0]
    b_start = np.zeros(n_states, dtype=np.int64)
    b_count = np.zeros(n_states, dtype=np.int64)
    total = 0
    for s in range(n_states):
        cap = k
        left = max_depth - st_depth[s]
        if left < 62 and (1 << left) - 1 < cap:
            cap = (1 << left) - 1
        if st_size[s] - 1 < cap:
            cap = st_size[s] - 1
        if st_nact[s] == 0 or cap < 0:
            cap = 0
        b_start[s] = total
        b_count[s] = cap + 1
        total += cap + 1
    b_E = np.empty(total, dtype=np.int64)
    b_T = np.empty(total, dtype=np.int64)
    b_act = np.empty(total, dtype=np.int64)
    b_bl = np.empty(total, dtype=np.int64)
    b_br = np.empty(total, dtype=np.int64)
    for s in range(n_states - 1, -1, -1):
        o = b_start[s]
        nb = b_count[s]
        size = st_size[s]
        b_E[o] = st_err[s]
        b_T[o] = 0
        b_act[o] = -1
        b_bl[o] = 0
        b_br[o] = 0
        for b in range(1, nb):
            b_E[o + b] = b_E[o + b - 1]
            b_T[o + b] = b_T[o + b - 1]
            b_act[o + b] = b_act[o + b - 1]
            b_bl[o + b] = b_bl[o + b - 1]
            b_br[o + b] = b_br[o + b - 1]
        for a in range(st_act0[s], st_act0[s] + st_nact[s]):
            if act_left[a] < 0:
                e = act_errl[a] + act_errr[a]
                for b in range(1, nb):
                    if e < b_E[o + b] or (e == b_E[o + b] and size < b_T[o + b]):
                        b_E[o + b] = e
                        b_T[o + b] = size
                        b_act[o + b] = a
                        b_bl[o + b] = 0
                        b_br[o + b] = 0
                continue
            lo = b_start[act_left[a]]
            ln = b_count[act_left[a]]
            ro = b_start[act_right[a]]
            rn = b_count[act_right[a]]
            for b in range(1, nb):
                # bl + br = b - 1 with both inside their stored ranges (larger budgets add nothing)
                bl_min = b - 1 - (rn - 1)
                if bl_min < 0:
                    bl_min = 0
                bl_max = b - 1 if b - 1 < ln - 1 else ln - 1
                be = b_E[o + b]
                bt = b_T[o + b]
                for bl in range(bl_min, bl_max + 1):
                    br = b - 1 - bl
                    e = b_E[lo + bl] + b_E[ro + br]
                    if e > be:
                        continue
                    t = size + b_T[lo + bl] + b_T[ro + br]
                    if e < be or t < bt:
                        be = e
                        bt = t
                        b_act[o + b] = a
                        b_bl[o + b] = bl
                        b_br[o + b] = br
                b_E[o + b] = be
                b_T[o + b] = bt
        # at most b splits: a smaller budget's tree is a candidate (carry the best forward)
        for b in range(1, nb):
            pe = b_E[o + b - 1]
            pt = b_T[o + b - 1]
            if pe < b_E[o + b] or (pe == b_E[o + b] and pt < b_T[o + b]):
                b_E[o + b] = pe
                b_T[o + b] = pt
                b_act[o + b] = b_act[o + b - 1]
                b_bl[o + b] = b_bl[o + b - 1]
                b_br[o + b] = b_br[o + b - 1]
    return b_start, b_count, b_E, b_T, b_act, b_bl, b_br


@njit(nogil=True, cache=True)
def extract_budget_tree(b, act_feat, act_thr, act_left, act_right, b_start, b_count, b_act, b_bl, b_br, max_nodes):
    """The root's tree for budget ``b`` as flat arrays (preorder, ``x <= threshold`` goes left)."""
    feature = np.full(max_nodes, -1, dtype=np.int64)
    threshold = np.zeros(max_nodes, dtype=np.float64)
    left = np.full(max_nodes, -1, dtype=np.int64)
    right = np.full(max_nodes, -1, dtype=np.int64)
    # stack of (state or -1 for a leaf child, budget, parent node, is_left)
    st = np.empty((max_nodes + 1, 4), dtype=np.int64)
    st[0, 0] = 0
    st[0, 1] = b
    st[0, 2] = -1
    st[0, 3] = 0
    top = 1
    n = 0
    while top > 0:
        top -= 1
        s = st[top, 0]
        bb = st[top, 1]
        par = st[top, 2]
        node = n
        n += 1
        if par >= 0:
            if st[top, 3] == 1:
                left[par] = node
            else:
                right[par] = node
        if s < 0:
            continue
        if bb > b_count[s] - 1:
            bb = b_count[s] - 1
        e = b_start[s] + bb
        a = b_act[e]
        if a < 0:
            continue
        feature[node] = act_feat[a]
        threshold[node] = act_thr[a]
        st[top, 0] = act_right[a]
        st[top, 1] = b_br[e]
        st[top, 2] = node
        st[top, 3] = 0
        st[top + 1, 0] = act_left[a]
        st[top + 1, 1] = b_bl[e]
        st[top + 1, 2] = node
        st[top + 1, 3] = 1
        top += 2
    return feature[:n].copy(), threshold[:n].copy(), left[:n].copy(), right[:n].copy()
