"""What displaying the Explorer costs a notebook's kernel: from the cell's start until the kernel is free again.

One fresh kernel (nbclient, no ``pn.extension`` call), a generated penguins-like table of 344 rows, CART depth 3.
The first display also sends BokehJS and Panel's scripts (once per kernel); then each way of styling is timed
``--repeat`` times on a new Explorer (built in the cell before, so only the display is timed):

* ``panel_dist``: stylesheets linked from the Jupyter server's ``panel_dist/`` (what a Jupyter server gets);
* ``inline, shared``: no Jupyter server (e.g. VS Code): stylesheets inlined, one copy per file and document;
* ``inline, Panel``: Panel's own inlining (``pn.extension(inline=True)`` before this change): a copy per model.

A cell's time is the kernel's: ``iopub.execute_input`` to ``shell.execute_reply``.  No browser is attached, so
the front end's messages after the display (the browser's share) are not in it; the JupyterLab browser test
(tests/browser/test_jupyterlab.py, routes) prints the same figure with a browser.

    python benchmarks/bench_notebook.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_summary_argument  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol"); a generated table, no data
RUN_ALL = {"quick": ["--repeat", "1"], "full": ["--repeat", "3"]}

TABLE = """
import numpy as np, pandas as pd
rng = np.random.default_rng(0)
n = 344
species = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
df = pd.DataFrame({
    "species": species,
    "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
    "bill_length_mm": np.where(species == "Adelie", 38.8, 47.5) + rng.normal(0, 2.5, n),
    "bill_depth_mm": np.where(species == "Gentoo", 15.0, 18.3) + rng.normal(0, 1.0, n),
    "flipper_length_mm": np.where(species == "Gentoo", 217.0, 192.0) + rng.normal(0, 6.0, n),
    "sex": rng.choice(["male", "female"], n),
    "year": rng.choice([2007, 2008, 2009], n),
})
"""

# name -> (setup before building, what the timed cell displays)
VARIANTS = {
    "panel_dist": ("", "ex"),
    "inline, shared": ("os.environ.pop('JPY_PARENT_PID', None); os.environ.pop('JPY_SESSION_NAME', None)", "ex"),
    "inline, Panel": ("", "ex.__panel__()"),  # Panel's own notebook display of the same layout
}


def build_cells(repeat: int) -> tuple[list[str], dict[str, list[int]]]:
    cells = [
        "import os\nimport treeexplorer as tx\n" + TABLE,
        "ex = tx.Explorer(df, max_depth=3)",
        "ex",  # cold: the scripts go to the page here
    ]
    timed: dict[str, list[int]] = {"first display (scripts sent)": [2]}
    for name, (setup, shown) in VARIANTS.items():
        timed[name] = []
        for _ in range(repeat):
            cells.append(f"{setup}\nex = tx.Explorer(df, max_depth=3)")
            cells.append(shown)
            timed[name].append(len(cells) - 1)
    timed["construct (solve included)"] = [1] + [i - 1 for i in timed["panel_dist"]]
    return cells, timed


def seconds(cell) -> float:
    t = cell.metadata["execution"]
    start = datetime.fromisoformat(t["iopub.execute_input"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(t["shell.execute_reply"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_summary_argument(ap)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", help="unused (the table is generated); accepted like every benchmark")
    args = ap.parse_args()
    summary = Summary(args.summary)
    try:
        import nbclient
        import nbformat
    except ImportError:
        print("bench_notebook: needs nbclient and nbformat (pip install -e '.[test]')")
        return 0
    cells, timed = build_cells(args.repeat)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    env_note = f"load average {os.getloadavg()[0]:.1f} at start" if hasattr(os, "getloadavg") else ""
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=True).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        print("bench_notebook: a cell failed:", errors[0].get("evalue"))
        return 1
    sizes = {}
    for name, idx in timed.items():
        html = [o for i in idx for o in nb.cells[i].get("outputs", []) if "text/html" in o.get("data", {})]
        sizes[name] = max((len(o["data"]["text/html"]) for o in html), default=0)
    print(f"# Explorer display in a notebook kernel ({env_note}; Python {sys.version.split()[0]})\n")
    print("| what | cells | median s | min s | max s | HTML output |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, idx in timed.items():
        s = [seconds(nb.cells[i]) for i in idx]
        size = f"{sizes[name] / 1e3:,.0f} kB" if sizes[name] else "-"
        print(f"| {name} | {len(s)} | {statistics.median(s):.2f} | {min(s):.2f} | {max(s):.2f} | {size} |")
        if name != "inline, Panel":  # Panel's own inlining: the "before" figure, no target
            median = statistics.median(s)
            summary.add(f"Explorer display, {name}, median", f"{median:.2f} s", "<= 3 s", median <= 3.0)
    summary.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
