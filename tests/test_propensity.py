"""Propensity-score utility (Woo, Reiter, Oganian & Karr 2009; SPEC §9.4): the SPEC example, identical
and unrelated tables, what interactions add to main effects, the design matrix, and the command."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.measures import UTILITY_MEASURES, run_measure
from sdckit.utility.propensity import design_matrix

runner = CliRunner()


def tables(original: pl.DataFrame, release: pl.DataFrame, roles: dict[str, str] | None = None):
    attributes = {
        name: {
            "role": (roles or {}).get(name, "quasi-identifier"),
            "kind": "numeric" if dtype.is_numeric() else "categorical",
        }
        for name, dtype in original.schema.items()
    }
    config = parse_config({"attributes": attributes})
    return config.read(original), config.read_release(release)


def propensity(original: pl.DataFrame, release: pl.DataFrame, **params):
    return run_measure("propensity", *tables(original, release), params=params, group="utility")


def test_spec_example_saturated_model_on_one_binary_variable():
    """Original 6 ones / 4 zeros, release 4 ones / 6 zeros: p̂(1) = 4/10, p̂(0) = 6/10, U_p = 0.01."""
    original = pl.DataFrame({"x": ["1"] * 6 + ["0"] * 4})
    release = pl.DataFrame({"x": ["1"] * 4 + ["0"] * 6})
    for model in ("main", "interactions"):
        result = propensity(original, release, model=model)
        assert result.c == 0.5
        assert result.utility == pytest.approx(0.01, abs=1e-6)
        assert result.loss == pytest.approx(0.04, abs=1e-5)
        np.testing.assert_allclose(result.scores, [0.4] * 6 + [0.6] * 4 + [0.4] * 4 + [0.6] * 6, atol=1e-5)
        summary = UTILITY_MEASURES.get("propensity").summary(result)
        assert summary["propensity_utility"] == pytest.approx(0.01, abs=1e-6)
        assert summary["propensity_loss"] == pytest.approx(0.04, abs=1e-5)


def mixed(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 10, n)
    return pl.DataFrame(
        {
            "age": np.round(age, 1),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["n", "s", "e", "w"], n),
            "income": np.round(age * 50 + rng.normal(0, 200, n), 0),
        }
    )


@pytest.mark.parametrize("model", ["main", "interactions"])
def test_identical_tables_score_zero(model):
    data = mixed(400, 1)
    result = propensity(data, data, model=model)
    assert result.utility == pytest.approx(0, abs=1e-10)
    np.testing.assert_allclose(result.scores, 0.5, atol=1e-5)


@pytest.mark.parametrize("model", ["main", "interactions"])
def test_unrelated_tables_score_near_the_maximum(model):
    """A release with nothing in common with the original (other categories, numbers far away) is
    perfectly separable: U_p reaches c(1 − c), here with unequal sizes (c = 300/700)."""
    original = mixed(400, 2)
    release = mixed(300, 3).with_columns(
        (pl.col("age") + 100).alias("age"), pl.col("region").str.to_uppercase().alias("region")
    )
    result = propensity(original, release, model=model)
    c = 300 / 700
    assert result.c == pytest.approx(c)
    assert result.utility == pytest.approx(c * (1 - c), rel=1e-3)
    assert result.loss > 0.999


def test_interactions_see_what_main_effects_cannot():
    """Original: the four cells of two binary variables equally often; release: only the cells where
    they agree. The margins are equal, so main effects see nothing (U_p = 0), while the saturated
    interaction model gives p̂ = 2/3 on the agreeing cells and 0 on the others: U_p = 1/12."""
    original = pl.DataFrame({"a": ["0", "0", "1", "1"] * 50, "b": ["0", "1", "0", "1"] * 50})
    release = pl.DataFrame({"a": ["0", "1"] * 100, "b": ["0", "1"] * 100})
    assert propensity(original, release, model="main").utility == pytest.approx(0, abs=1e-8)
    assert propensity(original, release, model="interactions").utility == pytest.approx(1 / 12, abs=1e-4)


def test_the_design_matrix_columns():
    original = pl.DataFrame({"n": [1.0, 2.0, 3.0], "k": ["a", "b", "c"], "j": ["x", "y", "x"]})
    release = pl.DataFrame({"n": [4.0, None, 6.0], "k": ["a", "*", "b"], "j": ["y", "y", "x"]})
    main, names = design_matrix(original, release, ["n", "k", "j"], "main")
    # n standardized, its missing indicator, k one-hot on {*, a, b, c} minus the first, j on {x, y} minus x
    assert names == ["n", "n missing", "k=1", "k=2", "k=3", "j=1"]
    values = np.array([1, 2, 3, 4, 3.2, 6])  # the missing number set to the stacked mean
    np.testing.assert_allclose(main[:, 0].toarray().ravel(), (values - values.mean()) / values.std())
    np.testing.assert_array_equal(main[:, 1].toarray().ravel(), [0, 0, 0, 0, 1, 0])
    k_codes, j_codes = np.array([1, 2, 3, 1, 0, 2]), np.array([0, 1, 0, 1, 1, 0])
    np.testing.assert_array_equal(main[:, 2:5].toarray(), k_codes[:, None] == np.arange(1, 4))
    np.testing.assert_array_equal(main[:, 5].toarray().ravel(), j_codes)
    full, full_names = design_matrix(original, release, ["n", "k", "j"], "interactions")
    # + n², n·(k=1..3), n·(j=1), and the occurring (k, j) combinations with both levels ≥ 1
    combos = {(k, j) for k, j in zip(k_codes, j_codes, strict=True) if k and j}
    assert full.shape[1] == 6 + 1 + 3 + 1 + len(combos)
    assert full_names[6] == "n^2"


def test_records_and_too_many_features(tmp_path):
    original = mixed(100, 4)
    release = mixed(100, 5)
    result = propensity(original, release, model="main")
    records = UTILITY_MEASURES.get("propensity").records(result)
    assert records.height == 200 and records["table"].to_list()[99:101] == ["original", "release"]
    np.testing.assert_allclose(records["propensity"].to_numpy(), result.scores)
    assert float(((records["propensity"] - 0.5) ** 2).mean()) == pytest.approx(result.utility)
    with pytest.raises(
        ConfigError,
        match=(
            "more than max_features 5: choose fewer attributes \\(attributes\\), "
            "the main model, or raise max_features$"
        ),
    ):
        propensity(original, release, max_features=5)


CONFIG = """attributes:
  age:    {role: quasi-identifier, kind: numeric}
  sex:    {role: quasi-identifier, kind: categorical}
  region: {role: sensitive, kind: categorical}
  income: {role: insensitive, kind: numeric}
"""


def test_the_command_writes_scores_and_summary(tmp_path):
    original, release, config = tmp_path / "o.csv", tmp_path / "r.csv", tmp_path / "c.yaml"
    mixed(150, 6).write_csv(original)
    mixed(120, 7).with_columns(pl.lit("*").alias("sex")).write_csv(release)
    config.write_text(CONFIG)
    scores, summary = tmp_path / "scores.csv", tmp_path / "u.json"
    arguments = ["utility", "propensity", str(original), str(release), "-c", str(config)]
    labels = ["--generalized", "labels"]  # "*" compared as a label, not drawn
    result = runner.invoke(
        app, [*arguments, "--model", "main", *labels, "-o", str(scores), "--summary", str(summary)]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    frame = pl.read_csv(scores)
    assert frame.height == 270 and figures["attributes"] == ["age", "sex", "region"]
    c = 120 / 270
    assert figures["c"] == pytest.approx(c, abs=1e-6)
    assert figures["propensity_utility"] == pytest.approx(
        float(((frame["propensity"] - c) ** 2).mean()), abs=1e-6
    )
    assert figures["propensity_utility"] == pytest.approx(c * (1 - c), rel=1e-3)  # sex "*" separates
    assert figures["propensity_loss"] == pytest.approx(
        figures["propensity_utility"] / (c * (1 - c)), abs=1e-5
    )
    bad = runner.invoke(
        app, [*arguments, "--attributes", "age,height", "--summary", str(tmp_path / "x.json")]
    )
    assert bad.exit_code == 2 and "'height' is not an attribute" in bad.output.replace("\n", " ")
    assert not (tmp_path / "x.json").exists()
