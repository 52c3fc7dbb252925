"""The riskiest records of an original beside what each release shows of them, for the report.

A reader judges a release best on the records it had to protect: the original's records of highest
individual re-identification risk, their quasi-identifiers as they were and as every release shows
them, row by row. Only releases with the original's records in the original's order can be set
beside it (a sample or a synthetic file has other records): the others are named as left out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from sdckit.table import Role, Table

#: How many of the riskiest records the report shows.
SAMPLE_SIZE = 5


def riskiest_sample(
    original: Table,
    releases: Sequence[tuple[str, Table]],
    risk: np.ndarray | None,
    size: int = SAMPLE_SIZE,
) -> pl.DataFrame | None:
    """The ``size`` records of highest ``risk`` (ties in row order), as rows ``record`` (0-based row
    number), ``identifier`` (the value of the configuration's identifier, when it has one), ``file``
    ("original" or the release's name), then the quasi-identifiers as text; the original's row
    first, then each release's in order. None without a risk or quasi-identifiers. Releases whose
    records do not pair with the original's are left out and listed in the frame's ``left_out``
    column (the same on every row)."""
    names = [a.name for a in original.schema.with_role(Role.QUASI_IDENTIFIER)]
    if risk is None or not names or not len(risk):
        return None
    order = np.argsort(-np.asarray(risk, dtype=np.float64), kind="stable")[:size]
    columns = original.data.columns
    identifiers = [a.name for a in original.schema.with_role(Role.IDENTIFIER) if a.name in columns]
    paired = [(name, table) for name, table in releases if table.n_records == original.n_records]
    left_out = ", ".join(name for name, table in releases if table.n_records != original.n_records)
    rows = pl.Series("record", order, dtype=pl.Int64)

    def shown(name: str, table: Table) -> pl.DataFrame:
        present = [column for column in names if column in table.data.columns]
        frame = table.data[order.tolist()].select(pl.col(present).cast(pl.String))
        for column in names:
            if column not in present:  # a release that dropped the attribute shows nothing for it
                frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(column))
        columns = [rows, pl.Series("file", [name] * len(order))]
        if identifiers:
            values = original.data.get_column(identifiers[0])[order.tolist()].cast(pl.String)
            columns.insert(1, values.alias("identifier"))
        return pl.DataFrame(columns).hstack(frame.select(names))

    stacked = pl.concat([shown("original", original), *(shown(name, table) for name, table in paired)])
    position = {"original": 0, **{name: i + 1 for i, (name, _) in enumerate(paired)}}
    stacked = stacked.with_columns(
        pl.col("file").replace_strict(position, return_dtype=pl.Int64).alias("_file_order"),
        pl.int_range(pl.len()).mod(len(order)).alias("_rank"),
    )
    return (
        stacked.sort(["_rank", "_file_order"])
        .drop("_rank", "_file_order")
        .with_columns(pl.lit(left_out or None, dtype=pl.String).alias("left_out"))
    )
