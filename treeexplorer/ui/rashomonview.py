"""The Explorer's "Alternatives" view: the Rashomon set behind the selected point, in order, and its columns.

:class:`RashomonSession` is the headless part (testable without a browser): for a run and one of its trees it
enumerates, in a background :class:`~treeexplorer.jobs.Job` (progress, Cancel, the session's admission), the
``k`` best trees with at most that tree's number of splits over the run's tests and depth
(:func:`treeexplorer.rashomon.rashomon_prepared`); then lists them with their gap to the selected tree, the share
of trees testing each column, and re-filters by excluded / required columns without solving again.
:class:`RashomonView` is the small Panel Viewer over it.  Opening a tree of the set calls ``on_open(front, entry)``
(the Explorer adds the set as a run and selects that tree).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from treeexplorer.front import Front, FrontTree
from treeexplorer.jobs import Job
from treeexplorer.rashomon import feature_shares, filter_set, rashomon_prepared, tree_columns
from treeexplorer.ui.defaults import DEFAULT_TIME_LIMIT
from treeexplorer.ui.jobs import app_job, limit_error
from treeexplorer.ui.viewkit import POLL_MS, Poller

__all__ = ["RashomonSession", "RashomonView"]

DEFAULT_K = 100


class RashomonSession(param.Parameterized):
    """The set of one selected tree, computed in the background and filtered on demand.

    Parameters
    ----------
    prepared : callable
        Returns the session's :class:`treeexplorer.api.Prepared` data (the controller's ``prepared``).
    """

    k = param.Integer(default=DEFAULT_K, bounds=(1, 100_000), doc="Most trees in the set")
    exclude = param.List(default=[], doc="Columns no listed tree may test")
    require = param.List(default=[], doc="Columns every listed tree must test")
    status = param.String(default="")
    running = param.Boolean(default=False)
    version = param.Integer(default=0, doc="Bumped when the set or the filters change")

    def __init__(self, prepared: Callable, **params):
        super().__init__(**params)
        self._prepared = prepared
        self.job: Job | None = None
        self.front: Front | None = None
        self.point: FrontTree | None = None
        self.param.watch(lambda *_: self._bump(), ["exclude", "require"])

    def _bump(self):
        self.version += 1

    def start(self, run, entry: FrontTree, time_limit: float | None = DEFAULT_TIME_LIMIT) -> Job | None:
        """The ``k`` best trees with at most ``entry``'s splits over ``run``'s tests (None when refused)."""
        if self.running:
            self.status = "alternatives are already being computed: cancel them or wait"
            return None
        if (why := limit_error(time_limit)) is not None:
            self.status = f"alternatives not computed: {why}"
            return None
        settings = run.settings
        if run.front.discretizer == "raw" or (run.front.search_space or {}).get("kind") != "tests":
            self.status = "alternatives need a run over binary tests (murtree, branches or sat with a discretizer)"
            return None
        depth = int(settings.params.get("max_depth") or run.front.params.get("max_depth") or entry.metrics["depth"])
        depth = max(depth, int(entry.metrics["depth"]))
        splits = int(entry.metrics["splits"])
        prep, k = self._prepared(), int(self.k)

        def work(control):
            return rashomon_prepared(
                prep,
                max_depth=depth,
                splits=splits,
                k=k,
                discretizer=run.front.discretizer,
                n_bins=(run.front.search_space or {}).get("n_tests")
                if run.front.discretizer == "mid"
                else settings.n_bins,
                control=control,
            )

        self.point = entry
        self.job = app_job(work, time_limit, label=f"alternatives ({splits} splits)", session=(id(self), "rashomon"))
        self.running = True
        self.status = f"finding the {k} best trees with at most {splits} splits, depth <= {depth} ..."
        self.job.start()
        return self.job

    def cancel(self) -> None:
        """Stop the enumeration (the trees found so far are kept: the first of the order)."""
        if self.running and self.job is not None:
            self.job.cancel()

    def poll(self) -> bool:
        """Apply the job's events (UI thread); True while it still runs."""
        events = {"progress": self._on_progress, "done": self._on_done}
        if self.job is not None and not self.job.drain(**events, failed=self._failed, cancelled=self._failed):
            self.running = False
            self._bump()
        return self.running

    def _on_progress(self, info: dict) -> None:
        if "trees" in info and info.get("phase") == "rashomon":
            self.status = f"{info['trees']} trees so far (errors up to {info.get('errors')})"

    def _on_done(self, front: Front) -> None:
        self.front = front
        info = front.stats.get("rashomon", {})
        how = "all within the bounds" if info.get("complete") else f"the {len(front)} best"
        stop = "" if front.status == "done" else f" ({front.status}: the first trees of the order)"
        self.status = f"{how}: {len(front)} trees{stop}"

    def _failed(self, message: str) -> None:
        self.status = f"alternatives not computed: {message}"

    # -- what the view shows -------------------------------------------------------------------------
    def columns(self) -> list[str]:
        """Names of the columns some tree of the set tests (for the exclude / require choices)."""
        return [s["feature"] for s in feature_shares(self.front)] if self.front else []

    def trees(self) -> list[FrontTree]:
        if self.front is None:
            return []
        return filter_set(self.front, self.exclude, self.require)

    def table(self) -> pd.DataFrame:
        """One row per listed tree: rank, errors, gap to the selected tree, splits, columns."""
        base = self.point.metrics["train_errors"] if self.point is not None else 0
        rows = [
            {
                "rank": t.id,
                "errors": t.info["errors"],
                "gap": t.info["errors"] - base,
                "splits": t.metrics["splits"],
                "features": ", ".join(self.front.schema.columns[j].name for j in tree_columns(t.tree)),
            }
            for t in self.trees()
        ]
        return pd.DataFrame(rows, columns=["rank", "errors", "gap", "splits", "features"])

    def shares(self) -> list[dict]:
        """Share of the listed trees testing each column, and at the root."""
        trees = self.trees()
        if not trees:
            return []
        sub = Front(
            trees,
            self.front.solver,
            self.front.discretizer,
            self.front.objective,
            self.front.status,
            0.0,
            self.front.n_train,
            self.front.n_test,
            self.front.dataset,
            self.front.schema,
        )
        return feature_shares(sub)


class RashomonView(pn.viewable.Viewer):
    """ "Alternatives (k)" for the selected point: the set listed, feature-share bars, filters, open a tree."""

    def __init__(
        self,
        session: RashomonSession,
        on_open: Callable[[Front, FrontTree], None] | None = None,
        periodic: Callable | None = None,
        **params,
    ):
        super().__init__(**params)
        self.session = session
        self.on_open = on_open
        # the session's periodic callbacks run one at a time (ViewContext.periodic); Panel's own by default
        self._poller = Poller(session.poll, POLL_MS, periodic)
        self.k_input = pn.widgets.IntInput(label="Alternatives (k)", value=session.k, start=1, end=100_000, width=140)
        self.cancel_button = pn.widgets.Button(label="Cancel", color="warning", width=80, disabled=True)
        self.exclude = pn.widgets.MultiChoice(label="Exclude columns", options=[], sizing_mode="stretch_width")
        self.require = pn.widgets.MultiChoice(label="Require columns", options=[], sizing_mode="stretch_width")
        self.open_rank = pn.widgets.IntInput(label="Open tree (rank)", value=0, start=0, width=140)
        self.open_button = pn.widgets.Button(label="Open in tree view", width=140, disabled=True)
        self.status = pn.pane.Str(session.status)
        self.table = pn.pane.DataFrame(session.table(), index=False, max_rows=200, sizing_mode="stretch_width")
        self.source = ColumnDataSource({"feature": [], "share": [], "root": []})
        fig = figure(height=220, y_range=[], x_range=(0, 1), toolbar_location=None, sizing_mode="stretch_width")
        fig.hbar(y="feature", right="share", height=0.7, source=self.source, color="#4c78a8", legend_label="any node")
        fig.hbar(y="feature", right="root", height=0.35, source=self.source, color="#f58518", legend_label="root")
        fig.xaxis.axis_label = "share of the listed trees"
        self.fig = fig
        self.k_input.param.watch(lambda e: setattr(session, "k", int(e.new)), "value")
        self.cancel_button.on_click(lambda *_: session.cancel())
        self.exclude.param.watch(lambda e: setattr(session, "exclude", list(e.new)), "value")
        self.require.param.watch(lambda e: setattr(session, "require", list(e.new)), "value")
        self.open_button.on_click(lambda *_: self.open(self.open_rank.value))
        session.param.watch(lambda *_: self.refresh(), ["version", "status", "running"])

    def start(self, run, entry, time_limit: float | None = DEFAULT_TIME_LIMIT):
        """Compute the set for ``entry`` of ``run`` and poll it until done."""
        job = self.session.start(run, entry, time_limit)
        if job is not None and pn.state.curdoc is not None:
            self._poller.start()
        self.refresh()
        return job

    def open(self, rank: int) -> None:
        s = self.session
        if s.front is None or self.on_open is None:
            return
        entry = next((t for t in s.front.trees if t.id == int(rank)), None)
        if entry is not None:
            self.on_open(s.front, entry)

    def refresh(self) -> None:
        s = self.session
        self.status.object = s.status
        self.cancel_button.disabled = not s.running
        self.open_button.disabled = s.front is None or self.on_open is None
        cols = s.columns()
        self.exclude.options = cols
        self.require.options = cols
        self.table.object = s.table()
        shares = s.shares()
        names = [r["feature"] for r in shares][::-1]
        self.fig.y_range.factors = names
        self.source.data = {
            "feature": names,
            "share": [r["share"] for r in shares][::-1],
            "root": [r["root_share"] for r in shares][::-1],
        }

    def __panel__(self):
        return pn.Column(
            pn.Row(self.k_input, self.cancel_button),
            self.status,
            pn.Row(self.exclude, self.require),
            self.table,
            self.fig,
            pn.Row(self.open_rank, self.open_button),
            sizing_mode="stretch_width",
        )
