"""Secondary cell suppression (SPEC §8.4–8.5): the cheapest set of further cells to suppress so that
every primary cell's attacker interval covers its protection interval (``sdckit table suppress``).

Two algorithms, both on any :class:`~sdckit.tabular.model.LinearTable` (2-D, n-D, hierarchical and
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

from sdckit.context import Context, ProgressCallback, StageCallback
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams, spell
from sdckit.tabular.audit import (
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
from sdckit.tabular.base import TableProblem, TableResult, pattern_status, register_table_method
from sdckit.tabular.model import LinearTable, Protection

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
    progress: ProgressCallback | None = None,
    stage: StageCallback | None = None,
) -> np.ndarray:
    """SPEC §8.5 generalized to relations (see the module docstring); the pattern passes the audit.
    ``start``: a pattern to complete instead of the primary cells alone. ``repair``: ``lp``,
    ``neighbour`` or ``auto`` — when ``|P|·N ≤ REPAIR_LP_LIMIT`` the cheapest of three patterns:
    the LP repair after SPEC's sweep, the LP repair alone (no sweep, primary by primary) and SPEC's
    sweep with the neighbour repair, each pruned; above, the sweep with SPEC's neighbour repair.
    ``progress(done, total)`` counts, for each pattern, the primary cells protected, then the
    secondary cells the pruning has tried (the total grows by them when it starts); ``stage``
    names each of the three patterns."""
    if repair not in ("auto", "lp", "neighbour"):
        raise ConfigError(f"repair must be auto, lp or neighbour, got {repair!r}")
    small = int(protection.primary.sum()) * table.n_cells <= REPAIR_LP_LIMIT
    if repair == "auto" and not small:
        return _heuristic(
            table, protection, w, repair="neighbour", start=start, sweep=True, prune=False, progress=progress
        )
    if repair == "auto":
        patterns = []
        for index, (kind, sweep) in enumerate((("lp", True), ("lp", False), ("neighbour", True))):
            if stage is not None:
                after = " after the sweep" if sweep else ""
                stage(f"heuristic pattern {index + 1} of 3: {kind} repair{after}")
            patterns.append(
                _heuristic(
                    table, protection, w, repair=kind, start=start, sweep=sweep, prune=True, progress=progress
                )
            )
        return min(patterns, key=lambda mask: float(w[mask].sum()))
    return _heuristic(
        table, protection, w, repair=repair, start=start, sweep=True, prune=small, progress=progress
    )


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
    progress: ProgressCallback | None = None,
) -> np.ndarray:
    suppressed = protection.primary.copy() if start is None else start | protection.primary
    n_primary = int(protection.primary.sum())
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
        if progress is not None:
            progress(n_primary - failing.size, n_primary)  # a protected primary cell stays protected
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
        suppressed = _prune(table, protection, w, suppressed, progress, n_primary)
    return suppressed


def _prune(
    table: LinearTable,
    protection: Protection,
    w: np.ndarray,
    suppressed: np.ndarray,
    progress: ProgressCallback | None = None,
    done_before: int = 0,
) -> np.ndarray:
    """Publish again, most expensive first, every secondary cell the primary cells stay protected
    without (the audit of the component it belonged to), with the secondary cells that this leaves
    exactly disclosed: a greedy descent to a minimal pattern. ``progress`` counts the cells tried
    (one audit each) after ``done_before`` steps."""
    suppressed = suppressed.copy()
    secondary = np.flatnonzero(suppressed & ~protection.primary)
    for tried, i in enumerate(secondary[np.argsort(-w[secondary], kind="stable")]):
        if progress is not None:
            progress(done_before + tried, done_before + secondary.size)
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
    if progress is not None:
        progress(done_before + secondary.size, done_before + secondary.size)
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


#: The integer phase stops HiGHS's branch and bound once it holds a master solution that violates a
#: cut and the run has lasted this share of the time limit (at least ``PATIENCE_MIN`` seconds): the
#: cuts go in as rows and the search restarts from the best protected pattern (HiGHS takes no lazy
#: constraints). A master that HiGHS solves faster is solved to its optimum, with the cuts of every
#: improving solution it found on the way.
PATIENCE_SHARE = 0.02
PATIENCE_MIN = 1.0
#: The core point of the Pareto-optimal cuts: a cell outside the master's integer solution gets this
#: fraction of its capacity (capped at the largest protection level).
CORE_EPSILON = 1e-3
#: After this share of the time limit the branch and bound is no longer stopped: it runs to the
#: master's optimum or to the limit, and its dual bound is the lower bound reported.
BOUND_SHARE = 0.5


class _Master:
    """The master problem over the binaries ``x``, one HiGHS model for the whole search: minimize
    ``Σ w x`` subject to the relation inequalities and the capacity cuts found so far (added as rows).
    Solved as an LP first (HiGHS restarts each solve from the last basis), then as a MIP that starts
    from the best protected pattern; ``watch`` sees every integer solution HiGHS finds (its
    ``cbMipSolution`` callback) and says whether it violates a cut, and the run is stopped
    (``cbMipInterrupt``) once one does and ``patience`` seconds have passed."""

    def __init__(
        self, table: LinearTable, protection: Protection, w: np.ndarray, movable: np.ndarray
    ) -> None:
        from sdckit._extras import require
        from sdckit.tabular._highs import HIGHS_FEATURE

        require("tables", "highspy", feature=HIGHS_FEATURE)
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
        self._watch: Any = None
        self._pending = False
        self._not_before = math.inf
        self._error: BaseException | None = None
        self._subscribed = False

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

    def _on_solution(self, event: Any) -> None:
        values = np.asarray(event.data_out.mip_solution, dtype=np.float64)
        if self._watch is None or values.shape != (self.n,):
            return
        try:
            if self._watch(values):
                self._pending = True
        except BaseException as error:  # noqa: BLE001 - raised again after the run
            self._error, self._pending, self._not_before = error, True, 0.0

    def _on_interrupt(self, event: Any) -> None:
        # set every time: HiGHS keeps the flag of the last call, also into the next run
        event.interrupt(self._pending and time.perf_counter() >= self._not_before)

    def solve(
        self,
        time_limit: float,
        gap: float,
        incumbent: np.ndarray | None = None,
        watch: Any = None,
        patience: float = math.inf,
    ) -> dict[str, Any]:
        highs = self.highs
        highs.setOptionValue("time_limit", max(float(time_limit), 0.01))
        highs.setOptionValue("mip_rel_gap", float(gap))
        if self.integer and incumbent is not None:
            solution = self._highspy.HighsSolution()
            solution.col_value = incumbent.astype(np.float64)
            solution.value_valid = True
            highs.setSolution(solution)
        if watch is not None and not self._subscribed:
            highs.cbMipSolution.subscribe(self._on_solution)
            highs.cbMipInterrupt.subscribe(self._on_interrupt)
            self._subscribed = True
        self._watch, self._pending, self._error = watch, False, None
        self._not_before = time.perf_counter() + patience
        try:
            highs.run()
        finally:
            self._watch = None
        if self._error is not None:
            raise self._error
        status = highs.getModelStatus()
        info = highs.getInfo()
        statuses = self._highspy.HighsModelStatus
        out: dict[str, Any] = {
            "status": status,
            "optimal": status == statuses.kOptimal,
            "interrupted": status == statuses.kInterrupt,
        }
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
    *,
    capped: bool = False,
    violated: list[tuple[int, int, float]] | None = None,
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The capacity cuts master solution ``x`` violates (the attacker LPs of every primary cell with
    capacities scaled by ``x``). ``capped``: the capacities are also capped at the protection level
    sought, ``min(ub − a, UPL)·x`` — on a fractional ``x`` that finds the cuts whose capped
    coefficients are violated though the plain LP reaches the level (a cell with ``ub = ∞`` gives any
    ``x_i > 0`` an infinite capacity); any duals give a valid cut, so the cut is then checked at ``x``.
    ``violated`` collects the ``(p, side, level)`` that fall short."""
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
        if c < 0 and capped:
            continue
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
                if level <= 0 and (need_width[p] <= 0 or capped):
                    continue
                if lp is not None and capped:
                    lp.highs.changeColsBounds(
                        cells.size,
                        np.arange(cells.size, dtype=np.int32),
                        -np.minimum(down[cells], level) * x[cells],
                        np.minimum(up[cells], level) * x[cells],
                    )
                if lp is None:
                    value = up[p] * x[p] if sense == 1 else -down[p] * x[p]
                    duals = np.zeros(0)
                else:
                    value, _, duals = lp.extreme(j, sense)
                if not np.isfinite(value):
                    continue
                coefficient = _cut(p, sense, duals, rows, relations, down, up, table.n_cells)
                if capped:
                    cut = _capped(coefficient, level)
                    if float(cut[1] @ x[cut[0]]) < level - tol[p]:
                        cuts.append(cut)
                    continue
                found[sense] = (abs(value), coefficient)
                if abs(value) < level - tol[p]:
                    cuts.append(_capped(coefficient, level))
                    if violated is not None:
                        violated.append((p, sense, float(level)))
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


class _Slices:
    """The attacker LPs of each primary cell on its slices: for a dimension ``d``, the relations whose
    cells all carry the primary cell's label of ``d`` (a 2-D slice of a 3-D table; a column of a 2-D
    table with a hierarchy on its rows). Dropping the other relations relaxes the attacker's system,
    so the duals of such an LP give a capacity cut like any other, on the slice's cells only: "p
    needs a cycle in this slice", where the cut of the whole table's LP involves hundreds of cells of
    a 3-D table. The capacities are capped at the level sought (exact on a 2-D slice, where the
    relations are a network's)."""

    def __init__(self, table: LinearTable, protection: Protection, down: np.ndarray, up: np.ndarray) -> None:
        self.table, self.down, self.up = table, down, up
        self.need = targets(table, protection)
        relations = table.relations
        coo = relations.tocoo()
        m = relations.shape[0]
        self.of: dict[int, list[tuple[int, int]]] = {}  # primary cell -> its slices' keys
        self.slices: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, sparse.csc_matrix]] = {}
        self.lps: dict[tuple[int, int], ComponentLP] = {}
        for d, name in enumerate(table.dimensions):
            if name not in table.cells.columns:
                continue
            # label codes 1, 2, ... (0: no label, as in a linked table the cell is not part of)
            label = table.cells.get_column(name).cast(pl.Utf8).rank("dense").fill_null(0)
            code = label.to_numpy().astype(np.int64)
            low, high = np.full(m, np.iinfo(np.int64).max), np.full(m, -1)
            np.minimum.at(low, coo.row, code[coo.col])
            np.maximum.at(high, coo.row, code[coo.col])
            constant = (low == high) & (low > 0)
            for p in protection.cells:
                key = (d, int(code[p]))
                if key not in self.slices:
                    rows = np.flatnonzero(constant & (low == code[p]))
                    if rows.size < 2 or rows.size == m:  # one relation (the inequalities have it) or all
                        self.slices[key] = None  # type: ignore[assignment]
                        continue
                    sub = relations[rows]
                    cells = np.unique(sub.indices)
                    self.slices[key] = (cells, rows, sparse.csc_matrix(sub[:, cells]))
                if self.slices[key] is not None:
                    self.of.setdefault(int(p), []).append(key)

    def separate(self, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The slice cuts ``x`` violates."""
        need_up, need_down, _ = self.need
        down, up, n = self.down, self.up, self.table.n_cells
        cuts = []
        for p, keys in self.of.items():
            for key in keys:
                cells, rows, matrix = self.slices[key]
                j = int(np.searchsorted(cells, p))
                for sense, level in ((1, need_up[p]), (-1, need_down[p])):
                    if level <= 0:
                        continue
                    lo = -np.minimum(down[cells], level) * x[cells]
                    hi = np.minimum(up[cells], level) * x[cells]
                    lp = self.lps.get(key)
                    if lp is None:
                        lp = self.lps[key] = ComponentLP(matrix, lo, hi)
                    else:
                        lp.highs.changeColsBounds(cells.size, np.arange(cells.size, dtype=np.int32), lo, hi)
                    value, _, duals = lp.extreme(j, sense)
                    if abs(value) >= level * (1 - 1e-7):
                        continue
                    cut = _capped(_cut(p, sense, duals, rows, self.table.relations, down, up, n), level)
                    if float(cut[1] @ x[cut[0]]) < level * (1 - 1e-7):
                        cuts.append(cut)
        return cuts


class _Benders:
    """One optimal search (module docstring): the master, the separation of its solutions, the best
    protected pattern and the lower bound."""

    def __init__(
        self,
        table: LinearTable,
        protection: Protection,
        w: np.ndarray,
        incumbent: np.ndarray,
        *,
        time_limit: float,
        gap: float,
    ) -> None:
        self.table, self.protection, self.w, self.gap = table, protection, w, gap
        self.start = time.perf_counter()
        self.deadline = self.start + time_limit
        self.patience = max(PATIENCE_MIN, PATIENCE_SHARE * time_limit)
        self.switch = self.start + BOUND_SHARE * time_limit
        self.down, self.up = deviation_bounds(table)
        self.master = _Master(table, protection, w, (self.down > 0) | (self.up > 0))
        self.slices = _Slices(table, protection, self.down, self.up)
        self.core: ComponentLP | None = None
        self.best, self.best_cost = incumbent.copy(), float(w[incumbent].sum())
        self.tolerance = 1e-9 * max(1.0, self.best_cost)
        self.bound = -math.inf
        self.optimal = False
        self.last: np.ndarray | None = None  # the last master solution left unrepaired
        self.protected: dict[bytes, bool] = {}
        self.pending: list[tuple[np.ndarray, np.ndarray, float]] = []
        self.seconds = {"lp": 0.0, "master": 0.0, "separation": 0.0, "repair": 0.0}
        self.rounds = {"lp": 0, "mip": 0, "repairs": 0}
        self.longest_repair = 0.0

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def proven(self) -> bool:
        return self.optimal or self.bound >= self.best_cost * (1 - self.gap) - self.tolerance

    def cuts(self, x: np.ndarray, *, integral: bool) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The cuts ``x`` violates: the exact attacker LPs (and, on a fractional ``x``, the capped
        ones) of the whole table, and the slices' when ``x`` is fractional or violates one of those."""
        started = time.perf_counter()
        args = (self.table, self.protection, x, self.down, self.up, self.table.relations)
        violated: list[tuple[int, int, float]] = []
        cuts = _separate(*args, violated=violated)
        if not integral:
            cuts += _separate(*args, capped=True)
        elif violated:
            cuts += self.pareto(x > 0.5, violated)
        if cuts or not integral:
            cuts += self.slices.separate(x)
        self.seconds["separation"] += time.perf_counter() - started
        return _infeasible_check(self.table, self.protection, cuts)

    def pareto(
        self, pattern: np.ndarray, violated: list[tuple[int, int, float]]
    ) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """Pareto-optimal cuts (Magnanti & Wong 1981; Papadakos 2008) for the sides an integer
        solution leaves short: the attacker LP over the whole table, its capacities those of the
        pattern plus ``CORE_EPSILON`` of them (capped at the largest level) on every other cell. Its
        duals are optimal for the pattern, and among those minimize the coefficients of the cells
        outside it: the cut names the few cells that would help, where the duals HiGHS happens to
        return on the (degenerate) LP of the pattern alone name hundreds in a 3-D table."""
        table, n = self.table, self.table.n_cells
        scale = max(level for _, _, level in violated)
        lo = np.where(pattern, -self.down, -CORE_EPSILON * np.minimum(self.down, scale))
        hi = np.where(pattern, self.up, CORE_EPSILON * np.minimum(self.up, scale))
        if self.core is None:
            self.core = ComponentLP(sparse.csc_matrix(table.relations), lo, hi)
        else:
            self.core.highs.changeColsBounds(n, np.arange(n, dtype=np.int32), lo, hi)
        rows = np.arange(table.n_relations)
        x = pattern.astype(np.float64)
        cuts = []
        for p, sense, level in violated:
            value, _, duals = self.core.extreme(p, sense)
            if not np.isfinite(value):
                continue
            cut = _capped(_cut(p, sense, duals, rows, table.relations, self.down, self.up, n), level)
            if float(cut[1] @ x[cut[0]]) < level * (1 - 1e-7):
                cuts.append(cut)
        return cuts

    def check(self, pattern: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The cuts an integer master solution violates, the first time it is seen (none: it protects
        every primary cell, and becomes the best pattern when it is cheaper)."""
        key = np.packbits(pattern).tobytes()
        if key in self.protected:
            return []
        cuts = self.cuts(pattern.astype(np.float64), integral=True)
        self.protected[key] = not cuts
        cost = float(self.w[pattern].sum())
        if not cuts and cost < self.best_cost - self.tolerance:
            self.best, self.best_cost = pattern.copy(), cost
        return cuts

    def lp_phase(self, rounds: int) -> None:
        """Cuts on the LP relaxation until none is violated or the bound stalls (5 rounds, 1e-4)."""
        started = time.perf_counter()
        history: list[float] = []
        for _ in range(rounds):
            if self.left() <= 0:
                break
            solved = self.master.solve(self.left(), self.gap)
            if solved.get("infeasible") or solved["x"] is None:
                break
            self.rounds["lp"] += 1
            self.bound = max(self.bound, solved["objective"])
            history.append(solved["objective"])
            cuts = self.cuts(solved["x"], integral=False)
            self.master.add_cuts(cuts)
            if not cuts or (len(history) > 5 and history[-1] - history[-6] <= 1e-4 * max(1.0, history[-1])):
                break
        self.seconds["lp"] += time.perf_counter() - started

    def integer_phase(self) -> None:
        """Branch and bound on the master from the best protected pattern, stopped on a solution that
        violates a cut (before ``BOUND_SHARE`` of the time), cuts added, again, until a protected
        solution is proven optimal or the time runs out."""
        self.master.make_integer()
        while self.left() > self.reserve() and not self.proven():
            self.pending = pending = []
            patience = self.patience if time.perf_counter() < self.switch else math.inf
            started, separating = time.perf_counter(), self.seconds["separation"]
            solved = self.master.solve(
                self.left() - self.reserve(),
                self.gap,
                incumbent=self.best,
                watch=self.watch,
                patience=patience,
            )
            seconds = time.perf_counter() - started
            # the separation of the solutions the callback saw is counted apart
            self.seconds["master"] += seconds - (self.seconds["separation"] - separating)
            self.rounds["mip"] += 1
            if solved.get("infeasible"):
                raise InputError(
                    "no suppression pattern protects every primary cell (the master problem is infeasible)"
                )
            if solved["bound"] is not None and np.isfinite(solved["bound"]):
                self.bound = max(self.bound, float(solved["bound"]))
            pattern = None if solved["x"] is None else solved["x"] > 0.5
            if pattern is not None:  # the run's last solution, in case no callback saw it
                pending.extend(self.check(pattern))
            if not pending:
                # the master's optimum (to the gap) protects every primary cell: it is the best pattern
                self.optimal = bool(solved["optimal"])
                break
            self.master.add_cuts(pending)
            self.last = pattern
            stopped = solved["interrupted"] or seconds >= self.patience
            if pattern is not None and stopped and self.left() > 2 * self.reserve():
                self.repair(pattern)

    def watch(self, values: np.ndarray) -> bool:
        """The callback's test of a solution HiGHS found: True when it is cheaper than the best
        pattern and violates a cut (kept in ``pending``)."""
        pattern = values > 0.5
        if float(self.w[pattern].sum()) >= self.best_cost - self.tolerance:
            return False
        if self.left() <= self.reserve():  # no separation past the master's time: HiGHS stops at its limit
            return False
        found = self.check(pattern)
        self.pending.extend(found)
        return bool(found)

    def reserve(self) -> float:
        """The time kept for the last repair: 2% of the limit (at most 5 s), or 3 times the longest
        repair so far when that is more (the last repair is the heuristic's cheapest, about three LP
        repairs), so that the search ends within its time limit."""
        return max(min(0.02 * (self.deadline - self.start), 5.0), 3.0 * self.longest_repair)

    def repair(self, pattern: np.ndarray, how: str = "lp") -> None:
        """Complete a master solution into a protected pattern (the heuristic's LP repair during the
        search; the cheapest of the heuristic's repairs, ``auto``, for the last one)."""
        started = time.perf_counter()
        self.last = None
        repaired = heuristic_pattern(self.table, self.protection, self.w, repair=how, start=pattern)
        seconds = time.perf_counter() - started
        self.seconds["repair"] += seconds
        self.longest_repair = max(self.longest_repair, seconds)
        self.rounds["repairs"] += 1
        cost = float(self.w[repaired].sum())
        if cost < self.best_cost - self.tolerance:
            self.best, self.best_cost = repaired, cost

    def result(self) -> tuple[np.ndarray, dict[str, Any]]:
        optimal = self.proven()
        bound = float(self.bound) if np.isfinite(self.bound) else None
        gap = (
            max(0.0, (self.best_cost - bound) / self.best_cost)
            if bound is not None and self.best_cost > 0
            else 0.0
        )
        info: dict[str, Any] = {
            "optimal": optimal,
            "bound": bound,
            "mip_gap": None if bound is None else gap,
            "iterations": self.rounds["lp"] + self.rounds["mip"],
            "cuts": self.master.cuts,
            "lp_rounds": self.rounds["lp"],
            "mip_rounds": self.rounds["mip"],
            "repairs": self.rounds["repairs"],
            "seconds": {key: round(value, 3) for key, value in self.seconds.items()},
        }
        return self.best, info


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
    """The optimal pattern by Benders decomposition (module docstring). Returns the best protected
    pattern found and ``{"optimal", "bound", "mip_gap", "iterations", "cuts", ...}``: ``optimal`` when
    it is proven optimal to the relative ``gap``, else ``bound`` is a lower bound on the cost of every
    protecting pattern (the primary cells' included) and ``mip_gap`` the pattern's gap to it;
    ``incumbent`` is a protected pattern to start from (the heuristic's, computed here when None)."""
    if incumbent is None:
        incumbent = heuristic_pattern(table, protection, w)
    search = _Benders(table, protection, w, incumbent, time_limit=time_limit, gap=gap)
    search.lp_phase(lp_rounds)
    search.integer_phase()
    if search.last is not None and not search.proven():  # the time ran out: complete the last master solution
        # the heuristic's cheapest repair when the time allows (about three LP repairs), else the LP one
        search.repair(search.last, how="auto" if search.left() >= 3 * search.longest_repair else "lp")
    return search.result()


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
    :mod:`sdckit.tabular.respondents` (off by default here, on the outside attacker alone; the
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
    (:mod:`sdckit.tabular.respondents`) un-protects a primary cell: for each failing cell and
    respondent, the cheapest deviation of the LP repair under the respondent's knowledge, its
    published cells suppressed. Cells are only added, so the outside attacker's intervals only
    widen. Returns the pattern and the number of cells added."""
    from sdckit.tabular.respondents import knowing, respondent_attack, respondents, without_own

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
    progress: ProgressCallback | None = None,
    stage: StageCallback | None = None,
) -> tuple[np.ndarray, dict[str, Any], Any]:
    started = time.perf_counter()

    def say(message: str) -> None:
        if stage is not None:
            stage(message)

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
        say("heuristic pattern")
        heuristic = heuristic_pattern(table, protection, w, repair=repair, progress=progress, stage=stage)
        if algorithm == "heuristic":
            suppressed = heuristic
            figures.update(optimal=None, bound=None, mip_gap=None)
        else:
            say(f"optimal pattern: Benders decomposition (at most {time_limit:g} s)")
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
        say("repairing the pattern")
        suppressed = heuristic_pattern(
            table, protection, w, repair=repair, start=suppressed, progress=progress
        )
        result = _final_audit(table, suppressed, protection)
        figures["repaired"] = True
    if n_primary:
        say("protection against respondents")
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
    from sdckit.tabular.build import cell_sums

    if problem.source is None:
        raise ConfigError(
            f"{spell('cost_variable')} needs the microdata: a table of cells ({spell('cells')}) has no "
            "records"
        )
    data = problem.source.data
    if name not in data.columns:
        raise ConfigError(
            f"{spell('cost_variable')}: unknown attribute '{name}' (columns: {', '.join(data.columns)})"
        )
    column = data.get_column(name)
    if not column.dtype.is_numeric():
        raise InputError(f"{spell('cost_variable')}: attribute '{name}' is not numeric")
    values = column.cast(pl.Float64).fill_nan(None)
    if values.null_count() or bool((values < 0).any()):
        raise InputError(f"{spell('cost_variable')}: attribute '{name}' must be a number ≥ 0 in every record")
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
    from sdckit.tabular.respondents import holding_respondents, with_contributions

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
        progress=context.progress,
        stage=context.stage,
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
