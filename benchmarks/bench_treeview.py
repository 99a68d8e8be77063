"""Tree view benchmark (issue 16): layout and drawing of a 63-split tree, server side and in the browser.

Targets: server-side layout (layout + the view's data) <= 200 ms; painted in the browser <= 500 ms.

Server side, in this process: ``layout_tree`` (top-down, left-to-right) and ``TreeFigure.show`` (picking the
orientation, laying out and filling the Bokeh data sources: what a click on the front costs the server),
for the tree fully expanded and in its compact form (collapsed below depth 4).  Cold = the first call in the
process (font loading, numba dispatch of ``apply``), warm = the median of the following calls.

Browser: the expanded figure saved as a standalone page (BokehJS inline, nothing from the internet), served on
127.0.0.1 and opened in Debian's chromium through Playwright (any other host is refused).  "painted" is the
time from navigation start until every Bokeh view has finished rendering and two animation frames passed.
Cold = a new browser context (empty cache), warm = a reload in the same context.  Skips the browser part
cleanly without Playwright or chromium.

    python benchmarks/bench_treeview.py [--repeat 15] [--no-browser]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_summary_argument  # noqa: E402

from treeexplorer.data import load_dataset  # noqa: E402
from treeexplorer.tree import OP_LE, Tree  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "smoke": ["--repeat", "2", "--no-browser"],
    "quick": ["--repeat", "5", "--no-browser"],
    "full": ["--repeat", "15"],
}

CHROMIUM = Path("/usr/bin/chromium")
LAYOUT_TARGET_MS, PAINT_TARGET_MS = 200.0, 500.0


def complete_tree(depth: int = 6, seed: int = 0) -> Tree:
    """A complete binary tree of ``depth`` levels (2**depth - 1 = 63 splits at 6) over random rows."""
    rng = np.random.default_rng(seed)
    n = 100 * 2**depth
    df = pd.DataFrame({c: rng.normal(size=n).round(3) for c in ("sepal_length", "sepal_width", "petal_length")})
    df["species"] = rng.choice(["setosa", "versicolor", "virginica"], n)
    ds = load_dataset(df, "species", name="random")
    n_inner = 2**depth - 1
    size = 2 * n_inner + 1
    col = [(i % 3) if i < n_inner else -1 for i in range(size)]
    val = [round(float(rng.normal(scale=0.3)), 3) if i < n_inner else 0.0 for i in range(size)]
    tc = [2 * i + 1 if i < n_inner else -1 for i in range(size)]
    fc = [2 * i + 2 if i < n_inner else -1 for i in range(size)]
    op = [OP_LE] * size
    skeleton = Tree(col, op, val, tc, fc, np.zeros((size, 3)), np.zeros(size), ds.schema)
    counts = np.zeros((size, 3), dtype=np.int64)
    for i, leaf in enumerate(skeleton.apply(ds.X)):
        k = int(leaf)
        while True:
            counts[k, ds.y[i]] += 1
            if k == 0:
                break
            k = (k - 1) // 2
    return Tree(col, op, val, tc, fc, counts, counts.argmax(axis=1), ds.schema)


def timed(fn, repeat: int) -> tuple[float, float]:
    """(cold ms, warm median ms)."""
    t0 = time.perf_counter()
    fn()
    cold = (time.perf_counter() - t0) * 1e3
    warm = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        warm.append((time.perf_counter() - t0) * 1e3)
    return cold, statistics.median(warm)


def server_side(tree: Tree, repeat: int) -> list[tuple]:
    from treeexplorer.render.bokehview import TreeFigure
    from treeexplorer.render.layout import layout_tree

    rows = []
    fig = TreeFigure()
    # cold: the very first layout of the process (fonts loaded, text measured) inside TreeFigure.show
    rows.append(("TreeFigure.show, expanded (63 splits)", *timed(lambda: fig.show(tree, collapsed=()), repeat)))
    compact = TreeFigure()
    rows.append(("TreeFigure.show, compact (default)", *timed(lambda: compact.show(tree, collapsed=None), repeat)))
    rows.append(("layout_tree top-down (exports)", *timed(lambda: layout_tree(tree), repeat)))
    rows.append(("layout_tree left-to-right", *timed(lambda: layout_tree(tree, orientation="lr"), repeat)))
    return rows


def browser_side(tree: Tree, repeat: int) -> list[tuple] | str:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "skipped: playwright is not installed"
    if not CHROMIUM.exists():
        return f"skipped: no chromium at {CHROMIUM}"
    from bokeh.embed import file_html
    from bokeh.resources import INLINE

    from treeexplorer.render.bokehview import TreeFigure

    fig = TreeFigure(interactive=False)  # no Python click callback in a standalone page
    fig.show(tree, collapsed=())
    tmp = Path(tempfile.mkdtemp(prefix="bench_treeview_"))
    (tmp / "tree.html").write_text(file_html(fig.figure, INLINE, "tree"), encoding="utf-8")
    empty = TreeFigure(interactive=False)  # reference: BokehJS's own cost for the same figure with no tree
    empty.show(None)
    (tmp / "empty.html").write_text(file_html(empty.figure, INLINE, "empty"), encoding="utf-8")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(tmp))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/tree.html"
    painted_js = """() => {
      const vs = typeof Bokeh !== "undefined" && Bokeh.index ? Object.values(Bokeh.index) : [];
      return vs.length > 0 && vs.every(v => v.has_finished());
    }"""
    after_frames = """() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => {
      const nav = performance.getEntriesByType("navigation")[0];
      r([performance.now(), performance.now() - nav.domContentLoadedEventStart]);
    })))"""
    # what a click on the front does in the app: new data in the open figure's sources, then a repaint
    swap_js = """async () => {
      const views = [];
      const walk = v => { views.push(v); if (v.child_views) for (const c of v.child_views) walk(c); };
      for (const v of Object.values(Bokeh.index)) walk(v);
      const plot = views.find(v => v.renderer_views);
      const sources = [...plot.renderer_views.keys()].map(m => m.data_source).filter(Boolean);
      const saved = sources.map(s => s.data);
      for (const s of sources) s.data = {};
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      const t0 = performance.now();
      sources.forEach((s, i) => { s.data = saved[i]; });
      await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
      return performance.now() - t0;
    }"""
    refused = []

    def guard(route):
        host = route.request.url.split("/")[2].split(":")[0]
        if host in ("127.0.0.1", "localhost") or route.request.url.startswith("data:"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    cold, warm, cold_doc, warm_doc, swaps, empty_doc = [], [], [], [], [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            for _ in range(max(3, repeat // 3)):
                ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
                ctx.route("**/*", guard)
                page = ctx.new_page()
                page.goto(url)
                page.wait_for_function(painted_js, polling="raf", timeout=30_000)
                total, doc = page.evaluate(after_frames)
                cold.append(total)
                cold_doc.append(doc)
                for _ in range(3):
                    page.reload()
                    page.wait_for_function(painted_js, polling="raf", timeout=30_000)
                    total, doc = page.evaluate(after_frames)
                    warm.append(total)
                    warm_doc.append(doc)
                swaps += [page.evaluate(swap_js) for _ in range(3)]
                page.goto(url.replace("tree.html", "empty.html"))
                page.wait_for_function(painted_js, polling="raf", timeout=30_000)
                empty_doc.append(page.evaluate(after_frames)[1])
                ctx.close()
            browser.close()
    finally:
        httpd.shutdown()
    if refused:
        raise SystemExit(f"the page asked for non-local resources: {refused}")
    med = statistics.median
    return [
        ("chromium: page load incl. 1 MB BokehJS, to painted", med(cold), med(warm)),
        ("chromium: document built (DOMContentLoaded) to painted", med(cold_doc), med(warm_doc)),
        ("chromium: new tree data in the open view to painted", swaps[0], med(swaps[1:])),
        ("  reference: the same figure without a tree, DOM to painted", empty_doc[0], med(empty_doc[1:])),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_summary_argument(ap)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args(argv)
    tree = complete_tree()
    assert tree.n_splits == 63, tree.n_splits
    rows = [(*r, LAYOUT_TARGET_MS) for r in server_side(tree, args.repeat)]
    note = None
    if not args.no_browser:
        got = browser_side(tree, args.repeat)
        if isinstance(got, str):
            note = got
        else:
            rows += [(*r, PAINT_TARGET_MS) for r in got]
    print(f"tree view benchmark: 63-split tree (depth 6), {args.repeat} warm repeats; python {sys.version.split()[0]}")
    print(f"{'stage':<62} {'cold ms':>9} {'warm ms':>9} {'target':>8}  ok")
    for name, cold, warm, target in rows:
        ok = "yes" if max(cold, warm) <= target else "NO"
        print(f"{name:<62} {cold:>9.1f} {warm:>9.1f} {target:>8.0f}  {ok}")
    summary = Summary(args.summary)
    for target, what in ((LAYOUT_TARGET_MS, "server-side stages"), (PAINT_TARGET_MS, "browser stages")):
        rs = [r for r in rows if r[3] == target and not r[0].startswith("  ")]
        if rs:
            worst = max(max(r[1], r[2]) for r in rs)
            summary.add(
                f"tree view, {what} (63 splits), slowest", f"{worst:.0f} ms", f"<= {target:.0f} ms", worst <= target
            )
    summary.write()
    if note:
        print(f"browser: {note}")
    print("cold = first call in the process / new browser context; warm = median of the repeats / page reloads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
