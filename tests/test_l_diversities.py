"""Distinct, entropy and recursive l-diversity per record (sdcMicro's ldiversity; issue 37, item 1):
sdcMicro's own test expectations, and a brute-force oracle written from sdcMicro's C++ definitions
(src/Measure_Risk.h) over every record's class, with missing key values as wildcards or categories."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.risk._risk_estimators import l_diversities, l_diversities_of_many

runner = CliRunner()


def test_sdcmicro_test_ldiversity_expectations():
    # sex, occupation (NA in the first three), ethnicity; sensitive 1, 0, 2, 1, 0, 0, 1
    keys = np.array([[0, -1, 0], [1, 0, 0], [0, 1, 1]])
    pattern_of = np.array([0, 0, 0, 1, 1, 2, 2])
    sensitive = np.array([1, 0, 2, 1, 0, 0, 1])
    for wildcard in (False, True):
        distinct, entropy, recursive = l_diversities(keys, pattern_of, [2, 2, 2], sensitive, wildcard)
        assert distinct.tolist() == [3, 3, 3, 2, 2, 2, 2]
        assert np.allclose(entropy, [3, 3, 3, 2, 2, 2, 2])
        assert recursive.tolist() == [3, 3, 3, 2, 2, 2, 2]


def _oracle(keys, values, wildcard, c):
    """Per record: its class (records whose keys match), then sdcMicro's three l-diversities."""
    n = len(keys)
    out = []
    for i in range(n):
        members = [
            j
            for j in range(n)
            if all(
                a == b or (wildcard and (a is None or b is None))
                for a, b in zip(keys[i], keys[j], strict=True)
            )
        ]
        counts = Counter(values[j] for j in members)
        missing = counts.pop(None, 0)
        size = len(members)
        distinct = len(counts) + (1 if missing and counts else 0)
        shares = [r / size for r in counts.values()] + ([missing / size] if missing and counts else [])
        entropy = math.exp(-sum(p * math.log(p) for p in shares))
        ranked = sorted(counts.values(), reverse=True)
        recursive = 1
        for level in range(2, len(ranked) + 1):
            if ranked[0] < c * sum(ranked[level - 1 :]):
                recursive = level
        out.append((distinct, entropy, recursive))
    return out


@settings(max_examples=120, deadline=None, derandomize=True)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1, 2, None]),
            st.sampled_from([0, 1, 2, 3, None]),
        ),
        min_size=1,
        max_size=25,
    ),
    wildcard=st.booleans(),
    c=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
)
def test_equal_to_the_brute_force_oracle(rows, wildcard, c):
    keys = [row[:2] for row in rows]
    values = [row[2] for row in rows]
    patterns = sorted(set(keys), key=lambda key: tuple(-1 if v is None else v for v in key))
    key_patterns = np.array([[-1 if v is None else v for v in key] for key in patterns], dtype=np.int64)
    pattern_of = np.array([patterns.index(key) for key in keys])
    sensitive = np.array([-1 if v is None else v for v in values])
    distinct, entropy, recursive = l_diversities(key_patterns, pattern_of, [2, 3], sensitive, wildcard, c)
    expected = _oracle(keys, values, wildcard, c)
    assert distinct.tolist() == [e[0] for e in expected]
    assert np.allclose(entropy, [e[1] for e in expected], rtol=1e-12)
    assert recursive.tolist() == [e[2] for e in expected]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1, 2, 3, None]),
            st.integers(1, 4),
        ),
        min_size=1,
        max_size=15,
    ),
    wildcard=st.booleans(),
)
def test_rows_standing_for_several_records_count_as_that_many(rows, wildcard):
    """Rows with a multiplicity (the patterns of a run over partitions) give each row the figures of
    the data with every row repeated that many times, judged by the brute-force oracle."""
    keys = [(row[0],) for row in rows]
    values = [row[1] for row in rows]
    repeats = np.array([row[2] for row in rows], dtype=np.int64)
    patterns = sorted(set(keys), key=lambda key: -1 if key[0] is None else key[0])
    key_patterns = np.array([[-1 if key[0] is None else key[0]] for key in patterns], dtype=np.int64)
    pattern_of = np.array([patterns.index(key) for key in keys])
    sensitive = np.array([-1 if v is None else v for v in values])
    distinct, entropy, recursive = l_diversities(
        key_patterns, pattern_of, [2], sensitive, wildcard, 2.0, multiplicity=repeats
    )
    expanded_keys = [key for key, times in zip(keys, repeats, strict=True) for _ in range(times)]
    expanded_values = [value for value, times in zip(values, repeats, strict=True) for _ in range(times)]
    expected = _oracle(expanded_keys, expanded_values, wildcard, 2.0)
    first = np.concatenate([[0], np.cumsum(repeats)[:-1]])
    assert distinct.tolist() == [expected[i][0] for i in first]
    assert np.allclose(entropy, [expected[i][1] for i in first], rtol=1e-12)
    assert recursive.tolist() == [expected[i][2] for i in first]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([0, 1, None]),
            st.sampled_from([0, 1, 2, None]),
            st.sampled_from([0, 1, 2, 3, None]),
            st.sampled_from([0, None]),
            st.sampled_from([0, 1, 2, 3, 4, 5, 6, None]),
        ),
        min_size=1,
        max_size=25,
    ),
    wildcard=st.booleans(),
)
def test_several_attributes_at_once_are_each_the_oracle_of_its_own(rows, wildcard):
    """Several sensitive attributes through one pass (values of different ranges, one never
    present) give each the brute-force oracle's figures of that attribute alone."""
    keys = [row[:2] for row in rows]
    patterns = sorted(set(keys), key=lambda key: tuple(-1 if v is None else v for v in key))
    key_patterns = np.array([[-1 if v is None else v for v in key] for key in patterns], dtype=np.int64)
    pattern_of = np.array([patterns.index(key) for key in keys])
    columns = [[row[j] for row in rows] for j in (2, 3, 4)]
    sensitives = [np.array([-1 if v is None else v for v in column]) for column in columns]
    together = l_diversities_of_many(key_patterns, pattern_of, [2, 3], sensitives, wildcard, 2.0)
    for column, (distinct, entropy, recursive) in zip(columns, together, strict=True):
        expected = _oracle(keys, column, wildcard, 2.0)
        assert distinct.tolist() == [e[0] for e in expected]
        assert np.allclose(entropy, [e[1] for e in expected], rtol=1e-12)
        assert recursive.tolist() == [e[2] for e in expected]


def test_the_command_reports_and_writes_them(tmp_path):
    pl.DataFrame(
        {"age": ["a", "a", "a", "a", "b", "b"], "disease": ["flu", "flu", "flu", "cold", "flu", "cold"]}
    ).write_csv(tmp_path / "d.csv")
    (tmp_path / "c.yaml").write_text(
        "attributes:\n  age: {role: quasi-identifier}\n  disease: {role: sensitive}\n"
    )
    result = runner.invoke(
        app,
        ["risk", "reidentification", str(tmp_path / "d.csv"), "-c", str(tmp_path / "c.yaml"),
         "--l-recursive-c", "3", "-o", str(tmp_path / "r.csv"), "--summary", str(tmp_path / "s.json")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    records = pl.read_csv(tmp_path / "r.csv")
    # class a: flu 3, cold 1: entropy exp(-(3/4 ln 3/4 + 1/4 ln 1/4)) = 1.7548;
    # recursive with c = 3: 3 < 3 * 1 fails, so l = 1
    assert records["recursive_l_diversity_disease"].to_list() == [1, 1, 1, 1, 2, 2]
    a = math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))
    assert np.allclose(records["entropy_l_diversity_disease"].to_numpy(), [a] * 4 + [2.0, 2.0])
    figures = json.loads((tmp_path / "s.json").read_text())["l_diversity"]["disease"]
    assert (
        figures["recursive"]["c"] == 3 and figures["recursive"]["min"] == 1 and figures["entropy"]["max"] == 2
    )
