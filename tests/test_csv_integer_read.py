"""The columns described as numeric are parsed as Int64 while a CSV file is read, when its first
records hold only integers (sdckit.io.csv._integer_columns). The oracle is the text path the reader
took before: the same file read with that shortcut turned off must give the same frame, or the same
error message."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit.io.csv as csv_module
from sdckit.errors import InputError
from sdckit.io import read_table
from sdckit.table import Attribute, Kind

ATTRIBUTES = [Attribute("n", kind=Kind.NUMERIC), Attribute("m", kind=Kind.NUMERIC)]


def _read(path: Path, shortcut: bool, **options):
    with pytest.MonkeyPatch.context() as patch:
        if not shortcut:
            patch.setattr(csv_module, "_integer_columns", lambda *args: [])
        try:
            return read_table(path, attributes=ATTRIBUTES, **options).data
        except InputError as error:
            return str(error)


def _same(path: Path, **options):
    typed = _read(path, True, **options)
    text = _read(path, False, **options)
    if isinstance(text, str):
        assert typed == text
    else:
        assert isinstance(typed, pl.DataFrame), typed
        assert typed.schema == text.schema
        assert typed.equals(text, null_equal=True)
    return typed


def test_integers_are_read_as_int64_with_missing_values(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("n,m,t\n1,10,a\n,NA,b\n-3,007,c\n")
    frame = _same(path, missing_values=("", "NA"))
    assert frame.schema["n"] == pl.Int64 and frame.schema["m"] == pl.Int64
    assert frame.get_column("n").to_list() == [1, None, -3]
    assert frame.get_column("m").to_list() == [10, None, 7]
    assert frame.get_column("t").to_list() == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("late", "expected"),
    [
        ("2.5", [1.0] * 1200 + [2.5]),  # a decimal after the sample: Float64, as the text path gives
        ("7 ", [1] * 1200 + [7]),  # a space after the digits, which the parser refuses
        (" 7", [1] * 1200 + [7]),  # a space before, which it accepts: the same value
        ("9007199254740993", [1] * 1200 + [9007199254740993]),  # beyond 2**53, exact
    ],
)
def test_a_value_after_the_sample_gives_the_column_the_text_path_gives(tmp_path, late, expected):
    path = tmp_path / "d.csv"
    path.write_text("n,m\n" + "1,1\n" * 1200 + f"{late},1\n")
    frame = _same(path)
    assert frame.get_column("n").to_list() == expected


def test_a_word_after_the_sample_is_named_with_its_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("n,m\n" + "1,1\n" * 1200 + "1,abc\n")
    message = _same(path)
    assert isinstance(message, str)
    assert "d.csv:1202" in message and "'abc'" in message


def test_a_short_record_is_still_refused_when_the_last_column_is_parsed(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("n,m\n1,1\n2\n3,3\n")
    message = _same(path)
    assert isinstance(message, str) and "d.csv:3" in message


CELL = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.integers(-100, 100).map(str),
    st.sampled_from(
        ["", "NA", "1.5", "-0", "+4", "007", " 3", "3 ", "x", "1e3", "nan", "99999999999999999999"]
    ),
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    rows=st.lists(st.tuples(CELL, CELL), min_size=1, max_size=8),
    head=st.integers(0, 3),
    tokens=st.sampled_from([("",), ("", "NA")]),
)
def test_the_same_frame_or_error_as_the_text_path(tmp_path_factory, rows, head, tokens):
    # ``head`` integer records first, so that the sample often admits a column and later cells test it.
    path = tmp_path_factory.mktemp("d") / "d.csv"
    lines = ["n,m", *(["1,2"] * head), *(f"{a},{b}" for a, b in rows)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(csv_module, "_INTEGER_SAMPLE", 1 + head)
        _same(path, missing_values=tokens)
