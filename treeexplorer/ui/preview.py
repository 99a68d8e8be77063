"""A dataset preview before running: columns, types, missing values, class balance."""

from __future__ import annotations

import numpy as np

from treeexplorer.data import Dataset
from treeexplorer.textsafe import md

__all__ = ["preview_markdown"]


def _num(v: float) -> str:
    return f"{v:.4g}"


def preview_markdown(
    ds: Dataset, missing_by_column: dict | None = None, max_columns: int = 40, dropped: int = 0
) -> str:
    """Markdown for the loaded table: one row per feature column, then the target's class balance.

    Parameters
    ----------
    ds : Dataset
        The table as loaded (after any rows with missing values were dropped).
    missing_by_column : dict, optional
        Missing values per column in the file (``treeexplorer.data.count_missing_rows``).
    max_columns : int
        Columns listed (a wide table says how many more there are).
    dropped : int
        Rows dropped for their missing values: the table shown has none left, the file's counts are named.
    """
    in_file = missing_by_column or {}
    missing = {} if dropped else in_file
    lines = [f"**{md(ds.name)}**: {ds.n_rows:,} rows, {len(ds.schema.columns)} feature columns"]
    if dropped:
        where = ", ".join(f"{md(k)} {n:,}" for k, n in in_file.items() if n)
        lines.append(f"\n{dropped:,} rows with missing values dropped (in the file: {where}); none are left.")
    lines += [
        "",
        "| column | type | distinct | values | missing |",
        "|---|---|---:|---|---:|",
    ]
    for j, col in enumerate(ds.schema.columns[:max_columns]):
        x = ds.X[:, j]
        distinct = int(np.unique(x).shape[0]) if x.size else 0
        if col.kind == "categorical":
            cats = [md(c) for c in (col.categories or ())]
            shown = ", ".join(cats[:4]) + (f", … ({len(cats)})" if len(cats) > 4 else "")
            kind = "categorical"
        else:
            shown = f"{_num(float(x.min()))} … {_num(float(x.max()))}" if x.size else ""
            kind = "numeric"
        lines.append(f"| {md(col.name)} | {kind} | {distinct:,} | {shown} | {missing.get(col.name, 0):,} |")
    if len(ds.schema.columns) > max_columns:
        lines.append(f"| … {len(ds.schema.columns) - max_columns} more | | | | |")
    counts = np.bincount(ds.y, minlength=len(ds.schema.classes)) if ds.n_rows else np.zeros(0, dtype=int)
    total = max(int(counts.sum()), 1)
    order = np.argsort(-counts, kind="stable")
    balance = ", ".join(f"{md(ds.schema.classes[k])} {int(counts[k]):,} ({counts[k] / total:.0%})" for k in order[:8])
    more = f", … {len(order) - 8} more classes" if len(order) > 8 else ""
    target_missing = 0 if dropped else missing.get(ds.schema.target, 0)
    unlabelled = f"; {target_missing:,} rows without a label in the file" if target_missing else ""
    lines += ["", f"**Classes** ({md(ds.schema.target)}): {balance}{more}{unlabelled}"]
    return "\n".join(lines)
