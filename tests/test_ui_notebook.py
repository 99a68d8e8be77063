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
