"""Commands made from a registry of measures (``sdckit risk <measure>``, ``sdckit utility
<measure>``): the options come from the measure's parameters object, as for ``sdckit anonymize``.
A measure of one file takes ``DATA``; one that compares takes ``ORIGINAL RELEASE`` (the release read
as ``sdckit check`` reads one). Parse, run, report, write; no computation here."""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from sdckit.cli._common import (
    ConfigOption,
    InlineRoles,
    QuietOption,
    Report,
    SummaryOption,
    finish,
    load_settings,
    pop_roles,
    progress_bar,
    role_parameters,
    stage_json,
    stage_messages,
    user_errors,
)
from sdckit.cli._options import field_parameter, owner_naming_command, spec_options
from sdckit.cli._outputs import Outputs, extra_writer
from sdckit.cli._scale import NAMES as SCALE_NAMES
from sdckit.cli._scale import (
    Scale,
    declare_records_output,
    remove_folder,
    run_where_asked,
    scale_parameters,
    stage_frame_parts,
    stage_parts,
)
from sdckit.measures import MeasureSpec
from sdckit.params import option_name
from sdckit.registry import Registry

PANEL = "measure options"
RECORD_SUFFIXES = (".parquet", ".pq", ".csv")
SHARED = ("config", "output", "summary", "quiet", "release", "original", *SCALE_NAMES)

DataArgument = Annotated[Path, typer.Argument(help="Microdata file: CSV (delimiter sniffed) or Parquet.")]
OriginalArgument = Annotated[Path, typer.Argument(help="The original microdata (CSV or Parquet).")]
ReleasedArgument = Annotated[
    Path, typer.Argument(help="A release of it (any file sdckit writes, or a masked file with its columns).")
]
RecordsOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="One row per record, in input order: .parquet or .csv.")
]
AsReleaseOption = Annotated[
    bool, typer.Option("--release", help="DATA is a release sdckit wrote: read it as check does.")
]
OriginalOption = Annotated[
    Path | None,
    typer.Option(
        "--original",
        help="DATA is a release of this original (CSV or Parquet): measure the original records as an "
        "adversary who knows their values sees the release (generalized values cover the values they "
        "stand for).",
    ),
]


#: The command-line options of a measure's own parameters and extra outputs.
measure_options = spec_options


def _shared_parameters(spec: MeasureSpec) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if spec.compares:
        shared = [
            inspect.Parameter("original", positional, annotation=OriginalArgument),
            inspect.Parameter("released", positional, annotation=ReleasedArgument),
        ]
    else:
        shared = [inspect.Parameter("data", positional, annotation=DataArgument)]
    shared.append(inspect.Parameter("config", keyword, default=None, annotation=ConfigOption))
    shared.extend(role_parameters(spec_options(spec)))
    if spec.records is not None:
        shared.append(inspect.Parameter("output", keyword, default=None, annotation=RecordsOption))
    shared.append(inspect.Parameter("summary", keyword, default=None, annotation=SummaryOption))
    if not spec.compares:
        shared.append(inspect.Parameter("release", keyword, default=False, annotation=AsReleaseOption))
    if spec.original:
        shared.append(inspect.Parameter("original", keyword, default=None, annotation=OriginalOption))
    shared.append(inspect.Parameter("quiet", keyword, default=False, annotation=QuietOption))
    if not spec.compares:
        shared.extend(scale_parameters())
    for number, extra in enumerate(spec.outputs):
        option = typer.Option(extra.option, help=extra.help, rich_help_panel=PANEL)
        shared.append(
            inspect.Parameter(
                f"extra_output_{number}", keyword, default=None, annotation=Annotated[Path | None, option]
            )
        )
    return shared


def add_measure_commands(app: typer.Typer, registry: Registry[MeasureSpec], only: str | None = None) -> None:
    """One command per registered measure on ``app``; with ``only`` (a registered name), that
    measure's command alone, so that a run imports its measure's module and no other (the others'
    modules import numba, scipy, the linkage code). The command is the same either way: its help,
    options and messages do not depend on its siblings (an option it lacks is still answered with the
    measures that take it, their modules imported then)."""
    cls = owner_naming_command(registry)
    for spec in [registry.get(only)] if only is not None else registry:
        _add_command(app, spec, cls)


def _add_command(app: typer.Typer, spec: MeasureSpec, cls: type[TyperCommand]) -> None:
    fields = spec.params.model_fields

    def command(**values: Any) -> None:
        inputs = [values.pop("original"), values.pop("released")] if spec.compares else [values.pop("data")]
        roles = pop_roles(values)
        shared = {name: values.pop(name, None) for name in SHARED}
        extras = [values.pop(f"extra_output_{number}") for number in range(len(spec.outputs))]
        given = {name: value for name, value in values.items() if value is not None}
        measure(spec, inputs, given, extras, roles=roles, **shared)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        _shared_parameters(spec) + [field_parameter(name, field, PANEL) for name, field in fields.items()]
    )
    command.__doc__ = f"{spec.help}\n\n{(spec.params.__doc__ or '').strip()}"
    app.command(spec.name, cls=cls, help=command.__doc__, short_help=spec.help)(command)


def measure(
    spec: MeasureSpec,
    inputs: list[Path],
    given: dict[str, Any],
    extras: list[Path | None],
    *,
    config: Path | None,
    output: Path | None,
    summary: Path | None,
    quiet: bool,
    release: bool | None,
    original: Path | None = None,
    roles: InlineRoles = InlineRoles(),
    **scale_options: Any,
) -> None:
    """Parse, read, measure, report, write: the body every measure's command shares."""
    with user_errors():
        fields = spec.params.model_fields
        params = spec.params.parse(
            given, spell=lambda name: option_name(name, fields.get(name)), method=spec.name
        )
        outputs = _declare_outputs(
            spec, [*inputs, *([original] if original else [])], config, given, output, extras, summary
        )
        started = time.perf_counter()
        settings = load_settings(config, roles)
        measured: dict[str, Any] = {}

        def in_memory() -> tuple[Any, int]:
            result, records, measured["identifiers"] = _in_memory(
                spec, inputs, settings, params, release, quiet, started, original
            )
            return result, records

        scaled = None if release or original or spec.compares else _scaled_measure(spec.name)
        output_parts = output if spec.records is not None else None
        computed = run_where_asked(
            Scale.of(scale_options),
            f"{spec.group} {spec.name}",
            scaled,
            inputs[0],
            output_parts,
            quiet,
            in_memory,
            settings,
            params,
        )
        result, records = computed.result, computed.records
        figures = spec.summary(result)
        if measured.get("identifiers") is not None:
            from sdckit.risk.identifiers import with_identifiers

            figures = with_identifiers(figures, measured["identifiers"])
        elapsed = time.perf_counter() - started
        document = _document(spec, inputs, params, figures, elapsed, original)
        what, report = _report(spec, inputs, original, records, elapsed, figures)
        if computed.parts is not None:
            stage_parts(outputs, output, computed.parts)
        elif spec.records is not None:
            stage_frame_parts(outputs, output, spec.records(result))
        for extra, path in zip(spec.outputs, extras, strict=True):
            if path is not None:
                outputs.stage(path, extra_writer(extra, result, what))
        stage_json(outputs, summary, document)
        try:
            finish(outputs, report)
        finally:
            remove_folder(computed.folder)


def _report(
    spec: MeasureSpec,
    inputs: list[Path],
    original: Path | None,
    records: int,
    elapsed: float,
    figures: dict[str, Any],
) -> tuple[str, Report]:
    """What was measured (the files' names) and the terminal report of the figures."""
    report = Report()
    what = f"{inputs[0].name} → {inputs[1].name}" if spec.compares else inputs[0].name
    what = f"{what} (release of {original.name})" if original else what
    report.line(f"[bold]{what}[/]: {records:,} records, {spec.group} {spec.name} — {elapsed:.2f} s")
    for item in spec.report(figures):
        report.line(item) if isinstance(item, str) else report.add(item)
    return what, report


def _document(
    spec: MeasureSpec, inputs: list[Path], params: Any, figures: dict, elapsed: float, original: Path | None
) -> dict:
    """The --summary: the inputs, the measure and its parameters, its figures and the time taken."""
    named = (
        {"original": str(inputs[0]), "release": str(inputs[1])} if spec.compares else {"data": str(inputs[0])}
    )
    if original is not None:
        named["original"] = str(original)
    return {
        **named,
        "measure": spec.name,
        "parameters": params.to_recipe(),
        **figures,
        "elapsed_seconds": round(elapsed, 3),
    }


def _declare_outputs(
    spec: MeasureSpec,
    inputs: list[Path],
    config: Path | None,
    given: dict[str, Any],
    output: Path | None,
    extras: list[Path | None],
    summary: Path | None,
) -> Outputs:
    outputs = Outputs([*inputs, config, *(v for v in given.values() if isinstance(v, Path))])
    declare_records_output(outputs, output, "--output", RECORD_SUFFIXES)
    for extra, path in zip(spec.outputs, extras, strict=True):
        outputs.file(path, extra.option, extra.suffixes)
    outputs.file(summary, "--summary", (".json",))
    return outputs


def _in_memory(
    spec: MeasureSpec,
    inputs: list[Path],
    settings: Any,
    params: Any,
    release: bool | None,
    quiet: bool,
    started: float,
    original: Path | None = None,
) -> tuple[Any, int, Any]:
    """Read the input(s) whole and measure: the result, the number of records and the identifiers
    of the measured records (:func:`sdckit.risk.identifiers.identifier_column`: of the original when
    there is one, since releases drop identifiers). With ``original``, DATA is read as a release and
    the original as data, for coverage matching."""
    from sdckit.context import Context
    from sdckit.measures import run_measure
    from sdckit.risk.identifiers import identifier_column

    if spec.compares:
        tables = [settings.read(inputs[0]), settings.read_release(inputs[1])]
    else:
        tables = [settings.read_release(inputs[0]) if release or original else settings.read(inputs[0])]
    known = settings.read(original) if original is not None else None
    with progress_bar(not quiet, spec.progress_label) as progress:
        context = Context(
            config=settings, progress=progress, stage=stage_messages(quiet, started), original=known
        )
        result = run_measure(spec, *tables, params=params, context=context)
    identifiers = None if spec.compares else identifier_column(known if known is not None else tables[0])
    return result, tables[0].n_records, identifiers


def _scaled_measure(name: str) -> Any:
    """The function that runs measure ``name`` over partitions, or None."""
    from sdckit.scale.methods import MEASURES

    return MEASURES.get(name)
