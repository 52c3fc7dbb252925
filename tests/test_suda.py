"""SUDA2 (risk measure ``suda``): the SPEC §7.3 worked example, hand-made tables, the SUDA2 search
against the brute-force enumeration of minimal sample uniques, the command line."""

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

from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.measures import run_measure
from sdckit.risk.suda import (
    SudaParams,
    brute_force_msus,
    dis_suda_scores,
    find_msus,
    records,
    score_weights,
    suda,
    suda_scores,
    summary,
)

TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "age", "hhcivil"]

# SPEC §7.3 worked example: records r1..r8, variables v1..v4.
SPEC_ROWS = [
    (1, 1, 1, 1),
    (1, 1, 1, 2),
    (1, 2, 1, 1),
    (2, 1, 1, 1),
    (2, 2, 2, 2),
    (1, 1, 1, 1),
    (2, 1, 2, 1),
    (2, 2, 2, 2),
]
KEYS = ("v1", "v2", "v3", "v4")
SPEC_FRAME = pl.DataFrame({name: [row[j] for row in SPEC_ROWS] for j, name in enumerate(KEYS)})
SPEC_CONFIG = {"attributes": {name: {"role": "quasi-identifier"} for name in KEYS}}
SPEC_MSUS = {
    1: [("v1", "v4"), ("v2", "v4"), ("v3", "v4")],
    2: [("v1", "v2"), ("v2", "v3"), ("v2", "v4")],
    3: [("v1", "v3")],
    6: [("v2", "v3"), ("v3", "v4")],
}


def spec_table():
    return parse_config(SPEC_CONFIG).read(SPEC_FRAME)


def test_spec_worked_example_msus_scores_contributions():
    result = suda(spec_table())
    for record in range(8):
        assert sorted(result.msus_of(record)) == sorted(SPEC_MSUS.get(record, []))
    np.testing.assert_array_equal(result.suda, [0, 6, 6, 2, 0, 0, 4, 0])
    assert (result.uniques, result.pairs) == (4, 4)
    np.testing.assert_allclose(result.contributions[1], [1 / 3, 1 / 3, 1 / 3, 1])
    np.testing.assert_allclose(result.contributions[3], [1, 0, 1, 0])
    np.testing.assert_allclose(result.contributions[6], [0, 0.5, 1, 0.5])
    np.testing.assert_allclose(result.contributions[2], [1 / 3, 1, 1 / 3, 1 / 3])
    assert not result.contributions[[0, 4, 5, 7]].any()
    # Global: v1 in 3 MSUs of weight 2 out of 18; v2, v3, v4 in 5 each.
    np.testing.assert_allclose(result.global_contributions, [100 / 3, 500 / 9, 500 / 9, 500 / 9])
    np.testing.assert_array_equal(result.msu_count, [0, 3, 3, 1, 0, 0, 2, 0])
    np.testing.assert_array_equal(result.smallest, [0, 2, 2, 2, 0, 0, 2, 0])


def test_spec_worked_example_dis_suda():
    low = suda(spec_table(), dis_fraction=0.01)
    np.testing.assert_allclose(low.dis, [0, 0.018256, 0.018256, 0.004951, 0, 0, 0.011302, 0], atol=5e-7)
    high = suda(spec_table(), dis_fraction=0.1)
    np.testing.assert_allclose(high.dis, [0, 0.169816, 0.169816, 0.051894, 0, 0, 0.111701, 0], atol=5e-7)
    # The same from the scores alone (U = 4, P = 4, M = 4).
    direct = dis_suda_scores(np.array([0, 6, 6, 2, 0, 0, 4, 0.0]), 4, 4, 4, 0.01)
    np.testing.assert_allclose(direct, low.dis)


def test_spec_worked_example_ihsn_weights():
    result = suda(spec_table(), original_scores=False)
    np.testing.assert_allclose(result.suda, [0, 1.5, 1.5, 0.5, 0, 0, 1.0, 0])
    np.testing.assert_allclose(result.contributions[1], [1 / 3, 1 / 3, 1 / 3, 1])


def test_score_weights():
    np.testing.assert_array_equal(score_weights(4), [24, 6, 2, 1, 1])
    # (2^(M-s) - 1) s! (M-s)! / M!, M = 4: s=1: 7*1*6/24, s=2: 3*2*2/24, s=3: 1*6*1/24, s=4: 0.
    np.testing.assert_allclose(score_weights(4, original_scores=False)[1:], [1.75, 0.5, 0.25, 0.0])


def test_max_size_below_the_number_of_keys():
    # r0 is unique only on all three variables; every other record on pairs.
    frame = pl.DataFrame({"a": [0, 0, 0, 1, 1], "b": [0, 0, 1, 0, 1], "c": [0, 1, 0, 0, 1]})
    config = {"attributes": {name: {"role": "quasi-identifier"} for name in "abc"}}
    table = parse_config(config).read(frame)
    full = suda(table)
    assert [sorted(full.msus_of(r)) for r in range(5)] == [
        [("a", "b", "c")],
        [("a", "c"), ("b", "c")],
        [("a", "b"), ("b", "c")],
        [("a", "b"), ("a", "c")],
        [("a", "b"), ("a", "c"), ("b", "c")],
    ]
    # M = 3: w(2) = 1! = 1, w(3) = 0! = 1.
    np.testing.assert_array_equal(full.suda, [1, 2, 2, 2, 3])
    cut = suda(table, max_size=2)
    assert cut.msus_of(0) == []
    np.testing.assert_array_equal(cut.suda, [0, 2, 2, 2, 3])
    assert cut.counts_by_size() == {"1": 0, "2": 9}
    # U = 5, P = 0: Dis = 1, so every record with an MSU has DIS-SUDA 1.
    np.testing.assert_array_equal(cut.dis, [0, 1, 1, 1, 1])
    frame_out = records(cut)
    assert frame_out.get_column("smallest_msu").to_list() == [None, 2, 2, 2, 2]
    assert suda(table, max_size=1).suda.tolist() == [0, 0, 0, 0, 0]


def test_missing_values_never_form_part_of_an_msu():
    frame = pl.DataFrame({"a": [0, 0, 1, 1], "b": [0, None, 0, 0]})
    table = parse_config(
        {"attributes": {"a": {"role": "quasi-identifier"}, "b": {"role": "quasi-identifier"}}}
    ).read(frame)
    result = suda(table)
    # r0 (0, 0): the record with a missing b does not share b = 0, so {a, b} is unique and minimal.
    # r1 (0, null) is unique on the whole key, but b cannot be in an MSU and a = 0 occurs twice.
    assert result.msus_of(0) == [("a", "b")]
    assert result.msus_of(1) == []
    np.testing.assert_array_equal(result.suda, [1, 0, 0, 0])
    assert (result.uniques, result.pairs) == (2, 2)


def test_dis_suda_without_msus_is_zero():
    assert dis_suda_scores(np.zeros(3), 0, 4, 4, 0.01).tolist() == [0, 0, 0]


def test_records_summary_and_measure_registry():
    result = run_measure("suda", spec_table(), params={"max_size": 4, "top": 2})
    frame = records(result)
    assert frame.columns[:5] == ["record", "suda_score", "dis_suda_score", "msus", "smallest_msu"]
    assert frame.get_column("suda_score").to_list() == [0, 6, 6, 2, 0, 0, 4, 0]
    assert frame.get_column("smallest_msu").to_list() == [None, 2, 2, 2, None, None, 2, None]
    assert frame.get_column("contribution_v4").to_list()[1] == 1.0
    figures = summary(result)
    json.dumps(figures)
    assert figures["records"] == 8
    assert figures["keys"] == list(KEYS)
    assert figures["max_size"] == 4
    assert figures["sample_uniques"] == 4
    assert figures["records_with_msu"] == 4
    assert figures["msu_counts_by_size"] == {"1": 0, "2": 9, "3": 0, "4": 0}
    assert figures["contributions"]["v1"] == pytest.approx(100 / 3)
    assert figures["suda"] == {"mean": 18 / 8, "max": 6.0}
    assert figures["dis_suda"]["max"] == pytest.approx(0.018256, abs=5e-7)
    assert figures["dis_suda"]["mean"] == pytest.approx((2 * 0.0182562 + 0.0049512 + 0.0113023) / 8, abs=1e-6)
    assert figures["dis_suda"]["above"] == {"0.01": 3, "0.05": 0, "0.1": 0}
    assert [row["record"] for row in figures["riskiest"]] == [1, 2]
    assert figures["riskiest"][0]["msu_sets"] == [["v1=1", "v4=2"], ["v2=1", "v4=2"], ["v3=1", "v4=2"]]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_size": 0}, "max_size"),
        ({"max_size": 5}, "max_size"),
        ({"dis_fraction": 0}, "dis_fraction"),
        ({"dis_fraction": 1.5}, "dis_fraction"),
        ({"threshold": 1}, "threshold"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ConfigError, match=message):
        run_measure("suda", spec_table(), params=params)


def test_dis_fraction_one_is_allowed():
    result = suda(spec_table(), dis_fraction=1.0)
    np.testing.assert_allclose(result.dis, [0, 1, 1, 1, 0, 0, 1, 0])


def test_no_quasi_identifier():
    table = parse_config({"attributes": {name: {"role": "insensitive"} for name in KEYS}}).read(SPEC_FRAME)
    with pytest.raises(ConfigError, match="quasi-identifier"):
        suda(table)


def test_params_defaults():
    params = SudaParams()
    assert (params.max_size, params.dis_fraction, params.original_scores, params.top) == (
        None,
        0.01,
        True,
        10,
    )


# --- SUDA2 search against the brute-force enumeration ----------------------------------------------


@st.composite
def coded_tables(draw):
    m = draw(st.integers(2, 6))
    n = draw(st.integers(1, 30))
    cardinalities = [draw(st.integers(1, 4)) for _ in range(m)]
    null_rate = draw(st.sampled_from([0.0, 0.1, 0.3]))
    columns = []
    for j in range(m):
        values = draw(st.lists(st.integers(0, cardinalities[j] - 1), min_size=n, max_size=n))
        nulls = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
        columns.append([None if u < null_rate else v for v, u in zip(values, nulls, strict=True)])
    max_size = draw(st.integers(1, m))
    return columns, max_size


def _dense(columns):
    codes, cardinalities = [], []
    for column in columns:
        distinct = sorted({v for v in column if v is not None})
        lookup = {v: k for k, v in enumerate(distinct)}
        codes.append([lookup.get(v, -1) if v is not None else -1 for v in column])
        cardinalities.append(len(distinct))
    return np.array(codes, dtype=np.int32).T.reshape(len(columns[0]), len(columns)), cardinalities


def _naive_msus(codes, max_size):
    """Straight from the definition: r[S] occurs once, no missing value on S, no proper subset
    (all of them, not only the immediate ones) does."""
    import itertools

    n, m = codes.shape
    found = set()
    for r in range(n):
        unique_sets = []
        for size in range(1, max_size + 1):
            for subset in itertools.combinations(range(m), size):
                if (codes[r, list(subset)] < 0).any():
                    continue
                same = (codes[:, list(subset)] == codes[r, list(subset)]).all(axis=1)
                if same.sum() == 1 and not any(set(s) < set(subset) for s in unique_sets):
                    found.add((r, sum(1 << j for j in subset)))
                if same.sum() == 1:
                    unique_sets.append(subset)
    return sorted(found)


@pytest.mark.slow
@settings(max_examples=300)
@given(coded_tables())
def test_suda2_search_equals_brute_force(table):
    columns, max_size = table
    codes, cardinalities = _dense(columns)
    records_found, masks = find_msus(codes, cardinalities, max_size)
    brute_records, brute_masks = brute_force_msus(codes, max_size, cardinalities)
    np.testing.assert_array_equal(records_found, brute_records)
    np.testing.assert_array_equal(masks, brute_masks)
    assert list(zip(records_found.tolist(), masks.tolist(), strict=True)) == _naive_msus(codes, max_size)
    names = [f"k{j}" for j in range(codes.shape[1])]
    for original in (True, False):
        fast = suda_scores(codes, cardinalities, names, max_size=max_size, original_scores=original)
        slow = suda_scores(
            codes, cardinalities, names, max_size=max_size, original_scores=original, search="brute-force"
        )
        np.testing.assert_array_equal(fast.suda, slow.suda)
        np.testing.assert_array_equal(fast.dis, slow.dis)
        np.testing.assert_array_equal(fast.contributions, slow.contributions)


def test_many_duplicates_are_cut_to_two_without_changing_the_msus():
    rng = np.random.default_rng(3)
    base = rng.integers(0, 3, size=(40, 5)).astype(np.int32)
    codes = np.concatenate([base, base[:10], base[:10], base[5:15]])
    cardinalities = [3] * 5
    got = find_msus(codes, cardinalities, 5)
    expected = brute_force_msus(codes, 5, cardinalities)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_testdata_nine_keys_against_brute_force(shared_data):
    frame = pl.read_csv(shared_data("sdcmicro", "testdata.csv"))
    config = {"attributes": {name: {"role": "quasi-identifier"} for name in TESTDATA_KEYS}}
    table = parse_config(config).read(frame.select(TESTDATA_KEYS))
    fast = suda(table, max_size=4)
    slow = suda(table, max_size=4, search="brute-force")
    np.testing.assert_array_equal(fast.msu_records, slow.msu_records)
    np.testing.assert_array_equal(fast.msu_masks, slow.msu_masks)
    np.testing.assert_array_equal(fast.suda, slow.suda)
    assert fast.uniques > 0 and len(fast.msu_records) > 1000
    assert math.isclose(fast.global_contributions.max(), slow.global_contributions.max())


# --- command line -----------------------------------------------------------------------------------

runner = CliRunner()
SPEC_CSV = "v1,v2,v3,v4\n" + "\n".join(",".join(map(str, row)) for row in SPEC_ROWS) + "\n"
SPEC_YAML = "attributes:\n" + "".join(f"  {name}: {{role: quasi-identifier}}\n" for name in KEYS)


def _write(directory: Path, config: str = SPEC_YAML) -> tuple[Path, Path]:
    data, settings_path = directory / "data.csv", directory / "config.yaml"
    data.write_text(SPEC_CSV)
    settings_path.write_text(config)
    return data, settings_path


def test_cli_writes_records_and_summary(tmp_path):
    data, config = _write(tmp_path)
    result = runner.invoke(
        app,
        [
            "risk",
            "suda",
            str(data),
            "--config",
            str(config),
            "--max-size",
            "3",
            "--dis-fraction",
            "0.1",
            "--top",
            "3",
            "--output",
            str(tmp_path / "scores.csv"),
            "--summary",
            str(tmp_path / "summary.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    scores = pl.read_csv(tmp_path / "scores.csv")
    assert scores.get_column("suda_score").to_list() == [0, 6, 6, 2, 0, 0, 4, 0]
    np.testing.assert_allclose(
        scores.get_column("dis_suda_score").to_numpy(),
        [0, 0.169816, 0.169816, 0.051894, 0, 0, 0.111701, 0],
        atol=5e-7,
    )
    assert scores.get_column("msus").to_list() == [0, 3, 3, 1, 0, 0, 2, 0]
    figures = json.loads((tmp_path / "summary.json").read_text())
    assert figures["measure"] == "suda"
    assert figures["parameters"] == {"max_size": 3, "dis_fraction": 0.1, "original_scores": True, "top": 3}
    assert figures["msu_counts_by_size"] == {"1": 0, "2": 9, "3": 0}
    assert figures["dis_suda"]["above"] == {"0.01": 4, "0.05": 4, "0.1": 3}
    assert len(figures["riskiest"]) == 3
    assert "sample uniques: 4" in result.output


def test_cli_legacy_scores(tmp_path):
    data, config = _write(tmp_path)
    result = runner.invoke(
        app,
        [
            "risk",
            "suda",
            str(data),
            "-c",
            str(config),
            "--no-original-scores",
            "--summary",
            str(tmp_path / "s.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "s.json").read_text())["suda"]["max"] == 1.5


@pytest.mark.parametrize(
    ("arguments", "config", "message"),
    [
        (["--max-size", "5"], SPEC_YAML, "max_size"),
        (["--max-size", "0"], SPEC_YAML, "--max-size"),
        (["--dis-fraction", "0"], SPEC_YAML, "--dis-fraction"),
        (["--dis-fraction", "1.5"], SPEC_YAML, "--dis-fraction"),
        ([], "attributes:\n  v1: {role: insensitive}\n", "quasi-identifier"),
    ],
)
def test_cli_bad_input_exit_2_nothing_written(tmp_path, arguments, config, message):
    data, config_path = _write(tmp_path, config)
    outputs = [tmp_path / "scores.csv", tmp_path / "summary.json"]
    result = runner.invoke(
        app,
        [
            "risk",
            "suda",
            str(data),
            "--config",
            str(config_path),
            *arguments,
            "--output",
            str(outputs[0]),
            "--summary",
            str(outputs[1]),
        ],
    )
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert not any(path.exists() for path in outputs)


# Expectations written in sdcMicro's own tests (tests/testthat/test_suda2.R of sdcTools/sdcMicro).
@pytest.mark.parametrize(("original_scores", "first_score"), [(True, 180.0), (False, 2.73)])
def test_suda_score_of_sdcmicros_testdata2(shared_data, original_scores, first_score):
    from sdckit.measures import measure_spec, run_measure

    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    config = parse_config({"attributes": {name: {"role": "quasi-identifier"} for name in keys}})
    result = run_measure(
        "suda",
        config.read(shared_data("sdcmicro", "testdata2.csv")),
        params={"original_scores": original_scores},
    )
    score = measure_spec("suda").records(result).get_column("suda_score")[0]
    assert round(score, 2) == first_score


@pytest.mark.parametrize(
    ("order", "expected"),
    [("abc", (50, 37.5, 37.5)), ("acb", (50, 37.5, 37.5)), ("cab", (37.5, 50, 37.5))],
)
def test_variable_contributions_of_sdcmicros_small_example(order, expected):
    from sdckit.measures import measure_spec, run_measure

    columns = {"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]}
    config = parse_config({"attributes": {name: {"role": "quasi-identifier"} for name in order}})
    table = config.read(pl.DataFrame({name: columns[name] for name in order}))
    contributions = measure_spec("suda").summary(run_measure("suda", table))["contributions"]
    assert tuple(contributions[name] for name in order) == pytest.approx(expected)
