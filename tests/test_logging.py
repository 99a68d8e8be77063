"""Server and job errors go to the ``treeexplorer`` loggers with their context, not to bare stderr prints."""

from __future__ import annotations

import logging

from treeexplorer.jobs import Job, JobFailed


def _boom(control):
    raise RuntimeError("the kernel ran out of slots")


def test_a_failed_job_logs_its_traceback_under_the_treeexplorer_logger(caplog):
    with caplog.at_level(logging.ERROR, logger="treeexplorer"):
        job = Job(_boom, label="murtree on iris")
        job.start()
        assert job.wait(30)
    [record] = [r for r in caplog.records if r.name == "treeexplorer.jobs"]
    assert "murtree on iris" in record.getMessage()
    assert record.exc_info is not None and "the kernel ran out of slots" in str(record.exc_info[1])
    assert any(isinstance(e, JobFailed) for e in job.events())


def test_a_job_told_not_to_log_stays_quiet(caplog):
    with caplog.at_level(logging.ERROR, logger="treeexplorer"):
        job = Job(_boom, label="quiet", log_errors=False)
        job.start()
        assert job.wait(30)
    assert not [r for r in caplog.records if r.name == "treeexplorer.jobs"]
