"""``sdckit risk MEASURE``: disclosure-risk measures of a file. ``combined`` is written out here;
every other command is made from :data:`sdckit.measures.RISK_MEASURES` (:mod:`sdckit.cli._measures`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import (
    ConfigOption,
    DataArgument,
    QuietOption,
    Report,
    SummaryOption,
    finish,
    in_range,
    progress_bar,
    read_input,
    stage_json,
    stage_table,
    user_errors,
)
from sdckit.cli._measures import add_measure_commands
from sdckit.cli._outputs import Outputs
from sdckit.errors import ConfigError
from sdckit.measures import RISK_MEASURES

app = typer.Typer(
    help="Disclosure-risk measures of a microdata file: sdckit risk MEASURE --help.", no_args_is_help=True
)
SCORE_SUFFIXES = (".parquet", ".pq", ".csv")


@app.command("combined")
def combined(
    data: DataArgument,
    config: ConfigOption,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Per-record scores, .parquet or .csv.")
    ] = None,
    threshold: Annotated[float, typer.Option("--threshold", "-t", help="Risk threshold DELTA.")] = 0.01,
    histogram: Annotated[
        Path | None, typer.Option("--histogram", help="Histogram of D(r), .png/.pdf/.svg.")
    ] = None,
    summary: SummaryOption = None,
    alpha: Annotated[
        float | None, typer.Option(help="Override the config's consequence coefficient.")
    ] = None,
    epsilon: Annotated[float | None, typer.Option(help="Override the config's pruning threshold.")] = None,
    missing: Annotated[
        str | None, typer.Option(help="Override the config's nulls: wildcard or category.")
    ] = None,
    top: Annotated[int, typer.Option(help="How many of the riskiest records to list.")] = 10,
    release: Annotated[
        bool, typer.Option("--release", help="DATA is a release sdckit wrote: read it as check does.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Combined identity + attribute disclosure risk D(r) of every record (Orooji & Knapp, 2019)."""
    from sdckit.config import RiskSettings
    from sdckit.evaluate.plots import risk_histogram
    from sdckit.risk.combined import combined_risk

    with user_errors():
        in_range(threshold, "--threshold", 0, None)
        if top < 0:
            raise ConfigError(f"--top must be >= 0, got {top}")
        outputs = Outputs([data, config])
        outputs.file(output, "--output", SCORE_SUFFIXES)
        outputs.file(histogram, "--histogram", (".png", ".pdf", ".svg"))
        outputs.file(summary, "--summary", (".json",))
        started = time.perf_counter()
        settings, table = read_input(data, config, release=release)
        chosen = RiskSettings(
            **{**settings.risk.__dict__, **_given(alpha=alpha, epsilon=epsilon, missing=missing)}
        )
        with progress_bar(not quiet, "known sets") as progress:
            result = combined_risk(table, weights=settings.data.weights, progress=progress, **chosen.__dict__)
        elapsed = time.perf_counter() - started
        figures = result.summary(threshold)
        riskiest = result.riskiest(top)
        report = Report()
        _report(report, figures, riskiest, data, elapsed)
        figures.update(
            data=str(data),
            config=str(config),
            elapsed_seconds=round(elapsed, 3),
            riskiest=riskiest.to_dicts(),
            known_set_list=result.known_sets.drop("attributes").to_dicts(),
        )
        stage_table(outputs, output, result.scores())
        title = f"Record disclosure risk — {data.name}"
        outputs.stage(
            histogram, lambda path: risk_histogram(result.risk, path, threshold=threshold, title=title)
        )
        stage_json(outputs, summary, figures)
        finish(outputs, report)


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _report(report: Report, figures: dict[str, Any], riskiest: Any, data: Path, elapsed: float) -> None:
    weighted = ", sampling weights" if figures["weighted"] else ""
    report.line(
        f"[bold]{data.name}[/]: {figures['records']:,} records, {len(figures['attributes'])} attributes "
        f"measured, {figures['known_sets']:,} known sets kept (epsilon {figures['epsilon']:g}), alpha "
        f"{figures['alpha']:g}, missing values as {figures['missing']}{weighted} — {elapsed:.2f} s"
    )
    quantiles = RichTable(title="Disclosure risk D(r)", title_justify="left")
    for label in ("mean", *figures["quantiles"]):
        quantiles.add_column(label, justify="right")
    values = [figures["mean_risk"], *figures["quantiles"].values()]
    quantiles.add_row(*(f"{v:.4g}" if v is not None else "-" for v in values))
    report.add(quantiles)
    report.line(
        f"records above {figures['threshold']:g}: [bold]{figures['above_threshold']:,}[/] "
        f"({figures['above_threshold_percent']:.2f}%)"
    )
    if riskiest.height:
        table = RichTable(title=f"The {riskiest.height} riskiest records", title_justify="left")
        for column, justify in (("record", "right"), ("risk", "right"), ("dominant known set", "left")):
            table.add_column(column, justify=justify)
        table.add_column("its contribution", justify="right")
        for row in riskiest.iter_rows(named=True):
            table.add_row(
                str(row["record"]),
                f"{row['risk']:.4g}",
                row["top_known_set"] or "(empty set)",
                f"{row['top_contribution']:.4g}",
            )
        report.add(table)


def _register() -> None:
    import sdckit.risk  # noqa: F401  (registers the measures)

    add_measure_commands(app, RISK_MEASURES)


_register()
