"""The app's exact front: one ``contree`` front per data key, computed in the background, and every tree's gap.

After the first run on a table, target and split, :class:`ExactFronts` solves the exact error-vs-splits front
on the raw numeric columns (:func:`treeexplorer.gap.exact_front`, same training rows) in a background
:class:`~treeexplorer.jobs.Job` (admission-controlled, cancellable) when the data is small enough
(``auto_rows`` training rows, depth ≤ 3); otherwise it *offers* the computation (``offer``) with a time
limit.  When the front arrives, :func:`treeexplorer.gap.attach_gaps` stores ``gap_errors`` on every run of
that data (so the JSON exports carry it) and :func:`gap_text` words each tree's gap.

A stopped (time-limited or cancelled) exact run proves only some budgets; for the others only its lower
bound is known: the plot then draws a *bound* (no tree can be above it) and a tree's gap is given as a
range, never as more than was proven.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import param

from treeexplorer.front import Front, FrontTree
from treeexplorer.gap import GapError, attach_gaps, exact_front, optimum_by_splits
from treeexplorer.jobs import Job
from treeexplorer.tree import max_splits
from treeexplorer.ui.jobs import app_job, limit_error
from treeexplorer.ui.progress import describe

__all__ = [
    "ExactFronts",
    "ExactRecord",
    "gap_text",
    "reference_curve",
    "AUTO_ROWS",
    "AUTO_DEPTH",
    "MAX_DEPTH",
    "EXACT_LABEL",
    "BOUND_LABEL",
]

AUTO_ROWS = 50_000  # training rows up to which the exact front is computed without asking
AUTO_DEPTH = 3  # deepest exact front computed without asking (depth 3: seconds on ten thousand rows)
MAX_DEPTH = 4  # deepest exact front the button offers (with a time limit: depth 4 can take hours)
ENV_AUTO_ROWS = "TREEEXPLORER_EXACT_AUTO_ROWS"  # 0 turns the automatic computation off
EXACT_LABEL = "exact optimum (contree, raw features)"
BOUND_LABEL = "bound on the optimum (contree stopped, raw features)"


def _auto_rows_default() -> int:
    raw = os.environ.get(ENV_AUTO_ROWS, "").strip()
    try:
        return max(0, int(raw)) if raw else AUTO_ROWS
    except ValueError:
        return AUTO_ROWS


@dataclass(frozen=True)
class ExactJob:
    """What the exact front's job needs back when it ends: the data it solves, at which depth."""

    data_key: tuple
    depth: int
    prep: object


@dataclass
class ExactRecord:
    """The exact front of one data key and the prepared data it was solved on."""

    front: Front
    depth: int
    prep: object = None

    @property
    def proven(self) -> bool:
        """True when every budget is proven (the run was not stopped)."""
        return self.front.status == "done"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _bounds(record: ExactRecord) -> dict:
    """``{k: (lower bound, best found)}`` on the fewest errors with at most ``k`` splits (equal when proven)."""
    opt = optimum_by_splits(record.front)
    top = max_splits(record.depth)
    lbs = record.front.stats.get("lower_bounds") or []
    out = {}
    for k in range(top + 1):
        found = [t.metrics["train_errors"] for t in record.front.trees if t.metrics["splits"] <= k]
        best = min(found) if found else None
        if k in opt:
            out[k] = (opt[k], opt[k])
        elif k < len(lbs):
            out[k] = (int(lbs[k]), best)
    return out


EQUALS_OPTIMUM = "not proven by its run; equals the exact optimum"


def gap_text(entry: FrontTree, record: ExactRecord | None, comparable: bool = True) -> str:
    """One tree's gap to the exact front in words ("" when no exact front is known for its data).

    Uses the ``gap_errors`` that :func:`~treeexplorer.gap.attach_gaps` stored; for a budget a stopped exact
    run did not prove, states only what its lower bound proves.
    """
    if record is None:
        return ""
    if not comparable:
        return "not comparable with the exact front (its training rows differ)"
    m = entry.metrics
    k, e = int(m["splits"]), int(m["train_errors"])
    if entry.tree.has_multiway:
        return "multiway splits: not comparable with the exact front's binary splits (gap not known)"
    if m["depth"] > record.depth:
        return f"deeper than the exact front (depth {record.depth}): gap not known"
    if k > max_splits(record.depth):
        return f"more splits than the exact front covers (depth {record.depth}): gap not known"
    gap = m.get("gap_errors")
    if gap is not None:
        if gap == 0:
            # never "not proven optimal" and "optimal" side by side: say who proved what
            return "optimal (equals the exact front)" if entry.optimal else EQUALS_OPTIMUM
        return f"{_plural(gap, 'error')} above the optimum for its {_plural(k, 'split')}"
    lb, best = _bounds(record).get(k, (None, None))
    if lb is None:
        return "exact run stopped before bounding this number of splits: gap not known"
    hi = e - lb  # the optimum is at least lb, so the gap is at most this
    if hi <= 0:
        if not entry.optimal:
            return "not proven by its run; meets the exact run's proven lower bound, so optimal"
        return "optimal (meets the exact run's proven lower bound)"
    lo = max(0, e - best) if best is not None else 0  # a better tree was found: the gap is at least this
    text = f"{_plural(hi, 'error')} above the proven lower bound for its {_plural(k, 'split')} (optimum not proven)"
    return text + (f"; at least {lo} above the optimum" if lo > 0 else "")


def reference_curve(record: ExactRecord | None) -> dict | None:
    """The reference line: ``{"splits": [...], "accuracy": [...], "label": str, "proven": bool}``.

    Proven budgets give the optimum's accuracy; budgets a stopped run did not prove give the accuracy of
    its lower bound (an upper bound on any tree's accuracy), labelled as a bound.
    """
    if record is None or not record.front.n_train:
        return None
    bounds = _bounds(record)
    if not bounds:
        return None
    n = record.front.n_train
    ks = sorted(bounds)
    proven = record.proven or all(lo == best for lo, best in bounds.values())
    return {
        "splits": ks,
        "accuracy": [1.0 - bounds[k][0] / n for k in ks],
        "label": EXACT_LABEL if proven else BOUND_LABEL,
        "proven": proven,
    }


def _needed_depth(runs) -> int:
    depths = [int(t.metrics["depth"]) for r in runs for t in r.front]
    return max(1, max(depths, default=1))


class ExactFronts(param.Parameterized):
    """A session's exact fronts, one per data key, and the background job computing one.

    Parameters
    ----------
    controller : Controller
        The session (its current data, runs and prepared split).
    auto : bool
        Compute the exact front of small data on its own after a run (the Explorer turns it on; a bare
        controller only offers it, so scripts and tests start no job they did not ask for).
    auto_rows : int
        Training rows up to which the front is computed without asking (``TREEEXPLORER_EXACT_AUTO_ROWS``;
        0: always ask).
    """

    status = param.String(default="", doc="What the exact front of the current data is, in words")
    running = param.Boolean(default=False, doc="An exact front is being computed")
    version = param.Integer(default=0, doc="Bumped when an exact front arrives (gaps changed)")
    offer = param.Dict(
        default=None,
        allow_None=True,
        doc="{depth, why, known}: the button's offer for the current data (known: the proven depth, or 0)",
    )
    auto_rows = param.Integer(default=AUTO_ROWS, bounds=(0, None))
    auto = param.Boolean(default=False, doc="Compute small data's exact front after its first run (the Explorer's)")

    def __init__(self, controller, **params):
        params.setdefault("auto_rows", _auto_rows_default())
        super().__init__(**params)
        self._c = controller
        self._records: dict = {}  # data key -> ExactRecord
        self._incomparable: set = set()  # id() of fronts attach_gaps refused (other rows)
        self._tried: set = set()  # (data key, depth) computed automatically once already
        self.job: Job | None = None
        self._progress: dict = {}  # the exact job's last progress report
        controller.param.watch(lambda e: self.refresh(start=True), ["data_version"])

    # -- queries -------------------------------------------------------------------------------------
    def record(self, key: tuple | None = None) -> ExactRecord | None:
        """The exact front of ``key`` (default: the current data), None while unknown."""
        return self._records.get(self._c.data_key() if key is None else key)

    def gaps(self, runs) -> dict:
        """``{(run id, tree id): gap text}`` for ``runs`` (empty strings while no exact front is known)."""
        return {(run.id, t.id): self.text(run, t) for run in runs for t in run.front}

    def text(self, run, entry: FrontTree) -> str:
        """:func:`gap_text` of tree ``entry`` of ``run`` against its data's exact front."""
        return gap_text(entry, self._records.get(run.data_key), id(run.front) not in self._incomparable)

    # -- hooks ---------------------------------------------------------------------------------------
    def run_added(self, run) -> None:
        """A run finished: store its gaps if the exact front is known, adopt it if it is one, else start one."""
        rec = self._records.get(run.data_key)
        if self._adoptable(run, rec):
            prep = self._c.prepared() if run.data_key == self._c.data_key() else None
            rec = self._records[run.data_key] = ExactRecord(run.front, int(run.front.params["max_depth"]), prep)
            self._attach(run.data_key)
        elif rec is not None:
            self._attach_one(run, rec)
        if run.data_key == self._c.data_key():
            self.refresh(start=True)

    @staticmethod
    def _adoptable(run, rec) -> bool:
        """A finished whole-front contree run on the same data is itself the exact front (no recompute)."""
        f = run.front
        p = f.params
        if f.solver != "contree" or f.status != "done" or not p.get("front", True) or p.get("sparsity") is not None:
            return False
        if p.get("max_nodes") is not None or p.get("max_depth") is None:
            return False
        if f.search_space.get("kind") != "raw":  # a discretized contree run is optimal over its tests only
            return False
        return rec is None or not rec.proven or int(p["max_depth"]) > rec.depth

    def refresh(self, start: bool = False) -> None:
        """Recompute the offer and the status for the current data; ``start``: begin the automatic run."""
        c = self._c
        key = c.data_key()
        runs = [r for r in c.all_runs if r.data_key == key]
        rec = self._records.get(key)
        job_here = self.running and self.job is not None and self.job.meta.data_key == key
        offer = None
        if runs and not job_here:
            need = _needed_depth(runs)
            try:
                n_train = len(c.prepared().y_train)
            except Exception:
                n_train = None
            auto_depth = min(need, AUTO_DEPTH)
            small = self.auto and n_train is not None and n_train <= self.auto_rows
            covered = rec is not None and rec.depth >= auto_depth and rec.proven
            if small and not covered and start and not self.running and (key, auto_depth) not in self._tried:
                self._tried.add((key, auto_depth))  # once: a stopped or failed automatic run is not repeated
                self.start(auto_depth, time_limit=None)
                job_here = True
            else:
                depth = min(need, MAX_DEPTH)
                if rec is None or rec.depth < depth or not rec.proven:
                    if not self.auto:
                        why = "automatic computation is off"
                    elif not small and n_train is not None:
                        why = f"{n_train:,} training rows; automatic only up to {self.auto_rows:,}"
                    elif need > AUTO_DEPTH:
                        why = f"the trees reach depth {need}; automatic only up to depth {AUTO_DEPTH}"
                    else:
                        why = "the exact run was stopped before proving every number of splits"
                    offer = {"depth": depth, "why": why, "known": rec.depth if rec is not None and rec.proven else 0}
        self.offer = offer
        self.status = self._status_text(rec, job_here)

    def _status_text(self, rec: ExactRecord | None, job_here: bool) -> str:
        if job_here:
            depth = self.job.meta.depth
            text = f"Computing the exact front (contree, depth {depth}, raw features) in the background"
            done, _ = describe(self._progress, {"max_depth": depth}, self.job.control.time_limit)
            return f"{text}: {done}." if done else f"{text}…"
        if rec is None:
            return ""
        f = rec.front
        if rec.proven:
            return (
                f"Exact front known (contree, depth {rec.depth}, raw features, {f.runtime_s:.2f} s): each tree "
                "shows its errors above the optimum for its number of splits."
            )
        return (
            f"The exact run (contree, depth {rec.depth}) stopped ({f.status}) after {f.runtime_s:.1f} s: the dashed "
            "line is a bound on the optimum where not proven, and gaps are given against its lower bound."
        )

    # -- the job -------------------------------------------------------------------------------------
    def start(self, depth: int, time_limit: float | None = None) -> Job | None:
        """Compute the current data's exact front at ``depth`` in the background (None when refused)."""
        c = self._c
        if getattr(c, "_closed", False):
            return None
        if self.running:
            c.error = "the exact front is already being computed: stop it or wait for it"
            return None
        if not 1 <= int(depth) <= MAX_DEPTH:
            c.error = f"exact front depth must be 1 to {MAX_DEPTH}, got {depth}"
            return None
        if (why := limit_error(time_limit)) is not None:
            c.error = f"exact front: {why}"
            return None
        try:
            prep = c.prepared()
        except Exception as exc:
            c.error = str(exc)
            return None
        depth = int(depth)

        def work(control):
            return exact_front(prep, max_depth=depth, control=control)

        # its own admission identity: counted against the server-wide cap, without taking the session's
        # one slot (the user can keep running solvers while it computes)
        label, meta = f"exact front (contree, depth {depth})", ExactJob(c.data_key(), depth, prep)
        job = app_job(work, time_limit, label=label, meta=meta, session=(id(c), "exact"))
        self.job = job
        self._progress = {}
        self.running = True
        job.start()
        self.refresh()
        return job

    def cancel(self) -> None:
        """Stop the exact computation (what it proved so far is kept)."""
        if self.running and self.job is not None:
            self.job.cancel()

    def poll(self) -> bool:
        """Apply the job's result (UI thread); True while it still runs."""
        if self.job is None:
            return False
        if self.job.drain(progress=self._on_progress, done=self._on_done, failed=self._failed, cancelled=self._failed):
            return True
        self.running = False
        self.version += 1
        self.refresh(start=True)  # a deeper run may have arrived meanwhile
        return self.running

    def _on_progress(self, info: dict) -> None:
        if info.get("phase"):
            self._progress = info  # the computing state says how far it is
            self.status = self._status_text(self.record(self.job.meta.data_key), True)

    def _on_done(self, front: Front) -> None:
        meta: ExactJob = self.job.meta
        if len(front):
            old = self._records.get(meta.data_key)
            if old is None or old.depth <= meta.depth or not old.proven:
                self._records[meta.data_key] = ExactRecord(front, meta.depth, meta.prep)
                self._attach(meta.data_key)

    def _failed(self, message: str) -> None:
        self._c.notice = f"exact front not computed: {message}"

    def close(self) -> None:
        """Stop the job (session closed)."""
        if self.job is not None and self.job.running:
            self.job.cancel()

    # -- gaps ----------------------------------------------------------------------------------------
    def _attach(self, key: tuple) -> None:
        rec = self._records[key]
        for run in self._c.all_runs:
            if run.data_key == key:
                self._attach_one(run, rec)

    def _attach_one(self, run, rec: ExactRecord) -> None:
        if run.front is rec.front:
            attach_gaps(run.front, rec.front)
            return
        try:
            attach_gaps(run.front, rec.front, rec.prep)
        except GapError as exc:
            self._incomparable.add(id(run.front))
            for t in run.front:
                t.metrics["gap_errors"] = None
            self._c.notice = f"run #{run.id}: no gap to the exact front ({exc})"
