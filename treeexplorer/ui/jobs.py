"""The app's background jobs: a :class:`~treeexplorer.jobs.Job` under the server's admission control, and the
library's messages in the app's words.

Before solving, a job takes a slot from the process-wide :mod:`~treeexplorer.ui.admission` scheduler (a
server-wide cap on concurrent solves); while it waits, its place in the queue arrives as a progress event whose
phase reads ``queued: 2 ahead of you``, and cancelling takes it out of the queue.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable

from treeexplorer.jobs import Job, readable_error
from treeexplorer.solvers import Control, time_limit_seconds
from treeexplorer.ui.admission import Scheduler, get_scheduler, queued_text

__all__ = ["app_job", "limit_error", "readable_error", "app_words"]


# The library's messages name its keyword arguments and CLI flags; on the page they name the control to use.
APP_WORDS = (
    (
        re.compile(r"\s*\(drop_missing=True, CLI --drop-missing\)"),
        ": tick **Drop rows with missing values** (Data card)",
    ),
    (
        re.compile(
            r"Choose another target column \(--target\), or confirm it "
            r"\(allow_many_classes=True, CLI --allow-many-classes\)"
        ),
        "Choose another **Target column** (Data card), or confirm it with the **Use ... anyway** button",
    ),
    (  # an ambiguous guess asks (treeexplorer.target.TargetGuess.describe)
        re.compile(r"could also be the target(?!:)"),
        "could also be the target: if one of them is, choose it under **Target column** (Data card)",
    ),
    (
        re.compile(r"discretizer_params=\{'criterion': \.\.\.\} \(CLI: --criterion\)"),
        "the **MID criterion** setting",
    ),
    (  # the one check of a limit (treeexplorer.solvers.time_limit_seconds), said of the field
        re.compile(r"^time_limit must be a positive, finite number of seconds up to (\S+) \(or None for no limit\)"),
        r"**Time limit (s)** must be a positive number of seconds up to \1 (or empty for no limit)",
    ),
)


def app_words(text: str) -> str:
    """``text`` with the library's argument names (``drop_missing=True``, ``--drop-missing``) replaced by the
    app's controls ("tick Drop rows with missing values")."""
    for pattern, words in APP_WORDS:
        text = pattern.sub(words, text)
    return text


def limit_error(time_limit) -> str | None:
    """What is wrong with a time limit (the library's one check, :func:`~treeexplorer.solvers.time_limit_seconds`),
    or None when it is fine: a background start refuses it before any job (and its timer) starts."""
    try:
        time_limit_seconds(time_limit)
    except ValueError as exc:
        return str(exc)
    return None


def app_job(
    work: Callable[[Control], object],
    time_limit: float | None = None,
    *,
    label: str = "",
    meta: object = None,
    session: Hashable | None = None,
    scheduler: Scheduler | None = None,
) -> Job:
    """A :class:`~treeexplorer.jobs.Job` (not started) that queues for a slot of ``scheduler`` (default the
    process-wide :func:`~treeexplorer.ui.admission.get_scheduler`) as ``session``; see :class:`Job` for the rest."""
    return Job(
        work,
        time_limit,
        label=label,
        meta=meta,
        session=session,
        scheduler=scheduler or get_scheduler(),
        queued_words=queued_text,
    )
