"""Risk suppression (sdcMicro's ``localSupp``): one key's value goes in the records above a risk.

* sdcMicro's francdat example (``localSupp(f, keyVar = "Key4", threshold = 0.15)`` with weights ``w``),
  the risks worked out by hand from sdcMicro's formulas: records 4, 6 and 7 (1-based) are above 0.15
  and lose Key4; no record's risk rises (sdcMicro's test).
* sdcMicro's testdata (skipped without it): ``localSupp(sdc, keyVar = "urbrur", threshold = 0.045)``
  suppresses something; here also: exactly the records above 0.045 with a value.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from sdckit.anonymize import METHODS
from sdckit.anonymize.local_supp import RiskSuppressionFigures, risk_suppression
from sdckit.errors import ConfigError
from sdckit.table import Table

FRANCDAT = pl.DataFrame(
    {
        "Key1": [1, 1, 1, 3, 4, 4, 6, 1],
        "Key2": [2, 2, 2, 3, 3, 3, 2, 2],
        "Key3": [5, 1, 1, 1, 1, 1, 1, 5],
        "Key4": [1, 1, 1, 5, 4, 1, 5, 1],
        "w": [18.0, 45.5, 39.0, 17.0, 541.0, 8.0, 5.0, 92.0],
    }
)
KEYS = ["Key1", "Key2", "Key3", "Key4"]


def risk_by_hand(f: int, F: float) -> float:  # noqa: N803
    """sdcMicro's indivRisk (approx), f = 1 and f = 2."""
    p = f / F
    odds = p / (1 - p)
    return odds * math.log(1 / p) if f == 1 else odds - odds**2 * math.log(1 / p)


def test_francdat_as_sdcmicro():
    release = risk_suppression(Table.from_frame(FRANCDAT), "Key4", 0.15, quasi_identifiers=KEYS, weights="w")
    # f and F of sdcMicro's freqCalc (tests/test_reidentification.py): 2,2,2,1,1,1,1,2 and
    # 110, 84.5, 84.5, 17, 541, 8, 5, 110.
    before = [
        risk_by_hand(f, F)
        for f, F in zip([2, 2, 2, 1, 1, 1, 1, 2], [110, 84.5, 84.5, 17, 541, 8, 5, 110], strict=True)
    ]
    figures = release.figures_as(RiskSuppressionFigures)
    assert figures.risk_before == pytest.approx(before, rel=1e-12)
    assert [round(r, 4) for r in before] == [0.0171, 0.022, 0.022, 0.1771, 0.0117, 0.2971, 0.4024, 0.0171]
    assert release.table.data["Key4"].to_list() == [1, 1, 1, None, 4, None, None, 1]
    # After: record 6 (4,3,1,NA) now matches record 5 (4,3,1,4) and the other way round: f = 2,
    # F = 549 for both; records 4 and 7 match nobody new (their other keys differ).
    after = list(before)
    after[4] = after[5] = risk_by_hand(2, 549)
    assert figures.risk_after == pytest.approx(after, rel=1e-12)
    assert np.all(figures.risk_before - figures.risk_after >= 0)  # sdcMicro's expectation
    assert (figures.above_before, figures.above_after, figures.suppressed_records) == (3, 2, 3)
    summary = METHODS.get("risk-suppression").summary(release)
    assert summary["records_above_threshold"] == {"before": 3, "after": 2}
    assert summary["risk_before"]["expected_reidentifications"] == pytest.approx(sum(before))
    assert summary["suppressed_cells"]["per_attribute"] == {"Key1": 0, "Key2": 0, "Key3": 0, "Key4": 3}


def test_unweighted_risk_is_one_over_f_and_the_threshold_is_strict():
    frame = pl.DataFrame({"a": [1, 1, 2, 3], "b": [1, 1, 1, 1]})
    # Risks 1/2, 1/2, 1, 1: threshold 0.5 leaves the pair, 1 suppresses nothing.
    release = risk_suppression(Table.from_frame(frame), "a", 0.5, quasi_identifiers=["a", "b"])
    assert release.table.data["a"].to_list() == [1, 1, None, None]
    # After: the two nulls match every record: f = 4, 4, 4, 4 on (a, b) with wildcards.
    assert release.figures_as(RiskSuppressionFigures).risk_after.tolist() == [1 / 4] * 4
    untouched = risk_suppression(Table.from_frame(frame), "a", 1.0, quasi_identifiers=["a", "b"])
    assert untouched.n_suppressed_cells == 0


def test_a_missing_value_is_not_counted_again():
    frame = pl.DataFrame({"a": [None, 1, 2], "b": [1, 2, 3]})
    release = risk_suppression(Table.from_frame(frame), "a", 0.9, quasi_identifiers=["a", "b"])
    figures = release.figures_as(RiskSuppressionFigures)
    assert (figures.above_before, figures.suppressed_records, release.n_suppressed_cells) == (3, 2, 2)


def test_category_treatment_may_raise_a_risk():
    # (1,1) (1,1) (2,1) (3,1): nulling a of the two unique records under the category treatment puts
    # them together: both drop from 1 to 1/2.
    frame = pl.DataFrame({"a": [1, 1, 2, 3], "b": [1, 1, 1, 1]})
    release = risk_suppression(
        Table.from_frame(frame), "a", 0.6, quasi_identifiers=["a", "b"], missing="category"
    )
    assert release.figures_as(RiskSuppressionFigures).risk_after.tolist() == [0.5, 0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"attribute": "c"}, "attribute must be one of the quasi-identifiers"),
        ({"attribute": "a", "threshold": 1.5}, "threshold must be less than or equal to 1"),
        ({"attribute": "a", "threshold": -0.1}, "threshold must be greater than or equal to 0"),
        ({"attribute": "a", "weights": "nope"}, "weights column 'nope'"),
        ({"attribute": "a", "missing": "sometimes"}, "missing"),
    ],
)
def test_bad_parameters(arguments, message):
    table = Table.from_frame(pl.DataFrame({"a": [1, 2], "b": [1, 1], "c": [3, 4]}))
    with pytest.raises(ConfigError, match=message):
        risk_suppression(table, quasi_identifiers=["a", "b"], **arguments)


def test_testdata_as_sdcmicro(shared_data):
    frame = pl.read_csv(shared_data("sdcmicro", "testdata.csv"), null_values=["NA"])
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    release = risk_suppression(
        Table.from_frame(frame), "urbrur", 0.045, quasi_identifiers=keys, weights="sampling_weight"
    )
    figures = release.figures_as(RiskSuppressionFigures)
    assert release.n_suppressed_cells > 0  # sdcMicro: sum(sdc@localSuppression$totalSupps) > 0
    above = figures.risk_before > 0.045
    had = frame["urbrur"].is_not_null().to_numpy()
    assert np.array_equal(release.suppressed_cells[:, 0], above & had)
    assert release.table.data["urbrur"].is_null().to_numpy()[above].all()
    assert np.all(figures.risk_after <= figures.risk_before + 1e-15)
