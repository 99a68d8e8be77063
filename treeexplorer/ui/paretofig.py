"""The app's live Pareto plot: one Bokeh figure per session, updated in place.

A HoloViews rebuild of the plot costs 1-2 s of Bokeh model churn per change on this machine; swapping
ColumnDataSource data costs milliseconds, so switching the axis or adding a run stays interactive.
(Notebooks use the HoloViews version, :func:`treeexplorer.ui.views.front_plot`.)
A click on a train point (a tap, a long press or the second of two quick clicks) calls
``on_select(run_id, tree_id)``.
"""

from __future__ import annotations

from collections.abc import Callable

from bokeh import events
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Legend, LegendItem, TapTool
from bokeh.plotting import figure

from treeexplorer.render.bokehview import lean
from treeexplorer.render.layout import run_marker
from treeexplorer.ui.cvfig import CVLayer
from treeexplorer.ui.views import X_MEASURES, _staircase, points_frame

__all__ = ["ParetoFigure"]

# An HTML template rather than (label, value) rows: Bokeh's rows never wrap, and a solver's info line (λ
# values, counters) made the tooltip wider than the plot, over the sidebar.
_ROWS = [
    ("run", "@run"),
    ("tree", "@tree"),
    ("splits", "@splits"),
    ("leaves", "@leaves"),
    ("depth", "@depth"),
    ("tests/sample", "@avg_tests{0.000}"),
    ("train acc", "@train_accuracy{0.0000}"),
    ("held-out acc", "@test_accuracy{0.0000}"),
    ("train errors", "@train_errors"),
    ("status", "@proven"),
    ("solver info", "@info"),
    ("vs optimum", "@gap"),
]
TOOLTIPS = (
    '<div style="max-width: 340px; white-space: normal; overflow-wrap: anywhere; font-size: 12px">'
    + "".join(f'<div><span style="color: #555">{k}:</span> {v}</div>' for k, v in _ROWS)
    + "</div>"
)
COLUMNS = [
    "x",
    "y",
    "run",
    "run_id",
    "tree",
    "color",
    "marker",
    "fill_alpha",
    "splits",
    "leaves",
    "depth",
    "avg_tests",
    "train_accuracy",
    "test_accuracy",
    "train_errors",
    "proven",
    "info",
    "gap",
]


POINT_SIZE = 13  # train points' marker size (screen pixels)

# Scroll the selected tree's card (CSS class ``cls``) into view after a click on a point (``reveal_on_tap``).
_REVEAL_JS = """
if (!cls) return;
const find = (root) => {
  const el = root.querySelector('.' + cls);
  if (el) return el;
  for (const node of root.querySelectorAll('*')) {
    if (node.shadowRoot) { const hit = find(node.shadowRoot); if (hit) return hit; }
  }
  return null;
};
const el = find(document);
if (el && el.getBoundingClientRect().top > 0.6 * window.innerHeight) {
  el.scrollIntoView({behavior: 'instant', block: 'start'});  // no animation racing the user's next move
}
"""

# Bokeh's tap is a click released within 300 ms and not within 300 ms of the previous tap.  A slower click
# (a deliberate one, a touch screen's tap-and-hold, a busy browser between mouse down and up) is a "press",
# the second of two quick clicks a "double tap": the tap tool ignores both.  This selects the points under the
# pointer for those two, as the tap tool would: within a marker's radius (plus its outline) on screen.
_PICK_JS = (
    """
const d = source.data, xr = plot.x_range, yr = plot.y_range;
const kx = plot.inner_width / (xr.end - xr.start), ky = plot.inner_height / (yr.end - yr.start);
const hits = [];
for (let i = 0; i < d.x.length; i++) {
  const dx = (d.x[i] - cb_obj.x) * kx, dy = (d.y[i] - cb_obj.y) * ky;
  if (dx * dx + dy * dy <= radius * radius) hits.push(i);
}
if (hits.length == 0) return;  // on empty plot: the selection stays
source.selected.indices = hits;
"""
    + _REVEAL_JS
)


class ParetoFigure:
    """Train points (tap to select), held-out crosses and one step line per run, with a legend.

    Rows are drawn in run order, so a later run's point covers an earlier one's; a tap on overlapping points
    selects the one drawn on top (the selected one, else the latest run's).  Hiding a run in the legend
    hides its points too: they leave the data, so they can be neither seen nor clicked.

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
        fig = figure(
            height=height,
            sizing_mode="stretch_width",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location="above",
            x_axis_label=X_MEASURES["splits"],
            y_axis_label="Accuracy",
        )
        fig.x_range.range_padding = fig.y_range.range_padding = 0.08
        fig.xgrid.grid_line_alpha = fig.ygrid.grid_line_alpha = 0.5
        self._tests = fig.scatter(
            "x", "y", source=self.tests, marker="x", size=10, line_width=2, color="color", alpha=0.75
        )
        self._train = fig.scatter(
            "x",
            "y",
            source=self.points,
            marker="marker",
            size=POINT_SIZE,
            line_width=2,
            color="color",
            fill_alpha="fill_alpha",
            selection_line_color="black",
            selection_line_width=3.5,
            nonselection_alpha=0.45,
        )
        # Hover on the train points only: each already lists the held-out accuracy, and identical trees of
        # overlaid runs would otherwise stack twice as many tooltips.
        self.tap = TapTool(renderers=[self._train])
        fig.add_tools(HoverTool(renderers=[self._train], tooltips=TOOLTIPS), self.tap)
        self._pick = CustomJS(
            args={"source": self.points, "plot": fig, "radius": POINT_SIZE / 2 + 1, "cls": ""}, code=_PICK_JS
        )
        fig.js_on_event(events.PressUp, self._pick)
        fig.js_on_event(events.DoubleTap, self._pick)
        self.legend = Legend(
            items=[],
            location="bottom_right",
            background_fill_alpha=0.85,
            label_text_font_size="9pt",
            click_policy="hide",
        )
        fig.add_layout(self.legend)
        self.cv = CVLayer(fig)  # cross-validated runs: mean held-out curve, ±1 sd band, 1-SE mark
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
        lean(self._train, selectable=True)  # its unselected points fade when one is picked
        lean(self.reference)
        self._reference: dict | None = None
        self._gaps: dict | None = None
        # Legend items are kept and reused: a new item (or a new list) makes Bokeh re-walk the page's whole
        # model graph (~40 ms of the server's thread).  The exact front's item is always listed, shown only
        # with its line, so its arrival changes no reference.
        self._items: dict[object, LegendItem] = {}
        self._exact_item = LegendItem(label="", renderers=[self.reference], visible=False)
        self.figure = fig
        self._lines: dict[int, object] = {}  # run id -> step line (its colour is fixed at creation)
        self._keys: dict[int, object] = {}  # run id -> empty scatter: draws the run's marker in the legend
        self.frame = points_frame([])
        self._muted = False
        self._args: tuple = ([], "splits", True, None, None)
        self._selected: tuple | None = None
        self.points.selected.on_change("indices", self._on_indices)

    @property
    def hidden(self) -> set[int]:
        """Ids of the runs hidden with the legend."""
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
            # one point off the plot (NaN): the legend draws a glyph only for a renderer with data
            key = lean(
                self.figure.scatter(
                    [float("nan")], [float("nan")], marker=run_marker(run.id), size=10, line_width=2, color=run.color
                )
            )
            old_key, self._keys[run.id] = self._keys.get(run.id), key
            if old_key is not None:
                self.figure.renderers = [r for r in self.figure.renderers if r is not old_key]
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
    ) -> None:
        """Redraw for ``runs`` along complexity ``x``; ``selected`` = ``(run_id, tree_id)`` is outlined.

        ``dominated`` maps ``(run id, tree id)`` to a "dominated by ..." text shown on hover.
        ``reference`` is the exact front (:func:`treeexplorer.ui.gapview.reference_curve`), drawn over splits
        or leaves only; ``gaps`` maps ``(run id, tree id)`` to the tree's gap in words (hover).
        """
        self._reference, self._gaps = reference, gaps
        self._args = (list(runs), x, show_test, selected, dominated)
        live = {run.id for run in runs}
        gone = [line for rid, line in self._lines.items() if rid not in live]
        if gone:
            gone += [key for rid, key in self._keys.items() if rid not in live]
            self.figure.renderers = [r for r in self.figure.renderers if r not in gone]
            self._lines = {rid: line for rid, line in self._lines.items() if rid in live}
            self._keys = {rid: key for rid, key in self._keys.items() if rid in live}
        lines = [self._line(run) for run in runs]
        hidden = self.hidden
        df = points_frame([r for r in runs if r.id not in hidden], dominated)
        self.frame = df
        if len(df):
            proven = df.optimal.tolist()
            data = {
                "x": df[x].tolist(),
                "y": df.train_accuracy.tolist(),
                # shape: the run (colours alone get confused); filled: proven optimal, hollow: not proven
                "marker": [run_marker(r) for r in df.run_id.tolist()],
                "fill_alpha": [0.95 if p else 0.15 for p in proven],
                "gap": [(gaps or {}).get((r, t)) or "—" for r, t in zip(df.run_id.tolist(), df.tree.tolist())],
            }
            for c in COLUMNS[2:]:
                if c not in data:
                    data[c] = df[c].tolist()
            data["test_accuracy"] = df.test_accuracy.fillna(-1).tolist()
        else:
            data = {c: [] for c in COLUMNS}
        if show_test and len(df):
            keep = [i for i, v in enumerate(df.test_accuracy.tolist()) if v == v]  # drop NaN (no held-out rows)
            tdata = {k: [v[i] for i in keep] for k, v in data.items()}
            tdata["y"] = [df.test_accuracy.iloc[i] for i in keep]
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
        everything = points_frame(runs)
        for run, line in zip(runs, lines):
            sub = everything[everything.run_id == run.id]
            stair = _staircase(sub, x, "train_accuracy") if len(sub) else sub
            line.data_source.data = {
                "x": stair[x].tolist() if len(sub) else [],
                "y": stair["train_accuracy"].tolist() if len(sub) else [],
            }
            items.append(self._item(run.id, run.label, [line, self._keys[run.id]]))
        cv = self.cv.update([r for r in runs if r.id not in hidden], x)
        items += [self._item(("cv", k), label, renderers) for k, (label, renderers) in enumerate(cv)]
        self._draw_reference(reference, x)
        items.append(self._exact_item)
        if show_test and len(tdata["x"]):
            items.append(self._item("test", "held-out accuracy", [self._tests]))
        self._set_legend(items)
        self.figure.xaxis.axis_label = X_MEASURES[x]
        self._changed()

    def _item(self, key, label: str, renderers: list) -> LegendItem:
        """The legend item under ``key``, made again only when its renderers changed."""
        item = self._items.get(key)
        if item is None or list(item.renderers) != renderers:
            item = self._items[key] = LegendItem(label=label, renderers=renderers)
        elif item.label != value(label):
            item.label = value(label)  # a plain string set later would be read as a column name
        return item

    def _set_legend(self, items: list) -> None:
        """Show ``items`` (the list is replaced only when it changed); the legend only with a visible item."""
        if list(self.legend.items) != items:
            self._items = {k: v for k, v in self._items.items() if v in items}
            self.legend.items = items
        self.legend.visible = any(item.visible for item in items)

    def _draw_reference(self, reference: dict | None, x: str) -> None:
        """Set the exact front's line for axis ``x`` and its legend item (hidden where it is meaningless)."""
        ref = reference if reference is not None and x in ("splits", "leaves") else None
        self.reference.data_source.data = {
            "x": [k + (x == "leaves") for k in ref["splits"]] if ref else [],
            "y": list(ref["accuracy"]) if ref else [],
        }
        if ref and self._exact_item.label != value(ref["label"]):
            self._exact_item.label = value(ref["label"])
        self._exact_item.visible = bool(ref)

    def set_exact(self, reference: dict | None, gaps: dict | None) -> None:
        """Show a newly known exact front: its line and the hover gaps, without redrawing the points.

        The points' data and selection stay as they are, so a tap on its way from the browser keeps its meaning.
        """
        self._reference, self._gaps = reference, gaps
        self._draw_reference(reference, self._args[1])
        self._set_legend(list(self.legend.items))
        n = len(self.frame)
        if n and len(self.points.data.get("gap", [])) == n:
            col = [
                (gaps or {}).get((r, t)) or "—" for r, t in zip(self.frame.run_id.tolist(), self.frame.tree.tolist())
            ]
            self.points.patch({"gap": [(slice(0, n), col)]})
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
        """After a tap on a point, scroll the element with ``css_class`` (the selected tree's card) into view.

        Only when it starts in the lower 40 % of the window or below it: on a laptop screen the card sits
        under the plot, and the tree a click opens would otherwise change out of sight.  Runs in the browser
        (the element is found through Panel's shadow roots); server-side selections never scroll.
        """
        self.tap.callback = CustomJS(args={"cls": css_class}, code=_REVEAL_JS)
        self._pick.args = {**self._pick.args, "cls": css_class}

    def _on_visible(self, attr, old, new) -> None:
        # a legend click hid or showed a run: its points leave or rejoin the data
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
