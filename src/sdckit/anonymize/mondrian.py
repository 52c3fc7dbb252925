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
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import ConfigDict, Field, model_validator

from sdckit.anonymize._mondrian_coding import (
    _HIERARCHY,
    _NUMERIC,
    WholeTable,
    _Dimension,
    _encode_sensitive,
    _resolve,
    _Sensitive,
    _statistics,
)
from sdckit.anonymize._mondrian_transform import MONDRIAN
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.frequency import encode_column
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.labels import range_labels, set_labels
from sdckit.models import KAnonymity, PrivacyModel, evaluate_all
from sdckit.models.presence import released_classes, subset_columns, subset_weights
from sdckit.params import PrivacyModelParams
from sdckit.scale import methods as scaled
from sdckit.table import Role, Schema, Table

MODES = ("strict", "relaxed")
OUTPUTS = ("generalized", "centroid")


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
        distinct / entropy / recursive l-diversity, t-closeness, β-likeness and δ-disclosure privacy
        (the whole table's distribution is the reference of the last three).
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


@dataclass
class _Cutter:
    """How a partition is cut: the records' codes (one row per quasi-identifier) and what widths and
    cuts read of every dimension, as Python lists (read once per partition, faster than arrays)."""

    codes: np.ndarray  # (q, n) int32
    kinds: list[str]
    spans: list[float]
    values: list[list[float]]
    ancestor_rows: list[list[list[int]] | None]
    node_width: list[list[list[float]] | None]
    levels_of: list[int]
    ancestors: list[np.ndarray | None]
    models: Sequence[PrivacyModel]
    sensitive: list[_Sensitive]
    smallest: int  # records every child needs at least (the largest k; 1 without k-anonymity)
    only_k: bool  # k-anonymity alone: the children's sizes decide, no class statistics needed
    relaxed: bool
    subset: np.ndarray | None = None  # a research subset's 0/1 per record (sizes count its records)

    @classmethod
    def of(
        cls,
        dimensions: list[_Dimension],
        models: Sequence[PrivacyModel],
        sensitive: list[_Sensitive],
        mode: str,
        subset: np.ndarray | None = None,
    ) -> _Cutter:
        # With a research subset a child may hold fewer than k records of the population: it is
        # allowed with k subset records, or with none (it releases nothing).
        largest_k = max([m.k for m in models if isinstance(m, KAnonymity)], default=1)
        return cls(
            codes=np.stack([d.codes for d in dimensions]).astype(np.int32),
            kinds=[d.kind for d in dimensions],
            spans=[d.span for d in dimensions],
            values=[d.value_list for d in dimensions],
            ancestor_rows=[d.ancestor_rows for d in dimensions],
            node_width=[
                None if d.node_width is None else [w.tolist() for w in d.node_width] for d in dimensions
            ],
            levels_of=[0 if d.ancestors is None else d.ancestors.shape[1] for d in dimensions],
            ancestors=[d.ancestors for d in dimensions],
            models=models,
            sensitive=sensitive,
            smallest=largest_k if subset is None else 1,
            only_k=all(isinstance(m, KAnonymity) for m in models),
            relaxed=mode == "relaxed",
            subset=subset,
        )

    def cut(self, index: np.ndarray) -> tuple[list[np.ndarray], int, int, list[int]] | None:
        """The allowable cut of the partition ``index`` on the widest quasi-identifier that has one:
        its children (record indices), the quasi-identifier, where it is cut (median code, or the
        hierarchy level of the children) and the children's keys (see :class:`CutTree`); None when
        no cut is allowable (the partition becomes a class)."""
        size = len(index)
        if size < 2 * self.smallest or size < 2:
            return None
        block = self.codes[:, index] if size < self.codes.shape[1] else self.codes
        lows = block.min(axis=1).tolist()
        highs = block.max(axis=1).tolist()
        widths, lca_levels = self._widths(lows, highs)
        for j in sorted((j for j in range(len(widths)) if widths[j] > 0), key=lambda j: -widths[j]):
            column = block[j]
            left: np.ndarray | None = None
            child: np.ndarray | None = None
            if self.kinds[j] == _HIERARCHY:
                split = self._hierarchy_split(j, column, lows[j], lca_levels[j] - 1)
                if split is None:
                    continue
                child, sizes, cut_at, cut_keys = split
            else:
                halves = self._median_split(column, size)
                if halves is None:
                    continue
                left, sizes, cut_at = halves
                cut_keys = [-1, -1]
                if not self.only_k:  # the models judge the children's class statistics
                    child = (~left).astype(np.int64)
            if not self.only_k:
                assert child is not None
                statistics = _statistics(
                    child, len(sizes), sizes, index, self.sensitive, self.subset, subset_columns(self.models)
                )
                allowed, results = evaluate_all(self.models, statistics)
                if self.subset is not None:
                    allowed, _ = released_classes(self.models, results, statistics.sizes, allowed)
                if not allowed.all():
                    continue
            if left is not None:
                children = [index[left], index[~left]]
            else:
                assert child is not None  # a hierarchy cut names every record's child
                ordering = np.argsort(child, kind="stable")
                children = np.split(index[ordering], np.cumsum(sizes)[:-1])
            return children, j, cut_at, cut_keys
        return None

    def _widths(self, lows: list[int], highs: list[int]) -> tuple[list[float], list[int]]:
        """The normalized width of a partition on every quasi-identifier, and the level of the lowest
        common ancestor of its values on those with a hierarchy (0 elsewhere)."""
        widths = []
        lca_levels = [0] * len(lows)
        for j, (low, high) in enumerate(zip(lows, highs, strict=True)):
            if low == high:
                widths.append(0.0)
            elif self.kinds[j] == _HIERARCHY:
                rows, node_width = self.ancestor_rows[j], self.node_width[j]
                assert rows is not None and node_width is not None
                row_low, row_high = rows[low], rows[high]
                level = next(L for L in range(self.levels_of[j]) if row_low[L] == row_high[L])
                lca_levels[j] = level
                widths.append(node_width[level][row_low[level]])
            else:
                span = self.spans[j]
                widths.append((self.values[j][high] - self.values[j][low]) / span if span > 0 else 0.0)
        return widths, lca_levels

    def _hierarchy_split(
        self, j: int, column: np.ndarray, low: int, level: int
    ) -> tuple[np.ndarray, np.ndarray, int, list[int]] | None:
        """A multi-way cut at hierarchy ``level`` (one below the partition's lowest common ancestor):
        every record's child, the children's sizes, the level and the children's nodes; None when a
        child would be too small."""
        ancestors, rows = self.ancestors[j], self.ancestor_rows[j]
        assert ancestors is not None and rows is not None
        nodes = ancestors[:, level][column]
        first = rows[low][level]
        local = nodes - first
        counts = np.bincount(local)
        present = np.flatnonzero(counts)
        if len(present) < 2:  # cannot happen below an LCA; kept as a guard
            return None
        sizes = counts[present]
        if sizes.min() < self.smallest:
            return None
        if len(present) != len(counts):
            remap = np.zeros(len(counts), dtype=np.int64)
            remap[present] = np.arange(len(present))
            local = remap[local]
        return local.astype(np.int64, copy=False), sizes, level, (present + first).tolist()

    def _median_split(self, column: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, int] | None:
        """A cut at the median: the records going left, the two sizes and the median code; None when a
        side would be too small (or, strict, empty: all values equal up to the median)."""
        if self.relaxed:
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
                return None
        if n_left < self.smallest or size - n_left < self.smallest:
            return None
        return left, np.array([n_left, size - n_left]), int(median)


@dataclass
class _TreeBuilder:
    """The cut tree as it grows, one entry per partition (see :class:`CutTree`); node 0 is the whole
    table."""

    attribute: list[int] = field(default_factory=lambda: [-1])
    at: list[int] = field(default_factory=lambda: [-1])
    first_child: list[int] = field(default_factory=lambda: [-1])
    n_children: list[int] = field(default_factory=lambda: [0])
    key: list[int] = field(default_factory=lambda: [-1])
    box: list[int] = field(default_factory=lambda: [-1])

    def split(self, node: int, attribute: int, at: int, keys: list[int]) -> range:
        """Node ``node`` cut on ``attribute`` at ``at`` into children keyed ``keys``: their ids."""
        first = len(self.attribute)
        self.attribute[node], self.at[node] = attribute, at
        self.first_child[node], self.n_children[node] = first, len(keys)
        for key in keys:
            self.attribute.append(-1)
            self.at.append(-1)
            self.first_child.append(-1)
            self.n_children.append(0)
            self.key.append(key)
            self.box.append(-1)
        return range(first, first + len(keys))

    def arrays(self, renumber: np.ndarray) -> dict[str, np.ndarray]:
        """The arrays of :class:`CutTree`, the leaves' classes numbered by ``renumber``."""
        box = np.asarray(self.box, dtype=np.int64)
        box[box >= 0] = renumber[box[box >= 0]]
        return {
            "attribute": np.asarray(self.attribute, dtype=np.int64),
            "at": np.asarray(self.at, dtype=np.int64),
            "first_child": np.asarray(self.first_child, dtype=np.int64),
            "n_children": np.asarray(self.n_children, dtype=np.int64),
            "key": np.asarray(self.key, dtype=np.int64),
            "box": box,
        }


def _partition(
    dimensions: list[_Dimension],
    models: Sequence[PrivacyModel],
    sensitive: list[_Sensitive],
    mode: str,
    progress: ProgressCallback | None,
    subset: np.ndarray | None = None,
) -> tuple[np.ndarray, int, int, dict[str, np.ndarray]]:
    """The class of every record (numbered in order of first record), the number of classes, the
    number of cuts, and the cut tree (the arrays of :class:`CutTree`); ``subset``: a research
    subset's 0/1 per record (:func:`sdckit.models.presence.subset_weights`)."""
    cutter = _Cutter.of(dimensions, models, sensitive, mode, subset)
    n = len(dimensions[0].codes)
    classes = np.empty(n, dtype=np.int64)
    n_classes = placed = splits = next_report = 0
    tree = _TreeBuilder()
    stack = [(np.arange(n, dtype=np.int64), 0)]
    while stack:
        index, node = stack.pop()
        cut = cutter.cut(index)
        if cut is None:
            tree.box[node] = n_classes
            classes[index] = n_classes
            n_classes += 1
            placed += len(index)
            if progress is not None and placed >= next_report:
                progress(placed, n)
                next_report = placed + max(n // 100, 1)
            continue
        children, attribute, at, keys = cut
        splits += 1
        ids = tree.split(node, attribute, at, keys)
        stack.extend(reversed(list(zip(children, ids, strict=True))))
    if progress is not None:
        progress(n, n)
    # Number the classes in order of their first record.
    _, first_records = np.unique(classes, return_index=True)
    renumber = np.empty(n_classes, dtype=np.int64)
    renumber[np.argsort(first_records, kind="stable")] = np.arange(n_classes)
    return renumber[classes], n_classes, splits, tree.arrays(renumber)


def _release(
    table: Table,
    dimensions: list[_Dimension],
    classes: np.ndarray,
    n_classes: int,
    params: MondrianParams,
    splits: int,
    tree: dict[str, np.ndarray],
) -> Release:
    mode, output = params.mode, params.output
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
            ancestors, node_labels = dimension.ancestors, dimension.node_labels
            assert ancestors is not None and node_labels is not None and dimension.node_penalty is not None
            same = ancestors[lows] == ancestors[highs]
            level = np.argmax(same, axis=1)  # the top level (or implicit root) always agrees
            node = ancestors[lows, level]
            offsets = np.cumsum(np.array([0] + [len(labels) for labels in node_labels], dtype=np.int64))
            flat = offsets[level] + node
            class_penalty = np.concatenate(dimension.node_penalty)[flat]
            labels = pl.Series(
                dimension.name, [label for labels in node_labels for label in labels], pl.String
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
        params=params,
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
    help="Mondrian multidimensional partitioning under k-anonymity, l-diversity, t-closeness, "
    "beta-likeness and delta-disclosure privacy.",
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
    _refuse_table_models(models)
    names: Sequence[str] | None
    if isinstance(params, MondrianCall):
        names, hierarchies, whole = params.quasi_identifiers, params.hierarchies, params.whole
    else:
        names, hierarchies, whole = schema_quasi_identifiers(table), None, None
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    dimensions = _resolve(table, names, hierarchies, whole)
    subset = subset_weights(table, models, None)  # the models count a research subset's records
    sensitive = _sensitive_of(table, models, dimensions, whole, subset)
    progress = context.progress
    classes, n_classes, splits, tree = _partition(
        dimensions, models, sensitive, params.mode, progress, subset
    )
    return _release(table, dimensions, classes, n_classes, params, splits, tree)


def _refuse_table_models(models: Sequence[PrivacyModel]) -> None:
    """Mondrian judges each cut by its children's classes; the risk-based models (average risk,
    sample and population uniqueness) judge the whole table, which no cut sees (use generalize)."""
    from sdckit.params import spell

    table_level = [model.name for model in models if getattr(model, "table_level", False)]
    if table_level:
        names = ", ".join(
            spell(name) for name in ("average_risk", "sample_uniqueness", "population_uniqueness")
        )
        raise ConfigError(
            f"mondrian: {names} judge the whole table, not a cut's classes ({', '.join(table_level)}); "
            "use generalize for them"
        )


def _sensitive_of(
    table: Table,
    models: Sequence[PrivacyModel],
    dimensions: list[_Dimension],
    whole: WholeTable | None,
    subset: np.ndarray | None = None,
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
    sensitive = _encode_sensitive(table, models, whole, subset, subset_columns(models))
    n = table.n_records
    everyone = np.arange(n, dtype=np.int64)
    statistics = _statistics(
        np.zeros(n, dtype=np.int64), 1, np.array([n]), everyone, sensitive, subset, subset_columns(models)
    )
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
