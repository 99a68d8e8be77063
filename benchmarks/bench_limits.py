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
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_summary_argument  # noqa: E402

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
import json, sys, threading, time
from treeexplorer import solve
from treeexplorer.solvers import Control
from treeexplorer.warm import ensure_warm
path, solver, kw, limit = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])
cancel = kw.pop("cancel", False)
ensure_warm(solver)
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
           "notices": [n for n in f.notices if "ID-like" in n or "stopped" in n]}
except Exception as exc:
    out = {"wall": time.perf_counter() - t0, "error": f"{type(exc).__name__}: {exc}"}
print("RESULT " + json.dumps(out))
"""


def table_path(folder: Path, key: str) -> Path:
    path = folder / f"{key}.parquet"
    if not path.exists():
        if key.startswith("id"):
            make_id(path, int(key[2:]))
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
    add_summary_argument(ap)
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--only", default="", help="comma-separated solver names")
    ap.add_argument("--quick", action="store_true", help="smaller tables (a few minutes in all)")
    ap.add_argument("--no-memory", action="store_true")
    a = ap.parse_args(argv)
    summary = Summary(a.summary)
    within = []
    only = set(filter(None, a.only.split(",")))
    cases = QUICK if a.quick else CASES
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(
            f"time limit {a.limit:g} s; target: wall <= limit + max(1 s, 10 %) = {a.limit + max(1, 0.1 * a.limit):g} s"
        )
        print(
            "| case | limit s | wall s | overshoot s | within target | status | phase at the limit | printed runtime s "
            "| trees | best train acc |"
        )
        print("|---|---:|---:|---:|:---:|---|---|---:|---:|---:|")
        runs = [(n, c, {}) for n, c in cases.items()]
        if not a.quick:
            runs += [(n, c, {"cancel": True}) for n, c in CANCEL.items()]
        for name, (key, solver, kw), extra in runs:
            if only and solver not in only:
                continue
            r = run(table_path(folder, key), solver, {**kw, **extra}, a.limit, timeout=10 * a.limit + 120)
            if "error" in r:
                print(f"| {name} | {a.limit:g} | - | - | no | {r['error']} | - | - | - | - |")
                within.append(False)
                continue
            over = r["wall"] - a.limit
            ok = "yes" if over <= max(1.0, 0.1 * a.limit) else "NO"
            within.append(ok == "yes")
            print(
                f"| {name} | {a.limit:g} | {r['wall']:.2f} | {over:+.2f} | {ok} | {r['status']} | {r['phase']} "
                f"| {r['runtime']:.2f} | {r['trees']} | {r['best']:.3f} |"
            )
        target = f"limit + {max(1.0, 0.1 * a.limit):g} s"
        summary.add(
            f"cases returning within the limit ({a.limit:g} s)", f"{sum(within)} of {len(within)}", target, all(within)
        )
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
            outcome = r.get("error") or f"ran: {r['status']}, {r['trees']} trees {'; '.join(r['notices'])}"
            wall = f"{r['wall']:.2f}" if "wall" in r else "-"
            print(f"| {name} | {wall} | {outcome} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
