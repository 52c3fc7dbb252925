"""The root of the command line: ``sdckit <group> ...``, one module per command group."""

from __future__ import annotations

from typing import Annotated

import typer

from sdckit.cli import _click as click
from sdckit.cli import anonymize, check, evaluate, experiment, protect, query, risk, serve, table, utility
from sdckit.cli._common import console, errors

app = typer.Typer(
    name="sdckit",
    help="Statistical disclosure control: measure and reduce the disclosure risk of microdata.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from sdckit import __version__

        console.print(f"sdckit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Statistical disclosure control: measure and reduce the disclosure risk of microdata.

    Exit statuses: 0 success, 1 internal error, 2 bad input or option, 3 a release that does not
    satisfy what was asked, 130 interrupted. On any failure no output of the run is left behind.
    """


app.add_typer(risk.app, name="risk", short_help="Disclosure-risk measures of a file (combined, ...).")
app.add_typer(utility.app, name="utility", short_help="Information loss of a release against its original.")
app.command("check", short_help="The k, l and t a table or release achieves.")(check.check)
app.add_typer(
    anonymize.app, name="anonymize", short_help="Anonymize with one method; one command per method."
)
app.command("protect", short_help="Run a recipe: a chain of methods, replayable bit for bit.")(
    protect.protect
)
app.command("apply", short_help="Re-apply a learnt transformation to new data; export its mappings.")(
    protect.apply
)
app.command(
    "evaluate", short_help="Risk and utility of releases against their original: R-U map, HTML report."
)(evaluate.evaluate)
app.add_typer(
    table.app, name="table", short_help="Protect tables: cell suppression, audit, rounding, CTA, cell key."
)
app.add_typer(experiment.app, name="experiment", short_help="Reproduce the experiments of the papers.")
app.command("serve", short_help="Serve protected answers to statistical queries over HTTP.")(serve.serve)
app.add_typer(serve.keys, name="keys", short_help="Analysts' API keys of a query server: add, revoke, list.")
app.command("query", short_help="Send one query to a query server; print its protected answer.")(query.query)


def run(arguments: list[str] | None = None) -> int:
    """Run the app without click's own handling of errors and interrupts; return the exit status."""
    try:
        result = app(args=arguments, standalone_mode=False)
    except click.Exit as exit_:
        return exit_.exit_code
    except click.ClickException as error:
        if isinstance(error, click.NoSuchCommand) and " Did you mean " in error.message:
            error.possibilities = []  # typer already put the suggestion in the message
        error.show(file=None)
        return error.exit_code
    except click.Abort:
        raise KeyboardInterrupt from None
    return result if isinstance(result, int) else 0


__all__ = ["app", "errors", "run"]
