"""Keep a browser tab's work across a page reload (the template's theme switch reloads the page), for that
browser only.

Every served session gets a token the server makes (``secrets``, 128 bits) in its URL (``?s=...``), and every
browser a secret of its own in an ``HttpOnly; SameSite=Strict`` cookie the server sets on the page's response
(:func:`browser_secret`).  A new session opened with a token (the same tab reloaded, e.g. by the theme switch,
which keeps the query string) takes over the old session's controller (data, runs, selection) only when it comes
with the secret of the browser that held the token; a token the server did not issue, one that has ended, or one
from another browser (a copied link) starts a fresh, empty session under a new token, and says so in one line.
The reloaded page usually opens before the server has noticed that the old one is gone, so live sessions are
found by their token too; a session that has ended is kept for a short while.
What is kept lives in this server process's memory only (``MAX_KEPT`` sessions, ``KEEP_SECONDS`` each): a
restarted server has none.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
import weakref
from collections import OrderedDict

__all__ = [
    "BROWSER_COOKIE",
    "FOREIGN_NOTE",
    "KEEP_SECONDS",
    "MAX_KEPT",
    "browser_secret",
    "keep",
    "kept",
    "new_token",
    "register",
    "take",
    "token_from_args",
]

KEEP_SECONDS = 120.0
MAX_KEPT = 8
BROWSER_COOKIE = "treeexplorer_browser"
FOREIGN_NOTE = "this link's session is not open in this browser (it ended, or belongs to another browser): a new one"
_store: OrderedDict[str, tuple[float, str | None, object]] = OrderedDict()  # token -> (kept at, browser, controller)
_live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # token -> controller of an open session
_owner: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # controller of an open session -> its browser
_lock = threading.Lock()


def new_token() -> str:
    """A session token: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def _well_formed(value, lo: int, hi: int) -> bool:
    return isinstance(value, str) and lo <= len(value) <= hi and value.replace("-", "").replace("_", "").isalnum()


def token_from_args(args: dict | None) -> str | None:
    """The ``s`` query argument of a session's request (``pn.state.session_args``), if it looks like a token."""
    raw = (args or {}).get("s")
    if not raw:
        return None
    value = raw[0].decode("ascii", "replace") if isinstance(raw[0], bytes) else str(raw[0])
    return value if _well_formed(value, 8, 64) else None


def browser_secret(request) -> str | None:
    """The secret of the browser that opened a session (``session_context.request``), None without a request.

    A browser without one (its first visit) gets a new secret: set as an ``HttpOnly; SameSite=Strict`` cookie on
    the response of the page request that is creating this session, so its next page load (a reload) sends it.
    """
    if request is None:
        return None
    value = (getattr(request, "cookies", None) or {}).get(BROWSER_COOKIE)
    if _well_formed(value, 43, 43):
        return value
    value = secrets.token_urlsafe(32)
    _set_cookie(request, value)
    return value


def _set_cookie(request, value: str) -> bool:
    """Add the cookie to the response of ``request`` if its headers are not sent yet (a page request: the
    session is built before the page is written; a session rebuilt on a websocket cannot set it)."""
    real = getattr(request, "_request", request)  # Bokeh's read-only proxy of the tornado request
    conn = getattr(real, "connection", None)
    write = getattr(conn, "write_headers", None)
    if write is None or getattr(conn, "_response_start_line", True) is not None:
        return False
    secure = "; Secure" if getattr(real, "protocol", "http") == "https" else ""
    morsel = f"{BROWSER_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict{secure}"

    def write_headers(start_line, headers, chunk=None):
        del conn.write_headers  # once: back to the connection's own method
        headers.add("Set-Cookie", morsel)
        return write(start_line, headers, chunk)

    conn.write_headers = write_headers
    return True


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and hmac.compare_digest(a, b)


def register(token: str, browser: str | None, controller) -> None:
    """``controller`` belongs to an open session of ``browser`` whose URL carries ``token``."""
    with _lock:
        _live[token] = controller
        _owner[controller] = browser


def _purge(now: float) -> None:
    for token in [t for t, (at, _, _) in _store.items() if now - at > KEEP_SECONDS]:
        del _store[token]
    while len(_store) > MAX_KEPT:
        _store.popitem(last=False)


def keep(token: str, browser: str | None, controller) -> None:
    """Keep ``controller`` for a reload, in ``browser``, of the tab that holds ``token``."""
    now = time.monotonic()
    with _lock:
        live = _live.get(token)
        if live is not None and live is not controller:  # the tab was reloaded already: its new session is newer
            return
        _store[token] = (now, browser, controller)
        _store.move_to_end(token)
        _purge(now)


def take(token: str | None, browser: str | None):
    """The controller of the session that had ``token`` (ended and kept, or still open) in ``browser``, or None
    (an unknown token, or one of another browser: that session stays where it is)."""
    if token is None or browser is None:
        return None
    with _lock:
        _purge(time.monotonic())
        live = _live.get(token)  # an open session with this token is the newest state of the tab
        if live is not None:
            if not _same(_owner.get(live), browser):
                return None
            _store.pop(token, None)
            return live
        item = _store.get(token)
        if item is None or not _same(item[1], browser):
            return None
        del _store[token]
        return item[2]


def kept() -> int:
    """How many controllers are kept (for the soak benchmark's statistics)."""
    with _lock:
        _purge(time.monotonic())
        return len(_store)
