"""The targeted-suppression experiment (Orooji & Knapp, 2019, Section 4) on generated data."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from examples.generate import generate
from typer.testing import CliRunner

import sdckit
import sdckit.experiments.data
from sdckit.cli import app
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.experiments.data import adult_directory
from sdckit.experiments.targeted_suppression import (
    MISSING_LABEL,
    generalization_view,
    generalized_value_weights,
    paper_roles,
    summary,
    targeted_suppression_experiment,
    write_experiment,
)
from sdckit.hierarchy import Hierarchy
from sdckit.models import check_table
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Role, Schema, Table

EXAMPLE_CONFIG = Path(__file__).parents[1] / "examples" / "example.yaml"


@pytest.fixture(scope="module")
def students():
    return load_config(EXAMPLE_CONFIG).read(generate(n_records=3000, seed=2))


def test_paper_roles_split_on_public_probability(students):
    table = paper_roles(students)
    roles = {a.name: a.role for a in table.schema.attributes}
    assert roles["student_id"] is Role.IDENTIFIER
    for attribute in students.schema.attributes:
        if attribute.role is Role.IDENTIFIER:
            continue
        expected = Role.QUASI_IDENTIFIER if attribute.public_probability > 0.01 else Role.SENSITIVE
        assert roles[attribute.name] is expected, attribute.name
    assert roles["school"] is Role.SENSITIVE  # 0.005
    assert roles["migrant"] is Role.QUASI_IDENTIFIER  # 0.012
    with pytest.raises(ConfigError, match="no quasi-identifiers"):
        paper_roles(students, threshold=1.0)


def test_generalization_view_covers_missing_values(students):
    table, hierarchies = generalization_view(paper_roles(students))
    for name, hierarchy in hierarchies.items():
        column = table.column(name)
        assert column.null_count() == 0, name
        hierarchy.leaf_codes(column)  # raises if a value is not covered
    # lunch_status has missing values in the generated data: they become a category of their own.
    assert MISSING_LABEL in table.column("lunch_status").to_list()


def test_generalized_values_weigh_the_least_of_their_leaves():
    hierarchy = Hierarchy.from_rows(
        "flag", [["Yes", "Y-ish", "*"], ["Maybe", "Y-ish", "*"], ["No", "N", "*"]]
    )
    schema = Schema(
        (Attribute("flag", Role.QUASI_IDENTIFIER, public_probability=0.5, sensitivity=1,
                   value_weights={"Yes": 1.0, "Maybe": 0.4, "No": 0.0}),)
    )  # fmt: skip
    table = Table(pl.DataFrame({"flag": ["Y-ish", "*", "N", "Yes"]}), schema)
    weighted = generalized_value_weights(table, {"flag": hierarchy})
    attribute = weighted.schema["flag"]
    np.testing.assert_allclose(attribute.consequence_weights(table.column("flag")), [0.4, 0.0, 0.0, 1.0])


@pytest.mark.slow
def test_experiment_rows_and_files(students, tmp_path):
    result = targeted_suppression_experiment(students, ks=(2, 5), suppression_limit=0.05, max_nodes=2000)
    rows = result.rows
    methods = rows.get_column("method").to_list()
    assert methods[0] == "original data" and methods[1] == "targeted suppression"
    assert len(methods) == 2 + 2 * 4  # k = 2, 5, l-diversity, t-closeness; two families
    original = rows.row(0, named=True)
    targeted = rows.row(1, named=True)
    assert original["high_risk"] == combined_risk(students, alpha=100, epsilon=0.01).above(0.01)
    assert original["high_risk_as_released"] == original["high_risk"]
    assert targeted["high_risk"] <= original["high_risk"]
    # Every release is measured against the original records with coverage matching: a suppressed
    # cell no longer hides the adversary's knowledge of the true value, so the count as released
    # (the record's own null a wildcard) is at most the count by coverage.
    assert result.parameters["matching"] == "coverage"
    assert targeted["high_risk_as_released"] <= targeted["high_risk"]
    for row in rows.iter_rows(named=True):
        if row["method"] in result.risk_after:
            after = result.risk_after[row["method"]]
            assert after.parameters["coverage"] is True
            assert row["high_risk"] == after.above(0.01)
            assert row["mean_risk"] == pytest.approx(after.summary()["mean_risk"])
    # Equation (5): S / (n q), q the quasi-identifiers (public probability > 0.01).
    q = len(result.quasi_identifiers)
    assert targeted["ncp"] == pytest.approx(targeted["suppressed_cells"] / (3000 * q))
    # NCP grows with k within each family.
    for family in ("full-domain generalization", "Mondrian"):
        k2 = rows.filter(pl.col("method") == f"{family}: 2-anonymity").row(0, named=True)
        k5 = rows.filter(pl.col("method") == f"{family}: 5-anonymity").row(0, named=True)
        assert k2["ncp"] <= k5["ncp"] + 1e-12
        assert 0 <= k2["ncp"] <= 1
    assert "elapsed_seconds" not in summary(result)
    figures = summary(result, elapsed_seconds=1.23456)
    assert figures["elapsed_seconds"] == 1.235 and figures["rows"] == rows.to_dicts()
    assert figures["quasi_identifiers"] == list(result.quasi_identifiers)
    paths = write_experiment(result, tmp_path / "out", "students")
    assert pl.read_csv(paths["csv"]).height == rows.height
    assert "| targeted suppression |" in paths["markdown"].read_text()
    for key in ("ncp_chart", "risk_histogram"):
        assert paths[key].stat().st_size > 1000


def test_mondrian_release_of_the_experiment_is_k_anonymous(students):
    """The releases compared are real: re-check one with the checker."""
    from sdckit.anonymize.mondrian import mondrian
    from sdckit.models import KAnonymity

    table, hierarchies = generalization_view(paper_roles(students))
    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    release = mondrian(table, [KAnonymity(5)], quasi_identifiers=names, hierarchies=hierarchies)
    assert check_table(release.table, names, [KAnonymity(5)]).summary()["passes"]


runner = CliRunner()


@pytest.mark.slow
def test_experiment_cli(tmp_path):
    data = tmp_path / "students.parquet"
    generate(n_records=1500, seed=4).write_parquet(data)
    output = tmp_path / "experiment"
    result = runner.invoke(
        app,
        ["experiment", "targeted-suppression", "--data", str(data), "--config", str(EXAMPLE_CONFIG),
         "--output", str(output), "--ks", "2,5", "--methods", "targeted-suppression,mondrian", "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "".join(result.output.split()).endswith(f"written{output}")  # the folder, once all is in it
    figures = json.loads((output / "summary.json").read_text())
    assert [row["method"] for row in figures["rows"]][:2] == ["original data", "targeted suppression"]
    assert {p.name for p in output.iterdir()} == {
        "results.csv",
        "results.md",
        "ncp.png",
        "risk.png",
        "summary.json",
    }


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--ks", "2,x"], ["--ks", "2,x"]),
        (["--ks", "0"], ["--ks"]),
        (["--methods", "swap"], ["--methods", "swap"]),
        (["--suppression-limit", "2"], ["--suppression-limit"]),
        (["--delta", "-1"], ["delta", ">= 0"]),
    ],
)
def test_experiment_cli_bad_input(tmp_path, options, words):
    data = tmp_path / "students.parquet"
    generate(n_records=200, seed=4).write_parquet(data)
    output = tmp_path / "experiment"
    result = runner.invoke(
        app,
        ["experiment", "targeted-suppression", "--data", str(data), "--config", str(EXAMPLE_CONFIG),
         "--output", str(output), "-q", *options],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:")
    for word in words:
        assert word in text, (word, text)
    assert not output.exists() or not any(output.iterdir())


# The improved-slicing experiment ----------------------------------------------------------------------


def synthetic_for_slicing(n: int = 600, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    return pl.DataFrame(
        {
            "a": a,
            "b": (a + rng.integers(0, 2, n)) % 4,  # correlated with a
            "c": rng.integers(0, 3, n),
            "d": rng.choice(["x", "y", "z"], n),
            "e": rng.choice(["p", "q"], n),
            "s": rng.choice(["s1", "s2", "s3", "s4", "s5"], n),
        }
    )


def test_all_columns_correlation_counts_lone_columns_as_zero():
    from sdckit.experiments.slicing import average_correlation

    names = ["a", "b", "c", "d"]
    matrix = np.array([[1, 0.6, 0.2, 0.0], [0.6, 1, 0.4, 0.1], [0.2, 0.4, 1, 0.3], [0.0, 0.1, 0.3, 1]])
    # {a, b, c}: (0.6 + 0.2 + 0.4) / 3 = 0.4; {d} alone: 0 -> 0.2
    assert average_correlation(matrix, names, [("a", "b", "c"), ("d",)]) == pytest.approx(0.2)
    assert average_correlation(matrix, names, [("a", "b"), ("c", "d")]) == pytest.approx(0.45)


def test_slicing_experiment_tables_and_files(tmp_path):
    from sdckit.experiments.slicing import slicing_experiment, write_slicing_experiment
    from sdckit.io import read_table

    table = read_table(synthetic_for_slicing())
    result = slicing_experiment(
        table, sensitive="s", n_columns=(2, 3), runs=3, sensitive_column_size=1, ls=(2, 3), min_bucket_size=20
    )
    correlation = result.correlation
    assert correlation.height == 2 * 2  # two numbers of columns, two methods
    assert set(correlation["method"]) == {"slicing", "improved slicing"}
    assert (correlation["average_correlation"] >= 0).all() and (correlation["average_correlation"] <= 1).all()
    diversity = result.diversity
    assert diversity.height == 2 * 2 * 2 * 2  # columns x methods x l x partitions
    # Every sliced table reported as satisfying l is l-diverse (l achieved >= l).
    satisfied = diversity.filter(pl.col("satisfied"))
    assert satisfied.height > 0
    assert (satisfied["l_achieved"] >= satisfied["l"] - 1e-9).all()
    paths = write_slicing_experiment(result, tmp_path / "slicing", "synthetic")
    assert paths["figure"].stat().st_size > 1000
    assert "Figure 2" in paths["markdown"].read_text()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--columns", "x"], ["--columns", "x"]),
        (["--columns", "1-3"], ["--columns", "at least 2"]),
        (["--runs", "0"], ["--runs"]),
        (["--sensitive", "disease"], ["--sensitive", "disease"]),
        (["--ls", "0"], ["--ls"]),
    ],
)
def test_slicing_experiment_cli_bad_input(tmp_path, options, words):
    data = tmp_path / "data.csv"
    synthetic_for_slicing(100).write_csv(data)
    output = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "experiment",
            "slicing",
            "--data",
            str(data),
            "--output",
            str(output),
            "--sensitive",
            "s",
            "-q",
            *options,
        ],
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:")
    for word in words:
        assert word in text, (word, text)
    assert not output.exists()


def test_slicing_experiment_cli(tmp_path):
    data = tmp_path / "data.csv"
    synthetic_for_slicing(400).write_csv(data)
    output = tmp_path / "out"
    result = runner.invoke(
        app,
        ["experiment", "slicing", "--data", str(data), "--output", str(output), "--sensitive", "s",
         "--runs", "2", "--columns", "2,3", "--sensitive-column-size", "1", "--ls", "2",
         "--min-bucket-size", "20", "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "".join(result.output.split()).endswith(f"written{output}")
    figures = json.loads((output / "summary.json").read_text())
    assert len(figures["correlation"]) == 4
    assert {p.name for p in output.iterdir()} >= {"figure2.png", "results.md", "correlation.csv"}


# The quasi-sensitive experiment ---------------------------------------------------------------------


@pytest.mark.slow
def test_quasi_sensitive_experiment_cli(shared_data, tmp_path, monkeypatch):
    # the experiment reads Adult where SDCKIT_ADULT_DIR says, by default where shared_data finds it
    monkeypatch.setenv("SDCKIT_ADULT_DIR", str(shared_data("adult", "adult.csv").parent))
    output = tmp_path / "qs"
    result = runner.invoke(
        app,
        ["experiment", "quasi-sensitive", "--output", str(output), "--records", "300", "--quick",
         "--run-time-limit", "0.2", "-q"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads((output / "summary.json").read_text())
    five, six = pl.DataFrame(figures["figure5"]), pl.DataFrame(figures["figure6"])
    assert five.height == 2 * (2 + 2)  # (l values + c values) x two strategies
    assert six.height == 2 * 2  # t values x k values
    assert (five["violating_after"] == 0).all() and (six["violating_after"] == 0).all()
    assert ((five["removal_cost"] >= 0) & (five["removal_cost"] <= 1)).all()
    # k = 1 generalizes nothing.
    assert six.filter(pl.col("k") == 1)["generalization_ncp"].to_list() == [0.0, 0.0]
    for name in ("figure5.png", "figure6.png", "results.md", "data.csv", "knowledge.csv"):
        assert (output / name).stat().st_size > 0


@pytest.mark.parametrize(
    ("options", "word"),
    [(["--records", "5"], "--records"), (["--run-time-limit", "0"], "--run-time-limit")],
)
def test_quasi_sensitive_experiment_cli_bad_input(tmp_path, options, word):
    result = runner.invoke(app, ["experiment", "quasi-sensitive", "--output", str(tmp_path / "qs"), *options])
    assert result.exit_code == 2, result.output
    assert word in " ".join(result.output.split())
    assert not (tmp_path / "qs").exists()


def test_quasi_sensitive_experiment_cli_without_adult(tmp_path, monkeypatch):
    monkeypatch.setenv("SDCKIT_ADULT_DIR", str(tmp_path / "nowhere"))
    output = tmp_path / "qs"
    result = runner.invoke(app, ["experiment", "quasi-sensitive", "--output", str(output), "-q"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:")
    assert str(tmp_path / "nowhere" / "adult.csv") in text and "SDCKIT_ADULT_DIR" in text
    assert not output.exists()


# Where the data is looked for -----------------------------------------------------------------------


def test_adult_directory_is_read_at_call_time(tmp_path, monkeypatch):
    monkeypatch.setenv("SDCKIT_ADULT_DIR", str(tmp_path))
    assert adult_directory() == tmp_path
    monkeypatch.setenv("SDCKIT_ADULT_DIR", "")
    default = adult_directory()
    assert default.parts[-3:] == ("shared", "data", "adult")
    # beside the project folder: <project>/src/sdckit/experiments/data.py
    assert default.parent.parent.parent == Path(sdckit.experiments.data.__file__).resolve().parents[4]
    monkeypatch.delenv("SDCKIT_ADULT_DIR")
    assert adult_directory() == default


def test_only_the_experiments_look_for_data():
    """Algorithm modules contain algorithms only: no module of sdckit outside sdckit/experiments/ names
    the data folder, its environment variable or the Adult file."""
    package = Path(sdckit.__file__).resolve().parent
    forbidden = re.compile(r"SDCKIT_ADULT_DIR|shared/data|[\"']shared[\"']|adult\.csv")
    sources = sorted(package.rglob("*.py"))
    assert package / "anonymize" / "quasi_sensitive.py" in sources  # the module the experiment left
    offending = []
    for path in sources:
        if (package / "experiments") in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if forbidden.search(line):
                offending.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    assert not offending, "data lookups outside sdckit/experiments/:\n" + "\n".join(offending)
