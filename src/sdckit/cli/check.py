"""``sdckit check``: the k-anonymity, l-diversity and t-closeness a table (a release) achieves."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table as RichTable

from sdckit.cli._common import (
    ConfigOption,
    DataArgument,
    Report,
    SummaryOption,
    finish,
    stage_json,
    user_errors,
)
from sdckit.cli._outputs import Outputs


def check(
    data: DataArgument,
    config: ConfigOption,
    k: Annotated[int | None, typer.Option("-k", help="Required k of k-anonymity.")] = None,
    l: Annotated[float | None, typer.Option("-l", help="Required l of l-diversity.")] = None,  # noqa: E741
    l_variant: Annotated[
        str, typer.Option("--l-variant", help="distinct, entropy or recursive.")
    ] = "distinct",
    c: Annotated[float, typer.Option("--c", help="c of recursive (c,l)-diversity.")] = 2.0,
    t: Annotated[float | None, typer.Option("-t", help="Required t of t-closeness.")] = None,
    t_distance: Annotated[
        str, typer.Option("--t-distance", help="equal, ordered or hierarchical.")
    ] = "equal",
    summary: SummaryOption = None,
    show: Annotated[int, typer.Option(help="How many violating classes to list.")] = 10,
) -> None:
    """Achieved k-anonymity, l-diversity and t-closeness of a table, and its violating classes.

    Classes are the combinations of the quasi-identifiers as they are in the data (generalized values
    such as 20-29 or '*' are classes as written). Without -k/-l/-t the achieved values are reported
    with nothing required; with them, exit status 3 says that a required model is not satisfied.
    """
    from sdckit.models import check_table
    from sdckit.params import PrivacyModelParams, privacy_models
    from sdckit.table import Role

    with user_errors():
        outputs = Outputs([data, config])
        outputs.file(summary, "--summary", (".json",))
        if k is not None or l is not None or t is not None:  # validated as the methods validate them
            PrivacyModelParams.parse(
                dict(k=k, l=l, l_variant=l_variant, c=c, t=t, t_distance=t_distance),
                spell=lambda name: {"c": "--c"}.get(
                    name, f"-{name}" if len(name) == 1 else f"--{name}".replace("_", "-")
                ),
                method="check",
            )
        table = _read_release(data, config)
        names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
        required = privacy_models(table, k=k, l=l, l_variant=l_variant, c=c, t=t, t_distance=t_distance)
        sensitive = bool(table.schema.with_role(Role.SENSITIVE))
        reported = privacy_models(  # k, l and t are reported even when not required
            table,
            k=k or 1,
            l=l if l is not None else (1 if sensitive else None),
            l_variant=l_variant,
            c=c,
            t=t if t is not None else (1.0 if sensitive else None),
            t_distance=t_distance,
        )
        result = check_table(table, names, reported)
        figures = result.summary()
        required_names = {model.name for model in required}
        satisfied = all(bool(r.passes.all()) for r in result.results if r.model in required_names)
        figures.update(required=sorted(required_names), satisfied=satisfied, quasi_identifiers=names)
        report = Report()
        report.line(
            f"[bold]{data.name}[/]: {result.n_records:,} records, {result.n_classes:,} equivalence classes "
            f"on {', '.join(names)}"
        )
        achieved = RichTable(title="Achieved", title_justify="left")
        for column, justify in (("model", "left"), ("achieved", "right"), ("violating classes", "right")):
            achieved.add_column(column, justify=justify)
        for r in result.results:
            violating = f"{int((~r.passes).sum()):,}" if r.model in required_names else "-"
            achieved.add_row(r.model, f"{r.worst():.4g}", violating)
        report.add(achieved)
        if required:
            verdict = "[bold green]satisfied[/]" if satisfied else "[bold red]not satisfied[/]"
            report.line(f"required {', '.join(sorted(required_names))}: {verdict}")
            if show > 0 and result.violating().height:
                report.add(result.violating().head(show))
        stage_json(outputs, summary, figures)
        unmet = None if satisfied else f"{data.name} does not satisfy {', '.join(sorted(required_names))}"
        finish(outputs, report, unmet, allowed=True)


def _read_release(data: Path, config: Path):
    """A table to check may be a release: generalized values are classes as written, so the
    quasi-identifiers' hierarchies are not needed (nor checked against the values)."""
    from sdckit.config import load_config
    from sdckit.errors import ConfigError
    from sdckit.table import Role

    settings = load_config(config)
    settings = dataclasses.replace(
        settings,
        attributes=tuple(
            dataclasses.replace(a, hierarchy=None) if a.role is Role.QUASI_IDENTIFIER else a
            for a in settings.attributes
        ),
    )
    table = settings.read(data)
    if not table.schema.with_role(Role.QUASI_IDENTIFIER):
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    return table
