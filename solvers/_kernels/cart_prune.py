"""Minimal cost-complexity pruning of CART trees (scikit-learn's ``_cost_complexity_prune``)."""

import numpy as np
from numba import njit

from .cart import node_impurity


@njit(nogil=True, cache=True)
def prune_path(left, right, value, criterion):
    """Minimal cost-complexity pruning path (scikit-learn's ``_cost_complexity_prune``).

    Parameters
    ----------
    left, right : int64 (n_nodes,)
    value : int64 (n_nodes, n_classes), class counts per node (root = all training rows)
    criterion : int

    Returns
    -------
    alphas : float64 (k,)
        Effective alphas, starting with 0 (the full tree), as ``cost_complexity_pruning_path``.
    impurities : float64 (k,)
        Total leaf impurity (weighted by sample fraction) of each subtree of the path.
    pruned : int64 (k,)
        Node collapsed into a leaf at each step (-1 for step 0): subtree ``j`` is the full tree with
        ``pruned[1..j]`` turned into leaves.
    """
    n_nodes = left.shape[0]
    total = value[0].sum()
    r_node = np.empty(n_nodes, dtype=np.float64)
    for k in range(n_nodes):
        r_node[k] = (value[k].sum() / total) * node_impurity(value[k], criterion)
    return weakest_link_path(left, right, r_node, np.ones(n_nodes, dtype=np.float64))


@njit(nogil=True, cache=True)
def tests_errors_path(left, right, value):
    """:func:`prune_path` for DPDT's objective: risk = leaf errors / n, complexity = expected number of
    tests (each split weighs its share of the rows), so the path's trees are the lower convex hull in
    (expected tests, errors) of the tree's prunings.  Returns ``alphas, errors / n, pruned``."""
    n_nodes = left.shape[0]
    total = value[0].sum()
    r_node = np.empty(n_nodes, dtype=np.float64)
    c_node = np.empty(n_nodes, dtype=np.float64)
    for k in range(n_nodes):
        r_node[k] = (value[k].sum() - value[k].max()) / total
        c_node[k] = value[k].sum() / total
    return weakest_link_path(left, right, r_node, c_node)


@njit(nogil=True, cache=True)
def weakest_link_path(left, right, r_node, c_node):
    """Weakest-link pruning (Breiman et al.) for a risk ``r_node`` (of node k as a leaf) and a complexity
    ``c_node`` (> 0, counted for every split node) both additive over the tree: each step collapses the
    split whose subtree costs the most risk saved per unit of complexity.  Returns ``alphas, risks,
    pruned`` as :func:`prune_path` (children have higher ids than their parents)."""
    n_nodes = left.shape[0]
    parent = np.full(n_nodes, -1, dtype=np.int64)
    for k in range(n_nodes):
        if left[k] >= 0:
            parent[left[k]] = k
            parent[right[k]] = k
    # complexity and risk of each branch, children have higher ids than parents in both builders
    c_branch = np.zeros(n_nodes, dtype=np.float64)
    r_branch = np.zeros(n_nodes, dtype=np.float64)
    for k in range(n_nodes - 1, -1, -1):
        if left[k] < 0:
            r_branch[k] = r_node[k]
        else:
            c_branch[k] = c_branch[left[k]] + c_branch[right[k]] + c_node[k]
            r_branch[k] = r_branch[left[k]] + r_branch[right[k]]
    candidate = np.zeros(n_nodes, dtype=np.bool_)
    in_subtree = np.ones(n_nodes, dtype=np.bool_)
    for k in range(n_nodes):
        candidate[k] = left[k] >= 0
    alphas = np.empty(n_nodes + 1, dtype=np.float64)
    imps = np.empty(n_nodes + 1, dtype=np.float64)
    pruned = np.full(n_nodes + 1, -1, dtype=np.int64)
    alphas[0] = 0.0
    imps[0] = r_branch[0]
    n_steps = 1
    stack = np.empty(n_nodes, dtype=np.int64)
    while candidate[0]:
        eff = np.inf
        best = -1
        for k in range(n_nodes):
            if not candidate[k]:
                continue
            a = (r_node[k] - r_branch[k]) / c_branch[k]
            if a < eff:
                eff = a
                best = k
        top = 0
        stack[0] = best
        top = 1
        while top > 0:
            top -= 1
            k = stack[top]
            if not in_subtree[k]:
                continue
            candidate[k] = False
            in_subtree[k] = False
            if left[k] >= 0:
                stack[top] = left[k]
                stack[top + 1] = right[k]
                top += 2
        in_subtree[best] = True
        c_pruned = c_branch[best]
        c_branch[best] = 0.0
        r_diff = r_node[best] - r_branch[best]
        r_branch[best] = r_node[best]
        k = parent[best]
        while k >= 0:
            c_branch[k] -= c_pruned
            r_branch[k] += r_diff
            k = parent[k]
        alphas[n_steps] = eff
        imps[n_steps] = r_branch[0]
        pruned[n_steps] = best
        n_steps += 1
    return alphas[:n_steps], imps[:n_steps], pruned[:n_steps]


@njit(nogil=True, cache=True)
def extract_subtree(feature, threshold, left, right, value, is_leaf):
    """Copy of the tree where nodes with ``is_leaf`` become leaves (descendants dropped), preorder ids."""
    n = feature.shape[0]
    nf = np.full(n, -1, dtype=np.int64)
    nt = np.zeros(n, dtype=np.float64)
    nl = np.full(n, -1, dtype=np.int64)
    nr = np.full(n, -1, dtype=np.int64)
    nv = np.zeros((n, value.shape[1]), dtype=np.int64)
    st = np.empty((n + 1, 3), dtype=np.int64)  # (old id, new parent, is_left)
    st[0, 0] = 0
    st[0, 1] = -1
    st[0, 2] = 0
    top = 1
    cnt = 0
    while top > 0:
        top -= 1
        old = st[top, 0]
        par = st[top, 1]
        k = cnt
        cnt += 1
        if par >= 0:
            if st[top, 2] == 1:
                nl[par] = k
            else:
                nr[par] = k
        for c in range(value.shape[1]):  # element by element: no shape-mismatch error to compile
            nv[k, c] = value[old, c]
        if left[old] >= 0 and not is_leaf[old]:
            nf[k] = feature[old]
            nt[k] = threshold[old]
            st[top, 0] = right[old]
            st[top, 1] = k
            st[top, 2] = 0
            st[top + 1, 0] = left[old]
            st[top + 1, 1] = k
            st[top + 1, 2] = 1
            top += 2
        else:
            nt[k] = 0.0
    return nf[:cnt], nt[:cnt], nl[:cnt], nr[:cnt], nv[:cnt]
