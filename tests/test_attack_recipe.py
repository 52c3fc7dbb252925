"""A recipe that ends with an attack step: the attacks run on the final release, a release that does
not hold is a violation (``protect`` exits 3), the step is validated before any method runs, and the
recipe replays with it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.recipes import protect, split_attack_step

CONFIG = parse_config(
    """attributes:
  x: {role: quasi-identifier, kind: numeric}
  y: {role: quasi-identifier, kind: numeric}
"""
)


def _table():
    rng = np.random.default_rng(11)
    return CONFIG.read(pl.DataFrame({"x": rng.normal(50, 10, 300), "y": rng.normal(0, 1, 300)}))


def test_an_attack_step_that_finds_the_release_weak_is_a_violation():
    table = _table()
    steps = [
        {"method": "mdav", "k": 3, "attributes": ["x", "y"]},
        {"attack": {"interval-disclosure": {"max_risk": 0.05, "k": 0.5}}},
    ]
    result = protect(table, steps, config=CONFIG)
    assert result.attack is not None
    (attacked,) = result.attack["attacks"]
    assert attacked["verdict"] == "fails"
    assert any("not shown to hold against interval-disclosure" in v for v in result.violations)
    assert result.recipe["steps"][-1] == {"attack": {"interval-disclosure": {"max_risk": 0.05, "k": 0.5}}}
    # the recipe replays: the same release and the same attack figures
    again = protect(table, result.recipe["steps"], config=CONFIG)
    assert again.table.data.equals(result.table.data)
    assert again.attack == result.attack


def test_an_attack_step_is_checked_before_any_method_runs():
    method = {"method": "mdav", "k": 3, "attributes": ["x", "y"]}
    with pytest.raises(ConfigError, match="step 1: an attack step comes last"):
        split_attack_step([{"attack": {"interval-disclosure": {}}}, method])
    with pytest.raises(ConfigError, match="unknown attack 'nope'"):
        split_attack_step([method, {"attack": {"nope": {}}}])
    with pytest.raises(ConfigError, match="step 2.*interval-disclosure.*colour|colour"):
        split_attack_step([method, {"attack": {"interval-disclosure": {"colour": 1}}}])
    with pytest.raises(ConfigError, match="attack must map attack names"):
        split_attack_step([method, {"attack": ["interval-disclosure"]}])
    with pytest.raises(ConfigError, match="has the key attack only"):
        split_attack_step([method, {"attack": {"interval-disclosure": {}}, "k": 3}])
