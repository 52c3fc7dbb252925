"""V-MDAV from a k-d tree (issue 35): ``vmdav_tree`` gives the groups of the full-scan kernel ``vmdav``
record for record, on random data with many exact ties (small integer grids, duplicated records),
arbitrary positive weights, k from 1 to 8, gamma from 0.05 to 10, n below k, below 2k and just above
k; the scan kernel is the oracle (it is itself checked on SPEC's worked example and on group sizes in
test_microaggregation.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize._microaggregation_kernels import vmdav
from sdckit.anonymize._vmdav_tree import VMDAV_TREE_FROM, vmdav_auto, vmdav_tree
from sdckit.anonymize.microaggregation import inverse_variance, vmdav_groups

GAMMAS = [0.05, 0.2, 0.5, 1.0, 1.1, 2.0, 10.0]


@st.composite
def datasets(draw):
    """(X, weights, k, gamma): n from 1 to 300 (several tree levels: leaves hold 32 records), values
    from a small integer grid, a normal cloud, a half-integer grid or few distinct records repeated."""
    k = draw(st.integers(1, 8))
    n = draw(st.one_of(st.integers(1, 2 * k + 1), st.integers(1, 300)))
    d = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["grid", "normal", "mixed", "duplicates"]))
    rng = np.random.default_rng(seed)
    if kind == "grid":
        X = rng.integers(0, draw(st.integers(1, 5)), size=(n, d)).astype(float)
    elif kind == "normal":
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 1e4, size=d)
    elif kind == "mixed":
        X = np.round(rng.normal(size=(n, d)) * 3) / 2
    else:
        distinct = rng.normal(size=(max(1, n // 7), d))
        X = distinct[rng.integers(0, len(distinct), n)]
    weights = draw(st.sampled_from(["inverse variance", "random", "one"]))
    if weights == "inverse variance":
        w = inverse_variance(X)
    elif weights == "random":
        w = rng.uniform(0.01, 10.0, size=d)
    else:
        w = np.ones(d)
    gamma = draw(st.one_of(st.sampled_from(GAMMAS), st.floats(0.01, 5.0)))
    return np.ascontiguousarray(X), np.ascontiguousarray(w), k, gamma


@settings(max_examples=400, deadline=None, derandomize=True)
@given(datasets())
def test_tree_vmdav_equals_the_scan_record_for_record(case):
    X, w, k, gamma = case
    np.testing.assert_array_equal(vmdav_tree(X, w, k, gamma), vmdav(X, w, k, gamma))


@pytest.mark.parametrize("n", [2_000, 5_003])
@pytest.mark.parametrize(("k", "gamma"), [(2, 0.2), (3, 1.1), (5, 0.5), (4, 10.0)])
def test_tree_vmdav_equals_the_scan_on_skewed_data_with_ties(n, k, gamma):
    """Larger files than hypothesis draws: a heavy-tailed cloud rounded to a coarse grid, so that
    many distances tie exactly, and 13 attributes as in the benchmark."""
    rng = np.random.default_rng(n + k)
    X = np.round(np.exp(rng.normal(size=(n, 13)) * [0.3 + 0.1 * j for j in range(13)]) * 4) / 4
    w = inverse_variance(X)
    np.testing.assert_array_equal(vmdav_tree(X, w, k, gamma), vmdav(X, w, k, gamma))


@pytest.mark.parametrize("kind", ["offset", "collinear", "constant column", "duplicated extremes"])
def test_tree_vmdav_equals_the_scan_where_the_rotated_bounds_are_tight(kind):
    """Records far from the origin, data on a line (a singular covariance), a constant column and many
    exact copies of the extreme records (the seeds tie exactly)."""
    rng = np.random.default_rng(12)
    n = 3_000
    if kind == "offset":
        X = 1e7 + np.round(rng.normal(size=(n, 6)) * 8)
    elif kind == "collinear":
        t = np.round(rng.normal(size=n) * 5)
        X = np.column_stack([t, 2 * t, -t + 3, 0.5 * t])
    elif kind == "constant column":
        X = np.column_stack([np.round(rng.normal(size=(n, 3)), 1), np.full(n, 4.0)])
    else:
        X = np.round(rng.normal(size=(n, 5)), 1)
        extremes = np.argsort(-np.abs(X).sum(axis=1))[:40]
        X = np.concatenate([X, X[extremes], X[extremes]])
    X = np.ascontiguousarray(X)
    w = inverse_variance(X)
    for gamma in (0.2, 1.1):
        np.testing.assert_array_equal(vmdav_tree(X, w, 3, gamma), vmdav(X, w, 3, gamma))


@pytest.mark.parametrize(
    ("gamma", "groups"),
    [(0.2, [[0, 4, 8], [34, 37, 38], [15, 23, 30]]), (1.1, [[0, 4, 8, 15], [23, 30, 34, 37, 38]])],
)
def test_tree_vmdav_spec_example(gamma, groups):
    """SPEC §4.2's example: 0, 4, 8, 15, 23, 30, 34, 37, 38 with k = 3."""
    X = np.array([0, 4, 8, 15, 23, 30, 34, 37, 38], float)[:, None]
    labels = vmdav_tree(X, inverse_variance(X), 3, gamma)
    assert [sorted(X[labels == g, 0].tolist()) for g in range(labels.max() + 1)] == groups


def test_tree_vmdav_hand_example():
    """0, 2, 3, 7, 10 with k = 2, weight 1, gamma 1.1: the centroid is 4.4, the farthest 10 (index 4),
    its nearest 7; the nearest outside is 3 at 4 from the group, but its nearest other is 2 at 1 and
    4 < 1.1 fails, so the group stays {7, 10}. Then the farthest is 0, with 2; the last record 3 is at
    1 from that group and has no other record outside (d_out infinite), so it joins."""
    X = np.array([[0.0], [2.0], [3.0], [7.0], [10.0]])
    expected = np.array([1, 1, 1, 0, 0])
    np.testing.assert_array_equal(vmdav_tree(X, np.ones(1), 2, 1.1), expected)
    np.testing.assert_array_equal(vmdav(X, np.ones(1), 2, 1.1), expected)


def test_fewer_records_than_k_make_one_group_as_in_the_scan():
    X = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(vmdav_tree(X, np.ones(2), 3, 0.2), vmdav(X, np.ones(2), 3, 0.2))
    np.testing.assert_array_equal(vmdav_tree(X, np.ones(2), 3, 0.2), [0, 0])


def test_vmdav_groups_uses_the_tree_from_its_threshold_with_the_same_groups():
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(VMDAV_TREE_FROM, 4)) * 3)
    w = inverse_variance(X)
    expected = vmdav(X, w, 3, 0.2)
    np.testing.assert_array_equal(vmdav_auto(X, w, 3, 0.2), expected)
    np.testing.assert_array_equal(vmdav_groups(X, 3, 0.2), expected)
