"""The model every tabular method works on: cells, their additivity relations, and what protects them.

A table (or several linked tables) is a vector of cells — interior cells and every marginal and
hierarchical subtotal — with values ``a_i ≥ 0`` and a sparse linear system ``M a = 0``: one row per
additivity relation "Σ components − total = 0" (SPEC §8.1). Cells shared by linked tables are one
cell, so a method that respects ``M`` protects the linked tables consistently. Every algorithm
(audit, suppression, rounding, CTA) reads only :class:`LinearTable` and :class:`Protection`, never how
the table was built; :mod:`sdckit.tabular.build` makes them from microdata or from a table of cells.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse

from sdckit.errors import InputError

#: The label of a margin (the total over a dimension) when a dimension has no hierarchy of its own.
TOTAL = "Total"

#: Status of a cell in a protected table.
PUBLISHED, PRIMARY, SECONDARY = "published", "primary", "secondary"

#: Additivity is checked to this relative tolerance of the largest value (floating sums).
ADDITIVITY_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class LinearTable:
    """Cells with their values and additivity relations.

    ``values``: float64 ``(n,)`` cell values ``a_i`` (counts of a frequency table, sums of a magnitude
    table). ``relations``: CSR matrix ``(m, n)`` with ``+1`` for the components and ``-1`` for the
    total of each relation, so ``relations @ values == 0``. ``lower``/``upper``: the attacker's
    a-priori bounds of every cell (default ``[0, +inf)``). ``cells``: one row per cell, a column per
    dimension with the cell's label (``TOTAL``, or a hierarchy node, on a margin) and, for linked
    tables, a ``table`` column listing the tables the cell belongs to. ``frequency``: records per cell
    (weighted when the data have sampling weights). ``contributors``: contributors per cell (records,
    or holdings when contributions are grouped); ``top``: ``(n, t)`` the largest contributions per
    cell in decreasing order, 0 where a cell has fewer — what the dominance rules read; None for a
    table built without contributions. ``kind``: "frequency" or "magnitude". ``dimensions``: the
    dimension columns of ``cells`` in order.
    """

    values: np.ndarray
    relations: sparse.csr_matrix
    cells: pl.DataFrame
    dimensions: tuple[str, ...] = ()
    kind: str = "frequency"
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    frequency: np.ndarray | None = None
    contributors: np.ndarray | None = None
    top: np.ndarray | None = None
    value_name: str = "frequency"
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        values = np.ascontiguousarray(self.values, dtype=np.float64)
        object.__setattr__(self, "values", values)
        n = values.shape[0]
        relations = sparse.csr_matrix(self.relations, dtype=np.float64)
        if relations.shape[1] != n:
            raise ValueError(f"relations have {relations.shape[1]} columns for {n} cells")
        object.__setattr__(self, "relations", relations)
        if self.lower is None:
            object.__setattr__(self, "lower", np.zeros(n))
        if self.upper is None:
            object.__setattr__(self, "upper", np.full(n, np.inf))
        if self.frequency is None:
            object.__setattr__(self, "frequency", values.copy() if self.kind == "frequency" else None)
        if self.cells.height != n:
            raise ValueError(f"cells has {self.cells.height} rows for {n} cells")

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The attacker's a-priori bounds ``(lower, upper)`` of every cell (set when the table is made)."""
        assert self.lower is not None and self.upper is not None  # __post_init__ fills them
        return self.lower, self.upper

    @property
    def n_cells(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_relations(self) -> int:
        return int(self.relations.shape[0])

    def residuals(self, values: np.ndarray | None = None) -> np.ndarray:
        """``M v`` for ``v`` (default the table's values): zero where the relation holds."""
        return np.asarray(self.relations @ (self.values if values is None else values)).ravel()

    def is_additive(self, values: np.ndarray | None = None, tolerance: float = ADDITIVITY_TOLERANCE) -> bool:
        v = self.values if values is None else np.asarray(values, dtype=np.float64)
        scale = max(1.0, float(np.max(np.abs(v))) if v.size else 1.0)
        return bool(np.all(np.abs(self.residuals(v)) <= tolerance * scale * 10))

    def totals(self) -> np.ndarray:
        """Boolean ``(n,)``: the cell is the total of at least one relation (a margin or subtotal)."""
        if "totals" not in self._cache:
            coo = self.relations.tocoo()
            mask = np.zeros(self.n_cells, dtype=bool)
            mask[coo.col[coo.data < 0]] = True
            self._cache["totals"] = mask
        return self._cache["totals"]

    def neighbours(self) -> sparse.csr_matrix:
        """Cells × relations incidence (CSR of ``|M|ᵀ``): the relations each cell appears in."""
        if "incidence" not in self._cache:
            self._cache["incidence"] = sparse.csr_matrix(abs(self.relations).T)
        return self._cache["incidence"]

    def label(self, cell: int) -> str:
        """A cell as a person reads it: ``region=North, sex=Total``."""
        row = self.cells.row(cell, named=True)
        return ", ".join(f"{name}={row[name]}" for name in self.dimensions) or f"cell {cell}"

    def with_values(self, values: np.ndarray) -> LinearTable:
        """The same cells and relations with other values (a rounded or adjusted table)."""
        return LinearTable(
            values=values,
            relations=self.relations,
            cells=self.cells,
            dimensions=self.dimensions,
            kind=self.kind,
            lower=self.lower,
            upper=self.upper,
            frequency=self.frequency,
            contributors=self.contributors,
            top=self.top,
            value_name=self.value_name,
        )

    @classmethod
    def from_array(
        cls,
        interior: Any,
        names: tuple[str, ...] | None = None,
        *,
        kind: str = "frequency",
        lower: Any = None,
        upper: Any = None,
    ) -> LinearTable:
        """A table with all its margins from a dense interior array (2-D, 3-D, ...).

        Dimension ``d`` gets labels ``"1" .. "n_d"`` and ``TOTAL``; cells are in row-major order of
        the array extended by one slot per dimension for its total (the last index), so a 2×3 interior
        gives a 3×4 grid of cells whose last row and column are the margins. Used by tests and
        benchmarks; real tables come from :func:`sdckit.tabular.build.build_table`.
        """
        interior = np.asarray(interior, dtype=np.float64)
        if interior.ndim < 1:
            raise ValueError("the interior needs at least one dimension")
        if np.any(interior < 0) or not np.all(np.isfinite(interior)):
            raise InputError("cell values must be finite and non-negative")
        shape = interior.shape
        names = names or tuple(f"v{d + 1}" for d in range(len(shape)))
        full = tuple(s + 1 for s in shape)
        values = np.zeros(full)
        values[tuple(slice(0, s) for s in shape)] = interior
        for d, s in enumerate(shape):
            index = [slice(None)] * len(shape)
            index[d] = s
            total = values.sum(axis=d, where=_not_total(full, d))
            values[tuple(index)] = total
        index_of = np.arange(int(np.prod(full))).reshape(full)
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        data: list[np.ndarray] = []
        relation = 0
        for d, s in enumerate(shape):
            others = [range(f) for k, f in enumerate(full) if k != d]
            for rest in itertools.product(*others):
                line: list[int | slice] = list(rest)
                line.insert(d, slice(None))
                members = index_of[tuple(line)]
                rows.append(np.full(s + 1, relation))
                cols.append(members)
                data.append(np.r_[np.ones(s), -1.0])
                relation += 1
        relations = sparse.csr_matrix(
            (np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
            shape=(relation, index_of.size),
        )
        grids = np.meshgrid(*[np.arange(f) for f in full], indexing="ij")
        cells = pl.DataFrame(
            {
                name: np.where(grid.ravel() == s, TOTAL, (grid.ravel() + 1).astype(str))
                for name, grid, s in zip(names, grids, shape, strict=True)
            }
        )
        return cls(
            values=values.ravel(),
            relations=relations,
            cells=cells,
            dimensions=tuple(names),
            kind=kind,
            lower=None if lower is None else np.broadcast_to(np.asarray(lower, float), values.size).copy(),
            upper=None if upper is None else np.broadcast_to(np.asarray(upper, float), values.size).copy(),
        )


def _not_total(full: tuple[int, ...], d: int) -> np.ndarray:
    mask = np.ones(full, dtype=bool)
    index: list[int | slice] = [slice(None)] * len(full)
    index[d] = full[d] - 1
    mask[tuple(index)] = False
    return mask


@dataclass(frozen=True, eq=False)
class Protection:
    """Which cells are sensitive, by which rule, and how far an attacker must be kept from them.

    ``primary``: boolean ``(n,)``; ``upper``/``lower``: the upper and lower protection levels UPL and
    LPL (≥ 0; 0 where not primary): a published pattern protects cell ``p`` when the attacker's
    feasibility interval reaches ``a_p + UPL_p`` above and ``a_p − LPL_p`` below; ``sliding``: the
    sliding protection level SPL (minimum interval width). ``rule``: the rule that flagged each cell
    (``""`` when none; several joined by ``+``).
    """

    primary: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    sliding: np.ndarray
    rule: np.ndarray

    @classmethod
    def none(cls, n: int) -> Protection:
        return cls(
            primary=np.zeros(n, dtype=bool),
            upper=np.zeros(n),
            lower=np.zeros(n),
            sliding=np.zeros(n),
            rule=np.full(n, "", dtype=object),
        )

    @classmethod
    def of_cells(
        cls,
        n: int,
        cells: Any,
        upper: Any,
        lower: Any | None = None,
        sliding: Any = 0.0,
        rule: str = "manual",
    ) -> Protection:
        """Cells ``cells`` (indices) primary with the given levels (scalars or one per cell)."""
        protection = cls.none(n)
        cells = np.asarray(cells, dtype=np.int64)
        protection.primary[cells] = True
        protection.upper[cells] = upper
        protection.lower[cells] = upper if lower is None else lower
        protection.sliding[cells] = sliding
        protection.rule[cells] = rule
        return protection

    @property
    def cells(self) -> np.ndarray:
        """Indices of the primary cells."""
        return np.flatnonzero(self.primary)


@dataclass(frozen=True, eq=False)
class AuditResult:
    """The attacker's feasibility interval of every suppressed cell (SPEC §8.3).

    ``low``/``high``: ``(n,)`` the interval ``[y̲_i, ȳ_i]`` of every suppressed cell (``high`` is
    ``inf`` when unbounded), the published value for a published cell. ``protected``: ``(n,)`` True
    for a primary cell whose interval covers its protection interval (True for non-primary cells);
    ``disclosed``: ``(n,)`` a suppressed cell whose interval is a single value (exact disclosure).
    ``exact``: ``low``/``high`` are the exact intervals; when False the verdicts are exact but an
    interval may be an inner bound (an LP whose verdict earlier solutions settled was skipped).
    """

    suppressed: np.ndarray
    low: np.ndarray
    high: np.ndarray
    protected: np.ndarray
    disclosed: np.ndarray
    exact: bool = True

    @property
    def passed(self) -> bool:
        return bool(self.protected.all() and not self.disclosed.any())

    @property
    def failures(self) -> np.ndarray:
        """Indices of primary cells not protected, and of suppressed cells exactly disclosed."""
        return np.flatnonzero(~self.protected | self.disclosed)
