"""SVG export: the same page as the PNG, as text, with native hover titles on every node."""

from __future__ import annotations

from xml.sax.saxutils import escape as _xml_escape

from treeexplorer.render.layout import BAR_H, EDGE_FONT, FONT_SIZE, LINE_H, PAD_Y, printable, text_width
from treeexplorer.render.page import FOOT_SIZE, LEGEND_SIZE, MARGIN, SUB_SIZE, SWATCH, TITLE_SIZE, make_page
from treeexplorer.tree import Tree


def escape(text: str) -> str:
    """XML-escaped text with control characters (not allowed in XML) shown as ``?``."""
    return _xml_escape(printable(text))


__all__ = ["to_svg"]

FONT_FAMILY = "DejaVu Sans, Verdana, Arial, sans-serif"


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def to_svg(tree: Tree, front=None, entry=None, *, title: str | None = None) -> str:
    """Render ``tree`` as a standalone SVG document.

    Parameters
    ----------
    tree : Tree
    front : Front, optional
        Adds provenance (dataset, solver, discretizer, parameters) to the footer and ``<desc>``.
    entry : FrontTree, optional
        Adds the tree's id and metrics to the title.
    title : str, optional
        Replaces the default title.

    Returns
    -------
    str
        SVG text; hovering a node shows its test, samples and class counts.
    """
    page = make_page(tree, front, entry, title)
    w, h = page.width, page.height
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(w)}" height="{_n(h)}" '
        f'viewBox="0 0 {_n(w)} {_n(h)}" font-family="{FONT_FAMILY}">',
        f"<title>{escape(page.title)}</title>",
        f"<desc>{escape(chr(10).join([page.subtitle, *page.footer]))}</desc>",
        f'<rect width="{_n(w)}" height="{_n(h)}" fill="white"/>',
        f'<text x="{MARGIN}" y="{MARGIN}" font-size="{TITLE_SIZE}" font-weight="bold" '
        f'dominant-baseline="hanging" fill="#222">{escape(page.title)}</text>',
        f'<text x="{MARGIN}" y="{MARGIN + TITLE_SIZE + 8}" font-size="{SUB_SIZE}" dominant-baseline="hanging" '
        f'fill="#444">{escape(page.subtitle)}</text>',
    ]
    for x, name, color in page.legend_items():
        y = page.legend_y
        out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{SWATCH}" height="{SWATCH}" fill="{color}"/>')
        out.append(
            f'<text x="{_n(x + SWATCH + 6)}" y="{_n(y + SWATCH / 2)}" font-size="{LEGEND_SIZE}" '
            f'dominant-baseline="central">{escape(name)}</text>'
        )
    ox, oy = page.tree_x, page.tree_y
    lay = page.layout
    out.append(f'<g transform="translate({_n(ox)},{_n(oy)})">')
    for e in lay.edges:
        out.append(
            f'<line x1="{_n(e.x0)}" y1="{_n(e.y0)}" x2="{_n(e.x1)}" y2="{_n(e.y1)}" stroke="#9aa0a6" '
            f'stroke-width="{_n(e.width)}" stroke-linecap="round"><title>{e.n} samples</title></line>'
        )
    for e in lay.edges:
        mx, my = (e.x0 + e.x1) / 2, (e.y0 + e.y1) / 2
        lw = text_width(e.label, EDGE_FONT) + 6
        out.append(
            f'<rect x="{_n(mx - lw / 2)}" y="{_n(my - 8)}" width="{_n(lw)}" height="16" rx="4" '
            f'fill="white"/><text x="{_n(mx)}" y="{_n(my)}" font-size="11" text-anchor="middle" '
            f'dominant-baseline="central" fill="#555">{e.label}</text>'
        )
    for b in lay.nodes:
        tip = "\n".join(f"{k}: {v}" for k, v in b.details.items())
        out.append(f'<g class="node" data-node="{b.id}"><title>{escape(tip)}</title>')
        out.append(
            f'<rect x="{_n(b.x0)}" y="{_n(b.y)}" width="{_n(b.w)}" height="{_n(b.h)}" rx="6" '
            f'fill="{b.fill}" stroke="{b.stroke}" stroke-width="{2.5 if b.leaf else 1.5}"/>'
        )
        for i, (t, bold) in enumerate(b.lines):
            weight = ' font-weight="bold"' if bold else ""
            out.append(
                f'<text x="{_n(b.x)}" y="{_n(b.y + PAD_Y + LINE_H * i + LINE_H / 2)}" '
                f'font-size="{FONT_SIZE}"{weight} text-anchor="middle" dominant-baseline="central" '
                f'fill="#111">{escape(t)}</text>'
            )
        bx, by, bw = b.x0 + 8, b.y + PAD_Y + 2 * LINE_H + 2, b.w - 16
        for frac, color in b.distribution:
            if frac > 0:
                out.append(f'<rect x="{_n(bx)}" y="{_n(by)}" width="{_n(bw * frac)}" height="{BAR_H}" fill="{color}"/>')
                bx += bw * frac
        out.append("</g>")
    out.append("</g>")
    for i, line in enumerate(page.footer):
        out.append(
            f'<text x="{MARGIN}" y="{_n(page.footer_y + i * (FOOT_SIZE + 5))}" font-size="{FOOT_SIZE}" '
            f'dominant-baseline="hanging" fill="#666">{escape(line)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"
