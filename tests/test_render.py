"""Tree rendering: layout invariants, PNG (Pillow) and SVG exports with provenance, HoloViews view."""

from __future__ import annotations

import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent / "browser"))
import fakes  # noqa: E402
from fakes import greedy_tree  # noqa: E402

from treeexplorer.api import solve  # noqa: E402
from treeexplorer.data import load_dataset  # noqa: E402
from treeexplorer.render import layout_tree, to_png, to_svg  # noqa: E402
from treeexplorer.render.layout import FONT_PATH, PALETTE, class_colors, text_width  # noqa: E402
from treeexplorer.tree import Tree  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def _stand_in_solvers():
    fakes.register_fakes()
    yield
    fakes.unregister_fakes()


SVG_NS = "{http://www.w3.org/2000/svg}"


def random_tree(seed: int, n_classes: int = 3, depth: int = 3, categorical: bool = False) -> Tree:
    """A greedy tree on random data (numeric, optionally with a categorical column)."""
    rng = np.random.default_rng(seed)
    n = 60
    df = pd.DataFrame({"a": rng.integers(0, 10, n), "b": rng.normal(size=n).round(2)})
    if categorical:
        df["colour"] = rng.choice(["red", "green", "blue"], n)
    df["y"] = rng.integers(0, n_classes, n).astype(str)
    ds = load_dataset(df, "y", name="random")
    X = np.column_stack([ds.X[:, j] for j in range(ds.X.shape[1])])
    raw = greedy_tree(X, ds.y, ds.schema.n_classes, depth)
    return Tree.from_raw(raw, list(range(ds.X.shape[1])), ds.schema)


@pytest.fixture(scope="module")
def iris_front():
    return solve("iris", solver="uigreedy", test_size=0.25, max_depth=3)


def check_layout(tree: Tree) -> None:
    lay = layout_tree(tree)
    reach = {int(k) for k in tree.reachable()}
    assert {b.id for b in lay.nodes} == reach
    boxes = {b.id: b for b in lay.nodes}
    for b in lay.nodes:
        # every line of text fits inside its box (measured in the export font)
        for text, bold in b.lines:
            assert text_width(text, bold=bold) <= b.w
        assert 0 <= b.x0 and b.x1 <= lay.width + 1e-9 and b.bottom <= lay.height + 1e-9
        if not b.leaf:
            kids = [boxes[c] for c in tree.child_list(b.id)]
            if not tree.is_multi(b.id):
                assert kids[0].id == tree.true_child[b.id], "the true side is drawn on the left"
            assert all(k1.x < k2.x for k1, k2 in zip(kids, kids[1:])), "children in order, left to right"
            assert all(k.y > b.bottom for k in kids), "children are below their parent"
            assert kids[0].x <= b.x <= kids[-1].x, "a parent sits between its children"
            assert sum(k.n for k in kids) == b.n
    # no two boxes of the same level overlap
    for level in {b.y for b in lay.nodes}:
        row = sorted((b for b in lay.nodes if b.y == level), key=lambda b: b.x0)
        for left, right in zip(row, row[1:]):
            assert left.x1 <= right.x0
    # edge width grows with the samples that take the edge
    edges = sorted(lay.edges, key=lambda e: e.n)
    for e1, e2 in zip(edges, edges[1:]):
        assert e1.width <= e2.width
    assert len(lay.edges) == sum(len(tree.child_list(b.id)) for b in lay.nodes)
    # edge labels of siblings do not overlap (drawn centred on each edge's midpoint)
    for b in lay.nodes:
        mids = sorted(((e.x0 + e.x1) / 2, text_width(e.label, 11)) for e in lay.edges if e.parent == b.id)
        for (x1, w1), (x2, w2) in zip(mids, mids[1:]):
            assert x1 + w1 / 2 <= x2 - w2 / 2


def multiway_tree(seed: int) -> Tree:
    """A BRANCHES tree with multiway splits on random categorical data (long category names)."""
    rng = np.random.default_rng(seed)
    n = 80
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue", "a rather long category"], n),
            "size": rng.choice(["S", "M", "L"], n),
            "flag": rng.integers(0, 2, n),
        }
    )
    df["y"] = np.where(df["colour"].isin(["red", "blue"]) ^ (df["size"] == "L"), "p", "q")
    front = solve(df, "y", solver="branches", discretizer="none", sparsity=0.01, front=False, test_size=0)
    return front.trees[0].tree


@pytest.mark.parametrize("seed", range(4))
def test_multiway_layout_png_svg(seed):
    tree = multiway_tree(seed)
    assert tree.has_multiway
    check_layout(tree)
    lay = layout_tree(tree)
    labels = {e.label for e in lay.edges if tree.is_multi(e.parent)}
    assert labels <= {"red", "green", "blue", "a rather long category", "S", "M", "L"} and labels
    root = next(b for b in lay.nodes if b.id == 0)
    assert root.lines[0][0] in ("colour", "size") or not tree.is_multi(0)
    assert to_png(tree)[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("one branch per category" in line for line in (d.text or "" for d in ET.fromstring(to_svg(tree)).iter()))
    svg = ET.fromstring(to_svg(tree))
    texts = [t.text for t in svg.iter(f"{SVG_NS}text")]
    assert labels <= set(texts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 5), depth=st.integers(0, 4), cat=st.booleans())
def test_layout_invariants_on_random_trees(seed, n_classes, depth, cat):
    check_layout(random_tree(seed, n_classes, depth, cat))


def test_colours_follow_majority_class_and_purity():
    tree = random_tree(3, n_classes=3, depth=3)
    lay = layout_tree(tree)
    colors = class_colors(3)
    assert colors == list(PALETTE[:3])
    for b in lay.nodes:
        assert b.stroke == colors[int(tree.prediction[b.id])]
        fracs = [f for f, _ in b.distribution]
        assert sum(fracs) == pytest.approx(1.0)
    # a purer box is more saturated (further from white) than a less pure one of the same class
    by_class: dict = {}
    for b in lay.nodes:
        by_class.setdefault(b.stroke, []).append(b)
    for boxes in by_class.values():
        boxes.sort(key=lambda b: b.purity)
        whiteness = [sum(int(b.fill[i : i + 2], 16) for i in (1, 3, 5)) for b in boxes]
        assert all(w1 >= w2 for w1, w2 in zip(whiteness, whiteness[1:]))
    assert len(PALETTE) == len(class_colors(len(PALETTE)))
    assert class_colors(10)[8] == PALETTE[0]  # cycles beyond the palette


def test_bundled_font_has_the_comparison_glyphs():
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT_PATH), 40)

    def pixels(ch):
        img = Image.new("L", (60, 60), 0)
        ImageDraw.Draw(img).text((5, 5), ch, font=font, fill=255)
        return img.tobytes()

    notdef = pixels("\ue000")  # private-use code point: the font's "missing glyph" box
    for ch in "≤≠>=":
        assert pixels(ch) != notdef and any(pixels(ch)), ch
    assert (FONT_PATH.parent / "LICENSE.txt").is_file()


def test_png_is_valid_and_carries_provenance(iris_front):
    entry = iris_front.trees[-1]
    data = to_png(entry.tree, iris_front, entry)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(data))
    img.load()
    lay = layout_tree(entry.tree)
    assert img.width >= 2 * lay.width and img.height >= 2 * lay.height
    assert "iris" in img.text["Title"] and "uigreedy" in img.text["Description"]
    assert "max_depth=3" in img.text["Description"]
    # the image is not blank: node fills use the class colours
    colors = {c for _, c in img.getcolors(maxcolors=1 << 20)}
    assert (0x00, 0x72, 0xB2) in colors  # setosa's colour in the class bar


def test_png_scales_down_huge_trees_instead_of_failing():
    tree = random_tree(11, n_classes=4, depth=4)
    small = Image.open(io.BytesIO(to_png(tree, scale=1)))
    big = Image.open(io.BytesIO(to_png(tree, scale=2)))
    assert big.width == pytest.approx(2 * small.width, abs=2)


def test_svg_parses_and_shows_tests_in_original_units(iris_front):
    entry = iris_front.trees[-1]
    svg = to_svg(entry.tree, iris_front, entry)
    root = ET.fromstring(svg)
    nodes = root.findall(f".//{SVG_NS}g[@class='node']")
    assert len(nodes) == len(entry.tree.reachable())
    texts = [t.text for t in root.iter(f"{SVG_NS}text")]
    for k in entry.tree.reachable():
        if not entry.tree.is_leaf(k):
            assert entry.tree.node_text(k) in texts
    assert any("≤" in (t or "") for t in texts)
    desc = root.find(f"{SVG_NS}desc").text
    assert "dataset: iris" in desc and "solver: uigreedy" in desc
    # hover titles name the samples of every node
    titles = [n.find(f"{SVG_NS}title").text for n in nodes]
    assert all("samples:" in t for t in titles)


def test_categorical_tests_render_with_category_names():
    tree = random_tree(5, depth=3, categorical=True)
    svg = to_svg(tree)
    ET.fromstring(svg)
    assert "decision tree" in svg  # default title without a front


def test_single_leaf_tree_renders():
    tree = random_tree(1, depth=0)
    assert tree.n_splits == 0
    lay = layout_tree(tree)
    assert len(lay.nodes) == 1 and not lay.edges
    Image.open(io.BytesIO(to_png(tree))).load()
    ET.fromstring(to_svg(tree))


def test_png_and_svg_state_what_optimal_ranges_over():
    front = solve("iris", solver="murtree", discretizer="mid", n_bins=16, max_depth=2)
    entry = next(t for t in front.trees if t.optimal)
    claim = "optimality: trees marked proven are optimal over the 16 tests of MID"
    root = ET.fromstring(to_svg(entry.tree, front=front, entry=entry))
    texts = [t.text or "" for t in root.iter(f"{SVG_NS}text")]
    assert any(t.startswith(claim) for t in texts)  # the footer
    assert any(t.endswith("proven optimal over 16 MID tests") for t in texts)  # the subtitle
    assert claim in root.find(f"{SVG_NS}desc").text
    img = Image.open(io.BytesIO(to_png(entry.tree, front=front, entry=entry)))
    assert claim in img.text["Description"] and "proven optimal over 16 MID tests" in img.text["Description"]
    greedy = solve("iris", solver="cart", max_depth=2)
    desc = ET.fromstring(to_svg(greedy[2].tree, front=greedy, entry=greedy[2])).find(f"{SVG_NS}desc").text
    assert "no tree of this run is proven optimal" in desc and "not proven optimal" in desc


# -- the app's tree view (issue 16): left-to-right layout, collapse, explain a row, compare ----------------
def big_tree(depth: int, seed: int = 0) -> Tree:
    """A complete tree of ``depth`` levels (2**depth - 1 splits) whose tests partition random rows."""
    from treeexplorer.tree import OP_LE

    rng = np.random.default_rng(seed)
    n = 200 * 2**depth
    df = pd.DataFrame({c: rng.normal(size=n).round(3) for c in ("alpha", "beta", "gamma", "delta")})
    df["y"] = rng.integers(0, 3, n).astype(str)
    ds = load_dataset(df, "y", name="random")
    n_inner = 2**depth - 1
    col, val, tc, fc = [], [], [], []
    for i in range(2 * n_inner + 1):  # heap order: children of i are 2i+1 and 2i+2
        inner = i < n_inner
        col.append((i % 4) if inner else -1)
        val.append(round(float(rng.normal(scale=0.3)), 2) if inner else 0.0)
        tc.append(2 * i + 1 if inner else -1)
        fc.append(2 * i + 2 if inner else -1)
    skeleton = Tree(col, [OP_LE] * len(col), val, tc, fc, np.zeros((len(col), 3)), np.zeros(len(col)), ds.schema)
    counts = np.zeros((len(col), 3), dtype=np.int64)
    for i, leaf in enumerate(skeleton.apply(ds.X)):  # every node on the row's path counts it
        k = int(leaf)
        while True:
            counts[k, ds.y[i]] += 1
            if k == 0:
                break
            k = (k - 1) // 2
    return Tree(col, [OP_LE] * len(col), val, tc, fc, counts, counts.argmax(axis=1), ds.schema)


def overlapping(lay) -> bool:
    boxes = sorted(lay.nodes, key=lambda b: b.x0)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if b.x0 >= a.x1:
                break
            if b.y < a.bottom and a.y < b.bottom:
                return True
    return False


def test_a_31_split_tree_reads_at_11_px_in_a_1600_px_window():
    from treeexplorer.render.bokehview import MARGIN, READABLE_PX, VIEW_WIDTH, pick_orientation

    tree = big_tree(5)
    assert tree.n_splits == 31
    orientation, lay = pick_orientation(tree)
    assert orientation == "lr"  # top-down would need 5 px text
    assert 13 * VIEW_WIDTH / (lay.width + 2 * MARGIN) >= READABLE_PX
    assert not overlapping(lay) and len(lay.nodes) == 63
    for e in lay.edges:  # parent's right side to child's left side
        assert e.x0 == lay.node(e.parent).x1 and e.x1 == lay.node(e.child).x0
    # exports keep the top-down layout
    tb = layout_tree(tree)
    assert not overlapping(tb) and all(abs(e.x0 - tb.node(e.parent).x) < 1e-9 for e in tb.edges)


def test_collapsed_nodes_hide_their_subtree_and_count_it():
    from treeexplorer.render.layout import default_collapsed, hidden_splits

    tree = big_tree(6)
    folded = default_collapsed(tree)
    depth = tree.node_depth
    assert folded and all(depth[k] == 4 for k in folded)
    for orientation in ("tb", "lr"):
        lay = layout_tree(tree, orientation=orientation, collapsed=folded)
        assert not overlapping(lay)
        assert max(depth[b.id] for b in lay.nodes) == 4
        shown = sum(1 for b in lay.nodes if not b.leaf)
        assert shown + sum(b.hidden for b in lay.nodes) == tree.n_splits
        for b in lay.nodes:
            if b.id in folded:
                assert b.hidden == hidden_splits(tree, b.id) and f"+{b.hidden} splits" in b.lines[1][0]
    assert default_collapsed(big_tree(5)) == set()
    with pytest.raises(ValueError, match="orientation"):
        layout_tree(tree, orientation="up")


def test_tree_figure_collapses_on_toggle_and_outlines_an_explained_row():
    from treeexplorer.export import rules_lines
    from treeexplorer.render.bokehview import PATH_COLOR, TreeFigure
    from treeexplorer.ui.explain import explain_row, parse_row, parse_values

    tree = big_tree(4)
    fig = TreeFigure()
    fig.show(tree)
    assert len(fig.sources["boxes"].data["id"]) == 31
    child = tree.child_list(0)[0]
    fig.toggle(child)
    assert len(fig.sources["boxes"].data["id"]) == 31 - 14
    row = parse_values("alpha=0.1, beta=-0.2, gamma=0.3, delta=1.5", tree.schema)
    path, rule = explain_row(tree, row)
    assert path[0] == 0 and tree.is_leaf(path[-1]) and int(tree.apply(row[None])[0]) == path[-1]
    assert rule in rules_lines(tree) and f"[n={int(tree.counts[path[-1]].sum())}, " in rule
    fig.explain(path)  # expands a collapsed node on the path
    boxes = fig.sources["boxes"].data
    outlined = [k for k, s in zip(boxes["id"], boxes["stroke"]) if s == PATH_COLOR]
    assert sorted(outlined) == sorted(path)
    with pytest.raises(ValueError, match="give its value"):  # typed values that leave a tested column out
        explain_row(tree, *parse_row("beta=1", tree.schema))
    gap = parse_values("alpha=0.1, beta=-0.2, gamma=0.3, delta=missing", tree.schema)  # a gap follows its side
    assert explain_row(tree, gap, np.ones(4, dtype=bool))[0][-1] == int(tree.apply(gap[None])[0])
    for bad, msg in (("alpha=x", "not a number"), ("zeta=1", "no column 'zeta'"), ("alpha", "column=value")):
        with pytest.raises(ValueError, match=msg):
            parse_values(bad, tree.schema)


def test_compare_outlines_what_one_tree_has_and_the_other_not():
    from treeexplorer.ui.comparediagram import tree_differences

    a = big_tree(3)
    value = a.value.copy()
    value[2] += 0.5  # another threshold at the root's "no" child: it and everything below it differ
    b = Tree(a.column, a.op, value, a.true_child, a.false_child, a.counts, a.prediction, a.schema)
    below = {2, 5, 6, 11, 12, 13, 14}  # node 2 and its descendants (heap order)
    assert tree_differences(a, b) == (below, below)
    assert tree_differences(a, a) == (set(), set())
    leaves_b = b.prediction.copy()
    leaves_b[7] = (leaves_b[7] + 1) % 3  # a leaf (7: the first of depth 3) predicting another class
    c = Tree(a.column, a.op, a.value, a.true_child, a.false_child, a.counts, leaves_b, a.schema)
    assert a.is_leaf(7) and tree_differences(a, c) == ({7}, {7})


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_tree_view_keeps_a_narrow_tree_whole_with_its_root_centred(depth):
    # a tree narrower than the view used to be pushed against its right edge, half the card left empty
    from treeexplorer.render.bokehview import TreeFigure

    fig = TreeFigure()
    lopsided = solve(load_dataset("iris"), solver="cart", max_depth=depth + 1).trees[-1].tree
    for complete, tree in ((True, big_tree(depth)), (False, lopsided)):
        fig.show(tree)
        boxes = fig.sources["boxes"].data
        xr = fig.figure.x_range
        assert xr.start <= min(boxes["left"]) and max(boxes["right"]) <= xr.end
        root = boxes["id"].index(0)
        root_x = (boxes["left"][root] + boxes["right"][root]) / 2
        room_left, room_right = min(boxes["left"]) - xr.start, xr.end - max(boxes["right"])
        # centred, unless centring would push one side of the tree out of view
        assert abs(root_x - (xr.start + xr.end) / 2) < 1 or min(room_left, room_right) < 13
        if complete:  # symmetric: the root is the tree's middle
            assert abs(root_x - (xr.start + xr.end) / 2) < 1
