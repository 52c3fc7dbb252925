"""Re-applying the transformation of strict Mondrian (:mod:`sdckit.anonymize.transform` describes
it): learning the cut tree and its boxes from a release, routing other data through it, and exporting
it as CSV. Mondrian's specification names it (``transformation=MONDRIAN``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from sdckit.anonymize.base import Transformation
from sdckit.anonymize.release import AppliedFigures, Release
from sdckit.anonymize.transform import (
    _dropped,
    _field,
    _hierarchy,
    _hierarchy_rows,
    _leaves_of,
    _missing_entry,
    _number,
    _released_table,
    _uncovered,
    recorded_params,
)
from sdckit.errors import ConfigError
from sdckit.hierarchy import MISSING_LABEL, TOP_LABEL, Hierarchy
from sdckit.labels import interval_labels
from sdckit.table import Table, value_strings

if TYPE_CHECKING:
    from sdckit.anonymize.mondrian import CutTree


@dataclass(frozen=True)
class MondrianAppliedFigures(AppliedFigures):
    """The figures of a Mondrian transformation applied to new data: besides ``unknown``,
    ``partitions`` (the learnt boxes that received records) and ``record_boxes``, the box of every
    record (-1 when suppressed)."""

    partitions: int = 0
    record_boxes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


_RELAXED = (
    "mondrian in relaxed mode cannot be re-applied to other data: its cuts split records with equal "
    "values by their position, so its classes overlap and the class of a new record is not a function "
    "of its values; use mode strict"
)


def learn_mondrian(release: Release) -> dict[str, Any]:
    """The cut tree of a strict Mondrian release, its boxes and what their labels cover."""
    from sdckit.anonymize.mondrian import MondrianFigures, recorded_parameters

    if getattr(release.params, "mode", None) == "relaxed":
        raise ConfigError(_RELAXED)
    figures = release.figures
    tree = figures.boxes if isinstance(figures, MondrianFigures) else None
    if tree is None:
        raise ConfigError("this mondrian release has no cut tree (figures.boxes) to re-apply")
    dimensions = tree.dimensions
    lows, highs, levels, nodes = _regions(tree)
    n_boxes = len(tree.penalty)
    leaf_nodes = np.flatnonzero(tree.box >= 0)
    box_node = np.empty(n_boxes, dtype=np.int64)
    box_node[tree.box[leaf_nodes]] = leaf_nodes
    generalized = tree.output != "centroid"
    # The original records of every box (boxes are numbered as the release's classes), for the
    # extent of the labels they released.
    classes = np.asarray(release.classes, dtype=np.int64)
    order = np.argsort(classes, kind="stable")
    sizes = np.bincount(classes, minlength=n_boxes)
    if len(sizes) != n_boxes or not sizes.all():
        raise ConfigError("this mondrian release's classes do not match the boxes of its cut tree")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    attributes = {}
    for j, dimension in enumerate(dimensions):
        released = tree.labels[j]
        if tree.output == "centroid" and dimension.kind == "numeric":
            released_list = released.cast(pl.Float64).to_list()  # class means, exact in JSON
        else:
            released_list = value_strings(released).to_list()  # labels, or most frequent values as text
        boxes: dict[str, Any]
        spec: dict[str, Any] = {"kind": dimension.kind, "categories": tree.categories[j]}
        low, high = lows[box_node, j], highs[box_node, j]
        if dimension.kind == "numeric":
            values = dimension.values
            spec["minimum"] = _number(values[0])
            spec["maximum"] = _number(values[-1])
            boxes = {
                "low": [_number(v) for v in np.where(low > 0, values[np.maximum(low - 1, 0)], values[0])],
                "low_closed": (low == 0).tolist(),
                "high": [_number(v) for v in values[high]],
                "high_closed": [True] * n_boxes,
            }
        elif dimension.kind == "ordered":
            texts = dimension.texts
            spec["values"] = texts.to_list()
            boxes = {"first": texts.gather(low).to_list(), "last": texts.gather(high).to_list()}
        else:
            spec["hierarchy"] = _hierarchy_rows(dimension.hierarchy)
            spec.update(_missing_entry(dimension.hierarchy))
            level, node = levels[box_node, j], nodes[box_node, j]
            node_labels = dimension.node_labels
            assert node_labels is not None  # a hierarchy dimension labels its nodes
            offsets = np.cumsum(np.array([0] + [len(labels) for labels in node_labels], dtype=np.int64))
            all_labels = np.array([label for labels in node_labels for label in labels], dtype=np.object_)
            boxes = {"level": level.tolist(), "node": all_labels[offsets[level] + node].tolist()}
        boxes["released"] = released_list
        if generalized:
            boxes.update(_label_extents(dimension, classes, order, starts, n_boxes))
        boxes["penalty"] = tree.penalty[:, j].tolist()
        spec["boxes"] = boxes
        attributes[dimension.name] = spec
    return {
        # the header's entry (transformation_of), written from the release's parameters and figures
        "parameters": recorded_parameters(release),
        "attributes": attributes,
        "boxes": n_boxes,
        "tree": _tree_nodes(tree),
    }


def _label_extents(
    dimension: Any, classes: np.ndarray, order: np.ndarray, starts: np.ndarray, n_boxes: int
) -> dict[str, list[Any]]:
    """Per box: what its generalized label covers, from the codes of its original records (as
    Mondrian builds the label): ``label_low`` and ``label_high`` (numbers), ``label_values`` (the set
    of an ordered category) or ``label_level`` (the level of the lowest common ancestor)."""
    codes = np.asarray(dimension.codes, dtype=np.int64)
    sorted_codes = codes[order]
    low = np.minimum.reduceat(sorted_codes, starts)
    high = np.maximum.reduceat(sorted_codes, starts)
    if dimension.kind == "numeric":
        values = dimension.values
        return {
            "label_low": [_number(v) for v in values[low]],
            "label_high": [_number(v) for v in values[high]],
        }
    if dimension.kind == "ordered":
        # The set of the box's values, which need not be a run of the sorted values.
        m = max(len(dimension.texts), 1)
        pairs = np.unique(classes * m + codes)
        texts = dimension.texts.gather(pairs % m).to_list()
        bounds = np.searchsorted(pairs // m, np.arange(1, n_boxes))
        return {"label_values": [list(part) for part in np.split(np.array(texts, dtype=object), bounds)]}
    ancestors = dimension.ancestors
    same = ancestors[low] == ancestors[high]
    return {"label_level": np.argmax(same, axis=1).tolist()}  # the top level always agrees


def _regions(tree: CutTree) -> tuple[np.ndarray, ...]:
    """Per tree node and quasi-identifier: the run of codes ``[low, high]`` it covers (numbers and
    ordered values) and its hierarchy node (level, depth-first node number), top-down one depth of the
    tree at a time."""
    dimensions = tree.dimensions
    count, q = len(tree.attribute), len(dimensions)
    lows = np.zeros((count, q), dtype=np.int64)
    highs = np.zeros((count, q), dtype=np.int64)
    levels = np.zeros((count, q), dtype=np.int64)
    nodes = np.zeros((count, q), dtype=np.int64)
    for j, dimension in enumerate(dimensions):
        highs[0, j] = len(dimension.texts) - 1
        if dimension.ancestors is not None:
            levels[0, j] = dimension.ancestors.shape[1] - 1
    hierarchical = np.array([d.kind == "hierarchy" for d in dimensions], dtype=bool)
    frontier = np.zeros(1, dtype=np.int64)
    while frontier.size:
        parents = frontier[tree.attribute[frontier] >= 0]
        if not parents.size:
            break
        counts = tree.n_children[parents]
        parent = np.repeat(parents, counts)
        offset = np.arange(len(parent)) - np.repeat(np.cumsum(counts) - counts, counts)
        children = tree.first_child[parent] + offset
        for array in (lows, highs, levels, nodes):
            array[children] = array[parent]
        cut_on = tree.attribute[parent]
        at = tree.at[parent]
        split = ~hierarchical[cut_on]
        left = split & (offset == 0)
        right = split & (offset == 1)
        highs[children[left], cut_on[left]] = at[left]
        lows[children[right], cut_on[right]] = at[right] + 1
        cut = ~split
        levels[children[cut], cut_on[cut]] = at[cut]
        nodes[children[cut], cut_on[cut]] = tree.key[children[cut]]
        frontier = children
    return lows, highs, levels, nodes


def _tree_nodes(tree: CutTree) -> list[dict[str, Any]]:
    """The cut tree as a list of JSON nodes (a loop over the tree's nodes, not over records)."""
    result: list[dict[str, Any]] = []
    for t in range(len(tree.attribute)):
        j = int(tree.attribute[t])
        if j < 0:
            result.append({"box": int(tree.box[t])})
            continue
        dimension = tree.dimensions[j]
        at = int(tree.at[t])
        first = int(tree.first_child[t])
        children = list(range(first, first + int(tree.n_children[t])))
        if dimension.kind == "numeric":
            result.append(
                {"attribute": dimension.name, "at": _number(dimension.values[at]), "children": children}
            )
        elif dimension.kind == "ordered":
            result.append({"attribute": dimension.name, "at": dimension.texts[at], "children": children})
        else:
            assert dimension.node_labels is not None  # a hierarchy dimension labels its nodes
            labels = dimension.node_labels[at]
            keyed = {labels[int(tree.key[child])]: child for child in children}
            result.append({"attribute": dimension.name, "level": at, "children": keyed})
    return result


@dataclass
class _RecordValues:
    """Every record's value per quasi-identifier as the cut tree reads it (numbers; ranks of ordered
    values, hierarchy leaves in ``codes``), whether the transformation covers it, and the problems
    (attribute, records, what) of those it does not."""

    kinds: list[str]
    numbers: list[np.ndarray | None]
    codes: list[np.ndarray | None]
    hierarchy_list: list[Hierarchy | None]
    hierarchies: dict[str, Hierarchy]
    value_rank: list[dict[str, int] | None]
    covered: np.ndarray  # (n, q) bool
    problems: list[tuple[str, np.ndarray, str]]


def _record_values(table: Table, attributes: Mapping[str, Any], names: list[str]) -> _RecordValues:
    q, n = len(names), table.n_records
    kinds = [attributes[name]["kind"] for name in names]
    for name, kind in zip(names, kinds, strict=True):
        if kind not in ("numeric", "ordered", "hierarchy"):
            raise ConfigError(f"malformed transformation: unknown kind {kind!r} of '{name}'")
    found = _RecordValues(
        kinds, [None] * q, [None] * q, [None] * q, {}, [None] * q, np.ones((n, q), dtype=bool), []
    )
    for j, name in enumerate(names):
        spec = attributes[name]
        column = table.column(name)
        if kinds[j] == "numeric":
            if column.dtype.is_numeric():
                values = column.cast(pl.Float64)
            else:
                values = column.cast(pl.String).str.strip_chars().cast(pl.Float64, strict=False)
            x = values.fill_null(np.nan).to_numpy().astype(np.float64)
            with np.errstate(invalid="ignore"):
                ok = np.isfinite(x) & (x >= float(spec["minimum"])) & (x <= float(spec["maximum"]))
            found.numbers[j] = np.where(ok, x, 0.0)
            what = f"outside the original range [{spec['minimum']}, {spec['maximum']}] or not numbers"
        elif kinds[j] == "ordered":
            texts = [str(value) for value in spec["values"]]
            found.value_rank[j] = {text: rank for rank, text in enumerate(texts)}
            ranks = value_strings(_category_values(column)).cast(pl.Enum(texts), strict=False)
            rank = np.array(ranks.to_physical().cast(pl.Int64).fill_null(-1).to_numpy(), dtype=np.int64)
            ok = rank >= 0
            found.codes[j] = rank
            what = "not among the original values"
        else:
            hierarchy = _hierarchy(name, spec["hierarchy"], spec.get("missing"))
            found.hierarchies[name] = hierarchy
            found.hierarchy_list[j] = hierarchy
            leaf = _leaves_of(column, hierarchy)
            ok = leaf >= 0
            found.codes[j] = leaf
            what = "not in its hierarchy"
        found.covered[:, j] = ok
        if not ok.all():
            found.problems.append((name, ~ok, what))
    return found


@dataclass
class _TreeArrays:
    """The learnt cut tree as arrays over its nodes: the attribute cut (-1: a leaf), the leaf's box,
    a numeric or ordered cut's threshold and children, a hierarchy cut's level, and the hierarchy
    children looked up by ``node * widest + node of the record's leaf at the level``."""

    attribute: np.ndarray
    box: np.ndarray
    threshold: np.ndarray
    level_at: np.ndarray
    left: np.ndarray
    right: np.ndarray
    widest: int
    sorted_keys: np.ndarray
    sorted_children: np.ndarray


def _tree_arrays(
    transformation: Mapping[str, Any], names: list[str], values: _RecordValues, n_boxes: int
) -> _TreeArrays:
    """The cut tree of ``transformation`` as arrays (a loop over its nodes, not over records)."""
    kinds = values.kinds
    nodes = _field(transformation, "tree", list)
    count = len(nodes)
    attribute = np.full(count, -1, dtype=np.int64)
    box = np.full(count, -1, dtype=np.int64)
    threshold = np.zeros(count, dtype=np.float64)
    level_at = np.zeros(count, dtype=np.int64)
    left = np.full(count, -1, dtype=np.int64)
    right = np.full(count, -1, dtype=np.int64)
    widest = max([max(len(labels) for labels in h.labels) for h in values.hierarchies.values()] or [1])
    hierarchy_keys, hierarchy_children = [], []
    index_of = {name: j for j, name in enumerate(names)}
    for t, node in enumerate(nodes):
        if "box" in node:
            box[t] = int(node["box"])
            if not 0 <= box[t] < n_boxes:
                raise ConfigError(f"malformed transformation: tree node {t} names box {box[t]} of {n_boxes}")
            continue
        j = index_of[node["attribute"]]
        attribute[t] = j
        children = node["children"]
        if kinds[j] == "hierarchy":
            hierarchy = values.hierarchy_list[j]
            assert hierarchy is not None
            level = int(node["level"])
            if not 0 <= level < hierarchy.n_levels:
                raise ConfigError(
                    f"malformed transformation: tree node {t} cuts '{names[j]}' at level {level}"
                )
            level_at[t] = level
            for label, child in children.items():
                hierarchy_keys.append(t * widest + hierarchy.node_of(label, level))
                hierarchy_children.append(int(child))
            child_ids = list(children.values())
        else:
            if kinds[j] == "numeric":
                threshold[t] = float(node["at"])
            else:
                rank_of = values.value_rank[j]
                assert rank_of is not None
                threshold[t] = rank_of[str(node["at"])]
            left[t], right[t] = (int(child) for child in children)
            child_ids = children
        if not all(t < int(child) < count for child in child_ids):
            raise ConfigError(
                f"malformed transformation: tree node {t} has children outside {t + 1} .. {count - 1}"
            )
    key_order = np.argsort(np.asarray(hierarchy_keys, dtype=np.int64), kind="stable")
    sorted_keys = np.asarray(hierarchy_keys, dtype=np.int64)[key_order]
    sorted_children = np.asarray(hierarchy_children, dtype=np.int64)[key_order]
    return _TreeArrays(attribute, box, threshold, level_at, left, right, widest, sorted_keys, sorted_children)


def _route(tree: _TreeArrays, values: _RecordValues) -> tuple[np.ndarray, np.ndarray]:
    """The covered records routed down the tree, one depth at a time: the node every record ends
    at, and the cells whose hierarchy node has no child in the tree (their records stop there)."""
    n, q = values.covered.shape
    kinds, codes = values.kinds, values.codes
    current = np.zeros(n, dtype=np.int64)
    stuck = np.zeros(n, dtype=bool)
    routed_off = np.zeros((n, q), dtype=bool)
    sorted_keys = tree.sorted_keys
    active = np.flatnonzero(values.covered.all(axis=1))
    while active.size:
        here = current[active]
        cut = tree.attribute[here]
        inner = cut >= 0
        active, here, cut = active[inner], here[inner], cut[inner]
        if not active.size:
            break
        for j in np.unique(cut).tolist():
            chosen = cut == j
            records, at_node = active[chosen], here[chosen]
            if kinds[j] in ("numeric", "ordered"):
                read = values.numbers[j] if kinds[j] == "numeric" else codes[j]
                assert read is not None
                go_left = read[records] <= tree.threshold[at_node]
                current[records] = np.where(go_left, tree.left[at_node], tree.right[at_node])
            else:
                hierarchy = values.hierarchy_list[j]
                leaves_j = codes[j]
                assert hierarchy is not None and leaves_j is not None
                keys = at_node * tree.widest + hierarchy.codes[leaves_j[records], tree.level_at[at_node]]
                position = np.minimum(np.searchsorted(sorted_keys, keys), max(len(sorted_keys) - 1, 0))
                found = sorted_keys[position] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
                current[records[found]] = tree.sorted_children[position[found]]
                stuck[records[~found]] = True
                routed_off[records[~found], j] = True
        active = active[~stuck[active]]
    return current, routed_off


def apply_mondrian(
    table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str
) -> Release:
    """``table`` routed to the learnt boxes and released with their labels or centroids."""
    attributes = transformation["attributes"]
    n_boxes = int(transformation["boxes"])
    values = _record_values(table, attributes, names)
    tree = _tree_arrays(transformation, names, values, n_boxes)
    current, routed_off = _route(tree, values)
    problems = values.problems
    for j, name in enumerate(names):
        if routed_off[:, j].any():
            problems.append((name, routed_off[:, j], "in no learnt box (next to the record's other values)"))
    routed = ~(~values.covered | routed_off).any(axis=1)
    routed_box = np.where(routed, tree.box[current], -1)
    if (routed_box[routed] < 0).any():
        raise ConfigError("malformed transformation: a path of the cut tree ends without a box")
    outside = _outside_labels(attributes, names, values, routed, routed_box, n_boxes)
    unknown_cells = ~values.covered | routed_off | outside
    suppressed = unknown_cells.any(axis=1)
    if problems and unknown == "error":
        raise _uncovered(table, problems)
    record_box = np.where(suppressed, -1, routed_box)
    classes, partitions = _box_classes(record_box, suppressed)
    columns, penalty = _released_columns(table, attributes, names, values.kinds, record_box, n_boxes)
    return Release(
        table=_released_table(table, columns, _dropped(table, transformation)),
        original=table,
        method="mondrian",
        quasi_identifiers=tuple(names),
        suppressed_records=suppressed,
        classes=classes,
        hierarchies=values.hierarchies,
        cell_penalty=penalty,
        suppressed_cells=_suppressed_cells(values, suppressed),
        params=recorded_params(transformation),
        figures=MondrianAppliedFigures(
            unknown={name: int(np.count_nonzero(unknown_cells[:, j])) for j, name in enumerate(names)},
            partitions=partitions,
            record_boxes=record_box,
        ),
    )


def _outside_labels(
    attributes: Mapping[str, Any],
    names: list[str],
    values: _RecordValues,
    routed: np.ndarray,
    routed_box: np.ndarray,
    n_boxes: int,
) -> np.ndarray:
    """The cells of routed records whose value is not under the generalized label of their box (a
    label states a value: the record's value must be under it, not only in the box's region, since a
    box's label is learnt from its original records); each attribute with some is a problem."""
    outside = np.zeros(values.covered.shape, dtype=bool)
    for j, name in enumerate(names):
        if attributes[name].get("categories") is None:
            continue  # a centroid replaces the value; it makes no claim about it
        outside[:, j] = routed & ~_label_covers(
            name,
            attributes[name],
            values.kinds[j],
            routed_box,
            n_boxes,
            values.numbers[j],
            values.codes[j],
            values.hierarchy_list[j],
        )
        if outside[:, j].any():
            values.problems.append((name, outside[:, j], "outside the label of their box"))
    return outside


def _box_classes(record_box: np.ndarray, suppressed: np.ndarray) -> tuple[np.ndarray, int]:
    """Every record's class, the boxes numbered by their first record (-1 when suppressed), and the
    number of boxes that received records."""
    classes = np.full(len(record_box), -1, dtype=np.int64)
    kept = np.flatnonzero(~suppressed)
    boxes_used, first = np.unique(record_box[kept], return_index=True)
    rank = np.empty(len(boxes_used), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(boxes_used))
    classes[kept] = rank[np.searchsorted(boxes_used, record_box[kept])]
    return classes, len(boxes_used)


def _released_columns(
    table: Table,
    attributes: Mapping[str, Any],
    names: list[str],
    kinds: list[str],
    record_box: np.ndarray,
    n_boxes: int,
) -> tuple[list[pl.Series], np.ndarray]:
    """Every quasi-identifier's released column (its box's label or centroid, null when suppressed)
    and every cell's NCP (1 when suppressed)."""
    suppressed = record_box < 0
    index: Any = record_box
    if suppressed.any():
        index = pl.select(
            pl.when(pl.lit(pl.Series(~suppressed))).then(pl.lit(pl.Series(record_box)))
        ).to_series()
    columns = []
    penalty = np.empty((table.n_records, len(names)), dtype=np.float64)
    for j, name in enumerate(names):
        spec = attributes[name]
        boxes = spec["boxes"]
        released = boxes["released"]
        if len(released) != n_boxes or len(boxes["penalty"]) != n_boxes:
            raise ConfigError(f"malformed transformation: '{name}' does not give one value per box")
        if spec.get("categories") is not None:
            categories = [str(label) for label in spec["categories"]]
            # A box whose label is a node of the missing value released a missing value (null).
            per_box = pl.Series(
                name, [None if label is None else str(label) for label in released], dtype=pl.String
            ).cast(pl.Enum(categories))
        elif kinds[j] == "numeric":
            per_box = pl.Series(name, [float(value) for value in released], dtype=pl.Float64)
        else:
            dtype = _category_values(table.column(name)).dtype
            per_box = _from_texts([str(value) for value in released], dtype, name)
        columns.append(per_box.gather(index).alias(name))
        box_penalty = np.asarray(boxes["penalty"], dtype=np.float64)
        penalty[:, j] = np.where(suppressed, 1.0, box_penalty[np.maximum(record_box, 0)])
    return columns, penalty


def _suppressed_cells(values: _RecordValues, suppressed: np.ndarray) -> np.ndarray | None:
    """The suppressed cells: every cell of a suppressed record, and a missing value suppressed from
    the start (a hierarchy's missing: suppress), as in the method; None when there are none."""
    n, q = values.covered.shape
    suppressed_cells = np.repeat(suppressed[:, None], q, axis=1) if suppressed.any() else None
    for j, hierarchy in enumerate(values.hierarchy_list):
        if hierarchy is not None and hierarchy.missing == "suppress":
            if suppressed_cells is None:
                suppressed_cells = np.zeros((n, q), dtype=bool)
            leaves_j = values.codes[j]
            assert leaves_j is not None
            suppressed_cells[:, j] |= leaves_j == hierarchy.missing_leaf
    return suppressed_cells


def _category_values(column: pl.Series) -> pl.Series:
    """A categorical column as :func:`sdckit.frequency.encode` sorts it (Categorical and Enum as text,
    booleans as 0/1): the dtype of Mondrian's categorical centroids."""
    if column.dtype in (pl.Categorical, pl.Enum, pl.Object):
        return column.cast(pl.String)
    if column.dtype == pl.Boolean:
        return column.cast(pl.Int8)
    return column


def _from_texts(texts: list[str], dtype: pl.DataType, name: str) -> pl.Series:
    series = pl.Series(name, texts, dtype=pl.String)
    if dtype == pl.String:
        return series
    if dtype.is_temporal():
        return series.str.strptime(dtype)  # type: ignore[arg-type]
    return series.cast(dtype)


def _label_covers(
    name: str,
    spec: Mapping[str, Any],
    kind: str,
    record_box: np.ndarray,
    n_boxes: int,
    numbers: np.ndarray | None,
    codes: np.ndarray | None,
    hierarchy: Hierarchy | None,
) -> np.ndarray:
    """Whether the generalized label of each record's box covers the record's value (records with
    ``record_box`` -1 come out False and are not looked at)."""
    boxes = spec["boxes"]
    routed = record_box >= 0
    b = np.maximum(record_box, 0)
    if kind == "numeric":
        assert numbers is not None
        low = _per_box(name, boxes, "label_low", n_boxes, float)
        high = _per_box(name, boxes, "label_high", n_boxes, float)
        return routed & (numbers >= low[b]) & (numbers <= high[b])
    if kind == "ordered":
        assert codes is not None
        texts = [str(value) for value in spec["values"]]
        rank_of = {text: rank for rank, text in enumerate(texts)}
        sets = _per_box(name, boxes, "label_values", n_boxes, list)
        m = max(len(texts), 1)
        try:
            keys = np.array(
                sorted({box * m + rank_of[str(v)] for box, values in enumerate(sets) for v in values}),
                dtype=np.int64,
            )
        except KeyError as error:
            raise ConfigError(
                f"malformed transformation: a label of '{name}' holds {error}, not one of its values"
            ) from None
        wanted = b * m + np.maximum(codes, 0)
        position = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
        return routed & (keys[position] == wanted if len(keys) else np.zeros(len(wanted), dtype=bool))
    assert hierarchy is not None and codes is not None
    levels = _per_box(name, boxes, "label_level", n_boxes, int)
    released = boxes["released"]
    top = hierarchy.n_levels  # the implicit root above a top level of several nodes
    if not ((levels >= 0) & (levels <= top)).all():
        raise ConfigError(
            f"malformed transformation: a label level of '{name}' is not a level of its hierarchy"
        )
    # A label released as a missing value (None) is a node of the missing value.
    node = np.array(
        [
            0 if level == top else hierarchy.node_of(MISSING_LABEL if label is None else label, level)
            for label, level in zip(released, levels.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    if (levels == top).any() and any(str(released[i]) != TOP_LABEL for i in np.flatnonzero(levels == top)):
        raise ConfigError(
            f"malformed transformation: a label of '{name}' above the top level is not '{TOP_LABEL}'"
        )
    ancestors = np.concatenate(
        [
            np.asarray(hierarchy.codes, dtype=np.int64),
            np.zeros((hierarchy.codes.shape[0], 1), dtype=np.int64),
        ],
        axis=1,
    )
    leaf = np.maximum(codes, 0)
    return routed & (ancestors[leaf, levels[b]] == node[b])


def _per_box(name: str, boxes: Mapping[str, Any], key: str, n_boxes: int, kind: type) -> Any:
    """The column ``key`` of a generalized Mondrian attribute's boxes, one entry per box."""
    column = boxes.get(key)
    if not isinstance(column, list) or len(column) != n_boxes:
        raise ConfigError(
            f"malformed transformation: the boxes of '{name}' do not give one '{key}' per box (what "
            "each box's label covers)"
        )
    if kind is list:
        if not all(isinstance(values, list) for values in column):
            raise ConfigError(f"malformed transformation: every '{key}' of '{name}' must be a list")
        return column
    return np.array([kind(value) for value in column], dtype=np.float64 if kind is float else np.int64)


def export_mondrian(transformation: Mapping[str, Any]) -> list[tuple[str, pl.DataFrame]]:
    """Every attribute's ``box,original,released`` rows, and the region of every box."""
    attributes = transformation["attributes"]
    frames: list[tuple[str, pl.DataFrame]] = []
    regions = {}
    for name in transformation["quasi_identifiers"]:
        frame, region = _mondrian_rows(name, attributes[name])
        frames.append((name, frame))
        regions[name] = region
    n_boxes = int(transformation["boxes"])
    boxes = pl.DataFrame({"box": [str(b) for b in range(n_boxes)]}).with_columns(
        [region.alias(name) for name, region in regions.items()]
    )
    frames.append(("\0boxes", boxes))
    return frames


def _released_texts(released: list[Any]) -> pl.Series:
    if released and all(isinstance(value, int | float) and not isinstance(value, bool) for value in released):
        return value_strings(pl.Series([float(value) for value in released], dtype=pl.Float64))
    return pl.Series([None if value is None else str(value) for value in released], dtype=pl.String)


def _mondrian_rows(name: str, spec: Mapping[str, Any]) -> tuple[pl.DataFrame, pl.Series]:
    """The ``box,original,released`` rows of one attribute and the region text of every box.

    Generalized labels: per box, the original values its label covers (the label's interval, set or
    subtree); centroids: per box, every value of its region (all replaced by the centroid)."""
    boxes = spec["boxes"]
    released = _released_texts(boxes["released"])
    n_boxes = len(released)
    box_ids = np.arange(n_boxes, dtype=np.int64)
    kind = spec["kind"]
    labelled = spec.get("categories") is not None
    if kind == "numeric":
        region = _intervals(boxes["low"], boxes["high"], boxes["low_closed"], boxes["high_closed"])
        if labelled:
            low = _per_box(name, boxes, "label_low", n_boxes, float)
            high = _per_box(name, boxes, "label_high", n_boxes, float)
            interval = _intervals(low.tolist(), high.tolist(), [True] * n_boxes, [True] * n_boxes)
            single = value_strings(pl.Series(low, dtype=pl.Float64))
            original = pl.select(
                pl.when(pl.lit(pl.Series(low == high))).then(pl.lit(single)).otherwise(pl.lit(interval))
            ).to_series()
        else:
            original = region
        rows_box, rows_released = box_ids, released
    elif kind == "ordered":
        values = pl.Series([str(v) for v in spec["values"]], dtype=pl.String)
        rank = {text: r for r, text in enumerate(values.to_list())}
        first = np.array([rank[str(v)] for v in boxes["first"]], dtype=np.int64)
        last = np.array([rank[str(v)] for v in boxes["last"]], dtype=np.int64)
        if labelled:
            sets = _per_box(name, boxes, "label_values", n_boxes, list)
            ranks = [sorted(rank[str(v)] for v in values_of) for values_of in sets]
            sizes = np.array([len(r) for r in ranks], dtype=np.int64)
            rows_box = np.repeat(box_ids, sizes)
            original = values.gather(np.array([r for part in ranks for r in part], dtype=np.int64))
        else:
            sizes = last - first + 1
            rows_box = np.repeat(box_ids, sizes)
            offset = np.arange(len(rows_box)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            original = values.gather(first[rows_box] + offset)
        rows_released = released.gather(rows_box)
        first_text = pl.Series([str(v) for v in boxes["first"]], dtype=pl.String)
        last_text = pl.Series([str(v) for v in boxes["last"]], dtype=pl.String)
        region = pl.select(
            pl.when(pl.lit(first_text) == pl.lit(last_text))
            .then(pl.lit(first_text))
            .otherwise(pl.concat_str([pl.lit(first_text), pl.lit(" .. "), pl.lit(last_text)]))
        ).to_series()
    else:
        rows = spec["hierarchy"]
        n_levels = len(rows[0]) if rows else 1
        # Every leaf with its node at every level, and the implicit root above the top level.
        long = pl.DataFrame(
            {
                "leaf": np.repeat(np.arange(len(rows), dtype=np.int64), n_levels + 1),
                "level": np.tile(np.arange(n_levels + 1, dtype=np.int64), len(rows)),
                "node": [str(label) for row in rows for label in [*row, TOP_LABEL]],
            },
            schema={"leaf": pl.Int64, "level": pl.Int64, "node": pl.String},
        )
        region = pl.Series([str(v) for v in boxes["node"]], dtype=pl.String)
        if labelled:  # the subtree of the label (the lowest common ancestor), inside the region's
            # A label released as a missing value is a node of the missing value.
            level = _per_box(name, boxes, "label_level", n_boxes, int).tolist()
            node = released.fill_null(MISSING_LABEL)
        else:
            level, node = [int(v) for v in boxes["level"]], region
        box_frame = pl.DataFrame(
            {"box": box_ids, "level": level, "node": node},
            schema={"box": pl.Int64, "level": pl.Int64, "node": pl.String},
        )
        members = box_frame.join(long, on=["level", "node"], how="inner").sort("box", "leaf")
        rows_box = members.get_column("box").to_numpy()
        leaves = pl.Series([str(row[0]) for row in rows], dtype=pl.String)
        original = leaves.gather(members.get_column("leaf").to_numpy())
        rows_released = released.gather(rows_box)
    frame = pl.DataFrame(
        {
            "box": pl.Series(np.asarray(rows_box, dtype=np.int64)).cast(pl.String),
            "original": pl.Series(original).cast(pl.String),
            "released": pl.Series(rows_released).cast(pl.String),
        }
    )
    return frame, region.alias(name)


def _intervals(low: list[Any], high: list[Any], low_closed: list[bool], high_closed: list[bool]) -> pl.Series:
    """``[low, high]`` texts, with ``(`` / ``)`` for an open end."""
    low_text = value_strings(pl.Series([float(v) for v in low], dtype=pl.Float64))
    high_text = value_strings(pl.Series([float(v) for v in high], dtype=pl.Float64))
    return interval_labels(low_text, high_text, low_closed, high_closed)


MONDRIAN = Transformation(learn=learn_mondrian, apply=apply_mondrian, export=export_mondrian)
