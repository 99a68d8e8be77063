"""The Explorer's state and actions, free of widgets so it can be tested without a browser.

A :class:`Controller` holds the loaded table, the runs (each a :class:`~treeexplorer.front.Front` with a
colour and a label), the selected tree and the running job.  Views watch its parameters.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
import param

from treeexplorer.api import Prepared, prepare, run_prepared
from treeexplorer.claims import plural
from treeexplorer.columns import column_summary
from treeexplorer.compare import dominated_by, more_tests_rerun
from treeexplorer.cv import CVFront
from treeexplorer.data import (
    DataError,
    Dataset,
    ManyClassesError,
    ReadLimits,
    bundled_datasets,
    load_dataset,
    read_table_bytes,
)
from treeexplorer.front import Front, FrontTree
from treeexplorer.jobs import Job
from treeexplorer.objective import CLASS_WEIGHT_MODES
from treeexplorer.registry import COMMON_PARAM_NAMES, SolverSpec, available_solvers, get_solver, unavailable_solvers
from treeexplorer.render.layout import PALETTE
from treeexplorer.request import RunRequest
from treeexplorer.ui.admission import max_upload_bytes, mib
from treeexplorer.ui.cvrun import FOLD_CHOICES, cv_choice, cv_summary, cv_work
from treeexplorer.ui.defaults import DEFAULT_HELD_OUT, DEFAULT_TIME_LIMIT, HELD_OUT_RANGE, UPLOAD_SUFFIXES
from treeexplorer.ui.gapview import ExactFronts
from treeexplorer.ui.jobs import app_job, readable_error
from treeexplorer.ui.state import TableStates
from treeexplorer.ui.warm import kernels_first

__all__ = [
    "Controller",
    "Run",
    "RunSettings",
    "SetCloud",
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ROWS",
    "discretizer_names",
    "parse_upload",
    "list_solvers",
    "solver_spec",
    "broken_solvers",
    "missing_rows",
    "dominance",
]

MAX_UPLOAD_BYTES = max_upload_bytes()  # 20 MiB unless TREEEXPLORER_MAX_UPLOAD_MB says otherwise
MAX_UPLOAD_ROWS = 200_000
MAX_UPLOAD_COLUMNS = 10_000  # counted in the header, before the table is parsed
EXPANSION_FACTOR = 4  # a compressed upload may expand to this many times the upload cap, no more


def list_solvers() -> list[str]:
    """Registered solvers (the registry's one list; a solver that failed to load is left out)."""
    return available_solvers()


def solver_spec(name: str) -> SolverSpec:
    """:func:`get_solver`, with a solver that failed to load reported as a ``ValueError`` (an alert)."""
    try:
        return get_solver(name)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None


def broken_solvers() -> dict[str, str]:
    """Solvers (or plug-in modules) that failed to load, with the reason (shown as a notice)."""
    return unavailable_solvers()


def discretizer_names() -> list[str]:
    """The discretizers of :mod:`treeexplorer.discretize` (its registry is the one list)."""
    from treeexplorer.discretize import DISCRETIZER_NAMES

    return list(DISCRETIZER_NAMES)


def missing_rows(frame: pd.DataFrame) -> int:
    """Rows with a missing value (what "drop rows with missing values" would drop)."""
    try:  # one home for the count once the data layer has it
        from treeexplorer.data import count_missing_rows
    except ImportError:
        return int(frame.isna().any(axis=1).sum())
    return int(count_missing_rows(frame)[0])


def missing_by_column(frame: pd.DataFrame) -> dict[str, int]:
    """Missing values per column of the file (only the columns that have some)."""
    from treeexplorer.data import count_missing_rows

    return count_missing_rows(frame)[1]


def dominance(runs) -> dict[tuple[int, int], str]:
    """``{(run id, tree id): "dominated by run #k ..."}`` for proven-optimal trees another run beats.

    Only runs on the same data are compared (the plot shows one data set's runs at a time).
    """
    out = {}
    for run in runs:
        others = {r.id: r.front for r in runs if r.id != run.id}
        for tree_id, (_, _, text) in dominated_by(run.front, others).items():
            out[(run.id, tree_id)] = text
    return out


def parse_upload(content: bytes, filename: str, cap: int = MAX_UPLOAD_BYTES) -> pd.DataFrame:
    """Read an uploaded CSV/TSV/Parquet file into a DataFrame, refusing anything else with a clear message.

    Nothing is executed and nothing is written to disk: a Parquet file is read from an in-memory buffer.
    """
    name = Path(filename or "upload").name
    if not content:
        raise DataError(f"{name}: the file is empty")
    if len(content) > cap:
        raise DataError(
            f"{name}: {mib(len(content))} is over the {mib(cap)} upload limit; "
            "use the Python API or the CLI for larger tables"
        )
    suffix = Path(name).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        raise DataError(
            f"{name}: unsupported file type {suffix or '(none)'}; upload a .csv, .tsv, .txt or .parquet file"
        )
    if suffix in (".parquet", ".pq") and not content.startswith(b"PAR1"):
        raise DataError(f"{name}: not a readable Parquet file (no Parquet header); upload the table itself")
    # the one reader (format by content, UTF-16, gzip, ...), bounded while it reads: a bomb or a huge header
    # stops within a few times the upload cap
    limits = ReadLimits(EXPANSION_FACTOR * cap, MAX_UPLOAD_COLUMNS, MAX_UPLOAD_ROWS, "an upload")
    return read_table_bytes(content, name, limits=limits)


@dataclass
class RunSettings:
    """What one run asks for (also its provenance in the legend)."""

    solver: str
    params: dict = field(default_factory=dict)
    discretizer: str | None = None
    n_bins: int | None = None
    mid_budget: float | None = None
    time_limit: float | None = DEFAULT_TIME_LIMIT
    cv: int | None = None  # cross-validate with this many folds (None: a plain run)
    name: str | None = None  # the legend's words for a run solved elsewhere (add_fronts), else made up
    class_weight: str | dict | None = None  # "balanced" or {class: weight} (the sidebar's "Weigh the classes")

    def request(self) -> RunRequest:
        """The run these settings ask for, checked (:meth:`RunRequest.build`: the gate every entry point uses).

        ``raw`` (or no discretizer) is the solver's default: the raw columns of a numeric solver, the default
        discretizer of a binary one; ``n_bins`` and ``mid_budget`` apply only where a discretizer (MID) takes them.
        """
        spec = solver_spec(self.solver)
        disc = None if self.discretizer in (None, "raw") else self.discretizer
        if disc is None and spec.input == "binary":
            disc = spec.default_discretizer
        return RunRequest.build(
            spec,
            self.params,
            discretizer=disc,
            n_bins=self.n_bins if disc is not None else None,
            mid_budget=self.mid_budget if disc == "mid" else None,
            time_limit=self.time_limit,
            class_weight=self.class_weight,
        )

    def label(self) -> str:
        if self.name is not None:
            return self.name
        bits = [self.solver]
        if self.discretizer not in (None, "raw"):
            bits.append(
                self.discretizer
                + (f"/{self.n_bins}" if self.n_bins else "")
                + (f" {self.mid_budget:g}s anytime" if self.mid_budget and self.discretizer == "mid" else "")
            )
        for key in ("depth", *COMMON_PARAM_NAMES):  # "depth": a plug-in's own name for it
            if self.params.get(key) is not None:
                bits.append(f"{key.replace('max_', '')}={self.params[key]}")
        if self.cv:
            bits.append(f"CV {self.cv}-fold")
        if self.class_weight == "balanced":
            bits.append("balanced")
        elif self.class_weight:
            bits.append("weights " + ",".join(f"{k}={v:g}" for k, v in self.class_weight.items()))
        return " · ".join(bits)


@dataclass(frozen=True)
class SetCloud:
    """A Rashomon set's trees drawn faintly on the plot, for the run whose selected tree the set is behind.

    A click on the cloud opens a tree of ``front`` (the set), never a tree of another run; the cloud goes when
    the selection moves to a run that is neither ``run_id`` nor the set itself opened as a run.
    """

    run_id: int  # the run the set was computed for
    front: Front  # the set (its trees in order, ``id`` = rank)
    trees: tuple  # the trees drawn: the set's trees the exclude / require filters keep
    label: str  # what the run list calls the set opened as a run ("alternatives to tree 4")
    stamp: int = 0  # changes with every new cloud: a click the browser made on an older one is ignored


@dataclass(frozen=True)
class TableLoad:
    """One way of loading a table (:meth:`Controller._load`'s arguments), kept while a load waits for the user
    (a many-classes target to confirm, missing values to drop) so that it can be tried again."""

    loader: object  # loader(target, drop_missing=..., allow_many_classes=...) -> Dataset
    target: str | None
    bundled: str | None
    frame: pd.DataFrame | None
    probe: pd.DataFrame | None = None
    frame_id: str = ""
    name: str = ""  # what the user calls the table (the bundled name, the file's or the frame's name)

    @property
    def table(self) -> str:
        """The table's identity: the bundled name or the upload's content hash."""
        return self.bundled if self.bundled is not None else f"upload:{self.frame_id}"


@dataclass(frozen=True)
class PendingLoad:
    """A load that waits for the user, and the column refused for its many classes (None: another refusal)."""

    load: TableLoad
    many_classes_column: str | None = None


@dataclass(frozen=True)
class RunJob:
    """What a run's job needs back when it ends: its settings and the data it was started on."""

    settings: RunSettings
    data_key: tuple
    data_label: str


@dataclass
class Run:
    """A finished (or stopped) run drawn on the Pareto plot."""

    id: int
    label: str
    color: str
    front: Front
    settings: RunSettings
    data_key: tuple = ()
    data_label: str = ""
    cv: CVFront | None = None  # a cross-validated run's folds (its front is the refit)

    @property
    def status_text(self) -> str:
        n = len(self.front)
        proven = sum(t.optimal for t in self.front)
        status = {"done": "done", "time_limit": "time limit reached", "cancelled": "cancelled"}.get(
            *(2 * [self.front.status if self.cv is None else self.cv.status])
        )
        claim = f"{proven} {self.front.optimality}" if proven else "none proven optimal"
        if self.cv is None:
            return f"{plural(n, 'tree')} ({claim}), {status} in {self.front.runtime_s:.2f} s"
        # the run's time is its folds' and the refit's, not the refit's alone (which read "done in 0.00 s")
        text = f"{plural(n, 'tree')} ({claim}), {status} in {self.cv.runtime_s:.2f} s (folds and refit)"
        return f"{text}; {cv_summary(self.cv)}"


class Controller(param.Parameterized):
    """State and actions of one Explorer session.

    Runs belong to the data they were solved on (table, target column and split): ``runs`` holds the
    current data's runs only; switching back to a table shows its runs again.
    """

    dataset_name = param.String(default="", doc="Name shown in provenance")
    columns = param.List(default=[], doc="Columns of the loaded table")
    target = param.String(default="", doc="Target column")
    test_size = param.Number(default=DEFAULT_HELD_OUT, bounds=HELD_OUT_RANGE)
    seed = param.Integer(default=0, bounds=(0, None))
    test_name = param.String(default="", doc="Name of an uploaded test file ('' = use test_size)")
    drop_missing = param.Boolean(default=False, doc="Drop rows with missing values instead of refusing them")
    weight_column = param.String(default="", doc="A numeric column of row weights ('' = none); not a feature")
    class_weight_mode = param.Selector(default="none", objects=list(CLASS_WEIGHT_MODES), doc="Weigh the classes")
    class_weight_text = param.String(default="", doc="Per-class weights as CLASS=W, ... (mode 'per class')")
    missing = param.Integer(default=0, doc="Rows with a missing value in the current table")
    many_classes = param.Dict(
        default=None, allow_None=True, doc="A target waiting for confirmation: {column, n_classes}"
    )
    runs = param.List(default=[], doc="Runs of the current data, shown on the Pareto plot")
    partial = param.Parameter(default=None, doc="Provisional run (best-so-far front) while a job streams")
    selected = param.Tuple(default=None, allow_None=True, length=2, doc="(run id, tree id)")
    compare = param.Integer(default=None, allow_None=True, doc="Tree id to compare the selected tree with")
    compare_run = param.Integer(
        default=None, allow_None=True, doc="Run of the compared tree, when not the selected tree's (same data)"
    )
    running = param.Boolean(default=False)
    progress = param.Dict(default={})
    error = param.String(default="")
    notice = param.String(default="")
    refused_table = param.String(
        default="", doc="A table the user asked for that did not load ('' = none); the runs stay on the current one"
    )
    data_version = param.Integer(default=0, doc="Bumped whenever the table or its split changes")
    cloud = param.Parameter(default=None, doc="The Rashomon set drawn on the plot (a SetCloud), or None")

    def __init__(self, **params):
        super().__init__(**params)
        self._frame: pd.DataFrame | None = None  # uploaded table (bundled ones are reloaded by name)
        self._frame_id = ""  # content hash of the uploaded table: two uploads named alike are different data
        self._weights_by_table: dict = {}  # table -> (class weight mode, per-class text, weight column)
        self._bundled: str | None = None
        self._dataset: Dataset | None = None
        self._allow_many: set = set()  # (table, target) pairs the user confirmed
        self._test_frame: pd.DataFrame | None = None
        self._test_id = ""
        self._prep: Prepared | None = None
        self._all_runs: list[Run] = []  # every run of the session, of every data set
        self._pinned: dict[int, tuple] = {}  # run id -> (the set, rank) of an alternative pinned as its own run
        # what belongs to each table (selection, the Alternatives card's set, ...): saved and shown with it
        self.tables = TableStates()
        self.tables.register(
            "selection", lambda: (self.selected, self.compare, self.compare_run), self._restore_selection
        )
        self._pending: PendingLoad | None = None  # a load waiting for the user (many classes, missing values)
        self.job: Job | None = None
        self.card_settings: RunSettings | None = None  # the solver card when the tab closed (a reload shows it)
        self._next_id = 1
        self._closed = False
        self.missing_by_column: dict[str, int] = {}  # of the file as read, for the data preview
        self._features: dict[str, list | None] = {}  # the columns chosen per table (None: all but the IDs)
        self.column_info: list[dict] = []  # the table's columns: kind, distinct values, identifier reason
        self.exact = ExactFronts(self)  # the exact front per data key and every tree's gap to it

    def take_over(self, old: Controller) -> None:
        """Continue ``old``'s session (the same browser tab, reloaded): its data, runs, selection and exact
        fronts; no job (``old``'s was cancelled when its page went away)."""
        for name in (
            "_frame",
            "_frame_id",
            "_bundled",
            "_dataset",
            "_allow_many",
            "_test_frame",
            "_test_id",
            "_prep",
            "_all_runs",
            "_next_id",
            "_shown_key",
            "missing_by_column",
            "_features",
            "column_info",
            "_weights_by_table",
        ):
            if hasattr(old, name):
                setattr(self, name, getattr(old, name))
        self.tables.saved, self.tables.shown = dict(old.tables.saved), old.tables.shown
        self.exact._records = dict(old.exact._records)
        self.exact._incomparable = set(old.exact._incomparable)
        self.exact._tried = set(old.exact._tried)
        keep = ("dataset_name", "columns", "target", "test_size", "seed", "test_name", "drop_missing", "missing")
        keep += ("weight_column", "class_weight_mode", "class_weight_text")
        self.param.update({name: getattr(old, name) for name in keep})
        self.param.update(runs=list(old.runs), selected=old.selected, compare=old.compare, compare_run=old.compare_run)
        self.data_version = old.data_version + 1

    # -- data ----------------------------------------------------------------------------------------
    @staticmethod
    def bundled() -> list[str]:
        return bundled_datasets()

    def load_bundled(self, name: str, target: str | None = None) -> bool:
        """Load a bundled dataset; returns False (and sets ``error``) when it cannot be loaded."""
        try:
            from treeexplorer.data import _resolve

            frame = _resolve(name)[0]  # read once for the missing-value count; the loader reads it by name
        except Exception:
            frame = None
        return self._load(
            lambda t, **kw: load_dataset(name, t, **kw),
            target,
            bundled=name,
            frame=None,
            probe=frame,
            frame_id="",
            name=name,
        )

    def load_upload(self, content: bytes, filename: str, target: str | None = None, parsed=None) -> bool:
        """Load an uploaded table (size-capped, parsed in memory); False and ``error`` on bad input.

        ``parsed``: a future of ``parse_upload(content, filename)`` already run (off the event loop: see
        :mod:`treeexplorer.ui.uploads`).
        """
        try:
            frame = parse_upload(content, filename) if parsed is None else parsed.result()
        except DataError as exc:
            with param.parameterized.batch_call_watchers(self):
                self.refused_table = Path(filename).name or "the upload"
                self.error = str(exc)
            return False
        return self._load_upload(frame, Path(filename).stem or "upload", hashlib.sha1(content).hexdigest()[:12], target)

    def _load_upload(self, frame: pd.DataFrame, name: str, frame_id: str, target) -> bool:
        """Load an uploaded table (capped at ``MAX_UPLOAD_ROWS`` rows) as ``name``, known by its content hash."""
        return self._load(
            lambda t, **kw: load_dataset(frame, t, name=name, max_rows=MAX_UPLOAD_ROWS, **kw),
            target,
            bundled=None,
            frame=frame,
            probe=frame,
            frame_id=frame_id,
            name=name,
        )

    def load_frame(self, frame: pd.DataFrame, target=None, name: str = "DataFrame") -> bool:
        """Load a table given in Python (``Explorer(df)`` in a notebook); False and ``error`` on bad input.

        No row cap (uploads have one): the table is already in this process's memory.
        """
        try:
            digest = pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes()
        except (TypeError, ValueError):  # unhashable cells (lists, dicts): the loader refuses them anyway
            digest = str(id(frame)).encode()
        frame_id = hashlib.sha1(digest + repr(list(frame.columns)).encode()).hexdigest()[:12]
        return self._load(
            lambda t, **kw: load_dataset(frame, t, name=name, **kw),
            target,
            bundled=None,
            frame=frame,
            probe=frame,
            frame_id=frame_id,
            name=name,
        )

    def add_fronts(self, fronts: list[Front], labels: list[str] | None = None) -> list[Run]:
        """Open fronts solved elsewhere (``tx.solve``, a front file) as runs of the current data: drawn, selectable
        and exported like the app's own runs, not solved again.  The first front's best tree is selected."""
        added = []
        for i, front in enumerate(fronts):
            name = labels[i] if labels is not None else None  # the legend says what the caller calls it
            settings = RunSettings(front.solver, dict(front.params), front.discretizer, time_limit=None, name=name)
            n = len(self._all_runs)
            self._add_run(front, settings)
            added += self._all_runs[n:]
        if added and len(added[0].front):
            self.select(added[0].id, added[0].front.best().id)
        return added

    def _load(self, loader, target, bundled, frame, probe=None, frame_id="", name="") -> bool:
        return self._try_load(TableLoad(loader, target, bundled, frame, probe, frame_id, name))

    def _try_load(self, load: TableLoad) -> bool:
        bundled, frame, probe, table = load.bundled, load.frame, load.probe, load.table
        current = self._weights_key() if self._dataset is not None else None
        if table != current:  # another table: the weights chosen for it last (none the first time)
            self._restore_weights(table)
        ok = self._try_load_weighted(load, bundled, frame, probe, table)
        if not ok and table != current and current is not None:
            self._restore_weights(current)  # the table in use keeps its own
        return ok

    def _try_load_weighted(self, load: TableLoad, bundled, frame, probe, table) -> bool:
        missing = missing_rows(probe) if probe is not None else 0
        self.missing_by_column = missing_by_column(probe) if probe is not None else {}

        def attempt(t):
            allow = (table, t) in self._allow_many
            features = self._features.get(table)
            if features is not None and t in features:  # the new target is no feature
                features = [f for f in features if f != t]
            kw = {"features": features} if features is not None else {}
            weights = self.weight_column or None
            return load.loader(
                t or None, drop_missing=self.drop_missing, allow_many_classes=allow, weights=weights, **kw
            )

        try:
            ds = attempt(load.target)
        except ManyClassesError as exc:
            # Ask, do not refuse: the app offers "use it anyway" (allow_many_classes) next to the message.
            self._pending = PendingLoad(load, exc.column)
            with param.parameterized.batch_call_watchers(self):
                self.refused_table = self._refused_name(load)
                self.missing = missing
                self.many_classes = {"column": exc.column, "n_classes": exc.n_classes}
                self.error = readable_error(exc)
            return False
        except (DataError, ValueError) as exc:
            # kept so "drop rows with missing values" can retry this table rather than the current one
            self._pending = PendingLoad(load)
            with param.parameterized.batch_call_watchers(self):
                self.refused_table = self._refused_name(load)
                self.missing = missing
                self.error = readable_error(exc)
            return False
        self._pending = None
        self._stash_selection()
        self._test_frame = None
        self._test_id = ""
        self._prep = None
        if frame is not None:
            cols = list(frame.columns)
        elif bundled == self._bundled and self.columns:
            cols = list(self.columns)  # same bundled table, new target: keep the file's column order
        else:
            cols = ds.schema.feature_names + [ds.schema.target]
        self._bundled, self._frame, self._dataset, self._frame_id = bundled, frame, ds, load.frame_id
        self.column_info = column_summary(probe, ds.schema.target) if probe is not None else []
        with param.parameterized.batch_call_watchers(self):
            self.error = ""
            self.refused_table = ""
            self.many_classes = None
            self.missing = missing
            self.notice = "; ".join(ds.notices)
            self.dataset_name = ds.name
            self.columns = [str(c) for c in cols]
            self.target = ds.schema.target
            self.test_name = ""
            self.data_version += 1
            self._show_runs_of_current_data()
        return True

    def _refused_name(self, load: TableLoad) -> str:
        """The name a refused load's table goes by, or '' when it is the table in use (only a setting failed)."""
        same = self._dataset is not None and (
            load.bundled == self._bundled if load.bundled is not None else load.frame_id == self._frame_id
        )
        return "" if same else (load.name or "the new table")

    def confirm_many_classes(self) -> bool:
        """Use the target column the last load refused for its many classes (the user confirmed it)."""
        pending = self._pending
        if pending is None or self.many_classes is None:
            return False
        load = pending.load
        self._allow_many.add((load.table, load.target))
        self._allow_many.add((load.table, pending.many_classes_column))
        self._pending = None
        return self._try_load(load)

    def dismiss_many_classes(self) -> None:
        self._pending = None
        with param.parameterized.batch_call_watchers(self):
            self.many_classes = None
            self.refused_table = ""
            self.error = ""

    # -- weights ---------------------------------------------------------------------------------------
    def class_weight(self):
        """What "Weigh the classes" asks for: None, "balanced" or {class: weight} (parsed as the CLI's
        ``--class-weight``; a bad entry is a one-line ``ValueError``)."""
        from treeexplorer.objective import parse_class_weight

        if self.class_weight_mode == "balanced":
            return "balanced"
        if self.class_weight_mode == "per class" and self.class_weight_text.strip():
            return parse_class_weight(self.class_weight_text.replace(";", ","))
        return None

    def set_class_weights(self, mode: str, text: str | None = None) -> None:
        """Set "Weigh the classes" (``none``, ``balanced`` or ``per class`` with ``text``), remembered for this
        table."""
        with param.parameterized.batch_call_watchers(self):
            self.class_weight_mode = mode
            if text is not None:
                self.class_weight_text = text
        self._remember_weights()

    def set_weight_column(self, column: str) -> bool:
        """Weigh the rows by a numeric column ('' for none) and reload the table (the column is then not a
        feature); remembered for this table.  False (and ``error``) when the column cannot be weights."""
        old = self.weight_column
        self.weight_column = column or ""
        if self._dataset is None:
            return False
        ok = self._reload(self.target)
        if not ok:  # e.g. a text column: the table stays as it was, with its weights (and the message shows)
            message = self.error
            self.weight_column = old
            self._pending = None
            if old != (column or ""):
                self._reload(self.target)
            self.error = message
            return False
        self._remember_weights()
        return True

    def _weights_key(self) -> str:
        """The current table as :attr:`TableLoad.table` names it (the key its weights are remembered by)."""
        return self._bundled if self._bundled is not None else f"upload:{self._frame_id}"

    def _remember_weights(self) -> None:
        if self._dataset is not None:
            self._weights_by_table[self._weights_key()] = (
                self.class_weight_mode,
                self.class_weight_text,
                self.weight_column,
            )

    def _restore_weights(self, table) -> None:
        """The weights chosen last for ``table`` (none for a table seen for the first time)."""
        mode, text, column = self._weights_by_table.get(table, ("none", "", ""))
        self.param.update(class_weight_mode=mode, class_weight_text=text)
        self.weight_column = column

    def set_drop_missing(self, value: bool) -> bool:
        """Turn "drop rows with missing values" on or off and reload the current (or refused) table."""
        self.drop_missing = bool(value)
        pending = self._pending
        if pending is not None:
            return self._try_load(pending.load)
        if self._dataset is None:
            return False
        return self._reload(self.target)

    def _reload(self, target: str) -> bool:
        if self._bundled is not None:
            return self.load_bundled(self._bundled, target)
        return self._load_upload(self._frame, self._dataset.name, self._frame_id, target)

    def set_target(self, target: str) -> bool:
        """Reload the current table with another target column."""
        if target == self.target or self._dataset is None:
            return True
        return self._reload(target)

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
        self._stash_selection()
        self._test_frame = frame
        self._test_id = hashlib.sha1(content).hexdigest()[:12]
        self._prep = None
        with param.parameterized.batch_call_watchers(self):
            self.error = ""
            self.test_name = Path(filename).name
            self.data_version += 1
            self._show_runs_of_current_data()
        return True

    def clear_test_upload(self) -> None:
        self._stash_selection()
        self._test_frame = None
        self._test_id = ""
        self._prep = None
        with param.parameterized.batch_call_watchers(self):
            self.test_name = ""
            self.data_version += 1
            self._show_runs_of_current_data()

    @param.depends("test_size", "seed", watch=True)
    def _split_changed(self):
        self._stash_selection()
        self._prep = None
        with param.parameterized.batch_call_watchers(self):
            self.data_version += 1
            self._show_runs_of_current_data()

    # -- runs belong to their data -------------------------------------------------------------------
    def data_key(self) -> tuple:
        """What a run was solved on: table (bundled name or upload hash), target, missing-row policy, split."""
        if self._dataset is None:
            return ()
        table = ("bundled", self._bundled) if self._bundled is not None else ("upload", self._frame_id)
        split = ("file", self._test_id) if self._test_frame is not None else ("split", self.test_size, self.seed)
        key = (*table, self.target, self.drop_missing, split, self.weight_column)
        chosen = self._features.get(self._table_id())
        return key if chosen is None else (*key, ("features", *chosen))  # other columns: other data

    def _table_id(self) -> str:
        """The table's identity (:attr:`TableLoad.table`): the bundled name or the upload's content hash."""
        return self._bundled if self._bundled is not None else f"upload:{self._frame_id}"

    def set_features(self, features: list[str] | None) -> bool:
        """Learn from ``features`` only (None: every column but the ID-like ones) and reload the table; the runs
        on the previous columns stay with them (switch back to see them)."""
        if self._dataset is None:
            return False
        table = self._table_id()
        default = [c["name"] for c in self.column_info if c["name"] != self.target and c["identifier"] is None]
        chosen = None if features is None or list(features) == default else [str(f) for f in features]
        if chosen == self._features.get(table):
            return True
        before = self._features.get(table)
        self._features[table] = chosen
        if self._reload(self.target):
            return True
        self._features[table] = before  # refused (no column left, ...): the previous choice stays
        return False

    @property
    def features_chosen(self) -> list[str] | None:
        """The columns the user chose for the current table (None: the default, every column but the IDs)."""
        return self._features.get(self._table_id()) if self._dataset is not None else None

    def data_label(self) -> str:
        """The current data in words: ``iris · target species · 25% held out (seed 0)``."""
        if self._dataset is None:
            return ""
        if self._test_frame is not None:
            held = f"held-out file {self.test_name}"
        else:
            held = f"{self.test_size:.0%} held out (seed {self.seed})" if self.test_size else "no held-out rows"
        return f"{self.dataset_name} · target {self.target} · {held}"

    @property
    def all_runs(self) -> list[Run]:
        """Every run of the session, on every data set (``runs`` has the current data's)."""
        return list(self._all_runs)

    def _stash_selection(self) -> None:
        self.tables.stash()

    def _show_runs_of_current_data(self) -> None:
        key = self.data_key()
        self._shown_key = key
        self.tables.stash()  # the previous data's state, before its runs leave the plot
        self.runs = [r for r in self._all_runs if r.data_key == key]
        if not self.tables.switch(key):
            self._restore_selection(self.tables.get(key, "selection"))

    def _restore_selection(self, saved) -> None:
        """Select what ``saved`` (``((run id, tree id), compare[, compare's run])``) names, if its run is shown;
        else nothing."""
        sel, compare, compare_run = (*saved, None)[:3] if saved is not None else (None, None, None)
        here = sel is not None and any(r.id == sel[0] for r in self.runs)
        self.selected = sel if here else None
        self.param.update(compare_run=compare_run if here else None, compare=compare if here else None)

    _shown_key: tuple = ()

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
            if settings.class_weight is None:  # the Data card's "Weigh the classes"
                settings = replace(settings, class_weight=self.class_weight())
            request = settings.request()
            prep = self.prepared()
            if settings.cv is not None and not FOLD_CHOICES[0] <= settings.cv <= FOLD_CHOICES[1]:
                raise ValueError(
                    f"cross-validation takes {FOLD_CHOICES[0]} to {FOLD_CHOICES[1]} folds, not {settings.cv}"
                )
        except (DataError, ValueError, NotImplementedError) as exc:
            self.error = readable_error(exc)
            return None

        def work(control):
            return run_prepared(prep, request, control=control)

        if settings.cv is not None:  # k folds on the training rows, then the refit: the run's front
            work = cv_work(prep, request, dict(settings.params), folds=settings.cv, seed=self.seed)
        work = kernels_first(request.spec.name, work)  # Cancel also ends a wait for a compile (a cold cache)

        self.error = ""
        meta = RunJob(settings, self.data_key(), self.data_label())
        self.job = app_job(work, settings.time_limit, label=settings.label(), meta=meta, session=id(self))
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
        meta: RunJob = job.meta

        def partial(front) -> None:
            # Best-so-far trees streamed by the pipeline: drawn as a provisional run until done, over the data
            # it belongs to only.
            if isinstance(front, Front) and len(front) and meta.data_key == self.data_key():
                label = f"{meta.settings.label()} (running…)"
                self.partial = Run(0, label, "#999999", front, meta.settings, meta.data_key)

        def done(front) -> None:
            self.partial = None
            self._add_run(front, meta.settings, meta.data_key, meta.data_label)

        def failed(message: str) -> None:
            self.partial = None
            self.error = message

        def cancelled(message: str) -> None:
            self.partial = None
            self.error = f"Run stopped: {message}"

        running = job.drain(
            progress=lambda info: setattr(self, "progress", info),
            partial=partial,
            done=done,
            failed=failed,
            cancelled=cancelled,
        )
        if not running:
            self.running = False
        return running

    def run_sync(self, settings: RunSettings, timeout: float | None = None) -> Run | None:
        """Run and wait (start-up default run, notebooks, tests); the new run or None on error."""
        job = self.run(settings)
        if job is None:
            return None
        n = len(self.runs)
        job.wait(timeout)
        self.poll()
        return self.runs[-1] if len(self.runs) > n else None

    def _add_run(self, front: Front, settings: RunSettings, data_key: tuple = (), data_label: str = "") -> None:
        cv = front if isinstance(front, CVFront) else None
        if cv is not None:
            front = cv.refit
        rid = self._next_id
        self._next_id += 1
        data_key = data_key or self.data_key()
        used = {r.color for r in self._all_runs if r.data_key == data_key}
        color = next((c for c in PALETTE if c not in used), PALETTE[rid % len(PALETTE)])
        label = f"#{rid} {settings.label()}"
        if any(r.front.dataset != front.dataset for r in self._all_runs):
            label += f" · {front.dataset}"  # the session holds runs of several tables: say which is which
        run = Run(rid, label, color, front, settings, data_key, data_label or self.data_label(), cv)
        notices = [n for n in (cv.notices if cv is not None else front.notices) if n]
        if front.status == "cancelled":
            notices.insert(0, f"run #{rid} cancelled: kept the {len(front)} tree(s) found so far (not proven)")
        elif front.status == "time_limit":
            notices.insert(0, f"run #{rid} hit the time limit: kept the {len(front)} tree(s) found so far (not proven)")
        here = data_key == self.data_key()
        if not here:
            notices.insert(0, f"run #{rid} finished on {run.data_label}: switch back to that data to see it")
        self._all_runs.append(run)
        self.exact.run_added(run)  # gaps before the views draw the run (may start the exact front)
        with param.parameterized.batch_call_watchers(self):
            self.notice = "; ".join(notices)
            if not here:
                if len(front):
                    self.tables.put(data_key, "selection", ((rid, (cv_choice(cv) or front.best()).id), None))
                return
            self.runs = [*self.runs, run]
            if len(front):
                best = cv_choice(cv) or front.best()  # a CV run shows its 1-SE choice
                self.selected = (rid, best.id)
                self.compare = None
            else:
                self.error = f"run #{rid} found no tree"

    def remove_run(self, rid: int) -> None:
        self._all_runs = [r for r in self._all_runs if r.id != rid]
        with param.parameterized.batch_call_watchers(self):
            if self.selected is not None and self.selected[0] == rid:
                self.selected = None
                self.compare = None
            self.runs = [r for r in self.runs if r.id != rid]

    def clear_runs(self) -> None:
        """Remove the current data's runs (runs of other data sets stay, for when the user switches back)."""
        shown = {r.id for r in self.runs}
        self._all_runs = [r for r in self._all_runs if r.id not in shown]
        with param.parameterized.batch_call_watchers(self):
            self.selected = None
            self.compare = None
            self.runs = []

    def rerun_with_more_tests(self, rid: int) -> Job | None:
        """Run ``rid``'s settings again over more tests: :func:`treeexplorer.compare.more_tests_rerun`'s rule
        (MID with twice the tests, twice the thresholds per column for quantile/uniform, ...)."""
        run = self.run_by_id(rid)
        if run is None:
            self.error = f"no run #{rid}"
            return None
        kwargs = more_tests_rerun(run.front)
        if kwargs is None:
            self.error = f"run #{rid} already searched every threshold"
            return None
        kwargs = dict(kwargs)
        solver = kwargs.pop("solver")
        disc, n_bins = kwargs.pop("discretizer", run.settings.discretizer), kwargs.pop("n_bins", None)
        params = {**run.settings.params, **kwargs}
        settings = replace(run.settings, solver=solver, params=params, discretizer=disc, n_bins=n_bins)
        return self.run(replace(settings, mid_budget=None, name=None))

    def same_point(self, x: str = "splits") -> list[tuple[Run, FrontTree]]:
        """Trees of the other shown runs drawn at the selected tree's point (same ``x`` and train accuracy)."""
        run, entry = self.selection()
        if entry is None:
            return []
        key = (entry.metrics[x], entry.metrics["train_accuracy"])
        out = []
        for r in self.runs:
            if r.id == run.id:
                continue
            for t in r.front:
                if (t.metrics[x], t.metrics["train_accuracy"]) == key:
                    out.append((r, t))
                    break
        return out

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
        """The tree compared with the selected one: of its run, or of another run of the same data."""
        run, _ = self.selection()
        if run is None or self.compare is None:
            return None
        if self.compare_run is not None:
            run = self.run_by_id(self.compare_run)
            if run is None:
                return None
        try:
            return run.front[self.compare]
        except KeyError:
            return None

    # -- the Rashomon set's cloud on the plot --------------------------------------------------------
    _cloud_stamp = 0

    def show_cloud(self, run_id: int, front: Front, trees, label: str) -> SetCloud | None:
        """Draw ``trees`` of the set ``front`` on the plot for run ``run_id`` (None: that run is not the
        selected one, or gone)."""
        here = self.selected is not None and self.run_by_id(run_id) is not None
        if not here or self.selected[0] not in self._set_runs(run_id, front):
            self.cloud = None
            return None
        Controller._cloud_stamp += 1
        self.cloud = SetCloud(run_id, front, tuple(trees), label, Controller._cloud_stamp)
        return self.cloud

    def hide_cloud(self) -> None:
        self.cloud = None

    def _set_runs(self, run_id: int, front: Front) -> set[int]:
        """The runs a set's cloud belongs to: the one it was computed for and the set's trees pinned as runs."""
        return {run_id} | {r.id for r in self.runs if r.id in self._pinned and self._pinned[r.id][0] is front}

    def _pinned_as(self, run_id: int, front: Front, rank: int) -> bool:
        """Whether run ``run_id`` is tree ``rank`` of the set ``front`` pinned (the set by identity)."""
        pin = self._pinned.get(run_id)
        return pin is not None and pin[0] is front and pin[1] == rank

    def open_set_tree(self, front: Front, rank: int, label: str) -> tuple[int, int] | None:
        """Select tree ``rank`` of the set ``front`` in the tree view, pinned as a run of its own: one point on
        the plot, named ``label · #rank`` in the run list (``alternatives to tree 4 · #12``), not the whole set
        stacked at a few places.  The same tree opened again is the same run.

        Only a tree of ``front`` is ever opened (the cloud's click rule): ``None`` when it has no such tree.
        """
        entry = next((t for t in front.trees if t.id == int(rank)), None)
        if entry is None:
            return None
        run = next((r for r in self.runs if self._pinned_as(r.id, front, entry.id)), None)
        if run is None:
            one = replace(front, trees=[entry], dominated=[])
            # known as the set's before it is added: selecting it (as adding does) keeps the set's cloud
            self._pinned[self._next_id] = (front, entry.id)
            added = self.add_fronts([one], labels=[f"{label} · #{entry.id}"])
            if not added:
                return None
            run = added[0]
        self.select(run.id, entry.id)
        return run.id, entry.id

    def open_cloud_tree(self, rank: int, stamp: int | None = None) -> tuple[int, int] | None:
        """A click on the cloud: open tree ``rank`` of the set it draws (None when the click was made on a
        cloud since replaced, ``stamp``, or there is no cloud)."""
        cloud = self.cloud
        if cloud is None or (stamp is not None and int(stamp) != cloud.stamp):
            return None
        if not any(t.id == int(rank) for t in cloud.trees):
            return None
        return self.open_set_tree(cloud.front, rank, cloud.label)

    @param.depends("compare", watch=True)
    def _compare_run_follows(self) -> None:
        if self.compare is None:  # no comparison: nor its run (a new selection clears both)
            self.compare_run = None

    def compare_with(self, run_id: int, tree_id: int) -> None:
        """Compare the selected tree with tree ``tree_id`` of run ``run_id`` (any run of the current data)."""
        run = self.run_by_id(run_id)
        if run is None:
            raise KeyError(f"no run #{run_id}")
        run.front[tree_id]  # raises KeyError naming the ids
        own = self.selected is not None and self.selected[0] == run_id
        self.param.update(compare_run=None if own else int(run_id), compare=int(tree_id))

    @param.depends("selected", "runs", watch=True)
    def _cloud_follows_selection(self) -> None:
        # the cloud is the selected run's: it goes when the selection moves to another run (or its run goes)
        cloud = self.cloud
        if cloud is None:
            return
        if self.selected is None or self.run_by_id(cloud.run_id) is None:
            self.cloud = None
        elif self.selected[0] not in self._set_runs(cloud.run_id, cloud.front):
            self.cloud = None

    # -- lifecycle -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop this session's job (browser closed); the thread ends at the solver's next check."""
        self._closed = True
        if self.job is not None and self.job.running:
            self.job.cancel()
        self.exact.close()
