"""`sdckit table METHOD` end to end: the protected table in long form, its summary, the HTML and
τ-Argus outputs, the audit of patterns, and bad input (exit 2, one clear message, nothing written)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.tabular.base import TABLE_METHODS

runner = CliRunner()

HIERARCHY = "".join(
    f"{district};{region};*\n"
    for district, region in [
        ("n1", "North"),
        ("n2", "North"),
        ("s1", "South"),
        ("s2", "South"),
        ("w1", "West"),
    ]
)
CONFIG = """attributes:
  district: {role: quasi-identifier, hierarchy: districts.csv}
  sex:      {role: quasi-identifier}
  activity: {role: quasi-identifier}
  turnover: {role: insensitive, kind: numeric}
  firm:     {role: identifier}
"""


def records(n: int = 400, seed: int = 7) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame(
        {
            "district": rng.choice(["n1", "n2", "s1", "s2", "w1"], n, p=[0.3, 0.3, 0.2, 0.15, 0.05]),
            "sex": rng.choice(["f", "m"], n),
            "activity": rng.choice(["a", "b", "c", "d"], n, p=[0.5, 0.3, 0.15, 0.05]),
            "turnover": np.round(rng.lognormal(3, 1.2, n), 2),
            "firm": rng.integers(0, 150, n),
        }
    )


@pytest.fixture
def files(tmp_path):
    records().write_csv(tmp_path / "data.csv")
    (tmp_path / "districts.csv").write_text(HIERARCHY)
    (tmp_path / "config.yaml").write_text(CONFIG)
    return tmp_path


def run(*arguments: object):
    return runner.invoke(app, [str(argument) for argument in arguments])


def flat(text: str) -> str:
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def table_args(files: Path, *extra: object) -> list[object]:
    return [files / "data.csv", "-c", files / "config.yaml", "--rows", "district", "--cols", "sex", *extra]


def test_every_table_method_has_a_command():
    result = run("table", "--help")
    assert result.exit_code == 0
    for spec in TABLE_METHODS:
        assert spec.name in result.output


def test_rounding_writes_an_additive_table_of_multiples(files):
    out = files / "rounded.csv"
    summary = files / "rounded.json"
    result = run("table", "round", *table_args(files, "--base", 5, "-o", out, "--summary", summary, "-q"))
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    assert set(frame.columns) >= {"district", "sex", "frequency", "status", "released"}
    assert (frame.get_column("released") % 5 == 0).all()
    released = {(r["district"], r["sex"]): r["released"] for r in frame.iter_rows(named=True)}
    for district in ["n1", "n2", "s1", "s2", "w1", "North", "South", "Total"]:
        assert released[(district, "f")] + released[(district, "m")] == released[(district, "Total")]
    assert released[("n1", "f")] + released[("n2", "f")] == released[("North", "f")]
    document = json.loads(summary.read_text())
    assert document["method"] == "round" and document["base"] == 5
    assert document["table"]["cells"] == frame.height
    assert document["primary_cells"] == 0


def test_cta_moves_every_sensitive_cell_out_of_its_interval(files):
    out = files / "adjusted.parquet"
    options = ["--layers", "activity", "--value", "turnover", "--rule", "p=20", "-o", out, "-q"]
    result = run("table", "cta", *table_args(files, *options))
    assert result.exit_code == 0, result.output
    frame = pl.read_parquet(out)
    primary = frame.filter(pl.col("status") == "primary")
    assert primary.height > 0
    moved = (primary["released"] >= primary["turnover"] + primary["upper_protection"] - 1e-6) | (
        primary["released"] <= primary["turnover"] - primary["lower_protection"] + 1e-6
    )
    assert moved.all()


def test_the_cell_key_method_gives_a_margin_the_same_value_in_two_tables(files):
    one, two = files / "one.csv", files / "two.csv"
    for out, dims in ((one, ["--rows", "district"]), (two, ["--rows", "district", "--cols", "activity"])):
        arguments = [files / "data.csv", "-c", files / "config.yaml", *dims, "--seed", 3, "-o", out, "-q"]
        result = run("table", "cell-key", *arguments)
        assert result.exit_code == 0, result.output
    a = pl.read_csv(one).select("district", "released")
    b = pl.read_csv(two).filter(pl.col("activity") == "Total").select("district", "released")
    assert a.sort("district").equals(b.sort("district"))


def test_linked_tables_and_the_html_output(files):
    html, out = files / "t.html", files / "t.csv"
    result = run(
        "table", "round", files / "data.csv", "-c", files / "config.yaml",
        "--table", "district,sex", "--table", "district,activity",
        "--base", 3, "-o", out, "--html", html, "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    assert frame.filter((pl.col("sex") != "Total") & (pl.col("activity") != "Total")).height == 0
    assert "<table" in html.read_text()


def test_the_argus_files_of_a_problem(files):
    argus = files / "argus"
    options = ["--value", "turnover", "--rule", "p=15", "--min-frequency", 3, "--argus", argus, "-q"]
    result = run("table", "cta", *table_args(files, *options))
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in argus.iterdir())
    assert {"data.arb", "data.rda", "data.tab", "data_district.hrc"} <= set(names)
    batch = (argus / "data.arb").read_text()
    assert "P(15,1)" in batch and "FREQ(3," in batch


def test_a_table_of_cells_with_non_additive_totals_is_refused(tmp_path):
    cells = "r,c,n\na,x,1\na,y,2\nb,x,3\nb,y,4\na,Tot,3\nb,Tot,8\nTot,x,4\nTot,y,6\nTot,Tot,10\n"
    (tmp_path / "cells.csv").write_text(cells)
    out = tmp_path / "out.csv"
    arguments = ["--rows", "r", "--cols", "c", "--cells", "--frequency", "n", "--total-label", "Tot"]
    result = run("table", "round", tmp_path / "cells.csv", *arguments, "-o", out)
    assert result.exit_code == 2
    assert "line 7: the total r=b, c=Total has n 8 but its cells sum to 7" in flat(result.output)
    assert not out.exists()


def test_a_table_of_cells_is_rounded_with_its_own_total_label(tmp_path):
    cells = "r,c,n\na,x,1\na,y,2\nb,x,3\nb,y,4\na,Tot,3\nb,Tot,7\nTot,x,4\nTot,y,6\nTot,Tot,10\n"
    (tmp_path / "cells.csv").write_text(cells)
    out = tmp_path / "out.csv"
    arguments = ["--rows", "r", "--cols", "c", "--cells", "--frequency", "n", "--total-label", "Tot"]
    result = run("table", "round", tmp_path / "cells.csv", *arguments, "-o", out, "-q")
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    assert "Tot" in frame.get_column("r").to_list() and "Total" not in frame.get_column("r").to_list()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--rows", "distrct"], "unknown attribute 'distrct'"),
        (["--cols", "sex"], "--cols and --layers need --rows"),
        ([], "name the table's dimensions"),
        (
            ["--rows", "district", "--table", "district,sex"],
            "either with --rows/--cols/--layers or with --table",
        ),
        (["--rows", "district", "--rule", "p=10"], "applies to a magnitude table"),
        (["--rows", "district", "--rule", "x=3"], "unknown rule"),
        (["--rows", "district", "--value", "sex", "--rule", "p=10"], "'sex' (--value) is not numeric"),
        (["--rows", "district", "--frequency", "n"], "--frequency names the counts of a table of cells"),
        (["--rows", "district,district"], "'district' is a dimension of one table twice"),
    ],
)
def test_bad_table_options_are_one_clear_error(files, arguments, message):
    out = files / "out.csv"
    base = [files / "data.csv", "-c", files / "config.yaml"]
    result = run("table", "cta", *base, *arguments, "--min-frequency", 3, "-o", out)
    assert result.exit_code == 2, result.output
    assert message in flat(result.output)
    assert not out.exists()


def test_rules_are_refused_by_methods_that_do_not_use_them(files):
    result = run("table", "round", *table_args(files, "--min-frequency", 3))
    assert result.exit_code == 2
    assert "--min-frequency: round does not use primary cells" in flat(result.output)


def test_a_method_that_protects_primary_cells_needs_a_rule(files):
    result = run("table", "cta", *table_args(files))
    assert result.exit_code == 2
    assert "cta protects primary cells: give a rule" in flat(result.output)


def test_negative_contributions_with_the_p_rule_are_refused(tmp_path):
    frame = records().with_columns(
        pl.when(pl.int_range(pl.len()) == 5).then(-3.0).otherwise(pl.col("turnover")).alias("turnover")
    )
    frame.write_csv(tmp_path / "data.csv")
    out = tmp_path / "out.csv"
    result = run(
        "table",
        "cta",
        tmp_path / "data.csv",
        "--rows",
        "district",
        "--value",
        "turnover",
        "--rule",
        "p=10",
        "-o",
        out,
    )
    assert result.exit_code == 2
    assert "'turnover' has 1 negative value (first in record 6, -3)" in flat(result.output)
    assert not out.exists()


def test_a_hierarchy_that_does_not_cover_the_codes_is_refused(files):
    (files / "districts.csv").write_text(HIERARCHY.replace("w1;West;*\n", ""))
    out = files / "out.csv"
    result = run("table", "round", *table_args(files, "-o", out))
    assert result.exit_code == 2
    assert "does not cover 1 value of the data: 'w1'" in flat(result.output)
    assert not out.exists()


def test_an_infeasible_rounding_is_refused(tmp_path):
    # A 2x2x2 table with no zero-restricted controlled rounding to base 2 (found by brute force).
    interior = np.array([[[3, 0], [1, 1]], [[3, 0], [2, 1]]])
    rows = [
        {"a": f"a{i}", "b": f"b{j}", "c": f"c{k}"}
        for i, j, k in np.ndindex(interior.shape)
        for _ in range(interior[i, j, k])
    ]
    pl.DataFrame(rows).write_csv(tmp_path / "data.csv")
    out = tmp_path / "out.csv"
    arguments = ["--rows", "a", "--cols", "b", "--layers", "c", "--base", 2, "-o", out]
    result = run("table", "round", tmp_path / "data.csv", *arguments)
    assert result.exit_code == 2, result.output
    assert "relax" in flat(result.output)
    assert not out.exists()
    result = run("table", "round", tmp_path / "data.csv", *arguments, "--relax", "-q")
    assert result.exit_code == 0, result.output


def test_an_option_of_another_method_is_named(files):
    result = run("table", "round", *table_args(files, "--variance", 2))
    assert result.exit_code == 2
    assert "--variance is not an option of round; it is an option of cell-key" in flat(result.output)


def suppress_args(files: Path, *extra: object) -> list[object]:
    rules = ["--value", "turnover", "--rule", "p=15", "--min-frequency", 3]
    return [*table_args(files, "--layers", "activity", *rules), *extra]


@pytest.mark.slow
def test_suppression_publishes_an_audited_pattern_and_audit_agrees(files):
    out, summary, html = files / "pattern.csv", files / "pattern.json", files / "pattern.html"
    result = run(
        "table", "suppress", *suppress_args(files, "-o", out, "--summary", summary, "--html", html, "-q")
    )
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    status = frame.get_column("status")
    assert (status == "primary").sum() > 0 and (status == "secondary").sum() > 0
    assert (
        frame.filter(pl.col("status") != "published").get_column("released").null_count()
        == (status != "published").sum()
    )
    document = json.loads(summary.read_text())
    assert document["audit_passed"] is True and document["primary_cells"] == (status == "primary").sum()
    assert document["secondary_cells"] == (status == "secondary").sum()
    suppressed = frame.filter(pl.col("status") != "published")
    assert suppressed.get_column("feasible_low").null_count() == 0
    audit_out = files / "audit.csv"
    result = run("table", "audit", *suppress_args(files, "--pattern", out, "-o", audit_out))
    assert result.exit_code == 0, result.output
    assert "audit passed" in flat(result.output)
    np.testing.assert_allclose(
        pl.read_csv(audit_out).get_column("feasible_low").fill_null(-1).to_numpy(),
        frame.get_column("feasible_low").fill_null(-1).to_numpy(),
        atol=1e-6,
    )


@pytest.mark.slow
def test_audit_finds_what_a_weakened_pattern_discloses(files):
    out = files / "pattern.csv"
    assert run("table", "suppress", *suppress_args(files, "-o", out, "-q")).exit_code == 0
    frame = pl.read_csv(out)
    # Publish every secondary cell: each primary cell is then recomputable from its margins.
    weakened = frame.with_columns(
        pl.when(pl.col("status") == "secondary")
        .then(pl.lit("published"))
        .otherwise(pl.col("status"))
        .alias("status")
    )
    weakened.write_csv(files / "weak.csv")
    report = files / "weak-audit.csv"
    result = run("table", "audit", *suppress_args(files, "--pattern", files / "weak.csv", "-o", report))
    assert result.exit_code == 3, result.output
    text = flat(result.output)
    assert "audit failed" in text
    assert "does not reach" in text or "exactly disclosed" in text
    assert report.exists()  # the audit writes its report even when the pattern fails


@pytest.mark.slow
def test_audit_reads_another_tools_status_codes(files):
    out = files / "pattern.csv"
    assert run("table", "suppress", *suppress_args(files, "-o", out, "-q")).exit_code == 0
    codes = {"published": "s", "primary": "u", "secondary": "x"}
    theirs = pl.read_csv(out).select(
        "district", "sex", "activity", pl.col("status").replace_strict(codes).alias("sdcStatus")
    )
    theirs.write_csv(files / "theirs.csv")
    report = files / "theirs-audit.csv"
    arguments = suppress_args(files, "--pattern", files / "theirs.csv", "--status-column", "sdcStatus")
    result = run("table", "audit", *arguments, "-o", report)
    assert result.exit_code == 0, result.output
    assert "audit passed" in flat(result.output)
    # read with their codes, the pattern is ours: the same statuses and the same feasible intervals
    ours = pl.read_csv(out)
    audited = pl.read_csv(report)
    assert audited.get_column("status").to_list() == ours.get_column("status").to_list()
    assert (audited.get_column("status") != "published").sum() > 0
    for bound in ("feasible_low", "feasible_high"):
        np.testing.assert_allclose(
            audited.get_column(bound).fill_null(-1).to_numpy(),
            ours.get_column(bound).fill_null(-1).to_numpy(),
            atol=1e-6,
        )


def test_audit_refuses_a_pattern_with_unknown_cells(files):
    pl.DataFrame({"district": ["nowhere"], "sex": ["f"], "activity": ["a"], "status": ["primary"]}).write_csv(
        files / "bad.csv"
    )
    result = run("table", "audit", *suppress_args(files, "--pattern", files / "bad.csv"))
    assert result.exit_code == 2
    assert "line 2: the table has no cell district=nowhere, sex=f, activity=a" in flat(result.output)


def test_a_cost_variable_prices_each_cell_by_its_sum(files):
    out, summary = files / "pattern.csv", files / "pattern.json"
    arguments = suppress_args(files, "--cost-variable", "firm", "-o", out, "--summary", summary, "-q")
    result = run("table", "suppress", *arguments)
    assert result.exit_code == 0, result.output
    frame = pl.read_csv(out)
    data = records()
    secondary = frame.filter(pl.col("status") == "secondary")
    expected = 0.0
    for row in secondary.iter_rows(named=True):
        inside = data.filter(
            pl.all_horizontal(pl.lit(row[d] == "Total") | (pl.col(d) == row[d]) for d in ("sex", "activity"))
        )
        districts = {"North": ["n1", "n2"], "South": ["s1", "s2"], "Total": ["n1", "n2", "s1", "s2", "w1"]}
        inside = inside.filter(pl.col("district").is_in(districts.get(row["district"], [row["district"]])))
        expected += inside.get_column("firm").sum()
    assert json.loads(summary.read_text())["cost"] == pytest.approx(expected)
    result = run("table", "suppress", *suppress_args(files, "--cost-variable", "sex"))
    assert result.exit_code == 2 and "attribute 'sex' is not numeric" in flat(result.output)
