"""The root of the command line: ``sdckit <group> ...``, one module per command group.

Each group's module imports the library it drives (the anonymization methods import numba and scipy,
the table methods HiGHS, serve FastAPI), so a run builds only the group its command line names
(:func:`build_app`): ``sdckit risk combined`` never imports the anonymization methods. The whole app
(:data:`app`, built on first use) serves the tests. ``sdckit --help``, a bare ``sdckit`` and a
mistyped command are served by a root whose entries are placeholders with their short help
(:func:`_light_app`), which imports no group (nor polars): a start-up of typer alone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from sdckit.cli import _click as click
from sdckit.cli._entries import ENTRIES as _ENTRIES
from sdckit.cli._entries import SUMMARY


class PipeClosed(Exception):
    """The reader of standard output (or error) closed it: ``sdckit ... | head -1``. Not an OSError,
    which click would turn into exit status 1."""


def quiet_on_closed_pipe(console: Any) -> None:
    """What a rich console does when its reader has gone: write no more and end the command quietly
    (rich's own answer is ``SystemExit(1)``, an exit status that says a failure)."""
    console.quiet = True
    raise PipeClosed


def _version(value: bool) -> None:
    if value:
        from sdckit import __version__

        typer.echo(f"sdckit {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Statistical disclosure control: measure and reduce the disclosure risk of microdata.

    Exit statuses: 0 success, 1 internal error, 2 bad input or option, 3 a release that does not
    satisfy what was asked, 130 interrupted, 141 standard output closed by its reader (quietly, the
    outputs written before stay). On any failure no output of the run is left behind.
    """


def _root_app() -> typer.Typer:
    root = typer.Typer(
        name="sdckit",
        help=SUMMARY,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    root.callback()(_main)
    return root


def build_app(names: Sequence[str] | None = None, command: str | None = None) -> typer.Typer:
    """The root app with the entries ``names`` (every entry when None), in help order. ``command``:
    the word after the entry on the command line; a group module that defines ``narrowed(command)``
    (:mod:`sdckit.cli.risk`) then builds only what that command needs."""
    root = _root_app()
    for name, (module_name, attribute, short_help) in _ENTRIES.items():
        if names is not None and name not in names:
            continue
        module = importlib.import_module(f"sdckit.cli.{module_name}")
        narrowed = getattr(module, "narrowed", None) if command is not None else None
        target = narrowed(command) if narrowed is not None else getattr(module, attribute)
        if isinstance(target, typer.Typer):
            root.add_typer(target, name=name, short_help=short_help)
        else:
            root.command(name, short_help=short_help)(target)
    return root


def _placeholder() -> None:
    """Never run: an entry of the light root is only listed."""


def _light_app() -> typer.Typer:
    """The root with every entry as a placeholder command carrying its short help: enough for the
    root's help and for click's 'No such command' with its suggestion."""
    root = _root_app()
    for name, (_, _, short_help) in _ENTRIES.items():
        root.command(name, short_help=short_help)(_placeholder)
    return root


def _chosen_entry(arguments: Sequence[str]) -> str | None:
    """The root entry a command line names (its first argument, after no root option), if any."""
    return arguments[0] if arguments and arguments[0] in _ENTRIES else None


def _full_app() -> typer.Typer:
    if "app" not in globals():
        globals()["app"] = build_app()
    return globals()["app"]


def __getattr__(name: str) -> Any:
    if name == "app":
        return _full_app()
    if name == "errors":
        from sdckit.cli._common import errors

        return errors
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run(arguments: list[str] | None = None) -> int:
    """Run the app without click's own handling of errors and interrupts; return the exit status."""
    from rich.console import Console

    from sdckit.cli import EXIT_PIPE_CLOSED

    # Every rich console, typer's help included: a closed pipe is no failure.
    Console.on_broken_pipe = quiet_on_closed_pipe  # type: ignore[method-assign, assignment]
    given = sys.argv[1:] if arguments is None else list(arguments)
    chosen = _chosen_entry(given)
    try:
        if given[:1] == ["--version"]:  # eager and first: the app would print it whatever follows
            _version(True)
        if chosen is None:
            result = _light_app()(args=arguments, standalone_mode=False)
        else:
            application = build_app([chosen], given[1] if len(given) > 1 else None)
            from sdckit.cli._common import compile_notice

            with compile_notice(chosen, given):  # the first run's wait for numba, announced
                result = application(args=arguments, standalone_mode=False)
    except click.Exit as exit_:
        return exit_.exit_code
    except click.ClickException as error:
        if isinstance(error, click.NoSuchCommand) and " Did you mean " in error.message:
            error.possibilities = []  # typer already put the suggestion in the message
        error.show(file=None)
        return error.exit_code
    except click.Abort:
        raise KeyboardInterrupt from None
    except PipeClosed:
        return EXIT_PIPE_CLOSED
    return result if isinstance(result, int) else 0


__all__ = ["app", "build_app", "errors", "run"]  # noqa: F822 (app: built on first use)
