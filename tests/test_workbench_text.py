"""Issue 16, "Progress and text": short thresholds, class labels that read as classes, the class legend,
a front CSV that pandas reads, the CLI's whole-front export, the MID anytime front without dominated trees,
and run colours/markers that stay apart."""

import json

import numpy as np
import pandas as pd
import pytest
from treeexplorer.solvers import RawFront, RawSolution, RawTree

import treeexplorer as tx
from treeexplorer.export import rules_lines
from treeexplorer.registry import Param, SolverSpec, register, unregister
from treeexplorer.render import layout_tree, legend_html
from treeexplorer.schema import OP_LE, Column, Schema, format_number
from treeexplorer.tree import shorten_thresholds, shortest_between

# -- short thresholds --------------------------------------------------------------------------------------------


def test_shortest_between_examples():
    # the example: a split at 0.27267714 between training values 0.2726 and 0.2728 reads 0.2727
    assert shortest_between(0.2726, 0.2728, 0.27267714) == 0.2727
    assert shortest_between(5.8, 6.1, 5.95) == 6.0
    assert shortest_between(2.4, 2.5, 2.45) == 2.45  # strictly between: not 2.4 (a training value)
    assert shortest_between(-0.5, -0.25, -0.375) == -0.4
    assert shortest_between(150.0, 260.0, 205.0) == 205.0  # 200 is no shorter than the exact value
    assert shortest_between(50.0, 1000.0, 525.5) == 500.0
    # no neighbour on one side: the exact value stays
    assert shortest_between(np.nan, 3.0, 2.5) == 2.5 and shortest_between(3.0, np.nan, 3.5) == 3.5


def test_shortest_between_is_strict_shortest_and_nearest_on_random_gaps():
    rng = np.random.default_rng(7)
    for _ in range(400):
        scale = 10.0 ** rng.integers(-6, 7)
        lo = float(rng.normal() * scale)
        hi = lo + float(rng.exponential() * scale * 10.0 ** rng.integers(-8, 1))
        if not lo < hi:
            continue
        t = lo + (hi - lo) / 2
        d = shortest_between(lo, hi, t)
        assert lo < float(format_number(d)) < hi or d == t, (lo, hi, d)
        assert len(format_number(d)) <= len(format_number(t))
        # no decimal with fewer digits after the point lies strictly inside (lo, hi)
        places = len(format_number(d).partition(".")[2]) if "e" not in format_number(d) else None
        if places and d != t:
            q = 10.0 ** -(places - 1)
            k = np.floor(lo / q) + 1
            assert not (k * q < hi and lo < k * q), (lo, hi, d)


def _numeric_toy():
    """Train rows around f8 = 0.2727 and held-out rows: the split of the issue's example."""
    x = np.array([0.1, 0.2, 0.2726, 0.2728, 0.3, 0.9, 0.27265, 0.95])
    other = np.arange(len(x), dtype=float)
    y = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    return pd.DataFrame({"f0": other, "f8": x, "label": y})


@pytest.fixture
def stump_solver():
    """A registered solver returning the stump ``f8 <= 0.27267714`` (and a leaf), no kernel to compile."""

    def run(X, y, n_classes, control, depth=1):
        counts = np.bincount(y, minlength=n_classes)
        stump = RawTree([1, -1, -1], [0.27267714, 0, 0], [1, -1, -1], [2, -1, -1], np.zeros((3, n_classes)), [0, 0, 1])
        return RawFront([RawSolution(RawTree.leaf(counts), True), RawSolution(stump, True)], "toy")

    register(SolverSpec("toy_text", "numeric", run, (Param("depth", "int", 1, "unused", (1, 3)),)))
    yield "toy_text"
    unregister("toy_text")


def test_thresholds_shown_short_everywhere_and_exact_in_json(stump_solver):
    df = _numeric_toy()
    train, test = df.iloc[:6], df.iloc[6:]
    front = tx.solve(train, "label", solver=stump_solver, test=test)
    tree = front.trees[-1].tree
    assert tree.value[0] == 0.27267714
    # neighbours over train and held-out rows: 0.2726 and 0.27265 below, 0.2728 above -> (0.27265, 0.2728)
    assert tree.shown_threshold(0) == 0.2727
    assert tree.node_text(0) == "f8 ≤ 0.2727"
    assert rules_lines(tree)[0].startswith("IF f8 <= 0.2727 THEN")
    lay = layout_tree(tree)
    assert lay.node(0).lines[0][0] == "f8 ≤ 0.2727"
    assert "split at 0.27267714" in lay.node(0).details["test"]  # hover gives the exact split
    svg = tx.render.to_svg(tree, front, front.trees[-1])
    assert ">f8 ≤ 0.2727</text>" in svg and "0.27267714</text>" not in svg  # the exact split only in hover
    d = json.loads(front.to_json())
    node = d["trees"][-1]["tree"]["nodes"][0]
    assert node["test"] == [1, "<=", 0.27267714] and node["display"] == "0.2727"
    back = tx.Front.from_dict(d).trees[-1].tree
    assert back.shown_threshold(0) == 0.2727 and back.value[0] == 0.27267714
    # rules files and pictures say so; a tree shown with its exact thresholds does not
    note = "thresholds: shown as the shortest decimal between neighbouring values"
    assert note in tx.rules_text(tree, front, front.trees[-1]) and note in svg
    assert note not in tx.rules_text(_numeric_class_tree())
    # the shown rule classifies every row of the run as the tree does
    X = np.c_[df["f0"], df["f8"]]
    assert ((X[:, 1] <= 0.2727) == (tree.apply(X) == tree.true_child[0])).all()


def test_shown_thresholds_classify_every_run_row_like_the_tree():
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(300, 3)) * [1.0, 100.0, 0.001], 5)
    schema = Schema(tuple(Column(f"c{j}", "numeric") for j in range(3)), "y", ("a", "b"))
    trees = []
    for j in range(3):
        xs = np.unique(X[:, j])
        for i in rng.choice(len(xs) - 1, 20, replace=False):
            t = xs[i] + (xs[i + 1] - xs[i]) * rng.uniform(0.01, 0.99)
            tree = tx.Tree(
                [j, -1, -1], [OP_LE, 0, 0], [t, 0, 0], [1, -1, -1], [2, -1, -1], np.zeros((3, 2)), [0, 0, 1], schema
            )
            trees.append(tree)
    shorten_thresholds(trees, X[:200], X[200:])
    for tree in trees:
        j, t, d = tree.column[0], tree.value[0], tree.shown_threshold(0)
        assert ((X[:, j] <= d) == (X[:, j] <= t)).all()
        assert len(format_number(d)) <= len(format_number(t))
        below, above = X[X[:, j] <= t, j].max(), X[X[:, j] > t, j].min()
        assert below < d < above or d == t


def test_trees_without_display_values_show_the_exact_threshold():
    schema = Schema((Column("f8", "numeric"),), "y", ("a", "b"))
    tree = tx.Tree(
        [0, -1, -1], [OP_LE, 0, 0], [0.27267714, 0, 0], [1, -1, -1], [2, -1, -1], np.zeros((3, 2)), [0, 0, 1], schema
    )
    assert tree.node_text(0) == "f8 ≤ 0.27267714"
    assert "display" not in tree.to_dict()["nodes"][0]


# -- class labels and legend -------------------------------------------------------------------------------------


def _numeric_class_tree():
    schema = Schema((Column("x", "numeric"),), "y", (0, 1))
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 0, 1, 1, 1])
    tree = tx.Tree(
        [0, -1, -1], [OP_LE, 0, 0], [2.5, 0, 0], [1, -1, -1], [2, -1, -1], np.zeros((3, 2)), [1, 0, 1], schema
    )
    return tree.with_counts(X, y)


def test_numeric_class_labels_read_as_classes():
    tree = _numeric_class_tree()
    lines = rules_lines(tree)
    assert lines[0] == "IF x <= 2.5 THEN class 0  [n=2, 100%]"
    lay = layout_tree(tree)
    root = lay.node(0)
    assert root.lines[1][0] == "n=5 · class 1 60%"
    assert lay.node(1).lines[0] == ("class 0", True)
    assert root.details["majority"] == "class 1 (60%)"
    assert root.details["classes"] == "class 0: 2, class 1: 3"
    assert [name for name, _ in lay.legend] == ["class 0", "class 1"]
    # JSON keeps the label itself
    assert tree.to_dict()["nodes"][1]["prediction"] == "0"
    # names that are words stay as they are; numeric strings read as classes too
    words = Schema((Column("x", "numeric"),), "y", ("setosa", "3", "nan"))
    assert [tx.tree.class_text(words, i) for i in range(3)] == ["setosa", "class 3", "nan"]


def test_class_legend_html_lists_every_class_with_its_colour():
    tree = _numeric_class_tree()
    html = legend_html(tree)
    colours = tx.render.class_colors(2)
    assert html.count("tx-swatch") == 2 and all(c in html for c in colours)
    assert "class 0" in html and "class 1" in html
    evil = Schema((Column("x", "numeric"),), "y", ("<b>", "a&b"))
    html = legend_html(evil, title=None)
    assert "&lt;b&gt;" in html and "a&amp;b" in html and "<b>" not in html


# -- the MID anytime front keeps its non-dominated trees -----------------------------------------------------------


def test_mid_anytime_front_keeps_the_non_dominated_trees(tmp_path):
    from treeexplorer.front import COMPLEXITY_MEASURES, Front, pareto_mask

    events = []
    front = tx.solve(
        "breast_cancer", solver="cart", discretizer="mid", mid_budget=30, test_size=0.3, progress=events.append
    )
    assert front.status == "done" and front.dominated  # the loop's inner runs overlap: some trees are beaten
    everyone = front.trees + front.dominated
    assert sorted(t.id for t in everyone) == list(range(len(everyone)))
    acc = [t.metrics["train_accuracy"] for t in everyone]
    on_some_front = np.zeros(len(everyone), dtype=bool)
    for x in COMPLEXITY_MEASURES:
        on_some_front |= pareto_mask([t.metrics[x] for t in everyone], acc)
    kept = {id(t) for t in front.trees}
    assert [id(t) in kept for t in everyone] == on_some_front.tolist()
    # every set-aside tree is beaten along every measure by a kept one
    for d in front.dominated:
        for x in COMPLEXITY_MEASURES:
            assert any(
                t.metrics[x] <= d.metrics[x] and t.metrics["train_accuracy"] >= d.metrics["train_accuracy"]
                for t in front.trees
            ), (d.id, x)
    # streamed partial fronts are trimmed the same way
    partials = [e["partial_front"] for e in events if e.get("phase") == "anytime"]
    assert partials and all(non_dominated(p) for p in partials)
    # the JSON keeps the others under "dominated"; a round trip keeps both lists
    path = tmp_path / "front.json"
    front.to_json(path)
    d = json.loads(path.read_text())
    assert len(d["trees"]) == len(front.trees) and len(d["dominated"]) == len(front.dominated)
    back = Front.from_json(path)
    assert [t.id for t in back.dominated] == [t.id for t in front.dominated]
    assert [t.metrics for t in back.trees] == [t.metrics for t in front.trees]
    # a damaged dominated list gets the one-line error of any damaged front
    d["dominated"][0]["splits"] = 99
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"dominated trees.*says splits=99"):
        Front.from_json(path)


def non_dominated(front) -> bool:
    from treeexplorer.front import non_dominated_mask

    return bool(non_dominated_mask(front.trees).all())


def test_fronts_of_other_runs_have_no_dominated_key(stump_solver):
    front = tx.solve(_numeric_toy(), "label", solver=stump_solver)
    assert front.dominated == [] and "dominated" not in front.to_dict()


# -- runs stay distinguishable on the Pareto plot ------------------------------------------------------------------


def test_runs_differ_in_marker_shape_and_label(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "browser"))
    import fakes  # registers uigreedy, a stand-in solver

    from treeexplorer.render.layout import PALETTE, RUN_MARKERS, run_marker
    from treeexplorer.ui.controller import Controller, RunSettings
    from treeexplorer.ui.paretofig import ParetoFigure

    fakes.register_fakes()
    c = Controller()
    try:
        assert c.load_bundled("iris")
        settings = RunSettings("uigreedy", {"max_depth": 2})
        runs = [c.run_sync(settings, timeout=20) for _ in range(5)]
        # repeated runs with equal settings carry distinct labels
        assert len({r.label for r in runs}) == 5
        # the palette's look-alikes (blue / sky blue, orange / vermilion: 4 apart) get different shapes
        assert (PALETTE[0], PALETTE[4]) == ("#0072B2", "#56B4E9")
        assert run_marker(runs[0].id) != run_marker(runs[4].id) and len(set(RUN_MARKERS)) == len(RUN_MARKERS)
        fig = ParetoFigure()
        fig.update(c.runs, whole=True)  # every point in place (no 0-split tree on the frame's edge)
        data = fig.points.data
        for run in runs:
            rows = [i for i, rid in enumerate(data["run_id"]) if rid == run.id]
            assert rows and {data["marker"][i] for i in rows} == {run_marker(run.id)}
            # fill still says proven (filled) or not (hollow)
            for i in rows:
                assert data["fill_alpha"][i] == (0.95 if run.front[data["tree"][i]].optimal else 0.15)
        entries = [e for e in fig.entries if not isinstance(e["key"], tuple)]
        assert [e["label"] for e in entries] == [r.label for r in runs]
        assert [(e["marker"], e["color"]) for e in entries] == [(run_marker(r.id), r.color) for r in runs]
        # a removed run takes its line and list entry along
        lines = [fig._lines[r.id] for r in runs]
        fig.update(c.runs[:2], whole=True)
        assert [line in fig.figure.renderers for line in lines] == [True, True, False, False, False]
        assert [e["key"] for e in fig.entries] == [r.id for r in runs[:2]]
    finally:
        c.close()
        fakes.unregister_fakes()
