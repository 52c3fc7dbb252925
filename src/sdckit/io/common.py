"""What the readers share: the loaded frame and its layout, missing-value tokens, the
checks every format makes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import InputError
from sdckit.table import Kind

PARQUET_SUFFIXES = (".parquet", ".pq")
DELIMITER_CANDIDATES = ",;\t|"
DEFAULT_MISSING_VALUES = ("", "NA")
FRAME_LABEL = "<data frame>"


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
    # Most columns hold no token: find those that do in one pass of comparisons (much cheaper than
    # the hashed is_in, and than rebuilding every column), and rebuild only them.
    values = list(dict.fromkeys(tokens))
    holds = frame.select(
        (pl.any_horizontal(pl.col(name) == value for value in values) if len(values) <= 4 else
         pl.col(name).is_in(values)).any().alias(name)
        for name in text_columns
    ).row(0, named=True)  # fmt: skip
    text_columns = [name for name in text_columns if holds[name]]
    if not text_columns:
        return frame
    return frame.with_columns(
        pl.when(pl.col(name).is_in(list(tokens))).then(None).otherwise(pl.col(name)).alias(name)
        for name in text_columns
    )


def _more(count: int, singular: str, plural: str) -> str:
    """`` (3 more such lines)`` for a message, empty if there are no more."""
    if count <= 0:
        return ""
    return f" ({count} more {singular if count == 1 else plural})"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
