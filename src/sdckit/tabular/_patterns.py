"""What both suppression algorithms of :mod:`sdckit.tabular.suppression` share: the cost of
suppressing each cell, the sides on which a primary cell falls short of its protection, the LP
repair that finds the cheapest deviation protecting it there (its cells are then suppressed), and
the error for a cell no pattern protects."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse

from sdckit.errors import ConfigError, InputError
from sdckit.tabular.attacker import (
    PROTECTION_TOLERANCE,
    deviation_bounds,
    interval,
)
from sdckit.tabular.model import LinearTable, Protection

#: The cost of a zero-cost cell, relative to the smallest positive cost.
ZERO_COST = 1e-3


#: The costs of suppressing each cell by name (``SuppressParams.cost`` holds the rule on the names).
_COSTS: dict[str, Callable[[LinearTable], np.ndarray]] = {
    "value": lambda table: np.abs(table.values).copy(),
    "cells": lambda table: np.ones(table.n_cells),
    "log": lambda table: np.log1p(np.abs(table.values)),
}


def cell_weights(table: LinearTable, cost: str = "value", weights: Any = None) -> np.ndarray:
    """The cost ``w_i`` of suppressing each cell (``weights`` when given, else by ``cost``: ``value``,
    ``cells`` or ``log``, as :class:`~sdckit.tabular.suppression.SuppressParams` checked it)."""
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (table.n_cells,):
            raise ConfigError(f"weights has {w.size} values for a table of {table.n_cells} cells")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ConfigError("weights must be finite and non-negative")
    else:
        w = _COSTS[cost](table)
    positive = w[w > 0]
    floor = ZERO_COST * (float(positive.min()) if positive.size else 1.0)
    return np.where(w > 0, w, floor)


class RepairLP:
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
        from sdckit.tabular._highs import solve_lp

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
        zero = np.zeros(rows.size)
        matrix = sparse.hstack([sub, -sub], format="csc")
        result = solve_lp(np.r_[cost, cost], matrix, zero, zero, lower, upper, method="highs-ds")
        if not result.optimal or result.x is None:
            return None
        z = result.x[:k] - result.x[k:]
        moved = np.abs(result.x[:k]) + np.abs(result.x[k:]) > 1e-9 * max(1.0, level)
        return cells[moved], z[moved]


def unprotectable(table: LinearTable, protection: Protection, p: int) -> InputError:
    low, high = interval(table, np.ones(table.n_cells, dtype=bool), p)
    a = table.values[p]
    return InputError(
        f"cell {table.label(p)} cannot be protected: even with every cell suppressed its interval is "
        f"[{low:g}, {high:g}], its protection interval [{a - protection.lower[p]:g}, "
        f"{a + protection.upper[p]:g}] (width {protection.sliding[p]:g}) needs more"
    )


def side_levels(table: LinearTable, protection: Protection, p: int, result: Any) -> list[tuple[int, float]]:
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
