"""Mixed-integer programs and LPs solved with HiGHS through ``highspy`` (the solver scipy bundles, in a
newer release, with a start solution and the best solution found when the time limit stops the
search). Every solve of the table methods runs through :func:`run_interruptible`, so that Ctrl-C stops
it within a moment instead of when HiGHS returns."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from sdckit._extras import require

if TYPE_CHECKING:  # highspy is an extra ("tables"), imported where a model is made
    import highspy

#: What the message of a missing HiGHS names (the integer programs and the attacker's LPs).
HIGHS_FEATURE = "table protection with HiGHS (cell suppression, its audit, rounding of large tables)"


@dataclass(frozen=True)
class MipResult:
    """``x`` the best solution found (None if none), ``optimal`` proven, ``objective`` its value,
    ``bound`` the best lower bound, ``infeasible`` proven infeasible, ``status`` HiGHS's words."""

    x: np.ndarray | None
    optimal: bool
    infeasible: bool
    objective: float
    bound: float
    status: str


def solve_mip(
    cost: np.ndarray,
    matrix: sparse.spmatrix,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    integral: np.ndarray,
    *,
    time_limit: float,
    gap: float = 0.0,
    start: np.ndarray | None = None,
    feasibility_first: bool = False,
) -> MipResult:
    """Minimize ``cost @ x`` s.t. ``row_lower ≤ matrix x ≤ row_upper``, bounds, ``x[integral]`` whole.

    ``start``: a feasible solution to begin from. ``feasibility_first``: find any solution with a zero
    objective first (HiGHS finds one in a fraction of a second where the optimizing search may find
    none within the limit, as on large 3-D controlled rounding), then optimize from it.
    """
    import time

    require("tables", "highspy", feature=HIGHS_FEATURE)
    import highspy

    deadline = time.perf_counter() + time_limit
    if feasibility_first and start is None:
        found = _run(np.zeros_like(cost), matrix, row_lower, row_upper, col_lower, col_upper, integral,
                     max(0.01, time_limit / 2), 0.0, None, highspy)  # fmt: skip
        if found.infeasible:
            return found
        start = found.x
    left = max(0.01, deadline - time.perf_counter())
    result = _run(
        cost, matrix, row_lower, row_upper, col_lower, col_upper, integral, left, gap, start, highspy
    )
    if result.x is None and start is not None:
        objective = float(cost @ start)
        return MipResult(start, False, False, objective, -np.inf, result.status)
    return result


#: HiGHS's options for scipy's ``linprog`` methods: dual simplex; interior point with crossover.
_LP_METHODS = {
    "highs-ds": {"solver": "simplex", "simplex_strategy": 1},
    "highs-ipm": {"solver": "ipm", "run_crossover": "on"},
}


def solve_lp(
    cost: np.ndarray,
    matrix: sparse.spmatrix,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    *,
    method: str = "highs-ds",
) -> MipResult:
    """Minimize ``cost @ x`` s.t. ``row_lower ≤ matrix x ≤ row_upper`` and the bounds: an LP, by dual
    simplex (``highs-ds``) or interior point with crossover (``highs-ipm``, still a vertex).

    With the 'tables' extra through ``highspy`` (interruptible, :func:`run_interruptible`); without it
    through the HiGHS scipy bundles (``scipy.optimize.linprog``, which sees Ctrl-C only when it
    returns), so that the methods needing only the core keep working."""
    from sdckit._extras import _installed

    if not _installed("highspy"):
        from scipy.optimize import linprog

        rows = sparse.csr_matrix(matrix)
        equal = np.asarray(row_lower) == np.asarray(row_upper)
        lower, upper = np.asarray(row_lower, dtype=np.float64), np.asarray(row_upper, dtype=np.float64)
        inequality = sparse.vstack([rows[~equal], -rows[~equal]], format="csr")
        bound = np.r_[upper[~equal], -lower[~equal]]
        finite = np.isfinite(bound)
        found = linprog(
            cost,
            A_ub=inequality[finite] if finite.any() else None,
            b_ub=bound[finite] if finite.any() else None,
            A_eq=rows[equal] if equal.any() else None,
            b_eq=lower[equal] if equal.any() else None,
            bounds=np.c_[col_lower, col_upper],
            method=method,
        )
        objective = float(found.fun) if found.status == 0 else np.inf
        x = np.asarray(found.x) if found.status == 0 else None
        return MipResult(x, found.status == 0, found.status == 2, objective, objective, found.message)
    import highspy

    integral = np.zeros(np.asarray(cost).shape[0], dtype=bool)
    return _run(cost, matrix, row_lower, row_upper, col_lower, col_upper, integral, np.inf, 0.0, None,
                highspy, _LP_METHODS[method])  # fmt: skip


_quiet = False


def new_highs() -> highspy.Highs:
    """A ``highspy.Highs`` with its log off. HiGHS prints a banner on stdout when the first one is
    made in a process (before any option can be set): that one is made with stdout pointed at
    /dev/null, so that a command's output, or a CSV it writes on stdout, stays clean."""
    import os
    import sys

    require("tables", "highspy", feature=HIGHS_FEATURE)
    import highspy

    global _quiet
    if not _quiet:
        sys.stdout.flush()
        saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(devnull)
        _quiet = True
    else:
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def run_interruptible(highs: Any, stop: Callable[[], bool] | None = None) -> Any:
    """``highs.run()`` that Ctrl-C stops within a moment: every HiGHS solve goes through here.

    HiGHS holds the process inside one native call, where Python's own SIGINT handling only takes
    effect when the call returns (a MILP may run for its whole time limit). So during the call a
    SIGINT only sets a flag, which HiGHS's interrupt callbacks (``cbSimplexInterrupt``,
    ``cbIpmInterrupt``, ``cbMipInterrupt``, called between iterations) pass on as ``user_interrupt``;
    once HiGHS has returned, the KeyboardInterrupt is raised as Python would have raised it.
    ``stop``: a further reason to interrupt, asked at each callback (the optimal suppression's
    patience). Outside the main thread (no signal handler can be set there) only ``stop`` applies.
    """
    interrupted = threading.Event()

    def on_interrupt(event: Any) -> None:
        # set every time: HiGHS keeps the flag of the last call, also into the next run
        event.interrupt(interrupted.is_set() or (stop is not None and bool(stop())))

    callbacks = (highs.cbSimplexInterrupt, highs.cbIpmInterrupt, highs.cbMipInterrupt)
    for callback in callbacks:
        callback.subscribe(on_interrupt)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    # a SIGINT ignored (or handled outside Python) stays so
    install = main and previous not in (None, signal.SIG_IGN)
    if install:
        signal.signal(signal.SIGINT, lambda number, frame: interrupted.set())
    try:
        status = highs.run()
    finally:
        if install:
            signal.signal(signal.SIGINT, previous)
        for callback in callbacks:
            callback.unsubscribe(on_interrupt)
    if interrupted.is_set():
        if callable(previous):
            previous(signal.SIGINT, None)  # Python's default raises KeyboardInterrupt
        raise KeyboardInterrupt
    return status


def _run(
    cost,
    matrix,
    row_lower,
    row_upper,
    col_lower,
    col_upper,
    integral,
    time_limit,
    gap,
    start,
    highspy,
    options=None,
):
    h = new_highs()
    for option, value in (options or {}).items():
        h.setOptionValue(option, value)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", float(gap))
    h.setOptionValue("random_seed", 0)
    columns = sparse.csc_matrix(matrix, dtype=np.float64)
    lp = highspy.HighsLp()
    lp.num_col_ = int(cost.shape[0])
    lp.num_row_ = int(columns.shape[0])
    lp.col_cost_ = np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = np.asarray(col_lower, dtype=np.float64)
    lp.col_upper_ = np.asarray(col_upper, dtype=np.float64)
    lp.row_lower_ = np.asarray(row_lower, dtype=np.float64)
    lp.row_upper_ = np.asarray(row_upper, dtype=np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = columns.indptr
    lp.a_matrix_.index_ = columns.indices
    lp.a_matrix_.value_ = columns.data
    kinds = [highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous for flag in integral]
    lp.integrality_ = kinds
    h.passModel(lp)
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = list(np.asarray(start, dtype=np.float64))
        solution.value_valid = True
        h.setSolution(solution)
    if run_interruptible(h) == highspy.HighsStatus.kError:
        raise RuntimeError(f"HiGHS could not solve the model: {h.modelStatusToString(h.getModelStatus())}")
    status = h.getModelStatus()
    info = h.getInfo()
    infeasible = status == highspy.HighsModelStatus.kInfeasible
    has_solution = info.primal_solution_status == 2 and not infeasible  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=np.float64) if has_solution else None
    return MipResult(
        x=x,
        optimal=status == highspy.HighsModelStatus.kOptimal,
        infeasible=infeasible,
        objective=float(info.objective_function_value) if has_solution else np.inf,
        bound=float(info.mip_dual_bound),
        status=h.modelStatusToString(status),
    )
