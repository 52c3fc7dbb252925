"""The outside attacker's linear programs (SPEC §8.3): the feasibility interval of every suppressed
cell of a pattern, over the table's additivity relations. (``sdckit table audit``, the command that
audits a published pattern file with them, is :mod:`sdckit.tabular.audit`; the respondents as
attackers are :mod:`sdckit.tabular.respondents`.)

For a pattern ``S`` the attacker knows every published value ``a_i`` (``i ∉ S``), the relations
``M y = 0`` and the a-priori bounds ``lb_i ≤ y_i ≤ ub_i`` of the suppressed cells; the interval of a
suppressed cell ``i`` is ``[min y_i, max y_i]`` over that polytope. A primary cell ``p`` is protected
when ``max y_p ≥ a_p + UPL_p``, ``min y_p ≤ a_p − LPL_p`` and ``max y_p − min y_p ≥ SPL_p``; a
suppressed cell whose interval is a single value is exactly disclosed.

How it is solved fast: the LPs are written in deviations ``z = y − a`` (so the published cells are
``z_i = 0`` and vanish, and every right-hand side is 0 because ``M a = 0``); relations without a
suppressed cell drop out; the suppressed cells split into connected components (two cells are
connected when they share a relation with ≥ 1 other suppressed cell) and each component is an LP of
its own. Within a component one HiGHS model (``highspy``) is built once and only the objective
changes between its ``2·k`` solves, so every solve starts from the previous optimal basis (warm
start). Every vertex found also bounds the intervals of the other cells of the component from
inside; the "status" mode (what the suppression heuristic uses) skips an LP whose answer those
vertices already settle, which gives the same verdicts with far fewer solves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph

from sdckit._extras import require
from sdckit.errors import InputError
from sdckit.tabular._highs import HIGHS_FEATURE, new_highs, run_interruptible
from sdckit.tabular.model import AuditResult, LinearTable, Protection

#: A primary cell is protected when its interval reaches its protection interval up to this relative
#: tolerance of ``max(1, |a_p| + level)`` (LP round-off, ~1e-9 in practice, must not fail an exact
#: pattern; anything larger is a real shortfall).
PROTECTION_TOLERANCE = 1e-7

#: A suppressed cell is exactly disclosed when its interval is at most this times ``max(1, max a)``.
DISCLOSURE_TOLERANCE = 1e-8


def build_lp(highs, matrix: sparse.csc_matrix, lower: np.ndarray, upper: np.ndarray, rows: tuple) -> None:  # noqa: ANN001
    """Pass ``rows[0] ≤ matrix z ≤ rows[1]``, ``lower ≤ z ≤ upper`` with a zero objective to ``highs``."""
    require("tables", "highspy", feature=HIGHS_FEATURE)
    import highspy

    matrix = sparse.csc_matrix(matrix)
    matrix.sort_indices()
    lp = highspy.HighsLp()
    lp.num_col_ = int(matrix.shape[1])
    lp.num_row_ = int(matrix.shape[0])
    lp.col_cost_ = np.zeros(matrix.shape[1])
    lp.col_lower_ = np.where(np.isinf(lower), -highspy.kHighsInf, lower).astype(np.float64)
    lp.col_upper_ = np.where(np.isinf(upper), highspy.kHighsInf, upper).astype(np.float64)
    lp.row_lower_ = np.asarray(rows[0], dtype=np.float64)
    lp.row_upper_ = np.asarray(rows[1], dtype=np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
    lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
    lp.a_matrix_.value_ = matrix.data.astype(np.float64)
    highs.passModel(lp)


class ComponentLP:
    """One connected component of the attacker's system in deviations: ``M_c z = 0``,
    ``lo ≤ z ≤ hi``; ``extreme(j, sense)`` maximizes (``sense=+1``) or minimizes (``-1``) ``z_j``,
    warm-started from the previous solve."""

    def __init__(self, matrix: sparse.csc_matrix, lo: np.ndarray, hi: np.ndarray) -> None:
        require("tables", "highspy", feature=HIGHS_FEATURE)
        import highspy

        self._status = highspy.HighsModelStatus
        self._settled = (self._status.kOptimal, self._status.kUnbounded)
        self.highs = new_highs()
        self.highs.setOptionValue("presolve", "off")
        # only the objective changes between solves: the last basis stays primal feasible, so the
        # primal simplex restarts from it (measured 8× faster than the dual simplex here)
        self.highs.setOptionValue("simplex_strategy", 4)
        self.n = matrix.shape[1]
        build_lp(self.highs, matrix, lo, hi, (np.zeros(matrix.shape[0]), np.zeros(matrix.shape[0])))

    def extreme(self, j: int, sense: int) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """``(value, z, row duals)`` of ``max`` (sense +1) or ``min`` (-1) of ``z_j``; value ±inf and no
        solution when unbounded. Row duals follow HiGHS's convention for ``min (−sense)·z_j``."""
        highs = self.highs
        highs.changeColCost(j, -float(sense))
        run_interruptible(highs)
        status = highs.getModelStatus()
        if status not in self._settled:  # a warm start that went astray (seen on unbounded LPs): cold
            highs.clearSolver()
            run_interruptible(highs)
            status = highs.getModelStatus()
        highs.changeColCost(j, 0.0)
        if status == self._status.kOptimal:
            solution = highs.getSolution()
            z = np.asarray(solution.col_value)
            return float(z[j]), z, np.asarray(solution.row_dual)
        if status in (self._status.kUnbounded, self._status.kUnboundedOrInfeasible):
            return sense * np.inf, None, None
        raise InputError(f"the attacker's linear program failed ({highs.modelStatusToString(status)})")


@dataclass
class Components:
    """The suppressed (``support``) cells grouped by connected component: ``cells[c]`` (table cell
    indices), ``rows[c]`` (relation indices), ``matrix[c]`` (the relations restricted to them)."""

    cells: list[np.ndarray]
    rows: list[np.ndarray]
    matrix: list[sparse.csc_matrix]
    of_cell: np.ndarray  # component of every table cell (-1 when not in the support)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray, sparse.csc_matrix]]:
        return iter(zip(self.cells, self.rows, self.matrix, strict=True))


def components(relations: sparse.csr_matrix, support: np.ndarray) -> Components:
    """Split the cells of ``support`` by the relations that hold ≥ 1 of them into connected
    components (a bipartite graph of cells and relations)."""
    cells = np.flatnonzero(support)
    n, k = relations.shape[1], cells.size
    sub = sparse.csc_matrix(relations[:, cells])
    rows = np.flatnonzero(np.diff(sparse.csr_matrix(sub).indptr) > 0)
    sub = sparse.csr_matrix(sub)[rows]
    r = rows.size
    graph = sparse.bmat([[None, abs(sub)], [abs(sub).T, None]], format="csr") if r else None
    of_cell = np.full(n, -1, dtype=np.int64)
    if graph is None:
        labels = np.arange(k)
        row_labels = np.zeros(0, dtype=np.int64)
    else:
        _, all_labels = csgraph.connected_components(graph, directed=False)
        row_labels, labels = all_labels[:r], all_labels[r:]
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    groups = np.split(order, bounds) if k else []
    row_order = np.argsort(row_labels, kind="stable")
    row_sorted = row_labels[row_order]
    sub_csc = sparse.csc_matrix(sub)
    out_cells, out_rows, out_matrix = [], [], []
    for c, group in enumerate(groups):
        label = labels[group[0]]
        lo, hi = np.searchsorted(row_sorted, [label, label + 1])
        local_rows = row_order[lo:hi]
        out_cells.append(cells[group])
        out_rows.append(rows[local_rows])
        out_matrix.append(sparse.csc_matrix(sub_csc[local_rows][:, group]))
        of_cell[cells[group]] = c
    return Components(out_cells, out_rows, out_matrix, of_cell)


def deviation_bounds(table: LinearTable, weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """How far each cell may move down and up for the attacker: ``(a − lb, ub − a)`` (times ``weight``)."""
    a = table.values
    lower, upper = table.bounds()
    down, up = a - lower, upper - a
    bad = np.flatnonzero((down < -1e-9 * np.maximum(1, np.abs(a))) | (up < -1e-9 * np.maximum(1, np.abs(a))))
    if bad.size:
        i = int(bad[0])
        raise InputError(
            f"cell {table.label(i)} has value {a[i]:g} outside its a-priori bounds "
            f"[{lower[i]:g}, {upper[i]:g}]"
        )
    down, up = np.maximum(down, 0.0), np.maximum(up, 0.0)
    if weight is not None:
        down = np.where(weight > 0, down * weight, 0.0)
        up = np.where(weight > 0, up * weight, 0.0)
    return down, up


def targets(table: LinearTable, protection: Protection) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The deviations each primary cell needs ``(up, down, width)``: UPL, LPL and SPL, 0 elsewhere."""
    primary = protection.primary
    up = np.where(primary, protection.upper, 0.0)
    down = np.where(primary, protection.lower, 0.0)
    width = np.where(primary, protection.sliding, 0.0)
    return up, down, width


def attack(
    table: LinearTable,
    suppressed: np.ndarray,
    protection: Protection,
    *,
    exact: bool = True,
    focus: np.ndarray | None = None,
) -> AuditResult:
    """The attacker's audit of pattern ``suppressed``.

    ``exact=True`` solves both LPs of every suppressed cell (the intervals of :func:`audit`);
    ``exact=False`` skips an LP whose verdict (protected / disclosed) the vertices found so far already
    settle — the verdicts are the same, ``low``/``high`` are then inner bounds of the intervals where
    an LP was skipped and exact elsewhere. ``focus``: solve only the components holding one of these
    cells (the others are reported protected and undisclosed: for a caller that knows they are).
    """
    suppressed = np.asarray(suppressed, dtype=bool)
    n = table.n_cells
    if suppressed.shape != (n,):
        raise InputError(f"the suppression pattern has {suppressed.shape[0]} cells for a table of {n}")
    a = table.values
    down, up = deviation_bounds(table)
    need_up, need_down, need_width = targets(table, protection)
    scale = max(1.0, float(np.max(np.abs(a))) if n else 1.0)
    tol = PROTECTION_TOLERANCE * np.maximum(1.0, np.abs(a) + np.maximum(need_up, need_down))
    zlow, zhigh = np.zeros(n), np.zeros(n)
    groups = components(table.relations, suppressed)
    isolated = suppressed & (groups.of_cell < 0)
    zlow[isolated], zhigh[isolated] = -down[isolated], up[isolated]
    disclosure_tol = DISCLOSURE_TOLERANCE * scale
    skipped = np.zeros(n, dtype=bool)
    for cells, _rows, matrix in groups:
        if focus is not None and not focus[cells].any():
            skipped[cells] = True
            continue
        lo_bound, hi_bound = -down[cells], up[cells]
        lp = ComponentLP(matrix, lo_bound, hi_bound)
        k = cells.size
        seen_lo, seen_hi = np.zeros(k), np.zeros(k)
        primary = protection.primary[cells]
        order = np.r_[np.flatnonzero(primary), np.flatnonzero(~primary)]
        for j in order:
            i = cells[j]
            for sense in (1, -1):
                # a vertex already at the cell's a-priori bound settles that LP exactly
                if sense == 1 and seen_hi[j] >= hi_bound[j]:
                    continue
                if sense == -1 and seen_lo[j] <= lo_bound[j]:
                    continue
                if not exact:
                    width = seen_hi[j] - seen_lo[j]
                    if not primary[j]:
                        if width > disclosure_tol:
                            break
                    else:
                        ok_width = width >= need_width[i] - tol[i] and width > disclosure_tol
                        ok_side = (
                            seen_hi[j] >= need_up[i] - tol[i]
                            if sense == 1
                            else -seen_lo[j] >= need_down[i] - tol[i]
                        )
                        if ok_side and ok_width:
                            continue
                value, z, _ = lp.extreme(int(j), sense)
                if z is not None:
                    np.minimum(seen_lo, z, out=seen_lo)
                    np.maximum(seen_hi, z, out=seen_hi)
                elif sense == 1:
                    seen_hi[j] = np.inf
                else:
                    seen_lo[j] = -np.inf
        zlow[cells], zhigh[cells] = seen_lo, seen_hi
    low = np.where(suppressed, a + zlow, a)
    high = np.where(suppressed, a + zhigh, a)
    width = zhigh - zlow
    protected = ~protection.primary | (
        suppressed
        & (zhigh >= need_up - tol)
        & (-zlow >= need_down - tol)
        & (width >= need_width - tol)
        & (width > disclosure_tol)
    )
    disclosed = suppressed & (width <= disclosure_tol) & ~skipped
    protected |= skipped
    return AuditResult(
        suppressed=suppressed, low=low, high=high, protected=protected, disclosed=disclosed, exact=exact
    )


def audit(table: LinearTable, suppressed: np.ndarray, protection: Protection) -> AuditResult:
    """The attacker's exact feasibility interval of every suppressed cell of pattern ``suppressed``
    (SPEC §8.3): ``protected[p]`` for a primary cell whose interval reaches ``a_p + UPL_p`` above,
    ``a_p − LPL_p`` below and is at least ``SPL_p`` wide; ``disclosed[i]`` for a suppressed cell whose
    interval is a single value (width ≤ 1e-8·max(1, max a)). A primary cell that is published, or
    exactly disclosed, is not protected. Unbounded intervals end at ±inf."""
    return attack(table, suppressed, protection, exact=True)


def interval(table: LinearTable, suppressed: np.ndarray, cell: int) -> tuple[float, float]:
    """The attacker's interval ``[min y, max y]`` of one cell under pattern ``suppressed`` (its value
    when published)."""
    suppressed = np.asarray(suppressed, dtype=bool)
    if not suppressed[cell]:
        return float(table.values[cell]), float(table.values[cell])
    down, up = deviation_bounds(table)
    groups = components(table.relations, suppressed)
    c = groups.of_cell[cell]
    if c < 0:
        return float(table.values[cell] - down[cell]), float(table.values[cell] + up[cell])
    cells, matrix = groups.cells[c], groups.matrix[c]
    lp = ComponentLP(matrix, -down[cells], up[cells])
    j = int(np.flatnonzero(cells == cell)[0])
    high, _, _ = lp.extreme(j, 1)
    low, _, _ = lp.extreme(j, -1)
    return float(table.values[cell] + low), float(table.values[cell] + high)
