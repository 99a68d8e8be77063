"""The app's live tree view: one Bokeh figure per session whose data sources are swapped on selection.

Building HoloViews elements costs ~80 ms per tree; replacing the ``data`` of a few ColumnDataSources costs
a few ms, which keeps a click on the Pareto plot well under the 100 ms UI budget (even during a solve).
"""

from __future__ import annotations

from bokeh.models import ColumnDataSource, HoverTool, PanTool, Range1d
from bokeh.plotting import figure

from treeexplorer.render.layout import BAR_H, FONT_SIZE, LINE_H, PAD_Y, TreeLayout, layout_tree
from treeexplorer.tree import Tree

__all__ = ["TreeFigure"]

MIN_FONT = 7
MARGIN = 12.0


def _scale(lay: TreeLayout, max_width: float, max_height: float) -> float:
    w, h = lay.width + 2 * MARGIN, lay.height + 2 * MARGIN
    s = min(1.0, max_width / w, max_height / h)
    return max(s, MIN_FONT / FONT_SIZE)  # below 7 px text is unreadable: let the view scroll instead


def tree_sources(lay: TreeLayout, s: float) -> dict[str, dict]:
    """Column data for every glyph of the view (y grows upwards in Bokeh, so the layout's y is negated)."""
    boxes = {
        k: []
        for k in (
            "left",
            "right",
            "top",
            "bottom",
            "fill",
            "stroke",
            "lw",
            "node",
            "test",
            "samples",
            "majority",
            "classes",
        )
    }
    bars = {k: [] for k in ("left", "right", "top", "bottom", "color")}
    bold = {k: [] for k in ("x", "y", "text")}
    plain = {k: [] for k in ("x", "y", "text")}
    for b in lay.nodes:
        d = b.details
        for key, v in (
            ("left", b.x0),
            ("right", b.x1),
            ("top", -b.y),
            ("bottom", -b.bottom),
            ("fill", b.fill),
            ("stroke", b.stroke),
            ("lw", (2.5 if b.leaf else 1.5) * max(s, 0.6)),
            ("node", d["node"]),
            ("test", d.get("test", "(leaf)")),
            ("samples", d["samples"]),
            ("majority", d["majority"]),
            ("classes", d["classes"]),
        ):
            boxes[key].append(v)
        bx, by, bw = b.x0 + 8, b.y + PAD_Y + 2 * LINE_H + 2, b.w - 16
        for frac, color in b.distribution:
            if frac > 0:
                for key, v in (
                    ("left", bx),
                    ("right", bx + bw * frac),
                    ("top", -by),
                    ("bottom", -(by + BAR_H)),
                    ("color", color),
                ):
                    bars[key].append(v)
                bx += bw * frac
        for i, (t, is_bold) in enumerate(b.lines):
            target = bold if is_bold else plain
            target["x"].append(b.x)
            target["y"].append(-(b.y + PAD_Y + LINE_H * i + LINE_H / 2))
            target["text"].append(t)
    edges = {
        "x0": [e.x0 for e in lay.edges],
        "y0": [-e.y0 for e in lay.edges],
        "x1": [e.x1 for e in lay.edges],
        "y1": [-e.y1 for e in lay.edges],
        "lw": [e.width * s for e in lay.edges],
    }
    elabels = {
        "x": [(e.x0 + e.x1) / 2 for e in lay.edges],
        "y": [-(e.y0 + e.y1) / 2 for e in lay.edges],
        "text": [e.label for e in lay.edges],
    }
    return {"boxes": boxes, "bars": bars, "bold": bold, "plain": plain, "edges": edges, "elabels": elabels}


class TreeFigure:
    """A Bokeh figure showing one tree at a time; :meth:`show` swaps the tree in place.

    Parameters
    ----------
    max_width, max_height : int
        The drawing is scaled down (fonts included) to fit; it never scales up.
    """

    def __init__(self, max_width: int = 780, max_height: int = 560):
        self.max_width, self.max_height = max_width, max_height
        self.sources = {k: ColumnDataSource(v) for k, v in tree_sources(TreeLayout([], [], 0, 0, []), 1).items()}
        fig = figure(
            x_range=Range1d(0, 1),
            y_range=Range1d(-1, 0),
            frame_width=200,
            frame_height=100,
            tools="pan,reset",
            toolbar_location=None,
            outline_line_color=None,
            min_border=0,
            background_fill_color=None,
            border_fill_color=None,
            sizing_mode="fixed",
        )
        fig.axis.visible = False
        fig.grid.visible = False
        src = self.sources
        fig.segment("x0", "y0", "x1", "y1", line_width="lw", line_color="#9aa0a6", source=src["edges"])
        self._elabels = fig.text(
            "x",
            "y",
            "text",
            source=src["elabels"],
            text_align="center",
            text_baseline="middle",
            text_color="#555555",
            background_fill_color="white",
            background_fill_alpha=0.9,
        )
        boxes = fig.quad(
            "left",
            "right",
            "top",
            "bottom",
            fill_color="fill",
            line_color="stroke",
            line_width="lw",
            source=src["boxes"],
            border_radius=5,
        )
        fig.quad("left", "right", "top", "bottom", fill_color="color", line_alpha=0, source=src["bars"])
        self._bold = fig.text(
            "x",
            "y",
            "text",
            source=src["bold"],
            text_align="center",
            text_baseline="middle",
            text_font_style="bold",
            text_color="#111111",
        )
        self._plain = fig.text(
            "x", "y", "text", source=src["plain"], text_align="center", text_baseline="middle", text_color="#111111"
        )
        fig.add_tools(
            HoverTool(
                renderers=[boxes],
                tooltips=[
                    ("node", "@node"),
                    ("test", "@test"),
                    ("samples", "@samples"),
                    ("majority", "@majority"),
                    ("classes", "@classes"),
                ],
            )
        )
        fig.toolbar.active_drag = fig.select_one({"type": PanTool})
        self.figure = fig
        self.tree: Tree | None = None
        self.clipped = False

    def show(self, tree: Tree | None) -> None:
        """Draw ``tree`` (``None`` clears the view)."""
        self.tree = tree
        lay = layout_tree(tree) if tree is not None else TreeLayout([], [], 0, 0, [])
        s = _scale(lay, self.max_width, self.max_height) if tree is not None else 1.0
        for key, data in tree_sources(lay, s).items():
            self.sources[key].data = data
        fig = self.figure
        # Fonts stop shrinking at 7 px; a tree still too big is shown in a window of at most
        # max_width x max_height around the root, and the user drags (pan) to see the rest.  A fixed-size
        # figure wider than the page would otherwise stretch the whole layout.
        full_w, full_h = (lay.width + 2 * MARGIN) * s, (lay.height + 2 * MARGIN) * s
        view_w, view_h = min(full_w, self.max_width), min(full_h, self.max_height)
        root_x = lay.nodes[0].x if lay.nodes else 0.0
        x0 = min(max(-MARGIN, root_x - view_w / s / 2), lay.width + MARGIN - view_w / s)
        fig.x_range.start, fig.x_range.end = x0, x0 + view_w / s
        fig.y_range.start, fig.y_range.end = MARGIN - view_h / s, MARGIN
        self.clipped = view_w < full_w - 0.5 or view_h < full_h - 0.5
        # No axes, toolbar or borders: the outer size equals the frame.
        fig.frame_width = fig.width = max(int(view_w), 10)
        fig.frame_height = fig.height = max(int(view_h), 10)
        fs = f"{FONT_SIZE * s:.1f}px"
        self._bold.glyph.text_font_size = fs
        self._plain.glyph.text_font_size = fs
        self._elabels.glyph.text_font_size = f"{11 * s:.1f}px"
