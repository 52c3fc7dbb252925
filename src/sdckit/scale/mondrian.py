"""Mondrian over partitions: a sample cuts the data into fragments, each anonymized on its own.

This is how the Spark Mondrian of the MOSAICrOWN project distributes Mondrian (Facchinetti et al.,
2021-2022): the quasi-identifiers of a sample pick cuts that split the data into *fragments*, the records
are shuffled to their fragment, and every fragment is anonymized independently by the ordinary
in-memory Mondrian. :func:`run_mondrian` makes five passes:

1. **survey** (one task per partition): the partition's record count, the missing values of each
   quasi-identifier, the range of every numeric one, the distinct values of every other one and the
   counts of every sensitive value (all exact), and a deterministic sample of its quasi-identifiers:
   record ``r`` is in the sample when a hash of ``(r, seed)`` falls below ``sample_rows / n``, so the
   sample does not depend on how the data is partitioned;
2. **cuts** (here, on the sample): Mondrian's median cuts, taken on the widest normalized
   quasi-identifier of a box (numbers by ``(max - min) / (max_T - min_T)``, categories without a hierarchy
   by the ranks of their sorted values, categories with one by ``leaves(LCA) / leaves(root)``, cut into
   the LCA's children that hold sampled records, each with the unsampled children after it), always
   splitting the box holding the most sampled records, until there are ``fragments`` boxes (a cut into a
   hierarchy node's children may make a few more) or no box can be cut. The cuts are a small picklable
   tree (:class:`FragmentCuts`) that assigns any record to its fragment;
3. **spill** (one task per partition): each partition writes its records (every column but the
   identifiers, and :data:`RECORD`) per fragment into ``workdir`` and returns its count per fragment and
   its sensitive-value counts per fragment. A fragment that does not satisfy the privacy models as a
   whole (too few records, too few sensitive values, too far from the whole table's distribution) is
   merged with its siblings in the cut tree (the whole subtree of their parent becomes one fragment),
   up to the root if need be;
4. **anonymize** (one task per fragment): the fragment's records, in record order, go through the
   in-memory :func:`sdckit.anonymize.mondrian.mondrian` with the same parameters and the whole table's
   spans, categorical domains and sensitive distributions (:class:`~sdckit.anonymize.mondrian.WholeTable`),
   so that widths, NCPs and t-closeness are those of the whole table; the release is written split by
   input partition;
5. **gather** (one task per input partition): the partition's released records, collected from the
   fragments that hold some of them, in record order, written as one Parquet part.

Every task writes under a temporary name and renames when done, so a task that Dask reruns (a lost
worker) rewrites the same bytes. Memory: a task holds one partition (passes 1, 3, 5) or one fragment
(pass 4); the process that plans the run holds the sample and per-fragment counts.

**Guarantee.** Every fragment's release satisfies every privacy model (the in-memory Mondrian's
guarantee, fragments failing the models having been merged beforehand), t-closeness measured against
the *whole table's* distribution of the sensitive attribute (counted exactly in pass 1 and given to every
fragment: a fragment's own distribution would not do, as closeness to it implies nothing about closeness
to the whole table's). Classes of two fragments never overlap as records; where their released labels
coincide they form one class of the union, and every model holds for a union of classes that each
satisfy it: sizes add (k), distinct values only grow (distinct l), entropy is concave (entropy l:
H(mixture) >= min H), the top ``l-1`` counts are subadditive (recursive (c, l)) and the earth mover's
distance to a fixed distribution is convex (t). So the whole release is k-anonymous, l-diverse and
t-close whenever the models ask for it. Labels coincide across fragments only when a hierarchy cut put
unsampled children of a node into two fragments that both generalize to that node, or with centroids;
otherwise the union's classes are exactly the fragments' classes and the figures below are exact. The
release differs from the in-memory Mondrian's: the top cuts are the sample's medians, not the exact ones,
and a cut made to form fragments is not judged by the models (they judge the fragments instead); with
one fragment it is the in-memory release.
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize._mondrian_coding import (
    _HIERARCHY,
    _NUMERIC,
    _ORDERED,
    WholeTable,
    _in_sensitive_domain,
    _is_number_text,
)
from sdckit.anonymize.mondrian import MondrianFigures, MondrianParams, mondrian
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.frequency import encode, encode_column, group_keys
from sdckit.hierarchy import Hierarchy, missing_values_refused
from sdckit.models import ClassStatistics, ModelResult, SensitiveCounts, evaluate_all
from sdckit.params import spell
from sdckit.scale._mondrian_cuts import Axis, FragmentCuts, coordinates, plan_cuts
from sdckit.scale.dataset import Dataset, Partition, PartitionReader
from sdckit.scale.engine import Engine
from sdckit.scale.result import RECORD, ScaledRun
from sdckit.table import Kind, Role, Schema, Table

DEFAULT_SAMPLE_ROWS = 100_000
#: Sampled records per fragment below which the default number of fragments stops growing.
SAMPLE_PER_FRAGMENT = 100
_FRAGMENT = "__fragment"


# Tasks -------------------------------------------------------------------------------------------


def _write(frame: pl.DataFrame, path: Path, final: bool = False) -> None:
    """Write ``frame`` to ``path`` under a temporary name, then rename (a rerun task is harmless).
    Intermediate files (not ``final``) are written fast: LZ4, no statistics."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    if final:
        frame.write_parquet(temporary)
    else:
        frame.write_parquet(temporary, compression="lz4", statistics=False)
    os.replace(temporary, path)


def _sampled(records: np.ndarray, seed: int, rate: float) -> np.ndarray:
    """Whether each record number is in the sample: splitmix64 of (record, seed) below ``rate``."""
    with np.errstate(over="ignore"):
        x = records.astype(np.uint64) + np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * np.uint64(0x9E3779B97F4A7C15)
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53)) < rate


@dataclass(frozen=True)
class _Plan:
    reader: PartitionReader
    survey_reader: PartitionReader  # the quasi-identifiers and sensitive attributes only
    columns: tuple[str, ...]
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    numeric: tuple[str, ...]  # quasi-identifiers with a numeric column type
    rate: float
    seed: int
    workdir: str
    cuts: FragmentCuts | None = None


def _probe(partition: Partition, shared: _Plan) -> Table:
    table = shared.reader.read(partition, list(shared.columns))
    return Table(table.data.head(0), table.schema, source=table.source)


def _height(partition: Partition, shared: _Plan) -> int:
    # Every column, as a partition is read: a record is dropped only when all of its fields are empty.
    return partition.read(None, shared.reader.missing_values).height


def _survey(partition: Partition, shared: _Plan) -> dict[str, Any]:
    table = shared.survey_reader.read(partition, [*shared.quasi_identifiers, *shared.sensitive])
    data = table.data
    assert partition.first_record is not None  # counted before the survey (run_mondrian)
    records = partition.first_record + np.arange(data.height, dtype=np.int64)
    keep = _sampled(records, shared.seed, shared.rate)
    sample = (
        data.select(shared.quasi_identifiers)
        .filter(pl.Series(keep))
        .with_columns(pl.Series(RECORD, records[keep]))
    )
    missing = data.select(pl.col(name).null_count() for name in shared.quasi_identifiers).row(0, named=True)
    ranges = {
        name: (data.get_column(name).cast(pl.Float64).min(), data.get_column(name).cast(pl.Float64).max())
        for name in shared.numeric
    }
    distinct = {
        name: data.get_column(name).unique()
        for name in shared.quasi_identifiers
        if name not in shared.numeric
    }
    sensitive = {
        name: data.get_column(name).value_counts(name="count").with_columns(pl.col("count").cast(pl.Int64))
        for name in shared.sensitive
    }
    return {
        "height": data.height,
        "sample": sample,
        "missing": missing,
        "ranges": ranges,
        "distinct": distinct,
        "sensitive": sensitive,
    }


def _spill_path(workdir: str, partition: int, fragment: int) -> Path:
    return Path(workdir) / "spill" / f"f{fragment:05d}-p{partition:05d}.parquet"


def _spill(partition: Partition, shared: _Plan) -> dict[str, Any]:
    assert shared.cuts is not None
    table = shared.reader.read(partition, list(shared.columns))
    assert partition.first_record is not None  # counted before the survey (run_mondrian)
    data = table.data.with_columns(
        pl.Series(RECORD, partition.first_record + np.arange(table.n_records, dtype=np.int64))
    )
    fragment = shared.cuts.assign(coordinates(shared.cuts.axes, data))
    n_fragments = shared.cuts.n_fragments
    counts = np.bincount(fragment, minlength=n_fragments)
    order = np.argsort(fragment, kind="stable")
    ordered = data[order]
    start = 0
    for f in np.flatnonzero(counts).tolist():
        _write(ordered.slice(start, int(counts[f])), _spill_path(shared.workdir, partition.index, f))
        start += int(counts[f])
    # Without a sensitive attribute the selection has no column, and so no rows to label.
    labelled = data.select(*shared.sensitive, pl.Series(_FRAGMENT, fragment))
    sensitive = {
        name: labelled.group_by(_FRAGMENT, name).agg(pl.len().cast(pl.Int64).alias("count"))
        for name in shared.sensitive
    }
    return {"counts": counts, "sensitive": sensitive}


@dataclass(frozen=True)
class _Group:
    """A fragment to anonymize: the cut-tree fragments ``lo .. hi-1`` and the spilled pieces."""

    index: int
    lo: int
    hi: int
    pieces: tuple[str, ...]


@dataclass(frozen=True)
class _Anonymize:
    schema: Schema
    models: tuple[Any, ...]
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...]
    mode: str
    output: str
    whole: WholeTable
    label: str
    workdir: str
    starts: np.ndarray  # first record of every input partition


def _output_path(workdir: str, group: int, partition: int) -> Path:
    return Path(workdir) / "fragments" / f"g{group:05d}-p{partition:05d}.parquet"


def _anonymize(group: _Group, shared: _Anonymize) -> dict[str, Any]:
    frame = pl.concat([pl.read_parquet(piece) for piece in group.pieces], how="vertical").sort(RECORD)
    records = frame.get_column(RECORD).to_numpy()
    data = frame.drop(RECORD)
    schema = Schema(tuple(shared.schema[name] for name in data.columns))
    table = Table(data, schema, source=shared.label)
    release = mondrian(
        table,
        list(shared.models),
        quasi_identifiers=list(shared.quasi_identifiers),
        mode=shared.mode,
        output=shared.output,
        whole=shared.whole,
    )
    released = release.table.data
    labels: dict[str, list[Any]] = {}
    achieved: dict[str, ModelResult] = {}
    if shared.output == "generalized":
        released = released.with_columns(pl.col(name).cast(pl.String) for name in shared.quasi_identifiers)
        labels = {name: released.get_column(name).unique().to_list() for name in shared.quasi_identifiers}
        achieved = _achieved(released, shared)
    released = released.with_columns(pl.Series(RECORD, records))
    bounds = np.searchsorted(records, shared.starts, side="left").tolist() + [len(records)]
    written = {}
    for partition in range(len(shared.starts)):
        lo, hi = bounds[partition], bounds[partition + 1]
        if hi > lo:
            _write(released.slice(lo, hi - lo), _output_path(shared.workdir, group.index, partition))
            written[partition] = hi - lo
    sizes = release.class_sizes()
    assert release.cell_penalty is not None  # Mondrian fills every cell's NCP
    return {
        "records": len(records),
        "classes": len(sizes),
        "smallest": int(sizes.min()),
        "penalty": release.cell_penalty.sum(axis=0),
        # Missing values suppressed from the start (the hierarchy's missing: suppress) are suppressed cells.
        "suppressed_cells": release.suppressed_cells_per_attribute(),
        "splits": release.figures_as(MondrianFigures).splits,
        "labels": labels,
        "achieved": achieved,
        "written": written,
    }


def _achieved(released: pl.DataFrame, job: _Anonymize) -> dict[str, ModelResult]:
    """Every model's verdict on the classes of the released values (as
    :func:`sdckit.anonymize.base.achieved` re-checks them), t-closeness against the whole table,
    condensed to its worst class and first failing one (:meth:`sdckit.models.ModelResult.condensed`):
    a fragment sends back two classes per model, not one entry per class."""
    encoding = encode(released, list(job.quasi_identifiers))
    keys, n_classes = group_keys(encoding, list(job.quasi_identifiers))
    sizes = np.bincount(keys, minlength=n_classes).astype(np.float64)
    counts = {}
    for name in job.sensitive:
        codes, _, has_missing, categories = encode_column(released.get_column(name))
        domain, totals = job.whole.sensitive[name]
        coded = _in_sensitive_domain(name, codes, has_missing, categories, domain, totals)
        counts[name] = SensitiveCounts.from_codes(
            name, keys, n_classes, coded.codes, coded.n_values, coded.categories
        )
        counts[name] = replace(counts[name], overall=coded.overall)
    _, results = evaluate_all(list(job.models), ClassStatistics(sizes=sizes, sensitive=counts))
    return {result.model: result.condensed() for result in results}


def _gather_path(workdir: str, partition: int) -> Path:
    return Path(workdir) / "release" / f"part-{partition:05d}.parquet"


@dataclass(frozen=True)
class _Gather:
    workdir: str
    groups: tuple[tuple[int, ...], ...]  # per input partition: the groups holding some of its records
    enums: dict[str, list[str]]


def _gather(partition: int, shared: _Gather) -> str:
    pieces = [pl.read_parquet(_output_path(shared.workdir, g, partition)) for g in shared.groups[partition]]
    frame = pl.concat(pieces, how="vertical").sort(RECORD).drop(RECORD)
    if shared.enums:
        frame = frame.with_columns(
            pl.col(name).cast(pl.Enum(values)) for name, values in shared.enums.items()
        )
    path = _gather_path(shared.workdir, partition)
    _write(frame, path, final=True)
    return str(path)


# The run ----------------------------------------------------------------------------------------


def default_fragments(n_records: int, chunk_rows: int, sample_rows: int) -> int:
    """``ceil(n / chunk_rows)`` fragments, so that a fragment holds about as many records as a partition
    (the chunk size is what the user chose to fit in a worker's memory), and at most one per
    :data:`SAMPLE_PER_FRAGMENT` sampled records, so that every cut has a sample to take its median of."""
    wanted = max(1, math.ceil(n_records / max(chunk_rows, 1)))
    return max(1, min(wanted, sample_rows // SAMPLE_PER_FRAGMENT))


def run_mondrian(
    dataset: Dataset,
    config: Any,
    params: MondrianParams,
    engine: Engine,
    workdir: Path,
    *,
    fragments: int | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    seed: int = 0,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    """Mondrian over the partitions of ``dataset`` (see the module documentation for the passes and the
    guarantee), writing the release as Parquet parts (one per input partition, in record order) under
    ``workdir / "release"``.

    ``fragments``: how many fragments the sample cuts aim at (default :func:`default_fragments`);
    ``sample_rows``: the expected size of the sample; ``seed``: which sample.

    ``figures`` has the keys of the in-memory Mondrian's summary (``models``, ``mode``, ``output``,
    ``suppressed_records``, ``equivalence_classes``, ``smallest_class``, ``suppressed_cells``,
    ``metrics.ncp`` (GCP over the whole table's spans), ``achieved`` (generalized output only: the worst
    class of every fragment, t against the whole table)) and ``records``, ``fragments`` (anonymized
    independently, after merges), ``fragments_cut`` (made by the sample cuts) and ``sample``.
    ``details["model_results"]`` holds each asked model's :class:`~sdckit.models.ModelResult` on the
    release, joined from the fragments' (empty for centroids): whether the release holds it.

    Raises :class:`ConfigError` as the in-memory Mondrian does (no quasi-identifier, a missing
    quasi-identifier value, models the whole table fails) and for a bad ``fragments``, ``sample_rows``
    or ``seed``.
    """
    _check_arguments(params, fragments, sample_rows, seed)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    quasi_identifiers, columns = _columns(dataset, config)
    plan, schema, dataset, n_planned = _pinned_plan(
        dataset, config, engine, columns, quasi_identifiers, seed, workdir
    )
    sensitive, numeric = plan.sensitive, plan.numeric

    # 1. Survey.
    plan = replace(plan, rate=min(1.0, sample_rows / max(n_planned, 1)))
    surveys = engine.map(_survey, dataset.partitions, shared=plan, progress=progress)
    heights = [s["height"] for s in surveys]
    n = sum(heights)
    if n == 0:
        raise ConfigError("the data has no records")
    _check_missing(dataset, config, quasi_identifiers, numeric, surveys)
    sample = pl.concat([s["sample"] for s in surveys], how="vertical")
    schema, axes, whole = _whole_table(config, schema, quasi_identifiers, numeric, sensitive, surveys)
    if getattr(params, "research_subset", None) is not None:  # merges and checks count every record
        raise ConfigError(
            f"mondrian over partitions does not take a research subset ({spell('research_subset')}: "
            "delta-presence, k-map against a population table): run it in memory"
        )
    models = tuple(params.privacy_models(SimpleNamespace(schema=schema, n_records=n)))
    _check_feasible(models, whole, sensitive, n)

    # 2. Cuts on the sample.
    chunk = max(max(heights), 1)
    wanted = fragments if fragments is not None else default_fragments(n, chunk, sample_rows)
    cuts = plan_cuts(axes, coordinates(axes, sample), wanted)

    # 3. Spill.
    plan = replace(plan, cuts=cuts)
    spills = engine.map(_spill, dataset.partitions, shared=plan, progress=progress)
    counts = np.stack([s["counts"] for s in spills])  # (partitions, fragments)
    per_fragment = counts.sum(axis=0)
    groups = _merge(cuts, per_fragment, _spilled_sensitive(spills, sensitive, whole), whole, models)

    # 4. Anonymize every fragment.
    items = _fragment_groups(groups, per_fragment, counts, str(workdir))
    job = _Anonymize(
        schema=schema,
        models=models,
        quasi_identifiers=quasi_identifiers,
        sensitive=sensitive,
        mode=params.mode,
        output=params.output,
        whole=whole,
        label=dataset.label,
        workdir=str(workdir),
        starts=np.array([p.first_record for p in dataset.partitions], dtype=np.int64),
    )
    outcomes = engine.map(_anonymize, items, shared=job, progress=progress)

    # 5. Gather the release in record order.
    parts = _gather_release(dataset, items, outcomes, job, engine, progress)
    figures = _figures(params, models, quasi_identifiers, outcomes, n, job.output)
    figures.update(
        {
            "records": n,
            "fragments": len(items),
            "fragments_cut": cuts.n_fragments,
            "sample": sample.height,
        }
    )
    details = {
        "cuts": cuts,
        "fragment_records": per_fragment,
        "groups": [(item.lo, item.hi) for item in items],
        "group_records": [outcome["records"] for outcome in outcomes],
        # What scale.methods asks whether the release holds every model (none with centroids).
        "model_results": model_results(models, outcomes) if job.output == "generalized" else [],
    }
    return ScaledRun(figures=figures, parts=tuple(Path(p) for p in parts), details=details)


def _check_arguments(params: MondrianParams, fragments: int | None, sample_rows: int, seed: int) -> None:
    if fragments is not None and (
        isinstance(fragments, bool) or not isinstance(fragments, int) or fragments < 1
    ):
        raise ConfigError(f"fragments must be a whole number >= 1, got {fragments!r}")
    if isinstance(sample_rows, bool) or not isinstance(sample_rows, int) or sample_rows < 1:
        raise ConfigError(f"sample rows must be a whole number >= 1, got {sample_rows!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}")
    if not isinstance(params, MondrianParams):
        raise ConfigError(f"params must be MondrianParams, got {type(params).__name__}")


def _columns(dataset: Dataset, config: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The quasi-identifiers and the columns released (identifiers left out), every quasi-identifier
    and sensitive attribute a column of the data."""
    by_role = {role: [a.name for a in config.attributes if a.role is role] for role in Role}
    quasi_identifiers = tuple(by_role[Role.QUASI_IDENTIFIER])
    if not quasi_identifiers:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    columns = tuple(name for name in dataset.columns if name not in by_role[Role.IDENTIFIER])
    for name in (*quasi_identifiers, *by_role[Role.SENSITIVE]):
        if name not in columns:
            raise ConfigError(
                f"{dataset.label}: attribute '{name}' is not a column of the data "
                f"(columns: {', '.join(columns)})"
            )
    return quasi_identifiers, columns


def _pinned_plan(
    dataset: Dataset,
    config: Any,
    engine: Engine,
    columns: tuple[str, ...],
    quasi_identifiers: tuple[str, ...],
    seed: int,
    workdir: Path,
) -> tuple[_Plan, Schema, Dataset, int]:
    """The plan of the passes with the kinds of inferred attributes pinned from the first partition,
    the schema read there, the data set with every partition's first record known (a CSV's counted
    first) and the number of records planned."""
    reader = PartitionReader.of(config, list(columns))
    plan = _Plan(reader, reader, columns, quasi_identifiers, (), (), 1.0, seed, str(workdir))
    probe = engine.map(_probe, dataset.partitions[:1], shared=plan)[0]
    reader = reader.pinned(probe)
    schema = probe.schema
    sensitive = tuple(a.name for a in schema.with_role(Role.SENSITIVE))
    numeric = tuple(name for name in quasi_identifiers if probe.data.schema[name].is_numeric())
    surveyed = {*quasi_identifiers, *sensitive}
    survey_reader = replace(
        reader,
        attributes=tuple(a for a in reader.attributes if a.name in surveyed),
        weights=reader.weights if reader.weights in surveyed else None,
    )
    plan = replace(plan, reader=reader, survey_reader=survey_reader, sensitive=sensitive, numeric=numeric)
    if any(partition.first_record is None for partition in dataset.partitions):  # CSV: count first
        heights = engine.map(_height, dataset.partitions, shared=plan)
        return plan, schema, dataset.with_first_records(heights), sum(heights)
    return plan, schema, dataset, sum(p.length for p in dataset.partitions)


def _check_missing(
    dataset: Dataset,
    config: Any,
    quasi_identifiers: tuple[str, ...],
    numeric: tuple[str, ...],
    surveys: list[dict[str, Any]],
) -> None:
    """Refuse missing quasi-identifier values that no hierarchy places (or that a numeric column has)."""
    for name in quasi_identifiers:
        missing = sum(s["missing"][name] for s in surveys)
        if not missing:
            continue
        if name in numeric:
            # The fragments' cuts read a numeric column's numbers; they have no place for a missing one.
            raise ConfigError(
                f"{dataset.label}: quasi-identifier '{name}' has {missing:,} missing values; the "
                "distributed Mondrian cuts a numeric column on its numbers and cannot place them: run "
                "the in-memory Mondrian (which cuts it along its hierarchy, whose missing key places them)"
            )
        if name not in config.missing_choices:
            raise missing_values_refused(dataset.label, name, missing, "Mondrian")


def _check_feasible(models: tuple[Any, ...], whole: WholeTable, sensitive: tuple[str, ...], n: int) -> None:
    """Refuse models the whole table does not satisfy (no partition of it can then)."""
    totals = {name: whole.sensitive[name][1] for name in sensitive}
    whole_statistics = _group_statistics(
        np.array([float(n)]),
        {name: (np.zeros(len(t), np.int64), np.arange(len(t)), t) for name, t in totals.items()},
        whole,
        1,
    )
    try:
        for model in models:
            model.check_feasible(whole_statistics)
    except ConfigError as error:
        raise ConfigError(f"the privacy models cannot be satisfied: {error}") from None
    passes, results = evaluate_all(list(models), whole_statistics)
    if not passes.all():
        failing = [r.model for r in results if not r.passes.all()]
        raise ConfigError(
            f"the privacy models cannot be satisfied: the whole table fails {', '.join(failing)}, "
            "so no partition of it passes"
        )


def _spilled_sensitive(
    spills: list[dict[str, Any]], sensitive: tuple[str, ...], whole: WholeTable
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per sensitive attribute: the (fragment, value code, count) triples of the spilled records."""
    triples = {}
    for name in sensitive:
        joined = (
            pl.concat([s["sensitive"][name] for s in spills], how="vertical")
            .group_by(_FRAGMENT, name)
            .agg(pl.col("count").sum())
        )
        codes = _codes_in(whole.sensitive[name][0], joined.get_column(name))
        triples[name] = (
            joined.get_column(_FRAGMENT).to_numpy().astype(np.int64),
            codes,
            joined.get_column("count").to_numpy().astype(np.float64),
        )
    return triples


def _fragment_groups(
    groups: list[tuple[int, int]], per_fragment: np.ndarray, counts: np.ndarray, workdir: str
) -> list[_Group]:
    """The fragments to anonymize (merged groups holding records) and the spilled pieces of each."""
    items: list[_Group] = []
    for lo, hi in groups:
        if per_fragment[lo:hi].sum() == 0:
            continue
        pieces = tuple(
            str(_spill_path(workdir, p, f))
            for p in range(counts.shape[0])
            for f in range(lo, hi)
            if counts[p, f]
        )
        items.append(_Group(len(items), lo, hi, pieces))
    return items


def _gather_release(
    dataset: Dataset,
    items: list[_Group],
    outcomes: list[dict[str, Any]],
    job: _Anonymize,
    engine: Engine,
    progress: ProgressCallback | None,
) -> list[Any]:
    """The release's parts, one per input partition in record order, gathered from the fragments'
    outputs (generalized labels as one Enum per quasi-identifier)."""
    holding: list[list[int]] = [[] for _ in dataset.partitions]
    for item, outcome in zip(items, outcomes, strict=True):
        for partition in outcome["written"]:
            holding[partition].append(item.index)
    enums = {}
    if job.output == "generalized":
        for name in job.quasi_identifiers:
            # A missing value (a node of the missing value) is the Enum's null, not a category.
            values = sorted({value for outcome in outcomes for value in outcome["labels"][name]} - {None})
            enums[name] = values
    gather = _Gather(job.workdir, tuple(tuple(g) for g in holding), enums)
    return engine.map(_gather, list(range(len(dataset.partitions))), shared=gather, progress=progress)


def _codes_in(domain: pl.Series, values: pl.Series) -> np.ndarray:
    """The index of every value in ``domain`` (sorted, a null last when one occurs)."""
    has_null = len(domain) > 0 and domain[-1] is None
    present = domain[:-1] if has_null else domain
    found = present.search_sorted(values.fill_null(present[0]) if len(present) else values, side="left")
    codes = found.to_numpy().astype(np.int64)
    return np.where(values.is_null().to_numpy(), len(domain) - 1, codes)


def _whole_table(
    config: Any,
    schema: Schema,
    quasi_identifiers: Sequence[str],
    numeric: Sequence[str],
    sensitive: Sequence[str],
    surveys: list[dict[str, Any]],
) -> tuple[Schema, list[Axis], WholeTable]:
    """The schema with the hierarchies Mondrian uses (built from the distinct values), the axes of the
    cuts and the whole table's reference for the fragments."""
    distinct = {
        name: pl.concat([s["distinct"][name] for s in surveys], how="vertical").unique().sort(nulls_last=True)
        for name in quasi_identifiers
        if name not in numeric
    }
    sensitive_counts = {}
    for name in sensitive:
        counted = (
            pl.concat([s["sensitive"][name] for s in surveys], how="vertical")
            .group_by(name)
            .agg(pl.col("count").sum())
            .sort(name, nulls_last=True)
        )
        sensitive_counts[name] = (
            counted.get_column(name),
            counted.get_column("count").to_numpy().astype(np.float64),
        )
    # Hierarchies: built once from the distinct values, for the attributes Mondrian reads them of.
    for attribute in schema:
        used = (attribute.name in distinct) or (attribute.name in sensitive_counts)
        if attribute.hierarchy is None or isinstance(attribute.hierarchy, Hierarchy):
            continue
        if not used:
            schema = schema.replace(attribute.name, hierarchy=None)
            continue
        values = (
            distinct[attribute.name] if attribute.name in distinct else sensitive_counts[attribute.name][0]
        )
        built = config._with_hierarchies(Schema((attribute,)), values.to_frame(attribute.name))
        schema = schema.replace(attribute.name, hierarchy=built[attribute.name].hierarchy)

    axes, spans, domains = [], {}, {}
    for name in quasi_identifiers:
        attribute = schema[name]
        if name in numeric:
            lows = [s["ranges"][name][0] for s in surveys if s["ranges"][name][0] is not None]
            highs = [s["ranges"][name][1] for s in surveys if s["ranges"][name][1] is not None]
            axes.append(Axis(name, _NUMERIC, float(min(lows)), float(max(highs))))
            spans[name] = (float(min(lows)), float(max(highs)))
            continue
        values = distinct[name]
        if attribute.kind in (Kind.NUMERIC, Kind.ORDINAL) and values.dtype in (pl.String, pl.Categorical):
            numbers = _is_number_text(values)
            if numbers is not None:
                axes.append(Axis(name, _NUMERIC, float(numbers.min()), float(numbers.max())))
                spans[name] = (float(numbers.min()), float(numbers.max()))
                continue
        hierarchy = attribute.hierarchy
        if isinstance(hierarchy, Hierarchy):
            axes.append(Axis(name, _HIERARCHY, hierarchy=hierarchy))
            continue
        axes.append(Axis(name, _ORDERED, domain=values))
        domains[name] = values
    return schema, axes, WholeTable(spans=spans, domains=domains, sensitive=sensitive_counts)


def _group_statistics(
    sizes: np.ndarray,
    triples: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    whole: WholeTable,
    n_groups: int,
) -> ClassStatistics:
    """Class statistics of groups from ``(group, value code, count)`` triples per sensitive attribute,
    with the whole table's values and distribution."""
    counts = {}
    for name, (group, value, count) in triples.items():
        domain, totals = whole.sensitive[name]
        n_values = len(domain)
        dense = np.bincount(group * n_values + value, weights=count, minlength=n_groups * n_values)
        cell = np.flatnonzero(dense)
        counts[name] = SensitiveCounts(
            attribute=name,
            classes=cell // n_values,
            values=cell % n_values,
            counts=dense[cell],
            n_values=n_values,
            overall=totals / max(totals.sum(), 1.0),
            categories=domain.alias(name),
        )
    return ClassStatistics(sizes=np.asarray(sizes, dtype=np.float64), sensitive=counts)


def _merge(
    cuts: FragmentCuts,
    per_fragment: np.ndarray,
    triples: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
    whole: WholeTable,
    models: Sequence[Any],
) -> list[tuple[int, int]]:
    """The fragments to anonymize, as ranges ``lo .. hi-1`` of cut-tree fragments: bottom up, a node
    whose child (after the merges below it) is one fragment failing the models becomes one fragment."""
    prefix = np.concatenate([[0], np.cumsum(per_fragment)])

    def passes(lo: int, hi: int) -> bool:
        size = prefix[hi] - prefix[lo]
        if size == 0:
            return True
        selected = {}
        for name, (fragment, value, count) in triples.items():
            inside = (fragment >= lo) & (fragment < hi)
            selected[name] = (np.zeros(int(inside.sum()), np.int64), value[inside], count[inside])
        statistics = _group_statistics(np.array([float(size)]), selected, whole, 1)
        allowed, _ = evaluate_all(list(models), statistics)
        return bool(allowed.all())

    ranges = cuts.leaf_ranges()
    result: dict[int, list[tuple[int, int, bool]]] = {}
    for node in reversed(range(len(cuts.attribute))):
        lo, hi = ranges[node]
        if cuts.attribute[node] < 0:
            result[node] = [(lo, hi, passes(lo, hi))]
            continue
        first, count = int(cuts.first_child[node]), int(cuts.n_children[node])
        children = [result.pop(first + i) for i in range(count)]
        if any(len(groups) == 1 and not groups[0][2] for groups in children):
            result[node] = [(lo, hi, passes(lo, hi))]
        else:
            result[node] = [group for groups in children for group in groups]
    groups = result[0]
    assert all(ok for _, _, ok in groups), "the whole table passes, so the merges end with passing fragments"
    return [(lo, hi) for lo, hi, _ in groups]


def _figures(
    params: MondrianParams,
    models: Sequence[Any],
    quasi_identifiers: Sequence[str],
    outcomes: list[dict[str, Any]],
    n: int,
    output: str,
) -> dict[str, Any]:
    penalty = np.sum([outcome["penalty"] for outcome in outcomes], axis=0)
    cells = {
        name: int(sum(outcome["suppressed_cells"][name] for outcome in outcomes))
        for name in quasi_identifiers
    }
    figures: dict[str, Any] = {
        "models": [model.name for model in models],
        "mode": params.mode,
        "output": output,
        "suppressed_records": 0,
        "equivalence_classes": int(sum(outcome["classes"] for outcome in outcomes)),
        "smallest_class": int(min(outcome["smallest"] for outcome in outcomes)),
        "suppressed_cells": {"total": sum(cells.values()), "per_attribute": cells},
        "metrics": {"ncp": float(penalty.sum() / (n * len(quasi_identifiers)))},
    }
    if output == "generalized":
        figures["achieved"] = {result.model: result.worst() for result in model_results(models, outcomes)}
    return figures


def model_results(models: Sequence[Any], outcomes: list[dict[str, Any]]) -> list[ModelResult]:
    """Each asked model's verdict on the release, joined from the fragments' (no class spans two
    fragments), in the order of ``models``."""
    return [
        ModelResult.of_parts([outcome["achieved"][model.name] for outcome in outcomes]) for model in models
    ]


__all__ = [
    "DEFAULT_SAMPLE_ROWS",
    "Axis",
    "FragmentCuts",
    "coordinates",
    "default_fragments",
    "plan_cuts",
    "run_mondrian",
]
