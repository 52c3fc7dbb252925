"""Camouflage over a set Π of possible datasets (sdckit.query.camouflage), tested as an adversary.

The data is built here; every expected value is computed with plain polars/numpy on the true data
(or by brute force over Π read back through answers), never with the module's functions. The
attacks: the midpoint and the width of a one-record sum, a count that isolates a record and
asks for its confidential category, and the claim that every answer is a function of Π only.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oracles import query_filter
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.query.camouflage import Camouflage
from sdckit.query.engine import Engine
from sdckit.query.errors import Refused
from sdckit.query.language import check_query, parse_query

SECRET = bytes(range(32))
OTHER_SECRET = bytes(range(1, 33))
SOURCE = "5f0c6e1d" * 8
WIDTH = 0.2
CONFIDENTIAL = ["income", "dropout", "grade"]
RECORDS = 60
GRADES = ["A", "B", "C", "D"]

CONFIG = """\
attributes:
  id:        {role: quasi-identifier, kind: categorical}
  gender:    {role: quasi-identifier, kind: categorical}
  age_group: {role: quasi-identifier, kind: ordinal}
  region:    {role: quasi-identifier, kind: categorical}
  age:       {role: quasi-identifier, kind: numeric}
  income:    {role: sensitive, kind: numeric}
  dropout:   {role: sensitive, kind: categorical}
  grade:     {role: sensitive, kind: ordinal}
"""


def students() -> pl.DataFrame:
    """60 records: incomes with zeros, equal values of both signs, negatives, a very large one and
    two missing; a Yes/No dropout (one missing) and a 4-valued ordinal grade."""
    random = np.random.default_rng(20020101)
    income = (random.lognormal(9.0, 1.5, RECORDS) * np.where(random.random(RECORDS) < 0.2, -1, 1)).round(2)
    income[0:5] = 0.0
    income[5:12] = 1000.0
    income[12:15] = -1000.0
    income[15] = 2.5e7
    incomes: list[float | None] = income.tolist()
    incomes[16] = incomes[17] = None
    dropout: list[str | None] = random.choice(["Yes", "No"], RECORDS, p=[0.3, 0.7]).tolist()
    dropout[18] = None
    return pl.DataFrame(
        {
            "id": [f"r{index:02d}" for index in range(RECORDS)],
            "gender": random.choice(["F", "M"], RECORDS).tolist(),
            "age_group": random.choice(["18-24", "25-34", "35-49", "50+"], RECORDS).tolist(),
            "region": random.choice(["N", "S", "E", "W"], RECORDS).tolist(),
            "age": random.integers(18, 80, RECORDS).tolist(),
            "income": incomes,
            "dropout": dropout,
            "grade": random.choice(GRADES, RECORDS, p=[0.4, 0.3, 0.2, 0.1]).tolist(),
        },
        schema_overrides={"income": pl.Float64},
    )


def make_engine(directory: Path, frame: pl.DataFrame, name: str = "data") -> Engine:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "attributes.yaml").write_text(CONFIG)
    frame.write_csv(directory / f"{name}.csv")
    return Engine(load_config(directory / "attributes.yaml").read(directory / f"{name}.csv"))


def camouflage(engine: Engine, secret: bytes = SECRET, source: str = SOURCE, decoys: int = 1) -> Camouflage:
    return Camouflage(engine, CONFIDENTIAL, WIDTH, decoys, secret, source, {})


def ask(
    camo: Camouflage, body: dict, keys: list[tuple] | None = None, edges: list[float] | None = None
) -> dict:
    query = parse_query(body)
    check_query(query, camo.engine.kinds, camo.engine.types, "camouflage")
    return camo.answer(query, keys, edges)


def only(identifier: str) -> dict:
    return {"column": "id", "op": "=", "value": identifier}


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return students()


@pytest.fixture(scope="module")
def engine(frame: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return make_engine(tmp_path_factory.mktemp("camouflage"), frame)


@pytest.fixture(scope="module")
def camo(engine: Engine) -> Camouflage:
    return camouflage(engine)


def one_record_interval(camo: Camouflage, identifier: str) -> tuple[float, float]:
    answer = ask(camo, {"aggregate": "sum", "column": "income", "filters": [only(identifier)]})
    return answer["lower"], answer["upper"]


# --- the attacks on one record ---------------------------------------------------------------------


def test_a_one_record_sum_contains_the_value_and_its_midpoint_misses_it(camo, frame):
    errors = []
    for identifier, value in frame.select("id", "income").drop_nulls().iter_rows():
        lower, upper = one_record_interval(camo, identifier)
        assert lower <= value <= upper
        assert upper > lower
        midpoint = (lower + upper) / 2
        assert midpoint != value
        if value != 0:
            errors.append(abs(midpoint - value) / abs(value))
        else:
            assert lower < 0 < upper  # a zero is hidden among values of both signs
    errors = np.asarray(errors)
    # the error is spread, not a rounding slip: most midpoints miss by more than 1%
    assert np.mean(errors > 0.01) > 0.8
    assert np.std(errors) > 0.01


def test_the_width_does_not_reveal_the_magnitude(camo, frame):
    """Records with the same value get different intervals of different widths: under the old box
    [a − w|a|, a + w|a|] the width divided by 2w was |a| exactly; now it misses by far. (Near zero
    the width is about τ·log((1+w)/(1−w)) whatever the value; for large values it varies with the
    value's place in the interval, see test_the_value_is_at_a_uniform_place_of_its_interval.)"""
    for value in (1000.0, -1000.0, 0.0):
        identifiers = frame.filter(pl.col("income") == value)["id"].to_list()
        intervals = [one_record_interval(camo, identifier) for identifier in identifiers]
        widths = [upper - lower for lower, upper in intervals]
        assert len(set(intervals)) == len(intervals)
        assert len(set(widths)) == len(widths)
        guesses = np.asarray(widths) / (2 * WIDTH)  # the old scheme's inversion
        assert np.all(np.abs(guesses - abs(value)) > 0.01 * max(abs(value), 1.0))


def test_the_value_is_at_a_uniform_place_of_its_interval(tmp_path):
    """2,000 records of the same value: on the scale asinh(a/τ) (τ the median |a|, here that value)
    the value's place in its interval is uniform, so the interval says nothing about where in it
    the value is; the intervals' widths vary with that place only."""
    records = 2000
    frame = students().head(1).select(pl.all().repeat_by(records).explode())
    frame = frame.with_columns(
        pl.format("r{}", pl.int_range(records)).alias("id"), pl.lit(5000.0).alias("income")
    )
    camo = camouflage(make_engine(tmp_path, frame))
    scale = 5000.0
    places = []
    for identifier in frame["id"].head(400):
        lower, upper = one_record_interval(camo, identifier)
        low, high = math.asinh(lower / scale), math.asinh(upper / scale)
        assert high - low == pytest.approx(math.log((1 + WIDTH) / (1 - WIDTH)), rel=1e-9)
        places.append((math.asinh(1.0) - low) / (high - low))
    assert stats.kstest(places, "uniform").pvalue > 0.001


def test_a_count_isolating_a_record_answers_the_same_whichever_its_category(frame, tmp_path):
    """Two datasets that differ only in the target's dropout: every answer is the same, so the
    answers cannot tell them apart (each record's set of dropout values is {Yes, No})."""
    target = "r30"
    yes = frame.with_columns(
        pl.when(pl.col("id") == target).then(pl.lit("Yes")).otherwise(pl.col("dropout")).alias("dropout")
    )
    no = frame.with_columns(
        pl.when(pl.col("id") == target).then(pl.lit("No")).otherwise(pl.col("dropout")).alias("dropout")
    )
    first = camouflage(make_engine(tmp_path / "yes", yes))
    second = camouflage(make_engine(tmp_path / "no", no))
    dropout_yes = {"column": "dropout", "op": "=", "value": "Yes"}
    queries = [
        ({"aggregate": "count", "filters": [only(target), dropout_yes]}, None),
        ({"aggregate": "count", "filters": [only(target), {"not": dropout_yes}]}, None),
        ({"aggregate": "count", "filters": [dropout_yes]}, None),
        ({"aggregate": "sum", "column": "income", "filters": [dropout_yes]}, None),
        ({"aggregate": "sum", "column": "age", "filters": [only(target), dropout_yes]}, None),
        ({"aggregate": "mean", "column": "income", "filters": [{"not": dropout_yes}]}, None),
        ({"aggregate": "count", "group_by": ["gender", "dropout"]}, [("F", "No"), ("F", "Yes"), ("M", "No")]),
        ({"aggregate": "histogram", "column": "dropout"}, [("No",), ("Yes",)]),
    ]
    for body, keys in queries:
        assert ask(first, body, keys) == ask(second, body, keys), body
    assert ask(first, queries[0][0]) == {"lower": 0, "upper": 1}


def test_each_category_set_holds_the_value_and_its_decoys(frame, engine):
    """The 4-valued grade read back through one-record counts: the set of possible grades has the
    true grade and exactly ``decoys`` others."""
    for decoys in (1, 2, 3, 7):
        camo = camouflage(engine, decoys=decoys)
        for identifier, grade in frame.select("id", "grade").head(20).iter_rows():
            possible = set()
            for value in GRADES:
                body = {
                    "aggregate": "count",
                    "filters": [only(identifier), {"column": "grade", "op": "=", "value": value}],
                }
                answer = ask(camo, body)
                assert answer["lower"] == 0  # never certain
                if answer["upper"] == 1:
                    possible.add(value)
            assert grade in possible
            assert len(possible) == 1 + min(decoys, len(GRADES) - 1)


def test_missing_values_stay_missing(camo, frame):
    identifier = frame.filter(pl.col("income").is_null())["id"][0]
    assert one_record_interval(camo, identifier) == (0.0, 0.0)
    above = {"column": "income", "op": ">", "value": -1e12}
    assert ask(camo, {"aggregate": "count", "filters": [only(identifier), above]}) == {"lower": 0, "upper": 0}
    assert ask(camo, {"aggregate": "count", "filters": [only(identifier), {"not": above}]}) == {
        "lower": 1,
        "upper": 1,
    }
    assert ask(camo, {"aggregate": "mean", "column": "income", "filters": [only(identifier)]}) == {
        "lower": None,
        "upper": None,
    }


def test_public_attributes_are_answered_exactly(camo, frame):
    females = frame.filter(pl.col("gender") == "F")
    assert ask(camo, {"aggregate": "count", "filters": [{"column": "gender", "op": "=", "value": "F"}]}) == {
        "lower": females.height,
        "upper": females.height,
    }
    answer = ask(
        camo,
        {"aggregate": "sum", "column": "age", "filters": [{"column": "gender", "op": "=", "value": "F"}]},
    )
    assert answer["lower"] == answer["upper"] == pytest.approx(float(females["age"].sum()))
    answer = ask(camo, {"aggregate": "quantile", "column": "age", "quantile": 0.5})
    median = float(np.quantile(frame["age"].to_numpy(), 0.5, method="inverted_cdf"))
    assert answer == {"lower": median, "upper": median}


def test_a_quantile_over_a_confidential_query_set_is_refused(camo):
    for body in (
        {
            "aggregate": "quantile",
            "column": "age",
            "quantile": 0.5,
            "filters": [{"column": "income", "op": ">", "value": 0}],
        },
        {"aggregate": "quantile", "column": "income", "quantile": 0.5, "group_by": ["dropout"]},
        {
            "aggregate": "quantile",
            "column": "income",
            "quantile": 0.5,
            "filters": [{"not": {"column": "grade", "op": "in", "value": GRADES}}],
        },
    ):
        with pytest.raises(Refused, match="quantile") as raised:
            ask(camo, body, [("No",), ("Yes",)] if body.get("group_by") else None)
        assert raised.value.reason == "not_supported"


def test_answers_have_the_shapes_of_the_service(camo):
    grouped = ask(camo, {"aggregate": "count", "group_by": ["region", "grade"]}, [("N", "A"), ("S", "D")])
    assert [group["key"] for group in grouped["groups"]] == [
        {"region": "N", "grade": "A"},
        {"region": "S", "grade": "D"},
    ]
    assert all(set(group) == {"key", "lower", "upper"} for group in grouped["groups"])
    assert all(isinstance(group["lower"], int) for group in grouped["groups"])
    edges = [-1000.0, 0.0, 1000.0, 1e9]
    histogram = ask(camo, {"aggregate": "histogram", "column": "income", "bins": edges}, None, edges)
    assert [group["key"] for group in histogram["groups"]] == [
        {"income": [-1000.0, 0.0]},
        {"income": [0.0, 1000.0]},
        {"income": [1000.0, 1e9]},
    ]
    assert set(ask(camo, {"aggregate": "sum", "column": "income"})) == {"lower", "upper"}


# --- every answer contains the truth -------------------------------------------------------------

LEAVES = [
    {"column": "gender", "op": "=", "value": "F"},
    {"column": "region", "op": "in", "value": ["N", "E"]},
    {"column": "age_group", "op": ">=", "value": "35-49"},
    {"column": "age", "op": "<", "value": 40},
    {"column": "id", "op": "=", "value": "r07"},
    {"column": "income", "op": ">", "value": 0},
    {"column": "income", "op": "<=", "value": 1000},
    {"column": "income", "op": ">=", "value": -1000},
    {"column": "income", "op": "<", "value": 20000.5},
    {"column": "income", "op": "=", "value": 0},
    {"column": "income", "op": "!=", "value": 1000},
    {"column": "income", "op": "in", "value": [0, 1000, 3]},
    {"column": "dropout", "op": "=", "value": "Yes"},
    {"column": "dropout", "op": "!=", "value": "Yes"},
    {"column": "grade", "op": "<", "value": "C"},
    {"column": "grade", "op": ">=", "value": "B"},
    {"column": "grade", "op": "in", "value": ["A", "D"]},
    {"column": "grade", "op": "=", "value": "D"},
]

nodes = st.recursive(
    st.sampled_from(LEAVES),
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda items: {"and": items}),
        st.lists(children, min_size=1, max_size=3).map(lambda items: {"or": items}),
        children.map(lambda item: {"not": item}),
    ),
    max_leaves=5,
)


def mentions_confidential(node: dict) -> bool:
    if "and" in node or "or" in node:
        return any(mentions_confidential(child) for child in node.get("and", node.get("or", [])))
    if "not" in node:
        return mentions_confidential(node["not"])
    return node["column"] in CONFIDENTIAL


def true_value(aggregate: str, rows: pl.DataFrame, column: str | None, alpha: float) -> float | None:
    if aggregate == "count":
        return float(rows.height)
    values = rows[column].drop_nulls().cast(pl.Float64).to_numpy()
    if aggregate == "sum":
        return float(values.sum())
    if len(values) == 0:
        return None
    if aggregate == "mean":
        return float(values.mean())
    return float(np.quantile(values, alpha, method="inverted_cdf"))


def assert_contains(answer: dict, truth: float | None, scale: float) -> None:
    if truth is None:
        return
    tolerance = 1e-9 * scale
    assert answer["lower"] is not None
    assert answer["lower"] - tolerance <= truth <= answer["upper"] + tolerance, (answer, truth)


@settings(max_examples=150, derandomize=True)
@given(
    filters=st.lists(nodes, max_size=2),
    aggregate=st.sampled_from(["count", "sum", "mean", "quantile"]),
    column=st.sampled_from(["income", "age"]),
    group_by=st.sampled_from(
        [[], ["gender"], ["dropout"], ["grade"], ["gender", "dropout"], ["region", "grade"]]
    ),
    alpha=st.floats(0.05, 0.95),
)
def test_every_answer_contains_the_true_value(camo, frame, filters, aggregate, column, group_by, alpha):
    body: dict = {"aggregate": aggregate, "filters": filters, "group_by": group_by}
    if aggregate != "count":
        body["column"] = column
    if aggregate == "quantile":
        body["quantile"] = alpha
    keys = list(
        itertools.product(*[sorted(frame[name].drop_nulls().unique().to_list()) for name in group_by])
    )
    confidential = any(mentions_confidential(node) for node in filters) or any(
        name in CONFIDENTIAL for name in group_by
    )
    if aggregate == "quantile" and confidential:
        with pytest.raises(Refused):
            ask(camo, body, keys or None)
        return
    answer = ask(camo, body, keys or None)
    selected = frame.filter(pl.all_horizontal([query_filter(node) for node in filters] + [pl.lit(True)]))
    scale = 1.0 + float(frame[column].abs().sum()) * 2
    if not group_by:
        assert_contains(answer, true_value(aggregate, selected, column, alpha), scale)
        return
    assert len(answer["groups"]) == len(keys)
    for group, key in zip(answer["groups"], keys, strict=True):
        assert group["key"] == dict(zip(group_by, key, strict=True))
        rows = selected.filter(
            pl.all_horizontal([pl.col(name) == value for name, value in group["key"].items()])
        )
        assert_contains(group, true_value(aggregate, rows, column, alpha), scale)
        if aggregate == "count":
            assert isinstance(group["lower"], int) and group["lower"] <= group["upper"]


EDGES = [
    [-1e9, 0.0, 1e9],
    [-1000.0, 0.0, 1000.0, 5000.0],
    [0.0, 1000.0],
    [-50000.0, -1000.0, -1.0, 1.0, 999.0, 1001.0, 30000.0, 2.5e7],
    [18.0, 30.0, 45.0, 80.0],
]


def in_bins(values: pl.Expr, low: float, high: float, last: bool) -> pl.Expr:
    return ((values >= low) & ((values <= high) if last else (values < high))).fill_null(False)


@settings(max_examples=60, derandomize=True)
@given(
    filters=st.lists(nodes, max_size=2),
    edges=st.sampled_from(EDGES),
    column=st.sampled_from(["income", "age"]),
)
def test_every_histogram_bin_contains_the_true_count(camo, frame, filters, edges, column):
    answer = ask(
        camo, {"aggregate": "histogram", "column": column, "bins": edges, "filters": filters}, None, edges
    )
    selected = frame.filter(pl.all_horizontal([query_filter(node) for node in filters] + [pl.lit(True)]))
    bins = len(edges) - 1
    for index, group in enumerate(answer["groups"]):
        truth = selected.filter(
            in_bins(pl.col(column), edges[index], edges[index + 1], index == bins - 1)
        ).height
        assert group["lower"] <= truth <= group["upper"]
        if column == "age" and not any(mentions_confidential(node) for node in filters):
            assert group["lower"] == group["upper"]  # public: exact


@settings(max_examples=40, derandomize=True)
@given(filters=st.lists(nodes, max_size=2), column=st.sampled_from(["grade", "dropout", "gender"]))
def test_every_category_count_contains_the_true_count(camo, frame, filters, column):
    keys = [(value,) for value in sorted(frame[column].drop_nulls().unique().to_list())]
    answer = ask(camo, {"aggregate": "histogram", "column": column, "filters": filters}, keys)
    selected = frame.filter(pl.all_horizontal([query_filter(node) for node in filters] + [pl.lit(True)]))
    for group, (value,) in zip(answer["groups"], keys, strict=True):
        assert group["key"] == {column: value}
        truth = selected.filter(pl.col(column) == value).height
        assert group["lower"] <= truth <= group["upper"]


# --- every answer is a function of Π ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, Camouflage]:
    frame = (
        students()
        .head(4)
        .with_columns(
            pl.Series("income", [1200.0, -300.0, 0.0, 45000.0]),
            pl.Series("gender", ["F", "M", "F", "F"]),
            pl.Series("dropout", ["Yes", "No", "No", "Yes"]),
        )
    )
    return frame, camouflage(make_engine(tmp_path_factory.mktemp("tiny"), frame))


def test_a_sum_is_exactly_the_extremes_over_the_corners_of_pi(tiny):
    frame, camo = tiny
    intervals = {identifier: one_record_interval(camo, identifier) for identifier in frame["id"]}
    for filters in (
        [],
        [{"column": "gender", "op": "=", "value": "F"}],
        [{"column": "id", "op": "in", "value": ["r00", "r01"]}],
    ):
        members = frame.filter(pl.all_horizontal([query_filter(node) for node in filters] + [pl.lit(True)]))[
            "id"
        ]
        corners = [
            sum(choice) for choice in itertools.product(*[intervals[identifier] for identifier in members])
        ]
        answer = ask(camo, {"aggregate": "sum", "column": "income", "filters": filters})
        assert answer["lower"] == pytest.approx(min(corners), rel=1e-12)
        assert answer["upper"] == pytest.approx(max(corners), rel=1e-12)
        means = [
            np.mean(choice)
            for choice in itertools.product(*[intervals[identifier] for identifier in members])
        ]
        answer = ask(camo, {"aggregate": "mean", "column": "income", "filters": filters})
        assert answer["lower"] == pytest.approx(min(means), rel=1e-12)
        assert answer["upper"] == pytest.approx(max(means), rel=1e-12)


def test_answers_over_a_confidential_category_are_the_extremes_over_pi(tiny):
    """Each record's dropout may be Yes or No: over the 2^4 datasets of Π (and the corners of the
    income intervals), the count, sum and mean of the records with dropout Yes range exactly over
    the answers."""
    frame, camo = tiny
    intervals = [one_record_interval(camo, identifier) for identifier in frame["id"]]
    counts, sums, means = [], [], []
    for members in itertools.product([False, True], repeat=4):
        chosen = [interval for interval, member in zip(intervals, members, strict=True) if member]
        counts.append(len(chosen))
        for values in itertools.product(*chosen):
            sums.append(sum(values))
            if values:
                means.append(np.mean(values))
    dropout_yes = [{"column": "dropout", "op": "=", "value": "Yes"}]
    assert ask(camo, {"aggregate": "count", "filters": dropout_yes}) == {
        "lower": min(counts),
        "upper": max(counts),
    }
    answer = ask(camo, {"aggregate": "sum", "column": "income", "filters": dropout_yes})
    assert (answer["lower"], answer["upper"]) == pytest.approx((min(sums), max(sums)), rel=1e-12)
    answer = ask(camo, {"aggregate": "mean", "column": "income", "filters": dropout_yes})
    assert (answer["lower"], answer["upper"]) == pytest.approx((min(means), max(means)), rel=1e-12)


def test_a_count_over_a_confidential_threshold_is_the_extremes_over_pi(tiny):
    frame, camo = tiny
    intervals = [one_record_interval(camo, identifier) for identifier in frame["id"]]
    for threshold in (-500.0, 0.0, 1000.0, 1300.0, 50000.0):
        counts = [sum(value > threshold for value in values) for values in itertools.product(*intervals)]
        answer = ask(
            camo, {"aggregate": "count", "filters": [{"column": "income", "op": ">", "value": threshold}]}
        )
        assert answer == {"lower": min(counts), "upper": max(counts)}


# --- Π is drawn once, from the secret and the source ------------------------------------------------

PROBES = [
    ({"aggregate": "count", "filters": [{"column": "income", "op": ">", "value": 1000}]}, None),
    ({"aggregate": "sum", "column": "income", "group_by": ["gender"]}, [("F",), ("M",)]),
    (
        {"aggregate": "mean", "column": "income", "filters": [{"column": "grade", "op": "<", "value": "C"}]},
        None,
    ),
    ({"aggregate": "histogram", "column": "grade"}, [(grade,) for grade in GRADES]),
]


def test_the_same_secret_and_source_give_the_same_answers_after_a_restart(camo, frame, tmp_path):
    again = camouflage(make_engine(tmp_path, frame))  # the data read again, Π drawn again
    for body, keys in PROBES:
        assert ask(again, body, keys) == ask(camo, body, keys)
    for identifier in frame["id"].head(10):
        assert one_record_interval(again, identifier) == one_record_interval(camo, identifier)


def grade_counts(camo: Camouflage, frame: pl.DataFrame) -> list:
    """The count of each of the first 30 records with each grade."""
    return [
        ask(
            camo,
            {"aggregate": "count", "filters": [only(identifier), {"column": "grade", "op": "=", "value": g}]},
        )
        for identifier in frame["id"].head(30)
        for g in GRADES
    ]


def test_another_secret_or_source_gives_another_pi(camo, engine, frame):
    other_secret = camouflage(engine, secret=OTHER_SECRET)
    other_source = camouflage(engine, source="0" * 64)
    identifiers = frame.filter(pl.col("income").is_not_null())["id"].head(10)
    for other in (other_secret, other_source):
        for identifier in identifiers:
            assert one_record_interval(other, identifier) != one_record_interval(camo, identifier)
        assert grade_counts(other, frame) != grade_counts(camo, frame)


# --- configuration -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidential", "width", "decoys", "match"),
    [
        (["salary"], 0.2, 1, "'salary'"),
        (["income"], 0.0, 1, "width"),
        (["income"], 1.0, 1, "width"),
        (["income"], 1.5, 1, "width"),
        (["dropout"], 0.2, 0, "decoys"),
    ],
)
def test_bad_settings_are_refused_naming_them(engine, confidential, width, decoys, match):
    with pytest.raises(ConfigError, match=match):
        Camouflage(engine, confidential, width, decoys, SECRET, SOURCE, {})
