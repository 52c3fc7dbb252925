"""The cell key method (``sdckit table cell-key``): deterministic noise from record keys.

Every record gets a random *record key* once, uniform on ``[0, 1)`` (seeded, or read from a column so
that all tables of a release share the keys); a cell's *cell key* is the sum of its records' keys
modulo 1; a *perturbation table* maps (cell value, cell key) to a noise. The same cell (the same set
of records) gets the same key in every table, hence the same noise: differencing two tables, or a
table and its re-run, reveals nothing new (Fraser & Wooton 2005; Thompson, Broadfoot & Elazar 2013;
the ESS recommendations for the 2021 census; sdcTools' R packages ``ptable`` and ``cellKey``).

Every cell — interior cells and totals alike — is perturbed on its own, so **the released table is
not additive**: a total is not the sum of its perturbed components. That is the method (each
published figure is protected, and consistent across tables), not a defect.

**Perturbation table for counts** (``ptable::create_cnt_ptable(D, V, js, pstay, mono)``). For each
original count ``i`` a distribution of the target ``j`` (noise ``v = j − i``) on ``|v| ≤ D``:

- row 0: zero stays zero (``p(0 → 0) = 1``) — no false positives;
- targets ``j ≥ 0``, and no target in ``1 .. js`` (small cells are moved to 0 or above ``js``);
- ``Σ p = 1``, mean ``Σ p v = 0`` (unbiased), variance ``Σ p v² ≤ V``;
- ``mono``: on the negative side the probabilities do not decrease towards ``v = 0``
  (``p(v) ≤ p(v + 1)`` for ``v < 0``, exactly ptable's constraint);
- ``pstay``: optional lower bound on ``p(i → i)``; as in ptable it is lowered by 0.05 (up to 20 tries)
  while the row's variance misses ``V``;
- among those, the distribution of maximum entropy (ptable's ``optim = 1``).

Rows ``i = 1 .. D`` (``js = 0``) or ``1 .. D + js + 1`` (``js > 0``); the last row is symmetric (full
support ``−D .. D``) and serves every larger count, as in ptable. A row whose support is truncated at
0 may reach its maximum entropy with a variance below ``V`` (e.g. ``i = 1`` for ``D = 2, V = 1``:
0.932); ptable keeps that row and reports it (``empResults``), and so do we
(:attr:`PerturbationTable.rows_below_variance`). The noise of a cell with key ``k`` is the ``v``
whose cumulative interval ``[p_int_lb, p_int_ub)`` of the row contains ``k``, intervals ordered by
``v`` from ``−D`` to ``D`` (ptable's default intervals; cellKey looks up ``k < p_int_ub``).

Deviations from ptable: we solve the maximum-entropy problem exactly through its dual (a few
multipliers, Newton on the active set) instead of ``nloptr``'s SLSQP with every probability bounded
below by ``1e-8`` and the intervals rounded to 8 digits, so rows have mean 0 and variance ``V`` to
machine precision; a row ptable cannot build (``V`` below the least variance a ``js``-row allows)
and a ``V`` above the uniform noise's variance ``D(D + 1)/3`` (no row could reach it) are a
:class:`~sdckit.errors.ConfigError` instead of ptable's error/warning; ptable's pstay loop stops when
the variance rounded to 3 digits equals ``V``, ours when it is within 5e-4.

**Record and cell keys.** Record keys are 52-bit binary fractions ``K / 2^52``; cell keys are summed
as two exact 26-bit integer halves, so the cell key of a cell is bit-for-bit the same whatever table
it is summed in (floating sums of keys in another order could differ in the last bits and, rarely,
cross an interval bound). Keys read from a column are truncated to 52 bits.

**Magnitude tables** (``cellKey::ck_params_nums(type = "top_contr", top_k = 1, mult_params =
ck_flexparams(fp, p = c(p_small, p_large), q), same_key = TRUE)`` with one ``"all"`` ptable from
``ptable::create_num_ptable(D, V, step, icat = 1 .. D)``). Per cell with value ``x_o`` and largest
contribution ``x_1``:

- the noise magnitude ``x_Δ = x_1 · p_small`` when ``|x_1| < fp``, else ``x_1 · m(|x_1|)`` with the
  flex function ``m(x) = p_large (1 + f₁ f₂^q)``, ``f₁ = (p_small x − p_large fp)/(p_large fp)``,
  ``f₂ = 2 fp / (fp + x)`` (from ``p_small`` at ``fp`` down to ``p_large`` for large cells);
- if ``|x_o| < |x_Δ|``: ``x_Δ = x_o`` and ``x_1 = x_o / p_small``;
- ``a = |x_1 / x_Δ|`` capped at ``D``; the noise ``v`` is looked up with the cell key in row ``a`` of
  the numeric ptable (noise on the grid ``1/step``), interpolated linearly between the two
  neighbouring rows when ``a`` is not a row;
- released ``x_o + sign(x_o)·|x_Δ|·v``, not below 0 for a positive cell.

Not implemented from cellKey: ``top_k > 1``, the even/odd and small-cell (separation) ptables, the
extra protection ``mu_c`` of sensitive cells, ``same_key = FALSE`` (scrambled keys), and
``use_zero_rkeys = FALSE`` (our cell keys sum the keys of every record of the cell, as for counts).
cellKey has no default flex point ``fp``; ours defaults to the median of the cells' positive
largest contributions.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated, Any, Self

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.params import Finite, MethodParams, Whole
from sdckit.tabular.base import TableProblem, TableResult, register_table_method
from sdckit.tabular.model import PUBLISHED

#: Record keys are integers below ``2^KEY_BITS`` (the key is ``K / 2^KEY_BITS``).
KEY_BITS = 52
_HALF = 26
_HALF_MOD = 1 << _HALF

#: ptable's pstay loop: step and number of tries.
_PSTAY_STEP, _PSTAY_TRIES = 0.05, 20


# ------------------------------------------------------------------------------------------------
# The perturbation table


@dataclass(frozen=True, eq=False)
class PerturbationTable:
    """A perturbation table: one row of noise probabilities per original value class.

    ``frame``: one line per (i, j) with ``p > 0``: ``i`` (original value class), ``j`` (target),
    ``v = j − i`` (noise), ``p``, ``p_int_lb``/``p_int_ub`` (the cumulative interval on ``[0, 1)``
    of the row, ordered by ``v``). ``classes``: the row values ``i`` (0 first); the last row
    serves every larger value. ``variances``: the variance each row reaches; ``rows_below_variance``:
    rows whose maximum-entropy distribution has a variance below ``V`` (support truncated at 0).
    """

    max_deviation: int
    variance: float
    small_cells: int
    step: int
    classes: np.ndarray
    frame: pl.DataFrame
    variances: np.ndarray
    kind: str = "counts"
    _lookup: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def rows_below_variance(self) -> list[float]:
        low = self.variances < self.variance - 1e-9
        low[0] = False
        return [float(i) for i in self.classes[low]]

    def _arrays(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per row: the upper interval bounds (the last one exactly 1) and the noises."""
        if not self._lookup:
            rows = []
            for i in self.classes:
                line = self.frame.filter(pl.col("i") == i)
                upper = line["p_int_ub"].to_numpy().copy()
                upper[-1] = 1.0  # every row covers [0, 1) exactly
                rows.append((upper, line["v"].to_numpy()))
            self._lookup["rows"] = rows
        return self._lookup["rows"]

    def noise(self, rows: np.ndarray, cell_keys: np.ndarray) -> np.ndarray:
        """The noise of each cell: row index ``rows`` (into :attr:`classes`), key in ``[0, 1)``: the
        ``v`` of the interval ``[p_int_lb, p_int_ub)`` holding the key (one searchsorted per row)."""
        rows = np.asarray(rows, dtype=np.int64)
        cell_keys = np.asarray(cell_keys, dtype=np.float64)
        noise = np.zeros(rows.shape[0])
        order = np.argsort(rows, kind="stable")
        starts = np.searchsorted(rows[order], np.arange(len(self.classes) + 1))
        for r, (upper, values) in enumerate(self._arrays()):
            members = order[starts[r] : starts[r + 1]]
            if members.size:
                noise[members] = values[np.searchsorted(upper, cell_keys[members], side="right")]
        return noise

    def row(self, i: float) -> pl.DataFrame:
        return self.frame.filter(pl.col("i") == i)


def perturbation_table(
    max_deviation: int = 2,
    variance: float = 1.0,
    small_cells: int = 0,
    *,
    pstay: float | None = None,
    mono: bool = True,
    step: int = 1,
    kind: str = "counts",
) -> PerturbationTable:
    """ptable's maximum-entropy perturbation table (see the module docstring).

    ``kind="counts"``: ``create_cnt_ptable(D, V, js, pstay, mono)``, rows ``0 .. D`` (``js = 0``) or
    ``0 .. D + js + 1``. ``kind="magnitudes"``: ``create_num_ptable(D, V, step, icat = 1 .. D)``,
    rows ``0, 1, .., D`` with noise on the grid ``1/step`` (``js`` and ``pstay`` ignored, as ptable
    does for magnitude tables). Built once per parameter set (cached).

    ``max_deviation`` (D, whole ≥ 1), ``variance`` (V > 0), ``small_cells`` (js, whole ≥ 0),
    ``pstay`` (in (0, 1)), ``mono`` and ``step`` (whole ≥ 1) are checked by the rules of
    :class:`CellKeyParams` (the registered method ``cell-key``): one
    :class:`~sdckit.errors.ConfigError` naming each bad one. A ``V`` no row can reach with this ``D``
    (and ``step``), or too small for ``js``, is a ConfigError too.
    """
    params = CellKeyParams.parse(
        {
            "max_deviation": max_deviation,
            "variance": variance,
            "small_cells": small_cells,
            "pstay": pstay,
            "mono": mono,
            "step": step,
        },
        method="cell-key",
    )
    if kind not in ("counts", "magnitudes"):
        raise ConfigError(f"kind must be 'counts' or 'magnitudes', got {kind!r}")
    p = params
    return _perturbation_table(p.max_deviation, p.variance, p.small_cells, p.pstay, p.mono, p.step, kind)


@functools.lru_cache(maxsize=64)
def _perturbation_table(
    max_deviation: int,
    variance: float,
    small_cells: int,
    pstay: float | None,
    mono: bool,
    step: int,
    kind: str,
) -> PerturbationTable:
    """:func:`perturbation_table` with its parameters checked (:class:`CellKeyParams`)."""
    D, V, js = max_deviation, float(variance), small_cells
    if kind == "counts":
        step = 1
    else:
        js, pstay = 0, None
    uniform = D * (D + 1.0 / step) / 3.0
    if uniform + 1e-12 < V:
        raise ConfigError(
            f"variance V={V} cannot be reached with max_deviation D={D}: the largest variance of a "
            f"maximum-entropy noise on -D..D is that of uniform noise, D(D+1/step)/3 = {uniform:.6g}"
        )
    blocked = set(range(1, js + 1))
    if kind == "counts":
        classes = np.arange(0, (D if js == 0 else D + js + 1) + 1, dtype=np.float64)
    else:
        classes = np.arange(0, D + 1, dtype=np.float64)
    lines: list[pl.DataFrame] = [_row_frame(0.0, np.array([0.0]), np.array([1.0]))]
    variances = [0.0]
    for i in classes[1:]:
        j = np.round(np.arange(max(i - D, 0.0) * step, (i + D) * step + 0.5) / step, 10)
        if blocked:
            j = j[~np.isin(j, list(blocked))]
        d = j - i
        p = _row_probabilities(d, V, pstay=None if i in blocked else pstay, mono=mono, i=i, js=js)
        lines.append(_row_frame(i, j, p))
        variances.append(float(p @ d**2))
    return PerturbationTable(
        max_deviation=D,
        variance=V,
        small_cells=js,
        step=step,
        classes=classes,
        frame=pl.concat(lines),
        variances=np.array(variances),
        kind=kind,
    )


def _row_frame(i: float, j: np.ndarray, p: np.ndarray) -> pl.DataFrame:
    upper = np.cumsum(p)
    upper[-1] = 1.0
    lower = np.r_[0.0, upper[:-1]]
    keep = p > 0
    return pl.DataFrame(
        {
            "i": np.full(keep.sum(), float(i)),
            "j": j[keep].astype(np.float64),
            "v": (j - i)[keep].astype(np.float64),
            "p": p[keep],
            "p_int_lb": lower[keep],
            "p_int_ub": upper[keep],
        }
    )


def _row_probabilities(
    d: np.ndarray, V: float, *, pstay: float | None, mono: bool, i: float, js: int
) -> np.ndarray:
    """Maximum entropy on the noises ``d``: ``Σp = 1``, ``Σpd = 0``, ``Σpd² ≤ V``, monotony on the
    negative side, ``p(0) ≥ pstay`` (lowered as ptable does while the variance misses ``V``)."""
    zero = np.flatnonzero(d == 0)
    least, degenerate = _least_variance(d, mono)
    if abs(least - V) <= 1e-9 * V:
        return degenerate  # the only variance left is V itself: the least-variance noise
    if least > V:
        raise ConfigError(
            f"variance V={V} is too small for small_cells js={js}: the noise of count {i:g} (which may "
            f"not become 1..{js}) has a variance of at least {least:.6g}; raise V or lower js"
        )
    if pstay is None or zero.size == 0:
        return _max_entropy(d, V, mono, stay=None)
    stay = pstay
    for _ in range(_PSTAY_TRIES):
        p = _max_entropy(d, V, mono, stay=stay if stay > 0 else None)
        if abs(p @ d**2 - V) < 5e-4:
            break
        stay = max(stay - _PSTAY_STEP, 0.0)
    return p


def _inequalities(d: np.ndarray, V: float, mono: bool, stay: float | None) -> tuple[np.ndarray, np.ndarray]:
    """``C p ≤ c`` rows: variance, monotony (``p_k − p_{k+1} ≤ 0`` left of 0), ``−p(0) ≤ −stay``."""
    rows, bounds = [d**2], [V]
    zero = np.flatnonzero(d == 0)
    if mono and zero.size:
        for k in range(int(zero[0])):
            r = np.zeros(d.size)
            r[k], r[k + 1] = 1.0, -1.0
            rows.append(r)
            bounds.append(0.0)
    if stay is not None and zero.size:
        r = np.zeros(d.size)
        r[zero[0]] = -1.0
        rows.append(r)
        bounds.append(-stay)
    return np.array(rows), np.array(bounds)


def _least_variance(d: np.ndarray, mono: bool) -> tuple[float, np.ndarray]:
    """The least variance of an unbiased noise on ``d`` (an LP), and that noise."""
    from scipy.optimize import linprog

    C, c = _inequalities(d, np.inf, mono, None)
    result = linprog(
        d**2,
        A_ub=C[1:] if len(C) > 1 else None,
        b_ub=c[1:] if len(C) > 1 else None,
        A_eq=np.vstack([np.ones(d.size), d]),
        b_eq=[1.0, 0.0],
        bounds=(0, None),
        method="highs",
    )
    if result.status != 0:
        raise ConfigError(f"no unbiased noise exists on the deviations {d.tolist()}")
    return float(result.fun), np.asarray(result.x)


def _max_entropy(d: np.ndarray, V: float, mono: bool, stay: float | None) -> np.ndarray:
    """Exact maximum-entropy distribution through the dual.

    With ``A`` the equality rows (mean) and ``C`` the inequality rows, the optimum is
    ``p ∝ exp(−(Aᵀλ + Cᵀμ))`` with ``μ ≥ 0`` minimizing ``log Σ exp(−Aᵀλ − Cᵀμ) + cᵀμ``: Newton
    on the active inequalities taken as equalities (to machine precision), in an active-set loop
    that adds violated rows and drops negative multipliers."""
    from scipy.special import logsumexp

    C, c = _inequalities(d, V, mono, stay)
    G = np.vstack([d[None, :], C])  # all constraint rows, mean first
    g = np.r_[0.0, c]
    n_eq = 1

    # active set: start from the mean and the variance, add violated rows, drop negative multipliers
    active = np.zeros(G.shape[0], dtype=bool)
    active[: n_eq + 1] = True
    full = np.zeros(G.shape[0])
    for _ in range(2 * G.shape[0] + 2):
        x = _newton(G[active], g[active], full[active])
        full = np.zeros(G.shape[0])
        full[active] = x
        p = np.exp(-(G.T @ full) - logsumexp(-(G.T @ full)))
        slack = g - G @ p
        negative = active & (full < -1e-12)
        negative[:n_eq] = False
        violated = ~active & (slack < -1e-12)
        if not negative.any() and not violated.any():
            return p
        if negative.any():
            active[np.argmin(np.where(negative, full, np.inf))] = False
        else:
            active[np.argmin(np.where(violated, slack, np.inf))] = True
    raise ConfigError(f"the maximum-entropy noise on {d.tolist()} did not converge (V={V})")


def _newton(G: np.ndarray, g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Minimize ``log Σ exp(−Gᵀx) + gᵀx`` (all rows equalities) by damped Newton."""
    from scipy.special import logsumexp

    def value(x: np.ndarray) -> float:
        return float(logsumexp(-(G.T @ x)) + g @ x)

    for _ in range(200):
        s = -(G.T @ x)
        p = np.exp(s - logsumexp(s))
        grad = g - G @ p
        if np.max(np.abs(grad)) < 1e-14:
            break
        mean = G @ p
        hess = (G * p) @ G.T - np.outer(mean, mean)
        step = np.linalg.lstsq(hess, -grad, rcond=None)[0]
        t, f0 = 1.0, value(x)
        while t > 1e-12 and value(x + t * step) > f0 + 1e-4 * t * (grad @ step) + 1e-15:
            t *= 0.5
        if t <= 1e-12:
            break
        x = x + t * step
    return x


# ------------------------------------------------------------------------------------------------
# Record keys, cell keys and the lookup


def record_keys(n: int, seed: int) -> np.ndarray:
    """``n`` record keys, uniform on ``[0, 1)`` as 52-bit binary fractions (seeded)."""
    return integer_keys_to_float(np.random.default_rng(seed).integers(0, 1 << KEY_BITS, size=n))


def integer_keys_to_float(keys: np.ndarray) -> np.ndarray:
    return np.asarray(keys, dtype=np.int64).astype(np.float64) / float(1 << KEY_BITS)


def float_keys_to_integer(keys: Any, name: str = "record keys") -> np.ndarray:
    """Record keys in ``[0, 1)`` as integers ``⌊k · 2^52⌋``; InputError when out of range or missing."""
    keys = np.asarray(keys, dtype=np.float64)
    if keys.size and (np.isnan(keys).any() or keys.min() < 0 or keys.max() >= 1):
        bad = int(np.flatnonzero(np.isnan(keys) | (keys < 0) | (keys >= 1))[0])
        raise InputError(f"{name} must lie in [0, 1): record {bad} has {keys[bad]}")
    return np.floor(keys * float(1 << KEY_BITS)).astype(np.int64)


def cell_keys(keys: np.ndarray, sums: Any) -> np.ndarray:
    """Cell keys: the sum of the records' keys of each cell, modulo 1, computed exactly.

    ``keys``: record keys in ``[0, 1)``; ``sums(values) -> (n_cells,)`` sums a per-record array over
    the records of every cell (e.g. ``lambda v: cell_sums(problem, v)``, or a sparse
    cells × records matrix product). The keys are split into two 26-bit integer halves, each summed
    exactly in float64 (up to 2^27 records), and recombined modulo 2^52.
    """
    integer = float_keys_to_integer(keys)
    high = (integer >> _HALF).astype(np.float64)
    low = (integer & (_HALF_MOD - 1)).astype(np.float64)
    sum_high = np.asarray(sums(high), dtype=np.float64)
    sum_low = np.asarray(sums(low), dtype=np.float64)
    if max(float(np.max(sum_high, initial=0)), float(np.max(sum_low, initial=0))) >= 2.0**53:
        raise InputError("too many records for exact cell keys (more than 2^27)")
    high_mod = np.mod(sum_high.astype(np.int64), _HALF_MOD)
    total = (high_mod << _HALF) + sum_low.astype(np.int64)
    return integer_keys_to_float(np.mod(total, 1 << KEY_BITS))


def perturb_counts(counts: Any, keys: np.ndarray, ptable: PerturbationTable) -> np.ndarray:
    """The noise of each count (whole numbers ≥ 0) with its cell key, from a counts ptable."""
    counts = np.asarray(counts, dtype=np.float64)
    if counts.size and (np.any(counts < 0) or np.any(counts != np.round(counts))):
        bad = int(np.flatnonzero((counts < 0) | (counts != np.round(counts)))[0])
        raise InputError(f"the cell key method perturbs whole counts ≥ 0: cell {bad} has {counts[bad]}")
    rows = np.minimum(counts, ptable.classes[-1]).astype(np.int64)
    return ptable.noise(rows, np.asarray(keys, dtype=np.float64))


def flex_multiplier(x: np.ndarray, p_small: float, p_large: float, flex_point: float, q: float) -> np.ndarray:
    """cellKey's flex function ``m(x)``: ``p_small`` below the flex point, falling to ``p_large``."""
    x = np.abs(np.asarray(x, dtype=np.float64))
    f1 = (p_small * x - p_large * flex_point) / (p_large * flex_point)
    f2 = 2 * flex_point / (flex_point + x)
    return np.where(x < flex_point, p_small, p_large * (1 + f1 * f2**q))


def perturb_magnitudes(
    values: Any,
    largest: Any,
    keys: np.ndarray,
    ptable: PerturbationTable,
    *,
    flex_point: float,
    p_small: float = 0.25,
    p_large: float = 0.05,
    q: float = 3.0,
) -> np.ndarray:
    """The noise of magnitude cells (cellKey's top-contribution flex variant, ``top_k = 1``).

    ``values``: cell values ``x_o``; ``largest``: each cell's largest contribution ``x_1``; ``keys``:
    cell keys; ``ptable``: a magnitudes ptable. Returns ``x̂`` with released ``x_o + x̂``.
    ``flex_point`` (> 0), ``p_small`` and ``p_large`` (in (0, 1]) and ``q`` (≥ 1) are checked by the
    rules of :class:`CellKeyParams` (``q`` is its ``flex_exponent``): one
    :class:`~sdckit.errors.ConfigError` naming each bad one.
    """
    params = CellKeyParams.parse(
        {"flex_point": flex_point, "p_small": p_small, "p_large": p_large, "flex_exponent": q},
        spell=lambda name: "q" if name == "flex_exponent" else name,
        method="cell-key",
    )
    return _magnitude_noise(
        values, largest, keys, ptable, float(flex_point), params.p_small, params.p_large, params.flex_exponent
    )


def _magnitude_noise(
    values: Any,
    largest: Any,
    keys: np.ndarray,
    ptable: PerturbationTable,
    flex_point: float,
    p_small: float,
    p_large: float,
    q: float,
) -> np.ndarray:
    """:func:`perturb_magnitudes` with its parameters checked (:class:`CellKeyParams`)."""
    xo = np.asarray(values, dtype=np.float64)
    x1 = np.asarray(largest, dtype=np.float64).copy()
    delta = x1 * flex_multiplier(x1, p_small, p_large, flex_point, q)
    rescale = np.abs(xo) < np.abs(delta)
    delta[rescale] = xo[rescale]
    x1[rescale] = xo[rescale] / p_small
    noise = np.zeros(xo.shape[0])
    live = delta != 0
    a = np.abs(x1[live] / delta[live])
    D = ptable.max_deviation
    a = np.clip(a, 1.0, D)
    row_values = ptable.classes  # 0, 1, .., D
    upper = np.searchsorted(row_values, a, side="left")  # first row ≥ a
    lower = np.where(row_values[upper] == a, upper, upper - 1)
    k = np.asarray(keys, dtype=np.float64)[live]
    v_low = ptable.noise(lower, k)
    v_up = ptable.noise(upper, k)
    span = row_values[upper] - row_values[lower]
    lam = np.divide(a - row_values[lower], span, out=np.zeros_like(a), where=span > 0)
    v = (1 - lam) * v_low + lam * v_up
    xhat = np.sign(xo[live]) * np.abs(delta[live]) * v
    positive = xo[live] > 0
    xhat = np.where(positive & (v < 0), np.maximum(xhat, -xo[live]), xhat)
    noise[live] = xhat
    return noise


# ------------------------------------------------------------------------------------------------
# The method


#: The largest ``max_deviation`` D, and the largest grid ``D·step`` of a magnitude ptable's row. A
#: perturbation table has a row for every count up to D (``js`` more) with up to ``2·D·step + 1``
#: noises, each a maximum-entropy problem whose active set grows with it: D = 30 (step 2) builds in
#: seconds, D = 100 or D = 30 with step 10 take minutes, D = 10⁶ would never end. ptable's and the
#: census's D are 2 to 20.
MAX_DEVIATION = 30
MAX_GRID = 60


class CellKeyParams(MethodParams):
    """Parameters of the cell key method (``sdckit table cell-key``)."""

    max_deviation: Annotated[
        Whole, Field(ge=1, description=f"D: the largest noise (ptable's D), at most {MAX_DEVIATION}.")
    ] = 2
    variance: Annotated[Finite, Field(gt=0, description="V: the noise variance (ptable's V).")] = 1.0
    small_cells: Annotated[
        Whole, Field(ge=0, description="js: no perturbed count is 1..js (small counts go to 0 or above js).")
    ] = 0
    pstay: Annotated[
        Finite | None, Field(gt=0, lt=1, description="Least probability that a count stays unchanged.")
    ] = None
    mono: Annotated[
        bool, Field(description="Noise probabilities do not decrease towards 0 on the negative side.")
    ] = True
    seed: Annotated[Whole, Field(ge=0, description="Seed of the record keys.")] = 0
    record_key: Annotated[
        str | None,
        Field(description="Column holding the record keys in [0, 1) (shared by a release's tables)."),
    ] = None
    step: Annotated[
        Whole, Field(ge=1, description="Magnitude tables: noise on the grid 1/step (ptable's step).")
    ] = 2
    flex_point: Annotated[
        Finite | None,
        Field(
            gt=0, description="Magnitude tables: the flex point fp (default: median largest contribution)."
        ),
    ] = None
    p_small: Annotated[
        Finite, Field(gt=0, le=1, description="Magnitude tables: noise share of small cells (below fp).")
    ] = 0.25
    p_large: Annotated[
        Finite, Field(gt=0, le=1, description="Magnitude tables: noise share of large cells.")
    ] = 0.05
    flex_exponent: Annotated[
        Finite, Field(ge=1, description="Magnitude tables: exponent q of the flex function.")
    ] = 3.0

    @model_validator(mode="after")
    def _a_table_that_can_be_built(self) -> Self:
        if self.max_deviation > MAX_DEVIATION:
            raise ValueError(
                f"{{max_deviation}} must be at most {MAX_DEVIATION}, got {self.max_deviation}: the "
                "perturbation table has a row of up to 2·D+1 noises for every count up to D, each a "
                "maximum-entropy problem, and takes minutes from D = 100 (ptable's D is typically 2 to 20)"
            )
        if self.max_deviation * self.step > MAX_GRID:
            raise ValueError(
                f"{{max_deviation}} × {{step}} must be at most {MAX_GRID}, got "
                f"{self.max_deviation} × {self.step}: a magnitude table's perturbation table has "
                "2·D·step+1 noises a row; take a coarser step"
            )
        return self


def _record_keys(problem: TableProblem, params: CellKeyParams) -> np.ndarray:
    if problem.source is None:
        raise ConfigError(
            "the cell key method needs the microdata the table is built from, not a table of cells"
        )
    data = problem.source.data
    if params.record_key is None:
        return record_keys(data.height, params.seed)
    if params.record_key not in data.columns:
        raise InputError(f"record_key: no column {params.record_key!r} in the data")
    column = data.get_column(params.record_key)
    if column.null_count():
        raise InputError(f"record key column {params.record_key!r} has missing values")
    if not column.dtype.is_numeric():
        raise InputError(f"record key column {params.record_key!r} is not numeric")
    keys = column.cast(pl.Float64).to_numpy()
    float_keys_to_integer(keys, name=f"the record keys of column {params.record_key!r}")
    return keys


def _cell_sums(problem: TableProblem, values: np.ndarray) -> np.ndarray:
    from sdckit.tabular.build import cell_sums

    return cell_sums(problem, values)


def cell_key_method(problem: TableProblem, params: CellKeyParams) -> TableResult:
    table = problem.table
    keys = cell_keys(_record_keys(problem, params), lambda v: _cell_sums(problem, v))
    if table.kind == "magnitude":
        if table.top is None or table.top.shape[1] == 0:
            raise InputError(
                "the cell key method on a magnitude table needs the largest contributions per cell"
            )
        ptable = _perturbation_table(
            params.max_deviation, params.variance, 0, None, params.mono, params.step, "magnitudes"
        )
        largest = table.top[:, 0]
        flex_point = params.flex_point
        if flex_point is None:
            positive = np.abs(largest[largest != 0])
            flex_point = float(np.median(positive)) if positive.size else 1.0
        shares = (params.p_small, params.p_large, params.flex_exponent)
        noise = _magnitude_noise(table.values, largest, keys, ptable, flex_point, *shares)
    else:
        ptable = _perturbation_table(
            params.max_deviation, params.variance, params.small_cells, params.pstay, params.mono, 1, "counts"
        )
        flex_point = None
        noise = perturb_counts(table.values, keys, ptable)
    released = table.values + noise
    figures: dict[str, Any] = {
        "max_deviation": ptable.max_deviation,
        "variance": ptable.variance,
        "small_cells": ptable.small_cells,
        "cells": table.n_cells,
        "cells_perturbed": int(np.count_nonzero(noise)),
        "mean_noise": float(noise.mean()) if noise.size else 0.0,
        "mean_absolute_noise": float(np.abs(noise).mean()) if noise.size else 0.0,
        "observed_noise_variance": float(noise.var()) if noise.size else 0.0,
        "largest_absolute_noise": float(np.abs(noise).max(initial=0.0)),
        "rows_below_variance": ptable.rows_below_variance,
        "record_keys": params.record_key or f"seed {params.seed}",
        "additive": False,
    }
    if flex_point is not None:
        figures["flex_point"] = flex_point
    return TableResult(
        method="cell-key",
        problem=problem,
        released=released,
        status=np.full(table.n_cells, PUBLISHED, dtype=object),
        figures=figures,
    )


def _summary(result: TableResult) -> dict[str, Any]:
    return dict(result.figures)


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"cell key method: D={figures['max_deviation']}, V={figures['variance']}, "
        f"js={figures['small_cells']}",
        f"{figures['cells_perturbed']} of {figures['cells']} cells perturbed; mean |noise| "
        f"{figures['mean_absolute_noise']:.4g}, noise variance {figures['observed_noise_variance']:.4g}",
        "every cell is perturbed independently: the released table is not additive",
    ]
    if figures["rows_below_variance"]:
        rows = ", ".join(f"{i:g}" for i in figures["rows_below_variance"])
        lines.append(f"ptable rows whose noise variance stays below V (support truncated at 0): {rows}")
    return lines


@register_table_method(
    "cell-key",
    CellKeyParams,
    summary=_summary,
    help="The cell key method: the same cell gets the same noise in every table (ptable/cellKey).",
    report=_report,
    needs_primary=False,
    statuses=True,
)
def _run_cell_key(problem: TableProblem, params: CellKeyParams, context: Context) -> TableResult:
    import dataclasses

    from sdckit.tabular.statuses import for_published_tables

    kept = for_published_tables(problem, "cell-key")
    result = cell_key_method(problem, params)
    if not kept.any():
        return result
    released = result.released.copy()
    released[kept] = problem.table.values[kept]  # published elsewhere, or to publish as it is
    figures = {**result.figures, "kept_cells": int(kept.sum())}
    return dataclasses.replace(result, released=released, figures=figures)
