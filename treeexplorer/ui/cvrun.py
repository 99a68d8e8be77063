"""Cross-validated runs in the app, headless: the job's work, the chosen tree and a one-line summary.

A CV run is a run like any other: its front is solved on the training rows of the current split (so its
held-out points mean what they mean for every run), and :func:`treeexplorer.cross_validate` adds, on those same
training rows, the mean and standard deviation of held-out accuracy per complexity level over ``k`` stratified
folds.  The folds are the library's (same seed, same folds, same numbers as ``tx.cross_validate``).
"""

from __future__ import annotations

from dataclasses import replace

from treeexplorer.api import Prepared, run_prepared
from treeexplorer.choices import RULE_NAMES
from treeexplorer.cv import CVFront, cross_validate
from treeexplorer.request import RunRequest
from treeexplorer.solvers import Cancelled, Control

__all__ = ["FOLD_CHOICES", "DEFAULT_FOLDS", "cv_work", "cv_choice", "cv_summary"]

FOLD_CHOICES = (3, 10)  # the app's range of k; the library takes any k >= 2
DEFAULT_FOLDS = 5


def cv_work(
    prep: Prepared,
    request: RunRequest,
    params: dict,
    *,
    folds: int,
    seed: int = 0,
):
    """``work(control) -> CVFront`` for :class:`~treeexplorer.jobs.Job`: ``folds`` folds, then the refit.

    ``request`` is the run; ``params`` its solver parameters as given (the folds' fronts carry them).  The folds
    run one after another in the job's thread (each with the request's time limit); ``control``
    carries the job's Cancel into the running fold and its progress reports (``folds_done`` of ``folds``) to
    the UI.  The refit is an ordinary run on ``prep`` (the training rows, measured on the held-out rows), so the
    run's front is exactly what a run without CV would give.
    """

    def work(control: Control) -> CVFront:
        def report(info: dict) -> None:
            if control.progress is not None:
                control.progress(
                    {
                        "phase": f"cross-validating: {info['done']} of {folds} folds done",
                        "elapsed": info["elapsed"],
                        "folds_done": info["done"],
                        "folds": folds,
                    }
                )

        report({"done": 0, "elapsed": 0.0})
        cvf = cross_validate(
            prep.dataset,
            solver=request.solver,
            discretizer=request.discretizer,
            n_bins=request.n_bins,
            cv=folds,
            seed=seed,
            time_limit=request.time_limit,
            refit=False,
            progress=report,
            control=control,
            class_weight=request.objective,  # the run's weights and costs in every fold
            **params,
        )
        if control.cancelled:
            done = sum(f.status != "cancelled" for f in cvf.folds)
            raise Cancelled(f"cancelled during cross-validation ({done} of {folds} folds done)")
        if control.progress is not None:
            control.progress({"phase": "refitting on all training rows", "folds_done": folds, "folds": folds})
        front = run_prepared(prep, replace(request, mid_budget=None), control=control)  # as the folds: no anytime
        notices = list(cvf.notices) + [n for n in front.notices if n not in cvf.notices]
        limited = sum(f.status == "time_limit" for f in cvf.folds)
        if limited:
            notices.insert(0, f"{limited} of {folds} folds hit the time limit: their trees are the best found so far")
        return replace(cvf, refit=front, notices=notices)

    return work


def cv_choice(cvf: CVFront | None, rule: str = "1se", by: str = "splits"):
    """The refitted tree ``rule`` picks (``None`` when no level has a tree in every fold)."""
    if cvf is None or cvf.error:
        return None
    try:
        return cvf.select(rule, by)["tree"]
    except ValueError:
        return None


def cv_summary(cvf: CVFront, by: str = "splits") -> str:
    """``CV 5-fold: 1-SE 3 splits (0.947 ± 0.031), best mean 5 splits (0.953 ± 0.027)``."""
    bits = []
    for rule, name in RULE_NAMES.items():
        try:
            row = cvf.select(rule, by)
        except ValueError:
            return f"CV {cvf.cv}-fold: no level reached by every fold"
        level = f"{row['level']:g}" if isinstance(row["level"], float) else str(row["level"])
        bits.append(f"{name} {level} {by.replace('_', ' ')} ({row['cv_mean']:.3f} ± {row['cv_std']:.3f})")
    return f"CV {cvf.cv}-fold: " + ", ".join(bits)
