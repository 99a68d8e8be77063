"""Weighted vs plain objective, CPU seconds: ConTree on Quant-BnB train splits, BRANCHES on the paper's sets,
DPDT on synthetic tables.

Usage::

    python benchmarks/bench_weighted.py [--data DIR] [--contree bank raisin wilt] [--depths 2 3]
                                        [--branches monk1 monk3 tictactoe] [--time-limit 120]
                                        [--dpdt 1000 5000] [--dpdt-depths 3 4]

Each run is timed in CPU seconds of this process (``time.process_time``; the machine may be shared, wall time
would measure the load), once, after a warm-up that loads or compiles both kernels.  ``plain`` is the unweighted
objective, ``balanced`` scikit-learn's balanced class weights (``n / (k * n_class)``), ``costs`` a cost matrix
charging 5 for missing the rarest class (1 elsewhere).  ConTree: the single optimal tree (``front=False``, one
thread) at each depth, its cost and whether it was proven within ``--time-limit``; BRANCHES: the tree for the
paper's λ, no depth limit; DPDT: its whole front (``cart`` generator, K=3, one thread) on ``make_classification``
tables of the given sizes (10 features rounded to 2 decimals, 3 classes 70/20/10%; no data needed).

Data: ``<data>/quantbnb/<name>.json`` and ``<data>/branches/preprocessed/<name>.txt`` (``--data DIR``,
``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``); a missing collection or set is skipped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_branches import LAMBDA, load  # noqa: E402
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["quantbnb", "branches"],
    "smoke": [
        "--contree",
        "bank",
        "--depths",
        "2",
        "--branches",
        "monk1",
        "--time-limit",
        "30",
        "--dpdt",
        "1000",
        "--dpdt-depths",
        "3",
    ],
    "quick": [
        "--contree",
        "bank",
        "raisin",
        "--depths",
        "2",
        "--branches",
        "monk2",
        "monk3",
        "--time-limit",
        "60",
        "--dpdt",
        "1000",
        "5000",
        "--dpdt-depths",
        "3",
    ],
    "full": ["--time-limit", "120"],
}


def _weightings(y, k):
    counts = np.bincount(y, minlength=k)
    balanced = len(y) / (k * counts[y])
    costs = 1.0 - np.eye(k)
    costs[int(np.argmin(np.where(counts > 0, counts, len(y) + 1))), :] *= 5.0
    np.fill_diagonal(costs, 0.0)
    return {"plain": {}, "balanced": {"sample_weight": balanced}, "costs": {"costs": costs}}


def _cpu(fn, *args, **kw):
    t = time.process_time()
    out = fn(*args, **kw)
    return time.process_time() - t, out


def bench_contree(folder, names, depths, limit, ratios):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.contree import contree

    X0 = np.random.default_rng(0).random((40, 3))
    y0 = (X0[:, 0] > 0.5).astype(np.int64)
    contree(X0, y0, max_depth=3, front=False, n_threads=1)
    contree(X0, y0, max_depth=3, front=False, n_threads=1, sample_weight=np.arange(1.0, 41.0))
    print("| set | n | p | D | objective | CPU s | x plain | cost | proven |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        path = folder / f"{name}.json"
        if not path.exists():
            print(f"{name}: missing, skipped")
            continue
        d = json.loads(path.read_text())
        X = np.asarray(d["Xtrain"], dtype=float)
        y = np.asarray(d["Ytrain"], dtype=float).astype(np.int64)
        k = int(y.max()) + 1
        for depth in depths:
            base = None
            for label, kw in _weightings(y, k).items():
                with Control(time_limit=limit) as ctl:
                    t, raw = _cpu(contree, X, y, k, max_depth=depth, front=False, n_threads=1, control=ctl, **kw)
                sol = raw.solutions[-1]
                base = t if base is None else base
                if label != "plain":
                    ratios.append(t / max(base, 1e-3))
                cost = sol.info.get("cost", sol.info["errors"])
                print(
                    f"| {name} | {X.shape[0]} | {X.shape[1]} | {depth} | {label} | {t:.2f} | {t / base:.1f} | "
                    f"{cost:.6g} | {'yes' if sol.optimal else 'no (' + raw.status + ')'} |",
                    flush=True,
                )


def bench_branches(folder, names, limit, ratios):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.branches import fit_branches

    X0 = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.uint8)
    y0 = np.array([0, 1, 1, 0])
    for kw in ({}, {"sample_weight": np.array([1.0, 2.0, 1.0, 1.0])}):
        with Control() as ctl:  # the greedy incumbent under a control compiles its own kernels
            fit_branches(X0, y0, 0.01, control=ctl, **kw)
    print("| set | n | tests | λ | objective | CPU s | x plain | objective value | splits | proven |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        path = folder / f"{name}.txt"
        if not path.exists():
            print(f"{name}: missing, skipped")
            continue
        X, y, k = load(path)
        lam = LAMBDA.get(name, 0.01)
        base = None
        for label, kw in _weightings(y, k).items():
            with Control(time_limit=limit) as ctl:
                t, sol = _cpu(fit_branches, X, y, lam, n_classes=k, control=ctl, **kw)
            base = t if base is None else base
            if label != "plain":
                ratios.append(t / max(base, 1e-3))
            print(
                f"| {name} | {X.shape[0]} | {X.shape[1]} | {lam:g} | {label} | {t:.2f} | {t / base:.1f} | "
                f"{sol.info['objective']:.6g} | {sol.info['splits']} | {'yes' if sol.optimal else 'no'} |",
                flush=True,
            )


def bench_dpdt(sizes, depths, ratios):
    from sklearn.datasets import make_classification
    from treeexplorer.solvers.dpdt import dpdt

    X0 = np.random.default_rng(0).random((40, 3))
    y0 = (X0[:, 0] > 0.5).astype(np.int64)
    dpdt(X0, y0, max_depth=2, n_jobs=1)
    dpdt(X0, y0, max_depth=2, n_jobs=1, sample_weight=np.arange(1.0, 41.0))
    dpdt(X0, y0, max_depth=2, n_jobs=1, costs=2.0 * (1.0 - np.eye(2)))
    print("| n | D | objective | CPU s | x plain | states | trees | least cost |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        X, y = make_classification(n, 10, n_informative=6, n_classes=3, weights=[0.7, 0.2, 0.1], random_state=0)
        X = X.round(2)
        for depth in depths:
            base = None
            for label, kw in _weightings(y, 3).items():
                t, raw = _cpu(dpdt, X, y, max_depth=depth, cart_depth=3, n_jobs=1, **kw)
                base = t if base is None else base
                if label != "plain":
                    ratios.append(t / max(base, 1e-3))
                best = raw.solutions[0].info
                print(
                    f"| {n} | {depth} | {label} | {t:.2f} | {t / base:.1f} | {raw.stats['states']} | "
                    f"{len(raw.solutions)} | {best.get('cost', best['train_errors']):.6g} |",
                    flush=True,
                )
    # the exhaustive generator (every threshold: small data only) on the first 200 rows of the first table, depth 2
    X, y = make_classification(max(sizes), 10, n_informative=6, n_classes=3, weights=[0.7, 0.2, 0.1], random_state=0)
    X, y = X[:200, :4].round(2), y[:200]
    base = None
    for label, kw in _weightings(y, 3).items():
        t, raw = _cpu(dpdt, X, y, max_depth=2, generator="exhaustive", n_jobs=1, **kw)
        base = t if base is None else base
        best = raw.solutions[0].info
        print(
            f"| 200 (exhaustive, 4 features) | 2 | {label} | {t:.2f} | {t / base:.1f} | {raw.stats['states']} | "
            f"{len(raw.solutions)} | {best.get('cost', best['train_errors']):.6g} |",
            flush=True,
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    ap.add_argument("--contree", nargs="*", default=["bank", "raisin", "wilt"])
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--branches", nargs="*", default=["monk2", "monk3", "balance", "tictactoe"])
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--dpdt", type=int, nargs="*", default=[1000, 5000])
    ap.add_argument("--dpdt-depths", type=int, nargs="+", default=[3, 4])
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    if args.dpdt:
        dratios: list = []
        bench_dpdt(args.dpdt, args.dpdt_depths, dratios)
        med = statistics.median(dratios)
        summary.add("dpdt: median CPU time weighted / plain (whole front)", f"{med:.1f}", "", None)
        print()
    folder = collection_dir(args.data, "quantbnb", "bench_weighted", summary=summary)
    if folder is None:
        return 0
    ratios: list = []
    if args.contree:
        bench_contree(folder, args.contree, args.depths, args.time_limit, ratios)
        if ratios:
            med = statistics.median(ratios)
            summary.add("contree: median CPU time weighted / plain (single tree)", f"{med:.1f}", "", None)
    folder = collection_dir(args.data, "branches", "bench_weighted", sub="preprocessed") if args.branches else None
    if folder is not None:
        print()
        bratios: list = []
        bench_branches(folder, args.branches, args.time_limit, bratios)
        if bratios:
            med = statistics.median(bratios)
            summary.add("branches: median CPU time weighted / plain", f"{med:.1f}", "", None)
    summary.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
