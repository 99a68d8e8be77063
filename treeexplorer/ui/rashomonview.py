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

import html
from collections.abc import Callable

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, FixedTicker, Legend, NumeralTickFormatter
from bokeh.plotting import figure

from treeexplorer.export import plural
from treeexplorer.front import Front, FrontTree
from treeexplorer.jobs import Job
from treeexplorer.rashomon import feature_shares, filter_set, rashomon_prepared, tree_columns
from treeexplorer.render.bokehview import DIFF_COLOR
from treeexplorer.textsafe import html_text, md
from treeexplorer.ui.comparediagram import CompareDiagram, tree_differences
from treeexplorer.ui.defaults import DEFAULT_TIME_LIMIT
from treeexplorer.ui.jobs import app_job, limit_error
from treeexplorer.ui.progress import describe
from treeexplorer.ui.treeview import locked
from treeexplorer.ui.viewkit import POLL_MS, Poller
from treeexplorer.ui.warm import prefer

__all__ = ["RashomonSession", "RashomonView", "CloudLink", "set_label"]

DEFAULT_K = 100
SHOWN_ROWS = 500  # rows the card's table and select hold: a set of 100,000 trees is listed from its start


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
    fraction = param.Number(default=None, allow_None=True, doc="How far the running set is (None: not countable)")
    version = param.Integer(default=0, doc="Bumped when the set or the filters change")

    def __init__(self, prepared: Callable, **params):
        super().__init__(**params)
        self._prepared = prepared
        self.job: Job | None = None
        self._bounds = (0, 0)  # the running set's most splits and depth
        self._found = 0  # its trees so far
        self.front: Front | None = None
        self.point: FrontTree | None = None
        self.run_id: int | None = None  # the run of the point the set is behind
        self._memo: dict = {}  # what the view reads of the set, per filter: computed once, not per refresh
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
                class_weight=settings.class_weight,  # the run's objective: the set is ranked by its cost
            )

        self.point, self.run_id, self._bounds, self._found = entry, run.id, (splits, depth), 0
        self._memo = {}
        self.job = app_job(work, time_limit, label=f"alternatives ({splits} splits)", session=(id(self), "rashomon"))
        self.running = True
        self.status = f"finding the {k} best trees with at most {splits} splits, depth <= {depth} ..."
        self.job.start()
        return self.job

    def snapshot(self) -> dict | None:
        """The set and its filters as they are (the table is being switched: :class:`~treeexplorer.ui.state.
        TableStates`); a set still being computed is cancelled, as it belongs to the table being left."""
        if self.running and self.job is not None:
            self.job.cancel()
            self.job, self.running = None, False  # its late events are not applied to the next table's card
        if self.front is None and not self.exclude and not self.require:
            return None
        keys = ("front", "point", "run_id", "status")
        return {**{k: getattr(self, k) for k in keys}, "exclude": list(self.exclude), "require": list(self.require)}

    def restore(self, saved: dict | None) -> None:
        """Show a set :meth:`snapshot` took (None: no set, the card's empty state)."""
        saved = saved or {}
        with param.parameterized.batch_call_watchers(self):
            self.front, self.point, self.run_id = saved.get("front"), saved.get("point"), saved.get("run_id")
            self._memo, self.fraction, self._found = {}, None, 0
            self.status = saved.get("status", "")
            self.param.update(exclude=saved.get("exclude", []), require=saved.get("require", []))
            self._bump()

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
        if info.get("phase") == "rashomon" and ("errors" in info or "cost" in info):  # a batch of trees, in order
            self._found = int(info["trees"])
            self.fraction = min(1.0, self._found / max(int(self.k), 1))
            upto = f"errors up to {info['errors']}" if "errors" in info else f"cost up to {_num(info['cost'])}"
            self.status = f"{self._found} of at most {self.k} trees so far ({upto})"
        elif info.get("phase") == "rashomon":  # the search's own counters between two batches
            found = f"{self._found} of at most {self.k} trees so far; " if self._found else ""
            self.status = f"{found}searching: {int(info.get('streams', 0)):,} subproblems opened"
        elif info.get("phase") == "compiling":  # a cold cache: the kernels compile before the clock starts
            self.status, self.fraction = describe(info)

    def _on_done(self, front: Front) -> None:
        self.front, self.fraction, self._memo = front, None, {}
        info = front.stats.get("rashomon", {})
        splits, depth = self._bounds
        stop = "" if front.status == "done" else f" ({front.status}: the first trees of the order)"
        if not len(front):
            self.status = f"no tree found{stop}"
            return
        how = "every tree" if info.get("complete") else f"the {len(front)} best trees"
        values = sorted({self._value(t.info) for t in front.trees})
        base = self._point_value() if self.point is not None else values[0]
        if self.weighted():  # ranked by the run's weighted cost: the span and the selected tree's in cost
            span = f"training cost {_num(values[0])} to {_num(values[-1])}" if len(values) > 1 else None
            span = span or f"training cost {_num(values[0])}"
            said = f"{span} (the selected tree: {_num(base)})"
        else:
            span = f"{values[0]} to {values[-1]}" if len(values) > 1 else f"{values[0]}"
            said = f"{span} training errors (the selected tree: {base})"
        self.status = f"{len(front)} trees: {how} with at most {plural(splits, 'split')}, depth ≤ {depth}, {said}{stop}"

    def weighted(self) -> bool:
        """True when the set is ranked by a weighted training cost (weights or costs): its trees carry ``cost``."""
        return self.front is not None and bool(self.front.trees) and "cost" in self.front.trees[0].info

    def _value(self, info: dict):
        """What the set ranks a tree by: its training cost when weighted, else its training errors."""
        return info["cost"] if "cost" in info else info["errors"]

    def _point_value(self):
        """The selected tree's value in the set's terms (``train_cost`` when weighted, else ``train_errors``)."""
        return self.point.metrics["train_cost" if self.weighted() else "train_errors"]

    def _failed(self, message: str) -> None:
        self.fraction = None
        self.status = f"alternatives not computed: {message}"

    # -- what the view shows -------------------------------------------------------------------------
    def _cached(self, key, make):
        """``make()`` once per set and filter (the card refreshes on every status change; a set may hold
        100,000 trees)."""
        key = (key, tuple(self.exclude), tuple(self.require))
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def label(self) -> str:
        """The set's name as a run of the plot (:func:`set_label`)."""
        return set_label(self.point)

    def columns(self) -> list[str]:
        """Names of the columns some tree of the set tests (for the exclude / require choices)."""
        if not self.front:
            return []
        return self._cached("columns", lambda: [s["feature"] for s in feature_shares(self.front)])

    def trees(self) -> list[FrontTree]:
        if self.front is None:
            return []
        return self._cached("trees", lambda: filter_set(self.front, self.exclude, self.require))

    def table(self, limit: int | None = None) -> pd.DataFrame:
        """One row per listed tree (the first ``limit`` of them): rank, errors, gap to the selected tree, splits,
        columns."""
        return self._cached(("table", limit), lambda: self._table(limit))

    def _table(self, limit: int | None) -> pd.DataFrame:
        base = self._point_value() if self.point is not None else 0
        what = "cost" if self.weighted() else "errors"  # weighted: the training cost, and the gap in it
        rows = [
            {
                "rank": t.id,
                what: t.info[what],
                "gap": t.info[what] - base,
                "splits": t.metrics["splits"],
                "features": ", ".join(self.front.schema.columns[j].name for j in tree_columns(t.tree)),
            }
            for t in self.trees()[:limit]
        ]
        return pd.DataFrame(rows, columns=["rank", what, "gap", "splits", "features"])

    def filter_text(self) -> str:
        """How many trees of the set the exclude / require filters keep, and what none kept means."""
        if self.front is None or not (self.exclude or self.require):
            return ""
        n, kept = len(self.front), len(self.trees())
        what = " and ".join(
            part
            for part in (
                f"test none of {', '.join(self.exclude)}" if self.exclude else "",
                f"test all of {', '.join(self.require)}" if self.require else "",
            )
            if part
        )
        if kept:
            best = self.trees()[0]
            gap = self._value(best.info) - self._value(self.front.trees[0].info)
            return f"{kept} of the {n} trees {what}; the best of them, #{best.id}, has {_gap_words(gap, '#0')}."
        last = self._value(self.front.trees[-1].info)
        least = f"a training cost of at least {_num(last)}" if self.weighted() else f"at least {last} training errors"
        return (
            f"None of the {n} trees {what}: such a tree has {least} "
            "(raise Alternatives (k) and find them again to see it)."
        )

    def same_as_point(self) -> set[int]:
        """Ranks of the set's trees identical to the selected tree (the same test at every node)."""
        if self.front is None or self.point is None:
            return set()
        point = self.point

        def same():  # only a tree with the point's errors and splits can be it: the rest are not compared
            errors, splits = point.metrics["train_errors"], point.metrics["splits"]
            return {
                t.id
                for t in self.front.trees
                if t.info["errors"] == errors
                and t.metrics["splits"] == splits
                and tree_differences(t.tree, point.tree) == (set(), set())
            }

        if "same" not in self._memo:  # the memo is emptied with a new point or set
            self._memo["same"] = same()
        return self._memo["same"]

    def difference_text(self, entry: FrontTree) -> str:
        """What the alternative ``entry`` changes against the selected tree: errors and columns tested."""
        names = [c.name for c in self.front.schema.columns]
        mine, theirs = set(tree_columns(self.point.tree)), set(tree_columns(entry.tree))
        gap = self._value(entry.info) - self._point_value()
        if entry.id in self.same_as_point():
            return f"Alternative #{entry.id} is the selected tree itself."
        parts = [f"Alternative #{entry.id}: {_gap_words(gap, 'the selected tree', 'cost' in entry.info)}"]
        if theirs - mine:
            parts.append("tests " + ", ".join(names[j] for j in sorted(theirs - mine)))
        if mine - theirs:
            parts.append("does without " + ", ".join(names[j] for j in sorted(mine - theirs)))
        if theirs == mine:
            parts.append("same columns, other tests or shape")
        return "; ".join(parts) + "."

    def shares(self) -> list[dict]:
        """Share of the listed trees testing each column, and at the root."""
        return self._cached("shares", self._shares)

    def _shares(self) -> list[dict]:
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


def set_label(point: FrontTree | None) -> str:
    """What the run list calls a set opened as a run: ``alternatives to tree 4``."""
    return f"alternatives to tree {point.id}" if point is not None else "alternatives"


SHARE_COLORS = ("#4c78a8", "#f58518")  # any node, the root: the app's categorical pair
TABLE_HEIGHT = 260  # px: about 8 rows in view, the rest scrolled inside the card
# the columns' names read as a list, from the left; the numbers stay right-aligned
TABLE_CSS = """
table { font-size: 0.9em; }
th:last-child, td:last-child { text-align: left !important; padding-left: 24px; }
thead th { position: sticky; top: 0; background: var(--panel-background-color, white); }
"""


class RashomonView(pn.viewable.Viewer):
    """ "Alternatives (k)" for the selected point: the set listed, feature-share bars, filters, one alternative
    drawn beside the selected tree (differences outlined) and opened in the tree view on demand."""

    def __init__(
        self,
        session: RashomonSession,
        on_open: Callable[[Front, FrontTree], None] | None = None,
        periodic: Callable | None = None,
        bokeh: Callable | None = None,
        **params,
    ):
        super().__init__(**params)
        self.session = session
        self.on_open = on_open
        self._locked = locked(bokeh)
        prefer("rashomon")  # the card is open: its kernels are the next the background warm-up loads
        # the session's periodic callbacks run one at a time (ViewContext.periodic); Panel's own by default
        self._poller = Poller(session.poll, POLL_MS, periodic)
        self.k_input = pn.widgets.IntInput(
            label="Alternatives (k)", value=session.k, start=1, end=100_000, width=140, description=_K_HELP
        )
        self.cancel_button = pn.widgets.Button(label="Cancel", color="warning", width=80, disabled=True)
        self.progress = pn.indicators.Progress(value=-1, max=100, visible=False, bar_color="primary", **_SW)
        self.exclude = pn.widgets.MultiChoice(label="Exclude columns", options=[], **_SW)
        self.require = pn.widgets.MultiChoice(label="Require columns", options=[], **_SW)
        self.status = pn.pane.HTML("", css_classes=["rashomon-status"], styles={"font-size": "0.95em"}, **_SW)
        self.table = pn.pane.DataFrame(
            _shown(session.table()), index=False, max_rows=10_000, stylesheets=[TABLE_CSS], **_SW
        )
        self.source = ColumnDataSource({"feature": [], "share": [], "root": [], "label": []})
        fig = figure(height=120, y_range=[], x_range=(0, 1.3), toolbar_location=None, title=_SHARES_TITLE, **_SW)
        share = fig.hbar(y="feature", right="share", height=0.7, source=self.source, color=SHARE_COLORS[0])
        root = fig.hbar(y="feature", right="root", height=0.35, source=self.source, color=SHARE_COLORS[1])
        fig.text(
            x="share",
            y="feature",
            text="label",
            source=self.source,
            x_offset=4,
            text_baseline="middle",
            text_font_size="11px",
        )
        fig.xaxis.axis_label = "share of the listed trees"
        fig.xaxis.axis_label_text_font_size = "12px"
        fig.title.text_font_size = "13px"
        fig.xaxis.formatter = NumeralTickFormatter(format="0%")
        fig.xaxis.ticker = FixedTicker(ticks=[0, 0.25, 0.5, 0.75, 1])  # the range goes on for the labels
        legend = Legend(
            items=[("tested at any node", [share]), ("at the root", [root])],
            orientation="horizontal",
            border_line_color=None,
            label_text_font_size="12px",
            margin=0,
            padding=2,
        )
        fig.add_layout(legend, "above")
        fig.ygrid.grid_line_color = None
        self.fig = fig
        self.pick = pn.widgets.Select(label="Alternative shown beside the selected tree", options={}, **_SW)
        self.open_button = pn.widgets.Button(
            label="Open in tree view", width=150, disabled=True, margin=(24, 10, 5, 10)
        )
        self.compare_note = pn.pane.Markdown("", **_SW)
        # the set's trees on the Pareto plot (a CloudLink connects it to the session's controller)
        self.cloud_w = pn.widgets.Toggle(label=CLOUD_SHOW, value=False, width=190, disabled=True, margin=(5, 10))
        self.filter_note = pn.pane.HTML("", css_classes=["rashomon-filter"], visible=False, **_SW)
        self.compare = CompareDiagram(run=bokeh)
        self._set_parts = (
            pn.Row(self.exclude, self.require, **_SW),
            self.filter_note,
            pn.Row(self.cloud_w, pn.widgets.TooltipIcon(value=_CLOUD_HELP, margin=(12, 0, 0, 0))),
            pn.Column(self.table, height=TABLE_HEIGHT, scroll=True, **_SW),
            pn.pane.Bokeh(self.fig, **_SW),
            pn.Row(self.pick, self.open_button, **_SW),
        )
        self.k_input.param.watch(lambda e: setattr(session, "k", int(e.new)), "value")
        self.cancel_button.on_click(lambda *_: session.cancel())
        self.exclude.param.watch(lambda e: setattr(session, "exclude", list(e.new)), "value")
        self.require.param.watch(lambda e: setattr(session, "require", list(e.new)), "value")
        self.open_button.on_click(lambda *_: self.open(self.pick.value))
        self.pick.param.watch(lambda *_: self._show_pick(), "value")
        # a running set's progress only rewrites its status line: the table, bars and comparison follow the set
        # (a fast search queues many reports, and redrawing a 100,000-tree card for each delayed a cancel)
        session.param.watch(lambda *_: self._refresh_status(), ["status", "running", "fraction"])
        session.param.watch(lambda *_: self.refresh(), ["version"])
        self.refresh()

    def restore(self, saved: dict | None) -> None:
        """Show a saved set (:meth:`RashomonSession.restore`), its filters in the card's selects."""
        self.session.restore(saved)
        self.exclude.param.update(options=self.session.columns(), value=list(self.session.exclude))
        self.require.param.update(options=self.session.columns(), value=list(self.session.require))
        self.refresh()

    def start(self, run, entry, time_limit: float | None = DEFAULT_TIME_LIMIT):
        """Compute the set for ``entry`` of ``run`` and poll it until done."""
        job = self.session.start(run, entry, time_limit)
        if job is not None and pn.state.curdoc is not None:
            self._poller.start()
        self.refresh()
        return job

    def open(self, rank: int | None) -> None:
        """Open tree ``rank`` of the set in the tree view (the Explorer adds the set as a run)."""
        s = self.session
        if s.front is None or self.on_open is None or rank is None:
            return
        entry = next((t for t in s.front.trees if t.id == int(rank)), None)
        if entry is not None:
            self.on_open(s.front, entry)

    def _refresh_status(self) -> None:
        s = self.session
        listed = len(s.trees())
        more = f" The table lists the first {SHOWN_ROWS:,} of the {listed:,} trees." if listed > SHOWN_ROWS else ""
        self.status.object = html.escape(s.status + more)
        self.cancel_button.disabled = not s.running
        self.progress.visible = s.running
        self.progress.value = -1 if s.fraction is None else int(round(100 * s.fraction))  # -1: activity only

    def refresh(self) -> None:
        s = self.session
        self._refresh_status()
        self.filter_note.object = html.escape(s.filter_text())
        cols = s.columns()
        # Choices.js draws MultiChoice labels as HTML: column names from the data are escaped to stay text
        cols = {html_text(name): name for name in cols}
        self.exclude.options = cols
        self.require.options = cols
        table = s.table(SHOWN_ROWS)
        self.table.object = _shown(table, s.same_as_point())
        shares = s.shares()
        names = [r["feature"] for r in shares][::-1]
        data = {
            "feature": names,
            "share": [r["share"] for r in shares][::-1],
            "root": [r["root_share"] for r in shares][::-1],
            "label": [f"{r['share']:.0%} ({r['root_share']:.0%} root)" for r in shares][::-1],
        }

        def bars():  # raw Bokeh models: changed under the session's document lock (a click's callback has none)
            self.fig.y_range.factors = names
            self.fig.height = 110 + 32 * max(len(names), 1)  # every column's bar readable, however many
            self.source.data = data

        self._locked(bars)
        options = {_pick_label(row): int(row["rank"]) for row in table.to_dict("records")}
        keep = self.pick.value if self.pick.value in options.values() else None
        self.pick.options = options
        if keep is None and options:  # the best listed tree that is not the selected one, else the first
            same = s.same_as_point()
            keep = next((r for r in options.values() if r not in same), next(iter(options.values())))
        self.pick.value = keep
        self.open_button.disabled = s.front is None or self.on_open is None or keep is None
        self.cloud_w.disabled = not s.trees()
        for part in self._set_parts:  # nothing to show before a set: no empty table, chart or select
            part.visible = s.front is not None and (part is not self.filter_note or bool(self.filter_note.object))
        self._show_pick()

    def _show_pick(self) -> None:
        s, rank = self.session, self.pick.value
        entry = None if s.front is None or rank is None else next((t for t in s.front.trees if t.id == rank), None)
        if entry is None or s.point is None:
            self.compare.update(None, None)
            self.compare_note.object = ""
            return
        self.compare.update(s.point, entry)
        point = s.point
        weighted = s.weighted()  # weighted: each tree's training cost beside its errors
        mine = f", cost {_num(point.metrics['train_cost'])}" if weighted else ""
        theirs = f", cost {_num(entry.info['cost'])}" if weighted else ""
        self.compare.left_title.object = (
            f"**Selected tree** ({plural(point.metrics['splits'], 'split')}, "
            f"{plural(point.metrics['train_errors'], 'error')}{mine})"
        )
        self.compare.right_title.object = (
            f"**Alternative #{entry.id}** ({plural(entry.metrics['splits'], 'split')}, "
            f"{plural(entry.info['errors'], 'error')}{theirs})"
        )
        self.compare_note.object = md(s.difference_text(entry))
        da, db = self.compare.differences  # the diagram's note in the card's words (ranks are not tree ids)
        self.compare.note.object = (
            f"<span style='font-size:0.85em'><span style='color:{DIFF_COLOR};font-weight:bold'>▢ outlined</span>: "
            f"a split or leaf the other tree does not have at the same place ({len(da)} in the selected tree, "
            f"{len(db)} in alternative #{entry.id})</span>"
        )

    def __panel__(self):
        return pn.Column(
            pn.Row(self.k_input, self.cancel_button),
            self.progress,
            self.status,
            *self._set_parts,
            self.compare_note,
            self.compare,
            css_classes=["enter-no-run"],  # Enter in k sets k: it does not run the sidebar's solver
            **_SW,
        )


CLOUD_SHOW, CLOUD_HIDE = "Show on the plot", "Hide from the plot"


class CloudLink:
    """The card's "Show on the plot" toggle and the controller's cloud (:meth:`Controller.show_cloud`), kept
    in step both ways.

    On: the listed trees (the filters apply) are drawn for the run of the set's point; a filter change redraws
    them.  Off when toggled off, when the set is found again, when it has no tree left, and when the
    controller takes the cloud away (the selection moved to another run).

    Parameters
    ----------
    view : RashomonView
    controller : Controller
    """

    def __init__(self, view: RashomonView, controller):
        self.view, self.session, self.controller = view, view.session, controller
        self._quiet = False
        view.cloud_w.param.watch(lambda e: self._toggled(e.new), "value")
        self.session.param.watch(lambda e: self._set_changed(e), ["version", "running"])
        controller.param.watch(lambda e: self._cloud_changed(e.new), "cloud")

    def _set(self, on: bool) -> None:
        self._quiet = True
        try:
            self.view.cloud_w.param.update(value=on, label=CLOUD_HIDE if on else CLOUD_SHOW)
        finally:
            self._quiet = False

    def _toggled(self, on: bool) -> None:
        if self._quiet:
            return
        self.view.cloud_w.label = CLOUD_HIDE if on else CLOUD_SHOW
        if on:
            self.show()
        else:
            self.controller.hide_cloud()

    def show(self) -> bool:
        """Draw the listed trees on the plot; False (and the toggle off, the status saying why) when not."""
        s = self.session
        trees = s.trees()
        cloud = None
        if s.front is not None and trees and s.run_id is not None:
            cloud = self.controller.show_cloud(s.run_id, s.front, trees, s.label())
        if cloud is None:
            self._set(False)
            if s.front is not None and trees:
                s.status = f"select a tree of run #{s.run_id} (or of the set) to draw its set on the plot"
            return False
        self._set(True)
        return True

    def _set_changed(self, event) -> None:
        if not self.view.cloud_w.value:
            return
        if event.name == "running" and event.new:  # found again: the old set's cloud goes
            self._set(False)
            self.controller.hide_cloud()
        elif event.name == "version":
            if self.session.trees():
                self.show()  # the filters changed: the cloud shows the trees they keep
            else:
                self._set(False)
                self.controller.hide_cloud()

    def _cloud_changed(self, cloud) -> None:
        if cloud is None and self.view.cloud_w.value:
            self._set(False)


_SW = {"sizing_mode": "stretch_width"}
_CLOUD_HELP = (
    "Draw the listed trees on the Pareto plot, faintly, at their complexity and accuracy: one circle per place, "
    "bigger where more trees share it. A click on one opens its best tree in the tree view."
)
_K_HELP = (
    "Most trees listed: the best ones with at most the selected tree's splits, in order of training errors "
    "(of training cost with weights or costs)."
)
_SHARES_TITLE = "Columns the listed trees test (share of the trees; at their root)"


def _num(x) -> str:
    """A weighted cost as the card says it: 4 significant digits (``12.5``, ``0.3333``)."""
    return f"{x:.4g}"


def _same(gap) -> bool:
    """A cost gap that is a float's rounding of 0 (costs are sums of float64 products, in other orders)."""
    return abs(gap) <= 1e-9


def _gap_words(gap, than: str, cost: bool | None = None) -> str:
    """``gap`` (errors, or a float cost when ``cost`` or the gap is a float) said against ``than``: "as many
    training errors as #0", "3 training errors more than", "0.25 more training cost than"."""
    if cost or (cost is None and isinstance(gap, float)):
        if _same(gap):
            return f"the same training cost as {than}"
        return f"{_num(abs(gap))} {'more' if gap > 0 else 'less'} training cost than {than}"
    if gap == 0:
        return f"as many training errors as {than}"
    return f"{plural(abs(gap), 'training error')} {'more' if gap > 0 else 'fewer'} than {than}"


def _shown(table: pd.DataFrame, same: set[int] | frozenset = frozenset()) -> pd.DataFrame:
    """The session's table in the card's words: the gap said against the selected tree, which one it is."""
    out = table.copy()
    fmt = "{:+.4g}" if "cost" in table.columns else "{:+d}"  # a weighted set's gap is in cost
    out["gap"] = [
        "the selected tree" if rank in same else fmt.format(gap) for rank, gap in zip(table["rank"], table["gap"])
    ]
    names = {"rank": "#", "errors": "train errors", "cost": "train cost", "gap": "vs selected"}
    return out.rename(columns={**names, "features": "columns tested"})


def _pick_label(row) -> str:
    if "cost" in row:
        return f"#{row['rank']}: cost {_num(row['cost'])} ({row['gap']:+.4g}), {row['features']}"
    return f"#{row['rank']}: {plural(int(row['errors']), 'error')} ({int(row['gap']):+d}), {row['features']}"
