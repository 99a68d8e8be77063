"""Which point of the Pareto plot is under the pointer: one rule, used by the tooltip and by the click.

Bokeh's hover and tap tools each hit-test on their own (every glyph whose marker contains the pointer), so with
overlaid runs the tooltip could name one run's tree while a click selected another's, and a hover over points
drawn on top of each other stacked several tooltips.  Here one function, :data:`HIT_RULE_JS`, decides:

- the nearest visible point in screen space within its layer's radius (pixels);
- on an exact tie (points drawn at the same spot) the topmost one: the later layer, then the later row
  (the order Bokeh draws them in);
- the other runs with a point at exactly the same place are returned as ``also`` (the tooltip's "also in").

The rule runs in the browser (it needs the plot's current ranges and size); the tooltip (:data:`HOVER_JS`) and
the click (:data:`TAP_JS`) both call it, so they cannot disagree.  ``tests/browser/test_hit_rule.py`` runs it on
made-up layers in Chromium, and the browser scan checks that a click selects the tree the tooltip named.
"""

from __future__ import annotations

__all__ = ["HIT_RULE_JS", "HOVER_JS", "TAP_JS", "layers_js"]

# hitTest(layers, px, py, kx, ky): layers in draw order (bottom first), each {x, y, run, radius, visible,
# hidden}: point coordinates (data units), run labels, the hit radius (px; a number, or one per point for
# markers of several sizes), whether the layer is shown, and run labels to skip.  (px, py) is the pointer in
# data units; kx, ky the pixels per data unit.  Returns null or {layer, index, distance, also}.
HIT_RULE_JS = """function hitTest(layers, px, py, kx, ky) {
  let best = null, bestQ = Infinity;
  for (let l = 0; l < layers.length; l++) {
    const L = layers[l];
    if (!L.visible) continue;
    const hidden = L.hidden || [], each = typeof L.radius != "number", r2 = L.radius * L.radius;
    for (let i = 0; i < L.x.length; i++) {
      if (hidden.includes(L.run[i]) || L.x[i] == null || L.y[i] == null) continue;
      const dx = (L.x[i] - px) * kx, dy = (L.y[i] - py) * ky, q = dx * dx + dy * dy;
      if (!(q <= (each ? L.radius[i] * L.radius[i] : r2))) continue;  // also skips NaN positions (no held-out rows)
      if (q <= bestQ) { bestQ = q; best = {layer: l, index: i}; }  // "<=": on a tie the later (topmost) wins
    }
  }
  if (best === null) return null;
  const L = layers[best.layer], i = best.index, hidden = L.hidden || [], also = [];
  for (let j = 0; j < L.x.length; j++) {
    const run = L.run[j];
    if (j !== i && L.x[j] === L.x[i] && L.y[j] === L.y[i] && run !== L.run[i] && !hidden.includes(run)
        && !also.includes(run)) also.push(run);
  }
  best.distance = Math.sqrt(bestQ);
  best.also = also;
  return best;
}"""

# The layers of a ParetoFigure in draw order, from the CustomJS args: the Rashomon set's cloud (held-out, then
# train; markers sized by their count, so a radius per point), held-out crosses, train points, the CV mean points
# and the CV marks (1-SE star, best-mean ring).  A layer is hit only while its renderer is shown.
_LAYERS_JS = """
const kinds = [], layers = [];
const add = (kind, source, renderer, radius) => {
  if (!source) return;
  const d = source.data;
  const x = kind == "cv" ? d.level : d.x, y = kind == "cv" ? d.cv_mean : d.y;
  if (!x || !y) return;
  kinds.push([kind, source]);
  layers.push({x: x, y: y, run: d.run || [], radius: radius, visible: !renderer || renderer.visible, hidden: []});
};
if (typeof cloud != "undefined" && cloud) {
  add("cloud", cloud_tests, cloud_tests_r, cloud_tests.data.radius);
  add("cloud", cloud, cloud_r, cloud.data.radius);
}
add("test", tests, tests_r, radius_test);
add("train", points, points_r, radius);
add("cv", means, means_r, radius_test);
add("cv", marks, marks_r, radius_mark);
const xr = plot.x_range, yr = plot.y_range;
const kx = plot.inner_width / (xr.end - xr.start), ky = plot.inner_height / (yr.end - yr.start);
const hit = hitTest(layers, cb_obj.x, cb_obj.y, kx, ky);
"""


def layers_js(body: str) -> str:
    """CustomJS code: the hit rule, the figure's layers, ``hit`` for the pointer, then ``body``."""
    return f"const hitTest = {HIT_RULE_JS};\n{_LAYERS_JS}\n{body}"


# The train row a hit stands for: a held-out cross or a CV mark names a tree of its run.
_ROW_JS = """
const rowOf = (hit) => {
  if (hit === null) return -1;
  const [kind, source] = kinds[hit.layer], d = source.data, p = points.data;
  if (kind == "train") return hit.index;
  if (kind == "cloud") return -1;  // a tree of the Rashomon set, not of a run's front
  for (let i = 0; i < p.tree.length; i++) {
    const same = kind == "test" ? p.run[i] === d.run[hit.index] : p.run_id[i] === d.run_id[hit.index];
    if (same && p.tree[i] === d.tree[hit.index]) return i;
  }
  return -1;
};
"""

# One tooltip: the point the rule found, and the other runs at the same spot.
HOVER_JS = layers_js(
    _ROW_JS
    + """
if (hit === null) { if (tip.visible) tip.visible = false; tip._hit_key = null; return; }
const [kind, source] = kinds[hit.layer], d = source.data, i = hit.index;
const key = hit.layer + ":" + i + ":" + source.data.x?.length;
const sx = cb_obj.sx + (layers[hit.layer].x[i] - cb_obj.x) * kx;
const sy = cb_obj.sy - (layers[hit.layer].y[i] - cb_obj.y) * ky;
if (tip._hit_key !== key) {
  tip._hit_key = key;
  const box = document.createElement("div");
  box.style.cssText = "max-width: 340px; white-space: normal; overflow-wrap: anywhere; font-size: 12px";
  const line = (label, text) => {
    const row = document.createElement("div");
    if (label) {
      const k = document.createElement("span");
      k.style.color = "#555";
      k.textContent = label + ": ";
      row.appendChild(k);
    }
    row.appendChild(document.createTextNode(String(text)));
    box.appendChild(row);
  };
  const num = (v, n) => (typeof v == "number" && v >= 0 ? v.toFixed(n) : "—");
  const title = document.createElement("div");
  title.style.fontWeight = "bold";
  box.appendChild(title);
  if (kind == "cloud") {
    title.textContent = d.title[i];
    for (const row of d.tip[i].split("\\n")) { const [k, v] = row.split("\\t"); line(k, v); }
  } else if (kind == "cv") {
    title.textContent = d.run[i] + " · cross-validation";
    line(d.measure[i], d.level[i]);
    line("CV held-out acc", num(d.cv_mean[i], 4) + " ± " + num(d.cv_std[i], 4) + " (1 sd)");
    line("CV train acc", num(d.train_mean[i], 4));
    line("folds reaching the level", d.n_reached[i] + " of " + d.k[i]);
    line("folds averaged", d.n_folds[i] + " of " + d.k[i]);
    if (d.choice[i] && d.choice[i] != "-") line("choice", d.choice[i]);
    line("", d.tree[i] >= 0 ? "click: show the refit tree " + d.tree[i] : "no refit tree at this level");
  } else {
    title.textContent = d.run[i] + " · tree " + d.tree[i] + (kind == "test" ? " · held-out ✕" : "");
    line("splits", d.splits[i]);
    line("leaves", d.leaves[i]);
    line("depth", d.depth[i]);
    line("tests/sample", num(d.avg_tests[i], 3));
    line("train acc", num(d.train_accuracy[i], 4));
    line("held-out acc", num(d.test_accuracy[i], 4));
    line("train errors", d.train_errors[i]);
    if (d.objective && d.objective[i] != "misclassifications") {
      line("balanced acc", num(d.train_bacc[i], 4) + " (held-out " + num(d.test_bacc[i], 4) + ")");
      line("train cost", num(d.train_cost[i], 2));
      line("objective", d.objective[i]);
    }
    line("status", d.proven[i]);
    if (d.info[i]) line("solver info", d.info[i]);
    if (d.gap[i] && d.gap[i] != "—") line("vs optimum", d.gap[i]);
    line("", "click: show this tree");
  }
  if (hit.also.length) line("also in", hit.also.join(", "));
  tip.content = box;
}
tip.show({x: sx + (kind == "cloud" ? d.radius[i] : radius), y: sy});
"""
)

# A click (a tap, a press released, a double click) selects the hit's tree: one index, the row the tooltip
# named.  On empty plot the selection stays.  Then the tree's card is scrolled into view when it is low.
TAP_JS = layers_js(
    _ROW_JS
    + """
const row = rowOf(hit);
if (hit !== null && kinds[hit.layer][0] == "cloud") {
  // the set's tree, named by the cloud it was drawn in: the server opens it only if that cloud is still shown
  const d = kinds[hit.layer][1].data;
  cloud_pick.data = {stamp: [d.stamp[hit.index]], rank: [d.rank[hit.index]], at: [Date.now()]};
} else if (row < 0) {
  return;
} else {
  points.selected.indices = [row];
}
if (!cls) return;
const find = (root) => {
  const el = root.querySelector('.' + cls);
  if (el) return el;
  for (const node of root.querySelectorAll('*')) {
    if (node.shadowRoot) { const found = find(node.shadowRoot); if (found) return found; }
  }
  return null;
};
const el = find(document);
if (el && el.getBoundingClientRect().top > 0.6 * window.innerHeight) {
  el.scrollIntoView({behavior: 'instant', block: 'start'});  // no animation racing the user's next move
}
"""
)
