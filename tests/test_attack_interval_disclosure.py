"""Interval disclosure (sdcMicro's dRisk) as an adversary runs it: hand-computed shares, the original
as its own release (every record disclosed), and a heavily noised release that holds."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError

CONFIG = parse_config(
    "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n  y: {role: sensitive, kind: numeric}\n"
)


def _read(frame: pl.DataFrame):
    return CONFIG.read(frame)


def test_hand_computed_shares():
    # released x: mean 3.7, sd (n - 1) = sqrt(27.22 / 4) = 2.6087, so k = 0.05 gives ±0.13043;
    # |x - x'| = 0.1, 0.5, 0, 0.1, 2 -> records 1, 3, 4 inside; around the released median 3 only record 3.
    original = _read(pl.DataFrame({"x": [1.0, 2, 3, 4, 10], "y": [0.0, 0, 0, 0, 0]}))
    release = _read(pl.DataFrame({"x": [1.1, 2.5, 3, 3.9, 8], "y": [0.0, 0, 0, 0, 0]}))
    result = run_attack("interval-disclosure", original, release, params={"attributes": "x"})
    assert (result.attack.successes, result.attack.trials) == (3, 5)
    assert result.baseline is not None and result.baseline.successes == 1
    assert result.details["inside_share_by_attribute"] == {"x": 0.6}
    # y is constant (sd 0): an interval of width 0 holds exactly the equal values, here all of them
    both = run_attack("interval-disclosure", original, release)
    assert both.details["attributes"] == ["x", "y"]
    assert both.attack.successes == 3
    wide = run_attack("interval-disclosure", original, release, params={"attributes": "x", "k": 1.0})
    assert wide.attack.successes == 5  # ±2.6087: every record, |10 - 8| = 2 included
    assert wide.details["inside_share_by_attribute"]["x"] == 1.0


def test_missing_values_never_count_as_outside():
    # as dRisk's rowSums(..., na.rm = TRUE): a missing value on either side is not outside
    original = _read(pl.DataFrame({"x": [1.0, None, 3.0, 4.0], "y": [1.0, 2.0, 3.0, 4.0]}))
    release = _read(pl.DataFrame({"x": [1.0, 2.0, None, 40.0], "y": [1.0, 2.0, 3.0, 4.0]}))
    result = run_attack("interval-disclosure", original, release, params={"attributes": "x"})
    assert result.attack.successes == 3


def test_the_original_as_its_own_release_fails():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"x": rng.normal(50, 10, 1000), "y": rng.normal(0, 1, 1000)})
    table = _read(frame)
    result = run_attack("interval-disclosure", table, table, params={"max_risk": 0.1})
    assert result.attack.successes == 1000
    assert result.verdict == "fails"


def test_a_heavily_noised_release_holds():
    rng = np.random.default_rng(4)
    x = rng.normal(50, 10, 2000)
    y = rng.normal(0, 1, 2000)
    original = _read(pl.DataFrame({"x": x, "y": y}))
    noised = _read(pl.DataFrame({"x": x + rng.normal(0, 30, 2000), "y": y + rng.normal(0, 3, 2000)}))
    result = run_attack("interval-disclosure", original, noised, params={"max_risk": 0.1})
    # P(|noise| < 0.05 · sd(released)) per attribute is about 0.04; both attributes: about 0.0016
    assert result.attack.successes < 20
    assert result.verdict == "holds"


def test_bad_attributes_are_named():
    table = _read(pl.DataFrame({"x": [1.0, 2.0], "y": [1.0, 2.0]}))
    with pytest.raises(ConfigError, match="attributes: 'z' is not a column of the original"):
        run_attack("interval-disclosure", table, table, params={"attributes": "z"})
    with pytest.raises(ConfigError, match="k"):
        run_attack("interval-disclosure", table, table, params={"k": 0})
