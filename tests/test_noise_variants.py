"""Noise addition's ``restricted`` and ``outliers`` variants (sdcMicro's addNoise "restr" and "outdect").

* Hand-computed: sdcMicro's factor ``c`` on both sides of 500 records, its deterministic release
  ``c·x + (1 − c)·x̄`` (ours with the noise set to zero), the 99 % quantile cut of ten values, the
  scale ``1.96·sd/sqrt(n)·α`` of the outliers' noise.
* sdcMicro's testthat expectations (tests/testthat/test_addNoise.R): every column changes, more noise
  changes more, one column all missing is an error for outdect.
* Statistics: the restricted release keeps means and covariances in expectation; planted far points
  are multivariate outliers; a record that is no outlier is released as it is.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.anonymize import METHODS
from sdckit.anonymize._noise_variants import (
    mcd_estimate,
    outlier_noise,
    restricted_factor,
    restricted_release,
    robust_outliers,
    upper_quantile_outliers,
)
from sdckit.anonymize.perturbation import NoiseFigures, add_noise
from sdckit.errors import InputError
from sdckit.table import Attribute, Kind, Role, Schema, Table

pytest.importorskip("sklearn")


def numbers(columns: dict[str, np.ndarray]) -> Table:
    schema = Schema(tuple(Attribute(name, Role.QUASI_IDENTIFIER, Kind.NUMERIC) for name in columns))
    return Table(pl.DataFrame(columns), schema)


def sdcmicro_sample(n: int, seed: int = 3) -> Table:
    """Like testthat's ``runif(3n, 1, 100)`` in an n × 3 frame."""
    values = np.random.default_rng(seed).uniform(1, 100, size=(n, 3))
    return numbers({f"V{j + 1}": values[:, j] for j in range(3)})


def released(release, names) -> np.ndarray:
    table = release.table if hasattr(release, "table") else release
    return np.column_stack([table.column(name).to_numpy() for name in names])


def test_restricted_factor_on_both_sides_of_500_records():
    assert restricted_factor(100, 0.5) == pytest.approx(math.sqrt(98.5 / 151.5))  # 0.806328
    assert restricted_factor(100, 0.5) == pytest.approx(0.806328, abs=1e-6)
    assert restricted_factor(1000, 1.5) == pytest.approx(math.sqrt(999 / 2499))  # 0.632276
    assert restricted_factor(499, 0.1) == pytest.approx(math.sqrt(497.9 / (500 * 1.1)))
    assert restricted_factor(500, 0.1) == pytest.approx(math.sqrt(499 / 549))


def test_restricted_without_noise_is_sdcmicros_restr():
    # sdcMicro's restr: cc·x + (1 − cc)·colMeans(x); n = 3, noise = 150 → cc = sqrt(0.5/10)
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 9.0]])
    cc = math.sqrt(0.05)
    expected = np.array(
        [
            [cc * 1 + (1 - cc) * 3, cc * 2 + (1 - cc) * 5],
            [3.0, cc * 4 + (1 - cc) * 5],
            [cc * 5 + (1 - cc) * 3, cc * 9 + (1 - cc) * 5],
        ]
    )
    assert restricted_release(x, np.zeros_like(x), 1.5) == pytest.approx(expected)
    assert expected[0, 0] == pytest.approx(2.552786, abs=1e-6)


def test_restricted_keeps_means_and_covariances_in_expectation():
    rng = np.random.default_rng(0)
    x = rng.multivariate_normal([10.0, -5.0], [[4.0, 2.0], [2.0, 3.0]], size=20_000)
    table = numbers({"a": x[:, 0], "b": x[:, 1]})
    out = released(add_noise(table, noise="restricted", amount=50, seed=4), ["a", "b"])
    assert out.mean(axis=0) == pytest.approx(x.mean(axis=0), abs=0.05)
    assert np.cov(out, rowvar=False) == pytest.approx(np.cov(x, rowvar=False), rel=0.05, abs=0.05)
    assert np.abs(out - x).mean() > 0.5  # noise, not a shrinkage alone


@pytest.mark.parametrize(("noise", "n"), [("restricted", 5), ("outliers", 10)])
def test_sdcmicro_expectations_every_column_changes_and_more_noise_changes_more(noise, n):
    table = sdcmicro_sample(n)
    names = ["V1", "V2", "V3"]
    x = released(table, names)
    big = released(add_noise(table, noise=noise, amount=150, seed=3), names)
    small = released(add_noise(table, noise=noise, amount=20, seed=3), names)
    assert np.all(np.abs(big - x).mean(axis=0) > 0)
    assert np.abs(big - x).mean() > np.abs(small - x).mean()


def test_outliers_with_a_column_all_missing_is_an_error():
    table = sdcmicro_sample(10)
    table = Table(table.data.with_columns(pl.lit(None, dtype=pl.Float64).alias("V2")), table.schema)
    with pytest.raises(InputError, match="records without missing values"):
        add_noise(table, noise="outliers", amount=150)


def test_the_99_percent_quantile_cut_of_ten_values():
    # type 7: 9 + 0.91·(10 − 9) = 9.91, so only the 10 is above
    x = np.column_stack([np.arange(1.0, 11.0), np.arange(10.0, 0.0, -1.0)])
    assert np.flatnonzero(upper_quantile_outliers(x)).tolist() == [0, 9]
    x[3, 0] = np.nan  # ignored, never flagged
    assert not upper_quantile_outliers(x)[3]


def test_planted_far_points_are_multivariate_outliers():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 2))
    x[[5, 50, 200]] = [[8.0, -8.0], [-9.0, 9.0], [0.0, 12.0]]
    flagged = robust_outliers(x, seed=0)
    assert flagged[[5, 50, 200]].all()
    assert flagged.sum() < 20  # about 2.5 % of the others


def test_outlier_noise_has_sdcmicros_scale_and_leaves_the_others():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((400, 2)) * [1.0, 10.0]
    x[7] = [30.0, 300.0]
    out, flagged = outlier_noise(x, 1.5, np.random.default_rng(9), seed=0)
    assert flagged[7]
    assert np.array_equal(out[~flagged], x[~flagged])
    # the same draws, scaled by 1.96·sd_j/sqrt(n)·α
    draws = np.random.default_rng(9)
    for j in range(2):
        scale = 1.96 * x[:, j].std(ddof=1) / math.sqrt(400) * 1.5
        expected = x[flagged, j] + draws.standard_normal(int(flagged.sum())) * scale
        assert out[flagged, j] == pytest.approx(expected)


def test_outliers_summary_and_missing_values():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((200, 2))
    x[0] = [10.0, 10.0]
    a = x[:, 0].copy()
    a[1] = np.nan
    table = numbers({"a": a, "b": x[:, 1]})
    release = add_noise(table, noise="outliers", amount=150, seed=1)
    figures = release.figures_as(NoiseFigures)
    assert figures.outliers is not None and figures.outliers >= 1
    assert release.table.column("a")[1] is None
    summary = METHODS.get("noise").summary(release)
    assert summary["outliers"] == figures.outliers
    assert "outliers" not in METHODS.get("noise").summary(add_noise(table, seed=1))
    again = add_noise(table, noise="outliers", amount=150, seed=1)
    assert again.table.data.equals(release.table.data)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 40), st.floats(0.01, 3.0), st.integers(0, 2**31))
def test_restricted_without_noise_keeps_means_and_scales_spread_by_c(n, alpha, seed):
    x = np.random.default_rng(seed).normal(size=(n, 2)) * [1.0, 5.0]
    c = (n - 1 - alpha) / ((n + 1) * (1 + alpha))
    if c <= 0:
        with pytest.raises(InputError):
            restricted_release(x, np.zeros_like(x), alpha)
        return
    out = restricted_release(x, np.zeros_like(x), alpha)
    assert out.mean(axis=0) == pytest.approx(x.mean(axis=0), abs=1e-9)
    assert out.std(axis=0) == pytest.approx(math.sqrt(c) * x.std(axis=0), rel=1e-9, abs=1e-12)


def test_the_mcd_is_consistent_at_the_normal_and_bounded_under_contamination():
    rng = np.random.default_rng(6)
    covariance = np.array([[4.0, 1.2], [1.2, 1.0]])
    x = rng.multivariate_normal([3.0, -1.0], covariance, size=20_000)
    location, scatter = mcd_estimate(x, seed=0)
    assert location == pytest.approx([3.0, -1.0], abs=0.05)
    assert scatter == pytest.approx(covariance, rel=0.05, abs=0.03)
    # 20 % far away: the location stays, the scatter stays of the clean data's order (robustbase's
    # consistency factors assume clean data, so it is inflated, not broken: the classical variance
    # of the first column would be about 27)
    x[:4000] = rng.multivariate_normal([15.0, 10.0], np.eye(2), size=4000)
    location, scatter = mcd_estimate(x, seed=0)
    assert location == pytest.approx([3.0, -1.0], abs=0.1)
    assert 4.0 < scatter[0, 0] < 8.0 and np.cov(x, rowvar=False)[0, 0] > 20


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_scatter_singular_to_rounding_is_refused_whatever_the_blas_does():
    # Every record on the plane z = x + 2y (up to z's rounding): no pivot is exactly 0, so LAPACK
    # inverts the scatter (condition 1e16 here; CASC's, 3e19, inverted under numpy 2.4's OpenBLAS),
    # and the distances would be rounding noise. The refusal must not depend on the BLAS build.
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=1000) * 1000.0, rng.normal(size=1000)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        mcd_estimate(np.column_stack([x, y, x + 2.0 * y]), 1)
    with pytest.raises(InputError, match="singular"):
        robust_outliers(np.column_stack([x, y, x + 2.0 * y]), 1)
    # Off the plane, in units a million times apart: not refused (the check is scale-free).
    z = x + 2.0 * y + rng.normal(scale=50.0, size=1000)
    location, scatter = mcd_estimate(np.column_stack([x * 1e6, y, z]), 1)
    spread = np.sqrt(np.diag(scatter))
    assert np.isfinite(location).all() and np.linalg.matrix_rank(scatter / np.outer(spread, spread)) == 3
