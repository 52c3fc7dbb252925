"""Slicing (Li, Li, Zhang & Molloy, 2012) and overlapping, "improved" slicing (Dhaigude & Kumar, 2014).

Slicing publishes microdata without generalizing any value. The attributes are grouped into
*columns* of highly correlated attributes (attribute partition: PAM k-medoids on ``1 - phi^2``), the
records into *buckets* (tuple partition: Mondrian-like median splits, or random halving along the
sensitive values), and inside every bucket the values of each column are randomly permuted
independently of the other columns, which breaks the links between uncorrelated attributes. A split
of a bucket is accepted only when the sliced table stays l-diverse in the slicing sense: for every
record t, the adversary's probability ``p(t, s)`` of each sensitive value s, averaged over the buckets
t may fall into, is at most ``1/l`` (SPEC §1.7, implemented in :mod:`sdckit.models.sliced`).

Overlapping slicing lets an attribute sit in several columns (overlapping correlation clustering of
Bonchi, Gionis & Ukkonen, 2011, on the same correlations; :mod:`sdckit.anonymize._overlapping_clustering`)
and replaces the Mondrian split with random halving of every sensitive-value group
(:mod:`sdckit.anonymize._tuple_partition`).

Published layout
----------------
:attr:`SlicedRelease.table` has one row per record and the columns

* ``bucket``: the bucket number ``0 .. m-1`` (index into :attr:`SlicedRelease.buckets`); rows are
  grouped by bucket (in bucket order; inside a bucket the rows carry no meaning);
* then, column after column (the sensitive column last), the attributes of each column with their
  original values (not discretized, missing values stay missing). Values of one column in one row
  come from one record; values of different columns in one row come, in general, from different
  records of the same bucket.

An attribute that appears in several columns (overlapping slicing only) is published once per
column, named ``attribute@i`` with ``i`` the 1-based number of the column (``occupation@2`` is the
occupation as permuted with the second column); an attribute in a single column keeps its plain name,
so plain slicing uses the plain names. If an attribute is itself called ``bucket`` the bucket column
is called ``_bucket`` (underscores are added until the name is free).

Policies: quasi-identifier values that are missing are a category of their own (in the correlation,
the tuple keys of the diversity check and the membership evaluation); a missing sensitive value is
rejected with :class:`ConfigError` (drop or fill those records first), since ``p(t, s)`` needs a
value for every record. Identifiers are never published.

References
----------
Li, T., Li, N., Zhang, J. & Molloy, I. (2012). Slicing: a new approach for privacy preserving data
publishing. IEEE Transactions on Knowledge and Data Engineering, 24(3), 561-574.
Dhaigude, A. A. & Kumar, P. (2014). Improved slicing algorithm for greater utility in privacy
preserving data publishing.
Bonchi, F., Gionis, A. & Ukkonen, A. (2011). Overlapping correlation clustering. ICDM 2011, 51-60.
Kaufman, L. & Rousseeuw, P. J. (1990). Partitioning around medoids (program PAM). In Finding Groups
in Data, 68-125.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, cast

import numpy as np
import polars as pl
from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from sdckit.anonymize._slicing_columns import (
    MedoidClustering,
    attribute_correlation,
    column_correlation,
    default_n_columns,
    discretize,
    explicit_columns,
    k_medoids,
    overlapping_columns,
    partition_attributes,
)
from sdckit.anonymize._slicing_membership import MATCHING_BINS, membership_report, record_buckets
from sdckit.anonymize._tuple_partition import MATCHINGS, diversity_keys, partition_tuples
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError, SdcWarning
from sdckit.frequency import Encoding, encode
from sdckit.params import Finite, MethodParams, Whole, spell
from sdckit.table import Kind, Role, Table

__all__ = [
    "MATCHINGS",
    "MATCHING_BINS",
    "MedoidClustering",
    "OverlappingSlicingParams",
    "SlicedRelease",
    "SlicingFigures",
    "SlicingParams",
    "attribute_correlation",
    "column_correlation",
    "default_n_columns",
    "discretize",
    "diversity_keys",
    "k_medoids",
    "membership_report",
    "partition_attributes",
    "publish",
    "published_names",
    "slice_table",
]

SLICING_METHODS = ("slicing", "overlapping-slicing")


# Output -------------------------------------------------------------------------------------------


def published_names(columns: Sequence[Sequence[str]]) -> list[list[str]]:
    """The published name of every attribute of every column: ``attribute@i`` (1-based column number)
    for an attribute in several columns, the plain name otherwise."""
    occurrences: dict[str, int] = {}
    for column in columns:
        for name in column:
            occurrences[name] = occurrences.get(name, 0) + 1
    return [
        [f"{name}@{i + 1}" if occurrences[name] > 1 else name for name in column]
        for i, column in enumerate(columns)
    ]


def _bucket_column_name(taken: set[str]) -> str:
    name = "bucket"
    while name in taken:
        name = "_" + name
    return name


def publish(
    frame: pl.DataFrame,
    columns: Sequence[Sequence[str]],
    bucket_of: np.ndarray,
    rng: np.random.Generator,
) -> pl.DataFrame:
    """The sliced table (SPEC §1.8; layout in the module docstring): rows grouped by bucket, and for
    every column an independent uniform random permutation of its values inside every bucket.

    Vectorized: column i's row order is ``lexsort((uniform keys, bucket))``, i.e. every bucket's rows
    sorted by fresh uniform random keys, which is a uniform permutation within each bucket.
    """
    n = len(bucket_of)
    order = np.argsort(bucket_of, kind="stable")
    names = published_names(columns)
    taken = {name for column in names for name in column}
    parts = [pl.DataFrame({_bucket_column_name(taken): bucket_of[order]})]
    for column, column_names in zip(columns, names, strict=True):
        permutation = np.lexsort((rng.random(n), bucket_of))
        part = frame.select(list(column))[permutation]
        parts.append(part.rename(dict(zip(column, column_names, strict=True))))
    return pl.concat(parts, how="horizontal")


# The sliced release -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlicingFigures(Figures):
    """What a slicing run found: ``columns`` (attribute names; the sensitive column last);
    ``bucket_of`` each record's bucket and ``buckets`` the records of each bucket; ``sensitive`` the
    sensitive attribute and ``attributes`` the attributes sliced; ``partition`` the tuple partition
    used; ``max_probability`` the largest ``p(t, s)`` over records and sensitive values of the final
    partition; ``timings`` the seconds spent on ``correlation``, ``attributes`` (column construction),
    ``tuples`` (tuple partition), ``output`` (permutation) and ``membership``; ``membership`` the
    membership report (:func:`membership_report`; None when not asked); ``correlation`` the
    correlation matrix of ``attributes``.

    ``average_correlation``: for every column with at least 2 attributes, the mean correlation
    (``correlation`` method of the run, phi^2 by default) over its unordered pairs of distinct
    attributes, averaged over those columns (NaN if there is none); ``pair_weighted_correlation``:
    the mean over all within-column pairs pooled (see :func:`column_correlation`).
    """

    columns: tuple[tuple[str, ...], ...]
    bucket_of: np.ndarray
    buckets: list[np.ndarray]
    sensitive: str
    attributes: tuple[str, ...]
    partition: str
    max_probability: float
    timings: dict[str, float]
    membership: dict[str, Any] | None
    correlation: np.ndarray
    average_correlation: float
    pair_weighted_correlation: float


class SlicedRelease(Release):
    """A sliced table and how it was made: a :class:`Release` whose ``table`` is the published sliced
    table (layout in the module docstring; :attr:`published` as a polars frame) and whose figures are
    :class:`SlicingFigures`, readable here by name (``release.columns``, ``release.buckets``, ...).
    ``l`` is the l the partition was checked for, ``l_achieved = 1 / max_probability`` the largest l
    it satisfies."""

    @property
    def sliced(self) -> SlicingFigures:
        return self.figures_as(SlicingFigures)

    @property
    def published(self) -> pl.DataFrame:
        """The published sliced table."""
        return self.table.data

    @property
    def columns(self) -> tuple[tuple[str, ...], ...]:
        return self.sliced.columns

    @property
    def bucket_of(self) -> np.ndarray:
        return self.sliced.bucket_of

    @property
    def buckets(self) -> list[np.ndarray]:
        return self.sliced.buckets

    @property
    def sensitive(self) -> str:
        return self.sliced.sensitive

    @property
    def attributes(self) -> tuple[str, ...]:
        return self.sliced.attributes

    @property
    def partition(self) -> str:
        return self.sliced.partition

    @property
    def max_probability(self) -> float:
        return self.sliced.max_probability

    @property
    def timings(self) -> dict[str, float]:
        return self.sliced.timings

    @property
    def membership(self) -> dict[str, Any] | None:
        return self.sliced.membership

    @property
    def correlation(self) -> np.ndarray:
        return self.sliced.correlation

    @property
    def average_correlation(self) -> float:
        return self.sliced.average_correlation

    @property
    def pair_weighted_correlation(self) -> float:
        return self.sliced.pair_weighted_correlation

    @property
    def l(self) -> float:  # noqa: E743
        # The parameters of a sliced release are slicing's (set by the run that made it).
        return float(cast(SlicingParams, self.params).l)

    @property
    def n_buckets(self) -> int:
        return len(self.buckets)

    @property
    def smallest_bucket(self) -> int:
        return int(min((len(b) for b in self.buckets), default=0))

    @property
    def l_achieved(self) -> float:
        return math.inf if self.max_probability <= 0 else 1.0 / self.max_probability


# Parameters ---------------------------------------------------------------------------------------


def _columns(value: Any) -> Any:
    """``"age,sex;zip,disease"`` -> ``[["age", "sex"], ["zip", "disease"]]`` (the command line's form)."""
    if isinstance(value, str):
        return [[name.strip() for name in part.split(",")] for part in value.split(";")]
    return value


class SlicingParams(MethodParams):
    """Parameters of slicing (``sdckit anonymize slicing``; Li et al., 2012)."""

    l: Annotated[Finite, Field(ge=1, description="l of l-diverse slicing.")] = 2.0  # noqa: E741
    sensitive: Annotated[
        str | None, Field(description="The sensitive attribute (default: the one with role sensitive).")
    ] = None
    n_columns: Annotated[
        Whole | None, Field(ge=1, description="Number of columns (default: by the attributes).")
    ] = None
    columns: Annotated[
        list[list[str]] | None,
        BeforeValidator(_columns),
        Field(description='Explicit columns, e.g. "age,sex;zip,disease" (";" between columns).'),
    ] = None
    sensitive_column_size: Annotated[
        Whole | None, Field(ge=1, description="Attributes in the sensitive column (alpha).")
    ] = None
    min_bucket_size: Annotated[
        Whole | None, Field(ge=1, description="Smallest bucket a split may leave.")
    ] = None
    n_bins: Annotated[
        Whole, Field(ge=1, description="Equal-width bins of numeric attributes for correlation.")
    ] = 10
    correlation: Annotated[
        Literal["phi2", "pearson"],
        Field(description="Attribute correlation: phi2 (mean-square contingency) or pearson."),
    ] = "phi2"
    bucket_weighting: Annotated[
        Literal["none", "size"], Field(description="Diversity check of a split: none or size-weighted.")
    ] = "none"
    partition: Annotated[
        Literal["mondrian", "random-halving"],
        Field(description="Tuple partition: mondrian (Li et al.) or random-halving (Dhaigude & Kumar)."),
    ] = "mondrian"
    medoid_start: Annotated[
        Literal["random", "build"], Field(description="PAM start: random (from the seed) or BUILD.")
    ] = "random"
    membership: Annotated[bool, Field(description="Report fake tuples (membership disclosure).")] = True
    max_generated: Annotated[
        Whole, Field(ge=1, description="Most generated combinations the membership report examines.")
    ] = 1_000_000
    seed: Annotated[Whole, Field(ge=0, description="Seed of every random choice.")] = 0

    @model_validator(mode="after")
    def _columns_counted(self) -> Self:
        if self.columns is not None and self.n_columns is not None and self.n_columns != len(self.columns):
            raise ValueError(
                f"{{n_columns}} {self.n_columns} disagrees with the {len(self.columns)} columns given"
            )
        return self


class OverlappingSlicingParams(SlicingParams):
    """Parameters of improved slicing with overlapping columns (``sdckit anonymize overlapping-slicing``;
    Dhaigude & Kumar, 2014). ``medoid_start`` does not apply (columns come from overlapping correlation
    clustering)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    partition: Annotated[
        Literal["mondrian", "random-halving"],
        Field(description="Tuple partition: random-halving (the paper) or mondrian."),
    ] = "random-halving"
    beta: Annotated[Whole, Field(ge=1, description="Minimum number of groups.")] = 2
    max_labels: Annotated[Whole, Field(ge=1, description="Most columns per attribute (p).")] = 2
    n_restarts: Annotated[
        Whole, Field(ge=1, description="Restarts of overlapping correlation clustering.")
    ] = 10
    occ_function: Annotated[
        Literal["jaccard", "intersection"],
        Field(description="Overlapping clustering cost: jaccard or intersection."),
    ] = "jaccard"

    @model_validator(mode="after")
    def _beta_groups(self) -> Self:
        if self.columns is None and self.n_columns is not None and self.n_columns < self.beta:
            raise ValueError(f"{{n_columns}} {self.n_columns} is smaller than {{beta}} {self.beta}")
        return self


# Overlapping slicing has no PAM, so no medoid start.
del OverlappingSlicingParams.model_fields["medoid_start"]
OverlappingSlicingParams.model_rebuild(force=True)


# The pipeline -------------------------------------------------------------------------------------


def _resolve_sensitive(table: Table, sensitive: str | None) -> str:
    if sensitive is not None:
        if sensitive not in table.data.columns:
            raise ConfigError(
                f"sensitive attribute '{sensitive}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if sensitive in table.schema and table.schema[sensitive].role is Role.IDENTIFIER:
            raise ConfigError(f"sensitive attribute '{sensitive}' has role identifier")
        return sensitive
    candidates = [a.name for a in table.schema.with_role(Role.SENSITIVE)]
    if not candidates:
        raise ConfigError(
            f"no sensitive attribute: give {spell('sensitive')} one of the columns "
            f"({_sensitive_candidates(table)}), or one attribute role sensitive in the configuration"
        )
    if len(candidates) > 1:
        raise ConfigError(
            f"several attributes have role sensitive ({', '.join(candidates)}); slicing handles one: "
            f"give {spell('sensitive')} one of them"
        )
    return candidates[0]


def _sensitive_candidates(table: Table) -> str:
    """The columns that could be the sensitive attribute: those neither identifier nor
    quasi-identifier (else every column but the identifiers), for a message."""
    roles = {a.name: a.role for a in table.schema.attributes}
    usable = [name for name in table.data.columns if roles.get(name) is not Role.IDENTIFIER]
    others = [name for name in usable if roles.get(name) is not Role.QUASI_IDENTIFIER]
    return ", ".join(others or usable) or "none"


def _sliced_attributes(
    table: Table, params: SlicingParams, sensitive: str, method: str
) -> tuple[list[str], list[tuple[str, ...]] | None]:
    """The attributes to slice (every non-identifier one, or those of ``params.columns``) and the
    columns given (checked against the data), or None."""
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    all_attributes = [name for name in table.data.columns if name not in identifiers]
    chosen = None
    attributes = all_attributes
    if params.columns is not None:
        chosen = explicit_columns(params.columns, all_attributes, identifiers, sensitive, method)
        named = {name for column in chosen for name in column}
        attributes = [name for name in all_attributes if name in named]
    if len(attributes) < 2:
        raise ConfigError(
            "slicing needs the sensitive attribute and at least one other attribute, "
            f"got {', '.join(attributes)}"
        )
    if isinstance(params, OverlappingSlicingParams) and chosen is None and params.beta > len(attributes):
        raise ConfigError(f"beta {params.beta} is larger than the number of attributes ({len(attributes)})")
    return attributes, chosen


def _sensitive_codes(
    frame: pl.DataFrame,
    encoding: Encoding,
    sensitive: str,
    l: float,  # noqa: E741
) -> tuple[np.ndarray, int]:
    """The codes of the sensitive values and their number; every record needs one, and at least l."""
    sensitive_column = frame.get_column(sensitive)
    missing = sensitive_column.null_count()
    if not missing and sensitive_column.dtype.is_float():
        missing = int(sensitive_column.is_nan().sum())
    if missing:
        raise ConfigError(
            f"sensitive attribute '{sensitive}' is missing in {missing} record(s); slicing needs a sensitive "
            "value in every record (drop or fill those records first)"
        )
    sensitive_codes = encoding.codes[encoding.index(sensitive)].astype(np.int64)
    n_values = int(encoding.cardinalities[encoding.index(sensitive)])
    if l > n_values:
        raise ConfigError(
            f"l {l:g} is larger than the number of distinct values of '{sensitive}' ({n_values}); "
            "no sliced table can be l-diverse"
        )
    return sensitive_codes, n_values


def _slicing_columns(
    params: SlicingParams,
    matrix: np.ndarray,
    attributes: list[str],
    sensitive: str,
    chosen: list[tuple[str, ...]] | None,
    seed: int,
) -> list[tuple[str, ...]]:
    """The columns: those given, PAM's (slicing) or overlapping correlation clustering's."""
    if chosen is not None:
        return chosen
    if isinstance(params, OverlappingSlicingParams):
        return overlapping_columns(
            matrix,
            attributes,
            sensitive,
            params.n_columns,
            params.sensitive_column_size,
            params.beta,
            params.max_labels,
            params.occ_function,
            params.n_restarts,
            seed,
        )
    count = params.n_columns if params.n_columns is not None else default_n_columns(len(attributes))
    if params.sensitive_column_size is not None and params.n_columns is None:
        count = max(2, min(count, len(attributes) - params.sensitive_column_size + 1))
    return partition_attributes(
        matrix,
        attributes,
        count,
        sensitive=sensitive,
        sensitive_column_size=params.sensitive_column_size,
        seed=seed if params.medoid_start == "random" else None,
    )


def _slice(table: Table, params: SlicingParams, context: Context, method: str) -> SlicedRelease:
    """The registered run of ``slicing`` and ``overlapping-slicing`` (steps: :func:`slice_table`)."""
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    sensitive = _resolve_sensitive(table, params.sensitive)
    attributes, chosen = _sliced_attributes(table, params, sensitive, method)
    frame = table.data
    encoding = encode(frame, attributes)
    sensitive_codes, n_values = _sensitive_codes(frame, encoding, sensitive, params.l)

    streams = np.random.SeedSequence(params.seed).spawn(4)
    timings: dict[str, float] = {}

    started = time.perf_counter()
    numeric = [
        name
        for name in attributes
        if (name in table.schema and table.schema[name].kind in (Kind.NUMERIC, Kind.DATE))
        and (frame.schema[name].is_numeric() or frame.schema[name].is_temporal())
    ]
    matrix = attribute_correlation(
        frame, attributes, method=params.correlation, n_bins=params.n_bins, numeric=numeric
    )
    timings["correlation"] = time.perf_counter() - started

    started = time.perf_counter()
    attribute_seed = int(streams[0].generate_state(1)[0])
    final_columns = _slicing_columns(params, matrix, attributes, sensitive, chosen, attribute_seed)
    timings["attributes"] = time.perf_counter() - started

    started = time.perf_counter()
    buckets, max_probability = partition_tuples(
        table,
        encoding,
        final_columns,
        sensitive,
        sensitive_codes,
        n_values,
        params.l,
        params.bucket_weighting,
        params.partition,
        params.min_bucket_size,
        np.random.default_rng(streams[1]),
        context.progress,
    )
    timings["tuples"] = time.perf_counter() - started

    started = time.perf_counter()
    bucket_of = record_buckets(buckets, table.n_records)
    published = publish(frame, final_columns, bucket_of, np.random.default_rng(streams[2]))
    singles = sum(1 for rows in buckets if len(rows) == 1)
    if singles:
        warnings.warn(
            f"{singles} bucket(s) hold a single record: slicing gives them no protection",
            SdcWarning,
            stacklevel=2,
        )
    timings["output"] = time.perf_counter() - started

    started = time.perf_counter()
    report = None
    if params.membership:
        report = membership_report(
            frame,
            final_columns,
            buckets,
            sensitive,
            max_generated=params.max_generated,
            seed=int(streams[3].generate_state(1)[0]),
        )
    timings["membership"] = time.perf_counter() - started

    average, pair_weighted = column_correlation(matrix, attributes, final_columns)
    figures = SlicingFigures(
        columns=tuple(tuple(column) for column in final_columns),
        bucket_of=bucket_of,
        buckets=[np.asarray(rows, dtype=np.int64) for rows in buckets],
        sensitive=sensitive,
        attributes=tuple(attributes),
        partition=params.partition,
        max_probability=max_probability,
        timings=timings,
        membership=report,
        correlation=matrix,
        average_correlation=average,
        pair_weighted_correlation=pair_weighted,
    )
    return SlicedRelease(
        table=Table.from_frame(published, source="<sliced>"),
        original=table,
        method=method,
        quasi_identifiers=(),
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=np.full(table.n_records, -1, dtype=np.int64),
        seed=params.seed,
        params=params,
        figures=figures,
    )


def slice_table(
    table: Table,
    *,
    sensitive: str | None = None,
    method: str = "slicing",
    n_columns: int | None = None,
    columns: Sequence[Sequence[str]] | None = None,
    sensitive_column_size: int | None = None,
    l: float = 2.0,  # noqa: E741
    n_bins: int = 10,
    correlation: str = "phi2",
    bucket_weighting: str = "none",
    partition: str | None = None,
    min_bucket_size: int | None = None,
    beta: int = 2,
    max_labels: int = 2,
    n_restarts: int = 10,
    occ_function: str = "jaccard",
    medoid_start: str = "random",
    seed: int = 0,
    membership: bool = True,
    max_generated: int = 1_000_000,
    progress: ProgressCallback | None = None,
) -> SlicedRelease:
    """Slice ``table`` (Li et al., 2012) or slice it with overlapping columns (Dhaigude & Kumar, 2014).

    Every non-identifier attribute is sliced (or only those named in ``columns``). Steps:

    1. correlation (:func:`attribute_correlation`, ``correlation`` = ``"phi2"`` or ``"pearson"``,
       numeric attributes discretized into ``n_bins`` equal-width bins);
    2. columns: ``columns`` if given; else ``method="slicing"``: PAM k-medoids into ``n_columns``
       columns (default :func:`default_n_columns`), optionally with ``sensitive_column_size``
       (:func:`partition_attributes`); ``method="overlapping-slicing"``: overlapping correlation
       clustering with at least ``beta`` groups and at most ``max_labels`` columns per attribute
       (``occ_function`` ``"jaccard"`` or ``"intersection"``, ``n_restarts`` restarts), started with
       ``n_columns`` labels (default ``max(beta, default_n_columns(A))``, since with ``beta`` labels
       the beta rule forbids any overlap); empty labels are dropped and identical ones merged, so
       fewer columns may result;
    3. tuple partition under ``l``-diverse slicing (SPEC §1.7, ``bucket_weighting`` ``"none"`` or
       ``"size"``): ``partition="mondrian"`` (default for slicing) or ``"random-halving"`` (default
       for overlapping slicing); ``min_bucket_size`` rejects splits leaving smaller buckets;
    4. output: independent uniform permutations of every column inside every bucket (:func:`publish`);
    5. ``membership``: :func:`membership_report` (capped at ``max_generated`` combinations).

    Randomness: ``numpy.random.SeedSequence(seed)`` is spawned into independent streams for the
    columns (PAM start / OCC), the tuple partition (random halving), the output permutations and the
    membership sample, so every step is reproducible from ``seed``. ``medoid_start="random"`` starts
    PAM from medoids drawn from the seed (the paper's arbitrary start, so that runs with different
    seeds explore different columns); ``"build"`` uses SPEC's deterministic BUILD.

    The tuple keys of the diversity check come from the original values' integer codes: for every
    column the group key of its attributes, for the sensitive column the key of its attributes
    without the sensitive one; an attribute in several columns is part of each key.

    The parameters are those of :class:`SlicingParams` (``method="slicing"``) or
    :class:`OverlappingSlicingParams` (``method="overlapping-slicing"``), which check them; a
    parameter of the other method only (``medoid_start``; ``beta``, ``max_labels``, ``n_restarts``,
    ``occ_function``) given another value than its default is refused, never ignored, and
    ``partition=None`` takes the method's default. The registered run does the work
    (:func:`sdckit.anonymize.run_method`).

    Raises :class:`ConfigError` (naming the parameter or attribute) for an unknown method, a
    parameter the method does not take, an unknown partition,
    correlation, bucket weighting or medoid start; a missing or unknown sensitive attribute; a
    missing sensitive value; ``l < 1`` or ``l`` above the number of distinct sensitive values;
    ``n_columns`` out of range; ``beta`` above the number of attributes; unknown or invalid
    ``columns``; and a table that is not l-diverse even as a single bucket (no partition can be).
    Warns (:class:`SdcWarning`) about buckets of a single record.
    """
    if method not in SLICING_METHODS:
        raise ConfigError(f"method must be one of {', '.join(SLICING_METHODS)}, got {method!r}")
    given = {
        "sensitive": sensitive,
        "n_columns": n_columns,
        "columns": columns,
        "sensitive_column_size": sensitive_column_size,
        "l": l,
        "n_bins": n_bins,
        "correlation": correlation,
        "bucket_weighting": bucket_weighting,
        "min_bucket_size": min_bucket_size,
        "beta": beta,
        "max_labels": max_labels,
        "n_restarts": n_restarts,
        "occ_function": occ_function,
        "medoid_start": medoid_start,
        "seed": seed,
        "membership": membership,
        "max_generated": max_generated,
    }
    if partition is not None:
        given["partition"] = partition
    own, other = (
        (SlicingParams, OverlappingSlicingParams)
        if method == "slicing"
        else (OverlappingSlicingParams, SlicingParams)
    )
    _refuse_foreign(method, own, other, given)
    values = {name: value for name, value in given.items() if name in own.model_fields}
    release = run_method(method, table, values, Context(progress=progress))
    assert isinstance(release, SlicedRelease)  # the slicing methods' run returns one
    return release


def _refuse_foreign(
    method: str, own: type[SlicingParams], other: type[SlicingParams], given: dict[str, Any]
) -> None:
    """Nothing is silently ignored: a keyword of the other slicing method only, given another value
    than its default, is a ConfigError naming it."""
    foreign = [
        name
        for name, value in given.items()
        if name not in own.model_fields and value != other.model_fields[name].default
    ]
    if foreign:
        owner = "overlapping-slicing" if method == "slicing" else "slicing"
        article = "an" if owner[0] in "aeiou" else "a"
        kind = f"{article} {owner} parameter" if len(foreign) == 1 else f"{owner} parameters"
        raise ConfigError(f"{method} does not take {', '.join(foreign)} ({kind})")


def _slicing_summary(sliced: SlicedRelease) -> dict[str, Any]:
    from sdckit.params import finite_or_none

    sizes = [len(rows) for rows in sliced.buckets]
    membership = sliced.membership or {}
    return {
        "sensitive": sliced.sensitive,
        "columns": [list(c) for c in sliced.columns],
        "partition": sliced.partition,
        "l": sliced.l,
        "buckets": len(sizes),
        "smallest_bucket": min(sizes),
        "largest_bucket": max(sizes),
        "max_probability": finite_or_none(sliced.max_probability),
        "l_achieved": finite_or_none(sliced.l_achieved),
        "fake_tuples": membership.get("fake"),
        "membership": membership,
        "average_correlation": finite_or_none(sliced.average_correlation),
        "pair_weighted_correlation": finite_or_none(sliced.pair_weighted_correlation),
        "timings": {name: round(value, 4) for name, value in sliced.timings.items()},
    }


def _slicing_report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"column {number}: {', '.join(names)}" for number, names in enumerate(figures["columns"], start=1)
    ]
    sampled = " (sampled)" if (figures["membership"] or {}).get("sampled") else ""
    return [
        f"sensitive attribute: {figures['sensitive']} (in the last column)",
        *lines,
        f"buckets: {figures['buckets']:,}; smallest bucket: {figures['smallest_bucket']:,}; "
        f"l achieved: {figures['l_achieved']} (asked {figures['l']:g}); "
        f"fake tuples: {figures['fake_tuples']}{sampled}",
        f"average correlation: {figures['average_correlation']}",
    ]


def _slicing_violation(sliced: SlicedRelease, figures: dict[str, Any]) -> str | None:
    if sliced.l_achieved + 1e-9 < sliced.l:
        return f"the sliced table is only {sliced.l_achieved:.4g}-diverse, not {sliced.l:g}-diverse"
    return None


_SLICING_OPTIONS: dict[str, Any] = {
    "summary": _slicing_summary,
    "report": _slicing_report,
    "violation": _slicing_violation,
    "progress_label": "buckets",
    "not_reapplicable": (
        "its buckets group and permute records together, so a record's release depends on others"
    ),
}


@register_method(
    "slicing",
    SlicingParams,
    help="l-diverse slicing (Li et al.): columns of correlated attributes permuted inside buckets.",
    **_SLICING_OPTIONS,
    examples={"replay on people": {"l": 2, "n_columns": 2, "seed": 5}},
)
def _run_slicing(table: Table, params: SlicingParams, context: Context) -> SlicedRelease:
    return _slice(table, params, context, "slicing")


@register_method(
    "overlapping-slicing",
    OverlappingSlicingParams,
    help="Improved slicing (Dhaigude & Kumar): overlapping columns, random-halving tuple partition.",
    **_SLICING_OPTIONS,
    examples={"replay on people": {"l": 2, "seed": 7}},
)
def _run_overlapping_slicing(
    table: Table, params: OverlappingSlicingParams, context: Context
) -> SlicedRelease:
    return _slice(table, params, context, "overlapping-slicing")
