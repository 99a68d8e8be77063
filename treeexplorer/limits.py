"""Memory and time budgets of one run: estimates of the big structures, checked before they are allocated.

A run may build large arrays: the 0/1 test matrix (rows x tests), the numeric matrix of one-hot columns,
MurTree's pair counts (classes x tests x tests), SAT's sort of the distinct rows.  Each is estimated from
sizes known in advance and compared with ``memory_limit`` (megabytes; default :func:`default_memory_limit_mb`,
a safe share of this machine's memory).  Over the limit, :class:`MemoryLimitError` says in one line what
would be too big and which setting to lower, before anything is allocated: no traceback, no OOM kill.

The time budget: :func:`assembly_reserve` is the few seconds kept after the solver for assembling the front
(counts and metrics of every tree, one pass over the rows), so the whole run ends near its time limit.
"""

from __future__ import annotations

import functools
import os

import numpy as np

__all__ = [
    "MemoryLimitError",
    "RUN_OVERHEAD",
    "default_memory_limit_mb",
    "check_memory_limit",
    "check_bytes",
    "solver_bytes",
    "exact_test_count",
    "max_tests",
    "discretizer_bytes",
    "check_test_count",
    "STORE_PARAMS",
    "store_budget",
    "assembly_reserve",
    "matrix_share",
    "return_freed_memory",
]

_MB = 2**20
# What any run allocates besides its matrices (the front's trees and counts, kernels' small buffers), measured
# at 4-9 MB on 8,000-15,000-row tables (benchmarks/bench_limits.py --estimates)
RUN_OVERHEAD = 5 * 2**20


class MemoryLimitError(ValueError):
    """A structure of the run would exceed the memory limit; the message names the setting to lower."""


def default_memory_limit_mb() -> int:
    """Half of this machine's available memory (physical memory when the available figure is unknown), in MB."""
    try:
        import psutil  # optional: not a dependency

        return max(256, int(psutil.virtual_memory().available // 2 // _MB))
    except Exception:  # noqa: BLE001 - psutil missing or failing: fall back on sysconf
        pass
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        for key in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
            try:
                pages = os.sysconf(key)
            except (ValueError, OSError):
                continue
            if pages > 0:
                return max(256, int(pages * page // 2 // _MB))
    except (ValueError, OSError, AttributeError):
        pass
    return 4096  # unknown machine: 4 GB


MAX_MEMORY_LIMIT_MB = 10**9


def check_memory_limit(memory_limit) -> int:
    """``memory_limit`` (MB, or ``None`` for the default) as whole megabytes; a clear error when it is not one."""
    if memory_limit is None:
        return default_memory_limit_mb()
    if isinstance(memory_limit, (bool, np.bool_)) or not isinstance(memory_limit, (int, float, np.number)):
        raise ValueError(f"memory_limit must be a number of megabytes (or None), got {memory_limit!r}"[:200])
    if not np.isfinite(memory_limit) or memory_limit < 1:
        raise ValueError(f"memory_limit must be at least 1 MB, got {memory_limit!r}")
    if memory_limit > MAX_MEMORY_LIMIT_MB:  # beyond it the byte counts overflow int64 in the estimates
        raise ValueError(f"memory_limit must be at most {MAX_MEMORY_LIMIT_MB:,} MB (a petabyte), got {memory_limit!r}")
    return int(memory_limit)


def _size(nbytes: float) -> str:
    if nbytes >= 2**40:
        return f"{nbytes / 2**40:.2f} TiB"
    if nbytes >= 2**30:
        return f"{nbytes / 2**30:.1f} GiB"
    return f"{nbytes / _MB:.0f} MB"


def check_bytes(what: str, nbytes: float, limit_mb: int, lower: str) -> None:
    """Raise :class:`MemoryLimitError` when ``nbytes`` exceeds ``limit_mb`` megabytes.

    Parameters
    ----------
    what : str
        The structure, e.g. ``"the 0/1 test matrix (15,020 rows x 120,435 tests)"``.
    nbytes : float
        Its estimated size.
    limit_mb : int
        The memory limit in MB.
    lower : str
        What to change, e.g. ``"n_bins or the discretizer (mid, quantile)"``.
    """
    if nbytes > limit_mb * _MB:
        raise MemoryLimitError(
            f"{what} would need about {_size(nbytes)}, more than the memory limit of {limit_mb:,} MB; "
            f"lower {lower}, or raise memory_limit if the machine has the memory"
        )


def exact_test_count(X: np.ndarray, categorical: list[bool]) -> int:
    """Tests the ``exact`` discretizer gives: distinct values - 1 per numeric column, categories per categorical.

    A cheap upper bound is tried first by the caller; this sorts each column once.
    """
    total = 0
    for j in range(X.shape[1]):
        m = np.unique(X[:, j]).shape[0]
        if m < 2:
            continue
        total += (1 if m == 2 else m) if categorical[j] else m - 1
    return int(total)


def max_tests(name: str) -> tuple[int, str] | None:
    """The most tests a solver can use, and why; ``None`` when only memory bounds it.

    SAT encodes every example with ``(2^depth - 1) x (tests + 1)`` clauses and stops at depths where one
    example would need more than its clause cap: above this many tests it cannot even try depth 6, and its
    greedy tree costs a pass over rows x tests per node, so it returns a greedy tree at best.
    """
    if name == "sat":
        from treeexplorer.solvers.sat import _MAX_CLAUSES_PER_EXAMPLE

        return (
            _MAX_CLAUSES_PER_EXAMPLE // (2**6 - 1) - 1,
            "SAT encodes each example with (2^depth - 1) x tests clauses",
        )
    return None


def check_test_count(name: str, n_tests: int, method: str) -> None:
    """Refuse a discretization giving more tests than solver ``name`` can use (see :func:`max_tests`)."""
    cap = max_tests(name)
    if cap is not None and n_tests > cap[0]:
        raise ValueError(
            f"the {method} discretizer gives {n_tests:,} tests on this table and {name} takes at most "
            f"{cap[0]:,} ({cap[1]}); use the mid or quantile discretizer (n_bins) or fewer columns"
        )


def solver_bytes(name: str, n: int, n_tests: int, n_classes: int, params: dict) -> tuple[float, str, str]:
    """Estimated peak of a built-in solver's own structures: ``(bytes, what, setting to lower)``.

    Parameters
    ----------
    name : str
        Solver name; an unknown one gets ``0``.
    n, n_tests, n_classes : int
        Training rows, columns of its matrix (tests or numeric columns), classes.
    params : dict
        Its resolved parameters (``max_depth`` ...).
    """
    n, f, c = float(n), float(n_tests), float(max(n_classes, 2))
    if name == "murtree":
        depth = float(params.get("max_depth") or 3)
        # pair counts (classes x tests x tests, int32), transposed matrix, two bitsets of the rows per test,
        # row buffers and the similarity archive per level
        nbytes = c * f * f * 4 + n * f + 2 * (n / 64 + c + 1) * f * 8 + 2 * (2 * depth + 3) * n * 4
        return (
            nbytes,
            f"MurTree's tables ({n_tests:,} tests: pair counts grow with tests squared)",
            "the number of tests (n_bins, discretizer mid or quantile)",
        )
    if name == "sat":
        # sorting the rows to find the distinct ones copies the matrix a few times; the greedy tree per node too
        nbytes = 4 * n * f + 8 * n
        return (
            nbytes,
            f"SAT's distinct-row search ({int(n):,} rows x {n_tests:,} tests)",
            "the number of tests (n_bins, discretizer mid or quantile)",
        )
    if name == "branches":
        # bitsets of each test and its negation, and the greedy incumbent: CART on a sample of the rows as
        # float64 (40 bytes a cell with its working copies); the search store is budgeted apart (store_budget)
        from treeexplorer.solvers._incumbent import sample_rows

        nbytes = 2 * f * (n / 64 + 1) * 8 + c * f * 4 + 40.0 * sample_rows(int(n), int(f)) * f
        return (
            nbytes,
            f"BRANCHES' row bitsets and greedy incumbent ({int(n):,} rows x {n_tests:,} tests)",
            "the number of tests (n_bins, discretizer)",
        )
    if name == "contree":
        from treeexplorer.solvers.contree import expected_peak

        # each thread's sorted row lists per level as far as a run touches them, or the sort building the first
        # ones when that is larger (solvers.contree.expected_peak)
        depth = int(params.get("max_depth") or 3)
        threads = 1 if depth < 2 else max(1, min(_threads(params), int(f)))
        nbytes = float(expected_peak(int(n), int(f), depth, int(c), threads))
        return (
            nbytes,
            f"ConTree's sorted row lists ({int(n):,} rows x {n_tests:,} columns, depth {depth}, {threads} threads)",
            "max_depth or the number of columns",
        )
    if name in ("cart", "dpdt"):
        # CART: the sorted row order (int64), the rows gathered per column and their sorted values and labels
        # (float64, float64, int64): 32 bytes a cell, plus slack.  DPDT: its ranks (two int64 tables), its
        # greedy CART's copies (40) and a transposed float64 copy with its sorted orders (16; 72 a cell in all,
        # measured 70-80 on magic, room and 200,000 x 20), then each thread's working orders of a state's rows.
        nbytes = 40 * n * f if name != "dpdt" else 72 * n * f + 16 * n * _threads(params)
        return (
            nbytes,
            f"{name.upper()}'s sorted columns ({int(n):,} rows x {n_tests:,} columns)",
            "the number of columns (drop ID-like or many-category columns)",
        )
    return 0.0, "", ""


# Solvers whose search store grows while they search (BRANCHES' branches, SAT's clause database), and the
# parameter capping it (MB): the store stops growing there and the search returns its best so far, not proven.
STORE_PARAMS = {"branches": "memory_mb", "sat": "memory_mb"}
MIN_STORE_MB = 16


def store_budget(name: str, params: dict, limit_mb: int, other_bytes: float) -> tuple[float, str | None]:
    """Bytes solver ``name``'s growing store may take in a run whose other structures take ``other_bytes``.

    Its parameter (:data:`STORE_PARAMS`), lowered to what ``limit_mb`` leaves: so the run, store included,
    stays under the memory limit, and its estimate (other structures + this budget) bounds its peak.  Returns
    ``(bytes, notice)``, the notice saying when the parameter was lowered; ``(0, None)`` for a solver without
    such a store.  Raises :class:`MemoryLimitError` when less than ``MIN_STORE_MB`` would be left.
    """
    param = STORE_PARAMS.get(name)
    if param is None or params.get(param) is None:
        return 0.0, None
    asked = float(params[param]) * _MB
    left = limit_mb * _MB - other_bytes
    if left < MIN_STORE_MB * _MB:
        raise MemoryLimitError(
            f"{name}'s run would leave {max(left, 0) / _MB:.0f} MB of the memory limit of {limit_mb:,} MB for its "
            f"search store (at least {MIN_STORE_MB} MB); lower the number of tests (n_bins, discretizer mid or "
            "quantile), or raise memory_limit if the machine has the memory"
        )
    if asked <= left:
        return asked, None
    return left, (
        f"{name}: {param}={params[param]:g} lowered to {left / _MB:.0f} MB, what the memory limit of "
        f"{limit_mb:,} MB leaves for the search store (raise memory_limit for more)"
    )


def _threads(params: dict) -> int:
    jobs = params.get("n_jobs")
    return int(jobs) if jobs else max(1, os.cpu_count() or 1)


def discretizer_bytes(method: str, n: int, p: int) -> float:
    """Peak of fitting a discretizer beyond its matrix: MID ranks every column of the table at once (its sort
    orders, sorted values and labels, 24 bytes a cell, and the checked copy of the table and the column summaries:
    40 in all, measured on 200,000 x 20); the others sort one column at a time."""
    return 40.0 * n * p if method == "mid" else 0.0


_MMAP_THRESHOLD = 256 * 1024  # bytes: blocks this large are mapped apart and unmapped when freed


@functools.cache
def return_freed_memory() -> bool:
    """Make this process give large freed blocks back to the system at once (glibc only; once per process).

    glibc raises its mmap threshold each time a large mapped block is freed (up to 32 MB), so the next blocks
    of that size come from its heaps and stay there when freed.  A run's phases free temporaries of a column's
    size (the discretizers' sorts and counts, the loader's copies): on 200,000 rows x 20 columns 130 MB stayed
    resident after MID's ranking, which the memory estimate counts as gone before the solver starts, and the
    run peaked at 1.3x its ``memory_limit``.  Fixing the threshold keeps such blocks mapped apart, so what a
    phase frees leaves the resident set.  Returns whether the setting was made (``False`` elsewhere than glibc).
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
            return False  # not glibc
        return bool(libc.mallopt(-3, _MMAP_THRESHOLD))  # M_MMAP_THRESHOLD; setting it stops its growth
    except (OSError, AttributeError, TypeError):  # no C library to load (Windows) or no mallopt
        return False


def matrix_share(time_limit: float | None) -> float | None:
    """Seconds from the run's start after which building the test matrix stops (the tests not built are left
    out, with a notice): half the time limit, so that the solver keeps the other half."""
    return None if time_limit is None else 0.5 * time_limit


def assembly_reserve(n_train: int, n_test: int, time_limit: float | None) -> float:
    """Seconds kept after the solver for assembling the front: one numba pass over the rows per ~64 trees.

    Measured at about 20 ns per row and tree chunk (1M rows: ~0.05 s per pass); the reserve is twice that
    plus a little for building the trees, and never more than a tenth of the limit.
    """
    if time_limit is None:
        return 0.0
    est = 0.05 + 2 * (n_train + n_test) * 60e-9 * 4  # ~4 chunks of trees per front on a large table
    return float(min(est, 0.1 * time_limit))
