"""The combined risk's known-set kernels: the partitioned grouping and the fused accumulation, against
plain numpy oracles and against the kernels they stand in for (bitwise)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import _kernels_counting as kernels
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Schema, Table


def numpy_extension(parent_keys, parent_sizes, codes, multiplicity, radix):
    """Oracle: the tracked records (parent key >= 0 in a parent group of two or more records), their
    groups by (parent key, code) numbered by np.unique, and the records per group."""
    tracked = (parent_keys >= 0) & (parent_sizes[np.maximum(parent_keys, 0)] >= 2)
    pairs = parent_keys[tracked].astype(np.int64) * radix + codes[tracked] + 1
    values, inverse = np.unique(pairs, return_inverse=True)
    sizes = np.bincount(inverse, weights=multiplicity[tracked], minlength=len(values)).astype(np.int64)
    return tracked, inverse, sizes


def assert_same_groups(keys, sizes, alone, parent_keys, parent_sizes, codes, multiplicity, radix):
    tracked, inverse, expected_sizes = numpy_extension(parent_keys, parent_sizes, codes, multiplicity, radix)
    assert np.array_equal(keys >= 0, tracked)
    assert alone == int((~tracked).sum())
    assert len(sizes) == len(expected_sizes)
    # The same partition of the tracked records: the map from the oracle's group to ours is one to one.
    ours = keys[tracked]
    mapping = np.full(len(expected_sizes), -1, dtype=np.int64)
    mapping[inverse] = ours
    assert np.array_equal(mapping[inverse], ours)
    assert len(np.unique(mapping)) == len(mapping)
    assert np.array_equal(sizes[mapping], expected_sizes)


def counted(kernel, calls):
    """``kernel``, noting each call in ``calls``."""

    def call(*arguments):
        calls.append(1)
        return kernel(*arguments)

    return call


def recording(into):
    """A progress callback that notes its calls in ``into``."""
    return lambda done, total: into.append((done, total))


@st.composite
def extensions(draw):
    n = draw(st.integers(1, 300))
    groups = draw(st.integers(1, 40))
    cardinality = draw(st.integers(1, 50))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    parent_keys = rng.integers(-1, groups, n).astype(np.int32)
    multiplicity = rng.integers(1, 4 if draw(st.booleans()) else 2, n).astype(np.int64)
    parent_sizes = np.bincount(
        parent_keys[parent_keys >= 0], weights=multiplicity[parent_keys >= 0], minlength=groups
    )
    parent_sizes = parent_sizes.astype(np.int64)
    codes = rng.integers(-1, cardinality, n).astype(np.int32)
    shift = draw(st.integers(1, 12))
    return parent_keys, parent_sizes, codes, multiplicity, cardinality + 1, shift


@settings(max_examples=150, deadline=None)
@given(extensions())
def test_partitioned_grouping_equals_numpy_oracle(case):
    parent_keys, parent_sizes, codes, multiplicity, radix, shift = case
    n = len(parent_keys)
    upper = len(parent_sizes) * radix
    counts = np.full((upper >> shift) + 2, 7, dtype=np.int64)  # garbage: the kernel clears it
    table = np.full(1 << shift, -1, dtype=np.int32)
    out, sizes, used = np.empty(n, np.int32), np.empty(n + 1, np.int64), np.empty(n + 1, np.int64)
    unit = bool((multiplicity == 1).all())
    groups, alone = kernels._extend_partitioned(
        parent_keys, parent_sizes, codes, multiplicity, unit, np.int64(radix), np.int64(shift), counts,
        np.empty(n, np.int64), table, used, out, sizes,
    )  # fmt: skip
    assert_same_groups(out, sizes[:groups], alone, parent_keys, parent_sizes, codes, multiplicity, radix)
    assert (table == -1).all()  # left empty for the next call
    # Within a partition, groups are numbered in record order: the first record of group g comes
    # before that of group g + 1 when both values fall in the same partition.
    tracked = out >= 0
    first = np.full(groups, n, dtype=np.int64)
    np.minimum.at(first, out[tracked], np.flatnonzero(tracked))
    value = parent_keys[first].astype(np.int64) * radix + codes[first] + 1
    same_part = (value[1:] >> shift) == (value[:-1] >> shift)
    assert (first[1:][same_part] > first[:-1][same_part]).all()


def test_partitioned_grouping_by_hand():
    # Parent groups 0 (3 records), 1 (2), 2 (1: alone); radix 3; partitions of 2 values (shift 1).
    parent_keys = np.array([0, 1, 0, 2, 1, 0, -1], dtype=np.int32)
    parent_sizes = np.array([3, 2, 1], dtype=np.int64)
    codes = np.array([1, 1, 1, 0, -1, 0, 1], dtype=np.int32)
    ones = np.ones(7, dtype=np.int64)
    # pairs: r0 0*3+2=2, r1 1*3+2=5, r2 2, r4 1*3+0=3, r5 0*3+1=1 -> partitions 1, 2, 1, 1, 0
    out, sizes, used = np.empty(7, np.int32), np.empty(8, np.int64), np.empty(8, np.int64)
    groups, alone = kernels._extend_partitioned(
        parent_keys, parent_sizes, codes, ones, True, np.int64(3), np.int64(1), np.empty(6, np.int64),
        np.empty(7, np.int64), np.full(2, -1, np.int32), used, out, sizes,
    )  # fmt: skip
    # partition 0: value 1 (r5) -> group 0; partition 1: values 2 (r0, r2) -> 1, 3 (r4) -> 2;
    # partition 2: value 5 (r1) -> 3.
    assert (groups, alone) == (4, 2)
    assert out.tolist() == [1, 3, 1, -1, 2, 0, -1]
    assert sizes[:4].tolist() == [1, 2, 1, 1]


@pytest.mark.parametrize("seed", range(3))
def test_extender_any_order_takes_the_partitioned_path(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n, groups, cardinality = 5000, 700, 900
    parent_keys = rng.integers(-1, groups, n).astype(np.int32)
    parent_sizes = np.bincount(parent_keys[parent_keys >= 0], minlength=groups).astype(np.int64)
    codes = rng.integers(-1, cardinality, n).astype(np.int32)
    ones = np.ones(n, dtype=np.int64)
    extender = kernels.KeyExtender(n)
    assert groups * (cardinality + 1) > extender.direct_capacity  # not the direct table
    first_order = extender.extend(parent_keys, parent_sizes, codes, cardinality, True, ones)
    calls: list[int] = []
    monkeypatch.setattr(kernels, "_extend_partitioned", counted(kernels._extend_partitioned, calls))
    monkeypatch.setattr(kernels, "PARTITIONED_FROM", 64)
    keys, sizes, alone = extender.extend(
        parent_keys, parent_sizes, codes, cardinality, True, ones, any_order=True
    )
    assert calls == [1]
    assert_same_groups(keys, sizes, alone, parent_keys, parent_sizes, codes, ones, cardinality + 1)
    assert alone == first_order[2] and sorted(sizes) == sorted(first_order[1])
    # Without any_order, the numbering stays in order of first appearance (other callers' keys).
    again = extender.extend(parent_keys, parent_sizes, codes, cardinality, True, ones)
    assert calls == [1] and np.array_equal(again[0], first_order[0])


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 200), st.booleans(), st.integers(0, 2**32 - 1))
def test_accumulate_known_is_accumulate_after_the_addition_bitwise(n, add, seed):
    rng = np.random.default_rng(seed)
    groups = max(1, n // 3)
    keys = rng.integers(-1, groups, n).astype(np.int32)
    group_inverse = 1.0 / rng.integers(1, 9, groups)
    alone = 1.0 / rng.uniform(0.5, 4.0, n)
    total, parent_known, consequence = rng.uniform(0, 3, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    start_risk, start_best = rng.uniform(0, 1, n), rng.uniform(0, 2, n)
    start_top = rng.integers(0, 5, n).astype(np.int32)
    known_expected = parent_known + consequence if add else parent_known
    risk, best, top = start_risk.copy(), start_best.copy(), start_top.copy()
    kernels.accumulate(risk, best, top, np.int32(9), 0.37, total, known_expected, keys, group_inverse, alone)
    risk2, best2, top2, known = start_risk.copy(), start_best.copy(), start_top.copy(), np.full(n, np.nan)
    kernels.accumulate_known(
        risk2, best2, top2, np.int32(9), 0.37, total, parent_known, consequence, add, known, keys,
        group_inverse, alone,
    )  # fmt: skip
    assert risk2.tobytes() == risk.tobytes() and best2.tobytes() == best.tobytes()
    assert np.array_equal(top2, top)
    if add:
        assert known.tobytes() == known_expected.tobytes()
    else:
        assert np.isnan(known).all()  # untouched


def test_combined_risk_bitwise_equal_with_partitioned_groups(monkeypatch):
    rng = np.random.default_rng(11)
    n = 3000
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 60, n),
            "b": rng.integers(0, 80, n),
            "c": pl.Series(rng.integers(0, 50, n)).scatter(rng.choice(n, 300, replace=False), None),
            "f": rng.choice(["Yes", "No"], n, p=[0.2, 0.8]),
            "g": rng.choice(["Yes", "No"], n, p=[0.5, 0.5]),
        }
    )
    schema = Schema(
        (
            Attribute("a", public_probability=0.9),
            Attribute("b", public_probability=0.6),
            Attribute("c", public_probability=0.5),
            Attribute("f", public_probability=0.4, sensitivity=1.0, value_weights={"No": 0}),
            Attribute("g", public_probability=0.3, sensitivity=0.5, value_weights={"No": 0}),
        )
    )
    weights = rng.uniform(0.5, 3.0, n)

    def run(weighted):
        return combined_risk(
            Table(frame, schema),
            alpha=100,
            epsilon=0,
            missing="category",
            weights=weights if weighted else None,
        )

    for weighted in (False, True):
        monkeypatch.setattr(kernels, "PARTITIONED_FROM", 10**12)
        before = run(weighted)
        calls: list[int] = []
        monkeypatch.setattr(kernels, "_extend_partitioned", counted(kernels._extend_partitioned, calls))
        monkeypatch.setattr(kernels, "PARTITIONED_FROM", 16)
        monkeypatch.setattr(kernels, "PARTITION_BITS", 10)
        after = run(weighted)
        monkeypatch.undo()
        assert calls  # the partitioned grouping ran
        assert after.risk.tobytes() == before.risk.tobytes()
        assert after.top_contribution.tobytes() == before.top_contribution.tobytes()
        assert np.array_equal(after.top_known_set, before.top_known_set)
        assert after.known_sets.equals(before.known_sets)


@pytest.mark.parametrize("missing", ["category", "wildcard"])
def test_contributions_added_in_a_worker_thread_are_bitwise_the_same(monkeypatch, missing):
    import sdckit.risk.combined as combined

    rng = np.random.default_rng(5)
    n = 2000
    frame = pl.DataFrame(
        {
            "a": pl.Series(rng.integers(0, 40, n)).scatter(rng.choice(n, 200, replace=False), None),
            "b": rng.integers(0, 30, n),
            "f": rng.choice(["Yes", "No"], n, p=[0.3, 0.7]),
        }
    )
    schema = Schema(
        (
            Attribute("a", public_probability=0.9),
            Attribute("b", public_probability=0.6),
            Attribute("f", public_probability=0.4, sensitivity=1.0, value_weights={"No": 0}),
        )
    )
    runs = []
    for pipeline_from in (10**12, 0):
        monkeypatch.setattr(combined, "PIPELINE_FROM", pipeline_from)
        monkeypatch.setattr(combined, "PENDING", 2)
        progress: list[tuple[int, int]] = []
        result = combined_risk(
            Table(frame, schema),
            alpha=100,
            epsilon=0,
            missing=missing,
            progress=recording(progress),
        )
        runs.append((result, progress))
    (inline, inline_progress), (threaded, threaded_progress) = runs
    assert threaded.risk.tobytes() == inline.risk.tobytes()
    assert threaded.top_contribution.tobytes() == inline.top_contribution.tobytes()
    assert np.array_equal(threaded.top_known_set, inline.top_known_set)
    assert threaded.known_sets.equals(inline.known_sets)
    assert threaded_progress == inline_progress == [(i, 8) for i in range(1, 9)]


def test_an_error_in_the_worker_thread_is_raised(monkeypatch):
    import sdckit.risk.combined as combined

    def failing(*arguments):
        raise RuntimeError("kernel failed")

    contributions = combined._Contributions(True, None, 3)
    monkeypatch.setattr(contributions, "_accumulate", failing)
    with pytest.raises(RuntimeError, match="kernel failed"), contributions:
        for _ in range(3):
            contributions.add()
