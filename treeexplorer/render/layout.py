"""Tree layout computed by the project (no graphviz): node boxes, edges and colours in pixel units.

Every renderer (PNG, SVG, the app's HoloViews view) draws the same :class:`TreeLayout`, so an export looks
like what the user saw.  The layout is a tidy top-down drawing: each subtree gets a horizontal band as wide
as its leaves need, a parent is centred over its children, the *true* side of a test (``≤``, ``=``) is on
the left.  A multiway node (one child per category) shows its column and has one edge per category,
labelled with the category, in category order; its children's bands are widened so these labels fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from treeexplorer.front import optimality_text
from treeexplorer.schema import format_number
from treeexplorer.tree import Tree, class_text

__all__ = [
    "NodeBox",
    "Edge",
    "TreeLayout",
    "layout_tree",
    "class_colors",
    "class_legend",
    "PALETTE",
    "RUN_MARKERS",
    "run_marker",
    "FONT_PATH",
    "BOLD_FONT_PATH",
    "text_width",
]

FONTS_DIR = Path(__file__).resolve().parent / "fonts"
FONT_PATH = FONTS_DIR / "DejaVuSans.ttf"
BOLD_FONT_PATH = FONTS_DIR / "DejaVuSans-Bold.ttf"

# Okabe & Ito (2008) colour-blind-safe palette (black moved last: it reads as "no class").
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

# Marker shapes of runs on the Pareto plot (Bokeh names), by run number: runs whose colours are close
# (the palette's blue and sky blue, orange and vermilion are 4 apart) differ in shape too.
RUN_MARKERS = ("circle", "square", "triangle", "diamond", "inverted_triangle", "hex", "star", "square_pin")


def run_marker(run_id: int) -> str:
    """The marker shape of run number ``run_id`` (1, 2, ...) on the Pareto plot."""
    return RUN_MARKERS[(int(run_id) - 1) % len(RUN_MARKERS)]


FONT_SIZE = 13
LINE_H = 17
PAD_X = 10
PAD_Y = 7
BAR_H = 7
GAP_X = 16
LEVEL_GAP = 46
MIN_BOX_W = 74
MAX_EDGE_W = 12.0
EDGE_FONT = 11  # edge labels (renderers draw them at this size, centred on the edge's midpoint)


@lru_cache(maxsize=4)
def _font(size: int, bold: bool):
    from PIL import ImageFont

    return ImageFont.truetype(str(BOLD_FONT_PATH if bold else FONT_PATH), size)


# Control characters (a column named "\x1e" in a hand-edited front) break the text shaper and are not
# allowed in XML: every renderer draws, measures and escapes text through :func:`printable`.
_CONTROLS = {c: "?" for c in (*range(0, 32), *range(127, 160))}


def printable(text: str) -> str:
    """``text`` with control characters shown as ``?`` (what PNG, SVG and the layout draw)."""
    return str(text).translate(_CONTROLS)


def text_width(text: str, size: int = FONT_SIZE, bold: bool = False) -> float:
    """Width in pixels of ``text`` in the bundled DejaVu Sans (the font every export uses)."""
    return float(_font(size, bold).getlength(printable(text)))


def class_colors(n_classes: int) -> list[str]:
    """One colour per class from the colour-blind-safe palette (cycled beyond eight classes)."""
    return [PALETTE[i % len(PALETTE)] for i in range(n_classes)]


def class_legend(schema) -> list[tuple[str, str]]:
    """``(class text, colour)`` per class, in class order: the colours every tree view and export uses.

    ``schema`` is a :class:`~treeexplorer.schema.Schema` or anything with one (a Tree); numeric labels read
    ``class 0`` (:func:`treeexplorer.tree.class_text`).
    """
    schema = getattr(schema, "schema", schema)
    colors = class_colors(schema.n_classes)
    return [(class_text(schema, i), colors[i]) for i in range(schema.n_classes)]


def _rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def shade(color: str, strength: float) -> str:
    """``color`` mixed with white: ``strength`` 0 gives white, 1 the full colour."""
    r, g, b = _rgb(color)
    s = min(max(strength, 0.0), 1.0)
    mix = [round(255 + (v - 255) * s) for v in (r, g, b)]
    return "#{:02x}{:02x}{:02x}".format(*mix)


@dataclass
class NodeBox:
    """One node as drawn: ``x`` is the box centre, ``y`` its top edge (y grows downwards)."""

    id: int
    x: float
    y: float
    w: float
    h: float
    leaf: bool
    lines: list[tuple[str, bool]]  # (text, bold)
    fill: str
    stroke: str
    n: int
    purity: float
    majority: str
    distribution: list[tuple[float, str]]  # (fraction, colour) per class, for the bar
    details: dict = field(default_factory=dict)  # hover text: name -> value

    @property
    def x0(self) -> float:
        return self.x - self.w / 2

    @property
    def x1(self) -> float:
        return self.x + self.w / 2

    @property
    def bottom(self) -> float:
        return self.y + self.h


@dataclass
class Edge:
    """A parent → child link; ``width`` is proportional to the samples that take it."""

    parent: int
    child: int
    x0: float
    y0: float
    x1: float
    y1: float
    width: float
    label: str
    n: int


@dataclass
class TreeLayout:
    """Everything a renderer needs; sizes in pixels at scale 1."""

    nodes: list[NodeBox]
    edges: list[Edge]
    width: float
    height: float
    legend: list[tuple[str, str]]  # (class name, colour)

    def node(self, k: int) -> NodeBox:
        for b in self.nodes:
            if b.id == k:
                return b
        raise KeyError(k)


def _percent(p: float) -> str:
    return f"{p * 100:.0f}%" if p * 100 >= 1 or p == 0 else f"{p * 100:.1g}%"


def _node_lines(tree: Tree, k: int, n: int, purity: float) -> list[tuple[str, bool]]:
    label = tree.leaf_label(k)
    if tree.is_leaf(k):
        return [(label, True), (f"n={n} · {_percent(purity)}", False)]
    return [(tree.node_text(k), True), (f"n={n} · {label} {_percent(purity)}", False)]


def layout_tree(tree: Tree) -> TreeLayout:
    """Lay ``tree`` out top-down with boxes sized to their text in the bundled font.

    Parameters
    ----------
    tree : Tree

    Returns
    -------
    TreeLayout
        Boxes for the reachable nodes, one edge per parent/child pair and the class legend.
    """
    colors = class_colors(tree.n_classes)
    k_cls = max(tree.n_classes, 2)
    order = tree.reachable()
    depth = tree.node_depth
    root_n = max(int(tree.counts[0].sum()), 1)
    info: dict[int, dict] = {}
    for k in order:
        k = int(k)
        counts = tree.counts[k]
        n = int(counts.sum())
        pred = int(tree.prediction[k])
        purity = float(counts[pred] / n) if n else 0.0
        lines = _node_lines(tree, k, n, purity)
        w = max(MIN_BOX_W, max(text_width(t, bold=b) for t, b in lines) + 2 * PAD_X)
        info[k] = {"n": n, "pred": pred, "purity": purity, "lines": lines, "w": w}

    # Subtree band widths, bottom-up (reverse DFS order visits children before parents).  A multiway edge
    # label sits halfway between parent and child, so sibling labels are half a band apart: a band of twice
    # the label's width keeps neighbours from overlapping.
    band: dict[int, float] = {}
    for k in order[::-1]:
        k = int(k)
        own = info[k]["w"] + GAP_X
        if tree.is_leaf(k):
            band[k] = own
            continue
        if tree.is_multi(k):
            for c in tree.child_list(k):
                band[c] = max(band[c], 2 * (text_width(tree.edge_label(k, c), EDGE_FONT) + 8))
        band[k] = max(own, sum(band[c] for c in tree.child_list(k)))

    box_h = 2 * PAD_Y + LINE_H * 2 + BAR_H + 4
    xs: dict[int, float] = {}
    stack = [(0, 0.0)]
    while stack:
        k, left = stack.pop()
        xs[k] = left + band[k] / 2
        kids = tree.child_list(k)
        start = left + (band[k] - sum(band[c] for c in kids)) / 2
        for c in kids:
            stack.append((c, start))
            start += band[c]

    nodes = []
    for k in order:
        k = int(k)
        d = info[k]
        counts = tree.counts[k]
        n = d["n"]
        color = colors[d["pred"] % len(colors)]
        # Purity from 1/k (no information) to 1 (pure) maps to a light-to-medium tint; text stays readable.
        rel = (d["purity"] - 1.0 / k_cls) / (1.0 - 1.0 / k_cls) if n else 0.0
        fill = shade(color, 0.12 + 0.43 * max(rel, 0.0))
        dist = [(float(c / n) if n else 0.0, colors[i]) for i, c in enumerate(counts)]
        details = {
            "node": str(k),
            "samples": str(n),
            "classes": ", ".join(f"{tree.class_text(i)}: {int(c)}" for i, c in enumerate(counts)),
            "majority": f"{tree.leaf_label(k)} ({_percent(d['purity'])})",
        }
        if tree.is_multi(k):
            details["test"] = f"{tree.node_text(k)}: {len(tree.child_list(k))} branches, one per category"
        elif not tree.is_leaf(k):
            details["test"] = tree.node_text(k)
            exact = tree.condition(k).value
            if tree.shown_threshold(k) != exact:  # the label is the short form: hover gives the split itself
                details["test"] += f" (split at {format_number(exact)})"
        else:
            details["prediction"] = tree.leaf_label(k)
        nodes.append(
            NodeBox(
                k,
                xs[k] + 0.0,
                float(depth[k] * (box_h + LEVEL_GAP)) + 0.0,
                d["w"],
                box_h,
                tree.is_leaf(k),
                d["lines"],
                fill,
                color,
                n,
                d["purity"],
                tree.leaf_label(k),
                dist,
                details,
            )
        )

    by_id = {b.id: b for b in nodes}
    edges = []
    for b in nodes:
        if b.leaf:
            continue
        for child in tree.child_list(b.id):
            label = tree.edge_label(b.id, child)
            c = by_id[child]
            width = 1.0 + (MAX_EDGE_W - 1.0) * (c.n / root_n)
            edges.append(Edge(b.id, child, b.x, b.bottom, c.x, c.y, width, label, c.n))

    width = max((b.x1 for b in nodes), default=0.0) + GAP_X / 2
    height = max((b.bottom for b in nodes), default=0.0)
    legend = class_legend(tree.schema)
    return TreeLayout(nodes, edges, float(width), float(height), legend)


def summary_line(entry, front=None) -> str:
    """One line for a front entry: splits, depth, accuracies, proven or not (over what, given ``front``)."""
    m = entry.metrics
    parts = [f"{m['splits']} splits", f"depth {m['depth']}", f"train acc {m['train_accuracy']:.3f}"]
    if m.get("test_accuracy") is not None:
        parts.append(f"test acc {m['test_accuracy']:.3f}")
    parts.append(f"{format_number(round(float(m['avg_tests']), 3))} tests/sample")
    claim = "not proven optimal"
    if entry.optimal:
        claim = f"proven optimal {optimality_text(front.search_space, short=True)}" if front else "proven optimal"
    parts.append(claim)
    return " · ".join(parts)
