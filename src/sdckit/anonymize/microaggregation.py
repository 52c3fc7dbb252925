"""Microaggregation: MDAV, V-MDAV, optimal univariate microaggregation, individual ranking, and
categorical microaggregation (k-anonymity through microaggregation).

Microaggregation partitions the records into groups of at least k similar records and releases, for
every record, the representative of its group instead of its own values: the group mean of a numeric
attribute, the lower median of an ordinal one, the mode of a nominal one. Methods (SPEC §4):

``mdav``
    MDAV-generic (Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005), fixed group size k
    (the last group k..2k-1), squared Euclidean distance on standardized attributes. Exact MDAV is
    quadratic (O(n^2 d / k)); its loop is compiled. ``partition_size`` turns on a scalable
    *approximation*: the records are first cut, by recursive halving along the first principal
    component, into blocks of at most that many records (each at least 2k), then exact MDAV runs in
    every block. Groups never straddle two blocks, so the result is not MDAV's; the benchmark compares
    its SSE/SST with exact MDAV.
``vmdav``
    V-MDAV (Solanas & Martínez-Ballesté 2006): groups grow from k up to 2k-1 records while the
    nearest outside record is closer to the group than gamma times its distance to the rest.
``univariate-microaggregation``
    Each attribute separately: ``optimal`` is Hansen & Mukherjee's (2003) exact algorithm (sort, then
    a shortest path over consecutive groups of k..2k-1 records, O(n k)); ``individual-ranking`` is
    sdcMicro's ``onedims`` (sort, consecutive groups of k, the last group takes the remainder). Not
    k-anonymous: groups differ from attribute to attribute.
``categorical-microaggregation``
    MDAV-generic on mixed attributes (Domingo-Ferrer & Torra 2005; SPEC §4.4): nominal distance 0/1 and
    mode representative, ordinal distance |rank difference| / (m-1) and lower-median representative,
    numeric standardized distance and mean. By default on every quasi-identifier jointly, which makes
    the release k-anonymous (every group of >= k records gets identical quasi-identifier values).

``strata`` (``mdav``, ``vmdav``, ``univariate-microaggregation``; sdcMicro's ``strata_variables``) runs
the grouping inside each combination of the strata attributes' values, each stratum standardized on
its own (:mod:`sdckit.anonymize._microaggregation_strata`; a stratum of fewer than k records is
refused). ``mdav``'s ``measure`` releases the group's mean (default), median, trimmed mean or onestep
location (:mod:`sdckit.anonymize._microaggregation_aggregate`); sdcMicro ignores ``measure`` for mdav
and releases the mean. ``rmd`` (sdcMicro's robust variant) is :mod:`sdckit.anonymize.rmd_microaggregation`.

The attributes microaggregated are the quasi-identifiers of kind numeric (numeric methods) or all
quasi-identifiers (categorical microaggregation) unless ``attributes`` names them. Information loss is
SSE/SST of SPEC §4.3 on standardized data (sample standard deviation; a constant attribute is not
scaled). For categorical microaggregation SSE and SST use the mixed distance (squared) to the group
representative and to the representative of the whole file.

Choices and deviations:

* Ties (farthest, nearest, mode) go to the smallest row index or category code (SPEC §0). Distances are
  computed in original units weighted by the inverse variance (what sdcMicro's ``Mdav.cpp`` does),
  which equals the standardized distance and keeps the ties of integer data exact.
* Missing values are refused, naming the attribute and the count. sdcMicro's ``mdav`` instead codes
  them as -999 and leaves them out of the distances, coordinate by coordinate; SPEC's default is to
  raise.
* k larger than the number of records is refused; k <= n < 2k gives a single group.
* V-MDAV's unconfirmed fine points follow SPEC §4.2: the centroid of all records computed once, d_in the
  minimal distance to a group member, leftover records (fewer than k) join the group with the nearest
  centroid (that group may then exceed 2k-1 records).
* sdcMicro's individual ranking refuses fewer than 2k records; here they form one group.

References: Domingo-Ferrer, J. & Mateo-Sanz, J. M. (2002), IEEE TKDE 14(1); Domingo-Ferrer, J. &
Torra, V. (2005), Data Mining and Knowledge Discovery 11(2); Hansen, S. L. & Mukherjee, S. (2003),
IEEE TKDE 15(4); Solanas, A. & Martínez-Ballesté, A. (2006), COMPSTAT; Templ, M. et al., sdcMicro
``microaggregation``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Annotated, Any, ClassVar, Literal, Self, TypedDict

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field, model_validator

from sdckit.anonymize._microaggregation_kernels import mdav_generic, optimal_univariate
from sdckit.anonymize._microaggregation_strata import check_strata_sizes, stratified, stratum_keys
from sdckit.anonymize.base import Context, check_k_at_most_records, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import encode_column
from sdckit.params import Finite, MethodParams, Whole, names_list, spell
from sdckit.table import Kind, Role, Schema, Table, undescribed_text_hint

__all__ = [
    "CategoricalMicroaggregationParams",
    "MdavParams",
    "UnivariateMicroaggregationParams",
    "VmdavParams",
    "categorical_microaggregation",
    "information_loss",
    "mdav",
    "mdav_groups",
    "pca_blocks",
    "univariate_groups",
    "univariate_microaggregation",
    "vmdav_groups",
    "vmdav_microaggregation",
]


# Groups of numeric matrices ----------------------------------------------------------------------


def inverse_variance(X: np.ndarray) -> np.ndarray:
    """The weight of every column: 1 / sample variance, 1 for a constant column (not scaled)."""
    if X.shape[0] < 2:
        return np.ones(X.shape[1])
    variance = X.var(axis=0, ddof=1)
    return np.where(variance > 0, 1.0 / np.where(variance > 0, variance, 1.0), 1.0)


def standardized(X: np.ndarray) -> np.ndarray:
    """z-scores with the sample standard deviation; a constant column is only centred."""
    return (X - X.mean(axis=0)) * np.sqrt(inverse_variance(X))


def _numeric_kernel(X: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    n, d = X.shape
    return mdav_generic(
        np.ascontiguousarray(X, dtype=np.float64),
        np.ascontiguousarray(weights, dtype=np.float64),
        np.zeros(d, dtype=np.bool_),
        np.zeros(d, dtype=np.int64),
        np.zeros((n, 0), dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0, dtype=np.float64),
        int(k),
    )


def mdav_groups(
    X: np.ndarray, k: int, *, partition_size: int | None = None, progress: Any = None
) -> tuple[np.ndarray, int]:
    """MDAV group labels (0..G-1) of the rows of ``X`` (n, d), and the number of blocks (1 when exact).

    With ``partition_size``, the scalable approximation: :func:`pca_blocks` then exact MDAV per block.
    """
    X = np.asarray(X, dtype=np.float64)
    _check_k(k, X.shape[0])
    weights = inverse_variance(X)
    if partition_size is None or X.shape[0] <= partition_size:
        if progress is not None:
            progress(0, 1)
        labels = _numeric_kernel(X, weights, k)
        if progress is not None:
            progress(1, 1)
        return labels, 1
    blocks = pca_blocks(X, weights, partition_size)
    labels = np.empty(X.shape[0], dtype=np.int64)
    offset = 0
    for number, block in enumerate(blocks):
        local = _numeric_kernel(X[block], weights, k)
        labels[block] = local + offset
        offset += int(local.max()) + 1
        if progress is not None:
            progress(number + 1, len(blocks))
    return labels, len(blocks)


def pca_blocks(X: np.ndarray, weights: np.ndarray, size: int) -> list[np.ndarray]:
    """Row indices of blocks of at most ``size`` records: a block larger than ``size`` is cut in two
    halves (sizes floor and ceil of half) at the median of its projection on its first principal
    component (of the standardized data; ties by row index), recursively. Every block has more than
    ``size / 2`` records, so at least 2k when ``size >= 4k``."""
    Z = (X - X.mean(axis=0)) * np.sqrt(weights)
    blocks: list[np.ndarray] = []
    stack = [np.arange(X.shape[0])]
    while stack:
        index = stack.pop()
        if len(index) <= size:
            blocks.append(index)
            continue
        block = Z[index]
        block = block - block.mean(axis=0)
        _, vectors = np.linalg.eigh(block.T @ block)
        direction = vectors[:, -1]
        direction = direction if direction[np.argmax(np.abs(direction))] > 0 else -direction
        order = np.argsort(block @ direction, kind="stable")
        half = len(index) // 2
        stack.append(np.sort(index[order[half:]]))
        stack.append(np.sort(index[order[:half]]))
    return blocks


def vmdav_groups(X: np.ndarray, k: int, gamma: float = 0.2) -> np.ndarray:
    """V-MDAV group labels (0..G-1) of the rows of ``X`` (standardized distances): by the full-scan
    kernel below ``VMDAV_TREE_FROM`` records, from the k-d tree above (the same groups)."""
    from sdckit.anonymize._vmdav_tree import vmdav_auto

    X = np.ascontiguousarray(X, dtype=np.float64)
    _check_k(k, X.shape[0])
    return vmdav_auto(X, inverse_variance(X), int(k), float(gamma))


def univariate_groups(values: np.ndarray, k: int, variant: str = "optimal") -> np.ndarray:
    """Group labels of one attribute's values: ``optimal`` (Hansen & Mukherjee 2003) or
    ``individual-ranking`` (sdcMicro's onedims); groups are consecutive in sorted order (ties by row
    index), numbered in that order."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    _check_k(k, n)
    order = np.argsort(values, kind="stable")
    if variant == "optimal":
        sorted_groups = optimal_univariate(values[order], int(k))
    elif variant == "individual-ranking":
        sorted_groups = np.minimum(np.arange(n) // k, max(n // k, 1) - 1)
    else:
        raise ConfigError(f"variant must be 'optimal' or 'individual-ranking', got {variant!r}")
    labels = np.empty(n, dtype=np.int64)
    labels[order] = sorted_groups
    return labels


def information_loss(X: np.ndarray, labels: np.ndarray, *, standardize: bool = True) -> tuple[float, float]:
    """(SSE, SST) of SPEC §4.3: within-group and total sums of squares, on standardized data by
    default. IL = 100 * SSE / SST."""
    X = np.asarray(X, dtype=np.float64)
    Z = standardized(X) if standardize else X - X.mean(axis=0)
    counts = np.bincount(labels).astype(np.float64)
    sse = 0.0
    for j in range(Z.shape[1]):
        means = np.bincount(labels, weights=Z[:, j]) / np.maximum(counts, 1.0)
        sse += float(np.sum((Z[:, j] - means[labels]) ** 2))
    return sse, float(np.sum(Z**2))


def _check_k(k: int, n: int) -> None:
    """The arrays' functions (``mdav_groups``, ...) check ``k`` themselves; the methods' parameters
    objects bound it below."""
    check_k_at_most_records(k, n)
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")


# Tables ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MicroaggregationFigures(Figures):
    """What a microaggregation found: the ``attributes`` microaggregated, the groups (their number,
    smallest and largest size; summed over the attributes for univariate microaggregation), SSE, SST
    and the information loss ``100 SSE / SST`` in %; MDAV's ``blocks`` of the approximation (1 and
    ``exact`` when none), univariate microaggregation's figures ``per_attribute``, the
    ``k_anonymity`` of the release over the quasi-identifiers (None when it has none, or for
    univariate microaggregation), and the number of ``strata`` (None without ``strata``)."""

    attributes: list[str]
    groups: int
    smallest_group: int
    largest_group: int
    sse: float
    sst: float
    information_loss: float
    blocks: int | None = None
    exact: bool | None = None
    per_attribute: dict[str, dict[str, Any]] | None = None
    k_anonymity: dict[str, Any] | None = None
    strata: int | None = None


def _chosen(table: Table, attributes: list[str] | None, *, numeric: bool, method: str) -> list[str]:
    if attributes:
        unknown = [name for name in attributes if name not in table.data.columns]
        if unknown:
            raise ConfigError(
                f"attributes: '{unknown[0]}' is not a column of the data (columns: "
                f"{', '.join(table.data.columns)})"
            )
        if len(set(attributes)) != len(attributes):
            raise ConfigError(f"attributes: an attribute is named twice in {', '.join(attributes)}")
        names = list(attributes)
    else:
        qis = table.schema.with_role(Role.QUASI_IDENTIFIER)
        names = [a.name for a in qis if a.kind is Kind.NUMERIC] if numeric else [a.name for a in qis]
        if not names:
            which = "quasi-identifier of kind numeric" if numeric else "quasi-identifier"
            raise ConfigError(
                f"{method}: no attribute is a {which} in the configuration; "
                f"name them with {spell('attributes')}"
            )
    for name in names:
        if name in table.schema and table.schema[name].role is Role.IDENTIFIER:
            raise ConfigError(f"attributes: '{name}' is an identifier, which releases drop")
    return names


def _check_missing(table: Table, names: list[str], method: str) -> None:
    for name in names:
        column = table.column(name)
        missing = column.null_count() + (int(column.is_nan().sum()) if column.dtype.is_float() else 0)
        if missing:
            raise ConfigError(
                f"{table.source or 'data'}: attribute '{name}' has {missing:,} missing values; {method} "
                "needs a value in every record (fill them, or drop those records)"
            )


def _numeric_matrix(table: Table, names: list[str], method: str) -> np.ndarray:
    for name in names:
        kind = table.schema[name].kind if name in table.schema else None
        dtype = table.column(name).dtype
        if not dtype.is_numeric() or kind not in (Kind.NUMERIC, None):
            shown = kind.value if kind is not None else str(dtype)
            raise ConfigError(
                f"{method} needs numeric attributes; '{name}' is {shown} "
                "(categorical-microaggregation handles categorical and ordinal attributes)"
                f"{undescribed_text_hint(table, name)}"
            )
    _check_missing(table, names, method)
    X = np.column_stack([table.column(name).cast(pl.Float64).to_numpy() for name in names])
    _check_spread(X, names, method)
    return X


def _check_spread(X: np.ndarray, names: list[str], method: str) -> None:
    """Refuse values whose mean or variance overflows: the standardized distances and the group means
    could not be finite (the release would hold ±inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = np.isfinite(X.mean(axis=0)) & np.isfinite(X.var(axis=0, ddof=1) if len(X) > 1 else 0.0)
    for j, name in enumerate(names):
        if not finite[j]:
            raise InputError(
                f"attribute '{name}': {method} cannot average its values: their mean or variance is beyond "
                f"the largest floating-point number (values up to {np.nanmax(np.abs(X[:, j])):g}); rescale "
                "the attribute"
            )


class _GroupFigures(TypedDict):
    groups: int
    smallest_group: int
    largest_group: int


class _LossFigures(TypedDict):
    sse: float
    sst: float
    information_loss: float


def _group_figures(labels: np.ndarray) -> _GroupFigures:
    sizes = np.bincount(labels)
    sizes = sizes[sizes > 0]
    return {"groups": int(len(sizes)), "smallest_group": int(sizes.min()), "largest_group": int(sizes.max())}


def _loss_figures(sse: float, sst: float) -> _LossFigures:
    return {
        "sse": round(sse, 6),
        "sst": round(sst, 6),
        "information_loss": round(100.0 * sse / sst, 6) if sst > 0 else 0.0,
    }


def _group_ranges(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """NCP of every released cell: the group's range of the attribute over the file's range."""
    order = np.argsort(labels, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(labels[order]) != 0])
    sorted_x = X[order]
    spread = np.maximum.reduceat(sorted_x, starts, axis=0) - np.minimum.reduceat(sorted_x, starts, axis=0)
    total = X.max(axis=0) - X.min(axis=0)
    per_group = np.where(total > 0, spread / np.where(total > 0, total, 1.0), 0.0)
    group_of_start = labels[order][starts]
    lookup = np.zeros((int(labels.max()) + 1, X.shape[1]))
    lookup[group_of_start] = per_group
    return lookup[labels]


def _release(
    table: Table,
    method: str,
    columns: list[pl.Series],
    names: list[str],
    labels: np.ndarray | None,
    params: MicroaggregationParams,
    figures: MicroaggregationFigures,
    penalty: np.ndarray | None,
) -> Release:
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    released = table.data.with_columns(columns).drop(identifiers)
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    return Release(
        table=Table(released, schema, source=table.source, weights=table.weights),
        original=table,
        method=method,
        params=params,
        figures=figures,
        quasi_identifiers=tuple(names),
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=labels if labels is not None else np.full(table.n_records, -1, dtype=np.int64),
        cell_penalty=penalty,
    )


def _with_k_anonymity(release: Release, k: int) -> Release:
    """The release with the smallest class over every quasi-identifier (k-anonymity re-checked) in
    its figures."""
    released = release.table
    qis = [a.name for a in released.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not qis:
        return release
    smallest = int(released.data.group_by(qis).len().get_column("len").to_numpy().min())
    anonymity = {"quasi_identifiers": qis, "smallest_class": smallest, "k_anonymous": smallest >= k}
    return replace(
        release, figures=replace(release.figures_as(MicroaggregationFigures), k_anonymity=anonymity)
    )


def _numeric_release(
    table: Table,
    method: str,
    names: list[str],
    X: np.ndarray,
    labels: np.ndarray,
    params: MicroaggregationParams,
    blocks: int | None = None,
    *,
    strata: int | None = None,
    released: np.ndarray | None = None,
) -> Release:
    """The release of group means, or of ``released`` (every record's values, n x d: another
    measure than the mean), whose SSE is then its squared standardized distance to the originals."""
    columns = []
    if released is None:
        counts = np.bincount(labels).astype(np.float64)
        for j, name in enumerate(names):
            means = np.bincount(labels, weights=X[:, j]) / counts
            columns.append(pl.Series(name, means[labels], dtype=pl.Float64))
        sse, sst = information_loss(X, labels)
    else:
        columns = [pl.Series(name, released[:, j], dtype=pl.Float64) for j, name in enumerate(names)]
        sse = float(np.sum(inverse_variance(X) * (X - released) ** 2))
        sst = float(np.sum(standardized(X) ** 2))
    figures = MicroaggregationFigures(
        attributes=names,
        **_group_figures(labels),
        **_loss_figures(sse, sst),
        blocks=blocks,
        exact=None if blocks is None else blocks == 1,
        strata=strata,
    )
    release = _release(table, method, columns, names, labels, params, figures, _group_ranges(X, labels))
    return _with_k_anonymity(release, params.k)


def mdav(
    table: Table,
    k: int = 3,
    attributes: list[str] | None = None,
    *,
    partition_size: int | None = None,
    strata: list[str] | None = None,
    measure: str = "mean",
    trim: float | None = None,
    progress: Any = None,
) -> Release:
    """MDAV microaggregation of numeric attributes (SPEC §4.1): every value replaced by its group mean
    (or its group's ``measure``: median, trim with ``trim``, onestep; sdcMicro ignores measure for
    mdav). ``strata``: MDAV inside each combination of those attributes' values (a stratum needs at
    least k records).

    ``attributes`` default to the quasi-identifiers of kind numeric. ``Release.classes`` holds each
    record's group, ``Release.figures`` the :class:`MicroaggregationFigures` (groups, smallest and
    largest group, SSE, SST, information loss in %, k-anonymity of the release over the
    quasi-identifiers).

    Raises ConfigError for k above the number of records, a non-numeric attribute, a missing value,
    and the parameters :class:`MdavParams` refuses (``partition_size`` below 4k, ...).
    """
    return run_method(
        "mdav",
        table,
        {
            "k": k,
            "attributes": attributes,
            "partition_size": partition_size,
            "strata": strata,
            "measure": measure,
            "trim": trim,
        },
        Context(progress=progress),
    )


def vmdav_microaggregation(
    table: Table,
    k: int = 3,
    attributes: list[str] | None = None,
    *,
    gamma: float = 0.2,
    strata: list[str] | None = None,
) -> Release:
    """V-MDAV microaggregation of numeric attributes (SPEC §4.2): every value replaced by its group mean;
    with ``strata`` inside each stratum."""
    return run_method("vmdav", table, {"k": k, "attributes": attributes, "gamma": gamma, "strata": strata})


def univariate_microaggregation(
    table: Table,
    k: int = 3,
    attributes: list[str] | None = None,
    *,
    variant: str = "optimal",
    strata: list[str] | None = None,
) -> Release:
    """Microaggregation of every attribute on its own: ``optimal`` (Hansen & Mukherjee 2003) or
    ``individual-ranking`` (sdcMicro's onedims), with ``strata`` inside each stratum. Figures per
    attribute and in total (SSE and SST summed over the standardized attributes)."""
    values = {"k": k, "attributes": attributes, "variant": variant, "strata": strata}
    return run_method("univariate-microaggregation", table, values)


# Categorical (mixed) microaggregation --------------------------------------------------------------


def _encoded(table: Table, names: list[str]) -> list[tuple[str, np.ndarray, Any]]:
    """Per attribute (kind, values or codes, categories: None for a numeric one)."""
    described: list[tuple[str, np.ndarray, Any]] = []
    for name in names:
        kind = table.schema[name].kind if name in table.schema else Kind.CATEGORICAL
        column = table.column(name)
        if kind is Kind.NUMERIC and column.dtype.is_numeric():
            described.append(("numeric", column.cast(pl.Float64).to_numpy(), None))
        elif kind in (Kind.NUMERIC, Kind.ORDINAL, Kind.CATEGORICAL):
            codes, cardinality, _, categories = encode_column(column)
            label = "ordinal" if kind is not Kind.CATEGORICAL else "nominal"
            described.append((label, codes.astype(np.int64), categories))
        else:
            raise ConfigError(
                f"categorical-microaggregation takes numeric, ordinal and categorical attributes; "
                f"'{name}' is {kind.value}"
            )
    return described


def _representatives(kind: str, values: np.ndarray, labels: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group: mean (numeric), lower median code (ordinal), mode code with ties to the smaller code
    (nominal)."""
    if kind == "numeric":
        return np.bincount(labels, weights=values, minlength=n_groups) / np.bincount(
            labels, minlength=n_groups
        )
    order = np.lexsort((values, labels))
    groups, codes = labels[order], values[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(groups) != 0) | (np.diff(codes) != 0)])
    run_groups, run_codes = groups[starts], codes[starts]
    run_counts = np.diff(np.r_[starts, len(order)])
    result = np.zeros(n_groups, dtype=np.int64)
    if kind == "nominal":
        pick = np.lexsort((run_codes, -run_counts, run_groups))  # per group: largest count, smaller code
        first = np.r_[True, np.diff(run_groups[pick]) != 0]
        result[run_groups[pick][first]] = run_codes[pick][first]
        return result
    sizes = np.bincount(labels, minlength=n_groups)
    cumulative = np.cumsum(run_counts)
    group_start = np.r_[0, np.cumsum(sizes)[:-1]]
    within = cumulative - group_start[run_groups]  # records of the group up to this run
    hit = within > (sizes[run_groups] - 1) // 2
    first = hit & np.r_[True, (run_groups[1:] != run_groups[:-1]) | ~hit[:-1]]
    result[run_groups[first]] = run_codes[first]
    return result


def _mixed_distances(
    described: list[Any], weights: list[float], labels: np.ndarray, representatives: list[np.ndarray]
) -> float:
    total = 0.0
    for (kind, values, _), weight, rep in zip(described, weights, representatives, strict=True):
        if kind == "nominal":
            total += weight * float(np.count_nonzero(values != rep[labels]))
        else:
            total += weight * float(np.sum((values - rep[labels]) ** 2))
    return total


def categorical_microaggregation(table: Table, k: int = 3, attributes: list[str] | None = None) -> Release:
    """MDAV-generic on numeric, ordinal and nominal attributes jointly (SPEC §4.4): every record's
    values replaced by its group's mean / lower median / mode. With the default attributes (every
    quasi-identifier) the release is k-anonymous."""
    return run_method("categorical-microaggregation", table, {"k": k, "attributes": attributes})


# Registered methods ---------------------------------------------------------------------------


class MicroaggregationParams(MethodParams):
    """Parameters shared by the microaggregation methods."""

    k: Annotated[Whole, Field(ge=2, description="Smallest group size (k of k-anonymity).")] = 3
    attributes: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(
            description='Attributes to microaggregate, e.g. "income,expend" (default: the quasi-identifiers).'
        ),
    ] = None


class StratifiedParams(MicroaggregationParams):
    """Parameters of the microaggregation methods that group inside strata (sdcMicro's
    ``strata_variables``; :mod:`sdckit.anonymize._microaggregation_strata`)."""

    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(
            description="Attributes whose value combinations are strata: groups are formed inside each "
            "stratum (sdcMicro's strata_variables), comma-separated."
        ),
    ] = None

    @model_validator(mode="after")
    def _some_strata(self) -> Self:
        if self.strata == []:
            raise ValueError("{strata} is empty: give at least one attribute or leave it out")
        return self

    #: Parameters added after the method's first documents, left out of its recipe at their default
    #: (a default run's summary and recipe stay as they were, byte for byte).
    omitted_at_default: ClassVar[dict[str, Any]] = {"strata": None, "measure": "mean", "trim": None}

    def to_recipe(self) -> dict[str, Any]:
        """Every parameter but those of :attr:`omitted_at_default` left at their default."""
        recipe = super().to_recipe()
        for name, default in self.omitted_at_default.items():
            if name in recipe and recipe[name] == default:
                recipe.pop(name)
        return recipe


class MdavParams(StratifiedParams):
    """Parameters of MDAV (``sdckit anonymize mdav``; Domingo-Ferrer & Mateo-Sanz, 2002). The default
    attributes are the quasi-identifiers of kind numeric. ``measure`` is the group statistic released
    (sdcMicro ignores its ``measure`` for mdav and always releases the mean; sdckit applies it)."""

    partition_size: Annotated[
        Whole | None,
        Field(
            ge=8,
            description="Approximation for large files: PCA blocks of at most this many records, MDAV in each.",  # noqa: E501
        ),
    ] = None
    measure: Annotated[
        Literal["mean", "median", "trim", "onestep"],
        Field(description="Group statistic released: mean, median, trim (trimmed mean) or onestep."),
    ] = "mean"
    trim: Annotated[
        Finite | None,
        Field(ge=0, le=0.5, description="Share cut at each end of a group's values for measure trim."),
    ] = None

    @model_validator(mode="after")
    def _block_size(self) -> MdavParams:
        if self.partition_size is not None and self.partition_size < 4 * self.k:
            raise ValueError(
                f"needs {{partition_size}} at least 4 {{k}} = {4 * self.k}, got {self.partition_size}"
            )
        if self.measure == "trim" and self.trim is None:
            raise ValueError("with {measure} trim needs {trim} (the share cut at each end, e.g. 0.1)")
        if self.measure != "trim" and self.trim is not None:
            raise ValueError(f"takes {{trim}} only with {{measure}} trim (measure is {self.measure})")
        return self


class VmdavParams(StratifiedParams):
    """Parameters of V-MDAV (``sdckit anonymize vmdav``; Solanas & Martínez-Ballesté, 2006). The
    default attributes are the quasi-identifiers of kind numeric."""

    gamma: Annotated[
        Finite,
        Field(gt=0, description="Group extension gain: about 0.2 for scattered data, 1.1 for clustered."),
    ] = 0.2


class UnivariateMicroaggregationParams(StratifiedParams):
    """Parameters of univariate microaggregation (``sdckit anonymize univariate-microaggregation``):
    every attribute on its own. The default attributes are the quasi-identifiers of kind numeric."""

    variant: Annotated[
        Literal["optimal", "individual-ranking"],
        Field(description="optimal (Hansen & Mukherjee) or individual-ranking (sdcMicro's onedims)."),
    ] = "optimal"


class CategoricalMicroaggregationParams(MicroaggregationParams):
    """Parameters of categorical microaggregation (``sdckit anonymize categorical-microaggregation``;
    Domingo-Ferrer & Torra, 2005). The default attributes, every quasi-identifier, make the release
    k-anonymous."""


def _summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(MicroaggregationFigures)
    params = release.params
    summary: dict[str, Any] = {"attributes": figures.attributes, "k": params.k}
    if isinstance(params, MdavParams):
        summary.update(partition_size=params.partition_size, blocks=figures.blocks, exact=figures.exact)
    elif isinstance(params, VmdavParams):
        summary["gamma"] = params.gamma
    elif isinstance(params, UnivariateMicroaggregationParams):
        summary["variant"] = params.variant
    if isinstance(params, MdavParams) and params.measure != "mean":
        summary.update(measure=params.measure, trim=params.trim)
    summary.update(groups_summary(figures, params.strata if isinstance(params, StratifiedParams) else None))
    return summary


def groups_summary(figures: MicroaggregationFigures, strata: list[str] | None) -> dict[str, Any]:
    """The summary's figures of the groups every microaggregation method reports, in this order:
    the strata (when given), the group sizes, the information loss, and the per-attribute and
    k-anonymity figures when the method has them."""
    summary: dict[str, Any] = {}
    if strata:
        summary.update(strata=strata, strata_count=figures.strata)
    summary.update(
        groups=figures.groups,
        smallest_group=figures.smallest_group,
        largest_group=figures.largest_group,
        sse=figures.sse,
        sst=figures.sst,
        information_loss=figures.information_loss,
    )
    if figures.per_attribute is not None:
        summary["per_attribute"] = figures.per_attribute
    if figures.k_anonymity is not None:
        summary["k_anonymity"] = figures.k_anonymity
    return summary


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"attributes: {', '.join(figures['attributes'])}; k {figures['k']}",
        f"groups: {figures['groups']:,}; smallest group: {figures['smallest_group']:,}; "
        f"largest group: {figures['largest_group']:,}",
        f"information loss SSE/SST: {figures['information_loss']:.4g} % "
        f"(SSE {figures['sse']:.6g}, SST {figures['sst']:.6g})",
    ]
    if figures.get("blocks", 1) > 1:
        lines.append(
            f"approximation: {figures['blocks']:,} blocks of at most {figures['partition_size']:,} records"
        )
    anonymity = figures.get("k_anonymity")
    if anonymity:
        verdict = "k-anonymous" if anonymity["k_anonymous"] else "not k-anonymous"
        lines.append(
            f"release over the quasi-identifiers: smallest class {anonymity['smallest_class']:,} ({verdict})"
        )
    return lines


_OPTIONS: dict[str, Any] = {"summary": _summary, "report": _report, "progress_label": "blocks"}


@register_method(
    "mdav",
    MdavParams,
    help="MDAV microaggregation of numeric attributes: groups of k records replaced by their means.",
    **_OPTIONS,
    examples={"replay": {"k": 3}},
)
def _run_mdav(table: Table, params: MdavParams, context: Context) -> Release:
    names = _chosen(table, params.attributes, numeric=True, method="mdav")
    keys = stratum_keys(table, params.strata, names, "mdav")
    X = _numeric_matrix(table, names, "mdav")
    check_k_at_most_records(params.k, X.shape[0])
    check_strata_sizes(table, params.strata, keys, params.k, "mdav")
    strata = None
    if params.strata:
        counts: list[int] = []

        def grouping(rows: np.ndarray) -> np.ndarray:
            labels, blocks = mdav_groups(X[rows], params.k, partition_size=params.partition_size)
            counts.append(blocks)
            return labels

        labels, strata = stratified(keys, grouping, progress=context.progress)
        blocks = sum(counts) if max(counts) > 1 else 1  # 1: exact MDAV inside every stratum
    else:
        labels, blocks = mdav_groups(
            X, params.k, partition_size=params.partition_size, progress=context.progress
        )
    released = None
    if params.measure != "mean":
        from sdckit.anonymize._microaggregation_aggregate import record_statistics

        released = record_statistics(X, labels, params.measure, trim=params.trim or 0.0)
    return _numeric_release(table, "mdav", names, X, labels, params, blocks, strata=strata, released=released)


@register_method(
    "vmdav",
    VmdavParams,
    help="V-MDAV microaggregation: variable group sizes k..2k-1 (Solanas & Martínez-Ballesté).",
    **_OPTIONS,
    examples={"replay": {"k": 2, "gamma": 1.1}},
)
def _run_vmdav(table: Table, params: VmdavParams, context: Context) -> Release:
    names = _chosen(table, params.attributes, numeric=True, method="vmdav")
    keys = stratum_keys(table, params.strata, names, "vmdav")
    X = _numeric_matrix(table, names, "vmdav")
    check_k_at_most_records(params.k, X.shape[0])
    check_strata_sizes(table, params.strata, keys, params.k, "vmdav")
    if not params.strata:
        return _numeric_release(table, "vmdav", names, X, vmdav_groups(X, params.k, params.gamma), params)
    labels, strata = stratified(keys, lambda rows: vmdav_groups(X[rows], params.k, params.gamma))
    return _numeric_release(table, "vmdav", names, X, labels, params, strata=strata)


def _univariate_rows(values: np.ndarray, k: int, variant: str, rows: np.ndarray) -> np.ndarray:
    return univariate_groups(values[rows], k, variant)


@register_method(
    "univariate-microaggregation",
    UnivariateMicroaggregationParams,
    help="Microaggregation of each numeric attribute alone: optimal (Hansen & Mukherjee) or individual ranking.",  # noqa: E501
    **_OPTIONS,
    examples={"replay": {"variant": "individual-ranking", "attributes": ["Age"]}},
)
def _run_univariate(table: Table, params: UnivariateMicroaggregationParams, context: Context) -> Release:
    names = _chosen(table, params.attributes, numeric=True, method="univariate-microaggregation")
    keys = stratum_keys(table, params.strata, names, "univariate-microaggregation")
    X = _numeric_matrix(table, names, "univariate-microaggregation")
    check_k_at_most_records(params.k, X.shape[0])
    check_strata_sizes(table, params.strata, keys, params.k, "univariate-microaggregation")
    columns, per_attribute, sizes = [], {}, []
    total_sse = total_sst = 0.0
    penalty = np.zeros(X.shape)
    strata = None
    for j, name in enumerate(names):
        if params.strata:
            labels, strata = stratified(keys, partial(_univariate_rows, X[:, j], params.k, params.variant))
        else:
            labels = univariate_groups(X[:, j], params.k, params.variant)
        counts = np.bincount(labels).astype(np.float64)
        means = np.bincount(labels, weights=X[:, j]) / counts
        columns.append(pl.Series(name, means[labels], dtype=pl.Float64))
        sse, sst = information_loss(X[:, [j]], labels)
        total_sse += sse
        total_sst += sst
        sizes.append(_group_figures(labels))
        per_attribute[name] = {**sizes[-1], **_loss_figures(sse, sst)}
        penalty[:, j] = _group_ranges(X[:, [j]], labels)[:, 0]
    figures = MicroaggregationFigures(
        attributes=names,
        groups=sum(f["groups"] for f in sizes),
        smallest_group=min(f["smallest_group"] for f in sizes),
        largest_group=max(f["largest_group"] for f in sizes),
        **_loss_figures(total_sse, total_sst),
        per_attribute=per_attribute,
        strata=strata,
    )
    return _release(table, "univariate-microaggregation", columns, names, None, params, figures, penalty)


@register_method(
    "categorical-microaggregation",
    CategoricalMicroaggregationParams,
    help="Microaggregation of categorical, ordinal and numeric attributes jointly (k-anonymity).",
    **_OPTIONS,
    examples={"replay": {"k": 4}},
)
def _run_categorical(table: Table, params: CategoricalMicroaggregationParams, context: Context) -> Release:
    k = params.k
    names = _chosen(table, params.attributes, numeric=False, method="categorical-microaggregation")
    described = _encoded(table, names)
    _check_missing(table, names, "categorical-microaggregation")
    n = table.n_records
    check_k_at_most_records(k, n)
    weights = []
    for kind, values, categories in described:
        if kind == "numeric":
            weights.append(float(inverse_variance(values[:, None])[0]))
        elif kind == "ordinal":
            weights.append(1.0 / (len(categories) - 1) ** 2 if len(categories) > 1 else 1.0)
        else:
            weights.append(1.0)
    coordinates = [j for j, (kind, _, _) in enumerate(described) if kind != "nominal"]
    nominal = [j for j, (kind, _, _) in enumerate(described) if kind == "nominal"]
    X = np.zeros((n, len(coordinates)))
    is_ordinal = np.array([described[j][0] == "ordinal" for j in coordinates], dtype=np.bool_)
    cards = np.array(
        [len(described[j][2]) if described[j][2] is not None else 0 for j in coordinates], dtype=np.int64
    )
    for column, j in enumerate(coordinates):
        X[:, column] = described[j][1]
    C = np.zeros((n, len(nominal)), dtype=np.int64)
    for column, j in enumerate(nominal):
        C[:, column] = described[j][1]
    labels = mdav_generic(
        np.ascontiguousarray(X),
        np.array([weights[j] for j in coordinates], dtype=np.float64),
        is_ordinal,
        cards,
        np.ascontiguousarray(C),
        np.array([len(described[j][2]) for j in nominal], dtype=np.int64),
        np.array([weights[j] for j in nominal], dtype=np.float64),
        int(k),
    )
    n_groups = int(labels.max()) + 1
    columns, reps, overall = [], [], []
    penalty = np.zeros((n, len(names)))
    everyone = np.zeros(n, dtype=np.int64)
    for j, (name, (kind, values, categories)) in enumerate(zip(names, described, strict=True)):
        rep = _representatives(kind, values, labels, n_groups)
        reps.append(rep)
        overall.append(_representatives(kind, values, everyone, 1))
        if kind == "numeric":
            columns.append(pl.Series(name, rep[labels], dtype=pl.Float64))
            penalty[:, j] = _group_ranges(values[:, None], labels)[:, 0]
        else:
            columns.append(categories.gather(rep[labels]).alias(name))
            distinct = pl.DataFrame({"g": labels, "c": values}).unique().group_by("g").len().sort("g")
            set_sizes = np.zeros(n_groups)
            set_sizes[distinct.get_column("g").to_numpy()] = distinct.get_column("len").to_numpy()
            per_group = np.where(set_sizes <= 1, 0.0, set_sizes / max(len(categories), 1))
            penalty[:, j] = per_group[labels]
    sse = _mixed_distances(described, weights, labels, reps)
    sst = _mixed_distances(described, weights, everyone, overall)
    figures = MicroaggregationFigures(attributes=names, **_group_figures(labels), **_loss_figures(sse, sst))
    release = _release(
        table, "categorical-microaggregation", columns, names, labels, params, figures, penalty
    )
    return _with_k_anonymity(release, k)
