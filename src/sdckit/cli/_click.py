"""The click that typer runs on. typer 0.26 and later vendor their own copy of click
(``typer._click``, with ``Exit`` and ``Abort`` in ``typer.exceptions``); earlier releases use the
``click`` package. The command line catches click's exceptions and subclasses its classes, so it
takes them from here, whichever typer is installed."""

from __future__ import annotations

import typer

try:  # typer >= 0.26
    from typer._click import core, exceptions
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import core, exceptions
    from click.globals import get_current_context

ClickException = exceptions.ClickException
NoSuchOption = exceptions.NoSuchOption
UsageError = exceptions.UsageError
#: Raised for an unknown command by the click package; typer's copy raises a UsageError.
NoSuchCommand = getattr(exceptions, "NoSuchCommand", UsageError)
Exit = typer.Exit
Abort = typer.Abort
Context = core.Context
Command = core.Command

__all__ = [
    "Abort",
    "ClickException",
    "Command",
    "Context",
    "Exit",
    "NoSuchCommand",
    "NoSuchOption",
    "UsageError",
    "get_current_context",
]
