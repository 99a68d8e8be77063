"""MID (Minimum Impurity Discretizer): hand-checked rankings, a brute-force oracle of the definition, nestedness."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treeexplorer.discretize import MIDRanking, fit_discretizer
from treeexplorer.schema import OP_EQ, OP_LE, Column, Condition, Schema


def numeric_schema(p: int, n_classes: int = 2) -> Schema:
    return Schema(tuple(Column(f"x{j}", "numeric") for j in range(p)), "y", tuple(range(n_classes)))


def test_hand_checked_gini_ranking():
    # Rows:      0  1  2  3  4  5
    # y        = 0  0  1  1  0  0          counts (4, 2); n * Gini = n - sum(c^2)/n = 6 - 20/6 = 8/3
    # a        = 1  2  3  4  5  6          candidates 2.5 and 4.5 (1.5, 3.5, 5.5 separate equal single classes)
    #   a <= 2.5: (2,0) -> 0, (2,2) -> 4 - 8/4 = 2;   gain (8/3 - 2) / 6 = 1/9
    #   a <= 4.5: (2,2) -> 2, (2,0) -> 0;              gain 1/9, a tie: the lower threshold 2.5 goes first
    #   then in segment {3,4,5,6} = (2,2): n*G = 2; a <= 4.5 makes it pure: gain 2/6 = 1/3
    # b sorts y as 0 0 0 0 1 1: one candidate (4.5), both sides pure: gain (8/3) / 6 = 4/9
    # c = b: same gain 4/9, ties go to the lower column, so b before c.
    # Global merge of heads: b 4/9, c 4/9, then a's list in its own order: 2.5 (1/9), 4.5 (1/3).
    y = np.array([0, 0, 1, 1, 0, 0])
    a = np.array([1, 2, 3, 4, 5, 6], dtype=float)
    b = np.array([1, 2, 5, 6, 3, 4], dtype=float)
    X = np.column_stack([a, b, b])
    r = MIDRanking.fit(X, y, numeric_schema(3), criterion="gini")
    assert r.n_available == 4
    assert r.select(4).conditions == [
        Condition(1, OP_LE, 4.5),
        Condition(2, OP_LE, 4.5),
        Condition(0, OP_LE, 2.5),
        Condition(0, OP_LE, 4.5),
    ]
    np.testing.assert_allclose(r.gains, [4 / 9, 4 / 9, 1 / 9, 1 / 3], rtol=1e-12)


def test_hand_checked_entropy_gains():
    # y = 0 0 1 1.  a sorts y as 0 0 | 1 1: one candidate (2.5), pure sides: gain = H(1/2) = 1 bit.
    # b sorts y as 0 | 1 1 0 ... b = (1, 4, 2, 3) -> by b: y 0, 1, 1, 0: candidates 1.5 and 3.5 (2.5 is 1|1)
    #   b <= 1.5: left (1,0), right (1,2): gain 1 - 3/4 H(1/3) = 0.3113 bits; b <= 3.5 the same by symmetry
    #   -> tie, 1.5 first; then segment {2,3,4} = (1,2), cut 3.5 leaves pure parts: gain 3/4 H(1/3).
    h13 = -(1 / 3) * math.log2(1 / 3) - (2 / 3) * math.log2(2 / 3)
    y = np.array([0, 0, 1, 1])
    X = np.column_stack([[1.0, 2, 3, 4], [1.0, 4, 2, 3]])
    r = MIDRanking.fit(X, y, numeric_schema(2))
    assert r.select(3).conditions == [Condition(0, OP_LE, 2.5), Condition(1, OP_LE, 1.5), Condition(1, OP_LE, 3.5)]
    np.testing.assert_allclose(r.gains, [1.0, 1 - 0.75 * h13, 0.75 * h13], rtol=1e-12)


def test_hand_checked_categorical_ranking():
    # colour codes: blue 0 -> y (1,1); green 1 -> (0,2); red 2 -> (2,0).  Gini, pool (3,3): n*G = 3.
    #   single out blue: (1,1) -> 1, rest (2,2) -> 2: gain 0;  green: 0 + (3,1) -> 1.5: gain 1.5/6 = 1/4;
    #   red: the same 1/4, tie -> lower code: green first.
    #   pool {blue, red} = (3,1): 1.5; blue: 1 + 0 -> gain 0.5/6 = 1/12; red: 0 + 1 -> 1/12: tie -> blue.
    #   last, red alone: nothing left to separate, gain 0.
    schema = Schema((Column("colour", "categorical", ("blue", "green", "red")),), "y", (0, 1))
    X = np.array([[0.0], [0], [1], [1], [2], [2]])
    y = np.array([0, 1, 1, 1, 0, 0])
    r = MIDRanking.fit(X, y, schema, criterion="gini")
    binz = r.select(3)
    assert [c.text(schema) for c in binz.conditions] == ["colour = green", "colour = blue", "colour = red"]
    np.testing.assert_allclose(r.gains, [1 / 4, 1 / 12, 0.0], atol=1e-12)


# -- brute-force oracle of the definition --------------------------------------------------------------


def _imp(counts: np.ndarray, gini: bool) -> float:
    n = counts.sum()
    if n == 0:
        return 0.0
    p = counts[counts > 0] / n
    return float(n * (1 - np.sum(p * p))) if gini else float(-n * np.sum(p * np.log2(p)))


def _partition_impurity(x, y, thresholds, C, gini) -> float:
    cell = np.searchsorted(np.sort(thresholds), x, side="left")  # x <= t goes to the lower cell
    return sum(_imp(np.bincount(y[cell == k], minlength=C), gini) for k in np.unique(cell))


def oracle_mid(X, y, C, gini):
    """Straight from the definition: per feature greedy by recomputing the whole partition, then merge."""
    n = len(y)
    lists = []
    for j in range(X.shape[1]):
        x = X[:, j]
        vals = np.unique(x)
        cands = []
        for lo, hi in zip(vals[:-1], vals[1:]):
            cl_lo, cl_hi = np.unique(y[x == lo]), np.unique(y[x == hi])
            if len(cl_lo) == 1 and len(cl_hi) == 1 and cl_lo[0] == cl_hi[0]:
                continue
            cands.append((lo + hi) / 2)
        chosen, gains = [], []
        cur = _partition_impurity(x, y, [], C, gini)
        while cands:
            imps = [_partition_impurity(x, y, chosen + [t], C, gini) for t in cands]
            best = min(imps)
            i = next(i for i, v in enumerate(imps) if v <= best + 1e-9)  # ties: the lowest threshold
            gains.append((cur - imps[i]) / n)
            cur = imps[i]
            chosen.append(cands.pop(i))
        lists.append(list(zip(chosen, gains)))
    out = []
    while any(lists):
        heads = [(lst[0][1], j) for j, lst in enumerate(lists) if lst]
        top = max(g for g, _ in heads)
        j = next(j for g, j in heads if g >= top - 1e-9)  # ties: the lower feature
        t, g = lists[j].pop(0)
        out.append((j, t, g))
    return out


@st.composite
def small_tables(draw):
    n = draw(st.integers(2, 24))
    p = draw(st.integers(1, 3))
    C = draw(st.integers(2, 3))
    hi = draw(st.sampled_from([1, 2, 6]))  # 1: 0/1 columns, which MID takes as the single test "x = 1"
    X = np.array(
        draw(st.lists(st.lists(st.integers(0, hi), min_size=p, max_size=p), min_size=n, max_size=n)), dtype=float
    )
    y = np.array(draw(st.lists(st.integers(0, C - 1), min_size=n, max_size=n)))
    return X, y, C


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_tables(), st.sampled_from(["entropy", "gini"]))
def test_ranking_matches_brute_force_definition(table, criterion):
    X, y, C = table
    r = MIDRanking.fit(X, y, numeric_schema(X.shape[1], C), criterion=criterion)
    expected = oracle_mid(X, y, C, criterion == "gini")
    # a numeric 0/1 column is the one test "x = 1" (the oracle's "x <= 0.5", the same split)
    got = [(c.column, 0.5 if c.op == OP_EQ and c.value == 1.0 else c.value) for c in r.conditions()]
    assert got == [(j, t) for j, t, _ in expected]
    np.testing.assert_allclose(r.gains, [g for _, _, g in expected], atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(small_tables())
def test_selections_are_nested(table):
    X, y, C = table
    schema = numeric_schema(X.shape[1], C)
    r = MIDRanking.fit(X, y, schema)
    prev: list = []
    for n in range(1, r.n_available + 1):
        conds = r.select(n).conditions
        assert set(prev) < set(conds) and conds[: n - 1] == prev
        prev = conds
    if r.n_available:
        k = (r.n_available + 1) // 2
        assert fit_discretizer("mid", X, y, schema, n_bins=k).conditions == r.select(k).conditions


def test_ranking_matches_oracle_on_continuous_values():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(36, 2))
    y = ((X[:, 0] + rng.normal(scale=0.7, size=36)) > 0).astype(int) + (X[:, 1] > 1)
    for criterion in ("entropy", "gini"):
        r = MIDRanking.fit(X, y, numeric_schema(2, 3), criterion=criterion)
        expected = oracle_mid(X, y, 3, criterion == "gini")
        assert [c.column for c in r.conditions()] == [j for j, _, _ in expected]
        np.testing.assert_allclose([c.value for c in r.conditions()], [t for _, t, _ in expected], rtol=1e-14)
        np.testing.assert_allclose(r.gains, [g for _, _, g in expected], atol=1e-9)


def oracle_onehot(codes, y, C, gini):
    """One-hot greedy from its definition: the partition is the singled-out categories plus the pool."""
    n = len(y)
    present = sorted(set(codes.tolist()))
    chosen, out = [], []

    def impurity(single):
        cells = [codes == c for c in single] + [~np.isin(codes, single)]
        return sum(_imp(np.bincount(y[m], minlength=C), gini) for m in cells if m.any())

    cur = impurity([])
    while len(chosen) < len(present):
        rest = [c for c in present if c not in chosen]
        imps = [impurity(chosen + [c]) for c in rest]
        i = next(i for i, v in enumerate(imps) if v <= min(imps) + 1e-9)
        out.append((float(rest[i]), (cur - imps[i]) / n))
        cur = imps[i]
        chosen.append(rest[i])
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 2)), min_size=2, max_size=30),
    st.sampled_from(["entropy", "gini"]),
)
def test_onehot_ranking_matches_oracle(rows, criterion):
    codes = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows])
    schema = Schema((Column("c", "categorical", tuple("abcde")),), "y", (0, 1, 2))
    r = MIDRanking.fit(codes[:, None], y, schema, criterion=criterion)
    expected = oracle_onehot(codes, y, 3, criterion == "gini") if len(set(codes.tolist())) > 1 else []
    assert [c.value for c in r.conditions()] == [v for v, _ in expected]
    np.testing.assert_allclose(r.gains, [g for _, g in expected], atol=1e-9)


def test_binary_and_categorical_columns_join_the_ranking():
    # bit = y exactly (gain 1 bit, one test "bit = 1"); pet has two categories -> one test on code 1.
    schema = Schema(
        (Column("bit", "numeric"), Column("pet", "categorical", ("cat", "dog")), Column("z", "numeric")),
        "y",
        ("no", "yes"),
    )
    X = np.array([[0, 0, 1.0], [0, 1, 2.0], [1, 0, 3.0], [1, 1, 4.0]])
    y = np.array([0, 0, 1, 1])
    r = MIDRanking.fit(X, y, schema)
    texts = [c.text(schema) for c in r.conditions()]
    assert texts[0] == "bit = 1" and "pet = dog" in texts and "z ≤ 2.5" in texts
    assert r.n_available == 3 and r.gains[0] == pytest.approx(1.0)
    assert all(c.op == OP_EQ for c in r.conditions()[:1])


def test_select_errors_say_how_many_exist():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([0, 1, 0, 1])
    r = MIDRanking.fit(X, y, numeric_schema(1))
    assert r.n_available == 3
    with pytest.raises(ValueError, match="only 3 candidate"):
        r.select(4)
    with pytest.raises(ValueError, match="only 3 candidate"):
        fit_discretizer("mid", X, y, numeric_schema(1), n_bins=10)
    with pytest.raises(ValueError, match="positive integer"):
        r.select(0)
    with pytest.raises(ValueError, match="criterion"):
        MIDRanking.fit(X, y, numeric_schema(1), criterion="twoing")


def test_default_size_and_gains_reported():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    binz = fit_discretizer("mid", X, y, numeric_schema(3))
    assert len(binz) == 12 and binz.gains is not None and binz.gains.shape == (12,)
    assert any("n_bins not given" in n for n in binz.notices)
    # the top test separates the classes perfectly: a threshold on column 0 between the two classes
    top = binz.conditions[0]
    assert top.column == 0 and X[y == 0, 0].max() <= top.value < X[y == 1, 0].min()


def test_default_mid_test_count_is_capped_and_says_so():
    from treeexplorer.discretize import MID_DEFAULT_MAX_TESTS, fit_discretizer
    from treeexplorer.schema import Column, Schema

    rng = np.random.default_rng(0)
    p = 60  # 4 per column would be 240 tests
    X = rng.normal(size=(400, p))
    y = (X[:, :p].sum(axis=1) > 0).astype(np.int64)
    schema = Schema(tuple(Column(f"f{j}", "numeric") for j in range(p)), "y", (0, 1))
    binz = fit_discretizer("mid", X, y, schema)
    assert len(binz) == MID_DEFAULT_MAX_TESTS
    assert any(f"capped at {MID_DEFAULT_MAX_TESTS}" in n for n in binz.notices)
    assert len(fit_discretizer("mid", X, y, schema, n_bins=200)) == 200  # an explicit n_bins is not capped


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 120),
    p=st.integers(1, 4),
    classes=st.integers(2, 4),
    most=st.integers(1, 12),
    criterion=st.sampled_from(["entropy", "gini"]),
)
def test_a_ranking_cut_at_max_tests_selects_what_the_whole_ranking_selects(seed, n, p, classes, most, criterion):
    # fit(max_tests=K) ranks each column only K deep; select(k <= K) must not notice
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 1 + n // 3, size=(n, p + 1)).astype(float)
    X[:, 0] = rng.integers(0, 6, size=n)  # a categorical column: its one-hot tests are cut at K too
    y = rng.integers(0, classes, size=n)
    cols = (Column("cat", "categorical", tuple("abcdef")), *(Column(f"x{j}", "numeric") for j in range(p)))
    schema = Schema(cols, "y", tuple(range(classes)))
    whole = MIDRanking.fit(X, y, schema, criterion)
    cut = MIDRanking.fit(X, y, schema, criterion, max_tests=most)
    assert cut.n_candidates == whole.n_candidates == whole.n_available >= cut.n_available
    for k in range(1, min(most, whole.n_available) + 1):
        a, b = whole.select(k), cut.select(k)
        assert a.conditions == b.conditions
        np.testing.assert_array_equal(a.gains, b.gains)
