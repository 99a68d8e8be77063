"""The first stage of a run: the data loaded, its arguments checked and the test rows held out (:class:`Prepared`).

The app keeps one :class:`Prepared` across runs; :func:`treeexplorer.api.solve` makes one per call.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace

import numpy as np

from treeexplorer.data import DataError, Dataset, frame_from_arrays, load_dataset
from treeexplorer.front import data_key
from treeexplorer.request import got, is_number
from treeexplorer.schema import Schema
from treeexplorer.solvers import Control

__all__ = ["Prepared", "prepare", "check_data_args", "prepared_data_key", "with_weights"]


@dataclass
class Prepared:
    """Everything a solver run needs, computed once (the app reuses it across runs).

    ``w_test`` are the held-out rows' own weights (the training rows' are ``dataset.weights``), None for ones;
    ``weights`` is the run's objective resolved on these rows (:func:`with_weights`, set by the runner)."""

    dataset: Dataset
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    notices: list
    w_test: np.ndarray | None = None
    weights: object = None  # treeexplorer.objective.Weights

    @property
    def schema(self) -> Schema:
        return self.dataset.schema


def prepare(
    data,
    target=None,
    *,
    test_size: float | None = None,
    test=None,
    seed: int = 0,
    drop_missing: bool = False,
    categorical=(),
    max_rows: int | None = None,
    allow_many_classes: bool = False,
    stop=None,
    features=None,
    exclude=None,
    weights=None,
    na_values=None,
) -> Prepared:
    """Load ``data`` and hold out test rows (``test_size`` fraction, or a separate ``test`` table); ``stop`` is
    polled while loading, ``features`` / ``exclude`` choose the columns and ``weights`` (a column's name or one
    weight per row) are the rows' weights (see :func:`treeexplorer.data.load_dataset`).  The rows of a separate
    ``test`` table weigh 1 (times their class weights)."""
    dataset = (
        data
        if isinstance(data, Dataset)
        else load_dataset(
            data,
            target,
            drop_missing=drop_missing,
            categorical=categorical,
            max_rows=max_rows,
            allow_many_classes=allow_many_classes,
            stop=stop,
            features=features,
            exclude=exclude,
            weights=weights,
            na_values=na_values,
        )
    )
    if isinstance(data, Dataset) and (features is not None or exclude is not None):
        raise DataError("features= and exclude= choose columns while loading a table, not of a loaded Dataset")
    if weights is not None and isinstance(data, Dataset):
        raise DataError("sample_weight goes with a table to load; this dataset is already loaded (Dataset.weights)")
    notices = list(dataset.notices)
    if test is not None and test_size is not None:
        raise DataError("give either a test file or a test size, not both")
    if test is not None:
        X_te, y_te = dataset.encode(test, what="test data")
        if y_te is None:
            raise DataError(f"test data lacks the target column {dataset.schema.target!r}")
        return Prepared(dataset, dataset.X, dataset.y, X_te, y_te.astype(np.int64), notices)
    if test_size:  # 0 means no hold-out, as None (the app's slider at 0, CLI --test-size 0)
        train, te = dataset.split(test_size, seed)
        notices += [n for n in train.notices if n not in notices]
        return Prepared(train, train.X, train.y, te.X, te.y, notices, te.weights)
    return Prepared(dataset, dataset.X, dataset.y, None, None, notices)


def prepared_data_key(prep: Prepared) -> str:
    """The rows' digest (:func:`treeexplorer.front.data_key`), computed once per prepared data."""
    if "_data_key" not in prep.__dict__:
        prep.__dict__["_data_key"] = data_key(prep.X_train, prep.y_train, prep.X_test, prep.y_test, prep.schema.target)
    return prep.__dict__["_data_key"]


def with_weights(prep: Prepared, weights) -> Prepared:
    """``prep`` for a run with the objective ``weights`` (:class:`treeexplorer.objective.Weights`): a shallow copy
    (the app shares one :class:`Prepared` between runs), its cached data key kept."""
    out = replace(prep, weights=weights)
    if "_data_key" in prep.__dict__:
        out.__dict__["_data_key"] = prep.__dict__["_data_key"]
    return out


def check_data_args(data, target, *, test_size, seed, progress, control, drop_missing):
    """Types and ranges of the data side of a run (split, seed, callbacks), checked before any work: one clear
    error each.  Returns ``(data, target)``, arrays turned into a table (:func:`treeexplorer.data.frame_from_arrays`).
    """
    ts = test_size
    if ts is not None and (not is_number(ts) or not 0 <= ts < 1):
        raise DataError(
            f"test size must be a fraction strictly between 0 and 1 (or 0 for no held-out rows), got {got(ts)}"
        )
    if not isinstance(seed, numbers.Integral) or isinstance(seed, (bool, np.bool_)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be an integer in [0, 2**32), got {got(seed)}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function taking a dict (or None), got {got(progress)}")
    if control is not None:
        if not isinstance(control, Control):
            raise ValueError(f"control must be a treeexplorer.solvers.Control (or None), got {got(control)}")
        if control.stopped:
            raise ValueError(
                f"this Control was already {'cancelled' if control.cancelled else 'stopped by its time limit'}; "
                "a Control serves one run: pass a new Control()"
            )
    if not isinstance(drop_missing, (bool, np.bool_)):
        raise ValueError(f"drop_missing must be True or False, got {got(drop_missing)}")
    return _as_table(data, target)


def _as_table(data, target):
    """Arrays as data: ``solve(X, y)``, ``solve((X, y))``, a DataFrame with labels ``y``, or one array, list of
    rows or dict of columns (its last column the target, as in a file)."""
    if isinstance(data, tuple) and len(data) == 2 and target is None and _ndim(data[1]) == 1:
        return frame_from_arrays(data[0], data[1]), "y"
    if target is not None and not isinstance(target, str) and _ndim(target) >= 1:  # labels y
        if isinstance(data, (str, bytes, Dataset)) or hasattr(data, "__fspath__"):
            raise DataError(
                f"target must be a column name or position, got {type(target).__name__}; labels y go with an "
                "array or DataFrame X: solve(X, y)"
            )
        return frame_from_arrays(data, target), "y"
    if target is not None and (not isinstance(target, (str, numbers.Integral)) or isinstance(target, bool)):
        raise DataError(f"target must be a column name or position (or labels y), got {got(target)}")
    if isinstance(data, (np.ndarray, list, tuple, dict)):
        return frame_from_arrays(data), target
    return data, target


def _ndim(v) -> int:
    try:
        return int(np.ndim(v))
    except (ValueError, TypeError):  # ragged nested lists
        return 1
