"""Section 3 of Dhaigude & Kumar's improved slicing against slicing (Li et al., 2012): Figure 2 (the
average correlation inside the released columns against the number of columns, seeded runs), which l
each configuration satisfies, and the time of the Mondrian-style vs the random-halving tuple
partitioning. The data is prepared by :func:`sdckit.experiments.data.complete_records` (Adult: 30,162
records without a missing value remain).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.experiments import Say
from sdckit.experiments.charts import correlation_chart, markdown_table
from sdckit.table import Role, Table, atomic_write


@dataclasses.dataclass(frozen=True)
class SlicingExperiment:
    """The tables of the improved-slicing experiment.

    ``correlation``: per number of columns and method, the mean and standard deviation over the
    seeded runs of the average correlation of the attributes released together (column mean, and
    pair-weighted), and the mean number of columns actually released. ``diversity``: per number of
    columns, method, l and tuple partitioning, whether an l-diverse sliced table was found, its
    buckets and the seconds of the tuple partitioning. ``timing``: the ratio of the two tuple
    partitionings per l. ``average_correlation`` is the mean over the released columns of the mean
    pairwise φ² inside each, a lone column counting 0 (the paper's measure, which falls as lone columns
    appear); ``columns_with_pairs`` leaves lone columns out and ``pair_weighted`` pools every
    within-column pair.
    """

    correlation: pl.DataFrame
    diversity: pl.DataFrame
    timing: pl.DataFrame
    parameters: dict[str, Any]


def _all_columns_correlation(matrix: np.ndarray, names: list[str], columns: list[tuple[str, ...]]) -> float:
    """Mean over the released columns of the mean pairwise φ² inside each, a lone column counting 0:
    the improved-slicing paper's measure, which falls as lone columns appear."""
    index = {name: i for i, name in enumerate(names)}
    scores = []
    for column in columns:
        members = [index[name] for name in column]
        pairs = [matrix[a, b] for x, a in enumerate(members) for b in members[x + 1 :]]
        scores.append(float(np.mean(pairs)) if pairs else 0.0)
    return float(np.mean(scores)) if scores else 0.0


def check_attributes(
    table: Table, sensitive: str, sensitive_column_size: int, beta: int, source: str
) -> None:
    """Refuse a sensitive attribute that is not a column, and a ``beta`` above the number of
    attributes outside the sensitive column (no overlapping clustering could have that many groups)."""
    names = [a.name for a in table.schema.attributes]
    if sensitive not in names:
        raise ConfigError(f"--sensitive '{sensitive}' is not a column of {source} ({', '.join(names)})")
    if beta > len(names) - sensitive_column_size:
        raise ConfigError(
            f"--beta {beta} is larger than the number of attributes outside the sensitive column "
            f"({len(names) - sensitive_column_size})"
        )


def slicing_experiment(
    table: Table,
    *,
    sensitive: str,
    n_columns: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10),
    runs: int = 50,
    sensitive_column_size: int = 3,
    beta: int = 2,
    max_labels: int = 2,
    ls: tuple[int, ...] = (2, 3, 4, 5, 6),
    min_bucket_size: int = 250,
    n_bins: int = 10,
    seed: int = 0,
    say: Say | None = None,
) -> SlicingExperiment:
    """Section 3 of Dhaigude & Kumar's improved slicing (Figure 2) on ``table``.

    For every number of columns c in ``n_columns``, ``runs`` seeded runs of each attribute
    partitioning: slicing (PAM k-medoids on 1 - φ² from a random start, Li et al. 2012) and improved
    slicing (overlapping correlation clustering, Jaccard, at most ``max_labels`` columns per
    attribute, at least ``beta`` groups); in both the sensitive column holds ``sensitive`` and the
    ``sensitive_column_size - 1`` attributes most correlated with it (the papers' "at least 3
    attributes in the column containing the SA"). Each run's columns are scored by the average φ²
    of the attributes released together. Then, with the columns of the first run, the tuples are
    partitioned for every l in ``ls`` with buckets of at least ``min_bucket_size`` records, by the
    Mondrian-style split of slicing and by the random halving of improved slicing, and the table
    records whether an l-diverse sliced table was found and how long the partitioning took.

    Deviation: for improved slicing, c counts the sensitive column plus the c - 1 labels given to the
    overlapping clustering of the other attributes; identical or empty labels are merged or dropped,
    so fewer columns may be released (the mean released count is reported).
    """
    from sdckit.anonymize.slicing import (
        _overlapping_columns,
        attribute_correlation,
        column_correlation,
        partition_attributes,
        slice_table,
    )

    say = say if say is not None else (lambda message: None)
    names = [a.name for a in table.schema.attributes if a.role is not Role.IDENTIFIER]
    if sensitive not in names:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is not a column of the data ({', '.join(names)})"
        )
    numeric = [name for name in names if table.data.schema[name].is_numeric()]
    started = time.perf_counter()
    matrix = attribute_correlation(table.data, names, n_bins=n_bins, numeric=numeric)
    say(f"φ² of {len(names)} attributes in {time.perf_counter() - started:.2f} s")

    correlation_rows = []
    first_columns: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    for c in n_columns:
        for method in ("slicing", "improved slicing"):
            values, with_pairs, pooled, counts = [], [], [], []
            started = time.perf_counter()
            for run in range(runs):
                if method == "slicing":
                    columns = partition_attributes(
                        matrix, names, c, sensitive=sensitive, sensitive_column_size=sensitive_column_size,
                        seed=seed + run,
                    )  # fmt: skip
                else:
                    columns = _overlapping_columns(
                        matrix, names, sensitive, c, sensitive_column_size, beta, max_labels, "jaccard", 10,
                        seed + run,
                    )  # fmt: skip
                if run == 0:
                    first_columns[(method, c)] = columns
                mean, weighted = column_correlation(matrix, names, columns)
                values.append(_all_columns_correlation(matrix, names, columns))
                with_pairs.append(mean)
                pooled.append(weighted)
                counts.append(len(columns))
            correlation_rows.append(
                {
                    "columns": c,
                    "method": method,
                    "runs": runs,
                    "average_correlation": float(np.nanmean(values)),
                    "std": float(np.nanstd(values)),
                    "columns_with_pairs": float(np.nanmean(with_pairs)),
                    "pair_weighted": float(np.nanmean(pooled)),
                    "released_columns": float(np.mean(counts)),
                    "seconds": time.perf_counter() - started,
                }
            )
            say(
                f"c = {c}, {method}: average φ² {correlation_rows[-1]['average_correlation']:.4f} "
                f"± {correlation_rows[-1]['std']:.4f} over {runs} runs"
            )

    diversity_rows = []
    for (method, c), columns in first_columns.items():
        for l in ls:  # noqa: E741
            for partition in ("mondrian", "random-halving"):
                row = {"columns": c, "method": method, "l": l, "partition": partition}
                try:
                    release = slice_table(
                        table, sensitive=sensitive, columns=columns, l=float(l), partition=partition,
                        min_bucket_size=min_bucket_size, n_bins=n_bins, seed=seed, membership=False,
                        method="overlapping-slicing" if method == "improved slicing" else "slicing",
                    )  # fmt: skip
                except ConfigError as error:
                    row.update(satisfied=False, buckets=None, smallest=None, l_achieved=None, seconds=None)
                    row["note"] = str(error).split(":")[0]
                else:
                    row.update(
                        satisfied=True,
                        buckets=release.n_buckets,
                        smallest=release.smallest_bucket,
                        l_achieved=release.l_achieved,
                        seconds=release.timings["tuples"],
                        note="",
                    )
                diversity_rows.append(row)
        satisfied = sorted(
            {r["l"] for r in diversity_rows if r["method"] == method and r["columns"] == c and r["satisfied"]}
        )
        say(f"c = {c}, {method}: l-diverse for l in {satisfied or 'none'}")
    diversity = pl.DataFrame(
        diversity_rows,
        schema={
            "columns": pl.Int64,
            "method": pl.String,
            "l": pl.Int64,
            "partition": pl.String,
            "satisfied": pl.Boolean,
            "buckets": pl.Int64,
            "smallest": pl.Int64,
            "l_achieved": pl.Float64,
            "seconds": pl.Float64,
            "note": pl.String,
        },
    )
    timed = diversity.filter(pl.col("satisfied"))
    timing = (
        timed.group_by("l", "partition")
        .agg(pl.col("seconds").sum().alias("seconds"), pl.len().alias("runs"))
        .pivot(on="partition", index="l", values="seconds")
        .sort("l")
    )
    if {"mondrian", "random-halving"} <= set(timing.columns):
        timing = timing.with_columns(
            (pl.col("random-halving") / pl.col("mondrian")).alias("halving / mondrian")
        )
    return SlicingExperiment(
        correlation=pl.DataFrame(correlation_rows),
        diversity=diversity,
        timing=timing,
        parameters={
            "records": table.n_records,
            "attributes": names,
            "sensitive": sensitive,
            "runs": runs,
            "sensitive_column_size": sensitive_column_size,
            "beta": beta,
            "max_labels": max_labels,
            "min_bucket_size": min_bucket_size,
            "n_bins": n_bins,
            "seed": seed,
        },
    )


def write_slicing_experiment(
    result: SlicingExperiment, directory: str | os.PathLike, name: str = "data"
) -> dict:
    """Write the three tables (CSV and one markdown file) and Figure 2 (average correlation against
    the number of columns, slicing vs improved slicing) into ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "correlation": directory / "correlation.csv",
        "diversity": directory / "diversity.csv",
        "timing": directory / "timing.csv",
        "markdown": directory / "results.md",
        "figure": directory / "figure2.png",
    }
    for key in ("correlation", "diversity", "timing"):
        with atomic_write(paths[key]) as temporary:
            getattr(result, key).write_csv(temporary)
    satisfied = (
        result.diversity.group_by("columns", "method")
        .agg(
            pl.col("l")
            .filter(pl.col("satisfied"))
            .unique()
            .sort()
            .cast(pl.String)
            .str.join(", ")
            .alias("l-diverse")
        )
        .sort("columns", "method")
    )
    p = result.parameters
    text = (
        f"# Improved slicing vs slicing on {name}\n\n"
        f"{p['records']:,} records, {len(p['attributes'])} attributes, sensitive {p['sensitive']}; "
        f"{p['runs']} seeded runs per point; sensitive column of {p['sensitive_column_size']} attributes; "
        f"beta {p['beta']}, at most {p['max_labels']} columns per attribute; buckets of at least "
        f"{p['min_bucket_size']} records.\n\n"
        "## Average correlation inside the released columns (Figure 2)\n\n"
        + markdown_table(result.correlation)
        + "\n## Which l each configuration satisfies\n\n"
        + markdown_table(satisfied)
        + "\n## Tuple partitioning time (seconds, summed over the configurations that satisfy l)\n\n"
        + markdown_table(result.timing)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)
    correlation_chart(result.correlation, paths["figure"], name)
    return paths


def summary(result: SlicingExperiment, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The experiment's figures as JSON-ready values (the ``summary.json`` of ``sdckit experiment
    slicing``): parameters, the correlation, diversity and timing tables, and the elapsed seconds
    (rounded to milliseconds) when given."""
    figures: dict[str, Any] = {
        "parameters": result.parameters,
        "correlation": result.correlation.to_dicts(),
        "diversity": result.diversity.to_dicts(),
        "timing": result.timing.to_dicts(),
    }
    if elapsed_seconds is not None:
        figures["elapsed_seconds"] = round(elapsed_seconds, 3)
    return figures
