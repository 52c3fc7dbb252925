"""Re-identification by coverage as an adversary runs it: covered sets and expected successes
computed by hand, a suppressed outlier found by elimination, the original as its own release
(every record re-identified), a 2-anonymous release attacked as 5-anonymous (fails) and a real
5-anonymous release of ``generalize`` attacked for what it claims (holds)."""

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
ORIGINAL = {"age": [21, 25, 33, 37, 38, 45], "zip": ["a", "a", "b", "b", "b", "c"], "disease": list("xyxyzx")}


def _read(frame: dict) -> Table:
    return CONFIG.read(pl.DataFrame(frame))


def _release(frame: dict) -> Table:
    """A release as sdckit reads one: generalized labels in numeric attributes are kept as text."""
    return CONFIG.read_release(pl.DataFrame(frame))


def test_hand_computed_covered_sets():
    # covered sets: records 1-2 by the two '20-29, a' records, 3-5 by the three '30-39, b', 6 by itself:
    # expected successes 1/2 + 1/2 + 3 · 1/3 + 1 = 3 of 6; one certain (record 6)
    original = _read(ORIGINAL)
    release = _release({**ORIGINAL, "age": ["20-29", "20-29", "30-39", "30-39", "30-39", "45"]})
    result = run_attack("reidentification", original, release)
    assert (result.attack.successes, result.attack.trials) == (3, 6)
    assert result.details["expected_rate"] == pytest.approx(0.5)
    assert result.details["unique_share"] == pytest.approx(1 / 6)
    assert result.details["smallest_covered_set"] == 1
    assert result.details["own_record_not_covered"] == 0
    assert result.baseline is not None and (result.baseline.successes, result.baseline.trials) == (1, 6)
    # claimed 2-anonymity: one record (6) covered by fewer than 2; claimed 3: records 1, 2 and 6
    assert run_attack("reidentification", original, release, params={"claims_k": 2}).attack.successes == 1
    three = run_attack("reidentification", original, release, params={"claims_k": 3})
    assert three.attack.successes == 3
    assert three.baseline is not None and three.baseline.successes == 0  # 6 records >= 3


def test_a_suppressed_outlier_is_found_by_elimination():
    # record 6 suppressed ('*' '*'): it covers every target, so the covered sets grow to 3, 3, 4, 4, 4;
    # but no other released record covers (45, c): record 6 is the only candidate, re-identified.
    # expected 1/3 + 1/3 + 3/4 + 1 = 2.42 -> 2 successes
    original = _read(ORIGINAL)
    release = _release(
        {**ORIGINAL, "age": ["20-29", "20-29", "30-39", "30-39", "30-39", "*"], "zip": list("aabbb*")}
    )
    result = run_attack("reidentification", original, release)
    assert result.attack.successes == 2
    assert result.details["expected_rate"] == pytest.approx((2 / 3 + 3 / 4 + 1) / 6)
    assert result.details["unique_share"] == pytest.approx(1 / 6)
    assert result.details["mean_covered_set"] == pytest.approx((3 + 3 + 4 + 4 + 4 + 1) / 6)


def test_an_untruthful_label_does_not_count_as_found():
    # released record 1 says age 30-39: it does not cover its own original (21, a), so guessing among
    # the covered set (released record 2 only, '20-29') never finds record 1
    original = _read(ORIGINAL)
    release = _release({**ORIGINAL, "age": ["30-39", "20-29", "30-39", "30-39", "30-39", "45"]})
    result = run_attack("reidentification", original, release)
    assert result.details["own_record_not_covered"] == 1
    # record 1: 0; record 2: 1/1; records 3-5 (zip b): 1/3 each, released record 1 has zip a; record 6: 1
    assert result.details["expected_rate"] == pytest.approx(3 / 6)
    assert result.attack.successes == 3


def test_the_original_as_its_own_release_fails():
    rng = np.random.default_rng(5)
    frame = {
        "age": rng.permutation(np.arange(20, 520)).tolist(),
        "zip": rng.choice(["a", "b", "c"], 500).tolist(),
        "disease": rng.choice(["x", "y"], 500).tolist(),
    }
    table = _read(frame)
    result = run_attack("reidentification", table, table, params={"max_risk": 0.05})
    assert result.attack.successes == 500
    assert result.verdict == "fails"


def test_a_2_anonymous_release_attacked_as_5_anonymous_fails():
    # pairs of records share one released combination: every covered set holds 2 < 5 records
    original = _read({"age": list(range(20, 40)), "zip": ["a"] * 20, "disease": list("xy" * 10)})
    labels = [f"{20 + 2 * (i // 2)}-{21 + 2 * (i // 2)}" for i in range(20)]
    release = _release({"age": labels, "zip": ["a"] * 20, "disease": list("xy" * 10)})
    claimed5 = run_attack("reidentification", original, release, params={"claims_k": 5, "max_risk": 0.05})
    assert claimed5.attack.successes == 20
    assert claimed5.verdict == "fails"
    claimed2 = run_attack("reidentification", original, release, params={"claims_k": 2, "max_risk": 0.2})
    assert claimed2.attack.successes == 0
    assert claimed2.verdict == "holds"
    guessed = run_attack("reidentification", original, release)
    assert guessed.attack.successes == 10  # 20 guesses right half the time
    assert guessed.details["unique_share"] == 0.0


GENERALIZE = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric,\n"
    "        hierarchy: {intervals: {width: 5, bottom: 20, top: 80}}}\n"
    "  zip: {role: quasi-identifier, kind: categorical, hierarchy: {mask: 5}}\n"
    "  sex: {role: quasi-identifier, hierarchy: {order: [F, M]}}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)


def generalized_example(k: int, diversity: int | None = None, seed: int = 11, n: int = 1500):
    """A small survey and its full-domain generalization by ``sdckit anonymize generalize``."""
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": [f"{z:05d}" for z in rng.choice([10010, 10012, 10020, 10310, 11020, 12000], n)],
            "sex": rng.choice(["F", "M"], n).tolist(),
            "disease": rng.choice(["flu", "cold", "asthma", "cancer", "ulcer", "none"], n).tolist(),
        }
    )
    table = GENERALIZE.read(frame)
    options: dict = {"k": k, "suppression_limit": 0.05}
    if diversity is not None:
        options["l"] = diversity
    return table, run_method("generalize", table, options).table


def test_a_real_5_anonymous_release_holds_for_k_5():
    original, release = generalized_example(5)
    assert release.n_records == original.n_records
    result = run_attack("reidentification", original, release, params={"claims_k": 5, "max_risk": 0.01})
    assert result.attack.successes == 0
    assert result.verdict == "holds"
    # guessing inside covered sets of at least 5: at most 1/5 of the records expected
    guessed = run_attack("reidentification", original, release)
    assert guessed.details["expected_rate"] <= 0.2
    assert guessed.details["own_record_not_covered"] == 0
    # attacked as 10-anonymous a 5-anonymous release need not hold; as 1,501-anonymous it cannot
    larger = run_attack("reidentification", original, release, params={"claims_k": 1501})
    assert larger.attack.successes == 1500


def test_refusals_and_bad_parameters():
    original = _read(ORIGINAL)
    shorter = _read({name: values[:5] for name, values in ORIGINAL.items()})
    with pytest.raises(ConfigError, match="row-aligned"):
        run_attack("reidentification", original, shorter)
    with pytest.raises(ConfigError, match="claims_k"):
        run_attack("reidentification", original, original, params={"claims_k": 1})
    with pytest.raises(ConfigError, match="claims_k"):
        run_attack("reidentification", original, original, params={"claims_k": 2.5})
    with pytest.raises(ConfigError, match="nonsense"):
        run_attack("reidentification", original, original, params={"nonsense": 1})


def test_a_real_2_anonymous_release_attacked_as_5_anonymous_fails():
    # a full-domain generalization without suppressed records: labels of one level never overlap, so
    # a record's covered set is its released class, counted here by a plain group-by of the labels
    original, release = generalized_example(2)
    labels = release.data.select([pl.col(name).cast(pl.String) for name in ("age", "zip", "sex")])
    assert not labels.select(pl.any_horizontal(pl.all() == "*").any()).item()
    sizes = labels.with_columns(pl.len().over(labels.columns).alias("size")).get_column("size")
    expected = int((sizes < 5).sum())
    assert expected > 0
    result = run_attack("reidentification", original, release, params={"claims_k": 5, "max_risk": 0.0})
    assert result.attack.successes == expected
    assert result.verdict == "fails"
    assert result.details["smallest_covered_set"] == int(sizes.min())
