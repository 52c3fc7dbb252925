"""Issue 34, items 11 and 12: the workbench (``sdckit ui``) and the Dask engine leave nothing behind.

Each case is the campaign's command, run as a subprocess under :func:`leftovers.nothing_left_behind`
(a private ``TMPDIR``): a start refused for its inputs, a read-only ``--workdir``, Ctrl-C as a terminal
sends it (SIGINT to the whole process group, worker processes included), and a Dask run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from leftovers import nothing_left_behind

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.generate import generate  # noqa: E402

CONFIG = (ROOT / "examples" / "students-release.yaml").read_text()
#: generous bounds (the expected times are a few seconds at most)
START_TIMEOUT = 180
STOP_TIMEOUT = 60


def sdckit(*arguments: str | Path) -> list[str]:
    return [sys.executable, "-m", "sdckit", *map(str, arguments)]


def run(arguments: list[str], env: dict[str, str], cwd: Path, **options) -> subprocess.CompletedProcess:
    return subprocess.run(
        arguments, env=env, cwd=cwd, capture_output=True, text=True, timeout=START_TIMEOUT, **options
    )


def interrupt(process: subprocess.Popen) -> tuple[int, str]:
    """Ctrl-C as a terminal sends it (to the process group); the exit status and stderr."""
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=STOP_TIMEOUT)
    return process.returncode, err.decode()


def assert_quiet(err: str) -> None:
    for noise in ("Traceback", "KeyboardInterrupt", "Task exception", "leaked", "Exception ignored"):
        assert noise not in err, err


# 11. sdckit ui -------------------------------------------------------------------------------------


def _inputs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    binary = folder / "binary.csv"
    binary.write_bytes(b"\x00\x01\x02binary")
    hostile = folder / "hostile.yaml"
    hostile.write_text("a: &a [x, *a]\n", encoding="utf-8")  # an alias inside what it names
    return {"missing": folder / "nosuch.csv", "binary": binary, "hostile": hostile}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "name", "message"),
    [
        ("--data", "missing", "nosuch.csv: no such file"),
        ("--data", "binary", "binary.csv:1: the data file must be CSV text, got binary data"),
        ("--config", "hostile", "hostile.yaml:1: an alias refers to the mapping that holds it"),
    ],
)
def test_ui_refused_at_start_leaves_no_worker_folder(tmp_path, option, name, message):
    # found by the campaign: $TMPDIR/pymp-* was left (the fork server started before the inputs were read)
    inputs = _inputs(tmp_path / "in")
    with nothing_left_behind(tmp_path) as env:
        result = run(sdckit("ui", "--port", "0", option, inputs[name]), env, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr
    assert result.stdout == ""


def test_ui_refused_with_a_given_workdir_takes_back_what_it_wrote(tmp_path):
    inputs = _inputs(tmp_path / "in")
    workdir = tmp_path / "wd"
    workdir.mkdir()
    (workdir / "notes.txt").write_text("mine\n", encoding="utf-8")
    with nothing_left_behind(tmp_path) as env:
        result = run(
            sdckit("ui", "--port", "0", "--workdir", workdir, "--data", inputs["binary"]), env, tmp_path
        )
    assert result.returncode == 2, result.stderr
    assert sorted(path.name for path in workdir.iterdir()) == ["notes.txt"]


def _without_root_override():
    """root ignores a folder's permissions (CAP_DAC_OVERRIDE); the child drops that capability from
    its bounding set before exec, so a read-only folder is read-only for it as for a user."""
    if os.geteuid() != 0:
        return None
    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                os._exit(97)

    return drop


@pytest.mark.parametrize("inside", [False, True])
def test_ui_workdir_read_only_is_exit_2_naming_it(tmp_path, inside):
    # found by the campaign: exit 1, an internal error (OSError)
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o555)
    workdir = read_only / "wd" if inside else read_only
    try:
        with nothing_left_behind(tmp_path) as env:
            result = run(
                sdckit("ui", "--port", "0", "--workdir", workdir),
                env,
                tmp_path,
                preexec_fn=_without_root_override(),
            )
    finally:
        read_only.chmod(0o755)
    if result.returncode == 97:
        pytest.skip("running as root without the right to drop CAP_DAC_OVERRIDE: nothing is read-only")
    assert result.returncode == 2, result.stderr
    assert re.fullmatch(
        rf"error: --workdir {re.escape(str(workdir))}: cannot write in this folder \(Permission denied\); "
        r"give a folder you can write to \(created if absent\)",
        " ".join(result.stderr.split()),
    ), result.stderr
    assert list(read_only.iterdir()) == []


@contextlib.contextmanager
def _workbench(
    folder: Path, env: dict[str, str], *options: Any
) -> Iterator[tuple[subprocess.Popen, re.Match]]:
    """``sdckit ui`` started in its own session in ``folder``, with the match of its address line
    (base URL, port, token); killed with its process group on the way out if it still runs."""
    process = subprocess.Popen(
        sdckit("ui", "--port", "0", *options),
        env=env,
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        line = process.stdout.readline().decode()
        found = re.search(r"on (http://127\.0\.0\.1:(\d+))/\?token=(\S+) ", line)
        assert found, line
        yield process, found
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stdout.close()
        process.stderr.close()


@pytest.mark.slow
@pytest.mark.parametrize("after", [0.0, 1.0])
def test_ui_ctrl_c_soon_after_start_is_130_quietly_with_nothing_left(tmp_path, after):
    # found by the campaign: Ctrl-C 1 s after start printed the fork server's KeyboardInterrupt
    # traceback (it was still importing the library) and left $TMPDIR/pymp-*
    with nothing_left_behind(tmp_path) as env, _workbench(tmp_path, env) as (process, _):
        time.sleep(after)
        status, err = interrupt(process)
    assert status == 130, err
    assert err == "interrupted\n"


@pytest.mark.slow
def test_ui_ctrl_c_during_a_job_stops_it_quietly_with_nothing_left(tmp_path):
    # the job's process gets the terminal's Ctrl-C too: it ignores it, and the server cancels it
    data, config = _data(tmp_path / "in", 200_000)
    with (
        nothing_left_behind(tmp_path) as env,
        _workbench(tmp_path, env, "--data", data, "--config", config) as (process, found),
    ):
        with httpx.Client(
            base_url=found.group(1), cookies={f"sdckit-ui-{found.group(2)}": found.group(3)}, timeout=60
        ) as client:
            assert client.post("/measure", content=b"").status_code == 303
        deadline = time.monotonic() + START_TIMEOUT
        while not list(Path(env["TMPDIR"]).glob("sdckit-ui-*/jobs/*/progress.json")):
            assert process.poll() is None and time.monotonic() < deadline, "no job started"
            time.sleep(0.05)
        status, err = interrupt(process)
    assert status == 130, err
    assert err == "interrupted\n"


# 12. --engine dask ----------------------------------------------------------------------------------


def _data(folder: Path, records: int) -> tuple[Path, Path]:
    folder.mkdir()
    data = folder / "data.csv"
    generate(records, seed=3).write_csv(data)
    config = folder / "config.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    return data, config


@pytest.mark.slow
def test_dask_run_leaves_no_scratch_folder_and_matches_the_local_engine(tmp_path):
    # found by the campaign: $TMPDIR/dask-scratch-space after every run
    data, config = _data(tmp_path / "in", 3_000)
    out = tmp_path / "out"
    out.mkdir()
    command = ["anonymize", "mondrian", data, "-c", config, "-k", "5", "--chunk-rows", "1000", "-q"]
    with nothing_left_behind(tmp_path, allowed=("out/dask.parquet",)) as env:
        result = run(
            sdckit(*command, "--engine", "dask", "--workers", "2", "-o", out / "dask.parquet"), env, tmp_path
        )
    assert result.returncode == 0, result.stderr
    assert_quiet(result.stderr)
    local = run(sdckit(*command, "-o", out / "local.parquet"), dict(os.environ), tmp_path)
    assert local.returncode == 0, local.stderr
    released = pl.read_parquet(out / "dask.parquet")
    assert released.height == 3_000
    assert_frame_equal(released, pl.read_parquet(out / "local.parquet"))


@pytest.mark.slow
@pytest.mark.parametrize("after", [0.0, 1.0])
def test_dask_ctrl_c_during_a_run_is_130_quietly_with_nothing_left(tmp_path, after):
    # found by the campaign: "Task exception was never retrieved", the workers' tracebacks, and
    # $TMPDIR/dask-scratch-space. The scale path prints no stage line: the run has started when both
    # workers have made their folder in a scratch folder under the private TMPDIR.
    data, config = _data(tmp_path / "in", 150_000)
    out = tmp_path / "out"
    out.mkdir()
    with nothing_left_behind(tmp_path) as env:
        scratch = Path(env["TMPDIR"])
        process = subprocess.Popen(
            sdckit(
                "anonymize",
                "mondrian",
                data,
                "-c",
                config,
                "-k",
                "5",
                "--engine",
                "dask",
                "--workers",
                "2",
                "--chunk-rows",
                "20000",
                "-o",
                out / "release.parquet",
            ),
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while len(list(scratch.glob("**/dask-scratch-space/worker-*"))) < 2:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the workers did not start"
                time.sleep(0.05)
            time.sleep(after)
            assert process.poll() is None, "the run ended before it was interrupted"
            status, err = interrupt(process)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            process.stdout.close()
            process.stderr.close()
    assert status == 130, err
    assert_quiet(err)
    assert err.strip().splitlines()[-1] == "interrupted", err
