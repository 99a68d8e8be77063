"""The metrics schema: which numbers every tree of a front carries, in which order, under which label.

One home for the key list that :func:`treeexplorer.front.compute_metrics` fills, the front JSON stores,
:meth:`treeexplorer.Front.to_frame` orders and the CLI, exports and app display.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Metric", "METRICS", "METRIC_KEYS", "COMPLEXITY_MEASURES", "LEAD_COLUMNS"]


@dataclass(frozen=True)
class Metric:
    """One metric of a tree.

    Parameters
    ----------
    key : str
        Key in ``FrontTree.metrics`` and in the front JSON.
    label : str
        Short human name.
    kind : {"int", "float"}
    complexity : bool
        A complexity measure (smaller is simpler): a front can be drawn and filtered along it.
    held_out : bool
        Computed on the held-out rows (``None`` without them).
    """

    key: str
    label: str
    kind: str
    complexity: bool = False
    held_out: bool = False


METRICS: tuple[Metric, ...] = (
    Metric("splits", "splits", "int", complexity=True),
    Metric("leaves", "leaves", "int", complexity=True),
    Metric("depth", "depth", "int", complexity=True),
    Metric("avg_tests", "tests/sample", "float", complexity=True),
    Metric("train_accuracy", "train accuracy", "float"),
    Metric("train_errors", "train errors", "int"),
    Metric("test_accuracy", "held-out accuracy", "float", held_out=True),
    Metric("test_errors", "held-out errors", "int", held_out=True),
    Metric("test_avg_tests", "held-out tests/sample", "float", held_out=True),
)
METRIC_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS)
COMPLEXITY_MEASURES: tuple[str, ...] = tuple(m.key for m in METRICS if m.complexity)
# The columns a table of trees starts with (Front.to_frame): what a reader compares first.
LEAD_COLUMNS: tuple[str, ...] = ("id", "splits", "depth", "train_accuracy", "test_accuracy", "optimal")
