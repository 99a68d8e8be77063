"""The selected tree's tabs: Metrics, Rules, Compare (text and diagrams), Explain a row, Diagnostics.

All but the first are rendered when first opened (:func:`~treeexplorer.ui.lazy.lazy_tabs`).
"""

from __future__ import annotations

import pandas as pd
import panel as pn

from treeexplorer.export import plural
from treeexplorer.render.bokehview import TreeFigure
from treeexplorer.ui.comparediagram import CompareDiagram
from treeexplorer.ui.diagnostics import DiagnosticsView
from treeexplorer.ui.explain import ExplainRow
from treeexplorer.ui.lazy import lazy_tabs
from treeexplorer.ui.viewkit import SessionViewer, ViewContext
from treeexplorer.ui.views import compare_markdown, metrics_frame, rules_markdown

__all__ = ["TreeTabs"]

TABLE_CSS = """
table { border-collapse: collapse; font-size: 0.9em; width: 100%; }
td { text-align: left !important; padding: 3px 8px; border-bottom: 1px solid #eee; }
td:first-child { opacity: 0.75; width: 42%; }
"""
PICK_SECOND = "Pick a second tree of the same run to see what changed."
NO_COMPARE = {"—": -1}


class TreeTabs(SessionViewer):
    """Tabs about the selected tree.

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (see :class:`~treeexplorer.ui.viewkit.SessionViewer`).
    tree_fig : TreeFigure
        The tree view (Explain a row highlights a row's path in it).
    """

    def __init__(self, ctx: ViewContext, tree_fig: TreeFigure, **params):
        super().__init__(ctx, **params)
        self.rules_pane = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.metrics_pane = pn.pane.DataFrame(
            None, index=False, header=False, sizing_mode="stretch_width", stylesheets=[TABLE_CSS]
        )
        self.compare_w = pn.widgets.Select(label="Compare with", options=dict(NO_COMPARE), value=-1, width=260)
        self.compare_pane = pn.pane.Markdown(PICK_SECOND, sizing_mode="stretch_width")
        self.compare_diagram = CompareDiagram(run=ctx.bokeh)
        self.explain_row = ExplainRow(ctx.controller, tree_fig, run=ctx.bokeh)
        self.diagnostics = DiagnosticsView(ctx.controller)
        self.compare_w.param.watch(self._on_compare_w, "value")
        self._layout = lazy_tabs(
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
        self.compare_diagram.follow(self._layout, index=2)  # the Compare tab: diagrams drawn while it is shown

    def __panel__(self):
        return self._layout

    def _on_compare_w(self, event) -> None:
        if self.ctx.quiet:
            return
        c = self.ctx.controller
        if event.new in (None, -1):
            c.compare = None
        else:
            c.compare_with(*event.new)  # (run id, tree id): a tree of any run of the same data

    def clear(self) -> None:
        """No tree selected."""
        self.rules_pane.object = ""
        self.metrics_pane.object = None
        with self.ctx.setting():
            self.compare_w.options = dict(NO_COMPARE)
            self.compare_w.value = -1
        self.compare_diagram.update(None, None)
        self.explain_row.follow(None)

    def show(self, run, entry, dominated: str | None, gap: str) -> None:
        """Tree ``entry`` of ``run``: its rules, metrics (``gap``: vs the exact optimum) and the comparison."""
        self.rules_pane.object = rules_markdown(entry)
        self.explain_row.follow(entry.tree)
        frame = metrics_frame(entry, run.front, dominated)
        if gap:  # right under the status row
            row = pd.DataFrame([["vs exact optimum", gap]], columns=frame.columns)
            frame = pd.concat([frame.iloc[:2], row, frame.iloc[2:]], ignore_index=True)
        self.metrics_pane.object = frame
        c = self.ctx.controller
        options = dict(NO_COMPARE)
        # the selected tree's run first, then every other run of the same data ("#3 tree 4: ...")
        for r in sorted(c.runs, key=lambda r: r.id != run.id):
            for t in r.front:
                if r.id != run.id or t.id != entry.id:
                    splits = plural(t.metrics["splits"], "split")
                    name = f"tree {t.id}" if r.id == run.id else f"#{r.id} tree {t.id}"
                    options[f"{name}: {splits}, acc {t.metrics['train_accuracy']:.3f}"] = (r.id, t.id)
        with self.ctx.setting():
            self.compare_w.options = options
            other = c.compared()
            other_run = c.compare_run if c.compare_run is not None else run.id
            if other is None:
                # Until the user picks one, compare with the next simpler tree of the front: "what changed"
                # is then visible at a glance.
                simpler = [t for t in run.front if t.metrics["splits"] < entry.metrics["splits"]]
                other = max(simpler, key=lambda t: (t.metrics["splits"], t.metrics["train_accuracy"]), default=None)
                other_run = run.id
            self.compare_w.value = (other_run, other.id) if other is not None else -1
        self.compare_pane.object = compare_markdown(entry, other) if other is not None else PICK_SECOND
        self.compare_diagram.update(entry, other)
