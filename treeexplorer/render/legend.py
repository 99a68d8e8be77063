"""The class-colour legend as a small HTML element the app places next to its tree view.

Exports draw the same legend themselves (:mod:`treeexplorer.render.page`); both read
:func:`treeexplorer.render.layout.class_legend`, so the app and the files agree on every colour.
"""

from __future__ import annotations

from html import escape

from treeexplorer.render.layout import class_legend, printable

__all__ = ["legend_html"]


def legend_html(schema, title: str | None = "classes") -> str:
    """An inline legend: one colour swatch and class name per class, wrapping on narrow cards.

    Parameters
    ----------
    schema : Schema or Tree
        Whose classes to show (numeric labels read ``class 0``).
    title : str, optional
        A leading caption (``None``: none).

    Returns
    -------
    str
        An HTML fragment (a ``div.tx-class-legend``).  Text takes the page's colour, so it reads in light
        and dark themes; the swatches carry a thin border for the palette's light colours.
    """
    items = []
    for name, color in class_legend(schema):
        items.append(
            '<span class="tx-legend-item" style="display:inline-flex;align-items:center;gap:4px;'
            'margin-right:12px;white-space:nowrap">'
            f'<span class="tx-swatch" style="display:inline-block;width:11px;height:11px;border-radius:2px;'
            f'background:{color};border:1px solid rgba(127,127,127,.6)"></span>{escape(printable(name))}</span>'
        )
    head = f'<span style="margin-right:8px;opacity:.75">{escape(title)}:</span>' if title else ""
    return (
        '<div class="tx-class-legend" style="display:flex;flex-wrap:wrap;align-items:center;font-size:12px;'
        f'line-height:18px">{head}{"".join(items)}</div>'
    )
