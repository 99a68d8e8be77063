"""Registers DPDT (``solvers.dpdt``) as solver ``dpdt``."""

from __future__ import annotations

from treeexplorer.registry import Param, SolverSpec, register, report_count
from treeexplorer.solvers.dpdt import DPDT_CRITERIA, GENERATORS, dpdt

PARAMS = (
    Param("max_depth", "int", 3, "maximum depth of the trees (the MDP's horizon)", bounds=(0, 30)),
    Param(
        "generator",
        "str",
        "cart",
        "which tests each state may use: cart = every split of a CART of depth cart_depth fitted on the "
        "state's rows (the paper's DPDT-K); cart_leaves = CART with cart_leaves leaves (reference code); "
        "topb = the top_b splits with the largest impurity decrease; exhaustive = every threshold (true "
        "optimum, small data only); hybrid = DPDT-K above hybrid_depth, one greedy split below (row or class "
        "weights: cart, hybrid or exhaustive, the CART weighted as scikit-learn's)",
        choices=tuple(GENERATORS),
    ),
    Param(
        "cart_depth",
        "int",
        3,
        "depth of the CART that proposes the tests at each state (cart, hybrid): larger = more candidate trees, slower",
        bounds=(1, 12),
    ),
    Param(
        "cart_leaves", "int", 32, "leaves of the CART that proposes the tests (generator cart_leaves)", bounds=(2, 4096)
    ),
    Param("top_b", "int", 8, "number of tests proposed at each state (generator topb)", bounds=(1, None)),
    Param(
        "hybrid_depth",
        "int",
        2,
        "generator hybrid: depth from which only the greedy CART split is proposed",
        bounds=(0, 30),
    ),
    Param(
        "criterion",
        "str",
        "gini",
        "impurity used by the CART and topb test generators; both = the union of the gini and the entropy "
        "generator's tests at every state (never worse than either, slower)",
        choices=tuple(DPDT_CRITERIA),
    ),
    Param(
        "n_alphas",
        "int",
        None,
        "keep only the trees optimal for one of this many α evenly spaced in "
        "[0, 1], as the reference implementation (default: every tree of the convex hull)",
        bounds=(1, None),
    ),
    Param(
        "max_splits",
        "int",
        None,
        "the splits front: best tree of the MDP for every number of splits up to this (default: every "
        "number the depth allows)",
        bounds=(0, None),
    ),
    Param(
        "max_states", "int", 10**6, "memory guard: stop with a message when the MDP needs more states", bounds=(1, None)
    ),
    Param(
        "n_jobs",
        "int",
        None,
        "threads solving the states of one depth (default: the machine's cores, at "
        "most 4; the result does not depend on it)",
        bounds=(1, None),
    ),
    Param(
        "sparsity",
        "float",
        None,
        "return only the tree minimising error rate + sparsity × average number of tests per sample (implies no front)",
        bounds=(0, None),
    ),
    Param(
        "front",
        "bool",
        True,
        "return every tree of the (average tests, error) convex hull and the best tree for every number "
        "of splits; off: only the most accurate tree (or the one for sparsity)",
    ),
)


def run(
    X,
    y,
    n_classes,
    control,
    max_depth=3,
    generator="cart",
    cart_depth=3,
    cart_leaves=32,
    top_b=8,
    hybrid_depth=2,
    criterion="gini",
    n_alphas=None,
    max_splits=None,
    max_states=10**6,
    n_jobs=None,
    sparsity=None,
    front=True,
    sample_weight=None,
    costs=None,
):
    """Solve with DPDT and return its convex hull and splits front (see :func:`solvers.dpdt.dpdt`; ``sample_weight``
    and ``costs``: the weighted objective, None when plain)."""
    alpha = sparsity if sparsity is not None else (None if front else 0.0)
    return dpdt(
        X,
        y,
        max_depth=max_depth,
        generator=generator,
        cart_depth=cart_depth,
        cart_leaves=cart_leaves,
        top_b=top_b,
        hybrid_depth=hybrid_depth,
        criterion=criterion,
        max_states=max_states,
        n_alphas=n_alphas,
        alpha=alpha,
        max_splits=max_splits,
        n_classes=n_classes,
        control=control,
        n_jobs=n_jobs,
        sample_weight=sample_weight,
        costs=costs,
    )


def progress_words(p: dict, params: dict) -> tuple[str, float | None]:
    """DPDT's reports in words: the depth of the tree search being built, of ``max_depth``."""
    depth, total = report_count(p, "depth"), params.get("max_depth")
    at, of = report_count(p, "expanded_at_depth"), report_count(p, "states_at_depth")
    fraction = None
    if isinstance(total, int) and total > 0 and depth > 0:
        text = f"DPDT: building the tree search, depth {min(depth, total)} of {total}"
        fraction = min(1.0, (depth - 1 + (at / of if of else 0.0)) / total)
    else:
        text = "DPDT: building the tree search"
    if report_count(p, "states"):
        text += f" ({report_count(p, 'states'):,} candidate subtrees so far)"
    return text, fraction


SPEC = register(
    SolverSpec(
        name="dpdt",
        input="numeric",
        run=run,
        progress_words=progress_words,
        params=PARAMS,
        title="DPDT",
        description="Dynamic-programming decision trees (Kohler et al.): an MDP over the tests CART proposes at "
        "every node, solved for every trade-off at once; returns the (average tests, error) convex "
        "hull, each tree with its exact α interval, and the best tree of the MDP for every number of splits. "
        "Exhaustive tests give the true optimum.",
        weighted=True,
        missing=True,
    )
)
