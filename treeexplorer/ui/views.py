"""Pure view builders (HoloViews objects, Markdown, tables) from the controller's state; no widgets here."""

from __future__ import annotations

import math

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend without notebook output)
import pandas as pd

from treeexplorer.claims import optimality_text
from treeexplorer.export import rules_lines
from treeexplorer.front import FrontTree
from treeexplorer.metrics import COMPLEXITY_MEASURES
from treeexplorer.schema import format_number
from treeexplorer.textsafe import code_block

if hv.Store.current_backend != "bokeh":  # a notebook may have loaded matplotlib first
    hv.Store.set_current_backend("bokeh")

__all__ = [
    "X_MEASURES",
    "points_frame",
    "pareto_plot",
    "metrics_frame",
    "rules_markdown",
    "compare_markdown",
    "progress_text",
    "style_pareto",
    "front_plot",
]

X_MEASURES = {"splits": "Splits", "leaves": "Leaves", "depth": "Depth", "avg_tests": "Expected tests per sample"}
HOVER_COLS = [
    "run",
    "tree",
    *COMPLEXITY_MEASURES,
    "train_accuracy",
    "test_accuracy",
    "train_errors",
    "test_errors",
    "train_bacc",
    "test_bacc",
    "train_cost",
    "objective",
    "proven",
    "info",
]


def _info_text(info: dict) -> str:
    parts = []
    for k, v in info.items():
        if isinstance(v, float):
            v = format_number(v) if math.isfinite(v) else ("∞" if v > 0 else "-∞" if v < 0 else "nan")
        parts.append(f"{k}={v}")
    return ", ".join(parts) or "-"


def claim_text(entry: FrontTree, front, dominated: str | None = None) -> str:
    """The status of one tree in words: "proven optimal over the 16 tests of MID" or "not proven optimal",
    followed by "; dominated by run #3 ..." when another run on the same data beats a proven tree."""
    if not entry.optimal:
        return "not proven optimal"
    text = "proven " + optimality_text(front.search_space, objective=front.weights.get("objective"))
    return f"{text}; {dominated}" if dominated else text


def _num(v) -> float:
    """A metric for the plot's columns: NaN when the tree has none (a front read from an older file)."""
    return float("nan") if v is None else float(v)


def points_frame(runs, dominated: dict | None = None) -> pd.DataFrame:
    """One row per tree of every run (the Pareto plot's data; row order = Selection1D index).

    ``dominated`` maps ``(run id, tree id)`` to a "dominated by run #k ..." text (see
    :func:`treeexplorer.ui.controller.dominance`); it is appended to the tree's status.
    """
    dominated = dominated or {}
    rows = []
    for run in runs:
        per = _per_unit(run.front.weights)
        for t in run.front:
            m = t.metrics
            rows.append(
                {
                    "run": run.label,
                    "run_id": run.id,
                    "tree": t.id,
                    "color": run.color,
                    "splits": m["splits"],
                    "leaves": m["leaves"],
                    "depth": m["depth"],
                    "avg_tests": round(float(m["avg_tests"]), 4),
                    "train_accuracy": m["train_accuracy"],
                    "test_accuracy": m["test_accuracy"] if m["test_accuracy"] is not None else float("nan"),
                    "train_errors": m["train_errors"],
                    "test_errors": m["test_errors"] if m["test_errors"] is not None else -1,
                    "train_bacc": _num(m.get("train_balanced_accuracy")),
                    "test_bacc": _num(m.get("test_balanced_accuracy")),
                    "train_cost": _num(m.get("train_cost")),
                    # the cost per unit of weight (the plot's cost axis): 1 - accuracy on a plain run
                    "train_cost_rate": per(m, "train"),
                    "test_cost_rate": per(m, "test"),
                    "cost_top": _cost_top(run.front.weights),
                    "objective": run.front.weights.get("objective", "misclassifications"),
                    "proven": claim_text(t, run.front, dominated.get((run.id, t.id))),
                    "info": _info_text(t.info),
                    "optimal": bool(t.optimal),
                    "multiway": t.tree.has_multiway,  # errors above the best: compared within a kind
                }
            )
    cols = ["run", "run_id", "tree", "color", *HOVER_COLS[2:], "optimal", "multiway", *COST_RATE_COLS]
    return pd.DataFrame(rows, columns=cols)


# points_frame's cost axis columns: train and held-out cost per unit of weight, and the most a unit can cost
COST_RATE_COLS = ["train_cost_rate", "test_cost_rate", "cost_top"]


def _per_unit(weights: dict):
    """``per(metrics, part)``: a tree's cost on the ``part`` rows divided by their total weight (NaN without
    them); a plain run's cost is its errors and each row weighs 1, so that is ``1 - accuracy``."""

    def per(m: dict, part: str) -> float:
        cost, total = m.get(f"{part}_cost"), weights.get(f"{part}_weight")
        if cost is not None and total:
            return float(cost) / float(total)
        acc = m.get(f"{part}_accuracy")
        return float("nan") if acc is None or weights.get("costs") or weights.get("class_weight") else 1.0 - acc

    return per


def _cost_top(weights: dict) -> float:
    """The most one unit of weight can cost: the cost matrix's largest entry (1 when there is none)."""
    costs = weights.get("costs")
    return float(max(max(row) for row in costs)) if costs else 1.0


def _staircase(df: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Non-dominated points (min x, max y) as a step line."""
    d = df.dropna(subset=[y]).sort_values([x, y], ascending=[True, False])
    best, keep = -1.0, []
    for i, v in zip(d.index, d[y]):
        if v > best:
            keep.append(i)
            best = v
    return d.loc[keep, [x, y]]


def pareto_plot(runs, x: str = "splits", show_test: bool = True, height: int = 380):
    """The Pareto plot: one step line per run, train points (tap to select), held-out points.

    Proven-optimal trees are filled circles; unproven ones hollow diamonds.  Returns
    ``(overlay, train_scatter, frame)``; attach ``hv.streams.Selection1D(source=train_scatter)``; its
    indices are rows of ``frame``.
    """
    df = points_frame(runs)
    # run_id only on the train series: it identifies the clickable points (browser tests rely on it)
    vd = ["train_accuracy", *[c for c in HOVER_COLS if c not in (x, "train_accuracy")], "color", "optimal", "run_id"]
    tooltips = [
        ("run", "@run"),
        ("tree", "@tree"),
        ("splits", "@splits"),
        ("leaves", "@leaves"),
        ("depth", "@depth"),
        ("tests/sample", "@avg_tests"),
        ("train acc", "@train_accuracy{0.0000}"),
        ("test acc", "@test_accuracy{0.0000}"),
        ("train errors", "@train_errors"),
        ("status", "@proven"),
        ("solver info", "@info"),
    ]
    layers = []
    for run in runs:
        sub = df[df.run_id == run.id]
        if len(sub):
            stair = _staircase(sub, x, "train_accuracy")
            layers.append(
                hv.Curve(stair, x, "train_accuracy", label=run.label).opts(
                    interpolation="steps-post", color=run.color, line_width=2, alpha=0.8
                )
            )
    empty = len(df) == 0
    if empty:
        df = pd.DataFrame({c: pd.Series(dtype=float) for c in df.columns})
    is_proven = hv.dim("optimal") == True  # noqa: E712  (a dim expression, not a comparison)
    train = hv.Scatter(df, x, vd).opts(
        color="color",
        size=13,
        marker=is_proven.categorize({True: "circle", False: "diamond"}, "diamond"),
        fill_alpha=is_proven.categorize({True: 0.95, False: 0.15}, 0.15),
        line_width=2,
        tools=["hover", "tap"],
        hover_tooltips=tooltips,
        nonselection_alpha=0.45,
        selection_line_color="black",
        selection_line_width=3,
        show_legend=False,
    )
    layers.append(train)
    if show_test and not empty and df["test_accuracy"].notna().any():
        vt = ["test_accuracy", *[c for c in HOVER_COLS if c not in (x, "test_accuracy")], "color", "optimal"]
        test = hv.Scatter(df.dropna(subset=["test_accuracy"]), x, vt, label="held-out").opts(
            color="color",
            marker="x",
            size=10,
            line_width=2,
            alpha=0.75,
            tools=["hover"],
            hover_tooltips=[(n.replace("@", ""), v) for n, v in tooltips],
        )
        layers.append(test)
    overlay = style_pareto(hv.Overlay(layers), x, height)
    return overlay, train, df


def front_plot(*fronts, x: str = "splits", show_test: bool = True, labels=None, height: int = 380):
    """The app's Pareto plot for fronts from :func:`treeexplorer.solve` (notebooks, reports).

    Parameters
    ----------
    *fronts : Front
        One step line and one colour per front.
    x : {"splits", "leaves", "depth", "avg_tests"}
    show_test : bool
        Also draw held-out accuracy (crosses).
    labels : list of str, optional
        Legend entries (default: ``solver · discretizer``).

    Returns
    -------
    FrontPlot
        A Panel pane showing the plot in a notebook (offline, no ``pn.extension`` call needed); its ``object``
        is the HoloViews overlay.
    """
    from treeexplorer.render.layout import PALETTE
    from treeexplorer.ui.controller import Run, RunSettings

    if x not in X_MEASURES:
        raise ValueError(f"x must be one of {', '.join(X_MEASURES)}, got {x!r}")
    runs = []
    for i, f in enumerate(fronts):
        label = labels[i] if labels else f"{f.solver} · {f.discretizer}"
        runs.append(Run(i + 1, label, PALETTE[i % len(PALETTE)], f, RunSettings(f.solver, dict(f.params))))
    from treeexplorer.ui.notebook import FrontPlot

    return FrontPlot(pareto_plot(runs, x, show_test, height)[0], sizing_mode="stretch_width")


def style_pareto(obj, x: str, height: int = 380):
    """Axis labels, size and legend of the Pareto plot (apply after composing extra layers)."""
    return obj.opts(
        **dict(
            responsive=True,
            height=height,
            xlabel=X_MEASURES[x],
            ylabel="Accuracy",
            show_grid=True,
            padding=0.08,
            legend_position="bottom_right",
            toolbar="above",
            legend_opts={"background_fill_alpha": 0.85, "label_text_font_size": "9pt"},
        )
    )


def metrics_frame(entry: FrontTree, front, dominated: str | None = None) -> pd.DataFrame:
    """The selected tree's metrics as a two-column table (``dominated``: see :func:`claim_text`)."""
    m = entry.metrics
    rows = [
        ("tree", f"{entry.id} of {len(front)}"),
        ("status", claim_text(entry, front)),
        ("splits / leaves / depth", f"{m['splits']} / {m['leaves']} / {m['depth']}"),
        ("expected tests per sample", format_number(round(float(m["avg_tests"]), 3))),
        ("train accuracy", f"{m['train_accuracy']:.4f} ({m['train_errors']} errors / {front.n_train})"),
    ]
    if m.get("test_accuracy") is not None:
        rows.append(("held-out accuracy", f"{m['test_accuracy']:.4f} ({m['test_errors']} errors / {front.n_test})"))
    if front.weights:  # a weighted run: what it minimised, and the scores it is judged by
        rows.append(("objective", front.weights.get("objective", "")))
        for part, name in (("train", "train"), ("test", "held-out")):
            if m.get(f"{part}_cost") is not None:
                bacc = m.get(f"{part}_balanced_accuracy")
                rows.append((f"{name} cost", format_number(round(m[f"{part}_cost"], 6))))
                if bacc is not None:
                    rows.append((f"{name} balanced accuracy", f"{bacc:.4f}"))
    rows += [
        ("solver", f"{front.solver} ({front.objective})" if front.objective else front.solver),
        ("discretizer", front.discretizer),
        ("search space", _search_space_text(front.search_space)),
        ("run status", front.status),
        ("runtime", f"{front.runtime_s:.2f} s"),
    ]
    if entry.info:
        rows.append(("solver info", _info_text(entry.info)))
    if dominated:
        rows.insert(2, ("dominated", dominated))
    return pd.DataFrame(rows, columns=["metric", "value"])


def _search_space_text(ss: dict | None) -> str:
    ss = ss or {}
    if ss.get("kind") == "raw":
        return "raw features (every threshold)"
    n = ss.get("n_tests")
    disc = str(ss.get("discretizer") or "?")
    return f"{n} binary tests of {disc}" if n is not None else f"the binary tests of {disc}"


def rules_markdown(entry: FrontTree) -> str:
    return code_block("\n".join(rules_lines(entry.tree)))


def compare_markdown(a: FrontTree, b: FrontTree) -> str:
    """What changed from tree ``a`` (selected) to tree ``b``: metric deltas and rules only in one of them."""
    ma, mb = a.metrics, b.metrics
    lines = [f"**Tree {a.id} → tree {b.id}**", ""]

    def delta(key, fmt):
        if ma.get(key) is None or mb.get(key) is None:
            return None
        d = mb[key] - ma[key]
        return f"{fmt(ma[key])} → {fmt(mb[key])} ({'+' if d >= 0 else ''}{fmt(d)})"

    for key, name, fmt in (
        ("splits", "splits", str),
        ("depth", "depth", str),
        ("avg_tests", "tests/sample", lambda v: f"{v:.3f}"),
        ("train_accuracy", "train accuracy", lambda v: f"{v:.4f}"),
        ("test_accuracy", "held-out accuracy", lambda v: f"{v:.4f}"),
    ):
        text = delta(key, fmt)
        if text:
            lines.append(f"- {name}: {text}")
    ra, rb = set(rules_lines(a.tree)), set(rules_lines(b.tree))
    only_a = [r for r in rules_lines(a.tree) if r not in rb]
    only_b = [r for r in rules_lines(b.tree) if r not in ra]
    lines += ["", f"{len(ra & rb)} rule(s) in common."]
    if only_a:
        lines += ["", f"Only in tree {a.id}:", code_block("\n".join(f"- {r}" for r in only_a), "diff")]
    if only_b:
        lines += ["", f"Only in tree {b.id}:", code_block("\n".join(f"+ {r}" for r in only_b), "diff")]
    return "\n".join(lines)


def progress_text(progress: dict, label: str = "") -> str:
    """A progress report in plain words (see :func:`treeexplorer.ui.progress.describe`), after ``label``."""
    from treeexplorer.ui.progress import describe

    text = describe(progress)[0]
    return (f"{label}: " if label and text else "") + text
