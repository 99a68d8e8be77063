"""The Pareto plot's hit rule (treeexplorer.ui.hittest.HIT_RULE_JS), run as written in Chromium's JS engine.

No server: each case evaluates the rule on made-up layers (draw order: held-out crosses, train points, CV marks)
with 1 px per data unit, so distances read as pixels.
"""

from __future__ import annotations

import pytest
from browser_helpers import CHROMIUM

from treeexplorer.ui.hittest import HIT_RULE_JS, HOVER_JS, TAP_JS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def page(browser):
    pg = browser.new_page()
    pg.set_content("<html><body></body></html>")
    yield pg
    pg.close()


def hit(page, layers, px, py, kx=1.0, ky=1.0):
    return page.evaluate(
        f"([layers, px, py, kx, ky]) => ({HIT_RULE_JS})(layers, px, py, kx, ky)", [layers, px, py, kx, ky]
    )


def layer(xs, ys, runs, radius=8.5, visible=True, hidden=()):
    return {"x": xs, "y": ys, "run": runs, "radius": radius, "visible": visible, "hidden": list(hidden)}


def test_nearest_point_within_the_radius_wins(page):
    train = layer([0, 10, 20], [0, 0, 0], ["#1", "#2", "#3"])
    assert hit(page, [train], 6, 0)["index"] == 1  # 4 px from #2, 6 px from #1
    assert hit(page, [train], 4, 3)["index"] == 0
    assert hit(page, [train], 15, 9) is None  # nothing within 8.5 px
    # pixels, not data units: 1 data unit on y is 100 px here, so a point 0.05 units away is 5 px away
    h = hit(page, [layer([0, 0], [0, 0.2], ["#1", "#2"])], 0, 0.15, kx=1, ky=100)
    assert h["index"] == 1 and abs(h["distance"] - 5) < 1e-9


def test_an_exact_tie_goes_to_the_topmost_point_and_names_the_others(page):
    train = layer([5, 5, 5, 9], [1, 1, 1, 1], ["#1 cart", "#2 dpdt", "#3 contree", "#4 cart"])
    h = hit(page, [train], 5, 1)
    assert h["layer"] == 0 and h["index"] == 2  # drawn last = on top
    assert h["also"] == ["#1 cart", "#2 dpdt"]
    # the same spot reached from the side: still the topmost, whatever the pointer's offset
    assert hit(page, [train], 6, 1)["index"] == 2
    # a later layer is drawn over an earlier one: on a tie it wins
    crosses = layer([5], [1], ["#1 cart"], radius=7)
    assert hit(page, [train, crosses], 5, 1) == {"layer": 1, "index": 0, "distance": 0, "also": []}


def test_hidden_runs_and_layers_cannot_be_hit(page):
    train = layer([5, 5, 12], [1, 1, 1], ["#1", "#2", "#3"], hidden=["#2"])
    h = hit(page, [train], 5, 1)
    assert h["index"] == 0 and h["also"] == []  # #2 is hidden: neither hit nor listed
    assert hit(page, [layer([5], [1], ["#1"], visible=False)], 5, 1) is None
    # the hidden layer lets the one below be hit
    below = layer([6], [1], ["#1"])
    assert hit(page, [below, layer([5], [1], ["#2"], visible=False)], 5, 1)["layer"] == 0


def test_held_out_markers_are_points_of_their_own_layer(page):
    train = layer([3, 3], [0.9, 0.8], ["#1", "#2"])
    held_out = layer([3, 3], [0.85, 0.8], ["#1", "#2"], radius=7)
    ky = 100  # 0.05 accuracy = 5 px
    # near the held-out cross of #1 (0.85), 5 px from both train points: the cross is nearer
    h = hit(page, [held_out, train], 3, 0.86, ky=ky)
    assert (h["layer"], h["index"]) == (0, 0)
    # #2's held-out point and train point coincide: the train point is drawn above the crosses
    h = hit(page, [held_out, train], 3, 0.8, ky=ky)
    assert (h["layer"], h["index"]) == (1, 1)
    # NaN positions (a run without held-out rows) are never hit
    assert hit(page, [layer([3], [float("nan")], ["#1"])], 3, 0.8) is None
    assert hit(page, [layer([3], [None], ["#1"])], 3, 0.8) is None


def test_a_larger_radius_reaches_further(page):
    star = layer([0], [0], ["#5 cart (CV)"], radius=12)
    train = layer([14], [0], ["#1"])
    assert hit(page, [train, star], 3, 0)["layer"] == 1  # 3 px from the star, 11 px from #1 (beyond 8.5 px)
    assert hit(page, [train, star], 11, 0)["layer"] == 0  # within both radii: #1 (3 px) is nearer (11 px)
    assert hit(page, [layer([0], [0], ["#1"])], 11, 0) is None  # the same 11 px from a train point: too far


def test_a_layer_of_markers_of_several_sizes_has_a_radius_per_point(page):
    # the Rashomon set's cloud: a place of many trees is a bigger marker, hit farther from its centre
    cloud = layer([0, 40], [0, 0], ["set", "set"], radius=[20, 5])
    assert hit(page, [cloud], 15, 0)["index"] == 0
    assert hit(page, [cloud], 33, 0) is None  # 7 px from the small one
    # drawn under the runs' points: on a tie the run's point (a later layer) wins
    train = layer([0], [0], ["#1 murtree"])
    assert hit(page, [cloud, train], 0, 0)["layer"] == 1
    assert hit(page, [cloud, train], 14, 0)["layer"] == 0  # beyond the point's radius, inside the big marker


def test_the_hover_and_click_scripts_parse(page):
    # the scripts are Python strings: an escape turned into a raw newline inside a JS string broke them once
    for code in (HOVER_JS, TAP_JS):
        assert page.evaluate("code => typeof new Function('cb_obj', code)", code) == "function"
