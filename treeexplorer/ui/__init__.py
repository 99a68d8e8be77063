"""The Explorer app: Panel dashboard, inline notebook view and ipywidget in one component."""

from treeexplorer.ui.controller import Controller, Run, RunSettings
from treeexplorer.ui.explorer import Explorer

__all__ = ["Explorer", "Controller", "Run", "RunSettings"]
