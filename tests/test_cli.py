"""The CLI contract: option names, JSON output, exports, and one-line errors with non-zero exit codes."""

import json
import subprocess
import sys

import pytest

from treeexplorer.cli import EXIT_BAD_INPUT, main


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "treeexplorer.cli", *args], capture_output=True, text=True, timeout=300
    )


def test_cart_on_iris_prints_front_with_monotone_accuracy(tmp_path, capsys):
    out = tmp_path / "front.json"
    assert main(["solve", "iris", "--solver", "cart", "--test-size", "0.3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "train_acc" in printed and "test_acc" in printed
    d = json.loads(out.read_text())
    assert d["solver"] == "cart" and d["n_train"] == 105 and d["n_test"] == 45
    trees = d["trees"]
    assert len(trees) >= 4
    splits = [t["splits"] for t in trees]
    acc = [t["train_accuracy"] for t in trees]
    assert splits == sorted(splits)
    assert all(a <= b + 1e-12 for a, b in zip(acc, acc[1:])), acc
    assert all(t["test_accuracy"] is not None and t["rules"] for t in trees)


def test_export_rules_and_json(tmp_path, capsys):
    front = tmp_path / "front.json"
    assert main(["solve", "iris", "--max-depth", "3", "--out", str(front)]) == 0
    rules = tmp_path / "t.txt"
    assert main(["export", str(front), "--tree", "1", "--format", "rules", "-o", str(rules)]) == 0
    text = rules.read_text()
    assert text.startswith("# dataset: iris") and "IF " in text and "THEN" in text
    js = tmp_path / "t.json"
    assert main(["export", str(front), "--tree", "1", "--format", "json", "-o", str(js)]) == 0
    assert json.loads(js.read_text())["format"] == "treeexplorer-tree"
    assert main(["export", str(front), "--tree", "999", "--format", "json", "-o", str(js)]) == EXIT_BAD_INPUT
    assert "no tree with id 999" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve", "does-not-exist.csv"], "no such file"),
        (["solve", "iris", "--target", "nope"], "unknown target column 'nope'"),
        (["solve", "iris", "--solver", "cart", "--sparsity", "0.1"], "does not use sparsity"),
        (["solve", "iris", "--solver", "cart", "--cart-depth", "2"], "does not use cart_depth"),
        (["solve", "iris", "--n-bins", "3"], "n_bins needs a discretizer"),
        (["export", "missing.json", "--tree", "0", "--format", "rules", "-o", "x.txt"], "no such front file"),
    ],
)
def test_bad_input_exits_non_zero_with_one_line(args, message, capsys):
    assert main(args) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err
    assert len(err.splitlines()) == 1


def test_console_entry_point_runs_and_lists_datasets():
    r = run_cli("datasets")
    assert r.returncode == 0, r.stderr
    assert "iris" in r.stdout and "car" in r.stdout
    r = run_cli("solvers")
    assert r.returncode == 0 and "cart (numeric input)" in r.stdout
