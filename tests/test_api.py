"""The pipeline entry point: MID's anytime loop and its streamed best-so-far fronts."""

import numpy as np

import treeexplorer
from treeexplorer.front import Front
from treeexplorer.schema import format_number


def test_mid_anytime_streams_growing_partial_fronts():
    events = []
    front = treeexplorer.solve(
        "iris", solver="murtree", discretizer="mid", mid_budget=60, max_depth=2, progress=events.append
    )
    steps = [e for e in events if e["phase"] == "anytime"]
    ns = [e["mid_n"] for e in steps]  # 1, 2, 4, ... doubling, the last one capped at all ranked tests
    assert len(ns) >= 4 and front.status == "done"
    assert ns[:-1] == [2**i for i in range(len(ns) - 1)] and ns[-2] < ns[-1] <= 2 * ns[-2]
    partials = [e["partial_front"] for e in steps]
    assert all(isinstance(p, Front) and p.status == "running" for p in partials)
    # more tests never hurt the best depth-2 tree; the final front is the last partial one, proven
    best = [max(t.metrics["train_accuracy"] for t in p.trees) for p in partials]
    assert best == sorted(best)
    assert np.isclose(max(t.metrics["train_accuracy"] for t in front.trees), best[-1])
    assert len(front.trees) == len(partials[-1].trees)


def test_format_number_handles_infinities():
    assert [format_number(v) for v in (np.inf, -np.inf, np.nan, 2.45, 42.0)] == ["inf", "-inf", "nan", "2.45", "42"]


def test_contradictory_rows_are_named_as_in_the_file(tmp_path):
    # rows 2 and 5 of the file (after the header) agree on x but not on y; row 3 is dropped (missing value),
    # and held-out rows must not shift the numbering either
    import pandas as pd
    import pytest
    from treeexplorer.solvers.sat import ContradictoryExamples

    df = pd.DataFrame({"x": [0, 1, None, 0, 1, 0, 0, 1, 0, 1], "y": list("abaabababa")})
    df.loc[9, "x"], df.loc[9, "y"] = 1, "b"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ContradictoryExamples) as exc:
        treeexplorer.solve(path, solver="sat", discretizer="none", drop_missing=True)
    rows_x1 = [i + 1 for i in range(10) if df.x[i] == 1]
    rows_x0 = [i + 1 for i in range(10) if df.x[i] == 0]
    assert sorted(exc.value.rows.tolist()) == sorted(rows_x1 + rows_x0)
    assert "counted from 1 after the header" in str(exc.value) and "conflicts='majority'" in str(exc.value)
    with pytest.raises(ContradictoryExamples) as exc:
        treeexplorer.solve(path, solver="sat", discretizer="none", drop_missing=True, test_size=0.3, seed=1)
    assert set(exc.value.rows.tolist()) <= set(rows_x1 + rows_x0) and 3 not in exc.value.rows


# -- a solver parameter is never shadowed by the discretizer's options (issue 13, defect 5) -----------------------
def test_criterion_goes_to_cart_and_dpdt():
    import pytest

    for solver, kw in (("cart", {"max_depth": 2}), ("dpdt", {"max_depth": 2})):
        fronts = {c: treeexplorer.solve("iris", solver=solver, criterion=c, **kw) for c in ("entropy", "gini")}
        for c, front in fronts.items():
            assert front.params["criterion"] == c  # what the solver was called with
    # a solver without a criterion says where MID's impurity goes instead of silently dropping it
    with pytest.raises(ValueError, match="discretizer_params"):
        treeexplorer.solve("iris", solver="murtree", discretizer="mid", criterion="gini", max_depth=1)


def test_cart_criterion_gives_scikit_learns_root_for_that_criterion():
    import pandas as pd
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=300) > 0.4).astype(int) + (X[:, 2] > 1.0)
    df = pd.DataFrame(X, columns=list("abcd")).assign(y=y)
    roots = {}
    for c in ("entropy", "gini"):
        ours = treeexplorer.solve(df, "y", solver="cart", criterion=c, max_depth=1, front=False).trees[-1].tree
        sk = DecisionTreeClassifier(criterion=c, max_depth=1, random_state=0).fit(X, y).tree_
        roots[c] = (int(sk.feature[0]), float(sk.threshold[0]))
        assert int(ours.column[0]) == roots[c][0] and np.isclose(ours.value[0], roots[c][1], atol=1e-6), c
    assert roots["entropy"][0] != roots["gini"][0]  # the data tells the two criteria apart (c vs a at the root)


def test_mid_criterion_is_a_discretizer_option():
    import pytest

    from treeexplorer.data import load_dataset
    from treeexplorer.discretize import MIDRanking

    ds = load_dataset("iris")
    for criterion in ("entropy", "gini"):
        front = treeexplorer.solve(
            "iris",
            solver="murtree",
            discretizer="mid",
            n_bins=3,
            discretizer_params={"criterion": criterion},
            max_depth=2,
        )
        allowed = set(MIDRanking.fit(ds.X, ds.y, ds.schema, criterion).select(3).conditions)
        used = {t.tree.condition(k) for t in front.trees for k in np.flatnonzero(t.tree.column >= 0)}
        assert used and used <= allowed, (criterion, used, allowed)
    with pytest.raises(ValueError, match="unknown option"):
        treeexplorer.solve("iris", solver="murtree", discretizer="mid", discretizer_params={"crit": "gini"})


# -- MID's anytime loop: cancellation without a thread per inner run (defect 6) -----------------------------------
def test_mid_anytime_keeps_the_thread_count_flat():
    import threading
    import time

    def settle(limit):
        deadline = time.monotonic() + 60  # only a thread that never ends waits this long
        while threading.active_count() > limit and time.monotonic() < deadline:
            time.sleep(0.05)  # a cancelled time-limit timer thread ends a moment after its run
        return threading.active_count()

    treeexplorer.solve("iris", solver="murtree", discretizer="mid", mid_budget=30, max_depth=2)  # warm
    before = settle(threading.active_count())
    counts = []
    for _ in range(3):
        front = treeexplorer.solve("iris", solver="murtree", discretizer="mid", mid_budget=30, max_depth=2)
        assert front.status == "done"
        counts.append(settle(before))
    assert max(counts) <= before, (before, counts)  # the old watcher threads added one per inner run


def test_child_control_follows_its_parent_without_threads():
    import threading

    from treeexplorer.solvers import Control
    from treeexplorer.solvers._base import FLAG_CANCEL, FLAG_TIMEOUT

    n = threading.active_count()
    parent = Control()
    child = Control(parent=parent)
    grandchild = Control(parent=child)
    assert not child.stopped and threading.active_count() == n
    parent.cancel()
    assert child.flag[0] == FLAG_CANCEL and grandchild.flag[0] == FLAG_CANCEL  # what the kernels read
    assert child.cancelled and child.status() == "cancelled"
    # the child's own stop does not reach the parent; a parent flag written directly is seen on the next look
    p2 = Control()
    c2 = Control(parent=p2)
    c2.cancel()
    assert c2.cancelled and not p2.stopped
    c3 = Control(parent=p2)
    p2.flag[0] = FLAG_TIMEOUT
    assert c3.timed_out and c3.flag[0] == FLAG_TIMEOUT
    assert Control(parent=parent).cancelled  # born under a cancelled parent


# -- Front.to_frame column order (defect 9) -----------------------------------------------------------------------
def test_to_frame_leads_with_what_a_reader_compares():
    from treeexplorer.metrics import METRIC_KEYS

    front = treeexplorer.solve("iris", solver="cart", max_depth=2, test_size=0.3)
    df = front.to_frame()
    lead = ["id", "splits", "depth", "train_accuracy", "test_accuracy", "optimal"]
    assert list(df.columns[: len(lead)]) == lead
    assert set(METRIC_KEYS) <= set(df.columns)
    assert all(c.startswith("info_") for c in df.columns[len(lead) + len(METRIC_KEYS) - 4 :])
    assert list(df["id"]) == [t.id for t in front.trees]


# -- one list of solvers: plug-ins, unavailable modules, unregister (defects 7 and 8) -----------------------------
PLUGIN_SOURCE = """
import numpy as np
from treeexplorer.registry import Param, SolverSpec, register
from treeexplorer.solvers import RawFront, RawSolution, RawTree


def run(X, y, n_classes, control, bias=0):
    counts = np.bincount(y, minlength=n_classes)
    return RawFront([RawSolution(RawTree.leaf(counts), True)], "majority class")


register(SolverSpec("{name}", "numeric", run, (Param("bias", "int", 0, "unused"),), title="Majority"))
"""


def _plugin(tmp_path, monkeypatch, name, source):
    import uuid

    module = f"txplugin_{name}_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(source.replace("{name}", name))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TREEEXPLORER_PLUGINS", module)
    return module


def test_plugin_solver_is_in_the_one_list_and_unregisters(tmp_path, monkeypatch):
    from treeexplorer import registry

    _plugin(tmp_path, monkeypatch, "majority", PLUGIN_SOURCE)
    try:
        assert "majority" in registry.available_solvers()  # plug-ins follow the built-in solvers
        front = treeexplorer.solve("iris", solver="majority")
        assert len(front) == 1 and front.trees[0].metrics["splits"] == 0
        assert np.isclose(front.trees[0].metrics["train_accuracy"], 50 / 150)
    finally:
        assert registry.unregister("majority") is not None
    assert "majority" not in registry.available_solvers()
    assert registry.unregister("majority") is None
    import pytest

    with pytest.raises(ValueError, match="unknown solver 'majority'"):
        treeexplorer.get_solver("majority")


def test_a_solver_still_importing_in_another_thread_is_waited_for(tmp_path, monkeypatch):
    """Two sessions of a server list the solvers while one of them is still importing a solver's module: both
    lists hold it (the second used to skip the module marked as tried and miss its solver)."""
    import sys
    import threading
    import types

    from waiting import HANG_S, threads_in, wait_until

    from treeexplorer import registry

    # the plug-in's import holds until the test lets it go: the second listing surely comes while it runs
    gate = types.SimpleNamespace(inside=threading.Event(), go=threading.Event())
    monkeypatch.setitem(sys.modules, "txplugin_gate", gate)
    slow = "import txplugin_gate\ntxplugin_gate.inside.set()\ntxplugin_gate.go.wait(120)\n" + PLUGIN_SOURCE
    _plugin(tmp_path, monkeypatch, "slowmajority", slow)
    first: list[str] = []
    second: list[str] = []
    loader = threading.Thread(target=lambda: first.extend(registry.available_solvers()))
    lister = threading.Thread(target=lambda: second.extend(registry.available_solvers()))

    def lister_waits_or_ended() -> bool:  # (it waits inside load_plugins for the import in progress)
        return lister.ident in threads_in("load_plugins") or not lister.is_alive()

    try:
        loader.start()
        assert gate.inside.wait(HANG_S)  # the first thread is inside the plug-in's import now
        lister.start()
        wait_until(lister_waits_or_ended, what="the second listing to wait for the import")
        gate.go.set()
        lister.join(HANG_S)
        loader.join(HANG_S)
        assert "slowmajority" in first and "slowmajority" in second
    finally:
        gate.go.set()
        loader.join()
        lister.join()
        registry.unregister("slowmajority")


def test_a_module_that_fails_to_import_is_listed_as_unavailable(tmp_path, monkeypatch):
    from treeexplorer import registry
    from treeexplorer.ui.controller import broken_solvers, list_solvers

    module = _plugin(tmp_path, monkeypatch, "x", "raise ImportError('libfoo.so: cannot open shared object file')\n")
    unavailable = registry.unavailable_solvers()
    assert unavailable[f"plugin {module}"] == "ImportError: libfoo.so: cannot open shared object file"
    # the built-in solvers still load, and the UI reads the same lists
    assert {"cart", "murtree"} <= set(registry.available_solvers())
    assert list_solvers() == registry.available_solvers() and broken_solvers() == unavailable
    # a built-in adapter that fails is listed under its solver's name, and asking for it says why
    monkeypatch.setitem(registry.BUILTIN_ADAPTERS, "brokenbuiltin", module)
    registry._TRIED.discard(module)
    assert registry.unavailable_solvers()["brokenbuiltin"].startswith("ImportError: libfoo.so")
    import pytest

    with pytest.raises(RuntimeError, match="failed to load"):
        treeexplorer.get_solver("brokenbuiltin")
    registry._BROKEN.pop("brokenbuiltin")
    registry._BROKEN.pop(f"plugin {module}")
