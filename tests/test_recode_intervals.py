"""Global recoding into intervals and groups (sdcMicro's globalRecode and groupAndRename, issue 37
item 2): R's cut points, labels and interval rule, computed here by hand or by plain-Python oracles
written from R's definitions (seq, quantile type 7, cut, formatC), not from the module's code."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.anonymize._recode_intervals import (
    Intervals,
    computed_breaks,
    interval_numbers,
    r_labels,
    r_quantile7,
)
from sdckit.anonymize.base import run_method
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.table import Kind, Table

runner = CliRunner()


def _table(**columns) -> Table:
    return Table.from_frame(pl.DataFrame(columns))


def _recoded(table: Table, **params) -> list:
    release = run_method("recode", table, params)
    return release.table.data.get_column(params["attribute"]).to_list()


# R's labels -----------------------------------------------------------------------------------------


def test_labels_are_r_cut_labels():
    assert r_labels([0, 9, 19, 29, 100], False) == ["(0,9]", "(9,19]", "(19,29]", "(29,100]"]
    assert r_labels([0, 33, 67, 100], True) == ["[0,33]", "(33,67]", "(67,100]"]
    # formatC(x, digits = 8): 9.333333333 -> "9.3333333", 1e9 -> "1e+09", infinite -> "Inf"
    assert r_labels([1, 28 / 3, 1e9, math.inf], False) == [
        "(1,9.3333333]",
        "(9.3333333,1e+09]",
        "(1e+09,Inf]",
    ]
    # Two points that read the same with 8 digits get more (up to 12), as R's cut does.
    assert r_labels([1.000000001, 1.000000002], False) == ["(1.000000001,1.000000002]"]


# Cut points -----------------------------------------------------------------------------------------


def test_equidistant_points_are_r_seq_rounded():
    # seq(0, 100, length.out = 4) = 0, 33.33, 66.67, 100, rounded (no tie): 0, 33, 67, 100
    points, closed = computed_breaks(np.array([1.0, 50.0, 99.0]), 3, "equidistant", "x")
    assert points.tolist() == [0.0, 33.0, 67.0, 100.0] and closed
    # seq(-1, 2, length.out = 5) = -1, -0.25, 0.5, 1.25, 2 rounds to -1, 0, 0, 1, 2: a tie, so unrounded
    points, _ = computed_breaks(np.array([0.0, 1.0]), 4, "equidistant", "x")
    assert points.tolist() == [-1.0, -0.25, 0.5, 1.25, 2.0]


def test_one_interval_is_min_minus_one_to_max_plus_one_open_below():
    for method in ("equidistant", "logEqui", "equalAmount"):
        points, closed = computed_breaks(np.array([3.0, 7.0]), 1, method, "x")
        assert points.tolist() == [2.0, 8.0] and not closed


def test_log_equi_points():
    # log(e) = 1, log(e**3) = 3: seq(0, 4, length.out = 3) = 0, 2, 4 -> exp: 1, 7.389, 54.598 -> 1, 7, 55
    points, _ = computed_breaks(np.array([math.e, math.e**3]), 2, "logEqui", "x")
    assert points.tolist() == [1.0, 7.0, 55.0]
    with pytest.raises(ConfigError, match="must be positive; the smallest is 0"):
        computed_breaks(np.array([0.0, 5.0]), 2, "logEqui", "x")


def _r_type7(values: list[float], p: float) -> float:
    """R's quantile type 7, as its source writes it, in plain floats."""
    x = sorted(values)
    index = 1 + (len(x) - 1) * p
    lo, hi = math.floor(index), math.ceil(index)
    q = x[lo - 1]
    if index > lo and x[hi - 1] != q:
        h = index - lo
        q = (1 - h) * q + h * x[hi - 1]
    return q


def test_equal_amount_points_are_r_type7_quantiles():
    values = [1.0, 5.0, 9.0, 10.0, 19.0, 25.0, 60.0, 99.0]
    points, closed = computed_breaks(np.array(values), 3, "equalAmount", "x")
    assert points.tolist() == [_r_type7(values, p) for p in (0, 1 / 3, 2 / 3, 1)]
    assert points[1] == pytest.approx(9 + 1 / 3) and closed
    # Quantiles that coincide are merged (sdcMicro jitters them at random): fewer intervals.
    points, _ = computed_breaks(np.array([1.0, 1.0, 1.0, 1.0, 2.0]), 4, "equalAmount", "x")
    assert points.tolist() == [1.0, 2.0]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
    count=st.integers(1, 9),
)
def test_type7_equals_r_formula(values, count):
    probabilities = np.concatenate([[0.0], np.arange(1, count + 1) / count])
    expected = [_r_type7(values, float(p)) for p in probabilities]
    assert r_quantile7(np.array(values), probabilities).tolist() == expected


# Which interval a value falls in ------------------------------------------------------------------


def _r_bincode(value: float, breaks: list[float], lowest: bool) -> int:
    """R's .bincode(right = TRUE): interval i when breaks[i] < x <= breaks[i + 1]."""
    if math.isnan(value):
        return -2
    for i in range(len(breaks) - 1):
        if breaks[i] < value <= breaks[i + 1] or (lowest and i == 0 and value == breaks[0]):
            return i
    return -1


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    values=st.lists(st.one_of(st.integers(-20, 20).map(float), st.just(math.nan)), min_size=1, max_size=40),
    breaks=st.lists(st.integers(-25, 25), min_size=2, max_size=6, unique=True).map(sorted),
    lowest=st.booleans(),
)
def test_interval_numbers_follow_r_cut(values, breaks, lowest):
    spec = Intervals(tuple(float(b) for b in breaks), lowest, tuple("x" * (len(breaks) - 1)))
    got = interval_numbers(np.array(values), spec).tolist()
    assert got == [_r_bincode(v, [float(b) for b in breaks], lowest) for v in values]


# The method ----------------------------------------------------------------------------------------


def test_cut_points_given_intervals_closed_on_the_right():
    table = _table(age=[1, 9, 10, 19, None, 100])
    got = _recoded(table, attribute="age", breaks=[0, 9, 19, 100])
    assert got == ["(0,9]", "(0,9]", "(9,19]", "(9,19]", None, "(19,100]"]
    release = run_method("recode", table, {"attribute": "age", "breaks": "0,9,19,100"})
    assert release.table.schema["age"].kind is Kind.CATEGORICAL
    assert release.figures.intervals["age"]["counts"] == [2, 2, 1]


def test_a_value_outside_the_cut_points_is_refused_not_made_missing():
    table = _table(age=[1, 9, 0, 5])
    with pytest.raises(
        ConfigError, match=r"1 value lies outside the breaks 0 to 9 \(the first, 0, in record 3\)"
    ):
        run_method("recode", table, {"attribute": "age", "breaks": [0, 9]})
    assert _recoded(table, attribute="age", breaks="-inf,0,inf") == [
        "(0,Inf]",
        "(0,Inf]",
        "(-Inf,0]",
        "(0,Inf]",
    ]


def test_a_number_of_intervals_with_labels_or_codes():
    table = _table(age=[1, 50, 99, None])
    assert _recoded(table, attribute="age", breaks=3) == ["[0,33]", "(33,67]", "(67,100]", None]
    assert _recoded(table, attribute="age", breaks="3", labels="young,middle,old") == [
        "young",
        "middle",
        "old",
        None,
    ]
    assert _recoded(table, attribute="age", breaks=3, codes=True) == [1, 2, 3, None]
    with pytest.raises(ConfigError, match="cut into 3 intervals but 2 labels are given"):
        run_method("recode", table, {"attribute": "age", "breaks": 3, "labels": ["a", "b"]})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"attribute": "age"}, "needs one of mapping"),
        ({"breaks": 3}, "needs attribute with breaks"),
        ({"attribute": "age", "breaks": [0, 9], "cut_method": "logEqui"}, "only with a number of intervals"),
        ({"attribute": "age", "breaks": 0}, "at least 1"),
        ({"attribute": "age", "breaks": [5]}, "at least two cut points"),
        ({"attribute": "age", "breaks": "a,b"}, "numbers separated by commas"),
        ({"attribute": "age", "breaks": 3, "labels": "a,b,c", "codes": True}, "labels or codes, not both"),
        ({"attribute": "age", "before": "a"}, "needs after"),
        ({"attribute": "age", "breaks": 2, "after": "x"}, "takes after only with before"),
        ({"attribute": "age", "breaks": 2, "cut_method": "quantile"}, "cut_method"),
        ({"attribute": "sex", "breaks": 2}, "needs a numeric attribute; 'sex' is String"),
        ({"attribute": "nope", "breaks": 2}, "'nope' is not a column"),
    ],
)
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ConfigError, match=message):
        run_method("recode", _table(age=[1, 2], sex=["m", "f"]), params)


def test_group_and_rename():
    table = _table(sex=["m", "f", None, "x"], code=[1, 2, 3, 1])
    assert _recoded(table, attribute="sex", before="m,f", after="mf") == ["mf", "mf", None, "x"]
    assert _recoded(table, attribute="sex", before=["m"], after="M", add_missing=True) == ["M", "f", "M", "x"]
    assert _recoded(table, attribute="code", before="1,3", after="13") == ["13", "2", "13", "13"]
    with pytest.raises(ConfigError, match="has no category 'q'"):
        run_method("recode", table, {"attribute": "sex", "before": "m,q", "after": "z"})


# The command line, and re-applying ------------------------------------------------------------------


def _files(tmp_path: Path) -> tuple[Path, Path]:
    data, config = tmp_path / "d.csv", tmp_path / "c.yaml"
    pl.DataFrame({"age": [3, 17, 18, 40, 64, 65, 90, 91], "sex": list("mfmfmfmf")}).write_csv(data)
    config.write_text(
        "attributes:\n  age: {kind: numeric, role: quasi-identifier}\n  sex: {role: quasi-identifier}\n"
    )
    return data, config


def test_command_line_writes_release_summary_and_reapplies_the_same_cut_points(tmp_path):
    data, config = _files(tmp_path)
    out, summary = tmp_path / "o.csv", tmp_path / "s.json"
    result = runner.invoke(
        app,
        ["anonymize", "recode", str(data), "-c", str(config), "--attribute", "age", "--breaks", "3",
         "--cut-method", "equalAmount", "-o", str(out), "--summary", str(summary)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    # type 7 quantiles of 3, 17, 18, 40, 64, 65, 90, 91 at 1/3 and 2/3: index 1 + 7/3 gives
    # 18 + (40 - 18) / 3 = 25.333..., index 1 + 14/3 gives 64 / 3 + 2 * 65 / 3 = 64.666...
    assert figures["intervals"]["age"]["labels"] == [
        "[3,25.333333]",
        "(25.333333,64.666667]",
        "(64.666667,91]",
    ]
    assert figures["intervals"]["age"]["counts"] == [3, 2, 3]
    low, middle, high = "[3,25.333333]", "(25.333333,64.666667]", "(64.666667,91]"
    assert pl.read_csv(out).get_column("age").to_list() == [low, low, low, middle, middle, high, high, high]
    # New data is cut at the learnt points (not at its own quantiles).
    new = tmp_path / "new.csv"
    pl.DataFrame({"age": [90, 4, 30], "sex": list("mfm")}).write_csv(new)
    applied = tmp_path / "a.csv"
    done = runner.invoke(app, ["apply", str(summary), str(new), "-o", str(applied)])
    assert done.exit_code == 0, done.output
    assert pl.read_csv(applied).get_column("age").to_list() == [high, low, middle]
    # A value beyond the learnt points: one message, nothing written.
    pl.DataFrame({"age": [92], "sex": ["m"]}).write_csv(new)
    refused = runner.invoke(app, ["apply", str(summary), str(new), "-o", str(tmp_path / "b.csv")])
    assert refused.exit_code == 2 and "outside the breaks 3 to 91" in " ".join(refused.output.split())
    assert not (tmp_path / "b.csv").exists()


def test_command_line_refuses_a_value_outside_and_writes_nothing(tmp_path):
    data, config = _files(tmp_path)
    result = runner.invoke(
        app,
        ["anonymize", "recode", str(data), "-c", str(config), "--attribute", "age", "--breaks", "0,18,65",
         "-o", str(tmp_path / "o.csv")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "2 values lie outside the breaks 0 to 65 (the first, 90, in record 7)" in " ".join(
        result.output.split()
    )
    assert not (tmp_path / "o.csv").exists()


def test_group_with_missing_is_reapplied(tmp_path):
    data, config = _files(tmp_path)
    pl.DataFrame({"age": [1, 2, 3], "sex": ["m", None, "f"]}).write_csv(data)
    out, summary = tmp_path / "o.csv", tmp_path / "s.json"
    result = runner.invoke(
        app,
        ["anonymize", "recode", str(data), "-c", str(config), "--attribute", "sex", "--before", "m",
         "--after", "M", "--add-missing", "-o", str(out), "--summary", str(summary)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert pl.read_csv(out).get_column("sex").to_list() == ["M", "M", "f"]
    again = tmp_path / "a.csv"
    done = runner.invoke(app, ["apply", str(summary), str(data), "-o", str(again)])
    assert done.exit_code == 0, done.output
    assert again.read_bytes() == out.read_bytes()
