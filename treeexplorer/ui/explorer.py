"""The Explorer: one Panel component that is the served app, an inline notebook view and an ipywidget.

>>> import panel as pn
>>> pn.extension()
>>> from treeexplorer.ui import Explorer
>>> Explorer()                      # inline in Jupyter; pn.ipywidget(Explorer()) in ipywidgets notebooks
>>> Explorer().app().servable()     # what apps/explorer.py does under ``panel serve``
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import traceback

import pandas as pd
import panel as pn
import param
from panel.io.state import set_curdoc
from panel.theme.fast import Fast

from treeexplorer.discretize import takes_n_bins
from treeexplorer.export import export_bytes
from treeexplorer.front import optimality_text
from treeexplorer.render.bokehview import TreeFigure
from treeexplorer.render.legend import legend_html
from treeexplorer.ui import handover
from treeexplorer.ui.comparediagram import CompareDiagram
from treeexplorer.ui.controller import (
    MAX_UPLOAD_BYTES,
    Controller,
    RunSettings,
    broken_solvers,
    dominance,
    solver_spec,
)
from treeexplorer.ui.cvoption import CVOption
from treeexplorer.ui.diagnostics import DiagnosticsView
from treeexplorer.ui.enterkey import EnterKey
from treeexplorer.ui.explain import ExplainRow
from treeexplorer.ui.gapview import reference_curve
from treeexplorer.ui.jobs import readable_error
from treeexplorer.ui.lazy import lazy_card, lazy_tabs
from treeexplorer.ui.offline import keep_local
from treeexplorer.ui.paramwidgets import RESERVED, read_values, widget_for
from treeexplorer.ui.paretofig import ParetoFigure
from treeexplorer.ui.preview import preview_markdown
from treeexplorer.ui.progress import describe
from treeexplorer.ui.sweepview import SweepView
from treeexplorer.ui.treeview import TreeTools
from treeexplorer.ui.views import (
    X_MEASURES,
    compare_markdown,
    metrics_frame,
    rules_markdown,
)

__all__ = ["Explorer"]

POLL_MS = 150
AXIS_HELP = (
    "How a tree's complexity is counted on the x axis. Splits: its tests (internal nodes). Leaves: splits + 1 "
    "for a binary tree. Depth: the longest path from the root. Expected tests per sample: how many tests a row "
    "goes through on average (the training rows' mean path length), DPDT's trade-off measure."
)
UPLOAD_PREFIX = "uploaded: "
TABLE_CSS = """
table { border-collapse: collapse; font-size: 0.9em; width: 100%; }
td { text-align: left !important; padding: 3px 8px; border-bottom: 1px solid #eee; }
td:first-child { opacity: 0.75; width: 42%; }
"""
SIDEBAR_W = 310

# Inline SVG icons: an icon *name* makes the browser fetch the tabler-icons webfont from a CDN.
_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24" fill="currentColor" '
    'stroke="none">{}</svg>'
)
PLAY_ICON = _SVG.format('<path d="M7 4v16l13-8z"/>')
STOP_ICON = _SVG.format('<rect x="6" y="6" width="12" height="12" rx="1"/>')

# Panel's Fast design adds a Google Fonts stylesheet (Open Sans); this one is the same design without it, so
# the served page needs nothing from the internet (the text falls back to the system's sans-serif).  The
# class keeps the name "Fast": Panel finds the design's own bundled files by the class name.
OfflineFast = type("Fast", (Fast,), {"_resources": {**Fast._resources, "font": {}}, "__module__": __name__})


@contextlib.contextmanager
def batched(doc):
    """Defer Bokeh's walk of the whole model graph to the end of a batch of changes to ``doc``.

    Every changed model reference (a new pane, renderer or source) otherwise re-walks the document: a run's
    update cost ~450 ms of server time, ~170 ms batched.  Only on the document's own thread with its lock
    (Panel's check); from a worker thread Panel queues the changes on the event loop anyway.
    """
    if doc is not None and hasattr(doc, "models") and pn.state._unblocked(doc):
        with doc.models.freeze():
            yield
    else:
        yield


def _safe(method):
    """Run a view callback; a failure becomes an alert (and a log traceback) instead of breaking the page."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            with batched(self._doc):
                return method(self, *args, **kwargs)
        except Exception as exc:
            traceback.print_exc()
            self.controller.error = f"display error in {method.__name__.strip('_')}: {readable_error(exc)}"

    return wrapper


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "tree"


class Explorer(pn.viewable.Viewer):
    """Find and explore Pareto fronts of decision trees.

    Parameters
    ----------
    dataset : str
        Bundled dataset shown (see :func:`treeexplorer.bundled_datasets`); setting it later loads that table.
    solver : str, optional
        Solver selected (default: CART when available, else the first registered one); live like ``dataset``.
    run_default : bool
        Solve once at start so a front is shown right away.
    test_size : float
        Held-out fraction (live).

    In a notebook, load Panel with ``pn.extension(inline=True)`` so BokehJS and Panel's scripts come from the
    installed packages rather than a CDN.
    """

    dataset = param.String(default="iris")
    solver = param.String(default=None, allow_None=True)
    run_default = param.Boolean(default=True)
    test_size = param.Number(default=0.25, bounds=(0.0, 0.9))

    def __init__(self, **params):
        super().__init__(**params)
        self.controller = c = Controller(test_size=self.test_size)
        # The document this component was built for (a served session's; None in a notebook until shown):
        # raw Bokeh changes made from another thread are handed to it under its lock.
        self._doc = pn.state.curdoc if getattr(pn.state.curdoc, "session_context", None) else None
        self._poller = None
        self._run_rows: dict = {}
        self._dominated: dict = {}
        self._quiet = 0  # > 0 while the app itself sets widgets: their watchers must not act on it
        self._build_widgets()
        self._build_layout()
        c.param.watch(self._on_runs, ["runs"])
        c.param.watch(self._redraw_plot, ["partial"])
        c.param.watch(self._on_selected, ["selected", "compare"])
        c.param.watch(self._on_messages, ["error", "notice", "many_classes"])
        c.param.watch(self._on_progress, ["progress", "running"])
        c.param.watch(self._on_data, ["data_version", "columns", "target", "test_name", "missing", "drop_missing"])
        self.param.watch(self._on_own_params, ["dataset", "solver", "test_size"])
        self._exact_poller = None
        self._building = True
        c.exact.auto = True  # small data: the exact front follows the first run in the background
        c.exact.param.watch(self._on_exact, ["status", "running", "version", "offer"])
        self._register_session_end()
        # the same tab reloaded (the theme switch reloads the page): continue its session instead of starting over
        self._token = handover.token_from_args(pn.state.session_args) if self._doc is not None else None
        previous = handover.take(self._token)
        self._token = self._token or handover.new_token()
        if self._doc is not None:
            handover.register(self._token, c)
        if previous is not None:
            c.take_over(previous)
            self._show_taken_over_data()
        elif c.load_bundled(self.dataset):
            self._on_data()
        if previous is None and self.run_default and self.solver_w.options:
            # Blocking: a served page is built with its first front.  Sessions opening together therefore
            # queue on the server's event loop (issue 18's load figures); a background first run would need
            # the browser's document_ready before its results could be applied (Panel defers callbacks).
            self.run_now(wait=True)
        self._on_runs()
        broken = broken_solvers()
        if broken:
            note = "; ".join(f"solver {n} is unavailable ({why})" for n, why in broken.items())
            c.notice = f"{c.notice}; {note}" if c.notice else note
        self._on_messages()
        self._building = False

    # -- widgets -------------------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        c = self.controller
        sw = {"sizing_mode": "stretch_width"}
        self.dataset_w = pn.widgets.Select(label="Dataset", options=c.bundled(), value=self.dataset, **sw)
        self.upload_w = pn.widgets.FileInput(accept=".csv,.tsv,.txt,.parquet,.pq", multiple=False, **sw)
        self.target_w = pn.widgets.Select(label="Target column", options=[], **sw)
        self.test_size_w = pn.widgets.FloatSlider(
            label="Held-out fraction", start=0.0, end=0.5, step=0.05, value=self.test_size, **sw
        )
        self.seed_w = pn.widgets.IntInput(label="Split seed", value=0, start=0, **sw)
        self.test_upload_w = pn.widgets.FileInput(accept=".csv,.tsv,.txt,.parquet,.pq", **sw)
        self.test_clear_w = pn.widgets.Button(label="Use the split instead", color="light", visible=False, **sw)
        self.data_info = pn.pane.Markdown("", styles={"font-size": "0.85em", "opacity": "0.75"}, margin=(0, 10))
        self.drop_missing_w = pn.widgets.Checkbox(label="Drop rows with missing values", value=False, **sw)
        self.many_w = pn.widgets.Button(label="Use it anyway", color="danger", visible=False, width=150)
        self.many_cancel_w = pn.widgets.Button(label="Keep the previous table", color="light", visible=False, width=190)

        solvers = c.solvers()
        default = (
            self.solver
            if self.solver in solvers
            else ("cart" if "cart" in solvers else (solvers[0] if solvers else None))
        )
        self.solver_w = pn.widgets.Select(label="Solver", options=solvers, value=default, **sw)
        self.solver_doc = pn.pane.Markdown("", styles={"font-size": "0.85em", "opacity": "0.75"}, margin=(0, 10))
        self.disc_w = pn.widgets.Select(label="Discretizer", options=[], **sw)
        self.bins_w = pn.widgets.IntInput(
            label="N bins (tests)",
            value=None,
            start=1,
            end=1000,
            placeholder="method default",
            description="Thresholds per feature (quantile/uniform) or number of tests (MID)",
            **sw,
        )
        self.mid_w = pn.widgets.FloatInput(
            label="MID anytime budget (s)",
            value=None,
            start=0.1,
            end=3600,
            placeholder="off",
            description="Solve on the top 1, 2, 4, ... MID tests for this many seconds",
            **sw,
        )
        self.params_box = pn.Column(sizing_mode="stretch_width", margin=0)
        self.param_widgets: dict = {}
        self.time_w = pn.widgets.FloatInput(
            label="Time limit (s)",
            value=30.0,
            start=0.5,
            end=86400,
            step=5,
            description="Best trees so far are kept, marked not proven",
            **sw,
        )
        self.cv_option = CVOption()
        self.run_w = pn.widgets.Button(label="Run", color="primary", icon=PLAY_ICON, **sw)
        self.cancel_w = pn.widgets.Button(label="Cancel", color="warning", icon=STOP_ICON, disabled=True, **sw)
        self.progress_w = pn.indicators.Progress(
            active=False, value=0, max=100, visible=False, bar_color="primary", **sw
        )
        self.status_w = pn.pane.Markdown("", styles={"font-size": "0.85em"}, margin=(0, 10))

        self.error_w = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self.notice_w = pn.pane.Alert("", alert_type="info", visible=False, sizing_mode="stretch_width")
        self.x_w = pn.widgets.RadioButtonGroup(
            options={v: k for k, v in X_MEASURES.items()}, value="splits", color="primary", variant="outline", width=440
        )
        self.show_test_w = pn.widgets.Checkbox(label="held-out points", value=True, align="center")
        self.pareto = ParetoFigure(on_select=self._on_point, on_change=self._push)
        self.plot_pane = pn.pane.Bokeh(self.pareto.figure, sizing_mode="stretch_width", min_height=380)
        self.data_caption = pn.pane.Markdown("", styles={"font-size": "0.9em", "opacity": "0.9"}, margin=(0, 10))
        self.runs_box = pn.Column(sizing_mode="stretch_width", margin=(0, 5))
        self.clear_w = pn.widgets.Button(label="Remove all runs", color="light", width=140)
        self.legend_note = pn.pane.HTML("", sizing_mode="stretch_width")
        # the exact front (gapview): its state, and the button offered when it is not computed automatically
        self.exact_status_w = pn.pane.Markdown("", styles={"font-size": "0.85em", "opacity": "0.9"}, margin=(0, 10))
        self.exact_time_w = pn.widgets.FloatInput(
            label="Exact time limit (s)", value=60.0, start=1, end=86400, step=10, width=150, visible=False
        )
        self.exact_btn = pn.widgets.Button(label="Compute exact front", color="primary", visible=False, width=230)
        self.exact_stop_w = pn.widgets.Button(label="Stop exact front", color="warning", visible=False, width=150)
        self.exact_btn.on_click(lambda e: self._start_exact())
        self.exact_stop_w.on_click(lambda e: self.controller.exact.cancel())
        self.exact_row = pn.Row(
            self.exact_status_w, self.exact_time_w, self.exact_btn, self.exact_stop_w, sizing_mode="stretch_width"
        )

        self.tree_fig = TreeFigure()
        self.tree_pane = pn.pane.Bokeh(self.tree_fig.figure, sizing_mode="stretch_width")
        self.tree_tools = TreeTools(self.tree_fig, run=self._bokeh)  # full screen, expand all, compact
        self.explain_row = ExplainRow(self.controller, self.tree_fig, run=self._bokeh)
        self.compare_diagram = CompareDiagram(run=self._bokeh)
        # Shown/hidden through this column: toggling the Bokeh pane itself makes Panel re-sync the figure's
        # stylesheets, which fails in Panel 1.9 ("List parameter 'Bokeh.stylesheets' ...").
        self.class_legend = pn.pane.HTML("", margin=(0, 10))  # the tree view's class colours
        self.tree_box = pn.Column(
            self.class_legend, self.tree_tools, self.tree_pane, visible=False, margin=0, sizing_mode="stretch_width"
        )
        self.tree_title = pn.pane.Markdown("", margin=(0, 10))
        self.same_point_box = pn.FlexBox(margin=(0, 5), visible=False, align_items="center")
        self.dominated_pane = pn.pane.Alert("", alert_type="warning", visible=False, sizing_mode="stretch_width")
        self.rerun_w = pn.widgets.Button(label="Re-run with more tests", color="warning", visible=False, width=200)
        self.rules_pane = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.metrics_pane = pn.pane.DataFrame(
            None, index=False, header=False, sizing_mode="stretch_width", stylesheets=[TABLE_CSS]
        )
        self.compare_w = pn.widgets.Select(label="Compare with", options={"—": -1}, value=-1, width=260)
        self.compare_pane = pn.pane.Markdown(
            "Pick a second tree of the same run to see what changed.", sizing_mode="stretch_width"
        )

        self.dl = {}
        for key, label in (("png", "PNG"), ("svg", "SVG"), ("txt", "Rules"), ("json", "Tree JSON")):
            self.dl[key] = pn.widgets.FileDownload(
                callback=self._export_cb(key),
                filename=f"tree.{key}",
                label=label,
                color="default",
                embed=False,
                width=110,
                disabled=True,
            )
        for key, label in (("front_json", "Front JSON"), ("front_csv", "Front CSV")):
            self.dl[key] = pn.widgets.FileDownload(
                callback=self._export_cb(key),
                filename="front",
                label=label,
                color="default",
                embed=False,
                width=110,
                disabled=True,
            )

        self.dataset_w.param.watch(lambda e: self._quiet or self._load_bundled(e.new), "value")
        # both: Panel turns an empty file's content into None, so only its name changes
        self.upload_w.param.watch(self._on_upload, ["value", "filename"])
        self.drop_missing_w.param.watch(lambda e: self._quiet or self.controller.set_drop_missing(e.new), "value")
        self.many_w.on_click(lambda e: self.controller.confirm_many_classes())
        self.many_cancel_w.on_click(lambda e: self._keep_previous_table())
        self.rerun_w.on_click(lambda e: self._rerun_more_tests())
        self.target_w.param.watch(self._on_target_w, "value")
        self.test_size_w.param.watch(lambda e: setattr(self.controller, "test_size", e.new), "value")
        self.seed_w.param.watch(lambda e: setattr(self.controller, "seed", int(e.new or 0)), "value")
        self.test_upload_w.param.watch(self._on_test_upload, ["value", "filename"])
        self.test_clear_w.on_click(lambda e: self.controller.clear_test_upload())
        self.solver_w.param.watch(lambda e: self._on_solver(), "value")
        self.disc_w.param.watch(lambda e: self._on_disc(), "value")
        self.run_w.on_click(lambda e: self.run_now())
        self.cancel_w.on_click(lambda e: self.cancel())
        self.x_w.param.watch(self._redraw_plot, "value")
        self.show_test_w.param.watch(self._redraw_plot, "value")
        self.clear_w.on_click(lambda e: self.controller.clear_runs())
        self.compare_w.param.watch(self._on_compare_w, "value")
        self._on_solver()

    def _build_layout(self) -> None:
        data_card = pn.Card(
            self.dataset_w,
            pn.pane.Markdown(f"**or upload** CSV / TSV / Parquet (≤ {MAX_UPLOAD_BYTES // 2**20} MB)", margin=(0, 10)),
            self.upload_w,
            self.drop_missing_w,
            self.target_w,
            self.test_size_w,
            self.seed_w,
            pn.pane.Markdown("Held-out file (optional)", margin=(0, 10)),
            self.test_upload_w,
            self.test_clear_w,
            self.data_info,
            title="Data",
            collapsible=False,
            sizing_mode="stretch_width",
        )
        solver_card = pn.Card(
            self.solver_w,
            self.solver_doc,
            self.disc_w,
            self.bins_w,
            self.mid_w,
            self.params_box,
            self.time_w,
            self.cv_option,
            title="Solver",
            collapsible=False,
            sizing_mode="stretch_width",
        )
        # Run, Cancel and the progress stay in view at laptop sizes: first in the sidebar and pinned to its top
        # while the cards below scroll (the Data and Solver cards alone are taller than an 800 px window).
        self.run_bar = pn.Column(
            pn.Row(self.run_w, self.cancel_w, sizing_mode="stretch_width"),
            self.progress_w,
            self.status_w,
            sizing_mode="stretch_width",
            css_classes=["tx-run-bar"],
            styles={
                "position": "sticky",
                "top": "-10px",  # with the padding: covers the sidebar's own top margin while pinned
                "padding-top": "10px",
                "z-index": "10",
                "background": "var(--neutral-layer-1, var(--background-color, #fff))",
                "border-bottom": "1px solid var(--accent-fill-rest, #ddd)",
                "padding-bottom": "4px",
            },
        )
        self.enter_key = EnterKey(height=0, width=0, margin=0)
        self.enter_key.param.watch(lambda e: None if self.controller.running else self.run_now(), "presses")
        self.sidebar = pn.Column(
            self.enter_key,
            self.run_bar,
            data_card,
            solver_card,
            sizing_mode="stretch_width",
        )
        plot_card = pn.Card(
            pn.Row(
                pn.pane.Markdown("**Complexity axis**", margin=(8, 0, 8, 5), width=118),
                pn.widgets.TooltipIcon(value=AXIS_HELP, margin=(14, 0, 0, 0), width=20),
                self.x_w,
                self.show_test_w,
                sizing_mode="stretch_width",
            ),
            self.data_caption,
            self.plot_pane,
            self.legend_note,
            self.exact_row,
            pn.Row(self.runs_box, self.clear_w),
            title="Pareto front",
            collapsible=False,
            sizing_mode="stretch_width",
        )
        exports = pn.Column(
            pn.pane.Markdown("**Export tree**", margin=(0, 5)),
            pn.Row(self.dl["png"], self.dl["svg"]),
            pn.Row(self.dl["txt"], self.dl["json"]),
            pn.pane.Markdown("**Export run**", margin=(0, 5)),
            pn.Row(self.dl["front_json"], self.dl["front_csv"]),
            width=250,
        )
        self.diagnostics = DiagnosticsView(self.controller)
        details = lazy_tabs(
            ("Metrics", self.metrics_pane),
            ("Rules", self.rules_pane),
            (
                "Compare",
                pn.Column(self.compare_w, self.compare_pane, self.compare_diagram, sizing_mode="stretch_width"),
            ),
            ("Explain a row", self.explain_row),
            ("Diagnostics", self.diagnostics),
            sizing_mode="stretch_width",
        )
        self.compare_diagram.follow(details, index=2)  # the Compare tab: diagrams drawn while it is shown
        tree_card = pn.Card(
            self.tree_title,
            self.same_point_box,
            pn.Row(self.dominated_pane, self.rerun_w, sizing_mode="stretch_width"),
            self.tree_box,
            pn.Row(details, exports, sizing_mode="stretch_width"),
            title="Selected tree",
            collapsible=False,
            sizing_mode="stretch_width",
        )
        self.sweep_view = SweepView(self.controller)
        sweep_card = lazy_card(  # rendered when first opened: ~80 Bokeh models fewer per session
            self.sweep_view,
            title="Sweep: cross-validate a grid of settings on a local Dask cluster",
            sizing_mode="stretch_width",
        )
        # columns, types, missing values and class balance, built when opened (np.unique over every column)
        self.preview_pane = pn.pane.Markdown("", sizing_mode="stretch_width", margin=(0, 10))
        self.preview_card = lazy_card(
            self.preview_pane,
            title="Data preview: columns, types, missing values, classes",
            sizing_mode="stretch_width",
        )
        self.preview_card.param.watch(lambda e: self._update_preview(), "collapsed")
        self.main = pn.Column(
            self.error_w,
            pn.Row(self.many_w, self.many_cancel_w),
            self.notice_w,
            self.preview_card,
            plot_card,
            tree_card,
            sweep_card,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return pn.Row(pn.Column(self.sidebar, width=SIDEBAR_W), self.main, sizing_mode="stretch_width")

    def _repr_mimebundle_(self, include=None, exclude=None):
        view = self._create_view()
        bundle = view._repr_mimebundle_(include, exclude)
        keep_local(view)  # what appears later in this display (tree card, tables) keeps local stylesheets
        return bundle

    def app(self, title: str = "treeexplorer · optimal decision trees"):
        """The full-page version for ``panel serve`` (same widgets in a template)."""
        return pn.template.FastListTemplate(
            title=title,
            sidebar=[self.sidebar],
            main=[self.main],
            sidebar_width=SIDEBAR_W + 20,
            accent="#0072B2",
            header_background="#0b3d63",
            design=OfflineFast,
        )

    # -- data ----------------------------------------------------------------------------------------
    def _load_bundled(self, name: str) -> None:
        if name.startswith(UPLOAD_PREFIX):
            return  # the uploaded table is already loaded
        self.controller.load_bundled(name)

    @contextlib.contextmanager
    def _setting(self):
        """Set widgets from the app's state: the browser is updated (``param.discard_events`` would
        also drop Panel's own sync, leaving e.g. the old target column on screen) but our watchers
        ignore the change."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def _on_upload(self, *events) -> None:
        # an empty file arrives as value None with a new file name: the controller then says it is empty
        content, name = self.upload_w.value, self.upload_w.filename
        if content is None and not name:
            return
        if self.controller.load_upload(content or b"", name or "upload.csv"):
            # Show the uploaded table in the dataset list so the sidebar says what is loaded.
            entry = f"{UPLOAD_PREFIX}{self.controller.dataset_name}"
            with self._setting():
                self.dataset_w.options = [entry, *self.controller.bundled()]
                self.dataset_w.value = entry

    def _on_test_upload(self, *events) -> None:
        content, name = self.test_upload_w.value, self.test_upload_w.filename
        if content is not None or name:
            self.controller.load_test_upload(content or b"", name or "test.csv")

    @_safe
    def _on_data(self, *events) -> None:
        c = self.controller
        ds = c.dataset
        self._update_preview()
        with self._setting():
            self.target_w.options = list(c.columns)
            self.target_w.value = c.target
        with self._setting():
            self.drop_missing_w.value = c.drop_missing
        if c.missing:
            verb = "drops" if c.drop_missing else "would drop"
            self.drop_missing_w.label = (
                f"Drop rows with missing values ({verb} {c.missing:,} row{'s' if c.missing != 1 else ''})"
            )
        else:
            self.drop_missing_w.label = "Drop rows with missing values (none missing)"
        self.data_caption.object = f"Runs on **{c.data_label()}**" if c.dataset is not None else ""
        using_file = bool(c.test_name)
        self.test_size_w.disabled = using_file
        self.seed_w.disabled = using_file
        self.test_clear_w.visible = using_file
        if ds is not None:
            n_cat = sum(col.is_categorical for col in ds.schema.columns)
            held = (
                f"held-out file {c.test_name}"
                if using_file
                else (f"{c.test_size:.0%} held out (seed {c.seed})" if c.test_size else "no held-out rows")
            )
            self.data_info.object = (
                f"**{ds.name}**: {ds.n_rows:,} rows, {ds.schema.n_features} features "
                f"({n_cat} categorical), {ds.schema.n_classes} classes; {held}"
            )

    def _on_target_w(self, event) -> None:
        if self._quiet or not event.new:
            return
        if not self.controller.set_target(event.new) and self.controller.many_classes is None:
            with self._setting():  # refused: the select shows the target still in use
                self.target_w.value = self.controller.target

    def _keep_previous_table(self) -> None:
        c = self.controller
        c.dismiss_many_classes()
        with self._setting():
            self.target_w.value = c.target
            if c.dataset_name in self.dataset_w.options:
                self.dataset_w.value = c.dataset_name

    def _on_own_params(self, *events) -> None:
        """``Explorer(...).dataset = "car"`` (or ``solver``, ``test_size``) acts like the sidebar widget."""
        for e in events:
            if e.name == "dataset" and e.new != self.dataset_w.value:
                if e.new in self.dataset_w.options:
                    self.dataset_w.value = e.new
                else:
                    self.controller.load_bundled(e.new)  # sets a readable error for an unknown name
            elif e.name == "solver" and e.new and e.new != self.solver_w.value:
                if e.new in self.solver_w.options:
                    self.solver_w.value = e.new
                else:
                    names = ", ".join(self.solver_w.options)
                    self.controller.error = f"unknown solver {e.new!r}; choose one of {names}"
            elif e.name == "test_size" and e.new != self.test_size_w.value:
                self.test_size_w.value = e.new

    # -- solver settings -----------------------------------------------------------------------------
    @_safe
    def _on_solver(self) -> None:
        name = self.solver_w.value
        if not name:
            self.solver_doc.object = "No solver is installed yet."
            self.run_w.disabled = True
            return
        spec = solver_spec(name)
        self.solver_doc.object = spec.description or spec.title
        self.param_widgets = {p.name: widget_for(p) for p in spec.params if p.name not in RESERVED}
        self.params_box.objects = list(self.param_widgets.values())
        discs = self.controller.discretizers_for(name)
        self.disc_w.options = discs
        self.disc_w.value = discs[0] if discs else None
        self.disc_w.visible = len(discs) > 1 or spec.input == "binary"
        self._on_disc()

    def _on_disc(self) -> None:
        d = self.disc_w.value
        self.bins_w.visible = takes_n_bins(d)
        self.mid_w.visible = d == "mid"

    def settings(self) -> RunSettings:
        """The run the sidebar currently describes."""
        spec = solver_spec(self.solver_w.value)
        params = read_values(spec.params, self.param_widgets)
        return RunSettings(
            spec.name,
            params,
            self.disc_w.value,
            self.bins_w.value if self.bins_w.visible else None,
            self.mid_w.value if self.mid_w.visible else None,
            self.time_w.value,
            cv=self.cv_option.cv,
        )

    # -- running -------------------------------------------------------------------------------------
    def run_now(self, wait: bool = False):
        """Start a run with the sidebar's settings (``wait=True`` blocks until it ends)."""
        try:
            settings = self.settings()
        except (ValueError, NotImplementedError) as exc:
            self.controller.error = str(exc)
            return None
        if wait:
            return self.controller.run_sync(settings)
        job = self.controller.run(settings)
        if job is not None:
            self._start_polling()
        return job

    def cancel(self) -> None:
        self.controller.cancel()

    def _start_polling(self) -> None:
        try:
            self._poller = pn.state.add_periodic_callback(self.poll, period=POLL_MS)
        except Exception:  # no event loop (plain script): callers poll() themselves
            self._poller = None

    def poll(self) -> bool:
        """Apply finished work and progress (UI thread); stops the periodic callback when the job ends."""
        with batched(self._doc):
            running = self.controller.poll()
        if not running and self._poller is not None:
            self._poller.stop()
            self._poller = None
        return running

    @_safe
    def _on_progress(self, *events) -> None:
        c = self.controller
        running = c.running
        self.run_w.disabled = running
        self.cancel_w.disabled = not running
        self.progress_w.visible = running
        self.progress_w.active = running
        settings = getattr(c.job, "settings", None)
        text, fraction = describe(
            c.progress if running else {},
            settings.params if settings is not None else {},
            settings.time_limit if settings is not None else None,
        )
        # determinate where the work can be counted (depths, budgets, folds, rows), else activity only
        self.progress_w.value = (-1 if fraction is None else int(100 * fraction)) if running else 0
        label = c.job.label if c.job is not None else ""
        if running:
            self.status_w.object = f"{label}: {text}" if label else text
        elif c.runs:
            last = c.runs[-1]
            self.status_w.object = f"Last run {last.label}: {last.status_text}"
        else:
            self.status_w.object = ""

    # -- messages ------------------------------------------------------------------------------------
    def _on_messages(self, *events) -> None:
        c = self.controller
        self.error_w.object = c.error
        self.error_w.visible = bool(c.error)
        self.notice_w.object = c.notice
        self.notice_w.visible = bool(c.notice)
        asking = c.many_classes is not None
        if asking:
            self.many_w.label = f"Use {c.many_classes['column']!r} anyway ({c.many_classes['n_classes']:,} classes)"
            self.many_w.width = 330
        self.many_w.visible = self.many_cancel_w.visible = asking

    # -- plot ----------------------------------------------------------------------------------------
    # -- Bokeh models ---------------------------------------------------------------------------------
    def _bokeh(self, fn) -> None:
        """Change raw Bokeh models (the figures and their sources) safely on every route.

        Served: from a worker thread (``--num-threads``) the change is queued on the session's document,
        which runs it under the document lock; on the server's own thread it runs at once.  In a notebook it
        runs at once and is then pushed to the page (Panel sends only its own panes' changes by itself).
        """

        def run():
            try:
                fn()
            except Exception as exc:
                traceback.print_exc()
                self.controller.error = f"display error in {getattr(fn, '__name__', 'update')}: {readable_error(exc)}"
            self._push()

        if self._doc is not None:
            with set_curdoc(self._doc):
                pn.state.execute(run)
        else:
            run()

    def _push(self) -> None:
        if self._doc is None:  # notebook: send the raw model changes (a no-op when not displayed)
            pn.io.push_notebook(self.plot_pane, self.tree_pane)

    @_safe
    def _redraw_plot(self, *events) -> None:
        c = self.controller
        runs = [*c.runs, c.partial] if c.partial is not None else list(c.runs)
        self._dominated = dominance(c.runs)
        x, show_test, selected, dominated = self.x_w.value, self.show_test_w.value, c.selected, self._dominated

        reference, gaps = reference_curve(c.exact.record()), c.exact.gaps(runs)

        def redraw():
            self.pareto.update(runs, x, show_test, selected, dominated, reference, gaps)

        self._bokeh(redraw)
        self._update_legend_note(c.runs)
        if events and any(getattr(e, "name", "") == "value" for e in events):
            self._update_same_point()

    def _update_legend_note(self, runs) -> None:
        claims = sorted({optimality_text(r.front.search_space) for r in runs if any(t.optimal for t in r.front)})
        if len(claims) == 1:
            proven = f"filled: proven {claims[0]}"
        elif claims:
            proven = "filled: proven optimal over its run's search space (hover a point: which)"
        else:
            proven = "filled: proven optimal"
        self.legend_note.object = (
            f"<span style='font-size:0.85em;opacity:0.75'>{proven} &nbsp; hollow: not proven &nbsp; "
            "shape and colour: the run &nbsp; ✕ held-out accuracy &nbsp;·&nbsp; click a point to show its tree, "
            "a legend entry to hide a run</span>"
        )

    @_safe
    def _on_runs(self, *events) -> None:
        c = self.controller
        self._redraw_plot()
        rows = []
        for run in c.runs:
            if run.id not in self._run_rows:  # rows are reused: new widgets cost a model round trip
                btn = pn.widgets.Button(
                    label="✕", color="light", width=34, height=30, margin=(0, 4), description=f"Remove run {run.label}"
                )
                btn.on_click(lambda e, rid=run.id: c.remove_run(rid))
                self._run_rows[run.id] = pn.Row(
                    pn.pane.HTML(
                        f"<span style='color:{run.color};font-size:1.3em'>■</span> <b>{run.label}</b> "
                        f"<span style='opacity:0.75;font-size:0.85em'>{run.status_text}</span>",
                        margin=(4, 5),
                    ),
                    btn,
                )
            rows.append(self._run_rows[run.id])
        live = {run.id for run in c.runs}
        self._run_rows = {k: v for k, v in self._run_rows.items() if k in live}
        self.runs_box.objects = rows
        self.clear_w.visible = len(c.runs) > 1
        self.dl["front_json"].disabled = self.dl["front_csv"].disabled = not c.runs
        self._on_progress()
        self._on_selected()

    @_safe
    def _on_point(self, run_id: int, tree_id: int) -> None:
        self.controller.select(run_id, tree_id)

    def select(self, run_id: int, tree_id: int) -> None:
        """Show tree ``tree_id`` of run ``run_id`` (what a click on the plot does)."""
        self.controller.select(run_id, tree_id)

    # -- selected tree -------------------------------------------------------------------------------
    @_safe
    def _on_selected(self, *events) -> None:
        c = self.controller
        run, entry = c.selection()
        for key in ("png", "svg", "txt", "json"):
            self.dl[key].disabled = entry is None
        if entry is None:
            self.tree_title.object = (
                "Click a point of the front to see its tree." if c.runs else "Run a solver to get a front of trees."
            )
            self.tree_box.visible = False
            self._bokeh(lambda: self.tree_fig.show(None))
            self.rules_pane.object = ""
            self.metrics_pane.object = None
            self.same_point_box.visible = False
            self.dominated_pane.visible = self.rerun_w.visible = False
            with self._setting():
                self.compare_w.options = {"—": -1}
                self.compare_w.value = -1
            self.compare_diagram.update(None, None)
            return
        claim = f"proven {run.front.optimality}" if entry.optimal else "not proven optimal"
        title = (
            f"<span style='color:{run.color}'>■</span> **{run.label}**, tree {entry.id}: "
            f"{entry.metrics['splits']} splits, train accuracy "
            f"{entry.metrics['train_accuracy']:.3f}, {claim}"
        )
        selected, tree = c.selected, entry.tree

        def draw():
            # The figure's own width/height reach the browser; resizing the pane too would make Panel re-sync
            # the figure's properties (which fails on its stylesheets in Panel 1.9).
            self.tree_fig.show(tree)
            self.pareto.select(selected)

        self._bokeh(draw)
        if self.tree_fig.clipped and self.tree_fig.tree is tree:
            title += " · *large tree: drag it to see the rest*"
        gap = c.exact.text(run, entry) if run.id else ""
        if gap:
            title += f" · **{gap}**"
        self.tree_title.object = title
        self.class_legend.object = legend_html(tree)
        self.tree_box.visible = True
        dominated = self._dominated.get((run.id, entry.id))
        self.dominated_pane.object = f"**Tree {entry.id} is {dominated}.**" if dominated else ""
        self.dominated_pane.visible = bool(dominated)
        ss = run.front.search_space or {}
        self.rerun_w.visible = bool(dominated) and ss.get("kind") == "tests" and bool(ss.get("n_tests"))
        if self.rerun_w.visible:
            self.rerun_w.label = f"Re-run with {2 * int(ss['n_tests'])} tests"
        self._update_same_point()
        self.rules_pane.object = rules_markdown(entry)
        frame = metrics_frame(entry, run.front, dominated)
        if gap:  # right under the status row
            row = pd.DataFrame([["vs exact optimum", gap]], columns=frame.columns)
            frame = pd.concat([frame.iloc[:2], row, frame.iloc[2:]], ignore_index=True)
        self.metrics_pane.object = frame
        base = f"{_slug(run.front.dataset)}_{_slug(run.front.solver)}_run{run.id}_tree{entry.id}"
        for key in ("png", "svg", "txt", "json"):
            self.dl[key].filename = f"{base}.{key}"
        self.dl["front_json"].filename = f"{_slug(run.front.dataset)}_{_slug(run.front.solver)}_run{run.id}.json"
        self.dl["front_csv"].filename = f"{_slug(run.front.dataset)}_{_slug(run.front.solver)}_run{run.id}.csv"
        options = {"—": -1}
        for t in run.front:
            if t.id != entry.id:
                options[f"tree {t.id}: {t.metrics['splits']} splits, acc {t.metrics['train_accuracy']:.3f}"] = t.id
        with self._setting():
            self.compare_w.options = options
            other = c.compared()
            if other is None:
                # Until the user picks one, compare with the next simpler tree of the front: "what changed"
                # is then visible at a glance.
                simpler = [t for t in run.front if t.metrics["splits"] < entry.metrics["splits"]]
                other = max(simpler, key=lambda t: (t.metrics["splits"], t.metrics["train_accuracy"]), default=None)
            self.compare_w.value = other.id if other is not None else -1
        self.compare_pane.object = (
            compare_markdown(entry, other)
            if other is not None
            else "Pick a second tree of the same run to see what changed."
        )
        self.compare_diagram.update(entry, other)

    # -- exact front (gapview) -------------------------------------------------------------------------
    def _start_exact(self) -> None:
        offer = self.controller.exact.offer or {}
        self.controller.exact.start(offer.get("depth", 3), time_limit=self.exact_time_w.value)

    @_safe
    def _on_exact(self, *events) -> None:
        ex = self.controller.exact
        offer = ex.offer
        if offer and not ex.running:
            why = f"Exact front not computed automatically ({offer['why']}): compute it at depth {offer['depth']}"
            self.exact_status_w.object = f"{ex.status} {why} with a time limit.".strip()
        else:
            self.exact_status_w.object = ex.status
        self.exact_btn.visible = self.exact_time_w.visible = bool(offer) and not ex.running
        if offer:
            self.exact_btn.label = f"Compute exact front (depth {offer['depth']})"
        self.exact_stop_w.visible = ex.running
        if ex.running and self._exact_poller is None:
            self._start_exact_polling()
        if any(e.name == "version" for e in events):
            c = self.controller
            runs = [*c.runs, c.partial] if c.partial is not None else list(c.runs)
            reference, gaps = reference_curve(ex.record()), ex.gaps(runs)
            self._bokeh(lambda: self.pareto.set_exact(reference, gaps))
            self._on_selected()

    def _start_exact_polling(self) -> None:
        def start():
            if self._exact_poller is not None or not self.controller.exact.running:
                return
            try:
                self._exact_poller = pn.state.add_periodic_callback(self.poll_exact, period=POLL_MS * 2)
            except Exception:  # no event loop (plain script): callers poll_exact() themselves
                self._exact_poller = None

        if self._doc is not None and self._building:
            pn.state.onload(start)  # a served page being built: a periodic callback only runs once it has loaded
        else:
            start()

    def poll_exact(self) -> bool:
        """Apply the exact front when it arrives (UI thread); stops its periodic callback when done."""
        running = self.controller.exact.poll()
        if not running and self._exact_poller is not None:
            self._exact_poller.stop()
            self._exact_poller = None
        return running

    def _update_same_point(self) -> None:
        """Name the other runs that have a tree at the selected point, each a button that switches to it."""
        others = self.controller.same_point(self.x_w.value)
        items = [pn.pane.Markdown("**Same point in:**", margin=(8, 5), width=120)]
        for run, t in others:
            btn = pn.widgets.Button(
                label=f"{run.label}, tree {t.id}",
                color="light",
                margin=(2, 4),
                description=f"Show the tree of run #{run.id} at this point",
                width=min(360, 40 + 8 * len(run.label)),
            )
            btn.on_click(lambda e, rid=run.id, tid=t.id: self.controller.select(rid, tid))
            items.append(btn)
        self.same_point_box.objects = items if others else []
        self.same_point_box.visible = bool(others)

    def _rerun_more_tests(self) -> None:
        if self.controller.selected is None:
            return
        if self.controller.rerun_with_more_tests(self.controller.selected[0]) is not None:
            self._start_polling()

    def _on_compare_w(self, event) -> None:
        if self._quiet:
            return
        self.controller.compare = None if event.new in (None, -1) else int(event.new)

    # -- exports -------------------------------------------------------------------------------------
    def export(self, kind: str, run_id: int | None = None, tree_id: int | None = None) -> bytes:
        """The bytes of one export: png, svg, txt, json (a tree), front_json, front_csv (its run).

        The selected tree by default; ``run_id`` (and ``tree_id``, default: the run's best tree) export
        another one without changing what the screen shows.
        """
        if run_id is not None:
            run = self.controller.run_by_id(run_id)
            if run is None:
                raise ValueError(f"no run #{run_id}")
            entry = run.front[tree_id] if tree_id is not None else run.front.best()
        else:
            run, entry = self.controller.selection()
        if run is None and kind.startswith("front") and self.controller.runs:
            run = self.controller.runs[-1]
        if run is None:
            raise ValueError("select a tree first")
        return export_bytes(kind, run.front, entry)

    def _export_cb(self, kind: str):
        def cb():
            try:
                return io.BytesIO(self.export(kind))
            except Exception as exc:  # shown as an alert, never a traceback
                self.controller.error = f"export failed: {exc}"
                return io.BytesIO(b"")

        return cb

    # -- lifecycle -----------------------------------------------------------------------------------
    def _register_session_end(self) -> None:
        doc = pn.state.curdoc
        if doc is not None and getattr(doc, "session_context", None) is not None:
            pn.state.on_session_destroyed(lambda ctx: self._session_closed())
            pn.state.onload(self._show_token)

    def _show_token(self) -> None:
        # the tab's URL carries the session's token (kept by a reload): see treeexplorer.ui.handover
        if pn.state.location is not None:
            pn.state.location.update_query(s=self._token)

    def _update_preview(self) -> None:
        ds = self.controller.dataset
        if self.preview_card.collapsed or ds is None:
            return
        self.preview_pane.object = preview_markdown(ds, self.controller.missing_by_column)

    def _show_taken_over_data(self) -> None:
        c = self.controller
        entry = f"{UPLOAD_PREFIX}{c.dataset_name}" if c._frame is not None else c.dataset_name
        with self._setting():
            if entry not in self.dataset_w.options:
                self.dataset_w.options = [entry, *c.bundled()]
            self.dataset_w.value = entry
            self.test_size_w.value = c.test_size
            self.seed_w.value = c.seed
        self._on_data()
        self._on_selected()

    def _session_closed(self) -> None:
        running = self.controller.running
        if self._token is not None:
            handover.keep(self._token, self.controller)
        self.close()
        if running:  # one line in the server log: the job of a closed tab does not keep solving
            print(f"treeexplorer: session closed, cancelled its job {self.controller.job.label!r}", flush=True)

    def close(self) -> None:
        """Stop this session's job (called when the browser tab closes)."""
        if self._poller is not None:
            self._poller.stop()
            self._poller = None
        if self._exact_poller is not None:
            self._exact_poller.stop()
            self._exact_poller = None
        self.controller.close()
        self.sweep_view.close()  # cancels its sweep and closes the session's Dask cluster
