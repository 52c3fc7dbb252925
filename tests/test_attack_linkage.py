"""Record linkage as an attack: links and ties counted by hand, the original as its own release
(every record linked), a heavily noised release that holds, Fellegi–Sunter linkage on a release
that keeps or scrambles the compared values, and the parameters it refuses."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.table import Table

CONFIG = parse_config(
    "attributes:\n"
    "  x: {role: quasi-identifier, kind: numeric}\n"
    "  y: {role: quasi-identifier, kind: numeric}\n"
    "  g: {role: quasi-identifier, kind: categorical}\n"
)


def _read(frame: dict) -> Table:
    return CONFIG.read(pl.DataFrame(frame))


def test_hand_computed_links():
    # on x alone: 1.1 -> 1 (right); 2.6 -> 3 and 2.4 -> 2 (both wrong); 10 -> 10 (right); 15 is as far
    # from 10 as from 20: two tied nearest, its own among them, credit 1/2. Expected 2.5 -> 3 of 5.
    original = _read({"x": [1.0, 2, 3, 10, 20], "y": [0.0] * 5, "g": list("aaaaa")})
    release = _read({"x": [1.1, 2.6, 2.4, 10, 15], "y": [0.0] * 5, "g": list("aaaaa")})
    result = run_attack("linkage", original, release, params={"attributes": "x"})
    assert (result.attack.successes, result.attack.trials) == (3, 5)
    assert result.details["expected_rate"] == pytest.approx(0.5)
    assert result.details["unique_links"] == 2
    assert result.details["attributes"] == ["x"]
    assert result.baseline is not None and (result.baseline.successes, result.baseline.trials) == (1, 5)
    # a one-to-one assignment of least total distance: |1.1-1| + |2.6-3| + |2.4-2| + 0 + 5 beats
    # swapping 2 and 3 (0.6 + 0.6); so records 1, 4 and 5 are linked right: 3 of 5
    paired = run_attack("linkage", original, release, params={"attributes": "x", "assignment": "one-to-one"})
    assert paired.attack.successes == 3


def test_a_category_mismatch_costs_one():
    # x standardized by the original's sd (sqrt(2.5) = 1.58), a category mismatch adds 1 to the squared
    # distance; released record 2 changed its g from 'b' to 'a' and swapped x with record 1
    original = _read({"x": [1.0, 2, 3, 4, 5], "y": [0.0] * 5, "g": list("abaaa")})
    release = _read({"x": [2.0, 1, 3, 4, 5], "y": [0.0] * 5, "g": list("aaaaa")})
    result = run_attack("linkage", original, release, params={"attributes": "x,g"})
    # released 1 (2, a): original 1 at (1/1.58)² = 0.4, original 2 at 0.4 + 1, original 3 at 0.4: tie
    # of originals 1 and 3, its own (1) among them: 1/2; released 2 (1, a): original 1 at 0: wrong;
    # 3, 4, 5 exact: 3 + 1/2 = 3.5 -> 4
    assert result.details["expected_rate"] == pytest.approx(3.5 / 5)
    assert result.attack.successes == 4


def test_the_original_as_its_own_release_fails():
    rng = np.random.default_rng(2)
    frame = {
        "x": rng.normal(0, 1, 800),
        "y": rng.normal(0, 1, 800),
        "g": rng.choice(["a", "b"], 800).tolist(),
    }
    table = _read(frame)
    result = run_attack("linkage", table, table, params={"max_risk": 0.05})
    assert result.attack.successes == 800
    assert result.verdict == "fails"


def test_a_heavily_noised_release_holds():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 1000), rng.normal(0, 1, 1000)
    g = rng.choice(["a", "b"], 1000)
    original = _read({"x": x, "y": y, "g": g.tolist()})
    noised = _read({"x": x + rng.normal(0, 5, 1000), "y": y + rng.normal(0, 5, 1000), "g": g.tolist()})
    result = run_attack("linkage", original, noised, params={"max_risk": 0.05})
    assert result.attack.successes < 15
    assert result.verdict == "holds"


def test_fellegi_sunter_links():
    rng = np.random.default_rng(4)
    n = 600
    frame = {
        "x": rng.integers(0, 30, n).astype(float),
        "y": rng.integers(0, 30, n).astype(float),
        "g": rng.choice(list("abcdef"), n).tolist(),
    }
    original = _read(frame)
    same = run_attack("linkage", original, original, params={"method": "probabilistic"})
    # every true pair agrees on all three attributes, the pattern of highest weight: always a link
    assert same.attack.successes == n
    assert same.details["false_links"] == same.details["links"] - n
    scrambled = _read({name: rng.permutation(np.asarray(values)).tolist() for name, values in frame.items()})
    lost = run_attack("linkage", original, scrambled, params={"method": "probabilistic", "max_risk": 0.05})
    assert lost.attack.successes < 0.02 * n
    assert lost.verdict == "holds"


def test_bad_parameters():
    table = _read({"x": [1.0, 2.0], "y": [1.0, 2.0], "g": ["a", "b"]})
    with pytest.raises(ConfigError, match="assignment"):
        run_attack("linkage", table, table, params={"method": "probabilistic", "assignment": "one-to-one"})
    with pytest.raises(ConfigError, match="blocking"):
        run_attack("linkage", table, table, params={"blocking": "g"})
    with pytest.raises(ConfigError, match="method"):
        run_attack("linkage", table, table, params={"method": "both"})
    shorter = _read({"x": [1.0], "y": [1.0], "g": ["a"]})
    with pytest.raises(ConfigError, match="row-aligned"):
        run_attack("linkage", table, shorter)
