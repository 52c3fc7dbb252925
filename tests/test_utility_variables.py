"""sdckit utility variables: sdcMicro's IL_variables (issue 37, item 6), computed by hand from the
formulas of sdcMicro's R/dUtility.R (dist_nom, dist_ordered, dist_num)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.config import parse_config

runner = CliRunner()

CONFIG = """
attributes:
  v1: {kind: categorical, role: quasi-identifier}
  v2: {kind: numeric, role: quasi-identifier}
  v4: {kind: ordinal, role: quasi-identifier}
"""


def _files(tmp_path, original: dict, release: dict):
    pl.DataFrame(original).write_csv(tmp_path / "o.csv")
    pl.DataFrame(release).write_csv(tmp_path / "r.csv")
    (tmp_path / "c.yaml").write_text(CONFIG)
    return [str(tmp_path / "o.csv"), str(tmp_path / "r.csv"), "-c", str(tmp_path / "c.yaml")]


ORIGINAL = {"v1": ["a", "b", "c", None], "v2": [1.0, 2.0, 3.0, 4.0], "v4": [1, 2, 3, 3]}


def test_the_release_itself_loses_nothing(tmp_path):
    files = _files(tmp_path, ORIGINAL, ORIGINAL)
    result = runner.invoke(app, ["utility", "variables", *files, "--summary", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["il_variables"] == 0.0 and set(figures["by_attribute"].values()) == {0.0}


def test_by_hand(tmp_path):
    release = {"v1": ["a", "a", "c", "x"], "v2": [1.0, 3.0, 3.0, None], "v4": [1, 1, 3, 2]}
    files = _files(tmp_path, ORIGINAL, release)
    result = runner.invoke(app, ["utility", "variables", *files, "--summary", str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.output
    figures = json.loads((tmp_path / "s.json").read_text())
    # v1: equal, differ, equal, missing on one side -> 0 + 1 + 0 + 1
    v1 = 2 / 4
    # v2: 0, (2/pi) atan(1), 0, one missing: d = max(|min x' - max x|, |max x' - min x|) = max(3, 2) = 3
    v2 = ((2 / math.pi) * math.atan(1) + (2 / math.pi) * math.atan(3)) / 4
    # v4: levels 1 < 2 < 3 (L - 1 = 2): |1-1|, |2-1|, |3-3|, |3-2| over 2
    v4 = (0.5 + 0.5) / 4
    assert figures["by_attribute"] == pytest.approx({"v1": v1, "v2": v2, "v4": v4}, rel=1e-12)
    assert figures["il_variables"] == pytest.approx((v1 + v2 + v4) / 3, rel=1e-12)
    assert figures["compared_as"] == {"v1": "categorical", "v2": "numeric", "v4": "ordinal"}


def test_python_and_a_missing_column(tmp_path):
    from sdckit.utility.variables import VariablesLossParams, variables_loss

    files = _files(tmp_path, ORIGINAL, {"v1": ["a"] * 4, "v2": [1.0] * 4})
    config = parse_config(CONFIG)
    original = config.read(tmp_path / "o.csv")
    assert variables_loss(original, original, VariablesLossParams()).overall == 0.0
    result = runner.invoke(app, ["utility", "variables", *files])
    assert result.exit_code == 2 and "unknown attribute 'v4'" in result.output
