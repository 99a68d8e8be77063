"""The first page on a new machine: ``treeexplorer app`` on an empty numba cache serves its page at once, the run
bar saying that the cart kernels compile, and draws the first front when they are done; Cancel leaves the wait at
once.  Once the kernels are in, a new page is sent with its front already drawn (README command 1's promise).

One server process with a fresh cache for the whole file: the cart compile (the cheapest, ~15-40 s) is its cost.
The compile is held open (``compile_gate``, a test plug-in) until the visitors' checks are done: they check what
the pages do while the kernels compile, however long the pages take on a busy machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, CHROMIUM, free_port, shot, stop_server

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

COMPILING = "compiling the cart kernels (first use only"
PLACEHOLDER = "The first run is compiling the cart kernels (once per install)…"
# The texts the plot draws on its canvas (Bokeh Labels) and whether each is shown.
LABELS_JS = """() => {
  const out = [];
  for (const d of Bokeh.documents) for (const m of d.all_models)
    if (m.type === "Label" || m.constructor.name === "Label") out.push({text: m.text, visible: m.visible});
  return out;
}"""


@pytest.fixture(scope="module")
def cold_app(tmp_path_factory):
    """``treeexplorer app`` on a free port with an empty numba cache, its cart compile held until the gate file
    exists; yields (url, cache folder, log path, gate file)."""
    tmp = tmp_path_factory.mktemp("cold-app")
    cache = tmp / "numba-cache"
    gate = tmp / "compile-may-end"
    port = free_port()
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(cache),
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
        "TREEEXPLORER_PLUGINS": "compile_gate",
        "TX_TEST_COMPILE_GATE": str(gate),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "first-page-cold.log"
    # --max-jobs 4: the test's three visitors each have a first run waiting for the one compile
    cmd = [sys.executable, "-m", "treeexplorer", "app", "--port", str(port), "--address", "127.0.0.1"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([*cmd, "--no-show", "--max-jobs", "4"], env=env, cwd=tmp, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 120
            while "serving" not in log_path.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("treeexplorer app did not start:\n" + log_path.read_text(errors="replace"))
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/", cache, log_path, gate
        finally:
            gate.touch()
            stop_server(proc)


def _compiled(cache) -> bool:
    """The cart warm-up has finished (it leaves a stamp beside the kernels it cached)."""
    return any(cache.rglob("treeexplorer-warm-cart-*.stamp"))


def test_a_cold_start_serves_the_page_at_once_and_the_front_when_compiled(cold_app, new_page):
    url, cache, log_path, gate = cold_app
    assert COMPILING in log_path.read_text() and "the page opens now" in log_path.read_text()

    # the first visitor: the page (no front yet) while the kernels compile, the run bar saying so
    t0 = time.monotonic()
    first = new_page(url, width=1280, height=900, wait_for=f"text={COMPILING}")
    opened_s = time.monotonic() - t0
    assert not _compiled(cache), "the page waited for the compile"
    expect(first.get_by_role("button", name="Cancel")).to_be_enabled(timeout=60_000)
    # the empty plot says what it waits for (drawn on its canvas: read from Bokeh's models)
    first.wait_for_function(f"() => ({LABELS_JS})().some(l => l.visible && l.text === {PLACEHOLDER!r})")

    # a second visitor meanwhile: its page is sent too (the server's loop is not held by the compile, which runs
    # in worker processes), its controls there within 10 s on a quiet machine, before the compile ends on any
    t0 = time.monotonic()
    with urllib.request.urlopen(url, timeout=60) as resp:
        html = resp.read().decode("utf-8", "replace")
    fetched_s = time.monotonic() - t0
    assert resp.status == 200 and "treeexplorer" in html  # (a served page's content comes over its websocket)
    t0 = time.monotonic()
    second = new_page(url, width=1280, height=900, wait_for=f"text={COMPILING}")
    expect(second.get_by_role("button", name="Cancel")).to_be_enabled(timeout=10_000)
    controls_s = time.monotonic() - t0
    assert not _compiled(cache), f"the second page waited for the compile ({controls_s:.1f} s)"
    quiet = os.getloadavg()[0] < len(os.sched_getaffinity(0))
    assert controls_s < 10 or not quiet, f"the second page's controls took {controls_s:.1f} s on a quiet machine"

    # a third one cancels its first run: it stops at once (the compile goes on, for the next run)
    third = new_page(url, width=1280, height=900, wait_for=f"text={COMPILING}")
    third.get_by_role("button", name="Cancel").click()
    third.wait_for_selector("text=Run stopped: cancelled while the cart kernels compiled", timeout=60_000)
    expect(third.get_by_role("button", name="Run", exact=True)).to_be_enabled(timeout=60_000)
    assert not _compiled(cache), "Cancel waited for the compile"
    shot(first, "first_page_compiling", full_page=False)
    print(
        f"first page in {opened_s:.1f} s, the second's HTML in {fetched_s:.1f} s and its controls in {controls_s:.1f} s"
        f" (kernels still compiling; load {os.getloadavg()[0]:.1f})"
    )

    # Run joins the same compile; so does the tab reloaded meanwhile (the theme switch reloads): its run again
    third.get_by_role("button", name="Run", exact=True).click()
    third.wait_for_selector("text=Run stopped", state="detached", timeout=60_000)
    third.reload(timeout=120_000)
    # (compiling still, or, if the kernels came in meanwhile, the front drawn at once)
    third.locator(f"text={COMPILING}").or_(third.locator("text=/Last run #1 cart/")).wait_for(timeout=120_000)

    # the first front arrives when the kernels are in (the compile may end now)
    assert not _compiled(cache), "the compile ended while held"
    gate.touch()
    first.wait_for_selector("text=/Last run #1 cart/", timeout=300_000)
    assert _compiled(cache)
    assert not first.locator(f"text={COMPILING}").count()
    first.wait_for_function(f"() => !({LABELS_JS})().some(l => l.visible && l.text)", timeout=60_000)
    third.wait_for_selector("text=/Last run #1 cart/", timeout=60_000)
    shot(first, "first_page_front_after_compile", full_page=False)

    # kernels in: a new page is sent with its first front already drawn, nothing running
    warm = new_page(url, width=1280, height=900)
    assert warm.locator("text=/Last run #1 cart/").count() == 1  # in the page as first drawn: no run to wait for
    assert not warm.locator(f"text={COMPILING}").count()
    expect(warm.get_by_role("button", name="Run", exact=True)).to_be_enabled()
    # no traceback through the app's code (the reloaded tab leaves Tornado's and Bokeh's words about its closed
    # websocket in the log)
    log = log_path.read_text(errors="replace")
    ours = [ln for ln in log.splitlines() if ln.lstrip().startswith("File ") and "/treeexplorer/" in ln]
    assert not ours, log[-3000:]
