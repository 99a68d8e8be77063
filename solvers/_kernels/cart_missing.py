"""CART on a matrix with missing values (NaN), scikit-learn's ``DecisionTreeClassifier`` (>= 1.3, best splitter).

A separate kernel from ``cart.py`` / ``cart_weighted.py`` so the complete-data paths stay as they are.  Every
class mass is a float64 sum of row weights (1 per row on the plain path), the proxy of a split is scikit-learn's
``-W_r * impurity_r - W_l * impurity_l`` and the first strictly better split wins.  For each feature of a node,
in index order, the candidates are visited in scikit-learn's order (``_splitter.pyx``, ``node_split_best``):

1. missing rows RIGHT: every threshold between two distinct present values, increasing; then, when the node has
   missing values in the feature, the split "all present left, all missing right", whose threshold is ``+inf``
   (``x <= inf`` holds for every present value, never for NaN);
2. missing rows LEFT (only when the node has missing values in the feature): every threshold, increasing.

So ties go to the lowest feature, then missing-right before missing-left, then the lowest threshold.  A feature
is skipped when all its values at the node are missing, or when its present values are constant and none is
missing.  ``min_samples_leaf`` counts rows, missing ones included where they go.  A node whose rows have no
missing value in the chosen feature gets ``missing_left = 0`` (treeexplorer decides where future gaps go).

Each feature's row order keeps the missing rows at the end of every node's segment (sorted once with NaN last,
then partitioned stably), so the number of missing rows of a feature at a node is a scan from its end.
"""

import numpy as np
from numba import njit

from .cart import _midpoint, argsort_stable
from .cart_weighted import _proxy, new_stack, open_node, partition_orders, push_children, splittable, tree_arrays


@njit(nogil=True, cache=True)
def argsort_nan_last(x):
    """Stable order of ``x``: the present values increasing (ties in index order), then the NaN rows in index
    order."""
    m = x.shape[0]
    n_present = 0
    for i in range(m):
        if x[i] == x[i]:
            n_present += 1
    present = np.empty(n_present, dtype=np.int64)
    out = np.empty(m, dtype=np.int64)
    a = 0
    b = n_present
    for i in range(m):
        if x[i] == x[i]:
            present[a] = i
            a += 1
        else:
            out[b] = i
            b += 1
    order = argsort_stable(x[present])
    for j in range(n_present):
        out[j] = present[order[j]]
    return out


@njit(nogil=True, cache=True)
def grow_missing(X, y, w, n_classes, max_depth, min_samples_leaf, criterion, flag):
    """Grow a CART tree on ``(X, y)`` (X may hold NaN) with row weights ``w`` (float64, > 0; ones: plain CART).

    Returns ``feature, threshold, left, right, missing_left, counts, mass``: the nodes in preorder (scikit-learn's
    numbering), ``missing_left[k] == 1`` when node ``k`` sends its NaN rows left, ``counts`` the int64 rows of each
    class per node (NaN rows counted where they went) and ``mass`` their float64 weights.  ``flag`` set: the
    nodes not yet looked at stay leaves."""
    n, p = X.shape
    min_leaf = max(1, min_samples_leaf)
    srt = np.empty((p, n), dtype=np.int64)
    for f in range(p):
        srt[f] = argsort_nan_last(X[:, f])
    # feature-major copy: the scans read one feature of many rows, a row-major X made that a cache miss a row
    xt = np.ascontiguousarray(X.T)
    cap = max(1, 2 * n - 1)
    if max_depth < 40:
        cap = min(cap, (1 << (max_depth + 1)) - 1)
    feature, threshold, left, right, counts, mass = tree_arrays(cap, n_classes)
    missing_left = np.zeros(cap, dtype=np.int64)
    ml = np.zeros(n_classes, dtype=np.float64)
    mr = np.zeros(n_classes, dtype=np.float64)
    mmiss = np.zeros(n_classes, dtype=np.float64)
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
        best_nl = 0  # present rows going left (in the feature's order)
        best_ml = 0
        best_thr = 0.0
        best_proxy = -np.inf
        for f in range(p):
            end_nm = end
            while end_nm > start and xt[f, srt[f, end_nm - 1]] != xt[f, srt[f, end_nm - 1]]:
                end_nm -= 1
            n_miss = end - end_nm
            if end_nm == start:
                continue  # every value missing
            if n_miss == 0 and xt[f, srt[f, end - 1]] <= xt[f, srt[f, start]]:
                continue  # constant, nothing missing
            miss_w = 0.0
            for c in range(n_classes):
                mmiss[c] = 0.0
            for i in range(end_nm, end):
                r = srt[f, i]
                mmiss[y[r]] += w[r]
                miss_w += w[r]
            for side in range(2 if n_miss > 0 else 1):  # 0: missing right, 1: missing left
                for c in range(n_classes):
                    ml[c] = mmiss[c] if side == 1 else 0.0
                    mr[c] = mass[k, c] - ml[c]
                wl = miss_w if side == 1 else 0.0
                for i in range(start, end_nm):
                    r = srt[f, i]
                    ml[y[r]] += w[r]
                    mr[y[r]] -= w[r]
                    wl += w[r]
                    last = i + 1 == end_nm
                    if last:
                        if side == 1 or n_miss == 0:
                            break  # missing left of everything present: the same as the split below, mirrored
                    elif xt[f, srt[f, i + 1]] <= xt[f, r]:
                        continue
                    nl = i + 1 - start + (n_miss if side == 1 else 0)
                    if nl < min_leaf or m - nl < min_leaf:
                        continue
                    proxy = _proxy(ml, mr, wl, total_w - wl, criterion)
                    if proxy > best_proxy:
                        best_proxy = proxy
                        best_f = f
                        best_nl = i + 1 - start
                        best_ml = side
                        best_thr = np.inf if last else _midpoint(xt[f, r], xt[f, srt[f, i + 1]])
        if best_f < 0:
            continue
        feature[k] = best_f
        threshold[k] = best_thr
        for i in range(start, end):
            r = srt[best_f, i]
            if xt[best_f, r] != xt[best_f, r]:
                goes_left[r] = best_ml == 1
                missing_left[k] = best_ml
            else:
                goes_left[r] = i < start + best_nl
        # stable partition of every feature's order: the left rows first, the NaN rows still last in each part
        mid = partition_orders(srt, start, end, goes_left, buf)
        top = push_children(stack, top, k, start, mid, end, depth)
    return (
        feature[:n_nodes].copy(),
        threshold[:n_nodes].copy(),
        left[:n_nodes].copy(),
        right[:n_nodes].copy(),
        missing_left[:n_nodes].copy(),
        counts[:n_nodes].copy(),
        mass[:n_nodes].copy(),
    )
