"""CART on weighted rows (scikit-learn's ``DecisionTreeClassifier`` with ``sample_weight``/``class_weight``).

The plain kernel (``cart.py``) counts rows in integers; here every class mass is a float64 sum of row weights, as
in scikit-learn's ``Criterion``: the gini or entropy impurity of a node is that of its class masses, a split's
proxy is ``-W_r * impurity_r - W_l * impurity_l`` and the first strictly better split wins (features in index
order, then thresholds in increasing order).  ``min_samples_leaf`` counts rows, as scikit-learn's does; a node
whose weighted impurity is 0 is a leaf (scikit-learn's ``impurity <= EPSILON``), even with rows of other classes
weighing 0.  The tree grows depth-first with node ids in preorder (scikit-learn's numbering); a stop leaves the
nodes not yet looked at as leaves.
"""

import numpy as np
from numba import njit

from .cart import _midpoint, argsort_stable, node_impurity

EPSILON = np.finfo(np.float64).eps


@njit(nogil=True, cache=True)
def _proxy(ml, mr, wl, wr, criterion):
    """scikit-learn's ``proxy_impurity_improvement``: ``-W_r * impurity_r - W_l * impurity_l`` (the plain
    kernel's :func:`node_impurity`, here of float class masses)."""
    return -wr * node_impurity(mr, criterion) - wl * node_impurity(ml, criterion)


@njit(nogil=True, cache=True)
def tree_arrays(cap, n_classes):
    """Room for ``cap`` nodes: ``feature, threshold, left, right`` (leaves: -1), int64 ``counts`` and float64
    ``mass`` per class."""
    feature = np.full(cap, -1, dtype=np.int64)
    threshold = np.zeros(cap, dtype=np.float64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    counts = np.zeros((cap, n_classes), dtype=np.int64)
    mass = np.zeros((cap, n_classes), dtype=np.float64)
    return feature, threshold, left, right, counts, mass


@njit(nogil=True, cache=True)
def splittable(mass, m, depth, flag, max_depth, min_leaf, criterion):
    """The total weight of a node of ``m`` rows and class masses ``mass`` that may be split, or -1.0 for a leaf
    (stopped, at ``max_depth``, too few rows, or impurity at most scikit-learn's EPSILON)."""
    if flag[0] != 0 or depth >= max_depth or m < 2 or m < 2 * min_leaf:
        return -1.0
    if node_impurity(mass, criterion) <= EPSILON:
        return -1.0
    total_w = 0.0
    for c in range(mass.shape[0]):
        total_w += mass[c]
    return total_w


@njit(nogil=True, cache=True)
def new_stack(cap, n):
    """The depth-first growth's stack of (start, end, depth, parent, is_left) holding the root ``[0, n)``: nodes
    popped in preorder (the left child pushed last)."""
    stack = np.empty((cap + 1, 5), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = 0
    stack[0, 3] = -1
    stack[0, 4] = 0
    return stack


@njit(nogil=True, cache=True)
def open_node(stack, top, k, srt, y, w, left, right, counts, mass):
    """Node ``k`` from ``stack[top]``: linked to its parent, its rows' class counts and masses filled in; returns its
    ``(start, end, depth)`` in the orders ``srt``."""
    start = stack[top, 0]
    end = stack[top, 1]
    parent = stack[top, 3]
    if parent >= 0:
        if stack[top, 4] == 1:
            left[parent] = k
        else:
            right[parent] = k
    for i in range(start, end):
        r = srt[0, i]
        counts[k, y[r]] += 1
        mass[k, y[r]] += w[r]
    return start, end, stack[top, 2]


@njit(nogil=True, cache=True)
def partition_orders(srt, start, end, goes_left, buf):
    """Stable partition of every feature's order in ``[start, end)``: the rows ``goes_left`` first; returns where
    the right rows start."""
    mid = start
    for f in range(srt.shape[0]):
        a = start
        b = 0
        for i in range(start, end):
            r = srt[f, i]
            if goes_left[r]:
                srt[f, a] = r
                a += 1
            else:
                buf[b] = r
                b += 1
        for j in range(b):
            srt[f, a + j] = buf[j]
        mid = a
    return mid


@njit(nogil=True, cache=True)
def push_children(stack, top, k, start, mid, end, depth):
    """Push node ``k``'s children ``[start, mid)`` and ``[mid, end)``, the right one first (the left one is popped
    next: preorder); returns the new top."""
    stack[top, 0] = mid
    stack[top, 1] = end
    stack[top, 2] = depth + 1
    stack[top, 3] = k
    stack[top, 4] = 0
    stack[top + 1, 0] = start
    stack[top + 1, 1] = mid
    stack[top + 1, 2] = depth + 1
    stack[top + 1, 3] = k
    stack[top + 1, 4] = 1
    return top + 2


@njit(nogil=True, cache=True)
def grow_weighted(X, y, w, n_classes, max_depth, min_samples_leaf, criterion, flag):
    """Grow a weighted CART tree on ``(X, y)`` with row weights ``w`` (float64, >= 0).

    Returns ``feature, threshold, left, right, counts, mass``: the nodes in preorder, ``counts`` the int64 rows
    of each class per node and ``mass`` their float64 weights."""
    n, p = X.shape
    min_leaf = max(1, min_samples_leaf)
    srt = np.empty((p, n), dtype=np.int64)
    for f in range(p):
        srt[f] = argsort_stable(X[:, f])
    cap = max(1, 2 * n - 1)
    feature, threshold, left, right, counts, mass = tree_arrays(cap, n_classes)
    ml = np.zeros(n_classes, dtype=np.float64)
    mr = np.zeros(n_classes, dtype=np.float64)
    goes_left = np.zeros(n, dtype=np.bool_)
    buf = np.empty(n, dtype=np.int64)
    stack = new_stack(cap, n)
    top = 1
    n_nodes = 0
    while top > 0:
        top -= 1
        k = n_nodes
        n_nodes += 1
        start, end, depth = open_node(stack, top, k, srt, y, w, left, right, counts, mass)
        m = end - start
        total_w = splittable(mass[k], m, depth, flag, max_depth, min_leaf, criterion)
        if total_w < 0:
            continue
        best_f = -1
        best_pos = 0
        best_thr = 0.0
        best_proxy = -np.inf
        for f in range(p):
            if X[srt[f, end - 1], f] <= X[srt[f, start], f]:
                continue  # constant in this node
            for c in range(n_classes):
                ml[c] = 0.0
                mr[c] = mass[k, c]
            wl = 0.0
            for i in range(start, end - min_leaf):
                r = srt[f, i]
                ml[y[r]] += w[r]
                mr[y[r]] -= w[r]
                wl += w[r]
                nl = i + 1 - start
                if nl < min_leaf:
                    continue
                x0 = X[r, f]
                x1 = X[srt[f, i + 1], f]
                if x1 <= x0:
                    continue
                proxy = _proxy(ml, mr, wl, total_w - wl, criterion)
                if proxy > best_proxy:
                    best_proxy = proxy
                    best_f = f
                    best_pos = nl
                    best_thr = _midpoint(x0, x1)
        if best_f < 0:
            continue
        feature[k] = best_f
        threshold[k] = best_thr
        for i in range(start, end):
            goes_left[srt[best_f, i]] = i < start + best_pos
        mid = partition_orders(srt, start, end, goes_left, buf)
        top = push_children(stack, top, k, start, mid, end, depth)
    return (
        feature[:n_nodes],
        threshold[:n_nodes],
        left[:n_nodes],
        right[:n_nodes],
        counts[:n_nodes],
        mass[:n_nodes],
    )
