"""Slicing and overlapping slicing (sdckit.anonymize.slicing): SPEC §1.2-§1.4 and §1.10 worked examples,
membership evaluation against itertools brute force, every release re-checked for l-diversity by an
independent computation written here from the published table (exact fractions for small tables, a
numpy pass for Adult), the permutation, seeds, the output layout, bad input and the CLI."""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats.contingency import association
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize.slicing import (
    attribute_correlation,
    column_correlation,
    discretize,
    k_medoids,
    membership_report,
    partition_attributes,
    slice_table,
)
from sdckit.cli import app
from sdckit.errors import ConfigError, SdcWarning
from sdckit.io import read_table
from sdckit.table import Attribute, Role, Schema, Table

# SPEC §1.10: (Age, Sex, Zip, Disease).
SPEC_ROWS = [
    (22, "M", 47906, "dyspepsia"),
    (22, "F", 47906, "flu"),
    (33, "F", 47905, "flu"),
    (52, "F", 47905, "bronchitis"),
    (54, "M", 47302, "flu"),
    (60, "M", 47302, "dyspepsia"),
    (60, "M", 47304, "dyspepsia"),
    (64, "F", 47304, "gastritis"),
]
SPEC_FRAME = pl.DataFrame(SPEC_ROWS, schema=["Age", "Sex", "Zip", "Disease"], orient="row")


# Independent re-checks ----------------------------------------------------------------------------


def published_name_map(columns) -> list[dict[str, str]]:
    """Attribute -> published column name, per column (written here independently of the module)."""
    counts = Counter(name for column in columns for name in column)
    return [
        {name: (f"{name}@{i + 1}" if counts[name] > 1 else name) for name in column}
        for i, column in enumerate(columns)
    ]


def brute_force_probabilities(original: pl.DataFrame, published: pl.DataFrame, columns, sensitive: str):
    """p(t, s) of SPEC §1.7 for every original record, in exact fractions, from the published buckets only."""
    names = published_name_map(columns)
    buckets: dict[int, list[dict]] = defaultdict(list)
    for row in published.iter_rows(named=True):
        buckets[row["bucket"]].append(row)
    last = len(columns) - 1
    qi_last = [a for a in columns[last] if a != sensitive]
    result = []
    for t in original.iter_rows(named=True):
        terms = []
        for rows in buckets.values():
            size = len(rows)
            f = Fraction(1)
            for i, column in enumerate(columns):
                attributes = [a for a in column if a != sensitive]
                if not attributes:
                    continue
                wanted = tuple(t[a] for a in attributes)
                count = sum(1 for r in rows if tuple(r[names[i][a]] for a in attributes) == wanted)
                f *= Fraction(count, size)
            if f == 0:
                continue
            wanted = tuple(t[a] for a in qi_last)
            values = [
                r[names[last][sensitive]] for r in rows if tuple(r[names[last][a]] for a in qi_last) == wanted
            ]
            distribution = {s: Fraction(c, len(values)) for s, c in Counter(values).items()}
            terms.append((f, distribution))
        total = sum(f for f, _ in terms)
        p: dict = defaultdict(Fraction)
        for f, distribution in terms:
            for s, share in distribution.items():
                p[s] += f / total * share
        result.append(dict(p))
    return result


def assert_l_diverse(original, published, columns, sensitive, l):  # noqa: E741
    probabilities = brute_force_probabilities(original, published, columns, sensitive)
    worst = max(max(p.values()) for p in probabilities)
    assert float(worst) <= 1 / l + 1e-12, f"max p(t,s) = {worst} > 1/{l}"
    for p in probabilities:
        assert sum(p.values()) == 1
    return float(worst)


def text_keys(frame: pl.DataFrame, names: list[str]) -> np.ndarray:
    return (
        frame.select(
            pl.concat_str(
                [pl.col(n).cast(pl.String).fill_null("\0") for n in names],
                separator="\x1f",
                ignore_nulls=False,
            )
        )
        .to_series()
        .to_list()
    )


def vector_probabilities(
    original: pl.DataFrame, published: pl.DataFrame, columns, sensitive: str
) -> np.ndarray:
    """The same p(t, s) with numpy, one pass per bucket (for Adult); values keyed through their text."""
    names = published_name_map(columns)
    bucket = published.get_column("bucket").to_numpy()
    n = original.height
    last = len(columns) - 1

    def keys(attributes, i):
        mine = text_keys(original, attributes)
        theirs = text_keys(published, [names[i][a] for a in attributes])
        lookup = {key: k for k, key in enumerate(dict.fromkeys(mine + theirs))}
        return np.array([lookup[k] for k in mine]), np.array([lookup[k] for k in theirs]), len(lookup)

    parts = []
    for i, column in enumerate(columns):
        attributes = [a for a in column if a != sensitive]
        if attributes:
            parts.append(keys(attributes, i))
    qi_last = [a for a in columns[last] if a != sensitive]
    if qi_last:
        q_t, q_p, n_q = keys(qi_last, last)
    else:
        q_t, q_p, n_q = np.zeros(n, dtype=int), np.zeros(len(bucket), dtype=int), 1
    s_t, s_p, n_s = keys([sensitive], last)
    total = np.zeros(n)
    numerators = np.zeros((n, n_s))
    for b in np.unique(bucket):
        rows = bucket == b
        size = rows.sum()
        f = np.ones(n)
        for mine, theirs, count in parts:
            f *= np.bincount(theirs[rows], minlength=count)[mine] / size
        q_count = np.bincount(q_p[rows], minlength=n_q)[q_t]
        pairs = np.bincount(q_p[rows] * n_s + s_p[rows], minlength=n_q * n_s).reshape(n_q, n_s)[q_t]
        with np.errstate(invalid="ignore", divide="ignore"):
            distribution = np.where(q_count[:, None] > 0, pairs / q_count[:, None], 0.0)
        total += f
        numerators += f[:, None] * distribution
    return numerators / total[:, None]


def assert_permutation_preserves(original, release):
    """Inside every bucket, every column's multiset of projections is the original one."""
    names = published_name_map(release.columns)
    published = release.published
    assert published.height == original.height
    for b, rows in enumerate(release.buckets):
        mine = original[np.sort(rows)]
        theirs = published.filter(pl.col("bucket") == b)
        assert theirs.height == len(rows)
        for i, column in enumerate(release.columns):
            before = Counter(mine.select(list(column)).iter_rows())
            after = Counter(theirs.select([names[i][a] for a in column]).iter_rows())
            assert before == after


# §1.2-§1.3 correlation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (list("aabb"), list("xxyy"), 1.0),
        (list("aabb"), list("xyxy"), 0.0),
        (list("aaabbc"), list("xxyyyy"), 0.5),
        (list("aaaa"), list("xyxy"), 0.0),
    ],
)
def test_phi2_spec_examples(first, second, expected):
    frame = pl.DataFrame({"A": first, "B": second})
    matrix = attribute_correlation(frame, ["A", "B"])
    assert matrix[0, 1] == pytest.approx(expected, abs=1e-12)
    assert matrix[1, 0] == matrix[0, 1]
    assert matrix[0, 0] == 1.0


def test_phi2_is_cramers_v_squared():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5, 400)
    b = (a + rng.integers(0, 3, 400)) % 4
    frame = pl.DataFrame({"a": [f"v{x}" for x in a], "b": [f"w{x}" for x in b]})
    observed = np.zeros((5, 4), dtype=np.int64)
    np.add.at(observed, (a, b), 1)
    expected = association(observed, method="cramer", correction=False) ** 2
    assert attribute_correlation(frame, ["a", "b"])[0, 1] == pytest.approx(expected, rel=1e-9)


def test_pearson_is_absolute_correlation_of_codes():
    frame = pl.DataFrame({"a": ["x", "y", "z", "x", "z"], "b": ["p", "q", "q", "p", "p"]})
    matrix = attribute_correlation(frame, ["a", "b"], method="pearson")
    expected = abs(np.corrcoef([0, 1, 2, 0, 2], [0, 1, 1, 0, 0])[0, 1])
    assert matrix[0, 1] == pytest.approx(expected)
    constant = pl.DataFrame({"a": ["x", "y"], "b": ["p", "p"]})
    assert attribute_correlation(constant, ["a", "b"], method="pearson")[0, 1] == 0.0


def test_discretize_equal_width():
    assert discretize(np.arange(11.0), 5).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 4]
    assert discretize(np.array([3.0, 3.0, 3.0]), 10).tolist() == [0, 0, 0]
    assert discretize(np.array([0.0, 9.99, 10.0]), 10).tolist() == [0, 9, 9]


def test_numeric_attributes_are_discretized_for_correlation():
    x = np.linspace(0, 9.9, 100)
    frame = pl.DataFrame({"x": x, "y": np.where(x < 4.95, "low", "high")})
    # 2 bins split at 4.95: x's bin determines y exactly; without binning 100 values against 2.
    assert attribute_correlation(frame, ["x", "y"], n_bins=2)[0, 1] == pytest.approx(1.0)
    assert attribute_correlation(frame, ["x", "y"], numeric=[])[0, 1] == pytest.approx(1.0)
    assert attribute_correlation(frame, ["x", "y"], n_bins=3)[0, 1] < 1.0


# §1.4 attribute partition -------------------------------------------------------------------------

SPEC_DISTANCE = np.array(
    [
        [0.0, 0.1, 0.9, 0.9],
        [0.1, 0.0, 0.9, 0.9],
        [0.9, 0.9, 0.0, 0.2],
        [0.9, 0.9, 0.2, 0.0],
    ]
)


def test_pam_spec_example():
    result = k_medoids(SPEC_DISTANCE, 2)
    assert result.medoids == (0, 2)
    assert result.cost == pytest.approx(0.3)
    assert result.swaps == 0
    columns = partition_attributes(1 - SPEC_DISTANCE, list("ABCD"), 2, sensitive="A")
    assert columns == [("C", "D"), ("A", "B")]
    assert partition_attributes(1 - SPEC_DISTANCE, list("ABCD"), 2, sensitive="D") == [("A", "B"), ("C", "D")]


@pytest.mark.parametrize("seed", range(6))
def test_pam_random_start_reaches_the_optimum(seed):
    result = k_medoids(SPEC_DISTANCE, 2, seed=seed)
    assert result.cost == pytest.approx(0.3)
    assert partition_attributes(1 - SPEC_DISTANCE, list("ABCD"), 2, sensitive="D", seed=seed) == [
        ("A", "B"),
        ("C", "D"),
    ]


def test_sensitive_column_size_rule():
    correlation = 1 - SPEC_DISTANCE
    correlation[0, 3] = correlation[3, 0] = 0.5  # D is most correlated with A
    correlation[2, 3] = correlation[3, 2] = 0.3
    columns = partition_attributes(correlation, list("ABCD"), 2, sensitive="D", sensitive_column_size=2)
    assert columns == [("B", "C"), ("A", "D")]
    columns = partition_attributes(correlation, list("ABCD"), 3, sensitive="D", sensitive_column_size=1)
    assert columns[-1] == ("D",) and sorted(columns[:-1]) == [("A", "B"), ("C",)]


def test_column_correlation_definitions():
    correlation = np.array([[1, 0.2, 0.4, 0], [0.2, 1, 0.6, 0], [0.4, 0.6, 1, 0.8], [0, 0, 0.8, 1.0]])
    mean, pooled = column_correlation(correlation, list("abcd"), [("a", "b", "c"), ("d",)])
    assert mean == pytest.approx(0.4) and pooled == pytest.approx(0.4)
    mean, pooled = column_correlation(correlation, list("abcd"), [("a", "b", "c"), ("c", "d")])
    assert mean == pytest.approx((0.4 + 0.8) / 2)
    assert pooled == pytest.approx((0.2 + 0.4 + 0.6 + 0.8) / 4)
    assert all(math.isnan(x) for x in column_correlation(correlation, list("abcd"), [("a",), ("b",)]))


# §1.9-§1.10 membership ----------------------------------------------------------------------------


def brute_force_membership(frame, columns, buckets, sensitive):
    parts = [[a for a in column if a != sensitive] for column in columns]
    parts = [p for p in parts if p]
    qi = list(dict.fromkeys(a for p in parts for a in p))
    rows = frame.to_dicts()
    originals = {tuple(r[a] for a in qi) for r in rows}
    projections = [[{tuple(rows[r][a] for a in p) for r in bucket} for p in parts] for bucket in buckets]
    generated = set()
    for per_column in projections:
        for combination in itertools.product(*per_column):
            values: dict = {}
            consistent = True
            for p, projection in zip(parts, combination, strict=True):
                for a, v in zip(p, projection, strict=True):
                    if a in values and values[a] != v:
                        consistent = False
                    values[a] = v
            if consistent:
                generated.add(tuple(values[a] for a in qi))

    def matches(q):
        values = dict(zip(qi, q, strict=True))
        return sum(
            all(tuple(values[a] for a in p) in per_column[i] for i, p in enumerate(parts))
            for per_column in projections
        )

    fakes = generated - originals
    edges = [(1, 1), (2, 5), (6, 10), (11, 20), (21, 10**9)]

    def histogram(tuples):
        counts = [matches(q) for q in tuples]
        return [sum(lo <= c <= hi for c in counts) for lo, hi in edges]

    return originals, generated, fakes, histogram(originals), histogram(fakes)


def test_membership_spec_example():
    buckets = [np.arange(4), np.arange(4, 8)]
    report = membership_report(SPEC_FRAME, [("Age", "Sex"), ("Zip", "Disease")], buckets, "Disease")
    assert report["combinations"] == 14 and report["generated"] == 14
    assert report["original"] == 8 and report["fake"] == 6
    assert report["original_matching"] == [8, 0, 0, 0, 0]
    assert report["fake_matching"] == [6, 0, 0, 0, 0]
    assert report["total_variation"] == 0.0 and not report["sampled"]
    _, _, fakes, _, _ = brute_force_membership(
        SPEC_FRAME, [("Age", "Sex"), ("Zip", "Disease")], buckets, "Disease"
    )
    assert fakes == {
        (22, "F", 47905),
        (22, "M", 47905),
        (33, "F", 47906),
        (52, "F", 47906),
        (54, "M", 47304),
        (64, "F", 47302),
    }


def test_bucketization_has_no_fakes():
    report = membership_report(
        SPEC_FRAME, [("Age", "Sex", "Zip"), ("Disease",)], [np.arange(4), np.arange(4, 8)], "Disease"
    )
    assert report["fake"] == 0 and report["total_variation"] is None


@settings(max_examples=25)
@given(data=st.data())
def test_membership_matches_brute_force(data):
    n = data.draw(st.integers(4, 20))
    frame = pl.DataFrame(
        {
            "a": data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
            "b": data.draw(st.lists(st.sampled_from(["x", "y", None]), min_size=n, max_size=n)),
            "c": data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "s": data.draw(st.lists(st.sampled_from("pq"), min_size=n, max_size=n)),
        }
    )
    columns = data.draw(
        st.sampled_from(
            [
                [("a",), ("b",), ("c", "s")],
                [("a", "b"), ("c",), ("s",)],
                [("a", "b"), ("b", "c"), ("a", "s")],  # overlapping
                [("a", "c"), ("a", "b"), ("c", "s")],
            ]
        )
    )
    cut = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=3)))
    buckets = np.split(np.random.default_rng(n).permutation(n), cut)
    report = membership_report(frame, columns, buckets, "s")
    originals, generated, fakes, original_histogram, fake_histogram = brute_force_membership(
        frame, columns, buckets, "s"
    )
    assert report["original"] == len(originals)
    assert report["generated"] == len(generated)
    assert report["fake"] == len(fakes)
    assert report["original_matching"] == original_histogram
    assert report["fake_matching"] == fake_histogram


def test_membership_sampling_is_capped_and_said():
    rng = np.random.default_rng(0)
    frame = pl.DataFrame(
        {"a": rng.integers(0, 30, 300), "b": rng.integers(0, 30, 300), "s": rng.integers(0, 3, 300)}
    )
    exact = membership_report(frame, [("a",), ("b",), ("s",)], [np.arange(300)], "s")
    sampled = membership_report(
        frame, [("a",), ("b",), ("s",)], [np.arange(300)], "s", max_generated=200, seed=1
    )
    assert not exact["sampled"] and sampled["sampled"]
    assert "sampled" in sampled["note"] and sampled["sample_size"] == 200
    assert sampled["fake"] <= exact["fake"] and sampled["generated"] <= 200
    assert 0 < sampled["fake_share"] <= 1
    again = membership_report(
        frame, [("a",), ("b",), ("s",)], [np.arange(300)], "s", max_generated=200, seed=1
    )
    assert again == sampled


# Releases -----------------------------------------------------------------------------------------


def test_spec_table_release():
    table = make_table(SPEC_FRAME, Disease=Role.SENSITIVE)
    release = slice_table(table, columns=[("Age", "Sex"), ("Zip", "Disease")], l=2)
    assert release.columns == (("Age", "Sex"), ("Zip", "Disease"))
    assert release.published.columns == ["bucket", "Age", "Sex", "Zip", "Disease"]
    worst = assert_l_diverse(SPEC_FRAME, release.published, release.columns, "Disease", 2)
    assert release.max_probability == pytest.approx(worst)
    assert release.l_achieved == pytest.approx(1 / worst)
    assert_permutation_preserves(SPEC_FRAME, release)
    assert release.membership["original"] == 8
    assert set(release.timings) == {"correlation", "attributes", "tuples", "output", "membership"}
    with pytest.raises(ConfigError, match="not 3-diverse even as a single bucket"):
        slice_table(table, columns=[("Age", "Sex"), ("Zip", "Disease")], l=3)


def test_independent_check_reproduces_spec_multi_bucket_example():
    frame = pl.DataFrame(
        [(20, "M", "A", "flu"), (20, "F", "A", "cold"), (30, "M", "B", "flu"), (30, "F", "A", "hiv")]
        + [(20, "M", "B", "cold"), (40, "F", "B", "hiv")],
        schema=["Age", "Sex", "Zip", "Disease"],
        orient="row",
    )
    published = frame.with_columns(pl.Series("bucket", [0, 0, 0, 1, 1, 1]))
    p = brute_force_probabilities(frame, published, [("Age",), ("Sex",), ("Zip", "Disease")], "Disease")
    assert p[0] == {"flu": Fraction(4, 9), "cold": Fraction(4, 9), "hiv": Fraction(1, 9)}
    assert p[4] == {"flu": Fraction(2, 3), "cold": Fraction(1, 6), "hiv": Fraction(1, 6)}
    vector = vector_probabilities(frame, published, [("Age",), ("Sex",), ("Zip", "Disease")], "Disease")
    assert vector.max() == pytest.approx(2 / 3)


VARIANTS = [
    ("slicing", "mondrian"),
    ("slicing", "random-halving"),
    ("overlapping-slicing", "random-halving"),
    ("overlapping-slicing", "mondrian"),
]


@pytest.mark.filterwarnings("ignore:.*single record:sdckit.errors.SdcWarning")
@settings(max_examples=40)
@given(data=st.data())
def test_random_releases_are_l_diverse(data):
    n = data.draw(st.integers(6, 24))
    frame = pl.DataFrame(
        {
            "a": data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
            "b": data.draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n)),
            "c": data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "s": data.draw(st.lists(st.sampled_from("pqrs"), min_size=n, max_size=n)),
        }
    )
    method, partition = data.draw(st.sampled_from(VARIANTS))
    alpha = data.draw(st.sampled_from([None, 1, 1, 2]))  # alpha 1 is always feasible when l allows
    n_columns = data.draw(st.sampled_from([None, 3]))
    l = data.draw(st.sampled_from([1.5, 2.0, 3.0]))  # noqa: E741
    seed = data.draw(st.integers(0, 1000))
    table = make_table(frame, s=Role.SENSITIVE)
    try:
        release = slice_table(
            table,
            method=method,
            partition=partition,
            sensitive_column_size=alpha,
            n_columns=n_columns,
            l=l,
            seed=seed,
            membership=False,
        )
    except ConfigError as error:
        if "distinct values" in str(error):
            assert frame.get_column("s").n_unique() < l
            return
        assert "even as a single bucket" in str(error)  # checked for real in the next test
        return
    assert release.columns[-1].count("s") == 1 and all("s" not in c for c in release.columns[:-1])
    worst = assert_l_diverse(frame, release.published, release.columns, "s", l)
    assert release.max_probability == pytest.approx(worst)
    assert_permutation_preserves(frame, release)
    assert sorted(np.concatenate(release.buckets).tolist()) == list(range(n))


@settings(max_examples=20)
@given(data=st.data())
def test_infeasible_single_bucket_is_really_infeasible(data):
    n = data.draw(st.integers(4, 12))
    frame = pl.DataFrame(
        {
            "a": data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "b": data.draw(st.lists(st.sampled_from("xy"), min_size=n, max_size=n)),
            "s": data.draw(st.lists(st.sampled_from("pqr"), min_size=n, max_size=n)),
        }
    )
    columns = [("a",), ("b", "s")]
    l = 2.0  # noqa: E741
    published = frame.with_columns(pl.lit(0).alias("bucket"))
    worst = max(max(p.values()) for p in brute_force_probabilities(frame, published, columns, "s"))
    try:
        release = slice_table(make_table(frame, s=Role.SENSITIVE), columns=columns, l=l, membership=False)
    except ConfigError as error:
        assert "distinct values" in str(error) or float(worst) > 1 / l
        return
    assert float(worst) <= 1 / l
    assert_l_diverse(frame, release.published, release.columns, "s", l)


def test_overlapping_columns_published_once_per_column():
    rng = np.random.default_rng(5)
    frame = pl.DataFrame(
        {
            "a": rng.integers(0, 3, 40),
            "b": rng.choice(["x", "y"], 40),
            "c": rng.integers(0, 4, 40),
            "s": np.tile(["p", "q", "r", "t"], 10),
        }
    )
    columns = [("a", "b"), ("b", "c"), ("a", "s")]
    release = slice_table(
        make_table(frame, s=Role.SENSITIVE), method="overlapping-slicing", columns=columns, l=2
    )
    assert release.published.columns == ["bucket", "a@1", "b@1", "b@2", "c", "a@3", "s"]
    assert_l_diverse(frame, release.published, release.columns, "s", 2)
    assert_permutation_preserves(frame, release)
    with pytest.raises(ConfigError, match="several columns"):
        slice_table(make_table(frame, s=Role.SENSITIVE), method="slicing", columns=columns, l=2)


def test_seed_reproduces_and_varies_the_permutation():
    rng = np.random.default_rng(1)
    frame = pl.DataFrame(
        {"a": rng.integers(0, 5, 60), "b": rng.choice(["x", "y", "z"], 60), "s": np.tile(["p", "q", "r"], 20)}
    )
    table = make_table(frame, s=Role.SENSITIVE)
    options = {"columns": [("a",), ("b",), ("s",)], "l": 1.5, "min_bucket_size": 10}
    first = slice_table(table, seed=7, **options)
    again = slice_table(table, seed=7, **options)
    other = slice_table(table, seed=8, **options)
    assert first.published.equals(again.published)
    assert first.membership == again.membership
    assert [b.tolist() for b in first.buckets] == [
        b.tolist() for b in other.buckets
    ]  # Mondrian: no randomness
    assert not first.published.equals(other.published)
    halving = slice_table(table, partition="random-halving", seed=7, **options)
    assert halving.published.equals(
        slice_table(table, partition="random-halving", seed=7, **options).published
    )


def test_values_are_original_and_missing_qi_is_a_category():
    frame = pl.DataFrame(
        {
            "age": [21.5, 30.25, None, 44.0, 51.75, 63.0, 21.5, 30.25],
            "sex": ["M", "F", "F", None, "M", "F", "M", "F"],
            "s": ["p", "q", "p", "q", "p", "q", "q", "p"],
        }
    )
    release = slice_table(make_table(frame, s=Role.SENSITIVE), columns=[("age",), ("sex",), ("s",)], l=2)
    assert sorted(release.published.get_column("age").to_list(), key=str) == sorted(
        frame.get_column("age").to_list(), key=str
    )
    assert release.published.schema["age"] == pl.Float64
    assert_l_diverse(frame, release.published, release.columns, "s", 2)


def test_single_record_buckets_warn():
    frame = pl.DataFrame({"a": [1, 2, 3, 4], "s": ["p", "q", "r", "t"]})
    with pytest.warns(SdcWarning, match="single record"):
        release = slice_table(make_table(frame, s=Role.SENSITIVE), columns=[("a",), ("s",)], l=1)
    assert release.smallest_bucket == 1


def test_identifiers_are_not_published_and_sensitive_defaults_to_the_role():
    frame = SPEC_FRAME.with_columns(pl.Series("id", range(8)))
    release = slice_table(
        make_table(frame, Disease=Role.SENSITIVE, id=Role.IDENTIFIER),
        l=2,
        n_columns=2,
        sensitive_column_size=1,
    )
    assert "id" not in release.published.columns and release.sensitive == "Disease"
    assert_l_diverse(frame, release.published, release.columns, "Disease", 2)


BAD = [
    ({"sensitive": "Nope"}, "sensitive attribute 'Nope'"),
    ({"l": 0.5}, "l must be"),
    ({"l": 5}, "larger than the number of distinct values"),
    ({"method": "dice"}, "method must be"),
    ({"partition": "kd"}, "partition must be"),
    ({"correlation": "spearman"}, "correlation must be"),
    ({"bucket_weighting": "heavy"}, "bucket_weighting must be"),
    ({"n_columns": 9}, "n_columns must be between 2"),
    ({"n_columns": 0}, "n_columns must be"),
    ({"method": "overlapping-slicing", "beta": 9}, "beta 9 is larger"),
    ({"columns": [("Age", "Foo"), ("Bar", "Disease")]}, "unknown attribute.*'Bar', 'Foo'"),
    ({"columns": [("Age", "Disease"), ("Sex", "Disease")]}, "exactly one column"),
    ({"columns": [("Age", "Sex", "Zip", "Disease")]}, "at least 2 columns"),
    ({"columns": [("Age", "Age"), ("Disease",)]}, "twice in one column"),
    ({"min_bucket_size": 0}, "min_bucket_size"),
    ({"sensitive_column_size": 9}, "sensitive_column_size"),
    ({"seed": -1}, "seed"),
    # a keyword of the other method is refused, never ignored
    ({"beta": 0}, r"^slicing does not take beta \(an overlapping-slicing parameter\)$"),
    (
        {"max_labels": 3, "occ_function": "intersection"},
        r"^slicing does not take max_labels, occ_function \(overlapping-slicing parameters\)$",
    ),
    ({"n_restarts": 2}, r"^slicing does not take n_restarts \(an overlapping-slicing parameter\)$"),
    (
        {"method": "overlapping-slicing", "medoid_start": "build"},
        r"^overlapping-slicing does not take medoid_start \(a slicing parameter\)$",
    ),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_bad_input(options, message):
    with pytest.raises(ConfigError, match=message):
        slice_table(make_table(SPEC_FRAME, Disease=Role.SENSITIVE), **options)


def test_the_other_methods_defaults_are_not_refused():
    """Only a value the chosen method would ignore is refused: the other method's defaults (the
    keyword function's own defaults) pass, so slice_table's plain calls keep working."""
    table = make_table(SPEC_FRAME, Disease=Role.SENSITIVE)
    options = {"columns": [("Age", "Sex"), ("Zip", "Disease")], "l": 2, "membership": False}
    plain = slice_table(table, **options)
    explicit = slice_table(table, beta=2, max_labels=2, n_restarts=10, occ_function="jaccard", **options)
    assert explicit.published.equals(plain.published)
    overlapping = slice_table(table, method="overlapping-slicing", medoid_start="random", **options)
    assert overlapping.method == "overlapping-slicing"


def test_missing_sensitive_values_and_roles():
    frame = SPEC_FRAME.with_columns(
        pl.when(pl.col("Age") == 22).then(None).otherwise(pl.col("Disease")).alias("Disease")
    )
    with pytest.raises(ConfigError, match="missing in 2 record"):
        slice_table(make_table(frame, Disease=Role.SENSITIVE), l=2)
    with pytest.raises(ConfigError, match="no sensitive attribute"):
        slice_table(Table.from_frame(SPEC_FRAME), l=2)
    several = Table.from_frame(
        SPEC_FRAME,
        Schema.infer(
            SPEC_FRAME, [Attribute("Disease", role=Role.SENSITIVE), Attribute("Sex", role=Role.SENSITIVE)]
        ),
    )
    with pytest.raises(ConfigError, match="several attributes have role sensitive"):
        slice_table(several, l=2)
    release = slice_table(several, sensitive="Disease", l=2, n_columns=2, sensitive_column_size=1)
    assert release.sensitive == "Disease"


# Adult ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult(shared_data) -> Table:
    table = read_table(
        shared_data("adult", "adult_full.csv"),
        missing_values=("?",),
        attributes=[Attribute("occupation", role=Role.SENSITIVE)],
    )
    frame = table.data.drop_nulls()
    assert frame.height == 30162
    return Table(frame, table.schema)


@pytest.mark.slow
@pytest.mark.parametrize(("method", "l"), [("slicing", 3), ("overlapping-slicing", 4)])
def test_adult_releases_are_l_diverse(adult, method, l):  # noqa: E741
    release = slice_table(
        adult, method=method, l=l, min_bucket_size=250, sensitive_column_size=1, n_columns=5, seed=3
    )
    assert release.smallest_bucket >= 250
    probabilities = vector_probabilities(adult.data, release.published, release.columns, "occupation")
    assert np.allclose(probabilities.sum(axis=1), 1.0)
    assert probabilities.max() <= 1 / l + 1e-9
    assert release.max_probability == pytest.approx(probabilities.max(), rel=1e-9)
    assert release.membership["original"] > 0 and release.membership["fake"] > 0
    assert 0 < release.average_correlation < 1
    if method == "overlapping-slicing":
        names = [n for c in published_name_map(release.columns) for n in c.values()]
        assert release.published.columns == ["bucket", *names]


# CLI ------------------------------------------------------------------------------------------------

runner = CliRunner()
CSV = "Age,Sex,Zip,Disease\n" + "".join(f"{a},{s},{z},{d}\n" for a, s, z, d in SPEC_ROWS)
CONFIG = "attributes:\n  Disease: {role: sensitive}\n"


def cli(tmp_path: Path, method: str, *options: str, config: str = CONFIG):
    (tmp_path / "data.csv").write_text(CSV)
    (tmp_path / "config.yaml").write_text(config)
    arguments = [
        "anonymize",
        method,
        tmp_path / "data.csv",
        "-c",
        tmp_path / "config.yaml",
        "-o",
        tmp_path / "out.csv",
    ]
    return runner.invoke(app, [str(a) for a in [*arguments, *options]])


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("slicing", ["--columns", "Age,Sex;Zip,Disease", "-l", "2"]),
        ("slicing", ["--n-columns", "2", "--sensitive-column-size", "1", "--seed", "4"]),
        ("overlapping-slicing", ["--sensitive-column-size", "1", "--n-columns", "3", "--beta", "2"]),
        (
            "overlapping-slicing",
            ["--columns", "Age,Sex;Sex,Zip;Disease", "--max-labels", "2", "--min-bucket-size", "2"],
        ),
    ],
)
def test_cli_slicing(tmp_path, method, options):
    result = cli(tmp_path, method, *options, "--summary", str(tmp_path / "summary.json"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["method"] == method
    assert summary["satisfied"] is True and summary["violation"] is None
    assert summary["recipe"]["steps"][0]["method"] == method
    published = pl.read_csv(tmp_path / "out.csv")
    assert published.height == 8 and published.columns[0] == "bucket"
    assert summary["buckets"] == published.get_column("bucket").n_unique()
    assert summary["smallest_bucket"] >= 1 and summary["l_achieved"] >= 2 - 1e-9
    assert summary["columns"][-1].count("Disease") == 1
    assert {"correlation", "attributes", "tuples", "output"} <= set(summary["timings"])
    assert "fake_tuples" in summary and "average_correlation" in summary
    columns = [tuple(c) for c in summary["columns"]]
    assert_l_diverse(SPEC_FRAME, published, columns, "Disease", 2)
    if "--columns" in options:  # the explicit columns are the released ones
        given = options[options.index("--columns") + 1]
        assert summary["columns"] == [part.split(",") for part in given.split(";")]


@pytest.mark.parametrize(
    ("method", "options", "words"),
    [
        ("slicing", ["--columns", "Age,Foo;Zip,Disease"], ["columns", "unknown attribute", "'Foo'"]),
        ("slicing", ["-l", "3", "--columns", "Age,Sex;Zip,Disease"], ["not 3-diverse", "single bucket"]),
        ("overlapping-slicing", ["--beta", "7"], ["beta 7", "larger than the number of attributes"]),
        ("slicing", ["--n-columns", "1"], ["n_columns", "between 2", "got 1"]),
        ("slicing", ["--n-columns", "0"], ["--n-columns", "greater than or equal to 1", "got 0"]),
        # an empty name between the commas is no attribute of the data
        ("slicing", ["--columns", "Age,;Disease"], ["columns", "unknown attribute", "''"]),
        ("slicing", ["-l", "9"], ["l 9", "larger than the number of distinct values"]),
        ("slicing", ["-l", "0.5"], ["-l", "greater than or equal to 1", "0.5"]),
        ("slicing", ["--partition", "halves"], ["--partition", "'mondrian'", "'halves'"]),
        ("slicing", ["-l", "2", "CONFIG:attributes:\n  Age: {role: quasi-identifier}\n"], ["sensitive"]),
    ],
)
def test_cli_slicing_bad_input(tmp_path, method, options, words):
    config = [option[len("CONFIG:") :] for option in options if option.startswith("CONFIG:")]
    options = [option for option in options if not option.startswith("CONFIG:")]
    result = cli(tmp_path, method, *options, config=config[0] if config else CONFIG)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.count("error:") == 1, text
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(
    ("method", "options", "words"),
    [
        # -k was "-l only" for slicing; the option now belongs to other methods' commands.
        ("slicing", ["-k", "2"], ["-k is not an option of slicing", "generalize", "mondrian"]),
        # the old options --column (explicit columns) and --method
        ("slicing", ["--column", "Age,Sex;Zip,Disease"], ["No such option", "--column"]),
        # -m, the old method option, is now synthesize's number of implicates.
        ("slicing", ["-m", "slicing"], ["-m is not an option of slicing", "synthesize"]),
        (
            "overlapping-slicing",
            ["--medoid-start", "build"],
            ["--medoid-start is not an option of overlapping-slicing", "slicing"],
        ),
    ],
)
def test_cli_slicing_usage_errors(tmp_path, method, options, words):
    result = cli(tmp_path, method, *options)
    assert result.exit_code == 2, result.output
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "out.csv").exists()
