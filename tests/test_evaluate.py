"""Front assembly evaluates every tree in one pass; the numbers equal a per-tree evaluation."""

import numpy as np
import pytest

import treeexplorer as tx
from treeexplorer.api import prepare
from treeexplorer.evaluate import count_trees, metrics_from_counts
from treeexplorer.front import compute_metrics


@pytest.mark.parametrize(
    "data, kw",
    [
        ("iris", {"solver": "cart"}),
        ("car", {"solver": "branches", "discretizer": "none", "sparsity": 0.01}),  # multiway nodes
        ("monks-1", {"solver": "murtree", "max_depth": 3}),
    ],
)
def test_one_pass_metrics_equal_per_tree_evaluation(data, kw):
    front = tx.solve(data, test_size=0.3, seed=1, **kw)
    prep = prepare(data, test_size=0.3, seed=1)
    assert len(front) > 1
    for t in front:
        assert t.metrics == compute_metrics(t.tree, prep.X_train, prep.y_train, prep.X_test, prep.y_test)
        assert np.array_equal(t.tree.counts, t.tree.with_counts(prep.X_train, prep.y_train).counts)


@pytest.mark.parametrize(
    "kw",
    [
        {"class_weight": "balanced"},
        {"class_weight": {"B": 3, "R": 0.5}, "costs": {("L", "R"): 4}},
    ],
)
def test_weighted_one_pass_scores_equal_a_row_by_row_count(kw):
    """The cost, balanced accuracy, recall and precision of a weighted run, counted in one pass, equal each
    tree's predictions summed row by row with the run's weights."""
    from treeexplorer.objective import Objective

    front = tx.solve("balance-scale", solver="cart", test_size=0.3, seed=1, **kw)  # 49 B, 288 L, 288 R
    prep = prepare("balance-scale", test_size=0.3, seed=1)
    weights = Objective.build(**kw).resolve(prep.schema, prep.y_train, None, prep.y_test, None)
    assert not weights.plain and len(front) > 1
    for t in front:
        ref = compute_metrics(t.tree, prep.X_train, prep.y_train, prep.X_test, prep.y_test, weights)
        assert t.metrics.keys() == ref.keys()
        for key, value in ref.items():
            assert t.metrics[key] == (value if not isinstance(value, float) else pytest.approx(value)), key


def test_chunks_threads_and_progress_cover_every_row(monkeypatch):
    import treeexplorer.evaluate as ev

    monkeypatch.setattr(ev, "_CHUNK_ROWS", 7)  # many chunks on a small table
    front = tx.solve("iris", solver="cart")
    prep = prepare("iris")
    seen = []
    counts, tests = count_trees([t.tree for t in front], prep.X_train, prep.y_train, 3, lambda d, n: seen.append(d))
    assert seen[-1] == len(prep.y_train) and seen == sorted(seen) and len(seen) == -(-len(prep.y_train) // 7)
    for t, c, s in zip(front, counts, tests):
        m = metrics_from_counts(t.tree, c, s, len(prep.y_train))
        assert m == t.tree.evaluate(prep.X_train, prep.y_train)


def test_no_trees_and_no_rows():
    counts, tests = count_trees([], np.zeros((0, 2)), np.zeros(0, dtype=np.int64), 2)
    assert counts == [] and len(tests) == 0
    tree = tx.solve("iris", solver="cart").trees[0].tree
    assert metrics_from_counts(tree, np.zeros_like(tree.counts), 0, 0)["accuracy"] is None


def test_a_big_set_is_counted_in_groups_and_equals_the_per_tree_slow_path():
    # 5,000 depth-3 trees: several groups of trees counted on their own (evaluate._GROUP_NODES), whole-array
    # metrics; a sample spread over the set equals the per-tree evaluation, and the stopped count keeps exact
    # counts of the trees it keeps
    import treeexplorer.evaluate as ev
    from treeexplorer.data import frame_from_arrays
    from treeexplorer.evaluate import count_forest_stoppable, forest_shape, spread

    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(300, 7)).astype(float)
    y = (X[:, 0].astype(int) ^ (rng.random(300) < 0.2)).astype(int)
    data = frame_from_arrays(X, y)
    front = tx.rashomon(data, "y", max_depth=3, k=5000, discretizer="none", test_size=0.3, seed=2)
    prep = prepare(data, "y", test_size=0.3, seed=2)
    trees = [t.tree for t in front.trees]
    assert len(trees) == 5000 and sum(t.n_nodes for t in trees) > 3 * ev._GROUP_NODES
    shape = forest_shape(trees)
    assert shape["splits"].tolist() == [t.n_splits for t in trees]
    assert shape["leaves"].tolist() == [t.n_leaves for t in trees]
    assert shape["depth"].tolist() == [t.depth for t in trees]
    for i in spread(len(front.trees), 200):
        t = front.trees[i]
        assert t.metrics == compute_metrics(t.tree, prep.X_train, prep.y_train, prep.X_test, prep.y_test)
        assert np.array_equal(t.tree.counts, t.tree.with_counts(prep.X_train, prep.y_train).counts)
        assert t.metrics["train_errors"] == t.info["errors"]  # the engine's own count
    # a stop at once: the first 50 trees (a ranked set's prefix) counted on every row, exactly
    counts, bases, tests, kept = count_forest_stoppable(
        trees, prep.X_train, prep.y_train, 2, stop=lambda: True, keep=50, prefix=True
    )
    assert kept == list(range(50)) and len(bases) == 51
    for i in kept:
        assert np.array_equal(counts[bases[i] : bases[i + 1]], trees[i].counts)
        assert tests[i] == round(front.trees[i].metrics["avg_tests"] * len(prep.y_train))


def test_a_ranked_set_uses_the_engine_counts_only_when_a_sample_agrees():
    from treeexplorer.assemble import _engine_counts_hold, fill_metrics
    from treeexplorer.data import frame_from_arrays
    from treeexplorer.evaluate import forest_shape, spread

    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(120, 5)).astype(float)
    y = (X[:, 1].astype(int) | (rng.random(120) < 0.3)).astype(int)
    data = frame_from_arrays(X, y)
    front = tx.rashomon(data, "y", max_depth=2, k=400, discretizer="none", test_size=0.25, seed=0)
    prep = prepare(data, "y", test_size=0.25, seed=0)
    trees = [t.tree for t in front.trees]
    assert _engine_counts_hold(trees, forest_shape(trees), prep, 2)
    # one tree of the sample with a count moved between two leaves: the engine's counts are not used
    bad = list(trees)
    i = spread(len(bad), 64)[5]
    counts = bad[i].counts.copy()
    leaf = bad[i].leaves[0]
    counts[leaf] = counts[leaf][::-1]
    bad[i] = bad[i].with_counts(counts=counts)
    assert not _engine_counts_hold(bad, forest_shape(bad), prep, 2)
    # and the metrics then come from counting: the same numbers as the set's
    entries = [type(t)(t.id, b, t.optimal, {}, dict(t.info)) for t, b in zip(front.trees, bad)]
    filled = fill_metrics(entries, prep, None, ranked=True)
    assert [e.metrics for e in filled] == [t.metrics for t in front.trees]
    assert np.array_equal(filled[i].tree.counts, front.trees[i].tree.counts)
