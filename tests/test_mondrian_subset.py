"""Mondrian with a research subset and t-closeness: the distribution each class is compared with is the
research subset's, as generalize and ``check`` count it (docs/anonymize.md). Mondrian used the whole
population's, so a table where the subset's distribution differs from the population's was refused
("the whole table fails t-closeness") although generalize releases it.

The adversary below reads only the released file: the subset's rows, grouped by their released
quasi-identifiers, each class's sensitive distribution against the subset's (equal-distance EMD is
half the L1 distance), with polars, independently of sdckit's model code.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from typer.testing import CliRunner

from sdckit.cli import app


def _population(path) -> None:
    rng = np.random.default_rng(1)
    n = 3000
    study = rng.random(n) < 0.3
    disease = np.where(
        study,
        np.where(rng.random(n) < 0.8, "flu", "cancer"),
        rng.choice(["flu", "cancer", "hiv", "none"], n),
    )
    pl.DataFrame(
        {
            "age": rng.integers(20, 80, n),
            "zip": rng.integers(0, 50, n),
            "disease": disease,
            "study": np.where(study, "yes", "no"),
        }
    ).write_csv(path)


def _largest_distance(released: pl.DataFrame) -> float:
    subset = released.filter(pl.col("study") == "yes")
    overall = subset.group_by("disease").agg((pl.len() / subset.height).alias("q"))
    shares = subset.group_by("age", "zip", "disease").agg(pl.len().alias("n"))
    shares = shares.with_columns((pl.col("n") / pl.col("n").sum().over("age", "zip")).alias("p"))
    classes = subset.select("age", "zip").unique().join(overall, how="cross")
    joined = classes.join(shares, on=["age", "zip", "disease"], how="left").fill_null(0.0)
    distance = joined.group_by("age", "zip").agg(((pl.col("p") - pl.col("q")).abs().sum() / 2).alias("d"))
    return float(distance["d"].max())


def test_mondrian_compares_classes_with_the_subsets_distribution(tmp_path):
    _population(tmp_path / "pop.csv")
    config = tmp_path / "c.yaml"
    config.write_text(
        "attributes:\n  age: {role: quasi-identifier}\n  zip: {role: quasi-identifier}\n"
        "  disease: {role: sensitive}\n"
    )
    options = ["--research-subset", "study", "--delta-max", "0.9", "-k", "5", "-t", "0.15"]
    out = tmp_path / "out.csv"
    runner = CliRunner()
    result = runner.invoke(
        app, ["anonymize", "mondrian", str(tmp_path / "pop.csv"), "-c", str(config), *options, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    released = pl.read_csv(out, infer_schema=False)
    # The subset's distribution (80% flu) is far from the population's (about 45%): against the
    # population, the whole table fails 0.15-closeness; against the subset, the cuts hold it.
    assert _largest_distance(released) <= 0.15 + 1e-12
    sizes = released.filter(pl.col("study") == "yes").group_by("age", "zip").len()
    assert sizes["len"].min() >= 5
    assert released.height > sizes.height > 1  # cut, and not down to one class
    checked = runner.invoke(app, ["check", str(out), "-c", str(config), *options])
    assert checked.exit_code == 0, checked.output
