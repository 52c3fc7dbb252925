"""Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan, 2006).

The records are split top-down, kd-tree style: a partition is cut on the quasi-identifier of
largest normalized width whose cut leaves children that all satisfy every privacy model (trying the
others in decreasing width when it does not), and a partition that admits no allowable cut becomes
an equivalence class. Each class is then released either generalized (numbers to the range
``min-max`` of the class, categories to the lowest common ancestor in their hierarchy, or to the set
of values present without one) or replaced by its centroid.

Every quasi-identifier is coded once as integers whose order is the one the cuts follow (sorted
distinct numbers; sorted distinct categories; hierarchy leaves in depth-first order, so that every
node's leaves form a run of codes and the lowest common ancestor of a set is that of its smallest and
largest code). A partition is an index array into the records; its cut is found with
``numpy.partition`` (linear-time selection of the median) and judged by the vectorized models of
:mod:`sdckit.models` on the children's class statistics. Partitions wait on an explicit stack, so the
depth of the tree is not bounded by Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import ConfigDict, Field, model_validator

from sdckit.anonymize._mondrian_transform import MONDRIAN
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.frequency import encode_column
from sdckit.hierarchy import MISSING_LABEL, TOP_LABEL, Hierarchy, missing_values_refused
from sdckit.labels import range_labels, set_labels
from sdckit.models import ClassStatistics, KAnonymity, PrivacyModel, SensitiveCounts, evaluate_all
from sdckit.params import PrivacyModelParams
from sdckit.scale import methods as scaled
from sdckit.table import Kind, Role, Schema, Table, value_strings

MODES = ("strict", "relaxed")
OUTPUTS = ("generalized", "centroid")

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


@dataclass(frozen=True)
class CutTree:
    """The cut tree of a strict Mondrian partition and what each of its boxes released.

    Kept in ``MondrianFigures.boxes`` (strict mode only) so that
    :func:`sdckit.anonymize.transform.transformation_of` can re-apply the partition to other data.
    Tree nodes are numbered in order of creation; node 0 is the whole table and the children of a
    node have consecutive numbers ``first_child[t] .. first_child[t] + n_children[t] - 1``.

    ``attribute[t]``
        Index (into ``dimensions``) of the quasi-identifier node ``t`` is cut on; -1 for a leaf.
    ``at[t]``
        Numeric or ordered cut: the code of the lower median ``m`` (first child: codes <= m, second:
        codes > m). Hierarchy cut: the level whose nodes the children are (one child per node that
        held records); -1 for a leaf.
    ``key[t]``
        Child of a hierarchy cut: its node at the parent's cut level, in the depth-first numbering
        of ``dimensions[j].ancestors``; -1 otherwise.
    ``box[t]``
        Leaf: the equivalence class (``Release.classes`` numbering) it became; -1 otherwise.
    ``labels[j]``
        Per class: the value released for quasi-identifier ``j`` (generalized label, or centroid).
    ``penalty``
        float64 ``(n_classes, n_quasi_identifiers)``: the NCP of every class's cells.
    ``categories[j]``
        Generalized output: the categories of the released Enum column; None for centroids.
    ``dimensions``
        How every quasi-identifier was coded (private: codes index ``values`` / ``texts``).
    """

    attribute: np.ndarray
    at: np.ndarray
    first_child: np.ndarray
    n_children: np.ndarray
    key: np.ndarray
    box: np.ndarray
    labels: tuple[pl.Series, ...]
    penalty: np.ndarray
    categories: tuple[list[str] | None, ...]
    dimensions: tuple[_Dimension, ...]
    output: str


@dataclass(frozen=True)
class MondrianFigures(Figures):
    """What Mondrian found: ``partitions`` (equivalence classes formed), ``splits`` (allowable cuts
    made) and, in strict mode, ``boxes``, the cut tree and what each class released (None in
    relaxed mode, whose classes overlap)."""

    partitions: int
    splits: int
    boxes: CutTree | None = None


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
            numbers = _is_number_text(column)
            if numbers is not None:
                integral = bool(np.all(numbers == np.round(numbers)))
                dimensions.append(_numeric_dimension(name, numbers, integral))
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
    table: Table, models: Sequence[PrivacyModel], whole: WholeTable | None = None
) -> list[_Sensitive]:
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
        overall = np.bincount(codes, minlength=n_values).astype(np.float64)
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
    child: np.ndarray, n_children: int, sizes: np.ndarray, index: np.ndarray, sensitive: list[_Sensitive]
) -> ClassStatistics:
    """Class statistics of the children of one partition (``child`` = child of each of its records).

    Built like :meth:`SensitiveCounts.from_codes`, but with the whole table's distribution as
    ``overall`` (what t-closeness compares with), not the partition's.
    """
    counts = {}
    for attribute in sensitive:
        n_values = attribute.n_values
        keys = child * n_values + attribute.codes[index]
        cells = n_children * n_values
        if cells <= max(_DENSE_CELLS, 4 * len(keys)):
            dense = np.bincount(keys, minlength=cells)
            cell = np.flatnonzero(dense)
            values = dense[cell]
        else:
            cell, values = np.unique(keys, return_counts=True)
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


def mondrian(
    table: Table,
    models: Sequence[PrivacyModel],
    *,
    quasi_identifiers: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    mode: str = "strict",
    output: str = "generalized",
    progress: ProgressCallback | None = None,
    whole: WholeTable | None = None,
) -> Release:
    """Anonymize ``table`` by Mondrian multidimensional partitioning under ``models``.

    Parameters
    ----------
    models
        Privacy models every equivalence class must satisfy: any combination of k-anonymity,
        distinct / entropy / recursive l-diversity and t-closeness (the whole table's distribution is
        the reference of t-closeness).
    quasi_identifiers
        Attributes to partition on; default: those with role quasi-identifier.
    hierarchies
        A hierarchy per categorical quasi-identifier; default: the schema attribute's hierarchy.
    mode
        ``"strict"``: cut at the lower median ``m`` (left: values <= m, right: values > m), so classes
        do not overlap and equal values are never separated. ``"relaxed"``: sort by (value, record
        order) and put the first half of the records on the left; equal values may be separated and
        class regions overlap, which gives smaller classes.
    output
        ``"generalized"``: a numeric quasi-identifier becomes the text ``"min-max"`` of its class
        (``"min"`` when min == max; integers spelled without a decimal point), a categorical one with
        a hierarchy the label of the lowest common ancestor of the class's values, one without a
        hierarchy the set ``"{a,b,c}"`` of its values (sorted; the value itself when single).
        ``"centroid"``: a numeric quasi-identifier becomes the class mean (float), a categorical one
        the class's most frequent value (ties: the smallest).
    progress
        Called as ``progress(records_placed, n_records)`` while classes are formed.
    whole
        For ``table`` a part of a larger table (a fragment of :func:`sdckit.scale.mondrian.run_mondrian`):
        the whole table's spans, categorical domains and sensitive distributions
        (:class:`WholeTable`), so that widths, NCPs and t-closeness are those of the whole table.
        None (default): ``table`` is the whole table.

    A quasi-identifier is numeric when its column has a numeric type, or when its attribute kind is
    numeric or ordinal and every value reads as a number; otherwise it is categorical. Candidate cuts
    are tried in decreasing normalized width of the partition (ties: the order of
    ``quasi_identifiers``): numeric ``(max - min) / (max_T - min_T)``; categorical with a hierarchy
    ``leaves(LCA) / leaves(root)`` (0 for a single leaf), cut into one child per child of the LCA
    that holds records (a multi-way cut); categorical without one: the numeric rule on the sorted
    distinct values' ranks. A cut is allowable when every child satisfies every model.

    The release keeps the record order; identifiers are dropped; nothing is suppressed.
    ``Release.classes`` numbers the classes 0 .. P-1 in order of their first record, and
    ``Release.cell_penalty`` holds each cell's NCP (Xu et al., 2006): the normalized range of a
    number's class, ``hierarchy.ncp`` of the LCA node, or ``|set| / |distinct values|`` (0 for a
    single value), whatever ``output`` is, so :func:`sdckit.utility.release_ncp` is GCP (Ghinita et
    al., 2007). In strict mode ``MondrianFigures.boxes`` holds the cut tree and what every class
    released (a :class:`CutTree`), from which :func:`sdckit.anonymize.transform.transformation_of`
    re-applies the partition to other data; relaxed mode has none (its classes overlap).

    Missing values of a quasi-identifier are partitioned when its hierarchy has them as members
    (:meth:`sdckit.hierarchy.Hierarchy.with_missing`, the configuration's ``missing`` key): the
    quasi-identifier is then cut along the hierarchy (a numeric one too), a class whose lowest common
    ancestor is a node of the missing value releases a missing value (null), and a missing value
    suppressed from the start is a suppressed cell (``Release.suppressed_cells``, NCP 1).

    Raises :class:`ConfigError` for a bad parameter, an unknown quasi-identifier, a missing
    quasi-identifier value that no hierarchy places, or models the whole table does not satisfy (no
    partition can then).

    Deviations and choices: missing quasi-identifier values are members of the hierarchy or an error
    (SPEC §3.2 leaves the policy open); a categorical quasi-identifier without a hierarchy is cut on
    the ranks of its sorted values; a hierarchy given for a numeric column is not used (numbers are
    cut on their values) unless the column has missing values; a hierarchy whose top level has several
    nodes gets an implicit root ``*``; records are counted, sampling weights are not used.

    References
    ----------
    LeFevre, K., DeWitt, D. J. & Ramakrishnan, R. (2006). Mondrian multidimensional k-anonymity.
    Proceedings of the 22nd International Conference on Data Engineering (ICDE), 25.
    Xu, J., Wang, W., Pei, J., Wang, X., Shi, B. & Fu, A. W.-C. (2006). Utility-based anonymization
    using local recoding. KDD 2006, 785-790.
    Ghinita, G., Karras, P., Kalnis, P. & Mamoulis, N. (2007). Fast data anonymization with low
    information loss. VLDB 2007, 758-769.
    """
    return run_method(
        "mondrian",
        table,
        MondrianCall.parse(
            {
                "models": models,
                "quasi_identifiers": quasi_identifiers,
                "hierarchies": hierarchies,
                "mode": mode,
                "output": output,
                "whole": whole,
            },
            method="mondrian",
        ),
        Context(progress=progress),
    )


def _partition(
    dimensions: list[_Dimension],
    models: Sequence[PrivacyModel],
    sensitive: list[_Sensitive],
    mode: str,
    progress: ProgressCallback | None,
) -> tuple[np.ndarray, int, int, dict[str, np.ndarray]]:
    """The class of every record (numbered in order of first record), the number of classes, the
    number of cuts, and the cut tree (the arrays of :class:`CutTree`)."""
    n = len(dimensions[0].codes)
    q = len(dimensions)
    codes = np.stack([d.codes for d in dimensions]).astype(np.int32)  # (q, n)
    # Every child needs at least this many records (the largest k; 1 without k-anonymity).
    smallest = max([m.k for m in models if isinstance(m, KAnonymity)], default=1)
    only_k = all(isinstance(m, KAnonymity) for m in models)
    relaxed = mode == "relaxed"
    spans = [d.span for d in dimensions]
    kinds = [d.kind for d in dimensions]
    values = [d.value_list for d in dimensions]
    ancestor_rows = [d.ancestor_rows for d in dimensions]
    node_width = [None if d.node_width is None else [w.tolist() for w in d.node_width] for d in dimensions]
    levels_of = [0 if d.ancestors is None else d.ancestors.shape[1] for d in dimensions]
    ancestors = [d.ancestors for d in dimensions]

    classes = np.empty(n, dtype=np.int64)
    n_classes = 0
    placed = 0
    splits = 0
    next_report = 0
    # The cut tree, one entry per partition (see CutTree); node 0 is the whole table.
    tree_attribute, tree_at, tree_first, tree_count, tree_key, tree_box = [-1], [-1], [-1], [0], [-1], [-1]
    stack = [(np.arange(n, dtype=np.int64), 0)]
    while stack:
        index, node = stack.pop()
        size = len(index)
        children = None
        cut_at = -1
        cut_keys: list[int] = []
        if size >= 2 * smallest and size >= 2:
            block = codes[:, index] if size < n else codes
            lows = block.min(axis=1).tolist()
            highs = block.max(axis=1).tolist()
            widths = []
            lca_levels = [0] * q
            for j in range(q):
                low, high = lows[j], highs[j]
                if low == high:
                    widths.append(0.0)
                elif kinds[j] == _HIERARCHY:
                    row_low, row_high = ancestor_rows[j][low], ancestor_rows[j][high]
                    level = next(L for L in range(levels_of[j]) if row_low[L] == row_high[L])
                    lca_levels[j] = level
                    widths.append(node_width[j][level][row_low[level]])
                else:
                    span = spans[j]
                    widths.append((values[j][high] - values[j][low]) / span if span > 0 else 0.0)
            order = sorted((j for j in range(q) if widths[j] > 0), key=lambda j: -widths[j])
            for j in order:
                column = block[j]
                if kinds[j] == _HIERARCHY:
                    level = lca_levels[j] - 1
                    nodes = ancestors[j][:, level][column]
                    first = ancestor_rows[j][lows[j]][level]
                    local = nodes - first
                    counts = np.bincount(local)
                    present = np.flatnonzero(counts)
                    if len(present) < 2:  # cannot happen below an LCA; kept as a guard
                        continue
                    sizes = counts[present]
                    if sizes.min() < smallest:
                        continue
                    if len(present) != len(counts):
                        remap = np.zeros(len(counts), dtype=np.int64)
                        remap[present] = np.arange(len(present))
                        local = remap[local]
                    n_children = len(present)
                    child = local.astype(np.int64, copy=False)
                    cut_at = level
                    cut_keys = (present + first).tolist()
                else:
                    if relaxed:
                        half = size // 2
                        median = np.partition(column, half - 1)[half - 1]
                        left = column < median
                        missing = half - int(np.count_nonzero(left))
                        if missing > 0:
                            equal = np.flatnonzero(column == median)
                            left[equal[:missing]] = True
                        n_left = half
                    else:
                        middle = (size - 1) // 2
                        median = np.partition(column, middle)[middle]
                        left = column <= median
                        n_left = int(np.count_nonzero(left))
                        if n_left == size:
                            continue
                    if n_left < smallest or size - n_left < smallest:
                        continue
                    sizes = np.array([n_left, size - n_left])
                    n_children = 2
                    child = None
                    cut_at = int(median)
                    cut_keys = [-1, -1]
                if not only_k:
                    if child is None:
                        child = (~left).astype(np.int64)
                    statistics = _statistics(child, n_children, sizes, index, sensitive)
                    allowed, _ = evaluate_all(models, statistics)
                    if not allowed.all():
                        continue
                if n_children == 2 and child is None:
                    children = [index[left], index[~left]]
                else:
                    ordering = np.argsort(child, kind="stable")
                    bounds = np.cumsum(sizes)[:-1]
                    children = np.split(index[ordering], bounds)
                tree_attribute[node], tree_at[node] = j, cut_at
                break
        if children is None:
            tree_box[node] = n_classes
            classes[index] = n_classes
            n_classes += 1
            placed += size
            if progress is not None and placed >= next_report:
                progress(placed, n)
                next_report = placed + max(n // 100, 1)
        else:
            splits += 1
            first_id = len(tree_attribute)
            tree_first[node], tree_count[node] = first_id, len(children)
            for key in cut_keys:
                tree_attribute.append(-1)
                tree_at.append(-1)
                tree_first.append(-1)
                tree_count.append(0)
                tree_key.append(key)
                tree_box.append(-1)
            ids = range(first_id, first_id + len(children))
            stack.extend(reversed(list(zip(children, ids, strict=True))))
    if progress is not None:
        progress(n, n)
    # Number the classes in order of their first record.
    _, first_records = np.unique(classes, return_index=True)
    renumber = np.empty(n_classes, dtype=np.int64)
    renumber[np.argsort(first_records, kind="stable")] = np.arange(n_classes)
    box = np.asarray(tree_box, dtype=np.int64)
    box[box >= 0] = renumber[box[box >= 0]]
    tree = {
        "attribute": np.asarray(tree_attribute, dtype=np.int64),
        "at": np.asarray(tree_at, dtype=np.int64),
        "first_child": np.asarray(tree_first, dtype=np.int64),
        "n_children": np.asarray(tree_count, dtype=np.int64),
        "key": np.asarray(tree_key, dtype=np.int64),
        "box": box,
    }
    return renumber[classes], n_classes, splits, tree


def _release(
    table: Table,
    dimensions: list[_Dimension],
    classes: np.ndarray,
    n_classes: int,
    mode: str,
    output: str,
    splits: int,
    tree: dict[str, np.ndarray],
) -> Release:
    n = table.n_records
    order = np.argsort(classes, kind="stable")
    sizes = np.bincount(classes, minlength=n_classes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    penalty = np.empty((n, len(dimensions)), dtype=np.float64)
    class_penalties = np.empty((n_classes, len(dimensions)), dtype=np.float64)
    columns = []
    class_labels: list[pl.Series] = []
    released_categories: list[list[str] | None] = []
    for j, dimension in enumerate(dimensions):
        sorted_codes = dimension.codes[order]
        lows = np.minimum.reduceat(sorted_codes, starts).astype(np.int64)
        highs = np.maximum.reduceat(sorted_codes, starts).astype(np.int64)
        if dimension.kind == _HIERARCHY:
            ancestors = dimension.ancestors
            same = ancestors[lows] == ancestors[highs]
            level = np.argmax(same, axis=1)  # the top level (or implicit root) always agrees
            node = ancestors[lows, level]
            offsets = np.cumsum([0] + [len(labels) for labels in dimension.node_labels])
            flat = offsets[level] + node
            class_penalty = np.concatenate(dimension.node_penalty)[flat]
            labels = pl.Series(
                dimension.name, [label for labels in dimension.node_labels for label in labels], pl.String
            ).gather(flat)
            # A node of the missing value is released as a missing value.
            labels = (
                pl.select(pl.when(labels != MISSING_LABEL).then(labels)).to_series().alias(dimension.name)
            )
        elif dimension.kind == _NUMERIC:
            span = dimension.span
            low_values, high_values = dimension.values[lows], dimension.values[highs]
            class_penalty = (high_values - low_values) / span if span > 0 else np.zeros(n_classes)
            low_texts, high_texts = dimension.texts.gather(lows), dimension.texts.gather(highs)
            labels = range_labels(low_texts, high_texts, lows == highs).alias(dimension.name)
        else:
            labels, set_sizes = _value_sets(dimension, classes, n_classes)
            domain = dimension.domain if dimension.domain is not None else len(dimension.texts)
            class_penalty = np.where(set_sizes <= 1, 0.0, set_sizes / max(domain, 1))
        penalty[:, j] = class_penalty[classes]
        class_penalties[:, j] = class_penalty
        if output == "generalized":
            categories = labels.drop_nulls().unique().sort().to_list()
            per_class = labels.cast(pl.Enum(categories))
            released_categories.append(categories)
        else:
            per_class = _centroids(dimension, table.column(dimension.name), classes, n_classes, sizes)
            released_categories.append(None)
        class_labels.append(per_class)
        columns.append(per_class.gather(classes).alias(dimension.name))
    # A missing value suppressed from the start is a suppressed cell (nothing else is suppressed).
    suppressed_cells = None
    for j, dimension in enumerate(dimensions):
        hierarchy = dimension.hierarchy
        if hierarchy is not None and hierarchy.missing == "suppress":
            if suppressed_cells is None:
                suppressed_cells = np.zeros((n, len(dimensions)), dtype=bool)
            suppressed_cells[:, j] = table.column(dimension.name).is_null().to_numpy()
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    released = table.data.with_columns(columns).drop(identifiers)
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    used = {d.name: d.hierarchy for d in dimensions if d.hierarchy is not None}
    boxes = None
    if mode == "strict":
        boxes = CutTree(
            **tree,
            labels=tuple(class_labels),
            penalty=class_penalties,
            categories=tuple(released_categories),
            dimensions=tuple(dimensions),
            output=output,
        )
    return Release(
        table=Table(released, schema, source=table.source),
        original=table,
        method="mondrian",
        parameters={},
        quasi_identifiers=tuple(d.name for d in dimensions),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=classes,
        hierarchies=used,
        cell_penalty=penalty,
        suppressed_cells=suppressed_cells,
        figures=MondrianFigures(partitions=n_classes, splits=splits, boxes=boxes),
    )


def _value_sets(dimension: _Dimension, classes: np.ndarray, n_classes: int) -> tuple[pl.Series, np.ndarray]:
    """Per class: the text ``{a,b}`` of its sorted distinct values (the value alone if single)."""
    pairs = pl.DataFrame({"class": classes, "code": dimension.codes}).unique().sort("class", "code")
    texts = dimension.texts.gather(pairs.get_column("code").to_numpy())
    grouped = (
        pairs.with_columns(texts.alias("text"))
        .group_by("class", maintain_order=True)
        .agg(pl.col("text").str.join(","), pl.len().alias("size"))
        .sort("class")
    )
    set_sizes = grouped.get_column("size").to_numpy().astype(np.int64)
    joined = grouped.get_column("text")
    labels = set_labels(joined, set_sizes == 1).alias(dimension.name)
    assert len(labels) == n_classes
    return labels, set_sizes


def _centroids(
    dimension: _Dimension, column: pl.Series, classes: np.ndarray, n_classes: int, sizes: np.ndarray
) -> pl.Series:
    """The centroid of every class: the mean of a number, the most frequent value of a category."""
    if dimension.kind == _NUMERIC:
        numbers = dimension.values[dimension.codes]
        means = np.bincount(classes, weights=numbers, minlength=n_classes) / sizes
        return pl.Series(dimension.name, means, dtype=pl.Float64)
    # The most frequent value of each class; ties go to the smallest value (sorted order).
    value_codes, n_values, has_missing, categories = encode_column(column)
    value_codes = value_codes.astype(np.int64)
    if has_missing:
        # A missing value (a member of the hierarchy) is a value of its own, after the others.
        value_codes = np.where(value_codes < 0, n_values, value_codes)
        categories = pl.concat([categories, pl.Series([None], dtype=categories.dtype)])
    n_values = len(categories)
    pair, counts = np.unique(classes * n_values + value_codes, return_counts=True)
    pair_class, pair_value = pair // n_values, pair % n_values
    ranking = np.lexsort((pair_value, -counts, pair_class))
    best = ranking[np.concatenate(([True], pair_class[ranking][1:] != pair_class[ranking][:-1]))]
    mode_value = np.empty(n_classes, dtype=np.int64)
    mode_value[pair_class[best]] = pair_value[best]
    return categories.gather(mode_value).alias(dimension.name)


__all__ = [
    "MODES",
    "OUTPUTS",
    "CutTree",
    "MondrianCall",
    "MondrianFigures",
    "MondrianParams",
    "WholeTable",
    "mondrian",
]


# Registered method ----------------------------------------------------------------------------


class MondrianParams(PrivacyModelParams):
    """Parameters of Mondrian multidimensional partitioning (``sdckit anonymize mondrian``)."""

    mode: Annotated[
        Literal["strict", "relaxed"],
        Field(description="strict: cut at the median, classes never overlap; relaxed: halve the records."),
    ] = "strict"
    centroids: Annotated[
        bool, Field(description="Release each class's centroid (mean / most frequent value), not ranges.")
    ] = False

    @property
    def output(self) -> str:
        """What a class releases: ``"centroid"`` or ``"generalized"`` (labels)."""
        return "centroid" if self.centroids else "generalized"


class MondrianCall(MondrianParams):
    """Mondrian's parameters as the Python function :func:`mondrian` takes them: privacy model objects
    instead of k, l and t, the quasi-identifiers and hierarchies (default: the schema's), ``output``
    (``"generalized"`` or ``"centroid"``, read into ``centroids``) and, for a fragment of a larger
    table, the whole table's reference (:class:`WholeTable`). Not a command-line method's parameters
    (the objects have no text form); its recipe names the models."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    models: tuple[PrivacyModel, ...] = ()
    quasi_identifiers: tuple[str, ...] | None = None
    hierarchies: dict[str, Hierarchy] | None = None
    whole: WholeTable | None = None

    @model_validator(mode="before")
    @classmethod
    def _output(cls, values: Any) -> Any:
        if isinstance(values, Mapping) and "output" in values:
            values = dict(values)
            output = values.pop("output")
            if output not in OUTPUTS:
                shown = repr(output).replace("{", "{{").replace("}", "}}")
                raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, got {shown}")
            values["centroids"] = output == "centroid"
        return values

    @model_validator(mode="after")
    def _some_model(self) -> Self:
        if not self.models:
            raise ValueError("needs at least one privacy model in {models} (for example KAnonymity(5))")
        return self

    def privacy_models(self, table: Any) -> list[Any]:
        """The privacy model objects given."""
        return list(self.models)

    def to_recipe(self) -> dict[str, Any]:
        """The models by name, mode, output and quasi-identifiers (the objects have no text form)."""
        return {
            "models": [model.name for model in self.models],
            "mode": self.mode,
            "output": self.output,
            "quasi_identifiers": None if self.quasi_identifiers is None else list(self.quasi_identifiers),
        }


def recorded_parameters(release: Release) -> dict[str, Any]:
    """What a Mondrian transformation records of the release it was learnt from
    (``transformation["parameters"]``): the models by name, mode, output, quasi-identifiers and
    partitions."""
    params = release.params
    return {
        "models": [model.name for model in params.privacy_models(release.original)],
        "mode": params.mode,
        "output": params.output,
        "quasi_identifiers": list(release.quasi_identifiers),
        "partitions": release.figures_as(MondrianFigures).partitions,
    }


def _mondrian_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import achieved, cell_figures, class_figures
    from sdckit.utility import release_ncp

    params = release.params
    models = params.privacy_models(release.original)
    figures = {
        "models": [model.name for model in models],
        "mode": params.mode,
        "output": params.output,
        **class_figures(release),
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }
    if not params.centroids:
        figures["achieved"] = achieved(release, models)
    return figures


def _mondrian_report(figures: dict[str, Any]) -> list[str]:
    from sdckit.anonymize.base import achieved_report, classes_report

    return [*classes_report(figures), *achieved_report(figures)]


def _mondrian_violation(release: Release, figures: dict[str, Any]) -> str | None:
    from sdckit.anonymize.base import models_unmet

    if release.params.centroids:  # centroids may coincide across classes: the partition is what counts
        return None
    return models_unmet(release, figures)


@register_method(
    "mondrian",
    MondrianParams,
    summary=_mondrian_summary,
    help="Mondrian multidimensional partitioning under k-anonymity, l-diversity and t-closeness.",
    report=_mondrian_report,
    violation=_mondrian_violation,
    progress_label="records placed",
    transformation=MONDRIAN,
    partitioned=scaled.mondrian,
    examples={
        "minimal": {"k": 2},
        "replay": {"k": 3},
    },
)
def run(table: Table, params: MondrianParams, context: Context) -> Release:
    """Mondrian on ``table`` (see :func:`mondrian`): the models, quasi-identifiers and hierarchies of
    ``params`` (:class:`MondrianCall`), or those its k, l and t ask for on the quasi-identifiers of
    the table's schema (:class:`MondrianParams`)."""
    from sdckit.anonymize.base import quasi_identifiers as schema_quasi_identifiers

    models = params.privacy_models(table)
    names: Sequence[str] | None
    if isinstance(params, MondrianCall):
        names, hierarchies, whole = params.quasi_identifiers, params.hierarchies, params.whole
    else:
        names, hierarchies, whole = schema_quasi_identifiers(table), None, None
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    dimensions = _resolve(table, names, hierarchies, whole)
    sensitive = _sensitive_of(table, models, dimensions, whole)
    progress = context.progress
    classes, n_classes, splits, tree = _partition(dimensions, models, sensitive, params.mode, progress)
    return _release(table, dimensions, classes, n_classes, params.mode, params.output, splits, tree)


def _sensitive_of(
    table: Table, models: Sequence[PrivacyModel], dimensions: list[_Dimension], whole: WholeTable | None
) -> list[_Sensitive]:
    """The sensitive attributes of ``models`` coded, once the whole table is known to satisfy them
    (else no partition can)."""
    names = [d.name for d in dimensions]
    for model in models:
        attribute = model.sensitive_attribute
        if attribute is not None and attribute not in table.data.columns:
            raise ConfigError(
                f"sensitive attribute '{attribute}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
        if attribute in names:
            raise ConfigError(f"'{attribute}' cannot be both quasi-identifier and sensitive")
    sensitive = _encode_sensitive(table, models, whole)
    n = table.n_records
    everyone = np.arange(n, dtype=np.int64)
    statistics = _statistics(np.zeros(n, dtype=np.int64), 1, np.array([n]), everyone, sensitive)
    try:
        for model in models:
            model.check_feasible(statistics)
    except ConfigError as error:
        raise ConfigError(f"the privacy models cannot be satisfied: {error}") from None
    passes, results = evaluate_all(models, statistics)
    if not passes.all():
        failing = [r.model for r in results if not r.passes.all()]
        raise ConfigError(
            f"the privacy models cannot be satisfied: the whole table fails {', '.join(failing)}, "
            "so no partition of it passes"
        )
    return sensitive
