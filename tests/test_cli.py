"""The `sdckit risk combined` command end to end: outputs, figures, and bad input (exit 2, no output);
the console script and its exit statuses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from sdckit.cli import app
from test_cli_anonymize import squeezed

PAPER_CSV = """age,gender,race,income,disease
34,Male,Black,60,Flu
19,Female,White,36,Flu
40,Male,Asian-Pac-Islander,45,Flu
34,Male,Black,50,Cancer
51,Female,Black,65,Flu
"""

PAPER_CONFIG = """attributes:
  age:     {role: quasi-identifier, kind: numeric, public: 0.3, sensitivity: 0}
  gender:  {role: quasi-identifier, kind: categorical, public: 0.8, sensitivity: 0}
  race:    {role: quasi-identifier, kind: categorical, public: 0.7, sensitivity: 0}
  income:  {role: sensitive, kind: numeric, public: 0.005, sensitivity: 0.9,
            ranges: [{max: 40, weight: 1.0}, {min: 40, max: 70, weight: 0.7}]}
  disease: {role: sensitive, kind: categorical, public: 0.001, sensitivity: 1, values: {Flu: 0.2, Cancer: 1}}
risk: {alpha: 100, epsilon: 0, missing: wildcard}
"""

runner = CliRunner()


def write(directory: Path, data: str = PAPER_CSV, config: str = PAPER_CONFIG) -> tuple[Path, Path]:
    data_path, config_path = directory / "data.csv", directory / "config.yaml"
    data_path.write_text(data)
    config_path.write_text(config)
    return data_path, config_path


def outputs(directory: Path) -> list[str]:
    return [
        "--output",
        str(directory / "scores.csv"),
        "--summary",
        str(directory / "summary.json"),
        "--histogram",
        str(directory / "risk.png"),
    ]


def run(*arguments: str):
    return runner.invoke(app, list(arguments))


def test_risk_writes_scores_summary_and_histogram(tmp_path):
    data, config = write(tmp_path)
    result = run(
        "risk", "combined", str(data), "--config", str(config), "--threshold", "200", *outputs(tmp_path)
    )
    assert result.exit_code == 0, result.output
    scores = pl.read_csv(tmp_path / "scores.csv")
    assert scores.columns == ["record", "risk", "top_known_set", "top_contribution"]
    assert scores["record"].to_list() == [0, 1, 2, 3, 4]
    # D(r) of the paper's five records, epsilon 0: all 32 splits (checked against brute force in
    # test_combined.py); the values here pin the end-to-end path.
    np.testing.assert_allclose(
        scores["risk"].to_numpy(), [119.990914, 306.23232, 220.083297, 236.796614, 192.394581], rtol=1e-6
    )
    assert scores["top_known_set"].to_list()[:2] == ["gender+race", "race"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["records"] == 5
    assert summary["known_sets"] == 32
    assert summary["above_threshold"] == 3
    assert summary["above_threshold_percent"] == pytest.approx(60.0)
    assert (tmp_path / "risk.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "5 records" in result.output and "32 known sets" in result.output
    assert "riskiest records" in result.output


def test_parquet_scores_and_empty_top_set_spelled_empty(tmp_path):
    data, config = write(tmp_path, config=PAPER_CONFIG.replace("epsilon: 0,", "epsilon: 0.9,"))
    result = run(
        "risk", "combined", str(data), "--config", str(config), "--output", str(tmp_path / "s.parquet")
    )
    assert result.exit_code == 0, result.output
    scores = pl.read_parquet(tmp_path / "s.parquet")
    assert scores["top_known_set"].to_list() == [""] * 5  # only the empty known set is kept


def test_the_typer_app_is_importable_from_the_package():
    """`from sdckit.cli import app` is the typer app (for CliRunner), not the module of that name."""
    assert isinstance(app, typer.Typer)


def test_written_outputs_are_listed_after_the_report(tmp_path):
    data, config = write(tmp_path)
    result = run("risk", "combined", str(data), "--config", str(config), *outputs(tmp_path))
    assert result.exit_code == 0, result.output
    packed = "".join(result.output.split())  # rich may fold a long path over two lines
    places = [packed.find(f"written{tmp_path / name}") for name in ("scores.csv", "risk.png", "summary.json")]
    assert all(place > 0 for place in places), packed
    assert places == sorted(places)
    assert packed.find("riskiest") < places[0]  # the report first, then what was written
    assert packed.endswith("summary.json")


def test_old_risk_form_without_a_measure_is_a_usage_error(tmp_path):
    data, config = write(tmp_path)
    result = run("risk", str(data), "--config", str(config), "--output", str(tmp_path / "s.csv"))
    assert result.exit_code == 2, result.output
    assert "data.csv" in squeezed(result.output)  # click: no such command '.../data.csv'
    assert not (tmp_path / "s.csv").exists()


def console_commands() -> list[list[str]]:
    """The console script as installed, and its entry point run by this interpreter."""
    commands = [[sys.executable, "-c", "from sdckit.cli import main; main()"]]
    script = shutil.which("sdckit") or str(Path(sys.executable).parent / "sdckit")
    if Path(script).exists():
        commands.append([script])
    return commands


@pytest.mark.slow
@pytest.mark.parametrize("command", console_commands(), ids=lambda c: Path(c[0]).name)
def test_console_script_runs_as_a_program(tmp_path, command):
    data, config = write(tmp_path)
    completed = subprocess.run(
        [*command, "risk", "combined", str(data), "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "known sets" in completed.stdout


@pytest.mark.slow
def test_console_script_exit_statuses(tmp_path):
    command = console_commands()[0]
    data, config = write(tmp_path)
    scores = tmp_path / "scores.csv"
    usage = subprocess.run(
        [
            *command,
            "risk",
            "combined",
            str(data),
            "--config",
            str(config),
            "--threshold",
            "-1",
            "-o",
            str(scores),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert usage.returncode == 2, usage.stderr
    assert "--threshold" in usage.stderr and "-1" in usage.stderr
    assert "Traceback" not in usage.stderr and not scores.exists()
    unknown = subprocess.run([*command, "frobnicate"], capture_output=True, text=True, check=False)
    assert unknown.returncode == 2 and "frobnicate" in unknown.stderr
    unmet = subprocess.run(
        [*command, "check", str(data), "--config", str(config), "-k", "2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert unmet.returncode == 3, unmet.stderr
    assert "not satisfied" in unmet.stderr and "2-anonymity" in unmet.stderr
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, check=False)
    assert version.returncode == 0 and version.stdout.startswith("sdckit ")


BAD_CONFIGS = [
    (PAPER_CONFIG.replace("  race:", "  religion: {public: 0.1}\n  race:"), ["religion"]),
    (PAPER_CONFIG.replace("public: 0.3", "public: 1.5"), ["age", "public"]),
    (PAPER_CONFIG.replace("Cancer: 1}", "Cancer: 2}"), ["disease", "Cancer"]),
    (PAPER_CONFIG.replace("alpha: 100", "alpha: 1"), ["alpha"]),
    (PAPER_CONFIG.replace("epsilon: 0,", "epsilon: -0.5,"), ["epsilon"]),
    (PAPER_CONFIG.replace("missing: wildcard", "missing: skip"), ["missing"]),
    (PAPER_CONFIG.replace("role: sensitive, kind: categorical", "role: secret, kind: categorical"), ["role"]),
]


@pytest.mark.parametrize(("config_text", "words"), BAD_CONFIGS)
def test_bad_configuration_exits_2_without_output(tmp_path, config_text, words):
    data, config = write(tmp_path, config=config_text)
    result = run("risk", "combined", str(data), "--config", str(config), *outputs(tmp_path))
    assert result.exit_code == 2, result.output
    assert "config.yaml" in result.output
    for word in words:
        assert word in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "data.csv"]


BAD_DATA = [
    ("", ["data.csv", "empty"]),
    ("age,gender,race,income,disease\n", ["data.csv", "no records"]),
    (PAPER_CSV.replace("age,gender,race", "age,gender,age"), ["data.csv", "age"]),
    (
        PAPER_CSV.replace("40,Male,Asian-Pac-Islander,45,Flu", "40,Male,Asian-Pac-Islander,45,Flu,extra"),
        ["data.csv", "4"],
    ),
    (PAPER_CSV.replace("19,Female", "nineteen,Female"), ["data.csv", "age", "nineteen", "3"]),
]


@pytest.mark.parametrize(("data_text", "words"), BAD_DATA)
def test_bad_data_exits_2_without_output(tmp_path, data_text, words):
    data, config = write(tmp_path, data=data_text)
    result = run("risk", "combined", str(data), "--config", str(config), *outputs(tmp_path))
    assert result.exit_code == 2, result.output
    for word in words:
        assert word in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "data.csv"]


def test_missing_data_file_and_bad_options_exit_2(tmp_path):
    _, config = write(tmp_path)
    result = run("risk", "combined", str(tmp_path / "nope.csv"), "--config", str(config))
    assert result.exit_code == 2 and "nope.csv" in result.output
    data, config = write(tmp_path)
    for option, words in (
        (["--output", str(tmp_path / "s.txt")], ["--output", "s.txt", ".csv"]),
        (["--histogram", str(tmp_path / "h.bmp")], ["--histogram", "h.bmp", ".png"]),
        (["--threshold", "-1"], ["--threshold", "-1"]),
        (["--threshold", "nan"], ["--threshold", "nan"]),
        (["--top", "-1"], ["--top", "-1"]),
        (["--missing", "maybe"], ["missing", "maybe"]),
        (["--alpha", "0.5"], ["alpha", "0.5"]),
    ):
        result = run("risk", "combined", str(data), "--config", str(config), *option)
        assert result.exit_code == 2, (option, result.output)
        text = " ".join(result.output.split())
        assert text.startswith("error:") and "Traceback" not in text, (option, text)
        for word in words:
            assert word in text, (option, word, text)
    assert not (tmp_path / "s.txt").exists() and not (tmp_path / "h.bmp").exists()


def test_value_weight_that_never_occurs_is_a_warning(tmp_path):
    data, config = write(tmp_path, config=PAPER_CONFIG.replace("Cancer: 1}", "Cancer: 1, Measles: 0.5}"))
    result = run("risk", "combined", str(data), "--config", str(config), "--output", str(tmp_path / "s.csv"))
    assert result.exit_code == 0, result.output
    assert "warning" in result.output and "Measles" in result.output and "disease" in result.output
    assert (tmp_path / "s.csv").exists()


def test_identifier_column_is_dropped(tmp_path):
    lines = PAPER_CSV.strip().split("\n")
    data_text = (
        "\n".join(["ssn," + lines[0]] + [f"{100 + i}," + line for i, line in enumerate(lines[1:])]) + "\n"
    )
    data, config = write(
        tmp_path,
        data=data_text,
        config=PAPER_CONFIG.replace("attributes:\n", "attributes:\n  ssn: {role: identifier}\n"),
    )
    result = run("risk", "combined", str(data), "--config", str(config), "--output", str(tmp_path / "s.csv"))
    assert result.exit_code == 0, result.output
    np.testing.assert_allclose(pl.read_csv(tmp_path / "s.csv")["risk"][1], 306.23232, rtol=1e-6)


def test_check_without_sensitive_attributes_reports_k(tmp_path):
    data, config = write(tmp_path, config=PAPER_CONFIG.replace("role: sensitive", "role: insensitive"))
    result = run(
        "check", str(data), "--config", str(config), "-k", "2", "--summary", str(tmp_path / "c.json")
    )
    # -k 2 is not satisfied: exit status 3, and the summary is written all the same.
    assert result.exit_code == 3, result.output
    summary = json.loads((tmp_path / "c.json").read_text())
    # Classes on (age, gender, race): r1 and r4 share (34, Male, Black); the other three are alone.
    assert summary["n_classes"] == 4
    assert summary["satisfied"] is False
    assert "2-anonymity" in result.output
    assert "not satisfied" in result.output
    assert f"written{tmp_path / 'c.json'}" in squeezed(result.output)


def test_check_without_requirements_reports_and_exits_0(tmp_path):
    data, config = write(tmp_path, config=PAPER_CONFIG.replace("role: sensitive", "role: insensitive"))
    result = run("check", str(data), "--config", str(config), "--summary", str(tmp_path / "c.json"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "c.json").read_text())
    assert summary["satisfied"] is True and summary["required"] == []
    assert summary["n_classes"] == 4


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["-k", "0"], ["-k", "greater than or equal to 1", "0"]),
        (["-t", "1.5"], ["-t", "1.5"]),
        (["-l", "2", "--l-variant", "fancy"], ["--l-variant", "fancy"]),
    ],
)
def test_check_bad_requirements_exit_2_without_output(tmp_path, options, words):
    data, config = write(tmp_path)
    result = run("check", str(data), "--config", str(config), *options, "--summary", str(tmp_path / "c.json"))
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "c.json").exists()


def test_version_and_root_help_load_no_command_group():
    """`sdckit --version` and `sdckit --help` are answered before typer, polars, numba or any command
    group is imported (the start-up of issue 19); the help lists every entry with its short help, as
    the app does."""
    from sdckit.cli._entries import ENTRIES

    script = (
        "import sys\n"
        "from sdckit.cli import main\n"
        "for option in ('--version', '--help'):\n"
        "    try:\n"
        "        main([option])\n"
        "    except SystemExit as exit_:\n"
        "        assert exit_.code == 0, exit_.code\n"
        "heavy = ('typer', 'click', 'rich', 'polars', 'numpy', 'numba')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print('loaded:', heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sdckit ")
    assert "Usage: sdckit [OPTIONS] COMMAND [ARGS]..." in done.stdout
    for name, (_, _, short_help) in ENTRIES.items():
        assert f"  {name} " in done.stdout and short_help.split()[0] in done.stdout
    assert done.stdout.rstrip().endswith("loaded: []")
    # The app's own help lists the same entries.
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for name, (_, _, short_help) in ENTRIES.items():
        assert name in result.output and short_help in result.output
