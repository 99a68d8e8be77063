"""Compare, drawn: the selected tree and the compared one side by side, their differences outlined.

A node is a difference when the other tree has no node reached by the same tests that does the same thing
(the same split, or a leaf with the same class): :func:`node_keys` names each node by its path and its test.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn

from treeexplorer.export import plural
from treeexplorer.render.bokehview import DIFF_COLOR, TreeFigure
from treeexplorer.tree import Tree
from treeexplorer.ui.treeview import locked

__all__ = ["node_keys", "tree_differences", "CompareDiagram"]


def node_keys(tree: Tree) -> dict[int, tuple]:
    """``{node: key}``: the key is the path's branch conditions plus the node's split (or leaf class)."""
    out, stack = {}, [(0, ())]
    while stack:
        k, path = stack.pop()
        if tree.is_leaf(k):
            out[k] = (path, ("leaf", int(tree.prediction[k])))
            continue
        if tree.is_multi(k):
            out[k] = (path, ("multi", int(tree.column[k])))
        else:
            c = tree.condition(k)
            out[k] = (path, ("split", c.column, c.op, round(c.value, 12)))
        for child in tree.child_list(k):
            cond, negate = tree.edge_condition(k, child)
            stack.append((child, (*path, (cond.column, cond.op, round(cond.value, 12), bool(negate)))))
    return out


def tree_differences(a: Tree, b: Tree) -> tuple[set[int], set[int]]:
    """Nodes of ``a`` with no counterpart in ``b``, and nodes of ``b`` with none in ``a``."""
    ka, kb = node_keys(a), node_keys(b)
    sa, sb = set(ka.values()), set(kb.values())
    return {k for k, v in ka.items() if v not in sb}, {k for k, v in kb.items() if v not in sa}


_SW = {"sizing_mode": "stretch_width"}


class CompareDiagram(pn.viewable.Viewer):
    """Two tree diagrams side by side (selected tree left, compared tree right), differences outlined.

    Parameters
    ----------
    run : callable, optional
        Runs a change of Bokeh models safely (the Explorer's ``_bokeh``); default: at once.
    """

    def __init__(self, run: Callable | None = None, **params):
        super().__init__(**params)
        self._run = locked(run)
        # the two figures are built on the first comparison drawn: most sessions never open the Compare tab,
        # and two Bokeh figures cost ~0.15 s of the server's one thread per new session
        self.left: TreeFigure | None = None
        self.right: TreeFigure | None = None
        self.left_title = pn.pane.Markdown("", margin=(0, 10))
        self.right_title = pn.pane.Markdown("", margin=(0, 10))
        self.note = pn.pane.HTML("", margin=(0, 10))
        self.box = pn.Row(visible=False, **_SW)
        self._layout = pn.Column(self.note, self.box, **_SW, margin=0)
        self.differences: tuple[set[int], set[int]] = (set(), set())
        self.active = True  # drawn only while its tab is shown (see follow): two layouts less per click
        self._pair = (None, None)

    def __panel__(self):
        return self._layout

    def _place(self) -> None:
        # Called after the first draw: the browser then gets each figure with its trees and ranges in one
        # message, not empty and then filled by later ones (a loaded server paces those apart).
        if not self.box.objects:
            self.box.objects = [
                pn.Column(self.left_title, pn.pane.Bokeh(self.left.figure, **_SW), **_SW),
                pn.Column(self.right_title, pn.pane.Bokeh(self.right.figure, **_SW), **_SW),
            ]

    def follow(self, tabs: pn.Tabs, index: int) -> None:
        """Draw only while tab ``index`` of ``tabs`` is the active one (cleared when another is shown)."""

        def on_active(event=None):
            self.active = tabs.active == index
            self.update(*self._pair)

        tabs.param.watch(on_active, "active")
        self.active = tabs.active == index

    def update(self, a, b) -> None:
        """Draw front entries ``a`` and ``b`` (``b`` ``None``: hide the diagrams)."""
        self._pair = (a, b)
        if a is None or b is None or not self.active:
            if self.left is not None and (self.left.tree is not None or self.right.tree is not None):
                self._run(lambda: (self.left.show(None), self.right.show(None)))
            self.box.visible = False
            self.note.object = ""
            return
        da, db = tree_differences(a.tree, b.tree)
        self.differences = (da, db)

        if self.left is None:
            self.left, self.right = TreeFigure(width=620, interactive=False), TreeFigure(width=620, interactive=False)
        left, right = self.left, self.right

        def draw():
            left.show(a.tree, collapsed=(), diff=da)
            right.show(b.tree, collapsed=(), diff=db)

        self._run(draw)
        self._place()
        self.left_title.object = f"**Tree {a.id}** ({plural(a.metrics['splits'], 'split')})"
        self.right_title.object = f"**Tree {b.id}** ({plural(b.metrics['splits'], 'split')})"
        self.note.object = (
            f"<span style='font-size:0.85em'><span style='color:{DIFF_COLOR};font-weight:bold'>▢ outlined</span>: "
            f"a split or leaf the other tree does not have at the same place ({len(da)} in tree {a.id}, "
            f"{len(db)} in tree {b.id})</span>"
        )
        self.box.visible = True
