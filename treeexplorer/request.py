"""One validated description of a run: the solver and its parameters, the discretizer and the limits.

:meth:`RunRequest.build` checks every setting once, with one clear error each (numpy scalars are the numbers they
hold; an infinite or NaN time limit gets the one message of :func:`treeexplorer.solvers.time_limit_seconds`).
Every entry point builds one: :func:`treeexplorer.solve` (and so the CLI), the estimator, the folds of
``cross_validate`` and ``sweep``, the app's controller; the runner (:func:`treeexplorer.api.run_prepared`) takes it
as it is, without checking again.  The data side (table, target, split, missing values) is
:func:`treeexplorer.api.prepare`'s.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from treeexplorer.limits import check_memory_limit
from treeexplorer.objective import Objective
from treeexplorer.registry import SolverSpec, get_solver
from treeexplorer.solvers import time_limit_seconds
from treeexplorer.solvers._base import MAX_SECONDS

__all__ = ["RunRequest", "DISCRETIZER_OPTIONS", "check_discretizer", "check_n_bins", "check_mid_budget", "got"]

# Options a discretizer takes through ``discretizer_params`` (name -> default).
DISCRETIZER_OPTIONS = {"criterion": "entropy"}


def got(v) -> str:
    """A value as an error message quotes it (short; text said to be text)."""
    return repr(v)[:80] + (" (text)" if isinstance(v, str) else "")


def is_number(v) -> bool:
    """A real number, not a bool (numpy scalars included)."""
    return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))


def _plain(v):
    """numpy scalars as the Python values they hold (``np.int64(8)`` is 8)."""
    return v.item() if isinstance(v, np.generic) else v


def check_discretizer(disc) -> str | None:
    """``disc`` when it names a discretizer (or ``raw``, or None); else one clear error."""
    from treeexplorer.discretize import DISCRETIZER_NAMES

    if disc is not None and (not isinstance(disc, str) or disc not in (*DISCRETIZER_NAMES, "raw")):
        raise ValueError(f"unknown discretizer {got(disc)}; choose one of {', '.join(DISCRETIZER_NAMES)}")
    return disc


def check_n_bins(n_bins) -> int | None:
    """``n_bins`` as an int (numpy integers too) when it is a positive integer (or None); else one clear error."""
    if n_bins is not None and (
        not isinstance(n_bins, numbers.Integral) or isinstance(n_bins, (bool, np.bool_)) or n_bins < 1
    ):
        raise ValueError(f"n_bins must be a positive integer, got {got(n_bins)}")
    return None if n_bins is None else int(n_bins)


def check_mid_budget(v) -> float | None:
    """``mid_budget`` in seconds (positive, finite, at most ``MAX_SECONDS``) or None; else one clear error."""
    if v is not None and (not is_number(v) or not math.isfinite(v) or v <= 0 or v > MAX_SECONDS):
        raise ValueError(
            f"mid_budget must be a positive, finite number of seconds up to {MAX_SECONDS:.0e} (or None), got {got(v)}"
        )
    return None if v is None else float(v)


def discretizer_options(given: dict | None) -> dict:
    """``discretizer_params`` with the defaults filled in; an unknown option is an error."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(DISCRETIZER_OPTIONS))
    if unknown:
        raise ValueError(
            f"discretizer_params: unknown option(s) {', '.join(unknown)}; known: {', '.join(DISCRETIZER_OPTIONS)} "
            "(n_bins and mid_budget are arguments of their own)"
        )
    return {k: given.get(k) if given.get(k) is not None else v for k, v in DISCRETIZER_OPTIONS.items()}


@dataclass(frozen=True)
class RunRequest:
    """What one run asks for, checked: build it with :meth:`build` (the fields are then the values to use).

    Attributes
    ----------
    spec : SolverSpec
        The solver (a registered one, or a caller's own spec such as :mod:`treeexplorer.rashomon`'s);
        :attr:`solver` is its name.
    params : dict
        Its parameters, resolved (the registry's defaults filled in, each validated).
    discretizer : str or None
        The discretizer named by the caller (None or ``raw``: the solver's default, raw columns for numeric
        solvers); :attr:`discretizer_used` is the one that runs.
    n_bins, mid_budget : optional
        Thresholds per column (or tests, for MID); MID's anytime budget in seconds.
    options : dict
        The discretizer's options (:data:`DISCRETIZER_OPTIONS`, defaults filled in).
    time_limit : float or None
        Seconds for the run (finite, positive); None: no limit.
    memory_limit : int or None
        Megabytes; None: the default share of the machine running it (decided there).
    objective : Objective
        Class weights and costs (:class:`treeexplorer.objective.Objective`, checked for their form here and
        against the classes when the run starts); the default is plain misclassification.
    """

    spec: SolverSpec
    params: dict = field(default_factory=dict)
    discretizer: str | None = None
    n_bins: int | None = None
    mid_budget: float | None = None
    options: dict = field(default_factory=lambda: dict(DISCRETIZER_OPTIONS))
    time_limit: float | None = None
    memory_limit: int | None = None
    objective: Objective = field(default_factory=Objective)

    @classmethod
    def build(
        cls,
        solver: str | SolverSpec = "cart",
        params: dict | None = None,
        *,
        discretizer: str | None = None,
        n_bins: int | None = None,
        mid_budget: float | None = None,
        discretizer_params: dict | None = None,
        time_limit: float | None = None,
        memory_limit: float | None = None,
        class_weight=None,
        costs=None,
    ) -> RunRequest:
        """Check every setting of a run once (one clear error each) and return the request."""
        if isinstance(solver, SolverSpec):
            spec = solver
        elif isinstance(solver, str):
            spec = get_solver(solver)
        else:
            raise ValueError(f"solver must be a solver name (text), got {got(solver)}")
        discretizer = check_discretizer(discretizer)
        n_bins = check_n_bins(n_bins)
        mid_budget = check_mid_budget(mid_budget)
        time_limit = time_limit_seconds(time_limit)  # the one check of a limit: infinity means no limit
        if memory_limit is not None:
            memory_limit = check_memory_limit(memory_limit)
        options = discretizer_options(discretizer_params)
        params = {k: _plain(v) for k, v in (params or {}).items()}
        if "criterion" in params and all(p.name != "criterion" for p in spec.params):
            raise ValueError(
                f"solver {spec.name!r} has no criterion parameter; for the MID discretizer's impurity use "
                "discretizer_params={'criterion': ...} (CLI: --criterion)"
            )
        resolved = spec.resolve(params)
        if discretizer in (None, "raw") and spec.input == "numeric":
            if n_bins is not None:
                raise ValueError("n_bins needs a discretizer (numeric solvers use the raw columns by default)")
            if discretizer_params:
                raise ValueError(
                    "discretizer_params need a discretizer (numeric solvers use the raw columns by default)"
                )
        elif mid_budget is not None and (discretizer or spec.default_discretizer) != "mid":
            raise ValueError("mid_budget (the MID anytime loop) needs discretizer='mid'")
        objective = Objective.build(class_weight, costs)
        return cls(spec, resolved, discretizer, n_bins, mid_budget, options, time_limit, memory_limit, objective)

    @property
    def solver(self) -> str:
        return self.spec.name

    @property
    def raw(self) -> bool:
        """The solver sees the numeric columns as they are (no discretizer)."""
        return self.discretizer in (None, "raw") and self.spec.input == "numeric"

    @property
    def discretizer_used(self) -> str:
        """The discretizer that runs: ``raw``, the one asked for, or the solver's default."""
        return "raw" if self.raw else (self.discretizer or self.spec.default_discretizer)

    @property
    def criterion(self) -> str:
        """The discretizer's impurity (MID's ranking)."""
        return self.options["criterion"]
