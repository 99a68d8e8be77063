"""Which columns a run learns from: the user's choice (``features=`` / ``exclude=``), and the columns that name
the rows rather than describe them, left out by default.

One rule says what looks like a row identifier (:func:`identifier_reason`); the loader leaves such columns out
and the default-target guess (:mod:`treeexplorer.target`) never takes one.  A column is an identifier when

1. its name says so (``ID``, ``PassengerId``, ``patient_id``, ``name``, ``first_name``, ``index``, an unnamed
   ``Unnamed: 0``) and it holds a distinct value in at least half of the rows (a ``site_id`` with three values
   is a real category); or
2. it numbers the rows: whole numbers, one per row, consecutive (``0..n-1``, ``1..n`` or shuffled), 20+ rows,
   or a leading unnamed column doing so in any table; or
3. (100+ rows) whole numbers all distinct, or text with a distinct value in 95 % of the rows.

Measurements that happen to be unique (non-integer floats: weights, lengths) are never identifiers by content.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "ID_NAME_WORDS",
    "ID_MIN_ROWS",
    "name_words",
    "identifier_reason",
    "identifier_columns",
    "choose_columns",
    "column_summary",
    "check_column_list",
]

ID_MIN_ROWS = 100  # below this, all-distinct columns are common and harmless (unless named or numbering rows)
ID_DISTINCT_SHARE = 0.95  # text with a distinct value in at least this share of rows looks like IDs
ID_NAMED_SHARE = 0.5  # a column named like an id is one when at least this share of its values are distinct
ROW_NUMBER_MIN_ROWS = 20  # consecutive whole numbers in fewer rows may be a real feature
ID_LAST_WORDS = frozenset({"id", "name"})  # ID, PassengerId, patient_id, Name, first_name
ID_WHOLE_NAMES = frozenset(
    {"index", "idx", "rowname", "rownames", "row_names", "row_id", "row_number", "rownum", "uuid", "guid"}
)
ID_NAME_WORDS = frozenset({"id", "index", "idx"})  # a word that keeps a column from being the guessed target
_UNNAMED = re.compile(r"Unnamed: \d+")


def name_words(name) -> list[str]:
    """The words of a column name, lower case: ``"SurvivedFlag"`` -> ``["survived", "flag"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def _named_like_id(name: str) -> bool:
    words = name_words(name)
    return bool(_UNNAMED.fullmatch(str(name))) or (
        bool(words) and (words[-1] in ID_LAST_WORDS or "_".join(words) in ID_WHOLE_NAMES)
    )


def _whole_numbers(v: pd.Series) -> np.ndarray | None:
    """The values as floats when they are all finite whole numbers (ints, or floats like 3.0), else None."""
    if pd.api.types.is_bool_dtype(v) or not pd.api.types.is_numeric_dtype(v) or not len(v):
        return None
    x = v.to_numpy(dtype=float)
    return x if np.all(np.isfinite(x)) and np.all(np.mod(x, 1) == 0) else None


def _is_text(v: pd.Series) -> bool:
    if not (v.dtype == object or pd.api.types.is_string_dtype(v) or isinstance(v.dtype, pd.CategoricalDtype)):
        return False
    return bool(len(v)) and bool(pd.to_numeric(v, errors="coerce").isna().mean() > 0.2)


def identifier_reason(name, s: pd.Series, *, leading: bool = False) -> str | None:
    """Why column ``name`` (values ``s``) looks like a row identifier, in words; None when it does not.

    ``leading``: the table's first column (an unnamed first column numbering the rows is the index
    ``DataFrame.to_csv`` or R's ``write.csv`` wrote, whatever the table's size).
    """
    n = len(s)
    v = s.dropna()
    if n < 2 or not len(v):
        return None
    try:
        distinct = int(v.nunique())
    except TypeError:  # unhashable cells: the loader refuses them with its own message
        return None
    whole = _whole_numbers(v)
    if whole is not None and distinct == n == len(v) and whole.max() - whole.min() == n - 1:
        if n >= ROW_NUMBER_MIN_ROWS or (leading and _UNNAMED.fullmatch(str(name))):
            return "it numbers the rows"
    if _named_like_id(name) and distinct >= ID_NAMED_SHARE * n:
        return "named like an identifier, a distinct value in most rows"
    if n >= ID_MIN_ROWS:
        if pd.api.types.is_integer_dtype(v) and not pd.api.types.is_bool_dtype(v) and distinct == n:
            return "a distinct whole number in every row"
        if _is_text(v) and distinct >= ID_DISTINCT_SHARE * n:
            return "a distinct value in almost every row"
    elif _is_text(v) and distinct == n >= ROW_NUMBER_MIN_ROWS:
        return "a distinct value in every row"
    return None


def identifier_columns(df: pd.DataFrame, target=None, keep: Sequence[str] = ()) -> dict[str, str]:
    """``{column: reason}`` for the columns of ``df`` that look like row identifiers (not ``target`` nor
    ``keep``), in the table's order."""
    out = {}
    for i, c in enumerate(df.columns):
        if c == target or c in keep:
            continue
        reason = identifier_reason(c, df.iloc[:, i], leading=i == 0)
        if reason is not None:
            out[str(c)] = reason
    return out


def check_column_list(value, what: str) -> list[str] | None:
    """``features=`` / ``exclude=`` as a list of names (None stays None), refusing anything else in one line."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    try:
        names = list(value)
    except TypeError:
        raise ValueError(f"{what} must be a list of column names, got {type(value).__name__}") from None
    bad = [c for c in names if not isinstance(c, str)]
    if bad:
        raise ValueError(f"{what} must list column names (text), got {bad[0]!r}")
    return names


def choose_columns(
    df: pd.DataFrame,
    target: str,
    *,
    features=None,
    exclude=None,
    keep: Sequence[str] = (),
    name: str = "data",
    notices: list[str] | None = None,
) -> pd.DataFrame:
    """The table with only the columns a run learns from (and the target), in the table's order.

    Parameters
    ----------
    df : DataFrame
        The table (column names as text).
    target : str
        The target column: always kept.
    features : list of str, optional
        The feature columns to use, exactly (identifier-like columns listed here are kept).  Default: every
        column but the identifier-like ones.
    exclude : list of str, optional
        Columns to leave out as well.
    keep : list of str
        Columns never left out as identifiers (the user listed them, e.g. as categorical).
    name : str
        The table's name, for messages.
    notices : list of str, optional
        Receives one line naming the identifier-like columns left out and how to keep them.

    Raises
    ------
    ValueError
        Naming an unknown column, the target listed as a feature to leave out, or no feature left.
    """
    features, exclude = check_column_list(features, "features"), check_column_list(exclude, "exclude") or []
    columns = [str(c) for c in df.columns]
    for what, names in (("features", features or []), ("exclude", exclude)):
        unknown = [c for c in names if c not in columns]
        if unknown:
            shown = ", ".join(map(repr, columns[:12])) + (" ..." if len(columns) > 12 else "")
            raise ValueError(f"{name}: {what} names {unknown[0]!r}, which is not a column; the columns are {shown}")
    if target in exclude:
        raise ValueError(f"{name}: exclude names the target column {target!r}; choose another target instead")
    if features is not None:
        chosen = [c for c in columns if c != target and c in features and c not in exclude]
    else:
        ids = identifier_columns(df, target, keep=keep)
        rest = [c for c in columns if c != target and c not in ids]
        if ids and rest:  # an id column is left out only when something is left to learn from
            if notices is not None:
                said = ", ".join(f"{c!r} ({why})" for c, why in ids.items())
                notices.append(
                    f"left out {len(ids)} ID-like column(s), which name the rows rather than describe them: "
                    f"{said}; to use one, list it in features= (CLI --features; the app: Columns)"
                )
        else:
            rest = [c for c in columns if c != target]
        chosen = [c for c in rest if c not in exclude]
    if not chosen:
        raise ValueError(f"{name}: no feature column left to learn from; keep at least one column besides {target!r}")
    return df[[c for c in columns if c in chosen or c == target]]


def column_summary(df: pd.DataFrame, target=None) -> list[dict]:
    """One dict per column: ``name``, ``kind`` (number / whole number / text / yes-no), ``distinct`` and the
    ``identifier`` reason (or None): what the app's Columns control lists."""
    out = []
    for i, c in enumerate(df.columns):
        s = df.iloc[:, i]
        v = s.dropna()
        if pd.api.types.is_bool_dtype(v):
            kind = "yes/no"
        elif _whole_numbers(v) is not None:
            kind = "whole number"
        elif pd.api.types.is_numeric_dtype(v):
            kind = "number"
        else:
            kind = "text"
        try:
            distinct = int(v.nunique())
        except TypeError:
            distinct = -1
        reason = None if c == target else identifier_reason(c, s, leading=i == 0)
        out.append({"name": str(c), "kind": kind, "distinct": distinct, "identifier": reason})
    return out
