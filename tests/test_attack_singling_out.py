"""anonymeter's singling-out attack as sdckit runs it: predicates counted by hand on small releases,
Cohen & Nissim's size model against numerical integration, the original as its own release (fails)
and an independent sample (holds)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import integrate

from sdckit.attack.base import run_attack, wilson_rate
from sdckit.attack.singling_out import _model
from sdckit.config import parse_config
from sdckit.errors import ConfigError

CONFIG = parse_config(
    "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n"
    "  c: {role: quasi-identifier, kind: categorical}\n"
)


def _read(x, c):
    return CONFIG.read(pl.DataFrame({"x": x, "c": c}))


def test_univariate_predicates_counted_by_hand():
    # release: x 1, 3, 3, 7; c a, a, d, b. Predicates isolating one release record: x <= 1, x >= 7,
    # x == 1, x == 7 (3 is held twice), c == 'd', c == 'b' (a twice): six.
    release = _read([1, 3, 3, 7], ["a", "a", "d", "b"])
    # on the original x <= 1 and x == 1 isolate record 0; x >= 7, x == 7, c == 'd' match none;
    # c == 'b' matches two.
    original = _read([1, 2, 3, 5], ["a", "a", "b", "b"])
    # control: only x == 7 isolates one (x <= 1 and x == 1 match two, c == 'd' and c == 'b' two each)
    control = _read([7, 1, 1, 9], ["b", "b", "d", "d"])
    result = run_attack(
        "singling-out", original, release, control, params={"mode": "univariate", "n_attacks": 10}
    )
    assert (result.attack.successes, result.attack.trials) == (2, 10)  # unfound predicates count as failures
    assert result.details["predicates_found"] == 6
    assert result.control is not None and result.control.successes == 1
    assert result.details["control_size_factor"] is None  # as many distinct records: no correction
    expected = wilson_rate(2, 10)
    assert result.attack.value == pytest.approx(expected.value)
    control_rate = wilson_rate(1, 10)
    risk = (expected.value - control_rate.value) / (1 - control_rate.value)
    assert result.risk.value == pytest.approx(risk)


def test_multivariate_predicates_counted_by_hand():
    # n_cols = 2 of 2 columns: each release record gives one predicate. Median of x 2.5:
    # record 0: x <= 1 & c == a (isolates), 1: x <= 2 & c == a (two), 2: x >= 3 & c == b (two),
    # 3: x >= 4 & c == b (isolates).
    release = _read([1, 2, 3, 4], ["a", "a", "b", "b"])
    # original: x <= 1 & c == a isolates (1, a); x >= 4 & c == b matches (5, b) and (4, b)
    original = _read([1, 5, 2, 4, 4], ["a", "b", "a", "b", "c"])
    result = run_attack("singling-out", original, release, params={"n_cols": 2, "n_attacks": 5})
    assert result.details["predicates_found"] == 2
    assert (result.attack.successes, result.attack.trials) == (1, 5)
    assert result.control is None
    assert result.risk.value == pytest.approx(result.attack.value)  # no control: the attack rate


def test_duplicates_are_dropped_first():
    # (1, a) twice in the original is one distinct record: x <= 1 & c == a isolates it (it would
    # match two records otherwise), and x >= 4 & c == b isolates (5, b)
    release = _read([1, 2, 3, 4], ["a", "a", "b", "b"])
    original = _read([1, 1, 5], ["a", "a", "b"])
    result = run_attack("singling-out", original, release, params={"n_cols": 2, "n_attacks": 2})
    assert result.attack.successes == 2
    assert result.details["distinct_records"] == {"original": 2, "release": 4}


def test_blind_baseline_matches_its_expectation():
    # one value in the release (5); original 5, 6, 7: of the operators == != > < >= <=, == 5 and <= 5
    # isolate one record, so a blind predicate succeeds with probability 2/6
    release = _read([5, 5, 5], ["a", "a", "a"])
    original = _read([5, 6, 7], ["a", "a", "a"])
    result = run_attack(
        "singling-out", original, release, params={"mode": "univariate", "n_attacks": 3000, "attributes": "x"}
    )
    assert result.baseline is not None
    assert abs(result.baseline.successes - 1000) < 4 * np.sqrt(3000 * 2 / 9)


@pytest.mark.parametrize("n", [100, 4242])
@pytest.mark.parametrize("weight", [1 / 1000, 0.2314])
def test_size_model_is_the_integral_of_cohen_and_nissims_probability(n, weight):
    desired, _ = integrate.quad(lambda w: n * w * (1 - w) ** (n - 1), 0, weight)
    assert _model(n, weight, 1.0) == pytest.approx(desired, rel=1e-7)


POPULATION = parse_config(
    "attributes:\n" + "".join(f"  c{i}: {{role: quasi-identifier, kind: categorical}}\n" for i in range(3))
)


def _population(n: int, seed: int):
    # three attributes of 20 equally likely values: a predicate of all three has weight 1/8000, so in
    # 2,000 records it isolates the record it was written from with probability (1 - 1/8000)^1999 =
    # 0.78 and, in another sample, some record with probability 2000/8000 · 0.78 = 0.19
    rng = np.random.default_rng(seed)
    values = [f"v{v}" for v in range(20)]
    return POPULATION.read(pl.DataFrame({f"c{i}": rng.choice(values, n) for i in range(3)}))


def test_the_original_as_its_own_release_fails():
    original, control = _population(2000, 1), _population(2000, 2)
    result = run_attack("singling-out", original, original, control, params={"max_risk": 0.1})
    assert result.verdict == "fails"
    assert result.attack.successes == 500  # a predicate isolating a release record isolates it here
    assert result.control is not None and 0.12 < result.control.value < 0.26  # about 0.19


def test_an_independent_sample_holds():
    original, release, control = _population(2000, 1), _population(2000, 3), _population(2000, 2)
    result = run_attack("singling-out", original, release, control, params={"max_risk": 0.15})
    assert result.risk.low == 0.0  # the interval of the risk includes 0
    assert result.verdict == "holds"  # 500 predicates bound the risk to about ±0.06


def test_a_smaller_control_is_rescaled():
    original, control = _population(3000, 1), _population(1500, 2)
    result = run_attack("singling-out", original, _population(3000, 3), control)
    factor = result.details["control_size_factor"]
    assert factor is not None and factor > 0
    assert result.details["control_successes"] == pytest.approx(
        factor * result.details["control_successes"] / factor
    )


def test_bad_parameters_are_named():
    table = _read([1, 2], ["a", "b"])
    with pytest.raises(ConfigError, match="attributes: 'z' is not a column of the original"):
        run_attack("singling-out", table, table, params={"attributes": "z"})
    with pytest.raises(ConfigError, match="n_cols only apply"):
        run_attack("singling-out", table, table, params={"mode": "univariate", "n_cols": 2})
    with pytest.raises(ConfigError, match="n_attacks"):
        run_attack("singling-out", table, table, params={"n_attacks": 0})
    with pytest.raises(ConfigError, match="predicates of 3 attributes"):
        run_attack("singling-out", table, table)
