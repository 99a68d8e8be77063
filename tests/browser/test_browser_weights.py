"""Rare classes in the browser (issue 48): scikit-learn's breast-cancer table with 20 of its 212 malignant rows
kept (20 against 357).  Unweighted, the smallest trees call nearly everyone benign; with "Weigh the classes:
balanced" the front's trees find the malignant rows, the vertical axis says "Balanced accuracy" and the tree
card's Diagnostics tab shows the confusion matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from browser_helpers import ALL_VIEWS_JS, CHROMIUM, POINTS_JS, served_app, settled, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

FEATURES = ["mean radius", "mean texture", "mean perimeter", "mean area", "mean smoothness", "mean concavity"]

# The Pareto plot's vertical axis label and every train point's run, splits and balanced accuracy, from Bokeh's
# own models (the axis label is drawn on the canvas, not in the page's text).
PLOT_JS = (
    "() => {"
    + ALL_VIEWS_JS
    + """
  for (const v of views.filter(v => v.frame && v.renderer_views)) {
    for (const [m] of v.renderer_views) {
      const d = m.data_source && m.data_source.data;
      if (d && d.tree && d.train_bacc && d.run_id) {
        const pts = [];
        for (let i = 0; i < d.tree.length; i++)
          pts.push({run: d.run_id[i], tree: d.tree[i], splits: d.splits[i], bacc: d.train_bacc[i]});
        return {label: v.model.left[0].axis_label, points: pts};
      }
    }
  }
  return null;
}"""
)


def rare_cancer_csv() -> bytes:
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    df = data.frame[FEATURES].assign(diagnosis=np.where(data.target == 0, "malignant", "benign"))
    malignant = df[df.diagnosis == "malignant"].sample(20, random_state=0)
    table = pd.concat([df[df.diagnosis == "benign"], malignant]).sample(frac=1, random_state=0)
    return table.to_csv(index=False).encode()


@pytest.fixture(scope="module")
def server():
    with served_app(env_extra={"TREEEXPLORER_EXACT_AUTO_ROWS": "0"}, log_name="panel-serve-weights.log") as s:
        yield s


def select(page, label: str, value: str) -> None:
    page.locator(f".bk-input-group:has(label:text-is('{label}')) select").select_option(value)


def run(page, run_id: int) -> None:
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_selector(f"text=/Last run #{run_id} cart/", timeout=120_000)


def test_balanced_weights_find_the_rare_class(server, new_page):
    url, _ = server
    page = new_page(url)
    page.wait_for_selector("text=#1 uigreedy", timeout=300_000)
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "rare_cancer.csv", "mimeType": "text/csv", "buffer": rare_cancer_csv()}]
    )
    page.wait_for_selector("text=/rare_cancer.*377 rows/", timeout=60_000)
    select(page, "Target column", "diagnosis")
    select(page, "Solver", "cart")
    page.wait_for_selector("text=Max depth", timeout=30_000)
    run(page, 2)  # unweighted
    select(page, "Weigh the classes", "balanced")
    run(page, 3)
    page.wait_for_function(f"() => {{ const p = ({PLOT_JS})(); return p && p.points.some(q => q.run === 3); }}")
    plot = page.evaluate(PLOT_JS)
    assert plot["label"] == "Balanced accuracy"  # the axis follows what run #3 optimised
    plain = {p["splits"]: p["bacc"] for p in plot["points"] if p["run"] == 2}
    weighted = {p["splits"]: p["bacc"] for p in plot["points"] if p["run"] == 3}
    small = [k for k in weighted if 1 <= k <= 3]
    # not the majority-class tree: a small weighted tree finds most malignant rows (balanced accuracy 0.5 would
    # be "benign" for everyone), and does better than the unweighted tree of its size
    assert small and max(weighted[k] for k in small) > 0.85
    assert any(k in plain and weighted[k] > plain[k] for k in small)

    # the card of a small weighted tree: its Diagnostics tab holds the confusion matrix with both classes
    k = max(small, key=lambda s: weighted[s])
    pt = next(p for p in settled(page, POINTS_JS) if p["run"] == 3 and p["splits"] == k)
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_selector(f"text=/#3 cart.*tree {pt['tree']}:/", timeout=30_000)
    page.get_by_text("Diagnostics", exact=True).first.click()
    page.wait_for_selector("text=/true ↓ \\/ predicted →/", timeout=30_000)
    page.wait_for_selector("text=/balanced accuracy 0\\.[89]/", timeout=30_000)
    assert page.locator("th:text-is('malignant')").count() >= 2  # a row and a column of the matrix
    shot(page, "weights_balanced_rare_cancer", full_page=False)
