"""The `sdckit anonymize` command end to end: the release, its summary, `sdckit check` on it, and bad
input (exit 2, one clear message, no output file)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.anonymize.recoding import full_domain_generalization
from sdckit.cli import app
from sdckit.config import load_config
from sdckit.models import KAnonymity

# test2.csv-style data (Age, ZIPCode, Disease), 14 records.
DATA = """ZIPCode,Age,Disease
47677,29,gastric ulcer
47602,22,gastritis
47678,27,stomach cancer
47905,43,gastritis
47909,52,flu
47906,47,bronchitis
47605,30,bronchitis
47673,36,pneumonia
47607,32,stomach cancer
47677,25,flu
47911,55,gastritis
47603,38,pneumonia
47906,41,flu
47678,28,gastritis
"""
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
    """The output with rich's line wrapping undone."""
    return " ".join(text.split())


INPUTS = ["config.yaml", "data.csv", "zip.csv"]


def anonymize(directory: Path, *options: str, output: str = "out.csv", summary: bool = True):
    data, config = write(directory)
    extra = ["--summary", directory / "summary.json"] if summary else []
    return run("anonymize", data, "--config", config, "--output", directory / output, *options, *extra)


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
    ["-k", "2", "--metric", "aecs", "--method", "generalize"],
]


def check_options(options: list[str]) -> list[str]:
    """The model options of an anonymize command (every option takes a value), for `sdckit check`."""
    pairs = zip(options[::2], options[1::2], strict=True)
    return [item for pair in pairs if pair[0] not in SEARCH_OPTIONS for item in pair]


SEARCH_OPTIONS = ("--metric", "--method", "--suppression-limit")


@pytest.mark.parametrize("options", CASES, ids=[" ".join(case) for case in CASES])
def test_anonymize_writes_release_and_summary_that_check_accepts(tmp_path, options):
    result = anonymize(tmp_path, *options)
    assert result.exit_code == 0, result.output
    assert "release written" in result.output
    original = pl.read_csv(tmp_path / "data.csv", infer_schema=False)
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert released.columns == original.columns == ["ZIPCode", "Age", "Disease"]
    assert released.height == N_RECORDS
    # Row order: the sensitive column is untouched, record by record.
    assert released["Disease"].to_list() == original["Disease"].to_list()

    summary = json.loads((tmp_path / "summary.json").read_text())
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
    assert 0 <= summary["metrics"]["loss"] <= 1
    assert set(summary["metrics"]) >= {"loss", "dm", "aecs", "entropy", "precision"}
    assert summary["heuristic"] is False

    # Same levels as the library on the same table.
    table = load_config(tmp_path / "config.yaml").read(tmp_path / "data.csv")
    if options[:2] == ["-k", "2"] and len(options) == 2:
        release = full_domain_generalization(table, [KAnonymity(2)], quasi_identifiers=["ZIPCode", "Age"])
        assert summary["levels"] == release.levels
        assert summary["metrics"]["loss"] == pytest.approx(release.search["metric_value"])

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


def test_suppressed_records_are_all_star_and_drop_suppressed_leaves_them_out(tmp_path):
    options = ["-k", "3", "--suppression-limit", "0.3"]
    result = anonymize(tmp_path, *options)
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
    result = run("anonymize", data_path, "--config", config_path, "-k", str(N_RECORDS), "--output", out)
    assert result.exit_code == 0, result.output
    released = pl.read_csv(out, infer_schema=False)
    assert released.columns == ["ZIPCode", "Age", "Disease"]
    # k = n: one class. Every ZIP code starts with 47: '47***' (level 3) costs the same Loss as '*'
    # (it covers every leaf) at a lower level; Age has no single interval below '*' ([20, 40) is the
    # widest).
    assert released["ZIPCode"].unique().to_list() == ["47***"]
    assert released["Age"].unique().to_list() == ["*"]


BAD_OPTIONS = [
    (["-k", "0"], ["k", ">= 1", "0"]),
    (["-k", "15"], ["-k 15", "larger than the number of records", "14"]),
    (["-k", "2", "-l", "7"], ["distinct 7-diversity", "Disease", "cannot be satisfied", "only 6 distinct"]),
    (["-k", "2", "-t", "1.5"], ["t must be in [0, 1]", "1.5"]),
    (["-k", "2", "-t", "-0.1"], ["t must be in [0, 1]"]),
    (["-k", "2", "--suppression-limit", "2"], ["--suppression-limit", "[0, 1]", "2"]),
    (["-k", "2", "--suppression-limit", "-0.5"], ["--suppression-limit", "[0, 1]"]),
    (["-k", "2", "--metric", "utility"], ["--metric", "loss", "utility"]),
    (["-k", "2", "--method", "swap"], ["--method", "generalize", "mondrian", "swap"]),
    (["--method", "mondrian"], ["mondrian", "at least one privacy model"]),
    (["--method", "local-suppression"], ["local-suppression", "needs -k"]),
    (["-k", "2", "--method", "local-suppression", "--importance", "Age,Height"], ["Height"]),
    (["--method", "targeted-suppression"], ["targeted-suppression", "needs --delta"]),
    (["--method", "targeted-suppression", "--delta", "-1"], ["delta", ">= 0", "-1"]),
    (["--method", "targeted-suppression", "--delta", "0.1", "--max-rounds", "0"], ["max_rounds"]),
    (["-k", "2", "--histogram", "h.png"], ["--histogram", "targeted-suppression"]),
    (["-k", "2", "--method", "mondrian", "--mode", "loose"], ["mode", "loose"]),
    (["-k", "2", "-l", "2", "--l-variant", "fancy"], ["--l-variant", "fancy"]),
    (["-k", "2", "-l", "2.5"], ["-l", "whole number", "2.5"]),
    ([], ["at least one privacy model"]),
    (["-k", "15", "--method", "mondrian"], ["15"]),
    # The whole table's effective l (exp of its entropy) is about 5.6, so entropy 6-diversity is
    # impossible at every level, with any suppression.
    (["-l", "6", "--l-variant", "entropy"], ["entropy 6-diversity", "Disease", "cannot be satisfied"]),
    (
        ["-l", "2", "--l-variant", "recursive", "--c", "0.1"],
        ["recursive (0.1,2)-diversity", "cannot be satisfied"],
    ),
]


@pytest.mark.parametrize(("options", "words"), BAD_OPTIONS, ids=[" ".join(o) for o, _ in BAD_OPTIONS])
def test_bad_options_exit_2_without_output(tmp_path, options, words):
    result = anonymize(tmp_path, *options)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert text.startswith("error:"), text
    assert text.count("error:") == 1
    for word in words:
        assert word in text, (word, text)
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
    result = run("anonymize", data, "--config", config, "-k", "7", "--output", out, "--summary", summary)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert "cannot be satisfied by any generalization within the suppression limit" in text
    assert "7-anonymity" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS
    # With the 479 area suppressed (5 of 14 records) it can.
    result = run(
        "anonymize", data, "--config", config, "-k", "7", "--suppression-limit", "0.5", "--output", out
    )
    assert result.exit_code == 0, result.output
    released = pl.read_csv(out, infer_schema=False)
    original = pl.read_csv(data, infer_schema=False)
    suppressed = released.filter((pl.col("ZIPCode") == "*") & (pl.col("Age") == "*"))
    assert suppressed.height == 5
    assert original.filter(released["ZIPCode"] == "*")["ZIPCode"].str.starts_with("479").all()


def test_hierarchy_missing_a_value(tmp_path):
    zips = zip_hierarchy([z for z in ZIP_ROWS if z != "47905"])
    data, config = write(tmp_path, zips=zips)
    result = run("anonymize", data, "--config", config, "-k", "2", "--output", tmp_path / "out.csv")
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    for word in ("config.yaml", "ZIPCode", "zip.csv", "does not cover 1 value", "'47905'"):
        assert word in text, (word, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_inconsistent_hierarchy_file(tmp_path):
    # 4767* goes up to 477** on the line of 47673 (the first of 4767*) but to 476** on the next ones.
    zips = zip_hierarchy().replace("47673;4767*;476**", "47673;4767*;477**")
    data, config = write(tmp_path, zips=zips)
    result = run("anonymize", data, "--config", config, "-k", "2", "--output", tmp_path / "out.csv")
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    line = zips.splitlines().index("47673;4767*;477**;47***;*") + 1
    words = ["config.yaml:2", f"zip.csv:{line + 1}", "'ZIPCode'", "inconsistent hierarchy", "'4767*'"]
    words += ["'476**' here", f"'477**' on line {line}"]
    for word in words:
        assert word in text, (word, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


@pytest.mark.parametrize("name", ["out.txt", "out.json", "out"])
def test_output_with_a_bad_extension(tmp_path, name):
    result = anonymize(tmp_path, "-k", "2", output=name)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert "--output" in text and ".csv" in text and ".parquet" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == INPUTS


def test_summary_with_a_bad_extension(tmp_path):
    data, config = write(tmp_path)
    result = run(
        "anonymize",
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
    assert result.exit_code == 0, result.output
    assert "not satisfied" in result.output
    assert json.loads((tmp_path / "check.json").read_text())["satisfied"] is False


def test_targeted_suppression_through_the_cli(tmp_path):
    """The example data and configuration: the summary's figures agree with the written release."""
    from examples.generate import generate

    data = tmp_path / "students.csv"
    generate(n_records=2000, seed=3).write_csv(data)
    config = Path(__file__).parents[1] / "examples" / "example.yaml"
    output, summary, histogram = tmp_path / "out.csv", tmp_path / "s.json", tmp_path / "risk.png"
    result = run(
        "anonymize", str(data), "--config", str(config), "--method", "targeted-suppression",
        "--delta", "0.01", "--repeat", "--output", str(output), "--summary", str(summary),
        "--histogram", str(histogram),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["method"] == "targeted-suppression"
    assert figures["high_risk_before"] > 0
    assert figures["high_risk_after"] == figures["irreducible"]
    cells = figures["suppressed_cells"]
    assert cells["total"] == sum(cells["per_attribute"].values()) > 0
    released = pl.read_csv(output, infer_schema=False)
    original = pl.read_csv(data, infer_schema=False)
    assert released.height == original.height
    assert "student_id" not in released.columns  # identifiers are not released
    nulls_added = sum(
        released[name].null_count() - original[name].null_count() for name in cells["per_attribute"]
    )
    assert nulls_added == cells["total"]
    n, q = released.height, len(cells["per_attribute"])
    assert figures["metrics"]["ncp"] == pytest.approx(cells["total"] / (n * q))
    assert histogram.stat().st_size > 0


def test_mondrian_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "--method", "mondrian", "-k", "3")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["method"] == "mondrian"
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


def test_local_suppression_through_the_cli(tmp_path):
    result = anonymize(tmp_path, "--method", "local-suppression", "-k", "2", "--importance", "Age,ZIPCode")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    cells = figures["suppressed_cells"]
    assert cells["total"] == sum(cells["per_attribute"].values()) > 0
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert sum(released[name].null_count() for name in ("ZIPCode", "Age")) == cells["total"]
    # Age is more important than ZIPCode, so ZIP codes are suppressed first.
    assert cells["per_attribute"]["ZIPCode"] >= cells["per_attribute"]["Age"]
    assert figures["metrics"]["ncp"] == pytest.approx(cells["total"] / (N_RECORDS * 2))
