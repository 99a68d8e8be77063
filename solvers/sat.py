"""SAT inference of minimum-depth, then minimum-size, perfect decision trees (Avellaneda, AAAI 2020).

``DT_depth``: the smallest ``k`` such that a tree of depth ``k`` classifies every training example
correctly, found for ``k = 1, 2, ...`` by an incremental loop that encodes only the examples the current
tree misclassifies.  ``DT_size``: at that depth, a binary search on the number of used leaves (a
cardinality constraint) gives the minimum number of nodes.  The front repeats the size search for the
depths above the minimum, keeping each depth whose minimum size is strictly smaller.

The encoding lives in :mod:`solvers._sat_encoding`; the SAT solver is python-sat's.
"""

from __future__ import annotations

import math
import time
from collections import deque
from functools import partial

import numpy as np

from ._base import Control, RawFront, RawSolution, RawTree, check_xy
from ._sat_encoding import Interrupted, PerfectTreeEncoding, SatRunner, StoreFull, resident_bytes

__all__ = [
    "sat_tree",
    "find_conflicts",
    "ContradictoryExamples",
    "SAT_SOLVERS",
    "DEFAULT_SAT_SOLVER",
    "DEFAULT_MEMORY_MB",
]

SAT_SOLVERS = ("glucose4", "glucose42", "minisat22", "maplechrono", "cadical153", "cadical195")
DEFAULT_SAT_SOLVER = "glucose4"
DEFAULT_MEMORY_MB = 2000
_MAX_LISTED = 100  # rows named in an error message


class ContradictoryExamples(ValueError):
    """Rows with the same tests but different labels: no tree classifies them all correctly.

    Attributes
    ----------
    rows : ndarray
        0-based indices of every row in a contradictory group.
    groups : list of ndarray
        The rows of each group.
    """

    def __init__(self, message: str, rows: np.ndarray, groups: list[np.ndarray]):
        super().__init__(message)
        self.rows = rows
        self.groups = groups

    def renumbered(self, row_numbers: np.ndarray, how: str) -> ContradictoryExamples:
        """The same error with row ``i`` called ``row_numbers[i]`` (e.g. its line in the user's file)."""
        groups = [np.asarray(row_numbers)[g] for g in self.groups]
        msg, rows = _conflict_message(groups, len(row_numbers), how)
        return ContradictoryExamples(msg + _CONFLICT_ADVICE, rows, groups)


class RelabelNotice(str):
    """The ``conflicts='majority'`` notice; like :class:`ContradictoryExamples` it can renumber its rows, so the
    API names rows the same way in both (as in the user's table)."""

    groups: list
    changed: int

    @classmethod
    def make(cls, groups: list[np.ndarray], n_rows: int, changed: int, how: str = "0-based") -> RelabelNotice:
        msg, _ = _conflict_message(groups, n_rows, how)
        note = cls(
            f"SAT: {msg}; {changed} of them were relabelled with their group's majority label, so "
            "the trees are perfect on the relabelled data only"
        )
        note.groups, note.n_rows, note.changed = groups, n_rows, changed
        return note

    def renumbered(self, row_numbers: np.ndarray, how: str) -> RelabelNotice:
        """The same notice with row ``i`` called ``row_numbers[i]``."""
        groups = [np.asarray(row_numbers)[g] for g in self.groups]
        return RelabelNotice.make(groups, self.n_rows, self.changed, how)


_CHUNK_ROWS = 1 << 15  # rows packed between two looks at the control
_CHUNK_BYTES = 1 << 24  # ... and at most this many bytes of the matrix (wide matrices: fewer rows)
_ALWAYS_CELLS = 1 << 20  # a matrix this small is worked through even after a stop (instant: its greedy tree helps)
_COLUMNS_PER_LOOK = 1024  # columns compared (one Python step each) between two looks at the control


def _unique_rows(X: np.ndarray, control: Control | None = None, **kw):
    """``np.unique(X, axis=0, **kw)`` for a 0/1 matrix, via one byte string per row (bits packed 8 to a byte).

    Packed big-endian, the byte strings sort as the rows do, so the result is the same; it is much
    cheaper than sorting rows of ``p`` bytes, and the packing is chunked over the rows so that a stopped
    ``control`` is seen within a chunk (then ``None`` is returned).
    """
    n, p = X.shape
    w = max(1, (p + 7) // 8)
    chunk = max(1, min(_CHUNK_ROWS, _CHUNK_BYTES // max(p, 1)))
    packed = np.zeros((n, w), dtype=np.uint8)
    for s in range(0, n, chunk):
        if s and control is not None and control.stopped:  # small tables finish: their greedy tree is instant
            return None
        if p:
            packed[s : s + chunk] = np.packbits(X[s : s + chunk], axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, w))).reshape(-1)
    out = np.unique(keys, **kw)
    if n > chunk and control is not None and control.stopped:
        return None
    return out


def find_conflicts(X, y, control: Control | None = None) -> list[np.ndarray] | None:
    """Groups of rows (0-based, sorted) whose 0/1 tests are identical but whose labels differ.

    Parameters
    ----------
    X : array-like of shape (n, p)
        0/1 test matrix.
    y : array-like of shape (n,)
        Class labels.

    control : Control, optional
        Polled between chunks of rows; once it is stopped the search gives up and returns ``None``.

    Returns
    -------
    list of ndarray
        One index array per contradictory group, in order of first row (``None`` when stopped).
    """
    X = np.asarray(X)
    y = np.asarray(y)
    found = _unique_rows(np.asarray(X != 0, dtype=np.uint8), control, return_inverse=True)
    if found is None:
        return None
    return _conflict_groups(found[1], y)


def _conflict_groups(inverse: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Groups of rows with the same distinct row (``inverse``) but different labels (see :func:`find_conflicts`)."""
    inverse = inverse.reshape(-1)
    order = np.lexsort((y, inverse))
    g, lab = inverse[order], y[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    ends = np.r_[starts[1:], len(g)]
    groups = [np.sort(order[s:e]) for s, e in zip(starts, ends) if lab[s] != lab[e - 1]]
    groups.sort(key=lambda a: a[0])
    return groups


_CONFLICT_ADVICE = "; pass conflicts='majority' to relabel each group with its majority label"


def _conflict_message(groups: list[np.ndarray], n_rows: int, how: str = "0-based") -> tuple[str, np.ndarray]:
    rows = np.sort(np.concatenate(groups))
    shown = ", ".join(map(str, rows[:_MAX_LISTED].tolist()))
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return (
        f"{len(rows)} of {n_rows} training rows ({len(groups)} groups) have identical tests but "
        f"different labels, so no tree classifies them all correctly: rows {shown}{more} ({how})"
    ), rows


def _relabel_majority(y, groups, n_classes) -> np.ndarray:
    y = y.copy()
    for g in groups:
        counts = np.bincount(y[g], minlength=n_classes)
        y[g] = int(np.argmax(counts))  # lowest class on ties
    return y


def _reduce_features(Xu: np.ndarray, control: Control | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Drop constant, duplicate and complementary columns (same split up to swapping the sides); ``None``
    when ``control`` stops the run meanwhile.

    Each column is flipped so that its first row is 0 (a column and its complement become equal, a constant
    one all zeros) and packed 8 rows to a byte; blocks of about 16 MB of columns between two looks at the
    control (the ``exact`` discretizer gives ~150,000 tests on 15,000 rows).
    """
    n, p = Xu.shape
    keep = []
    seen = set()
    block = max(1, min(_COLUMNS_PER_LOOK, _CHUNK_BYTES // max(n, 1)))
    for a in range(0, p, block):
        if (a or Xu.size > _ALWAYS_CELLS) and control is not None and control.stopped:
            return None
        sub = Xu[:, a : a + block] ^ Xu[:1, a : a + block]
        packed = np.ascontiguousarray(np.packbits(sub, axis=0).T)
        varies = packed.any(axis=1)
        for j in range(packed.shape[0]):
            if not varies[j]:
                continue
            key = packed[j].tobytes()
            if key in seen:
                continue
            seen.add(key)
            keep.append(a + j)
    cols = np.array(keep, dtype=np.int64)
    if len(cols) == p:  # nothing to drop: no copy of a matrix that may be gigabytes
        return Xu, cols
    return np.ascontiguousarray(Xu[:, cols]), cols


def _walk(feature: np.ndarray, Xs: np.ndarray, k: int) -> np.ndarray:
    """Leaf (0-based among the 2^k) reached by every row of ``Xs`` (pass-through column last)."""
    pos = np.ones(Xs.shape[0], dtype=np.int64)
    rows = np.arange(Xs.shape[0])
    for _ in range(k):
        pos = 2 * pos + Xs[rows, feature[pos - 1]]
    return pos - 2**k


def _to_raw(feature, leaf_class, k, Xs, cols, X, y_fit, y_true, n_classes) -> RawTree:
    """The perfect tree as a compact RawTree: drop pass-through and one-sided nodes, merge equal leaves."""
    p_pass = Xs.shape[1] - 1
    feat, left, right, pred = [], [], [], []

    def build(q: int, rows: np.ndarray) -> int:
        if q >= 2**k:
            lab = leaf_class[q - 2**k]
            if rows.size:
                lab = int(np.bincount(y_fit[rows], minlength=n_classes).argmax())
            node = len(feat)
            feat.append(-1), left.append(-1), right.append(-1), pred.append(max(int(lab), 0))
            return node
        f = int(feature[q - 1])
        if f == p_pass:
            return build(2 * q, rows)
        ones = Xs[rows, f] == 1
        if rows.size and not ones.any():
            return build(2 * q, rows)
        if rows.size and ones.all():
            return build(2 * q + 1, rows)
        node = len(feat)
        feat.append(int(cols[f])), left.append(-1), right.append(-1), pred.append(0)
        lo = build(2 * q, rows[~ones])
        hi = build(2 * q + 1, rows[ones])
        if feat[lo] == -1 and feat[hi] == -1 and pred[lo] == pred[hi]:  # equal leaves: one leaf
            label = pred[lo]
            del feat[node + 1 :], left[node + 1 :], right[node + 1 :], pred[node + 1 :]
            feat[node] = -1
            pred[node] = label
            return node
        left[node], right[node] = lo, hi
        return node

    build(1, np.arange(Xs.shape[0]))
    return _finish_tree(feat, left, right, pred, X, y_true, n_classes)


def _finish_tree(feat, left, right, pred, X, y_true, n_classes) -> RawTree:
    feat = np.array(feat, dtype=np.int64)
    left = np.array(left, dtype=np.int64)
    right = np.array(right, dtype=np.int64)
    thr = np.where(feat >= 0, 0.5, 0.0)
    from ._kernels.predict import node_counts

    # only the tree's own columns as float64: the whole 0/1 matrix would be 8 bytes a cell (gigabytes with
    # the exact discretizer's tests, and seconds just to hand that memory over)
    used = np.unique(feat[feat >= 0])
    local = np.where(feat >= 0, np.searchsorted(used, np.maximum(feat, 0)), -1).astype(np.int64)
    value = node_counts(local, thr, left, right, np.asarray(X[:, used], dtype=np.float64), y_true, n_classes)
    # Leaves keep the SAT model's class (the majority of their rows, lowest class on ties, since every
    # group of identical rows was relabelled with its majority); an internal node shows its own majority.
    pred = np.where(feat >= 0, np.argmax(value, axis=1), np.array(pred, dtype=np.int64))
    return RawTree(feat, thr, left, right, value, pred.astype(np.int64))


def _ones_by_class(Xu, rows, lab, n_classes, control, big) -> np.ndarray | None:
    """``c1[c, j]``: rows of ``rows`` with label ``c`` and test ``j`` true; summed by chunks of about 16 MB
    (a node of a wide matrix is gigabytes), looking at the control between chunks; ``None`` when stopped."""
    p = Xu.shape[1]
    c1 = np.zeros((n_classes, p), dtype=np.int64)
    step = max(1, _CHUNK_BYTES // max(p, 1))
    order = np.argsort(lab, kind="stable")
    rows, lab = rows[order], lab[order]
    bounds = np.searchsorted(lab, np.arange(n_classes + 1))
    for c in range(n_classes):
        for s in range(bounds[c], bounds[c + 1], step):
            if big and control is not None and control.stopped:
                return None
            c1[c] += Xu[rows[s : min(s + step, bounds[c + 1])]].sum(axis=0, dtype=np.int64)
    return c1


def _greedy_tree(Xu, yu, cols, X, y_true, n_classes, control: Control | None = None) -> tuple[RawTree, bool]:
    """Information-gain splits until every leaf is pure: a consistent tree to fall back on (and a depth
    upper bound).  ``Xu`` are the distinct rows over the tests ``cols``, with consistent labels ``yu``.

    Grown breadth first; returns ``(tree, stopped)``: when ``control`` stops the run the tree grown so far
    (every node above some depth split, the others leaves: not perfect)."""
    feat, left, right, pred = [-1], [-1], [-1], [int(np.bincount(yu, minlength=n_classes).argmax())]
    queue = deque([(0, np.arange(Xu.shape[0]))])
    big = Xu.size > 1_000_000  # each node costs a pass over its rows x tests: look at the control at every one
    stopped = False
    done = 0
    while queue:
        if control is not None and (big or done % 64 == 63) and control.stopped:
            stopped = True
            break
        node, rows = queue.popleft()
        done += 1
        counts = np.bincount(yu[rows], minlength=n_classes)
        if np.count_nonzero(counts) <= 1:
            continue
        lab = yu[rows]
        c1 = _ones_by_class(Xu, rows, lab, n_classes, control, big)
        if c1 is None:
            stopped = True
            break
        c1 = c1.astype(np.float64)
        n1 = c1.sum(axis=0)
        n0 = len(rows) - n1
        c0 = counts[:, None] - c1

        def ent(c, n):
            with np.errstate(divide="ignore", invalid="ignore"):
                pr = np.where(n > 0, c / np.maximum(n, 1), 0.0)
                return -np.nansum(np.where(pr > 0, pr * np.log2(np.where(pr > 0, pr, 1)), 0.0), axis=0) * n

        score = ent(c1, n1) + ent(c0, n0)
        score[(n1 == 0) | (n0 == 0)] = np.inf
        f = int(np.argmin(score))
        feat[node] = f
        ones = Xu[rows, f] == 1
        for side, part in ((0, rows[~ones]), (1, rows[ones])):
            child = len(feat)
            (left if side == 0 else right)[node] = child
            feat.append(-1), left.append(-1), right.append(-1)
            pred.append(int(np.bincount(yu[part], minlength=n_classes).argmax()))
            queue.append((child, part))
    feat = [int(cols[f]) if f >= 0 else -1 for f in feat]
    return _finish_tree(feat, left, right, pred, X, y_true, n_classes), stopped


def _depth_of(tree: RawTree) -> int:
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    for k in range(tree.n_nodes):  # children come after their parent
        if tree.feature[k] >= 0:
            depth[tree.left[k]] = depth[tree.right[k]] = depth[k] + 1
    return int(depth.max())


# Clauses one example adds at depth k are about (2^k - 1) * (tests + 1); beyond this the encoding would not
# fit in memory for even a few hundred examples, so the search stops there and says so.
_MAX_CLAUSES_PER_EXAMPLE = 2_000_000


class _Search:
    """State shared by the depth and size phases: distinct rows, encoded examples, counters."""

    def __init__(self, Xs, yu, n_classes, sat_solver, control, count_leaves, max_bytes=None):
        self.Xs, self.yu, self.n_classes = Xs, yu, n_classes
        self.sat_solver, self.control, self.count_leaves = sat_solver, control, count_leaves
        self.max_bytes = max_bytes
        # The resident set the search may grow by: half the budget.  The clause model leaves out the learnt
        # clauses (a 54 MB budget, 600 x 200: 41 MB more in one 8 s call), and the solver's garbage collection
        # copies its clause arena, doubling it for a moment: stopped at half, the run's peak stays in the budget.
        start = resident_bytes() if max_bytes is not None else None
        self.max_resident = None if start is None else int(start + max_bytes / 2)
        self.full = None  # (depth, examples) when the clause database reached its budget
        self.subset: list[int] = []  # distinct rows encoded so far (kept from one depth to the next)
        self.in_subset = np.zeros(len(yu), dtype=bool)
        self.calls = 0
        self.sat_time = 0.0
        self.max_clauses = 0
        self._last_report = 0.0

    def open(self, k: int):
        """A solver with the encoding of depth ``k`` and the examples so far; ``(None, None)`` when the run is
        stopped while the clauses are built."""
        runner = SatRunner(self.sat_solver, self.control.flag, self.max_resident)
        try:
            enc = PerfectTreeEncoding(
                k, self.Xs.shape[1] - 1, self.n_classes, runner, self.count_leaves, self.max_bytes
            )
            for e in self.subset:
                enc.add_example(self.Xs[e, :-1], int(self.yu[e]))
        except Interrupted as exc:
            if isinstance(exc, StoreFull):
                self.full = (k, len(self.subset))
            self.calls += runner.calls
            runner.close()
            return None, None
        return runner, enc

    def close(self, runner, enc) -> None:
        self.calls += runner.calls
        self.sat_time += runner.solve_time
        self.max_clauses = max(self.max_clauses, enc.n_clauses)
        runner.close()

    def consistent(self, runner, enc, assumptions=(), phase="depth", **info):
        """Incremental loop: ``("found", feature, leaf_class)``, ``("unsat",)`` or ``("stopped",)``."""
        try:
            return self._consistent(runner, enc, assumptions, phase, **info)
        except Interrupted as exc:
            if isinstance(exc, StoreFull):
                self.full = (enc.k, len(self.subset))
            return ("stopped",)

    def _consistent(self, runner, enc, assumptions, phase, **info):
        if callable(assumptions):  # built lazily (the totalizer), inside the interruptible part
            assumptions = assumptions()
        while True:
            now = time.perf_counter()
            if now - self._last_report > 0.2:
                self._last_report = now
                self.control.report(f"sat {phase}", depth=enc.k, examples=len(self.subset), **info)
            res = runner.solve(assumptions)
            if res is None:
                return ("stopped",)
            if not res:
                return ("unsat",)
            feature, leaf_class = enc.decode(runner.model())
            leaves = _walk(feature, self.Xs, enc.k)
            bad = np.flatnonzero(leaf_class[leaves] != self.yu)
            if bad.size == 0:
                return ("found", feature, leaf_class)
            # one counterexample per (leaf, label): different mistakes, few clauses
            _, first = np.unique(leaves[bad] * self.n_classes + self.yu[bad], return_index=True)
            for e in bad[first]:
                if not self.in_subset[e]:
                    self.in_subset[e] = True
                    self.subset.append(int(e))
                enc.add_example(self.Xs[e, :-1], int(self.yu[e]))


def sat_tree(
    X,
    y,
    n_classes: int | None = None,
    *,
    max_depth: int | None = None,
    minimize_size: bool = True,
    front: bool = True,
    sat_solver: str = DEFAULT_SAT_SOLVER,
    conflicts: str = "error",
    control: Control | None = None,
    memory_mb: float | None = DEFAULT_MEMORY_MB,
) -> RawFront:
    """Minimum-depth and minimum-size decision trees that classify every training row correctly.

    Parameters
    ----------
    X : array-like of shape (n, p)
        0/1 tests (bool or integers 0/1), e.g. a discretizer's output.
    y : array-like of shape (n,)
        Class indices ``0..n_classes-1``.
    n_classes : int, optional
        Number of classes (default ``max(y) + 1``).
    max_depth : int, optional
        Largest depth of the front (default: minimum depth + 2).  It is an error when no perfect tree
        of depth ``<= max_depth`` exists.
    minimize_size : bool
        Minimise the number of nodes at each depth (``DT_size``); ``False`` returns the first tree of
        minimum depth (``DT_depth``) only.
    front : bool
        Also return the minimum-size tree of every depth up to ``max_depth`` when it is smaller.
    sat_solver : str
        python-sat back-end, one of :data:`SAT_SOLVERS`.  CaDiCaL cannot be interrupted inside a call,
        so with it a time limit is checked between calls only.
    conflicts : {"error", "majority"}
        Rows with identical tests but different labels: raise :class:`ContradictoryExamples` naming
        them, or relabel each group by its majority label and say so in ``stats["notices"]``.
    control : Control, optional
        Cancel flag / time limit (started by the caller); when it stops the run, the best trees so far
        are returned with ``optimal=False``.
    memory_mb : float or None
        Budget of the clause database in MB (about 100 bytes a clause, see
        :func:`solvers._sat_encoding.clause_bytes`); an example that would take it past the budget stops
        the search like a time limit (best trees so far, not proven) with a notice.  So does the process's
        resident set growing by half the budget since the search began (Linux; the SAT solver's learnt
        clauses and copies of its clause arena are outside the clause model).  ``None``: no budget.

    Returns
    -------
    RawFront
        One solution per depth whose minimum size is strictly smaller than at the depth below, with
        ``info = {"depth", "size_proven", "nodes", "leaves"}``; ``optimal`` is ``True`` when both the
        minimum depth and the size are proven.
    """
    X, y, n_classes = check_xy(X, y, n_classes, binary=True)
    if sat_solver not in SAT_SOLVERS:
        raise ValueError(f"sat_solver must be one of {', '.join(SAT_SOLVERS)}; got {sat_solver!r}")
    if conflicts not in ("error", "majority"):
        raise ValueError(f"conflicts must be 'error' or 'majority'; got {conflicts!r}")
    if max_depth is not None and (int(max_depth) != max_depth or max_depth < 0):
        raise ValueError(f"max_depth must be an integer >= 0; got {max_depth!r}")
    if memory_mb is not None and (isinstance(memory_mb, bool) or not memory_mb > 0):
        raise ValueError(f"memory_mb must be a positive number of megabytes (or None); got {memory_mb!r}")
    control = control if control is not None else Control()
    t_start = time.perf_counter()
    notices: list[str] = []
    y_fit = y
    objective = "minimum size (nodes) of a tree classifying every training row correctly, per depth"

    def stopped_early(phase: str) -> RawFront:
        """Stopped before any perfect tree: the majority leaf, not optimal, saying where the run was."""
        leaf = RawTree.leaf(np.bincount(y, minlength=n_classes))
        notices.append(f"SAT: stopped while {phase}, before any perfect tree; the tree shown is a single leaf")
        stats = {"sat_solver": sat_solver, "rows": int(len(y)), "tests": int(X.shape[1]), "notices": notices}
        stats["runtime"] = time.perf_counter() - t_start
        info = {"depth": 0, "min_depth_proven": False, "size_proven": False, "nodes": 1, "leaves": 1}
        return RawFront([RawSolution(leaf, False, info)], objective, control.status(), stats)

    if X.size > _ALWAYS_CELLS and control.stopped:  # stopped before it began (e.g. building a large matrix)
        return stopped_early("starting")
    found_rows = _unique_rows(X, control, return_index=True, return_inverse=True)  # X is 0/1 (check_xy)
    if found_rows is None:
        return stopped_early("finding rows with identical tests")
    groups = _conflict_groups(found_rows[2], y)
    if groups:
        msg, rows = _conflict_message(groups, len(y))
        if conflicts == "error":
            raise ContradictoryExamples(msg + _CONFLICT_ADVICE, rows, groups)
        y_fit = _relabel_majority(y, groups, n_classes)
        notices.append(RelabelNotice.make(groups, len(y), int(np.count_nonzero(y_fit != y))))

    first = np.sort(found_rows[1])  # distinct rows in table order; no copy when every row is distinct
    Xu = X if len(first) == len(y) else X[first]
    yu = y_fit[first]
    reduced = _reduce_features(Xu, control)
    if reduced is None:
        return stopped_early("removing duplicate tests")
    Xr, cols = reduced
    Xs = np.ascontiguousarray(np.hstack([Xr, np.zeros((Xr.shape[0], 1), dtype=np.uint8)]))
    stats = {
        "sat_solver": sat_solver,
        "rows": int(len(y)),
        "distinct_rows": int(len(yu)),
        "tests": int(X.shape[1]),
        "distinct_tests": int(len(cols)),
        "notices": notices,
    }
    present = int(np.unique(yu).size)

    searches: list[_Search] = []

    def finish(solutions):
        if searches and searches[0].full is not None:
            k_full, examples = searches[0].full
            notices.append(
                f"SAT: the clause database reached its memory budget of {memory_mb:,.0f} MB at depth {k_full} "
                f"with {examples} examples encoded; the search stopped there, not proven (raise memory_mb, "
                "or use fewer tests: another discretizer or n_bins)"
            )
        stats["runtime"] = time.perf_counter() - t_start
        return RawFront(solutions, objective, control.status(), stats)

    if present == 1:
        leaf = RawTree.leaf(np.bincount(y, minlength=n_classes))
        leaf.prediction[:] = int(yu[0])
        stats.update(min_depth=0, sizes_by_depth={0: 1})
        return finish([RawSolution(leaf, True, {"depth": 0, "size_proven": True, "nodes": 1, "leaves": 1})])

    greedy, g_stopped = _greedy_tree(Xr, yu, cols, X, y, n_classes, control)
    if g_stopped:
        notices.append(
            "SAT: stopped while building the greedy tree, before any perfect tree; the tree shown is the "
            f"greedy tree grown so far ({greedy.n_splits} splits, not perfect)"
        )
        stats["runtime"] = time.perf_counter() - t_start
        info = {"depth": _depth_of(greedy), "min_depth_proven": False, "size_proven": False, "greedy": True}
        info.update(nodes=greedy.n_nodes, leaves=int(np.count_nonzero(greedy.feature < 0)))
        return RawFront([RawSolution(greedy, False, info)], objective, control.status(), stats)
    g_depth = _depth_of(greedy)
    search = _Search(
        Xs, yu, n_classes, sat_solver, control, minimize_size, None if memory_mb is None else memory_mb * 2**20
    )
    searches.append(search)

    def tree_of(feature, leaf_class, k):
        return _to_raw(feature, leaf_class, k, Xs, cols, X, yu, y, n_classes)

    def n_leaves(t: RawTree) -> int:
        return int(np.count_nonzero(t.feature < 0))

    def sol(t, d, proven, depth_proven=True, **extra):
        info = {
            "depth": d,
            "min_depth_proven": bool(depth_proven),  # the minimum depth of a perfect tree is proven
            "size_proven": bool(proven),  # no smaller perfect tree of depth <= d exists
            "nodes": t.n_nodes,
            "leaves": n_leaves(t),
            **extra,
        }
        return RawSolution(t, bool(proven and depth_proven), info)

    def too_big(k):
        if (2**k - 1) * (Xs.shape[1]) <= _MAX_CLAUSES_PER_EXAMPLE:
            return False
        notices.append(
            f"SAT: depth {k} with {Xs.shape[1] - 1} tests needs about "
            f"{(2**k - 1) * Xs.shape[1]:,} clauses per example; search stopped there "
            "(use fewer tests, e.g. another discretizer)"
        )
        return True

    # -- DT_depth: k = 1, 2, ... until a perfect tree exists -----------------------------------------
    k = max(1, math.ceil(math.log2(present)))
    found = None
    runner = enc = None
    while True:
        if max_depth is not None and k > max_depth:
            if control.stopped:
                break
            raise ValueError(
                f"no tree of depth <= {max_depth} classifies every training row correctly (the "
                f"minimum depth is {k} or more); raise max_depth"
            )
        if k >= g_depth:  # every smaller depth is infeasible and the greedy tree has depth k
            found = (greedy, None)
            break
        if too_big(k):
            break
        runner, enc = search.open(k)
        res = search.consistent(runner, enc) if runner is not None else ("stopped",)
        if res[0] == "found":
            found = (tree_of(res[1], res[2], k), enc)
            break
        if runner is not None:
            search.close(runner, enc)
        runner = enc = None
        if res[0] == "stopped":
            break
        k += 1
    stats["min_depth"] = k if found is not None else None
    stats["min_depth_lower_bound"] = k
    if found is None:  # stopped before any SAT tree: fall back on the greedy tree
        notices.append(
            f"SAT: stopped while trying depth {k}, so the minimum depth is between {k} and "
            f"{g_depth}; the tree shown is a greedy perfect tree of depth {g_depth}, not minimal"
        )
        stats.update(sat_calls=search.calls, sat_time=search.sat_time, examples_encoded=len(search.subset))
        return finish([sol(greedy, _depth_of(greedy), False, depth_proven=False, greedy=True)])

    best, enc = found
    if not minimize_size:
        if runner is not None:
            search.close(runner, enc)
        stats.update(sat_calls=search.calls, sat_time=search.sat_time, examples_encoded=len(search.subset))
        return finish(
            [
                RawSolution(
                    best, True, {"depth": k, "size_proven": False, "nodes": best.n_nodes, "leaves": n_leaves(best)}
                )
            ]
        )

    # -- DT_size: binary search on the number of used leaves, for depth k and (front) the next ones -----
    top = k if not front else (max_depth if max_depth is not None else k + 2)
    solutions: list[RawSolution] = []
    sizes: dict[int, int] = {}
    hi_tree = best
    for d in range(k, top + 1):
        if control.stopped or (d > k or runner is None) and too_big(d):
            break
        if runner is None:
            runner, enc = search.open(d)
            if runner is None:
                break
        lo, hi = present, n_leaves(hi_tree)
        improved = d == k
        while lo < hi:
            mid = (lo + hi) // 2
            res = search.consistent(runner, enc, partial(enc.leaf_bound, mid), phase="size", leaves_at_most=mid)
            if res[0] == "found":
                hi_tree = tree_of(res[1], res[2], d)
                hi = n_leaves(hi_tree)
                improved = True
            elif res[0] == "unsat":
                lo = mid + 1
            else:
                break
        search.close(runner, enc)
        runner = enc = None
        proven = lo >= hi
        if proven:
            sizes[d] = hi_tree.n_nodes
        if improved:
            solutions.append(sol(hi_tree, d, proven))
        if not proven:
            break
    stats.update(
        sizes_by_depth=sizes,
        sat_calls=search.calls,
        sat_time=search.sat_time,
        examples_encoded=len(search.subset),
        max_clauses=search.max_clauses,
    )
    return finish(solutions)
