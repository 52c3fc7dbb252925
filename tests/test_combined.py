"""The combined record-level risk of Orooji & Knapp against the paper and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracles import brute_frequencies, brute_risk
from sdckit.errors import ConfigError
from sdckit.risk.combined import combined_risk, enumerate_known_sets
from sdckit.table import Attribute, Kind, Role, Schema, Table, ValueRange

PAPER_FRAME = pl.DataFrame(
    {
        "age": [34, 19, 40, 34, 51],
        "gender": ["Male", "Female", "Male", "Male", "Female"],
        "race": ["Black", "White", "Asian-Pac-Islander", "Black", "Black"],
        "income": [60, 36, 45, 50, 65],  # thousands
        "disease": ["Flu", "Flu", "Flu", "Cancer", "Flu"],
    }
)

PAPER_SCHEMA = Schema(
    (
        Attribute("age", Role.QUASI_IDENTIFIER, Kind.NUMERIC, public_probability=0.3, sensitivity=0),
        Attribute("gender", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.8, sensitivity=0),
        Attribute("race", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=0.7, sensitivity=0),
        Attribute(
            "income",
            Role.SENSITIVE,
            Kind.NUMERIC,
            public_probability=0.005,
            sensitivity=0.9,
            range_weights=(ValueRange(1.0, maximum=40), ValueRange(0.7, minimum=40, maximum=70)),
        ),
        Attribute(
            "disease",
            Role.SENSITIVE,
            Kind.CATEGORICAL,
            public_probability=0.001,
            sensitivity=1,
            value_weights={"Flu": 0.2, "Cancer": 1},
        ),
    )
)

PAPER_PROBABILITIES = {"age": 0.3, "gender": 0.8, "race": 0.7, "income": 0.005, "disease": 0.001}


def paper_consequence():
    income = {60: 0.7, 36: 1.0, 45: 0.7, 50: 0.7, 65: 0.7}
    disease = {"Flu": 0.2, "Cancer": 1.0}
    return {
        "age": lambda v: 0.0,
        "gender": lambda v: 0.0,
        "race": lambda v: 0.0,
        "income": lambda v: 0.9 * income[v],
        "disease": lambda v: 1.0 * disease[v],
    }


def test_paper_worked_example_likelihood_and_consequence():
    """Tables 1-2: L_{age,gender,race}(r4) = 0.084 and C_{income,disease}(r4) = 1.63."""
    result = combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), alpha=100, epsilon=0, missing="category")
    _, contributions = brute_risk(
        PAPER_FRAME.to_dicts(), PAPER_PROBABILITIES, paper_consequence(), 100, 0, "category"
    )
    # The contribution of the split for r4 (index 3) is L * alpha * C = 0.084 * 100 * 1.63.
    assert contributions[3][("age", "gender", "race")] == pytest.approx(0.084 * 100 * 1.63)
    frame_income = PAPER_SCHEMA["income"].consequence_weights(PAPER_FRAME["income"])
    frame_disease = PAPER_SCHEMA["disease"].consequence_weights(PAPER_FRAME["disease"])
    assert frame_income[3] + frame_disease[3] == pytest.approx(1.63)
    assert result.known_sets.height == 32
    row = result.known_sets.filter(pl.col("name") == "age+gender+race")
    assert row["public_probability"][0] == pytest.approx(0.3 * 0.8 * 0.7)
    assert row["combinations"][0] == 4
    assert row["public_probability"][0] / 2 == pytest.approx(0.084)


def test_paper_example_all_records_against_all_32_splits():
    result = combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), alpha=100, epsilon=0, missing="category")
    risks, contributions = brute_risk(
        PAPER_FRAME.to_dicts(), PAPER_PROBABILITIES, paper_consequence(), 100, 0, "category"
    )
    np.testing.assert_allclose(result.risk, risks, rtol=1e-12)
    # Hand check of one term of r1 (index 0): the empty known set gives alpha * C_all / n.
    assert contributions[0][()] == pytest.approx(100 * (0.9 * 0.7 + 0.2) / 5)
    names = result.known_sets["name"].to_list()
    for i in range(5):
        best = max(contributions[i].values())
        assert result.top_contribution[i] == pytest.approx(best)
        assert contributions[i][tuple(filter(None, names[result.top_known_set[i]].split("+")))] == (
            pytest.approx(best)
        )
    assert result.scores()["top_known_set"].to_list()[0] == "gender+race"


def test_pruning_at_paper_threshold():
    result = combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), alpha=100, epsilon=0.01, missing="category")
    expected = {
        frozenset(s)
        for size in range(6)
        for s in itertools.combinations(PAPER_PROBABILITIES, size)
        if math.prod(PAPER_PROBABILITIES[a] for a in s) > 0.01
    }
    assert {frozenset(a) for a in result.known_sets["attributes"].to_list()} == expected
    risks, _ = brute_risk(
        PAPER_FRAME.to_dicts(), PAPER_PROBABILITIES, paper_consequence(), 100, 0.01, "category"
    )
    np.testing.assert_allclose(result.risk, risks, rtol=1e-12)


@settings(max_examples=200)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=0, max_size=9),
    st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.2, 0.5]),
)
def test_pruning_keeps_exactly_the_sets_above_epsilon(probabilities, epsilon):
    kept = enumerate_known_sets(probabilities, epsilon)
    expected = {
        s
        for size in range(1, len(probabilities) + 1)
        for s in itertools.combinations(range(len(probabilities)), size)
        if math.prod(probabilities[j] for j in s) > epsilon
    }
    assert kept[0] == ()
    assert set(kept[1:]) == expected and len(kept) == len(expected) + 1
    position = {s: i for i, s in enumerate(kept)}
    for s in kept[1:]:
        assert position[s[:-1]] < position[s]  # parent first (pre-order)


def test_epsilon_zero_keeps_all_two_to_the_m():
    assert len(enumerate_known_sets([0.5, 0.1, 0.9, 0.01, 0.3], 0)) == 32


@st.composite
def random_tables(draw):
    n = draw(st.integers(1, 18))
    m = draw(st.integers(1, 4))
    values = st.one_of(st.none(), st.integers(0, 2))
    columns = {f"a{j}": draw(st.lists(values, min_size=n, max_size=n)) for j in range(m)}
    probabilities = {name: draw(st.sampled_from([0.05, 0.2, 0.5, 0.9])) for name in columns}
    sensitivities = {name: draw(st.sampled_from([0.0, 0.5, 1.0])) for name in columns}
    value_weights = {name: draw(st.sampled_from([{}, {"0": 0.1}, {"1": 0.0, "2": 0.6}])) for name in columns}
    weights = draw(st.lists(st.floats(0.5, 4.0), min_size=n, max_size=n))
    return columns, probabilities, sensitivities, value_weights, weights


@settings(max_examples=120)
@given(
    random_tables(),
    st.sampled_from(["category", "wildcard"]),
    st.sampled_from([0.0, 0.01, 0.1]),
    st.booleans(),
)
def test_risk_equals_brute_force_with_nulls(table, missing, epsilon, weighted):
    columns, probabilities, sensitivities, value_weights, weights = table
    frame = pl.DataFrame(columns, schema={name: pl.Int64 for name in columns})
    schema = Schema(
        tuple(
            Attribute(
                name,
                Role.QUASI_IDENTIFIER,
                Kind.CATEGORICAL,
                public_probability=probabilities[name],
                sensitivity=sensitivities[name],
                value_weights=value_weights[name],
            )
            for name in columns
        )
    )

    def consequence(name):
        def weight(value):
            if value is None:
                return 0.0
            return sensitivities[name] * value_weights[name].get(str(value), 1.0)

        return weight

    weight_array = np.array(weights) if weighted else None
    result = combined_risk(
        Table(frame, schema), alpha=10, epsilon=epsilon, missing=missing, weights=weight_array
    )
    risks, contributions = brute_risk(
        frame.to_dicts(),
        probabilities,
        {name: consequence(name) for name in columns},
        10,
        epsilon,
        missing,
        weights if weighted else None,
    )
    np.testing.assert_allclose(result.risk, risks, rtol=1e-10, atol=1e-12)
    for i, per_set in enumerate(contributions):
        assert result.top_contribution[i] == pytest.approx(max(per_set.values()), rel=1e-10)


@settings(max_examples=80)
@given(random_tables(), st.sampled_from(["category", "wildcard"]), st.data())
def test_zero_weights_stand_for_nobody(table, missing, data):
    """A record of weight 0 adds nothing to any count and has risk 0; every risk stays finite, and
    the others equal brute force (and the risks without the zero-weight records)."""
    columns, probabilities, sensitivities, _, _ = table
    frame = pl.DataFrame(columns, schema={name: pl.Int64 for name in columns})
    n = frame.height
    weights = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 2.0]), min_size=n, max_size=n)))
    schema = Schema(
        tuple(
            Attribute(
                name,
                Role.QUASI_IDENTIFIER,
                public_probability=probabilities[name],
                sensitivity=sensitivities[name],
            )
            for name in columns
        )
    )
    with np.errstate(all="raise"):  # no division by zero anywhere
        result = combined_risk(Table(frame, schema), alpha=10, epsilon=0.01, missing=missing, weights=weights)
    assert np.isfinite(result.risk).all() and np.isfinite(result.top_contribution).all()
    nobody = weights == 0
    assert (result.risk[nobody] == 0).all() and (result.top_contribution[nobody] == 0).all()
    assert (result.top_known_set[nobody] == 0).all()

    def consequence(name):
        return lambda value: 0.0 if value is None else sensitivities[name]

    risks, _ = brute_risk(
        frame.to_dicts(),
        probabilities,
        {name: consequence(name) for name in columns},
        10,
        0.01,
        missing,
        list(weights),
    )
    np.testing.assert_allclose(result.risk, risks, rtol=1e-10, atol=1e-12)
    if (~nobody).any():
        kept = combined_risk(
            Table(frame.filter(pl.Series(~nobody)), schema),
            alpha=10,
            epsilon=0.01,
            missing=missing,
            weights=weights[~nobody],
        )
        np.testing.assert_allclose(result.risk[~nobody], kept.risk, rtol=1e-10, atol=1e-12)


def test_zero_weight_record_alone_by_hand():
    """q='b' has weight 0 and is alone: its count would be 0; it represents nobody, risk 0. The
    records of q='a' (weights 1 and 3) each see count 4 for the known set {q}."""
    frame = pl.DataFrame({"q": ["a", "a", "b"], "s": ["Yes", "Yes", "Yes"]})
    schema = Schema(
        (
            Attribute("q", Role.QUASI_IDENTIFIER, public_probability=0.5),
            Attribute("s", Role.SENSITIVE, sensitivity=1.0),
        )
    )
    result = combined_risk(Table(frame, schema), alpha=100, epsilon=0.01, weights=np.array([1.0, 3.0, 0.0]))
    # D = 1 * 100 * 1 / 4 (empty known set: the total weight is 4) + 0.5 * 100 * 1 / 4 ({q}).
    np.testing.assert_allclose(result.risk, [37.5, 37.5, 0.0])
    assert result.top_contribution[2] == 0.0


def test_sampling_weights_replace_counts():
    frame = pl.DataFrame({"q": ["a", "a", "b"], "s": ["Yes", "No", "Yes"]})
    schema = Schema(
        (
            Attribute("q", Role.QUASI_IDENTIFIER, public_probability=0.5),
            Attribute("s", Role.SENSITIVE, public_probability=0.0, sensitivity=1.0, value_weights={"No": 0}),
            Attribute("w", Role.INSENSITIVE, Kind.NUMERIC),
        )
    )
    frame = frame.with_columns(w=pl.Series([10.0, 30.0, 5.0]))
    result = combined_risk(Table(frame, schema), alpha=2, epsilon=0.01, missing="category", weights="w")
    # known sets: {} and {q}. r0: C = 1; {}: 1/45 * 2 * 1; {q}: 0.5/40 * 2 * 1.
    assert result.risk[0] == pytest.approx(2 / 45 + 0.5 * 2 / 40)
    assert result.risk[1] == pytest.approx(0.0)
    assert result.risk[2] == pytest.approx(2 / 45 + 0.5 * 2 / 5)
    assert result.weighted and result.known_sets.height == 2
    expected_counts = brute_frequencies(frame.to_dicts(), ["q"], "category", [10.0, 30.0, 5.0])
    assert expected_counts == [40.0, 40.0, 5.0]


def test_identifiers_are_dropped():
    frame = PAPER_FRAME.with_columns(ssn=pl.Series(["1", "2", "3", "4", "5"]))
    schema = Schema((*PAPER_SCHEMA.attributes, Attribute("ssn", Role.IDENTIFIER, public_probability=1.0)))
    with_ssn = combined_risk(Table(frame, schema), alpha=100, epsilon=0, missing="category")
    without = combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), alpha=100, epsilon=0, missing="category")
    np.testing.assert_allclose(with_ssn.risk, without.risk)
    assert "ssn" not in with_ssn.attributes


def test_carrying_only_shared_records_is_exact_on_larger_data():
    rng = np.random.default_rng(7)
    n = 4000
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 4, n),
            "b": rng.integers(0, 30, n),
            "c": rng.integers(0, 300, n),
            "d": rng.choice(["Yes", "No"], n, p=[0.05, 0.95]),
        }
    )
    schema = Schema(
        (
            Attribute("a", public_probability=0.9),
            Attribute("b", public_probability=0.6),
            Attribute("c", public_probability=0.5),
            Attribute("d", public_probability=0.3, sensitivity=1.0, value_weights={"No": 0}),
        )
    )
    result = combined_risk(Table(frame, schema), alpha=100, epsilon=0, missing="category")
    expected = np.zeros(n)
    for size in range(5):
        for known in itertools.combinations("abcd", size):
            pk = math.prod(schema[a].public_probability for a in known)
            count = frame.select(pl.len().over(list(known)) if known else pl.lit(n)).to_series().to_numpy()
            consequence = 0.0 if "d" in known else (frame["d"] == "Yes").to_numpy().astype(float)
            expected += pk / count * 100 * consequence
    np.testing.assert_allclose(result.risk, expected, rtol=1e-12)
    assert result.known_sets.filter(pl.col("name") == "a+b+c+d")["combinations"][0] == (
        frame.select(pl.struct("a", "b", "c", "d").n_unique()).item()
    )


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"alpha": 1}, "alpha must be a number greater than 1"),
        ({"alpha": 0.5}, "alpha must be a number greater than 1"),
        ({"epsilon": -0.1}, "epsilon must be a number >= 0"),
        ({"missing": "drop"}, "missing must be one of"),
        ({"weights": "nope"}, "weights column 'nope'"),
        (
            {"weights": np.array([1.0, 1, 1, 1, -1])},
            "record 5: weights must be finite and non-negative, got -1",
        ),
        ({"weights": np.array([1.0, 1, np.nan, 1, 1])}, "record 3: .* got a missing or non-numeric value"),
    ],
)
def test_bad_parameters(parameters, message):
    with pytest.raises(ConfigError, match=message):
        combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), **parameters)


def test_progress_is_reported_per_known_set():
    calls = []
    combined_risk(
        Table(PAPER_FRAME, PAPER_SCHEMA),
        epsilon=0,
        missing="category",
        progress=lambda d, t: calls.append((d, t)),
    )
    assert calls == [(i, 32) for i in range(1, 33)]


def test_summary_counts_records_above_threshold():
    result = combined_risk(Table(PAPER_FRAME, PAPER_SCHEMA), alpha=100, epsilon=0.01, missing="category")
    summary = result.summary(threshold=float(np.sort(result.risk)[2]))
    assert summary["records"] == 5
    assert summary["above_threshold"] == 2
    assert summary["above_threshold_percent"] == pytest.approx(40.0)
    assert summary["quantiles"]["max"] == pytest.approx(result.risk.max())
    assert result.riskiest(2)["record"].to_list() == list(np.argsort(-result.risk)[:2])
