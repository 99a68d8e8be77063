"""ConTree (ours) vs pycontree side by side on the 12 Quant-BnB train splits: time, memory, optimal errors, gap.

Usage::

    python benchmarks/bench_contree.py [--data DIR] [--depths 2 3] [--d4-limit 60] [--datasets bank wilt ...]
                                       [--no-front] [--repeat 3]

One process, both solvers on the same arrays.  ``cold`` is our first solve in a fresh process (numba
loading or compiling its kernels), measured once in a subprocess; every other time is warm.  ``MB`` is
the peak resident memory during the solve above the resident size before it (VmHWM reset through
/proc/self/clear_refs; ``nan`` where Linux does not allow it).  Columns per depth: ``py`` pycontree's
single optimal tree, ``ours`` our single optimal tree (``front=False``, numba's thread count: the threads share the
root's features), ``1 thread`` the same on one thread, ``ratio`` ours/py, ``eq`` equal
optimal training errors, and at depth 3 ``front`` our whole error-vs-splits front (budgets 0..7) and
``front/py``.  Depth 4: our anytime run with ``--d4-limit`` seconds (single tree), with the proven lower
bound and the gap (upper - lower) in errors; ``proven`` when it finished.  Every warm time is the median of
``--repeat`` runs (default 3; pycontree and ours alternate set by set under the same load), the depth-4 run is
done once.

Data: ``<data>/quantbnb/<name>.json`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``;
Quant-BnB's fixed train/test splits, train part only); missing sets are skipped, and without pycontree the peer
columns stay empty.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_arguments, collection_dir, peer  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["quantbnb"],
    "peers": ["pycontree"],
    "smoke": ["--datasets", "smoke", "--depths", "2", "--d4-limit", "0", "--no-front", "--repeat", "1"],
    "quick": ["--datasets", "bank", "raisin", "wilt", "bidding", "--d4-limit", "0", "--repeat", "1"],
    "full": ["--repeat", "3", "--d4-limit", "60"],
}
DATASETS = [
    "bank",
    "bidding",
    "fault",
    "htru",
    "magic",
    "occupancy",
    "page",
    "raisin",
    "rice",
    "room",
    "segment",
    "wilt",
]


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _measure(fn, *args, **kw):
    """(seconds, peak MB above the start, result) of ``fn(*args, **kw)``."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = _status_mb("VmRSS")
    except OSError:
        base = float("nan")
    t = time.perf_counter()
    out = fn(*args, **kw)
    dt = time.perf_counter() - t
    peak = _status_mb("VmHWM") - base
    peak = max(0.0, peak) if peak == peak else peak  # the solve may free more than it takes; nan stays nan
    return dt, peak, out


def _repeat(k, fn, *args, **kw):
    """Median seconds and largest peak MB of ``k`` runs of ``fn``."""
    runs = [_measure(fn, *args, **kw) for _ in range(max(1, k))]
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def _fit_peer(ConTree, depth, X, y):
    return ConTree(max_depth=depth, time_limit=3600).fit(X, y)


def _load(path):
    d = json.loads(path.read_text())
    X = np.asarray(d["Xtrain"], dtype=float)
    y = np.asarray(d["Ytrain"], dtype=float).astype(np.int64)
    return X, y


def _cold() -> float:
    code = (
        "import time, numpy as np; t = time.perf_counter(); "
        "from treeexplorer.solvers.contree import contree; "
        "X = np.random.default_rng(0).random((60, 3)); y = (X[:, 0] > .5).astype(int); "
        "contree(X, y, max_depth=3); contree(X, y, max_depth=3, front=False); print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--d4-limit", type=float, default=60.0, help="seconds for the depth-4 run (0: skip)")
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument("--no-front", action="store_true", help="skip the depth-3 front")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement: median time, largest MB")
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    data_dir = collection_dir(args.data, "quantbnb", "bench_contree", summary=summary)
    if data_dir is None:
        return 0
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.contree import contree

    pycontree = peer("pycontree")
    ConTree = pycontree.ConTree if pycontree is not None else None

    cold = _cold()
    X0 = np.random.default_rng(0).random((60, 3))
    y0 = (X0[:, 0] > 0.5).astype(np.int64)
    contree(X0, y0, max_depth=3)
    contree(X0, y0, max_depth=3, front=False)
    if ConTree is not None:
        ConTree(max_depth=2).fit(X0, y0)

    rows, ratios, fratios, d4 = [], {d: [] for d in args.depths}, [], []
    ratios1 = {d: [] for d in args.depths}
    for name in args.datasets:
        path = data_dir / f"{name}.json"
        if not path.exists():
            print(f"{name}: missing, skipped")
            continue
        X, y = _load(path)
        for depth in args.depths:
            r = {"set": name, "n": X.shape[0], "p": X.shape[1], "C": int(y.max()) + 1, "D": depth}
            if ConTree is not None:
                t, mb, m = _repeat(args.repeat, _fit_peer, ConTree, depth, X, y)
                r.update(py=t, py_mb=mb, py_err=int(np.count_nonzero(m.predict(X) != y)))
            t, mb, raw = _repeat(args.repeat, contree, X, y, max_depth=depth, front=False)
            r.update(ours=t, ours_mb=mb, ours_err=raw.solutions[0].info["errors"], threads=raw.stats["threads"])
            if raw.stats["threads"] > 1:  # the same on one thread: the algorithm alone against the peer
                t1, _, raw1 = _repeat(args.repeat, contree, X, y, max_depth=depth, front=False, n_threads=1)
                r.update(one=t1)
                assert raw1.solutions[0].info["errors"] == r["ours_err"]
            if "py" in r:
                r["ratio"] = r["ours"] / r["py"]
                r["eq"] = r["ours_err"] == r["py_err"]
                ratios[depth].append(r["ratio"])
                if "one" in r:
                    r["one_ratio"] = r["one"] / r["py"]
                    ratios1[depth].append(r["one_ratio"])
            if depth == 3 and not args.no_front:
                t, mb, fr = _repeat(args.repeat, contree, X, y, max_depth=3)
                r.update(front=t, front_mb=mb, front_err=fr.solutions[-1].info["errors"], front_n=len(fr.solutions))
                if "py" in r:
                    r["front_ratio"] = t / r["py"]
                    fratios.append(r["front_ratio"])
            rows.append(r)
            _print_row(r)
        if args.d4_limit > 0:
            ctl = Control(time_limit=args.d4_limit)
            with ctl:
                t, mb, raw = _measure(contree, X, y, max_depth=4, front=False, control=ctl)
            st = raw.stats
            d4.append((name, t, st["upper_bound"], st["lower_bound"], raw.status, mb))
            print(
                f"  depth 4 ({args.d4_limit:g} s): {st['upper_bound']} errors, lower bound {st['lower_bound']}, "
                f"gap {st['upper_bound'] - st['lower_bound']} ({raw.status}, {t:.1f} s, {mb:.0f} MB)",
                flush=True,
            )
    print()
    print(f"cold start (first solve in a fresh process, kernels from numba's cache or compiled): {cold:.2f} s")
    print()
    print(_table(rows))
    summary.add("cold start (first solve in a fresh process)", f"{cold:.2f} s", "", None)
    for depth in args.depths:
        if ratios[depth]:
            med = statistics.median(ratios[depth])
            print(f"median time ratio ours/pycontree at depth {depth}: {med:.2f}")
            summary.add(f"median time ratio ours/pycontree, depth {depth}", f"{med:.2f}", "<= 1.0", med <= 1.0)
        if ratios1[depth]:
            print(f"  on one thread: {statistics.median(ratios1[depth]):.2f}")
    if fratios:
        med = statistics.median(fratios)
        print(f"median time ratio whole front (depth 3) / pycontree single tree: {med:.2f}")
        summary.add("median time ratio whole depth-3 front/pycontree", f"{med:.2f}", "<= 3", med <= 3)
    eq = [r["eq"] for r in rows if "eq" in r]
    if eq:
        summary.add("optimal errors equal to pycontree's", f"{sum(eq)} of {len(eq)}", "all", all(eq))
    if d4:
        done = sum(status == "done" for _, _, _, _, status, _ in d4)
        summary.add(f"depth 4 proven within {args.d4_limit:g} s", f"{done} of {len(d4)}", "", None)
    if d4:
        print()
        print(f"| set | depth 4, limit {args.d4_limit:g} s | errors | lower bound | gap | status | MB |")
        print("|---|---|---|---|---|---|---|")
        for name, t, ub, lb, status, mb in d4:
            print(f"| {name} | {t:.1f} s | {ub} | {lb} | {ub - lb} | {status} | {mb:.0f} |")
    summary.write()
    return 0


def _print_row(r):
    py = f"py {r['py']:.3f}s err {r['py_err']}" if "py" in r else "py -"
    fr = f" front {r['front']:.3f}s ({r['front_n']} trees)" if "front" in r else ""
    if "one" in r:
        fr = f" (1 thread {r['one']:.3f}s)" + fr
    print(
        f"{r['set']:10s} D={r['D']} {py} | ours {r['ours']:.3f}s err {r['ours_err']}{fr} | "
        f"MB ours {r['ours_mb']:.0f}" + (f" py {r['py_mb']:.0f}" if "py" in r else ""),
        flush=True,
    )


def _table(rows) -> str:
    head = (
        "| set | n | p | C | D | py s | ours s | ours/py | 1 thread s | 1 thread/py | equal | errors | front s "
        "| front/py | MB ours | MB py |"
    )
    out = [head, "|" + "---|" * 16]

    def f(v, fmt):
        return "" if v is None else format(v, fmt)

    for r in rows:
        out.append(
            f"| {r['set']} | {r['n']} | {r['p']} | {r['C']} | {r['D']} | {f(r.get('py'), '.3f')} | {r['ours']:.3f} | "
            f"{f(r.get('ratio'), '.2f')} | {f(r.get('one'), '.3f')} | {f(r.get('one_ratio'), '.2f')} | "
            f"{'' if 'eq' not in r else ('yes' if r['eq'] else 'NO')} | {r['ours_err']} | "
            f"{f(r.get('front'), '.3f')} | {f(r.get('front_ratio'), '.2f')} | {r['ours_mb']:.0f} | "
            f"{f(r.get('py_mb'), '.0f')} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
