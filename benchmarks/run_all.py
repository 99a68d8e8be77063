"""Run every benchmark, quick or full, and print one summary table (benchmark, figure, value, target, result).

Usage::

    python benchmarks/run_all.py --quick [--data DIR]     # minutes on 2 cores: a small version of each
    python benchmarks/run_all.py --full --data DIR        # the full versions (hours)
    python benchmarks/run_all.py --smoke                  # seconds-to-a-minute: tiny data made from the bundled
                                                          # sets, no peers (CI runs this so the scripts cannot rot)
    python benchmarks/run_all.py --quick --only gosdt contree --no-peers

``--data DIR`` is the datasets root (``quantbnb/``, ``murtree-dl/``, ``branches/``, ``inferdt/``); default
``$TREEEXPLORER_DATASETS``, then ``benchmarks/data/``.  A benchmark whose data are missing is listed as skipped.
Peers (pystreed, pycontree, gosdt) are optional; ``--no-peers`` hides them.  Each benchmark runs in its own
process; its whole output goes to ``<out>/<name>.log`` (``--out DIR``, default a new temporary folder).

Protocol (how a benchmark takes part): a ``benchmarks/bench_<name>.py`` script that

* defines a module-level literal ``RUN_ALL = {"quick": [...], "full": [...], "smoke": [...], "data": [...],
  "peers": [...]}`` -- the command-line arguments of each mode (a list of strings, or a list of such lists for
  several runs), the data collections it reads (then ``--data DIR`` is passed) and the optional peers it uses
  (shown in the table).  A mode left out is not run in that mode (most benchmarks have no ``smoke``);
* accepts ``--summary FILE`` and writes its headline figures there (``benchdata.Summary``), or records why it
  skipped; it exits 0 when it ran or skipped, non-zero when a result is wrong or it failed.

``run_all.py`` reads ``RUN_ALL`` without importing the script (``ast.literal_eval``), so registering a new
benchmark is adding that constant and the ``--summary`` argument to it.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchdata import NO_PEERS_ENV, ROOT, SOURCES, data_root, machine  # noqa: E402

PEERS = ("pystreed", "pycontree", "gosdt")
TIMEOUT = {"smoke": 300.0, "quick": 1800.0, "full": 8 * 3600.0}


def discover(folder: Path = HERE) -> dict[str, dict | None]:
    """``{name: RUN_ALL or None}`` for every ``bench_*.py`` in ``folder`` (None: the script does not take part)."""
    found = {}
    for path in sorted(folder.glob("bench_*.py")):
        spec = None
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "RUN_ALL" for t in node.targets):
                spec = ast.literal_eval(node.value)
        found[path.stem.removeprefix("bench_")] = spec
    return found


def runs_of(spec: dict, mode: str) -> list[list[str]]:
    """The argument lists of ``mode`` (one per run); empty when the benchmark has no such mode."""
    if mode not in spec:
        return []
    args = spec[mode]
    return [list(a) for a in args] if args and isinstance(args[0], list) else [list(args)]


def make_smoke_data(root: Path) -> Path:
    """A tiny datasets root built from the bundled sets (``assets/``): one file per collection, seconds to solve."""
    import numpy as np
    import pandas as pd

    assets = ROOT / "assets"
    iris = pd.read_csv(assets / "iris.csv")
    X = iris.iloc[:, :-1].to_numpy(dtype=float)
    X = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    y = pd.factorize(iris.iloc[:, -1])[0]
    test = np.arange(len(y)) % 5 == 0
    (root / "quantbnb").mkdir(parents=True)
    quant = {"Xtrain": X[~test].tolist(), "Ytrain": y[~test].astype(float).tolist(), "Xtest": X[test].tolist()}
    quant.update(Ytest=y[test].astype(float).tolist(), C=3, N=len(y), F=X.shape[1])
    (root / "quantbnb" / "smoke.json").write_text(json.dumps(quant))
    (root / "inferdt").mkdir()
    iris[~test].to_csv(root / "inferdt" / "iris.csv.train0.csv", index=False)
    iris[test].to_csv(root / "inferdt" / "iris.csv.test0.csv", index=False)
    monks = pd.read_csv(assets / "monks-1.csv")
    onehot = pd.get_dummies(monks.iloc[:, :-1].astype(str)).to_numpy(dtype=int)
    label = pd.factorize(monks.iloc[:, -1], sort=True)[0][:, None]
    (root / "murtree-dl").mkdir()
    np.savetxt(root / "murtree-dl" / "smoke.txt", np.hstack([label, onehot]), fmt="%d")
    (root / "branches" / "preprocessed").mkdir(parents=True)
    np.savetxt(root / "branches" / "preprocessed" / "monk1.txt", np.hstack([onehot, label]), fmt="%d")
    return root


def run_one(name: str, args: list[str], spec: dict, data: Path, out: Path, env: dict, timeout: float) -> dict:
    """Run one benchmark process; returns its summary (figures, skipped) plus exit code, seconds and log path."""
    log = out / f"{name}.log"
    summary_file = out / f"{name}.summary.json"
    summary_file.unlink(missing_ok=True)
    cmd = [sys.executable, str(HERE / f"bench_{name}.py"), *args, "--summary", str(summary_file)]
    if spec.get("data"):
        cmd += ["--data", str(data)]
    t = time.perf_counter()
    with open(log, "a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        try:
            code = subprocess.run(
                cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=ROOT, timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired:
            code = None
    result = {"figures": [], "skipped": None}
    if summary_file.exists():
        result.update(json.loads(summary_file.read_text()))
    result.update(code=code, seconds=time.perf_counter() - t, log=log)
    return result


def table(rows: list[tuple[str, str, str, str, str]]) -> str:
    head = ("benchmark", "figure", "value", "target", "result")
    out = ["| " + " | ".join(head) + " |", "|---|---|---:|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def rows_of(label: str, res: dict) -> list[tuple[str, str, str, str, str]]:
    if res["code"] is None:
        return [(label, f"timed out after {res['seconds']:.0f} s (log: {res['log'].name})", "", "", "ERROR")]
    if res["skipped"]:
        return [(label, res["skipped"].split(" -- ")[0], "", "", "skip")]
    rows = [
        (label, f["figure"], f["value"], f["target"], {True: "pass", False: "short", None: "-"}[f["ok"]])
        for f in res["figures"]
    ]
    if res["code"] != 0:
        rows.append((label, f"exit code {res['code']} (log: {res['log'].name})", "", "", "FAIL"))
    elif not rows:
        rows.append((label, "ran, no figures reported", "", "", "-"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_const", const="quick", dest="mode", help="small version of each")
    mode.add_argument("--full", action="store_const", const="full", dest="mode", help="the full versions")
    mode.add_argument("--smoke", action="store_const", const="smoke", dest="mode", help="tiny bundled data, no peers")
    ap.add_argument("--data", type=Path, default=None, help="datasets root (not with --smoke)")
    ap.add_argument("--only", nargs="+", default=None, help="benchmark names (bench_<name>.py) to run")
    ap.add_argument("--no-peers", action="store_true", help="do not use pystreed, pycontree or gosdt")
    ap.add_argument("--out", type=Path, default=None, help="folder for each benchmark's log and summary")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per benchmark run (default by mode)")
    a = ap.parse_args(argv)

    found = discover()
    unknown = sorted(set(a.only or ()) - set(found))
    if unknown:
        print(f"no such benchmark: {', '.join(unknown)} (have: {', '.join(found)})")
        return 2
    out = a.out or Path(tempfile.mkdtemp(prefix="treeexplorer-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if a.no_peers or a.mode == "smoke":
        env[NO_PEERS_ENV] = "1"
    if a.mode == "smoke":
        data = make_smoke_data(Path(tempfile.mkdtemp(prefix="treeexplorer-smoke-data-")))
    else:
        data = data_root(a.data)
    timeout = a.timeout or TIMEOUT[a.mode]

    print(f"machine: {machine()}")
    peers = []
    for p in PEERS:
        try:
            peers.append(f"{p} {importlib.metadata.version(p)}")
        except importlib.metadata.PackageNotFoundError:
            peers.append(f"{p} not installed")
    print(f"peers: {'switched off' if NO_PEERS_ENV in env else ', '.join(peers)}")
    missing = [c for c in SOURCES if not (data / c).is_dir()]
    print(f"data: {data}" + (f" (missing: {', '.join(missing)}; their benchmarks skip)" if missing else ""))
    print(f"logs: {out}\n", flush=True)

    rows, failed, t_all = [], False, time.perf_counter()
    for name, spec in found.items():
        if a.only and name not in a.only:
            continue
        if spec is None:
            print(f"{name}: no RUN_ALL in bench_{name}.py, not run")
            continue
        for args in runs_of(spec, a.mode):
            print(f"{name} {' '.join(args)} ...", end=" ", flush=True)
            res = run_one(name, args, spec, data, out, env, timeout)
            status = "timeout" if res["code"] is None else "skipped" if res["skipped"] else f"exit {res['code']}"
            print(f"{res['seconds']:.0f} s, {status}", flush=True)
            failed = failed or res["code"] != 0
            rows += rows_of(name, res)
    print(f"\n{a.mode} run, {time.perf_counter() - t_all:.0f} s in all; machine: {machine()}\n")
    print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
