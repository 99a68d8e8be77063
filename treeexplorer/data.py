"""Loading tables: CSV/TSV/Parquet files, DataFrames and bundled datasets, with clear errors.

A loaded :class:`Dataset` holds the encoded matrix ``X`` (numeric columns as they are, categorical columns
as codes, see :mod:`treeexplorer.schema`), class codes ``y`` and the :class:`~treeexplorer.schema.Schema`
that maps both back to the user's own names.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from treeexplorer.columns import check_column_list, choose_columns
from treeexplorer.schema import Column, Schema
from treeexplorer.target import TargetGuess, guess_target, looks_like_classes, many_classes_limit

__all__ = [
    "DataError",
    "ManyClassesError",
    "Dataset",
    "load_dataset",
    "bundled_datasets",
    "ASSETS_DIR",
    "frame_from_arrays",
]

# Installed from a wheel the bundled datasets are package data (``treeexplorer/datasets``); in a checkout
# (editable install) they stay in the top-level ``assets/`` folder.
_HERE = Path(__file__).resolve().parent
ASSETS_DIR = _HERE / "datasets" if (_HERE / "datasets" / "iris.csv").is_file() else _HERE.parent / "assets"
SKLEARN_DATASETS = ("iris", "wine", "breast_cancer")
MAX_SHOWN = 5


class DataError(ValueError):
    """Bad input data; the message says what is wrong, where, and what to do."""


class ManyClassesError(DataError):
    """The target column looks continuous (too many classes); pass ``allow_many_classes=True`` to use it.

    Attributes
    ----------
    column : str
        The target column.
    n_classes : int
        Its number of distinct values.
    """

    def __init__(self, message: str, column: str, n_classes: int):
        super().__init__(message)
        self.column = column
        self.n_classes = n_classes


@dataclass
class Dataset:
    """An encoded classification table.

    Attributes
    ----------
    name : str
        Shown in provenance (file stem, bundled name or ``"DataFrame"``).
    schema : Schema
        Column kinds, category values and class labels.
    X : ndarray of float64, shape (n, p)
        Encoded features (categorical columns hold category codes).
    y : ndarray of int64, shape (n,)
        Class codes, ``schema.classes[y[i]]`` is the original label.
    notices : list of str
        Things the loader decided on its own (rows dropped, ...).
    source_rows : ndarray of int64, optional
        Each row's 0-based position among the data rows of the loaded table (rows dropped for missing values
        and held-out rows leave gaps); ``None`` means ``0..n-1``.  Messages about rows use it.
    target_guess : TargetGuess, optional
        How the target was chosen when none was given (:func:`treeexplorer.target.guess_target`); ``None`` when
        the caller named it.
    weights : ndarray of float64, shape (n,), optional
        Each row's weight (``load_dataset(weights=...)``: a column of the table or an array), checked finite and
        >= 0; ``None``: every row weighs 1.
    weight_source : str, optional
        Where :attr:`weights` came from, in words (``column 'w'``, ``sample_weight``).
    """

    name: str
    schema: Schema
    X: np.ndarray
    y: np.ndarray
    notices: list[str] = field(default_factory=list)
    source_rows: np.ndarray | None = None
    target_guess: TargetGuess | None = None
    weights: np.ndarray | None = None
    weight_source: str | None = None

    def row_numbers(self) -> np.ndarray:
        """Row numbers as the loader's messages count them: from 1 after the header."""
        return (np.arange(self.n_rows) if self.source_rows is None else self.source_rows) + 1

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    def subset(self, rows) -> Dataset:
        source = np.arange(self.n_rows) if self.source_rows is None else self.source_rows
        w = None if self.weights is None else self.weights[rows]
        return Dataset(
            self.name,
            self.schema,
            self.X[rows],
            self.y[rows],
            list(self.notices),
            source[rows],
            self.target_guess,
            w,
            self.weight_source,
        )

    def split(self, test_size: float, seed: int = 0) -> tuple[Dataset, Dataset]:
        """Stratified train/test split (plain random split when a class is too small to stratify)."""
        from sklearn.model_selection import train_test_split

        if not 0 < test_size < 1:
            raise DataError(f"test size must be a fraction strictly between 0 and 1, got {test_size!r}")
        n_test = int(np.ceil(test_size * self.n_rows))
        if n_test < 1 or self.n_rows - n_test < 2:
            raise DataError(
                f"cannot hold out {test_size:.0%} of {self.n_rows} rows: the training part would have fewer than 2 rows"
            )
        idx = np.arange(self.n_rows)
        counts = np.bincount(self.y, minlength=self.schema.n_classes)
        stratify = self.y if counts[counts > 0].min() >= 2 and n_test >= np.count_nonzero(counts) else None
        tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=stratify)
        train, test = self.subset(np.sort(tr)), self.subset(np.sort(te))
        if stratify is None:
            train.notices.append("a class has fewer than 2 rows: the held-out split is not stratified")
        return train, test

    def encode(self, data, *, what: str = "data") -> tuple[np.ndarray, np.ndarray | None]:
        """Encode a new DataFrame (or file) with this dataset's schema: ``(X, y or None)``.

        Columns are matched by name; the target column is optional.  Unknown categories or classes raise
        :class:`DataError` naming the column and the value.
        """
        df = _resolve(data)[0].reset_index(drop=True)
        missing = [c.name for c in self.schema.columns if c.name not in df.columns]
        if missing:
            raise DataError(f"{what} lacks the column(s) {', '.join(map(repr, missing))} the model was trained on")
        X = np.empty((len(df), self.schema.n_features), dtype=np.float64)
        for j, col in enumerate(self.schema.columns):
            s = _usable_column(df[col.name], col.name, what, col.is_categorical, [])
            if col.is_categorical:
                X[:, j] = _codes(s, col.categories, col.name, what)
            else:
                X[:, j] = _numeric(s, col.name, what)
        y = None
        if self.schema.target in df.columns:
            _check_missing(df[[self.schema.target]], what)
            y = _codes(df[self.schema.target], self.schema.classes, self.schema.target, what, kind="class")
        return X, y


def frame_from_arrays(X, y=None) -> pd.DataFrame:
    """A table from arrays: ``X`` (2-D array, list of rows, dict of columns or DataFrame) and optional labels
    ``y`` (added as the column ``"y"``).  Array columns are named ``x0, x1, ...``.

    Raises
    ------
    DataError
        Ragged rows, a 1-D or 3-D ``X``, labels of the wrong length, ...
    """
    if isinstance(X, pd.DataFrame):
        df = X.copy()
    elif isinstance(X, dict):
        try:
            df = pd.DataFrame(X)
        except (ValueError, TypeError) as exc:
            raise DataError(f"cannot make a table of the dict of columns: {_one_line(exc)}") from None
    else:
        try:
            arr = np.asarray(X) if isinstance(X, np.ndarray) else np.array(X, dtype=object)
        except (ValueError, TypeError) as exc:
            raise DataError(f"X: rows of different lengths or shapes ({_one_line(exc)})") from None
        if arr.ndim == 1 and len(arr) and all(isinstance(r, (list, tuple, np.ndarray)) for r in arr):
            raise DataError("X: rows of different lengths; every row needs one value per column")
        if arr.ndim != 2:
            raise DataError(f"X must be 2-D (rows x columns), got shape {arr.shape}")
        if arr.dtype == object:  # a list of rows: let pandas find each column's type
            df = pd.DataFrame(arr.tolist(), columns=[f"x{j}" for j in range(arr.shape[1])]).infer_objects()
        else:
            df = pd.DataFrame(arr, columns=[f"x{j}" for j in range(arr.shape[1])])
    if y is None:
        return df
    try:
        labels = np.asarray(y) if isinstance(y, (np.ndarray, pd.Series)) else np.array(list(y), dtype=object)
    except (ValueError, TypeError) as exc:
        raise DataError(f"y must be a 1-D sequence of labels ({_one_line(exc)})") from None
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1:
        raise DataError(f"y must be 1-D (one label per row), got shape {labels.shape}")
    if len(labels) != len(df):
        raise DataError(f"X has {len(df)} rows but y has {len(labels)} labels")
    if "y" in map(str, df.columns):
        raise DataError("X already has a column 'y'; pass the labels as a column of X and name it as target")
    df["y"] = pd.Series(labels).infer_objects().to_numpy() if labels.dtype == object else labels
    return df


def bundled_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset` without a path: bundled files and scikit-learn's sets."""
    files = sorted(p.stem for p in ASSETS_DIR.glob("*.csv"))
    return files + [f"sklearn:{n}" for n in SKLEARN_DATASETS]


def load_dataset(
    source,
    target=None,
    *,
    drop_missing: bool = False,
    categorical=(),
    name: str | None = None,
    max_rows: int | None = None,
    allow_many_classes: bool = False,
    stop=None,
    features=None,
    exclude=None,
    weights=None,
    na_values=None,
) -> Dataset:
    """Load and validate a classification table.

    Parameters
    ----------
    source : str, path or DataFrame
        A CSV/TSV/TXT file (delimiter sniffed, header expected), a Parquet file, a DataFrame, or the name
        of a bundled dataset (see :func:`bundled_datasets`).
    target : str or int, optional
        Target column name (or position); default: :func:`treeexplorer.target.guess_target`'s choice (a column
        named like ``species``/``label``/``class``, else the last text column with few values; never a year,
        date or id), recorded in ``notices`` and ``target_guess``.
    drop_missing : bool
        Drop the rows with a missing feature value.  By default they are kept: every split learns which way a
        missing value goes (see :mod:`treeexplorer.schema`).  Rows whose target is missing are always dropped,
        with a notice; a feature column with no value at all is left out, with a notice.
    categorical : sequence of str
        Columns to treat as categorical even if they hold numbers (e.g. integer-coded attributes).
    name : str, optional
        Name used in provenance.
    max_rows : int, optional
        Refuse larger tables (the app's upload cap).
    allow_many_classes : bool
        Accept a target with more than max(20, 5 % of rows) distinct values or non-integer floats
        (otherwise :class:`ManyClassesError`).
    stop : callable, optional
        ``stop() -> bool`` polled between columns (a run's time limit or cancel): once it answers True, the
        feature columns not yet read are left out (the first one is always read), with a notice, so that the
        run returns its best tree so far on the columns it has.
    features : list of str, optional
        The feature columns to learn from, exactly.  Default: every column but those that look like row
        identifiers (:func:`treeexplorer.columns.identifier_reason`: ``ID``, ``Unnamed: 0``, ``name``, row
        numbers), which are left out with a notice naming them.
    exclude : list of str, optional
        Columns to leave out as well.
    weights : str or array-like, optional
        Row weights: the name of a numeric column of the table (then not a feature) or one number per row of
        the table; finite and >= 0 (a missing weight is refused).  See :attr:`Dataset.weights`.
    na_values : value or list, optional
        Cells that mean "missing" besides the empty cell, ``NA`` and ``NaN`` (e.g. ``"?"``, ``-999``): read as
        missing values, text compared without surrounding spaces.

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        With a message naming the problem and where (file, column, rows) and what to do.
    """
    df, default_name = _resolve(source)
    notices = list(df.attrs.get("notices", ()))  # what the reader decided (decimal commas, ...)
    df = df.reset_index(drop=True)  # index labels = data-row positions, kept when rows are dropped
    name = name or default_name
    df = mark_missing(df, na_values)
    notices += gap_marker_notices(df)
    categorical = _column_list(categorical, name)
    if df.columns.duplicated().any():
        dups = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        raise DataError(
            f"{name}: duplicate column name(s) {', '.join(map(repr, dups))}; rename them so each "
            "column has its own name"
        )
    df.columns = [str(c) for c in df.columns]
    if df.shape[1] < 2:
        raise DataError(
            f"{name}: needs at least one feature column and a target column, found "
            f"{df.shape[1]} column(s) (is the delimiter right?)"
        )
    try:
        excluded = check_column_list(exclude, "exclude") or []
    except ValueError as exc:
        raise DataError(f"{name}: {exc}") from None
    weight_col, weight_name = _weight_column(df, weights, target, name)
    if weight_col is not None and isinstance(weights, str):  # the weight column is not a feature
        df = df.drop(columns=weights)
    guess = guess_target(df.drop(columns=[c for c in excluded if c in df.columns])) if target is None else None
    target = guess.column if guess is not None else _pick_target(df, target, name)
    if guess is not None:
        notices.append(guess.describe())
    try:
        df = choose_columns(
            df, target, features=features, exclude=excluded, keep=categorical, name=name, notices=notices
        )
    except ValueError as exc:  # a column choice naming no column, or leaving none: the loader's one-line error
        raise DataError(str(exc)) from None
    if not allow_many_classes and not looks_like_classes(df[target]):
        n = int(df[target].nunique())
        kind = "non-integer numbers" if pd.api.types.is_float_dtype(df[target]) else "values"
        raise ManyClassesError(
            f"{name}: the target column {target!r} has {n:,} distinct {kind} (more than "
            f"{many_classes_limit(len(df))} classes): it looks continuous. Choose another target column "
            "(--target), or confirm it (allow_many_classes=True, CLI --allow-many-classes)",
            target,
            n,
        )
    if max_rows is not None and len(df) > max_rows:
        raise DataError(f"{name}: {len(df):,} rows exceed the limit of {max_rows:,} rows")
    _check_cells(df, name)
    df, source_rows = _gaps(df, target, weight_col, weight_name, drop_missing, name, notices)
    if len(df) < 2:
        raise DataError(f"{name}: needs at least 2 rows, found {len(df)} (n_samples={len(df)})")
    categorical = set(categorical)
    unknown = categorical - set(df.columns)
    if unknown:
        raise DataError(f"{name}: categorical column(s) {', '.join(map(repr, sorted(unknown)))} not in the table")
    columns, X = [], np.empty((len(df), df.shape[1] - 1), dtype=np.float64)
    feats = [c for c in df.columns if c != target]
    for j, c in enumerate(feats):
        if j and stop is not None and stop():
            notices.append(
                f"stopped (time limit or cancel) while loading the table: {len(feats) - j} column(s) not read, "
                "left out: " + ", ".join(map(repr, feats[j : j + 5])) + (" ..." if len(feats) - j > 5 else "")
            )
            X = np.ascontiguousarray(X[:, :j])
            break
        s = _usable_column(df[c], c, name, c in categorical, notices)
        if c in categorical or not _looks_numeric(s):
            cats = _categories(s)
            columns.append(Column(c, "categorical", cats))
            X[:, j] = _codes(s, cats, c, name)
        else:
            columns.append(Column(c, "numeric"))
            X[:, j] = _numeric(s, c, name)
    labels = _uniform_labels(df[target], target, "class", notices)
    classes = _categories(labels)
    if len(classes) < 2:
        raise DataError(
            f"{name}: the target column {target!r} has a single class ({classes[0]!r}); "
            "a classifier needs at least 2 classes"
        )
    y = _codes(labels, classes, target, name, kind="class").astype(np.int64)
    schema = Schema(tuple(columns), target, classes)
    w = None
    if weight_col is not None:
        from treeexplorer.objective import check_row_weights

        rows = (np.arange(len(df)) if source_rows is None else source_rows) + 1
        w = check_row_weights(weight_col.loc[df.index].to_numpy(dtype=np.float64), f"{name}: {weight_name}", rows)
    return Dataset(name, schema, X, y, notices, source_rows, guess, w, weight_name)


def _weight_column(df: pd.DataFrame, weights, target, name: str) -> tuple[pd.Series | None, str | None]:
    """The row weights :func:`load_dataset` was given (a column's name or one number per row) as a float
    Series on ``df``'s index, and their name in messages; one clear line when they cannot be weights."""
    if weights is None:
        return None, None
    if isinstance(weights, str):
        if weights not in df.columns:
            cols = ", ".join(map(repr, list(df.columns)[:12])) + (" ..." if df.shape[1] > 12 else "")
            raise DataError(f"{name}: the weight column {weights!r} is not in the table (its columns: {cols})")
        if target is not None and str(target) == weights:
            raise DataError(f"{name}: the weight column {weights!r} is the target; weigh the rows by another column")
        s, what = df[weights], f"weight column {weights!r}"
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            bad = s[pd.to_numeric(s, errors="coerce").isna() & s.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise DataError(
                f"{name}: the {what} is not numeric{example}; row weights must be numbers >= 0 (or choose "
                "another column)"
            )
        return s.astype(np.float64), what
    if isinstance(weights, pd.Series):
        weights = weights.to_numpy()
    try:
        a = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("sample_weight must be numbers (one weight per row) or the name of a column") from None
    if a.ndim != 1 or len(a) != len(df):
        raise DataError(
            f"sample_weight has shape {a.shape} but {name} has {len(df)} rows; give one weight per row "
            "(or the name of a weight column)"
        )
    return pd.Series(a, index=df.index), "sample_weight"


GAP_MARKERS = ("?", "NA", "N/A", "n/a", "na", "-", "--", ".", "NULL", "null", "None", "none", "missing", "nan")
NUMERIC_GAP_MARKERS = (-999.0, -9999.0, -99.0, 999.0, 9999.0)


def mark_missing(df: pd.DataFrame, na_values) -> pd.DataFrame:
    """``df`` with the cells equal to one of ``na_values`` (text compared without surrounding spaces) missing."""
    if na_values is None:
        return df
    values = [na_values] if isinstance(na_values, (str, int, float)) else list(na_values)
    texts = {str(v).strip() for v in values}
    numbers = set()
    for v in values:
        try:
            numbers.add(float(v))
        except (TypeError, ValueError):
            pass
    out = df.copy()
    for c in out.columns:
        s = out[c]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            hit = s.isin(numbers).to_numpy()
        else:
            hit = s.map(lambda v: isinstance(v, str) and v.strip() in texts or _number_in(v, numbers)).to_numpy(
                dtype=bool
            )
        if hit.any():
            out[c] = s.mask(hit)
            if out[c].dtype == object:  # "12", "?" -> "12", NaN: numbers again where they all are
                parsed = pd.to_numeric(out[c], errors="coerce")
                if (parsed.notna() | out[c].isna()).all():
                    out[c] = parsed
    return out


def _number_in(v, numbers: set) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) and float(v) in numbers


def _gaps(df, target, weight_col, weight_name, drop_missing, name, notices) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The rows and columns kept given their missing values (see :func:`load_dataset`), with a notice for each
    decision, and the kept rows' positions in the table (None: all)."""
    keep = np.ones(len(df), dtype=bool)
    no_target = df[target].isna().to_numpy()
    if no_target.any():
        rows = np.flatnonzero(no_target)
        shown = ", ".join(str(r + 1) for r in rows[:MAX_SHOWN]) + (" ..." if len(rows) > MAX_SHOWN else "")
        notices.append(
            f"dropped {len(rows)} row(s) whose target {target!r} is missing (row {shown}): a tree learns from "
            "known targets only"
        )
        keep &= ~no_target
    no_weight = weight_col.isna().to_numpy() & keep if weight_col is not None else np.zeros(len(df), dtype=bool)
    if no_weight.any() and drop_missing:
        notices.append(f"dropped {int(no_weight.sum())} row(s) whose {weight_name} is missing")
        keep &= ~no_weight
    elif no_weight.any():
        r = int(np.flatnonzero(no_weight)[0])
        raise DataError(
            f"{name}: the {weight_name} is missing at row {r + 1}; give every row a weight (or drop those rows: "
            "drop_missing=True, CLI --drop-missing)"
        )
    feats = [c for c in df.columns if c != target]
    empty = [c for c in feats if not df.loc[keep, c].notna().any()]
    if empty and len(empty) == len(feats):
        raise DataError(f"{name}: every feature column is empty (only missing values): nothing to learn from")
    if empty:
        notices.append(
            f"left out {len(empty)} column(s) with no value at all: "
            + ", ".join(map(repr, empty[:MAX_SHOWN]))
            + (" ..." if len(empty) > MAX_SHOWN else "")
        )
        df = df.drop(columns=empty)
        feats = [c for c in feats if c not in empty]
    miss = df.loc[:, feats].isna().to_numpy() & keep[:, None]
    if miss.any():
        per_col = miss.sum(axis=0)
        cols = ", ".join(f"{c!r} ({int(n)})" for c, n in zip(feats, per_col) if n)
        n_rows = int(miss.any(axis=1).sum())
        if drop_missing:
            notices.append(f"dropped {n_rows} row(s) with missing values (in {cols})")
            keep &= ~miss.any(axis=1)
        else:
            notices.append(
                f"kept {n_rows} row(s) with missing values, in {cols}: each split learns which way a missing value "
                "goes; or drop those rows (drop_missing=True, CLI --drop-missing)"
            )
    if keep.all():
        return df, None
    return df.loc[keep], np.flatnonzero(keep)


def gap_marker_notices(df: pd.DataFrame, name: str = "") -> list[str]:
    """One notice per column holding a value that often stands for a missing one (``"?"``, ``"NA "``,
    ``-999``) that pandas does not read as missing, saying how to declare it."""
    out = []
    for c in df.columns:
        s = df[c]
        if pd.api.types.is_bool_dtype(s):
            continue
        if pd.api.types.is_numeric_dtype(s):
            for v in NUMERIC_GAP_MARKERS:
                n = int((s == v).sum())
                if n >= 2 and (s.min() == v or s.max() == v):
                    out.append(_marker_note(c, f"{v:g}", n))
                    break
            continue
        text = s.map(lambda v: v.strip() if isinstance(v, str) else None)
        raw = s.map(lambda v: v if isinstance(v, str) else None)
        for m in GAP_MARKERS:
            hit = text == m
            n = int(hit.sum())
            if n:
                shown = raw[hit].iloc[0]
                out.append(_marker_note(c, shown, n, m))
                break
    return out


def _marker_note(col: str, shown: str, n: int, marker: str | None = None) -> str:
    m = shown if marker is None else marker
    return (
        f"column {col!r}: {shown!r} in {n} row(s) often means a missing value; if it does, declare it "
        f"(na_values=[{m!r}], CLI --na-values {m!r})"
    )


def count_missing_rows(source) -> tuple[int, dict[str, int]]:
    """How many rows ``drop_missing=True`` would drop, and the missing values per column.

    ``source`` is a DataFrame or anything :func:`load_dataset` reads.  Returns ``(n_rows, per_column)``
    where ``per_column`` lists only the columns with missing values (``{"age": 12}``), so the app can
    say "drop rows with missing values: drops 12 rows" before loading.
    """
    df = source if isinstance(source, pd.DataFrame) else _resolve(source)[0]
    miss = df.isna()
    per_col = miss.sum()
    return int(miss.any(axis=1).sum()), {str(c): int(n) for c, n in per_col[per_col > 0].items()}


# -- reading ---------------------------------------------------------------------------------------------


def _resolve(source) -> tuple[pd.DataFrame, str]:
    if isinstance(source, pd.DataFrame):
        return source.copy(), "DataFrame"
    if isinstance(source, Dataset):
        raise DataError("load_dataset got a Dataset; pass it to solve() directly")
    if isinstance(source, (bytes, bytearray)):
        return read_table_bytes(bytes(source), "data"), "data"
    try:
        text = os.fspath(source)
    except TypeError:
        raise DataError(
            "data must be a file path, a bundled dataset name or a pandas DataFrame (or, in solve(), arrays "
            f"X and y); got {type(source).__name__}"
        ) from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip() or "\x00" in text:
        raise DataError(f"no such file: {text!r}")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # "~user" of no known user
        path = Path(text)
    try:
        is_file = path.is_file()
    except OSError as exc:  # a name too long for the file system, ...
        raise DataError(f"cannot open {text[:100]!r}: {exc.strerror or exc}") from None
    if is_file:
        return _read_any(path), path.stem
    if text.startswith("sklearn:") or (text in SKLEARN_DATASETS and not (ASSETS_DIR / f"{text}.csv").is_file()):
        return _sklearn_frame(text.removeprefix("sklearn:")), text.removeprefix("sklearn:")
    bundled = ASSETS_DIR / f"{text}.csv"
    if "/" not in text and bundled.is_file():
        return _read_any(bundled), text
    if path.exists():
        raise DataError(f"{text} is not a file")
    raise DataError(
        f"no such file: {text!r} (and no bundled dataset of that name; bundled: {', '.join(bundled_datasets())})"
    )


def _sklearn_frame(name: str) -> pd.DataFrame:
    from sklearn import datasets

    loaders = {"iris": datasets.load_iris, "wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer}
    if name not in loaders:
        raise DataError(f"unknown scikit-learn dataset {name!r}; choose one of {', '.join(loaders)}")
    b = loaders[name](as_frame=True)
    df = b.frame.copy()
    df.columns = [str(c).replace(" ", "_") for c in df.columns]
    df["target"] = np.asarray(b.target_names)[b.target]
    return df


def _read_any(path) -> pd.DataFrame:
    path = Path(path)
    if not path.is_file():
        raise DataError(f"no such file: {str(path)!r}")
    try:
        raw = path.read_bytes()
    except OSError as exc:  # permissions, a directory, a device that fails ...
        raise DataError(f"{path.name}: cannot read the file ({exc.strerror or exc})") from None
    except MemoryError:
        raise DataError(f"{path.name}: the file is too large to load in memory") from None
    if not raw:
        raise DataError(f"{path.name}: the file is empty")
    return read_table_bytes(raw, path.name)


# Formats recognised by their first bytes that are not tables treeexplorer reads: (magic, what it is).
_NOT_TABLES = (
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Excel (.xls) or other Microsoft Office file: save it as CSV"),
    (b"%PDF", "a PDF document, not a table"),
    (b"\x89PNG", "a PNG image, not a table"),
    (b"\xff\xd8\xff", "a JPEG image, not a table"),
    (b"GIF8", "a GIF image, not a table"),
    (b"SQLite format 3\x00", "an SQLite database: export the table as CSV"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive: extract the table first"),
    (b"Rar!\x1a\x07", "a RAR archive: extract the table first"),
    (b"\x7fELF", "a program (ELF), not a table"),
    (b"\x28\xb5\x2f\xfd", "a Zstandard-compressed file: decompress it first"),
)
_COMPRESSED = (  # (magic, name, module) of the stream compressions read transparently
    (b"\x1f\x8b", "gzip", "gzip"),
    (b"BZh", "bzip2", "bz2"),
    (b"\xfd7zXZ\x00", "xz", "lzma"),
)
_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
MAX_EXPANDED = 2 << 30  # bytes a compressed table may expand to: a decompression bomb stops here


@dataclass(frozen=True)
class ReadLimits:
    """Bounds an untrusted file is read within, checked while it is read (not after).

    Parameters
    ----------
    expanded : int
        Bytes compressed data may expand to (streamed: reading stops one chunk past it).
    columns : int, optional
        Columns the header may name (counted before the table is parsed).
    rows : int, optional
        Data rows (the parser stops one row past it).
    what : str
        What the limits are of, for the message (``"an upload"``).
    """

    expanded: int = MAX_EXPANDED
    columns: int | None = None
    rows: int | None = None
    what: str = "a table"

    def too_large(self, name: str, amount: str) -> DataError:
        return DataError(
            f"{name}: {amount}, over the limit of {self.what}; use the Python API or the CLI for larger tables"
        )


_NO_LIMITS = ReadLimits()


def _size(n: int) -> str:
    return f"{n / (1 << 30):.0f} GB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MB"


def read_table_bytes(
    raw: bytes, name: str = "data", *, limits: ReadLimits | None = None, _depth: int = 0
) -> pd.DataFrame:
    """Read a table from a file's bytes, recognising the format by its content, not its name.

    CSV/TSV text (UTF-8, UTF-16/32 with a byte-order mark or without one, Latin-1), Parquet, Feather,
    and gzip/bzip2/xz-compressed or single-file zip copies of those are read; a workbook, an image or
    other binary content gets a :class:`DataError` saying what the file is and what to do.  ``limits``
    (:class:`ReadLimits`) bound what decompression, the header and the parser may produce.
    """
    limits = limits or _NO_LIMITS
    if not raw:
        raise DataError(f"{name}: the file is empty")
    head = raw[:16]
    if raw[:4] == b"PAR1":
        return _read_columnar(raw, name, "Parquet", limits)
    if raw[:6] == b"ARROW1":
        return _read_columnar(raw, name, "Feather/Arrow", limits)
    if raw[:4] == b"PK\x03\x04" or raw[:4] == b"PK\x05\x06":
        return _read_zip(raw, name, _depth, limits)
    for magic, kind, module in _COMPRESSED:
        if head.startswith(magic):
            if _depth >= 2:
                raise DataError(f"{name}: {kind} data nested too deeply; decompress it first")
            return read_table_bytes(_expand(raw, name, kind, module, limits), name, limits=limits, _depth=_depth + 1)
    for magic, what in _NOT_TABLES:
        if head.startswith(magic):
            raise DataError(f"{name}: this is {what}")
    return read_text_table(_decode(raw, name), name, limits=limits)


def _read_columnar(raw: bytes, name: str, kind: str, limits: ReadLimits = _NO_LIMITS) -> pd.DataFrame:
    try:
        if kind == "Parquet":
            _check_parquet_shape(raw, name, limits)
            return pd.read_parquet(io.BytesIO(raw))
        return pd.read_feather(io.BytesIO(raw))
    except MemoryError:
        raise DataError(f"{name}: the {kind} file is too large to load in memory") from None
    except Exception as exc:  # pyarrow raises many types; all mean "not a readable file of that kind"
        hint = "" if raw[-4:] == b"PAR1" or kind != "Parquet" else " (the file seems truncated)"
        raise DataError(f"{name}: not a readable {kind} file{hint}: {_one_line(exc)}") from None


def _check_parquet_shape(raw: bytes, name: str, limits: ReadLimits) -> None:
    """Rows and columns from the Parquet footer, before any column is decompressed."""
    if limits.rows is None and limits.columns is None:
        return
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(io.BytesIO(raw)).metadata
    if limits.columns is not None and meta.num_columns > limits.columns:
        raise limits.too_large(name, f"{meta.num_columns:,} columns")
    if limits.rows is not None and meta.num_rows > limits.rows:
        raise limits.too_large(name, f"{meta.num_rows:,} rows")


def _read_zip(raw: bytes, name: str, depth: int, limits: ReadLimits = _NO_LIMITS) -> pd.DataFrame:
    import lzma
    import zipfile
    import zlib

    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            names = {i.filename for i in infos}
            if "xl/workbook.xml" in names or any(n.startswith("xl/") for n in names):
                raise DataError(f"{name}: this is an Excel workbook (.xlsx): save the sheet as CSV and load that")
            if "mimetype" in names and b"spreadsheet" in zf.read("mimetype")[:100]:
                raise DataError(f"{name}: this is an OpenDocument spreadsheet (.ods): save the sheet as CSV")
            if "[Content_Types].xml" in names:
                raise DataError(f"{name}: this is a Microsoft Office document, not a table: save it as CSV")
            if len(infos) != 1:
                shown = ", ".join(sorted(names)[:5]) + (" ..." if len(names) > 5 else "")
                raise DataError(
                    f"{name}: a zip archive with {len(infos)} files ({shown or 'none'}); "
                    "extract the table and load that file"
                )
            info = infos[0]
            if info.file_size > limits.expanded:  # what the archive claims; the read below is capped anyway
                raise DataError(f"{name}: the zipped table expands to more than {_size(limits.expanded)}")
            with zf.open(info) as fh:
                inner = _read_capped(fh, limits.expanded)
    except DataError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError, EOFError, ValueError) as exc:
        raise DataError(f"{name}: a damaged or unsupported zip archive: {_one_line(exc)}") from None
    except (zlib.error, lzma.LZMAError) as exc:  # a damaged compressed member
        raise DataError(f"{name}: a damaged zip archive: {_one_line(exc)}") from None
    except MemoryError:
        raise DataError(f"{name}: the zipped table is too large to load in memory") from None
    if len(inner) > limits.expanded:
        raise DataError(f"{name}: the zipped table expands to more than {_size(limits.expanded)}")
    if depth >= 2:
        raise DataError(f"{name}: archives nested too deeply; extract the table first")
    return read_table_bytes(inner, f"{name}:{info.filename}", limits=limits, _depth=depth + 1)


def _expand(raw: bytes, name: str, kind: str, module: str, limits: ReadLimits = _NO_LIMITS) -> bytes:
    import bz2
    import gzip
    import lzma
    import zlib

    opener = {"gzip": lambda b: gzip.GzipFile(fileobj=b), "bz2": bz2.BZ2File, "lzma": lzma.LZMAFile}[module]
    try:
        with opener(io.BytesIO(raw)) as fh:
            out = _read_capped(fh, limits.expanded)
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise DataError(f"{name}: a damaged {kind} file: {_one_line(exc)}") from None
    except MemoryError:
        raise DataError(f"{name}: the {kind} data is too large to decompress in memory") from None
    if len(out) > limits.expanded:
        raise DataError(f"{name}: the {kind} data expands to more than {_size(limits.expanded)}")
    if not out:
        raise DataError(f"{name}: the {kind} file holds no data")
    return out


def _read_capped(fh, cap: int = MAX_EXPANDED) -> bytes:
    """Up to about ``cap`` bytes and one chunk more, read in chunks (one big ``read(n)`` would reserve ``n``
    bytes at once): more than ``cap`` means the data expands past it."""
    parts, total = [], 0
    while total <= cap:
        chunk = fh.read(min(1 << 20, cap + 1 - total) or 1)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _decode(raw: bytes, name: str) -> str:
    """Text of a file: a byte-order mark decides; UTF-16 without one is recognised by its zero bytes;
    other NUL bytes or control characters mean a binary file."""
    for bom, enc in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom) :].decode(enc)
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"{name}: starts like {enc.upper()} text but is not valid {enc.upper()}: {exc.reason}"
                ) from None
    head = raw[:4096]
    if b"\x00" in head:
        enc = _utf16_without_bom(head)
        if enc is None:
            raise DataError(f"{name}: looks like a binary file (it holds NUL bytes), not CSV/TSV text")
        try:
            return raw.decode(enc)
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{name}: looks like {enc.upper()} text but is not valid {enc.upper()}: {exc.reason}"
            ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    sample = text[:4096].rstrip("\x1a")  # Ctrl-Z: the end-of-file mark of old DOS tools
    control = sum(1 for ch in sample if (ch < " " and ch not in "\t\n\r\f\v") or ch == "\x7f")
    if control > max(2, len(sample) // 100):
        raise DataError(f"{name}: looks like a binary file ({control} control characters), not CSV/TSV text")
    return text.rstrip("\x1a")


def _utf16_without_bom(head: bytes) -> str | None:
    pairs = len(head) // 2
    if pairs < 2:
        return None
    even_zero = sum(1 for i in range(0, 2 * pairs, 2) if head[i] == 0)
    odd_zero = sum(1 for i in range(1, 2 * pairs, 2) if head[i] == 0)
    if odd_zero >= 0.4 * pairs and even_zero <= 0.02 * pairs:
        return "utf-16-le"
    if even_zero >= 0.4 * pairs and odd_zero <= 0.02 * pairs:
        return "utf-16-be"
    return None


def _one_line(exc: BaseException, limit: int = 200) -> str:
    """An exception's message on one line (library messages can run over several), shortened."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


SNIFF_CHARS = 8192  # csv.Sniffer is quadratic on some samples (many quotes): 16 K chars took 8 s


def read_text_table(text: str, name: str = "data", *, limits: ReadLimits | None = None) -> pd.DataFrame:
    """Parse CSV/TSV text with a sniffed delimiter and a header row (used for files and uploads).

    Decimal commas (``-1,18`` in a semicolon file) are read as numbers, with a notice in
    ``df.attrs["notices"]``; a first line that looks like data gets an error saying the header is missing.
    ``limits`` bound the columns (counted in the header first) and the rows (the parser stops past them).
    """
    limits = limits or _NO_LIMITS
    if not text.strip():
        raise DataError(f"{name}: the file is empty")
    if "\x00" in text:
        raise DataError(f"{name}: holds NUL characters: a binary file, not CSV/TSV text")
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS and "\n" in sample:
        sample = sample[: sample.rindex("\n")]
    try:
        sep = csv.Sniffer().sniff(sample, delimiters=",;\t| ").delimiter
    except csv.Error:
        sep = "\t" if sample.count("\t") > sample.count(",") else ","
    lines = csv.reader(io.StringIO(text), delimiter=sep, skipinitialspace=sep == " ")  # lazy: two rows read
    try:
        header = next(lines, [])
    except csv.Error as exc:
        raise DataError(f"{name}: cannot read the header line as {_sep_name(sep)}-separated text: {exc}") from None
    if limits.columns is not None and len(header) > limits.columns:
        raise limits.too_large(name, f"{len(header):,} columns")
    try:
        first = next(lines, None)
    except csv.Error:  # pandas will say what is wrong with it
        first = None
    if first is not None and len(first) > len(header) + 1:
        # pandas would take all the extra leading fields as a many-level row index (and slowly)
        raise DataError(
            f"{name}: the first data row has {len(first)} {_sep_name(sep)}-separated fields but the header names "
            f"{len(header)} columns; is the delimiter or quoting right?"
        )
    header = [h.strip() for h in header]
    seen: dict[str, int] = {}
    for h in header:
        seen[h] = seen.get(h, 0) + 1
    dups = sorted(h for h, k in seen.items() if k > 1)
    if dups:  # before pandas, whose renaming of duplicates is quadratic in their number
        if all(_is_number_text(h) for h in header):
            _no_header(header, sep, name)
        raise DataError(
            f"{name}: duplicate column name(s) {', '.join(map(repr, dups[:MAX_SHOWN]))}"
            f"{' ...' if len(dups) > MAX_SHOWN else ''}; rename them so each column has its own name"
        )
    try:
        rows = None if limits.rows is None else limits.rows + 1  # one row past the limit says it is over it
        df = pd.read_csv(io.StringIO(text), sep=r"\s+" if sep == " " else sep, skipinitialspace=True, nrows=rows)
    except pd.errors.EmptyDataError:
        raise DataError(f"{name}: the file is empty") from None
    except (ValueError, csv.Error, OverflowError, UnicodeError) as exc:  # ParserError is a ValueError
        raise DataError(f"{name}: cannot parse as a {_sep_name(sep)}-separated table: {_one_line(exc)}") from None
    except MemoryError:
        raise DataError(f"{name}: the table is too large to load in memory") from None
    if df.index.nlevels > 1:
        raise DataError(
            f"{name}: data rows have {df.index.nlevels} more fields than the header has names; "
            "is the delimiter or quoting right?"
        )
    if not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1):
        # rows one field longer than the header: pandas took the first field as a row index (R's write.csv
        # layout); keep it as a column, which load_dataset drops if it only numbers the rows
        n_index = df.index.nlevels
        df = df.reset_index()
        df.columns = [f"Unnamed: {i}" for i in range(n_index)] + list(df.columns[n_index:])
    df.columns = [str(c).strip() for c in df.columns]
    if df.columns.duplicated().any():  # names equal once stripped, or a row-name column meeting "Unnamed: 0"
        dups = sorted(set(df.columns[df.columns.duplicated()]))
        raise DataError(
            f"{name}: duplicate column name(s) {', '.join(map(repr, dups[:MAX_SHOWN]))}; rename them so each "
            "column has its own name"
        )
    if len(df) and _header_looks_like_data(header, df):
        _no_header(header, sep, name)
    if len(df) == 0:
        raise DataError(f"{name}: has a header but no data rows")
    if limits.rows is not None and len(df) > limits.rows:
        raise limits.too_large(name, f"more than {limits.rows:,} rows")
    notices = _read_comma_numbers(df, sep)
    if notices:
        df.attrs["notices"] = notices
    return df


def _no_header(header: list[str], sep: str, name: str):
    shown = sep.join(header[:20])
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise DataError(
        f"{name}: the file seems to have no header row: its first line ({shown!r}) looks like data. "
        "Add a first line naming the columns"
    )


def _is_number_text(v: str) -> bool:
    try:
        return np.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _header_looks_like_data(header: list[str], df: pd.DataFrame) -> bool:
    """Whether the first line is a data row: some cells are numbers in numeric columns and every other
    cell is a value its column holds.  ``0,1,...`` or ``1,2,...`` (pandas' default names) count as names."""
    if len(header) != df.shape[1] or not header:
        return False
    numeric = [_is_number_text(h) for h in header]
    if not any(numeric):
        return False
    if all(numeric) and [h.lstrip("+") for h in header] in (
        [str(i) for i in range(len(header))],
        [str(i + 1) for i in range(len(header))],
    ):
        return False
    for h, is_num, col in zip(header, numeric, df.columns):
        s = df[col].dropna()
        if s.empty:
            return False
        if is_num:
            if pd.to_numeric(s, errors="coerce").notna().mean() < 0.8:
                return False
        elif h not in set(s.astype(str).str.strip()):
            return False
    return True


_DECIMAL_COMMA = re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+|\d*),\d+(?:[eE][+-]?\d+)?")
_THOUSANDS_COMMA = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_INTEGER = re.compile(r"[+-]?\d+(?:[eE][+-]?\d+)?")


def _read_comma_numbers(df: pd.DataFrame, sep: str) -> list[str]:
    """Convert text columns of numbers written with a comma (``-1,18``; quoted ``"1,234"`` in a comma file)
    to floats, in place; returns the notices saying so."""
    decimal, thousands = [], []
    for c in df.columns:
        s = df[c]
        if not (pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype)):
            continue
        values = s.astype(object).to_numpy(copy=True)
        present = np.flatnonzero(~pd.isna(values))
        text = pd.Series(values[present], dtype=object).astype(str).str.strip()  # positions 0.. of present
        if text.empty or not text.str.contains(",", regex=False).any():
            continue
        comma = text[text.str.contains(",", regex=False)]
        as_thousands = sep == "," and bool(comma.str.fullmatch(_THOUSANDS_COMMA).all())
        pattern = _THOUSANDS_COMMA if as_thousands else _DECIMAL_COMMA
        ok = text.str.fullmatch(pattern) | text.str.fullmatch(_INTEGER)
        if ok.mean() < 0.8:
            continue
        if as_thousands:
            fixed = text[ok].str.replace(",", "", regex=False)
            thousands.append((c, comma.iloc[0]))
        else:
            fixed = text[ok].str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
            decimal.append((c, comma.iloc[0]))
        values[present[ok.to_numpy()]] = pd.to_numeric(fixed).to_numpy()
        new = pd.Series(values, index=s.index, name=s.name)
        df[c] = pd.to_numeric(new) if ok.all() else new
    notices = []
    if decimal:
        c, ex = decimal[0]
        notices.append(
            f"read decimal commas as numbers in column(s) {', '.join(repr(c) for c, _ in decimal)} "
            f"(e.g. {ex!r} in {c!r} as {float(ex.replace('.', '').replace(',', '.')):g})"
        )
    if thousands:
        c, ex = thousands[0]
        notices.append(
            f"read thousands separators in column(s) {', '.join(repr(c) for c, _ in thousands)} "
            f"(e.g. {ex!r} in {c!r} as {float(ex.replace(',', '')):g})"
        )
    return notices


def _sep_name(sep: str) -> str:
    return {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe", " ": "space"}.get(sep, repr(sep))


def _pick_target(df: pd.DataFrame, target, name: str) -> str:
    cols = list(df.columns)
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if not -len(cols) <= target < len(cols):
            raise DataError(f"{name}: target column index {target} out of range (0..{len(cols) - 1})")
        return cols[target]
    if str(target) not in cols:
        shown = ", ".join(map(repr, cols[:20])) + (" ..." if len(cols) > 20 else "")
        raise DataError(f"{name}: unknown target column {target!r}; columns are {shown}")
    return str(target)


# -- columns ---------------------------------------------------------------------------------------------


def _column_list(categorical, name: str) -> list[str]:
    """``categorical`` as a list of names: one name alone is one column, not its characters."""
    if categorical is None:
        return []
    if isinstance(categorical, str):
        return [categorical]
    try:
        names = list(categorical)
    except TypeError:
        raise DataError(
            f"{name}: categorical must be a list of column names, got {type(categorical).__name__}"
        ) from None
    bad = [c for c in names if not isinstance(c, str)]
    if bad:
        raise DataError(f"{name}: categorical must list column names (text), got {bad[0]!r}")
    return names


_NOT_SCALAR = (list, tuple, dict, set, frozenset, np.ndarray, pd.Series, pd.DataFrame)


def _check_cells(df: pd.DataFrame, name: str) -> None:
    """Refuse cells that hold containers (a list per row): a column holds one value per row."""
    for c in df.columns:
        s = df[c]
        if s.dtype != object:
            continue
        bad = s.map(lambda v: isinstance(v, _NOT_SCALAR)).to_numpy(dtype=bool)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            shown = repr(s.iloc[r])
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise DataError(
                f"{name}: column {c!r} holds {type(s.iloc[r]).__name__} values (row {r + 1}: {shown}); "
                "a column must hold one number or one category per row: split it into columns"
            )


def _usable_column(s: pd.Series, col: str, name: str, categorical: bool, notices: list[str]) -> pd.Series:
    """A feature column a tree can split on: durations become seconds and complex numbers with no imaginary
    part their real part (with a notice); dates and true complex numbers are refused, saying what to do."""
    dtype = s.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        if categorical:
            return s.astype(str)
        raise DataError(
            f"{name}: column {col!r} holds dates/times; a tree cannot split on them as they are: convert them "
            "to numbers (e.g. year, day of year, days since a date) or declare the column categorical"
        )
    if pd.api.types.is_timedelta64_dtype(dtype):
        if categorical:
            return s.astype(str)
        notices.append(f"column {col!r} holds durations: read as seconds")
        return s.dt.total_seconds()
    if pd.api.types.is_complex_dtype(dtype):
        if np.any(np.imag(s.to_numpy()) != 0):
            raise DataError(
                f"{name}: column {col!r} holds complex numbers; split it into real and imaginary columns "
                "(or their modulus and angle)"
            )
        notices.append(f"column {col!r} holds complex numbers with no imaginary part: read their real part")
        return pd.Series(np.real(s.to_numpy()), index=s.index, name=s.name)
    if pd.api.types.is_object_dtype(dtype):
        return _uniform_labels(s, col, "category", notices)
    return s


def _label_kind(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(v, str):
        return "text"
    return type(v).__name__


def _label_text(v) -> str:
    """Canonical text of a value: ``1``, ``1.0`` and ``"1"`` all read ``"1"``."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        return str(v).strip()
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def _uniform_labels(s: pd.Series, col: str, kind: str, notices: list[str]) -> pd.Series:
    """Values of one type: a column mixing numbers, text, booleans ... is read as text, with a notice,
    so ``1``, ``1.0`` and ``"1"`` are one label instead of some merging and some not."""
    if s.dtype != object:
        return s
    values = s.dropna()
    kinds = {_label_kind(v) for v in values.iloc[:100000]}
    if len(kinds) <= 1:
        return s
    examples = []
    for k in sorted(kinds):
        examples.append(next(repr(v) for v in values if _label_kind(v) == k))
    notices.append(
        f"column {col!r} mixes {', '.join(sorted(kinds))} values ({', '.join(examples)}): every {kind} is read "
        "as text, so 1, 1.0 and '1' are the same"
    )
    return s.map(lambda v: v if v is None or (isinstance(v, float) and v != v) else _label_text(v))


def _looks_numeric(s: pd.Series) -> bool:
    """Numeric dtype, or text where most values parse as numbers (then stray text is an error, not a category)."""
    if pd.api.types.is_bool_dtype(s) or isinstance(s.dtype, pd.CategoricalDtype):
        return False
    if pd.api.types.is_numeric_dtype(s):
        return True
    parsed = pd.to_numeric(s, errors="coerce")
    return bool(parsed.notna().mean() >= 0.8)


def _numeric(s: pd.Series, col: str, where: str) -> np.ndarray:
    parsed = pd.to_numeric(s, errors="coerce")
    bad = parsed.isna().to_numpy() & s.notna().to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        shown = ", ".join(f"row {s.index[r] + 1} ({s.iloc[r]!r})" for r in rows[:MAX_SHOWN])
        marks = {str(v).strip() for v in s.iloc[rows]}
        hint = ""
        if len(marks) == 1:  # one text everywhere ("?", "NA "): most likely a gap marker
            m = marks.pop()
            hint = f"; if {m!r} means a missing value, declare it (na_values=[{m!r}], CLI --na-values {m!r})"
        raise DataError(
            f"{where}: non-numeric text in numeric column {col!r}: {shown}"
            f"{' ...' if len(rows) > MAX_SHOWN else ''} ({len(rows)} row(s); rows counted from 1 "
            f"after the header). Fix those values, or declare the column categorical{hint}"
        )
    x = parsed.to_numpy(dtype=np.float64)
    inf = np.isinf(x)  # a missing value (NaN) is kept: each split learns where it goes
    if inf.any():
        rows = np.flatnonzero(inf)
        raise DataError(
            f"{where}: infinite values in column {col!r} at row(s) "
            f"{', '.join(str(s.index[r] + 1) for r in rows[:MAX_SHOWN])}"
            f"{' ...' if len(rows) > MAX_SHOWN else ''}"
            f" ({len(rows)} in all); replace or drop them"
        )
    return x


def _categories(s: pd.Series) -> tuple:
    if isinstance(s.dtype, pd.CategoricalDtype):
        used = set(s.dropna().unique())
        return tuple(_py(c) for c in s.cat.categories if c in used)
    vals = [_py(v) for v in pd.unique(s.dropna())]
    try:
        return tuple(sorted(vals))
    except TypeError:  # mixed types: order by text, keep the values
        return tuple(sorted(vals, key=str))


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _codes(s: pd.Series, cats: tuple, col: str, where: str, kind: str = "category") -> np.ndarray:
    index = {c: i for i, c in enumerate(cats)}
    by_text = {_label_text(c): i for i, c in enumerate(cats)}  # 1, 1.0 and "1" alike
    # Look each distinct value up once (a million-row target has a handful), then broadcast by position.
    inverse, uniques = pd.factorize(s, use_na_sentinel=True)
    mapped = np.empty(len(uniques) + 1, dtype=np.float64)
    mapped[-1] = np.nan  # factorize's sentinel: a missing value (NaN, the encoded matrix's gap)
    for u, v in enumerate(uniques):
        v = _py(v)
        i = index.get(v)
        mapped[u] = by_text.get(_label_text(v), -1) if i is None else i
    out = mapped[inverse]
    bad = np.flatnonzero(out < 0)
    if len(bad):
        r = int(bad[0])
        v = _py(s.iloc[r])
        raise DataError(
            f"{where}: unknown {kind} {v!r} in column {col!r} at row {r + 1}; known: "
            f"{', '.join(map(str, cats[:10]))}{' ...' if len(cats) > 10 else ''}"
        )
    return out


def _check_missing(df: pd.DataFrame, where: str) -> None:
    miss = df.isna().sum()
    if miss.any():
        cols = ", ".join(f"{c!r} ({n} rows)" for c, n in miss[miss > 0].items())
        raise DataError(f"{where}: missing values in {cols}")
