"""The counting kernel against brute-force pairwise matching."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracles import brute_frequencies
from sdckit.errors import ConfigError
from sdckit.frequency import combine_codes, encode, extend_keys, frequencies, group_keys, group_records


def frame_and_rows(columns: dict[str, list]):
    frame = pl.DataFrame(columns, strict=False)
    return frame, frame.to_dicts()


def test_category_counts_by_hand():
    frame = pl.DataFrame({"a": ["x", "x", "y", None, None], "b": [1, 1, 1, 2, 2]})
    assert frequencies(frame, ["a"]).tolist() == [2, 2, 1, 2, 2]
    assert frequencies(frame, ["a", "b"]).tolist() == [2, 2, 1, 2, 2]
    assert frequencies(frame, []).tolist() == [5] * 5


def test_wildcard_counts_by_hand():
    # sdcMicro convention: a missing value matches every value.
    frame = pl.DataFrame({"a": ["x", "x", "y", None], "b": [1, None, 2, 2]})
    # r0 (x,1) matches r0, r1 (x,*), r3 (*,... b=2 no) -> 2
    # r1 (x,*) matches r0, r1, r3 (*,2) -> 3
    # r2 (y,2) matches r2, r3 -> 2
    # r3 (*,2) matches r1, r2, r3 -> 3
    assert frequencies(frame, ["a", "b"], missing="wildcard").tolist() == [2, 3, 2, 3]
    assert frequencies(frame, ["a", "b"], missing="category").tolist() == [1, 1, 1, 1]


def test_weighted_counts():
    frame = pl.DataFrame({"a": ["x", "x", "y", None]})
    weights = np.array([10.0, 20.0, 5.0, 2.5])
    assert frequencies(frame, ["a"], weights=weights).tolist() == [30.0, 30.0, 5.0, 2.5]
    assert frequencies(frame, ["a"], weights=weights, missing="wildcard").tolist() == [32.5, 32.5, 7.5, 37.5]


@pytest.mark.parametrize("cardinality", [3, 10**9])
def test_extend_keys_on_direct_and_hashed_paths(cardinality):
    parent = np.array([0, 1, 0, 2, 1, 0], dtype=np.int64)
    codes = np.array([2, 2, 2, -1, 2, 0], dtype=np.int64)
    keys, sizes = extend_keys(parent, np.array([3, 2, 1]), codes, cardinality)
    assert keys.tolist() == [0, 1, 0, 2, 1, 3]
    assert sizes.tolist() == [2, 2, 1, 1]


def test_group_keys_of_empty_set_is_one_group():
    encoding = encode(pl.DataFrame({"a": [1, 2, 3]}))
    keys, groups = group_keys(encoding, [])
    assert keys.tolist() == [0, 0, 0] and groups == 1


def test_bad_parameters():
    frame = pl.DataFrame({"a": [1, 2]})
    with pytest.raises(ConfigError, match="missing must be one of"):
        frequencies(frame, ["a"], missing="ignore")
    with pytest.raises(ConfigError, match="weights must hold one number per record"):
        frequencies(frame, ["a"], weights=np.ones(3))
    with pytest.raises(ConfigError, match="non-negative"):
        frequencies(frame, ["a"], weights=np.array([1.0, -1.0]))


values = st.one_of(st.none(), st.integers(0, 3))


@st.composite
def small_tables(draw):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 4))
    columns = {f"c{j}": draw(st.lists(values, min_size=n, max_size=n)) for j in range(m)}
    weights = draw(st.lists(st.floats(0.5, 5.0), min_size=n, max_size=n))
    return columns, weights


@settings(max_examples=80)
@given(small_tables(), st.sampled_from(["category", "wildcard"]), st.booleans())
def test_frequencies_equal_pairwise_matching(table, missing, weighted):
    columns, weights = table
    frame, rows = frame_and_rows(columns)
    weights = np.array(weights) if weighted else None
    names = list(columns)
    for size in range(len(names) + 1):
        subset = names[:size]
        got = frequencies(frame, subset, missing=missing, weights=weights)
        expected = brute_frequencies(rows, subset, missing, None if weights is None else weights.tolist())
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_wildcard_on_many_null_patterns_matches_brute_force():
    rng = np.random.default_rng(3)
    n, m = 300, 6
    columns = {}
    for j in range(m):
        column = rng.integers(0, 3, n).astype(object)
        column[rng.random(n) < 0.25] = None
        columns[f"c{j}"] = column.tolist()
    frame, rows = frame_and_rows(columns)
    got = frequencies(frame, list(columns), missing="wildcard")
    expected = brute_frequencies(rows, list(columns), "wildcard")
    np.testing.assert_array_equal(got, expected)


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Two labelings define the same groups iff each label of one maps to exactly one of the other."""
    pairs = np.unique(np.stack([a, b], axis=1), axis=0)
    return len(pairs) == len(np.unique(a)) == len(np.unique(b))


@settings(max_examples=60)
@given(small_tables())
def test_group_records_equals_encoded_grouping(table):
    columns, _ = table
    frame = pl.DataFrame(columns, strict=False)
    names = list(columns)
    grouping = group_records(frame, names)
    slow, slow_groups = group_keys(encode(frame, names), names)
    assert grouping.n_groups == slow_groups
    assert same_partition(grouping.keys, slow)
    np.testing.assert_array_equal(grouping.sizes, np.bincount(grouping.keys))
    # Keys are numbered by first appearance and first[g] is group g's first record.
    np.testing.assert_array_equal(grouping.keys[grouping.first], np.arange(grouping.n_groups))
    seen = np.maximum.accumulate(np.concatenate([[-1], grouping.keys[:-1]]))
    assert np.all(grouping.keys <= seen + 1)


@settings(max_examples=60)
@given(
    small_tables(),
    st.lists(st.sampled_from(["int", "text", "enum", "categorical", "bool", "wide"]), min_size=4, max_size=4),
)
def test_group_records_on_every_column_type(table, types):
    """Exact tokens (Enum, Categorical, integers, booleans) and hashed columns group alike."""
    columns, _ = table
    frame = pl.DataFrame(columns, strict=False)
    converted = []
    for name, kind in zip(frame.columns, types, strict=False):
        column = pl.col(name)
        if kind == "text":
            column = column.cast(pl.String)
        elif kind == "enum":
            column = column.cast(pl.String).cast(pl.Enum(["0", "1", "2", "3"]))
        elif kind == "categorical":
            column = column.cast(pl.String).cast(pl.Categorical)
        elif kind == "bool":
            column = column >= 2
        elif kind == "wide":  # a span too wide for exact integer tokens: hashed instead
            column = column.cast(pl.Int64) * (2**61) - 2**62
        converted.append(column.alias(name))
    frame = frame.with_columns(converted)
    names = list(frame.columns)
    grouping = group_records(frame, names)
    slow, slow_groups = group_keys(encode(frame.select(pl.all().cast(pl.String)), names), names)
    assert grouping.n_groups == slow_groups
    assert same_partition(grouping.keys, slow)
    np.testing.assert_array_equal(grouping.sizes, np.bincount(grouping.keys))


def test_group_records_falls_back_when_hashes_collide(monkeypatch):
    from sdckit import _kernels_counting

    # Every row hashing alike merges different rows: the exactness check must catch it.
    monkeypatch.setattr(_kernels_counting, "mix_hashes", lambda keys, hashes: None)
    frame = pl.DataFrame({"a": ["x", "y", "x", None], "b": [1, 1, 1, 2]})
    grouping = group_records(frame, ["a", "b"])
    keys = grouping.keys
    assert grouping.n_groups == 3
    assert keys[0] == keys[2] and len({keys[0], keys[1], keys[3]}) == 3


@settings(max_examples=80)
@given(
    st.integers(1, 40).flatmap(
        lambda t: st.tuples(
            st.lists(st.integers(0, 30), min_size=t, max_size=t),
            st.lists(st.integers(0, 6), min_size=t, max_size=t),
            st.lists(st.floats(0.5, 3.0), min_size=t, max_size=t),
        )
    )
)
def test_aggregate_pairs_sums_each_class_value_pair_in_order(triples):
    """Both paths of the kernel (a direct table when it is small, counting sorts otherwise) give the
    distinct (class, value) pairs sorted by class then value, with their summed counts."""
    from collections import defaultdict

    from sdckit import _kernels_counting

    classes, values, counts = (np.array(x) for x in triples)
    expected = defaultdict(float)
    for c, v, w in zip(classes.tolist(), values.tolist(), counts.tolist(), strict=True):
        expected[(c, v)] += w
    keys = sorted(expected)
    for n_classes in (int(classes.max()) + 1, 1000):  # small table: direct; large: counting sorts
        got = _kernels_counting.aggregate_pairs(
            classes.astype(np.int64), values.astype(np.int32), counts, n_classes, 7
        )
        assert list(zip(got[0].tolist(), got[1].tolist(), strict=True)) == keys
        np.testing.assert_allclose(got[2], [expected[key] for key in keys])


@settings(max_examples=60)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.lists(
            st.integers(1, 2**40).flatmap(
                lambda cardinality: st.tuples(
                    st.just(cardinality), st.lists(st.integers(-1, 3), min_size=n, max_size=n)
                )
            ),
            min_size=1,
            max_size=6,
        )
    )
)
def test_combine_codes_numbers_groups_as_extend_keys_even_past_62_bits(columns):
    # Cardinalities up to 2**40 make the mixed-radix key overflow 62 bits after two columns, so the
    # key is densified midway; the numbering must still be extend_keys' (first appearance).
    n = len(columns[0][1])
    codes = [
        np.array([min(c, cardinality - 1) for c in values], dtype=np.int32) for cardinality, values in columns
    ]
    cardinalities = [cardinality for cardinality, _ in columns]
    keys, sizes = combine_codes(codes, cardinalities, n)
    expected_keys, expected_sizes = np.zeros(n, dtype=np.int32), np.array([n], dtype=np.int64)
    for column, cardinality in zip(codes, cardinalities, strict=True):
        expected_keys, expected_sizes = extend_keys(
            expected_keys, expected_sizes, column, min(cardinality, 2**31 - 1)
        )
    assert keys.tolist() == expected_keys.tolist()
    assert sizes.tolist() == expected_sizes.tolist()
