"""State belongs to its table (issue 51): the per-table state model, the controller's selection and the
Alternatives card's set switched with the table, the Explain tab following the selected tree, Enter's scope."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402  (registers uigreedy / uislow / uifail)

from treeexplorer.ui.controller import Controller, RunSettings  # noqa: E402
from treeexplorer.ui.explain import example_values, row_index  # noqa: E402
from treeexplorer.ui.state import TableStates  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


def penguins(n: int = 90) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    species = np.array(["Adelie", "Gentoo", "Chinstrap"])[np.arange(n) % 3]
    return pd.DataFrame(
        {
            "island": np.where(species == "Gentoo", "Biscoe", "Dream"),
            "bill_length_mm": 38 + 8 * (species != "Adelie") + rng.normal(size=n),
            "flipper_length_mm": 190 + 25 * (species == "Gentoo") + rng.normal(size=n),
            "species": species,
        }
    )


def titanic(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    sex = rng.choice(["male", "female"], size=n)
    return pd.DataFrame(
        {
            "PassengerId": np.arange(1, n + 1),
            "pclass": rng.integers(1, 4, size=n),
            "sex": sex,
            "age": rng.uniform(1, 70, size=n).round(1),
            "survived": np.where(sex == "female", 1, 0),
        }
    )


def test_table_states_switch_saves_and_brings_back_each_tables_own():
    states, shown = TableStates(), {"a": None}
    states.register("a", lambda: shown["a"], lambda v: shown.__setitem__("a", v))
    assert states.switch(("t1",)) and shown["a"] is None  # a new table: the part's empty state
    shown["a"] = "penguins' set"
    assert states.switch(("t2",)) and shown["a"] is None  # nothing of t1 on t2
    shown["a"] = "titanic's set"
    assert not states.switch(("t2",))  # already shown: nothing done
    assert states.switch(("t1",)) and shown["a"] == "penguins' set"
    assert states.get(("t2",), "a") == "titanic's set"
    states.put(("t3",), "a", "finished elsewhere")
    assert states.switch(("t3",)) and shown["a"] == "finished elsewhere"
    states.forget(("t1",))
    assert states.switch(("t1",)) and shown["a"] is None


def test_controller_selection_follows_its_table():
    c = Controller()
    try:
        assert c.load_frame(penguins(), name="penguins")
        run = c.run_sync(RunSettings("uigreedy", {"max_depth": 2}), timeout=20)
        assert run is not None, c.error
        c.select(run.id, 1)
        c.compare = 0
        assert c.load_frame(titanic(), name="titanic")
        assert c.runs == [] and c.selected is None and c.compare is None
        assert "PassengerId" not in c.dataset.schema.feature_names  # an id column left out by default
        assert any("ID-like" in n for n in c.notice.split("; "))
        other = c.run_sync(RunSettings("uigreedy", {"max_depth": 1}), timeout=20)
        assert other is not None and c.selected[0] == other.id
        assert c.load_frame(penguins(), name="penguins")  # back: its run, selection and comparison return
        assert [r.id for r in c.runs] == [run.id] and c.selected == (run.id, 1) and c.compare == 0
        assert c.load_frame(titanic(), name="titanic")
        assert [r.id for r in c.runs] == [other.id] and c.selected[0] == other.id
    finally:
        c.close()


def test_alternatives_set_and_explain_belong_to_their_table():
    from treeexplorer.ui import Explorer

    e = Explorer(penguins(), solver="murtree", max_depth=2)
    try:
        c, session = e.controller, e.alternatives.session
        run, entry = c.selection()
        job = e.find_alternatives()
        assert job is not None and job.wait(300), session.status
        session.poll()
        assert session.front is not None and len(session.front) > 1, session.status
        found, status = session.front, session.status
        explain = e.detail.tabs.explain_row
        assert "bill_length_mm=" in explain.values_w.placeholder  # the table's own columns, not iris'
        explain.values_w.value = "island=Nowhere"
        assert explain.explain() is None and "Cannot explain" in explain.out.object
        e.alternatives.exclude.value = ["island"]
        assert session.exclude == ["island"]
        explain.values_w.value = ""
        assert c.load_frame(titanic(), name="titanic")
        e.solver_w.value = "uigreedy"
        new = e.run_now(wait=True)
        assert new is not None, c.error
        assert session.front is None and session.point is None and session.status == ""
        assert e.alternatives.exclude.value == [] and "island" not in e.alternatives.exclude.options
        assert "Cannot explain" not in explain.out.object and "bill_length" not in explain.values_w.placeholder
        assert "sex=" in explain.values_w.placeholder or "pclass=" in explain.values_w.placeholder
        assert c.load_frame(penguins(), name="penguins")  # back on penguins: its set and filters return
        assert session.front is found and session.status == status and session.point is entry
        assert e.alternatives.exclude.value == ["island"] and session.exclude == ["island"]
        assert c.selection() == (run, entry)
    finally:
        e.close()


def test_explain_helpers_read_the_row_field_and_name_the_tables_columns():
    c = Controller()
    try:
        assert c.load_frame(penguins(), name="penguins")
        schema = c.dataset.schema
        text = example_values(schema, c.dataset)
        assert text.startswith("island=") and "bill_length_mm=" in text
        assert example_values(schema, None) == "island=…, bill_length_mm=…"
    finally:
        c.close()
    assert row_index(" 5 ", 10) == 5
    for bad, words in (("", "give a row index from 0 to 9"), ("x", "not 'x'"), ("12", "not 12"), ("-1", "not '-1'")):
        with pytest.raises(ValueError, match=words):
            row_index(bad, 10)


def test_enter_runs_only_in_the_run_settings():
    from treeexplorer.ui.enterkey import EnterKey

    assert '"enter-run"' in EnterKey._esm  # the listener's scope: fields inside the sidebar
    from treeexplorer.ui import Explorer

    e = Explorer(penguins(), solver="uigreedy", run_default=False)
    try:
        assert "enter-run" in e.sidebar._layout.css_classes
        assert "enter-run" not in e.main.css_classes
    finally:
        e.close()


def test_columns_control_leaves_ids_out_and_brings_them_back():
    from treeexplorer.ui import Explorer

    df = titanic()
    df.insert(0, "Unnamed: 0", [f"row {i}" for i in range(len(df))])
    e = Explorer(df, solver="uigreedy", max_depth=1)
    try:
        c, data = e.controller, e.sidebar.data
        assert set(data.columns_w.value) == {"pclass", "sex", "age"}
        labels = {v: k for k, v in data.columns_w.options.items()}
        assert "survived" not in labels and labels["PassengerId"].endswith("ID-like")
        assert "whole number, 120 distinct" in labels["PassengerId"]
        assert "'Unnamed: 0'" in data.columns_note.object and "'PassengerId'" in data.columns_note.object
        first = c.runs[-1]
        data.columns_w.value = [*data.columns_w.value, "PassengerId"]  # brought back
        assert "PassengerId" in c.dataset.schema.feature_names and c.features_chosen is not None
        assert c.runs == [] and data.columns_note.object == ""  # other columns, other data: its own runs
        assert e.run_now(wait=True) is not None
        data.columns_w.value = ["sex"]
        assert c.dataset.schema.feature_names == ["sex"]
        data.columns_w.value = []  # nothing left to learn from: refused, the columns in use stay
        assert c.dataset.schema.feature_names == ["sex"] and data.columns_w.value == ["sex"]
        assert "no feature column left" in c.error
        data.columns_w.value = ["pclass", "sex", "age"]  # the default again: the first run comes back
        assert c.features_chosen is None and [r.id for r in c.runs] == [first.id]
    finally:
        e.close()


def test_compare_pairs_trees_of_two_runs_of_the_same_data():
    from treeexplorer.ui import Explorer

    e = Explorer(penguins(), solver="uigreedy", max_depth=1)
    try:
        c, tabs = e.controller, e.detail.tabs
        e.sidebar.solver.param_widgets["max_depth"].value = 3
        second = e.run_now(wait=True)
        first = c.runs[0]
        e.select(first.id, 1)
        other = second.front[2]
        label = next(k for k, v in tabs.compare_w.options.items() if v == (second.id, other.id))
        assert label.startswith(f"#{second.id} tree {other.id}: ")  # another run's tree, named with its run
        tabs.compare_w.value = (second.id, other.id)
        assert c.compare_run == second.id and c.compared() is other
        assert tabs.compare_w.value == (second.id, other.id) and tabs.compare_diagram is not None
        e.select(second.id, 0)  # a new selection starts over: the next simpler tree of its own run
        assert c.compare is None and c.compare_run is None
        with pytest.raises(KeyError):
            c.compare_with(99, 0)
    finally:
        e.close()


def test_a_target_waiting_for_confirmation_shows_only_its_question():
    """mtcars' layout: choosing ``mpg`` (25 distinct numbers) asks first; meanwhile the page holds the question,
    not the notes of the table still in use under its old target ('carb'), and they come back with the answer."""
    from treeexplorer.ui import Explorer

    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "Unnamed: 0": [f"car {i}" for i in range(32)],
            "mpg": np.round(rng.uniform(10, 34, 32), 1),
            "wt": np.round(rng.uniform(1.5, 5.5, 32), 3),
            "carb": rng.integers(1, 5, 32),
        }
    )
    e = Explorer(df, solver="uigreedy", run_default=False)
    try:
        c, data = e.controller, e.sidebar.data
        assert c.target == "carb" and e.notice_w.visible and "'carb'" in e.notice_w.object
        data.target_w.value = "mpg"
        assert c.many_classes is not None and c.target == "carb" and e.error_w.visible
        assert "'mpg'" in e.error_w.object and not e.notice_w.visible
        data.keep_previous_table()
        assert c.target == "carb" and data.target_w.value == "carb" and e.notice_w.visible
    finally:
        e.close()
