"""Synthetic data by sequential regression multiple imputation (``sdckit anonymize synthesize``) and the
combining rules of Raghunathan, Reiter & Rubin (2003) and Reiter (2003)."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import t as student_t
from typer.testing import CliRunner

from sdckit.anonymize.synthesis import SynthesisFigures, combine, synthesize
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.table import Attribute, Kind, Role, Schema, Table

runner = CliRunner()


# Combining rules: a hand computation -----------------------------------------------------------


def test_combine_fully_synthetic_by_hand():
    # q = 1, 2, 3, 6: q̄ = 3, b = ((−2)² + (−1)² + 0 + 3²) / 3 = 14/3; ū = (0.5 + 1 + 1.5 + 1) / 4 = 1.
    combined = combine([1, 2, 3, 6], [0.5, 1.0, 1.5, 1.0], kind="full")
    assert combined.estimate == 3.0
    assert combined.between == pytest.approx(14 / 3)
    assert combined.within == pytest.approx(1.0)
    # T_f = (1 + 1/4)·14/3 − 1 = 70/12 − 1 = 58/12; ν_f = 3·(1 − 4·1/(5·14/3))² = 3·(1 − 12/70)².
    assert combined.variance == pytest.approx(58 / 12)
    assert combined.df == pytest.approx(3 * (1 - 12 / 70) ** 2)
    low, high = combined.interval(0.95)
    half = student_t.ppf(0.975, 3 * (1 - 12 / 70) ** 2) * math.sqrt(58 / 12)
    assert (low, high) == pytest.approx((3 - half, 3 + half))
    assert not combined.adjusted


def test_combine_partially_synthetic_by_hand():
    combined = combine([1, 2, 3, 6], [0.5, 1.0, 1.5, 1.0], kind="partial")
    # T_p = b/M + ū = (14/3)/4 + 1 = 14/12 + 1; ν_p = 3·(1 + 4·1/(14/3))² = 3·(1 + 12/14)².
    assert combined.variance == pytest.approx(14 / 12 + 1)
    assert combined.df == pytest.approx(3 * (1 + 12 / 14) ** 2)


def test_combine_full_with_a_negative_variance_falls_back_to_the_within_variance():
    combined = combine([1.0, 1.1], [1.0, 1.0], kind="full")  # (1 + 1/2)·0.005 − 1 < 0
    assert combined.adjusted
    assert combined.variance == 1.0
    assert combined.df == 1.0


def test_combine_refuses_what_it_cannot_combine():
    with pytest.raises(ConfigError, match="at least 2"):
        combine([1.0], [1.0])
    with pytest.raises(ConfigError, match="one variance per estimate"):
        combine([1.0, 2.0], [1.0])
    with pytest.raises(ConfigError, match="kind"):
        combine([1.0, 2.0], [1.0, 1.0], kind="both")  # type: ignore[arg-type]


# Synthesis ------------------------------------------------------------------------------------


def linear_table(n: int = 2000, seed: int = 11) -> Table:
    rng = np.random.default_rng(seed)
    x = rng.normal(10, 2, n)
    y = 2 * x + rng.normal(0, 1, n)
    colour = rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2])
    frame = pl.DataFrame({"id": np.arange(n), "x": x, "y": y, "colour": colour})
    schema = Schema(
        (
            Attribute("id", role=Role.IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("x", role=Role.QUASI_IDENTIFIER, kind=Kind.NUMERIC),
            Attribute("y", role=Role.SENSITIVE, kind=Kind.NUMERIC),
            Attribute("colour", role=Role.QUASI_IDENTIFIER),
        )
    )
    return Table(frame, schema)


def implicates(release, m: int) -> list[pl.DataFrame]:
    data = release.table.data
    return [data.filter(pl.col("implicate") == k).drop("implicate") for k in range(1, m + 1)]


def slope(frame: pl.DataFrame) -> tuple[float, float]:
    """OLS slope of y on x and its estimated variance."""
    x, y = frame["x"].to_numpy(), frame["y"].to_numpy()
    design = np.column_stack([np.ones(len(x)), x])
    beta, residuals, _, _ = np.linalg.lstsq(design, y, rcond=None)
    sigma2 = residuals[0] / (len(x) - 2)
    return float(beta[1]), float(sigma2 * np.linalg.inv(design.T @ design)[1, 1])


@pytest.mark.parametrize("model", ["cart", "regression"])
def test_means_and_the_regression_coefficient_within_the_combined_intervals(model):
    table = linear_table()
    m = 5
    release = synthesize(table, m=m, model=model, seed=4)
    parts = implicates(release, m)
    assert release.table.data.columns == ["implicate", "x", "y", "colour"]  # identifier dropped
    assert [part.height for part in parts] == [2000] * m
    estimates = [slope(part) for part in parts]
    combined = combine([e for e, _ in estimates], [v for _, v in estimates], kind="full")
    low, high = combined.interval(0.95)
    assert low < 2.0 < high  # the true coefficient
    original_x = table.column("x").to_numpy()
    for name in ("x", "y"):
        means = [part[name].mean() for part in parts]
        variances = [part[name].var() / part.height for part in parts]
        low, high = combine(means, variances, kind="full").interval(0.95)
        assert low < table.column(name).mean() < high, name
    assert low < 2 * 10 < high  # the population mean of y
    # The first attribute comes from its marginal (original values); the regression model draws new y.
    assert np.isin(parts[0]["x"].to_numpy(), original_x).all()
    if model == "regression":
        assert not np.isin(parts[0]["y"].to_numpy(), table.column("y").to_numpy()).any()


def test_categorical_marginals_within_sampling_error():
    table = linear_table(n=4000)
    release = synthesize(table, m=5, seed=9)
    original = table.column("colour").value_counts().sort("colour")
    shares = dict(zip(original["colour"], original["count"] / 4000, strict=True))
    for part in implicates(release, 5):
        counts = part["colour"].value_counts()
        for colour, count in zip(counts["colour"], counts["count"], strict=True):
            p = shares[colour]
            # The synthetic share varies by the posterior draw and the sampling: variance ≈ 2p(1−p)/n.
            assert abs(count / 4000 - p) < 4 * math.sqrt(2 * p * (1 - p) / 4000), colour


@pytest.mark.parametrize("model", ["cart", "regression"])
def test_missing_values_are_kept_at_their_rate(model):
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.normal(0, 1, n)
    # Missingness depends on x: the indicator model must carry that too.
    gone = rng.random(n) < np.where(x > 0, 0.3, 0.1)
    colour = rng.choice(["a", "b", "c"], n)
    frame = pl.DataFrame({"x": x, "colour": colour, "income": x * 3 + rng.normal(0, 1, n)})
    frame = frame.with_columns(
        pl.when(pl.Series(gone)).then(None).otherwise(pl.col("income")).alias("income"),
        pl.when(pl.Series(rng.random(n) < 0.15)).then(None).otherwise(pl.col("colour")).alias("colour"),
    )
    table = Table.from_frame(frame)
    release = synthesize(table, m=5, model=model, seed=2)
    for name in ("income", "colour"):
        rate = frame[name].null_count() / n
        for part in implicates(release, 5):
            synthetic = part[name].null_count() / n
            assert abs(synthetic - rate) < 4 * math.sqrt(2 * rate * (1 - rate) / n), (name, synthetic, rate)
        # the present values are values: no NaN smuggled in
        assert not release.table.data[name].cast(pl.String).str.contains("NaN").any()
    part = implicates(release, 5)[0]
    high = part.filter(pl.col("x") > 0)["income"].null_count() / part.filter(pl.col("x") > 0).height
    low = part.filter(pl.col("x") <= 0)["income"].null_count() / part.filter(pl.col("x") <= 0).height
    assert high > low + 0.08  # the dependence of missingness on x survives


def test_cart_releases_original_values_only():
    table = linear_table(n=500)
    release = synthesize(table, m=3, model="cart", seed=1)
    for name in ("x", "y"):
        assert np.isin(release.table.data[name].to_numpy(), table.column(name).to_numpy()).all()


def test_same_seed_same_release_other_seed_other_release():
    table = linear_table(n=300)
    first = synthesize(table, m=3, seed=7).table.data
    assert first.equals(synthesize(table, m=3, seed=7).table.data)
    assert not first.equals(synthesize(table, m=3, seed=8).table.data)


def test_partial_synthesis_leaves_the_other_columns_identical():
    table = linear_table(n=1000)
    release = synthesize(table, m=4, attributes=["y"], seed=5)
    assert release.figures_as(SynthesisFigures).kind == "partial"
    parts = implicates(release, 4)
    for part in parts:
        assert part["x"].to_list() == table.column("x").to_list()
        assert part["colour"].to_list() == table.column("colour").to_list()
        assert part["y"].to_list() != table.column("y").to_list()
    # y is still related to the original x (modelled from it): the slope survives under partial rules.
    estimates = [slope(part) for part in parts]
    low, high = combine([e for e, _ in estimates], [v for _, v in estimates], kind="partial").interval()
    assert low < 2.0 < high


def test_a_constant_column_is_copied_and_integers_and_dates_keep_their_type():
    n = 400
    rng = np.random.default_rng(0)
    import datetime

    frame = pl.DataFrame(
        {
            "k": [7] * n,
            "age": rng.integers(18, 90, n),
            "born": [
                datetime.date(2000, 1, 1) + datetime.timedelta(days=int(d)) for d in rng.integers(0, 900, n)
            ],
        }
    )
    table = Table(
        frame,
        Schema(
            (
                Attribute("k", kind=Kind.NUMERIC),
                Attribute("age", kind=Kind.NUMERIC),
                Attribute("born", kind=Kind.DATE),
            )
        ),
    )
    for model in ("cart", "regression"):
        data = synthesize(table, m=2, model=model, seed=3).table.data
        assert data["k"].to_list() == [7] * (2 * n)
        assert data["age"].dtype == frame["age"].dtype
        assert data["born"].dtype == pl.Date


def test_clear_errors():
    table = linear_table(n=100)
    with pytest.raises(ConfigError, match="'nope'"):
        synthesize(table, attributes=["nope"])
    with pytest.raises(ConfigError, match="identifier"):
        synthesize(table, attributes=["id"])
    with pytest.raises(ConfigError, match="m "):
        synthesize(table, m=0)
    with pytest.raises(ConfigError, match="order: 'nope'"):
        synthesize(table, order=["nope"])
    frame = table.data.with_columns(pl.Series("colour", ["red"] * 60 + ["blue"] * 39 + ["violet"]))
    with pytest.raises(ConfigError, match="colour: category 'violet' has one record"):
        synthesize(Table(frame, table.schema), model="regression")
    # CART takes it
    synthesize(Table(frame, table.schema), model="cart", m=2)
    with pytest.raises(ConfigError, match="column 'implicate'"):
        synthesize(Table.from_frame(table.data.with_columns(implicate=pl.lit(1))))


# Command line ---------------------------------------------------------------------------------

CONFIG = """attributes:
  id: {role: identifier}
  x: {role: quasi-identifier, kind: numeric}
  colour: {role: quasi-identifier}
  y: {role: sensitive, kind: numeric}
"""


def write_inputs(tmp_path):
    linear_table(n=200).data.write_csv(tmp_path / "data.csv")
    (tmp_path / "config.yaml").write_text(CONFIG)
    return ["anonymize", "synthesize", str(tmp_path / "data.csv"), "-c", str(tmp_path / "config.yaml")]


def test_cli_writes_the_stacked_implicates_and_the_same_seed_gives_the_same_file(tmp_path):
    arguments = write_inputs(tmp_path)
    outputs = []
    for name in ("a", "b"):
        result = runner.invoke(
            app,
            [*arguments, "-m", "3", "--model", "cart", "--seed", "5", "-o", str(tmp_path / f"{name}.csv"),
             "--summary", str(tmp_path / f"{name}.json")],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / f"{name}.csv").read_bytes())
    assert outputs[0] == outputs[1]
    released = pl.read_csv(tmp_path / "a.csv")
    # configuration order (x, colour, y): the first synthesized is x, from its marginal
    assert released.columns == ["implicate", "x", "y", "colour"]
    assert released["implicate"].to_list() == [1] * 200 + [2] * 200 + [3] * 200
    summary = json.loads((tmp_path / "a.json").read_text())
    assert summary["m"] == 3
    assert summary["model"] == "cart"
    assert summary["seed"] == 5
    assert summary["synthesized"] == ["x", "colour", "y"]
    assert summary["released_records"] == 600


@pytest.mark.parametrize(
    "options, words",
    [
        (["--synthesize", "nope"], "'nope'"),
        (["-m", "0"], "-m"),
        (["--model", "forest"], "--model"),
        (["--order", "id"], "identifier"),
    ],
)
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, options, words):
    arguments = write_inputs(tmp_path)
    result = runner.invoke(
        app, [*arguments, *options, "-o", str(tmp_path / "out.csv"), "--summary", str(tmp_path / "s.json")]
    )
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / "s.json").exists()
