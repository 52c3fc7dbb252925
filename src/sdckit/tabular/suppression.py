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

import time
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.context import Context, ProgressCallback, StageCallback
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams, spell
from sdckit.tabular._heuristic_suppression import heuristic_pattern
from sdckit.tabular._optimal_suppression import optimal_pattern
from sdckit.tabular._patterns import RepairLP, cell_weights, side_levels
from sdckit.tabular.attacker import attack, audit, deviation_bounds
from sdckit.tabular.base import TableProblem, TableResult, pattern_status, register_table_method
from sdckit.tabular.model import LinearTable, Protection
from sdckit.tabular.respondents import Coalition, Singletons

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

Cost = Literal["value", "cells", "log"]
Algorithm = Literal["auto", "optimal", "heuristic"]


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
    singletons: Singletons = "none",
    coalition: int = 0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Secondary cell suppression: ``(suppressed mask, figures)``; the pattern passes :func:`audit`.

    ``algorithm``, ``cost``, ``time_limit``, ``gap``, ``singletons`` and ``coalition`` are the
    parameters of :class:`SuppressParams` (the registered method ``suppress``), checked by it: one
    :class:`~sdckit.errors.ConfigError` naming each bad one. ``algorithm``: ``optimal``,
    ``heuristic`` or ``auto`` (optimal when primary cells × cells ≤ :data:`AUTO_OPTIMAL_LIMIT`);
    ``cost``: ``value``, ``cells`` or ``log``, overridden by ``weights`` (one finite cost ≥ 0 per
    cell); ``time_limit`` (seconds, > 0) and ``gap`` (relative MIP gap in [0, 1]) bound the optimal
    algorithm; ``repair``: the heuristic's repair step, ``lp`` or SPEC §8.5's ``neighbour``;
    ``singletons`` (``protect``/``none``) and ``coalition``: the respondent attacker of
    :mod:`sdckit.tabular.respondents`. One default differs from the registered method's:
    ``singletons`` is ``none`` here (the outside attacker alone), ``protect`` there (single
    contributors too)."""
    params = SuppressParams.parse(
        {
            "algorithm": algorithm,
            "cost": cost,
            "time_limit": time_limit,
            "gap": gap,
            "singletons": singletons,
            "coalition": coalition,
        },
        method="suppress",
    )
    suppressed, figures, _ = _suppress(table, protection, params, weights=weights, repair=repair)
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
    singletons: Singletons = "protect",
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
            repairer = RepairLP(scenario, w, down, up)
            repairer.set_suppressed(suppressed)
            for side, level in side_levels(scenario, attacked, failure.cell, result):
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
    params: SuppressParams,
    *,
    weights: Any = None,
    repair: str = "auto",
    holdings: list[Any] | None = None,
    progress: ProgressCallback | None = None,
    stage: StageCallback | None = None,
) -> tuple[np.ndarray, dict[str, Any], Any]:
    """The suppression of :func:`suppress` and of the registered method, with the parameters
    checked: ``(suppressed mask, figures, the final audit)``."""
    started = time.perf_counter()

    def say(message: str) -> None:
        if stage is not None:
            stage(message)

    algorithm, time_limit = params.algorithm, params.time_limit
    w = cell_weights(table, params.cost, weights)
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
                table, protection, w, time_limit=time_limit, gap=params.gap, incumbent=heuristic
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
            table,
            protection,
            w,
            suppressed,
            singletons=params.singletons,
            coalition=params.coalition,
            holdings=holdings,
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
        Singletons,
        Field(
            description="protect: every primary cell also holds against each single contributor of a "
            "suppressed cell (a singleton knows its cell; with --holding, a holding its cells), as "
            "sdcTable's detectSingletons; none: the outside attacker only."
        ),
    ] = "protect"
    coalition: Annotated[
        Coalition,
        Field(
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

    holdings = holding_respondents(problem.source, problem.spec, problem.table)
    table = with_contributions(problem.source, problem.spec, problem.table, params.coalition)
    suppressed, figures, result = _suppress(
        table,
        problem.protection,
        params,
        weights=weights,
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
