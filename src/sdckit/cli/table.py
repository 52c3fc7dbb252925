"""``sdckit table METHOD``: tabular data protection, one command per registered table method
(:data:`sdckit.tabular.base.TABLE_METHODS`), its own options made from the method's parameters object.

Every command builds the same tables from the same options — ``--rows``/``--cols``/``--layers`` (or
``--table`` once per linked table, or ``--problem`` a problem file of linked tables,
:mod:`sdckit.tabular.problem_file`), ``--value`` for a magnitude table, hierarchies from the
configuration — flags the primary cells with ``--rule`` and ``--min-frequency``, runs the method, and
writes the protected table in long form (``--output``), an HTML rendering (``--html``), τ-Argus's
files for the same problem (``--argus``) and the figures (``--summary``). Parse, run, report, write.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from sdckit.cli._common import (
    DataArgument,
    QuietOption,
    Report,
    SummaryOption,
    finish,
    progress_bar,
    stage_json,
    stage_messages,
    stage_table,
    user_errors,
)
from sdckit.cli._options import field_parameter, owner_naming_command
from sdckit.cli._outputs import Outputs
from sdckit.params import option_name
from sdckit.tabular.base import TABLE_METHODS, TableMethodSpec, run_table_method

app = typer.Typer(
    help="Protect tables built from microdata: sdckit table METHOD --help.",
    no_args_is_help=True,
)
PANEL = "method options"
TABLE_PANEL = "table"
RULE_PANEL = "primary rules"
OUTPUT_SUFFIXES = (".csv", ".tsv", ".parquet")
# Their attacker's audit solves LPs with HiGHS (the 'tables' extra); round needs it for the integer
# program of a table whose LP relaxation is not integral only, and says so then (sdckit.tabular._highs).
NEEDS_HIGHS = ("suppress", "audit")


def _option(*names: str, help: str, panel: str = TABLE_PANEL, **options: Any) -> Any:
    return typer.Option(*names, help=help, rich_help_panel=panel, **options)


SHARED: dict[str, tuple[Any, Any]] = {
    "config": (
        None,
        Annotated[
            Path | None,
            _option("--config", "-c", help="YAML configuration: hierarchies, weights, missing values."),
        ],
    ),
    "rows": (
        None,
        Annotated[str | None, _option("--rows", help="Row dimension(s): attribute names, comma-separated.")],
    ),
    "cols": (None, Annotated[str | None, _option("--cols", help="Column dimension(s).")]),
    "layers": (None, Annotated[str | None, _option("--layers", help="Layer dimension(s).")]),
    "tables": (
        None,
        Annotated[
            list[str] | None,
            _option(
                "--table",
                help="A table's dimensions, comma-separated; repeat for linked tables sharing attributes.",
            ),
        ],
    ),
    "problem_file": (
        None,
        Annotated[
            Path | None,
            _option(
                "--problem",
                help="A problem file (YAML): linked tables, each with its dimensions and own hierarchies.",
            ),
        ],
    ),
    "value": (
        None,
        Annotated[
            str | None,
            _option(
                "--value", help="Numeric attribute summed: a magnitude table (default: a frequency table)."
            ),
        ],
    ),
    "holding": (
        None,
        Annotated[
            str | None,
            _option(
                "--holding",
                help="Attribute identifying a contributor (enterprise) whose records are one respondent.",
            ),
        ],
    ),
    "cells": (
        False,
        Annotated[
            bool, _option("--cells", help="DATA is a table of cells (one row per cell), not microdata.")
        ],
    ),
    "frequency": (
        None,
        Annotated[
            str | None,
            _option("--frequency", help="With --cells (required there): the column of each cell's count."),
        ],
    ),
    "total_label": (
        "Total",
        Annotated[str, _option("--total-label", help="How margins are labelled in files read and written.")],
    ),
    "rule": (
        None,
        Annotated[
            list[str] | None,
            _option(
                "--rule",
                help='A primary rule: "p=10", "p=25,q=50", "n=2,k=85", "freq=3,ratio=0.1"; repeatable.',
                panel=RULE_PANEL,
            ),
        ],
    ),
    "min_frequency": (
        None,
        Annotated[
            int | None,
            _option(
                "--min-frequency",
                help="Minimum frequency rule: cells with 0 < contributors < N.",
                panel=RULE_PANEL,
            ),
        ],
    ),
    "status": (
        None,
        Annotated[
            Path | None,
            _option(
                "--status",
                help="Cell statuses set by hand: the dimension columns and a status column, publish (z), "
                "suppress (u) or published (already published elsewhere).",
                panel=RULE_PANEL,
            ),
        ],
    ),
    "output": (
        None,
        Annotated[
            Path | None,
            typer.Option("--output", "-o", help="The protected table in long form: .csv, .tsv or .parquet."),
        ],
    ),
    "html": (
        None,
        Annotated[
            Path | None,
            typer.Option(
                "--html", help="An HTML rendering of the table, primary and secondary cells coloured."
            ),
        ],
    ),
    "argus": (
        None,
        Annotated[
            Path | None,
            typer.Option(
                "--argus", help="A folder for τ-Argus's files of the same problem (.tab, .rda, .hrc, .arb)."
            ),
        ],
    ),
    "summary": (None, SummaryOption),
    "quiet": (False, QuietOption),
}

TableCommand = owner_naming_command(TABLE_METHODS)


def make_command(spec: TableMethodSpec) -> None:
    fields = spec.params.model_fields

    def command(**values: Any) -> None:
        data = values.pop("data")
        shared = {name: values.pop(name) for name in SHARED}
        given = {name: value for name, value in values.items() if value is not None}
        protect_table(spec, data, given, **shared)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter("data", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=DataArgument)]
    parameters += [
        inspect.Parameter(name, keyword, default=default, annotation=annotation)
        for name, (default, annotation) in SHARED.items()
    ]
    parameters += [field_parameter(name, field, PANEL) for name, field in fields.items()]
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__doc__ = f"{spec.help}\n\n{(spec.params.__doc__ or '').strip()}"
    app.command(spec.name, cls=TableCommand, help=command.__doc__, short_help=spec.help)(command)


def _names(text: str | None, option: str) -> list[str]:
    from sdckit.errors import ConfigError

    if text is None:
        return []
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise ConfigError(f"{option} {text!r}: an attribute name is empty")
    return names


def table_dimensions(
    rows: str | None, cols: str | None, layers: str | None, tables: list[str] | None
) -> tuple[tuple[str, ...], ...]:
    """The dimensions of each table from ``--rows/--cols/--layers`` or the repeated ``--table``."""
    from sdckit.errors import ConfigError

    single = [*_names(rows, "--rows"), *_names(cols, "--cols"), *_names(layers, "--layers")]
    if tables and single:
        raise ConfigError("give the dimensions either with --rows/--cols/--layers or with --table, not both")
    if tables:
        return tuple(tuple(_names(text, "--table")) for text in tables)
    if cols is not None and rows is None or layers is not None and rows is None:
        raise ConfigError("--cols and --layers need --rows")
    if not single:
        raise ConfigError("name the table's dimensions: --rows A [--cols B] [--layers C], or --table A,B")
    return (tuple(single),)


def _rules(spec: TableMethodSpec, rule: list[str] | None, min_frequency: int | None) -> list[Any]:
    from sdckit.errors import ConfigError
    from sdckit.tabular.rules import Rule

    rules = [Rule.parse(text) for text in rule or []]
    if min_frequency is not None:
        rules.append(Rule.of("freq", option="--min-frequency", freq=float(min_frequency)))
    if rules and not spec.needs_primary and spec.name != "audit":
        option = "--rule" if rule else "--min-frequency"
        raise ConfigError(f"{option}: {spec.name} does not use primary cells (it treats every cell alike)")
    if not rules and spec.needs_primary and spec.name != "audit":
        raise ConfigError(
            f'{spec.name} protects primary cells: give a rule (--rule "p=10", --min-frequency 3)'
        )
    return rules


def _require_extra(spec: TableMethodSpec) -> None:
    """The methods that solve LPs or MILPs need HiGHS (the 'tables' extra): said before any work."""
    if spec.name in NEEDS_HIGHS:
        from sdckit._extras import require

        require("tables", "highspy", feature=f"sdckit table {spec.name}")


def protect_table(
    spec: TableMethodSpec,
    data: Path,
    given: dict[str, Any],
    *,
    config: Path | None,
    rows: str | None,
    cols: str | None,
    layers: str | None,
    tables: list[str] | None,
    problem_file: Path | None,
    value: str | None,
    holding: str | None,
    cells: bool,
    frequency: str | None,
    total_label: str,
    rule: list[str] | None,
    min_frequency: int | None,
    status: Path | None,
    output: Path | None,
    html: Path | None,
    argus: Path | None,
    summary: Path | None,
    quiet: bool,
) -> None:
    """Parse, build, run, report, write: the body every table command shares."""
    with user_errors():
        _require_extra(spec)
        fields = spec.params.model_fields
        params = spec.params.parse(
            given, spell=lambda name: option_name(name, fields.get(name)), method=spec.name
        )
        loaded = _load_problem_file(problem_file, rows, cols, layers, tables, argus)
        dimensions = loaded.tables if loaded else table_dimensions(rows, cols, layers, tables)
        value, holding = _file_value_holding(loaded, value, holding)
        rules = _rules(spec, rule, min_frequency)
        _check_source(cells, frequency, holding)
        _check_status(spec, status)
        inputs = [data, config, status, *(v for v in given.values() if isinstance(v, Path))]
        inputs += [problem_file, *loaded.files] if loaded else []
        outputs = _declare_outputs(inputs, output, html, summary, argus)
        started = time.perf_counter()
        stage = stage_messages(quiet, started)
        problem, records = _problem(
            data, config, dimensions, value, holding, cells, frequency, total_label, rules, loaded
        )
        if status is not None:
            from sdckit.tabular.statuses import apply_statuses, read_statuses

            problem = apply_statuses(problem, read_statuses(problem, status))
        if stage:
            stage(
                f"{problem.table.n_cells:,} cells, {problem.table.n_relations:,} relations, "
                f"{int(problem.protection.primary.sum()):,} primary"
            )
        from sdckit.context import Context

        with progress_bar(not quiet, f"table {spec.name}") as progress:
            result = run_table_method(spec, problem, params, Context(progress=progress, stage=stage))
        figures = spec.summary(result)
        elapsed = time.perf_counter() - started
        document = _document(spec, data, params, dimensions, value, rules, result, figures, elapsed)
        if loaded is not None:
            document["table"]["names"], document["problem"] = list(loaded.names), str(problem_file)
        report = _report(spec, data, problem, records, figures, elapsed)
        _stage_outputs(outputs, spec, result, rules, data, output, html, argus, total_label)
        stage_json(outputs, summary, document)
        finish(outputs, report, spec.violation(result, figures), allowed=spec.name == "audit")


def _report(
    spec: TableMethodSpec, data: Path, problem: Any, records: int | None, figures: dict, elapsed: float
) -> Report:
    report = Report()
    table, primary = problem.table, int(problem.protection.primary.sum())
    source = f"{records:,} records" if records is not None else "a table of cells"
    report.line(
        f"[bold]{data.name}[/]: {source} → {table.n_cells:,} cells ({table.kind}), "
        f"{primary:,} primary — {spec.name} in {elapsed:.2f} s"
    )
    for line in spec.report(figures):
        report.line(line)
    return report


def _check_status(spec: TableMethodSpec, status: Path | None) -> None:
    from sdckit.errors import ConfigError

    if status is not None and not spec.statuses:
        raise ConfigError(
            f"--status: {spec.name} publishes every cell: cell statuses apply to suppress and audit"
        )


def _declare_outputs(
    inputs: list[Path | None],
    output: Path | None,
    html: Path | None,
    summary: Path | None,
    argus: Path | None,
) -> Outputs:
    outputs = Outputs(inputs)
    outputs.file(output, "--output", OUTPUT_SUFFIXES)
    outputs.file(html, "--html", (".html", ".htm"))
    outputs.file(summary, "--summary", (".json",))
    if argus is not None:
        outputs.directory(argus, "--argus")
    return outputs


def _check_source(cells: bool, frequency: str | None, holding: str | None) -> None:
    from sdckit.errors import ConfigError

    if frequency is not None and not cells:
        raise ConfigError("--frequency names the counts of a table of cells: it needs --cells")
    if cells and holding is not None:
        raise ConfigError("--holding needs the microdata: a table of cells (--cells) has no contributors")


def _document(
    spec: TableMethodSpec,
    data: Path,
    params: Any,
    dimensions: tuple[tuple[str, ...], ...],
    value: str | None,
    rules: list[Any],
    result: Any,
    figures: dict[str, Any],
    elapsed: float,
) -> dict[str, Any]:
    """The ``--summary`` document: what was built and asked, and the method's figures."""
    table, primary = result.table, result.protection.primary
    return {
        "data": str(data),
        "method": spec.name,
        "parameters": params.to_recipe(),
        "table": {
            "tables": [list(dims) for dims in dimensions],
            "kind": table.kind,
            "value": value,
            "cells": table.n_cells,
            "relations": table.n_relations,
        },
        "rules": [r.name for r in rules],
        "primary_cells": int(primary.sum()),
        "primary_value": float(table.values[primary].sum()),
        **figures,
        "elapsed_seconds": round(elapsed, 3),
    }


def _stage_outputs(
    outputs: Outputs,
    spec: TableMethodSpec,
    result: Any,
    rules: list[Any],
    data: Path,
    output: Path | None,
    html: Path | None,
    argus: Path | None,
    total_label: str,
) -> None:
    """The long form, the HTML page and τ-Argus's files, written when the run succeeds."""
    if output is not None:
        stage_table(outputs, output, _relabel(result.frame(), result.table.dimensions, total_label))
    if html is not None:
        from sdckit.tabular.render import write_html

        outputs.stage(html, lambda temporary: write_html(result, temporary, data.name))
    if argus is not None:
        from sdckit.tabular.argus import write_argus

        status = result.status if spec.audits or spec.name == "audit" else None
        problem = result.problem
        outputs.stage(
            argus,
            lambda folder: write_argus(problem, rules, folder, data.stem, method=spec.name, status=status),
        )


def _relabel(frame: Any, dimensions: tuple[str, ...], total_label: str) -> Any:
    import polars as pl

    from sdckit.tabular.model import TOTAL

    if total_label == TOTAL:
        return frame
    return frame.with_columns(
        pl.when(pl.col(name) == TOTAL).then(pl.lit(total_label)).otherwise(pl.col(name)).alias(name)
        for name in dimensions
    )


def _problem(
    data: Path,
    config: Path | None,
    dimensions: tuple[tuple[str, ...], ...],
    value: str | None,
    holding: str | None,
    cells: bool,
    frequency: str | None,
    total_label: str,
    rules: list[Any],
    loaded: Any = None,
) -> tuple[Any, int | None]:
    """The problem to protect, and the number of records it was built from (None for cells);
    ``loaded``: the problem file (:class:`~sdckit.tabular.problem_file.ProblemFile`) the tables come from."""
    import dataclasses

    from sdckit.config import load_config, parse_config
    from sdckit.tabular.build import TableSpec
    from sdckit.tabular.problem import file_hierarchies, make_problem, make_problem_from_cells

    settings = load_config(config) if config is not None else parse_config({})
    weights = settings.data.weights
    spec = TableSpec(tables=dimensions, value=value, holding=holding, weights=weights)
    if loaded is not None:
        spec = loaded.spec(value=value, holding=holding, weights=weights)
    if cells:
        from sdckit.io import read_table

        frame = read_table(data, delimiter=settings.data.delimiter).data
        if loaded is not None:
            loaded.check_columns(frame.columns, str(data))
        names = {name for dims in dimensions for name in dims}
        hierarchies = file_hierarchies(settings, sorted(names))
        spec = dataclasses.replace(spec, hierarchies=hierarchies, weights=None)
        problem = make_problem_from_cells(
            frame, spec, rules, frequency=frequency, total_label=total_label, source=str(data)
        )
        return problem, None
    # A table counts and sums records and writes none back: a column named only by the command
    # (--value turnover) is read as numbers, as read_table reads it.
    source = settings.read(data, keep_undescribed=False)
    if loaded is not None:
        loaded.check_columns(source.data.columns, str(data))
    problem = make_problem(source, spec, rules)
    return dataclasses.replace(problem, total_label=total_label), source.n_records


def _load_problem_file(
    path: Path | None,
    rows: str | None,
    cols: str | None,
    layers: str | None,
    tables: list[str] | None,
    argus: Path | None,
) -> Any:
    """The problem file of ``--problem`` (None without one): refused together with the options it
    replaces, and with ``--argus`` when a table has hierarchies of its own."""
    from sdckit.errors import ConfigError

    if path is None:
        return None
    given = [
        option
        for option, value in (("--rows", rows), ("--cols", cols), ("--layers", layers), ("--table", tables))
        if value
    ]
    if given:
        raise ConfigError(
            f"--problem and {', '.join(given)}: give the tables either in the problem file or with "
            "--rows/--cols/--layers/--table, not both"
        )
    from sdckit.tabular.problem_file import load_problem

    loaded = load_problem(path)
    if argus is not None and loaded.own_hierarchies:
        raise ConfigError(
            f"--argus: the tables of {path} see a dimension through hierarchies of their own, which "
            "τ-Argus's files of linked tables cannot express (one hierarchy per variable)"
        )
    return loaded


def _file_value_holding(loaded: Any, value: str | None, holding: str | None) -> tuple[str | None, str | None]:
    """``--value`` and ``--holding``, or the problem file's ``value`` and ``holding``: not both."""
    from sdckit.errors import ConfigError

    if loaded is None:
        return value, holding
    for option, key, given, written in (
        ("--value", "value", value, loaded.value),
        ("--holding", "holding", holding, loaded.holding),
    ):
        if given is not None and written is not None:
            raise ConfigError(f"{option} {given} and {key}: {written} in {loaded.path}: give the {key} once")
    return value if value is not None else loaded.value, holding if holding is not None else loaded.holding


for _spec in TABLE_METHODS:  # imports each method's module (the registry discovers them)
    make_command(_spec)
