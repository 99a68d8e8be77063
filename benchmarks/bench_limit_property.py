"""The long version of ``tests/test_limit_property.py``: many random tables per solver x discretizer.

Run: ``python benchmarks/bench_limit_property.py [--cases 200] [--limit 2] [--solvers cart,contree] [--seed 0]``.

Each case draws a table (10 to 20,000 rows, 1 to 60 columns, 2 to 5 classes, tied values, constant columns), a
solver and a discretizer, runs ``solve`` with ``time_limit`` and checks the test's properties (returned within
``limit + max(1 s, 10 %)``, status, a valid front, or a one-line refusal).  Prints one row per solver: cases,
refusals, runs stopped by the limit, the largest wall time, how many cases went past the bound in wall time and
how many missed it (past it in wall time and with more than the slack of CPU time spent after the limit, see
``LimitClock``), then the cases that failed, and the load average.  Synthetic tables only: no data needed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_limit_property import DISCRETIZERS, bound, check_run, random_table  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_summary_argument  # noqa: E402

ALL_SOLVERS = ("cart", "dpdt", "murtree", "branches", "sat", "contree")
# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol"); synthetic tables, no data
RUN_ALL = {
    "smoke": ["--cases", "3", "--limit", "1", "--solvers", "cart"],
    "quick": ["--cases", "30"],
    "full": ["--cases", "200"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_summary_argument(ap)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--limit", type=float, default=2.0)
    ap.add_argument("--solvers", default=",".join(ALL_SOLVERS))
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    solvers = [s for s in a.solvers.split(",") if s]
    rng = np.random.default_rng(a.seed)
    rows = {s: {"cases": 0, "refused": 0, "stopped": 0, "worst": 0.0, "wall": 0, "missed": 0} for s in solvers}
    failures = []
    load0 = os.getloadavg()[0]
    for _ in range(a.cases):
        solver = str(rng.choice(solvers))
        disc = DISCRETIZERS[rng.integers(len(DISCRETIZERS))]
        n = int(rng.integers(10, 300)) if rng.random() < 0.5 else int(rng.integers(300, 20_001))
        p = int(rng.integers(1, 9)) if rng.random() < 0.5 else int(rng.integers(8, 61))
        table = dict(
            seed=int(rng.integers(2**16)),
            n=n,
            p=p,
            classes=int(rng.integers(2, 6)),
            ties=bool(rng.random() < 0.5),
            constant=int(rng.integers(0, 3)),
        )
        r = rows[solver]
        r["cases"] += 1
        clocks = []
        try:
            _, out = check_run(solver, disc, random_table(**table), a.limit, clocks)
        except AssertionError as exc:
            failures.append(f"{solver}/{disc} {table}: {str(exc).splitlines()[0][:160]}")
            out = None
        clock = clocks[-1]
        r["worst"] = max(r["worst"], clock.wall)
        r["wall"] += clock.wall > bound(a.limit)
        r["missed"] += not clock.kept
        if isinstance(out, str):
            r["refused"] += 1
        elif out is not None and out.status == "time_limit":
            r["stopped"] += 1
    load = (load0, *os.getloadavg())
    print(f"time limit {a.limit:g} s, bound {bound(a.limit):g} s, {a.cases} cases (seed {a.seed})")
    print(f"load average (1 min) {load[0]:.1f} at the start, {load[1]:.1f} / {load[2]:.1f} / {load[3]:.1f} at the end")
    print(
        "| solver | cases | refused (one line) | stopped by the limit | worst wall s | wall over the bound "
        "| over the bound (wall and CPU after the limit) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s, r in rows.items():
        print(
            f"| {s} | {r['cases']} | {r['refused']} | {r['stopped']} | {r['worst']:.2f} | {r['wall']} | {r['missed']} |"
        )
    for f in failures:
        print("failed:", f)
    summary = Summary(a.summary)
    missed = sum(r["missed"] for r in rows.values())
    within = f"{a.cases - missed} of {a.cases}"
    summary.add(f"random cases within limit + max(1 s, 10 %) ({a.limit:g} s)", within, "all", not missed)
    summary.add("cases failing a property", len(failures), "0", not failures)
    summary.write()


if __name__ == "__main__":
    main()
