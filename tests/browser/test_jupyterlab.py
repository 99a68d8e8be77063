"""The quickstart notebook in a real JupyterLab (Debian's chromium): Run All, click a Pareto point of the inline
Explorer, switch the complexity axis to Depth, and check that the screen follows, with no traceback in any
output and nothing fetched from outside localhost (``offline`` guard, conftest)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest
from browser_helpers import (
    ALL_VIEWS_JS,
    ARTIFACTS,
    AXIS_LABEL_JS,
    CHROMIUM,
    POINTS_JS,
    ROOT,
    free_port,
    settled,
    shot,
    stop_server,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    pytest.importorskip("jupyterlab")
    work = tmp_path_factory.mktemp("lab")
    shutil.copy(NOTEBOOK, work / "quickstart.ipynb")  # the run saves outputs: never into the checkout
    port = free_port()
    home = work / "home"  # a private Jupyter config/runtime: no user settings, workspaces or news
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--allow-root",  # CI containers run as root
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={work}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",  # the default one asks PyPI
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    settings = home / "config" / "lab" / "user-settings" / "@jupyterlab"
    # every cell stays in the DOM (the default windowing drops cells scrolled out of view); no news prompt
    for rel, value in {
        "notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
    }.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(json.dumps(value))
    ARTIFACTS.mkdir(exist_ok=True)
    log_path = ARTIFACTS / "jupyterlab.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/api/status", timeout=5).read()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("jupyter lab exited:\n" + log_path.read_text(errors="replace"))
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("jupyter lab did not answer within 120 s")
    yield base, work
    stop_server(proc, 15)
    log.close()


KERNEL_READY_JS = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle' && k.connectionStatus === 'connected';
}"""

# The Explorer is one of the notebook's Bokeh roots (the front plot cell has Pareto points too).
_ALL_ROOTS = "for (const v of Object.values(Bokeh.index)) walk(v);"
# (each display also adds small roots of its own: comm manager, notifications; take the last root with a plot)
_LAST_ROOT = """walk(Object.values(Bokeh.index).filter(r => {
    const vs = []; const w = v => { vs.push(v); if (v.child_views) for (const c of v.child_views) w(c); }; w(r);
    return vs.some(v => v.frame && v.renderer_views);
  }).at(-1));"""
# The quickstart's Explorer is its FIRST root with a plot (the front plot of section 3 comes after it).
_FIRST_ROOT = _LAST_ROOT.replace(".at(-1)", ".at(0)")
assert _ALL_ROOTS in POINTS_JS
EXPLORER_POINTS_JS = POINTS_JS.replace(_ALL_ROOTS, _FIRST_ROOT)
# ``views``: every Bokeh view of the Explorer's root (``views[0].model.document`` is its document)
_EXPLORER_VIEWS = ALL_VIEWS_JS.replace(_ALL_ROOTS, _FIRST_ROOT)

HELD_OUT_JS = (
    "() => {"
    + _EXPLORER_VIEWS
    + """
  let n = 0;
  for (const m of views[0].model.document.all_models)  // the held-out crosses: train columns without run_id
    if (m.data && m.data.tree && m.data.test_accuracy && !m.data.run_id && m.data.x) n += m.data.x.length;
  return n;
}"""
)

SCROLL_TO_PLOT_JS = (
    "() => {"
    + _EXPLORER_VIEWS
    + """
  const plot = views.find(v => v.frame && v.renderer_views && [...v.renderer_views.keys()].some(
    m => m.data_source && m.data_source.data && m.data_source.data.run_id));
  plot.el.scrollIntoView({block: "center"});
}"""
)

# Whether Panel's comm for the Explorer's document would send a change now (not waiting for the kernel's
# receipt of an earlier message, or waited past its timeout).  Private state of panel's CommManager
# (models/comm_manager.ts): true when it is not found, so a Panel that drops it does not block the test.
COMM_READY_JS = (
    "() => {"
    + _EXPLORER_VIEWS
    + """
  for (const m of views[0].model.document.all_models)
    if (m._event_buffer !== undefined && m._blocked !== undefined)
      return !m._blocked || Date.now() > m._timeout;
  return true;
}"""
)

# The Explorer's selected train points and its comm's queue, for a failure message.
COMM_STATE_JS = (
    "() => {"
    + _EXPLORER_VIEWS
    + """
  const out = {selected: [], comm: null};
  for (const m of views[0].model.document.all_models) {
    if (m.data && m.data.run_id && m.selected) out.selected.push(...m.selected.indices);
    if (m._event_buffer !== undefined)
      out.comm = {blocked: m._blocked, queued: m._event_buffer.length, ms_past_timeout: Date.now() - m._timeout};
  }
  return out;
}"""
)

# What the kernel's Explorer holds (run in the kernel through JupyterLab's API), for a failure message.
KERNEL_STATE_JS = """async () => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const f = k.requestExecute({store_history: false, code:
    "print('selected', explorer.controller.selected, 'indices', list(explorer.front.pareto.points.selected.indices))"});
  let out = "";
  f.onIOPub = m => { if (m.content.text) out += m.content.text; if (m.content.evalue) out += m.content.evalue; };
  await f.done;
  return out.trim();
}"""

CELLS_JS = """() => Array.from(document.querySelectorAll('.jp-Notebook .jp-CodeCell')).map(c => ({
  prompt: (c.querySelector('.jp-InputPrompt') || {}).textContent || '',
  source: (c.querySelector('.jp-InputArea-editor') || {}).textContent || '',
  text: (c.querySelector('.jp-OutputArea') || {}).innerText || '',
  stderr: Array.from(c.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')).map(e => e.innerText),
  canvases: (function deep(root) {  // canvases inside nested shadow roots (Panel layout > Bokeh figure)
    let n = root.querySelectorAll('canvas').length;
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) n += deep(e.shadowRoot);
    return n;
  })(c.querySelector('.jp-OutputArea') || document.createElement('div')),
}))"""


def test_quickstart_runs_in_jupyterlab_and_the_explorer_follows_clicks(lab, new_page):
    base, work = lab
    page = new_page(f"{base}/lab/tree/quickstart.ipynb?reset", 1600, 1000, wait_for=".jp-Notebook .jp-CodeCell")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=120_000)
    # the notebook's kernel is started AND its websocket connected: a Run All sent earlier is silently dropped
    page.wait_for_function(KERNEL_READY_JS, timeout=120_000, polling=500)
    failed = []  # local files that did not load (e.g. Panel's stylesheets from the server's panel_dist/)
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    print("lab open; run all", flush=True)
    # not awaited: the command's promise settles only when every cell has run (the wait below has the timeout)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    # every code cell has run: a number in its prompt, no "[*]"
    page.wait_for_function(
        f"() => ({CELLS_JS})().every(c => /\\[\\d+\\]/.test(c.prompt))", timeout=300_000, polling=1000
    )
    print("all cells ran", flush=True)
    shot(page, "11_jupyterlab_run_all_done", full_page=False)
    cells = page.evaluate(CELLS_JS)
    outputs = " ".join(c["text"] for c in cells)
    assert "Traceback" not in outputs and "Error" not in outputs, outputs[-2000:]
    assert not [s for c in cells for s in c["stderr"] if "Traceback" in s or "Error" in s]
    # the "front, inline" cell draws a plot (HoloViews' notebook display is loaded), not a text repr
    front_cell = next(c for c in cells if "front_plot(front, mid" in c["source"])
    assert ":Overlay" not in front_cell["text"]
    page.wait_for_function(
        f"() => ({CELLS_JS})().some(c => c.source.includes('front_plot(front, mid') && c.canvases > 0)",
        timeout=30_000,
        polling=500,
    )
    # the inline Explorer: its default run is drawn
    explorer = page.locator(".jp-CodeCell:has-text('tx.Explorer(df')")
    explorer.scroll_into_view_if_needed()
    page.wait_for_function(
        f"() => ({EXPLORER_POINTS_JS})().some(p => p.run === 1 && p.leaves !== null)", timeout=120_000, polling=500
    )
    # the Explorer's cell is taller than the window: bring its Pareto plot into view before clicking
    page.evaluate(SCROLL_TO_PLOT_JS)
    page.wait_for_timeout(500)
    shot(page, "11_jupyterlab_after_run_all", full_page=False)
    # click a point of the Explorer's plot: its tree card follows
    # positions once the plot has stopped moving: the exact front arriving after the run rescales its axes
    pts = [p for p in settled(page, EXPLORER_POINTS_JS) if p["run"] == 1]
    pt = next(p for p in pts if p["splits"] == 1)
    # Panel's comm may still wait for the kernel's receipt of the page's first changes (sent while the cell ran;
    # seen lost in CI): until its 5 s timeout a click is only queued, and nothing sends the queue later
    page.wait_for_function(COMM_READY_JS, timeout=30_000, polling=250)
    # The card follows a click.  Once in the full suite (not in 7 runs alone) a click was selected in the browser
    # and sent (comm unblocked, nothing queued) and the card never followed: cause unknown (the kernel's view was
    # not recorded then).  A second click follows; what the first one left is kept in jupyterlab_click.txt.
    states = []
    for attempt in range(2):
        page.mouse.click(pt["x"], pt["y"])
        try:
            page.wait_for_selector("text=/#1 cart.*tree \\d+: 1 split,/", timeout=20_000 * (attempt + 1))
            break
        except Exception:  # say where the click stopped: in the browser, on its way to the kernel, in the kernel
            log = (ARTIFACTS / "jupyterlab.log").read_text(errors="replace")
            errors = [line for line in log.splitlines() if "Error" in line or "Traceback" in line][-10:]
            states.append(
                f"click {attempt + 1}: browser {page.evaluate(COMM_STATE_JS)}; kernel "
                f"{page.evaluate(KERNEL_STATE_JS)!r}; errors in jupyterlab.log {errors}"
            )
            (ARTIFACTS / "jupyterlab_click.txt").write_text("\n".join(states) + "\n")
    else:
        raise AssertionError("card did not follow two clicks: " + " | ".join(states))
    title = page.locator("text=/#1 cart.*tree \\d+: 1 split,/").first.text_content()
    tree_id = int(title.split(", tree ")[1].split(":")[0])
    # the metrics table (the Explorer's own) shows the same tree as the title: Panel sends each pane's change in a
    # message of its own, so the title can be on the page a moment before the table follows (read once, the
    # table still showed the tree selected before the click: "9 of 13")
    metrics = explorer.locator("table", has_text="train accuracy").last
    pytest.importorskip("playwright.sync_api").expect(metrics).to_contain_text(f"{tree_id} of ", timeout=30_000)
    # switch the complexity axis to Depth: the axis label and the points' positions change on screen (not Leaves:
    # a binary tree has one leaf more than splits, so an autoscaled axis puts every point at the same place)
    before = {(p["run"], p["tree"]): p["x"] for p in page.evaluate(EXPLORER_POINTS_JS)}
    page.get_by_role("button", name="Depth", exact=True).first.click()
    page.wait_for_function(f"() => ({AXIS_LABEL_JS})().includes('Depth')", timeout=30_000)
    after = {(p["run"], p["tree"]): p["x"] for p in page.evaluate(EXPLORER_POINTS_JS)}
    assert after != before
    page.wait_for_timeout(500)
    shot(page, "12_jupyterlab_leaves_axis", full_page=False)
    # untick "held-out points": the held-out crosses leave the plot
    assert page.evaluate(HELD_OUT_JS) > 0
    page.locator(".bk-Checkbox", has_text="held-out points").locator("input[type=checkbox]").last.uncheck()
    page.wait_for_function(f"() => ({HELD_OUT_JS})() === 0", timeout=30_000)
    shot(page, "12_jupyterlab_no_heldout", full_page=False)
    # in a notebook too, a click on a checkbox's label (not only on its 13 px box) ticks it
    cv = explorer.locator(".bk-Checkbox", has_text="Cross-validate").last
    cv.locator(".bk-label").click()
    pytest.importorskip("playwright.sync_api").expect(cv.locator("input")).to_be_checked(timeout=30_000)
    cells = page.evaluate(CELLS_JS)
    outputs = " ".join(c["text"] for c in cells)
    assert "Traceback" not in outputs and "ValueError" not in outputs
    assert not [f for f in failed if "panel_dist" in f], failed
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_timeout(1500)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")  # free the machine
    saved = json.loads((work / "quickstart.ipynb").read_text())
    assert any(c.get("outputs") for c in saved["cells"])  # saved after the run
    assert not [o for c in saved["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]


# -- the three ways into a notebook, each offline: no extension call, plain pn.extension(), pn.ipywidget(...) ------
ROUTE_TABLE = """import time
import numpy as np
import pandas as pd
rng = np.random.default_rng(0)
n = 200
species = rng.choice(["Adelie", "Chinstrap", "Gentoo"], n)
df = pd.DataFrame({
    "species": species,
    "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n),
    "bill_length_mm": np.where(species == "Adelie", 38.0, 47.5) + rng.normal(0, 1.5, n),
    "bill_depth_mm": np.where(species == "Gentoo", 15.0, 18.3) + rng.normal(0, 0.5, n),
    "year": rng.choice([2007, 2008, 2009], n),
})"""
ROUTES = {
    "none": ("import treeexplorer as tx", "explorer"),
    "extension": ("import panel as pn\nimport treeexplorer as tx\n\npn.extension()", "explorer"),
    "ipywidget": ("import panel as pn\nimport treeexplorer as tx", "pn.ipywidget(explorer)"),
}


def route_notebook(route: str) -> dict:
    head, show = ROUTES[route]
    cells = [
        f"{head}\n{ROUTE_TABLE}",
        "explorer = tx.Explorer(df, max_depth=3)",
        f"t0 = time.perf_counter()\n{show}",
        "first = time.perf_counter() - t0\nexplorer2 = tx.Explorer(df, max_depth=2)",
        f"t1 = time.perf_counter()\n{show.replace('explorer', 'explorer2')}",
        "warm = time.perf_counter() - t1\nprint(f'display: first {first:.2f} s, warm {warm:.2f} s')",
    ]
    src = [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in cells]
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return {"cells": src, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}


def kernel_eval(page, code: str) -> str:
    """Run ``code`` in the notebook's kernel (through JupyterLab's API) and return its value's text (or error)."""
    return page.evaluate(
        """async (code) => {
  const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const f = k.requestExecute({store_history: false, code});
  let out = "";
  f.onIOPub = m => {
    if (m.content.text) out += m.content.text;
    if (m.content.data && m.content.data["text/plain"]) out += m.content.data["text/plain"];
    if (m.content.evalue) out += m.content.ename + ": " + m.content.evalue;
  };
  await f.done;
  return out.trim();
}""",
        code,
    )


# The first Explorer's plot: the second root with Pareto points (the notebook holds two Explorers).
FIRST_EXPLORER_POINTS_JS = EXPLORER_POINTS_JS


@pytest.mark.parametrize("route", list(ROUTES))
def test_notebook_routes_are_offline_and_clicks_reach_python(lab, new_page, offline, route):
    base, work = lab
    (work / f"route_{route}.ipynb").write_text(json.dumps(route_notebook(route)))
    # ?reset: a fresh workspace (the server remembers the tabs of earlier tests: Run All would go to one of them)
    url = f"{base}/lab/tree/route_{route}.ipynb?reset"
    page = new_page(url, 1280, 800, wait_for=".jp-Notebook .jp-CodeCell")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=120_000)
    page.wait_for_function(
        f"() => (window.jupyterapp.shell.currentWidget?.context?.path || '').endsWith('route_{route}.ipynb')",
        timeout=60_000,
    )
    page.wait_for_function(KERNEL_READY_JS, timeout=120_000, polling=500)
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    try:
        page.wait_for_function(
            f"() => ({CELLS_JS})().every(c => /\\[\\d+\\]/.test(c.prompt))", timeout=240_000, polling=1000
        )
    except Exception:
        shot(page, f"failed_route_{route}", full_page=False)
        raise AssertionError(
            f"cells did not all run: {[(c['prompt'], c['text'][:200]) for c in page.evaluate(CELLS_JS)]}"
        ) from None
    cells = page.evaluate(CELLS_JS)
    outputs = " ".join(c["text"] for c in cells)
    assert "Traceback" not in outputs and "Error" not in outputs, outputs[-2000:]
    assert not [s for c in cells for s in c["stderr"] if "Traceback" in s or "Error" in s or "extension" in s]
    # both Explorers draw (canvases) with their points
    page.wait_for_function(f"() => ({CELLS_JS})().filter(c => c.canvases > 0).length >= 2", timeout=60_000, polling=500)
    page.evaluate(SCROLL_TO_PLOT_JS)
    pts = settled(page, FIRST_EXPLORER_POINTS_JS)
    assert pts, "the first Explorer's points are drawn"
    timing = next(c["text"] for c in cells if "display: first" in c["text"])
    print(f"route {route}: {timing.strip()}; requests outside localhost: {len(offline.refused)}", flush=True)
    before = kernel_eval(page, "explorer.selected.entry.id")
    target = next(p for p in pts if str(p["tree"]) != before and p["run"] == 1)
    fresh = next(p for p in page.evaluate(FIRST_EXPLORER_POINTS_JS) if p["tree"] == target["tree"] and p["run"] == 1)
    page.wait_for_function(COMM_READY_JS, timeout=30_000)
    page.mouse.click(fresh["x"], fresh["y"])
    deadline = time.time() + 30
    now = before
    while time.time() < deadline and now == before:
        page.wait_for_timeout(500)
        now = kernel_eval(page, "explorer.selected.entry.id")
    page.wait_for_timeout(500)
    shot(page, f"13_jupyterlab_route_{route}", full_page=False)
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")  # the next route's turn
    assert now == str(target["tree"]), (before, now, target)
    assert not offline.refused, offline.refused
