"""Helpers shared by the browser tests: chromium, a served app, the offline guard, screenshots."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM = Path("/usr/bin/chromium")
# without the background-networking flags Chromium itself keeps dialling Google's hosts (not the page's
# doing, and invisible to the page's request hook); --headless is Playwright's default
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "chrome-extension", "devtools"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_file(name: str) -> str:
    """``name`` with the xdist worker's id before its suffix (``panel-serve-gw1.log``): two workers' servers
    never write into one log."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return name
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}-{worker}{dot}{suffix}" if dot else f"{name}-{worker}"


def is_local(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in LOCAL_SCHEMES or (parsed.hostname or "") in LOCAL_HOSTS


@contextlib.contextmanager
def served_app(extra_args=(), env_extra=None, log_name="panel-serve.log"):
    """``panel serve apps/explorer.py`` on a free local port with the stand-in solvers; yields (url, log path)."""
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(ROOT)]),
        "TREEEXPLORER_PLUGINS": "fakes",
        "TREEEXPLORER_SOLVER": "uigreedy",
        **(env_extra or {}),
    }
    cmd = [
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
        # forget closed sessions within seconds (default: minutes).  Not much shorter: a page still loading
        # has no websocket yet, and a session discarded then is rebuilt from its token without the page's
        # local resource paths, so its stylesheets would point at Panel's CDN (the offline guard fails).
        "--check-unused-sessions",
        "500",
        "--unused-session-lifetime",
        "15000",
        *extra_args,
    ]
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / worker_file(log_name)
    log = open(log_path, "wb")  # a file, not a pipe: a full pipe would block the server
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    import pytest  # here, not at the top: benchmarks/bench_ui.py imports this module without pytest installed

    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:  # a static file: answers once the server listens, without building a whole session
                urllib.request.urlopen(f"http://127.0.0.1:{port}/static/js/bokeh.min.js", timeout=5).read(1)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("panel serve exited:\n" + log_path.read_text(errors="replace"))
                time.sleep(0.3)
        else:
            pytest.fail("panel serve did not answer within 90 s")
        yield f"http://127.0.0.1:{port}/explorer", log_path
    finally:
        stop_server(proc)
        log.close()


def stop_server(proc: subprocess.Popen, wait_s: float = 10) -> None:
    """End a server the test started: SIGTERM (it shuts down cleanly), SIGKILL when still up after ``wait_s``."""
    proc.terminate()
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Offline:
    """Every request of a browser context: local ones go through, any other is refused and remembered."""

    def __init__(self):
        self.refused: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if is_local(url):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()

    def attach(self, ctx) -> None:
        ctx.route("**/*", self.route)
        # websockets are not routed by `route`: watch them on every page of the context
        ctx.on(
            "page", lambda pg: pg.on("websocket", lambda ws: None if is_local(ws.url) else self.refused.append(ws.url))
        )


def shot(page, name: str, full_page: bool = True) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)


# The prelude of the page scripts that read Bokeh's views: every view of the page, in ``views``.
ALL_VIEWS_JS = """
  const views = [];
  const walk = v => { views.push(v); if (v.child_views) for (const c of v.child_views) walk(c); };
  for (const v of Object.values(Bokeh.index)) walk(v);
"""

# The plot views drawing the Pareto train points with their data (``pointViews``: [view, data] pairs), after
# ``ALL_VIEWS_JS``: shared by the scripts below.
_POINT_VIEWS = (
    ALL_VIEWS_JS
    + """  const pointViews = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.tree && d.train_accuracy && d.run_id) pointViews.push([v, d]);
    }
  }
"""
)

# Screen positions of the Pareto plot's train points, read from Bokeh's own scales.
POINTS_JS = (
    "() => {"
    + _POINT_VIEWS
    + """
  const out = [];
  for (const [v, d] of pointViews) {
    const rect = v.el.getBoundingClientRect();
    const xk = d.x ? "x" : Object.keys(d).find(k => ["splits", "leaves", "depth", "avg_tests"].includes(k));
    for (let i = 0; i < d.tree.length; i++) {
      out.push({run: d.run_id[i], tree: d.tree[i], splits: d.splits ? d.splits[i] : null,
                leaves: d.leaves ? d.leaves[i] : null, proven: d.proven ? d.proven[i] : null,
                x: rect.x + v.frame.x_scale.compute(d[xk][i]),
                // drawn at y (a 0-split tree below the accuracy frame sits on its edge)
                y: rect.y + v.frame.y_scale.compute(d.y ? d.y[i] : d.train_accuracy[i])});
    }
  }
  return out;
}"""
)

# Bold node labels (tests and leaf classes) drawn by the tree view, in node order.
TREE_TEXTS_JS = """() => {
  const out = [];
  const walk = v => {
    const d = v.model && v.model.data_source && v.model.data_source.data;
    const bold = v.model && v.model.glyph && (v.model.glyph.text_font_style || {}).value === "bold";
    if (d && d.text && bold) out.push(...Array.from(d.text));
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""

# Every text column of the tree view's sources: node tests / hover texts, edge labels, class counts.
TREE_SOURCE_JS = """() => {
  const out = {test: [], text: [], majority: [], classes: []};
  const walk = v => {
    const d = v.model && v.model.data_source && v.model.data_source.data;
    for (const k of Object.keys(out)) if (d && d[k]) out[k].push(...Array.from(d[k]));
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""

# The Pareto plot's x-axis label as drawn.
AXIS_LABEL_JS = """() => {
  const out = [];
  const walk = v => {
    if (v.model && v.model.type === "LinearAxis" || (v.model && v.model.constructor.name === "LinearAxis"))
      out.push(v.model.axis_label);
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""


# Scroll the Pareto plot (the view drawing the train points) into the window when it is not wholly in it.
PLOT_INTO_VIEW_JS = (
    "() => {"
    + _POINT_VIEWS
    + """
  for (const [v] of pointViews) {
    const r = v.el.getBoundingClientRect();
    if (r.top < 0 || r.bottom > window.innerHeight) v.el.scrollIntoView({block: "nearest", behavior: "instant"});
    return true;
  }
  return false;
}"""
)


def settled(page, js: str | None = None, timeout: float = 15.0, gap_ms: int = 300) -> list[dict]:
    """The train points' screen positions (``js``: ``POINTS_JS`` by default) once they stop moving.

    The plot rescales when late data arrives (the exact front's reference line widens the axes a few seconds
    after the run), so positions read just before then send a click beside its point.  Two reads ``gap_ms``
    apart must agree to the pixel; after ``timeout`` s the last read is returned.
    """
    js = js or POINTS_JS
    key = lambda pts: [(p["run"], p["tree"], round(p["x"]), round(p["y"])) for p in pts]  # noqa: E731
    pts = page.evaluate(js)
    deadline = time.time() + timeout
    while time.time() < deadline:
        page.wait_for_timeout(gap_ms)
        again = page.evaluate(js)
        if pts and key(again) == key(pts):
            return again
        pts = again
    return pts


def stable_box(locator, timeout: float = 15.0, gap_ms: int = 200) -> dict | None:
    """``locator``'s bounding box once it stops moving: two reads ``gap_ms`` apart agree to the pixel (a card
    drawn after a scroll, a layout still growing under load); after ``timeout`` s the last read is returned."""
    key = lambda b: b and tuple(round(b[k]) for k in ("x", "y", "width", "height"))  # noqa: E731
    box = locator.bounding_box()
    deadline = time.time() + timeout
    while time.time() < deadline:
        locator.page.wait_for_timeout(gap_ms)
        again = locator.bounding_box()
        if box is not None and key(again) == key(box):
            return again
        box = again
    return box


def wait_until(page, cond, timeout: float = 15.0, every_ms: int = 100) -> bool:
    """Poll ``cond()`` until it holds (True) or ``timeout`` s pass (False): a wait on a condition, not a fixed pause
    (:func:`waiting.wait_until`, the page running between two asks)."""
    import waiting  # here: tests/ is on pytest's path, not on benchmarks/bench_ui.py's

    try:
        waiting.wait_until(cond, timeout, every=every_ms / 1000, pause=lambda s: page.wait_for_timeout(s * 1000))
    except AssertionError:
        return False
    return True


def hover_point(page, run: int, tree: int, selector: str, tries: int = 3, timeout_ms: int = 8_000):
    """Hover the train point of ``(run, tree)`` until ``selector`` (e.g. its tooltip) is visible; returns it.

    The point is looked up again right before each hover: a click on a point scrolls the selected tree's card
    into view, and a late notice (the exact front arriving) can move the page, so coordinates read
    before may point elsewhere.
    """
    target = page.locator(selector).first
    for attempt in range(tries):
        page.evaluate(PLOT_INTO_VIEW_JS)
        pt = next(p for p in settled(page) if p["run"] == run and p["tree"] == tree)
        page.mouse.move(5, 5)
        page.mouse.move(pt["x"], pt["y"] + 1)
        try:
            target.wait_for(timeout=timeout_ms)
            break
        except Exception:
            if attempt == tries - 1:
                raise
    return target


# The text of the whole page, shadow roots included (Bokeh draws its panes inside them), without styles and scripts.
PAGE_TEXT_JS = """() => {
  const out = [];
  const walk = root => {
    for (const node of root.childNodes) {
      if (node.nodeType === Node.TEXT_NODE) out.push(node.textContent);
      else if (node.nodeType === Node.ELEMENT_NODE && !["STYLE", "SCRIPT", "LINK"].includes(node.tagName)) {
        if (node.shadowRoot) walk(node.shadowRoot);
        walk(node);
      }
    }
  };
  walk(document.body);
  return out.join(" ");
}"""
