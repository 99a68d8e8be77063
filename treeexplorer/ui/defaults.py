"""The app's defaults and ranges for its settings, one home each: the controller, the widgets and the views
read them from here."""

from __future__ import annotations

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "MIN_TIME_LIMIT",
    "DEFAULT_HELD_OUT",
    "HELD_OUT_RANGE",
    "UPLOAD_SUFFIXES",
    "UPLOAD_ACCEPT",
]

DEFAULT_TIME_LIMIT = 30.0  # seconds: a run, a sweep's task, the alternatives of a tree
MIN_TIME_LIMIT = 0.5  # the time-limit inputs' lowest value
DEFAULT_HELD_OUT = 0.25  # fraction of the rows held out at start
HELD_OUT_RANGE = (0.0, 0.9)  # the held-out fraction the app takes (the slider's ends, the controller's bounds)
UPLOAD_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")  # tables an upload may be
UPLOAD_ACCEPT = ",".join(UPLOAD_SUFFIXES)  # the file pickers' ``accept``
