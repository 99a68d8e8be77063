"""Soak benchmark: open and close many sessions on one ``panel serve apps/explorer.py``; nothing may pile up.

Each session is a websocket client (``bokeh.client.pull_session``): the server builds the Explorer for it,
which loads a table and solves it once (the default run), then the client closes.  The server's thread
count, open files (``/proc/PID/fd``) and resident memory are read from ``/proc`` after a warm-up and at the
end, once closed sessions have been discarded; a second app served by the same process (``/soakstats``)
reports the scheduler's running/queued counts and the live job threads, which must be zero.

Usage::

    python benchmarks/bench_soak.py                 # 200 sessions, 3 at a time
    python benchmarks/bench_soak.py --sessions 50 --parallel 1

Localhost only; bounded by ``--sessions`` and ``--max-seconds``.  ``tests/test_soak.py`` runs a small
version (30 sessions).  Linux only (reads ``/proc``).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "apps" / "explorer.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_summary_argument  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "quick": ["--sessions", "20", "--parallel", "2", "--warmup", "3"],
    "full": [],
}

STATS_APP = """
import gc, threading
import panel as pn
from treeexplorer.ui.admission import get_scheduler

gc.collect()
_names = [t.name for t in threading.enumerate()]
_s = get_scheduler().stats()
_jobs = sum(n.startswith("treeexplorer-job") for n in _names)
pn.pane.Str(
    f"SOAKSTATS running={_s['running']} queued={_s['queued']} held={_s['sessions']} "
    f"admitted={_s['admitted_total']} jobs={_jobs} pythreads={len(_names)}"
).servable()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``panel serve`` of the Explorer (plus the stats app) on 127.0.0.1, as a context manager."""

    def __init__(self, extra_args=(), env=None, log_path: Path | None = None):
        self.port = free_port()
        self.tmp = tempfile.TemporaryDirectory(prefix="treeexplorer-soak-")
        stats = Path(self.tmp.name) / "soakstats.py"
        stats.write_text(STATS_APP)
        self.log_path = log_path or Path(self.tmp.name) / "serve.log"
        self.cmd = [
            sys.executable,
            "-m",
            "panel",
            "serve",
            str(APP),
            str(stats),
            "--port",
            str(self.port),
            "--address",
            "127.0.0.1",
            f"--allow-websocket-origin=127.0.0.1:{self.port}",
            # discard closed sessions quickly so their resources can be checked within the run
            "--unused-session-lifetime",
            "500",
            "--check-unused-sessions",
            "250",
            *extra_args,
        ]
        self.env = {
            **os.environ,
            "TREEEXPLORER_DATASET": "iris",
            "TREEEXPLORER_SOLVER": "cart",
            "BOKEH_PY_LOG_LEVEL": "warning",
            **(env or {}),
        }
        self.proc = None

    def __enter__(self) -> Server:
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, env=self.env, stdout=self._log, stderr=subprocess.STDOUT, cwd=ROOT)
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._log.close()
        self.tmp.cleanup()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 300.0) -> None:
        import urllib.request

        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"panel serve exited ({self.proc.returncode}): {self.log()[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.url}/soakstats", timeout=5).read()
                return
            except OSError:
                time.sleep(0.5)
        raise TimeoutError("panel serve did not answer")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def resources(self) -> dict:
        """Threads, open file descriptors and resident memory (MB) of the server process."""
        pid = self.proc.pid
        status = Path(f"/proc/{pid}/status").read_text()
        rss_kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
        return {
            "threads": len(os.listdir(f"/proc/{pid}/task")),
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "rss_mb": rss_kb / 1024,
        }

    def app_stats(self) -> dict:
        """The stats app's counters (scheduler and job threads), read through a websocket session."""
        text = _session_text(f"{self.url}/soakstats", "SOAKSTATS")
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def _client_models() -> None:
    # a websocket client must know Panel's Bokeh model types to decode a Panel document
    import panel.models  # noqa: F401
    import panel.models.markup  # noqa: F401
    import panel.models.widgets  # noqa: F401

    import treeexplorer.ui.enterkey  # noqa: F401  (the page's own JS component: its data model type)


FRONT_MARKER = "#1 cart"  # in a page's text once its default run's front is drawn


def has_front(text: str) -> bool:
    return FRONT_MARKER in text


@functools.cache
def has_property(cls, name: str) -> bool:
    """Whether Bokeh model class ``cls`` has property ``name`` (asked once per class and name)."""
    return name in cls.properties()


def _texts(doc) -> list[str]:
    """The non-empty texts of a (client-side) document's models.

    Asks each model class once whether it has a ``text`` property: ``getattr(model, "text", None)`` on one
    without spends milliseconds building a did-you-mean message, and this runs after every message the
    server sends (it used to be most of the load client's CPU, competing with the server it measures).
    """
    return [m.text for m in doc.models if has_property(type(m), "text") and isinstance(m.text, str) and m.text]


def wait_until(session, done, timeout: float) -> None:
    """Run a Bokeh client session's loop until ``done()`` holds; ``TimeoutError`` after ``timeout`` seconds.

    The loop applies the server's patches as they arrive (``force_roundtrip`` would drop the patches that
    arrive while it waits for its own reply).
    """
    conn = session._connection
    timer = conn._loop.call_later(timeout, conn._loop.stop)
    try:
        conn._loop_until(done)
    finally:
        conn._loop.remove_timeout(timer)
    if not done():
        raise TimeoutError("the expected change did not arrive in time")


def wait_text(session, pred, timeout: float) -> None:
    """Run the session's loop until one of its document's texts satisfies ``pred``."""
    wait_until(session, lambda: any(pred(t) for t in _texts(session.document)), timeout)


def _session_text(url: str, marker: str) -> str:
    from bokeh.client import pull_session

    _client_models()

    with pull_session(url=url) as session:
        for text in _texts(session.document):
            if marker in text:
                return text
    raise RuntimeError(f"{marker} not found at {url}")


def open_session(url: str, timeout: float = 120.0) -> float:
    """Open one Explorer session (the server builds the page and solves the default run), then close it.

    Returns the seconds it took; raises when the page has no front.
    """
    from bokeh.client import pull_session

    _client_models()
    t0 = time.perf_counter()
    with pull_session(url=f"{url}/explorer") as session:
        # the server solves the default run in the background after building the page: wait for its front
        try:
            wait_text(session, has_front, timeout)
        except TimeoutError:
            raise RuntimeError(f"the session's page shows no front ({FRONT_MARKER} missing)") from None
    return time.perf_counter() - t0


def settle(server: Server, timeout: float = 20.0) -> dict:
    """Wait until closed sessions are discarded (no job, nothing queued) and return the final counters."""
    deadline = time.time() + timeout
    while True:
        time.sleep(1.0)  # > unused-session-lifetime + check interval
        stats = server.app_stats()
        if (stats["running"] == stats["queued"] == stats["jobs"] == 0) or time.time() > deadline:
            return stats


def soak(n_sessions: int, parallel: int, warmup: int, max_seconds: float, extra_args=(), verbose=True) -> dict:
    """Open/close ``warmup`` then ``n_sessions`` sessions; resources after warm-up and at the end."""
    out = {"errors": [], "durations": []}
    with Server(extra_args) as server:
        server.wait_ready()
        t_start = time.time()

        def batch(n: int) -> None:
            with ThreadPoolExecutor(parallel) as pool:
                futures = [pool.submit(open_session, server.url) for _ in range(n)]
                for f in futures:
                    try:
                        out["durations"].append(f.result())
                    except Exception as exc:
                        out["errors"].append(repr(exc))

        batch(warmup)
        settle(server)
        out["before"] = server.resources()
        if verbose:
            print(f"after {warmup} warm-up sessions: {out['before']}", flush=True)
        done = 0
        step = max(parallel, 10)
        while done < n_sessions and time.time() - t_start < max_seconds:
            n = min(step, n_sessions - done)
            batch(n)
            done += n
            if verbose:
                print(f"  {done:4d} sessions: {server.resources()}", flush=True)
        out["sessions"] = done
        out["stats"] = settle(server)
        out["after"] = server.resources()
        out["log"] = server.log()
    return out


def growth(before: dict, after: dict) -> dict:
    return {k: (after[k] - before[k]) / before[k] for k in before}


def flat(before: dict, after: dict) -> dict:
    """Which resources stayed flat: within 10 %, with a small absolute slack on counts (a reading taken while a
    websocket or a pool worker is open may count one more; a leak grows with the sessions instead)."""
    return {
        "threads": after["threads"] <= max(before["threads"] * 1.10, before["threads"] + 2),
        "fds": after["fds"] <= max(before["fds"] * 1.10, before["fds"] + 3),
        "rss_mb": after["rss_mb"] <= before["rss_mb"] * 1.10,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_summary_argument(ap)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=3, help="sessions open at the same time")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--max-seconds", type=float, default=900)
    ap.add_argument("--num-threads", type=int, default=None, help="pass --num-threads N to panel serve")
    args = ap.parse_args(argv)
    if not Path("/proc/self/status").exists():
        print("skip: needs /proc (Linux)")
        return 0
    extra = ["--num-threads", str(args.num_threads)] if args.num_threads is not None else []
    t0 = time.time()
    r = soak(args.sessions, args.parallel, args.warmup, args.max_seconds, extra)
    g = growth(r["before"], r["after"])
    d = sorted(r["durations"])
    la = os.getloadavg()
    print(f"\nload average (uptime) at the end: {la[0]:.1f} {la[1]:.1f} {la[2]:.1f} on {os.cpu_count()} CPUs")
    print(f"{r['sessions']} sessions after {args.warmup} warm-up, {args.parallel} at a time, {time.time() - t0:.0f} s")
    print(f"session open+solve+close: median {d[len(d) // 2]:.2f} s, max {d[-1]:.2f} s")
    print("| measure | after warm-up | at the end | change |")
    print("|---|---|---|---|")
    for k in ("threads", "fds", "rss_mb"):
        print(f"| {k} | {r['before'][k]:.0f} | {r['after'][k]:.0f} | {100 * g[k]:+.1f} % |")
    print(f"scheduler/jobs at the end: {r['stats']}")
    print(f"errors: {len(r['errors'])} {r['errors'][:3]}")
    tracebacks = r["log"].count("Traceback")
    print(f"tracebacks in the server log: {tracebacks}")
    ok = (
        not r["errors"]
        and tracebacks == 0
        and all(flat(r["before"], r["after"]).values())
        and r["stats"]["jobs"] == r["stats"]["running"] == r["stats"]["queued"] == 0
    )
    print("PASS" if ok else "FAIL")
    summary = Summary(args.summary)
    summary.add(
        f"{r['sessions']} sessions opened and closed: threads, files, memory flat; no errors",
        "yes" if ok else "NO",
        "yes",
        ok,
    )
    summary.write()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
