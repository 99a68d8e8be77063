"""Long fuzz run (issue 19): the targets of ``tests/test_fuzz.py`` with many more examples and fresh seeds.

Every case must end with a result or one line from treeexplorer's own errors, within the time and memory bound
(a child process with an ``RLIMIT_AS`` budget and a per-case alarm).  The table shows, per target and seed, the
cases run, how many gave a result and how many a clean error, and the seconds; failures print the case.

    python benchmarks/fuzz_long.py                       # 2000 examples per target, seeds 1..3
    python benchmarks/fuzz_long.py --examples 300 --seeds 7 --targets front csv
    python benchmarks/fuzz_long.py --all-solvers         # the api target also runs every solver end to end

Exit code 1 if any target found a case.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_fuzz_module():
    spec = importlib.util.spec_from_file_location("treeexplorer_fuzz", ROOT / "tests" / "test_fuzz.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    fuzz = load_fuzz_module()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=2000, help="examples per target and seed")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--targets", nargs="+", default=list(fuzz.TARGETS), choices=fuzz.TARGETS)
    ap.add_argument("--memory-mb", type=int, default=fuzz.MEMORY_MB)
    ap.add_argument("--case-seconds", type=float, default=60.0)
    ap.add_argument("--all-solvers", action="store_true", help="api target: every solver runs end to end")
    a = ap.parse_args(argv)
    rows, failures = [], []
    t_all = time.perf_counter()
    for seed in a.seeds:
        results = fuzz.run_batch(
            a.targets,
            {t: a.examples for t in a.targets},
            seed=seed,
            memory_mb=a.memory_mb,
            case_seconds=a.case_seconds,
            timeout=24 * 3600,
            all_solvers=a.all_solvers,
        )
        for t in a.targets:
            r = results[t]
            o = r.get("outcomes", {})
            rows.append((t, seed, r.get("cases", 0), o.get("result", 0), o.get("error", 0), r.get("seconds", 0.0), r))
            if not r["ok"]:
                failures.append((t, seed, r["error"]))
    head = f"{'target':<11} {'seed':>4} {'cases':>6} {'results':>8} {'errors':>7} {'seconds':>8}  status"
    print(head)
    print("-" * len(head))
    for t, seed, n, ok, err, sec, r in rows:
        print(f"{t:<11} {seed:>4} {n:>6} {ok:>8} {err:>7} {sec:>8.1f}  {'ok' if r['ok'] else 'FOUND A CASE'}")
    print(f"\ntotal {time.perf_counter() - t_all:.0f} s; memory budget {a.memory_mb} MB per child beyond its imports")
    for t, seed, err in failures:
        print(f"\n=== {t} (seed {seed})\n{err}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
