"""ConTree with missing values (issue 49): time and training errors with and without 10% of the cells missing.

Usage::

    python benchmarks/bench_missing_contree.py [--data DIR] [--sets bank raisin] [--depths 2 3] [--rate 0.1]
                                               [--time-limit 120]

Sets: scikit-learn's breast_cancer (always) and Quant-BnB train splits ``<data>/quantbnb/<name>.json`` (``--data DIR``,
``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``; skipped with one line when absent).  Each set runs complete and
with ``--rate`` of its cells set to NaN (MCAR, ``numpy.random.default_rng(0)``), at each depth: the single optimal
tree (``front=False``, one thread), CPU and wall seconds of one run after a warm-up that compiles both paths, its
training errors, whether it was proven within ``--time-limit`` (else its proven lower bound), and scikit-learn's
CART at the same depth (it sends NaN rows to a learned side as well) as a reference.  Complete data take the plain
search; NaN takes the cost search with the missing side (``_kernels/contree_weighted.py``), unit costs.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_contree import _load  # noqa: E402
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["quantbnb"],
    "quick": ["--sets", "bank", "--depths", "2", "--time-limit", "60"],
    "full": ["--sets", "bank", "raisin", "--depths", "2", "3", "--time-limit", "300"],
}

log = logging.getLogger("bench_missing_contree")


def with_gaps(X, rate, seed=0):
    """``X`` with ``rate`` of its cells set to NaN, completely at random."""
    X = np.array(X, dtype=float)
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


def cart_errors(X, y, depth):
    from sklearn.tree import DecisionTreeClassifier

    return int(np.count_nonzero(DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y).predict(X) != y))


def run_one(X, y, depth, limit):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.contree import contree

    c0, w0 = time.process_time(), time.perf_counter()
    with Control(time_limit=limit) as control:
        raw = contree(X, y, max_depth=depth, front=False, n_threads=1, control=control)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    (sol,) = raw.solutions
    return {
        "cpu": cpu,
        "wall": wall,
        "errors": int(sol.info["errors"]),
        "proven": bool(sol.optimal),
        "lower": int(sol.info["lower_bound"]),
        "splits_evaluated": int(raw.stats.get("splits_evaluated", 0)),
        "missing_left": sol.tree.missing_left is not None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--sets", nargs="*", default=["bank"], help="Quant-BnB sets (besides breast_cancer)")
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--rate", type=float, default=0.1, help="share of cells made missing (MCAR)")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per run (then: best so far, unproven)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    summary = Summary(args.summary)
    from sklearn.datasets import load_breast_cancer

    sets = [("breast_cancer", *load_breast_cancer(return_X_y=True))]
    if args.sets:
        folder = collection_dir(args.data, "quantbnb", "bench_missing_contree", summary=summary)
        for name in args.sets if folder is not None else []:
            path = folder / f"{name}.json"
            if path.is_file():
                sets.append((name, *_load(path)))
            else:
                print(f"SKIP {name}: no {path}")
    # warm-up: both paths compiled (or loaded from the cache) before anything is timed
    Xw = np.random.default_rng(1).random((40, 3))
    yw = (Xw[:, 0] > 0.5).astype(np.int64)
    for X in (Xw, with_gaps(Xw, 0.2)):
        run_one(X, yw, 3, None)
    rows = []
    ok = True
    for name, X, y in sets:
        y = np.asarray(y, dtype=np.int64)
        for rate in (0.0, args.rate):
            Xr = with_gaps(X, rate) if rate > 0 else np.asarray(X, dtype=float)
            for depth in args.depths:
                r = run_one(Xr, y, depth, args.time_limit)
                r.update(set=name, n=X.shape[0], p=X.shape[1], rate=rate, depth=depth, cart=cart_errors(Xr, y, depth))
                # a proven tree is never worse than CART's on the same rows; NaN input gives trees with missing_left
                ok &= (not r["proven"] or r["errors"] <= r["cart"]) and r["missing_left"] == (rate > 0)
                rows.append(r)
                log.info("%s missing=%g D=%d: %.2f CPU s, %d errors", name, rate, depth, r["cpu"], r["errors"])
    head = "| set | n x p | missing | D | CPU s | wall s | errors | proven (lower bound) | CART errors | splits |"
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    for r in rows:
        proof = "yes" if r["proven"] else f"no ({r['lower']})"
        print(
            f"| {r['set']} | {r['n']} x {r['p']} | {r['rate']:.0%} | {r['depth']} | {r['cpu']:.2f} | {r['wall']:.2f} "
            f"| {r['errors']} | {proof} | {r['cart']} | {r['splits_evaluated']:,} |"
        )
    for r in rows:
        tag = f"{r['set']} D={r['depth']} missing={r['rate']:.0%}"
        summary.add(f"{tag} CPU s", round(r["cpu"], 3))
        summary.add(f"{tag} errors", r["errors"], "<= CART if proven", not r["proven"] or r["errors"] <= r["cart"])
    summary.write()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
