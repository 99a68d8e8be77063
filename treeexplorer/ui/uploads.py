"""Uploads are parsed off the server's event loop: one session's large or hostile file never stalls the others.

:func:`parse_in_worker` runs :func:`~treeexplorer.ui.controller.parse_upload` (bounded while it reads: see
:class:`~treeexplorer.data.ReadLimits`) in a small thread pool shared by the sessions of this process;
:func:`on_document` hands its result back to the session's document, whose lock the UI changes need.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import panel as pn
from panel.io.state import set_curdoc

from treeexplorer.ui.controller import parse_upload

__all__ = ["parse_in_worker", "on_document"]

# Two readers at once: a third upload waits its turn instead of taking a third core from the solves.
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="treeexplorer-upload")


def parse_in_worker(content: bytes, filename: str) -> Future:
    """A future of ``parse_upload(content, filename)`` (its result a DataFrame, or the ``DataError``)."""
    return _POOL.submit(parse_upload, content, filename)


def on_document(ctx, fn) -> None:
    """Run ``fn()`` on the session's document (under its lock, on the server's loop); not once it has closed."""

    def run():
        if not ctx.closed:
            fn()

    if ctx.doc is None:
        run()
        return
    with set_curdoc(ctx.doc):
        pn.state.execute(run)
