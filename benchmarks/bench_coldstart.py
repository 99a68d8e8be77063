"""Cold start per solver: what a first run costs while numba compiles the kernels (not a timed test).

For each solver, with a new empty numba cache folder (``NUMBA_CACHE_DIR``):

* **CLI**: ``treeexplorer solve iris --solver S`` run twice in fresh processes; the first compiles, the second
  loads the cache.  Compile cost = first minus second, in wall seconds and in CPU seconds (the child's user +
  system time: less sensitive to other load on the machine than wall time).
* **App** (``--app``): ``treeexplorer app iris --solver S`` started on a cold cache, a headless chromium opens
  the page; the figure is the time from starting the command to the first front on the page (its ``#1 S``
  legend entry).  Target: <= 30 s.

* **warm** (``--warm``): a cold ``treeexplorer warm`` of every solver and the Rashomon kernels, wall and CPU
  seconds, **serial** (every toy in one process, one after another: how a first use compiled before the
  compile moved to worker processes) against **parallel** (``treeexplorer warm``: worker processes, one per
  core), each on a new empty cache, in the same run so that the ratio is measured under the same load; and
  the CPU seconds and kernel compiles of each compile job (the figures of ``treeexplorer.warm``).
* **page during a compile** (with ``--app``): while the served app compiles cold, a second browser context
  opens the page; the figure is the time until its controls (the Run button) are there.

The load average (1 min) is printed with each figure: on a shared machine the wall times stretch with it.
``--kernels`` also lists, per solver (and for ``rashomon``: the Rashomon set's kernels, which have no CLI or
app figures), every kernel compiled (numba's ``numba:compile`` events) with its signatures and its own compile
seconds (callees' time subtracted), largest first; numba's own overloads compiled on
the way (``np.*``, sorting, typed containers) are one row.

Usage::

    python benchmarks/bench_coldstart.py                      # CLI figures, every solver
    python benchmarks/bench_coldstart.py --app --solver cart  # also the app's first front
    python benchmarks/bench_coldstart.py --no-cli --warm      # cold warm of everything, serial vs parallel
    python benchmarks/bench_coldstart.py --no-cli --warm cart sat murtree   # of some
    python benchmarks/bench_coldstart.py --kernels --solver dpdt
    python benchmarks/bench_coldstart.py --no-cli --kernels rashomon   # the Alternatives card's kernels

No data needed (the bundled iris table).  The app mode skips with a message when chromium or Playwright is
missing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from benchdata import Summary, add_summary_argument  # noqa: E402

from treeexplorer.warm import process_cpu  # noqa: E402

# run_all.py: arguments of each mode (see benchmarks/README.md, "run_all protocol")
RUN_ALL = {
    "quick": ["--solver", "cart", "sat"],
    "full": ["--app"],
}
APP_TARGET_S = 30.0
CHROMIUM = Path("/usr/bin/chromium")

# Run in a child: warm one solver with numba's compile events recorded; prints one JSON line.
_PROFILE = r"""
import json, sys, time
from numba.core import event

class Recorder(event.Listener):
    def __init__(self):
        self.stack, self.rows = [], []
    def on_start(self, ev):
        self.stack.append([ev.data["dispatcher"], str(ev.data["args"]), time.process_time(), 0.0])
    def on_end(self, ev):
        disp, sig, c0, inner = self.stack.pop()
        spent = time.process_time() - c0
        if self.stack:
            self.stack[-1][3] += spent
        f = disp.py_func
        self.rows.append([f.__module__, f.__qualname__, sig, spent - inner])

rec = Recorder()
event.register("numba:compile", rec)
from treeexplorer.warm import ensure_warm
ensure_warm(sys.argv[1])
print(json.dumps(rec.rows))
"""


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _env(cache: Path) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONUNBUFFERED": "1"}


def _timed(cmd: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    c0, t0 = _child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    return time.perf_counter() - t0, _child_cpu() - c0, out


# Run in a child: every warm-up's toys in this one process, one after another (the serial baseline).
_SERIAL = r"""
import sys
from treeexplorer.warm import _run_solver_toys, _run_common_toys
for name in sys.argv[1:]:
    _run_solver_toys(name)
_run_common_toys()
"""


def warm_serial_parallel(names: list[str]) -> dict:
    """Cold warm-up of ``names``: serial (one process) and parallel (``treeexplorer warm``), each on a new
    cache; wall and CPU seconds, and the parallel run's per-job lines."""
    out = {"load": _load()}
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        wall, cpu, run = _timed([sys.executable, "-c", _SERIAL, *names], _env(Path(cache)))
        if run.returncode != 0:
            raise SystemExit(f"serial warm-up failed: {run.stderr.strip()[-300:]}")
        out["serial"] = (wall, cpu)
    out["load_mid"] = _load()
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        wall, cpu, run = _timed([sys.executable, "-m", "treeexplorer", "warm", "--solver", *names], _env(Path(cache)))
        if run.returncode != 0:
            raise SystemExit(f"treeexplorer warm failed: {run.stderr.strip()[-300:]}")
        out["parallel"] = (wall, cpu)
        out["lines"] = [line for line in run.stdout.splitlines() if ": compiled " in line or "worker" in line]
    out["load_after"] = _load()
    return out


def cli(solver: str) -> dict:
    """Cold and warm ``treeexplorer solve iris`` in fresh processes on a new cache folder."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        cmd = [sys.executable, "-m", "treeexplorer", "solve", "iris", "--solver", solver]
        load = _load()
        cold_w, cold_c, first = _timed(cmd, _env(Path(cache)))
        warm_w, warm_c, second = _timed(cmd, _env(Path(cache)))
    for out in (first, second):
        if out.returncode != 0:
            raise SystemExit(f"{solver}: the CLI failed: {out.stderr.strip()[-300:]}")
    said = f"compiling the {solver} kernels" in first.stderr and "compiling" not in second.stderr
    return {
        "cold_wall": cold_w,
        "cold_cpu": cold_c,
        "warm_wall": warm_w,
        "warm_cpu": warm_c,
        "load": load,
        "said": said,
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app(solver: str, timeout_s: float = 900.0) -> dict:
    """Seconds from ``treeexplorer app iris --solver S`` (cold cache) to its first front in a browser."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        cmd = [sys.executable, "-m", "treeexplorer", "app", "iris", "--solver", solver, "--port", str(port)]
        load = _load()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=_env(Path(cache)), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
                page = browser.new_page()
                while True:
                    try:
                        page.goto(f"http://127.0.0.1:{port}/", timeout=timeout_s * 1000)
                        break
                    except Exception:  # noqa: BLE001 - not listening yet
                        if time.perf_counter() - t0 > timeout_s or proc.poll() is not None:
                            raise
                        time.sleep(0.2)
                served = time.perf_counter() - t0
                # a second visitor while the kernels compile: a new context, until its Run bar's Cancel is there
                t1 = time.perf_counter()
                second = browser.new_context().new_page()
                second.goto(f"http://127.0.0.1:{port}/", timeout=timeout_s * 1000)
                second.get_by_role("button", name="Cancel").wait_for(timeout=timeout_s * 1000)
                second_s = time.perf_counter() - t1
                during = not page.locator(f"text=#1 {solver}").count()  # the first front not there yet
                page.wait_for_selector(f"text=#1 {solver}", timeout=timeout_s * 1000)
                front = time.perf_counter() - t0
                cpu = process_cpu(proc.pid)
                browser.close()
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    return {
        "first_front": front,
        "page_answered": served,
        "second_page": second_s,
        "second_during_compile": during,
        "cpu": cpu,
        "load": load,
        "load_after": _load(),
    }


def kernels(solver: str) -> list[tuple[str, list[str], float]]:
    """Every kernel compiled by a cold warm-up of ``solver``: (name, signatures, own compile CPU s)."""
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        out = subprocess.run(
            [sys.executable, "-c", _PROFILE, solver], capture_output=True, text=True, env=_env(Path(cache)), cwd=ROOT
        )
    if out.returncode != 0:
        raise SystemExit(f"{solver}: {out.stderr.strip()[-300:]}")
    by: dict[str, tuple[list[str], float]] = {}
    for module, name, sig, spent in json.loads(out.stdout.strip().splitlines()[-1]):
        # numba's own overloads (np.empty, sorting, typed containers...) compiled on the way: one row
        key = f"{module.rsplit('.', 1)[-1]}.{name}" if module.startswith("treeexplorer") else "(numba's own overloads)"
        sigs, total = by.get(key, ([], 0.0))
        by[key] = (sigs + [sig], total + spent)
    return sorted(((k, s, t) for k, (s, t) in by.items()), key=lambda r: -r[2])


def main(argv=None) -> int:
    from treeexplorer.registry import SOLVER_NAMES
    from treeexplorer.warm import WARM_NAMES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--solver", nargs="+", default=list(SOLVER_NAMES), choices=WARM_NAMES)
    ap.add_argument("--app", action="store_true", help="also time the app's first front in headless chromium")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI figures")
    ap.add_argument(
        "--kernels",
        nargs="*",
        choices=WARM_NAMES,
        metavar="NAME",
        help=f"list the kernels each solver compiles (those of --solver, or the names given: {', '.join(WARM_NAMES)})",
    )
    ap.add_argument(
        "--warm",
        nargs="*",
        choices=WARM_NAMES,
        metavar="NAME",
        help="cold warm-up, serial vs parallel, of the names given (default: every solver and rashomon)",
    )
    add_summary_argument(ap)
    args = ap.parse_args(argv)
    # the Rashomon set's kernels (and any other warmed name that is not a solver) have no CLI solve or app page
    no_solve = [s for s in args.solver if s not in SOLVER_NAMES]
    if no_solve and not (args.no_cli and not args.app):
        print(f"{', '.join(no_solve)}: kernels only (no CLI or app figures)")
    solvers = [s for s in args.solver if s in SOLVER_NAMES]
    summary = Summary(args.summary)
    do_app = args.app
    if do_app and not CHROMIUM.exists():
        print("skip app: /usr/bin/chromium missing")
        do_app = False
    if do_app:
        try:
            import playwright  # noqa: F401
        except ImportError:
            print("skip app: playwright is not installed")
            do_app = False

    if args.warm is not None:
        names = args.warm or list(WARM_NAMES)
        r = warm_serial_parallel(names)
        (sw, sc), (pw, pc) = r["serial"], r["parallel"]
        print(
            f"cold warm-up of {', '.join(names)} ({os.cpu_count()} cores, load {r['load']}/{r['load_mid']}/"
            f"{r['load_after']} before/between/after)"
        )
        print("| run | wall s | CPU s | wall vs serial |")
        print("|---|---|---|---|")
        print(f"| serial (one process) | {sw:.1f} | {sc:.1f} | 1.00 |")
        print(f"| parallel (`treeexplorer warm`) | {pw:.1f} | {pc:.1f} | {pw / sw:.2f} |")
        print("\nper compile job (parallel run):")
        for line in r["lines"]:
            print(f"    {line}")
        summary.add(
            f"cold warm, parallel vs serial wall (load {r['load']})", f"{pw / sw:.2f}", "<= 0.60", pw <= 0.6 * sw
        )
    if not args.no_cli:
        print(
            "| solver | cold wall s | warm wall s | compile wall s | cold CPU s | warm CPU s | compile CPU s | load |",
            end="",
        )
        print(" notice |")
        print("|---|---|---|---|---|---|---|---|---|")
        for s in solvers:
            r = cli(s)
            dw, dc = r["cold_wall"] - r["warm_wall"], r["cold_cpu"] - r["warm_cpu"]
            print(
                f"| {s} | {r['cold_wall']:.1f} | {r['warm_wall']:.1f} | {dw:.1f} | {r['cold_cpu']:.1f} | "
                f"{r['warm_cpu']:.1f} | {dc:.1f} | {r['load']} | {'yes' if r['said'] else 'no'} |",
                flush=True,
            )
            summary.add(f"CLI compile, {s} (CPU s, load {r['load']})", f"{dc:.1f}")
    if do_app:
        print(
            "\n| solver | app start -> first front s | page answered s | 2nd page's controls s (during the compile?)"
            " | server CPU s by then | target s | load |"
        )
        print("|---|---|---|---|---|---|---|")
        for s in solvers:
            r = app(s)
            ok = r["first_front"] <= APP_TARGET_S
            print(
                f"| {s} | {r['first_front']:.1f} | {r['page_answered']:.1f} | {r['second_page']:.1f} "
                f"({'yes' if r['second_during_compile'] else 'no'}) | {r['cpu'] or 0:.1f} | "
                f"<= {APP_TARGET_S:.0f} | {r['load']}/{r['load_after']} |",
                flush=True,
            )
            summary.add(
                f"app cold start -> first front, {s} (load {r['load']})",
                f"{r['first_front']:.1f} s",
                f"<= {APP_TARGET_S:.0f} s",
                ok,
            )
    if args.kernels is not None:
        for s in args.kernels or args.solver:
            rows = kernels(s)
            print(
                f"\n{s}: {len(rows)} kernels, {sum(len(r[1]) for r in rows)} compiles, "
                f"{sum(r[2] for r in rows):.1f} CPU s (load {_load()})"
            )
            print("| kernel | signatures | own compile CPU s |")
            print("|---|---|---|")
            for name, sigs, spent in rows:
                print(f"| {name} | {len(sigs)} | {spent:.2f} |")
    summary.write()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
