"""Test plug-in (``TREEEXPLORER_PLUGINS=compile_gate``): the served app's cart compile ends only once the test
creates the file named by ``TX_TEST_COMPILE_GATE``.

A cold start's checks ("the page came while the kernels compiled", "Cancel left the wait at once") raced the real
compile: on a busy machine the pages took longer than the cart compile and the compile was over before they were
checked.  With the compile held open the checks are about events (the page answered while the compile had not
ended), and the test then lets it finish.  The kernels really compile (into the fresh cache) before the hold.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from treeexplorer import warm

GATE_ENV = "TX_TEST_COMPILE_GATE"
HOLD_MAX_S = 900  # a test that died without opening the gate: the compile ends anyway

_log = logging.getLogger(__name__)
_run_toys = warm._run_toys


def _held(name: str) -> None:
    _run_toys(name)
    gate = os.environ.get(GATE_ENV)
    if name != "cart" or not gate:
        return
    _log.warning("compile_gate: the cart compile is done; held until %s exists", gate)
    deadline = time.monotonic() + HOLD_MAX_S
    while not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.05)


warm._run_toys = _held
