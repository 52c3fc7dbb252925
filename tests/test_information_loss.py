"""Utility measures of a release against its original (``sdckit utility numeric|tables|classifier``):
numeric information loss against hand-computed values and direct numpy formulas, the reading of
released labels, frequency-table distances against a counting oracle, the classifier utility, and
the commands (outputs, bad input: exit 2 and nothing written)."""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError, InputError
from sdckit.measures import UTILITY_MEASURES, run_measure
from sdckit.utility.frequencies import distances
from sdckit.utility.information_loss import numeric_information_loss
from sdckit.utility.released import numeric_view, parse_label

runner = CliRunner()
NUMERIC_CONFIG = {
    "attributes": {"a": {"role": "quasi-identifier", "kind": "numeric"}, "b": {"kind": "numeric"}}
}


def table(frame: pl.DataFrame, config: dict | None = None, release: bool = False):
    settings = parse_config(config or NUMERIC_CONFIG)
    return settings.read_release(frame) if release else settings.read(frame)


def numeric(original: pl.DataFrame, released: pl.DataFrame, **params):
    return run_measure(
        "numeric", table(original), table(released, release=True), params=params, group="utility"
    )


# Numeric information loss: the 3×2 example by hand ----------------------------------------------

X = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 3.0]])
Y = np.array([[1.0, 2.0], [2.0, 4.0], [4.0, 4.0]])


def test_hand_computed_three_by_two():
    """X has variances 1, 1 and covariance 1/2 (r = 1/2); X′ differs in its last record (+1, +1):
    variances 7/3, 4/3, covariance 4/3, r′ = 4/√28. Every figure worked out by hand."""
    result = numeric_information_loss(X, Y, factors=1)
    f = result.figures
    assert f["X"] == pytest.approx({"mse": 1 / 3, "mae": 1 / 3, "mean_variation": (1 / 3 + 1 / 3) / 6})
    assert f["means"] == pytest.approx({"mse": 1 / 9, "mae": 1 / 3, "mean_variation": (1 / 6 + 1 / 9) / 2})
    # V: (1 vs 7/3), (1/2 vs 4/3), (1 vs 4/3)
    assert f["V"] == pytest.approx({"mse": 93 / 108, "mae": 5 / 6, "mean_variation": 10 / 9})
    assert f["variances"] == pytest.approx(
        {"mse": (16 / 9 + 1 / 9) / 2, "mae": (4 / 3 + 1 / 3) / 2, "mean_variation": (4 / 3 + 1 / 3) / 2}
    )
    r, r2 = 0.5, 4 / math.sqrt(28)
    assert f["R"] == pytest.approx({"mse": (r - r2) ** 2, "mae": r2 - r, "mean_variation": (r2 - r) / r})
    # p = 2: eigenvalues 1 ± r, vectors (1, 1)/√2 and (1, −1)/√2; loadings √((1 ± r)/2)
    w = np.array([(1 + r) / 2, (1 - r) / 2])
    a = np.array([math.sqrt((1 + r) / 2), math.sqrt((1 - r) / 2)])
    b = np.array([math.sqrt((1 + r2) / 2), math.sqrt((1 - r2) / 2)])
    assert f["RF"]["mse"] == pytest.approx((w * 2 * (a - b) ** 2).sum() / 4)
    assert f["RF"]["mae"] == pytest.approx((w * 2 * abs(a - b)).sum() / 4)
    assert f["RF"]["mean_variation"] == pytest.approx((w * 2 * abs(a - b) / a).sum() / 4)
    c, c2 = (1 + r) / 2, (1 + r2) / 2  # communality of each variable on the first factor
    assert f["C"] == pytest.approx({"mse": (c - c2) ** 2, "mae": c2 - c, "mean_variation": (c2 - c) / c})
    fa = np.array([1 / math.sqrt(2 * (1 + r)), 1 / math.sqrt(2 * (1 - r))])
    fb = np.array([1 / math.sqrt(2 * (1 + r2)), 1 / math.sqrt(2 * (1 - r2))])
    assert f["F"]["mse"] == pytest.approx((w * 2 * (fa - fb) ** 2).sum() / 4)
    assert f["F"]["mae"] == pytest.approx((w * 2 * abs(fa - fb)).sum() / 4)
    assert f["F"]["mean_variation"] == pytest.approx((w * 2 * abs(fa - fb) / fa).sum() / 4)
    # sdcMicro: sd of the original is (1, 1); |d| sums to 2
    assert result.il1 == pytest.approx(2 / math.sqrt(2) / 6)
    assert result.il1s == pytest.approx(math.sqrt(2))
    assert result.eigen == pytest.approx((r2 - r) / (1 + r) + (r2 - r) / (1 - r))
    expected_score = 100 * np.mean([1 / 9, 5 / 36, 10 / 9, 5 / 6, r2 - r])
    assert result.il_score == pytest.approx(expected_score)


def test_identical_data_lose_nothing():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 4)) @ rng.normal(size=(4, 4))
    result = numeric_information_loss(x, x.copy())
    for pair, figures in result.figures.items():
        assert figures["mse"] == pytest.approx(0, abs=1e-18), pair
        assert figures["mae"] == pytest.approx(0, abs=1e-9), pair
    assert result.il1 == 0 and result.eigen == pytest.approx(0, abs=1e-12)


# Numeric information loss against direct numpy formulas ---------------------------------------


def oracle(x: np.ndarray, y: np.ndarray, m: int) -> dict[str, dict[str, float]]:
    """The tutorial's table written term by term; the PCA quantities from their definitions on the
    data: loadings as correlations of each variable with the component scores, score coefficients as
    the regression of the unit-variance scores on the standardized variables."""
    n, p = x.shape

    def pca(data, reference=None):
        z = (data - data.mean(0)) / data.std(0, ddof=1)
        _, _, vt = np.linalg.svd(z, full_matrices=False)
        vectors = vt.T
        if reference is None:
            vectors = vectors * np.sign(vectors[np.abs(vectors).argmax(0), np.arange(p)])
        else:
            vectors = vectors * np.where((vectors * reference).sum(0) < 0, -1, 1)
        scores = z @ vectors
        eigenvalues = scores.var(0, ddof=1)
        rf = np.array([[np.corrcoef(data[:, i], scores[:, j])[0, 1] for j in range(p)] for i in range(p)])
        unit = scores / scores.std(0, ddof=1)
        coefficients = np.linalg.lstsq(z, unit, rcond=None)[0]
        return vectors, eigenvalues, rf, coefficients

    vx, lx, rfx, fx = pca(x)
    _, ly, rfy, fy = pca(y, vx)
    w = lx / lx.sum()
    vxm, vym = np.cov(x.T), np.cov(y.T)
    rxm, rym = np.corrcoef(x.T), np.corrcoef(y.T)

    def three(pairs):
        pairs = list(pairs)
        kept = [(a, b, wt) for a, b, wt in pairs if a != 0]
        return {
            "mse": sum(wt * (a - b) ** 2 for a, b, wt in pairs) / len(pairs),
            "mae": sum(wt * abs(a - b) for a, b, wt in pairs) / len(pairs),
            "mean_variation": sum(wt * abs(a - b) / abs(a) for a, b, wt in kept) / len(kept),
        }

    cx, cy = (rfx[:, :m] ** 2).sum(1), (rfy[:, :m] ** 2).sum(1)
    return {
        "X": three((x[i, j], y[i, j], 1) for i in range(n) for j in range(p)),
        "means": three((x[:, j].mean(), y[:, j].mean(), 1) for j in range(p)),
        "V": three((vxm[i, j], vym[i, j], 1) for j in range(p) for i in range(j + 1)),
        "variances": three((vxm[j, j], vym[j, j], 1) for j in range(p)),
        "R": three((rxm[i, j], rym[i, j], 1) for j in range(p) for i in range(j)),
        "RF": three((rfx[i, j], rfy[i, j], w[j]) for j in range(p) for i in range(p)),
        "C": three((cx[i], cy[i], 1) for i in range(p)),
        "F": three((fx[i, j], fy[i, j], w[j]) for j in range(p) for i in range(p)),
        "il1": sum(
            abs(x[i, j] - y[i, j]) / (math.sqrt(2) * x[:, j].std(ddof=1)) for i in range(n) for j in range(p)
        )
        / (n * p),
        "eigen": sum(abs(a - b) / a for a, b in zip(lx, ly, strict=True)),
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_numeric_measures_match_direct_formulas(seed):
    rng = np.random.default_rng(seed)
    n, p = 60, 4
    x = rng.normal(10, 3, size=(n, p)) @ np.triu(rng.uniform(0.2, 1, size=(p, p)))
    y = x + rng.normal(0, 0.5, size=(n, p))
    result = numeric_information_loss(x, y, factors=2)
    expected = oracle(x, y, 2)
    for pair in ("X", "means", "V", "variances", "R", "RF", "C", "F"):
        assert result.figures[pair] == pytest.approx(expected[pair], rel=1e-7, abs=1e-12), pair
    assert result.il1 == pytest.approx(expected["il1"])
    assert result.eigen == pytest.approx(expected["eigen"])
    assert result.factors == 2


def test_kaiser_rule_chooses_the_factors_and_zero_originals_are_left_out():
    x = np.array([[0.0, 1.0, 5.0], [1.0, 2.0, 4.0], [2.0, 4.0, 4.0], [3.0, 3.0, 1.0]])
    y = x + np.array([[1.0, 0, 0], [0, 0, 0], [0, 1.0, 0], [0, 0, 0]])
    result = numeric_information_loss(x, y)
    eigenvalues = np.linalg.eigvalsh(np.corrcoef(x.T))
    assert result.factors == max(1, int((eigenvalues > 1).sum()))
    # X: the cell x = 0 changed by 1 is left out of the mean variation; 11 terms kept
    assert result.figures["X"]["mean_variation"] == pytest.approx((1 / 4) / 11)
    assert result.figures["X"]["mae"] == pytest.approx(2 / 12)


# Released values: range labels and suppression ------------------------------------------------


@pytest.mark.parametrize(
    ("label", "number"),
    [
        ("1986", 1986.0),
        ("-2.5", -2.5),
        ("[1984, 1988)", 1986.0),
        ("(0, 10]", 5.0),
        ("1991-1994", 1992.5),
        ("-4--2", -3.0),
        ("<1980", 1980.0),
        (">=2008", 2008.0),
        ("19**", 1949.5),
        ("{1,2,6}", 3.0),
        ("*", None),
        ("", None),
    ],
)
def test_labels_map_to_a_representative_number(label, number):
    assert parse_label(label) == number


def test_numeric_view_counts_labels_and_suppressed_values():
    view = numeric_view(pl.Series("age", ["30", "[30, 40)", None, "*", "1-3", "30"]))
    np.testing.assert_array_equal(view.values, [30, 35, np.nan, np.nan, 2, 30])
    assert (view.ranges, view.suppressed) == (2, 2)
    with pytest.raises(InputError, match="attribute 'age'.*'old'"):
        numeric_view(pl.Series("age", ["30", "old"]), source="r.csv")


def test_a_generalized_release_is_read_through_midpoints_and_means():
    original = pl.DataFrame({"a": [1, 2, 3, 4], "b": [10.0, 20.0, 30.0, 50.0]})
    released = pl.DataFrame({"a": ["[0, 2)", "[2, 4)", "*", "4"], "b": [10.0, None, 30.0, 50.0]})
    result = numeric(original, released)
    y = np.array([[1, 10], [3, 27.5], [2.5, 30], [4, 50]])
    expected = numeric_information_loss(original.to_numpy().astype(float), y)
    assert result.figures == expected.figures
    assert result.suppressed == {"a": 1, "b": 1} and result.ranges == {"a": 2, "b": 0}
    omitted = numeric(original, released, suppressed="omit")
    rows = [0, 3]
    assert omitted.records == 2 and omitted.left_out == 2
    assert omitted.figures["X"] == pytest.approx(
        numeric_information_loss(original.to_numpy().astype(float)[rows], y[rows]).figures["X"]
    )


@pytest.mark.parametrize(
    ("released", "params", "error", "words"),
    [
        (pl.DataFrame({"a": [1, 2, 3], "b": [1.0, 2.0, 3.0]}), {}, InputError, "3 records.*has 4"),
        (
            table(pl.DataFrame({"a": [1, 2, 3, 4]}), {"attributes": {"a": {"kind": "numeric"}}}, True),
            {},
            InputError,
            "'b' is not a column of the release",
        ),
        (pl.DataFrame({"a": ["1", "x", "3", "4"], "b": [1.0] * 4}), {}, InputError, "attribute 'a'.*'x'"),
        (pl.DataFrame({"a": [1, 2, 3, 4], "b": [1.0] * 4}), {"attributes": "a,c"}, ConfigError, "'c' is not"),
        (pl.DataFrame({"a": [1, 2, 3, 4], "b": [1.0] * 4}), {"factors": 3}, InputError, "factors"),
    ],
)
def test_numeric_bad_input(released, params, error, words):
    original = table(pl.DataFrame({"a": [1, 2, 3, 4], "b": [1.0, 3.0, 2.0, 5.0]}))
    if isinstance(released, pl.DataFrame):
        released = table(released, release=True)
    with pytest.raises(error, match=words):
        run_measure("numeric", original, released, params=params, group="utility")


def test_text_in_the_original_is_not_numeric():
    config = {"attributes": {"a": {"role": "quasi-identifier", "kind": "categorical"}}}
    original = table(pl.DataFrame({"a": ["x", "y", "z"]}), config)
    with pytest.raises(InputError, match="attribute 'a'.*not numeric"):
        run_measure("numeric", original, original, params={"attributes": "a"}, group="utility")


# Frequency tables ------------------------------------------------------------------------------


def counting_oracle(first: list, second: list) -> tuple[float, float]:
    p, q = Counter(first), Counter(second)
    cells = set(p) | set(q)
    tv = 0.5 * sum(abs(p[c] / len(first) - q[c] / len(second)) for c in cells)
    h = math.sqrt(
        0.5 * sum((math.sqrt(p[c] / len(first)) - math.sqrt(q[c] / len(second))) ** 2 for c in cells)
    )
    return tv, h


CATEGORICAL = {
    "attributes": {
        "g": {"role": "quasi-identifier", "kind": "categorical"},
        "e": {"role": "quasi-identifier", "kind": "categorical"},
        "s": {"role": "sensitive", "kind": "categorical"},
    }
}


def test_tables_match_counting():
    rng = np.random.default_rng(5)
    values = {"g": ["F", "M"], "e": ["a", "b", "c", None], "s": ["x", "y", "*"]}
    original = pl.DataFrame({k: list(rng.choice(v, 80)) for k, v in values.items()})
    released = pl.DataFrame({k: list(rng.choice(v, 50)) for k, v in values.items()})
    result = run_measure(  # released values compared as they are written (the oracle counts labels)
        "tables",
        table(original, CATEGORICAL),
        table(released, CATEGORICAL, True),
        params={"generalized": "labels"},
        group="utility",
    )
    summary = UTILITY_MEASURES.get("tables").summary(result)
    for name in ("g", "e", "s"):
        assert result.one_way[name] == pytest.approx(
            counting_oracle(original[name].to_list(), released[name].to_list())
        )
    for first, second in combinations(("g", "e", "s"), 2):
        assert result.two_way[(first, second)] == pytest.approx(
            counting_oracle(
                list(zip(original[first], original[second], strict=True)),
                list(zip(released[first], released[second], strict=True)),
            )
        )
    tv_one = [result.one_way[n][0] for n in "ges"]
    h_two = [value[1] for value in result.two_way.values()]
    assert summary["total_variation"]["one_way_mean"] == pytest.approx(np.mean(tv_one), abs=1e-6)
    assert summary["total_variation"]["one_way_max"] == pytest.approx(max(tv_one), abs=1e-6)
    assert summary["hellinger"]["two_way_mean"] == pytest.approx(np.mean(h_two), abs=1e-6)
    assert summary["hellinger"]["two_way_max"] == pytest.approx(max(h_two), abs=1e-6)
    assert [item["attribute"] for item in summary["one_way"]] == ["g", "e", "s"]
    assert len(summary["two_way"]) == 3


def test_tables_identical_zero_and_disjoint_one():
    original = table(
        pl.DataFrame({"g": ["F", "M", "M"], "e": ["a", "a", "b"], "s": ["x", "y", "x"]}), CATEGORICAL
    )
    same = run_measure("tables", original, original, group="utility")
    assert all(value == (0.0, 0.0) for value in same.one_way.values())
    assert all(value == pytest.approx((0.0, 0.0), abs=1e-12) for value in same.two_way.values())
    other = table(pl.DataFrame({"g": ["*"] * 2, "e": ["[a-b]"] * 2, "s": ["z"] * 2}), CATEGORICAL, True)
    apart = run_measure("tables", original, other, params={"generalized": "labels"}, group="utility")
    assert all(
        value == pytest.approx((1.0, 1.0)) for value in [*apart.one_way.values(), *apart.two_way.values()]
    )


# Classifier utility ------------------------------------------------------------------------------


CLASSIFIER_CONFIG = {
    "attributes": {
        "x1": {"role": "quasi-identifier", "kind": "numeric"},
        "x2": {"role": "quasi-identifier", "kind": "categorical"},
        "y": {"role": "sensitive", "kind": "categorical"},
    }
}


def classifier_data(n: int = 1500, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = rng.integers(0, 5, n)
    x2 = rng.choice(["a", "b", "c"], n)
    signal = (x1 >= 3) | (x2 == "c")
    noise = rng.random(n) < 0.05
    return pl.DataFrame({"x1": x1, "x2": x2, "y": np.where(signal ^ noise, "yes", "no")})


@pytest.mark.parametrize("model", ["tree", "forest", "logistic"])
def test_classifier_on_an_identical_release_loses_exactly_nothing(model):
    data = table(classifier_data(), CLASSIFIER_CONFIG)
    result = run_measure("classifier", data, data, params={"model": model, "seed": 4}, group="utility")
    assert result.accuracy_loss == 0.0
    assert result.accuracy_original > 0.9 and result.aligned
    assert result.test_records == 450 and result.training_original == result.training_release == 1050


def test_classifier_on_a_shuffled_target_falls_to_the_majority_rate():
    frame = classifier_data()
    shuffled = frame.with_columns(pl.Series("y", np.random.default_rng(9).permutation(frame["y"].to_numpy())))
    original, release = table(frame, CLASSIFIER_CONFIG), table(shuffled, CLASSIFIER_CONFIG, True)
    result = run_measure("classifier", original, release, params={"model": "forest"}, group="utility")
    assert result.accuracy_original > 0.9
    assert abs(result.accuracy_release - result.majority_rate) < 0.05
    assert result.accuracy_loss > 0.25


def test_classifier_reads_generalized_features_and_unaligned_releases():
    frame = classifier_data()
    generalized = frame.with_columns(
        pl.when(pl.col("x1") < 3).then(pl.lit("[0, 3)")).otherwise(pl.lit("[3, 5)")).alias("x1")
    )
    original, release = table(frame, CLASSIFIER_CONFIG), table(generalized, CLASSIFIER_CONFIG, True)
    result = run_measure("classifier", original, release, params={"model": "tree"}, group="utility")
    # the signal x1 >= 3 survives the recoding to midpoints 1.5 / 4: nothing of use is lost
    assert result.accuracy_release == pytest.approx(result.accuracy_original, abs=0.02)
    fewer = table(frame.head(700), CLASSIFIER_CONFIG, True)
    unaligned = run_measure("classifier", original, fewer, params={"model": "tree"}, group="utility")
    assert not unaligned.aligned and unaligned.training_release == 700


def test_classifier_bad_input():
    data = table(classifier_data(100), CLASSIFIER_CONFIG)
    with pytest.raises(ConfigError, match="target: 'z' is not an attribute"):
        run_measure("classifier", data, data, params={"target": "z"}, group="utility")
    no_target = table(
        classifier_data(100).drop("y"), {"attributes": {"x1": {"role": "quasi-identifier"}}}, True
    )
    with pytest.raises(InputError, match="'y' is not a column of the release"):
        run_measure("classifier", data, no_target, group="utility")


# The commands ----------------------------------------------------------------------------------

CLI_CONFIG = """attributes:
  id:     {role: identifier}
  age:    {role: quasi-identifier, kind: numeric}
  sex:    {role: quasi-identifier, kind: categorical}
  income: {role: sensitive, kind: numeric}
  flag:   {role: sensitive, kind: categorical}
"""


def write_files(directory: Path) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(2)
    n = 200
    age = rng.integers(20, 60, n)
    original = pl.DataFrame(
        {
            "id": np.arange(n),
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "income": np.round(age * 100 + rng.normal(0, 300, n), 1),
            "flag": rng.choice(["No", "Yes"], n, p=[0.8, 0.2]),
        }
    )
    low = (age // 10) * 10
    release = original.drop("id").with_columns(
        pl.Series("age", [f"[{lo}, {lo + 10})" for lo in low]),
        (pl.col("income") + 50.0).alias("income"),
    )
    paths = directory / "original.csv", directory / "release.csv", directory / "config.yaml"
    original.write_csv(paths[0])
    release.write_csv(paths[1])
    paths[2].write_text(CLI_CONFIG)
    return paths


def test_numeric_command_writes_the_summary(tmp_path):
    original, release, config = write_files(tmp_path)
    summary = tmp_path / "il.json"
    result = runner.invoke(
        app, ["utility", "numeric", str(original), str(release), "-c", str(config), "--summary", str(summary)]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    frame = pl.read_csv(original)
    x = frame.select("age", "income").to_numpy().astype(float)
    y = np.column_stack([(frame["age"] // 10 * 10 + 5).to_numpy(), frame["income"].to_numpy() + 50])
    expected = numeric_information_loss(x, y)
    assert figures["attributes"] == ["age", "income"] and figures["records"] == 200
    assert figures["released_ranges"] == {"age": 200, "income": 0}
    assert figures["measures"]["X"]["mae"] == pytest.approx(expected.figures["X"]["mae"], abs=1e-6)
    assert figures["measures"]["R"]["mse"] == pytest.approx(expected.figures["R"]["mse"], abs=1e-6)
    assert figures["il1"] == pytest.approx(expected.il1, abs=1e-6)
    assert figures["eigen"] == pytest.approx(expected.eigen, abs=1e-6)
    assert figures["measure"] == "numeric" and figures["parameters"]["suppressed"] == "mean"


def test_tables_and_classifier_commands(tmp_path):
    original, release, config = write_files(tmp_path)
    tables = tmp_path / "tables.json"
    result = runner.invoke(
        app,
        ["utility", "tables", str(original), str(release), "-c", str(config), "--summary", str(tables)]
        + ["--generalized", "labels"],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(tables.read_text())
    one_way = {item["attribute"]: item["total_variation"] for item in figures["one_way"]}
    assert one_way["sex"] == 0 and one_way["flag"] == 0 and one_way["age"] == 1
    assert figures["total_variation"]["one_way_max"] == 1
    accuracy = tmp_path / "accuracy.json"
    arguments = ["utility", "classifier", str(original), str(original), "-c", str(config)]
    result = runner.invoke(app, [*arguments, "--model", "tree", "--seed", "3", "--summary", str(accuracy)])
    assert result.exit_code == 0, result.output
    figures = json.loads(accuracy.read_text())
    assert figures["target"] == "income" and figures["accuracy_loss"] == 0
    assert figures["features"] == ["age", "sex"]


@pytest.mark.parametrize(
    ("command", "change", "words"),
    [
        ("numeric", lambda f: f.head(150), "150 records"),
        ("numeric", lambda f: f.drop("income"), "unknown attribute 'income'"),
        ("numeric", lambda f: f.with_columns(pl.lit("old").alias("age")), "'old'"),
        ("tables", lambda f: f.drop("flag"), "unknown attribute 'flag'"),
        ("classifier", lambda f: f.drop("sex"), "unknown attribute 'sex'"),
    ],
)
def test_commands_refuse_bad_releases(tmp_path, command, change, words):
    original, release, config = write_files(tmp_path)
    change(pl.read_csv(release)).write_csv(release)
    summary = tmp_path / "out.json"
    result = runner.invoke(
        app, ["utility", command, str(original), str(release), "-c", str(config), "--summary", str(summary)]
    )
    assert result.exit_code == 2, result.output
    assert words in result.output.replace("\n", " ")
    assert not summary.exists()


def test_commands_refuse_unknown_attributes_and_options(tmp_path):
    original, release, config = write_files(tmp_path)
    summary = tmp_path / "out.json"
    base = ["utility", "numeric", str(original), str(release), "-c", str(config), "--summary", str(summary)]
    result = runner.invoke(app, [*base, "--attributes", "age,weight"])
    assert result.exit_code == 2 and "'weight' is not an attribute" in result.output.replace("\n", " ")
    result = runner.invoke(app, [*base, "--model", "main"])
    assert result.exit_code == 2 and "propensity" in result.output
    assert not summary.exists()


# Properties ----------------------------------------------------------------------------------------

counts = st.lists(st.integers(0, 20), min_size=1, max_size=8)


@settings(max_examples=200)
@given(counts, counts)
def test_total_variation_and_hellinger_bound_each_other(first, second):
    """H² ≤ TV ≤ √2·H (Le Cam), both in [0, 1], symmetric, 0 exactly on equal distributions."""
    size = max(len(first), len(second))
    p = np.array(first + [0] * (size - len(first)), dtype=float)
    q = np.array(second + [0] * (size - len(second)), dtype=float)
    if p.sum() == 0 or q.sum() == 0:
        return
    tv, h = distances(p, q)
    assert 0 <= tv <= 1 + 1e-12 and 0 <= h <= 1 + 1e-12
    assert h**2 <= tv + 1e-12 and tv <= math.sqrt(2) * h + 1e-12
    assert (tv, h) == pytest.approx(distances(q, p))
    assert (tv == 0) == np.allclose(p / p.sum(), q / q.sum(), rtol=0, atol=0)


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.floats(0.01, 100), st.floats(-1000, 1000))
def test_correlation_measures_ignore_units(seed, scale, shift):
    """R, RF, C, F and eigen depend on correlations only: the same affine change of units of both
    files leaves them unchanged; X's squared error scales with the square of the unit."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 3)) @ rng.normal(size=(3, 3))
    y = x + rng.normal(0, 0.3, size=x.shape)
    base = numeric_information_loss(x, y, factors=1)
    moved = numeric_information_loss(x * scale + shift, y * scale + shift, factors=1)
    for pair in ("R", "RF", "C", "F"):
        assert moved.figures[pair]["mse"] == pytest.approx(base.figures[pair]["mse"], rel=1e-6, abs=1e-12)
    assert moved.eigen == pytest.approx(base.eigen, rel=1e-6)
    assert moved.il1 == pytest.approx(base.il1, rel=1e-9)
    assert moved.figures["X"]["mse"] == pytest.approx(base.figures["X"]["mse"] * scale**2, rel=1e-9)
