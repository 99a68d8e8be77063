"""The Explorer's state and actions, free of widgets so it can be tested without a browser.

A :class:`Controller` holds the loaded table, the runs (each a :class:`~treeexplorer.front.Front` with a
colour and a label), the selected tree and the running job.  Views watch its parameters.
"""

from __future__ import annotations

import importlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import param

from treeexplorer.api import Prepared, prepare, run_prepared
from treeexplorer.data import DataError, Dataset, bundled_datasets, load_dataset, read_text_table
from treeexplorer.front import Front, FrontTree
from treeexplorer.registry import SolverSpec, available_solvers, get_solver
from treeexplorer.render.layout import PALETTE
from treeexplorer.ui.admission import max_upload_bytes
from treeexplorer.ui.jobs import Job, readable_error

__all__ = [
    "Controller",
    "Run",
    "RunSettings",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "discretizer_names",
    "parse_upload",
    "list_solvers",
    "solver_spec",
    "broken_solvers",
]

MAX_UPLOAD_BYTES = max_upload_bytes()  # 20 MB unless TREEEXPLORER_MAX_UPLOAD_MB says otherwise
MAX_UPLOAD_ROWS = 200_000
UPLOAD_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")


_BROKEN: dict[str, str] = {}


def list_solvers() -> list[str]:
    """Registered solvers, tolerating an adapter that fails to import (it is left out and remembered)."""
    try:
        return available_solvers()
    except Exception:  # one broken adapter must not take the whole app down: load the others one by one
        from treeexplorer import registry

        for name in registry.SOLVER_NAMES:
            try:
                importlib.import_module(f"treeexplorer.adapters.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"treeexplorer.adapters.{name}":
                    _BROKEN[name] = readable_error(exc)
            except Exception as exc:
                _BROKEN[name] = readable_error(exc)
        known = registry._REGISTRY  # the public accessors re-raise the broken import
        return [n for n in registry.SOLVER_NAMES if n in known] + sorted(set(known) - set(registry.SOLVER_NAMES))


def solver_spec(name: str) -> SolverSpec:
    """:func:`get_solver` that still works while another solver's adapter is broken."""
    try:
        return get_solver(name)
    except (NotImplementedError, ValueError):
        raise
    except Exception:
        from treeexplorer import registry

        if name in registry._REGISTRY:
            return registry._REGISTRY[name]
        raise ValueError(f"solver {name!r} could not be loaded: {_BROKEN.get(name, 'import error')}") from None


def broken_solvers() -> dict[str, str]:
    """Solvers whose adapter failed to import, with the reason (shown as a notice)."""
    return dict(_BROKEN)


def discretizer_names() -> list[str]:
    """Discretizers that exist in this installation (empty while the module is missing)."""
    try:
        from treeexplorer.discretize import DISCRETIZER_NAMES
    except ImportError:
        return []
    return list(DISCRETIZER_NAMES)


def parse_upload(content: bytes, filename: str, cap: int = MAX_UPLOAD_BYTES) -> pd.DataFrame:
    """Read an uploaded CSV/TSV/Parquet file into a DataFrame, refusing anything else with a clear message.

    Nothing is executed and nothing is written to disk: a Parquet file is read from an in-memory buffer.
    """
    name = Path(filename or "upload").name
    if not content:
        raise DataError(f"{name}: the file is empty")
    if len(content) > cap:
        raise DataError(
            f"{name}: {len(content) / 1e6:.1f} MB is over the {cap / 1e6:.0f} MB upload limit; "
            "use the Python API or the CLI for larger tables"
        )
    suffix = Path(name).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise DataError(
            f"{name}: unsupported file type {suffix or '(none)'}; upload a .csv, .tsv, .txt or .parquet file"
        )
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(io.BytesIO(content))
        except Exception as exc:  # pyarrow raises many types; all mean "not a readable Parquet file"
            raise DataError(f"{name}: not a readable Parquet file ({exc})") from None
    if b"\x00" in content[:4096]:
        raise DataError(f"{name}: looks like a binary file, not {suffix[1:].upper()} text")
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = content.decode("latin-1")
    return read_text_table(text, name)


@dataclass
class RunSettings:
    """What one run asks for (also its provenance in the legend)."""

    solver: str
    params: dict = field(default_factory=dict)
    discretizer: str | None = None
    n_bins: int | None = None
    mid_budget: float | None = None
    time_limit: float | None = 30.0

    def label(self) -> str:
        bits = [self.solver]
        if self.discretizer not in (None, "raw"):
            bits.append(
                self.discretizer
                + (f"/{self.n_bins}" if self.n_bins else "")
                + (f" {self.mid_budget:g}s anytime" if self.mid_budget and self.discretizer == "mid" else "")
            )
        for key in ("max_depth", "depth", "max_nodes", "cart_depth", "sparsity"):
            if self.params.get(key) is not None:
                bits.append(f"{key.replace('max_', '')}={self.params[key]}")
        return " · ".join(bits)


@dataclass
class Run:
    """A finished (or stopped) run drawn on the Pareto plot."""

    id: int
    label: str
    color: str
    front: Front
    settings: RunSettings

    @property
    def status_text(self) -> str:
        n = len(self.front)
        proven = sum(t.optimal for t in self.front)
        status = {"done": "done", "time_limit": "time limit reached", "cancelled": "cancelled"}.get(
            self.front.status, self.front.status
        )
        return f"{n} trees ({proven} proven optimal), {status} in {self.front.runtime_s:.2f} s"


class Controller(param.Parameterized):
    """State and actions of one Explorer session."""

    dataset_name = param.String(default="", doc="Name shown in provenance")
    columns = param.List(default=[], doc="Columns of the loaded table")
    target = param.String(default="", doc="Target column")
    test_size = param.Number(default=0.25, bounds=(0.0, 0.9))
    seed = param.Integer(default=0, bounds=(0, None))
    test_name = param.String(default="", doc="Name of an uploaded test file ('' = use test_size)")
    runs = param.List(default=[], doc="Runs shown on the Pareto plot")
    partial = param.Parameter(default=None, doc="Provisional run (best-so-far front) while a job streams")
    selected = param.Tuple(default=None, allow_None=True, length=2, doc="(run id, tree id)")
    compare = param.Integer(default=None, allow_None=True, doc="Tree id of the same run to compare with")
    running = param.Boolean(default=False)
    progress = param.Dict(default={})
    error = param.String(default="")
    notice = param.String(default="")
    data_version = param.Integer(default=0, doc="Bumped whenever the table or its split changes")

    def __init__(self, **params):
        super().__init__(**params)
        self._frame: pd.DataFrame | None = None  # uploaded table (bundled ones are reloaded by name)
        self._bundled: str | None = None
        self._dataset: Dataset | None = None
        self._test_frame: pd.DataFrame | None = None
        self._prep: Prepared | None = None
        self.job: Job | None = None
        self._next_id = 1
        self._closed = False

    # -- data ----------------------------------------------------------------------------------------
    @staticmethod
    def bundled() -> list[str]:
        return bundled_datasets()

    def load_bundled(self, name: str, target: str | None = None) -> bool:
        """Load a bundled dataset; returns False (and sets ``error``) when it cannot be loaded."""
        return self._load(lambda t: load_dataset(name, t), target, bundled=name, frame=None)

    def load_upload(self, content: bytes, filename: str, target: str | None = None) -> bool:
        """Load an uploaded table (size-capped, parsed in memory); False and ``error`` on bad input."""
        try:
            frame = parse_upload(content, filename)
        except DataError as exc:
            self.error = str(exc)
            return False
        stem = Path(filename).stem or "upload"
        return self._load(
            lambda t: load_dataset(frame, t, name=stem, max_rows=MAX_UPLOAD_ROWS), target, bundled=None, frame=frame
        )

    def _load(self, loader, target, bundled, frame) -> bool:
        try:
            ds = loader(target or None)
        except (DataError, ValueError) as exc:
            self.error = readable_error(exc)
            return False
        self._test_frame = None
        self._prep = None
        if frame is not None:
            cols = list(frame.columns)
        elif bundled == self._bundled and self.columns:
            cols = list(self.columns)  # same bundled table, new target: keep the file's column order
        else:
            cols = ds.schema.feature_names + [ds.schema.target]
        self._bundled, self._frame, self._dataset = bundled, frame, ds
        with param.parameterized.batch_call_watchers(self):
            self.error = ""
            self.notice = "; ".join(ds.notices)
            self.dataset_name = ds.name
            self.columns = [str(c) for c in cols]
            self.target = ds.schema.target
            self.test_name = ""
            self.data_version += 1
        return True

    def set_target(self, target: str) -> bool:
        """Reload the current table with another target column."""
        if target == self.target or self._dataset is None:
            return True
        if self._bundled is not None:
            return self.load_bundled(self._bundled, target)
        frame, name = self._frame, self._dataset.name
        return self._load(
            lambda t: load_dataset(frame, t, name=name, max_rows=MAX_UPLOAD_ROWS), target, bundled=None, frame=frame
        )

    def load_test_upload(self, content: bytes, filename: str) -> bool:
        """Use an uploaded table as the held-out set (instead of a split)."""
        try:
            frame = parse_upload(content, filename)
            if self._dataset is None:
                raise DataError("load a training table first")
            self._dataset.encode(frame, what=Path(filename).name)  # fail now, with the column named
        except DataError as exc:
            self.error = str(exc)
            return False
        self._test_frame = frame
        self._prep = None
        self.error = ""
        self.test_name = Path(filename).name
        self.data_version += 1
        return True

    def clear_test_upload(self) -> None:
        self._test_frame = None
        self._prep = None
        self.test_name = ""
        self.data_version += 1

    @param.depends("test_size", "seed", watch=True)
    def _split_changed(self):
        self._prep = None
        self.data_version += 1

    @property
    def dataset(self) -> Dataset | None:
        return self._dataset

    def prepared(self) -> Prepared:
        """The train/held-out split for the current settings (computed once, reused by every run)."""
        if self._dataset is None:
            raise DataError("no table loaded: pick a bundled dataset or upload a file")
        if self._prep is None:
            if self._test_frame is not None:
                self._prep = prepare(self._dataset, test=self._test_frame)
            else:
                self._prep = prepare(self._dataset, test_size=self.test_size or None, seed=self.seed)
        return self._prep

    # -- solvers -------------------------------------------------------------------------------------
    @staticmethod
    def solvers() -> list[str]:
        return list_solvers()

    @staticmethod
    def discretizers_for(solver: str) -> list[str]:
        """Discretizer choices for ``solver``; ``raw`` means the numeric columns as they are."""
        spec = solver_spec(solver)
        names = [n for n in discretizer_names() if n != "none"]
        if spec.input == "numeric":
            return ["raw", *names]
        default = spec.default_discretizer  # listed first, so it is what a new user gets
        return [default, *[n for n in names if n != default]]

    # -- running -------------------------------------------------------------------------------------
    def run(self, settings: RunSettings) -> Job | None:
        """Start ``settings`` in a worker thread (one job at a time per session); None when refused."""
        if self._closed:
            return None
        if self.running:
            self.error = "a run is already in progress: cancel it or wait for it to finish"
            return None
        try:
            spec = solver_spec(settings.solver)
            resolved = spec.resolve(settings.params)
            prep = self.prepared()
            disc = None if settings.discretizer in (None, "raw") else settings.discretizer
            if disc is None and spec.input == "binary":
                disc = spec.default_discretizer
            n_bins = settings.n_bins if disc is not None else None
            mid_budget = settings.mid_budget if disc == "mid" else None
            if settings.time_limit is not None and not settings.time_limit > 0:
                raise ValueError("time limit must be a positive number of seconds")
        except (DataError, ValueError, NotImplementedError) as exc:
            self.error = readable_error(exc)
            return None

        def work(control):
            return run_prepared(
                prep, spec, resolved, discretizer=disc, n_bins=n_bins, control=control, mid_budget=mid_budget
            )

        self.error = ""
        self.job = Job(work, settings.time_limit, label=settings.label(), session=id(self))
        self.job.settings = settings
        self.running = True
        self.progress = {"phase": "starting", "elapsed": 0.0}
        return self.job.start()

    def cancel(self) -> None:
        """Stop the running job; what it found so far is kept."""
        if self.running and self.job is not None:
            self.job.cancel()
            self.progress = {**self.progress, "phase": "cancelling"}

    def poll(self) -> bool:
        """Apply the job's queued events (UI thread); True while the job is still running."""
        job = self.job
        if job is None:
            return False
        ended = not job.running  # read before draining: every event is queued before the thread ends
        for kind, payload in job.events():
            if kind == "progress":
                partial = payload.pop("partial_front", None)
                self.progress = payload
                if isinstance(partial, Front) and len(partial):
                    # Best-so-far trees streamed by the pipeline: drawn as a provisional run until done.
                    self.partial = Run(0, f"{job.settings.label()} (running…)", "#999999", partial, job.settings)
                continue
            ended = True  # a result or an error is the job's last word; the thread only cleans up after it
            self.partial = None
            if kind == "done":
                self._add_run(payload, job.settings)
            else:
                self.error = payload if kind == "error" else f"Run stopped: {payload}"
        if ended:
            self.running = False
            return False
        return True

    def run_sync(self, settings: RunSettings, timeout: float | None = None) -> Run | None:
        """Run and wait (start-up default run, notebooks, tests); the new run or None on error."""
        job = self.run(settings)
        if job is None:
            return None
        n = len(self.runs)
        job.wait(timeout)
        self.poll()
        return self.runs[-1] if len(self.runs) > n else None

    def _add_run(self, front: Front, settings: RunSettings) -> None:
        rid = self._next_id
        self._next_id += 1
        used = {r.color for r in self.runs}
        color = next((c for c in PALETTE if c not in used), PALETTE[rid % len(PALETTE)])
        label = f"#{rid} {settings.label()}"
        if any(r.front.dataset != front.dataset for r in self.runs):
            label += f" · {front.dataset}"  # runs on different tables are overlaid: say which is which
        run = Run(rid, label, color, front, settings)
        notices = [n for n in front.notices if n]
        if front.status == "cancelled":
            notices.insert(0, f"run #{rid} cancelled: kept the {len(front)} tree(s) found so far (not proven)")
        elif front.status == "time_limit":
            notices.insert(0, f"run #{rid} hit the time limit: kept the {len(front)} tree(s) found so far (not proven)")
        with param.parameterized.batch_call_watchers(self):
            self.runs = [*self.runs, run]
            self.notice = "; ".join(notices)
            if len(front):
                best = front.best()
                self.selected = (rid, best.id)
                self.compare = None
            else:
                self.error = f"run #{rid} found no tree"

    def remove_run(self, rid: int) -> None:
        runs = [r for r in self.runs if r.id != rid]
        with param.parameterized.batch_call_watchers(self):
            if self.selected is not None and self.selected[0] == rid:
                self.selected = None
                self.compare = None
            self.runs = runs

    def clear_runs(self) -> None:
        with param.parameterized.batch_call_watchers(self):
            self.selected = None
            self.compare = None
            self.runs = []

    # -- selection -----------------------------------------------------------------------------------
    def run_by_id(self, rid: int) -> Run | None:
        """A run by id; id 0 is the provisional (still streaming) run."""
        if rid == 0:
            return self.partial
        return next((r for r in self.runs if r.id == rid), None)

    def select(self, rid: int, tree_id: int) -> None:
        run = self.run_by_id(rid)
        if run is None:
            raise KeyError(f"no run #{rid}")
        run.front[tree_id]  # raises KeyError naming the ids
        with param.parameterized.batch_call_watchers(self):
            if self.selected is None or self.selected[0] != rid:
                self.compare = None
            self.selected = (rid, tree_id)

    def selection(self) -> tuple[Run, FrontTree] | tuple[None, None]:
        if self.selected is None:
            return None, None
        run = self.run_by_id(self.selected[0])
        if run is None:
            return None, None
        try:
            return run, run.front[self.selected[1]]
        except KeyError:
            return None, None

    def compared(self) -> FrontTree | None:
        run, _ = self.selection()
        if run is None or self.compare is None:
            return None
        try:
            return run.front[self.compare]
        except KeyError:
            return None

    # -- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop this session's job (browser closed); the thread ends at the solver's next check."""
        self._closed = True
        if self.job is not None and self.job.running:
            self.job.cancel()
