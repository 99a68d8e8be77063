"""The Explorer's sidebar: the run bar (Run, Cancel, progress), the Data card and the Solver card."""

from __future__ import annotations

from pathlib import Path

import panel as pn

from treeexplorer.discretize import takes_n_bins
from treeexplorer.objective import CLASS_WEIGHT_MODES
from treeexplorer.textsafe import html_text, md
from treeexplorer.ui import warm
from treeexplorer.ui.admission import mib
from treeexplorer.ui.controller import MAX_UPLOAD_BYTES, RunSettings, solver_spec
from treeexplorer.ui.cvoption import CVOption
from treeexplorer.ui.defaults import DEFAULT_TIME_LIMIT, HELD_OUT_RANGE, MIN_TIME_LIMIT, UPLOAD_ACCEPT
from treeexplorer.ui.enterkey import EnterKey
from treeexplorer.ui.paramwidgets import RESERVED, read_values, widget_for
from treeexplorer.ui.progress import describe
from treeexplorer.ui.uploadguard import UploadGuard
from treeexplorer.ui.uploads import on_document, parse_in_worker
from treeexplorer.ui.viewkit import SMALL_TEXT, SessionViewer, ViewContext, safe

__all__ = ["Sidebar", "DataInputs", "SolverInputs", "RunBar", "UPLOAD_PREFIX"]

UPLOAD_PREFIX = "uploaded: "
NO_WEIGHTS = "(none: every row weighs 1)"

# Inline SVG icons: an icon *name* makes the browser fetch the tabler-icons webfont from a CDN.
_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24" fill="currentColor" '
    'stroke="none">{}</svg>'
)
PLAY_ICON = _SVG.format('<path d="M7 4v16l13-8z"/>')
STOP_ICON = _SVG.format('<rect x="6" y="6" width="12" height="12" rx="1"/>')
_SW = {"sizing_mode": "stretch_width"}


class DataInputs(SessionViewer):
    """The "Data" card: a bundled table or an upload, the target, the held-out rows and missing values.

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (see :class:`~treeexplorer.ui.viewkit.SessionViewer`).
    dataset : str
        Bundled dataset selected at start.
    test_size : float
        Held-out fraction at start.
    """

    def __init__(self, ctx: ViewContext, dataset: str, test_size: float, **params):
        super().__init__(ctx, **params)
        c = ctx.controller
        self.dataset_w = pn.widgets.Select(label="Dataset", options=c.bundled(), value=dataset, **_SW)
        self.upload_w = pn.widgets.FileInput(accept=UPLOAD_ACCEPT, multiple=False, **_SW)
        self.target_w = pn.widgets.Select(label="Target column", options=[], **_SW)
        self.test_size_w = pn.widgets.FloatSlider(
            label="Held-out fraction", start=HELD_OUT_RANGE[0], end=HELD_OUT_RANGE[1], step=0.05, value=test_size, **_SW
        )
        self.seed_w = pn.widgets.IntInput(label="Split seed", value=0, start=0, **_SW)
        self.test_upload_w = pn.widgets.FileInput(accept=UPLOAD_ACCEPT, **_SW)
        self.test_clear_w = pn.widgets.Button(label="Use the split instead", color="light", visible=False, **_SW)
        self.data_info = pn.pane.Markdown("", styles=SMALL_TEXT, margin=(0, 10))
        self.drop_missing_w = pn.widgets.Checkbox(label="Drop rows with missing values", value=False, **_SW)
        # the columns every run, CV and sweep learns from: searchable, each with its kind and distinct values
        self.columns_w = pn.widgets.MultiChoice(
            label="Columns (the features runs learn from)", options={}, value=[], search_option_limit=50, **_SW
        )
        self.columns_note = pn.pane.Markdown("", styles=SMALL_TEXT, margin=(0, 10))
        # the weighted objective: class weights (none / balanced / per class) and a column of row weights
        self.weigh_w = pn.widgets.Select(label="Weigh the classes", options=list(CLASS_WEIGHT_MODES), **_SW)
        self.class_weights_w = pn.widgets.TextInput(
            label="Class weights", placeholder="e.g. sick=10, well=1", visible=False, **_SW
        )
        self.weight_column_w = pn.widgets.Select(label="Weight column (optional)", options=[NO_WEIGHTS], **_SW)

        self.dataset_w.param.watch(lambda e: ctx.quiet or self._load_bundled(e.new), "value")
        # both: Panel turns an empty file's content into None, so only its name changes
        self.upload_w.param.watch(self._on_upload, ["value", "filename"])
        self.drop_missing_w.param.watch(lambda e: ctx.quiet or c.set_drop_missing(e.new), "value")
        self.weigh_w.param.watch(self._on_weigh, "value")
        self.class_weights_w.param.watch(lambda e: ctx.quiet or c.set_class_weights("per class", e.new), "value")
        self.weight_column_w.param.watch(self._on_weight_column, "value")
        self.target_w.param.watch(self._on_target_w, "value")
        self.columns_w.param.watch(self._on_columns_w, "value")
        self.test_size_w.param.watch(lambda e: setattr(c, "test_size", e.new), "value")
        self.seed_w.param.watch(lambda e: setattr(c, "seed", int(e.new or 0)), "value")
        self.test_upload_w.param.watch(self._on_test_upload, ["value", "filename"])
        self.test_clear_w.on_click(lambda e: c.clear_test_upload())
        self._layout = pn.Card(
            self.dataset_w,
            pn.pane.Markdown(f"**or upload** CSV / TSV / Parquet (≤ {mib(MAX_UPLOAD_BYTES)})", margin=(0, 10)),
            self.upload_w,
            self.drop_missing_w,
            self.target_w,
            self.columns_w,
            self.columns_note,
            self.weigh_w,
            self.class_weights_w,
            self.weight_column_w,
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

    def __panel__(self):
        return self._layout

    def _load_bundled(self, name: str) -> None:
        if name.startswith(UPLOAD_PREFIX):
            return  # the uploaded table is already loaded
        self.ctx.controller.load_bundled(name)

    def _show_loaded(self, uploaded: bool) -> None:
        """The uploaded (or taken over) table appears in the dataset list so the sidebar says what is loaded."""
        c = self.ctx.controller
        entry = f"{UPLOAD_PREFIX}{c.dataset_name}" if uploaded else c.dataset_name
        with self.ctx.setting():
            if entry not in self.dataset_w.options:
                self.dataset_w.options = [entry, *c.bundled()]
            self.dataset_w.value = entry

    def load_file(self, content: bytes, name: str) -> None:
        """Load a file as if it were uploaded, at once (the app's start-up file: what follows needs it)."""
        with self.ctx.setting():
            self.upload_w.param.update(filename=name, value=content)
        self._uploaded(content, name, None)

    def _on_upload(self, *events) -> None:
        # an empty file arrives as value None with a new file name: the controller then says it is empty
        content, name = self.upload_w.value, self.upload_w.filename
        if self.ctx.quiet or (content is None and not name):
            return
        content, name = content or b"", name or "upload.csv"
        if self.ctx.doc is None:  # a notebook or a test: no event loop to keep free
            self._uploaded(content, name, None)
            return
        # served: read in a worker (other sessions keep their loop), then load on this session's document
        self._upload_seq = seq = getattr(self, "_upload_seq", 0) + 1
        self.data_info.object = f"reading {md(name)} …"
        parsed = parse_in_worker(content, name)

        def done():
            if seq == self._upload_seq:  # a later upload replaced this one
                self._uploaded(content, name, parsed)

        parsed.add_done_callback(lambda f: on_document(self.ctx, done))

    def _uploaded(self, content: bytes, name: str, parsed) -> None:
        c = self.ctx.controller
        if c.load_upload(content, name, parsed=parsed):
            self._show_loaded(uploaded=True)
        elif c._pending is not None:
            # not loaded yet (missing values, a target to confirm): the select names the table the message is
            # about, and the checkbox or button next to the message loads it
            entry = f"{UPLOAD_PREFIX}{Path(name or 'upload.csv').stem or 'upload'}"
            with self.ctx.setting():
                if entry not in self.dataset_w.options:
                    self.dataset_w.options = [entry, *c.bundled()]
                self.dataset_w.value = entry

    def _on_test_upload(self, *events) -> None:
        content, name = self.test_upload_w.value, self.test_upload_w.filename
        if content is not None or name:
            self.ctx.controller.load_test_upload(content or b"", name or "test.csv")

    def _on_target_w(self, event) -> None:
        c = self.ctx.controller
        if self.ctx.quiet or not event.new:
            return
        if not c.set_target(event.new) and c.many_classes is None:
            with self.ctx.setting():  # refused: the select shows the target still in use
                self.target_w.value = c.target

    def _on_columns_w(self, event) -> None:
        c = self.ctx.controller
        if self.ctx.quiet:
            return
        if not c.set_features(list(event.new)):
            with self.ctx.setting():  # refused (no column left): the select shows the columns still in use
                self.columns_w.value = list(c.dataset.schema.feature_names) if c.dataset is not None else []

    def show_columns(self) -> None:
        """The Columns control: every column but the target, the ones in use selected, the IDs left out named."""
        c = self.ctx.controller
        ds = c.dataset
        info = [i for i in c.column_info if i["name"] != c.target]
        options = {}
        for i in info:
            what = f"{i['kind']}, {i['distinct']:,} distinct" + (", ID-like" if i["identifier"] else "")
            # Bokeh's MultiChoice (Choices.js) draws its labels as HTML: a column's name is escaped to stay text
            options[html_text(f"{i['name']} · {what}")] = i["name"]
        used = list(ds.schema.feature_names) if ds is not None else []
        with self.ctx.setting():
            self.columns_w.options = options
            self.columns_w.value = [u for u in used if u in options.values()]
        ids = [i for i in info if i["identifier"] and i["name"] not in used]
        if ids and c.features_chosen is None:
            names = ", ".join(f"'{md(i['name'])}' ({md(i['identifier'])})" for i in ids)  # names from the data
            self.columns_note.object = f"Left out as row IDs: {names}. Add one back in Columns to use it."
        else:
            self.columns_note.object = ""

    def _on_weigh(self, event) -> None:
        self.class_weights_w.visible = event.new == "per class"
        if not self.ctx.quiet:
            self.ctx.controller.set_class_weights(event.new)

    def _on_weight_column(self, event) -> None:
        c = self.ctx.controller
        if self.ctx.quiet:
            return
        if not c.set_weight_column("" if event.new == NO_WEIGHTS else event.new):
            with self.ctx.setting():  # refused (a text column): the select shows the weights still in use
                self.weight_column_w.value = c.weight_column or NO_WEIGHTS

    def keep_previous_table(self) -> None:
        """Decline a target with many classes: back to the table and target in use."""
        c = self.ctx.controller
        c.dismiss_many_classes()
        with self.ctx.setting():
            self.target_w.value = c.target
            if c.dataset_name in self.dataset_w.options:
                self.dataset_w.value = c.dataset_name

    def take_over(self) -> None:
        """Show the state of a session taken over (the same tab reloaded)."""
        c = self.ctx.controller
        self._show_loaded(uploaded=c._frame is not None)
        with self.ctx.setting():
            self.test_size_w.value = c.test_size
            self.seed_w.value = c.seed

    def show(self) -> None:
        """The card after the data changed: target columns, missing values, held-out rows, a summary."""
        c = self.ctx.controller
        ds = c.dataset
        with self.ctx.setting():
            self.target_w.options = list(c.columns)
            self.target_w.value = c.target
        with self.ctx.setting():
            self.drop_missing_w.value = c.drop_missing
            self.weigh_w.value = c.class_weight_mode
            self.class_weights_w.value = c.class_weight_text
            self.class_weights_w.visible = c.class_weight_mode == "per class"
            # the table's columns but the target (a weight column in use is no longer a feature: still listed)
            cols = [col for col in c.columns if col != c.target]
            if c.weight_column and c.weight_column not in cols:
                cols.append(c.weight_column)
            self.weight_column_w.options = [NO_WEIGHTS, *cols]
            self.weight_column_w.value = c.weight_column or NO_WEIGHTS
        if c.missing:
            verb = "drops" if c.drop_missing else "would drop"
            self.drop_missing_w.label = (
                f"Drop rows with missing values ({verb} {c.missing:,} row{'s' if c.missing != 1 else ''})"
            )
        else:
            self.drop_missing_w.label = "Drop rows with missing values (none missing)"
        self.show_columns()
        using_file = bool(c.test_name)
        self.test_size_w.disabled = using_file
        self.seed_w.disabled = using_file
        self.test_clear_w.visible = using_file
        if ds is not None:
            n_cat = sum(col.is_categorical for col in ds.schema.columns)
            held = (
                f"held-out file {md(c.test_name)}"
                if using_file
                else (f"{c.test_size:.0%} held out (seed {c.seed})" if c.test_size else "no held-out rows")
            )
            summary = (
                f"**{md(ds.name)}**: {ds.n_rows:,} rows, {ds.schema.n_features} features "
                f"({n_cat} categorical), {ds.schema.n_classes} classes; {held}"
            )
            if c.refused_table:  # the table asked for did not load: say which one is still in use
                summary = f"**{md(c.refused_table)}** is not loaded (see the message). Still in use: {summary}"
            self.data_info.object = summary
        else:
            refused = c.refused_table
            self.data_info.object = f"**{md(refused)}** is not loaded (see the message)." if refused else ""


class SolverInputs(SessionViewer):
    """The "Solver" card: the solver, its discretizer and parameters, the time limit and cross-validation.

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (see :class:`~treeexplorer.ui.viewkit.SessionViewer`).
    solver : str, optional
        Solver selected at start (default: CART when available, else the first registered one).
    """

    def __init__(self, ctx: ViewContext, solver: str | None, **params):
        super().__init__(ctx, **params)
        solvers = ctx.controller.solvers()
        default = solver if solver in solvers else ("cart" if "cart" in solvers else (solvers[0] if solvers else None))
        self.solver_w = pn.widgets.Select(label="Solver", options=solvers, value=default, **_SW)
        self.solver_doc = pn.pane.Markdown("", styles=SMALL_TEXT, margin=(0, 10))
        self.disc_w = pn.widgets.Select(label="Discretizer", options=[], **_SW)
        self.bins_w = pn.widgets.IntInput(
            label="N bins (tests)",
            value=None,
            start=1,
            end=1000,
            placeholder="method default",
            description="Thresholds per feature (quantile/uniform) or number of tests (MID)",
            **_SW,
        )
        self.mid_w = pn.widgets.FloatInput(
            label="MID anytime budget (s)",
            value=None,
            start=0.1,
            end=3600,
            placeholder="off",
            description="Solve on the top 1, 2, 4, ... MID tests for this many seconds",
            **_SW,
        )
        self.params_box = pn.Column(sizing_mode="stretch_width", margin=0)
        self.param_widgets: dict = {}
        self.time_w = pn.widgets.FloatInput(
            label="Time limit (s)",
            value=DEFAULT_TIME_LIMIT,
            start=MIN_TIME_LIMIT,
            end=86400,
            step=5,
            description="Best trees so far are kept, marked not proven",
            **_SW,
        )
        self.cv_option = CVOption()
        self.solver_w.param.watch(lambda e: self._on_solver(), "value")
        self.disc_w.param.watch(lambda e: self._on_disc(), "value")
        self._layout = pn.Card(
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
        self._on_solver()

    def __panel__(self):
        return self._layout

    @safe
    def _on_solver(self) -> None:
        name = self.solver_w.value
        if not name:
            self.solver_doc.object = "No solver is installed yet."
            return
        spec = solver_spec(name)
        warm.prefer(name)  # its kernels compile in the background while the user sets the rest
        self.solver_doc.object = spec.description or spec.title
        self.param_widgets = {p.name: widget_for(p) for p in spec.params if p.name not in RESERVED}
        self.params_box.objects = list(self.param_widgets.values())
        discs = self.ctx.controller.discretizers_for(name)
        self.disc_w.options = discs
        self.disc_w.value = discs[0] if discs else None
        self.disc_w.visible = len(discs) > 1 or spec.input == "binary"
        self._on_disc()

    def _on_disc(self) -> None:
        d = self.disc_w.value
        self.bins_w.visible = takes_n_bins(d)
        self.mid_w.visible = d == "mid"

    def show_settings(self, s: RunSettings) -> None:
        """Set the card to describe ``s`` (the same tab reloaded: the card it had, not the default solver's)."""
        if s.solver not in self.solver_w.options:
            return
        self.solver_w.value = s.solver  # rebuilds the parameter widgets with the solver's defaults
        if s.discretizer in self.disc_w.options:
            self.disc_w.value = s.discretizer
        for name, v in s.params.items():
            w = self.param_widgets.get(name)
            if w is not None and v is not None:
                try:
                    w.value = v
                except Exception:  # noqa: S112 - a value the widget refuses keeps the default
                    continue
        if s.n_bins is not None:
            self.bins_w.value = s.n_bins
        if s.mid_budget is not None:
            self.mid_w.value = s.mid_budget
        self.time_w.value = s.time_limit
        self.cv_option.enabled = bool(s.cv)
        if s.cv:
            self.cv_option.folds = s.cv

    def settings(self) -> RunSettings:
        """The run the card currently describes."""
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


class RunBar(SessionViewer):
    """Run and Cancel, the progress bar and a status line, pinned to the top of the sidebar."""

    def __init__(self, ctx: ViewContext, **params):
        super().__init__(ctx, **params)
        self.run_w = pn.widgets.Button(label="Run", color="primary", icon=PLAY_ICON, **_SW)
        self.cancel_w = pn.widgets.Button(label="Cancel", color="warning", icon=STOP_ICON, disabled=True, **_SW)
        self.progress_w = pn.indicators.Progress(
            active=False, value=0, max=100, visible=False, bar_color="primary", **_SW
        )
        self.status_w = pn.pane.Markdown("", styles={"font-size": "0.85em"}, margin=(0, 10))
        # Run, Cancel and the progress stay in view at laptop sizes: first in the sidebar and pinned to its top
        # while the cards below scroll (the Data and Solver cards alone are taller than an 800 px window).
        self._layout = pn.Column(
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

    def __panel__(self):
        return self._layout

    @safe
    def show(self) -> None:
        """Buttons, progress and status for the job running (or the last run's outcome)."""
        c = self.ctx.controller
        running = c.running
        self.run_w.disabled = running
        self.cancel_w.disabled = not running
        self.progress_w.visible = running
        self.progress_w.active = running
        settings = c.job.meta.settings if c.job is not None else None  # the running job's (RunJob)
        text, fraction = describe(
            c.progress if running else {},
            settings.params if settings is not None else {},
            settings.time_limit if settings is not None else None,
        )
        # determinate where the work can be counted (depths, budgets, folds, rows), else activity only
        self.progress_w.value = (-1 if fraction is None else int(100 * fraction)) if running else 0
        label = c.job.label if c.job is not None else ""
        if running:
            self.status_w.object = md(f"{label}: {text}" if label else text)
        elif c.runs:
            last = c.runs[-1]
            self.status_w.object = md(f"Last run {last.label}: {last.status_text}")
        else:
            self.status_w.object = ""


class Sidebar(SessionViewer):
    """The sidebar: an Enter key listener, :class:`RunBar`, :class:`DataInputs` and :class:`SolverInputs`.

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (see :class:`~treeexplorer.ui.viewkit.SessionViewer`).
    dataset, solver, test_size
        What the cards show at start.
    """

    def __init__(self, ctx: ViewContext, dataset: str, solver: str | None, test_size: float, **params):
        super().__init__(ctx, **params)
        self.run_bar = RunBar(ctx)
        self.data = DataInputs(ctx, dataset, test_size)
        self.solver = SolverInputs(ctx, solver)
        if not self.solver.solver_w.value:
            self.run_bar.run_w.disabled = True
        self.enter_key = EnterKey(height=0, width=0, margin=0)  # Enter in a field: the Explorer runs
        # a file over the upload cap is refused before the browser sends it (no dead websocket), in one line
        self.upload_guard = UploadGuard(max_bytes=MAX_UPLOAD_BYTES, height=0, width=0, margin=0)
        self.upload_guard.param.watch(self._on_refused_upload, "refused")
        self._layout = pn.Column(
            self.enter_key,
            self.upload_guard,
            self.run_bar,
            self.data,
            self.solver,
            sizing_mode="stretch_width",
            css_classes=["enter-run"],  # Enter runs in these fields only (EnterKey)
        )

    def _on_refused_upload(self, event) -> None:
        got = event.new or {}
        size, cap = int(got.get("size") or 0), self.upload_guard.max_bytes
        self.ctx.controller.error = (
            f"{got.get('name') or 'the file'}: {mib(size)} is over the {mib(cap)} upload limit, so the browser did "
            "not send it; use the Python API or the CLI for larger tables"
        )

    def __panel__(self):
        return self._layout
