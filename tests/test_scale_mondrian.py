"""Mondrian over partitions (sdckit.scale.mondrian): a sample cuts the data into fragments.

* A real ``distributed.LocalCluster`` of 2 worker processes gives the same release parts, byte for byte
  in the concatenated frame, as the local engine.
* The union of the fragments' releases: every record once, in input order, each generalized value
  containing the original; k-anonymous, l-diverse and t-close (against the whole table) by
  ``check_table``; its classes and achieved values are the figures reported.
* The sample and so the fragments do not depend on the partitioning: other chunk sizes (and CSV) give
  the same release; one fragment gives the in-memory Mondrian's release.
* Fragments that fail the models are merged with their siblings; bad parameters are refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from examples.generate import generate

from sdckit.anonymize.mondrian import MondrianParams, mondrian
from sdckit.config import parse_config
from sdckit.errors import ConfigError
from sdckit.models import KAnonymity, check_table
from sdckit.scale.dataset import open_dataset
from sdckit.scale.engine import DaskEngine, LocalEngine
from sdckit.scale.mondrian import run_mondrian
from sdckit.table import Schema, Table

N = 20_000
QUASI_IDENTIFIERS = ["birth_year", "gender", "parish", "entry_school_year", "limited_english", "gifted"]
CONFIG = {
    "attributes": {
        "student_id": {"role": "identifier"},
        "birth_year": {"role": "quasi-identifier", "kind": "numeric"},
        "gender": {"role": "quasi-identifier", "kind": "categorical"},
        "parish": {
            "role": "quasi-identifier",
            "kind": "categorical",
            "hierarchy": {"order": True, "fanout": 4},
        },
        "entry_school_year": {"role": "quasi-identifier", "kind": "numeric"},
        "limited_english": {"role": "quasi-identifier", "kind": "categorical"},
        "gifted": {"role": "quasi-identifier", "kind": "categorical"},
        "special_education": {"role": "sensitive", "kind": "categorical"},
    }
}


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return generate(N, seed=7).with_columns(pl.Series("row", np.arange(N)))


@pytest.fixture(scope="module")
def parquet(frame: pl.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("data") / "students"
    root.mkdir()
    for i, start in enumerate(range(0, N, 6_000)):  # files of 6,000, 6,000, 6,000 and 2,000 records
        frame.slice(start, 6_000).write_parquet(root / f"part-{i}.parquet")
    return root


@pytest.fixture(scope="module")
def config():
    return parse_config(CONFIG)


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def released(run) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(part) for part in run.parts], how="vertical")


def run(parquet: Path, config, tmp_path: Path, engine=None, chunk_rows: int = 2_500, **options):
    params = options.pop("params", MondrianParams(k=5, l=2))
    dataset = open_dataset(parquet, chunk_rows=chunk_rows)
    return run_mondrian(dataset, config, params, engine or LocalEngine(), tmp_path, **options)


def check(release: pl.DataFrame, models) -> object:
    data = release.with_columns(pl.col(name).cast(pl.String) for name in QUASI_IDENTIFIERS)
    return check_table(Table(data, Schema(())), QUASI_IDENTIFIERS, models)


@pytest.mark.slow
def test_dask_cluster_gives_the_local_release(parquet, config, cluster, tmp_path):
    local = run(parquet, config, tmp_path / "local", fragments=6, sample_rows=4_000)
    distributed = run(
        parquet, config, tmp_path / "dask", engine=DaskEngine(client=cluster), fragments=6, sample_rows=4_000
    )
    assert (
        len(local.parts) == len(distributed.parts) == 10
    )  # 2,500, 2,500, 1,000 per 6,000-record file; 2,000
    assert released(local).equals(released(distributed))
    assert local.figures == distributed.figures
    # A cut into a hierarchy node's children (parish, fanout 4) may make more than the 6 asked for.
    assert local.figures["fragments_cut"] >= 6
    assert local.figures["fragments"] == len(local.details["groups"])


@pytest.mark.slow
def test_a_worker_killed_mid_run_does_not_change_the_release(parquet, config, cluster, tmp_path):
    import os
    import signal
    import threading
    import time

    local = run(parquet, config, tmp_path / "local", fragments=4, sample_rows=3_000)
    work = tmp_path / "dask"
    outcome = {}

    def go() -> None:
        engine = DaskEngine(client=cluster)
        outcome["run"] = run(parquet, config, work, engine=engine, fragments=4, sample_rows=3_000)

    thread = threading.Thread(target=go)
    thread.start()
    deadline = time.monotonic() + 60
    while not (work / "spill").is_dir() and time.monotonic() < deadline:  # the spill pass has begun
        time.sleep(0.005)
    pids = cluster.run(os.getpid)
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)  # its nanny starts another; Dask reruns its tasks
    thread.join(timeout=120)
    assert "run" in outcome
    assert released(outcome["run"]).equals(released(local))
    assert outcome["run"].figures == local.figures
    cluster.wait_for_workers(2, timeout=60)


def test_union_is_k_anonymous_l_diverse_in_order(frame, parquet, config, tmp_path):
    params = MondrianParams(k=5, l=2)
    result = run(parquet, config, tmp_path, fragments=6, sample_rows=4_000, params=params)
    release = released(result)
    # Every record once, in the input order; identifiers dropped; other columns untouched.
    assert release.height == N
    assert release.get_column("row").to_list() == list(range(N))
    assert "student_id" not in release.columns
    assert release.get_column("special_education").equals(frame.get_column("special_education"))
    # Every generalized birth year contains the original.
    bounds = release.get_column("birth_year").cast(pl.String).str.split_exact("-", 1)
    low = bounds.struct.field("field_0").cast(pl.Int64)
    high = bounds.struct.field("field_1").cast(pl.Int64).fill_null(low)
    original = frame.get_column("birth_year").cast(pl.Int64)
    assert ((low <= original) & (original <= high)).all()
    # The union passes every model; its classes are the fragments' classes (the figures are exact).
    table = config.read(frame)
    models = params.privacy_models(table)
    report = check(release, models)
    assert all(result_.passes.all() for result_ in report.results)
    assert report.sizes.min() >= 5
    assert report.n_classes == result.figures["equivalence_classes"]
    assert int(report.sizes.min()) == result.figures["smallest_class"]
    assert {r.model: r.worst() for r in report.results} == result.figures["achieved"]
    assert set(result.figures) >= {"models", "mode", "output", "suppressed_records", "metrics", "fragments"}


def test_t_closeness_against_the_whole_table(frame, parquet, config, tmp_path):
    params = MondrianParams(k=5, t=0.05)
    result = run(parquet, config, tmp_path, fragments=6, sample_rows=4_000, params=params)
    models = params.privacy_models(config.read(frame))
    report = check(released(result), models)  # the release's distribution is the whole table's
    assert all(r.passes.all() for r in report.results)
    closeness = next(r for r in report.results if "closeness" in r.model)
    assert closeness.worst() == pytest.approx(result.figures["achieved"][closeness.model], abs=1e-12)
    assert closeness.worst() <= 0.05 + 1e-12


def test_other_partitionings_give_the_same_release(frame, parquet, config, tmp_path):
    first = run(parquet, config, tmp_path / "a", chunk_rows=2_500, fragments=5, sample_rows=3_000)
    second = run(parquet, config, tmp_path / "b", chunk_rows=7_000, fragments=5, sample_rows=3_000)
    assert len(first.parts) != len(second.parts)
    assert released(first).equals(released(second))
    assert first.figures == second.figures
    # A CSV of the same records, read in byte ranges: the same release.
    csv = tmp_path / "students.csv"
    frame.write_csv(csv)
    third = run_mondrian(
        open_dataset(csv, chunk_rows=4_000),
        config,
        MondrianParams(k=5, l=2),
        LocalEngine(),
        tmp_path / "c",
        fragments=5,
        sample_rows=3_000,
    )
    # CSV columns read as Int64 where the Parquet files hold Int8 / Int16 (compare the texts), and the
    # undescribed school codes read as numbers, losing their leading zeros (left out).
    texts = pl.all().exclude("school").cast(pl.String)
    assert released(third).select(texts).equals(released(first).select(texts))
    assert third.figures == first.figures


@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_one_fragment_is_the_in_memory_release(frame, parquet, config, tmp_path, mode):
    params = MondrianParams(k=4, l=2, mode=mode)
    result = run(parquet, config, tmp_path, fragments=1, params=params)
    table = config.read(frame)
    expected = mondrian(table, params.privacy_models(table), quasi_identifiers=QUASI_IDENTIFIERS, mode=mode)
    assert released(result).equals(expected.table.data)
    assert result.figures["equivalence_classes"] == expected.n_classes
    assert result.figures["fragments"] == 1


@pytest.mark.slow
def test_fragments_failing_the_models_are_merged(frame, parquet, config, tmp_path):
    # 64 fragments of about 312 records cannot each hold classes of 400.
    result = run(parquet, config, tmp_path, fragments=64, sample_rows=8_000, params=MondrianParams(k=400))
    assert result.figures["fragments_cut"] >= 64
    assert 1 <= result.figures["fragments"] < 64
    assert min(result.details["group_records"]) >= 400
    report = check(released(result), [KAnonymity(400)])
    assert report.results[0].passes.all()
    assert report.n_classes == result.figures["equivalence_classes"]


def test_centroids(frame, parquet, config, tmp_path):
    result = run(
        parquet, config, tmp_path, fragments=4, sample_rows=3_000, params=MondrianParams(k=5, centroids=True)
    )
    release = released(result)
    assert release.get_column("birth_year").dtype == pl.Float64
    assert release.get_column("row").to_list() == list(range(N))
    assert "achieved" not in result.figures


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"fragments": 0}, "fragments"),
        ({"fragments": 2.5}, "fragments"),
        ({"sample_rows": 0}, "sample rows"),
        ({"seed": -1}, "seed"),
        ({"params": MondrianParams(k=N + 1)}, "k must be at most"),
        ({"params": MondrianParams(l=3)}, "2 distinct values"),
        ({"params": MondrianParams(research_subset="gifted", k_map=3)}, "does not take a research subset"),
    ],
)
def test_bad_input(parquet, config, tmp_path, options, named):
    with pytest.raises(ConfigError, match=named):
        run(parquet, config, tmp_path, **options)


def test_missing_quasi_identifier_values_are_refused(frame, tmp_path):
    config = parse_config({"attributes": {"ethnicity": {"role": "quasi-identifier"}}})
    path = tmp_path / "data.parquet"
    frame.write_parquet(path)
    with pytest.raises(ConfigError, match="quasi-identifier 'ethnicity' has .* missing values"):
        run_mondrian(open_dataset(path), config, MondrianParams(k=5), LocalEngine(), tmp_path / "work")
