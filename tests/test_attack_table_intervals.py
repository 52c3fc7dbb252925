"""The outside attacker of a published table (sdcTable's attack LP), on tables written by hand: the
original published whole and a lone suppressed cell its row gives back fail; a 2 × 2 table with
every interior cell suppressed holds. Intervals computed by hand; the sensitive cells from the
rules on the microdata, never from the table's own status columns."""

from __future__ import annotations

import polars as pl
import pytest

from sdckit.attack.base import run_attack
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.io import read_table

CONFIG = parse_config(
    "attributes:\n  row: {role: quasi-identifier, kind: categorical}\n"
    "  col: {role: quasi-identifier, kind: categorical}\n  turnover: {role: sensitive, kind: numeric}\n"
)

# (r1, k1): one firm of 100, sensitive by the p%-rule (p = 10: 0 < 10 % of 100), level 10 - 0 = 10;
# (r1, k2): 50, 50, 50; (r2, k1): 40 x 3; (r2, k2): 30 x 3; rows 250, 210; columns 220, 240; 460.
FIRMS = pl.DataFrame(
    {
        "row": ["r1"] + ["r1"] * 3 + ["r2"] * 3 + ["r2"] * 3,
        "col": ["k1"] + ["k2"] * 3 + ["k1"] * 3 + ["k2"] * 3,
        "turnover": [100.0] + [50.0] * 3 + [40.0] * 3 + [30.0] * 3,
    }
)
CELLS = {
    ("r1", "k1"): 100.0,
    ("r1", "k2"): 150.0,
    ("r2", "k1"): 120.0,
    ("r2", "k2"): 90.0,
    ("r1", "Total"): 250.0,
    ("r2", "Total"): 210.0,
    ("Total", "k1"): 220.0,
    ("Total", "k2"): 240.0,
    ("Total", "Total"): 460.0,
}
PARAMS = {"dimensions": "row,col", "value": "turnover", "p": 10.0}


def published(suppressed: set[tuple[str, str]]):
    rows = [(r, c, None if (r, c) in suppressed else v) for (r, c), v in CELLS.items()]
    frame = pl.DataFrame(
        rows, schema={"row": pl.String, "col": pl.String, "released": pl.Float64}, orient="row"
    )
    return read_table(frame)


def test_the_original_published_whole_fails():
    result = run_attack(
        "table-intervals", CONFIG.read(FIRMS), published(set()), params={**PARAMS, "max_risk": 0.1}
    )
    assert (result.attack.successes, result.attack.trials) == (1, 1)
    assert result.details["disclosed"]["r1/k1"]["published"] is True
    assert result.verdict == "fails"  # Wilson's lower bound for 1 of 1 is 0.21


def test_a_lone_suppressed_cell_is_recomputed_from_its_row():
    # y11 = 250 - 150 = 100 exactly
    result = run_attack("table-intervals", CONFIG.read(FIRMS), published({("r1", "k1")}), params=PARAMS)
    assert (result.attack.successes, result.attack.trials) == (1, 1)
    assert result.details["disclosed"]["r1/k1"]["interval"] == pytest.approx([100.0, 100.0])


def test_every_interior_cell_suppressed_holds():
    # y11 = t, y12 = 250 - t, y21 = 220 - t, y22 = t - 10, all >= 0: t in [10, 220], beyond [90, 110]
    interior = {cell for cell in CELLS if "Total" not in cell}
    result = run_attack("table-intervals", CONFIG.read(FIRMS), published(interior), params=PARAMS)
    assert (result.attack.successes, result.attack.trials) == (0, 1)
    assert result.details["suppressed_cells"] == 4
    # p = 70 flags (r1, k1) (level 70: [30, 170] inside [10, 220]) and (r1, k2): 50 < 0.7 * 50 is
    # false (rest 50 >= 35), so one cell still; p = 99 flags the three 3-firm cells too (rest = x1 <
    # 0.99 x1 is false): one cell
    wider = run_attack(
        "table-intervals", CONFIG.read(FIRMS), published(interior), params={**PARAMS, "p": 70.0}
    )
    assert (wider.attack.successes, wider.attack.trials) == (0, 1)
    # without y >= 0 the attacker bounds nothing
    free = run_attack(
        "table-intervals", CONFIG.read(FIRMS), published(interior), params={**PARAMS, "nonnegative": False}
    )
    assert free.attack.successes == 0


def test_parameters_are_checked():
    with pytest.raises(ConfigError, match="p.*min_frequency"):
        run_attack("table-intervals", CONFIG.read(FIRMS), published(set()), params={"dimensions": "row,col"})
    with pytest.raises(ConfigError, match="no column size"):
        run_attack(
            "table-intervals",
            CONFIG.read(FIRMS),
            published(set()),
            params={**PARAMS, "dimensions": "row,size"},
        )
    with pytest.raises(ConfigError, match="dimensions"):
        run_attack("table-intervals", CONFIG.read(FIRMS), published(set()), params={"p": 10.0})
