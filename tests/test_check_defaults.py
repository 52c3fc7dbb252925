"""``sdckit check`` and :func:`sdckit.models.check.verdict` count a missing value as ``risk`` does
(issue 32): by default a null is a wildcard that matches every value (sdcMicro's convention); the
violating classes print their counts as whole numbers; ``-q`` prints the verdict alone."""

from __future__ import annotations

import io
import json

import polars as pl
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.models import KAnonymity
from sdckit.models.check import check_table, verdict

CONFIG = """attributes:
  zip: {role: quasi-identifier}
  sex: {role: quasi-identifier}
"""
# By hand, with a null matching every value: (476, F) is matched by records 1, 2 and 5 (a null sex),
# 3 by (476, M) with record 5, so every record's class holds at least 2... except (479, M): record 4
# and nothing else. Nulls as a category: (476, null) is a class of its own, of one record.
DATA = "zip,sex\n476,F\n476,F\n476,M\n479,M\n476,\n"


def table():
    return parse_config(CONFIG).read(pl.read_csv(io.StringIO(DATA)))


def test_nulls_are_wildcards_by_default_in_the_library():
    checked = verdict(table(), k=2)
    assert checked.missing == "wildcard"
    # class sizes in order of first appearance: (476,F) 2+1, (476,M) 1+1, (479,M) 1, (476,null) 4
    assert checked.report.sizes.tolist() == [3, 2, 1, 4]
    assert checked.report.summary()["k"] == 1 and checked.failing == ["2-anonymity"]
    as_category = verdict(table(), k=2, missing="category")
    assert as_category.report.sizes.tolist() == [2, 1, 1, 1]
    assert check_table(table(), ["zip", "sex"], [KAnonymity(2)], missing="wildcard").sizes.tolist() == [
        3,
        2,
        1,
        4,
    ]


def test_without_nulls_the_treatment_is_reported_as_asked():
    frame = parse_config(CONFIG).read(pl.read_csv(io.StringIO("zip,sex\n476,F\n476,F\n")))
    assert verdict(frame, k=2).missing == "wildcard"
    assert verdict(frame, k=2, missing="category").missing == "category"


def test_the_command_counts_as_risk_does_and_prints_whole_counts(tmp_path):
    (tmp_path / "data.csv").write_text(DATA)
    (tmp_path / "config.yaml").write_text(CONFIG)
    arguments = ["check", str(tmp_path / "data.csv"), "-c", str(tmp_path / "config.yaml"), "-k", "2"]
    result = CliRunner().invoke(app, [*arguments, "--summary", str(tmp_path / "c.json")])
    assert result.exit_code == 3, result.output
    assert "(nulls as wildcard)" in result.output
    summary = json.loads((tmp_path / "c.json").read_text())
    assert summary["missing"] == "wildcard" and summary["violating_records"] == 1
    # the one violating class, (479, M): 1 record, k 1 (not 1.0)
    lines = [line for line in result.output.splitlines() if "479" in line]
    assert len(lines) == 1 and lines[0].split("│")[1:-1] == [" 479 ", " M   ", "       1 ", "         1 ✗ "]
    assert ".0" not in result.output


def test_quiet_prints_the_verdict_alone(tmp_path):
    (tmp_path / "data.csv").write_text(DATA)
    (tmp_path / "config.yaml").write_text(CONFIG)
    arguments = ["check", str(tmp_path / "data.csv"), "-c", str(tmp_path / "config.yaml"), "-k", "2", "-q"]
    result = CliRunner().invoke(app, arguments)
    assert result.exit_code == 3
    assert result.stdout.splitlines() == [
        "data.csv: 5 records, 4 equivalence classes on zip, sex (nulls as wildcard)",
        "required 2-anonymity: not satisfied",
    ]
