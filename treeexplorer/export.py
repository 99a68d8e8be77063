"""Exports of a tree or a front: readable rules text, JSON (round trip), CSV; PNG/SVG drawn by ``render``.

:func:`export_bytes` is the one dispatch the CLI (``treeexplorer export``) and the app's download buttons use.
"""

from __future__ import annotations

import json

from treeexplorer.claims import (  # noqa: F401  (re-exported: their old home)
    entry_claim,
    optimality_line,
    plural,
    provenance_lines,
    threshold_note,
)
from treeexplorer.schema import OP_EQ, OP_LE, Condition, base_op, format_number, missing_true
from treeexplorer.textsafe import csv_cell, visible
from treeexplorer.tree import Tree

__all__ = [
    "path_conditions",
    "rules_lines",
    "rules_text",
    "tree_json",
    "tree_from_json",
    "front_csv",
    "front_json",
    "CSV_PROVENANCE",
    "provenance_lines",
    "threshold_note",
    "export_bytes",
    "EXPORT_FORMATS",
    "canonical_format",
    "TREE_FORMATS",
    "FRONT_FORMATS",
    "TEXT_FORMATS",
    "plural",
]

# Formats of one tree and of a whole front, with the file suffix each gets.  ``txt`` is accepted for ``rules``.
TREE_FORMATS = ("rules", "json", "png", "svg")
FRONT_FORMATS = ("front_json", "front_csv")
EXPORT_FORMATS = {
    "rules": ".txt",
    "json": ".json",
    "png": ".png",
    "svg": ".svg",
    "front_json": ".json",
    "front_csv": ".csv",
}
TEXT_FORMATS = frozenset(EXPORT_FORMATS) - {"png"}  # UTF-8 text: may go to a terminal
_ALIASES = {"txt": "rules", "csv": "front_csv"}  # a tree has no CSV: "csv" is the front's table


def canonical_format(fmt: str) -> str:
    """The :data:`EXPORT_FORMATS` key ``fmt`` names (``txt`` is ``rules``, ``csv`` is ``front_csv``)."""
    return _ALIASES.get(fmt, fmt)


def rules_lines(tree: Tree) -> list[str]:
    """One readable rule per leaf: ``IF a <= 1 AND b = red THEN setosa  [n=50, 100%]``.

    A multiway branch reads ``column = category``; rows of a category the node has no branch for follow
    its fallback branch (see :class:`treeexplorer.Tree`), which the rules cannot show.
    """
    lines = []
    for leaf, path in tree.paths():
        conds = path_conditions(tree, path)
        n = int(tree.counts[leaf].sum())
        label = tree.leaf_label(leaf)
        purity = tree.counts[leaf][tree.prediction[leaf]] / n if n else 0.0
        body = " AND ".join(conds) if conds else "TRUE"
        lines.append(visible(f"IF {body} THEN {label}  [n={n}, {purity:.0%}]"))  # names may hold \n, ESC
    return lines


def path_conditions(tree: Tree, path) -> list[str]:
    """The conditions of a root-to-node ``path`` with redundant ones merged, one per column, in ASCII.

    ``x <= 5.95 AND x <= 5.85`` reads ``x <= 5.85``; both sides read ``5.1 < x <= 5.85``; ``colour = red``
    makes ``colour != blue`` redundant; several exclusions read ``colour not in {blue, green}``.
    Columns keep the order in which the path first tests them.
    """
    bounds: dict[int, list] = {}  # column -> [lo (x > lo), hi (x <= hi)]
    equal: dict[int, Condition] = {}
    excluded: dict[int, list[Condition]] = {}
    gap: dict[int, list[bool]] = {}  # column -> [a missing value takes every edge, some edge says where it goes]
    order: list[int] = []
    for k, child in path:
        cond, negate = tree.edge_condition(k, child)  # a multiway branch is a positive "column = category"
        c = cond.column
        if c not in order:
            order.append(c)
        g = gap.setdefault(c, [True, False])
        # where a gap goes: the node's routing (a multiway node: its fallback child), not only the test's text
        g[0] = g[0] and (child == tree.false_child[k] if tree.is_multi(k) else missing_true(tree.op[k]) != negate)
        g[1] = g[1] or cond.shows_missing
        op = base_op(cond.op)
        if op == OP_LE:
            # Merge on the exact thresholds; show the tightest one's short form (Tree.shown_threshold).
            lo, hi = bounds.setdefault(c, [None, None])
            shown = (cond.value, tree.shown_threshold(k))
            if negate:
                bounds[c][0] = shown if lo is None else max(lo, shown)
            else:
                bounds[c][1] = shown if hi is None else min(hi, shown)
        elif op == OP_EQ and not negate:
            equal[c] = Condition(c, OP_EQ, cond.value)
        elif op == OP_EQ and all(e.value != cond.value for e in excluded.get(c, ())):  # "x = 1 or missing"
            excluded.setdefault(c, []).append(Condition(c, OP_EQ, cond.value))  # then "x = 1": one "x != 1"
    schema = tree.schema
    out = []
    for c in order:
        name = schema.columns[c].name
        parts = []
        if c in bounds:
            lo, hi = (None if b is None else b[1] for b in bounds[c])
            if lo is not None and hi is not None:
                parts.append(f"{format_number(lo)} < {name} <= {format_number(hi)}")
            elif hi is not None:
                parts.append(Condition(c, OP_LE, hi).ascii_text(schema))
            else:
                parts.append(Condition(c, OP_LE, lo).ascii_text(schema, negate=True))
        if c in equal:
            parts.append(equal[c].ascii_text(schema))
        elif c in excluded:
            conds = excluded[c]
            if len(conds) == 1:
                parts.append(conds[0].ascii_text(schema, negate=True))
            else:
                shown = [cond.ascii_text(schema).split(" = ", 1)[1] for cond in conds]
                parts.append(f"{name} not in {{{', '.join(shown)}}}")
        admits, said = gap[c]
        lo_hi = bounds.get(c, [None, None])
        if (c in equal and any(e.value == equal[c].value for e in excluded.get(c, ()))) or (
            None not in lo_hi and lo_hi[0][0] >= lo_hi[1][0]
        ):
            parts = []  # no present value passes ("x = 1 or missing" then "x != 1"): only a gap reaches here
        if not parts:  # only "is missing" / "is present" tests on this column
            out.append(f"{name} {'is missing' if admits else 'is present'}")
        elif said and admits:
            out.append(
                " AND ".join(parts) + " or missing" if len(parts) == 1 else f"({' AND '.join(parts)}) or missing"
            )
        else:
            out += parts
    return out


MISSING_RULE = (
    "a missing value goes where 'or missing' says; at a test that does not say, to the branch more training rows "
    "took (no training row there had a gap)"
)


def rules_text(tree: Tree, front=None, entry=None) -> str:
    """Rules with a ``#`` provenance header (dataset, solver, discretizer, accuracies)."""
    header = [f"# {line}" for line in provenance_lines(front, entry)]
    header.append(f"# target: {tree.schema.target}; classes: {', '.join(map(str, tree.schema.classes))}")
    note = threshold_note(tree)
    if note:
        header.append(f"# {note}")
    header.append(f"# {MISSING_RULE}")
    return "\n".join([visible(h) for h in header] + rules_lines(tree)) + "\n"


def tree_json(tree: Tree, front=None, entry=None) -> str:
    """A tree as JSON with its schema and provenance; :func:`tree_from_json` reads it back."""
    d = {"format": "treeexplorer-tree", "version": 1, **tree.to_dict(with_schema=True)}
    if front is not None:
        d["provenance"] = {
            "dataset": front.dataset,
            "solver": front.solver,
            "discretizer": front.discretizer,
            "objective": front.objective,
            "params": front.to_dict(rules=False)["params"],
            "search_space": front.search_space,
            "optimality": front.optimality,
            **({"weights": front.to_dict(rules=False)["weights"]} if front.weights else {}),
        }
    if entry is not None:
        d["metrics"] = entry.metrics
        d["optimal"] = entry.optimal
    return json.dumps(d, indent=1, ensure_ascii=False)


def tree_from_json(text: str) -> Tree:
    """Rebuild a :class:`Tree` from :func:`tree_json` output."""
    from treeexplorer.validate import check_tree_json_dict, parse_json

    d = parse_json(text.encode("utf-8") if isinstance(text, str) else text, "tree JSON", "tree")
    check_tree_json_dict(d, "tree JSON")
    return Tree.from_dict(d)


# Provenance columns the front CSV ends with (same value on every row): the header line comes first, so
# pandas.read_csv and spreadsheets read the file as it is; the parameters and notices are in the front JSON.
CSV_PROVENANCE = ("dataset", "solver", "discretizer", "objective", "status", "optimality")


def front_csv(front) -> str:
    """The front's table (one row per tree, :meth:`Front.to_frame`) as CSV, header line first.

    The run's provenance follows as constant columns (:data:`CSV_PROVENANCE`; ``optimality`` says what the
    ``optimal`` column ranges over); the front JSON has the rest (parameters, notices, the trees).
    """
    table = front.to_frame()
    for key in CSV_PROVENANCE:
        table[key] = optimality_line(front).removeprefix("optimality: ") if key == "optimality" else getattr(front, key)
    if front.weights:  # a weighted run: what it minimised (class weights and costs are in the JSON)
        table["weights"] = front.weights.get("objective", "")
    for col in table.select_dtypes(include=[object]).columns:  # text cells a spreadsheet would run as formulas
        table[col] = table[col].map(csv_cell)
    return table.to_csv(index=False)


def front_json(front) -> str:
    """The whole front as JSON (what ``treeexplorer solve --out`` writes; :meth:`Front.from_dict` reads it)."""
    return json.dumps(front.to_dict(), indent=1, ensure_ascii=False)


def export_bytes(fmt: str, front, entry=None) -> bytes:
    """One export as bytes: a tree of ``front`` (:data:`TREE_FORMATS`) or the front itself (:data:`FRONT_FORMATS`).

    Parameters
    ----------
    fmt : str
        A key of :data:`EXPORT_FORMATS` (or ``txt`` for ``rules``, ``csv`` for ``front_csv``); text formats
        are UTF-8.
    front : Front
        Gives the provenance header, and the tree table for front formats.
    entry : FrontTree, optional
        The tree to export (required for tree formats).

    Raises
    ------
    ValueError
        Unknown format, or a tree format without a tree.
    """
    fmt = canonical_format(fmt)
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "front_json":
        return front_json(front).encode("utf-8")
    if fmt == "front_csv":
        return front_csv(front).encode("utf-8")
    if entry is None:
        raise ValueError(f"the {fmt} export needs a tree: select one first")
    if fmt == "rules":
        return rules_text(entry.tree, front, entry).encode("utf-8")
    if fmt == "json":
        return tree_json(entry.tree, front, entry).encode("utf-8")
    from treeexplorer import render  # Pillow and the layout code load only when a picture is asked for

    if fmt == "png":
        return render.to_png(entry.tree, front, entry)
    return render.to_svg(entry.tree, front, entry).encode("utf-8")
