"""``sdckit anonymize METHOD``: one command per registered method, its options made from the
method's parameters object (``max_rounds`` -> ``--max-rounds``). An option of another method is a
usage error naming it (exit 2)."""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperGroup

from sdckit.anonymize.base import METHODS, Context, MethodSpec, run_method
from sdckit.cli._common import (
    TABLE_SUFFIXES,
    AllowViolationsOption,
    ConfigOption,
    DataArgument,
    InlineRoles,
    QuietOption,
    ReleaseOption,
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
from sdckit.params import option_name


def _placeholder() -> None:
    """Never run: a method's command before it is built (see :class:`MethodGroup`)."""


class _Commands(dict[str, Any]):
    """The group's commands by name; a method's command is built (its module imported) when it is
    looked up, a placeholder with its short help standing in until then."""

    def __init__(self, commands: Mapping[str, Any], build: Any) -> None:
        super().__init__(commands)
        self._build = build
        self._pending = set(commands)

    def __getitem__(self, name: str) -> Any:
        if name in self._pending and name in self:
            super().__setitem__(name, self._build(name))
            self._pending.discard(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def items(self) -> Any:
        return [(name, self[name]) for name in self]

    def values(self) -> Any:
        return [self[name] for name in self]


class MethodGroup(TyperGroup):
    """``sdckit anonymize``: one command per registered method, built when the command line runs it
    (or asks its help), so that the group's help lists the methods from the registry's entries
    without importing their modules."""

    commands: _Commands

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self.commands, _built_command)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names, in the registry's order, without building them

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        # The listing of the group's help reads the placeholders' short help.
        return dict.get(self.commands, cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and name is not None:  # a method's command: built now, to run or show its help
            command = self.commands[name]
        return name, command, rest


app = typer.Typer(
    cls=MethodGroup,
    help="Anonymize microdata with one method and write the release: sdckit anonymize METHOD --help.",
    no_args_is_help=True,
)
SHARED = ("data", "config", "output", "summary", "quiet", "allow_violations", *SCALE_NAMES)
PANEL = "method options"


#: The command-line options of a method's own parameters and extra outputs.
method_options = spec_options
#: Says which methods take an option this one does not.
MethodCommand = owner_naming_command(METHODS)


def _shared_parameters(spec: MethodSpec) -> list[inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    shared = [
        inspect.Parameter("data", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=DataArgument),
        inspect.Parameter("config", keyword, default=None, annotation=ConfigOption),
        *role_parameters(spec_options(spec)),
        inspect.Parameter("output", keyword, annotation=ReleaseOption),
        inspect.Parameter("summary", keyword, default=None, annotation=SummaryOption),
        inspect.Parameter("quiet", keyword, default=False, annotation=QuietOption),
        inspect.Parameter("allow_violations", keyword, default=False, annotation=AllowViolationsOption),
    ]
    shared.extend(scale_parameters())
    for number, extra in enumerate(spec.outputs):
        option = typer.Option(extra.option, help=extra.help, rich_help_panel=PANEL)
        shared.append(
            inspect.Parameter(
                f"extra_output_{number}", keyword, default=None, annotation=Annotated[Path | None, option]
            )
        )
    return shared


def make_command(spec: MethodSpec, target: typer.Typer) -> None:
    """Add ``spec``'s command to ``target``: its options made from its parameters object."""
    fields = spec.params.model_fields

    def command(**values: Any) -> None:
        roles = pop_roles(values)
        shared = {name: values.pop(name) for name in SHARED}
        extras = [values.pop(f"extra_output_{number}") for number in range(len(spec.outputs))]
        given = {name: value for name, value in values.items() if value is not None}
        anonymize(spec, given, extras, roles=roles, **shared)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        _shared_parameters(spec) + [field_parameter(name, field, PANEL) for name, field in fields.items()]
    )
    command.__doc__ = f"{spec.help}\n\n{(spec.params.__doc__ or '').strip()}"
    target.command(spec.name, cls=MethodCommand, help=command.__doc__, short_help=spec.help)(command)


def _built_command(name: str) -> Any:
    """The click command of method ``name``, as typer builds it."""
    single = typer.Typer()
    make_command(METHODS.get(name), single)
    return typer.main.get_command_from_info(
        single.registered_commands[0],
        pretty_exceptions_short=app.pretty_exceptions_short,
        rich_markup_mode=app.rich_markup_mode,
    )


def anonymize(
    spec: MethodSpec,
    given: dict[str, Any],
    extras: list[Path | None],
    *,
    data: Path,
    config: Path | None,
    output: Path,
    summary: Path | None,
    quiet: bool,
    allow_violations: bool,
    roles: InlineRoles = InlineRoles(),
    **scale_options: Any,
) -> None:
    """Parse, run, report, write: the body every method's command shares."""
    with user_errors():
        fields = spec.params.model_fields
        params = spec.params.parse(
            given, spell=lambda name: option_name(name, fields.get(name)), method=spec.name
        )
        inputs = [data, config, *(v for v in given.values() if isinstance(v, Path))]
        outputs = Outputs(inputs)
        declare_records_output(outputs, output, "--output", TABLE_SUFFIXES)
        outputs.file(summary, "--summary", (".json",))
        for extra, path in zip(spec.outputs, extras, strict=True):
            outputs.file(path, extra.option, extra.suffixes)
        started = time.perf_counter()
        settings, computed, table = _compute(
            spec, params, data, (config, roles), extras, output, quiet, scale_options
        )
        release, n_records = computed.result, computed.records
        if release is None:  # a run over partitions that gave its figures itself
            figures, violation = computed.figures, computed.violation
        else:
            figures = spec.summary(release)
            violation = spec.violation(release, figures)
        elapsed = time.perf_counter() - started
        record = _recipe(spec, params, release, table, settings, computed)
        document = {
            "data": str(data),
            "method": spec.name,
            **figures,
            "satisfied": violation is None,
            "violation": violation,
            "elapsed_seconds": round(elapsed, 3),
            "recipe": record,
        }
        report = Report()
        report.line(
            f"[bold]{data.name}[/]: {n_records:,} records, method {spec.name} — {elapsed:.2f} s"
            f"{' (heuristic search)' if getattr(release, 'heuristic', False) else ''}"
        )
        for line in spec.report(figures):
            report.line(line)
        if computed.parts is not None:
            stage_parts(outputs, output, computed.parts)
        else:
            stage_frame_parts(outputs, output, spec.released(release))
        stage_json(outputs, summary, document)
        for extra, path in zip(spec.outputs, extras, strict=True):
            if path is not None:
                outputs.stage(path, extra_writer(extra, release, data.name))
        try:
            finish(outputs, report, violation, allow_violations)
        finally:
            remove_folder(computed.folder)


def _compute(
    spec: MethodSpec,
    params: Any,
    data: Path,
    config: tuple[Path | None, InlineRoles],
    extras: list[Path | None],
    output: Path,
    quiet: bool,
    scale_options: dict[str, Any],
) -> tuple[Any, Any, Any]:
    """The configuration, the release (in memory or over partitions) and the table it was made from
    (the patterns of the data, over partitions). ``config``: the -c file and the inline roles."""
    started = time.perf_counter()
    settings = load_settings(*config)
    scale = Scale.of(scale_options)
    scaled = _scaled_method(spec.name)
    if scaled is not None:
        _refuse_extras(spec, extras, scale, data)
    held: dict[str, Any] = {}

    def in_memory() -> tuple[Any, int]:
        held["table"] = table = settings.read(data)
        with progress_bar(not quiet, spec.progress_label) as progress:
            context = Context(config=settings, progress=progress, stage=stage_messages(quiet, started))
            return run_method(spec, table, params, context), table.n_records

    command = f"anonymize {spec.name}"
    computed = run_where_asked(scale, command, scaled, data, output, quiet, in_memory, settings, params)
    return (
        settings,
        computed,
        held["table"] if "table" in held else getattr(computed.result, "original", None),
    )


def _recipe(
    spec: MethodSpec, params: Any, release: Any, table: Any, settings: Any, computed: Any
) -> dict[str, Any]:
    """The recipe of the run; over partitions its input is described by rows and columns only (the
    records were never in one place to be hashed)."""
    from sdckit.recipes import Step, recipe, transformation_record

    if computed.parts is not None:
        record = recipe([Step(spec, release.params if release is not None else params)], None, settings)
        record["input"] = {"rows": computed.records, "sha256": None}
    else:
        record = recipe([Step(spec, release.params)], table, settings)
    if spec.reapplicable and release is not None:
        record["transformation"] = transformation_record(release)
    return record


def _scaled_method(name: str) -> Any:
    """The function that runs method ``name`` over partitions, or None."""
    return METHODS.get(name).partitioned


def _refuse_extras(spec: MethodSpec, extras: list[Path | None], scale: Scale, data: Path) -> None:
    """The extra outputs (figures of every record) are not made by a run over partitions."""
    from sdckit.errors import ConfigError

    scale.check(f"anonymize {spec.name}", covered=True)
    if not scale.partitioned(data):
        return
    for extra, path in zip(spec.outputs, extras, strict=True):
        if path is not None:
            raise ConfigError(f"{extra.option} is not written by a run over partitions; run in memory for it")


for _entry in METHODS.entries():
    app.command(_entry.name, short_help=_entry.help)(_placeholder)
