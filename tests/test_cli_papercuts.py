"""The command line's answers to a mistyped command line, and to a reader that goes away."""

import subprocess
import sys

import pytest

from treeexplorer.cli import main


def _error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_an_unknown_option_before_the_command_is_named(capsys):
    err = _error(capsys, ["--bogus"])
    assert err.startswith("treeexplorer: error: unrecognized arguments: --bogus; give a command first: ")
    assert "required: command" not in err


def test_a_misspelt_option_or_command_gets_the_nearest_spelling(capsys):
    err = _error(capsys, ["solve", "iris", "--max-dpeth", "3"])
    assert err.endswith("unrecognized arguments: --max-dpeth 3 (--max-dpeth: did you mean --max-depth?)"), err
    err = _error(capsys, ["solv", "iris"])
    assert err.endswith("did you mean 'solve'?"), err
    err = _error(capsys, ["solve", "iris", "--zzzzzz"])  # nothing near: no suggestion
    assert err.endswith("unrecognized arguments: --zzzzzz"), err


@pytest.mark.parametrize("args", [["solve", "--help"], ["solvers"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(args):
    proc = subprocess.Popen(
        [sys.executable, "-m", "treeexplorer", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()  # as `| head` does once it has its lines: every write now fails with EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(120) in (0, 141) and err == "", err


def test_a_closed_tab_leaves_no_traceback_in_the_servers_terminal(caplog):
    import asyncio

    from tornado.websocket import WebSocketClosedError

    from treeexplorer.app import quiet_closed_tabs

    loop = asyncio.new_event_loop()
    try:
        quiet_closed_tabs(loop)
        with caplog.at_level("ERROR", logger="asyncio"):
            # what asyncio reports for Tornado's failed write to a closed tab, then for any other failure
            loop.call_exception_handler(
                {"message": "Task exception was never retrieved", "exception": WebSocketClosedError()}
            )
            assert caplog.records == []
            loop.call_exception_handler({"message": "Task exception was never retrieved", "exception": KeyError("x")})
        assert len(caplog.records) == 1 and "never retrieved" in caplog.records[0].getMessage()
    finally:
        loop.close()
