"""Reading a data file or a data frame into a :class:`~sdckit.table.Table`: the columns a
configuration describes converted to their kinds (numbers, dates, text), the others kept as
read, with one message per problem that names the file, line and attribute."""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit._files import check_regular_file
from sdckit.errors import ConfigError, InputError, SdcWarning, shown
from sdckit.io.common import (
    DEFAULT_MISSING_VALUES,
    FRAME_LABEL,
    PARQUET_SUFFIXES,
    FrameChunk,
    _apply_missing_values,
    _check_not_empty,
    _first_line,
    _kind_of,
    _Loaded,
    _more,
    _typed,
)
from sdckit.io.csv import _load_csv, _read_head, _read_header
from sdckit.io.frames import to_polars
from sdckit.io.parquet import _load_dataset, _load_parquet, dataset_files, is_dataset
from sdckit.table import Attribute, Kind, Schema, Table, _is_textual, value_strings


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
    numeric = frozenset(
        a.name
        for a in described
        if a.kind is Kind.NUMERIC and a.name not in inferred and a.name not in lenient
    )
    loaded = _load(source, delimiter, tokens, kept_as_read, numeric)
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


# The characters polars' str.strip_chars() removes (Unicode White_Space, as Rust's char::is_whitespace).
_WHITE_SPACE = [
    *"\t\n\x0b\x0c\r \x85\xa0\u1680",
    *(chr(code) for code in range(0x2000, 0x200B)),
    *"\u2028\u2029\u202f\u205f\u3000",
]


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
    # A value changes only if it holds a white-space character: one multi-pattern search a column
    # (several times cheaper than stripping every value) leaves the columns that may change.
    plain = [name for name in textual if frame.schema[name] == pl.String]
    if plain:
        maybe = frame.select(pl.col(name).str.contains_any(_WHITE_SPACE).any() for name in plain)
        spaced = maybe.row(0, named=True)
        textual = [name for name in textual if spaced.get(name, True)]
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


def _load(
    source: Any,
    delimiter: str | None,
    tokens: tuple[str, ...],
    described: frozenset[str] | None = None,
    numeric: frozenset[str] = frozenset(),
) -> _Loaded:
    """The frame of ``source`` as read, missing-value tokens applied; ``described``: the columns to
    read as described, the others kept as read (None: every column is read as described);
    ``numeric``: the columns described as numbers (a CSV file's may be parsed while read)."""
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
        return _load_csv(path, label, delimiter, tokens, described, numeric)
    if type(source).__module__.startswith("pandas") and hasattr(source, "columns"):
        names = [str(name) for name in source.columns]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise InputError(f"{FRAME_LABEL}: column '{duplicated[0]}' appears more than once")
    frame = to_polars(source)
    _check_not_empty(frame, FRAME_LABEL, "data frame")
    return _typed(frame, FRAME_LABEL, tokens, described, from_text=False)


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
            first = column.is_infinite().arg_max()
            assert first is not None  # the column has such values (counted above)
            row = int(first)
            more = _more(counts[name] - 1, "such value", "such values")
            raise InputError(
                f"{loaded.where(row, name)}value must be a finite number, "
                f"got {shown(column[row], quoted=False)}{more}"
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
    return (
        f"; only data.missing_values ({tokens}) mean missing: add {shown(value.strip())} to them if it does"
    )


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
                f"{shown(value)} spell a number that is not finite, so the column is read as text "
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
            f"{where}a value in {what} must be a finite number, got {shown(value)}{more}"
            f"{_missing_hint(loaded, value)}"
        )
    raise InputError(f"{where}non-numeric value {shown(value)} in {what}{more}")


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
                f"{loaded.where(row, name)}value {shown(value)} is not a date in the format of the column's "
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
        quoted = ", ".join(shown(str(value)) for value in unused[:10]) + (", ..." if len(unused) > 10 else "")
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
