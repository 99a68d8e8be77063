"""``benchmarks/run_all.py`` keeps working: every benchmark registers its modes, a missing data folder gives a
clean one-line skip, and the smoke mode (tiny data built from the bundled sets, no peers) runs end to end."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN_ALL = ROOT / "benchmarks" / "run_all.py"
sys.path.insert(0, str(ROOT / "benchmarks"))

import run_all  # noqa: E402
from benchdata import SOURCES  # noqa: E402


def test_every_benchmark_registers_quick_and_full():
    found = run_all.discover()
    assert "gosdt" in found and "contree" in found
    for name, spec in found.items():
        assert spec is not None, f"bench_{name}.py has no RUN_ALL"
        assert set(spec) <= {"quick", "full", "smoke", "data", "peers"}, name
        assert run_all.runs_of(spec, "quick") and run_all.runs_of(spec, "full"), name
        for mode in ("quick", "full", "smoke"):
            for args in run_all.runs_of(spec, mode):
                assert all(isinstance(a, str) for a in args), (name, mode)
        assert set(spec.get("data", [])) <= set(SOURCES), name
        text = (ROOT / "benchmarks" / f"bench_{name}.py").read_text()
        assert "add_arguments(ap)" in text or "add_summary_argument(ap)" in text, f"bench_{name}.py: no --summary"


def _run(*args, timeout):
    return subprocess.run(
        [sys.executable, str(RUN_ALL), *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


def test_missing_data_skips_with_one_line(tmp_path):
    empty = tmp_path / "no-data"
    empty.mkdir()
    names = [n for n, s in run_all.discover().items() if s.get("data") and n != "discretize"]
    out = _run(
        "--quick", "--data", str(empty), "--no-peers", "--out", str(tmp_path / "logs"), "--only", *names, timeout=600
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for name in names:
        log = (tmp_path / "logs" / f"{name}.log").read_text().splitlines()
        skips = [line for line in log if line.startswith(f"SKIP bench_{name}: ")]
        assert len(skips) == 1, log
        assert "github.com/" in skips[0] and "--data DIR" in skips[0]
        assert f"| {name} | SKIP bench_{name}: no " in out.stdout
    assert "| ERROR |" not in out.stdout and "| FAIL |" not in out.stdout


@pytest.mark.slow
def test_smoke_mode_runs_every_registered_benchmark(tmp_path):
    out = _run("--smoke", "--out", str(tmp_path), timeout=1800)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| benchmark | figure | value | target | result |" in out.stdout
    smoke = [n for n, s in run_all.discover().items() if "smoke" in s]
    assert len(smoke) >= 5
    for name in smoke:
        rows = [line for line in out.stdout.splitlines() if line.startswith(f"| {name} |")]
        assert rows, f"{name} reported nothing:\n{out.stdout}"
        assert not any(r.endswith("| ERROR |") or r.endswith("| FAIL |") or "| skip |" in r for r in rows), rows
    assert "peers: switched off" in out.stdout
