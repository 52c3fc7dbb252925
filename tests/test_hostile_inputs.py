"""Hostile inputs are refused fast, with an error naming the file (and line): YAML alias bombs and
deep nesting, non-core YAML tags, devices, FIFOs and directories where a file is expected, binary
CSV files, files larger than the memory, nested Parquet columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import sdckit
from sdckit import _files
from sdckit._yaml import MAX_DEPTH, MAX_NODES
from sdckit.config import load_config, parse_config
from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.io import read_table
from sdckit.setvalued import read_knowledge
from sdckit.table import Attribute, Kind

SRC = str(Path(sdckit.__file__).resolve().parents[1])


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """Each level a list of ``width`` aliases of the previous one: width**levels values expanded."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * width)}]")
    lines.append("attributes: {age: {role: quasi-identifier}}")
    return "\n".join(lines) + "\n"


MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time, tracemalloc
    from sdckit.config import load_config
    from sdckit.setvalued import read_knowledge
    from sdckit.errors import SdcError
    reader = {"config": load_config, "knowledge": read_knowledge}[sys.argv[2]]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    start = time.perf_counter()
    try:
        reader(sys.argv[1])
        message = None
    except SdcError as error:
        message = str(error)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"message": message, "seconds": seconds, "peak": peak, "rss": (after - before) * 1024}))
    """
)


def measure(path: Path, reader: str) -> dict:
    """Read ``path`` in a fresh interpreter; the error message, seconds, traced peak and maxrss growth."""
    environment = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), reader],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("reader", ["config", "knowledge"])
def test_billion_laughs_is_refused_in_under_a_second_and_100_mb(tmp_path, reader):
    path = tmp_path / "bomb.yaml"
    path.write_text(billion_laughs())
    assert len(path.read_text()) < 1000  # a billion values expanded
    result = measure(path, reader)
    assert result["message"] is not None
    assert result["message"].startswith(f"{path}:")
    assert f"at most {MAX_NODES:,} values with every alias expanded" in result["message"]
    assert result["seconds"] < 1.0
    assert result["peak"] < 100 * 2**20
    assert result["rss"] < 100 * 2**20


def test_alias_bomb_is_refused_on_the_line_that_crosses_the_limit(tmp_path):
    # 9**5 = 59,049 values on line 5 (under the limit), 9**6 on line 6.
    with pytest.raises(ConfigError, match=r"^<config>:6: the document must hold at most 100,000 values"):
        parse_config(billion_laughs())


def test_aliases_within_the_limit_still_work():
    config = parse_config(
        textwrap.dedent(
            """
            attributes:
              age: &qi {role: quasi-identifier, public: 0.5}
              sex: *qi
              zip: *qi
            """
        )
    )
    assert [a.public_probability for a in config.attributes] == [0.5, 0.5, 0.5]
    assert {a.role.value for a in config.attributes} == {"quasi-identifier"}


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5_000, 200_000])
def test_deep_flow_nesting_is_refused_fast(depth):
    start = time.perf_counter()
    with pytest.raises(ConfigError) as error:
        parse_config("attributes: " + "[" * depth + "]" * depth, source="deep.yaml")
    assert time.perf_counter() - start < 1.0
    assert str(error.value) == (
        f"deep.yaml:1: lists and mappings must be nested at most {MAX_DEPTH} deep, got deeper"
    )


def test_nesting_at_the_limit_is_only_a_type_error():
    with pytest.raises(ConfigError, match="must be a mapping of keys, got a list"):
        parse_config("attributes: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))


def test_deep_block_nesting_is_refused_naming_the_line():
    text = "attributes:\n" + "".join("  " * level + "a:\n" for level in range(1, 3_000))
    with pytest.raises(ConfigError, match=rf"^s\.yaml:{MAX_DEPTH + 1}: lists and mappings must be nested"):
        parse_config(text, source="s.yaml")


@pytest.mark.parametrize(
    ("text", "line", "tag"),
    [
        (
            'attributes:\n  age: !!python/object/apply:os.system ["true"]\n',
            2,
            "!!python/object/apply:os.system",
        ),
        (
            "!!python/object:collections.OrderedDict\nattributes: {}\n",
            1,
            "!!python/object:collections.OrderedDict",
        ),
        ("attributes:\n  age:\n    public: !!binary aGVsbG8=\n", 3, "!!binary"),
        ("attributes:\n  age: !custom {role: identifier}\n", 2, "!custom"),
    ],
)
def test_unsupported_yaml_tags_are_named_with_their_line(tmp_path, text, line, tag):
    path = tmp_path / "tagged.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(error.value) == (
        f"{path}:{line}: a YAML tag must be one of !!str, !!int, !!float, !!bool, !!null, !!seq, !!map, "
        f"got the unsupported tag '{tag}'"
    )


def test_core_tags_are_accepted():
    config = parse_config("attributes:\n  age: !!map {public: !!float 0.5, role: !!str identifier}\n")
    assert config.attributes[0].public_probability == 0.5


def test_knowledge_yaml_bounds(tmp_path):
    path = tmp_path / "knowledge.yaml"
    path.write_text("L1: !!python/name:os.system [a]\n")
    with pytest.raises(
        InputError, match=rf"^{path}:1: a YAML tag must be one of .* '!!python/name:os.system'"
    ):
        read_knowledge(path)
    path.write_text("L1: " + "[" * 10_000 + "]" * 10_000 + "\n")
    with pytest.raises(InputError, match=rf"^{path}:1: lists and mappings must be nested at most 100"):
        read_knowledge(path)


# Devices, FIFOs, directories ---------------------------------------------------------------------


needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


@needs_dev_zero
def test_dev_zero_as_hierarchy_is_refused_at_once(tmp_path):
    (tmp_path / "data.csv").write_text("age\n30\n40\n")
    (tmp_path / "config.yaml").write_text(
        "attributes:\n  age: {role: quasi-identifier, hierarchy: /dev/zero}\n"
    )
    config = load_config(tmp_path / "config.yaml")
    start = time.perf_counter()
    with pytest.raises(ConfigError) as error:
        config.read(tmp_path / "data.csv")
    assert time.perf_counter() - start < 1.0
    assert str(error.value) == (
        f"{tmp_path / 'config.yaml'}:2: /dev/zero: hierarchy for 'age': "
        "the hierarchy file must be a regular file, got a device"
    )


@needs_dev_zero
@pytest.mark.parametrize(
    ("read", "error", "what"),
    [
        (read_table, InputError, "data file"),
        (load_config, ConfigError, "configuration file"),
        (read_knowledge, InputError, "knowledge file"),
        (lambda path: Hierarchy.from_csv(path, "age"), ConfigError, "hierarchy file"),
    ],
)
def test_every_reader_refuses_a_device(read, error, what):
    with pytest.raises(
        error, match=rf"^/dev/zero: (hierarchy for 'age': )?the {what} must be a regular file, got a device$"
    ):
        read("/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize(
    ("read", "error", "what"),
    [
        (read_table, InputError, "data file"),
        (load_config, ConfigError, "configuration file"),
        (read_knowledge, InputError, "knowledge file"),
    ],
)
def test_every_reader_refuses_a_fifo_without_blocking(tmp_path, read, error, what):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # opening it for reading would block until a writer comes
    with pytest.raises(
        error, match=rf"pipe\.csv: the {what} must be a regular file, got a FIFO \(named pipe\)$"
    ):
        read(fifo)


def test_directories_are_refused(tmp_path):
    # A directory of Parquet files is a data set (docs/scaling.md); any other is refused.
    (tmp_path / "notes.txt").write_text("not data")
    with pytest.raises(
        InputError, match=r"is a directory holding no Parquet files \(\.parquet, \.pq\), not a data set$"
    ):
        read_table(tmp_path)
    with pytest.raises(ConfigError, match=r"is a directory, not a configuration file$"):
        load_config(tmp_path)
    with pytest.raises(InputError, match=r"is a directory, not a knowledge file$"):
        read_knowledge(tmp_path)


# Binary and oversized files ----------------------------------------------------------------------


def test_a_large_file_of_nul_bytes_is_refused_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(_files, "available_memory", lambda: 1 << 40)  # judged on its content, not size
    path = tmp_path / "zeros.csv"
    with open(path, "wb") as handle:
        handle.truncate(2 << 30)  # 2 GiB of NUL bytes, sparse: nothing is written to disk
    start = time.perf_counter()
    with pytest.raises(InputError) as error:
        read_table(path)
    assert time.perf_counter() - start < 1.0
    assert (
        str(error.value)
        == f"{path}:1: the data file must be CSV text, got binary data (a NUL byte at byte 0)"
    )


def test_nul_bytes_name_their_line_and_utf16_is_recognized(tmp_path):
    path = tmp_path / "mixed.csv"
    path.write_bytes(b"a,b\n1,2\n3,\x004\n")
    with pytest.raises(
        InputError,
        match=rf"^{path}:3: the data file must be CSV text, got binary data \(a NUL byte at byte 10\)$",
    ):
        read_table(path, delimiter=",")  # refused whether or not the delimiter is sniffed
    path.write_bytes("a,b\n1,2\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"\(UTF-16 text\? convert it to UTF-8\)$"):
        read_table(path)


def test_a_file_larger_than_the_available_memory_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n" + "1,2\n" * 1000)
    monkeypatch.setattr(_files, "available_memory", lambda: 1024)
    with pytest.raises(
        InputError,
        match=r"data\.csv: the data file \(3\.9 KiB\) must fit in the available memory \(1\.0 KiB\)",
    ):
        read_table(path)


def test_hierarchy_and_configuration_sizes_are_bounded(tmp_path, monkeypatch):
    import sdckit.hierarchy

    path = tmp_path / "h.csv"
    path.write_text("".join(f"{i};*\n" for i in range(1000)))
    monkeypatch.setattr(sdckit.hierarchy, "MAX_TEXT_BYTES", 1024)
    with pytest.raises(
        ConfigError,
        match=r"h\.csv: hierarchy for 'x': the hierarchy file must be at most 1\.0 KiB, got 5\.8 KiB$",
    ):
        Hierarchy.from_csv(path, "x")
    config = tmp_path / "big.yaml"
    config.write_text("# " + "x" * (_files.MAX_CONFIG_BYTES + 10) + "\n")
    with pytest.raises(
        ConfigError, match=r"big\.yaml: the configuration file must be at most 16\.0 MiB, got 16\.0 MiB$"
    ):
        load_config(config)


def test_binary_hierarchy_is_refused(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"1;*\n2\x00;*\n")
    with pytest.raises(
        ConfigError,
        match=r"h\.csv:2: hierarchy for 'x': the file must be text, got binary data \(a NUL byte at byte 5",
    ):
        Hierarchy.from_csv(path, "x")


# Parquet columns sdckit cannot compare ----------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "dtype"),
    [
        (pl.Series("tags", [[1, 2], [3]]), "List(Int64)"),
        (pl.Series("point", [{"x": 1, "y": 2}, {"x": 3, "y": 4}]), "Struct({'x': Int64, 'y': Int64})"),
        (pl.Series("blob", [b"a", b"b"]), "Binary"),
    ],
)
def test_nested_and_binary_parquet_columns_are_named(tmp_path, column, dtype):
    path = tmp_path / "data.parquet"
    pl.DataFrame([pl.Series("age", [30, 40]), column]).write_parquet(path)
    with pytest.raises(InputError) as error:
        read_table(path)
    assert str(error.value).startswith(
        f"{path}: column '{column.name}' must hold text, numbers, dates or booleans, "
        f"got the unsupported type {dtype}"
    )
    with pytest.raises(InputError, match=f"column '{column.name}'"):
        read_table(pl.read_parquet(path))  # a DataFrame is judged the same way


def test_a_list_of_texts_is_read_for_a_set_valued_attribute(tmp_path):
    path = tmp_path / "data.parquet"
    pl.DataFrame({"age": [30, 40], "items": [["a", "b"], ["c"]]}).write_parquet(path)
    with pytest.raises(InputError, match=r"a list of texts is read only for an attribute of kind set-valued"):
        read_table(path)
    table = read_table(path, attributes=[Attribute("items", kind=Kind.SET_VALUED)])
    assert table.column("items").to_list() == [["a", "b"], ["c"]]
