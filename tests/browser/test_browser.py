"""Playwright + Debian's chromium against ``panel serve apps/explorer.py`` (the real app file).

The served process imports ``fakes`` (``TREEEXPLORER_PLUGINS``) so the tests do not depend on which
solvers have landed; screenshots of the main states go to ``test-artifacts/``.
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
# without the background-networking flags Chromium keeps dialling Google's hosts, which this closed network
# refuses; --headless is Playwright's default
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

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

# Screen positions of the Pareto plot's train points, read from Bokeh's own scales.
POINTS_JS = """() => {
  const views = [];
  const walk = v => { views.push(v); if (v.child_views) for (const c of v.child_views) walk(c); };
  for (const v of Object.values(Bokeh.index)) walk(v);
  const out = [];
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    const rect = v.el.getBoundingClientRect();
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (!d || !d.tree || !d.train_accuracy || !d.run_id) continue;
      const xk = d.x ? "x" : Object.keys(d).find(k => ["splits", "leaves", "depth", "avg_tests"].includes(k));
      for (let i = 0; i < d.tree.length; i++) {
        out.push({run: d.run_id[i], tree: d.tree[i], splits: d.splits ? d.splits[i] : null,
                  x: rect.x + v.frame.x_scale.compute(d[xk][i]),
                  y: rect.y + v.frame.y_scale.compute(d.train_accuracy[i])});
      }
    }
  }
  return out;
}"""

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(ROOT)]),
        "TREEEXPLORER_PLUGINS": "fakes",
        "TREEEXPLORER_SOLVER": "uigreedy",
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
        # forget closed sessions within seconds (default: minutes); not shorter: a page still loading
        # has no websocket yet and would be discarded too
        "--check-unused-sessions",
        "500",
        "--unused-session-lifetime",
        "5000",
    ]
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "panel-serve.log"
    log = open(log_path, "wb")  # a file, not a pipe: a full pipe would block the server
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/explorer"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:  # a static file: answers once the server listens, without building a whole session
            urllib.request.urlopen(f"http://127.0.0.1:{port}/static/js/bokeh.min.js", timeout=5).read(1)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("panel serve exited:\n" + log_path.read_text(errors="replace"))
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("panel serve did not answer within 60 s")
    yield url, log_path
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def page(server):
    url, _ = server
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1300}, accept_downloads=True)
        pg = ctx.new_page()
        # generous: on a fresh machine the first session also compiles numba kernels (cached afterwards)
        pg.goto(url, timeout=180_000)
        pg.wait_for_selector("text=Pareto front", timeout=180_000)
        yield pg
        browser.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def points(page, wait: float = 15.0, runs: set | None = None) -> list[dict]:
    """Train points on the canvas, waiting until some (or exactly the ``runs``) are drawn."""
    deadline = time.time() + wait
    pts = []
    while time.time() < deadline:
        pts = page.evaluate(POINTS_JS)
        if pts and (runs is None or {p["run"] for p in pts} == runs):
            return pts
        time.sleep(0.2)
    return pts


def test_app_loads_with_a_default_front(page):
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    pts = points(page)
    assert len({p["tree"] for p in pts}) == 4  # greedy depths 0..3
    assert page.get_by_text("Selected tree").count() == 1
    shot(page, "01_loaded")


def test_run_adds_a_front(page):
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=30_000)
    assert {p["run"] for p in points(page, runs={1, 2})} == {1, 2}
    shot(page, "02_second_run")


def test_clicking_a_point_shows_its_tree(page):
    pt = next(p for p in points(page) if p["run"] == 1 and p["splits"] == 1)
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector("text=tree 1: 1 splits", timeout=10_000)
    # the drawing itself, not only its caption: one test and two leaves in the tree view's glyphs
    page.wait_for_function(
        f"() => {{ const t = ({TREE_TEXTS_JS})(); return t.length === 3 && "
        "t[0].includes('petal_length') && !t.slice(1).some(s => s.includes('≤')); }",
        timeout=10_000,
    )
    page.wait_for_timeout(300)  # let the canvas repaint before the screenshot
    shot(page, "03_point_selected")


def _download(page, label: str) -> bytes:
    with page.expect_download(timeout=20_000) as info:
        page.get_by_role("button", name=label, exact=True).click()
    path = info.value.path()
    data = Path(path).read_bytes()
    (ARTIFACTS / info.value.suggested_filename).write_bytes(data)
    return data


def test_png_and_rules_downloads_are_valid(page):
    from PIL import Image

    png = _download(page, "PNG")
    img = Image.open(io.BytesIO(png))
    img.load()
    assert img.format == "PNG" and img.width > 200 and "iris" in img.text["Title"]
    rules = _download(page, "Rules").decode("utf-8")
    assert rules.startswith("# dataset: iris") and "IF petal_length" in rules


def test_cancel_keeps_a_partial_front(page):
    page.locator("select").nth(2).select_option("uislow")  # dataset, target, solver
    page.wait_for_selector("text=One tree per step", timeout=10_000)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=growing", timeout=10_000)
    time.sleep(0.8)
    shot(page, "04_running")
    t0 = time.time()
    page.get_by_role("button", name="Cancel", exact=True).click()
    page.wait_for_selector("text=cancelled: kept", timeout=10_000)
    assert time.time() - t0 < 5  # includes the browser round trips; the job itself stops in < 1 s
    assert page.get_by_text("uislow").count() >= 1
    assert {p["run"] for p in points(page, runs={1, 2, 3})} == {1, 2, 3}
    shot(page, "05_cancelled")


def test_invalid_upload_shows_a_message(page):
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "broken.csv", "mimeType": "text/csv", "buffer": b"just_one_column\n1\n2\n"}]
    )
    page.wait_for_selector("text=needs at least one feature column", timeout=10_000)
    shot(page, "06_invalid_upload")


def test_valid_upload_loads_the_table(page):
    csv = (ROOT / "assets" / "iris.csv").read_bytes()
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "my_flowers.csv", "mimeType": "text/csv", "buffer": csv}]
    )
    page.wait_for_selector("text=/my_flowers.*150 rows/", timeout=10_000)
    assert page.get_by_text("needs at least one feature column").count() == 0  # the old alert is gone
    # the sidebar shows what is loaded (the app sets these selects itself)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("select").nth(0)).to_have_value(re.compile("my_flowers"), timeout=10_000)
    expect(page.locator("select").nth(1)).to_have_value("species", timeout=10_000)
    page.locator("select").nth(2).select_option("uigreedy")
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#4 uigreedy", timeout=30_000)
    shot(page, "07_uploaded_table")


def test_closing_the_tab_stops_its_job(server, page):
    url, log_path = server
    pg = page.context.new_page()
    pg.goto(url)
    pg.wait_for_selector("text=#1 uigreedy", timeout=60_000)
    pg.locator("select").nth(2).select_option("uislow")
    pg.wait_for_selector("text=One tree per step", timeout=10_000)
    pg.locator(".bk-input-group:has-text('Step') input").fill("2")
    pg.keyboard.press("Tab")
    pg.get_by_role("button", name="Run", exact=True).click()
    pg.wait_for_selector("text=growing", timeout=10_000)
    pg.close()
    deadline = time.time() + 20
    while time.time() < deadline and "session closed, cancelled its job" not in log_path.read_text(errors="replace"):
        time.sleep(0.3)
    assert "session closed, cancelled its job" in log_path.read_text(errors="replace")


# Every text column of the tree view's sources: node tests / hover texts and edge labels.
TREE_SOURCE_JS = """() => {
  const out = {test: [], text: []};
  const walk = v => {
    const d = v.model && v.model.data_source && v.model.data_source.data;
    if (d && d.test) out.test.push(...Array.from(d.test));
    if (d && d.text) out.text.push(...Array.from(d.text));
    if (v.child_views) for (const c of v.child_views) walk(c);
    if (v.renderer_views) for (const [, rv] of v.renderer_views) walk(rv);
  };
  for (const v of Object.values(Bokeh.index)) walk(v);
  return out;
}"""


def test_a_multiway_tree_from_branches_is_drawn_with_one_branch_per_category(page):
    # the real BRANCHES solver (compiled by the non-browser tests that ran before) on the bundled car table
    page.locator("select").nth(0).select_option("car")
    page.wait_for_selector("text=/car.*1,728 rows/", timeout=30_000)
    expect = pytest.importorskip("playwright.sync_api").expect
    expect(page.locator("select").nth(1)).to_have_value("class", timeout=10_000)  # car's target, not iris's
    page.locator("select").nth(2).select_option("branches")
    page.wait_for_selector("text=multiway", timeout=10_000)
    page.get_by_role("button", name="Run", exact=True).click()
    label = page.wait_for_selector("text=/#\\d+ branches/", timeout=180_000).text_content()
    run = int(re.search(r"#(\d+) branches", label).group(1))
    deadline = time.time() + 30
    while not (mine := [p for p in points(page) if p["run"] == run]) and time.time() < deadline:
        time.sleep(0.2)
    pt = min((p for p in mine if p["splits"]), key=lambda p: p["splits"])
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector(f"text=tree {pt['tree']}: {pt['splits']} splits", timeout=10_000)
    page.wait_for_function(f"() => ({TREE_SOURCE_JS})().test.some(t => t.includes('one per category'))", timeout=10_000)
    drawn = page.evaluate(TREE_SOURCE_JS)
    # a multiway node of car: every category of its column labels one edge
    categories = {
        "buying": {"vhigh", "high", "med", "low"},
        "maint": {"vhigh", "high", "med", "low"},
        "doors": {"2", "3", "4", "5more"},
        "persons": {"2", "4", "more"},
        "lug_boot": {"small", "med", "big"},
        "safety": {"low", "med", "high"},
    }
    multi = [t.split(":")[0] for t in drawn["test"] if "one per category" in t]
    assert multi and all(categories[col] <= set(drawn["text"]) for col in multi)
    # hovering the point: the tooltip (with the solver's long info line) wraps inside the plot's width
    page.mouse.move(pt["x"], pt["y"] + 1)
    tip = page.locator(".bk-Tooltip, .bk-tooltip").first
    tip.wait_for(timeout=10_000)
    box = tip.bounding_box()
    assert box is not None and box["width"] <= 420
    shot(page, "08_multiway_tree_hover")
