"""treeexplorer: find and explore optimal decision trees.

>>> import treeexplorer as tx
>>> front = tx.solve("iris", solver="cart", test_size=0.3)        # doctest: +SKIP
>>> print(tx.rules_text(front.best().tree))                        # doctest: +SKIP
"""

# ruff: noqa: E402 - the kernels load first (below)

__version__ = "0.1.0"

# Before anything imports a kernel: an installed package compiles into the user's cache folder, not into itself.
from treeexplorer._kernel_cache import load_kernels

load_kernels()

from treeexplorer.api import prepare, solve
from treeexplorer.cv import CVFront, cross_validate
from treeexplorer.data import DataError, Dataset, ManyClassesError, bundled_datasets, load_dataset
from treeexplorer.export import rules_text, tree_from_json, tree_json
from treeexplorer.front import Front, FrontTree
from treeexplorer.rashomon import rashomon
from treeexplorer.registry import available_solvers, get_solver
from treeexplorer.schema import Binarization, Column, Condition, Schema
from treeexplorer.solvers import Control
from treeexplorer.sweep import SweepResult, sweep
from treeexplorer.tree import Tree


def __getattr__(name):
    # The Explorer needs Panel/Bokeh: imported on first use, so `import treeexplorer` stays light.
    if name == "Explorer":
        from treeexplorer.ui import Explorer

        return Explorer
    raise AttributeError(f"module 'treeexplorer' has no attribute {name!r}")


__all__ = [
    "Binarization",
    "Column",
    "Condition",
    "Control",
    "CVFront",
    "DataError",
    "Explorer",
    "ManyClassesError",
    "Dataset",
    "Front",
    "FrontTree",
    "Schema",
    "SweepResult",
    "Tree",
    "available_solvers",
    "bundled_datasets",
    "cross_validate",
    "get_solver",
    "load_dataset",
    "prepare",
    "rashomon",
    "rules_text",
    "solve",
    "sweep",
    "tree_from_json",
    "tree_json",
    "__version__",
]
