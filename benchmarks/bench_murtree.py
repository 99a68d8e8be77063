"""MurTree vs pystreed (STreeD) side by side on the DL8.5 binarised sets: time, peak memory, optimal errors.

Usage::

    python benchmarks/bench_murtree.py [--data DIR] [--depth 3 4] [--datasets anneal vote ...]
                                       [--modes single front]

Every measurement runs in a fresh subprocess: ``load`` is a warm-up solve on 60 rows (it includes
loading numba's cached machine code: the extra cost of a first solve in a fresh process), ``s`` the
timed solve of the whole set, ``MB`` the process' peak resident memory during that solve (VmHWM, reset
after the warm-up through /proc/self/clear_refs) above its size before it: what the solve itself needs.

Columns: ``single`` is our single optimal tree (``front=False``: fewest errors, then fewest splits;
pystreed does not minimise splits, so ``single-any`` is ours without that tie-break, the like-for-like
figure); ``front`` is our whole front for budgets 0..2^D-1.  ``equal`` says whether our optimal error
equals pystreed's.  Data: ``<data>/murtree-dl/<name>.txt`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or
``benchmarks/data/``; label first, 0/1 features); missing sets are skipped.  At depth 4 the published optima
(``KNOWN``) are checked too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_arguments, collection_dir, peer, run_child  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["murtree-dl"],
    "peers": ["pystreed"],
    "smoke": ["--datasets", "smoke", "--depth", "2", "--modes", "single-any"],
    "quick": ["--datasets", "anneal", "vote", "tic-tac-toe", "hypothyroid", "--depth", "3", "--modes", "single-any"],
    "full": ["--depth", "3", "4"],
}
DATASETS = [
    "anneal",
    "australian-credit",
    "diabetes",
    "german-credit",
    "hypothyroid",
    "kr-vs-kp",
    "mushroom",
    "yeast",
    "vote",
    "tic-tac-toe",
]


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) of this process; False where Linux does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _child(path: str, depth: int, mode: str) -> None:
    """Run one measurement and print it as JSON (executed in a subprocess)."""
    import numpy as np

    data = np.loadtxt(path, dtype=np.int64)
    y = np.unique(data[:, 0], return_inverse=True)[1].reshape(-1)  # labels as 0..k-1
    X = np.ascontiguousarray(data[:, 1:], dtype=np.uint8)
    if mode == "pystreed":
        from pystreed import STreeDClassifier

        def run():
            clf = STreeDClassifier(max_depth=depth, max_num_nodes=2**depth - 1, time_limit=3600)
            clf.fit(X, y)
            return int((clf.predict(X) != y).sum()), None
    else:
        from treeexplorer.solvers.murtree import murtree

        kw = {
            "single": dict(front=False),
            "single-any": dict(front=False, fewest_splits=False),
            "front": dict(front=True),
        }[mode]

        def run():
            fr = murtree(X, y, max_depth=depth, **kw)
            best = fr.solutions[-1]
            return best.info["errors"], len(fr.solutions)

    # warm up on 60 rows of both classes (numba loads its cached machine code: what a fresh process pays
    # once), then measure one solve: its time, and its peak memory above the warmed-up process
    full = X, y
    rows = np.r_[np.flatnonzero(y == y[0])[:30], np.flatnonzero(y != y[0])[:30]]
    X, y = X[rows], y[rows]
    t = time.perf_counter()
    run()
    first = time.perf_counter() - t
    X, y = full
    base = _status_mb("VmRSS")
    if not _reset_peak():
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, cpu = time.perf_counter(), time.process_time()
    errors, n_trees = run()
    secs, cpu = time.perf_counter() - t, time.process_time() - cpu
    peak = _status_mb("VmHWM")
    out = {"errors": errors, "time": secs, "cpu": cpu, "first": first, "mem": max(0.0, peak - base), "trees": n_trees}
    print(json.dumps(out))


def _secs(r: dict) -> str:
    return f"{r['cpu']:.3f} ({r['time']:.2f})"


def measure(path: Path, depth: int, mode: str, timeout: float) -> dict | None:
    return run_child(__file__, [str(path), str(depth), mode], timeout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(ap)
    ap.add_argument("--depth", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument(
        "--modes", nargs="+", default=["single", "single-any", "front"], choices=["single", "single-any", "front"]
    )
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    data_dir = collection_dir(args.data, "murtree-dl", "bench_murtree", summary=summary)
    if data_dir is None:
        return 0
    have_streed = peer("pystreed") is not None
    sets = [(name, data_dir / f"{name}.txt") for name in args.datasets]
    missing = [name for name, p in sets if not p.exists()]
    if missing:
        print(f"skipping (not found in {data_dir}): {', '.join(missing)}")
    sets = [(name, p) for name, p in sets if p.exists()]
    if not sets:
        summary.skip(f"none of the sets found in {data_dir}")
        summary.write()
        print("no dataset found; nothing to do")
        return 0
    # CPU seconds of the solve (wall in brackets): on a shared machine the ratio of CPU times is the steadier one
    print(f"load average {os.getloadavg()[0]:.1f} at the start; times are CPU s (wall s), ratio of CPU s")
    head = f"{'dataset':<18} D  {'pystreed s':>16} {'MB':>6} {'err':>5}"
    for mode in args.modes:
        head += f" | {mode + ' s':>16} {'load':>6} {'MB':>6} {'ratio':>6}"
    print(head + " | equal")
    ratios = {m: {d: [] for d in args.depth} for m in args.modes}
    times = {m: {d: [] for d in args.depth} for m in args.modes}
    all_equal = True
    for depth in args.depth:
        for name, path in sets:
            ref = measure(path, depth, "pystreed", args.timeout) if have_streed else None
            line = f"{name:<18} {depth}  "
            if ref:
                line += f"{_secs(ref):>16} {ref['mem']:>6.1f} {ref['errors']:>5}"
            else:
                line += f"{'-':>16} {'-':>6} {'-':>5}"
            equal = True
            for mode in args.modes:
                r = measure(path, depth, mode, args.timeout)
                if r is None:
                    line += f" | {'timeout':>16} {'':>6} {'':>6} {'':>6}"
                    equal = False
                    continue
                ratio = r["cpu"] / ref["cpu"] if ref and ref["cpu"] > 0 else float("nan")
                times[mode][depth].append(r["cpu"])
                if ref:
                    ratios[mode][depth].append(ratio)
                    equal = equal and r["errors"] == ref["errors"]
                line += f" | {_secs(r):>16} {r['first']:>6.2f} {r['mem']:>6.1f} {ratio:>6.2f}"
            all_equal = all_equal and equal
            print(line + f" | {'yes' if equal else 'NO' if ref else '-'}", flush=True)
    known_ok = _known_optima(data_dir, args.timeout) if 4 in args.depth else None
    if have_streed:
        for depth in args.depth:
            parts = [f"{m} {statistics.median(ratios[m][depth]):.2f}" for m in args.modes if ratios[m][depth]]
            print(f"median time ratio ours/pystreed at depth {depth}: " + ", ".join(parts))
            for m in args.modes:
                if ratios[m][depth]:
                    med = statistics.median(ratios[m][depth])
                    summary.add(f"median time ratio ours ({m})/pystreed, depth {depth}", f"{med:.2f}", "< 1", med < 1)
        print("optimal errors equal on every set:", "yes" if all_equal else "NO")
        summary.add("optimal errors equal to pystreed's", "every set" if all_equal else "NOT all", "all", all_equal)
    else:
        for depth in args.depth:
            for m in args.modes:
                if times[m][depth]:
                    med = statistics.median(times[m][depth])
                    summary.add(f"median time ours ({m}), depth {depth}", f"{med:.3f} s", "", None)
    if known_ok is not None:
        summary.add("published depth-4 optima reproduced", "yes" if known_ok else "NO", "all", known_ok)
    summary.write()
    return 0 if all_equal and known_ok is not False else 1


# Published optima at depth 4 with 15 splits (SOURCES.md of the data folder): pymurtree's test fixture
# (labels 1..5, 5 classes) and the MurTree README.
KNOWN = {
    "pymurtree-fixture/test_dataset.txt": 129,
    "anneal.txt": 91,
    "australian-credit.txt": 56,
    "german-credit.txt": 204,
}


def _known_optima(data_dir: Path, timeout: float) -> bool:
    ok = True
    for rel, expected in KNOWN.items():
        path = data_dir / rel
        if not path.exists():
            continue
        r = measure(path, 4, "single-any", timeout)
        got = None if r is None else r["errors"]
        ok = ok and got == expected
        print(f"published optimum {rel} depth 4: expected {expected}, ours {got}: {'ok' if got == expected else 'NO'}")
    return ok


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(main())
