"""Issue 34, items 10, 13 and 14: the query server, its keys and ledger, and ``sdckit query`` under
faults, each written as the campaign's failing case.

- 10: a refused ``sdckit serve`` start (a missing or binary data file, unknown bounds, a YAML bomb, a
  confidential attribute camouflage cannot protect) leaves nothing behind: no ledger it created, no
  journal, nothing in $TMPDIR; a ledger that was there before stays as it was. A full disk under
  ``ledger init`` or ``keys add`` is one message and exit 2, with no 0-byte ledger left.
- 13: a dataset name a URL path cannot carry as it is (``a/b``, ``?``, ``#``, ``%``, spaces at the
  ends, empty) is refused at start, naming the dataset and the allowed characters.
- 14: ``sdckit query --timeout -1`` (or NaN, ...) and bad numbers of the other numeric options are
  exit 2 naming the option, before anything is sent.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from leftovers import nothing_left_behind

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")

CSV = "region,age,income\n" + "".join(
    f"{('North', 'South', 'East')[i % 3]},{20 + i % 50},{1000 + 37 * i}\n" for i in range(60)
)
ATTRIBUTES = """\
attributes:
  region: {role: quasi-identifier, kind: categorical}
  age:    {role: quasi-identifier, kind: numeric}
  income: {role: sensitive, kind: numeric}
"""
SERVER = """\
store: ledger.sqlite
datasets:
  {name}:
    data: {data}
    config: people.yaml
    protection: dp
    budget: 1.0
    bounds: {{{bounds}: [0, 100]}}
"""
BOMB = """\
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
store: ledger.sqlite
datasets:
  people: {data: people.csv, config: people.yaml, protection: dp, budget: 1.0, bounds: *f}
"""


def folder_of(tmp_path: Path, config: str, name: str = "server.yaml") -> Path:
    """The inputs of a server: its data, attribute configuration, a binary file and ``config``."""
    (tmp_path / "people.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "people.yaml").write_text(ATTRIBUTES, encoding="utf-8")
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 8)
    (tmp_path / name).write_text(config, encoding="utf-8")
    return tmp_path / name


def sdckit(*arguments: str, env: dict[str, str] | None = None, **options) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sdckit", *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        **options,
    )


def serve(config: Path, *extra: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``sdckit serve`` on 127.0.0.1 (a free port); the refused starts here exit at once."""
    return sdckit("serve", "--config", str(config), "--host", "127.0.0.1", "--port", "0", *extra, env=env)


def in_process(*arguments: str) -> int:
    from sdckit.cli._root import run

    return run(list(arguments))


# item 10 -------------------------------------------------------------------------------------------

REFUSED_STARTS = {
    "missing data file": (SERVER.format(name="people", data="nowhere.csv", bounds="age"), "nowhere.csv"),
    "binary data file": (SERVER.format(name="people", data="binary.csv", bounds="age"), "binary"),
    "unknown bounds": (SERVER.format(name="people", data="people.csv", bounds="nosuch"), "nosuch"),
    "YAML bomb": (BOMB, "alias"),
    "camouflage of a date": (
        SERVER.format(name="people", data="people.csv", bounds="age")
        .replace("protection: dp", "protection: camouflage\n    width: 0.1")
        .replace("    budget: 1.0\n    bounds: {age: [0, 100]}\n", ""),
        "confidential attribute 'visit' is date",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("init", [True, False], ids=["--init without a ledger", "an existing ledger"])
@pytest.mark.parametrize("case", list(REFUSED_STARTS))
def test_a_refused_serve_start_leaves_nothing_behind(tmp_path, case, init):
    text, word = REFUSED_STARTS[case]
    config = folder_of(tmp_path, text)
    if case == "camouflage of a date":
        (tmp_path / "people.csv").write_text(
            "".join(
                [
                    "region,age,visit\n",
                    *(f"North,{20 + i},2020-01-{1 + i % 28:02d}\n" for i in range(30)),
                ]
            ),
            encoding="utf-8",
        )
        (tmp_path / "people.yaml").write_text(
            ATTRIBUTES.replace(
                "income: {role: sensitive, kind: numeric}", "visit:  {role: sensitive, kind: date}"
            ),
            encoding="utf-8",
        )
    before = None
    if not init:
        (tmp_path / "good").mkdir()
        good = folder_of(tmp_path / "good", SERVER.format(name="people", data="people.csv", bounds="age"))
        assert in_process("ledger", "init", "--config", str(good)) == 0
        shutil.copy(tmp_path / "good" / "ledger.sqlite", tmp_path / "ledger.sqlite")
        shutil.rmtree(tmp_path / "good")
        before = (tmp_path / "ledger.sqlite").read_bytes()
    with nothing_left_behind(tmp_path) as env:
        result = serve(config, *(["--init"] if init else []), env=env)
    assert result.returncode == 2, result.stderr
    assert word in result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # one error (and at most one warning)
    if before is not None:  # a ledger that was there before is kept, untouched
        assert (tmp_path / "ledger.sqlite").read_bytes() == before
    else:
        assert not (tmp_path / "ledger.sqlite").exists()


def test_a_start_that_fails_after_making_the_ledger_removes_it(tmp_path, monkeypatch):
    """The safety net behind the checks: whatever fails once ``--init`` has made the ledger, the
    ledger and its journal go; one that was there before stays."""
    import sdckit.query.service as service_module
    from sdckit.errors import ConfigError
    from sdckit.query.config import load_server_config
    from sdckit.query.service import QueryService

    text = (
        SERVER.format(name="people", data="people.csv", bounds="age")
        .replace("protection: dp", "protection: camouflage\n    width: 0.1")
        .replace("    budget: 1.0\n    bounds: {age: [0, 100]}\n", "")
    )
    config = folder_of(tmp_path, text)

    def failing(*args, **kwargs):
        raise ConfigError("camouflage: failed on purpose")

    monkeypatch.setattr(service_module, "Camouflage", failing)
    with nothing_left_behind(tmp_path), pytest.raises(ConfigError, match="on purpose"):
        QueryService(load_server_config(config), init=True)
    assert in_process("ledger", "init", "--config", str(config)) == 0
    before = (tmp_path / "ledger.sqlite").read_bytes()
    with nothing_left_behind(tmp_path), pytest.raises(ConfigError, match="on purpose"):
        QueryService(load_server_config(config), init=True)
    assert (tmp_path / "ledger.sqlite").read_bytes() == before


class _FullDisk(sqlite3.Connection):
    def executescript(self, script):  # type: ignore[override]
        raise sqlite3.OperationalError("database or disk is full")


def test_ledger_init_on_a_full_disk_leaves_no_empty_ledger(tmp_path, monkeypatch, capsys):
    import sdckit.query.ledger as ledger_module

    config = folder_of(tmp_path, SERVER.format(name="people", data="people.csv", bounds="age"))
    real = sqlite3.connect
    monkeypatch.setattr(ledger_module.sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=_FullDisk))
    with nothing_left_behind(tmp_path):
        assert in_process("ledger", "init", "--config", str(config)) == 2
    err = capsys.readouterr().err
    assert "ledger.sqlite: cannot create the ledger: database or disk is full" in err
    assert "internal error" not in err
    assert not (tmp_path / "ledger.sqlite").exists()


def _file_size_limit(size: int):
    """For a subprocess: files may not grow beyond ``size`` bytes, as on a full disk (EFBIG)."""

    def limit() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as a full disk: Linux")
def test_ledger_init_and_keys_add_on_a_full_disk_are_one_message(tmp_path):
    config = folder_of(tmp_path, SERVER.format(name="people", data="people.csv", bounds="age"))
    with nothing_left_behind(tmp_path) as env:
        env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
        made = sdckit("ledger", "init", "--config", str(config), env=env, preexec_fn=_file_size_limit(1000))
    assert made.returncode == 2, made.stderr
    assert "cannot create the ledger" in made.stderr and "internal error" not in made.stderr
    assert not (tmp_path / "ledger.sqlite").exists()

    assert in_process("ledger", "init", "--config", str(config)) == 0
    ledger = tmp_path / "ledger.sqlite"
    with nothing_left_behind(tmp_path) as env:
        env = {**env, "PYTHONDONTWRITEBYTECODE": "1"}
        added = sdckit(
            "keys", "add", "alice", "--all", "--config", str(config), env=env, preexec_fn=_file_size_limit(1)
        )
    assert added.returncode == 2, added.stderr
    assert f"{ledger}: cannot write the ledger" in added.stderr
    assert "nothing was recorded" in added.stderr and "internal error" not in added.stderr
    assert ledger.stat().st_size > 0
    listed = sdckit("keys", "list", "--config", str(config))
    assert listed.returncode == 0, listed.stderr  # the ledger still verifies
    assert "0 analysts" in listed.stdout


# item 13 -------------------------------------------------------------------------------------------

BAD_NAMES = ["a/b", "a?b", "a#b", "100%", " padded", "padded ", "", "..", "two words"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_dataset_name_a_url_cannot_carry_is_refused_at_start(tmp_path, capsys, name):
    config = folder_of(tmp_path, SERVER.format(name=f"'{name}'", data="people.csv", bounds="age"))
    with nothing_left_behind(tmp_path):
        assert in_process("serve", "--config", str(config), "--port", "0", "--init") == 2
    err = capsys.readouterr().err
    assert f"server.yaml:3: dataset {name!r}" in err
    assert "letters, digits, '_', '-', '.' and '~'" in err
    assert "internal error" not in err


def test_a_bad_dataset_name_is_refused_by_serve_as_a_subprocess_and_by_keys(tmp_path, capsys):
    config = folder_of(tmp_path, SERVER.format(name="a/b", data="people.csv", bounds="age"))
    with nothing_left_behind(tmp_path) as env:
        result = serve(config, "--init", env=env)
    assert result.returncode == 2, result.stderr
    assert "dataset 'a/b'" in " ".join(result.stderr.split())
    assert in_process("keys", "add", "alice", "--all", "--config", str(config)) == 2
    assert "dataset 'a/b'" in capsys.readouterr().err


def test_names_of_the_allowed_characters_are_served(tmp_path):
    from sdckit.query.config import load_server_config

    config = folder_of(tmp_path, SERVER.format(name="Adult-2024_v1.0~x", data="people.csv", bounds="age"))
    assert list(load_server_config(config).datasets) == ["Adult-2024_v1.0~x"]


# item 14 -------------------------------------------------------------------------------------------

BAD_OPTIONS = [
    ("--timeout", "-1"),
    ("--timeout", "nan"),
    ("--timeout", "inf"),
    ("--timeout", "0"),
    ("--timeout", "1e300"),
    ("--epsilon", "nan"),
    ("--epsilon", "-1"),
    ("--epsilon", "inf"),
    ("--delta", "2"),
    ("--delta", "nan"),
    ("--quantile", "inf"),
    ("--quantile", "0"),
    ("--bins", "0"),
    ("--bins", "-3"),
]


@pytest.mark.parametrize(("option", "value"), BAD_OPTIONS)
def test_a_bad_number_of_sdckit_query_is_exit_2_naming_the_option(tmp_path, capsys, option, value):
    with nothing_left_behind(tmp_path):
        status = in_process(
            "query", "people", "--url", "http://127.0.0.1:9", "--key", "sdk_x", "--filter", "age>3",
            option, value,
        )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith(f"error: {option} must be"), err
    assert f"got {float(value)!r}" in err or f"got {value}" in err
    assert "internal error" not in err and "cannot reach" not in err  # refused before sending


def test_the_client_checks_its_timeout_and_numbers():
    from sdckit.errors import ConfigError
    from sdckit.query.client import Client
    from sdckit.query.errors import QueryError

    with pytest.raises(ConfigError, match=r"^timeout must be a number of seconds above 0 .* got nan"):
        Client("http://127.0.0.1:9", "sdk_x", timeout=float("nan"))
    client = Client("http://127.0.0.1:9", "sdk_x", timeout=1.0)
    try:
        with pytest.raises(QueryError, match=r"^epsilon must be a positive finite number, got inf"):
            client.query("people", aggregate="count", epsilon=float("inf"))
    finally:
        client.close()
