"""The Front model: the trees one run produced, their metrics, and whether they are proven optimal."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from treeexplorer.claims import STOPPED, make_search_space, optimality_text  # noqa: F401  (re-exported: their old home)
from treeexplorer.metrics import (
    COMPLEXITY_MEASURES,
    LEAD_COLUMNS,
    METRIC_KEYS,
    PER_CLASS_METRICS,
    SCORE_METRICS,
    score_key,
)
from treeexplorer.schema import Schema
from treeexplorer.tree import Tree

__all__ = [
    "FrontTree",
    "Front",
    "COMPLEXITY_MEASURES",
    "pareto_mask",
    "non_dominated_mask",
    "make_search_space",
    "optimality_text",
]


@dataclass
class FrontTree:
    """One tree of a front with its metrics.

    Attributes
    ----------
    id : int
        Position in the front (stable within a run).
    tree : Tree
    optimal : bool
        True only when the solver proved this tree optimal for its objective.
    metrics : dict
        ``splits, leaves, depth, avg_tests, train_accuracy, train_errors, test_accuracy, test_errors,
        test_avg_tests`` (test values ``None`` without held-out data).
    info : dict
        Solver facts (node budget, α interval, λ, ...).
    """

    id: int
    tree: Tree
    optimal: bool
    metrics: dict
    info: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.metrics[key]

    def __repr__(self) -> str:
        m = self.metrics
        test = "" if m.get("test_accuracy") is None else f", test_accuracy={m['test_accuracy']:.4f}"
        return (
            f"FrontTree(id={self.id}, splits={m.get('splits')}, depth={m.get('depth')}, "
            f"train_accuracy={m.get('train_accuracy', float('nan')):.4f}{test}, optimal={self.optimal})"
        )


def compute_metrics(tree: Tree, X_train, y_train, X_test=None, y_test=None, weights=None) -> dict:
    """Every metric of ``tree`` recomputed from the data, row by row (never trusted from a solver).

    ``weights`` is the run's :class:`~treeexplorer.objective.Weights` (``Prepared.weights``; None: plain
    misclassification).  This is the reference the one-pass front assembly is checked against."""
    te = tree.evaluate(X_test, y_test) if X_test is not None and y_test is not None and len(y_test) else None
    out = metrics_dict(tree, tree.evaluate(X_train, y_train), te)
    out.update(_row_scores(tree, X_train, y_train, weights, "train"))
    out.update(_row_scores(tree, X_test if te else None, y_test if te else None, weights, "test"))
    return out


def _row_scores(tree: Tree, X, y, weights, side: str) -> dict:
    """The objective's scores of ``tree`` on ``(X, y)`` from its predictions row by row (``None`` without rows)."""
    keys = ("cost", "balanced_accuracy", "recall", "precision")
    if y is None:
        return {f"{side}_{k}": None for k in keys}
    k = tree.n_classes
    y = np.asarray(y, dtype=np.int64)
    pred = tree.predict_codes(X)
    C = 1.0 - np.eye(k)
    w = np.ones(len(y))
    if weights is not None and not weights.plain:
        C = C if weights.costs is None else np.asarray(weights.costs, dtype=np.float64)
        rw = weights.row_weights(y, held_out=side == "test")
        if rw is not None:
            w = np.asarray(rw, dtype=np.float64)
        elif weights.class_weight is not None:
            w = np.asarray(weights.class_weight, dtype=np.float64)[y]
    support = np.bincount(y, minlength=k).astype(np.float64)
    predicted = np.bincount(pred, minlength=k).astype(np.float64)
    hits = np.bincount(y[pred == y], minlength=k).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(support > 0, hits / support, np.nan)
        precision = np.where(predicted > 0, hits / predicted, np.nan)
    present = int((support > 0).sum())
    listed = [[None if v != v else v for v in a.tolist()] for a in (recall, precision)]
    return {
        f"{side}_cost": float(np.sum(w * C[y, pred])),
        f"{side}_balanced_accuracy": float(np.nansum(recall) / present) if present else None,
        f"{side}_recall": listed[0],
        f"{side}_precision": listed[1],
    }


def metrics_dict(tree: Tree, train: dict, test: dict | None = None) -> dict:
    """A front tree's metrics from its structure and its ``evaluate``-style train (and test) results."""
    return {
        "splits": tree.n_splits,
        "leaves": tree.n_leaves,
        "depth": tree.depth,
        "avg_tests": train["avg_tests"],
        "train_accuracy": train["accuracy"],
        "train_errors": train["errors"],
        "test_accuracy": None if test is None else test["accuracy"],
        "test_errors": None if test is None else test["errors"],
        "test_avg_tests": None if test is None else test["avg_tests"],
    }


def data_key(X_train, y_train, X_test=None, y_test=None, target: str = "") -> str:
    """Short digest of a run's rows and target: two fronts with the same key were computed on the same
    training rows and evaluated on the same test rows, so their metrics compare."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(target).encode())
    for a in (X_train, y_train, X_test, y_test):
        if a is None:
            h.update(b"-")
            continue
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.data)
    return h.hexdigest()


def pareto_mask(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Points not dominated when ``x`` is minimised and ``y`` maximised (ties: first kept once)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    order = np.lexsort((-y, x))
    keep = np.zeros(len(x), dtype=bool)
    best = -np.inf
    for i in order:
        if y[i] > best:
            keep[i] = True
            best = y[i]
    return keep


def non_dominated_mask(trees: list[FrontTree], y: str = "train_accuracy", larger_is_better: bool = True) -> np.ndarray:
    """Which ``trees`` are on the Pareto front of ``y`` (maximised, or minimised when not ``larger_is_better``:
    a cost) along at least one complexity measure.

    A tree is kept when no other tree is as simple and at least as good (better in one) for some
    measure of :data:`COMPLEXITY_MEASURES`, so whichever axis the front is drawn along shows its whole front.
    Ties keep the first tree once (:func:`pareto_mask`).
    """
    keep = np.zeros(len(trees), dtype=bool)
    if not trees:
        return keep
    sign = 1.0 if larger_is_better else -1.0
    score = [sign * t.metrics[y] for t in trees]
    for x in COMPLEXITY_MEASURES:
        keep |= pareto_mask([t.metrics[x] for t in trees], score)
    return keep


@dataclass
class Front:
    """All trees of one run.

    Attributes
    ----------
    trees : list of FrontTree
        Sorted by increasing number of splits, then decreasing train accuracy.
    solver, discretizer : str
        Provenance; ``discretizer`` is ``"raw"`` for solvers working on numeric columns.
    objective : str
        What the solver optimises, in words.
    status : str
        ``"done"``, ``"time_limit"`` or ``"cancelled"``.
    runtime_s : float
        Seconds of the whole run, from the start of its clock (before loading, for :func:`treeexplorer.solve`)
        to the assembled front: loading, discretizing, solving and assembling; the span a time limit counts.
    n_train, n_test : int
    dataset : str
    schema : Schema
    params : dict
        The solver parameters used.
    notices : list of str
        What the pipeline decided on its own (dropped columns, relabelled rows, ...).
    stats : dict
        Solver counters (states, cache entries, ...).
    search_space : dict
        What "optimal" ranges over: ``{"kind": "tests"|"raw", "discretizer": str, "n_tests": int|None}``
        (see :func:`make_search_space`; :func:`optimality_text` words it).
    data_key : str
        Digest of the training and test rows (see :func:`data_key`): runs with equal keys compare
        (``""`` for fronts read from files written before it existed).
    dominated : list of FrontTree
        Trees the run found but set aside as dominated (see :meth:`drop_dominated`): not in ``trees``, the
        plot or the table; kept in the JSON under ``"dominated"``.
    weights : dict
        The weighted objective the run minimised (:meth:`treeexplorer.objective.Weights.to_dict`: ``objective``
        in words, ``score``, ``class_weight``, ``sample_weight``, ``costs``); empty for plain misclassification.
    """

    trees: list[FrontTree]
    solver: str
    discretizer: str
    objective: str
    status: str
    runtime_s: float
    n_train: int
    n_test: int
    dataset: str
    schema: Schema
    params: dict = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    search_space: dict = field(default_factory=dict)
    data_key: str = ""
    dominated: list[FrontTree] = field(default_factory=list)
    weights: dict = field(default_factory=dict)

    @property
    def score(self) -> str:
        """What the run optimised, as a score of :data:`treeexplorer.metrics.SCORE_METRICS` (``accuracy`` when
        plain): the plot's default axis."""
        return self.weights.get("score", "accuracy")

    def drop_dominated(self) -> Front:
        """Move the trees off every complexity measure's front (:func:`non_dominated_mask`, on the training
        score the run optimised, :attr:`score`) to :attr:`dominated`; ids are renumbered, the kept trees first.
        Returns ``self``."""
        larger = SCORE_METRICS[self.score][1]
        keep = non_dominated_mask(self.trees, score_key(self.score), larger)
        if keep.all():
            return self
        self.dominated = self.dominated + [t for t, k in zip(self.trees, keep) if not k]
        self.trees = [t for t, k in zip(self.trees, keep) if k]
        for i, t in enumerate(self.trees + self.dominated):
            t.id = i
        return self

    @property
    def optimality(self) -> str:
        """The optimality claim of this run's proven trees, in words (e.g. "optimal over the 16 tests of MID");
        a run stopped before any proof says so ("nothing proven optimal (the time limit stopped the run)")."""
        if self.status in STOPPED and not any(t.optimal for t in self.trees):
            return f"nothing proven optimal ({STOPPED[self.status]})"
        return optimality_text(self.search_space, objective=self.weights.get("objective"))

    def __repr__(self) -> str:
        proven = sum(t.optimal for t in self.trees)
        where = f" on {self.dataset}" if self.dataset else ""
        disc = "" if self.discretizer in ("raw", None) else f" + {self.discretizer}"
        return (
            f"<Front {self.solver}{disc}{where}: {len(self.trees)} trees, {proven} proven optimal, "
            f"{self.status} in {self.runtime_s:.2f} s>"
        )

    def _repr_html_(self) -> str:
        """A compact table in a notebook: one row per tree (id, splits, depth, accuracies, optimal, gap)."""
        from html import escape

        has_test = any(t.metrics.get("test_accuracy") is not None for t in self.trees)
        has_gap = any(t.metrics.get("gap_errors") is not None for t in self.trees)
        head = ["id", "splits", "depth", "train accuracy"] + (["test accuracy"] if has_test else []) + ["optimal"]
        head += ["gap (errors)"] if has_gap else []
        rows = []
        for t in self.trees:
            m = t.metrics
            cells = [t.id, m["splits"], m["depth"], f"{m['train_accuracy']:.4f}"]
            if has_test:
                cells.append("" if m.get("test_accuracy") is None else f"{m['test_accuracy']:.4f}")
            cells.append("yes" if t.optimal else "no")
            if has_gap:
                cells.append("" if m.get("gap_errors") is None else m["gap_errors"])
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
        proven = sum(t.optimal for t in self.trees)
        claim = f"{proven} proven {self.optimality}" if proven else self.optimality if self.status in STOPPED else ""
        caption = escape(repr(self)[1:-1] + (f"; {claim}" if claim else ""))
        return (
            f"<table><caption style='text-align:left'>{caption}</caption><thead><tr>"
            + "".join(f"<th>{escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )

    def __len__(self) -> int:
        return len(self.trees)

    def __iter__(self):
        return iter(self.trees)

    def __getitem__(self, i: int) -> FrontTree:
        for t in self.trees:
            if t.id == i:
                return t
        raise KeyError(f"no tree with id {i} in this front (ids: {[t.id for t in self.trees]})")

    @property
    def optimal(self) -> bool:
        """True when every tree of the front is proven optimal."""
        return bool(self.trees) and all(t.optimal for t in self.trees)

    def pareto(self, x: str = "splits", y: str = "train_accuracy") -> list[FrontTree]:
        """The non-dominated trees along complexity ``x`` (minimised) and metric ``y`` (maximised)."""
        if x not in COMPLEXITY_MEASURES:
            raise ValueError(f"x must be one of {COMPLEXITY_MEASURES}, got {x!r}")
        trees = [t for t in self.trees if t.metrics.get(y) is not None]
        if not trees:
            return []
        mask = pareto_mask([t.metrics[x] for t in trees], [t.metrics[y] for t in trees])
        return sorted((t for t, m in zip(trees, mask) if m), key=lambda t: t.metrics[x])

    def best(self, by: str = "test_accuracy", max_splits: int | None = None) -> FrontTree:
        """Tree maximising ``by`` (falling back to the same score on the training rows without test data; a
        ``cost`` is minimised), simplest on ties."""
        pool = [t for t in self.trees if max_splits is None or t.metrics["splits"] <= max_splits]
        if not pool:
            raise ValueError(f"no tree with at most {max_splits} splits in this front")
        fallback = by.replace("test_", "train_", 1) if by.startswith("test_") else "train_accuracy"
        key = by if all(t.metrics.get(by) is not None for t in pool) else fallback
        if any(t.metrics.get(key) is None for t in pool):
            key = "train_accuracy"
        sign = -1.0 if key.endswith("_cost") else 1.0
        return max(pool, key=lambda t: (sign * t.metrics[key], t.metrics["train_accuracy"], -t.metrics["splits"]))

    def to_frame(self):
        """One row per tree (a pandas DataFrame): id, splits, depth, train and test accuracy, optimal, then the
        other metrics (:data:`treeexplorer.metrics.METRIC_KEYS`) and the solver's info as ``info_<key>``."""
        import pandas as pd

        rows = [
            {"id": t.id, "optimal": t.optimal, **t.metrics, **{f"info_{k}": v for k, v in t.info.items()}}
            for t in self.trees
        ]
        metrics = [k for k in METRIC_KEYS if k not in LEAD_COLUMNS]
        info = list(dict.fromkeys(k for r in rows for k in r if k.startswith("info_")))
        return pd.DataFrame(rows, columns=[*LEAD_COLUMNS, *metrics, *info])

    # -- JSON ------------------------------------------------------------------------------------------
    def to_dict(self, rules: bool = True) -> dict:
        """The CLI's JSON contract plus what is needed to rebuild every tree."""
        from treeexplorer.export import rules_lines

        out = {
            "solver": self.solver,
            "discretizer": self.discretizer,
            "objective": self.objective,
            "status": self.status,
            "optimal": self.optimal,
            "runtime_s": self.runtime_s,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "dataset": self.dataset,
            "params": _jsonable(self.params),
            "notices": list(self.notices),
            "stats": _jsonable(self.stats),
            "search_space": _jsonable(self.search_space),
            "optimality": self.optimality,
            "data_key": self.data_key,
            **({"weights": _jsonable(self.weights)} if self.weights else {}),
            "schema": self.schema.to_dict(),
            "trees": [],
        }
        for group, entries in (("trees", self.trees), ("dominated", self.dominated)):
            if group == "dominated" and entries:
                out["dominated"] = []
            for t in entries:
                d = {
                    "id": t.id,
                    **{k: _jsonable(v) for k, v in t.metrics.items()},
                    "optimal": t.optimal,
                    "info": _jsonable(t.info),
                }
                if rules:
                    d["rules"] = rules_lines(t.tree)
                d["tree"] = t.tree.to_dict(with_schema=False)
                out[group].append(d)
        return out

    def to_json(self, path=None, indent: int | None = 1) -> str:
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_dict(cls, d: dict) -> Front:
        schema = Schema.from_dict(d["schema"])
        groups = {"trees": [], "dominated": []}
        for group, trees in groups.items():
            for t in d.get(group) or []:
                metrics = {k: t.get(k) for k in METRIC_KEYS}
                metrics.update({k: t[k] for k in PER_CLASS_METRICS if k in t})
                if "gap_errors" in t:  # set by treeexplorer.gap.attach_gaps
                    metrics["gap_errors"] = t["gap_errors"]
                tree = Tree.from_dict(t["tree"], schema)
                trees.append(FrontTree(t["id"], tree, bool(t["optimal"]), metrics, t.get("info", {})))
        trees = groups["trees"]
        return cls(
            trees,
            d["solver"],
            d["discretizer"],
            d.get("objective", ""),
            d.get("status", "done"),
            d.get("runtime_s", 0.0),
            d.get("n_train", 0),
            d.get("n_test", 0),
            d.get("dataset", ""),
            schema,
            d.get("params", {}),
            d.get("notices", []),
            d.get("stats", {}),
            d.get("search_space") or {"kind": "tests", "discretizer": d["discretizer"], "n_tests": None},
            d.get("data_key", ""),
            groups["dominated"],
            d.get("weights") or {},
        )

    @classmethod
    def from_json(cls, path) -> Front:
        """Read a front file; a damaged or hand-edited one gets one line naming the file and the problem."""
        from treeexplorer.validate import load_front_json

        return cls.from_dict(load_front_json(path))


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return v
