"""Adapters that register each solver of ``solvers/`` with :mod:`treeexplorer.registry`."""
