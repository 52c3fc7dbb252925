"""``sdckit risk MEASURE``: disclosure-risk measures of a file, one command per measure of
:data:`sdckit.measures.RISK_MEASURES` (made by :mod:`sdckit.cli._measures`)."""

from __future__ import annotations

import typer

from sdckit.cli._measures import add_measure_commands
from sdckit.measures import RISK_MEASURES

app = typer.Typer(
    help="Disclosure-risk measures of a microdata file: sdckit risk MEASURE --help.", no_args_is_help=True
)


@app.callback()
def _warm_up() -> None:
    # The measures count with compiled kernels: load them while the data is read.
    from sdckit.frequency import warm_up_in_background

    warm_up_in_background()


add_measure_commands(app, RISK_MEASURES)
