"""Command-line options made from a parameters object (:class:`~sdckit.params.MethodParams`):
one option per field, with its type, choices, default and description."""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from sdckit.cli import _click as click
from sdckit.params import option_name, unwrap_annotation


def spec_options(spec: Any) -> list[str]:
    """The command-line options of a registered method's or measure's own parameters and extra
    outputs."""
    return [option_name(name, field) for name, field in spec.params.model_fields.items()] + [
        extra.option for extra in spec.outputs
    ]


def owner_naming_command(specs: Iterable[Any]) -> type[TyperCommand]:
    """A command class that, for an option it does not take, names the methods or measures of
    ``specs`` that take it (exit 2, as every usage error)."""

    class OwnerNamingCommand(TyperCommand):
        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            try:
                return super().parse_args(ctx, args)
            except click.NoSuchOption as error:
                owners = [spec.name for spec in specs if error.option_name in spec_options(spec)]
                if owners:
                    error.message = (
                        f"{error.option_name} is not an option of {ctx.info_name}; it is an option of "
                        f"{', '.join(owners)}"
                    )
                    error.possibilities = None
                raise

    return OwnerNamingCommand


def field_parameter(name: str, field: Any, panel: str) -> inspect.Parameter:
    """The typer option of one field of a parameters object (``max_rounds`` -> ``--max-rounds``)."""
    base, choices = unwrap_annotation(field.annotation)
    option = option_name(name, field)
    help_text = field.description or ""
    if choices:
        help_text += f" One of: {', '.join(map(str, choices))}."
    default = "required" if field.is_required() else field.default
    shown = "required" if default == "required" else ("none" if default is None else str(default))
    aliases = list((getattr(field, "json_schema_extra", None) or {}).get("aliases", ()))
    if base is bool:
        declaration = [f"{option}/--no-{option.removeprefix('--')}"]
        kind: Any = bool | None
    else:
        declaration = [option, *aliases]
        kind = {int: int, float: float, Path: Path}.get(base, str) | None
    info = typer.Option(*declaration, help=help_text, show_default=shown, rich_help_panel=panel)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, info]
    )
