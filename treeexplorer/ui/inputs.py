"""What ``Explorer(data, target, **settings)`` was given, checked before anything is built.

The Explorer takes what :func:`treeexplorer.solve` takes (a DataFrame, ``(X, y)``, arrays, a file path, a
bundled dataset name) and also a :class:`~treeexplorer.front.Front` or a list of fronts (opened as runs, not
solved again).  Settings are ``solve``'s keywords and the solver's parameters, validated by the same checks
(:func:`treeexplorer.api._check_solve_args`, :meth:`~treeexplorer.registry.SolverSpec.resolve`), so a wrong
one gets the same one-line error as in ``solve``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from treeexplorer.api import _check_solve_args
from treeexplorer.data import DataError, Dataset, bundled_datasets
from treeexplorer.front import Front
from treeexplorer.registry import available_solvers, get_solver

__all__ = ["ExplorerInput", "read_input", "SETTINGS"]

# solve()'s keywords the Explorer's controls stand for (the rest of solve's are for scripts: progress, control)
SETTINGS = ("discretizer", "n_bins", "mid_budget", "time_limit", "seed", "drop_missing", "cv")
NOT_HERE = {
    "progress": "the Explorer shows its own progress bar",
    "control": "the Explorer's Cancel button stops a run",
    "test": "upload a held-out file in the Data card",
    "memory_limit": "use tx.solve(..., memory_limit=...) and open its front: Explorer(front)",
    "categorical": "use tx.solve(..., categorical=...) and open its front: Explorer(front)",
    "discretizer_params": "use tx.solve(..., discretizer_params=...) and open its front: Explorer(front)",
    "allow_many_classes": "the Explorer asks before it uses a target with many classes",
}


@dataclass
class ExplorerInput:
    """The Explorer's start: ``kind`` is ``"bundled"`` (``dataset`` names it), ``"table"`` (``frame``, with
    ``name``), or ``"fronts"``; ``settings`` are the checked values for the sidebar's controls."""

    kind: str
    dataset: str | None = None
    frame: object = None
    name: str = ""
    target: str | int | None = None
    fronts: list[Front] = field(default_factory=list)
    solver: str | None = None
    params: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)


def _fronts(data) -> list[Front] | None:
    if isinstance(data, Front):
        return [data]
    if isinstance(data, (list, tuple)) and data and all(isinstance(f, Front) for f in data):
        return list(data)
    return None


def _default_solver() -> str | None:
    solvers = available_solvers()
    return "cart" if "cart" in solvers else (solvers[0] if solvers else None)


def read_input(data=None, target=None, *, solver=None, test_size=None, dataset=None, **settings) -> ExplorerInput:
    """Check what the Explorer was given; raises ``ValueError``/``DataError`` with one line naming the keyword.

    ``dataset`` is the Explorer's older keyword for a bundled name (``Explorer(dataset="car")``).
    """
    for key, why in NOT_HERE.items():
        if key in settings:
            raise ValueError(f"Explorer does not take {key}: {why}")
    own = {k: settings.pop(k) for k in SETTINGS if k in settings}
    cv = own.pop("cv", None)
    if cv is not None:
        from treeexplorer.ui.cvrun import FOLD_CHOICES

        lo, hi = FOLD_CHOICES
        if isinstance(cv, bool) or not isinstance(cv, int) or not lo <= cv <= hi:
            raise ValueError(f"cv must be a number of folds from {lo} to {hi} (or None), got {cv!r}")
    if dataset is not None and data is not None:
        raise ValueError("give the data once: Explorer(data) or Explorer(dataset=name), not both")
    if dataset is not None and not isinstance(dataset, str):
        raise ValueError(f"dataset must be a bundled dataset name (text), got {type(dataset).__name__}")
    fronts = _fronts(data)
    if fronts is not None and target is not None:
        raise ValueError("a front already has its target: Explorer(front) takes no target")
    solver_name = solver if solver is not None else _default_solver()
    # solve()'s own checks: the same one-line errors for the same mistakes
    checked, target = _check_solve_args(
        None if fronts is not None else data,
        target,
        solver=solver_name if solver_name is not None else "cart",
        discretizer=own.get("discretizer"),
        n_bins=own.get("n_bins"),
        test_size=test_size,
        seed=own.get("seed", 0),
        time_limit=own.get("time_limit"),
        progress=None,
        control=None,
        drop_missing=own.get("drop_missing", False),
        mid_budget=own.get("mid_budget"),
    )
    params: dict = {}
    if solver_name is not None:
        spec = get_solver(solver_name)
        spec.resolve(settings)  # unknown or out-of-range solver parameters: the registry's one-line errors
        params = {k: v for k, v in settings.items() if v is not None}
        disc = own.get("discretizer")
        if disc == "none":
            raise ValueError("the Explorer has no 'none' discretizer: numeric solvers use the raw columns ('raw')")
        if disc == "raw" and spec.input == "binary":
            raise ValueError(f"solver {spec.name!r} needs binary tests: choose a discretizer, not 'raw'")
    elif settings:
        raise ValueError(f"no solver is installed to take {', '.join(sorted(settings))}")
    own["cv"] = cv
    common = {"solver": solver_name, "params": params, "settings": own}
    if fronts is not None:
        return ExplorerInput("fronts", fronts=fronts, **common)
    if checked is None:  # the app's dataset keyword: loaded as the sidebar's list loads it (an alert if unknown)
        return ExplorerInput("bundled", dataset=dataset or "iris", target=target, **common)
    if isinstance(checked, Dataset):
        raise DataError("the Explorer takes the table itself (a DataFrame, a file or arrays), not a loaded Dataset")
    if isinstance(checked, str) and checked in bundled_datasets() and not Path(checked).is_file():
        return ExplorerInput("bundled", dataset=checked, target=target, **common)
    if isinstance(checked, (str, bytes)) or hasattr(checked, "__fspath__"):
        from treeexplorer.data import _resolve

        frame, name = _resolve(checked)  # a file, or a scikit-learn dataset name: one-line errors
        return ExplorerInput("table", frame=frame, name=name, target=target, **common)
    import pandas as pd

    if isinstance(checked, pd.DataFrame):
        return ExplorerInput("table", frame=checked, name="DataFrame", target=target, **common)
    raise DataError(
        "data must be a DataFrame, (X, y), a file path, a bundled dataset name or a Front (or a list of fronts); "
        f"got {type(checked).__name__}"
    )
