"""Progress in plain words, determinate where the work can be counted."""

from __future__ import annotations

import pytest

from treeexplorer.ui.controller import Controller, RunSettings
from treeexplorer.ui.progress import describe


def test_each_phase_reads_as_plain_words_with_a_fraction_when_countable():
    text, f = describe(
        {
            "phase": "dpdt: building the MDP",
            "elapsed": 3.04,
            "depth": 2,
            "states": 1234,
            "expanded_at_depth": 5,
            "states_at_depth": 10,
        },
        {"max_depth": 4},
        30,
    )
    assert (
        text == "DPDT: building the tree search, depth 2 of 4 (1,234 candidate subtrees so far) · 3.0 s of at most 30 s"
    )
    assert f == pytest.approx((1 + 0.5) / 4)
    text, f = describe({"phase": "murtree", "budgets_done": 3}, {"max_depth": 2})
    assert text == "MurTree: optimal trees for 3 of 4 split budgets" and f == 0.75
    text, f = describe({"phase": "assembling", "data": "train", "rows": 500, "of": 1000, "trees": 7})
    assert text == "measuring 7 trees on the train rows" and f == 0.5
    text, f = describe({"phase": "contree", "root_splits": 12, "best_errors": 40})
    assert text == "ConTree: 12 root splits searched, best tree so far 40 errors" and f is None
    assert describe({"phase": "cv", "folds": 5, "folds_done": 2})[1] == pytest.approx(2 / 6)
    assert describe({}) == ("", None)


@pytest.mark.parametrize("solver,params", [("dpdt", {"max_depth": 3}), ("murtree", {"max_depth": 3})])
def test_a_real_run_reports_monotone_fractions_within_0_and_1(solver, params):
    c = Controller()
    assert c.load_bundled("wine")
    seen = []
    c.param.watch(lambda e: seen.append(dict(e.new)), "progress")
    run = c.run_sync(RunSettings(solver, params), timeout=120)
    assert run is not None
    fractions = [
        f for f in (describe(p, params)[1] for p in seen if p.get("phase", "").startswith(solver)) if f is not None
    ]
    assert fractions and all(0.0 <= f <= 1.0 for f in fractions)
    assert fractions == sorted(fractions)


def test_a_solvers_progress_words_are_its_specs():
    from treeexplorer.registry import Param, SolverSpec, get_solver, register, unregister

    for name in ("cart", "dpdt", "murtree", "contree", "branches"):
        assert get_solver(name).progress_words is not None, name
    # a plug-in says its own words (and its fraction); without words its phase and counters show as they come
    spec = SolverSpec(
        "wordy",
        "numeric",
        lambda *a, **k: None,
        (Param("max_depth", "int", 2, "depth"),),
        progress_words=lambda p, params: (f"Wordy: {p['n']} of {params['max_depth']}", p["n"] / params["max_depth"]),
    )
    register(spec)
    try:
        assert describe({"phase": "wordy", "n": 1, "elapsed": 2.0}, {"max_depth": 2}) == ("Wordy: 1 of 2 · 2.0 s", 0.5)
    finally:
        unregister("wordy")
    assert describe({"phase": "wordy", "n": 1}) == ("wordy · n 1", None)
