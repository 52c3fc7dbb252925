"""``sdckit protect``: run a recipe (a chain of methods); ``sdckit apply``: re-apply a learnt
transformation to new data."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import (
    TABLE_SUFFIXES,
    AllowViolationsOption,
    ConfigOption,
    DataArgument,
    InlineRoles,
    QuasiIdentifiersOption,
    QuietOption,
    ReleaseOption,
    Report,
    SamplingWeightOption,
    SensitiveOption,
    SummaryOption,
    finish,
    in_range,
    progress_bar,
    read_input,
    stage_json,
    stage_messages,
    stage_table,
    user_errors,
)
from sdckit.cli._outputs import Outputs
from sdckit.errors import ConfigError

RecipeOption = Annotated[
    Path,
    typer.Option("--recipe", "-r", help="Plan or recipe (YAML/JSON), or the summary JSON of an earlier run."),
]


def protect(
    data: DataArgument,
    recipe: RecipeOption,
    output: ReleaseOption,
    config: ConfigOption = None,
    qi: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    weight: SamplingWeightOption = None,
    summary: SummaryOption = None,
    risk_threshold: Annotated[
        float | None, typer.Option("--risk-threshold", help="Count records above this D(r) after every step.")
    ] = None,
    quiet: QuietOption = False,
    allow_violations: AllowViolationsOption = False,
) -> None:
    """Run the steps of a recipe in order, each step's release feeding the next, and report every
    step's figures and the final state. Replaying the recipe of any run reproduces its release."""
    from sdckit.recipes import load_plan
    from sdckit.recipes import protect as run_steps

    with user_errors():
        outputs = Outputs([data, config, recipe])
        outputs.file(output, "--output", TABLE_SUFFIXES)
        outputs.file(summary, "--summary", (".json",))
        steps, settings = load_plan(recipe)
        threshold = risk_threshold if risk_threshold is not None else settings.get("risk_threshold")
        if threshold is not None:
            if isinstance(threshold, bool) or not isinstance(threshold, int | float):
                raise ConfigError(f"risk_threshold must be a number, got {threshold!r}")
            in_range(threshold, "risk_threshold", 0, None)
        started = time.perf_counter()
        config_settings, table = read_input(data, config, roles=InlineRoles(qi, sensitive, weight))
        with progress_bar(not quiet, "step") as progress:
            result = run_steps(
                table,
                steps,
                config=config_settings,
                risk_threshold=threshold,
                progress=progress,
                stage=stage_messages(quiet, started),
                attack=settings.get("attack"),
            )
        elapsed = time.perf_counter() - started
        violation = "; ".join(result.violations) or None
        report = _report(f"[bold]{data.name}[/]: {table.n_records:,} records", len(steps), elapsed, result)
        document = {
            "data": str(data),
            "steps": result.steps,
            "final": result.final,
            "satisfied": violation is None,
            "violation": violation,
            **({"attack": result.attack} if result.attack is not None else {}),
            "elapsed_seconds": round(elapsed, 3),
            "recipe": result.recipe,
        }
        stage_table(outputs, output, result.table)
        stage_json(outputs, summary, document)
        finish(outputs, report, violation, allow_violations)


def _report(what: str, steps: int, elapsed: float, result: Any) -> Report:
    """Every step's line, the final state's, and each attack of the plan's attack step."""
    report = Report()
    report.line(f"{what}, {steps} step(s) — {elapsed:.2f} s")
    for number, figures in enumerate(result.steps, start=1):
        report.line(_step_line(f"step {number} {figures['method']}", figures))
    report.line(_step_line("final", result.final))
    for attacked in (result.attack or {}).get("attacks", []):
        risk = attacked["risk"]
        low, high = (None, None) if risk is None else risk["ci"]
        shown = "undefined" if risk is None else f"{risk['value']:.3f} [{low:.3f}, {high:.3f}]"
        report.line(f"attack {attacked['attack']}: risk {shown}, {attacked['verdict']}")
    return report


def _step_line(label: str, figures: dict[str, Any]) -> str:
    parts = [f"{figures['records']:,} records"]
    for key, name in (
        ("suppressed_cells", "suppressed cells"),
        ("equivalence_classes", "classes"),
        ("above_threshold", "above the risk threshold"),
    ):
        if figures.get(key) is not None:
            parts.append(f"{figures[key]:,} {name}")
    if figures.get("ncp") is not None:
        parts.append(f"NCP {figures['ncp']:.4g}")
    return f"{label}: " + "; ".join(parts)


def apply(
    recipe: Annotated[
        Path, typer.Argument(help="Summary JSON of a run (or its recipe) with a transformation.")
    ],
    data: Annotated[
        Path | None, typer.Argument(help="New microdata with the same schema: CSV or Parquet.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Release file: .csv or .parquet.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Configuration (default: the one in the recipe).")
    ] = None,
    unknown: Annotated[
        str, typer.Option("--unknown", help="Values the mapping does not cover: error or suppress.")
    ] = "error",
    export_mappings: Annotated[
        Path | None,
        typer.Option("--export-mappings", help="Folder for one CSV per attribute: original,released."),
    ] = None,
    summary: SummaryOption = None,
    allow_violations: AllowViolationsOption = False,
) -> None:
    """Apply the transformation a run learnt (generalization levels, Mondrian's boxes, top and bottom
    coding) to another file with the same schema, without searching again, and report the models it
    achieves there; or export the mapping of every attribute as CSV."""
    from sdckit.anonymize.transform import export_mappings as export
    from sdckit.recipes import read_transformation

    with user_errors():
        if unknown not in ("error", "suppress"):
            raise ConfigError(f"--unknown must be error or suppress, got {unknown!r}")
        if (data is None) != (output is None):
            raise ConfigError("give both DATA and --output to apply the transformation")
        if data is None and export_mappings is None:
            raise ConfigError("give DATA and --output, or --export-mappings DIR, or both")
        outputs = Outputs([recipe, data, config])
        outputs.file(output, "--output", TABLE_SUFFIXES)
        outputs.file(summary, "--summary", (".json",))
        if export_mappings is not None:
            outputs.directory(export_mappings, "--export-mappings")
        learnt = read_transformation(recipe, config)
        report = Report()
        violation = None
        if data is not None:
            violation = _apply_to(data, output, summary, unknown, learnt, outputs, report)
        if export_mappings is not None:
            outputs.stage(export_mappings, lambda folder: export(learnt.transformation, folder))
        finish(outputs, report, violation, allow_violations)


def _apply_to(
    data: Path,
    output: Path | None,
    summary: Path | None,
    unknown: str,
    learnt: Any,
    outputs: Outputs,
    report: Report,
) -> str | None:
    """Apply the learnt transformation to ``data``; stage the release and the figures."""
    from sdckit.anonymize.transform import apply_transformation
    from sdckit.recipes import applied_figures

    table = learnt.config.read(data)
    try:
        release = apply_transformation(table, learnt.transformation, unknown=unknown)
    except ConfigError as error:  # the library names its parameter; say the option
        raise ConfigError(str(error).replace("unknown='suppress'", "--unknown suppress")) from None
    figures, violation = applied_figures(release, learnt)
    method = learnt.transformation["method"]
    report.line(f"[bold]{data.name}[/]: {table.n_records:,} records, {method} re-applied")
    for line in figures.pop("report"):
        report.line(line)
    stage_table(outputs, output, release.table)
    document = {"data": str(data), **figures, "satisfied": violation is None, "violation": violation}
    stage_json(outputs, summary, document)
    return violation
