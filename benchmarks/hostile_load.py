"""Hostile-upload load benchmark (issue 53): while one session uploads a ~300 KB gzip bomb and another a
30,000-column file, does a third session's page still answer and solve within a few seconds?

One ``panel serve apps/explorer.py`` (the browser tests' stand-in solvers), three headless-chromium contexts,
all on localhost.  Session C opens first and draws its first front; then A and B upload at the same moment and
C clicks *Run*: **Run → front** is the time until C's run #3 is listed (run #2, the same Run before the
uploads, is the machine's own pace), **refusals** the time until A and B
each show their one-line message.  **Peak RSS** is the server process's resident set, sampled every 0.1 s
(bound: ``--max-rss-mb``, default 1500 MB; the issue saw 3.5 GB before the reads were bounded).

Usage::

    python benchmarks/hostile_load.py            # prints the figures; exit 1 if a bound is missed

Skips (exit 0) without /usr/bin/chromium or Playwright.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, free_port, stop_server  # noqa: E402


def gzip_bomb(expanded: int = 200 << 20) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    row, out, n = b"1,2,x\n" * 10_000, [co.compress(b"a,b,label\n")], 0
    while n < expanded:
        out.append(co.compress(row))
        n += len(row)
    return b"".join([*out, co.flush()])


def wide_csv(n_cols: int = 30_000) -> bytes:
    header = ",".join(f"c{i}" for i in range(n_cols))
    rows = "\n".join(",".join(str((i + j) % 3) for j in range(n_cols)) for i in range(5))
    return f"{header}\n{rows}\n".encode()


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-rss-mb", type=float, default=1500)
    ap.add_argument("--max-run-s", type=float, default=10)
    ap.add_argument("--timeout", type=float, default=300, help="seconds any one step may take")
    a = ap.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: Playwright is not installed")
        return 0
    if not CHROMIUM.exists():
        print("skipped: no /usr/bin/chromium")
        return 0
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "browser"), str(ROOT)]),
        "TREEEXPLORER_PLUGINS": "fakes",
        "TREEEXPLORER_SOLVER": "uigreedy",
        "TREEEXPLORER_EXACT_AUTO_ROWS": "0",
    }
    cmd = [sys.executable, "-m", "panel", "serve", str(ROOT / "apps" / "explorer.py"), "--port", str(port)]
    cmd += ["--address", "127.0.0.1", f"--allow-websocket-origin=127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    peak, sampling = [0.0], [True]

    def sample():
        while sampling[0]:
            peak[0] = max(peak[0], rss_mb(proc.pid))
            time.sleep(0.1)

    threading.Thread(target=sample, daemon=True).start()
    url = f"http://127.0.0.1:{port}/explorer"
    ms = int(a.timeout * 1000)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            pages = {}
            for name in "CAB":
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                pages[name] = ctx.new_page()
                deadline = time.time() + a.timeout
                while True:  # the server may still be starting
                    try:
                        pages[name].goto(url, timeout=ms)
                        break
                    except Exception:
                        if time.time() > deadline:
                            raise
                        time.sleep(1)
                pages[name].wait_for_selector("text=#1 uigreedy", timeout=ms)
            t0 = time.perf_counter()  # the same Run with nothing else going on: the machine's own pace
            pages["C"].get_by_role("button", name="Run", exact=True).click()
            pages["C"].wait_for_selector("text=#2 uigreedy", timeout=ms)
            alone_s = time.perf_counter() - t0
            before = rss_mb(proc.pid)
            files = (("A", "bomb.csv", gzip_bomb()), ("B", "wide.csv", wide_csv()))
            t_set = time.perf_counter()
            for name, fname, content in files:
                pages[name].locator("input[type=file]").first.set_input_files(
                    files=[{"name": fname, "mimeType": "text/csv", "buffer": content}]
                )
            t0 = time.perf_counter()  # (handing the files to the two pages is the browser's time, not the server's)
            set_s = t0 - t_set
            pages["C"].get_by_role("button", name="Run", exact=True).click()
            pages["C"].wait_for_selector("text=#3 uigreedy", timeout=ms)
            run_s = time.perf_counter() - t0
            refused = {}
            for name, what in (("A", "expands to more than"), ("B", "30,000 columns")):
                pages[name].wait_for_selector(f"text=/{what}/", timeout=ms)
                refused[name] = time.perf_counter() - t0
            browser.close()
    finally:
        sampling[0] = False
        stop_server(proc)
    print(f"server RSS before the uploads: {before:.0f} MB; peak: {peak[0]:.0f} MB (bound {a.max_rss_mb:.0f} MB)")
    print(f"C: Run -> front alone: {alone_s:.1f} s; while A and B upload: {run_s:.1f} s (bound {a.max_run_s:.0f} s)")
    print(f"(Playwright handed the two files to their pages in {set_s:.1f} s, before the clock starts)")
    print(f"A: gzip bomb refused after {refused['A']:.1f} s; B: 30,000 columns refused after {refused['B']:.1f} s")
    return 0 if peak[0] <= a.max_rss_mb and run_s <= a.max_run_s else 1


if __name__ == "__main__":
    sys.exit(main())
