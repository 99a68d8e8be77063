"""Soak: opening and closing many sessions on a real ``panel serve`` leaves nothing behind.

The 200-session version is ``benchmarks/bench_soak.py``; this one opens 30 (after a warm-up) with
websocket clients and checks that the server's threads, open files and memory stay within 10 % and that
no job is left running or queued.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)"),
    # ~70 s on the 2-core machine, too long for every CI run: opt-in.  bench_soak.py's 200 sessions pass the same
    # check (README); this 30-session version passed too when last run with TREEEXPLORER_SOAK=1.
    pytest.mark.skipif(not os.environ.get("TREEEXPLORER_SOAK"), reason="soak test is opt-in: TREEEXPLORER_SOAK=1"),
]


def test_many_sessions_leave_threads_files_memory_flat():
    pytest.importorskip("bokeh.client")
    from bench_soak import flat, soak

    r = soak(n_sessions=30, parallel=3, warmup=9, max_seconds=600, verbose=False)
    assert r["sessions"] == 30 and not r["errors"], r["errors"][:3]
    assert all(flat(r["before"], r["after"]).values()), (r["before"], r["after"])
    stats = r["stats"]
    assert stats["jobs"] == stats["running"] == stats["queued"] == stats["held"] == 0, stats
    assert stats["admitted"] >= 39  # every session solved once
    assert "Traceback" not in r["log"], r["log"][-3000:]
