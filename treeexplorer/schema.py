"""What the columns mean: schema of a table and binary conditions in original units.

Every table is encoded once into a float64 matrix ``X_enc``: numeric columns as they are, categorical
columns as integer codes ``0..k-1`` (indices into ``Column.categories``).  A :class:`Condition` is one
binary test on ``X_enc`` ("age <= 42.5", "colour = red"); a :class:`Binarization` is the ordered list of
conditions a discretizer produced and turns ``X_enc`` into the 0/1 matrix binary solvers need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Column", "Schema", "Condition", "Binarization", "format_number", "OP_LE", "OP_EQ", "OP_MULTI"]

OP_LE = 0  # x <= value
OP_EQ = 1  # x == value (category code)
OP_MULTI = 2  # multiway node of a Tree: one child per category code (never a Condition)


def format_number(x: float) -> str:
    """Short, exact-enough text for a threshold: 2.45, 42.5, 0.0001235, 1.5e+06."""
    x = float(x)
    if not np.isfinite(x):  # e.g. the alpha at which CART's last pruned tree stops being optimal
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    for digits in range(3, 17):
        s = f"{x:.{digits}g}"
        if float(s) == x or digits >= 6 and abs(float(s) - x) <= 1e-9 * max(1.0, abs(x)):
            return s
    return repr(x)


@dataclass(frozen=True)
class Column:
    """One feature column.

    Parameters
    ----------
    name : str
    kind : {"numeric", "categorical"}
    categories : tuple, optional
        Original values of a categorical column; code ``i`` in ``X_enc`` means ``categories[i]``.
    """

    name: str
    kind: str
    categories: tuple | None = None

    @property
    def is_categorical(self) -> bool:
        return self.kind == "categorical"


@dataclass(frozen=True)
class Schema:
    """Feature columns, target name and class labels (original values, in code order)."""

    columns: tuple[Column, ...]
    target: str
    classes: tuple

    @property
    def n_features(self) -> int:
        return len(self.columns)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def feature_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def class_name(self, k: int) -> str:
        return str(self.classes[int(k)])

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "classes": [_jsonable(c) for c in self.classes],
            "columns": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    **({"categories": [_jsonable(v) for v in c.categories]} if c.categories else {}),
                }
                for c in self.columns
            ],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Schema:
        cols = tuple(
            Column(c["name"], c["kind"], tuple(c["categories"]) if c.get("categories") else None) for c in d["columns"]
        )
        return cls(cols, d["target"], tuple(d["classes"]))


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


@dataclass(frozen=True)
class Condition:
    """A binary test on one column of ``X_enc``: ``x <= value`` (numeric) or ``x == value`` (category code)."""

    column: int
    op: int  # OP_LE or OP_EQ
    value: float

    def evaluate(self, X_enc: np.ndarray) -> np.ndarray:
        """Boolean vector: which rows satisfy the condition."""
        x = X_enc[:, self.column]
        return x <= self.value if self.op == OP_LE else x == self.value

    def text(self, schema: Schema, negate: bool = False) -> str:
        """The test in the data's own units, e.g. ``petal_length <= 2.45`` or ``colour = red``."""
        col = schema.columns[self.column]
        if self.op == OP_EQ:
            if col.categories is not None and 0 <= int(self.value) < len(col.categories):
                shown = str(col.categories[int(self.value)])
            else:
                shown = format_number(self.value)
            return f"{col.name} {'≠' if negate else '='} {shown}"
        return f"{col.name} {'>' if negate else '≤'} {format_number(self.value)}"

    def ascii_text(self, schema: Schema, negate: bool = False) -> str:
        """As :meth:`text` with ASCII operators (``<=``, ``>``, ``=``, ``!=``) for rules files."""
        return self.text(schema, negate).replace("≤", "<=").replace("≠", "!=")

    def to_list(self) -> list:
        return [int(self.column), "<=" if self.op == OP_LE else "==", float(self.value)]

    @classmethod
    def from_list(cls, v) -> Condition:
        return cls(int(v[0]), OP_LE if v[1] == "<=" else OP_EQ, float(v[2]))


@dataclass
class Binarization:
    """Ordered binary tests produced by a discretizer.

    Parameters
    ----------
    conditions : list of Condition
        Column ``j`` of the 0/1 matrix is 1 where ``conditions[j]`` holds.
    method : str
        Discretizer name (provenance).
    gains : ndarray, optional
        Gain of each test where the method defines one (MID, MDLP).
    notices : list of str
        What the discretizer decided on its own (dropped constant columns, ...), shown to the user.
    """

    conditions: list[Condition]
    method: str
    gains: np.ndarray | None = None
    notices: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.conditions)

    def transform(self, X_enc: np.ndarray) -> np.ndarray:
        """0/1 uint8 matrix ``(n, len(self))`` for any rows encoded with the same schema."""
        X_enc = np.asarray(X_enc, dtype=np.float64)
        out = np.empty((X_enc.shape[0], len(self.conditions)), dtype=np.uint8)
        for j, c in enumerate(self.conditions):
            out[:, j] = c.evaluate(X_enc)
        return out

    def describe(self, schema: Schema) -> list[dict]:
        """One dict per test: index, column name, readable text, gain (``None`` where undefined)."""
        rows = []
        for j, c in enumerate(self.conditions):
            rows.append(
                {
                    "index": j,
                    "feature": schema.columns[c.column].name,
                    "test": c.text(schema),
                    "gain": None if self.gains is None else float(self.gains[j]),
                }
            )
        return rows
