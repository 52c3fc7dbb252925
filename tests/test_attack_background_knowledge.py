"""The background-knowledge attack (Machanavajjhala et al. 2007) as an adversary runs it: posteriors
after ruling out the most frequent wrong values, computed by hand; claims_l on a distinct 3-diverse
release (holds) attacked as 4-diverse (fails); the original as its own release; and a real
3-diverse release of ``generalize`` attacked for the l it claims."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize import run_method
from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.models.check import verdict
from sdckit.table import Table

CONFIG = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric}\n"
    "  zip: {role: quasi-identifier, kind: categorical}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)
# released classes: records 1-2 ('20-29', a) x, x; 3-5 ('30-39', b) x, y, z; record 6 alone (x)
ORIGINAL = {"age": [21, 25, 33, 37, 38, 45], "zip": list("aabbbc"), "disease": list("xxxyzx")}
RELEASED = {**ORIGINAL, "age": ["20-29", "20-29", "30-39", "30-39", "30-39", "45"]}


def _read(frame: dict) -> Table:
    return CONFIG.read(pl.DataFrame(frame))


def _release(frame: dict) -> Table:
    return CONFIG.read_release(pl.DataFrame(frame))


def _attack(params: dict, original: dict = ORIGINAL, released: dict = RELEASED):
    return run_attack("background-knowledge", _read(original), _release(released), params=params)


def test_hand_computed_posteriors():
    # b = 0 is the homogeneity attack: records 1, 2, 6
    assert _attack({"b": 0}).attack.successes == 3
    # b = 1: in class x, y, z one wrong value ruled out leaves two (posterior 1/2): still 1, 2, 6
    one = _attack({"b": 1})
    assert one.attack.successes == 3
    assert one.details["by_attribute"]["disease"]["mean_posterior"] == pytest.approx((3 + 3 * 0.5) / 6)
    # overall x 4, y 1, z 1: ruling out one wrong value determines nobody (x: 4/5, y and z: 1/2)
    assert one.baseline is not None and one.baseline.successes == 0
    # b = 2 of three values determines everybody without the release: refused
    with pytest.raises(ConfigError, match="at most 3 values"):
        _attack({"b": 2})
    # bound 0.6 with b = 1: class x, y, z gives 1/2 < 0.6; overall x reaches 4/5, y and z 1/2
    loose = _attack({"b": 1, "bound": 0.6})
    assert loose.attack.successes == 3
    assert loose.baseline is not None and loose.baseline.successes == 4
    # bound 0.5: everybody, with the release; without it x (4/5) and y, z (1/2) too
    assert _attack({"b": 1, "bound": 0.5}).attack.successes == 6


def test_a_true_value_the_release_lacks_is_never_disclosed():
    # record 5's z released as x: class ('30-39', b) holds x, y, x. With b = 1, record 3 (x) rules out y
    # and record 4 (y) rules out x: both determined; record 5 (true z) finds no z: posterior 0
    released = {**RELEASED, "disease": list("xxxyxx")}
    result = _attack({"b": 1}, ORIGINAL, released)
    assert result.attack.successes == 5
    posterior = result.details["by_attribute"]["disease"]["mean_posterior"]
    assert posterior == pytest.approx(5 / 6)


# a distinct 3-diverse release: classes x, y, z and x, y, z, x
DIVERSE = {
    "age": [21, 23, 25, 31, 33, 35, 37],
    "zip": list("aaabbbb"),
    "disease": list("xyzxyzx"),
}
DIVERSE_RELEASED = {**DIVERSE, "age": ["20-29"] * 3 + ["30-39"] * 4}


def test_claims_l_on_a_distinct_3_diverse_release():
    # claims_l 3: b = 1. Class x, y, z: 1/2 left. Class x, y, z, x: true x faces x, x, z (2/3), true y
    # faces y, z (x ruled out: 1/2), true z faces y, z (1/2). Never determined.
    held = _attack({"claims_l": 3, "max_risk": 0.5}, DIVERSE, DIVERSE_RELEASED)
    assert held.attack.successes == 0
    assert held.details["b"] == 1 and held.details["bound"] == 1.0 and held.details["claims_l"] == 3
    assert held.verdict == "holds"
    # attacked as 4-diverse (b = 2) every value is determined: it fails
    failed = _attack({"claims_l": 4, "max_risk": 0.05}, DIVERSE, DIVERSE_RELEASED)
    assert failed.attack.successes == 7
    assert failed.verdict == "fails"


def test_a_2_diverse_class_attacked_as_3_diverse_fails():
    released = {**DIVERSE_RELEASED, "disease": list("xyxxyzx")}
    original = {**DIVERSE, "disease": list("xyxxyzx")}
    # class x, y, x: b = 1 rules out the other value: all three determined; class x, y, z, x: none
    result = _attack({"claims_l": 3, "max_risk": 0.05}, original, released)
    assert result.attack.successes == 3


def test_the_original_as_its_own_release_fails():
    rng = np.random.default_rng(9)
    frame = {
        "age": rng.permutation(np.arange(20, 420)).tolist(),
        "zip": rng.choice(["a", "b"], 400).tolist(),
        "disease": rng.choice(["x", "y", "z"], 400).tolist(),
    }
    table = _read(frame)
    result = run_attack("background-knowledge", table, table, params={"claims_l": 2, "max_risk": 0.05})
    assert result.attack.successes == 400
    assert result.verdict == "fails"


GENERALIZE = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric,\n"
    "        hierarchy: {intervals: {width: 5, bottom: 20, top: 80}}}\n"
    "  zip: {role: quasi-identifier, kind: categorical, hierarchy: {mask: 5}}\n"
    "  sex: {role: quasi-identifier, hierarchy: {order: [F, M]}}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)


def test_a_real_3_diverse_release_holds_for_l_3_and_not_for_more():
    rng = np.random.default_rng(11)
    n = 1500
    frame = pl.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": [f"{z:05d}" for z in rng.choice([10010, 10012, 10020, 10310, 11020, 12000], n)],
            "sex": rng.choice(["F", "M"], n).tolist(),
            "disease": rng.choice(
                ["flu", "cold", "asthma", "cancer"], n, p=[0.55, 0.35, 0.05, 0.05]
            ).tolist(),
        }
    )
    original = GENERALIZE.read(frame)
    release = run_method("generalize", original, {"k": 5, "l": 3, "suppression_limit": 0.05}).table
    held = run_attack("background-knowledge", original, release, params={"claims_l": 3, "max_risk": 0.01})
    assert held.attack.successes == 0
    assert held.verdict == "holds"
    # with 4 values at most, an adversary ruling out 3 wrong ones always determines the value
    broken = run_attack("background-knowledge", original, release, params={"claims_l": 5})
    assert broken.attack.successes == n


def test_bad_parameters():
    table = _read(ORIGINAL)
    with pytest.raises(ConfigError, match="claims_l"):
        run_attack("background-knowledge", table, table, params={"claims_l": 3, "b": 2})
    with pytest.raises(ConfigError, match="bound"):
        run_attack("background-knowledge", table, table, params={"bound": 0})
    with pytest.raises(ConfigError, match="b"):
        run_attack("background-knowledge", table, table, params={"b": -1})


@pytest.mark.parametrize("block", [1, 2, 128])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_a_brute_force_reading(monkeypatch, block, seed):
    """Covered sets, counts and ruled-out values by plain loops over a small random truthful release
    (decades, whole '*' records, some ages kept), for b = 0..3 and two bounds; the values counted
    ``block`` at a time."""
    import sdckit.attack._coverage as coverage

    monkeypatch.setattr(coverage, "_BLOCK", block)
    rng = np.random.default_rng(seed)
    n = 60
    ages = rng.integers(20, 60, n)
    zips = rng.choice(list("ab"), n)
    values = rng.choice(list("pqrstu"), n, p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    how = rng.choice(["decade", "star", "keep"], n, p=[0.7, 0.1, 0.2])
    age_labels = [
        f"{a // 10 * 10}-{a // 10 * 10 + 9}" if h == "decade" else "*" if h == "star" else str(a)
        for a, h in zip(ages, how, strict=True)
    ]
    zip_labels = ["*" if h == "star" else z for z, h in zip(zips, how, strict=True)]

    def covers(i: int, j: int) -> bool:
        label = age_labels[j]
        if label == "*":
            age_ok = True
        elif "-" in label:
            low, high = map(int, label.split("-"))
            age_ok = low <= ages[i] <= high
        else:
            age_ok = int(label) == ages[i]
        return age_ok and zip_labels[j] in ("*", zips[i])

    original = {"age": ages.tolist(), "zip": zips.tolist(), "disease": values.tolist()}
    released = {"age": age_labels, "zip": zip_labels, "disease": values.tolist()}
    for b in range(4):
        for bound in (1.0, 0.5):
            expected = 0
            for i in range(n):
                counts: dict[str, int] = {}
                for j in range(n):
                    if covers(i, j):
                        counts[values[j]] = counts.get(values[j], 0) + 1
                wrong = sorted((c for v, c in counts.items() if v != values[i]), reverse=True)
                left = sum(counts.values()) - sum(wrong[:b])
                posterior = counts.get(values[i], 0) / left if left else 0.0
                expected += posterior >= bound - 1e-12
            result = _attack({"b": b, "bound": bound}, original, released)
            assert result.attack.successes == expected, (b, bound)


def test_background_knowledge_that_alone_determines_the_value_is_refused():
    # two values and b = 1: the adversary knows the value without the release; refused, saying why
    table = _read({**ORIGINAL, "disease": list("xxyyxy")})
    with pytest.raises(
        ConfigError, match=r"ruling out b = 1 values determines 'disease' \(at most 2 values\)"
    ):
        run_attack("background-knowledge", table, table, params={"b": 1})
    assert run_attack("background-knowledge", table, table, params={"b": 0}).attack.successes == 6


def test_claims_c_checks_recursive_diversity():
    # one class x, x, x, y, z: r1 = 3 < c · r3 = c; it is (4, 3)-diverse, not (2, 3)-diverse.
    # claims (4, 3): b = 1, bound 0.8: x rules out y: 3/4; y and z rule out x: 1/2. Nobody.
    # claims (2, 3): bound 2/3: the three x reach 3/4.
    frame = {"age": [21, 22, 23, 24, 25], "zip": list("aaaaa"), "disease": list("xxxyz")}
    released = {**frame, "age": ["20-29"] * 5}
    held = _attack({"claims_l": 3, "claims_c": 4, "max_risk": 0.5}, frame, released)
    assert held.attack.successes == 0
    assert held.details["bound"] == pytest.approx(0.8)
    assert held.verdict == "holds"
    assert _attack({"claims_l": 3, "claims_c": 2}, frame, released).attack.successes == 3
    with pytest.raises(ConfigError, match="claims_c"):
        _attack({"claims_c": 2}, frame, released)


@pytest.mark.parametrize("suppression_limit", [0.0, 0.05])
def test_a_real_recursive_diverse_release_holds_for_its_claim(suppression_limit):
    rng = np.random.default_rng(12)
    n = 1500
    frame = pl.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": [f"{z:05d}" for z in rng.choice([10010, 10012, 10020, 10310, 11020, 12000], n)],
            "sex": rng.choice(["F", "M"], n).tolist(),
            "disease": rng.choice(["flu", "cold", "asthma", "cancer", "ulcer"], n).tolist(),
        }
    )
    original = GENERALIZE.read(frame)
    # With 5% suppression the records left '*' form a group of their own, covering only the people
    # who match no released class. The search once checked the model on the released classes only:
    # it suppressed 15 records (flu 8, asthma 4, ulcer 2, cancer 1: 8 < 2 (2 + 1) fails recursive
    # (2,3)-diversity) and the attack determined the value of the 8 with flu. The group must now hold
    # the model too (issue 36): that node is refused, and nothing is disclosed.
    options = {"k": 5, "l": 3, "l_variant": "recursive", "c": 2.0, "suppression_limit": suppression_limit}
    release = run_method("generalize", original, options)
    claim = {"claims_l": 3, "claims_c": 2.0, "max_risk": 0.01}
    held = run_attack("background-knowledge", original, release.table, params=claim)
    assert held.attack.successes == 0
    assert held.verdict == "holds"
    starred = release.table.data.filter(pl.Series(release.suppressed_records))["disease"].to_list()
    counts = sorted((starred.count(v) for v in set(starred)), reverse=True)
    assert not counts or counts[0] < 2.0 * sum(counts[2:])


HAND = parse_config(
    "attributes:\n"
    "  age: {role: quasi-identifier, kind: numeric,\n"
    "        hierarchy: {intervals: {width: 10, bottom: 20, top: 50}}}\n"
    "  zip: {role: quasi-identifier, kind: categorical, hierarchy: {mask: 1}}\n"
    "  disease: {role: sensitive, kind: categorical}\n"
)


def test_targets_covered_by_suppressed_records_only_read_that_group():
    # class ('20-29', a) holds x, y, z; three outliers are suppressed ('*', '*') with x, x, y. An outlier
    # is covered by the three '*' records only: claimed 3-diversity (b = 1) rules out the other value
    # and determines all three. The class's records face x, y, z, x, x, y: never determined.
    frame = {"age": [21, 23, 25, 45, 46, 47], "zip": list("aaacde"), "disease": list("xyzxxy")}
    released = {**frame, "age": ["20-29"] * 3 + ["*"] * 3, "zip": list("aaa***")}
    result = _attack({"claims_l": 3}, frame, released)
    assert result.attack.successes == 3
    # sdckit check agrees: the '*' group (x, x, y) is a class with 2 distinct values
    report = verdict(_release(released), l=3)
    assert not report.satisfied
    assert report.report.class_table["distinct 3-diversity (disease) achieved"].to_list() == [3, 2]
    # That is the release generalize made of these records with distinct 3-diversity and half of them
    # suppressible ([20, 30) and the three outliers '*'), when it checked the released classes only.
    # The group must now hold the model too (issue 36): no release suppresses three records here
    # (zip at 'a', c, d, e or age at [40, 50) leaves x, x, y), and the one found, every record '*',
    # is one class x, y, z, x, x, y that discloses nobody.
    original = HAND.read(pl.DataFrame(frame))
    release = run_method("generalize", original, {"k": 1, "l": 3, "suppression_limit": 0.5})
    assert release.levels == {"age": 3, "zip": 1}
    assert release.n_suppressed == 0
    assert (
        run_attack("background-knowledge", original, release.table, params={"claims_l": 3}).attack.successes
        == 0
    )
    assert verdict(release.table, l=3).satisfied
