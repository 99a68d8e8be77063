"""A card whose content is rendered the first time it is opened.

A collapsed ``pn.Card`` still sends its whole content to the browser (hidden).  Each Bokeh model costs the
server ~1.7 ms to build when a session opens, so a rarely used card (the Sweep view: ~80 models) is left out
of the page until the user opens it.
"""

from __future__ import annotations

import panel as pn

__all__ = ["lazy_card"]


def lazy_card(content, **card_params) -> pn.Card:
    """A collapsed ``pn.Card`` that gets ``content`` (any Panel object) when it is first expanded."""
    card = pn.Card(collapsed=True, **card_params)

    def fill(event) -> None:
        if not event.new and not card.objects:
            card.objects = [content]

    card.param.watch(fill, "collapsed")
    return card
