"""The combined risk's known-set loop when leaf sets are handed to the worker thread (their keys found
there, not in the main thread), and the early end of ``combine_codes`` once every record is apart:
bitwise the results of the loop without them, and the paper's definition as an independent oracle."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

import sdckit.risk.combined as combined
from sdckit import frequency
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Schema, Table

EXTEND_AND_ADD = combined._Handover.extend_and_add
PROBABILITIES = {"a": 0.9, "b": 0.7, "c": 0.5, "f": 0.6, "g": 0.4}


def frame_and_schema(seed: int, n: int, nulls: bool) -> tuple[pl.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    a = pl.Series(rng.integers(0, 6, n))
    if nulls:
        a = a.scatter(rng.choice(n, n // 10, replace=False), None)
    frame = pl.DataFrame(
        {
            "a": a,
            "b": rng.integers(0, 25, n),
            "c": rng.integers(0, 3, n),
            "f": rng.choice(["Yes", "No"], n, p=[0.3, 0.7]),
            "g": rng.choice(["Yes", "No"], n, p=[0.1, 0.9]),
        }
    )
    # Duplicated records: patterns of several records (multiplicity above 1).
    frame = pl.concat([frame, frame.head(n // 5)])
    schema = Schema(
        (
            Attribute("a", public_probability=PROBABILITIES["a"]),
            Attribute("b", public_probability=PROBABILITIES["b"]),
            Attribute("c", public_probability=PROBABILITIES["c"]),
            Attribute("f", public_probability=PROBABILITIES["f"], sensitivity=1.0, value_weights={"No": 0}),
            Attribute("g", public_probability=PROBABILITIES["g"], sensitivity=0.5, value_weights={"No": 0}),
        )
    )
    return frame, schema


def definition_risk(frame: pl.DataFrame, alpha: float, epsilon: float) -> np.ndarray:
    """Oracle: D(r) = sum over known sets KS with PK(KS) > epsilon of PK(KS) * alpha * C_UKS(r) /
    count(r(KS)), missing values as a category, straight from the definition with polars counts."""
    names = list(PROBABILITIES)
    weight = {name: (frame[name] == "Yes").cast(pl.Float64).to_numpy() * (1.0 if name == "f" else 0.5)
              for name in ("f", "g")}  # fmt: skip
    risk = np.zeros(frame.height)
    for size in range(len(names) + 1):
        for known in itertools.combinations(names, size):
            pk = float(np.prod([PROBABILITIES[name] for name in known]))
            if pk <= epsilon:
                continue
            count = (
                frame.select(pl.len().over(list(known)).alias("n")).get_column("n").to_numpy()
                if known
                else np.full(frame.height, frame.height)
            )
            unknown = sum((weight[name] for name in ("f", "g") if name not in known), np.zeros(frame.height))
            risk += pk * alpha * unknown / count
    return risk


def run(monkeypatch, frame, schema, missing, handover_below):
    monkeypatch.setattr(combined, "PIPELINE_FROM", 0)
    monkeypatch.setattr(combined, "HANDOVER_BELOW", handover_below)
    handed: list[int] = []

    def counted(self, extension, index, *arguments):
        handed.append(index)
        return EXTEND_AND_ADD(self, extension, index, *arguments)

    monkeypatch.setattr(combined._Handover, "extend_and_add", counted)
    result = combined_risk(Table(frame, schema), alpha=100, epsilon=0.05, missing=missing)
    return result, handed


@pytest.mark.parametrize("missing", ["category", "wildcard"])
@pytest.mark.parametrize("seed", [1, 2])
def test_leaves_handed_to_the_worker_give_bitwise_the_same_risks(monkeypatch, missing, seed):
    frame, schema = frame_and_schema(seed, 3000, nulls=True)
    inline, none_handed = run(monkeypatch, frame, schema, missing, handover_below=0)
    handed, leaves = run(monkeypatch, frame, schema, missing, handover_below=10**9)
    assert not none_handed
    # Every leaf whose attributes have no null under the wildcard treatment is handed over.
    sets = [tuple(names) for names in handed.known_sets.get_column("attributes").to_list()]
    parents = {known[:-1] for known in sets}
    expected = [
        index
        for index, known in enumerate(sets)
        if known and known not in parents and not (missing == "wildcard" and "a" in known)
    ]
    assert leaves == expected
    assert len(expected) >= 8
    assert handed.risk.tobytes() == inline.risk.tobytes()
    assert handed.top_contribution.tobytes() == inline.top_contribution.tobytes()
    assert np.array_equal(handed.top_known_set, inline.top_known_set)
    assert handed.known_sets.equals(inline.known_sets)


def test_handed_leaves_match_the_definition(monkeypatch):
    frame, schema = frame_and_schema(3, 2000, nulls=False)
    result, leaves = run(monkeypatch, frame, schema, "category", handover_below=10**9)
    assert leaves
    np.testing.assert_allclose(result.risk, definition_risk(frame, 100.0, 0.05), rtol=1e-12, atol=1e-12)
    # The combinations of each known set: its distinct value combinations, counted by polars.
    for row in result.known_sets.iter_rows(named=True):
        expected = frame.select(row["attributes"]).n_unique() if row["attributes"] else 1
        assert row["combinations"] == expected, row["name"]


def first_appearance(columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Oracle of combine_codes: np.unique over the rows, renumbered in order of first appearance."""
    rows = np.stack(columns, axis=1)
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    keys = rank[inverse.ravel()]
    return keys, np.bincount(keys, minlength=len(order))


@pytest.mark.parametrize("unique_early", [True, False])
def test_combine_codes_stops_once_every_record_is_apart(monkeypatch, unique_early):
    rng = np.random.default_rng(7)
    n = 5000
    # 40 columns of 1000 values: 62 bits hold six of them, so the key is made dense before the 7th
    # column, then every fifth (after 2,500 groups), and at the end: 8 passes; the first six
    # columns already set every record apart (or, with every record twice, no prefix ever does).
    columns = [rng.integers(-1, 1000, n).astype(np.int32) for _ in range(40)]
    if not unique_early:
        for column in columns:
            column[n // 2 :] = column[: n - n // 2]
    calls: list[int] = []
    densify = frequency._kernels_counting.densify_hashed

    def counted(values):
        calls.append(len(values))
        return densify(values)

    monkeypatch.setattr(frequency._kernels_counting, "densify_hashed", counted)
    keys, sizes = frequency.combine_codes(columns, [1000] * 40, n)
    expected_keys, expected_sizes = first_appearance(columns)
    assert keys.dtype == np.int32 and sizes.dtype == np.int64
    assert np.array_equal(keys, expected_keys)
    assert np.array_equal(sizes, expected_sizes)
    assert len(calls) == (1 if unique_early else 8)
