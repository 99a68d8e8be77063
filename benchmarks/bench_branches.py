"""BRANCHES on the paper's preprocessed sets (Chaouki, Read & Bifet): objective, time and iterations per set.

Data: ``<data>/branches/preprocessed/`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``):
integers separated by spaces, label last, no header.  The one-hot (0/1) files -- ``<name>.txt``,
``<name>-f.txt`` (first category dropped) and ``monk1-l.txt`` -- run as binary tests.  The ordinal ``-o``
files (one integer code per category) run with multiway splits: every column is one-hot encoded, its tests
form a group that BRANCHES may split multiway (one child per category, one split), and the same encoding is
also solved with binary splits only, to show what multiway buys.  The whole set is the training set, with
the paper's λ per set (its ``src/experiments.py``; an ``-o`` file takes its base set's λ).  If the paper's
``results/experiments.csv`` is in that folder (or its parent's ``results/``) its objective, splits,
iterations and runtime are printed next to ours.  Skips cleanly when the data are absent.

``--cross-depth D`` adds the cross-check at a depth limit: BRANCHES, STreeD (pystreed, if installed) and
MurTree (``solvers.murtree`` with ``sparsity``) must reach the same optimum.

Usage::

    python benchmarks/bench_branches.py --data DIR               # every set, 60 s each
    python benchmarks/bench_branches.py --sets monk1 monk1-f zoo --time-limit 20
    python benchmarks/bench_branches.py --cross-depth 3 --time-limit 30
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchdata import Summary, add_arguments, collection_dir, peer  # noqa: E402
from treeexplorer.solvers import Control, predict_raw  # noqa: E402
from treeexplorer.solvers.branches import fit_branches  # noqa: E402

from treeexplorer.warm import ensure_warm  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["branches"],
    "peers": ["pystreed"],
    "smoke": ["--sets", "monk1", "--time-limit", "10", "--cross-depth", "2"],
    "quick": ["--sets", "monk1", "monk1-f", "monk3", "zoo", "balance", "monk1-o", "--time-limit", "10"],
    "full": ["--time-limit", "60"],
}

# λ of each experiment in the paper's src/experiments.py (one-hot files only).
LAMBDA = {
    "monk1": 0.01,
    "monk1-l": 0.01,
    "monk1-f": 0.001,
    "monk2": 0.001,
    "monk2-f": 0.001,
    "monk3": 0.001,
    "monk3-f": 0.001,
    "tictactoe": 0.005,
    "tictactoe-f": 0.005,
    "careval": 0.005,
    "careval-f": 0.005,
    "nursery": 0.01,
    "nursery-f": 0.01,
    "mushroom": 0.01,
    "mushroom-f": 0.01,
    "krvskp": 0.01,
    "zoo": 0.001,
    "zoo-f": 0.001,
    "lymph": 0.01,
    "lymph-f": 0.01,
    "balance": 0.005,
    "balance-f": 0.005,
}


ORDINAL = [
    "monk1-o",
    "monk2-o",
    "monk3-o",
    "tictactoe-o",
    "careval-o",
    "balance-o",
    "zoo-o",
    "lymph-o",
    "mushroom-o",
    "nursery-o",
]


def load(path: Path) -> tuple[np.ndarray, np.ndarray, int]:
    data = np.loadtxt(path, dtype=np.int64, ndmin=2)
    X, labels = data[:, :-1], data[:, -1]
    if not np.isin(X, (0, 1)).all():
        raise ValueError(f"{path.name} is not a 0/1 file")
    classes, y = np.unique(labels, return_inverse=True)
    return X.astype(np.uint8), y.astype(np.int64), len(classes)


def load_ordinal(path: Path):
    """An ``-o`` file: every column one-hot encoded; returns the 0/1 tests, their groups, labels, classes."""
    data = np.loadtxt(path, dtype=np.int64, ndmin=2)
    cols, groups = [], []
    for j in range(data.shape[1] - 1):
        values = np.unique(data[:, j])
        groups.append(list(range(len(cols), len(cols) + len(values))))
        cols.extend(data[:, j] == v for v in values)
    classes, y = np.unique(data[:, -1], return_inverse=True)
    return np.column_stack(cols).astype(np.uint8), [g for g in groups if len(g) >= 3], y.astype(np.int64), len(classes)


def paper_results(folder: Path) -> dict:
    for cand in (folder / "experiments.csv", folder.parent / "results" / "experiments.csv"):
        if cand.exists():
            import pandas as pd

            df = pd.read_csv(cand, index_col=0)
            return {name: row for name, row in df.iterrows()}
    return {}


def depth_of(tree) -> int:
    depth = np.zeros(tree.n_nodes, dtype=int)
    for k in range(tree.n_nodes):  # parents come before their children
        if tree.is_multi(k):
            for c in tree.multi_children[tree.multi_offsets[k] : tree.multi_offsets[k + 1]]:
                depth[c] = depth[k] + 1
        elif tree.feature[k] >= 0:
            depth[tree.left[k]] = depth[tree.right[k]] = depth[k] + 1
    return int(depth.max())


def run_branches(X, y, k, lam, max_depth, time_limit, memory_mb, groups=None):
    control = Control(time_limit=time_limit)
    t0 = time.perf_counter()
    with control:
        sol = fit_branches(
            X, y, lam, max_depth=max_depth, n_classes=k, control=control, memory_mb=memory_mb, groups=groups
        )
    return sol, time.perf_counter() - t0


def run_streed(pystreed, X, y, lam, depth, time_limit):
    if pystreed is None:
        return None
    model = pystreed.STreeDClassifier(
        "cost-complex-accuracy", max_depth=depth, cost_complexity=lam, time_limit=time_limit
    )
    t0 = time.perf_counter()
    model.fit(X.astype(np.int32), y)
    elapsed = time.perf_counter() - t0
    acc = float(np.mean(model.predict(X.astype(np.int32)) == y))
    return acc - lam * (model.get_n_leaves() - 1), elapsed


def run_murtree(X, y, k, lam, depth, time_limit):
    """MurTree's sparse objective (``solvers.murtree``) at the depth limit, or None when absent."""
    try:
        from treeexplorer.solvers.murtree import murtree
    except ImportError:
        return None
    control = Control(time_limit=time_limit)
    t0 = time.perf_counter()
    with control:
        (sol,) = murtree(X, y, k, max_depth=depth, sparsity=lam, control=control).solutions
    elapsed = time.perf_counter() - t0
    acc = float(np.mean(predict_raw(sol.tree, X) == y))
    return acc - lam * sol.tree.n_splits, elapsed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument(
        "--sets",
        nargs="*",
        default=list(LAMBDA) + ORDINAL,
        help="preprocessed file stems (one-hot, and -o files run with multiway splits)",
    )
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per set (the paper used 300)")
    ap.add_argument("--memory-mb", type=int, default=2000, help="memory budget of each search")
    ap.add_argument(
        "--cross-depth", type=int, default=None, help="also compare with STreeD / MurTree at this depth limit"
    )
    args = ap.parse_args(argv)
    summary = Summary(args.summary)
    folder = collection_dir(args.data, "branches", "bench_branches", "preprocessed", summary)
    if folder is None:
        return 0
    pystreed = peer("pystreed") if args.cross_depth is not None else None
    ensure_warm("branches")  # numba loads (or compiles) its kernels outside the time limits
    if args.cross_depth is not None:
        ensure_warm("murtree")
    proven, ran, same_paper, cross = 0, 0, [], []
    paper = paper_results(folder)
    if not paper:
        print("(the paper's results/experiments.csv is not in the data folder: reporting our figures only)")
    head = (
        f"{'set':<12} {'n':>6} {'p':>4} {'k':>2} {'lambda':>6} {'objective':>9} {'acc':>6} {'splits':>6} "
        f"{'depth':>5} {'iters':>8} {'expand':>8} {'branches':>9} {'time s':>7} proven"
    )
    if paper:
        head += "   paper: objective splits iters time"
    print(head)
    for name in args.sets:
        path = folder / f"{name}.txt"
        base = name[:-2] if name.endswith("-o") else name
        if not path.exists() or base not in LAMBDA:
            print(f"{name:<12} skipped (no such file, or no λ for it)")
            continue
        lam = LAMBDA[base]
        if name.endswith("-o"):
            X, groups, y, k = load_ordinal(path)
            binary, b_elapsed = run_branches(X, y, k, lam, args.cross_depth, args.time_limit, args.memory_mb)
            sol, elapsed = run_branches(X, y, k, lam, args.cross_depth, args.time_limit, args.memory_mb, groups)
            b = binary.info
            print(
                f"{name:<12} {X.shape[0]:>6} {X.shape[1]:>4} {k:>2} {lam:>6g} {b['objective']:>9.4f} "
                f"{b['accuracy']:>6.4f} {b['splits']:>6} {depth_of(binary.tree):>5} {b['iterations']:>8} "
                f"{b['expansions']:>8} {b['branches']:>9} {b_elapsed:>7.2f} "
                f"{'yes' if binary.optimal else 'no'}  (binary splits only)",
                flush=True,
            )
            name = name + "*"
        else:
            X, y, k = load(path)
            sol, elapsed = run_branches(X, y, k, lam, args.cross_depth, args.time_limit, args.memory_mb)
        i = sol.info
        line = (
            f"{name:<12} {X.shape[0]:>6} {X.shape[1]:>4} {k:>2} {lam:>6g} {i['objective']:>9.4f} "
            f"{i['accuracy']:>6.4f} {i['splits']:>6} {depth_of(sol.tree):>5} {i['iterations']:>8} "
            f"{i['expansions']:>8} {i['branches']:>9} {elapsed:>7.2f} {'yes' if sol.optimal else 'no'}"
        )
        if not sol.optimal:
            line += f" (ub {i['upper_bound']:.4f}, {'memory' if 'stopped' in i else 'time'})"
        if name.endswith("*"):
            line += f"  (multiway: {i['multiway_splits']} of the splits)"
        if name in paper:
            r = paper[name]
            line += f"   {r['Objective']:.4f} {int(r['Splits'])} {int(r['Iterations'])} {r['Runtime']:.1f}"
        print(line, flush=True)
        ran += 1
        proven += bool(sol.optimal)
        if name in paper:
            same_paper.append(abs(r["Objective"] - i["objective"]) <= 5e-5)
        if args.cross_depth is not None and not name.endswith("*"):
            for label, res in (
                ("STreeD", run_streed(pystreed, X, y, lam, args.cross_depth, args.time_limit)),
                ("MurTree", run_murtree(X, y, k, lam, args.cross_depth, args.time_limit)),
            ):
                if res is None:
                    print(f"{'':<12} {label}: not available")
                    continue
                obj, t = res
                same = "same" if abs(obj - i["objective"]) <= 1e-9 else "DIFFERENT"
                cross.append(same == "same")
                print(
                    f"{'':<12} {label} depth {args.cross_depth}: objective {obj:.4f} in {t:.2f} s -> {same}", flush=True
                )
    limit = f"depth {args.cross_depth}" if args.cross_depth is not None else "no depth limit"
    summary.add(f"sets proven optimal ({limit}, {args.time_limit:g} s each)", f"{proven} of {ran}", "", None)
    if same_paper:
        summary.add("objective = the paper's", f"{sum(same_paper)} of {len(same_paper)}", "", None)
    if cross:
        summary.add(
            f"cross-check depth {args.cross_depth}: same optimum as STreeD/MurTree",
            f"{sum(cross)} of {len(cross)}",
            "all",
            all(cross),
        )
    summary.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
