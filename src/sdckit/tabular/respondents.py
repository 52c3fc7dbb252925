"""The respondent attacker: a contributor to the table who subtracts what they know of their own
cells (issue 31; sdcTable's ``detectSingletons``, τ-Argus's singleton and holding options).

The outside attacker (:mod:`sdckit.tabular.attacker`) knows the published cells, the additivity
relations and the a-priori bounds. A respondent knows more: their own contribution to the cells
they are in. A cell with a single contributor is known exactly to that contributor (a *singleton*),
so two suppressed singletons in one relation (``a + c = 2``, each with one contributor) let each
recompute the other, a pattern the outside attacker's linear programs approve. For every primary
cell, the protection interval must also hold against:

(a) the outside attacker (the audit of :mod:`sdckit.tabular.attacker`);
(b) each single contributor (``singletons="protect"``): the largest contributor of a suppressed cell
    knows the cell is at least their contribution, and the only contributor of a cell knows it
    exactly — together with every cell above it that has no other contributor (a total whose
    records are all theirs); with holdings (``--holding``), a holding is one respondent: it knows its
    summed contribution to every cell it is in, several cells at once when it spans them, exactly
    where it is the only contributor;
(c) a coalition of the ``n`` largest contributors of a cell the (n,k)-dominance rule flagged (``n``
    from the rule; ``coalition=N`` makes it the N largest of every suppressed cell): it knows the
    cell is at least their summed contributions, exactly when they are all its contributors.

A respondent attacks every primary cell but its own — the cells it contributes to and every total
above them: the protection level of a cell already accounts for its own contributors (that is what
the p%, pq and (n,k) levels are computed for). Its
knowledge enters the attacker's linear program as tighter a-priori bounds of the cells it knows
(``lower = known part``; ``lower = upper = value`` where exact); nothing else changes, so the audit
is the outside attacker's audit of a table with those bounds (:func:`sdckit.tabular.attacker.attack`),
on the components of suppressed cells the respondent knows a cell of. A respondent whose knowledge
the outside attacker's interval already implies (its known part is at most the interval's lower end)
is skipped: a constraint the polytope already satisfies changes no interval.

Respondents are placed on interior cells, where who contributes is known: the largest
contributors of a total sit in cells below it that the per-cell contributions do not name, and
their knowledge of the total follows from that of their interior cells through the relations.

Frequency tables: a record contributes 1, so a contributor knows their cell is at least 1 and a cell
with a count of one exactly (sdcTable applies its singleton detection to counts alike). Tables read
as cells (``--cells``) know no contributors: there is no respondent attacker to run.

Not covered: holdings that span several cells of linked tables (each table's cells are known to the
holding through its per-cell contributions only), and coalitions of contributors of different cells.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import AfterValidator, Field
from scipy import sparse

from sdckit.errors import ConfigError
from sdckit.tabular.attacker import attack
from sdckit.tabular.model import LinearTable, Protection

Singletons = Literal["protect", "none"]


def _coalition_size(value: int) -> int:
    if value == 1:
        raise ValueError("must be 0 (none) or a number of contributors ≥ 2")
    return value


#: The ``coalition`` parameter of suppression and of its audit: 0 (none) or 2 to 100 contributors.
Coalition = Annotated[int, Field(ge=0, le=100), AfterValidator(_coalition_size)]


@dataclass(frozen=True)
class Respondent:
    """An insider and what they know: ``known[j]`` of cell ``cells[j]`` (a lower bound of its
    value), ``exact[j]`` when they know the cell exactly; ``name`` says who, for messages."""

    name: str
    cells: np.ndarray
    known: np.ndarray
    exact: np.ndarray


@dataclass(frozen=True)
class RespondentFailure:
    """Primary cell ``cell`` is not protected against ``respondent``: its interval ``[low, high]``."""

    cell: int
    respondent: str
    low: float
    high: float


def _union_singletons(table: LinearTable, single: np.ndarray) -> list[np.ndarray]:
    """Cells with one contributor grouped by who that contributor is: a total with one contributor
    and its one non-empty component cell have the same one."""
    n = table.n_cells
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    relations = table.relations.tocsr()
    contributors = _contributors(table)
    for r in range(relations.shape[0]):
        start, end = relations.indptr[r], relations.indptr[r + 1]
        members, signs = relations.indices[start:end], relations.data[start:end]
        totals = members[signs < 0]
        if totals.size != 1 or not single[totals[0]]:
            continue
        present = members[(signs > 0) & (contributors[members] > 0)]
        if present.size == 1 and single[present[0]]:
            a, b = find(int(totals[0])), find(int(present[0]))
            parent[a] = b
    roots = np.array([find(int(i)) for i in np.flatnonzero(single)], dtype=np.int64)
    cells = np.flatnonzero(single)
    order = np.argsort(roots, kind="stable")
    bounds = np.flatnonzero(np.diff(roots[order])) + 1
    return [cells[group] for group in np.split(order, bounds)] if cells.size else []


def _contributors(table: LinearTable) -> np.ndarray:
    if table.contributors is not None:
        return np.asarray(table.contributors, dtype=np.float64)
    if table.frequency is not None:
        return np.rint(np.asarray(table.frequency, dtype=np.float64))
    return np.zeros(table.n_cells)


def has_contributors(table: LinearTable) -> bool:
    """Whether the table knows its contributors (built from microdata)."""
    return table.contributors is not None or (table.kind == "frequency" and table.frequency is not None)


def respondents(
    table: LinearTable,
    protection: Protection,
    suppressed: np.ndarray,
    *,
    singletons: Singletons = "protect",
    coalition: int = 0,
    holdings: list[Respondent] | None = None,
) -> list[Respondent]:
    """The respondents whose knowledge touches a suppressed cell of pattern ``suppressed``.

    ``singletons`` and ``coalition`` are checked by the rules of the parameters of ``suppress`` and
    ``audit`` (:data:`Singletons`, :data:`Coalition`): a :class:`~sdckit.errors.ConfigError`
    naming the bad one."""
    from sdckit.tabular.suppression import SuppressParams

    SuppressParams.parse({"singletons": singletons, "coalition": coalition}, method="suppress")
    if not has_contributors(table):
        return []
    a = table.values
    contributors = _contributors(table)
    out: list[Respondent] = []
    if singletons == "protect":
        single = contributors == 1
        # a singleton whose contributor is a holding that spans several cells is that holding
        covered = np.zeros(table.n_cells, dtype=bool)
        for holding in holdings or []:
            covered[holding.cells[holding.exact]] = True
        for group in _union_singletons(table, single):
            if covered[group].any():
                continue
            if suppressed[group].any():
                out.append(
                    Respondent(
                        f"the only contributor of {table.label(int(group[0]))}",
                        group,
                        a[group].copy(),
                        np.ones(group.size, dtype=bool),
                    )
                )
        if holdings:
            out.extend(h for h in holdings if suppressed[h.cells].any())
        interior = ~table.totals()
        several = np.flatnonzero(suppressed & interior & (contributors >= 2))
        largest = table.top[several, 0] if table.top is not None else np.ones(several.size)
        for cell, known in zip(several, largest, strict=True):
            if known > 0:
                out.append(
                    Respondent(
                        f"the largest contributor of {table.label(int(cell))}",
                        np.array([cell]),
                        np.array([float(known)]),
                        np.zeros(1, dtype=bool),
                    )
                )
    sizes = np.zeros(table.n_cells, dtype=np.int64)
    for rule in set(protection.rule.tolist()) if protection.rule.size else ():
        for part in str(rule).split("+"):
            if part.startswith("n="):
                n = int(part.split(",")[0][2:])
                flagged = np.array([part in str(r).split("+") for r in protection.rule])
                sizes[flagged] = np.maximum(sizes[flagged], n)
    if coalition >= 2:
        sizes = np.maximum(sizes, coalition)
    for cell in np.flatnonzero(suppressed & ~table.totals() & (sizes >= 2)):
        n = int(sizes[cell])
        if contributors[cell] <= 1:
            continue  # a singleton: (b) covers it
        exact = bool(contributors[cell] <= n)
        if table.top is not None and table.top.shape[1] < n and not exact:
            raise ConfigError(
                f"a coalition of {n} contributors needs the {n} largest contributions of every cell; the "
                f"table keeps {table.top.shape[1]} (build it with top={n}: with_contributions)"
            )
        known = float(table.top[cell, :n].sum()) if table.top is not None else float(min(n, a[cell]))
        if exact:
            known = float(a[cell])
        out.append(
            Respondent(
                f"the {min(n, int(contributors[cell]))} largest contributors of {table.label(int(cell))}",
                np.array([cell]),
                np.array([known]),
                np.array([exact]),
            )
        )
    return out


def holding_respondents(source: Any, spec: Any, table: LinearTable) -> list[Respondent]:
    """Holdings that contribute to two or more interior cells of a single table, each one respondent
    knowing its summed contribution to every such cell (exactly where it is the only contributor).
    Empty for a table without holdings, or for linked tables (see the module docstring)."""
    if source is None or spec is None or spec.holding is None or len(spec.tables) != 1:
        return []
    from sdckit.table import value_strings

    dims = list(spec.tables[0])
    data = source.data
    value = (
        data.get_column(spec.value).cast(pl.Float64).fill_null(0.0)
        if spec.value is not None
        else pl.Series(np.ones(data.height))
    )
    records = pl.DataFrame(
        {
            **{name: value_strings(data.get_column(name)) for name in dims},
            "_holding": data.get_column(spec.holding).cast(pl.String),
            "_value": value,
        }
    )
    cells = table.cells.select(dims).with_row_index("_cell").with_columns(pl.col(dims).cast(pl.String))
    joined = records.join(cells, on=dims, how="inner")
    sums = joined.group_by("_holding", "_cell").agg(pl.col("_value").sum())
    spread = sums.group_by("_holding").agg(pl.len().alias("_cells")).filter(pl.col("_cells") >= 2)
    if spread.height == 0:
        return []
    sums = sums.join(spread.select("_holding"), on="_holding").sort("_holding", "_cell")
    contributors = _contributors(table)
    out = []
    for (holding,), group in sums.group_by(["_holding"], maintain_order=True):
        cell_index = group.get_column("_cell").to_numpy().astype(np.int64)
        out.append(
            Respondent(
                f"holding {holding}",
                cell_index,
                group.get_column("_value").to_numpy().astype(np.float64),
                contributors[cell_index] == 1,
            )
        )
    return out


def with_contributions(source: Any, spec: Any, table: LinearTable, n: int) -> LinearTable:
    """``table`` with the ``n`` largest contributions of every cell (rebuilt from the microdata when
    it keeps fewer), what a coalition of ``n`` contributors knows."""
    if table.top is None or table.top.shape[1] >= n or source is None or spec is None:
        return table
    from sdckit.tabular.build import build_table

    rebuilt = build_table(source, dataclasses.replace(spec, top=n))
    if rebuilt.n_cells != table.n_cells:
        raise AssertionError("the cells differ between two builds of one table")
    return dataclasses.replace(table, top=rebuilt.top)


def knowing(table: LinearTable, respondent: Respondent) -> LinearTable:
    """``table`` with the a-priori bounds the respondent knows."""
    lower, upper = (bound.copy() for bound in table.bounds())
    cells = respondent.cells
    lower[cells] = np.maximum(lower[cells], np.minimum(respondent.known, table.values[cells]))
    exact = cells[respondent.exact]
    lower[exact] = table.values[exact]
    upper[exact] = table.values[exact]
    return dataclasses.replace(table, lower=lower, upper=upper)


def above(table: LinearTable, cells: np.ndarray) -> np.ndarray:
    """``cells`` and every cell above them: the totals of the relations they are components of, and
    so on up (a respondent's contribution to a cell is also one to each of those)."""
    relations = table.relations
    if "parents" not in table._cache:
        coo = relations.tocoo()
        totals = np.full(relations.shape[0], -1, dtype=np.int64)
        totals[coo.row[coo.data < 0]] = coo.col[coo.data < 0]
        members = coo.data > 0
        child, parent = coo.col[members], totals[coo.row[members]]
        keep = parent >= 0
        table._cache["parents"] = sparse.csr_matrix(
            (np.ones(int(keep.sum()), dtype=bool), (child[keep], parent[keep])),
            shape=(table.n_cells, table.n_cells),
        )
    parents = table._cache["parents"]
    reached = np.zeros(table.n_cells, dtype=bool)
    frontier = np.unique(np.asarray(cells, dtype=np.int64))
    while frontier.size:
        reached[frontier] = True
        nxt = np.unique(parents[frontier].indices)
        frontier = nxt[~reached[nxt]]
    return np.flatnonzero(reached)


def without_own(table: LinearTable, protection: Protection, respondent: Respondent) -> Protection:
    """The primary cells a respondent attacks: every one but the cells it contributes to (its cells
    and every total above them), whose protection levels already reckon with their contributors."""
    primary = protection.primary.copy()
    primary[above(table, respondent.cells)] = False
    return dataclasses.replace(protection, primary=primary)


def respondent_attack(
    table: LinearTable,
    suppressed: np.ndarray,
    protection: Protection,
    found: list[Respondent],
    outside_low: np.ndarray | None = None,
    outside_high: np.ndarray | None = None,
) -> list[RespondentFailure]:
    """The primary cells some respondent un-protects under pattern ``suppressed``, with who.

    ``outside_low``/``outside_high``: the outside attacker's intervals (the respondents whose
    knowledge they already imply are skipped); computed when not given."""
    suppressed = np.asarray(suppressed, dtype=bool)
    if not found or not protection.primary.any():
        return []
    if outside_low is None or outside_high is None:
        outside = attack(table, suppressed, protection, exact=True)
        outside_low, outside_high = outside.low, outside.high
    failures: list[RespondentFailure] = []
    seen: set[tuple[int, str]] = set()
    tolerance = 1e-9 * max(1.0, float(np.max(np.abs(table.values))) if table.n_cells else 1.0)
    for respondent in found:
        cells = respondent.cells
        hidden = suppressed[cells]
        if not hidden.any():
            continue
        new = (respondent.known > outside_low[cells] + tolerance) | (
            respondent.exact & (outside_high[cells] > table.values[cells] + tolerance)
        )
        if not (new & hidden).any():
            continue
        attacked = without_own(table, protection, respondent)
        if not (attacked.primary & suppressed).any():
            continue
        focus = np.zeros(table.n_cells, dtype=bool)
        focus[cells[hidden]] = True
        result = attack(knowing(table, respondent), suppressed, attacked, exact=False, focus=focus)
        for cell in np.flatnonzero(attacked.primary & suppressed & ~result.protected):
            key = (int(cell), respondent.name)
            if key not in seen:
                seen.add(key)
                failures.append(
                    RespondentFailure(
                        int(cell), respondent.name, float(result.low[cell]), float(result.high[cell])
                    )
                )
    return failures


__all__ = [
    "Respondent",
    "RespondentFailure",
    "Singletons",
    "above",
    "has_contributors",
    "holding_respondents",
    "knowing",
    "respondent_attack",
    "respondents",
    "with_contributions",
    "without_own",
]
