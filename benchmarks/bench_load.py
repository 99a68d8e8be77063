"""Load benchmark: N analysts at once on one ``panel serve apps/explorer.py`` (headless chromium, localhost).

For N = 1, 4, 8, 16 concurrent browser pages (one server, restarted for each N), every page at the same
moment:

1. opens the Explorer; the server solves the default run (CART on iris): **page → first front** is the
   time until that front's points are on the canvas;
2. clicks *Run* (a small CART solve, through the server's admission control): **Run → front** is the time
   until the new run's points are drawn;
3. clicks points of the front while the other pages are still loading or solving: **UI latency** is the
   time from the click to the clicked tree's title on the page.

With ``--client ws`` every session is a Bokeh websocket client instead of a browser page (the issue allows
either): the same steps, events sent as BokehJS sends them, so the figures are the server's alone, without
eight Chromium renderers competing for the same two cores.

Errors are failed steps, error alerts on a page and tracebacks in the server log (must be 0).  Peak
memory is the server process's resident set, sampled every 0.1 s.  Bounded: at most ``--max-pages`` pages
and ``--timeout`` seconds per page; localhost only.

Usage::

    python benchmarks/bench_load.py                       # N = 1, 4, 8, 16, default server settings
    python benchmarks/bench_load.py --num-threads 4       # panel serve --num-threads 4
    python benchmarks/bench_load.py --sizes 8 --clicks 5
    python benchmarks/bench_load.py --client ws           # websocket clients instead of chromium pages

Target on the 2-core development machine: 8 sessions, p95 page → first front ≤ 5 s, zero errors,
UI latency p95 ≤ 250 ms.  Browser mode skips (exit 0) without /usr/bin/chromium or Playwright.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_summary_argument  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "quick": ["--client", "ws", "--sizes", "4", "--clicks", "2"],
    "full": [["--sizes", "1", "4", "8", "16"], ["--client", "ws", "--sizes", "1", "4", "8", "16"]],
}
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Same reader of the Pareto plot's points as the browser tests (kept in one place).
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from browser_helpers import PLOT_INTO_VIEW_JS, POINTS_JS  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


async def _wait_points(page, pred, timeout: float) -> list:
    deadline = time.perf_counter() + timeout
    while True:
        pts = await page.evaluate(POINTS_JS)
        if pred(pts):
            return pts
        if time.perf_counter() > deadline:
            raise TimeoutError("front not drawn in time")
        await asyncio.sleep(0.02)


async def one_session(browser, url: str, clicks: int, timeout: float, start: asyncio.Event) -> dict:
    out = {"first_front": None, "run_to_front": None, "latency": [], "errors": []}
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1300})
    page = await ctx.new_page()
    try:
        await start.wait()
        t0 = time.perf_counter()
        await page.goto(f"{url}/explorer", timeout=timeout * 1000)
        await page.wait_for_function(
            "() => window.Bokeh && Object.keys(Bokeh.index).length > 0", timeout=timeout * 1000
        )
        await _wait_points(page, lambda pts: any(p["run"] == 1 for p in pts), timeout)
        out["first_front"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        await page.get_by_role("button", name="Run", exact=True).click()
        await _wait_points(page, lambda pts: any(p["run"] == 2 for p in pts), timeout)
        out["run_to_front"] = time.perf_counter() - t0

        for i in range(clicks + 1):
            # a click on a point scrolls the tree card into view, as for a user: bring the plot back first
            await page.evaluate(PLOT_INTO_VIEW_JS)
            pts = sorted((p for p in await page.evaluate(POINTS_JS) if p["run"] == 2), key=lambda p: p["tree"])
            pt = pts[(i + 1) % len(pts)]
            await page.mouse.move(5, 5)  # away first: a hover tooltip may cover the next point
            t0 = time.perf_counter()
            await page.mouse.click(pt["x"], pt["y"])
            await page.get_by_text(re.compile(rf", tree {pt['tree']}: \d+ splits")).first.wait_for(
                timeout=timeout * 1000
            )
            if i:  # the first click may hit the tree already shown
                out["latency"].append(time.perf_counter() - t0)
            await page.wait_for_timeout(150)
        alerts = [t for t in await page.locator(".alert-danger").all_inner_texts() if t.strip()]
        out["errors"].extend(f"alert: {t[:200]}" for t in alerts)
    except Exception as exc:
        out["errors"].append(f"{type(exc).__name__}: {str(exc)[:300]}")
    finally:
        await ctx.close()
    return out


_received = threading.local()


def _stamp_pull_replies() -> None:
    """Note when each client thread receives its page (the server's reply to the pull), before decoding it."""
    from bokeh.protocol.messages.pull_doc_reply import pull_doc_reply

    if getattr(pull_doc_reply, "_stamped", False):
        return
    decode = pull_doc_reply.push_to_document

    def push_to_document(self, *args, **kwargs):
        _received.at = time.perf_counter()
        return decode(self, *args, **kwargs)

    pull_doc_reply.push_to_document = push_to_document
    pull_doc_reply._stamped = True


def ws_session(url: str, clicks: int, timeout: float, start: threading.Barrier) -> dict:
    """One session as a Bokeh websocket client (no browser): the same three steps as a browser page.

    Run is a ``ButtonClick`` event sent the way BokehJS sends it; a point click sets the Pareto points'
    ``selected.indices``, as the tap tool does; replies are the server's document patches.
    """
    from bench_soak import _client_models, _texts, has_front, has_property, wait_text, wait_until
    from bokeh.client import pull_session
    from bokeh.document.events import MessageSentEvent
    from bokeh.events import ButtonClick, DocumentReady
    from bokeh.models import Button, ColumnDataSource

    _client_models()
    _stamp_pull_replies()
    # the client re-announces models the server sent in an earlier patch: harmless, and noisy
    warnings.filterwarnings("ignore", message="reference already known")
    out = {"first_front": None, "run_to_front": None, "latency": [], "errors": [], "decode": None}
    try:
        start.wait()
        t0 = time.perf_counter()
        with pull_session(url=f"{url}/explorer") as session:
            doc = session.document
            # the page usually arrives with its first front: then that is when the front reached the
            # analyst; decoding the page here (Python, ~0.35 s, on one GIL for all clients) is a browser's
            # work on the analyst's own machine (the browser mode measures it)
            if any(map(has_front, _texts(doc))):
                out["first_front"] = _received.at - t0
                out["decode"] = time.perf_counter() - _received.at
            # BokehJS says so once the page is rendered; Panel's onload callbacks (the pollers) wait for it
            doc.callbacks.trigger_on_change(MessageSentEvent(doc, "bokeh_event", DocumentReady()))
            if out["first_front"] is None:
                wait_text(session, has_front, timeout)
                out["first_front"] = time.perf_counter() - t0

            run = next(m for m in doc.models if isinstance(m, Button) and m.label == "Run")
            # the models came from the server: mark them known, or the event would carry a copy of the button
            doc.models.flush_synced()
            t0 = time.perf_counter()
            doc.callbacks.trigger_on_change(MessageSentEvent(doc, "bokeh_event", ButtonClick(run)))
            # the front is drawn when the plot's tappable points hold run #2 (as the browser mode waits for)
            sources = [m for m in doc.models if isinstance(m, ColumnDataSource) and {"run_id", "tree"} <= set(m.data)]
            wait_until(session, lambda: any(2 in list(s.data["run_id"]) for s in sources), timeout)
            out["run_to_front"] = time.perf_counter() - t0

            points = next(s for s in sources if 2 in list(s.data["run_id"]))
            rows = [i for i, r in enumerate(points.data["run_id"]) if r == 2]
            for i in range(clicks + 1):
                row = rows[(i + 1) % len(rows)]
                tree = points.data["tree"][row]
                pat = re.compile(rf", tree {tree}: \d+ splits")
                doc.models.flush_synced()
                t0 = time.perf_counter()
                points.selected.indices = [row]
                wait_text(session, pat.search, timeout)
                if i:  # the first click may hit the tree already shown
                    out["latency"].append(time.perf_counter() - t0)
                time.sleep(0.15)
            alerts = [
                m.text
                for m in doc.models
                if has_property(type(m), "css_classes")
                and "alert-danger" in m.css_classes
                and m.visible
                and m.text.strip()
            ]
            out["errors"].extend(f"alert: {t[:200]}" for t in alerts)
    except Exception as exc:
        out["errors"].append(f"{type(exc).__name__}: {str(exc)[:300]}")
    return out


def run_load_ws(n: int, url: str, clicks: int, timeout: float) -> list[dict]:
    from concurrent.futures import ThreadPoolExecutor

    start = threading.Barrier(n)  # every session starts at the same moment
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda _: ws_session(url, clicks, timeout, start), range(n)))


async def run_load(n: int, url: str, clicks: int, timeout: float) -> list[dict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        start = asyncio.Event()
        tasks = [asyncio.create_task(one_session(browser, url, clicks, timeout, start)) for _ in range(n)]
        await asyncio.sleep(1.0)  # contexts created: all pages then start together
        start.set()
        results = await asyncio.gather(*tasks)
        await browser.close()
    return results


class PeakRSS:
    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.wait(0.1):
            try:
                kb = int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{self.pid}/status").read_text()).group(1))
            except (OSError, AttributeError):
                return
            self.peak = max(self.peak, kb / 1024)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(1)


def measure(n: int, clicks: int, timeout: float, extra_args: list[str], client: str = "browser") -> dict:
    from bench_soak import Server, open_session

    with Server(extra_args) as server:
        server.wait_ready()
        open_session(server.url)  # warm: kernels loaded, first page built, before the clock starts
        base = server.resources()["rss_mb"]
        load0 = os.getloadavg()[0]
        with PeakRSS(server.proc.pid) as peak:
            t0 = time.perf_counter()
            if client == "ws":
                results = run_load_ws(n, server.url, clicks, timeout)
            else:
                results = asyncio.run(run_load(n, server.url, clicks, timeout))
            wall = time.perf_counter() - t0
        log = server.log()
    errors = [e for r in results for e in r["errors"]]
    tracebacks = log.count("Traceback")
    if tracebacks:
        errors.append(f"{tracebacks} traceback(s) in the server log, first: {log[log.index('Traceback') :][:600]}")
    first = [r["first_front"] for r in results if r["first_front"] is not None]
    run = [r["run_to_front"] for r in results if r["run_to_front"] is not None]
    lat = [x for r in results for x in r["latency"]]
    decode = [r["decode"] for r in results if r.get("decode") is not None]
    return {
        "decode": decode,
        "n": n,
        "first": first,
        "run": run,
        "lat": lat,
        "errors": errors,
        "peak": peak.peak,
        "base": base,
        "wall": wall,
        "load": (load0, os.getloadavg()[0]),
    }


def _row(r: dict) -> str:
    def ms(xs):
        return f"{1000 * statistics.median(xs):.0f} / {1000 * pct(xs, 0.95):.0f}" if xs else "n/a"

    def sec(xs):
        return f"{statistics.median(xs):.2f} / {pct(xs, 0.95):.2f}" if xs else "n/a"

    return (
        f"| {r['n']} | {sec(r['first'])} | {sec(r['run'])} | {ms(r['lat'])} (n={len(r['lat'])}) "
        f"| {len(r['errors'])} | {r['peak']:.0f} (idle {r['base']:.0f}) | {r['load'][0]:.1f} → {r['load'][1]:.1f} |"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_summary_argument(ap)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--clicks", type=int, default=4, help="point clicks per page")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step of a page")
    ap.add_argument("--max-pages", type=int, default=16)
    ap.add_argument("--num-threads", type=int, default=None, help="pass --num-threads N to panel serve")
    ap.add_argument("--max-jobs", type=int, default=None, help="TREEEXPLORER_MAX_JOBS for the server")
    ap.add_argument(
        "--client",
        choices=["browser", "ws"],
        default="browser",
        help="browser: headless chromium pages; ws: Bokeh websocket clients (the server's cost alone)",
    )
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    if args.client == "browser":
        if not CHROMIUM.exists():
            print("skip: /usr/bin/chromium missing")
            summary.skip("no /usr/bin/chromium")
            summary.write()
            return 0
        try:
            import playwright  # noqa: F401
        except ImportError:
            print("skip: playwright is not installed")
            summary.skip("playwright is not installed")
            summary.write()
            return 0
    extra = ["--num-threads", str(args.num_threads)] if args.num_threads is not None else []
    if args.max_jobs is not None:
        os.environ["TREEEXPLORER_MAX_JOBS"] = str(args.max_jobs)
    mode = f"panel serve {' '.join(extra) or '(default)'}; max jobs {os.environ.get('TREEEXPLORER_MAX_JOBS', 'cores')}"
    print(f"{mode}; {args.client} clients; {os.cpu_count()} CPUs; clicks per page {args.clicks}")
    print(
        "| sessions | page → first front median / p95 (s) | Run → front median / p95 (s) "
        "| UI latency median / p95 (ms) | errors | peak server RSS (MB) | load avg (start → end) |"
    )
    print("|---|---|---|---|---|---|---|", flush=True)
    rows = []
    for n in args.sizes:
        r = measure(min(n, args.max_pages), args.clicks, args.timeout, extra, args.client)
        rows.append(r)
        print(_row(r), flush=True)
    for r in rows:
        if r["decode"]:
            print(
                f"N={r['n']}: the websocket clients decoded their page in {statistics.median(r['decode']):.2f} s "
                "(median; after the first front counts as arrived)"
            )
        for e in r["errors"][:3]:
            print(f"N={r['n']} error: {e}")
    for r in rows:
        n_err = len(r["errors"])
        summary.add(f"{args.client}, {r['n']} sessions: errors", n_err, "0", n_err == 0)
        if r["first"]:
            summary.add(
                f"{args.client}, {r['n']} sessions: page -> first front p95",
                f"{pct(r['first'], 0.95):.2f} s",
                "<= 5 s at 8 sessions" if r["n"] == 8 else "",
                pct(r["first"], 0.95) <= 5 if r["n"] == 8 else None,
            )
        if r["lat"]:
            p95 = pct(r["lat"], 0.95)
            summary.add(
                f"{args.client}, {r['n']} sessions: UI latency p95",
                f"{1000 * p95:.0f} ms",
                "<= 250 ms at 8 sessions" if r["n"] == 8 else "",
                p95 <= 0.25 if r["n"] == 8 else None,
            )
    summary.write()
    target = next((r for r in rows if r["n"] == 8), None)
    if target is not None and target["first"]:
        ok = (
            not target["errors"]
            and len(target["first"]) == 8
            and pct(target["first"], 0.95) <= 5.0
            and target["lat"]
            and pct(target["lat"], 0.95) <= 0.250
        )
        print(
            f"\ntarget (8 sessions: p95 first front <= 5 s, 0 errors, UI p95 <= 250 ms): {'met' if ok else 'NOT met'}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
