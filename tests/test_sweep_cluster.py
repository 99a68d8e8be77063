"""The sweep's local dask cluster from any kind of script: one read from standard input cannot start worker
processes (they re-read the main script), so it runs on threads, and says so."""

import sys

from treeexplorer.folds import connect


def test_a_script_read_from_standard_input_sweeps_on_threads(monkeypatch, caplog):
    monkeypatch.setattr(sys.modules["__main__"], "__file__", "<stdin>", raising=False)  # `python - <script`
    with caplog.at_level("WARNING", logger="treeexplorer.folds"):
        client, close = connect(n_workers=1)
    try:
        assert client.scheduler.address.startswith("inproc://")  # threads of this process, no nanny
        assert client.submit(sum, [1, 2]).result(timeout=60) == 3
    finally:
        close()
    assert "the sweep runs on threads of this process" in caplog.text and "<stdin>" in caplog.text
