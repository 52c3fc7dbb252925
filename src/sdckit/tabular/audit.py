"""``sdckit table audit``: the attacker's view of a published suppression pattern, whoever made it.

The pattern is a file with one row per cell — the dimensions' labels (margins labelled as the table's
total, ``Total`` by default) and a ``status`` column — as ``sdckit table suppress`` writes it, or as
another tool does (sdcTable's ``sdcStatus`` codes ``s``/``z`` published, ``u`` primary, ``x``
secondary; τ-Argus's ``S``/``P`` safe, ``U`` unsafe, ``M``/``D`` secondary). A file without a status
column marks suppressed cells by an empty ``released`` value. Cells of the table the file does not
list are published.

The primary cells are those the rules flag on the data (``--rule``, ``--min-frequency``), with their
protection levels, and those the pattern marks primary (with the levels of its ``upper_protection`` and
``lower_protection`` columns when it has them, else 0: then only exact disclosure is checked). The
attacker LPs (:func:`sdckit.tabular.attacker.audit`, SPEC §8.3) give each suppressed cell's feasibility
interval; the audit fails for a sensitive cell that is published, a primary cell whose interval does
not reach its protection levels, and any suppressed cell whose interval is a single value.

The respondent attacker (:mod:`sdckit.tabular.respondents`) is run too (``--singletons protect``, the
default, and ``--coalition N``): a primary cell the outside attacker cannot pin down may still be
pinned down by a single contributor of another suppressed cell (a singleton knows its cell), a
holding, or a coalition of the largest contributors of a cell; each failure names the attacker that
breaks it ("outside attacker", or the respondent).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.context import Context
from sdckit.errors import InputError
from sdckit.params import MethodParams, spell
from sdckit.table import value_strings
from sdckit.tabular.base import TableProblem, TableResult, pattern_status, register_table_method
from sdckit.tabular.model import PRIMARY, TOTAL
from sdckit.tabular.respondents import Coalition, Singletons

_PUBLISHED = {"published", "safe", "s", "z", "p"}
_PRIMARY = {"primary", "u", "unsafe"}
_SECONDARY = {"secondary", "x", "m", "d", "suppressed"}


class AuditParams(MethodParams):
    """Audit a published suppression pattern against the attacker's linear programs."""

    pattern: Path = Field(description="The published pattern: one row per cell with its labels and a status.")
    status_column: str = Field("status", description="The column of the pattern holding each cell's status.")
    singletons: Singletons = Field(
        "protect",
        description="protect: also audit against each single contributor of a suppressed cell (a "
        "singleton knows its cell; with --holding, a holding its cells); none: the outside attacker only.",
    )
    coalition: Coalition = Field(
        0,
        description="Also audit against the N largest contributors of every suppressed cell together "
        "(0: only the n of an (n,k)-dominance rule, on the cells it flagged).",
    )


def read_pattern(problem: TableProblem, params: AuditParams) -> tuple[np.ndarray, np.ndarray, pl.DataFrame]:
    """``(suppressed, marked_primary, matched)`` per cell of the problem's table from the pattern file."""
    from sdckit.io import read_table

    table = problem.table
    label = str(params.pattern)
    frame = read_table(params.pattern).data
    dims = list(table.dimensions)
    missing = [name for name in dims if name not in frame.columns]
    if missing:
        raise InputError(
            f"{label}: the pattern has no column '{missing[0]}' (columns: {', '.join(frame.columns)})"
        )
    relabel = [
        pl.when(value_strings(frame.get_column(n)) == problem.total_label)
        .then(pl.lit(TOTAL))
        .otherwise(value_strings(frame.get_column(n)))
        .alias(n)
        for n in dims
    ]
    frame = frame.with_columns(relabel).with_row_index("_line", offset=2)
    named = "status_column" in params.model_fields_set
    if params.status_column not in frame.columns and (named or "released" not in frame.columns):
        # a column named by the caller must be there: never the 'released' fallback in its place
        fallback = "" if named else " (or a 'released' column, empty where a cell is suppressed)"
        columns = ", ".join(c for c in frame.columns if c != "_line")
        raise InputError(
            f"{label}: the pattern has no column '{params.status_column}' "
            f"({spell('status_column')}){fallback}; its columns are {columns}"
        )
    if params.status_column in frame.columns:
        status = value_strings(frame.get_column(params.status_column)).str.strip_chars().str.to_lowercase()
        known = status.is_in(list(_PUBLISHED | _PRIMARY | _SECONDARY))
        if not bool(known.all()):
            bad = int(np.flatnonzero(~known.fill_null(False).to_numpy())[0])
            raise InputError(
                f"{label}, line {bad + 2}: unknown status {frame.get_column(params.status_column)[bad]!r} "
                "(published/primary/secondary, sdcTable's s/u/x/z or τ-Argus's S/U/M)"
            )
        suppressed = ~status.is_in(list(_PUBLISHED))
        primary = status.is_in(list(_PRIMARY))
    else:
        suppressed = frame.get_column("released").is_null()
        primary = pl.Series([False] * frame.height)
    marks = frame.select(*dims, "_line").with_columns(_suppressed=suppressed, _primary=primary)
    duplicated = marks.filter(marks.select(dims).is_duplicated())
    if duplicated.height:
        row = duplicated.row(0, named=True)
        cell = ", ".join(f"{n}={row[n]}" for n in dims)
        raise InputError(f"{label}, line {row['_line']}: the cell {cell} is listed twice")
    cells = table.cells.with_row_index("_cell")
    unknown = marks.join(cells, on=dims, how="anti")
    if unknown.height:
        row = unknown.row(0, named=True)
        cell = ", ".join(f"{n}={row[n]}" for n in dims)
        raise InputError(
            f"{label}, line {row['_line']}: the table has no cell {cell} (its margins are labelled "
            f"'{problem.total_label}'; see {spell('total_label')})"
        )
    matched = cells.join(marks, on=dims, how="left").sort("_cell")
    suppressed_mask = matched.get_column("_suppressed").fill_null(False).to_numpy()
    primary_mask = matched.get_column("_primary").fill_null(False).to_numpy()
    return (
        suppressed_mask,
        primary_mask,
        matched.join(frame.drop(params.status_column, strict=False), on=dims, how="left"),
    )


def run(problem: TableProblem, params: AuditParams, context: Context) -> TableResult:
    from sdckit.tabular.attacker import audit

    suppressed, marked, matched = read_pattern(problem, params)
    protection = problem.protection
    sensitive_published = protection.primary & ~suppressed
    extra = marked & ~protection.primary
    if extra.any():
        protection = dataclasses.replace(
            protection,
            primary=protection.primary | marked,
            upper=protection.upper.copy(),
            lower=protection.lower.copy(),
            rule=protection.rule.copy(),
        )
        for column, levels in (
            ("upper_protection", protection.upper),
            ("lower_protection", protection.lower),
        ):
            if column in matched.columns:
                given = matched.get_column(column).cast(pl.Float64, strict=False).fill_null(0.0).to_numpy()
                levels[extra] = np.maximum(given[extra], 0.0)
        protection.rule[extra] = "pattern"
    problem = dataclasses.replace(problem, protection=protection)
    result = audit(problem.table, suppressed, protection)
    forced = (
        problem.statuses.publish & suppressed
        if problem.statuses is not None
        else np.zeros(problem.table.n_cells, dtype=bool)
    )
    unprotected = protection.primary & suppressed & ~result.protected
    insiders = _respondent_failures(problem, params, suppressed, protection, result)
    by_respondent = np.zeros(problem.table.n_cells, dtype=bool)
    for failure in insiders:
        by_respondent[failure.cell] = True
    by_respondent &= ~unprotected
    released = np.where(suppressed, np.nan, problem.table.values)
    status = pattern_status(protection, suppressed)
    figures = {
        "cells": problem.table.n_cells,
        "suppressed_cells": int(suppressed.sum()),
        "primary_cells": int(protection.primary.sum()),
        "sensitive_published": int(sensitive_published.sum()),
        "unprotected_cells": int(unprotected.sum()),
        "disclosed_cells": int(result.disclosed.sum()),
        "respondent_unprotected_cells": int(by_respondent.sum()),
        "forced_suppressed_cells": int(forced.sum()),
        "passed": bool(
            not sensitive_published.any()
            and not unprotected.any()
            and not result.disclosed.any()
            and not by_respondent.any()
            and not forced.any()
        ),
        "failures": [
            _failure(problem, int(cell), result, sensitive_published)
            for cell in np.flatnonzero(sensitive_published | unprotected | result.disclosed)[:20]
        ]
        + [_insider_failure(problem, protection, failure) for failure in insiders[:20]]
        + [
            f"{problem.table.label(int(cell))}: must be published (status publish) but is suppressed"
            for cell in np.flatnonzero(forced)[:20]
        ],
    }
    status[sensitive_published] = PRIMARY
    return TableResult("audit", problem, released, status, figures, result, params)


def _respondent_failures(
    problem: TableProblem, params: AuditParams, suppressed: np.ndarray, protection: Any, outside: Any
) -> list[Any]:
    """The respondent attacker's failures (cells the outside attacker already breaks left out)."""
    from sdckit.tabular.respondents import (
        holding_respondents,
        respondent_attack,
        respondents,
        with_contributions,
    )

    if params.singletons == "none" and params.coalition == 0 and not protection.rule.size:
        return []
    table = with_contributions(problem.source, problem.spec, problem.table, params.coalition)
    holdings = (
        holding_respondents(problem.source, problem.spec, table) if params.singletons == "protect" else []
    )
    found = respondents(
        table,
        protection,
        suppressed,
        singletons=params.singletons,
        coalition=params.coalition,
        holdings=holdings,
    )
    return respondent_attack(table, suppressed, protection, found, outside.low, outside.high)


def _insider_failure(problem: TableProblem, protection: Any, failure: Any) -> str:
    value = problem.table.values[failure.cell]
    return (
        f"{problem.table.label(failure.cell)}: value {value:g}, {failure.respondent} narrows it to "
        f"[{failure.low:g}, {failure.high:g}], short of [{value - protection.lower[failure.cell]:g}, "
        f"{value + protection.upper[failure.cell]:g}]"
    )


def _failure(problem: TableProblem, cell: int, result: Any, published: np.ndarray) -> str:
    table, protection = problem.table, problem.protection
    label = table.label(cell)
    if published[cell]:
        return f"{label}: sensitive ({protection.rule[cell]}) but published"
    low, high = result.low[cell], result.high[cell]
    value = table.values[cell]
    if result.disclosed[cell]:
        return f"{label}: exactly disclosed ({value:g})"
    return (
        f"{label}: value {value:g}, the attacker's interval [{low:g}, {high:g}] does not reach "
        f"[{value - protection.lower[cell]:g}, {value + protection.upper[cell]:g}]"
    )


def summary(result: TableResult) -> dict[str, Any]:
    return dict(result.figures)


def report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"{figures['suppressed_cells']:,} of {figures['cells']:,} cells suppressed, "
        f"{figures['primary_cells']:,} primary"
    ]
    if figures["passed"]:
        lines.append("[green]audit passed[/]: every primary cell's interval covers its protection interval")
    else:
        lines.append(
            f"[red]audit failed[/]: {figures['sensitive_published']} sensitive published, "
            f"{figures['unprotected_cells']} under-protected (outside attacker), "
            f"{figures.get('respondent_unprotected_cells', 0)} under-protected against a respondent, "
            f"{figures['disclosed_cells']} exactly disclosed"
        )
        lines += [f"  {failure}" for failure in figures["failures"]]
    return lines


def violation(result: TableResult, figures: dict[str, Any]) -> str | None:
    if figures["passed"]:
        return None
    count = (
        figures["sensitive_published"]
        + figures.get("forced_suppressed_cells", 0)
        + figures["unprotected_cells"]
        + figures.get("respondent_unprotected_cells", 0)
        + figures["disclosed_cells"]
    )
    return f"the pattern fails the audit for {count} cell{'s' if count != 1 else ''}"


register_table_method(
    "audit",
    AuditParams,
    summary=summary,
    report=report,
    violation=violation,
    statuses=True,
    help="Audit a published suppression pattern: each suppressed cell's feasibility interval.",
)(run)

__all__ = ["AuditParams", "read_pattern", "run"]
