"""Benchmark: how far past its time limit each solver returns, all phases included, and the memory refusals.

Run: ``python benchmarks/bench_limits.py [--limit 5] [--only cart,sat] [--quick] [--no-memory]``.

Each case runs in a fresh process (kernels warmed first: compiling is outside the limit, see
:mod:`treeexplorer.warm`) on a synthetic Parquet table (nothing downloaded), through ``treeexplorer.solve``
with ``time_limit``: loading, discretizing, solving and assembling the front all count.  The table gives the
wall time of the ``solve`` call, the overshoot past the limit, the target ``max(1 s, 10 %)``, the status and
the printed runtime, the phase the run was in when the limit came and the best training accuracy; the CANCEL
cases cancel at ``--limit`` seconds instead (no time limit).  A second table shows the memory guard on the
issue's cases (the ``exact`` discretizer on a magic-sized table, 1M rows, a 10,000-category ID column): the
time to refuse and the message.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, data_root  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "quick": ["--quick", "--limit", "5", "--no-memory"],
    "full": ["--limit", "5"],
}


def make_numeric(path: Path, n: int, p: int, classes: int = 3, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).astype(np.float32)
    score = X[:, 0] + X[:, 1] * X[:, 2] + 0.7 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(p)])
    df["label"] = y
    df.to_parquet(path)


def make_random(path: Path, n: int, p: int, classes: int = 2, seed: int = 0) -> None:
    """Random continuous columns and random labels: every value distinct, nothing to learn."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.random(size=(n, p)), columns=[f"r{i}" for i in range(p)])
    df["label"] = rng.integers(0, classes, size=n)
    df.to_parquet(path)


def make_id(path: Path, n: int) -> None:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"user": [f"u{i}" for i in range(n)], "x": rng.normal(size=n)})
    df["label"] = (df.x + rng.normal(size=n) > 0).astype(int)
    df.to_parquet(path)


# name -> (table, solver, keyword arguments)
CASES = {
    "cart 1M x 20 depth 8": ("n1000000_p20_c3", "cart", {"max_depth": 8}),
    "dpdt 1M x 20 depth 3": ("n1000000_p20_c3", "dpdt", {"max_depth": 3}),
    "murtree 100k x 200 depth 4 (mid)": ("n100000_p200_c3", "murtree", {"max_depth": 4}),
    "branches 100k x 200 (mid)": ("n100000_p200_c3", "branches", {}),
    "sat 2000 x 10, 200 classes (exact)": (
        "n2000_p10_c200",
        "sat",
        {"conflicts": "majority", "allow_many_classes": True},
    ),
    "mid ranking 100k x 200, then murtree": ("n100000_p200_c3", "murtree", {"max_depth": 3, "n_bins": 800}),
    # the exact discretizer on a magic-sized table: ~150,000 tests, each long step stopped by the control
    "sat 15k x 10 (exact: 150k tests)": ("n15000_p10_c2", "sat", {"discretizer": "exact", "conflicts": "majority"}),
    "branches 15k x 10 (exact: 150k tests)": ("n15000_p10_c2", "branches", {"discretizer": "exact"}),
    "cart 1M x 20 no depth limit": ("n1000000_p20_c3", "cart", {"max_depth": -1}),
}
# the issue-36 cases, each with its own limit (``_limit``)
ISSUE = {
    "branches 15k x 10 (exact), limit 3": ("n15000_p10_c2", "branches", {"discretizer": "exact", "_limit": 3}),
    "sat 3000 x 50 random (exact), limit 5": (
        "r3000_p50_c2",
        "sat",
        {"discretizer": "exact", "conflicts": "majority", "_limit": 5},
    ),
}
# cancel instead of a time limit: "limit" is then when the cancel comes (no time limit is set)
CANCEL = {
    "dpdt 1M x 20 depth 3, cancel": ("n1000000_p20_c3", "dpdt", {"max_depth": 3}),
    "cart 1M x 20 depth 8, cancel": ("n1000000_p20_c3", "cart", {"max_depth": 8}),
    "sat 15k x 10 (exact), cancel": ("n15000_p10_c2", "sat", {"discretizer": "exact", "conflicts": "majority"}),
}
QUICK = {
    "cart 200k x 20 depth 8": ("n200000_p20_c3", "cart", {"max_depth": 8}),
    "dpdt 200k x 20 depth 3": ("n200000_p20_c3", "dpdt", {"max_depth": 3}),
    "murtree 20k x 50 depth 4 (mid)": ("n20000_p50_c3", "murtree", {"max_depth": 4}),
    "branches 20k x 50 (mid)": ("n20000_p50_c3", "branches", {}),
    "sat 2000 x 10, 200 classes (exact)": (
        "n2000_p10_c200",
        "sat",
        {"conflicts": "majority", "allow_many_classes": True},
    ),
}
MEMORY = {
    "murtree exact, 15k x 10 (magic-sized)": ("n15000_p10_c2", "murtree", {"discretizer": "exact"}),
    "dpdt exact, 15k x 10": ("n15000_p10_c2", "dpdt", {"discretizer": "exact"}),
    "branches exact, 15k x 10": ("n15000_p10_c2", "branches", {"discretizer": "exact"}),
    "sat exact, 15k x 10": ("n15000_p10_c2", "sat", {"discretizer": "exact", "conflicts": "majority"}),
    "sat exact, 1M x 20": ("n1000000_p20_c3", "sat", {"discretizer": "exact"}),
    "cart, 10,000-category ID listed as categorical": ("id10000", "cart", {"categorical": ["user"]}),
    "cart, 10,000-category ID (default: left out)": ("id10000", "cart", {}),
}

CHILD = r"""
import json, resource, sys, threading, time
from treeexplorer import solve
from treeexplorer.solvers import Control
from treeexplorer.warm import ensure_warm
path, solver, kw, limit = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])
cancel = kw.pop("cancel", False)
ensure_warm(solver)
base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
phases = []
def progress(d):
    if not phases or phases[-1][1] != d["phase"]:
        phases.append((time.perf_counter() - t0, d["phase"]))
control = Control(None if cancel else limit, progress)
t0 = time.perf_counter()
if cancel:
    threading.Timer(limit, control.cancel).start()
try:
    f = solve(path, "label", solver=solver, control=control, **kw)
    wall = time.perf_counter() - t0
    at = [p for t, p in phases if t <= limit][-1:] or ["-"]
    out = {"wall": wall, "status": f.status, "runtime": f.runtime_s, "trees": len(f), "phase": at[0],
           "best": max(t.metrics["train_accuracy"] for t in f.trees),
           "splits": max(t.metrics["splits"] for t in f.trees),
           "notices": [n for n in f.notices if "ID-like" in n or "stopped" in n or "test" in n]}
except Exception as exc:
    out = {"wall": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"}
out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["warm_mb"] = base_mb
print("RESULT " + json.dumps(out))
"""


# estimate vs peak: every solver on these tables (quantbnb train splits from --data, and a synthetic one)
ESTIMATE_TABLES = ("quantbnb/magic.json", "quantbnb/room.json", "n200000_p20_c3")
# label -> (solver, keyword arguments); BRANCHES and SAT also with a small store, to show that the cap holds
ESTIMATE_SOLVERS = {
    "cart": ("cart", {"max_depth": 8}),
    "dpdt": ("dpdt", {"max_depth": 3}),
    "murtree": ("murtree", {"max_depth": 3}),
    "branches": ("branches", {}),
    "branches memory_mb=100": ("branches", {"memory_mb": 100}),
    "contree": ("contree", {"max_depth": 2}),
    "sat": ("sat", {"conflicts": "majority"}),
    "sat memory_mb=200": ("sat", {"conflicts": "majority", "memory_mb": 200}),
    "sat, mid tests": ("sat", {"conflicts": "majority", "discretizer": "mid"}),  # exact: too many tests on magic
}
PEAK_CHILD = r"""
import gc, json, sys, time
import numpy as np, pandas as pd
from treeexplorer import solve
from treeexplorer.warm import ensure_warm
path, solver, kw = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
if path.endswith(".json"):
    d = json.load(open(path))
    df = pd.DataFrame(np.asarray(d["Xtrain"], dtype=np.float64)).add_prefix("c")
    df["label"] = np.asarray(d["Ytrain"]).astype(int)
else:
    df = pd.read_parquet(path)
ensure_warm(solver)
def status(key):
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) / 1024
gc.collect()
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) counts from here
base = status("VmRSS")
cpu = time.process_time()
try:
    f = solve(df, "label", solver=solver, time_limit=60, **kw)
    out = {"peak": status("VmHWM") - base, "est": f.stats.get("memory_estimate_mb"), "status": f.status,
           "store": f.stats.get("memory_store_mb"), "full": any("memory budget" in n for n in f.notices),
           "cpu": time.process_time() - cpu, "wall": f.runtime_s}
    del f
    gc.collect()
    out["held"] = status("VmRSS") - base  # what stays resident once the front is gone
    if solver == "branches":  # how far the search got: the store holds about a branch per iteration
        out["progress"] = f"{f.stats.get('iterations', 0):,} iterations"
    elif solver == "sat" and "examples_encoded" in f.stats:  # ... the clauses of each example at that depth
        out["progress"] = f"depth {f.stats.get('min_depth_lower_bound')}, {f.stats['examples_encoded']} examples"
except ValueError as exc:
    out = {"error": str(exc)[:160]}
out["shape"] = list(df.shape)
print("RESULT " + json.dumps(out))
"""


def estimates(folder: Path, root: Path, only: set, memory_limit: int | None = None) -> None:
    """The memory estimate the API records before each run against the run's measured peak (VmHWM).

    For BRANCHES and SAT the estimate includes the cap of their growing store (``memory_mb``, lowered to what
    the memory limit leaves): a bound that holds, which a search ending early stays far below.  Their fixed part
    (estimate minus cap), the CPU time the run got and how far the search went show what the peak follows: the
    store grows with the search's progress, which the CPU time given to the run (the machine's load) decides.
    ``memory_limit`` (MB) is passed to every run; ``held MB`` is what stays resident after ``solve`` returns."""
    print(
        "\nmemory estimate before the run vs measured peak (resident set growth during solve(), 60 s limit); "
        f"memory_limit {memory_limit or 'default'}; load average {os.getloadavg()[0]:.1f} at the start"
    )
    print(
        "| solver | table | rows x cols | estimate MB | of which store cap | fixed MB | peak MB | peak / estimate "
        "| peak / fixed | held MB | CPU s / wall s | search progress | status |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for key in ESTIMATE_TABLES:
        path = root / key if key.endswith(".json") else table_path(folder, key)
        if not path.exists():
            print(f"| - | {key} | skipped: not under {root} | | | | | | | | | |")
            continue
        for label, (solver, kw) in ESTIMATE_SOLVERS.items():
            if only and solver not in only:
                continue
            if memory_limit is not None:
                kw = {**kw, "memory_limit": memory_limit}
            try:
                done = subprocess.run(
                    [sys.executable, "-c", PEAK_CHILD, str(path), solver, json.dumps(kw)],
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
                r = json.loads(line[7:]) if line else {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
            except subprocess.TimeoutExpired:
                r = {"error": "killed after 600 s"}
            name = Path(key).stem
            if "error" in r:
                shape = "x".join(map(str, r.get("shape", [])))
                print(f"| {label} | {name} | {shape} | - | - | - | - | - | - | - | - | - | {r['error']} |")
                continue
            ratio = r["peak"] / r["est"] if r["est"] else float("nan")
            store = "-" if r.get("store") is None else f"{r['store']:.0f}"
            # the part of the estimate that does not grow with the search (all of it for the other solvers)
            fixed = r["est"] - (r.get("store") or 0.0)
            status = r["status"] + (", store full" if r.get("full") else "")
            print(
                f"| {label} | {name} | {r['shape'][0]:,} x {r['shape'][1] - 1} | {r['est']:.1f} | {store} "
                f"| {fixed:.1f} | {r['peak']:.1f} | {ratio:.2f} | {r['peak'] / fixed:.2f} | {r['held']:.1f} "
                f"| {r['cpu']:.1f} / {r['wall']:.1f} | {r.get('progress', '-')} | {status} |",
                flush=True,
            )


def table_path(folder: Path, key: str) -> Path:
    path = folder / f"{key}.parquet"
    if not path.exists():
        if key.startswith("id"):
            make_id(path, int(key[2:]))
        elif key.startswith("r"):
            n, p, c = (int(part[1:]) for part in key.split("_"))
            make_random(path, n, p, c)
        else:
            n, p, c = (int(part[1:]) for part in key.split("_"))
            make_numeric(path, n, p, c)
    return path


def run(path: Path, solver: str, kw: dict, limit: float, timeout: float) -> dict:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), solver, json.dumps(kw), str(limit)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {timeout:.0f} s"}
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(ap)
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--only", default="", help="comma-separated solver names")
    ap.add_argument("--quick", action="store_true", help="smaller tables (a few minutes in all)")
    ap.add_argument("--issue", action="store_true", help="only the issue-36 cases (each with its own limit)")
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--estimates", action="store_true", help="only the memory estimate vs peak table")
    ap.add_argument("--memory-limit", type=int, default=None, help="MB, for every run of --estimates")
    a = ap.parse_args(argv)
    if a.estimates:
        with tempfile.TemporaryDirectory() as tmp:
            estimates(Path(tmp), data_root(a.data), set(filter(None, a.only.split(","))), a.memory_limit)
        return 0
    summary = Summary(a.summary)
    within = []
    only = set(filter(None, a.only.split(",")))
    cases = ISSUE if a.issue else {**(QUICK if a.quick else CASES), **ISSUE}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"time limit {a.limit:g} s unless the case says; target: wall <= limit + max(1 s, 10 %)")
        print(
            "| case | limit s | wall s | overshoot s | within target | status | phase at the limit | printed runtime s "
            "| trees | splits | best train acc | peak MB (after warm-up) |"
        )
        print("|---|---:|---:|---:|:---:|---|---|---:|---:|---:|---:|---:|")
        runs = [(n, c, {}) for n, c in cases.items()]
        if not a.quick and not a.issue:
            runs += [(n, c, {"cancel": True}) for n, c in CANCEL.items()]
        for name, (key, solver, kw), extra in runs:
            if only and solver not in only:
                continue
            kw = dict(kw)
            limit = float(kw.pop("_limit", a.limit))
            r = run(table_path(folder, key), solver, {**kw, **extra}, limit, timeout=10 * limit + 120)
            peak = f"{r['peak_mb']:.0f} ({r['warm_mb']:.0f})" if "peak_mb" in r else "-"
            if "status" not in r:
                wall = f"{r['wall']:.2f}" if "wall" in r else "-"
                print(f"| {name} | {limit:g} | {wall} | - | - | {r['error'][:160]} | - | - | - | - | - | {peak} |")
                within.append(False)
                continue
            over = r["wall"] - limit
            ok = "yes" if over <= max(1.0, 0.1 * limit) else "NO"
            within.append(ok == "yes")
            print(
                f"| {name} | {limit:g} | {r['wall']:.2f} | {over:+.2f} | {ok} | {r['status']} | {r['phase']} "
                f"| {r['runtime']:.2f} | {r['trees']} | {r['splits']} | {r['best']:.3f} | {peak} |"
            )
            for note in r.get("notices", []):
                print(f"|  | notice: {note[:200]} |||||||||||")
        target = "limit + max(1 s, 10 %)"
        summary.add("cases returning within their limit", f"{sum(within)} of {len(within)}", target, all(within))
        summary.write()
        if a.no_memory:
            return 0
        print()
        print("memory guard (default memory_limit: half of the available memory)")
        print("| case | seconds | outcome |")
        print("|---|---:|---|")
        for name, (key, solver, kw) in MEMORY.items():
            if only and solver not in only:
                continue
            r = run(table_path(folder, key), solver, kw, a.limit, timeout=10 * a.limit + 120)
            if "status" not in r:
                r.setdefault("error", "no result")
            outcome = r.get("error") or f"ran: {r['status']}, {r['trees']} trees {'; '.join(r['notices'])}"
            wall = f"{r['wall']:.2f}" if "wall" in r else "-"
            print(f"| {name} | {wall} | {outcome} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
