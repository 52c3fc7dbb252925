"""The `sdckit anonymize METHOD` commands end to end: the release, its summary, `sdckit check` on it,
bad input (exit 2, one clear message, no output file), releases that do not satisfy what was asked
(exit 3), and what the registry of methods promises: one command per method with only its own options,
and parameters validated up front."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
import typer.main
from typer.testing import CliRunner

from param_values import bad_values
from sdckit.anonymize import METHODS
from sdckit.anonymize.recoding import GeneralizeFigures, full_domain_generalization
from sdckit.cli import app
from sdckit.cli.anonymize import method_options
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.models import KAnonymity
from sdckit.params import option_name
from test2_data import DATA

N_RECORDS = 14
ZIP_ROWS = sorted({line.split(",")[0] for line in DATA.strip().splitlines()[1:]})

CONFIG = """attributes:
  ZIPCode: {role: quasi-identifier, hierarchy: zip.csv}
  Age:     {role: quasi-identifier, hierarchy: {intervals: [20, 30, 40, 50, 60], fanout: 2}}
  Disease: {role: sensitive}
"""


def zip_hierarchy(rows: list[str] = ZIP_ROWS) -> str:
    """ARX format: the code, then one more digit masked per level, then '*'."""
    return "".join(f"{z};{z[:4]}*;{z[:3]}**;{z[:2]}***;*\n" for z in rows)


runner = CliRunner()


def write(directory: Path, data: str = DATA, config: str = CONFIG, zips: str | None = None):
    (directory / "data.csv").write_text(data)
    (directory / "config.yaml").write_text(config)
    (directory / "zip.csv").write_text(zip_hierarchy() if zips is None else zips)
    return directory / "data.csv", directory / "config.yaml"


def run(*arguments: str):
    return runner.invoke(app, [str(argument) for argument in arguments])


def flat(text: str) -> str:
    """The output with rich's line wrapping (and the box of a usage error) undone."""
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def squeezed(text: str) -> str:
    """The output without any whitespace or box, for words rich may break at any character."""
    return "".join(flat(text).split())


INPUTS = ["config.yaml", "data.csv", "zip.csv"]


def packed(text: str) -> str:
    """The output with every space removed (rich may fold a long path in the middle)."""
    return "".join(text.split())


def anonymize(directory: Path, method: str, *options: str, output: str = "out.csv", summary: bool = True):
    data, config = write(directory)
    extra = ["--summary", directory / "summary.json"] if summary else []
    return run(
        "anonymize", method, data, "--config", config, "--output", directory / output, *options, *extra
    )


CASES = [
    ["-k", "2"],
    ["-k", "3", "--suppression-limit", "0.2"],
    ["-k", "2", "-l", "2"],
    ["-k", "2", "-l", "2", "--l-variant", "entropy"],
    ["-k", "2", "-l", "2", "--l-variant", "recursive", "--c", "3"],
    ["-k", "2", "-t", "0.4"],
    ["-k", "2", "-t", "0.4", "--t-distance", "ordered", "--suppression-limit", "0.1"],
    ["-k", "4", "--metric", "dm", "--suppression-limit", "0.3"],
    ["-l", "3", "--metric", "entropy"],
    ["-k", "2", "--metric", "aecs"],
]


def check_options(options: list[str]) -> list[str]:
    """The model options of an anonymize command (every option takes a value), for `sdckit check`."""
    pairs = zip(options[::2], options[1::2], strict=True)
    return [item for pair in pairs if pair[0] not in SEARCH_OPTIONS for item in pair]


SEARCH_OPTIONS = ("--metric", "--suppression-limit")


@pytest.mark.slow
@pytest.mark.parametrize("options", CASES, ids=[" ".join(case) for case in CASES])
def test_anonymize_writes_release_and_summary_that_check_accepts(tmp_path, options):
    result = anonymize(tmp_path, "generalize", *options)
    assert result.exit_code == 0, result.output
    assert f"written{tmp_path / 'out.csv'}" in packed(result.output)
    original = pl.read_csv(tmp_path / "data.csv", infer_schema=False)
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert released.columns == original.columns == ["ZIPCode", "Age", "Disease"]
    assert released.height == N_RECORDS
    # Row order: the sensitive column is untouched, record by record.
    assert released["Disease"].to_list() == original["Disease"].to_list()

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["method"] == "generalize"
    assert summary["satisfied"] is True and summary["violation"] is None
    assert summary["recipe"]["steps"][0]["method"] == "generalize"
    assert set(summary["levels"]) == {"ZIPCode", "Age"}
    suppressed = released.filter((pl.col("ZIPCode") == "*") & (pl.col("Age") == "*")).height
    # At the top node every record is all '*' without being suppressed.
    top = summary["levels"] == {"ZIPCode": 4, "Age": 3}
    assert summary["suppressed_records"] == (0 if top else suppressed)
    limit = (
        float(options[options.index("--suppression-limit") + 1]) if "--suppression-limit" in options else 0
    )
    assert summary["suppressed_records"] <= limit * N_RECORDS
    kept = released.filter(~((pl.col("ZIPCode") == "*") & (pl.col("Age") == "*"))) if not top else released
    classes = kept.group_by("ZIPCode", "Age").len()
    assert summary["equivalence_classes"] == classes.height
    assert summary["smallest_class"] == classes["len"].min()
    if "-k" in options:
        assert summary["smallest_class"] >= int(options[options.index("-k") + 1])
        assert summary["recipe"]["steps"][0]["k"] == int(options[options.index("-k") + 1])
    assert 0 <= summary["metrics"]["loss"] <= 1
    assert set(summary["metrics"]) >= {"loss", "dm", "aecs", "entropy", "precision"}
    assert summary["heuristic"] is False

    # Same levels as the library on the same table.
    table = load_config(tmp_path / "config.yaml").read(tmp_path / "data.csv")
    if options[:2] == ["-k", "2"] and len(options) == 2:
        release = full_domain_generalization(table, [KAnonymity(2)], quasi_identifiers=["ZIPCode", "Age"])
        assert summary["levels"] == release.levels
        assert summary["metrics"]["loss"] == pytest.approx(
            release.figures_as(GeneralizeFigures).search["metric_value"]
        )

    checked = run(
        "check",
        tmp_path / "out.csv",
        "--config",
        tmp_path / "config.yaml",
        *check_options(options),
        "--summary",
        tmp_path / "check.json",
    )
    assert checked.exit_code == 0, checked.output
    assert "satisfied" in checked.output and "not satisfied" not in checked.output
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["satisfied"] is True
    assert report["n_records"] == N_RECORDS


def test_written_lines_come_after_the_report(tmp_path):
    result = anonymize(tmp_path, "generalize", "-k", "2")
    assert result.exit_code == 0, result.output
    text = packed(result.output)
    release = text.find(f"written{tmp_path / 'out.csv'}")
    summary = text.find(f"written{tmp_path / 'summary.json'}")
    assert 0 < text.find("generalizationlevels") < release < summary, text
    assert text.endswith("summary.json")


def test_suppressed_records_are_all_star_and_drop_suppressed_leaves_them_out(tmp_path):
    options = ["-k", "3", "--suppression-limit", "0.3"]
    result = anonymize(tmp_path, "generalize", *options)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    star = (pl.col("ZIPCode") == "*") & (pl.col("Age") == "*")
    assert summary["suppressed_records"] > 0  # this case does suppress (pinned by the data)
    assert released.filter(star).height == summary["suppressed_records"]
    # A suppressed record has every QI '*': no record has only some of them '*'.
    assert released.filter((pl.col("ZIPCode") == "*") ^ (pl.col("Age") == "*")).height == 0

    again = run(
        "anonymize",
        "generalize",
        tmp_path / "data.csv",
        "--config",
        tmp_path / "config.yaml",
        *options,
        "--drop-suppressed",
        "--output",
        tmp_path / "dropped.parquet",
    )
    assert again.exit_code == 0, again.output
    dropped = pl.read_parquet(tmp_path / "dropped.parquet")
    assert dropped.columns == ["ZIPCode", "Age", "Disease"]
    assert dropped.height == N_RECORDS - summary["suppressed_records"]
    kept = released.filter(~star)
    assert dropped.cast(pl.String).rows() == kept.rows()  # same records, same order


def test_identifier_is_dropped_and_hand_checked_levels(tmp_path):
    lines = DATA.strip().splitlines()
    data = "\n".join(["Name," + lines[0]] + [f"p{i}," + line for i, line in enumerate(lines[1:])]) + "\n"
    config = CONFIG.replace("attributes:\n", "attributes:\n  Name: {role: identifier}\n")
    data_path, config_path = write(tmp_path, data=data, config=config)
    out = tmp_path / "out.csv"
    result = run(
        "anonymize", "generalize", data_path, "--config", config_path, "-k", str(N_RECORDS), "--output", out
    )
    assert result.exit_code == 0, result.output
    released = pl.read_csv(out, infer_schema=False)
    assert released.columns == ["ZIPCode", "Age", "Disease"]
    # k = n: one class. Every ZIP code starts with 47: '47***' (level 3) costs the same Loss as '*'
    # (it covers every leaf) at a lower level; Age has no single interval below '*' ([20, 40) is the
    # widest).
    assert released["ZIPCode"].unique().to_list() == ["47***"]
    assert released["Age"].unique().to_list() == ["*"]


BAD_OPTIONS = [
    ("generalize", ["-k", "0"], ["-k", "greater than or equal to 1", "got 0"]),
    ("generalize", ["-k", "15"], ["k must be at most the number of records", "14", "15"]),
    (
        "generalize",
        ["-k", "2", "-l", "7"],
        ["distinct 7-diversity", "Disease", "cannot be satisfied", "only 6 distinct"],
    ),
    ("generalize", ["-k", "2", "-t", "1.5"], ["-t", "less than or equal to 1", "1.5"]),
    ("generalize", ["-k", "2", "-t", "-0.1"], ["-t", "greater than or equal to 0", "-0.1"]),
    ("generalize", ["-k", "2", "-t", "nan"], ["-t", "finite", "nan"]),
    (
        "generalize",
        ["-k", "2", "--suppression-limit", "2"],
        ["--suppression-limit", "less than or equal to 1", "2"],
    ),
    (
        "generalize",
        ["-k", "2", "--suppression-limit", "-0.5"],
        ["--suppression-limit", "greater than or equal to 0", "-0.5"],
    ),
    ("generalize", ["-k", "2", "--metric", "utility"], ["--metric", "'loss'", "'utility'"]),
    ("generalize", ["-k", "2", "--max-nodes", "0"], ["--max-nodes", "greater than or equal to 1", "0"]),
    ("mondrian", [], ["mondrian needs at least one privacy model", "-k", "-l", "-t"]),
    ("local-suppression", [], ["-k", "required"]),
    ("local-suppression", ["-k", "2", "--importance", "Age,Height"], ["importance", "Height"]),
    ("local-suppression", ["-k", "2", "--missing", "maybe"], ["--missing", "'wildcard'", "'maybe'"]),
    ("targeted-suppression", [], ["--delta", "required"]),
    ("targeted-suppression", ["--delta", "-1"], ["--delta", "greater than or equal to 0", "-1"]),
    (
        "targeted-suppression",
        ["--delta", "0.1", "--repeat", "--max-rounds", "0"],
        ["--max-rounds", "greater than or equal to 1", "0"],
    ),
    ("targeted-suppression", ["--delta", "0.1", "--max-rounds", "2"], ["--max-rounds", "only with --repeat"]),
    ("targeted-suppression", ["--delta", "0.1", "--alpha", "1"], ["--alpha", "greater than 1", "1"]),
    ("mondrian", ["-k", "2", "--mode", "loose"], ["--mode", "'strict'", "'loose'"]),
    ("generalize", ["-k", "2", "-l", "2", "--l-variant", "fancy"], ["--l-variant", "fancy"]),
    ("generalize", ["-k", "2", "-l", "2.5"], ["-l", "whole number", "2.5"]),
    ("generalize", [], ["generalize needs at least one privacy model", "-k", "-l", "-t"]),
    ("mondrian", ["-k", "15"], ["k must be at most the number of records", "14", "15"]),
    # The whole table's effective l (exp of its entropy) is about 5.6, so entropy 6-diversity is
    # impossible at every level, with any suppression.
    (
        "generalize",
        ["-l", "6", "--l-variant", "entropy"],
        ["entropy 6-diversity", "Disease", "cannot be satisfied"],
    ),
    (
        "generalize",
        ["-l", "2", "--l-variant", "recursive", "--c", "0.1"],
        ["recursive (0.1,2)-diversity", "cannot be satisfied"],
    ),
    ("top-bottom-coding", ["--top", "50"], ["--attribute", "required"]),
    ("top-bottom-coding", ["--attribute", "Age"], ["top-bottom-coding needs --bottom or --top"]),
    (
        "top-bottom-coding",
        ["--attribute", "Age", "--bottom", "50", "--top", "20"],
        ["--bottom at most --top", "50 > 20"],
    ),
    ("top-bottom-coding", ["--attribute", "Disease", "--top", "50"], ["numeric", "Disease"]),
    ("top-bottom-coding", ["--attribute", "Height", "--top", "50"], ["Height", "not a column"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "options", "words"), BAD_OPTIONS, ids=[" ".join([m, *o]) for m, o, _ in BAD_OPTIONS]
)
def test_bad_options_exit_2_without_output(tmp_path, method, options, words):
    result = anonymize(tmp_path, method, *options)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert text.startswith("error:"), text
    assert text.count("error:") == 1
    for word in words:
        assert word in text, (word, text)
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


USAGE_ERRORS = [
    # The old form, `sdckit anonymize DATA --method M`: the method is now the command.
    (["{data}", "--method", "generalize", "-k", "2"], ["No such command", "data.csv"]),
    (["scramble", "{data}", "-k", "2"], ["No such command", "scramble"]),
    (["mondrain", "{data}", "-k", "2"], ["No such command", "mondrain", "mondrian"]),
    (["generalize", "{data}", "-k", "2", "--method", "mondrian"], ["No such option", "--method"]),
    # --histogram was a configuration error ("only for targeted-suppression"); it is now an option of
    # targeted-suppression alone, and the other methods' commands say so.
    (
        ["generalize", "{data}", "-k", "2", "--histogram", "h.png"],
        ["--histogram is not an option of generalize", "targeted-suppression"],
    ),
    (
        ["mondrian", "{data}", "-k", "2", "--histogram", "h.png"],
        ["--histogram is not an option of mondrian", "targeted-suppression"],
    ),
    (
        ["mondrian", "{data}", "-k", "2", "--suppression-limit", "0.1"],
        ["--suppression-limit is not an option of mondrian", "generalize"],
    ),
    (["generalize", "{data}", "-k", "nine"], ["-k", "nine", "is not a valid integer"]),
    (["generalize", "{data}", "-k", "2.5"], ["-k", "2.5", "is not a valid integer"]),
]


@pytest.mark.parametrize(("arguments", "words"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_errors_exit_2_without_output(tmp_path, arguments, words):
    data, config = write(tmp_path)
    arguments = [str(data) if argument == "{data}" else argument for argument in arguments]
    result = run("anonymize", *arguments, "--config", config, "--output", tmp_path / "out.csv")
    assert result.exit_code == 2, result.output
    # rich wraps a long temporary path anywhere, even inside "data.csv": compare without whitespace.
    text = squeezed(result.output)
    for word in words:
        assert squeezed(word) in text, (word, flat(result.output))
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_distinct_values_count(tmp_path):
    """The -l cases above rely on 6 distinct diseases."""
    assert pl.read_csv(write(tmp_path)[0])["Disease"].n_unique() == 6


def test_model_impossible_at_every_generalization(tmp_path):
    # A ZIP hierarchy whose top level keeps 476** and 479** apart: the 476 area has 9 records, the 479
    # area 5, so 7-anonymity fails at every node without suppression.
    zips = "".join(f"{z};{z[:4]}*;{z[:3]}**\n" for z in ZIP_ROWS)
    data, config = write(tmp_path, zips=zips)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    result = run(
        "anonymize", "generalize", data, "--config", config, "-k", "7", "--output", out, "--summary", summary
    )
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert "cannot be satisfied by any generalization within the suppression limit" in text
    assert "7-anonymity" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS
    # With the 479 area suppressed (5 of 14 records) the classes pass, but the 5 suppressed records,
    # all '*', are a class of 5 of their own, which must be 7-anonymous too (issue 36): still none.
    result = run(
        "anonymize",
        "generalize",
        data,
        "--config",
        config,
        "-k",
        "7",
        "--suppression-limit",
        "0.5",
        "--output",
        out,
    )
    assert result.exit_code == 2, result.output
    assert "cannot be satisfied by any generalization within the suppression limit" in flat(result.output)


def test_hierarchy_missing_a_value(tmp_path):
    zips = zip_hierarchy([z for z in ZIP_ROWS if z != "47905"])
    data, config = write(tmp_path, zips=zips)
    result = run(
        "anonymize", "generalize", data, "--config", config, "-k", "2", "--output", tmp_path / "out.csv"
    )
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    for word in ("config.yaml", "ZIPCode", "zip.csv", "does not cover 1 value", "'47905'"):
        assert word in text, (word, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_inconsistent_hierarchy_file(tmp_path):
    # 4767* goes up to 477** on the line of 47673 (the first of 4767*) but to 476** on the next ones.
    zips = zip_hierarchy().replace("47673;4767*;476**", "47673;4767*;477**")
    data, config = write(tmp_path, zips=zips)
    result = run(
        "anonymize", "generalize", data, "--config", config, "-k", "2", "--output", tmp_path / "out.csv"
    )
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    line = zips.splitlines().index("47673;4767*;477**;47***;*") + 1
    words = ["config.yaml:2", f"zip.csv:{line + 1}", "'ZIPCode'", "inconsistent hierarchy", "'4767*'"]
    words += ["'476**' here", f"'477**' on line {line}"]
    for word in words:
        assert word in text, (word, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_output_without_suffix_is_a_folder_of_parquet_parts(tmp_path):
    result = anonymize(tmp_path, "generalize", "-k", "2", output="out")
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["part-00000.parquet"]
    assert pl.read_parquet(tmp_path / "out").height == N_RECORDS


@pytest.mark.parametrize("name", ["out.txt", "out.json"])
def test_output_with_a_bad_extension(tmp_path, name):
    result = anonymize(tmp_path, "generalize", "-k", "2", output=name)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert "--output" in text and ".csv" in text and ".parquet" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_summary_with_a_bad_extension(tmp_path):
    data, config = write(tmp_path)
    result = run(
        "anonymize",
        "generalize",
        data,
        "--config",
        config,
        "-k",
        "2",
        "--output",
        tmp_path / "out.csv",
        "--summary",
        tmp_path / "s.txt",
    )
    assert result.exit_code == 2, result.output
    assert "--summary" in flat(result.output) and ".json" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_check_reports_a_violated_model_on_the_raw_data(tmp_path):
    data, config = write(tmp_path)
    result = run("check", data, "--config", config, "-k", "2", "--summary", tmp_path / "check.json")
    # A required model that is not satisfied: exit status 3, and the summary is written all the same.
    assert result.exit_code == 3, result.output
    assert "not satisfied" in result.output and "2-anonymity" in result.output
    assert json.loads((tmp_path / "check.json").read_text())["satisfied"] is False


EXAMPLE_CONFIG = Path(__file__).parents[1] / "examples" / "example.yaml"


@pytest.fixture(scope="module")
def students(tmp_path_factory) -> Path:
    from examples.generate import generate

    data = tmp_path_factory.mktemp("students") / "students.csv"
    generate(n_records=2000, seed=3).write_csv(data)
    return data


def targeted(students: Path, directory: Path, *options: str):
    output, summary, histogram = directory / "out.csv", directory / "s.json", directory / "risk.png"
    return run(
        "anonymize", "targeted-suppression", students, "--config", EXAMPLE_CONFIG, "--output", output,
        "--summary", summary, "--histogram", histogram, "-q", *options,
    )  # fmt: skip


def test_targeted_suppression_leaving_records_above_delta_writes_nothing_and_exits_3(students, tmp_path):
    # 51 records of this data stay above DELTA with every suppressible value suppressed.
    result = targeted(students, tmp_path, "--delta", "0.01", "--repeat")
    assert result.exit_code == 3, result.output
    text = flat(result.output)
    assert "not satisfied" in text and "records stay above DELTA 0.01" in text
    assert "nothing written" in text and "--allow-violations" in text
    assert list(tmp_path.iterdir()) == []
    # A single round leaves more, and says that --repeat runs further ones.
    result = targeted(students, tmp_path, "--delta", "0.01")
    assert result.exit_code == 3, result.output
    assert "--repeat" in flat(result.output)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_targeted_suppression_through_the_cli(students, tmp_path):
    """The example data and configuration with --allow-violations: written, exit 3 all the same, and
    the summary's figures agree with the written release."""
    output, histogram = tmp_path / "out.csv", tmp_path / "risk.png"
    result = targeted(students, tmp_path, "--delta", "0.01", "--repeat", "--allow-violations")
    assert result.exit_code == 3, result.output
    assert "not satisfied" in flat(result.output) and "nothing written" not in flat(result.output)
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["method"] == "targeted-suppression"
    assert figures["satisfied"] is False
    assert figures["violation"] == f"{figures['high_risk_after']:,} records stay above DELTA 0.01"
    assert figures["recipe"]["steps"][0] == {
        "method": "targeted-suppression",
        "delta": 0.01,
        "alpha": 100.0,
        "epsilon": 0.01,
        "missing": "wildcard",
        "repeat": True,
        "max_rounds": None,
        "cell_budget": None,
    }  # fmt: skip  (the defaults taken from the configuration are recorded)
    assert figures["high_risk_before"] > 0
    assert figures["high_risk_after"] == figures["irreducible"] > 0
    cells = figures["suppressed_cells"]
    assert cells["total"] == sum(cells["per_attribute"].values()) > 0
    released = pl.read_csv(output, infer_schema=False)
    original = pl.read_csv(students, infer_schema=False)
    assert released.height == original.height
    assert "student_id" not in released.columns  # identifiers are not released
    nulls_added = sum(
        released[name].null_count() - original[name].null_count() for name in cells["per_attribute"]
    )
    assert nulls_added == cells["total"]
    n, q = released.height, len(cells["per_attribute"])
    assert figures["metrics"]["ncp"] == pytest.approx(cells["total"] / (n * q))
    assert histogram.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_targeted_suppression_that_reaches_delta_exits_0(students, tmp_path):
    result = targeted(students, tmp_path, "--delta", "5", "--repeat")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["satisfied"] is True and figures["violation"] is None
    assert figures["high_risk_before"] > 0 and figures["high_risk_after"] == 0
    assert {p.name for p in tmp_path.iterdir()} == {"out.csv", "s.json", "risk.png"}


def test_mondrian_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "mondrian", "-k", "3")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["method"] == "mondrian"
    assert figures["satisfied"] is True and figures["violation"] is None
    assert figures["recipe"]["steps"][0]["method"] == "mondrian"
    assert figures["recipe"]["steps"][0]["k"] == 3
    assert figures["smallest_class"] >= 3
    assert figures["achieved"]["3-anonymity"] >= 3
    assert 0 < figures["metrics"]["ncp"] < 1
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert released.height == N_RECORDS
    # Every class of the written release has at least 3 records.
    assert released.group_by("ZIPCode", "Age").len()["len"].min() >= 3
    # Numbers are released as ranges "min-max" (or a single value) containing the original.
    original = pl.read_csv(tmp_path / "data.csv")
    for age, text in zip(original["Age"].to_list(), released["Age"].to_list(), strict=True):
        low, _, high = text.partition("-")
        assert int(low) <= age <= int(high or low)


def test_mondrian_centroids_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "mondrian", "-k", "3", "--centroids")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["output"] == "centroid" and figures["recipe"]["steps"][0]["centroids"] is True
    released = pl.read_csv(tmp_path / "out.csv")
    original = pl.read_csv(tmp_path / "data.csv")
    # Each class's ages become their mean: the classes' sums are kept, and at least 3 records share one.
    assert released["Age"].sum() == pytest.approx(original["Age"].sum())
    assert released["Age"].value_counts()["count"].min() >= 3


def test_local_suppression_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "local-suppression", "-k", "2", "--importance", "Age,ZIPCode")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["satisfied"] is True
    assert figures["recipe"]["steps"][0] == {
        "method": "local-suppression",
        "k": 2,
        "importance": ["Age", "ZIPCode"],
        "missing": "wildcard",
        "strict_importance": False,
        "strata": None,
        "combs": None,
        "combs_k": None,
    }
    cells = figures["suppressed_cells"]
    assert cells["total"] == sum(cells["per_attribute"].values()) > 0
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert sum(released[name].null_count() for name in ("ZIPCode", "Age")) == cells["total"]
    # Age is more important than ZIPCode, so ZIP codes are suppressed first.
    assert cells["per_attribute"]["ZIPCode"] >= cells["per_attribute"]["Age"]
    assert figures["metrics"]["ncp"] == pytest.approx(cells["total"] / (N_RECORDS * 2))


def test_top_bottom_coding_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "top-bottom-coding", "--attribute", "Age", "--bottom", "25", "--top", "50")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    original = pl.read_csv(tmp_path / "data.csv")["Age"]
    released = pl.read_csv(tmp_path / "out.csv")["Age"]
    assert released.to_list() == original.clip(25, 50).cast(released.dtype).to_list()
    assert figures["attribute"] == "Age"
    assert figures["changed_records"] == int(((original < 25) | (original > 50)).sum()) == 3


# One command per registered method, with only its own options -------------------------------------

SHARED_OPTIONS = {
    "--config",
    "-c",
    "--output",
    "-o",
    "--summary",
    "--quiet",
    "-q",
    "--allow-violations",
    "--help",
    # where it runs (sdckit.cli._scale): on every command that reads microdata
    "--engine",
    "--scheduler",
    "--workers",
    "--chunk-rows",
    # the roles inline instead of (or replacing those of) the configuration (sdckit.api.with_roles)
    "--qi",
    "--sensitive",
    "--weight",
}
OPTION = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=│))(--?[a-z][a-z0-9-]*)", re.MULTILINE)


def own_options(spec) -> set[str]:
    """The options of a method's command: its parameters' (and --no-X for a flag) and extra outputs."""
    options = set(method_options(spec))
    for name, field in spec.params.model_fields.items():
        if field.annotation in (bool, bool | None):  # a flag, or a tri-state flag (None: the default rule)
            options.add("--no-" + option_name(name, field).removeprefix("--"))
    return options


def test_every_method_has_a_command():
    result = run("anonymize", "--help")
    assert result.exit_code == 0, result.output
    for spec in METHODS:
        assert spec.name in result.output


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS.names())
def test_help_lists_only_the_methods_own_options(method):
    spec = METHODS.get(method)
    # Wide enough that rich does not shorten a long option name ("--sensitive-column-s…").
    result = runner.invoke(app, ["anonymize", method, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    listed = set(OPTION.findall(result.output))
    own = own_options(spec)
    assert own <= listed, own - listed
    assert listed >= SHARED_OPTIONS, SHARED_OPTIONS - listed
    assert listed <= own | SHARED_OPTIONS, listed - own - SHARED_OPTIONS
    # --sensitive is slicing's own option and every other method's shared one (the same attribute).
    foreign = {option for other in METHODS if other.name != method for option in own_options(other)}
    foreign -= own | SHARED_OPTIONS
    assert not listed & foreign, listed & foreign
    # The command itself, not only its help, takes exactly these options.
    command = typer.main.get_command(app).commands["anonymize"].commands[method]
    declared = {o for parameter in command.params for o in [*parameter.opts, *parameter.secondary_opts]}
    assert declared - {"data"} == (own | SHARED_OPTIONS) - {"--help"}


FOREIGN = [
    ("mondrian", ["--delta", "0.1"], "--delta", ["targeted-suppression"]),
    ("mondrian", ["--repeat"], "--repeat", ["targeted-suppression"]),
    ("local-suppression", ["-l", "2"], "-l", ["generalize", "mondrian", "slicing", "quasi-sensitive"]),
    ("local-suppression", ["-t", "0.2"], "-t", ["generalize", "mondrian", "quasi-sensitive"]),
    (
        "targeted-suppression",
        ["-k", "2"],
        "-k",
        ["generalize", "mondrian", "local-suppression", "quasi-sensitive"],
    ),
    ("targeted-suppression", ["-l", "2"], "-l", ["generalize", "mondrian", "slicing"]),
    ("slicing", ["-k", "2"], "-k", ["generalize", "mondrian", "local-suppression"]),
    ("overlapping-slicing", ["--medoid-start", "build"], "--medoid-start", ["slicing"]),
    ("slicing", ["--beta", "2"], "--beta", ["generalize", "mondrian", "overlapping-slicing"]),
]


@pytest.mark.parametrize(
    ("method", "options", "option", "owners"), FOREIGN, ids=[f"{m} {o}" for m, _, o, _ in FOREIGN]
)
def test_an_option_of_another_method_exits_2_naming_it(tmp_path, method, options, option, owners):
    data, config = write(tmp_path)
    valid = {"targeted-suppression": ["--delta", "0.1"], "local-suppression": ["-k", "2"]}.get(method, [])
    result = run(
        "anonymize", method, data, "--config", config, "--output", tmp_path / "out.csv", *valid, *options
    )
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert f"{option} is not an option of {method}; it is an option of" in text, text
    for owner in owners:
        assert owner in text.split("it is an option of", 1)[1], (owner, text)
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


# Every parameter of every method is validated up front --------------------------------------------

# A valid set of parameters per method: each bad value below is the only thing wrong.
#: Each method's smallest valid parameters: its specification's "minimal" example (none: every parameter
#: has a default).
VALID_PARAMS = {spec.name: dict(spec.examples.get("minimal", {})) for spec in METHODS}


BAD_PARAMS = [
    (spec.name, name, value)
    for spec in METHODS
    for name, field in spec.params.model_fields.items()
    for value in bad_values(field)
]


def test_every_method_has_valid_params_and_every_field_a_bad_value():
    assert set(VALID_PARAMS) == set(METHODS.names())
    for spec in METHODS:
        spec.params.parse(VALID_PARAMS[spec.name], method=spec.name)  # valid as it stands
        for name in spec.params.model_fields:
            assert any(m == spec.name and f == name for m, f, _ in BAD_PARAMS), (spec.name, name)


@pytest.mark.parametrize(
    ("method", "name", "value"), BAD_PARAMS, ids=[f"{m}-{n}-{v!r}" for m, n, v in BAD_PARAMS]
)
def test_a_bad_value_of_each_parameter_is_a_config_error_naming_it(method, name, value):
    spec = METHODS.get(method)
    with pytest.raises(ConfigError) as raised:
        spec.params.parse({**VALID_PARAMS[method], name: value}, method=method)
    problems = str(raised.value).split("; ")
    assert any(re.match(rf"{re.escape(name)}(\[| |:)", problem) for problem in problems), (name, problems)
    # The same problem spelled as the command line spells it: the option, and the value given.
    fields = spec.params.model_fields
    option = option_name(name, fields[name])
    with pytest.raises(ConfigError) as raised:
        spec.params.parse(
            {**VALID_PARAMS[method], name: value},
            spell=lambda field: option_name(field, fields.get(field)),
            method=method,
        )
    message = str(raised.value)
    assert any(problem.startswith(option) for problem in message.split("; ")), (option, message)
    if "got" in message:
        assert f"got {value!r}" in message, message


@pytest.mark.parametrize("method", METHODS.names())
def test_a_missing_required_parameter_is_named(method):
    spec = METHODS.get(method)
    for name, field in spec.params.model_fields.items():
        if not field.is_required():
            continue
        given = {key: value for key, value in VALID_PARAMS[method].items() if key != name}
        with pytest.raises(ConfigError) as raised:
            spec.params.parse(
                given, spell=lambda field: option_name(field, spec.params.model_fields.get(field))
            )
        message = str(raised.value)
        assert message.startswith(option_name(name, field)) and "required" in message, message


@pytest.mark.parametrize("method", METHODS.names())
def test_an_unknown_parameter_is_refused_with_a_suggestion(method):
    spec = METHODS.get(method)
    name = next(iter(spec.params.model_fields))
    with pytest.raises(ConfigError, match=rf"{name}x is not a parameter of {method}; did you mean {name}\?"):
        spec.params.parse({**VALID_PARAMS[method], f"{name}x": 1}, method=method)
