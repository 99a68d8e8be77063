"""Explain a row: the path one row takes through the selected tree, highlighted, and the rule it fires.

The rule text comes from the rules export (:func:`treeexplorer.export.rules_lines`), so the explanation reads
exactly like the Rules tab and the exported ``.txt``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import panel as pn
import param

from treeexplorer.export import rules_lines
from treeexplorer.render.bokehview import TreeFigure, tree_path
from treeexplorer.textsafe import code_block, md
from treeexplorer.tree import Tree
from treeexplorer.ui.treeview import locked

__all__ = ["ExplainRow", "parse_values", "parse_row", "explain_row", "gap_notes", "row_index", "example_values"]

# What a typed value may say for a gap: ``bill_length_mm=missing`` (or ``=?``, ``=NA``, ``=``).
MISSING_WORDS = ("missing", "?", "na", "nan", "")


def parse_values(text: str, schema) -> np.ndarray:
    """An encoded feature vector from ``"petal_length=1.4, colour=red"`` (unnamed columns are NaN); see
    :func:`parse_row`."""
    return parse_row(text, schema)[0]


def parse_row(text: str, schema) -> tuple[np.ndarray, np.ndarray]:
    """``(row, given)``: the encoded feature vector of ``"petal_length=1.4, colour=red, sex=missing"`` and which
    columns the text names.  A gap is NaN, whether named (``=missing``, ``=?``, ``=NA`` or nothing) or not.

    Raises
    ------
    ValueError
        Naming the unknown column, the value that is not a number, or the unknown category (with the
        categories allowed).
    """
    row = np.full(schema.n_features, np.nan)
    given = np.zeros(schema.n_features, dtype=bool)
    names = {c.name: j for j, c in enumerate(schema.columns)}
    for part in filter(None, (p.strip() for p in text.replace(";", ",").split(","))):
        if "=" not in part:
            raise ValueError(f"write each value as column=value (got {part!r})")
        name, value = (t.strip() for t in part.split("=", 1))
        if name not in names:
            raise ValueError(f"no column {name!r}; the columns are {', '.join(names)}")
        col = schema.columns[names[name]]
        given[names[name]] = True
        if value.lower() in MISSING_WORDS:
            continue  # a gap, as the table's own missing values
        if col.is_categorical:
            cats = [str(c) for c in col.categories]
            if value not in cats:
                raise ValueError(f"column {name!r} has no category {value!r}; it has {', '.join(cats)}")
            row[names[name]] = cats.index(value)
        else:
            try:
                row[names[name]] = float(value)
            except ValueError:
                raise ValueError(f"column {name!r} is numeric: {value!r} is not a number") from None
            if not math.isfinite(row[names[name]]):
                raise ValueError(f"column {name!r}: give a finite number, not {value!r}")
    return row, given


def example_values(schema, dataset=None, n: int = 2) -> str:
    """A placeholder for the typed values: the first ``n`` columns of ``schema`` with the first row's values
    (``"bill_length_mm=39.1, island=Torgersen"``) when ``dataset`` is that table, else with ``…``."""
    same = dataset is not None and dataset.n_rows and dataset.schema.feature_names == schema.feature_names
    parts = []
    for j, col in enumerate(schema.columns[:n]):
        if not same:
            value = "…"
        elif col.is_categorical:
            value = str(col.categories[int(dataset.X[0, j])])
        else:
            value = f"{dataset.X[0, j]:g}"
        parts.append(f"{col.name}={value}")
    return ", ".join(parts)


def row_index(text, n_rows: int) -> int:
    """The row index typed in the Row field (``"5"``), checked against the table's ``n_rows`` rows."""
    words = f"give a row index from 0 to {n_rows - 1}"
    text = str(text if text is not None else "").strip()
    if not text.isdigit():
        raise ValueError(words + (f", not {text!r}" if text else ""))
    i = int(text)
    if not 0 <= i < n_rows:
        raise ValueError(f"{words}, not {i}")
    return i


def explain_row(tree: Tree, row: np.ndarray, given: np.ndarray | None = None) -> tuple[list[int], str]:
    """``(path, rule)`` for one encoded row: the nodes from the root to its leaf and that leaf's rule.

    A missing value (NaN) follows its side (see :class:`treeexplorer.Tree`; :func:`gap_notes` says which).
    ``given``: which columns typed values named; a column the path tests that they leave out raises
    ``ValueError`` naming it (a value forgotten, not a gap: type ``column=missing`` for that).
    """
    path = tree_path(tree, row)
    for k in path[:-1]:
        j = int(tree.column[k])
        if np.isnan(row[j]) and given is not None and not given[j]:
            raise ValueError(
                f"the path tests {tree.schema.columns[j].name!r}: give its value too (or "
                f"{tree.schema.columns[j].name}=missing)"
            )
    leaves = [leaf for leaf, _ in tree.paths()]
    return path, rules_lines(tree)[leaves.index(path[-1])]


def gap_notes(tree: Tree, path: list[int], row: np.ndarray) -> list[str]:
    """One line per test on ``path`` whose value the row lacks: which way the gap went and why."""
    out = []
    for k, child in zip(path[:-1], path[1:]):
        j = int(tree.column[k])
        if not np.isnan(row[j]):
            continue
        name = tree.schema.columns[j].name
        if tree.is_multi(k):
            out.append(f"{name} is missing: it took the branch most training rows took ({tree.edge_text(k, child)})")
            continue
        why = (
            "where the training rows with a gap went"
            if tree.shows_missing[k]
            else "the branch more training rows took (no training row there had a gap)"
        )
        side = tree.node_text(k, negate=child != tree.true_child[k])
        out.append(f"{name} is missing: it went to {side!r}, {why}")
    return out


class ExplainRow(pn.viewable.Viewer):
    """Pick a row (its index in the loaded table, or typed values) to highlight its path in the tree view.

    Parameters
    ----------
    controller : Controller
        Gives the selected tree and the loaded table.
    figure : TreeFigure
        The tree view the path is drawn in.
    run : callable, optional
        Runs a change of Bokeh models safely (the Explorer's ``_bokeh``); default: at once.
    """

    row = param.Integer(default=None, allow_None=True)

    def __init__(self, controller, figure: TreeFigure, run: Callable | None = None, **params):
        super().__init__(**params)
        self.controller, self.figure, self._run = controller, figure, locked(run)
        sw = {"sizing_mode": "stretch_width"}
        # a text field: its Enter explains (a number field has no Enter event); the text is read as a row index
        self.index_w = pn.widgets.TextInput(label="Row (0-based index in the loaded table)", placeholder="0", width=240)
        self.values_w = pn.widgets.TextInput(label="or type feature values", placeholder="", **sw)
        self.go_w = pn.widgets.Button(label="Explain", color="primary", width=100, align="end")
        self.clear_w = pn.widgets.Button(label="Clear", width=80, align="end")
        self.out = pn.pane.Markdown("Pick a row to see its path through the tree and the rule it fires.", **sw)
        self.go_w.on_click(lambda e: self.explain())
        self.clear_w.on_click(lambda e: self.clear())
        self.values_w.param.watch(lambda e: self.explain(), "enter_pressed")
        self.index_w.param.watch(lambda e: self.explain(), "enter_pressed")
        self._layout = pn.Column(
            pn.Row(self.index_w, self.values_w, self.go_w, self.clear_w, **sw), self.out, **sw, margin=0
        )

    def __panel__(self):
        return self._layout

    def follow(self, tree: Tree | None) -> None:
        """The selected tree changed (another tree, run or table): the placeholder names its columns, and an
        explanation (or refusal) of the previous tree goes."""
        before = getattr(self, "_tree", None)
        if tree is before:
            return
        self._tree = tree
        if tree is None or before is None or tree.schema.feature_names != before.schema.feature_names:
            self.index_w.value = self.values_w.value = ""  # typed for another table's columns and rows
        self.values_w.placeholder = example_values(tree.schema, self.controller.dataset) if tree is not None else ""
        self.out.object = "Pick a row to see its path through the tree and the rule it fires."

    def clear(self) -> None:
        self._run(lambda: self.figure.explain([]))
        self.out.object = "Pick a row to see its path through the tree and the rule it fires."

    def explain(self) -> str | None:
        """Explain the row the widgets describe; returns the rule (``None`` and a message on bad input)."""
        c = self.controller
        _, entry = c.selection()
        try:
            if entry is None:
                raise ValueError("select a tree first (click a point of the front)")
            tree, ds = entry.tree, c.dataset
            text = (self.values_w.value or "").strip()
            truth = ""
            given = None
            if text:
                (row, given), what = parse_row(text, tree.schema), "the typed values"
            else:
                if ds is None:
                    raise ValueError("no table loaded")
                if tree.schema.feature_names != ds.schema.feature_names:
                    raise ValueError("the selected tree was trained on another table: type its feature values")
                i = row_index(self.index_w.value, ds.n_rows)
                row, what = ds.X[i], f"Row {i}"
                truth = f" (true class: {md(tree.class_text(int(ds.y[i])))})"
            path, rule = explain_row(tree, row, given)
        except ValueError as exc:
            self.out.object = f"**Cannot explain:** {md(exc)}"
            return None
        self._run(lambda: self.figure.explain(path))
        leaf = path[-1]
        self.out.object = (
            f"**{md(what)}**{truth} → predicted **{md(tree.leaf_label(leaf))}** at leaf {leaf} "
            f"({len(path) - 1} tests; the path is outlined in black).\n\n{code_block(rule)}"
        )
        gaps = gap_notes(tree, path, row)
        if gaps:
            self.out.object += "\n\n" + "\n".join(f"- {md(g)}" for g in gaps)
        return rule
