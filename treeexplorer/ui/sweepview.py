"""The Explorer's Sweep view: a small grid (solvers × discretizers × max depth, k folds) on a local Dask cluster.

:class:`SweepSession` is the headless part (testable without a browser): it validates the grid with
:func:`treeexplorer.sweep.expand_grid`, starts the session's cluster lazily with :func:`treeexplorer.sweep.connect`
(kept between sweeps so workers keep their loaded kernels, closed when the session ends), runs
:func:`treeexplorer.sweep.sweep` in a background :class:`~treeexplorer.jobs.Job` (the server's admission control,
progress, cancel) whose events the UI thread applies.  :class:`SweepView` is the small Panel Viewer over it: the
grid widgets, a table that fills one row per setting as its folds come in (a failing setting shows its message), a
progress bar, Cancel (stops every task) and a figure overlaying the best settings' cross-validated fronts by the
1-SE rule.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.plotting import figure
from panel.io.state import set_curdoc

from treeexplorer.choices import rank_by_one_se
from treeexplorer.data import DataError
from treeexplorer.folds import check_cv
from treeexplorer.jobs import Job
from treeexplorer.render.layout import PALETTE
from treeexplorer.solvers import Cancelled, Control, time_limit_seconds
from treeexplorer.sweep import connect, effective_discretizer, expand_grid, sweep
from treeexplorer.ui.cvrun import DEFAULT_FOLDS, FOLD_CHOICES
from treeexplorer.ui.defaults import DEFAULT_TIME_LIMIT, MIN_TIME_LIMIT
from treeexplorer.ui.jobs import app_job, readable_error
from treeexplorer.ui.viewkit import POLL_MS, Poller

log = logging.getLogger(__name__)

__all__ = ["SweepSession", "SweepView", "setting_row", "rank_by_one_se", "DEFAULT_WORKERS"]

DEFAULT_WORKERS = 2  # worker processes of a session's LocalCluster: small, the server is shared
BEST_SHOWN = 5  # settings overlaid in the figure
DEFAULT_DISC = "solver default"
TABLE_COLUMNS = [
    "#",
    "solver",
    "discretizer",
    "max depth",
    "status",
    "1-SE splits",
    "1-SE CV accuracy",
    "best splits",
    "best CV accuracy",
    "time (s)",
    "message",
]


def _mean_sd(row: dict) -> str:
    return f"{row['cv_mean']:.4f} ± {row['cv_std']:.4f}"


def setting_row(index: int, setting: dict, front, error: str | None = None) -> dict:
    """The table row of one finished setting: its 1-SE and best-mean levels, or its error message."""
    row = {
        "#": index + 1,
        "solver": setting["solver"],
        "discretizer": effective_discretizer(setting)
        + (f"/{setting['n_bins']}" if setting.get("n_bins") is not None else ""),
        "max depth": setting["params"].get("max_depth", "-"),
        "status": "cancelled" if front is None else front.status,
        "1-SE splits": "",
        "1-SE CV accuracy": "",
        "best splits": "",
        "best CV accuracy": "",
        "time (s)": "" if front is None else f"{front.runtime_s:.2f}",
        "message": "",
    }
    error = error or (front.error if front is not None else None)
    if error:
        row.update(status="error", message=error)
        return row
    if front is None:
        return row
    try:
        one_se, best = front.select("1se"), front.select("best")
    except ValueError as exc:
        row["message"] = str(exc)
        return row
    row.update(
        {
            "1-SE splits": one_se["level"],
            "1-SE CV accuracy": _mean_sd(one_se),
            "best splits": best["level"],
            "best CV accuracy": _mean_sd(best),
        }
    )
    return row


class SweepSession(param.Parameterized):
    """One session's sweeps, headless: start, poll (UI thread), cancel, close.

    Parameters
    ----------
    controller : Controller
        Whose data the sweep cross-validates: the training rows of its current split.
    connector : callable, optional
        ``connector() -> (distributed.Client, release)``; default :func:`treeexplorer.sweep.connect` with a
        LocalCluster of ``n_workers`` worker processes.  Called once, on the first sweep, in the sweep's thread.
    n_workers : int
    """

    running = param.Boolean(default=False)
    progress = param.Dict(default={})
    rows = param.List(default=[], doc="One dict per finished setting, in completion order")
    error = param.String(default="")
    notice = param.String(default="")
    status = param.String(default="", doc="done / cancelled / error once a sweep ended")

    def __init__(self, controller, connector: Callable | None = None, n_workers: int = DEFAULT_WORKERS, **params):
        super().__init__(**params)
        self.controller = controller
        self.n_workers = n_workers
        self._connector = connector or (lambda: connect(None, n_workers=self.n_workers))
        self._client = None
        self._release: Callable[[], None] | None = None
        self._lock = threading.Lock()  # the client is created in a sweep thread and released at session end
        self.job: Job | None = None
        self._closer: threading.Thread | None = None
        self.settings: list[dict] = []
        self.fronts: dict[int, object] = {}
        self.result = None
        self.dashboard: str | None = None
        self._closed = False

    # -- actions (UI thread) -------------------------------------------------------------------------
    def start(
        self, solvers, discretizers, depths, cv: int = DEFAULT_FOLDS, time_limit: float | None = DEFAULT_TIME_LIMIT
    ) -> bool:
        """Start a sweep over ``solvers × discretizers × depths`` (``None`` discretizer: the solver's default).

        Returns False (and sets ``error``) for a bad grid or data, or while another sweep runs.
        """
        if self._closed:
            return False
        if self.running:
            self.error = "a sweep is already running: cancel it or wait for it to finish"
            return False
        grid = {"solver": list(solvers), "discretizer": list(discretizers) or [None]}
        if depths:
            grid["max_depth"] = [int(d) for d in depths]
        try:
            if not grid["solver"]:
                raise ValueError("pick at least one solver for the sweep")
            if not FOLD_CHOICES[0] <= cv <= FOLD_CHOICES[1]:
                raise ValueError(f"a sweep takes {FOLD_CHOICES[0]} to {FOLD_CHOICES[1]} folds, not {cv}")
            time_limit = time_limit_seconds(time_limit)  # the one check of a limit (per task)
            settings, notices = expand_grid(grid)  # every value checked now, with the grid key named
            ds = self.controller.prepared().dataset  # the training rows: held-out rows stay unseen
            check_cv(cv, 1, ds.n_rows)
        except (DataError, ValueError, NotImplementedError) as exc:
            self.error = readable_error(exc)
            return False
        total = len(settings) * (cv + 1)
        work = self._work(ds, grid, cv, time_limit, self.controller.seed, total)
        job = app_job(work, label="sweep", session=id(self))  # one slot of the server-wide cap, like a run
        if job.start().ticket is None:  # refused outright (the session already holds its slots)
            job.drain(failed=lambda message: setattr(self, "error", message))
            return False
        self.job = job
        self.settings, self.fronts, self.result = settings, {}, None
        self.data_key, self.cv = self.controller.data_key(), int(cv)  # what the settings' fronts were solved on
        with param.parameterized.batch_call_watchers(self):
            self.error = ""
            self.notice = "; ".join(notices)
            self.status = ""
            self.rows = []
            self.progress = {"phase": "starting", "done": 0, "total": total}
            self.running = True
        return True

    def cancel(self) -> None:
        """Stop every task of the running sweep (what finished stays in the table)."""
        if self.running and self.job is not None:
            self.job.cancel()
            self.progress = {**self.progress, "phase": "cancelling"}

    def poll(self) -> bool:
        """Apply the sweep's queued reports (UI thread); True while it runs."""
        if self.job is None:
            return False
        rows = list(self.rows)
        progress = {}

        def report(info: dict) -> None:
            info = dict(info)
            front = info.pop("front", None)
            if front is not None:  # a setting's last task is in: its row
                i = info["setting"]
                self.fronts[i] = front
                rows.append(setting_row(i, self.settings[i], front))
            if info.get("dashboard"):
                self.dashboard = info["dashboard"]
            progress.update(info)

        def done(result) -> None:
            self.result = result
            rows[:] = self._final_rows(result, rows)

        running = self.job.drain(
            progress=report,
            done=done,
            failed=lambda message: setattr(self, "error", message),
            cancelled=lambda message: setattr(self, "status", "cancelled"),  # before any task ran
        )
        with param.parameterized.batch_call_watchers(self):
            if progress:
                self.progress = {**self.progress, **progress}
            if rows != self.rows:
                self.rows = rows
            if not running:
                self.running = False
        return self.running

    def _final_rows(self, result, rows: list[dict]) -> list[dict]:
        """Every setting once the sweep ended: the ones cancelled before finishing get a row too."""
        self.status = result.status
        for i, front in enumerate(result.fronts):
            if front is not None:
                self.fronts[i] = front
        errors = result.table.groupby("setting")["error"].first().to_dict() if len(result.table) else {}
        done = {r["#"] - 1 for r in rows}
        for i, s in enumerate(self.settings):
            if i not in done:
                err = errors.get(i)
                err = None if err in (None, "cancelled") or (isinstance(err, float) and math.isnan(err)) else err
                rows.append(setting_row(i, s, self.fronts.get(i), err))
        return rows

    def open_setting(self, index: int):
        """Open setting ``index`` (0-based, the table's ``#`` minus one) as a run: its cross-validated front (the
        refit, with its CV layer) joins the plot of the data it was swept on; returns the run (None: no front)."""
        from treeexplorer.ui.controller import RunSettings

        front = self.fronts.get(int(index))
        if front is None or getattr(front, "error", None) or not len(front.refit):
            self.error = f"sweep setting #{int(index) + 1} has no front to open"
            return None
        setting = self.settings[int(index)]
        settings = RunSettings(
            setting["solver"],
            dict(setting["params"]),
            setting.get("discretizer"),
            setting.get("n_bins"),
            time_limit=None,
            cv=self.cv,
            name=f"sweep #{int(index) + 1} {setting['solver']} · {effective_discretizer(setting)}",
        )
        c = self.controller
        n = len(c.all_runs)
        c._add_run(front, settings, self.data_key, c.data_label() if self.data_key == c.data_key() else "")
        added = c.all_runs[n:]
        return added[0] if added else None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the sweep's job ends (tests, scripts); True when it has."""
        return self.job is None or self.job.wait(timeout)

    def best(self, n: int = BEST_SHOWN) -> list[tuple[int, object, dict]]:
        """The ``n`` best finished settings by the 1-SE rule (see :func:`rank_by_one_se`)."""
        return rank_by_one_se(self.fronts)[:n]

    def table(self) -> pd.DataFrame:
        """The rows as a DataFrame, in setting order."""
        return pd.DataFrame(sorted(self.rows, key=lambda r: r["#"]), columns=TABLE_COLUMNS)

    # -- the sweep's job ----------------------------------------------------------------------------
    def _work(self, ds, grid, cv, time_limit, seed, total):
        """``work(control)`` for the sweep's job: the session's cluster (started once), then the sweep."""

        def work(control: Control):
            report = control.progress  # the job's: its events
            with self._lock:
                if self._client is None and not control.cancelled and not self._closed:
                    report({"phase": f"starting a local Dask cluster ({self.n_workers} workers)"})
                    self._client, self._release = self._connector()
                client = self._client
            if control.cancelled or client is None:
                raise Cancelled("cancelled before the sweep started")
            report({"phase": "running", "done": 0, "total": total})
            return sweep(
                ds,
                grid,
                cv=cv,
                seed=seed,
                scheduler=client,
                time_limit=time_limit,
                control=control,
                progress=report,
                show_progress=False,
            )

        return work

    # -- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Cancel the running sweep and close the session's cluster (in the background: it takes seconds)."""
        self._closed = True
        job = self.job
        if job is not None:
            job.cancel()

        def shutdown():
            if job is not None:
                job.wait(60)
            with self._lock:
                release, self._release, self._client = self._release, None, None
            if release is not None:
                try:
                    release()
                except Exception:  # the cluster is going away anyway
                    log.exception("closing the sweep's dask cluster failed")

        self._closer = threading.Thread(target=shutdown, name="treeexplorer-sweep-close", daemon=True)
        self._closer.start()

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until :meth:`close` has released the cluster (tests); True when it has."""
        if self._closer is not None:
            self._closer.join(timeout)
        return self._closer is None or not self._closer.is_alive()


class SweepFigure:
    """The best settings' cross-validated fronts (mean held-out accuracy per split count), 1-SE points starred."""

    def __init__(self, height: int = 320):
        self.lines = ColumnDataSource({"xs": [], "ys": [], "color": [], "label": []})
        self.marks = ColumnDataSource({c: [] for c in ("x", "y", "sd", "color", "label", "reached")})
        fig = figure(
            height=height,
            sizing_mode="stretch_width",
            tools="pan,wheel_zoom,box_zoom,reset,save",
            toolbar_location="right",  # as the front's plot: a toolbar above folded its tools on first draw
            x_axis_label="Splits",
            y_axis_label="CV held-out accuracy",
        )
        fig.multi_line("xs", "ys", source=self.lines, line_color="color", line_width=2.5, legend_field="label")
        stars = fig.scatter("x", "y", source=self.marks, marker="star", size=20, fill_color="color", line_color="black")
        fig.add_tools(
            HoverTool(
                renderers=[stars],
                tooltips=[
                    ("setting", "@label"),
                    ("1-SE splits", "@x"),
                    ("CV accuracy", "@y{0.0000} ± @sd{0.0000}"),
                    ("folds reaching", "@reached"),
                ],
            )
        )
        fig.legend.location = "bottom_right"
        fig.legend.label_text_font_size = "9pt"
        self.figure = fig

    def update(self, best) -> None:
        """Draw ``best``: ``(setting index, CVFront, 1-SE row)`` triples."""
        lines = {"xs": [], "ys": [], "color": [], "label": []}
        marks = {c: [] for c in ("x", "y", "sd", "color", "label", "reached")}
        for rank, (i, front, row) in enumerate(best):
            table = [r for r in front.table("splits") if r["n_folds"] and not math.isnan(r["cv_mean"])]
            xs, ys = [], []
            for k, r in enumerate(table):  # a step line, as on the Pareto plot
                if k:
                    xs.append(r["level"])
                    ys.append(table[k - 1]["cv_mean"])
                xs.append(r["level"])
                ys.append(r["cv_mean"])
            color = PALETTE[rank % len(PALETTE)]
            label = f"#{i + 1} {front.solver} · {effective_discretizer(_setting_of(front))}" + (
                f" · depth {front.params['max_depth']}" if "max_depth" in front.params else ""
            )
            lines["xs"].append(xs)
            lines["ys"].append(ys)
            lines["color"].append(color)
            lines["label"].append(label)
            for key, value in (
                ("x", row["level"]),
                ("y", row["cv_mean"]),
                ("sd", row["cv_std"]),
                ("color", color),
                ("label", label),
                ("reached", f"{row['n_reached']} of {len(front.folds)}"),
            ):
                marks[key].append(value)
        self.lines.data = lines
        self.marks.data = marks


def _setting_of(front) -> dict:
    return {"solver": front.solver, "discretizer": front.discretizer, "n_bins": front.n_bins, "params": front.params}


class SweepView(pn.viewable.Viewer):
    """Grid widgets, Run/Cancel, progress, the streaming table and the overlay of the best fronts."""

    def __init__(self, controller, session: SweepSession | None = None, periodic: Callable | None = None, **params):
        super().__init__(**params)
        from treeexplorer.ui.controller import discretizer_names, list_solvers

        self.session = s = session or SweepSession(controller)
        self.controller = controller
        self._doc = pn.state.curdoc if getattr(pn.state.curdoc, "session_context", None) else None
        self._poller = Poller(s.poll, POLL_MS, periodic)  # the session's periodic callbacks given, else Panel's
        sw = {"sizing_mode": "stretch_width"}
        solvers = list_solvers()
        self.solvers_w = pn.widgets.MultiChoice(
            label="Solvers", options=solvers, value=[n for n in ("cart",) if n in solvers] or solvers[:1], **sw
        )
        self.disc_w = pn.widgets.MultiChoice(
            label="Discretizers",
            options=[DEFAULT_DISC, "raw", *[d for d in discretizer_names() if d != "none"]],
            value=[DEFAULT_DISC],
            **sw,
        )
        self.depth_w = pn.widgets.CheckButtonGroup(
            label="Max depths", options=[1, 2, 3, 4, 5, 6], value=[2, 3], color="primary", variant="outline"
        )
        self.folds_w = pn.widgets.IntSlider(
            label="Folds (k)", start=FOLD_CHOICES[0], end=FOLD_CHOICES[1], value=DEFAULT_FOLDS, width=200
        )
        self.time_w = pn.widgets.FloatInput(
            label="Time limit per task (s)", value=DEFAULT_TIME_LIMIT, start=MIN_TIME_LIMIT, end=3600, step=5, width=180
        )
        self.run_w = pn.widgets.Button(label="Run sweep", color="primary", width=130)
        self.cancel_w = pn.widgets.Button(label="Cancel sweep", color="warning", disabled=True, width=130)
        self.progress_w = pn.indicators.Progress(value=0, max=100, visible=False, bar_color="primary", **sw)
        self.status_w = pn.pane.Markdown("", styles={"font-size": "0.85em"}, margin=(0, 10))
        self.caption = pn.pane.Markdown("", styles={"font-size": "0.85em", "opacity": "0.75"}, margin=(0, 10))
        self.error_w = pn.pane.Alert("", alert_type="danger", visible=False, **sw)
        self.notice_w = pn.pane.Alert("", alert_type="info", visible=False, **sw)
        self.table_w = pn.pane.DataFrame(s.table(), index=False, **sw)
        # a row of the table opened as a run: its front (and CV layer) on the plot, its trees in the tree view
        self.open_pick_w = pn.widgets.Select(label="Open a setting as a run", options={}, width=320)
        self.open_w = pn.widgets.Button(label="Open as run", color="primary", width=130, align="end", disabled=True)
        self.open_w.on_click(lambda e: self.open_pick_w.value is not None and s.open_setting(self.open_pick_w.value))
        self.fig = SweepFigure()
        self.fig_pane = pn.pane.Bokeh(self.fig.figure, **sw)
        self.run_w.on_click(lambda e: self.run())
        self.cancel_w.on_click(lambda e: self.session.cancel())
        s.param.watch(self._on_state, ["running", "progress", "rows", "error", "notice", "status"])
        controller.param.watch(self._on_state, ["data_version"])  # the caption names the data a sweep uses
        self._on_state()

    def __panel__(self):
        return pn.Column(
            pn.Row(self.solvers_w, self.disc_w, **{"sizing_mode": "stretch_width"}),
            pn.Row(
                pn.Column(pn.pane.Markdown("Max depths", margin=(0, 10)), self.depth_w),
                self.folds_w,
                self.time_w,
            ),
            self.caption,
            pn.Row(self.run_w, self.cancel_w),
            self.progress_w,
            self.status_w,
            self.error_w,
            self.notice_w,
            self.table_w,
            pn.Row(self.open_pick_w, self.open_w),
            self.fig_pane,
            sizing_mode="stretch_width",
        )

    # -- actions -------------------------------------------------------------------------------------
    def run(self) -> bool:
        """Start a sweep with the widgets' grid; polled from a periodic callback while it runs."""
        discs = [None if d == DEFAULT_DISC else d for d in self.disc_w.value]
        ok = self.session.start(
            self.solvers_w.value, discs, self.depth_w.value, int(self.folds_w.value), self.time_w.value
        )
        if ok:
            self._poller.start()  # no event loop (plain script): callers poll() themselves
        return ok

    def poll(self) -> bool:
        return self._poller.tick()

    def close(self) -> None:
        self._poller.stop()
        self.session.close()

    # -- display -------------------------------------------------------------------------------------
    def _on_state(self, *events) -> None:
        s = self.session
        ds = self.controller.dataset
        self.caption.object = (
            f"Cross-validates each setting on the training rows of **{self.controller.data_label()}** "
            f"on a local Dask cluster ({s.n_workers} workers, started on the first sweep)."
            if ds is not None
            else "Load a table first."
        )
        self.run_w.disabled = s.running
        self.cancel_w.disabled = not s.running
        p = s.progress
        self.progress_w.visible = s.running
        if p.get("total"):
            self.progress_w.value = int(100 * p.get("done", 0) / p["total"])
        else:
            self.progress_w.value = -1 if s.running else 0
        text = ""
        if s.running:
            bits = [str(p.get("phase", "running"))]
            if p.get("total"):
                bits.append(f"{p.get('done', 0)} of {p['total']} tasks")
            if "elapsed" in p:
                bits.append(f"{float(p['elapsed']):.1f} s")
            text = " · ".join(bits)
        elif s.status:
            n_err = sum(r["status"] == "error" for r in s.rows)
            text = f"Sweep {s.status}: {len(s.rows)} settings" + (
                f", {n_err} failed (see the message column)" if n_err else ""
            )
        if s.dashboard and text:
            text += f" · [Dask dashboard]({s.dashboard})"
        self.status_w.object = text
        self.error_w.object, self.error_w.visible = s.error, bool(s.error)
        self.notice_w.object, self.notice_w.visible = s.notice, bool(s.notice)
        if not events or any(e.name == "rows" for e in events):
            self.table_w.object = s.table()
            opened = {
                f"#{r['#']} {r['solver']} · {r['discretizer']} · depth {r['max depth']}": r["#"] - 1
                for r in sorted(s.rows, key=lambda r: r["#"])
                if r["status"] != "error" and s.fronts.get(r["#"] - 1) is not None
            }
            self.open_pick_w.options = opened
            self.open_w.disabled = not opened
            best = s.best()
            self._bokeh(lambda: self.fig.update(best))

    def _bokeh(self, fn) -> None:
        """Change the figure's models under the session's document lock (as the Explorer's ``_bokeh`` does)."""

        def run():
            try:
                fn()
            except Exception as exc:
                log.exception("display error in the sweep figure")
                self.session.error = f"display error in the sweep figure: {readable_error(exc)}"
            if self._doc is None:  # notebook: send the raw model changes (a no-op when not displayed)
                pn.io.push_notebook(self.fig_pane)

        if self._doc is not None:
            with set_curdoc(self._doc):
                pn.state.execute(run)
        else:
            run()
