"""Notebook displays of the models (a front's table, a tree's picture, short reprs), a stopped front's optimality,
"1 split", and the notebook display helpers (scripts once per kernel, stylesheets shared or local)."""

from __future__ import annotations

import pytest

import treeexplorer as tx
from treeexplorer.render.layout import summary_line


@pytest.fixture(scope="module")
def front():
    return tx.solve("iris", solver="cart", max_depth=3, test_size=0.25, seed=0)


def test_front_repr_is_short_and_its_html_a_table(front):
    text = repr(front)
    assert len(text) < 120 and "cart" in text and "iris" in text and f"{len(front)} trees" in text
    html = front._repr_html_()
    assert html.count("<tr>") == len(front) + 1  # header + one row per tree
    for head in ("id", "splits", "depth", "train accuracy", "test accuracy", "optimal"):
        assert f"<th>{head}</th>" in html
    assert "gap" not in html  # no exact front attached: no gap column
    front.trees[0].metrics["gap_errors"] = 3
    try:
        assert "<th>gap (errors)</th>" in front._repr_html_() and "<td>3</td>" in front._repr_html_()
    finally:
        del front.trees[0].metrics["gap_errors"]


def test_front_tree_and_tree_show_their_picture(front):
    entry = front.trees[1]
    assert len(repr(entry)) < 150 and repr(entry).startswith(f"FrontTree(id={entry.id}, splits=")
    from IPython.core.formatters import DisplayFormatter

    formatter = DisplayFormatter()
    tx._register_displays(formatter.formatters)  # what importing treeexplorer does in a running kernel
    for svg in (formatter.format(entry)[0]["image/svg+xml"], formatter.format(entry.tree)[0]["image/svg+xml"]):
        assert svg.startswith("<svg") and "</svg>" in svg
    assert repr(entry.tree).startswith("Tree(")


def test_a_stopped_front_says_nothing_was_proven():
    murtree = tx.solve("iris", solver="murtree", max_depth=2, n_bins=4)
    assert murtree.optimality.startswith("optimal over")  # done: the claim of its proven trees
    for status, words in (("time_limit", "time limit"), ("cancelled", "cancelled")):
        stopped = tx.Front.from_dict({**murtree.to_dict(), "status": status})
        for t in stopped.trees:
            t.optimal = False  # as the pipeline marks a stopped run's trees
        assert stopped.optimality.startswith("nothing proven optimal") and words in stopped.optimality
        assert "nothing proven optimal" in stopped._repr_html_()


def test_one_split_is_singular(front):
    one = next(t for t in front.trees if t.metrics["splits"] == 1)
    assert summary_line(one, front).startswith("1 split ·")
    many = next(t for t in front.trees if t.metrics["splits"] > 1)
    assert summary_line(many, front).startswith(f"{many.metrics['splits']} splits ·")


def test_front_plot_is_a_panel_pane_holding_the_overlay(front):
    import holoviews as hv

    from treeexplorer.ui.notebook import FrontPlot
    from treeexplorer.ui.views import front_plot

    plot = front_plot(front)
    assert isinstance(plot, FrontPlot) and isinstance(plot.object, hv.Overlay)


def test_inlined_stylesheets_are_shared_per_document():
    import panel as pn
    from bokeh.document import Document
    from bokeh.models import ImportedStyleSheet, InlineStyleSheet, UIElement
    from panel.io.resources import set_resource_mode

    from treeexplorer.ui.notebook import _inline_now

    view = pn.Column(*[pn.pane.Markdown(f"**{i}**") for i in range(5)], pn.widgets.Button(label="b"))
    with set_resource_mode("inline"):
        model = view.get_root(Document())
    _inline_now(model)
    sheets = [s for m in model.select({"type": UIElement}) for s in m.stylesheets]
    inline = [s for s in sheets if isinstance(s, InlineStyleSheet) and len(s.css) > 200]
    assert inline and not [s for s in sheets if isinstance(s, ImportedStyleSheet) and "cdn" in s.url]
    assert len({id(s) for s in inline}) < len(inline)  # the same file is one model, however many use it


def test_the_ipywidget_route_keeps_the_local_stylesheet_address(monkeypatch):
    import panel as pn
    from bokeh.document import Document
    from panel.io.resources import CDN_DIST

    import treeexplorer.ui.notebook as nb

    monkeypatch.setattr(nb, "in_kernel", lambda: True)
    monkeypatch.setattr(nb, "ensure_scripts", lambda: False)
    monkeypatch.setenv("JPY_PARENT_PID", "1")
    view = nb.prepare_view(pn.Column(pn.pane.Markdown("x")))
    doc = Document()
    model = view.get_root(doc)  # what pn.ipywidget does: no comm
    assert model.document is doc and doc._template_variables["dist_url"] == "/panel_dist/"
    view.append(pn.pane.Markdown("made later"))
    urls = [str(s.url) for m in doc.models if hasattr(m, "stylesheets") for s in m.stylesheets if hasattr(s, "url")]
    assert urls and not [u for u in urls if u.startswith(CDN_DIST)]
