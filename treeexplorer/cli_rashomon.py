"""``treeexplorer rashomon``: the k best trees of MurTree's search space (the Rashomon set), in order."""

from __future__ import annotations

import csv
import io
from pathlib import Path

__all__ = ["add_rashomon_parser", "run_rashomon"]

CSV_COLUMNS = ("rank", "errors", "gap", "splits", "depth", "train_accuracy", "test_accuracy", "features")


def add_rashomon_parser(sub):
    """Add the ``rashomon`` subcommand to the CLI's subparsers (the data, discretizer and limit flags are
    ``solve``'s: :func:`treeexplorer.cli_common.add_run_arguments`)."""
    from treeexplorer.cli_common import add_run_arguments

    r = sub.add_parser(
        "rashomon",
        help="the k best distinct trees (Rashomon set), in order of training errors",
        description="Enumerate the distinct trees of depth <= --max-depth with at most --splits splits over the "
        "discretizer's tests, best first (training errors, then fewer splits): the k best, or all within "
        "--epsilon of the optimum (capped by -k). Prints the set and the share of trees using each column.",
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
        },
        time_limit_help="seconds; returns the first trees of the order found so far",
    )
    r.add_argument("-k", type=int, default=100, help="most trees (default 100)")
    r.add_argument("--epsilon", type=float, help="only trees within optimum + epsilon x rows errors")
    r.add_argument("--out", help="write the set as front JSON")
    r.add_argument("--csv", help="write the set as CSV: one row per tree (rank, errors, splits, features, ...)")
    r.add_argument("--show", type=int, default=20, help="trees listed (default 20; the files hold all)")
    return r


def set_csv(front) -> str:
    """The set as CSV text, header first (see :func:`treeexplorer.rashomon.set_table`)."""
    from treeexplorer.rashomon import set_table

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(set_table(front))
    return buf.getvalue()


def run_rashomon(a) -> int:
    from treeexplorer.cli_common import CompileNotice, check_out, run_options
    from treeexplorer.export import plural
    from treeexplorer.rashomon import feature_shares, rashomon, set_table

    check_out(a.out, "--out")
    check_out(a.csv, "--csv")
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
    print(
        f"{front.dataset}: {front.n_train} train rows; {more}, depth <= {front.params.get('max_depth')}, "
        f"splits <= {front.params.get('max_nodes')}, over the {front.discretizer} tests; optimum "
        f"{info['optimum']} errors; {front.runtime_s:.3f} s{status.get(front.status, '')}"
    )
    rows = set_table(front)
    print(f"{'rank':>5} {'errors':>6} {'gap':>4} {'splits':>6}  features")
    for r in rows[: max(a.show, 0)]:
        print(f"{r['rank']:>5} {r['errors']:>6} {r['gap']:>4} {r['splits']:>6}  {r['features'].replace(';', ', ')}")
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
