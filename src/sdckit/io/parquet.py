"""Parquet files and partitioned Parquet data sets: their stored types, loading, and
writing a release with the types it was read with."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from sdckit._files import available_memory
from sdckit.errors import InputError
from sdckit.io.common import PARQUET_SUFFIXES, _check_not_empty, _first_line, _Loaded, _typed
from sdckit.table import Table


def _load_parquet(
    path: Path, label: str, tokens: tuple[str, ...], described: frozenset[str] | None = None
) -> _Loaded:
    try:
        frame = pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise InputError(f"{label}: cannot read the Parquet file: {_first_line(error)}") from None
    _check_not_empty(frame, label, "file")
    loaded = _typed(frame, label, tokens, described, from_text=False)
    loaded.stored_types = _stored_types_of(path, frame.columns)
    return loaded


class _Footer:
    """The footer of a Parquet file, its bytes kept when the file is read, parsed into the Arrow type
    of every column (by pyarrow, imported then) only when a release is written with them: a command
    that writes no Parquet release (``sdckit risk``) never imports pyarrow. An empty mapping if the
    footer cannot be read."""

    def __init__(self, path: Path) -> None:
        self._tail = _footer_bytes(path)
        self._types: dict[str, Any] | None = None

    def types(self) -> dict[str, Any]:
        if self._types is None:
            self._types = _arrow_types(self._tail)
        return self._types


@dataclass(frozen=True)
class StoredType:
    """The Arrow type of column ``name`` in a Parquet file (:attr:`sdckit.table.Attribute.stored_type`),
    read from its footer on first use (:meth:`resolve`; None if the footer has no such column)."""

    footer: _Footer
    name: str

    def resolve(self) -> Any:
        return self.footer.types().get(self.name)


def _stored_types_of(path: Path, columns: list[str]) -> dict[str, StoredType]:
    footer = _Footer(path)
    return {name: StoredType(footer, name) for name in columns}


def _footer_bytes(path: Path) -> bytes | None:
    """The smallest Parquet file with the footer of ``path``: its magic, footer, footer length and
    magic (what reading its schema reads), or None if it has none."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size < 12:
                return None
            handle.seek(size - 8)
            end = handle.read(8)
            length = int.from_bytes(end[:4], "little")
            if end[4:] != b"PAR1" or length + 12 > size:
                return None
            handle.seek(size - 8 - length)
            return b"PAR1" + handle.read(length) + end
    except OSError:
        return None


def _arrow_types(tail: bytes | None) -> dict[str, Any]:
    """The Arrow type of every column, from a footer (:func:`_footer_bytes`)."""
    if tail is None:
        return {}
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(pa.BufferReader(tail))
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
    loaded.stored_types = _stored_types_of(files[0], frame.columns)
    return loaded


def _stored_types(table: Table, data: pl.DataFrame) -> dict[str, Any]:
    """The Arrow type to write each column of ``table`` with: the type in the Parquet file it was
    read from, for the columns that still have the polars type that type reads as."""
    import pyarrow as pa

    stored = {}
    for attribute in table.schema:
        arrow_type = attribute.stored_type
        if isinstance(arrow_type, StoredType):
            arrow_type = arrow_type.resolve()
        if arrow_type is None or attribute.name not in data.columns:
            continue
        empty = pl.from_arrow(pa.table({attribute.name: pa.array([], type=arrow_type)}))
        read_as = cast(pl.DataFrame, empty).dtypes[0]  # an Arrow table reads as a DataFrame
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
