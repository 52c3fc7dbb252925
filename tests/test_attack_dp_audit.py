"""The DP audit (a lower bound on ε from a distinguishing test): hand-checked Clopper–Pearson bounds
and ε lower bounds, the pairs it builds, dp-noise at ε = 0.5, 1, 2 (not refuted, within 0.1 of ε at
20,000 trials) and with half the noise (caught), the query server's answers, and its parameters."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import beta, kstest

from sdckit.attack.base import run_attack, run_attacks
from sdckit.attack.dp_audit import (
    DPAuditParams,
    _dp_noise,
    _query,
    audit,
    clopper_pearson,
    distinguish,
    epsilon_lower_bound,
)
from sdckit.config import parse_config
from sdckit.errors import ConfigError

CONFIG = parse_config(
    "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n"
    "  y: {role: quasi-identifier, kind: numeric}\n"
)


def _table(x, y=None):
    return CONFIG.read(pl.DataFrame({"x": x, "y": y if y is not None else [0.0] * len(x)}))


def _recipe(tmp_path, epsilon, bounds=("x:0:10",), budget="split", attributes=None, name="dp.json"):
    step = {"method": "dp-noise", "epsilon": epsilon, "bounds": list(bounds), "attributes": attributes}
    path = tmp_path / name
    path.write_text(json.dumps({"method": "dp-noise", "recipe": {"steps": [{**step, "budget": budget}]}}))
    return str(path)


def test_clopper_pearson_by_hand():
    # k = 0: the upper end solves (1 - p)^n = α/2, p = 1 - 0.025^(1/n); k = n: the lower end p^n = α/2
    low, high = clopper_pearson([0, 10, 3], [10, 10, 10], 0.95)
    assert low[0] == 0.0 and high[1] == 1.0
    assert high[0] == pytest.approx(1 - 0.025**0.1, rel=1e-12)  # 0.30849
    assert low[1] == pytest.approx(0.025**0.1, rel=1e-12)  # 0.69151
    # 3 of 10: the beta quantiles of the definition (published tables: 0.0667, 0.6525)
    assert low[2] == pytest.approx(beta.ppf(0.025, 3, 8), rel=1e-12)
    assert high[2] == pytest.approx(beta.ppf(0.975, 4, 7), rel=1e-12)
    assert (round(float(low[2]), 4), round(float(high[2]), 4)) == (0.0667, 0.6525)


def test_epsilon_lower_bound_by_hand():
    # no false positive in 100 runs, 50 false negatives in 100
    fpr_hi = 1 - 0.025 ** (1 / 100)  # 0.03621
    fnr_hi = beta.ppf(0.975, 51, 50)  # 0.6013
    expected = max(math.log((1 - fpr_hi) / fnr_hi), math.log((1 - fnr_hi) / fpr_hi))
    assert expected == pytest.approx(math.log((1 - fnr_hi) / fpr_hi))
    assert float(epsilon_lower_bound(0, 50, 100, 0.95)) == pytest.approx(expected, rel=1e-12)
    assert round(expected, 3) == 2.398
    # δ comes off the numerators
    with_delta = math.log((1 - 0.01 - fnr_hi) / fpr_hi)
    assert float(epsilon_lower_bound(0, 50, 100, 0.95, 0.01)) == pytest.approx(with_delta, rel=1e-12)
    # a coin (half and half) proves nothing: both logarithms are negative, the bound is 0
    assert float(epsilon_lower_bound(50, 50, 100, 0.95)) == 0.0
    # symmetric in the two rates
    assert float(epsilon_lower_bound(50, 0, 100, 0.95)) == pytest.approx(expected, rel=1e-12)


def test_distinguish_chooses_on_the_first_half_and_counts_on_the_second():
    # first half: D all 0, D' all 1, so the threshold is 1; second half: 10 of 500 D-runs at 1
    # (false positives), 100 of 500 D'-runs at 0 (false negatives)
    first = np.zeros(1000)
    first[500:510] = 1.0
    second = np.ones(1000)
    second[500:600] = 0.0
    found = distinguish(first, second, 0.95)
    assert (found.threshold, found.trials, found.false_positives, found.false_negatives) == (
        1.0,
        500,
        10,
        100,
    )
    fpr_hi, fnr_hi = beta.ppf(0.975, 11, 490), beta.ppf(0.975, 101, 400)
    assert found.epsilon_lower == pytest.approx(math.log((1 - fnr_hi) / fpr_hi), rel=1e-12)


def test_the_pair_is_the_record_moving_most_to_its_farthest_bounds(tmp_path):
    # bounds x 0:10 (scale 20 at ε = 1 split over 2), y 0:4 (scale 8): record 1 (x 9 -> 0, y 1 -> 4)
    # moves 9/20 + 3/8 = 0.825; record 0 (x 5 -> 10 or 0, y 2 -> 4) 5/20 + 2/8 = 0.5; record 2 is
    # clamped first (x 14 -> 10 -> 0: 10/20, y -3 -> 0 -> 4: 4/8, total 1.0: the most)
    table = _table([5.0, 9.0, 14.0], [2.0, 1.0, -3.0])
    params = DPAuditParams.parse({"recipe": _recipe(tmp_path, 1.0, ("x:0:10", "y:0:4"))})
    mechanism = _dp_noise(table, params)
    assert mechanism.details["record"] == 2
    assert mechanism.a.tolist() == [10.0, 0.0] and mechanism.b.tolist() == [0.0, 4.0]
    assert mechanism.scales.tolist() == [20.0, 8.0] and mechanism.epsilon == 1.0
    extreme = _dp_noise(table, DPAuditParams.parse({"recipe": params.recipe, "neighbour": "extreme"}))
    assert extreme.a.tolist() == [0.0, 0.0] and extreme.b.tolist() == [10.0, 4.0]
    # per-attribute budget: each attribute ε, the claim d·ε
    each = DPAuditParams.parse({"recipe": _recipe(tmp_path, 1.0, ("x:0:10", "y:0:4"), "per-attribute")})
    assert _dp_noise(table, each).scales.tolist() == [10.0, 4.0] and _dp_noise(table, each).epsilon == 2.0


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_dp_noise_holds_and_half_the_noise_is_caught(tmp_path, epsilon):
    # record 0 sits on the lower bound: the pair (0, 10) shows the whole ε. Under the claimed noise
    # the best test says D' when y >= 10 (FPR e^-ε/2, FNR 1/2): with 10,000 runs per side evaluated
    # the bound lands within 0.1 below ε; with half the noise the true ε is 2ε, and the bound is
    # above ε (about 1.85ε)
    table = _table([0.0, 3.0, 7.0, 12.0])
    params = DPAuditParams.parse({"recipe": _recipe(tmp_path, epsilon)})
    result = audit(table, params)
    assert epsilon - 0.1 <= result.epsilon_lower <= epsilon
    assert result.details["epsilon_of_pair"] == pytest.approx(epsilon)
    assert result.verdict == "holds" and result.holds
    # no distinguisher beats e^ε/(1 + e^ε); this one is close to it (the test is near optimal)
    bound = math.exp(epsilon) / (1 + math.exp(epsilon))
    assert result.details["accuracy_bound"] == pytest.approx(bound)
    assert result.attack.ci[0] <= bound
    broken = audit(table, params, _noise_factor=0.5)
    assert broken.epsilon_lower > epsilon + 0.3 * epsilon
    assert broken.verdict == "fails" and not broken.holds
    assert broken.summary()["verdict"] == "fails"
    # deterministic: the same seed, the same bound
    assert audit(table, params).epsilon_lower == result.epsilon_lower


def test_through_the_registry(tmp_path):
    table = _table([0.0, 3.0, 7.0, 12.0])
    recipe = _recipe(tmp_path, 1.0)
    result = run_attack("dp-audit", table, table, params={"recipe": recipe, "trials": 2000})
    assert result.details["trials_per_side"] == 2000 and result.details["evaluated_per_side"] == 1000
    assert result.attack.trials == 2000
    # not named, without a recipe: skipped with the reason
    report = run_attacks(table, table, attacks=None)
    assert "dp-audit" in report.skipped and "recipe" in report.skipped["dp-audit"]
    with pytest.raises(ConfigError, match="does not apply to this release: it needs the mechanism"):
        run_attack("dp-audit", table, table)


def test_the_real_dp_noise_has_the_claimed_noise(tmp_path):
    # OpenDP's exact sampler cannot be seeded: its draws are tested against Laplace(scale) with a
    # Kolmogorov-Smirnov test at a level that leaves a false alarm once in 10^6 runs
    table = _table([0.0, 3.0, 7.0, 12.0])
    params = DPAuditParams.parse({"recipe": _recipe(tmp_path, 1.0)})
    mechanism = _dp_noise(table, params)
    for side, centre in ((0, 0.0), (1, 10.0)):
        draws = mechanism.draw(side, 3000)[:, 0] - centre
        assert kstest(draws, "laplace", args=(0.0, 10.0)).pvalue > 1e-6
    audited = audit(
        table, DPAuditParams.parse({**params.model_dump(), "sampler": "mechanism", "trials": 4000})
    )
    assert audited.details["sampler"] == "mechanism"
    assert 0.0 <= audited.epsilon_lower <= 1.0 + 0.3  # a 95% bound of an unseeded run: not refuted by far


def test_query_pairs_by_hand():
    count = _query(_table([1.0, 5.0, 9.0]), DPAuditParams.parse({"query": "count", "epsilon": 0.5}))
    assert (count.a.tolist(), count.b.tolist(), count.scales.tolist()) == ([3.0], [2.0], [2.0])
    # bounds 0:10, sensitivity max(U - L, M) = 10: record 0 (1 -> 10) moves the sum by 9, as record 2
    # (9 -> 0; leaving moves it by 9 too, not more): the first, 15 -> 24
    total = _query(
        _table([1.0, 5.0, 9.0]),
        DPAuditParams.parse({"query": "sum", "epsilon": 1.0, "attribute": "x", "bounds": "0:10"}),
    )
    assert (total.a.tolist(), total.b.tolist(), total.scales.tolist()) == ([15.0], [24.0], [10.0])
    # bounds 5:100: 99 -> 5 moves it by 94, leaving by 99: the record leaves, 149 -> 50; scale 100
    leaving = _query(
        _table([50.0, 99.0]),
        DPAuditParams.parse({"query": "sum", "epsilon": 1.0, "attribute": "x", "bounds": "5:100"}),
    )
    assert (leaving.a.tolist(), leaving.b.tolist(), leaving.scales.tolist()) == ([149.0], [50.0], [100.0])
    # a mean: the sum and the count at ε/2 each (scales 20 and 2 at ε = 1), the mean 5 -> 8
    mean = _query(
        _table([1.0, 5.0, 9.0]),
        DPAuditParams.parse({"query": "mean", "epsilon": 1.0, "attribute": "x", "bounds": "0:10"}),
    )
    assert mean.scales.tolist() == [20.0, 2.0] and (mean.a.tolist(), mean.b.tolist()) == ([5.0], [8.0])


def test_query_server_count_holds_and_half_the_noise_is_caught():
    table = _table([1.0] * 50)
    params = DPAuditParams.parse({"query": "count", "epsilon": 1.0})
    result = audit(table, params)
    assert 0.9 <= result.epsilon_lower <= 1.0 and result.verdict == "holds"
    assert audit(table, params, _noise_factor=0.5).verdict == "fails"
    # the server's own mechanism (sdckit.query.dp.aggregate, OpenDP, unseeded)
    real = audit(
        table, DPAuditParams.parse({"query": "count", "epsilon": 1.0, "sampler": "mechanism", "trials": 2000})
    )
    assert real.epsilon_lower <= 1.3
    draws = _query(table, params).draw(0, 2000)[:, 0] - 50.0
    assert kstest(draws, "laplace", args=(0.0, 1.0)).pvalue > 1e-6


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"recipe": "r.json", "max_risk": 0.1}, "max_risk does not apply"),
        ({"recipe": "r.json", "query": "count", "epsilon": 1}, "either a recipe .recipe. or a query"),
        ({"recipe": "r.json", "epsilon": 1}, "takes epsilon only with query"),
        ({"query": "count"}, "needs epsilon with query"),
        ({"query": "sum", "epsilon": 1, "attribute": "x"}, "needs attribute and bounds with query sum"),
        ({"query": "count", "epsilon": 1, "bounds": "0:1"}, "takes no attribute or bounds with query count"),
        ({"query": "sum", "epsilon": 1, "attribute": "x", "bounds": "3:1"}, "bounds as LOWER:UPPER"),
        (
            {"query": "mean", "epsilon": 1, "attribute": "x", "bounds": "0:1", "neighbour": "extreme"},
            "neighbour",
        ),
        ({"trials": 10}, "trials must be greater than or equal to 200"),
        ({"recipes": "r.json"}, "recipes is not a parameter of dp-audit; did you mean recipe"),
    ],
)
def test_bad_parameters_are_named(values, match):
    with pytest.raises(ConfigError, match=match):
        DPAuditParams.parse(values, method="dp-audit")


def test_bad_recipes_are_named(tmp_path):
    table = _table([1.0, 2.0])
    with pytest.raises(ConfigError, match="recipe: cannot read"):
        audit(table, DPAuditParams.parse({"recipe": str(tmp_path / "absent.json")}))
    other = tmp_path / "mdav.json"
    other.write_text(json.dumps({"recipe": {"steps": [{"method": "mdav", "k": 3}]}}))
    with pytest.raises(ConfigError, match="holds no dp-noise step"):
        audit(table, DPAuditParams.parse({"recipe": str(other)}))
    yaml_recipe = tmp_path / "dp.yaml"
    yaml_recipe.write_text("steps:\n  - {method: dp-noise, epsilon: 1.0, bounds: ['z:0:1']}\n")
    with pytest.raises(ConfigError, match="recipe: 'z' is not a column of the original"):
        audit(table, DPAuditParams.parse({"recipe": str(yaml_recipe)}))


def test_query_server_gaussian_count():
    # (ε, δ) = (1, 10⁻³): the server's Gaussian (zCDP through OpenDP's conversion), its scale found by
    # the same calibration (2.9015); the audit's bound stays below ε, half the noise is caught. A
    # Gaussian audit is weaker than a Laplace one (no atom where the likelihood ratio saturates):
    # about 0.37 of ε = 1 here, and half the noise at ε = 0.5 goes unseen at this number of trials
    table = _table([1.0] * 50)
    params = DPAuditParams.parse({"query": "count", "epsilon": 1.0, "delta": 1e-3})
    mechanism = _query(table, params)
    assert mechanism.noise == "gaussian" and mechanism.scales[0] == pytest.approx(2.9015, abs=1e-3)
    draws = mechanism.draw(0, 3000)[:, 0] - 50.0  # the server's own sdckit.query.dp.aggregate
    assert kstest(draws, "norm", args=(0.0, mechanism.scales[0])).pvalue > 1e-6
    result = audit(table, params)
    assert 0.2 <= result.epsilon_lower <= 1.0 and result.verdict == "holds"
    assert result.details["delta"] == 1e-3 and result.details["epsilon_of_pair"] is None
    assert audit(table, params, _noise_factor=0.5).verdict == "fails"
