"""Sweeps: grid validation, failing settings, time limits, cancel, the CLI, and a real dask cluster on 127.0.0.1
(scheduler and two worker processes) that loses a worker mid-sweep and still equals the serial run."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import distributed  # noqa: F401  (loads its config defaults: a dask.config.set before would drop them)
import pandas as pd
import pytest
from waiting import HANG_S, wait_until

from treeexplorer import registry
from treeexplorer.cli import EXIT_BAD_INPUT, main
from treeexplorer.sweep import expand_grid, sweep

# A CART that first waits ``delay`` seconds (cooperatively: cancel and time limit stop the wait).  Registered in
# this process by a fixture and on the test cluster's workers by ``--preload``, it makes tasks last long enough
# to kill a worker or cancel while they run, and still gives CART's deterministic trees.
SLOW_SOLVER = """
import threading
import time

from treeexplorer.adapters import cart
from treeexplorer.registry import Param, SolverSpec, register

WAITING = threading.Event()  # set once a task is in its wait (this process): a test cancels then, not after a pause


def _run(X, y, n_classes, control, delay=0.0, **params):
    WAITING.set()
    end = time.perf_counter() + delay
    while time.perf_counter() < end and not control.stopped:
        time.sleep(0.01)
    return cart.run(X, y, n_classes, control, **params)


def dask_setup(worker):
    # on a test worker: load the kernels before joining (numba's cache still costs seconds per process)
    from treeexplorer.cv import FoldTask, run_fold
    from treeexplorer.data import load_dataset

    run_fold(load_dataset("iris"), FoldTask("cart", {"max_depth": 2}, None, None, "entropy", 2, 1, 0, 0))


SPEC = register(
    SolverSpec(
        "slowcart",
        "numeric",
        _run,
        cart.PARAMS + (Param("delay", "float", 0.0, "seconds to wait first", bounds=(0.0, None)),),
    )
)
"""


@pytest.fixture
def slowcart(monkeypatch):
    ns: dict = {}
    exec(compile(SLOW_SOLVER, "slow_solver", "exec"), ns)
    monkeypatch.setitem(registry._REGISTRY, "slowcart", ns["SPEC"])  # undone after the test
    return ns["WAITING"]


def _same(a, b):
    pd.testing.assert_frame_equal(a.table.drop(columns=["runtime_s"]), b.table.drop(columns=["runtime_s"]))


def test_grid_is_validated_like_solve():
    settings, notices = expand_grid({"solver": ["cart", "murtree"], "n_bins": [4, 8], "max_depth": [2]})
    # cart on raw columns takes no bins: its two settings collapse into one; murtree (MID by default) keeps both
    assert [(s["solver"], s["n_bins"]) for s in settings] == [("cart", None), ("murtree", 4), ("murtree", 8)]
    assert any("n_bins does not apply to cart" in n for n in notices)
    settings, _ = expand_grid({"solver": ["cart", "dpdt"], "cart_depth": [2]})
    assert [s["params"] for s in settings] == [{}, {"cart_depth": 2}]  # only DPDT uses cart_depth
    for grid, message in [
        ({"solver": ["nope"]}, "grid solver: unknown solver 'nope'"),
        ({"max_depth": [-5]}, "grid max_depth: parameter 'max_depth' must be >= -1, got -5"),
        ({"max_depth": ["deep"]}, "parameter 'max_depth' must be an integer, got 'deep'"),
        ({"sparsity": [0.1]}, "grid sparsity: solver 'cart' does not use sparsity"),
        ({"discretizer": ["fancy"]}, "grid discretizer: unknown discretizer 'fancy'"),
        ({"n_bins": [0]}, "grid n_bins: n_bins must be a positive integer, got 0"),
        ({"solver": ["cart", "dpdt"], "n_bins": [8]}, "grid n_bins: n_bins needs a discretizer"),
        ({"max_depth": []}, "grid key 'max_depth' has no values"),
    ]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            expand_grid(grid)


def test_serial_sweep_reports_a_failing_setting_and_goes_on():
    seen = []
    res = sweep(
        "iris", {"discretizer": ["none", "raw"], "max_depth": [1, 2]}, cv=3, scheduler="serial", progress=seen.append
    )
    t = res.table
    bad = t[t["discretizer"] == "none"]
    assert len(bad) == 2 and (bad["status"] == "error").all()  # one row per failed setting, with its message
    assert bad["error"].str.contains("fold 1: ValueError").all() and bad["error"].str.contains("0/1").all()
    good = t[t["status"] == "done"]
    assert set(good["max_depth"]) == {1, 2} and good["cv_mean"].between(0.3, 1).all()
    assert res.status == "done" and len(seen) == 4 * 4 and seen[-1]["done"] == 16
    fronts_seen = [s["front"] for s in seen if "front" in s]
    assert len(fronts_seen) == 4  # each setting's CVFront streams out when its last task is in
    assert res.choice("best")["max_depth"].iloc[0] == 2 and res.choice("1se")["splits"].iloc[0] == 2
    table, fronts = res
    assert fronts[2].error is None and fronts[0].error.startswith("fold 1")  # settings in grid order


def test_time_limit_per_task_is_honoured(slowcart):
    t0 = time.perf_counter()
    res = sweep(
        "iris", {"solver": ["slowcart"], "delay": [30.0], "max_depth": [2]}, cv=2, time_limit=0.3, scheduler="serial"
    )
    assert time.perf_counter() - t0 < 30  # shorter than one task's 30 s wait: each task was cut at its 0.3 s
    assert (res.table["status"] == "time_limit").all()
    assert all(f.status == "time_limit" for f in res.fronts[0].folds)


def test_in_process_cluster_equals_serial_and_cancel_stops_every_task(slowcart):
    from distributed import Client
    from treeexplorer.solvers import Control

    grid = {"solver": ["slowcart"], "max_depth": [1, 2], "delay": [0.05]}
    serial = sweep("iris", grid, cv=3, seed=4, scheduler="serial")
    with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        dist = sweep("iris", grid, cv=3, seed=4, scheduler=client)
        _same(serial, dist)
        ctl = Control()
        slowcart.clear()

        def cancel_once_a_task_waits():  # the app's Cancel button, from another thread, while tasks run
            if slowcart.wait(HANG_S):
                ctl.cancel()

        threading.Thread(target=cancel_once_a_task_waits, daemon=True).start()
        t0 = time.perf_counter()
        res = sweep("iris", {**grid, "delay": [20.0]}, cv=3, scheduler=client, control=ctl)
        assert time.perf_counter() - t0 < 20  # shorter than one task's 20 s: not the 2 x 4 x 20 s they would take
        assert res.status == "cancelled" and (res.table["status"] == "cancelled").all()
        # running tasks stopped, queued ones dropped
        wait_until(lambda: not any(client.processing().values()), what="the cluster to drop every task")


@pytest.mark.parametrize(
    "objective, head, title",
    [
        (["--class-weight", "balanced"], "cv_bacc", "best mean held-out balanced accuracy"),
        (["--costs", "L:R=3"], "cv_neg_cost", "best mean held-out cost per unit of weight, negated"),
    ],
)
def test_cli_names_the_score_a_weighted_sweep_is_judged_by(capsys, objective, head, title):
    args = ["sweep", "balance-scale", "--solver", "cart", "--max-depth", "1", "2", "--cv", "2", "--scheduler", "serial"]
    assert main([*args, *objective]) == 0
    printed = capsys.readouterr().out
    assert title in printed and head in printed and "cv_acc" not in printed


def test_cli_writes_three_formats_and_rejects_bad_grids(tmp_path, capsys):
    args = ["sweep", "iris", "--solver", "cart", "--max-depth", "1", "2", "--cv", "3", "--scheduler", "serial"]
    for ext in ("csv", "json", "parquet"):
        out = tmp_path / f"sweep.{ext}"
        assert main([*args, "--out", str(out)]) == 0
        table = (
            pd.read_csv(out)
            if ext == "csv"
            else pd.read_parquet(out)
            if ext == "parquet"
            else pd.DataFrame(json.loads(out.read_text())["rows"])
        )
        assert set(table["max_depth"]) == {1, 2} and "cv_mean" in table and "one_se" in table
    printed = capsys.readouterr().out
    assert "best mean held-out accuracy" in printed and "1-SE rule" in printed
    for bad, message in [
        (["--max-depth", "-5"], "parameter 'max_depth' must be >= -1, got -5"),
        (["--sparsity", "0.1"], "does not use sparsity"),
        (["--n-bins", "0", "--discretizer", "quantile"], "n_bins must be a positive integer"),
        (["--out", str(tmp_path / "x.xlsx")], "written as .parquet, .csv or .json"),
        (["--scheduler", "tcp://127.0.0.1:9"], "cannot reach the dask scheduler at tcp://127.0.0.1:9"),
    ]:
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            assert main(["sweep", "iris", "--cv", "3", *bad]) == EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


# -- a real cluster ------------------------------------------------------------------------------------------------
def _start(args, log: Path):
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        start_new_session=True,  # a signal to the test run does not reach them; we end them ourselves
    )


@pytest.fixture
def cluster(tmp_path, slowcart):
    """``dask scheduler`` and two single-threaded ``dask worker`` processes (no nanny) on 127.0.0.1."""
    preload = tmp_path / "slow_solver.py"
    preload.write_text(SLOW_SOLVER)
    sched_file = tmp_path / "scheduler.json"
    common = ["--host", "127.0.0.1", "--no-dashboard"]
    procs = [
        _start(
            ["distributed.cli.dask_scheduler", *common, "--port", "0", "--scheduler-file", str(sched_file)],
            tmp_path / "scheduler.log",
        )
    ]
    try:

        def written_address():  # once the scheduler has written its whole file
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            try:
                return json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                return None

        address = wait_until(written_address, what="the dask scheduler's file")
        for k in range(2):
            worker = ["distributed.cli.dask_worker", *common, "--scheduler-file", str(sched_file)]
            worker += ["--nthreads", "1", "--no-nanny", "--name", f"w{k}", "--preload", str(preload)]
            procs.append(_start(worker, tmp_path / f"worker{k}.log"))
        yield address, {f"w{k}": procs[k + 1] for k in range(2)}
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)  # throw-away test processes: no graceful shutdown to wait for
        for p in procs:
            p.wait(timeout=30)


def test_real_cluster_loses_a_worker_mid_sweep_and_equals_serial(cluster):
    from distributed import Client

    address, workers = cluster
    grid = {"solver": ["slowcart"], "max_depth": [1, 2], "delay": [0.3]}
    serial = sweep("iris", grid, cv=3, seed=7, scheduler="serial")  # meanwhile the workers start
    with Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=90)
        names = {addr: w["name"] for addr, w in client.scheduler_info()["workers"].items()}
        killed = {}

        def kill_a_busy_worker(info):
            if killed:
                return
            busy = [names[a] for a, keys in client.processing().items() if keys and a in names]
            if busy:  # SIGKILL: the process dies with its task, as on a crash
                workers[busy[0]].kill()
                killed.update(name=busy[0], at=info["done"], total=info["total"])

        dist = sweep("iris", grid, cv=3, seed=7, scheduler=client, progress=kill_a_busy_worker)
        assert killed and killed["at"] < killed["total"]  # the worker died mid-sweep
        assert workers[killed["name"]].wait(timeout=HANG_S) is not None
        assert len(client.scheduler_info()["workers"]) == 1
    assert dist.status == "done" and (dist.table["status"] == "done").all()
    _same(serial, dist)
    assert len(dist.task_times) == 2 * (3 + 1)


def test_background_job_for_an_app_streams_and_cancels(slowcart):
    from treeexplorer.jobs import JobProgress
    from treeexplorer.sweep import start_sweep

    grid = {"solver": ["slowcart"], "max_depth": [1, 2], "delay": [0.01]}
    seen = []
    job = start_sweep("iris", grid, cv=3, scheduler="serial", progress=seen.append)
    res = job.result(timeout=HANG_S)
    updates = [e.info for e in job.events() if isinstance(e, JobProgress)]
    assert not job.running and len(updates) == 8 and sum("front" in u for u in updates) == 2
    assert seen == updates  # the callback saw what the events hand over
    _same(res, sweep("iris", grid, cv=3, scheduler="serial"))
    slowcart.clear()
    slow = start_sweep("iris", {**grid, "delay": [30.0]}, cv=3, scheduler="serial")
    assert slowcart.wait(HANG_S)  # its first task waits now
    slow.cancel()
    assert slow.result(timeout=HANG_S).status == "cancelled"
    with pytest.raises(ValueError, match="grid solver"):
        start_sweep("iris", {"solver": ["nope"]}).result(timeout=HANG_S)


def _worker_env():
    return {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")}


def test_default_cluster_workers_run_one_numba_thread_with_glibc_malloc_defaults():
    # dask's default MALLOC_TRIM_THRESHOLD_ made every fold task 1.3-1.5x slower inside a worker (large arrays
    # mmap-ed and page-faulted at each allocation); two numba threads per worker would oversubscribe the cores
    from treeexplorer.sweep import connect

    client, close = connect(n_workers=1)
    try:
        assert list(client.run(_worker_env).values()) == [{"NUMBA_NUM_THREADS": "1", "MALLOC_TRIM_THRESHOLD_": None}]
    finally:
        close()
