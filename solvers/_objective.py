"""The classification objective every solver minimises: a weighted, cost-sensitive misclassification total.

A run's cost is ``sum_i w[i] * C[y[i], yhat[i]]``: row weights ``w`` (default 1) and a cost matrix ``C``
(``C[true, predicted]``, default 0 on the diagonal and 1 elsewhere).  A leaf reached by class masses ``W[c]``
(the sum of the weights of its rows of class ``c``) predicts ``argmin_p sum_c W[c] * C[c, p]``, ties to the
lowest class code, and costs that minimum.  With the defaults the cost is the number of misclassified rows and
every solver keeps its plain (unweighted) path, unchanged.

Solvers take ``sample_weight=`` and ``costs=`` as already-validated arrays (the run request checks what a user
gave, with one message each); :func:`weighted` only asserts shapes and dtypes and says which path to take.

Nothing here imports treeexplorer, panel or pandas.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Weighting", "weighted", "leaf_costs", "leaf_prediction", "tree_cost"]


@dataclass(frozen=True)
class Weighting:
    """Row weights and a cost matrix, or the plain objective (both None).

    Attributes
    ----------
    sample_weight : ndarray of float64 (n,) or None
        Row weights, finite and >= 0.
    costs : ndarray of float64 (k, k) or None
        ``costs[true, predicted]``, finite and >= 0.
    integral : bool
        Every weight and cost is a whole number (with the total below 2**53): kernels may count in int64 and
        stay exact; otherwise they sum float64.
    """

    sample_weight: np.ndarray | None = None
    costs: np.ndarray | None = None
    integral: bool = True

    @property
    def plain(self) -> bool:
        """True when this is plain misclassification (every solver's unweighted path)."""
        return self.sample_weight is None and self.costs is None

    def row_weights(self, n: int) -> np.ndarray:
        """The weights as a float64 array of ``n`` (ones when none were given)."""
        return np.ones(n) if self.sample_weight is None else self.sample_weight

    def cost_matrix(self, k: int) -> np.ndarray:
        """The cost matrix as a float64 ``(k, k)`` array (``1 - I`` when none was given)."""
        return 1.0 - np.eye(k) if self.costs is None else self.costs

    def class_mass(self, y: np.ndarray, k: int) -> np.ndarray:
        """``W[c]``: the total weight of the rows of class ``c`` among ``y`` (float64, length ``k``)."""
        w = None if self.sample_weight is None else self.sample_weight
        return np.bincount(y, weights=w, minlength=k).astype(np.float64)


def weighted(sample_weight, costs, y: np.ndarray, n_classes: int) -> Weighting:
    """The :class:`Weighting` for a solver call; asserts shapes and dtypes (the values were checked upstream).

    All-ones weights and the default cost matrix are the plain objective (so its fast path is taken).
    """
    n = y.shape[0]
    w = None
    if sample_weight is not None:
        w = np.ascontiguousarray(sample_weight, dtype=np.float64)
        assert w.shape == (n,), f"sample_weight must have shape ({n},), got {w.shape}"
        assert np.all(np.isfinite(w)) and np.all(w >= 0), "sample_weight must be finite and >= 0"
        if np.all(w == 1.0):
            w = None
    c = None
    if costs is not None:
        c = np.ascontiguousarray(costs, dtype=np.float64)
        assert c.shape == (n_classes, n_classes), f"costs must have shape ({n_classes}, {n_classes}), got {c.shape}"
        assert np.all(np.isfinite(c)) and np.all(c >= 0), "costs must be finite and >= 0"
        if np.array_equal(c, 1.0 - np.eye(n_classes)):
            c = None
    integral = True
    if w is not None:
        integral = bool(np.all(w == np.round(w))) and float(w.sum()) < 2.0**52
    if c is not None and integral:
        total = float(n if w is None else w.sum()) * float(c.max(initial=0.0))
        integral = bool(np.all(c == np.round(c))) and total < 2.0**52
    return Weighting(w, c, integral)


def leaf_costs(mass: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """The cost of predicting each class at a leaf of class masses ``mass`` (``mass @ costs``)."""
    return np.asarray(mass, dtype=np.float64) @ costs


def leaf_prediction(mass: np.ndarray, costs: np.ndarray) -> tuple[int, float]:
    """The class a leaf of class masses ``mass`` predicts (least cost, lowest code on ties) and its cost."""
    per = leaf_costs(mass, costs)
    p = int(np.argmin(per))  # argmin returns the first minimum: the lowest code on ties
    return p, float(per[p])


def tree_cost(y: np.ndarray, predicted: np.ndarray, weighting: Weighting, n_classes: int) -> float:
    """The objective of predictions ``predicted`` for labels ``y``: ``sum_i w[i] * C[y[i], predicted[i]]``."""
    c = weighting.cost_matrix(n_classes)
    return float(np.sum(weighting.row_weights(y.shape[0]) * c[y, predicted]))
