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
