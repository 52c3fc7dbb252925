"""Cell statuses set by hand (``--status``, issue 31): publish (sdcTable's ``z``), suppress, and
published elsewhere, honoured by ``sdckit table suppress`` and ``sdckit table audit``."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.tabular.attacker import audit
from sdckit.tabular.base import TableProblem, run_table_method
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.statuses import CellStatuses, apply_statuses

runner = CliRunner()


@pytest.fixture
def firms(tmp_path):
    """A 3 × 3 count table (region × size) with two cells of one record."""
    rows = (
        [("north", "small")] * 5
        + [("north", "medium")] * 1
        + [("north", "large")] * 4
        + [("south", "small")] * 6
        + [("south", "medium")] * 7
        + [("south", "large")] * 1
        + [("east", "small")] * 3
        + [("east", "medium")] * 8
        + [("east", "large")] * 9
    )
    data = tmp_path / "firms.csv"
    pl.DataFrame({"region": [r for r, _ in rows], "size": [s for _, s in rows]}).write_csv(data)
    config = tmp_path / "firms.yaml"
    config.write_text(
        "attributes:\n  region: {role: quasi-identifier, kind: categorical}\n"
        "  size: {role: quasi-identifier, kind: categorical}\n"
    )
    return tmp_path, [
        str(data),
        "-c",
        str(config),
        "--rows",
        "region",
        "--cols",
        "size",
        "--min-frequency",
        "2",
    ]


def run(*arguments: str):
    return runner.invoke(app, list(arguments))


def pattern(path) -> pl.DataFrame:
    return pl.read_csv(path, infer_schema_length=0)


def test_a_cell_to_publish_is_never_suppressed(firms):
    folder, common = firms
    first = run("table", "suppress", *common, "--singletons", "none", "-o", str(folder / "free.csv"))
    assert first.exit_code == 0, first.output
    free = pattern(folder / "free.csv")
    secondary = free.filter(pl.col("status") == "secondary")
    assert secondary.height > 0
    # forbid every secondary cell of the free pattern: another pattern is found, without them
    status = folder / "status.csv"
    secondary.select("region", "size").with_columns(pl.lit("z").alias("status")).write_csv(status)
    outputs = ["-o", str(folder / "z.csv"), "--summary", str(folder / "z.json")]
    second = run("table", "suppress", *common, "--singletons", "none", "--status", str(status), *outputs)
    assert second.exit_code == 0, second.output
    forced = pattern(folder / "z.csv").join(secondary.select("region", "size"), on=["region", "size"])
    assert (forced.get_column("status") == "published").all()
    assert json.loads((folder / "z.json").read_text())["audit_passed"]
    # the audit of the free pattern with those statuses: they are suppressed but must be published
    audited = run("table", "audit", *common, "--pattern", str(folder / "free.csv"), "--status", str(status))
    assert audited.exit_code == 3 and "must be published" in audited.output


def test_a_sensitive_cell_to_publish_is_refused_naming_it(firms):
    folder, common = firms
    status = folder / "status.csv"
    pl.DataFrame({"region": ["north"], "size": ["medium"], "status": ["publish"]}).write_csv(status)
    result = run("table", "suppress", *common, "--status", str(status))
    assert result.exit_code == 2
    assert "region=north, size=medium" in result.output and "cannot be protected" in result.output


def test_a_cell_to_suppress_is_suppressed_and_protected(firms):
    folder, common = firms
    status = folder / "status.csv"
    pl.DataFrame({"region": ["east"], "size": ["large"], "status": ["suppress"]}).write_csv(status)
    result = run("table", "suppress", *common, "--status", str(status), "-o", str(folder / "p.csv"))
    assert result.exit_code == 0, result.output
    cell = pattern(folder / "p.csv").filter((pl.col("region") == "east") & (pl.col("size") == "large"))
    assert cell.get_column("status").to_list() == ["primary"] and cell.get_column("rule").to_list() == [
        "status"
    ]


def test_a_cell_published_elsewhere_is_no_cover():
    """In a 2 × 2 table, the four interior cells suppressed protect each other; once one of them is
    known from elsewhere, the attacker computes the others."""
    table = LinearTable.from_array([[4, 6], [5, 7]])
    protection = Protection.of_cells(table.n_cells, [0], upper=1.0)
    square = np.zeros(table.n_cells, dtype=bool)
    square[[0, 1, 3, 4]] = True  # (1,1), (1,2), (2,1), (2,2)
    assert audit(table, square, protection).passed
    statuses = CellStatuses(
        publish=np.zeros(table.n_cells, dtype=bool),
        suppress=np.zeros(table.n_cells, dtype=bool),
        published=np.eye(1, table.n_cells, 4, dtype=bool).ravel(),
    )
    problem = apply_statuses(TableProblem(table, protection), statuses)
    assert not audit(problem.table, square, problem.protection).passed
    result = run_table_method("suppress", problem, {"singletons": "none"})
    assert not result.suppressed[4] and result.figures["audit_passed"]
    assert audit(problem.table, result.suppressed, problem.protection).passed


def test_methods_that_publish_every_cell_keep_the_cells_to_publish(firms):
    folder, common = firms
    plain = common[:-2]  # no rule: rounding and the cell key method protect every cell alike
    status = folder / "status.csv"
    # east × large holds 9 records: not a multiple of 5, so rounding to 5 cannot keep it
    pl.DataFrame({"region": ["east"], "size": ["large"], "status": ["published"]}).write_csv(status)
    refused = run("table", "round", *plain, "--base", "5", "--status", str(status))
    assert refused.exit_code == 2 and "region=east, size=large = 9" in refused.output
    kept = run("table", "round", *plain, "--base", "3", "--status", str(status), "-o", str(folder / "r.csv"))
    assert kept.exit_code == 0, kept.output
    rounded = pattern(folder / "r.csv").filter((pl.col("region") == "east") & (pl.col("size") == "large"))
    assert float(rounded.get_column("released")[0]) == 9.0
    noisy = run("table", "cell-key", *plain, "--status", str(status), "-o", str(folder / "k.csv"))
    assert noisy.exit_code == 0, noisy.output
    released = pattern(folder / "k.csv").filter((pl.col("region") == "east") & (pl.col("size") == "large"))
    assert float(released.get_column("released")[0]) == 9.0
    adjusted = run("table", "cta", *common, "--status", str(status), "-o", str(folder / "c.csv"))
    assert adjusted.exit_code == 0, adjusted.output
    cell = pattern(folder / "c.csv").filter((pl.col("region") == "east") & (pl.col("size") == "large"))
    assert float(cell.get_column("released")[0]) == 9.0
    pl.DataFrame({"region": ["east"], "size": ["large"], "status": ["suppress"]}).write_csv(status)
    for method in ("round", "cell-key"):
        result = run("table", method, *plain, "--status", str(status))
        assert result.exit_code == 2 and "suppresses none" in result.output, result.output


def test_bad_status_files_name_the_line(firms):
    folder, common = firms
    status = folder / "status.csv"
    pl.DataFrame({"region": ["east", "west"], "size": ["large", "small"], "status": ["z", "z"]}).write_csv(
        status
    )
    result = run("table", "suppress", *common, "--status", str(status))
    assert result.exit_code == 2 and "status.csv:3" in result.output and "region=west" in result.output
    pl.DataFrame({"region": ["east"], "size": ["large"], "status": ["maybe"]}).write_csv(status)
    result = run("table", "suppress", *common, "--status", str(status))
    assert result.exit_code == 2 and "status.csv:2" in result.output and "maybe" in result.output
