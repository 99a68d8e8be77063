"""Show the Explorer and front plots in a notebook offline, whatever the user called first.

Panel needs BokehJS and its own scripts in the page.  ``pn.extension()`` sends them from a CDN unless told
``inline=True``, and displaying without any extension call shows nothing.  Here, the first display in a kernel
sends the scripts from the installed packages itself (once), whether the user called ``pn.extension()``,
``pn.extension(inline=True)`` or nothing, and for ``pn.ipywidget(...)`` too.  Stylesheets are linked from the
Jupyter server's own copy of Panel's files (``panel_dist/``, :mod:`treeexplorer.ui.offline`), or, without a
Jupyter server, inlined once per document: Panel's inlining gives every model its own copy of each stylesheet
(415 copies of 10 files, 1 MB of JSON for an Explorer), which made a display take ~10 s.
"""

from __future__ import annotations

import contextlib
import functools

import panel as pn

from treeexplorer.ui.offline import local_dist_url

__all__ = ["FrontPlot", "in_kernel", "ensure_scripts", "prepare_view", "notebook_bundle", "shared_inline_css"]

_state = {"sent": False}  # the scripts went to this kernel's front end from the installed packages


def in_kernel() -> bool:
    """Whether this process is a Jupyter kernel (an IPython shell with a kernel)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def ensure_scripts() -> bool:
    """Send BokehJS and Panel's scripts to the notebook from the installed packages, once per kernel.

    Returns True when they were sent now.  Nothing is sent outside a kernel, or when ``pn.extension`` already
    sent them inline (``inline=True``).  After a plain ``pn.extension()`` (scripts from a CDN, which an offline
    machine cannot reach) they are sent again from here.
    """
    if _state["sent"] or not in_kernel():
        return False
    from panel.config import panel_extension

    if panel_extension._loaded and pn.config.inline:
        _state["sent"] = True  # pn.extension(inline=True): the page has them
        return False
    pn.config.inline = True
    if not panel_extension._loaded:
        pn.extension()  # what the user would have called: comms, globals and the scripts, inline
    else:
        from panel.io.notebook import load_notebook

        load_notebook(True)  # the CDN copies never arrived offline: the installed ones
    _state["sent"] = True
    return True


def _prepare_doc(doc) -> None:
    """Point a notebook document at the Jupyter server's copy of Panel's files (stylesheets created now and later)."""
    url = local_dist_url()
    if url is not None and doc is not None and "dist_url" not in doc._template_variables:
        doc._template_variables["dist_url"] = url


def prepare_view(view):
    """Make ``view`` display offline on every route: its ``get_root`` (which Panel's notebook display and
    ``pn.ipywidget`` call) first sends the scripts and points the document at local stylesheets.  Returns it."""
    original = view.get_root

    @functools.wraps(original)
    def get_root(doc=None, comm=None, preprocess=True):
        if not in_kernel():
            return original(doc, comm, preprocess)
        ensure_scripts()
        _prepare_doc(doc)
        model = original(doc, comm, preprocess)
        if local_dist_url() is None and pn.config.inline:
            _inline_now(model)
        if comm is None and doc is not None and model.document is None:
            # pn.ipywidget: jupyter_bokeh would put the model in a new document of its own, without the local
            # stylesheet address, and what is made later (the tree card, a spinner) would link Panel's CDN
            from panel.io.model import add_to_doc

            add_to_doc(model, doc)
        return model

    view.get_root = get_root
    return view


def _inline_now(model) -> None:
    """Inline the stylesheets of a freshly made model tree (no Jupyter server to serve Panel's files), one copy
    per file.  Done before the model joins its document: later, every change is also a message to the page
    (Panel's own inlining after that point cost ~14 s for an Explorer)."""
    from bokeh.models import UIElement

    with shared_inline_css() as patch:
        for sub in model.select({"type": UIElement}):
            patch(sub)


@contextlib.contextmanager
def shared_inline_css():
    """While Panel inlines a display's stylesheets, give every model of the document the same copy of each file.

    Patches ``panel.viewable.patch_inline_stylesheets`` (what Panel's notebook display calls per model) for the
    duration; if Panel renames it, its own (slower) inlining runs.
    """
    import panel.viewable as pv
    from bokeh.models import ImportedStyleSheet, InlineStyleSheet
    from panel.io.notebook import replace_inline_css

    original = getattr(pv, "patch_inline_stylesheets", None)
    shared: dict = {}

    def patch(model) -> None:
        sheets = []
        for sheet in model.stylesheets:
            if isinstance(sheet, ImportedStyleSheet):
                url = sheet.url
                if url not in shared:
                    new = replace_inline_css(sheet)
                    shared[url] = new if isinstance(new, InlineStyleSheet) else None
                sheet = shared[url] or sheet
            sheets.append(sheet)
        if sheets != model.stylesheets:
            model.stylesheets = sheets

    if original is None:  # Panel renamed it: its own inlining runs (slower)
        yield patch
        return
    pv.patch_inline_stylesheets = patch
    try:
        yield patch
    finally:
        pv.patch_inline_stylesheets = original


def notebook_bundle(view, include=None, exclude=None):
    """Panel's notebook display of ``view`` (prepared by :func:`prepare_view`), offline and fast; a display that
    fails says why in the output instead of leaving the cell blank."""
    from treeexplorer.ui.offline import keep_local

    try:
        if in_kernel():
            ensure_scripts()  # before Panel's display, which checks that they were loaded
        with shared_inline_css():
            bundle = view._repr_mimebundle_(include, exclude)
    except Exception as exc:  # a blank cell says nothing: say what went wrong
        return _failed(exc)
    keep_local(view)  # components made later in this display keep local stylesheets
    return bundle


class FrontPlot(pn.pane.HoloViews):
    """The Pareto plot of :func:`treeexplorer.ui.views.front_plot`: a HoloViews pane that displays in a notebook
    offline whatever the user called first (``object`` is the HoloViews overlay)."""

    def get_root(self, doc=None, comm=None, preprocess=True):
        if not in_kernel():
            return super().get_root(doc, comm, preprocess)
        ensure_scripts()
        _prepare_doc(doc)
        model = super().get_root(doc, comm, preprocess)
        if local_dist_url() is None and pn.config.inline:
            _inline_now(model)
        return model

    def _repr_mimebundle_(self, include=None, exclude=None):
        if in_kernel():
            ensure_scripts()
        try:
            with shared_inline_css():
                return super()._repr_mimebundle_(include, exclude)
        except Exception as exc:  # never a blank cell
            return _failed(exc)


def _failed(exc) -> dict:
    from html import escape

    text = f"treeexplorer could not display this view: {type(exc).__name__}: {exc}"
    return {"text/plain": text, "text/html": f"<pre style='color:#b00'>{escape(text)}</pre>"}
