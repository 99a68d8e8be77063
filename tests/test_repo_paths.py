"""No tracked file names an absolute path of a machine (home folders, a build machine's work folder, a Windows
drive): the repository must run from wherever it is cloned, and its benchmarks take ``--data DIR``."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# spelled in pieces so that this file does not match itself
ABSOLUTE = re.compile(
    "|".join(["/" + "work/", "/" + "home/", "/" + "root/", "/" + "Users/", r"\b[A-Z]:" + r"\\(?![nrt0])\w"])
)


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout (an installed copy has no tracked files to check)")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_pattern_catches_machine_paths():
    for text in (
        "/" + "work/shared/datasets",
        "~ is /" + "home/me",
        "/" + "root/x",
        "/" + "Users/me",
        "C:" + "\\" + "data",
    ):
        assert ABSOLUTE.search(text), text
    for text in ("benchmarks/data/", "../shared", "$TREEEXPLORER_DATASETS/quantbnb", "/usr/bin/chromium", "http://x/"):
        assert not ABSOLUTE.search(text), text


def test_no_absolute_machine_paths_in_tracked_files():
    hits = []
    for path in tracked_files():
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:  # binary (images, fonts)
            continue
        for i, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if ABSOLUTE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:120]}")
    assert not hits, "absolute machine paths in tracked files:\n" + "\n".join(hits)
