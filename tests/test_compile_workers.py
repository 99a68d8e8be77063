"""A cold start compiles in worker processes, in parallel, and an installed package's cache is shared by every
environment of one build on one machine (treeexplorer.warm, treeexplorer._kernel_cache)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from treeexplorer import warm

ROOT = Path(__file__).resolve().parents[1]

# Run in a fresh process of a copy of the package: warm two solvers on a cold cache; one JSON line out.
_WARM_TWO = r"""
import json, sys, time
import treeexplorer
from treeexplorer import warm
from treeexplorer._kernel_cache import kernel_cache_dir

cold = [warm.needs_compile(s) for s in ("cart", "sat")]
c0 = time.process_time()
seconds = warm.warm_up(["cart", "sat"])
own_cpu = time.process_time() - c0
jobs = {job: {k: v for k, v in state.items() if k in ("pid", "t0", "end", "cpu_s", "kernels")}
        for job, state in warm._progress.items()}
print(json.dumps({"file": treeexplorer.__file__, "cache": str(kernel_cache_dir()), "cold": cold, "own_cpu": own_cpu,
                  "jobs": jobs, "warmed": sorted(seconds)}))
"""

# Run in a fresh process of another copy: the same kernels load from the shared cache, none compiles.
_REUSE = r"""
import json
import treeexplorer
from numba.core.dispatcher import Dispatcher
from treeexplorer import warm
from treeexplorer._kernel_cache import kernel_cache_dir
from treeexplorer.solvers._kernels import cart as kcart

cold = [warm.needs_compile(s) for s in ("cart", "sat")]
warm.ensure_warm("cart")
kernels = [v for v in vars(kcart).values() if isinstance(v, Dispatcher)]
print(json.dumps({"file": treeexplorer.__file__, "cache": str(kernel_cache_dir()), "cold": cold,
                  "workers": sorted(warm._progress),
                  "hits": sum(sum(k.stats.cache_hits.values()) for k in kernels),
                  "misses": sum(sum(k.stats.cache_misses.values()) for k in kernels)}))
"""


def _install_copy(where: Path) -> Path:
    """The package laid out as an installed wheel is (``treeexplorer/solvers``, ``treeexplorer/datasets``),
    without the checkout's pyproject.toml and without any compiled code."""
    skip = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.stamp")
    pkg = where / "treeexplorer"
    shutil.copytree(ROOT / "treeexplorer", pkg, ignore=skip)
    shutil.copytree(ROOT / "solvers", pkg / "solvers", ignore=skip)
    shutil.copytree(ROOT / "assets", pkg / "datasets", ignore=skip)
    return where


def _run(code: str, site: Path, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTEST", "COV_"))}
    env.update({"PYTHONPATH": str(site), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1500, env=env, cwd=home)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(str(site)), result  # the copy ran, not the checkout
    return result


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux: CPU accounting through /proc")
def test_a_cold_start_compiles_in_parallel_workers_and_a_second_environment_reuses_the_cache(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    first = _run(_WARM_TWO, _install_copy(tmp_path / "env1"), home)
    assert first["cold"] == [True, True] and first["warmed"] == ["cart", "sat"]
    cache = Path(first["cache"])
    assert cache.parent == home / "cache" / "treeexplorer" and cache.is_dir()
    jobs = first["jobs"]
    assert set(jobs) == {"cart", "sat", warm.COMMON}, jobs
    assert all(job["end"] > job["t0"] and job["kernels"] > 0 for job in jobs.values()), jobs
    # the jobs ran in separate processes, two at a time on a 2-core machine (the first two started together)
    assert len({job["pid"] for job in jobs.values()}) == 3 and os.getpid() not in {j["pid"] for j in jobs.values()}
    spans = sorted((job["t0"], job["end"]) for job in jobs.values())
    if len(os.sched_getaffinity(0)) >= 2:
        assert spans[1][0] < spans[0][1], f"the first two compile jobs did not overlap: {spans}"
    # the calling process only loaded compiled code: a small fraction of the workers' CPU
    workers_cpu = sum(job["cpu_s"] for job in jobs.values())
    assert first["own_cpu"] < 0.25 * workers_cpu, (first["own_cpu"], workers_cpu)

    # a second environment of the same build (another folder; its files newer): the same cache, nothing compiles
    second_site = _install_copy(tmp_path / "env2")
    for src in second_site.rglob("*.py"):
        os.utime(src)
    second = _run(_REUSE, second_site, home)
    assert second["cache"] == first["cache"] and second["cold"] == [False, False]
    assert second["workers"] == [] and second["misses"] == 0 and second["hits"] > 0, second

    # a build whose kernels differ (an edited source) gets a cache of its own: never the other build's code
    third_site = _install_copy(tmp_path / "env3")
    kernel = third_site / "treeexplorer" / "solvers" / "_kernels" / "cart.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    code = "from treeexplorer import warm; from treeexplorer._kernel_cache import kernel_cache_dir; import json, "
    code += "treeexplorer; print(json.dumps({'file': treeexplorer.__file__, 'cache': str(kernel_cache_dir()), "
    code += "'cold': [warm.needs_compile('cart')]}))"
    third = _run(code, third_site, home)
    assert third["cache"] != first["cache"] and third["cold"] == [True]


def test_a_failed_worker_leaves_the_compile_to_this_process(monkeypatch, caplog):
    # a worker that cannot start its job says so in one warning; the kernels then load (compile) here
    monkeypatch.setattr(warm, "_WORKER_CODE", "import sys; sys.exit('no compiler here')")
    monkeypatch.setattr(warm, "_cold_jobs", lambda name: ["sat"])
    with caplog.at_level("WARNING", logger="treeexplorer.warm"):
        assert warm.compile_in_workers(["sat"]) == {}
    assert any(
        "no compiler here" in r.getMessage() and "in this process instead" in r.getMessage() for r in caplog.records
    )


def test_the_python_api_says_a_cold_compile_once_per_solver(monkeypatch, caplog):
    calls = []
    monkeypatch.setattr(warm, "_cold_jobs", lambda name: [name])
    monkeypatch.setattr(warm, "compile_in_workers", calls.append)
    monkeypatch.setattr(warm, "_run_toys", lambda name: None)
    monkeypatch.setattr(warm, "_write_stamp", lambda name: None)
    monkeypatch.setattr(warm, "_done", {})
    monkeypatch.setattr(warm, "_said", set())
    with caplog.at_level("WARNING", logger="treeexplorer.warm"):
        warm.ensure_warm("sat")
        warm._done.clear()
        warm.ensure_warm("sat")
    said = [r.getMessage() for r in caplog.records if r.name == "treeexplorer.warm"]
    assert len(said) == 1 and said[0].startswith("compiling the sat kernels (first use only, about ")
    assert said[0].endswith(" s on this machine)") and calls == [["sat"], ["sat"]]


def test_the_estimate_follows_the_cpu_a_worker_gets(monkeypatch):
    monkeypatch.setattr(warm.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(warm, "cores", lambda: 2)
    quiet = warm.estimate_seconds("dpdt")
    assert quiet == warm.COMPILE_ESTIMATE_S["dpdt"]
    monkeypatch.setattr(warm.os, "getloadavg", lambda: (8.0, 8.0, 8.0))  # 2 cores, 10 runnable: a fifth each
    assert warm.estimate_seconds("dpdt") == 5 * quiet
    # a running job: from the CPU its worker got so far (20 CPU s in 40 s: half a core)
    now = 1000.0
    monkeypatch.setattr(warm, "process_cpu", lambda pid: 20.0)
    need = warm.COMPILE_ESTIMATE_S["dpdt"]
    assert warm._job_estimate("dpdt", {"pid": 1, "t0": now - 40.0}, now) == pytest.approx(40 + (need - 20) / 0.5)


# Run as a user's script: start the app's background warm-up on a cold cache, end as soon as a worker compiles.
_EXIT_DURING_COMPILE = r"""
import json, subprocess, sys, threading, time
from treeexplorer import warm
from treeexplorer.ui.warm import warm_up_in_background

started = threading.Event()
real_popen = subprocess.Popen

class Spy(real_popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        started.set()

warm.subprocess.Popen = Spy
warm_up_in_background(first="cart")
assert started.wait(300), "no compile worker started"
print(json.dumps([proc.pid for proc in warm._workers]), flush=True)
print(time.time(), flush=True)
"""


def test_a_script_that_ends_during_a_background_compile_exits_at_once_and_quietly(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty")}
    run = subprocess.run(
        [sys.executable, "-c", _EXIT_DURING_COMPILE], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )
    import time

    ended = time.time()
    assert run.returncode == 0 and run.stderr == "", run.stderr[-2000:]
    pids_line, when = run.stdout.strip().splitlines()[-2:]
    assert ended - float(when) < 20, "the exit waited for the compile"
    for pid in json.loads(pids_line):  # the workers ended with the script: none compiles on, orphaned
        assert not Path(f"/proc/{pid}").exists() or "treeexplorer.warm" not in Path(f"/proc/{pid}/cmdline").read_text()
