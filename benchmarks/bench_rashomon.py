"""Rashomon sets (``solvers.rashomon``) against the single MurTree optimum, side by side in one run, warm.

For each DL8.5 set and depth: ``opt s`` is MurTree's single optimal tree (``front=False``, the time a user
pays for one point), ``1000 s`` the 1,000 best trees in order (``rashomon(k=1000)``), both in CPU seconds of
the process (on a shared machine the clock mostly measures the wait for a core; ``wall`` columns beside),
``ratio`` the two divided (target: <= 5 on tic-tac-toe at depth 3), ``eps 1%`` the number of trees within
``optimum + 1 % of the rows`` errors (capped at 100,000; ``+`` when the cap or the time limit stopped it first)
and its CPU time,
``MB`` the peak of Python-tracked memory (numpy arrays included: the kernel's pools and the trees) during a
separate 1,000-tree run.  Every figure is the best of ``--repeat`` warm runs in this process (numba's machine code is
loaded first, on 60 rows); ``cold s`` is the first run of the set, the same process.  ``treefarms`` (TreeFARMS
0.2.4, optional, if installed) is a peer with its own objective (errors / n + 0.01 x leaves, all trees within
1 % of it, unordered): its time and count are shown for scale, not as the same figure.

``--objective branches`` adds a second table, same run: the 1,000 best depth-3 trees ranked by BRANCHES'
objective (``errors / n + λ x splits``, ``--sparsity``, default 0.01) against the same 1,000 ranked by errors
(best warm CPU seconds of each, the ratio), on tic-tac-toe, anneal and german-credit (``--sets`` to change),
with the check that the first tree's objective is the best of MurTree's error-vs-splits front.

``--objective cost`` adds a table of the same 1,000 best depth-3 trees ranked by the weighted cost (balanced class
weights; real row weights drawn in [0.5, 2], seed 0) against the 1,000 ranked by errors, with the check that the
first tree's cost is weighted MurTree's optimum.

``--strict`` measures the target alone, the lead's way: in one process, each side warm and in blocks of its own
(``--calls`` calls of MurTree's optimum, then as many of the 1,000 best, ``--blocks`` times), the best CPU time
of a call in each block, the ratio per pair of blocks and its worst (the target holds when the worst is <= 5).

Data: ``DIR/murtree-dl`` with ``--data DIR`` (else ``$TREEEXPLORER_DATASETS``, else ``benchmarks/data``): label
first, 0/1 features.  Missing sets are skipped with a line.

Usage::

    python benchmarks/bench_rashomon.py --data ../shared/datasets                  # quick: tic-tac-toe, depth 3
    python benchmarks/bench_rashomon.py --data ../shared/datasets --full --time-limit 20
    python benchmarks/bench_rashomon.py --data ../shared/datasets --objective branches --sparsity 0.01
    python benchmarks/bench_rashomon.py --data ../shared/datasets --objective cost --repeat 5
    python benchmarks/bench_rashomon.py --data ../shared/datasets --strict --blocks 5 --calls 100

``quick()`` and ``full()`` return the rows ``(benchmark, figure, target, pass/short)`` for a run-all script.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
QUICK = [("tic-tac-toe", 3)]
FULL_SETS = [
    "tic-tac-toe",
    "vote",
    "anneal",
    "australian-credit",
    "diabetes",
    "german-credit",
    "hypothyroid",
    "kr-vs-kp",
    "mushroom",
    "yeast",
]
TARGET_RATIO = 5.0
OBJECTIVE_SETS = ["tic-tac-toe", "anneal", "german-credit"]

sys.path.insert(0, str(HERE))
from benchdata import Summary, add_arguments, collection_dir  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "data": ["murtree-dl"],
    "peers": ["treefarms"],
    "smoke": ["--sets", "smoke", "--repeat", "1", "--no-peers"],
    "quick": ["--repeat", "1", "--no-peers"],
    "full": ["--full", "--repeat", "2", "--time-limit", "8"],
}


def load(path: Path):
    data = np.loadtxt(path, dtype=np.int64, ndmin=2)
    y = np.unique(data[:, 0], return_inverse=True)[1].reshape(-1).astype(np.int64)
    return np.ascontiguousarray(data[:, 1:], dtype=np.uint8), y


def _timed(fn, repeat):
    """Best CPU seconds of this process (the figure on a shared machine, where waiting for a core inflates the
    clock), best wall seconds, and the last result."""
    cpu, wall, out = math.inf, math.inf, None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        cpu = min(cpu, time.process_time() - c)
        wall = min(wall, time.perf_counter() - t)
    return cpu, wall, out


def _treefarms(path: Path, depth: int, limit: float):
    """TreeFARMS in a subprocess (it has no cancel): (seconds, trees) or None (not installed / too slow)."""
    code = f"""
import json, time, numpy as np, pandas as pd
from treefarms import TREEFARMS
d = np.loadtxt({str(path)!r}, dtype=np.int64, ndmin=2)
X = pd.DataFrame(d[:, 1:]); y = pd.Series(np.unique(d[:, 0], return_inverse=True)[1].reshape(-1))
cfg = {{"regularization": 0.01, "rashomon_bound_multiplier": 0.01, "depth_budget": {depth + 1}, "verbose": False}}
t = time.perf_counter(); m = TREEFARMS(cfg); m.fit(X, y)
print(json.dumps([time.perf_counter() - t, int(m.get_tree_count())]))
"""
    try:
        import treefarms  # noqa: F401
    except ImportError:
        return None
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit)
        return tuple(json.loads(out.stdout.strip().splitlines()[-1]))
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return "timeout"


def measure(path: Path, depth: int, repeat: int = 3, time_limit: float = 20.0, cap: int = 100_000, peers=True):
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.murtree import murtree
    from treeexplorer.solvers.rashomon import rashomon

    X, y = load(path)
    n = len(y)
    rashomon(X[:60], y[:60], max_depth=depth, k=10)
    murtree(X[:60], y[:60], max_depth=depth, front=False)

    def limited(**kw):
        ctl = Control(time_limit=time_limit)
        with ctl:
            return rashomon(X, y, max_depth=depth, control=ctl, **kw)

    t = time.perf_counter()
    limited(k=1000)
    cold = time.perf_counter() - t
    t_opt, w_opt, opt = _timed(lambda: murtree(X, y, max_depth=depth, front=False), repeat)
    t_k, w_k, res = _timed(lambda: limited(k=1000), repeat)
    tracemalloc.start()  # a run of its own: tracing slows the Python side down
    limited(k=1000)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    gap = int(0.01 * n)
    t_eps, _, eps = _timed(lambda: limited(k=cap, max_gap=gap), 1)
    first = res.solutions[0].info["errors"] if res.solutions else None
    row = {
        "set": path.stem,
        "n": n,
        "tests": X.shape[1],
        "depth": depth,
        "opt_errors": opt.solutions[-1].info["errors"],
        "first_errors": first,
        "same_optimum": first == opt.solutions[-1].info["errors"],
        "opt_s": t_opt,
        "opt_wall": w_opt,
        "k1000_s": t_k,
        "k1000_wall": w_k,
        "k1000_trees": len(res.solutions),
        "k1000_status": res.status,
        "ratio": t_k / t_opt,
        "cold_s": cold,
        "eps_trees": len(eps.solutions),
        "eps_complete": bool(eps.stats["complete"]),
        "eps_s": t_eps,
        "mb": peak,
        "pool_mb": res.stats["memory_bytes"] / 2**20,
        "treefarms": _treefarms(path, depth, time_limit) if peers else None,
    }
    return row


def measure_objective(path: Path, depth: int, lam: float, repeat: int = 3, time_limit: float = 20.0):
    """The 1,000 best trees ranked by errors and by ``errors / n + lam * splits``, warm, same process."""
    from fractions import Fraction

    from treeexplorer.solvers import Control
    from treeexplorer.solvers.murtree import murtree
    from treeexplorer.solvers.rashomon import rashomon

    X, y = load(path)
    n = len(y)
    kw = {"objective": "branches", "sparsity": lam}
    rashomon(X[:60], y[:60], max_depth=depth, k=10, **kw)

    def limited(**extra):
        ctl = Control(time_limit=time_limit)
        with ctl:
            return rashomon(X, y, max_depth=depth, k=1000, control=ctl, **extra)

    t_err, w_err, err = _timed(limited, repeat)
    t_obj, w_obj, obj = _timed(lambda: limited(**kw), repeat)
    lam_f = Fraction(repr(lam))
    front_best = min(
        Fraction(s.info["errors"], n) + lam_f * s.info["splits"] for s in murtree(X, y, max_depth=depth).solutions
    )
    first = obj.solutions[0].info if obj.solutions else None
    return {
        "set": path.stem,
        "n": n,
        "tests": X.shape[1],
        "depth": depth,
        "lambda": lam,
        "errors_s": t_err,
        "errors_trees": len(err.solutions),
        "branches_s": t_obj,
        "branches_wall": w_obj,
        "errors_wall": w_err,
        "branches_trees": len(obj.solutions),
        "ratio": t_obj / t_err,
        "first_objective": first["objective"] if first else None,
        "first_splits": first["splits"] if first else None,
        "same_optimum": first is not None and Fraction(first["errors"], n) + lam_f * first["splits"] == front_best,
        "last_objective": obj.solutions[-1].info["objective"] if obj.solutions else None,
    }


def measure_strict(path: Path, depth: int = 3, blocks: int = 5, calls: int = 100, k: int = 1000):
    """Blocks of ``calls`` warm calls of each side in turn (MurTree's optimum, then the ``k`` best), the best CPU
    seconds of a call in each block: a list of ``(opt, k best)`` pairs, one per round."""
    from treeexplorer.solvers.murtree import murtree
    from treeexplorer.solvers.rashomon import rashomon

    X, y = load(path)

    def opt():
        return murtree(X, y, max_depth=depth, front=False)

    def kbest():
        return rashomon(X, y, max_depth=depth, k=k)

    first = kbest()
    if len(first.solutions) < k or first.solutions[0].info["errors"] != opt().solutions[-1].info["errors"]:
        raise SystemExit(f"{path.stem}: the {k} best do not start at MurTree's optimum")

    def block(fn):
        best = math.inf
        for _ in range(calls):
            c = time.process_time()
            fn()
            best = min(best, time.process_time() - c)
        return best

    return [(block(opt), block(kbest)) for _ in range(blocks)]


def strict_table(name, depth, pairs, k=1000) -> str:
    lines = [
        f"| {name} D{depth} block | optimum ms | {k:,} best ms | ratio |",
        "|---|---|---|---|",
    ]
    for i, (o, r) in enumerate(pairs, 1):
        lines.append(f"| {i} | {o * 1e3:.2f} | {r * 1e3:.2f} | {r / o:.2f} |")
    worst = max(r / o for o, r in pairs)
    lines.append(
        f"| worst | {min(o for o, _ in pairs) * 1e3:.2f} | {max(r for _, r in pairs) * 1e3:.2f} | {worst:.2f} |"
    )
    return "\n".join(lines)


def measure_cost(path: Path, depth: int, repeat: int = 3, time_limit: float = 20.0):
    """The 1,000 best trees ranked by errors and by the weighted cost (balanced class weights, real row weights),
    warm, same process."""
    from treeexplorer.solvers import Control
    from treeexplorer.solvers.murtree import murtree
    from treeexplorer.solvers.rashomon import rashomon

    X, y = load(path)
    n, k = len(y), int(y.max()) + 1
    weights = {
        "balanced": (n / (k * np.bincount(y, minlength=k)))[y],
        "real rows": np.random.default_rng(0).uniform(0.5, 2.0, n),
    }
    for w in weights.values():  # compile / load both paths first
        rashomon(X[:60], y[:60], max_depth=depth, k=10, sample_weight=w[:60])

    def limited(**extra):
        ctl = Control(time_limit=time_limit)
        with ctl:
            return rashomon(X, y, max_depth=depth, k=1000, control=ctl, **extra)

    t_err, _, err = _timed(limited, repeat)
    rows = []
    for name, w in weights.items():
        t_w, w_w, res = _timed(lambda w=w: limited(sample_weight=w), repeat)
        first = res.solutions[0].info["cost"] if res.solutions else None
        opt = None
        if first is not None:  # weighted MurTree's optimum, within the same time limit
            with Control(time_limit=time_limit) as ctl:
                best = murtree(X, y, max_depth=depth, front=False, sample_weight=w, control=ctl).solutions[-1]
            opt = best.info["cost"] if best.optimal else None
        rows.append(
            {
                "set": path.stem,
                "n": n,
                "tests": X.shape[1],
                "depth": depth,
                "weights": name,
                "errors_s": t_err,
                "cost_s": t_w,
                "cost_wall": w_w,
                "ratio": t_w / t_err,
                "trees": len(res.solutions),
                "errors_trees": len(err.solutions),
                "murtree": opt,  # None: no tree, or MurTree not proven within the time limit
                "same_optimum": opt is not None and abs(first - opt) <= 1e-9 * max(1.0, opt),
                "first_cost": first,
                "last_cost": res.solutions[-1].info["cost"] if res.solutions else None,
            }
        )
    return rows


def _md(head: str, lines) -> str:
    """A Markdown table: ``head``, its separator row, then ``lines``."""
    return "\n".join([head, "|" + "---|" * (head.count("|") - 1), *lines])


def _cost_line(r) -> str:
    short = "" if r["trees"] == 1000 and r["errors_trees"] == 1000 else f" (stopped: {r['trees']} trees)"
    first, last = (f"{v:.6g}" if v is not None else "-" for v in (r["first_cost"], r["last_cost"]))
    same = "-" if r["murtree"] is None else "yes" if r["same_optimum"] else "NO"
    return (
        f"| {r['set']} | {r['n']} | {r['tests']} | {r['depth']} | {r['weights']} | {r['errors_s']:.4f} | "
        f"{r['cost_s']:.4f}{short} | {r['ratio']:.2f} | {r['cost_wall']:.4f} | {first} | {same} | {last} |"
    )


def cost_table(rows) -> str:
    head = (
        "| set | n | tests | D | weights | errors: 1000 s | cost: 1000 s | ratio | cost wall | first cost "
        "| = weighted MurTree | 1000th cost |"
    )
    return _md(head, [_cost_line(r) for r in rows])


def _each_set(a, measure, table_of) -> None:
    """``measure(path, depth)`` (a list of rows) on each set of ``--sets`` (default OBJECTIVE_SETS) and depth of
    ``--depth`` (default 3), each row printed as a line of ``table_of``'s table as it comes."""
    root = collection_dir(a.data, "murtree-dl", "bench_rashomon")
    if root is None:
        return
    print(table_of([]))
    for name in a.sets or OBJECTIVE_SETS:
        path = root / f"{name}.txt"
        if not path.is_file():
            print(f"skip {name}: {path} not found (pass --data DIR holding murtree-dl/)")
            continue
        for depth in a.depth or [3]:
            for row in measure(path, depth):
                print(table_of([row]).splitlines()[-1], flush=True)


def objective_table(rows) -> str:
    head = (
        "| set | n | tests | D | λ | errors: 1000 s | branches: 1000 s | ratio | errors wall | branches wall "
        "| first objective (splits) | = best of MurTree's front | 1000th objective |"
    )
    lines = []
    for r in rows:
        short = "" if r["branches_trees"] == 1000 and r["errors_trees"] == 1000 else " (stopped)"
        lines.append(
            f"| {r['set']} | {r['n']} | {r['tests']} | {r['depth']} | {r['lambda']:g} | {r['errors_s']:.4f} | "
            f"{r['branches_s']:.4f}{short} | {r['ratio']:.2f} | {r['errors_wall']:.4f} | {r['branches_wall']:.4f} | "
            f"{r['first_objective']:.5f} ({r['first_splits']}) | {'yes' if r['same_optimum'] else 'NO'} | "
            f"{r['last_objective']:.5f} |"
        )
    return _md(head, lines)


def table(rows) -> str:
    head = (
        "| set | n | tests | D | optimum | opt s | 1000 s | ratio | opt wall | 1000 wall | eps 1% trees | eps s | MB "
        "| cold s | treefarms s / trees |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        k = "" if r["k1000_trees"] == 1000 else f" ({r['k1000_trees']} trees, {r['k1000_status']})"
        tf = r["treefarms"]
        ratio = f"{r['ratio']:.1f}" if r["k1000_trees"] == 1000 else "-"  # a stopped run is no ratio
        tf = "not installed" if tf is None else tf if isinstance(tf, str) else f"{tf[0]:.3f} / {tf[1]:,}"
        lines.append(
            f"| {r['set']} | {r['n']} | {r['tests']} | {r['depth']} | {r['opt_errors']} | {r['opt_s']:.4f} | "
            f"{r['k1000_s']:.4f}{k} | {ratio} | {r['opt_wall']:.4f} | {r['k1000_wall']:.4f} | "
            f"{r['eps_trees']:,}{'' if r['eps_complete'] else '+'} | "
            f"{r['eps_s']:.3f} | {r['mb']:.1f} | {r['cold_s']:.3f} | {tf} |"
        )
    return "\n".join(lines)


def _rows(result) -> list[tuple]:
    out = []
    for r in result:
        name = f"rashomon {r['set']} D{r['depth']}"
        ok = r["same_optimum"] and r["k1000_trees"] == 1000
        if (r["set"], r["depth"]) == ("tic-tac-toe", 3):
            ok = ok and r["ratio"] <= TARGET_RATIO
            target = f"1,000 best trees <= {TARGET_RATIO:g}x the single optimum"
        else:
            target = "1,000 best trees, first = MurTree's optimum"
        figure = (
            f"{r['ratio']:.1f}x ({r['k1000_s']:.3f} s vs {r['opt_s']:.4f} s CPU), eps 1%: {r['eps_trees']:,} trees"
            if r["k1000_trees"] == 1000
            else f"{r['k1000_trees']} of 1,000 trees before the time limit ({r['k1000_s']:.3f} s CPU)"
        )
        out.append((name, figure, target, "pass" if ok else "short"))
    return out


def run(pairs, data=None, repeat=3, time_limit=20.0, peers=True, quiet=False, summary=None):
    root = collection_dir(data, "murtree-dl", "bench_rashomon", summary=summary)
    if root is None:
        return []
    result = []
    for name, depth in pairs:
        path = root / f"{name}.txt"
        if not path.is_file():
            print(f"skip {name}: {path} not found (pass --data DIR holding murtree-dl/)")
            continue
        result.append(measure(path, depth, repeat, time_limit, peers=peers))
        if not quiet:
            print(table(result[-1:]).splitlines()[-1], flush=True)
    return result


def quick(data=None):
    """Tic-tac-toe at depth 3: the issue's target.  Rows ``(benchmark, figure, target, pass/short)``."""
    return _rows(run(QUICK, data, peers=False, quiet=True))


def full(data=None, time_limit=20.0):
    """Every DL set at depths 3 and 4 (time-limited).  Rows ``(benchmark, figure, target, pass/short)``."""
    pairs = [(s, d) for d in (3, 4) for s in FULL_SETS]
    return _rows(run(pairs, data, time_limit=time_limit, quiet=True))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(ap)
    ap.add_argument("--full", action="store_true", help="every set at depths 3 and 4")
    ap.add_argument("--sets", nargs="+", help="these sets")
    ap.add_argument("--depth", nargs="+", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per rashomon run (and TreeFARMS)")
    ap.add_argument("--no-peers", action="store_true", help="leave TreeFARMS out")
    ap.add_argument(
        "--objective",
        choices=("errors", "branches", "cost"),
        default="errors",
        help="branches: the 1,000 best at depth 3 ranked by errors / n + sparsity x splits against errors; cost: "
        "ranked by the weighted cost (balanced class weights, real row weights) against errors",
    )
    ap.add_argument("--sparsity", type=float, default=0.01, help="λ of --objective branches (default 0.01)")
    ap.add_argument(
        "--strict", action="store_true", help="the target alone: blocks of warm calls of each side, best CPU time"
    )
    ap.add_argument("--blocks", type=int, default=5, help="--strict: rounds of blocks (default 5)")
    ap.add_argument("--calls", type=int, default=100, help="--strict: calls per block (default 100)")
    a = ap.parse_args(argv)
    if a.strict:
        root = collection_dir(a.data, "murtree-dl", "bench_rashomon")
        if root is None:
            return
        for name in a.sets or ["tic-tac-toe"]:
            path = root / f"{name}.txt"
            if not path.is_file():
                print(f"skip {name}: {path} not found (pass --data DIR holding murtree-dl/)")
                continue
            for depth in a.depth or [3]:
                pairs = measure_strict(path, depth, a.blocks, a.calls)
                print(strict_table(name, depth, pairs))
                worst = max(r / o for o, r in pairs)
                verdict = "pass" if worst <= TARGET_RATIO else "short"
                print(f"worst ratio {worst:.2f} (target <= {TARGET_RATIO:g}): {verdict}", flush=True)
        return
    if a.objective == "cost":
        _each_set(a, lambda path, depth: measure_cost(path, depth, a.repeat, a.time_limit), cost_table)
        return
    if a.objective == "branches":

        def measure(path, depth):
            return [measure_objective(path, depth, a.sparsity, a.repeat, a.time_limit)]

        _each_set(a, measure, objective_table)
        return
    sets = a.sets or (FULL_SETS if a.full else ["tic-tac-toe"])
    depths = a.depth or ([3, 4] if a.full else [3])
    summary = Summary(a.summary)
    if collection_dir(a.data, "murtree-dl", "bench_rashomon", summary=summary) is None:
        return
    print(table([]).splitlines()[0])
    print(table([]).splitlines()[1])
    result = run([(s, d) for d in depths for s in sets], a.data, a.repeat, a.time_limit, not a.no_peers, False, summary)
    if not result:
        return
    print()
    print(table(result))
    for name, figure, target, verdict in _rows(result):
        print(" | ".join((name, figure, target, verdict)))
        summary.add(name, figure, target, verdict == "pass")
    summary.write()


if __name__ == "__main__":
    main()
