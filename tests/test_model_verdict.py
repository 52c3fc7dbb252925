"""A privacy model's verdict on a whole table (``ModelResult.holds``), and the same verdict from the
parts of a table evaluated apart (``condensed``, ``of_parts``): what a run over partitions asks."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.models import ClassStatistics, KAnonymity, ModelResult, SensitiveCounts, TCloseness


def result(passes, achieved, higher_is_better=True, model="3-anonymity"):
    return ModelResult(
        model=model,
        passes=np.array(passes, dtype=bool),
        achieved=np.array(achieved, dtype=np.float64),
        higher_is_better=higher_is_better,
    )


def test_a_model_holds_when_every_class_passes():
    # k = 3 on classes of 5, 3 and 2 records: the class of 2 fails.
    sizes = ClassStatistics(sizes=np.array([5.0, 3.0, 2.0]), sensitive={})
    assert not KAnonymity(3).evaluate(sizes).holds
    assert KAnonymity(2).evaluate(sizes).holds
    assert result([], []).holds  # no class fails


def test_condensed_keeps_the_worst_class_and_the_first_failing_one():
    # k=3: sizes 4, 2, 7, 1 -> classes 1 and 3 fail; the worst is class 3 (1 record), the first failing 1.
    whole = result([True, False, True, False], [4, 2, 7, 1])
    condensed = whole.condensed()
    assert condensed.passes.tolist() == [False, False]
    assert condensed.achieved.tolist() == [2.0, 1.0]
    assert not condensed.holds and condensed.worst() == 1.0
    # All pass: the worst class alone.
    passing = result([True, True, True], [6, 3, 9]).condensed()
    assert passing.passes.tolist() == [True] and passing.achieved.tolist() == [3.0]
    # t-closeness: the worst is the largest distance; here it is also the only failing class.
    closeness = result([True, False, True], [0.1, 0.4, 0.2], higher_is_better=False, model="0.3-closeness")
    assert closeness.condensed().achieved.tolist() == [0.4]
    assert closeness.condensed().model == "0.3-closeness"


def test_of_parts_joins_the_classes_of_disjoint_parts():
    first = result([True, True], [5, 3])
    second = result([True, False], [4, 2])
    joined = ModelResult.of_parts([first.condensed(), second.condensed()])
    assert not joined.holds and joined.worst() == 2.0
    assert ModelResult.of_parts([first, result([True], [8])]).holds
    with pytest.raises(ValueError, match="at least one part"):
        ModelResult.of_parts([])
    with pytest.raises(ValueError, match="one model"):
        ModelResult.of_parts([first, result([True], [1], model="2-anonymity")])


def test_the_parts_of_a_closeness_check_agree_with_the_whole():
    # 0.2-closeness of a binary attribute, overall (1/2, 1/2): classes (3, 1) and (1, 1) and (0, 2).
    counts = SensitiveCounts(
        attribute="s",
        classes=np.array([0, 0, 1, 1, 2]),
        values=np.array([0, 1, 0, 1, 1], dtype=np.int32),
        counts=np.array([3.0, 1.0, 1.0, 1.0, 2.0]),
        n_values=2,
        overall=np.array([0.5, 0.5]),
        categories=pl.Series(["a", "b"]),
    )
    statistics = ClassStatistics(sizes=np.array([4.0, 2.0, 2.0]), sensitive={"s": counts})
    whole = TCloseness("s", 0.2).evaluate(statistics)
    # Distances (equal ground distance: half the L1 distance): |3/4 - 1/2| = 0.25, 0, |0 - 1/2| = 0.5.
    assert whole.achieved.tolist() == pytest.approx([0.25, 0.0, 0.5])
    parts = [replace_classes(whole, [0]), replace_classes(whole, [1, 2])]
    joined = ModelResult.of_parts([part.condensed() for part in parts])
    assert joined.holds is whole.holds is False
    assert joined.worst() == whole.worst() == pytest.approx(0.5)


def replace_classes(whole: ModelResult, classes: list[int]) -> ModelResult:
    return ModelResult(whole.model, whole.passes[classes], whole.achieved[classes], whole.higher_is_better)


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 50)), min_size=1, max_size=30),
    st.lists(st.integers(1, 29), max_size=4),
    st.booleans(),
)
def test_condensed_parts_give_the_whole_verdict(classes, cuts, higher_is_better):
    """Split the classes anywhere: the joined condensed parts hold iff the whole does, with its worst."""
    whole = result([p for p, _ in classes], [a for _, a in classes], higher_is_better)
    bounds = sorted({0, len(classes), *(c for c in cuts if c < len(classes))})
    parts = [replace_classes(whole, list(range(lo, hi))) for lo, hi in zip(bounds, bounds[1:], strict=False)]
    joined = ModelResult.of_parts([part.condensed() for part in parts])
    assert joined.holds == all(p for p, _ in classes)
    expected = max(a for _, a in classes) if not higher_is_better else min(a for _, a in classes)
    assert joined.worst() == expected
    assert len(joined.passes) <= 2 * len(parts)
    assert not math.isnan(joined.worst())
