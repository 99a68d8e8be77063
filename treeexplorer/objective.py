"""The objective a run minimises, stated once: the total cost ``sum_i w[i] * C[y[i], yhat[i]]``.

:class:`Objective` is what a caller asks for (``class_weight``, ``costs``; row weights come with the data, see
:func:`treeexplorer.data.load_dataset`'s ``weights``), checked for its form at the run request and resolved
against the classes and the training rows (:meth:`Objective.resolve`) into :class:`Weights`: the float64 row
weights of the training and held-out rows (class weights folded in) and the cost matrix the solvers take.  How a
leaf predicts and what a tree costs are :mod:`treeexplorer.solvers._objective`'s; which metrics a front reports
on top of accuracy (cost, balanced accuracy, per-class recall and precision), their labels, and the sentence the
optimality claim uses are here.  Plain misclassification (no weights, no costs) is the default: every solver
then runs its unweighted path and every number and line of output stays as it was.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from treeexplorer.solvers._objective import Weighting, weighted

__all__ = [
    "Objective",
    "Weights",
    "ObjectiveError",
    "CLASS_WEIGHT_MODES",
    "weighted_solvers",
    "objective_notices",
    "unit_score",
    "WEIGHT_FREE",
    "check_row_weights",
    "parse_class_weight",
    "parse_costs",
]

# The app's "Weigh the classes" choices.
CLASS_WEIGHT_MODES = ("none", "balanced", "per class")


# Solvers whose claim weights cannot change, which run unweighted with this line as a notice.
WEIGHT_FREE = {
    "sat": "sat looks for trees with no training error: such a tree costs 0 whatever the weights and costs, so "
    "it runs unweighted",
}
# Discretizers that rank thresholds by the labels (and do so on unweighted counts).
LABEL_DISCRETIZERS = ("mid", "mdlp")


class ObjectiveError(ValueError):
    """A class weight, row weight or cost matrix that cannot be used; the message says which and what to do."""


def _short(v) -> str:
    return repr(v)[:80] + (" (text)" if isinstance(v, str) else "")


def _real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def weighted_solvers() -> list[str]:
    """The registered solvers whose spec says they minimise a weighted cost (``SolverSpec.weighted``)."""
    from treeexplorer.registry import available_solvers, get_solver

    return [name for name in available_solvers() if get_solver(name).weighted]


def check_row_weights(w, what: str = "sample_weight", rows=None) -> np.ndarray:
    """``w`` as float64 row weights, finite, >= 0 and not all zero; else one line naming ``what`` and the row.

    ``rows`` are the row numbers messages use (default: counted from 1)."""
    try:
        a = np.asarray(w, dtype=np.float64)
    except (TypeError, ValueError):
        raise ObjectiveError(f"{what} must hold numbers (one weight per row)") from None
    if a.ndim != 1:
        raise ObjectiveError(f"{what} must be one weight per row (1-D), got shape {a.shape}")
    bad = ~np.isfinite(a) | (a < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(rows[i]) if rows is not None else i + 1
        kind = "missing" if np.isnan(a[i]) else "infinite" if np.isinf(a[i]) else "negative"
        more = f" (and {int(bad.sum()) - 1} other row(s))" if bad.sum() > 1 else ""
        raise ObjectiveError(
            f"{what}: row {row} weighs {float(a[i]):g}, {kind}{more}; weights must be finite numbers >= 0"
        )
    if a.size and not (a > 0).any():
        raise ObjectiveError(f"{what}: every weight is zero; give at least one row a positive weight")
    return a


def parse_class_weight(text: str) -> str | dict:
    """The CLI's ``--class-weight balanced|CLASS=W,...`` as :class:`Objective` takes it (weights as numbers)."""
    if text.strip() == "balanced":
        return "balanced"
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.rpartition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            name = ""
        if not sep or not name.strip():
            raise ObjectiveError(f"--class-weight: {part!r} is not CLASS=WEIGHT; give balanced or e.g. yes=5,no=1")
    if not out:
        raise ObjectiveError("--class-weight: give balanced or CLASS=WEIGHT pairs, e.g. yes=5,no=1")
    return out


def parse_costs(text: str) -> dict:
    """The CLI's ``--costs TRUE:PRED=C,...`` as :class:`Objective` takes it (``{(true, predicted): cost}``)."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        pair, sep, value = part.rpartition("=")
        true, colon, pred = pair.partition(":")
        try:
            c = float(value)
        except ValueError:
            sep = ""
        if not sep or not colon or not true.strip() or not pred.strip():
            raise ObjectiveError(
                f"--costs: {part!r} is not TRUE:PREDICTED=COST; e.g. --costs malignant:benign=10 (a missed "
                "malignant case costs 10)"
            )
        out[(true.strip(), pred.strip())] = c
    if not out:
        raise ObjectiveError("--costs: give TRUE:PREDICTED=COST pairs, e.g. malignant:benign=10")
    return out


def _class_index(schema, name, what: str) -> int:
    """The code of class ``name`` (its label, or its text as the CLI gives it); else one line naming the classes."""
    classes = list(schema.classes)
    for i, c in enumerate(classes):
        if c == name or (not isinstance(name, bool) and str(c) == str(name)):
            return i
    shown = ", ".join(map(str, classes[:10])) + (" ..." if len(classes) > 10 else "")
    raise ObjectiveError(f"{what}: {name!r} is not a class of {schema.target!r} (its classes: {shown})")


@dataclass(frozen=True)
class Objective:
    """What a run minimises, as the caller asked for it (checked for its form; see :meth:`resolve`).

    Parameters
    ----------
    class_weight : "balanced", dict or None
        ``"balanced"``: scikit-learn's ``n / (k * n_c)`` on the training rows (the cost is then
        ``1 - balanced accuracy``, scaled); a mapping ``{class: weight}`` (classes not named weigh 1).
    costs : dict, k x k array or None
        ``{(true, predicted): cost}`` (pairs not named: 0 on the diagonal, 1 elsewhere) or a full matrix
        ``costs[true][predicted]`` in the order of the classes.
    """

    class_weight: str | tuple | None = None
    costs: tuple | None = None

    @classmethod
    def build(cls, class_weight=None, costs=None) -> Objective:
        """Check the form of ``class_weight`` and ``costs`` (one line each); the class names are checked by
        :meth:`resolve`, once the classes are known."""
        if isinstance(class_weight, Objective):
            return class_weight
        cw = None
        if class_weight is not None:
            if isinstance(class_weight, str):
                if class_weight != "balanced":
                    raise ObjectiveError(
                        f"class_weight must be 'balanced' or a mapping {{class: weight}}, got {_short(class_weight)}"
                    )
                cw = "balanced"
            elif isinstance(class_weight, Mapping):
                items = []
                for k, v in class_weight.items():
                    if not _real(v) or not math.isfinite(v) or v < 0:
                        raise ObjectiveError(
                            f"class_weight: the weight of class {k!r} must be a finite number >= 0, got {_short(v)}"
                        )
                    items.append((k.item() if isinstance(k, np.generic) else k, float(v)))
                cw = tuple(items) or None
            else:
                raise ObjectiveError(
                    f"class_weight must be 'balanced' or a mapping {{class: weight}}, got {_short(class_weight)}"
                )
        c = None
        if costs is not None:
            if isinstance(costs, Mapping):
                items = []
                for k, v in costs.items():
                    if not isinstance(k, tuple) or len(k) != 2:
                        raise ObjectiveError(f"costs: key {_short(k)} must be a pair (true class, predicted class)")
                    if not _real(v) or not math.isfinite(v) or v < 0:
                        raise ObjectiveError(
                            f"costs: the cost of predicting {k[1]!r} for {k[0]!r} must be a finite number >= 0, "
                            f"got {_short(v)}"
                        )
                    items.append((("pair",) + tuple(x.item() if isinstance(x, np.generic) else x for x in k), float(v)))
                c = tuple(items) or None
            else:
                try:
                    m = np.asarray(costs, dtype=np.float64)
                except (TypeError, ValueError):
                    raise ObjectiveError(
                        "costs must be a mapping {(true, predicted): cost} or a k x k matrix of numbers"
                    ) from None
                if m.ndim != 2 or m.shape[0] != m.shape[1]:
                    raise ObjectiveError(f"costs: a cost matrix must be square (k x k), got shape {m.shape}")
                if not np.isfinite(m).all() or (m < 0).any():
                    raise ObjectiveError("costs: every cost must be a finite number >= 0")
                c = (("matrix",), tuple(map(tuple, m.tolist())))
        return cls(cw, c)

    @property
    def plain(self) -> bool:
        """No class weights and no costs (row weights may still come with the data)."""
        return self.class_weight is None and self.costs is None

    def cost_matrix(self, schema) -> np.ndarray | None:
        """The ``(k, k)`` float64 cost matrix for ``schema``'s classes (None: the default ``1 - I``)."""
        if self.costs is None:
            return None
        k = schema.n_classes
        if self.costs[0] == ("matrix",):
            m = np.asarray(self.costs[1], dtype=np.float64)
            if m.shape != (k, k):
                raise ObjectiveError(
                    f"costs: the matrix is {m.shape[0]} x {m.shape[1]} but {schema.target!r} has {k} classes "
                    f"({', '.join(map(str, schema.classes[:10]))}); give a {k} x {k} matrix in that order"
                )
            return m
        m = 1.0 - np.eye(k)
        for (_, true, pred), v in self.costs:
            m[_class_index(schema, true, "costs"), _class_index(schema, pred, "costs")] = v
        return m

    def class_weights(self, schema, y_train: np.ndarray, w_train: np.ndarray | None = None) -> np.ndarray | None:
        """One weight per class (float64, length k), or None for none.

        ``balanced`` is scikit-learn's ``n / (k * n_c)`` over the training rows, counted as rows whatever their
        own weights (as ``compute_sample_weight``, whose result scikit-learn multiplies into the row weights); a
        class absent from the training rows weighs 0 (it has no rows to weigh)."""
        if self.class_weight is None:
            return None
        k = schema.n_classes
        if self.class_weight == "balanced":
            counts = np.bincount(y_train, minlength=k).astype(np.float64)
            present = counts > 0
            out = np.zeros(k)
            out[present] = len(y_train) / (np.count_nonzero(present) * counts[present])
            return out
        out = np.ones(k)
        for name, v in self.class_weight:
            out[_class_index(schema, name, "class_weight")] = v
        return out

    def resolve(self, schema, y_train, w_train=None, y_test=None, w_test=None, source: str | None = None) -> Weights:
        """The weights and costs of a run on these rows (``w_*``: the data's own row weights, or None).

        Raises :class:`ObjectiveError` (one line) for a class that is not one of ``schema``'s, a matrix of the
        wrong shape, or weights that leave every training row at 0."""
        cw = self.class_weights(schema, y_train, w_train)
        costs = self.cost_matrix(schema)

        def fold(y, w):
            if cw is None:
                return None if w is None else np.asarray(w, dtype=np.float64)
            return cw[y] if w is None else np.asarray(w, dtype=np.float64) * cw[y]

        train, test = fold(y_train, w_train), None if y_test is None else fold(y_test, w_test)
        if train is not None and len(train) and not (train > 0).any():
            raise ObjectiveError(
                "every training row weighs 0 with these class weights and row weights; give at least one row of "
                "a class a positive weight"
            )
        weighting = weighted(train, costs, np.asarray(y_train), schema.n_classes)
        return Weights(self, weighting, test, schema.n_classes, cw, source if w_train is not None else None)

    def score(self, source: str | None = None) -> str:
        """What this objective optimises as a score of :data:`treeexplorer.metrics.SCORE_METRICS` (the plot's
        default axis): ``accuracy`` when plain, ``balanced_accuracy`` for balanced class weights alone (the
        cost is then ``1 - balanced accuracy``, scaled), else ``cost``."""
        if self.plain and not source:
            return "accuracy"
        if self.class_weight == "balanced" and self.costs is None and not source:
            return "balanced_accuracy"
        return "cost"

    def describe(self, source: str | None = None) -> str:
        """The objective in words: "the cost with balanced class weights", "misclassifications" when plain."""
        parts = []
        if self.class_weight == "balanced":
            parts.append("balanced class weights")
        elif self.class_weight is not None:
            parts.append("class weights " + ", ".join(f"{k}={v:g}" for k, v in self.class_weight))
        if source:
            parts.append(f"row weights from {source}")
        if self.costs is not None:
            if self.costs[0] == ("matrix",):
                parts.append("a cost matrix")
            else:
                parts.append("costs " + ", ".join(f"{t}:{p}={v:g}" for (_, t, p), v in self.costs))
        if not parts:
            return "misclassifications"
        return "the cost with " + " and ".join(parts)


@dataclass(frozen=True)
class Weights:
    """An :class:`Objective` resolved on a run's rows: what the solvers and the metrics use.

    Attributes
    ----------
    objective : Objective
    weighting : solvers._objective.Weighting
        The training rows' weights (class weights folded in) and the cost matrix, as the solvers take them
        (``weighting.plain``: plain misclassification).
    test : ndarray or None
        The held-out rows' weights (class weights folded in), None for ones.
    n_classes : int
    class_weight : ndarray or None
        The weight of each class (None: none).
    source : str or None
        Where the row weights came from (``column 'w'``, ``sample_weight``), None without row weights.
    """

    objective: Objective
    weighting: Weighting
    test: np.ndarray | None
    n_classes: int
    class_weight: np.ndarray | None = None
    source: str | None = None

    @property
    def plain(self) -> bool:
        return self.weighting.plain

    @property
    def sample_weight(self) -> np.ndarray | None:
        return self.weighting.sample_weight

    @property
    def costs(self) -> np.ndarray | None:
        return self.weighting.costs

    @property
    def text(self) -> str:
        """The objective in words (:meth:`Objective.describe`)."""
        return self.objective.describe(self.source)

    @property
    def score(self) -> str:
        """The score this run optimised (:meth:`Objective.score`)."""
        return "accuracy" if self.plain else self.objective.score(self.source)

    def solver_kwargs(self, spec) -> dict:
        """The keyword arguments a solver takes for this objective: none when plain; ``sample_weight`` and
        ``costs`` for a spec with ``weighted=True``; else one line naming the solvers that take weights."""
        if self.plain or (not spec.weighted and spec.name in WEIGHT_FREE):
            return {}
        if not spec.weighted:
            raise ObjectiveError(
                f"solver {spec.name!r} does not take weights or costs (asked: {self.text}); the solvers that do: "
                f"{', '.join(weighted_solvers()) or 'none registered'}"
            )
        return {"sample_weight": self.sample_weight, "costs": self.costs}

    def row_weights(self, y: np.ndarray, held_out: bool = False) -> np.ndarray | None:
        """The weights of the training rows (or, ``held_out``, the held-out ones); None for ones."""
        return self.test if held_out else self.weighting.sample_weight

    def to_dict(self, schema, n_train: int = 0, n_test: int = 0) -> dict:
        """The front JSON's ``weights``: the objective in words, the score it optimises, the class weights, the
        cost matrix, and the total weight of the training and held-out rows (``n_train``, ``n_test`` rows)."""
        train = self.weighting.sample_weight
        out = {
            "objective": self.text,
            "score": self.score,
            "train_weight": float(n_train if train is None else train.sum()),
            "test_weight": float(n_test if self.test is None else self.test.sum()),
        }
        if self.class_weight is not None:
            out["class_weight"] = {str(c): float(v) for c, v in zip(schema.classes, self.class_weight)}
            if self.objective.class_weight == "balanced":
                out["class_weight_mode"] = "balanced"
        if self.source:
            out["sample_weight"] = self.source
        if self.costs is not None:
            out["costs"] = self.costs.tolist()
        return out


def objective_notices(weights: Weights, spec, discretizer: str) -> list[str]:
    """The lines a weighted run adds to its notices: a solver the weights cannot change, a discretizer that ranks
    its tests without them."""
    if weights.plain:
        return []
    out = []
    if not spec.weighted and spec.name in WEIGHT_FREE:
        out.append(WEIGHT_FREE[spec.name])
    if discretizer in LABEL_DISCRETIZERS:
        out.append(
            f"{discretizer}: ranks its thresholds on unweighted class counts; the weights and costs are the "
            "solver's objective, not the discretizer's"
        )
    return out


def unit_score(metrics: dict, score: str, part: str = "test", total_weight: float | None = None):
    """A tree's ``score`` on its ``part`` rows (``train`` or ``test``), larger is better: its accuracy or
    balanced accuracy, or for ``cost`` minus its cost per unit of the rows' ``total_weight`` (so that folds
    of different weights average alike); None when the rows are not there."""
    if score != "cost":
        return metrics.get(f"{part}_{score}")
    cost = metrics.get(f"{part}_cost")
    if cost is None or not total_weight:
        return None
    return -cost / total_weight
