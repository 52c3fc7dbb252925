"""sdcMicro's group statistics (``means()`` of R/microaggregation.R): hand-computed values and R's
definitions (mean(x, trim=), median, mad, weightedQuantile), and an independent oracle per group."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from scipy import stats

from sdckit.anonymize._microaggregation_aggregate import (
    MEASURES,
    ONESTEP_CONSTANT,
    group_statistics,
    record_statistics,
)
from sdckit.errors import ConfigError

X = np.array([[1.0, 10], [2, 20], [3, 30], [100, 40], [5, 50], [6, 60], [7, 70]])
LABELS = np.array([0, 0, 0, 1, 1, 1, 1])


def test_mean_and_median_by_hand():
    np.testing.assert_allclose(group_statistics(X, LABELS, "mean"), [[2, 20], [29.5, 55]])
    # R: median(c(100, 5, 6, 7)) = 6.5 (mean of the two middle values)
    np.testing.assert_allclose(group_statistics(X, LABELS, "median"), [[2, 20], [6.5, 55]])


def test_trim_follows_r_floor_rule():
    # R: mean(c(100, 5, 6, 7), trim = 0.25): floor(4 * 0.25) = 1 dropped each side -> mean(6, 7)
    np.testing.assert_allclose(group_statistics(X, LABELS, "trim", trim=0.25)[1, 0], 6.5)
    # trim = 0.2: floor(0.8) = 0 dropped -> the plain mean
    np.testing.assert_allclose(group_statistics(X, LABELS, "trim", trim=0.2)[1, 0], 29.5)
    # trim >= 0.5: R returns the median
    np.testing.assert_allclose(group_statistics(X, LABELS, "trim", trim=0.5)[1, 0], 6.5)
    # 10 values, trim 0.1: one dropped each side
    values = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 1000])
    got = group_statistics(values, np.zeros(10, dtype=np.int64), "trim", trim=0.1)
    assert got[0, 0] == pytest.approx(5.5)


def test_onestep_by_hand():
    # group 1, column 0: median 6.5, |x - 6.5| = 93.5, 1.5, 0.5, 0.5 -> raw MAD 1.0, R's mad 1.4826;
    # bound 6.5 + (3/1.486) * 1.4826 = 9.49314...; 100 is clipped to it.
    bound = 6.5 + 3 / 1.486 * 1.4826
    expected = (5 + 6 + 7 + bound) / 4
    assert group_statistics(X, LABELS, "onestep")[1, 0] == pytest.approx(expected, rel=1e-14)
    assert pytest.approx(2.0188425302826376) == ONESTEP_CONSTANT


def test_weighted_mean_and_sdcmicro_weighted_median():
    w = np.array([1.0, 1, 2, 1, 1, 1, 1])
    # weighted.mean(c(1, 2, 3), c(1, 1, 2)) = 9 / 4
    assert group_statistics(X, LABELS, "mean", weights=w)[0, 0] == pytest.approx(2.25)
    # weightedQuantile: rw = 0.25, 0.5, 1 -> rw[2] == 0.5 exactly -> mean(x[2], x[3]) = 2.5
    assert group_statistics(X, LABELS, "median", weights=w)[0, 0] == 2.5
    # weights 1, 3, 1 on (3, 1, 2): sorted 1 (w 3), 2, 3 -> rw = 0.6 >= 0.5 at the first -> 1
    one = np.zeros(3, dtype=np.int64)
    got = group_statistics(np.array([3.0, 1, 2]), one, "median", weights=np.array([1.0, 3, 1]))
    assert got[0, 0] == 1.0
    # all weights 0: sdcMicro returns 0
    zero = group_statistics(np.array([3.0, 1, 2]), one, "median", weights=np.zeros(3))
    assert zero[0, 0] == 0.0
    # trim and onestep ignore the weights (as sdcMicro)
    for measure in ("trim", "onestep"):
        np.testing.assert_array_equal(
            group_statistics(X, LABELS, measure, trim=0.25, weights=w),
            group_statistics(X, LABELS, measure, trim=0.25),
        )


def _oracle(values: np.ndarray, measure: str, trim: float) -> float:
    if measure == "mean":
        return statistics.fmean(values)
    if measure == "median":
        return statistics.median(values)
    if measure == "trim":
        return statistics.median(values) if trim >= 0.5 else float(stats.trim_mean(values, trim))
    med = statistics.median(values)
    mad = 1.4826 * statistics.median([abs(v - med) for v in values])
    c = 3 / 1.486
    return statistics.fmean([min(max(v, med - c * mad), med + c * mad) for v in values])


@pytest.mark.parametrize("measure", MEASURES)
def test_random_groups_against_an_oracle(measure):
    rng = np.random.default_rng(3)
    x = np.round(rng.lognormal(3, 1, size=(300, 3)), 1)
    labels = rng.integers(0, 40, size=300)
    got = group_statistics(x, labels, measure, trim=0.2)
    for g in range(40):
        rows = x[labels == g]
        for c in range(3):
            assert got[g, c] == pytest.approx(_oracle(rows[:, c], measure, 0.2), rel=1e-12)
    per_record = record_statistics(x, labels, measure, trim=0.2)
    np.testing.assert_array_equal(per_record, got[labels])


def test_an_empty_group_is_nan_and_an_unknown_measure_is_refused():
    got = group_statistics(np.array([1.0, 2.0]), np.array([0, 2]), "median")
    assert np.isnan(got[1, 0]) and got[2, 0] == 2.0
    with pytest.raises(ConfigError, match="^measure must be one of mean, median, trim, onestep, got 'mode'$"):
        group_statistics(X, LABELS, "mode")


def _weighted_median_oracle(values: np.ndarray, weights: np.ndarray) -> float:
    """sdcMicro's weightedQuantile(x, w, 0.5), transcribed from its R definition."""
    order = sorted(range(len(values)), key=lambda i: values[i])  # stable, as R's order
    x = [values[i] for i in order]
    cumulative = np.cumsum([weights[i] for i in order]) / sum(weights)
    select = next(i for i, share in enumerate(cumulative) if share >= 0.5)
    return (x[select] + x[select + 1]) / 2 if cumulative[select] == 0.5 else x[select]


@pytest.mark.parametrize("size", [3, 7, 33, 120])
def test_small_and_large_groups_against_the_oracles(size):
    rng = np.random.default_rng(size)
    n = size * 5
    x = np.round(rng.normal(50, 20, size=(n, 2)), 0)  # ties
    labels = np.repeat(np.arange(5), size)
    rng.shuffle(labels)
    w = rng.integers(1, 4, size=n).astype(float)
    weighted = group_statistics(x, labels, "median", weights=w)
    for measure in MEASURES:
        got = group_statistics(x, labels, measure, trim=0.1)
        for g in range(5):
            for c in range(2):
                rows = x[labels == g, c]
                assert got[g, c] == pytest.approx(_oracle(rows, measure, 0.1), rel=1e-12)
                expected = _weighted_median_oracle(rows, w[labels == g])
                assert weighted[g, c] == expected
