"""What the utility measures share: choosing attributes, and reading the values of a release.

A release is any file sdckit writes (:meth:`sdckit.config.Config.read_release`): a generalized
numeric attribute holds range labels, a suppressed value is ``*`` or missing. Two views of a released
column are used by the utility measures:

* :func:`numeric_view` — a number per record, for the measures of numeric information loss and the
  numeric features of the classifier. A label is replaced by a representative number:

  ========================================  ============================================
  released value                            number
  ========================================  ============================================
  a number (``1986``, ``3.5``)              itself
  ``[a, b)``, ``[a, b]``, ``[a;b]``, …      the midpoint (a + b) / 2
  ``a-b`` (Mondrian's closed range)         the midpoint (a + b) / 2
  ``<a``, ``<=a``, ``>a``, ``>=b``, ``≤a``  the bound (a, b): what top/bottom coding writes
  ``19**`` (a masked integer)               the midpoint of 1900 … 1999, 1949.5 (``**``: 49.5)
  ``{a,b,c}`` (a set of numbers)            the mean of its members
  ``*``, empty, missing                     suppressed: NaN (each measure says what it does)
  ========================================  ============================================

  Labels are read by the one grammar of :mod:`sdckit.labels` (:func:`sdckit.labels.representative`).
  Any other text is an :class:`~sdckit.errors.InputError` naming the attribute, the value and the file.
  Labels are parsed once per distinct value (O(distinct labels)), then mapped with polars.
* :func:`category_codes` — the values as categories (a label is a category as it is, ``*`` too; a
  missing value is a category of its own), coded jointly over the original and the release so that
  equal values get equal codes in both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, InputError, location
from sdckit.frequency import encode_column
from sdckit.labels import representative
from sdckit.table import Kind, Role, Table, value_strings

__all__ = [
    "NumericView",
    "category_codes",
    "choose_attributes",
    "numeric_view",
    "parse_label",
    "require_columns",
]


@dataclass(frozen=True)
class NumericView:
    """The numbers of one released column: ``values`` (float64, NaN where suppressed), how many
    values were labels (``ranges``) and how many were suppressed or missing (``suppressed``)."""

    values: np.ndarray
    ranges: int
    suppressed: int


def parse_label(text: str) -> float | None:
    """The representative number of one released value (module table), None if suppressed, NaN if
    the text is not a number or a label sdckit writes (:func:`sdckit.labels.representative`)."""
    return representative(text)


def numeric_view(column: pl.Series, *, source: str | None = None) -> NumericView:
    """A number per record of a released column (see the module table): numbers as they are, range
    labels as their midpoint, suppressed values as NaN."""
    if column.dtype.is_numeric():
        values = column.cast(pl.Float64).to_numpy().astype(np.float64, copy=True)
        missing = np.isnan(values)
        return NumericView(values, 0, int(missing.sum()))
    if column.dtype == pl.Null:
        return NumericView(np.full(column.len(), np.nan), 0, column.len())
    if not (column.dtype == pl.String or column.dtype == pl.Categorical or column.dtype == pl.Enum):
        raise InputError(
            f"{location(source, attribute=column.name)}values of type {column.dtype} are not numbers"
        )
    text = column.cast(pl.String)
    distinct = text.drop_nulls().unique()
    numbers: dict[str, float | None] = {}
    for label in distinct.to_list():
        number = parse_label(label)
        if number is not None and math.isnan(number):
            raise InputError(
                f"{location(source, attribute=column.name)}value {label!r} is neither a number nor a "
                "range label sdckit writes ([a, b), a-b, <a, >=b, 19**, *): a numeric measure needs numbers"
            )
        numbers[label] = number
    plain = {label for label, number in numbers.items() if number is not None and _is_number(label)}
    mapped = text.replace_strict(
        list(numbers), [numbers[label] for label in numbers], default=None, return_dtype=pl.Float64
    )
    values = mapped.to_numpy().astype(np.float64, copy=True)
    suppressed = int(np.isnan(values).sum())
    ranges = int((~text.is_in(list(plain)) & mapped.is_not_null()).sum())
    return NumericView(values, ranges, suppressed)


def _is_number(label: str) -> bool:
    try:
        float(label)
    except ValueError:
        return False
    return True


def category_codes(original: pl.Series, release: pl.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of the values of one attribute in the original and in the release, coded together:
    values spelled alike get the same code; a missing value gets a code of its own (the last one).
    Returns (original codes, release codes, number of codes)."""
    both = pl.concat([value_strings(original).rename("v"), value_strings(release).rename("v")])
    codes, cardinality, has_missing, _ = encode_column(both)
    codes = codes.astype(np.int64)
    if has_missing:
        codes[codes < 0] = cardinality
        cardinality += 1
    return codes[: original.len()], codes[original.len() :], cardinality


def choose_attributes(
    table: Table,
    given: str | None,
    *,
    default_roles: Sequence[Role] = (Role.QUASI_IDENTIFIER, Role.SENSITIVE),
    kind: Kind | None = None,
    option: str = "attributes",
) -> list[str]:
    """The attributes a measure uses: the comma-separated ``given`` names (each must be an attribute
    of ``table``), or by default those of the original's schema with one of ``default_roles`` (and of
    ``kind`` when given). Identifiers and the household id are never used by default."""
    if given is not None:
        names = [name.strip() for name in given.split(",") if name.strip()]
        if not names:
            raise ConfigError(f"{option} names no attribute")
        for name in names:
            if name not in table.schema:
                raise ConfigError(
                    f"{option}: '{name}' is not an attribute of {table.source or 'the original'} "
                    f"(attributes: {', '.join(table.schema.names)})"
                )
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise ConfigError(f"{option} names '{duplicated[0]}' twice")
        return names
    chosen = [
        attribute.name
        for attribute in table.schema
        if attribute.role in default_roles and (kind is None or attribute.kind is kind)
    ]
    if not chosen:
        roles = " or ".join(role.value for role in default_roles)
        what = f"{kind.value} attributes with role {roles}" if kind else f"attributes with role {roles}"
        raise ConfigError(f"the configuration has no {what}: name them with --{option.replace('_', '-')}")
    return chosen


def require_columns(release: Table, names: Sequence[str], *, aligned_with: Table | None = None) -> None:
    """The release must have every attribute in ``names`` as a column, and, when ``aligned_with``
    is given (measures that compare record i with record i), as many records as it."""
    where = release.source or "the release"
    missing = [name for name in names if name not in release.data.columns]
    if missing:
        raise InputError(
            f"{where}: attribute '{missing[0]}' is not a column of the release "
            f"(columns: {', '.join(release.data.columns)})"
        )
    if aligned_with is not None and aligned_with.n_records != release.n_records:
        named = f" {aligned_with.source}" if aligned_with.source else ""
        raise InputError(
            f"{where}: {release.n_records:,} records, the original{named} has "
            f"{aligned_with.n_records:,}: this measure compares record i of "
            "the release with record i of the original, so both must have the same records in the same "
            "order"
        )
