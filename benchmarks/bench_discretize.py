"""Benchmark: MID fit (full ranking), select(n) and MDLP on synthetic 20,000 x 20 data and Quant-BnB sets.

Run: ``python benchmarks/bench_discretize.py [--data DIR] [--repeat R] [--sets raisin,wilt,...]``.  The Quant-BnB
sets are read from ``<data>/quantbnb/`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``); without
them only the synthetic row is measured.  Times are the best of ``--repeat`` runs after one warm-up (numba
compilation excluded).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, data_root, skip_message  # noqa: E402

from treeexplorer.discretize import MIDRanking, fit_discretizer  # noqa: E402
from treeexplorer.schema import Column, Schema  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["quantbnb"],
    "smoke": ["--sets", "smoke", "--repeat", "1", "--rows", "2000"],
    "quick": ["--sets", "raisin,wilt", "--repeat", "1"],
    "full": ["--repeat", "3"],
}
DEFAULT_SETS = ("raisin", "rice", "wilt", "bidding", "magic")


def best_time(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def synthetic(n: int = 20_000, p: int = 20, seed: int = 0):
    """``n`` x ``p`` normal features, a noisy linear binary label."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = ((X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)) > 0).astype(np.int64)
    return X, y, 2


def quantbnb(folder: Path, name: str):
    path = folder / f"{name}.json"
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
    add_arguments(ap)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS), help="Quant-BnB set names, comma separated")
    ap.add_argument("--rows", type=int, default=20_000, help="rows of the synthetic table (20 features)")
    a = ap.parse_args(argv)
    summary = Summary(a.summary)
    folder = data_root(a.data) / "quantbnb"
    rows = [row("synthetic", *synthetic(a.rows), a.repeat)]
    summary.add(f"MID fit (entropy), synthetic {a.rows:,} x 20", f"{rows[0]['mid_entropy_s']:.3f} s", "", None)
    summary.add(f"MDLP fit, synthetic {a.rows:,} x 20", f"{rows[0]['mdlp_s']:.3f} s", "", None)
    if not folder.is_dir():
        print(skip_message("quantbnb", data_root(a.data), "bench_discretize (Quant-BnB rows)"))
    missing = []
    for name in filter(None, a.sets.split(",")) if folder.is_dir() else []:
        data = quantbnb(folder, name)
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
        print(f"skipped (not found under {folder}): {', '.join(missing)}")
    summary.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
