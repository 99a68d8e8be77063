"""Save and open a session (issue 51): one plain JSON file round-trips the table, settings, columns, runs and
selection; a tampered, damaged or mismatched file is refused in one line, and nothing in it is executed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402  (registers uigreedy / uislow / uifail)

from treeexplorer.session_file import SessionError, is_session_file, read_session  # noqa: E402
from treeexplorer.ui import Explorer  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


def table(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    x = rng.normal(size=n)
    return pd.DataFrame(
        {
            "ID": [f"p{i}" for i in range(n)],
            "x": x,
            "z": rng.uniform(size=n),
            "colour": rng.choice(["red", "blue"], size=n),
            "label": np.where(x > 0.2, "yes", "no"),
        }
    )


def same_runs(a: Explorer, b: Explorer) -> None:
    ra, rb = a.controller.runs, b.controller.runs
    assert [r.settings.label() for r in ra] == [r.settings.label() for r in rb]
    for x, y in zip(ra, rb):
        assert x.front.to_frame().equals(y.front.to_frame())
    assert a.selected.entry.id == b.selected.entry.id and a.selected.front.data_key == b.selected.front.data_key
    assert a.controller.compare == b.controller.compare


def test_bundled_session_round_trip(tmp_path):
    e = Explorer(dataset="iris", solver="uigreedy", max_depth=2, seed=3)
    try:
        e.sidebar.solver.param_widgets["max_depth"].value = 3
        assert e.run_now(wait=True) is not None
        run = e.controller.runs[0]
        e.select(run.id, 1)
        e.controller.compare = 2
        path = e.save(tmp_path / "iris.txsession")
    finally:
        e.close()
    assert is_session_file(path)
    doc = json.loads(path.read_text())
    assert doc["table"] == {"kind": "bundled", "name": "iris", "digest": doc["table"]["digest"]} and doc["seed"] == 3
    back = Explorer.open(path)
    try:
        same_runs(e, back)
        assert back.selected.run_id == back.controller.runs[0].id and back.controller.seed == 3
        assert back.sidebar.data.seed_w.value == 3 and back.dataset_w.value == "iris"
        assert back.tree_fig.tree is back.selected.entry.tree  # the tree card shows the saved selection
    finally:
        back.close()


def test_embedded_table_with_its_columns_round_trip(tmp_path):
    e = Explorer(table(), solver="uigreedy", max_depth=2)
    try:
        assert "ID" not in e.controller.dataset.schema.feature_names  # left out as an ID
        e.sidebar.data.columns_w.value = ["ID", "x", "colour"]  # brought back, z left out
        assert e.run_now(wait=True) is not None
        e.select(e.controller.runs[0].id, 1)
        path = e.save(tmp_path / "t.txsession")
    finally:
        e.close()
    back = Explorer.open(path)
    try:
        assert back.controller.dataset.schema.feature_names == ["ID", "x", "colour"]
        assert back.controller.features_chosen == ["ID", "x", "colour"]
        same_runs(e, back)
    finally:
        back.close()


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    e = Explorer(table(), solver="uigreedy", max_depth=1)
    try:
        path = e.save(tmp_path_factory.mktemp("s") / "t.txsession")
    finally:
        e.close()
    return json.loads(path.read_text())


def refused(tmp_path, doc_or_text, words: str) -> None:
    p = tmp_path / "bad.txsession"
    p.write_text(doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text))
    with pytest.raises(SessionError) as info:
        read_session(p)
    text = str(info.value)
    assert words in text and "\n" not in text and str(p) in text, text


def test_tampered_or_mismatched_files_are_refused_in_one_line(tmp_path, saved):
    doc = json.loads(json.dumps(saved))
    doc["table"]["csv"] = doc["table"]["csv"].replace("yes", "no", 1)  # a label edited
    refused(tmp_path, doc, "no longer matches the one the session was saved with")
    doc = json.loads(json.dumps(saved))
    doc["table"] = {"kind": "bundled", "name": "iris", "digest": "0" * 64}  # another version of the table
    refused(tmp_path, doc, "'iris' no longer matches")
    doc = json.loads(json.dumps(saved))
    doc["runs"][0]["front"]["trees"][1]["tree"]["nodes"][0]["true"] = 0  # a cycle in a tree
    refused(tmp_path, doc, "runs[0].front")
    doc = json.loads(json.dumps(saved))
    doc["runs"][0]["settings"]["solver"] = {"__class__": "os.system"}  # values are checked, never run
    refused(tmp_path, doc, "runs[0].settings.solver must be str")
    doc = json.loads(json.dumps(saved))
    doc["seed"] = "0"
    refused(tmp_path, doc, "seed must be int")
    doc = json.loads(json.dumps(saved))
    doc["selected"] = [0, 99]
    refused(tmp_path, doc, "selected names tree 99")
    doc = json.loads(json.dumps(saved))
    doc["extra"] = 1
    refused(tmp_path, doc, "unknown field 'extra'")
    refused(tmp_path, {"format": "something else"}, "not a treeexplorer session file")
    refused(tmp_path, json.dumps(saved)[:500], "truncated")


def test_a_table_whose_rows_changed_under_the_same_digest_rules_is_refused_on_open(tmp_path, saved):
    from treeexplorer.session_file import parse_session
    from treeexplorer.ui.sessionview import open_into

    doc = json.loads(json.dumps(saved))
    doc["runs"][0]["front"]["data_key"] = "f" * 16  # the front says it was solved on other rows
    data = parse_session(json.dumps(doc).encode(), "other.txsession")
    e = Explorer(dataset="iris", run_default=False)
    try:
        with pytest.raises(SessionError, match="was solved on other rows"):
            open_into(e.controller, data, "other.txsession")
    finally:
        e.close()


def test_the_app_command_opens_a_session_file_and_refuses_a_mismatched_one(tmp_path, saved, capsys):
    from treeexplorer.app import open_explorer
    from treeexplorer.cli import main

    good = tmp_path / "good.txsession"
    good.write_text(json.dumps(saved))
    e = open_explorer(str(good))
    try:
        assert len(e.controller.runs) == len(saved["runs"]) and e.selected is not None
        assert e.selected.entry.id == saved["selected"][1]
    finally:
        e.close()
    doc = json.loads(json.dumps(saved))
    doc["table"]["digest"] = "1" * 64
    bad = tmp_path / "bad.txsession"
    bad.write_text(json.dumps(doc))
    assert main(["app", str(bad), "--port", "0"]) != 0  # refused before any server starts
    err = capsys.readouterr().err
    assert "no longer matches" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
