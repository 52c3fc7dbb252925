"""Secondary cell suppression (SPEC §8.4–8.5): the cheapest set of further cells to suppress so that
every primary cell's attacker interval covers its protection interval (``sdckit table suppress``).

Two algorithms, both on any :class:`~sdckit.tables.model.LinearTable` (2-D, n-D, hierarchical and
linked tables alike: they read only the relations):

* **optimal** — the exact model of SPEC §8.4 solved as Fischetti & Salazar-González (2001) do, by
  Benders decomposition instead of the compact model (whose ``O(|P|·N)`` continuous variables run to
  millions on a 50×50 table with a few hundred primary cells). The master problem has only the
  binaries ``x_i`` (``x_p = 1`` for primary cells) and minimizes ``Σ w_i x_i``; for a master
  solution ``x*`` the attacker LP of every primary cell ``p`` and side is solved with capacities
  ``(ub_i − a_i)·x*_i`` above and ``(a_i − lb_i)·x*_i`` below. When its optimum falls short of the
  protection level, LP duality gives the violated *capacity cut*: with the row duals ``λ`` and the
  reduced costs ``d = c − Mᵀλ`` of that LP, ``Σ_i (d_i⁺ (a_i − lb_i) + d_i⁻ (ub_i − a_i)) x_i ≥ UPL_p``
  (LPL_p for the lower side; the sum of both for the sliding level), valid for every protecting
  pattern by weak duality; a coefficient is capped at the right-hand side (valid for binaries, and
  it makes an infinite bound ``ub_i = ∞`` exact instead of a big-M). The master also holds the
  valid inequalities "a suppressed cell is not alone in any relation" (``x_i ≤ Σ_{j∈r, j≠i} x_j``):
  an optimal pattern never has an exactly disclosed secondary cell, since publishing it leaves the
  attacker's polytope as it is and costs less. Cuts are first generated on the LP relaxation
  (cheap rounds), then on integer master solutions until none is violated: the pattern is then
  optimal (to the MIP gap asked). The heuristic's pattern is the starting incumbent; on the time
  limit the best protected pattern found is returned with ``optimal = False`` and the master's
  lower bound.
* **heuristic** — SPEC §8.5 on relations instead of 2-D lines: the sweep "no relation holds exactly
  one suppressed cell" (add its cheapest unsuppressed cell, relations in order, until stable), then
  the audit, then a repair of every unprotected primary cell, and again, until the audit passes.
  SPEC's repair (add the cheapest cell sharing a relation with ``p``) is ``repair="neighbour"``; the
  LP repair (``repair="lp"``) solves, for an unprotected ``p`` and side, the cheapest deviation
  ``z`` with ``M z = 0``, ``z_p ≥ UPL_p`` (or ``≤ −LPL_p``) within the attacker's bounds, costing
  ``w_i |z_i|`` on published cells and nothing on suppressed ones (the min-cost-flow relaxation of
  Kelly, Golden & Assad's network heuristic, on any relations); the published cells it moves are
  suppressed, and ``z`` then witnesses that ``p`` is protected on that side. Secondary cells the
  final audit finds exactly disclosed are published again (that changes no interval); below
  ``REPAIR_LP_LIMIT``, every secondary cell, most expensive first, is then published again when the primary
  cells stay protected without it (with the cells that leaves exactly disclosed): a minimal pattern.
  ``repair="auto"`` (the default): when ``|P|·N ≤ REPAIR_LP_LIMIT`` the cheapest of the LP repair
  after SPEC's sweep, the LP repair alone (no sweep: in 3-D tables the sweep's chains of secondary
  cells cost about twice as much) and SPEC's sweep with its neighbour repair, all pruned; above
  it SPEC's sweep and neighbour repair, unpruned (the LP per unprotected cell over a large table is
  too slow; 3-D tables have no cycle within two relations of a cell, so the LP cannot be made
  local).

Costs ``w_i``: ``value`` = ``a_i``, ``cells`` = 1, ``log`` = ``log(1 + a_i)``, or the caller's
weights; a cell of cost 0 (a zero cell under ``value`` or ``log``) costs 1e-3 times the smallest
positive cost instead, so that suppressing it is cheap but not free. The reported ``cost`` is that of
the secondary cells (the primary cells are suppressed in every pattern).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from numba import njit
from pydantic import Field
from scipy import sparse

from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams
from sdckit.tables.audit import (
    PROTECTION_TOLERANCE,
    ComponentLP,
    attack,
    audit,
    build_lp,
    components,
    deviation_bounds,
    interval,
    new_highs,
    targets,
)
from sdckit.tables.base import TableProblem, TableResult, pattern_status, register_table_method
from sdckit.tables.model import LinearTable, Protection

#: ``algorithm="auto"`` runs the optimal algorithm when ``|P| · N`` (primary cells times cells) is at
#: most this (measured: see benchmarks/_tables_suppression.py), the heuristic above it.
AUTO_OPTIMAL_LIMIT = 400_000
#: ``auto`` gives the optimal search at most this many seconds (it starts from the heuristic's
#: pattern and keeps the best found, so stopping early is never worse than the heuristic); a small
#: 3-D table can keep the exact search busy for minutes (10 x 10 x 12: not proven in 300 s).
AUTO_TIME_LIMIT = 30.0
#: The final audit gives the exact interval of every suppressed cell up to this many suppressed
#: cells; above, it settles every verdict (the pattern passes or not, exactly) but skips the LPs
#: whose verdict is known, and the intervals are left to ``sdckit table audit``: on a 3-D table with
#: 6,315 suppressed cells the exact intervals took 222 s, the heuristic that found them 70 s.
EXACT_AUDIT_LIMIT = 2_000

#: The heuristic repairs with the LP when ``|P| · N`` is at most this, with SPEC §8.5's cheapest
#: neighbour above (an LP over the whole table per unprotected cell and side: ~0.1 s at 3,500 cells
#: of a 3-D table, where no cycle lies within two relations of a cell).
REPAIR_LP_LIMIT = 1_000_000

#: The cost of a zero-cost cell, relative to the smallest positive cost.
ZERO_COST = 1e-3

Cost = Literal["value", "cells", "log"]
Algorithm = Literal["auto", "optimal", "heuristic"]


def cell_weights(table: LinearTable, cost: str = "value", weights: Any = None) -> np.ndarray:
    """The cost ``w_i`` of suppressing each cell (``weights`` when given, else by ``cost``)."""
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (table.n_cells,):
            raise ConfigError(f"weights has {w.size} values for a table of {table.n_cells} cells")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ConfigError("weights must be finite and non-negative")
    elif cost == "value":
        w = np.abs(table.values).copy()
    elif cost == "cells":
        w = np.ones(table.n_cells)
    elif cost == "log":
        w = np.log1p(np.abs(table.values))
    else:
        raise ConfigError(f"cost must be value, cells or log, got {cost!r}")
    positive = w[w > 0]
    floor = ZERO_COST * (float(positive.min()) if positive.size else 1.0)
    return np.where(w > 0, w, floor)


# ---------------------------------------------------------------------------------------------------
# heuristic


@njit(cache=True)
def _sweep(indptr: np.ndarray, indices: np.ndarray, w: np.ndarray, suppressed: np.ndarray) -> int:
    """SPEC §8.5's inner loop: while a relation holds exactly one suppressed cell, suppress its
    cheapest unsuppressed cell (ties: lowest index; cells of infinite cost never); relations in order.
    Returns the number of cells added."""
    added = 0
    changed = True
    m = indptr.shape[0] - 1
    while changed:
        changed = False
        for r in range(m):
            count = 0
            for k in range(indptr[r], indptr[r + 1]):
                if suppressed[indices[k]]:
                    count += 1
                    if count > 1:
                        break
            if count != 1:
                continue
            best = -1
            for k in range(indptr[r], indptr[r + 1]):
                j = indices[k]
                if suppressed[j] or not np.isfinite(w[j]):
                    continue
                if best < 0 or w[j] < w[best] or (w[j] == w[best] and j < best):
                    best = j
            if best >= 0:
                suppressed[best] = True
                added += 1
                changed = True
    return added


class _RepairLP:
    """The cheapest deviation that protects one side of one primary cell: ``M (z⁺ − z⁻) = 0``,
    ``0 ≤ z⁺ ≤ ub − a``, ``0 ≤ z⁻ ≤ a − lb``, cost ``w`` per unit on published cells, 0 on suppressed
    ones. Solved first on the cells at most two relations away from the cell (the others stay
    published: a witness there is a witness in the whole table; cycles of 2-D, n-D and hierarchical
    tables lie there), on the whole table only when that local LP has no solution."""

    def __init__(self, table: LinearTable, w: np.ndarray, down: np.ndarray, up: np.ndarray) -> None:
        self.table = table
        self.n = table.n_cells
        self.w = w
        self.down, self.up = down, up
        self.relations = table.relations
        self.relations_csc = sparse.csc_matrix(table.relations)
        self.incidence = table.neighbours()
        self.suppressed = np.zeros(self.n, dtype=bool)
        self.local = True

    def set_suppressed(self, suppressed: np.ndarray) -> None:
        self.suppressed = suppressed

    def _near(self, cells: np.ndarray) -> np.ndarray:
        rows = np.unique(self.incidence[cells].indices)
        return np.unique(self.relations[rows].indices)

    def witness(self, p: int, side: int, level: float) -> tuple[np.ndarray, np.ndarray] | None:
        """``(cells, z)``: the cells the cheapest deviation with ``z_p ≥ level`` (side +1) or
        ``≤ −level`` (side −1) moves, and its values there; None when no deviation reaches it."""
        if self.local:
            local = self._near(self._near(np.array([p])))
            found = self._solve(local, p, side, level)
            if found is not None or local.size == self.n:
                return found
            self.local = False  # no cycle that close (a 3-D table): stop trying
        return self._solve(np.arange(self.n), p, side, level)

    def _solve(
        self, cells: np.ndarray, p: int, side: int, level: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        from scipy.optimize import linprog

        sub = self.relations_csc[:, cells]
        rows = np.flatnonzero(np.diff(sparse.csr_matrix(sub).indptr) > 0)
        sub = sub[rows]
        k = cells.size
        cost = np.where(self.suppressed[cells], 0.0, self.w[cells])
        upper = np.r_[self.up[cells], self.down[cells]]
        lower = np.zeros(2 * k)
        j = int(np.flatnonzero(cells == p)[0])
        if side == 1:
            lower[j], upper[k + j] = level, 0.0
        else:
            upper[j], lower[k + j] = 0.0, level
        if np.any(lower > upper):
            return None
        bounds = np.c_[lower, upper]
        result = linprog(
            np.r_[cost, cost],
            A_eq=sparse.hstack([sub, -sub], format="csc"),
            b_eq=np.zeros(rows.size),
            bounds=bounds,
            method="highs-ds",
        )
        if result.status != 0:
            return None
        z = result.x[:k] - result.x[k:]
        moved = np.abs(result.x[:k]) + np.abs(result.x[k:]) > 1e-9 * max(1.0, level)
        return cells[moved], z[moved]


def _unprotectable(table: LinearTable, protection: Protection, p: int) -> InputError:
    low, high = interval(table, np.ones(table.n_cells, dtype=bool), p)
    a = table.values[p]
    return InputError(
        f"cell {table.label(p)} cannot be protected: even with every cell suppressed its interval is "
        f"[{low:g}, {high:g}], its protection interval [{a - protection.lower[p]:g}, "
        f"{a + protection.upper[p]:g}] (width {protection.sliding[p]:g}) needs more"
    )


def _side_levels(table: LinearTable, protection: Protection, p: int, result: Any) -> list[tuple[int, float]]:
    """The sides ``(±1, level)`` on which primary ``p`` falls short in audit ``result``."""
    a = table.values[p]
    upl, lpl, spl = protection.upper[p], protection.lower[p], protection.sliding[p]
    tol = PROTECTION_TOLERANCE * max(1.0, abs(a) + max(upl, lpl))
    high, low = (
        result.high[p] - a if result.suppressed[p] else 0.0,
        result.low[p] - a if result.suppressed[p] else 0.0,
    )
    width = high - low
    up_level, down_level = upl, lpl
    if spl > upl + lpl:  # the sliding level asks for more than both sides: ask it of the upper side
        up_level = spl - lpl
    if up_level <= 0 and down_level <= 0:  # only "not exactly disclosed": any movement will do
        up_level = min(1e-3 * max(1.0, abs(a)), float(deviation_bounds(table)[1][p]))
        if up_level <= 0:
            down_level = min(1e-3 * max(1.0, abs(a)), float(deviation_bounds(table)[0][p]))
    sides = []
    if up_level > 0 and (high < up_level - tol or width < spl - tol or width <= 0):
        sides.append((1, up_level))
    if down_level > 0 and (-low < down_level - tol or width < spl - tol or width <= 0):
        sides.append((-1, down_level))
    return sides


def heuristic_pattern(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    *,
    repair: str = "auto",
    start: np.ndarray | None = None,
) -> np.ndarray:
    """SPEC §8.5 generalized to relations (see the module docstring); the pattern passes the audit.
    ``start``: a pattern to complete instead of the primary cells alone. ``repair``: ``lp``,
    ``neighbour`` or ``auto`` — when ``|P|·N ≤ REPAIR_LP_LIMIT`` the cheapest of three patterns:
    the LP repair after SPEC's sweep, the LP repair alone (no sweep, primary by primary) and SPEC's
    sweep with the neighbour repair, each pruned; above, the sweep with SPEC's neighbour repair."""
    if repair not in ("auto", "lp", "neighbour"):
        raise ConfigError(f"repair must be auto, lp or neighbour, got {repair!r}")
    small = int(protection.primary.sum()) * table.n_cells <= REPAIR_LP_LIMIT
    if repair == "auto" and not small:
        return _heuristic(table, protection, w, repair="neighbour", start=start, sweep=True, prune=False)
    if repair == "auto":
        patterns = [
            _heuristic(table, protection, w, repair=kind, start=start, sweep=sweep, prune=True)
            for kind, sweep in (("lp", True), ("lp", False), ("neighbour", True))
        ]
        return min(patterns, key=lambda mask: float(w[mask].sum()))
    return _heuristic(table, protection, w, repair=repair, start=start, sweep=True, prune=small)


def _heuristic(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    *,
    repair: str,
    start: np.ndarray | None,
    sweep: bool,
    prune: bool,
    max_rounds: int = 1000,
) -> np.ndarray:
    suppressed = protection.primary.copy() if start is None else start | protection.primary
    down, up = deviation_bounds(table)
    movable = (down > 0) | (up > 0)
    w_sweep = np.where(movable, w, np.inf)
    relations = table.relations
    incidence = table.neighbours()
    repairer: _RepairLP | None = None
    # Suppressing more cells only frees the attacker's variables, so an interval never shrinks: a
    # primary cell once protected stays protected, and each round attacks only the cells that failed
    # the last one (on the components that hold them).
    pending = protection.primary.copy()
    for _ in range(max_rounds):
        if sweep:
            _sweep(relations.indptr, relations.indices, w_sweep, suppressed)
        result = attack(
            table, suppressed, dataclasses.replace(protection, primary=pending), exact=False, focus=pending
        )
        failing = np.flatnonzero(pending & ~result.protected)
        pending = np.zeros_like(pending)
        pending[failing] = True
        if failing.size == 0:
            break
        added = 0
        # deviations found by the repair LPs are feasible for the attacker once their cells are
        # suppressed: they settle the sides of other primary cells they reach
        reach_up, reach_down = np.zeros(table.n_cells), np.zeros(table.n_cells)
        for p in failing:
            if repair == "neighbour":
                rows = incidence.indices[incidence.indptr[p] : incidence.indptr[p + 1]]
                near = np.unique(relations[rows].indices)
                near = near[~suppressed[near] & np.isfinite(w_sweep[near])]
                if near.size:
                    suppressed[near[np.argmin(w_sweep[near])]] = True  # argmin: lowest index on ties
                    added += 1
                    continue
            if repairer is None:
                repairer = _RepairLP(table, w, down, up)
            repairer.set_suppressed(suppressed)
            for side, level in _side_levels(table, protection, int(p), result):
                reached = reach_up[p] if side == 1 else reach_down[p]
                if reached >= level and protection.sliding[p] <= 0:
                    continue
                found = repairer.witness(int(p), side, level)
                if found is None:
                    raise _unprotectable(table, protection, int(p))
                cells, z = found
                np.maximum.at(reach_up, cells, z)
                np.maximum.at(reach_down, cells, -z)
                new = cells[~suppressed[cells]]
                suppressed[new] = True
                added += new.size
                repairer.set_suppressed(suppressed)
        if added == 0:
            raise _unprotectable(table, protection, int(failing[0]))
    else:
        raise InputError(f"the suppression heuristic did not converge in {max_rounds} rounds")
    suppressed = _publish_disclosed(table, protection, suppressed)
    if prune:
        suppressed = _prune(table, protection, w, suppressed)
    return suppressed


def _prune(table: LinearTable, protection: Protection, w: np.ndarray, suppressed: np.ndarray) -> np.ndarray:
    """Publish again, most expensive first, every secondary cell the primary cells stay protected
    without (the audit of the component it belonged to), with the secondary cells that this leaves
    exactly disclosed: a greedy descent to a minimal pattern."""
    suppressed = suppressed.copy()
    secondary = np.flatnonzero(suppressed & ~protection.primary)
    for i in secondary[np.argsort(-w[secondary], kind="stable")]:
        groups = components(table.relations, suppressed)
        c = groups.of_cell[i]
        focus = np.zeros(table.n_cells, dtype=bool)
        if c >= 0:
            focus[groups.cells[c]] = True
        if not suppressed[i]:
            continue  # published already, as exactly disclosed after an earlier removal
        suppressed[i] = False
        result = attack(table, suppressed, protection, exact=False, focus=focus)
        if result.protected.all():
            # secondary cells the removal leaves exactly disclosed are fixed: publishing them changes
            # no interval (that is how the sweep's chains of secondary cells go away)
            suppressed &= ~(result.disclosed & ~protection.primary)
        else:
            suppressed[i] = True
    return suppressed


def _publish_disclosed(table: LinearTable, protection: Protection, suppressed: np.ndarray) -> np.ndarray:
    """Publish again the secondary cells the attacker can compute exactly (no interval changes)."""
    result = attack(table, suppressed, protection, exact=False)
    secondary_disclosed = result.disclosed & ~protection.primary
    if secondary_disclosed.any():
        suppressed = suppressed & ~secondary_disclosed
    return suppressed


# ---------------------------------------------------------------------------------------------------
# optimal: Benders decomposition (Fischetti & Salazar-González 2001)


class _Master:
    """The master problem over the binaries ``x`` (HiGHS): minimize ``Σ w x`` subject to the
    relation inequalities and the capacity cuts found so far."""

    def __init__(
        self, table: LinearTable, protection: Protection, w: np.ndarray, movable: np.ndarray
    ) -> None:
        import highspy

        self._highspy = highspy
        n = table.n_cells
        self.n = n
        lower = protection.primary.astype(np.float64)
        upper = np.where(movable | protection.primary, 1.0, 0.0)
        # x_i ≤ Σ_{j∈r, j≠i} x_j for every relation r and cell i of r: |M|[r] − 2 e_i ≥ 0
        coo = table.relations.tocoo()
        incidence = abs(table.relations).tocsr()
        rows = incidence[coo.row] - sparse.csr_matrix(
            (np.full(coo.nnz, 2.0), (np.arange(coo.nnz), coo.col)), shape=(coo.nnz, n)
        )
        rows = sparse.csr_matrix(rows)
        rows.eliminate_zeros()
        self.highs = new_highs()
        build_lp(
            self.highs,
            sparse.csc_matrix(rows),
            lower,
            upper,
            (np.zeros(rows.shape[0]), np.full(rows.shape[0], np.inf)),
        )
        self.highs.changeColsCost(n, np.arange(n, dtype=np.int32), w.astype(np.float64))
        self.integer = False
        self.cuts = 0

    def add_cuts(self, cuts: list[tuple[np.ndarray, np.ndarray, float]]) -> None:
        if not cuts:
            return
        starts, indices, values, lower = [], [], [], []
        offset = 0
        for index, value, rhs in cuts:
            starts.append(offset)
            indices.append(index)
            values.append(value)
            lower.append(rhs)
            offset += index.size
        inf = self._highspy.kHighsInf
        self.highs.addRows(
            len(cuts),
            np.asarray(lower, dtype=np.float64),
            np.full(len(cuts), inf),
            offset,
            np.asarray(starts, dtype=np.int32),
            np.concatenate(indices).astype(np.int32),
            np.concatenate(values).astype(np.float64),
        )
        self.cuts += len(cuts)

    def make_integer(self) -> None:
        if not self.integer:
            integrality = self._highspy.HighsVarType.kInteger
            self.highs.changeColsIntegrality(
                self.n, np.arange(self.n, dtype=np.int32), np.full(self.n, integrality)
            )
            self.integer = True

    def solve(self, time_limit: float, gap: float, incumbent: np.ndarray | None = None) -> dict[str, Any]:
        highs = self.highs
        highs.setOptionValue("time_limit", max(float(time_limit), 0.01))
        highs.setOptionValue("mip_rel_gap", float(gap))
        if self.integer and incumbent is not None:
            solution = self._highspy.HighsSolution()
            solution.col_value = incumbent.astype(np.float64)
            solution.value_valid = True
            highs.setSolution(solution)
        highs.run()
        status = highs.getModelStatus()
        info = highs.getInfo()
        statuses = self._highspy.HighsModelStatus
        out: dict[str, Any] = {"status": status, "optimal": status == statuses.kOptimal}
        if status == statuses.kInfeasible:
            out["infeasible"] = True
            return out
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        out["x"] = np.asarray(highs.getSolution().col_value) if has_solution else None
        out["objective"] = info.objective_function_value if has_solution else math.inf
        out["bound"] = info.mip_dual_bound if self.integer else info.objective_function_value
        out["gap"] = info.mip_gap if self.integer else None
        return out


def _separate(
    table: LinearTable,
    protection: Protection,
    x: np.ndarray,
    down: np.ndarray,
    up: np.ndarray,
    relations: sparse.csr_matrix,
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The capacity cuts master solution ``x`` violates (the attacker LPs of every primary cell with
    capacities scaled by ``x``)."""
    need_up, need_down, need_width = targets(table, protection)
    a = table.values
    tol = PROTECTION_TOLERANCE * np.maximum(1.0, np.abs(a) + np.maximum(need_up, need_down))
    support = x > 1e-9
    groups = components(table.relations, support)
    cuts = []
    primaries_by_group: dict[int, list[int]] = {}
    for p in protection.cells:
        primaries_by_group.setdefault(int(groups.of_cell[p]), []).append(int(p))
    for c, primaries in primaries_by_group.items():
        if c < 0:  # a primary cell sharing no relation with another suppressed cell: only its bounds
            cells, rows, matrix = np.asarray(primaries), np.zeros(0, dtype=np.int64), None
            lp = None
        else:
            cells, rows, matrix = groups.cells[c], groups.rows[c], groups.matrix[c]
            lp = ComponentLP(matrix, -down[cells] * x[cells], up[cells] * x[cells])
        position = {int(cell): j for j, cell in enumerate(cells)}
        for p in primaries:
            j = position[p]
            found: dict[int, tuple[float, np.ndarray]] = {}
            for sense, level in ((1, need_up[p]), (-1, need_down[p])):
                if level <= 0 and need_width[p] <= 0:
                    continue
                if lp is None:
                    value = up[p] * x[p] if sense == 1 else -down[p] * x[p]
                    duals = np.zeros(0)
                else:
                    value, _, duals = lp.extreme(j, sense)
                if not np.isfinite(value):
                    continue
                coefficient = _cut(p, sense, duals, rows, relations, down, up, table.n_cells)
                found[sense] = (abs(value), coefficient)
                if abs(value) < level - tol[p]:
                    cuts.append(_capped(coefficient, level))
            if need_width[p] > 0 and len(found) == 2:
                width = found[1][0] + found[-1][0]
                if width < need_width[p] - tol[p]:
                    cuts.append(_capped(found[1][1] + found[-1][1], need_width[p]))
    return cuts


def _cut(
    p: int,
    sense: int,
    duals: np.ndarray,
    rows: np.ndarray,
    relations: sparse.csr_matrix,
    down: np.ndarray,
    up: np.ndarray,
    n: int,
) -> np.ndarray:
    """Dense coefficients of the capacity cut from the duals of ``max sense·z_p`` (solved as
    ``min −sense·z_p``): reduced costs ``d = c − M_rowsᵀ λ``, coefficient ``d⁺ (a − lb) + d⁻ (ub − a)``."""
    d = np.zeros(n)
    d[p] = -float(sense)
    if rows.size:
        d -= np.asarray(relations[rows].T @ duals).ravel()
    d[np.abs(d) < 1e-9] = 0.0
    with np.errstate(invalid="ignore"):
        coefficient = np.where(d > 0, d * down, 0.0) + np.where(d < 0, -d * up, 0.0)
    return coefficient


def _capped(coefficient: np.ndarray, rhs: float) -> tuple[np.ndarray, np.ndarray, float]:
    coefficient = np.minimum(coefficient, rhs)
    index = np.flatnonzero(coefficient > 0)
    return index, coefficient[index], float(rhs)


def optimal_pattern(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    *,
    time_limit: float = 300.0,
    gap: float = 0.0,
    incumbent: np.ndarray | None = None,
    lp_rounds: int = 50,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The optimal pattern by Benders decomposition (module docstring). Returns the pattern and
    ``{"optimal", "bound", "mip_gap", "iterations", "cuts"}``; ``incumbent`` is a protected pattern
    to start from (the heuristic's, computed here when None)."""
    start = time.perf_counter()
    deadline = start + time_limit
    down, up = deviation_bounds(table)
    movable = (down > 0) | (up > 0)
    if incumbent is None:
        incumbent = heuristic_pattern(table, protection, w)
    best, best_cost = incumbent.copy(), float(w[incumbent].sum())
    master = _Master(table, protection, w, movable)
    relations = table.relations
    info: dict[str, Any] = {"optimal": False, "bound": None, "mip_gap": None, "iterations": 0, "cuts": 0}
    bound = -math.inf
    # phase 1: cuts on the LP relaxation
    for _ in range(lp_rounds):
        if time.perf_counter() > deadline:
            break
        solved = master.solve(deadline - time.perf_counter(), gap)
        if solved.get("infeasible") or solved["x"] is None:
            break
        bound = max(bound, solved["objective"])
        info["iterations"] += 1
        cuts = _separate(table, protection, solved["x"], down, up, relations)
        if not cuts:
            break
        master.add_cuts(_infeasible_check(table, protection, cuts))
    # phase 2: cuts on integer solutions
    master.make_integer()
    while time.perf_counter() < deadline:
        solved = master.solve(deadline - time.perf_counter(), gap, incumbent=best)
        info["iterations"] += 1
        if solved.get("infeasible"):
            raise InputError(
                "no suppression pattern protects every primary cell (the master problem is infeasible)"
            )
        if solved["bound"] is not None and np.isfinite(solved["bound"]):
            bound = max(bound, solved["bound"])
        x = solved["x"]
        if x is None:
            break
        pattern = x > 0.5
        cuts = _separate(table, protection, pattern.astype(np.float64), down, up, relations)
        if not cuts:
            cost = float(w[pattern].sum())
            if cost <= best_cost + 1e-9 * max(1.0, best_cost):
                best, best_cost = pattern, cost
            if solved["optimal"]:
                info["optimal"] = True
                info["mip_gap"] = float(solved["gap"]) if solved["gap"] is not None else 0.0
                bound = max(bound, solved["bound"]) if solved["bound"] is not None else bound
            break
        master.add_cuts(_infeasible_check(table, protection, cuts))
        if not solved["optimal"]:  # time limit: complete the master's pattern into a protected one
            repaired = heuristic_pattern(table, protection, w, start=pattern)
            if float(w[repaired].sum()) < best_cost:
                best, best_cost = repaired, float(w[repaired].sum())
            break
    info["cuts"] = master.cuts
    info["bound"] = float(bound) if np.isfinite(bound) else None
    if not info["optimal"] and info["bound"] is not None and best_cost > 0:
        info["mip_gap"] = max(0.0, (best_cost - info["bound"]) / best_cost)
    return best, info


def _infeasible_check(
    table: LinearTable, protection: Protection, cuts: list[tuple[np.ndarray, np.ndarray, float]]
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """A cut no pattern satisfies (even all cells suppressed) means a primary cell cannot be protected."""
    for index, value, rhs in cuts:
        if value.sum() < rhs * (1 - 1e-9) - 1e-9:
            primaries = index[protection.primary[index]]
            for p in primaries if primaries.size else protection.cells:
                low, high = interval(table, np.ones(table.n_cells, dtype=bool), int(p))
                a = table.values[p]
                if high < a + protection.upper[p] - 1e-7 or low > a - protection.lower[p] + 1e-7:
                    raise _unprotectable(table, protection, int(p))
    return cuts


# ---------------------------------------------------------------------------------------------------
# the method


def suppress(
    table: LinearTable,
    protection: Protection,
    *,
    algorithm: str = "auto",
    cost: str = "value",
    weights: Any = None,
    time_limit: float = 300.0,
    gap: float = 0.0,
    repair: str = "auto",
    singletons: str = "none",
    coalition: int = 0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Secondary cell suppression: ``(suppressed mask, figures)``; the pattern passes :func:`audit`.

    ``algorithm``: ``optimal``, ``heuristic`` or ``auto`` (optimal when primary cells × cells ≤
    :data:`AUTO_OPTIMAL_LIMIT`); ``cost``: ``value``, ``cells`` or ``log``, overridden by ``weights``
    (one per cell); ``time_limit`` (seconds) and ``gap`` (relative MIP gap) bound the optimal
    algorithm; ``repair``: the heuristic's repair step, ``lp`` or SPEC §8.5's ``neighbour``;
    ``singletons`` (``protect``/``none``) and ``coalition``: the respondent attacker of
    :mod:`sdckit.tables.respondents` (off by default here, on the outside attacker alone; the
    registered method ``suppress`` protects against single contributors by default)."""
    suppressed, figures, _ = _suppress(
        table,
        protection,
        algorithm=algorithm,
        cost=cost,
        weights=weights,
        time_limit=time_limit,
        gap=gap,
        repair=repair,
        singletons=singletons,
        coalition=coalition,
    )
    return suppressed, figures


def _final_audit(table: LinearTable, suppressed: np.ndarray, protection: Protection) -> Any:
    """The audit of the published pattern: exact intervals up to :data:`EXACT_AUDIT_LIMIT`
    suppressed cells, exact verdicts always."""
    if int(suppressed.sum()) <= EXACT_AUDIT_LIMIT:
        return audit(table, suppressed, protection)
    return attack(table, suppressed, protection, exact=False)


def protect_from_respondents(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    suppressed: np.ndarray,
    *,
    singletons: str = "protect",
    coalition: int = 0,
    holdings: list[Any] | None = None,
    max_rounds: int = 200,
) -> tuple[np.ndarray, int]:
    """Extend pattern ``suppressed`` (protected against the outside attacker) until no respondent
    (:mod:`sdckit.tables.respondents`) un-protects a primary cell: for each failing cell and
    respondent, the cheapest deviation of the LP repair under the respondent's knowledge, its
    published cells suppressed. Cells are only added, so the outside attacker's intervals only
    widen. Returns the pattern and the number of cells added."""
    from sdckit.tables.respondents import knowing, respondent_attack, respondents, without_own

    suppressed = suppressed.copy()
    added_total = 0
    for _ in range(max_rounds):
        found = respondents(
            table, protection, suppressed, singletons=singletons, coalition=coalition, holdings=holdings
        )
        failures = respondent_attack(table, suppressed, protection, found)
        if not failures:
            return suppressed, added_total
        by_name = {respondent.name: respondent for respondent in found}
        added = 0
        for failure in failures:
            respondent = by_name[failure.respondent]
            scenario, attacked = knowing(table, respondent), without_own(table, protection, respondent)
            focus = np.zeros(table.n_cells, dtype=bool)
            focus[failure.cell] = True
            result = attack(scenario, suppressed, attacked, exact=True, focus=focus)
            if result.protected[failure.cell]:
                continue  # an earlier repair of this round protected it already
            down, up = deviation_bounds(scenario)
            repairer = _RepairLP(scenario, w, down, up)
            repairer.set_suppressed(suppressed)
            for side, level in _side_levels(scenario, attacked, failure.cell, result):
                witness = repairer.witness(failure.cell, side, level)
                if witness is None:
                    raise InputError(
                        f"cell {table.label(failure.cell)} cannot be protected against "
                        f"{failure.respondent}: even with every other cell suppressed, what that "
                        "respondent knows of their own cells pins it down"
                    )
                cells = witness[0]
                new = cells[~suppressed[cells]]
                suppressed[new] = True
                added += int(new.size)
                repairer.set_suppressed(suppressed)
        if added == 0:
            failure = failures[0]
            raise InputError(
                f"cell {table.label(failure.cell)} cannot be protected against {failure.respondent}"
            )
        added_total += added
    raise InputError(f"the protection against respondents did not converge in {max_rounds} rounds")


def _suppress(
    table: LinearTable,
    protection: Protection,
    *,
    algorithm: str = "auto",
    cost: str = "value",
    weights: Any = None,
    time_limit: float = 300.0,
    gap: float = 0.0,
    repair: str = "auto",
    singletons: str = "protect",
    coalition: int = 0,
    holdings: list[Any] | None = None,
) -> tuple[np.ndarray, dict[str, Any], Any]:
    started = time.perf_counter()
    if algorithm not in ("auto", "optimal", "heuristic"):
        raise ConfigError(f"algorithm must be auto, optimal or heuristic, got {algorithm!r}")
    if time_limit <= 0 or gap < 0:
        raise ConfigError("time_limit must be positive and gap non-negative")
    w = cell_weights(table, cost, weights)
    primary = protection.primary
    n_primary = int(primary.sum())
    if algorithm == "auto":
        algorithm = "optimal" if n_primary * table.n_cells <= AUTO_OPTIMAL_LIMIT else "heuristic"
        time_limit = min(time_limit, AUTO_TIME_LIMIT)
    figures: dict[str, Any] = {"algorithm": algorithm}
    if n_primary == 0:
        suppressed = np.zeros(table.n_cells, dtype=bool)
        figures.update(optimal=True, bound=0.0, mip_gap=0.0)
    else:
        heuristic = heuristic_pattern(table, protection, w, repair=repair)
        if algorithm == "heuristic":
            suppressed = heuristic
            figures.update(optimal=None, bound=None, mip_gap=None)
        else:
            suppressed, info = optimal_pattern(
                table, protection, w, time_limit=time_limit, gap=gap, incumbent=heuristic
            )
            primary_cost = float(w[primary].sum())
            figures.update(
                optimal=info["optimal"],
                bound=None if info["bound"] is None else max(0.0, info["bound"] - primary_cost),
                mip_gap=info["mip_gap"],
                iterations=info["iterations"],
                cuts=info["cuts"],
            )
    result = _final_audit(table, suppressed, protection)
    if not result.passed:  # never publish an unprotected pattern
        suppressed = heuristic_pattern(table, protection, w, repair=repair, start=suppressed)
        result = _final_audit(table, suppressed, protection)
        figures["repaired"] = True
    if n_primary:
        suppressed, added = protect_from_respondents(
            table, protection, w, suppressed, singletons=singletons, coalition=coalition, holdings=holdings
        )
        figures["respondent_secondaries"] = added
        if added:
            if figures.get("optimal"):
                figures["optimal"] = False  # optimal against the outside attacker, then extended
                figures["outside_optimal"] = True
            result = _final_audit(table, suppressed, protection)
    figures["audit_exact"] = result.exact
    secondary = suppressed & ~primary
    values = table.values
    figures.update(
        primary_cells=n_primary,
        primary_value=float(values[primary].sum()),
        secondary_cells=int(secondary.sum()),
        secondary_value=float(values[secondary].sum()),
        cost=float(w[secondary].sum()),
        audit_passed=result.passed,
        seconds=round(time.perf_counter() - started, 3),
    )
    return suppressed, figures, result


class SuppressParams(MethodParams):
    """Parameters of secondary cell suppression (``sdckit table suppress``)."""

    algorithm: Annotated[
        Algorithm,
        Field(
            description="optimal: the exact model (Benders decomposition, HiGHS); heuristic: the "
            "relation sweep with LP repair; auto: optimal (at most 30 s, from the heuristic's pattern) "
            "when primary cells × cells is small, else the heuristic."
        ),
    ] = "auto"
    cost: Annotated[
        Cost,
        Field(description="What a suppression costs: the cell's value, 1 per cell, or log(1 + value)."),
    ] = "value"
    cost_variable: Annotated[
        str | None,
        Field(
            description="A numeric attribute whose sum over a cell's records is the cost of suppressing "
            "the cell (τ-Argus's cost variable); replaces --cost."
        ),
    ] = None
    time_limit: Annotated[
        Finite,
        Field(gt=0, description="Seconds the optimal algorithm may run before it returns its best pattern."),
    ] = 300.0
    gap: Annotated[
        Finite, Field(ge=0, le=1, description="Relative MIP gap at which the optimal algorithm stops.")
    ] = 0.0
    singletons: Annotated[
        Literal["protect", "none"],
        Field(
            description="protect: every primary cell also holds against each single contributor of a "
            "suppressed cell (a singleton knows its cell; with --holding, a holding its cells), as "
            "sdcTable's detectSingletons; none: the outside attacker only."
        ),
    ] = "protect"
    coalition: Annotated[
        int,
        Field(
            ge=0,
            le=100,
            description="Also protect against the N largest contributors of every suppressed cell "
            "together (0: only the n of an (n,k)-dominance rule, on the cells it flagged).",
        ),
    ] = 0


def _cost_variable(problem: TableProblem, name: str) -> np.ndarray:
    """The sum of attribute ``name`` over the records of every cell (a cost must be ≥ 0)."""
    from sdckit.tables.build import cell_sums

    if problem.source is None:
        raise ConfigError("--cost-variable needs the microdata: a table of cells (--cells) has no records")
    data = problem.source.data
    if name not in data.columns:
        raise ConfigError(f"--cost-variable: unknown attribute '{name}' (columns: {', '.join(data.columns)})")
    column = data.get_column(name)
    if not column.dtype.is_numeric():
        raise InputError(f"--cost-variable: attribute '{name}' is not numeric")
    values = column.cast(pl.Float64).fill_nan(None)
    if values.null_count() or bool((values < 0).any()):
        raise InputError(f"--cost-variable: attribute '{name}' must be a number ≥ 0 in every record")
    return cell_sums(problem, values.to_numpy())


def _summary(result: TableResult) -> dict[str, Any]:
    return dict(result.figures)


def _violation(result: TableResult, figures: dict[str, Any]) -> str | None:
    return (
        None
        if figures["audit_passed"]
        else "the suppression pattern fails its own audit (a bug: please report it)"
    )


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"{figures['primary_cells']:,} primary cells (total {figures['primary_value']:,.6g}), "
        f"{figures['secondary_cells']:,} secondary suppressions (total {figures['secondary_value']:,.6g}), "
        f"cost {figures['cost']:,.6g}",
    ]
    if figures["algorithm"] == "optimal":
        if figures.get("outside_optimal"):
            lines.append(
                f"optimal against the outside attacker, then extended for respondents (not proven optimal "
                f"overall), {figures['seconds']:g} s"
            )
        elif figures["optimal"]:
            lines.append(f"optimal pattern (MIP gap {figures['mip_gap'] or 0:.2g}), {figures['seconds']:g} s")
        else:
            bound = figures.get("bound")
            shown = f"{bound:,.6g}" if bound is not None else "none"
            lines.append(f"time limit reached: best pattern found, lower bound of the cost {shown}")
    else:
        lines.append(f"heuristic pattern, {figures['seconds']:g} s")
    if figures.get("respondent_secondaries"):
        lines.append(
            f"{figures['respondent_secondaries']:,} of the secondary suppressions protect against "
            "respondents (single contributors, holdings, coalitions)"
        )
    lines.append("audit passed" if figures["audit_passed"] else "AUDIT FAILED")
    if not figures.get("audit_exact", True):
        lines.append(
            f"(over {EXACT_AUDIT_LIMIT:,} suppressed cells the output has no attacker's intervals: "
            "sdckit table audit computes every one)"
        )
    return lines


@register_table_method(
    "suppress",
    SuppressParams,
    summary=_summary,
    help="Secondary cell suppression: the optimal MILP (Fischetti–Salazar) or a fast heuristic, "
    "with the attacker's audit.",
    report=_report,
    violation=_violation,
    audits=True,
    statuses=True,
)
def _run_suppress(problem: TableProblem, params: SuppressParams, context: Context) -> TableResult:
    weights = None
    if params.cost_variable is not None:
        weights = _cost_variable(problem, params.cost_variable)
    from sdckit.tables.respondents import holding_respondents, with_contributions

    if params.coalition == 1:
        raise ConfigError("coalition must be 0 (none) or a number of contributors ≥ 2, got 1")
    holdings = holding_respondents(problem.source, problem.spec, problem.table)
    table = with_contributions(problem.source, problem.spec, problem.table, params.coalition)
    suppressed, figures, result = _suppress(
        table,
        problem.protection,
        algorithm=params.algorithm,
        cost=params.cost,
        weights=weights,
        time_limit=params.time_limit,
        gap=params.gap,
        singletons=params.singletons,
        coalition=params.coalition,
        holdings=holdings,
    )
    if problem.statuses is not None and (suppressed & problem.statuses.fixed).any():
        raise AssertionError("a cell that must be published was suppressed")  # the bounds forbid it
    released = np.where(suppressed, np.nan, problem.table.values)
    return TableResult(
        method="suppress",
        problem=problem,
        released=released,
        status=pattern_status(problem.protection, suppressed),
        figures=figures,
        audit=result,
    )
