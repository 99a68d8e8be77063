"""Property test of the time limit over solver x discretizer x table shape (issue 36).

Every built-in solver with every discretizer it takes, on random tables (10 to 20,000 rows, 1 to 60 columns,
2 to 5 classes, tied values, constant columns): with ``time_limit=t`` the run returns within
``t + max(1 s, 10 %)``, its status says whether the limit stopped it (and then no tree is called optimal), and
the front is valid (trees counted on every training row).  A run may instead be refused with a one-line
message (a table the solver cannot take: too many tests, no usable test, a memory guard).

Bounded for CI: derandomized, a few dozen cases; ``benchmarks/bench_limit_property.py`` runs the long version.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treeexplorer.solvers import Control

from treeexplorer import solve
from treeexplorer.discretize import DISCRETIZER_NAMES
from treeexplorer.registry import SOLVER_NAMES, get_solver
from treeexplorer.warm import ensure_warm

SOLVERS = SOLVER_NAMES
# "none" needs 0/1 columns (refused on these tables); None is the solver's default (raw columns for CART/DPDT)
DISCRETIZERS = (None, *[d for d in DISCRETIZER_NAMES if d != "none"])
LIMIT = 2.0  # the bound is then 3 s: loading and discretizing 20,000 x 60 take ~1 s on a loaded CI machine
# the kwargs that make a solver take any table: SAT relabels rows with equal tests and different labels
EXTRA = {"sat": {"conflicts": "majority"}, "dpdt": {"max_depth": 4}, "murtree": {"max_depth": 4}}


def random_table(seed: int, n: int, p: int, classes: int, ties: bool, constant: int) -> pd.DataFrame:
    """Columns partly informative, rounded to few values when ``ties``; ``constant`` of them constant."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    if ties:
        X = np.round(X, 1)
    X[:, : min(constant, p)] = 1.5
    score = X[:, -1] + 0.5 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    df["label"] = y
    return df


def bound(limit: float) -> float:
    return limit + max(1.0, 0.1 * limit)


class LimitClock:
    """The wall time of one run and the CPU time this process spent after the run's limit passed.

    The rule is ``limit + max(1 s, 10 %)`` of run time.  On a free machine the wall time says it; on a shared
    one (other processes on both cores) every phase's wall time stretches, the few unstoppable ones (loading,
    sorting columns, assembling) too, while the work a run does after its limit does not.  A run keeps its
    limit when its wall time is within the bound, or when the work it did after the limit (CPU time of every
    thread of this process) is within the slack: a run ignoring its limit keeps working after it and fails both.

    "After the limit" counts from this clock's own timer (its delay past the limit counted as work), or, for a
    run given :meth:`control`, from the moment the run's own timer set its stop flag when that came first, or
    no later than this clock's timer did, plus a second: on a busy machine both timer threads wake late, and
    the work before the flag was set is not the run's overshoot (counting it failed runs at load ~10)."""

    def __init__(self, limit: float):
        self.limit = limit
        self.slack = bound(limit) - limit
        self._at_limit = None
        self._marked_wall = None
        self._flag = None  # (wall seconds from t0, CPU time) when the run's own timer set its stop flag
        self.t0 = time.perf_counter()
        self._timer = threading.Timer(limit, self._mark)
        self._timer.daemon = True
        self._timer.start()

    def _mark(self):
        self._marked_wall = time.perf_counter() - self.t0
        late = self._marked_wall - self.limit
        self._at_limit = time.process_time() - max(0.0, late)

    def control(self) -> Control:
        """A Control for the run (``solve(..., control=clock.control())``) that tells this clock when its time
        limit set the stop flag."""
        clock = self

        class Watched(Control):
            def _expire(self):
                if clock._flag is None:
                    clock._flag = (time.perf_counter() - clock.t0, time.process_time())
                super()._expire()

        return Watched()  # its limit comes from solve's time_limit=, as a caller's would

    def stop(self) -> float:
        """End of the run: its wall time (and :attr:`cpu_after`, the CPU seconds spent after the limit)."""
        self.wall = time.perf_counter() - self.t0
        self._timer.cancel()
        cpu = time.process_time()
        refs = []
        if self._at_limit is not None:
            refs.append(self._at_limit)
        if self._flag is not None:
            flag_wall, flag_cpu = self._flag
            mark_wall = self._marked_wall if self._marked_wall is not None else self.wall
            if flag_wall <= max(self.limit, mark_wall) + 1.0:  # the run's timer was not late by its own doing
                refs.append(flag_cpu)
        if refs:
            self.cpu_after = cpu - max(refs)
        else:  # ended before the limit (or the timer never ran: then count the whole overshoot)
            self.cpu_after = max(0.0, self.wall - self.limit)
        return self.wall

    @property
    def kept(self) -> bool:
        return self.wall <= bound(self.limit) or self.cpu_after <= self.slack

    def __str__(self) -> str:
        return f"{self.wall:.2f} s wall ({self.cpu_after:.2f} s CPU after the limit) for a {self.limit:g} s limit"


def prime(solver):
    """Compiling and loading kernels is outside the limit: ``ensure_warm`` loads every kernel a run of the
    solver can use with any discretizer (the discretizers' and the front assembly's too), so the first timed
    run of each pair is as fast as the next ones."""
    ensure_warm(solver)


def check_run(solver, discretizer, df, limit, clocks=None):
    """One run; returns ``(wall, front or the refusal's message)`` after checking the properties (its
    :class:`LimitClock` appended to ``clocks`` when given, before any check)."""
    prime(solver)
    kw = dict(EXTRA.get(solver, {}))
    spec = get_solver(solver)
    if discretizer is None and spec.input == "binary":
        discretizer = spec.default_discretizer
    clock = LimitClock(limit)
    if clocks is not None:
        clocks.append(clock)
    try:
        front = solve(
            df, "label", solver=solver, discretizer=discretizer, time_limit=limit, control=clock.control(), **kw
        )
    except ValueError as exc:  # refused: one line, no traceback
        wall = clock.stop()
        msg = str(exc)
        assert msg and "\n" not in msg, msg
        assert clock.kept, f"{solver}/{discretizer}: refused after {clock}"
        return wall, msg
    wall = clock.stop()
    assert clock.kept, f"{solver}/{discretizer} {df.shape}: {clock}"
    assert front.runtime_s <= wall + 1e-6
    assert front.status in ("done", "time_limit")
    if front.status == "time_limit":
        assert not any(t.optimal for t in front.trees)
    assert len(front) >= 1
    n = front.n_train
    for t in front.trees:
        m = t.metrics
        assert 0.0 <= m["train_accuracy"] <= 1.0 and m["train_errors"] == round((1 - m["train_accuracy"]) * n)
        assert m["splits"] >= 0 and m["leaves"] >= 1 and t.tree.counts is not None
    assert sorted(t.id for t in front.trees) == list(range(len(front)))
    return wall, front


tables = st.builds(
    dict,
    seed=st.integers(0, 2**16),
    n=st.one_of(st.integers(10, 300), st.integers(300, 20_000)),
    p=st.one_of(st.integers(1, 8), st.integers(8, 60)),
    classes=st.integers(2, 5),
    ties=st.booleans(),
    constant=st.integers(0, 2),
)


@settings(
    max_examples=30,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
@given(solver=st.sampled_from(SOLVERS), discretizer=st.sampled_from(DISCRETIZERS), table=tables)
def test_every_run_keeps_its_time_limit(solver, discretizer, table):
    df = random_table(**table)
    check_run(solver, discretizer, df, LIMIT)


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_largest_table_keeps_the_limit(solver):
    """The top of the range for each solver: 20,000 rows x 60 columns, 5 classes, ties and a constant column.

    With a 5 s limit: loading the table and sorting its columns for the thresholds (not stoppable, ~1 s on a
    free core) took up to 3 s on the shared 2-core machine, which a 2 s limit's 1 s margin cannot absorb."""
    df = random_table(7, 20_000, 60, 5, True, 1)
    check_run(solver, None, df, 5.0)


def test_contree_on_an_exact_discretizers_thousands_of_tests_keeps_the_limit():
    """The long property test's miss: ConTree's preparation (one stable sort per column and the sorted lists
    copied per thread) on 17,574 rows x 2,076 exact tests took 6-15 s for a 2 s limit; it stops with the clock
    now, between blocks of columns."""
    df = random_table(12281, 17_574, 28, 5, True, 0)
    wall, front = check_run("contree", "exact", df, LIMIT)
    assert not isinstance(front, str), front


def test_murtree_on_an_exact_discretizers_thousands_of_tests_keeps_the_limit():
    """The long property test's MurTree miss: 204 rows x 50 columns give ``exact`` 9,950 tests, and the depth-2
    solver's pair counts (3 classes x 9,950^2) took 2-3.5 s of CPU between two looks at the stop flag (6-10 s
    for a 2 s limit); the flag is now read once per word of rows in the pair loop."""
    df = random_table(20953, 204, 50, 3, False, 1)
    wall, front = check_run("murtree", "exact", df, LIMIT)
    assert not isinstance(front, str), front


@pytest.mark.parametrize("max_depth", [2, 3])
def test_rashomon_on_an_exact_discretizers_thousands_of_tests_keeps_the_limit(max_depth):
    """The same table for ``tx.rashomon``: at depth 2 the enumeration counts the root's 9,950^2 pairs of tests
    itself (no MurTree phase first), which ran 12 s for a 2 s limit while it passed MurTree's pair counts a
    stop flag that was never set; the flag is now the run's, read per word of rows.  At depth 3 MurTree's bounds
    come first.  A stopped run keeps the trees found so far, each exact.  At depth 2 the root's children (a sorted
    list of 9,950 tests for each of 2 x 9,950 children, seconds) read no flag either: run after the MurTree case
    the limit fell there 3 times in 4 (1.9-3 s of CPU over); the flag is read per test of that loop now."""
    from treeexplorer import rashomon

    prime("murtree")
    ensure_warm("rashomon")
    df = random_table(20953, 204, 50, 3, False, 1)
    clock = LimitClock(LIMIT)
    front = rashomon(
        df, "label", discretizer="exact", max_depth=max_depth, k=1000, time_limit=LIMIT, control=clock.control()
    )
    clock.stop()
    assert clock.kept, f"rashomon/exact depth {max_depth}: {clock}"
    assert front.status in ("done", "time_limit") and front.runtime_s <= clock.wall + 1e-6
    assert front.stats["rashomon"]["complete"] is False or front.status == "done"
    for t in front.trees:
        assert t.metrics["train_errors"] == t.info["errors"]
    assert [t.id for t in front.trees] == list(range(len(front.trees)))
