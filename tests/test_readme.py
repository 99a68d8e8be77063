"""The README as a user reads it: every ```python block runs as written, and it stays one screen's worth."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_readme_is_short_and_has_python_examples():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300
    assert BLOCKS, "no ```python block found"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_block_runs_as_written(block, tmp_path):
    # A fresh interpreter in an empty folder: nothing defined or imported beforehand, nothing found by accident.
    r = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert r.returncode == 0, f"{block}\n--- stderr ---\n{r.stderr[-3000:]}"
    assert r.stdout.strip(), "the example prints nothing"


def test_the_test_command_is_where_ci_finds_it():
    # .ci/run runs the first line that starts with the venv command and names pytest (command 2)
    text = README.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("python3 -m venv .venv")]
    assert any("pytest" in line for line in lines) and not any("pytest" in line for line in lines[:1])
