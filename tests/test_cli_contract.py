"""The command line's input/output contract: nothing lost, nothing hung, nothing half-written.

Every failure is one message and exit 2 (bad input, a write error), 3 (a release that does not
satisfy what was asked) or 130 (interrupted); no output of a failed run remains and inputs are never
touched. Releases read back with the configuration that produced them.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.cli._outputs import Outputs
from test2_data import DATA

runner = CliRunner()

CONFIG = """attributes:
  ZIPCode: {role: quasi-identifier, public: 0.6, sensitivity: 0, hierarchy: {mask: 5}}
  Age:     {role: quasi-identifier, public: 0.6, sensitivity: 0, hierarchy: {intervals: [20, 30, 40, 50, 60]}}
  Disease: {role: sensitive, public: 0.02, sensitivity: 1}
"""


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "t.csv").write_text(DATA)
    (tmp_path / "t.yaml").write_text(CONFIG)
    return tmp_path / "t.csv", tmp_path / "t.yaml"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}


# 1. Data loss ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["risk", "combined", "{data}", "-c", "{config}", "-o", "{data}"],
        ["risk", "combined", "{data}", "-c", "{config}", "-o", "{dotted}"],
        ["anonymize", "mondrian", "{data}", "-c", "{config}", "-k", "2", "-o", "{data}"],
        ["anonymize", "mondrian", "{data}", "-c", "{config}", "-k", "2", "-o", "{dotted}"],
        ["anonymize", "mondrian", "{data}", "-c", "{config}", "-k", "2", "-o", "{link}"],
        ["protect", "{data}", "-c", "{config}", "--recipe", "{plan}", "-o", "{out}", "--summary", "{plan}"],
        ["apply", "{plan}", "{data}", "-o", "{out}", "--summary", "{plan}"],
    ],
)
def test_an_output_that_is_an_input_is_refused(inputs, tmp_path, monkeypatch, command):
    data, config = inputs
    plan = tmp_path / "plan.json"
    plan.write_text('{"steps": [{"method": "mondrian", "k": 2}]}')
    os.link(data, tmp_path / "hard.csv")
    monkeypatch.chdir(tmp_path)
    values = {
        "data": data,
        "config": config,
        "dotted": "./t.csv",
        "link": tmp_path / "hard.csv",
        "out": tmp_path / "out.csv",
        "plan": plan,
    }
    before = {p: digest(p) for p in (data, config, plan)}
    result = runner.invoke(app, [part.format(**values) for part in command])
    assert result.exit_code == 2, result.output
    assert "is an input of this command" in " ".join(result.output.split())
    assert {p: digest(p) for p in (data, config, plan)} == before
    assert not (tmp_path / "out.csv").exists()


# 2. Half-written sets of outputs ----------------------------------------------------------------


def commands(data: Path, config: Path, tmp_path: Path) -> dict[str, list[str]]:
    plan = tmp_path / "plan.yaml"
    plan.write_text("steps: [{method: generalize, k: 2}, {method: local-suppression, k: 3}]\n")
    learnt = tmp_path / "learnt.json"
    if not learnt.exists():
        made = runner.invoke(
            app,
            ["anonymize", "mondrian", str(data), "-c", str(config), "-k", "2", "-o", str(tmp_path / "m.csv"),
             "--summary", str(learnt)],
        )  # fmt: skip
        assert made.exit_code == 0, made.output
    out = tmp_path / "out"
    return {
        "apply": [
            "apply",
            str(learnt),
            str(data),
            "-o",
            f"{out}/a.csv",
            "--summary",
            f"{out}/a.json",
            "--export-mappings",
            f"{out}/mappings",
        ],  # fmt: skip
        "risk": [
            "risk",
            "combined",
            str(data),
            "-c",
            str(config),
            "-o",
            f"{out}/s.csv",
            "--histogram",
            f"{out}/h.png",
            "--summary",
            f"{out}/s.json",
        ],
        "targeted": [
            "anonymize",
            "targeted-suppression",
            str(data),
            "-c",
            str(config),
            "--delta",
            "0.5",
            "--repeat",
            "-o",
            f"{out}/r.csv",
            "--histogram",
            f"{out}/h.svg",
            "--summary",
            f"{out}/r.json",
        ],
        "generalize": [
            "anonymize",
            "generalize",
            str(data),
            "-c",
            str(config),
            "-k",
            "2",
            "-o",
            f"{out}/g.parquet",
            "--summary",
            f"{out}/g.json",
        ],
        "protect": [
            "protect",
            str(data),
            "-c",
            str(config),
            "--recipe",
            str(plan),
            "-o",
            f"{out}/p.csv",
            "--summary",
            f"{out}/p.json",
        ],
        "check": ["check", str(data), "-c", str(config), "-k", "1", "--summary", f"{out}/c.json"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["risk", "targeted", "generalize", "protect", "check", "apply"])
def test_a_failing_write_leaves_no_output_at_all(inputs, tmp_path, monkeypatch, name):
    data, config = inputs
    arguments = commands(data, config, tmp_path)[name]
    clean = runner.invoke(app, arguments)
    assert clean.exit_code == 0, clean.output
    n_outputs = len(list((tmp_path / "out").iterdir()))
    assert n_outputs >= 1
    stage = Outputs.stage
    for failing in range(n_outputs):
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        staged: list[int] = []

        def faulty(self, path, write, failing=failing, staged=staged):
            number = len(staged) if path is not None else -1
            if path is not None:
                staged.append(number)

            def broken(temporary: Path) -> None:
                if number == failing:
                    raise OSError(28, "No space left on device")
                write(temporary)

            stage(self, path, broken)

        monkeypatch.setattr(Outputs, "stage", faulty)
        result = runner.invoke(app, arguments)
        monkeypatch.setattr(Outputs, "stage", stage)
        assert result.exit_code == 2, result.output
        assert "cannot write" in result.output and "No space left on device" in result.output
        assert "Traceback" not in result.output
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.slow
def test_interrupted_runs_leave_nothing_and_say_one_line(inputs, tmp_path):
    """Ctrl-C at random moments of real runs (start-up included): exit 130 with one line, nothing
    written, inputs untouched; or, if the run finished first, exit 0 with every output."""
    data, config = inputs
    script = [sys.executable, "-c", "from sdckit.cli import main; main()"]
    arguments = commands(data, config, tmp_path)["targeted"]
    before = {p: digest(p) for p in (data, config)}
    out = tmp_path / "out"
    started = time.perf_counter()
    subprocess.run([*script, *arguments], check=True, capture_output=True)
    duration = time.perf_counter() - started
    rng = random.Random(11)
    outcomes = []
    for _ in range(10):
        if out.exists():
            for path in out.iterdir():
                path.unlink()
        process = subprocess.Popen(
            [*script, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        time.sleep(rng.uniform(0.05, duration * 1.1))
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
        outcomes.append(process.returncode)
        assert "Traceback" not in stderr + stdout
        assert process.returncode in (0, 130), stderr
        if process.returncode == 130:
            assert stderr.strip().splitlines()[-1] == "interrupted"
            assert not out.exists() or not list(out.iterdir())
        else:
            assert {p.name for p in out.iterdir()} == {"r.csv", "h.svg", "r.json"}
        assert not [p for p in tmp_path.rglob(".*")]
        assert {p: digest(p) for p in (data, config)} == before
    assert 130 in outcomes


@pytest.mark.slow
def test_piping_into_head_keeps_the_outputs(inputs, tmp_path):
    data, config = inputs
    script = [sys.executable, "-c", "from sdckit.cli import main; main()"]
    arguments = commands(data, config, tmp_path)["risk"]
    pipeline = subprocess.run(
        " ".join([*map(repr, script), *map(repr, arguments)]) + " | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in pipeline.stderr
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"s.csv", "h.png", "s.json"}


# 4. Releases that read back ----------------------------------------------------------------------

SEMICOLON_CONFIG = """data: {delimiter: ";"}
attributes:
  id:      {role: identifier}
  ZIPCode: {role: quasi-identifier, public: 0.6, hierarchy: {mask: 5}}
  Age:     {role: quasi-identifier, kind: numeric, public: 0.6, hierarchy: {intervals: [20, 30, 40, 50, 60]}}
  Disease: {role: sensitive}
"""


@pytest.mark.parametrize(
    ("method", "options", "model"),
    [
        ("generalize", ["-k", "3", "-l", "2"], "3-anonymity"),
        ("mondrian", ["-k", "3", "-l", "2"], "3-anonymity"),
        ("local-suppression", ["-k", "3"], None),
        ("top-bottom-coding", ["--attribute", "Age", "--top", "50"], None),
    ],
)
def test_check_reads_every_release_with_the_configuration_that_produced_it(tmp_path, method, options, model):
    rows = DATA.strip().splitlines()
    data = tmp_path / "d.csv"
    data.write_text(
        "id;"
        + rows[0].replace(",", ";")
        + "\n"
        + "".join(f"{i};{r.replace(',', ';')}\n" for i, r in enumerate(rows[1:]))
    )
    config = tmp_path / "d.yaml"
    config.write_text(SEMICOLON_CONFIG)
    release, summary = tmp_path / "r.csv", tmp_path / "r.json"
    made = runner.invoke(
        app,
        [
            "anonymize",
            method,
            str(data),
            "-c",
            str(config),
            "-o",
            str(release),
            "--summary",
            str(summary),
            *options,
        ],
    )
    assert made.exit_code == 0, made.output
    checked = tmp_path / "c.json"
    result = runner.invoke(app, ["check", str(release), "-c", str(config), "--summary", str(checked)])
    assert result.exit_code == 0, result.output
    figures = json.loads(checked.read_text())
    achieved = (
        {entry["model"]: entry["achieved"] for entry in figures["models"]}
        if isinstance(figures.get("models"), list)
        else figures
    )
    made_figures = json.loads(summary.read_text())
    if model is not None:
        assert made_figures["achieved"][model] == pytest.approx(_k(figures))
    if method == "local-suppression":
        assert figures["missing"] == "wildcard"
        assert _k(figures) >= 3
    del achieved


def _k(figures: dict) -> float:
    for key, value in figures.items():
        if key == "k" or key.endswith("anonymity"):
            return float(value if not isinstance(value, dict) else value["achieved"])
    for entry in figures.get("results", []):
        if entry["model"].endswith("anonymity"):
            return float(entry["achieved"])
    raise AssertionError(f"no k in {sorted(figures)}")


# 5. A model not achieved is not success ---------------------------------------------------------


def test_a_release_that_misses_what_was_asked_is_not_written(inputs, tmp_path):
    data, config = inputs
    out = tmp_path / "r.csv"
    arguments = [
        "anonymize",
        "targeted-suppression",
        str(data),
        "-c",
        str(config),
        "--delta",
        "0",
        "-o",
        str(out),
    ]
    refused = runner.invoke(app, arguments)
    assert refused.exit_code == 3, refused.output
    assert "nothing written" in refused.output and not out.exists()
    allowed = runner.invoke(app, [*arguments, "--allow-violations", "--summary", str(tmp_path / "s.json")])
    assert allowed.exit_code == 3, allowed.output
    assert out.exists()
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["satisfied"] is False and "above DELTA" in summary["violation"]


# 3. Hostile numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["mondrian", "-k", "2", "-l", "nan"], "-l must be a finite number"),
        (["mondrian", "-k", "2", "-l", "inf"], "-l must be a finite number"),
        (["generalize", "-k", "2", "--max-nodes", "-5"], "--max-nodes must be greater than or equal to 1"),
        (
            ["generalize", "-k", "2", "--suppression-limit", "nan"],
            "--suppression-limit must be a finite number",
        ),
        (["targeted-suppression", "--delta", "inf"], "--delta must be a finite number"),
        (["local-suppression", "-k", "2", "-l", "2"], "-l is not an option of local-suppression"),
        (["local-suppression", "-k", "2", "-t", "0.2"], "-t is not an option of local-suppression"),
        (
            ["targeted-suppression", "--delta", "0.1", "-k", "2"],
            "-k is not an option of targeted-suppression",
        ),
    ],
)
def test_every_number_is_validated(inputs, tmp_path, options, message):
    data, config = inputs
    result = runner.invoke(
        app,
        ["anonymize", options[0], str(data), "-c", str(config), "-o", str(tmp_path / "r.csv"), *options[1:]],
    )
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "r.csv").exists()


def test_risk_measures_a_release_with_the_configuration_that_produced_it(tmp_path):
    rows = DATA.strip().splitlines()
    data = tmp_path / "d.csv"
    data.write_text(
        "id;"
        + rows[0].replace(",", ";")
        + "\n"
        + "".join(f"{i};{r.replace(',', ';')}\n" for i, r in enumerate(rows[1:]))
    )
    config = tmp_path / "d.yaml"
    config.write_text(
        SEMICOLON_CONFIG.replace("Disease: {role: sensitive}", "Disease: {role: sensitive, public: 0.02}")
    )
    release = tmp_path / "r.csv"
    made = runner.invoke(
        app, ["anonymize", "mondrian", str(data), "-c", str(config), "-o", str(release), "-k", "3"]
    )
    assert made.exit_code == 0, made.output
    plain = runner.invoke(app, ["risk", "combined", str(release), "-c", str(config)])
    assert plain.exit_code == 2  # the identifier is gone and Age holds ranges
    measured = runner.invoke(
        app,
        [
            "risk",
            "combined",
            str(release),
            "-c",
            str(config),
            "--release",
            "--summary",
            str(tmp_path / "s.json"),
        ],
    )
    assert measured.exit_code == 0, measured.output
    assert json.loads((tmp_path / "s.json").read_text())["records"] == 14


def test_check_names_only_the_failing_models_and_refuses_l_with_wildcard(inputs, tmp_path):
    data, config = inputs
    result = runner.invoke(app, ["check", str(data), "-c", str(config), "-k", "1"])
    assert result.exit_code == 0, result.output
    failing = runner.invoke(app, ["check", str(data), "-c", str(config), "-k", "1", "-l", "2"])
    assert failing.exit_code == 3
    verdict = " ".join(failing.output.split()).split("not satisfied: ")[-1]
    assert verdict == "t.csv does not satisfy distinct 2-diversity (Disease)"
    holes = tmp_path / "holes.csv"
    holes.write_text(DATA.replace("47677,29,", ",29,"))
    wildcard = runner.invoke(
        app, ["check", str(holes), "-c", str(config), "-l", "2", "--missing", "wildcard"]
    )
    assert wildcard.exit_code == 2
    assert "only k-anonymity can be checked" in " ".join(wildcard.output.split())
    assert "--missing category" in wildcard.output
    category = runner.invoke(
        app, ["check", str(holes), "-c", str(config), "-l", "2", "--missing", "category"]
    )
    assert category.exit_code == 3, category.output  # checked: every class of one record fails l = 2
