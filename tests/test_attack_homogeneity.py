"""The homogeneity attack (Machanavajjhala et al. 2007) as an adversary runs it: disclosed shares
computed by hand on covered sets, held-out control records, the original as its own release (every
record disclosed), a homogeneous class (fails) and a real 3-diverse release of ``generalize``
(holds)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize import run_method
from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.table import Table

CONFIG = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric}\n"
    "  zip: {role: quasi-identifier, kind: categorical}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)
# released classes: records 1-2 ('20-29', a) both x (homogeneous), 3-5 ('30-39', b) x, y, z, 6 alone
ORIGINAL = {"age": [21, 25, 33, 37, 38, 45], "zip": list("aabbbc"), "disease": list("xxxyzx")}
RELEASED = {**ORIGINAL, "age": ["20-29", "20-29", "30-39", "30-39", "30-39", "45"]}


def _read(frame: dict) -> Table:
    return CONFIG.read(pl.DataFrame(frame))


def _release(frame: dict) -> Table:
    return CONFIG.read_release(pl.DataFrame(frame))


def test_hand_computed_homogeneous_classes():
    result = run_attack("homogeneity", _read(ORIGINAL), _release(RELEASED))
    # records 1, 2 (a class of x only) and 6 (alone) are disclosed; 3, 4, 5 each face x, y, z
    assert (result.attack.successes, result.attack.trials) == (3, 6)
    # without the release: x is 4 of 6, y and z 1 of 6: nobody's value is determined
    assert result.baseline is not None and result.baseline.successes == 0
    figures = result.details["by_attribute"]["disease"]
    assert figures["mean_posterior"] == pytest.approx((1 + 1 + 1 / 3 + 1 / 3 + 1 / 3 + 1) / 6)
    assert figures["baseline_mean_posterior"] == pytest.approx((4 / 6 * 4 + 1 / 6 + 1 / 6) / 6)
    assert result.details["smallest_covered_set"] == 1
    assert result.control is None


def test_a_suppressed_record_joins_every_covered_set():
    # record 6 released as '*', '*' with value x: it joins both classes; class ('30-39', b) is now
    # x, y, z, x and class ('20-29', a) x, x, x, still homogeneous; record 6 is covered by itself only
    released = {**RELEASED, "age": [*RELEASED["age"][:5], "*"], "zip": list("aabbb*")}
    result = run_attack("homogeneity", _read(ORIGINAL), _release(released))
    assert result.attack.successes == 3


def test_control_records_read_the_same_way():
    # (22, a) falls in the homogeneous class (x): disclosed; (34, b, y) faces x, y, z: not
    control = _read({"age": [22, 34], "zip": ["a", "b"], "disease": ["x", "y"]})
    result = run_attack("homogeneity", _read(ORIGINAL), _release(RELEASED), control)
    assert result.control is not None
    assert (result.control.successes, result.control.trials) == (1, 2)
    assert result.attack.successes == 3
    # a control record whose value the homogeneous class gets wrong is not disclosed
    wrong = _read({"age": [22], "zip": ["a"], "disease": ["y"]})
    again = run_attack("homogeneity", _read(ORIGINAL), _release(RELEASED), wrong)
    assert again.control is not None and again.control.successes == 0


def test_the_original_as_its_own_release_fails():
    rng = np.random.default_rng(9)
    frame = {
        "age": rng.permutation(np.arange(20, 420)).tolist(),
        "zip": rng.choice(["a", "b"], 400).tolist(),
        "disease": rng.choice(["x", "y", "z"], 400).tolist(),
    }
    table = _read(frame)
    result = run_attack("homogeneity", table, table, params={"max_risk": 0.05})
    assert result.attack.successes == 400  # every record alone in its covered set
    assert result.verdict == "fails"


def test_a_homogeneous_class_fails():
    # 20 records in two released classes of 10; the first all 'cancer'
    original = _read(
        {"age": list(range(20, 40)), "zip": ["a"] * 20, "disease": ["cancer"] * 10 + list("xy" * 5)}
    )
    release = _release(
        {"age": ["20-29"] * 10 + ["30-39"] * 10, "zip": ["a"] * 20, "disease": original.column("disease")}
    )
    result = run_attack("homogeneity", original, release, params={"max_risk": 0.1})
    assert result.attack.successes == 10
    assert result.verdict == "fails"


GENERALIZE = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric,\n"
    "        hierarchy: {intervals: {width: 5, bottom: 20, top: 80}}}\n"
    "  zip: {role: quasi-identifier, kind: categorical, hierarchy: {mask: 5}}\n"
    "  sex: {role: quasi-identifier, hierarchy: {order: [F, M]}}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)


def generalized_example(options: dict, seed: int = 11, n: int = 1500) -> tuple[Table, Table]:
    """A small survey and its full-domain generalization by ``sdckit anonymize generalize``."""
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": [f"{z:05d}" for z in rng.choice([10010, 10012, 10020, 10310, 11020, 12000], n)],
            "sex": rng.choice(["F", "M"], n).tolist(),
            "disease": rng.choice(
                ["flu", "cold", "asthma", "cancer", "ulcer", "none"], n, p=[0.5, 0.3, 0.05, 0.05, 0.05, 0.05]
            ).tolist(),
        }
    )
    table = GENERALIZE.read(frame)
    return table, run_method("generalize", table, {"suppression_limit": 0.05, **options}).table


def test_a_real_3_diverse_release_holds():
    original, release = generalized_example({"k": 5, "l": 3})
    result = run_attack("homogeneity", original, release, params={"max_risk": 0.01})
    assert result.attack.successes == 0
    assert result.verdict == "holds"


def test_refusals_and_bad_parameters():
    original = _read(ORIGINAL)
    with pytest.raises(ConfigError, match="sensitive: 'nothing' is not a column of the original"):
        run_attack("homogeneity", original, original, params={"sensitive": "nothing"})
    with pytest.raises(ConfigError, match="b"):
        run_attack("homogeneity", original, original, params={"b": 1})
    bare = parse_config("attributes:\n  age: {role: quasi-identifier, kind: numeric}\n").read(
        pl.DataFrame({"age": [1, 2]})
    )
    with pytest.raises(ConfigError, match="no sensitive attribute"):
        run_attack("homogeneity", bare, bare)


def test_a_perturbed_release_is_not_attacked_by_coverage():
    # a noised number covers no original value: the coverage attacks do not apply (named: an error)
    original = _read(ORIGINAL)
    noised = _release({**ORIGINAL, "age": [21.5, 25, 33, 37, 38, 45]})
    for attack in ("homogeneity", "background-knowledge", "reidentification"):
        with pytest.raises(ConfigError, match="not generalized values of the original's.*'21.5'"):
            run_attack(attack, original, noised)
