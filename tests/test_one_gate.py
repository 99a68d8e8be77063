"""One validation for every entry point (issue 35's bugs): numpy values in grids, limits that are not finite,
the app's re-run rule and the upload limit's units."""

import math
import threading

import numpy as np
import pytest
from treeexplorer.solvers import Control, time_limit_seconds

import treeexplorer as tx
from treeexplorer.sweep import expand_grid


def test_numpy_values_in_a_grid_are_the_numbers_solve_takes():
    settings, _ = expand_grid({"solver": ["murtree"], "n_bins": [np.int64(8)], "max_depth": np.array([1, 2])})
    assert [(s["n_bins"], s["params"]["max_depth"]) for s in settings] == [(8, 1), (8, 2)]
    assert all(type(s["n_bins"]) is int for s in settings)


def test_a_numpy_array_is_a_list_of_values_not_one_value():
    settings, _ = expand_grid({"solver": ["cart"], "max_depth": np.arange(1, 4)})
    assert sorted(s["params"]["max_depth"] for s in settings) == [1, 2, 3]


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, 0, -1, "5", True, 2e9])
def test_one_message_for_a_bad_time_limit_everywhere(bad):
    threads = threading.active_count()
    for call in (
        lambda: Control(bad),
        lambda: time_limit_seconds(bad),
        lambda: tx.solve("iris", solver="cart", time_limit=bad),
        lambda: tx.cross_validate("iris", solver="cart", cv=2, time_limit=bad, scheduler="serial"),
        lambda: tx.sweep("iris", {"solver": ["cart"]}, cv=2, time_limit=bad, scheduler="serial"),
    ):
        with pytest.raises(ValueError, match="time_limit must be a positive, finite number of seconds"):
            call()
    assert threading.active_count() == threads  # no timer thread started (and died) on the way


def test_the_estimator_refuses_an_infinite_limit_with_the_same_message():
    from treeexplorer.estimator import TreeExplorerClassifier

    X, y = np.random.default_rng(0).normal(size=(30, 2)), np.arange(30) % 2
    with pytest.raises(ValueError, match="time_limit must be a positive, finite number of seconds"):
        TreeExplorerClassifier(solver="cart", time_limit=math.inf).fit(X, y)


def test_numpy_scalars_are_fine_limits():
    assert time_limit_seconds(np.float32(2.5)) == 2.5
    assert Control(np.int64(3)).time_limit == 3.0
    assert time_limit_seconds(None) is None


def test_upload_limit_says_the_same_unit_in_the_sidebar_and_the_message():
    pytest.importorskip("panel")
    from treeexplorer.data import DataError
    from treeexplorer.ui.admission import mib
    from treeexplorer.ui.controller import parse_upload

    cap = 20 * 2**20
    with pytest.raises(DataError, match=r"21\.5 MiB is over the 20 MiB upload limit"):
        parse_upload(b"x" * (43 * 2**19), "big.csv", cap=cap)
    assert mib(cap) == "20 MiB"


@pytest.mark.parametrize("mid_budget", [None, 0.3])
def test_runtime_is_the_whole_run_with_or_without_mids_anytime_loop(mid_budget):
    import time

    kwargs = dict(solver="murtree", discretizer="mid", n_bins=6, max_depth=2, mid_budget=mid_budget)
    tx.solve("iris", **kwargs)  # kernels warm: the clock then covers all but the argument checks
    t0 = time.perf_counter()
    front = tx.solve("iris", **kwargs)
    wall = time.perf_counter() - t0
    assert 0.5 * wall <= front.runtime_s <= wall
