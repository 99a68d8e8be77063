"""GOSDT vs ours on the sparsity objective (errors/n + λ·leaves), same binary data: objective and time.

Data: the DL8.5/MurTree binarised sets (``<data>/murtree-dl/<name>.txt``, label first, 0/1 features).
Objective: GOSDT (``gosdt`` 1.0.4, ``GOSDTClassifier``) minimises misclassifications/n + ``regularization``·leaves;
ours, ``solvers.murtree`` with ``sparsity=λ``, minimises errors/n + λ·splits: the same minimiser, since a binary
tree has one leaf more than splits.  Both are reported as errors/n + λ·leaves.  GOSDT's ``depth_budget`` is our
``max_depth`` (both count the splits on a root-to-leaf path: ``depth_budget=1`` gives one split);
``allow_small_reg=True`` keeps λ below 1/n as given (GOSDT would raise it); one worker (its default).
GOSDT's ``predict`` fails on current scikit-learn, so its errors are counted by sending the rows down its
tree (the JSON model) to the leaves; the leaves' own ``loss`` figures must agree.  ``branches`` (BRANCHES with
``max_depth``) solves the same objective and is shown too.

Method: one process, same arrays for all three; each solver warmed first on 60 rows (numba loads its
kernels); every time is the median of ``--repeat`` warm runs; ``gosdt/ours`` is the ratio of those medians,
measured in the same run.  ``equal``: the three objectives agree (1e-9).

Usage::

    python benchmarks/bench_gosdt.py [--data DIR] [--depth 3] [--lam 0.005] [--sets anneal vote ...] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, collection_dir, peer  # noqa: E402

SETS = [
    "anneal",
    "australian-credit",
    "diabetes",
    "german-credit",
    "heart-cleveland",
    "hepatitis",
    "hypothyroid",
    "tic-tac-toe",
    "vote",
    "yeast",
]
# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["murtree-dl"],
    "peers": ["gosdt"],
    "smoke": ["--sets", "smoke", "--repeat", "1"],
    "quick": ["--sets", "anneal", "vote", "tic-tac-toe", "--repeat", "1"],
    "full": ["--repeat", "3"],
}


def load(path: Path):
    data = np.loadtxt(path, dtype=np.int64, ndmin=2)
    y = np.unique(data[:, 0], return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.ascontiguousarray(data[:, 1:], dtype=np.uint8), y


def gosdt_leaves(model: dict, X: np.ndarray, y: np.ndarray) -> tuple[int, int, float]:
    """(errors, leaves, sum of the leaves' losses x n) of GOSDT's JSON tree on ``X, y``.

    A node reads ``{"feature": j, "true": ..., "false": ...}`` (rows with ``X[:, j] == 1`` go to ``true``), a
    leaf ``{"prediction": class index, "loss": its errors / n}``.
    """
    errors, leaves, loss = 0, 0, 0.0
    stack = [(model, np.arange(len(y)))]
    while stack:
        node, rows = stack.pop()
        if "prediction" in node:
            leaves += 1
            errors += int(np.count_nonzero(y[rows] != node["prediction"]))
            loss += node["loss"]
            continue
        ones = X[rows, node["feature"]] == 1
        stack += [(node["true"], rows[ones]), (node["false"], rows[~ones])]
    return errors, leaves, loss * len(y)


def run_gosdt(gosdt, X, y, lam, depth, time_limit):
    clf = gosdt.GOSDTClassifier(
        regularization=lam, depth_budget=depth, allow_small_reg=True, time_limit=int(time_limit)
    )
    with contextlib.redirect_stdout(io.StringIO()):  # its warnings about λ < 1/n, which we mean
        clf.fit(X.astype(bool), y)
    converged = clf.result_.status.name == "CONVERGED"  # proven optimal
    (model,) = json.loads(clf.result_.model)[:1]
    return (*gosdt_leaves(model, X, y), converged)


def run_murtree(X, y, lam, depth):
    from treeexplorer.solvers.murtree import murtree

    (sol,) = murtree(X, y, max_depth=depth, sparsity=lam).solutions
    return sol.info["errors"], sol.tree.n_splits + 1, sol.optimal


def run_branches(X, y, lam, depth):
    from treeexplorer.solvers import predict_raw
    from treeexplorer.solvers.branches import fit_branches

    sol = fit_branches(X, y, lam, max_depth=depth)
    return int(np.count_nonzero(predict_raw(sol.tree, X) != y)), sol.tree.n_splits + 1, sol.optimal


def timed(repeat, fn, *args):
    runs = []
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        out = fn(*args)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--sets", nargs="+", default=SETS, help="murtree-dl set names")
    ap.add_argument("--depth", type=int, nargs="+", default=[3], help="max_depth = GOSDT's depth_budget")
    ap.add_argument("--lam", type=float, default=0.005, help="λ: cost of a leaf (GOSDT) = cost of a split (ours)")
    ap.add_argument("--repeat", type=int, default=3, help="warm runs per measurement (median)")
    ap.add_argument("--time-limit", type=float, default=600, help="GOSDT's time limit per run (s)")
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    folder = collection_dir(args.data, "murtree-dl", "bench_gosdt", summary=summary)
    if folder is None:
        return 0
    gosdt = peer("gosdt")
    X0 = np.random.default_rng(0).integers(0, 2, size=(60, 6)).astype(np.uint8)
    y0 = (X0[:, 0] ^ X0[:, 1]).astype(np.int64)
    run_murtree(X0, y0, args.lam, 3)
    run_branches(X0, y0, args.lam, 3)
    if gosdt is not None:
        run_gosdt(gosdt, X0, y0, args.lam, 3, args.time_limit)

    print(f"objective errors/n + {args.lam:g}·leaves; times: median of {args.repeat} warm runs")
    print(
        f"{'set':<18} {'n':>5} {'p':>4} D | {'gosdt s':>8} {'err':>5} {'leaves':>6} {'objective':>9} | "
        f"{'ours s':>8} {'err':>5} {'leaves':>6} {'objective':>9} | {'branches s':>10} | {'gosdt/ours':>10} equal"
    )
    ratios, all_equal, n_cases = [], True, 0
    for name in args.sets:
        path = folder / f"{name}.txt"
        if not path.exists():
            print(f"{name}: not in {folder}, skipped")
            continue
        X, y = load(path)
        n = len(y)
        for depth in args.depth:
            t_ours, (e_ours, l_ours, proven) = timed(args.repeat, run_murtree, X, y, args.lam, depth)
            t_br, (e_br, l_br, _) = timed(args.repeat, run_branches, X, y, args.lam, depth)
            obj = e_ours / n + args.lam * l_ours
            equal = proven and abs(e_br / n + args.lam * l_br - obj) <= 1e-9
            line = f"{name:<18} {n:>5} {X.shape[1]:>4} {depth} | "
            if gosdt is not None:
                t_g, (e_g, l_g, loss_n, converged) = timed(
                    args.repeat, run_gosdt, gosdt, X, y, args.lam, depth, args.time_limit
                )
                if abs(loss_n - e_g) > 0.5:
                    raise SystemExit(f"{name}: GOSDT's leaf losses say {loss_n:.1f} errors, its tree makes {e_g}")
                obj_g = e_g / n + args.lam * l_g
                equal = equal and converged and abs(obj_g - obj) <= 1e-9
                ratios.append(t_g / t_ours)
                line += f"{t_g:>8.3f} {e_g:>5} {l_g:>6} {obj_g:>9.5f} | "
            else:
                line += f"{'-':>8} {'-':>5} {'-':>6} {'-':>9} | "
            line += f"{t_ours:>8.4f} {e_ours:>5} {l_ours:>6} {obj:>9.5f} | {t_br:>10.4f} | "
            line += f"{ratios[-1]:>10.1f} " if gosdt is not None else f"{'-':>10} "
            print(line + ("yes" if equal else "NO"), flush=True)
            all_equal = all_equal and equal
            n_cases += 1
    if not n_cases:
        summary.skip(f"none of the sets found in {folder}")
        summary.write()
        return 0
    summary.add("cases with equal objectives", f"{n_cases if all_equal else 'not all'} of {n_cases}", "all", all_equal)
    if ratios:
        print(
            f"gosdt/ours time ratio: median {statistics.median(ratios):.1f}, min {min(ratios):.1f}, "
            f"max {max(ratios):.1f} over {len(ratios)} cases"
        )
        summary.add("time ratio gosdt/ours, smallest", f"{min(ratios):.1f}", "> 1", min(ratios) > 1)
        summary.add("time ratio gosdt/ours, median", f"{statistics.median(ratios):.1f}", "", None)
    summary.write()
    return 0 if all_equal else 1


if __name__ == "__main__":
    sys.exit(main())
