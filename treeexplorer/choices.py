"""The library's choices among trees and runs, in one place: the 1-SE rule (a CV front's level, a sweep's ranking
of settings) and the "re-run with more tests" rule.

Below :mod:`treeexplorer.front` beside :mod:`treeexplorer.claims` (it imports no model: it reads a front's
fields and a CV table's rows), so cross-validation, the estimator, the app and the exporters share these rules
without importing each other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from treeexplorer.front import Front

__all__ = [
    "RULES",
    "RULE_NAMES",
    "MIN_RERUN_TESTS",
    "check_rule",
    "pick_levels",
    "rank_by_one_se",
    "more_tests_rerun",
    "more_tests_label",
]

# How a cross-validated front picks its level, and each rule's name in the app's text.
RULES = ("1se", "best")
RULE_NAMES = {"1se": "1-SE", "best": "best mean"}

# The MID test count a re-run offers at least (a smaller budget is doubled up to this).
MIN_RERUN_TESTS = 32


def check_rule(rule) -> str:
    """``rule`` when it names a rule of :data:`RULES`; else one clear error."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    return rule


def pick_levels(rows: list[dict], n_folds: int) -> tuple[int | None, int | None]:
    """Indices of the best-mean row and of the 1-SE row among rows every fold contributes to.

    ``best``: the highest ``cv_mean`` (simplest on ties); ``1se``: the simplest row whose mean is within one
    standard error (``cv_se``) of the best.  ``(None, None)`` when no row has all ``n_folds`` folds.
    """
    cand = [i for i, r in enumerate(rows) if r["n_folds"] == n_folds]
    if not cand:
        return None, None
    best = max(cand, key=lambda i: (rows[i]["cv_mean"], -i))
    bar = rows[best]["cv_mean"] - rows[best]["cv_se"] - 1e-12
    one_se = min(i for i in cand if rows[i]["cv_mean"] >= bar)
    return best, one_se


def rank_by_one_se(fronts: dict) -> list[tuple[int, object, dict]]:
    """``(setting index, CVFront, 1-SE row)`` of the successful settings: best 1-SE mean first, simplest on ties."""
    out = []
    for i, front in fronts.items():
        if front is None or front.error:
            continue
        try:
            row = front.select("1se")
        except ValueError:
            continue
        out.append((i, front, row))
    out.sort(key=lambda t: (-t[2]["cv_mean"], t[2]["level"], t[0]))
    return out


def more_tests_rerun(front: Front) -> dict | None:
    """The :func:`treeexplorer.solve` keyword arguments of the same run over a larger set of tests.

    Returns ``None`` when the run already searched every threshold (``search_space`` kind ``"raw"``).
    Otherwise the solver, its parameters and a richer discretizer: MID with twice the tests (at least
    ``MIN_RERUN_TESTS``) for a tests-based run of MID, MDLP or the given binary columns; ``n_bins``
    doubled for quantile/uniform; DPDT on the raw columns with another test generator: the exhaustive one.
    The data, target and split arguments are the caller's to add (the same as the original run's).  The
    exhaustive alternative, ``discretizer="exact"``, can need thousands of tests on a large table, so it is
    not the default offer.
    """
    ss = front.search_space or {}
    if ss.get("kind") == "raw":
        return None
    disc = ss.get("discretizer") or front.discretizer
    n = ss.get("n_tests")
    params = {k: v for k, v in front.params.items() if k != "mid_budget"}
    kwargs = {"solver": front.solver, **params}
    if front.params.get("generator") not in (None, "exhaustive") and front.discretizer == "raw":
        kwargs.update(generator="exhaustive")  # DPDT's generator chose the tests: let it offer every one
    elif disc in ("quantile", "uniform"):  # n_bins counts thresholds per numeric column there
        numeric = sum(not c.is_categorical for c in front.schema.columns) or 1
        kwargs.update(discretizer=disc, n_bins=2 * max(1, round((n or numeric) / numeric)))
    else:
        kwargs.update(discretizer="mid", n_bins=max(MIN_RERUN_TESTS, 2 * (n or 0)))
    return kwargs


def more_tests_label(front: Front) -> str | None:
    """The button text for :func:`more_tests_rerun`'s run (``None`` when there is none): what it will search."""
    kwargs = more_tests_rerun(front)
    if kwargs is None:
        return None
    if kwargs.get("generator") == "exhaustive" and "discretizer" not in kwargs:
        return "Re-run over every threshold (exhaustive tests)"
    disc, n = kwargs["discretizer"], kwargs["n_bins"]
    if disc in ("quantile", "uniform"):
        return f"Re-run with {n} {disc} thresholds per column"
    return f"Re-run with {n} MID tests"
