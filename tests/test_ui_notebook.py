"""notebooks/quickstart.ipynb runs top to bottom (nbclient, fresh kernel, outputs not saved)."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from treeexplorer.registry import available_solvers

    if "cart" not in available_solvers():
        pytest.skip("the quickstart uses CART, not installed")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = {i: cell.get("outputs", []) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"}
    errors = [o for outs in outputs.values() for o in outs if o.get("output_type") == "error"]
    assert not errors
    text = "".join(o.get("text", "") for outs in outputs.values() for o in outs)
    assert "IF " in text and "THEN" in text  # the rules were printed
    svg = [o for outs in outputs.values() for o in outs if "image/svg+xml" in o.get("data", {})]
    assert svg, "the tree was drawn inline"
    files = [o for outs in outputs.values() for o in outs if "tree.png" in str(o.get("data", {}))]
    assert files, "the exports were written"


def test_a_notebook_display_keeps_later_stylesheets_local(monkeypatch):
    """Components created after the first paint of an inline Explorer get Panel's files from the Jupyter
    server (``panel_dist/``), not from Panel's CDN; outside a Jupyter server nothing is changed."""
    import panel as pn
    from bokeh.document import Document
    from panel.io.resources import CDN_DIST

    from treeexplorer.ui.offline import keep_local, local_dist_url

    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("JPY_PARENT_PID", raising=False)
    assert local_dist_url() is None
    monkeypatch.setenv("JPY_SESSION_NAME", "quickstart.ipynb")
    assert local_dist_url() == "/panel_dist/"
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ana/")
    assert local_dist_url() == "/user/ana/panel_dist/"
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX")

    view = pn.Column(pn.pane.Markdown("before"))
    doc = Document()
    doc.add_root(view.get_root(doc))
    assert keep_local(view) == 1
    first_paint = set(doc.models)  # (inlined by pn.extension(inline=True) in a real display)
    view.append(pn.pane.Markdown("a card shown later"))  # its stylesheets are made now
    later = [m for m in doc.models if m not in first_paint and hasattr(m, "stylesheets")]
    urls = [str(s.url) for m in later for s in m.stylesheets if hasattr(s, "url")]
    assert urls and not [u for u in urls if u.startswith(CDN_DIST)], urls
    assert any(u.startswith("/panel_dist/") for u in urls)
