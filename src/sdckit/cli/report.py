"""``sdckit report ORIGINAL RELEASE -c CONFIG [--recipe SUMMARY] [--audience internal|external] -o
report.html``: the report of one protection run in words, like sdcMicro's ``report()``
(:mod:`sdckit.evaluate.protection_report`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import (
    ConfigOption,
    InlineRoles,
    QuasiIdentifiersOption,
    QuietOption,
    Report,
    SensitiveOption,
    finish,
    load_settings,
    progress_bar,
    stage_messages,
    user_errors,
)
from sdckit.cli._outputs import Outputs

OriginalArgument = Annotated[Path, typer.Argument(help="The original microdata (CSV or Parquet).")]
ReleaseArgument = Annotated[Path, typer.Argument(help="The release of it that the report is about.")]
OutputOption = Annotated[
    Path, typer.Option("--output", "-o", help="The report: a self-contained .html file.")
]
RecipeOption = Annotated[
    Path | None,
    typer.Option(
        "--recipe",
        help="The release's summary JSON (anonymize or protect --summary) or its recipe: the methods "
        "applied, with their parameters.",
    ),
]
AudienceOption = Annotated[
    str,
    typer.Option(
        help="internal (everything: parameters, records at risk, per-attribute figures) or external "
        "(for the users of the release: no parameter value, no record)."
    ),
]
TitleOption = Annotated[
    str | None, typer.Option(help="The report's title (default: Protection report: RELEASE).")
]


def report(
    original: OriginalArgument,
    release: ReleaseArgument,
    output: OutputOption,
    config: ConfigOption = None,
    qi: QuasiIdentifiersOption = None,
    sensitive: SensitiveOption = None,
    recipe: RecipeOption = None,
    audience: AudienceOption = "internal",
    title: TitleOption = None,
    quiet: QuietOption = False,
) -> None:
    """Report one protection run in words: the keys, the risk before and after, the methods applied,
    the information loss; for the data steward (internal) or the users of the release (external)."""
    from sdckit.config import read_document
    from sdckit.evaluate.protection_report import (
        check_audience,
        protection_report,
        render_protection_report,
    )

    with user_errors():
        chosen = check_audience(audience)
        outputs = Outputs([original, release, config, recipe])
        outputs.file(output, "--output", (".html", ".htm"))
        document = read_document(recipe, "recipe") if recipe is not None else None
        if document is not None and not isinstance(document, dict):
            from sdckit.errors import ConfigError

            raise ConfigError(f"{recipe}: --recipe: not a summary nor a recipe (a JSON or YAML mapping)")
        started = time.perf_counter()
        settings = load_settings(config, InlineRoles(qi, sensitive))
        table = settings.read(original)
        released = settings.read_release(release)
        with progress_bar(not quiet, "measures") as progress:
            result = protection_report(
                table,
                released,
                recipe=document,
                config=settings,
                original_name=original.name,
                release_name=release.name,
                stage=stage_messages(quiet, started),
                progress=progress,
            )
        text = render_protection_report(result, chosen, title=title)
        outputs.stage(output, lambda path: Path(path).write_text(text, encoding="utf-8"))
        lines = Report()
        for sentence in _sentences(result):
            lines.line(sentence)
        lines.line(f"{chosen} report — {time.perf_counter() - started:.2f} s")
        finish(outputs, lines)


def _sentences(result) -> list[str]:
    from rich.markup import escape

    from sdckit.evaluate.protection_report import risk_sentences

    return [escape(sentence) for sentence in risk_sentences(result.before, result.after)]
