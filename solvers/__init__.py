"""treeexplorer's search engine: numpy + numba solvers returning flat-array trees.

Every public solver takes ``(X, y, ...)`` plus an optional :class:`solvers.Control` and returns a
:class:`solvers.RawFront`.  See ``solvers._base`` for the tree-array convention.
"""

if __name__ != "treeexplorer.solvers":
    # Imported as a top-level ``solvers`` (a checkout's root on sys.path): numba would then cache kernels whose
    # types name the module ``solvers._kernels...`` next to the installed ones in the same cache index, and every
    # process that cannot import ``solvers`` would fail to read that index.
    raise ImportError("import the solvers as treeexplorer.solvers (the package installs them there), not as solvers")

from ._base import Cancelled, Control, RawFront, RawSolution, RawTree, time_limit_seconds

__all__ = ["Cancelled", "Control", "RawFront", "RawSolution", "RawTree", "predict_raw", "time_limit_seconds"]


def predict_raw(tree: RawTree, X):
    """Predicted class index of every row of ``X`` (float matrix or 0/1 matrix)."""
    import numpy as np

    from ._kernels.predict import apply_tree, apply_tree_missing

    X = np.ascontiguousarray(X, dtype=np.float64)
    if tree.missing_left is not None:
        leaves = apply_tree_missing(tree.feature, tree.threshold, tree.left, tree.right, tree.missing_left, X)
    else:
        leaves = apply_tree(tree.feature, tree.threshold, tree.left, tree.right, X)
    return tree.prediction[leaves]
