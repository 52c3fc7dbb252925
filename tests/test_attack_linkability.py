"""anonymeter's linkability attack as sdckit runs it: links counted by hand, anonymeter's own
expected risks on its four-record example, the original as its own release (fails) and an
independent sample (holds)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError

CONFIG = parse_config(
    "attributes:\n  a: {role: quasi-identifier, kind: numeric}\n"
    "  b: {role: quasi-identifier, kind: numeric}\n"
)


def _read(a, b):
    return CONFIG.read(pl.DataFrame({"a": a, "b": b}))


def test_links_counted_by_hand():
    release = _read([0, 10, 20], [0, 10, 20])
    # nearest on a / on b: (1, 1) -> 0 / 0 linked; (9, 19) -> 1 / 2; (21, 11) -> 2 / 1; (12, 8) -> 1 / 1
    # linked: 2 of 4. With 2 neighbours: (9, 19) -> {1, 0} / {2, 1}, (21, 11) -> {2, 1} / {1, 2}: 4 of 4
    original = _read([1, 9, 21, 12], [1, 19, 11, 8])
    one = run_attack("linkability", original, release, params={"aux_cols": "a/b"})
    assert (one.attack.successes, one.attack.trials) == (2, 4)  # n_attacks 500 > 4: every record
    two = run_attack("linkability", original, release, params={"aux_cols": "a/b", "n_neighbors": 2})
    assert two.attack.successes == 4
    assert one.details["aux_cols"] == [["a"], ["b"]]


@pytest.mark.parametrize(
    "n_neighbors, risk, interval",
    [(1, 0.3725, (0.045587, 0.699358)), (2, 0.7551, (0.5102, 1.0)), (3, 1.0 - 0.2449, (0.5102, 1.0))],
)
def test_anonymeters_own_example(n_neighbors, risk, interval):
    # anonymeter's tests/test_linkability_evaluator.py: col0 0, 0, 4, 0 and col1 0, 1, 9, 4 against a
    # release 0, 1, 4, 9 in both; one neighbour links only (0, 0), two or more link all four
    original = _read([0, 0, 4, 0], [0, 1, 9, 4])
    release = _read([0, 1, 4, 9], [0, 1, 4, 9])
    result = run_attack(
        "linkability", original, release, params={"aux_cols": "a/b", "n_neighbors": n_neighbors}
    )
    assert result.risk.value == pytest.approx(risk, abs=1e-4)
    assert (result.risk.low, result.risk.high) == pytest.approx(interval, abs=1e-4)


def test_distance_scales_numbers_by_their_range_and_counts_categories_as_one():
    config = parse_config(
        "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n"
        "  c: {role: quasi-identifier, kind: categorical}\n  y: {role: quasi-identifier, kind: numeric}\n"
    )
    # on (x, c): target (90, b) is 80/100 + 0 from (10, b), 10/100 + 1 from (100, a): (10, b) is
    # nearest (raw distances would pick (100, a)); on y the target is nearest (10, b)'s y, so linked
    release = config.read(pl.DataFrame({"x": [0, 10, 100], "c": ["a", "b", "a"], "y": [0.0, 5.0, 9.0]}))
    original = config.read(pl.DataFrame({"x": [90], "c": ["b"], "y": [5.1]}))
    result = run_attack("linkability", original, release, params={"aux_cols": "x,c/y"})
    assert result.attack.successes == 1


def test_blind_baseline_matches_its_expectation():
    # one random release record per half, 10 records: the two coincide with probability 1/10
    rng = np.random.default_rng(0)
    release = _read(np.arange(10.0), np.arange(10.0))
    original = _read(rng.normal(size=4000), rng.normal(size=4000))
    result = run_attack("linkability", original, release, params={"aux_cols": "a/b", "n_attacks": 4000})
    assert result.baseline is not None
    assert abs(result.baseline.successes - 400) < 4 * np.sqrt(4000 * 0.09)


def _population(n: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.normal(0, 1, n)
    return _read(a, a + rng.normal(0, 1, n))


def test_the_original_as_its_own_release_fails():
    original, control = _population(3000, 1), _population(3000, 2)
    result = run_attack(
        "linkability", original, original, control, params={"aux_cols": "a/b", "max_risk": 0.1}
    )
    assert result.attack.successes == 500  # each half's nearest release record is the record itself
    assert result.verdict == "fails"


def test_an_independent_sample_holds():
    original, release, control = _population(3000, 1), _population(3000, 3), _population(3000, 2)
    result = run_attack(
        "linkability", original, release, control, params={"aux_cols": "a/b", "max_risk": 0.1}
    )
    assert result.risk.low == 0.0
    assert result.verdict == "holds"


def test_bad_parameters_are_named():
    table = _read([1, 2], [1, 2])
    with pytest.raises(ConfigError, match="aux_cols must give two lists"):
        run_attack("linkability", table, table, params={"aux_cols": "a,b"})
    with pytest.raises(ConfigError, match="aux_cols: 'z' is not a column of the original"):
        run_attack("linkability", table, table, params={"aux_cols": "a/z"})
    with pytest.raises(ConfigError, match="n_neighbors"):
        run_attack("linkability", table, table, params={"n_neighbors": 0})
