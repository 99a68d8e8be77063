"""Text from an uploaded table is text: column names, categories, class labels and the file name holding markup
show as the characters they are, in every pane, and no script of theirs runs (treeexplorer.textsafe)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from browser_helpers import CHROMIUM, PAGE_TEXT_JS, served_app, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

NAME = "x<img src=x onerror=alert(11)>.csv"
FEATURE = "<img src=x onerror=alert(1)>"
CATEGORICAL = "<script>alert(2)</script>"
QUOTED = '"><svg onload=alert(3)>'
FENCE = "n\n```\n<img src=x onerror=alert(6)>"
TARGET = "kind [t](javascript:alert(7))"
LABELS = ["<img src=x onerror=alert(4)>", "y|z **b**"]


def hostile_csv() -> bytes:
    rng = np.random.default_rng(0)
    n = 80
    y = rng.choice(LABELS, n)
    df = pd.DataFrame(
        {
            FEATURE: rng.normal(size=n) + (y == LABELS[0]),
            QUOTED: rng.normal(size=n),
            FENCE: rng.normal(size=n) - (y == LABELS[0]),
            CATEGORICAL: rng.choice(["a|b", "=1+1", "<img src=x onerror=alert(5)>"], n),
            TARGET: y,
        }
    )
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


@pytest.fixture(scope="module")
def server():
    with served_app(env_extra={"TREEEXPLORER_EXACT_AUTO_ROWS": "0"}, log_name="panel-serve-injection.log") as s:
        yield s


def test_markup_in_the_data_shows_as_text_and_never_runs(server, new_page):
    url, _ = server
    page = new_page(None)
    fired: list[str] = []
    page.on("dialog", lambda d: (fired.append(d.message), d.dismiss()))
    page.goto(url, timeout=400_000)
    page.wait_for_selector("text=#1 uigreedy", timeout=300_000)

    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": NAME, "mimeType": "text/csv", "buffer": hostile_csv()}]
    )
    page.wait_for_selector("text=/onerror=alert\\(11\\)>: 80 rows/", timeout=60_000)  # data info, file name
    page.get_by_text("Data preview: columns", exact=False).first.click()
    page.wait_for_selector("td:has-text('onerror=alert(5)')", timeout=30_000)  # a category, in its cell
    cells = page.locator("td").all_text_contents()
    assert any("a|b" in c for c in cells)  # the | did not split its cell
    assert FEATURE in cells and QUOTED in cells  # column names, whole, in their cells
    assert any(all(v in c for v in ("a|b", "=1+1", "<img src=x onerror=alert(5)>")) for c in cells)  # categories

    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector("text=#2 uigreedy", timeout=60_000)
    page.wait_for_selector("text=/Last run #2/", timeout=30_000)  # the sidebar status
    page.wait_for_selector("text=/#2 uigreedy.*, tree /", timeout=30_000)  # the tree title

    page.get_by_text("Rules", exact=True).first.click()
    rules = page.locator("pre:has-text('IF ')").first
    rules.wait_for(timeout=30_000)
    text = rules.text_content()
    assert "IF n\\n```\\n<img src=x onerror=alert(6)> <= " in text  # the newline shown as \\n, in the block
    assert f"THEN {LABELS[0]}" in text and f"THEN {LABELS[1]}" in text and "\n\n" not in text.strip()

    page.get_by_text("Explain a row", exact=True).click()
    page.locator(".bk-input-group:has-text('Row (0-based') input").fill("0")
    page.get_by_role("button", name="Explain", exact=True).click()
    page.wait_for_selector("text=/Row 0.*predicted/", timeout=20_000)
    box = page.locator(".bk-input-group:has-text('or type feature values') input")
    box.fill("nope=1")
    box.press("Enter")
    page.wait_for_selector("text=/Cannot explain/", timeout=20_000)
    explained = page.locator("p:has-text('Cannot explain')").first.text_content()
    assert FEATURE in explained and CATEGORICAL in explained  # the column names it lists, as text

    body = page.evaluate(PAGE_TEXT_JS)
    for shown in (FEATURE, CATEGORICAL, QUOTED, "x<img src=x onerror=alert(11)>", LABELS[0]):
        assert shown in body, shown  # as text, character for character
    live = page.evaluate(
        """() => {
      const found = [];
      const walk = root => {
        for (const el of root.querySelectorAll('*')) {
          if (el.shadowRoot) walk(el.shadowRoot);
          const tag = el.tagName.toLowerCase();
          if ((tag === 'img' && el.getAttribute('src') === 'x') || (tag === 'svg' && el.hasAttribute('onload')))
            found.push(el.outerHTML);
          if (tag === 'a' && (el.getAttribute('href') || '').startsWith('javascript')) found.push(el.outerHTML);
        }
      };
      walk(document);
      return found;
    }"""
    )
    assert live == [] and fired == []
    shot(page, "injection_escaped", full_page=False)
