"""A served tab's session kept on the server's disk (issue 51): its link survives a restart in the browser that
held it, a copied link in another browser finds nothing, neither secret is written, and disk use is bounded."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402  (registers uigreedy / uislow / uifail)
from test_session_file import table  # noqa: E402

from treeexplorer.ui import Explorer, session_store  # noqa: E402

TOKEN, BROWSER = "tok_" + "a" * 20, "b" * 43


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("TREEEXPLORER_SESSION_DIR", str(tmp_path / "sessions"))
    return tmp_path / "sessions"


@pytest.fixture(scope="module")
def explorer():
    e = Explorer(table(), "label", solver="uigreedy", max_depth=2)
    assert e.controller.runs
    yield e
    e.close()


def test_kept_for_its_browser_only_and_without_its_secrets(store, explorer):
    c = explorer.controller
    run = c.runs[0]
    c.select(run.id, run.front.trees[-1].id)
    assert session_store.save(TOKEN, BROWSER, c)
    files = sorted(p.name for p in store.iterdir())
    assert len(files) == 2 and all(TOKEN not in f for f in files)
    for path in store.iterdir():
        body = path.read_bytes()
        assert TOKEN.encode() not in body and BROWSER.encode() not in body
        assert oct(path.stat().st_mode & 0o777) == "0o600"
    data = session_store.load(TOKEN, BROWSER)
    assert data is not None and len(data.runs) == len(c.runs) and tuple(data.selected) == (0, run.front.trees[-1].id)
    assert session_store.load(TOKEN, "c" * 43) is None  # the link copied into another browser
    assert session_store.load("tok_" + "z" * 20, BROWSER) is None  # another tab's link
    assert not session_store.save(TOKEN, None, c) and not session_store.save(None, BROWSER, c)
    table = c._session_table[2]  # the embedded table's text and digest, made once per table
    assert session_store.save(TOKEN, BROWSER, c) and c._session_table[2] is table
    # a restarted server's Explorer, given the same link and browser, shows the same runs and selection
    back = Explorer(solver="uigreedy", run_default=False)
    try:
        assert back._show_stored(data)
        assert [r.front.to_frame().equals(o.front.to_frame()) for r, o in zip(back.controller.runs, c.runs)] == [True]
        assert back.selected.entry.id == run.front.trees[-1].id and "kept by the server" in back.controller.notice
    finally:
        back.close()


def test_a_damaged_file_is_dropped_and_off_keeps_nothing(store, explorer, monkeypatch):
    assert session_store.save(TOKEN, BROWSER, explorer.controller)
    (session,) = store.glob("*.txsession")
    session.write_text('{"format": "treeexplorer-session", "version": 1, "runs": "nope"}')
    assert session_store.load(TOKEN, BROWSER) is None and not list(store.iterdir())
    monkeypatch.setenv("TREEEXPLORER_SESSION_DIR", "off")
    assert session_store.store_dir() is None and not session_store.save(TOKEN, BROWSER, explorer.controller)


def test_disk_use_is_bounded_by_count_age_and_size(store, explorer, monkeypatch):
    monkeypatch.setattr(session_store, "MAX_FILES", 3)
    for i in range(5):
        assert session_store.save(f"tok_{i:020d}", BROWSER, explorer.controller)
    assert len(list(store.glob("*.txsession"))) == 3 and len(list(store.glob("*.owner"))) == 3
    assert session_store.load(f"tok_{4:020d}", BROWSER) is not None  # the newest are kept
    assert session_store.load(f"tok_{0:020d}", BROWSER) is None
    old = time.time() - session_store.MAX_AGE_S - 60
    for path in store.iterdir():
        os.utime(path, (old, old))
    assert session_store.save(TOKEN, BROWSER, explorer.controller)
    assert len(list(store.glob("*.txsession"))) == 1  # the week-old ones went
    size = next(store.glob("*.txsession")).stat().st_size
    monkeypatch.setattr(session_store, "MAX_TOTAL_BYTES", int(size * 1.5))
    assert session_store.save("tok_" + "y" * 20, BROWSER, explorer.controller)
    assert len(list(store.glob("*.txsession"))) == 1  # two would be over the size cap: the older went
