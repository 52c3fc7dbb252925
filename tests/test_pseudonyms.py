"""Pseudonyms (sdckit anonymize pseudonymize): identifiers kept as HMAC-SHA-256 pseudonyms that link
files under the same key and differ under another, or as random ids; household ids renumbered 1..H
keeping the households together; the key never written anywhere."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize import pseudonymize
from sdckit.anonymize.pseudonyms import read_key
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.table import Kind, Role, Schema, Table

runner = CliRunner()
KEY = "correct-horse-battery-staple-4711"
OTHER_KEY = "an-entirely-different-secret-0815"


def people(ids: list[str], households: list[int]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "ssn": ids,
            "hid": households,
            "age": [30 + i for i in range(len(ids))],
            "sex": ["MF"[i % 2] for i in range(len(ids))],
        }
    )


# The columns of people(): a direct identifier, the household number and a number.
PEOPLE = {"ssn": Role.IDENTIFIER, "hid": (Role.HOUSEHOLD, Kind.NUMERIC), "age": Kind.NUMERIC}


def digest(key: str, value: str) -> str:
    return hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()


def test_hmac_pseudonyms_are_hmac_sha256_of_the_value():
    frame = people(["111", "222", "111", None], [7, 7, 9, 9])
    release = pseudonymize(make_table(frame, **PEOPLE), key=KEY.encode(), households="keep")
    assert release.table.data["ssn"].to_list() == [
        digest(KEY, "111"),
        digest(KEY, "222"),
        digest(KEY, "111"),
        None,
    ]
    assert release.table.data.drop("ssn").equals(frame.drop("ssn"))
    assert release.table.data.columns == frame.columns  # the identifier column is kept


def test_the_same_key_links_two_files_and_another_key_does_not():
    first = people(["a1", "b2", "c3", "d4"], [1, 1, 2, 3])
    second = people(["c3", "x9", "a1"], [5, 5, 6])
    one = pseudonymize(make_table(first, **PEOPLE), key=KEY.encode()).table.data["ssn"].to_list()
    two = pseudonymize(make_table(second, **PEOPLE), key=KEY.encode()).table.data["ssn"].to_list()
    assert two[0] == one[2] and two[2] == one[0]  # c3 and a1 link across the files
    assert len(set(one) | set(two)) == 5
    other = pseudonymize(make_table(second, **PEOPLE), key=OTHER_KEY.encode()).table.data["ssn"].to_list()
    assert not set(other) & set(two)


def test_random_ids_keep_equal_values_equal_and_reveal_nothing_else():
    frame = people(["z", "a", "z", "m", "a"], [1, 1, 2, 2, 3])
    release = pseudonymize(make_table(frame, **PEOPLE), mode="random", seed=3)
    ids = release.table.data["ssn"].to_list()
    assert sorted(set(ids)) == [1, 2, 3]
    assert ids[0] == ids[2] and ids[1] == ids[4] and len({ids[0], ids[1], ids[3]}) == 3
    again = pseudonymize(make_table(frame, **PEOPLE), mode="random", seed=3).table.data["ssn"].to_list()
    assert ids == again
    orders = {
        tuple(pseudonymize(make_table(frame, **PEOPLE), mode="random", seed=s).table.data["ssn"])
        for s in range(20)
    }
    assert len(orders) > 1


@pytest.mark.parametrize("order", ["random", "sorted"])
def test_household_ids_are_renumbered_1_to_h_and_keep_grouping(order):
    households = [905, 905, 17, 300, 300, 300, 17, 42]
    frame = people([f"p{i}" for i in range(8)], households)
    release = pseudonymize(make_table(frame, **PEOPLE), key=KEY.encode(), households=order, seed=1)
    new = release.table.data["hid"].to_list()
    assert sorted(set(new)) == [1, 2, 3, 4]
    # Same old id <=> same new id.
    assert {(o, n) for o, n in zip(households, new, strict=True)} == {
        (o, new[households.index(o)]) for o in households
    }
    assert len({new[households.index(o)] for o in set(households)}) == 4
    if order == "sorted":
        assert [new[households.index(o)] for o in (17, 42, 300, 905)] == [1, 2, 3, 4]
    permutations = {
        tuple(pseudonymize(make_table(frame, **PEOPLE), key=KEY.encode(), seed=s).table.data["hid"])
        for s in range(20)
    }
    assert len(permutations) > 1  # random order: the seed changes the numbering


def test_keys_are_read_from_a_file_or_the_environment(tmp_path, monkeypatch):
    (tmp_path / "key").write_text(KEY + "\n")
    assert read_key(tmp_path / "key") == KEY.encode()
    monkeypatch.setenv("SDC_KEY", KEY)
    assert read_key(key_env="SDC_KEY") == KEY.encode()
    with pytest.raises(ConfigError, match="environment variable NOPE is not set"):
        read_key(key_env="NOPE")
    (tmp_path / "short").write_text("abc")
    with pytest.raises(ConfigError, match="has 3 bytes; an HMAC key needs at least 16"):
        read_key(tmp_path / "short")
    with pytest.raises(ConfigError, match="cannot read the key file"):
        read_key(tmp_path / "absent")
    with pytest.raises(ConfigError, match="needs a key"):
        read_key()


# The command -----------------------------------------------------------------------------------

CONFIG = """attributes:
  ssn: {role: identifier}
  hid: {role: household}
  age: {role: quasi-identifier, kind: numeric}
"""


def write(directory: Path, frame: pl.DataFrame, name: str = "data.csv") -> tuple[Path, Path]:
    frame.write_csv(directory / name)
    (directory / "config.yaml").write_text(CONFIG)
    (directory / "key.txt").write_text(KEY)
    (directory / "other.txt").write_text(OTHER_KEY)
    return directory / name, directory / "config.yaml"


def invoke(data: Path, config: Path, output: Path, *options: str, env: dict | None = None):
    arguments = ["anonymize", "pseudonymize", str(data), "-c", str(config), "-o", str(output), *options]
    return runner.invoke(app, arguments, env=env)


def test_the_command_keeps_pseudonyms_and_never_writes_the_key(tmp_path):
    frame = people(["111", "222", "333"], [4, 4, 8])
    data, config = write(tmp_path, frame)
    summary = tmp_path / "s.json"
    result = invoke(
        data, config, tmp_path / "out.csv", "--key-file", str(tmp_path / "key.txt"), "--summary", str(summary)
    )
    assert result.exit_code == 0, result.output
    released = pl.read_csv(tmp_path / "out.csv", infer_schema=False)
    assert released["ssn"].to_list() == [digest(KEY, v) for v in ("111", "222", "333")]
    assert sorted(set(released["hid"].to_list())) == ["1", "2"]
    assert released["hid"][0] == released["hid"][1] != released["hid"][2]
    figures = json.loads(summary.read_text())
    assert figures["mode"] == "hmac" and figures["pseudonymized_values"] == {"ssn": 3}
    assert figures["recipe"]["steps"][0]["key_file"] == str(tmp_path / "key.txt")
    # The key is in no output: release, summary (recipe included) or what the command printed.
    for text in ((tmp_path / "out.csv").read_text(), summary.read_text(), result.output):
        assert KEY not in text and KEY.encode().hex() not in text
    # Replaying the recipe reads the key again and makes the same file.
    replay = runner.invoke(
        app,
        [
            "protect",
            str(data),
            "-c",
            str(config),
            "--recipe",
            str(summary),
            "-o",
            str(tmp_path / "again.csv"),
        ],
    )
    assert replay.exit_code == 0, replay.output
    assert (tmp_path / "again.csv").read_bytes() == (tmp_path / "out.csv").read_bytes()


def test_the_key_from_an_environment_variable_links_files_and_another_key_does_not(tmp_path):
    first, config = write(tmp_path, people(["a1", "b2", "c3"], [1, 1, 2]), "first.csv")
    second, _ = write(tmp_path, people(["c3", "q7"], [9, 9]), "second.csv")
    options = ["--key-env", "SDCKIT_TEST_KEY"]
    summary = tmp_path / "s.json"
    assert (
        invoke(
            first,
            config,
            tmp_path / "1.csv",
            *options,
            "--summary",
            str(summary),
            env={"SDCKIT_TEST_KEY": KEY},
        ).exit_code
        == 0
    )
    assert invoke(second, config, tmp_path / "2.csv", *options, env={"SDCKIT_TEST_KEY": KEY}).exit_code == 0
    assert (
        invoke(second, config, tmp_path / "3.csv", *options, env={"SDCKIT_TEST_KEY": OTHER_KEY}).exit_code
        == 0
    )
    one, two, three = (pl.read_csv(tmp_path / f"{n}.csv", infer_schema=False)["ssn"].to_list() for n in "123")
    assert two[0] == one[2]
    assert not set(three) & set(one + two)
    assert KEY not in summary.read_text() and "SDCKIT_TEST_KEY" in summary.read_text()


@pytest.mark.parametrize(
    ("options", "env", "message"),
    [
        ([], {}, "needs a key: give --key-file or --key-env"),
        (["--key-env", "SDCKIT_ABSENT_KEY"], {}, "environment variable SDCKIT_ABSENT_KEY is not set"),
        (["--key-file", "absent.txt"], {}, "cannot read the key file"),
        (["--key-file", "key.txt", "--key-env", "X"], {}, "takes --key-file or --key-env, not both"),
        (["--mode", "random", "--key-file", "key.txt"], {}, "uses no key with mode random"),
    ],
)
def test_a_missing_or_misused_key_exits_2_and_writes_nothing(tmp_path, options, env, message):
    data, config = write(tmp_path, people(["1", "2"], [1, 2]))
    options = [str(tmp_path / o) if o.endswith(".txt") else o for o in options]
    result = invoke(data, config, tmp_path / "out.csv", *options, env={"SDCKIT_ABSENT_KEY": None, **env})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()


def test_random_mode_needs_no_key_and_the_same_seed_gives_the_same_file(tmp_path):
    data, config = write(tmp_path, people([f"id{i}" for i in range(30)], list(np.arange(30) // 3)))
    for name, seed in (("a.csv", "2"), ("b.csv", "2"), ("c.csv", "3")):
        result = invoke(data, config, tmp_path / name, "--mode", "random", "--seed", seed)
        assert result.exit_code == 0, result.output
    read = [(tmp_path / n).read_bytes() for n in ("a.csv", "b.csv", "c.csv")]
    assert read[0] == read[1] != read[2]


def test_nothing_to_pseudonymize_is_an_error(tmp_path):
    frame = people(["1"], [1]).drop("ssn", "hid")
    with pytest.raises(ConfigError, match="nothing to pseudonymize"):
        pseudonymize(Table(frame, Schema.infer(frame)), key=KEY.encode())
