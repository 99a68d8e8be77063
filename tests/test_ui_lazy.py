"""Cards rendered on first open: nothing of their content is in the page until then."""

from __future__ import annotations

import panel as pn
from bokeh.document import Document

from treeexplorer.ui.lazy import lazy_card, lazy_tabs


def test_lazy_card_gets_its_content_on_first_open_only():
    content = pn.widgets.Button(name="inside")
    card = lazy_card(content, title="later")
    assert card.collapsed and card.objects == []
    root = card.get_root(Document())
    assert not any(getattr(m, "label", None) == "inside" for m in root.references())
    card.collapsed = False
    assert card.objects == [content]
    card.collapsed = True
    card.collapsed = False
    assert card.objects == [content]  # filled once


def test_the_explorer_page_leaves_the_sweep_view_out_until_opened():
    from treeexplorer.ui import Explorer

    e = Explorer(dataset="iris", run_default=False)
    [card] = [o for o in e.main.objects if isinstance(o, pn.Card) and o.title.startswith("Sweep")]
    assert card.objects == [] and e._sweep_view is None  # not even made
    card.collapsed = False
    assert len(card.objects) == 1  # the SweepView (as its Panel layout)
    root = card.get_root(Document())
    assert any(getattr(m, "label", None) == e.sweep_view.run_w.name for m in root.references())


def test_lazy_tabs_fill_each_tab_on_first_open():
    first, second = pn.pane.Markdown("one"), pn.widgets.Button(name="deep")
    tabs = lazy_tabs(("A", first), ("B", second))
    assert tabs[1].objects == []  # nothing of B in the page yet
    tabs.active = 1
    assert tabs[1].objects == [second]
    tabs.active = 0
    tabs.active = 1
    assert tabs[1].objects == [second]
