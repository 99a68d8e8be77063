"""The app's live tree view: one Bokeh figure per session whose data sources are swapped on selection.

Building HoloViews elements costs ~80 ms per tree; replacing the ``data`` of a few ColumnDataSources costs
a few ms, which keeps a click on the Pareto plot well under the 100 ms UI budget (even during a solve).

The figure fills the width of its card and keeps the drawing's aspect ratio (``sizing_mode="scale_width"``);
text is drawn in screen pixels, so a small script rescales it with the zoom (wheel zoom, pan and reset are
on the toolbar).  A tree too wide to read top-down is laid out left to right; a deep one starts compact
(:func:`treeexplorer.render.layout.default_collapsed`); a click on a split collapses or expands it, a slow
click too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from bokeh import events
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, PanTool, Range1d, TapTool, WheelZoomTool
from bokeh.plotting import figure

from treeexplorer.render.layout import (
    BAR_H,
    EDGE_FONT,
    FONT_SIZE,
    LINE_H,
    PAD_Y,
    TreeLayout,
    default_collapsed,
    layout_tree,
)
from treeexplorer.tree import Tree

__all__ = ["TreeFigure", "tree_path", "pick_orientation", "READABLE_PX", "VIEW_WIDTH"]

READABLE_PX = 11.0  # the smallest node text the view accepts before it switches to a left-to-right layout
VIEW_WIDTH = 1150  # px: the tree card's inner width in a 1600 px wide window (the layout's reference)
PATH_COLOR = "#111111"
DIFF_COLOR = "#D55E00"

MIN_FONT = 7
MARGIN = 12.0


def lean(renderer, *, selectable: bool = False):
    """Drop a renderer's muted glyph (no legend mutes it) and, unless ``selectable``, its nonselection glyph.

    Bokeh makes both for every renderer; each is one more model for every page to build, send and render.
    Returns the renderer.
    """
    renderer.muted_glyph = None
    if not selectable:
        renderer.nonselection_glyph = None
    return renderer


def pick_orientation(tree: Tree, collapsed=(), width: float = VIEW_WIDTH) -> tuple[str, TreeLayout]:
    """Top-down when it fits ``width`` px with text of at least :data:`READABLE_PX`, else left to right
    (whichever needs less shrinking); returns ``(orientation, layout)``."""
    tb = layout_tree(tree, collapsed=collapsed)
    need = FONT_SIZE * width / (tb.width + 2 * MARGIN)
    if need >= READABLE_PX:
        return "tb", tb
    lr = layout_tree(tree, orientation="lr", collapsed=collapsed)
    return ("lr", lr) if lr.width < tb.width else ("tb", tb)


def tree_path(tree: Tree, row) -> list[int]:
    """The nodes a row (one encoded feature vector) visits from the root to its leaf."""
    leaf = int(tree.apply(np.asarray(row, dtype=np.float64).reshape(1, -1))[0])
    parent = {c: k for k in tree.reachable() for c in tree.child_list(int(k))}
    path = [leaf]
    while path[-1] != 0:
        path.append(int(parent[path[-1]]))
    return path[::-1]


# Bokeh's tap tool ignores a click held 300 ms or more (a "press": a deliberate click, a touch screen's
# tap-and-hold, a busy browser between mouse down and up).  This toggles the node for it as a tap would, when
# the press and its release are on the same node box (Bokeh does not pan during a press: a release elsewhere
# was an attempt to drag).  A second click within 300 ms of a tap (a "double tap") stays ignored: a double
# click on a node toggles it once, not twice.
_NODE_PRESS_JS = """
const d = source.data, x = cb_obj.x, y = cb_obj.y;
let hit = -1;
for (let i = 0; i < d.left.length && hit < 0; i++) {
  if (Math.min(d.left[i], d.right[i]) <= x && x <= Math.max(d.left[i], d.right[i])
      && Math.min(d.top[i], d.bottom[i]) <= y && y <= Math.max(d.top[i], d.bottom[i])) hit = i;
}
if (cb_obj.event_name === "press") { source._tx_pressed = hit; return; }
if (hit >= 0 && hit === source._tx_pressed) source.selected.indices = [hit];
source._tx_pressed = -1;
"""

# Text is in screen pixels: keep it in step with the zoom (pixels per layout unit) and the card's width.
_FONT_JS = """
const w = plot.inner_width, h = plot.inner_height;
if (!w || !h || !(xr.end > xr.start) || !(yr.end > yr.start)) return;
const sx = w / (xr.end - xr.start), sy = h / (yr.end - yr.start);
if (document.fullscreenElement && Math.abs(sx - sy) > 0.005 * Math.max(sx, sy)) {
  // full screen changes the aspect (in a card the figure keeps it): one scale on both axes again by
  // widening the roomier axis, its top and centre kept; the range change runs this script again
  const s = Math.min(sx, sy);
  if (sx > s) {
    const c = (xr.start + xr.end) / 2, half = w / s / 2;
    xr.setv({start: c - half, end: c + half});
  } else {
    yr.setv({start: yr.end - h / s});
  }
  return;
}
const set = (g, size) => {
  const fs = (size * sx).toFixed(1) + "px";
  const cur = g.glyph.text_font_size;
  if ((typeof cur === "string" ? cur : cur && cur.value) !== fs) g.glyph.text_font_size = fs;  // ends the loop
};
for (const g of texts) set(g, base);
set(elabels, edge);
"""


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
            "id",
            "hidden",
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
            ("id", b.id),
            ("hidden", b.hidden),
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
        "color": ["#9aa0a6"] * len(lay.edges),
        "child": [e.child for e in lay.edges],
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
    width : int
        The width (px) the layout is planned for (the figure then stretches to its card, keeping the
        drawing's aspect ratio).
    on_toggle : callable, optional
        Called with the node id after a click collapsed or expanded a subtree (the view redraws itself).
    interactive : bool
        ``False``: no click-to-collapse (the compare diagrams).
    """

    def __init__(self, width: int = VIEW_WIDTH, on_toggle: Callable[[int], None] | None = None, interactive=True):
        self.width = width
        self.on_toggle = on_toggle
        self.sources = {k: ColumnDataSource(v) for k, v in tree_sources(TreeLayout([], [], 0, 0, []), 1).items()}
        fig = figure(
            x_range=Range1d(0, 1),
            y_range=Range1d(-1, 0),
            width=width,
            height=200,
            tools="pan,reset",
            toolbar_location="above",
            outline_line_color=None,
            min_border=0,
            background_fill_color=None,
            border_fill_color=None,
            sizing_mode="scale_width",
            x_axis_type=None,  # no axes or grids at all (not hidden ones: 12 Bokeh models fewer per view)
            y_axis_type=None,
        )
        fig.toolbar.logo = None
        src = self.sources
        fig.segment("x0", "y0", "x1", "y1", line_width="lw", line_color="color", source=src["edges"])
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
            nonselection_fill_alpha=1.0,
            nonselection_line_alpha=1.0,
            selection_fill_alpha=1.0,
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
                # no button: always on, and a fifth button made the toolbar fold into a "⋮" menu on first draw
                visible=False,
            )
        )
        for r in fig.renderers:
            # the boxes keep theirs: a tap selects one (collapse), and without it the inline (notebook) view
            # stopped following clicks on the Pareto plot (test_jupyterlab)
            lean(r, selectable=r is boxes)
        wheel = WheelZoomTool()
        fig.add_tools(wheel)
        # Present but not active: an active wheel zoom would capture the page's scrolling over a tall tree.
        fig.toolbar.active_drag = fig.select_one({"type": PanTool})
        if interactive:
            fig.add_tools(TapTool(renderers=[boxes]))
            press = CustomJS(args={"source": src["boxes"]}, code=_NODE_PRESS_JS)
            fig.js_on_event(events.Press, press)
            fig.js_on_event(events.PressUp, press)
            src["boxes"].selected.on_change("indices", self._on_tap)
        font = CustomJS(
            args={
                "plot": fig,
                "xr": fig.x_range,
                "yr": fig.y_range,
                "texts": [self._bold, self._plain],
                "elabels": self._elabels,
                "base": FONT_SIZE,
                "edge": EDGE_FONT,
            },
            code=_FONT_JS,
        )
        fig.x_range.js_on_change("start", font)
        fig.x_range.js_on_change("end", font)
        fig.y_range.js_on_change("start", font)
        fig.js_on_change("inner_width", font)
        fig.js_on_change("inner_height", font)
        # the server sets a first guess of the size: the script replaces it (setting the same value again ends it)
        for glyph in (self._bold.glyph, self._plain.glyph, self._elabels.glyph):
            glyph.js_on_change("text_font_size", font)
        self.figure = fig
        self.boxes = boxes
        self.tree: Tree | None = None
        self.layout = TreeLayout([], [], 0, 0, [])
        self.orientation = "tb"
        self.collapsed: set[int] = set()
        self.highlight: list[int] = []  # a row's path (explain a row)
        self.diff: set[int] = set()  # nodes outlined as differences (compare)
        self.clipped = False

    def show(self, tree: Tree | None, *, collapsed=None, highlight=None, diff=None) -> None:
        """Draw ``tree`` (``None`` clears the view).

        ``collapsed``: nodes drawn collapsed (default: the compact layout of a deep tree, or the current
        set when the tree is the same); ``highlight``: a root-to-leaf path drawn in black; ``diff``: nodes
        outlined in vermilion (both kept when the tree is the same and they are not given).
        """
        same = tree is not None and tree is self.tree
        self.tree = tree
        if tree is None:
            self.collapsed, self.highlight, self.diff = set(), [], set()
        elif collapsed is not None:
            self.collapsed = {int(k) for k in collapsed}
        elif not same:
            self.collapsed = default_collapsed(tree)
        if tree is not None:
            if highlight is not None or not same:
                self.highlight = [int(k) for k in highlight or ()]
            if diff is not None or not same:
                self.diff = {int(k) for k in diff or ()}
        self._draw()

    def toggle(self, node: int) -> None:
        """Collapse the subtree of split ``node``, or expand it when collapsed (leaves: nothing)."""
        if self.tree is None or self.tree.is_leaf(node):
            return
        self.collapsed ^= {int(node)}
        self._draw()

    def explain(self, path) -> None:
        """Highlight a root-to-leaf ``path`` (see :func:`tree_path`), expanding collapsed nodes on it."""
        self.highlight = [int(k) for k in path]
        self.collapsed -= set(self.highlight[:-1])
        self._draw()

    def _on_tap(self, attr, old, new) -> None:
        if not new:
            return
        node = int(self.sources["boxes"].data["id"][new[0]])
        self.sources["boxes"].selected.indices = []
        self.toggle(node)
        if self.on_toggle is not None:
            self.on_toggle(node)

    def _draw(self) -> None:
        tree = self.tree
        if tree is None:
            lay, self.orientation = TreeLayout([], [], 0, 0, []), "tb"
        else:
            self.orientation, lay = pick_orientation(tree, self.collapsed, self.width)
        self.layout = lay
        data = tree_sources(lay, 1.0)
        on_path = set(self.highlight)
        boxes = data["boxes"]
        for i, k in enumerate(boxes["id"]):
            if k in on_path:
                boxes["stroke"][i], boxes["lw"][i] = PATH_COLOR, 4.0
            elif k in self.diff:
                boxes["stroke"][i], boxes["lw"][i] = DIFF_COLOR, 4.0
        edges = data["edges"]
        steps = set(zip(self.highlight[:-1], self.highlight[1:]))
        parents = [e.parent for e in lay.edges]
        for i, (p, c) in enumerate(zip(parents, edges["child"])):
            if (p, c) in steps:
                edges["color"][i], edges["lw"][i] = PATH_COLOR, max(edges["lw"][i], 4.0)
        for key, d in data.items():
            self.sources[key].data = d
        # The x range spans at least the planned width, so a small tree is not blown up; the figure keeps
        # this aspect ratio at any card width.
        full_w = max(lay.width + 2 * MARGIN, float(self.width))
        full_h = lay.height + 2 * MARGIN if lay.nodes else 40.0
        root_x = lay.nodes[0].x if lay.nodes and self.orientation == "tb" else (full_w - 2 * MARGIN) / 2
        # The root centred, within the x0 that keep the tree's edges in view: a tree wider than the view shows
        # no empty margin beyond its edges, a narrower one stays whole (it used to be pushed to the right edge).
        lo, hi = sorted((-MARGIN, lay.width + MARGIN - full_w))
        x0 = min(max(root_x - full_w / 2, lo), hi) if lay.nodes else -MARGIN
        if self.orientation == "lr":
            x0 = -MARGIN
        # Fonts first: the browser applies changes in order, and the range change that follows makes its
        # script set the text size for the card's actual width.
        fs = f"{FONT_SIZE * self.width / full_w:.1f}px"
        self._bold.glyph.text_font_size = fs
        self._plain.glyph.text_font_size = fs
        self._elabels.glyph.text_font_size = f"{EDGE_FONT * self.width / full_w:.1f}px"
        self.clipped = False
        fig = self.figure
        fig.x_range.update(start=x0, end=x0 + full_w, reset_start=x0, reset_end=x0 + full_w)
        fig.y_range.update(start=-full_h + MARGIN, end=MARGIN, reset_start=-full_h + MARGIN, reset_end=MARGIN)
        fig.width, fig.height = int(full_w), max(int(full_h), 10)
        fig.aspect_ratio = full_w / max(full_h, 10)
