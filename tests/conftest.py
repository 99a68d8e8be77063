"""Shared pytest set-up."""

import os
import subprocess
import sys
import time

import pytest
from hypothesis import settings

# CI (the CI environment variable set, as `.ci/run` is run) draws the same hypothesis examples on every run: a
# red CI is reproducible and never a lucky draw.  Locally the default profile keeps exploring new examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
    settings.load_profile("ci")


if os.environ.get("PYTEST_XDIST_WORKER"):  # two workers may compile one kernel at once
    from treeexplorer._kernel_cache import serialize_cache_writes

    serialize_cache_writes()


def pytest_sessionstart(session):
    """A whole-suite run under xdist (``python -m pytest``, no paths given): the controller compiles the cold
    kernels once before the workers start (``treeexplorer warm``: one worker process per core), saying so in a
    line before and one per compile job as it ends.  Otherwise every xdist worker would compile each solver it
    meets on its own (numba's cache is per process until written), paying the same minute twice on two cores;
    the tests that check a cold start use a fresh, empty cache of their own and are unaffected."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # an xdist worker, or a run in one process (-n 0): kernels compile on first use
    if os.environ.get("NUMBA_DISABLE_JIT") or config.option.collectonly:
        return
    config._treeexplorer_tests_start = time.perf_counter()
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return  # a chosen file or test: compile only what it uses, on first use
    from treeexplorer.warm import WARM_NAMES, cold_jobs

    if not cold_jobs(WARM_NAMES):
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    say = reporter.write_line if reporter is not None else (lambda line: None)
    say("compiling the kernels numba's cache lacks before the tests (once per checkout and kernel change):")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "treeexplorer", "warm"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in proc.stdout:  # the compile's progress as it comes: one line per compile job
        lines.append(line.rstrip())
        if "compil" in line:
            say(f"  {line.rstrip()}")
    proc.wait()
    say(f"compiled the cold kernels before the tests: {time.perf_counter() - t0:.0f} s")
    config._treeexplorer_tests_start = time.perf_counter()
    if proc.returncode:  # the tests then compile what is missing on first use
        say(f"warm-up failed (exit {proc.returncode}):\n" + "\n".join(lines[-20:]))


# Modules whose tests share one costly module-scoped fixture (a fuzz batch run once for all its targets, a
# built wheel, an executed notebook): under xdist each is handed to one worker whole, so the fixture is built once
# rather than once per worker.  Every browser module goes whole too (its served app or JupyterLab is such a fixture).
SHARED_FIXTURE_MODULES = {
    "test_fuzz.py",
    "test_install.py",
    "test_notebook_offline.py",
}

# The longest browser modules (their own server start, a JupyterLab, a cold compile), handed out first: the two
# workers then finish together rather than one starting a long module as the other runs out of work.
BROWSER_FIRST = (
    "test_browser.py",
    "test_jupyterlab.py",
    "test_browser_surface.py",
    "test_browser_first_page.py",
    "test_browser_treeview.py",
    "test_threads.py",
)


def _browser_phase(nodeid: str) -> bool:
    """A test of tests/browser/ (Playwright driving chromium against a served app): these run after the unit tests.
    The controller schedules by node id (it collects no items), so the folder is the rule;
    :func:`pytest_collection_modifyitems` checks that the ``browser`` marker agrees with it."""
    return "/browser/" in "/" + nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """xdist's load scheduling, one test at a time in collection order, except that the modules above and every
    browser module go whole, and a browser module goes to a worker only once no unit test is left to hand out.
    The browser tests (last in collection order, below) thus start as the unit tests finish and then share the
    workers; their timed checks wait for the settled page, so two at once (or one beside a unit test) is fine.

    A browser module goes to a worker only when it has at most one test left (the one it holds back until it is
    sent more work or told to stop): never queued behind a long module while another worker runs out of work.

    (Not ``xdist_group`` marks with ``--dist loadgroup``: xdist 3.8 renames grouped tests through an attribute
    pytest 9.2 no longer reads, so the groups silently fall apart.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitThenBrowserScheduling(LoadScopeScheduling):
        browser_start = None  # when the first browser module was handed out
        unit_end = None  # when the last unit test finished
        unit_tests = False  # any scheduled

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            whole = _browser_phase(nodeid) or module.rsplit("/", 1)[-1] in SHARED_FIXTURE_MODULES
            return module if whole else nodeid

        def _assign_work_unit(self, node) -> None:
            """The next unit test scope (a crashed worker's tests go back at the queue's end), else the next
            browser module."""
            scope = next((s for s in self.workqueue if not _browser_phase(s)), None)
            if scope is None:
                if self._pending_of(self.assigned_work.get(node, {})) > 1:
                    return
                scope = next(iter(self.workqueue))
                if self.browser_start is None:
                    self.browser_start = time.perf_counter()
            else:
                self.unit_tests = True
            self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

        def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
            super().mark_test_complete(node, item_index, duration)
            if self.unit_end is None and not _browser_phase(self.registered_collections[node][item_index]):
                queued = any(not _browser_phase(s) for s in self.workqueue)  # (cheap: unit scopes come first)
                if not queued and not any(
                    not done and not _browser_phase(nodeid)
                    for work in self.assigned_work.values()
                    for unit in work.values()
                    for nodeid, done in unit.items()
                ):
                    self.unit_end = time.perf_counter()

    config.option.loadscopereorder = False  # keep the collection order (browser tests last, longest first)
    sched = UnitThenBrowserScheduling(config, log)
    config._treeexplorer_scheduler = sched
    return sched


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    # browser tests last: a quick failure elsewhere shows before the slow browser start (and without the
    # warm-up above, by then the unit tests have compiled and cached the kernels the served app loads); among
    # them the longest modules first (the scheduler hands them out in this order)
    marked = lambda item: item.get_closest_marker("browser") is not None  # noqa: E731
    stray = [item.nodeid for item in items if marked(item) != _browser_phase(item.nodeid)]
    if stray:
        raise pytest.UsageError(f"tests/browser/ holds the tests marked 'browser', and only those: {stray[:3]}")
    first = {name: i for i, name in enumerate(BROWSER_FIRST)}
    module = lambda item: item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1]  # noqa: E731
    items.sort(key=lambda item: (_browser_phase(item.nodeid), first.get(module(item), len(first))))


def pytest_terminal_summary(terminalreporter, config):
    """Under xdist, how long the unit tests took and when the browser tests started and ended (all on the
    workers' shared clock: the two phases overlap by the unit tests still running when the first browser module
    goes out)."""
    sched = getattr(config, "_treeexplorer_scheduler", None)
    start = getattr(config, "_treeexplorer_tests_start", None)
    if sched is None or start is None:
        return
    now = time.perf_counter()
    workers = f"{sched.numnodes} workers"
    if sched.browser_start is None:
        terminalreporter.write_line(f"tests on {workers}: {now - start:.0f} s (no browser tests)")
        return
    if not sched.unit_tests:
        terminalreporter.write_line(f"browser tests on {workers}: {now - start:.0f} s")
        return
    unit_end = sched.unit_end if sched.unit_end is not None else now
    terminalreporter.write_line(
        f"tests on {workers}: unit tests {unit_end - start:.0f} s; browser tests from {sched.browser_start - start:.0f}"
        f" s to the end: {now - sched.browser_start:.0f} s; all {now - start:.0f} s"
    )
