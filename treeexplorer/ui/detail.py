"""The Explorer's "Selected tree" card: what the tree is, the tree view, its tabs and its exports."""

from __future__ import annotations

from collections.abc import Callable

import panel as pn

from treeexplorer.compare import more_tests_label
from treeexplorer.export import plural
from treeexplorer.render.bokehview import TreeFigure
from treeexplorer.render.legend import legend_html
from treeexplorer.textsafe import md
from treeexplorer.ui.exports import ExportButtons
from treeexplorer.ui.treetabs import TreeTabs
from treeexplorer.ui.treeview import TreeTools
from treeexplorer.ui.viewkit import SessionViewer, ViewContext

__all__ = ["TreeDetail"]


class TreeDetail(SessionViewer):
    """The selected tree: title, the other runs with a tree at the same point, a dominated warning (with a
    re-run offer), the tree view and its tools, the tabs (:class:`~treeexplorer.ui.treetabs.TreeTabs`) and the
    export buttons (:class:`~treeexplorer.ui.exports.ExportButtons`).

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (see :class:`~treeexplorer.ui.viewkit.SessionViewer`).
    x_measure : callable
        The complexity measure the front is plotted on (which trees are "at the same point").
    """

    CSS_CLASS = "tx-selected-tree"  # the card a tap on the front scrolls into view (ParetoFigure.reveal_on_tap)

    def __init__(self, ctx: ViewContext, x_measure: Callable[[], str], **params):
        super().__init__(ctx, **params)
        self._x_measure = x_measure
        self.tree_fig = TreeFigure()
        self.tree_pane = pn.pane.Bokeh(self.tree_fig.figure, sizing_mode="stretch_width")
        ctx.bokeh_panes.append(self.tree_pane)
        self.tree_tools = TreeTools(self.tree_fig, run=ctx.bokeh)  # full screen, expand all, compact
        # Shown/hidden through this column: toggling the Bokeh pane itself makes Panel re-sync the figure's
        # stylesheets, which fails in Panel 1.9 ("List parameter 'Bokeh.stylesheets' ...").
        self.class_legend = pn.pane.HTML("", margin=(0, 10))  # the tree view's class colours
        self.tree_box = pn.Column(
            self.class_legend, self.tree_tools, self.tree_pane, visible=False, margin=0, sizing_mode="stretch_width"
        )
        self.tree_title = pn.pane.Markdown("", margin=(0, 10))
        self.same_point_box = pn.FlexBox(margin=(0, 5), visible=False, align_items="center")
        self._same_label = pn.pane.Markdown("**Same point in:**", margin=(8, 5), width=120)
        self._same_buttons: list[pn.widgets.Button] = []
        self._same_targets: list[tuple[int, int]] = []
        self.dominated_pane = pn.pane.Alert("", alert_type="warning", visible=False, sizing_mode="stretch_width")
        self.rerun_w = pn.widgets.Button(label="Re-run with more tests", color="warning", visible=False, width=200)
        self.tabs = TreeTabs(ctx, self.tree_fig)
        self.exports = ExportButtons(ctx)
        self._layout = pn.Card(
            self.tree_title,
            self.same_point_box,
            pn.Row(self.dominated_pane, self.rerun_w, sizing_mode="stretch_width"),
            self.tree_box,
            pn.Row(self.tabs, self.exports, sizing_mode="stretch_width"),
            title="Selected tree",
            collapsible=False,
            sizing_mode="stretch_width",
            css_classes=[self.CSS_CLASS],
        )

    def __panel__(self):
        return self._layout

    def show(self, run, entry) -> None:
        """Show tree ``entry`` of ``run`` (both None: no tree selected)."""
        c = self.ctx.controller
        self.exports.show(run, entry)
        if entry is None:
            self.tree_title.object = (
                "Click a point of the front to see its tree." if c.runs else "Run a solver to get a front of trees."
            )
            self.tree_box.visible = False
            self.ctx.bokeh(lambda: self.tree_fig.show(None))
            self.same_point_box.visible = False
            self.dominated_pane.visible = self.rerun_w.visible = False
            self.tabs.clear()
            return
        gap = c.exact.text(run, entry) if run.id else ""
        shown_gap = gap  # the metrics table's "vs exact optimum" row keeps it
        if entry.optimal:
            claim = f"proven {run.front.optimality}"
        elif gap.startswith("not proven by its run"):
            claim, gap = gap, ""  # the exact front proves it optimal: one statement, not two that disagree
        else:
            claim = "not proven optimal"
        title = (
            f"<span style='color:{run.color}'>■</span> **{md(run.label)}**, tree {entry.id}: "
            f"{plural(entry.metrics['splits'], 'split')}, train accuracy "
            f"{entry.metrics['train_accuracy']:.3f}, {md(claim)}"
        )
        tree = entry.tree
        # The figure's own width/height reach the browser; resizing the pane too would make Panel re-sync the
        # figure's properties (which fails on its stylesheets in Panel 1.9).
        self.ctx.bokeh(lambda: self.tree_fig.show(tree))
        if self.tree_fig.clipped and self.tree_fig.tree is tree:
            title += " · *large tree: drag it to see the rest*"
        if gap:
            title += f" · **{md(gap)}**"
        self.tree_title.object = title
        self.class_legend.object = legend_html(tree)
        self.tree_box.visible = True
        dominated = self.ctx.dominated.get((run.id, entry.id))
        self.dominated_pane.object = f"**Tree {entry.id} is {md(dominated)}.**" if dominated else ""
        self.dominated_pane.visible = bool(dominated)
        rerun = more_tests_label(run.front) if dominated else None
        self.rerun_w.visible = rerun is not None
        if rerun is not None:
            self.rerun_w.label = rerun
        self.update_same_point()
        self.tabs.show(run, entry, dominated, shown_gap)

    def update_same_point(self) -> None:
        """Name the other runs that have a tree at the selected point, each a button that switches to it.

        The buttons are kept and relabelled: new ones on every click made Bokeh re-walk the whole page
        (~40 ms of the server's one thread per click on a point once two runs share a point).
        """
        c = self.ctx.controller
        others = c.same_point(self._x_measure())
        while len(self._same_buttons) < len(others):
            # a width at creation keeps it fixed (the app's default sizing stretches widgets made without one)
            btn = pn.widgets.Button(label="", color="light", margin=(2, 4), description="", visible=False, width=120)
            k = len(self._same_buttons)
            btn.on_click(lambda e, k=k: c.select(*self._same_targets[k]))
            self._same_buttons.append(btn)
        self._same_targets = [(run.id, t.id) for run, t in others]
        for k, btn in enumerate(self._same_buttons):
            if k < len(others):
                run, t = others[k]
                btn.param.update(
                    label=f"{run.label}, tree {t.id}",
                    description=f"Show the tree of run #{run.id} at this point",
                    width=min(360, 40 + 8 * len(run.label)),
                    visible=True,
                )
            else:
                btn.visible = False
        if len(self.same_point_box.objects) != 1 + len(self._same_buttons):
            self.same_point_box.objects = [self._same_label, *self._same_buttons]
        self.same_point_box.visible = bool(others)
