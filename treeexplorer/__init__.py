"""treeexplorer: find and explore optimal decision trees.

>>> import treeexplorer as tx
>>> front = tx.solve("iris", solver="cart", test_size=0.3)        # doctest: +SKIP
>>> print(tx.rules_text(front.best().tree))                        # doctest: +SKIP
"""

import sys

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

__version__ = "0.1.0"


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
