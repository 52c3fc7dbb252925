"""``sdckit risk MEASURE``: disclosure-risk measures of a file, one command per measure of
:data:`sdckit.measures.RISK_MEASURES` (made by :mod:`sdckit.cli._measures`)."""

from __future__ import annotations

from typing import Any

import typer

from sdckit.cli._measures import add_measure_commands
from sdckit.measures import RISK_MEASURES

HELP = "Disclosure-risk measures of a microdata file: sdckit risk MEASURE --help."


def _warm_up() -> None:
    # The measures count with compiled kernels: load them while the data is read.
    from sdckit.frequency import warm_up_in_background

    warm_up_in_background()


def _group(only: str | None = None) -> typer.Typer:
    group = typer.Typer(help=HELP, no_args_is_help=True)
    group.callback()(_warm_up)
    add_measure_commands(group, RISK_MEASURES, only)
    return group


def narrowed(command: str) -> typer.Typer:
    """The group a command line ``sdckit risk COMMAND ...`` needs: COMMAND's alone when it names a
    measure (so that a run imports no other measure's module), the whole group otherwise (its help,
    a mistyped name's suggestion)."""
    return _group(command if command in RISK_MEASURES else None)


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole group, built on first use
        if "_app" not in globals():
            globals()["_app"] = _group()
        return globals()["_app"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
