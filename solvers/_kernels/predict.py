"""Walking flat-array trees (the layout described in ``solvers._base``)."""

import numpy as np
from numba import njit


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
