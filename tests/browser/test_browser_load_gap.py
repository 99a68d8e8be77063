"""A run-list entry added after the page's document reached the browser but before the page loaded still reaches
it (treeexplorer.ui.viewkit.ViewContext.after_load): Panel dropped such changes, and a server's first session, slow
to load, lost the exact front's and the Rashomon cloud's entries that way.  The gap is widened by a test plug-in
(loadgap.py), so the case is met on every run."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, served_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

LABEL = "LAYER ADDED BEFORE LOAD"


def test_a_layer_entry_added_before_the_page_loaded_is_shown(new_page):
    env = {"TREEEXPLORER_PLUGINS": "fakes,loadgap", "LOADGAP_LABEL": LABEL}
    with served_app(env_extra=env, log_name="panel-serve-load-gap.log") as (url, _):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        page.get_by_text(LABEL).first.wait_for(timeout=20_000)
