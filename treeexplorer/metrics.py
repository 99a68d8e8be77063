"""The metrics schema: which numbers every tree of a front carries, in which order, under which label.

One home for the key list that :func:`treeexplorer.front.compute_metrics` fills, the front JSON stores,
:meth:`treeexplorer.Front.to_frame` orders and the CLI, exports and app display.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Metric",
    "METRICS",
    "METRIC_KEYS",
    "COMPLEXITY_MEASURES",
    "LEAD_COLUMNS",
    "PER_CLASS_METRICS",
    "SCORE_METRICS",
    "score_key",
]


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
    # the objective's measures (treeexplorer.objective): the cost sum_i w_i C[y_i, yhat_i] (the errors when
    # plain) and the mean recall over the classes
    Metric("train_cost", "train cost", "float"),
    Metric("train_balanced_accuracy", "train balanced accuracy", "float"),
    Metric("test_cost", "held-out cost", "float", held_out=True),
    Metric("test_balanced_accuracy", "held-out balanced accuracy", "float", held_out=True),
)
METRIC_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS)
COMPLEXITY_MEASURES: tuple[str, ...] = tuple(m.key for m in METRICS if m.complexity)
# The columns a table of trees starts with (Front.to_frame): what a reader compares first.
LEAD_COLUMNS: tuple[str, ...] = ("id", "splits", "depth", "train_accuracy", "test_accuracy", "optimal")
# Per-class lists each tree also carries (one value per class, None where no row counts): not table columns.
PER_CLASS_METRICS: tuple[str, ...] = ("train_recall", "train_precision", "test_recall", "test_precision")
# What a front can be scored and drawn by (the plot's y-axis): key suffix -> (label, larger is better).
SCORE_METRICS: dict[str, tuple[str, bool]] = {
    "accuracy": ("accuracy", True),
    "balanced_accuracy": ("balanced accuracy", True),
    "cost": ("cost", False),
}


def score_key(score: str, held_out: bool = False) -> str:
    """The metrics key of a score of :data:`SCORE_METRICS` on the training (or held-out) rows."""
    if score not in SCORE_METRICS:
        raise ValueError(f"unknown score {score!r}; choose one of {', '.join(SCORE_METRICS)}")
    return f"{'test' if held_out else 'train'}_{score}"
