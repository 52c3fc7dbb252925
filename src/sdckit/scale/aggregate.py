"""The two passes of a run over partitions: records to distinct patterns, and results back to records.

Pass 1 (:func:`aggregate`) reads every partition, validates it, and groups its records by the values
of the columns a method reads (nulls as values), keeping per pattern the number of records, the sum of
their sampling weights and the number of its first record; partial results are combined along the
engine's tree. The patterns are then put in the order of their first records, which is the order in
which an in-memory run meets them, so that a method run on the aggregate breaks its ties as it would
on the records.

Pass 2 (:func:`map_back`) reads every partition again, joins each record to its pattern's result and
writes one Parquet part per partition, in record order.

Memory is bounded by the aggregate (one row per distinct pattern), not by the records; an aggregate
that would not fit in memory is refused with its size, rather than left to swap.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit._files import _size_text as describe_bytes
from sdckit._files import available_memory
from sdckit.context import ProgressCallback
from sdckit.errors import InputError
from sdckit.frequency import merge_pattern_counts
from sdckit.io.read import _warn_unused_value_weights
from sdckit.scale.dataset import Dataset, Partition, PartitionReader
from sdckit.scale.engine import Engine
from sdckit.table import Schema, Table

COUNT = "__records"
WEIGHT = "__weight"
FIRST = "__first"
POSITIVE = "__positive"
_PIN_ROWS = 10_000  # rows of a Parquet file read to settle the kinds of its columns
_SHIFT = 1 << 40  # partition index and row are packed into one integer until the offsets are known


@dataclass(frozen=True)
class _Task:
    reader: PartitionReader
    keys: tuple[str, ...]
    weights: str | None
    memory_budget: int | None


@dataclass(frozen=True)
class Partial:
    """Patterns of some partitions, and how many records each partition holds."""

    frame: pl.DataFrame
    heights: dict[int, int]


def _group(frame: pl.DataFrame, task: _Task) -> pl.DataFrame:
    keys = list(task.keys) + ([POSITIVE] if task.weights else [])
    return merge_pattern_counts(frame, keys, COUNT, FIRST, WEIGHT if task.weights else None)


def _partial(partition: Partition, task: _Task) -> Partial:
    columns = list(task.keys) + ([task.weights] if task.weights and task.weights not in task.keys else [])
    table = task.reader.read(partition, columns, first_record=partition.first_record)
    frame = table.data.with_columns(
        pl.lit(1, dtype=pl.Int64).alias(COUNT),
        (pl.int_range(pl.len(), dtype=pl.Int64) + partition.index * _SHIFT).alias(FIRST),
    )
    if task.weights:
        weight = pl.col(task.weights).cast(pl.Float64)
        frame = frame.with_columns(weight.alias(WEIGHT), (weight > 0).alias(POSITIVE))
    grouped = _group(frame, task)
    _check_fits(grouped, task)
    return Partial(grouped, {partition.index: table.data.height})


def _combine_with(task: _Task) -> Callable[[Partial, Partial], Partial]:
    return _Combine(task)


@dataclass(frozen=True)
class _Combine:
    task: _Task

    def __call__(self, left: Partial, right: Partial) -> Partial:
        frame = _group(pl.concat([left.frame, right.frame], how="vertical"), self.task)
        _check_fits(frame, self.task)
        return Partial(frame, {**left.heights, **right.heights})


def _check_fits(frame: pl.DataFrame, task: _Task) -> None:
    budget = task.memory_budget
    if budget is None:
        return
    size = frame.estimated_size()
    if size * 4 > budget:
        raise InputError(
            f"the distinct patterns of {', '.join(task.keys)} hold {frame.height:,} rows "
            f"({describe_bytes(int(size))}) and keep growing: the aggregate and the work on it would need "
            "more than "
            f"the available memory ({describe_bytes(budget)}). Measure fewer or coarser attributes, or use a "
            "machine (or Dask workers) with more memory"
        )


@dataclass(frozen=True)
class Aggregate:
    """The distinct patterns of a data set over ``keys``: ``frame`` holds the key columns, ``COUNT``
    (records), ``WEIGHT`` (sum of sampling weights, if any) and ``FIRST`` (number of the first record),
    in the order of first records. ``table`` is the patterns as a :class:`Table` (key columns only,
    schema and hierarchies of the configuration); ``dataset`` has its partitions numbered."""

    frame: pl.DataFrame
    table: Table
    dataset: Dataset
    reader: PartitionReader
    weights: str | None

    @property
    def multiplicity(self) -> np.ndarray:
        return self.frame.get_column(COUNT).to_numpy().astype(np.int64)

    @property
    def first_record(self) -> np.ndarray:
        return self.frame.get_column(FIRST).to_numpy().astype(np.int64)

    def counts(self) -> np.ndarray:
        """What the methods count per pattern: the sum of sampling weights, or else the records."""
        if self.weights:
            return self.frame.get_column(WEIGHT).to_numpy().astype(np.float64)
        return self.multiplicity.astype(np.float64)

    @property
    def n_records(self) -> int:
        return int(self.multiplicity.sum())


def pinned_reader(dataset: Dataset, config: Any, release: bool = False) -> PartitionReader:
    """A reader of every column whose kinds are those of the first partition."""
    reader = PartitionReader.of(config, list(dataset.columns), release=release)
    first = dataset.partitions[0]
    if first.format == "parquet":
        # The file's types settle the kinds: a slice of it says what the whole would.
        first = replace(first, length=min(first.length, _PIN_ROWS))
    table = reader.read(first, list(dataset.columns), first_record=first.first_record or 0)
    return reader.pinned(table)


def aggregate(
    dataset: Dataset,
    config: Any,
    keys: list[str],
    engine: Engine,
    progress: ProgressCallback | None = None,
    release: bool = False,
) -> Aggregate:
    """Pass 1: the distinct patterns of ``keys`` (see the module documentation); ``release``: the data
    set is a release sdckit wrote (see :meth:`PartitionReader.of`)."""
    missing = [name for name in keys if name not in dataset.columns]
    if missing:
        raise InputError(f"{dataset.label}: attribute '{missing[0]}' is not a column of the data")
    # In the order of the columns, as an in-memory run sees them (known sets are named in it).
    wanted = set(keys)
    keys = [name for name in dataset.columns if name in wanted]
    reader = pinned_reader(dataset, config, release)
    weights = config.data.weights
    if weights is not None and weights not in dataset.columns:
        raise InputError(f"{dataset.label}: weights column '{weights}' is not a column of the data")
    task = _Task(reader, tuple(keys), weights, available_memory())
    partial = engine.map_reduce(
        _partial, _Combine(task), list(dataset.partitions), shared=task, progress=progress
    )
    heights = [partial.heights[partition.index] for partition in dataset.partitions]
    numbered = dataset.with_first_records(heights)
    offsets = np.array([partition.first_record for partition in numbered.partitions], dtype=np.int64)
    packed = partial.frame.get_column(FIRST).to_numpy()
    first = offsets[packed // _SHIFT] + packed % _SHIFT
    frame = partial.frame.with_columns(pl.Series(FIRST, first)).sort(FIRST)
    schema = Schema(tuple(reader.attributes_of(keys)))
    data = frame.select(keys)
    table = Table(data=data, schema=schema, source=dataset.label)
    table = replace(table, schema=config._with_hierarchies(table.schema, data))
    _warn_unused_value_weights(data, list(schema), dataset.label, {})
    return Aggregate(frame, table, numbered, reader, weights)


@dataclass(frozen=True)
class MapTask:
    """Pass 2 of one run: the per-pattern ``result`` (key columns + result columns), the function that
    turns a partition joined to it into output rows, and where the parts go."""

    reader: PartitionReader
    keys: tuple[str, ...]
    result: pl.DataFrame
    output: Callable[[pl.DataFrame, Partition], pl.DataFrame]
    folder: str
    columns: tuple[str, ...]


def _map_partition(partition: Partition, task: MapTask) -> str:
    table = task.reader.read(partition, list(task.columns), first_record=partition.first_record)
    data = table.data
    if POSITIVE in task.keys:
        assert task.reader.weights is not None  # the positive-weight key comes with sampling weights
        data = data.with_columns((pl.col(task.reader.weights).cast(pl.Float64) > 0).alias(POSITIVE))
    joined = data.join(task.result, on=list(task.keys), how="left", nulls_equal=True, maintain_order="left")
    if joined.height != data.height:  # pragma: no cover - the keys of result are distinct
        raise RuntimeError("a pattern matched several results")
    out = task.output(joined.drop(POSITIVE, strict=False), partition)
    target = Path(task.folder) / f"part-{partition.index:05d}.parquet"
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    out.write_parquet(temporary)
    os.replace(temporary, target)
    return str(target)


def map_back(
    aggregate: Aggregate,
    result: pl.DataFrame,
    output: Callable[[pl.DataFrame, Partition], pl.DataFrame],
    folder: Path,
    engine: Engine,
    progress: ProgressCallback | None = None,
    columns: list[str] | None = None,
) -> tuple[Path, ...]:
    """Pass 2: one Parquet part per partition in ``folder``, made by ``output`` from the partition's
    records joined to ``result`` on the aggregate's keys."""
    keys = tuple(aggregate.table.data.columns) + ((POSITIVE,) if aggregate.weights else ())
    read = list(columns or aggregate.dataset.columns)
    if aggregate.weights and aggregate.weights not in read:
        read.append(aggregate.weights)
    if aggregate.weights:
        result = result.with_columns(aggregate.frame.get_column(POSITIVE))
    task = MapTask(
        aggregate.reader,
        keys,
        result,
        output,
        str(folder),
        tuple(read),
    )
    written = engine.map(_map_partition, list(aggregate.dataset.partitions), shared=task, progress=progress)
    return tuple(Path(path) for path in written)
