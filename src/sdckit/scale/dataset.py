"""Microdata read in partitions: a CSV file, a Parquet file or a partitioned Parquet data set.

A :class:`Dataset` is a list of :class:`Partition` s, each small enough to hold in memory (about
``chunk_rows`` records). A partition is a plain description (a path and a range), so it can be sent
to a Dask worker, which reads it itself: no record passes through the process that plans the run.

- A Parquet data set (a directory, searched recursively, or a glob pattern): each file is split into
  ranges of ``chunk_rows`` rows (the file's metadata says how many rows it has, so no data is read to
  plan).
- A Parquet file: the same, one file.
- A CSV file: split into byte ranges of about ``chunk_rows`` records each (the size of a record is
  estimated from the first 64 KiB), each range starting after a line break, as Dask's ``read_csv``
  splits files. A line break inside a quoted field would then split a record: such files are refused
  with a message (convert the file to Parquet first).

Every partition is validated as :func:`sdckit.io.read_table` validates a whole file, with the
configuration's attributes; messages name the file and the record number in the whole source. The kind
of an attribute the configuration leaves to inference is taken from the first partition and then
required of every other, so that all partitions have the same column types.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from sdckit.errors import InputError
from sdckit.io import PARQUET_SUFFIXES, FrameChunk, dataset_files, is_dataset, sniff_delimiter
from sdckit.io.read import _read_table
from sdckit.table import Table

DEFAULT_CHUNK_ROWS = 1_000_000
_SAMPLE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Partition:
    """One part of a data set: rows ``start .. start+length`` of a Parquet file, or bytes
    ``start .. start+length`` of a CSV file (whole lines). ``first_record`` is the number (0-based) of its
    first record in the whole data set, or None where it is not known before reading (CSV)."""

    index: int
    path: str
    format: str  # "parquet" or "csv"
    start: int
    length: int
    first_record: int | None
    header: tuple[str, ...] = ()
    delimiter: str = ","

    @property
    def label(self) -> str:
        return self.path

    def read(self, columns: list[str] | None = None, tokens: tuple[str, ...] = ()) -> pl.DataFrame:
        """The records of this partition as read (CSV: every column text, missing tokens null)."""
        try:
            if self.format == "parquet":
                scan = pl.scan_parquet(self.path)
                if columns is not None:
                    scan = scan.select(columns)
                return scan.slice(self.start, self.length).collect()
            with open(self.path, "rb") as handle:
                handle.seek(self.start)
                raw = handle.read(self.length)
            frame = pl.read_csv(
                io.BytesIO(raw),
                has_header=False,
                new_columns=list(self.header),
                separator=self.delimiter,
                quote_char='"',
                infer_schema=False,
                null_values=[token for token in tokens if token] or None,
                empty_string_is_null="" in tokens,
            )
            if columns is not None:  # polars refuses column names with has_header=False
                frame = frame.select(columns)
        except (pl.exceptions.PolarsError, OSError) as error:
            where = (
                f"bytes {self.start:,}..{self.start + self.length:,}"
                if self.format == "csv"
                else (f"rows {self.start + 1:,}..{self.start + self.length:,}")
            )
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise InputError(
                f"{self.path}: cannot read partition {self.index} ({where}): {message}"
            ) from None
        if self.format == "csv" and frame.height:
            # A blank line reads as a record of nulls: drop it, as read_table skips blank lines.
            frame = frame.filter(~pl.all_horizontal(pl.all().is_null()))
        return frame


@dataclass(frozen=True)
class Dataset:
    """The partitions of a source, in record order, and what messages call it."""

    label: str
    partitions: tuple[Partition, ...]
    columns: tuple[str, ...]

    @property
    def format(self) -> str:
        return self.partitions[0].format

    def with_first_records(self, heights: list[int]) -> Dataset:
        """The same partitions, numbered from the record counts that a first pass found."""
        if len(heights) != len(self.partitions):
            raise ValueError("one height per partition")
        first, parts = 0, []
        for partition, height in zip(self.partitions, heights, strict=True):
            parts.append(replace(partition, first_record=first))
            first += height
        return replace(self, partitions=tuple(parts))


def open_dataset(
    source: str | os.PathLike[str], chunk_rows: int = DEFAULT_CHUNK_ROWS, delimiter: str | None = None
) -> Dataset:
    """Plan the partitions of ``source`` (see the module documentation) without reading its records."""
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise InputError(f"chunk rows must be a whole number >= 1, got {chunk_rows!r}")
    label = str(source)
    if is_dataset(source):
        return _parquet_dataset(label, dataset_files(source), chunk_rows)
    path = Path(source)
    if not path.exists():
        raise InputError(f"{label}: no such file")
    if not path.is_file():
        raise InputError(f"{label}: not a regular file")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return _parquet_dataset(label, [path], chunk_rows)
    return _csv_dataset(label, path, chunk_rows, delimiter)


def _parquet_dataset(label: str, files: list[Path], chunk_rows: int) -> Dataset:
    import pyarrow.parquet as pq

    partitions: list[Partition] = []
    columns: tuple[str, ...] | None = None
    first = 0
    for path in files:
        try:
            metadata = pq.read_metadata(path)
            names = tuple(pq.read_schema(path).names)
        except (OSError, ValueError) as error:
            raise InputError(f"{path}: cannot read the Parquet file: {str(error).splitlines()[0]}") from None
        if columns is None:
            columns = names
        elif set(names) != set(columns):
            extra = sorted(set(names) ^ set(columns))
            raise InputError(
                f"{path}: its columns differ from those of {files[0]} "
                f"(in one, not the other: {', '.join(extra)})"
            )
        rows = metadata.num_rows
        for start in range(0, rows, chunk_rows):
            length = min(chunk_rows, rows - start)
            partitions.append(Partition(len(partitions), str(path), "parquet", start, length, first + start))
        first += rows
    if not partitions:
        raise InputError(f"{label}: the data set has no records")
    return Dataset(label, tuple(partitions), columns or ())


def _csv_dataset(label: str, path: Path, chunk_rows: int, delimiter: str | None) -> Dataset:
    size = path.stat().st_size
    with open(path, "rb") as handle:
        sample = handle.read(_SAMPLE_BYTES)
    if not sample.strip():
        raise InputError(f"{label}: the file is empty (no header line)")
    if b"\0" in sample:
        raise InputError(f"{label}: the file holds NUL bytes: it is not a CSV text file")
    text = sample.decode("utf-8", errors="replace")
    delimiter = delimiter or sniff_delimiter(text)
    header_end = sample.find(b"\n")
    if header_end < 0:
        if size > len(sample):
            raise InputError(f"{label}: the header line is longer than 64 KiB")
        header_end = len(sample)
    header_line = sample[:header_end].decode("utf-8", errors="strict").rstrip("\r")
    header = tuple(
        pl.read_csv(io.StringIO(header_line + "\n"), separator=delimiter, has_header=True, n_rows=0).columns
    )
    body = sample[header_end + 1 :]
    if body.count(b'"') and _quoted_line_breaks(body, delimiter):
        raise InputError(
            f"{label}: a quoted field holds a line break, so the file cannot be read in parts; "
            "convert it to Parquet first (sdckit reads Parquet data sets in parts without this limit)"
        )
    lines = max(body.count(b"\n"), 1)
    bytes_per_record = max(len(body) / lines, 1.0)
    target = max(int(chunk_rows * bytes_per_record), 1)
    partitions: list[Partition] = []
    start = header_end + 1
    with open(path, "rb") as handle:
        while start < size:
            end = min(start + target, size)
            if end < size:
                handle.seek(end)
                rest = handle.readline()
                end += len(rest)
            partitions.append(
                Partition(len(partitions), str(path), "csv", start, end - start, None, header, delimiter)
            )
            start = end
    if not partitions:
        raise InputError(f"{label}: the file has a header but no records")
    return Dataset(label, tuple(partitions), header)


def _quoted_line_breaks(body: bytes, delimiter: str) -> bool:
    """Whether a quoted field in ``body`` (whole lines) spans a line break."""
    inside = False
    for character in body.decode("utf-8", errors="replace"):
        if character == '"':
            inside = not inside
        elif character == "\n" and inside:
            return True
    return False


@dataclass(frozen=True)
class PartitionReader:
    """Reads and validates partitions with a configuration's attributes, as ``Config.read`` reads a
    file (without hierarchies: the run builds those once, from the aggregate). ``attributes`` are
    those of the columns read; ``pinned`` says their kinds are settled (no more inference)."""

    attributes: tuple[Any, ...]
    missing_values: tuple[str, ...]
    weights: str | None
    inferred_kinds: frozenset[str]
    lenient: frozenset[str] = frozenset()

    @classmethod
    def of(cls, config: Any, columns: list[str], release: bool = False) -> PartitionReader:
        """A reader of ``columns`` under ``config``; ``release``: read a release sdckit wrote, as
        ``Config.read_release`` reads one (quasi-identifiers without hierarchies, generalized labels
        read as text)."""
        from sdckit.table import Role

        wanted = set(columns)
        attributes = tuple(attribute for attribute in config.attributes if attribute.name in wanted)
        lenient: frozenset[str] = frozenset()
        if release:
            attributes = tuple(
                replace(attribute, hierarchy=None) if attribute.role is Role.QUASI_IDENTIFIER else attribute
                for attribute in attributes
            )
            lenient = frozenset(a.name for a in attributes if a.role is Role.QUASI_IDENTIFIER)
        weights = config.data.weights if config.data.weights in wanted else None
        return cls(
            attributes, tuple(config.data.missing_values), weights, config.inferred_kinds & wanted, lenient
        )

    def read(self, partition: Partition, columns: list[str], first_record: int | None = None) -> Table:
        # Only an empty field is missing in every column; the other tokens are applied to the described
        # columns alone, the others kept as read (as Config.read keeps them).
        frame = partition.read(columns, tuple(token for token in self.missing_values if token == ""))
        first = partition.first_record if first_record is None else first_record
        chunk = FrameChunk(frame, partition.label, first or 0, from_text=partition.format == "csv")
        wanted = set(columns)
        try:
            return self._validate(chunk, wanted)
        except InputError as error:
            if partition.format != "csv":
                raise
            raise InputError(_with_line(str(error), partition)) from None

    def _validate(self, chunk: FrameChunk, wanted: set[str]) -> Table:
        return _read_table(
            chunk,
            # Value weights are checked once, on the aggregate (a partition may lack a value).
            attributes=[replace(a, value_weights={}) for a in self.attributes if a.name in wanted],
            delimiter=None,
            missing_values=self.missing_values,
            weights=self.weights if self.weights in wanted else None,
            inferred_kinds=self.inferred_kinds & wanted,
            as_text_if_not_numeric=self.lenient & wanted,
            keep_undescribed=True,
        )

    def attributes_of(self, names: list[str]) -> list[Any]:
        by_name = {attribute.name: attribute for attribute in self.attributes}
        return [by_name[name] for name in names]

    def pinned(self, table: Table) -> PartitionReader:
        """This reader with every column's kind as ``table`` (the first partition) has it."""
        described = {attribute.name: attribute for attribute in self.attributes}
        attributes = tuple(
            replace(described[name], kind=table.schema[name].kind)
            if name in described
            else table.schema[name]
            for name in table.data.columns
        )
        return replace(
            self,
            attributes=attributes,
            inferred_kinds=frozenset(),
            weights=table.weights,
            lenient=frozenset(),
        )


def _with_line(message: str, partition: Partition) -> str:
    """A message about record N of a CSV partition, pointing at its line in the file instead (found
    only now, on the way out: the lines before the partition are counted, then its blank lines)."""
    import re

    prefix = f"{partition.label}: record "
    match = re.match(re.escape(prefix) + r"([\d,]+): ", message)
    if match is None:
        return message
    row = int(match.group(1).replace(",", "")) - (partition.first_record or 0)
    with open(partition.path, "rb") as handle:
        before = handle.read(partition.start).count(b"\n")
        lines = handle.read(partition.length).split(b"\n")
    seen = 0
    for number, line in enumerate(lines, start=before + 1):
        if line.strip(b"\r"):
            seen += 1
            if seen == row:
                return f"{partition.label}:{number}: {message[match.end() :]}"
    return message
