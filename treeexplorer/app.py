"""Launch the explorer web app: ``treeexplorer app [DATA]`` (also what ``apps/explorer.py`` composes).

:func:`explorer_page` builds one session's page; :func:`serve` runs a Panel server with the settings the
README gives for ``panel serve apps/explorer.py`` (background kernel warm-up, uploads up to the
app's cap), prints the address and returns when the user presses Ctrl-C.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

__all__ = [
    "open_explorer",
    "explorer_page",
    "page_extension",
    "servable_page",
    "serve",
    "WEBSOCKET_MAX_MESSAGE_SIZE",
    "TITLE",
    "DISCONNECTED",
]

# Uploads travel base64-encoded over the websocket: 30 MB carries the app's 20 MB upload cap.
WEBSOCKET_MAX_MESSAGE_SIZE = 30 * 1024 * 1024
TITLE = "treeexplorer"
NO_LOGIN_WARNING = (
    "treeexplorer app on {address}: there is no login, anyone who reaches this address can use the app (each "
    "session's data stays its own); put it behind your own authentication or reverse proxy. Pages are accepted "
    "from {origins} (--allow-websocket-origin to change)"
)
_LOG = logging.getLogger(__name__)


def _is_file(data: str | None) -> bool:
    return data is not None and Path(data).is_file()


def open_explorer(
    data: str | None = "iris", target: str | None = None, solver: str | None = None, drop_missing: bool = False
):
    """An :class:`~treeexplorer.ui.Explorer` opened on ``data`` with a first front drawn (or, in a served page
    whose solver must compile first, being solved: :meth:`~treeexplorer.ui.Explorer.first_run`).

    Parameters
    ----------
    data : str, optional
        A bundled dataset name or a CSV/TSV/Parquet file (loaded like an upload, within its size cap).
    target : str, optional
        Target column (default: the last one).
    solver : str, optional
        Solver selected at start.
    drop_missing : bool
        Start with "Drop rows with missing values" ticked (by default the rows with gaps are kept).
    """
    from treeexplorer.registry import load_plugins
    from treeexplorer.ui import Explorer

    load_plugins()  # TREEEXPLORER_PLUGINS: one loader for the app, the CLI and the API
    data = data or "iris"
    from treeexplorer.session_file import is_session_file

    if is_session_file(data):  # a saved session: its table, runs and selection, nothing solved again
        return Explorer.open(data, solver=solver)
    kw = {"drop_missing": True} if drop_missing else {}
    if not _is_file(data) and target is None:
        return Explorer(dataset=data, solver=solver, **kw)
    # A file or another target: open on the table, then run once as the plain dataset does.
    explorer = Explorer(dataset="iris" if _is_file(data) else data, solver=solver, run_default=False, **kw)
    if _is_file(data):
        path = Path(data)
        explorer.sidebar.data.load_file(path.read_bytes(), path.name)  # as if uploaded: the sidebar shows the file
    if target is not None and not explorer.controller.error:
        explorer.controller.set_target(target)
    if not explorer.controller.error:
        explorer.first_run()
    return explorer


DISCONNECTED = (
    "The connection to the treeexplorer server was lost: this page no longer responds. Reload it; while the "
    "server keeps this tab's session, its runs come back."
)


def explorer_page(
    data: str | None = "iris", target: str | None = None, solver: str | None = None, drop_missing: bool = False
):
    """The full page one session serves: :func:`open_explorer` in the app's template."""
    import panel as pn

    from treeexplorer.ui.explorer import OfflineFast

    # The parts made with the template's design from the start: made with Panel's default one, each text
    # pane changed its stylesheets on its first update, and every such change re-walked the page's models
    # (~3 walks of ~50 ms of the server's thread per session).
    pn.config.design = OfflineFast
    return open_explorer(data, target, solver, drop_missing).app()


def page_extension() -> None:
    """``pn.extension`` as the app's pages need it (both routes: ``panel serve apps/explorer.py`` and
    ``treeexplorer app``): notifications on, so that a page whose server went away (restarted, a dropped
    connection) says so instead of looking alive."""
    import panel as pn

    pn.extension(sizing_mode="stretch_width", notifications=True)
    pn.config.disconnect_notification = DISCONNECTED


def servable_page(page) -> None:
    """Add ``page`` to the session's document in one batch (what ``page.servable()`` does, a third faster).

    Bokeh re-walks the document's model graph whenever a root is added; frozen, it walks it once at the end
    (a served page: ~750 -> ~540 ms of server time).  Returns None: the page is already in the document.
    """
    import panel as pn
    from bokeh.settings import settings

    # Bokeh validates each session's new document: ~75 ms of the server's one thread per page, and only
    # warnings about the empty placeholders of lazy tabs.  The page is validated by the test suite instead
    # (test_ui.py::test_the_page_passes_bokeh_validation).
    settings.perform_document_validation.set_value(False)
    doc = pn.state.curdoc
    if doc is None or not hasattr(doc, "models"):
        page.servable()
        return
    with doc.models.freeze():
        page.servable()


def _check(data: str, target: str | None, solver: str | None, drop_missing: bool = False) -> None:
    """Fail before the server starts, with the CLI's one-line errors, on a bad dataset, target or solver."""
    from treeexplorer.data import load_dataset
    from treeexplorer.registry import get_solver
    from treeexplorer.session_file import is_session_file, read_session

    if is_session_file(data):
        read_session(data)  # a session whose table no longer matches is refused here, in one line
    else:
        load_dataset(data, target, drop_missing=drop_missing)
    if solver is not None:
        get_solver(solver)


def serve(
    data: str | None = "iris",
    *,
    target: str | None = None,
    solver: str | None = None,
    port: int = 5006,
    address: str = "localhost",
    websocket_origins: list[str] | None = None,
    show: bool = False,
    out=None,
    num_threads: int | None = None,
    drop_missing: bool = False,
) -> int:
    """Serve the explorer until Ctrl-C; returns the exit code (0).

    Parameters
    ----------
    data, target, solver
        What the app opens on (see :func:`explorer_page`); checked before the server starts.
    port : int
        0 picks a free port (the printed address has the real one).
    address : str
        Interface to listen on.  Any other than ``localhost``/``127.0.0.1`` logs once that the app has no login
        (put it behind your own authentication), and its pages must be opened under one of ``websocket_origins``.
    websocket_origins : list of str, optional
        ``HOST[:PORT]`` names users open the app under, for a non-local ``address`` (default: this machine's host
        names, ``address`` itself and localhost, on ``port``).
    show : bool
        Open a browser tab.
    out : file, optional
        Where the address is printed (default standard output).
    num_threads : int, optional
        Panel's thread pool for concurrent sessions (``panel serve --num-threads``).
    drop_missing : bool
        Each session starts with "Drop rows with missing values" ticked.
    """
    import panel as pn

    from treeexplorer.ui.admission import max_upload_bytes
    from treeexplorer.ui.warm import warm_up_in_background
    from treeexplorer.warm import compile_notice, needs_compile

    data = data or "iris"
    _check(data, target, solver, drop_missing)
    out = out or sys.stdout

    def session():
        page_extension()
        servable_page(explorer_page(data, target, solver, drop_missing))

    # What `panel serve apps/explorer.py --warm` gets from running the script once: the solvers' kernels load (or,
    # on a new machine, compile) in a background thread, so the address is printed and served at once instead of
    # after a first session has been built in the foreground.
    first = solver or "cart"
    if needs_compile(first):  # the page opens at once; its first front waits for the compile: say why
        print(f"{compile_notice(first)}; the page opens now, its first front when it is done", file=out, flush=True)
    warm_up_in_background(first=first)
    local = address in ("localhost", "127.0.0.1")
    if not local:
        port = port or _free_port(address)  # the origins name the port
        websocket_origins = websocket_origins or _own_origins(address, port)
        _LOG.warning(NO_LOGIN_WARNING.format(address=address, origins=", ".join(websocket_origins)))
    server = pn.serve(
        {"/": session},
        port=port,
        address=address,
        websocket_origin=None if local else list(websocket_origins),
        show=False,
        start=False,
        title=TITLE,
        verbose=False,
        # an upload travels base64-encoded (4/3 of its size) in one websocket message
        websocket_max_message_size=max(WEBSOCKET_MAX_MESSAGE_SIZE, int(max_upload_bytes() * 1.4) + 2**20),
        **({} if num_threads is None else {"num_threads": num_threads}),
    )
    url = f"http://{'localhost' if address in ('', '0.0.0.0') else address}:{server.port}/"
    print(f"treeexplorer app serving {data} at {url} (Ctrl-C to stop)", file=out, flush=True)
    server.start()
    if show:
        server.io_loop.add_callback(server.show, "/")
    loop = getattr(server.io_loop, "asyncio_loop", None)  # (a test's stand-in server has none)
    if loop is not None:
        quiet_closed_tabs(loop)
    _stop_on_ctrl_c(server, out)
    try:
        server.io_loop.start()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print("treeexplorer app stopped", file=out, flush=True)
    return 0


def quiet_closed_tabs(loop) -> None:
    """Drop the errors of writes to a closed browser tab from ``loop``'s reports.

    A tab closed while Bokeh still sends it a change ends its websocket under the write: Tornado's write task
    fails with ``WebSocketClosedError`` (or ``StreamClosedError``) and asyncio prints "Task exception was never
    retrieved" with a traceback in the server's terminal for each.  The session is gone, so nothing is lost;
    every other error is reported as before."""
    from tornado.iostream import StreamClosedError
    from tornado.websocket import WebSocketClosedError

    previous = loop.get_exception_handler()

    def handler(loop, context) -> None:
        if isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError)):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _own_origins(address: str, port: int) -> list[str]:
    """The host names this machine answers to, on ``port``: the websocket origins a page may come from."""
    import socket

    names = {"localhost", "127.0.0.1", socket.gethostname(), socket.getfqdn()}
    if address not in ("", "0.0.0.0", "::"):
        names.add(address)
    return sorted(f"{n}:{port}" for n in names if n)


def _free_port(address: str) -> int:
    import socket

    with socket.socket() as s:
        s.bind((address if address not in ("", "::") else "0.0.0.0", 0))
        return s.getsockname()[1]


def _stop_on_ctrl_c(server, out, grace: float = 0.8) -> None:
    """Ctrl-C (or SIGTERM) stops the server; if the loop is busy (a session being built, slowly while kernels
    compile in the background), the process exits anyway after ``grace`` seconds: a user's Ctrl-C is never
    ignored."""
    import os
    import signal
    import threading

    def force_exit():
        print("treeexplorer app stopped", file=out, flush=True)
        os._exit(0)

    def handler(signum, frame):
        print("treeexplorer app stopping", file=out, flush=True)
        server.io_loop.asyncio_loop.call_soon_threadsafe(server.io_loop.stop)
        timer = threading.Timer(grace, force_exit)
        timer.daemon = True
        timer.start()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, handler)
        except ValueError:  # not the main thread (e.g. serve() called from a thread): no handler, no change
            return
