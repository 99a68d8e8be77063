"""Test-only plug-in: widen the gap between a page's document reaching the browser and its ``document_ready``, and
add a run-list layer entry in it (what a server's first session did when its exact front arrived then).

Panel's ``document_ready`` handler is delayed 2 s; the entry (its label from ``$LOADGAP_LABEL``) is added on the
session's next tick, inside the gap.  Used by test_browser_load_gap.py only.
"""

from __future__ import annotations

import os
from functools import partial

import panel as pn

import treeexplorer.ui.runlist as runlist

LABEL = os.environ.get("LOADGAP_LABEL", "layer added before load")
_lists: list = []
_init = runlist.RunList.__init__


def _recording_init(self, *args, **kwargs):
    _init(self, *args, **kwargs)
    _lists.append(self)


runlist.RunList.__init__ = _recording_init
_state = type(pn.state)
_on_ready = _state._schedule_on_load


def _late_on_ready(self, doc, event):
    def add_entry():
        for run_list in _lists:
            if run_list.ctx.doc is doc:
                run_list.pareto.cloud_label = LABEL  # a layer entry, as the exact front's or the cloud's
                run_list.show_layers()

    doc.add_next_tick_callback(add_entry)
    doc.add_timeout_callback(partial(_on_ready, self, doc, event), 2000)


_state._schedule_on_load = _late_on_ready
