"""Attacks in ``sdckit evaluate``: the attacks of :mod:`sdckit.attack` run on every release beside the
measures, their figures in each release's summary, the HTML report's Attacks section and the command
line's ``--attack``/``--control``; interval disclosure (sdcMicro's dRisk) on a release that fails it
(the original itself) and one that holds (heavily noised), its counts computed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.evaluate import evaluate
from sdckit.evaluate.attacks import split_settings
from sdckit.evaluate.report import render_report

CONFIG = parse_config(
    "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n  y: {role: sensitive, kind: numeric}\n"
)
#: Quick measures: the attacks are what these tests look at.
QUICK = {
    "config": CONFIG,
    "risk": ["reidentification"],
    "utility": ["numeric"],
    "risk_axis": "reidentification",
    "loss_axis": "numeric",
}


def _read(frame: pl.DataFrame):
    return CONFIG.read(frame)


@pytest.fixture(scope="module")
def copy_and_noised():
    rng = np.random.default_rng(4)
    x = rng.normal(50, 10, 2000)
    y = rng.normal(0, 1, 2000)
    original = _read(pl.DataFrame({"x": x, "y": y}))
    noised = _read(pl.DataFrame({"x": x + rng.normal(0, 30, 2000), "y": y + rng.normal(0, 3, 2000)}))
    # Independently of the attack's code: a record is disclosed when both of its original values lie
    # within 0.05 released standard deviations (n - 1) of its released values.
    released = np.column_stack([noised.data["x"].to_numpy(), noised.data["y"].to_numpy()])
    truth = np.column_stack([x, y])
    half = 0.05 * released.std(axis=0, ddof=1)
    disclosed = int(np.all(np.abs(truth - released) <= half, axis=1).sum())
    result = evaluate(
        original,
        [("copy", original), ("noised", noised)],
        attacks=["interval-disclosure"],
        settings={"interval-disclosure": {"max_risk": 0.1}},
        **QUICK,
    )
    return result, disclosed


def test_the_original_as_a_release_fails_and_a_noised_one_holds(copy_and_noised):
    result, disclosed = copy_and_noised
    copy, noised = result.releases
    (attacked,) = copy.attacks.results
    assert (attacked.name, attacked.attack.successes, attacked.attack.trials) == (
        "interval-disclosure",
        2000,
        2000,
    )
    assert attacked.verdict == "fails" and not copy.attacks.holds
    (attacked,) = noised.attacks.results
    assert attacked.attack.successes == disclosed < 20
    assert attacked.verdict == "holds" and noised.attacks.holds
    assert result.original.attacks is None  # the original is measured, not attacked


def test_the_summary_holds_each_releases_attack_report(copy_and_noised):
    result, disclosed = copy_and_noised
    summary = result.summary()
    assert "attacks" not in summary["original"]
    copy, noised = summary["releases"]
    assert set(copy["attacks"]) == {"attacks", "skipped", "holds"}
    assert copy["attacks"]["holds"] is False and noised["attacks"]["holds"] is True
    (figures,) = noised["attacks"]["attacks"]
    assert figures["attack"] == "interval-disclosure" and figures["verdict"] == "holds"
    assert figures["attack_rate"]["successes"] == disclosed and figures["attack_rate"]["trials"] == 2000
    assert figures["max_risk"] == 0.1 and figures["control_rate"] is None
    assert set(figures["risk"]) == {"value", "ci"}
    json.dumps(summary)  # JSON-ready


def test_hand_computed_rates_on_five_records():
    # released x: mean 3.7, sd (n - 1) = sqrt(27.22 / 4) = 2.6087; k = 0.05 gives ±0.13043;
    # |x - x'| = 0.1, 0.5, 0, 0.1, 2: records 1, 3, 4 inside; around the released median 3, record 3 only.
    original = _read(pl.DataFrame({"x": [1.0, 2, 3, 4, 10], "y": [0.0, 0, 0, 0, 0]}))
    release = _read(pl.DataFrame({"x": [1.1, 2.5, 3, 3.9, 8], "y": [0.0, 0, 0, 0, 0]}))
    result = evaluate(
        original,
        [("masked", release)],
        attacks=["interval-disclosure"],
        settings={"interval-disclosure": {"attributes": "x"}},
        **QUICK,
    )
    (attacked,) = result.releases[0].attacks.results
    assert (attacked.attack.successes, attacked.attack.trials) == (3, 5)
    assert attacked.baseline is not None and attacked.baseline.successes == 1
    assert attacked.verdict == "no threshold"
    # Wilson's centre at 95%: (3 + z²/2) / (5 + z²), z = 1.959964
    z2 = 1.959964**2
    assert attacked.attack.value == pytest.approx((3 + z2 / 2) / (5 + z2), abs=1e-6)


def test_without_attacks_nothing_is_attacked():
    table = _read(pl.DataFrame({"x": [1.0, 2, 3, 4, 10], "y": [0.0, 1, 0, 1, 0]}))
    result = evaluate(table, [("same", table)], **QUICK)
    assert result.releases[0].attacks is None
    assert "attacks" not in result.summary()["releases"][0]
    assert 'id="attacks"' not in render_report(result)


def test_the_report_shows_the_attacks_beside_the_map(copy_and_noised):
    result, disclosed = copy_and_noised
    text = render_report(result)
    assert (
        text.index('id="ru-map"') < text.index('<h2 id="attacks">') < text.index("<h2>Disclosure risk</h2>")
    )
    table = text[
        text.index('id="attack-results"') : text.index("</table>", text.index('id="attack-results"'))
    ]
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert [row[:2] for row in cells] == [["copy", "interval-disclosure"], ["noised", "interval-disclosure"]]
    assert cells[0][2].endswith("(2,000 of 2,000)") and cells[1][2].endswith(f"({disclosed} of 2,000)")
    assert [row[-2:] for row in cells] == [["0.1", "fails"], ["0.1", "holds"]]
    assert cells[0][4] == "—"  # no control set
    assert "interval-disclosure</b> assumes the release, row-aligned" in text


def test_all_runs_what_applies_and_lists_the_rest_with_the_reason():
    # categorical quasi-identifiers only: interval disclosure has no numeric attribute to attack
    config = parse_config("attributes:\n  a: {role: quasi-identifier}\n  s: {role: sensitive}\n")
    frame = pl.DataFrame({"a": ["p", "q", "r", "s"] * 25, "s": ["u", "v"] * 50})
    table = config.read(frame)
    result = evaluate(
        table, [("same", table)], config=config, risk=["reidentification"], utility=["tables"],
        risk_axis="reidentification", loss_axis="tables", attacks="all",
    )  # fmt: skip
    report = result.releases[0].attacks
    assert (
        report.skipped["interval-disclosure"] == "the release holds no numeric attribute of the configuration"
    )
    assert "interval-disclosure" not in [r.name for r in report.results]
    assert set(report.skipped) | {r.name for r in report.results} <= set(_microdata_attacks())


def _microdata_attacks() -> list[str]:
    from sdckit.attack.base import ATTACKS

    return [spec.name for spec in ATTACKS if spec.inputs == "microdata"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"attacks": ["intervall-disclosure"]},
            "unknown attack 'intervall-disclosure'.*did you mean interval-disclosure",
        ),
        (
            {"attacks": ["all", "interval-disclosure"]},
            "attacks all runs every attack that applies: name no other",
        ),
        ({"attacks": []}, "attacks names no attack"),
        ({"attacks": "every"}, "unknown attack 'every'"),
        ({"control": "placeholder"}, "control holds the records the attacks compare with"),
        (
            {"attacks": ["interval-disclosure"], "settings": {"interval-disclosure": {"k": 0}}},
            "interval-disclosure.k must be greater than 0",
        ),
        (
            {"attacks": ["interval-disclosure"], "settings": {"interval-disclosure": {"z": 1}}},
            "interval-disclosure.z",
        ),
        (
            {"settings": {"attack:interval-disclosure": {"k": 1}}},
            "interval-disclosure is not among the attacks run \\(no attack is run\\)",
        ),
        (
            {"attacks": ["interval-disclosure"], "settings": {"nope:x": {"k": 1}}},
            "the prefix nope: must be measure: or attack:",
        ),
    ],
)
def test_bad_attacks_and_settings_are_one_message(options, message):
    table = _read(pl.DataFrame({"x": [1.0, 2, 3, 4, 10], "y": [0.0, 1, 0, 1, 0]}))
    if options.get("control") == "placeholder":
        options = {**options, "control": table}
    with pytest.raises(ConfigError, match=message):
        evaluate(table, [("same", table)], **QUICK, **options)


def test_a_named_attack_that_does_not_apply_names_the_release_before_anything_runs():
    table = _read(pl.DataFrame({"x": [1.0, 2, 3, 4, 10], "y": [0.0, 1, 0, 1, 0]}))
    shorter = _read(pl.DataFrame({"x": [1.0, 2, 3], "y": [0.0, 1, 0]}))
    stages: list[str] = []
    with pytest.raises(
        ConfigError,
        match="^short: attack interval-disclosure does not apply to this release: the release has 3",
    ):
        evaluate(
            table,
            [("same", table), ("short", shorter)],
            attacks=["interval-disclosure"],
            stage=stages.append,
            **QUICK,
        )
    assert stages == []  # refused before any measure ran


def test_a_name_that_is_a_measure_and_an_attack_must_say_which():
    from sdckit.attack.base import ATTACKS
    from sdckit.measures import RISK_MEASURES, UTILITY_MEASURES

    both = sorted(set(ATTACKS.names()) & (set(RISK_MEASURES.names()) | set(UTILITY_MEASURES.names())))
    assert both, "no name is both a measure and an attack: the prefixes are not needed any more"
    for name in both:
        with pytest.raises(
            ConfigError, match=f"{name} is both a measure and an attack run here: write measure:{name}"
        ):
            split_settings({name: {"k": 1}}, [name], [name])
        measures, attacks = split_settings(
            {f"measure:{name}": {"a": 1}, f"attack:{name}": {"b": 2}}, [name], [name]
        )
        assert (measures, attacks) == ({name: {"a": 1}}, {name: {"b": 2}})
        # a name run as one of them only needs no prefix
        assert split_settings({name: {"a": 1}}, [name], []) == ({name: {"a": 1}}, {})
        assert split_settings({name: {"b": 2}}, [], [name]) == ({}, {name: {"b": 2}})


# the command line ---------------------------------------------------------------------------------


def _invoke(*arguments: str):
    return CliRunner().invoke(app, ["evaluate", *arguments])


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("evaluate-attacks")
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(50, 10, 800), 3)
    y = np.round(rng.normal(0, 1, 800), 3)
    pl.DataFrame({"x": x, "y": y}).write_csv(folder / "original.csv")
    noised = pl.DataFrame(
        {"x": np.round(x + rng.normal(0, 30, 800), 3), "y": np.round(y + rng.normal(0, 3, 800), 3)}
    )
    noised.write_csv(folder / "noised.csv")
    (folder / "config.yaml").write_text(
        "attributes:\n  x: {role: quasi-identifier, kind: numeric}\n  y: {role: sensitive, kind: numeric}\n"
    )
    return folder


def test_the_command_line_runs_the_attacks_into_summary_and_report(files):
    summary, report = files / "s.json", files / "r.html"
    result = _invoke(
        str(files / "original.csv"), str(files / "original.csv"), str(files / "noised.csv"),
        "-c", str(files / "config.yaml"), "--risk", "linkage", "--utility", "numeric",
        "--loss-axis", "numeric", "--attack", "interval-disclosure",
        "--set", "interval-disclosure.max-risk=0.1", "--set", "linkage.method=distance",
        "--summary", str(summary), "--report", str(report), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # evaluate compares; a release that fails is not an error
    document = json.loads(summary.read_text())
    verdicts = [r["attacks"]["attacks"][0]["verdict"] for r in document["releases"]]
    assert verdicts == ["fails", "holds"]
    assert 'id="attack-results"' in report.read_text()
    assert "Attacks" in result.stdout and "interval-disclosure" in result.stdout


def test_the_command_line_takes_a_control_set(files):
    # the control: held-out records; interval disclosure has no control rate, so only the wiring shows
    summary = files / "c.json"
    result = _invoke(
        str(files / "original.csv"), str(files / "noised.csv"), "-c", str(files / "config.yaml"),
        "--risk", "linkage", "--utility", "numeric", "--loss-axis", "numeric",
        "--attack", "interval-disclosure", "--control", str(files / "original.csv"),
        "--summary", str(summary), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        json.loads(summary.read_text())["releases"][0]["attacks"]["attacks"][0]["attack"]
        == "interval-disclosure"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--attack", "intervall-disclosure"], "unknown attack 'intervall-disclosure'"),
        (
            ["--attack", "all", "--attack", "interval-disclosure"],
            "--attack all runs every attack that applies",
        ),
        (["--control", "original.csv"], "--control holds the records the attacks compare with"),
        (["--attack", "differencing"], "attack differencing attacks a running query server"),
        (
            ["--attack", "interval-disclosure", "--set", "interval-disclosure.k=0"],
            "--set interval-disclosure.k must be greater than 0",
        ),
        (
            ["--set", "interval-disclosure.k=1"],
            "--set interval-disclosure.…: interval-disclosure is not among the measures run",
        ),
        (
            ["--attack", "linkage", "--set", "linkage.method=both"],
            "linkage is both a measure and an attack run here",
        ),
    ],
)
def test_bad_attack_options_are_one_message_exit_2(files, arguments, message):
    summary = files / "bad.json"
    result = _invoke(
        str(files / "original.csv"), str(files / "noised.csv"), "-c", str(files / "config.yaml"),
        "--risk", "linkage", "--utility", "numeric", "--loss-axis", "numeric", "--summary", str(summary),
        "--quiet", *[str(files / a) if a == "original.csv" else a for a in arguments],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert not summary.exists()
