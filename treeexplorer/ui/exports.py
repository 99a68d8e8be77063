"""The Explorer's export buttons: the selected tree (PNG, SVG, rules, JSON) and its run's front (JSON, CSV)."""

from __future__ import annotations

import io

import panel as pn

from treeexplorer.export import export_bytes
from treeexplorer.ui.viewkit import SessionViewer, ViewContext, slug

__all__ = ["ExportButtons", "TREE_EXPORTS", "FRONT_EXPORTS"]

TREE_EXPORTS = (("png", "PNG"), ("svg", "SVG"), ("txt", "Rules"), ("json", "Tree JSON"))
FRONT_EXPORTS = (("front_json", "Front JSON"), ("front_csv", "Front CSV"))


class ExportButtons(SessionViewer):
    """Download buttons (``dl``, by export kind) for the selected tree and its run."""

    def __init__(self, ctx: ViewContext, **params):
        super().__init__(ctx, **params)
        self.dl = {}
        for key, label in (*TREE_EXPORTS, *FRONT_EXPORTS):
            self.dl[key] = pn.widgets.FileDownload(
                callback=self._callback(key),
                filename=f"tree.{key}" if not key.startswith("front") else "front",
                label=label,
                color="default",
                embed=False,
                width=110,
                disabled=True,
            )
        self._layout = pn.Column(
            pn.pane.Markdown("**Export tree**", margin=(0, 5)),
            pn.Row(self.dl["png"], self.dl["svg"]),
            pn.Row(self.dl["txt"], self.dl["json"]),
            pn.pane.Markdown("**Export run**", margin=(0, 5)),
            pn.Row(self.dl["front_json"], self.dl["front_csv"]),
            width=250,
        )

    def __panel__(self):
        return self._layout

    def export(self, kind: str, run_id: int | None = None, tree_id: int | None = None) -> bytes:
        """The bytes of one export: png, svg, txt, json (a tree), front_json, front_csv (its run).

        The selected tree by default; ``run_id`` (and ``tree_id``, default: the run's best tree) export
        another one without changing what the screen shows.
        """
        c = self.ctx.controller
        if run_id is not None:
            run = c.run_by_id(run_id)
            if run is None:
                raise ValueError(f"no run #{run_id}")
            entry = run.front[tree_id] if tree_id is not None else run.front.best()
        else:
            run, entry = c.selection()
        if run is None and kind.startswith("front") and c.runs:
            run = c.runs[-1]
        if run is None:
            raise ValueError("select a tree first")
        return export_bytes(kind, run.front, entry)

    def _callback(self, kind: str):
        def cb():
            try:
                return io.BytesIO(self.export(kind))
            except Exception as exc:  # shown as an alert, never a traceback
                self.ctx.controller.error = f"export failed: {exc}"
                return io.BytesIO(b"")

        return cb

    def show_runs(self, runs) -> None:
        """Front exports are possible once there is a run."""
        self.dl["front_json"].disabled = self.dl["front_csv"].disabled = not runs

    def show(self, run, entry) -> None:
        """Tree exports for the selected tree (disabled without one); file names say what they hold."""
        for key, _ in TREE_EXPORTS:
            self.dl[key].disabled = entry is None
        if entry is None:
            return
        base = f"{slug(run.front.dataset)}_{slug(run.front.solver)}_run{run.id}"
        for key, _ in TREE_EXPORTS:
            self.dl[key].filename = f"{base}_tree{entry.id}.{key}"
        self.dl["front_json"].filename = f"{base}.json"
        self.dl["front_csv"].filename = f"{base}.csv"
