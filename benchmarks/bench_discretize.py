"""Benchmark: MID fit (full ranking), select(n) and MDLP on synthetic 20,000 x 20 data and Quant-BnB sets.

Run: ``python benchmarks/bench_discretize.py [--repeat R] [--sets raisin,wilt,...]``.  The Quant-BnB sets are read
from ``/work/shared/datasets/quantbnb`` (or ``$TREEEXPLORER_DATASETS/quantbnb``) and skipped when absent.
Times are the best of ``--repeat`` runs after one warm-up (numba compilation excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from treeexplorer.discretize import MIDRanking, fit_discretizer
from treeexplorer.schema import Column, Schema

DATA_ROOT = Path(os.environ.get("TREEEXPLORER_DATASETS", "/work/shared/datasets")) / "quantbnb"
DEFAULT_SETS = ("raisin", "rice", "wilt", "bidding", "magic")


def best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def synthetic(n: int = 20_000, p: int = 20, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)) > 0).astype(np.int64)
    return X, y, 2


def quantbnb(name: str):
    path = DATA_ROOT / f"{name}.json"
    if not path.is_file():
        return None
    d = json.loads(path.read_text())
    X = np.asarray(d["Xtrain"], dtype=np.float64)
    y = np.asarray(d["Ytrain"], dtype=np.float64).astype(np.int64)
    return X, y, int(d["C"])


def row(name: str, X, y, C: int, repeat: int) -> dict:
    schema = Schema(tuple(Column(f"x{j}", "numeric") for j in range(X.shape[1])), "y", tuple(range(C)))
    MIDRanking.fit(X[:200], y[:200], schema)  # warm-up: load the compiled kernels
    r = MIDRanking.fit(X, y, schema)
    n_sel = min(1024, r.n_available)
    return {
        "data": name,
        "rows": X.shape[0],
        "features": X.shape[1],
        "classes": C,
        "ranked": r.n_available,
        "mid_entropy_s": best_time(lambda: MIDRanking.fit(X, y, schema), repeat),
        "mid_gini_s": best_time(lambda: MIDRanking.fit(X, y, schema, "gini"), repeat),
        f"select_{n_sel}_ms": 1e3 * best_time(lambda: r.select(n_sel), repeat),
        "mdlp_s": best_time(lambda: fit_discretizer("mdlp", X, y, schema), repeat),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS), help="Quant-BnB set names, comma separated")
    a = ap.parse_args(argv)
    rows = [row("synthetic", *synthetic(), a.repeat)]
    missing = []
    for name in filter(None, a.sets.split(",")):
        data = quantbnb(name)
        if data is None:
            missing.append(name)
            continue
        rows.append(row(name, *data, a.repeat))
    keys = list(rows[0])
    sel_key = keys[7]
    header = (
        f"{'data':<10} {'rows':>6} {'feat':>4} {'C':>2} {'ranked':>7} {'MID ent s':>9} {'MID gini s':>10} "
        f"{sel_key:>16} {'MDLP s':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        sel = next(v for k, v in r.items() if k.startswith("select_"))
        print(
            f"{r['data']:<10} {r['rows']:>6} {r['features']:>4} {r['classes']:>2} {r['ranked']:>7} "
            f"{r['mid_entropy_s']:>9.3f} {r['mid_gini_s']:>10.3f} {sel:>16.2f} {r['mdlp_s']:>7.3f}"
        )
    if missing:
        print(f"skipped (not found under {DATA_ROOT}): {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
