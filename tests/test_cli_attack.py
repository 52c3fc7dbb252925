"""`sdckit attack` end to end: the verdict's exit status, the summary and report, the held-out split
(records copied exactly as written), and bad usage (exit 2, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from typer.testing import CliRunner

from sdckit.cli import app

runner = CliRunner()
CONFIG = """attributes:
  x: {role: quasi-identifier, kind: numeric}
  code: {role: quasi-identifier, kind: categorical}
"""


def _files(directory: Path, noise: float) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(7)
    x = rng.normal(50, 10, 400).round(3)
    codes = [f"{value:05d}" for value in rng.integers(0, 50, 400)]
    original, release, config = directory / "original.csv", directory / "release.csv", directory / "c.yaml"
    pl.DataFrame({"x": x, "code": codes}).write_csv(original)
    pl.DataFrame({"x": (x + rng.normal(0, noise, 400)).round(3), "code": codes}).write_csv(release)
    config.write_text(CONFIG)
    return original, release, config


def test_a_release_that_does_not_hold_exits_3_with_its_figures_written(tmp_path):
    original, release, config = _files(tmp_path, noise=0.0)
    summary, report = tmp_path / "s.json", tmp_path / "a.html"
    arguments = [str(original), str(release), "-c", str(config), "--summary", str(summary)]
    arguments += ["--report", str(report), "--set", "interval-disclosure.max_risk=0.05", "-q"]
    result = runner.invoke(app, ["attack", *arguments])
    assert result.exit_code == 3, result.output
    assert "not shown to hold against: interval-disclosure" in result.output
    document = json.loads(summary.read_text())
    (interval,) = [entry for entry in document["attacks"] if entry["attack"] == "interval-disclosure"]
    assert interval["attack_rate"]["successes"] == 400
    assert interval["verdict"] == "fails"
    assert document["holds"] is False
    assert "interval-disclosure" in report.read_text()


def test_a_release_that_holds_exits_0(tmp_path):
    original, release, config = _files(tmp_path, noise=40.0)
    arguments = [str(original), str(release), "-c", str(config), "--set", "interval-disclosure.max_risk=0.1"]
    result = runner.invoke(app, ["attack", *arguments, "-q"])
    assert result.exit_code == 0, result.output
    assert "holds" in result.output


def test_split_copies_records_exactly_and_is_reproducible(tmp_path):
    source = tmp_path / "data.csv"
    lines = ["zip,id,note"] + [f'{i:05d},{i:03d},"a, b {i}"' for i in range(20)]
    source.write_text("\n".join(lines) + "\n")
    kept, held = tmp_path / "kept.csv", tmp_path / "held.csv"
    arguments = ["attack", str(source), "--split", "0.25", "-o", str(kept), "--control-output", str(held)]
    result = runner.invoke(app, [*arguments, "--seed", "3"])
    assert result.exit_code == 0, result.output
    kept_rows = pl.read_csv(kept, infer_schema=False)
    held_rows = pl.read_csv(held, infer_schema=False)
    assert (kept_rows.height, held_rows.height) == (15, 5)
    everything = pl.concat([kept_rows, held_rows]).sort("zip")
    assert everything.equals(pl.read_csv(source, infer_schema=False).sort("zip"))
    first = held_rows
    runner.invoke(app, [*arguments, "--seed", "3"])
    assert pl.read_csv(held, infer_schema=False).equals(first)


def test_bad_usage_is_one_message_and_writes_nothing(tmp_path):
    original, release, config = _files(tmp_path, noise=1.0)
    summary = tmp_path / "s.json"
    cases = [
        ([str(original), "-c", str(config)], "attack takes ORIGINAL RELEASE, got 1"),
        ([str(original), str(release), "-c", str(config), "--attack", "nope"], "unknown attack 'nope'"),
        ([str(original), str(release), "-c", str(config), "--set", "nope"], "write ATTACK.PARAMETER=VALUE"),
        (
            [str(original), str(release), "-c", str(config), "--set", "interval-disclosure.k=-1"],
            "--set interval-disclosure.k",
        ),
        (
            [
                str(original),
                "--split",
                "1.5",
                "-o",
                str(tmp_path / "a.csv"),
                "--control-output",
                str(tmp_path / "b.csv"),
            ],
            "--split must be a fraction",
        ),
        (
            [str(original), str(release), "-c", str(config), "-o", str(tmp_path / "a.csv")],
            "--output is written by --split only",
        ),
        ([str(original), "-c", str(config), "--server", "http://127.0.0.1:1"], "--server needs --key"),
    ]
    for arguments, message in cases:
        result = runner.invoke(app, ["attack", *arguments, "--summary", str(summary)])
        assert result.exit_code == 2, (arguments, result.output)
        assert message in " ".join(result.output.split()), (arguments, result.output)
        assert not summary.exists()
        assert not (tmp_path / "a.csv").exists()
