"""The tree view's tool row: full screen, expand all / compact, and the collapse hint.

Zoom, pan and reset are Bokeh tools on the figure itself (:class:`treeexplorer.render.bokehview.TreeFigure`);
a click on a split collapses or expands its subtree.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn

from treeexplorer.render.bokehview import TreeFigure
from treeexplorer.render.layout import default_collapsed

__all__ = ["TreeTools", "FULLSCREEN_JS", "locked"]


def locked(run: Callable | None = None) -> Callable:
    """``call(fn)``: run a change of raw Bokeh models under the session's document lock.

    A Panel widget's callback runs without that lock; a served session then gets the change on its next
    tick (where ``run``, e.g. the Explorer's ``_bokeh``, applies it); in a notebook it runs at once.
    """
    run = run or (lambda fn: fn())

    def call(fn):
        doc = pn.state.curdoc
        if doc is not None and getattr(doc, "session_context", None) is not None:
            doc.add_next_tick_callback(lambda: run(fn))
        else:
            run(fn)

    return call


# Full screen for the figure's own element (found through Bokeh's views by the figure's id).
FULLSCREEN_JS = """
const views = [];
const walk = v => { views.push(v); if (v.child_views) for (const c of v.child_views) walk(c); };
for (const v of Object.values(Bokeh.index)) walk(v);
const view = views.find(v => v.model && v.model.id === fig_id);
if (view) {
  const el = view.el;
  el.style.background = "white";
  if (!el._txFullscreen) {  // back from full screen: the card's aspect again, so the initial view
    el._txFullscreen = true;
    el.addEventListener("fullscreenchange", () => {
      if (document.fullscreenElement !== el && view.reset) view.reset();
    });
  }
  (el.requestFullscreen ? el.requestFullscreen() : Promise.resolve()).catch(() => {});
}
"""


class TreeTools(pn.viewable.Viewer):
    """Buttons over the tree view.

    Parameters
    ----------
    figure : TreeFigure
    run : callable, optional
        Runs a change of Bokeh models safely (the Explorer's ``_bokeh``); default: at once.
    """

    def __init__(self, figure: TreeFigure, run: Callable | None = None, **params):
        super().__init__(**params)
        self.figure, self._run = figure, locked(run)
        self.full_w = pn.widgets.Button(label="Full screen", width=120, margin=(2, 5))
        self.full_w.js_on_click(args={"fig_id": figure.figure.id}, code=FULLSCREEN_JS)
        self.expand_w = pn.widgets.Button(label="Expand all", width=110, margin=(2, 5))
        self.compact_w = pn.widgets.Button(label="Compact", width=100, margin=(2, 5))
        self.expand_w.on_click(lambda e: self.expand_all())
        self.compact_w.on_click(lambda e: self.compact())
        self.hint = pn.pane.Markdown(
            "Click a split to collapse or expand it · drag: pan · toolbar: wheel zoom, reset",
            styles={"font-size": "0.85em", "opacity": "0.75"},
            margin=(6, 10),
        )
        # wraps rather than scrolls in a narrow notebook output (800 px with the sidebar)
        self._layout = pn.FlexBox(
            self.full_w,
            self.expand_w,
            self.compact_w,
            self.hint,
            flex_wrap="wrap",
            align_items="center",
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout

    def expand_all(self) -> None:
        f = self.figure
        self._run(lambda: f.show(f.tree, collapsed=()) if f.tree is not None else None)

    def compact(self) -> None:
        f = self.figure
        self._run(lambda: f.show(f.tree, collapsed=default_collapsed(f.tree)) if f.tree is not None else None)
