"""Stand-in solvers for the UI tests (pure numpy, no numba compile), registered under test-only names.

``uigreedy`` grows greedy Gini trees of depth 0..max_depth (a small honest front, never marked optimal
except the single leaf); ``uislow`` yields one more tree every ``step`` seconds until cancelled or
out of depth, so Cancel/time-limit behaviour can be exercised deterministically.
"""

from __future__ import annotations

import time

import numpy as np
from treeexplorer.solvers import RawFront, RawSolution, RawTree

from treeexplorer.registry import Param, SolverSpec, register


def _best_split(X, y, n_classes):
    best = (None, None, np.inf)
    for j in range(X.shape[1]):
        vals = np.unique(X[:, j])
        for a, b in zip(vals[:-1], vals[1:]):
            thr = (a + b) / 2
            m = X[:, j] <= thr
            score = 0.0
            for part in (y[m], y[~m]):
                p = np.bincount(part, minlength=n_classes) / len(part)
                score += len(part) * (1 - (p * p).sum())
            if score < best[2] - 1e-12:
                best = (j, thr, score)
    return best[0], best[1]


def greedy_tree(X, y, n_classes, depth):
    feature, threshold, left, right, value = [], [], [], [], []

    def grow(rows, d):
        k = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        value.append(np.bincount(y[rows], minlength=n_classes))
        if d == 0 or len(np.unique(y[rows])) < 2:
            return k
        j, thr = _best_split(X[rows], y[rows], n_classes)
        if j is None:
            return k
        m = X[rows, j] <= thr
        feature[k], threshold[k] = j, thr
        left[k] = grow(rows[m], d - 1)
        right[k] = grow(rows[~m], d - 1)
        return k

    grow(np.arange(len(y)), depth)
    return RawTree(np.array(feature), np.array(threshold), np.array(left), np.array(right), np.array(value))


def _run_greedy(X, y, n_classes, control, max_depth=3):
    sols = []
    for d in range(max_depth + 1):
        if control.stopped:
            break
        control.report("growing", depth=d)
        sols.append(RawSolution(greedy_tree(X, y, n_classes, d), optimal=d == 0, info={"depth_limit": d}))
    return RawFront(sols, "greedy Gini (test stand-in)", control.status())


def _run_slow(X, y, n_classes, control, max_depth=6, step=0.3):
    sols = []
    for d in range(max_depth + 1):
        sols.append(RawSolution(greedy_tree(X, y, n_classes, d), optimal=False, info={"depth_limit": d}))
        control.counters[0] = d + 1
        control.report("growing", trees=d + 1)
        t_end = time.perf_counter() + step
        while time.perf_counter() < t_end:
            if control.stopped:
                return RawFront(sols, "slow stand-in", control.status())
            time.sleep(0.01)
    return RawFront(sols, "slow stand-in", control.status())


def _run_binary(X, y, n_classes, control, max_depth=2):
    # Greedy trees over the discretizer's 0/1 tests, each claimed optimal: the claim the UI must qualify
    # ("optimal over the N tests of MID") and flag when a run on the raw columns beats it.
    sols = []
    for d in range(max_depth + 1):
        control.report("growing", depth=d)
        sols.append(RawSolution(greedy_tree(X.astype(np.float64), y, n_classes, d), optimal=True))
    return RawFront(sols, "greedy over binary tests, claimed optimal (test stand-in)", control.status())


def _run_fail(X, y, n_classes, control, max_depth=2):
    raise ValueError("the stand-in solver refuses this data on purpose")


def register_fakes() -> None:
    """Register ``uigreedy``, ``uislow``, ``uibinary`` and ``uifail`` (idempotent)."""
    register(
        SolverSpec(
            "uigreedy",
            "numeric",
            _run_greedy,
            (Param("max_depth", "int", 3, "deepest tree of the front", bounds=(0, 8)),),
            title="Greedy (test)",
            description="Greedy Gini trees, test stand-in.",
        )
    )
    register(
        SolverSpec(
            "uislow",
            "numeric",
            _run_slow,
            (
                Param("max_depth", "int", 6, "deepest tree", bounds=(0, 12)),
                Param("step", "float", 0.3, "seconds per tree", bounds=(0.0, 10.0)),
            ),
            title="Slow (test)",
            description="One tree per step, test stand-in.",
        )
    )
    register(
        SolverSpec(
            "uibinary",
            "binary",
            _run_binary,
            (Param("max_depth", "int", 2, "deepest tree", bounds=(0, 6)),),
            title="Binary (test)",
            description="Greedy trees over binary tests, claimed optimal; test stand-in.",
            default_discretizer="mid",
        )
    )
    register(
        SolverSpec(
            "uifail",
            "numeric",
            _run_fail,
            (Param("max_depth", "int", 2, "unused", bounds=(0, 4)),),
            title="Failing (test)",
            description="Always raises, test stand-in.",
        )
    )


def unregister_fakes() -> None:
    """Remove the stand-ins again, so other test modules see only the real solvers."""
    from treeexplorer import registry

    for name in FAKE_NAMES:
        registry._REGISTRY.pop(name, None)


FAKE_NAMES = ("uigreedy", "uislow", "uibinary", "uifail")
register_fakes()  # importing this module (TREEEXPLORER_PLUGINS=fakes) registers the stand-ins
