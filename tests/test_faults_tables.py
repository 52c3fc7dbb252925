"""Issue 34, the second fault campaign, items 3, 6, 7 and 8 (``sdckit table``): each written as the
campaign's failing case, inputs built here.

3. a table of cells without its counts, or with a cell listed twice;
6. a ``--*-column`` option naming a column the file does not have;
7. Ctrl-C during a HiGHS solve (the CTA MILP);
8. a cell-key ``--max-deviation`` whose perturbation table could never be built."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import sparse

from leftovers import nothing_left_behind
from sdckit.cli._root import run as run_cli
from sdckit.errors import ConfigError
from sdckit.tabular.build import TableSpec, build_from_cells
from sdckit.tabular.cellkey import MAX_DEVIATION, CellKeyParams

CELLS = "r,c,n\na,x,1\na,y,2\nb,x,3\nb,y,4\na,Tot,3\nb,Tot,7\nTot,x,4\nTot,y,6\nTot,Tot,10\n"


def sdckit(*arguments: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "sdckit", *map(str, arguments)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def flat(text: str) -> str:
    return " ".join(re.sub("[│╭╮╰╯─]", " ", text).split())


def cells_arguments(path: Path, *extra: object) -> list[object]:
    return [path, "--cells", "--rows", "r", "--cols", "c", "--total-label", "Tot", *extra]


# 3. a table of cells ------------------------------------------------------------------------------


def test_a_table_of_cells_without_its_count_column_is_refused_naming_the_option(tmp_path, capsys):
    (tmp_path / "cells.csv").write_text(CELLS)
    out = tmp_path / "out.csv"
    with nothing_left_behind(tmp_path):
        code = run_cli(["table", "round", *map(str, cells_arguments(tmp_path / "cells.csv", "-o", out))])
    assert code == 2
    message = flat(capsys.readouterr().err)
    assert (
        "cells.csv: a table of cells needs the column of each cell's count (--frequency; columns: r, c, n)"
        in (message)
    )
    assert "Traceback" not in message


def test_the_library_needs_the_count_column_too():
    frame = pl.read_csv(CELLS.encode())
    with pytest.raises(
        ConfigError, match=r"needs the column of each cell's count \(frequency; columns: r, c, n\)"
    ):
        build_from_cells(frame, TableSpec.of("r", "c"), total_label="Tot")
    built = build_from_cells(frame, TableSpec.of("r", "c"), frequency="n", total_label="Tot")
    assert sorted(built.values.tolist()) == [1, 2, 3, 3, 4, 4, 6, 7, 10]


def test_a_cell_listed_twice_is_refused_naming_both_lines(tmp_path, capsys):
    # the campaign's file: a,x given twice (lines 2 and 7); before, its rows were summed to 6
    (tmp_path / "cells.csv").write_text("r,c,n\na,x,1\na,y,2\nb,x,3\nb,y,4\nTot,Tot,15\na,x,5\n")
    out = tmp_path / "out.csv"
    with nothing_left_behind(tmp_path):
        arguments = cells_arguments(tmp_path / "cells.csv", "--frequency", "n", "-o", out)
        code = run_cli(["table", "round", *map(str, arguments)])
    assert code == 2
    message = flat(capsys.readouterr().err)
    assert "cells.csv, lines 2 and 7: the cell r=a, c=x is listed twice" in message


def test_a_total_listed_twice_is_refused_too(tmp_path):
    frame = pl.read_csv((CELLS + "Tot,Tot,10\n").encode())
    with pytest.raises(Exception, match="lines 10 and 11: the cell r=Tot, c=Tot is listed twice"):
        build_from_cells(frame, TableSpec.of("r", "c"), frequency="n", total_label="Tot", source="t.csv")


# 6. --*-column options ----------------------------------------------------------------------------


def _microdata(folder: Path) -> Path:
    rng = np.random.default_rng(7)
    n = 400
    pl.DataFrame(
        {
            "district": rng.choice(["n1", "n2", "s1", "s2", "w1"], n),
            "sex": rng.choice(["f", "m"], n),
            "turnover": np.round(rng.lognormal(3, 1.2, n), 2),
        }
    ).write_csv(folder / "data.csv")
    return folder / "data.csv"


def test_an_audit_status_column_that_is_not_there_is_named_with_the_columns(tmp_path, capsys):
    data = _microdata(tmp_path)
    table = ["--rows", "district", "--cols", "sex"]
    pattern = tmp_path / "pattern.csv"
    assert (
        run_cli(["table", "suppress", str(data), *table, "--min-frequency", "3", "-o", str(pattern), "-q"])
        == 0
    )
    capsys.readouterr()
    report = tmp_path / "audit.csv"
    with nothing_left_behind(tmp_path):
        arguments = [
            str(data),
            *table,
            "--pattern",
            str(pattern),
            "--status-column",
            "nosuch",
            "-o",
            str(report),
        ]
        code = run_cli(["table", "audit", *arguments])
    assert code == 2
    message = flat(capsys.readouterr().err)
    # before: silently read the 'released' column instead, exit 0
    assert (
        "pattern.csv: the pattern has no column 'nosuch' (--status-column); its columns are district, sex,"
        in (message)
    )
    assert "'_line'" not in message and "_line" not in message.split("its columns are")[1]


@pytest.mark.parametrize(
    "option, message",
    [
        (
            ["--value", "nosuch"],
            "unknown attribute 'nosuch' (--value): the data has no such column (columns: ",
        ),
        (["--holding", "nosuch"], "unknown attribute 'nosuch' (--holding): the data has no such column"),
        (
            ["--cost-variable", "nosuch"],
            "--cost-variable: unknown attribute 'nosuch' (columns: district, sex",
        ),
    ],
)
def test_every_column_option_of_table_names_a_missing_column(tmp_path, capsys, option, message):
    data = _microdata(tmp_path)
    out = tmp_path / "out.csv"
    with nothing_left_behind(tmp_path):
        arguments = [str(data), "--rows", "district", "--cols", "sex", "--min-frequency", "3", *option]
        code = run_cli(["table", "suppress", *arguments, "-o", str(out)])
    assert code == 2
    assert message in flat(capsys.readouterr().err)


def test_a_count_column_that_is_not_there_is_named(tmp_path, capsys):
    (tmp_path / "cells.csv").write_text(CELLS)
    with nothing_left_behind(tmp_path):
        arguments = cells_arguments(tmp_path / "cells.csv", "--frequency", "count", "-o", tmp_path / "o.csv")
        code = run_cli(["table", "round", *map(str, arguments)])
    assert code == 2
    assert "unknown column 'count' (--frequency): the columns are r, c, n" in flat(capsys.readouterr().err)


# 7. Ctrl-C during a HiGHS solve -------------------------------------------------------------------


def _big_table(folder: Path) -> Path:
    """25 × 25 × 8 codes over 20,000 records: ~6,000 cells, ~2,000 primary by the frequency rule, a
    CTA MILP that runs to its time limit (40 s measured with --time-limit 40)."""
    rng = np.random.default_rng(1)
    n = 20_000
    pl.DataFrame(
        {
            "a": rng.integers(0, 25, n).astype(str),
            "b": rng.integers(0, 25, n).astype(str),
            "c": rng.integers(0, 8, n).astype(str),
        }
    ).write_csv(folder / "big.csv")
    return folder / "big.csv"


def test_ctrl_c_stops_the_cta_milp_within_seconds_and_leaves_nothing(tmp_path):
    data = _big_table(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    arguments = ["table", "cta", data, "--rows", "a", "--cols", "b", "--layers", "c", "--min-frequency", 4]
    arguments += ["--algorithm", "milp", "--time-limit", 600, "-o", out / "adjusted.csv"]
    arguments += ["--summary", out / "adjusted.json"]
    with nothing_left_behind(tmp_path, out) as env:
        process = subprocess.Popen(
            [sys.executable, "-m", "sdckit", *map(str, arguments)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert process.stderr is not None
        lines = []
        for line in process.stderr:  # the stage line said as the MILP starts
            lines.append(line)
            if "solving the CTA MILP" in line:
                break
        assert process.poll() is None, "".join(lines)
        time.sleep(1.0)  # inside HiGHS's branch and bound (the model is passed in well under a second)
        interrupted = time.perf_counter()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
        seconds = time.perf_counter() - interrupted
    assert process.returncode == 130, stderr
    assert seconds < 10, f"exited {seconds:.1f} s after SIGINT (before: only when the solver returned)"
    assert stderr.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in stderr + stdout
    assert not list(out.iterdir())


def test_the_interrupt_helper_passes_the_solve_through_and_restores_the_handler():
    from sdckit.tabular._highs import solve_mip

    before = signal.getsignal(signal.SIGINT)
    # min x + y, x + y ≥ 1.5, integral: 2
    result = solve_mip(
        np.array([1.0, 1.0]),
        np.array([[1.0, 1.0]]),
        np.array([1.5]),
        np.array([np.inf]),
        np.zeros(2),
        np.full(2, 5.0),
        np.array([True, True]),
        time_limit=10,
    )
    assert result.optimal and result.objective == 2.0
    assert signal.getsignal(signal.SIGINT) is before


# 8. cell-key's maximum deviation -----------------------------------------------------------------


def test_a_maximum_deviation_beyond_the_bound_is_refused_at_once_saying_why(tmp_path):
    data = _microdata(tmp_path)
    out = tmp_path / "out.csv"
    with nothing_left_behind(tmp_path) as env:
        started = time.perf_counter()
        result = sdckit(
            "table", "cell-key", data, "--rows", "district", "--max-deviation", 1_000_000, "-o", out, env=env
        )
        seconds = time.perf_counter() - started
    assert result.returncode == 2, result.stderr
    message = flat(result.stderr)
    assert f"cell-key --max-deviation must be at most {MAX_DEVIATION}, got 1000000" in message
    assert "ptable's D is typically 2 to 20" in message
    assert seconds < 60  # before: still running after 120 s


def test_the_bound_holds_in_the_library_and_the_largest_table_builds():
    with pytest.raises(ConfigError, match=f"max_deviation must be at most {MAX_DEVIATION}, got 31"):
        CellKeyParams.parse({"max_deviation": 31}, method="cell-key")
    with pytest.raises(ConfigError, match=r"max_deviation × step must be at most 60, got 30 × 3"):
        CellKeyParams.parse({"max_deviation": 30, "step": 3}, method="cell-key")
    from sdckit.tabular.cellkey import perturbation_table

    largest = perturbation_table(MAX_DEVIATION, 1.0)
    assert largest.max_deviation == MAX_DEVIATION
    assert largest.frame.get_column("v").abs().max() == MAX_DEVIATION


@pytest.mark.parametrize("algorithm", ["milp", "lp"])
def test_cta_without_the_tables_extra_solves_with_scipys_highs_to_the_same_optimum(monkeypatch, algorithm):
    """CTA needs only the core: without highspy its model goes to scipy's HiGHS (not interruptible
    within the solve), with the same optimum as through the interruptible helper."""
    import sdckit._extras
    from sdckit.tabular.cta import controlled_adjustment
    from sdckit.tabular.model import LinearTable, Protection

    rng = np.random.default_rng(3)
    table = LinearTable.from_array(rng.integers(0, 30, (5, 4)))
    cells = np.flatnonzero(~table.totals())[[0, 5, 9, 14]]
    upl = np.maximum(1.0, np.round(0.3 * table.values[cells]))
    protection = Protection.of_cells(
        table.n_cells, cells, upl, np.minimum(upl, table.values[cells]) + (table.values[cells] == 0) * upl
    )
    with_helper = controlled_adjustment(table, protection, algorithm=algorithm)[1]
    installed = sdckit._extras._installed
    monkeypatch.setattr(
        sdckit._extras, "_installed", lambda module: module != "highspy" and installed(module)
    )
    core_only = controlled_adjustment(table, protection, algorithm=algorithm)[1]
    assert core_only["objective"] == pytest.approx(with_helper["objective"], rel=1e-9)
    assert core_only["optimal"] == with_helper["optimal"] and core_only["algorithm"] == algorithm


def test_the_lps_without_the_tables_extra_give_the_same_rounding(monkeypatch):
    """The rounding's LP (core only for a 2-D table) through the helper, or through scipy's HiGHS
    without highspy: the same rounded table."""
    import sdckit._extras
    from sdckit.tabular.model import LinearTable
    from sdckit.tabular.rounding import controlled_rounding

    table = LinearTable.from_array(np.random.default_rng(5).integers(0, 40, (6, 5)))
    rounded, figures = controlled_rounding(table, 5)
    installed = sdckit._extras._installed
    monkeypatch.setattr(
        sdckit._extras, "_installed", lambda module: module != "highspy" and installed(module)
    )
    core_only, core_figures = controlled_rounding(table, 5)
    assert figures["solver"] == core_figures["solver"] == "lp"
    assert core_only.tolist() == rounded.tolist()
    assert table.is_additive(rounded) and np.all(rounded % 5 == 0)


def _cta_model_of_a_big_table() -> object:
    """A CTA model whose MILP runs to a time limit of a minute: 25 × 25 × 8 Poisson counts, the
    1,213 interior cells below 3 sensitive."""
    from sdckit.tabular.cta import _Model, cta_weights
    from sdckit.tabular.model import LinearTable, Protection

    table = LinearTable.from_array(np.random.default_rng(1).poisson(4, (25, 25, 8)))
    interior = np.flatnonzero(~table.totals())
    cells = interior[table.values[interior] < 3]
    upl = np.maximum(1.0, np.round(0.3 * table.values[cells]))
    lpl = np.where(table.values[cells] > 0, np.minimum(upl, table.values[cells]), upl)
    protection = Protection.of_cells(table.n_cells, cells, upl, lpl)
    return _Model(table, protection, cta_weights(table.values, "inverse"), False)


def test_a_sigint_inside_a_highs_solve_raises_keyboard_interrupt_when_highs_stops():
    """In process: SIGINT sent 1 s into a MILP of a minute's time limit stops it (not after the
    minute), raises KeyboardInterrupt, and leaves the SIGINT handler as it was."""
    import os
    import threading

    from sdckit.tabular.cta import _solve

    model = _cta_model_of_a_big_table()
    before = signal.getsignal(signal.SIGINT)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        _solve(model, integer=True, time_limit=60)  # type: ignore[arg-type]
    timer.join()
    assert time.perf_counter() - started < 30
    assert signal.getsignal(signal.SIGINT) is before


def test_a_stop_predicate_interrupts_a_solve_without_raising():
    import highspy

    from sdckit.tabular._highs import new_highs, run_interruptible

    model = _cta_model_of_a_big_table()
    cost, integrality, bounds, constraints = model.milp_parts()  # type: ignore[attr-defined]
    h = new_highs()
    lp = highspy.HighsLp()
    matrix = sparse.vstack([c.A for c in constraints], format="csc")
    lp.num_col_, lp.num_row_ = int(cost.size), int(matrix.shape[0])
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, bounds.lb, bounds.ub
    lp.row_lower_ = np.concatenate([np.broadcast_to(c.lb, c.A.shape[0]) for c in constraints])
    lp.row_upper_ = np.concatenate([np.broadcast_to(c.ub, c.A.shape[0]) for c in constraints])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = matrix.indptr, matrix.indices, matrix.data
    lp.integrality_ = [
        highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous for flag in integrality
    ]
    h.passModel(lp)
    h.setOptionValue("time_limit", 60.0)
    started = time.perf_counter()
    run_interruptible(h, lambda: time.perf_counter() - started > 0.5)
    assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
    assert time.perf_counter() - started < 30
