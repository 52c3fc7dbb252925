"""The targeted-suppression experiment explains, on the spot, records it cannot bring below the
threshold (issue 32: the README tour showed 515 -> 515 records above 0.01 with no word why)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from examples.generate import main as generate

from sdckit.config import load_config
from sdckit.experiments.targeted_suppression import floor_note, paper_roles
from sdckit.risk.combined import combined_risk
from sdckit.table import Role, Table


def test_the_records_at_their_floor_are_named_with_the_threshold_that_reaches_them(tmp_path):
    assert generate(["--records", "300", "--seed", "1", "--output", str(tmp_path / "example.csv")]) == 0
    config = load_config(Path(__file__).resolve().parent.parent / "examples" / "example.yaml")
    table = paper_roles(config.read(tmp_path / "example.csv"), 0.01)
    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    parameters = {"alpha": 100.0, "epsilon": 0.01, "missing": "wildcard", "weights": None}
    after = combined_risk(table, **parameters)
    # the floor, as the adversary sees a release with every quasi-identifier suppressed (nulls cover
    # every value): what no suppression of quasi-identifiers can lower
    blank = table.data.with_columns(pl.lit(None, dtype=table.data.schema[n]).alias(n) for n in names)
    floor = combined_risk(Table(blank, table.schema), original=table, **parameters).risk
    assert (floor <= after.risk + 1e-12).all()  # suppressing lowers the risk down to the floor
    delta = 0.01
    stuck = int(np.count_nonzero((after.risk > delta) & (floor > delta)))
    above = int(np.count_nonzero(after.risk > delta))
    assert 0 < stuck < above
    short, said = floor_note(table, names, after, delta, parameters)
    assert short == f"{stuck:,} at their floor (> 0.01 with every quasi-identifier suppressed)"
    assert said.startswith(f"{stuck:,} of the {above:,} records above 0.01 stay above it")
    assert f"with --delta {floor.max():.3g} or more every record can be brought below it" in said
    assert said.endswith(
        f"the other {above - stuck:,} are above their floor: the paper's one round did not bring them below"
    )
    # above the highest floor, nothing is stuck and nothing is said
    assert floor_note(table, names, after, float(floor.max()), parameters) == ("", "")
