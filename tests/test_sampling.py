"""Sampling (sdckit anonymize sample) and global recoding from a mapping file (sdckit anonymize
recode): exact counts per stratum, weights divided by the realized fraction, uniform inclusion; values
recoded as listed, others passed through, errors named, and the recoding re-applied by sdckit apply."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from conftest import make_table
from sdckit.anonymize import recode, sample
from sdckit.anonymize.recode import RecodeFigures, read_mapping
from sdckit.anonymize.sampling import SampleFigures
from sdckit.cli import app
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.table import Kind, Role

runner = CliRunner()
STRATA_SIZES = {"north": 50, "south": 30, "east": 7, "west": 1}


def strata_frame() -> pl.DataFrame:
    regions = [region for region, size in STRATA_SIZES.items() for _ in range(size)]
    n = len(regions)
    return pl.DataFrame(
        {
            "id": [f"r{i}" for i in range(n)],
            "region": regions,
            "sex": ["MF"[i % 2] for i in range(n)],
            "age": [20 + i % 40 for i in range(n)],
            "w": [10.0 + i % 3 for i in range(n)],
        }
    )


# The columns of strata_frame() the others' defaults would not give.
STRATA = {"id": Role.IDENTIFIER, "age": Kind.NUMERIC}


def expected_size(fraction: float, size: int) -> int:
    """max(1, round half up)."""
    return max(1, int(np.floor(fraction * size + 0.5)))


def test_simple_random_sampling_keeps_round_fraction_times_n_in_file_order():
    frame = strata_frame()
    release = sample(make_table(frame, **STRATA), 0.25, seed=3)
    kept = release.figures_as(SampleFigures).kept
    assert kept.sum() == expected_size(0.25, 88) == 22
    assert release.table.data.equals(frame.filter(pl.Series(kept)).drop("id"))
    assert release.params.fraction == 0.25
    assert release.figures_as(SampleFigures).fraction_realized == pytest.approx(22 / 88)
    assert sample(make_table(frame, **STRATA), 1.0).table.data.equals(frame.drop("id"))


@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.5, 0.9])
def test_stratified_sampling_keeps_the_rounded_share_of_every_stratum(fraction):
    frame = strata_frame()
    release = sample(make_table(frame, **STRATA), fraction, strata=["region"], seed=1)
    counts = dict(release.table.data.group_by("region").len().iter_rows())
    assert counts == {region: expected_size(fraction, size) for region, size in STRATA_SIZES.items()}
    assert release.figures_as(SampleFigures).n_strata == 4
    # Two strata attributes: every (region, sex) cell on its own.
    both = sample(make_table(frame, **STRATA), fraction, strata=["region", "sex"], seed=1)
    sizes = {(r, s): n for r, s, n in frame.group_by("region", "sex").len().iter_rows()}
    got = {(r, s): n for r, s, n in both.table.data.group_by("region", "sex").len().iter_rows()}
    assert got == {cell: expected_size(fraction, size) for cell, size in sizes.items()}


def test_weights_are_divided_by_the_realized_fraction_of_the_stratum():
    frame = strata_frame()
    release = sample(make_table(frame, weights="w", **STRATA), 0.1, strata=["region"], seed=2)
    original = frame.filter(pl.Series(release.figures_as(SampleFigures).kept))
    realized = {region: expected_size(0.1, size) / size for region, size in STRATA_SIZES.items()}
    expected = [w / realized[r] for w, r in zip(original["w"], original["region"], strict=True)]
    assert release.table.data["w"].to_list() == pytest.approx(expected)
    assert release.table.weights == "w"
    # The rescaled weights of a stratum add up to about its weighted total (exactly with equal weights).
    equal = sample(
        make_table(frame.with_columns(pl.lit(2.0).alias("w")), weights="w", **STRATA), 0.1, strata=["region"]
    )
    totals = dict(equal.table.data.group_by("region").agg(pl.col("w").sum()).iter_rows())
    assert totals == pytest.approx({region: 2.0 * size for region, size in STRATA_SIZES.items()})


def test_every_record_is_equally_likely_to_be_kept():
    frame = strata_frame()
    table = make_table(frame, **STRATA)
    counts = np.zeros(frame.height)
    for seed in range(400):
        counts += sample(table, 0.5, strata=["region"], seed=seed).figures_as(SampleFigures).kept
    north = counts[:50]  # 25 of 50 kept each time: inclusion probability 1/2, sd of a count 10
    assert abs(north.mean() - 200) < 1e-9
    assert np.all(np.abs(north - 200) < 50)


def test_the_same_seed_gives_the_same_sample_and_another_seed_another():
    table = make_table(strata_frame(), **STRATA)
    first = sample(table, 0.3, seed=11).figures_as(SampleFigures).kept
    assert np.array_equal(first, sample(table, 0.3, seed=11).figures_as(SampleFigures).kept)
    assert not np.array_equal(first, sample(table, 0.3, seed=12).figures_as(SampleFigures).kept)


def test_sampling_errors():
    with pytest.raises(ConfigError, match="strata: attribute 'county' is not a column"):
        sample(make_table(strata_frame(), **STRATA), 0.5, strata=["county"])
    with pytest.raises(ConfigError, match=r"^fraction must be greater than 0, got 0\.0$"):
        sample(make_table(strata_frame(), **STRATA), 0.0)
    with pytest.raises(ConfigError, match=r"^fraction must be less than or equal to 1, got 1\.5$"):
        sample(make_table(strata_frame(), **STRATA), 1.5)


# Global recoding -------------------------------------------------------------------------------

MAPPING_CSV = """attribute,from,to
region,east,east-west
region,west,east-west
age,20,20-29
age,21,20-29
sex,M,1
sex,F,2
"""
MAPPING_YAML = """region: {east: east-west, west: east-west}
age: {20: 20-29, 21: 20-29}
sex: {M: 1, F: 2}
"""


def test_recoding_replaces_listed_values_and_passes_the_others_through(tmp_path):
    (tmp_path / "m.csv").write_text(MAPPING_CSV)
    frame = strata_frame().with_columns(
        pl.when(pl.col("age") == 59).then(None).otherwise(pl.col("age")).alias("age")
    )
    release = recode(make_table(frame, **STRATA), read_mapping(tmp_path / "m.csv"))
    data = release.table.data
    assert "id" not in data.columns
    region = {"east": "east-west", "west": "east-west"}
    assert data["region"].to_list() == [region.get(v, v) for v in frame["region"]]
    # age: 20 and 21 become text labels, the rest passes through as text, missing stays missing.
    assert data["age"].dtype == pl.String
    assert data["age"].to_list() == [
        None if v is None else ("20-29" if v in (20, 21) else str(v)) for v in frame["age"].to_list()
    ]
    assert release.table.schema["age"].kind is Kind.CATEGORICAL
    assert data["sex"].to_list() == [{"M": "1", "F": "2"}[v] for v in frame["sex"]]
    figures = release.figures_as(RecodeFigures)
    assert figures.changed == {"region": 8, "age": frame["age"].is_in([20, 21]).sum(), "sex": 88}
    assert figures.unused == {"region": [], "age": [], "sex": []}


def test_a_numeric_attribute_mapped_to_numbers_stays_numeric(tmp_path):
    frame = strata_frame()
    integers = recode(make_table(frame, **STRATA), {"age": {"20": "25", "59": "55"}})
    assert integers.table.data["age"].dtype == frame["age"].dtype
    assert integers.table.data["age"].to_list() == [{20: 25, 59: 55}.get(v, v) for v in frame["age"]]
    fractions = recode(make_table(frame, **STRATA), {"age": {"20": "20.5"}})
    assert fractions.table.data["age"].dtype == pl.Float64
    assert fractions.table.data["age"][0] == 20.5


def test_csv_and_yaml_mappings_give_the_same_release(tmp_path):
    (tmp_path / "m.csv").write_text(MAPPING_CSV)
    (tmp_path / "m.yaml").write_text(MAPPING_YAML)
    assert read_mapping(tmp_path / "m.csv") == read_mapping(tmp_path / "m.yaml")


@pytest.mark.parametrize(
    ("text", "suffix", "message"),
    [
        ("attr,from,to\nregion,a,b\n", ".csv", "starts with the header attribute,from,to"),
        ("attribute,from,to\nregion,a\n", ".csv", "line 2: expected 3 fields"),
        ("attribute,from,to\nregion,a,b\nregion,a,c\n", ".csv", "maps value 'a' twice"),
        ("attribute,from,to\n", ".csv", "lists no value"),
        ("region: [a, b]\n", ".yaml", "must map values to values"),
    ],
)
def test_malformed_mapping_files_are_named(tmp_path, text, suffix, message):
    path = tmp_path / f"m{suffix}"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        read_mapping(path)


def test_an_attribute_not_in_the_data_is_an_error():
    with pytest.raises(ConfigError, match="recodes attribute 'county', which is not a column"):
        recode(make_table(strata_frame(), **STRATA), {"county": {"a": "b"}})


# The commands ----------------------------------------------------------------------------------

CONFIG = """attributes:
  id:     {role: identifier}
  region: {role: quasi-identifier}
  age:    {role: quasi-identifier, kind: numeric}
data: {weights: w}
"""


def write(directory: Path) -> tuple[Path, Path]:
    strata_frame().write_csv(directory / "data.csv")
    (directory / "config.yaml").write_text(CONFIG)
    (directory / "m.csv").write_text(MAPPING_CSV)
    return directory / "data.csv", directory / "config.yaml"


def invoke(directory: Path, method: str, output: str, *options: str):
    data, config = write(directory)
    arguments = ["anonymize", method, str(data), "-c", str(config), "-o", str(directory / output)]
    return runner.invoke(app, [*arguments, *options])


def test_the_sample_command_records_the_fraction_and_rescales_the_weights(tmp_path):
    summary = tmp_path / "s.json"
    result = invoke(
        tmp_path,
        "sample",
        "out.csv",
        "--fraction",
        "0.2",
        "--strata",
        "region",
        "--seed",
        "4",
        "--summary",
        str(summary),
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["fraction"] == 0.2 and figures["recipe"]["steps"][0]["fraction"] == 0.2
    assert figures["records_kept"] == sum(expected_size(0.2, n) for n in STRATA_SIZES.values()) == 18
    assert figures["weights"] == "w"
    released = pl.read_csv(tmp_path / "out.csv")
    assert released.height == 18 and "id" not in released.columns
    table = load_config(tmp_path / "config.yaml").read(tmp_path / "data.csv")
    assert released["w"].to_list() == pytest.approx(
        sample(table, 0.2, strata=["region"], seed=4).table.data["w"].to_list()
    )
    assert "divided by the realized fraction" in " ".join(result.output.split())
    again = invoke(tmp_path, "sample", "again.csv", "--fraction", "0.2", "--strata", "region", "--seed", "4")
    assert again.exit_code == 0
    digest = [hashlib.sha256((tmp_path / n).read_bytes()).hexdigest() for n in ("out.csv", "again.csv")]
    assert digest[0] == digest[1]


@pytest.mark.parametrize(
    ("method", "options", "message"),
    [
        ("sample", ["--fraction", "0"], "--fraction must be greater than 0"),
        ("sample", ["--fraction", "1.5"], "--fraction must be less than or equal to 1"),
        ("sample", ["--fraction", "0.5", "--strata", "county"], "'county' is not a column"),
        ("recode", ["--mapping", "missing.csv"], "cannot read the mapping file"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, method, options, message):
    options = [str(tmp_path / o) if o == "missing.csv" else o for o in options]
    result = invoke(tmp_path, method, "out.csv", *options)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()


def test_recode_unknown_attribute_exits_2(tmp_path):
    write(tmp_path)
    (tmp_path / "bad.csv").write_text("attribute,from,to\ncounty,a,b\n")
    result = invoke(tmp_path, "recode", "out.csv", "--mapping", str(tmp_path / "bad.csv"))
    assert result.exit_code == 2, result.output
    assert "recodes attribute 'county', which is not a column" in " ".join(result.output.split())
    assert not (tmp_path / "out.csv").exists()


def test_a_recoding_is_re_applied_to_new_data_by_sdckit_apply(tmp_path):
    summary = tmp_path / "s.json"
    result = invoke(
        tmp_path, "recode", "out.csv", "--mapping", str(tmp_path / "m.csv"), "--summary", str(summary)
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(summary.read_text())
    assert figures["changed"]["region"] == 8
    assert figures["recipe"]["transformation"]["method"] == "recode"
    # The learnt data reproduces the release; next year's file is recoded the same way.
    same = runner.invoke(
        app, ["apply", str(summary), str(tmp_path / "data.csv"), "-o", str(tmp_path / "same.csv")]
    )
    assert same.exit_code == 0, same.output
    assert (tmp_path / "same.csv").read_bytes() == (tmp_path / "out.csv").read_bytes()
    new = strata_frame().reverse().with_columns(pl.col("age") + 1)
    new.write_csv(tmp_path / "new.csv")
    applied = runner.invoke(
        app, ["apply", str(summary), str(tmp_path / "new.csv"), "-o", str(tmp_path / "new-out.csv")]
    )
    assert applied.exit_code == 0, applied.output
    table = load_config(tmp_path / "config.yaml").read(tmp_path / "new.csv")
    expected = recode(table, read_mapping(tmp_path / "m.csv")).table.data
    assert pl.read_csv(tmp_path / "new-out.csv", infer_schema=False).equals(
        expected.select(pl.all().cast(pl.String))
    )
    # The mappings export as original,released files.
    exported = runner.invoke(app, ["apply", str(summary), "--export-mappings", str(tmp_path / "maps")])
    assert exported.exit_code == 0, exported.output
    assert (
        tmp_path / "maps" / "region.csv"
    ).read_text() == "original,released\neast,east-west\nwest,east-west\n"
