"""Loading tables: CSV/TSV/Parquet files, DataFrames and bundled datasets, with clear errors.

A loaded :class:`Dataset` holds the encoded matrix ``X`` (numeric columns as they are, categorical columns
as codes, see :mod:`treeexplorer.schema`), class codes ``y`` and the :class:`~treeexplorer.schema.Schema`
that maps both back to the user's own names.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from treeexplorer.schema import Column, Schema

__all__ = ["DataError", "ManyClassesError", "Dataset", "load_dataset", "bundled_datasets", "ASSETS_DIR"]

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


def many_classes_limit(n_rows: int) -> int:
    """Most distinct target values accepted without ``allow_many_classes``: max(20, 5 % of rows)."""
    return max(20, int(0.05 * n_rows))


def _looks_categorical_target(s: pd.Series) -> bool:
    """A plausible class column: few distinct values, and not non-integer floats."""
    v = s.dropna()
    if v.nunique() > many_classes_limit(len(s)):
        return False
    if pd.api.types.is_float_dtype(v) and not np.all(np.mod(v.to_numpy(dtype=float), 1) == 0):
        return False
    return True


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
    """

    name: str
    schema: Schema
    X: np.ndarray
    y: np.ndarray
    notices: list[str] = field(default_factory=list)
    source_rows: np.ndarray | None = None

    def row_numbers(self) -> np.ndarray:
        """Row numbers as the loader's messages count them: from 1 after the header."""
        return (np.arange(self.n_rows) if self.source_rows is None else self.source_rows) + 1

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    def subset(self, rows) -> Dataset:
        source = np.arange(self.n_rows) if self.source_rows is None else self.source_rows
        return Dataset(self.name, self.schema, self.X[rows], self.y[rows], list(self.notices), source[rows])

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
        df = (data if isinstance(data, pd.DataFrame) else _read_any(data)).reset_index(drop=True)
        missing = [c.name for c in self.schema.columns if c.name not in df.columns]
        if missing:
            raise DataError(f"{what} lacks the column(s) {', '.join(map(repr, missing))} the model was trained on")
        X = np.empty((len(df), self.schema.n_features), dtype=np.float64)
        for j, col in enumerate(self.schema.columns):
            s = df[col.name]
            _check_missing(df[[col.name]], what)
            if col.is_categorical:
                X[:, j] = _codes(s, col.categories, col.name, what)
            else:
                X[:, j] = _numeric(s, col.name, what, strict=True)
        y = None
        if self.schema.target in df.columns:
            y = _codes(df[self.schema.target], self.schema.classes, self.schema.target, what, kind="class")
        return X, y


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
) -> Dataset:
    """Load and validate a classification table.

    Parameters
    ----------
    source : str, path or DataFrame
        A CSV/TSV/TXT file (delimiter sniffed, header expected), a Parquet file, a DataFrame, or the name
        of a bundled dataset (see :func:`bundled_datasets`).
    target : str or int, optional
        Target column name (or position); default: the last column that looks categorical.
    drop_missing : bool
        Drop rows with missing values instead of refusing them.
    categorical : sequence of str
        Columns to treat as categorical even if they hold numbers (e.g. integer-coded attributes).
    name : str, optional
        Name used in provenance.
    max_rows : int, optional
        Refuse larger tables (the app's upload cap).
    allow_many_classes : bool
        Accept a target with more than max(20, 5 % of rows) distinct values or non-integer floats
        (otherwise :class:`ManyClassesError`).

    Returns
    -------
    Dataset

    Raises
    ------
    DataError
        With a message naming the problem and where (file, column, rows) and what to do.
    """
    df, default_name = _resolve(source)
    df = df.reset_index(drop=True)  # index labels = data-row positions, kept when rows are dropped
    name = name or default_name
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
    target = _pick_target(df, target, name)
    if not allow_many_classes and not _looks_categorical_target(df[target]):
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
    notices = []
    miss = df.isna()
    if miss.to_numpy().any():
        if not drop_missing:
            per_col = miss.sum()
            cols = ", ".join(f"{c!r} ({n} row{'s' if n > 1 else ''})" for c, n in per_col[per_col > 0].items())
            n_rows = int(miss.any(axis=1).sum())
            raise DataError(
                f"{name}: missing values in {cols}; {n_rows} row(s) in all. Fill them, or drop "
                "those rows explicitly (drop_missing=True, CLI --drop-missing)"
            )
        keep = ~miss.any(axis=1)
        notices.append(f"dropped {int((~keep).sum())} row(s) with missing values")
        df = df.loc[keep]
        source_rows = np.flatnonzero(keep.to_numpy())
    else:
        source_rows = None
    if len(df) < 2:
        raise DataError(f"{name}: needs at least 2 rows, found {len(df)} (n_samples={len(df)})")
    categorical = set(categorical)
    unknown = categorical - set(df.columns)
    if unknown:
        raise DataError(f"{name}: categorical column(s) {', '.join(map(repr, sorted(unknown)))} not in the table")
    columns, X = [], np.empty((len(df), df.shape[1] - 1), dtype=np.float64)
    feats = [c for c in df.columns if c != target]
    for j, c in enumerate(feats):
        s = df[c]
        if c in categorical or not _looks_numeric(s):
            cats = _categories(s)
            columns.append(Column(c, "categorical", cats))
            X[:, j] = _codes(s, cats, c, name)
        else:
            columns.append(Column(c, "numeric"))
            X[:, j] = _numeric(s, c, name, strict=True)
    classes = _categories(df[target])
    if len(classes) < 2:
        raise DataError(
            f"{name}: the target column {target!r} has a single class ({classes[0]!r}); "
            "a classifier needs at least 2 classes"
        )
    y = _codes(df[target], classes, target, name, kind="class").astype(np.int64)
    schema = Schema(tuple(columns), target, classes)
    return Dataset(name, schema, X, y, notices, source_rows)


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
        raise TypeError("load_dataset got a Dataset; pass it to solve() directly")
    text = os.fspath(source)
    path = Path(text).expanduser()
    if path.is_file():
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
    if path.stat().st_size == 0:
        raise DataError(f"{path.name}: the file is empty")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises many types; all mean "not a readable Parquet file"
            raise DataError(f"{path.name}: not a readable Parquet file ({exc})") from None
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return read_text_table(text, path.name)


def read_text_table(text: str, name: str = "data") -> pd.DataFrame:
    """Parse CSV/TSV text with a sniffed delimiter and a header row (used for files and uploads)."""
    if not text.strip():
        raise DataError(f"{name}: the file is empty")
    sample = text[:65536]
    try:
        sep = csv.Sniffer().sniff(sample, delimiters=",;\t| ").delimiter
    except csv.Error:
        sep = "\t" if sample.count("\t") > sample.count(",") else ","
    header = next(csv.reader(io.StringIO(sample), delimiter=sep, skipinitialspace=sep == " "))
    header = [h.strip() for h in header]
    dups = sorted({h for h in header if header.count(h) > 1})
    if dups:
        raise DataError(
            f"{name}: duplicate column name(s) {', '.join(map(repr, dups))}; rename them so each "
            "column has its own name"
        )
    try:
        df = pd.read_csv(io.StringIO(text), sep=r"\s+" if sep == " " else sep, skipinitialspace=True)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"{name}: cannot parse as a {_sep_name(sep)}-separated table: {exc}") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{name}: the file is empty") from None
    df.columns = [str(c).strip() for c in df.columns]
    if len(df) == 0:
        raise DataError(f"{name}: has a header but no data rows")
    return df


def _sep_name(sep: str) -> str:
    return {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe", " ": "space"}.get(sep, repr(sep))


def _pick_target(df: pd.DataFrame, target, name: str) -> str:
    cols = list(df.columns)
    if target is None:  # the last column that looks like classes (else the last: the check then says why)
        return next((c for c in reversed(cols) if _looks_categorical_target(df[c])), cols[-1])
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if not -len(cols) <= target < len(cols):
            raise DataError(f"{name}: target column index {target} out of range (0..{len(cols) - 1})")
        return cols[target]
    if str(target) not in cols:
        shown = ", ".join(map(repr, cols[:20])) + (" ..." if len(cols) > 20 else "")
        raise DataError(f"{name}: unknown target column {target!r}; columns are {shown}")
    return str(target)


# -- columns ---------------------------------------------------------------------------------------------


def _looks_numeric(s: pd.Series) -> bool:
    """Numeric dtype, or text where most values parse as numbers (then stray text is an error, not a category)."""
    if pd.api.types.is_bool_dtype(s) or isinstance(s.dtype, pd.CategoricalDtype):
        return False
    if pd.api.types.is_numeric_dtype(s):
        return True
    parsed = pd.to_numeric(s, errors="coerce")
    return bool(parsed.notna().mean() >= 0.8)


def _numeric(s: pd.Series, col: str, where: str, strict: bool) -> np.ndarray:
    parsed = pd.to_numeric(s, errors="coerce")
    bad = parsed.isna().to_numpy() & s.notna().to_numpy()
    if bad.any():
        rows = np.flatnonzero(bad)
        shown = ", ".join(f"row {s.index[r] + 1} ({s.iloc[r]!r})" for r in rows[:MAX_SHOWN])
        raise DataError(
            f"{where}: non-numeric text in numeric column {col!r}: {shown}"
            f"{' ...' if len(rows) > MAX_SHOWN else ''} ({len(rows)} row(s); rows counted from 1 "
            "after the header). Fix those values, or declare the column categorical"
        )
    x = parsed.to_numpy(dtype=np.float64)
    inf = ~np.isfinite(x)
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
    by_text = {str(c): i for i, c in enumerate(cats)}
    # Look each distinct value up once (a million-row target has a handful), then broadcast by position.
    inverse, uniques = pd.factorize(s, use_na_sentinel=True)
    mapped = np.empty(len(uniques) + 1, dtype=np.float64)
    mapped[-1] = -1.0  # factorize's sentinel for a missing value: never a known category
    for u, v in enumerate(uniques):
        v = _py(v)
        i = index.get(v)
        mapped[u] = by_text.get(str(v), -1) if i is None else i
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
