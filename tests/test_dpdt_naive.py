"""DPDT against a slow, obviously-correct reference of its MDP (Kohler, Akrour & Preux).

The reference below specifies what :func:`solvers.dpdt.dpdt` computes with the ``cart`` and
``cart_leaves`` generators.  It has none of the solver's engineering (no last-depth shortcut, no hull
arithmetic inside the induction, no shared sorting, no numba):

* a state is (training rows, depth); the root holds every row at depth 0; the horizon is ``max_depth``;
* at a state of depth < ``max_depth`` holding at least two rows of more than one class, the actions are
  the leaf (predict the majority class) and the tests ``x[f] <= t`` of the split nodes of a CART grown on
  the state's rows only (depth K for ``cart``, L leaves grown best-first for ``cart_leaves``); any other
  state is a leaf;
* a test sends each row of the state to the left (``x[f] <= t``) or right child state at depth + 1, so a
  test at depth ``max_depth - 1`` leads to two leaves;
* a tree below a state costs ``T`` = tests taken summed over its rows and ``E`` = misclassified rows; at
  trade-off α ≥ 0 it is worth ``E + α·T`` (over n rows: error rate + α · expected tests per sample), so
  ``V(s, α) = min(leaf errors of s, min over tests of α·|s| + V(left, α) + V(right, α))``.

The reference enumerates the exact Pareto set of the achievable (T, E) pairs of every state by recursion:
the leaf ``(0, errors)`` united with, for every test, the pairwise sums of the two children's sets plus
``|s|`` tests.  ``V(root, ·)`` is the lower envelope of the root's lines ``E + α·T``: the lower convex hull
of its points.  The solver must return exactly one tree per hull vertex, each a policy of the reference MDP
worth what it reports, with the α interval between the slopes of the vertex's two hull edges.

The CART generator is pure numpy with exact split comparisons.  It equals scikit-learn's
DecisionTreeClassifier except where two splits have exactly the same impurity decrease: scikit-learn then
keeps one of them (the first it meets in a random feature order, as its floating-point arithmetic ranks
them), the reference the lowest feature, then the lowest threshold (the rule the docstring of
``solvers._kernels.cart`` states).  Even with continuous, all-distinct values such ties are common in the
small states of the MDP (two rows of different classes: every feature separates them), and a different
test at a state changes the MDP, so scikit-learn itself cannot be the oracle; the
``test_reference_cart_*`` tests check the reference CART against it instead.
"""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier
from treeexplorer.solvers import predict_raw
from treeexplorer.solvers.dpdt import dpdt

# ---------------------------------------------------------------------------------------------------
# Reference: the tests-generating function (CART on a state's rows, Gini)
# ---------------------------------------------------------------------------------------------------


def leaf_errors(labels):
    """Misclassified rows when a leaf predicts the majority class of ``labels``."""
    return len(labels) - int(np.bincount(labels).max())


def can_split(y, rows):
    return len(rows) >= 2 and leaf_errors(y[rows]) > 0


def midpoint(lo, hi):
    """Threshold between two consecutive distinct values (scikit-learn's: the lower value when the
    midpoint rounds up to the upper one)."""
    t = lo / 2.0 + hi / 2.0
    return lo if t == hi else t


def best_split(X, y, rows, n_classes):
    """CART's split of ``rows``: the test ``x[f] <= t`` with the largest Gini proxy
    ``Σ_c left_c² / n_left + Σ_c right_c² / n_right`` (the largest impurity decrease), ``t`` between two
    consecutive distinct values; exact ties go to the lowest feature, then the lowest threshold.

    Returns ``(proxy as an exact fraction, (f, t), left rows, right rows)``, or None without a split.
    """
    m = len(rows)
    total = np.bincount(y[rows], minlength=n_classes)
    n_left = np.arange(1, m)
    n_right = m - n_left
    best = None
    for f in range(X.shape[1]):
        order = rows[np.argsort(X[rows, f], kind="stable")]
        x = X[order, f]
        left = np.cumsum(np.eye(n_classes, dtype=np.int64)[y[order]], axis=0)[:-1]  # first i+1 rows go left
        right = total - left
        num = (left**2).sum(axis=1) * n_right + (right**2).sum(axis=1) * n_left
        den = n_left * n_right
        # num / den ranks the splits exactly: two different fractions with denominators <= m²/4 differ by
        # at least 16 / m⁴, far more than the rounding of one division, and equal ones round equally
        proxy = np.where(x[1:] > x[:-1], num / den, -np.inf)
        i = int(np.argmax(proxy))  # the first maximum: the lowest threshold
        if proxy[i] == -np.inf:
            continue  # constant feature
        value = Fraction(int(num[i]), int(den[i]))
        if best is None or value > best[0]:  # strictly better only: ties keep the lower feature
            best = (value, (f, midpoint(x[i], x[i + 1])), order[: i + 1], order[i + 1 :])
    return best


def cart_tests(X, y, rows, generator, k):
    """Tests ``(feature, threshold)`` proposed at a state: the split nodes of a CART grown on its rows.

    ``cart``: grown depth-first to depth ``k``; every node of two or more rows of several classes is split.
    ``cart_leaves``: grown best-first to ``k`` leaves; the next node split is the open one with the largest
    ``n_node · impurity decrease`` (scikit-learn's weighted improvement up to the constant total rows),
    ties to the node created first (the children of a split are created left, then right).
    """
    n_classes = int(y.max()) + 1
    tests = set()
    if generator == "cart":
        stack = [(rows, 0)]
        while stack:
            node, depth = stack.pop()
            split = best_split(X, y, node, n_classes) if depth < k and can_split(y, node) else None
            if split is not None:
                _, test, left, right = split
                tests.add(test)
                stack += [(left, depth + 1), (right, depth + 1)]
        return tests

    assert generator == "cart_leaves"

    def open_node(node):
        """(gain, test, left rows, right rows) of a new node; None if it cannot be split."""
        split = best_split(X, y, node, n_classes) if can_split(y, node) else None
        if split is None:
            return None
        proxy, test, left, right = split
        # Gini: n · (impurity - weighted child impurities) = proxy - Σ_c count_c² / n
        gain = proxy - Fraction(int((np.bincount(y[node]) ** 2).sum()), len(node))
        return gain, test, left, right

    nodes = [open_node(rows)]  # in creation order; None once split or if it cannot be split
    for _ in range(k - 1):  # k leaves: k - 1 splits
        splittable = [i for i, node in enumerate(nodes) if node is not None]
        if not splittable:
            break
        i = max(splittable, key=lambda i: nodes[i][0])  # max keeps the first maximum: the oldest node
        _, test, left, right = nodes[i]
        nodes[i] = None
        tests.add(test)
        nodes += [open_node(left), open_node(right)]
    return tests


# ---------------------------------------------------------------------------------------------------
# Reference: the MDP, its exact Pareto sets and value function
# ---------------------------------------------------------------------------------------------------


def pareto(points):
    """Non-dominated (tests, errors) pairs, by increasing tests (so decreasing errors)."""
    front = []
    for t, e in sorted(set(points)):
        if not front or e < front[-1][1]:
            front.append((t, e))
    return front


def lower_hull(points):
    """Vertices of the lower-left convex hull of (tests, errors) points, by increasing tests: the points
    minimising ``E + α·T`` for some α ≥ 0 that are not on a segment between two others."""
    hull = []
    for t, e in pareto(points):
        while len(hull) >= 2:  # drop the last vertex while on or above the segment before it -> (t, e)
            (t0, e0), (t1, e1) = hull[-2], hull[-1]
            if (e1 - e0) * (t - t1) >= (e - e1) * (t1 - t0):
                hull.pop()
            else:
                break
        hull.append((t, e))
    return hull


class ReferenceMDP:
    """DPDT's MDP on ``(X, y)``, explored by plain memoised recursion (see the module docstring).

    A state is ``(rows, depth)`` with ``rows`` a sorted tuple of row indices.  The weighted objective
    (``w``: whole row weights, ``C``: a whole cost matrix ``C[true, predicted]``, with the ``exhaustive``
    generator: every threshold): a leaf costs ``min_p sum_i w_i C[y_i, p]`` and a test the weight of its rows.
    """

    def __init__(self, X, y, max_depth, generator, k, w=None, C=None):
        self.X, self.y, self.max_depth, self.generator, self.k = X, y, max_depth, generator, k
        n_classes = int(y.max()) + 1
        self.w = [1] * len(y) if w is None else [int(v) for v in w]
        self.C = 1 - np.eye(n_classes, dtype=np.int64) if C is None else np.asarray(C, dtype=np.int64)
        self.plain = w is None and C is None
        assert (w is None and C is None) or generator == "exhaustive", "weights: the exhaustive generator only"
        self.root = (tuple(range(len(y))), 0)
        self._tests = {}  # rows -> proposed tests (the generator does not depend on the depth)
        self._children = {}  # (rows, test) -> (left rows, right rows)
        self._pareto = {}  # state -> its Pareto set

    def leaf(self, rows):
        """The least cost of a leaf holding ``rows`` (misclassified rows when unweighted)."""
        if self.plain:
            return leaf_errors(self.y[list(rows)])
        return min(sum(self.w[r] * int(self.C[self.y[r], p]) for r in rows) for p in range(self.C.shape[0]))

    def size(self, rows):
        """The tests a test at a state takes: its rows' weight (its rows when unweighted)."""
        return len(rows) if self.plain else sum(self.w[r] for r in rows)

    def actions(self, rows, depth):
        """Tests available at a state; none when it can only be a leaf."""
        if depth >= self.max_depth or len(rows) < 2 or self.leaf(rows) == 0:
            return set()
        if rows not in self._tests:
            if self.generator == "exhaustive":
                values = [np.unique(self.X[list(rows), f]) for f in range(self.X.shape[1])]
                tests = {(f, midpoint(a, b)) for f, v in enumerate(values) for a, b in zip(v[:-1], v[1:])}
            else:
                tests = cart_tests(self.X, self.y, np.array(rows), self.generator, self.k)
            self._tests[rows] = tests
        return self._tests[rows]

    def children(self, rows, test):
        """Rows of the left and right child states."""
        if (rows, test) not in self._children:
            f, t = test
            left = tuple(r for r in rows if self.X[r, f] <= t)
            right = tuple(r for r in rows if self.X[r, f] > t)
            assert left and right, "a proposed test sends rows both ways"
            self._children[rows, test] = left, right
        return self._children[rows, test]

    def pareto(self, rows, depth):
        """Pareto set of (tests, errors) over every policy of the sub-MDP rooted at state (rows, depth)."""
        if (rows, depth) not in self._pareto:
            points = [(0, self.leaf(rows))]
            for test in self.actions(rows, depth):
                left, right = self.children(rows, test)
                for tl, el in self.pareto(left, depth + 1):
                    for tr, er in self.pareto(right, depth + 1):
                        points.append((self.size(rows) + tl + tr, el + er))
            self._pareto[rows, depth] = pareto(points)
        return self._pareto[rows, depth]

    def value(self, alpha, rows, depth, memo):
        """Bellman's ``V(s, α) = min(leaf errors, min over tests of α·|s| + V(left, α) + V(right, α))``."""
        if (rows, depth) not in memo:
            best = Fraction(self.leaf(rows))
            for test in self.actions(rows, depth):
                left, right = self.children(rows, test)
                best = min(
                    best,
                    alpha * self.size(rows)
                    + self.value(alpha, left, depth + 1, memo)
                    + self.value(alpha, right, depth + 1, memo),
                )
            memo[rows, depth] = best
        return memo[rows, depth]

    def budget(self, rows, depth, b, memo):
        """MurTree's recursion in the MDP: the smallest ``(errors, tests)`` (lexicographic) over the policies
        below state (rows, depth) with at most ``b`` splits."""
        if (rows, depth, b) not in memo:
            best = (self.leaf(rows), 0)
            if b > 0:
                for test in self.actions(rows, depth):
                    left, right = self.children(rows, test)
                    for bl in range(b):
                        el, tl = self.budget(left, depth + 1, bl, memo)
                        er, tr = self.budget(right, depth + 1, b - 1 - bl, memo)
                        best = min(best, (el + er, self.size(rows) + tl + tr))
            memo[rows, depth, b] = best
        return memo[rows, depth, b]

    def states_per_depth(self):
        """Distinct states at each depth < max_depth, as the solver's ``stats["states_per_depth"]`` (after
        ``root_hull``: the states the recursion met)."""
        counts = [0] * self.max_depth
        for _, depth in self._pareto:
            if depth < self.max_depth:
                counts[depth] += 1
        while counts and counts[-1] == 0:
            counts.pop()
        return counts

    def root_hull(self):
        return lower_hull(self.pareto(*self.root))

    def walk(self, tree):
        """Walk ``tree`` down the MDP from the root: every test must be an action of the state it is taken
        at.  Returns (total tests over rows, misclassified rows)."""
        tests = errors = 0
        stack = [(0, *self.root)]
        while stack:
            node, rows, depth = stack.pop()
            if tree.feature[node] < 0:
                errors += self.leaf(rows)
                continue
            test = (int(tree.feature[node]), float(tree.threshold[node]))
            assert test in self.actions(rows, depth), f"test {test} is not an action at depth {depth}"
            tests += self.size(rows)
            left, right = self.children(rows, test)
            stack += [(tree.left[node], left, depth + 1), (tree.right[node], right, depth + 1)]
        return tests, errors


# ---------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------


def random_data(seed, n=None, p=None, n_classes=None):
    """40-150 rows, 2-4 features, 2-3 classes by default; continuous float32-exact values (scikit-learn
    fits on float32) without duplicates in a column."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(40, 151))
    p = p or int(rng.integers(2, 5))
    n_classes = n_classes or int(rng.integers(2, 4))
    X = rng.normal(size=(n, p)).astype(np.float32).astype(np.float64)
    assert all(len(np.unique(X[:, f])) == n for f in range(p))
    score = X[:, 0] + 0.8 * X[:, 1] * X[:, -1] + 0.6 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    return X, y


GENERATORS = [("cart", 1), ("cart", 2), ("cart", 3), ("cart_leaves", 2), ("cart_leaves", 4), ("cart_leaves", 8)]

# Exactly tied splits: the numba CART once compared the Gini proxy sq_l / n_l + sq_r / n_r in floating
# point, so equal proxies could round apart and the later threshold won (seed 7, cart_leaves 8, depth 3
# of the grid below; minimal case: test_split_tie_minimal).  Ties are now decided exactly.

CASES = [
    pytest.param(seed, max_depth, generator, k, id=f"{generator}{k}-depth{max_depth}-seed{seed}")
    for generator, k in GENERATORS
    for max_depth in (2, 3)
    for seed in range(8)
]


def generator_kw(generator, k):
    return {"cart_depth": k} if generator == "cart" else {"cart_leaves": k}


def check_front(X, y, max_depth, generator, k):
    """dpdt's front is the lower hull of the reference MDP's root, tree by tree (see the module docstring)."""
    n = len(y)
    mdp = ReferenceMDP(X, y, max_depth, generator, k)
    hull = mdp.root_hull()  # by increasing tests
    front = dpdt(X, y, max_depth=max_depth, generator=generator, **generator_kw(generator, k))
    sols = [s for s in front.solutions if s.info["on_hull"]]  # most accurate first
    assert front.status == "done"

    # exactly one tree per hull vertex
    reported = [(round(s.info["expected_tests"] * n), s.info["train_errors"]) for s in sols]
    assert reported == hull[::-1]
    for s, (t, e) in zip(sols, reported):
        assert s.info["expected_tests"] == pytest.approx(t / n, rel=1e-12)
        # a policy of the reference MDP, worth what is reported
        assert mdp.walk(s.tree) == (t, e)
        assert int((predict_raw(s.tree, X) != y).sum()) == e

    # α intervals between the slopes of the vertex's two hull edges, tiling [0, inf)
    slopes = [Fraction(e0 - e1, t1 - t0) for (t0, e0), (t1, e1) in zip(hull, hull[1:])][::-1]
    lows, highs = [Fraction(0), *slopes], [*slopes, slopes[-1] + 1 if slopes else Fraction(1)]
    bellman = {alpha: mdp.value(alpha, *mdp.root, {}) for alpha in {*lows, *highs}}
    for s, lo, hi, (t, e) in zip(sols, lows, highs, reported):
        assert s.info["alpha_lo"] == pytest.approx(float(lo), rel=1e-12, abs=0)
        assert s.info["alpha_hi"] == (np.inf if s is sols[-1] else pytest.approx(float(hi), rel=1e-12))
        assert s.info["objective_at_alpha_lo"] == pytest.approx(float((e + lo * t) / n), rel=1e-12)
        # the tree's line E + α·T is Bellman's value at both ends of its interval (and so in between)
        assert bellman[lo] == e + lo * t and bellman[hi] == e + hi * t

    # same MDP: identical row sets at one depth are one state, so the distinct states match
    assert front.stats["states_per_depth"] == mdp.states_per_depth()


@pytest.mark.parametrize(("seed", "max_depth", "generator", "k"), CASES)
def test_front_is_the_hull_of_the_reference_mdp(seed, max_depth, generator, k):
    X, y = random_data(seed)
    check_front(X, y, max_depth, generator, k)


def check_splits_front(X, y, max_depth, generator, k):
    """For every budget b = 0 .. 2^depth - 1, dpdt's splits front holds the reference's fewest errors with at
    most b splits; at each step's own budget its tree is the reference's best policy, (errors, tests)
    exactly, with exactly that many splits, walked in the MDP.  (Between steps a tree with more splits
    may reach the same errors with fewer tests; it is not a new step.)"""
    n = len(y)
    mdp = ReferenceMDP(X, y, max_depth, generator, k)
    front = dpdt(X, y, max_depth=max_depth, generator=generator, **generator_kw(generator, k))
    steps = sorted((s for s in front.solutions if s.info["on_splits_front"]), key=lambda s: s.info["budget"])
    k_max = 2**max_depth - 1
    assert [s.info["budget"] for s in steps][0] == 0 and steps[-1].info["budget_max"] == k_max
    for a, b in zip(steps, steps[1:]):
        assert a.info["budget_max"] == b.info["budget"] - 1 and a.info["train_errors"] > b.info["train_errors"]
    memo = {}
    for s in steps:
        t, e = round(s.info["expected_tests"] * n), s.info["train_errors"]
        assert s.tree.n_splits == s.info["splits"] == s.info["budget"]
        assert mdp.walk(s.tree) == (t, e)
        assert mdp.budget(*mdp.root, s.info["budget"], memo) == (e, t)
        for b in range(s.info["budget"], s.info["budget_max"] + 1):
            assert mdp.budget(*mdp.root, b, memo)[0] == e, f"budget {b}"
    # the hull trees are in the front too; a tree marked on both is one solution
    kinds = {s.info["kind"] for s in front.solutions}
    assert kinds <= {"hull", "budget", "hull+budget"}
    assert all(s.info["on_hull"] == ("hull" in s.info["kind"]) for s in front.solutions)


@pytest.mark.parametrize(("seed", "max_depth", "generator", "k"), CASES[::3])
def test_splits_front_is_the_budget_dp_of_the_reference_mdp(seed, max_depth, generator, k):
    X, y = random_data(seed)
    check_splits_front(X, y, max_depth, generator, k)


# one feature, ten rows: the splits after the 4th and the 6th row tie exactly (Gini proxy 19/3)
TIE_X = np.arange(10.0)[:, None]
TIE_Y = np.array([2, 1, 1, 2, 0, 1, 0, 0, 0, 0])


def test_split_tie_reference():
    """The reference (and scikit-learn) split the tie at the lowest threshold; DPDT-1 then reaches 0 errors."""
    rows = np.arange(10)
    assert cart_tests(TIE_X, TIE_Y, rows, "cart", 1) == sklearn_tests(TIE_X, TIE_Y, rows, "cart", 1) == {(0, 3.5)}
    assert ReferenceMDP(TIE_X, TIE_Y, 3, "cart", 1).root_hull() == [(0, 5), (17, 1), (25, 0)]


def test_split_tie_minimal():
    # regression: the solver split at 5.5 and its front was [(16, 2), (10, 3), (0, 5)]: no tree with 0 or 1 error
    check_front(TIE_X, TIE_Y, 3, "cart", 1)


def sklearn_splits(X, y, rows, generator, k):
    """``(test, rows reaching the node)`` of every split node of scikit-learn's CART fitted on ``rows``."""
    limit = {"cart": {"max_depth": k}, "cart_leaves": {"max_leaf_nodes": k}}[generator]
    clf = DecisionTreeClassifier(random_state=0, **limit).fit(X[rows], y[rows])
    tree = clf.tree_
    reach = clf.decision_path(X[rows]).toarray().astype(bool)
    return [
        ((int(tree.feature[j]), float(tree.threshold[j])), rows[reach[:, j]])
        for j in np.flatnonzero(tree.children_left >= 0)
    ]


def sklearn_tests(X, y, rows, generator, k):
    return {test for test, _ in sklearn_splits(X, y, rows, generator, k)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("generator", "k"), GENERATORS)
def test_reference_cart_is_sklearns_without_ties(seed, generator, k):
    """Large fits (300 rows: the chosen splits are not tied): the reference proposes exactly the tests of
    scikit-learn's tree, for both growth orders (depth-first and best-first)."""
    X, y = random_data(100 + seed, n=300, p=4, n_classes=3)
    rows = np.arange(len(y))
    assert cart_tests(X, y, rows, generator, k) == sklearn_tests(X, y, rows, generator, k)


def test_reference_cart_is_sklearns_up_to_ties_at_every_state():
    """At every state of the MDPs above, every split of scikit-learn's CART is a best split of the rows
    reaching it: it is the reference's, or another with exactly the same impurity decrease (a tie that
    scikit-learn broke by its random feature order)."""
    X, y = random_data(0)
    n_classes = int(y.max()) + 1
    ties = 0
    for generator, k in GENERATORS:
        mdp = ReferenceMDP(X, y, 3, generator, k)
        mdp.root_hull()
        for rows in mdp._tests:
            for (f, t), node in sklearn_splits(X, y, np.array(rows), generator, k):
                proxy, test, _, _ = best_split(X, y, node, n_classes)
                go = X[node, f] <= t
                sq = [int((np.bincount(y[side], minlength=n_classes) ** 2).sum()) for side in (node[go], node[~go])]
                assert Fraction(sq[0], int(go.sum())) + Fraction(sq[1], int((~go).sum())) == proxy
                ties += test != (f, t)
    assert ties > 0  # the reason scikit-learn is not the oracle of the MDP test
