"""Runs over partitions (sdckit.scale): the local out-of-core engine and a real Dask LocalCluster of
two worker processes give the same scores and releases as each other (bit for bit) and as the
in-memory run; a worker killed mid-run changes nothing; bad input is refused with one message."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from examples.generate import generate
from typer.testing import CliRunner

from sdckit.anonymize.base import METHODS as ANONYMIZE
from sdckit.cli import app
from sdckit.config import load_config
from sdckit.errors import InputError
from sdckit.measures import RISK_MEASURES
from sdckit.scale import DaskEngine, LocalEngine, open_dataset
from sdckit.scale import aggregate as aggregate_module
from sdckit.scale import methods as scaled
from sdckit.scale.aggregate import COUNT, aggregate

N_RECORDS = 12_000
ROOT = Path(__file__).resolve().parent.parent

CONFIG = (ROOT / "examples" / "students-release.yaml").read_text()

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same records as one CSV file and as a Parquet data set of four files of unequal sizes."""
    folder = tmp_path_factory.mktemp("scale")
    frame = generate(N_RECORDS, seed=3)
    csv = folder / "data.csv"
    frame.write_csv(csv)
    dataset = folder / "dataset"
    dataset.mkdir()
    for number, (start, stop) in enumerate([(0, 1000), (1000, 5500), (5500, 5600), (5600, N_RECORDS)]):
        frame.slice(start, stop - start).write_parquet(dataset / f"part-{number}.parquet")
    config = folder / "config.yaml"
    config.write_text(CONFIG)
    return {"csv": csv, "dataset": dataset, "config": config, "folder": folder}


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    local = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(local)
    yield client
    client.close()
    local.close()


def frame_of(parts) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(part) for part in parts])


def run_scaled(function, files, engine, folder: Path, chunk_rows: int, *args, source: str = "dataset"):
    folder.mkdir(parents=True, exist_ok=True)
    dataset = open_dataset(files[source], chunk_rows)
    return function(dataset, load_config(files["config"]), *args, engine, folder)


def params_of(name: str, registry, **given):
    spec = registry.get(name)
    return spec.params.parse(given, method=name)


CASES = [
    ("combined", RISK_MEASURES, scaled.combined, {}),
    ("reidentification", RISK_MEASURES, scaled.reidentification, {}),
    ("generalize", ANONYMIZE, scaled.generalize, {"k": 5, "suppression_limit": 0.05}),
    ("local-suppression", ANONYMIZE, scaled.local_suppression, {"k": 3}),
    ("targeted-suppression", ANONYMIZE, scaled.targeted_suppression, {"delta": 0.05, "repeat": True}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "registry", "function", "given"), CASES, ids=[case[0] for case in CASES])
def test_dask_gives_the_bytes_of_the_local_engine_and_the_in_memory_run(
    files, cluster, tmp_path, name, registry, function, given
):
    params = params_of(name, registry, **given)
    local = run_scaled(function, files, LocalEngine(), tmp_path / "local", 1_500, params)
    dask = run_scaled(function, files, DaskEngine(client=cluster), tmp_path / "dask", 1_500, params)
    assert len(local.parts) == len(dask.parts) == 10  # 1000 + 3*1500 + 100 + 4*1500 rows
    assert frame_of(local.parts).equals(frame_of(dask.parts))
    spec = registry.get(name)
    assert json.dumps(spec.summary(local.result), default=str) == json.dumps(
        spec.summary(dask.result), default=str
    )
    # The same records read whole and run in memory, from the same files: the columns the
    # configuration does not describe keep their type as read (text in a CSV file, typed in Parquet).
    config = load_config(files["config"])
    table = config.read(files["dataset"])
    from sdckit.context import Context

    context = Context(config=config)
    if registry is RISK_MEASURES:
        from sdckit.measures import run_measure

        result = run_measure(spec, table, params=params, context=context)
        expected = spec.records(result)
    else:
        from sdckit.anonymize.base import run_method

        result = run_method(spec, table, params, context)
        expected = spec.released(result).data
    got = frame_of(local.parts)
    if name == "reidentification":  # the l-diversity of the sensitive attribute too
        assert "distinct_l_diversity_special_education" in got.columns
    assert got.equals(expected), name
    # The figures of the report are those of the records (sums may differ in the last bit).
    mine, theirs = spec.summary(local.result), spec.summary(result)
    for key in ("records", "high_risk_before", "high_risk_after", "suppressed_cells", "levels"):
        if key in theirs:
            assert mine[key] == theirs[key], key
    for key in ("mean_risk", "global_risk"):
        if key in theirs:
            assert mine[key] == pytest.approx(theirs[key], rel=1e-12)


def test_check_over_partitions_equals_the_in_memory_check(files, cluster, tmp_path):
    from sdckit.models.check import verdict

    config = load_config(files["config"])
    release_path = tmp_path / "release.parquet"
    result = runner.invoke(
        app,
        [
            "anonymize",
            "generalize",
            str(files["csv"]),
            "-c",
            str(files["config"]),
            "-k",
            "5",
            "-o",
            str(release_path),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    asked = {"k": 5, "l": None, "l_variant": "distinct", "c": 2.0, "t": None, "t_distance": "equal"}
    expected = verdict(config.read_release(release_path), **asked, missing="category").figures()
    for engine in (LocalEngine(), DaskEngine(client=cluster)):
        dataset = open_dataset(release_path, 2_000)
        got = scaled.check(dataset, config, asked, "category", engine).result.figures()
        assert got == expected


def test_out_of_core_partitions_are_bounded_by_the_chunk_size_and_change_nothing(files, tmp_path):
    """A cap far below the data (97 records of 12,000): every partition read holds at most 97
    records, the CSV is split into byte ranges, and the scores are those of the in-memory run."""
    params = params_of("combined", RISK_MEASURES)
    heights = []
    original = aggregate_module._partial

    def spy(partition, task):
        partial = original(partition, task)
        heights.extend(partial.heights.values())
        return partial

    aggregate_module._partial = spy
    try:
        run = run_scaled(scaled.combined, files, LocalEngine(), tmp_path / "csv", 97, params, source="csv")
    finally:
        aggregate_module._partial = original
    assert sum(heights) == N_RECORDS
    assert max(heights) <= 97 * 1.5  # byte ranges hold about 97 records
    assert len(heights) > 80
    config = load_config(files["config"])
    from sdckit.risk.combined import combined_risk

    expected = combined_risk(config.read(files["csv"]), alpha=100, epsilon=0.01, missing="wildcard")
    scores = frame_of(run.parts)
    assert scores.get_column("record").to_list() == list(range(N_RECORDS))
    np.testing.assert_array_equal(scores.get_column("risk").to_numpy(), expected.risk)


def test_the_tree_of_partial_results_is_the_same_on_both_engines(cluster):
    """Sums of floating-point weights then round alike on both engines."""
    items = list(range(11))
    expected = "(((0+1)+(2+(3+4)))+((5+(6+7))+(8+(9+10))))"
    for engine in (LocalEngine(), DaskEngine(client=cluster)):
        assert engine.map_reduce(_label, _join, items) == expected


def _label(item: int, shared: object) -> str:
    return str(item)


def _join(left: str, right: str) -> str:
    return f"({left}+{right})"


def test_the_aggregate_counts_records_and_orders_patterns_by_first_record(files):
    config = load_config(files["config"])
    dataset = open_dataset(files["dataset"], 700)
    patterns = aggregate(dataset, config, ["gender", "gifted"], LocalEngine())
    frame = pl.read_parquet(files["dataset"])
    expected = (
        frame.with_row_index("first")
        .group_by(["gender", "gifted"])
        .agg(pl.len().alias(COUNT), pl.col("first").min())
        .sort("first")
    )
    assert patterns.frame.get_column(COUNT).to_list() == expected.get_column(COUNT).to_list()
    assert patterns.first_record.tolist() == expected.get_column("first").to_list()
    assert patterns.n_records == N_RECORDS


def test_an_aggregate_larger_than_memory_is_refused_with_its_size(files, monkeypatch):
    monkeypatch.setattr(aggregate_module, "available_memory", lambda: 10_000)
    config = load_config(files["config"])
    with pytest.raises(
        InputError, match=r"distinct patterns of birth_year, school .* rows .* available memory"
    ):
        aggregate(open_dataset(files["dataset"], 3_000), config, ["birth_year", "school"], LocalEngine())


# ----------------------------------------------------------------------------------------------
# The command line


def invoke(*arguments) -> object:
    return runner.invoke(app, [str(argument) for argument in arguments])


def test_cli_joins_a_running_cluster_and_writes_partitioned_scores(files, cluster, tmp_path):
    address = cluster.scheduler.address
    folder = tmp_path / "scores"
    result = invoke(
        "risk",
        "combined",
        files["dataset"],
        "-c",
        files["config"],
        "--engine",
        "dask",
        "--scheduler",
        address,
        "--chunk-rows",
        "4000",
        "-o",
        folder,
        "--summary",
        tmp_path / "s.json",
        "-q",
    )
    assert result.exit_code == 0, result.output
    parts = sorted(folder.glob("part-*.parquet"))
    assert len(parts) == 6  # 1000, 4000 + 500, 100, 4000 + 2400 records
    in_memory = tmp_path / "memory.parquet"
    result = invoke("risk", "combined", files["csv"], "-c", files["config"], "-o", in_memory, "-q")
    assert result.exit_code == 0, result.output
    assert pl.read_parquet(parts).equals(pl.read_parquet(in_memory))
    figures = json.loads((tmp_path / "s.json").read_text())
    assert figures["records"] == N_RECORDS
    assert not list(tmp_path.glob(".*parts*"))  # the working folder is gone


def test_cli_reads_a_parquet_data_set_wherever_a_file_is_read(files, tmp_path):
    """A directory of Parquet files is one data set, also for a method that runs in memory."""
    output = tmp_path / "mdav.csv"
    result = invoke(
        "anonymize", "mdav", files["dataset"], "-c", files["config"], "-o", output, "-q", "-k", "3"
    )
    assert result.exit_code == 0, result.output
    assert pl.read_csv(output).height == N_RECORDS


def test_cli_local_out_of_core_release_equals_the_in_memory_release(files, tmp_path):
    common = [
        "anonymize",
        "generalize",
        "-c",
        files["config"],
        "-k",
        "5",
        "--suppression-limit",
        "0.05",
        "-q",
    ]
    result = invoke(*common[:2], files["csv"], *common[2:], "-o", tmp_path / "memory.csv")
    assert result.exit_code == 0, result.output
    result = invoke(
        *common[:2], files["csv"], *common[2:], "-o", tmp_path / "chunks.csv", "--chunk-rows", "1000"
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "memory.csv").read_bytes() == (tmp_path / "chunks.csv").read_bytes()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--engine", "spark"], "--engine must be one of local, dask, got 'spark'"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler is for --engine dask"),
        (["--workers", "2"], "--workers is for --engine dask"),
        (["--chunk-rows", "0"], "--chunk-rows must be at least 1, got 0"),
        (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "--workers sizes the"),
    ],
)
def test_cli_refuses_scale_options_it_cannot_use(files, tmp_path, arguments, message):
    result = invoke(
        "risk", "combined", files["csv"], "-c", files["config"], "-o", tmp_path / "x.parquet", *arguments
    )
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "x.parquet").exists()


def test_cli_refuses_partitions_for_a_method_that_needs_all_records(files, tmp_path):
    result = invoke(
        "anonymize",
        "mdav",
        files["csv"],
        "-c",
        files["config"],
        "-o",
        tmp_path / "x.csv",
        "-k",
        "3",
        "--chunk-rows",
        "100",
    )
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "anonymize mdav does not run over partitions" in flat
    assert "risk combined" in flat and "anonymize generalize" in flat


@pytest.mark.slow
def test_cli_unreachable_scheduler_is_one_message(files, tmp_path):
    result = invoke(
        "check",
        files["csv"],
        "-c",
        files["config"],
        "--engine",
        "dask",
        "--scheduler",
        "tcp://127.0.0.1:9",
    )
    assert result.exit_code == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in " ".join(result.output.split())


def test_bad_data_sets_are_refused_naming_the_file(files, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="holding no Parquet files"):
        open_dataset(empty)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    pl.DataFrame({"a": [1]}).write_parquet(mixed / "1.parquet")
    pl.DataFrame({"b": [1]}).write_parquet(mixed / "2.parquet")
    with pytest.raises(InputError, match=r"2\.parquet: its columns differ .* a, b"):
        open_dataset(mixed)
    quoted = tmp_path / "quoted.csv"
    quoted.write_text('a,b\n1,"two\nlines"\n')
    with pytest.raises(InputError, match="quoted field holds a line break"):
        open_dataset(quoted)
    with pytest.raises(InputError, match="chunk rows must be a whole number >= 1"):
        open_dataset(files["csv"], 0)


def test_a_bad_value_in_a_later_partition_names_the_file_and_record(files, tmp_path):
    frame = pl.read_parquet(files["dataset"]).with_columns(pl.col("birth_year").cast(pl.String))
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 9_876)
        .then(pl.lit("unknown"))
        .otherwise(pl.col("birth_year"))
        .alias("birth_year")
    )
    data = tmp_path / "bad.csv"
    frame.write_csv(data)
    with pytest.raises(InputError, match=r"bad\.csv:9878: attribute 'birth_year'.*unknown"):
        run_scaled(
            scaled.combined,
            {**files, "csv": data},
            LocalEngine(),
            tmp_path / "o",
            1_000,
            params_of("combined", RISK_MEASURES),
            source="csv",
        )


def test_combined_over_partitions_counts_sampling_weights(files, tmp_path, cluster):
    frame = pl.read_parquet(files["dataset"]).with_columns(
        (pl.int_range(pl.len()) % 7).cast(pl.Float64).alias("weight")
    )
    folder = tmp_path / "weighted"
    folder.mkdir()
    for number, start in enumerate(range(0, N_RECORDS, 5_000)):
        frame.slice(start, 5_000).write_parquet(folder / f"{number}.parquet")
    config_path = tmp_path / "weighted.yaml"
    config_path.write_text(CONFIG.replace("risk:", "data: {weights: weight}\nrisk:"))
    config = load_config(config_path)
    params = params_of("combined", RISK_MEASURES)
    runs = [
        scaled.combined(open_dataset(folder, 2_500), config, params, engine, tmp_path / name)
        for name, engine in (("l", LocalEngine()), ("d", DaskEngine(client=cluster)))
        if (tmp_path / name).mkdir() is None
    ]
    assert frame_of(runs[0].parts).equals(frame_of(runs[1].parts))
    from sdckit.risk.combined import combined_risk

    expected = combined_risk(
        config.read(frame), weights="weight", alpha=100, epsilon=0.01, missing="wildcard"
    )
    np.testing.assert_allclose(
        frame_of(runs[0].parts).get_column("risk").to_numpy(), expected.risk, rtol=1e-12
    )
    assert (expected.risk[frame.get_column("weight").to_numpy() == 0] == 0).all()


@pytest.mark.slow
def test_a_worker_killed_mid_run_does_not_change_the_result(files, cluster, tmp_path):
    """The scheduler reruns the tasks of the lost worker (the nanny starts a new one)."""
    params = params_of("generalize", ANONYMIZE, k=5, suppression_limit=0.05)
    expected = run_scaled(scaled.generalize, files, LocalEngine(), tmp_path / "expected", 200, params)
    pids = cluster.run(os.getpid)
    outcome: dict[str, object] = {}

    def work() -> None:
        outcome["run"] = run_scaled(
            scaled.generalize, files, DaskEngine(client=cluster), tmp_path / "killed", 200, params
        )

    thread = threading.Thread(target=work)
    thread.start()

    def finished_tasks(dask_scheduler) -> int:
        return sum(task.state == "memory" for task in dask_scheduler.tasks.values())

    deadline = time.monotonic() + 60
    while cluster.run_on_scheduler(finished_tasks) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thread.is_alive(), "the run ended before a worker could be killed"
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert frame_of(outcome["run"].parts).equals(frame_of(expected.parts))
    cluster.wait_for_workers(2, timeout=60)


def test_cli_mondrian_over_partitions_is_k_anonymous(files, tmp_path):
    """Mondrian by fragments from the command line: every record once, in order, in classes of >= k."""
    output = tmp_path / "mondrian.parquet"
    summary = tmp_path / "mondrian.json"
    result = invoke(
        "anonymize",
        "mondrian",
        files["dataset"],
        "-c",
        files["config"],
        "-k",
        "5",
        "--chunk-rows",
        "3000",
        "-o",
        output,
        "--summary",
        summary,
        "-q",
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["fragments"] >= 2 and figures["satisfied"] is True
    assert figures["recipe"]["input"] == {"rows": N_RECORDS, "sha256": None}
    release = pl.read_parquet(output)
    original = pl.read_parquet(files["dataset"])
    assert release.height == N_RECORDS
    # Records in input order: the columns Mondrian does not touch are those of the input.
    assert release.get_column("lunch_status").equals(original.get_column("lunch_status"))
    keys = ["birth_year", "gender", "school", "entry_school_year", "gifted"]
    sizes = release.group_by(keys).len().get_column("len")
    assert sizes.min() >= 5
    assert figures["smallest_class"] == sizes.min()
