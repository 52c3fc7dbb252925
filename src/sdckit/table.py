"""Tables with a schema: the data every sdckit function reads.

A :class:`Table` is a polars DataFrame plus a :class:`Schema`, an ordered tuple of
:class:`Attribute` s. An attribute carries a role (what the classic privacy models see), a kind
(how its values are compared), and the public-knowledge probability and sensitivity weights of the
combined record-level risk measure (Orooji & Knapp, 2019): ``PK(A)``, ``W(A)`` and ``W(v)`` given
per category value or per numeric range.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, location
from sdckit.frequency import encode_column

if TYPE_CHECKING:
    from polars._typing import PolarsDataType
    from polars.expr.whenthen import ChainedThen, Then


class Role(str, Enum):  # noqa: UP042 (kept: str() and format() behaviour)
    """What an attribute is to an adversary."""

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    QUASI_SENSITIVE = "quasi-sensitive"
    INSENSITIVE = "insensitive"
    HOUSEHOLD = "household"  # the id of the household (cluster) a record belongs to: household risk


class Kind(str, Enum):  # noqa: UP042 (kept: str() and format() behaviour)
    """How the values of an attribute are compared and generalized."""

    CATEGORICAL = "categorical"
    ORDINAL = "ordinal"
    NUMERIC = "numeric"
    DATE = "date"
    SET_VALUED = "set-valued"


@dataclass(frozen=True)
class ValueRange:
    """A sensitivity weight for the numeric values ``minimum <= v < maximum`` (either bound may be open)."""

    weight: float
    minimum: float | None = None
    maximum: float | None = None

    def contains(self, values: np.ndarray) -> np.ndarray:
        inside = np.ones(values.shape, dtype=bool)
        if self.minimum is not None:
            inside &= values >= self.minimum
        if self.maximum is not None:
            inside &= values < self.maximum
        return inside


@dataclass(frozen=True)
class Attribute:
    """One column of a table and what the data steward says about it.

    ``public_probability`` is PK(A), the probability that an adversary knows the attribute;
    ``sensitivity`` is W(A); ``value_weights`` (category value -> weight) or ``range_weights``
    (numeric ranges) give W(v). A value with no weight given has weight 1; a missing or suppressed
    value has weight 0, since it discloses nothing. ``described`` is False for a column that no
    configuration describes (the defaults of :meth:`Schema.infer`): read by a configuration, such a
    column is kept as read (text, in a CSV file). ``stored_type`` is the Arrow type of the column in the
    Parquet file it was read from (None for other sources): :func:`write_table` writes the column back
    with it as long as the column keeps the polars type it was read as, since polars reads types such
    as ``string`` and ``large_string`` alike.
    """

    name: str
    role: Role = Role.INSENSITIVE
    kind: Kind = Kind.CATEGORICAL
    public_probability: float = 0.0
    sensitivity: float = 0.0
    value_weights: Mapping[str, float] = field(default_factory=dict)
    range_weights: tuple[ValueRange, ...] = ()
    hierarchy: Any = None
    described: bool = field(default=True, compare=False, repr=False)
    stored_type: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        where = location(attribute=self.name)
        for label, value in (("public", self.public_probability), ("sensitivity", self.sensitivity)):
            if not (isinstance(value, int | float) and 0.0 <= float(value) <= 1.0) or math.isnan(value):
                raise ConfigError(f"{where}{label} must be a number in [0, 1], got {value!r}")
        for weighted, weight in self.value_weights.items():
            _check_weight(where, f"weight of value '{weighted}'", weight)
        for value_range in self.range_weights:
            _check_weight(where, "range weight", value_range.weight)
            if (
                value_range.minimum is not None
                and value_range.maximum is not None
                and value_range.minimum >= value_range.maximum
            ):
                raise ConfigError(
                    f"{where}range min {value_range.minimum} must be below max {value_range.maximum}"
                )
        if self.range_weights and self.kind not in (Kind.NUMERIC, Kind.DATE, Kind.ORDINAL):
            raise ConfigError(f"{where}ranges need a numeric attribute, but kind is {self.kind.value}")

    def value_weight_array(self, column: pl.Series) -> np.ndarray:
        """W(v) for every value of ``column``: the given weight, 1 if none is given, 0 if missing."""
        codes, _, _, categories = encode_column(column)
        return self.weights_of_codes(codes, categories)

    def weights_of_categories(self, categories: pl.Series) -> np.ndarray:
        """W(v) of each distinct (non-missing) value: the given weight, or 1 if none is given."""
        weights = np.ones(len(categories), dtype=np.float64)
        if len(categories) == 0:
            return weights
        if self.range_weights:
            values = categories.cast(pl.Float64, strict=False).to_numpy()
            assigned = np.zeros(len(values), dtype=bool)
            # The first range that contains a value gives its weight.
            for value_range in self.range_weights:
                hit = value_range.contains(values) & ~assigned
                weights[hit] = value_range.weight
                assigned |= hit
        elif self.value_weights:
            weights = (
                value_strings(categories)
                .replace_strict(
                    list(self.value_weights),
                    [float(w) for w in self.value_weights.values()],
                    default=1.0,
                    return_dtype=pl.Float64,
                )
                .to_numpy()
                .astype(np.float64)
            )
        return weights

    def weights_of_codes(self, codes: np.ndarray, categories: pl.Series) -> np.ndarray:
        """W(v) per record from integer codes (-1 = missing, weight 0) and the coded values."""
        per_value = np.append(self.weights_of_categories(categories), 0.0)
        # Code -1 picks the appended 0.
        return per_value[codes]

    def consequence_weights(self, column: pl.Series) -> np.ndarray:
        """W(A) * W(r(A)) for every record: this attribute's share of the consequence C (eq. 4)."""
        if self.sensitivity == 0.0:
            return np.zeros(column.len(), dtype=np.float64)
        return self.sensitivity * self.value_weight_array(column)

    def consequence_expression(self, dtype: pl.DataType) -> pl.Expr | None:
        """A polars expression computing W(A) * W(r(A)) for this attribute's column of type ``dtype``,
        or None when the column is better handled through integer codes (floating-point values with
        per-value weights, or many weighted values). A missing value gives 0."""
        column = pl.col(self.name)
        expression: Then | ChainedThen
        if self.range_weights:
            if not dtype.is_numeric():
                return None
            expression = pl.when(column.is_null()).then(pl.lit(0.0))
            for value_range in self.range_weights:
                condition = pl.lit(True)
                if value_range.minimum is not None:
                    condition = condition & (column >= value_range.minimum)
                if value_range.maximum is not None:
                    condition = condition & (column < value_range.maximum)
                expression = expression.when(condition).then(pl.lit(float(value_range.weight)))
            weight = expression.otherwise(pl.lit(1.0))
        elif self.value_weights:
            if dtype.is_float() or len(self.value_weights) > 16:
                return None
            text = column.cast(pl.String)
            expression = pl.when(column.is_null()).then(pl.lit(0.0))
            for value, value_weight in self.value_weights.items():
                expression = expression.when(text == value).then(pl.lit(float(value_weight)))
            weight = expression.otherwise(pl.lit(1.0))
        else:
            weight = pl.when(column.is_null()).then(pl.lit(0.0)).otherwise(pl.lit(1.0))
        return (weight * self.sensitivity).cast(pl.Float64)


def value_strings(column: pl.Series) -> pl.Series:
    """The values of a column spelled as a configuration file spells them (integers without '.0')."""
    if column.dtype.is_float():
        as_int = column.cast(pl.Int64, strict=False)
        integral = (as_int.cast(pl.Float64) == column).fill_null(False)
        return pl.select(
            pl.when(pl.lit(integral))
            .then(pl.lit(as_int).cast(pl.String))
            .otherwise(pl.lit(column).cast(pl.String))
        ).to_series()
    return column.cast(pl.String)


def _check_weight(where: str, label: str, weight: Any) -> None:
    if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0.0 <= float(weight) <= 1.0:
        raise ConfigError(f"{where}{label} must be a number in [0, 1], got {weight!r}")


@dataclass(frozen=True)
class Schema:
    """The ordered attributes of a table."""

    attributes: tuple[Attribute, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for attribute in self.attributes:
            if attribute.name in seen:
                raise ConfigError(f"attribute '{attribute.name}' is described twice")
            seen.add(attribute.name)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.attributes]

    def __getitem__(self, name: str) -> Attribute:
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return any(a.name == name for a in self.attributes)

    def __iter__(self):
        return iter(self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def with_role(self, *roles: Role) -> list[Attribute]:
        return [a for a in self.attributes if a.role in roles]

    def without_identifiers(self) -> Schema:
        return Schema(tuple(a for a in self.attributes if a.role is not Role.IDENTIFIER))

    def replace(self, name: str, **changes: Any) -> Schema:
        return Schema(tuple(replace(a, **changes) if a.name == name else a for a in self.attributes))

    @classmethod
    def infer(cls, frame: pl.DataFrame, described: Iterable[Attribute] = ()) -> Schema:
        """A schema for every column of ``frame``: the described attributes as given, the others
        insensitive with public probability 0 and sensitivity 0, numeric if the column is numeric,
        else categorical."""
        given = {a.name: a for a in described}
        attributes = []
        for name, dtype in frame.schema.items():
            if name in given:
                attributes.append(given[name])
            else:
                kind = (
                    Kind.NUMERIC
                    if dtype.is_numeric()
                    else (Kind.DATE if dtype.is_temporal() else Kind.CATEGORICAL)
                )
                attributes.append(Attribute(name=name, kind=kind, described=False))
        return cls(tuple(attributes))


@dataclass(frozen=True)
class Table:
    """A polars DataFrame and the schema that describes its columns.

    Immutable in spirit: transformations return new tables. ``source`` names the file the data came
    from, for error messages. ``weights`` names the column holding the sampling weights (how many
    population units each record stands for), if the data has one; the column stays in the data and
    in the schema (as an insensitive numeric attribute unless described otherwise).
    """

    data: pl.DataFrame
    schema: Schema
    source: str | None = None
    weights: str | None = None

    def __post_init__(self) -> None:
        missing = [name for name in self.schema.names if name not in self.data.columns]
        if missing:
            raise ConfigError(
                f"{location(self.source)}attribute '{missing[0]}' is not a column of the data "
                f"(columns: {', '.join(self.data.columns)})"
            )
        if self.weights is not None and self.weights not in self.data.columns:
            raise ConfigError(
                f"{location(self.source)}weights column '{self.weights}' is not a column of the data "
                f"(columns: {', '.join(self.data.columns)})"
            )

    def sampling_weights(self) -> np.ndarray | None:
        """The sampling weight of every record as float64, or None if the table has no weights column."""
        if self.weights is None:
            return None
        return self.data.get_column(self.weights).cast(pl.Float64).to_numpy()

    @property
    def n_records(self) -> int:
        return self.data.height

    def column(self, name: str) -> pl.Series:
        return self.data.get_column(name)

    @classmethod
    def from_frame(cls, frame: Any, schema: Schema | None = None, source: str | None = None) -> Table:
        """Wrap a polars or pandas DataFrame; without a schema, every column gets the defaults."""
        from sdckit.io.frames import to_polars

        data = to_polars(frame)
        return cls(data=data, schema=schema if schema is not None else Schema.infer(data), source=source)


def undescribed_text_hint(table: Table, name: str) -> str:
    """For a message about column ``name`` that should hold numbers: why it holds text when no
    configuration describes it (it is kept as read) and what to do; empty otherwise."""
    if name not in table.schema or table.schema[name].described or name not in table.data.columns:
        return ""
    if not _is_textual(table.data.schema[name]):
        return ""
    return (
        f"; the configuration does not describe '{name}', so it is kept as read, as text: describe it "
        "with kind: numeric to have it read as numbers"
    )


_TEXTUAL = (pl.String, pl.Categorical)


def _is_textual(dtype: PolarsDataType) -> bool:
    return dtype in _TEXTUAL or isinstance(dtype, pl.Enum)
