"""Missing values (issue 49): each solver on the same table with and without 10% missing cells, CPU seconds and
training accuracy.

Usage::

    python benchmarks/bench_missing.py [--depths 3 4] [--tables iris wine breast_cancer] [--fraction 0.1]
                                       [--solvers cart dpdt] [--data DIR [--quantbnb bank raisin wilt]]

Tables: scikit-learn's bundled ``iris``, ``wine`` and ``breast_cancer`` (no data needed); with ``--data DIR`` also
the Quant-BnB train splits ``<data>/quantbnb/<name>.json`` (a missing folder or set is skipped with one line).
The gaps are MCAR: every cell NaN with probability ``--fraction``, seed 0.  Each run is timed once in CPU seconds of
this process (``time.process_time``: the machine may be shared) after a warm-up on a small slice that loads or
compiles the kernels; accuracy is on the training rows (NaN rows going where the tree says).  ``cart``: one tree
(``fit_cart``); ``dpdt``: its whole front (``cart`` generator, K=3), the accuracy of its most accurate tree.  With
gaps DPDT runs the Python MDP over NaN-aware CART fits (``solvers._dpdt_weighted``), without them its numba
kernels: the time columns compare the two paths, not the cost of the gaps alone.

A solver is one function ``(X, y, depth) -> (predictions, splits)`` in ``SOLVERS``; another joins by adding its
own (``DEPTH_CAP``: the deepest it runs here, shown in the table).  The
run fails (exit 1) when DPDT's most accurate tree is less accurate than CART's at the same depth on the same
table (its guarantee).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_discretize import quantbnb  # noqa: E402
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "smoke": ["--depths", "3", "--tables", "iris"],
    "quick": ["--depths", "3"],
    "full": ["--depths", "3", "4"],
}


def _raw(tree, X):
    from treeexplorer.solvers import predict_raw

    return predict_raw(tree, X), tree.n_splits


def run_cart(X, y, depth):
    """CART's tree of depth ``depth`` (scikit-learn's rule for the missing rows)."""
    from treeexplorer.solvers.cart import fit_cart

    return _raw(fit_cart(X, y, max_depth=depth), X)


def run_dpdt(X, y, depth):
    """DPDT's most accurate tree of depth ``depth`` (its whole front is computed)."""
    from treeexplorer.solvers.dpdt import dpdt

    front = dpdt(X, y, max_depth=depth, n_jobs=1)
    return _raw(min(front.solutions, key=lambda s: (s.info["train_errors"], s.info["expected_tests"])).tree, X)


def _through_api(solver: str, X, y, depth, **kw):
    """The most accurate tree of ``tx.solve`` (discretizer included: a binary solver gets each test of a column
    with gaps twice, a gap on either side, plus "is missing")."""
    import pandas as pd

    import treeexplorer as tx

    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(y=y)
    front = tx.solve(df, target="y", solver=solver, max_depth=depth, test_size=0, **kw)
    t = front.best("train_accuracy").tree
    return t.prediction[t.apply(X)], t.n_splits


def run_murtree(X, y, depth):
    """MurTree's most accurate tree over quantile tests (4 per column)."""
    return _through_api("murtree", X, y, depth, discretizer="quantile", n_bins=4)


def run_contree(X, y, depth):
    """ConTree's optimal tree on the raw features."""
    return _through_api("contree", X, y, depth, time_limit=60)


SOLVERS = {"cart": run_cart, "dpdt": run_dpdt, "murtree": run_murtree, "contree": run_contree}
# with gaps ConTree's depth 3 takes minutes (bench_missing_contree.py has those figures), MurTree's depth 4 over
# twice the tests as long
DEPTH_CAP = {"murtree": 3, "contree": 2}


def bundled(name: str):
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


def with_gaps(X, fraction: float, seed: int = 0):
    """``X`` with every cell NaN with probability ``fraction`` (MCAR)."""
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


def measure(solver: str, X, y, depth: int) -> dict:
    """One timed run (after a warm-up on 40 rows of the same matrix, spread over it) and its training accuracy."""
    fn = SOLVERS[solver]
    depth = min(depth, DEPTH_CAP.get(solver, depth))
    warm = np.linspace(0, len(y) - 1, 40).astype(np.int64)  # 40 rows spread over the table: every class
    fn(X[warm], y[warm], depth)
    t0 = time.process_time()
    pred, splits = fn(X, y, depth)
    cpu = time.process_time() - t0
    return {"cpu_s": cpu, "accuracy": float(np.mean(pred == y)), "splits": splits}


def table(rows: list[dict]) -> str:
    """A markdown table: one line per (data, depth, solver), complete vs gappy side by side."""
    head = "| data | rows | features | depth | solver | complete s | complete acc | missing s | missing acc |"
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in rows:
        lines.append(
            f"| {r['data']} | {r['rows']} | {r['features']} | {min(r['depth'], DEPTH_CAP.get(r['solver'], 99))} | "
            f"{r['solver']} | "
            f"{r['complete']['cpu_s']:.4f} | {r['complete']['accuracy']:.4f} | "
            f"{r['missing']['cpu_s']:.4f} | {r['missing']['accuracy']:.4f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--depths", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--tables", nargs="+", default=["iris", "wine", "breast_cancer"])
    ap.add_argument("--quantbnb", nargs="+", default=["bank", "raisin", "wilt"], help="sets read with --data")
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=list(SOLVERS))
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    data = [(name, *bundled(name)) for name in args.tables]
    if args.data is not None:
        folder = collection_dir(args.data, "quantbnb", "bench_missing")
        for name in args.quantbnb if folder is not None else ():
            got = quantbnb(folder, name)
            if got is None:
                print(f"SKIP bench_missing: no {name}.json in {folder}")
                continue
            data.append((name, got[0], got[1]))
    rows, failed = [], False
    for name, X, y in data:
        Xm = with_gaps(X, args.fraction)
        for depth in args.depths:
            acc = {}
            for solver in args.solvers:
                if DEPTH_CAP.get(solver, depth) < depth and DEPTH_CAP[solver] in args.depths:
                    continue  # its capped run is the row of that depth already
                r = {"data": name, "rows": X.shape[0], "features": X.shape[1], "depth": depth, "solver": solver}
                r["complete"] = measure(solver, X, y, depth)
                r["missing"] = measure(solver, Xm, y, depth)
                rows.append(r)
                acc[solver] = r["missing"]["accuracy"]
                print(f"{name} depth {depth} {solver}: {r['complete']} / {r['missing']}", flush=True)
            if "cart" in acc and "dpdt" in acc:
                ok = acc["dpdt"] >= acc["cart"]
                failed |= not ok
                summary.add(
                    f"{name} d{depth} {args.fraction:.0%} missing: dpdt / cart train accuracy",
                    f"{acc['dpdt']:.4f} / {acc['cart']:.4f}",
                    "dpdt >= cart",
                    ok,
                )
    print(table(rows))
    summary.write()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
