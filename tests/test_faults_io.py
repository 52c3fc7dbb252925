"""Issue 34, items 1, 2 and 9: outputs and data sets, broken pipe.

1. An output inside an input Parquet data set (or a folder output containing an input) is refused, as
   an output that is an input already is: ``risk combined pq/ -o pq/part-99999.parquet`` made the
   scores a part of the data set, whose next read failed.
2. ``-o FOLDER`` of parts is written whole and swapped in: 4 old parts + 1 new one no longer read back
   as 3,499 records; a folder that is not an earlier output is refused; a failed run leaves the old
   folder as it was.
9. ``risk combined ... | head -1`` exited 1 ("internal error" in some runs) after writing its outputs: a
   closed standard output ends the command quietly with 141 (128 + SIGPIPE), the outputs kept.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from examples.generate import generate

from leftovers import nothing_left_behind
from sdckit.cli import EXIT_PIPE_CLOSED
from sdckit.cli._root import run

ROOT = Path(__file__).resolve().parent.parent
CONFIG = (ROOT / "examples" / "students-release.yaml").read_text()
N_RECORDS = 2_000


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """In ``tmp_path`` (the working folder): ``data.csv``, the same records as the Parquet data set
    ``pq/`` of four parts, and ``c.yaml``."""
    frame = generate(N_RECORDS, seed=3)
    frame.write_csv(tmp_path / "data.csv")
    (tmp_path / "pq").mkdir()
    for number in range(4):
        frame.slice(number * 500, 500).write_parquet(tmp_path / "pq" / f"part-{number:05d}.parquet")
    (tmp_path / "c.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def digests(folder: Path) -> dict[str, str]:
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def sdckit(*arguments: object) -> int:
    return run([str(argument) for argument in arguments])


# 1. An output inside (or containing) an input data set ------------------------------------------


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (
            ["risk", "combined", "pq/", "-c", "c.yaml", "-o", "pq/part-99999.parquet"],
            "--output pq/part-99999.parquet: lies inside the input data set pq",
        ),
        (
            ["risk", "combined", "pq/*.parquet", "-c", "c.yaml", "-o", "pq/part-99999.parquet"],
            "--output pq/part-99999.parquet: lies inside the input data set pq/*.parquet",
        ),
        (
            ["risk", "combined", "pq", "-c", "c.yaml", "-o", "link/deeper/scores.parquet"],
            "--output link/deeper/scores.parquet: lies inside the input data set pq",
        ),
        (
            ["risk", "combined", "pq", "-c", "c.yaml", "-o", "out.csv", "--summary", "pq/s.json"],
            "--summary pq/s.json: lies inside the input data set pq",
        ),
        (
            ["anonymize", "mdav", "pq", "-c", "c.yaml", "-k", "3", "-o", "pq/release.parquet"],
            "--output pq/release.parquet: lies inside the input data set pq",
        ),
        (
            ["risk", "combined", "pq/part-00001.parquet", "-c", "c.yaml", "-o", "pq"],
            "--output pq: contains an input of this command (pq/part-00001.parquet)",
        ),
        (
            ["risk", "combined", "data.csv", "-c", "c.yaml", "-o", "."],
            "--output .: contains an input of this command (data.csv)",
        ),
    ],
    ids=["folder", "glob", "symlink", "summary", "anonymize", "folder-output", "working-folder"],
)
def test_an_output_inside_or_containing_an_input_data_set_is_refused(inputs, capsys, command, message):
    (inputs / "link").symlink_to(inputs / "pq", target_is_directory=True)
    before = digests(inputs / "pq")
    with nothing_left_behind(inputs):
        assert sdckit(*command) == 2
    error = capsys.readouterr().err
    assert message in " ".join(error.split()), error
    assert "Traceback" not in error and "internal error" not in error
    assert digests(inputs / "pq") == before
    assert pl.read_parquet(inputs / "pq").height == N_RECORDS  # the data set still reads


def test_a_glob_input_does_not_refuse_an_output_its_pattern_cannot_match(inputs):
    """A data set named by a pattern is the files it matches, not their whole folder."""
    assert sdckit("risk", "combined", "pq/*.parquet", "-c", "c.yaml", "-o", "pq/scores.csv", "-q") == 0
    assert pl.read_csv(inputs / "pq" / "scores.csv").height == N_RECORDS


# 2. A folder of parts is swapped in whole ---------------------------------------------------------


def test_a_parts_folder_replaces_an_earlier_output_whole(inputs):
    command = ["risk", "combined", "data.csv", "-c", "c.yaml", "-o", "scores", "-q"]
    assert sdckit(*command, "--chunk-rows", "500") == 0
    assert sorted(path.name for path in (inputs / "scores").iterdir()) == [
        f"part-{number:05d}.parquet" for number in range(4)
    ]
    with nothing_left_behind(inputs, allowed=("scores/part-00000.parquet",)):
        assert sdckit(*command, "--chunk-rows", "2000") == 0
    assert [path.name for path in (inputs / "scores").iterdir()] == ["part-00000.parquet"]
    scores = pl.read_parquet(inputs / "scores")
    assert scores.height == N_RECORDS  # not 3,500: no old part left beside the new one
    assert scores["record"].to_list() == list(range(N_RECORDS))


@pytest.mark.parametrize("foreign", ["notes.txt", "part-1.csv", "sub/part-00000.parquet", ".hidden"])
def test_a_folder_that_is_not_an_earlier_output_is_refused(inputs, capsys, foreign):
    folder = inputs / "mine"
    (folder / foreign).parent.mkdir(parents=True)
    (folder / foreign).write_text("mine")
    (folder / "part-00007.parquet").write_text("a part, by its name")
    before = digests(folder)
    with nothing_left_behind(inputs):
        status = sdckit("risk", "combined", "data.csv", "-c", "c.yaml", "-o", "mine", "--chunk-rows", "500")
    assert status == 2
    error = " ".join(capsys.readouterr().err.split())
    first = foreign.split("/")[0]
    assert (
        f"--output mine: the folder holds '{first}', which is not a part an earlier sdckit run wrote" in error
    )
    assert digests(folder) == before


def test_an_empty_folder_takes_the_parts(inputs):
    (inputs / "empty").mkdir()
    assert sdckit("risk", "combined", "pq", "-c", "c.yaml", "-o", "empty", "--chunk-rows", "700", "-q") == 0
    assert pl.read_parquet(inputs / "empty").height == N_RECORDS


def test_a_failed_run_leaves_the_old_folder_as_it_was(inputs, capsys):
    assert sdckit("risk", "combined", "data.csv", "-c", "c.yaml", "-o", "scores", "--chunk-rows", "500") == 0
    before = digests(inputs / "scores")
    bad = pl.read_csv(inputs / "data.csv").with_columns(pl.col("birth_year").cast(pl.String))
    bad = bad.with_columns(
        pl.when(pl.int_range(pl.len()) == 1_876)
        .then(pl.lit("unknown"))
        .otherwise(pl.col("birth_year"))
        .alias("birth_year")
    )
    bad.write_csv(inputs / "bad.csv")
    capsys.readouterr()
    with nothing_left_behind(inputs):
        status = sdckit("risk", "combined", "bad.csv", "-c", "c.yaml", "-o", "scores", "--chunk-rows", "500")
    assert status == 2
    error = " ".join(capsys.readouterr().err.split())
    assert "bad.csv:1878: attribute 'birth_year'" in error
    assert digests(inputs / "scores") == before


# 9. A closed standard output ----------------------------------------------------------------------


def test_a_closed_standard_output_ends_quietly_with_the_outputs_written(inputs):
    with nothing_left_behind(inputs, allowed=("out.csv",)) as env:
        process = subprocess.Popen(
            [sys.executable, "-m", "sdckit", "risk", "combined", "data.csv", "-c", "c.yaml", "-o", "out.csv"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=inputs,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # the reader has gone before the report is printed (`| head -0`)
        error = process.stderr.read().decode()
        status = process.wait(timeout=600)
    assert status == EXIT_PIPE_CLOSED, error
    assert error == ""  # no message, no traceback
    assert pl.read_csv(inputs / "out.csv").height == N_RECORDS


@pytest.mark.parametrize("command", [["risk", "combined", "--help"], ["risk", "--help"], ["--help"]])
def test_help_to_a_closed_pipe_ends_quietly(tmp_path, command):
    """typer prints help with rich, whose own answer to a closed pipe was exit status 1."""
    with nothing_left_behind(tmp_path) as env:
        process = subprocess.Popen(
            [sys.executable, "-m", "sdckit", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()
        error = process.stderr.read().decode()
        status = process.wait(timeout=600)
    assert (status, error) == (EXIT_PIPE_CLOSED, "")


class _ClosedAfter:
    """A standard output whose reader goes after ``lines`` writes (as ``head`` does)."""

    def __init__(self, lines: int) -> None:
        self.lines = lines
        self.written: list[str] = []

    def write(self, text: str) -> int:
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        if len(self.written) >= self.lines:
            raise BrokenPipeError(32, "Broken pipe")

    def isatty(self) -> bool:
        return False


def test_a_pipe_closed_while_rich_prints_the_report_ends_quietly(inputs, capsys, monkeypatch):
    from sdckit.cli import _common

    closed = _ClosedAfter(1)
    monkeypatch.setattr(_common.console, "_file", closed)  # "file" would be restored pinned
    monkeypatch.setattr(_common.console, "quiet", False)
    with nothing_left_behind(inputs, allowed=("out.csv", "s.json")):
        status = sdckit(
            "risk", "combined", "data.csv", "-c", "c.yaml", "-o", "out.csv", "--summary", "s.json"
        )
    assert status == EXIT_PIPE_CLOSED
    assert capsys.readouterr().err == ""
    assert len(closed.written) == 1  # the first line reached the reader, then nothing more was tried
    assert pl.read_csv(inputs / "out.csv").height == N_RECORDS
    assert (inputs / "s.json").stat().st_size > 0
