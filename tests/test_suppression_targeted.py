"""Risk-targeted value suppression (Orooji & Knapp, 2019, Figure 1) against the paper and brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracles import brute_risk
from sdckit.anonymize.targeted_suppression import TargetedSuppressionFigures, targeted_suppression
from sdckit.errors import ConfigError
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Kind, Role, Schema, Table
from sdckit.utility import release_ncp
from test_combined import PAPER_FRAME, PAPER_PROBABILITIES, PAPER_SCHEMA, paper_consequence

NAMES = list(PAPER_PROBABILITIES)


def dominant_sets(rows, epsilon, missing):
    """Per record: D(r) and the known sets reaching the largest contribution (brute force)."""
    risks, contributions = brute_risk(rows, PAPER_PROBABILITIES, paper_consequence(), 100, epsilon, missing)
    best = []
    for contribution in contributions:
        top = max(contribution.values())
        best.append({known for known, value in contribution.items() if value >= top * (1 - 1e-12)})
    return risks, best


def suppressed_names(release, row):
    return {name for j, name in enumerate(release.quasi_identifiers) if release.suppressed_cells[row, j]}


def test_paper_example_record_4_loses_gender_and_race():
    """Hand-computed: for r4 (34, Male, Black, 50, Cancer) at epsilon 0 the largest contribution is
    {gender, race}: PK 0.8 * 0.7 = 0.56, two records are Male and Black, C(age, income, disease) =
    0.9 * 0.7 + 1 * 1 = 1.63, so 0.56 / 2 * 100 * 1.63 = 45.64 (against {gender}: 0.8 / 3 * 163 =
    43.47 and {race}: 0.7 / 3 * 163 = 38.03)."""
    release = targeted_suppression(
        Table(PAPER_FRAME, PAPER_SCHEMA), delta=0.01, epsilon=0, missing="category"
    )
    assert release.quasi_identifiers == tuple(NAMES)
    assert suppressed_names(release, 3) == {"gender", "race"}
    row = release.table.data.row(3, named=True)
    assert row == {"age": 34, "gender": None, "race": None, "income": 50, "disease": "Cancer"}
    before = release.figures_as(TargetedSuppressionFigures).risk_before
    assert before.top_contribution[3] == pytest.approx(0.56 / 2 * 100 * 1.63)


@pytest.mark.parametrize("missing", ["category", "wildcard"])
@pytest.mark.parametrize("epsilon", [0.0, 0.01])
@pytest.mark.parametrize("delta", [0.01, 30.0, 60.0])
def test_paper_example_suppresses_exactly_the_dominant_known_sets(missing, epsilon, delta):
    rows = PAPER_FRAME.to_dicts()
    risks, best = dominant_sets(rows, epsilon, missing)
    release = targeted_suppression(
        Table(PAPER_FRAME, PAPER_SCHEMA), delta=delta, epsilon=epsilon, missing=missing
    )
    high = [r for r in range(len(rows)) if risks[r] > delta]
    assert release.figures_as(TargetedSuppressionFigures).high_risk_before == len(high)
    for r in range(len(rows)):
        names = suppressed_names(release, r)
        if r in high:
            assert tuple(name for name in NAMES if name in names) in best[r]
        else:
            assert names == set()
    # Only suppressed cells changed, and they became null.
    released = release.table.data
    for j, name in enumerate(release.quasi_identifiers):
        column = released.get_column(name)
        original = PAPER_FRAME.get_column(name)
        assert column.is_null().to_numpy()[release.suppressed_cells[:, j]].all()
        kept = ~release.suppressed_cells[:, j]
        assert column.filter(pl.Series(kept)).to_list() == original.filter(pl.Series(kept)).to_list()
    # The risk after is the risk of the release, by brute force.
    after, _ = brute_risk(
        released.to_dicts(), PAPER_PROBABILITIES, paper_consequence(), 100, epsilon, missing
    )
    np.testing.assert_allclose(
        release.figures_as(TargetedSuppressionFigures).risk_after.risk, after, rtol=1e-12
    )
    assert release.figures_as(TargetedSuppressionFigures).high_risk_after == sum(
        value > delta for value in after
    )
    n, q = release.cell_penalty.shape
    assert release_ncp(release) == pytest.approx(release.suppressed_cells.sum() / (n * q))


def test_epsilon_limits_the_suppressible_attributes():
    release = targeted_suppression(Table(PAPER_FRAME, PAPER_SCHEMA), delta=0.01, epsilon=0.01)
    # income (0.005) and disease (0.001) are in no known set above epsilon.
    assert release.quasi_identifiers == ("age", "gender", "race")


@st.composite
def risky_tables(draw):
    n = draw(st.integers(4, 14))
    values = st.one_of(st.none(), st.integers(0, 2))
    columns = {
        "a": draw(st.lists(values, min_size=n, max_size=n)),
        "b": draw(st.lists(values, min_size=n, max_size=n)),
        "s": draw(st.lists(st.sampled_from(["yes", "no", None]), min_size=n, max_size=n)),
    }
    probabilities = {
        "a": draw(st.sampled_from([0.2, 0.5, 0.9])),
        "b": draw(st.sampled_from([0.1, 0.6])),
        "s": draw(st.sampled_from([0.02, 0.3])),
    }
    delta = draw(st.sampled_from([0.05, 0.5, 5.0]))
    return columns, probabilities, delta


def schema_of(probabilities):
    return Schema(
        (
            Attribute("a", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=probabilities["a"]),
            Attribute("b", Role.QUASI_IDENTIFIER, Kind.CATEGORICAL, public_probability=probabilities["b"]),
            Attribute(
                "s",
                Role.SENSITIVE,
                Kind.CATEGORICAL,
                public_probability=probabilities["s"],
                sensitivity=1,
                value_weights={"yes": 1.0, "no": 0.0},
            ),
        )
    )


@settings(max_examples=60)
@given(risky_tables())
def test_repeat_brings_every_record_to_delta_under_wildcard(table):
    """With every attribute suppressible (epsilon 0), a record with all its values suppressed matches
    every record and weighs nothing, so repeated rounds must end with no record above delta; checked
    on the release by brute force."""
    columns, probabilities, delta = table
    frame = pl.DataFrame(columns, schema={"a": pl.Int64, "b": pl.Int64, "s": pl.String})
    release = targeted_suppression(
        Table(frame, schema_of(probabilities)), delta=delta, epsilon=0, missing="wildcard", repeat=True
    )
    consequence = {
        "a": lambda v: 0.0,
        "b": lambda v: 0.0,
        "s": lambda v: 1.0 if v == "yes" else 0.0,
    }
    after, _ = brute_risk(release.table.data.to_dicts(), probabilities, consequence, 100, 0, "wildcard")
    assert max(after) <= delta + 1e-9
    assert release.figures_as(TargetedSuppressionFigures).high_risk_after == 0
    assert release.figures_as(TargetedSuppressionFigures).stopped == "no record above delta"
    # Records never above delta in any round keep every value.
    before = release.figures_as(TargetedSuppressionFigures).risk_before.risk
    untouched = before <= delta
    assert not release.suppressed_cells[untouched & (release.suppressed_cells.sum(axis=1) == 0)].any()


def test_repeat_on_generated_data_and_budget():
    from examples.generate import generate

    from sdckit.config import load_config

    config = load_config(Path(__file__).parents[1] / "examples" / "example.yaml")
    table = config.read(generate(n_records=3000, seed=5))
    once = targeted_suppression(table, delta=0.01)
    assert once.figures_as(TargetedSuppressionFigures).high_risk_before > 0
    assert len(once.figures_as(TargetedSuppressionFigures).rounds) == 1
    assert (
        once.n_suppressed_cells == once.figures_as(TargetedSuppressionFigures).rounds[0]["suppressed_cells"]
    )
    repeated = targeted_suppression(table, delta=0.01, repeat=True)
    assert (
        repeated.figures_as(TargetedSuppressionFigures).high_risk_after
        <= once.figures_as(TargetedSuppressionFigures).high_risk_after
    )
    assert (
        repeated.figures_as(TargetedSuppressionFigures).high_risk_after
        == repeated.figures_as(TargetedSuppressionFigures).irreducible
    )
    # The first round of the repeated run is the single round.
    np.testing.assert_array_equal(
        repeated.figures_as(TargetedSuppressionFigures).rounds[0]["suppressed_cells"],
        once.figures_as(TargetedSuppressionFigures).rounds[0]["suppressed_cells"],
    )
    # The risk after is that of the released table.
    again = combined_risk(repeated.table, alpha=100, epsilon=0.01, missing="wildcard")
    np.testing.assert_allclose(
        again.risk, repeated.figures_as(TargetedSuppressionFigures).risk_after.risk, rtol=1e-12
    )
    budget = once.n_suppressed_cells // 3
    limited = targeted_suppression(table, delta=0.01, repeat=True, cell_budget=budget)
    assert 0 < limited.n_suppressed_cells <= budget
    assert limited.figures_as(TargetedSuppressionFigures).stopped == f"cell budget ({budget}) spent"
    # The budget goes to the riskiest records first.
    risk = limited.figures_as(TargetedSuppressionFigures).risk_before.risk
    touched = limited.suppressed_cells.any(axis=1)
    assert risk[touched].min() >= np.sort(risk[(risk > 0.01) & ~touched])[-1] - 1e-12 or touched.all()


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        ({"delta": -0.1}, "delta"),
        ({"delta": "high"}, "delta"),
        ({"delta": 0.01, "max_rounds": 0}, "max_rounds"),
        ({"delta": 0.01, "cell_budget": -1}, "cell_budget"),
        ({"delta": 0.01, "alpha": 0.5}, "alpha"),
        ({"delta": 0.01, "missing": "drop"}, "missing"),
    ],
)
def test_bad_parameters(parameters, message):
    with pytest.raises(ConfigError, match=message):
        targeted_suppression(Table(PAPER_FRAME, PAPER_SCHEMA), **parameters)
