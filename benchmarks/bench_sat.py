"""SAT solver on the InferDT folds (Avellaneda, AAAI 2020): minimum depth, minimum size and time per fold.

Data: ``<data>/inferdt/`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``): CSV with a header, label
last, numeric or string values; ``<name>.csv.train<i>.csv`` / ``.test<i>.csv`` are the five splits.
Binarization as in the paper: every midpoint of a numeric column is a test ``x <= t``; a string column
gives one test ``x == v`` per value (one test when it has two values).  Skips cleanly when absent.

Usage::

    python benchmarks/bench_sat.py --data DIR            # all folds, glucose4, 300 s per fold
    python benchmarks/bench_sat.py --sets iris wine --folds 0 1 --time-limit 30
    python benchmarks/bench_sat.py --compare-solvers --sets iris wine monk1 monk3 --folds 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402
from treeexplorer.solvers import Control, predict_raw  # noqa: E402
from treeexplorer.solvers.sat import SAT_SOLVERS, sat_tree  # noqa: E402

# Verwer & Zhang's table as quoted by InferDT's README (averages over the five train<i> splits, DT_size):
# depth k and nodes n (internal + leaves) of trees with no training error.
REFERENCE = {
    "iris": (3, 10.6),
    "monk1": (4.4, 17),
    "monk2": (5.8, 47.8),
    "monk3": (4.8, 23.4),
    "wine": (3, 7.8),
    "balance-scale": (8, 268),
}
SETS = ("iris", "wine", "monk1", "monk2", "monk3", "balance-scale")
# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["inferdt"],
    "smoke": ["--sets", "iris", "--folds", "0", "--time-limit", "30"],
    "quick": ["--sets", "iris", "wine", "monk1", "monk3", "--folds", "0", "--time-limit", "60"],
    "full": ["--time-limit", "300"],
}


def read(path: Path) -> tuple[pd.DataFrame, pd.Series]:
    df = pd.read_csv(path, encoding="utf-8-sig")  # monk1.csv starts with a BOM
    return df.iloc[:, :-1], df.iloc[:, -1]


def binarizer(X: pd.DataFrame):
    """Fit the paper's binarization on ``X``; returns ``transform(frame) -> uint8 matrix``."""
    tests = []
    for col in X.columns:
        values = pd.to_numeric(X[col], errors="coerce")
        if values.notna().all():
            u = np.unique(values.to_numpy(dtype=np.float64))
            tests += [(col, "le", t) for t in (u[:-1] + u[1:]) / 2]
        else:
            cats = sorted(X[col].astype(str).unique())
            tests += [(col, "eq", v) for v in (cats[1:] if len(cats) == 2 else cats)]

    def transform(frame: pd.DataFrame) -> np.ndarray:
        out = np.empty((len(frame), len(tests)), dtype=np.uint8)
        for j, (col, op, t) in enumerate(tests):
            if op == "le":
                out[:, j] = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=np.float64) <= t
            else:
                out[:, j] = frame[col].astype(str).to_numpy() == t
        return out

    return transform, len(tests)


def crosscheck(B: np.ndarray, y: np.ndarray, depth: int, splits: int, time_limit: float) -> str:
    """Independent check with STreeD (pystreed): no perfect tree one level shallower, nor at this depth
    with one split fewer.  ``ok``, ``?`` (STreeD not proven in time) or ``MISMATCH``."""
    from pystreed import STreeDClassifier

    def errors(**kw):
        m = STreeDClassifier(time_limit=time_limit, **kw)
        m.fit(B, y)
        return int(np.count_nonzero(m.predict(B) != y)), bool(m.fit_result.is_optimal)

    checks = [errors(max_depth=depth - 1), errors(max_depth=depth, max_num_nodes=splits - 1)]
    if any(e == 0 for e, _ in checks):
        return "MISMATCH"
    return "ok" if all(opt for _, opt in checks) else "?"


def run_fold(
    train: Path, test: Path | None, time_limit: float, sat_solver: str, front: bool, check: bool = False
) -> dict:
    Xtr, ytr = read(train)
    classes, y = np.unique(ytr.astype(str).to_numpy(), return_inverse=True)
    transform, n_tests = binarizer(Xtr)
    B = transform(Xtr)
    control = Control(time_limit=time_limit)
    t0 = time.perf_counter()
    with control:
        fr = sat_tree(B, y, len(classes), sat_solver=sat_solver, front=front, conflicts="majority", control=control)
    elapsed = time.perf_counter() - t0
    first = fr.solutions[0]
    row = {
        "rows": len(y),
        "tests": n_tests,
        "depth": fr.stats["min_depth"],
        "nodes": first.tree.n_nodes,
        "proven": first.optimal,
        "time": elapsed,
        "sat_time": fr.stats.get("sat_time", 0.0),
        "calls": fr.stats.get("sat_calls", 0),
        "encoded": fr.stats.get("examples_encoded", 0),
        "status": fr.status,
        "conflicts": bool(fr.stats["notices"]),
    }
    if test is not None and test.exists():
        Xte, yte = read(test)
        lookup = {c: i for i, c in enumerate(classes)}
        yt = np.array([lookup.get(v, -1) for v in yte.astype(str)])
        row["test_acc"] = float(np.mean(predict_raw(first.tree, transform(Xte)) == yt))
    row["train_acc"] = float(np.mean(predict_raw(first.tree, B) == y))
    if check and first.optimal and not fr.stats["notices"]:
        row["streed"] = crosscheck(B, y, fr.stats["min_depth"], first.tree.n_splits, time_limit)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--folds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--time-limit", type=float, default=300.0, help="seconds per fold")
    ap.add_argument("--sat-solver", default="glucose4", choices=SAT_SOLVERS)
    ap.add_argument("--compare-solvers", action="store_true", help="time every offered SAT solver")
    ap.add_argument("--solvers", nargs="+", default=list(SAT_SOLVERS), help="with --compare-solvers")
    ap.add_argument(
        "--crosscheck",
        action="store_true",
        help="confirm minimum depth and size with STreeD (pystreed), slow on deep folds",
    )
    ap.add_argument("--mouse", action="store_true", help="also the whole mouse set (README: depth 4, 15 nodes)")
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    folder = collection_dir(args.data, "inferdt", "bench_sat", summary=summary)
    if folder is None:
        return 0

    if args.compare_solvers:
        return compare(folder, args)

    rows = []
    for name in args.sets:
        for i in args.folds:
            train = folder / f"{name}.csv.train{i}.csv"
            if not train.exists():
                print(f"skip {train.name}: absent")
                continue
            test = folder / f"{name}.csv.test{i}.csv"
            r = run_fold(train, test, args.time_limit, args.sat_solver, front=False, check=args.crosscheck)
            rows.append({"set": name, "fold": i, **r})
            print(
                f"{name:14s} fold {i}: rows {r['rows']:4d} tests {r['tests']:4d}  depth {r['depth']}  "
                f"nodes {r['nodes']:4d}  proven {r['proven']!s:5s}  {r['time']:7.2f} s  "
                f"test acc {r.get('test_acc', float('nan')):.3f}  {r.get('streed', '')}",
                flush=True,
            )
    if args.mouse and (folder / "mouse.csv").exists():
        r = run_fold(folder / "mouse.csv", None, args.time_limit, args.sat_solver, front=False)
        print(
            f"mouse (whole): depth {r['depth']} nodes {r['nodes']} proven {r['proven']} {r['time']:.2f} s "
            "(README: depth 4, 15 nodes)"
        )
    if not rows:
        summary.skip(f"none of the folds found in {folder}")
        summary.write()
        return 0
    df = pd.DataFrame(rows)
    summary.add(
        f"folds proven minimal ({args.time_limit:g} s each)",
        f"{int(df['proven'].sum())} of {len(df)}",
        "all",
        bool(df["proven"].all()),
    )
    print("\nPer fold:")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print("\nAverages over the folds run, against Verwer-Zhang (as quoted in SOURCES.md):")
    summary_rows = []
    for name, g in df.groupby("set", sort=False):
        ref = REFERENCE.get(name, (float("nan"), float("nan")))
        summary_rows.append(
            {
                "set": name,
                "folds": len(g),
                "depth": g["depth"].mean(),
                "ref_depth": ref[0],
                "nodes": g["nodes"].mean(),
                "ref_nodes": ref[1],
                "all_proven": bool(g["proven"].all()),
                "time_mean": g["time"].mean(),
                "time_max": g["time"].max(),
                "test_acc": g.get("test_acc", pd.Series(dtype=float)).mean(),
            }
        )
    print(pd.DataFrame(summary_rows).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    whole = [r for r in summary_rows if r["folds"] == 5 and r["ref_depth"] == r["ref_depth"]]
    if whole:  # Verwer-Zhang's figures are averages over all five folds
        same = [abs(r["depth"] - r["ref_depth"]) < 1e-9 and abs(r["nodes"] - r["ref_nodes"]) < 1e-9 for r in whole]
        summary.add("mean depth and size = Verwer-Zhang's (5 folds)", f"{sum(same)} of {len(same)} sets", "", None)
    summary.write()
    return 0


def compare(folder: Path, args) -> int:
    table = {}
    for solver in args.solvers:
        for name in args.sets:
            for i in args.folds:
                train = folder / f"{name}.csv.train{i}.csv"
                if not train.exists():
                    continue
                r = run_fold(train, None, args.time_limit, solver, front=False)
                table[(f"{name}/{i}", solver)] = f"{r['time']:.2f}{'' if r['proven'] else '*'}"
                print(
                    f"{solver:12s} {name}/{i}: {r['time']:.2f} s  depth {r['depth']} nodes {r['nodes']} "
                    f"proven {r['proven']}",
                    flush=True,
                )
    df = pd.Series(table).unstack()
    print("\nSeconds per fold (* = time limit, not proven):")
    print(df.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
