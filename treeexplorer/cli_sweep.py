"""``treeexplorer sweep``: cross-validate a grid of settings (locally, on a LocalCluster or a dask scheduler)."""

from __future__ import annotations

import argparse

from treeexplorer.cli_common import add_missing_arguments, add_objective_arguments, objective_options
from treeexplorer.front import COMPLEXITY_MEASURES
from treeexplorer.registry import COMMON_PARAMS
from treeexplorer.target import TARGET_HELP

__all__ = ["add_sweep_parser", "run_sweep"]

# Grid flags: (flag, grid key, type, help); each takes one or more values.
GRID_FLAGS = (
    ("--n-bins", "n_bins", int, "thresholds per feature (quantile/uniform) or tests in all (mid)"),
    *((f"--{name.replace('_', '-')}", name, kind, text) for name, kind, text in COMMON_PARAMS),
)


def add_sweep_parser(sub, discretizers) -> argparse.ArgumentParser:
    """Add the ``sweep`` subcommand to the CLI's subparsers."""
    from treeexplorer.registry import solver_help

    s = sub.add_parser(
        "sweep",
        help="cross-validate a grid of solvers and settings, on dask",
        description="Cross-validate every combination of the values given (solver x discretizer x bins x "
        "parameters), each (setting x fold) one task on dask.distributed, and print the best settings.",
    )
    s.add_argument("data", help="file path or bundled dataset name (see `treeexplorer datasets`)")
    s.add_argument("--target", help=TARGET_HELP)
    # no argparse choices: plug-in solvers are accepted as `solve` accepts them (expand_grid checks each name)
    s.add_argument("--solver", nargs="+", default=["cart"], metavar="SOLVER", help=solver_help())
    s.add_argument(
        "--discretizer",
        nargs="+",
        choices=("raw", *discretizers),
        metavar="NAME",
        help=f"binary tests ({', '.join(('raw', *discretizers))}; default: each solver's own)",
    )
    for flag, _, kind, text in GRID_FLAGS:
        s.add_argument(flag, nargs="+", type=kind, metavar="V", help=text)
    s.add_argument(
        "-P",
        "--param",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="other solver parameter and its values (see `treeexplorer solvers`)",
    )
    s.add_argument("--cv", type=int, default=5, help="stratified folds (default 5)")
    s.add_argument("--repeats", type=int, default=1, help="repetitions of the fold split")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="dask scheduler address tcp://host:port, or 'serial' to run here task by task "
        "(default: a local cluster, one worker process per core)",
    )
    s.add_argument("--workers", type=int, help="worker processes of the local cluster")
    s.add_argument("--time-limit", type=float, help="seconds per task; best trees so far, marked not proven")
    s.add_argument("--by", choices=COMPLEXITY_MEASURES, default="splits", help="complexity of the table's levels")
    s.add_argument("--out", help="write the table: .parquet, .csv or .json")
    s.add_argument("--top", type=int, default=10, help="settings shown in the per-setting table")
    add_missing_arguments(s)
    s.add_argument("--categorical", nargs="+", default=[], metavar="COL")
    s.add_argument("--features", nargs="+", metavar="COL", help="learn from these columns only")
    s.add_argument("--exclude", nargs="+", metavar="COL", help="leave these columns out")
    add_objective_arguments(s)
    return s


def _grid(a) -> dict:
    grid: dict = {"solver": list(dict.fromkeys(a.solver))}
    if a.discretizer:
        grid["discretizer"] = list(dict.fromkeys(a.discretizer))
    for _, key, _, _ in GRID_FLAGS:
        if getattr(a, key):
            grid[key] = list(dict.fromkeys(getattr(a, key)))
    for pair in a.param:
        if "=" not in pair:
            raise ValueError(f"-P expects NAME=V1,V2,..., got {pair!r}")
        k, v = pair.split("=", 1)
        grid[k.strip().replace("-", "_")] = [x.strip() for x in v.split(",") if x.strip()]
    return grid


def _fmt(v) -> str:
    if v is None or v != v:  # None or NaN
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


# The table's names of what cv_mean and train_mean average, by the score the sweep's objective is judged by
# (treeexplorer.metrics.SCORE_METRICS; the cost is averaged negated, larger is better: scikit-learn's neg_ names).
_SCORE_HEADS = {"accuracy": "acc", "balanced_accuracy": "bacc", "cost": "neg_cost"}


def _show(df, by: str, params: list[str], score: str = "accuracy") -> str:
    cols = ["setting", "solver", "discretizer", "n_bins", *params, by, "cv_mean", "cv_std", "train_mean", "tree_id"]
    head = _SCORE_HEADS[score]
    heads = [c.replace("cv_mean", f"cv_{head}").replace("train_mean", f"train_{head}") for c in cols]
    rows = [[_fmt(r[c]) for c in cols] for _, r in df.iterrows()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(heads)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(heads, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def run_sweep(a) -> int:
    """Run ``treeexplorer sweep`` from parsed arguments; returns the exit code."""
    from treeexplorer.metrics import SCORE_METRICS
    from treeexplorer.objective import Objective
    from treeexplorer.sweep import SERIAL, sweep

    objective = objective_options(a)
    score = Objective.build(objective.get("class_weight"), objective.get("costs")).score(objective.get("sample_weight"))
    if a.out and not a.out.lower().endswith((".parquet", ".csv", ".json")):
        raise ValueError(f"--out {a.out}: the sweep table is written as .parquet, .csv or .json")
    res = sweep(
        a.data,
        _grid(a),
        target=a.target,
        cv=a.cv,
        repeats=a.repeats,
        seed=a.seed,
        scheduler=a.scheduler,
        n_workers=a.workers,
        time_limit=a.time_limit,
        by=a.by,
        drop_missing=a.drop_missing,
        na_values=a.na_values,
        categorical=a.categorical,
        features=a.features,
        exclude=a.exclude,
        **objective,
    )
    t = res.table
    n_tasks = len(res.task_times)
    where = "here, serially" if a.scheduler == SERIAL else f"on dask ({res.dashboard or 'no dashboard'})"
    print(
        f"{len(res.settings)} settings x {a.cv * a.repeats} folds (+ refit): {n_tasks} tasks "
        f"in {res.wall_s:.1f} s {where}"
    )
    if res.status != "done":
        print(f"sweep {res.status}: the table holds the settings that finished")
    for n in res.notices:
        print(f"note: {n}")
    failed = t[t["status"] == "error"]
    for _, r in failed.iterrows():
        print(f"failed: setting {r['setting']} ({r['solver']}, {r['discretizer']}): {r['error']}")
    params = sorted({k for s in res.settings for k in s["params"]})
    judged = SCORE_METRICS[score][0] + (" per unit of weight, negated" if score == "cost" else "")
    for rule, title in (
        ("best", f"best mean held-out {judged}"),
        ("1se", "1-SE rule: the simplest tree within one standard error of the best"),
    ):
        choice = res.choice(rule)
        if not choice.empty:
            print(f"\n{title}:")
            print(_show(choice, a.by, params, score))
    best = res.best("1se")
    if not best.empty:
        print(f"\nper setting, at its own 1-SE level (top {min(a.top, len(best))} of {len(best)}):")
        print(_show(best.head(a.top), a.by, params, score))
    if a.out:
        res.save(a.out)
        print(f"\nsweep table written to {a.out}")
    return 0 if failed.empty or len(failed) < len(res.settings) else 1
