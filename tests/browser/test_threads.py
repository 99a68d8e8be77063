"""The main browser flow under ``panel serve --num-threads 2``: Panel runs callbacks on a thread pool, so every
change to a raw Bokeh model (the Pareto figure, the tree view) must reach its document under the document's
lock.  Two sessions work at once; the server log must stay free of tracebacks (e.g. Bokeh's
"_pending_writes should be non-None when we have a document lock")."""

from __future__ import annotations

import pytest
from browser_helpers import AXIS_LABEL_JS, CHROMIUM, POINTS_JS, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def threaded_server():
    with served_app(["--num-threads", "2"], log_name="panel-serve-threads.log") as s:
        yield s


def test_main_flow_on_the_thread_pool(threaded_server, new_page):
    url, log_path = threaded_server
    pages = [new_page(url), new_page(url)]
    for page in pages:
        page.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    for page in pages:  # both sessions solve at once
        page.get_by_role("button", name="Run", exact=True).click()
    for page in pages:
        page.wait_for_selector("text=#2 uigreedy", timeout=60_000)
    for page in pages:
        page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === 2)", timeout=30_000)
        pt = next(p for p in settled(page) if p["run"] == 2 and p["splits"] == 1)
        page.mouse.click(pt["x"], pt["y"])
        page.wait_for_selector("text=/#2 uigreedy.*tree 1: 1 split/", timeout=30_000)
        page.get_by_role("button", name="Leaves", exact=True).click()
        page.wait_for_function(f"() => ({AXIS_LABEL_JS})().includes('Leaves')", timeout=30_000)
        page.get_by_role("button", name="Remove run #2 ").click()  # remove the selected run
        page.wait_for_selector("text=Click a point of the front to see its tree", timeout=30_000)
    shot(pages[0], "13_thread_pool")
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "_pending_writes" not in log, log[-3000:]


@pytest.fixture(scope="module")
def pool_server():
    with served_app(["--num-threads", "0"], log_name="panel-serve-threads0.log") as s:
        yield s


def test_four_sessions_click_run_at_once(pool_server, new_page):
    """The shared server's scenario (``--num-threads 0``: Panel's default pool): four sessions click Run at the
    same moment.  A poll slower than its period used to run twice at once on the pool, leaving tracebacks in
    the server log; every session gets its run and the log stays clean."""
    url, log_path = pool_server
    pages = [new_page(url) for _ in range(4)]
    for page in pages:
        page.wait_for_selector("text=#1 uigreedy", timeout=180_000)
    for page in pages:
        page.get_by_role("button", name="Run", exact=True).click()
    for page in pages:
        page.wait_for_selector("text=#2 uigreedy", timeout=120_000)
        page.wait_for_function(f"() => ({POINTS_JS})().some(p => p.run === 2)", timeout=60_000)
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "Error" not in log, log[-3000:]
