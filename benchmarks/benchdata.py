"""Where the benchmarks find their data, their optional peers, and how they report to ``run_all.py``.

Data root, first found: ``--data DIR``, then ``$TREEEXPLORER_DATASETS``, then ``benchmarks/data/`` in this
repository (ignored by git).  The root holds one folder per collection (``quantbnb/``, ``murtree-dl/``,
``branches/``, ``inferdt/``); :data:`SOURCES` says where each comes from.  A benchmark whose folder is
missing prints one line (what is missing, where it comes from, where to put it) and exits 0.

Peers (pystreed, pycontree, gosdt) are optional: :func:`peer` returns the imported module or ``None``
with a note; ``TREEEXPLORER_BENCH_NO_PEERS=1`` hides them all (``run_all.py --no-peers``).

``--summary FILE`` (added by :func:`add_arguments`) asks a benchmark for its headline figures as JSON;
:class:`Summary` collects and writes them; ``run_all.py`` prints them as one table.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = "TREEEXPLORER_DATASETS"
DEFAULT = ROOT / "benchmarks" / "data"
NO_PEERS_ENV = "TREEEXPLORER_BENCH_NO_PEERS"

# collection -> (what it is, where it comes from); the licences are in benchmarks/README.md
SOURCES = {
    "quantbnb": (
        "Quant-BnB's continuous train/test splits (<name>.json)",
        "github.com/mengxianglgal/Quant-BnB, folder dataset/class/",
    ),
    "murtree-dl": (
        "the DL8.5/MurTree binarised sets (<name>.txt, label first)",
        "github.com/MurTree/murtree-data, folder DL/",
    ),
    "branches": (
        "BRANCHES' preprocessed sets (preprocessed/<name>.txt, label last)",
        "github.com/Chaoukia/branches, folder data/ (with preprocessed/)",
    ),
    "inferdt": (
        "InferDT's CSV sets and folds (<name>.csv.train<i>.csv)",
        "github.com/FlorentAvellaneda/InferDT, folder data/",
    ),
}


def add_summary_argument(ap: argparse.ArgumentParser) -> None:
    """Add ``--summary FILE`` (a benchmark without data files needs only this one)."""
    ap.add_argument("--summary", type=Path, default=None, help="write the headline figures to FILE as JSON")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """Add ``--data DIR`` and ``--summary FILE`` to a benchmark's argument parser."""
    add_summary_argument(ap)
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help=f"datasets root holding {', '.join(f'{k}/' for k in SOURCES)} "
        f"(default: ${ENV}, then benchmarks/data/ in the repository)",
    )


def data_root(arg: Path | str | None = None) -> Path:
    """The datasets root: ``arg``, else ``$TREEEXPLORER_DATASETS``, else ``benchmarks/data/``."""
    if arg:
        return Path(arg)
    env = os.environ.get(ENV)
    return Path(env) if env else DEFAULT


def skip_message(collection: str, root: Path, bench: str) -> str:
    """The one line a benchmark prints when ``collection`` is not under ``root``."""
    what, where = SOURCES[collection]
    return (
        f"SKIP {bench}: no {collection}/ under {root} -- {what} from {where}; copy it to {root / collection}/ "
        f"or pass --data DIR (see benchmarks/README.md)"
    )


def collection_dir(arg, collection: str, bench: str, sub: str = "", summary: Summary | None = None) -> Path | None:
    """``<root>/<collection>[/<sub>]`` when it exists; otherwise print the skip line and return ``None``.

    With ``summary``, a missing folder is also recorded there as the reason of the skip (and written).
    """
    root = data_root(arg)
    folder = root / collection / sub if sub else root / collection
    if folder.is_dir():
        return folder
    message = skip_message(collection, root, bench)
    print(message)
    if summary is not None:
        summary.skip(message)
        summary.write()
    return None


def peer(module: str, install: str | None = None):
    """Import an optional peer package, or print a note and return ``None``."""
    if os.environ.get(NO_PEERS_ENV, "").lower() not in ("", "0", "false", "no"):
        print(f"{module}: peers switched off ({NO_PEERS_ENV}); its columns stay empty")
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        print(f"{module} not installed: its columns stay empty (pip install {install or module})")
        return None


def run_child(script: Path | str, args: list[str], timeout: float) -> dict | None:
    """Run ``script --child ARGS`` in a fresh process (a cold start, numba loading its cached code) from the
    repository root; returns the JSON of its last output line, or None on a timeout or an error (printed)."""
    import subprocess
    import sys

    cmd = [sys.executable, str(script), "--child", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine() -> str:
    """One line naming this machine: CPU model, cores, memory, Python."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        mem = f", {kb / 1024**2:.0f} GB RAM"
    except (OSError, IndexError, ValueError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()}, Python {platform.python_version()}"


class Summary:
    """Headline figures of one benchmark run, written as JSON for ``run_all.py`` (nothing without a path).

    Parameters
    ----------
    path : Path or None
        Where :meth:`write` puts the JSON (``--summary``); ``None``: keep nothing.
    """

    def __init__(self, path: Path | None):
        self.path = path
        self.figures: list[dict] = []
        self.skipped: str | None = None

    def add(self, figure: str, value, target: str = "", ok: bool | None = None) -> None:
        """One figure: its name, its value (shown as given), the target and whether it is met (None: no target)."""
        self.figures.append({"figure": figure, "value": str(value), "target": target, "ok": ok})

    def skip(self, reason: str) -> None:
        """Record that the benchmark did not run (missing data or tools)."""
        self.skipped = reason

    def write(self) -> None:
        """Write the JSON file (when a path was given)."""
        if self.path is not None:
            self.path.write_text(json.dumps({"figures": self.figures, "skipped": self.skipped}))
