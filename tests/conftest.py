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


def _serialize_numba_cache_writes() -> None:
    """Two xdist workers may compile one kernel for different argument types at once.  Numba names a new cache
    entry's data file by the count of entries in the index it just read, and the data file does not say which
    entry it holds, so two such saves interleaved could leave one entry pointing at the other's code.  Each
    save (read index, write index, write data) holds an exclusive lock on a file beside the cache."""
    import fcntl

    from numba.core import caching

    save = getattr(caching.IndexDataCacheFile, "save", None)
    if save is None or getattr(save, "_locked", False):
        return

    def locked_save(self, key, data):
        with open(os.path.join(self._cache_path, "treeexplorer-tests-save.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return save(self, key, data)

    locked_save._locked = True
    caching.IndexDataCacheFile.save = locked_save


if os.environ.get("PYTEST_XDIST_WORKER") and os.name == "posix":
    _serialize_numba_cache_writes()


def _warm_groups(workers: int) -> list[list[str]]:
    """The solvers whose kernels are not in numba's cache yet, split into ``workers`` groups of about equal
    compile time (largest first onto the lightest group); a solver and the solvers it calls share a group."""
    from treeexplorer.warm import _ALSO, COMPILE_ESTIMATE_S, WARM_NAMES, needs_compile

    cold = [name for name in WARM_NAMES if needs_compile(name)]
    units = []
    for name in sorted(cold, key=lambda n: len(_ALSO.get(n, ())), reverse=True):  # callers take their callees
        if any(name in unit for unit in units):
            continue
        unit = [name, *(other for other in _ALSO.get(name, ()) if other in cold)]
        units.append(unit)
    groups: list[list[str]] = [[] for _ in range(min(workers, len(units)))]
    weight = lambda unit: sum(COMPILE_ESTIMATE_S.get(n, 30) for n in unit)  # noqa: E731
    for unit in sorted(units, key=weight, reverse=True):
        min(groups, key=lambda g: sum(COMPILE_ESTIMATE_S.get(n, 30) for n in g)).extend(unit)
    return groups


def pytest_sessionstart(session):
    """A whole-suite run under xdist (``python -m pytest``, no paths given): the controller compiles the cold
    kernels once before the workers start, one process per core with a share of the solvers.  Otherwise every
    worker would compile each solver it meets on its own (numba's cache is per process until written), paying
    the same minute twice on two cores; the tests that check a cold start use a fresh, empty cache of their own
    and are unaffected."""
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # an xdist worker, or a run in one process (-n 0): kernels compile on first use
    if os.environ.get("NUMBA_DISABLE_JIT") or config.option.collectonly:
        return
    config._treeexplorer_tests_start = time.perf_counter()
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return  # a chosen file or test: compile only what it uses, on first use
    workers = config.option.numprocesses
    if not isinstance(workers, int):  # "auto" / "logical", before xdist resolves it
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    groups = _warm_groups(max(1, workers))
    if not groups:
        return
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "treeexplorer", "warm", "--solver", *group],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for group in groups
    ]
    outs = [proc.communicate()[0] for proc in procs]
    seconds = time.perf_counter() - t0
    summary = " | ".join(" ".join(g) for g in groups)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"compiled the cold kernels before the tests ({summary}): {seconds:.0f} s")
    config._treeexplorer_tests_start = time.perf_counter()
    for proc, out in zip(procs, outs):
        if proc.returncode and reporter is not None:  # the tests then compile what is missing on first use
            reporter.write_line(f"warm-up failed (exit {proc.returncode}):\n{out}")


# Modules whose tests share one costly module-scoped fixture (a fuzz batch run once for all its targets, a
# built wheel, an executed notebook, a served app or Jupyter server used by several short tests): under xdist
# each is handed to one worker whole, so the fixture is built once rather than once per worker.
SHARED_FIXTURE_MODULES = {
    "test_fuzz.py",
    "test_install.py",
    "test_notebook_offline.py",
    "test_browser.py",
    "test_browser_runbar.py",
    "test_hit_rule.py",
    "test_jupyterlab.py",
}


def _browser_phase(nodeid: str) -> bool:
    """A test of tests/browser/ (Playwright driving chromium against a served app): these run after the unit tests,
    alone on one worker.  The controller schedules by node id (it collects no items), so the folder is the rule;
    :func:`pytest_collection_modifyitems` checks that the ``browser`` marker agrees with it."""
    return "/browser/" in "/" + nodeid.split("::", 1)[0]


def pytest_xdist_make_scheduler(config, log):
    """xdist's load scheduling, one test at a time in collection order, except that the modules above go whole and
    the browser tests run last, alone: once every unit test has finished, one worker takes them all and the others
    stop.  (Under two busy workers the browser tests' timed steps missed their marks, e.g. the tree view's wheel
    zoom; alone they have the machine as in a one-process run, and the unit tests still use every core.)

    (Not ``xdist_group`` marks with ``--dist loadgroup``: xdist 3.8 renames grouped tests through an attribute
    pytest 9.2 no longer reads, so the groups silently fall apart.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitThenBrowserScheduling(LoadScopeScheduling):
        browser_node = None  # the worker running the browser tests, once the unit tests are done
        unit_tests = False  # any scheduled

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module.rsplit("/", 1)[-1] in SHARED_FIXTURE_MODULES else nodeid

        def _unit_left(self) -> bool:
            return any(not _browser_phase(scope) for scope in self.workqueue)

        def _assign_work_unit(self, node) -> None:
            """The next unit test scope (a crashed worker's tests go back at the queue's end), else the next
            browser scope, and that only to the browser worker."""
            scope = next((s for s in self.workqueue if not _browser_phase(s)), None)
            self.unit_tests = self.unit_tests or scope is not None
            if scope is None:
                if not self._may_run_browser(node):
                    return
                scope = next(iter(self.workqueue))
            self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

        def _may_run_browser(self, node) -> bool:
            """Only unit tests are pending: ``node`` takes the browser tests once no other worker has a test left,
            or stops.  (A worker holds its last test until it gets more work or is told to stop, as it needs the
            next one for teardown: so a worker with one test left stops while another still runs tests; the last
            one takes the browser tests.)"""
            if self.browser_node is not None:
                if node is not self.browser_node:
                    node.shutdown()
                return node is self.browser_node
            if self._pending_of(self.assigned_work[node]) >= 2:
                return False  # still running unit tests of its own
            others = [n for n in self.assigned_work if n is not node]
            if any(self._pending_of(self.assigned_work[n]) and not n.shutting_down for n in others):
                node.shutdown()
                return False
            if any(self._pending_of(self.assigned_work[n]) for n in others):
                return False  # a stopping worker's last unit tests are still running
            self.browser_node = node
            self.browser_start = time.perf_counter()
            for other in others:
                other.shutdown()
            return True

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 2:
                return  # xdist's heuristic: top up a worker when it is almost out of tests
            self._assign_work_unit(node)

        def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
            super().mark_test_complete(node, item_index, duration)
            if not self._unit_left() and self.workqueue:  # a worker may be waiting for the others to finish
                for other in self.nodes:
                    if other is not node:
                        self._reschedule(other)

        def remove_node(self, node):
            if node is self.browser_node:
                self.browser_node = None  # crashed: a restarted worker takes the rest
            crashitem = super().remove_node(node)
            for other in self.nodes:
                self._reschedule(other)
            return crashitem

    config.option.loadscopereorder = False  # keep the collection order (browser tests last, below)
    sched = UnitThenBrowserScheduling(config, log)
    config._treeexplorer_scheduler = sched
    return sched


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    # browser tests last: a quick failure elsewhere shows before the slow browser start (and without the
    # warm-up above, by then the unit tests have compiled and cached the kernels the served app loads)
    marked = lambda item: item.get_closest_marker("browser") is not None  # noqa: E731
    stray = [item.nodeid for item in items if marked(item) != _browser_phase(item.nodeid)]
    if stray:
        raise pytest.UsageError(f"tests/browser/ holds the tests marked 'browser', and only those: {stray[:3]}")
    items.sort(key=lambda item: _browser_phase(item.nodeid))


def pytest_terminal_summary(terminalreporter, config):
    """Under xdist, how long the unit tests (on every worker) and the browser tests (on one) took."""
    sched = getattr(config, "_treeexplorer_scheduler", None)
    start = getattr(config, "_treeexplorer_tests_start", None)
    if sched is None or start is None:
        return
    now = time.perf_counter()
    browser = getattr(sched, "browser_start", None)
    if browser is None:
        terminalreporter.write_line(f"tests on {sched.numnodes} workers: {now - start:.0f} s (no browser tests)")
        return
    if not sched.unit_tests:
        terminalreporter.write_line(f"browser tests on one worker alone: {now - browser:.0f} s")
        return
    terminalreporter.write_line(
        f"unit tests on {sched.numnodes} workers: {browser - start:.0f} s; then the browser tests on one worker "
        f"alone: {now - browser:.0f} s"
    )
