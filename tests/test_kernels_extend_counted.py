"""Issue 35's fifth round of `risk combined`: the key extension through a table of counts
(:func:`sdckit._kernels_counting._extend_counted`), the mapped scan for white space of a CSV file
(:func:`sdckit.io.csv._fields_are_trimmed`) and the compiled coding of text columns in
:func:`sdckit.frequency.encode` (:func:`sdckit._kernels_text.view_codes`). Each against a plain
oracle or the path it replaces: the same groups and sizes, answers and codes, and the same combined
risk bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import _kernels_counting as kernels
from sdckit import frequency
from sdckit.frequency import encode
from sdckit.io import csv as csv_io
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Schema, Table


def oracle(parent_keys, parent_sizes, codes, multiplicity, radix):
    """Keys numbered by (parent key, code) pair in ascending order, records per group, and the number
    of elements alone in their parent's group (key -1)."""
    tracked = (parent_keys >= 0) & (parent_sizes[np.maximum(parent_keys, 0)] >= 2)
    pairs = parent_keys.astype(np.int64) * radix + codes + 1
    present = sorted({int(pair) for pair in pairs[tracked]})
    number = {pair: key for key, pair in enumerate(present)}
    keys = np.array(
        [number[int(p)] if t else -1 for p, t in zip(pairs, tracked, strict=True)], dtype=np.int64
    )
    sizes = np.zeros(len(present), dtype=np.int64)
    for r in np.flatnonzero(tracked):
        sizes[keys[r]] += int(multiplicity[r])
    return keys, sizes, int((~tracked).sum())


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.integers(1, 80),
    st.integers(1, 6),
    st.integers(1, 7),
    st.sampled_from(["none", "ones", "few heavy", "many heavy"]),
    st.integers(0, 2**32 - 1),
)
def test_counted_extension_matches_oracle(n, parents, cardinality, kind, seed):
    rng = np.random.default_rng(seed)
    parent_keys = rng.integers(-1, parents, n).astype(np.int32)
    codes = rng.integers(-1, cardinality, n).astype(np.int32)
    multiplicity = {
        "none": None,
        "ones": np.ones(n, dtype=np.int64),
        "few heavy": np.where(np.arange(n) % 11 == 3, 4, 1).astype(np.int64),
        "many heavy": rng.integers(1, 4, n).astype(np.int64),
    }[kind]
    counted = multiplicity if multiplicity is not None else np.ones(n, dtype=np.int64)
    tracked = parent_keys >= 0
    parent_sizes = np.bincount(parent_keys[tracked], weights=counted[tracked], minlength=parents).astype(
        np.int64
    )
    extender = kernels.KeyExtender(n)
    calls: list[int] = []
    original = kernels._extend_counted

    def spy(*arguments):
        calls.append(1)
        return original(*arguments)

    kernels._extend_counted = spy
    try:
        keys, sizes, alone = extender.extend(
            parent_keys, parent_sizes, codes, cardinality, True, multiplicity, any_order=True
        )
    finally:
        kernels._extend_counted = original
    expected_keys, expected_sizes, expected_alone = oracle(
        parent_keys, parent_sizes, codes, counted, cardinality + 1
    )
    assert calls == ([1] if parents * (cardinality + 1) <= 4 * n else [])
    assert keys.dtype == np.int32
    if calls:  # the counted path numbers groups by pair; the others by first appearance
        assert np.array_equal(keys, expected_keys)
        assert np.array_equal(sizes, expected_sizes)
    else:
        assert sorted(sizes.tolist()) == sorted(expected_sizes.tolist())
    assert alone == expected_alone


def test_counted_extension_by_hand():
    # Parent groups 0 (3 records), 1 (2), 2 (1: alone); cardinality 2 (radix 3).
    parent_keys = np.array([0, 1, 0, 2, 1, 0, -1], dtype=np.int32)
    parent_sizes = np.array([3, 2, 1], dtype=np.int64)
    codes = np.array([1, 1, 1, 0, -1, 0, 1], dtype=np.int32)
    # pairs: r0 0*3+2=2, r1 1*3+2=5, r2 2, r4 1*3+0=3, r5 0*3+1=1; present 1, 2, 3, 5 -> 0, 1, 2, 3.
    multiplicity = np.array([1, 1, 5, 1, 2, 1, 1], dtype=np.int64)
    extender = kernels.KeyExtender(7)
    keys, sizes, alone = extender.extend(
        parent_keys, parent_sizes, codes, 2, True, multiplicity, any_order=True
    )
    assert keys.tolist() == [1, 3, 1, -1, 2, 0, -1]
    assert sizes.tolist() == [1, 6, 2, 1]  # r5; r0 + r2 (1 + 5); r4 (2); r1
    assert alone == 2
    # Without any_order: the direct table, numbered in order of first appearance.
    keys, sizes, _ = extender.extend(parent_keys, parent_sizes, codes, 2, True, multiplicity)
    assert keys.tolist() == [0, 1, 0, -1, 2, 3, -1]
    assert sizes.tolist() == [6, 1, 2, 1]


def test_counts_beyond_the_table_take_the_direct_path():
    """The table of counts is int32: with 2**31 records or more in all, the direct table counts."""
    parent_keys = np.zeros(4, dtype=np.int32)
    parent_sizes = np.array([2**31 + 3], dtype=np.int64)
    codes = np.array([0, 1, 0, 1], dtype=np.int32)
    multiplicity = np.array([2**31, 1, 2, 1], dtype=np.int64)
    extender = kernels.KeyExtender(4)
    keys, sizes, alone = extender.extend(
        parent_keys, parent_sizes, codes, 2, True, multiplicity, any_order=True
    )
    assert keys.tolist() == [0, 1, 0, 1]
    assert sizes.tolist() == [2**31 + 2, 2]
    assert alone == 0


@pytest.mark.parametrize("weighted", [False, True])
def test_combined_risk_bitwise_equal_with_counted_groups(monkeypatch, weighted):
    rng = np.random.default_rng(5)
    n = 4000
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 12, n),
            "b": rng.choice(["x", "y", "z"], n),
            "c": pl.Series(rng.integers(0, 9, n)).scatter(rng.choice(n, 300, replace=False), None),
            "f": rng.choice(["Yes", "No"], n, p=[0.1, 0.9]),
            "g": rng.choice(["Yes", "No"], n, p=[0.4, 0.6]),
        }
    )
    # Some records twice: patterns of two records (multiplicity above 1).
    frame = pl.concat([frame, frame.head(150)])
    schema = Schema(
        (
            Attribute("a", public_probability=0.9),
            Attribute("b", public_probability=0.6),
            Attribute("c", public_probability=0.5),
            Attribute("f", public_probability=0.4, sensitivity=1.0, value_weights={"No": 0}),
            Attribute("g", public_probability=0.3, sensitivity=0.5, value_weights={"No": 0}),
        )
    )
    weights = rng.uniform(0.5, 3.0, frame.height) if weighted else None

    def run():
        return combined_risk(Table(frame, schema), alpha=100, epsilon=0, missing="category", weights=weights)

    monkeypatch.setattr(kernels, "COUNTED_UP_TO", 0)
    before = run()
    calls: list[int] = []
    original = kernels._extend_counted

    def spy(*arguments):
        calls.append(1)
        return original(*arguments)

    monkeypatch.setattr(kernels, "COUNTED_UP_TO", 1 << 22)
    monkeypatch.setattr(kernels, "_extend_counted", spy)
    after = run()
    assert calls  # the counted extension ran
    assert after.risk.tobytes() == before.risk.tobytes()
    assert after.top_contribution.tobytes() == before.top_contribution.tobytes()
    assert np.array_equal(after.top_known_set, before.top_known_set)
    assert after.known_sets.equals(before.known_sets)


TEXTS = [
    "a,b\n1,2\n3,4\n",
    "a,b\n1, 2\n",
    "a,b\n1,2 \n",
    "a,b\n1,\t2\n",
    'a,b\n"1",2\n',
    "a,b\r\n1,2\r\n",
    "a,b\r\n1,2 \r\n",
    "a,b\r\n1,2\r",
    "a,b\n1,2\r",
    "a,b\n1,2\r3\n",
    "a,b\nx\u00a0,2\n",
    "a,b\n\u3000x,2\n",
    "a,b\n\u00e9,2\n",
    "a,b\nx\u2003y,2\n",
    "a;b\n1;2\n",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("delimiter", [",", ";", " ", "\t"])
def test_mapped_scan_answers_as_the_chunked_one(tmp_path: Path, monkeypatch, text, delimiter):
    path = tmp_path / "data.csv"
    path.write_bytes(text.encode("utf-8"))
    mapped = csv_io._fields_are_trimmed(path, delimiter)
    monkeypatch.setattr(csv_io, "_mapped_bytes_absent", lambda *arguments: None)
    assert mapped == csv_io._fields_are_trimmed(path, delimiter)


def test_mapped_scan_by_hand(tmp_path: Path):
    path = tmp_path / "data.csv"
    path.write_bytes(b"a,b\n1,2\n")
    assert csv_io._mapped_bytes_absent(path, b" \t", True) is True
    path.write_bytes(b"a,b\n1, 2\n")
    assert csv_io._mapped_bytes_absent(path, b" \t", True) is False
    path.write_bytes(b'a,b\n"1",2\n')
    assert csv_io._mapped_bytes_absent(path, b" \t", True) is False
    assert csv_io._mapped_bytes_absent(path, b" \t", False) is True
    path.write_bytes(b"a,b\r\n1,2\r\n")
    assert csv_io._mapped_bytes_absent(path, b" \t", True) is None  # CRLF: the chunked pass
    path.write_bytes(b"")
    assert csv_io._mapped_bytes_absent(path, b" \t", True) is None  # nothing to map


LONG = "a value longer than twelve bytes"
VALUES = st.sampled_from(["x", "yy", "", "é", "zz ", "10", "9", LONG, LONG + "!", "ü" * 9, None])


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.lists(VALUES, min_size=1, max_size=40), min_size=1, max_size=3), st.integers(1, 3))
def test_view_codes_are_ranks(columns, chunks):
    n = min(len(column) for column in columns)
    frame = pl.DataFrame(
        {f"c{j}": column[:n] for j, column in enumerate(columns)},
        schema={f"c{j}": pl.String for j in range(len(columns))},
    )
    if chunks > 1 and n > 1:  # a frame of several chunks: the codes follow them
        parts = np.array_split(np.arange(n), chunks)
        frame = pl.concat(
            [frame[int(part[0]) : int(part[-1]) + 1] for part in parts if len(part)], rechunk=False
        )
    through_enum = encode(frame)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frequency, "VIEW_CODES_FROM", 0)
        viewed = encode(frame)
    for j in range(len(columns)):
        values = columns[j][:n]
        categories = sorted({value for value in values if value is not None})
        rank = {value: code for code, value in enumerate(categories)}
        expected = np.array([rank[v] if v is not None else -1 for v in values], dtype=np.int32)
        assert viewed.codes[j].dtype == np.int32
        assert np.array_equal(viewed.codes[j], expected)
        assert np.array_equal(through_enum.codes[j], expected)
        assert viewed.categories[j].to_list() == categories


def test_view_codes_by_hand():
    from sdckit._kernels_text import label_table, view_codes

    column = pl.Series("c", ["b", None, LONG, "a", "b", "c", "d"])
    table = label_table(["a", "b", "c", LONG])
    assert view_codes(column, table).tolist() == [1, -1, 3, 0, 1, 2, -1]  # "d": no label
    chunked = pl.concat([column[:3], column[3:]], rechunk=False)
    assert chunked.n_chunks() == 2
    assert view_codes(chunked, table).tolist() == [1, -1, 3, 0, 1, 2, -1]
    assert view_codes(chunked[2:], table).tolist() == [3, 0, 1, 2, -1]  # a slice: an offset
    assert label_table(["a", "a"]) is None  # spelled alike
    assert view_codes(pl.Series("n", [1, 2]), table) is None  # not text
