"""Rashomon sets: the near-optimal trees behind a point of the front, in order, and what they agree on.

:func:`rashomon` enumerates the distinct canonical trees of MurTree's search space (depth <= ``max_depth``,
at most ``splits`` splits, over the discretizer's 0/1 tests) best first: by training errors, fewer splits
first on ties (by the weighted training cost with ``class_weight``, ``sample_weight`` or ``costs``), or by
BRANCHES' objective ``errors / n + sparsity * splits`` with ``objective="branches"``
(:mod:`treeexplorer.solvers.rashomon`).  The result is a :class:`~treeexplorer.front.Front`
(every view, export and the JSON work) whose trees are in that order (``id`` = rank).  A stopped run keeps the
first trees of the order, each exact.

The analysis functions read such a front: :func:`feature_shares` (how many trees use each column, and at the
root), :func:`feature_sets` (trees grouped by the columns they use), :func:`best_with` / :func:`best_without`
(the best tree using, or avoiding, a column, and its cost in errors against the optimum).  Because the set is
the start of the full order, the first tree of the set meeting a condition is the best tree overall meeting it.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from treeexplorer.api import _check_solve_args, load_and_start, run_prepared
from treeexplorer.front import Front, FrontTree
from treeexplorer.limits import check_memory_limit
from treeexplorer.objective import Objective
from treeexplorer.registry import Param, SolverSpec, get_solver
from treeexplorer.solvers import Control
from treeexplorer.solvers.rashomon import OBJECTIVES
from treeexplorer.solvers.rashomon import rashomon as _raw_rashomon

__all__ = [
    "rashomon",
    "rashomon_prepared",
    "filter_set",
    "feature_shares",
    "feature_sets",
    "best_with",
    "best_without",
    "tree_columns",
    "set_table",
]

SOLVERS = ("murtree",)  # the DP the set is enumerated over


def _run_raw(
    X,
    y,
    n_classes,
    control,
    *,
    max_depth=3,
    max_nodes=None,
    k=100,
    max_gap=None,
    min_leaf_support=1,
    max_bytes=None,
    objective="errors",
    sparsity=None,
    max_objective_gap=None,
    max_cost_gap=None,
    sample_weight=None,
    costs=None,
):
    if max_cost_gap is not None:  # a weighted run's bound: a cost above the best (the solver's max_gap)
        max_gap = max_cost_gap
    return _raw_rashomon(
        X,
        y,
        n_classes,
        max_depth=max_depth,
        max_nodes=max_nodes,
        k=k,
        max_gap=max_gap,
        min_leaf_support=min_leaf_support,
        max_bytes=max_bytes,
        objective=objective,
        sparsity=sparsity,
        max_objective_gap=max_objective_gap,
        control=control,
        sample_weight=sample_weight,
        costs=costs,
    )


def _spec() -> SolverSpec:
    base = get_solver("murtree")
    depth = base.param("max_depth")
    return replace(
        base,
        name="rashomon",
        run=_run_raw,
        title="Rashomon set (MurTree)",
        description="The k best distinct trees of MurTree's search space, in order of training errors (or cost).",
        ranked=True,
        params=(
            depth,
            base.param("max_nodes"),
            Param("k", "int", 100, "Most trees in the set.", bounds=(1, None)),
            Param("max_gap", "int", None, "Only trees with at most this many errors above the best.", bounds=(0, None)),
            base.param("min_leaf_support"),
            Param("max_bytes", "int", None, "Most bytes of the enumeration's pools.", bounds=(1, None)),
            Param(
                "objective",
                "str",
                "errors",
                "What orders the set: training errors, or BRANCHES' error rate + sparsity x splits.",
                choices=OBJECTIVES,
            ),
            replace(get_solver("branches").param("sparsity"), default=None),  # λ of objective="branches"
            Param(
                "max_objective_gap",
                "float",
                None,
                "With objective=branches: only trees within this much of the best objective.",
                bounds=(0.0, None),
            ),
            Param(
                "max_cost_gap",
                "float",
                None,
                "With weights or costs: only trees with at most this much training cost above the best.",
                bounds=(0.0, None),
            ),
        ),
    )


def rashomon(
    data,
    target=None,
    *,
    solver: str = "murtree",
    max_depth: int = 3,
    splits: int | None = None,
    k: int = 100,
    epsilon: float | None = None,
    objective: str = "errors",
    sparsity: float | None = None,
    min_leaf_support: int = 1,
    discretizer: str | None = None,
    n_bins: int | None = None,
    test_size: float | None = None,
    test=None,
    seed: int = 0,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    progress=None,
    control: Control | None = None,
    drop_missing: bool = False,
    na_values=None,
    allow_many_classes: bool = False,
    categorical=(),
    discretizer_params: dict | None = None,
    features=None,
    exclude=None,
    class_weight=None,
    sample_weight=None,
    costs=None,
) -> Front:
    """The ``k`` best distinct trees (the Rashomon set), best first, as a :class:`Front`.

    Parameters
    ----------
    data, target
        As :func:`treeexplorer.solve`.
    solver : {"murtree"}
        The search space: MurTree's trees over the discretizer's 0/1 tests (``discretizer="none"`` for 0/1
        columns; default ``mid`` as for ``solve(solver="murtree")``).
    max_depth : int
        Deepest tree (0..10).
    splits : int, optional
        Most splits of a tree (default ``2**max_depth - 1``).
    k : int
        Most trees in the set.
    epsilon : float, optional
        Only trees with at most ``optimum + epsilon * n_train`` training errors (capped by ``k``); with
        ``objective="branches"``, only trees whose objective is at most the optimum's plus ``epsilon``; with
        weights or costs, a training cost at most ``optimum + epsilon * W`` (``W`` the training rows' total
        weight).
    objective : {"errors", "branches"}
        What orders the set: training errors (ties: fewer splits), or BRANCHES' objective
        ``errors / n_train + sparsity * splits`` (ties: fewer splits, then the errors order).
    sparsity : float, optional
        λ of ``objective="branches"``: the accuracy a split must gain to be worth it, in [0, 1] (required there).
    min_leaf_support : int
        Fewest training rows in a leaf.
    discretizer, n_bins, test_size, test, seed, time_limit, memory_limit, progress, control, drop_missing,
    allow_many_classes, categorical, discretizer_params, features, exclude, class_weight, sample_weight, costs
        As :func:`treeexplorer.solve`; a time limit or cancel returns the trees found so far (the first of the
        order, each exact).  Weights and costs rank the set by the weighted training cost (``objective="errors"``
        only; ``objective="branches"`` refuses them in one line), exactly (MurTree's int64 quanta).

    Returns
    -------
    Front
        Trees in order (``id`` = rank): ``info`` holds ``rank``, ``errors``, ``splits`` and ``gap`` (errors above
        the first tree; with ``objective="branches"`` also ``objective`` and ``gap`` is in the objective; with
        weights or costs also ``cost``, the training cost the set is ranked by, equal to the tree's
        ``metrics["train_cost"]``, and ``gap`` is in cost); ``optimal`` marks the trees with the optimum's value.
        ``stats["rashomon"]`` holds ``k``, ``epsilon``, ``objective``, ``sparsity``, ``optimum`` (errors, objective
        or cost of the first tree), ``complete`` (True when no further tree is within the bounds).
    """
    if solver not in SOLVERS:
        raise ValueError(f"rashomon sets are enumerated over {', '.join(SOLVERS)}; got solver={solver!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    if epsilon is not None and (isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not epsilon >= 0):
        raise ValueError(f"epsilon must be a number >= 0 (a fraction of the training rows), got {epsilon!r}")
    data, target = _check_solve_args(
        data,
        target,
        solver=solver,
        discretizer=discretizer,
        n_bins=n_bins,
        test_size=test_size,
        seed=seed,
        time_limit=time_limit,
        progress=progress,
        control=control,
        drop_missing=drop_missing,
        mid_budget=None,
    )
    spec = _spec()
    params = {"max_depth": max_depth, "max_nodes": splits, "k": k, "min_leaf_support": min_leaf_support}
    params.update(_objective_params(objective, sparsity))
    spec.resolve(params)  # range checks before loading anything
    Objective.build(class_weight, costs)  # their form checked before loading too
    memory_limit = check_memory_limit(memory_limit)
    prep, control = load_and_start(
        spec,
        data,
        target,
        time_limit=time_limit,
        progress=progress,
        control=control,
        test_size=test_size,
        test=test,
        seed=seed,
        drop_missing=drop_missing,
        na_values=na_values,
        categorical=categorical,
        allow_many_classes=allow_many_classes,
        features=features,
        exclude=exclude,
        weights=sample_weight,
    )
    return rashomon_prepared(
        prep,
        solver=solver,
        max_depth=max_depth,
        splits=splits,
        k=k,
        epsilon=epsilon,
        objective=objective,
        sparsity=sparsity,
        min_leaf_support=min_leaf_support,
        discretizer=discretizer,
        n_bins=n_bins,
        control=control,
        discretizer_params=discretizer_params,
        memory_limit=memory_limit,
        class_weight=class_weight,
        costs=costs,
    )


def _objective_params(objective, sparsity) -> dict:
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if objective == "errors":
        if sparsity is not None:
            raise ValueError("sparsity (the cost of a split) goes with objective='branches'")
        return {}
    if sparsity is None:
        raise ValueError("objective='branches' needs sparsity (the accuracy a split must gain, e.g. 0.01)")
    return {"objective": objective, "sparsity": sparsity}


def rashomon_prepared(
    prep,
    *,
    solver: str = "murtree",
    max_depth: int = 3,
    splits: int | None = None,
    k: int = 100,
    epsilon: float | None = None,
    objective: str = "errors",
    sparsity: float | None = None,
    min_leaf_support: int = 1,
    discretizer: str | None = None,
    n_bins: int | None = None,
    control: Control | None = None,
    discretizer_params: dict | None = None,
    memory_limit: float | None = None,
    class_weight=None,
    costs=None,
) -> Front:
    """:func:`rashomon` on data already loaded and split (a :class:`treeexplorer.api.Prepared`, as the app holds;
    its rows' own weights are ``prep.dataset.weights``)."""
    if solver not in SOLVERS:
        raise ValueError(f"rashomon sets are enumerated over {', '.join(SOLVERS)}; got solver={solver!r}")
    spec = _spec()
    params = {"max_depth": max_depth, "max_nodes": splits, "k": k, "min_leaf_support": min_leaf_support}
    params["max_bytes"] = check_memory_limit(memory_limit) * 2**20  # the pools stop growing there (trees so far)
    params.update(_objective_params(objective, sparsity))
    weights = Objective.build(class_weight, costs).resolve(
        prep.schema, prep.y_train, prep.dataset.weights, prep.y_test, prep.w_test, prep.dataset.weight_source
    )
    if objective == "branches" and not weights.plain:
        raise ValueError(
            f"objective='branches' ranks the unweighted error rate + sparsity x splits, not {weights.text}: use "
            "objective='errors' for a set ranked by that cost, or leave the weights and costs out"
        )
    if epsilon is not None and objective == "branches":
        params["max_objective_gap"] = epsilon  # objective <= optimum + epsilon, compared exactly
    elif epsilon is not None:
        if weights.plain:
            params["max_gap"] = int(Fraction(epsilon) * len(prep.y_train))  # errors <= optimum + epsilon * n, exactly
        else:  # cost <= optimum + epsilon * (the training rows' total weight)
            params["max_cost_gap"] = float(epsilon) * float(weights.weighting.row_weights(len(prep.y_train)).sum())
    control = control or Control()
    front = run_prepared(
        prep,
        spec,
        spec.resolve(params),
        discretizer=discretizer or get_solver(solver).default_discretizer,
        n_bins=n_bins,
        control=control,
        discretizer_params=discretizer_params,
        memory_limit=memory_limit,
        class_weight=class_weight,
        costs=costs,
    )
    return _in_order(front, solver, k, epsilon, sparsity if objective == "branches" else None)


def _in_order(front: Front, solver: str, k: int, epsilon, sparsity=None) -> Front:
    trees = sorted(front.trees, key=lambda t: t.info["rank"])
    lam = front.stats.pop("lambda", None)  # λ as ranked (a fraction) with objective="branches"
    if lam is None:
        what = "cost" if trees and "cost" in trees[0].info else "errors"  # weighted: ranked by training cost
        best = trees[0].info[what] if trees else None
        for i, t in enumerate(trees):
            t.id = i
            t.info["gap"] = t.info[what] - best
    else:
        lam = Fraction(*lam)
        n = front.n_train
        exact = [Fraction(t.info["errors"], n) + lam * t.info["splits"] for t in trees]
        best = trees[0].info["objective"] if trees else None
        for i, (t, v) in enumerate(zip(trees, exact)):
            t.id = i
            t.info["gap"] = float(v - exact[0])  # the nearest float of the exact difference
    front.trees = trees
    front.solver = solver  # reruns and views treat it as the DP's front; the set's own facts are in stats
    params = front.params
    front.params = {key: params[key] for key in ("max_depth", "max_nodes", "min_leaf_support") if key in params}
    front.stats["rashomon"] = {
        "k": k,
        "epsilon": epsilon,
        "objective": "errors" if lam is None else "branches",
        "sparsity": sparsity,
        "max_gap": params.get("max_gap", params.get("max_cost_gap")),
        "optimum": best,
        "complete": bool(front.stats.pop("complete", False)),
        "trees": len(trees),
        "stopped_by": front.stats.pop("stopped_by", None),
    }
    ranked = "misclassifications" if lam is None else f"error rate + {sparsity:g} x splits"
    if lam is None and front.objective == "cost":  # weighted: ranked by the run's cost ("the cost with ...")
        ranked = front.weights.get("objective", "cost")
    front.objective = f"{ranked}; Rashomon set, the best trees in order"
    return front


# ----------------------------------------------------------------------------------------------- analysis
def tree_columns(tree) -> list[int]:
    """The data columns a tree tests (sorted, each once)."""
    return sorted({int(c) for c in tree.column if c >= 0})


def _name(front: Front, j: int) -> str:
    return front.schema.columns[j].name


def _optimum(front: Front) -> int:
    return min(t.info["errors"] for t in front.trees)


def feature_shares(front: Front) -> list[dict]:
    """For each column used by some tree of the set: the share of trees testing it, and at their root.

    Returns
    -------
    list of dict
        ``feature``, ``column``, ``trees``, ``share``, ``root_trees``, ``root_share``, ``best_errors`` (the
        best tree using it); most used first.
    """
    n = len(front.trees)
    rows: dict[int, dict] = {}
    for t in front.trees:
        root = int(t.tree.column[0])
        for j in tree_columns(t.tree):
            r = rows.setdefault(j, {"feature": _name(front, j), "column": j, "trees": 0, "root_trees": 0})
            r["trees"] += 1
            r.setdefault("best_errors", t.info["errors"])
            if j == root:
                r["root_trees"] += 1
    out = list(rows.values())
    for r in out:
        r["share"] = r["trees"] / n
        r["root_share"] = r["root_trees"] / n
    out.sort(key=lambda r: (-r["trees"], -r["root_trees"], r["column"]))
    return out


def feature_sets(front: Front) -> list[dict]:
    """The trees grouped by the set of columns they test, groups in order of their best tree.

    Returns
    -------
    list of dict
        ``features`` (names), ``columns``, ``trees`` (count), ``ids``, ``best_id``, ``best_errors``.
    """
    groups: dict[tuple, dict] = {}
    for t in front.trees:
        cols = tuple(tree_columns(t.tree))
        g = groups.get(cols)
        if g is None:
            g = groups[cols] = {
                "features": [_name(front, j) for j in cols],
                "columns": list(cols),
                "trees": 0,
                "ids": [],
                "best_id": t.id,
                "best_errors": t.info["errors"],
            }
        g["trees"] += 1
        g["ids"].append(t.id)
    return list(groups.values())


def _column(front: Front, feature) -> int:
    if isinstance(feature, str):
        names = [c.name for c in front.schema.columns]
        if feature not in names:
            raise ValueError(f"no column {feature!r} in this data; columns: {', '.join(names)}")
        return names.index(feature)
    j = int(feature)
    if not 0 <= j < len(front.schema.columns):
        raise ValueError(f"column index {feature!r} out of range 0..{len(front.schema.columns) - 1}")
    return j


def _first(front: Front, keep) -> dict:
    opt = _optimum(front)
    for t in front.trees:  # in order: the first match is the best tree overall meeting the condition
        if keep(t):
            # a set ranked by objective="branches" or a weighted cost: the cost is in it (the tree's gap)
            cost = t.info["gap"] if "objective" in t.info or "cost" in t.info else t.info["errors"] - opt
            return {"tree": t, "errors": t.info["errors"], "cost": cost}
    last = _ranked_value(front.trees[-1].info) if front.trees else None
    return {"tree": None, "errors": None, "cost": None, "at_least": last}


def _ranked_value(info: dict):
    """What the set is ranked by, for one tree: its objective (``objective="branches"``), weighted cost, or errors."""
    return info.get("objective", info.get("cost", info["errors"]))


def best_without(front: Front, feature) -> dict:
    """The best tree of the search space that does not test ``feature`` (a column name or index).

    Returns
    -------
    dict
        ``tree`` (a :class:`FrontTree` of the set, or None when every tree of the set uses it: then the best
        such tree has at least ``at_least`` errors, a larger ``k`` finds it), ``errors``, ``cost`` (errors above
        the optimum; for a set ranked by ``objective="branches"`` or by a weighted cost, ``cost`` and
        ``at_least`` are in that objective).
    """
    j = _column(front, feature)
    return _first(front, lambda t: j not in tree_columns(t.tree))


def best_with(front: Front, feature) -> dict:
    """The best tree of the search space that tests ``feature``; as :func:`best_without`."""
    j = _column(front, feature)
    return _first(front, lambda t: j in tree_columns(t.tree))


def filter_set(front: Front, exclude=(), require=()) -> list[FrontTree]:
    """The trees of the set using none of ``exclude`` and all of ``require`` (names or indices), in order."""
    ex = {_column(front, f) for f in exclude}
    req = {_column(front, f) for f in require}
    out = []
    for t in front.trees:
        cols = set(tree_columns(t.tree))
        if not cols & ex and req <= cols:
            out.append(t)
    return out


def set_table(front: Front) -> list[dict]:
    """One row per tree of the set: ``rank``, ``errors``, (``objective`` when a set is ranked by
    ``objective="branches"``, ``cost`` when by a weighted cost,) ``gap``, ``splits``, ``depth``, ``train_accuracy``,
    ``test_accuracy`` and ``features`` (the column names it tests, ``;``-separated)."""
    return [
        {
            "rank": t.id,
            "errors": t.info["errors"],
            **({"objective": t.info["objective"]} if "objective" in t.info else {}),
            **({"cost": t.info["cost"]} if "cost" in t.info else {}),
            "gap": t.info["gap"],
            "splits": t.metrics["splits"],
            "depth": t.metrics["depth"],
            "train_accuracy": t.metrics["train_accuracy"],
            "test_accuracy": t.metrics["test_accuracy"],
            "features": ";".join(_name(front, j) for j in tree_columns(t.tree)),
        }
        for t in front.trees
    ]
