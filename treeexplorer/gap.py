"""Every run's gap to the optimum: the exact error-vs-splits front on raw numeric data, and per-tree gaps.

``exact_front`` runs the ``contree`` solver (proven optimal trees on the raw numeric columns, the best
tree for every number of splits up to ``2**max_depth - 1``).  ``attach_gaps`` compares another front
of the *same training data* with it and stores, per tree, ``metrics["gap_errors"]``: the tree's
training errors minus the optimum's for its number of splits (0 = optimal for its size).  The front's
JSON then carries ``"gap_errors"`` for each tree.

A gap is left ``None`` where the optimum is not known: a tree deeper than the exact front's depth
(its size class was not searched), more splits than the exact front covers, or a budget the exact run
did not prove (stopped by its time limit).
"""

from __future__ import annotations

from treeexplorer.front import Front
from treeexplorer.tree import max_splits

__all__ = ["exact_front", "attach_gaps", "optimum_by_splits", "GapError", "EXACT_SOLVER"]

# The solver whose whole front is the exact reference (proven per split budget on the raw columns).
EXACT_SOLVER = "contree"


class GapError(ValueError):
    """The two fronts cannot be compared (other data, other split, or no proven optimum)."""


def exact_front(
    data,
    max_depth: int = 3,
    time_limit: float | None = None,
    *,
    target=None,
    test_size: float | None = None,
    test=None,
    seed: int = 0,
    max_nodes: int | None = None,
    control=None,
    progress=None,
) -> Front:
    """The exact error-vs-splits front of ``data`` on its raw numeric columns (solver ``contree``).

    Parameters
    ----------
    data : Prepared, str, path, DataFrame or Dataset
        A :class:`treeexplorer.api.Prepared` (same rows and split as the run to compare, e.g. the app's)
        or anything :func:`treeexplorer.prepare` accepts, with ``target``, ``test_size``, ``test`` and
        ``seed`` as there.
    max_depth : int
        Depth of the trees searched (2 takes milliseconds, 3 seconds on ten thousand rows).
    time_limit : float, optional
        Seconds; a stopped run keeps the budgets it proved (``Front.status`` says it stopped).
    max_nodes : int, optional
        Largest number of splits covered (default ``2**max_depth - 1``).
    control, progress
        As in :func:`treeexplorer.solve` (cancel from another thread, progress callback).

    Returns
    -------
    Front
        Solver ``contree``, one tree per point of the front; ``stats["lower_bounds"]`` per budget.
    """
    from treeexplorer.api import Prepared, prepare, run_prepared
    from treeexplorer.solvers import Control, time_limit_seconds

    prep = data if isinstance(data, Prepared) else prepare(data, target, test_size=test_size, test=test, seed=seed)
    control = control or Control(time_limit=time_limit, progress=progress)
    if time_limit is not None:
        control.time_limit = time_limit_seconds(time_limit)
    if progress is not None and control.progress is None:
        control.progress = progress
    params = {"max_depth": max_depth, "front": True}
    if max_nodes is not None:
        params["max_nodes"] = max_nodes
    return run_prepared(prep, EXACT_SOLVER, params, control=control)


def optimum_by_splits(exact: Front) -> dict:
    """``{k: fewest training errors with at most k splits}`` for every ``k`` the exact front proved."""
    if exact.solver != EXACT_SOLVER:
        raise GapError(f"the reference front must come from solver {EXACT_SOLVER!r}, not {exact.solver!r}")
    depth = exact.params.get("max_depth")
    if depth is None:
        raise GapError("the reference front does not say its max_depth")
    top = max_splits(depth, exact.params.get("max_nodes"))
    done = exact.status == "done"
    lbs = exact.stats.get("lower_bounds")
    out = {}
    for k in range(top + 1):
        trees = [t for t in exact.trees if t.metrics["splits"] <= k]
        if not trees:
            continue
        best = min(t.metrics["train_errors"] for t in trees)
        # a stopped run proved budget k only if its lower bound reached the best tree found
        if done or (lbs is not None and k < len(lbs) and lbs[k] >= best):
            out[k] = int(best)
    return out


def _check_same(front: Front, exact: Front, prep) -> None:
    why = []
    if front.dataset != exact.dataset:
        why.append(f"dataset {front.dataset!r} vs {exact.dataset!r}")
    if front.n_train != exact.n_train or front.n_test != exact.n_test:
        why.append(f"train/test rows {front.n_train}/{front.n_test} vs {exact.n_train}/{exact.n_test}")
    if front.schema.target != exact.schema.target or tuple(front.schema.classes) != tuple(exact.schema.classes):
        why.append("target column or classes differ")
    if why:
        raise GapError(
            "gaps need both fronts on the same data and train/test split: " + "; ".join(why) + ". Compute the "
            "exact front with exact_front() on the same prepared data (same test_size and seed)."
        )
    if prep is not None:
        if len(prep.y_train) != front.n_train:
            raise GapError(f"the prepared data has {len(prep.y_train)} training rows, the front {front.n_train}")
        for name, fr in (("front", front), ("exact front", exact)):
            for t in fr.trees:
                got = t.tree.evaluate(prep.X_train, prep.y_train)["errors"]
                if got != t.metrics["train_errors"]:
                    raise GapError(
                        f"tree {t.id} of the {name} makes {got} errors on these training rows, not the "
                        f"{t.metrics['train_errors']} it was fitted with: another split or other data"
                    )


def attach_gaps(front: Front, exact: Front, prep=None) -> Front:
    """Store ``metrics["gap_errors"]`` on every tree of ``front`` (``None`` where the optimum is unknown).

    Trees with a multiway node (BRANCHES on categorical columns) get ``None``: their splits are not counted
    as the exact front's binary ones.

    Parameters
    ----------
    front : Front
        Any run on the same data and split (CART, DPDT, MurTree, ...).
    exact : Front
        From :func:`exact_front`.
    prep : Prepared, optional
        The prepared data both ran on: every tree's training errors are then recomputed and must match,
        a strong check that both fronts used the same rows.

    Returns
    -------
    Front
        ``front`` itself, its trees updated in place.

    Raises
    ------
    GapError
        Different data or split, a reference that is not a ``contree`` front, or a tree below the optimum
        (which can only mean the fronts were not fitted on the same rows).
    """
    _check_same(front, exact, prep)
    opt = optimum_by_splits(exact)
    depth = int(exact.params["max_depth"])
    for t in front.trees:
        k = t.metrics["splits"]
        gap = None
        # a multiway node is one split with a branch per category (several binary splits of the exact
        # front's one-hot columns): its number of splits is not the exact front's, so no gap is claimed
        if t.metrics["depth"] <= depth and k in opt and not t.tree.has_multiway:
            gap = int(t.metrics["train_errors"]) - opt[k]
            if gap < 0:
                raise GapError(
                    f"tree {t.id} ({k} splits) has {t.metrics['train_errors']} training errors, fewer than the "
                    f"proven optimum {opt[k]}: the fronts were not fitted on the same rows"
                )
        t.metrics["gap_errors"] = gap
    return front
