"""``sdckit evaluate ORIGINAL RELEASE... --config C``: every release measured against the original
with the registered risk and utility measures, on one R-U map, in one HTML report and one JSON
summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import (
    ConfigOption,
    InlineRoles,
    QuasiIdentifiersOption,
    QuietOption,
    Report,
    SensitiveOption,
    SummaryOption,
    errors,
    finish,
    load_settings,
    progress_bar,
    stage_json,
    stage_messages,
    user_errors,
)
from sdckit.cli._outputs import Outputs


def _names(text: str | None) -> list[str] | None:
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


#: The utility measures that fit scikit-learn models (the 'learn' extra).
MODEL_MEASURES = ("propensity", "classifier")

OriginalArgument = Annotated[Path, typer.Argument(help="The original microdata (CSV or Parquet).")]
ReleasesArgument = Annotated[
    list[Path], typer.Argument(help="One or more releases of it (files sdckit wrote).")
]
ReportOption = Annotated[Path | None, typer.Option("--report", help="Self-contained HTML report (.html).")]
MapOption = Annotated[Path | None, typer.Option("--ru-map", help="The R-U map alone: .png, .pdf or .svg.")]
RiskOption = Annotated[
    str | None,
    typer.Option(help="Risk measures to run, comma-separated [default: reidentification,linkage]."),
]
UtilityOption = Annotated[
    str | None,
    typer.Option(
        help="Utility measures to run, comma-separated [default: numeric,tables,propensity,classifier]."
    ),
]
RiskAxisOption = Annotated[str, typer.Option(help="The risk measure on the R-U map's x axis.")]
LossAxisOption = Annotated[str, typer.Option(help="The utility measure on the R-U map's y axis.")]
WeightOption = Annotated[float, typer.Option(help="λ of the score λ·IL + (1−λ)·DR.")]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="A measure's or an attack's parameter, NAME.PARAMETER=VALUE (repeat); measure:NAME or "
        "attack:NAME for a name that is both.",
    ),
]
RecipeOption = Annotated[
    list[Path] | None,
    typer.Option(help="A release's summary or recipe JSON (one per release, in order; repeat)."),
]
AttackOption = Annotated[
    list[str] | None,
    typer.Option(
        "--attack",
        help="An attack of sdckit attack to run on every release (repeat), or all: every attack that "
        "applies.",
    ),
]
ControlOption = Annotated[
    Path | None,
    typer.Option(
        help="Original records held out of the releases before protection: the attacks' control set."
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Attribute a --recipe made on other data than ORIGINAL all the same (a warning, not an error).",
    ),
]


def evaluate(
    original: OriginalArgument,
    releases: ReleasesArgument,
    config: ConfigOption = None,
    qi: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    report_path: ReportOption = None,
    summary: SummaryOption = None,
    ru_map: MapOption = None,
    risk: RiskOption = None,
    utility: UtilityOption = None,
    risk_axis: RiskAxisOption = "linkage",
    loss_axis: LossAxisOption = "tables",
    weight: WeightOption = 0.5,
    set_: SetOption = None,
    recipe: RecipeOption = None,
    force: ForceOption = False,
    attack: AttackOption = None,
    control: ControlOption = None,
    quiet: QuietOption = False,
) -> None:
    """Measure the releases of ORIGINAL for disclosure risk and information loss; R-U map and report."""
    from sdckit.config import read_document
    from sdckit.evaluate import evaluate as run_evaluation
    from sdckit.evaluate.evaluation import parse_settings
    from sdckit.evaluate.report import write_report
    from sdckit.evaluate.rumap import ru_map_plot

    with user_errors():
        utility_names = _utility(_names(utility), quiet)
        settings_given = parse_settings(set_ or [], what="NAME.PARAMETER=VALUE")
        recipes = [_recipe(read_document(path, "recipe"), path) for path in recipe or []]
        outputs = _outputs(
            [original, *releases, config, *(recipe or []), control], report_path, ru_map, summary
        )
        started = time.perf_counter()
        # --weight is the score's λ here: sampling weights come from the configuration's data.weights.
        settings = load_settings(config, InlineRoles(qi, sensitive))
        table = settings.read(original)
        for path, made in zip(recipe or [], recipes, strict=True):
            _check_recipe_input(made, path, table, original, force)
        released = [(_name(path, releases), settings.read_release(path)) for path in releases]
        held = settings.read(control) if control is not None else None
        with progress_bar(not quiet, "measures") as progress:
            result = run_evaluation(
                table,
                released,
                config=settings,
                risk=_names(risk),
                utility=utility_names,
                risk_axis=risk_axis,
                loss_axis=loss_axis,
                weight=weight,
                recipes=recipes or None,
                settings=settings_given,
                original_name=original.name,
                stage=stage_messages(quiet, started),
                progress=progress,
                attacks=_attacks(attack),
                control=held,
            )
        elapsed = time.perf_counter() - started
        document = {**result.summary(), "elapsed_seconds": round(elapsed, 3)}
        outputs.stage(
            report_path, lambda path: write_report(result, path, title=f"Evaluation of {original.name}")
        )
        outputs.stage(ru_map, lambda path: ru_map_plot(result.points, path))
        stage_json(outputs, summary, document)
        finish(outputs, _terminal_report(result, original.name, table.n_records, elapsed))


def _outputs(inputs: list, report: Path | None, ru_map: Path | None, summary: Path | None) -> Outputs:
    outputs = Outputs(inputs)
    outputs.file(report, "--report", (".html", ".htm"))
    outputs.file(ru_map, "--ru-map", (".png", ".pdf", ".svg"))
    outputs.file(summary, "--summary", (".json",))
    return outputs


def _terminal_report(result, name: str, records: int, elapsed: float) -> Report:
    """The R-U map's table, then the attacks' when any were run."""
    report = Report()
    report.line(f"[bold]{name}[/]: {records:,} records, {len(result.releases)} release(s) — {elapsed:.2f} s")
    report.add(_overview(result))
    if any(item.attacks is not None for item in result.releases):
        _attack_overview(report, result)
    return report


def _utility(utility: list[str] | None, quiet: bool) -> list[str] | None:
    """The utility measures to run. Asked for with --utility, those whose models need scikit-learn are
    refused at once when it is not installed, naming the extra (they would fail only after the risk
    measures have run); by default they are left out, saying so in one line, so that the core
    install evaluates with the other measures."""
    import importlib.util

    from rich.markup import escape

    from sdckit._extras import install_command, require
    from sdckit.evaluate.evaluation import DEFAULT_UTILITY

    fitted = [name for name in (utility or DEFAULT_UTILITY) if name in MODEL_MEASURES]
    if not fitted:
        return utility
    if utility is not None or importlib.util.find_spec("sklearn") is not None:
        require("learn", "sklearn", feature=f"sdckit evaluate with {' and '.join(fitted)} utility")
        return utility
    if not quiet:
        errors.print(
            f"{' and '.join(fitted)} utility left out: their models need the 'learn' extra "
            f"({escape(install_command('learn'))})"
        )
    return [name for name in DEFAULT_UTILITY if name not in MODEL_MEASURES]


def _name(path: Path, releases: list[Path]) -> str:
    """A release's name in the report: its file name, or its path when two releases share a name."""
    return path.name if sum(p.name == path.name for p in releases) == 1 else str(path)


def _recipe(document: object, path: Path) -> dict:
    """The recipe of a release: a summary that ``anonymize``/``protect`` wrote holds it under
    ``recipe``; a recipe file is one."""
    from sdckit.errors import ConfigError

    if isinstance(document, dict) and isinstance(document.get("recipe"), dict):
        return document["recipe"]
    if isinstance(document, dict) and "steps" in document:
        return document
    raise ConfigError(
        f"{path}: --recipe: not a recipe nor a summary holding one (no 'steps' or 'recipe' key)"
    )


def _check_recipe_input(made: dict, path: Path, table, original: Path, force: bool) -> None:
    """Refuse a recipe whose recorded input is not ORIGINAL (a release of other data would be credited
    with it), or warn with --force."""
    import warnings

    from sdckit.errors import ConfigError, SdcWarning
    from sdckit.recipes import input_mismatch

    mismatch = input_mismatch(made, table)
    if mismatch is None:
        return
    message = f"{path}: --recipe was not made on {original}: {mismatch}"
    if force:
        warnings.warn(f"{message} (attributed all the same: --force)", SdcWarning, stacklevel=2)
        return
    raise ConfigError(
        f"{message}; give the recipe of a release of {original}, or --force to attribute it anyway"
    )


def _overview(result) -> RichTable:
    table = RichTable(title="R-U map", title_justify="left")
    for column in ("release", f"risk ({result.risk_axis})", f"loss ({result.loss_axis})", "score", "front"):
        table.add_column(column, justify="left" if column == "release" else "right")
    for i, (point, score) in enumerate(zip(result.points, result.scores, strict=True)):
        table.add_row(
            point.name,
            f"{point.risk:.4g}",
            f"{point.loss:.4g}",
            f"{score:.4g}",
            "yes" if i in result.front else "",
        )
    return table


def _attacks(given: list[str] | None) -> list[str] | str | None:
    """--attack NAME (repeat) as a list of names, --attack all as "all" (the library refuses all
    beside other names)."""
    if given is None:
        return None
    return "all" if given == ["all"] else given


def _attack_overview(report: Report, result) -> None:
    """One row per release and attack: the rates, the risk with its interval and the verdict (the
    control rate when there is one); the attacks that did not apply to a release, with the reason."""
    found = [(item.name, attacked) for item in result.releases for attacked in item.attacks.results]
    controlled = any(attacked.control is not None for _, attacked in found)
    table = RichTable(title="Attacks", title_justify="left")
    table.add_column("release")
    table.add_column("attack", no_wrap=True, min_width=max((len(a.name) for _, a in found), default=6))
    for column in ("attack rate", "baseline", *(["control"] if controlled else []), "risk [CI]"):
        table.add_column(column, justify="right")
    table.add_column("verdict")

    def rate(value) -> str:
        return "—" if value is None else f"{value.value:.3f}"

    for name, attacked in found:
        risk = attacked.risk
        shown = "—" if risk.value != risk.value else f"{risk.value:.3f} [{risk.low:.3f}, {risk.high:.3f}]"
        rates = [
            rate(attacked.attack),
            rate(attacked.baseline),
            *([rate(attacked.control)] if controlled else []),
        ]
        table.add_row(name, attacked.name, *rates, shown, attacked.verdict)
    report.add(table)
    for item in result.releases:
        for name, why in item.attacks.skipped.items():
            report.line(f"not run on {item.name}: {name} — {why}")
