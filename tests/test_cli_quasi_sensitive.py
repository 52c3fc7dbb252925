"""`sdckit anonymize quasi-sensitive` on the paper's Figure 1 (Shi, Xiong & Fung, 2010)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app

DATA = """age,gender,state,symptoms
22,M,GA,Coughing;Headache;Sore Throat
25,M,GA,Coughing;Headache
30,F,TX,Headache;Vomiting
35,F,TX,Headache;Sore Throat
"""
CONFIG = """attributes:
  age:      {role: quasi-identifier, kind: numeric}
  gender:   {role: quasi-identifier}
  state:    {role: quasi-identifier}
  symptoms: {role: quasi-sensitive, kind: set-valued}
"""
KNOWLEDGE = """label,items
Flu,Coughing;Headache;Sore Throat
Hepatitis B,Loss of appetite;Vomiting;Dark urine
"""

runner = CliRunner()


def write(directory: Path, knowledge: str = KNOWLEDGE) -> tuple[Path, Path, Path]:
    (directory / "data.csv").write_text(DATA)
    (directory / "config.yaml").write_text(CONFIG)
    (directory / "knowledge.csv").write_text(knowledge)
    return directory / "data.csv", directory / "config.yaml", directory / "knowledge.csv"


def anonymize(directory: Path, *options: str, knowledge: str = KNOWLEDGE):
    data, config, facts = write(directory, knowledge)
    arguments = ["anonymize", "quasi-sensitive", str(data), "--config", str(config),
                 "--knowledge", str(facts), "--output", str(directory / "out.csv"),
                 "--summary", str(directory / "summary.json"), *options]  # fmt: skip
    return runner.invoke(app, arguments)


def flat(text: str) -> str:
    return " ".join(text.split())


def test_figure_1_is_protected(tmp_path):
    """k = 2 gives table 1(d), whose group {1, 2} links only to Flu; QS (3,2)-diversity then needs
    the cheapest removal, and after it no group's posterior sits on one label."""
    result = anonymize(tmp_path, "-k", "2", "-l", "2", "--c", "3")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["model"].startswith("QS")
    assert figures["method"] == "quasi-sensitive"
    assert figures["satisfied"] is True and figures["violation"] is None
    step = figures["recipe"]["steps"][0]
    assert (step["method"], step["k"], step["l"], step["c"]) == ("quasi-sensitive", 2, 2, 3.0)
    assert step["knowledge"] == str(tmp_path / "knowledge.csv")
    assert figures["violating_before"] >= 1
    assert figures["violating_after"] == 0
    assert figures["suppressed_items"] > 0
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert released.height == 4
    # Items are only removed, never added.
    for before, after in zip(
        DATA.strip().splitlines()[1:], released["symptoms"].fill_null("").to_list(), strict=True
    ):
        kept = {item for item in after.split(";") if item}
        assert kept <= set(before.split(",")[3].split(";"))
    # Re-check the written release with the models module: group by the released QI values.
    from sdckit.errors import SdcWarning
    from sdckit.frequency import group_records
    from sdckit.models.quasi_sensitive import QSCLDiversity, beliefs
    from sdckit.setvalued import ItemSets, linked_labels, read_knowledge

    items = ItemSets.from_column(released["symptoms"])
    original = ItemSets.from_column(pl.read_csv(tmp_path / "data.csv")["symptoms"])
    with pytest.warns(SdcWarning, match="never occur"):  # Hepatitis B's other symptoms
        facts = read_knowledge(tmp_path / "knowledge.csv", vocabulary=original.vocabulary)
    grouping = group_records(released.select("age", "gender", "state"), ["age", "gender", "state"])
    prior = beliefs(np.zeros(4, dtype=np.int64), 1, linked_labels(original, facts)).prior
    posterior = beliefs(
        grouping.keys.astype(np.int64),
        grouping.n_groups,
        linked_labels(items.recode(original.vocabulary), facts),
        prior,
    )
    assert QSCLDiversity(3, 2).evaluate(posterior).passes.all()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["-k", "2", "-l", "2", "--c", "0"], ["--c must be greater than 0", "0"]),
        (["-k", "2", "-l", "0"], ["-l must be greater than or equal to 1", "got 0"]),
        # QS t-closeness's distance goes up to sqrt(2): the bound is checked against the model.
        (["-k", "2", "-t", "2"], ["t must be in [0, 1.41421]", "got 2"]),
        (["-k", "2", "-t", "-0.1"], ["-t must be greater than or equal to 0", "-0.1"]),
        (["-k", "2", "-t", "nan"], ["-t must be a finite number", "nan"]),
        (["-k", "2"], ["quasi-sensitive needs a model: -l (with --c)", "-t for QS t-closeness"]),
        (["-k", "2", "-l", "2", "-t", "0.4"], ["quasi-sensitive takes -l or -t, not both"]),
        (["-k", "2", "-l", "2", "--time-limit", "0"], ["--time-limit must be greater than 0", "0"]),
        (["-k", "0", "-l", "2"], ["-k must be greater than or equal to 1", "got 0"]),
        (
            ["-k", "2", "-t", "0.4", "--total-time-limit", "-1"],
            ["--total-time-limit must be greater than 0", "-1"],
        ),
        (
            ["-k", "2", "-l", "2", "--node-limit", "0"],
            ["--node-limit must be greater than or equal to 1", "got 0"],
        ),
        (
            ["-k", "2", "-l", "2", "--node-limit", "10", "--time-limit", "1"],
            ["--node-limit", "--time-limit", "not both"],
        ),
        (["-k", "2", "-l", "2", "--strategy", "greedy"], ["--strategy", "'adaptive'", "'greedy'"]),
        (["-k", "2", "-l", "2", "--set-column", "diagnoses"], ["set_column", "'diagnoses'", "not a column"]),
    ],
)
def test_bad_options_exit_2(tmp_path, options, words):
    result = anonymize(tmp_path, *options)
    assert result.exit_code == 2, result.output
    text = flat(result.output)
    assert text.count("error:") == 1 and "Traceback" not in result.output
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    ("knowledge", "words"),
    [
        ("label,items\nFlu,Coughing;Headache\nFlu,Vomiting\n", ["knowledge.csv", "Flu"]),
        ("label,items\nFlu,\n", ["knowledge.csv", "empty"]),
        ("name,things\nFlu,Coughing\n", ["knowledge.csv"]),
        ("label,items\nFlu,Coughing,extra,more\n", ["knowledge.csv", "2"]),
    ],
)
def test_malformed_knowledge_exit_2(tmp_path, knowledge, words):
    result = anonymize(tmp_path, "-k", "2", "-l", "2", knowledge=knowledge)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "out.csv").exists()


def test_knowledge_item_never_in_the_data_warns(tmp_path):
    knowledge = KNOWLEDGE + "Measles,Rash;Fever\n"
    result = anonymize(tmp_path, "-k", "2", "-t", "0.4", knowledge=knowledge)
    assert result.exit_code == 0, result.output
    assert "warning" in result.output.lower()
    assert "Rash" in " ".join(result.output.split()) or "Fever" in " ".join(result.output.split())


def test_total_time_limit_is_passed_on(tmp_path):
    result = anonymize(tmp_path, "-k", "2", "-l", "2", "--c", "3", "--total-time-limit", "5")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["total_time_limit"] == 5
    assert figures["violating_after"] == 0


def test_node_limit_search_replays_exactly(tmp_path):
    result = anonymize(tmp_path, "-k", "2", "-l", "2", "--c", "3", "--node-limit", "1000")
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["node_limit"] == 1000 and figures["time_limit"] is None
    assert figures["recipe"]["replays_exactly"] is True
    assert figures["violating_after"] == 0


# (0.5, 3)-diversity cannot be reached on four records without generalizing (k = 1): the release
# leaves violating groups.
UNREACHABLE = ["-k", "1", "-l", "3", "--c", "0.5", "--node-limit", "1000"]


def test_groups_left_violating_write_nothing_and_exit_3(tmp_path):
    result = anonymize(tmp_path, *UNREACHABLE)
    assert result.exit_code == 3, result.output
    text = flat(result.output)
    assert "not satisfied" in text and "groups still violate QS (0.5,3)-diversity" in text
    assert "nothing written" in text and "--allow-violations" in text
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "summary.json").exists()


def test_allow_violations_writes_the_release_and_still_exits_3(tmp_path):
    result = anonymize(tmp_path, *UNREACHABLE, "--allow-violations")
    assert result.exit_code == 3, result.output
    assert "nothing written" not in flat(result.output)
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["satisfied"] is False
    assert figures["violating_after"] > 0
    assert figures["violation"] == (
        f"{figures['violating_after']:,} of {figures['groups']:,} groups still violate {figures['model']}"
    )
    assert pl.read_csv(tmp_path / "out.csv", infer_schema=False).height == 4
