"""Synthetic data that holds (issue 36): exact copies and distances to the closest training record
against a holdout, rejection of the records too close, smoothing, and bounded regression draws."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize._synthesis_privacy import Reference, quantiles
from sdckit.anonymize.synthesis import SynthesisFigures, SynthesizeParams, synthesize
from sdckit.errors import ConfigError
from sdckit.table import Attribute, Kind, Role, Schema, Table


def gower_oracle(q_codes, q_values, r_codes, r_values, ranges):
    """Every pair's Gower distance by broadcasting, the minimum per query row."""
    cat = (q_codes[:, None, :] != r_codes[None, :, :]).sum(axis=2).astype(float)
    a, b = q_values[:, None, :], r_values[None, :, :]
    one_missing = np.isnan(a) ^ np.isnan(b)
    both = np.isnan(a) & np.isnan(b)
    num = np.where(one_missing, 1.0, np.where(both, 0.0, np.minimum(np.abs(a - b) / ranges, 1.0)))
    return (cat + num.sum(axis=2)).min(axis=1) / (q_codes.shape[1] + q_values.shape[1])


def test_distances_by_hand():
    """Two training records (a, x, 10) and (b, x, 20): age range 10."""
    reference = Reference(np.array([[0, 1], [1, 1]]), np.array([[10.0], [20.0]]))
    codes = np.array([[0, 1], [0, 1], [2, 0], [1, 1]])
    values = np.array([[15.0], [10.0], [np.nan], [50.0]])
    # (a,x,15): 0.5/3 to the first; exact copy; all three differ: 3/3; (b,x,50): |50-20|/10 capped at 1
    np.testing.assert_allclose(reference.dcr(codes, values), [0.5 / 3, 0.0, 1.0, 1 / 3])
    assert reference.copies(codes, values).tolist() == [False, True, False, False]
    assert quantiles(np.array([0.0, 1.0]))["q50"] == 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distances_against_the_broadcast_oracle(seed):
    rng = np.random.default_rng(seed)
    r_codes, q_codes = rng.integers(0, 3, (60, 3)), rng.integers(0, 3, (40, 3))
    r_values, q_values = rng.integers(0, 5, (60, 2)).astype(float), rng.integers(0, 6, (40, 2)).astype(float)
    r_values[rng.random((60, 2)) < 0.1] = np.nan
    q_values[rng.random((40, 2)) < 0.1] = np.nan
    reference = Reference(r_codes, r_values)
    np.testing.assert_allclose(
        reference.dcr(q_codes, q_values), gower_oracle(q_codes, q_values, r_codes, r_values, reference.ranges)
    )
    assert reference.ranges.tolist() == [4.0, 4.0]
    expected = gower_oracle(q_codes, q_values, r_codes, r_values, reference.ranges) == 0
    assert reference.copies(q_codes, q_values).tolist() == expected.tolist()


def small_table(n: int = 600, seed: int = 3) -> Table:
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.choice(["s", "m", "l"], n)
    age = rng.integers(18, 30, n)
    frame = pl.DataFrame({"colour": colour, "size": size, "age": age})
    schema = Schema(
        (
            Attribute("colour", role=Role.QUASI_IDENTIFIER),
            Attribute("size", role=Role.QUASI_IDENTIFIER),
            Attribute("age", role=Role.SENSITIVE, kind=Kind.NUMERIC),
        )
    )
    return Table(frame, schema)


def encoded(frame: pl.DataFrame) -> list[tuple]:
    return list(zip(*(frame[c].to_list() for c in ("colour", "size", "age")), strict=True))


def test_holdout_baseline_and_copies_match_a_direct_count():
    table = small_table()
    release = synthesize(table, m=2, holdout=0.25, seed=4)
    privacy = release.figures_as(SynthesisFigures).privacy
    order = np.random.default_rng([4, 36]).permutation(600)
    held, train = np.sort(order[:150]), np.sort(order[150:])
    training = set(encoded(table.data[train]))
    copies = np.mean([row in training for row in encoded(release.table.data.drop("implicate"))])
    baseline = np.mean([row in training for row in encoded(table.data[held])])
    assert privacy["training_records"] == 450 and release.table.n_records == 900
    assert privacy["exact_copies"] == pytest.approx(copies, abs=1e-6)
    assert privacy["holdout"]["records"] == 150
    assert privacy["holdout"]["exact_copies"] == pytest.approx(baseline, abs=1e-6)
    assert privacy["rejection"] is None and privacy["dcr_records"] == 900


def test_rejection_removes_the_copies_and_counts_what_it_kept():
    table = small_table()
    plain = synthesize(table, m=2, holdout=0.25, seed=4).figures_as(SynthesisFigures).privacy
    release = synthesize(table, m=2, holdout=0.25, reject_quantile=0.1, max_tries=30, seed=4)
    privacy = release.figures_as(SynthesisFigures).privacy
    rejection = privacy["rejection"]
    # 3 colours x 3 sizes x 12 ages = 108 cells for 450 records: most holdout records copy one
    assert privacy["holdout"]["dcr"]["q10"] == 0.0 and rejection["distance"] == 0.0
    assert plain["exact_copies"] > 0.5
    order = np.random.default_rng([4, 36]).permutation(600)
    training = set(encoded(table.data[np.sort(order[150:])]))
    copies = sum(row in training for row in encoded(release.table.data.drop("implicate")))
    assert copies == rejection["kept_too_close"]
    assert privacy["exact_copies"] == pytest.approx(copies / 900)
    assert rejection["rejected"] >= copies and 1 <= rejection["rounds"] <= 30


def test_smoothing_draws_new_values_inside_the_observed_range():
    table = small_table()
    plain = synthesize(table, m=1, seed=2).table.data["age"]
    smooth = synthesize(table, m=1, smooth=True, min_samples_leaf=20, seed=2).table.data["age"]
    assert set(plain.to_list()) <= set(table.data["age"].to_list())
    assert smooth.min() >= 18 and smooth.max() <= 29 and smooth.dtype == pl.Int64
    assert (smooth != plain).any()


def test_regression_draws_stay_within_the_observed_bounds():
    """A skewed, bounded attribute: y ≥ 0 with most values near 0, so a normal linear model draws
    negative values that must be redrawn (or clipped)."""
    rng = np.random.default_rng(5)
    n = 2000
    group = rng.choice(["a", "b"], n)
    y = np.round(rng.exponential(3.0, n) + np.where(group == "b", 5, 0))
    frame = pl.DataFrame({"group": group, "y": y.astype(np.int64)})
    schema = Schema(
        (
            Attribute("group", role=Role.QUASI_IDENTIFIER),
            Attribute("y", role=Role.SENSITIVE, kind=Kind.NUMERIC),
        )
    )
    release = synthesize(Table(frame, schema), m=3, model="regression", seed=1)
    values = release.table.data["y"]
    assert values.min() >= int(y.min()) and values.max() <= int(y.max())
    bounded = release.figures_as(SynthesisFigures).bounded["y"]
    assert bounded["redrawn"] > 100 and 0 <= bounded["clipped"] <= bounded["redrawn"]


def test_bad_privacy_parameters():
    table = small_table()
    with pytest.raises(ConfigError, match="reject_quantile"):
        SynthesizeParams.parse({"reject_quantile": 0.05})
    with pytest.raises(ConfigError, match="holdout"):
        synthesize(table, holdout=1.0)
    with pytest.raises(ConfigError, match="reject_quantile.*fully synthetic"):
        synthesize(table, attributes=["age"], holdout=0.2, reject_quantile=0.1)
    with pytest.raises(ConfigError, match="max_tries"):
        synthesize(table, holdout=0.2, reject_quantile=0.1, max_tries=0)
