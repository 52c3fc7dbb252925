"""anonymeter's attribute-inference attack as sdckit runs it: guesses counted by hand (the mixed-type
distance scales numbers by their range), anonymeter's own expected rates and tolerance cases, the
original as its own release (fails) and an independent sample (holds)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.attack.base import run_attack
from sdckit.attack.inference import InferenceParams, _right
from sdckit.config import parse_config
from sdckit.errors import ConfigError

CONFIG = parse_config(
    "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n"
    "  c: {role: quasi-identifier, kind: categorical}\n"
    "  s: {role: sensitive, kind: categorical}\n"
)


def _read(x, c, s):
    return CONFIG.read(pl.DataFrame({"x": x, "c": c, "s": s}))


def test_guesses_counted_by_hand():
    release = _read([0, 10, 100], ["a", "b", "a"], ["p", "q", "r"])
    # the range of x over the release and the targets is 100. (5, b): 0.05 + 1, 0.05 + 0, 0.95 + 1 -> q,
    # right. (90, b): 0.9 + 1, 0.8 + 0, 0.1 + 1 -> q, wrong (r; raw distances would pick r). (40, a):
    # 0.4, 0.3 + 1, 0.6 -> p, right. 2 of 3.
    original = _read([5, 90, 40], ["b", "b", "a"], ["q", "r", "p"])
    result = run_attack("inference", original, release)
    assert (result.attack.successes, result.attack.trials) == (2, 3)
    assert result.details["secret"] == "s" and result.details["aux_cols"] == ["x", "c"]


def test_blind_baseline_counted_by_hand():
    # every release record's secret is p: the blind guess is right on the targets whose secret is p
    release = _read([0, 1, 2, 3, 4], ["a"] * 5, ["p"] * 5)
    original = _read([0, 1, 2, 3], ["a"] * 4, ["p", "p", "q", "q"])
    result = run_attack("inference", original, release)
    assert result.baseline is not None and (result.baseline.successes, result.baseline.trials) == (2, 4)


@pytest.mark.parametrize(
    "release, expected",
    [([["a", "b"], ["c", "d"]], 2), ([["a", "b"], ["c", "e"]], 1), ([["a", "h"], ["c", "g"]], 0)],
)
def test_anonymeters_own_rates(release, expected):
    # anonymeter's tests/test_inference_evaluator.py: original a b / c d, aux c0, secret c1
    config = parse_config("attributes:\n  c0: {kind: categorical}\n  c1: {kind: categorical}\n")
    original = config.read(pl.DataFrame({"c0": ["a", "c"], "c1": ["b", "d"]}))
    rows = config.read(pl.DataFrame({"c0": [r[0] for r in release], "c1": [r[1] for r in release]}))
    result = run_attack("inference", original, rows, original, params={"secret": "c1", "aux_cols": "c0"})
    assert result.attack.successes == expected
    assert result.control is not None and result.control.successes == expected


@pytest.mark.parametrize(
    "guesses, secrets, tolerance, expected",
    [  # anonymeter's regression cases (tests/test_inference_evaluator.py)
        ((1.0, 1.0), (1.0, 1.0), 0.05, (True, True)),
        ((1.01, 1.0), (1.0, 1.01), 0.05, (True, True)),
        ((1.0, 1.0), (2.0, 1.01), 0.05, (False, True)),
        ((1.0, 1.0), (1.05, 1.06), 0.05, (True, False)),
        ((1.0, 1.0), (1.05, 1.06), 0.06, (True, True)),
        ((np.nan, np.nan), (np.nan, np.nan), 0.06, (True, True)),
        ((1.0, np.nan), (np.nan, 1.06), 0.06, (False, False)),
        ((1.0, 1.0), (1.26, 1.25), 0.25, (False, True)),
        ((-1.0, -100.0), (5.0, -104.0), 0.05, (False, True)),  # anonymeter: (True, True)
    ],
)
def test_regression_tolerance(guesses, secrets, tolerance, expected):
    params = InferenceParams(regression=True, tolerance=tolerance, secret="s")
    right = _right(np.array(guesses), np.array(secrets), params)
    assert tuple(bool(v) for v in right) == expected


def test_categorical_guesses_and_missing_values():
    params = InferenceParams(secret="s")
    guesses, secrets = np.array([0.0, np.nan, np.nan, 1.0]), np.array([0.0, np.nan, 2.0, 2.0])
    assert _right(guesses, secrets, params).tolist() == [True, True, False, False]


def _population(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return _read(rng.normal(0, 1, n), rng.choice(list("abc"), n), rng.choice(list("pqrst"), n))


def test_the_original_as_its_own_release_fails():
    original, control = _population(3000, 1), _population(3000, 2)
    result = run_attack("inference", original, original, control, params={"max_risk": 0.1})
    assert result.attack.successes == 500  # the nearest release record is the record itself
    assert result.control is not None and 0.14 < result.control.value < 0.26  # the secret is random: 1/5
    assert result.verdict == "fails"


def test_an_independent_sample_holds():
    original, release, control = _population(3000, 1), _population(3000, 3), _population(3000, 2)
    result = run_attack("inference", original, release, control, params={"max_risk": 0.15})
    assert result.risk.low == 0.0
    assert result.verdict == "holds"


def test_bad_parameters_are_named():
    table = _read([1.0, 2.0], ["a", "b"], ["p", "q"])
    with pytest.raises(ConfigError, match="tolerance only applies with regression"):
        run_attack("inference", table, table, params={"tolerance": 0.1})
    with pytest.raises(ConfigError, match="aux_cols: 's' is the secret"):
        run_attack("inference", table, table, params={"aux_cols": "x,s"})
    with pytest.raises(ConfigError, match="secret: 'z' is not a column of the original"):
        run_attack("inference", table, table, params={"secret": "z"})
    with pytest.raises(ConfigError, match="regression guesses a number"):
        run_attack("inference", table, table, params={"regression": True})


def test_ties_are_broken_for_each_target_on_its_own():
    # two release records equally close to every target, secrets p and q; every target's secret is p:
    # each guess is right with probability 1/2 (not all right or all wrong, as one order for all gives)
    release = _read([1.0, 1.0], ["a", "a"], ["p", "q"])
    original = _read(np.ones(2000), ["a"] * 2000, ["p"] * 2000)
    result = run_attack("inference", original, release, params={"n_attacks": 2000})
    assert abs(result.attack.successes - 1000) < 4 * np.sqrt(2000 / 4)
