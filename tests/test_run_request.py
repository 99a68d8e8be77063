"""RunRequest: one validated description of a run, built by every entry point and taken as it is by the runner."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import treeexplorer as tx
from treeexplorer.api import prepare, run_prepared
from treeexplorer.request import RunRequest


def test_numpy_scalars_are_the_numbers_they_hold():
    r = RunRequest.build(
        "murtree", {"max_depth": np.int64(2)}, discretizer="quantile", n_bins=np.int64(4), time_limit=np.float32(2.5)
    )
    assert (r.params["max_depth"], r.n_bins, r.time_limit) == (2, 4, 2.5)
    assert type(r.params["max_depth"]) is int and type(r.n_bins) is int
    assert (r.discretizer_used, r.criterion, r.raw) == ("quantile", "entropy", False)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"time_limit": math.inf}, "time_limit must be a positive, finite number of seconds"),
        ({"time_limit": math.nan}, "time_limit must be a positive, finite number of seconds"),
        ({"solver": 3}, "solver must be a solver name"),
        ({"solver": "nope"}, "unknown solver 'nope'"),
        ({"discretizer": "fancy"}, "unknown discretizer 'fancy'"),
        ({"n_bins": 0}, "n_bins must be a positive integer, got 0"),
        ({"n_bins": 4}, "n_bins needs a discretizer"),
        ({"params": {"sparsity": 0.1}}, "does not use sparsity"),
        ({"solver": "murtree", "params": {"criterion": "gini"}}, "has no criterion parameter"),
        ({"discretizer_params": {"bins": 3}}, "discretizer_params: unknown option"),
        ({"discretizer_params": {"criterion": "gini"}}, "discretizer_params need a discretizer"),
        ({"solver": "murtree", "discretizer": "quantile", "mid_budget": 1.0}, "mid_budget .* needs discretizer='mid'"),
        ({"mid_budget": math.inf, "discretizer": "mid"}, "mid_budget must be a positive, finite number"),
        ({"memory_limit": 0}, "memory_limit must be at least 1 MB"),
    ],
)
def test_one_clear_error_per_bad_setting(kw, message):
    kw = {"solver": "cart", **kw}
    with pytest.raises(ValueError, match=message):
        RunRequest.build(kw.pop("solver"), kw.pop("params", None), **kw)


def test_a_request_is_frozen_and_the_runner_takes_it_alone():
    r = RunRequest.build("cart", {"max_depth": 2})
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_bins = 3
    prep = prepare("iris", test_size=0.25, seed=0)
    with pytest.raises(TypeError, match="carries its settings"):
        run_prepared(prep, r, n_bins=3)
    front = run_prepared(prep, r)
    same = tx.solve("iris", solver="cart", max_depth=2, test_size=0.25, seed=0)
    assert [t.metrics["train_errors"] for t in front] == [t.metrics["train_errors"] for t in same]
    # the loose form (a solver and its settings) goes through the same gate
    with pytest.raises(ValueError, match="n_bins needs a discretizer"):
        run_prepared(prep, "cart", {"max_depth": 2}, n_bins=3)


@pytest.fixture
def built(monkeypatch):
    """The solvers each RunRequest.build call was for."""
    calls = []
    original = RunRequest.build.__func__

    def spy(cls, solver="cart", *args, **kwargs):
        calls.append(getattr(solver, "name", solver))
        return original(cls, solver, *args, **kwargs)

    monkeypatch.setattr(RunRequest, "build", classmethod(spy))
    return calls


def test_every_entry_point_builds_a_request(built):
    from treeexplorer.estimator import TreeExplorerClassifier, TreeExplorerCV

    tx.solve("iris", solver="cart", max_depth=1)
    assert built == ["cart"]
    built.clear()
    X, y = np.random.default_rng(0).normal(size=(40, 2)), np.arange(40) % 2
    TreeExplorerClassifier(solver="cart", max_depth=1).fit(X, y)
    assert built == ["cart"]
    built.clear()
    tx.cross_validate("iris", solver="cart", cv=2, max_depth=1, refit=False)
    assert built and set(built) == {"cart"} and len(built) == 3  # the call's check, then each fold's task
    built.clear()
    TreeExplorerCV(solver="cart", max_depth=1, cv=2).fit(X, y)
    assert built and set(built) == {"cart"}
    built.clear()
    tx.sweep("iris", {"solver": ["cart"], "max_depth": [1, 2]}, cv=2, scheduler="serial", refit=False)
    assert built.count("cart") == 2 + 2 * 2  # each setting of the grid, then each of its tasks


def test_the_app_builds_its_run_from_the_settings(built):
    pytest.importorskip("panel")
    from treeexplorer.ui.controller import Controller, RunSettings

    c = Controller()
    assert c.load_bundled("iris")
    run = c.run_sync(RunSettings("cart", {"max_depth": 1}), timeout=60)
    assert run is not None and built == ["cart"]
    assert c.run(RunSettings("cart", {"max_depth": 1}, time_limit=math.inf)) is None
    assert "time_limit must be a positive, finite number of seconds" in c.error
    c.close()
