"""Avellaneda's SAT encoding of a *perfect* decision tree of depth ``k`` (AAAI 2020), built incrementally.

The perfect tree is stored in heap order: internal nodes ``q = 1 .. 2^k - 1`` (root 1, children ``2q`` on
the 0 side and ``2q + 1`` on the 1 side) and leaves ``2^k .. 2^(k+1) - 1``.  Variables:

* ``F[q, j]``: internal node ``q`` tests feature ``j``.  Column ``p`` (the last one) is a *pass-through*
  test that is 0 for every example, so a node may send everything to its 0 side; this lets a perfect tree
  represent any tree of depth <= k, which the size minimisation needs.
* ``D[e, l]``: example ``e`` goes to the 1 side at level ``l`` (only for examples added so far).
* ``C[leaf, c]``: leaf predicts class ``c``; ``U[leaf]``: the leaf is used (size minimisation only).

Clauses (numbered as in the paper's presentation):

1. every internal node tests at least one feature;
2. ... and at most one (pairwise for few features, sequential counter otherwise);
3. an example reaching node ``q`` (the conjunction of its directions above) where ``q`` tests ``j`` with
   ``e_j = 1`` goes to the 1 side;
4. ... and with ``e_j = 0`` to the 0 side;
5. an example reaching a leaf forces the leaf's class to the example's label;
6. a leaf has at most one class (so two examples with different labels never share a leaf).

Clauses 3-5 are added per example, which is what makes the loop incremental: only the examples the
current tree gets wrong are ever encoded.  For the size, ``C[leaf, c] -> U[leaf]`` and an incremental
totalizer over ``U`` bounds the number of used leaves through an assumption, for a binary search.

This module imports python-sat, the one non-numpy dependency allowed in ``solvers/`` (SAT solver only).
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np
from pysat.card import CardEnc, EncType, ITotalizer
from pysat.solvers import Solver

__all__ = [
    "PerfectTreeEncoding",
    "SatRunner",
    "INTERRUPTIBLE",
    "Interrupted",
    "StoreFull",
    "clause_bytes",
    "resident_bytes",
]

# Bytes the SAT solver holds per clause of ``L`` literals: measured ~61 + 4.4 L on glucose4 (2M clauses of 3-9
# literals); one and a half times that leaves room for the learnt clauses and one example's Python lists.
_CLAUSE_BYTES, _LITERAL_BYTES, _SLACK = 64, 4.5, 1.5


def clause_bytes(n_clauses: float, n_literals: float) -> float:
    """Memory the SAT solver needs for ``n_clauses`` clauses with ``n_literals`` literals in all."""
    return _SLACK * (_CLAUSE_BYTES * n_clauses + _LITERAL_BYTES * n_literals)


# pysat back-ends that support solve_limited(expect_interrupt=True) + interrupt() and release the GIL.
INTERRUPTIBLE = frozenset({"glucose4", "glucose42", "minisat22", "maplechrono"})


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (ValueError, OSError, AttributeError):
    _PAGE = 4096


def resident_bytes() -> int | None:
    """This process's resident set in bytes (Linux ``/proc/self/statm``); ``None`` where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


class Interrupted(Exception):
    """The run's flag (time limit or cancel) was set while clauses were being built."""


class StoreFull(Interrupted):
    """The clauses of one more example would take the clause database past its memory budget."""


class SatRunner:
    """One pysat solver plus a watcher thread that interrupts it when ``flag[0]`` becomes non-zero.

    Back-ends without interrupt support (CaDiCaL) hold the GIL while solving; for them the flag is only
    honoured between two calls, which in the incremental loop are usually short.

    ``max_resident`` (bytes of this process's resident set, see :func:`resident_bytes`): the solver's learnt
    clauses grow while it solves, beyond the clauses added (which :class:`PerfectTreeEncoding` budgets), so the
    watcher also interrupts a call once the resident set passes it, and :meth:`solve` raises
    :class:`StoreFull`.  It counts the whole process: another run in the same process counts too.
    """

    def __init__(self, name: str, flag: np.ndarray, max_resident: int | None = None):
        self.name = name
        self.flag = flag
        self.solver = Solver(name=name)
        self.interruptible = name in INTERRUPTIBLE
        self.calls = 0
        self.solve_time = 0.0
        self._busy = False
        self.max_resident = max_resident
        self.over = False  # the resident set passed max_resident during a call
        self._stop = threading.Event()
        self._watcher = None
        if self.interruptible:
            self._watcher = threading.Thread(target=self._watch, daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            if not self._busy:
                continue
            if self.flag[0] != 0:
                self.solver.interrupt()
            elif self.max_resident is not None and (resident_bytes() or 0) > self.max_resident:
                self.over = True
                self.solver.interrupt()

    def add(self, clauses) -> None:
        self.solver.append_formula(clauses)

    def solve(self, assumptions=()) -> bool | None:
        """``True``/``False`` as the SAT answer, ``None`` when stopped by the flag before an answer; raises
        :class:`StoreFull` when stopped by ``max_resident``."""
        if self.over:
            raise StoreFull
        if self.flag[0] != 0:
            return None
        self.calls += 1
        t0 = time.perf_counter()
        try:
            if self.interruptible:
                self._busy = True
                res = self.solver.solve_limited(assumptions=list(assumptions), expect_interrupt=True)
                self._busy = False
                self.solver.clear_interrupt()
            else:
                res = self.solver.solve(assumptions=list(assumptions))
        finally:
            self._busy = False
            self.solve_time += time.perf_counter() - t0
        if res is None and self.over:
            raise StoreFull
        return res

    def model(self) -> np.ndarray:
        return np.asarray(self.solver.get_model(), dtype=np.int64)

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
        self.solver.delete()


class PerfectTreeEncoding:
    """Clauses 1-6 for depth ``k`` over ``n_features`` 0/1 tests (+ the pass-through) and ``n_classes``.

    Parameters
    ----------
    k : int
        Depth of the perfect tree (>= 1).
    n_features : int
        Number of real 0/1 tests; the pass-through column is added here.
    n_classes : int
    runner : SatRunner
        Receives the clauses.
    count_leaves : bool
        Add the used-leaf variables (for :meth:`leaf_bound`).
    max_bytes : float, optional
        Budget of the clause database (see :func:`clause_bytes`): an example whose clauses would exceed it
        raises :class:`StoreFull` before they are built.
    """

    def __init__(self, k: int, n_features: int, n_classes: int, runner: SatRunner, count_leaves: bool, max_bytes=None):
        self.k, self.p, self.n_classes, self.runner = k, n_features + 1, n_classes, runner
        self.max_bytes = max_bytes
        self.n_literals = 0
        # clauses 3-5 of one example: 2^lv x p clauses of lv + 2 literals per level lv < k, 2^k of k + 1
        self.example_clauses = (2**k - 1) * self.p + 2**k
        self.example_literals = sum(2**lv * self.p * (lv + 2) for lv in range(k)) + 2**k * (k + 1)
        self.n_internal, self.n_leaves = 2**k - 1, 2**k
        # clauses 1-2 (a sequential counter: about 3 clauses of <= 3 literals per test and node) come first
        base = 3 * self.n_internal * self.p
        if max_bytes is not None and clause_bytes(base, 3 * base) > max_bytes:
            raise StoreFull
        self.top = 0
        # F[q - 1, j] for internal node q; C[leaf - 2^k, c]
        self.F = self._new((self.n_internal, self.p))
        self.C = self._new((self.n_leaves, n_classes))
        self.n_clauses = 0
        for q in range(self.n_internal):
            self._check()
            if self.p <= 8:
                cnf = CardEnc.equals(lits=self.F[q].tolist(), bound=1, top_id=self.top, encoding=EncType.pairwise)
                self.top = max(self.top, cnf.nv)
                self._add(cnf.clauses)  # clauses 1 and 2
            else:
                clauses = self._exactly_one(self.F[q])
                self._check()
                self._add(clauses)
        if n_classes > 1:
            for leaf in range(self.n_leaves):  # clause 6
                if leaf % 64 == 0:
                    self._check()
                c = self.C[leaf]
                self._add([[-int(c[a]), -int(c[b])] for a in range(n_classes) for b in range(a + 1, n_classes)])
        self.U = None
        self._tot = None
        if count_leaves:
            self.U = self._new((self.n_leaves,))
            self._add(
                [[-int(self.C[leaf, c]), int(self.U[leaf])] for leaf in range(self.n_leaves) for c in range(n_classes)]
            )
        self.n_examples = 0
        # Sign pattern of the path to every node of each level: bits[l][t, m] = direction at level m.
        self._bits = [
            ((np.arange(2**lv)[:, None] >> np.arange(lv - 1, -1, -1)[None, :]) & 1).astype(np.int64)
            for lv in range(k + 1)
        ]

    def _exactly_one(self, lits: np.ndarray) -> list:
        """Clauses 1 and 2 over ``lits``: at least one (one clause), at most one by Sinz's sequential counter
        (``s_i``: one of the first ``i`` is true), built with numpy: pysat's encoder took 0.6 s per node for
        3,600 tests, too long between two looks at the control."""
        m = lits.shape[0]
        s = self._new((m - 1,))
        x = lits.astype(np.int64)
        pairs = np.concatenate(
            [
                np.stack([-x[:-1], s], axis=1),  # x_i -> s_i
                np.stack([-s[:-1], s[1:]], axis=1),  # s_(i-1) -> s_i
                np.stack([-x[1:], -s], axis=1),  # x_i -> not s_(i-1)
            ]
        )
        return [x.tolist(), *pairs.tolist()]

    def _check(self) -> None:
        """Building clauses can take long (many tests, deep trees): stop as soon as the run is stopped."""
        if self.runner.flag[0] != 0:
            raise Interrupted

    def _new(self, shape) -> np.ndarray:
        n = int(np.prod(shape))
        out = np.arange(self.top + 1, self.top + 1 + n, dtype=np.int64).reshape(shape)
        self.top += n
        return out

    def _add(self, clauses, n_literals=None) -> None:
        if len(clauses):
            self.runner.add(clauses)
            self.n_clauses += len(clauses)
            self.n_literals += sum(map(len, clauses)) if n_literals is None else n_literals

    @property
    def nbytes(self) -> float:
        """Estimated memory of the clauses added so far."""
        return clause_bytes(self.n_clauses, self.n_literals)

    def add_example(self, row: np.ndarray, label: int) -> None:
        """Clauses 3, 4 and 5 for one example (``row``: 0/1 values of the real tests)."""
        self._check()
        if self.max_bytes is not None and (
            clause_bytes(self.n_clauses + self.example_clauses, self.n_literals + self.example_literals)
            > self.max_bytes
        ):
            raise StoreFull
        cap = self.runner.max_resident
        if cap is not None and (resident_bytes() or 0) > cap:  # learnt clauses took what the model left
            raise StoreFull
        k = self.k
        d = self._new((k,))  # D[e, level]
        values = np.append(row.astype(np.int64), 0)  # the pass-through test is 0
        clauses = []
        for lv in range(k + 1):
            if lv > 8:
                self._check()
            bits = self._bits[lv]  # (2^lv, lv)
            # not-path literals: going 1-side at level m is +d[m], so negate it when bit is 1
            notpath = np.where(bits == 1, -d[:lv][None, :], d[:lv][None, :])  # (2^lv, lv)
            if lv < k:
                q = (2**lv - 1) + np.arange(2**lv)  # 0-based internal index of these nodes
                f = -self.F[q]  # (2^lv, p)
                side = np.where(values == 1, d[lv], -d[lv])  # (p,)
                n_nodes = 2**lv
                block = np.empty((n_nodes, self.p, lv + 2), dtype=np.int64)
                block[:, :, :lv] = notpath[:, None, :]
                block[:, :, lv] = f
                block[:, :, lv + 1] = side[None, :]
                clauses.extend(block.reshape(-1, lv + 2).tolist())
            else:
                cls = self.C[:, label]
                block = np.concatenate([notpath, cls[:, None]], axis=1)
                clauses.extend(block.tolist())
        self._add(clauses, self.example_literals)
        self.n_examples += 1

    def leaf_bound(self, max_leaves: int) -> list[int]:
        """Assumptions that allow at most ``max_leaves`` used leaves (builds the totalizer once)."""
        if self.U is None:
            raise RuntimeError("encoding built without count_leaves")
        if self._tot is None:
            self._check()
            self._tot = ITotalizer(lits=self.U.tolist(), ubound=self.n_leaves, top_id=self.top)
            self.top = self._tot.top_id
            self._add(self._tot.cnf.clauses)
        if max_leaves >= self.n_leaves:
            return []
        return [-int(self._tot.rhs[max_leaves])]

    def decode(self, model: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(feature, leaf_class)``: feature index per internal node (``p - 1`` = pass-through) and class
        per leaf (``-1`` when no class is set, i.e. the leaf is unused)."""
        val = np.zeros(self.top + 1, dtype=bool)
        pos = model[(model > 0) & (model <= self.top)]
        val[pos] = True
        feature = np.argmax(val[self.F], axis=1).astype(np.int64)
        cmask = val[self.C]
        leaf_class = np.where(cmask.any(axis=1), np.argmax(cmask, axis=1), -1).astype(np.int64)
        return feature, leaf_class
