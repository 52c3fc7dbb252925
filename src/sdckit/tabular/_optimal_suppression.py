"""The optimal suppression pattern: Benders decomposition (Fischetti & Salazar-González 2001; see
:mod:`sdckit.tabular.suppression`). The master problem over the binaries ``x`` (:class:`_Master`,
one HiGHS model for the whole search), the capacity cuts from the attacker LPs of every primary cell
(:func:`_separate` on the whole table, :class:`_Slices` on its slices) and the search that
alternates them, LP rounds then integer rounds, from the heuristic's pattern (:class:`_Benders`)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import polars as pl
from scipy import sparse

from sdckit.errors import InputError
from sdckit.tabular._heuristic_suppression import heuristic_pattern
from sdckit.tabular._patterns import unprotectable
from sdckit.tabular.attacker import (
    PROTECTION_TOLERANCE,
    ComponentLP,
    build_lp,
    components,
    deviation_bounds,
    interval,
    new_highs,
    run_interruptible,
    targets,
)
from sdckit.tabular.model import LinearTable, Protection

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

    def _stop(self) -> bool:
        return self._pending and time.perf_counter() >= self._not_before

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
            self._subscribed = True
        self._watch, self._pending, self._error = watch, False, None
        self._not_before = time.perf_counter() + patience
        try:
            run_interruptible(highs, self._stop)
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
                duals: np.ndarray | None
                if lp is None:
                    value = up[p] * x[p] if sense == 1 else -down[p] * x[p]
                    duals = np.zeros(0)
                else:
                    value, _, duals = lp.extreme(j, sense)
                if not np.isfinite(value):
                    continue
                assert duals is not None  # a finite extreme comes with its duals
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
                    assert duals is not None  # a finite extreme comes with its duals
                    cut = _capped(_cut(p, sense, duals, rows, self.table.relations, down, up, n), level)
                    if float(cut[1] @ x[cut[0]]) < level * (1 - 1e-7):
                        cuts.append(cut)
        return cuts


class _Benders:
    """One optimal search (:mod:`sdckit.tabular.suppression`): the master, the separation of its
    solutions, the best protected pattern and the lower bound."""

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
            assert duals is not None  # a finite extreme comes with its duals
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
    """The optimal pattern by Benders decomposition (:mod:`sdckit.tabular.suppression`). Returns the
    best protected pattern found and ``{"optimal", "bound", "mip_gap", "iterations", "cuts", ...}``:
    ``optimal`` when it is proven optimal to the relative ``gap``, else ``bound`` is a lower bound on
    the cost of every protecting pattern (the primary cells' included) and ``mip_gap`` the pattern's
    gap to it; ``incumbent`` is a protected pattern to start from (the heuristic's, computed here
    when None)."""
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
                    raise unprotectable(table, protection, int(p))
    return cuts
