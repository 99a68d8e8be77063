"""The exported page around a tree: title, class legend, the tree, a provenance footer.

PNG and SVG draw the same :class:`Page`, so both exports carry the same provenance.
"""

from __future__ import annotations

from dataclasses import dataclass

from treeexplorer.claims import plural, provenance_lines, threshold_note
from treeexplorer.render.layout import TreeLayout, layout_tree, summary_line, text_width
from treeexplorer.tree import Tree

MARGIN = 20
TITLE_SIZE = 15
SUB_SIZE = 12
FOOT_SIZE = 11
LEGEND_SIZE = 12
SWATCH = 12


@dataclass
class Page:
    layout: TreeLayout
    title: str
    subtitle: str
    footer: list[str]
    tree_x: float  # offset of the tree drawing
    tree_y: float
    legend_y: float
    footer_y: float
    width: float
    height: float

    def legend_items(self) -> list[tuple[float, str, str]]:
        """``(x, class name, colour)`` of each legend entry, left to right."""
        out, x = [], float(MARGIN)
        for name, color in self.layout.legend:
            out.append((x, name, color))
            x += SWATCH + 6 + text_width(name, LEGEND_SIZE) + 18
        return out


def make_page(tree: Tree, front=None, entry=None, title: str | None = None) -> Page:
    """Lay out the page for ``tree`` (``front``/``entry`` add provenance and metrics)."""
    lay = layout_tree(tree)
    if title is None:
        what = f"tree {entry.id}" if entry is not None else "decision tree"
        src = f"{front.dataset} · {front.solver}" if front is not None else tree.schema.target
        title = f"{src} · {what}"
    bare = f"{plural(tree.n_splits, 'split')} · depth {tree.depth}"
    subtitle = summary_line(entry, front) if entry is not None else bare
    footer = provenance_lines(front, None) if front is not None else []
    multi = (
        "; a multiway node has one branch per category (an unseen category takes its largest branch)"
        if tree.has_multiway
        else ""
    )
    note = threshold_note(tree)
    if note:
        footer.append(note)
    footer.append(
        f"target: {tree.schema.target}; 'yes' branches (left) satisfy the test{multi}; made with treeexplorer"
    )
    y = MARGIN
    y += TITLE_SIZE + 8 + SUB_SIZE + 12
    legend_y = y
    y += SWATCH + 16
    tree_y = y
    y += lay.height + 18
    footer_y = y
    y += len(footer) * (FOOT_SIZE + 5) + MARGIN - 5
    widths = [lay.width, text_width(title, TITLE_SIZE, True), text_width(subtitle, SUB_SIZE)]
    widths += [text_width(f, FOOT_SIZE) for f in footer]
    legend_w = sum(SWATCH + 24 + text_width(n, LEGEND_SIZE) for n, _ in lay.legend)
    width = max(widths + [legend_w]) + 2 * MARGIN
    tree_x = MARGIN + (width - 2 * MARGIN - lay.width) / 2
    return Page(lay, title, subtitle, footer, tree_x, tree_y, legend_y, footer_y, width, y)
