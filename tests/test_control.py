"""The cooperative run control: time limit, cancel and progress reports reach a running nogil kernel."""

import time

import numpy as np
import pytest
from numba import njit
from treeexplorer.solvers import Control
from treeexplorer.solvers._base import FLAG_TIMEOUT, check_binary, check_xy
from waiting import HANG_S, cancelling_control


@njit(nogil=True, cache=True)
def _spin(flag, counters, max_iter):
    # A stand-in kernel: counts until told to stop, as solver kernels do in their outer loops.
    i = 0
    while i < max_iter and flag[0] == 0:
        i += 1
        if i % 1024 == 0:
            counters[0] = i
    return i


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    _spin(np.zeros(1, np.int64), np.zeros(8, np.int64), 10)  # compile before any timer starts


def test_time_limit_stops_a_kernel_and_reports_status():
    reports = []
    c = Control(time_limit=0.3, progress=reports.append, poll_interval=0.05)
    t0 = time.perf_counter()
    with c:
        c.watch("spinning", ["iterations"])
        _spin(c.flag, c.counters, 10**13)
        c.unwatch()
    assert 0.25 < time.perf_counter() - t0 < HANG_S  # stopped at its limit, not after its 10^13 steps (hours)
    assert c.timed_out and c.status() == "time_limit" and c.flag[0] == FLAG_TIMEOUT
    assert reports and reports[-1]["phase"] == "spinning" and reports[-1]["iterations"] > 0


def test_cancel_from_another_thread():
    c, on = cancelling_control("spinning", poll_interval=0.05)  # the watcher thread's first report cancels
    with c:
        c.watch("spinning", ["iterations"])
        _spin(c.flag, c.counters, 10**13)
        c.unwatch()
    assert on.event.is_set() and c.cancelled and c.status() == "cancelled"


def test_input_checks_name_the_problem():
    with pytest.raises(ValueError, match="positive"):
        Control(time_limit=0)
    with pytest.raises(ValueError, match="column 1 row 2 holds 3"):
        check_binary(np.array([[0, 1], [1, 0], [0, 3]]))
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_xy(np.array([[np.nan]]), np.array([0]))
    X, y, k = check_xy(np.ones((3, 2)), np.array([0.0, 1.0, 2.0]))
    assert k == 3 and y.dtype == np.int64
