"""Registers the CART baseline (``solvers.cart``) as solver ``cart``."""

from __future__ import annotations

from treeexplorer.registry import Param, SolverSpec, register
from treeexplorer.solvers.cart import cart_path

PARAMS = (
    Param("max_depth", "int", 5, "maximum depth of the CART tree (-1 = no limit)", bounds=(-1, None)),
    Param(
        "criterion",
        "str",
        "gini",
        "split quality: gini impurity or entropy (information gain)",
        choices=("gini", "entropy"),
    ),
    Param("min_samples_leaf", "int", 1, "minimum number of training rows in every leaf", bounds=(1, None)),
    Param("max_leaves", "int", None, "grow best-first up to this many leaves (default: no limit)", bounds=(2, None)),
    Param("front", "bool", True, "return the whole cost-complexity pruning path (False: only the full tree)"),
)


def run(
    X,
    y,
    n_classes,
    control,
    max_depth=5,
    criterion="gini",
    min_samples_leaf=1,
    max_leaves=None,
    front=True,
    sample_weight=None,
    costs=None,
):
    """Grow CART on ``(X, y)`` and return it with its pruning path (see :func:`solvers.cart.cart_path`; weighted
    rows and costs as scikit-learn's ``sample_weight``, leaves labelled by least cost)."""
    depth = None if max_depth is None or max_depth < 0 else max_depth
    return cart_path(
        X,
        y,
        max_depth=depth,
        criterion=criterion,
        min_samples_leaf=min_samples_leaf,
        max_leaves=max_leaves,
        n_classes=n_classes,
        control=control,
        front=front,
        sample_weight=sample_weight,
        costs=costs,
    )


def progress_words(p: dict, params: dict) -> tuple[str, float | None]:
    """CART's one phase in words."""
    return "CART: growing the tree", None


SPEC = register(
    SolverSpec(
        name="cart",
        input="numeric",
        run=run,
        progress_words=progress_words,
        params=PARAMS,
        weighted=True,
        missing=True,
        title="CART",
        description="Greedy CART tree (scikit-learn compatible) and its minimal cost-complexity pruning path: "
        "a fast baseline, not optimal.",
    )
)
