"""The package as a user gets it: the wheel's contents, ``python -m treeexplorer``, and ``treeexplorer app``."""

import importlib.util
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

import treeexplorer
from treeexplorer.cli import EXIT_BAD_INPUT, main

ROOT = Path(__file__).resolve().parents[1]


def _copy_sources(dest: Path) -> Path:
    """The checkout's source files (not its venv, caches or build output), so the build leaves no trace."""
    skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
    shutil.copytree(ROOT, dest, ignore=lambda d, names: [n for n in names if n in skip or n.endswith(".egg-info")])
    return dest


def test_wheel_holds_only_treeexplorer_with_its_datasets_and_fonts(tmp_path):
    src = _copy_sources(tmp_path / "src")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(src)]
    if importlib.util.find_spec("wheel") is not None:  # build with what is installed: no download, faster
        cmd.insert(4, "--no-build-isolation")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("treeexplorer-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"treeexplorer", f"treeexplorer-{treeexplorer.__version__}.dist-info"}, top
    datasets = sorted(p.name for p in (ROOT / "assets").glob("*.csv"))
    assert len(datasets) >= 5
    for name in datasets:
        assert f"treeexplorer/datasets/{name}" in names
    assert "treeexplorer/datasets/SOURCES.md" in names
    fonts = sorted(p.name for p in (ROOT / "treeexplorer" / "render" / "fonts").iterdir())
    assert all(f"treeexplorer/render/fonts/{f}" in names for f in fonts)
    for module in ("__main__.py", "app.py", "metrics.py", "solvers/_base.py", "solvers/_kernels/cart.py"):
        assert f"treeexplorer/{module}" in names
    entry_points = zipfile.ZipFile(wheel).read(f"treeexplorer-{treeexplorer.__version__}.dist-info/entry_points.txt")
    assert b"treeexplorer = treeexplorer.cli:main" in entry_points


def test_python_dash_m_is_the_cli_from_any_directory(tmp_path):
    run = [sys.executable, "-m", "treeexplorer"]
    r = subprocess.run([*run, "--version"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == f"treeexplorer {treeexplorer.__version__}"
    r = subprocess.run([*run, "datasets"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines()]
    assert {"car", "iris", "monks-1", "tic-tac-toe", "balance-scale"} <= set(listed)
    # the bundled iris (target 'species'), not scikit-learn's ('target')
    assert "target 'species'" in next(line for line in r.stdout.splitlines() if line.startswith("iris "))


def test_app_rejects_a_bad_dataset_before_serving(capsys):
    assert main(["app", "no-such-dataset", "--port", "0"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "no-such-dataset" in err and len(err.splitlines()) == 1


def test_app_opens_a_file_with_its_target(tmp_path):
    import pandas as pd

    from treeexplorer.app import open_explorer

    rows = [(a, b, "yes" if a > 1 else "no", "p" if b else "q") for a in range(4) for b in (0, 1)] * 3
    path = tmp_path / "toy.csv"
    pd.DataFrame(rows, columns=["a", "b", "label", "other"]).to_csv(path, index=False)
    ex = open_explorer(str(path), target="label", solver="cart")
    c = ex.controller
    assert c.error == ""
    assert c.dataset_name == "toy" and c.target == "label" and len(c.runs) == 1
    assert c.runs[0].front.schema.target == "label" and c.runs[0].front.solver == "cart"
    best = c.runs[0].front.best(by="train_accuracy")
    assert best.metrics["train_accuracy"] == 1.0  # label = a > 1: one split


def _lines(stream, q):
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def test_app_serves_the_explorer_and_stops_on_ctrl_c(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "treeexplorer", "app", "--port", "0", "--no-show"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    q: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, q), daemon=True).start()
    try:
        url, seen, deadline = None, [], time.monotonic() + 300
        while url is None and time.monotonic() < deadline:
            try:
                line = q.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
            if "http://" in line:
                url = line[line.index("http://") :].split()[0]
        assert url is not None, "".join(seen)
        with urllib.request.urlopen(url, timeout=600) as resp:  # the first page solves iris once
            page = resp.read().decode("utf-8", "replace")
        assert resp.status == 200
        assert "treeexplorer" in page and "bokeh" in page.lower()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        stopped_in = time.monotonic() - t0
        while (line := q.get(timeout=5)) is not None:
            seen.append(f"{time.monotonic() - t0:.2f} s: {line}")
        assert code == 0, "".join(seen)
        assert stopped_in < 2.0, f"Ctrl-C took {stopped_in:.2f} s; output:\n{''.join(seen)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("command", [["datasets"], ["solve", "car", "--solver", "cart", "--max-depth", "2"]])
def test_console_script_is_installed(command, tmp_path):
    exe = shutil.which("treeexplorer", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the treeexplorer console script is not installed next to this Python")
    r = subprocess.run([exe, *command], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "car" in r.stdout
