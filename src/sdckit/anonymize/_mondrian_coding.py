"""How Mondrian codes its input (:mod:`sdckit.anonymize.mondrian`): every quasi-identifier as integers
whose order is the one the cuts follow (sorted distinct numbers; sorted distinct categories; hierarchy
leaves in depth-first order), the sensitive attributes as value codes with the whole table's
distribution, and the class statistics of a partition's children that the privacy models judge. A
run on a fragment of a larger table (:mod:`sdckit.scale.mondrian`) codes it in the whole table's
terms (:class:`WholeTable`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import encode_column
from sdckit.hierarchy import TOP_LABEL, Hierarchy, missing_values_refused
from sdckit.models import ClassStatistics, PrivacyModel, SensitiveCounts
from sdckit.table import Kind, Role, Table, value_strings

_NUMERIC = "numeric"
_ORDERED = "ordered"  # categorical without a hierarchy: sorted codes, cut like numbers
_HIERARCHY = "hierarchy"

# Sensitive (class, value) cells above which the triples are found by sorting, not a dense count.
_DENSE_CELLS = 1 << 20


@dataclass
class _Dimension:
    """One quasi-identifier coded for cutting."""

    name: str
    kind: str  # _NUMERIC, _ORDERED or _HIERARCHY
    codes: np.ndarray  # (n,) int32 code of every record
    # _NUMERIC: the sorted distinct numbers; _ORDERED: 0 .. m-1 (the codes themselves)
    values: np.ndarray
    texts: pl.Series  # text of every code (numbers spelled as integers when integral)
    span: float  # max - min over the whole table (0 -> width 0)
    value_list: list[float]
    hierarchy: Hierarchy | None = None
    # _HIERARCHY: ancestors[code, level] = node of the leaf at ``level`` (nodes renumbered in
    # depth-first order per level; an implicit root is added when the top level has several nodes)
    ancestors: np.ndarray | None = None
    ancestor_rows: list[list[int]] | None = None
    node_width: list[np.ndarray] | None = None  # per level: leaves(node) / leaves(root), 0 for a leaf
    node_labels: list[list[str]] | None = None  # per level: label of each (renumbered) node
    node_penalty: list[np.ndarray] | None = None  # per level: hierarchy NCP of each node
    original_values: pl.Series | None = None  # _HIERARCHY: data value of each code, for centroids
    domain: int | None = None  # _ORDERED: distinct values of the whole table (default: len(texts))


@dataclass(frozen=True)
class WholeTable:
    """What a run on a part of a larger table needs to know of the whole table, so that the part is
    cut, judged and penalized as the whole table's Mondrian would (the distributed Mondrian of
    :mod:`sdckit.scale.mondrian` gives one to every fragment).

    ``spans[name]``
        A numeric quasi-identifier: its ``(min, max)`` over the whole table (the normalization of
        widths and of the NCP).
    ``domains[name]``
        A categorical quasi-identifier without a hierarchy: the sorted distinct values of the whole
        table (a value's rank is its coordinate; the domain size normalizes widths and the NCP). It is
        cut as categorical even where the part's values all read as numbers.
    ``sensitive[name]``
        A sensitive attribute: its distinct values over the whole table (sorted, a null last) and
        their counts, so that t-closeness compares with the whole table's distribution.

    A quasi-identifier with a hierarchy needs nothing: the hierarchy describes the whole domain.
    """

    spans: Mapping[str, tuple[float, float]]
    domains: Mapping[str, pl.Series]
    sensitive: Mapping[str, tuple[pl.Series, np.ndarray]]


def _is_number_text(column: pl.Series) -> np.ndarray | None:
    """The values of a text column as float64 if every one reads as a finite number, else None."""
    numbers = column.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
    if numbers.null_count() or bool(numbers.is_nan().any()) or bool(numbers.is_infinite().any()):
        return None
    return numbers.to_numpy()


def _number_texts(values: np.ndarray) -> pl.Series:
    return value_strings(pl.Series("value", values, dtype=pl.Float64))


def _numeric_dimension(name: str, numbers: np.ndarray, integral_dtype: bool) -> _Dimension:
    values, codes = np.unique(numbers, return_inverse=True)
    texts = (
        pl.Series("value", values.astype(np.int64)).cast(pl.String)
        if integral_dtype
        else _number_texts(values)
    )
    span = float(values[-1] - values[0]) if len(values) else 0.0
    return _Dimension(
        name=name,
        kind=_NUMERIC,
        codes=codes.astype(np.int32).reshape(-1),
        values=values,
        texts=texts,
        span=span,
        value_list=values.tolist(),
    )


def _ordered_dimension(name: str, column: pl.Series) -> _Dimension:
    codes, n_values, _, categories = encode_column(column)
    values = np.arange(n_values, dtype=np.float64)
    return _Dimension(
        name=name,
        kind=_ORDERED,
        codes=codes.astype(np.int32),
        values=values,
        texts=value_strings(categories),
        span=float(max(n_values - 1, 0)),
        value_list=values.tolist(),
        original_values=categories,
    )


def _hierarchy_dimension(name: str, column: pl.Series, hierarchy: Hierarchy) -> _Dimension:
    hierarchy.validate()
    leaves = hierarchy.leaf_codes(column)  # raises naming values the hierarchy does not cover
    table = np.asarray(hierarchy.codes, dtype=np.int64)
    n_leaves, n_levels = table.shape
    implicit_root = n_leaves > 0 and len(np.unique(table[:, -1])) > 1
    # Depth-first order of the leaves: sorted by their node at the top level, then the next, ...
    order = np.lexsort(tuple(table[:, level] for level in range(n_levels)))
    rank = np.empty(n_leaves, dtype=np.int64)
    rank[order] = np.arange(n_leaves)
    levels = n_levels + (1 if implicit_root else 0)
    ancestors = np.zeros((n_leaves, levels), dtype=np.int64)
    node_width, node_labels, node_penalty = [], [], []
    for level in range(n_levels):
        original = table[order, level]
        # Renumber the nodes of the level in order of first appearance along the leaves.
        first = np.concatenate(([True], original[1:] != original[:-1])) if n_leaves else np.zeros(0, bool)
        renumbered = np.cumsum(first) - 1
        ancestors[:, level] = renumbered
        node_original = original[first]
        counts = hierarchy.leaf_counts(level)[node_original]
        node_width.append(np.where(counts <= 1, 0.0, counts / max(n_leaves, 1)))
        node_penalty.append(hierarchy.ncp(level)[node_original])
        node_labels.append([hierarchy.labels[level][node] for node in node_original.tolist()])
    if implicit_root:
        root_width = 1.0 if n_leaves > 1 else 0.0
        node_width.append(np.array([root_width]))
        node_penalty.append(np.array([root_width]))
        node_labels.append([TOP_LABEL])
    codes = rank[leaves].astype(np.int32)
    leaf_values = pl.Series(name, hierarchy.labels[0], dtype=pl.String).gather(order)
    return _Dimension(
        name=name,
        kind=_HIERARCHY,
        codes=codes,
        values=np.arange(n_leaves, dtype=np.float64),
        texts=leaf_values,
        span=float(max(n_leaves - 1, 0)),
        value_list=[],
        hierarchy=hierarchy,
        ancestors=ancestors,
        ancestor_rows=ancestors.tolist(),
        node_width=node_width,
        node_labels=node_labels,
        node_penalty=node_penalty,
        original_values=leaf_values,
    )


def _resolve(
    table: Table,
    quasi_identifiers: Sequence[str] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
    whole: WholeTable | None = None,
) -> list[_Dimension]:
    schema = table.schema
    if quasi_identifiers is not None and isinstance(quasi_identifiers, str):
        raise ConfigError(f"quasi_identifiers must be a list of column names, got {quasi_identifiers!r}")
    names = (
        list(quasi_identifiers)
        if quasi_identifiers is not None
        else [a.name for a in schema.with_role(Role.QUASI_IDENTIFIER)]
    )
    if not names:
        raise ConfigError("no quasi-identifiers: give role quasi-identifier to some attributes")
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise ConfigError(f"quasi-identifier '{repeated}' is listed twice")
    dimensions = []
    for name in names:
        if name not in table.data.columns:
            raise ConfigError(
                f"quasi-identifier '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        column = table.column(name)
        missing = column.null_count()
        if not missing and column.dtype.is_float():
            missing = int(column.is_nan().sum())
        kind = schema[name].kind if name in schema else None
        hierarchy = (hierarchies or {}).get(name)
        if hierarchy is None and name in schema:
            hierarchy = schema[name].hierarchy
        if hierarchy is not None and not isinstance(hierarchy, Hierarchy):
            raise ConfigError(
                f"the hierarchy of '{name}' must be a Hierarchy, got {type(hierarchy).__name__}"
            )
        if missing:
            if hierarchy is None or hierarchy.missing is None:
                raise missing_values_refused(table.source, name, missing, "Mondrian")
            # The hierarchy places the missing values (a number included: it is cut along it then).
            dimensions.append(_hierarchy_dimension(name, column, hierarchy))
            continue
        if whole is not None and name in whole.domains:
            dimensions.append(_in_domain(_ordered_dimension(name, column), whole.domains[name]))
            continue
        if column.dtype.is_numeric():
            numbers = column.cast(pl.Float64).to_numpy()
            if not np.isfinite(numbers).all():
                raise ConfigError(f"quasi-identifier '{name}' has infinite values")
            dimensions.append(_numeric_dimension(name, numbers, column.dtype.is_integer()))
            continue
        if (
            kind in (Kind.NUMERIC, Kind.ORDINAL)
            and column.dtype in (pl.String, pl.Categorical)
            and (whole is None or name in whole.spans)
        ):
            read = _is_number_text(column)
            if read is not None:
                integral = bool(np.all(read == np.round(read)))
                dimensions.append(_numeric_dimension(name, read, integral))
                continue
        if hierarchy is not None:
            dimensions.append(_hierarchy_dimension(name, column, hierarchy))
        else:
            dimensions.append(_ordered_dimension(name, column))
    if whole is not None:
        for dimension in dimensions:
            if dimension.kind == _NUMERIC and dimension.name in whole.spans:
                low, high = whole.spans[dimension.name]
                dimension.span = float(high - low)
            elif dimension.kind == _NUMERIC or (
                dimension.kind == _ORDERED and dimension.name not in whole.domains
            ):
                raise ConfigError(
                    f"quasi-identifier '{dimension.name}': the whole table's reference does not describe it"
                )
    return dimensions


def _in_domain(dimension: _Dimension, domain: pl.Series) -> _Dimension:
    """An ordered dimension whose coordinates are the ranks of its values in the whole table's sorted
    distinct values ``domain``."""
    local = dimension.original_values
    assert local is not None
    ranks = domain.search_sorted(local, side="left").to_numpy().astype(np.int64)
    inside = ranks < len(domain)
    if not inside.all() or not domain.gather(ranks).equals(local, check_names=False):
        raise ConfigError(
            f"quasi-identifier '{dimension.name}': a value is not among the whole table's values"
        )
    dimension.values = ranks.astype(np.float64)
    dimension.value_list = dimension.values.tolist()
    dimension.span = float(max(len(domain) - 1, 0))
    dimension.domain = len(domain)
    return dimension


@dataclass
class _Sensitive:
    name: str
    codes: np.ndarray  # (n,) int64
    n_values: int
    overall: np.ndarray
    categories: pl.Series


def _encode_sensitive(
    table: Table,
    models: Sequence[PrivacyModel],
    whole: WholeTable | None = None,
    subset: np.ndarray | None = None,
    records: Sequence[str] = (),
) -> list[_Sensitive]:
    """The sensitive attributes of ``models`` coded, each with the distribution t-closeness compares
    with: the whole table's, or with ``subset`` (a research subset's 0/1 per record) the subset's,
    as the class counts are (:func:`_statistics`) and as generalize and ``check`` count it; the
    ``records`` attributes (the subset's column) count every record."""
    result = []
    for name in dict.fromkeys(m.sensitive_attribute for m in models if m.sensitive_attribute is not None):
        codes, n_values, has_missing, categories = encode_column(table.column(name))
        if whole is not None:
            if name not in whole.sensitive:
                raise ConfigError(
                    f"sensitive attribute '{name}': the whole table's reference does not describe it"
                )
            result.append(_in_sensitive_domain(name, codes, has_missing, categories, *whole.sensitive[name]))
            continue
        if has_missing:
            # A missing sensitive value is a value of its own (as ClassStatistics.from_records).
            codes = np.where(codes < 0, n_values, codes)
            n_values += 1
            categories = pl.concat([categories, pl.Series([None], dtype=categories.dtype)])
        codes = codes.astype(np.int64)
        weights = None if subset is None or name in records else subset
        overall = np.bincount(codes, weights=weights, minlength=n_values).astype(np.float64)
        overall /= max(overall.sum(), 1.0)
        result.append(_Sensitive(name, codes, n_values, overall, categories.alias(name)))
    return result


def _in_sensitive_domain(
    name: str,
    codes: np.ndarray,
    has_missing: bool,
    categories: pl.Series,
    domain: pl.Series,
    counts: np.ndarray,
) -> _Sensitive:
    """The codes of a part's sensitive values in the whole table's values ``domain`` (sorted, a null
    last) and the whole table's distribution as ``overall``."""
    domain_missing = len(domain) > 0 and domain[-1] is None
    present = domain[:-1] if domain_missing else domain
    ranks = present.search_sorted(categories, side="left").to_numpy().astype(np.int64)
    if (
        (ranks >= len(present)).any()
        or not present.gather(ranks).equals(categories, check_names=False)
        or (has_missing and not domain_missing)
    ):
        raise ConfigError(f"sensitive attribute '{name}': a value is not among the whole table's values")
    mapped = np.where(codes < 0, len(domain) - 1, ranks[np.maximum(codes, 0)] if len(ranks) else 0)
    overall = np.asarray(counts, dtype=np.float64)
    overall = overall / max(overall.sum(), 1.0)
    return _Sensitive(name, mapped.astype(np.int64), len(domain), overall, domain.alias(name))


def _statistics(
    child: np.ndarray,
    n_children: int,
    sizes: np.ndarray,
    index: np.ndarray,
    sensitive: list[_Sensitive],
    subset: np.ndarray | None = None,
    records: Sequence[str] = (),
) -> ClassStatistics:
    """Class statistics of the children of one partition (``child`` = child of each of its records).

    Built like :meth:`SensitiveCounts.from_codes`, but with the whole table's distribution as
    ``overall`` (what t-closeness compares with), not the partition's. With ``subset`` (a research
    subset's 0/1 per record) the sizes and the counts count the subset's records, those of the
    ``records`` attributes (the subset's column) every record (sdckit.anonymize._research_subset).
    """
    weights = None if subset is None else subset[index]
    if weights is not None:
        sizes = np.bincount(child, weights=weights, minlength=n_children)
    counts = {}
    for attribute in sensitive:
        n_values = attribute.n_values
        keys = child * n_values + attribute.codes[index]
        cells = n_children * n_values
        counted = None if attribute.name in records else weights
        if cells <= max(_DENSE_CELLS, 4 * len(keys)):
            dense = np.bincount(keys, weights=counted, minlength=cells)
            cell = np.flatnonzero(dense)
            values = dense[cell]
        elif counted is None:
            cell, values = np.unique(keys, return_counts=True)
        else:
            cell, inverse = np.unique(keys, return_inverse=True)
            values = np.bincount(inverse, weights=counted, minlength=len(cell))
            cell, values = cell[values > 0], values[values > 0]
        counts[attribute.name] = SensitiveCounts(
            attribute=attribute.name,
            classes=cell // n_values,
            values=cell % n_values,
            counts=values.astype(np.float64),
            n_values=n_values,
            overall=attribute.overall,
            categories=attribute.categories,
        )
    return ClassStatistics(sizes=sizes.astype(np.float64), sensitive=counts)
