"""Command line: ``treeexplorer solve|export|discretize|datasets|solvers|app|warm`` (also ``python -m treeexplorer``).

The option names of ``solve`` and ``export`` are a contract scripts depend on; keep them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from treeexplorer.cli_common import CompileNotice, add_missing_arguments, add_run_arguments, check_out, run_options

__all__ = ["main", "build_parser", "CompileNotice"]

EXIT_BAD_INPUT = 2
EXIT_NOT_IMPLEMENTED = 3
EXIT_BROKEN_PIPE = 141  # what a shell reports for a command whose reader went away (128 + SIGPIPE)


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors name what was mistyped and suggest the nearest spelling: an unknown
    option before the command (not "the following arguments are required: command"), a misspelt option
    (``--max-dpeth``: did you mean ``--max-depth``?) or command (``solv``: did you mean ``solve``?)."""

    argv: list[str] | None = None  # the arguments parsed (set by main; sys.argv otherwise)

    def error(self, message: str):
        import difflib
        import re

        argv = self.argv if self.argv is not None else sys.argv[1:]
        commands = self._commands()
        if "arguments are required: command" in message:
            unknown = [a for a in argv if a.startswith("-") and a.split("=")[0] not in self._option_string_actions]
            if unknown:
                message = (
                    f"unrecognized arguments: {' '.join(unknown)}; give a command first: "
                    f"treeexplorer {{{','.join(commands)}}} [options] (treeexplorer COMMAND --help lists them)"
                )
        elif message.startswith("unrecognized arguments:"):
            command = next((a for a in argv if a in commands), None)
            options = list(commands[command]._option_string_actions) if command else list(self._option_string_actions)
            hints = []
            for token in message.split(":", 1)[1].split():
                if token.startswith("--"):
                    close = difflib.get_close_matches(token.split("=")[0], options, n=1, cutoff=0.6)
                    hints += [f"{token}: did you mean {close[0]}?"] if close else []
            message += f" ({'; '.join(hints)})" if hints else ""
        elif (found := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)) is not None:
            choices = re.findall(r"'([^']*)'", found.group(2))
            close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
            message += f"; did you mean '{close[0]}'?" if close else ""
        super().error(message)

    def _commands(self) -> dict:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                return dict(action.choices)
        return {}


def build_parser() -> argparse.ArgumentParser:
    from treeexplorer import __version__
    from treeexplorer.discretize import DISCRETIZER_NAMES
    from treeexplorer.export import FRONT_FORMATS, TREE_FORMATS
    from treeexplorer.registry import COMMON_PARAM_NAMES, solver_help
    from treeexplorer.target import TARGET_HELP
    from treeexplorer.warm import WARM_NAMES

    p = _Parser(prog="treeexplorer", description="Find and explore optimal decision trees.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser(
        "solve",
        help="solve a dataset and print the front of trees",
        description="Solve DATA (a CSV/TSV/Parquet file or a bundled dataset name) and print the "
        "front of trees: complexity vs accuracy.",
    )
    add_run_arguments(
        s,
        solver={"default": "cart", "help": solver_help()},
        discretizer_help="binary tests for the solver (binary solvers have a default; cart/dpdt use raw columns)",
        params={name: {} for name in COMMON_PARAM_NAMES},
        time_limit_help="seconds; returns the best trees found, marked not proven",
    )
    s.add_argument("--no-front", action="store_true", help="only the single optimal tree")
    s.add_argument("--out", help="write the front as JSON")
    s.add_argument("--mid-budget", type=float, help="with --discretizer mid: anytime loop budget in seconds")
    s.add_argument(
        "-P",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="other solver parameter (see `treeexplorer solvers`)",
    )
    s.add_argument("--rules", action="store_true", help="also print the rules of every tree")

    e = sub.add_parser(
        "export",
        help="export one tree of a saved front, or the whole front",
        description="Export tree --tree ID of FRONT.json (rules, json, png, svg), or the whole front: "
        "--format csv (its table, header first) or front_json.",
    )
    e.add_argument("front", help="FRONT.json written by `solve --out`")
    e.add_argument("--tree", type=int, help="tree id (first column of the front table); tree formats only")
    e.add_argument("--format", required=True, choices=(*TREE_FORMATS, "csv", *FRONT_FORMATS))
    e.add_argument("-o", "--output", help="output file; '-' or none writes to standard output (png: only with '-o -')")

    d = sub.add_parser("discretize", help="list the binary tests a discretizer makes")
    d.add_argument("data")
    d.add_argument("--target")
    d.add_argument("--method", required=True, choices=DISCRETIZER_NAMES)
    d.add_argument("--n-bins", type=int)
    d.add_argument("--out", help="write the tests as JSON")
    add_missing_arguments(d)
    d.add_argument("--categorical", nargs="+", default=[], metavar="COL")
    d.add_argument("--features", nargs="+", metavar="COL", help="these columns only")
    d.add_argument("--exclude", nargs="+", metavar="COL", help="leave these columns out")
    d.add_argument("--criterion", choices=("entropy", "gini"), default="entropy")

    w = sub.add_parser(
        "warm",
        help="compile the solvers' kernels ahead of time (for images and shared servers)",
        description="Compile (or load from numba's cache) the kernels of the given solvers, default all built-in "
        "ones and the Rashomon sets' (`rashomon`, the app's Alternatives), so that a first solve, a first app page "
        "or a first set does not wait for them.",
    )
    w.add_argument("--solver", nargs="+", metavar="S", help=f"solvers to warm (default: {' '.join(WARM_NAMES)})")

    sub.add_parser("datasets", help="list the bundled datasets")
    sub.add_parser("solvers", help="list the solvers and their parameters")
    from treeexplorer.cli_sweep import add_sweep_parser  # `sweep` lives in its own module

    add_sweep_parser(sub, DISCRETIZER_NAMES)
    from treeexplorer.cli_rashomon import add_rashomon_parser

    add_rashomon_parser(sub)

    a = sub.add_parser(
        "app",
        help="serve the explorer web app",
        description="Serve the explorer (the app of `panel serve apps/explorer.py`) and print its address; "
        "Ctrl-C stops it.",
    )
    a.add_argument(
        "data",
        nargs="?",
        default="iris",
        help="bundled dataset name, file, or saved session (.txsession) to open (default: iris)",
    )
    a.add_argument("--target", help=TARGET_HELP)
    a.add_argument("--solver", help="solver selected at start (default: cart)")
    a.add_argument("--port", type=int, default=5006, help="port (default 5006; 0 picks a free one)")
    a.add_argument("--address", default="localhost", help="address to listen on (default localhost)")
    a.add_argument(
        "--allow-websocket-origin",
        nargs="+",
        metavar="HOST[:PORT]",
        help="host names users open the app under, with a non-local --address (default: this machine's names)",
    )
    a.add_argument(
        "--show", action=argparse.BooleanOptionalAction, default=False, help="open a browser tab (default: no)"
    )
    a.add_argument("--num-threads", type=int, help="Panel's thread pool for concurrent sessions (default: none)")
    a.add_argument(
        "--max-jobs", type=int, help="solves running at once server-wide; more wait in a queue (default: cores)"
    )
    a.add_argument("--max-upload-mb", type=float, help="largest upload accepted, in MB (default 20)")
    a.add_argument(
        "--drop-missing", action="store_true", help="start with rows with missing values dropped (default: kept)"
    )
    return p


def _parse_params(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"-P expects NAME=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        k = k.strip().replace("-", "_")
        if k in out:
            raise ValueError(f"-P {k} given twice")
        out[k] = v.strip()
    return out


def _typed_params(solver: str, given: dict) -> dict:
    """``-P`` values parsed by the solver's own parameter kinds (``-P front=no``), checked as in the API."""
    import inspect

    from treeexplorer.api import solve
    from treeexplorer.registry import get_solver

    own = set(inspect.signature(solve).parameters) - {"params"}
    spec = get_solver(solver)
    names = {p.name for p in spec.params}
    for k in given:
        if k in own and k in names:  # e.g. CART's criterion, shadowed by MID's
            raise ValueError(
                f"-P {k}: the name is taken by solve's own --{k.replace('_', '-')}, so the {solver} parameter {k} "
                f"cannot be set here; it keeps its default ({spec.param(k).default})"
            )
        if k in own:  # every solve() keyword has the flag of the same name, but these three
            how = {"data": "give DATA as the first argument", "progress": "", "control": ""}.get(
                k, f"use --{k.replace('_', '-')}"
            )
            raise ValueError(
                f"-P {k}: {k} is an option of solve, not a solver parameter; "
                f"{how or 'it is not available from the command line'}"
            )
        if not k.isidentifier():
            raise ValueError(f"-P expects NAME=VALUE with a parameter name, got {k!r}")
    return {k: spec.param(k).validate(v, text=True) if k in names else v for k, v in given.items()}


def _fmt(v, digits=4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def front_table(front) -> str:
    """The readable table ``solve`` prints."""
    cols = ["id", "splits", "leaves", "depth", "avg_tests", "train_acc", "test_acc", "train_err", "optimal"]
    weighted = bool(front.weights)  # a weighted run also shows what it minimised and the balanced accuracies
    if weighted:
        cols[-1:-1] = ["train_cost", "test_cost", "train_bacc", "test_bacc"]
    rows = []
    for t in front.trees:
        m = t.metrics
        row = [
            str(t.id),
            str(m["splits"]),
            str(m["leaves"]),
            str(m["depth"]),
            _fmt(m["avg_tests"], 3),
            _fmt(m["train_accuracy"]),
            _fmt(m["test_accuracy"]),
            str(m["train_errors"]),
            "yes" if t.optimal else "no",
        ]
        if weighted:
            row[-1:-1] = [
                _fmt(m.get("train_cost"), 2),
                _fmt(m.get("test_cost"), 2),
                _fmt(m.get("train_balanced_accuracy")),
                _fmt(m.get("test_balanced_accuracy")),
            ]
        rows.append(row)
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def warm_with_notice(solver: str, stream=None) -> float | None:
    """Load ``solver``'s kernels; when they must be compiled first, say so on ``stream`` (default stderr)
    with the time so far (a spinner on a terminal).  Returns the seconds spent, None when nothing was to do."""
    from treeexplorer.solvers import Control
    from treeexplorer.warm import WARM_NAMES, ensure_warm, is_warm

    if solver not in WARM_NAMES or is_warm(solver):
        return None
    notice = CompileNotice(stream)
    seconds = ensure_warm(solver, Control(progress=notice))
    notice.finish(seconds)
    return seconds


def compile_with_notice(names: list[str], stream=None) -> None:
    """Compile the kernels of ``names`` missing from numba's cache, in parallel worker processes, saying so on
    ``stream`` (default stdout): one line before, one per compile job as it ends."""
    from treeexplorer.warm import batch_estimate_seconds, cold_jobs, compile_in_workers

    stream = stream or sys.stdout
    jobs = cold_jobs(names)
    if not jobs:
        return
    workers, est = batch_estimate_seconds(jobs)
    print(
        f"compiling the kernels of {', '.join(jobs)} in {workers} worker processes "
        f"(first use only, about {est} s on this machine)",
        file=stream,
        flush=True,
    )

    def done(job: str, seconds: float, kernels: int, cpu_s: float | None) -> None:
        cpu = "" if cpu_s is None else f", {cpu_s:.0f} CPU s"
        print(f"{job}: compiled {kernels} kernels in {seconds:.0f} s{cpu}", file=stream, flush=True)

    compile_in_workers(names, on_done=done)


def _cmd_warm(a) -> int:
    from treeexplorer._kernel_cache import kernel_cache_dir
    from treeexplorer.registry import get_solver
    from treeexplorer.warm import WARM_NAMES, is_warm

    names = a.solver or list(WARM_NAMES)
    for name in names:
        if name not in WARM_NAMES:
            get_solver(name)  # an unknown name: one-line error before any work
    where = kernel_cache_dir()
    print(f"kernel cache: {where or 'numba default (NUMBA_CACHE_DIR or beside the sources)'}", flush=True)
    compile_with_notice([n for n in names if n in WARM_NAMES and not is_warm(n)])
    for name in names:
        if name not in WARM_NAMES or is_warm(name):
            print(f"{name}: nothing to compile")
            continue
        seconds = warm_with_notice(name)
        print(f"{name}: ready ({seconds:.1f} s)", flush=True)
    return 0


def _cmd_solve(a) -> int:
    from treeexplorer.api import solve
    from treeexplorer.claims import weights_lines
    from treeexplorer.export import optimality_line, plural, rules_lines
    from treeexplorer.registry import COMMON_PARAM_NAMES

    params = {name: getattr(a, name) for name in COMMON_PARAM_NAMES}
    if a.no_front:
        params["front"] = False
    params.update(_typed_params(a.solver, _parse_params(a.param)))
    check_out(a.out, "--out", inputs=(a.data, getattr(a, "test", None)))
    # a first run compiles for up to a minute once the inputs are checked: solve's warm-up reports it, said here
    notice = CompileNotice()
    try:
        front = solve(
            a.data,
            a.target,
            solver=a.solver,
            **run_options(a),
            mid_budget=a.mid_budget,
            **{k: v for k, v in params.items() if v is not None},
            progress=notice,
        )
    finally:
        notice.finish()
    status = {"done": "", "time_limit": " (time limit reached: not proven)", "cancelled": " (cancelled)"}
    print(
        f"{front.dataset}: {front.n_train} train / {front.n_test} test rows; solver {front.solver}, "
        f"discretizer {front.discretizer}; {plural(len(front), 'tree')} in {front.runtime_s:.3f} s"
        f"{status.get(front.status, '')}"
    )
    if front.objective:
        print(f"objective: {front.objective}")
    for line in weights_lines(front):
        print(line)
    for n in front.notices:
        print(f"note: {n}")
    print(optimality_line(front))  # what the table's "optimal" column ranges over
    print(front_table(front))
    if a.rules:
        for t in front.trees:
            print(f"\ntree {t.id}:")
            print("\n".join(rules_lines(t.tree)))
    if a.out:
        front.to_json(a.out)
        print(f"front written to {a.out}")
    return 0


def _cmd_export(a) -> int:
    from treeexplorer.export import FRONT_FORMATS, TEXT_FORMATS, canonical_format, export_bytes
    from treeexplorer.front import Front

    whole = canonical_format(a.format) in FRONT_FORMATS
    if whole and a.tree is not None:
        raise ValueError(f"--format {a.format} exports the whole front: leave out --tree")
    if not whole and a.tree is None:
        raise ValueError(f"--format {a.format} exports one tree: give --tree ID (the first column of the front table)")
    if not Path(a.front).is_file():
        raise ValueError(f"no such front file: {a.front}")
    to_stdout = a.output in (None, "-")
    if a.output is None and canonical_format(a.format) not in TEXT_FORMATS:
        raise ValueError(f"--format {a.format} is binary: give -o FILE (or '-o -' to write it to standard output)")
    if not to_stdout:
        check_out(a.output, "--output", inputs=(a.front,))
    front = Front.from_json(a.front)
    entry = None if whole else front[a.tree]
    data = export_bytes(a.format, front, entry)
    if to_stdout:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    Path(a.output).write_bytes(data)
    print(f"{'front' if whole else f'tree {entry.id}'} written to {a.output}")
    return 0


def _cmd_discretize(a) -> int:
    from treeexplorer.data import load_dataset
    from treeexplorer.discretize import fit_discretizer
    from treeexplorer.export import plural

    check_out(a.out, "--out", inputs=(a.data,))
    ds = load_dataset(
        a.data,
        a.target,
        drop_missing=a.drop_missing,
        na_values=a.na_values,
        categorical=a.categorical,
        features=a.features,
        exclude=a.exclude,
    )
    binz = fit_discretizer(a.method, ds.X, ds.y, ds.schema, n_bins=a.n_bins, criterion=a.criterion or "entropy")
    rows = binz.describe(ds.schema)
    for n in binz.notices:
        print(f"note: {n}")
    print(f"{plural(len(rows), 'test')} ({a.method})")
    for r in rows:
        gain = "" if r["gain"] is None else f"  gain={r['gain']:.6g}"
        print(f"{r['index']:>4}  {r['test']}{gain}")
    if a.out:
        Path(a.out).write_text(
            json.dumps(
                {"method": a.method, "dataset": ds.name, "tests": rows, "notices": binz.notices},
                indent=1,
                ensure_ascii=False,
            ),
            encoding="utf-8",
        )
        print(f"tests written to {a.out}")
    return 0


def _cmd_datasets(a) -> int:
    from treeexplorer.data import bundled_datasets, load_dataset

    for name in bundled_datasets():
        ds = load_dataset(name)
        kinds = sorted({c.kind for c in ds.schema.columns})
        print(
            f"{name:24s} {ds.n_rows:6d} rows  {ds.schema.n_features:3d} features ({'/'.join(kinds)})  "
            f"{ds.schema.n_classes} classes, target {ds.schema.target!r}"
        )
    return 0


def _cmd_solvers(a) -> int:
    from treeexplorer.registry import available_solvers, get_solver, unavailable_solvers

    for name in available_solvers():
        spec = get_solver(name)
        print(f"{name} ({spec.input} input): {spec.description or spec.title}")
        for p in spec.params:
            print(f"    {p.name} [{p.kind}, default {p.default}]: {p.doc}")
    for name, why in unavailable_solvers().items():
        print(f"{name}: unavailable ({why})")
    return 0


def _cmd_app(a) -> int:
    import os

    # Read by treeexplorer.ui.admission when the UI is imported, so they are set before it.
    for flag, env in (("max_jobs", "TREEEXPLORER_MAX_JOBS"), ("max_upload_mb", "TREEEXPLORER_MAX_UPLOAD_MB")):
        value = getattr(a, flag)
        if value is not None:
            if value <= 0:
                raise ValueError(f"--{flag.replace('_', '-')} must be > 0, got {value}")
            os.environ[env] = str(value)
    if a.num_threads is not None and a.num_threads < 0:
        raise ValueError(f"--num-threads must be >= 0, got {a.num_threads}")
    from treeexplorer.app import serve

    code = serve(
        a.data,
        target=a.target,
        solver=a.solver,
        port=a.port,
        address=a.address,
        websocket_origins=a.allow_websocket_origin,
        show=a.show,
        num_threads=a.num_threads,
        drop_missing=a.drop_missing,
    )
    # Leave at once: a solve still running in a worker thread (or the kernel warm-up) would otherwise hold the
    # interpreter's exit until it finishes, and Ctrl-C must end the command within 2 s.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _conflict_message(exc) -> str:
    """SAT's contradictory-rows error in a few lines' worth of words, with the CLI's spelling of the fix."""
    from treeexplorer.export import plural

    rows = sorted(int(r) for r in exc.rows)
    shown = ", ".join(map(str, rows[:8])) + (f" and {len(rows) - 8} more" if len(rows) > 8 else "")
    return (
        f"{len(rows)} training rows ({plural(len(exc.groups), 'group')}) have identical tests but different labels, "
        f"so no tree classifies them all correctly (rows {shown}, counted from 1 after the header); add "
        "-P conflicts=majority to relabel each group with its majority label"
    )


def main(argv=None) -> int:
    """Entry point of the ``treeexplorer`` console script; returns the exit code.  A reader that goes away
    (``treeexplorer solve --help | head``) ends it quietly."""
    try:
        try:
            code = _main(argv)
        except SystemExit:  # --help, --version, a usage error: argparse's exit, after its output is out
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        import os

        # what is left in stdout's buffer would fail again at exit ("Exception ignored ... BrokenPipeError")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv=None) -> int:
    from treeexplorer.cli_rashomon import run_rashomon
    from treeexplorer.cli_sweep import run_sweep
    from treeexplorer.data import DataError

    parser = build_parser()
    _Parser.argv = None if argv is None else list(argv)
    args = parser.parse_args(argv)
    handler = {
        "solve": _cmd_solve,
        "export": _cmd_export,
        "discretize": _cmd_discretize,
        "datasets": _cmd_datasets,
        "solvers": _cmd_solvers,
        "sweep": run_sweep,
        "rashomon": run_rashomon,
        "app": _cmd_app,
        "warm": _cmd_warm,
    }[args.command]
    try:
        return handler(args)
    except NotImplementedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_NOT_IMPLEMENTED
    except BrokenPipeError:
        raise  # main ends quietly
    except (DataError, ValueError, KeyError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if hasattr(exc, "renumbered") and hasattr(exc, "groups"):  # SAT's contradictory rows, said for the CLI
            msg = _conflict_message(exc)
        print(f"error: {msg}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RuntimeError as exc:  # a solver that failed to load or crashed: say so in one line
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
