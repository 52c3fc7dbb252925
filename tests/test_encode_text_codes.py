"""The codes of text columns (:func:`sdckit.frequency.encode`): the rank of each value among the sorted
distinct values, -1 for a null, whatever the path (an Enum cast, or one comparison for two values),
against a plain Python oracle."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.frequency import encode

VALUES = st.sampled_from(["Yes", "No", "yes", "", "é", "No ", "10", "9", None])


def oracle(values: list[str | None]) -> tuple[np.ndarray, list[str]]:
    categories = sorted({value for value in values if value is not None})
    rank = {value: code for code, value in enumerate(categories)}
    return np.array(
        [rank[value] if value is not None else -1 for value in values], dtype=np.int32
    ), categories


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.lists(VALUES, min_size=1, max_size=30), min_size=1, max_size=4), st.booleans())
def test_text_codes_are_ranks(columns, categorical):
    n = min(len(column) for column in columns)
    frame = pl.DataFrame(
        {f"c{j}": column[:n] for j, column in enumerate(columns)},
        schema={f"c{j}": pl.String for j in range(len(columns))},
    )
    if categorical:
        frame = frame.with_columns(pl.all().cast(pl.Categorical))
    encoding = encode(frame)
    for j in range(len(columns)):
        codes, categories = oracle(columns[j][:n])
        assert encoding.codes[j].dtype == np.int32
        assert np.array_equal(encoding.codes[j], codes)
        assert encoding.categories[j].to_list() == categories
        assert encoding.cardinalities[j] == len(categories)
        assert encoding.has_missing[j] == (None in columns[j][:n])


def test_two_values_hand_computed():
    frame = pl.DataFrame({"flag": ["Yes", "No", None, "Yes", "No"], "one": ["a", None, "a", "a", None]})
    encoding = encode(frame)
    # Sorted: "No" < "Yes"; a single value is code 0.
    assert encoding.codes[0].tolist() == [1, 0, -1, 1, 0]
    assert encoding.codes[1].tolist() == [0, -1, 0, 0, -1]
    assert encoding.categories[0].to_list() == ["No", "Yes"]
