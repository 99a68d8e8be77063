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

import sys

from treeexplorer.api import prepare, solve
from treeexplorer.cv import CVFront, cross_validate
from treeexplorer.data import DataError, Dataset, ManyClassesError, bundled_datasets, load_dataset
from treeexplorer.export import rules_text, tree_from_json, tree_json
from treeexplorer.front import Front, FrontTree
from treeexplorer.prepared import Prepared
from treeexplorer.rashomon import rashomon
from treeexplorer.registry import Param, SolverSpec, available_solvers, get_solver, register, unregister
from treeexplorer.request import RunRequest
from treeexplorer.schema import Binarization, Column, Condition, Schema
from treeexplorer.solvers import Control
from treeexplorer.sweep import SweepResult, sweep
from treeexplorer.tree import Tree


def _offline_notebook() -> None:
    # In a Jupyter kernel, Panel's scripts come from the installed packages (pn.extension() would fetch them from
    # a CDN, which an offline machine cannot reach); the displays themselves see to it too (treeexplorer.ui.notebook)
    import os
    import sys

    if "ipykernel" not in sys.modules or "PANEL_INLINE" in os.environ:
        return
    panel = sys.modules.get("panel")
    if panel is None:
        os.environ["PANEL_INLINE"] = "true"  # read by Panel when it is imported and pn.extension() is called
    elif not getattr(panel.extension, "_loaded", False):
        panel.config.inline = True


_offline_notebook()


def _svg(obj) -> str:
    """A Tree's or FrontTree's picture (the SVG export; a FrontTree's titled with its metrics)."""
    from treeexplorer.render import to_svg

    return to_svg(obj.tree, entry=obj) if isinstance(obj, FrontTree) else to_svg(obj)


def _register_displays(formatters=None) -> None:
    """Show trees as their picture in IPython/Jupyter.  The models know no renderer: the display is registered
    with IPython's formatters (the running shell's, or ``formatters`` given), by type name, loading nothing."""
    if formatters is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is None:
            return
        formatters = shell.display_formatter.formatters
    svg = formatters["image/svg+xml"]
    svg.for_type_by_name("treeexplorer.tree", "Tree", _svg)
    svg.for_type_by_name("treeexplorer.front", "FrontTree", _svg)


_register_displays()


_ESTIMATORS = ("TreeExplorerClassifier", "TreeExplorerCV")


def __getattr__(name):
    # The Explorer needs Panel/Bokeh and the estimators scikit-learn's base classes: imported on first use, so
    # `import treeexplorer` stays light.
    if name == "Explorer":
        from treeexplorer.ui import Explorer

        return Explorer
    if name in _ESTIMATORS:
        from treeexplorer import estimator

        return getattr(estimator, name)
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
    "Param",
    "Prepared",
    "RunRequest",
    "SolverSpec",
    "TreeExplorerClassifier",
    "TreeExplorerCV",
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
    "register",
    "rules_text",
    "solve",
    "sweep",
    "tree_from_json",
    "tree_json",
    "unregister",
    "__version__",
]
