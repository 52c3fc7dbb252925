"""The R-U comparison of the masking methods on the CASC benchmark data (issue 14; the central picture
of the SDC tutorial, "Trading off utility loss and disclosure risk"; Domingo-Ferrer & Torra, 2001).

Every data set (Tarragona, CASCrefmicrodata: every column a numeric quasi-identifier) is released by

* MDAV microaggregation, k ∈ ``ks`` (``mdav``, all 13 attributes jointly);
* correlated noise addition, α ∈ ``alphas``: ε ~ N(0, α·Σ) as in the tutorial (``noise`` with
  ``noise: correlated``, ``amount`` = 100·α; sdcMicro's "correlated", Kim 1986 / Brand 2002);
* rank swapping, p ∈ ``ps`` (``rank-swap``, each attribute on its own, window p% of the records);
* PRAM: not applicable, the CASC data have no categorical attribute (a row says so);
* synthetic data (``synthesize``, M implicates by sequential regression, one row per model), when the
  method is registered; implicate 1 is measured (linkage pairs synthetic record i with original
  record i; for fully synthetic data the pairing is arbitrary, so DBRL is chance and IL1 compares
  unrelated records). Otherwise a row says it was skipped.

A release that cannot be made (an sdckit error: data a method refuses) is a row whose note says why,
with no figures; the other releases are still compared.

Each release is measured against its original with the ``numeric`` utility measure (sdcMicro's IL1,
the tutorial's IL score, eigen) and the ``linkage`` risk measure, distance-based (DBRL: the percentage
of released records whose nearest original record, in the original's standard deviations, is their
source, ties sharing the credit). The R-U map of a data set places each release at (DBRL %, IL1);
the Pareto front is :func:`sdckit.evaluate.rumap.pareto_front`; the score is
:func:`sdckit.evaluate.rumap.ru_score` with λ = ½ of 100·IL1 and DBRL % (the loss axis of
``sdckit evaluate``); ``score_tutorial`` is the tutorial's example, (IL score + DBRL %)/2.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import polars as pl

from sdckit.errors import ConfigError, SdcError
from sdckit.experiments import Say
from sdckit.experiments.charts import markdown_table
from sdckit.io import atomic_write
from sdckit.params import spell
from sdckit.table import Table

#: The parameters of the issue: MDAV k, noise α, rank swapping p.
DEFAULT_KS = (3, 5, 10)
DEFAULT_ALPHAS = (0.1, 0.5, 1.0)
DEFAULT_PS = (5.0, 10.0, 15.0)
SYNTHESIS_MODELS = ("cart", "regression")

_COLUMNS = {
    "dataset": pl.String,
    "method": pl.String,
    "parameter": pl.String,
    "label": pl.String,
    "il1": pl.Float64,
    "il_score": pl.Float64,
    "eigen": pl.Float64,
    "dbrl_percent": pl.Float64,
    "score": pl.Float64,
    "score_tutorial": pl.Float64,
    "on_front": pl.Boolean,
    "seconds": pl.Float64,
    "note": pl.String,
}


@dataclasses.dataclass(frozen=True)
class Run:
    """One release to make: the registered method, its parameters, the parameter as shown and the
    point's label on the map."""

    method: str
    params: dict[str, Any]
    parameter: str
    label: str


@dataclasses.dataclass(frozen=True)
class MaskingResult:
    """The rows of the comparison (columns of :data:`_COLUMNS`, one per data set and release), the
    DBRL of each original against itself (the map's reference point, IL 0), the data sets' titles
    and sizes, and the parameters."""

    rows: pl.DataFrame
    reference: dict[str, float]
    titles: dict[str, str]
    shapes: dict[str, tuple[int, int]]
    parameters: dict[str, Any]


def _number(value: float) -> str:
    return f"{value:g}"


def plan(
    ks: Sequence[int] = DEFAULT_KS,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    ps: Sequence[float] = DEFAULT_PS,
    synthesis_models: Sequence[str] = SYNTHESIS_MODELS,
    implicates: int = 1,
    seed: int = 0,
) -> list[Run]:
    """The releases of the comparison, in the order of the table. Refuses (ConfigError) a k below 2,
    an α not above 0, a p outside [0, 100], an unknown synthesis model or fewer than 1 implicate."""
    if not ks or min(ks) < 2:
        raise ConfigError(
            f"{spell('ks')}: MDAV needs k of at least 2, got {', '.join(map(str, ks)) or 'none'}"
        )
    if not alphas or any(not math.isfinite(a) or a <= 0 for a in alphas):
        raise ConfigError(
            f"{spell('alphas')}: noise needs α > 0, got {', '.join(map(_number, alphas)) or 'none'}"
        )
    if not ps or any(not math.isfinite(p) or not 0 <= p <= 100 for p in ps):
        raise ConfigError(
            f"{spell('ps')}: p must be in [0, 100], got {', '.join(map(_number, ps)) or 'none'}"
        )
    unknown = [model for model in synthesis_models if model not in SYNTHESIS_MODELS]
    if unknown:
        raise ConfigError(
            f"{spell('synthesis_models')}: unknown model {unknown[0]!r}: choose among "
            f"{', '.join(SYNTHESIS_MODELS)}"
        )
    if implicates < 1:
        raise ConfigError(f"{spell('implicates')} must be at least 1, got {implicates}")
    runs = [Run("mdav", {"k": int(k)}, f"k={k}", f"MDAV k={k}") for k in ks]
    runs += [
        Run(
            "noise",
            {"noise": "correlated", "amount": 100.0 * float(a), "seed": seed},
            f"α={_number(a)}",
            f"noise α={_number(a)}",
        )
        for a in alphas
    ]
    runs += [
        Run("rank-swap", {"p": float(p), "seed": seed}, f"p={_number(p)}", f"rank swap p={_number(p)}")
        for p in ps
    ]
    runs += [
        Run(
            "synthesize",
            {"m": implicates, "model": model, "seed": seed},
            f"{model}, M={implicates}",
            f"synthetic ({model})",
        )
        for model in synthesis_models
    ]
    return runs


def _released_table(original: Table, release: Any) -> Table:
    """The release as a table row-aligned with ``original``: a synthesized release stacks its
    implicates in an ``implicate`` column, of which implicate 1 is kept."""
    frame = release.table.data
    if "implicate" in frame.columns and "implicate" not in original.data.columns:
        frame = frame.filter(pl.col("implicate") == 1).drop("implicate")
    if frame.height != original.n_records:
        raise ConfigError(
            f"the release has {frame.height:,} records for {original.n_records:,} original records: "
            "record linkage needs them row-aligned"
        )
    return Table(frame.select(original.data.columns), original.schema, source=release.table.source)


class Measured(TypedDict):
    """What :func:`measure` gives: IL1, the tutorial's IL score, eigen and DBRL % (None: not defined)."""

    il1: float
    il_score: float | None
    eigen: float | None
    dbrl_percent: float | None


def _linked_percent(figures: Measured) -> float:
    """DBRL %, which the linkage measure leaves undefined only for a data set without records."""
    value = figures["dbrl_percent"]
    if value is None:
        raise ConfigError("the masking comparison needs data sets with records (DBRL % is undefined)")
    return value


def measure(original: Table, released: Table) -> Measured:
    """IL1, the tutorial's IL score, eigen (the ``numeric`` utility measure) and DBRL % (the
    ``linkage`` risk measure, distance-based) of ``released`` against ``original``."""
    from sdckit.measures import run_measure

    loss = run_measure("numeric", original, released, group="utility")
    linkage = run_measure("linkage", original, released, params={"method": "distance"}, group="risk")
    return {
        "il1": loss.il1,
        "il_score": loss.il_score,
        "eigen": loss.eigen,
        "dbrl_percent": linkage.distance.summary()["linked_percent"],
    }


def _row(dataset: str, method: str, parameter: str, label: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(_COLUMNS)
    row.update({"note": "", **values}, dataset=dataset, method=method, parameter=parameter, label=label)
    return row


def masking_experiment(
    datasets: Mapping[str, Table],
    *,
    titles: Mapping[str, str] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    ps: Sequence[float] = DEFAULT_PS,
    synthesis_models: Sequence[str] = SYNTHESIS_MODELS,
    implicates: int = 1,
    seed: int = 0,
    say: Say | None = None,
) -> MaskingResult:
    """Release every data set of ``datasets`` (name -> table whose numeric quasi-identifiers are
    masked and compared) with every run of :func:`plan`, measure each, and mark the Pareto front of
    each data set. ``seed`` seeds every randomized method (noise, rank swapping, synthesis)."""
    from sdckit.anonymize import METHODS, run_method
    from sdckit.evaluate.rumap import RUPoint, pareto_front, ru_score
    from sdckit.table import Kind

    say = say if say is not None else (lambda message: None)
    runs = plan(ks, alphas, ps, synthesis_models, implicates, seed)
    if not datasets:
        raise ConfigError(f"{spell('datasets')} names no data set")
    titles = dict(titles or {})
    rows: list[dict[str, Any]] = []
    reference: dict[str, float] = {}
    shapes: dict[str, tuple[int, int]] = {}
    for name, table in datasets.items():
        titles.setdefault(name, name)
        shapes[name] = (table.n_records, len(table.data.columns))
        say(f"{titles[name]}: {table.n_records:,} records, {len(table.data.columns)} attributes")
        reference[name] = _linked_percent(measure(table, table))
        first = len(rows)
        for run in runs:
            if run.method == "synthesize" and "synthesize" not in METHODS:
                rows.append(
                    _row(name, run.method, run.parameter, run.label,
                         note="skipped: the method synthesize is not available in this sdckit")
                )  # fmt: skip
                continue
            say(f"  {run.label} ...")
            started = time.perf_counter()
            try:
                release = run_method(run.method, table, run.params)
                released = _released_table(table, release)
                figures = measure(table, released)
            except SdcError as error:  # a release that cannot be made is a row saying why
                rows.append(_row(name, run.method, run.parameter, run.label, note=f"failed: {error}"))
                say(f"    failed: {error}")
                continue
            share = _linked_percent(figures) / 100
            rows.append(
                _row(
                    name, run.method, run.parameter, run.label, **figures,
                    score=ru_score(figures["il1"], share),
                    score_tutorial=(
                        None if figures["il_score"] is None else ru_score(figures["il_score"] / 100, share)
                    ),
                    seconds=time.perf_counter() - started,
                )
            )  # fmt: skip
            say(f"    IL1 {figures['il1']:.4f}, DBRL {figures['dbrl_percent']:.2f}%")
        categorical = [a.name for a in table.schema.attributes if a.kind is not Kind.NUMERIC]
        note = (
            "no categorical attributes: PRAM not applicable"
            if not categorical
            else f"not run: PRAM of {', '.join(categorical)} is outside this numeric comparison"
        )
        rows.insert(first + len(ks) + len(alphas) + len(ps), _row(name, "pram", "", "PRAM", note=note))
        points = [
            RUPoint(
                row["label"],
                math.nan if row["dbrl_percent"] is None else row["dbrl_percent"],
                math.nan if row["il1"] is None else row["il1"],
            )
            for row in rows[first:]
        ]
        front = set(pareto_front(points))
        for index, row in enumerate(rows[first:]):
            row["on_front"] = index in front if row["il1"] is not None else None
    return MaskingResult(
        rows=pl.DataFrame(rows, schema=_COLUMNS),
        reference=reference,
        titles=titles,
        shapes=shapes,
        parameters={
            "ks": [int(k) for k in ks],
            "alphas": [float(a) for a in alphas],
            "ps": [float(p) for p in ps],
            "synthesis_models": list(synthesis_models),
            "implicates": implicates,
            "seed": seed,
            "noise": "correlated (amount = 100·α)",
            "loss_axis": "numeric.il1",
            "risk_axis": "linkage.distance.linked_percent",
        },
    )


def _shown(result: MaskingResult) -> pl.DataFrame:
    return result.rows.select(
        pl.col("dataset").replace_strict(result.titles, default=pl.col("dataset")),
        "method",
        "parameter",
        pl.col("il1").alias("IL1"),
        pl.col("il_score").alias("IL score"),
        "eigen",
        pl.col("dbrl_percent").alias("DBRL %"),
        "score",
        pl.col("on_front").replace_strict({True: "yes", False: ""}, default=None, return_dtype=pl.String)
        .alias("Pareto front"),
        "note",
    )  # fmt: skip


def markdown(result: MaskingResult) -> str:
    """The table of the comparison as markdown, with a line on the measures above it."""
    references = "; ".join(
        f"{result.titles[name]} ({result.shapes[name][0]:,} records × {result.shapes[name][1]}): {value:.2f}%"
        for name, value in result.reference.items()
    )
    return (
        "# R-U comparison of the masking methods\n\n"
        "IL1: sdcMicro's IL1, mean |x − x′|/(√2·sd) per value; IL score: the tutorial's (100 × mean of "
        "the mean variations of X, means, V, variances and the mean absolute error of R); eigen: "
        "Σ|e − e′|/e of the correlation eigenvalues; DBRL %: records whose nearest original "
        "(distance-based record linkage, standardized) is their source; score = (100·IL1 + DBRL %)/2; "
        "Pareto front over (DBRL %, IL1). "
        f"Noise: correlated, ε ~ N(0, α·Σ). Seed {result.parameters['seed']}. "
        f"DBRL of the original against itself: {references}.\n\n" + markdown_table(_shown(result))
    )


def map_figure(result: MaskingResult, name: str, path: str | os.PathLike) -> None:
    """The R-U map of data set ``name`` (:func:`sdckit.evaluate.rumap.ru_map_plot`): every release at
    (DBRL %, IL1), the Pareto front, the original as the reference point."""
    from sdckit.evaluate.rumap import RUPoint, ru_map_plot

    rows = result.rows.filter((pl.col("dataset") == name) & pl.col("il1").is_not_null())
    points = [
        RUPoint(label, risk, loss)
        for label, risk, loss in rows.select("label", "dbrl_percent", "il1").iter_rows()
    ]
    records, attributes = result.shapes[name]
    ru_map_plot(
        points,
        path,
        risk_label="disclosure risk: distance-based record linkage (% of records linked to their source)",
        loss_label="information loss: IL1 (mean |x − x′| / (√2·sd), sd units)",
        reference=RUPoint("original", result.reference[name], 0.0),
        title=f"R-U map — {result.titles[name]} ({records:,} records, {attributes} numeric attributes)",
    )


def write_masking_experiment(result: MaskingResult, directory: str | os.PathLike) -> dict[str, Path]:
    """Write ``results.csv``, ``results.md`` and ``ru_map_<data set>.png`` into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"csv": directory / "results.csv", "markdown": directory / "results.md"}
    with atomic_write(paths["csv"]) as temporary:
        result.rows.write_csv(temporary)
    with atomic_write(paths["markdown"]) as temporary:
        Path(temporary).write_text(markdown(result))
    for name in result.titles:
        paths[f"map_{name}"] = directory / f"ru_map_{name}.png"
        map_figure(result, name, paths[f"map_{name}"])
    return paths


def summary(result: MaskingResult, elapsed_seconds: float | None = None) -> dict[str, Any]:
    """The figures of ``summary.json``: parameters, data sets (title, records, attributes, DBRL of
    the original), the rows, the Pareto front and the best score of each data set."""
    figures: dict[str, Any] = {"parameters": result.parameters, "datasets": {}}
    for name, title in result.titles.items():
        rows = result.rows.filter((pl.col("dataset") == name) & pl.col("score").is_not_null())
        best = rows.sort("score").row(0, named=True) if rows.height else None
        figures["datasets"][name] = {
            "title": title,
            "records": result.shapes[name][0],
            "attributes": result.shapes[name][1],
            "original_dbrl_percent": result.reference[name],
            "pareto_front": rows.filter(pl.col("on_front")).get_column("label").to_list(),
            "best_score": None if best is None else {"label": best["label"], "score": best["score"]},
        }
    figures["rows"] = result.rows.to_dicts()
    if elapsed_seconds is not None:
        figures["elapsed_seconds"] = round(elapsed_seconds, 3)
    return figures
