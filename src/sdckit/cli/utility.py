"""``sdckit utility MEASURE ORIGINAL RELEASE``: information loss of a release, one command per
measure of :data:`sdckit.measures.UTILITY_MEASURES` (:mod:`sdckit.cli._measures`)."""

from __future__ import annotations

import typer

from sdckit.cli._measures import add_measure_commands
from sdckit.measures import UTILITY_MEASURES

app = typer.Typer(
    help="Information loss of a release against its original: sdckit utility MEASURE --help.",
    no_args_is_help=True,
)
add_measure_commands(app, UTILITY_MEASURES)
