"""Quiet changes of meaning, decided and tested: spaces around text values, NaN written as text, and
sampling weights of 0, the same through every reader (CSV, Parquet, DataFrame) and every command's
library function (read, check, risk)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.config import parse_config
from sdckit.errors import InputError, SdcWarning
from sdckit.io import read_table
from sdckit.models import KAnonymity, check_table
from sdckit.risk.combined import combined_risk
from sdckit.table import Attribute, Kind


def read_quietly(source, **options):
    """The table and the SdcWarning messages given while reading it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_table(source, **options)
    return table, [str(item.message) for item in caught if issubclass(item.category, SdcWarning)]


def three_ways(tmp_path: Path, frame: pl.DataFrame):
    """The same text data as a CSV file, a Parquet file and a DataFrame."""
    csv, parquet = tmp_path / "data.csv", tmp_path / "data.parquet"
    frame.write_csv(csv)
    frame.write_parquet(parquet)
    return [(csv, str(csv)), (parquet, str(parquet)), (frame, "<data frame>")]


# Spaces around text values ------------------------------------------------------------------------


def test_spaces_around_categories_are_removed_with_a_warning(tmp_path):
    frame = pl.DataFrame(
        {
            "sex": [" Male ", "Male", "Female ", "\tFemale", "Male"],
            "age": [" 30", "40 ", "50", "60", "70"],
            "code": [" NA ", "x", "y", "z", "x"],
        }
    )
    for source, label in three_ways(tmp_path, frame):
        table, messages = read_quietly(source, attributes=[Attribute("age", kind=Kind.NUMERIC)])
        assert table.column("sex").to_list() == ["Male", "Male", "Female", "Female", "Male"]
        assert table.column("code").to_list() == [None, "x", "y", "z", "x"]  # ' NA ' is the token NA
        assert table.column("age").to_list() == [30, 40, 50, 60, 70]
        assert messages == [
            f"{label}: white space around text values was removed (' Male ' reads as 'Male') in "
            "attribute 'sex' (3 values), 'code' (1 value)"
        ]  # the padded numbers of 'age' changed nothing


def test_no_warning_when_nothing_is_padded(tmp_path):
    frame = pl.DataFrame({"sex": ["Male", "Female"], "age": ["30", "40"]})
    for source, _ in three_ways(tmp_path, frame):
        assert read_quietly(source)[1] == []


def test_padded_categorical_and_enum_columns_agree():
    enum = pl.Enum(["Male", " Male "])
    frame = pl.DataFrame(
        {
            "a": pl.Series([" Male ", "Male"], dtype=pl.Categorical),
            "b": pl.Series([" Male ", "Male"], dtype=enum),
            "c": pl.Series(["x", "y"], dtype=pl.Categorical),
        }
    )
    table, messages = read_quietly(frame)
    assert table.column("a").to_list() == ["Male", "Male"]
    assert table.column("b").to_list() == ["Male", "Male"]
    assert table.column("c").dtype == pl.Categorical  # untouched: nothing to strip
    assert messages == [
        "<data frame>: white space around text values was removed (' Male ' reads as 'Male') in "
        "attribute 'a' (1 value), 'b' (1 value)"
    ]


def test_configuration_value_weights_match_stripped_values(tmp_path):
    (tmp_path / "data.csv").write_text("disease,age\n Cancer ,30\nFlu,40\n")
    config = parse_config("attributes:\n  disease: {role: sensitive, values: {Cancer: 0.9}}\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = config.read(tmp_path / "data.csv")
    assert [str(item.message) for item in caught if "never occurs" in str(item.message)] == []
    weights = table.schema["disease"].value_weight_array(table.column("disease"))
    np.testing.assert_array_equal(weights, [0.9, 1.0])


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(["Male", "Female", "x y"]), st.sampled_from(["", " ", "  ", "\t"])),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from(["", " "]),
)
def test_every_reader_strips_the_same_values(tmp_path_factory, values, right):
    tmp_path = tmp_path_factory.mktemp("strip")
    texts = [f"{left}{value}{right if i % 2 else ''}" for i, (value, left) in enumerate(values)]
    frame = pl.DataFrame({"v": texts, "n": list(range(len(texts)))})
    changed = sum(text != text.strip() for text in texts)
    results = []
    for source, label in three_ways(tmp_path, frame):
        table, messages = read_quietly(source)
        assert table.column("v").to_list() == [value for value, _ in values]
        if changed:
            plural = "s" if changed != 1 else ""
            assert messages == [
                f"{label}: white space around text values was removed (' Male ' reads as 'Male') in "
                f"attribute 'v' ({changed} value{plural})"
            ]
        else:
            assert messages == []
        results.append(table.data)
    assert results[0].equals(results[1]) and results[1].equals(results[2])


# NaN written as text -----------------------------------------------------------------------------


def test_nan_text_is_a_category_in_a_categorical_column(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("disease,x\nNaN,1\nflu,2\nnan,3\n,4\n")
    table, _ = read_quietly(path, attributes=[Attribute("disease", kind=Kind.CATEGORICAL)])
    assert table.column("disease").to_list() == ["NaN", "flu", "nan", None]


@pytest.mark.parametrize("value", ["NaN", "nan", "inf", "-Infinity", "1e999"])
def test_nan_text_in_a_numeric_attribute_is_refused_naming_file_line_and_attribute(tmp_path, value):
    path = tmp_path / "data.csv"
    path.write_text(f"age,sex\n30,M\n{value},F\n40,F\n")
    with pytest.raises(InputError) as error:
        read_table(path, attributes=[Attribute("age", kind=Kind.NUMERIC)])
    assert str(error.value) == (
        f"{path}:3: attribute 'age': a value in a numeric attribute must be a finite number, got {value!r}; "
        f"only data.missing_values ('', 'NA') mean missing: add {value!r} to them if it does"
    )


def test_nan_text_in_the_weights_column_is_refused(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("age,w\n30,1\n40,NaN\n")
    with pytest.raises(
        InputError,
        match=rf"^{path}:3: weights column 'w': a value in sampling weights must be a finite number, got",
    ):
        read_table(path, weights="w")


def test_nan_text_in_an_undescribed_column_keeps_it_text_with_a_warning(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("score,sex\n1.5,M\nNaN,F\n2.5,F\nnan,M\n")
    table, messages = read_quietly(path)
    assert table.column("score").to_list() == ["1.5", "NaN", "2.5", "nan"]
    assert table.schema["score"].kind is Kind.CATEGORICAL
    assert messages == [
        f"{path}:3: attribute 'score': 2 values such as 'NaN' spell a number that is not finite, so the "
        "column is read as text categories; only data.missing_values ('', 'NA') mean missing: add 'NaN' "
        "to them if it does"
    ]


def test_nan_listed_as_missing_is_missing(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("score,sex\n1.5,M\nNaN,F\n2.5,F\n")
    config = parse_config('attributes: {score: {kind: numeric}}\ndata: {missing_values: ["", "NA", "NaN"]}\n')
    table = config.read(path)
    assert table.column("score").to_list() == [1.5, None, 2.5]


def test_typed_float_nan_is_missing_and_infinity_refused(tmp_path):
    path = tmp_path / "data.parquet"
    pl.DataFrame({"x": [1.0, float("nan"), 3.0]}).write_parquet(path)
    assert read_table(path).column("x").to_list() == [1.0, None, 3.0]
    pl.DataFrame({"x": [1.0, 2.0, float("-inf")]}).write_parquet(path)
    with pytest.raises(InputError) as error:
        read_table(path)
    assert str(error.value) == f"{path}: record 3: attribute 'x': value must be a finite number, got -inf"


# Sampling weights of 0 ---------------------------------------------------------------------------

ZERO_WEIGHTS = """zip,sex,disease,w
1000,M,flu,2
1000,M,cancer,0
2000,F,flu,3
2000,F,flu,1
3000,F,cancer,0
"""
ZERO_CONFIG = """attributes:
  zip: {role: quasi-identifier, public: 0.5}
  sex: {role: quasi-identifier, public: 0.5}
  disease: {role: sensitive, sensitivity: 1, values: {flu: 0.2}}
data: {weights: w}
"""


def test_zero_weights_are_read_checked_and_measured_alike(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(ZERO_WEIGHTS)
    config = parse_config(ZERO_CONFIG)
    table = config.read(path)  # as documented: a weight of 0 is allowed
    weights = table.sampling_weights()
    np.testing.assert_array_equal(weights, [2, 0, 3, 1, 0])
    report = check_table(table, ["zip", "sex"], [KAnonymity(2)], weights=weights)
    # Class sizes are sums of weights: the class of 3000 stands for nobody (size 0).
    assert sorted(report.sizes.tolist()) == [0.0, 2.0, 4.0]
    risk = combined_risk(table, weights=config.data.weights, missing="category")
    assert np.isfinite(risk.risk).all()
    assert risk.risk[1] == 0.0 and risk.risk[4] == 0.0  # records of weight 0 stand for nobody
    # Record 0 (weight 2) shares zip and sex with the weight-0 record 1 only: every count is 2, and
    # the total weight is 6. C = W(disease) * W(flu) = 0.2 for every split (zip, sex weigh 0).
    expected = 0.2 * 100 * (1 / 6 + 0.5 / 2 + 0.5 / 2 + 0.25 / 2)
    assert risk.risk[0] == pytest.approx(expected)
