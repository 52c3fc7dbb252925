"""The combined risk's contributions added to the active patterns only (those whose unknown set can
weigh something, :mod:`sdckit.risk._combined_active`): bitwise the results of adding them to every
pattern, the kernel bitwise :func:`accumulate_known` on the active elements, and the definition as an
independent oracle."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.test_combined_handover import definition_risk, frame_and_schema

import sdckit.risk._combined_active as active_module
import sdckit.risk.combined as combined
from sdckit import _kernels_counting as kernels
from sdckit.risk._combined_active import _ActivePatterns
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Schema, Table

ACCUMULATE_KNOWN_AT = kernels.accumulate_known_at
EXTEND_AT = kernels.KeyExtender.extend_at


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 200), st.booleans(), st.integers(0, 2**32 - 1))
def test_accumulate_known_at_is_accumulate_known_on_the_active_elements_bitwise(n, add, seed):
    rng = np.random.default_rng(seed)
    groups = max(1, n // 3)
    keys = rng.integers(-1, groups, n).astype(np.int32)
    group_inverse = 1.0 / rng.integers(1, 9, groups)
    alone = 1.0 / rng.uniform(0.5, 4.0, n)
    total, parent_known, consequence = rng.uniform(0, 3, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    risk, best = rng.uniform(0, 1, n), rng.uniform(0, 2, n)
    top, known = rng.integers(0, 5, n).astype(np.int32), np.full(n, np.nan)
    active = np.flatnonzero(rng.random(n) < 0.4).astype(np.int32)
    compact = [values[active].copy() for values in (risk, best, top, total, parent_known, consequence, known)]
    kernels.accumulate_known(
        risk, best, top, np.int32(9), 0.37, total, parent_known, consequence, add, known, keys,
        group_inverse, alone,
    )  # fmt: skip
    c_risk, c_best, c_top, c_total, c_parent, c_consequence, c_known = compact
    kernels.accumulate_known_at(
        c_risk, c_best, c_top, np.int32(9), 0.37, c_total, c_parent, c_consequence, add, c_known, active,
        keys, group_inverse, alone[active],
    )  # fmt: skip
    assert c_risk.tobytes() == risk[active].tobytes() and c_best.tobytes() == best[active].tobytes()
    assert np.array_equal(c_top, top[active])
    assert c_known.tobytes() == known[active].tobytes()  # written when add, else untouched (nan)


def test_active_patterns_are_those_some_weight_can_reach():
    zero = np.zeros(6)
    total = np.array([0.0, 1.0, 0.0, -0.0, 0.0, 0.0])
    flag = np.array([0.0, 1.0, 0.5, 0.0, 0.0, -0.0])
    found = _ActivePatterns.of(total, {"a": zero, "f": flag}, zero)
    # Pattern 2 weighs through f (C = 0 would not make it inactive: known weights are subtracted);
    # pattern 3's C is -0, whose first contribution would be -0, not +0.
    assert found is not None and found.active.tolist() == [1, 2, 3]
    assert found.active.dtype == np.int32
    assert _ActivePatterns.of(np.ones(6), {"a": zero}, zero) is None  # every pattern: no compaction
    assert _ActivePatterns.of(np.zeros(0), {}, zero) is None


def weighted_schema(frame: pl.DataFrame) -> tuple[pl.DataFrame, Schema]:
    """The handover tests' frame with sampling weights (some 0) and a sensitive attribute no known
    set can hold (it weighs into C only)."""
    rng = np.random.default_rng(5)
    n = frame.height
    weights = rng.uniform(0.5, 3.0, n)
    weights[rng.choice(n, n // 20, replace=False)] = 0.0
    frame = frame.with_columns(
        pl.Series("w", weights), pl.Series("s", rng.choice(["Yes", "No"], n, p=[0.05, 0.95]))
    )
    return frame, Schema(
        (
            *frame_and_schema(1, 10, nulls=False)[1],
            Attribute("s", public_probability=0.0, sensitivity=0.7, value_weights={"No": 0}),
        )
    )


def run(monkeypatch, frame, schema, missing, share, weights=None, pipeline=True):
    monkeypatch.setattr(active_module, "ACTIVE_SHARE", share)
    monkeypatch.setattr(combined, "PIPELINE_FROM", 0 if pipeline else 10**12)
    calls: list[int] = []

    def counted(*arguments):
        calls.append(len(arguments[10]))
        return ACCUMULATE_KNOWN_AT(*arguments)

    def leaf(self, *arguments):
        calls.append(-1)
        return EXTEND_AT(self, *arguments)

    monkeypatch.setattr(kernels, "accumulate_known_at", counted)
    monkeypatch.setattr(kernels.KeyExtender, "extend_at", leaf)
    result = combined_risk(Table(frame, schema), alpha=100, epsilon=0.05, missing=missing, weights=weights)
    return result, calls


@pytest.mark.parametrize("missing", ["category", "wildcard"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pipeline", [False, True])
def test_contributions_to_the_active_patterns_only_give_bitwise_the_same_risks(
    monkeypatch, missing, weighted, pipeline
):
    frame, schema = frame_and_schema(4, 3000, nulls=True)
    if weighted:
        frame, schema = weighted_schema(frame)
    weights = "w" if weighted else None
    every, none_called = run(monkeypatch, frame, schema, missing, -1.0, weights, pipeline)
    only, calls = run(monkeypatch, frame, schema, missing, 1.0, weights, pipeline)
    assert not none_called
    # Every known set's contributions were added through the compacted arrays, to fewer patterns:
    # with the active patterns' indices, or from the active keys of a leaf (-1), found as such
    # unless weights or wildcard nulls need every pattern's keys.
    assert len(calls) == only.known_sets.height
    added = {size for size in calls if size >= 0}
    assert len(added) == 1 and 0 < added.pop() < frame.drop("w", strict=False).n_unique()
    assert (-1 in calls) == (not weighted)
    assert only.risk.tobytes() == every.risk.tobytes()
    assert only.top_contribution.tobytes() == every.top_contribution.tobytes()
    assert np.array_equal(only.top_known_set, every.top_known_set)
    assert only.known_sets.equals(every.known_sets)


def test_inactive_records_have_risk_zero_and_the_empty_set_on_top(monkeypatch):
    frame, schema = frame_and_schema(3, 2000, nulls=False)
    result, calls = run(monkeypatch, frame, schema, "category", 1.0)
    assert calls
    np.testing.assert_allclose(result.risk, definition_risk(frame, 100.0, 0.05), rtol=1e-12, atol=1e-12)
    nothing = ((frame["f"] == "No") & (frame["g"] == "No")).to_numpy()
    assert 0 < nothing.sum() < len(nothing)
    assert (result.risk[nothing] == 0).all() and not np.signbit(result.risk[nothing]).any()
    assert (result.top_contribution[nothing] == 0).all() and (result.top_known_set[nothing] == 0).all()
    assert (result.risk[~nothing] > 0).all()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 300),
    st.integers(1, 12),
    st.integers(1, 40),
    st.sampled_from(["unit", "few", "many"]),
    st.integers(0, 2**32 - 1),
)
def test_extend_at_is_extend_at_the_active_elements(n, parents, cardinality, kind, seed):
    rng = np.random.default_rng(seed)
    multiplicity = np.ones(n, dtype=np.int64)
    if kind != "unit":
        heavy = rng.random(n) < (0.05 if kind == "few" else 0.6)
        multiplicity[heavy] = rng.integers(2, 5, int(heavy.sum()))
    parent_keys = rng.integers(-1, parents, n).astype(np.int32)
    parent_sizes = np.bincount(parent_keys[parent_keys >= 0], weights=multiplicity[parent_keys >= 0],
                               minlength=parents).astype(np.int64)  # fmt: skip
    codes = rng.integers(-1, cardinality, n).astype(np.int32)
    active = np.flatnonzero(rng.random(n) < 0.3).astype(np.int32)
    counted: list[int] = []
    kernel = kernels._extend_counted_at

    def spy(*arguments):
        counted.append(1)
        return kernel(*arguments)

    for capacity in (None, 0):  # a table of counts, then too small a one: the general extension
        extender = kernels.KeyExtender(n)
        if capacity is not None:
            extender.direct_capacity = capacity
        keys, sizes, alone = extender.extend(
            parent_keys, parent_sizes, codes, cardinality, True, multiplicity, any_order=True
        )
        kernels._extend_counted_at = spy
        try:
            at_keys, at_sizes, at_alone = extender.extend_at(
                parent_keys, parent_sizes, codes, cardinality, True, multiplicity, active
            )
        finally:
            kernels._extend_counted_at = kernel
        assert at_keys.dtype == np.int32 and np.array_equal(at_keys, keys[active])
        assert np.array_equal(at_sizes, sizes) and at_alone == alone
    # The table of counts serves the first extension whenever it serves extend (4 pairs a record).
    assert counted == ([1] if (cardinality + 1) * parents <= 4 * n else [])
