"""PNG export drawn with Pillow and the bundled DejaVu font (no browser, no graphviz)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw
from PIL.PngImagePlugin import PngInfo

from treeexplorer.render.layout import BAR_H, EDGE_FONT, FONT_SIZE, LINE_H, PAD_Y, _font, printable, text_width
from treeexplorer.render.page import FOOT_SIZE, LEGEND_SIZE, SUB_SIZE, SWATCH, TITLE_SIZE, make_page
from treeexplorer.tree import Tree

__all__ = ["to_png"]

MAX_PIXELS = 60_000_000  # Pillow refuses far larger images; scale down instead of failing


def to_png(tree: Tree, front=None, entry=None, *, scale: float = 2.0, title: str | None = None) -> bytes:
    """Render ``tree`` as a PNG image.

    Parameters
    ----------
    tree : Tree
    front : Front, optional
        Adds dataset/solver/discretizer provenance to the footer and the PNG metadata.
    entry : FrontTree, optional
        Adds the tree's id and metrics to the title.
    scale : float
        Pixels per layout unit (2 gives crisp text on high-density screens and in print).
    title : str, optional
        Replaces the default title.

    Returns
    -------
    bytes
        The PNG file's content; text chunks ``Title`` and ``Description`` hold the provenance.
    """
    page = make_page(tree, front, entry, title)
    s = float(scale)
    if page.width * page.height * s * s > MAX_PIXELS:
        s = (MAX_PIXELS / (page.width * page.height)) ** 0.5
    img = Image.new("RGB", (max(1, round(page.width * s)), max(1, round(page.height * s))), "white")
    d = ImageDraw.Draw(img)

    def font(size, bold=False):
        return _font(max(1, round(size * s)), bold)

    def text(x, y, t, size, bold=False, fill="#222222", anchor="la"):
        d.text((x * s, y * s), printable(t), font=font(size, bold), fill=fill, anchor=anchor)

    from treeexplorer.render.page import MARGIN

    text(MARGIN, MARGIN, page.title, TITLE_SIZE, True)
    text(MARGIN, MARGIN + TITLE_SIZE + 8, page.subtitle, SUB_SIZE, fill="#444444")
    for x, name, color in page.legend_items():
        y = page.legend_y
        d.rectangle([x * s, y * s, (x + SWATCH) * s, (y + SWATCH) * s], fill=color)
        text(x + SWATCH + 6, y + SWATCH / 2, name, LEGEND_SIZE, anchor="lm")

    ox, oy = page.tree_x, page.tree_y
    lay = page.layout
    for e in lay.edges:
        d.line(
            [((e.x0 + ox) * s, (e.y0 + oy) * s), ((e.x1 + ox) * s, (e.y1 + oy) * s)],
            fill="#9aa0a6",
            width=max(1, round(e.width * s)),
        )
    for e in lay.edges:  # labels on top of every edge
        mx, my = (e.x0 + e.x1) / 2 + ox, (e.y0 + e.y1) / 2 + oy
        w = text_width(e.label, EDGE_FONT) + 6
        d.rounded_rectangle(
            [(mx - w / 2) * s, (my - 8) * s, (mx + w / 2) * s, (my + 8) * s], radius=4 * s, fill="white"
        )
        text(mx, my, e.label, 11, fill="#555555", anchor="mm")
    for b in lay.nodes:
        x0, y0, x1, y1 = (b.x0 + ox) * s, (b.y + oy) * s, (b.x1 + ox) * s, (b.bottom + oy) * s
        d.rounded_rectangle(
            [x0, y0, x1, y1],
            radius=6 * s,
            fill=b.fill,
            outline=b.stroke,
            width=max(1, round((2.5 if b.leaf else 1.5) * s)),
        )
        for i, (t, bold) in enumerate(b.lines):
            text(b.x + ox, b.y + oy + PAD_Y + LINE_H * i + LINE_H / 2, t, FONT_SIZE, bold, fill="#111111", anchor="mm")
        bx, by, bw = b.x0 + ox + 8, b.y + oy + PAD_Y + 2 * LINE_H + 2, b.w - 16
        for frac, color in b.distribution:
            if frac > 0:
                d.rectangle([bx * s, by * s, (bx + bw * frac) * s, (by + BAR_H) * s], fill=color)
                bx += bw * frac
    for i, line in enumerate(page.footer):
        text(MARGIN, page.footer_y + i * (FOOT_SIZE + 5), line, FOOT_SIZE, fill="#666666")

    meta = PngInfo()
    meta.add_itxt("Title", page.title)
    meta.add_itxt("Description", "\n".join([page.subtitle, *page.footer]))
    meta.add_itxt("Software", "treeexplorer")
    buf = io.BytesIO()
    img.save(buf, format="PNG", pnginfo=meta, optimize=False)
    return buf.getvalue()
