"""The Explorer's Pareto front card: the plot of every run's front, the exact front (gapview) and the run list."""

from __future__ import annotations

import panel as pn

from treeexplorer.claims import optimality_text
from treeexplorer.textsafe import md
from treeexplorer.ui.controller import dominance
from treeexplorer.ui.gapview import reference_curve
from treeexplorer.ui.paretofig import ParetoFigure
from treeexplorer.ui.runlist import RunList
from treeexplorer.ui.viewkit import POLL_MS, Poller, SessionViewer, ViewContext, safe
from treeexplorer.ui.views import X_MEASURES

__all__ = ["FrontPanel", "AXIS_HELP"]

AXIS_HELP = (
    "How a tree's complexity is counted on the x axis. Splits: its tests (internal nodes). Leaves: splits + 1 "
    "for a binary tree. Depth: the longest path from the root. Expected tests per sample: how many tests a row "
    "goes through on average (the training rows' mean path length), DPDT's trade-off measure."
)

# The vertical axis that shows each score a run can optimise (treeexplorer.metrics.SCORE_METRICS)
_SCORE_AXES = {"accuracy": "accuracy", "balanced_accuracy": "balanced", "cost": "cost"}


class FrontPanel(SessionViewer):
    """The "Pareto front" card: complexity axis, held-out points, the plot, the exact front and the runs.

    A click on a point selects its tree in the controller.
    """

    def __init__(self, ctx: ViewContext, **params):
        super().__init__(ctx, **params)
        c = ctx.controller
        self._exact_poller = Poller(c.exact.poll, POLL_MS * 2, ctx.periodic)
        self.x_w = pn.widgets.RadioButtonGroup(
            options={v: k for k, v in X_MEASURES.items()}, value="splits", color="primary", variant="outline", width=440
        )
        self.show_test_w = pn.widgets.Checkbox(label="held-out points", value=True, align="center", width=130)
        # the y axis: accuracy framed around the trees with a split (one click for 0-1), or errors above the best
        self.y_w = pn.widgets.RadioButtonGroup(
            options={
                "Accuracy": "accuracy",
                "Balanced accuracy": "balanced",
                "Cost": "cost",
                "Errors above the best": "excess",
            },
            value="accuracy",
            description="Errors above the best: each tree's training errors minus the fewest of any shown tree of "
            "its kind (binary or multiway) with at most its splits",
            color="primary",
            variant="outline",
            width=470,
        )
        self.whole_w = pn.widgets.Checkbox(label="whole accuracy range", value=False, align="center", width=180)
        self.frame_note = pn.pane.HTML("", sizing_mode="stretch_width", margin=(0, 10))
        self.pareto = ParetoFigure(on_select=self._on_point, on_change=ctx.push)
        self.pareto.on_cloud = self._on_cloud_point
        self._placeholder = ""  # the text shown in the empty plot (show_placeholder)
        c.param.watch(lambda e: self.show_cloud(), "cloud")
        self.plot_pane = pn.pane.Bokeh(self.pareto.figure, sizing_mode="stretch_width", min_height=380)
        ctx.bokeh_panes.append(self.plot_pane)
        self.data_caption = pn.pane.Markdown("", styles={"font-size": "0.9em", "opacity": "0.9"}, margin=(0, 10))
        self.run_list = RunList(ctx, self.pareto)  # the plot's legend: runs, their CV layers, the exact line
        self.runs_box, self.clear_w = self.run_list.runs_box, self.run_list.clear_w
        self.legend_note = pn.pane.HTML("", sizing_mode="stretch_width")
        # the exact front (gapview): its state, and the button offered when it is not computed automatically
        self.exact_status_w = pn.pane.Markdown(
            "",
            styles={"font-size": "0.85em", "opacity": "0.9"},
            margin=(0, 10),
            min_width=280,
            sizing_mode="stretch_width",
        )
        self.exact_time_w = pn.widgets.FloatInput(
            label="Exact time limit (s)", value=60.0, start=1, end=86400, step=10, width=150, visible=False
        )
        self.exact_btn = pn.widgets.Button(label="Compute exact front", color="primary", visible=False, width=230)
        self.exact_stop_w = pn.widgets.Button(label="Stop exact front", color="warning", visible=False, width=150)
        self.exact_btn.on_click(lambda e: self._start_exact())
        self.exact_stop_w.on_click(lambda e: c.exact.cancel())
        self.x_w.param.watch(self.redraw, "value")
        self.show_test_w.param.watch(self.redraw, "value")
        self.y_w.param.watch(self._on_y, "value")
        self._y_chosen = False  # the user picked the vertical axis: a weighted run no longer changes it
        self._y_runs: set = set()  # runs whose objective already chose the axis
        self.whole_w.param.watch(self.redraw, "value")
        # the control rows wrap (FlexBox) rather than scroll: the Explorer fits an 800 px notebook output
        wrap = {"flex_wrap": "wrap", "align_items": "center", "sizing_mode": "stretch_width"}
        self._layout = pn.Card(
            pn.FlexBox(
                pn.pane.Markdown("**Complexity axis**", margin=(8, 0, 8, 5), width=118),
                pn.widgets.TooltipIcon(value=AXIS_HELP, margin=(14, 0, 0, 0), width=20),
                self.x_w,
                self.show_test_w,
                **wrap,
            ),
            pn.FlexBox(
                pn.pane.Markdown("**Vertical axis**", margin=(8, 0, 8, 5), width=118),
                self.y_w,
                self.whole_w,
                **wrap,
            ),
            self.data_caption,
            self.plot_pane,
            self.frame_note,
            self.run_list,
            self.legend_note,
            pn.FlexBox(self.exact_status_w, self.exact_time_w, self.exact_btn, self.exact_stop_w, **wrap),
            title="Pareto front",
            collapsible=False,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout

    @safe
    def _on_point(self, run_id: int, tree_id: int) -> None:
        self.ctx.controller.select(run_id, tree_id)

    @safe
    def _on_cloud_point(self, rank: int, stamp: int) -> None:
        self.ctx.controller.open_cloud_tree(rank, stamp)  # a tree of the set only; a stale click does nothing

    @safe
    def show_cloud(self) -> None:
        """Draw the controller's Rashomon set cloud (or take it away)."""
        cloud = self.ctx.controller.cloud

        def draw():
            self.pareto.set_cloud(cloud)
            self.frame_note.object = self._frame_note()
            self.run_list.show_layers()

        self.ctx.bokeh(draw)

    def show_placeholder(self) -> None:
        """Say in the empty plot why it is empty: the first run compiles its solver's kernels, or no run yet."""
        c = self.ctx.controller
        p = c.progress or {}
        text = ""
        if not c.runs and c.running and p.get("phase") == "compiling" and p.get("cold"):
            text = f"The first run is compiling the {p.get('solver') or 'solver'} kernels (once per install)…"
        elif not c.runs and not c.running and c.dataset is not None:  # a new table: say what to do, not a blank
            text = "No runs on this data yet: press Run."
        if text != self._placeholder:
            self._placeholder = text
            # the latest text when the callback runs, not this call's: a "compiling" update queued from the run's
            # thread must not land after the run's end cleared it (the run bar saying done, the plot compiling)
            self.ctx.bokeh(lambda: self.pareto.set_placeholder(self._placeholder))

    def show_data(self) -> None:
        """The caption naming the table the runs are on."""
        c = self.ctx.controller
        caption = f"Runs on **{md(c.data_label())}**" if c.dataset is not None else ""
        if caption and c.refused_table:
            caption += f" (*{md(c.refused_table)}* did not load)"
        self.data_caption.object = caption

    # -- the plot ------------------------------------------------------------------------------------
    @safe
    def redraw(self, *events) -> None:
        """Draw every run (and the partial front of the one running) on the chosen complexity axis."""
        c = self.ctx.controller
        runs = [*c.runs, c.partial] if c.partial is not None else list(c.runs)
        self.ctx.dominated = dominated = dominance(c.runs)
        x, show_test, selected = self.x_w.value, self.show_test_w.value, c.selected
        self._default_y(c.runs)
        y, whole = self.y_w.value, self.whole_w.value
        reference, gaps = reference_curve(c.exact.record()), c.exact.gaps(runs)
        self.whole_w.disabled = y == "excess"

        def redraw():
            self.pareto.update(runs, x, show_test, selected, dominated, reference, gaps, y=y, whole=whole)
            self.frame_note.object = self._frame_note()
            self.run_list.show_layers()

        self.ctx.bokeh(redraw)
        self._update_legend_note(c.runs)

    def _on_y(self, event) -> None:
        if not self.ctx.quiet and not getattr(self, "_setting_y", False):
            self._y_chosen = True
        self.redraw()

    def _default_y(self, runs) -> None:
        """The vertical axis shows what a new run optimised (balanced accuracy for balanced class weights, the
        cost for other weights and costs), unless the user picked the axis."""
        new = [r for r in runs if r.id not in self._y_runs]
        self._y_runs |= {r.id for r in new}
        if self._y_chosen or not new:
            return
        want = _SCORE_AXES.get(new[-1].front.score, "accuracy")
        if self.y_w.value != "excess" and self.y_w.value != want:
            self._setting_y = True
            try:
                self.y_w.value = want
            finally:
                self._setting_y = False

    def _frame_note(self) -> str:
        """Say which trees are drawn on the bottom edge of the accuracy frame, and how to see the whole range."""
        below = self.pareto.below
        if not below:
            return ""
        word, value = self.pareto.axis_value
        accs = sorted({round(value(a), 3) for _, _, a in below})
        acc = ", ".join(f"{a:.3f}" for a in accs[:3]) + (" ..." if len(accs) > 3 else "")
        n = len(below)
        return (
            f"<span style='font-size:0.85em;opacity:0.8'>▼ {n} tree{'s' * (n > 1)} below the frame ({word} {acc}), "
            f"drawn on its bottom edge; tick <b>whole accuracy range</b> to see them in place</span>"
        )

    def show_selected(self) -> None:
        """Mark the selected tree's point."""
        selected = self.ctx.controller.selected
        self.ctx.bokeh(lambda: self.pareto.select(selected))

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
            "shape and colour: the run &nbsp; ✕ held-out accuracy &nbsp;·&nbsp; click a point to show its tree; "
            "untick a run above to hide it</span>"
        )

    # -- the run list --------------------------------------------------------------------------------
    def show_runs(self) -> None:
        """One row per run (its colour and marker, label, status, show/hide and remove)."""
        self.run_list.show()

    # -- exact front (gapview) -----------------------------------------------------------------------
    def _start_exact(self) -> None:
        exact = self.ctx.controller.exact
        offer = exact.offer or {}
        exact.start(offer.get("depth", 3), time_limit=self.exact_time_w.value)

    def show_exact(self, *events) -> None:
        """The exact front's state, its offer when not computed automatically, and its curve when it changed."""
        c = self.ctx.controller
        ex = c.exact
        offer = ex.offer
        if offer and not ex.running:
            d = offer["depth"]
            # one sentence: why it is not computed, and the button that computes it at which depth
            # "known" (to depth 3) then "not computed" read as a contradiction: say where the known part ends
            known = offer.get("known", 0)
            head = f"Not computed beyond depth {known}" if known else "Exact front not computed"
            why = (
                f"{head}: {offer['why']}. The button **Compute exact front (depth {d})** "
                f"computes it to depth {d} within the time limit beside it."
            )
            self.exact_status_w.object = f"{ex.status} {why}".strip()
        else:
            self.exact_status_w.object = ex.status
        self.exact_btn.visible = self.exact_time_w.visible = bool(offer) and not ex.running
        if offer:
            self.exact_btn.label = f"Compute exact front (depth {offer['depth']})"
        self.exact_stop_w.visible = ex.running
        if ex.running and not self._exact_poller.active:
            self._start_exact_polling()
        if any(e.name == "version" for e in events):
            runs = [*c.runs, c.partial] if c.partial is not None else list(c.runs)
            reference, gaps = reference_curve(ex.record()), ex.gaps(runs)

            def set_exact():
                self.pareto.set_exact(reference, gaps)
                self.run_list.show_layers()

            self.ctx.bokeh(set_exact)

    def _start_exact_polling(self) -> None:
        def start():
            if self.ctx.controller.exact.running:
                self._exact_poller.start()

        if self.ctx.doc is not None and self.ctx.building:
            pn.state.onload(start)  # a served page being built: a periodic callback only runs once it has loaded
        else:
            start()

    def poll_exact(self) -> bool:
        """Apply the exact front when it arrives (UI thread); stops its periodic callback when done."""
        return self._exact_poller.tick()

    def stop_polling(self) -> None:
        self._exact_poller.stop()
