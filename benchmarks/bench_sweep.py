"""Sweep benchmark: a 3 x 2 x 2 x 2 grid with 5-fold CV, serial vs a dask LocalCluster on this machine.

Usage::

    python benchmarks/bench_sweep.py [--data DIR] [--dataset raisin] [--cv 5] [--workers N] [--rows N]

Grid: solver (cart, dpdt, murtree) x discretizer (mid, quantile) x n_bins (8, 16) x max_depth (2, 3), 5 folds
plus one refit per setting: 24 settings, 144 tasks.  Data: the training part of a Quant-BnB set from
``<data>/quantbnb/`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``); skipped when absent.

Reported, warm and cold apart (numba loads its cached kernels once per process, seconds each):

* ``serial warm``: the sweep in this process with ``scheduler="serial"`` after a warm-up sweep on 60 rows;
* ``cluster cold``: a new LocalCluster (one single-threaded worker process per core): start + first sweep;
* ``cluster warm``: the same sweep again on that cluster (its workers have loaded the kernels);
* speed-up: serial warm / cluster warm (target >= 1.7x on 2 cores); the serial sweep's numba kernels already use
  every core, so the same serial sweep on one numba thread is reported too (what the worker processes gain);
* scheduling overhead per task: ``(wall x workers - sum of task solver times) / tasks`` of the warm cluster run
  (everything a task costs besides the solve: scheduling, transfer, result assembly, idle tails), and the
  same for a sweep of near-empty tasks (CART, depth 1, 60 rows) (target <= 20 ms);
* dask's own floor: a no-op ``client.map`` of as many tasks, for the same machine state;
* the machine's ceiling: the serial one-thread sweep in one plain process, then in one process per worker at
  once; ``workers x alone / together`` is the best speed-up any scheduler could reach here (two cores share one
  memory system: memory-heavy kernels slow each other down);
* peak memory per worker: each worker process's peak resident set (``ru_maxrss``) after the sweeps.

The distributed table is checked equal to the serial one (runtimes aside).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_arguments, collection_dir, data_root  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol"); a list of lists: one run each
RUN_ALL = {
    "data": ["quantbnb"],
    "quick": ["--dataset", "raisin"],
    "full": [["--dataset", "raisin"], ["--dataset", "bidding"], ["--dataset", "magic"]],
}
GRID = {
    "solver": ["cart", "dpdt", "murtree"],
    "discretizer": ["mid", "quantile"],
    "n_bins": [8, 16],
    "max_depth": [2, 3],
}


def load(folder: Path, name: str, rows: int | None):
    path = folder / f"{name}.json"
    if not path.is_file():
        return None
    d = json.loads(path.read_text())
    X = np.asarray(d["Xtrain"], dtype=np.float64)
    y = np.asarray(d["Ytrain"], dtype=np.float64).astype(np.int64)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    df["y"] = y
    return df.iloc[:rows] if rows else df


def _noop(x):
    return x


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def overhead_ms(res, workers: int) -> float:
    return 1000 * (res.wall_s * workers - sum(res.task_times)) / len(res.task_times)


def _same(a, b) -> bool:
    try:
        pd.testing.assert_frame_equal(a.table.drop(columns=["runtime_s"]), b.table.drop(columns=["runtime_s"]))
        return True
    except AssertionError as exc:
        print(f"TABLES DIFFER: {exc}", file=sys.stderr)
        return False


def _child(a) -> int:
    """``--machine-child``: one serial sweep on one numba thread (after a warm-up) in a plain process."""
    import numba

    from treeexplorer.sweep import sweep

    numba.set_num_threads(1)
    df = load(data_root(a.data) / "quantbnb", a.dataset, a.rows)
    sweep(df.groupby("y", group_keys=False).head(30), GRID, target="y", cv=a.cv, scheduler="serial")
    print(f"WALL {sweep(df, GRID, target='y', cv=a.cv, scheduler='serial').wall_s}")
    return 0


def machine_ceiling(a, workers: int) -> tuple[float, float, float]:
    """What this machine gives to ``workers`` plain processes running the same serial sweep at once.

    Returns ``(alone_s, together_s, ceiling)`` where ``ceiling = workers * alone / together`` is the speed-up
    a perfect scheduler could reach (memory bandwidth and shared caches are not doubled with the cores).
    """
    import subprocess

    cmd = [sys.executable, __file__, "--machine-child", "--dataset", a.dataset, "--cv", str(a.cv)]
    cmd += ["--data", str(data_root(a.data))]
    cmd += ["--rows", str(a.rows)] if a.rows else []

    def walls(n: int) -> list[float]:
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(n)]
        outs = [p.communicate()[0] for p in procs]
        return [float(line.split()[1]) for out in outs for line in out.splitlines() if line.startswith("WALL ")]

    alone = walls(1)[0]
    together = float(np.mean(walls(workers)))
    return alone, together, workers * alone / together


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(ap)
    ap.add_argument("--dataset", default="raisin")
    ap.add_argument("--cv", type=int, default=5)
    ap.add_argument("--workers", type=int, help="worker processes (default: the cores available)")
    ap.add_argument("--rows", type=int, help="use only the first ROWS training rows")
    ap.add_argument("--machine-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.machine_child:
        return _child(a)
    summary = Summary(a.summary)
    folder = collection_dir(a.data, "quantbnb", "bench_sweep", summary=summary)
    if folder is None:
        return 0
    df = load(folder, a.dataset, a.rows)
    if df is None:
        print(f"skipped: {a.dataset}.json not in {folder}")
        summary.skip(f"{a.dataset}.json not in {folder}")
        summary.write()
        return 0

    from treeexplorer.folds import cores
    from treeexplorer.sweep import connect, sweep

    workers = a.workers or cores()
    n_settings = int(np.prod([len(v) for v in GRID.values()]))
    print(
        f"{a.dataset}: {len(df)} rows, {df.shape[1] - 1} features; "
        f"grid {' x '.join(str(len(v)) for v in GRID.values())}"
        f" = {n_settings} settings, {a.cv} folds + refit = {n_settings * (a.cv + 1)} tasks; {workers} workers; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    tiny = df.groupby("y", group_keys=False).head(30)
    t = time.perf_counter()
    sweep(tiny, GRID, target="y", cv=a.cv, scheduler="serial")
    load_s = time.perf_counter() - t
    serial = sweep(df, GRID, target="y", cv=a.cv, scheduler="serial")
    serial_mb = _peak_mb()

    t = time.perf_counter()
    client, close_cluster = connect(None, n_workers=workers)  # the cluster sweep() itself would start
    start_s = time.perf_counter() - t
    try:
        cold = sweep(df, GRID, target="y", cv=a.cv, scheduler=client)
        cold_s = time.perf_counter() - t
        warm = sweep(df, GRID, target="y", cv=a.cv, scheduler=client)
        empty = sweep(
            tiny,
            {"solver": ["cart"], "max_depth": [1], "min_samples_leaf": list(range(1, 25))},
            target="y",
            cv=a.cv,
            scheduler=client,
        )
        worker_mb = client.run(_peak_mb)
        t = time.perf_counter()
        client.gather(client.map(_noop, range(len(warm.task_times)), pure=False))
        floor_ms = 1000 * (time.perf_counter() - t) * workers / len(warm.task_times)
    finally:
        close_cluster()

    serial_after = sweep(df, GRID, target="y", cv=a.cv, scheduler="serial")  # the load drifts: measure twice
    # The serial sweep's kernels already run on every core (numba's thread pool); the cluster's workers run
    # one thread each.  The same serial sweep on one thread shows what the processes themselves gain.
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        serial_1 = sweep(df, GRID, target="y", cv=a.cv, scheduler="serial")
    finally:
        numba.set_num_threads(threads)
    alone_s, together_s, ceiling = machine_ceiling(a, workers)
    equal = _same(serial, cold) and _same(serial, warm)
    failed = int((warm.table["status"] == "error").sum())
    rows = [
        ("serial, cold kernel load (warm-up sweep on 60 rows)", f"{load_s:.1f} s", ""),
        (
            "serial warm (before / after the cluster)",
            f"{serial.wall_s:.1f} s / {serial_after.wall_s:.1f} s",
            f"peak RSS {serial_mb:.0f} MB",
        ),
        ("cluster start", f"{start_s:.1f} s", f"{workers} worker processes"),
        ("cluster cold (start + first sweep)", f"{cold_s:.1f} s", ""),
        ("cluster warm", f"{warm.wall_s:.1f} s", f"speed-up {serial.wall_s / warm.wall_s:.2f}x (target >= 1.7x)"),
        (
            "serial warm, one numba thread",
            f"{serial_1.wall_s:.1f} s",
            f"cluster speed-up over it {serial_1.wall_s / warm.wall_s:.2f}x",
        ),
        (
            f"machine ceiling: the serial sweep in 1 / {workers} plain processes at once",
            f"{alone_s:.1f} s / {together_s:.1f} s",
            f"best possible speed-up {ceiling:.2f}x; the cluster reaches {serial_1.wall_s / warm.wall_s / ceiling:.0%}",
        ),
        ("overhead per task, this grid (warm)", f"{overhead_ms(warm, workers):.1f} ms", "target <= 20 ms"),
        (
            "overhead per task, empty tasks",
            f"{overhead_ms(empty, workers):.1f} ms",
            f"{len(empty.task_times)} tasks in {empty.wall_s:.2f} s",
        ),
        ("dask's own floor: no-op tasks", f"{floor_ms:.1f} ms", "client.map of a no-op, same task count"),
        ("peak memory per worker", " / ".join(f"{v:.0f} MB" for v in worker_mb.values()), "ru_maxrss"),
        ("sum of task solver times (warm)", f"{sum(warm.task_times):.1f} s", f"{len(warm.task_times)} tasks"),
        ("tables equal serial = cold = warm", "yes" if equal else "NO", f"{failed} failed settings"),
        ("load average at the end", f"{os.getloadavg()[0]:.1f}", f"{os.cpu_count()} cores, shared"),
    ]
    speed = serial.wall_s / warm.wall_s
    summary.add(f"{a.dataset}: cluster speed-up over serial (warm)", f"{speed:.2f}x", ">= 1.7x", speed >= 1.7)
    summary.add(f"{a.dataset}: machine ceiling ({workers} plain processes)", f"{ceiling:.2f}x", "", None)
    over = overhead_ms(warm, workers)
    summary.add(f"{a.dataset}: scheduling overhead per task", f"{over:.1f} ms", "<= 20 ms", over <= 20)
    summary.add(f"{a.dataset}: tables equal serial = cold = warm", "yes" if equal else "NO", "yes", equal)
    summary.write()
    w = max(len(r[0]) for r in rows)
    print()
    print(f"| {'measure'.ljust(w)} | value | note |")
    print(f"|{'-' * (w + 2)}|-------|------|")
    for r in rows:
        print(f"| {r[0].ljust(w)} | {r[1]} | {r[2]} |")
    best = warm.choice("1se")
    if not best.empty:
        b = best.iloc[0]
        print(
            f"\n1-SE choice: {b['solver']} / {b['discretizer']} / n_bins {b['n_bins']} / depth {b['max_depth']} "
            f"at {b['splits']} splits: {b['cv_mean']:.4f} ± {b['cv_std']:.4f}"
        )
    return 0 if equal else 1


if __name__ == "__main__":  # required: LocalCluster's worker processes re-import this module
    sys.exit(main())
