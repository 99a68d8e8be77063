"""Walking flat-array trees (the layout described in ``solvers._base``).

Missing values are NaN.  A raw tree sends a NaN row right (``NaN <= t`` is false) unless ``missing_left[k]`` says
left; a condition tree's ops say it themselves: op 0 ``x <= v`` and op 1 ``x == v`` are false on NaN, op 3
``x <= v or missing`` and op 4 ``x == v or missing`` true (ops 6 and 7 alike: the same for a gap no training row
had, see ``treeexplorer.tree.settle_missing``), op 5 ``x is missing``; a multiway node (op 2) sends a NaN row to its
fallback child.
"""

import numpy as np
from numba import njit


@njit(nogil=True, cache=True, inline="always")
def holds(o, x, v):
    """Whether a condition of op ``o`` (0, 1, 3-7; see the module docstring) holds for the value ``x``."""
    if o == 0:
        return x <= v
    if o == 1:
        return x == v
    if x != x:  # missing
        return o >= 3
    if o == 3 or o == 6:
        return x <= v
    if o == 4 or o == 7:
        return x == v
    return False


@njit(nogil=True, cache=True)
def apply_tree_missing(feature, threshold, left, right, missing_left, X):
    """As :func:`apply_tree` for a raw tree that says where NaN rows go (``missing_left[k] == 1``: left)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = 0
        while feature[k] >= 0:
            x = X[i, feature[k]]
            if x <= threshold[k] or (x != x and missing_left[k] == 1):
                k = left[k]
            else:
                k = right[k]
        out[i] = k
    return out


@njit(nogil=True, cache=True)
def node_counts_missing(feature, threshold, left, right, missing_left, X, y, n_classes):
    """As :func:`node_counts` for a raw tree that says where NaN rows go."""
    counts = np.zeros((feature.shape[0], n_classes), dtype=np.int64)
    for i in range(X.shape[0]):
        k = 0
        counts[k, y[i]] += 1
        while feature[k] >= 0:
            x = X[i, feature[k]]
            if x <= threshold[k] or (x != x and missing_left[k] == 1):
                k = left[k]
            else:
                k = right[k]
            counts[k, y[i]] += 1
    return counts


@njit(nogil=True, cache=True)
def apply_tree(feature, threshold, left, right, X):
    """Index of the leaf each row of ``X`` reaches (``x <= threshold`` goes left)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = 0
        while feature[k] >= 0:
            if X[i, feature[k]] <= threshold[k]:
                k = left[k]
            else:
                k = right[k]
        out[i] = k
    return out


@njit(nogil=True, cache=True)
def node_counts(feature, threshold, left, right, X, y, n_classes):
    """Class counts of the rows of ``(X, y)`` at every node (not only leaves)."""
    n_nodes = feature.shape[0]
    counts = np.zeros((n_nodes, n_classes), dtype=np.int64)
    for i in range(X.shape[0]):
        k = 0
        counts[k, y[i]] += 1
        while feature[k] >= 0:
            if X[i, feature[k]] <= threshold[k]:
                k = left[k]
            else:
                k = right[k]
            counts[k, y[i]] += 1
    return counts


@njit(nogil=True, cache=True)
def apply_conditions(column, op, value, true_child, false_child, X):
    """Leaf reached by each row of a tree whose nodes test ``x <= v`` (op 0), ``x == v`` (op 1) or op 3-5.

    A row whose test holds goes to ``true_child``; this is the layout of ``treeexplorer.Tree``.
    """
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = 0
        while column[k] >= 0:
            k = true_child[k] if holds(op[k], X[i, column[k]], value[k]) else false_child[k]
        out[i] = k
    return out


@njit(nogil=True, cache=True)
def count_conditions(column, op, value, true_child, false_child, X, y, n_classes):
    """Class counts of ``(X, y)`` at every node of a condition tree, and each row's number of tests."""
    counts = np.zeros((column.shape[0], n_classes), dtype=np.int64)
    n_tests = np.zeros(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        k = 0
        counts[0, y[i]] += 1
        while column[k] >= 0:
            k = true_child[k] if holds(op[k], X[i, column[k]], value[k]) else false_child[k]
            counts[k, y[i]] += 1
            n_tests[i] += 1
    return counts, n_tests


@njit(nogil=True, cache=True)
def _next_node(k, x, op, value, true_child, false_child, offsets, children, child_values):
    # One step down a condition tree: op 0 ``x <= v``, op 1 ``x == v``, op 2 multiway (the child whose
    # category code is x; an unseen code follows false_child, the node's documented fallback child).
    if op[k] == 2:
        for r in range(offsets[k], offsets[k + 1]):
            if child_values[r] == x:
                return children[r]
        return false_child[k]
    return true_child[k] if holds(op[k], x, value[k]) else false_child[k]


@njit(nogil=True, cache=True)
def apply_nodes(column, op, value, true_child, false_child, offsets, children, child_values, X):
    """As :func:`apply_conditions` for trees that may hold multiway nodes (op 2, CSR children)."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        k = 0
        while column[k] >= 0:
            k = _next_node(k, X[i, column[k]], op, value, true_child, false_child, offsets, children, child_values)
        out[i] = k
    return out


@njit(nogil=True, cache=True)
def count_nodes(column, op, value, true_child, false_child, offsets, children, child_values, X, y, n_classes):
    """As :func:`count_conditions` for trees that may hold multiway nodes (one test per multiway node)."""
    counts = np.zeros((column.shape[0], n_classes), dtype=np.int64)
    n_tests = np.zeros(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        k = 0
        counts[0, y[i]] += 1
        while column[k] >= 0:
            k = _next_node(k, X[i, column[k]], op, value, true_child, false_child, offsets, children, child_values)
            counts[k, y[i]] += 1
            n_tests[i] += 1
    return counts, n_tests


@njit(nogil=True, cache=True)
def count_forest(roots, column, op, value, true_child, false_child, offsets, children, child_values, X, y, n_classes):
    """:func:`count_nodes` for many trees in ONE pass over the rows (rows outer, trees inner).

    The trees' node arrays are concatenated (child indices global, ``roots[t]`` is tree ``t``'s root);
    a row is read from memory once for all trees, which is what makes a 60-tree front on a million rows
    cost about one pass instead of 60.  Returns the class counts at every node and each tree's total
    number of tests over the rows (divide by the row count for the mean).
    """
    counts = np.zeros((column.shape[0], n_classes), dtype=np.int64)
    tests = np.zeros(roots.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        c = y[i]
        for t in range(roots.shape[0]):
            k = roots[t]
            counts[k, c] += 1
            d = 0
            while column[k] >= 0:
                # The step of _next_node written out: here, in the hottest loop, the call cost 7x the time.
                x = X[i, column[k]]
                o = op[k]
                if o == 0:
                    k = true_child[k] if x <= value[k] else false_child[k]
                elif o == 1:
                    k = true_child[k] if x == value[k] else false_child[k]
                elif o != 2:
                    k = true_child[k] if holds(o, x, value[k]) else false_child[k]
                else:
                    nxt = false_child[k]
                    for r in range(offsets[k], offsets[k + 1]):
                        if child_values[r] == x:
                            nxt = children[r]
                            break
                    k = nxt
                counts[k, c] += 1
                d += 1
            tests[t] += d
    return counts, tests


@njit(nogil=True, cache=True)
def missing_forest(roots, column, op, value, true_child, false_child, offsets, children, child_values, X):
    """For every node of a packed forest (as :func:`count_forest`), how many rows of ``X`` reach it with a missing
    value (NaN) in the column it tests: where that is 0, the node's side for a gap was not learned."""
    out = np.zeros(column.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        for t in range(roots.shape[0]):
            k = roots[t]
            while column[k] >= 0:
                x = X[i, column[k]]
                if x != x:
                    out[k] += 1
                k = _next_node(k, x, op, value, true_child, false_child, offsets, children, child_values)
    return out
