"""The 0/1 test matrix of a :class:`~treeexplorer.schema.Binarization`, built by blocks and stoppable.

``Binarization.transform`` evaluates one test at a time into a column of a row-major matrix: fine for a few
hundred tests, but the ``exact`` discretizer gives a test per distinct value (150,000 on a 15,000 x 10 table),
where it took minutes and could not be stopped.  Here consecutive tests on the same column and operator are
evaluated together (one broadcast comparison per block of rows and tests, written in place), and ``stop()``
is polled between blocks: once it answers True the tests not yet built are left out, with a notice.

The matrix's memory is first touched by blocks too, under ``stop``: on some machines the kernel takes seconds
to hand over a few hundred megabytes (first-touch page faults ran at 70-150 MB/s on the development VM), and
the first column of a row-major matrix touches every one of its pages.  A stop while touching keeps the
memory touched so far, seen as a narrower matrix of the first tests.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from treeexplorer.schema import OP_LE, OP_NA, Binarization, base_op, missing_true

__all__ = ["build_test_matrix", "as_float_matrix"]

_BLOCK_BYTES = 1 << 24  # bytes of the matrix written between two looks at ``stop``


def _runs(binz: Binarization) -> list[tuple[int, int, int, int, np.ndarray]]:
    """``(first, last + 1, column, op, values)`` of each run of consecutive tests on one column and op."""
    runs = []
    conds = binz.conditions
    start = 0
    for j in range(1, len(conds) + 1):
        if j == len(conds) or conds[j].column != conds[start].column or conds[j].op != conds[start].op:
            values = np.array([c.value for c in conds[start:j]], dtype=np.float64)
            runs.append((start, j, conds[start].column, conds[start].op, values))
            start = j
    return runs


def build_test_matrix(binz: Binarization, X_enc, stop=None) -> tuple[Binarization, np.ndarray]:
    """The uint8 0/1 matrix ``(n, len(binz))`` of ``binz`` on ``X_enc`` (as ``binz.transform``).

    Parameters
    ----------
    binz : Binarization
    X_enc : array-like of float, shape (n, p)
        Rows encoded with the schema ``binz`` was fitted on.
    stop : callable, optional
        ``stop() -> bool``, polled between blocks of about 16 MB of the matrix (a run's time limit or
        cancel).

    Returns
    -------
    (Binarization, ndarray)
        ``binz`` and its matrix, or, when ``stop`` answered True, the tests built so far (a prefix of
        ``binz``, with a notice naming how many were left out) and their matrix.
    """
    X_enc = np.asarray(X_enc, dtype=np.float64)
    n = X_enc.shape[0]
    m = len(binz)
    flat = np.empty(n * m, dtype=np.uint8)
    touched = _touch(flat, stop)
    if touched < flat.size:  # stopped while the memory was handed over: the first tests that fit in it
        m = min(m, max(1, touched // max(n, 1)))
        binz = _prefix(binz, None, m)[0] if m < len(binz) else binz
        stop = None  # written at memory speed now: built whole
    out = flat[: n * m].reshape(n, m)
    flags = out.view(np.bool_)  # comparisons are written straight into the 0/1 bytes
    done = 0
    for first, last, column, op, values in _runs(binz):
        x = X_enc[:, column, None]
        b = base_op(op)
        compare = np.less_equal if b == OP_LE else np.equal
        # blocks of rows across the whole run: each row's bytes are written in one contiguous stretch
        rows = max(1, _BLOCK_BYTES // (last - first))
        for r in range(0, n, rows):
            if stop is not None and done and stop():
                return _prefix(binz, out, done)  # the run being built is left out as a whole
            block = flags[r : r + rows, first:last]
            if b == OP_NA:
                np.copyto(block, np.isnan(x[r : r + rows]))
                continue
            compare(x[r : r + rows], values[None, :], out=block)
            if missing_true(op):  # "or missing": a gap holds too
                block |= np.isnan(x[r : r + rows])
        done = last
    return binz, out


def as_float_matrix(binz: Binarization, matrix: np.ndarray, stop=None) -> tuple[Binarization, np.ndarray]:
    """The 0/1 ``matrix`` as float64 (what the numeric solvers take), its memory first touched by blocks under
    ``stop``: eight bytes a cell (1.3 GB for the exact tests of 8,000 rows x 3 columns, seconds of page faults).
    When ``stop`` answers True the first tests that fit in the memory touched so far are kept, with a notice."""
    n, m = matrix.shape
    flat = np.empty(n * m, dtype=np.float64)
    touched = _touch(flat.view(np.uint8), stop) // 8
    if touched < flat.size:
        keep = min(m, max(1, touched // max(n, 1)))
        binz, matrix = _prefix(binz, matrix, keep)
        m = keep
    out = flat[: n * m].reshape(n, m)
    out[:] = matrix
    return binz, out


def _touch(flat: np.ndarray, stop) -> int:
    """Write ``flat`` by blocks (the first touch of its pages), polling ``stop``; bytes touched."""
    if stop is None:
        return flat.size
    for s in range(0, flat.size, _BLOCK_BYTES):
        if s and stop():
            return s
        flat[s : s + _BLOCK_BYTES] = 0
    return flat.size


def _prefix(binz: Binarization, out: np.ndarray | None, done: int) -> tuple[Binarization, np.ndarray | None]:
    left = len(binz) - done
    notice = (
        f"stopped (time limit or cancel) while building the {binz.method} test matrix: {left:,} of "
        f"{len(binz):,} tests left out"
    )
    gains = None if binz.gains is None else binz.gains[:done]
    kept = replace(binz, conditions=binz.conditions[:done], gains=gains, notices=[*binz.notices, notice])
    return kept, None if out is None else np.ascontiguousarray(out[:, :done])
