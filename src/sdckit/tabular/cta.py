"""Controlled tabular adjustment (``sdckit table cta``; SPEC §8.8).

Instead of suppressing sensitive cells, publish every cell, adjusted: ``a + z`` with ``z = z⁺ − z⁻``
the least weighted L1 change that keeps the table additive and moves every sensitive cell ``p`` out
of its protection interval, up by at least its upper protection level or down by at least its lower
one (Dandekar & Cox 2002; the MILP of Castro 2006)::

    min  Σ_i w_i (z⁺_i + z⁻_i)
    s.t. M (z⁺ − z⁻) = 0
         0 ≤ z⁺_i ≤ ub_i − a_i ,  0 ≤ z⁻_i ≤ a_i − lb_i         (cells stay in [lb, ub], default [0, ∞))
         z⁺_p ≥ UPL_p·y_p ,  z⁻_p ≥ LPL_p·(1 − y_p) ,  z⁺_p ≤ U_p·y_p ,  z⁻_p ≤ U_p·(1 − y_p)
         (y_p binary: 1 = up)

``w_i = 1/a_i`` (``1`` where ``a_i = 0``) by default, so that a change is priced relative to the cell,
or ``w_i = 1``; ``U_p`` is a big-M, ``Σ_i a_i + UPL_p`` (``a_p − lb_p`` below). ``keep_totals`` fixes
every total (margins and subtotals): only interior cells move.

Algorithms: ``milp`` solves the model with HiGHS (``highspy``, interruptible) within the time limit;
``lp`` is SPEC §8.8's LP heuristic: (1) the LP relaxation (``y ∈ [0, 1]``), (2) each sensitive cell's
direction up when its relaxed ``y_p ≥ 0.5``, (3) the LP with the directions fixed, (4) while that is
infeasible, flip one direction at a time (in order of ``|y_p − 0.5|`` ascending, each flip tried on
its own) and re-solve; ``auto`` uses the MILP for problems of at most ``AUTO_MILP_SENSITIVE`` sensitive
cells and the LP heuristic for larger ones, then the MILP when the heuristic fails.

The result is checked before it is returned: additive, every cell within its bounds, every sensitive
cell at or beyond ``a_p + UPL_p`` or ``a_p − LPL_p``. When the table, the protection levels and the
bounds are whole numbers, the adjustment is rounded to whole numbers if it still passes the checks
(it does whenever the LP solution is integral, as for 2-D tables).

References: Dandekar, R. A. & Cox, L. H. (2002), Synthetic tabular data: an alternative to complementary
cell suppression, manuscript, EIA; Castro, J. (2006), Minimum-distance controlled perturbation methods
for large-scale tabular data protection, EJOR 171.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field
from scipy import sparse

from sdckit.context import Context
from sdckit.errors import InputError
from sdckit.params import Finite, MethodParams
from sdckit.tabular.base import TableProblem, TableResult, register_table_method
from sdckit.tabular.model import PRIMARY, PUBLISHED, LinearTable, Protection

#: ``algorithm="auto"`` solves the MILP when there are at most this many sensitive cells (measured:
#: see benchmarks/_tables_rounding.py), the LP heuristic otherwise.
AUTO_MILP_SENSITIVE = 50


def cta_weights(values: np.ndarray, cost: str) -> np.ndarray:
    """``w_i = 1/a_i`` (1 where ``a_i = 0``) for ``inverse``, 1 for ``cells``."""
    if cost == "cells":
        return np.ones(values.shape[0])
    safe = np.where(values > 0, values, 1.0)
    return np.where(values > 0, 1.0 / safe, 1.0)


class _Model:
    """The CTA program of a table, its bounds and its sensitive cells."""

    def __init__(self, table: LinearTable, protection: Protection, weights: np.ndarray, keep_totals: bool):
        a = table.values
        self.table, self.n = table, table.n_cells
        self.weights = weights
        self.sensitive = protection.cells
        self.upl = protection.upper[self.sensitive].astype(np.float64)
        self.lpl = protection.lower[self.sensitive].astype(np.float64)
        bound_low, bound_high = table.bounds()
        lower = np.minimum(bound_low, a)
        upper = np.maximum(bound_high, a)
        self.up_cap = upper - a  # may be inf
        self.down_cap = a - lower
        if keep_totals:
            totals = table.totals()
            self.up_cap = np.where(totals, 0.0, self.up_cap)
            self.down_cap = np.where(totals, 0.0, self.down_cap)
        p = self.sensitive
        self.can_up = self.up_cap[p] >= self.upl - 1e-9
        self.can_down = self.down_cap[p] >= self.lpl - 1e-9
        neither = ~(self.can_up | self.can_down)
        if neither.any():
            cell = int(p[np.flatnonzero(neither)[0]])
            raise InputError(
                f"cell {table.label(cell)} cannot be moved out of its protection interval: it can go up "
                f"by at most {self.up_cap[cell]:g} (upper protection {protection.upper[cell]:g}) and down "
                f"by at most {self.down_cap[cell]:g} (lower protection {protection.lower[cell]:g})"
                + ("; keep_totals fixes every total" if keep_totals else "")
            )
        self.big = float(np.abs(a).sum()) + self.upl
        self.equality = sparse.hstack([table.relations, -table.relations], format="csr")

    def z_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(2 * self.n), np.r_[self.up_cap, self.down_cap]

    def cost(self) -> np.ndarray:
        return np.r_[self.weights, self.weights]

    def fixed(self, up: np.ndarray) -> tuple[np.ndarray, float] | None:
        """The LP with the directions fixed (``up`` per sensitive cell): ``(z, objective)`` or None
        when infeasible."""
        from sdckit.tabular._highs import solve_lp

        lower, upper = self.z_bounds()
        p, n = self.sensitive, self.n
        lower[p] = np.where(up, self.upl, 0.0)
        upper[p] = np.where(up, upper[p], 0.0)
        lower[n + p] = np.where(up, 0.0, self.lpl)
        upper[n + p] = np.where(up, 0.0, upper[n + p])
        zero = np.zeros(self.equality.shape[0])
        result = solve_lp(self.cost(), self.equality, zero, zero, lower, upper, method="highs-ds")
        if not result.optimal or result.x is None:
            return None
        return result.x[:n] - result.x[n:], result.objective

    def milp_parts(self):
        """Cost, integrality, bounds and constraints of the MILP over ``[z⁺, z⁻, y]``."""
        from scipy.optimize import Bounds, LinearConstraint

        n, k, p = self.n, self.sensitive.shape[0], self.sensitive
        lower, upper = self.z_bounds()
        y_lower = np.where(self.can_down, 0.0, 1.0)
        y_upper = np.where(self.can_up, 1.0, 0.0)
        rows = np.arange(k)
        # z⁺_p − UPL·y ≥ 0 ; z⁻_p + LPL·y ≥ LPL ; z⁺_p − U·y ≤ 0 ; z⁻_p + U·y ≤ U
        down_big = self.down_cap[p]
        blocks = []
        for z_col, y_coef in ((p, -self.upl), (n + p, self.lpl), (p, -self.big), (n + p, down_big)):
            blocks.append(
                sparse.csr_matrix(
                    (np.r_[np.ones(k), y_coef], (np.r_[rows, rows], np.r_[z_col, 2 * n + rows])),
                    shape=(k, 2 * n + k),
                )
            )
        inf = np.full(k, np.inf)
        linking = LinearConstraint(
            sparse.vstack(blocks, format="csr"),
            np.r_[np.zeros(k), self.lpl, -inf, -inf],
            np.r_[inf, inf, np.zeros(k), down_big],
        )
        padding = sparse.csr_matrix((self.equality.shape[0], k))
        equality = sparse.hstack([self.equality, padding], format="csr")
        balance = LinearConstraint(equality, 0.0, 0.0)
        cost = np.r_[self.cost(), np.zeros(k)]
        integrality = np.r_[np.zeros(2 * n), np.ones(k)]
        bounds = Bounds(np.r_[lower, y_lower], np.r_[upper, y_upper])
        return cost, integrality, bounds, [balance, linking]


def controlled_adjustment(
    table: LinearTable,
    protection: Protection,
    *,
    cost: Literal["inverse", "cells"] = "inverse",
    weights: np.ndarray | None = None,
    algorithm: Literal["auto", "milp", "lp"] = "auto",
    time_limit: float = 60.0,
    keep_totals: bool = False,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Adjust ``table`` by the least weighted L1 change that keeps it additive and moves every
    sensitive cell of ``protection`` out of its protection interval.

    Parameters
    ----------
    table, protection : LinearTable, Protection
        The cells, their relations and bounds; the sensitive cells with their UPL and LPL.
    cost : {"inverse", "cells"}, default="inverse"
        ``w_i = 1/a_i`` (1 for empty cells) or ``w_i = 1``; ``weights`` overrides it.
    algorithm : {"auto", "milp", "lp"}, default="auto"
        The MILP, SPEC §8.8's LP heuristic, or the MILP for small problems and the heuristic (then
        the MILP if it fails) for large ones.
    time_limit : float, default=60
        Seconds for the MILP (> 0).
    keep_totals : bool, default=False
        Leave every total (margin, subtotal) unchanged.

    Returns
    -------
    (adjusted, figures)
        ``adjusted``: ``(n,)`` additive values; ``figures``: ``objective``, ``total_change``,
        ``cells_changed``, ``moved_up``, ``moved_down`` (sensitive cells), ``optimal`` (proven),
        ``algorithm`` (the one that produced the result), ``relaxation`` (the LP bound, when solved),
        ``seconds``.

    Raises
    ------
    ConfigError
        ``cost``, ``algorithm``, ``time_limit`` or ``keep_totals`` breaks a rule of
        :class:`CtaParams` (the registered method ``cta``): one error naming each.
    InputError
        The table is not additive, a sensitive cell cannot move far enough either way within its
        bounds, or no adjustment exists (or none was found within the time limit).
    """
    params = CtaParams.parse(
        {"cost": cost, "algorithm": algorithm, "time_limit": time_limit, "keep_totals": keep_totals},
        method="cta",
    )
    return _controlled_adjustment(table, protection, params, weights)


def _controlled_adjustment(
    table: LinearTable,
    protection: Protection,
    params: CtaParams,
    weights: np.ndarray | None,
    stage: Any = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """:func:`controlled_adjustment` with its parameters checked; ``weights`` (one per cell), when
    given, replaces ``params.cost``; ``stage``: told when the MILP starts (a run's stage line)."""
    started = time.perf_counter()
    algorithm, time_limit, keep_totals = params.algorithm, params.time_limit, params.keep_totals
    if not table.is_additive():
        worst = int(np.argmax(np.abs(table.residuals())))
        raise InputError(
            f"the table is not additive (relation {worst} is off by {table.residuals()[worst]:g}): "
            "controlled tabular adjustment needs totals equal to the sums of their cells"
        )
    w = cta_weights(table.values, params.cost) if weights is None else np.asarray(weights, dtype=np.float64)
    model = _Model(table, protection, w, keep_totals)
    figures: dict[str, Any] = {}
    z = None
    if model.sensitive.size == 0:
        z, optimal, used = np.zeros(table.n_cells), True, "none"
    else:
        use_milp = algorithm == "milp" or (
            algorithm == "auto" and model.sensitive.size <= AUTO_MILP_SENSITIVE
        )
        if not use_milp:
            found = lp_heuristic(model)
            if found is not None:
                z, objective, relaxation = found
                optimal, used = objective <= relaxation + 1e-9 * max(1.0, abs(objective)), "lp"
                figures["relaxation"] = relaxation
            elif algorithm == "lp":
                raise InputError(
                    "the LP heuristic found no adjustment (every direction it tried is infeasible); "
                    "use algorithm milp"
                )
        if z is None:
            left = max(0.01, time_limit - (time.perf_counter() - started))
            if stage is not None:
                stage(
                    f"solving the CTA MILP ({model.sensitive.size:,} sensitive cells, "
                    f"time limit {left:.3g} s)"
                )
            result = _solve(model, integer=True, time_limit=left)
            if result.infeasible:
                raise InputError(
                    "no additive adjustment moves every sensitive cell out of its protection interval "
                    "within the cells' bounds" + ("; keep_totals fixes every total" if keep_totals else "")
                )
            if result.x is None:
                raise InputError(
                    f"the CTA MILP found no adjustment within the time limit of {time_limit:g} s "
                    f"({result.status}); raise time_limit or use algorithm lp"
                )
            n = table.n_cells
            up = result.x[2 * n :] > 0.5
            # re-solve with the directions fixed: a vertex, free of the MILP's tolerances
            refined = model.fixed(up)
            z = refined[0] if refined is not None else result.x[:n] - result.x[n : 2 * n]
            optimal, used = result.optimal, "milp"
    adjusted = _polish(table, model, protection, z)
    _verify(table, model, protection, adjusted)
    change = adjusted - table.values
    p = model.sensitive
    figures = {
        "objective": float(w @ np.abs(change)),
        "total_change": float(np.abs(change).sum()),
        "cells_changed": int(np.count_nonzero(np.abs(change) > 1e-9 * max(1.0, np.abs(table.values).max()))),
        "moved_up": int(np.count_nonzero(change[p] > 0)),
        "moved_down": int(np.count_nonzero(change[p] < 0)),
        "optimal": bool(optimal),
        "algorithm": used,
        **figures,
        "seconds": time.perf_counter() - started,
    }
    return adjusted, figures


def _solve(model: _Model, *, integer: bool, time_limit: float) -> Any:
    """The CTA model (the MILP, or its LP relaxation) solved by HiGHS: through ``highspy`` and
    :func:`~sdckit.tabular._highs.solve_mip` (interruptible by Ctrl-C within a moment) when the
    'tables' extra is installed, else through the HiGHS scipy bundles (``scipy.optimize.milp``, which
    sees Ctrl-C only when it returns): CTA needs only the core."""
    from sdckit._extras import _installed
    from sdckit.tabular._highs import MipResult, solve_mip

    cost, integrality, bounds, constraints = model.milp_parts()
    if not _installed("highspy"):
        from scipy.optimize import milp

        kinds = integrality if integer else np.zeros_like(integrality)
        options = {"time_limit": time_limit} if np.isfinite(time_limit) else {}
        found = milp(cost, integrality=kinds, bounds=bounds, constraints=constraints, options=options)
        objective = float(found.fun) if found.x is not None else np.inf
        return MipResult(found.x, found.status == 0, found.status == 2, objective, -np.inf, found.message)
    matrix = sparse.vstack([constraint.A for constraint in constraints], format="csr")
    row_lower = np.concatenate([np.broadcast_to(c.lb, c.A.shape[0]) for c in constraints])
    row_upper = np.concatenate([np.broadcast_to(c.ub, c.A.shape[0]) for c in constraints])
    integral = integrality.astype(bool) if integer else np.zeros(integrality.shape[0], dtype=bool)
    return solve_mip(
        cost, matrix, row_lower, row_upper, bounds.lb, bounds.ub, integral, time_limit=time_limit
    )


def lp_heuristic(model: _Model) -> tuple[np.ndarray, float, float] | None:
    """SPEC §8.8's LP heuristic: ``(z, objective, relaxation bound)`` or None when it fails."""
    relaxed = _solve(model, integer=False, time_limit=np.inf)
    if relaxed.infeasible:
        return None
    if relaxed.x is None:  # pragma: no cover - an LP without limits is solved
        raise InputError("the CTA LP relaxation could not be solved: " + relaxed.status)
    y = relaxed.x[2 * model.n :]
    up = y >= 0.5
    found = model.fixed(up)
    if found is None:
        for index in np.argsort(np.abs(y - 0.5), kind="stable"):
            if not (model.can_up[index] and model.can_down[index]):
                continue
            flipped = up.copy()
            flipped[index] = ~flipped[index]
            found = model.fixed(flipped)
            if found is not None:
                break
    if found is None:
        return None
    return found[0], found[1], float(relaxed.objective)


def fixed_direction_objective(
    table: LinearTable, protection: Protection, up: Any, *, cost: str = "inverse"
) -> float | None:
    """The least cost of an adjustment moving each sensitive cell in the given direction (True = up),
    None when there is none: step 3 of the LP heuristic, for a person or a test to compare directions.
    ``cost``: ``inverse`` or ``cells``, as :class:`CtaParams` checks it."""
    params = CtaParams.parse({"cost": cost}, method="cta")
    model = _Model(table, protection, cta_weights(table.values, params.cost), False)
    found = model.fixed(np.asarray(up, dtype=bool))
    return None if found is None else found[1]


def _polish(table: LinearTable, model: _Model, protection: Protection, z: np.ndarray) -> np.ndarray:
    """``a + z``; rounded to whole numbers when the data are whole and the rounded table still passes
    :func:`_verify` (floating noise off an integral LP vertex), else as solved."""
    adjusted = table.values + z
    whole = [table.values, protection.upper, protection.lower]
    if all(np.all(v == np.round(v)) for v in whole):
        rounded = np.round(adjusted)
        if np.abs(rounded - adjusted).max(initial=0.0) < 1e-6:
            try:
                _verify(table, model, protection, rounded, tolerance=0.0)
                return rounded
            except RuntimeError:
                pass
    return adjusted


def _verify(
    table: LinearTable, model: _Model, protection: Protection, adjusted: np.ndarray, tolerance: float = 1e-7
) -> None:
    """Raise RuntimeError (a bug, not the user's) unless the adjusted table is additive, within the
    cells' bounds and every sensitive cell is out of its protection interval."""
    scale = max(1.0, float(np.abs(adjusted).max(initial=0.0)))
    slack = tolerance * scale
    if np.abs(table.residuals(adjusted)).max(initial=0.0) > max(slack, 1e-9 * scale):
        raise RuntimeError("the adjusted table is not additive")
    change = adjusted - table.values
    if np.any(change > model.up_cap + slack) or np.any(-change > model.down_cap + slack):
        raise RuntimeError("an adjusted cell is out of its bounds")
    p = model.sensitive
    outside = (change[p] >= model.upl - slack) | (-change[p] >= model.lpl - slack)
    if not outside.all():
        cell = int(p[np.flatnonzero(~outside)[0]])
        raise RuntimeError(f"cell {table.label(cell)} is still inside its protection interval")


class CtaParams(MethodParams):
    """Parameters of controlled tabular adjustment (``sdckit table cta``)."""

    cost: Annotated[
        Literal["inverse", "cells"],
        Field(description="Weight of a cell's change: 1/value (inverse; 1 for empty cells) or 1 (cells)."),
    ] = "inverse"
    algorithm: Annotated[
        Literal["auto", "milp", "lp"],
        Field(
            description="milp: the exact integer program; lp: the LP heuristic (relaxation, directions "
            "rounded, re-solved); auto: milp for few sensitive cells, lp (then milp if it fails) for many."
        ),
    ] = "auto"
    time_limit: Annotated[Finite, Field(gt=0, description="Seconds for the integer program.")] = 60.0
    keep_totals: Annotated[
        bool,
        Field(description="Leave every total (margins and subtotals) unchanged: only interior cells move."),
    ] = False


def _cta_report(figures: dict[str, Any]) -> list[str]:
    proven = "optimal" if figures["optimal"] else "not proven optimal"
    return [
        f"adjusted ({figures['algorithm']}, {proven}): objective {figures['objective']:.6g}, "
        f"{figures['cells_changed']:,} cells changed by {figures['total_change']:g} in all; "
        f"sensitive cells moved up {figures['moved_up']:,}, down {figures['moved_down']:,}"
    ]


@register_table_method(
    "cta",
    CtaParams,
    summary=lambda result: dict(result.figures),
    help="Controlled tabular adjustment: the least change that moves sensitive cells out of their "
    "protection intervals, totals still additive (SPEC §8.8).",
    report=_cta_report,
    needs_primary=True,
    statuses=True,
)
def _run_cta(problem: TableProblem, params: CtaParams, context: Context) -> TableResult:
    from sdckit.tabular.statuses import for_published_tables

    kept = for_published_tables(problem, "cta")  # kept by their bounds (apply_statuses)
    adjusted, figures = _controlled_adjustment(problem.table, problem.protection, params, None, context.stage)
    if not np.allclose(adjusted[kept], problem.table.values[kept]):
        raise AssertionError("a cell to keep was adjusted")  # its bounds forbid it
    status = np.full(problem.table.n_cells, PUBLISHED, dtype=object)
    status[problem.protection.primary] = PRIMARY
    return TableResult(method="cta", problem=problem, released=adjusted, status=status, figures=figures)
