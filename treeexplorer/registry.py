"""Registry of solvers: what each one needs (binary tests or numeric columns) and which parameters it takes.

A solver plugs into the API, the CLI, the estimator and the app by registering a :class:`SolverSpec`.
Its ``run`` callable receives the training matrix in the form it asked for and returns a
:class:`solvers.RawFront`; the API turns that into a :class:`treeexplorer.Front` in original units.

This module is the one list of solvers: the built-in adapters, the installed packages' entry points of the group
``treeexplorer.solvers`` (each names a :class:`SolverSpec`, or a module that registers its solvers when imported)
and, as a fallback, the modules named in the ``TREEEXPLORER_PLUGINS`` environment variable (comma-separated) are
loaded here, once each.  Both import code: install or name only packages you trust.  A plug-in that fails to load
is remembered in :func:`unavailable_solvers` (shown by the app and by ``treeexplorer solvers``) instead of taking
the others down.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "COMMON_PARAMS",
    "COMMON_PARAM_NAMES",
    "FRONT_MAX_NODES",
    "EXACT_SPARSITY",
    "whole_front",
    "solver_help",
    "Param",
    "SolverSpec",
    "register",
    "unregister",
    "get_solver",
    "available_solvers",
    "unavailable_solvers",
    "load_plugins",
    "SOLVER_NAMES",
    "PLUGINS_ENV",
    "ENTRY_POINT_GROUP",
]

# The built-in solvers, in the order the CLI and the app list them.
SOLVER_NAMES = ("cart", "dpdt", "murtree", "branches", "sat", "contree")
# Module that registers each built-in solver when imported.
BUILTIN_ADAPTERS = {name: f"treeexplorer.adapters.{name}" for name in SOLVER_NAMES}
# Environment variable naming extra modules to import (comma-separated); each may register solvers.
PLUGINS_ENV = "TREEEXPLORER_PLUGINS"
# Entry point group of installed plug-in packages: each entry point names a SolverSpec (registered when loaded) or a
# module that registers its solvers when imported.
ENTRY_POINT_GROUP = "treeexplorer.solvers"


# Solver parameters that several solvers share and every entry point offers by name (CLI flags of solve and sweep,
# the estimators' arguments, the app's run labels): (name, type, help).  Each solver's Param still validates them.
COMMON_PARAMS = (
    ("max_depth", int, "maximum depth"),
    ("max_nodes", int, "node budget (number of splits)"),
    ("sparsity", float, "cost per split (α or λ)"),
    ("cart_depth", int, "DPDT: depth of the CART test generator"),
)
COMMON_PARAM_NAMES = tuple(name for name, _, _ in COMMON_PARAMS)


def solver_help(default: str = "cart") -> str:
    """The CLI's help for a solver argument: the built-in names and plug-ins (``solve`` and ``sweep`` alike)."""
    return (
        f"a registered solver: {', '.join(SOLVER_NAMES)} or one a {PLUGINS_ENV} module adds "
        f"(see `treeexplorer solvers`; default: {default})"
    )


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

    def validate(self, value, *, text: bool = False):
        """Return ``value`` converted to the parameter's kind or raise ``ValueError`` saying why.

        Types are strict: ``max_depth=True`` or ``max_depth="3"`` is an error, not 1 or 3.  With ``text=True``
        (the CLI's ``-P NAME=VALUE``) ``value`` is the text typed by the user and is parsed: ``3``, ``0.5``,
        ``true``/``false`` (also ``yes``/``no``, ``1``/``0``, ``on``/``off``).  Both ways give the same messages.
        """
        import math
        import numbers

        import numpy as np

        if value is None:
            if self.default is None:
                return None
            raise ValueError(f"parameter {self.name!r} needs a value")
        what = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "text"}.get(
            self.kind, self.kind
        )
        bad = ValueError(f"parameter {self.name!r} must be {what}, got {repr(value)[:200]}")  # CLI and API alike
        if text and not isinstance(value, str):
            raise TypeError("validate(text=True) takes the text typed by the user")
        if text:
            raw = value.strip()
            if self.kind == "int":
                try:
                    value = int(raw, 10)
                except ValueError:
                    raise bad from None
            elif self.kind == "float":
                try:
                    value = float(raw)
                except ValueError:
                    raise bad from None
            elif self.kind == "bool":
                words = {"true": True, "yes": True, "1": True, "on": True, "false": False, "no": False}
                words.update({"0": False, "off": False})
                if raw.lower() not in words:
                    raise bad
                value = words[raw.lower()]
            else:
                value = raw
        elif self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            value = bool(value)
        elif isinstance(value, (bool, np.bool_)) or self.kind in ("int", "float") and isinstance(value, str):
            raise bad
        elif self.kind == "int":
            if isinstance(value, numbers.Integral):
                value = int(value)
            elif isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
                value = int(value)
            else:
                raise bad
        elif self.kind == "float":
            if not isinstance(value, numbers.Real):
                raise bad
            value = float(value)
        elif not isinstance(value, str):
            raise bad
        if self.kind == "int" and abs(value) >= 2**62:  # solvers hold integers in int64
            raise ValueError(f"parameter {self.name!r} must be an integer below 2**62 in size, got {value!r}"[:300])
        if self.kind == "float" and not math.isfinite(value):
            raise ValueError(f"parameter {self.name!r} must be a finite number, got {value!r}")
        if self.bounds is not None:
            lo, hi = self.bounds
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                allowed = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in [{lo}, {hi}]"
                raise ValueError(f"parameter {self.name!r} must be {allowed}, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"parameter {self.name!r} must be one of {', '.join(map(str, self.choices))}; got {value!r}"[:300]
            )
        return value


def whole_front(single: str) -> Param:
    """The ``front`` switch of a whole-front solver; ``single`` says what it returns when off."""
    return Param(
        "front",
        "bool",
        True,
        f"Return the optimal tree for every number of splits (the exact error-vs-splits front); off: {single}.",
    )


# Parameters the exact whole-front solvers (MurTree, ConTree) share, declared once.
FRONT_MAX_NODES = Param(
    "max_nodes",
    "int",
    None,
    "Most splits (internal nodes) a tree may use; the front covers 0 up to this many "
    "(default: a full tree, 2^max_depth - 1).",
    bounds=(0, None),
)
EXACT_SPARSITY = Param(
    "sparsity",
    "float",
    None,
    "Return only the tree minimising error rate + sparsity x splits (e.g. 0.01: a split must "
    "fix 1% of the rows to be worth it). Exact for any real value.",
    bounds=(0.0, None),
)


@dataclass(frozen=True)
class SolverSpec:
    """How to call one solver.

    Parameters
    ----------
    name : str
        Registry key (:data:`SOLVER_NAMES`: ``cart``, ``dpdt``, ``murtree``, ``branches``, ``sat``, ``contree``;
        or a plug-in's name).
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
    progress_words : callable, optional
        ``progress_words(report, params) -> (text, fraction)``: the solver's own progress reports (phases starting
        with its name) in plain words, with the fraction done when the work can be counted (else None);
        :func:`treeexplorer.ui.progress.describe` adds the elapsed time.  None: the phase and counters as they come.
    wants_features : bool
        Whether ``run`` also takes ``features=`` (what each column of ``X`` is: a column index or a
        :class:`treeexplorer.schema.Condition`), ``encoded=`` (the encoded training table) and ``schema=``,
        e.g. to find or complete the one-hot groups of a categorical column.  A solver that adds columns
        returns the extended list as ``RawFront.features``.
    ranked : bool
        Whether ``run``'s solutions come in rank order (a Rashomon set): a stop while assembling then keeps a
        prefix of that order, not a sample spread over the front.
    weighted : bool
        Whether ``run`` also takes ``sample_weight=`` (float64, one per row, or None) and ``costs=`` (float64
        ``(k, k)`` ``costs[true, predicted]``, or None) and minimises ``sum_i w[i] * C[y[i], yhat[i]]`` (see
        ``treeexplorer.solvers._objective``), exact where the solver is exact.  Both None: the plain objective.
    missing : bool
        Whether a ``numeric`` solver takes NaN in ``X`` and learns where a gap goes at each split (its trees
        carry ``RawTree.missing_left``).  Binary solvers always do (:attr:`takes_missing`): the discretizer gives
        each test of a column with gaps with either side for them.
    """

    name: str
    input: str
    run: Callable
    params: tuple[Param, ...] = field(default_factory=tuple)
    title: str = ""
    description: str = ""
    default_discretizer: str = "none"
    wants_features: bool = False
    progress_words: Callable[[dict, dict], tuple[str, float | None]] | None = None
    ranked: bool = False
    weighted: bool = False
    missing: bool = False

    @property
    def takes_missing(self) -> bool:
        """Whether the solver learns where missing values go (see ``missing``)."""
        return self.input == "binary" or self.missing

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
_BROKEN: dict[str, str] = {}  # solver or plug-in module -> why it could not be loaded
_TRIED: set[str] = set()  # modules imported (or tried) already: each is loaded once per process
# Held while modules load: a module is marked tried before its import ends, so without the lock a second thread (a
# server's other session, the warm-up thread) would skip it mid-import and list the registry without its solver.
_LOADING = threading.RLock()


def register(spec: SolverSpec) -> SolverSpec:
    """Add (or replace) a solver in the registry."""
    if spec.input not in ("numeric", "binary"):
        raise ValueError(f"SolverSpec.input must be 'numeric' or 'binary', got {spec.input!r}")
    _REGISTRY[spec.name] = spec
    _BROKEN.pop(spec.name, None)
    return spec


def unregister(name: str) -> SolverSpec | None:
    """Remove solver ``name`` from the registry (for tests and plug-ins); returns its spec, if any.

    A built-in solver removed this way stays removed for the process (its module is not imported again).
    """
    return _REGISTRY.pop(name, None)


def _import(module: str, key: str) -> None:
    if module in _TRIED:
        return
    _TRIED.add(module)
    try:
        importlib.import_module(module)
    except Exception as exc:  # one broken solver must not take the CLI and the app down with it
        _BROKEN[key] = f"{type(exc).__name__}: {exc}"


def _load_entry_point(ep) -> None:
    key = f"entry point {ep.name} ({ep.value})"
    if key in _TRIED:
        return
    _TRIED.add(key)
    try:
        obj = ep.load()
        if isinstance(obj, SolverSpec):
            register(obj)
        elif not hasattr(obj, "__path__") and not hasattr(obj, "__file__"):  # a module registers itself on import
            raise TypeError(f"names a {type(obj).__name__}, not a SolverSpec or a module")
    except Exception as exc:  # one broken plug-in must not take the CLI and the app down with it
        _BROKEN[f"plugin {ep.name}"] = f"{type(exc).__name__}: {exc}"


@functools.cache  # scanning every installed distribution takes tens of ms; load_plugins runs often
def _entry_points() -> tuple:
    try:
        return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # a broken distribution's metadata must not stop the built-in solvers
        return ()


def load_plugins(modules: str | None = None) -> None:
    """Import the built-in adapters, the ``treeexplorer.solvers`` entry points and the plug-in modules (default:
    ``$TREEEXPLORER_PLUGINS``).

    Safe to call often: each module and entry point is loaded at most once; failures are listed by
    :func:`unavailable_solvers`, keyed by solver name (built-in) or ``plugin <name>``.
    """
    spec = os.environ.get(PLUGINS_ENV, "") if modules is None else modules
    with _LOADING:
        for name, module in BUILTIN_ADAPTERS.items():
            if name not in _REGISTRY:
                _import(module, name)
        for ep in _entry_points():
            _load_entry_point(ep)
        for module in filter(None, (m.strip() for m in spec.split(","))):
            _import(module, f"plugin {module}")


def get_solver(name: str) -> SolverSpec:
    """The registered solver ``name``, or ``RuntimeError`` (failed to load) / ``ValueError`` (unknown)."""
    load_plugins()
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name in _BROKEN:
        raise RuntimeError(f"solver {name!r} failed to load ({_BROKEN[name]}); please report this")
    known = ", ".join(available_solvers()) or "none"
    hint = f"; {PLUGINS_ENV} modules that failed to load: {', '.join(_BROKEN)}" if _BROKEN else ""
    raise ValueError(f"unknown solver {name!r}; choose one of {known}{hint}")


def report_count(report: dict, key: str) -> int:
    """A counter of a progress report as an int (0 when missing or not a number)."""
    try:
        return int(report.get(key) or 0)
    except (TypeError, ValueError):
        return 0


def solver_of_phase(phase: str) -> SolverSpec | None:
    """The registered solver whose progress reports ``phase`` is (it starts with the solver's name), if any."""
    for name in available_solvers():
        if phase.startswith(name):
            return _REGISTRY[name]
    return None


def available_solvers() -> list[str]:
    """Names of the registered solvers: the built-in ones in their order, then plug-ins alphabetically."""
    load_plugins()
    return [n for n in SOLVER_NAMES if n in _REGISTRY] + sorted(set(_REGISTRY) - set(SOLVER_NAMES))


def unavailable_solvers() -> dict[str, str]:
    """Solvers (or plug-in modules, as ``plugin <module>``) that failed to load, with the reason."""
    load_plugins()
    return dict(_BROKEN)
