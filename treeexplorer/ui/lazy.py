"""Cards and tabs whose content is rendered the first time it is shown.

A collapsed ``pn.Card`` or a hidden tab still sends its whole content to the browser.  Each Bokeh model costs
the server ~1.7 ms to build when a session opens, so rarely used parts (the Sweep view: ~80 models; the Compare,
Explain and Diagnostics tabs: ~200) are left out of the page until the user opens them.  (``pn.Tabs(dynamic=True)``
does the same for tabs but shows a loading spinner whose stylesheet comes from a CDN: not offline.)
"""

from __future__ import annotations

import panel as pn

__all__ = ["lazy_card", "lazy_tabs"]


def lazy_card(content=None, *, build=None, **card_params) -> pn.Card:
    """A collapsed ``pn.Card`` that gets ``content`` (any Panel object) when it is first expanded.

    ``build``: instead of ``content``, a function that makes it then (its Python objects cost time too).
    """
    if (content is None) == (build is None):
        raise TypeError("lazy_card takes either content or build")
    card = pn.Card(collapsed=True, **card_params)

    def fill(event) -> None:
        if not event.new and not card.objects:
            card.objects = [content if build is None else build()]

    card.param.watch(fill, "collapsed")
    return card


def lazy_tabs(*tabs, **params) -> pn.Tabs:
    """``pn.Tabs(*tabs)`` where every tab but the first gets its content when it is first opened."""
    holders = [pn.Column(sizing_mode="stretch_width") for _ in tabs[1:]]
    widget = pn.Tabs(tabs[0], *((title, holder) for (title, _), holder in zip(tabs[1:], holders)), **params)
    contents = [content for _, content in tabs[1:]]

    def fill(event) -> None:
        i = event.new - 1
        if 0 <= i < len(holders) and not holders[i].objects:
            holders[i].objects = [contents[i]]

    widget.param.watch(fill, "active")
    return widget
