"""What the columns mean: schema of a table and binary conditions in original units.

Every table is encoded once into a float64 matrix ``X_enc``: numeric columns as they are, categorical
columns as integer codes ``0..k-1`` (indices into ``Column.categories``), a missing value as NaN.

Missing values
--------------
A test sends the rows whose value is missing to one side, and its op says which: ``x <= v`` (``OP_LE``) and
``x = c`` (``OP_EQ``) are false on a gap, ``x <= v or missing`` (``OP_LE_NA``) and ``x = c or missing``
(``OP_EQ_NA``) true; ``x is missing`` (``OP_NA``) tests the gap itself.  A :class:`Condition` whose column had
gaps where it was learned says so in its text (``shows_missing``): ``bill_length_mm <= 42.35 or missing`` /
``bill_length_mm > 42.35``, or ``bill_length_mm <= 42.35`` / ``bill_length_mm > 42.35 or missing``.  One learned
where no training row had a gap still sends a gap one way (a tree's nodes: the branch with more training rows,
see :class:`treeexplorer.Tree`) but its text stays short.  A :class:`Condition` is one
binary test on ``X_enc`` ("age <= 42.5", "colour = red"); a :class:`Binarization` is the ordered list of
conditions a discretizer produced and turns ``X_enc`` into the 0/1 matrix binary solvers need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Column",
    "Schema",
    "Condition",
    "Binarization",
    "format_number",
    "OP_LE",
    "OP_EQ",
    "OP_MULTI",
    "OP_LE_NA",
    "OP_EQ_NA",
    "OP_NA",
    "OP_LE_RULE",
    "OP_EQ_RULE",
    "base_op",
    "BASE_OP",
    "missing_true",
    "with_missing",
]

# The kernels in treeexplorer.solvers._kernels.predict read these codes (its ``holds``): keep them in step.
OP_LE = 0  # x <= value (false on a missing value)
OP_EQ = 1  # x == value (category code; false on a missing value)
OP_MULTI = 2  # multiway node of a Tree: one child per category code (never a Condition)
OP_LE_NA = 3  # x <= value or missing
OP_EQ_NA = 4  # x == value or missing
OP_NA = 5  # x is missing
# A Tree's node only (never a Condition): the test x <= value / x == value, whose training rows had no gap, sending
# a gap to its true child by the larger-branch rule (treeexplorer.tree.settle_missing).
OP_LE_RULE = 6
OP_EQ_RULE = 7


# ``BASE_OP[op]``: the test whatever its missing side (indexed by op; works on arrays of ops too)
BASE_OP = np.array([OP_LE, OP_EQ, OP_MULTI, OP_LE, OP_EQ, OP_NA, OP_LE, OP_EQ], dtype=np.int64)


def base_op(op: int) -> int:
    """``OP_LE`` or ``OP_EQ`` for a threshold or category test whatever its missing side (``OP_NA`` stays)."""
    return int(BASE_OP[int(op)])


def missing_true(op: int) -> bool:
    """Whether a test of ``op`` holds on a missing value."""
    return int(op) in (OP_LE_NA, OP_EQ_NA, OP_NA, OP_LE_RULE, OP_EQ_RULE)


def with_missing(op: int, true: bool) -> int:
    """The op of the same test sending missing values to its true side (``true``) or its false side."""
    b = base_op(op)
    if b == OP_NA:
        return b
    return (OP_LE_NA if b == OP_LE else OP_EQ_NA) if true else b


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
    """A binary test on one column of ``X_enc``: ``x <= value`` (numeric), ``x == value`` (category code) or
    ``x is missing``, with the side a missing value takes in its op (see the module docstring).

    ``shows_missing``: the text says where a missing value goes (its column had gaps where it was learned)."""

    column: int
    op: int  # OP_LE, OP_EQ, OP_LE_NA, OP_EQ_NA or OP_NA
    value: float
    shows_missing: bool = False

    def evaluate(self, X_enc: np.ndarray) -> np.ndarray:
        """Boolean vector: which rows satisfy the condition (a missing value as its op says)."""
        x = X_enc[:, self.column]
        b = base_op(self.op)
        if b == OP_NA:
            return np.isnan(x)
        out = x <= self.value if b == OP_LE else x == self.value
        return out | np.isnan(x) if missing_true(self.op) else out

    def text(self, schema: Schema, negate: bool = False) -> str:
        """The test in the data's own units, e.g. ``petal_length <= 2.45``, ``colour = red`` or
        ``bill_length_mm <= 42.35 or missing``."""
        col = schema.columns[self.column]
        b = base_op(self.op)
        if b == OP_NA:
            return f"{col.name} {'is present' if negate else 'is missing'}"
        if b == OP_EQ:
            if col.categories is not None and 0 <= int(self.value) < len(col.categories):
                shown = str(col.categories[int(self.value)])
            else:
                shown = format_number(self.value)
            out = f"{col.name} {'≠' if negate else '='} {shown}"
        else:
            out = f"{col.name} {'>' if negate else '≤'} {format_number(self.value)}"
        # the side a gap takes: the true side for the "or missing" ops, else the false side
        return out + " or missing" if self.shows_missing and missing_true(self.op) != negate else out

    def ascii_text(self, schema: Schema, negate: bool = False) -> str:
        """As :meth:`text` with ASCII operators (``<=``, ``>``, ``=``, ``!=``) for rules files."""
        return self.text(schema, negate).replace("≤", "<=").replace("≠", "!=")

    def to_list(self) -> list:
        """``[column, "<=" | "==", value]``, with ``"or missing"`` appended when a gap satisfies it;
        ``[column, "missing", 0.0]`` for ``x is missing``."""
        b = base_op(self.op)
        if b == OP_NA:
            return [int(self.column), "missing", 0.0]
        out = [int(self.column), "<=" if b == OP_LE else "==", float(self.value)]
        return out + ["or missing"] if missing_true(self.op) else out

    @classmethod
    def from_list(cls, v) -> Condition:
        if v[1] == "missing":
            return cls(int(v[0]), OP_NA, 0.0)
        op = OP_LE if v[1] == "<=" else OP_EQ
        return cls(int(v[0]), with_missing(op, len(v) > 3 and v[3] == "or missing"), float(v[2]))


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
