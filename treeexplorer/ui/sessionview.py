"""Save session / Open session: the session file (:mod:`treeexplorer.session_file`) read into a controller,
and the two controls of the Data card."""

from __future__ import annotations

import io

import panel as pn

from treeexplorer.prepared import prepared_data_key
from treeexplorer.session_file import SUFFIX, SessionData, SessionError, parse_session, session_bytes
from treeexplorer.ui.controller import RunSettings
from treeexplorer.ui.viewkit import SessionViewer, ViewContext

__all__ = ["open_into", "SessionControls"]


def open_into(controller, data: SessionData, name: str = "session") -> list:
    """Load ``data``'s table into ``controller`` with its settings and columns, add its runs (nothing solved
    again) and select its tree; returns the runs added.

    Raises
    ------
    SessionError
        When the table does not load as it did (its target or columns refused), or a run's front was solved
        on other rows than the table gives now (its rows' digest differs).
    """
    c = controller
    c.drop_missing = data.drop_missing
    c.param.update(test_size=data.test_size, seed=data.seed)
    table = data.table
    if table["kind"] == "bundled":
        ok = c.load_bundled(table["name"], data.target)
    else:
        ok = c.load_frame(data.frame(), data.target, table["name"])
    if ok and data.features is not None:
        ok = c.set_features(data.features)
    if not ok:
        raise SessionError(f"{name}: its table {table['name']!r} does not load as saved: {c.error}")
    digest = prepared_data_key(c.prepared())
    for i, r in enumerate(data.runs):
        if r["front"].data_key and r["front"].data_key != digest:
            raise SessionError(
                f"{name}: run {i} ({r['label']}) was solved on other rows than {table['name']!r} gives now; "
                "load the table and solve again"
            )
    added = []
    for r in data.runs:
        n = len(c.all_runs)
        c._add_run(r["front"], RunSettings(**r["settings"]))
        added += c.all_runs[n:]
    if data.selected is not None and len(added) == len(data.runs):
        run = added[data.selected[0]]
        c.select(run.id, data.selected[1])
        if data.compare is not None and any(t.id == data.compare for t in run.front.trees):
            c.compare = data.compare
    c.notice = f"opened the session {name}: {len(added)} run(s) on {table['name']}"
    return added


class SessionControls(SessionViewer):
    """ "Save session" (a download of the session file) and "Open session" (an upload of one).

    Parameters
    ----------
    ctx : ViewContext
        The session's shared state.
    on_open : callable
        ``on_open(data, name)``: show a session file read (the Explorer loads it and refreshes its parts).
    """

    def __init__(self, ctx: ViewContext, on_open, **params):
        super().__init__(ctx, **params)
        self._on_open = on_open
        self.save_w = pn.widgets.FileDownload(
            callback=self._download,
            filename=f"treeexplorer{SUFFIX}",
            label="Save session",
            color="light",
            embed=False,
            sizing_mode="stretch_width",
        )
        self.open_w = pn.widgets.FileInput(accept=f"{SUFFIX},.json", multiple=False, sizing_mode="stretch_width")
        self.open_w.param.watch(self._upload, ["value"])
        self._layout = pn.Column(
            pn.pane.Markdown("**Session**: save the runs and selection, or open a saved session", margin=(0, 10)),
            self.save_w,
            self.open_w,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self._layout

    def _download(self):
        c = self.ctx.controller
        try:
            raw = session_bytes(c)
        except SessionError as exc:
            c.error = str(exc)
            return io.BytesIO(b"")
        self.save_w.filename = f"{c.dataset_name or 'treeexplorer'}{SUFFIX}"
        return io.BytesIO(raw)

    def _upload(self, event) -> None:
        if not event.new:
            return
        name = self.open_w.filename or f"session{SUFFIX}"
        try:
            data = parse_session(event.new, name)
        except SessionError as exc:
            self.ctx.controller.error = str(exc)
            return
        self._on_open(data, name)
