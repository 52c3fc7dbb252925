"""Tables from microdata (or from a table of cells): every cell, its subtotals and margins, and the
additivity relations between them.

A :class:`TableSpec` names the dimensions of one table — or of several linked tables sharing
attributes — the numeric attribute summed (a magnitude table; a frequency table counts records), an
optional holding (enterprise) id whose records are one contributor, and the hierarchies of the
dimensions (region → district, read as the configuration reads any hierarchy). :func:`build_table`
aggregates the records with polars group-bys, one dimension at a time up its hierarchy, so the cost
is linear in the records plus the cells, and keeps for every cell its frequency, its number of
contributors and its largest contributions (what the dominance rules read).

Cells are identified by one node per dimension of all the tables together; a table that lacks a
dimension sits at that dimension's total. A cell two linked tables share (region × Total in
region × sex and in region × activity) is one cell, and each table adds its own relations, so a method
that respects the relations protects the linked tables consistently. Cells without any record are not
listed: they are zeros every reader knows.

Linked tables may see one dimension through different hierarchies (``TableSpec.table_hierarchies``:
one table by province, another by municipality; or two groupings of the same codes that do not nest).
The nodes of all those hierarchies are then one set of nodes of the dimension, a node being the set of
the dimension's values (with records) under it: two nodes over the same values — the same records —
are one node, so the cells over them are one cell. Each table adds the relations of its own hierarchy,
and a node of one hierarchy that is the union of nodes of another (a province, of its
municipalities) adds that sum wherever the cells of the other table exist: what an attacker who reads
both tables can add up.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse

from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.params import spell
from sdckit.table import Table, value_strings
from sdckit.tabular.model import ADDITIVITY_TOLERANCE, TOTAL, LinearTable

_SHOWN = 5


@dataclass(frozen=True)
class TableSpec:
    """What to tabulate.

    ``tables``: the dimensions (attribute names) of each table, e.g. ``(("region", "sex"),)`` for one
    table, ``(("region", "sex"), ("region", "activity"))`` for two linked tables. ``value``: the
    numeric attribute summed in a magnitude table (None: a frequency table). ``holding``: attribute
    identifying contributors (records with the same holding are one contributor of a cell). ``weights``:
    the sampling-weights attribute (a frequency becomes a weighted count, a magnitude a weighted sum).
    ``hierarchies``: a :class:`~sdckit.hierarchy.Hierarchy` per dimension that has one (others are flat:
    their values and a total). ``top``: how many of the largest contributions to keep per cell (the
    dominance rules need n). ``table_hierarchies``: empty, or one mapping per table giving some of its
    dimensions a hierarchy of their own (a :class:`~sdckit.hierarchy.Hierarchy` or a
    :class:`HierarchyView`) in place of ``hierarchies``; the tables are linked through the records
    their cells have in common (see the module docstring). ``names``: empty, or a name per table, for
    messages.
    """

    tables: tuple[tuple[str, ...], ...]
    value: str | None = None
    holding: str | None = None
    weights: str | None = None
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    top: int = 2
    table_hierarchies: tuple[Mapping[str, Hierarchy | HierarchyView], ...] = ()
    names: tuple[str, ...] = ()

    @property
    def dimensions(self) -> tuple[str, ...]:
        """Every dimension of the tables, in order of first appearance."""
        return tuple(dict.fromkeys(name for dims in self.tables for name in dims))

    @classmethod
    def of(
        cls,
        rows: str | Sequence[str],
        cols: str | Sequence[str] | None = None,
        layers: str | Sequence[str] | None = None,
        **options: Any,
    ) -> TableSpec:
        """One table with ``rows`` × ``cols`` × ``layers`` (each one attribute or several)."""
        dims = [*_names(rows), *_names(cols), *_names(layers)]
        return cls(tables=(tuple(dims),), **options)


def _names(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


@dataclass(frozen=True)
class HierarchyView:
    """How one table sees a dimension: ``hierarchy`` (None: the dimension's hierarchy in
    ``TableSpec.hierarchies``) from ``level`` up — its nodes at that level are the table's categories —
    with the levels above as subtotals, or (``subtotals=False``) only the categories and the total."""

    hierarchy: Hierarchy | None = None
    level: int = 0
    subtotals: bool = True


#: A dimension's tree as a table uses it: the hierarchy (None: flat), the lowest level, subtotals.
_View = tuple[Hierarchy | None, int, bool]


def _view(spec: TableSpec, table: int, name: str) -> _View:
    """The hierarchy, lowest level and subtotals table ``table`` of ``spec`` uses for ``name``."""
    default = spec.hierarchies.get(name)
    own = spec.table_hierarchies[table].get(name) if spec.table_hierarchies else None
    if own is None:
        return default, 0, True
    if isinstance(own, Hierarchy):
        return own, 0, True
    hierarchy = own.hierarchy if own.hierarchy is not None else default
    called = f"'{spec.names[table]}'" if len(spec.names) == len(spec.tables) else str(table + 1)
    where = f"table {called} ({' x '.join(spec.tables[table])}), dimension '{name}'"
    if hierarchy is None:
        if own.level != 0:
            raise ConfigError(
                f"{where}: level {own.level} needs a hierarchy, and '{name}' has none (give it one in the "
                "configuration or a hierarchy file of the table's own)"
            )
        return None, 0, True
    if not 0 <= own.level < hierarchy.n_levels:
        raise ConfigError(
            f"{where}: level {own.level} is not a level of its hierarchy (levels 0 to {hierarchy.height})"
        )
    return hierarchy, own.level, own.subtotals


@dataclass(frozen=True)
class _Dimension:
    """A dimension's tree of cells: ``labels[node]``, ``parent[node]`` (-1 at the total) and
    ``ancestors[leaf]`` (the leaf's node at every level, the total last)."""

    name: str
    labels: tuple[str, ...]
    parent: np.ndarray
    ancestors: np.ndarray
    present: np.ndarray | None = None  # the leaves with records, in a merge of trees

    @property
    def root(self) -> int:
        return len(self.labels) - 1


def _dimension(
    name: str, column: pl.Series, hierarchy: Hierarchy | None, level: int = 0, subtotals: bool = True
) -> tuple[_Dimension, np.ndarray]:
    """The tree of dimension ``name`` (from ``level`` of its hierarchy up, see :func:`_tree`) and the
    leaf of every record."""
    if hierarchy is None:
        text = value_strings(column)
        order = column.unique().sort() if column.dtype.is_numeric() else text.unique().sort()
        leaves = value_strings(order) if column.dtype.is_numeric() else order
        codes = text.cast(pl.Enum(leaves.to_list())).to_physical().to_numpy().astype(np.int64)
        n = leaves.len()
        labels = (*leaves.to_list(), TOTAL)
        parent = np.r_[np.full(n, n), -1]
        ancestors = np.column_stack([np.arange(n), np.full(n, n)])
        return _Dimension(name, labels, parent, ancestors), codes
    codes = hierarchy.leaf_codes(column).astype(np.int64)
    return _tree(name, hierarchy, level, subtotals), codes


def _tree(name: str, hierarchy: Hierarchy, level: int = 0, subtotals: bool = True) -> _Dimension:
    """The tree of cells of a hierarchy: a node is the sum of its children at the level below, the
    top is the total (a total is added above when the top level has several nodes), and a node with a
    single child is the same cell as its child (sdcTable's "bogus codes": ``A`` over ``A`` is one
    cell, labelled as the child, or as the total when it is the top).

    ``level``: the lowest level kept (its nodes are the categories; the leaves still index
    ``ancestors``); ``subtotals=False`` keeps that level and the total only."""
    levels = list(range(level, hierarchy.n_levels)) if subtotals else [level]
    offsets = np.cumsum([0, *(hierarchy.n_nodes(k) for k in levels)])
    labels = [label for k in levels for label in hierarchy.labels[k]]
    parent = np.full(len(labels), -1, dtype=np.int64)
    for i in range(len(levels) - 1):  # the levels are consecutive when there are several
        parent[offsets[i] : offsets[i + 1]] = hierarchy.parents(levels[i]) + offsets[i + 1]
    ancestors = hierarchy.codes.astype(np.int64)[:, levels] + offsets[:-1]
    if hierarchy.n_nodes(levels[-1]) > 1:
        root = len(labels)
        labels.append(TOTAL)
        parent = np.r_[parent, -1]
        parent[offsets[-2] : offsets[-1]] = root
        ancestors = np.column_stack([ancestors, np.full(len(ancestors), root)])
    root = len(labels) - 1
    # Merge every node that has a single child into that child, bottom-up.
    representative = np.arange(len(labels))
    children = np.bincount(parent[parent >= 0], minlength=len(labels))
    only_child = np.full(len(labels), -1, dtype=np.int64)
    has_parent = np.flatnonzero(parent >= 0)
    only_child[parent[has_parent]] = has_parent
    for node in range(len(labels)):  # nodes are numbered level by level, so children come first
        if children[node] == 1:
            representative[node] = representative[only_child[node]]
    kept, compact = np.unique(representative, return_inverse=True)
    names = [labels[node] for node in kept]
    names[compact[root]] = TOTAL
    merged_parent = np.full(kept.size, -1, dtype=np.int64)
    linked = has_parent[compact[has_parent] != compact[parent[has_parent]]]
    merged_parent[compact[linked]] = compact[parent[linked]]
    return _Dimension(name, tuple(names), merged_parent, compact[ancestors])


def build_table(source: Table, spec: TableSpec, *, record_values: np.ndarray | None = None) -> LinearTable:
    """The cells, margins and relations of the tables ``spec`` describes, from the records of ``source``.

    ``record_values``: sum this per-record array (unweighted, no contributions) instead of the
    specification's value — the cell key method sums record keys over the same cells
    (:func:`cell_sums`).
    """
    data = source.data
    _check_spec(spec, data)
    dims, trees, units = _dimensions(data, spec)
    weights = None
    if record_values is None and spec.weights is not None:
        weights = data.get_column(spec.weights).cast(pl.Float64)
    if record_values is not None:
        value = pl.Series(np.asarray(record_values, dtype=np.float64))
    elif spec.value is not None:
        value = data.get_column(spec.value).cast(pl.Float64)
        _refuse_missing(value.rename(spec.value), spec.value)
    else:
        value = pl.Series(np.ones(data.height))
    units = units.with_columns(
        f=pl.lit(1.0) if weights is None else weights,
        x=value,
        n=pl.lit(1, dtype=pl.Int64),
    )
    top = 0 if record_values is not None else spec.top
    if top and spec.holding is not None:
        holding = data.get_column(spec.holding)
        _refuse_missing(holding, spec.holding)
        # Integer codes: grouping by (cell, holding) at every level is the costly step.
        units = units.with_columns(h=holding.rank("dense").cast(pl.UInt32))
    elif top:
        copies = 1 if weights is None else weights.round().clip(1, top).cast(pl.Int64)
        units = units.with_columns(c=pl.col("x"), copies=copies)
    units = units.with_columns(v=pl.col("x") if weights is None else pl.col("x") * pl.col("f"))
    kind = "magnitude" if record_values is not None or spec.value is not None else "frequency"
    name = "sum" if record_values is not None else (spec.value or "frequency")
    return _tabulate(units, spec, dims, trees, top, kind, name)


#: Per table, the tree of each of its dimensions, over the nodes of the dimension's ``_Dimension``.
_Trees = tuple[dict[str, _Dimension], ...]


def _dimensions(data: pl.DataFrame, spec: TableSpec) -> tuple[dict[str, _Dimension], _Trees, pl.DataFrame]:
    """The nodes of every dimension, the tree of each dimension each table uses, and a frame of the
    leaf of every record in each dimension (``d0``, ...). A dimension every table sees through the
    same hierarchy is that tree; one seen through several is their merge (:func:`_merge_trees`)."""
    dims, leaves = {}, {}
    trees: list[dict[str, _Dimension]] = [{} for _ in spec.tables]
    for name in spec.dimensions:
        column = data.get_column(name)
        _refuse_missing(column, name)
        views = {t: _view(spec, t, name) for t, table in enumerate(spec.tables) if name in table}
        distinct = list(dict.fromkeys(views.values()))
        dims[name], leaves[name] = _dimension(name, column, *distinct[0])
        own = {distinct[0]: dims[name]}
        if len(distinct) > 1:
            dims[name], own = _merge_trees(name, column, leaves[name], dims[name], distinct)
        for t, view in views.items():
            trees[t][name] = own[view]
    units = pl.DataFrame({f"d{j}": leaves[name] for j, name in enumerate(spec.dimensions)})
    return dims, tuple(trees), units


def _merge_trees(
    name: str, column: pl.Series, codes: np.ndarray, first: _Dimension, views: Sequence[_View]
) -> tuple[_Dimension, dict[_View, _Dimension]]:
    """The trees of several hierarchies of dimension ``name`` over one set of nodes.

    A node is the set of values with records under it: nodes of two trees over the same values are
    one node, labelled as in the first tree that has it (its own label preferred when it has several).
    ``first`` is the tree of ``views[0]`` and ``codes`` the leaf of every record in it; every tree
    returned indexes its paths (``ancestors``) by those leaves, and the total stays the last node. A
    label that names different values in two trees is an error (a code means the same records in
    every table)."""
    present = np.unique(codes)
    labels = list(first.labels)
    owner: dict[bytes, list[int]] = {}
    named: dict[str, bytes] = {}
    for node, key in enumerate(_node_keys(first.ancestors[present], len(labels))):
        if key is not None:
            owner.setdefault(key, []).append(node)
            named.setdefault(labels[node], key)
    mapped = [(first, np.arange(len(labels)), first.ancestors)]
    for view in views[1:]:
        tree, leaf = _dimension(name, column, *view)
        to_tree = np.zeros(first.ancestors.shape[0], dtype=np.int64)  # leaves without records: any
        to_tree[codes] = leaf
        paths = tree.ancestors[to_tree]
        ids = np.full(len(tree.labels), -1, dtype=np.int64)
        for node, key in enumerate(_node_keys(paths[present], len(tree.labels))):
            if key is None:
                continue
            label = tree.labels[node]
            if key in owner:
                same = [other for other in owner[key] if labels[other] == label]
                ids[node] = (same or owner[key])[0]
                continue
            if named.get(label, key) != key:
                raise ConfigError(
                    f"dimension '{name}': code '{label}' stands for different values in two of the tables' "
                    "hierarchies; a code must mean the same records in every table"
                )
            ids[node] = len(labels)
            labels.append(label)
            owner[key], named[label] = [int(ids[node])], key
        mapped.append((tree, ids, paths))
    # Number the nodes the trees add after those of the first, the total last.
    n, root = len(labels), first.root
    final = np.arange(n)
    final[root] = n - 1
    final[root + 1 :] = np.arange(root, n - 1)
    ordered: list[str] = [""] * n
    for index, label in enumerate(labels):
        ordered[final[index]] = label
    merged: list[_Dimension] = []
    for tree, ids, paths in mapped:
        parent = np.full(n, -1, dtype=np.int64)
        for node in np.flatnonzero(ids >= 0).tolist():
            up = tree.parent[node]
            while up >= 0 and ids[up] == ids[node]:  # one node of the merge: the same values
                up = tree.parent[up]
            if up >= 0:
                parent[final[ids[node]]] = final[ids[up]]
        nodes = ids[paths]
        ancestors = np.where(nodes >= 0, final[np.maximum(nodes, 0)], n - 1)
        merged.append(_Dimension(name, tuple(ordered), parent, ancestors, present))
    return merged[0], dict(zip(views, merged, strict=True))


def _node_keys(paths: np.ndarray, n_nodes: int) -> list[bytes | None]:
    """For every node of a tree, the rows of ``paths`` (the nodes above each leaf with records) whose
    path holds it, as bytes (None: no row)."""
    rows = np.repeat(np.arange(paths.shape[0], dtype=np.int64), paths.shape[1])
    pairs = np.unique(np.column_stack([paths.ravel().astype(np.int64), rows]), axis=0)
    bounds = np.searchsorted(pairs[:, 0], np.arange(n_nodes + 1))
    return [
        pairs[bounds[node] : bounds[node + 1], 1].tobytes() if bounds[node + 1] > bounds[node] else None
        for node in range(n_nodes)
    ]


def _tabulate(
    units: pl.DataFrame,
    spec: TableSpec,
    dims: Mapping[str, _Dimension],
    trees: _Trees,
    top: int,
    kind: str,
    name: str,
) -> LinearTable:
    """The table of ``units`` (``d0``.. leaves, ``f`` frequency, ``v`` value, ``n`` contributors and
    the contributions ``c``/``copies`` or holding ``h``)."""
    frames = [
        _aggregate(units, dims, tree, table, top) for tree, table in zip(trees, spec.tables, strict=True)
    ]
    columns = [f"d{j}" for j in range(len(dims))]
    cells = pl.concat(frames, how="vertical").unique(subset=columns, keep="first").sort(columns)
    return _linear_table(cells, dims, trees, spec.tables, top, kind, name)


def _check_spec(spec: TableSpec, data: pl.DataFrame) -> None:
    if not spec.tables or any(not dims for dims in spec.tables):
        raise ConfigError(f"a table needs at least one dimension ({spell('tables', '--rows')})")
    for dims in spec.tables:
        repeated = [name for name in dims if dims.count(name) > 1]
        if repeated:
            raise ConfigError(f"attribute '{repeated[0]}' is a dimension of one table twice")
    if spec.table_hierarchies and len(spec.table_hierarchies) != len(spec.tables):
        raise ConfigError(
            f"table_hierarchies needs one mapping per table ({len(spec.tables)}), "
            f"got {len(spec.table_hierarchies)}"
        )
    for own, dims in zip(spec.table_hierarchies, spec.tables, strict=False):
        for name, view in own.items():
            if name not in dims:
                table = " x ".join(dims)
                raise ConfigError(f"the table {table} has no dimension '{name}' to give a hierarchy")
            if not isinstance(view, Hierarchy | HierarchyView):
                raise TypeError(f"the hierarchy of '{name}' must be a Hierarchy or a HierarchyView")
    roles = {"value": spec.value, "holding": spec.holding}
    names = [(n, "") for n in spec.dimensions]
    names += [(n, f" ({spell(role)})") for role, n in roles.items() if n is not None]
    if spec.weights is not None:
        names.append((spec.weights, ""))
    for name, given in names:
        if name not in data.columns:
            close = [c for c in data.columns if c.lower() == name.lower()]
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(
                f"unknown attribute '{name}'{given}: the data has no such column "
                f"(columns: {', '.join(data.columns)}){hint}"
            )
    if spec.value is not None and not data.schema[spec.value].is_numeric():
        raise InputError(
            f"attribute '{spec.value}' ({spell('value')}) is not numeric: a magnitude table sums numbers"
        )
    if spec.value is not None and spec.value in spec.dimensions:
        raise ConfigError(f"attribute '{spec.value}' cannot be both a dimension and the value summed")


def _refuse_missing(column: pl.Series, name: str) -> None:
    missing = column.is_null()
    if column.dtype.is_float():
        missing = missing | column.is_nan()
    count = int(missing.sum())
    if count:
        first = int(np.flatnonzero(missing.to_numpy())[0])
        raise InputError(
            f"attribute '{name}' has {count} missing value{'s' if count != 1 else ''} (first in record "
            f"{first + 1}): every record needs a value to be counted in a table"
        )


def _aggregate(
    units: pl.DataFrame,
    dims: Mapping[str, _Dimension],
    tree: Mapping[str, _Dimension],
    table: Sequence[str],
    top: int,
) -> pl.DataFrame:
    """The cells of one table: every combination of nodes of its dimensions (of the table's ``tree``
    of each) that holds a record.

    The nodes of a cell are packed into one integer ``code`` (mixed radix over the dimensions' node
    counts, or leaf counts where larger), so every group-by is on one or two integer columns; each
    dimension in turn replaces its digit by every ancestor of the leaf (itself, its subtotals, the
    total) and the cells are summed.
    """
    order = list(dims)
    radix = np.array(
        [max(len(dims[name].labels), tree[name].ancestors.shape[0]) for name in table], dtype=np.int64
    )
    if float(np.prod(radix.astype(float))) >= 2**62:
        raise ConfigError(f"the table {' x '.join(table)} has too many combinations of categories to index")
    strides = np.r_[np.cumprod(radix[::-1])[::-1][1:], 1].astype(np.int64)
    code = pl.lit(0, dtype=pl.Int64)
    for name, stride in zip(table, strides, strict=True):
        code = code + pl.col(f"d{order.index(name)}").cast(pl.Int64) * int(stride)
    holding = "h" in units.columns
    frame = units.with_columns(code.alias("code"))
    leaf_level = frame
    tops = top and not holding
    contributions = pl.col("c").repeat_by(pl.col("copies")).explode().top_k(top).alias("tops")
    frame = _summed(frame, *([contributions] if tops else []))
    for name, stride, size in zip(table, strides, radix, strict=True):
        ancestors = tree[name].ancestors
        link = pl.DataFrame(
            {"digit": np.repeat(np.arange(ancestors.shape[0]), ancestors.shape[1]), "node": ancestors.ravel()}
        ).unique()  # a merged node appears twice on its leaves' paths
        digit = (pl.col("code") // int(stride)) % int(size)
        frame = (
            frame.with_columns(digit.alias("digit"))
            .join(link, on="digit")
            .with_columns((pl.col("code") + (pl.col("node") - pl.col("digit")) * int(stride)).alias("code"))
            .drop("digit", "node")
        )
        frame = _summed(frame, *([pl.col("tops").explode().top_k(top)] if tops else []))
    if holding:
        frame = _holdings(frame.sort("code"), leaf_level, [tree[name] for name in table], strides, radix, top)
    digits = {
        f"d{order.index(name)}": ((pl.col("code") // int(stride)) % int(size)).cast(pl.Int64)
        for name, stride, size in zip(table, strides, radix, strict=True)
    }
    roots = {
        f"d{j}": pl.lit(dims[name].root, dtype=pl.Int64) for j, name in enumerate(order) if name not in table
    }
    frame = frame.with_columns(**digits, **roots)
    columns = [f"d{j}" for j in range(len(order))]
    return frame.select(*columns, "f", "v", "n", *(["tops"] if top else []))


def _summed(frame: pl.DataFrame, *more: pl.Expr) -> pl.DataFrame:
    """``f``, ``v`` and ``n`` summed per ``code`` (and the ``more`` aggregations), sorted by code.

    The sums are taken in one fixed order, each code's rows sorted by value, so that a cell's
    floating-point total is the same on every run: a multithreaded group-by adds a cell's values in
    an order that varies from run to run, and totals then differed in their last digit (a release
    that did not replay byte for byte)."""
    ordered = frame.select("code", "f", "v", "n").sort("code", "v", "f", "n")
    codes = ordered.get_column("code").to_numpy()
    starts = np.r_[0, np.flatnonzero(np.diff(codes)) + 1] if codes.size else np.zeros(0, dtype=np.int64)
    columns = {"code": pl.Series("code", codes[starts], dtype=ordered.schema["code"])}
    for name in ("f", "v", "n"):
        values = ordered.get_column(name).to_numpy()
        total = np.add.reduceat(values, starts) if codes.size else values[:0]
        columns[name] = pl.Series(name, total).cast(ordered.schema[name])
    summed = pl.DataFrame(columns)
    if more:
        summed = summed.join(frame.group_by("code").agg(*more), on="code", how="left", maintain_order="left")
    return summed


def _holdings(
    cells: pl.DataFrame,
    units: pl.DataFrame,
    dims: Sequence[_Dimension],
    strides: np.ndarray,
    radix: np.ndarray,
    top: int,
) -> pl.DataFrame:
    """``cells`` (sorted by code) with ``n`` the number of holdings and ``tops`` the largest holding
    contributions per cell, from the records' ``units`` (leaf-level ``code``, holding ``h``, ``v``)."""
    from sdckit.tabular._kernels import holding_contributions

    summed = units.group_by("h", "code").agg(pl.col("v").sum()).sort("h")
    codes = summed.get_column("code").to_numpy()
    leaves = np.column_stack([(codes // stride) % size for stride, size in zip(strides, radix, strict=True)])
    holdings = summed.get_column("h").to_numpy()
    starts = np.r_[0, np.flatnonzero(np.diff(holdings)) + 1, holdings.size].astype(np.int64)
    depth = max(d.ancestors.shape[1] for d in dims)
    width = max(d.ancestors.shape[0] for d in dims)
    ancestors = np.full((len(dims), width, depth), -1, dtype=np.int64)
    for j, dim in enumerate(dims):
        for level in range(dim.ancestors.shape[1]):
            column = dim.ancestors[:, level]
            # a merged node repeats on a leaf's path: list it once
            repeated = np.zeros(column.size, dtype=bool)
            for earlier in range(level):
                repeated |= dim.ancestors[:, earlier] == column
            ancestors[j, : column.size, level] = np.where(repeated, -1, column)
    # -1 must only pad the end of a leaf's path: move each leaf's nodes to the front.
    order = np.argsort(ancestors < 0, axis=2, kind="stable")
    ancestors = np.take_along_axis(ancestors, order, axis=2)
    counts, largest = holding_contributions(
        starts,
        np.ascontiguousarray(leaves, dtype=np.int64),
        summed.get_column("v").to_numpy().astype(np.float64),
        ancestors,
        strides.astype(np.int64),
        cells.get_column("code").to_numpy().astype(np.int64),
        top,
    )
    return cells.with_columns(n=pl.Series(counts), tops=pl.Series(largest[:, :top].tolist()))


def _linear_table(
    cells: pl.DataFrame,
    dims: Mapping[str, _Dimension],
    trees: _Trees,
    tables: Sequence[Sequence[str]],
    top: int,
    kind: str,
    value_name: str,
) -> LinearTable:
    order = list(dims)
    nodes = np.column_stack([cells.get_column(f"d{j}").to_numpy() for j in range(len(order))])
    labels = pl.DataFrame(
        {name: pl.Series(name, dims[name].labels).gather(nodes[:, j]) for j, name in enumerate(order)}
    )
    relations = _relations(nodes, [dims[name] for name in order], trees, tables)
    top_matrix = None
    if top:
        lists = cells.get_column("tops").list
        top_matrix = np.column_stack(
            [lists.get(k, null_on_oob=True).fill_null(0.0).to_numpy() for k in range(top)]
        )
        top_matrix = -np.sort(-top_matrix, axis=1)  # polars' top_k does not promise an order
    frequency = cells.get_column("f").to_numpy().astype(np.float64)
    values = frequency if kind == "frequency" else cells.get_column("v").to_numpy()
    return LinearTable(
        values=values,
        relations=relations,
        cells=labels,
        dimensions=tuple(order),
        kind=kind,
        frequency=frequency,
        contributors=cells.get_column("n").to_numpy(),
        top=top_matrix,
        value_name=value_name,
    )


def _relations(
    nodes: np.ndarray,
    dims: Sequence[_Dimension],
    trees: _Trees = (),
    tables: Sequence[Sequence[str]] = (),
) -> sparse.csr_matrix:
    """One relation per cell and dimension along which the cell has children among the cells:
    ``Σ children − cell = 0``. A dimension the tables see through several trees (``trees``, one
    mapping per table of ``tables``) gives the relations of each tree among the cells of the tables
    that use it, and the sums by which a node of one tree is made of nodes of another
    (:func:`_covers`); a relation two trees give is kept once."""
    n, width = nodes.shape
    if n == 0:
        return sparse.csr_matrix((0, 0))
    radix = np.array([len(d.labels) for d in dims], dtype=np.int64)
    if float(np.prod(radix.astype(float))) < 2**62:
        strides = np.r_[np.cumprod(radix[::-1])[::-1][1:], 1]
        keys = nodes @ strides
        index = pl.DataFrame({"key": keys, "cell": np.arange(n)})
    else:  # pragma: no cover - more than 2^62 node combinations
        raise ConfigError("the tables have too many combinations of categories to index")
    rows, cols, data = [], [], []
    count = 0

    def add(child: np.ndarray, parent_keys: np.ndarray) -> None:
        """Relations ``Σ child − parent = 0``, the parent of each child cell given by its key."""
        nonlocal count
        found = (
            pl.DataFrame({"key": parent_keys, "child": child})
            .join(index, on="key", how="left", maintain_order="left")
            .get_column("cell")
        )
        if found.null_count():  # cannot happen: every parent of a cell holds its records
            raise AssertionError("a cell's parent is missing")
        parents = found.to_numpy()
        unique, relation = np.unique(parents, return_inverse=True)
        rows.extend([relation + count, np.arange(unique.size) + count])
        cols.extend([child, unique])
        data.extend([np.ones(child.size), -np.ones(unique.size)])
        count += unique.size

    merged = False
    within: list[np.ndarray] = []
    for j, dim in enumerate(dims):
        used = {id(tree[dim.name]): tree[dim.name] for tree in trees if dim.name in tree}
        if len(used) <= 1:
            parent = dim.parent[nodes[:, j]]
            child = np.flatnonzero(parent >= 0)
            if child.size:
                add(child, keys[child] + (parent[child] - nodes[child, j]) * strides[j])
            continue
        merged = True
        within = within or _within(nodes, dims, trees, tables)
        users = {key: [t for t, tree in enumerate(trees) if id(tree.get(dim.name)) == key] for key in used}
        inside = {key: np.logical_or.reduce([within[t].all(axis=0) for t in users[key]]) for key in used}
        for key, tree in used.items():
            parent = np.where(inside[key], tree.parent[nodes[:, j]], -1)
            child = np.flatnonzero(parent >= 0)
            if child.size:
                add(child, keys[child] + (parent[child] - nodes[child, j]) * strides[j])
        for a, b in itertools.permutations(used, 2):
            whole, part = _covers(used[a], used[b], len(dim.labels))
            if whole.size == 0:
                continue
            for t in users[b]:
                # the cells of a table using tree a whose other nodes are those of a cell of table t
                rest = np.delete(within[t], j, axis=0).all(axis=0) if width > 1 else np.ones(n, dtype=bool)
                cells = np.flatnonzero(inside[a] & rest & np.isin(nodes[:, j], whole))
                if cells.size == 0:
                    continue
                pairs = pl.DataFrame({"cell": cells, "u": nodes[cells, j]}).join(
                    pl.DataFrame({"u": whole, "v": part}), on="u", maintain_order="left"
                )
                total = pairs.get_column("cell").to_numpy()
                step = pairs.get_column("v").to_numpy() - pairs.get_column("u").to_numpy()
                parts = keys[total] + step * strides[j]
                present = (
                    pl.DataFrame({"key": parts, "total": total})
                    .join(index, on="key", how="inner", maintain_order="left")
                    .select("cell", "total")
                )
                # Σ parts − total = 0: the same shape as a tree's relation, the total as the "parent"
                add(present.get_column("cell").to_numpy(), keys[present.get_column("total").to_numpy()])
    if not rows:
        return sparse.csr_matrix((0, n))
    matrix = sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(count, n)
    )
    return _distinct_rows(matrix) if merged else matrix


def _within(
    nodes: np.ndarray, dims: Sequence[_Dimension], trees: _Trees, tables: Sequence[Sequence[str]]
) -> list[np.ndarray]:
    """Per table, ``(dimensions, cells)``: the cell's node of the dimension is one of the table's
    (a node of its tree of the dimension, or the total of a dimension it lacks)."""
    within = []
    for tree, table in zip(trees, tables, strict=True):
        rows = []
        for j, dim in enumerate(dims):
            if dim.name in table:
                member = np.zeros(len(dim.labels), dtype=bool)
                member[tree[dim.name].ancestors.ravel()] = True
                rows.append(member[nodes[:, j]])
            else:
                rows.append(nodes[:, j] == dim.root)
        within.append(np.array(rows).reshape(len(dims), nodes.shape[0]))
    return within


def _covers(a: _Dimension, b: _Dimension, n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of tree ``a`` that are sums of at least two nodes of tree ``b`` (a province, of the
    municipalities another table lists), as pairs ``(whole[i], part[i])``.

    Over the leaves with records, the parts of a node u of ``a`` are the highest nodes of ``b`` whose
    values all lie under u; u is their sum when every value under u is under one of them."""
    present = a.present if a.present is not None else np.arange(a.ancestors.shape[0])
    upper, lower = _distinct_path(a.ancestors[present]), _distinct_path(b.ancestors[present])
    size = np.bincount(lower[lower >= 0], minlength=n_nodes)
    leaf = np.repeat(np.arange(present.size), upper.shape[1])
    whole = upper.ravel()
    leaf, whole = leaf[whole >= 0], whole[whole >= 0]
    path = lower[leaf]  # (pairs, depth of b): the nodes of b above each value under each node of a
    real = path >= 0
    code = np.where(real, whole[:, None] * n_nodes + path, -1)
    _, inverse, counts = np.unique(code, return_inverse=True, return_counts=True)
    contained = real & (counts[inverse.reshape(code.shape)] == size[np.maximum(path, 0)])
    highest = np.full(whole.size, -1, dtype=np.int64)
    for depth in range(path.shape[1]):  # b's paths go up; the nodes under u are the lowest ones
        highest = np.where(contained[:, depth], path[:, depth], highest)
    pairs = pl.DataFrame({"u": whole, "v": highest})
    found = (
        pairs.group_by("u")
        .agg(pl.col("v").min().alias("low"), pl.col("v").n_unique().alias("parts"))
        .filter((pl.col("low") >= 0) & (pl.col("parts") >= 2))
        .select("u")
    )
    pairs = pairs.join(found, on="u", how="semi").unique().sort("u", "v")
    return pairs.get_column("u").to_numpy(), pairs.get_column("v").to_numpy()


def _distinct_path(paths: np.ndarray) -> np.ndarray:
    """``paths`` with a node repeated along a row (a merged node) replaced by -1."""
    paths = paths.astype(np.int64, copy=True)
    for depth in range(1, paths.shape[1]):
        repeated = (paths[:, :depth] == paths[:, depth : depth + 1]).any(axis=1)
        paths[repeated, depth] = -1
    return paths


def _distinct_rows(matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    """``matrix`` without the rows equal to an earlier row."""
    matrix = matrix.tocsr()
    matrix.sum_duplicates()
    matrix.sort_indices()
    seen: set[bytes] = set()
    keep = []
    for row in range(matrix.shape[0]):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        key = matrix.indices[start:end].tobytes() + matrix.data[start:end].tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(row)
    return matrix[keep]


def cell_sums(problem: Any, record_values: np.ndarray) -> np.ndarray:
    """The sum of ``record_values`` (one per record of ``problem.source``, unweighted) over the
    records of every cell of ``problem.table``, in the same order. Needs a table built from microdata."""
    if problem.source is None or problem.spec is None:
        raise ConfigError("this method needs the microdata the table is built from, not a table of cells")
    record_values = np.asarray(record_values, dtype=np.float64)
    height = problem.source.data.height
    if record_values.shape != (height,):
        raise ValueError(f"need one value per record ({height}), got shape {record_values.shape}")
    sums = build_table(problem.source, problem.spec, record_values=record_values)
    if sums.n_cells != problem.table.n_cells:
        raise AssertionError("the cells differ between two builds of one table")
    return sums.values


def build_from_cells(
    frame: pl.DataFrame,
    spec: TableSpec,
    *,
    frequency: str | None = None,
    total_label: str = TOTAL,
    source: str = "the table",
) -> LinearTable:
    """A table from a table of cells (one row per cell, as sdcTable's and τ-Argus's pre-aggregated
    input): the rows whose dimensions are all values (hierarchy leaves) are the interior cells; rows
    with ``total_label`` or a hierarchy node in a dimension are given totals, checked against the sums
    of the interior cells — a total that is not the sum of its cells is an error naming the cell.

    ``frequency``: the column of counts, required: a row is a cell, not a record, so without its
    count neither the frequency rule nor the totals could be checked; ``spec.value``: the column of a
    magnitude table. No contributions are known: dominance rules cannot be applied to such a table.
    A cell listed twice is an error naming both lines (its rows are never summed).
    """
    _check_spec(dataclasses.replace(spec, weights=None, holding=None), frame)
    columns = ", ".join(frame.columns)
    if frequency is None:
        raise ConfigError(
            f"{source}: a table of cells needs the column of each cell's count ({spell('frequency')}; "
            f"columns: {columns}): a row is a cell, not a record"
        )
    if frequency not in frame.columns:
        raise ConfigError(f"unknown column '{frequency}' ({spell('frequency')}): the columns are {columns}")
    dims = spec.dimensions
    text = frame.with_columns(value_strings(frame.get_column(name)).alias(name) for name in dims)
    text = text.with_row_index("_row")
    _refuse_repeated_cells(text, dims, source)
    is_total = pl.lit(False)
    for name in dims:
        # a row is a total in a dimension unless its code is a value of every hierarchy the tables give it
        users = [t for t, table in enumerate(spec.tables) if name in table]
        hierarchies = [h for h in dict.fromkeys(_view(spec, t, name)[0] for t in users) if h is not None]
        total = pl.col(name) == total_label
        known = {total_label}
        for hierarchy in hierarchies:
            total = total | ~pl.col(name).is_in(list(hierarchy.labels[0]))
            known |= {label for level in hierarchy.labels for label in level}
        if hierarchies:
            unknown = text.filter(~pl.col(name).is_in(list(known)))
            if unknown.height:
                row = unknown.row(0, named=True)
                raise InputError(
                    f"{source}, line {row['_row'] + 2}: {name} = {row[name]!r} is neither a code of its "
                    f"hierarchy nor the total label {total_label!r}"
                )
        is_total = is_total | total
    flags = text.select(is_total.alias("total")).get_column("total")
    interior = text.filter(~flags)
    if interior.height == 0:
        raise InputError(f"{source} has no interior cells (every row is a total)")
    for numeric in (frequency, spec.value):
        if numeric is None:
            continue
        column = interior.get_column(numeric).cast(pl.Float64, strict=False)
        _refuse_missing(column.rename(numeric), numeric)
        if bool((column < 0).any()):
            raise InputError(f"{source}: column '{numeric}' has negative values; cell values must be ≥ 0")
    counts = interior.get_column(frequency).cast(pl.Float64)
    value = interior.get_column(spec.value).cast(pl.Float64) if spec.value is not None else counts
    dimensions, trees, units = _dimensions(interior, spec)
    units = units.with_columns(f=counts, v=value, n=counts.round().cast(pl.Int64))
    kind = "frequency" if spec.value is None else "magnitude"
    built = _tabulate(units, spec, dimensions, trees, 0, kind, spec.value or "frequency")
    given = text.filter(flags)
    if given.height:
        _check_totals(built, given, spec, frequency, total_label, source)
    return built


def _refuse_repeated_cells(text: pl.DataFrame, dims: tuple[str, ...], source: str) -> None:
    """A cell (its codes in every dimension, missing as missing) given on two rows of the file is
    refused, naming both lines: summing them would publish a cell nobody stated."""
    repeated = text.filter(pl.struct(list(dims)).is_duplicated())
    if not repeated.height:
        return
    first = repeated.row(0, named=True)
    same = repeated.filter(pl.all_horizontal(pl.col(n).eq_missing(first[n]) for n in dims))
    second = same.get_column("_row")[1]
    cell = ", ".join(f"{n}={first[n]}" for n in dims)
    more = repeated.height - 2
    rest = f"; {more} more rows repeat a cell" if more > 0 else ""
    raise InputError(
        f"{source}, lines {first['_row'] + 2} and {second + 2}: the cell {cell} is listed twice (a table "
        f"of cells has one row per cell{rest})"
    )


def _check_totals(
    built: LinearTable,
    given: pl.DataFrame,
    spec: TableSpec,
    frequency: str | None,
    total_label: str,
    source: str,
) -> None:
    dims = list(spec.dimensions)
    relabel = [
        pl.when(pl.col(n) == total_label).then(pl.lit(TOTAL)).otherwise(pl.col(n)).alias(n) for n in dims
    ]
    stated = given.with_columns(relabel)
    joined = stated.join(built.cells.with_row_index("_cell"), on=dims, how="left")
    unknown = joined.filter(pl.col("_cell").is_null())
    if unknown.height:
        row = unknown.row(0, named=True)
        cell = ", ".join(f"{n}={row[n]}" for n in dims)
        raise InputError(f"{source}, line {row['_row'] + 2}: the total {cell} has no interior cell under it")
    assert built.frequency is not None  # _tabulate counts the records of every cell
    for column, values in ((spec.value, built.values), (frequency, built.frequency)):
        if column is not None:
            _compare_totals(joined, dims, column, values, source)


def _compare_totals(
    joined: pl.DataFrame, dims: list[str], column: str, values: np.ndarray, source: str
) -> None:
    stated = joined.get_column(column).cast(pl.Float64).to_numpy()
    computed = values[joined.get_column("_cell").to_numpy()]
    scale = max(1.0, float(np.abs(computed).max()))
    bad = np.flatnonzero(np.abs(stated - computed) > ADDITIVITY_TOLERANCE * scale * 10)
    if bad.size:
        row = joined.row(int(bad[0]), named=True)
        cell = ", ".join(f"{n}={row[n]}" for n in dims)
        more = f"; {bad.size - 1} more totals differ" if bad.size > 1 else ""
        raise InputError(
            f"{source}, line {row['_row'] + 2}: the total {cell} has {column} {stated[bad[0]]:g} but its "
            f"cells sum to {computed[bad[0]]:g} (the input is not additive{more})"
        )
