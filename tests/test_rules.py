"""Rules text merges redundant conditions on one column (issue 16) and stays true to the tree."""

import numpy as np

import treeexplorer as tx
from treeexplorer.export import rules_lines


def _rule_holds(rule: str, row: dict) -> bool:
    """Evaluate the IF part of a rule on one row (a tiny parser for the rules grammar)."""
    body = rule[3 : rule.index(" THEN ")]
    if body == "TRUE":
        return True
    for cond in body.split(" AND "):
        if " not in {" in cond:
            name, rest = cond.split(" not in {")
            ok = str(row[name]) not in rest.rstrip("}").split(", ")
        elif cond.count(" ") == 4:  # lo < x <= hi
            lo, _, name, _, hi = cond.split(" ")
            ok = float(lo) < row[name] <= float(hi)
        else:
            name, op, value = cond.split(" ", 2)
            x = row[name]
            if op == "<=":
                ok = x <= float(value)
            elif op == ">":
                ok = x > float(value)
            elif op == "=":
                ok = str(x) == value
            else:
                ok = str(x) != value
        if not ok:
            return False
    return True


def test_each_column_appears_once_per_rule_and_ranges_are_two_sided():
    tree = tx.solve("iris", solver="cart").trees[-1].tree
    lines = rules_lines(tree)
    assert any(" < petal_length <= " in r for r in lines)
    for r in lines:
        body = r[3 : r.index(" THEN ")]
        names = [c.split(" ")[2] if c.count(" ") == 4 else c.split(" ")[0] for c in body.split(" AND ")]
        assert len(names) == len(set(names)), r


def test_every_row_fires_exactly_the_rule_of_its_leaf():
    for data, kw in [("iris", {"solver": "cart"}), ("car", {"solver": "cart", "max_depth": 5})]:
        front = tx.solve(data, **kw)
        tree = front.trees[-1].tree
        ds = tx.load_dataset(data)
        lines = rules_lines(tree)
        leaves = [leaf for leaf, _ in tree.paths()]
        reached = tree.apply(ds.X)
        cols = ds.schema.columns
        for i in np.random.default_rng(0).choice(len(ds.X), 60, replace=False):
            row = {
                c.name: (c.categories[int(ds.X[i, j])] if c.categories is not None else ds.X[i, j])
                for j, c in enumerate(cols)
            }
            fired = [k for k, r in enumerate(lines) if _rule_holds(r, row)]
            assert fired == [leaves.index(reached[i])], (data, i, [lines[k] for k in fired])
