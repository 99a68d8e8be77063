"""The app's live Pareto plot: one Bokeh figure per session, updated in place.

A HoloViews rebuild of the plot costs 1-2 s of Bokeh model churn per change on this machine; swapping
ColumnDataSource data costs milliseconds, so switching the axis or adding a run stays interactive.
(Notebooks use the HoloViews version, :func:`treeexplorer.ui.views.front_plot`.)
A click on a point (a tap, a long press or the second of two quick clicks) calls ``on_select(run_id, tree_id)``
for the tree the tooltip names: both use one hit rule (:mod:`treeexplorer.ui.hittest`).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable

from bokeh import events
from bokeh.models import (
    BasicTickFormatter,
    ColumnDataSource,
    CustomJS,
    CustomJSTickFormatter,
    DataRange1d,
    Label,
    Node,
    Range1d,
    Tooltip,
)
from bokeh.plotting import figure

from treeexplorer.metrics import COMPLEXITY_MEASURES
from treeexplorer.render.bokehview import lean
from treeexplorer.render.layout import run_marker
from treeexplorer.ui.axes import EDGE_MARKER, accuracy_window, clip_below, errors_above_best
from treeexplorer.ui.cloudlayer import cloud_places, cloud_size
from treeexplorer.ui.cvfig import CVLayer, cv_frame
from treeexplorer.ui.hittest import HOVER_JS, TAP_JS
from treeexplorer.ui.views import X_MEASURES, _staircase, points_frame

__all__ = ["ParetoFigure"]


def _above_runs(levels: list, errors: list[int], df, x: str) -> list[int]:
    """Errors above the fewest of any run's tree in ``df`` with at most each level of ``x`` (the excess axis'
    reference for the runs' points); below every run's tree, above the fewest of the cloud's own there."""

    def fewest(pairs):  # (levels ascending, the fewest errors up to each)
        pairs = sorted(pairs)
        return [k for k, _ in pairs], list(itertools.accumulate((b for _, b in pairs), min))

    runs = fewest(zip(df[x].tolist(), df.train_errors.tolist()) if len(df) else [])
    own = fewest(zip(levels, errors))
    out = []
    for level, e in zip(levels, errors):
        keys, best = runs if runs[0] and runs[0][0] <= level else own
        out.append(int(e - best[bisect.bisect_right(keys, level) - 1]))
    return out


COLUMNS = [
    "x",
    "y",
    "run",
    "run_id",
    "tree",
    "color",
    "marker",
    "angle",
    "fill_alpha",
    *COMPLEXITY_MEASURES,
    "train_accuracy",
    "test_accuracy",
    "train_errors",
    "train_bacc",
    "test_bacc",
    "train_cost",
    "objective",
    "proven",
    "info",
    "gap",
]


# the Rashomon set's cloud: one faint marker per place, a radius per point for the hit rule
CLOUD_COLUMNS = ["x", "y", "size", "radius", "color", "rank", "stamp", "count", "title", "tip", "run"]
CLOUD_ALPHA = (0.16, 0.5)  # fill, line: clearly behind the runs' points
CLOUD_COLOR = "#7f7f7f"  # mid grey, no run's colour: secondary on the light and the dark theme

Y_LABELS = {
    "accuracy": "Accuracy",
    "balanced": "Balanced accuracy",
    "cost": "Cost per unit of weight (lower is better: 0 at the top)",
    "excess": "Training errors above the best shown tree",
}
# The y modes drawn from other columns than the accuracies: (train column, held-out column) of points_frame
Y_COLUMNS = {"balanced": ("train_bacc", "test_bacc"), "cost": ("train_cost_rate", "test_cost_rate")}
# The y modes drawn from the trees alone: no CV means, exact front or Rashomon cloud (those are accuracies)
TREES_ONLY = ("excess", "cost")
# The cost axis is drawn upside down (``top - cost``: larger is better, as the plot's frames and steps assume);
# its ticks say the cost itself
_COST_TICKS = "return Number((top - tick).toPrecision(6)).toString();"


def _as_accuracy(df, mode: str, top: float = 1.0):
    """``df`` with the score of ``mode`` (balanced accuracy; ``top`` minus the cost per unit of weight) in the
    accuracy columns the plot draws, frames and steps (the hovers keep their own columns)."""
    if mode not in Y_COLUMNS or not len(df):
        return df
    train, test = Y_COLUMNS[mode]
    if mode == "cost":
        return df.assign(train_accuracy=top - df[train], test_accuracy=top - df[test])
    return df.assign(train_accuracy=df[train], test_accuracy=df[test])


POINT_SIZE = 13  # train points' marker size (screen pixels)


class ParetoFigure:
    """Train points (click to select), held-out crosses and one step line per run (the run list is the legend).

    Rows are drawn in run order, so a later run's point covers an earlier one's.  The point under the pointer is
    the nearest within a few pixels, on a tie the one drawn on top; its one tooltip names the other runs at the
    same spot, and a click selects its tree.  Hiding a run in the run list hides its points too: they leave the
    data, so they can be neither seen nor clicked.

    Parameters
    ----------
    on_select : callable, optional
        ``on_select(run_id, tree_id)`` when the user taps a train point.
    height : int
    on_change : callable, optional
        Called after every change of the figure's models (the notebook route pushes them to the page).
    """

    def __init__(
        self,
        on_select: Callable[[int, int], None] | None = None,
        height: int = 380,
        on_change: Callable[[], None] | None = None,
    ):
        self.on_select = on_select
        self.on_change = on_change
        self.points = ColumnDataSource({c: [] for c in COLUMNS})
        # run_id only on the train points: it marks the tappable series (the browser tests rely on it)
        self.tests = ColumnDataSource({c: [] for c in COLUMNS if c != "run_id"})
        # the Rashomon set's cloud (SetCloud: its trees grouped by place; drawn under the runs' points) and what a
        # click on it sends back: the cloud's stamp and the rank of the tree to open
        self.cloud = ColumnDataSource({c: [] for c in CLOUD_COLUMNS})
        self.cloud_tests = ColumnDataSource({c: [] for c in CLOUD_COLUMNS})
        self.cloud_pick = ColumnDataSource({"stamp": [], "rank": [], "at": []})
        self.on_cloud: Callable[[int, int], None] | None = None  # on_cloud(rank, stamp) on a click on the cloud
        self._cloud = None  # the controller's SetCloud drawn, and its colour
        self._cloud_color = CLOUD_COLOR
        self._cloud_cols: tuple = (None, {})  # (the set, {tree id: its columns}) for the hovers
        self.cloud_label = ""  # the run list's entry for the cloud ("" when none is drawn)
        fig = figure(
            height=height,
            sizing_mode="stretch_width",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            # beside the plot: Bokeh fits a toolbar's buttons to its length when first drawn, and above the plot
            # that length (the width) can still be unsettled, so the tools folded into a "⋮" menu
            toolbar_location="right",
            x_axis_label=X_MEASURES["splits"],
            y_axis_label="Accuracy",
        )
        fig.x_range.range_padding = fig.y_range.range_padding = 0.08
        # the "errors above the best" view has its own automatic range: one shared with accuracy kept the
        # errors' 0-6 on the accuracy axis after a switch back (and the reset tool returned to it)
        self._auto_y, self._framed_y = fig.y_range, Range1d(0, 1)
        self._auto_excess = DataRange1d(range_padding=0.08)
        self._ticks = fig.yaxis[0].formatter if isinstance(fig.yaxis[0].formatter, BasicTickFormatter) else None
        self._cost_ticks = CustomJSTickFormatter(args={"top": 1.0}, code=_COST_TICKS)
        self._cost_top = 1.0
        fig.toolbar.logo = None  # room for the tools
        fig.xgrid.grid_line_alpha = fig.ygrid.grid_line_alpha = 0.5
        fill, line = CLOUD_ALPHA
        self._cloud_tests = fig.scatter(
            "x", "y", source=self.cloud_tests, marker="x", size="size", line_width=1.5, line_alpha=line, color="color"
        )
        self._cloud_train = fig.scatter(
            "x",
            "y",
            source=self.cloud,
            marker="circle",
            size="size",
            line_width=1,
            fill_alpha=fill,
            line_alpha=line,
            color="color",
        )
        self._tests = fig.scatter(
            "x", "y", source=self.tests, marker="x", size=10, line_width=2, color="color", alpha=0.75
        )
        self._train = fig.scatter(
            "x",
            "y",
            source=self.points,
            marker="marker",
            angle="angle",
            size=POINT_SIZE,
            line_width=2,
            color="color",
            fill_alpha="fill_alpha",
            selection_line_color="black",
            selection_line_width=3.5,
            nonselection_alpha=0.45,
        )
        self.cv = CVLayer(fig)  # cross-validated runs: mean held-out curve, ±1 sd band, 1-SE mark
        # No hover or tap tool: both would hit-test on their own (a tooltip per point under the pointer, a tap
        # on several).  One rule (treeexplorer.ui.hittest) finds the point under the pointer for the single
        # tooltip and for the click.  The tooltip is not synced: its content is a DOM node made in the browser.
        self.tip = Tooltip(content="", position=None, interactive=False, syncable=False)
        fig.elements = [self.tip]
        args = {
            "plot": fig,
            "tip": self.tip,
            "points": self.points,
            "points_r": self._train,
            "tests": self.tests,
            "tests_r": self._tests,
            "means": self.cv.means,
            "means_r": None,
            "marks": self.cv.marks,
            "marks_r": None,
            # not read by the hit rule: referenced so that every CV source is in the page from the start, like
            # the means and marks above.  A source that joined the page with the first CV run's renderers did
            # not receive the data set in the same update (the band stayed empty in the browser).
            "cv_band": self.cv.band,
            "cv_lines": self.cv.lines,
            "cloud": self.cloud,
            "cloud_r": self._cloud_train,
            "cloud_tests": self.cloud_tests,
            "cloud_tests_r": self._cloud_tests,
            "cloud_pick": self.cloud_pick,
            "radius": POINT_SIZE / 2 + 2,
            "radius_test": 7,
            "radius_mark": 12,
            "cls": "",
        }
        self._hover = CustomJS(args=args, code=HOVER_JS)
        self._pick = CustomJS(args=args, code=TAP_JS)
        fig.js_on_event(events.MouseMove, self._hover)
        fig.js_on_event(events.MouseLeave, CustomJS(args={"tip": self.tip}, code="tip.visible = false"))
        for event in (events.Tap, events.PressUp, events.DoubleTap):
            fig.js_on_event(event, self._pick)
        # The exact front (contree) as a dashed reference step line, on train accuracy over splits/leaves.
        self.reference = fig.step(
            "x",
            "y",
            source=ColumnDataSource({"x": [], "y": []}),
            mode="after",
            line_width=2,
            line_dash="dashed",
            line_color="#888888",  # mid grey: reads on the light and the dark theme
            alpha=0.9,
            level="underlay",
        )
        lean(self._tests)
        lean(self._cloud_tests)
        lean(self._cloud_train)
        lean(self._train, selectable=True)  # its unselected points fade when one is picked
        lean(self.reference)
        self._reference: dict | None = None
        self._gaps: dict | None = None
        # What the empty frame is waiting for (a first run compiling its kernels), at the frame's centre; hidden
        # once there is a front (set_placeholder)
        centre = {"target": "frame", "symbol": "center"}
        self.placeholder = Label(
            x=Node(**centre),
            y=Node(**centre),
            x_units="screen",
            y_units="screen",
            anchor="center",
            text="",
            text_font_size="15px",
            text_color="#777777",  # mid grey: reads on the light and the dark theme
            visible=False,
        )
        fig.add_layout(self.placeholder)
        # No legend inside the plot (it covered points): the run list under it is the legend
        # (treeexplorer.ui.runlist), made from ``entries``.
        self.entries: list[dict] = []
        self.exact_label = ""
        self.figure = fig
        self._lines: dict[int, object] = {}  # run id -> step line (its colour is fixed at creation)
        self.frame = points_frame([])
        self._muted = False
        self._args: tuple = ([], "splits", True, None, None)
        self.y_mode, self.whole = "accuracy", False
        self.window: tuple | None = None  # the accuracy axis' frame (None: automatic)
        self.below: list = []  # (run label, tree id, accuracy) of the trees drawn on the frame's bottom edge
        self._selected: tuple | None = None
        self.points.selected.on_change("indices", self._on_indices)
        self.cloud_pick.on_change("data", self._on_cloud_pick)

    def set_visible(self, key, visible: bool) -> None:
        """Show or hide an entry of the run list: a run (its id), a CV layer (``("cv", k)``) or ``"exact"``.

        A hidden run's points leave the data (they can be neither seen nor clicked); a hidden CV layer or exact
        line is not drawn, and the hit rule skips renderers that are not visible.
        """
        if key == "exact":
            self.reference.visible = visible
        elif key == "cloud":
            self._cloud_train.visible = self._cloud_tests.visible = visible
        elif isinstance(key, tuple):
            for r in self.cv.renderers(key[1]):
                r.visible = visible
        elif key in self._lines:
            self._lines[key].visible = visible  # _on_visible redraws the points
        self._changed()

    def is_visible(self, key) -> bool:
        """Whether the run list's entry ``key`` is shown (see :meth:`set_visible`)."""
        if key == "exact":
            return bool(self.reference.visible)
        if key == "cloud":
            return bool(self._cloud_train.visible)
        if isinstance(key, tuple):
            return all(r.visible for r in self.cv.renderers(key[1]))
        line = self._lines.get(key)
        return line is None or bool(line.visible)

    @property
    def hidden(self) -> set[int]:
        """Ids of the runs hidden in the run list."""
        return {rid for rid, line in self._lines.items() if not line.visible}

    def _line(self, run):
        line = self._lines.get(run.id)
        if line is None or line.glyph.line_color != run.color:
            if line is not None:
                self.figure.renderers = [r for r in self.figure.renderers if r is not line]
            src = ColumnDataSource({"x": [], "y": []})
            # The colour is given at creation: setting it on an existing Step later fails validation in
            # notebooks (a Value(...) wrapper where a Color is expected).
            line = self.figure.step(
                "x", "y", source=src, mode="after", line_width=2, alpha=0.8, level="underlay", line_color=run.color
            )
            lean(line).on_change("visible", self._on_visible)
            self._lines[run.id] = line
        return line

    def update(
        self,
        runs,
        x: str = "splits",
        show_test: bool = True,
        selected: tuple | None = None,
        dominated: dict | None = None,
        reference: dict | None = None,
        gaps: dict | None = None,
        y: str | None = None,
        whole: bool | None = None,
    ) -> None:
        """Redraw for ``runs`` along complexity ``x``; ``selected`` = ``(run_id, tree_id)`` is outlined.

        ``y``: ``"accuracy"`` (framed around the trees with a split unless ``whole``: see
        :func:`treeexplorer.ui.axes.accuracy_window`) or ``"excess"`` (training errors above the best shown
        tree of at most the same complexity); ``None`` keeps the current choice.

        ``dominated`` maps ``(run id, tree id)`` to a "dominated by ..." text shown on hover.
        ``reference`` is the exact front (:func:`treeexplorer.ui.gapview.reference_curve`), drawn over splits
        or leaves only; ``gaps`` maps ``(run id, tree id)`` to the tree's gap in words (hover).
        """
        self._reference, self._gaps = reference, gaps
        self._args = (list(runs), x, show_test, selected, dominated)
        self.y_mode = y if y is not None else self.y_mode
        self.whole = whole if whole is not None else self.whole
        excess = self.y_mode == "excess"
        trees_only = self.y_mode in TREES_ONLY
        show_test = show_test and not excess  # held-out errors are not on the training errors' scale
        live = {run.id for run in runs}
        gone = [line for rid, line in self._lines.items() if rid not in live]
        if gone:
            self.figure.renderers = [r for r in self.figure.renderers if r not in gone]
            self._lines = {rid: line for rid, line in self._lines.items() if rid in live}
        lines = [self._line(run) for run in runs]
        hidden = self.hidden
        shown = [r for r in runs if r.id not in hidden]
        shown_df = points_frame(shown, dominated)
        self.frame = shown_df
        everything = points_frame(runs)
        # one top for every run drawn: the cost axis' 0 is the top of the plot, the dearest unit cost the bottom
        self._cost_top = float(everything.cost_top.max()) if len(everything) else 1.0
        df = _as_accuracy(shown_df, self.y_mode, self._cost_top)  # the y values: accuracy, balanced, top - cost
        cvf = cv_frame(shown, x) if not trees_only else cv_frame([], x)
        window = None
        if not excess and not self.whole:
            extra = cvf[cvf.level >= 1].cv_mean.tolist() if x != "leaves" else cvf[cvf.level >= 2].cv_mean.tolist()
            ref = reference if reference is not None and x in ("splits", "leaves") else None
            extra += [a for k, a in zip(ref["splits"], ref["accuracy"]) if k >= 1] if ref else []
            extra += self._cloud_accuracies(show_test) if not trees_only else []
            window = accuracy_window(df if show_test else df.drop(columns="test_accuracy"), extra)
        self.window = window
        if len(df):
            proven = df.optimal.tolist()
            ys, moved = clip_below(df.train_accuracy.tolist(), window)
            self.below = [(r, t, a) for r, t, a, m in zip(df.run, df.tree, df.train_accuracy, moved) if m]
            data = {
                "x": df[x].tolist(),
                "y": errors_above_best(df, x) if excess else ys,
                # shape: the run (colours alone get confused); filled: proven optimal, hollow: not proven; a
                # downward triangle: on the frame's bottom edge, its accuracy is below the frame
                "marker": [EDGE_MARKER if m else run_marker(r) for r, m in zip(df.run_id.tolist(), moved)],
                "angle": [math.pi if m else 0.0 for m in moved],
                "fill_alpha": [0.95 if p else 0.15 for p in proven],
                "gap": [(gaps or {}).get((r, t)) or "—" for r, t in zip(df.run_id.tolist(), df.tree.tolist())],
            }
            for c in COLUMNS[2:]:
                if c not in data:
                    data[c] = shown_df[c].tolist()  # the hovers' figures, whatever the y axis shows
            for c in ("test_accuracy", "train_bacc", "test_bacc", "train_cost"):
                data[c] = shown_df[c].fillna(-1).tolist()
        else:
            data = {c: [] for c in COLUMNS}
            self.below = []
        if show_test and len(df):
            keep = [i for i, v in enumerate(df.test_accuracy.tolist()) if v == v]  # drop NaN (no held-out rows)
            tdata = {k: [v[i] for i in keep] for k, v in data.items()}
            tdata["y"] = clip_below([df.test_accuracy.iloc[i] for i in keep], window)[0]
        else:
            tdata = {c: [] for c in COLUMNS}
        tdata.pop("run_id", None)
        self._muted = True  # new data resets the selection; that is not a user tap
        try:
            self.points.selected.indices = []  # old indices point at other rows of the new data
            self.points.data = data
            self.tests.data = tdata
            self._select(selected)
        finally:
            self._muted = False
        items = []
        everything = _as_accuracy(everything, self.y_mode, self._cost_top)
        if excess and len(everything):
            everything["excess"] = errors_above_best(everything, x)
        for run, line in zip(runs, lines):
            sub = everything[everything.run_id == run.id]
            stair = _staircase(sub, x, "train_accuracy") if len(sub) else sub
            ys = everything.loc[stair.index, "excess"].tolist() if excess and len(sub) else None
            line.data_source.data = {
                "x": stair[x].tolist() if len(sub) else [],
                "y": (ys if excess else clip_below(stair["train_accuracy"].tolist(), window)[0]) if len(sub) else [],
            }
            items.append({"key": run.id, "label": run.label, "color": run.color, "marker": run_marker(run.id)})
        cv = self.cv.update([] if trees_only else shown, x)
        if self.cv._made and self._hover.args["means_r"] is None:  # the CV renderers exist from the first CV run
            for js in (self._hover, self._pick):
                js.args = {**js.args, "means_r": self.cv._means, "marks_r": self.cv._marks}
        items += [{"key": ("cv", k), "label": label} for k, (label, _) in enumerate(cv)]
        self._draw_reference(None if trees_only else reference, x)
        self._draw_cloud(x, show_test, excess, window, df, hidden=self.y_mode == "cost")
        self.entries = items
        self._set_axes(x, window, excess)
        self._changed()

    @property
    def axis_value(self):
        """``(word, value)``: what the y axis shows in words and ``value(y)``, a drawn y in the axis' own units
        (the cost axis is drawn upside down)."""
        if self.y_mode == "cost":
            top = self._cost_top
            return "cost", lambda y: top - y
        return ("balanced accuracy" if self.y_mode == "balanced" else "accuracy"), lambda y: y

    # -- the Rashomon set's cloud ----------------------------------------------------------------------
    def set_cloud(self, cloud, color: str = CLOUD_COLOR) -> None:
        """Draw the set ``cloud`` (a :class:`~treeexplorer.ui.controller.SetCloud`, or None to take it away) in
        ``color``, faintly, under the runs' points; the plot is redrawn (the frame takes it in)."""
        new = cloud is not None and (self._cloud is None or cloud.stamp != self._cloud.stamp)
        self._cloud, self._cloud_color = cloud, color
        if new:  # a new cloud is shown even if the run list's box hid the last one
            self._cloud_train.visible = self._cloud_tests.visible = True
        runs, x, show_test, _, dominated = self._args
        self.update(runs, x, show_test, self._selected, dominated, self._reference, self._gaps)

    def _cloud_names(self) -> list[str]:
        return [c.name for c in self._cloud.front.schema.columns]

    def _cloud_accuracies(self, show_test: bool) -> list[float]:
        """The cloud's accuracies at one split or more (the accuracy frame takes them in, as the CV means)."""
        if self._cloud is None:
            return []
        keys = ("train_accuracy", "test_accuracy") if show_test else ("train_accuracy",)
        values = {t.metrics[k] for t in self._cloud.trees if t.metrics["splits"] >= 1 for k in keys}
        return [v for v in values if v is not None]

    def _draw_cloud(self, x: str, show_test: bool, excess: bool, window, df, hidden: bool = False) -> None:
        cloud = self._cloud
        empty = {c: [] for c in CLOUD_COLUMNS}
        if cloud is None or not cloud.trees or hidden:  # hidden: a y axis the set's places are not on
            self.cloud.data, self.cloud_tests.data, self.cloud_label = empty, dict(empty), ""
            return
        run = next((r for r in self._args[0] if r.id == cloud.run_id), None)
        base = None
        if run is not None and self._selected is not None and self._selected[0] == run.id:
            try:
                base = run.front[self._selected[1]].metrics["train_errors"]
            except KeyError:
                base = None
        names = self._cloud_names()
        if self._cloud_cols[0] is not cloud.front:  # the columns each tree tests, read once per set
            self._cloud_cols = (cloud.front, {})
        cols = self._cloud_cols[1]
        train = cloud_places(cloud.trees, x, names, base_errors=base, columns=cols)
        if excess:  # errors above the best run's tree of at most the same complexity (the runs' own reference)
            ys = _above_runs([p["x"] for p in train], [p["errors"] for p in train], df, x)
        else:
            ys = clip_below([p["accuracy"] for p in train], window)[0]
        self.cloud.data = self._cloud_data(train, ys, cloud, self._cloud_color)
        held = cloud_places(cloud.trees, x, names, True, base, cols) if show_test and not excess else []
        held_ys = clip_below([p["accuracy"] for p in held], window)[0]
        self.cloud_tests.data = self._cloud_data(held, held_ys, cloud, self._cloud_color)
        n = len(cloud.trees)
        self.cloud_label = (
            f"{cloud.label}: {n:,} trees of the Rashomon set of run #{cloud.run_id} (faint grey circles"
            + (", held-out faint ✕" if held else "")
            + "; the bigger, the more trees at that place; click one to open its best tree)"
        )

    @staticmethod
    def _cloud_data(places: list[dict], ys: list, cloud, color: str) -> dict:
        sizes = [cloud_size(p["count"]) for p in places]
        return {
            "x": [p["x"] for p in places],
            "y": list(ys),
            "size": sizes,
            "radius": [max(s / 2 + 1, 5.0) for s in sizes],
            "color": [color] * len(places),
            "rank": [p["rank"] for p in places],
            "stamp": [cloud.stamp] * len(places),
            "count": [p["count"] for p in places],
            "title": [p["title"] for p in places],
            "tip": [p["tip"] for p in places],
            "run": [cloud.label] * len(places),
        }

    def _on_cloud_pick(self, attr, old, new) -> None:
        if self.on_cloud is None or not new.get("rank"):
            return
        self.on_cloud(int(new["rank"][0]), int(new["stamp"][0]))

    def _set_axes(self, x: str, window: tuple | None, excess: bool) -> None:
        """Axis labels, the accuracy frame (``None``: automatic) and whole-number ticks on count axes."""
        fig = self.figure
        fig.xaxis.axis_label = X_MEASURES[x]
        fig.yaxis.axis_label = Y_LABELS["excess" if excess else self.y_mode if self.y_mode in Y_LABELS else "accuracy"]
        # splits, leaves and depth are counts: never a tick at 0.5 (a run with one point has a tiny range)
        fig.xaxis.ticker.min_interval = 0 if x == "avg_tests" else 1
        fig.yaxis.ticker.min_interval = 1 if excess else 0
        if self.y_mode == "cost":
            self._cost_ticks.args = {"top": self._cost_top}
        ticks = self._cost_ticks if self.y_mode == "cost" else self._ticks
        if ticks is not None and fig.yaxis[0].formatter is not ticks:
            fig.yaxis[0].formatter = ticks
        # a framed axis is a fixed Range1d (the reset tool returns to the frame); else Bokeh's automatic range
        if window is None:
            auto = self._auto_excess if excess else self._auto_y
            if fig.y_range is not auto:
                fig.y_range = auto
        else:
            if (self._framed_y.start, self._framed_y.end) != window:
                self._framed_y.update(start=window[0], end=window[1])
            if fig.y_range is not self._framed_y:
                fig.y_range = self._framed_y

    def _draw_reference(self, reference: dict | None, x: str) -> None:
        """Set the exact front's line for axis ``x`` and its legend item (hidden where it is meaningless)."""
        ref = reference if reference is not None and x in ("splits", "leaves") else None
        self.reference.data_source.data = {
            "x": [k + (x == "leaves") for k in ref["splits"]] if ref else [],
            "y": list(ref["accuracy"]) if ref else [],
        }
        self.exact_label = ref["label"] if ref else ""

    def set_exact(self, reference: dict | None, gaps: dict | None) -> None:
        """Show a newly known exact front: its line and the hover gaps, without redrawing the points.

        The points' data and selection stay as they are, so a tap on its way from the browser keeps its meaning.
        """
        self._reference, self._gaps = reference, gaps
        self._draw_reference(reference, self._args[1])
        n = len(self.frame)
        if n and len(self.points.data.get("gap", [])) == n:
            col = [
                (gaps or {}).get((r, t)) or "—" for r, t in zip(self.frame.run_id.tolist(), self.frame.tree.tolist())
            ]
            self.points.patch({"gap": [(slice(0, n), col)]})
        self._changed()

    def set_placeholder(self, text: str) -> None:
        """Show ``text`` in the middle of the plot's frame (``""``: nothing), e.g. while a first run compiles."""
        self.placeholder.update(text=text, visible=bool(text))
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def select(self, selected: tuple | None) -> None:
        """Outline the point of ``(run_id, tree_id)`` (no callback)."""
        self._select(selected)
        self._changed()

    def _select(self, selected: tuple | None) -> None:
        self._selected = selected
        idx = []
        if selected is not None and len(self.frame):
            hit = self.frame.index[(self.frame.run_id == selected[0]) & (self.frame.tree == selected[1])]
            idx = [int(hit[0])] if len(hit) else []
        if list(self.points.selected.indices) == idx:
            return
        muted, self._muted = self._muted, True
        try:
            self.points.selected.indices = idx
        finally:
            self._muted = muted

    def pick(self, indices, selected: tuple | None = None) -> int | None:
        """The row a tap on ``indices`` (every point under the cursor) means: the point drawn on top.

        The selected point is drawn over the others (Bokeh draws selections last), then later rows over
        earlier ones.
        """
        rows = [int(i) for i in indices if 0 <= int(i) < len(self.frame)]
        if not rows:
            return None
        if selected is not None:
            for i in rows:
                r = self.frame.iloc[i]
                if (int(r["run_id"]), int(r["tree"])) == tuple(selected):
                    return i
        return max(rows)

    def reveal_on_tap(self, css_class: str) -> None:
        """After a click on a point, scroll the element with ``css_class`` (the selected tree's card) into view.

        Only when it starts in the lower 40 % of the window or below it: on a laptop screen the card sits
        under the plot, and the tree a click opens would otherwise change out of sight.  Runs in the browser
        (the element is found through Panel's shadow roots); server-side selections never scroll.
        """
        self._pick.args = {**self._pick.args, "cls": css_class}

    def _on_visible(self, attr, old, new) -> None:
        # the run list hid or showed a run: its points leave or rejoin the data
        runs, x, show_test, _, dominated = self._args
        self.update(runs, x, show_test, self._selected, dominated, self._reference, self._gaps)

    def _on_indices(self, attr, old, new) -> None:
        if self._muted or self.on_select is None:
            return
        if not new:
            # a tap on empty plot: the card keeps its tree, so its point keeps the outline
            if self._selected is not None:
                self._select(self._selected)
                self._changed()
            return
        i = self.pick(new, self._selected)
        if i is None:
            return
        row = self.frame.iloc[i]
        if len(new) > 1:  # keep one outlined point: the one whose tree the card shows
            self._select((int(row["run_id"]), int(row["tree"])))
        self.on_select(int(row["run_id"]), int(row["tree"]))
