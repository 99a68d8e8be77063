"""The Explorer: one Panel component that is the served app, an inline notebook view and an ipywidget.

>>> import treeexplorer as tx
>>> explorer = tx.Explorer(df)      # a DataFrame, (X, y), a file, a bundled name, or fronts; shown inline
>>> explorer.selected               # the tree picked on the plot, back in Python; explorer.classifier()
>>> pn.ipywidget(explorer)          # ipywidgets-based front ends (VS Code, Voila)
>>> tx.Explorer().app().servable()  # what apps/explorer.py does under ``panel serve``
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import NamedTuple

import panel as pn
import param
from bokeh.models import CustomJS
from panel.theme.fast import Fast

from treeexplorer.data import DataError
from treeexplorer.front import Front, FrontTree
from treeexplorer.textsafe import md_message
from treeexplorer.ui import handover, session_store, warm
from treeexplorer.ui.controller import Controller, RunSettings, broken_solvers
from treeexplorer.ui.defaults import DEFAULT_HELD_OUT, DEFAULT_TIME_LIMIT, HELD_OUT_RANGE
from treeexplorer.ui.detail import TreeDetail
from treeexplorer.ui.frontpanel import FrontPanel
from treeexplorer.ui.inputs import ExplorerInput, read_input
from treeexplorer.ui.jobs import app_words
from treeexplorer.ui.lazy import lazy_card
from treeexplorer.ui.notebook import in_kernel, notebook_bundle, prepare_view
from treeexplorer.ui.preview import preview_markdown
from treeexplorer.ui.rashomonview import CloudLink, RashomonSession, RashomonView, set_label
from treeexplorer.ui.sessionview import SessionControls, open_into
from treeexplorer.ui.sidebar import Sidebar
from treeexplorer.ui.sweepview import SweepView
from treeexplorer.ui.viewkit import POLL_MS, Poller, ViewContext, batched, safe
from treeexplorer.warm import compile_notice

__all__ = ["Explorer", "Selection"]

log = logging.getLogger(__name__)
_keep_lock = threading.Lock()  # the sessions' writers to the server's disk (treeexplorer.ui.session_store)


class Selection(NamedTuple):
    """The selected tree: its entry in the front, the front, and the run's number (``#1`` in the legend)."""

    entry: FrontTree
    front: Front
    run_id: int


SIDEBAR_W = 310

# Two fixes of Bokeh's widgets, for the whole page.  Its number inputs draw two spinner buttons each, and
# every one was a Tab stop (3 per field): right before the browser moves focus on Tab, the buttons (in Panel's
# shadow roots) leave the Tab order; the arrows keep working with the mouse, and Up/Down in the field.  Its
# checkbox's label is a <div> beside the box, not a <label>: a click on it did nothing; now it toggles the box.
PAGE_FIXES_JS = """
if (!window.__treeexplorerPageFixes) {  // once per page: a notebook may show several explorers
window.__treeexplorerPageFixes = true;
const skip = (root) => {
  for (const b of root.querySelectorAll('.bk-spin-btn:not([tabindex])')) b.tabIndex = -1;
  for (const el of root.querySelectorAll('*')) if (el.shadowRoot) skip(el.shadowRoot);
};
window.addEventListener('keydown', (e) => { if (e.key === 'Tab') skip(document); }, true);
window.addEventListener('click', (e) => {
  const el = e.composedPath()[0];
  if (!(el instanceof HTMLElement) || !el.classList.contains('bk-label')) return;
  const box = el.previousElementSibling;
  if (box && box.tagName === 'INPUT' && box.type === 'checkbox' && !box.disabled) box.click();
}, true);
}
"""

# Panel's Fast design adds a Google Fonts stylesheet (Open Sans); this one is the same design without it, so
# the served page needs nothing from the internet (the text falls back to the system's sans-serif).  The
# class keeps the name "Fast": Panel finds the design's own bundled files by the class name.
OfflineFast = type("Fast", (Fast,), {"_resources": {**Fast._resources, "font": {}}, "__module__": __name__})


def _part(path: str):
    """A widget of one of the Explorer's parts, under the name scripts and tests use (``explorer.run_w``)."""
    names = path.split(".")
    return property(lambda self: functools.reduce(getattr, names, self), doc=f"The same as ``{path}``.")


class Explorer(pn.viewable.Viewer):
    """Find and explore Pareto fronts of decision trees.

    Parameters
    ----------
    data : DataFrame, (X, y), array, str, path, Front or list of Front, optional
        What :func:`treeexplorer.solve` takes (a table, arrays, a file, a bundled dataset name), solved at once
        with the settings below; or fronts solved elsewhere, opened as runs without solving again.  Default: the
        bundled ``dataset``.
    target : str, int or array, optional
        Target column (default: the guess of :func:`treeexplorer.target.guess_target`, said in a notice), or the
        labels ``y`` with an array ``X``.
    **settings
        ``solve``'s settings (``discretizer``, ``n_bins``, ``mid_budget``, ``time_limit`` (default 30 s),
        ``seed``, ``drop_missing``), ``cv`` (folds: a cross-validated run) and the solver's parameters
        (``max_depth``, ...): shown in the sidebar's controls and checked as ``solve`` checks them.
    dataset : str
        Bundled dataset shown when no ``data`` is given; setting it later loads that table.
    solver : str, optional
        Solver selected (default: CART when available, else the first registered one); live like ``dataset``.
    run_default : bool
        Solve once at start so a front is shown right away.
    test_size : float
        Held-out fraction (live).

    In a notebook no ``pn.extension()`` call is needed: the first display sends BokehJS and Panel's scripts
    from the installed packages (:mod:`treeexplorer.ui.notebook`), so it works offline.

    The page is made of small Viewers over one :class:`~treeexplorer.ui.controller.Controller`: the
    :class:`~treeexplorer.ui.sidebar.Sidebar` (run bar, Data and Solver cards), the
    :class:`~treeexplorer.ui.frontpanel.FrontPanel` (Pareto front card), the
    :class:`~treeexplorer.ui.detail.TreeDetail` (selected tree card) and the
    :class:`~treeexplorer.ui.sweepview.SweepView`; the Explorer composes them and forwards the controller's
    changes to them.
    """

    dataset = param.String(default="iris")
    solver = param.String(default=None, allow_None=True)
    run_default = param.Boolean(default=True)
    test_size = param.Number(default=DEFAULT_HELD_OUT, bounds=HELD_OUT_RANGE)

    # the parts' widgets under their historical names
    dataset_w = _part("sidebar.data.dataset_w")
    upload_w = _part("sidebar.data.upload_w")
    target_w = _part("sidebar.data.target_w")
    test_size_w = _part("sidebar.data.test_size_w")
    seed_w = _part("sidebar.data.seed_w")
    test_upload_w = _part("sidebar.data.test_upload_w")
    drop_missing_w = _part("sidebar.data.drop_missing_w")
    data_info = _part("sidebar.data.data_info")
    solver_w = _part("sidebar.solver.solver_w")
    disc_w = _part("sidebar.solver.disc_w")
    bins_w = _part("sidebar.solver.bins_w")
    mid_w = _part("sidebar.solver.mid_w")
    time_w = _part("sidebar.solver.time_w")
    param_widgets = _part("sidebar.solver.param_widgets")
    cv_option = _part("sidebar.solver.cv_option")
    run_w = _part("sidebar.run_bar.run_w")
    cancel_w = _part("sidebar.run_bar.cancel_w")
    progress_w = _part("sidebar.run_bar.progress_w")
    status_w = _part("sidebar.run_bar.status_w")
    x_w = _part("front.x_w")
    show_test_w = _part("front.show_test_w")
    pareto = _part("front.pareto")
    plot_pane = _part("front.plot_pane")
    exact_btn = _part("front.exact_btn")
    exact_stop_w = _part("front.exact_stop_w")
    tree_title = _part("detail.tree_title")
    tree_fig = _part("detail.tree_fig")
    tree_pane = _part("detail.tree_pane")
    tree_box = _part("detail.tree_box")
    same_point_box = _part("detail.same_point_box")
    metrics_pane = _part("detail.tabs.metrics_pane")
    rules_pane = _part("detail.tabs.rules_pane")
    compare_pane = _part("detail.tabs.compare_pane")
    diagnostics = _part("detail.tabs.diagnostics")
    dl = _part("detail.exports.dl")

    def __init__(self, data=None, target=None, **settings):
        names = set(type(self).param.objects("existing"))
        params = {k: settings.pop(k) for k in list(settings) if k in names and k != "dataset"}
        given = read_input(
            data,
            target,
            solver=params.get("solver"),
            test_size=params.get("test_size"),
            dataset=settings.pop("dataset", None),
            **settings,
        )
        if given.kind == "bundled":
            params["dataset"] = given.dataset
        if given.kind == "fronts":
            params.setdefault("run_default", False)  # the fronts are the runs: nothing to solve at start
        super().__init__(**params)
        self._input = given
        self._token = self._browser = None
        self._keeping = self._keep_again = False  # a write of the session to the server's disk is under way
        self.controller = c = Controller(test_size=self.test_size)
        self.ctx = ViewContext(c)
        self._poller = Poller(self._apply_job_events, POLL_MS, self.ctx.periodic)
        self._build()
        c.param.watch(self._on_runs, ["runs"])
        c.param.watch(self.front.redraw, ["partial"])
        c.param.watch(self._on_selected, ["selected", "compare", "compare_run"])
        c.param.watch(self._on_messages, ["error", "notice", "many_classes"])
        c.param.watch(self._on_progress, ["progress", "running"])
        data_params = ["data_version", "columns", "target", "test_name", "missing", "drop_missing", "refused_table"]
        c.param.watch(self._on_data, data_params)
        self.param.watch(self._on_own_params, ["dataset", "solver", "test_size"])
        c.exact.auto = True  # small data: the exact front follows the first run in the background
        c.exact.param.watch(self._on_exact, ["status", "running", "version", "offer"])
        self._register_session_end()
        # the same tab reloaded (the theme switch reloads the page): continue its session instead of starting over
        # (only in the browser that held the tab's token: see treeexplorer.ui.handover)
        served = self.ctx.doc is not None and getattr(self.ctx.doc, "session_context", None) is not None
        asked = handover.token_from_args(pn.state.session_args) if served else None
        self._browser = handover.browser_secret(self.ctx.doc.session_context.request) if served else None
        previous = handover.take(asked, self._browser)
        # not in this server's memory (it was restarted): the copy it kept on disk, for this browser only
        stored = session_store.load(asked, self._browser) if served and previous is None else None
        self._token = asked if previous is not None or stored is not None else handover.new_token()  # never chosen
        if served:
            handover.register(self._token, self._browser, c)
        if previous is not None:
            c.take_over(previous)
            self.sidebar.data.take_over()
            card = previous.card_settings or (previous.runs[-1].settings if previous.runs else None)
            if card is not None:
                self.sidebar.solver.show_settings(card)  # the reloaded tab keeps its solver card
            self._on_data()
            self._on_selected()
        elif stored is not None and self._show_stored(stored):
            pass
        else:
            stored = None
            self._apply_settings(given)
            if self._load_input(given):
                self._on_data()
        # a tab reloaded before its first front arrived (the theme switch reloads; that run was cancelled with
        # the old page) starts it again
        again = previous is not None and not c.all_runs and c.dataset is not None and not c.error
        if (previous is None and stored is None or again) and self.run_default and self.solver_w.options:
            self.first_run()
        self._on_runs()
        broken = broken_solvers()
        if broken:
            note = "; ".join(f"solver {n} is unavailable ({why})" for n, why in broken.items())
            c.notice = f"{c.notice}; {note}" if c.notice else note
        if asked is not None and previous is None and stored is None:
            c.notice = f"{handover.FOREIGN_NOTE}; {c.notice}" if c.notice else handover.FOREIGN_NOTE
        if served:  # kept on the server's disk after every run and selection (the link survives a restart)
            c.param.watch(lambda *e: self._keep_on_disk(), ["runs", "selected"])
        self._on_messages()
        self.ctx.building = False

    # -- what the constructor was given ---------------------------------------------------------------
    def _apply_settings(self, given: ExplorerInput) -> None:
        """Show the constructor's settings in the sidebar's controls: the first run (and Run) uses them."""
        s, solver = given.settings, self.sidebar.solver
        c = self.controller
        if given.solver is not None and solver.solver_w.value != given.solver:
            solver.solver_w.value = given.solver  # rebuilds the parameter widgets and the discretizer list
        for name, value in given.params.items():
            if name in solver.param_widgets:
                solver.param_widgets[name].value = value
        if s.get("discretizer") is not None:
            disc = s["discretizer"]
            if disc not in solver.disc_w.options:
                raise ValueError(f"discretizer {disc!r} is not offered for solver {given.solver!r}")
            solver.disc_w.value = disc
        if s.get("n_bins") is not None:
            solver.bins_w.value = int(s["n_bins"])
        if s.get("mid_budget") is not None:
            solver.mid_w.value = float(s["mid_budget"])
        if "time_limit" in s:
            solver.time_w.value = None if s["time_limit"] is None else float(s["time_limit"])
        if s.get("cv") is not None:
            solver.cv_option.param.update(enabled=True, folds=int(s["cv"]))
        if s.get("seed") is not None:
            self.seed_w.value = int(s["seed"])
        c.drop_missing = bool(s.get("drop_missing", False))

    def _load_input(self, given: ExplorerInput) -> bool:
        """Load the constructor's data: a bundled table, a table given in Python, or fronts as runs."""
        c = self.controller
        if given.kind == "bundled":
            ok = c.load_bundled(given.dataset, given.target)
        elif given.kind == "table":
            ok = c.load_frame(given.frame, given.target, given.name)
            if ok:
                self.sidebar.data._show_loaded(uploaded=True)
        else:
            c.add_fronts(given.fronts)
            entry = f"opened: {given.fronts[0].dataset or 'front'}"
            with self.ctx.setting():
                self.dataset_w.options = [entry, *c.bundled()]
                self.dataset_w.value = entry
            return False
        if not ok and c.many_classes is None and given.kind == "table":
            # the user typed this data: say what is wrong with it in the keywords they typed
            text = c.error.replace("(drop_missing=True, CLI --drop-missing)", "(Explorer(data, drop_missing=True))")
            raise DataError(text)
        return ok

    def _build(self) -> None:
        c, ctx = self.controller, self.ctx
        self.sidebar = Sidebar(ctx, self.dataset, self.solver, self.test_size)
        self.session_controls = SessionControls(ctx, on_open=self._open_uploaded_session)
        self.sidebar._layout.append(self.session_controls)  # under the run settings: Save / Open session
        self.front = FrontPanel(ctx)
        self.detail = TreeDetail(ctx, x_measure=lambda: self.front.x_w.value)
        self._sweep_view: SweepView | None = None  # made when its card is first opened (~45 ms per session)
        self._alternatives: RashomonView | None = None
        # messages above the cards: errors, notices, and the question a target with many classes asks
        self.error_w = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self.notice_w = pn.pane.Alert("", alert_type="info", visible=False, sizing_mode="stretch_width")
        self.many_w = pn.widgets.Button(label="Use it anyway", color="danger", visible=False, width=150)
        self.many_cancel_w = pn.widgets.Button(label="Keep the previous table", color="light", visible=False, width=190)
        # columns, types, missing values and class balance, built when opened (np.unique over every column)
        self.preview_pane = pn.pane.Markdown("", sizing_mode="stretch_width", margin=(0, 10))
        self.preview_card = lazy_card(
            self.preview_pane,
            title="Data preview: columns, types, missing values, classes",
            sizing_mode="stretch_width",
        )
        self.main = pn.Column(
            self.error_w,
            pn.Row(self.many_w, self.many_cancel_w),
            self.notice_w,
            self.preview_card,
            self.front,
            self.detail,
            lazy_card(  # made when first opened, as the Sweep card
                build=self._alternatives_panel,
                title="Alternatives: the near-optimal trees behind the selected point (Rashomon set)",
                sizing_mode="stretch_width",
            ),
            lazy_card(  # rendered when first opened: ~80 Bokeh models fewer per session
                build=lambda: self.sweep_view,
                title="Sweep: cross-validate a grid of settings on a local Dask cluster",
                sizing_mode="stretch_width",
            ),
            sizing_mode="stretch_width",
        )
        # events between the parts
        self.many_w.on_click(lambda e: c.confirm_many_classes())
        self.many_cancel_w.on_click(lambda e: self.sidebar.data.keep_previous_table())
        self.preview_card.param.watch(lambda e: self._update_preview(), "collapsed")
        self.run_w.on_click(lambda e: self.run_now())
        self.cancel_w.on_click(lambda e: self.cancel())
        self.sidebar.enter_key.param.watch(lambda e: None if c.running else self.run_now(), "presses")
        self.x_w.param.watch(lambda e: self.detail.update_same_point(), "value")
        self.show_test_w.param.watch(lambda e: self.detail.update_same_point(), "value")
        self.detail.rerun_w.on_click(lambda e: self._rerun_more_tests())
        self.front.pareto.reveal_on_tap(TreeDetail.CSS_CLASS)  # laptop screens: the opened tree comes into view
        # the page fixes run when the plot is first laid out, in the served page and in a notebook alike (a
        # notebook's display fires no "document_ready"; a ReactiveHTML part stalled its comm with the kernel)
        self.front.pareto.figure.js_on_change("inner_width", CustomJS(code=PAGE_FIXES_JS))

    @property
    def alternatives(self) -> RashomonView:
        """The Alternatives card's view: the Rashomon set of the selected point (made on first use)."""
        if self._alternatives is None:
            session = RashomonSession(self.controller.prepared)
            self._alternatives = RashomonView(
                session, on_open=self._open_alternative, periodic=self.ctx.periodic, bokeh=self.ctx.bokeh
            )
            self._cloud_link = CloudLink(self._alternatives, self.controller)  # "Show on the plot"
            # the set belongs to its table: another table's card is empty, and its own set comes back with it
            view = self._alternatives
            self.controller.tables.register("alternatives", view.session.snapshot, view.restore)
        return self._alternatives

    def _alternatives_panel(self):
        find = pn.widgets.Button(label="Find alternatives to the selected tree", color="primary", width=300)
        find.on_click(lambda e: self.find_alternatives())
        return pn.Column(find, self.alternatives, sizing_mode="stretch_width")

    def find_alternatives(self, time_limit: float | None = DEFAULT_TIME_LIMIT):
        """Start the Rashomon set of the selected tree: the ``k`` best trees with at most its splits over its
        run's tests; returns the job (None when there is no selection or the run is not over binary tests)."""
        run, entry = self.controller.selection()
        if entry is None:
            self.alternatives.session.status = "click a point on the plot first: its tree's alternatives are listed"
            return None
        return self.alternatives.start(run, entry, time_limit)

    def _open_alternative(self, front, entry) -> None:
        # the set becomes a run (once: opening another of its trees reuses it), the chosen tree selected
        self.controller.open_set_tree(front, entry.id, set_label(self.alternatives.session.point))

    @property
    def sweep_view(self) -> SweepView:
        """The Sweep card's view (made on first use)."""
        if self._sweep_view is None:
            self._sweep_view = SweepView(self.controller, periodic=self.ctx.periodic)
        return self._sweep_view

    def __panel__(self):
        return pn.Row(pn.Column(self.sidebar, width=SIDEBAR_W), self.main, sizing_mode="stretch_width")

    def _create_view(self):
        # every route into a notebook (display, pn.ipywidget, pn.Column(explorer)) renders through this view
        return prepare_view(super()._create_view())

    def _repr_mimebundle_(self, include=None, exclude=None):
        # offline whatever the user called (pn.extension(), inline or not, or nothing), and fast: see ui.notebook
        return notebook_bundle(self._create_view(), include, exclude)

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

    # -- the controller's changes, forwarded to the parts ----------------------------------------------
    @safe
    def _on_data(self, *events) -> None:
        self._update_preview()
        self.sidebar.data.show()
        self.front.show_data()
        self.front.show_placeholder()

    @safe
    def _on_progress(self, *events) -> None:
        self.sidebar.run_bar.show()
        self.front.show_placeholder()

    @safe
    def _on_runs(self, *events) -> None:
        self.front.redraw()
        self.front.show_runs()
        self.front.show_placeholder()
        self.detail.exports.show_runs(self.controller.runs)
        self.sidebar.run_bar.show()
        self._on_selected()

    @safe
    def _on_selected(self, *events) -> None:
        run, entry = self.controller.selection()
        self.detail.show(run, entry)
        if entry is not None:
            self.front.show_selected()

    @safe
    def _on_exact(self, *events) -> None:
        self.front.show_exact(*events)
        if any(e.name == "version" for e in events):
            self._on_selected()

    def _on_messages(self, *events) -> None:
        c = self.controller
        self.error_w.object = md_message(app_words(c.error))  # the controls to use, not the library's argument names
        self.error_w.visible = bool(c.error)
        asking = c.many_classes is not None
        self.notice_w.object = md_message(app_words(c.notice))
        # while a target waits for confirmation the notes are of the table still in use, under another target
        # than the select shows: the question alone is on the page until it is answered
        self.notice_w.visible = bool(c.notice) and not asking
        if asking:
            self.many_w.label = f"Use {c.many_classes['column']!r} anyway ({c.many_classes['n_classes']:,} classes)"
            self.many_w.width = 330
        self.many_w.visible = self.many_cancel_w.visible = asking

    def _update_preview(self) -> None:
        ds = self.controller.dataset
        if self.preview_card.collapsed or ds is None:
            return
        c = self.controller
        dropped = c.missing if c.drop_missing else 0  # the preview is of the table loaded, not of the file
        self.preview_pane.object = preview_markdown(ds, c.missing_by_column, dropped=dropped)

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

    # -- public API: run, select, export ---------------------------------------------------------------
    def settings(self) -> RunSettings:
        """The run the sidebar currently describes."""
        return self.sidebar.solver.settings()

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

    def first_run(self):
        """The run a new explorer opens with (the sidebar's settings); returns the run, or the job of one started
        in the background.

        Its front is solved before the page is sent (a served page opens with its front drawn), except when its
        solver's kernels must compile first (a new machine: 15 to 75 s): a served page then opens at once with
        the run in progress in the run bar (Cancel stops it), and its front is drawn when done.  Elsewhere (a
        notebook, a script) the call waits for the front; in a notebook it says why first.
        """
        solver = self.solver_w.value
        if self.ctx.doc is None or not warm.must_compile(solver):
            if self.ctx.doc is None and in_kernel() and warm.must_compile(solver):
                print(f"{compile_notice(solver)}; the explorer shows when it is done", flush=True)
            run = self.run_now(wait=True)
            warm.first_front_shown()  # the background warm-up of the other solvers may go on
            return run
        # Blocking here would hold the server's one event loop for the whole compile: no page for anyone.
        job = self.run_now()
        if job is not None:
            self.controller.progress = warm.compiling_report(solver)  # the first page's words, before any report
        return job

    def _rerun_more_tests(self) -> None:
        c = self.controller
        if c.selected is not None and c.rerun_with_more_tests(c.selected[0]) is not None:
            self._start_polling()

    def cancel(self) -> None:
        """Cancel the job running."""
        self.controller.cancel()

    def _start_polling(self) -> None:
        if self.ctx.doc is not None and not pn.state.loaded:
            # a served page not yet shown (its first run): Panel runs periodic callbacks once it has loaded
            pn.state.onload(self._poller.start)
        else:
            self._poller.start()

    def _apply_job_events(self) -> bool:
        with batched(self.ctx.doc):
            running = self.controller.poll()
        if not running:
            warm.first_front_shown()  # a first run in the background has ended: the warm-up may go on
        return running

    def poll(self) -> bool:
        """Apply finished work and progress (UI thread); stops the periodic callback when the job ends."""
        return self._poller.tick()

    def poll_exact(self) -> bool:
        """Apply the exact front when it arrives (UI thread); stops its periodic callback when done."""
        return self.front.poll_exact()

    def select(self, run_id: int, tree_id: int) -> None:
        """Show tree ``tree_id`` of run ``run_id`` (what a click on the plot does)."""
        self.controller.select(run_id, tree_id)

    def export(self, kind: str, run_id: int | None = None, tree_id: int | None = None) -> bytes:
        """The bytes of one export: png, svg, txt, json (a tree), front_json, front_csv (its run).

        The selected tree by default; ``run_id`` (and ``tree_id``, default: the run's best tree) export
        another one without changing what the screen shows.
        """
        return self.detail.exports.export(kind, run_id, tree_id)

    # -- the tab's session kept on the server's disk (treeexplorer.ui.session_store) --------------------
    def _show_stored(self, data) -> bool:
        """Show the session this tab's link kept on the server's disk; False when it no longer opens."""
        from treeexplorer.session_file import SessionError

        try:
            self.show_session(data, "this tab's session")
        except SessionError as exc:
            self.controller.error = ""
            self.controller.notice = f"this link's kept session no longer opens ({exc}): a new one"
            return False
        self.controller.notice = "this tab's session, kept by the server: its runs and selection are back"
        return True

    def _keep_on_disk(self) -> None:
        """Write the session to the server's disk in a thread (one at a time; a change meanwhile writes again)."""
        if self._token is None or self._browser is None:
            return
        with _keep_lock:
            if self._keeping:
                self._keep_again = True
                return
            self._keeping, self._keep_again = True, False

        def work():
            while True:
                try:
                    session_store.save(self._token, self._browser, self.controller)
                except Exception:  # never the tab's problem: its work goes on, only not kept on disk
                    log.exception("keeping the session on disk failed")
                with _keep_lock:
                    if not self._keep_again:
                        self._keeping = False
                        return
                    self._keep_again = False

        threading.Thread(target=work, name="treeexplorer-keep-session", daemon=True).start()

    # -- sessions kept in a file ---------------------------------------------------------------------
    def save(self, path):
        """Write the current table's session (table or its digest, settings, columns, runs, selection) to
        ``path``, a plain JSON file (:mod:`treeexplorer.session_file`); returns the path."""
        from treeexplorer.session_file import save_session

        return save_session(self.controller, path)

    @classmethod
    def open(cls, path, **settings) -> Explorer:
        """An Explorer showing the session saved in ``path``: its table, runs and selection, nothing solved
        again.  A file whose table no longer matches (or that is not a session file) is refused with one line
        (:class:`~treeexplorer.session_file.SessionError`)."""
        from pathlib import Path

        from treeexplorer.session_file import read_session

        data = read_session(path)
        dataset = data.table["name"] if data.table["kind"] == "bundled" else "iris"
        explorer = cls(dataset=dataset, run_default=False, **settings)
        explorer.show_session(data, Path(path).name)
        return explorer

    def show_session(self, data, name: str = "session") -> None:
        """Show a session file's content (:class:`~treeexplorer.session_file.SessionData`) in this Explorer."""
        added = open_into(self.controller, data, name)
        self.sidebar.data.take_over()
        if added:
            self.sidebar.solver.show_settings(added[-1].settings)
        self._on_data()
        self._on_runs()

    def _open_uploaded_session(self, data, name: str) -> None:
        from treeexplorer.session_file import SessionError

        try:
            self.show_session(data, name)
        except SessionError as exc:
            self.controller.error = str(exc)

    # -- the chosen tree, back in Python -------------------------------------------------------------
    @property
    def selected(self) -> Selection | None:
        """The tree shown in the tree card: ``Selection(entry, front, run_id)`` (a :class:`FrontTree`, its
        :class:`Front` and the run's number in the legend), or None when no tree is selected."""
        run, entry = self.controller.selection()
        if entry is None:
            return None
        return Selection(entry, run.front, run.id)

    @property
    def fronts(self) -> list:
        """The fronts of the runs drawn on the plot (the current data's), oldest first."""
        return [r.front for r in self.controller.runs]

    def classifier(self):
        """The selected tree as a fitted scikit-learn estimator (no new solve).

        Returns
        -------
        TreeExplorerClassifier
            ``predict``/``predict_proba`` use the selected tree; ``front_`` and ``selected_`` are its front and
            entry.
        """
        from treeexplorer.estimator import TreeExplorerClassifier

        sel = self.selected
        if sel is None:
            raise ValueError("no tree is selected: click a point of the Pareto plot (or call select(run, tree))")
        return TreeExplorerClassifier.from_tree(sel.entry, sel.front)

    def predict(self, X):
        """Class labels the selected tree gives the rows of ``X`` (a DataFrame with the training columns, or an
        array in their order); the target column, if present, is ignored."""
        clf = self.classifier()
        names = list(clf.feature_names_in_)
        if hasattr(X, "columns") and all(n in X.columns for n in names):
            X = X[names]  # the training columns only (the target and columns the loader left out are not used)
        return clf.predict(X)

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

    def _session_closed(self) -> None:
        running = self.controller.running
        try:  # the solver card as it was, for the same tab reloaded (handover)
            self.controller.card_settings = self.settings()
        except Exception:
            self.controller.card_settings = None
        if self._token is not None:
            handover.keep(self._token, self._browser, self.controller)
            self._keep_on_disk()
        self.close()
        if running:  # one line in the server log: the job of a closed tab does not keep solving
            print(f"treeexplorer: session closed, cancelled its job {self.controller.job.label!r}", flush=True)

    def close(self) -> None:
        """Stop this session's job (called when the browser tab closes)."""
        self.ctx.closed = True
        self._poller.stop()
        self.front.stop_polling()
        self.controller.close()
        if self._sweep_view is not None:
            self._sweep_view.close()  # cancels its sweep and closes the session's Dask cluster
