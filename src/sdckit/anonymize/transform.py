"""Re-applying a learnt transformation to other data with the same schema.

Some methods release every record as a function of that record's own values and of a mapping they
learnt from the data: full-domain generalization (a level per quasi-identifier, looked up in its
hierarchy), top and bottom coding (thresholds and replacement values) and strict Mondrian (a cut tree
whose leaves, the *boxes*, each release one label per quasi-identifier). :func:`transformation_of`
describes that mapping as plain JSON-serializable data; :func:`apply_transformation` applies it to
another table (next year's survey, say) without searching again; :func:`export_mappings` writes it as
plain CSV files, one per attribute (original value → released value), for the documentation data
stewards are asked to keep.

Applied to the data it was learnt from, a transformation reproduces the release exactly: the same
frame (dtypes, Enum categories, values, suppressed cells), so that it writes the same bytes to CSV and
Parquet, and the same ``classes``, ``cell_penalty`` and ``suppressed_cells``. On other data the
privacy models are *not* re-checked or enforced: the release is the learnt mapping, and the caller
checks what it achieves (e.g. with :func:`sdckit.models.check_table`).

The transformation
------------------
A dict (``json.loads(json.dumps(t)) == t``) with the keys ``format`` (2), ``method``,
``quasi_identifiers``, ``dropped`` (columns the release dropped: identifiers), ``parameters`` (those of
the original release) and ``attributes`` (one entry per quasi-identifier), plus, per method:

``"generalize"``
    ``attributes[name]``: ``level`` (the chosen level), ``mapping`` (every leaf of the hierarchy →
    its label at that level), ``categories`` (the released Enum's categories in order: the level's
    labels, then ``*``), ``hierarchy`` (its rows: a leaf, then its label at every level; used for
    the cell penalties, ``Release.hierarchies`` and ``Release.view``) and, when missing values are
    members of the hierarchy, ``missing`` (the choice as the configuration's ``missing`` key spells
    it: ``"leaf"``, ``{"under": NODE}`` or ``"suppress"``; see "Missing values" below).
    ``suppressed``: the generalized
    combinations (one label per quasi-identifier) whose records the search suppressed. Which records
    full-domain generalization suppresses depends on the sizes of the classes in the whole data, so
    it is not a per-record rule; the rule stored instead is "a record whose generalized combination
    is one of the learnt suppressed combinations is suppressed (all its quasi-identifiers ``*``)".
    It reproduces the original release exactly and suppresses nothing else on new data (a new small
    class is released as it is, and shows in the models check).
``"top-bottom-coding"``
    ``attributes[name]``: ``bottom``, ``top`` (thresholds, null when not used), ``bottom_value`` and
    ``top_value`` (what replaces a value below ``bottom`` / above ``top``). Every number is covered.
``"recode"``
    ``attributes[name]``: ``mapping`` (original value as text → released value as text). Values the
    mapping does not list pass through unchanged (as the method releases them), so every value is
    covered.
``"mondrian"`` (strict mode only)
    ``boxes`` (their number) and ``tree``, the cut tree as a list of nodes (node 0 is the whole
    domain): ``{"box": b}`` for a leaf; ``{"attribute": a, "at": m, "children": [left, right]}`` for a
    cut of a numeric attribute (left: ``x <= m``, right: ``x > m``) or of a categorical one without
    hierarchy (``m`` is a value; left: the values sorted at or before it); ``{"attribute": a, "level":
    L, "children": {label: child}}`` for a cut of a hierarchical attribute into the nodes at level ``L``
    that held records. ``attributes[name]`` has ``kind`` (``numeric``, ``ordered`` or ``hierarchy``),
    ``categories`` (the released Enum's categories; null for centroids), the domain (``minimum`` and
    ``maximum`` of a number; ``values``, the sorted distinct values, of an ordered category;
    ``hierarchy`` rows and ``missing`` choice of a hierarchical one) and ``boxes``, columns with one
    entry per box (boxes are
    numbered as the classes of the release): the region the box covers in the cut tree (numbers:
    ``low``, ``low_closed``, ``high``, ``high_closed``; ordered: ``first`` and ``last`` value of a run of
    the sorted values; hierarchy: ``level`` and ``node``, the subtree; the root is the top node, or
    ``*`` at level ``height + 1`` when the top level has several nodes), the ``released`` value (the
    generalized label, or the centroid) and the cell ``penalty`` (NCP); for generalized output also
    what the box's label covers, learnt from the box's original records: ``label_low`` and
    ``label_high`` (numbers: the label ``min-max``, or the single value), ``label_values`` (ordered:
    the set of the records' values, which need not be a run of the sorted values) or ``label_level``
    (hierarchy: the level of the label, the records' lowest common ancestor ``released``). The
    regions of a strict cut tree partition the domain of numbers and ordered values, so a new value in
    the original range lands in exactly one box; a hierarchical cut has a child only for the nodes
    that held records, so a value of the hierarchy may fall in no box next to the record's other
    values.

    A box's label is learnt from its original records (the range, lowest common ancestor or set of
    *their* values), so it need not cover every value of the box's region: 27 landing in a box of
    region ``[25, 30]`` whose records spanned 25 to 26 would be released as ``25-26``, a false value.
    A value of a generalized release must be covered by the label of its box, not only lie in its
    region: ``label_low <= x <= label_high``, ``x`` in ``label_values``, or ``x`` a leaf under the
    label node. A value that is not is uncovered (below). Every original record is covered by
    construction, so the original data is still reproduced exactly. A centroid (``output="centroid"``:
    the mean, or the most frequent value) replaces the value rather than stating it, so centroid
    releases route by region only: every value of a box's region receives its centroid.

    Format 2 added the label extents. Format 1 transformations are still read, except those of
    generalized Mondrian releases, which lack them and are refused (learn them again).

    Relaxed mode is refused: it splits records with equal values by their position, so its classes
    overlap and the class of a new record is not a function of its values.

Example (top and bottom coding)::

    {"format": 2, "method": "top-bottom-coding", "quasi_identifiers": ["income"], "dropped": [],
     "parameters": {...},
     "attributes": {"income": {"bottom": 5, "top": 15, "bottom_value": 5, "top_value": 99}}}

Missing values
--------------
When missing values are members of a hierarchy (:meth:`sdckit.hierarchy.Hierarchy.with_missing`), its
stored rows hold the missing value's row: an empty leaf, and an empty label at every level where it
stays missing (a node of the missing value, released as a missing value: the Enum's null; a box
whose label is such a node stores ``released`` null). The attribute's ``missing`` says how it was
placed, and :func:`apply_transformation` builds the hierarchy again with it: with ``"leaf"`` the row
as stored (it may come from the user's hierarchy file), with ``{"under": NODE}`` and ``"suppress"``
from the other rows, as the method did, which must give back the stored rows. A missing value of the
data then has the missing leaf (it is covered), and with ``"suppress"`` its cell is a suppressed cell,
as in the method's release. A transformation whose rows hold the missing value's row without
``missing`` (learnt before it was recorded), or with a ``missing`` that does not place it so, is
refused as malformed.

Values the transformation does not cover
----------------------------------------
A value not in the hierarchy (generalize, a hierarchical Mondrian attribute), a number outside the
original ``[minimum, maximum]`` or a text that does not read as a number (numeric Mondrian attribute),
a category not among the original values (ordered Mondrian attribute), a hierarchy value in no box,
a value outside the generalized label of its Mondrian box and a missing value (unless missing values
are members of the hierarchy) are *uncovered*. With
``unknown="error"`` they raise :class:`ConfigError` naming each attribute, up to five values and the
number of records (e.g. "attribute 'gifted': 1 value outside the label of their box: 'Yes' (7
records)"). With ``unknown="suppress"`` every record with an uncovered value is suppressed as a whole:
all its quasi-identifiers are suppressed (``*`` for generalize, as its record suppression; null for
Mondrian, whose released dtype has no ``*``), it belongs to no class (``classes`` -1), its cell
penalties are 1, and ``Release.search["unknown"]`` counts, per attribute, the records suppressed for a
value of that attribute. Only suppressing the uncovered cell would release the record's other values
in a class it does not belong to.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize.mondrian import CutTree
from sdckit.anonymize.recoding import SUPPRESSED, top_bottom_release
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError, location
from sdckit.frequency import extend_keys, initial_keys
from sdckit.hierarchy import MISSING_LABEL, TOP_LABEL, Hierarchy
from sdckit.table import Role, Schema, Table, atomic_write, value_strings
from sdckit.utility.base import GeneralizationView

FORMAT = 2
# Formats apply_transformation reads. Format 2 added the extent of every generalized Mondrian label;
# format 1 transformations of generalized Mondrian releases lack it and are refused.
READABLE_FORMATS = (1, 2)
UNKNOWN = ("error", "suppress")
METHODS = ("generalize", "top-bottom-coding", "mondrian", "recode")
_SHOWN = 5

# Why the releases of the other methods cannot be re-applied record by record.
_NOT_REAPPLICABLE = {
    "local-suppression": (
        "which cells it suppresses depends on how rare each combination is in the whole data, not on "
        "each record's own values"
    ),
    "targeted-suppression": "which records it suppresses depends on their risk within the whole data",
    "slicing": "its buckets group and permute records together, so a record's release depends on others",
    "overlapping-slicing": (
        "its buckets group and permute records together, so a record's release depends on others"
    ),
    "record-swap": "which households it swaps depends on their risk and on donors in the whole data",
    "sample": "which records it keeps is a random draw over the whole data, not a rule per record",
    "pseudonymize": (
        "its random ids and household numbers are drawn over the whole data (run it again with the "
        "same key instead)"
    ),
    "quasi-sensitive": (
        "what it releases for a record depends on the other records of its group, not only on the "
        "record's own values"
    ),
}
_RELAXED = (
    "mondrian in relaxed mode cannot be re-applied to other data: its cuts split records with equal "
    "values by their position, so its classes overlap and the class of a new record is not a function "
    "of its values; use mode strict"
)


# ------------------------------------------------------------------------------------------------
# Describing a release's transformation


def transformation_of(release: Release) -> dict[str, Any]:
    """The learnt transformation of ``release``, as JSON-serializable data.

    Parameters
    ----------
    release
        A release of :func:`~sdckit.anonymize.recoding.full_domain_generalization`,
        :func:`~sdckit.anonymize.recoding.top_bottom_coding` or strict-mode
        :func:`~sdckit.anonymize.mondrian.mondrian`.

    Returns
    -------
    dict
        ``{"format": 2, "method": ..., "quasi_identifiers": [...], "dropped": [...], "parameters":
        {...}, "attributes": {...}}`` plus ``suppressed`` (generalize) or ``boxes`` and ``tree``
        (Mondrian); see the module documentation for every key. Only lists, dicts, strings, numbers,
        booleans and nulls, so ``json.loads(json.dumps(t)) == t``.

    Raises
    ------
    ConfigError
        For releases of methods whose output for a record depends on other records (local and
        targeted suppression, slicing, quasi-sensitive anonymization, relaxed Mondrian), naming the
        method and why.
    """
    method = release.method
    if method == "generalize":
        body = _generalize_transformation(release)
    elif method == "top-bottom-coding":
        body = _top_bottom_transformation(release)
    elif method == "mondrian":
        body = _mondrian_transformation(release)
    elif method == "recode":
        body = {
            "attributes": {
                name: {"mapping": dict(mapping)} for name, mapping in release.parameters["mapping"].items()
            }
        }
    else:
        reason = _NOT_REAPPLICABLE.get(
            method,
            "only full-domain generalization, top and bottom coding, global recoding and strict Mondrian "
            "can be",
        )
        raise ConfigError(f"a {method} release cannot be re-applied to other data: {reason}")
    kept = set(release.table.data.columns)
    header = {
        "format": FORMAT,
        "method": method,
        "quasi_identifiers": list(release.quasi_identifiers),
        "dropped": [name for name in release.original.data.columns if name not in kept],
        "parameters": _plain(release.parameters),
    }
    return {**header, **body}


def _generalize_transformation(release: Release) -> dict[str, Any]:
    if release.levels is None:
        raise ConfigError("this generalize release has no levels to re-apply")
    names = list(release.quasi_identifiers)
    attributes = {}
    category_columns = {}
    for name in names:
        hierarchy = release.hierarchies[name]
        level = int(release.levels[name])
        labels = np.array(hierarchy.labels[level], dtype=object)
        categories = list(hierarchy.labels[level])
        if SUPPRESSED not in categories:
            categories.append(SUPPRESSED)
        released = labels[hierarchy.codes[:, level]].tolist()
        attributes[name] = {
            "level": level,
            "mapping": dict(zip(hierarchy.labels[0], released, strict=True)),
            "categories": categories,
            "hierarchy": _hierarchy_rows(hierarchy),
            **_missing_entry(hierarchy),
        }
        leaves = hierarchy.leaf_codes(release.original.column(name))
        nodes = hierarchy.codes[leaves[release.suppressed_records], level]
        category_columns[name] = pl.Series(name, labels[nodes].tolist(), dtype=pl.String)
    suppressed = pl.DataFrame(category_columns).unique(maintain_order=True).rows()
    return {"attributes": attributes, "suppressed": [list(row) for row in suppressed]}


def _top_bottom_transformation(release: Release) -> dict[str, Any]:
    parameters = release.parameters
    bottom, top = parameters["bottom"], parameters["top"]
    spec = {
        "bottom": _plain(bottom),
        "top": _plain(top),
        "bottom_value": _plain(parameters.get("bottom_value", bottom)),
        "top_value": _plain(parameters.get("top_value", top)),
    }
    return {"attributes": {parameters["attribute"]: spec}}


def _mondrian_transformation(release: Release) -> dict[str, Any]:
    if release.parameters.get("mode") == "relaxed":
        raise ConfigError(_RELAXED)
    tree = release.search.get("boxes")
    if not isinstance(tree, CutTree):
        raise ConfigError("this mondrian release has no cut tree (search['boxes']) to re-apply")
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
            offsets = np.cumsum([0] + [len(labels) for labels in dimension.node_labels])
            all_labels = np.array(
                [label for labels in dimension.node_labels for label in labels], dtype=object
            )
            boxes = {"level": level.tolist(), "node": all_labels[offsets[level] + node].tolist()}
        boxes["released"] = released_list
        if generalized:
            boxes.update(_label_extents(dimension, classes, order, starts, n_boxes))
        boxes["penalty"] = tree.penalty[:, j].tolist()
        spec["boxes"] = boxes
        attributes[dimension.name] = spec
    return {
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
        j = tree.attribute[parent]
        at = tree.at[parent]
        split = ~hierarchical[j]
        left = split & (offset == 0)
        right = split & (offset == 1)
        highs[children[left], j[left]] = at[left]
        lows[children[right], j[right]] = at[right] + 1
        cut = ~split
        levels[children[cut], j[cut]] = at[cut]
        nodes[children[cut], j[cut]] = tree.key[children[cut]]
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
            labels = dimension.node_labels[at]
            keyed = {labels[int(tree.key[child])]: child for child in children}
            result.append({"attribute": dimension.name, "level": at, "children": keyed})
    return result


def _hierarchy_rows(hierarchy: Hierarchy | None) -> list[list[str]]:
    if hierarchy is None:  # pragma: no cover - a hierarchy dimension always has one
        raise ConfigError("a hierarchical attribute has no hierarchy")
    columns = [
        np.array(hierarchy.labels[level], dtype=object)[hierarchy.codes[:, level]].tolist()
        for level in range(hierarchy.n_levels)
    ]
    return [list(row) for row in zip(*columns, strict=True)]


def _number(value: Any) -> int | float:
    """A number as JSON writes it plainly: whole floats as integers (exact below 2**53)."""
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return int(number)
    return number


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and numpy scalars and arrays as Python values."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------------------------
# Applying a transformation


def apply_transformation(
    table: Table, transformation: Mapping[str, Any], *, unknown: str = "error"
) -> Release:
    """Apply a learnt transformation to ``table``, a table with the schema it was learnt on.

    Parameters
    ----------
    table
        The data; its quasi-identifiers must be columns (other columns pass through unchanged, and
        identifiers, those of ``table``'s schema and those the original release dropped, are dropped
        as the methods do).
    transformation
        From :func:`transformation_of`, possibly after a JSON round trip (format 2, or format 1 except
        for generalized Mondrian).
    unknown
        ``"error"``: values the transformation does not cover raise :class:`ConfigError`;
        ``"suppress"``: the records holding them are suppressed and counted in
        ``Release.search["unknown"]`` (see the module documentation).

    Returns
    -------
    Release
        As the method would have made it: same dtypes, labels, suppressed cells, ``classes`` numbered
        as the method numbers them (generalize: by first appearance of the generalized combination,
        suppressed ones included; Mondrian: by first record of each box), ``cell_penalty`` and
        ``suppressed_cells``. ``parameters`` are the original release's with ``"applied": True``;
        ``search["unknown"]`` counts suppressed records per attribute. Generalize also fills
        ``levels``, ``hierarchies`` and ``view`` (over the records with covered values, counted
        without sampling weights); Mondrian ``search["record_boxes"]``, the box of every record (-1
        when suppressed).

    Raises
    ------
    ConfigError
        For a malformed transformation, a quasi-identifier that is not a column, or (with
        ``unknown="error"``) uncovered values, naming the attribute and the values.
    """
    if unknown not in UNKNOWN:
        raise ConfigError(f"unknown must be one of {', '.join(UNKNOWN)}, got {unknown!r}")
    if not isinstance(transformation, Mapping):
        raise ConfigError(f"a transformation must be a mapping, got {type(transformation).__name__}")
    _check_format(transformation)
    method = transformation.get("method")
    if method not in METHODS:
        raise ConfigError(f"cannot apply a transformation of method {method!r} (known: {', '.join(METHODS)})")
    names = list(_field(transformation, "quasi_identifiers", list))
    attributes = _field(transformation, "attributes", Mapping)
    for name in names:
        if name not in attributes:
            raise ConfigError(
                f"malformed transformation: quasi-identifier '{name}' has no entry in attributes"
            )
        if name not in table.data.columns:
            raise ConfigError(
                f"{location(table.source)}quasi-identifier '{name}' of the transformation is not a column "
                f"of the data (columns: {', '.join(table.data.columns)})"
            )
    try:
        if method == "generalize":
            return _apply_generalize(table, transformation, names, unknown)
        if method == "top-bottom-coding":
            return _apply_top_bottom(table, transformation, names)
        if method == "recode":
            return _apply_recode(table, transformation, names)
        return _apply_mondrian(table, transformation, names, unknown)
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ConfigError(f"malformed {method} transformation: {type(error).__name__}: {error}") from None


def _check_format(transformation: Mapping[str, Any]) -> None:
    """Refuse formats this sdckit does not read, and format 1 transformations of generalized Mondrian
    releases (they do not record what each box's labels cover)."""
    version = transformation.get("format")
    if isinstance(version, bool) or version not in READABLE_FORMATS:
        raise ConfigError(
            f"unsupported transformation format {version!r} "
            f"(this sdckit reads {', '.join(str(v) for v in READABLE_FORMATS)})"
        )
    if version != 1 or transformation.get("method") != "mondrian":
        return
    attributes = transformation.get("attributes")
    if isinstance(attributes, Mapping) and any(
        isinstance(spec, Mapping) and spec.get("categories") is not None for spec in attributes.values()
    ):
        raise ConfigError(
            "this is a format 1 transformation of a generalized mondrian release: it does not record what "
            "each box's labels cover, so it would release new values under labels that do not cover "
            f"them; learn it again with this sdckit (format {FORMAT}): run sdckit anonymize mondrian "
            "with --summary again"
        )


def _field(mapping: Mapping[str, Any], key: str, kind: type) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise ConfigError(f"malformed transformation: '{key}' must be a {kind.__name__}, got {value!r}")
    return value


def _dropped(table: Table, transformation: Mapping[str, Any]) -> list[str]:
    """The columns a generalize or Mondrian release drops: the stored ones and ``table``'s identifiers."""
    stored = set(transformation.get("dropped") or [])
    identifiers = {a.name for a in table.schema.with_role(Role.IDENTIFIER)}
    return [name for name in table.data.columns if name in stored or name in identifiers]


def _released_table(table: Table, columns: list[pl.Series], dropped: list[str]) -> Table:
    released = table.data.with_columns(columns).drop(dropped)
    gone = set(dropped)
    schema = Schema(tuple(a for a in table.schema.attributes if a.name not in gone))
    return Table(released, schema, source=table.source)


def _uncovered(table: Table, problems: list[tuple[str, np.ndarray, str]]) -> ConfigError:
    """One error naming every attribute with uncovered values: up to five values and the records."""
    parts = []
    for name, mask, what in problems:
        column = table.column(name).filter(pl.Series(mask))
        present = column.drop_nulls()
        if present.dtype.is_numeric() or present.dtype.is_temporal():
            shown = value_strings(present.unique().sort()).to_list()
        else:
            shown = value_strings(present).unique().sort().to_list()
        items = [f"'{value}'" for value in shown]
        if column.null_count():
            items.append("missing")
        count = len(items)
        listing = ", ".join(items[:_SHOWN]) + (", …" if count > _SHOWN else "")
        records = int(np.count_nonzero(mask))
        parts.append(
            f"attribute '{name}': {count} value{'s' if count != 1 else ''} {what}: {listing} "
            f"({records} record{'s' if records != 1 else ''})"
        )
    return ConfigError(
        f"{location(table.source)}the learnt transformation does not cover every value: "
        + "; ".join(parts)
        + "; apply with unknown='suppress' to suppress those records instead"
    )


def _missing_entry(hierarchy: Hierarchy | None) -> dict[str, Any]:
    """``{"missing": choice}`` when missing values are members of ``hierarchy``, the choice spelt as
    the configuration's ``missing`` key (``"leaf"``, ``{"under": NODE}``, ``"suppress"``); else
    nothing."""
    if hierarchy is None or hierarchy.missing is None:
        return {}
    if hierarchy.missing != "under":
        return {"missing": hierarchy.missing}
    # The node is the missing leaf's lowest ancestor that is not a node of the missing value.
    leaf = hierarchy.missing_leaf
    assert leaf is not None
    node = next(
        hierarchy.labels[level][hierarchy.codes[leaf, level]]
        for level in range(1, hierarchy.n_levels)
        if hierarchy.labels[level][hierarchy.codes[leaf, level]] != MISSING_LABEL
    )
    return {"missing": {"under": node}}


def _hierarchy(name: str, rows: Sequence[Sequence[str]], missing: Any = None) -> Hierarchy:
    """The hierarchy stored as rows (a leaf, then its label at every level), with missing values
    members of it as ``missing`` says (a choice of the configuration's ``missing`` key, or None).

    The rows of such a hierarchy hold the missing value's own row: an empty leaf, and an empty label
    at every level where it stays missing. With ``"leaf"`` that row is the missing value's leaf as
    it stands (it may come from the user's hierarchy file); with ``{"under": NODE}`` and
    ``"suppress"`` the hierarchy is built again from the other rows as the method built it, and must
    give back the stored rows."""
    text_rows = [[str(label) for label in row] for row in rows]
    if missing is None:
        if any(row and row[0] == MISSING_LABEL for row in text_rows):
            raise ConfigError(
                f"malformed transformation: the hierarchy of '{name}' has a row for the missing value "
                "but the transformation does not say how missing values are members of it (its "
                "'missing' key); learn the transformation again with this sdckit"
            )
        return Hierarchy.from_rows(name, text_rows, source="transformation")
    if missing == "leaf":
        stored = Hierarchy.from_rows(name, text_rows, source="transformation", missing_values=())
        if stored.missing_leaf is None and MISSING_LABEL not in stored.labels[0]:
            raise ConfigError(
                f"malformed transformation: missing of '{name}' is 'leaf' but its hierarchy has no row "
                "for the missing value"
            )
        return stored.with_missing("leaf")
    if not (missing == "suppress" or (isinstance(missing, Mapping) and set(missing) == {"under"})):
        raise ConfigError(
            f"malformed transformation: missing of '{name}' must be 'leaf', 'suppress' or "
            f"{{'under': NODE}}, got {missing!r}"
        )
    values = [row for row in text_rows if row and row[0] != MISSING_LABEL]
    rebuilt = Hierarchy.from_rows(name, values, source="transformation").with_missing(missing)
    if _hierarchy_rows(rebuilt) != text_rows:
        raise ConfigError(
            f"malformed transformation: the hierarchy of '{name}' does not place the missing value as "
            f"its missing {missing!r} does"
        )
    return rebuilt


def _leaves_of(column: pl.Series, hierarchy: Hierarchy) -> np.ndarray:
    """The leaf of every record, matched as text as :meth:`Hierarchy.leaf_codes` does (-1: uncovered).
    A missing value has the missing leaf when missing values are members of ``hierarchy``."""
    coded = value_strings(column).cast(pl.Enum(list(hierarchy.labels[0])), strict=False)
    leaves = np.array(coded.to_physical().cast(pl.Int64).fill_null(-1).to_numpy(), dtype=np.int64)
    if hierarchy.missing_leaf is not None:
        leaves[column.is_null().to_numpy()] = hierarchy.missing_leaf
    return leaves


def _apply_generalize(
    table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str
) -> Release:
    attributes = transformation["attributes"]
    n, q = table.n_records, len(names)
    hierarchies, levels, categories_of = [], [], []
    leaves = np.empty((n, q), dtype=np.int64)
    categories = np.empty((n, q), dtype=np.int64)
    penalty = np.empty((n, q), dtype=np.float64)
    problems = []
    for j, name in enumerate(names):
        spec = attributes[name]
        hierarchy = _hierarchy(name, spec["hierarchy"], spec.get("missing"))
        level = int(spec["level"])
        if not 0 <= level < hierarchy.n_levels:
            raise ConfigError(
                f"malformed transformation: level {level} of '{name}' is not a level of its hierarchy"
            )
        category_list = [str(label) for label in spec["categories"]]
        mapping = spec["mapping"]
        missing = [leaf for leaf in hierarchy.labels[0] if leaf not in mapping]
        if missing:
            raise ConfigError(
                f"malformed transformation: the mapping of '{name}' does not list '{missing[0]}'"
            )
        released = pl.Series([str(mapping[leaf]) for leaf in hierarchy.labels[0]], dtype=pl.String)
        expected = np.array(hierarchy.labels[level], dtype=object)[hierarchy.codes[:, level]]
        disagree = np.flatnonzero(released.to_numpy().astype(object) != expected)
        if disagree.size:
            row = int(disagree[0])
            raise ConfigError(
                f"malformed transformation: the mapping of '{name}' sends '{hierarchy.labels[0][row]}' to "
                f"'{released[row]}' but its hierarchy at level {level} to '{expected[row]}'"
            )
        leaf_category = released.cast(pl.Enum(category_list), strict=False)
        if leaf_category.null_count() or SUPPRESSED not in category_list:
            raise ConfigError(
                f"malformed transformation: the categories of '{name}' do not list every label of its "
                "mapping and '*'"
            )
        leaf = _leaves_of(table.column(name), hierarchy)
        covered = leaf >= 0
        if not covered.all():
            problems.append((name, ~covered, "not in its hierarchy"))
        safe = np.where(covered, leaf, 0)
        leaves[:, j] = leaf
        categories[:, j] = np.where(
            covered, leaf_category.to_physical().to_numpy().astype(np.int64)[safe], -1
        )
        penalty[:, j] = hierarchy.ncp(level)[hierarchy.codes[safe, level]]
        hierarchies.append(hierarchy)
        levels.append(level)
        categories_of.append(category_list)
    unknown_records = (leaves < 0).any(axis=1)
    if problems and unknown == "error":
        raise _uncovered(table, problems)
    known = ~unknown_records

    # The learnt suppressed combinations, matched on category codes.
    combinations = transformation.get("suppressed") or []
    coded = {}
    for j, name in enumerate(names):
        labels = pl.Series([str(row[j]) for row in combinations], dtype=pl.String)
        codes = labels.cast(pl.Enum(categories_of[j]), strict=False)
        if codes.null_count():
            raise ConfigError(
                f"malformed transformation: a suppressed combination has a label of '{name}' that is not "
                "one of its categories"
            )
        coded[f"q{j}"] = codes.to_physical().cast(pl.Int64)
    if combinations:
        flags = pl.DataFrame(coded).unique().with_columns(pl.lit(True).alias("suppressed"))
        records = pl.DataFrame({f"q{j}": categories[:, j] for j in range(q)})
        joined = records.join(flags, on=list(coded), how="left", maintain_order="left")
        learnt = joined.get_column("suppressed").is_not_null().to_numpy() & known
    else:
        learnt = np.zeros(n, dtype=bool)
    suppressed = learnt | unknown_records

    # Classes: dense, by first appearance of the generalized combination among the covered records.
    dense = np.full(n, -1, dtype=np.int64)
    keys, sizes = initial_keys(int(np.count_nonzero(known)))
    for j in range(q):
        keys, sizes = extend_keys(keys, sizes, categories[known, j].astype(np.int32), len(categories_of[j]))
    dense[known] = keys
    classes = np.where(suppressed, -1, dense)

    columns = []
    suppressed_cells = np.repeat(suppressed[:, None], q, axis=1)
    for j, name in enumerate(names):
        # A node of the missing value (an empty label) is released as a missing value, the Enum's
        # null, as the method releases it: the Enum lists the other categories.
        listed = [label for label in categories_of[j] if label != MISSING_LABEL]
        values = [None if label == MISSING_LABEL else label for label in categories_of[j]]
        labels = pl.Series(name, values, dtype=pl.Enum(listed))
        codes = np.where(suppressed, categories_of[j].index(SUPPRESSED), categories[:, j])
        columns.append(labels.gather(codes))
        if hierarchies[j].missing == "suppress":
            # A missing value suppressed from the start is a suppressed cell, as in the method.
            suppressed_cells[:, j] |= leaves[:, j] == hierarchies[j].missing_leaf
    penalty[suppressed] = 1.0
    view = _generalization_view(names, hierarchies, levels, leaves[known], dense[known], suppressed[known])
    parameters = {**transformation.get("parameters", {}), "applied": True}
    return Release(
        table=_released_table(table, columns, _dropped(table, transformation)),
        original=table,
        method="generalize",
        parameters=parameters,
        quasi_identifiers=tuple(names),
        suppressed_records=suppressed,
        classes=classes,
        levels=dict(zip(names, levels, strict=True)),
        hierarchies=dict(zip(names, hierarchies, strict=True)),
        view=view,
        search={
            "unknown": {name: int(np.count_nonzero(leaves[:, j] < 0)) for j, name in enumerate(names)},
            "learnt_suppressed": int(np.count_nonzero(learnt)),
        },
        cell_penalty=penalty,
        suppressed_cells=suppressed_cells,
    )


def _generalization_view(
    names: list[str],
    hierarchies: list[Hierarchy],
    levels: list[int],
    leaves: np.ndarray,
    classes: np.ndarray,
    suppressed: np.ndarray,
) -> GeneralizationView:
    """The distinct-combination view the utility metrics read, over the covered records."""
    keys, sizes = initial_keys(len(leaves))
    for j, hierarchy in enumerate(hierarchies):
        keys, sizes = extend_keys(keys, sizes, leaves[:, j].astype(np.int32), hierarchy.n_leaves)
    representative = np.zeros(len(sizes), dtype=np.int64)
    representative[keys] = np.arange(len(keys), dtype=np.int64)
    n_classes = int(classes.max()) + 1 if len(classes) else 0
    return GeneralizationView(
        quasi_identifiers=tuple(names),
        hierarchies=tuple(hierarchies),
        levels=tuple(levels),
        leaf_codes=leaves[representative].astype(np.int32).reshape(len(sizes), len(names)),
        counts=np.bincount(keys, minlength=len(sizes)).astype(np.float64),
        classes=classes[representative].astype(np.int32),
        n_classes=n_classes,
        suppressed=suppressed[representative],
    )


def _apply_top_bottom(table: Table, transformation: Mapping[str, Any], names: list[str]) -> Release:
    if len(names) != 1:
        raise ConfigError("malformed transformation: top and bottom coding codes one attribute")
    attribute = names[0]
    spec = transformation["attributes"][attribute]
    column = table.column(attribute)
    if not column.dtype.is_numeric():
        raise ConfigError(
            f"{location(table.source)}top and bottom coding needs a numeric attribute; "
            f"'{attribute}' is {column.dtype}"
        )
    bottom, top = spec["bottom"], spec["top"]
    bottom_value, top_value = spec["bottom_value"], spec["top_value"]
    return top_bottom_release(table, attribute, bottom, top, bottom_value, top_value, applied=True)


def _apply_recode(table: Table, transformation: Mapping[str, Any], names: list[str]) -> Release:
    from sdckit.anonymize.sampling import recode

    mapping = {}
    for name in names:
        values = transformation["attributes"][name]["mapping"]
        if not isinstance(values, Mapping):
            raise ConfigError(f"malformed transformation: the mapping of '{name}' must be a mapping")
        mapping[name] = {str(source): str(target) for source, target in values.items()}
    release = recode(table, mapping)
    dropped = [name for name in _dropped(table, transformation) if name in release.table.data.columns]
    return dataclasses.replace(
        release,
        table=_released_table(release.table, [], dropped),
        parameters={**release.parameters, "applied": True},
    )


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


def _apply_mondrian(
    table: Table, transformation: Mapping[str, Any], names: list[str], unknown: str
) -> Release:
    attributes = transformation["attributes"]
    n, q = table.n_records, len(names)
    n_boxes = int(transformation["boxes"])
    kinds = [attributes[name]["kind"] for name in names]
    for name, kind in zip(names, kinds, strict=True):
        if kind not in ("numeric", "ordered", "hierarchy"):
            raise ConfigError(f"malformed transformation: unknown kind {kind!r} of '{name}'")
    # Every record's value per attribute: numbers, ranks of ordered values, hierarchy leaves.
    numbers: list[np.ndarray | None] = [None] * q
    codes: list[np.ndarray | None] = [None] * q
    hierarchies: dict[str, Hierarchy] = {}
    hierarchy_list: list[Hierarchy | None] = [None] * q
    value_rank: list[dict[str, int] | None] = [None] * q
    problems = []
    covered = np.ones((n, q), dtype=bool)
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
            numbers[j] = np.where(ok, x, 0.0)
            what = f"outside the original range [{spec['minimum']}, {spec['maximum']}] or not numbers"
        elif kinds[j] == "ordered":
            texts = [str(value) for value in spec["values"]]
            value_rank[j] = {text: rank for rank, text in enumerate(texts)}
            ranks = value_strings(_category_values(column)).cast(pl.Enum(texts), strict=False)
            rank = np.array(ranks.to_physical().cast(pl.Int64).fill_null(-1).to_numpy(), dtype=np.int64)
            ok = rank >= 0
            codes[j] = rank
            what = "not among the original values"
        else:
            hierarchy = _hierarchy(name, spec["hierarchy"], spec.get("missing"))
            hierarchies[name] = hierarchy
            hierarchy_list[j] = hierarchy
            leaf = _leaves_of(column, hierarchy)
            ok = leaf >= 0
            codes[j] = leaf
            what = "not in its hierarchy"
        covered[:, j] = ok
        if not ok.all():
            problems.append((name, ~ok, what))

    # The cut tree as arrays (a loop over its nodes, not over records).
    nodes = _field(transformation, "tree", list)
    count = len(nodes)
    attribute = np.full(count, -1, dtype=np.int64)
    box = np.full(count, -1, dtype=np.int64)
    threshold = np.zeros(count, dtype=np.float64)
    level_at = np.zeros(count, dtype=np.int64)
    left = np.full(count, -1, dtype=np.int64)
    right = np.full(count, -1, dtype=np.int64)
    widest = max([max(len(labels) for labels in h.labels) for h in hierarchies.values()] or [1])
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
            hierarchy = hierarchy_list[j]
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
                rank_of = value_rank[j]
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

    # Route the covered records down the tree, one depth at a time.
    current = np.zeros(n, dtype=np.int64)
    stuck = np.zeros(n, dtype=bool)
    routed_off = np.zeros((n, q), dtype=bool)
    active = np.flatnonzero(covered.all(axis=1))
    while active.size:
        here = current[active]
        cut = attribute[here]
        inner = cut >= 0
        active, here, cut = active[inner], here[inner], cut[inner]
        if not active.size:
            break
        for j in np.unique(cut).tolist():
            chosen = cut == j
            records, at_node = active[chosen], here[chosen]
            if kinds[j] == "numeric":
                values = numbers[j]
                assert values is not None
                go_left = values[records] <= threshold[at_node]
                current[records] = np.where(go_left, left[at_node], right[at_node])
            elif kinds[j] == "ordered":
                ranks_j = codes[j]
                assert ranks_j is not None
                go_left = ranks_j[records] <= threshold[at_node]
                current[records] = np.where(go_left, left[at_node], right[at_node])
            else:
                hierarchy = hierarchy_list[j]
                leaves_j = codes[j]
                assert hierarchy is not None and leaves_j is not None
                keys = at_node * widest + hierarchy.codes[leaves_j[records], level_at[at_node]]
                position = np.minimum(np.searchsorted(sorted_keys, keys), max(len(sorted_keys) - 1, 0))
                found = sorted_keys[position] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
                current[records[found]] = sorted_children[position[found]]
                stuck[records[~found]] = True
                routed_off[records[~found], j] = True
        active = active[~stuck[active]]
    for j, name in enumerate(names):
        if routed_off[:, j].any():
            problems.append((name, routed_off[:, j], "in no learnt box (next to the record's other values)"))
    routed = ~(~covered | routed_off).any(axis=1)
    routed_box = np.where(routed, box[current], -1)
    if (routed_box[routed] < 0).any():
        raise ConfigError("malformed transformation: a path of the cut tree ends without a box")
    # A generalized label states a value: the record's value must be under it, not only in the
    # box's region (a box's label is learnt from its original records).
    outside = np.zeros((n, q), dtype=bool)
    for j, name in enumerate(names):
        if attributes[name].get("categories") is None:
            continue  # a centroid replaces the value; it makes no claim about it
        outside[:, j] = routed & ~_label_covers(
            name,
            attributes[name],
            kinds[j],
            routed_box,
            n_boxes,
            numbers[j],
            codes[j],
            hierarchy_list[j],
        )
        if outside[:, j].any():
            problems.append((name, outside[:, j], "outside the label of their box"))
    unknown_cells = ~covered | routed_off | outside
    suppressed = unknown_cells.any(axis=1)
    if problems and unknown == "error":
        raise _uncovered(table, problems)
    record_box = np.where(suppressed, -1, routed_box)

    # Classes by first record of each box.
    classes = np.full(n, -1, dtype=np.int64)
    kept = np.flatnonzero(~suppressed)
    boxes_used, first = np.unique(record_box[kept], return_index=True)
    rank = np.empty(len(boxes_used), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(boxes_used))
    classes[kept] = rank[np.searchsorted(boxes_used, record_box[kept])]

    if suppressed.any():
        index = pl.select(
            pl.when(pl.lit(pl.Series(~suppressed))).then(pl.lit(pl.Series(record_box)))
        ).to_series()
    else:
        index = record_box
    columns = []
    penalty = np.empty((n, q), dtype=np.float64)
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
    suppressed_cells = np.repeat(suppressed[:, None], q, axis=1) if suppressed.any() else None
    for j, hierarchy in enumerate(hierarchy_list):
        if hierarchy is not None and hierarchy.missing == "suppress":
            # A missing value suppressed from the start is a suppressed cell, as in the method.
            if suppressed_cells is None:
                suppressed_cells = np.zeros((n, q), dtype=bool)
            leaves_j = codes[j]
            assert leaves_j is not None
            suppressed_cells[:, j] |= leaves_j == hierarchy.missing_leaf
    parameters = {**transformation.get("parameters", {}), "partitions": len(boxes_used), "applied": True}
    return Release(
        table=_released_table(table, columns, _dropped(table, transformation)),
        original=table,
        method="mondrian",
        parameters=parameters,
        quasi_identifiers=tuple(names),
        suppressed_records=suppressed,
        classes=classes,
        hierarchies=hierarchies,
        search={
            "partitions": len(boxes_used),
            "unknown": {name: int(np.count_nonzero(unknown_cells[:, j])) for j, name in enumerate(names)},
            "record_boxes": record_box,
        },
        cell_penalty=penalty,
        suppressed_cells=suppressed_cells,
    )


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


# ------------------------------------------------------------------------------------------------
# Exporting the mappings as CSV


def export_mappings(transformation: Mapping[str, Any], directory: str | Path) -> list[Path]:
    """Write the learnt mapping as plain CSV files, one per attribute, into ``directory``.

    Every file is written atomically (:func:`sdckit.table.atomic_write`); ``directory`` is created if
    needed. A file is named after its attribute (characters other than letters, digits, ``.``, ``_``
    and ``-`` become ``_``; a clash with another file gets ``_2``, ``_3``, ...). All fields are text.

    * generalize: ``ATTRIBUTE.csv`` with ``original,released``, one row per leaf of the hierarchy, and
      ``suppressed.csv`` with one column per quasi-identifier and one row per learnt suppressed
      generalized combination (records with it are released as ``*``).
    * top and bottom coding: ``ATTRIBUTE.csv`` with ``original,released``: ``<bottom`` →
      ``bottom_value``, ``>top`` → ``top_value``, and the range in between → ``unchanged``.
    * global recoding: ``ATTRIBUTE.csv`` with ``original,released``, one row per listed value (other
      values are released unchanged).
    * Mondrian: ``ATTRIBUTE.csv`` with ``box,original,released`` (a value is released differently in
      different boxes): per box, the original values its generalized label covers, so that every row
      is a true statement: the label's interval (numbers, as ``[low, high]``, or the single value),
      every value of its set (ordered categories) or every leaf under the label node (hierarchies).
      A value of the box's region outside its label is uncovered (not released), so it is not
      listed. For centroid output, the whole region of the box (numbers as ``[low, high]`` with ``(``
      for an open end, every value of its run, every leaf of its subtree), all replaced by the
      centroid. And ``boxes.csv``: ``box`` and the region of every box on every quasi-identifier
      (interval, ``first .. last`` run of sorted values, or hierarchy node), which routes records to
      boxes.

    Returns
    -------
    list of Path
        The files written, in the order above.
    """
    _check_format(transformation)
    method = transformation.get("method")
    if method not in METHODS:
        raise ConfigError(f"cannot export a transformation of method {method!r}")
    names = list(transformation["quasi_identifiers"])
    attributes = transformation["attributes"]
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    reserved = {"generalize": ["suppressed"], "mondrian": ["boxes"]}.get(method, [])
    file_names = _file_names(names, reserved)
    frames: list[tuple[str, pl.DataFrame]] = []
    if method == "generalize":
        for name in names:
            mapping = attributes[name]["mapping"]
            frame = pl.DataFrame(
                {"original": list(mapping), "released": [str(label) for label in mapping.values()]},
                schema={"original": pl.String, "released": pl.String},
            )
            frames.append((file_names[name], frame))
        rows = transformation.get("suppressed") or []
        suppressed = pl.DataFrame(
            {name: [str(row[j]) for row in rows] for j, name in enumerate(names)},
            schema=dict.fromkeys(names, pl.String),
        )
        frames.append((file_names["\0suppressed"], suppressed))
    elif method == "top-bottom-coding":
        for name in names:
            frames.append((file_names[name], _top_bottom_rows(attributes[name])))
    elif method == "recode":
        for name in names:
            mapping = attributes[name]["mapping"]
            frame = pl.DataFrame(
                {"original": [str(v) for v in mapping], "released": [str(v) for v in mapping.values()]},
                schema={"original": pl.String, "released": pl.String},
            )
            frames.append((file_names[name], frame))
    else:
        regions = {}
        for name in names:
            frame, region = _mondrian_rows(name, attributes[name])
            frames.append((file_names[name], frame))
            regions[name] = region
        n_boxes = int(transformation["boxes"])
        boxes = pl.DataFrame({"box": [str(b) for b in range(n_boxes)]}).with_columns(
            [region.alias(name) for name, region in regions.items()]
        )
        frames.append((file_names["\0boxes"], boxes))
    written = []
    for file_name, frame in frames:
        path = target / f"{file_name}.csv"
        with atomic_write(path) as temporary:
            frame.write_csv(temporary)
        written.append(path)
    return written


def _file_names(names: list[str], reserved: list[str]) -> dict[str, str]:
    """File name (without .csv) of every attribute, and of every extra file under its name prefixed
    with a NUL character: safe characters only, distinct ignoring case; extra files keep their names."""
    used: set[str] = set()
    result = {}
    for key in [*("\0" + name for name in reserved), *names]:
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", key.lstrip("\0")).strip("._") or "attribute"
        candidate, suffix = base, 2
        while candidate.lower() in used:
            candidate, suffix = f"{base}_{suffix}", suffix + 1
        used.add(candidate.lower())
        result[key] = candidate
    return result


def _number_text(value: Any) -> str:
    return str(value_strings(pl.Series([float(value)], dtype=pl.Float64))[0])


def _top_bottom_rows(spec: Mapping[str, Any]) -> pl.DataFrame:
    bottom, top = spec.get("bottom"), spec.get("top")
    original, released = [], []
    if bottom is not None:
        original.append(f"<{_number_text(bottom)}")
        released.append(_number_text(spec["bottom_value"]))
    if top is not None:
        original.append(f">{_number_text(top)}")
        released.append(_number_text(spec["top_value"]))
    if bottom is not None and top is not None:
        original.append(f"[{_number_text(bottom)}, {_number_text(top)}]")
    elif bottom is not None:
        original.append(f">={_number_text(bottom)}")
    else:
        original.append(f"<={_number_text(top)}")
    released.append("unchanged")
    return pl.DataFrame(
        {"original": original, "released": released}, schema={"original": pl.String, "released": pl.String}
    )


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
    opening = pl.Series(["[" if closed else "(" for closed in low_closed], dtype=pl.String)
    closing = pl.Series(["]" if closed else ")" for closed in high_closed], dtype=pl.String)
    return pl.select(
        pl.concat_str([pl.lit(opening), pl.lit(low_text), pl.lit(", "), pl.lit(high_text), pl.lit(closing)])
    ).to_series()


__all__ = ["FORMAT", "UNKNOWN", "apply_transformation", "export_mappings", "transformation_of"]
