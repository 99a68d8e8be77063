"""What the Explorer's Viewers share within one session: the controller, the document and safe updates.

The Explorer's parts (:mod:`~treeexplorer.ui.sidebar`, :mod:`~treeexplorer.ui.frontpanel`,
:mod:`~treeexplorer.ui.detail`, ...) are small ``pn.viewable.Viewer`` classes over the one headless
:class:`~treeexplorer.ui.controller.Controller`; a :class:`ViewContext` is what they have in common.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections.abc import Callable

import panel as pn
from panel.io.state import set_curdoc

from treeexplorer.ui.controller import Controller
from treeexplorer.ui.jobs import readable_error

log = logging.getLogger(__name__)

__all__ = [
    "ViewContext",
    "SessionViewer",
    "Poller",
    "batched",
    "safe",
    "slug",
    "one_at_a_time",
    "panel_periodic",
    "POLL_MS",
    "SMALL_TEXT",
]

POLL_MS = 150
SMALL_TEXT = {"font-size": "0.85em", "opacity": "0.75"}


@contextlib.contextmanager
def batched(doc):
    """Defer Bokeh's walk of the whole model graph to the end of a batch of changes to ``doc``.

    Every changed model reference (a new pane, renderer or source) otherwise re-walks the document: a run's
    update cost ~450 ms of server time, ~170 ms batched.  The walk at the end happens only when the batch
    changed a reference (Bokeh's own ``freeze`` always walks: ~50 ms of the server's one thread per click on a
    point, where nothing but data and text changes).  Only on the document's own thread with its lock
    (Panel's check); from a worker thread Panel queues the changes on the event loop anyway.
    """
    models = getattr(doc, "models", None)
    if models is None or not pn.state._unblocked(doc) or models._freeze_count:
        yield  # no document, not ours to change, or inside a freeze already: that one walks at its end
        return
    dirty = False

    def mark(*_):
        nonlocal dirty
        dirty = True

    # Bokeh asks for a walk through ``invalidate`` (a changed reference) or by entering a freeze of its own
    # (``add_root``, Panel's ``hold``); both are noted here instead, and the walk done once at the end.
    models.invalidate = mark
    models._push_freeze = lambda: (mark(), type(models)._push_freeze(models))
    models._freeze_count += 1
    try:
        yield
    finally:
        models._freeze_count -= 1
        del models.invalidate, models._push_freeze
        if dirty and models._freeze_count == 0:
            models.recompute()


def safe(method):
    """Run a view callback; a failure becomes an alert (and a log traceback) instead of breaking the page.

    For methods of objects with a ``ctx`` (:class:`ViewContext`).
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            with batched(self.ctx.doc):
                return method(self, *args, **kwargs)
        except Exception as exc:
            log.exception("display error in %s", method.__name__)
            self.ctx.controller.error = f"display error in {method.__name__.strip('_')}: {readable_error(exc)}"

    return wrapper


def slug(text: str) -> str:
    """``text`` as a file-name part."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "tree"


def one_at_a_time(callback, lock: threading.Lock):
    """``callback`` skipped (returning None) while another callback holding ``lock`` runs on another thread."""

    @functools.wraps(callback)
    def once(*args, **kwargs):
        if not lock.acquire(blocking=False):
            return None
        try:
            return callback(*args, **kwargs)
        finally:
            lock.release()

    return once


def panel_periodic(callback, period: int):
    """``pn.state.add_periodic_callback``, or None without an event loop (callers then poll themselves)."""
    try:
        return pn.state.add_periodic_callback(callback, period=period)
    except Exception:  # no event loop (plain script)
        return None


class Poller:
    """Call ``step()`` every ``period`` ms until it returns False: the one poll loop of a background job's view.

    Parameters
    ----------
    step : callable
        ``step() -> bool``: applies the job's events (UI thread); True while the job runs.
    period : int
        Milliseconds between two steps.
    periodic : callable, optional
        ``periodic(callback, period)`` starts a periodic callback and returns it (something with ``stop()``) or
        None without an event loop; default :func:`panel_periodic` (a session's: :meth:`ViewContext.periodic`).
    """

    def __init__(self, step: Callable[[], bool], period: int = POLL_MS, periodic: Callable | None = None):
        self._step = step
        self._period = period
        self._periodic = periodic or panel_periodic
        self._callback = None

    @property
    def active(self) -> bool:
        """A periodic callback is running the steps."""
        return self._callback is not None

    def start(self) -> None:
        """Poll from a periodic callback (once: a second start while polling changes nothing)."""
        if self._callback is None:
            self._callback = self._periodic(self.tick, self._period)

    def tick(self) -> bool:
        """One step (the periodic callback's, or a caller's without an event loop); stops polling when done."""
        running = self._step()
        if not running:
            self.stop()
        return running

    def stop(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback.stop()


class ViewContext:
    """One session's shared state for the Explorer's Viewers.

    Parameters
    ----------
    controller : Controller
        The session's headless state and logic.
    """

    def __init__(self, controller: Controller):
        self.controller = controller
        # The document the page was built for (a served session's; None in a notebook until shown): raw Bokeh
        # changes made from another thread are handed to it under its lock.
        self.doc = pn.state.curdoc if getattr(pn.state.curdoc, "session_context", None) else None
        self.quiet = 0  # > 0 while the app itself sets widgets: their watchers must not act on it
        self.building = True  # the page is being built (a served page: periodic callbacks wait for its load)
        self.dominated: dict = {}  # (run id, tree id) -> why that tree is dominated by another run's
        self._periodic_lock = threading.Lock()  # one periodic callback of this session at a time (see periodic)
        self.bokeh_panes: list = []  # pushed to a notebook after raw Bokeh changes
        self._after_load: list = []  # layout changes waiting for the served page to load (after_load)
        self._loaded = False  # the served page has loaded (set before the waiting changes run: see after_load)
        self.closed = False  # the session ended (its tab closed or reloaded): its document takes no more changes

    @contextlib.contextmanager
    def setting(self):
        """Set widgets from the app's state: the browser is updated (``param.discard_events`` would
        also drop Panel's own sync, leaving e.g. the old target column on screen) but our watchers
        ignore the change."""
        self.quiet += 1
        try:
            yield
        finally:
            self.quiet -= 1

    def bokeh(self, fn) -> None:
        """Change raw Bokeh models (the figures and their sources) safely on every route.

        Served: from a worker thread (``--num-threads``) the change is queued on the session's document,
        which runs it under the document lock; on the server's own thread it runs at once.  In a notebook it
        runs at once and is then pushed to the page (Panel sends only its own panes' changes by itself).
        """

        if self.closed:  # a closed tab's job ending (Explorer.close) must not patch a document being destroyed
            return

        def run():
            try:
                fn()
            except Exception as exc:
                name = getattr(fn, "__name__", "update")
                log.exception("display error in %s", name)
                self.controller.error = f"display error in {name}: {readable_error(exc)}"
            self.push()

        if self.doc is not None:
            with set_curdoc(self.doc):
                pn.state.execute(run)
        else:
            run()

    def after_load(self, fn, part=None) -> bool:
        """Put off ``fn`` (a change of the children of layout ``part``) until the served page has loaded in the
        browser, when ``part`` is on a page sent but not loaded yet; returns True when put off (the caller stops).

        Between the browser's fetch of the page's document and its ``document_ready`` message, Panel drops the
        children changes of a layout (they are made in a ``hold`` that ends before the session counts as
        connected, and Panel takes them to be in the document the browser gets, which it already has): the new
        widgets never reach the page.  A server's first session is slow to build and to load, and the exact front
        often arrives in that gap: the run list's layer entries (the exact line's, then the cloud's) were missing
        on such pages.  Each ``fn`` runs once, in order, when the page has loaded (Panel's ``onload``).
        """
        if self.doc is None or self._loaded or (part is not None and not part._models):
            return False  # a notebook, loaded, or ``part`` not yet rendered (the page is sent with the change)
        # (Panel's ``loaded`` turns True only after its onload callbacks: read inside one, it would put the change
        # off again, for ever)
        with set_curdoc(self.doc):
            if pn.state.loaded:
                return False
            if fn not in self._after_load:
                self._after_load.append(fn)
                if len(self._after_load) == 1:
                    pn.state.onload(self._run_after_load)
        return True

    def _run_after_load(self) -> None:
        self._loaded = True
        waiting, self._after_load = self._after_load, []
        for fn in waiting:
            fn()

    def push(self) -> None:
        """Send raw Bokeh model changes to a notebook (a no-op when served or not displayed)."""
        if self.doc is None:
            pn.io.push_notebook(*self.bokeh_panes)

    def periodic(self, callback, period: int):
        """``pn.state.add_periodic_callback``, or None without an event loop (callers then poll themselves).

        Under ``panel serve --num-threads`` Panel hands each tick to its thread pool without waiting for the
        previous one, so a poll slower than its period (a busy server drawing a front) ran twice at once: both
        drained the job's events and stopped the poller (one of them on ``None``: tracebacks in the server
        log).  The session's periodic callbacks therefore run one at a time; a tick that finds one running is
        skipped (the next tick comes a period later)."""
        return panel_periodic(one_at_a_time(callback, self._periodic_lock), period)


class SessionViewer(pn.viewable.Viewer):
    """A part of the Explorer: a Panel Viewer over one session's :class:`ViewContext` (``self.ctx``).

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state.
    """

    def __init__(self, ctx: ViewContext, **params):
        super().__init__(**params)
        self.ctx = ctx
