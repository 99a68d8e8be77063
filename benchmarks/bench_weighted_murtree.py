"""Weighted MurTree vs pystreed (STreeD) on balanced accuracy: the same optimum, CPU time side by side.

Usage::

    python benchmarks/bench_weighted_murtree.py [--data DIR] [--depth 3 4] [--datasets anneal vote ...]

Ours is ``murtree`` with scikit-learn's balanced class weights, ``sample_weight = n / (k * n_c)`` (the weighted
cost is then ``n * (1 - balanced accuracy)``: the real-valued, float64 path), one optimal tree (``front=False,
fewest_splits=False``: pystreed does not minimise splits) and the whole front (``front``, budgets 0..2^D-1);
pystreed is ``STreeDClassifier(optimization_task="balanced-accuracy", cost_complexity=0)`` with the same depth
and ``max_num_nodes=2^D-1``, on the same 0/1 features.  ``plain`` is our unweighted single tree (fewest errors),
for the weighted path's overhead in the same run.

Every measurement runs in a fresh subprocess: ``load`` (cold) is a warm-up solve on 60 rows of both classes
(numba loading its cached machine code: what a fresh process pays once), then the timed (warm) solve of the
whole set, in CPU seconds (``time.process_time``, one thread each; wall seconds in brackets).  ``ratio`` is
ours/pystreed of CPU seconds, same run; ``BA`` the training balanced accuracy of each tree; ``equal`` whether
they agree (to 1e-9).  Data: ``<data>/murtree-dl/<name>.txt`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or
``benchmarks/data/``; label first, 0/1 features); missing sets are skipped, and the whole benchmark without them.
"""

from __future__ import annotations

import argparse
import json
import os
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
    "smoke": ["--datasets", "smoke", "--depth", "2"],
    "quick": ["--datasets", "anneal", "vote", "tic-tac-toe", "hypothyroid", "australian-credit", "--depth", "3"],
    "full": ["--depth", "3", "4"],
}
DATASETS = ["anneal", "vote", "tic-tac-toe", "hypothyroid", "australian-credit"]  # binary DL8.5 sets
MODES = ("single", "front", "plain")


def _balanced_accuracy(y, pred, k):
    import numpy as np

    return float(np.mean([np.mean(pred[y == c] == c) for c in range(k) if np.any(y == c)]))


def _child(path: str, depth: int, mode: str) -> None:
    """Run one measurement and print it as JSON (executed in a subprocess)."""
    import numpy as np

    data = np.loadtxt(path, dtype=np.int64)
    y = np.unique(data[:, 0], return_inverse=True)[1].reshape(-1)  # labels as 0..k-1
    X = np.ascontiguousarray(data[:, 1:], dtype=np.uint8)
    k = int(y.max()) + 1

    def balanced(y):  # scikit-learn's class_weight="balanced"
        return (y.size / (k * np.bincount(y, minlength=k)))[y]

    if mode == "pystreed":
        from pystreed import STreeDClassifier

        def run(X, y, w):
            clf = STreeDClassifier(
                "balanced-accuracy", max_depth=depth, max_num_nodes=2**depth - 1, cost_complexity=0.0, time_limit=3600
            )
            clf.fit(X, y)
            return np.asarray(clf.predict(X), dtype=np.int64)
    else:
        from treeexplorer.solvers._kernels.predict import apply_tree
        from treeexplorer.solvers.murtree import murtree

        def run(X, y, w):
            kw = {} if mode == "plain" else {"sample_weight": w}
            fr = murtree(X, y, k, max_depth=depth, front=mode == "front", fewest_splits=False, **kw)
            t = fr.solutions[-1].tree
            return t.prediction[apply_tree(t.feature, t.threshold, t.left, t.right, X.astype(np.float64))]

    full = X, y
    rows = np.r_[np.flatnonzero(y == y[0])[:30], np.flatnonzero(y != y[0])[:30]]
    t = time.perf_counter()
    run(X[rows], y[rows], balanced(y)[rows])  # the whole set's weights: the kernels of the timed run load here
    first = time.perf_counter() - t
    X, y = full
    t, cpu = time.perf_counter(), time.process_time()
    pred = run(X, y, balanced(y))
    secs, cpu = time.perf_counter() - t, time.process_time() - cpu
    out = {"ba": _balanced_accuracy(y, pred, k), "time": secs, "cpu": cpu, "first": first}
    print(json.dumps(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(ap)
    ap.add_argument("--depth", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--datasets", nargs="+", default=DATASETS)
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    data_dir = collection_dir(args.data, "murtree-dl", "bench_weighted_murtree", summary=summary)
    if data_dir is None:
        return 0
    have_streed = peer("pystreed") is not None
    sets = [(name, data_dir / f"{name}.txt") for name in args.datasets if (data_dir / f"{name}.txt").exists()]
    if not sets:
        summary.skip(f"none of the sets found in {data_dir}")
        summary.write()
        print("no dataset found; nothing to do")
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} at the start; CPU s (wall s) of the warm solve, load = cold s")
    head = f"{'dataset':<18} D | {'pystreed s':>15} {'load':>5} {'BA':>7}"
    for mode in MODES:
        head += f" | {mode + ' s':>15} {'load':>5} {'BA':>7} {'ratio':>5}"
    print(head + " | equal")
    ratios = {m: {d: [] for d in args.depth} for m in MODES}
    times = {m: {d: [] for d in args.depth} for m in MODES}
    all_equal = True
    for depth in args.depth:
        for name, path in sets:
            ref = run_child(__file__, [str(path), str(depth), "pystreed"], args.timeout) if have_streed else None
            line = f"{name:<18} {depth} | "
            line += f"{ref['cpu']:>7.3f} ({ref['time']:>5.2f}) {ref['first']:>5.2f} {ref['ba']:>7.4f}" if ref else "-"
            equal = True
            for mode in MODES:
                r = run_child(__file__, [str(path), str(depth), mode], args.timeout)
                if r is None:
                    line += f" | {'timeout':>15}"
                    equal = equal and mode == "plain"
                    continue
                ratio = r["cpu"] / ref["cpu"] if ref and ref["cpu"] > 0 else float("nan")
                times[mode][depth].append(r["cpu"])
                if ref:
                    ratios[mode][depth].append(ratio)
                    if mode != "plain":
                        equal = equal and abs(r["ba"] - ref["ba"]) <= 1e-9
                line += f" | {r['cpu']:>7.3f} ({r['time']:>5.2f}) {r['first']:>5.2f} {r['ba']:>7.4f} {ratio:>5.2f}"
            all_equal = all_equal and equal
            print(line + f" | {'yes' if equal else 'NO' if ref else '-'}", flush=True)
    if have_streed:
        for depth in args.depth:
            parts = [f"{m} {statistics.median(ratios[m][depth]):.2f}" for m in MODES if ratios[m][depth]]
            print(f"median CPU ratio ours/pystreed (balanced accuracy) at depth {depth}: " + ", ".join(parts))
            if ratios["single"][depth]:
                med = statistics.median(ratios["single"][depth])
                label = f"median CPU ratio weighted murtree/pystreed, depth {depth}"
                summary.add(label, f"{med:.2f}", "<= 1", med <= 1)
        print("balanced accuracy equal on every set:", "yes" if all_equal else "NO")
        summary.add("balanced accuracy equal to pystreed's", "every set" if all_equal else "NOT all", "all", all_equal)
    else:
        for depth in args.depth:
            for m in MODES:
                if times[m][depth]:
                    med = statistics.median(times[m][depth])
                    summary.add(f"median CPU s weighted murtree ({m}), depth {depth}", f"{med:.3f}", "", None)
    summary.write()
    return 0 if all_equal else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(main())
