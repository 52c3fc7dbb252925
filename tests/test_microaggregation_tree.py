"""Exact MDAV from a k-d tree (issue 35): ``mdav_tree`` gives the groups of the full-scan kernel
``mdav_generic_scan`` record for record, on random data with many exact ties (small integer grids,
duplicated records), arbitrary positive weights, ordinal attributes, k from 1 to 10 and n not a
multiple of k; the scan kernel is the oracle (it is itself checked against a numpy MDAV and against
sdcMicro's outputs in test_microaggregation.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize._mdav_tree import mdav_tree
from sdckit.anonymize._microaggregation_kernels import mdav_generic, mdav_generic_scan
from sdckit.anonymize.microaggregation import inverse_variance


def scan(X: np.ndarray, w: np.ndarray, k: int, ordinal: np.ndarray | None = None, cards=None) -> np.ndarray:
    n, d = X.shape
    ordinal = np.zeros(d, dtype=np.bool_) if ordinal is None else ordinal
    cards = np.zeros(d, dtype=np.int64) if cards is None else cards
    no_codes = np.zeros((n, 0), dtype=np.int64)
    return mdav_generic_scan(X, w, ordinal, cards, no_codes, np.zeros(0, dtype=np.int64), np.zeros(0), k)


def tree(X: np.ndarray, w: np.ndarray, k: int, ordinal: np.ndarray | None = None, cards=None) -> np.ndarray:
    d = X.shape[1]
    ordinal = np.zeros(d, dtype=np.bool_) if ordinal is None else ordinal
    cards = np.zeros(d, dtype=np.int64) if cards is None else cards
    return mdav_tree(X, w, ordinal, cards, k)


@st.composite
def datasets(draw):
    """(X, weights, k): n from k to 300 (deep enough for several tree levels: MDAV's leaves
    hold at most 64 records), values from a small integer grid, a normal cloud or both, some records
    duplicated."""
    k = draw(st.integers(1, 10))
    n = draw(st.integers(k, 300))
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
        w = inverse_variance(X) if n > 1 else np.ones(d)
    elif weights == "random":
        w = rng.uniform(0.01, 10.0, size=d)
    else:
        w = np.ones(d)
    return np.ascontiguousarray(X), np.ascontiguousarray(w), k


@settings(max_examples=300, deadline=None)
@given(datasets())
def test_tree_mdav_equals_the_scan_record_for_record(case):
    X, w, k = case
    np.testing.assert_array_equal(tree(X, w, k), scan(X, w, k))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.integers(12, 200))
def test_tree_mdav_with_ordinal_attributes_equals_the_scan(k, seed, n):
    rng = np.random.default_rng(seed)
    cards = np.array([4, 0, 7], dtype=np.int64)
    X = np.column_stack(
        [rng.integers(0, 4, n), np.round(rng.normal(size=n), 1), rng.integers(0, 7, n)]
    ).astype(float)
    ordinal = np.array([True, False, True])
    w = np.array([1 / 9, float(inverse_variance(X[:, 1:2])[0]), 1 / 36])
    np.testing.assert_array_equal(tree(X, w, k, ordinal, cards), scan(X, w, k, ordinal, cards))


@pytest.mark.parametrize("n", [2_000, 5_003])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_tree_mdav_equals_the_scan_on_skewed_data_with_ties(n, k):
    """Larger files than hypothesis draws: a heavy-tailed cloud (incomes-like) rounded to a coarse grid,
    so that many distances tie exactly, and 13 attributes as in the benchmark."""
    rng = np.random.default_rng(n + k)
    X = np.round(np.exp(rng.normal(size=(n, 13)) * [0.3 + 0.1 * j for j in range(13)]) * 4) / 4
    w = inverse_variance(X)
    np.testing.assert_array_equal(tree(X, w, k), scan(X, w, k))


def test_tree_mdav_hand_example():
    """Eight points on a line, k = 2, weight 1: centroid 4.625; the farthest is 10 (index 7), its
    nearest 8 (index 6); the farthest from 10 is 0 (index 0), its nearest 1 (index 1). Left 3, 4, 5, 6:
    centroid 4.5, farthest 3 and 6 tie at 2.25, the smaller index (2, value 3) wins with 4 (index 3);
    the last group is 5 and 6."""
    X = np.array([[0.0], [1.0], [3.0], [4.0], [5.0], [6.0], [8.0], [10.0]])
    expected = np.array([1, 1, 2, 2, 3, 3, 0, 0])
    np.testing.assert_array_equal(tree(X, np.ones(1), 2), expected)
    np.testing.assert_array_equal(scan(X, np.ones(1), 2), expected)


def test_mdav_generic_dispatches_nominal_attributes_to_the_scan():
    rng = np.random.default_rng(7)
    n = 60
    X = rng.normal(size=(n, 2))
    codes = rng.integers(0, 3, size=(n, 1))
    args = (
        X,
        np.ones(2),
        np.zeros(2, dtype=np.bool_),
        np.zeros(2, dtype=np.int64),
        codes,
        np.array([3]),
        np.array([0.5]),
        3,
    )
    np.testing.assert_array_equal(mdav_generic(*args), mdav_generic_scan(*args))


@pytest.mark.parametrize("kind", ["offset", "collinear", "constant column", "duplicated extremes"])
def test_tree_mdav_equals_the_scan_where_the_rotated_bounds_are_tight(kind):
    """The principal-axis bounds (rotated coordinates, enlarged by a slack) must never prune a winner:
    records far from the origin (the rotation's rounding grows with the offset), data on a line (a
    singular covariance), a constant column, and many exact copies of the extreme records, so that the
    farthest queries tie exactly."""
    rng = np.random.default_rng(11)
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
        X[rng.integers(0, n, 400)] = X[rng.choice(extremes, 400)]
    X = np.ascontiguousarray(X)
    w = inverse_variance(X)
    for k in (2, 3, 5):
        np.testing.assert_array_equal(tree(X, w, k), scan(X, w, k))


@pytest.mark.parametrize("k", [2, 3, 5])
def test_tree_mdav_equals_the_scan_on_tight_clusters(k):
    """The data of the benchmark in small: a few hundred centres with records in tight clouds around
    them (the farthest-from-the-seed queries then start from nearby seeds and reuse the bounds of the
    nodes opened before, see _cached_bound), some clouds collapsed to exact copies (ties)."""
    rng = np.random.default_rng(k)
    centres = rng.normal(size=(150, 13)) * rng.uniform(0.5, 3.0, size=13)
    rows = rng.integers(0, len(centres), 6_000)
    X = centres[rows] + rng.normal(size=(len(rows), 13)) * 0.05
    copies = np.isin(rows, np.arange(10))
    X[copies] = centres[rows[copies]]
    X = np.ascontiguousarray(X)
    w = inverse_variance(X)
    np.testing.assert_array_equal(tree(X, w, k), scan(X, w, k))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 6), st.floats(1e-3, 10.0))
def test_cached_bound_bounds_the_distances_to_a_new_query(seed, n, d, step):
    """_cached_bound against the exact distances: from the largest distance of a node's records to an
    earlier query, it must bound their distances to a new query, also after records were removed."""
    from sdckit.anonymize._mdav_tree import _cached_bound

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * rng.uniform(0.1, 5.0, size=d) + rng.normal(size=d) * 3
    q0 = rng.normal(size=d) * 4
    q = q0 + rng.normal(size=d) * step
    cache = np.array([((x - q0) ** 2).sum(axis=1).max()])
    live = x[: max(1, n // 2)]  # records removed since: the cached bound stays valid
    centre = x.mean(axis=0)
    lo, hi = live.min(axis=0)[None], live.max(axis=0)[None]
    rad = np.array([np.sqrt(((live - centre) ** 2).sum(axis=1).max())])
    bound = _cached_bound(lo, hi, centre[None], rad, 0, q, cache, q0[None], 0.0)
    # called with no slack: only the rounding of the terms (of the size below) may be missing
    rounding = 1e-12 * (cache[0] + ((q - q0) ** 2).sum() + ((centre - q0) ** 2).sum() + 1.0)
    assert bound + rounding >= ((live - q) ** 2).sum(axis=1).max()
    # exact (up to the relative 1e-9 enlargement) for one record when the query did not move
    exact = ((x[0] - q0) ** 2).sum()
    one = _cached_bound(x[:1], x[:1], x[:1], np.zeros(1), 0, q0, np.array([exact]), q0[None], 0.0)
    assert one == pytest.approx(exact, rel=2e-9)
