"""Checks on front and tree JSON before anything is built from it: one clear line per problem.

A front file is user input like a CSV: it may be truncated, hand-edited or hostile.  :func:`load_front_json`
reads it and :func:`check_front_dict` checks the schema, every index (columns, classes, children), that each
tree is a tree (every node reached once from the root: no cycle, no shared child) and that the class counts
add up, so that rendering or writing rules afterwards cannot fail, loop or blow up.  Errors are
:class:`FrontError` (a ``ValueError``) naming the file and the problem.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

__all__ = ["FrontError", "load_front_json", "check_front_dict", "check_tree_dict", "MAX_TREE_DEPTH", "MAX_NODES"]

MAX_TREE_DEPTH = 1000  # deeper trees are refused: their rules alone would be millions of conditions
MAX_NODES = 1_000_000  # nodes per tree
MAX_FILE_BYTES = 1 << 30
METRICS = ("splits", "leaves", "depth", "avg_tests", "train_accuracy", "train_errors")
OPTIONAL_METRICS = (
    "test_accuracy",
    "test_errors",
    "test_avg_tests",
    "train_cost",
    "train_balanced_accuracy",
    "test_cost",
    "test_balanced_accuracy",
)
KINDS = ("numeric", "categorical")


class FrontError(ValueError):
    """A front or tree file that cannot be used; the message names the file and the problem."""


def load_front_json(path) -> dict:
    """Read and check a front file written by ``solve --out`` / :meth:`Front.to_json`.

    Returns
    -------
    dict
        The parsed front, safe to pass to :meth:`Front.from_dict`.

    Raises
    ------
    FrontError
        One line naming the file and what is wrong with it.
    """
    name = os.fspath(path)
    p = Path(name)
    if not p.is_file():
        raise FrontError(f"no such front file: {name}")
    if p.stat().st_size > MAX_FILE_BYTES:
        raise FrontError(f"{name}: {p.stat().st_size / 1e9:.1f} GB is too large for a front file")
    d = parse_json(p.read_bytes(), name, "front")
    check_front_dict(d, name)
    return d


def parse_json(raw: bytes, name: str, what: str):
    """JSON text of a file, with errors that name the file."""
    if not raw.strip():
        raise FrontError(f"{name}: the {what} file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise FrontError(f"{name}: not a {what} file (not UTF-8 text; is it binary?)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        cut = "" if text.rstrip().endswith(("}", "]")) else " (the file seems truncated)"
        raise FrontError(f"{name}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}{cut}") from None
    except RecursionError:
        raise FrontError(f"{name}: not a {what} file (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer with too many digits
        raise FrontError(f"{name}: not valid JSON: {exc}") from None


def _where(name: str, where: str) -> str:
    return f"{name}: {where}" if where else name


def _fail(name: str, where: str, problem: str):
    raise FrontError(f"{_where(name, where)}: {problem}")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _need(d: dict, key: str, types, name: str, where: str, what: str):
    if key not in d:
        _fail(name, where, f"missing {key!r}; not a treeexplorer front file?")
    v = d[key]
    ok = isinstance(v, types) and not isinstance(v, bool) if isinstance(types, (type, tuple)) else types(v)
    if not ok:
        _fail(name, where, f"{key!r} must be {what}, got {_short(v)}")
    return v


def _short(v) -> str:
    text = json.dumps(v, ensure_ascii=False) if not isinstance(v, float) or math.isfinite(v) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def check_schema_dict(s, name: str, where: str = "schema") -> tuple[int, list]:
    """Check a schema dict; returns ``(n_classes, columns)``."""
    if not isinstance(s, dict):
        _fail(name, where, f"must be an object, got {_short(s)}")
    _need(s, "target", str, name, where, "text")
    classes = _need(s, "classes", list, name, where, "a list")
    if not classes:
        _fail(name, where, "'classes' is empty; a front needs at least one class")
    if any(isinstance(c, (dict, list)) for c in classes):
        _fail(name, where, "'classes' must hold plain values (text or numbers)")
    cols = _need(s, "columns", list, name, where, "a list")
    for j, c in enumerate(cols):
        w = f"{where} column {j}"
        if not isinstance(c, dict):
            _fail(name, w, f"must be an object, got {_short(c)}")
        _need(c, "name", str, name, w, "text")
        if c.get("kind") not in KINDS:
            _fail(name, w, f"'kind' must be one of {', '.join(KINDS)}, got {_short(c.get('kind'))}")
        cats = c.get("categories")
        if cats is not None and (not isinstance(cats, list) or any(isinstance(v, (dict, list)) for v in cats)):
            _fail(name, w, "'categories' must be a list of plain values")
    return len(classes), cols


def check_tree_dict(t, name: str, n_classes: int, columns: list, where: str = "tree") -> dict:
    """Check one tree's ``nodes``; returns facts about it (``splits``, ``leaves``, ``depth``, ``root_count``)."""
    if not isinstance(t, dict):
        _fail(name, where, f"must be an object, got {_short(t)}")
    nodes = _need(t, "nodes", list, name, where, "a list of nodes")
    n = len(nodes)
    if n == 0:
        _fail(name, where, "has no nodes")
    if n > MAX_NODES:
        _fail(name, where, f"{n:,} nodes exceed the limit of {MAX_NODES:,}")
    by_id: list = [None] * n
    for i, node in enumerate(nodes):
        w = f"{where} node #{i}".strip()
        if not isinstance(node, dict):
            _fail(name, w, f"must be an object, got {_short(node)}")
        k = _need(node, "id", _is_int, name, w, "an integer")
        if not 0 <= k < n:
            _fail(name, w, f"id {k} out of range 0..{n - 1}")
        if by_id[k] is not None:
            _fail(name, w, f"id {k} appears twice")
        by_id[k] = node
    children: list[list[int]] = []
    for k, node in enumerate(by_id):
        w = f"{where} node {k}".strip()
        counts = _need(node, "counts", list, name, w, "a list")
        if len(counts) != n_classes or not all(_is_int(c) and c >= 0 for c in counts):
            _fail(name, w, f"'counts' must be {n_classes} non-negative integers (one per class), got {_short(counts)}")
        p = _need(node, "prediction_code", _is_int, name, w, "an integer")
        if not 0 <= p < n_classes:
            _fail(name, w, f"prediction_code {p} out of range 0..{n_classes - 1}")
        if "test" in node:
            test = node["test"]
            if not (
                isinstance(test, list)
                and len(test) in (3, 4)
                and _is_int(test[0])
                and test[1] in ("<=", "==", "missing")
                and _is_num(test[2])
                and math.isfinite(test[2])
                and (len(test) == 3 or test[3] == "or missing" and test[1] != "missing")
            ):
                _fail(
                    name,
                    w,
                    "'test' must be [column, '<=' or '==', finite number] (then 'or missing' when a missing value "
                    f"satisfies it) or [column, 'missing', 0], got {_short(test)}",
                )
            _check_column(test[0], columns, name, w, categorical=False)
            if test[1] == "==":
                _check_code(test[2], columns[test[0]], name, w)
            kids = [_need(node, key, _is_int, name, w, "a node id") for key in ("true", "false")]
        elif "multiway" in node:
            m = node["multiway"]
            if not isinstance(m, dict):
                _fail(name, w, f"'multiway' must be an object, got {_short(m)}")
            col = _need(m, "column", _is_int, name, w, "a column index")
            _check_column(col, columns, name, w, categorical=True)
            kids = _need(m, "children", list, name, w, "a list of node ids")
            values = _need(m, "values", list, name, w, "a list of category codes")
            if not kids or len(kids) != len(values):
                _fail(name, w, "a multiway node needs one category code per child (and at least one child)")
            if not all(_is_int(c) for c in kids) or not all(_is_num(v) and math.isfinite(v) for v in values):
                _fail(name, w, "multiway 'children' must be node ids and 'values' finite numbers")
            for v in values:
                _check_code(v, columns[col], name, w)
            fb = _need(m, "fallback", _is_int, name, w, "a node id")
            if fb not in kids:
                _fail(name, w, f"multiway fallback {fb} is not one of its children {_short(kids)}")
        else:
            kids = []
        for c in kids:
            if not 0 <= c < n:
                _fail(name, w, f"child {c} out of range 0..{n - 1}")
        children.append(kids)
    # every reachable node reached exactly once from the root: no cycle, no node shared by two parents
    parent = [-2] * n
    parent[0] = -1
    depth = [0] * n
    stack, splits, leaves, max_depth = [0], 0, 0, 0
    while stack:
        k = stack.pop()
        if not children[k]:
            leaves += 1
            max_depth = max(max_depth, depth[k])
        else:
            splits += 1
        for c in children[k]:
            if parent[c] != -2:
                problem = (
                    "is its own child"
                    if c == k
                    else (
                        "a cycle back to the root"
                        if c == 0
                        else f"node {c} is reached twice (a cycle or a shared child)"
                    )
                )
                _fail(name, f"{where} node {k}".strip(), f"not a tree: {problem}")
            parent[c], depth[c] = k, depth[k] + 1
            if depth[c] > MAX_TREE_DEPTH:
                _fail(name, where, f"deeper than {MAX_TREE_DEPTH} levels; treeexplorer refuses such trees")
            stack.append(c)
    for k in range(n):
        if parent[k] != -2 and children[k]:
            total = [sum(col) for col in zip(*(by_id[c]["counts"] for c in children[k]))]
            if total != by_id[k]["counts"]:
                _fail(
                    name,
                    f"{where} node {k}".strip(),
                    f"class counts {_short(by_id[k]['counts'])} are not the sum of its children's {_short(total)}",
                )
    return {"splits": splits, "leaves": leaves, "depth": max_depth, "root_count": sum(by_id[0]["counts"])}


def _check_column(j: int, columns: list, name: str, where: str, categorical: bool) -> None:
    if not 0 <= j < len(columns):
        _fail(name, where, f"column index {j} out of range 0..{len(columns) - 1}")
    if categorical and columns[j].get("kind") != "categorical":
        _fail(name, where, f"a multiway node needs a categorical column; column {j} is {columns[j].get('kind')}")


def _check_code(v, column: dict, name: str, where: str) -> None:
    """A category code of a categorical column with its categories listed is one of them (0..n-1)."""
    cats = column.get("categories")
    if column.get("kind") != "categorical" or not isinstance(cats, list):
        return
    if not (float(v).is_integer() and 0 <= v < len(cats)):
        _fail(
            name,
            where,
            f"category code {_short(v)} of column {_short(column.get('name'))} is not one of its {len(cats)} "
            f"categories (0..{len(cats) - 1})",
        )


# The range each metric lies in: accuracies are fractions, counts and sizes are not negative.
_METRIC_RANGE = {"train_accuracy": (0.0, 1.0), "test_accuracy": (0.0, 1.0)}


def check_front_dict(d, name: str = "front") -> None:
    """Check a parsed front; raises :class:`FrontError` naming ``name`` and the first problem found."""
    if not isinstance(d, dict):
        _fail(name, "", f"not a treeexplorer front file (a JSON object is expected, got {_short(d)})")
    for key in ("solver", "discretizer"):
        _need(d, key, str, name, "", "text")
    if "schema" not in d or "trees" not in d:
        _fail(name, "", f"not a treeexplorer front file (missing {'schema' if 'schema' not in d else 'trees'!r})")
    n_classes, columns = check_schema_dict(d["schema"], name)
    trees = _need(d, "trees", list, name, "", "a list")
    for key in ("n_train", "n_test"):
        if key in d and not (_is_int(d[key]) and d[key] >= 0):
            _fail(name, "", f"{key!r} must be a non-negative integer, got {_short(d[key])}")
    for key, types in (("params", dict), ("stats", dict), ("notices", list), ("objective", str), ("status", str)):
        if key in d and not isinstance(d[key], types):
            _fail(
                name, "", f"{key!r} must be {'an object' if types is dict else 'a list' if types is list else 'text'}"
            )
    if "runtime_s" in d and not _is_num(d["runtime_s"]):
        _fail(name, "", f"'runtime_s' must be a number, got {_short(d['runtime_s'])}")
    seen = set()
    for i, t in enumerate(trees):
        w = f"trees[{i}]"
        if not isinstance(t, dict):
            _fail(name, w, f"must be an object, got {_short(t)}")
        tid = _need(t, "id", _is_int, name, w, "an integer")
        if tid in seen:
            _fail(name, w, f"tree id {tid} appears twice")
        seen.add(tid)
        w = f"tree {tid}"
        if "optimal" not in t or not isinstance(t["optimal"], bool):
            _fail(name, w, f"'optimal' must be true or false, got {_short(t.get('optimal'))}")
        if "info" in t and not isinstance(t["info"], dict):
            _fail(name, w, "'info' must be an object")
        for key in METRICS + OPTIONAL_METRICS:
            v = t.get(key)
            if key in METRICS and v is None:
                _fail(name, w, f"missing metric {key!r}")
            if v is not None and not (_is_num(v) and math.isfinite(v)):
                _fail(name, w, f"metric {key!r} must be a finite number, got {_short(v)}")
            lo, hi = _METRIC_RANGE.get(key, (0.0, math.inf))
            if v is not None and not lo <= v <= hi:
                _fail(name, w, f"metric {key!r} must lie in [{lo:g}, {hi:g}], got {_short(v)}")
        if "tree" not in t:
            _fail(name, w, "missing 'tree'")
        facts = check_tree_dict(t["tree"], name, n_classes, columns, where=w)
        for key in ("splits", "leaves", "depth"):
            if t[key] != facts[key]:
                _fail(name, w, f"says {key}={_short(t[key])} but its nodes give {facts[key]}")
        if _is_int(d.get("n_train")) and d["n_train"] != facts["root_count"]:
            _fail(name, w, f"its root counts {facts['root_count']} rows but the front has n_train={d['n_train']}")
    if d.get("dominated") is not None:  # trees a run set aside as dominated (Front.dominated): checked alike
        _need(d, "dominated", list, name, "", "a list")
        check_front_dict({**d, "trees": d["dominated"], "dominated": None}, f"{name} (dominated trees)")


def check_tree_json_dict(d, name: str = "tree") -> None:
    """Check a tree written by :func:`treeexplorer.export.tree_json` (schema included)."""
    if not isinstance(d, dict):
        _fail(name, "", f"not a treeexplorer tree JSON (a JSON object is expected, got {_short(d)})")
    if d.get("format") != "treeexplorer-tree":
        _fail(name, "", "not a treeexplorer tree JSON (missing format: treeexplorer-tree)")
    if "schema" not in d:
        _fail(name, "", "missing 'schema'")
    n_classes, columns = check_schema_dict(d["schema"], name)
    check_tree_dict(d, name, n_classes, columns, where="")
