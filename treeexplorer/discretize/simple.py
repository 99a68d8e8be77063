"""Unsupervised discretizers: ``none``, ``exact`` (all thresholds), ``quantile`` and ``uniform``.

Tests come column by column, thresholds ascending.  Binary, categorical and constant columns are handled as
described in :mod:`treeexplorer.discretize._common`.
"""

from __future__ import annotations

import numpy as np

from treeexplorer.discretize._common import ColumnSummary, midpoints
from treeexplorer.schema import OP_LE, Condition, Schema

__all__ = [
    "fixed_conditions",
    "none_conditions",
    "exact_thresholds",
    "quantile_thresholds",
    "uniform_thresholds",
    "binned_conditions",
]

MAX_SHOWN = 5  # columns named in an error message


def fixed_conditions(s: ColumnSummary) -> list[Condition]:
    """The tests of a binary or one-hot column."""
    return [Condition(s.index, op, v) for op, v in s.fixed_tests()]


def none_conditions(summaries: list[ColumnSummary], schema: Schema) -> list[Condition]:
    """No thresholds: 0/1 columns become tests as they are and categorical columns their one-hot tests (one
    per category: what multiway splits need); a numeric column with other values is an error naming it."""
    bad = [s for s in summaries if s.role == "numeric"]
    if bad:
        shown = ", ".join(
            f"{schema.columns[s.index].name!r} ({_why_not_binary(schema.columns[s.index], s)})" for s in bad[:MAX_SHOWN]
        )
        more = f" ... ({len(bad)} columns in all)" if len(bad) > MAX_SHOWN else ""
        raise ValueError(
            f"discretizer 'none' needs 0/1 or categorical columns; not binary: "
            f"{shown}{more}. Pick a discretizer (mid, mdlp, quantile, uniform, exact)"
        )
    out = []
    for s in summaries:
        out += fixed_conditions(s)
    return out


def _why_not_binary(col, s: ColumnSummary) -> str:
    if col.is_categorical:
        return f"{len(col.categories or ())} categories"
    shown = ", ".join(f"{v:g}" for v in s.values[:3]) + (" ..." if s.values.shape[0] > 3 else "")
    return f"values {shown}"


def exact_thresholds(s: ColumnSummary) -> np.ndarray:
    """Every midpoint between consecutive distinct values: optimal over these is optimal over all
    axis-aligned splits of the training rows."""
    return midpoints(s.values)


def quantile_thresholds(s: ColumnSummary, n_bins: int) -> np.ndarray:
    """Thresholds after the ``i/(n_bins+1)`` quantiles (``i = 1..n_bins``) of the training rows.

    The quantile is the value below which (inclusive) a fraction ``i/(n_bins+1)`` of the rows lie; the
    threshold is the midpoint from it to the next distinct value, so ties collapse (deduplicated) and a
    quantile at the maximum gives no test.
    """
    counts = s.counts.sum(axis=1)
    cum = np.cumsum(counts)
    n = cum[-1]
    levels = np.arange(1, n_bins + 1) / (n_bins + 1)
    # first distinct value whose cumulative count reaches the level
    idx = np.searchsorted(cum, levels * n - 1e-9 * n, side="left")
    idx = np.unique(idx[idx < s.values.shape[0] - 1])
    return midpoints(s.values)[idx]


def uniform_thresholds(s: ColumnSummary, n_bins: int) -> np.ndarray:
    """Equal-width thresholds ``min + i (max - min) / (n_bins + 1)``, ``i = 1..n_bins``.

    Thresholds that fall between the same two consecutive training values split the rows identically; only
    the first of them is kept (deduplicated).
    """
    lo, hi = s.values[0], s.values[-1]
    f = np.arange(1, n_bins + 1) / (n_bins + 1)
    t = lo * (1.0 - f) + hi * f  # never beyond max(|lo|, |hi|): hi - lo overflows for values near ±1e308
    gap = np.searchsorted(s.values, t, side="right")  # distinct values <= t
    _, first = np.unique(gap, return_index=True)
    t = t[first]
    return t[(t >= lo) & (t < hi)]


def binned_conditions(
    summaries: list[ColumnSummary], schema: Schema, method: str, n_bins: int, notices: list[str], explicit: bool = True
) -> list[Condition]:
    """Quantile or uniform tests for every column; checks ``n_bins`` against the distinct thresholds.

    An ``n_bins`` the user asked for (``explicit``) that no column can give is an error; the default is
    lowered to what the richest column has, with a notice (small ordinal tables such as monks-1).
    """
    numeric = [s for s in summaries if s.role == "numeric"]
    if numeric:
        most = max(numeric, key=lambda s: s.values.shape[0])
        n_most = most.values.shape[0] - 1
        if n_bins > n_most and not explicit and n_most >= 1:
            notices.append(
                f"{method}: default n_bins={n_bins} lowered to {n_most}, the most distinct thresholds "
                f"of any numeric column (column {schema.columns[most.index].name!r})"
            )
            n_bins = n_most
        if n_bins > n_most:
            raise ValueError(
                f"n_bins={n_bins} thresholds per feature, but no numeric column has that many distinct "
                f"thresholds: the most is {n_most} (column {schema.columns[most.index].name!r}); "
                f"use n_bins <= {n_most}, or the 'exact' discretizer for every threshold"
            )
    fn = quantile_thresholds if method == "quantile" else uniform_thresholds
    out, short = [], []
    for s in summaries:
        if s.role != "numeric":
            out += fixed_conditions(s)
            continue
        t = fn(s, n_bins)
        if t.shape[0] < n_bins:
            short.append(f"{schema.columns[s.index].name!r} ({t.shape[0]})")
        out += [Condition(s.index, OP_LE, float(v)) for v in t]
    if short:
        notices.append(
            f"{method}: {len(short)} column(s) gave fewer than {n_bins} distinct thresholds (few "
            f"distinct values or ties): {', '.join(short)}"
        )
    return out
