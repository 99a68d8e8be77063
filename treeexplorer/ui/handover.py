"""Keep a browser tab's work across a page reload (the template's theme switch reloads the page).

Every served session gets a random token in its URL (``?s=...``).  A new session opened with that token (the same
tab reloaded, e.g. by the theme switch, which keeps the query string) takes over the old session's controller
(data, runs, selection) instead of starting afresh.  The reloaded page usually opens before the server has noticed
that the old one is gone, so live sessions are found by their token too; a session that has ended is kept for a
short while.
The store is bounded (``MAX_KEPT`` controllers, ``KEEP_SECONDS`` each), so closed tabs cannot pile up.
"""

from __future__ import annotations

import secrets
import threading
import time
import weakref
from collections import OrderedDict

__all__ = ["KEEP_SECONDS", "MAX_KEPT", "keep", "register", "take", "new_token", "token_from_args"]

KEEP_SECONDS = 120.0
MAX_KEPT = 8
_store: OrderedDict[str, tuple[float, object]] = OrderedDict()
_live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # token -> controller of an open session
_lock = threading.Lock()


def register(token: str, controller) -> None:
    """``controller`` belongs to an open session whose URL carries ``token``."""
    with _lock:
        _live[token] = controller


def new_token() -> str:
    return secrets.token_urlsafe(12)


def token_from_args(args: dict | None) -> str | None:
    """The ``s`` query argument of a session's request (``pn.state.session_args``), if it looks like a token."""
    raw = (args or {}).get("s")
    if not raw:
        return None
    value = raw[0].decode("ascii", "replace") if isinstance(raw[0], bytes) else str(raw[0])
    return value if 8 <= len(value) <= 64 and value.replace("-", "").replace("_", "").isalnum() else None


def _purge(now: float) -> None:
    for token in [t for t, (at, _) in _store.items() if now - at > KEEP_SECONDS]:
        del _store[token]
    while len(_store) > MAX_KEPT:
        _store.popitem(last=False)


def keep(token: str, controller) -> None:
    """Keep ``controller`` for a reload of the tab that holds ``token``."""
    now = time.monotonic()
    with _lock:
        live = _live.get(token)
        if live is not None and live is not controller:  # the tab was reloaded already: its new session is newer
            return
        _store[token] = (now, controller)
        _store.move_to_end(token)
        _purge(now)


def take(token: str | None):
    """The controller of the session that had ``token`` (ended and kept, or still open), or None."""
    if token is None:
        return None
    with _lock:
        _purge(time.monotonic())
        item = _store.pop(token, None)
        live = _live.get(token)  # an open session with this token is the newest state of the tab
        return live if live is not None else (None if item is None else item[1])


def kept() -> int:
    """How many controllers are kept (for the soak benchmark's statistics)."""
    with _lock:
        _purge(time.monotonic())
        return len(_store)
