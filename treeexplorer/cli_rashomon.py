"""``treeexplorer rashomon``: the k best trees of MurTree's search space (the Rashomon set), in order."""

from __future__ import annotations

import csv
import io
from pathlib import Path

__all__ = ["add_rashomon_parser", "run_rashomon"]

CSV_COLUMNS = ("rank", "errors", "gap", "splits", "depth", "train_accuracy", "test_accuracy", "features")
# a set ranked by --objective branches adds its objective after the errors


def add_rashomon_parser(sub):
    """Add the ``rashomon`` subcommand to the CLI's subparsers (the data, discretizer and limit flags are
    ``solve``'s: :func:`treeexplorer.cli_common.add_run_arguments`)."""
    from treeexplorer.cli_common import add_run_arguments
    from treeexplorer.solvers.rashomon import OBJECTIVES

    r = sub.add_parser(
        "rashomon",
        help="the k best distinct trees (Rashomon set), in order of training errors",
        description="Enumerate the distinct trees of depth <= --max-depth with at most --splits splits over the "
        "discretizer's tests, best first (training errors, then fewer splits; or with --objective branches "
        "error rate + --sparsity x splits): the k best, or all within --epsilon of the optimum (capped by -k). "
        "Prints the set and the share of trees using each column.",
    )
    add_run_arguments(
        r,
        solver={"default": "murtree", "choices": ("murtree",), "help": "the DP enumerated (murtree)"},
        discretizer_help="binary tests (default: murtree's, mid)",
        params={
            "max_depth": {"default": 3, "help": "maximum depth (default 3)"},
            "max_nodes": {
                "flags": ["--splits"],
                "dest": "splits",
                "help": "most splits of a tree (default 2^depth - 1)",
            },
            "sparsity": {"help": "λ of --objective branches: the accuracy a split must gain (e.g. 0.01)"},
        },
        time_limit_help="seconds; returns the first trees of the order found so far",
    )
    r.add_argument("-k", type=int, default=100, help="most trees (default 100)")
    r.add_argument(
        "--objective",
        choices=OBJECTIVES,
        default="errors",
        help="what orders the set: training errors (default), or branches: error rate + --sparsity x splits",
    )
    r.add_argument(
        "--epsilon",
        type=float,
        help="only trees within optimum + epsilon x rows errors (--objective branches: within optimum + epsilon)",
    )
    r.add_argument("--out", help="write the set as front JSON")
    r.add_argument("--csv", help="write the set as CSV: one row per tree (rank, errors, splits, features, ...)")
    r.add_argument("--show", type=int, default=20, help="trees listed (default 20; the files hold all)")
    return r


def set_csv(front) -> str:
    """The set as CSV text, header first (see :func:`treeexplorer.rashomon.set_table`)."""
    from treeexplorer.rashomon import set_table
    from treeexplorer.textsafe import csv_cell

    rows = [{k: csv_cell(v) for k, v in row.items()} for row in set_table(front)]  # no formula cells
    columns = list(CSV_COLUMNS)
    for extra in ("cost", "objective"):  # a set ranked by a weighted cost, or by --objective branches
        if rows and extra in rows[0]:
            columns.insert(columns.index("errors") + 1, extra)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def run_rashomon(a) -> int:
    from treeexplorer.cli_common import CompileNotice, check_out, run_options
    from treeexplorer.export import plural
    from treeexplorer.rashomon import feature_shares, rashomon, set_table

    check_out(a.out, "--out", inputs=(a.data,))
    check_out(a.csv, "--csv", inputs=(a.data,))
    # a first set compiles the enumeration's kernels once the inputs are checked (outside the time limit): said
    notice = CompileNotice()
    try:
        front = rashomon(
            a.data,
            a.target,
            solver=a.solver,
            max_depth=a.max_depth,
            splits=a.splits,
            k=a.k,
            epsilon=a.epsilon,
            objective=a.objective,
            sparsity=a.sparsity,
            **run_options(a),
            progress=notice,
        )
    finally:
        notice.finish()
    info = front.stats["rashomon"]
    status = {"done": "", "time_limit": " (time limit: the first trees of the order)", "cancelled": " (cancelled)"}
    more = "all trees within the bounds" if info["complete"] else f"the {plural(len(front), 'best tree')}"
    if info.get("stopped_by") == "memory":
        more += " (memory limit: the first trees of the order; lower -k, --max-depth or the tests)"
    penalised = info.get("objective") == "branches"
    rows = set_table(front)
    weighted = bool(rows) and "cost" in rows[0]  # ranked by the weighted training cost (weights or costs)
    optimum = f"ranked by {front.objective.split(';')[0]}; optimum objective {info['optimum']:.6g}"
    if weighted:
        optimum = f"ranked by {front.objective.split(';')[0]}; optimum cost {info['optimum']:.6g}"
    depth = front.params.get("max_depth")
    splits = front.params.get("max_nodes")
    splits = (2 ** int(depth) - 1) if splits is None and depth is not None else splits  # the default: any
    print(
        f"{front.dataset}: {front.n_train} train rows; {more}, depth <= {depth}, "
        f"splits <= {splits}, over the {front.discretizer} tests; "
        f"{optimum if penalised or weighted else 'optimum ' + str(info['optimum']) + ' errors'}; "
        f"{front.runtime_s:.3f} s{status.get(front.status, '')}"
    )
    if penalised or weighted:
        value = "objective" if penalised else "cost"
        print(f"{'rank':>5} {'errors':>6} {value:>10} {'gap':>10} {'splits':>6}  features")
    else:
        print(f"{'rank':>5} {'errors':>6} {'gap':>4} {'splits':>6}  features")
    for r in rows[: max(a.show, 0)]:
        features = r["features"].replace(";", ", ")
        if penalised or weighted:
            fmt = "10.6f" if penalised else "10.6g"
            value = f"{r['objective' if penalised else 'cost']:>{fmt}} {r['gap']:>{fmt}}"
            print(f"{r['rank']:>5} {r['errors']:>6} {value} {r['splits']:>6}  {features}")
        else:
            print(f"{r['rank']:>5} {r['errors']:>6} {r['gap']:>4} {r['splits']:>6}  {features}")
    if len(rows) > a.show:
        print(f"... {len(rows) - a.show} more")
    print("columns used (share of trees / at the root):")
    for s in feature_shares(front):
        print(f"  {s['feature']}: {s['share']:.0%} / {s['root_share']:.0%}")
    if a.out:
        front.to_json(a.out)
        print(f"set written to {a.out}")
    if a.csv:
        Path(a.csv).write_text(set_csv(front), encoding="utf-8")
        print(f"CSV written to {a.csv}")
    return 0
