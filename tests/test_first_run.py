"""What a newcomer meets on a first run: where compiled code goes, what a cold start says, and the wording of
a few messages (SAT's contradictory rows, no discretizer, the estimator's target)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treeexplorer as tx
from treeexplorer import _kernel_cache
from treeexplorer.cli import main
from treeexplorer.ui.progress import describe
from treeexplorer.warm import COMPILE_ESTIMATE_S, compile_notice, ensure_warm, estimate_seconds, needs_compile

ROOT = Path(__file__).resolve().parents[1]


def test_a_checkout_keeps_numbas_in_tree_cache(monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    assert _kernel_cache._is_checkout(_kernel_cache._kernel_sources())
    assert _kernel_cache.kernel_cache_dir() is None


def test_an_installed_package_caches_in_the_user_folder_keyed_by_version(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(_kernel_cache, "_is_checkout", lambda sources: False)
    one, two = _kernel_cache.kernel_cache_dir("1.0"), _kernel_cache.kernel_cache_dir("1.1")
    assert one.parent == two.parent == tmp_path / "cache" / "treeexplorer"
    assert one.name.startswith("kernels-1.0-") and two.name.startswith("kernels-1.1-") and one.is_dir()
    assert _kernel_cache.kernel_cache_dir("1.0") == one  # stable for one version and one set of sources
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert _kernel_cache.kernel_cache_dir("1.0") is None  # the user's setting wins


def test_a_cold_cache_is_detected_and_said(tmp_path):
    # a fresh process whose numba cache is an empty folder: every solver would compile; nothing is compiled here
    code = "from treeexplorer.warm import needs_compile; print([needs_compile(s) for s in ('cart', 'dpdt')])"
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "empty"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert out.stdout.strip() == "[True, True]", out.stderr
    assert compile_notice("dpdt", 75.4) == "compiling the dpdt kernels (first use only, about 75 s on this machine)"
    # without an estimate given: the CPU seconds it needs over the share of a core a worker gets now
    assert compile_notice("dpdt", estimate_seconds("dpdt", share=0.5)).endswith(
        f"about {2 * COMPILE_ESTIMATE_S['dpdt']} s on this machine)"
    )


def test_bad_input_on_a_cold_cache_is_refused_before_any_compile(tmp_path):
    # the inputs are checked first: the error comes alone and at once, not after a minute of compiling
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "empty"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in (["iris", "--target", "no-such-column"], [str(tmp_path / "missing.csv")]):
        cmd = [sys.executable, "-m", "treeexplorer", "solve", *args, "--solver", "dpdt"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
        assert out.returncode == 2, out.stderr
        assert "compiling" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
        assert out.stderr.startswith("error: "), out.stderr
    assert not any((tmp_path / "empty").rglob("*.nbi")), "kernels were compiled for a refused input"


def test_the_cli_compile_notice_follows_the_warm_up_reports():
    import io

    from treeexplorer.cli import CompileNotice

    stream = io.StringIO()
    notice = CompileNotice(stream)
    notice({"phase": "loading"})
    for s in (0.0, 1.0, 2.0):
        notice({"phase": "compiling", "solver": "cart", "cold": True, "seconds": s, "estimate_s": 25})
    for s in (0.0, 1.0):
        notice({"phase": "compiling", "solver": "branches", "cold": True, "seconds": s, "estimate_s": 60})
    notice({"phase": "solving"})
    notice.finish()
    assert stream.getvalue().splitlines() == [
        compile_notice("cart", 25),
        "compiled in 2 s (cached for later runs)",
        compile_notice("branches", 60),
        "compiled in 1 s (cached for later runs)",
    ]
    stream = io.StringIO()
    notice = CompileNotice(stream)
    notice({"phase": "compiling", "solver": "cart", "cold": False, "seconds": 0.2})  # loading from the cache
    notice.finish()
    assert stream.getvalue() == ""


def test_a_warm_solver_needs_no_compile():
    ensure_warm("cart")
    assert not needs_compile("cart")


def test_the_run_bar_says_compiling_with_the_seconds_so_far():
    report = {"phase": "compiling", "solver": "murtree", "cold": True, "seconds": 12.3, "estimate_s": 40}
    text, fraction = describe(report)
    assert text == f"{compile_notice('murtree', 40)} · 12 s"
    assert fraction == pytest.approx(12.3 / 40)
    # with the kernels compiled so far: said, and half the bar's progress
    text, fraction = describe({**report, "kernels": 5, "kernels_total": 20})
    assert text == f"{compile_notice('murtree', 40)} · 5 of 20 kernels · 12 s"
    assert fraction == pytest.approx((5 / 20 + 12.3 / 40) / 2)
    _, fraction = describe({**report, "seconds": 90.0, "kernels": 20, "kernels_total": 20})
    assert fraction < 1.0  # never "done" before the run's own reports
    text, fraction = describe({"phase": "compiling", "solver": "cart", "cold": False, "seconds": 0.4})
    assert "loading" in text and fraction is None


def test_warm_command_loads_the_named_solvers(capsys):
    assert main(["warm", "--solver", "cart"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("kernel cache: ") and "cart: " in out
    assert main(["warm", "--solver", "no-such-solver"]) == 2
    assert "unknown solver 'no-such-solver'" in capsys.readouterr().err


def test_sat_contradictions_tell_cli_users_the_cli_spelling(tmp_path, capsys):
    rows = [(0, 1, "a"), (0, 1, "b"), (1, 0, "a"), (1, 1, "b")] * 5
    path = tmp_path / "clash.csv"
    pd.DataFrame(rows, columns=["p", "q", "label"]).to_csv(path, index=False)
    assert main(["solve", str(path), "--solver", "sat", "--discretizer", "none"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < 300, err
    assert "-P conflicts=majority" in err and "conflicts='majority'" not in err
    assert err.startswith("error: 10 training rows (1 group) have identical tests but different labels"), err
    assert "(rows 1, 2, 5, 6, 9, 10, 13, 14 and 2 more, counted from 1 after the header)" in err
    assert main(["solve", str(path), "--solver", "sat", "--discretizer", "none", "-P", "conflicts=majority"]) == 0


def test_no_discretizer_states_the_tables_own_tests(capsys):
    assert main(["solve", "car", "--solver", "murtree", "--discretizer", "none", "--max-depth", "2"]) == 0
    out = capsys.readouterr().out
    assert "of none" not in out
    assert "optimal over the table's " in out and " 0/1 tests" in out


def test_the_estimators_rules_name_the_target():
    from treeexplorer.estimator import TreeExplorerClassifier

    X = pd.DataFrame({"a": np.arange(40) % 4, "b": np.arange(40) % 3})
    named = pd.Series(np.where(X["a"] > 1, "hi", "lo"), name="level")
    clf = TreeExplorerClassifier(solver="cart", max_depth=1).fit(X, named)
    assert "# target: level;" in tx.rules_text(clf.tree_)
    clf = TreeExplorerClassifier(solver="cart", max_depth=1).fit(X, named.to_numpy())
    text = tx.rules_text(clf.tree_)
    assert "# target: y;" in text and "__target__" not in text


def test_the_app_warms_the_selected_solver_next(monkeypatch):
    # the background warm-up takes the first page's solver first, then the one the user selects meanwhile
    import threading

    from treeexplorer.registry import SOLVER_NAMES
    from treeexplorer.ui import warm as ui_warm
    from treeexplorer.ui.controller import list_solvers

    names = [n for n in list_solvers() if n in SOLVER_NAMES]
    assert "cart" in names and "sat" in names
    names.append("rashomon")  # the Alternatives card's kernels: after the solvers'
    order, first_started, release = [], threading.Event(), threading.Event()

    def fake_warm_up(solvers):
        order.extend(solvers)
        if len(order) == 1:
            first_started.set()
            release.wait(10)
        return {}

    monkeypatch.setattr(ui_warm, "warm_up", fake_warm_up)
    monkeypatch.setattr(ui_warm, "is_warm", lambda name: False)
    monkeypatch.setattr(ui_warm, "_first_front", threading.Event())
    thread = threading.Thread(target=ui_warm.warm_up_once, args=("cart",))
    thread.start()
    assert first_started.wait(10)
    release.set()
    thread.join(0.5)
    assert order == ["cart"], "the other solvers' compile must wait for the first page's front"
    ui_warm.prefer("no-such-solver")  # not queued: nothing happens
    ui_warm.prefer("sat")  # what the Solver select does: the page is up, and sat comes next
    thread.join(10)
    assert order[:2] == ["cart", "sat"] and sorted(order) == sorted(names) and order[-1] == "rashomon"


# Run in a fresh process on an empty numba cache: murtree's warm-up, then a first Rashomon set (API and CLI).
_SEPARATE_WARM_UPS = r"""
import io, json, contextlib
import numpy as np
import pandas as pd
import treeexplorer as tx
from treeexplorer.cli import main
from treeexplorer.solvers._kernels import rashomon as kr
from treeexplorer.warm import ensure_warm, is_warm, needs_compile

def compiled():
    return sum(len(d.signatures) for d in (kr.enumerate_trees, kr.init_root))

out = {"cold": [needs_compile("murtree"), needs_compile("rashomon")]}
ensure_warm("murtree")
out["after_murtree"] = [is_warm("rashomon"), needs_compile("rashomon"), compiled()]
rng = np.random.default_rng(3)
X = rng.integers(0, 2, size=(80, 5))
frame = pd.DataFrame(X, columns=[f"t{j}" for j in range(5)]).assign(label=X[:, 0] ^ X[:, 2])
reports = []
rs = tx.rashomon(frame, "label", discretizer="none", max_depth=2, k=10, time_limit=1.0, progress=reports.append)
compiling = [r for r in reports if r.get("phase") == "compiling"]
out["api"] = [compiled(), rs.status, len(rs), bool(compiling) and all(r["solver"] == "rashomon" for r in compiling),
              any(r.get("cold") for r in compiling), max(r["seconds"] for r in compiling), rs.runtime_s]
frame.to_csv("t.csv", index=False)
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(["rashomon", "t.csv", "--target", "label", "--discretizer", "none", "--max-depth", "2", "-k", "5"])
out["cli"] = [code, err.getvalue()]
print(json.dumps(out))
"""


def test_murtrees_warm_up_leaves_the_rashomon_kernels_to_the_first_set(tmp_path):
    # a first murtree run compiles murtree's kernels only; the first Rashomon set compiles its own, says so,
    # and (as a solve) keeps the compile out of its time limit
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "empty"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-c", _SEPARATE_WARM_UPS], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["cold"] == [True, True]
    assert out["after_murtree"] == [False, True, 0], "murtree's warm-up compiled the Rashomon kernels"
    n_compiled, status, size, named, cold, compile_s, runtime_s = out["api"]
    assert n_compiled == 4 and named and cold  # both kernels' plain and weighted signatures (the warm-up's toys)
    # compiling took longer than the 1 s limit, yet the set is whole: the clock started after it
    assert compile_s > 1.0 and status == "done" and size == 10 and runtime_s < compile_s, out["api"]
    code, err = out["cli"]
    assert code == 0 and "compiling" not in err, err  # warm in this process now: nothing said


def test_the_cli_says_when_a_first_rashomon_set_compiles(tmp_path, monkeypatch, capsys):
    from treeexplorer import warm

    calls = []

    def fake_ensure_warm(solver, control=None):  # a cold cache, as ensure_warm reports it
        name = solver if isinstance(solver, str) else solver.name
        calls.append(name)
        for s in (0.0, 1.0):
            control.report("compiling", solver=name, cold=True, seconds=s, estimate_s=30)
        return 1.0

    monkeypatch.setattr("treeexplorer.api.ensure_warm", fake_ensure_warm)
    rows = ["a,b,label"] + [f"{i % 2},{i // 2 % 2},{(i % 2) ^ (i // 2 % 2)}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    args = ["rashomon", str(tmp_path / "t.csv"), "--target", "label", "--discretizer", "none", "--max-depth", "2"]
    assert main([*args, "-k", "3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert calls[0] == "rashomon"
    assert err[:2] == [warm.compile_notice("rashomon", 30), "compiled in 1 s (cached for later runs)"]


def test_warm_command_takes_rashomon_and_warms_everything_by_default(monkeypatch, capsys):
    from treeexplorer import cli
    from treeexplorer.registry import SOLVER_NAMES
    from treeexplorer.warm import WARM_NAMES

    assert WARM_NAMES == (*SOLVER_NAMES, "rashomon")
    assert main(["warm", "--solver", "rashomon"]) == 0  # compiled by an earlier test or here (~30 s once)
    assert "rashomon: " in capsys.readouterr().out
    warmed, compiled = [], []
    monkeypatch.setattr(cli, "warm_with_notice", lambda name: warmed.append(name) or 0.0)
    monkeypatch.setattr(cli, "compile_with_notice", compiled.extend)  # the parallel compile, all names at once
    monkeypatch.setattr("treeexplorer.warm.is_warm", lambda name: False)
    assert main(["warm"]) == 0
    assert warmed == compiled == list(WARM_NAMES)
