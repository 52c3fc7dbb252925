"""The R-U comparison of the masking methods (``sdckit experiment masking``) on the CASC data."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Literal

import numpy as np
import polars as pl
import pytest
from pydantic import Field
from scipy.spatial.distance import cdist
from typer.testing import CliRunner

from sdckit.anonymize import METHODS, run_method
from sdckit.anonymize.base import MethodSpec
from sdckit.cli import app
from sdckit.errors import ConfigError, InputError
from sdckit.experiments.data import CASC_DATASETS, casc_table, sdcmicro_directory
from sdckit.experiments.masking import (
    markdown,
    masking_experiment,
    plan,
    summary,
    write_masking_experiment,
)
from sdckit.params import MethodParams, Whole
from sdckit.table import Table

DATA = sdcmicro_directory()
needs_data = pytest.mark.skipif(
    not (DATA / "Tarragona.csv").is_file() or not (DATA / "CASCrefmicrodata.csv").is_file(),
    reason=f"the CASC data ({DATA}) is not available",
)
runner = CliRunner()


@pytest.fixture(scope="module")
def tarragona() -> Table:
    if not (DATA / "Tarragona.csv").is_file():
        pytest.skip(f"the CASC data ({DATA}) is not available")
    table = casc_table("tarragona")
    return Table(table.data.head(200), table.schema, source=table.source)


@pytest.fixture(scope="module")
def result(tarragona):
    return masking_experiment({"tarragona": tarragona}, titles={"tarragona": "Tarragona"}, seed=0)


def test_the_plan_follows_the_issue():
    runs = plan()
    assert [run.label for run in runs] == [
        "MDAV k=3", "MDAV k=5", "MDAV k=10",
        "noise α=0.1", "noise α=0.5", "noise α=1",
        "rank swap p=5", "rank swap p=10", "rank swap p=15",
        "synthetic (cart)", "synthetic (regression)",
    ]  # fmt: skip
    noise = [run.params for run in runs if run.method == "noise"]
    assert noise == [{"noise": "correlated", "amount": pytest.approx(a), "seed": 0} for a in (10, 50, 100)]
    assert runs[-1].params == {"m": 1, "model": "regression", "seed": 0}
    for bad, option in (
        ({"ks": (1, 3)}, "^ks: MDAV needs k of at least 2, got 1, 3$"),
        ({"alphas": (0.0,)}, "^alphas: noise needs α > 0, got 0$"),
        ({"alphas": (math.inf,)}, "^alphas: noise needs α > 0, got inf$"),
        ({"ps": (101.0,)}, "^ps: p must be in \\[0, 100\\], got 101$"),
        ({"synthesis_models": ("gan",)}, "^synthesis_models: unknown model 'gan': choose among "),
        ({"implicates": 0}, "^implicates must be at least 1, got 0$"),
    ):
        with pytest.raises(ConfigError, match=option):
            plan(**bad)


@needs_data
def test_casc_tables_are_numeric_quasi_identifiers(tmp_path):
    for name, (file, _) in CASC_DATASETS.items():
        table = casc_table(name)
        assert table.n_records == {"tarragona": 834, "casc": 1080}[name]
        assert len(table.schema.attributes) == 13
        assert all(a.role.value == "quasi-identifier" and a.kind.value == "numeric" for a in table.schema)
        assert file in table.source
    with pytest.raises(InputError, match="is not available; give its folder with directory$"):
        casc_table("tarragona", tmp_path)
    with pytest.raises(ConfigError, match="unknown data set 'eia'"):
        casc_table("eia")


def test_every_row(result):
    rows = result.rows
    assert rows["label"].to_list() == [run.label for run in plan()[:9]] + [
        "PRAM",
        "synthetic (cart)",
        "synthetic (regression)",
    ]
    assert (rows["dataset"] == "tarragona").all()
    measured = rows.head(9)
    for column in ("il1", "il_score", "eigen", "dbrl_percent", "score", "score_tutorial", "on_front"):
        assert measured[column].null_count() == 0, column
    pram = rows.filter(pl.col("method") == "pram").row(0, named=True)
    assert pram["note"] == "no categorical attributes: PRAM not applicable"
    assert pram["il1"] is None and pram["on_front"] is None
    assert result.reference["tarragona"] == pytest.approx(100.0, abs=1.0)  # a few duplicated records tie


def test_measures_grow_and_shrink_with_the_parameters(result):
    """What holds with wide margins on every slice and seed tried (Tarragona and CASC, 150-300
    records, seeds 0-3): more masking, more loss and less linkage."""
    rows = result.rows

    def column(method: str, name: str) -> list[float]:
        return rows.filter(pl.col("method") == method)[name].to_list()

    for method in ("mdav", "noise", "rank-swap"):
        il1, dbrl = column(method, "il1"), column(method, "dbrl_percent")
        assert il1 == sorted(il1) and len(set(il1)) == 3, (method, il1)
        assert dbrl == sorted(dbrl, reverse=True) and len(set(dbrl)) == 3, (method, dbrl)


def test_noise_loss_is_sqrt_alpha_over_pi(result):
    """Correlated noise ε ~ N(0, α·Σ) gives each value |ε_j| with mean sd_j·√α·√(2/π), so IL1 =
    mean |ε|/(√2·sd) = √(α/π) in expectation (sd of the original, ddof 1, vs Σ's: the same)."""
    for alpha, il1 in zip(
        (0.1, 0.5, 1.0), result.rows.filter(pl.col("method") == "noise")["il1"], strict=True
    ):
        assert il1 == pytest.approx(math.sqrt(alpha / math.pi), rel=0.15)


def test_figures_against_brute_force(tarragona, result):
    """IL1 and DBRL of MDAV k=3 recomputed from the release with numpy: nearest original record by
    Euclidean distance on the original's standard scores, ties sharing the credit."""
    release = run_method("mdav", tarragona, {"k": 3}).table
    x = tarragona.data.to_numpy().astype(float)
    y = release.data.select(tarragona.data.columns).to_numpy().astype(float)
    sd = x.std(axis=0, ddof=1)
    mean = x.mean(axis=0)
    il1 = np.mean(np.abs(x - y) / (math.sqrt(2) * sd))
    distance = cdist((y - mean) / sd, (x - mean) / sd)
    nearest = distance <= distance.min(axis=1, keepdims=True) + 1e-12
    credit = np.diag(nearest) / nearest.sum(axis=1)
    row = result.rows.filter(pl.col("label") == "MDAV k=3").row(0, named=True)
    assert row["il1"] == pytest.approx(il1, rel=1e-9)
    assert row["dbrl_percent"] == pytest.approx(100 * credit.mean(), rel=1e-9)
    assert row["score"] == pytest.approx((100 * il1 + 100 * credit.mean()) / 2, rel=1e-9)


def test_pareto_front_is_the_brute_force_non_dominated_set(result):
    rows = result.rows.filter(pl.col("il1").is_not_null())
    points = list(zip(rows["dbrl_percent"], rows["il1"], strict=True))
    expected = [
        not any(r2 <= r and u2 <= u and (r2 < r or u2 < u) for j, (r2, u2) in enumerate(points) if j != i)
        for i, (r, u) in enumerate(points)
    ]
    assert rows["on_front"].to_list() == expected
    assert any(expected)


@dataclasses.dataclass(frozen=True)
class Synthetic:
    table: Table
    params: object = None


def _fake_synthesize(monkeypatch):
    """A stand-in synthesize registered for the test: implicate 1 is the original itself, implicate 2
    its records reversed; the experiment must measure implicate 1 only."""

    class FakeParams(MethodParams):
        m: Whole = Field(1, ge=1)
        model: Literal["cart", "regression"] = "cart"
        seed: Whole = Field(0, ge=0)

    def run(table, params, context):
        first = table.data.with_columns(pl.all().cast(pl.Float64))
        others = [first.reverse().with_columns(pl.lit(i).alias("implicate")) for i in range(2, params.m + 1)]
        stacked = pl.concat([first.with_columns(pl.lit(1).alias("implicate")), *others])
        return Synthetic(Table(stacked, table.schema))

    spec = MethodSpec(name="synthesize", params=FakeParams, run=run, summary=lambda r: {}, help="fake")
    monkeypatch.setitem(METHODS._specs, "synthesize", spec)


def test_synthetic_rows_measure_implicate_one(tarragona, monkeypatch):
    _fake_synthesize(monkeypatch)
    result = masking_experiment(
        {"t": tarragona}, ks=(3,), alphas=(0.5,), ps=(10,), synthesis_models=("cart",), implicates=2
    )
    row = result.rows.filter(pl.col("method") == "synthesize").row(0, named=True)
    assert row["parameter"] == "cart, M=2" and row["note"] == ""
    assert row["il1"] == 0.0 and row["dbrl_percent"] == pytest.approx(result.reference["t"])


def test_synthesize_skipped_when_absent(tarragona, monkeypatch):
    monkeypatch.delitem(METHODS._specs, "synthesize", raising=False)
    result = masking_experiment({"t": tarragona}, ks=(3,), alphas=(0.5,), ps=(10,))
    skipped = result.rows.filter(pl.col("method") == "synthesize")
    assert skipped.height == 2
    assert skipped["note"].to_list() == ["skipped: the method synthesize is not available in this sdckit"] * 2
    assert skipped["on_front"].null_count() == 2


def test_files_and_summary(result, tmp_path):
    paths = write_masking_experiment(result, tmp_path / "out")
    assert set(paths) == {"csv", "markdown", "map_tarragona"}
    assert pl.read_csv(paths["csv"]).height == result.rows.height
    text = paths["markdown"].read_text()
    assert text == markdown(result)
    assert "| Tarragona | mdav | k=3 |" in text and "PRAM not applicable" in text
    assert paths["map_tarragona"].stat().st_size > 10_000
    figures = summary(result, elapsed_seconds=2.3456)
    assert figures["elapsed_seconds"] == 2.346
    front = result.rows.filter(pl.col("on_front") == True)["label"].to_list()  # noqa: E712
    assert figures["datasets"]["tarragona"]["pareto_front"] == front
    best = result.rows.drop_nulls("score").sort("score").row(0, named=True)
    assert figures["datasets"]["tarragona"]["best_score"] == {"label": best["label"], "score": best["score"]}


@pytest.mark.slow
@needs_data
def test_cli_writes_the_files(tmp_path):
    output = tmp_path / "masking"
    arguments = ["experiment", "masking", "--output", str(output), "--datasets", "tarragona,casc",
                 "--ks", "3,5", "--alphas", "0.5", "--ps", "10", "--seed", "1", "-q"]  # fmt: skip
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "| Tarragona | mdav | k=5 |" in result.output
    assert "".join(result.output.split()).endswith(f"written{output}")
    assert {p.name for p in output.iterdir()} == {
        "results.csv",
        "results.md",
        "ru_map_tarragona.png",
        "ru_map_casc.png",
        "summary.json",
    }
    figures = json.loads((output / "summary.json").read_text())
    assert figures["parameters"]["seed"] == 1 and figures["parameters"]["ks"] == [3, 5]
    assert set(figures["datasets"]) == {"tarragona", "casc"}
    assert figures["datasets"]["casc"]["records"] == 1080
    csv = pl.read_csv(output / "results.csv")
    assert csv.height == 2 * (2 + 1 + 1 + 1 + 2)
    # the same seed gives the same table
    again = tmp_path / "again"
    assert runner.invoke(app, [*arguments[:3], str(again), *arguments[4:]]).exit_code == 0
    assert pl.read_csv(again / "results.csv").drop("seconds").equals(csv.drop("seconds"))


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--datasets", "tarragona,eia"], ["--datasets", "eia"]),
        (["--datasets", ""], ["--datasets"]),
        (["--ks", "1,3"], ["--ks"]),
        (["--alphas", "0"], ["--alphas"]),
        (["--alphas", "x"], ["--alphas", "x"]),
        (["--ps", "150"], ["--ps"]),
        (["--synthesis-models", "gan"], ["--synthesis-models", "gan"]),
        (["--implicates", "0"], ["--implicates"]),
        (["--seed", "-1"], ["--seed"]),
    ],
)
def test_cli_bad_input(tmp_path, options, words):
    output = tmp_path / "masking"
    result = runner.invoke(app, ["experiment", "masking", "--output", str(output), "-q", *options])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:")
    for word in words:
        assert word in text, (word, text)
    assert not output.exists()


def test_cli_without_the_data(tmp_path):
    output = tmp_path / "masking"
    nowhere = tmp_path / "nowhere"
    result = runner.invoke(
        app, ["experiment", "masking", "--output", str(output), "--data-dir", str(nowhere), "-q"]
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:")
    assert str(nowhere / "Tarragona.csv") in text and "--data-dir" in text
    assert not output.exists()


def test_a_release_that_cannot_be_made_is_a_row_saying_why(tarragona, monkeypatch):
    class FakeParams(MethodParams):
        m: Whole = Field(1, ge=1)
        model: Literal["cart", "regression"] = "cart"
        seed: Whole = Field(0, ge=0)

    def run(table, params, context):
        raise InputError("attribute 'SALES': the model cannot be fitted")

    spec = MethodSpec(name="synthesize", params=FakeParams, run=run, summary=lambda r: {}, help="fake")
    monkeypatch.setitem(METHODS._specs, "synthesize", spec)
    result = masking_experiment({"t": tarragona}, ks=(3,), alphas=(0.5,), ps=(10,))
    failed = result.rows.filter(pl.col("method") == "synthesize")
    assert failed["note"].to_list() == ["failed: attribute 'SALES': the model cannot be fitted"] * 2
    assert failed["il1"].null_count() == 2 and failed["on_front"].null_count() == 2
    assert result.rows.filter(pl.col("method") == "mdav")["on_front"].to_list() == [True]
