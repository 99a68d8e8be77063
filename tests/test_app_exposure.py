"""Serving on a public address: one warning that there is no login, and the websocket origin check stays on."""

from __future__ import annotations

import io
import logging
import types
from pathlib import Path

import treeexplorer.app as app
from treeexplorer.cli import main


class _FakeServer:
    port = 5999
    io_loop = types.SimpleNamespace(start=lambda: None, add_callback=lambda *a: None)

    def start(self):
        pass

    def stop(self):
        pass


def _serve(monkeypatch, **kw) -> dict:
    import panel as pn

    seen: dict = {}
    monkeypatch.setattr(pn, "serve", lambda *a, **k: seen.update(k) or _FakeServer())
    monkeypatch.setattr("treeexplorer.ui.warm.warm_up_in_background", lambda **k: None)
    monkeypatch.setattr(app, "_stop_on_ctrl_c", lambda *a: None)  # no signal handlers in the test process
    assert app.serve("iris", out=io.StringIO(), **kw) == 0
    return seen


def test_a_public_address_warns_once_and_names_the_origins(monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="treeexplorer.app"):
        seen = _serve(monkeypatch, address="0.0.0.0", port=5999)
    warnings = [r.getMessage() for r in caplog.records if "no login" in r.getMessage()]
    assert len(warnings) == 1 and "authentication" in warnings[0]
    origins = seen["websocket_origin"]
    assert origins != "*" and "*" not in origins and "localhost:5999" in origins
    assert all(o.endswith(":5999") for o in origins)


def test_given_origins_are_used_and_localhost_does_not_warn(monkeypatch, caplog):
    seen = _serve(monkeypatch, address="0.0.0.0", port=5999, websocket_origins=["trees.example.org"])
    assert seen["websocket_origin"] == ["trees.example.org"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="treeexplorer.app"):
        seen = _serve(monkeypatch, address="localhost", port=5999)
    assert seen["websocket_origin"] is None and not [r for r in caplog.records if "no login" in r.getMessage()]


def test_the_cli_passes_the_origins_on(monkeypatch):
    seen: dict = {}
    monkeypatch.setattr(app, "serve", lambda *a, **kw: seen.update(kw) or 0)
    monkeypatch.setattr("os._exit", lambda code: None)
    main(["app", "iris", "--address", "0.0.0.0", "--allow-websocket-origin", "trees.example.org:5006"])
    assert seen["websocket_origins"] == ["trees.example.org:5006"] and seen["address"] == "0.0.0.0"


# -- the CLI never writes over its own input; absurd limits are one line --------------------------------------------
def test_the_cli_refuses_to_write_over_its_input(tmp_path, capsys):
    from treeexplorer.cli import EXIT_BAD_INPUT

    data = tmp_path / "data.csv"
    data.write_text((Path(__file__).parents[1] / "assets" / "iris.csv").read_text())
    before = data.read_bytes()
    assert main(["solve", str(data), "--solver", "cart", "--max-depth", "1", "--out", str(data)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is the input file" in err and data.read_bytes() == before
    front = tmp_path / "f.json"
    assert main(["solve", str(data), "--solver", "cart", "--max-depth", "1", "--out", str(front)]) == 0
    kept = front.read_bytes()
    capsys.readouterr()
    assert main(["export", str(front), "--tree", "1", "--format", "json", "-o", str(front)]) == EXIT_BAD_INPUT
    assert "is the input file" in capsys.readouterr().err and front.read_bytes() == kept


def test_an_absurd_memory_limit_is_one_line(capsys):
    from treeexplorer.cli import EXIT_BAD_INPUT

    assert main(["solve", "iris", "--solver", "cart", "--max-depth", "1", "--memory-limit", "1e20"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "at most 1,000,000,000 MB" in err
