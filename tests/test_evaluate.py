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
