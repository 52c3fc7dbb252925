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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse

from sdckit.errors import ConfigError, InputError
from sdckit.hierarchy import Hierarchy
from sdckit.table import Table, value_strings
from sdckit.tables.model import ADDITIVITY_TOLERANCE, TOTAL, LinearTable

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
    dominance rules need n).
    """

    tables: tuple[tuple[str, ...], ...]
    value: str | None = None
    holding: str | None = None
    weights: str | None = None
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    top: int = 2

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
class _Dimension:
    """A dimension's tree of cells: ``labels[node]``, ``parent[node]`` (-1 at the total) and
    ``ancestors[leaf]`` (the leaf's node at every level, the total last)."""

    name: str
    labels: tuple[str, ...]
    parent: np.ndarray
    ancestors: np.ndarray

    @property
    def root(self) -> int:
        return len(self.labels) - 1


def _dimension(name: str, column: pl.Series, hierarchy: Hierarchy | None) -> tuple[_Dimension, np.ndarray]:
    """The tree of dimension ``name`` and the leaf of every record."""
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
    return _tree(name, hierarchy), codes


def _tree(name: str, hierarchy: Hierarchy) -> _Dimension:
    """The tree of cells of a hierarchy: a node is the sum of its children at the level below, the
    top is the total (a total is added above when the top level has several nodes), and a node with a
    single child is the same cell as its child (sdcTable's "bogus codes": ``A`` over ``A`` is one
    cell, labelled as the child, or as the total when it is the top)."""
    offsets = np.cumsum([0, *(hierarchy.n_nodes(level) for level in range(hierarchy.n_levels))])
    labels = [label for level in hierarchy.labels for label in level]
    parent = np.full(len(labels), -1, dtype=np.int64)
    for level in range(hierarchy.height):
        parent[offsets[level] : offsets[level + 1]] = hierarchy.parents(level) + offsets[level + 1]
    ancestors = hierarchy.codes.astype(np.int64) + offsets[:-1]
    if hierarchy.n_nodes(hierarchy.height) > 1:
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
    dims, units = _dimensions(data, spec)
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
    return _tabulate(units, spec, dims, top, kind, name)


def _dimensions(data: pl.DataFrame, spec: TableSpec) -> tuple[dict[str, _Dimension], pl.DataFrame]:
    """The tree of every dimension, and a frame of the leaf of every record in each (``d0``, ...)."""
    dims, leaves = {}, {}
    for name in spec.dimensions:
        column = data.get_column(name)
        _refuse_missing(column, name)
        dims[name], leaves[name] = _dimension(name, column, spec.hierarchies.get(name))
    return dims, pl.DataFrame({f"d{j}": leaves[name] for j, name in enumerate(spec.dimensions)})


def _tabulate(
    units: pl.DataFrame, spec: TableSpec, dims: Mapping[str, _Dimension], top: int, kind: str, name: str
) -> LinearTable:
    """The table of ``units`` (``d0``.. leaves, ``f`` frequency, ``v`` value, ``n`` contributors and
    the contributions ``c``/``copies`` or holding ``h``)."""
    frames = [_aggregate(units, spec, dims, table, top) for table in spec.tables]
    columns = [f"d{j}" for j in range(len(dims))]
    cells = pl.concat(frames, how="vertical").unique(subset=columns, keep="first").sort(columns)
    return _linear_table(cells, dims, top, kind, name)


def _check_spec(spec: TableSpec, data: pl.DataFrame) -> None:
    if not spec.tables or any(not dims for dims in spec.tables):
        raise ConfigError("a table needs at least one dimension (--rows)")
    for dims in spec.tables:
        repeated = [name for name in dims if dims.count(name) > 1]
        if repeated:
            raise ConfigError(f"attribute '{repeated[0]}' is a dimension of one table twice")
    names = [*spec.dimensions, *(n for n in (spec.value, spec.holding, spec.weights) if n is not None)]
    for name in names:
        if name not in data.columns:
            close = [c for c in data.columns if c.lower() == name.lower()]
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ConfigError(
                f"unknown attribute '{name}': the data has no such column "
                f"(columns: {', '.join(data.columns)}){hint}"
            )
    if spec.value is not None and not data.schema[spec.value].is_numeric():
        raise InputError(f"attribute '{spec.value}' (--value) is not numeric: a magnitude table sums numbers")
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
    units: pl.DataFrame, spec: TableSpec, dims: Mapping[str, _Dimension], table: Sequence[str], top: int
) -> pl.DataFrame:
    """The cells of one table: every combination of nodes of its dimensions that holds a record.

    The nodes of a cell are packed into one integer ``code`` (mixed radix over the dimensions' node
    counts), so every group-by is on one or two integer columns; each dimension in turn replaces its
    digit by every ancestor of the leaf (itself, its subtotals, the total) and the cells are summed.
    """
    order = list(dims)
    radix = np.array([len(dims[name].labels) for name in table], dtype=np.int64)
    if float(np.prod(radix.astype(float))) >= 2**62:
        raise ConfigError(f"the table {' x '.join(table)} has too many combinations of categories to index")
    strides = np.r_[np.cumprod(radix[::-1])[::-1][1:], 1].astype(np.int64)
    code = pl.lit(0, dtype=pl.Int64)
    for name, stride in zip(table, strides, strict=True):
        code = code + pl.col(f"d{order.index(name)}").cast(pl.Int64) * int(stride)
    holding = "h" in units.columns
    sums = [pl.col("f").sum(), pl.col("v").sum(), pl.col("n").sum()]
    frame = units.with_columns(code.alias("code"))
    leaf_level = frame
    tops = top and not holding
    if tops:
        contributions = pl.col("c").repeat_by(pl.col("copies")).explode().top_k(top)
        frame = frame.group_by("code").agg(*sums, contributions.alias("tops"))
    else:
        frame = frame.group_by("code").agg(*sums)
    for name, stride, size in zip(table, strides, radix, strict=True):
        ancestors = dims[name].ancestors
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
        if tops:
            frame = frame.group_by("code").agg(*sums, pl.col("tops").explode().top_k(top))
        else:
            frame = frame.group_by("code").agg(*sums)
    if holding:
        frame = _holdings(frame.sort("code"), leaf_level, [dims[name] for name in table], strides, radix, top)
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
    from sdckit.tables._kernels import holding_contributions

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
    cells: pl.DataFrame, dims: Mapping[str, _Dimension], top: int, kind: str, value_name: str
) -> LinearTable:
    order = list(dims)
    nodes = np.column_stack([cells.get_column(f"d{j}").to_numpy() for j in range(len(order))])
    labels = pl.DataFrame(
        {name: pl.Series(name, dims[name].labels).gather(nodes[:, j]) for j, name in enumerate(order)}
    )
    relations = _relations(nodes, [dims[name] for name in order])
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


def _relations(nodes: np.ndarray, dims: Sequence[_Dimension]) -> sparse.csr_matrix:
    """One relation per cell and dimension along which the cell has children among the cells:
    ``Σ children − cell = 0``."""
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
    for j, dim in enumerate(dims):
        parent = dim.parent[nodes[:, j]]
        child = np.flatnonzero(parent >= 0)
        if child.size == 0:
            continue
        parent_keys = keys[child] + (parent[child] - nodes[child, j]) * strides[j]
        found = (
            pl.DataFrame({"key": parent_keys, "child": child})
            .join(index, on="key", how="left")
            .get_column("cell")
        )
        if found.null_count():  # cannot happen: every parent of a cell holds its records
            raise AssertionError("a cell's parent is missing")
        parents = found.to_numpy()
        unique, relation = np.unique(parents, return_inverse=True)
        rows += [relation + count, np.arange(unique.size) + count]
        cols += [child, unique]
        data += [np.ones(child.size), -np.ones(unique.size)]
        count += unique.size
    if not rows:
        return sparse.csr_matrix((0, n))
    return sparse.csr_matrix(
        (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=(count, n)
    )


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

    ``frequency``: the column of counts (default 1 per row); ``spec.value``: the column of a
    magnitude table. No contributions are known: dominance rules cannot be applied to such a table.
    """
    _check_spec(dataclasses.replace(spec, weights=None, holding=None), frame)
    if frequency is not None and frequency not in frame.columns:
        columns = ", ".join(frame.columns)
        raise ConfigError(f"unknown column '{frequency}' (--frequency): the columns are {columns}")
    dims = spec.dimensions
    text = frame.with_columns(value_strings(frame.get_column(name)).alias(name) for name in dims)
    text = text.with_row_index("_row")
    is_total = pl.lit(False)
    for name in dims:
        hierarchy = spec.hierarchies.get(name)
        total = pl.col(name) == total_label
        if hierarchy is not None:
            total = total | ~pl.col(name).is_in(list(hierarchy.labels[0]))
            known = {label for level in hierarchy.labels for label in level} | {total_label}
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
    for name in (frequency, spec.value):
        if name is None:
            continue
        column = interior.get_column(name).cast(pl.Float64, strict=False)
        _refuse_missing(column.rename(name), name)
        if bool((column < 0).any()):
            raise InputError(f"{source}: column '{name}' has negative values; cell values must be ≥ 0")
    if frequency is not None:
        counts = interior.get_column(frequency).cast(pl.Float64)
    else:
        counts = pl.Series(np.ones(interior.height))
    value = interior.get_column(spec.value).cast(pl.Float64) if spec.value is not None else counts
    dimensions, units = _dimensions(interior, spec)
    units = units.with_columns(f=counts, v=value, n=counts.round().cast(pl.Int64))
    kind = "frequency" if spec.value is None else "magnitude"
    built = _tabulate(units, spec, dimensions, 0, kind, spec.value or "frequency")
    given = text.filter(flags)
    if given.height:
        _check_totals(built, given, spec, frequency, total_label, source)
    return built


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
