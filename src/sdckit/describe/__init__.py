"""Finding what to protect: ``sdckit describe DATA`` proposes a role for every column of a data file
(direct identifiers by name and by value, quasi-identifier candidates ranked by α-distinction,
α-separation and minimal sample uniques, sensitive attributes by name) and writes a starting
configuration with the reason for each (see :mod:`sdckit.describe.proposal`).

Modules: :mod:`~sdckit.describe.names` (what a name says), :mod:`~sdckit.describe.values` (what the
values look like), :mod:`~sdckit.describe.attributes` (α figures, MSUs),
:mod:`~sdckit.describe.proposal` (the rules and the configuration).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdckit.describe.attributes import AttributeSet, MinimalUniques, alpha, attribute_sets, minimal_uniques
from sdckit.describe.proposal import ColumnProposal, Description, config_text, describe

__all__ = [
    "AttributeSet",
    "ColumnProposal",
    "Description",
    "MinimalUniques",
    "alpha",
    "attribute_sets",
    "config_text",
    "describe",
    "describe_file",
    "minimal_uniques",
]


def describe_file(path: str | Path, **options: Any) -> Description:
    """:func:`describe` of a data file read as every command reads it without a configuration: CSV
    columns as text (codes such as ``01234`` keep their leading zero), Parquet columns as typed."""
    from sdckit.config import parse_config

    table = parse_config({}).read(path)
    return describe(table.data, source=Path(path).name, **options)
