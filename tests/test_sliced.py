# ruff: noqa: E741 (l is the literature's name)
"""The l-diversity check of sliced tables (SPEC §1.7, §1.10) and the two tuple partitions (§1.6, §2.6)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from sdckit.anonymize._tuple_partition import mondrian_tuple_partition, random_halving_partition
from sdckit.errors import ConfigError
from sdckit.models.sliced import SlicedDiversity, diversity_check, tuple_probabilities


def dense(values) -> np.ndarray:
    seen: dict = {}
    return np.array([seen.setdefault(v, len(seen)) for v in values], dtype=np.int64)


# --------------------------------------------------------------------------------------------------
# SPEC §1.10 worked examples

# (Age, Sex | Zip, Disease), buckets {t1..t4}, {t5..t8}
AGE_SEX = [(22, "M"), (22, "F"), (33, "F"), (52, "F"), (54, "M"), (60, "M"), (60, "M"), (64, "F")]
ZIP = [47906, 47906, 47905, 47905, 47302, 47302, 47304, 47304]
DISEASE = ["dyspepsia", "flu", "flu", "bronchitis", "flu", "dyspepsia", "dyspepsia", "gastritis"]
DISEASES = ["bronchitis", "dyspepsia", "flu", "gastritis"]


@pytest.fixture
def first_example():
    codes = np.array([DISEASES.index(d) for d in DISEASE])
    return [dense(AGE_SEX)], dense(ZIP), codes, [np.arange(4), np.arange(4, 8)]


def test_first_example_probabilities(first_example):
    columns, zips, codes, buckets = first_example
    p = tuple_probabilities(columns, zips, codes, 4, buckets)
    np.testing.assert_allclose(p.max(axis=1), 0.5, atol=1e-15)
    np.testing.assert_allclose(p[0], [0, 0.5, 0.5, 0])  # t1: dyspepsia .5, flu .5
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-15)
    assert diversity_check(columns, zips, codes, 4, buckets, 2)
    assert not diversity_check(columns, zips, codes, 4, buckets, 3)


def test_first_example_f_values(first_example):
    # f(t1,B1) = 1/4 * 2/4 = 0.125 and f(t6,B2) = 2/4 * 2/4 = 0.25: F after the split
    # (no other bucket matches them).
    columns, zips, codes, buckets = first_example
    state = SlicedDiversity(columns, zips, codes, 4, 2)
    state.add_bucket(np.arange(8))
    assert state.try_split(np.arange(8), *buckets)
    f = state._f_hi + state._f_lo
    assert f[0] == pytest.approx(0.125, abs=1e-15)
    assert f[5] == pytest.approx(0.25, abs=1e-15)
    np.testing.assert_allclose(state.probabilities(), tuple_probabilities(columns, zips, codes, 4, buckets))
    assert state.passes()


def test_first_example_split_rejected_at_three(first_example):
    columns, zips, codes, buckets = first_example
    state = SlicedDiversity(columns, zips, codes, 4, 3)
    state.add_bucket(np.arange(8))
    assert not state.passes()  # as one bucket: t1 has p(dyspepsia) = 1/2 > 1/3
    before = state.probabilities()
    assert not state.try_split(np.arange(8), *buckets)
    np.testing.assert_array_equal(state.probabilities(), before)
    assert [b.tolist() for b in state.buckets] == [list(range(8))]


@pytest.fixture
def multi_example():
    # C1 = Age, C2 = Sex, C3 = (Zip, Disease); B1 = {r1,r2,r3}, B2 = {r4,r5,r6}
    age = dense([20, 20, 30, 30, 20, 40])
    sex = dense("MFMFMF")
    zips = dense("AABABB")
    disease = np.array([0, 1, 0, 2, 1, 2])  # flu, cold, hiv
    return [age, sex], zips, disease, [np.arange(3), np.arange(3, 6)]


def test_multi_bucket_example(multi_example):
    columns, zips, disease, buckets = multi_example
    p = tuple_probabilities(columns, zips, disease, 3, buckets)
    np.testing.assert_allclose(p[0], [4 / 9, 4 / 9, 1 / 9], atol=1e-15)
    np.testing.assert_allclose(p[4], [2 / 3, 1 / 6, 1 / 6], atol=1e-15)
    assert p.max() == pytest.approx(2 / 3, abs=1e-15)
    assert not diversity_check(columns, zips, disease, 3, buckets, 2)
    assert diversity_check(columns, zips, disease, 3, buckets, 1.5)


def test_multi_bucket_example_incremental(multi_example):
    columns, zips, disease, buckets = multi_example
    for l, accepted in ((2, False), (1.5, True)):
        state = SlicedDiversity(columns, zips, disease, 3, l)
        state.add_bucket(np.arange(6))
        assert state.try_split(np.arange(6), *buckets) is accepted
    np.testing.assert_allclose(
        state.probabilities(), tuple_probabilities(columns, zips, disease, 3, buckets), atol=1e-15
    )


def test_size_weighting_equal_buckets_is_identical(multi_example):
    columns, zips, disease, buckets = multi_example
    np.testing.assert_allclose(
        tuple_probabilities(columns, zips, disease, 3, buckets, bucket_weighting="size"),
        tuple_probabilities(columns, zips, disease, 3, buckets),
    )


def test_sensitive_column_with_a_quasi_identifier_by_hand():
    # C1 = (A), C_c = (Q, S). Rows (A, Q, S): 0:(a,x,0) 1:(a,y,1) 2:(b,x,1) | 3:(a,x,0) 4:(b,x,2)
    a = dense("aabab")
    qk = dense("xyxxx")
    s = np.array([0, 1, 1, 0, 2])
    buckets = [np.arange(3), np.arange(3, 5)]
    # Row 0 (a, x): B1: f = (2/3)(2/3) = 4/9, D = {0: 1/2, 1: 1/2};
    #               B2: f = (1/2)(2/2) = 1/2, D = {0: 1/2, 2: 1/2}.
    # F = 17/18; N0 = 4/9*1/2 + 1/2*1/2 = 17/36 -> p0 = 1/2;
    # p1 = (2/9)/(17/18) = 4/17; p2 = (1/4)/(17/18) = 9/34.
    expected_row0 = [Fraction(1, 2), Fraction(4, 17), Fraction(9, 34)]
    # Row 1 (a, y): B1 only (y not in B2): f = (2/3)(1/3), D = {1: 1}.
    # Row 4 (b, x): B1: (1/3)(2/3) = 2/9, D {0: .5, 1: .5}; B2: (1/2)(1) = 1/2, D {0: .5, 2: .5}; F = 13/18.
    expected_row4 = [Fraction(1, 2), Fraction(1, 9) / Fraction(13, 18), Fraction(1, 4) / Fraction(13, 18)]
    for weighting in ("none", "size"):
        p = tuple_probabilities([a], qk, s, 3, buckets, bucket_weighting=weighting)
        np.testing.assert_allclose(p[1], [0, 1, 0])
        if weighting == "none":
            np.testing.assert_allclose(p[0], [float(x) for x in expected_row0], atol=1e-15)
            np.testing.assert_allclose(p[4], [float(x) for x in expected_row4], atol=1e-15)
        else:
            # weights |B1| = 3, |B2| = 2: row 0: 3*4/9 = 4/3 and 2*1/2 = 1 -> F = 7/3, p0 = 1/2
            np.testing.assert_allclose(p[0], [0.5, (4 / 3 * 0.5) / (7 / 3), 0.5 / (7 / 3)], atol=1e-15)
        state = SlicedDiversity([a], qk, s, 3, 1.0, bucket_weighting=weighting)
        state.add_bucket(np.arange(5))
        assert state.try_split(np.arange(5), *buckets)
        np.testing.assert_allclose(state.probabilities(), p, atol=1e-15)
    # Row 1 is certain to have S = 1: no l > 1 passes.
    assert not diversity_check([a], qk, s, 3, buckets, 1.01)
    assert diversity_check([a], qk, s, 3, buckets, 1)


def test_no_non_sensitive_column_and_sensitive_alone():
    # Sensitive column {S} alone and no other column: D(t,B) is B's distribution, f = 1 for every bucket.
    s = np.array([0, 1, 0, 1, 2, 2])
    buckets = [np.array([0, 1]), np.array([2, 3, 4, 5])]
    p = tuple_probabilities([], np.zeros(6, dtype=np.int64), s, 3, buckets)
    np.testing.assert_allclose(p, np.tile([0.5 * 0.5 + 0.5 * 0.25, 0.5 * 0.5 + 0.5 * 0.25, 0.25], (6, 1)))
    p = tuple_probabilities([], np.zeros(6, dtype=np.int64), s, 3, buckets, bucket_weighting="size")
    np.testing.assert_allclose(p, np.tile([2 / 6, 2 / 6, 2 / 6], (6, 1)))


# --------------------------------------------------------------------------------------------------
# Property tests: incremental state = reference


@st.composite
def tables(draw, max_rows=24):
    n = draw(st.integers(1, max_rows))
    n_columns = draw(st.integers(0, 3))
    columns = [np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))) for _ in range(n_columns)]
    q = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    m = draw(st.integers(1, 4))
    codes = np.array(draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n)))
    weighting = draw(st.sampled_from(["none", "size"]))
    return columns, q, codes, m, weighting


def snapshot(state: SlicedDiversity):
    return (
        state._f_hi.copy(),
        state._f_lo.copy(),
        state._n_hi.copy(),
        state._n_lo.copy(),
        state._failing.copy(),
        state.n_failing,
        [b.copy() for b in state.buckets],
        state._owner.copy(),
    )


def assert_same(a, b):
    for x, y in zip(a[:5], b[:5], strict=True):
        assert np.array_equal(x, y)
    assert a[5] == b[5]
    assert len(a[6]) == len(b[6]) and all(np.array_equal(x, y) for x, y in zip(a[6], b[6], strict=True))
    assert np.array_equal(a[7], b[7])


@settings(max_examples=60)
@given(table=tables(), l=st.sampled_from([1.0, 1.5, 2.0, 3.0]), seed=st.integers(0, 2**32 - 1))
# Found by hypothesis: the table as one bucket fails (11 of 15 values equal at l = 1.5) and a split
# makes it pass; the split must be accepted.
@example(
    table=([], np.zeros(15, dtype=np.int64), np.array([0] * 10 + [1, 1, 0, 1, 1]), 2, "none"), l=1.5, seed=0
)
def test_incremental_equals_reference(table, l, seed):
    columns, q, codes, m, weighting = table
    n = codes.shape[0]
    rng = np.random.default_rng(seed)
    state = SlicedDiversity(columns, q, codes, m, l, bucket_weighting=weighting)
    state.add_bucket(np.arange(n))
    for _ in range(8):
        candidates = [b for b in state.buckets if b.shape[0] >= 2]
        if not candidates:
            break
        parent = candidates[rng.integers(len(candidates))]
        mask = rng.random(parent.shape[0]) < 0.5
        if mask.all() or not mask.any():
            mask[0] = not mask[0]
        before = snapshot(state)
        expected = diversity_check(
            columns,
            q,
            codes,
            m,
            [b for b in state.buckets if b is not parent] + [parent[mask], parent[~mask]],
            l,
            bucket_weighting=weighting,
        )  # a split is accepted iff the buckets after it pass, whether or not those before did
        accepted = state.try_split(parent, parent[mask], parent[~mask])
        event("split accepted" if accepted else "split rejected")
        assert accepted == expected
        if not accepted:
            assert_same(before, snapshot(state))
        reference = tuple_probabilities(columns, q, codes, m, state.buckets, bucket_weighting=weighting)
        probabilities = state.probabilities()
        np.testing.assert_allclose(probabilities, reference, atol=1e-9)
        np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-12)
        assert state.passes() == diversity_check(
            columns, q, codes, m, state.buckets, l, bucket_weighting=weighting
        )


@settings(max_examples=40)
@given(table=tables(max_rows=30), seed=st.integers(0, 1000))
def test_probabilities_sum_to_one(table, seed):
    columns, q, codes, m, weighting = table
    n = codes.shape[0]
    labels = np.random.default_rng(seed).integers(0, 4, n)
    buckets = [np.flatnonzero(labels == b) for b in range(4) if np.any(labels == b)]
    p = tuple_probabilities(columns, q, codes, m, buckets, bucket_weighting=weighting)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(p >= 0)


# --------------------------------------------------------------------------------------------------
# Partitions


def partition_table(seed: int, n: int):
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, 4, n), rng.integers(0, 6, n)]
    q = rng.integers(0, 3, n)
    m = 5
    codes = rng.integers(0, m, n)
    split = np.column_stack([rng.integers(0, 30, n), rng.integers(0, 4, n), rng.random(n)])
    return columns, q, codes, m, split


def assert_valid(buckets, n, columns, q, codes, m, l, minimum, weighting):
    assert all(np.array_equal(b, np.sort(b)) for b in buckets)
    cover = np.bincount(np.concatenate(buckets), minlength=n)
    assert np.all(cover == 1)
    assert min(b.shape[0] for b in buckets) >= min(minimum, n)  # the table itself may be smaller
    assert diversity_check(columns, q, codes, m, buckets, l, bucket_weighting=weighting)


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 120),
    l=st.sampled_from([1.0, 1.5, 2.0, 2.5]),
    minimum=st.sampled_from([None, 1, 3, 10]),
    weighting=st.sampled_from(["none", "size"]),
)
def test_partitions_are_valid_and_deterministic(seed, n, l, minimum, weighting):
    columns, q, codes, m, split = partition_table(seed, n)
    if not diversity_check(columns, q, codes, m, [np.arange(n)], l, bucket_weighting=weighting):
        with pytest.raises(ConfigError, match="one bucket is not"):
            mondrian_tuple_partition(
                split, SlicedDiversity(columns, q, codes, m, l, bucket_weighting=weighting)
            )
        return
    categorical = np.array([False, True, False])
    results = []
    for _ in range(2):
        state = SlicedDiversity(columns, q, codes, m, l, bucket_weighting=weighting)
        buckets = mondrian_tuple_partition(split, state, categorical=categorical, min_bucket_size=minimum)
        assert_valid(buckets, n, columns, q, codes, m, l, minimum or 1, weighting)
        assert state.passes()
        results.append(buckets)
    assert [b.tolist() for b in results[0]] == [b.tolist() for b in results[1]]
    results = []
    for _ in range(2):
        state = SlicedDiversity(columns, q, codes, m, l, bucket_weighting=weighting)
        buckets = random_halving_partition(state, np.random.default_rng(seed), min_bucket_size=minimum)
        assert_valid(buckets, n, columns, q, codes, m, l, minimum or 1, weighting)
        results.append(buckets)
    assert [b.tolist() for b in results[0]] == [b.tolist() for b in results[1]]


def test_mondrian_split_rule_by_hand():
    # One numeric attribute 0..7, l = 1: every cut passes; lower median cuts {0..3} | {4..7} and so on.
    n = 8
    s = np.arange(n) % 2
    state = SlicedDiversity([], np.zeros(n, dtype=np.int64), s, 2, 1.0)
    buckets = mondrian_tuple_partition(np.arange(n)[:, None], state)
    assert [b.tolist() for b in buckets] == [[i] for i in range(n)]
    # Widest attribute first: attribute 1 has normalized width 1 vs 0.5 for attribute 0 inside B.
    codes = np.column_stack([[0, 0, 0, 0, 1, 1, 1, 1, 2, 2], np.arange(10)])
    state = SlicedDiversity([], np.zeros(10, dtype=np.int64), np.arange(10) % 2, 2, 1.0)
    buckets = mondrian_tuple_partition(codes[:, [0]], state, min_bucket_size=4)
    # Lower median of [0,0,0,0,1,1,1,1,2,2] is 1 -> {0..7} | {8,9}: too small; no split.
    assert [b.tolist() for b in buckets] == [list(range(10))]
    state = SlicedDiversity([], np.zeros(10, dtype=np.int64), np.arange(10) % 2, 2, 1.0)
    buckets = mondrian_tuple_partition(codes, state, min_bucket_size=4)
    assert [b.tolist() for b in buckets] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_mondrian_stops_after_failed_check():
    # 2-diversity, column (A0) | (S). Both attributes have normalized width 1 (tie: attribute 0 first).
    # The cut on A0 gives {S=0,0} | {1,1}, and A0 tells the buckets apart: fails, so B is final even
    # though the cut on attribute 1 would pass ({0,2} | {1,3}: both halves hold A0 = 0 and 5).
    s = np.array([0, 0, 1, 1])
    split = np.column_stack([[0, 0, 5, 5], [0, 1, 0, 1]])
    columns = [dense(split[:, 0])]
    state = SlicedDiversity(columns, np.zeros(4, dtype=np.int64), s, 2, 2)
    assert [b.tolist() for b in mondrian_tuple_partition(split, state)] == [[0, 1, 2, 3]]
    state = SlicedDiversity(columns, np.zeros(4, dtype=np.int64), s, 2, 2)
    assert [b.tolist() for b in mondrian_tuple_partition(split[:, ::-1], state)] == [[0, 2], [1, 3]]


def test_random_halving_keeps_sensitive_distribution():
    n = 64
    s = np.repeat(np.arange(4), 16)
    # Every record's column value unique: a tuple matches only its own bucket, so p(t,.) = its bucket's
    # distribution and buckets of 4 distinct values are the finest 4-diverse ones.
    state = SlicedDiversity([np.arange(n)], np.zeros(n, dtype=np.int64), s, 4, 4)
    progress = []
    buckets = random_halving_partition(
        state, np.random.default_rng(3), progress=lambda d, t: progress.append(d)
    )
    assert len(buckets) == 16
    for b in buckets:
        assert sorted(s[b].tolist()) == [0, 1, 2, 3]
    assert progress[-1] == n and progress == sorted(progress)


def test_random_halving_odd_groups_alternate():
    # Every sensitive value distinct: only the alternation of extra rows lets the bucket split.
    s = np.arange(6)
    state = SlicedDiversity([], np.zeros(6, dtype=np.int64), s, 6, 1.0)
    buckets = random_halving_partition(state, np.random.default_rng(0), min_bucket_size=3)
    assert sorted(b.shape[0] for b in buckets) == [3, 3]


# --------------------------------------------------------------------------------------------------
# Bad input


def test_bad_inputs():
    keys = [np.array([0, 1, 0])]
    q = np.zeros(3, dtype=np.int64)
    s = np.array([0, 1, 1])
    # The rule of SlicingParams' l (a finite number, at least 1: sdckit.params.L_BOUNDS).
    with pytest.raises(ConfigError, match=r"^l must be greater than or equal to 1, got 0.5$"):
        SlicedDiversity(keys, q, s, 2, 0.5)
    with pytest.raises(ConfigError, match=r"^l must be a finite number, got nan$"):
        SlicedDiversity(keys, q, s, 2, float("nan"))
    with pytest.raises(ConfigError, match="sensitive_codes"):
        SlicedDiversity(keys, q, np.array([0, 2, 1]), 2, 2)
    with pytest.raises(ConfigError, match="sensitive_codes"):
        SlicedDiversity(keys, q, np.array([0, -1, 1]), 2, 2)
    with pytest.raises(ConfigError, match=r"column_keys\[0\]"):
        SlicedDiversity([np.array([0, 1])], q, s, 2, 2)
    with pytest.raises(ConfigError, match="sensitive_qi_key"):
        SlicedDiversity(keys, np.zeros((3, 2)), s, 2, 2)
    with pytest.raises(ConfigError, match="n_values"):
        SlicedDiversity(keys, q, s, 0, 2)
    with pytest.raises(ConfigError, match="bucket_weighting"):
        SlicedDiversity(keys, q, s, 2, 2, bucket_weighting="count")
    with pytest.raises(ConfigError, match="buckets"):
        diversity_check(keys, q, s, 2, [np.array([0, 1])], 2)
    with pytest.raises(ConfigError, match="buckets"):
        tuple_probabilities(keys, q, s, 2, [np.array([0, 1]), np.array([1, 2])])
    state = SlicedDiversity(keys, q, s, 2, 1.5)
    with pytest.raises(ConfigError, match="rows"):
        state.add_bucket(np.array([0, 3]))
    state.add_bucket(np.array([0, 1]))
    with pytest.raises(ConfigError, match="already"):
        state.add_bucket(np.array([1, 2]))
    state.add_bucket(np.array([2]))
    with pytest.raises(ConfigError, match="parent"):
        state.try_split(np.array([0, 1, 2]), np.array([0]), np.array([1, 2]))
    with pytest.raises(ConfigError, match="partition"):
        state.try_split(np.array([0, 1]), np.array([0]), np.array([0]))
    with pytest.raises(ConfigError, match="state"):
        random_halving_partition(state, np.random.default_rng(0))
    fresh = SlicedDiversity(keys, q, s, 2, 1.5)
    with pytest.raises(ConfigError, match="min_bucket_size"):
        random_halving_partition(fresh, np.random.default_rng(0), min_bucket_size=0)
    with pytest.raises(ConfigError, match="rng"):
        random_halving_partition(fresh, 0)
    with pytest.raises(ConfigError, match="split_codes"):
        mondrian_tuple_partition(np.zeros((2, 1)), fresh)
    with pytest.raises(ConfigError, match="categorical"):
        mondrian_tuple_partition(np.zeros((3, 1)), fresh, categorical=np.array([True, False]))
    with pytest.raises(ConfigError, match="too large"):
        mondrian_tuple_partition(np.zeros((3, 1)), SlicedDiversity(keys, q, s, 2, 2))
