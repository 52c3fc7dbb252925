"""Cell statuses a statistical office sets by hand (``--status FILE``; issue 31): cells that must be
published, cells that must be suppressed, and cells already published elsewhere.

The file has one row per cell it sets: the table's dimension columns (margins labelled as the
table's total, ``Total`` by default) and a ``status`` column:

============================  =============================================================
status                        meaning
============================  =============================================================
``publish`` (sdcTable ``z``)  must not be suppressed: never chosen as a secondary cell
``suppress`` (``u``)          must be suppressed: a primary cell (its rule's levels, or none:
                              then it only must not be recomputable exactly)
``published`` (``p``)         already published elsewhere: its value is known to everyone,
                              so it is never suppressed and never counted on as cover
============================  =============================================================

How methods honour them (:func:`apply_statuses`): a cell to publish or already published gets its
value as its a-priori bounds (``lower = upper = value``): the attacker's linear programs treat it as
known even where a pattern suppresses it, the suppression heuristic never picks it, the optimal
algorithm fixes its variable to 0; a cell to suppress becomes primary. A primary cell that must be
published, or that is already published, cannot be protected: refused, naming the cells. The audit
(``sdckit table audit``) also fails a pattern that suppresses a cell to publish or publishes a cell to
suppress. Methods that publish every cell keep the cells to publish and those already published
unchanged (:func:`for_published_tables`): CTA through the same bounds (it cannot move them), the cell
key method by publishing them without noise, controlled rounding by refusing one that is not already a
multiple of the base (a multiple rounds to itself); they refuse cells to suppress.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import InputError
from sdckit.table import value_strings
from sdckit.tabular.model import TOTAL

#: The spellings of each status (lower case).
PUBLISH = {"publish", "z", "force-publish"}
SUPPRESS = {"suppress", "u", "force-suppress"}
PUBLISHED = {"published", "p", "published-elsewhere"}


@dataclass(frozen=True)
class CellStatuses:
    """Per cell: ``publish`` (must be published), ``suppress`` (must be suppressed), ``published``
    (already published elsewhere); ``source``: the file, for messages."""

    publish: np.ndarray
    suppress: np.ndarray
    published: np.ndarray
    source: str = ""

    @property
    def fixed(self) -> np.ndarray:
        """Cells whose value the attacker knows or will know: to publish, or published."""
        return self.publish | self.published


def read_statuses(problem: Any, path: str | Path, column: str = "status") -> CellStatuses:
    """The statuses of ``path`` matched to the cells of ``problem.table`` by their labels."""
    from sdckit.io import read_table

    table = problem.table
    label = str(path)
    frame = read_table(path).data
    dims = list(table.dimensions)
    missing = [name for name in [*dims, column] if name not in frame.columns]
    if missing:
        raise InputError(f"{label}: no column '{missing[0]}' (columns: {', '.join(frame.columns)})")
    text = frame.select(
        *[
            pl.when(value_strings(frame.get_column(name)) == problem.total_label)
            .then(pl.lit(TOTAL))
            .otherwise(value_strings(frame.get_column(name)))
            .alias(name)
            for name in dims
        ],
        value_strings(frame.get_column(column)).str.strip_chars().str.to_lowercase().alias("_status"),
    ).with_row_index("_line", offset=2)
    known = PUBLISH | SUPPRESS | PUBLISHED
    bad = text.filter(~pl.col("_status").is_in(sorted(known)) | pl.col("_status").is_null())
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(
            f"{label}:{row['_line']}: unknown status {row['_status']!r}: write publish (z), suppress (u) "
            "or published (already published elsewhere)"
        )
    cells = table.cells.select(dims).with_row_index("_cell").with_columns(pl.col(dims).cast(pl.String))
    matched = text.join(cells, on=dims, how="left")
    unmatched = matched.filter(pl.col("_cell").is_null())
    if unmatched.height:
        row = unmatched.row(0, named=True)
        where = ", ".join(f"{name}={row[name]}" for name in dims)
        raise InputError(f"{label}:{row['_line']}: no cell {where} in the table")
    twice = matched.group_by("_cell").agg(pl.len().alias("n"), pl.col("_line").min()).filter(pl.col("n") > 1)
    if twice.height:
        row = twice.sort("_line").row(0, named=True)
        raise InputError(f"{label}:{row['_line']}: cell {table.label(int(row['_cell']))} is given twice")
    n = table.n_cells
    out = {name: np.zeros(n, dtype=bool) for name in ("publish", "suppress", "published")}
    for name, spellings in (("publish", PUBLISH), ("suppress", SUPPRESS), ("published", PUBLISHED)):
        chosen = matched.filter(pl.col("_status").is_in(sorted(spellings))).get_column("_cell").to_numpy()
        out[name][chosen.astype(np.int64)] = True
    return CellStatuses(**out, source=label)


def apply_statuses(problem: Any, statuses: CellStatuses) -> Any:
    """``problem`` with the statuses honoured: the cells to publish or already published known to the
    attacker (their value as bounds), the cells to suppress primary; a primary cell that must be
    published or is published already is refused, naming the cells."""
    table, protection = problem.table, problem.protection
    conflict = np.flatnonzero(protection.primary & statuses.fixed)
    if conflict.size:
        names = "; ".join(table.label(int(i)) for i in conflict[:5])
        more = f" and {conflict.size - 5} more" if conflict.size > 5 else ""
        raise InputError(
            f"{statuses.source}: {conflict.size} sensitive cell{'s' if conflict.size != 1 else ''} must be "
            f"published or {'are' if conflict.size != 1 else 'is'} already published, so cannot be "
            f"protected: {names}{more}"
        )
    lower, upper = table.lower.copy(), table.upper.copy()
    fixed = statuses.fixed
    lower[fixed] = table.values[fixed]
    upper[fixed] = table.values[fixed]
    primary = protection.primary | statuses.suppress
    added = statuses.suppress & ~protection.primary
    rule = protection.rule.copy()
    rule[added] = "status"
    protection = dataclasses.replace(
        protection,
        primary=primary,
        upper=protection.upper.copy(),
        lower=protection.lower.copy(),
        sliding=protection.sliding.copy(),
        rule=rule,
    )
    return dataclasses.replace(
        problem,
        table=dataclasses.replace(table, lower=lower, upper=upper),
        protection=protection,
        statuses=statuses,
    )


def for_published_tables(problem: Any, method: str, base: float | None = None) -> np.ndarray:
    """The cells a method that publishes every cell (rounding, CTA, the cell key method) must publish
    unchanged: those to publish and those already published. Refuses cells to suppress (such a method
    suppresses none) and, for rounding to ``base``, a cell to keep that is not a multiple of it."""
    statuses = problem.statuses
    n = problem.table.n_cells
    if statuses is None:
        return np.zeros(n, dtype=bool)
    table = problem.table
    if statuses.suppress.any():
        cell = int(np.flatnonzero(statuses.suppress)[0])
        raise InputError(
            f"{statuses.source}: {method} publishes every cell and suppresses none: status suppress "
            f"cannot be honoured ({table.label(cell)}); use suppress"
        )
    fixed = statuses.fixed
    if base is not None:
        off = np.flatnonzero(fixed & (np.abs(table.values / base - np.round(table.values / base)) > 1e-9))
        if off.size:
            names = "; ".join(f"{table.label(int(i))} = {table.values[i]:g}" for i in off[:5])
            raise InputError(
                f"{statuses.source}: {off.size} cell{'s' if off.size != 1 else ''} to publish unchanged "
                f"{'are' if off.size != 1 else 'is'} not a multiple of the rounding base {base:g}: {names}"
            )
    return fixed


__all__ = ["CellStatuses", "apply_statuses", "for_published_tables", "read_statuses"]
