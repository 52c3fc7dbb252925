"""The identifier of each record a risk measure lists among its riskiest.

A measure's figures list its riskiest records by row number (``riskiest``: one dict per record, with
``record``, the 0-based row of the measured table). A data steward looks a record up by its
identifier, not by its row, so when the configuration has an identifier attribute (role
``identifier``) the command line and the workbench add its value to every listed record. Releases
drop identifiers, so the value is read from the table whose records were measured: the original
data (or, for a release measured as an adversary sees it, the original it is a release of).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from sdckit.table import Role, Table, value_strings


def identifier_column(table: Table | None) -> pl.Series | None:
    """The values of ``table``'s first identifier attribute that is one of its columns (None when
    it has none)."""
    if table is None:
        return None
    columns = table.data.columns
    names = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in columns]
    return table.data.get_column(names[0]) if names else None


def with_identifiers(figures: dict[str, Any], identifiers: pl.Series | None) -> dict[str, Any]:
    """``figures`` with the identifier of every riskiest record: each row of ``riskiest`` gains
    ``identifier`` (the value as text, right after ``record``; None for a missing value) and the
    figures gain ``identifier``, the attribute's name. Unchanged without identifiers, without a
    list of riskiest records, or when ``identifiers`` does not hold one value per measured record
    (rows that stand for patterns of records over partitions, whose first record alone would be
    named)."""
    rows = figures.get("riskiest")
    if identifiers is None or not isinstance(rows, list) or not rows:
        return figures
    if not all(isinstance(row, dict) and "record" in row and "records" not in row for row in rows):
        return figures
    records = [int(row["record"]) for row in rows]
    if max(records) >= len(identifiers):
        return figures
    values = value_strings(identifiers.gather(records)).to_list()
    listed = [
        {"record": row["record"], "identifier": value, **{k: v for k, v in row.items() if k != "record"}}
        for row, value in zip(rows, values, strict=True)
    ]
    return {**figures, "identifier": identifiers.name, "riskiest": listed}
