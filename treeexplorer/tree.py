"""The one decision-tree model every solver, renderer, exporter and view shares.

A :class:`Tree` stores flat parallel arrays (node 0 is the root).  Internal node ``k`` tests the condition
``(column[k], op[k], value[k])`` on the encoded matrix (``x <= value`` or ``x == category code``); rows where
it holds go to ``true_child[k]``, the others to ``false_child[k]``.  Leaves have ``column == -1``.
``counts[k, c]`` is the number of training rows of class ``c`` reaching node ``k``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers import RawTree
from solvers._kernels.predict import apply_conditions, count_conditions
from treeexplorer.schema import OP_EQ, OP_LE, Condition, Schema

__all__ = ["Tree"]


class Tree:
    """A decision tree in the data's own units.

    Parameters
    ----------
    column, op, value, true_child, false_child : array-like of shape (n_nodes,)
        The node tests and children (see module docstring).
    counts : array-like of shape (n_nodes, n_classes)
        Training class counts per node.
    prediction : array-like of shape (n_nodes,)
        Class code predicted at each node (used at leaves).
    schema : Schema
        Column and class names for display.
    """

    def __init__(self, column, op, value, true_child, false_child, counts, prediction, schema: Schema):
        self.column = np.ascontiguousarray(column, dtype=np.int64)
        self.op = np.ascontiguousarray(op, dtype=np.int64)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.true_child = np.ascontiguousarray(true_child, dtype=np.int64)
        self.false_child = np.ascontiguousarray(false_child, dtype=np.int64)
        self.counts = np.ascontiguousarray(counts, dtype=np.int64).reshape(len(self.column), -1)
        self.prediction = np.ascontiguousarray(prediction, dtype=np.int64)
        self.schema = schema
        self._depths = None

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
        for k in range(n):
            j = raw.feature[k]
            if j < 0:
                continue
            feat = features[j]
            if isinstance(feat, Condition):
                if not 0.0 <= raw.threshold[k] < 1.0:
                    raise ValueError(f"binary test {j} split at {raw.threshold[k]}, expected 0.5")
                column[k], op[k], value[k] = feat.column, feat.op, feat.value
                t_child[k], f_child[k] = raw.right[k], raw.left[k]
            else:
                column[k], op[k], value[k] = int(feat), OP_LE, raw.threshold[k]
                t_child[k], f_child[k] = raw.left[k], raw.right[k]
        return cls(column, op, value, t_child, f_child, raw.value, raw.prediction, schema)

    def with_counts(self, X: np.ndarray, y: np.ndarray) -> Tree:
        """Same tree with ``counts`` recomputed on ``(X, y)`` (predictions unchanged)."""
        counts, _ = self._count(X, y)
        return Tree(self.column, self.op, self.value, self.true_child, self.false_child, counts,
                    self.prediction, self.schema)

    # -- structure -------------------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return int(self.column.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[1])

    def is_leaf(self, k: int) -> bool:
        return bool(self.column[k] < 0)

    def reachable(self) -> np.ndarray:
        """Indices of the nodes reachable from the root, in depth-first (true side first) order."""
        order, stack = [], [0]
        while stack:
            k = stack.pop()
            order.append(k)
            if self.column[k] >= 0:
                stack.append(int(self.false_child[k]))
                stack.append(int(self.true_child[k]))
        return np.asarray(order, dtype=np.int64)

    @property
    def node_depth(self) -> np.ndarray:
        """Depth of every node (root 0; unreachable nodes -1)."""
        if self._depths is None:
            d = np.full(self.n_nodes, -1, dtype=np.int64)
            d[0] = 0
            for k in self.reachable():
                if self.column[k] >= 0:
                    d[self.true_child[k]] = d[self.false_child[k]] = d[k] + 1
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
        return self.n_splits + 1

    @property
    def depth(self) -> int:
        return int(self.node_depth[self.leaves].max())

    def condition(self, k: int) -> Condition:
        if self.column[k] < 0:
            raise ValueError(f"node {k} is a leaf")
        return Condition(int(self.column[k]), int(self.op[k]), float(self.value[k]))

    def node_text(self, k: int, negate: bool = False) -> str:
        """The test at node ``k`` in original units (``petal_length ≤ 2.45``)."""
        return self.condition(k).text(self.schema, negate)

    def leaf_label(self, k: int) -> str:
        return self.schema.class_name(self.prediction[k])

    def paths(self) -> list[tuple[int, list[tuple[int, bool]]]]:
        """For each leaf, the ``(node, holds)`` tests on the way from the root."""
        out, stack = [], [(0, [])]
        while stack:
            k, path = stack.pop()
            if self.column[k] < 0:
                out.append((k, path))
                continue
            stack.append((int(self.false_child[k]), path + [(k, False)]))
            stack.append((int(self.true_child[k]), path + [(k, True)]))
        return out

    # -- prediction and metrics ------------------------------------------------------------------------
    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf index reached by each row of the encoded matrix ``X``."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        return apply_conditions(self.column, self.op, self.value, self.true_child, self.false_child, X)

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
        return count_conditions(self.column, self.op, self.value, self.true_child, self.false_child, X, y,
                                self.n_classes)

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
        for k in self.reachable():
            if self.column[k] >= 0:
                key.append((int(self.column[k]), int(self.op[k]), float(self.value[k])))
            else:
                key.append((-1, int(self.prediction[k])))
        return tuple(key)

    # -- serialisation ---------------------------------------------------------------------------------
    def to_dict(self, with_schema: bool = True) -> dict:
        """JSON-ready dict; nodes listed by index with their test in original units."""
        nodes = []
        for k in range(self.n_nodes):
            node = {"id": k, "counts": self.counts[k].tolist(), "prediction": self.schema.class_name(
                self.prediction[k]) if 0 <= self.prediction[k] < self.schema.n_classes else None,
                "prediction_code": int(self.prediction[k])}
            if self.column[k] >= 0:
                node.update({"test": self.condition(k).to_list(), "text": self.node_text(k),
                             "feature": self.schema.columns[self.column[k]].name,
                             "true": int(self.true_child[k]), "false": int(self.false_child[k])})
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
        for node in nodes:
            k = node["id"]
            counts[k] = node["counts"]
            pred[k] = node["prediction_code"]
            if "test" in node:
                c = Condition.from_list(node["test"])
                column[k], op[k], value[k] = c.column, c.op, c.value
                t[k], f[k] = node["true"], node["false"]
        return cls(column, op, value, t, f, counts, pred, schema)

    def __repr__(self) -> str:
        return f"Tree(splits={self.n_splits}, depth={self.depth}, classes={self.n_classes})"


# Re-exported for renderers that colour by operator.
OPS = {OP_LE: "≤", OP_EQ: "="}
