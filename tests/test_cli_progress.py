"""What a long run says while it works (issue 32).

* The first run compiles sdckit's numba kernels: one line on stderr says so, once, naming the
  command; a run whose kernels come from numba's on-disk cache says nothing (a subprocess with its
  own ``NUMBA_CACHE_DIR``, twice); neither does --quiet, a compilation in a daemon thread nor the
  library used on its own. The listener waits for numba to be imported rather than importing it.
* The library's progress hook (``Context.progress(done, total)``) is drawn as a rich progress bar
  when stderr is a terminal (a console forced to be one, in-process), and is not drawn otherwise.
* Every long algorithm calls the hook with growing counts that end at their total: SUDA, record
  linkage (distance and Fellegi–Sunter), synthesis, the classifier utility, the generalization
  search (optimal and greedy), table suppression, and evaluate passes it to its measures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from io import StringIO
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from rich.console import Console
from typer.testing import CliRunner

from sdckit.cli import _common, app
from sdckit.cli._click import Command, Context
from sdckit.config import parse_config
from sdckit.context import Context as RunContext
from sdckit.measures import run_measure

DATA = Path(__file__).parent / "data"
SCRIPT = [sys.executable, "-c", "from sdckit.cli import main; main()"]


class Recorder:
    """A progress hook that keeps its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((int(done), int(total)))


def assert_grows_to_its_total(calls: list[tuple[int, int]], total: int | None = None) -> None:
    """One total, counts that never go down, never exceed it, and end at it."""
    assert calls, "the progress hook was never called"
    totals = {t for _, t in calls}
    assert len(totals) == 1, calls
    (only,) = totals
    if total is not None:
        assert only == total
    done = [d for d, _ in calls]
    assert done == sorted(done), calls
    assert done[0] >= 0 and done[-1] == only, calls


# The compile notice ---------------------------------------------------------------------------------


def _sdckit(arguments: list[str], cache: Path) -> subprocess.CompletedProcess:
    # Without the kernels compiled ahead of time (sdckit.precompile), so that numba compiles them.
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "SDCKIT_SHIPPED_KERNELS": "0"}
    return subprocess.run(
        [*SCRIPT, *arguments], capture_output=True, text=True, env=environment, timeout=900, check=False
    )


@pytest.mark.slow
def test_the_first_run_says_it_compiles_and_a_run_from_numbas_cache_does_not(tmp_path):
    # check: a command with few kernels (about 6 s cold, 3 s warm here) and no background warm-up.
    arguments = ["check", str(DATA / "paper.csv"), "--config", str(DATA / "paper.yaml")]
    cache = tmp_path / "numba-cache"
    first = _sdckit(arguments, cache)
    assert first.returncode == 0, first.stderr
    assert first.stderr.count("compiling sdckit's kernels") == 1
    assert "compiling sdckit's kernels for check (first run only)…" in first.stderr
    assert any(cache.rglob("*.nbi"))  # numba wrote its cache where it was told to
    second = _sdckit(arguments, cache)
    assert second.returncode == 0, second.stderr
    assert "compiling" not in second.stderr
    assert second.stdout == first.stdout


def _probe_kernel():
    """A kernel of sdckit's (by its module) that this process has not compiled yet: each call of
    this function makes a new one."""
    import numba

    def twice(x):
        return 2 * x

    twice.__module__ = "sdckit.probe"
    return numba.njit(twice)


def _notice_lines(monkeypatch) -> StringIO:
    written = StringIO()
    monkeypatch.setattr(_common, "errors", Console(file=written, width=200))
    return written


def _in_command(path: str, params: dict):
    """A click context like the one a command runs in: ``sdckit <path>`` with ``params``."""
    names = path.split()
    context = Context(Command("sdckit"), info_name="sdckit")
    for name in names:
        context = Context(Command(name), parent=context, info_name=name)
    context.params.update(params)
    return context


def test_the_notice_names_an_anonymization_method_by_its_name_and_is_said_once(monkeypatch):
    written = _notice_lines(monkeypatch)
    with (
        _common.compile_notice("anonymize", ["anonymize", "local-suppression"]),
        _in_command("anonymize local-suppression", {"quiet": False}),
    ):
        assert _probe_kernel()(3) == 6
        assert _probe_kernel()(2.5) == 5.0  # a second compilation: not said again
    assert written.getvalue() == "compiling sdckit's kernels for local-suppression (first run only)…\n"


def test_the_notice_names_other_commands_by_their_path(monkeypatch):
    written = _notice_lines(monkeypatch)
    with (
        _common.compile_notice("table", ["table", "suppress"]),
        _in_command("table suppress", {"quiet": False}),
    ):
        _probe_kernel()(1)
    assert written.getvalue() == "compiling sdckit's kernels for table suppress (first run only)…\n"


def test_quiet_and_daemon_threads_and_the_library_alone_say_nothing(monkeypatch):
    written = _notice_lines(monkeypatch)
    with (
        _common.compile_notice("anonymize", ["anonymize", "pram", "-q"]),
        _in_command("anonymize pram", {"quiet": True}),
    ):
        _probe_kernel()(1)
    with _common.compile_notice("risk", ["risk", "suda"]):
        # A background warm-up the command does not wait for.
        worker = threading.Thread(target=lambda: _probe_kernel()(1), daemon=True)
        worker.start()
        worker.join()
    _probe_kernel()(1)  # no command: the library is silent
    assert written.getvalue() == ""


def test_a_worker_thread_is_announced_with_the_commands_entry(monkeypatch):
    written = _notice_lines(monkeypatch)
    with _common.compile_notice("anonymize", ["anonymize", "mondrian"]):
        worker = threading.Thread(target=lambda: _probe_kernel()(1), daemon=False)
        worker.start()
        worker.join()
    assert written.getvalue() == "compiling sdckit's kernels for anonymize (first run only)…\n"


@pytest.mark.slow
def test_the_listener_is_installed_when_numba_is_imported_not_before():
    program = """
import sys
from sdckit.cli._common import compile_notice
assert "numba" not in sys.modules
with compile_notice("probe", []):
    assert "numba" not in sys.modules
    import numba
    def twice(x):
        return 2 * x
    twice.__module__ = "sdckit.probe"
    assert numba.njit(twice)(4) == 8
assert not any(type(finder).__name__ == "_AfterImport" for finder in sys.meta_path)
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "compiling sdckit's kernels for probe (first run only)…\n"


# The progress bar -------------------------------------------------------------------------------


def _terminal(monkeypatch, terminal: bool = True) -> StringIO:
    written = StringIO()
    console = Console(file=written, force_terminal=terminal, width=100, color_system=None)
    monkeypatch.setattr(_common, "errors", console)
    return written


def test_the_hook_is_drawn_as_a_bar_on_a_terminal(monkeypatch):
    written = _terminal(monkeypatch)
    with _common.progress_bar(True, "lattice") as progress:
        assert progress is not None
        progress(3, 10)
    text = written.getvalue()
    assert "lattice" in text and "3/10" in text and "━" in text


def test_a_stage_message_relabels_the_bar_and_is_kept_as_a_line(monkeypatch):
    written = _terminal(monkeypatch)
    say = _common.stage_messages(False, 0.0)
    with _common.progress_bar(True, "measures") as progress:
        progress(5, 5)
        say("release.csv: utility classifier")
    text = written.getvalue()
    assert "measures: release.csv: utility classifier" in text  # the bar's new label
    assert " s release.csv: utility classifier" in text  # the timed line above it


def test_no_bar_off_a_terminal_nor_with_quiet(monkeypatch):
    written = _terminal(monkeypatch, terminal=False)
    with _common.progress_bar(True, "lattice") as progress:
        assert progress is None
    _terminal(monkeypatch)
    with _common.progress_bar(False, "lattice") as progress:
        assert progress is None
    assert written.getvalue() == ""


def test_a_command_draws_its_method_s_bar_on_a_terminal(monkeypatch, tmp_path):
    written = _terminal(monkeypatch)
    frame = suda_frame()
    data, config = tmp_path / "data.csv", tmp_path / "config.yaml"
    frame.write_csv(data)
    config.write_text(
        "attributes:\n" + "".join(f"  {name}: {{role: quasi-identifier}}\n" for name in frame.columns)
    )
    result = CliRunner().invoke(app, ["risk", "suda", str(data), "--config", str(config)])
    assert result.exit_code == 0, result.output
    text = written.getvalue()
    assert "SUDA2 search" in text and "━" in text


# The hook in each long algorithm ------------------------------------------------------------------


def suda_frame(n: int = 300, seed: int = 1) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({f"v{j}": rng.integers(0, 4, n) for j in range(5)})


def test_suda_reports_its_chunks():
    table = parse_config(
        {"attributes": {name: {"role": "quasi-identifier"} for name in suda_frame().columns}}
    )
    recorder = Recorder()
    run_measure("suda", table.read(suda_frame()), context=RunContext(progress=recorder))
    assert_grows_to_its_total(recorder.calls)
    total = recorder.calls[-1][1]
    assert 1 < total <= 50  # the top-level items split in at most 50 chunks
    assert recorder.calls == [(i, total) for i in range(1, total + 1)]


LINKAGE_CONFIG = {
    "attributes": {
        "age": {"role": "quasi-identifier", "kind": "numeric"},
        "sex": {"role": "quasi-identifier"},
        "region": {"role": "quasi-identifier"},
        "job": {"role": "quasi-identifier"},
    }
}


def linkage_tables(n: int = 40, seed: int = 2):
    rng = np.random.default_rng(seed)
    frame = pl.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["north", "south", "east"], n),
            "job": rng.choice(["a", "b", "c", "d"], n),
        }
    )
    settings = parse_config(LINKAGE_CONFIG)
    released = frame.with_columns(pl.col("age") + 1)
    return settings.read(frame), settings.read_release(released), frame


def test_distance_linkage_reports_the_records_linked():
    original, release, _ = linkage_tables()
    recorder = Recorder()
    run_measure(
        "linkage", original, release, params={"method": "distance"}, context=RunContext(progress=recorder)
    )
    assert_grows_to_its_total(recorder.calls, total=40)


def test_fellegi_sunter_reports_the_pairs_compared():
    original, release, frame = linkage_tables()
    recorder = Recorder()
    run_measure(
        "linkage",
        original,
        release,
        params={"method": "probabilistic", "blocking": "sex"},
        context=RunContext(progress=recorder),
    )
    # Blocking on sex: every released record against the originals of its sex.
    sizes = frame.get_column("sex").value_counts().get_column("count").to_numpy()
    assert_grows_to_its_total(recorder.calls, total=int((sizes * sizes).sum()))
    recorder = Recorder()
    run_measure(
        "linkage",
        original,
        release,
        params={"method": "probabilistic"},
        context=RunContext(progress=recorder),
    )
    assert recorder.calls == [(40 * 40, 40 * 40)]  # one chunk of every pair


def test_synthesis_reports_each_attribute_synthesized():
    from sdckit.anonymize.synthesis import synthesize

    table = parse_config(LINKAGE_CONFIG).read(linkage_tables(n=80)[2])
    recorder = Recorder()
    synthesize(table, m=2, seed=3, progress=recorder)
    assert recorder.calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


CLASSIFIER_CONFIG = {
    "attributes": {
        "x1": {"role": "quasi-identifier", "kind": "numeric"},
        "x2": {"role": "quasi-identifier"},
        "y": {"role": "sensitive"},
    }
}


def classifier_table(n: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    x1, x2 = rng.integers(0, 5, n), rng.choice(["a", "b", "c"], n)
    frame = pl.DataFrame({"x1": x1, "x2": x2, "y": np.where((x1 >= 3) | (x2 == "c"), "yes", "no")})
    return parse_config(CLASSIFIER_CONFIG).read(frame)


@pytest.mark.parametrize(("model", "steps"), [("forest", 10), ("tree", 1), ("logistic", 1)])
def test_the_classifier_reports_its_training_steps(model, steps):
    data = classifier_table()
    recorder = Recorder()
    run_measure(
        "classifier",
        data,
        data,
        params={"model": model},
        context=RunContext(progress=recorder),
        group="utility",
    )
    # Both models (on the original, on the release): ten trees at a time for the forest.
    assert recorder.calls == [(i, 2 * steps) for i in range(1, 2 * steps + 1)]


def test_the_forest_grown_ten_trees_at_a_time_is_the_forest_grown_at_once():
    from sklearn.ensemble import RandomForestClassifier

    from sdckit.utility.classifier import _fitted

    rng = np.random.default_rng(5)
    x = rng.normal(size=(400, 4))
    y = np.where(x[:, 0] + rng.normal(size=400) > 0, "yes", "no")
    at_once = RandomForestClassifier(n_estimators=100, random_state=7, n_jobs=1).fit(x, y)
    steps: list[int] = []
    by_steps = _fitted("forest", 7, x, y, lambda: steps.append(1))
    assert len(steps) == 10 and len(by_steps.estimators_) == 100
    tested = rng.normal(size=(200, 4))
    assert np.array_equal(at_once.predict_proba(tested), by_steps.predict_proba(tested))


def _generalization_input(n: int = 200, seed: int = 4):
    from sdckit.hierarchy import Hierarchy
    from sdckit.table import Attribute, Role, Schema, Table

    rng = np.random.default_rng(seed)
    ages = [str(a) for a in range(20, 28)]
    frame = pl.DataFrame({"age": rng.choice(ages, n), "zip": rng.choice(["4761", "4762", "4791", "4792"], n)})
    schema = Schema(tuple(Attribute(name, role=Role.QUASI_IDENTIFIER) for name in frame.columns))
    age = Hierarchy.from_rows(
        "age", [[a, f"{20 + 4 * ((int(a) - 20) // 4)}-{23 + 4 * ((int(a) - 20) // 4)}", "*"] for a in ages]
    )
    zip_ = Hierarchy.from_rows(
        "zip", [[z, z[:3] + "*", z[:2] + "**", "*"] for z in ("4761", "4762", "4791", "4792")]
    )
    return Table(frame, schema), {"age": age, "zip": zip_}


@pytest.mark.parametrize("suppression_limit", [0.0, 0.05])
def test_the_generalization_search_ends_at_the_lattice_size(suppression_limit):
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.models import KAnonymity

    table, hierarchies = _generalization_input()
    recorder = Recorder()
    full_domain_generalization(
        table,
        [KAnonymity(20)],
        hierarchies=hierarchies,
        suppression_limit=suppression_limit,
        progress=recorder,
    )
    assert_grows_to_its_total(recorder.calls, total=3 * 4)  # age: 3 levels, zip: 4


def test_the_greedy_generalization_reports_its_steps():
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.models import KAnonymity

    table, hierarchies = _generalization_input()
    recorder = Recorder()
    release = full_domain_generalization(
        table, [KAnonymity(20)], hierarchies=hierarchies, max_nodes=1, progress=recorder
    )
    assert release.heuristic
    # At most 2 + 3 steps (each raises one attribute one level); the last call is the end.
    assert_grows_to_its_total(recorder.calls, total=5)
    assert recorder.calls[0] == (0, 5)


def test_evaluate_hands_the_hook_to_its_measures():
    from sdckit.evaluate import evaluate

    data = classifier_table()
    settings = parse_config(CLASSIFIER_CONFIG)
    recorder = Recorder()
    evaluate(
        data,
        [("same", data)],
        config=settings,
        risk=["linkage"],
        utility=["classifier"],
        risk_axis="linkage",
        loss_axis="classifier",
        progress=recorder,
    )
    # Linkage of the original with itself, then of the release, then the classifier (a utility
    # measure, of the release only): its 20 training steps.
    assert recorder.calls == [(300, 300), (300, 300)] + [(i, 20) for i in range(1, 21)]


class Events:
    """Progress and stage calls in the order they came: ``("stage", message)`` or ``(done, total)``."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def progress(self, done: int, total: int) -> None:
        self.events.append((int(done), int(total)))

    def stage(self, message: str) -> None:
        self.events.append(("stage", message))

    def stages(self) -> list[str]:
        return [event[1] for event in self.events if event[0] == "stage"]

    def segments(self) -> list[list[tuple[int, int]]]:
        """The progress calls between two stages (a stage restarts the bar)."""
        parts: list[list[tuple[int, int]]] = [[]]
        for event in self.events:
            if event[0] == "stage":
                parts.append([])
            else:
                parts[-1].append(event)
        return parts


def test_table_suppression_names_its_phases_and_counts_within_each():
    from sdckit.tabular.base import TableProblem, run_table_method
    from sdckit.tabular.model import LinearTable, Protection

    # SPEC §8.6's 2×3 table with its margins; the cell of 5 (row 1, column 1) is primary.
    table = LinearTable.from_array([[5, 30, 25], [20, 15, 10]])
    protection = Protection.of_cells(table.n_cells, [0], 3)
    events = Events()
    context = RunContext(progress=events.progress, stage=events.stage)
    result = run_table_method(
        "suppress", TableProblem(table, protection), {"algorithm": "heuristic"}, context
    )
    assert result.audit.passed
    assert events.stages() == [
        "heuristic pattern",
        "heuristic pattern 1 of 3: lp repair after the sweep",
        "heuristic pattern 2 of 3: lp repair",
        "heuristic pattern 3 of 3: neighbour repair after the sweep",
        "protection against respondents",
    ]
    segments = events.segments()
    assert segments[0] == [] and segments[1] == []  # before and at the first stage: nothing counted yet
    for part in segments[2:5]:
        # The one primary cell protected (done 1 of 1), then the pruning of the pattern's three
        # secondary cells (the table's smallest pattern: a rectangle of four cells), each tried once.
        done = [d for d, _ in part]
        assert done == sorted(done) and part[-1][0] == part[-1][1], part
        assert (1, 1) in part and part[-1] == (4, 4), part
    assert segments[5] == []


def test_the_optimal_table_suppression_says_how_long_it_may_take():
    from sdckit.tabular.base import TableProblem, run_table_method
    from sdckit.tabular.model import LinearTable, Protection

    table = LinearTable.from_array([[5, 30, 25], [20, 15, 10]])
    protection = Protection.of_cells(table.n_cells, [0], 3)
    events = Events()
    context = RunContext(progress=events.progress, stage=events.stage)
    run_table_method(
        "suppress", TableProblem(table, protection), {"algorithm": "optimal", "time_limit": 20}, context
    )
    assert "optimal pattern: Benders decomposition (at most 20 s)" in events.stages()
