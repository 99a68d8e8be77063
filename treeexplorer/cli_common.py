"""What the CLI's commands share: the flags of a command that loads a table and runs a solver (``solve``,
``rashomon``), the keyword arguments they give, and the compile notice of a first run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = [
    "CompileNotice",
    "add_objective_arguments",
    "add_run_arguments",
    "check_out",
    "run_options",
    "objective_options",
]


def add_run_arguments(
    p: argparse.ArgumentParser,
    *,
    solver: dict,
    discretizer_help: str,
    params: dict[str, dict],
    time_limit_help: str,
) -> None:
    """The flags of a command that loads a table and runs a solver on it (``solve``, ``rashomon``): the data and
    its loading, the solver and discretizer, solver parameters of :data:`treeexplorer.registry.COMMON_PARAMS`
    (``params``: name -> argparse overrides, e.g. ``{"max_nodes": {"flags": ["--splits"], "dest": "splits"}}``),
    the limits, the held-out rows and the MID criterion.  ``solver``: the ``--solver`` flag's argparse options."""
    from treeexplorer.discretize import DISCRETIZER_NAMES
    from treeexplorer.registry import COMMON_PARAMS
    from treeexplorer.target import TARGET_HELP

    p.add_argument("data", help="file path or bundled dataset name (see `treeexplorer datasets`)")
    p.add_argument("--target", help=TARGET_HELP)
    p.add_argument("--solver", **solver)
    p.add_argument("--discretizer", choices=DISCRETIZER_NAMES, help=discretizer_help)
    p.add_argument("--n-bins", type=int, help="thresholds per feature (quantile/uniform) or tests in all (mid)")
    for name, kind, text in COMMON_PARAMS:
        if name in params:
            options = {"type": kind, "help": text, **params[name]}
            flags = options.pop("flags", [f"--{name.replace('_', '-')}"])
            p.add_argument(*flags, **options)
    p.add_argument("--time-limit", type=float, help=time_limit_help)
    p.add_argument(
        "--memory-limit", type=float, help="MB the run's large tables may take (default: half the free memory)"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--test-size", type=float, help="fraction held out (stratified); 0: none")
    g.add_argument("--test", help="separate test file with the same columns")
    p.add_argument("--seed", type=int, default=0)
    add_missing_arguments(p)
    p.add_argument(
        "--allow-many-classes", action="store_true", help="accept a target with many distinct values (looks continuous)"
    )
    p.add_argument(
        "--categorical", nargs="+", default=[], metavar="COL", help="treat these numeric-looking columns as categorical"
    )
    add_objective_arguments(p)
    p.add_argument(
        "--features",
        nargs="+",
        metavar="COL",
        help="learn from these columns only (default: all but the ID-like ones, which a note names)",
    )
    p.add_argument("--exclude", nargs="+", metavar="COL", help="leave these columns out")
    p.add_argument(
        "--criterion",
        choices=("entropy", "gini"),
        help="impurity the MID discretizer ranks thresholds by (default entropy); a solver's own split "
        "criterion is -P criterion=...",
    )


def add_missing_arguments(p: argparse.ArgumentParser) -> None:
    """``--drop-missing`` and ``--na-values``: what a gap is and whether its rows stay (every command reading a
    table; rows with gaps are kept by default, each split learning where a gap goes)."""
    p.add_argument("--drop-missing", action="store_true", help="drop rows with missing values (default: keep them)")
    p.add_argument(
        "--na-values",
        nargs="+",
        metavar="TEXT",
        help="cells that mean a missing value besides empty, NA and NaN, e.g. --na-values '?' -999",
    )


def add_objective_arguments(p: argparse.ArgumentParser) -> None:
    """``--class-weight``, ``--weight-column`` and ``--costs``: the weighted objective (``solve``, ``rashomon``,
    ``sweep``; :func:`objective_options` reads them)."""
    p.add_argument(
        "--class-weight",
        metavar="balanced|CLASS=W,...",
        help="weigh the classes: balanced (n / (k * rows of the class)) or e.g. sick=10,well=1; the solver then "
        "minimises the weighted cost",
    )
    p.add_argument(
        "--weight-column", metavar="COL", help="a numeric column holding each row's weight (then not a feature)"
    )
    p.add_argument(
        "--costs",
        metavar="TRUE:PRED=C,...",
        help="the cost of predicting PRED for a row of class TRUE (others: 0 right, 1 wrong), e.g. sick:well=10",
    )


def run_options(a) -> dict:
    """The keyword arguments of :func:`treeexplorer.solve` (and :func:`treeexplorer.rashomon`) that
    :func:`add_run_arguments`' flags give, but the solver parameters."""
    return {
        "discretizer": a.discretizer,
        "n_bins": a.n_bins,
        "test_size": a.test_size,
        "test": a.test,
        "seed": a.seed,
        "time_limit": a.time_limit,
        "memory_limit": a.memory_limit,
        "drop_missing": a.drop_missing,
        "na_values": a.na_values,
        "allow_many_classes": a.allow_many_classes,
        "categorical": a.categorical,
        "features": a.features,
        "exclude": a.exclude,
        "discretizer_params": None if a.criterion is None else {"criterion": a.criterion},
        **objective_options(a),
    }


def objective_options(a) -> dict:
    """``class_weight``, ``sample_weight`` and ``costs`` of :func:`treeexplorer.solve` from ``--class-weight``,
    ``--weight-column`` and ``--costs`` (parsed by :mod:`treeexplorer.objective`; none when not given)."""
    from treeexplorer.objective import parse_class_weight, parse_costs

    out = {}
    if getattr(a, "class_weight", None):
        out["class_weight"] = parse_class_weight(a.class_weight)
    if getattr(a, "weight_column", None):
        out["sample_weight"] = a.weight_column
    if getattr(a, "costs", None):
        out["costs"] = parse_costs(a.costs)
    return out


class CompileNotice:
    """A progress callback that says when a solver's kernels are compiled (a cold numba cache): the notice on
    ``stream`` (default stderr) at the first ``"compiling"`` report with ``cold``, the seconds so far with a
    spinner on a terminal, and ``compiled in N s`` at the first report of another phase (or :meth:`finish`).
    Every other report is ignored."""

    def __init__(self, stream=None):
        import threading

        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._lock = threading.Lock()
        self._turn = 0
        self._solver: str | None = None  # the solver whose compile was announced and not yet finished
        self._seconds = 0.0
        self._estimate: float | None = None  # the estimate the notice stated

    def __call__(self, report: dict) -> None:
        from treeexplorer.warm import compile_notice

        with self._lock:
            if report.get("phase") != "compiling":
                self._done()
                return
            if not report.get("cold"):
                return
            if self._solver is not None and report.get("solver", "") != self._solver:
                self._done()  # BRANCHES compiles CART's kernels first: one line each
            if self._solver is None:
                self._solver = report.get("solver", "")
                self._estimate = report.get("estimate_s")
                notice = compile_notice(self._solver, self._estimate)
                print(notice, file=self.stream, end="" if self.tty else "\n", flush=True)
            self._seconds = float(report.get("seconds", 0.0))
            if self.tty:
                self._turn += 1
                spin = "|/-\\"[self._turn % 4]
                kernels = (
                    f" {report['kernels']}/{report['kernels_total']} kernels" if report.get("kernels_total") else ""
                )
                self.stream.write(
                    f"\r{compile_notice(self._solver, self._estimate)} {spin}{kernels} {self._seconds:.0f} s"
                )
                self.stream.flush()

    def finish(self, seconds: float | None = None) -> None:
        """End the notice (if one is open), with ``seconds`` as the compile time when given."""
        with self._lock:
            if seconds is not None:
                self._seconds = seconds
            self._done()

    def _done(self) -> None:
        from treeexplorer.warm import compile_notice

        if self._solver is None:
            return
        end = f"\r{compile_notice(self._solver, self._estimate)}: " if self.tty else ""
        print(f"{end}compiled in {self._seconds:.0f} s (cached for later runs)", file=self.stream, flush=True)
        self._solver = None


def check_out(out, flag: str, inputs=()) -> None:
    """Refuse an output path that cannot be written, or that is one of the command's ``inputs`` (its data or
    front file: writing there would destroy it), before any work is done."""
    if out is None:
        return
    path = Path(out)
    for given in inputs:
        if given is not None and path.exists() and Path(given).is_file() and path.samefile(given):
            raise ValueError(f"{flag} {out}: is the input file {str(given)!r}; write to another file")
    if path.is_dir():
        raise ValueError(f"{flag} {out}: is a directory; give a file name")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{flag} {out}: the directory {str(parent)!r} does not exist; create it first")
