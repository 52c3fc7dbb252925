"""The suppression heuristic (SPEC §8.5 on relations instead of 2-D lines; see
:mod:`sdckit.tabular.suppression`): the sweep "no relation holds exactly one suppressed cell", the
audit, the repair of every unprotected primary cell until the audit passes, then the pruning to a
minimal pattern."""

from __future__ import annotations

import dataclasses

import numpy as np

from sdckit._numba import njit
from sdckit.context import ProgressCallback, StageCallback
from sdckit.errors import ConfigError, InputError
from sdckit.tabular._patterns import RepairLP, side_levels, unprotectable
from sdckit.tabular.attacker import (
    attack,
    components,
    deviation_bounds,
)
from sdckit.tabular.model import LinearTable, Protection

#: The heuristic repairs with the LP when ``|P| · N`` is at most this, with SPEC §8.5's cheapest
#: neighbour above (an LP over the whole table per unprotected cell and side: ~0.1 s at 3,500 cells
#: of a 3-D table, where no cycle lies within two relations of a cell).
REPAIR_LP_LIMIT = 1_000_000


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
    """SPEC §8.5 generalized to relations (see :mod:`sdckit.tabular.suppression`); the pattern
    passes the audit. ``start``: a pattern to complete instead of the primary cells alone. ``repair``: ``lp``,
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
    repairer: RepairLP | None = None
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
                repairer = RepairLP(table, w, down, up)
            repairer.set_suppressed(suppressed)
            for side, level in side_levels(table, protection, int(p), result):
                reached = reach_up[p] if side == 1 else reach_down[p]
                if reached >= level and protection.sliding[p] <= 0:
                    continue
                found = repairer.witness(int(p), side, level)
                if found is None:
                    raise unprotectable(table, protection, int(p))
                cells, z = found
                np.maximum.at(reach_up, cells, z)
                np.maximum.at(reach_down, cells, -z)
                new = cells[~suppressed[cells]]
                suppressed[new] = True
                added += new.size
                repairer.set_suppressed(suppressed)
        if added == 0:
            raise unprotectable(table, protection, int(failing[0]))
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
