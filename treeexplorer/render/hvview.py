"""The app's interactive tree view: the project's layout drawn with HoloViews/Bokeh, hover on every node."""

from __future__ import annotations

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh backend without notebook output)

from treeexplorer.render.layout import BAR_H, FONT_SIZE, LINE_H, PAD_Y, layout_tree
from treeexplorer.tree import Tree

if hv.Store.current_backend != "bokeh":  # a notebook may have loaded matplotlib first
    hv.Store.set_current_backend("bokeh")

__all__ = ["tree_view"]

MIN_FONT = 7


def tree_view(tree: Tree, max_width: int = 900, max_height: int = 560):
    """A HoloViews overlay of ``tree`` (boxes, class bars, labels, sample-weighted edges).

    The drawing is scaled to fit ``max_width`` × ``max_height`` pixels; fonts scale with it (down to
    7 px, beyond which the plot grows and the app scrolls) so text always stays inside its box.

    Returns
    -------
    holoviews.Overlay
    """
    lay = layout_tree(tree)
    margin = 12.0
    w, h = lay.width + 2 * margin, lay.height + 2 * margin
    s = min(1.0, max_width / w, max_height / h)
    s = max(s, MIN_FONT / FONT_SIZE)
    fs = f"{FONT_SIZE * s:.1f}px"
    edge_rows = [(e.x0, -e.y0, e.x1, -e.y1, e.width * s, e.n, e.label) for e in lay.edges]
    edges = hv.Segments(edge_rows, kdims=["x0", "y0", "x1", "y1"], vdims=["lw", "samples", "branch"]).opts(
        color="#9aa0a6", line_width="lw", tools=[]
    )
    elabels = hv.Labels([((e.x0 + e.x1) / 2, -(e.y0 + e.y1) / 2, e.label) for e in lay.edges], vdims="text").opts(
        text_font_size=f"{11 * s:.1f}px", text_color="#555555", text_alpha=0.9
    )
    box_rows = []
    for b in lay.nodes:
        d = b.details
        box_rows.append(
            (
                b.x0,
                -b.bottom,
                b.x1,
                -b.y,
                b.fill,
                b.stroke,
                2.5 if b.leaf else 1.5,
                d.get("node"),
                d.get("test", "(leaf)"),
                d.get("samples"),
                d.get("majority"),
                d.get("classes"),
            )
        )
    boxes = hv.Rectangles(
        box_rows,
        kdims=["x0", "y0", "x1", "y1"],
        vdims=["fill", "stroke", "lw", "node", "test", "samples", "majority", "classes"],
    ).opts(
        color="fill",
        line_color="stroke",
        line_width="lw",
        tools=["hover"],
        hover_tooltips=[
            ("node", "@node"),
            ("test", "@test"),
            ("samples", "@samples"),
            ("majority", "@majority"),
            ("classes", "@classes"),
        ],
    )
    bar_rows = []
    for b in lay.nodes:
        bx, by, bw = b.x0 + 8, b.y + PAD_Y + 2 * LINE_H + 2, b.w - 16
        for frac, color in b.distribution:
            if frac > 0:
                bar_rows.append((bx, -(by + BAR_H), bx + bw * frac, -by, color))
                bx += bw * frac
    bars = hv.Rectangles(bar_rows, kdims=["x0", "y0", "x1", "y1"], vdims=["c"]).opts(color="c", line_alpha=0, tools=[])
    bold_rows, plain_rows = [], []
    for b in lay.nodes:
        for i, (t, bold) in enumerate(b.lines):
            (bold_rows if bold else plain_rows).append((b.x, -(b.y + PAD_Y + LINE_H * i + LINE_H / 2), t))
    bold_labels = hv.Labels(bold_rows, vdims="text").opts(
        text_font_size=fs, text_font_style="bold", text_color="#111111"
    )
    plain_labels = hv.Labels(plain_rows, vdims="text").opts(text_font_size=fs, text_color="#111111")
    # No zoom tools: fonts are sized for this scale, zooming would push text out of its box.
    layers = [el.opts(default_tools=[]) for el in (edges, elabels, boxes, bars, bold_labels, plain_labels)]
    overlay = hv.Overlay(layers)
    return overlay.opts(
        **dict(
            frame_width=int(w * s),
            frame_height=int(h * s),
            border=0,
            xaxis=None,
            yaxis=None,
            show_grid=False,
            xlim=(-margin, lay.width + margin),
            ylim=(-lay.height - margin, margin),
            toolbar=None,
            show_frame=False,
            backend_opts={"plot.outline_line_alpha": 0},
        )
    )
