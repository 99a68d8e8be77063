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

from treeexplorer.claims import optimality_text, plural
from treeexplorer.schema import format_number
from treeexplorer.textsafe import visible
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
    "default_collapsed",
    "hidden_splits",
    "COMPACT_DEPTH",
    "COMPACT_KEEP",
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
GAP_Y = 10  # between sibling boxes of a left-to-right layout
LR_LEVEL_GAP = 56  # between the columns of a left-to-right layout (room for the edge labels)
# The compact layout of deep trees: from this depth on, subtrees below COMPACT_KEEP start collapsed.
COMPACT_DEPTH = 6
COMPACT_KEEP = 4
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
    hidden: int = 0  # splits hidden below this node when it is drawn collapsed (0: not collapsed)

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


def _node_lines(tree: Tree, k: int, n: int, purity: float, hidden: int = 0) -> list[tuple[str, bool]]:
    """A node box's lines (text, bold); names from the data with their newlines written ``\\n`` (one line each)."""
    label = visible(tree.leaf_label(k))
    if tree.is_leaf(k):
        return [(label, True), (f"n={n} · {_percent(purity)}", False)]
    test = visible(tree.node_text(k))
    if hidden:
        return [(f"⊞ {test}", True), (f"n={n} · {label} {_percent(purity)} · +{hidden} splits", False)]
    return [(test, True), (f"n={n} · {label} {_percent(purity)}", False)]


def hidden_splits(tree: Tree, k: int) -> int:
    """The number of splits in the subtree of node ``k`` (``k`` included): what collapsing ``k`` hides."""
    stack, n = [int(k)], 0
    while stack:
        j = stack.pop()
        if not tree.is_leaf(j):
            n += 1
            stack.extend(tree.child_list(j))
    return n


def default_collapsed(tree: Tree, deep: int = COMPACT_DEPTH, keep: int = COMPACT_KEEP) -> set[int]:
    """The compact layout of a deep tree: the splits at depth ``keep`` start collapsed when the tree is at
    least ``deep`` levels deep (an empty set otherwise), so the drawing shows ``keep`` levels plus counts."""
    if tree.depth < deep:
        return set()
    depth = tree.node_depth
    return {int(k) for k in tree.reachable() if depth[k] == keep and not tree.is_leaf(int(k))}


def _visible(tree: Tree, collapsed: set[int]) -> list[int]:
    """Reachable nodes in :meth:`Tree.reachable` order, without the descendants of collapsed nodes."""
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        if k not in collapsed:
            stack.extend(reversed(tree.child_list(k)))
    return order


def layout_tree(tree: Tree, *, orientation: str = "tb", collapsed=()) -> TreeLayout:
    """Lay ``tree`` out with boxes sized to their text in the bundled font.

    Parameters
    ----------
    tree : Tree
    orientation : {"tb", "lr"}
        ``"tb"``: root on top, children below (every export); ``"lr"``: root on the left, one column per
        depth, siblings stacked; a wide tree stays readable in a page-wide view.
    collapsed : iterable of int
        Internal nodes drawn collapsed: their subtree is hidden and the box counts the hidden splits
        (see :func:`default_collapsed`).

    Returns
    -------
    TreeLayout
        Boxes for the visible nodes, one edge per parent/child pair and the class legend.
    """
    if orientation not in ("tb", "lr"):
        raise ValueError(f"orientation must be 'tb' or 'lr', got {orientation!r}")
    collapsed = {int(k) for k in collapsed if not tree.is_leaf(int(k))}
    colors = class_colors(tree.n_classes)
    k_cls = max(tree.n_classes, 2)
    order = _visible(tree, collapsed) if collapsed else tree.reachable()
    depth = tree.node_depth
    root_n = max(int(tree.counts[0].sum()), 1)
    info: dict[int, dict] = {}
    for k in order:
        k = int(k)
        counts = tree.counts[k]
        n = int(counts.sum())
        pred = int(tree.prediction[k])
        purity = float(counts[pred] / n) if n else 0.0
        hidden = hidden_splits(tree, k) if k in collapsed else 0
        lines = _node_lines(tree, k, n, purity, hidden)
        w = max(MIN_BOX_W, max(text_width(t, bold=b) for t, b in lines) + 2 * PAD_X)
        info[k] = {"n": n, "pred": pred, "purity": purity, "lines": lines, "w": w, "hidden": hidden}

    def kids(k: int) -> list[int]:
        return [] if k in collapsed else tree.child_list(k)

    box_h = 2 * PAD_Y + LINE_H * 2 + BAR_H + 4
    if orientation == "lr":
        xs, ys = _positions_lr(tree, order, info, kids, depth, box_h)
    else:
        xs, ys = _positions_tb(tree, order, info, kids, depth, box_h)

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
            if d["hidden"]:
                details["test"] += f" (collapsed: {d['hidden']} splits hidden, click to expand)"
            exact = tree.condition(k).value
            if tree.shown_threshold(k) != exact:  # the label is the short form: hover gives the split itself
                details["test"] += f" (split at {format_number(exact)})"
        else:
            details["prediction"] = tree.leaf_label(k)
        nodes.append(
            NodeBox(
                k,
                xs[k] + 0.0,
                ys[k] + 0.0,
                d["w"],
                box_h,
                tree.is_leaf(k) or k in collapsed,
                d["lines"],
                fill,
                color,
                n,
                d["purity"],
                tree.leaf_label(k),
                dist,
                details,
                d["hidden"],
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
            if orientation == "lr":  # right side of the parent to the left side of the child
                edges.append(Edge(b.id, child, b.x1, b.y + b.h / 2, c.x0, c.y + c.h / 2, width, label, c.n))
            else:
                edges.append(Edge(b.id, child, b.x, b.bottom, c.x, c.y, width, label, c.n))

    width = max((b.x1 for b in nodes), default=0.0) + GAP_X / 2
    height = max((b.bottom for b in nodes), default=0.0)
    legend = class_legend(tree.schema)
    return TreeLayout(nodes, edges, float(width), float(height), legend)


def _positions_tb(tree, order, info, kids, depth, box_h):
    """Top-down: box centres ``x`` and tops ``y``; each subtree gets a band as wide as its leaves need."""
    # A multiway edge label sits halfway between parent and child, so sibling labels are half a band apart:
    # a band of twice the label's width keeps neighbours from overlapping.
    band: dict[int, float] = {}
    for k in order[::-1]:  # reverse DFS order visits children before parents
        k = int(k)
        own = info[k]["w"] + GAP_X
        if not kids(k):
            band[k] = own
            continue
        if tree.is_multi(k):
            for c in kids(k):
                band[c] = max(band[c], 2 * (text_width(tree.edge_label(k, c), EDGE_FONT) + 8))
        band[k] = max(own, sum(band[c] for c in kids(k)))
    xs: dict[int, float] = {}
    stack = [(0, 0.0)]
    while stack:
        k, left = stack.pop()
        xs[k] = left + band[k] / 2
        start = left + (band[k] - sum(band[c] for c in kids(k))) / 2
        for c in kids(k):
            stack.append((c, start))
            start += band[c]
    ys = {int(k): float(depth[k] * (box_h + LEVEL_GAP)) for k in order}
    return xs, ys


def _positions_lr(tree, order, info, kids, depth, box_h):
    """Left to right: one column per depth (as wide as its widest box), each subtree a vertical band."""
    col_w: dict[int, float] = {}
    for k in order:
        col_w[int(depth[k])] = max(col_w.get(int(depth[k]), 0.0), info[int(k)]["w"])
    left, x = {}, 0.0
    for d in sorted(col_w):
        left[d] = x
        x += col_w[d] + LR_LEVEL_GAP
    band: dict[int, float] = {}
    for k in order[::-1]:
        k = int(k)
        band[k] = max(box_h + GAP_Y, sum(band[c] for c in kids(k)))
    xs = {int(k): left[int(depth[k])] + info[int(k)]["w"] / 2 + GAP_X / 2 for k in order}
    ys: dict[int, float] = {}
    stack = [(0, 0.0)]
    while stack:
        k, top = stack.pop()
        ys[k] = top + (band[k] - box_h) / 2
        for c in kids(k):
            stack.append((c, top))
            top += band[c]
    return xs, ys


def summary_line(entry, front=None) -> str:
    """One line for a front entry: splits, depth, accuracies, proven or not (over what, given ``front``)."""
    m = entry.metrics
    parts = [plural(m["splits"], "split"), f"depth {m['depth']}", f"train acc {m['train_accuracy']:.3f}"]
    if m.get("test_accuracy") is not None:
        parts.append(f"test acc {m['test_accuracy']:.3f}")
    parts.append(f"{format_number(round(float(m['avg_tests']), 3))} tests/sample")
    claim = "not proven optimal"
    if entry.optimal:
        claim = f"proven optimal {optimality_text(front.search_space, short=True)}" if front else "proven optimal"
    parts.append(claim)
    return " · ".join(parts)
