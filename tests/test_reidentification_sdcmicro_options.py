"""sdcMicro's freqCalc ``alpha`` and measure_risk's ``max_global_risk`` / ``global_threshold`` in
``sdckit risk reidentification`` (issue 37).

The alpha = 1 cases are sdcMicro 5.8.1's tests/testthat/test_freqCalc.R expectations; the alpha < 1
cases are worked out by hand from the rule read in sdcMicro's R/freqCalc.r (a pattern counts itself
and the complete patterns matching it once, every other matching pattern with a missing value alpha
times, an all-missing pattern the total); the thresholds by hand from src/Measure_Threshold.h.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import make_table
from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.frequency import alpha_wildcard_pattern_sizes, encode, group_keys, group_sizes, pattern_codes
from sdckit.risk.reidentification import global_threshold, reidentification_risk
from sdckit.table import Kind, Role

KEY = (Role.QUASI_IDENTIFIER, Kind.CATEGORICAL)
KEYS = ("A", "B", "C")
WEIGHTS = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]
# test_freqCalc.R's "numeric values with missing values" data (its array is filled column by column).
WITH_MISSING = pl.DataFrame(
    {
        "A": [2, 3, 2, 2, 3, 3, 1, 2],
        "B": [3, 3, 3, 3, 3, 3, 4, 3],
        "C": [1, 3, None, 2, 1, 1, None, 1],
        "w": WEIGHTS,
    }
)
# test_freqCalc.R's "one column and one row with NAs" data: C all missing, record 3 all missing.
ALL_MISSING_ROW = pl.DataFrame(
    {
        "A": [2, 3, None, 2, 3, 3, 1, 2],
        "B": [3, 3, None, 3, 3, 3, 4, 3],
        "C": pl.Series([None] * 8, dtype=pl.Int64),
        "w": WEIGHTS,
    }
)


def risk(frame: pl.DataFrame, weighted: bool = True, **options):
    table = make_table(frame, roles=dict.fromkeys(KEYS, KEY), weights="w" if weighted else None)
    return reidentification_risk(table, weights="w" if weighted else None, **options)


# freqCalc's alpha ------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [None, 1.0])
def test_sdcmicro_freqcalc_expectations_with_missing_values(alpha):
    weighted = risk(WITH_MISSING, alpha=alpha)
    assert weighted.fk.tolist() == [3, 1, 4, 2, 2, 2, 1, 3]
    assert weighted.Fk.tolist() == [108.0, 45.5, 125.0, 56.0, 100.0, 100.0, 123.5, 108.0]
    unweighted = risk(WITH_MISSING, weighted=False, alpha=alpha)
    assert unweighted.fk.tolist() == unweighted.Fk.tolist() == [3, 1, 4, 2, 2, 2, 1, 3]
    rows = risk(ALL_MISSING_ROW, alpha=alpha)
    assert rows.fk.tolist() == [4, 4, 8, 4, 4, 4, 2, 4]
    assert rows.Fk.tolist() == [125.0, 184.5, 394.0, 125.0, 184.5, 184.5, 162.5, 125.0]


def test_alpha_below_one_by_hand():
    # Patterns: (2,3,1) records 1 and 8 (weights 69), (3,3,3), (2,3,NA) record 3 (39), (2,3,2) record
    # 4 (17), (3,3,1) records 5 and 6, (1,4,NA) record 7. (2,3,NA) counts itself and the complete
    # (2,3,1) and (2,3,2) fully: 4, weight 125; (2,3,1) and (2,3,2) count (2,3,NA) alpha times.
    half = risk(WITH_MISSING, alpha=0.5)
    assert half.fk.tolist() == [2.5, 1, 4, 1.5, 2, 2, 1, 2.5]
    assert half.Fk.tolist() == [88.5, 45.5, 125.0, 36.5, 100.0, 100.0, 123.5, 88.5]
    zero = risk(WITH_MISSING, alpha=0.0)
    assert zero.fk.tolist() == [2, 1, 4, 1, 2, 2, 1, 2]
    assert zero.Fk.tolist() == [69.0, 45.5, 125.0, 17.0, 100.0, 100.0, 123.5, 69.0]
    # Every record misses C: (2,3,NA) x3 (86), (3,3,NA) x3 (145.5), (1,4,NA) (123.5) each count the
    # all-missing record 3 (39) alpha times; record 3 counts everything.
    rows = risk(ALL_MISSING_ROW, alpha=0.5)
    assert rows.fk.tolist() == [3.5, 3.5, 8, 3.5, 3.5, 3.5, 1.5, 3.5]
    assert rows.Fk.tolist() == [105.5, 165.0, 394.0, 105.5, 165.0, 165.0, 143.0, 105.5]


def test_alpha_one_key_as_sdcmicro():
    # One key: complete values count the missing ones alpha times, a missing value counts everything.
    frame = pl.DataFrame({"A": [1, 1, 2, None, None], "w": [1.0, 2.0, 3.0, 4.0, 5.0]})
    table = make_table(frame, A=KEY, weights="w")
    result = reidentification_risk(table, weights="w", alpha=0.25)
    assert result.fk.tolist() == [2.5, 2.5, 1.5, 5, 5]
    assert result.Fk.tolist() == [5.25, 5.25, 5.25, 15.0, 15.0]


def brute_alpha(rows: list[tuple], weights: list[float], alpha: float) -> list[float]:
    """sdcMicro's alpha rule record by record."""
    result = []
    for r in rows:
        if all(v is None for v in r):
            result.append(sum(weights))
            continue
        total = 0.0
        for s, weight in zip(rows, weights, strict=True):
            if not all(a is None or b is None or a == b for a, b in zip(r, s, strict=True)):
                continue
            full = s == r or all(v is not None for v in s)
            total += weight * (1.0 if full else alpha)
        result.append(total)
    return result


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(*[st.one_of(st.none(), st.integers(0, 2))] * 3, st.integers(1, 5)), min_size=1, max_size=25
    ),
    st.sampled_from([0.0, 0.1, 0.5, 0.9]),
)
def test_alpha_frequencies_match_brute_force(records, alpha):
    rows = [record[:3] for record in records]
    weights = [float(record[3]) for record in records]
    frame = pl.DataFrame(
        {name: pl.Series([row[j] for row in rows], dtype=pl.Int64) for j, name in enumerate(KEYS)}
    )
    encoding = encode(frame)
    keys, groups = group_keys(encoding, [0, 1, 2])
    sizes = np.stack([group_sizes(keys, groups), group_sizes(keys, groups, np.array(weights))], axis=1)
    patterns = pattern_codes(encoding, [0, 1, 2], keys, groups)
    result = alpha_wildcard_pattern_sizes(patterns, sizes, encoding.cardinalities, alpha)[keys]
    np.testing.assert_allclose(result[:, 0], brute_alpha(rows, [1.0] * len(rows), alpha), rtol=1e-12)
    np.testing.assert_allclose(result[:, 1], brute_alpha(rows, weights, alpha), rtol=1e-12)


def test_alpha_refused_where_it_does_not_apply():
    with pytest.raises(ConfigError, match="wildcard"):
        risk(WITH_MISSING, missing="category", alpha=0.5)
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        risk(WITH_MISSING, alpha=1.5)
    with pytest.raises(ConfigError, match=r"\(0, 1\)"):
        risk(WITH_MISSING, max_global_risk=1.0)


def test_defaults_report_neither():
    result = risk(WITH_MISSING)
    assert "alpha" not in result.summary()
    assert "global_threshold" not in result.summary()
    assert result.records().columns == ["fk", "Fk", "individual_risk", "household_risk"]
    assert result.records()["fk"].dtype == pl.Int64


# measure_risk's global_threshold --------------------------------------------------------------------


def test_global_threshold_by_hand():
    risks = np.array([0.1, 0.5, 0.2, 0.5, 0.1])
    # Sorted 0.5, 0.5, 0.2, 0.1, 0.1 (total 1.4). Bound 0.2 * 5 = 1: at 0.2 the sum with the two
    # records above brought down is 0.4 + 2 * 0.2 = 0.8 < 1.
    assert global_threshold(risks, 0.2) == 0.2
    # Bound 0.3 * 5 = 1.5 > 1.4: already safe, sdcMicro's NA.
    assert global_threshold(risks, 0.3) is None
    # Bound 0.05 * 5 = 0.25: 0.8 at 0.2, 0.2 + 3 * 0.1 = 0.5 at 0.1; no value works: 0.
    assert global_threshold(risks, 0.05) == 0.0
    # Bound 0.15 * 5 = 0.75: 0.8 is not below it; 0.5 is: 0.1.
    assert global_threshold(risks, 0.15) == 0.1
    # Rows standing for several records: the records' threshold.
    assert global_threshold(np.array([0.5, 0.2, 0.1]), 0.2, np.array([2, 1, 2])) == 0.2
    assert global_threshold(np.array([]), 0.01) is None


def test_global_threshold_in_the_measure():
    # Unweighted: risks 1/fk = 1/3, 1, 1/4, 1/2, 1/2, 1/2, 1, 1/3 (total 4.4167); bound 0.3 * 8 = 2.4.
    # Sorted 1, 1, 1/2 x3, 1/3 x2, 1/4: at 1/2 the records from the third on (2.4167) plus 2 * 1/2 =
    # 3.4167; at 1/3: 0.9167 + 5/3 = 2.5833; at 1/4: 0.25 + 7/4 = 2.0 < 2.4: the threshold is 1/4,
    # every record above it but record 3 (fk 4).
    result = risk(WITH_MISSING, weighted=False, max_global_risk=0.3)
    assert result.global_threshold == 0.25
    summary = result.summary()
    assert summary["max_global_risk"] == 0.3
    assert summary["global_threshold"] == 0.25
    assert summary["records_above_global_threshold"] == 7
    assert result.records()["above_global_threshold"].to_list() == [True] * 2 + [False] + [True] * 5
    safe = risk(WITH_MISSING, weighted=False, max_global_risk=0.9)
    assert safe.summary()["global_threshold"] is None
    assert safe.summary()["records_above_global_threshold"] == 0


def test_cli_alpha_and_max_global_risk(tmp_path: Path):
    WITH_MISSING.write_csv(tmp_path / "data.csv")
    (tmp_path / "config.yaml").write_text(
        "attributes:\n"
        + "".join(f"  {name}: {{role: quasi-identifier, kind: categorical}}\n" for name in KEYS)
        + "data: {weights: w}\n"
    )
    common = ["risk", "reidentification", str(tmp_path / "data.csv"), "-c", str(tmp_path / "config.yaml")]
    output = ["-o", str(tmp_path / "r.csv"), "--summary", str(tmp_path / "s.json")]
    result = CliRunner().invoke(app, [*common, *output, "--alpha", "0.5", "--max-global-risk", "0.01"])
    assert result.exit_code == 0, result.output
    records = pl.read_csv(tmp_path / "r.csv")
    assert records["fk"].to_list() == [2.5, 1, 4, 1.5, 2, 2, 1, 2.5]
    assert "above_global_threshold" in records.columns
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["alpha"] == 0.5
    assert summary["max_global_risk"] == 0.01
    refused = CliRunner().invoke(app, [*common, "--missing", "category", "--alpha", "0.5"])
    assert refused.exit_code != 0
    assert "wildcard" in refused.output


def test_cli_out_of_core_gives_the_same(tmp_path: Path):
    WITH_MISSING.write_csv(tmp_path / "data.csv")
    (tmp_path / "config.yaml").write_text(
        "attributes:\n"
        + "".join(f"  {name}: {{role: quasi-identifier, kind: categorical}}\n" for name in KEYS)
        + "data: {weights: w}\n"
    )
    common = ["risk", "reidentification", str(tmp_path / "data.csv"), "-c", str(tmp_path / "config.yaml")]
    options = ["--alpha", "0.5", "--max-global-risk", "0.05", "-q"]
    for name, extra in (("plain", []), ("chunks", ["--chunk-rows", "3"])):
        output = ["-o", str(tmp_path / f"{name}.csv"), "--summary", str(tmp_path / f"{name}.json")]
        result = CliRunner().invoke(app, [*common, *options, *output, *extra])
        assert result.exit_code == 0, result.output
    plain, chunks = pl.read_csv(tmp_path / "plain.csv"), pl.read_csv(tmp_path / "chunks.csv")
    assert chunks["fk"].to_list() == plain["fk"].to_list() == [2.5, 1, 4, 1.5, 2, 2, 1, 2.5]
    assert chunks["above_global_threshold"].to_list() == plain["above_global_threshold"].to_list()
    summaries = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("plain", "chunks")]
    assert summaries[0]["global_threshold"] == summaries[1]["global_threshold"]
    assert summaries[0]["records_above_global_threshold"] == summaries[1]["records_above_global_threshold"]
