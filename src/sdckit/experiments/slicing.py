"""Section 3 of Dhaigude & Kumar's improved slicing against slicing (Li et al., 2012): Figure 2 (the
average correlation inside the released columns against the number of columns, seeded runs), which l
each configuration satisfies, and the time of the Mondrian-style vs the random-halving tuple
partitioning. The data is prepared by :func:`sdckit.experiments.data.complete_records` (Adult: 30,162
records without a missing value remain).

The sensitivity study (:func:`slicing_study`) asks which reading of the paper reproduces it: Figure 2
for every correlation measure (:data:`MEASURES`), averaging rule (:data:`AVERAGINGS`) and size of the
sensitive column, judged by the paper's two trends (:func:`trends`); and the l reached at buckets of at
least 250 records under each reading of tuple matching for the quasi-identifiers of the sensitive
column (:data:`sdckit.anonymize.slicing.MATCHINGS`; releases always use the strict one).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.experiments import Say
from sdckit.experiments.charts import correlation_chart, markdown_table
from sdckit.io import atomic_write
from sdckit.params import spell
from sdckit.table import Role, Table

#: Correlation measures of the study: φ² (Li et al.'s mean-square contingency, SPEC §1.2), |Pearson|
#: of the integer codes (the similarity the improved-slicing paper names), Cramér's V (= sqrt(φ²)).
MEASURES = ("phi2", "pearson", "cramers-v")
#: How the average correlation of a set of columns is taken: over all columns with a lone column
#: counting 0 (``lone-zero``), over the columns of at least 2 attributes (``paired-columns``), over
#: all attribute pairs inside columns pooled (``pairs``).
AVERAGINGS = ("lone-zero", "paired-columns", "pairs")
#: The column of the correlation table holding each averaging.
AVERAGE_COLUMNS = {"lone-zero": "lone_zero", "paired-columns": "columns_with_pairs", "pairs": "pair_weighted"}
MEASURE_LABELS = {"phi2": "φ²", "pearson": "|Pearson| on codes", "cramers-v": "Cramér's V"}
#: Each method with the tuple partitioning of its paper.
PARTITION_OF = {"slicing": "mondrian", "improved slicing": "random-halving"}


@dataclasses.dataclass(frozen=True)
class SlicingExperiment:
    """The tables of the improved-slicing experiment.

    ``correlation``: per number of columns and method, the mean and standard deviation over the
    seeded runs of the average correlation of the attributes released together under the chosen
    averaging (``average_correlation``, ``std``), the three averagings (``lone_zero``: the mean over
    the released columns of the mean pairwise correlation inside each, a lone column counting 0;
    ``columns_with_pairs``: lone columns left out; ``pair_weighted``: every within-column pair pooled),
    and the mean number of columns actually released. ``diversity``: per number of columns, method, l
    and tuple partitioning, whether an l-diverse sliced table was found under the chosen reading of
    tuple matching, its buckets, the l it achieves under that reading and under the strict one
    (``l_strict``, what a release guarantees) and the seconds of the tuple partitioning. ``timing``:
    the ratio of the two tuple partitionings per l.
    """

    correlation: pl.DataFrame
    diversity: pl.DataFrame
    timing: pl.DataFrame
    parameters: dict[str, Any]


def _choice(value: str, choices: Sequence[str], name: str, option: str | None = None) -> None:
    if value not in choices:
        raise ConfigError(f"{spell(name, option)} must be one of {', '.join(choices)}, got {value!r}")


def correlation_matrix(
    table: Table, names: Sequence[str], measure: str = "phi2", n_bins: int = 10
) -> np.ndarray:
    """The attribute correlation matrix of ``names`` under ``measure`` (:data:`MEASURES`), numeric
    attributes discretized into ``n_bins`` equal-width bins (SPEC §1.3): ``phi2`` and ``pearson`` by
    :func:`sdckit.anonymize.slicing.attribute_correlation`, ``cramers-v`` the square root of φ²
    (SPEC's φ² is χ² / (n (min(d1, d2) - 1)), Cramér's V squared)."""
    from sdckit.anonymize.slicing import attribute_correlation

    _choice(measure, MEASURES, "measure", "--correlation")
    names = list(names)
    numeric = [name for name in names if table.data.schema[name].is_numeric()]
    method = "phi2" if measure == "cramers-v" else measure
    matrix = attribute_correlation(table.data, names, method=method, n_bins=n_bins, numeric=numeric)
    return np.sqrt(matrix) if measure == "cramers-v" else matrix


def average_correlation(
    matrix: np.ndarray, names: Sequence[str], columns: Sequence[Sequence[str]], averaging: str = "lone-zero"
) -> float:
    """The average correlation of the attributes released together (the improved-slicing paper's
    utility measure) under ``averaging`` (:data:`AVERAGINGS`):

    * ``lone-zero``: the mean over the columns of the mean of ``matrix[a, b]`` over the column's
      unordered pairs of distinct attributes, a lone column (one attribute) counting 0 — the reading
      under which "lone columns" lower the average, as the paper says; 0 without columns;
    * ``paired-columns``: the same mean over the columns of at least 2 attributes only (NaN if none);
    * ``pairs``: the mean of ``matrix[a, b]`` over all within-column pairs pooled (NaN if none).
    """
    _choice(averaging, AVERAGINGS, "averaging")
    index = {name: i for i, name in enumerate(names)}
    scores: list[float] = []
    pooled: list[float] = []
    for column in columns:
        members = [index[name] for name in column]
        pairs = [float(matrix[a, b]) for x, a in enumerate(members) for b in members[x + 1 :]]
        if pairs:
            scores.append(float(np.mean(pairs)))
            pooled.extend(pairs)
        elif averaging == "lone-zero":
            scores.append(0.0)
    if averaging == "pairs":
        return float(np.mean(pooled)) if pooled else math.nan
    if not scores:
        return 0.0 if averaging == "lone-zero" else math.nan
    return float(np.mean(scores))


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard deviation of the values that are not NaN (NaN, NaN if none)."""
    kept = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    if kept.size == 0:
        return math.nan, math.nan
    return float(kept.mean()), float(kept.std())


def check_attributes(
    table: Table, sensitive: str, sensitive_column_size: int, beta: int, source: str
) -> None:
    """Refuse a sensitive attribute that is not a column, and a ``beta`` above the number of
    attributes outside the sensitive column (no overlapping clustering could have that many groups)."""
    names = [a.name for a in table.schema.attributes]
    if sensitive not in names:
        raise ConfigError(
            f"{spell('sensitive')} '{sensitive}' is not a column of {source} ({', '.join(names)})"
        )
    if beta > len(names) - sensitive_column_size:
        raise ConfigError(
            f"{spell('beta')} {beta} is larger than the number of attributes outside the sensitive column "
            f"({len(names) - sensitive_column_size})"
        )


def _attributes(table: Table, sensitive: str) -> list[str]:
    names = [a.name for a in table.schema.attributes if a.role is not Role.IDENTIFIER]
    if sensitive not in names:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is not a column of the data ({', '.join(names)})"
        )
    return names


def _columns_of(
    method: str,
    matrix: np.ndarray,
    names: list[str],
    sensitive: str,
    c: int,
    sensitive_column_size: int,
    beta: int,
    max_labels: int,
    seed: int,
) -> list[tuple[str, ...]]:
    """The columns of one run: PAM from a random start (slicing) or overlapping correlation
    clustering (improved slicing), the sensitive column fixed by SPEC §1.4's alpha rule."""
    from sdckit.anonymize._slicing_columns import overlapping_columns, partition_attributes

    if method == "slicing":
        return partition_attributes(
            matrix, names, c, sensitive=sensitive, sensitive_column_size=sensitive_column_size, seed=seed
        )
    return overlapping_columns(
        matrix, names, sensitive, c, sensitive_column_size, beta, max_labels, "jaccard", 10, seed
    )


def figure2(
    matrix: np.ndarray,
    names: list[str],
    *,
    sensitive: str,
    n_columns: Sequence[int],
    runs: int,
    sensitive_column_size: int,
    beta: int,
    max_labels: int,
    seed: int,
    averaging: str = "lone-zero",
    say: Say | None = None,
    label: str = "φ²",
) -> tuple[pl.DataFrame, dict[tuple[str, int], list[tuple[str, ...]]]]:
    """Figure 2's table for one correlation ``matrix``: for every c in ``n_columns`` and both methods,
    ``runs`` seeded runs (seeds ``seed``, ``seed + 1``, ...) scored by every averaging; the chosen
    ``averaging`` is ``average_correlation`` / ``std``. Also returns the columns of each first run."""
    _choice(averaging, AVERAGINGS, "averaging")
    say = say if say is not None else (lambda message: None)
    rows = []
    first_columns: dict[tuple[str, int], list[tuple[str, ...]]] = {}
    for c in n_columns:
        for method in PARTITION_OF:
            values: dict[str, list[float]] = {key: [] for key in AVERAGINGS}
            counts = []
            started = time.perf_counter()
            for run in range(runs):
                columns = _columns_of(
                    method, matrix, names, sensitive, c, sensitive_column_size, beta, max_labels, seed + run
                )
                if run == 0:
                    first_columns[(method, c)] = columns
                for key in AVERAGINGS:
                    values[key].append(average_correlation(matrix, names, columns, key))
                counts.append(len(columns))
            mean, std = _mean_std(values[averaging])
            row = {"columns": c, "method": method, "runs": runs, "average_correlation": mean, "std": std}
            for key, column in AVERAGE_COLUMNS.items():
                row[column] = _mean_std(values[key])[0]
            row["released_columns"] = float(np.mean(counts))
            row["seconds"] = time.perf_counter() - started
            rows.append(row)
            say(f"c = {c}, {method}: average {label} {mean:.4f} ± {std:.4f} over {runs} runs")
    schema = {
        "columns": pl.Int64,
        "method": pl.String,
        "runs": pl.Int64,
        "average_correlation": pl.Float64,
        "std": pl.Float64,
        **{column: pl.Float64 for column in AVERAGE_COLUMNS.values()},
        "released_columns": pl.Float64,
        "seconds": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema), first_columns


def _kendall(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-a of two sequences: (concordant - discordant pairs) / all pairs; 0 below 2 points."""
    first, second = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = first.size
    if n < 2:
        return 0.0
    upper = np.triu_indices(n, 1)
    signs = np.sign(first[:, None] - first[None, :]) * np.sign(second[:, None] - second[None, :])
    return float(signs[upper].sum() / (n * (n - 1) / 2))


def trends(correlation: pl.DataFrame, value: str = "average_correlation") -> dict[str, Any]:
    """Whether a Figure 2 table shows the paper's two trends.

    * Slicing "falls as the number of columns increases": Kendall's tau of (c, value) is negative
      and the value at the largest c is below the value at the smallest (``slicing_falls``).
    * Improved slicing "increases up to a maxima and then declines": the largest value is at an
      inner c (not the first or the last) and above both ends (``improved_rises_then_falls``); its
      shape score is (tau up to the peak - tau from the peak) / 2, 1 for a clean rise then fall.

    ``closeness`` = -tau(slicing) + the improved shape score, at most 2; ``reproduces`` when both
    trends hold. Points whose value is NaN are left out.
    """
    result: dict[str, Any] = {}
    curves = {}
    for method in PARTITION_OF:
        rows = correlation.filter(pl.col("method") == method).sort("columns")
        rows = rows.filter(pl.col(value).is_not_nan() & pl.col(value).is_not_null())
        curves[method] = (rows["columns"].to_numpy().astype(np.float64), rows[value].to_numpy())
    xs, ys = curves["slicing"]
    tau = _kendall(xs, ys)
    falls = bool(ys.size >= 2 and tau < 0 and ys[-1] < ys[0])
    xi, yi = curves["improved slicing"]
    if yi.size:
        peak = int(np.argmax(yi))
        rise, fall = _kendall(xi[: peak + 1], yi[: peak + 1]), _kendall(xi[peak:], yi[peak:])
        shape = bool(0 < peak < yi.size - 1 and yi[peak] > yi[0] and yi[peak] > yi[-1])
        peak_at: int | None = int(xi[peak])
    else:
        rise = fall = 0.0
        shape, peak_at = False, None
    result.update(
        slicing_tau=tau,
        slicing_first=float(ys[0]) if ys.size else math.nan,
        slicing_last=float(ys[-1]) if ys.size else math.nan,
        slicing_falls=falls,
        improved_peak=peak_at,
        improved_rise_tau=rise,
        improved_fall_tau=fall,
        improved_rises_then_falls=shape,
        closeness=-tau + (rise - fall) / 2,
        reproduces=falls and shape,
    )
    return result


def _l_of(
    encoding: Any,
    columns: Sequence[Sequence[str]],
    sensitive: str,
    codes: np.ndarray,
    n_values: int,
    buckets: Sequence[np.ndarray],
    matching: str,
) -> float:
    """The l a bucketing achieves under the tuple matching ``matching``: 1 / max_t max_s p(t, s)."""
    from sdckit.anonymize.slicing import diversity_keys
    from sdckit.models.sliced import tuple_probabilities

    keys, qi = diversity_keys(encoding, columns, sensitive, matching=matching)
    worst = float(tuple_probabilities(keys, qi, codes, n_values, buckets).max())
    return 1.0 / worst if worst > 0 else math.inf


def _sliced_buckets(
    table: Table,
    encoding: Any,
    columns: Sequence[Sequence[str]],
    sensitive: str,
    l: float,  # noqa: E741
    partition: str,
    min_bucket_size: int,
    seed: int,
    matching: str,
) -> tuple[list[np.ndarray], float, float]:
    """The tuple partition of :func:`sdckit.anonymize.slicing.slice_table` (same seed stream) under
    the tuple matching ``matching``: buckets, l achieved under it, seconds. ConfigError if none."""
    from sdckit.anonymize._tuple_partition import partition_tuples

    index = encoding.index(sensitive)
    codes = encoding.codes[index].astype(np.int64)
    n_values = int(encoding.cardinalities[index])
    if l > n_values:
        raise ConfigError(f"l {l:g} is larger than the number of distinct values of '{sensitive}'")
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(4)[1])
    started = time.perf_counter()
    buckets, worst = partition_tuples(
        table, encoding, columns, sensitive, codes, n_values, float(l), "none", partition, min_bucket_size,
        rng, None, matching=matching,
    )  # fmt: skip
    return buckets, (1.0 / worst if worst > 0 else math.inf), time.perf_counter() - started


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
    correlation: str = "phi2",
    averaging: str = "lone-zero",
    matching: str = "strict",
    say: Say | None = None,
) -> SlicingExperiment:
    """Section 3 of Dhaigude & Kumar's improved slicing (Figure 2) on ``table``.

    For every number of columns c in ``n_columns``, ``runs`` seeded runs of each attribute
    partitioning: slicing (PAM k-medoids on 1 - correlation from a random start, Li et al. 2012) and
    improved slicing (overlapping correlation clustering, Jaccard, at most ``max_labels`` columns per
    attribute, at least ``beta`` groups); in both the sensitive column holds ``sensitive`` and the
    ``sensitive_column_size - 1`` attributes most correlated with it (the papers' "at least 3
    attributes in the column containing the SA"). The correlation is ``correlation``
    (:data:`MEASURES`, φ² by default) and each run's columns are scored by the average correlation of
    the attributes released together under ``averaging`` (:data:`AVERAGINGS`). Then, with the columns
    of the first run, the tuples are partitioned for every l in ``ls`` with buckets of at least
    ``min_bucket_size`` records, by the Mondrian-style split of slicing and by the random halving of
    improved slicing, each split checked under the tuple matching ``matching`` (``strict``, SPEC
    §1.7, the only reading releases use; see :func:`sdckit.anonymize.slicing.diversity_keys`), and
    the table records whether an l-diverse sliced table was found, the l it achieves under that
    reading and under the strict one, and how long the partitioning took.

    Deviation: for improved slicing, c counts the sensitive column plus the c - 1 labels given to the
    overlapping clustering of the other attributes; identical or empty labels are merged or dropped,
    so fewer columns may be released (the mean released count is reported).
    """
    from sdckit.anonymize.slicing import MATCHINGS
    from sdckit.frequency import encode

    _choice(averaging, AVERAGINGS, "averaging")
    _choice(matching, MATCHINGS, "matching")
    say = say if say is not None else (lambda message: None)
    names = _attributes(table, sensitive)
    started = time.perf_counter()
    matrix = correlation_matrix(table, names, correlation, n_bins)
    label = MEASURE_LABELS[correlation]
    say(f"{label} of {len(names)} attributes in {time.perf_counter() - started:.2f} s")
    correlation_table, first_columns = figure2(
        matrix, names, sensitive=sensitive, n_columns=n_columns, runs=runs,
        sensitive_column_size=sensitive_column_size, beta=beta, max_labels=max_labels, seed=seed,
        averaging=averaging, say=say, label=label,
    )  # fmt: skip

    encoding = encode(table.data, names)
    index = encoding.index(sensitive)
    codes, n_values = encoding.codes[index].astype(np.int64), int(encoding.cardinalities[index])
    diversity_rows = []
    for (method, c), columns in first_columns.items():
        for l in ls:  # noqa: E741
            for partition in PARTITION_OF.values():
                row: dict[str, Any] = {"columns": c, "method": method, "l": l, "partition": partition}
                try:
                    buckets, achieved, seconds = _sliced_buckets(
                        table, encoding, columns, sensitive, l, partition, min_bucket_size, seed, matching
                    )
                except ConfigError as error:
                    row.update(satisfied=False, buckets=None, smallest=None, l_achieved=None, l_strict=None)
                    row.update(seconds=None, note=str(error).split(":")[0])
                else:
                    strict = achieved if matching == "strict" else _l_of(
                        encoding, columns, sensitive, codes, n_values, buckets, "strict"
                    )  # fmt: skip
                    row.update(
                        satisfied=True, buckets=len(buckets), smallest=min(len(b) for b in buckets),
                        l_achieved=achieved, l_strict=strict, seconds=seconds, note="",
                    )  # fmt: skip
                diversity_rows.append(row)
        satisfied = sorted(
            {r["l"] for r in diversity_rows if r["method"] == method and r["columns"] == c and r["satisfied"]}
        )
        say(f"c = {c}, {method}: l-diverse ({matching}) for l in {satisfied or 'none'}")
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
            "l_strict": pl.Float64,
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
        correlation=correlation_table,
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
            "correlation": correlation,
            "averaging": averaging,
            "matching": matching,
        },
    )


def _ylabel(measure: str, averaging: str) -> str:
    what = {"lone-zero": "lone columns as 0", "paired-columns": "columns of 2+", "pairs": "all pairs"}
    return f"average {MEASURE_LABELS[measure]} ({what[averaging]})"


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
        f"{p['min_bucket_size']} records; correlation {p['correlation']}, averaging {p['averaging']}, "
        f"tuple matching {p['matching']}.\n\n"
        "## Average correlation inside the released columns (Figure 2)\n\n"
        + markdown_table(result.correlation)
        + f"\n## Which l each configuration satisfies (tuple matching {p['matching']})\n\n"
        + markdown_table(satisfied)
        + "\n## Tuple partitioning time (seconds, summed over the configurations that satisfy l)\n\n"
        + markdown_table(result.timing)
    )
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(text)
    correlation_chart(result.correlation, paths["figure"], name, _ylabel(p["correlation"], p["averaging"]))
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


# The sensitivity study ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SlicingStudy:
    """The sensitivity study of Figure 2 and of the l-diversity claim.

    ``grid``: one row per correlation measure, averaging and sensitive-column size with the verdict
    of :func:`trends` (sorted by closeness, best first). ``curves``: the Figure 2 tables of every
    measure and size (all three averagings as columns). ``readings``: per sensitive-column size,
    number of columns, method, reading of tuple matching and l, whether the method's own tuple
    partitioning found an l-diverse table with buckets of at least ``min_bucket_size``, the l of the
    whole table as one bucket under that reading (``single_bucket_l``: no partition can do better),
    and the l the table achieves under each reading (``l_strict`` is what a release guarantees).
    ``reachable``: per size and reading, the l of ``ls`` both methods reach at every number of columns.
    """

    grid: pl.DataFrame
    curves: pl.DataFrame
    readings: pl.DataFrame
    reachable: pl.DataFrame
    parameters: dict[str, Any]

    @property
    def closest(self) -> dict[str, Any]:
        """The grid row closest to the paper's two trends."""
        return self.grid.row(0, named=True)


def diversity_readings(
    table: Table,
    matrix: np.ndarray,
    *,
    sensitive: str,
    sizes: Sequence[int],
    n_columns: Sequence[int],
    ls: Sequence[int] = (2, 3, 4, 5, 6),
    min_bucket_size: int = 250,
    beta: int = 2,
    max_labels: int = 2,
    seed: int = 0,
    say: Say | None = None,
) -> pl.DataFrame:
    """The ``readings`` table of :class:`SlicingStudy` (columns of the first run, seed ``seed``)."""
    from sdckit.anonymize.slicing import MATCHINGS
    from sdckit.frequency import encode

    say = say if say is not None else (lambda message: None)
    names = _attributes(table, sensitive)
    encoding = encode(table.data, names)
    index = encoding.index(sensitive)
    codes, n_values = encoding.codes[index].astype(np.int64), int(encoding.cardinalities[index])
    whole = [np.arange(table.n_records, dtype=np.int64)]
    rows = []
    for size in sizes:
        for c in n_columns:
            if c > len(names) - size + 1 or beta > len(names) - size:
                continue
            for method, partition in PARTITION_OF.items():
                columns = _columns_of(method, matrix, names, sensitive, c, size, beta, max_labels, seed)
                for reading in MATCHINGS:
                    bound = _l_of(encoding, columns, sensitive, codes, n_values, whole, reading)
                    for l in ls:  # noqa: E741
                        row: dict[str, Any] = {
                            "sensitive_column_size": size, "columns": c, "method": method,
                            "reading": reading, "l": l, "single_bucket_l": bound,
                        }  # fmt: skip
                        try:
                            buckets, _, _ = _sliced_buckets(
                                table,
                                encoding,
                                columns,
                                sensitive,
                                l,
                                partition,
                                min_bucket_size,
                                seed,
                                reading,
                            )
                        except ConfigError:
                            row.update(satisfied=False, buckets=None, smallest=None)
                            row.update({f"l_{other}": None for other in MATCHINGS})
                        else:
                            row.update(satisfied=True, buckets=len(buckets), smallest=min(map(len, buckets)))
                            for other in MATCHINGS:
                                row[f"l_{other}"] = _l_of(
                                    encoding, columns, sensitive, codes, n_values, buckets, other
                                )
                        rows.append(row)
            say(f"sensitive column of {size}, c = {c}: l-diversity under every reading checked")
    schema = {
        "sensitive_column_size": pl.Int64,
        "columns": pl.Int64,
        "method": pl.String,
        "reading": pl.String,
        "l": pl.Int64,
        "single_bucket_l": pl.Float64,
        "satisfied": pl.Boolean,
        "buckets": pl.Int64,
        "smallest": pl.Int64,
        **{f"l_{other}": pl.Float64 for other in MATCHINGS},
    }
    return pl.DataFrame(rows, schema=schema)


def reachable(readings: pl.DataFrame, ls: Sequence[int]) -> pl.DataFrame:
    """Per sensitive-column size and reading: the single-bucket bound, the l of ``ls`` each method
    reaches at every number of columns tried with the fewest buckets it then has (1 bucket: the
    table could not be split at all), and whether both reach all of ``ls``."""
    from sdckit.anonymize.slicing import MATCHINGS

    rows = []
    for (size, reading), part in readings.group_by("sensitive_column_size", "reading", maintain_order=True):
        row: dict[str, Any] = {"sensitive_column_size": size, "reading": reading}
        # A group's minimum of a float column: a float.
        row["single_bucket_l"] = float(cast(float, part["single_bucket_l"].min()))
        every = {}
        for method in PARTITION_OF:
            mine = part.filter(pl.col("method") == method)
            n_configs = mine["columns"].n_unique()
            counts = (
                mine.filter(pl.col("satisfied"))
                .group_by("l")
                .agg(pl.len().alias("n"), pl.col("buckets").min().alias("buckets"))
                .sort("l")
            )
            kept = counts.filter(pl.col("n") == n_configs)
            every[method] = kept["l"].to_list()
            row[f"{method} reaches"] = ", ".join(map(str, every[method])) or "none"
            row[f"{method} buckets"] = ", ".join(map(str, kept["buckets"].to_list())) or "-"
        row[f"l = {min(ls)}..{max(ls)} reachable"] = all(set(ls) <= set(v) for v in every.values())
        rows.append(row)
    order = {reading: i for i, reading in enumerate(MATCHINGS)}
    frame = pl.DataFrame(rows).with_columns(pl.col("reading").replace_strict(order).alias("_order"))
    return frame.sort("sensitive_column_size", "_order").drop("_order")


def _yes_no(frame: pl.DataFrame) -> pl.DataFrame:
    """Boolean columns as yes / no (for the markdown tables)."""
    return frame.with_columns(
        pl.when(pl.col(name)).then(pl.lit("yes")).otherwise(pl.lit("no")).alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.Boolean
    )


def slicing_study(
    table: Table,
    *,
    sensitive: str,
    n_columns: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10),
    runs: int = 50,
    sizes: tuple[int, ...] = (1, 2, 3, 4),
    measures: tuple[str, ...] = MEASURES,
    readings_columns: tuple[int, ...] = (2, 6, 10),
    correlation: str = "phi2",
    beta: int = 2,
    max_labels: int = 2,
    ls: tuple[int, ...] = (2, 3, 4, 5, 6),
    min_bucket_size: int = 250,
    n_bins: int = 10,
    seed: int = 0,
    say: Say | None = None,
) -> SlicingStudy:
    """The sensitivity study: Figure 2 (``runs`` seeded runs per point) for every measure of
    ``measures``, every sensitive-column size of ``sizes`` and every averaging, each judged by
    :func:`trends`; then the l reached under every reading of tuple matching, for every size, with the
    columns (correlation ``correlation``) of the first run at each c of ``readings_columns``, by each
    method's own tuple partitioning (slicing: Mondrian; improved slicing: random halving)."""
    say = say if say is not None else (lambda message: None)
    for measure in (*measures, correlation):
        _choice(measure, MEASURES, "measure", "--correlation")
    names = _attributes(table, sensitive)
    sizes = tuple(size for size in sizes if size <= len(names) - 1)
    if not sizes:
        raise ConfigError(
            f"{spell('sizes', '--study-sizes')}: every size leaves no attribute outside the sensitive column"
        )
    grid_rows, curves = [], []
    matrices = {
        measure: correlation_matrix(table, names, measure, n_bins)
        for measure in dict.fromkeys((*measures, correlation))
    }
    for measure in measures:
        for size in sizes:
            usable = tuple(c for c in n_columns if c <= len(names) - size + 1)
            if not usable or beta > len(names) - size:
                continue
            frame, _ = figure2(
                matrices[measure], names, sensitive=sensitive, n_columns=usable, runs=runs,
                sensitive_column_size=size, beta=beta, max_labels=max_labels, seed=seed,
            )  # fmt: skip
            curves.append(frame.with_columns(measure=pl.lit(measure), sensitive_column_size=pl.lit(size)))
            for averaging, column in AVERAGE_COLUMNS.items():
                verdict = trends(frame, column)
                grid_rows.append(
                    {"measure": measure, "averaging": averaging, "sensitive_column_size": size, **verdict}
                )
            say(f"{measure}, sensitive column of {size}: Figure 2 over {len(usable)} numbers of columns")
    grid = pl.DataFrame(grid_rows).sort(
        ["reproduces", "closeness", "measure", "averaging", "sensitive_column_size"],
        descending=[True, True, False, False, False],
    )
    readings = diversity_readings(
        table, matrices[correlation], sensitive=sensitive, sizes=sizes, n_columns=readings_columns, ls=ls,
        min_bucket_size=min_bucket_size, beta=beta, max_labels=max_labels, seed=seed, say=say,
    )  # fmt: skip
    return SlicingStudy(
        grid=grid,
        curves=pl.concat(curves),
        readings=readings,
        reachable=reachable(readings, ls),
        parameters={
            "records": table.n_records,
            "attributes": names,
            "sensitive": sensitive,
            "runs": runs,
            "columns": list(n_columns),
            "sizes": list(sizes),
            "measures": list(measures),
            "readings_columns": list(readings_columns),
            "correlation": correlation,
            "beta": beta,
            "max_labels": max_labels,
            "ls": list(ls),
            "min_bucket_size": min_bucket_size,
            "n_bins": n_bins,
            "seed": seed,
        },
    )


def _closest_curve(result: SlicingStudy) -> tuple[pl.DataFrame, dict[str, Any]]:
    best = result.closest
    frame = result.curves.filter(
        (pl.col("measure") == best["measure"])
        & (pl.col("sensitive_column_size") == best["sensitive_column_size"])
    )
    column = AVERAGE_COLUMNS[best["averaging"]]
    return frame.with_columns(pl.col(column).alias("average_correlation"), pl.lit(0.0).alias("std")), best


def study_markdown(result: SlicingStudy, name: str = "data") -> str:
    """The study's ``results.md``: the verdict of every combination, the closest one's curve, and the
    l under every reading of tuple matching."""
    p = result.parameters
    best = result.closest
    curve, _ = _closest_curve(result)
    shown = curve.pivot(on="method", index="columns", values="average_correlation").sort("columns")
    grid = result.grid.select(
        "measure", "averaging", "sensitive_column_size", "slicing_tau", "slicing_first", "slicing_last",
        "slicing_falls", "improved_peak", "improved_rises_then_falls", "closeness", "reproduces",
    )  # fmt: skip
    found = result.grid.filter(pl.col("reproduces"))
    verdict = (
        f"{found.height} of {result.grid.height} combinations reproduce both trends"
        + (
            ": "
            + "; ".join(
                f"{r['measure']}, {r['averaging']}, sensitive column of {r['sensitive_column_size']}"
                for r in found.iter_rows(named=True)
            )
            if found.height
            else ""
        )
        + f". Closest: {best['measure']}, averaging {best['averaging']}, sensitive column of "
        f"{best['sensitive_column_size']} (closeness {best['closeness']:.3f} of 2; figure2.png)."
    )
    readings = result.readings.drop("single_bucket_l")
    return (
        f"# Sensitivity study of Figure 2 (improved slicing vs slicing) on {name}\n\n"
        f"{p['records']:,} records, {len(p['attributes'])} attributes, sensitive {p['sensitive']}; "
        f"{p['runs']} seeded runs per point; columns {p['columns'][0]}..{p['columns'][-1]}; "
        f"beta {p['beta']}, "
        f"at most {p['max_labels']} columns per attribute.\n\n"
        "## Which combination reproduces the paper's two trends\n\n"
        "Slicing falls: Kendall's tau of (columns, average) < 0 and the last point below the first. "
        "Improved slicing rises then falls: its peak is at an inner number of columns, above both ends. "
        "closeness = -tau(slicing) + (tau up to the peak - tau after it) / 2 (2 at best).\n\n"
        f"{verdict}\n\n"
        + markdown_table(_yes_no(grid))
        + f"\n### The closest combination's Figure 2 ({best['measure']}, {best['averaging']}, "
        f"sensitive column of {best['sensitive_column_size']})\n\n"
        + markdown_table(shown)
        + "\n## l-diversity under each reading of tuple matching "
        f"(buckets of at least {p['min_bucket_size']})\n\n"
        "strict: SPEC §1.7 and Li et al.'s Definitions 3-4 (the sensitive column's quasi-identifiers must "
        "match, and only the sensitive values next to them are candidates): what every sdckit release "
        "guarantees. bucket: they weigh the matching buckets but every sensitive value of a bucket is a "
        "candidate. none: they are ignored, as if the sensitive column were the sensitive attribute alone. "
        "single_bucket_l is the l of the whole table as one bucket: no partition under that reading can do "
        f"better. Columns of the first run (correlation {p['correlation']}) at c = "
        f"{', '.join(map(str, p['readings_columns']))}; each method with its own tuple partitioning.\n\n"
        + markdown_table(_yes_no(result.reachable))
        + "\n### Every configuration (l_strict, l_bucket, l_none: the l the table achieves under "
        "each reading)\n\n" + markdown_table(_yes_no(readings))
    )


def write_slicing_study(result: SlicingStudy, directory: str | os.PathLike, name: str = "data") -> dict:
    """Write ``study.csv`` (the grid), ``curves.csv``, ``readings.csv``, ``results.md`` and
    ``figure2.png`` (Figure 2 of the closest combination) into ``directory``; return the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {
        "grid": directory / "study.csv",
        "curves": directory / "curves.csv",
        "readings": directory / "readings.csv",
        "markdown": directory / "results.md",
        "figure": directory / "figure2.png",
    }
    for key in ("grid", "curves", "readings"):
        with atomic_write(paths[key]) as temporary:
            getattr(result, key).write_csv(temporary)
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(study_markdown(result, name))
    curve, best = _closest_curve(result)
    subtitle = (
        f"closest: sensitive column of {best['sensitive_column_size']}, closeness {best['closeness']:.2f}"
    )
    correlation_chart(curve, paths["figure"], name, _ylabel(best["measure"], best["averaging"]), subtitle)
    return paths


def study_summary(result: SlicingStudy, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The study's ``summary.json``: parameters, the closest combination, the grid, the reachable
    l and the readings table."""
    figures: dict[str, Any] = {
        "parameters": result.parameters,
        "closest": result.closest,
        "grid": result.grid.to_dicts(),
        "reachable": result.reachable.to_dicts(),
        "readings": result.readings.to_dicts(),
    }
    if elapsed_seconds is not None:
        figures["elapsed_seconds"] = round(elapsed_seconds, 3)
    return figures
