"""The sensitivity study of the improved-slicing experiment (issue 21): correlation measures against
direct formulas, the averaging rules on hand-made column layouts, the three readings of tuple
matching on SPEC §1.10's examples, the trend verdict, and the command line."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.anonymize.slicing import MATCHINGS, diversity_keys
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.experiments.slicing import (
    _l_of,
    average_correlation,
    correlation_matrix,
    diversity_readings,
    reachable,
    trends,
)
from sdckit.frequency import encode
from sdckit.io import read_table
from sdckit.models.sliced import tuple_probabilities

runner = CliRunner()


# Correlation measures against direct formulas --------------------------------------------------------


def _crosstab_phi2(x: list, y: list) -> float:
    """φ² = χ² / (n (min(r, c) - 1)) from the contingency table, cell by cell."""
    n = len(x)
    rows, cols = sorted(set(x)), sorted(set(y))
    chi2 = 0.0
    for a in rows:
        for b in cols:
            observed = sum(1 for u, v in zip(x, y, strict=True) if u == a and v == b)
            expected = x.count(a) * y.count(b) / n
            chi2 += (observed - expected) ** 2 / expected
    return chi2 / (n * (min(len(rows), len(cols)) - 1))


def _pearson(x: list[float], y: list[float]) -> float:
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    cov = sum((u - mx) * (v - my) for u, v in zip(x, y, strict=True))
    return cov / math.sqrt(sum((u - mx) ** 2 for u in x) * sum((v - my) ** 2 for v in y))


HAND = {
    # SPEC §1.2's third example (φ² = 0.5) and a third attribute
    "a1": ["a", "a", "a", "b", "b", "c"],
    "a2": ["x", "x", "y", "y", "y", "y"],
    "a3": ["p", "q", "p", "q", "p", "q"],
}


@pytest.fixture(scope="module")
def hand_table():
    return read_table(pl.DataFrame(HAND))


def test_phi2_is_the_mean_square_contingency(hand_table):
    matrix = correlation_matrix(hand_table, ["a1", "a2", "a3"], "phi2")
    assert matrix[0, 1] == pytest.approx(0.5)  # SPEC §1.2
    for i, j in ((0, 1), (0, 2), (1, 2)):
        names = list(HAND)
        assert matrix[i, j] == pytest.approx(_crosstab_phi2(HAND[names[i]], HAND[names[j]]))
        assert matrix[j, i] == matrix[i, j]
    # a1 x a3: rows a (p 2, q 1), b (1, 1), c (0, 1), expected a 1.5/1.5, b 1/1, c .5/.5:
    # χ² = 2 (.25 / 1.5) + 2 (.25 / .5) = 4/3, φ² = (4/3) / (6 (2 - 1)) = 2/9
    assert matrix[0, 2] == pytest.approx(2 / 9)
    assert np.allclose(np.diag(matrix), 1.0)


def test_cramers_v_is_the_square_root_of_phi2(hand_table):
    matrix = correlation_matrix(hand_table, ["a1", "a2", "a3"], "cramers-v")
    assert matrix[0, 1] == pytest.approx(math.sqrt(0.5))
    assert matrix[0, 2] == pytest.approx(math.sqrt(2) / 3)
    assert matrix[1, 2] == pytest.approx(math.sqrt(_crosstab_phi2(HAND["a2"], HAND["a3"])))


def test_pearson_is_taken_on_sorted_value_codes(hand_table):
    matrix = correlation_matrix(hand_table, ["a1", "a2", "a3"], "pearson")
    codes = {name: [sorted(set(values)).index(v) for v in values] for name, values in HAND.items()}
    # a1 = (0, 0, 0, 1, 1, 2), a2 = (0, 0, 1, 1, 1, 1): r = 2 / sqrt(10)
    assert matrix[0, 1] == pytest.approx(2 / math.sqrt(10))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        names = list(HAND)
        assert matrix[i, j] == pytest.approx(abs(_pearson(codes[names[i]], codes[names[j]])))


def test_unknown_measure_is_refused(hand_table):
    with pytest.raises(ConfigError, match="^measure must be one of .*, got 'spearman'$"):
        correlation_matrix(hand_table, ["a1", "a2"], "spearman")


# Averaging rules on a hand-made column layout --------------------------------------------------------

MATRIX = np.array([[1, 0.6, 0.2, 0.0], [0.6, 1, 0.4, 0.1], [0.2, 0.4, 1, 0.3], [0.0, 0.1, 0.3, 1]])
NAMES = ["a", "b", "c", "d"]


@pytest.mark.parametrize(
    ("columns", "lone_zero", "paired_columns", "pairs"),
    [
        # {a, b, c}: (0.6 + 0.2 + 0.4) / 3 = 0.4; {d} alone
        ([("a", "b", "c"), ("d",)], 0.2, 0.4, 0.4),
        ([("a", "b"), ("c", "d")], 0.45, 0.45, 0.45),
        # {a, b, c} 0.4 (3 pairs), {c, d} 0.3 (1 pair), {b} alone (overlapping columns)
        ([("a", "b", "c"), ("c", "d"), ("b",)], (0.4 + 0.3 + 0) / 3, 0.35, (0.6 + 0.2 + 0.4 + 0.3) / 4),
        ([("a",), ("b",)], 0.0, math.nan, math.nan),
    ],
)
def test_averaging_rules(columns, lone_zero, paired_columns, pairs):
    for averaging, expected in (
        ("lone-zero", lone_zero),
        ("paired-columns", paired_columns),
        ("pairs", pairs),
    ):
        value = average_correlation(MATRIX, NAMES, columns, averaging)
        if math.isnan(expected):
            assert math.isnan(value), averaging
        else:
            assert value == pytest.approx(expected), averaging


def test_unknown_averaging_is_refused():
    with pytest.raises(ConfigError, match="^averaging must be one of .*, got 'median'$"):
        average_correlation(MATRIX, NAMES, [("a", "b")], "median")


# The readings of tuple matching on SPEC §1.10 -------------------------------------------------------


def _max_p(frame: pl.DataFrame, columns, buckets, matching) -> np.ndarray:
    names = list(frame.columns)
    encoding = encode(frame, names)
    sensitive = names[-1]
    keys, qi = diversity_keys(encoding, columns, sensitive, matching=matching)
    codes = encoding.codes[encoding.index(sensitive)].astype(np.int64)
    n_values = int(encoding.cardinalities[encoding.index(sensitive)])
    return tuple_probabilities(keys, qi, codes, n_values, [np.asarray(b) for b in buckets]).max(axis=1)


def _l(frame: pl.DataFrame, columns, buckets, matching) -> float:
    names = list(frame.columns)
    encoding = encode(frame, names)
    index = encoding.index(names[-1])
    return _l_of(
        encoding, columns, names[-1], encoding.codes[index].astype(np.int64),
        int(encoding.cardinalities[index]), [np.asarray(b) for b in buckets], matching,
    )  # fmt: skip


def test_first_example_is_2_diverse_under_every_reading():
    # SPEC §1.10: C1 = (Age, Sex), C2 = (Zip, Disease), B1 = t1..t4, B2 = t5..t8. Every tuple matches
    # only its own bucket; strict: D by zip, .5 each; bucket and none: B1 flu .5, B2 dyspepsia .5.
    frame = pl.DataFrame(
        {
            "age": [22, 22, 33, 52, 54, 60, 60, 64],
            "sex": list("MFFFMMMF"),
            "zip": [47906, 47906, 47905, 47905, 47302, 47302, 47304, 47304],
            "disease": [
                "dyspepsia",
                "flu",
                "flu",
                "bronchitis",
                "flu",
                "dyspepsia",
                "dyspepsia",
                "gastritis",
            ],
        }
    )
    columns = [("age", "sex"), ("zip", "disease")]
    buckets = [[0, 1, 2, 3], [4, 5, 6, 7]]
    for matching in MATCHINGS:
        assert np.allclose(_max_p(frame, columns, buckets, matching), 0.5), matching
        assert _l(frame, columns, buckets, matching) == pytest.approx(2.0)
    # The readings differ in t1's distribution: SPEC's D(t1, B1) = {dyspepsia .5, flu .5} is the
    # strict reading's; ignoring the zip of the sensitive column gives B1's whole distribution.
    encoding = encode(frame, list(frame.columns))
    codes = encoding.codes[encoding.index("disease")].astype(np.int64)
    values = sorted(set(frame["disease"]))  # codes follow the sorted values
    for matching, expected in (
        ("strict", {"dyspepsia": 0.5, "flu": 0.5}),
        ("bucket", {"bronchitis": 0.25, "dyspepsia": 0.25, "flu": 0.5}),
        ("none", {"bronchitis": 0.25, "dyspepsia": 0.25, "flu": 0.5}),
    ):
        keys, qi = diversity_keys(encoding, columns, "disease", matching=matching)
        p = tuple_probabilities(keys, qi, codes, len(values), [np.asarray(b) for b in buckets])
        assert dict(zip(values, p[0], strict=True)) == pytest.approx(
            {v: expected.get(v, 0.0) for v in values}
        )


MULTI = pl.DataFrame(
    {
        "age": [20, 20, 30, 30, 20, 40],
        "sex": list("MFMFMF"),
        "zip": list("AABABB"),
        "disease": ["flu", "cold", "flu", "hiv", "cold", "hiv"],
    }
)


@pytest.mark.parametrize(
    ("matching", "expected"),
    [
        # SPEC §1.10's multi-bucket example: r1 4/9 (flu = cold), r5 2/3 (flu); hand-derived the others.
        ("strict", ["4/9", "1/3", "1/2", "1/2", "2/3", "1/2"]),
        # zip weighs the buckets, candidates are all of B's values (B1 flu 2/3, B2 hiv 2/3):
        # r1 f(B1) = (2/3)^3, f(B2) = (1/3)^3 -> p(flu) = 8/9 * 2/3 = 16/27
        ("bucket", ["16/27", "4/9", "1/3", "1/3", "4/9", "2/3"]),
        # zip ignored: r1 f(B1) = 4/9, f(B2) = 1/9 -> p(flu) = 4/5 * 2/3 = 8/15; r6 only B2: hiv 2/3
        ("none", ["8/15", "1/3", "4/9", "4/9", "8/15", "2/3"]),
    ],
)
def test_multi_bucket_example_under_each_reading(matching, expected):
    columns = [("age",), ("sex",), ("zip", "disease")]
    buckets = [[0, 1, 2], [3, 4, 5]]
    got = _max_p(MULTI, columns, buckets, matching)
    assert got == pytest.approx([float(Fraction(value)) for value in expected])
    assert _l(MULTI, columns, buckets, matching) == pytest.approx(1.5)  # max 2/3 in every reading


def test_a_sensitive_column_quasi_identifier_limits_only_the_strict_reading():
    # One bucket; zip A holds only s1: strict p(t_A, s1) = 1; bucket/none see s1 .5, s2 .25, s3 .25.
    frame = pl.DataFrame({"age": [1, 2, 3, 4], "zip": list("AABB"), "s": ["s1", "s1", "s2", "s3"]})
    columns = [("age",), ("zip", "s")]
    whole = [[0, 1, 2, 3]]
    assert _l(frame, columns, whole, "strict") == pytest.approx(1.0)
    assert _l(frame, columns, whole, "bucket") == pytest.approx(2.0)
    assert _l(frame, columns, whole, "none") == pytest.approx(2.0)
    # With the sensitive attribute alone in its column the three readings coincide.
    alone = [("age", "zip"), ("s",)]
    assert [_l(frame, alone, whole, m) for m in MATCHINGS] == pytest.approx([2.0, 2.0, 2.0])


def test_unknown_reading_is_refused():
    encoding = encode(MULTI, list(MULTI.columns))
    with pytest.raises(ConfigError, match="matching"):
        diversity_keys(encoding, [("age",), ("disease",)], "disease", matching="loose")


def test_releases_keep_the_strict_reading():
    """slice_table has no matching parameter: what a published table guarantees is unchanged."""
    import inspect

    from sdckit.anonymize.slicing import SlicingParams, slice_table

    assert "matching" not in inspect.signature(slice_table).parameters
    assert "matching" not in SlicingParams.model_fields


# The trend verdict ----------------------------------------------------------------------------------


def _curves(slicing, improved) -> pl.DataFrame:
    rows = [{"columns": c, "method": "slicing", "average_correlation": v} for c, v in enumerate(slicing, 2)]
    rows += [
        {"columns": c, "method": "improved slicing", "average_correlation": v}
        for c, v in enumerate(improved, 2)
    ]
    return pl.DataFrame(rows)


def test_trends_recognise_the_paper_shapes():
    paper = trends(_curves([0.5, 0.4, 0.3, 0.2], [0.2, 0.4, 0.3, 0.1]))
    assert paper["slicing_falls"] and paper["improved_rises_then_falls"] and paper["reproduces"]
    assert paper["slicing_tau"] == -1.0
    assert paper["improved_peak"] == 3
    assert paper["closeness"] == pytest.approx(2.0)  # 1 + (1 - (-1)) / 2
    # The observation: slicing rises (tau > 0), improved peaks inside.
    sdckit = trends(_curves([0.0745, 0.0751, 0.1007, 0.1537], [0.0788, 0.2210, 0.1958, 0.1617]))
    assert not sdckit["slicing_falls"] and sdckit["improved_rises_then_falls"] and not sdckit["reproduces"]
    assert sdckit["slicing_tau"] == 1.0
    # A peak at the end is no rise then fall; tau up to it is 1, after it 0 (a single point).
    rising = trends(_curves([0.3, 0.2, 0.1], [0.1, 0.2, 0.3]))
    assert not rising["improved_rises_then_falls"] and rising["improved_peak"] == 4
    assert rising["closeness"] == pytest.approx(1 + 0.5)


# The study on small data and on Adult ---------------------------------------------------------------


def synthetic(n: int = 400, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    return pl.DataFrame(
        {
            "a": a,
            "b": (a + rng.integers(0, 2, n)) % 4,
            "c": rng.integers(0, 3, n),
            "d": rng.choice(["x", "y", "z"], n),
            "z": rng.choice(["p", "q"], n),
            "s": rng.choice(["s1", "s2", "s3", "s4", "s5"], n),
        }
    )


def test_readings_table_never_claims_more_than_the_bound():
    table = read_table(synthetic())
    matrix = correlation_matrix(table, list(synthetic().columns), "phi2")
    readings = diversity_readings(
        table, matrix, sensitive="s", sizes=(1, 3), n_columns=(2, 3), ls=(2, 3, 4), min_bucket_size=20
    )
    assert readings.height == 2 * 2 * 2 * 3 * 3  # sizes x c x methods x readings x l
    done = readings.filter(pl.col("satisfied"))
    assert done.height > 0
    # a table made under a reading achieves l under it, and never more than the one-bucket bound
    for row in done.iter_rows(named=True):
        assert row[f"l_{row['reading']}"] >= row["l"] - 1e-9
        assert row[f"l_{row['reading']}"] <= row["single_bucket_l"] + 1e-9
        assert row["smallest"] >= 20
    # the strict reading is the most demanding: its l never exceeds the other readings' bound
    strict = readings.filter(pl.col("reading") == "strict")["single_bucket_l"]
    assert (strict <= readings.filter(pl.col("reading") == "none")["single_bucket_l"] + 1e-9).all()
    summary = reachable(readings, (2, 3, 4))
    assert summary["reading"].to_list() == ["strict", "bucket", "none"] * 2
    for row in summary.iter_rows(named=True):
        reached = [] if row["slicing reaches"] == "none" else row["slicing reaches"].split(", ")
        assert len(reached) == (
            0 if row["slicing buckets"] == "-" else len(row["slicing buckets"].split(", "))
        )


@pytest.mark.slow
def test_adult_single_bucket_bounds(shared_data):
    """On Adult (30,162 complete records, occupation sensitive) the strict reading caps l by the
    sensitive column alone: 7.47 with occupation alone, 3.89 with sex, 2.93 with sex and
    salary-class, 1 with education-num too; ignoring those quasi-identifiers leaves 7.47."""
    from sdckit.experiments.data import complete_records

    table = complete_records(read_table(shared_data("adult", "adult_full.csv"), missing_values=["?", ""]))
    names = [a.name for a in table.schema.attributes]
    matrix = correlation_matrix(table, names, "phi2")
    readings = diversity_readings(
        table, matrix, sensitive="occupation", sizes=(1, 2, 3, 4), n_columns=(2,), ls=(8,)
    )  # l = 8 is above every bound: only the bounds are computed
    assert not readings["satisfied"].any()
    bound = {
        (r["sensitive_column_size"], r["reading"]): r["single_bucket_l"]
        for r in readings.filter(pl.col("method") == "slicing").iter_rows(named=True)
    }
    top = 30162 / 4038  # Prof-specialty, the most frequent occupation
    assert bound[(1, "strict")] == pytest.approx(top)
    assert bound[(2, "strict")] == pytest.approx(3.8941, abs=1e-4)
    assert bound[(3, "strict")] == pytest.approx(2.9263, abs=1e-4)
    assert bound[(4, "strict")] == pytest.approx(1.0)
    for size in (1, 2, 3, 4):
        assert bound[(size, "none")] == pytest.approx(top)
        assert bound[(size, "bucket")] == pytest.approx(top)


# The command line -----------------------------------------------------------------------------------


def _invoke(tmp_path, *options):
    data = tmp_path / "data.csv"
    if not data.exists():
        synthetic().write_csv(data)
    output = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "experiment",
            "slicing",
            "--data",
            str(data),
            "--output",
            str(output),
            "--sensitive",
            "s",
            "-q",
            *options,
        ],
    )
    return result, output


@pytest.mark.slow
def test_cli_study(tmp_path):
    result, output = _invoke(
        tmp_path, "--study", "--runs", "2", "--columns", "2-4", "--study-sizes", "1,2",
        "--readings-columns", "2", "--ls", "2,3", "--min-bucket-size", "20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert {p.name for p in output.iterdir()} == {
        "study.csv", "curves.csv", "readings.csv", "results.md", "figure2.png", "summary.json",
    }  # fmt: skip
    figures = json.loads((output / "summary.json").read_text())
    assert len(figures["grid"]) == 3 * 3 * 2  # measures x averagings x sizes
    assert figures["closest"] == figures["grid"][0]
    text = (output / "results.md").read_text()
    assert "Which combination reproduces the paper's two trends" in text
    assert "l-diversity under each reading of tuple matching" in text
    assert (output / "figure2.png").stat().st_size > 1000


def test_cli_measure_averaging_and_matching(tmp_path):
    result, output = _invoke(
        tmp_path, "--runs", "2", "--columns", "2,3", "--sensitive-column-size", "2", "--ls", "2",
        "--min-bucket-size", "20", "--correlation", "cramers-v", "--averaging", "pairs", "--matching", "none",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads((output / "summary.json").read_text())
    assert figures["parameters"]["correlation"] == "cramers-v"
    assert figures["parameters"]["matching"] == "none"
    rows = pl.DataFrame(figures["correlation"])
    assert rows["average_correlation"].to_list() == rows["pair_weighted"].to_list()
    diversity = pl.DataFrame(figures["diversity"]).filter(pl.col("satisfied"))
    assert diversity.height > 0 and diversity["l_strict"].is_not_null().all()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--correlation", "spearman"], ["--correlation", "phi2, pearson, cramers-v"]),
        (["--averaging", "median"], ["--averaging", "lone-zero"]),
        (["--matching", "loose"], ["--matching", "strict, bucket, none"]),
        (["--study-sizes", "1-2"], ["--study-sizes", "needs --study"]),
        (["--readings-columns", "2"], ["--readings-columns", "needs --study"]),
        (["--study", "--matching", "none"], ["--matching", "does not apply to --study"]),
        (["--study", "--averaging", "pairs"], ["--averaging", "does not apply to --study"]),
        (["--study", "--sensitive-column-size", "2"], ["--sensitive-column-size", "does not apply"]),
        (["--study", "--study-sizes", "0-2"], ["--study-sizes", "at least 1"]),
        (["--study", "--readings-columns", "1"], ["--readings-columns", "at least 2"]),
        (["--sensitive-column-size", "0"], ["--sensitive-column-size"]),
    ],
)
def test_cli_bad_study_options(tmp_path, options, words):
    result, output = _invoke(tmp_path, *options)
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert text.startswith("error:"), text
    for word in words:
        assert word in text, (word, text)
    assert not output.exists()
