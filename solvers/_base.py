"""Shared contract of every solver: raw tree arrays, raw fronts and the run control.

Solvers work on a numeric matrix ``X`` (float64, shape ``(n, p)``) and integer labels ``y`` in
``0..n_classes-1``.  Binary solvers (MurTree, BRANCHES, SAT) take a 0/1 matrix (uint8 or bool).

Tree convention (all solvers)
-----------------------------
A tree is a set of flat parallel arrays, node 0 is the root.  A sample goes to ``left[k]`` when
``X[i, feature[k]] <= threshold[k]`` and to ``right[k]`` otherwise.  Leaves have ``feature == -1`` and
``left == right == -1``.  On a 0/1 matrix the threshold is 0.5, so *left is the 0 side* (test false)
and *right is the 1 side* (test true).  ``value[k, c]`` is the number of training samples of class
``c`` that reach node ``k``.  The leaf prediction is the argmax of ``value`` (lowest class on ties)
unless ``prediction`` says otherwise.

Missing values (NaN in ``X``): ``missing_left[k] == 1`` sends the rows whose ``X[i, feature[k]]`` is NaN left
(with ``x <= threshold``), 0 right; without ``missing_left`` NaN rows go right (``NaN <= t`` is false).  A solver
that takes NaN learns the side at every split where its rows have gaps; where they have none it may put either
(treeexplorer then sends future gaps to the child with more training rows, scikit-learn's rule).  Walk such a
tree with ``apply_tree_missing`` / ``node_counts_missing``.

Multiway nodes (BRANCHES with ``multiway=True`` only): ``multi_offsets`` (n_nodes + 1) indexes, CSR
style, ``multi_children`` and ``multi_tests``; node ``k`` with a non-empty range is a multiway node whose
row goes to ``multi_children[r]`` for the ``r`` with ``X[i, multi_tests[r]] == 1`` (the tests of one
one-hot group, which partition the node's rows).  Such a node has ``feature[k] = multi_tests[first]``
(so it counts as one split) and ``left == right == -1``: walk it with the multiway-aware code, not
``apply_tree``.

Nothing here imports treeexplorer, panel or holoviews: the search engine is numpy + numba only.
"""

from __future__ import annotations

import numbers
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "RawTree",
    "RawSolution",
    "RawFront",
    "Control",
    "Cancelled",
    "FLAG_RUN",
    "FLAG_CANCEL",
    "FLAG_TIMEOUT",
    "check_xy",
    "check_binary",
]

FLAG_RUN = 0
FLAG_CANCEL = 1
FLAG_TIMEOUT = 2


@dataclass
class RawTree:
    """Flat-array tree as produced by a solver kernel (see module docstring for the convention)."""

    feature: np.ndarray  # int64 (n_nodes,), -1 for leaves
    threshold: np.ndarray  # float64 (n_nodes,)
    left: np.ndarray  # int64 (n_nodes,), -1 for leaves
    right: np.ndarray  # int64 (n_nodes,), -1 for leaves
    value: np.ndarray  # int64 (n_nodes, n_classes): training class counts per node
    prediction: np.ndarray | None = None  # int64 (n_nodes,) leaf class; default argmax(value)
    multi_offsets: np.ndarray | None = None  # int64 (n_nodes + 1,): CSR ranges of multiway children
    multi_children: np.ndarray | None = None  # int64: child node of each multiway branch
    multi_tests: np.ndarray | None = None  # int64: 0/1 test (column of X) selecting each branch
    missing_left: np.ndarray | None = None  # int64 (n_nodes,): 1 when NaN rows go left (see module docstring)

    def __post_init__(self):
        self.feature = np.ascontiguousarray(self.feature, dtype=np.int64)
        self.threshold = np.ascontiguousarray(self.threshold, dtype=np.float64)
        self.left = np.ascontiguousarray(self.left, dtype=np.int64)
        self.right = np.ascontiguousarray(self.right, dtype=np.int64)
        self.value = np.ascontiguousarray(self.value, dtype=np.int64)
        if self.prediction is None:
            self.prediction = np.argmax(self.value, axis=1).astype(np.int64)
        else:
            self.prediction = np.ascontiguousarray(self.prediction, dtype=np.int64)
        n = self.feature.shape[0]
        if self.multi_offsets is not None:
            self.multi_offsets = np.ascontiguousarray(self.multi_offsets, dtype=np.int64)
            self.multi_children = np.ascontiguousarray(self.multi_children, dtype=np.int64)
            self.multi_tests = np.ascontiguousarray(self.multi_tests, dtype=np.int64)
            if self.multi_offsets.shape != (n + 1,) or self.multi_children.shape != self.multi_tests.shape:
                raise ValueError("RawTree multiway arrays: offsets (n_nodes + 1,), children and tests alike")
        if self.missing_left is not None:
            self.missing_left = np.ascontiguousarray(self.missing_left, dtype=np.int64)
        for name in ("threshold", "left", "right", "prediction") + (
            ("missing_left",) if self.missing_left is not None else ()
        ):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"RawTree.{name} must have shape ({n},)")
        if self.value.ndim != 2 or self.value.shape[0] != n:
            raise ValueError(f"RawTree.value must have shape ({n}, n_classes)")

    @property
    def n_nodes(self) -> int:
        return int(self.feature.shape[0])

    @property
    def n_splits(self) -> int:
        return int(np.count_nonzero(self.feature >= 0))

    def is_multi(self, k: int) -> bool:
        """Whether node ``k`` is a multiway node (see module docstring)."""
        return self.multi_offsets is not None and self.multi_offsets[k + 1] > self.multi_offsets[k]

    @classmethod
    def leaf(cls, counts: np.ndarray) -> RawTree:
        """A single-leaf tree predicting the majority class of ``counts``."""
        counts = np.asarray(counts, dtype=np.int64).reshape(1, -1)
        return cls(np.array([-1]), np.array([0.0]), np.array([-1]), np.array([-1]), counts)


@dataclass
class RawSolution:
    """One tree of a solver's front.

    ``info`` carries solver-specific facts that the app shows, for instance ``{"budget": 3}``
    (MurTree node budget), ``{"alpha_lo": 0.01, "alpha_hi": 0.02}`` (DPDT/CART α interval),
    ``{"lambda": 0.01, "objective": 0.93}`` (BRANCHES) or ``{"on_hull": True}``.
    """

    tree: RawTree
    optimal: bool
    info: dict = field(default_factory=dict)


@dataclass
class RawFront:
    """What a solver returns: its trees, the objective they optimise and how the run ended."""

    solutions: list[RawSolution]
    objective: str
    status: str = "done"  # "done" | "time_limit" | "cancelled"
    stats: dict = field(default_factory=dict)
    # Set when the solver added input columns of its own (BRANCHES completing a categorical column's one-hot
    # tests): what every column its trees index means, replacing the caller's list.
    features: list | None = None


class Cancelled(Exception):
    """Raised by a wrapper when the user cancelled and nothing usable was found yet."""


MAX_SECONDS = 1e9  # a timer thread cannot wait much longer (threading.TIMEOUT_MAX); 31 years: use None


def time_limit_seconds(value) -> float | None:
    """A time limit as :class:`Control` keeps it: seconds (float), or ``None`` for no limit.

    Zero, negative numbers, infinity, NaN, more than ``MAX_SECONDS`` and non-numbers are refused with one
    message, the same for every entry point (an infinite limit used to start a timer thread that died at once,
    leaving no limit at all).
    """
    if value is None:
        return None
    numeric = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    seconds = float(value) if numeric else float("nan")
    if not 0 < seconds <= MAX_SECONDS:  # also NaN and infinity
        raise ValueError(
            f"time_limit must be a positive, finite number of seconds up to {MAX_SECONDS:.0e} (or None for no "
            f"limit), got {value!r}" + (" (text)" if isinstance(value, str) else "")
        )
    return seconds


class Control:
    """Cooperative cancel / time limit / progress shared between a solver and its caller.

    Kernels receive ``control.flag`` (int64 array of length 1) and ``control.counters`` (int64 array)
    and check ``flag[0] != 0`` in their outer loops; a timer thread sets the flag when the time limit
    expires, ``cancel()`` sets it from any thread.  Because kernels are ``nogil`` both work while a
    kernel runs.  Wrappers call ``report(phase, **values)`` between phases; while a kernel runs,
    ``watch(phase, names)`` makes a poller thread forward the kernel's counters to the callback.

    Parameters
    ----------
    time_limit : float or None
        Seconds after ``start()`` at which the flag is set to ``FLAG_TIMEOUT``.
    progress : callable or None
        Called as ``progress(dict)`` with at least ``phase`` and ``elapsed`` keys.
    poll_interval : float
        Seconds between two progress reports while a kernel runs.
    parent : Control or None
        A run nested in another (MID's anytime loop solving again and again): the parent's cancel or time-out
        reaches this control's flag at once, so the kernels of the inner run see it without any watcher
        thread; this control's own stop does not reach the parent.
    """

    N_COUNTERS = 8

    def __init__(
        self,
        time_limit: float | None = None,
        progress: Callable[[dict], None] | None = None,
        poll_interval: float = 0.25,
        parent: Control | None = None,
    ):
        self.time_limit = time_limit_seconds(time_limit)
        self.progress = progress
        self.poll_interval = poll_interval
        self.flag = np.zeros(1, dtype=np.int64)
        self.counters = np.zeros(self.N_COUNTERS, dtype=np.int64)
        self._t0 = time.perf_counter()
        self._timer: threading.Timer | None = None
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._phase = ""
        self._names: tuple[str, ...] = ()
        self.parent = parent
        self._children: weakref.WeakSet[Control] = weakref.WeakSet()  # a child dropped by its run just goes
        self._children_lock = threading.Lock()
        if parent is not None:
            with parent._children_lock:
                parent._children.add(self)
            self._follow_parent()

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self, spent: float = 0.0) -> Control:
        """Start the clock; ``spent`` seconds of the run that passed before (e.g. loading its data) count."""
        self._t0 = time.perf_counter() - spent
        if self.time_limit is not None and self._timer is None:
            self._timer = threading.Timer(max(0.0, self.time_limit - spent), self._expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    @property
    def started(self) -> bool:
        """Whether ``start()`` ran (a second ``start()`` or ``with control:`` keeps the first clock)."""
        return getattr(self, "_started", False)

    def start_once(self, spent: float = 0.0) -> Control:
        """``start(spent)`` unless already started: the API starts the clock once the data are loaded (counting
        the loading), then enters the solver's ``with`` block, and the time limit must count from the first start."""
        if not self.started:
            self.start(spent)
            self._started = True
        return self

    def expire_at(self, seconds: float) -> None:
        """Set the time-limit flag ``seconds`` after start instead of at ``time_limit`` (earlier only): the
        API keeps a reserve after the solver for assembling the front."""
        if self.time_limit is None or seconds >= self.time_limit or self.stopped:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(max(0.0, seconds - self.elapsed), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.unwatch()

    def __enter__(self) -> Control:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _expire(self) -> None:
        if self.flag[0] == FLAG_RUN:
            self._set(FLAG_TIMEOUT)

    def cancel(self) -> None:
        """Ask the running solver to stop as soon as it can (keeps what it found); reaches child controls."""
        self._set(FLAG_CANCEL)

    def _set(self, value: int) -> None:
        if value == FLAG_CANCEL or self.flag[0] == FLAG_RUN:  # a cancel overrides a time-out, not the reverse
            self.flag[0] = value
        with self._children_lock:
            children = list(self._children)
        for child in children:
            child._set(value)

    def _follow_parent(self) -> None:
        # The parent's state is pushed to its children when it changes; this catches a parent flag set directly
        # (e.g. by a caller writing flag[0]) the next time this control is asked.
        parent = self.parent
        if parent is not None and self.flag[0] == FLAG_RUN:
            parent._follow_parent()
            if parent.flag[0] != FLAG_RUN:
                self.flag[0] = parent.flag[0]

    # -- state -----------------------------------------------------------------------------------
    @property
    def stopped(self) -> bool:
        self._follow_parent()
        return bool(self.flag[0] != FLAG_RUN)

    @property
    def cancelled(self) -> bool:
        self._follow_parent()
        return bool(self.flag[0] == FLAG_CANCEL)

    @property
    def timed_out(self) -> bool:
        self._follow_parent()
        return bool(self.flag[0] == FLAG_TIMEOUT)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._t0

    @property
    def remaining(self) -> float | None:
        if self.time_limit is None:
            return None
        return max(0.0, self.time_limit - self.elapsed)

    def status(self) -> str:
        """``"done"``, ``"time_limit"`` or ``"cancelled"``, as for :class:`RawFront`."""
        self._follow_parent()
        return {FLAG_RUN: "done", FLAG_CANCEL: "cancelled", FLAG_TIMEOUT: "time_limit"}[int(self.flag[0])]

    # -- progress --------------------------------------------------------------------------------
    def report(self, phase: str, **values) -> None:
        """Send one progress report (``phase``, ``elapsed`` and ``values``) to the callback."""
        if self.progress is not None:
            self.progress({"phase": phase, "elapsed": self.elapsed, **values})

    def watch(self, phase: str, names: tuple[str, ...] | list[str]) -> None:
        """Forward ``counters[:len(names)]`` under ``names`` every ``poll_interval`` s until ``unwatch``."""
        self.unwatch()
        self._phase, self._names = phase, tuple(names)
        self.counters[:] = 0
        if self.progress is None:
            return
        self._watch_stop.clear()

        def loop():
            while not self._watch_stop.wait(self.poll_interval):
                self._emit()

        self._watcher = threading.Thread(target=loop, daemon=True)
        self._watcher.start()

    def _emit(self) -> None:
        self.report(self._phase, **{n: int(self.counters[i]) for i, n in enumerate(self._names)})

    def unwatch(self) -> None:
        if self._watcher is not None:
            self._watch_stop.set()
            self._watcher.join()
            self._watcher = None
            self._emit()


def check_xy(
    X, y, n_classes: int | None = None, *, binary: bool = False, allow_missing: bool = False
) -> tuple[np.ndarray, np.ndarray, int]:
    """Validate a solver's input and return contiguous ``(X, y, n_classes)``.

    ``X`` becomes float64 (uint8 when ``binary``), ``y`` int64 in ``0..n_classes-1``.  ``allow_missing``: ``X``
    may hold NaN (missing values; infinities are still refused).
    """
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with {X.shape[0]} labels, got shape {y.shape}")
    if X.shape[0] == 0:
        raise ValueError("X has no rows")
    if not np.issubdtype(y.dtype, np.integer):
        if np.issubdtype(y.dtype, np.floating) and np.all(np.mod(y, 1) == 0):
            y = y.astype(np.int64)
        else:
            raise ValueError("y must hold integer class indices 0..n_classes-1")
    y = np.ascontiguousarray(y, dtype=np.int64)
    if y.min() < 0:
        raise ValueError("y must hold class indices >= 0")
    if n_classes is None:
        n_classes = int(y.max()) + 1
    elif y.max() >= n_classes:
        raise ValueError(f"y has class index {int(y.max())} but n_classes={n_classes}")
    if binary:
        X = check_binary(X)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
        if np.isinf(X).any() if allow_missing else not np.all(np.isfinite(X)):
            raise ValueError("X contains infinite values" if allow_missing else "X contains NaN or infinite values")
    return X, y, int(n_classes)


def check_binary(X) -> np.ndarray:
    """Return ``X`` as a C-contiguous uint8 0/1 matrix or raise naming the first bad column."""
    X = np.asarray(X)
    if X.dtype == np.bool_:
        return np.ascontiguousarray(X, dtype=np.uint8)
    if X.dtype == np.uint8 and (X.size == 0 or X.max() <= 1):  # one pass, no temporaries (gigabytes at scale)
        return np.ascontiguousarray(X)
    bad = ~((X == 0) | (X == 1))
    if bad.any():
        col = int(np.argmax(bad.any(axis=0)))
        row = int(np.argmax(bad[:, col]))
        raise ValueError(
            f"binary solver needs 0/1 features: column {col} row {row} holds {X[row, col].item()!r}; use a discretizer"
        )
    return np.ascontiguousarray(X, dtype=np.uint8)
