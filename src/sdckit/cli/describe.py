"""``sdckit describe DATA [-o config.yaml] [--sample N] [--max-combination 3] [--summary s.json]``:
propose a role for every column and write a starting configuration (:mod:`sdckit.describe`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from sdckit.cli._common import DataArgument, Report, SummaryOption, finish, stage_json, user_errors
from sdckit.cli._outputs import Outputs

ConfigOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the proposal as a starting configuration (.yaml), a comment per attribute saying why.",
    ),
]
SampleOption = Annotated[
    int | None,
    typer.Option(help="Analyse this many records drawn at random (seed 0) instead of all of them."),
]
MaxCombinationOption = Annotated[
    int,
    typer.Option(
        help="The largest attribute sets measured (α-distinction, α-separation) and minimal sample "
        "uniques searched, 1 to 5."
    ),
]


def describe(
    data: DataArgument,
    output: ConfigOutputOption = None,
    sample: SampleOption = None,
    max_combination: MaxCombinationOption = 3,
    summary: SummaryOption = None,
) -> None:
    """Propose what to protect: direct identifiers (by name and by value), quasi-identifiers ranked
    by α-distinction, α-separation and minimal sample uniques, sensitive attributes; a proposal to
    check, never a decision."""
    from sdckit.describe import config_text, describe_file

    with user_errors():
        started = time.perf_counter()
        outputs = Outputs([data])
        outputs.file(output, "--output", (".yaml", ".yml"))
        outputs.file(summary, "--summary", (".json",))
        described = describe_file(data, sample=sample, max_combination=max_combination)
        if output is not None:
            text = config_text(described, command=f"sdckit describe {data.name}")
            outputs.stage(output, lambda path: Path(path).write_text(text, encoding="utf-8"))
        stage_json(outputs, summary, described.figures())
        report = Report()
        report.add(_table(described))
        for line in _set_lines(described):
            report.line(line)
        analysed = f", {described.analysed:,} analysed" if described.analysed < described.records else ""
        report.line(f"{described.records:,} records{analysed} — {time.perf_counter() - started:.2f} s")
        finish(outputs, report)


def _table(described) -> object:
    """column, kind, distinct, proposed role, rank by α-separation (with its value) and the reason
    (without the figures, which the rank column and the configuration's comments give)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"Proposed roles of {described.source}", title_justify="left")
    for heading in ("column", "kind", "distinct", "proposed role", "rank (α-sep.)", "why"):
        right = heading in ("distinct", "rank (α-sep.)")
        table.add_column(heading, justify="right" if right else "left", no_wrap=heading != "why")
    for column in described.columns:
        rank = f"{column.rank} ({column.separation:.3f})" if column.rank is not None else ""
        role, _, reason = column.why.split("; ")[0].partition(": ")
        reason = reason if role in (column.role, "direct identifier") else f"{role}: {reason}"
        cells = (column.name, column.kind, f"{column.distinct:,}", column.role, rank, reason)
        table.add_row(*(Text(cell) for cell in cells))
    return table


def _set_lines(described) -> list[str]:
    from rich.markup import escape

    lines = []
    for size, sets in described.sets.items():
        shown = ", ".join(
            f"{{{', '.join(s.attributes)}}} α-distinction {s.distinction:.4g}, "
            f"α-separation {s.separation:.4g}"
            for s in sets[:3]
        )
        lines.append(escape(f"strongest sets of {size}: {shown}"))
    if described.uniques is not None:
        lines.append(
            escape(
                f"minimal sample uniques of at most {described.uniques.max_size} of the proposed "
                f"quasi-identifiers: {described.uniques.records:,} records"
            )
        )
    return lines
