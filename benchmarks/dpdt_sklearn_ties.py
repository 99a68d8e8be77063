"""Most accurate depth-3 tree of DPDT's MDP when every state's tests come from scikit-learn's CART.

The reference figures of ``bench_dpdt.py --part ref`` come from the public DPDT code, which fits
scikit-learn's ``DecisionTreeClassifier(max_leaf_nodes=32, random_state=42)`` at every state.  Among
splits with exactly the same impurity decrease scikit-learn keeps the first it meets in a random feature
order, so the tests proposed at small states, hence the MDP and its best tree, depend on the seed.  This
script solves that MDP for α = 0 by plain recursion (slow, pure Python) for several seeds, to compare
with our deterministic CART (lowest feature first)::

    python benchmarks/dpdt_sklearn_ties.py page --seeds 42 0 1 7 [--data DIR]

Needs ``<data>/quantbnb/`` (``--data DIR``, ``$TREEEXPLORER_DATASETS`` or ``benchmarks/data/``); skips when absent.
"""

from __future__ import annotations

import argparse
import time

import bench_dpdt
import numpy as np
from bench_dpdt import load
from benchdata import collection_dir
from sklearn.tree import DecisionTreeClassifier
from treeexplorer.solvers.dpdt import dpdt


def best_errors(X, y, max_depth, leaves, seed):
    """Fewest training errors of a policy of the MDP whose tests are scikit-learn CART's split nodes."""

    def value(rows, d):
        e = len(rows) - int(np.bincount(y[rows]).max())
        if e == 0 or d >= max_depth or len(rows) < 2:
            return e
        clf = DecisionTreeClassifier(max_leaf_nodes=leaves, random_state=seed).fit(X[rows], y[rows])
        split = clf.tree_.feature >= 0
        for f, t in set(zip(clf.tree_.feature[split], clf.tree_.threshold[split])):
            go = X[rows, f] <= t
            if go.all() or not go.any():
                continue
            e = min(e, value(rows[go], d + 1) + value(rows[~go], d + 1))
        return e

    return value(np.arange(len(y)), 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--seeds", nargs="+", type=int, default=[42, 0, 1])
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--leaves", type=int, default=32)
    parser.add_argument("--data", default=None, help="datasets root holding quantbnb/")
    args = parser.parse_args()
    bench_dpdt.DATA = collection_dir(args.data, "quantbnb", "dpdt_sklearn_ties")
    if bench_dpdt.DATA is None:
        return
    print(f"{'set':9} {'n':>6} {'ours':>6} " + " ".join(f"{'sk' + str(s):>7}" for s in args.seeds) + "  (train errors)")
    for name in args.sets:
        data = load(name)
        if data is None:
            print(f"{name:9} skipped (not in {bench_dpdt.DATA})")
            continue
        X, y = data[:2]
        ours = dpdt(X, y, max_depth=args.depth, generator="cart_leaves", cart_leaves=args.leaves, alpha=0.0)
        t0 = time.perf_counter()
        sk = [best_errors(X, y, args.depth, args.leaves, s) for s in args.seeds]
        print(
            f"{name:9} {len(y):6d} {ours.solutions[0].info['train_errors']:6d} "
            + " ".join(f"{e:7d}" for e in sk)
            + f"  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
