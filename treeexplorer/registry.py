"""Registry of solvers: what each one needs (binary tests or numeric columns) and which parameters it takes.

A solver plugs into the API, the CLI, the estimator and the app by registering a :class:`SolverSpec`.
Its ``run`` callable receives the training matrix in the form it asked for and returns a
:class:`solvers.RawFront`; the API turns that into a :class:`treeexplorer.Front` in original units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Param", "SolverSpec", "register", "get_solver", "available_solvers", "SOLVER_NAMES"]

# Every solver name the CLI knows (the CLI contract); those not registered answer "not implemented yet".
SOLVER_NAMES = ("cart", "dpdt", "murtree", "branches", "sat", "contree")


@dataclass(frozen=True)
class Param:
    """A user-facing solver parameter (rendered by the CLI and the app).

    Parameters
    ----------
    name : str
        Keyword name in :func:`treeexplorer.solve` (CLI flag is ``--name-with-dashes``).
    kind : {"int", "float", "str", "bool"}
    default : Any
        Default value (``None`` allowed, meaning "no limit").
    doc : str
        One line shown as help.
    bounds : tuple, optional
        Inclusive ``(low, high)`` for numbers; ``None`` means unbounded on that side.
    choices : tuple, optional
        Allowed values for ``str`` parameters.
    """

    name: str
    kind: str
    default: Any
    doc: str
    bounds: tuple | None = None
    choices: tuple | None = None

    def validate(self, value):
        """Return ``value`` converted to the parameter's kind or raise ``ValueError`` saying why."""
        if value is None:
            if self.default is None:
                return None
            raise ValueError(f"parameter {self.name!r} needs a value")
        try:
            if self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                value = int(value)
            elif self.kind == "float":
                value = float(value)
            elif self.kind == "bool":
                if isinstance(value, str):
                    value = value.lower() in ("1", "true", "yes", "on")
                value = bool(value)
            else:
                value = str(value)
        except (TypeError, ValueError):
            raise ValueError(f"parameter {self.name!r} must be {self.kind}, got {value!r}") from None
        if self.bounds is not None:
            lo, hi = self.bounds
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                allowed = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in [{lo}, {hi}]"
                raise ValueError(f"parameter {self.name!r} must be {allowed}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"parameter {self.name!r} must be one of {', '.join(map(str, self.choices))}; got {value!r}"
            )
        return value


@dataclass(frozen=True)
class SolverSpec:
    """How to call one solver.

    Parameters
    ----------
    name : str
        Registry key (``cart``, ``dpdt``, ``murtree``, ``branches``, ``sat``).
    input : {"numeric", "binary"}
        ``numeric``: numeric columns as they are plus one-hot categoricals (CART, DPDT);
        ``binary``: the 0/1 tests of a discretizer (MurTree, BRANCHES, SAT).
    run : callable
        ``run(X, y, n_classes, control, **params) -> solvers.RawFront``.  ``X`` is float64 for
        ``numeric`` and uint8 0/1 for ``binary``; ``control`` is a :class:`solvers.Control`.
    params : tuple of Param
        Parameters the solver accepts; any other one is rejected with a message.
    title : str
        Human name shown in the app.
    description : str
        One or two sentences for the app and ``--help``.
    default_discretizer : str
        Discretizer used when the caller does not choose one (binary solvers only).
    wants_features : bool
        Whether ``run`` also takes ``features=`` (what each column of ``X`` is: a column index or a
        :class:`treeexplorer.schema.Condition`), ``encoded=`` (the encoded training table) and ``schema=``,
        e.g. to find or complete the one-hot groups of a categorical column.  A solver that adds columns
        returns the extended list as ``RawFront.features``.
    """

    name: str
    input: str
    run: Callable
    params: tuple[Param, ...] = field(default_factory=tuple)
    title: str = ""
    description: str = ""
    default_discretizer: str = "none"
    wants_features: bool = False

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve(self, given: dict) -> dict:
        """Defaults overlaid with ``given`` (validated); unknown names raise ``ValueError``."""
        known = {p.name: p for p in self.params}
        unknown = sorted(k for k, v in given.items() if k not in known and v is not None)
        if unknown:
            accepted = ", ".join(sorted(known)) or "none"
            raise ValueError(f"solver {self.name!r} does not use {', '.join(unknown)} (it accepts: {accepted})")
        out = {}
        for name, p in known.items():
            out[name] = p.validate(given[name]) if given.get(name) is not None else p.default
        return out


_REGISTRY: dict[str, SolverSpec] = {}
_BROKEN: dict[str, str] = {}


def register(spec: SolverSpec) -> SolverSpec:
    """Add (or replace) a solver in the registry."""
    if spec.input not in ("numeric", "binary"):
        raise ValueError(f"SolverSpec.input must be 'numeric' or 'binary', got {spec.input!r}")
    _REGISTRY[spec.name] = spec
    return spec


def _load_builtin() -> None:
    # Importing the adapter modules registers them; a solver whose adapter is missing stays unregistered.
    import importlib

    for name in SOLVER_NAMES:
        if name in _REGISTRY or name in _BROKEN:
            continue
        try:
            importlib.import_module(f"treeexplorer.adapters.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"treeexplorer.adapters.{name}":
                _BROKEN[name] = f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # one broken solver must not take the CLI and the app down with it
            _BROKEN[name] = f"{type(exc).__name__}: {exc}"


def get_solver(name: str) -> SolverSpec:
    """The registered solver ``name`` or ``NotImplementedError``/``ValueError`` with a clear message."""
    _load_builtin()
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name in _BROKEN:
        raise RuntimeError(f"solver {name!r} failed to load ({_BROKEN[name]}); please report this")
    if name in SOLVER_NAMES:
        raise NotImplementedError(f"solver {name!r} is not implemented yet")
    raise ValueError(f"unknown solver {name!r}; choose one of {', '.join(SOLVER_NAMES)}")


def available_solvers() -> list[str]:
    """Names of the solvers that are implemented, in the CLI's order."""
    _load_builtin()
    return [n for n in SOLVER_NAMES if n in _REGISTRY] + sorted(set(_REGISTRY) - set(SOLVER_NAMES))
