"""A file over the upload cap is refused in the browser before it is sent (issue 53): one line says so, the
page stays connected and the next upload loads (treeexplorer.ui.uploadguard)."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_an_oversize_upload_is_refused_before_it_is_sent(new_page):
    env = {"TREEEXPLORER_MAX_UPLOAD_MB": "1", "TREEEXPLORER_EXACT_AUTO_ROWS": "0"}
    with served_app(env_extra=env, log_name="panel-serve-upload-cap.log") as (url, log):
        page = new_page(url, 1280, 800, wait_for="text=#1 uigreedy")
        sent = []  # websocket frames the page sends: the big file's bytes must not be among them
        page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(len(payload))))
        row = b"1.0,2.0,3.0,yes\n"
        big = b"a,b,c,label\n" + row * (1_600_000 // len(row))  # 1.5 MiB
        field = page.locator("input[type=file]").first
        field.set_input_files(files=[{"name": "big.csv", "mimeType": "text/csv", "buffer": big}])
        page.wait_for_selector("text=/big.csv: 1.5 MiB is over the 1 MiB upload limit, so the browser did not/")
        assert not sent or max(sent) < 1 << 20, max(sent)
        small = b"a,b,c,label\n" + b"".join(
            f"{i},{i % 7},{i % 3},{'yes' if i % 2 else 'no'}\n".encode() for i in range(60)
        )
        field.set_input_files(files=[{"name": "small.csv", "mimeType": "text/csv", "buffer": small}])
        page.wait_for_selector("text=/small.*60 rows/", timeout=60_000)  # still connected: the next one loads
        shot(page, "upload_refused_in_the_browser", full_page=False)
