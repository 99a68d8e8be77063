"""Explorer responsiveness benchmark (not a timed test).

Measures, on a ~1k-row table with warm numba caches:

1. **Run → first front drawn**: from the Run action to the new front being in the plot.
   In-process (a Bokeh Document attached, as under ``panel serve``): ``run_now()`` → job done → the plot's
   and tree view's Bokeh models updated.
   Browser (``--browser``): click *Run* → the new run's points are on the canvas.  Target ≤ 3 s.
2. **UI event latency during a solve**: while a real solver (BRANCHES, numba, GIL released) runs in the
   worker thread, time UI events on the UI thread (select another tree: tree view + rules + metrics
   rebuilt; switch the complexity axis: Pareto plot rebuilt), against the same events when idle.
   Browser: click a point → its tree's title shown.  Target ≤ 100 ms.

Usage::

    python benchmarks/bench_ui.py              # in-process
    python benchmarks/bench_ui.py --browser    # also drive panel serve with headless chromium

Skips cleanly (exit 0 with a message) when a needed solver or chromium is missing.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_summary_argument  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "quick": ["--repeats", "2"],
    "full": ["--repeats", "3", "--browser"],
}
ARTIFACTS = ROOT / "test-artifacts"  # server log and failure screenshot of the browser mode
sys.path.insert(0, str(ROOT))

DATASET = "tic-tac-toe"  # bundled, 958 rows, 9 categorical features
LONG = {"solver": "branches", "params": {"sparsity": 0.0005}, "time_limit": 6.0}


def _p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def _stats(xs: list[float]) -> str:
    p95 = _p95(xs)
    xs = sorted(xs)
    return (
        f"median {1000 * statistics.median(xs):7.1f} ms  p95 {1000 * p95:7.1f} ms  max {1000 * xs[-1]:7.1f} ms"
        f"  (n={len(xs)})"
    )


def in_process(repeats: int = 3) -> dict:
    from treeexplorer.registry import available_solvers
    from treeexplorer.ui import Explorer
    from treeexplorer.ui.controller import RunSettings
    from treeexplorer.ui.warm import warm_up

    solvers = available_solvers()
    if "cart" not in solvers:
        print("skip: CART is not installed")
        return {}
    t = time.perf_counter()
    warm_up()
    print(f"warm-up (cached kernels loaded): {time.perf_counter() - t:.2f} s")
    from bokeh.document import Document

    e = Explorer(dataset=DATASET, solver="cart")
    e.app().server_doc(Document())  # as under panel serve: every change also updates Bokeh models
    ds = e.controller.dataset
    print(f"dataset {DATASET}: {ds.n_rows} rows, {ds.schema.n_features} features")

    times = []
    for _ in range(repeats):
        n = len(e.controller.runs)
        t0 = time.perf_counter()
        job = e.run_now()
        while len(e.controller.runs) == n:
            job.wait(0.01)
            e.poll()
        times.append(time.perf_counter() - t0)
    print(f"Run -> front drawn (CART, in-process): {_stats(times)}   target <= 3000 ms")

    out = {"run_to_front": times}
    if LONG["solver"] not in solvers:
        print(f"skip latency: {LONG['solver']} is not installed")
        return out
    run = e.controller.runs[-1]
    ids = [t.id for t in run.front]

    def events(duration: float, busy: threading.Event | None) -> list[float]:
        lat, i = [], 0
        end = time.perf_counter() + duration
        while time.perf_counter() < end and (busy is None or busy.is_set()):
            t0 = time.perf_counter()
            e.select(run.id, ids[i % len(ids)])  # what a click on a point does
            lat.append(time.perf_counter() - t0)
            i += 1
            time.sleep(0.1)
        return lat

    idle = events(2.0, None)
    print(f"UI event (select a tree), idle:          {_stats(idle)}")
    axis = []
    for _ in range(4):
        t0 = time.perf_counter()
        e.x_w.value = "depth" if e.x_w.value == "splits" else "splits"
        axis.append(time.perf_counter() - t0)
    print(f"switch complexity axis (plot redrawn):   {_stats(axis)}")
    s = RunSettings(LONG["solver"], LONG["params"], None, None, None, LONG["time_limit"])
    s.discretizer = e.controller.discretizers_for(LONG["solver"])[0]
    job = e.controller.run(s)
    busy = threading.Event()
    busy.set()
    threading.Thread(target=lambda: (job.wait(), busy.clear()), daemon=True).start()
    time.sleep(1.0)  # past discretizing: the kernel is searching
    during = events(LONG["time_limit"], busy)
    job.wait()
    e.poll()
    front = e.controller.runs[-1].front
    print(
        f"UI event (select a tree), during a {LONG['solver']} solve: {_stats(during)}   target <= 100 ms "
        f"(solve: {front.status}, {len(front)} trees)"
    )
    out.update(idle=idle, during=during)
    e.close()
    return out


# Same reader of the Pareto plot's points as the browser tests (kept in one place).
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from browser_helpers import POINTS_JS  # noqa: E402


def in_browser(repeats: int = 3) -> dict:
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        print("skip browser: /usr/bin/chromium missing")
        return {}
    from playwright.sync_api import sync_playwright

    port = 5123
    ARTIFACTS.mkdir(exist_ok=True)
    env = {**os.environ, "TREEEXPLORER_DATASET": DATASET, "TREEEXPLORER_SOLVER": "cart"}
    log = open(ARTIFACTS / "bench_ui_serve.log", "wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panel",
            "serve",
            str(ROOT / "apps" / "explorer.py"),
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            f"--allow-websocket-origin=127.0.0.1:{port}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    out = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            t0 = time.perf_counter()
            for _ in range(120):
                try:
                    page.goto(f"http://127.0.0.1:{port}/explorer")
                    break
                except Exception:
                    time.sleep(0.5)
            page.wait_for_selector("text=#1 cart", timeout=120_000)
            print(f"browser: page with default front after {time.perf_counter() - t0:.1f} s (cold server)")

            def n_runs():
                return len({pt["run"] for pt in page.evaluate(POINTS_JS)})

            times = []
            for _ in range(repeats):
                before = n_runs()
                t0 = time.perf_counter()
                page.get_by_role("button", name="Run", exact=True).click()
                while n_runs() == before:
                    time.sleep(0.02)
                times.append(time.perf_counter() - t0)
            print(f"browser: click Run -> front drawn (CART):   {_stats(times)}   target <= 3000 ms")
            out["run_to_front"] = times

            def click_latency(n: int) -> list[float]:
                lat = []
                for i in range(n + 1):
                    # positions re-read before every click: an alert above the plot may have moved it
                    pts = sorted((pt for pt in page.evaluate(POINTS_JS) if pt["run"] == 1), key=lambda p: p["tree"])
                    pt = pts[i % len(pts)]
                    page.mouse.move(5, 5)  # away first: the last point's hover tooltip may cover the next one
                    t0 = time.perf_counter()
                    page.mouse.click(pt["x"], pt["y"])
                    try:
                        page.get_by_text(re.compile(rf", tree {pt['tree']}: \d+ splits")).wait_for(timeout=10_000)
                    except Exception:
                        shown = page.get_by_text(re.compile(r", tree \d+: ")).all_inner_texts()
                        page.screenshot(path=str(ARTIFACTS / "bench_ui_failure.png"))
                        raise RuntimeError(f"clicked tree {pt['tree']} at {pt}, the page shows {shown}") from None
                    lat.append(time.perf_counter() - t0)
                    page.wait_for_timeout(300)  # human pacing: let the last patches land
                return lat[1:]  # the first click may hit the tree already shown

            out["click_idle"] = click_latency(6)
            print(f"browser: click point -> tree shown, idle:  {_stats(out['click_idle'])}")
            page.locator("select").nth(2).select_option(LONG["solver"])
            page.wait_for_timeout(500)
            page.locator(".bk-input-group:has-text('Sparsity') input").fill(str(LONG["params"]["sparsity"]))
            page.locator(".bk-input-group:has-text('Time limit') input").fill(str(LONG["time_limit"]))
            page.keyboard.press("Tab")
            page.get_by_role("button", name="Run", exact=True).click()
            page.wait_for_timeout(1500)
            out["click_busy"] = click_latency(6)
            print(
                f"browser: click point -> tree shown, during a {LONG['solver']} solve: {_stats(out['click_busy'])}"
                "   target <= 100 ms server-side"
            )
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_summary_argument(ap)
    ap.add_argument("--browser", action="store_true", help="also measure in headless chromium")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    got = in_process(args.repeats)
    if got.get("run_to_front"):
        med = statistics.median(got["run_to_front"])
        summary.add("Run -> front drawn (CART, in-process), median", f"{1000 * med:.0f} ms", "<= 3000 ms", med <= 3)
    if got.get("during"):
        worst = _p95(got["during"])
        summary.add("UI event during a solve, p95", f"{1000 * worst:.0f} ms", "<= 100 ms", worst <= 0.1)
    if args.browser:
        got = in_browser(args.repeats)
        if got.get("run_to_front"):
            med = statistics.median(got["run_to_front"])
            summary.add("browser: click Run -> front drawn, median", f"{1000 * med:.0f} ms", "<= 3000 ms", med <= 3)
    summary.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
