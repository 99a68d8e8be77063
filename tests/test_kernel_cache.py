"""Numba cache files are dropped when any kernel source changes (numba checks only the caller's file)."""

from treeexplorer.solvers._kernels import _drop_stale_cache


def test_cache_files_are_dropped_when_any_kernel_source_changes(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    (tmp_path / "callee.py").write_text("x = 1\n")
    (tmp_path / "caller.py").write_text("y = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    old = cache / "caller.kernel-1.py311.nbi"
    old.write_text("stale")
    _drop_stale_cache(tmp_path)  # no digest yet: unknown provenance, dropped
    assert not old.exists()
    kept = cache / "caller.kernel-1.py311.nbc"
    kept.write_text("fresh")
    _drop_stale_cache(tmp_path)  # sources unchanged: kept
    assert kept.exists()
    (tmp_path / "callee.py").write_text("x = 2\n")  # only the callee changes
    _drop_stale_cache(tmp_path)
    assert not kept.exists()
