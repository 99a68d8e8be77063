"""What analysts ask of a chosen tree: its confusion matrix, per-class precision and recall, and the features it
uses with their importance.

Everything here reads one :class:`~treeexplorer.tree.Tree` and the encoded rows of a split (``Prepared``'s
``X_train``/``y_train`` or ``X_test``/``y_test``); the app's diagnostics view, the API and tests share it.

>>> import treeexplorer as tx
>>> from treeexplorer.api import prepare
>>> prep = prepare("iris", test_size=0.25, seed=0)  # the split solve() makes with the same settings
>>> front = tx.solve("iris", solver="cart", max_depth=2, test_size=0.25, seed=0)
>>> tree = front.trees[-1].tree
>>> int(confusion_matrix(tree, prep.X_train, prep.y_train).sum()) == len(prep.y_train)
True
"""

from __future__ import annotations

import numpy as np

from treeexplorer.tree import Tree

__all__ = ["confusion_matrix", "class_report", "feature_importance"]

IMPORTANCE_KINDS = ("error", "impurity")


def confusion_matrix(tree: Tree, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Counts of rows by true class (rows) and predicted class (columns), in class-code order.

    Parameters
    ----------
    tree : Tree
    X : ndarray of shape (n_rows, n_features)
        Encoded feature matrix (as in ``Prepared``).
    y : ndarray of shape (n_rows,)
        Class codes.

    Returns
    -------
    ndarray of shape (n_classes, n_classes), int64
    """
    y = np.asarray(y, dtype=np.int64)
    k = tree.n_classes
    if len(y) == 0:
        return np.zeros((k, k), dtype=np.int64)
    pred = tree.predict_codes(X)
    return np.bincount(y * k + pred, minlength=k * k).reshape(k, k).astype(np.int64)


def class_report(matrix: np.ndarray, names=None) -> list[dict]:
    """Per-class support, precision, recall and F1 from a confusion matrix (rows true, columns predicted).

    Precision is ``None`` for a class the tree never predicts, recall ``None`` for a class with no rows
    (an undefined ratio is not shown as 0).

    Returns
    -------
    list of dict
        One per class: ``class``, ``support``, ``predicted``, ``correct``, ``precision``, ``recall``, ``f1``.
    """
    m = np.asarray(matrix, dtype=np.int64)
    names = list(names) if names is not None else [str(i) for i in range(len(m))]
    rows = []
    for i, name in enumerate(names):
        correct, support, predicted = int(m[i, i]), int(m[i].sum()), int(m[:, i].sum())
        precision = correct / predicted if predicted else None
        recall = correct / support if support else None
        f1 = (
            2 * precision * recall / (precision + recall)
            if precision is not None and recall is not None and precision + recall > 0
            else None
        )
        rows.append(
            {
                "class": name,
                "support": support,
                "predicted": predicted,
                "correct": correct,
                "precision": precision,
                "recall": recall,
                "f1": f1,
            }
        )
    return rows


def _node_loss(counts: np.ndarray, kind: str) -> np.ndarray:
    n = counts.sum(axis=1).astype(np.float64)
    if kind == "error":  # rows a leaf here would misclassify
        return n - counts.max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # n x gini impurity (weighted by rows)
        p = np.where(n[:, None] > 0, counts / np.maximum(n, 1)[:, None], 0.0)
    return n * (1.0 - (p**2).sum(axis=1))


def feature_importance(tree: Tree, kind: str = "error") -> list[dict]:
    """Features the tree tests, with how much their splits reduce the training loss.

    Parameters
    ----------
    tree : Tree
        Its stored training counts are used (no data needed).
    kind : {"error", "impurity"}
        ``error``: training errors removed (a node's errors as a leaf minus its children's); ``impurity``:
        decrease of row-weighted Gini impurity (scikit-learn's ``feature_importances_`` before normalising).

    Returns
    -------
    list of dict
        ``feature``, ``splits`` (nodes testing it), ``decrease`` (errors, or weighted Gini) and ``share``
        (of the total decrease; 0 when nothing decreases), most important first; features the tree does not
        use are left out.
    """
    if kind not in IMPORTANCE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(IMPORTANCE_KINDS)}, got {kind!r}")
    loss = _node_loss(tree.counts, kind)
    names = tree.schema.feature_names
    by_col: dict[int, list] = {}
    for k in tree.reachable():
        kids = tree.child_list(int(k))
        if not kids:
            continue
        gain = float(loss[k] - sum(loss[c] for c in kids))
        entry = by_col.setdefault(int(tree.column[k]), [0, 0.0])
        entry[0] += 1
        entry[1] += max(gain, 0.0)  # float noise of equal children must not read as a negative importance
    total = sum(v[1] for v in by_col.values())
    rows = [
        {
            "feature": names[c] if 0 <= c < len(names) else f"column {c}",
            "splits": n,
            "decrease": int(round(d)) if kind == "error" else d,
            "share": d / total if total > 0 else 0.0,
        }
        for c, (n, d) in by_col.items()
    ]
    return sorted(rows, key=lambda r: (-r["share"], -r["splits"], r["feature"]))
