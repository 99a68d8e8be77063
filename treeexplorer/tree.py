"""The one decision-tree model every solver, renderer, exporter and view shares.

A :class:`Tree` stores flat parallel arrays (node 0 is the root).  Internal node ``k`` tests the condition
``(column[k], op[k], value[k])`` on the encoded matrix (``x <= value`` or ``x == category code``); rows where
it holds go to ``true_child[k]``, the others to ``false_child[k]``.  Leaves have ``column == -1``.
``counts[k, c]`` is the number of training rows of class ``c`` reaching node ``k``, and ``prediction[k]``
the class most of them have (the lowest class code on ties), at internal nodes as at leaves; a node no
training row reaches keeps its solver's choice.

Multiway nodes
--------------
A node with ``op[k] == OP_MULTI`` tests a categorical column and has one child per category: its
children are ``children[child_offsets[k]:child_offsets[k + 1]]`` (CSR style, kept in category order)
and ``child_values`` holds the category code each one takes.  ``true_child[k]`` is -1 and
``false_child[k]`` is the *fallback* child: a row whose category has no child (a category absent from
the training rows of that node, e.g. unseen at training time) follows it.  The fallback is the child
with the most training rows when the tree is built (the first on ties): the branch that best represents
"an ordinary row here".  A multiway node is ONE split and ONE test per row, whatever its number of
children (the BRANCHES objective's point).  Binary nodes and leaves have empty child ranges, so binary
trees and their JSON are unchanged.

Shown thresholds
----------------
A threshold such as ``0.27267714`` is shown as the shortest decimal that splits the rows the same way
(``0.2727``): :func:`shorten_thresholds` sets ``display_value[k]`` to the shortest decimal lying strictly
between the two values of the column that neighbour ``value[k]`` among the rows of the run (the largest
value ``<= value[k]`` and the smallest ``> value[k]``).  The neighbours are taken over the whole training
set *and* the held-out rows, so the text classifies every row of the run exactly as the tree does (and
lies strictly between the neighbouring training values, the interval being narrower).  Only the text
changes: ``value`` stays exact and is what :meth:`Tree.apply` and the JSON ``test`` use; a future row
falling between the shown and the exact threshold follows ``value``.  ``NaN`` (the default) shows
``value`` itself.

Missing values
--------------
Every binary node sends a row whose value is missing to one child, and its ``op`` says which
(:mod:`treeexplorer.schema`: ``OP_LE`` / ``OP_EQ`` to the false child, ``OP_LE_NA`` / ``OP_EQ_NA`` to the true
child; ``OP_NA`` tests the gap itself).  Where training rows with a gap in the node's column reached the node, the
side is the one the solver learned, and ``shows_missing[k]`` is True: the text says it (``x <= 4.2 or missing``).
Where none did, a gap follows the child that more training rows reached (scikit-learn's rule; ties to the true
child), set by :func:`settle_missing` when the front is assembled (``OP_LE_RULE`` / ``OP_EQ_RULE`` when that is
the true child; :meth:`Tree.condition` still gives the test as learned), and the text stays short (the rules export says
the rule once).  A multiway node sends a gap to its fallback child.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from treeexplorer.schema import (
    BASE_OP,
    OP_EQ,
    OP_EQ_RULE,
    OP_LE,
    OP_LE_NA,
    OP_LE_RULE,
    OP_MULTI,
    OP_NA,
    Condition,
    Schema,
    base_op,
    format_number,
    missing_true,
    with_missing,
)
from treeexplorer.solvers import RawTree
from treeexplorer.solvers._kernels.predict import apply_nodes, count_nodes, missing_forest

__all__ = ["Tree", "class_text", "max_splits", "settle_missing", "shorten_thresholds", "shortest_between"]


def max_splits(depth: int, max_nodes: int | None = None) -> int:
    """Most splits of a binary tree ``depth`` levels deep (``2**depth - 1``), capped by ``max_nodes`` when given.

    The split budgets ``0..max_splits`` are what a whole front of that depth covers (MurTree's and ConTree's
    fronts, the exact front of the gap view).
    """
    k = (1 << int(depth)) - 1
    return k if max_nodes is None else min(k, int(max_nodes))


class Tree:
    """A decision tree in the data's own units.

    Parameters
    ----------
    column, op, value, true_child, false_child : array-like of shape (n_nodes,)
        The node tests and children (see module docstring).
    counts : array-like of shape (n_nodes, n_classes)
        Training class counts per node.
    prediction : array-like of shape (n_nodes,)
        Class code predicted at each node (used at leaves; shown at every node): the majority class of
        ``counts`` (lowest code on ties), see the module docstring.
    schema : Schema
        Column and class names for display.
    child_offsets : array-like of shape (n_nodes + 1,), optional
        CSR ranges of the multiway nodes' children (default: no multiway node).
    children, child_values : array-like, optional
        Child node and category code of every multiway branch (see module docstring).
    display_value : array-like of shape (n_nodes,), optional
        The threshold each ``x <= value`` test shows (``NaN``: ``value`` itself); see the module docstring
        and :func:`shorten_thresholds`.
    shows_missing : array-like of bool, shape (n_nodes,), optional
        Nodes whose side for a missing value was learned from training rows with gaps (their text says it);
        see the module docstring.  Default: none.
    """

    def __init__(
        self,
        column,
        op,
        value,
        true_child,
        false_child,
        counts,
        prediction,
        schema: Schema,
        child_offsets=None,
        children=None,
        child_values=None,
        display_value=None,
        shows_missing=None,
    ):
        self.column = np.ascontiguousarray(column, dtype=np.int64)
        self.op = np.ascontiguousarray(op, dtype=np.int64)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.true_child = np.ascontiguousarray(true_child, dtype=np.int64)
        self.false_child = np.ascontiguousarray(false_child, dtype=np.int64)
        self.counts = np.ascontiguousarray(counts, dtype=np.int64).reshape(len(self.column), -1)
        self.prediction = np.ascontiguousarray(prediction, dtype=np.int64)
        self.schema = schema
        n = len(self.column)
        if child_offsets is None:
            child_offsets, children, child_values = np.zeros(n + 1), [], []
        self.child_offsets = np.ascontiguousarray(child_offsets, dtype=np.int64)
        self.children = np.ascontiguousarray(children, dtype=np.int64)
        self.child_values = np.ascontiguousarray(child_values, dtype=np.float64)
        if self.child_offsets.shape != (n + 1,) or self.children.shape != self.child_values.shape:
            raise ValueError("child_offsets must have n_nodes + 1 entries; children and child_values alike")
        if display_value is None:
            display_value = np.full(n, np.nan)
        self.display_value = np.ascontiguousarray(display_value, dtype=np.float64)
        if self.display_value.shape != (n,):
            raise ValueError("display_value must have one entry per node")
        if shows_missing is None:
            shows_missing = np.zeros(n, dtype=bool)
        self.shows_missing = np.ascontiguousarray(shows_missing, dtype=bool)
        if self.shows_missing.shape != (n,):
            raise ValueError("shows_missing must have one entry per node")
        self._depths = None

    def _csr(self) -> tuple:
        return self.child_offsets, self.children, self.child_values

    def _same_structure(self, counts) -> Tree:
        if type(self) is Tree:  # the arrays are already checked: a copy with other counts (a big set has 10^5)
            counts = np.ascontiguousarray(counts, dtype=np.int64).reshape(self.n_nodes, -1)
            tree = object.__new__(Tree)
            tree.__dict__.update(self.__dict__)  # the structure's caches (_reachable, _depths) stay true
            tree.counts = counts
            return tree
        return Tree(
            self.column,
            self.op,
            self.value,
            self.true_child,
            self.false_child,
            counts,
            self.prediction,
            self.schema,
            *self._csr(),
            self.display_value,
            self.shows_missing,
        )

    # -- construction ----------------------------------------------------------------------------------
    @classmethod
    def from_raw(cls, raw: RawTree, features: Sequence, schema: Schema) -> Tree:
        """Translate a solver's :class:`solvers.RawTree` into original units.

        ``features[j]`` says what column ``j`` of the solver's matrix was: an ``int`` (a numeric column of
        the encoded table, the raw threshold is kept) or a :class:`Condition` (a 0/1 test; the raw tree
        sends its 1 side, where the condition holds, right).
        """
        n = raw.n_nodes
        column = np.full(n, -1, dtype=np.int64)
        op = np.zeros(n, dtype=np.int64)
        value = np.zeros(n, dtype=np.float64)
        t_child = np.full(n, -1, dtype=np.int64)
        f_child = np.full(n, -1, dtype=np.int64)
        offsets, kids, codes = [0], [], []
        # plain lists: a Rashomon set turns 100,000 raw trees into Trees, and numpy's scalars cost 10x as much
        feature, threshold, left, right = (a.tolist() for a in (raw.feature, raw.threshold, raw.left, raw.right))
        miss_left = raw.missing_left.tolist() if raw.missing_left is not None else None
        said = np.zeros(n, dtype=bool)
        multi = np.asarray(raw.multi_offsets).tolist() if raw.multi_offsets is not None else None
        for k in range(n):
            j = feature[k]
            if multi is not None and multi[k + 1] > multi[k]:
                # A multiway node over one one-hot group: branch r is "column = code of test r".
                rng = range(raw.multi_offsets[k], raw.multi_offsets[k + 1])
                conds = [features[raw.multi_tests[r]] for r in rng]
                if any(not isinstance(c, Condition) or c.op != OP_EQ or c.column != conds[0].column for c in conds):
                    raise ValueError(f"multiway node {k}: its tests are not one categorical column's")
                order = sorted(range(len(conds)), key=lambda i: conds[i].value)  # category order
                branch = [raw.multi_children[raw.multi_offsets[k] + i] for i in order]
                column[k], op[k] = conds[0].column, OP_MULTI
                kids += branch
                codes += [conds[i].value for i in order]
                f_child[k] = max(branch, key=lambda c: (raw.value[c].sum(), -branch.index(c)))
                offsets.append(len(kids))
                continue
            offsets.append(len(kids))
            if j < 0:
                continue
            feat = features[j]
            if isinstance(feat, Condition):
                if not 0.0 <= threshold[k] < 1.0:
                    raise ValueError(f"binary test {j} split at {threshold[k]}, expected 0.5")
                column[k], op[k], value[k] = feat.column, feat.op, feat.value
                t_child[k], f_child[k] = right[k], left[k]
                said[k] = feat.shows_missing
                if miss_left is not None:  # a raw solver on a category test: a gap on its 1 side is "or missing"
                    op[k] = with_missing(feat.op, miss_left[k] != 1)
                    said[k] = True
            else:
                nan_left = miss_left is not None and miss_left[k] == 1
                column[k], op[k], value[k] = int(feat), OP_LE_NA if nan_left else OP_LE, threshold[k]
                t_child[k], f_child[k] = left[k], right[k]
                said[k] = miss_left is not None
                if threshold[k] == np.inf and not nan_left:  # "present vs missing" (every value <= inf)
                    op[k], value[k] = OP_NA, 0.0
                    t_child[k], f_child[k] = right[k], left[k]
        # shows_missing is provisional here: settle_missing keeps it only where training gaps reached the node
        return cls(
            column, op, value, t_child, f_child, raw.value, raw.prediction, schema, offsets, kids, codes, None, said
        )

    def with_counts(self, X: np.ndarray | None = None, y: np.ndarray | None = None, *, counts=None) -> Tree:
        """Same tree with ``counts`` recomputed on ``(X, y)``, or the given node ``counts`` (predictions and
        fallbacks unchanged)."""
        if counts is None:
            counts, _ = self._count(X, y)
        return self._same_structure(counts)

    # -- structure -------------------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return int(self.column.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[1])

    def is_leaf(self, k: int) -> bool:
        return bool(self.column[k] < 0)

    def is_multi(self, k: int) -> bool:
        """Whether node ``k`` is a multiway node (one child per category)."""
        return bool(self.column[k] >= 0 and self.op[k] == OP_MULTI)

    @property
    def has_multiway(self) -> bool:
        """Whether any node is a multiway node."""
        return bool(np.any((self.column >= 0) & (self.op == OP_MULTI)))

    def child_list(self, k: int) -> list[int]:
        """Children of node ``k`` in display order: ``[true, false]`` for a binary test, the category
        order for a multiway node, ``[]`` for a leaf."""
        if self.column[k] < 0:
            return []
        if self.op[k] == OP_MULTI:
            return [int(c) for c in self.children[self.child_offsets[k] : self.child_offsets[k + 1]]]
        return [int(self.true_child[k]), int(self.false_child[k])]

    def edge_condition(self, k: int, child: int) -> tuple[Condition, bool]:
        """``(condition, negate)`` that sends a row from node ``k`` to ``child``.

        A multiway branch reads ``column = category``; a binary false branch is the negated test.
        """
        if self.op[k] == OP_MULTI:
            lo, hi = self.child_offsets[k], self.child_offsets[k + 1]
            r = lo + list(self.children[lo:hi]).index(child)
            return Condition(int(self.column[k]), OP_EQ, float(self.child_values[r])), False
        return self.condition(k), child != self.true_child[k]

    def edge_text(self, k: int, child: int, ascii: bool = False) -> str:
        """Text of the branch from ``k`` to ``child`` (``colour = red``, ``age > 35``), threshold as shown."""
        cond, negate = self.edge_condition(k, child)
        if not self.is_multi(k):
            cond = self.shown_condition(k)
        return cond.ascii_text(self.schema, negate) if ascii else cond.text(self.schema, negate)

    def edge_label(self, k: int, child: int) -> str:
        """Short label of the branch from ``k`` to ``child``: ``yes``/``no`` for a binary test, the category
        (``red``) for a multiway node, whose box shows the column."""
        if not self.is_multi(k):
            return "yes" if child == self.true_child[k] else "no"
        code = self.edge_condition(k, child)[0].value
        cats = self.schema.columns[self.column[k]].categories
        return str(cats[int(code)]) if cats is not None and 0 <= int(code) < len(cats) else format_number(code)

    def reachable(self) -> np.ndarray:
        """Indices of the nodes reachable from the root, in depth-first (true side / first category
        first) order."""
        cached = self.__dict__.get("_reachable")
        if cached is not None:  # a tree's structure never changes; fronts ask for this per tree many times
            return cached.copy()
        col, op, tc, fc = self.column.tolist(), self.op.tolist(), self.true_child.tolist(), self.false_child.tolist()
        order, stack = [], [0]
        while stack:
            k = stack.pop()
            order.append(k)
            if col[k] < 0:
                continue
            if op[k] == OP_MULTI:
                stack.extend(reversed(self.child_list(k)))
            else:
                stack.append(fc[k])  # popped after the true side: true side first
                stack.append(tc[k])
        self._reachable = np.asarray(order, dtype=np.int64)
        return self._reachable.copy()

    @property
    def node_depth(self) -> np.ndarray:
        """Depth of every node (root 0; unreachable nodes -1)."""
        if self._depths is None:
            d = np.full(self.n_nodes, -1, dtype=np.int64)
            d[0] = 0
            for k in self.reachable():
                for c in self.child_list(k):
                    d[c] = d[k] + 1
            self._depths = d
        return self._depths

    @property
    def leaves(self) -> np.ndarray:
        r = self.reachable()
        return r[self.column[r] < 0]

    @property
    def n_splits(self) -> int:
        r = self.reachable()
        return int(np.count_nonzero(self.column[r] >= 0))

    @property
    def n_leaves(self) -> int:
        return int(len(self.leaves))

    @property
    def depth(self) -> int:
        return int(self.node_depth[self.leaves].max())

    def condition(self, k: int) -> Condition:
        """The binary test at node ``k`` (a multiway node has none: see :meth:`edge_condition`)."""
        if self.column[k] < 0:
            raise ValueError(f"node {k} is a leaf")
        if self.op[k] == OP_MULTI:
            raise ValueError(f"node {k} is a multiway node; use edge_condition for its branches")
        op = int(self.op[k])
        op = base_op(op) if op in (OP_LE_RULE, OP_EQ_RULE) else op  # the test as learned; the rule is the node's
        return Condition(int(self.column[k]), op, float(self.value[k]), bool(self.shows_missing[k]))

    def shown_threshold(self, k: int) -> float:
        """The threshold node ``k``'s text shows: ``display_value[k]`` when set, else the exact ``value[k]``."""
        d = self.display_value[k]
        return float(self.value[k]) if np.isnan(d) else float(d)

    def shown_condition(self, k: int) -> Condition:
        """The test at node ``k`` as displayed (its threshold from :meth:`shown_threshold`); for text only,
        :meth:`condition` is the exact test."""
        c = self.condition(k)
        return Condition(c.column, c.op, self.shown_threshold(k), c.shows_missing) if base_op(c.op) == OP_LE else c

    def node_text(self, k: int, negate: bool = False) -> str:
        """The test at node ``k`` in original units (``petal_length ≤ 2.45``; a multiway node: ``colour``),
        its threshold as shown (:meth:`shown_threshold`).  A test that learned to send a gap to its "no" side says
        so: ``flipper_length_mm ≤ 202.5 (missing: no)`` (to its "yes" side it reads ``... or missing``)."""
        if self.is_multi(k):
            return self.schema.columns[self.column[k]].name
        c = self.shown_condition(k)
        text = c.text(self.schema, negate)
        if not negate and c.shows_missing and not missing_true(c.op) and base_op(c.op) != OP_NA:
            text += " (missing: no)"
        return text

    def class_text(self, code: int) -> str:
        """Class ``code`` as text reads (:func:`class_text`)."""
        return class_text(self.schema, code)

    def leaf_label(self, k: int) -> str:
        """The predicted class of node ``k`` as text (:meth:`class_text`)."""
        return self.class_text(self.prediction[k])

    def paths(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """For each leaf (in :meth:`reachable` order), the ``(node, child taken)`` steps from the root;
        :meth:`edge_text` reads each step."""
        out, stack = [], [(0, [])]
        while stack:
            k, path = stack.pop()
            if self.column[k] < 0:
                out.append((k, path))
                continue
            for c in reversed(self.child_list(k)):
                stack.append((c, path + [(k, c)]))
        return out

    # -- prediction and metrics ------------------------------------------------------------------------
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf index reached by each row of the encoded matrix ``X``."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        return apply_nodes(self.column, self.op, self.value, self.true_child, self.false_child, *self._csr(), X)

    def predict_codes(self, X: np.ndarray) -> np.ndarray:
        """Class code of each row of the encoded matrix ``X``."""
        return self.prediction[self.apply(X)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Original class label of each row of the encoded matrix ``X``."""
        labels = np.asarray(self.schema.classes, dtype=object)
        out = labels[self.predict_codes(X)]
        try:
            return out.astype(np.asarray(self.schema.classes).dtype)
        except (TypeError, ValueError):
            return out

    def _count(self, X, y):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.int64)
        return count_nodes(
            self.column, self.op, self.value, self.true_child, self.false_child, *self._csr(), X, y, self.n_classes
        )

    def evaluate(self, X: np.ndarray, y: np.ndarray) -> dict:
        """``errors``, ``accuracy`` and ``avg_tests`` (mean number of tests a row passes) on ``(X, y)``."""
        if len(y) == 0:
            return {"errors": 0, "accuracy": None, "avg_tests": None}
        errors = int(np.count_nonzero(self.predict_codes(X) != y))
        _, n_tests = self._count(X, y)
        return {"errors": errors, "accuracy": 1.0 - errors / len(y), "avg_tests": float(n_tests.mean())}

    @property
    def train_errors(self) -> int:
        """Training errors implied by the stored counts."""
        leaves = self.leaves
        c = self.counts[leaves]
        return int(c.sum() - c[np.arange(len(leaves)), self.prediction[leaves]].sum())

    @property
    def avg_tests(self) -> float:
        """Expected number of tests per training sample (DPDT's complexity), from the stored counts."""
        leaves = self.leaves
        n = self.counts[leaves].sum(axis=1)
        total = n.sum()
        return float((n * self.node_depth[leaves]).sum() / total) if total else 0.0

    def structure_key(self) -> tuple:
        """Hashable description of the reachable tests and leaf classes: equal keys mean the same tree."""
        key = []
        # plain lists: a set of 100,000 trees is keyed node by node, and numpy's scalars cost 10x as much
        col, op, val, pred = self.column.tolist(), self.op.tolist(), self.value.tolist(), self.prediction.tolist()
        for k in self.reachable().tolist():
            if col[k] >= 0 and op[k] == OP_MULTI:
                kids = self.child_list(k)
                lo, hi = self.child_offsets[k], self.child_offsets[k + 1]
                key.append(
                    (
                        int(self.column[k]),
                        OP_MULTI,
                        tuple(self.child_values[lo:hi].tolist()),
                        kids.index(int(self.false_child[k])),
                    )
                )
            elif col[k] >= 0:
                key.append((col[k], op[k], val[k]))
            else:
                key.append((-1, pred[k]))
        return tuple(key)

    # -- serialisation ---------------------------------------------------------------------------------
    def to_dict(self, with_schema: bool = True) -> dict:
        """JSON-ready dict; nodes listed by index with their test in original units."""
        nodes = []
        for k in range(self.n_nodes):
            node = {
                "id": k,
                "counts": self.counts[k].tolist(),
                "prediction": self.schema.class_name(self.prediction[k])
                if 0 <= self.prediction[k] < self.schema.n_classes
                else None,
                "prediction_code": int(self.prediction[k]),
            }
            if self.is_multi(k):
                lo, hi = self.child_offsets[k], self.child_offsets[k + 1]
                node.update(
                    {
                        "multiway": {
                            "column": int(self.column[k]),
                            "children": self.children[lo:hi].tolist(),
                            "values": self.child_values[lo:hi].tolist(),
                            "fallback": int(self.false_child[k]),
                        },
                        "text": self.node_text(k),
                        "feature": self.node_text(k),
                        "branches": [self.edge_text(k, c) for c in self.child_list(k)],
                    }
                )
            elif self.column[k] >= 0:
                if not np.isnan(self.display_value[k]):
                    node["display"] = format_number(self.display_value[k])  # shown threshold; "test" is exact
                node.update(
                    {
                        "test": self.condition(k).to_list(),
                        "missing": "true" if missing_true(self.op[k]) else "false",
                        "missing_rule": "learned" if self.shows_missing[k] else "larger branch",
                        "text": self.node_text(k),
                        "feature": self.schema.columns[self.column[k]].name,
                        "true": int(self.true_child[k]),
                        "false": int(self.false_child[k]),
                    }
                )
            nodes.append(node)
        d = {"nodes": nodes}
        if with_schema:
            d["schema"] = self.schema.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict, schema: Schema | None = None) -> Tree:
        """Inverse of :meth:`to_dict` (``schema`` given when the dict was written without one)."""
        schema = schema or Schema.from_dict(d["schema"])
        nodes = d["nodes"]
        n = len(nodes)
        column = np.full(n, -1, dtype=np.int64)
        op = np.zeros(n, dtype=np.int64)
        value = np.zeros(n)
        t = np.full(n, -1, dtype=np.int64)
        f = np.full(n, -1, dtype=np.int64)
        counts = np.zeros((n, schema.n_classes), dtype=np.int64)
        pred = np.zeros(n, dtype=np.int64)
        shown = np.full(n, np.nan)
        said = np.zeros(n, dtype=bool)
        multi = {}
        for node in nodes:
            k = node["id"]
            counts[k] = node["counts"]
            pred[k] = node["prediction_code"]
            if "test" in node:
                c = Condition.from_list(node["test"])
                column[k], op[k], value[k] = c.column, c.op, c.value
                if node.get("missing") == "true" and not missing_true(c.op):  # a gap's side by the rule
                    op[k] = OP_LE_RULE if c.op == OP_LE else OP_EQ_RULE
                t[k], f[k] = node["true"], node["false"]
                shown[k] = _shown_from_json(node.get("display"))
                said[k] = node.get("missing_rule") == "learned"
            elif "multiway" in node:
                m = node["multiway"]
                column[k], op[k], f[k] = m["column"], OP_MULTI, m["fallback"]
                multi[k] = (m["children"], m["values"])
        offsets, kids, codes = [0], [], []
        for k in range(n):
            if k in multi:
                kids += multi[k][0]
                codes += multi[k][1]
            offsets.append(len(kids))
        return cls(column, op, value, t, f, counts, pred, schema, offsets, kids, codes, shown, said)

    def __repr__(self) -> str:
        return f"Tree(splits={self.n_splits}, depth={self.depth}, classes={self.n_classes})"


def _shown_from_json(text) -> float:
    """A node's ``display`` string read back; one that is not a finite number shows the exact threshold."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return np.nan
    return v if np.isfinite(v) else np.nan


def class_text(schema: Schema, code: int) -> str:
    """Class ``code`` of ``schema`` as text reads: its label, or ``class 0`` when the label is a number (a
    bare ``0`` next to a percentage reads as a count).  Display only: JSON and predictions keep the label."""
    name = schema.class_name(code)
    return f"class {name}" if _numeric_label(schema.classes[int(code)]) else name


def _numeric_label(label) -> bool:
    """Whether a class label is a number (``0``, ``1.5``, ``"2"``): such labels read as ``class 0``."""
    if isinstance(label, (bool, int, float, np.number, np.bool_)):
        return True
    try:
        float(str(label).strip())
    except ValueError:
        return False
    return str(label).strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity")


def shortest_between(lo: float, hi: float, near: float) -> float:
    """The decimal with the fewest digits after the point (tens, hundreds... first) in ``(lo, hi)``,
    the one nearest ``near`` when several qualify; ``near`` itself when it is no longer or none is found.

    The result ``d`` satisfies ``lo < d < hi`` as floats, so ``x <= d`` and ``x <= near`` agree for every
    ``x <= lo`` or ``x >= hi``.
    """
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        return float(near)
    dlo, dhi, dnear = Decimal(float(lo)), Decimal(float(hi)), Decimal(float(near))
    top = int(np.floor(np.log10(max(abs(lo), abs(hi), 1e-300))))
    for places in range(min(-top, 0), 20 - top):  # places < 0: multiples of 10, 100, ...
        q = Decimal(1).scaleb(-places)
        first = (dlo / q).to_integral_value(ROUND_FLOOR) + 1  # smallest multiple of q above lo
        last = (dhi / q).to_integral_value(ROUND_CEILING) - 1  # largest multiple of q below hi
        if first > last:
            continue
        m = min(max((dnear / q).to_integral_value(), first), last)  # nearest to ``near`` in range
        shown = format_number(float(m * q))  # the text is what must lie in (lo, hi): format_number rounds
        if lo < float(shown) < hi:
            return float(near) if len(format_number(near)) <= len(shown) else float(shown)
    return float(near)


def shorten_thresholds(trees: Sequence[Tree], *matrices: np.ndarray) -> None:
    """Set ``display_value`` of every ``x <= value`` test of ``trees`` (see the module docstring).

    ``matrices`` are the encoded rows of the run (training rows, then any held-out rows): a test's shown
    threshold lies strictly between the values of its column that neighbour its exact threshold among
    all these rows, so the shown text classifies each of them as the tree does.  Each column is sorted
    once for every tree of the front.
    """
    rows = [np.asarray(m, dtype=np.float64) for m in matrices if m is not None and len(m)]
    if not rows:
        return
    used: dict[int, set] = {}
    for tree in trees:
        for k in tree.reachable():
            if tree.column[k] >= 0 and base_op(tree.op[k]) == OP_LE:
                used.setdefault(int(tree.column[k]), set()).add(float(tree.value[k]))
    shown: dict[tuple[int, float], float] = {}
    for col, values in used.items():
        t = np.fromiter(values, dtype=np.float64, count=len(values))
        lo, hi = np.full(len(t), -np.inf), np.full(len(t), np.inf)
        for m in rows:  # a sort per column and matrix (NaN sorts last and never bounds a threshold)
            x = np.sort(m[:, col])
            i = np.searchsorted(x, t, side="right")  # x[i - 1] <= t < x[i]
            below = np.where(i > 0, x[np.maximum(i - 1, 0)], -np.inf)
            above = np.where(i < len(x), x[np.minimum(i, len(x) - 1)], np.inf)
            lo, hi = np.maximum(lo, below), np.fmin(hi, np.where(np.isnan(above), np.inf, above))
        for v, a, b in zip(t.tolist(), lo.tolist(), hi.tolist()):
            shown[(col, v)] = shortest_between(a, b, v)  # an infinite side: the exact value stays
    for tree in trees:
        d = np.full(tree.n_nodes, np.nan)
        for k in range(tree.n_nodes):
            if tree.column[k] >= 0 and base_op(tree.op[k]) == OP_LE:
                d[k] = shown.get((int(tree.column[k]), float(tree.value[k])), np.nan)
        tree.display_value = d  # a new array: trees made by with_counts share the old one


def settle_missing(trees: Sequence[Tree], X_train: np.ndarray, counts: np.ndarray, packed: tuple) -> None:
    """Fix where a missing value goes at every binary node of ``trees`` (in place; see the module docstring).

    ``counts`` are the trees' training class counts node after node and ``packed`` their
    :func:`~treeexplorer.evaluate.pack_forest` arrays (whose ``op`` is updated too, so later passes over held-out
    rows route gaps the same way).  A node that training rows with a gap in its column reached keeps its learned
    side and says so (``shows_missing``); any other sends a gap to its child with more training rows.  Training
    rows never change paths: only gaps that no training row had are routed by the rule.
    """
    if not len(trees):
        return
    column, op, t_child, f_child = packed[1], packed[2], packed[4], packed[5]
    X = np.ascontiguousarray(X_train, dtype=np.float64)
    if np.isnan(X).any():
        gaps = missing_forest(*packed, X)
    else:
        gaps = np.zeros(column.shape[0], dtype=np.int64)
    binary = (column >= 0) & (op != OP_MULTI) & (op != OP_NA)
    size = counts.sum(axis=1)
    idx = np.flatnonzero(binary & (gaps == 0))
    true_bigger = size[t_child[idx]] >= size[f_child[idx]]
    base = BASE_OP[op[idx]]
    op[idx] = np.where(true_bigger, np.where(base == OP_LE, OP_LE_RULE, OP_EQ_RULE), base)
    shows = binary & (gaps > 0)
    bases = np.concatenate([packed[0], [column.shape[0]]])
    for i, tree in enumerate(trees):
        a, b = int(bases[i]), int(bases[i + 1])
        tree.op = op[a:b].copy()
        tree.shows_missing = shows[a:b].copy()
