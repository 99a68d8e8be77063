"""Which column is the target when nobody said: one rule for the library, the CLI, the app and the notebook.

The rule, in order:

1. a column whose name says it is the class (``target``, ``label``, ``class``, ``species``, ``survived``, ...),
   among those that hold plausible classes; the more specific names win (``survived`` over ``class``);
2. else a text (or boolean) column with few classes, the last such column;
3. else a whole-number column with few values, the last one;
4. else the last column (loading then says why it cannot be a target).

A column that looks like a year, a date, a time or a row id is never guessed.  The guess says why it took the
column and which other columns were plausible (``ambiguous``), so the app can ask and every entry point can say
what it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from treeexplorer.columns import ID_NAME_WORDS, identifier_reason, name_words

__all__ = ["TARGET_HELP", "TargetGuess", "guess_target", "looks_like_classes", "many_classes_limit"]

# Names that say "this is the class column", most specific first: a table with both `survived` and `class`
# (titanic) has the passenger class as a feature.
TARGET_NAMES = (
    "target",
    "label",
    "labels",
    "y",
    "outcome",
    "survived",
    "diagnosis",
    "species",
    "churn",
    "response",
    "class_label",
    "classification",
    "class",
    "classes",
    "category",
)
TARGET_HELP = (
    "target column (default: guessed: a column named like species, label or class, else the last text column "
    "with few values; never a year, date or id)"
)
_NAME_RANK = {n: i for i, n in enumerate(TARGET_NAMES)}
_NOT_TARGET_WORDS = {"year", "yr", "date", "time", "timestamp", "datetime", "month", "day", *ID_NAME_WORDS}


def many_classes_limit(n_rows: int) -> int:
    """Most distinct target values accepted without ``allow_many_classes``: max(20, 5 % of rows)."""
    return max(20, int(0.05 * n_rows))


def looks_like_classes(s: pd.Series) -> bool:
    """A plausible class column: few distinct values, and not non-integer floats."""
    v = s.dropna()
    try:
        if v.nunique() > many_classes_limit(len(s)):
            return False
    except TypeError:  # unhashable cells (lists): not classes; loading says what is wrong with them
        return False
    if pd.api.types.is_float_dtype(v):
        x = v.to_numpy(dtype=float)
        if not np.all(np.isfinite(x)) or not np.all(np.mod(x, 1) == 0):
            return False
    return True


@dataclass(frozen=True)
class TargetGuess:
    """The column taken as the target when none was given, and why.

    Attributes
    ----------
    column : str
        The column taken.
    reason : str
        Why, in words for the person reading (e.g. "its name says it holds the classes").
    alternatives : tuple of str
        Other columns that were plausible targets; non-empty means the guess was a close call.
    """

    column: str
    reason: str
    alternatives: tuple[str, ...] = field(default=())

    @property
    def ambiguous(self) -> bool:
        """True when other columns were about as plausible."""
        return bool(self.alternatives)

    def describe(self) -> str:
        """One sentence: which column, why, and the other candidates."""
        text = f"target {self.column!r} (guessed: {self.reason})"
        if self.alternatives:
            shown = ", ".join(map(repr, self.alternatives[:5])) + (" ..." if len(self.alternatives) > 5 else "")
            text += f"; {shown} could also be the target"
        return text


def _name_rank(name: str) -> int | None:
    key = "_".join(name_words(name))
    if key in _NAME_RANK:
        return _NAME_RANK[key]
    return None


def _is_text(s: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(s) or isinstance(s.dtype, pd.CategoricalDtype):
        return True
    if not (s.dtype == object or pd.api.types.is_string_dtype(s)):
        return False
    parsed = pd.to_numeric(s.dropna(), errors="coerce")
    return bool(parsed.notna().mean() < 0.8) if len(parsed) else False


def _looks_temporal_or_id(name: str, s: pd.Series) -> bool:
    """Years, dates, times and row ids: never a target by guess."""
    words = set(name_words(name))
    if words & _NOT_TARGET_WORDS:
        return True
    if pd.api.types.is_datetime64_any_dtype(s) or isinstance(s.dtype, pd.PeriodDtype):
        return True
    v = s.dropna()
    if pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v) and len(v):
        x = v.to_numpy(dtype=float)
        if np.all(np.mod(x, 1) == 0) and x.min() >= 1800 and x.max() <= 2200:
            return True  # whole numbers that all read as years
        if len(v) >= 20 and v.nunique() == len(v):
            return True  # every row its own number: an id
    return identifier_reason(name, s) is not None  # the loader's rule: a column it leaves out is no target


def guess_target(df: pd.DataFrame) -> TargetGuess:
    """Choose the target column of a table nobody named one for.

    Parameters
    ----------
    df : DataFrame
        The table, columns named as they will be shown.

    Returns
    -------
    TargetGuess
        The column, the reason, and the other plausible columns.
    """
    cols = [str(c) for c in df.columns]
    if not cols:
        raise ValueError("a table without columns has no target")
    series = {c: df.iloc[:, i] for i, c in enumerate(cols)}
    usable = [c for c in cols if looks_like_classes(series[c]) and not _looks_temporal_or_id(c, series[c])]
    usable_set = set(usable)  # membership in a set: linear in the columns (a list made 30,000 columns quadratic)

    named = sorted((r, -i, c) for i, c in enumerate(cols) if c in usable_set and (r := _name_rank(c)) is not None)
    if named:
        best = named[0][2]
        others = tuple(c for _, _, c in named[1:])
        return TargetGuess(best, "its name says it holds the classes", others)

    def last_first(names: list[str]) -> list[str]:
        # the last column first, but a column with a single value (no classes to learn) after the others
        return sorted(reversed(names), key=lambda c: series[c].nunique(dropna=True) < 2)

    text = last_first([c for c in usable if _is_text(series[c])])
    if text:
        return TargetGuess(text[0], "the last text column with few distinct values", tuple(text[1:]))
    text_set = set(text)
    whole = last_first([c for c in usable if c not in text_set])
    if whole:
        return TargetGuess(whole[0], "the last column of whole numbers with few distinct values", tuple(whole[1:]))
    return TargetGuess(cols[-1], "the last column (no column looks like classes)")
