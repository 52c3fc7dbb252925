"""Tables with a schema: the data every sdckit function reads.

A :class:`Table` is a polars DataFrame plus a :class:`Schema`, an ordered tuple of
:class:`Attribute` s. An attribute carries a role (what the classic privacy models see), a kind
(how its values are compared), and the public-knowledge probability and sensitivity weights of the
combined record-level risk measure (Orooji & Knapp, 2019): ``PK(A)``, ``W(A)`` and ``W(v)`` given
per category value or per numeric range.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import difflib
import math
import os
import secrets
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import polars as pl

from sdckit._files import available_memory, check_regular_file
from sdckit.errors import ConfigError, InputError, SdcWarning, location
from sdckit.frequency import encode_column


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
        for value, weight in self.value_weights.items():
            _check_weight(where, f"weight of value '{value}'", weight)
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


def to_polars(frame: Any) -> pl.DataFrame:
    """A polars DataFrame from a polars or pandas DataFrame (pandas is optional)."""
    if isinstance(frame, pl.DataFrame):
        return frame
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    module = type(frame).__module__
    if module.startswith("pandas"):
        return pl.from_pandas(frame)
    raise TypeError(f"expected a polars or pandas DataFrame, got {type(frame).__name__}")


# Reading and writing ------------------------------------------------------------------------------

PARQUET_SUFFIXES = (".parquet", ".pq")
DELIMITER_CANDIDATES = ",;\t|"
DEFAULT_MISSING_VALUES = ("", "NA")
FRAME_LABEL = "<data frame>"

_SNIFF_BYTES = 64 * 1024
_QUOTE = '"'
# A quoted field with its doubled-quote escapes, as RFC 4180 writes it.
_QUOTED_FIELD = r'"(?:[^"]|"")*"'


def read_table(
    source: str | os.PathLike[str] | Any,
    *,
    attributes: Iterable[Attribute] = (),
    delimiter: str | None = None,
    missing_values: Sequence[str] = DEFAULT_MISSING_VALUES,
    weights: str | None = None,
) -> Table:
    """Read a CSV or Parquet file, or wrap a polars or pandas DataFrame, into a :class:`Table`.

    A path ending in ``.parquet`` or ``.pq`` is read as Parquet, any other path as CSV. The CSV
    delimiter is guessed from the first 64 KiB among ``, ; TAB |`` (comma if no guess) unless given.
    Blank lines are skipped. White space around text values is removed in every source (`` Male ``
    reads as ``Male``; an :class:`SdcWarning` names the attributes and how many values changed). Text
    fields equal to one of ``missing_values`` become missing (null), and only they: ``NaN`` written as
    text is a category in a text column, an InputError in a numeric attribute, and keeps a column whose
    kind is inferred text (with an SdcWarning). A NaN stored in a typed float column (Parquet,
    DataFrame) is missing; an infinite number is an InputError. Only regular files are read (not
    devices, FIFOs or directories), a CSV file whose first 64 KiB hold a NUL byte is refused as binary,
    and so is a file larger than the available memory, and columns of lists (except texts for a
    set-valued attribute), structs or binary data.

    Column types: a column described with kind numeric must hold only numbers and becomes Int64 if
    every value is integral, else Float64; kind date becomes Date; kinds categorical and set-valued
    stay text (so codes such as "01234" keep their leading zero). In a CSV file a column that is not
    described, or is ordinal, becomes numeric if every non-missing value is a number and stays text
    otherwise (:meth:`sdckit.config.Config.read` keeps the columns its configuration does not describe
    as read instead). Parquet files and DataFrames keep their types, except that text columns
    described as numeric or date are converted.

    ``attributes`` describe some columns (see :class:`Attribute`); the others get the defaults of
    :meth:`Schema.infer`. ``weights`` names a column of non-negative sampling weights, recorded as
    :attr:`Table.weights`.

    Raises :class:`InputError` for a file that is missing, empty, ragged, not UTF-8, or holds a value
    of the wrong type, and :class:`ConfigError` for an attribute or weights column that is not a
    column; messages name the file, the line, the attribute and the value. A value weight given for a
    value that never occurs in its column is reported with an :class:`SdcWarning`.
    """
    return _read_table(
        source, attributes=attributes, delimiter=delimiter, missing_values=missing_values, weights=weights
    )


def _read_table(
    source: Any,
    *,
    attributes: Iterable[Attribute],
    delimiter: str | None,
    missing_values: Sequence[str],
    weights: str | None,
    inferred_kinds: Iterable[str] = (),
    described_at: Mapping[str, str] | None = None,
    weights_at: str | None = None,
    as_text_if_not_numeric: Iterable[str] = (),
    keep_undescribed: bool = False,
) -> Table:
    """:func:`read_table`, plus what a configuration file adds: the attributes whose kind is to be
    inferred from the data (``inferred_kinds``) and where each attribute (``described_at``) and the
    weights column (``weights_at``) are named in the configuration, as ``file:line``, for messages.
    The attributes ``as_text_if_not_numeric`` of kind numeric, ordinal or date whose values are not all
    numbers (dates) become categorical, without hierarchy or ranges, instead of raising.

    ``keep_undescribed``: the columns that no attribute describes (nor ``weights`` names) are kept as
    read, so that a release writes them back unchanged: in a CSV file as text (``053005`` stays
    ``053005``, ``1.50`` stays ``1.50``), neither parsed as numbers nor trimmed, with only an empty
    field missing; in a Parquet file or DataFrame with their type, no white space removed and no
    missing-value token or NaN turned into a missing value."""
    described = list(attributes)
    by_name = {attribute.name: attribute for attribute in described}
    if len(by_name) != len(described):
        Schema(tuple(described))  # raises, naming the attribute described twice
    inferred = frozenset(inferred_kinds)
    described_at = described_at or {}
    tokens = tuple(str(token) for token in missing_values)
    lenient = frozenset(as_text_if_not_numeric)
    kept_as_read = None
    if keep_undescribed:
        # An attribute passed back with described=False (the schema of a first partition) is kept too.
        kept_as_read = frozenset(a.name for a in described if a.described)
        kept_as_read |= {weights} if weights is not None else set()
    loaded = _load(source, delimiter, tokens, kept_as_read)
    loaded.tokens = tokens
    _check_names(loaded, described, weights, described_at, weights_at)
    _check_column_types(loaded, by_name)
    stripped = _strip_text(loaded, tokens)
    frame = _convert_columns(loaded, by_name, inferred, weights, lenient)
    resolved = [
        _resolve_kind(attribute, frame.schema[attribute.name], inferred, lenient) for attribute in described
    ]
    if weights is not None:
        _check_weights(frame, weights, loaded)
    schema = Schema.infer(frame, resolved)
    if loaded.stored_types:
        schema = Schema(
            tuple(replace(a, stored_type=loaded.stored_types.get(a.name)) for a in schema.attributes)
        )
    table = Table(data=frame, schema=schema, source=loaded.label, weights=weights)
    _warn_stripped(frame, stripped, loaded.label)
    _warn_unused_value_weights(frame, resolved, loaded.label, described_at)
    return table


_TEXTUAL = (pl.String, pl.Categorical)


def _is_textual(dtype: pl.DataType) -> bool:
    return dtype in _TEXTUAL or isinstance(dtype, pl.Enum)


def _resolve_kind(
    attribute: Attribute, dtype: pl.DataType, inferred: frozenset[str], lenient: frozenset[str]
) -> Attribute:
    """The attribute with its kind settled by its column: inferred kinds from the column type, and an
    attribute read leniently (a release's quasi-identifier) whose values are not all numbers or dates
    as a categorical attribute without hierarchy or ranges (its values are classes such as '19-34')."""
    if attribute.name in inferred:
        return replace(attribute, kind=_kind_of(dtype))
    if (
        attribute.name in lenient
        and _is_textual(dtype)
        and attribute.kind in (Kind.NUMERIC, Kind.ORDINAL, Kind.DATE)
    ):
        return replace(attribute, kind=Kind.CATEGORICAL, hierarchy=None, range_weights=())
    return attribute


def _check_column_types(loaded: _Loaded, by_name: Mapping[str, Attribute]) -> None:
    """Refuse columns sdckit cannot compare: nested (list, array, struct), binary and object columns;
    a list of texts is allowed for a set-valued attribute (its items)."""
    for name, dtype in loaded.frame.schema.items():
        attribute = by_name.get(name)
        if isinstance(dtype, pl.List) and attribute is not None and attribute.kind is Kind.SET_VALUED:
            inner = dtype.inner
            if inner is not None and (_is_textual(inner) or inner.is_integer()):
                continue
        if dtype.is_nested() or dtype in (pl.Binary, pl.Object):
            hint = (
                " (a list of texts is read only for an attribute of kind set-valued)"
                if isinstance(dtype, pl.List)
                else ""
            )
            raise InputError(
                f"{loaded.label}: column '{name}' must hold text, numbers, dates or booleans, "
                f"got the unsupported type {dtype}{hint}"
            )


def _strip_text(loaded: _Loaded, tokens: tuple[str, ...]) -> dict[str, int]:
    """Remove the white space around every text value, in place in ``loaded``, and return how many
    values of each column changed. A value that becomes a missing-value token becomes missing."""
    if loaded.trimmed:
        return {}
    frame = loaded.frame
    textual = []
    for name, dtype in frame.schema.items():
        if name in loaded.kept:
            continue
        if dtype == pl.String:
            textual.append(name)
        elif dtype == pl.Categorical or isinstance(dtype, pl.Enum):
            categories = (
                dtype.categories
                if isinstance(dtype, pl.Enum)
                else frame.get_column(name).unique().drop_nulls().cast(pl.String)
            )
            if (categories != categories.str.strip_chars()).any():
                textual.append(name)
    if not textual:
        return {}
    text = {name: pl.col(name).cast(pl.String) for name in textual}
    counts = frame.select(
        (text[name] != text[name].str.strip_chars()).sum().alias(name) for name in textual
    ).row(0, named=True)
    changed = {name: int(count) for name, count in counts.items() if count}
    if changed:
        stripped = frame.with_columns(text[name].str.strip_chars().alias(name) for name in changed)
        loaded.frame = _apply_missing_values(stripped, tokens, list(changed))
    return changed


def _warn_stripped(frame: pl.DataFrame, stripped: Mapping[str, int], label: str) -> None:
    """Say which text columns had values with spaces around them (numbers do not change meaning)."""
    named = [
        f"'{name}' ({count} value{'s' if count != 1 else ''})"
        for name, count in stripped.items()
        if _is_textual(frame.schema[name])
    ]
    if named:
        warnings.warn(
            f"{label}: white space around text values was removed (' Male ' reads as 'Male') in "
            f"attribute {', '.join(named[:10])}{', ...' if len(named) > 10 else ''}",
            SdcWarning,
            stacklevel=4,
        )


def _kind_of(dtype: pl.DataType) -> Kind:
    if dtype.is_numeric():
        return Kind.NUMERIC
    if dtype.is_temporal():
        return Kind.DATE
    return Kind.CATEGORICAL


@dataclass
class _Loaded:
    """A frame as read, before types are settled, and how to point at one of its records."""

    frame: pl.DataFrame
    label: str
    from_text: bool  # every column was read as text (CSV), so numeric columns are to be recognized
    layout: Callable[[], _Layout] | None = None  # CSV only: where each record starts, computed on demand
    tokens: tuple[str, ...] = DEFAULT_MISSING_VALUES  # the missing-value tokens, for messages
    trimmed: bool = False  # no text value has white space around it (a CSV file's bytes say so)
    kept: frozenset[str] = frozenset()  # the columns kept as read (see _read_table's keep_undescribed)
    stored_types: dict[str, Any] = field(default_factory=dict)  # Parquet: each column's Arrow type

    first_record: int = 0  # a chunk of a larger source: the number of its first record, 0-based

    def where(self, row: int, attribute: str | None = None, column_word: str = "attribute") -> str:
        """``file:line: attribute 'x': `` for a CSV record, ``source: record N: attribute 'x': `` else."""
        named = f"{column_word} '{attribute}': " if attribute is not None else ""
        if self.layout is not None:
            return f"{self.label}:{int(self.layout().record_lines[row])}: {named}"
        return f"{self.label}: record {self.first_record + row + 1:,}: {named}"


@dataclass(frozen=True)
class FrameChunk:
    """Records read from part of a larger source (a partition of a data set), to be validated as
    :func:`read_table` validates a file: ``label`` names the source in messages and ``first_record``
    (0-based) numbers its records; ``from_text`` says every column was read as text (CSV)."""

    frame: pl.DataFrame
    label: str
    first_record: int = 0
    from_text: bool = False


@dataclass(frozen=True)
class _Layout:
    """Where the records of a CSV file are: the header's line and field count, and for every record
    after it the 1-based line it starts on and its number of fields (0 for a blank line)."""

    header_line: int
    header_fields: int
    record_lines: np.ndarray
    record_fields: np.ndarray

    def without_blank_lines(self) -> _Layout:
        keep = self.record_fields > 0
        return replace(self, record_lines=self.record_lines[keep], record_fields=self.record_fields[keep])


def _load(
    source: Any, delimiter: str | None, tokens: tuple[str, ...], described: frozenset[str] | None = None
) -> _Loaded:
    """The frame of ``source`` as read, missing-value tokens applied; ``described``: the columns to
    read as described, the others kept as read (None: every column is read as described)."""
    if isinstance(source, FrameChunk):
        _check_not_empty(source.frame, source.label, "partition")
        return _typed(
            source.frame,
            source.label,
            tokens,
            described,
            from_text=source.from_text,
            first_record=source.first_record,
        )
    if isinstance(source, str | os.PathLike) and is_dataset(source):
        return _load_dataset(source, tokens, described)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label = str(source)
        # A device or FIFO would be read forever; a file larger than the memory cannot be read.
        check_regular_file(path, label, "data file", InputError)
        if path.suffix.lower() in PARQUET_SUFFIXES:
            return _load_parquet(path, label, tokens, described)
        return _load_csv(path, label, delimiter, tokens, described)
    if type(source).__module__.startswith("pandas") and hasattr(source, "columns"):
        names = [str(name) for name in source.columns]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise InputError(f"{FRAME_LABEL}: column '{duplicated[0]}' appears more than once")
    frame = to_polars(source)
    _check_not_empty(frame, FRAME_LABEL, "data frame")
    return _typed(frame, FRAME_LABEL, tokens, described, from_text=False)


def _kept_columns(columns: Sequence[str], described: frozenset[str] | None) -> frozenset[str]:
    """The columns kept as read: those not ``described`` (none when ``described`` is None)."""
    return frozenset() if described is None else frozenset(columns) - described


def _typed(
    frame: pl.DataFrame,
    label: str,
    tokens: tuple[str, ...],
    described: frozenset[str] | None,
    **details: Any,
) -> _Loaded:
    """A frame whose columns carry their types (Parquet, DataFrame, or a partition), with the
    missing-value tokens applied to its text columns but those kept as read (where, in a partition of
    a CSV file, an empty field is missing all the same, as :func:`_load_csv` reads it)."""
    kept = _kept_columns(frame.columns, described)
    names = [name for name in frame.columns if name not in kept] if kept else None
    frame = _apply_missing_values(frame, tokens, names)
    if kept and details.get("from_text") and "" not in tokens:
        frame = _apply_missing_values(frame, ("",), list(kept))
    return _Loaded(frame=frame, label=label, kept=kept, **details)


def _check_not_empty(frame: pl.DataFrame, label: str, what: str) -> None:
    if frame.width == 0:
        raise InputError(f"{label}: the {what} has no columns")
    if frame.height == 0:
        raise InputError(f"{label}: the {what} has columns ({', '.join(frame.columns)}) but no records")


def _apply_missing_values(
    frame: pl.DataFrame, tokens: tuple[str, ...], names: Sequence[str] | None = None
) -> pl.DataFrame:
    """Text values equal to a missing-value token become null (columns already typed stay as they are);
    only in the columns ``names`` if given."""
    text_columns = [
        name
        for name, dtype in frame.schema.items()
        if dtype == pl.String and (names is None or name in names)
    ]
    if not tokens or not text_columns:
        return frame
    return frame.with_columns(
        pl.when(pl.col(name).is_in(list(tokens))).then(None).otherwise(pl.col(name)).alias(name)
        for name in text_columns
    )


def _load_parquet(
    path: Path, label: str, tokens: tuple[str, ...], described: frozenset[str] | None = None
) -> _Loaded:
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(f"{label}: cannot read the Parquet file: {_first_line(error)}") from None
    _check_not_empty(frame, label, "file")
    loaded = _typed(frame, label, tokens, described, from_text=False)
    loaded.stored_types = _arrow_types(path)
    return loaded


def _arrow_types(path: Path) -> dict[str, Any]:
    """The Arrow type of every column of a Parquet file, from its footer (an empty mapping if the
    footer cannot be read again)."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
    except (OSError, ValueError):
        return {}
    return {field.name: field.type for field in schema}


def is_dataset(source: str | os.PathLike[str]) -> bool:
    """Whether ``source`` names a data set of several Parquet files: a directory or a glob pattern."""
    text = str(source)
    path = Path(text)
    return path.is_dir() or (not path.exists() and any(character in text for character in "*?["))


def dataset_files(source: str | os.PathLike[str]) -> list[Path]:
    """The Parquet files of a data set (a directory, searched recursively, or a glob pattern), in
    sorted order; InputError if there are none."""
    import glob

    text = str(source)
    if Path(text).is_dir():
        files = sorted(
            path
            for path in Path(text).rglob("*")
            if path.suffix.lower() in PARQUET_SUFFIXES and path.is_file()
        )
        hidden = [
            path
            for path in files
            if any(part.startswith((".", "_")) for part in path.relative_to(text).parts)
        ]
        files = [path for path in files if path not in hidden]
    else:
        files = sorted(Path(name) for name in glob.glob(text, recursive=True) if Path(name).is_file())
        others = [path for path in files if path.suffix.lower() not in PARQUET_SUFFIXES]
        if others:
            raise InputError(f"{text}: a data set is made of Parquet files, but '{others[0]}' is not one")
    if not files and Path(text).is_dir():
        raise InputError(f"{text}: is a directory holding no Parquet files (.parquet, .pq), not a data set")
    if not files:
        raise InputError(f"{text}: no Parquet files (.parquet, .pq) match this pattern")
    return files


def _load_dataset(
    source: str | os.PathLike[str], tokens: tuple[str, ...], described: frozenset[str] | None = None
) -> _Loaded:
    """A partitioned Parquet data set read whole (lazily scanned, then collected once)."""
    label = str(source)
    files = dataset_files(source)
    needed = sum(path.stat().st_size for path in files)
    available = available_memory()
    if available is not None and needed * 4 > available:
        raise InputError(
            f"{label}: the data set ({len(files)} files, {needed / 2**30:.1f} GiB on disk) may not fit in "
            "the "
            f"available memory ({available / 2**30:.1f} GiB); the commands that run out of core read it "
            "chunk by chunk (see docs/scaling.md)"
        )
    try:
        frame = pl.scan_parquet(files).collect()
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(f"{label}: cannot read the Parquet data set: {_first_line(error)}") from None
    _check_not_empty(frame, label, "data set")
    loaded = _typed(frame, label, tokens, described, from_text=False)
    loaded.stored_types = _arrow_types(files[0])
    return loaded


def _more(count: int, singular: str, plural: str) -> str:
    """`` (3 more such lines)`` for a message, empty if there are no more."""
    if count <= 0:
        return ""
    return f" ({count} more {singular if count == 1 else plural})"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a CSV sample among ``, ; TAB |`` as :class:`csv.Sniffer` guesses it; comma if
    it cannot tell."""
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITER_CANDIDATES).delimiter
    except csv.Error:
        return ","


def _read_head(path: Path, label: str) -> bytes:
    """The first 64 KiB of a CSV file, refused at once if they hold a NUL byte: binary data (or
    UTF-16 text), which polars would otherwise read whole before failing."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(_SNIFF_BYTES)
    except OSError as error:
        raise InputError(f"{label}: cannot read the data file: {error.strerror}") from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        utf16 = " (UTF-16 text? convert it to UTF-8)" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise InputError(
            f"{label}:{line}: the data file must be CSV text, got binary data "
            f"(a NUL byte at byte {nul}){utf16}"
        )
    return raw


def _sample_text(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if len(raw) == _SNIFF_BYTES and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # a line cut in the middle would confuse the sniffer
    return text


def _read_header(path: Path, label: str, delimiter: str) -> tuple[list[str], int]:
    """The column names and the 1-based line of the first non-blank line."""
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quotechar=_QUOTE)
        try:
            for row in reader:
                if row:
                    return row, reader.line_num - _row_span(row)
        except csv.Error as error:
            raise InputError(f"{label}:{reader.line_num}: cannot read the header: {error}") from None
    raise InputError(f"{label}: the file is empty (no header line)")


def _row_span(row: list[str]) -> int:
    """How many line breaks a CSV record holds inside quoted fields."""
    return sum(value.count("\n") for value in row)


def _check_delimiter(delimiter: str) -> None:
    if len(delimiter) != 1 or delimiter in ('"', "\n", "\r") or not delimiter.isascii():
        raise ConfigError(
            f"delimiter must be one ASCII character other than a quote or line break, got {delimiter!r}"
        )


def _load_csv(
    path: Path,
    label: str,
    delimiter: str | None,
    tokens: tuple[str, ...],
    described: frozenset[str] | None = None,
) -> _Loaded:
    if path.stat().st_size == 0:
        raise InputError(f"{label}: the file is empty (no header line)")
    head = _read_head(path, label)
    if delimiter is None:
        delimiter = sniff_delimiter(_sample_text(head))
    _check_delimiter(delimiter)
    names, header_line = _read_header(path, label, delimiter)
    _check_header(names, label, header_line)
    stripped_header = len(names) > 1 and all(name.startswith(" ") for name in names[1:])
    kept = _kept_columns([name.lstrip(" ") if stripped_header else name for name in names], described)
    # The parser turns the tokens into nulls in every column; with columns kept as read, where only an
    # empty field is missing (it is written back empty), the other tokens are applied afterwards.
    parsed_tokens = [token for token in tokens if not kept or token == ""]
    try:
        frame = pl.read_csv(
            path,
            separator=delimiter,
            quote_char=_QUOTE,
            infer_schema=False,
            null_values=parsed_tokens or None,
            empty_string_is_null="" in tokens,
            raise_if_empty=True,
        )
    except pl.exceptions.NoDataError:
        raise InputError(f"{label}: the file is empty (no header line)") from None
    except (pl.exceptions.PolarsError, OSError) as error:
        _explain_failure(path, label, delimiter, error)

    # "a, b, c" files: skip the spaces after each delimiter, as csv's skipinitialspace does.
    if stripped_header:
        frame = frame.rename({name: name.lstrip(" ") for name in frame.columns})
        frame = frame.with_columns(pl.all().str.strip_chars_start(" "))
        _check_header([name.lstrip(" ") for name in names], label, header_line)
    if stripped_header or kept:
        frame = _apply_missing_values(frame, tokens, [name for name in frame.columns if name not in kept])
        if "" not in tokens and kept:
            frame = _apply_missing_values(frame, ("",), list(kept))

    layout_cache: list[_Layout] = []

    def layout() -> _Layout:
        if not layout_cache:
            no_rows = np.zeros(0, dtype=np.int64)
            layout_cache.append(_scan_layout(path, label, delimiter, no_rows).without_blank_lines())
        return layout_cache[0]

    # polars pads a short record with nulls and reads a blank line as a record of nulls: both leave
    # the last column empty, so only then is the file scanned for ragged and blank lines.
    last = pl.col(frame.columns[-1])
    suspects = frame.select(pl.arg_where(last.is_null() | (last == ""))).to_series().to_numpy()
    if suspects.size and not _records_complete(path, delimiter, len(names), frame.height):
        full = _scan_layout(path, label, delimiter, suspects)
        _raise_if_ragged(full, label)
        blank = full.record_fields == 0
        if len(blank) == frame.height and blank.any():
            frame = frame.filter(pl.Series(~blank))
        layout_cache.append(full.without_blank_lines())
    if frame.height == 0:
        raise InputError(f"{label}: the file has a header (line {header_line}) but no records")
    trimmed = not stripped_header and _fields_are_trimmed(path, delimiter)
    return _Loaded(frame=frame, label=label, from_text=True, layout=layout, trimmed=trimmed, kept=kept)


# The bytes that begin a white-space character in UTF-8: ASCII white space but the line feed, and the
# lead bytes of the Unicode white space (U+0085 and U+00A0: C2; U+1680: E1; U+2000-U+200A, U+2028,
# U+2029, U+202F, U+205F: E2; U+3000: E3) that polars' strip_chars removes.
_WHITE_LEADS = bytes([9, 11, 12, 13, 32, 0xC2, 0xE1, 0xE2, 0xE3])
_TRIM_CHUNK = 1 << 24


def _fields_are_trimmed(path: Path, delimiter: str) -> bool:
    """True if no value of the CSV file can have white space around it, because the file holds no
    byte that begins a white-space character, other than the delimiter and the CR of CRLF line
    breaks (with a white delimiter, no quote either: a quoted field may hold it). False only means
    "maybe": :func:`_strip_text` then compares every value with its stripped self, which costs
    several times this pass (C loops over the bytes, in chunks)."""
    separator = delimiter.encode()
    white = _WHITE_LEADS.replace(separator, b"")
    keep = bytes(byte for byte in range(256) if byte not in white)
    pending = b""  # a CR held back in case the next chunk begins with its LF
    with path.open("rb") as handle:
        while chunk := handle.read(_TRIM_CHUNK):
            if separator not in white and _QUOTE.encode() in chunk:
                return False
            data, pending = pending + chunk if pending else chunk, b""
            if b"\r" in data:
                if data.endswith(b"\r"):
                    data, pending = data[:-1], b"\r"
                data = data.replace(b"\r\n", b"\n")
            if data.translate(None, keep):
                return False
    return not pending


def _records_complete(path: Path, delimiter: str, header_fields: int, records: int) -> bool:
    """True if every record of the CSV file has as many fields as its header. polars refuses a
    record with more, so when the file holds no quote (every delimiter byte then separates two
    fields), the delimiters of the header and of the ``records`` add up to (fields - 1) * (records
    + 1) exactly when no record has fewer (a blank line has none, and fails too). One counting pass
    over the bytes, instead of reading every line to count its fields."""
    separator = ord(delimiter)
    count = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_TRIM_CHUNK):
            if _QUOTE.encode() in chunk:
                return False
            count += int(np.count_nonzero(np.frombuffer(chunk, dtype=np.uint8) == separator))
    return count == (header_fields - 1) * (records + 1)


def _release_layout(
    source: Any, delimiter: str | None, expected: Sequence[str]
) -> tuple[list[str], str | None]:
    """The column names of a release and the delimiter to read it with (None: guess; see
    :meth:`sdckit.config.Config.read_release`): the configured one if it splits the header into
    columns that include ``expected``, else the first of comma, tab, semicolon and pipe that does."""
    if not isinstance(source, str | os.PathLike):
        return [str(name) for name in to_polars(source).columns], delimiter
    path, label = Path(source), str(source)
    if is_dataset(source):
        path = dataset_files(source)[0]
    else:
        check_regular_file(path, label, "data file", InputError)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        try:
            return list(pl.read_parquet_schema(path)), delimiter
        except (pl.exceptions.PolarsError, OSError) as error:
            raise InputError(f"{label}: cannot read the Parquet file: {_first_line(error)}") from None
    if path.stat().st_size == 0:
        raise InputError(f"{label}: the file is empty (no header line)")
    _read_head(path, label)
    wanted = set(expected)
    first: list[str] | None = None
    for candidate in dict.fromkeys([delimiter, ",", "\t", ";", "|"]):
        if candidate is None:
            continue
        names = [name.strip() for name in _read_header(path, label, candidate)[0]]
        first = names if first is None else first
        if wanted <= set(names):
            return names, candidate
    return first or [], None


def _check_header(names: list[str], label: str, header_line: int) -> None:
    where = f"{label}:{header_line}: "
    for index, name in enumerate(names):
        if name.strip() == "":
            hint = " (does every line end with a delimiter?)" if index == len(names) - 1 else ""
            raise InputError(f"{where}column {index + 1} of the header has no name{hint}")
    positions: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        positions.setdefault(name, []).append(index + 1)
    for name, columns in positions.items():
        if len(columns) > 1:
            raise InputError(
                f"{where}column '{name}' appears more than once in the header "
                f"(columns {', '.join(map(str, columns))})"
            )


def _explain_failure(path: Path, label: str, delimiter: str, error: BaseException) -> NoReturn:
    """Raise an InputError that says why polars could not read the file, naming the line."""
    _check_utf8(path, label)
    layout = _scan_layout(path, label, delimiter)
    _raise_if_ragged(layout, label)
    raise InputError(f"{label}: cannot read the CSV file: {_first_line(error)}")


def _check_utf8(path: Path, label: str) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    offset = 0
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as error:
                line += chunk.count(b"\n", 0, max(error.start, 0))
                raise InputError(
                    f"{label}:{line}: the file is not UTF-8 text (byte {offset + max(error.start, 0)}); "
                    "convert it to UTF-8"
                ) from None
            line += chunk.count(b"\n")
            offset += len(chunk)


def _raise_if_ragged(layout: _Layout, label: str) -> None:
    ragged = np.flatnonzero((layout.record_fields != layout.header_fields) & (layout.record_fields > 0))
    if ragged.size:
        first = ragged[0]
        more = _more(ragged.size - 1, "such line", "such lines")
        raise InputError(
            f"{label}:{int(layout.record_lines[first])}: expected {layout.header_fields} fields as in the "
            f"header (line {layout.header_line}), found {int(layout.record_fields[first])}{more}"
        )


def _scan_layout(path: Path, label: str, delimiter: str, rows: np.ndarray | None = None) -> _Layout:
    """Find every record's line and field count: with polars, one line a record, when no quoted
    field spans lines; else with the csv module.

    ``rows`` (indices of records after the header) limits the counting of fields to those records;
    the others are taken to have as many fields as the header, which holds for every record whose
    last field polars found filled in without complaint.
    """
    try:
        lines = pl.read_csv(
            path,
            has_header=False,
            separator="\x00",
            quote_char=None,
            new_columns=["line"],
            infer_schema=False,
            empty_string_is_null=False,
            raise_if_empty=False,
        )
    except pl.exceptions.PolarsError:
        return _scan_layout_csv(path, label, delimiter)
    if lines.width != 1:
        return _scan_layout_csv(path, label, delimiter)
    text = lines.select(pl.col("line").str.strip_suffix("\r")).to_series()
    quoted = text.str.contains(_QUOTE, literal=True).any()
    if quoted and (text.str.count_matches(_QUOTE, literal=True) % 2 == 1).any():
        return _scan_layout_csv(path, label, delimiter)  # a quoted field spans lines
    blank = (text.is_null() | (text == "")).to_numpy()
    non_blank = np.flatnonzero(~blank)
    if non_blank.size == 0:
        raise InputError(f"{label}: the file is empty (no header line)")
    header = int(non_blank[0])
    n_records = len(text) - header - 1

    def count_fields(indices: np.ndarray) -> np.ndarray:
        chosen = text.gather(indices)
        if quoted:
            chosen = chosen.str.replace_all(_QUOTED_FIELD, "")
        return chosen.str.count_matches(delimiter, literal=True).fill_null(0).to_numpy().astype(np.int64) + 1

    header_fields = int(count_fields(np.array([header]))[0])
    if rows is None or rows.size and rows.max() >= n_records:
        rows = np.arange(n_records)
    fields = np.full(n_records, header_fields, dtype=np.int64)
    fields[rows] = count_fields(rows + header + 1)
    fields[blank[header + 1 :]] = 0
    return _Layout(
        header_line=header + 1,
        header_fields=header_fields,
        record_lines=np.arange(header + 2, len(text) + 1, dtype=np.int64),
        record_fields=fields,
    )


def _scan_layout_csv(path: Path, label: str, delimiter: str) -> _Layout:
    header_line = header_fields = 0
    lines: list[int] = []
    fields: list[int] = []
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quotechar=_QUOTE)
        previous = 0
        try:
            for row in reader:  # only when polars failed or saw a possibly ragged record
                start, previous = previous + 1, reader.line_num
                if not header_line:
                    if row:
                        header_line, header_fields = start, len(row)
                    continue
                lines.append(start)
                fields.append(len(row))
        except csv.Error as error:
            raise InputError(f"{label}:{previous + 1}: cannot read the CSV file: {error}") from None
    if not header_line:
        raise InputError(f"{label}: the file is empty (no header line)")
    return _Layout(
        header_line=header_line,
        header_fields=header_fields,
        record_lines=np.asarray(lines, dtype=np.int64),
        record_fields=np.asarray(fields, dtype=np.int64),
    )


def _check_names(
    loaded: _Loaded,
    described: list[Attribute],
    weights: str | None,
    described_at: Mapping[str, str],
    weights_at: str | None,
) -> None:
    columns = loaded.frame.columns
    listed = ", ".join(columns)
    for attribute in described:
        if attribute.name not in columns:
            hint = _did_you_mean(attribute.name, columns)
            if attribute.name in described_at:
                raise ConfigError(
                    f"{described_at[attribute.name]}: unknown attribute '{attribute.name}': "
                    f"{loaded.label} has no such column{hint} (columns: {listed})"
                )
            raise ConfigError(
                f"{loaded.label}: unknown attribute '{attribute.name}'{hint} (columns: {listed})"
            )
    if weights is not None and weights not in columns:
        where = f"{weights_at}: " if weights_at else ""
        raise ConfigError(
            f"{where}{loaded.label}: the weights column '{weights}' is not a column"
            f"{_did_you_mean(weights, columns)} (columns: {listed})"
        )


def _did_you_mean(name: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f", did you mean '{close[0]}'?" if close else ""


def _convert_columns(
    loaded: _Loaded,
    by_name: Mapping[str, Attribute],
    inferred: frozenset[str],
    weights: str | None,
    lenient: frozenset[str] = frozenset(),
) -> pl.DataFrame:
    """Give each column its type (see :func:`read_table`), raising InputError for a value that does
    not fit the described kind. The ``lenient`` columns of kind numeric, ordinal or date stay text
    when some value is not a number (a date); the columns kept as read (``loaded.kept``) stay as they
    are."""
    frame = loaded.frame
    required: list[str] = []  # must be numeric
    optional: list[str] = []  # numeric if every value is a number
    dates: list[str] = []
    optional_dates: list[str] = []
    for name, dtype in frame.schema.items():
        attribute = by_name.get(name)
        kind = None if attribute is None or name in inferred else attribute.kind
        if not _is_textual(dtype) or name in loaded.kept:
            continue
        if name in lenient and name != weights and kind in (Kind.NUMERIC, Kind.ORDINAL):
            optional.append(name)
        elif name in lenient and kind is Kind.DATE:
            optional_dates.append(name)
        elif kind is Kind.NUMERIC or name == weights:
            required.append(name)
        elif kind is Kind.DATE:
            dates.append(name)
        elif kind in (None, Kind.ORDINAL) and loaded.from_text:
            optional.append(name)
    conversions: list[pl.Series | pl.Expr] = [
        *_numeric_conversions(loaded, required, optional, weights),
        *_date_conversions(loaded, dates),
        *_date_conversions(loaded, optional_dates, strict=False),
    ]
    converted = {
        item.name if isinstance(item, pl.Series) else item.meta.output_name() for item in conversions
    }
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float() and name not in converted]
    _refuse_infinite(loaded, floats)
    # NaN is how pandas and Parquet writers store a missing number: in a typed float column it is missing
    # (a column kept as read keeps its NaN, to be written back as it was).
    conversions += [pl.col(name).fill_nan(None) for name in floats if name not in loaded.kept]
    return frame.with_columns(conversions) if conversions else frame


def _refuse_infinite(loaded: _Loaded, names: list[str]) -> None:
    """Raise for an infinite value in the typed float columns ``names``."""
    if not names:
        return
    counts = loaded.frame.select(pl.col(name).is_infinite().sum() for name in names).row(0, named=True)
    for name in names:
        if counts[name]:
            column = loaded.frame.get_column(name)
            row = int(column.is_infinite().arg_max())
            more = _more(counts[name] - 1, "such value", "such values")
            raise InputError(
                f"{loaded.where(row, name)}value must be a finite number, got {column[row]}{more}"
            )


def _as_text(name: str, strip: bool = True) -> pl.Expr:
    text = pl.col(name).cast(pl.String)
    return text.str.strip_chars() if strip else text


# Values above 2**53 may not be exact as float64, so such integer columns are parsed as integers.
_EXACT_FLOAT_LIMIT = 2.0**53
_SAMPLE_ROWS = 1000


def _numeric_conversions(
    loaded: _Loaded, required: list[str], optional: list[str], weights: str | None
) -> list[pl.Series]:
    """The numeric columns among ``required`` (raising for a value that is not a number) and
    ``optional`` (those whose every value is a number), as Int64 if every value is integral, else
    Float64 (NaN as null).

    Parsing text is what costs, so each column is parsed once, without trimming spaces first (the
    rare column with padded numbers is parsed again trimmed), and a text column is usually ruled out
    on its first rows.
    """
    frame = loaded.frame
    if optional:
        head = frame.head(_SAMPLE_ROWS)
        fits = [pl.col(name).is_null() | _number(name).is_not_null() for name in optional]
        sample = head.select(
            *(fit.all().alias(name) for fit, name in zip(fits, optional, strict=True)),
            *(
                ((fit | _not_finite(name)).all() & _not_finite(name).any()).alias(f"\0{name}")
                for fit, name in zip(fits, optional, strict=True)
            ),
        ).row(0, named=True)
        _warn_not_finite(loaded, [name for name in optional if not sample[name] and sample[f"\0{name}"]])
        optional = [name for name in optional if sample[name]]
    names = required + optional
    if not names:
        return []
    present = frame.select(pl.col(name).is_not_null().sum() for name in names).row(0, named=True)
    # Most numeric columns hold integers: parsed as Int64 at once they give the very column the
    # float parse below ends with (Int64 parsing accepts a subset of what float parsing does, to the
    # same value), so only the columns where some value is not an integer go on.
    integers = frame.select(_as_text(name, strip=False).cast(pl.Int64, strict=False) for name in names)
    parsed_integers = integers.select(pl.all().is_not_null().sum()).row(0, named=True)
    conversions = [
        integers.get_column(name)
        for name in names
        if parsed_integers[name] == present[name] and not (present[name] == 0 and name in optional)
    ]
    names = [name for name in names if parsed_integers[name] < present[name]]
    if not names:
        return conversions
    numbers = frame.select(_number(name, strip=False) for name in names)
    parsed = numbers.select(pl.all().is_not_null().sum()).row(0, named=True)
    padded = [name for name in names if parsed[name] < present[name]]
    if padded:
        trimmed = frame.select(_number(name) for name in padded)
        numbers = numbers.with_columns(trimmed.get_columns())
        parsed.update(numbers.select(pl.col(padded).is_not_null().sum()).row(0, named=True))
        _warn_not_finite(
            loaded, [name for name in padded if name in optional and parsed[name] < present[name]]
        )
    integral = numbers.select(
        (pl.all().is_finite() & (pl.all() == pl.all().floor())).sum(),
    ).row(0, named=True)
    largest = numbers.select(pl.all().abs().max()).row(0, named=True)
    for name in names:
        if parsed[name] < present[name]:
            if name in required:
                _raise_not_numeric(loaded, name, is_weights=name == weights)
            continue
        if present[name] == 0 and name in optional:
            continue  # an empty column gives no reason to call it numeric
        number = numbers.get_column(name)
        if integral[name] < present[name]:
            conversions.append(number.fill_nan(None))
        elif largest[name] is None or largest[name] < _EXACT_FLOAT_LIMIT:
            conversions.append(number.cast(pl.Int64))
        else:
            exact = frame.select(_as_text(name).cast(pl.Int64, strict=False)).to_series()
            conversions.append(exact if exact.null_count() == frame.height - present[name] else number)
    return conversions


def _number(name: str, strip: bool = True) -> pl.Expr:
    """The text of column ``name`` as a finite float, null where it is not one: 'NaN', 'inf' and
    '1e999' are not numbers here (only the missing-value tokens mean missing)."""
    number = _as_text(name, strip).cast(pl.Float64, strict=False)
    return pl.when(number.is_finite()).then(number).alias(name)


def _not_finite(name: str) -> pl.Expr:
    """Whether a text spells a number that is not finite (NaN, inf, 1e999)."""
    number = _as_text(name).cast(pl.Float64, strict=False)
    return (number.is_not_null() & ~number.is_finite()).fill_null(False)


def _missing_hint(loaded: _Loaded, value: str) -> str:
    tokens = ", ".join(repr(token) for token in loaded.tokens) or "none"
    return f"; only data.missing_values ({tokens}) mean missing: add {value.strip()!r} to them if it does"


def _warn_not_finite(loaded: _Loaded, names: list[str]) -> None:
    """Warn about the undescribed columns that stay text only because some values spell NaN or
    infinity: a number column quietly read as categories otherwise."""
    if not names:
        return
    counts = loaded.frame.select(
        (pl.col(name).is_not_null() & _number(name).is_null()).sum().alias(f"bad {name}") for name in names
    ).hstack(loaded.frame.select(_not_finite(name).sum() for name in names))
    for name in names:
        spelled = counts.get_column(name).item()
        if spelled and spelled == counts.get_column(f"bad {name}").item():
            row = int(loaded.frame.select(_not_finite(name).arg_max()).item())
            value = loaded.frame.get_column(name).cast(pl.String)[row]
            warnings.warn(
                f"{loaded.where(row, name)}{spelled} value{'s' if spelled != 1 else ''} such as "
                f"{value!r} spell a number that is not finite, so the column is read as text "
                f"categories{_missing_hint(loaded, value)}",
                SdcWarning,
                stacklevel=6,
            )


def _raise_not_numeric(loaded: _Loaded, name: str, is_weights: bool = False) -> None:
    bad = loaded.frame.select(pl.arg_where(pl.col(name).is_not_null() & _number(name).is_null())).to_series()
    row = int(bad[0])
    value = loaded.frame.get_column(name).cast(pl.String)[row]
    more = _more(len(bad) - 1, "non-numeric value", "non-numeric values")
    if is_weights:
        where, what = loaded.where(row, name, column_word="weights column"), "sampling weights"
    else:
        where, what = loaded.where(row, name), "a numeric attribute"
    if loaded.frame.select(_not_finite(name).gather(row)).item():
        raise InputError(
            f"{where}a value in {what} must be a finite number, got {value!r}{more}"
            f"{_missing_hint(loaded, value)}"
        )
    raise InputError(f"{where}non-numeric value {value!r} in {what}{more}")


def _date_conversions(loaded: _Loaded, names: list[str], strict: bool = True) -> list[pl.Expr]:
    """The ``names`` columns parsed as dates, raising for a value that is not a date (``strict``) or
    leaving such a column as it is."""
    conversions: list[pl.Expr] = []
    for name in names:
        parsed = _as_text(name).str.to_date(strict=False)
        try:
            failed = loaded.frame.select(
                pl.arg_where(pl.col(name).is_not_null() & parsed.is_null())
            ).to_series()
        except pl.exceptions.PolarsError:
            failed = loaded.frame.select(pl.arg_where(pl.col(name).is_not_null())).to_series()
        if len(failed) and not strict:
            continue
        if len(failed):
            row = int(failed[0])
            value = loaded.frame.get_column(name).cast(pl.String)[row]
            raise InputError(
                f"{loaded.where(row, name)}value {value!r} is not a date in the format of the column's "
                "first date (write dates as YYYY-MM-DD)"
            )
        conversions.append(parsed.alias(name))
    return conversions


def _check_weights(frame: pl.DataFrame, weights: str, loaded: _Loaded) -> None:
    column = frame.get_column(weights)
    word = "weights column"
    if not column.dtype.is_numeric():
        raise InputError(f"{loaded.label}: {word} '{weights}' must hold numbers, but it holds {column.dtype}")
    checks = (
        (column.is_null(), "has no value"),
        (~column.cast(pl.Float64).is_finite(), "holds {value}, not a finite number"),
        (column < 0, "holds the negative weight {value}"),
    )
    for failing, message in checks:
        rows = np.flatnonzero(failing.fill_null(False).to_numpy())
        if rows.size:
            row = int(rows[0])
            more = _more(rows.size - 1, "such record", "such records")
            raise InputError(
                f"{loaded.where(row, weights, column_word=word)}{message.format(value=column[row])}{more}"
            )


def _warn_unused_value_weights(
    frame: pl.DataFrame, attributes: Iterable[Attribute], label: str, described_at: Mapping[str, str]
) -> None:
    """Warn about weights given for values that never occur: most likely a misspelt value."""
    weighted = [a for a in attributes if a.value_weights and not a.range_weights]
    # In a text column a value occurs iff some value equals it: one parallel pass for all of them,
    # much cheaper than the distinct values of every column.
    textual = [attribute for attribute in weighted if frame.schema[attribute.name] == pl.String]
    found = (
        frame.select(
            (pl.col(attribute.name) == value).any().alias(f"{number}\0{value}")
            for number, attribute in enumerate(textual)
            for value in attribute.value_weights
        ).row(0)
        if textual
        else ()
    )
    seen = iter(found)
    present = {
        attribute.name: {value for value in attribute.value_weights if next(seen)} for attribute in textual
    }
    for attribute in weighted:
        if attribute.name in present:
            occurring = present[attribute.name]
        else:
            column = frame.get_column(attribute.name).drop_nulls().unique()
            occurring = set(value_strings(column).to_list())
        unused = [value for value in attribute.value_weights if value not in occurring]
        if not unused:
            continue
        where = described_at.get(attribute.name, label)
        quoted = ", ".join(f"'{value}'" for value in unused[:10]) + (", ..." if len(unused) > 10 else "")
        what = (
            f"value {quoted}, which never occurs"
            if len(unused) == 1
            else f"values {quoted}, which never occur"
        )
        warnings.warn(
            f"{where}: attribute '{attribute.name}': a weight is given for {what} in {label}",
            SdcWarning,
            stacklevel=4,
        )


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file all at once or not at all.

    Yields a temporary path in the directory of ``path`` (hidden, ending in the same extension, so
    writers that choose the format by extension still work); when the ``with`` block ends normally
    the temporary file is renamed to ``path`` (atomic on POSIX and Windows), and when it raises the
    temporary file is deleted and ``path`` is left as it was.
    """
    target = Path(path)
    directory = target.parent
    if not directory.is_dir():
        raise InputError(f"{target}: cannot write: the directory '{directory}' does not exist")
    temporary = directory / f".{target.name}.{secrets.token_hex(6)}.tmp{target.suffix}"
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_table(frame: pl.DataFrame | Table | Any, path: str | os.PathLike[str]) -> None:
    """Write a table to CSV (``.csv``, or ``.tsv`` tab-separated; missing values as empty fields) or
    Parquet (``.parquet``, ``.pq``), chosen by the extension, atomically (see :func:`atomic_write`).

    In Parquet, a column of a :class:`Table` read from a Parquet file that still has the polars type
    it was read as is written with its Arrow type in that file (:attr:`Attribute.stored_type`): an
    unchanged column comes back with the type it had."""
    data = frame.data if isinstance(frame, Table) else to_polars(frame)
    stored = _stored_types(frame, data) if isinstance(frame, Table) else {}
    target = Path(path)
    suffix = target.suffix.lower()
    writer: Callable[[Path], Any]
    if suffix in PARQUET_SUFFIXES and stored:

        def writer(temporary: Path) -> None:
            _write_parquet_as_stored(data, stored, temporary)
    elif suffix in PARQUET_SUFFIXES:
        # zstd at level 1: files as small as at polars' default level, written in half the time.

        def writer(temporary: Path) -> None:
            data.write_parquet(temporary, compression="zstd", compression_level=1)
    elif suffix in (".csv", ".tsv"):
        separator = "\t" if suffix == ".tsv" else ","

        def writer(temporary: Path) -> None:
            data.write_csv(temporary, separator=separator)
    else:
        raise ConfigError(
            f"{path}: cannot tell the format from the extension {suffix or '(none)'!r}; "
            "use .csv, .tsv, .parquet or .pq"
        )
    try:
        with atomic_write(target) as temporary:
            writer(temporary)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise InputError(f"{path}: cannot write: {_first_line(error)}") from None


def _stored_types(table: Table, data: pl.DataFrame) -> dict[str, Any]:
    """The Arrow type to write each column of ``table`` with: the type in the Parquet file it was
    read from, for the columns that still have the polars type that type reads as."""
    import pyarrow as pa

    stored = {}
    for attribute in table.schema:
        arrow_type = attribute.stored_type
        if arrow_type is None or attribute.name not in data.columns:
            continue
        read_as = pl.from_arrow(pa.table({attribute.name: pa.array([], type=arrow_type)})).dtypes[0]
        if data.schema[attribute.name] == read_as:
            stored[attribute.name] = arrow_type
    return stored


def _write_parquet_as_stored(data: pl.DataFrame, stored: Mapping[str, Any], path: Path) -> None:
    """Write ``data`` to Parquet with the ``stored`` Arrow type of some of its columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = data.to_arrow()
    for name, arrow_type in stored.items():
        index = arrow.schema.get_field_index(name)
        try:
            column = arrow.column(index).cast(arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue  # values that no longer fit it (more categories than its index type counts)
        arrow = arrow.set_column(index, pa.field(name, arrow_type), column)
    # zstd at level 1, as polars writes the other releases.
    pq.write_table(arrow, path, compression="zstd", compression_level=1)
