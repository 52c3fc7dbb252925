"""The statistics every attack reports (Wilson rates, the residual risk, the verdict), the registry of
attacks and running several of them; values from anonymeter's own test expectations and by hand."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from sdckit.attack.base import (
    ATTACKS,
    AttackResult,
    Rate,
    residual_risk,
    run_attack,
    run_attacks,
    wilson_rate,
)
from sdckit.errors import ConfigError
from sdckit.table import Table


@pytest.mark.parametrize(
    ("successes", "value", "error"),
    [(850, 0.849, 0.022), (0, 0.002, 0.002), (1000, 0.998, 0.002)],  # anonymeter's test_success_rate
)
def test_wilson_rate_as_anonymeter_rounds_it(successes, value, error):
    rate = wilson_rate(successes, 1000, 0.95)
    assert round(rate.value, 3) == value
    assert round(rate.error, 3) == error


def test_wilson_rate_full_precision():
    # anonymeter's test_evaluation_results_confidence: 23 of 100 and 100 of 100 at 0.95, 100 of 100 at 0.68
    assert wilson_rate(23, 100).value == pytest.approx(0.23998824451588613, rel=1e-12)
    assert wilson_rate(23, 100).error == pytest.approx(0.08155558571285167, rel=1e-12)
    assert wilson_rate(100, 100).value == pytest.approx(0.9815032508965071, rel=1e-12)
    assert wilson_rate(100, 100, 0.68).error == pytest.approx(0.004896310516811869, rel=1e-12)
    # by hand: z = 1.959964, 5 of 20: (5 + z²/2) / (20 + z²) and z/(20 + z²) sqrt(5·15/20 + z²/4)
    z = 1.959963984540054
    assert wilson_rate(5, 20).value == pytest.approx((5 + z * z / 2) / (20 + z * z), rel=1e-12)
    assert wilson_rate(5, 20).error == pytest.approx(
        z / (20 + z * z) * math.sqrt(3.75 + z * z / 4), rel=1e-12
    )


def test_residual_risk_propagates_both_errors():
    # anonymeter's test_residual_success: (0.9 ± 0.02, 0.85 ± 0.02) -> 0.333 ± 0.16
    risk = residual_risk(Rate(9, 10, 0.9, 0.02), Rate(85, 100, 0.85, 0.02))
    assert round(risk.value, 3) == 0.333
    half = math.hypot(0.02 / 0.15, 0.02 * (0.9 - 1) / 0.15**2)
    assert round(half, 2) == 0.16
    assert (risk.low, risk.high) == pytest.approx((1 / 3 - half, 1 / 3 + half), rel=1e-12)
    exact = residual_risk(Rate(9, 10, 0.9, 0.0), Rate(8, 10, 0.8, 0.0))
    assert exact.value == pytest.approx(0.5)
    # no control: the attack rate and its interval, clipped to [0, 1]
    alone = residual_risk(Rate(1, 10, 0.1, 0.3), None)
    assert (alone.value, alone.low, alone.high) == pytest.approx((0.1, 0.0, 0.4))
    # a control attack that always succeeds leaves nothing to measure
    assert math.isnan(residual_risk(Rate(1, 1, 0.9, 0.0), Rate(1, 1, 1.0, 0.0)).value)


def _result(successes: int, trials: int, max_risk: float | None) -> AttackResult:
    return AttackResult("x", "nothing", wilson_rate(successes, trials), max_risk=max_risk)


def test_verdict_is_one_sided():
    assert _result(5, 1000, 0.05).verdict == "holds"  # interval about [0.002, 0.010]
    assert _result(500, 1000, 0.05).verdict == "fails"
    assert _result(50, 1000, 0.05).verdict == "undecided"  # 0.05 lies inside the interval
    assert not _result(50, 1000, 0.05).holds
    assert _result(500, 1000, None).verdict == "no threshold"
    assert _result(500, 1000, None).holds


def test_wilson_rate_needs_trials():
    with pytest.raises(ConfigError, match="at least one trial"):
        wilson_rate(0, 0)


def _tables(x: list[float], released: list[float]) -> tuple[Table, Table]:
    from sdckit.config import parse_config

    config = parse_config("attributes:\n  x: {role: quasi-identifier, kind: numeric}\n")
    return config.read(pl.DataFrame({"x": x})), config.read(pl.DataFrame({"x": released}))


def test_registry_lists_attacks_without_importing_them():
    assert "interval-disclosure" in ATTACKS.names()
    with pytest.raises(
        ConfigError, match="unknown attack 'interval-disclosur'.*did you mean interval-disclosure"
    ):
        ATTACKS.get("interval-disclosur")


def test_run_attacks_refuses_settings_of_attacks_not_run():
    original, release = _tables([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ConfigError, match="settings names nope, which is not run"):
        run_attacks(original, release, settings={"nope": {"k": 1}})
    with pytest.raises(ConfigError, match="does not take.*colour|colour"):
        run_attacks(original, release, settings={"interval-disclosure": {"colour": 1}})


def test_a_named_attack_that_does_not_apply_is_an_error_and_an_unnamed_one_is_skipped():
    original, _ = _tables([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    _, shorter = _tables([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ConfigError, match="interval-disclosure does not apply.*row-aligned"):
        run_attacks(original, shorter, attacks=["interval-disclosure"])
    report = run_attacks(original, shorter)
    assert "interval-disclosure" in report.skipped
    assert report.results == ()
    with pytest.raises(ConfigError, match="does not apply"):
        run_attack("interval-disclosure", original, shorter)


def test_report_summary_is_json_ready():
    import json

    original, release = _tables(list(np.arange(10.0)), list(np.arange(10.0)))
    report = run_attacks(original, release, settings={"interval-disclosure": {"max_risk": 0.5}})
    document = report.summary()
    json.dumps(document)
    (only,) = [entry for entry in document["attacks"] if entry["attack"] == "interval-disclosure"]
    assert only["attack_rate"]["successes"] == 10
    assert only["verdict"] == "fails"
    assert document["holds"] is False
