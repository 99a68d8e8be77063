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


# -- issue 13: --version, export to standard output, plurals, criterion, plug-ins ----------------------------------
def test_version(capsys):
    import treeexplorer

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"treeexplorer {treeexplorer.__version__}"


@pytest.fixture(scope="module")
def iris_front(tmp_path_factory):
    path = tmp_path_factory.mktemp("front") / "front.json"
    assert main(["solve", "iris", "--max-depth", "3", "--out", str(path)]) == 0
    return path


def test_export_writes_text_to_stdout(iris_front, tmp_path, capsys):
    from treeexplorer.export import export_bytes
    from treeexplorer.front import Front

    capsys.readouterr()
    front = Front.from_json(iris_front)
    for fmt in ("rules", "json", "svg"):
        for out in ([], ["-o", "-"]):
            assert main(["export", str(iris_front), "--tree", "1", "--format", fmt, *out]) == 0
            assert capsys.readouterr().out == export_bytes(fmt, front, front[1]).decode("utf-8")
    assert not (tmp_path / "-").exists() and not __import__("pathlib").Path("-").exists()
    # a file gets the same bytes; png (binary) needs -o
    png = tmp_path / "t.png"
    assert main(["export", str(iris_front), "--tree", "1", "--format", "png", "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["export", str(iris_front), "--tree", "1", "--format", "png"]) == EXIT_BAD_INPUT
    assert "binary" in capsys.readouterr().err


def test_png_to_stdout_with_dash(iris_front):
    args = [
        sys.executable,
        "-m",
        "treeexplorer",
        "export",
        str(iris_front),
        "--tree",
        "1",
        "--format",
        "png",
        "-o",
        "-",
    ]
    r = subprocess.run(args, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout[:8] == b"\x89PNG\r\n\x1a\n" and len(r.stdout) > 1000


def test_one_error_is_singular(iris_front):
    from treeexplorer.export import plural, rules_text
    from treeexplorer.front import Front

    front = Front.from_json(iris_front)
    one = [t for t in front.trees if t.metrics["train_errors"] == 1 or t.metrics["splits"] == 1]
    assert one  # iris, depth <= 3: the 1-split tree, and (full data) trees with few errors
    for t in one:
        header = rules_text(t.tree, front, t).splitlines()
        line = next(h for h in header if h.startswith(f"# tree {t.id}:"))
        assert "1 errors" not in line and "1 splits" not in line
        assert plural(t.metrics["splits"], "split") in line and plural(t.metrics["train_errors"], "error") in line
    assert [plural(n, "error") for n in (0, 1, 2)] == ["0 errors", "1 error", "2 errors"]


@pytest.mark.parametrize("solver", ["cart", "dpdt"])
def test_solver_criterion_via_P(solver, tmp_path, capsys):
    out = tmp_path / "f.json"
    args = ["solve", "iris", "--solver", solver, "--max-depth", "2", "-P", "criterion=entropy", "--out", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["params"]["criterion"] == "entropy"


def test_mid_criterion_flag_still_reaches_mid(tmp_path, capsys):
    args = ["solve", "iris", "--solver", "murtree", "--discretizer", "mid", "--criterion", "gini", "--max-depth", "1"]
    assert main(args) == 0, capsys.readouterr().err
    args = ["solve", "iris", "--solver", "murtree", "--discretizer", "quantile", "--criterion", "gini"]
    assert main(args) == EXIT_BAD_INPUT
    assert "applies to the 'mid' discretizer only" in capsys.readouterr().err


def test_plugin_solver_and_unavailable_module_in_the_cli(tmp_path):
    import os

    (tmp_path / "txcli_plugin.py").write_text(
        "import numpy as np\n"
        "from treeexplorer.registry import SolverSpec, register\n"
        "from treeexplorer.solvers import RawFront, RawSolution, RawTree\n"
        "def run(X, y, n_classes, control):\n"
        "    return RawFront([RawSolution(RawTree.leaf(np.bincount(y, minlength=n_classes)), True)], 'majority')\n"
        "register(SolverSpec('majority', 'numeric', run, title='Majority'))\n"
    )
    (tmp_path / "txcli_broken.py").write_text("raise ImportError('needs libfoo')\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
        "TREEEXPLORER_PLUGINS": "txcli_plugin, txcli_broken",
    }

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "treeexplorer", *args], capture_output=True, text=True, timeout=300, env=env
        )

    r = cli("solve", "iris", "--solver", "majority")
    assert r.returncode == 0, r.stderr
    assert "solver majority" in r.stdout and "1 tree in" in r.stdout
    r = cli("solvers")
    assert r.returncode == 0, r.stderr
    assert "majority (numeric input): Majority" in r.stdout
    assert "plugin txcli_broken: unavailable (ImportError: needs libfoo)" in r.stdout
    r = cli("solve", "iris", "--solver", "nope")
    assert r.returncode == EXIT_BAD_INPUT
    from treeexplorer.registry import SOLVER_NAMES

    assert f"unknown solver 'nope'; choose one of {', '.join(SOLVER_NAMES)}, majority" in r.stderr
    # sweep accepts the plug-ins solve accepts (it used to list only the built-in names as argparse choices)
    r = cli("sweep", "iris", "--solver", "majority", "cart", "--max-depth", "1", "--cv", "2", "--scheduler", "serial")
    assert r.returncode == 0, r.stderr
    assert "majority" in r.stdout


def test_app_server_settings_are_checked_and_passed_on(monkeypatch):
    import os

    import treeexplorer.app as app
    from treeexplorer.cli import main

    seen = {}
    monkeypatch.setattr(
        app, "serve", lambda *a, **kw: seen.update(kw, env=os.environ.get("TREEEXPLORER_MAX_JOBS")) or 0
    )
    monkeypatch.setattr(os, "_exit", lambda code: seen.setdefault("exit", code))
    monkeypatch.delenv("TREEEXPLORER_MAX_JOBS", raising=False)
    main(["app", "iris", "--max-jobs", "3", "--num-threads", "2", "--no-show"])
    assert seen["num_threads"] == 2 and seen["env"] == "3" and seen["exit"] == 0
    monkeypatch.delenv("TREEEXPLORER_MAX_JOBS", raising=False)
    assert main(["app", "iris", "--max-jobs", "0"]) == 2  # one clear line, exit 2


# -- issue 16: the whole front from the CLI, as CSV that pandas reads --------------------------------------------
def test_export_whole_front_as_csv(iris_front, tmp_path, capsys):
    import pandas as pd

    from treeexplorer.export import CSV_PROVENANCE
    from treeexplorer.front import Front

    front = Front.from_json(iris_front)
    out = tmp_path / "front.csv"
    assert main(["export", str(iris_front), "--format", "csv", "-o", str(out)]) == 0
    assert f"front written to {out}" in capsys.readouterr().out
    text = out.read_text()
    assert not text.startswith("#") and text.startswith("id,splits,")
    table = pd.read_csv(out)  # header first: no comment lines to skip
    assert table["id"].tolist() == [t.id for t in front.trees]
    assert table["train_accuracy"].tolist() == pytest.approx([t.metrics["train_accuracy"] for t in front.trees])
    assert list(table.columns[-len(CSV_PROVENANCE) :]) == list(CSV_PROVENANCE)
    assert set(table["dataset"]) == {"iris"} and set(table["solver"]) == {"cart"}
    # to standard output, and the front JSON the same way
    assert main(["export", str(iris_front), "--format", "front_csv"]) == 0
    assert capsys.readouterr().out == text
    assert main(["export", str(iris_front), "--format", "front_json", "-o", str(tmp_path / "f.json")]) == 0
    assert len(Front.from_json(tmp_path / "f.json")) == len(front)
    # one clear line when --tree is missing for a tree format, or given for a front format
    capsys.readouterr()
    assert main(["export", str(iris_front), "--format", "rules"]) == EXIT_BAD_INPUT
    assert "give --tree ID" in capsys.readouterr().err
    assert main(["export", str(iris_front), "--tree", "1", "--format", "csv"]) == EXIT_BAD_INPUT
    assert "exports the whole front: leave out --tree" in capsys.readouterr().err


def test_a_plugin_package_registers_through_its_entry_point(tmp_path):
    """An installed distribution whose ``treeexplorer.solvers`` entry point names a SolverSpec adds that solver to
    the CLI and the API, with no environment variable; a broken entry point is listed as unavailable."""
    import os

    (tmp_path / "txep_plugin.py").write_text(
        "import numpy as np\n"
        "from treeexplorer.registry import SolverSpec\n"
        "from treeexplorer.solvers import RawFront, RawSolution, RawTree\n"
        "def run(X, y, n_classes, control):\n"
        "    return RawFront([RawSolution(RawTree.leaf(np.bincount(y, minlength=n_classes)), True)], 'majority')\n"
        "SPEC = SolverSpec('epmajority', 'numeric', run, title='Majority from an entry point')\n"
    )
    info = tmp_path / "txep_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: txep-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[treeexplorer.solvers]\nepmajority = txep_plugin:SPEC\nbroken = txep_missing_module:SPEC\n"
    )
    env = {
        **{k: v for k, v in os.environ.items() if k != "TREEEXPLORER_PLUGINS"},
        "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])),
    }

    def run(*args):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, env=env)

    r = run("-m", "treeexplorer", "solvers")
    assert r.returncode == 0, r.stderr
    assert "epmajority (numeric input): Majority from an entry point" in r.stdout
    assert "plugin broken: unavailable (ModuleNotFoundError" in r.stdout
    r = run("-m", "treeexplorer", "solve", "iris", "--solver", "epmajority")
    assert r.returncode == 0, r.stderr
    assert "1 tree in" in r.stdout
    r = run("-c", "import treeexplorer as tx; print(len(tx.solve('iris', solver='epmajority')))")
    assert r.returncode == 0 and r.stdout.strip() == "1", r.stderr
