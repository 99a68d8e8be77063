"""A session kept in one file: the table (its bundled name, or the table itself) and its digest, the data
settings and chosen columns, the runs' fronts and settings, the selected and compared tree.

The file is plain JSON (``.txsession``): opening one parses text and builds fronts from checked values (every
front through :func:`treeexplorer.validate.check_front_dict`, every other value against :data:`FIELDS`), so a
session file from someone else runs no code.  A file whose table no longer matches its digest (the bundled
table changed, the embedded table edited) is refused with one line.

>>> explorer.save("work.txsession")               # the current table's runs, settings and selection
>>> tx.Explorer.open("work.txsession")            # the same runs and selection, nothing solved again
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from treeexplorer.front import Front
from treeexplorer.validate import FrontError, check_front_dict, parse_json

__all__ = [
    "SessionError",
    "SessionData",
    "FORMAT",
    "SUFFIX",
    "save_session",
    "session_bytes",
    "read_session",
    "parse_session",
    "is_session_file",
]

FORMAT = "treeexplorer-session"
VERSION = 1
SUFFIX = ".txsession"
MAX_SESSION_BYTES = 256 << 20
SETTINGS_FIELDS = {  # RunSettings' fields and the types a file may give them
    "solver": (str,),
    "params": (dict,),
    "discretizer": (str, type(None)),
    "n_bins": (int, type(None)),
    "mid_budget": (int, float, type(None)),
    "time_limit": (int, float, type(None)),
    "cv": (int, type(None)),
    "name": (str, type(None)),
}
FIELDS = {  # the top level: name -> allowed types
    "format": (str,),
    "version": (int,),
    "table": (dict,),
    "target": (str,),
    "test_size": (int, float),
    "seed": (int,),
    "drop_missing": (bool,),
    "features": (list, type(None)),
    "runs": (list,),
    "selected": (list, type(None)),
    "compare": (int, type(None)),
}


class SessionError(ValueError):
    """A session file that cannot be opened or saved; the message names the file and the problem."""


@dataclass
class SessionData:
    """A session file's content, checked: what :meth:`treeexplorer.ui.Explorer.open` shows."""

    table: dict  # {"kind": "bundled", "name", "digest"} or {"kind": "embedded", "name", "csv", "digest"}
    target: str
    test_size: float
    seed: int
    drop_missing: bool
    features: list | None
    runs: list  # [{"label", "settings": {...}, "front": Front}]
    selected: tuple | None  # (index in runs, tree id)
    compare: int | None

    def frame(self) -> pd.DataFrame:
        """The table the session was saved on (the bundled one read again, or the embedded copy)."""
        from treeexplorer.data import _resolve, read_table_bytes

        if self.table["kind"] == "bundled":
            return _resolve(self.table["name"])[0]
        return read_table_bytes(self.table["csv"].encode("utf-8"), f"{self.table['name']}.csv")


def table_digest(frame: pd.DataFrame) -> str:
    """The table's SHA-256 over its CSV text (column names, rows, values): what a session file checks."""
    return hashlib.sha256(frame.to_csv(index=False).encode("utf-8")).hexdigest()


def _settings_dict(settings) -> dict:
    return {name: getattr(settings, name) for name in SETTINGS_FIELDS}


def save_session(controller, path) -> Path:
    """Write the controller's current table, data settings, runs and selection to ``path`` (JSON).

    Raises
    ------
    SessionError
        When there is nothing to save, or the data use a held-out file (not kept in a session yet).
    """
    path = Path(path)
    text = session_bytes(controller).decode("utf-8")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SessionError(f"{path}: cannot write the session file ({exc.strerror or exc})") from None
    return path


def session_bytes(controller) -> bytes:
    """The session file's content for the controller's current table (what Save session downloads)."""
    from treeexplorer.data import _resolve

    c = controller
    if c.dataset is None:
        raise SessionError("nothing to save: load a table first")
    if c.test_name:
        raise SessionError(f"a session with a held-out file ({c.test_name}) cannot be saved yet; use the split instead")
    if c._bundled is not None:
        frame = _resolve(c._bundled)[0]
        table = {"kind": "bundled", "name": c._bundled, "digest": table_digest(frame)}
    else:
        # the server keeps a tab's session after every run and selection (ui.session_store): the table's text and
        # digest are made once per table, not at every click
        memo = getattr(c, "_session_table", None)
        if memo is not None and memo[0] is c._frame and memo[1] == c.dataset_name:
            table = memo[2]
        else:
            text = c._frame.to_csv(index=False)
            # the digest of the copy as it is read back, so that opening compares like with like
            from treeexplorer.data import read_table_bytes

            back = read_table_bytes(text.encode("utf-8"), f"{c.dataset_name}.csv")
            table = {"kind": "embedded", "name": c.dataset_name, "csv": text, "digest": table_digest(back)}
            c._session_table = (c._frame, c.dataset_name, table)
    runs = [r for r in c.runs]
    ids = {r.id: i for i, r in enumerate(runs)}
    sel = c.selected if c.selected is not None and c.selected[0] in ids else None
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "table": table,
        "target": c.target,
        "test_size": float(c.test_size),
        "seed": int(c.seed),
        "drop_missing": bool(c.drop_missing),
        "features": c.features_chosen,
        "runs": [
            {"label": r.label, "settings": _settings_dict(r.settings), "front": r.front.to_dict(rules=False)}
            for r in runs
        ],
        "selected": [ids[sel[0]], int(sel[1])] if sel is not None else None,
        "compare": c.compare if sel is not None else None,
    }
    return json.dumps(doc, ensure_ascii=False, allow_nan=False).encode("utf-8")


def is_session_file(path) -> bool:
    """True for a file named ``*.txsession`` or a JSON file that says it is a treeexplorer session."""
    p = Path(os.fspath(path))
    if not p.is_file():
        return False
    if p.suffix == SUFFIX:
        return True
    if p.suffix.lower() != ".json":
        return False
    with open(p, "rb") as fh:
        head = fh.read(200)
    return FORMAT.encode() in head


def _check(value, types, name: str, where: str):
    if isinstance(value, bool) and bool not in types:
        ok = False
    else:
        ok = isinstance(value, types)
    if not ok or (isinstance(value, float) and not math.isfinite(value)):
        kinds = " or ".join("null" if t is type(None) else t.__name__ for t in types)
        raise SessionError(f"{name}: {where} must be {kinds}, got {json.dumps(value)[:40]}")
    return value


def read_session(path) -> SessionData:
    """Read and check a session file, and that its table still matches its digest.

    Raises
    ------
    SessionError
        One line naming the file and the problem (not a session, a field of the wrong kind, a damaged front,
        a table that changed).
    """
    name = os.fspath(path)
    p = Path(name)
    if not p.is_file():
        raise SessionError(f"no such session file: {name}")
    if p.stat().st_size > MAX_SESSION_BYTES:
        raise SessionError(f"{name}: {p.stat().st_size / 1e6:.0f} MB is too large for a session file")
    return parse_session(p.read_bytes(), name)


def parse_session(raw: bytes, name: str = "session") -> SessionData:
    """:func:`read_session` on the bytes of a file (an upload in the app); ``name`` is what messages call it."""
    if len(raw) > MAX_SESSION_BYTES:
        raise SessionError(f"{name}: {len(raw) / 1e6:.0f} MB is too large for a session file")
    try:
        d = parse_json(raw, name, "session")
    except FrontError as exc:
        raise SessionError(str(exc)) from None
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise SessionError(f"{name}: not a treeexplorer session file (save one with Save session)")
    if d.get("version") != VERSION:
        raise SessionError(f"{name}: session format version {d.get('version')!r}; this treeexplorer reads {VERSION}")
    unknown = sorted(set(d) - set(FIELDS))
    if unknown:
        raise SessionError(f"{name}: unknown field {unknown[0]!r} in the session file")
    for field_name, types in FIELDS.items():
        if field_name not in d:
            raise SessionError(f"{name}: the session file lacks {field_name!r}")
        _check(d[field_name], types, name, field_name)
    table = d["table"]
    kind = table.get("kind")
    if kind not in ("bundled", "embedded"):
        raise SessionError(f"{name}: table.kind must be 'bundled' or 'embedded', got {json.dumps(kind)[:40]}")
    for key in ("name", "digest", *(("csv",) if kind == "embedded" else ())):
        _check(table.get(key), (str,), name, f"table.{key}")
    if d["features"] is not None:
        for f in d["features"]:
            _check(f, (str,), name, "features[]")
    if not 0 <= d["test_size"] < 1 or d["seed"] < 0:
        raise SessionError(f"{name}: test_size must be in [0, 1) and seed >= 0")
    runs = []
    for i, r in enumerate(d["runs"]):
        where = f"runs[{i}]"
        _check(r, (dict,), name, where)
        _check(r.get("label"), (str,), name, f"{where}.label")
        settings = _check(r.get("settings"), (dict,), name, f"{where}.settings")
        if set(settings) != set(SETTINGS_FIELDS):
            raise SessionError(f"{name}: {where}.settings must have exactly {', '.join(SETTINGS_FIELDS)}")
        for key, types in SETTINGS_FIELDS.items():
            _check(settings[key], types, name, f"{where}.settings.{key}")
        front = _check(r.get("front"), (dict,), name, f"{where}.front")
        try:
            check_front_dict(front, f"{name}: {where}.front")
            built = Front.from_dict(front)
        except FrontError as exc:
            raise SessionError(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionError(f"{name}: {where}.front cannot be read ({exc})") from None
        runs.append({"label": r["label"], "settings": dict(settings), "front": built})
    selected = d["selected"]
    if selected is not None:
        ok = len(selected) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in selected)
        if not ok or not 0 <= selected[0] < len(runs):
            raise SessionError(f"{name}: selected must be [run index, tree id] of a saved run")
        if all(t.id != selected[1] for t in runs[selected[0]]["front"].trees):
            raise SessionError(f"{name}: selected names tree {selected[1]}, which run {selected[0]} does not have")
        selected = (selected[0], selected[1])
    data = SessionData(
        table,
        d["target"],
        float(d["test_size"]),
        d["seed"],
        d["drop_missing"],
        d["features"],
        runs,
        selected,
        d["compare"],
    )
    try:
        frame = data.frame()
    except Exception as exc:  # the bundled table gone, the embedded copy unreadable: one line
        raise SessionError(f"{name}: its table {table['name']!r} cannot be read ({str(exc).splitlines()[0]})") from None
    if table_digest(frame) != table["digest"]:
        raise SessionError(
            f"{name}: its table {table['name']!r} no longer matches the one the session was saved with "
            "(changed or edited since); load the table and solve again"
        )
    return data
