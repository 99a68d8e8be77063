"""A notebook with NO ``pn.extension`` call (nbclient, fresh kernel): the Explorer, a front plot and a front display
without error and without a single CDN address in any output; a front and a tree show as a table and a picture.

The warm display time is printed (``-s``); the figure that counts comes from ``benchmarks/bench_notebook.py``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

TABLE = """
import numpy as np, pandas as pd
rng = np.random.default_rng(0)
n = 150
species = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
df = pd.DataFrame({
    "species": species,
    "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
    "bill_length_mm": np.where(species == "Adelie", 38.0, 47.5) + rng.normal(0, 1.5, n),
    "bill_depth_mm": np.where(species == "Gentoo", 15.0, 18.3) + rng.normal(0, 0.5, n),
    "year": rng.choice([2007, 2008, 2009], n),
})
"""

LOADER = "application/vnd.holoviews_load.v0+json"

CELLS = [
    "import treeexplorer as tx\nfrom treeexplorer.ui.views import front_plot\n" + TABLE,
    "explorer = tx.Explorer(df, max_depth=2)\nexplorer",
    "front = explorer.fronts[0]\nfront",
    "front_plot(front)",
    "front[explorer.selected.entry.id]",
    "explorer2 = tx.Explorer(df, max_depth=3)\nexplorer2",  # warm: the second display in the kernel
    "print(explorer.selected.entry.id, list(explorer.predict(df.head(3))))",
]


def _cell_seconds(cell) -> float:
    t = cell.metadata["execution"]
    start = datetime.fromisoformat(t["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(t["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from treeexplorer.registry import available_solvers

    if "cart" not in available_solvers():
        pytest.skip("uses CART, not installed")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in CELLS])
    client = nbclient.NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}},
    )
    client.execute()
    return nb


def test_no_extension_call_no_error_and_no_cdn(executed):
    outputs = [o for c in executed.cells for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors
    stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
    assert "Traceback" not in stderr and "requires the panel extension" not in stderr, stderr[-2000:]
    # The scripts are sent inline, once: their loader asks for no URL.  (The library code itself mentions CDN
    # addresses it would use for features the views do not use, e.g. MathJax: checked apart, as requests.)
    loaders = [str(o["data"][LOADER]) for o in outputs if LOADER in o.get("data", {})]
    assert loaders and sum(len(x) > 1_000_000 for x in loaders) == 1  # BokehJS and Panel: one copy per kernel
    for js in loaders:
        for kind, urls in re.findall(r"(js_urls|css_urls|js_modules)\s*=\s*(\[[^\]]*\])", js):
            assert urls.replace(" ", "") == "[]", (kind, urls[:300])
    rest = [
        {k: v for k, v in o.get("data", {}).items() if k not in (LOADER, "application/javascript")} for o in outputs
    ]
    text = json.dumps(rest) + json.dumps([o.get("text", "") for o in outputs])
    assert "https://cdn" not in text and "cdn.holoviz.org" not in text and "cdn.bokeh.org" not in text
    views = [o for o in outputs if "application/vnd.holoviews_exec.v0+json" in o.get("data", {})]
    assert len(views) >= 3  # explorer, front plot, explorer2


def test_the_front_shows_a_table_the_tree_a_picture_and_the_plot_is_not_text(executed):
    cells = executed.cells
    front_html = cells[2].outputs[0]["data"]["text/html"]
    assert "<table" in front_html and "train accuracy" in front_html and "optimal" in front_html
    assert len(cells[2].outputs[0]["data"]["text/plain"]) < 200  # a short repr, not the dataclass
    assert ":Overlay" not in json.dumps(cells[3].outputs)
    tree = cells[4].outputs[0]["data"]
    assert "image/svg+xml" in tree and "<svg" in tree["image/svg+xml"]
    assert re.match(r"\d+ \[", cells[6].outputs[0]["text"])


def test_warm_display_time(executed):
    seconds = _cell_seconds(executed.cells[5])
    print(f"warm Explorer cell (build + solve + display): {seconds:.2f} s")
    assert seconds > 0
