"""Differential privacy for the query server (``protection: dp``): OpenDP's mechanisms, calibrated
and checked before anything is spent.

Neighbouring datasets differ by **changing one record** (the tutorial's "modifying a single
record"; bounded DP: the number of records is public). Sensitivities under that relation, with
numeric values clamped to the declared ``bounds`` [L, U] and M = max(|L|, |U|):

===========================  ====================  ===========================
query                        L1 (Laplace)          L2 (Gaussian)
===========================  ====================  ===========================
count                        1                     1
sum                          max(U − L, M)         max(U − L, M)
count per group / bin        2                     √2
sum per group                max(U − L, 2M)        max(U − L, √2·M)
===========================  ====================  ===========================

(a changed record may leave the query set, or move from one group to another, changing two
groups). A group-by answers every key of the declared domain (``domains`` in the server
configuration, else the values with weights in the attribute configuration), zero-count keys
included, and never a key taken from the data; the groups are one vector query (parallel
composition). A mean spends ε/2 on the sum and ε/2 on the count of non-missing values and is
their ratio clamped to [L, U]. A numeric histogram with a number of bins uses equal bins over
[L, U] (values clamped); with explicit edges, values outside them are not counted. A quantile is
OpenDP's exponential mechanism over 201 equally spaced candidates in [L, U]
(``make_quantile_score_candidates`` then ``then_noisy_max``, symmetric distance 2 for one changed
record), without group-by. The noise is OpenDP's (``make_laplace`` for ε-DP, ``make_gaussian``
through ``make_zCDP_to_approxDP`` and ``make_fix_delta`` for (ε, δ)-DP), scaled so that OpenDP's
privacy map of the stated sensitivity is within the ε asked; noisy values are returned as they
come (not rounded).

Accounting: basic sequential composition of (ε, δ) per analyst and data source — the ε of the
answers add up to at most ``budget``, their δ to at most ``delta_budget`` — and, optionally, of
the ε of all analysts on a source to at most ``total_budget``. Basic composition holds for
adaptively chosen queries with the parameters stated before each answer, which is what an
interactive ledger charges; it keeps the ledger a pair of sums that a data steward can check by
hand. (Rényi or zCDP accounting would let many Gaussian answers cost less, at the price of a
ledger whose meaning depends on a conversion; sdckit chooses the auditable one.)

Order of work (:meth:`Answer.draw`): every measurement is built and calibrated first, so that an ε
too small or too large for the mechanism (a scale that is not finite, a calibration that OpenDP
cannot reach) is a :class:`~sdckit.query.errors.QueryError` before anything is spent; the noisy
values are drawn and checked to be finite, still before the spend; the service then records the
spend, and releases the answer only once it is committed. A refused spend discards the drawn
values (never shown), so nothing is charged for an answer that is not given, and nothing is given
that is not charged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from sdckit._extras import missing_extra
from sdckit.query.engine import GroupStats
from sdckit.query.errors import QueryError

try:  # an optional dependency: without it, one error naming the extra, not a traceback
    import opendp.prelude as dp
except ImportError as error:
    raise missing_extra("server", error, "the query server's differential privacy") from error

dp.enable_features("contrib")

NEIGHBOURS = "change-one"
QUANTILE_CANDIDATES = 201

#: The largest noise scale accepted (beyond, the answer is noise only and may overflow).
MAX_SCALE = 1e15


def _vector_domain() -> Any:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False))


def _uncalibrated(mechanism: str, epsilon: float, delta: float | None, why: str) -> QueryError:
    stated = f"epsilon {epsilon:g}" + (f" and delta {delta:g}" if delta is not None else "")
    return QueryError(f"epsilon: {stated} cannot be used with the {mechanism} mechanism: {why}")


def laplace(sensitivity: float, epsilon: float) -> Any:
    """OpenDP's Laplace measurement of a vector with the given L1 sensitivity, spending ``epsilon``."""
    scale = sensitivity / epsilon
    if not math.isfinite(scale) or scale > MAX_SCALE:
        raise _uncalibrated("Laplace", epsilon, None, f"its noise scale {scale:g} is not a usable number")
    try:
        measurement = dp.m.make_laplace(_vector_domain(), dp.l1_distance(T=float), scale)
        spent = measurement.map(sensitivity)
    except (dp.OpenDPException, OverflowError, ValueError) as error:
        raise _uncalibrated("Laplace", epsilon, None, _reason(error)) from None
    if not spent <= epsilon * (1 + 1e-9):
        raise _uncalibrated("Laplace", epsilon, None, f"OpenDP's privacy map gives {spent:g}")
    return measurement


def gaussian(sensitivity: float, epsilon: float, delta: float) -> Any:
    """OpenDP's Gaussian measurement (zCDP converted to (ε, δ)) with the given L2 sensitivity."""

    def make(scale: float) -> Any:
        base = dp.m.make_gaussian(_vector_domain(), dp.l2_distance(T=float), scale)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(base), delta)

    # the privacy loss depends on sensitivity / scale only: calibrate for sensitivity 1 (a search
    # with a large sensitivity overflows OpenDP's bounds), then scale up and check OpenDP's map
    try:
        scale = dp.binary_search_param(make, d_in=1.0, d_out=(epsilon, delta)) * sensitivity
        if not math.isfinite(scale) or scale > MAX_SCALE:
            raise ValueError(f"its noise scale {scale:g} is not a usable number")
        measurement = make(scale)
        spent = measurement.map(sensitivity)
    except (dp.OpenDPException, OverflowError, ValueError, ZeroDivisionError) as error:
        raise _uncalibrated("Gaussian", epsilon, delta, _reason(error)) from None
    if not (spent[0] <= epsilon * (1 + 1e-6) and spent[1] <= delta * (1 + 1e-9)):
        raise _uncalibrated("Gaussian", epsilon, delta, f"OpenDP's privacy map gives {spent}")
    return measurement


def _reason(error: BaseException) -> str:
    text = str(getattr(error, "message", None) or error).strip().splitlines()
    first = text[0] if text else type(error).__name__
    return first[:200] or type(error).__name__


def _finite(values: list[float], what: str) -> list[float]:
    if not all(math.isfinite(v) for v in values):
        raise QueryError(
            f"epsilon: the noise drawn for this {what} is not a finite number: ask a larger epsilon"
        )
    return values


def vector(
    values: list[float], l1: float, l2: float, epsilon: float, delta: float | None
) -> Callable[[], list[float]]:
    """The drawing of noisy ``values`` (one vector query), its measurement built now."""
    if not values:
        return lambda: []
    measurement = laplace(l1, epsilon) if delta is None else gaussian(l2, epsilon, delta)
    data = [float(v) for v in values]
    return lambda: _finite([float(v) for v in measurement(data)], "answer")


def quantile(
    values: np.ndarray, alpha: float, bounds: tuple[float, float], epsilon: float
) -> Callable[[], list[float]]:
    """The drawing of a noisy quantile (exponential mechanism), its measurement built now."""
    candidates = [float(c) for c in np.linspace(bounds[0], bounds[1], QUANTILE_CANDIDATES)]
    try:
        score = dp.t.make_quantile_score_candidates(
            _vector_domain(), dp.symmetric_distance(), candidates, alpha
        )

        def make(scale: float) -> Any:
            return score >> dp.m.then_noisy_max(dp.max_divergence(), scale=scale, negate=True)

        scale = dp.binary_search_param(make, d_in=2, d_out=epsilon)
        if not math.isfinite(scale) or scale > MAX_SCALE:
            raise ValueError(f"its noise scale {scale:g} is not a usable number")
        measurement = make(scale)
    except (dp.OpenDPException, OverflowError, ValueError, ZeroDivisionError) as error:
        raise _uncalibrated("exponential", epsilon, None, _reason(error)) from None
    data = np.clip(values, *bounds).astype(float).tolist()
    return lambda: [candidates[measurement(data)]]


def sensitivities(aggregate: str, grouped: bool, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """(L1, L2) sensitivity of one vector query under change-one (table in the module docstring)."""
    if aggregate == "count":
        return (2.0, math.sqrt(2.0)) if grouped else (1.0, 1.0)
    assert bounds is not None
    low, high = bounds
    m = max(abs(low), abs(high))
    if grouped:
        return max(high - low, 2 * m), max(high - low, math.sqrt(2.0) * m)
    return max(high - low, m), max(high - low, m)


def aggregate(
    name: str,
    stats: list[GroupStats],
    grouped: bool,
    bounds: tuple[float, float] | None,
    epsilon: float,
    delta: float | None,
) -> Callable[[], list[float | None]]:
    """The drawing of each group's noisy value, its measurements built (and checked) now."""
    if name in ("count", "histogram"):
        l1, l2 = sensitivities("count", grouped, None)
        return vector([g.n for g in stats], l1, l2, epsilon, delta)  # type: ignore[return-value]
    if name == "sum":
        l1, l2 = sensitivities("sum", grouped, bounds)
        return vector([g.s for g in stats], l1, l2, epsilon, delta)  # type: ignore[return-value]
    if name == "mean":
        assert bounds is not None
        half_delta = None if delta is None else delta / 2
        l1, l2 = sensitivities("sum", grouped, bounds)
        sums = vector([g.s for g in stats], l1, l2, epsilon / 2, half_delta)
        c1, c2 = sensitivities("count", grouped, None)
        counts = vector([g.m for g in stats], c1, c2, epsilon / 2, half_delta)
        low, high = bounds

        def draw() -> list[float | None]:
            pairs = zip(sums(), counts(), strict=True)
            return [min(max(s / max(c, 1.0), low), high) for s, c in pairs]

        return draw
    raise AssertionError(name)


__all__ = ["NEIGHBOURS", "aggregate", "gaussian", "laplace", "quantile", "sensitivities", "vector"]
