"""The example data generator and the example configuration (examples/)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.generate import (  # noqa: E402
    COLUMNS,
    FLAGS,
    MISSING_SHARE,
    PARISHES,
    QUASI_IDENTIFIERS,
    generate,
    main,
)

CONFIG = ROOT / "examples" / "example.yaml"
N = 20_000


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    return generate(N, seed=7)


@pytest.fixture(scope="module")
def config() -> dict:
    return yaml.safe_load(CONFIG.read_text())


def test_same_seed_same_frame(frame):
    assert generate(N, seed=7).equals(frame)


def test_different_seed_different_frame(frame):
    other = generate(N, seed=8)
    assert other.schema == frame.schema
    assert not other.equals(frame)


def test_shape(frame):
    assert frame.shape == (N, 27)
    assert tuple(frame.columns) == COLUMNS
    assert len(FLAGS) + len(QUASI_IDENTIFIERS) + 1 == 27
    assert generate(1, seed=1).height == 1
    assert generate(1234, seed=1).height == 1234


def test_identifier_is_unique(frame):
    assert frame["student_id"].n_unique() == N
    assert frame["student_id"].null_count() == 0


def test_flags_are_yes_no_with_plausible_prevalence(frame):
    for flag in FLAGS:
        column = frame[flag.name]
        assert column.dtype == pl.String
        assert set(column.unique().to_list()) <= {"Yes", "No"}
        prevalence = (column == "Yes").mean()
        assert 0.0005 <= flag.prevalence <= 0.12
        assert prevalence == pytest.approx(flag.prevalence, rel=0.2, abs=0.0005), flag.name


def test_flags_follow_lunch_status_and_each_other(frame):
    free = frame.filter(pl.col("lunch_status") == "Free")
    paid = frame.filter(pl.col("lunch_status") == "Paid")
    for name in ("dropout", "out_of_school_suspension", "retained"):
        assert (free[name] == "Yes").mean() > 1.3 * (paid[name] == "Yes").mean(), name
    suspended = frame.filter(pl.col("out_of_school_suspension") == "Yes")
    assert (suspended["dropout"] == "Yes").mean() > 2 * (frame["dropout"] == "Yes").mean()


def test_quasi_identifiers_are_plausible(frame):
    assert set(frame["gender"].unique()) == {"M", "F"}
    assert set(frame["parish"].unique()) <= set(PARISHES)
    assert frame["parish"].n_unique() > 55
    assert frame["school"].n_unique() > 1000
    # Schools are nested in parishes.
    assert frame.group_by("school").agg(pl.col("parish").n_unique()).get_column("parish").max() == 1
    years = frame["entry_school_year"]
    assert years.min() >= 1999 and years.max() <= 2011
    grades = frame["entry_grade"].drop_nulls()
    assert grades.min() >= 0 and grades.max() <= 12
    ethnicity = frame["ethnicity"].value_counts(normalize=True)
    assert ethnicity["ethnicity"].drop_nulls().n_unique() == 5
    # Ethnicity and lunch status depend on the parish.
    by_parish = frame.group_by("parish").agg(
        black=(pl.col("ethnicity") == "Black").mean(),
        free=(pl.col("lunch_status") == "Free").mean(),
        n=pl.len(),
    )
    large = by_parish.filter(pl.col("n") > 300)
    assert large["black"].max() - large["black"].min() > 0.4
    assert large["free"].max() - large["free"].min() > 0.3


def test_missing_values_where_intended(frame):
    for name in frame.columns:
        nulls = frame[name].null_count()
        if name in MISSING_SHARE:
            assert nulls / N == pytest.approx(MISSING_SHARE[name], rel=0.5), name
        else:
            assert nulls == 0, name


def test_cli_writes_csv_and_parquet(tmp_path, capsys):
    for name in ("small.csv", "small.parquet"):
        output = tmp_path / name
        assert main(["--records", "50", "--seed", "3", "--output", str(output)]) == 0
        assert output.name in capsys.readouterr().out
        read = pl.read_csv(output) if name.endswith(".csv") else pl.read_parquet(output)
        assert read.shape == (50, 27)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.csv", "small.parquet"]  # no temporaries


def test_config_describes_every_column(frame, config):
    described = config["attributes"]
    assert set(described) == set(frame.columns)
    assert described["student_id"]["role"] == "identifier"
    for name in QUASI_IDENTIFIERS:
        assert described[name]["role"] == "quasi-identifier"
        assert described[name]["sensitivity"] == 0
    for flag in FLAGS:
        spec = described[flag.name]
        assert spec["role"] == "sensitive" and spec["sensitivity"] == 1
        assert spec["values"] == {"Yes": 1, "No": 0}
        assert 0 < spec["public"] < 0.1
    assert config["risk"] == {"alpha": 100, "epsilon": 0.01, "missing": "wildcard"}


def test_config_keeps_about_as_many_known_sets_as_the_paper(config):
    epsilon = config["risk"]["epsilon"]
    public = {
        name: spec.get("public", 0.0)
        for name, spec in config["attributes"].items()
        if spec.get("role") != "identifier"
    }
    # A set holding an attribute with PK <= epsilon is pruned, so only the others need enumerating.
    candidates = [name for name, probability in public.items() if probability > epsilon]
    kept = []
    for size in range(len(candidates) + 1):
        for known in itertools.combinations(candidates, size):
            probability = math.prod(public[name] for name in known)
            if probability > epsilon:
                kept.append(known)
            # No product sits on the threshold, where rounding would decide.
            assert abs(probability - epsilon) > 1e-6 * epsilon, known
    assert 90 <= len(kept) <= 130
    flags = {flag.name for flag in FLAGS}
    assert any(set(known) & flags and set(known) - flags for known in kept), "no set mixes QIs and flags"


@pytest.mark.slow
def test_demo_runs_through_the_console_script(tmp_path):
    """`make demo` on a small file: generate, then `sdckit risk combined` (the command line's entry
    point, as the installed script runs it) writes scores, histogram and summary."""
    data = tmp_path / "example.parquet"
    assert main(["--records", "2000", "--seed", "1", "--output", str(data)]) == 0
    outputs = {
        "scores": tmp_path / "scores.parquet",
        "histogram": tmp_path / "risk.png",
        "summary": tmp_path / "s.json",
    }
    completed = subprocess.run(
        [sys.executable, "-c", "from sdckit.cli import main; main()", "risk", "combined", str(data),
         "--config", str(CONFIG), "--threshold", "0.01", "--output", str(outputs["scores"]),
         "--histogram", str(outputs["histogram"]), "--summary", str(outputs["summary"]), "--quiet"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    packed = "".join(completed.stdout.split())  # rich may fold a long path
    for path in outputs.values():
        assert f"written{path}" in packed, completed.stdout
    summary = json.loads(outputs["summary"].read_text())
    assert summary["records"] == 2000
    assert 90 <= summary["known_sets"] <= 130  # as test_config_keeps_about_as_many_known_sets_as_the_paper
    assert pl.read_parquet(outputs["scores"]).height == 2000
    assert outputs["histogram"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# The data shapes of benchmarks/bench_shapes.py (examples/shapes.py) ------------------------------


def _kept_known_sets(config: dict) -> int:
    """Known sets kept by sdckit's own pruning search for a generated configuration."""
    from sdckit.risk.combined import enumerate_known_sets

    public = [spec["public"] for spec in config["attributes"].values() if spec.get("role") != "identifier"]
    return len(enumerate_known_sets(public, config["risk"]["epsilon"]))


@pytest.mark.parametrize(
    ("qis", "flags", "known_sets"), [(3, 16, 10), (10, 16, 111), (10, 16, 500), (30, 16, 111), (2, 0, 4)]
)
def test_shape_keeps_exactly_the_known_sets_asked_for(qis, flags, known_sets):
    from examples.shapes import Shape, generate_shape

    frame, config = generate_shape(Shape(records=500, qis=qis, flags=flags, known_sets=known_sets), seed=3)
    assert _kept_known_sets(config) == known_sets
    assert frame.columns == ["id", *(f"q{j}" for j in range(qis)), *(f"f{j}" for j in range(flags))]


def test_shape_cardinalities_nulls_and_skew():
    from examples.shapes import Shape, generate_shape

    shape = Shape(20_000, qis=3, cardinality="2-10000", null_rate=0.2, skew=1.1, flags=2, known_sets=5)
    assert shape.cardinalities() == [2, 141, 10_000]
    complete, _ = generate_shape(replace(shape, null_rate=0.0), seed=1)
    assert [complete.get_column(f"q{j}").n_unique() for j in range(3)] == [2, 141, 10_000]
    frame, config = generate_shape(shape, seed=1)
    # Every value is drawn; a fifth of them are then made missing, which hides some of the rare ones.
    distinct = [frame.get_column(f"q{j}").drop_nulls().n_unique() for j in range(3)]
    assert distinct[:2] == [2, 141] and 0.8 * 10_000 < distinct[2] < 10_000
    for name in ("q0", "q1", "q2", "f0", "f1"):
        assert frame.get_column(name).null_count() / frame.height == pytest.approx(0.2, abs=0.015)
    # Zipf 1.1 over 141 values: the most frequent value holds 1 / H(141, 1.1) ~ 21% of the values.
    top = frame.get_column("q1").drop_nulls().value_counts(sort=True).get_column("count")[0]
    expected = 1.0 / sum(k**-1.1 for k in range(1, 142))
    assert top / frame.get_column("q1").drop_nulls().len() == pytest.approx(expected, abs=0.02)
    assert frame.schema["q1"] == pl.Int64 and frame.schema["q0"] == pl.String
    assert set(frame.get_column("f0").drop_nulls().unique()) == {"No", "Yes"}
    assert config["risk"] == {"alpha": 100.0, "epsilon": 0.01, "missing": "category"}


def test_shape_is_deterministic_and_written_with_its_configuration(tmp_path):
    from examples.shapes import Shape, generate_shape

    shape = Shape(records=1_000, qis=4, cardinality="5", null_rate=0.1, flags=3, known_sets=12)
    first, config = generate_shape(shape, seed=5)
    second, _ = generate_shape(shape, seed=5)
    assert first.equals(second)
    assert not first.equals(generate_shape(shape, seed=6)[0])
    output = tmp_path / "shape.csv"
    argv = ["--kind", "shape", "--records", "1000", "--qis", "4", "--cardinality", "5", "--null-rate", "0.1"]
    assert main([*argv, "--flags", "3", "--known-sets", "12", "--seed", "5", "--output", str(output)]) == 0
    assert pl.read_csv(output).height == 1_000
    written = yaml.safe_load(output.with_suffix(".yaml").read_text())
    assert written == config and _kept_known_sets(written) == 12


def test_shape_refuses_more_known_sets_than_sets():
    from examples.shapes import Shape, generate_shape

    with pytest.raises(ValueError, match="between 1 and 2\\^3"):
        generate_shape(Shape(records=10, qis=2, flags=1, known_sets=9))
