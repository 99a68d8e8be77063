"""Admission control (a server-wide cap on concurrent solves) and session isolation, without a browser."""

from __future__ import annotations

import io
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402  (registers uigreedy / uislow / uifail)
from treeexplorer.solvers import Cancelled  # noqa: E402
from waiting import HANG_S, wait_progress, wait_until  # noqa: E402

from treeexplorer.jobs import Job, JobCancelled, JobDone, JobFailed, JobProgress  # noqa: E402
from treeexplorer.ui import admission  # noqa: E402
from treeexplorer.ui.admission import (  # noqa: E402
    AdmissionError,
    Scheduler,
    get_scheduler,
    queued_text,
    set_scheduler,
)
from treeexplorer.ui.controller import Controller, RunSettings, parse_upload  # noqa: E402
from treeexplorer.ui.jobs import app_job  # noqa: E402

IRIS_CSV = (Path(__file__).resolve().parent.parent / "assets" / "iris.csv").read_bytes()


# -- the scheduler ---------------------------------------------------------------------------------------


def test_fifo_queue_positions_and_release():
    s = Scheduler(max_jobs=1)
    a, b, c, d = (s.submit(k) for k in "abcd")
    assert a.state == "running" and [t.position for t in (b, c, d)] == [0, 1, 2]
    assert s.stats()["running"] == 1 and s.stats()["queued"] == 3
    a.release()
    assert b.state == "running" and [c.position, d.position] == [0, 1]
    a.release()  # idempotent: must not free a second slot
    assert c.state == "queued" and s.stats()["running"] == 1
    b.release()
    c.release()
    d.release()
    assert s.stats() | {} == {**s.stats(), "running": 0, "queued": 0, "sessions": 0}


def test_cancel_while_queued_moves_the_others_up():
    s = Scheduler(max_jobs=1)
    a, b, c = s.submit("a"), s.submit("b"), s.submit("c")
    b.cancel()
    assert b.state == "cancelled" and b.position is None and c.position == 0
    assert not b.wait()  # a cancelled request is never admitted
    a.release()
    assert c.state == "running" and b.state == "cancelled"
    a.cancel()  # cancelling a running ticket is a no-op (its solver is stopped through Control)
    c.release()
    assert s.stats()["cancelled_total"] == 1 and s.stats()["admitted_total"] == 2


def test_per_session_limit_counts_running_and_queued():
    s = Scheduler(max_jobs=1, per_session=1)
    a = s.submit("alice")
    with pytest.raises(AdmissionError, match="already has 1 run going or queued"):
        s.submit("alice")
    b = s.submit("bob")  # another session is not affected
    with pytest.raises(AdmissionError):
        s.submit("bob")  # queued counts too
    a.release()
    s.submit("alice").release()  # allowed again once the first one ended
    b.release()
    two = Scheduler(max_jobs=4, per_session=2)
    x, y = two.submit("carol"), two.submit("carol")
    with pytest.raises(AdmissionError, match="2 runs"):
        two.submit("carol")
    anon = [two.submit(None) for _ in range(5)]  # no session: never limited, only capped
    assert sum(t.state == "running" for t in anon) == 2
    for t in (x, y, *anon):
        t.release()
    assert two.stats()["running"] == 0 and two.stats()["queued"] == 0


def test_wait_reports_positions_and_honours_stop_and_timeout():
    s = Scheduler(max_jobs=1)
    holder = s.submit("h")
    first, second = s.submit("a"), s.submit("b")
    seen: list[int] = []
    done = threading.Event()
    result = {}

    def waiter():
        result["admitted"] = second.wait(seen.append, poll=0.02)
        done.set()

    threading.Thread(target=waiter, daemon=True).start()
    _until(lambda: seen == [1])  # the waiter's thread reported its place (a loaded machine starts it late)
    holder.release()  # first runs, second becomes next in line
    _until(lambda: seen == [1, 0])
    first.release()
    assert done.wait(HANG_S) and result["admitted"]
    assert seen == [1, 0] and second.state == "running"
    second.release()

    blocker = s.submit("h")
    t = s.submit("c")
    looks = []

    def should_stop():  # the caller gives up at the wait's second look (an event, not a guessed pause)
        looks.append(1)
        return len(looks) >= 2

    assert not t.wait(should_stop=should_stop, poll=0.02)
    assert t.state == "cancelled" and len(looks) == 2  # it left the queue at the first look that said stop
    t2 = s.submit("d")
    assert not t2.wait(timeout=0.1) and t2.state == "cancelled"
    blocker.release()
    assert s.stats()["sessions"] == 0


def test_cap_holds_under_concurrent_load_with_random_cancels():
    s = Scheduler(max_jobs=3)
    lock = threading.Lock()
    now = {"running": 0, "peak": 0, "ran": 0, "cancelled": 0}
    order: list[int] = []
    rng = random.Random(7)
    plan = [rng.random() < 0.25 for _ in range(40)]

    def client(i: int, cancel_it: bool):
        t = s.submit(f"s{i}")
        if cancel_it:
            threading.Timer(0.01, t.cancel).start()
        if not t.wait(poll=0.01):
            with lock:
                now["cancelled"] += 1
            return
        with lock:
            order.append(t.seq)
            now["running"] += 1
            now["peak"] = max(now["peak"], now["running"])
        time.sleep(0.01)
        with lock:
            now["running"] -= 1
            now["ran"] += 1
        t.release()

    threads = []
    for i, c in enumerate(plan):
        th = threading.Thread(target=client, args=(i, c))
        threads.append(th)
        th.start()
    for th in threads:
        th.join(HANG_S)
    assert not any(th.is_alive() for th in threads)
    assert now["peak"] <= 3 and now["peak"] >= 2
    assert now["ran"] + now["cancelled"] == 40 and now["ran"] >= 40 - sum(plan)
    st = s.stats()
    assert st["running"] == st["queued"] == st["sessions"] == 0
    assert st["admitted_total"] == now["ran"] and st["cancelled_total"] == now["cancelled"]


def test_settings_come_from_the_environment(monkeypatch):
    old = set_scheduler(None)
    try:
        monkeypatch.setenv("TREEEXPLORER_MAX_JOBS", "3")
        monkeypatch.setenv("TREEEXPLORER_JOBS_PER_SESSION", "2")
        s = get_scheduler()
        assert (s.max_jobs, s.per_session) == (3, 2) and get_scheduler() is s
        set_scheduler(None)
        monkeypatch.setenv("TREEEXPLORER_MAX_JOBS", "many")
        with pytest.raises(AdmissionError, match="TREEEXPLORER_MAX_JOBS='many' is not a whole number"):
            get_scheduler()
        monkeypatch.setenv("TREEEXPLORER_MAX_JOBS", "0")
        with pytest.raises(AdmissionError, match="must be positive"):
            get_scheduler()
        monkeypatch.delenv("TREEEXPLORER_MAX_JOBS")
        monkeypatch.delenv("TREEEXPLORER_JOBS_PER_SESSION")
        assert get_scheduler().max_jobs == admission.default_max_jobs() >= 1
    finally:
        set_scheduler(old)
    monkeypatch.setenv("TREEEXPLORER_MAX_UPLOAD_MB", "1.5")
    assert admission.max_upload_bytes() == int(1.5 * 2**20)
    monkeypatch.delenv("TREEEXPLORER_MAX_UPLOAD_MB")
    assert admission.max_upload_bytes() == 20 * 2**20
    with pytest.raises(AdmissionError):
        Scheduler(max_jobs=0)
    assert queued_text(2) == "queued: 2 ahead of you" and queued_text(0) == "queued: next in line"


# -- the job runner's hook -------------------------------------------------------------------------------


def _blocking_work(gate: threading.Event):
    def work(control):
        while not gate.is_set():
            if control.cancelled:
                raise Cancelled()
            time.sleep(0.01)
        return "ok"

    return work


def _drain(job: Job, timeout: float = HANG_S) -> list:
    assert job.wait(timeout), "job did not end"
    return job.events()


_until = wait_until  # another thread makes ``cond()`` true (on a loaded machine, later than one expects)


def _progress(job: Job) -> list[str]:
    """The job's next progress phases: its thread posts them when the queue moves, so wait for one."""
    out: list[str] = []
    _until(lambda: out.extend(e.info["phase"] for e in job.events() if isinstance(e, JobProgress)) or out)
    return out


def test_job_queues_reports_its_place_and_can_be_cancelled_while_queued():
    s = Scheduler(max_jobs=1)
    gate = threading.Event()
    first = app_job(_blocking_work(gate), session="a", scheduler=s).start()
    second = app_job(_blocking_work(gate), session="b", scheduler=s).start()
    third = app_job(lambda control: "third", session="c", scheduler=s).start()
    assert _progress(second) == ["queued: next in line"]
    assert second.running and second.ticket.state == "queued"
    assert _progress(third) == ["queued: 1 ahead of you"]
    second.cancel()
    # it leaves the queue at once: it ends while the job ahead of it still holds the only slot
    assert _drain(second) == [JobCancelled("cancelled while queued, before it started")]
    assert first.running and not gate.is_set()
    assert _progress(third) == ["queued: next in line"]
    assert first.running  # the other sessions' jobs go on
    gate.set()
    assert _drain(first) == [JobDone("ok")]
    assert _drain(third) == [JobDone("third")]
    assert s.stats()["running"] == s.stats()["queued"] == 0


def test_a_session_over_its_limit_gets_a_message_not_a_second_job():
    s = Scheduler(max_jobs=2)
    gate = threading.Event()
    one = app_job(_blocking_work(gate), session="a", scheduler=s).start()
    two = app_job(lambda control: "never", session="a", scheduler=s).start()
    (event,) = _drain(two)
    assert isinstance(event, JobFailed) and "already has 1 run" in event.message and not two.running
    gate.set()
    assert _drain(one) == [JobDone("ok")]


def test_slot_is_released_after_an_error():
    s = Scheduler(max_jobs=1)

    def boom(control):
        raise ValueError("bad column x")

    assert _drain(app_job(boom, session="a", scheduler=s).start()) == [JobFailed("bad column x")]
    assert _drain(app_job(lambda control: 1, session="a", scheduler=s).start()) == [JobDone(1)]
    assert s.stats()["running"] == 0


# -- isolation between sessions (two Controllers, the process-wide scheduler) -----------------------------


@pytest.fixture
def two_sessions():
    fakes.register_fakes()
    old = set_scheduler(Scheduler(max_jobs=2))
    sessions = [Controller(), Controller()]
    for c in sessions:
        assert c.load_bundled("iris")
    yield sessions
    for c in sessions:
        c.close()
        if c.job is not None:
            c.job.wait(2)
    set_scheduler(old)
    fakes.unregister_fakes()


def _finish(c: Controller, timeout: float = HANG_S) -> None:
    assert c.job.wait(timeout), "job did not finish"
    c.poll()
    assert not c.running


def test_cancel_error_and_close_of_one_session_leave_the_other_alone(two_sessions):
    a, b = two_sessions
    slow = RunSettings("uislow", {"max_depth": 4, "step": 0.2}, time_limit=30)
    b.run(slow)
    a.run(RunSettings("uislow", {"max_depth": 12, "step": 0.3}, time_limit=30))
    wait_progress(a, lambda p: p.get("trees", 0) >= 1, "a's first tree")
    a.cancel()
    _finish(a)
    assert a.runs[-1].front.status == "cancelled"
    a.run(RunSettings("uifail", {}))  # an error in a's worker thread
    _finish(a)
    assert a.error and not b.error
    a.run(RunSettings("uislow", {"max_depth": 12, "step": 0.3}, time_limit=30))
    a.close()  # the tab is closed
    _finish(a)
    _finish(b)
    assert not b.error and len(b.runs) == 1 and b.runs[0].front.status == "done"
    assert len(b.runs[0].front) == 5  # every depth 0..4: not cut short by a's cancel, error or close
    assert get_scheduler().stats()["running"] == 0


def test_queued_session_shows_its_place_and_cancelling_it_spares_the_running_ones(two_sessions):
    a, b = two_sessions
    c = Controller()
    assert c.load_bundled("iris")
    long = RunSettings("uislow", {"max_depth": 10, "step": 0.3}, time_limit=30)  # still running after c's cancel
    a.run(long)
    b.run(long)
    c.run(RunSettings("uigreedy", {}))
    report = wait_progress(c, lambda p: p.get("phase", "").startswith("queued"), "c's place in the queue")
    assert report["phase"] == "queued: next in line" and c.running
    c.cancel()
    _finish(c)
    assert c.error == "Run stopped: cancelled while queued, before it started" and not c.runs
    assert a.running and b.running
    _finish(a)
    _finish(b)
    assert a.runs[-1].front.status == b.runs[-1].front.status == "done"
    c.run(RunSettings("uigreedy", {}))  # the queue moves on
    _finish(c)
    assert len(c.runs) == 1 and not c.error
    c.close()


def test_uploaded_tables_are_per_session_and_in_memory(two_sessions, monkeypatch, tmp_path):
    a, b = two_sessions
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # anything written to a temp dir would land here
    buf = io.BytesIO()
    pd.read_csv(io.BytesIO(IRIS_CSV)).head(60).to_parquet(buf)
    assert a.load_upload(IRIS_CSV, "mine.csv")
    assert b.load_upload(buf.getvalue(), "theirs.parquet")
    assert a.dataset.name == "mine" and a.dataset.n_rows == 150
    assert b.dataset.name == "theirs" and b.dataset.n_rows == 60
    assert a._frame is not b._frame
    assert list(tmp_path.iterdir()) == []  # nothing on disk
    with pytest.raises(Exception, match="not a readable Parquet"):
        parse_upload(b"PAR1 not really", "x.parquet")
    b.load_bundled("iris")
    assert a.dataset.name == "mine"  # b's new table does not replace a's


def test_a_sessions_periodic_callbacks_never_overlap():
    """Panel's thread pool (``--num-threads``) starts a periodic tick without waiting for the last one: a slow
    poll ran twice at once (the shared server's tracebacks).  The session's callbacks now run one at a time."""
    from treeexplorer.ui.viewkit import one_at_a_time

    lock = threading.Lock()
    inside, most, calls = [0], [0], []
    release = threading.Event()

    def poll():
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        release.wait(HANG_S)  # a slow poll: busy until every other tick below has come and gone
        calls.append(1)
        inside[0] -= 1
        return True

    other = one_at_a_time(lambda: poll(), lock)  # a second poller of the same session shares the lock
    mine = one_at_a_time(poll, lock)
    slow = threading.Thread(target=mine)
    slow.start()
    wait_until(lambda: inside[0] == 1, what="the first tick inside its poll")
    ticks = [threading.Thread(target=f) for _ in range(10) for f in (mine, other)]
    for t in ticks:
        t.start()
    for t in ticks:
        t.join(HANG_S)
    assert not any(t.is_alive() for t in ticks), "a tick waited for the running poll instead of being skipped"
    release.set()
    slow.join(HANG_S)
    assert most[0] == 1 and len(calls) == 1  # never two at once; the overlapping ticks skipped
    assert mine() is True and mine.__name__ == "poll"  # alone, it runs and answers as the callback
