"""One analyst's session stays theirs: a ``?s=`` token the client chose, or a link copied into another browser,
opens a fresh session; the same browser reloading its tab keeps its data and runs (treeexplorer.ui.handover)."""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM, PAGE_TEXT_JS, ROOT, served_app

from treeexplorer.ui.handover import BROWSER_COOKIE, FOREIGN_NOTE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

CHOSEN = "AttackerChose_842714"


@pytest.fixture(scope="module")
def server():
    # no exact front in the background: its compile would only slow this test down
    with served_app(env_extra={"TREEEXPLORER_EXACT_AUTO_ROWS": "0"}, log_name="panel-serve-sessions.log") as s:
        yield s


def _token(page) -> str:
    page.wait_for_function(
        f"() => {{ const s = new URLSearchParams(location.search).get('s'); return s && s !== '{CHOSEN}'; }}",
        timeout=30_000,
    )
    return page.evaluate("() => new URLSearchParams(location.search).get('s')")


def _upload_secret_and_run(page) -> None:
    table = (ROOT / "assets" / "iris.csv").read_bytes()
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "secret_payroll.csv", "mimeType": "text/csv", "buffer": table}]
    )
    page.wait_for_selector("text=/secret_payroll.*150 rows/", timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=60_000)


def _shows_nothing_of_the_victim(page) -> None:
    page.wait_for_selector("text=#1 uigreedy", timeout=120_000)  # its own first run
    page.wait_for_selector(f"text={FOREIGN_NOTE}", timeout=30_000)  # and the one-line note
    body = page.evaluate(PAGE_TEXT_JS)
    assert "#1 uigreedy" in body  # the page's text is read (shadow roots included)
    assert "secret_payroll" not in body and "#2 uigreedy" not in body


def test_a_chosen_or_copied_token_shares_nothing_and_a_reload_keeps_the_runs(server, new_page):
    url, _ = server
    victim = new_page(f"{url}?s={CHOSEN}")  # the link an attacker handed over
    victim.wait_for_selector("text=#1 uigreedy", timeout=120_000)
    token = _token(victim)  # the server's own token replaced the chosen one
    assert len(token) >= 22
    (cookie,) = [c for c in victim.context.cookies() if c["name"] == BROWSER_COOKIE]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    _upload_secret_and_run(victim)

    attacker = new_page(f"{url}?s={CHOSEN}")  # the attacker opens the token they chose
    _shows_nothing_of_the_victim(attacker)
    copied = new_page(f"{url}?s={token}")  # a second browser opens the victim's copied link
    _shows_nothing_of_the_victim(copied)
    assert _token(copied) != token

    victim.reload(timeout=120_000)  # the same browser reloading its tab keeps its table and runs
    victim.wait_for_selector("text=#2 uigreedy", timeout=120_000)
    victim.wait_for_selector("text=/secret_payroll.*150 rows/", timeout=30_000)
    assert _token(victim) == token
    assert victim.locator("text=#3 uigreedy").count() == 0
    assert victim.locator(f"text={FOREIGN_NOTE}").count() == 0
