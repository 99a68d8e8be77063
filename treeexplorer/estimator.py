"""scikit-learn compatible classifier: solve a front, then select one tree by a stated rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from treeexplorer.api import prepare, run_prepared
from treeexplorer.data import DataError, Dataset, load_dataset
from treeexplorer.registry import get_solver

__all__ = ["TreeExplorerClassifier"]

TARGET = "__target__"


class TreeExplorerClassifier(ClassifierMixin, BaseEstimator):
    """Decision-tree classifier backed by any treeexplorer solver.

    ``fit`` solves a whole front of trees (``front_``) and keeps one (``tree_``) chosen by ``select``.

    Parameters
    ----------
    solver : str, default="cart"
        ``cart``, ``dpdt``, ``murtree``, ``branches`` or ``sat``.
    discretizer : str, optional
        Binary tests for the solver (see :func:`treeexplorer.solve`).
    n_bins : int, optional
        Discretizer size.
    max_depth, max_nodes, cart_depth : int, optional
        Solver parameters, passed only when set (a solver that does not use one rejects it).
    sparsity : float, optional
        Cost per split for the sparse solvers.
    select : {"validation", "train"}, default="validation"
        ``validation``: hold out ``validation_fraction`` of the training rows, solve on the rest and keep the
        tree with the best validation accuracy (simplest on ties); ``train``: solve on all rows and keep the
        most accurate tree with at most ``max_splits`` splits.
    validation_fraction : float, default=0.25
        Share of the rows held out when ``select="validation"`` (ignored below 20 rows: then ``train``).
    max_splits : int, optional
        Complexity cap for the selected tree.
    time_limit : float, optional
        Seconds per solve.
    random_state : int, default=0
        Seed of the validation split.

    Attributes
    ----------
    front_ : Front
        Every tree of the solve, with metrics (test metrics are validation metrics).
    tree_ : Tree
        The selected tree.
    selected_ : FrontTree
        Its entry in ``front_``.
    classes_ : ndarray
        Class labels.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, when fitted on a DataFrame.
    """

    def __init__(
        self,
        solver="cart",
        discretizer=None,
        n_bins=None,
        max_depth=None,
        max_nodes=None,
        sparsity=None,
        cart_depth=None,
        select="validation",
        validation_fraction=0.25,
        max_splits=None,
        time_limit=None,
        random_state=0,
    ):
        self.solver = solver
        self.discretizer = discretizer
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.sparsity = sparsity
        self.cart_depth = cart_depth
        self.select = select
        self.validation_fraction = validation_fraction
        self.max_splits = max_splits
        self.time_limit = time_limit
        self.random_state = random_state

    # -- helpers ---------------------------------------------------------------------------------------
    def _frame(self, X, fitting: bool) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            df = X.copy()
            df.columns = [str(c) for c in df.columns]
            if fitting:
                self.feature_names_in_ = np.asarray(df.columns, dtype=object)
            return df
        X = check_array(X, dtype=None, ensure_all_finite=True, ensure_min_samples=1)
        if X.dtype.kind in "OUSb":
            return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        X = check_array(X, dtype=np.float64)
        return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])

    def _solver_params(self) -> dict:
        spec = get_solver(self.solver)
        given = {
            "max_depth": self.max_depth,
            "max_nodes": self.max_nodes,
            "sparsity": self.sparsity,
            "cart_depth": self.cart_depth,
        }
        return spec.resolve({k: v for k, v in given.items() if v is not None})

    # -- API -------------------------------------------------------------------------------------------
    def fit(self, X, y):
        """Solve the front on ``(X, y)`` and select ``tree_``."""
        if self.select not in ("validation", "train"):
            raise ValueError(f"select must be 'validation' or 'train', got {self.select!r}")
        df = self._frame(X, fitting=True)
        y = column_or_1d(y, warn=True)
        missing = np.flatnonzero(pd.isna(pd.Series(y, dtype=object)).to_numpy())
        if missing.size:
            raise DataError(f"y: missing labels at row(s) {', '.join(str(r) for r in missing[:5])} (0-based)")
        check_classification_targets(y)
        if len(y) != len(df):
            raise ValueError(f"X has {len(df)} rows but y has {len(y)} labels")
        df[TARGET] = y
        try:
            ds: Dataset = load_dataset(df, TARGET, name="X")
        except DataError as exc:  # the internal column name means nothing to the caller: it is their y
            raise DataError(str(exc).replace(repr(TARGET), "y").replace(TARGET, "y")) from None
        ds.notices = [n.replace(repr(TARGET), "y").replace(TARGET, "y") for n in ds.notices]
        self.n_features_in_ = df.shape[1] - 1
        self.classes_ = np.asarray(ds.schema.classes)
        self._dataset = ds
        params = self._solver_params()
        use_val = self.select == "validation" and ds.n_rows >= 20
        prep = prepare(ds, test_size=self.validation_fraction if use_val else None, seed=self.random_state)
        from treeexplorer.solvers import Control

        front = run_prepared(
            prep,
            get_solver(self.solver),
            params,
            discretizer=self.discretizer,
            n_bins=self.n_bins,
            control=Control(self.time_limit),
        )
        self.front_ = front
        by = "test_accuracy" if use_val else "train_accuracy"
        self.selected_ = front.best(by=by, max_splits=self.max_splits)
        self.tree_ = self.selected_.tree
        return self

    def _encode(self, X) -> np.ndarray:
        check_is_fitted(self, "tree_")
        df = self._frame(X, fitting=False)
        if df.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {df.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )
        if not isinstance(X, pd.DataFrame):
            df.columns = list(self._dataset.schema.feature_names)
        Xe, _ = self._dataset.encode(df, what="X")
        return Xe

    def predict(self, X):
        """Class label of each row."""
        Xe = self._encode(X)  # checks that the estimator is fitted
        return self.classes_[self.tree_.predict_codes(Xe)]

    def predict_proba(self, X):
        """Class distribution of the training rows in the leaf each row reaches."""
        Xe = self._encode(X)
        leaves = self.tree_.apply(Xe)
        counts = self.tree_.counts[leaves].astype(float)
        total = counts.sum(axis=1, keepdims=True)
        empty = total[:, 0] == 0
        counts[empty, self.tree_.prediction[leaves[empty]]] = 1.0
        total[empty] = 1.0
        return counts / total

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags
