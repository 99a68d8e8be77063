"""Exports of a tree or a front: readable rules text, JSON (round trip), CSV; PNG/SVG live in ``render``."""

from __future__ import annotations

import json

from treeexplorer.schema import format_number
from treeexplorer.tree import Tree

__all__ = ["rules_lines", "rules_text", "tree_json", "tree_from_json", "front_csv", "provenance_lines"]


def rules_lines(tree: Tree) -> list[str]:
    """One readable rule per leaf: ``IF a <= 1 AND b = red THEN setosa  [n=50, 100%]``.

    A multiway branch reads ``column = category``; rows of a category the node has no branch for follow
    its fallback branch (see :class:`treeexplorer.Tree`), which the rules cannot show.
    """
    lines = []
    for leaf, path in tree.paths():
        conds = [tree.edge_text(k, child, ascii=True) for k, child in path]  # multiway: "colour = red"
        n = int(tree.counts[leaf].sum())
        label = tree.leaf_label(leaf)
        purity = tree.counts[leaf][tree.prediction[leaf]] / n if n else 0.0
        body = " AND ".join(conds) if conds else "TRUE"
        lines.append(f"IF {body} THEN {label}  [n={n}, {purity:.0%}]")
    return lines


def provenance_lines(front=None, entry=None) -> list[str]:
    """Header lines naming dataset, solver, discretizer and the tree's accuracy."""
    out = []
    if front is not None:
        out.append(f"dataset: {front.dataset} ({front.n_train} train rows, {front.n_test} test rows)")
        out.append(f"solver: {front.solver}  discretizer: {front.discretizer}  objective: {front.objective}")
        params = ", ".join(f"{k}={v}" for k, v in front.params.items() if v is not None)
        if params:
            out.append(f"parameters: {params}")
    if entry is not None:
        m = entry.metrics
        acc = f"train accuracy {m['train_accuracy']:.4f} ({m['train_errors']} errors)"
        if m.get("test_accuracy") is not None:
            acc += f", test accuracy {m['test_accuracy']:.4f}"
        out.append(
            f"tree {entry.id}: {m['splits']} splits, depth {m['depth']}, "
            f"{format_number(round(m['avg_tests'], 3))} tests per sample; {acc}; "
            f"{'proven optimal' if entry.optimal else 'not proven optimal'}"
        )
    return out


def rules_text(tree: Tree, front=None, entry=None) -> str:
    """Rules with a ``#`` provenance header (dataset, solver, discretizer, accuracies)."""
    header = [f"# {line}" for line in provenance_lines(front, entry)]
    header.append(f"# target: {tree.schema.target}; classes: {', '.join(map(str, tree.schema.classes))}")
    return "\n".join(header + rules_lines(tree)) + "\n"


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


def front_csv(front) -> str:
    """The front's table (one row per tree) as CSV with a provenance comment header."""
    header = "".join(f"# {line}\n" for line in provenance_lines(front))
    return header + front.to_frame().to_csv(index=False)
