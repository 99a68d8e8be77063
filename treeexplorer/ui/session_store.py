"""A served tab's session kept on the server's disk, so that its ``?s=`` link survives a server restart.

:mod:`treeexplorer.ui.handover` keeps a closed tab's work in memory for a reload; a restarted server has none.
Here the same work is also written as a session file (:mod:`treeexplorer.session_file`: plain JSON, the table
embedded or named, checked on reading, never code) after every run and when the tab closes, named by a digest
of the tab's token and kept with a digest of the browser's secret (the ``HttpOnly`` cookie of
:func:`~treeexplorer.ui.handover.browser_secret`).  A new server opening that link in *that* browser shows the
session again; a copied link, in another browser, finds nothing.  Neither the token nor the secret is written.

Disk use is bounded: each file is capped as session files are (:data:`~treeexplorer.session_file.MAX_SESSION_BYTES`),
files older than :data:`MAX_AGE_S` go, and the oldest go first beyond :data:`MAX_FILES` files or
:data:`MAX_TOTAL_BYTES`.  ``TREEEXPLORER_SESSION_DIR`` chooses the folder (``off``: keep nothing on disk); by
default it is ``sessions`` in the user's cache folder.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
import time
from pathlib import Path

__all__ = ["MAX_AGE_S", "MAX_FILES", "MAX_TOTAL_BYTES", "load", "save", "store_dir"]

log = logging.getLogger(__name__)

MAX_FILES = 64
MAX_TOTAL_BYTES = 512 << 20
MAX_AGE_S = 7 * 24 * 3600.0
_ENV = "TREEEXPLORER_SESSION_DIR"
_lock = threading.Lock()


def store_dir() -> Path | None:
    """The folder kept sessions are written to (made on first use); None when ``TREEEXPLORER_SESSION_DIR=off``."""
    chosen = os.environ.get(_ENV, "").strip()
    if chosen.lower() in ("off", "0", "none"):
        return None
    if chosen:
        return Path(chosen)
    import platformdirs

    return platformdirs.user_cache_path("treeexplorer", appauthor=False) / "sessions"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _paths(folder: Path, token: str) -> tuple[Path, Path]:
    stem = _digest("token:" + token)
    return folder / f"{stem}.txsession", folder / f"{stem}.owner"


def save(token: str | None, browser: str | None, controller) -> bool:
    """Write ``controller``'s session for the tab of ``token`` in ``browser``; True when written.

    Nothing is written without a token and a browser secret, without a table, or when the session cannot be
    saved (:class:`~treeexplorer.session_file.SessionError`: e.g. a held-out file) or is over the size cap.
    """
    folder = store_dir()
    if folder is None or not token or not browser or controller.dataset is None:
        return False
    from treeexplorer.session_file import MAX_SESSION_BYTES, SessionError, session_bytes

    try:
        content = session_bytes(controller)
    except SessionError:
        return False
    if len(content) > MAX_SESSION_BYTES:
        return False
    session, owner = _paths(folder, token)
    with _lock:
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            for path, data in ((session, content), (owner, json.dumps({"browser": _digest(browser)}).encode())):
                part = path.with_name(path.name + ".part")
                part.write_bytes(data)
                os.chmod(part, 0o600)  # other accounts on the server read nobody's tables
                os.replace(part, path)  # a reader never sees half a file
            _prune(folder)
        except OSError as exc:  # a full or read-only disk: the session still works, it is just not kept
            log.warning("could not keep the session on disk in %s: %s", folder, exc)
            return False
    return True


def load(token: str | None, browser: str | None):
    """The kept session (:class:`~treeexplorer.session_file.SessionData`) of the tab of ``token`` in
    ``browser``, or None: none kept, kept for another browser, or no longer a valid session file (then removed)."""
    folder = store_dir()
    if folder is None or not token or not browser:
        return None
    session, owner = _paths(folder, token)
    try:
        kept = json.loads(owner.read_text()).get("browser", "")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(kept, str) or not hmac.compare_digest(kept, _digest(browser)):
        return None
    from treeexplorer.session_file import SessionError, read_session

    try:
        return read_session(session)
    except SessionError as exc:
        log.warning("dropped a kept session that no longer opens: %s", exc)
        with _lock:
            for path in (session, owner):
                path.unlink(missing_ok=True)
        return None


def _prune(folder: Path) -> None:
    """Remove kept sessions older than :data:`MAX_AGE_S`, then the oldest beyond the count and size caps."""
    now = time.time()
    kept = []
    for path in folder.glob("*.txsession"):
        try:
            st = path.stat()
        except OSError:
            continue
        kept.append((st.st_mtime, st.st_size, path))
    kept.sort(reverse=True)  # newest first
    total = 0
    for i, (mtime, size, path) in enumerate(kept):
        total += size
        if now - mtime > MAX_AGE_S or i >= MAX_FILES or total > MAX_TOTAL_BYTES:
            path.unlink(missing_ok=True)
            path.with_suffix(".owner").unlink(missing_ok=True)
