"""Discretizers: turn an encoded table into ordered binary tests that remember their meaning.

Methods (:data:`DISCRETIZER_NAMES`):

``none``
    No thresholds: every numeric column must already be 0/1 and becomes one test; categorical columns give
    their one-hot tests as below (BRANCHES can then split them multiway).
``exact``
    Every midpoint between consecutive distinct values: an optimal solver over these tests is optimal over
    all axis-aligned trees on the training rows.
``mid``
    The Minimum Impurity Discretizer (Dal Maso, Kiossou, Nijssen 2024): the top ``n_bins`` tests of one global
    greedy impurity ranking (see :mod:`treeexplorer.discretize.mid`); nested in ``n_bins``.
``mdlp``
    Fayyad & Irani (1993) recursive entropy splits with the MDL stopping rule, per column.
``quantile`` / ``uniform``
    ``n_bins`` thresholds per column at equal-frequency / equal-width positions, deduplicated.

For every method: a column with a single training value is dropped (with a notice); a numeric 0/1 column is
ONE test ``x = 1``; a categorical column with exactly two categories is ONE test ``x = <second category>``
(code 1, i.e. the later value in the schema's category order); another categorical column gives one test
``x = c`` per category present in the training rows.  Numeric thresholds read ``x <= t``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treeexplorer.discretize._common import check_inputs, gap_columns, missing_sides, summarise_columns
from treeexplorer.discretize.mdlp import mdlp_column, split_gain
from treeexplorer.discretize.mid import CRITERIA, MIDRanking
from treeexplorer.discretize.simple import (
    binned_conditions,
    exact_thresholds,
    fixed_conditions,
    none_conditions,
)
from treeexplorer.schema import OP_LE, Binarization, Condition, Schema

__all__ = [
    "DISCRETIZERS",
    "DISCRETIZER_NAMES",
    "DEFAULT_N_BINS",
    "DiscretizerSpec",
    "get_discretizer",
    "takes_n_bins",
    "fit_discretizer",
    "discretize_table",
    "MIDRanking",
]

DEFAULT_N_BINS = 4  # quantile/uniform thresholds per column; MID takes this many tests per usable column
# ... but at most this many in all: on 200 columns, 800 tests made a first MurTree run take minutes (issue 17).
MID_DEFAULT_MAX_TESTS = 128


@dataclass(frozen=True)
class DiscretizerSpec:
    """What one discretizer is and which options it takes (the CLI, the app and the API read this).

    Parameters
    ----------
    name : str
        Key (``--discretizer`` value).
    title : str
        One line shown as help.
    takes_n_bins : bool
        Whether ``n_bins`` applies; when not, ``no_n_bins`` says why (used in the error message).
    takes_criterion : bool
        Whether ``criterion`` (entropy/gini) applies.
    no_n_bins : str
        Why ``n_bins`` does not apply (``"which ..."``).
    """

    name: str
    title: str
    takes_n_bins: bool
    takes_criterion: bool = False
    no_n_bins: str = ""


DISCRETIZERS: dict[str, DiscretizerSpec] = {
    d.name: d
    for d in (
        DiscretizerSpec(
            "none", "no thresholds: numeric columns must be 0/1", False, no_n_bins="uses the 0/1 columns as they are"
        ),
        DiscretizerSpec("exact", "every midpoint between distinct values", False, no_n_bins="uses every threshold"),
        DiscretizerSpec(
            "mid", "Minimum Impurity Discretizer: the top tests of one ranking", True, takes_criterion=True
        ),
        DiscretizerSpec(
            "mdlp",
            "Fayyad & Irani entropy splits with the MDL stopping rule",
            False,
            no_n_bins="chooses its own number of cuts (MDL stopping rule)",
        ),
        DiscretizerSpec("quantile", "equal-frequency thresholds per column", True),
        DiscretizerSpec("uniform", "equal-width thresholds per column", True),
    )
}
DISCRETIZER_NAMES = tuple(DISCRETIZERS)


def get_discretizer(name: str) -> DiscretizerSpec:
    """The :class:`DiscretizerSpec` of ``name`` or ``ValueError`` listing the choices."""
    try:
        return DISCRETIZERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown discretizer {name!r}; choose one of {', '.join(DISCRETIZER_NAMES)}") from None


def takes_n_bins(name: str | None) -> bool:
    """Whether discretizer ``name`` takes ``n_bins`` (``False`` for unknown names, ``None`` and ``"raw"``)."""
    spec = DISCRETIZERS.get(name) if isinstance(name, str) else None
    return spec is not None and spec.takes_n_bins


def fit_discretizer(
    method: str,
    X_enc,
    y,
    schema: Schema,
    n_bins: int | None = None,
    criterion: str = "entropy",
    notices: list[str] | None = None,
    stop=None,
) -> Binarization:
    """Fit one discretizer on training rows.

    Parameters
    ----------
    method : str
        One of :data:`DISCRETIZER_NAMES`.
    X_enc : array-like of float, shape (n, p)
        Encoded table (categorical columns as codes ``0..k-1``), no missing values.
    y : array-like of int, shape (n,)
        Class codes ``0..C-1``.
    schema : Schema
        Column kinds, categories and classes of ``X_enc``.
    n_bins : int, optional
        ``quantile``/``uniform``: thresholds per numeric column (default :data:`DEFAULT_N_BINS`).
        ``mid``: number of tests in all, the top of the ranking (default ``DEFAULT_N_BINS`` times the number
        of usable columns, capped at what exists).  Rejected for ``none``, ``exact`` and ``mdlp``.
    criterion : {"entropy", "gini"}
        Impurity ranking MID's thresholds; other methods accept only ``"entropy"``.
    notices : list of str, optional
        If given, the notices are also appended to it.
    stop : callable, optional
        ``stop() -> bool`` polled between columns while summarising them and in the MID ranking, ``exact`` and
        MDLP (a run's time limit or cancel): when it answers True they keep the columns done so far, with a notice.

    Returns
    -------
    Binarization
        Ordered tests (MID: ranking order; others: column by column, thresholds ascending), ``gains`` for
        ``mid`` and ``mdlp``, and notices (dropped constant columns, short columns, defaults used).

    Raises
    ------
    ValueError
        Unknown method, bad ``n_bins`` (too many: the message says how many exist), NaN values (naming the
        column and row count), a non-binary column for ``none``, or no usable column at all.
    """
    spec = get_discretizer(method)
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")
    if criterion != "entropy" and not spec.takes_criterion:
        raise ValueError(
            f"criterion={criterion!r} applies to the 'mid' discretizer only ({method!r} "
            f"{'uses entropy' if method == 'mdlp' else 'is not impurity-based'})"
        )
    if n_bins is not None:
        if not spec.takes_n_bins:
            others = ", ".join(n for n, d in DISCRETIZERS.items() if d.takes_n_bins)
            raise ValueError(
                f"n_bins does not apply to the {method!r} discretizer, which {spec.no_n_bins}; "
                f"leave it out, or use one of {others}"
            )
        if (
            isinstance(n_bins, bool)
            or not isinstance(n_bins, int)
            and not hasattr(n_bins, "__index__")
            or int(n_bins) < 1
        ):
            raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
        n_bins = int(n_bins)
    if method == "mid":
        binz = _fit_mid(X_enc, y, schema, n_bins, criterion, stop)
    else:
        X, yy = check_inputs(X_enc, y, schema)
        own: list[str] = []
        summaries = summarise_columns(X, yy, schema, own, stop)
        gains = None
        if method == "none":
            conds = none_conditions(summaries, schema)
        elif method == "exact":
            conds = []
            for i, s in enumerate(summaries):
                if conds and stop is not None and stop():  # a test per distinct value: long on many rows
                    own.extend(_stopped_before("exact", "thresholds", summaries[i:], schema))
                    break
                conds += (
                    fixed_conditions(s)
                    if s.role != "numeric"
                    else [Condition(s.index, OP_LE, float(t)) for t in exact_thresholds(s)]
                )
        elif method == "mdlp":
            conds, gains = _fit_mdlp(summaries, schema, own, stop)
        else:
            conds = binned_conditions(
                summaries,
                schema,
                method,
                DEFAULT_N_BINS if n_bins is None else n_bins,
                own,
                explicit=n_bins is not None,
            )
        binz = Binarization(conds, method, None if gains is None else _as_array(gains), own)
    binz = missing_sides(binz, gap_columns(np.asarray(X_enc, dtype=np.float64)), schema)
    if len(binz) == 0:
        raise ValueError(f"the {method!r} discretizer found no test: " + _nothing_reason(binz.notices))
    if notices is not None:
        notices.extend(binz.notices)
    return binz


def _fit_mid(X_enc, y, schema, n_bins, criterion, stop=None) -> Binarization:
    # only the top n_bins (or the default cap) are ever selected: rank no further than that
    most = MID_DEFAULT_MAX_TESTS if n_bins is None else max(int(n_bins), 1)
    ranking = MIDRanking.fit(X_enc, y, schema, criterion, stop=stop, max_tests=most)
    if ranking.n_available == 0:
        return Binarization([], "mid", _as_array([]), list(ranking.notices))
    if n_bins is None:
        usable = len(np.unique(ranking.columns))
        n = min(DEFAULT_N_BINS * usable, MID_DEFAULT_MAX_TESTS, ranking.n_available)
        binz = ranking.select(n)
        why = (
            f"{DEFAULT_N_BINS} per usable column"
            if n < MID_DEFAULT_MAX_TESTS or DEFAULT_N_BINS * usable == n
            else f"capped at {MID_DEFAULT_MAX_TESTS} to keep a first run interactive; give n_bins for more"
        )
        binz.notices.append(
            f"mid: n_bins not given; using the top {n} of {ranking.n_candidates} candidate tests ({why})"
        )
        return binz
    return ranking.select(n_bins)


def _fit_mdlp(summaries, schema, notices, stop=None) -> tuple[list[Condition], list[float]]:
    conds, gains, silent = [], [], []
    for i, s in enumerate(summaries):
        if conds and stop is not None and stop():  # MDLP's recursive cuts: seconds on many rows
            notices.extend(_stopped_before("mdlp", "cuts", summaries[i:], schema))
            break
        if s.role == "constant":
            continue
        if s.role == "numeric":
            c, g = mdlp_column(s)
            if not c:
                silent.append(schema.columns[s.index].name)
            conds += c
            gains += g
        else:
            for cond in fixed_conditions(s):
                conds.append(cond)
                gains.append(split_gain(s, cond.op, cond.value))
    if silent:
        notices.append(
            f"mdlp: no cut passes the MDL test in {len(silent)} numeric column(s), which give no "
            f"test: {', '.join(map(repr, silent))}"
        )
    return conds, gains


def _as_array(gains):
    return np.asarray(gains, dtype=np.float64)


def _nothing_reason(notices: list[str]) -> str:
    reason = "; ".join(notices) if notices else "no column has two distinct values"
    if any("MDL test" in n for n in notices):
        reason += ". Try the mid, quantile or exact discretizer"
    return reason


def discretize_table(method: str, X_enc, y, schema: Schema, **kw) -> list[dict]:
    """Rows for listing a discretization: index, feature, readable test, gain (``None`` where undefined).

    Keyword arguments go to :func:`fit_discretizer`.
    """
    return fit_discretizer(method, X_enc, y, schema, **kw).describe(schema)


def _stopped_before(method: str, what: str, rest, schema) -> list[str]:
    """The notice of a discretizer stopped between columns: which columns' ``what`` it never computed."""
    left = [schema.columns[t.index].name for t in rest if t.role != "constant"]
    if not left:
        return []
    names = ", ".join(map(repr, left[:5])) + (" ..." if len(left) > 5 else "")
    return [f"{method}: stopped (time limit or cancel) before the {what} of {len(left)} column(s): {names}"]
