"""The run list under the Pareto plot, which is also its legend.

A legend inside the plot covered points (with 5 runs at 1280x800 it hid those at 7-12 splits) and, with a CV
run, dropped below the frame and was clipped.  Here every run is one row under the plot: its colour and marker,
its name and status, a checkbox that shows or hides it on the plot (its label toggles it too) and a remove button
named for screen readers; the CV layers and the exact front's line are sub-items with their own checkbox.
"""

from __future__ import annotations

import html

import panel as pn

from treeexplorer.render.layout import run_marker
from treeexplorer.ui.viewkit import ViewContext

__all__ = ["RunList", "MARKER_SYMBOLS"]

# The plot's marker shapes (treeexplorer.render.layout.RUN_MARKERS) as text, for the list's swatches.
MARKER_SYMBOLS = {
    "circle": "●",
    "square": "■",
    "triangle": "▲",
    "diamond": "◆",
    "inverted_triangle": "▼",
    "hex": "⬢",
    "star": "★",
    "square_pin": "⯁",
}


# The label (the accessible name) is not drawn, a ✕ is (its alternative text empty: the name says it all).
_ICON_ONLY = ":host .bk-btn { font-size: 0; } :host .bk-btn::before { content: '✕' / ''; font-size: 14px; }"


class RunList(pn.viewable.Viewer):
    """Rows of runs (show/hide, remove) and the plot's other layers, from :attr:`ParetoFigure.entries`.

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state (the controller removes runs).
    pareto : ParetoFigure
        The plot whose entries are listed and shown or hidden.
    """

    def __init__(self, ctx: ViewContext, pareto, **params):
        super().__init__(**params)
        self.ctx, self.pareto = ctx, pareto
        self._rows: dict = {}  # run id -> (row, checkbox, status pane); reused: new widgets cost a round trip
        self._layers: dict = {}  # ("cv", k) / "exact" -> (row, checkbox)
        self.runs_box = pn.Column(sizing_mode="stretch_width", margin=(0, 5))
        self.layers_box = pn.Column(sizing_mode="stretch_width", margin=(0, 5, 0, 30))
        self.clear_w = pn.widgets.Button(
            label="Remove all runs", color="light", width=140, description="Remove every run of this table"
        )
        self.clear_w.on_click(lambda e: ctx.controller.clear_runs())
        self._layout = pn.Column(
            self.runs_box, self.layers_box, self.clear_w, sizing_mode="stretch_width", margin=(0, 0, 5, 0)
        )

    def __panel__(self):
        return self._layout

    def _toggle(self, key, visible: bool) -> None:
        self.ctx.bokeh(lambda: self.pareto.set_visible(key, visible))

    def show(self) -> None:
        """One row per run of the controller, then the plot's CV layers and exact front line (when drawn)."""
        if self.ctx.after_load(self.show, self.runs_box):
            return
        c = self.ctx.controller
        rows = []
        for run in c.runs:
            if run.id not in self._rows:
                self._rows[run.id] = self._run_row(run)
            row, box, status = self._rows[run.id]
            status.object = self._status(run)
            box.value = self.pareto.is_visible(run.id)
            rows.append(row)
        live = {run.id for run in c.runs}
        self._rows = {k: v for k, v in self._rows.items() if k in live}
        self.runs_box.objects = rows
        self.clear_w.visible = len(c.runs) > 1
        self.show_layers()

    def show_layers(self) -> None:
        """The sub-items: CV layers (while a CV run is drawn) and the exact front's dashed line (when known)."""
        if self.ctx.after_load(self.show_layers, self.layers_box):
            return
        layers = [(e["key"], e["label"]) for e in self.pareto.entries if isinstance(e["key"], tuple)]
        if self.pareto.exact_label:
            layers.append(("exact", f"{self.pareto.exact_label} (dashed grey line)"))
        if self.pareto.cloud_label:
            layers.append(("cloud", self.pareto.cloud_label))
        objects = []
        for key, label in layers:
            if key not in self._layers:
                box = pn.widgets.Checkbox(label=label, value=True, margin=(2, 5))
                box.param.watch(lambda e, key=key: self._toggle(key, e.new), "value")
                self._layers[key] = box
            box = self._layers[key]
            box.label = label
            if key == "cloud":  # a new cloud is shown even when the last one was hidden here
                box.value = self.pareto.is_visible("cloud")
            objects.append(box)
        self.layers_box.objects = objects

    def _run_row(self, run):
        symbol = MARKER_SYMBOLS.get(run_marker(run.id), "●")
        swatch = pn.pane.HTML(
            f"<span style='color:{run.color};font-size:1.25em' aria-hidden='true'>{symbol}</span>",
            width=22,
            margin=(3, 0, 0, 5),
        )
        box = pn.widgets.Checkbox(label=run.label, value=True, margin=(6, 5), align="start")
        box.param.watch(lambda e, rid=run.id: self._toggle(rid, e.new), "value")
        status = pn.pane.HTML("", margin=(5, 5), sizing_mode="stretch_width")
        # the button shows ✕; its accessible name (what a screen reader says) is its label, "Remove run #2 ..."
        remove = pn.widgets.Button(
            label=f"Remove run {run.label}",
            color="light",
            width=34,
            height=30,
            margin=(0, 4),
            description=f"Remove run {run.label}",
            stylesheets=[_ICON_ONLY],
        )
        remove.on_click(lambda e, rid=run.id: self.ctx.controller.remove_run(rid))
        return pn.Row(swatch, box, status, remove, sizing_mode="stretch_width"), box, status

    @staticmethod
    def _status(run) -> str:
        return f"<span style='opacity:0.75;font-size:0.85em'>{html.escape(run.status_text)}</span>"
