"""The sensitive attributes' codes of the lattice search (sdckit.anonymize._lattice_encoding) are
those of sdckit.frequency.encode: hand-computed on a small column, and against encode on text
columns with missing values, long and non-ASCII values, several chunks, and non-text columns."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize._lattice_encoding import sensitive_codes
from sdckit.frequency import encode
from sdckit.table import Table


def test_hand_computed_codes():
    frame = pl.DataFrame({"disease": ["flu", "cancer", None, "flu", "asthma"]})
    codes, n_values, has_missing, categories = sensitive_codes(Table.from_frame(frame), ["disease"])[
        "disease"
    ]
    # sorted distinct values: asthma 0, cancer 1, flu 2; the missing value -1
    assert codes.tolist() == [2, 1, -1, 2, 0]
    assert codes.dtype == np.int32
    assert (n_values, has_missing) == (3, True)
    assert categories.to_list() == ["asthma", "cancer", "flu"]


def _columns() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    words = np.array(
        ["a", "Married-civ-spouse", "United-States", "Ölmühle-Süd", "x" * 40, "", "short", "b"], dtype=object
    )
    texts = words[rng.integers(0, len(words), 500)].tolist()
    with_nulls = [None if i % 7 == 0 else value for i, value in enumerate(texts)]
    return pl.DataFrame(
        {
            "text": texts,
            "nulls": with_nulls,
            "numbers": rng.integers(0, 9, 500),
            "floats": rng.normal(size=500).round(1),
            "category": pl.Series(texts).cast(pl.Categorical),
        }
    )


@pytest.mark.parametrize("name", ["text", "nulls", "numbers", "floats", "category"])
def test_same_as_encode(name):
    frame = _columns()
    if name == "text":  # several chunks
        frame = pl.concat([frame.head(200), frame.tail(300)], rechunk=False)
        assert frame.get_column("text").n_chunks() == 2
    expected = encode(frame, [name])
    codes, n_values, has_missing, categories = sensitive_codes(Table.from_frame(frame), [name])[name]
    assert codes.tolist() == expected.codes[0].tolist()
    assert (n_values, has_missing) == (expected.cardinalities[0], expected.has_missing[0])
    assert categories.equals(expected.categories[0], check_names=True)


def test_many_distinct_texts():
    # more distinct texts (900) than the first hash table takes (512): the count starts again larger
    values = [None if i % 11 == 0 else f"value {i % 900:04d}" + "-long" * (i % 3) for i in range(3000)]
    frame = pl.DataFrame({"many": values})
    expected = encode(frame, ["many"])
    codes, n_values, has_missing, categories = sensitive_codes(Table.from_frame(frame), ["many"])["many"]
    assert n_values == expected.cardinalities[0] > 512
    assert codes.tolist() == expected.codes[0].tolist()
    assert has_missing and categories.equals(expected.categories[0], check_names=True)


@pytest.mark.parametrize("weighted", [False, True])
def test_counted_pairs(weighted):
    from sdckit.anonymize._lattice_encoding import counted_pairs

    pair = np.array([5, 2, 5, 9, 2, 5, 0])
    weights = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 2.5]) if weighted else None
    present, counts = counted_pairs(pair, weights, 12)
    assert present.tolist() == [0, 2, 5, 9]
    expected = [2.5, 3.0, 4.5, 1.0] if weighted else [1.0, 2.0, 3.0, 1.0]
    assert counts.dtype == np.float64 and counts.tolist() == expected
