"""scikit-learn compatible classifier: solve a front, then select one tree by a stated rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d

from treeexplorer.api import prepare, run_prepared
from treeexplorer.data import DataError, Dataset, load_dataset
from treeexplorer.metrics import score_key
from treeexplorer.registry import COMMON_PARAM_NAMES
from treeexplorer.request import RunRequest

__all__ = ["TreeExplorerClassifier", "TreeExplorerCV"]

TARGET = "__target__"


def _target_name(y, columns) -> str:
    """What the rules and exports call the target: ``y``'s own name (a named Series), else ``y``."""
    name = getattr(y, "name", None)
    for candidate in (name, "y", "target", TARGET):
        if isinstance(candidate, str) and candidate and candidate not in columns:
            return candidate
    return TARGET


def _given_params(est) -> dict:
    """The common solver parameters the user set (registry.COMMON_PARAMS); the solver's defaults (e.g. CART's own
    "criterion") stay the solver's."""
    given = {name: getattr(est, name) for name in COMMON_PARAM_NAMES}
    return {k: v for k, v in given.items() if v is not None}


def _columns(est) -> dict:
    """The columns the estimator was told to use or leave out (``load_dataset``'s ``features``/``exclude``)."""
    return {"features": getattr(est, "features", None), "exclude": getattr(est, "exclude", None)}


def _request(est) -> RunRequest:
    """The run an estimator's settings ask for, checked as :func:`treeexplorer.solve` checks them."""
    return RunRequest.build(
        est.solver,
        _given_params(est),
        discretizer=est.discretizer,
        n_bins=est.n_bins,
        time_limit=est.time_limit,
        class_weight=est.class_weight,
    )


def _leaf_mass(tree, request: RunRequest, ds: Dataset):
    """The weighted class mass of each node of ``tree`` on the rows of ``ds`` it was fitted on (row weights and
    class weights folded in), for ``predict_proba``; None for a plain fit (its counts are the masses)."""
    w = request.objective.resolve(ds.schema, ds.y, ds.weights).sample_weight
    if w is None:
        return None
    from treeexplorer.evaluate import node_masses

    return node_masses(tree, ds.X, ds.y, w)


def _load(est, X, y, sample_weight, allow_many_classes: bool) -> Dataset:
    """The training table of ``fit(X, y, sample_weight)`` (its row weights checked with one line each)."""
    df = est._frame(X, fitting=True)
    target = _target_name(y, df.columns)
    y = column_or_1d(y, warn=True)
    missing = np.flatnonzero(pd.isna(pd.Series(y, dtype=object)).to_numpy())
    if missing.size:
        raise DataError(f"y: missing labels at row(s) {', '.join(str(r) for r in missing[:5])} (0-based)")
    check_classification_targets(y)
    if len(y) != len(df):
        raise ValueError(f"X has {len(df)} rows but y has {len(y)} labels")
    df[target] = y
    weights = None if sample_weight is None else np.asarray(sample_weight)
    try:
        ds: Dataset = load_dataset(
            df, target, name="X", allow_many_classes=allow_many_classes, weights=weights, **_columns(est)
        )
    except DataError as exc:  # the internal column name means nothing to the caller: it is their y
        raise DataError(str(exc).replace(repr(TARGET), "y").replace(TARGET, "y")) from None
    ds.notices = [n.replace(repr(TARGET), "y").replace(TARGET, "y") for n in ds.notices]
    est.n_features_in_ = df.shape[1] - 1
    est.classes_ = np.asarray(ds.schema.classes)
    est._dataset = ds
    return ds


class TreeExplorerClassifier(ClassifierMixin, BaseEstimator):
    """Decision-tree classifier backed by any treeexplorer solver.

    ``fit`` solves a whole front of trees (``front_``) and keeps one (``tree_``) chosen by ``select``.

    Parameters
    ----------
    solver : str, default="cart"
        A registered solver: ``cart``, ``dpdt``, ``murtree``, ``branches``, ``sat``, ``contree``
        (:data:`treeexplorer.registry.SOLVER_NAMES`) or a plug-in's.
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
    features : list of str, optional
        The columns of ``X`` to learn from (default: all but those that look like row identifiers, named in
        ``front_.notices``; see :mod:`treeexplorer.columns`).
    exclude : list of str, optional
        Columns of ``X`` to leave out.
    class_weight : "balanced", dict or None, default=None
        As scikit-learn's trees: ``"balanced"`` weighs each class by ``n / (k * n_c)``, a dict ``{class:
        weight}``; multiplied into ``fit``'s ``sample_weight``.  The solver then minimises the weighted cost
        (solvers whose spec says ``weighted``), and ``select`` picks by the score it optimised (balanced
        accuracy for balanced weights alone, else the least cost).

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
        features=None,
        exclude=None,
        class_weight=None,
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
        self.features = features
        self.exclude = exclude
        self.class_weight = class_weight

    @classmethod
    def from_tree(cls, entry, front) -> TreeExplorerClassifier:
        """A fitted classifier that predicts with one tree of a front (picked in the Explorer, or by
        :meth:`Front.best`), without solving again.

        Parameters
        ----------
        entry : FrontTree
            The tree (``front[tree_id]``).
        front : Front
            Its front: the schema (columns, categories, classes) encodes new rows as in training.

        Returns
        -------
        TreeExplorerClassifier
            With ``front_``, ``selected_``, ``tree_``, ``classes_``, ``n_features_in_`` and ``feature_names_in_``.
        """
        schema = front.schema
        depth = front.params.get("max_depth") if isinstance(front.params.get("max_depth"), int) else None
        clf = cls(solver=front.solver, discretizer=None if front.discretizer == "raw" else front.discretizer)
        clf.max_depth = depth
        clf.select = "train"
        empty = np.empty((0, schema.n_features), dtype=np.float64)
        clf._dataset = Dataset(front.dataset or "front", schema, empty, np.empty(0, dtype=np.int64))
        clf.front_, clf.selected_, clf.tree_ = front, entry, entry.tree
        clf.classes_ = np.asarray(schema.classes)
        clf.n_features_in_ = schema.n_features
        clf.feature_names_in_ = np.asarray(schema.feature_names, dtype=object)
        return clf

    # -- helpers ---------------------------------------------------------------------------------------
    def _frame(self, X, fitting: bool) -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            df = X.copy()
            df.columns = [str(c) for c in df.columns]
            if fitting:
                self.feature_names_in_ = np.asarray(df.columns, dtype=object)
            return df
        # NaN is a missing value (each split learns where it goes); infinity is still refused
        X = check_array(X, dtype=None, ensure_all_finite="allow-nan", ensure_min_samples=1)
        if X.dtype.kind in "OUSb":
            return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
        return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])

    # -- API -------------------------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Solve the front on ``(X, y)`` and select ``tree_``.

        ``sample_weight``: one weight per row (finite, >= 0), as scikit-learn's ``fit``; the held-out rows of
        ``select="validation"`` are scored with their weights too."""
        if self.select not in ("validation", "train"):
            raise ValueError(f"select must be 'validation' or 'train', got {self.select!r}")
        # y is given explicitly and checked by scikit-learn: no "looks continuous" confirmation here
        ds = _load(self, X, y, sample_weight, allow_many_classes=True)
        request = _request(self)
        use_val = self.select == "validation" and ds.n_rows >= 20
        prep = prepare(ds, test_size=self.validation_fraction if use_val else None, seed=self.random_state)
        front = run_prepared(prep, request)
        self.front_ = front
        self.selected_ = front.best(by=score_key(front.score, held_out=use_val), max_splits=self.max_splits)
        self.tree_ = self.selected_.tree
        self._mass = _leaf_mass(self.tree_, request, prep.dataset)
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
        mass = getattr(self, "_mass", None)  # weighted fits: the weighted class masses (as scikit-learn's)
        counts = (self.tree_.counts if mass is None else mass)[leaves].astype(float)
        total = counts.sum(axis=1, keepdims=True)
        empty = total[:, 0] == 0
        counts[empty, self.tree_.prediction[leaves[empty]]] = 1.0
        total[empty] = 1.0
        return counts / total

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are kept: see treeexplorer.schema
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags


class TreeExplorerCV(TreeExplorerClassifier):
    """Decision-tree classifier whose complexity is chosen by cross-validation.

    ``fit`` cross-validates the solver's front (:func:`treeexplorer.cross_validate`, stratified folds) and keeps
    the tree refitted on all rows at the complexity level ``rule`` picks: ``"1se"``, the simplest level whose
    mean held-out accuracy is within one standard error of the best (as in cost-complexity pruning), or
    ``"best"``, the best mean.

    Parameters
    ----------
    solver, discretizer, n_bins, max_depth, max_nodes, sparsity, cart_depth, time_limit
        As for :class:`TreeExplorerClassifier` (``time_limit`` is per fold).
    cv : int, default=5
        Stratified folds (fewer when the data has fewer than ``2 * cv`` rows; below 4 rows the most accurate
        training tree is kept, as no fold split is possible).
    repeats : int, default=1
        Repetitions of the fold split.
    rule : {"1se", "best"}, default="1se"
    by : {"splits", "leaves", "depth", "avg_tests"}, default="splits"
        Complexity measure the levels are taken along.
    scheduler : None, "serial", str or distributed.Client, default="serial"
        Where the folds run (see :func:`treeexplorer.sweep`); ``"serial"``: in this process.
    random_state : int, default=0
        Seed of the folds.
    features, exclude : list of str, optional
        As for :class:`TreeExplorerClassifier`.

    Attributes
    ----------
    cv_front_ : CVFront
        The cross-validated front (``cv_front_.to_frame()``: mean and std of held-out accuracy per level).
    cv_results_ : pandas.DataFrame
        ``cv_front_.to_frame(by)``.
    level_ : int or float
        The chosen complexity level.
    front_ : Front
        The front refitted on all rows; ``selected_`` is the chosen tree in it and ``tree_`` its tree.
    classes_, n_features_in_, feature_names_in_
        As for :class:`TreeExplorerClassifier`.
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
        cv=5,
        repeats=1,
        rule="1se",
        by="splits",
        time_limit=None,
        scheduler="serial",
        random_state=0,
        features=None,
        exclude=None,
        class_weight=None,
    ):
        self.solver = solver
        self.discretizer = discretizer
        self.n_bins = n_bins
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.sparsity = sparsity
        self.cart_depth = cart_depth
        self.cv = cv
        self.repeats = repeats
        self.rule = rule
        self.by = by
        self.time_limit = time_limit
        self.scheduler = scheduler
        self.random_state = random_state
        self.features = features
        self.exclude = exclude
        self.class_weight = class_weight

    def _given_params(self) -> dict:
        return _given_params(self)

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the front on ``(X, y)`` (rows weighted by ``sample_weight`` and ``class_weight`` in
        every fold, held-out rows scored with the same objective) and select ``tree_`` by ``rule``."""
        from treeexplorer.choices import check_rule
        from treeexplorer.cv import cross_validate
        from treeexplorer.front import COMPLEXITY_MEASURES

        check_rule(self.rule)
        if self.by not in COMPLEXITY_MEASURES:
            raise ValueError(f"by must be one of {', '.join(COMPLEXITY_MEASURES)}, got {self.by!r}")
        ds = _load(self, X, y, sample_weight, allow_many_classes=False)
        request = _request(self)
        k = min(int(self.cv), ds.n_rows // 2)
        if k < 2:  # too few rows for two folds of two: the most accurate training tree, as select="train"
            front = run_prepared(prepare(ds), request)
            self.cv_front_, self.cv_results_, self.front_ = None, None, front
            self.selected_ = front.best(by=score_key(front.score))
            self.level_ = self.selected_.metrics[self.by]
            self.tree_ = self.selected_.tree
            self._mass = _leaf_mass(self.tree_, request, ds)
            return self
        cvf = cross_validate(
            ds,
            solver=self.solver,
            discretizer=self.discretizer,
            n_bins=self.n_bins,
            cv=k,
            repeats=self.repeats,
            seed=self.random_state,
            time_limit=self.time_limit,
            scheduler=self.scheduler,
            class_weight=self.class_weight,
            **self._given_params(),
        )
        row = cvf.select(self.rule, self.by)
        self.cv_front_, self.cv_results_, self.front_ = cvf, cvf.to_frame(self.by), cvf.refit
        self.level_ = row["level"]
        self.selected_ = row["tree"]
        self.tree_ = self.selected_.tree
        self._mass = _leaf_mass(self.tree_, request, ds)
        return self
