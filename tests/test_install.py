"""The wheel as a newcomer installs it: a fresh venv, an empty home, a first solve from an empty folder.

Numba's compiled code goes to the user's cache folder, never into the installed package; the first solve says
that it compiles, and the second one loads what the first one cached.  No network: the wheel is built and
installed with what this environment has (``--no-index --no-deps``), and the fresh venv sees this one's
dependencies through a ``.pth`` file (a path line, so this environment's editable install is not activated).
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import treeexplorer

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    skip = {".venv", ".git", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
    src = tmp / "src"  # the checkout's sources only: the build leaves no trace in it
    shutil.copytree(ROOT, src, ignore=lambda d, names: [n for n in names if n in skip or n.endswith(".egg-info")])
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(tmp / "dist")]
    r = subprocess.run([*cmd, str(src)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (tmp / "build.log").write_text(r.stdout + r.stderr)
    (wheel,) = (tmp / "dist").glob("treeexplorer-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-index", "--no-deps", str(wheel)]
    r = subprocess.run(pip, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    site = Path(
        subprocess.check_output(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True
        ).strip()
    )
    (site / "_this_envs_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_", "PYTHONPATH"))}
    env.update(HOME=str(home), PYTHONUNBUFFERED="1")
    return venv, site, home, env


def test_the_build_gives_no_deprecation_or_packaging_warning(fresh_install):
    log = (fresh_install[0].parent / "build.log").read_text()
    for warning in ("DeprecationWarning", "is absent from the `packages` configuration", "License classifiers"):
        assert warning not in log, [line for line in log.splitlines() if warning in line][:5]


def _solve(venv: Path, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [str(venv / "bin" / "treeexplorer"), "solve", "iris", "--solver", "cart", "--max-depth", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=cwd, env=env)


def test_first_solve_compiles_into_the_user_cache_and_the_second_reuses_it(fresh_install, tmp_path):
    venv, site, home, env = fresh_install
    before = _files(site)
    work = tmp_path / "empty"
    work.mkdir()
    first = _solve(venv, env, work)
    assert first.returncode == 0, first.stderr
    assert "iris: " in first.stdout and "solver cart" in first.stdout
    assert "compiling the cart kernels (first use only" in first.stderr, first.stderr
    assert _files(site) == before, "the run wrote into site-packages"
    assert list(work.iterdir()) == []
    (cache,) = (home / ".cache" / "treeexplorer").glob(f"kernels-{treeexplorer.__version__}-*")
    cached = _files(cache)
    assert any(name.endswith(".nbc") for name in cached) and any(name.endswith(".nbi") for name in cached)

    second = _solve(venv, env, work)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr, second.stderr
    assert _files(cache) == cached, "the second run compiled again instead of loading the cache"
    assert _files(site) == before
    assert first.stdout.splitlines()[1:] == second.stdout.splitlines()[1:]  # the same front (timing line aside)


def test_the_installed_package_runs_from_the_wheel_not_the_checkout(fresh_install, tmp_path):
    venv, _site, _home, env = fresh_install
    code = "import treeexplorer, treeexplorer.solvers as s; print(treeexplorer.__file__); print(s.__file__)"
    out = subprocess.check_output([str(venv / "bin" / "python"), "-c", code], text=True, env=env, cwd=tmp_path)
    assert str(ROOT) not in out and out.count(str(venv)) == 2, out


def test_numba_cache_dir_still_wins(fresh_install, tmp_path):
    venv, site, _home, env = fresh_install
    own = tmp_path / "numba-cache"
    code = "import treeexplorer, numba; print(treeexplorer._kernel_cache.kernel_cache_dir(), numba.config.CACHE_DIR)"
    out = subprocess.check_output(
        [str(venv / "bin" / "python"), "-c", code], text=True, env={**env, "NUMBA_CACHE_DIR": str(own)}, cwd=tmp_path
    )
    assert out.split() == ["None", str(own)]
