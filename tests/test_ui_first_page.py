"""A run whose solver must compile first (a cold numba cache) waits for the kernels in a way Cancel can leave, and
joins a compile already under way instead of starting another; outside a server the first front is still solved
before the explorer is returned.  The served page itself: tests/browser/test_browser_first_page.py."""

from __future__ import annotations

import threading

import pytest
from treeexplorer.solvers import Cancelled, Control
from waiting import HANG_S, OnReport

from treeexplorer import warm as tw
from treeexplorer.ui import warm as ui_warm


@pytest.fixture
def slow_compile(monkeypatch):
    """cart's kernels "compile" (a counted toy run that waits for ``release``) instead of loading."""
    state = {"compiles": 0, "release": threading.Event(), "started": threading.Event()}

    def run_toys(name):
        state["compiles"] += 1
        state["started"].set()
        assert state["release"].wait(HANG_S)

    monkeypatch.setattr(tw, "_done", {})
    monkeypatch.setattr(tw, "_run_toys", run_toys)
    monkeypatch.setattr(tw, "_write_stamp", lambda name: None)
    monkeypatch.setattr(tw, "needs_compile", lambda name: True)
    monkeypatch.setattr(tw, "_cold_jobs", lambda name: [])  # no compile workers: the toy run above is the compile
    yield state
    state["release"].set()


def test_cancel_leaves_the_wait_for_a_compile_which_goes_on_once(slow_compile):
    # the app's background warm-up is compiling cart when two runs need it
    warm_up = threading.Thread(target=tw.ensure_warm, args=("cart",))
    warm_up.start()
    assert slow_compile["started"].wait(HANG_S)
    results, reports = {}, []

    def run(name, control):
        try:
            ui_warm.load_kernels("cart", control)
            results[name] = "loaded"
        except Cancelled as exc:
            results[name] = str(exc)

    cancelled, waiting = Control(), Control()
    # each run is in the wait once it reports "compiling" (the wait's first word)
    in_wait = OnReport("compiling"), OnReport("compiling", forward=reports.append)
    cancelled.progress, waiting.progress = in_wait
    threads = [threading.Thread(target=run, args=a) for a in (("cancelled", cancelled), ("waiting", waiting))]
    for t in threads:
        t.start()
    for report in in_wait:
        report.wait()
    cancelled.cancel()
    threads[0].join(HANG_S)
    assert list(results) == ["cancelled"] and "while the cart kernels compiled" in results["cancelled"]
    assert not tw.is_warm("cart") and threads[1].is_alive()  # the compile and the other run go on
    slow_compile["release"].set()
    threads[1].join(HANG_S)
    warm_up.join(HANG_S)
    assert results["waiting"] == "loaded" and tw.is_warm("cart")
    assert slow_compile["compiles"] == 1, "the runs compiled the kernels again instead of joining the warm-up"
    # the waiting run said what it waited for, in the run bar's words
    assert reports and reports[0]["phase"] == "compiling" and reports[0]["solver"] == "cart" and reports[0]["cold"]


def test_the_first_run_outside_a_server_waits_for_its_front_and_a_notebook_says_why(monkeypatch, capsys):
    from treeexplorer.ui import Explorer
    from treeexplorer.ui import explorer as ex_module

    monkeypatch.setattr(ui_warm, "must_compile", lambda solver: True)  # as on a new machine
    monkeypatch.setattr(ex_module, "in_kernel", lambda: True)
    monkeypatch.setattr(tw, "cpu_share", lambda processes=1: 0.5)  # the estimate, as the load is now: fixed here
    explorer = Explorer(dataset="iris", solver="cart", max_depth=2)
    assert len(explorer.controller.runs) == 1 and not explorer.controller.running  # the front, at once
    assert capsys.readouterr().out == f"{tw.compile_notice('cart')}; the explorer shows when it is done\n"


def test_the_empty_plot_says_the_first_run_compiles_until_its_front_arrives():
    from treeexplorer.ui.explorer import Explorer

    e = Explorer(dataset="iris", run_default=False)
    c, label = e.controller, e.front.pareto.placeholder
    assert label.visible and label.text == "No runs on this data yet: press Run."
    # what a first run on a cold cache reports (treeexplorer.ui.warm.compiling_report) while nothing is drawn
    c.param.update(running=True, progress=ui_warm.compiling_report("cart"))
    assert label.visible and label.text == "The first run is compiling the cart kernels (once per install)…"
    c.progress = {"phase": "compiling", "solver": "cart", "cold": True, "seconds": 3.0, "estimate_s": 15}
    assert label.visible  # the run bar's seconds tick on; the plot's words stay
    c.progress = {"phase": "solving", "solver": "cart"}
    assert not label.visible and label.text == ""  # compiled: the front is on its way
    c.param.update(running=False, progress={})
    run = e.run_now(wait=True)
    assert run is not None and not label.visible
    c.runs = []
    assert label.visible and label.text.startswith("No runs")
    c.param.update(running=True, progress=ui_warm.compiling_report("cart"))
    assert label.visible
    c.runs = [run]  # a front: the plot has something to show
    assert not label.visible
