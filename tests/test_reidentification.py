"""Re-identification risk (sdcMicro's freqCalc / indivRisk / measure_risk / ldiversity and ARX's
attacker models and population-uniqueness estimators) against SPEC section 7, hand-computed tables,
direct formulas and brute force."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from typer.testing import CliRunner

from conftest import make_table
from oracles import brute_frequencies
from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.context import Context
from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.frequency import encode, grouped_quantiles, wildcard_pattern_sizes
from sdckit.measures import RISK_MEASURES, run_measure
from sdckit.risk._risk_estimators import (
    pitman_equations,
    pitman_uniques,
    shlosser_classes,
    snb_parameters,
    snb_uniques,
    zayatz_uniques,
)
from sdckit.risk.reidentification import (
    _top_records,
    exact_risk_closed_form,
    household_risk,
    individual_risk,
    population_uniqueness,
    reidentification_risk,
)
from sdckit.table import Attribute, Kind, Role, Schema, Table

runner = CliRunner()


# A key variable of sdcMicro: a categorical quasi-identifier, whatever the column's type.
KEY = (Role.QUASI_IDENTIFIER, Kind.CATEGORICAL)


# Individual risk: SPEC 7.2 ---------------------------------------------------------------------------

SPEC_VALUES = [
    # f, F, approx, exact
    (1, 10, 0.255843, 0.255843),
    (2, 10, 0.149410, 0.149410),
    (3, 10, 0.130435, 0.125386),
    (4, 10, 0.117647, 0.115301),
    (5, 20, 0.058824, 0.058174),
    (10, 40, 0.027027, 0.026965),
    (1, 100, 0.046517, 0.046517),
    (3, 3, 1 / 3, 1 / 3),
]


@pytest.mark.parametrize(("f", "F", "approx", "exact"), SPEC_VALUES)
def test_individual_risk_spec_examples(f, F, approx, exact):  # noqa: N803
    got_approx, _ = individual_risk(np.array([f]), np.array([F]), method="approx")
    got_exact, _ = individual_risk(np.array([f]), np.array([F]), method="exact")
    assert got_approx[0] == pytest.approx(approx, abs=5e-7)
    assert got_exact[0] == pytest.approx(exact, abs=5e-7)


def series(f: int, p: float) -> float:
    """sum_{h>=f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f), summed term by term."""
    total, h = 0.0, f
    while True:
        term = (
            math.exp(math.lgamma(h) - math.lgamma(f) - math.lgamma(h - f + 1)) * p**f * (1 - p) ** (h - f) / h
        )
        total += term
        if term < 1e-16 * total and h > f + 10:
            return total
        h += 1


@pytest.mark.parametrize("f", [3, 4, 5, 7, 10])
@pytest.mark.parametrize("p", [0.05, 0.2, 0.5, 0.8])
def test_exact_risk_hypergeometric_closed_form_and_series_agree(f, p):
    got, _ = individual_risk(np.array([float(f)]), np.array([f / p]), method="exact")
    expected = series(f, p)
    assert got[0] == pytest.approx(expected, rel=1e-9)
    assert exact_risk_closed_form(f, p) == pytest.approx(expected, rel=1e-6)


def test_risk_without_weights_is_one_over_f_and_qual_scales():
    risk, clipped = individual_risk(np.array([1.0, 2.0, 4.0]), None)
    assert risk.tolist() == [1.0, 0.5, 0.25] and clipped == 0
    scaled, _ = individual_risk(np.array([1.0, 3.0]), np.array([10.0, 10.0]), qual=0.5)
    assert scaled.tolist() == pytest.approx([0.255843 / 2, 0.130435 / 2], abs=1e-6)


def test_f_above_F_is_clipped_and_F_zero_is_an_error():
    risk, clipped = individual_risk(np.array([2.0, 1.0]), np.array([1.5, 10.0]))
    assert clipped == 1 and risk[0] == 0.5
    with pytest.raises(InputError, match="F = 0"):
        individual_risk(np.array([1.0]), np.array([0.0]))


def spec_table() -> Table:
    # Keys (1,10), (2,10), (2,10), (3,10) x 3: one record of key a (weight 10), two of b (5 + 5),
    # three of c (2 + 3 + 5).
    frame = pl.DataFrame({"key": ["a", "b", "b", "c", "c", "c"], "w": [10.0, 5.0, 5.0, 2.0, 3.0, 5.0]})
    return make_table(frame, key=KEY, weights="w")


def test_global_risk_spec_example():
    result = reidentification_risk(spec_table(), weights="w")
    assert result.fk.tolist() == [1, 2, 2, 3, 3, 3]
    assert result.Fk.tolist() == [10, 10, 10, 10, 10, 10]
    summary = result.summary()
    assert summary["expected_reidentifications"] == pytest.approx(0.945967, abs=1e-6)
    assert summary["global_risk"] == pytest.approx(0.157661, abs=1e-6)
    assert summary["global_risk_percent"] == pytest.approx(15.7661, abs=1e-4)
    assert summary["k_anonymity_violations"] == {
        "2": {"records": 1, "percent": pytest.approx(100 / 6)},
        "3": {"records": 3, "percent": pytest.approx(50.0)},
        "5": {"records": 6, "percent": pytest.approx(100.0)},
    }
    assert summary["sample_uniques"] == 1


def test_household_risk_spec_example():
    assert household_risk(np.array([0.2, 0.1, 0.5]), np.array([0, 0, 1])).tolist() == pytest.approx(
        [0.28, 0.28, 0.5]
    )
    # Through the measure: unweighted, record 0 in a class of 5 (r = 0.2), record 5 in a class of
    # 10 (r = 0.1), both in household "h1"; every other record alone in its household.
    frame = pl.DataFrame(
        {
            "key": ["x"] * 5 + ["y"] * 10,
            "hh": ["h1"] + [f"o{i}" for i in range(4)] + ["h1"] + [f"p{i}" for i in range(9)],
        }
    )
    result = reidentification_risk(make_table(frame, key=KEY, hh=(Role.HOUSEHOLD, Kind.CATEGORICAL)))
    assert result.household_risk[0] == pytest.approx(0.28) and result.household_risk[5] == pytest.approx(0.28)
    assert result.household_risk[1] == pytest.approx(0.2) and result.household_risk[6] == pytest.approx(0.1)
    household = result.summary()["household"]
    assert household["households"] == 14
    expected = 2 * 0.28 + 4 * 0.2 + 9 * 0.1
    assert household["expected_reidentifications"] == pytest.approx(expected)
    assert household["global_risk"] == pytest.approx(expected / 15)


# Frequencies: sdcMicro's francdat example -------------------------------------------------------------

FRANCDAT = pl.DataFrame(
    {
        "Key1": [1, 1, 1, 3, 4, 4, 6, 1],
        "Key2": [2, 2, 2, 3, 3, 3, 2, 2],
        "Key3": [5, 1, 1, 1, 1, 1, 1, 5],
        "Key4": [1, 1, 1, 5, 4, 1, 5, 1],
        "w": [18.0, 45.5, 39.0, 17.0, 541.0, 8.0, 5.0, 92.0],
    }
)
FRANC_KEYS = ["Key1", "Key2", "Key3", "Key4"]


def francdat_with_missing() -> pl.DataFrame:
    # sdcMicro's freqCalc example: x[3,5] <- NA; x[4,2] <- x[4,4] <- NA; x[5,6] <- NA; x[6,2] <- NA
    # (columns 2, 4, 5, 6 are Key1, Key2, Key3, Key4).
    return FRANCDAT.with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(None).otherwise(pl.col("Key3")).alias("Key3"),
        pl.when(pl.int_range(pl.len()).is_in([3, 5])).then(None).otherwise(pl.col("Key1")).alias("Key1"),
        pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("Key2")).alias("Key2"),
        pl.when(pl.int_range(pl.len()) == 4).then(None).otherwise(pl.col("Key4")).alias("Key4"),
    )


def test_francdat_frequencies():
    result = reidentification_risk(
        make_table(FRANCDAT, roles=dict.fromkeys(FRANC_KEYS, KEY), weights="w"), weights="w"
    )
    assert result.fk.tolist() == [2, 2, 2, 1, 1, 1, 1, 2]
    assert result.Fk.tolist() == [110, 84.5, 84.5, 17, 541, 8, 5, 110]
    unweighted = reidentification_risk(make_table(FRANCDAT, roles=dict.fromkeys(FRANC_KEYS, KEY)))
    assert unweighted.Fk.tolist() == unweighted.fk.tolist()
    assert unweighted.risk.tolist() == [0.5, 0.5, 0.5, 1, 1, 1, 1, 0.5]


def test_francdat_csv_gives_the_same_frequencies(shared_data):
    config = parse_config(
        {
            "attributes": {name: {"role": "quasi-identifier", "kind": "categorical"} for name in FRANC_KEYS},
            "data": {"weights": "w"},
        }
    )
    table = config.read(shared_data("sdcmicro", "francdat.csv"))
    result = run_measure("reidentification", table, context=Context(config=config))
    assert result.fk.tolist() == [2, 2, 2, 1, 1, 1, 1, 2]
    assert result.Fk.tolist() == [110, 84.5, 84.5, 17, 541, 8, 5, 110]


def test_francdat_with_missing_values_by_hand():
    frame = francdat_with_missing()
    table = make_table(frame, roles=dict.fromkeys(FRANC_KEYS, KEY), weights="w")
    wildcard = reidentification_risk(table, weights="w", missing="wildcard")
    # Worked out by hand: a null matches every value, on either side.
    assert wildcard.fk.tolist() == [3, 2, 4, 3, 3, 2, 2, 3]
    assert wildcard.Fk.tolist() == [149, 84.5, 194.5, 563, 566, 549, 22, 149]
    category = reidentification_risk(table, weights="w", missing="category")
    assert category.fk.tolist() == [2, 1, 1, 1, 1, 1, 1, 2]
    assert category.Fk.tolist() == [110, 45.5, 39, 17, 541, 8, 5, 110]


# Properties -------------------------------------------------------------------------------------------

values = st.one_of(st.none(), st.integers(0, 2))


@st.composite
def small_tables(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(1, 4))
    columns = {f"k{j}": draw(st.lists(values, min_size=n, max_size=n)) for j in range(m)}
    columns["w"] = draw(st.lists(st.floats(1.0, 20.0), min_size=n, max_size=n))
    return pl.DataFrame(columns, schema={**{f"k{j}": pl.Int64 for j in range(m)}, "w": pl.Float64})


@settings(max_examples=60)
@given(small_tables())
def test_frequencies_against_group_by_and_brute_force(frame):
    keys = [c for c in frame.columns if c != "w"]
    table = make_table(frame, roles=dict.fromkeys(keys, KEY), weights="w")
    category = reidentification_risk(table, weights="w", missing="category")
    counted = frame.with_row_index("i").with_columns(
        pl.len().over(keys).alias("f"), pl.col("w").sum().over(keys).alias("F")
    )
    assert category.fk.tolist() == counted["f"].to_list()
    np.testing.assert_allclose(category.Fk, counted["F"].to_numpy(), rtol=1e-12)
    wildcard = reidentification_risk(table, weights="w", missing="wildcard")
    rows = frame.to_dicts()
    np.testing.assert_array_equal(wildcard.fk, brute_frequencies(rows, keys, "wildcard"))
    np.testing.assert_allclose(wildcard.Fk, brute_frequencies(rows, keys, "wildcard", frame["w"].to_list()))
    assert np.all(wildcard.fk >= category.fk)
    # Prosecutor average = classes / n under the category treatment.
    assert category.summary()["prosecutor"]["average"] == pytest.approx(
        frame.select(keys).unique().height / frame.height
    )


# Attacker models, k-anonymity, l-diversity ------------------------------------------------------------


def test_prosecutor_journalist_marketer_by_hand():
    # Classes: a (1 record, weight 4), b (2 records, weights 3 + 3), c (5 records, weight 1 each).
    frame = pl.DataFrame({"key": ["a", "b", "b"] + ["c"] * 5, "w": [4.0, 3.0, 3.0] + [1.0] * 5})
    summary = reidentification_risk(make_table(frame, key=KEY, weights="w"), weights="w").summary()
    prosecutor = summary["prosecutor"]
    assert prosecutor["average"] == pytest.approx(3 / 8)
    assert prosecutor["highest"] == 1.0
    assert prosecutor["records_at_risk"] == pytest.approx(3 / 8)  # 1/1 and 1/2 > 0.2, 1/5 is not
    journalist = summary["journalist"]
    # Population class sizes F: a 4, b 6, c 5 (= f: weights 1).
    assert journalist["highest"] == pytest.approx(1 / 4)
    assert summary["marketer"]["average"] == pytest.approx((1 / 4 + 2 / 6 + 5 / 5) / 8)
    assert journalist["average"] == pytest.approx(max(3 / 15, (1 / 4 + 2 / 6 + 5 / 5) / 8))


def test_journalist_records_at_risk_counts_population_classes():
    frame = pl.DataFrame({"key": ["a", "b", "b"] + ["c"] * 5, "w": [4.0, 3.0, 3.0] + [1.0] * 5})
    summary = reidentification_risk(make_table(frame, key=KEY, weights="w"), weights="w").summary()
    # 1/F: a 0.25 > 0.2 (1 record), b 1/6 (no), c 0.2 (not above): one record of eight.
    assert summary["journalist"]["records_at_risk"] == pytest.approx(1 / 8)


def test_unweighted_journalist_equals_prosecutor_and_marketer_is_classes_over_n():
    frame = pl.DataFrame({"key": ["a", "b", "b", "c", "c", "c"]})
    summary = reidentification_risk(make_table(frame, key=KEY)).summary()
    assert summary["journalist"]["average"] == summary["prosecutor"]["average"] == pytest.approx(0.5)
    assert summary["marketer"]["average"] == pytest.approx(0.5)
    assert summary["journalist"]["population"] == "sample"


def test_l_diversity_by_hand_category_and_wildcard():
    frame = pl.DataFrame(
        {
            "key": ["a", "a", "a", "b", "b", None, "c"],
            "disease": ["flu", "flu", "cold", "flu", None, "hiv", "flu"],
        }
    )
    table = make_table(frame, key=KEY, disease=(Role.SENSITIVE, Kind.CATEGORICAL))
    category = reidentification_risk(table, missing="category")
    # a: {flu, cold} = 2; b: {flu} + a missing value = 2; null key: {hiv} = 1; c: 1.
    assert category.l_diversity["disease"].tolist() == [2, 2, 2, 2, 2, 1, 1]
    wildcard = reidentification_risk(table, missing="wildcard")
    # The null key matches everyone: a sees {flu, cold, hiv} = 3; b {flu, hiv} + missing = 3;
    # null key sees all values {flu, cold, hiv} + missing = 4; c {flu, hiv} = 2.
    assert wildcard.l_diversity["disease"].tolist() == [3, 3, 3, 3, 3, 4, 2]
    figures = wildcard.summary()["l_diversity"]["disease"]
    assert figures["min"] == 2 and figures["max"] == 4 and figures["records_with_l_1"] == 0


# Population uniqueness --------------------------------------------------------------------------------

CLASS_SIZES = np.array([1] * 30 + [2] * 10 + [3] * 5 + [5] * 3 + [10] * 2)  # n = 100


def hypergeometric_one(population: int, successes: int, draws: int) -> float:
    return successes * math.comb(population - successes, draws - 1) / math.comb(population, draws)


def test_zayatz_by_hand():
    n, population = 100, 1000
    sizes = {1: 30, 2: 10, 3: 5, 5: 3, 10: 2}
    u = sum(sizes.values())
    denominator = sum(count / u * hypergeometric_one(population, j, n) for j, count in sizes.items())
    conditional = 30 / u * hypergeometric_one(population, 1, n) / denominator
    assert zayatz_uniques(CLASS_SIZES, n, population) == pytest.approx(30 * conditional / 0.1, rel=1e-10)


def pitman_log_likelihood(theta: float, alpha: float, sizes: np.ndarray) -> float:
    n, u = sizes.sum(), len(sizes)
    value = sum(math.log(theta + i * alpha) for i in range(1, u))
    value -= sum(math.log(theta + i) for i in range(1, n))
    value += sum(math.log(k - alpha) for j in sizes for k in range(1, j))
    return value


def test_pitman_maximizes_the_likelihood_and_gives_the_formula():
    n, population = 100, 1000
    function, _ = pitman_equations(CLASS_SIZES, n)
    best = optimize.minimize(
        lambda x: -pitman_log_likelihood(x[0], x[1], CLASS_SIZES) if 0 < x[1] < 1 and x[0] > -x[1] else 1e9,
        x0=[5.0, 0.5],
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000},
    )
    theta, alpha = best.x
    # The closed-form likelihood equations vanish at the direct maximum ...
    assert np.allclose(function(theta, alpha), 0, atol=1e-4)
    # ... and the estimate is Gamma(theta+1)/Gamma(theta+alpha) N^alpha there.
    expected = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * population**alpha
    assert pitman_uniques(CLASS_SIZES, n, population) == pytest.approx(expected, rel=1e-4)


def test_pitman_closed_form_equals_the_sums():
    function, jacobian = pitman_equations(CLASS_SIZES, 100)
    theta, alpha, u, n = 7.5, 0.4, len(CLASS_SIZES), 100
    o1 = sum(1 / (theta + i * alpha) for i in range(1, u))
    o2 = sum(1 / (theta + i) for i in range(1, n))
    o3 = sum(i / (theta + i * alpha) for i in range(1, u))
    o4 = sum(1 / (k - alpha) for j in CLASS_SIZES for k in range(1, j))
    assert function(theta, alpha) == pytest.approx((o1 - o2, o3 - o4), rel=1e-10)
    h = 1e-6
    numeric = np.array(
        [
            (np.array(function(theta + h, alpha)) - np.array(function(theta - h, alpha))) / (2 * h),
            (np.array(function(theta, alpha + h)) - np.array(function(theta, alpha - h))) / (2 * h),
        ]
    ).T
    np.testing.assert_allclose(jacobian(theta, alpha), numeric, rtol=1e-5)


def test_snb_solution_matches_the_model_moments():
    n, population = 100, 500
    f = n / population
    k = shlosser_classes(CLASS_SIZES, f)
    # Haas et al.'s Shlosser-type estimator written out over the classes (not the histogram).
    num = sum(j * f * f * (1 - f * f) ** (j - 1) for j in CLASS_SIZES)
    den = sum(((1 + f) ** j - 1) * (1 - f) ** j for j in CLASS_SIZES)
    ratio = sum((1 - f) ** j for j in CLASS_SIZES) / sum(j * f * (1 - f) ** (j - 1) for j in CLASS_SIZES)
    assert k == pytest.approx(len(CLASS_SIZES) + 30 * num / den * ratio**2, rel=1e-12)
    k_solved, alpha, beta = snb_parameters(CLASS_SIZES, n, population)
    assert k_solved == k and 0 < beta < 1 and alpha > 0

    # E[c_1] and E[c_2] summed directly over the population class sizes j: P(F = j) with
    # F - 1 ~ NegBin(alpha, beta), times the binomial probability that 1 (2) of j are sampled.
    j = np.arange(1, 20000, dtype=np.float64)
    pmf = np.exp(
        special.gammaln(j + alpha - 1)
        - special.gammaln(alpha)
        - special.gammaln(j)
        + alpha * np.log(beta)
        + (j - 1) * np.log1p(-beta)
    )
    one = k * np.sum(pmf * j * f * (1 - f) ** (j - 1))
    two = k * np.sum(pmf * j * (j - 1) / 2 * f * f * (1 - f) ** (j - 2))
    assert one == pytest.approx(30, abs=1e-5) and two == pytest.approx(10, abs=1e-5)
    assert snb_uniques(CLASS_SIZES, n, population) == pytest.approx(k * pmf[0], rel=1e-12)


def test_dankar_rule_and_limits():
    small = population_uniqueness(CLASS_SIZES, 10_000)  # f = 0.01: Pitman
    assert small.dankar_model == "pitman" and small.uniques["dankar"] == small.uniques["pitman"]
    large = population_uniqueness(CLASS_SIZES, 200)  # f = 0.5: the smaller of Zayatz and SNB
    assert large.dankar_model in ("snb", "zayatz")
    assert large.uniques["dankar"] == min(large.uniques["snb"], large.uniques["zayatz"])
    whole = population_uniqueness(CLASS_SIZES, 100)  # f = 1: the population is the sample
    assert all(value == 30 for value in whole.uniques.values())
    # Approaching f = 1, Zayatz and SNB approach the sample uniques.
    near = population_uniqueness(CLASS_SIZES, 100 / 0.999)
    assert near.uniques["zayatz"] == pytest.approx(30, rel=2e-3)
    assert near.uniques["snb"] == pytest.approx(30, rel=2e-3)
    none = population_uniqueness(np.array([2, 3, 4]), 100)
    assert all(value == 0 for value in none.uniques.values())
    figures = small.figures()
    assert figures["pitman"]["share"] == pytest.approx(small.uniques["pitman"] / 10_000)


# Bad input --------------------------------------------------------------------------------------------


def test_bad_input_is_one_clear_error():
    frame = pl.DataFrame({"key": ["a", "b"], "w": [0.0, 1.0], "other": [1, 2]})
    with pytest.raises(ConfigError, match="quasi-identifier"):
        reidentification_risk(Table(frame, Schema((Attribute("other"),))))
    with pytest.raises(InputError, match="F = 0"):
        reidentification_risk(make_table(frame, key=KEY, weights="w"), weights="w")
    with pytest.raises(ConfigError, match="sampling_fraction"):
        reidentification_risk(make_table(frame, key=KEY), sampling_fraction=1.5)
    with pytest.raises(ConfigError, match="not both"):
        reidentification_risk(make_table(frame, key=KEY), sampling_fraction=0.5, population_size=10)
    with pytest.raises(ConfigError, match="population_size"):
        reidentification_risk(make_table(frame, key=KEY), population_size=1)
    with pytest.raises(ConfigError, match="not both"):
        run_measure(
            "reidentification",
            make_table(frame, key=KEY),
            params={"sampling_fraction": 0.5, "population_size": 9},
        )
    with pytest.raises(ConfigError, match="sampling_fraction"):
        run_measure("reidentification", make_table(frame, key=KEY), params={"sampling_fraction": 0})


def test_weights_below_one_warn():
    frame = pl.DataFrame({"key": ["a", "a"], "w": [0.5, 0.5]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = reidentification_risk(make_table(frame, key=KEY, weights="w"), weights="w")
    assert any(issubclass(w.category, SdcWarning) and "clipped" in str(w.message) for w in caught)
    assert result.risk.tolist() == [0.5, 0.5] and result.clipped == 2


def test_registered_and_records_frame():
    assert "reidentification" in [spec.name for spec in RISK_MEASURES]
    result = reidentification_risk(spec_table(), weights="w")
    records = result.records()
    assert records.columns == ["fk", "Fk", "individual_risk", "household_risk"]
    assert records["household_risk"].null_count() == 6
    riskiest = result.riskiest(2)
    assert riskiest["record"].to_list() == [0, 1] and riskiest["key"].to_list() == ["a", "b"]


# Real data --------------------------------------------------------------------------------------------

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_testdata_against_direct_formulas(shared_data):
    config = parse_config(
        {
            "attributes": {
                **{name: {"role": "quasi-identifier", "kind": "categorical"} for name in TESTDATA_KEYS},
                "ori_hid": {"role": "household"},
            },
            "data": {"weights": "sampling_weight"},
        }
    )
    table = config.read(shared_data("sdcmicro", "testdata.csv"))
    result = run_measure(
        "reidentification", table, params={"sampling_fraction": 0.05}, context=Context(config=config)
    )
    frame = table.data.with_columns(
        pl.len().over(TESTDATA_KEYS).alias("f"),
        pl.col("sampling_weight").sum().over(TESTDATA_KEYS).alias("F"),
    )
    assert result.fk.tolist() == frame["f"].to_list()
    np.testing.assert_allclose(result.Fk, frame["F"].to_numpy())
    f, F = frame["f"].to_numpy().astype(float), frame["F"].to_numpy()  # noqa: N806
    p = f / F
    direct = np.where(
        f == 1,
        p / (1 - p) * np.log(1 / p),
        np.where(f == 2, p / (1 - p) - (p / (1 - p)) ** 2 * np.log(1 / p), p / (f - (1 - p))),
    )
    np.testing.assert_allclose(result.risk, direct, rtol=1e-12)
    summary = result.summary()
    assert summary["expected_reidentifications"] == pytest.approx(direct.sum())
    hh = frame.with_columns(pl.Series("r", direct)).with_columns(
        (1 - (1 - pl.col("r")).product().over("ori_hid")).alias("h")
    )
    np.testing.assert_allclose(result.household_risk, hh["h"].to_numpy(), rtol=1e-10)
    assert summary["population_uniqueness"]["sample_uniques"] == int((f == 1).sum())


# Command line -----------------------------------------------------------------------------------------

CSV = "key,sex,hh,w,disease\na,m,1,10,flu\nb,f,1,5,flu\nb,f,2,5,cold\nc,m,3,2,flu\nc,m,3,3,flu\nc,m,4,5,hiv\n"
CONFIG = """\
attributes:
  key: {role: quasi-identifier, kind: categorical}
  sex: {role: quasi-identifier, kind: categorical}
  hh: {role: household}
  disease: {role: sensitive, kind: categorical}
data: {weights: w}
"""


def write(tmp_path: Path, data: str = CSV, config: str = CONFIG) -> tuple[Path, Path]:
    (tmp_path / "data.csv").write_text(data)
    (tmp_path / "config.yaml").write_text(config)
    return tmp_path / "data.csv", tmp_path / "config.yaml"


def test_cli_writes_records_and_summary(tmp_path):
    data, config = write(tmp_path)
    result = runner.invoke(
        app,
        [
            "risk",
            "reidentification",
            str(data),
            "-c",
            str(config),
            "-o",
            str(tmp_path / "r.csv"),
            "--summary",
            str(tmp_path / "s.json"),
            "--population-size",
            "60",
            "--top",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    records = pl.read_csv(tmp_path / "r.csv")
    diversity = [f"{kind}_l_diversity_disease" for kind in ("distinct", "entropy", "recursive")]
    assert records.columns == ["fk", "Fk", "individual_risk", "household_risk", *diversity]
    assert records["fk"].to_list() == [1, 2, 2, 3, 3, 3]
    assert records["Fk"].to_list() == [10, 10, 10, 10, 10, 10]
    np.testing.assert_allclose(
        records["individual_risk"].to_numpy(), [0.255843, 0.149410, 0.149410] + [0.130435] * 3, atol=1e-6
    )
    # Households: 1 = records 0 and 1, 2 = record 2, 3 = records 3 and 4, 4 = record 5.
    r = records["individual_risk"].to_numpy()
    expected = [1 - (1 - r[0]) * (1 - r[1])] * 2 + [r[2]] + [1 - (1 - r[3]) * (1 - r[4])] * 2 + [r[5]]
    np.testing.assert_allclose(records["household_risk"].to_numpy(), expected)
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["measure"] == "reidentification"
    assert summary["global_risk"] == pytest.approx(0.157661, abs=1e-6)
    assert summary["prosecutor"]["average"] == pytest.approx(3 / 6)
    assert summary["population_uniqueness"]["sampling_fraction"] == pytest.approx(0.1)
    assert summary["l_diversity"]["disease"]["max"] == 2
    assert [row["record"] for row in summary["riskiest"]] == [0, 1]
    assert "expected re-identifications: 0.95" in result.output


@pytest.mark.parametrize(
    ("options", "config", "data", "words"),
    [
        (["--sampling-fraction", "1.5"], CONFIG, CSV, "--sampling-fraction"),
        (["--sampling-fraction", "0.5", "--population-size", "100"], CONFIG, CSV, "not both"),
        (["--population-size", "3"], CONFIG, CSV, "population_size"),
        ([], CONFIG.replace("quasi-identifier", "insensitive"), CSV, "quasi-identifier"),
        ([], CONFIG, CSV.replace("a,m,1,10", "a,m,1,0"), "F = 0"),
        ([], CONFIG + "  age: {role: quasi-identifier}\n", CSV, "age"),
    ],
)
def test_cli_bad_input_exits_2_without_output(tmp_path, options, config, data, words):
    data_path, config_path = write(tmp_path, data, config)
    if "age" in words:
        config_path.write_text(
            CONFIG.replace("attributes:\n", "attributes:\n  age: {role: quasi-identifier}\n")
        )
    out, summary = tmp_path / "r.csv", tmp_path / "s.json"
    result = runner.invoke(
        app,
        [
            "risk",
            "reidentification",
            str(data_path),
            "-c",
            str(config_path),
            "-o",
            str(out),
            "--summary",
            str(summary),
            *options,
        ],
    )
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert not out.exists() and not summary.exists()


@settings(max_examples=60)
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 5)), min_size=1, max_size=12), st.integers(0, 20))
def test_grouped_quantiles_and_top_records_equal_the_per_record_versions(groups, count):
    values = np.array([v for v, _ in groups])
    counts = np.array([c for _, c in groups])
    if counts.sum() == 0:
        counts[0] = 1
    repeated = np.repeat(values, counts)
    np.testing.assert_allclose(
        grouped_quantiles(values, counts, [0, 0.25, 0.5, 0.75, 1]),
        np.quantile(repeated, [0, 0.25, 0.5, 0.75, 1]),
    )
    # Records in a shuffled order, each pattern's risk on its records.
    rng = np.random.default_rng(len(groups))
    pattern_of = rng.permutation(np.repeat(np.arange(len(values)), counts))
    risk = values[pattern_of]
    count = min(count, len(risk))
    expected = np.argsort(-risk, kind="stable")[:count]
    np.testing.assert_array_equal(_top_records(risk, values, counts, count), expected)


# The counting kernel's fast paths (used here at scale) ------------------------------------------------


@settings(max_examples=60)
@given(
    st.lists(
        st.lists(st.one_of(st.none(), st.integers(-3, 6)), min_size=3, max_size=3), min_size=1, max_size=40
    )
)
def test_small_integer_encoding_equals_the_general_path(rows):
    frame = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.Int8, "c": pl.Int32}, orient="row")
    fast = encode(frame)
    general = encode(frame.with_columns(pl.all().cast(pl.Float64)))  # floats take the binary-search path
    assert fast.cardinalities == general.cardinalities and fast.has_missing == general.has_missing
    for mine, theirs in zip(fast.codes, general.codes, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    for mine, theirs, name in zip(fast.categories, general.categories, frame.columns, strict=True):
        assert mine.dtype == frame.schema[name]
        np.testing.assert_array_equal(mine.to_numpy().astype(float), theirs.to_numpy())


@settings(max_examples=60)
@given(st.integers(1, 200), st.integers(1, 6), st.integers(0, 10**6))
def test_compiled_wildcard_pairs_equal_the_python_loop(groups, k, seed):
    rng = np.random.default_rng(seed)
    patterns = rng.integers(-1, 4, (groups, k)).astype(np.int32)
    sizes = np.stack([rng.integers(1, 5, groups).astype(float), rng.random(groups) * 100], axis=1)
    compiled = wildcard_pattern_sizes(patterns, sizes, [4] * k)
    looped = wildcard_pattern_sizes(patterns, sizes, [2**40] * k)  # key range beyond int64: the loop
    if k > 1:
        np.testing.assert_array_equal(compiled, looped)
    np.testing.assert_array_equal(compiled[:, 1], wildcard_pattern_sizes(patterns, sizes[:, 1], [4] * k))


# sdcMicro's own expectations (tests/testthat/test_indivRisk.R of sdcTools/sdcMicro): three keys,
# eight records with sampling weights, without and with missing values (sdcMicro's freqCalc counts a
# missing value as matching every category: the wildcard treatment), both methods, qual 1 and 2.
SDCMICRO_KEYS = [2, 3, 2, 2, 3, 3, 1, 2, 3, 3, 3, 3, 3, 3, 4, 3, 1, 3, 1, 2, 1, 1, 1, 1]
SDCMICRO_KEYS_NA = [2, 3, 2, 2, 3, 3, 1, None, 3, 3, 3, 3, 3, 3, 4, 3, 1, 3, None, 2, 1, 1, None, 1]
SDCMICRO_WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51]
SDCMICRO_RISK = {  # (missing values, method, qual): sdcMicro's expected rk, as its test prints them
    (False, "approx", 1): [
        0.01369863,
        0.08579129,
        0.01369863,
        0.17707583,
        0.01877883,
        0.01877883,
        0.03931625,
        0.01369863,
    ],
    (False, "approx", 2): [
        0.02739726,
        0.17158258,
        0.02739726,
        0.35415167,
        0.03755767,
        0.03755767,
        0.07863251,
        0.02739726,
    ],
    (False, "exact", 1): [
        0.01355297,
        0.08579129,
        0.01355297,
        0.17707583,
        0.01877883,
        0.01877883,
        0.03931625,
        0.01355297,
    ],
    (False, "exact", 2): [
        0.02710594,
        0.17158258,
        0.02710594,
        0.35415167,
        0.03755767,
        0.03755767,
        0.07863251,
        0.02710594,
    ],
    (True, "approx", 1): [
        0.013698630,
        0.085791288,
        0.010554090,
        0.032466112,
        0.009836066,
        0.009836066,
        0.039316254,
        0.005973716,
    ],
    (True, "approx", 2): [
        0.02739726,
        0.17158258,
        0.02110818,
        0.06493222,
        0.01967213,
        0.01967213,
        0.07863251,
        0.01194743,
    ],
    (True, "exact", 1): [
        0.013552968,
        0.085791288,
        0.010504889,
        0.032466112,
        0.009756889,
        0.009756889,
        0.039316254,
        0.005962551,
    ],
    (True, "exact", 2): [
        0.02710594,
        0.17158258,
        0.02100978,
        0.06493222,
        0.01951378,
        0.01951378,
        0.07863251,
        0.01192510,
    ],
}


@pytest.mark.parametrize(("missing", "method", "qual"), list(SDCMICRO_RISK))
def test_individual_risk_equals_sdcmicros_own_test_values(missing, method, qual):
    from sdckit.config import parse_config
    from sdckit.context import Context
    from sdckit.measures import measure_spec, run_measure

    keys = SDCMICRO_KEYS_NA if missing else SDCMICRO_KEYS
    config = parse_config(
        {
            "data": {"weights": "weight"},
            "risk": {"missing": "wildcard"},
            "attributes": {name: {"role": "quasi-identifier"} for name in "ABC"},
        }
    )
    table = config.read(
        pl.DataFrame({"A": keys[0:8], "B": keys[8:16], "C": keys[16:24], "weight": SDCMICRO_WEIGHTS})
    )
    result = run_measure(
        "reidentification", table, params={"method": method, "qual": qual}, context=Context(config=config)
    )
    risk = measure_spec("reidentification").records(result).get_column("individual_risk").to_numpy()
    assert risk == pytest.approx(SDCMICRO_RISK[(missing, method, qual)], abs=5e-9)


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_l_diversity_equals_sdcmicros_own_test_values(missing):
    """tests/testthat/test_ldiversity.R of sdcTools/sdcMicro: missing occupations group together."""
    from sdckit.config import parse_config
    from sdckit.measures import run_measure

    roles = {name: {"role": "quasi-identifier"} for name in ("sex", "occupation", "ethnicity")}
    config = parse_config({"attributes": {**roles, "sensitive": {"role": "sensitive"}}})
    table = config.read(
        pl.DataFrame(
            {
                "sex": ["female", "female", "female", "male", "male", "female", "female"],
                "occupation": [None, None, None, "teacher", "teacher", "nurse", "nurse"],
                "ethnicity": ["other", "other", "other", "other", "other", "majority", "majority"],
                "sensitive": [1, 0, 2, 1, 0, 0, 1],
            }
        )
    )
    result = run_measure("reidentification", table, params={"missing": missing})
    assert result.l_diversity["sensitive"].tolist() == [3, 3, 3, 2, 2, 2, 2]
