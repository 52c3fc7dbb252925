"""From a file and a description of the tables to a :class:`~sdckit.tabular.base.TableProblem`: read
the microdata (or a table of cells), build the cells and relations, and flag the primary cells with
their protection levels. What ``sdckit table <method>`` and the Python API share."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.params import spell
from sdckit.table import Table
from sdckit.tabular.base import TableProblem
from sdckit.tabular.build import TableSpec, build_from_cells, build_table
from sdckit.tabular.model import TOTAL
from sdckit.tabular.rules import Rule, check_contributions, contributions_needed, primary_protection


def hierarchies_of(table: Table, dimensions: Sequence[str]) -> dict[str, Hierarchy]:
    """The hierarchies the configuration gives the dimensions (read and checked against the data)."""
    found = {}
    for name in dimensions:
        if name in table.schema.names:
            hierarchy = table.schema[name].hierarchy
            if isinstance(hierarchy, Hierarchy):
                found[name] = hierarchy
    return found


def make_problem(source: Table, spec: TableSpec, rules: Sequence[Rule] = ()) -> TableProblem:
    """Build the tables ``spec`` describes from the records of ``source`` and flag the primary
    cells under ``rules``. The hierarchies not given in ``spec`` are the configuration's."""
    hierarchies = {**hierarchies_of(source, spec.dimensions), **spec.hierarchies}
    spec = dataclasses.replace(spec, hierarchies=hierarchies, top=max(contributions_needed(rules), 1))
    if spec.value is not None and spec.value in source.data.columns:
        column = source.data.get_column(spec.value)
        if column.dtype.is_numeric():
            check_contributions(column.fill_null(0).to_numpy(), spec.value, rules)
    table = build_table(source, spec)
    return TableProblem(table=table, protection=primary_protection(table, rules), source=source, spec=spec)


def make_problem_from_cells(
    frame: pl.DataFrame,
    spec: TableSpec,
    rules: Sequence[Rule] = (),
    *,
    frequency: str | None = None,
    total_label: str = TOTAL,
    source: str = "the table",
) -> TableProblem:
    """A problem from a table of cells (one row per cell; totals checked, see
    :func:`~sdckit.tabular.build.build_from_cells`). Only the frequency rule applies: the cells carry
    no contributions."""
    dominance = [rule.name for rule in rules if rule.kind != "freq"]
    if dominance:
        raise ConfigError(
            f"rule {dominance[0]} needs each respondent's contribution: give the microdata, not a table of "
            f"cells ({spell('cells')})"
        )
    table = build_from_cells(frame, spec, frequency=frequency, total_label=total_label, source=source)
    protection = primary_protection(table, rules)
    return TableProblem(table=table, protection=protection, source=None, spec=spec, total_label=total_label)


def file_hierarchies(config: Any, dimensions: Sequence[str]) -> dict[str, Hierarchy]:
    """The hierarchies of ``dimensions`` as files named in ``config``, read without checking them
    against data (a table of cells holds subtotal codes that are not leaves)."""
    found: dict[str, Hierarchy] = {}
    if config is None:
        return found
    base = Path(config.path).parent if config.path is not None else Path()
    for attribute in config.attributes:
        if attribute.name not in dimensions or attribute.hierarchy is None:
            continue
        spec = attribute.hierarchy
        if isinstance(spec, Hierarchy):
            found[attribute.name] = spec
        elif isinstance(spec, str | Path):
            path = Path(spec) if Path(spec).is_absolute() else base / spec
            found[attribute.name] = Hierarchy.from_csv(path, attribute.name)
        else:
            raise InputError(
                f"attribute '{attribute.name}': a table of cells ({spell('cells')}) needs its hierarchy "
                "as a file "
                "(a builder such as intervals or order needs the records)"
            )
    return found
