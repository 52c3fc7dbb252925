"""Re-identification risk of a microdata file: the figures of sdcMicro's ``measure_risk`` and ARX's
risk analysis, from the quasi-identifiers (the *key*).

Frequencies (sdcMicro ``freqCalc``)
    ``f_k`` is the number of sample records sharing a record's key, ``F_k`` the sum of their sampling
    weights (the estimated population frequency; ``F_k = f_k`` without weights). A missing key value
    is a wildcard that matches every value (sdcMicro's convention, ``missing: wildcard``) or a value
    of its own (``missing: category``). Counting is :func:`sdckit.frequency.wildcard_pattern_sizes`.

Individual risk (Benedetti & Franconi 1998; Capobianchi, Polettini & Lucarelli 2001; sdcMicro
``indivRisk``)
    ``r = E[1/F | f]`` under a negative binomial posterior with ``p = f/F``::

        f = 1:  r = p/(1-p) log(1/p)
        f = 2:  r = p/(1-p) - (p/(1-p))^2 log(1/p)
        f >= 3, approx: r = p / (f - (1-p))
        f >= 3, exact:  r = sum_{h>=f} (1/h) C(h-1, f-1) p^f (1-p)^(h-f)
        p = 1 (F = f) or no weights: r = 1/f;   finally r *= qual

    The exact series equals ``p^f / f * 2F1(f, f; f+1; 1-p)`` (Gauss's hypergeometric function, one
    vectorized call); sdcMicro's closed form (its alternating sum of products B_i) is
    :func:`exact_risk_closed_form`, and the tests check both against the series summed term by
    term. Deviation: sdcMicro computes nonsense for ``F < f`` (weights below 1, p > 1); here p is
    clipped to 1 (r = 1/f) with a warning, and ``F = 0`` is an error. Without weights ``qual`` is not
    applied (sdcMicro's ``survey = FALSE``).

Global risk (sdcMicro ``measure_risk``)
    ``ER = sum_i r_i`` (expected re-identifications), ``global_risk = ER / n`` and in percent.
    Household risk: with an attribute of role ``household``, every member of a household gets
    ``r_h = 1 - prod_{i in h} (1 - r_i)``; ``hier_risk_ER = sum_i r_h(i)`` over records, as sdcMicro.

k-anonymity
    Records with ``f_k < k`` for k = 2, 3, 5 (count and percent), as sdcMicro's print method.

l-diversity (sdcMicro ``ldiversity``, distinct l-diversity)
    Per record, the number of distinct values of a sensitive attribute among the records sharing
    its key (with wildcard nulls: the records that match it). A missing sensitive value counts as
    one more value when some other value is present (sdcMicro's C++ rule). sdcMicro's entropy and
    recursive variants are not reported. Deviation: sdcMicro matches a key with nulls one-sidedly
    (and reads the sensitive value of the wrong record there); here the same symmetric matching as
    ``f_k`` is used.

Prosecutor, journalist and marketer risk (El Emam 2013, as ARX's ``RiskModelSampleSummary``)
    Prosecutor: per record ``1/f_k``; *average* = number of classes / n (= mean of 1/f_k);
    *highest* = 1 / smallest f_k; *records at risk* = share of records with 1/f_k > threshold
    (default 0.2, ARX's default threshold of the overview). Journalist: the same with the population
    class sizes, here ``max(F_k, f_k)`` from the weights (without weights the population is the
    sample and it equals the prosecutor risk); its average is ARX's ``max(classes / sum of class
    sizes, mean of f_k / F_k per record)``. Marketer: the expected share of records re-identified,
    ``(1/n) sum_records 1/F_k`` (= classes / n without weights). The class counts are written as
    sums over records (classes = sum_i 1/f_i), which is exact for disjoint classes and the natural
    extension for wildcard nulls.

Population uniqueness (ARX ``RiskModelPopulationUniqueness`` and its models)
    Given a sampling fraction ``f`` or a population size ``N`` (``f = n/N``), from the histogram of
    class sizes (``c_j`` classes of size j, ``u`` classes, nulls as a value of their own):

    * Zayatz (1991), ARX ``ModelZayatz``: ``P = (c_1/u) h(1;N,1,n) / sum_j (c_j/u) h(1;N,j,n)``
      with ``h`` the hypergeometric probability of one success; uniques ``= c_1 P / f``. N is
      rounded to a whole number (ARX truncates it).
    * Pitman (Hoshino 2001), ARX ``ModelPitman``: maximum-likelihood (theta, alpha) of the Pitman
      sampling formula by Newton-Raphson from ARX's initial guess (theta >= 0 kept), the likelihood
      equations in ARX's closed form with digamma and trigamma; uniques
      ``= Gamma(theta+1) / Gamma(theta+alpha) N^alpha`` when in [0, N].
    * SNB (Chen & Keller-McNulty 1998), ARX ``ModelSNB``: population class sizes 1 + NegBin(alpha,
      beta), the number of classes K estimated by Haas et al.'s (1995) Shlosser-type estimator;
      (alpha, beta) solve E[c_1] = c_1, E[c_2] = c_2 by Newton-Raphson from (1, 1); uniques
      ``= K beta^alpha``. Deviations from ARX's code, which has two slips: its Shlosser denominator
      subtracts 1 per class size instead of ``(1-f)^j c_j``, and its second equation multiplies by
      ``(1-d)^(alpha+2)`` where its own derivatives (and the model) divide; here both follow the
      papers. The Jacobian is taken by central differences.
    * Dankar et al. (2012) decision rule, ARX: f <= 0.1: Pitman if it gives an estimate, else
      Zayatz; f > 0.1: the smaller of Zayatz and SNB (Zayatz if SNB gives none).

    Newton-Raphson as ARX's solver: accuracy 1e-6 on both equations, up to 1000 iterations per try
    and 10000 in all, a new try from a random point in [0, start) after a failure; the random points
    come from a fixed seed (ARX uses Math.random and time limits). No estimate: null. With f = 1 the
    population is the sample and every estimator gives the sample uniques.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.frequency import (
    check_weights,
    coverage_group_sizes,
    dense_keys,
    encode,
    extend_keys,
    first_of_groups,
    group_records,
    group_sizes,
    grouped_quantiles,
    initial_keys,
    wildcard_pattern_sizes,
)
from sdckit.hierarchy import Hierarchy
from sdckit.measures import Context, register_measure
from sdckit.params import Finite, MethodParams, Whole
from sdckit.table import Role, Table

__all__ = [
    "PopulationUniqueness",
    "ReidentificationParams",
    "ReidentificationRisk",
    "exact_risk_closed_form",
    "household_risk",
    "individual_risk",
    "population_uniqueness",
    "reidentification_risk",
]

K_ANONYMITY = (2, 3, 5)
QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)


# Individual risk --------------------------------------------------------------------------------------


def exact_risk_closed_form(f: int, p: float) -> float:
    """sdcMicro's closed form of the exact risk for f >= 3 (``indivRisk(method="exact")``)."""
    a = (p ** (1 - f) - 1) / (f - 1)

    def b(i: int) -> float:
        return (f - 1 - i) ** 2 / ((i + 1) * (f - 2 - i)) * (p ** (i + 2 - f) - 1) / (p ** (i + 1 - f) - 1)

    bb = 0.0
    for m in range(f - 2):
        product = 1.0
        for i in range(m + 1):
            product *= b(i)
        bb += (-1) ** (m + 1) * product
    return (p / (1 - p)) ** f * (a * (1 + bb) + (-1) ** f * math.log(p))


def individual_risk(
    f: np.ndarray,
    F: np.ndarray | None,  # noqa: N803
    *,
    method: str = "approx",
    qual: float = 1.0,
) -> tuple[np.ndarray, int]:
    """The individual risk of sdcMicro's ``indivRisk`` for sample frequencies ``f`` and estimated
    population frequencies ``F`` (None: no weights, ``r = 1/f``). Returns the risks and the number
    of entries whose ``F < f`` were clipped to ``p = 1``. Raises ``InputError`` when some ``F`` is 0."""
    from scipy import special  # imported when used: scipy is slow to import at start-up

    f = np.asarray(f, dtype=np.float64)
    if F is None:
        return qual_times(1.0 / f, 1.0), 0
    F = np.asarray(F, dtype=np.float64)  # noqa: N806
    if np.any(F <= 0):
        raise InputError("a key has estimated population frequency F = 0 (all its records weigh 0)")
    p = f / F
    clipped = int(np.count_nonzero(p > 1))
    p = np.minimum(p, 1.0)
    risk = 1.0 / f
    inside = p < 1
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = p / q
        log_inverse = -np.log(p)
        one = inside & (f == 1)
        risk[one] = (odds * log_inverse)[one]
        two = inside & (f == 2)
        risk[two] = (odds - odds**2 * log_inverse)[two]
    more = np.flatnonzero(inside & (f >= 3))
    if method == "approx":
        risk[more] = p[more] / (f[more] - q[more])
    elif method == "exact":
        # The series is p^f / f * 2F1(f, f; f + 1; 1 - p) (Gauss's hypergeometric function).
        fm, pm = f[more], p[more]
        risk[more] = pm**fm / fm * special.hyp2f1(fm, fm, fm + 1, 1.0 - pm)
    else:
        raise ConfigError(f"method must be approx or exact, got {method!r}")
    return qual_times(risk, qual), clipped


def qual_times(risk: np.ndarray, qual: float) -> np.ndarray:
    return risk * qual if qual != 1 else risk


def household_risk(risk: np.ndarray, households: np.ndarray) -> np.ndarray:
    """``1 - prod (1 - r_i)`` over the members of each household (dense ids), given to every member."""
    groups = int(households.max()) + 1 if len(households) else 0
    with np.errstate(divide="ignore"):
        logs = np.log1p(-np.minimum(risk, 1.0))
    summed = np.bincount(households, weights=logs, minlength=groups)
    return -np.expm1(summed)[households]


# Population uniqueness --------------------------------------------------------------------------------

ACCURACY = 1e-6
ITERATIONS_PER_TRY = 1000
ITERATIONS_TOTAL = 10000


def _newton(
    function: Callable[[float, float], tuple[float, float]],
    jacobian: Callable[[float, float], np.ndarray],
    start: tuple[float, float],
    constraint: Callable[[float, float], bool] | None = None,
) -> tuple[float, float]:
    """ARX's NewtonRaphson2D: tries from ``start``, then from random points in [0, start)."""
    rng = np.random.default_rng(0)
    total = 0
    first = True
    while total <= ITERATIONS_TOTAL:
        if first:
            x, y = start
            first = False
        else:
            x, y = rng.random() * start[0], rng.random() * start[1]
        iterations = 0
        while True:
            total += 1
            with np.errstate(all="ignore"):
                f1, f2 = function(x, y)
            if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                return x, y
            with np.errstate(all="ignore"):
                matrix = jacobian(x, y)
                determinant = matrix[0, 0] * matrix[1, 1] - matrix[0, 1] * matrix[1, 0]
                dx = (matrix[1, 1] * f1 - matrix[0, 1] * f2) / determinant
                dy = (matrix[0, 0] * f2 - matrix[1, 0] * f1) / determinant
            x, y = x - dx, y - dy
            if constraint is not None and not constraint(x, y):
                break
            iterations += 1
            if not (math.isfinite(x) and math.isfinite(y)) or iterations > ITERATIONS_PER_TRY:
                break
            if total > ITERATIONS_TOTAL:
                return math.nan, math.nan
    return math.nan, math.nan


def _histogram(class_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sizes, counts = np.unique(class_sizes.astype(np.int64), return_counts=True)
    return sizes, counts.astype(np.float64)


def zayatz_uniques(class_sizes: np.ndarray, n: int, population: float) -> float:
    """Population uniques by Zayatz (1991), as ARX's ``ModelZayatz``."""
    from scipy import stats  # imported when used: scipy is slow to import at start-up

    sizes, counts = _histogram(class_sizes)
    c1 = counts[sizes == 1].sum()
    if c1 == 0:
        return 0.0
    u = counts.sum()
    whole = round(population)
    probabilities = stats.hypergeom.pmf(1, whole, sizes, n)
    conditional = (c1 / u * stats.hypergeom.pmf(1, whole, 1, n)) / np.sum(counts / u * probabilities)
    return float(c1 * conditional / (n / population))


def _trigamma(x: Any) -> Any:
    """psi_1(x): the Hurwitz zeta(2, x) for x > 0, the reflection formula below (scipy's polygamma
    recurses for a long time on large negative arguments)."""
    from scipy import special  # imported when used: scipy is slow to import at start-up

    x = np.asarray(x, dtype=np.float64)
    positive = x > 0
    # Each branch only sees arguments > 0: zeta(2, q) is slow for large negative q.
    with np.errstate(all="ignore"):
        direct = special.zeta(2, np.where(positive, x, 1.0))
        reflected = np.pi**2 / np.sin(np.pi * x) ** 2 - special.zeta(2, np.where(positive, 1.0, 1 - x))
    return np.where(positive, direct, np.where(np.isnan(x), np.nan, reflected))


def pitman_equations(
    class_sizes: np.ndarray, n: int
) -> tuple[Callable[[float, float], tuple[float, float]], Callable[[float, float], np.ndarray]]:
    """The likelihood equations of the Pitman sampling formula in (theta, alpha) and their Jacobian,
    in ARX's closed form (digamma, trigamma)."""
    from scipy import special  # imported when used: scipy is slow to import at start-up

    sizes, counts = _histogram(class_sizes)
    u = counts.sum()
    larger, their_counts = sizes[sizes > 1].astype(np.float64), counts[sizes > 1]
    psi = special.digamma

    def sums(t: float, a: float) -> tuple[float, float]:
        # sum_{i=1}^{u-1} 1/(t+ia) and sum 1/(t+ia)^2
        s1 = (psi(t / a + u) - psi(t / a + 1)) / a
        s2 = (_trigamma(t / a + 1) - _trigamma(t / a + u)) / a**2
        return s1, s2

    def function(t: float, a: float) -> tuple[float, float]:
        s1, _ = sums(t, a)
        o2 = psi(n + t) - psi(t + 1)
        o3 = ((u - 1) - t * s1) / a
        o4 = np.sum(their_counts * (psi(larger - a) - psi(1 - a)))
        return float(s1 - o2), float(o3 - o4)

    def jacobian(t: float, a: float) -> np.ndarray:
        s1, s2 = sums(t, a)
        i1 = (s1 - t * s2) / a  # sum i/(t+ia)^2
        i2 = ((u - 1) - 2 * t * s1 + t * t * s2) / a**2  # sum i^2/(t+ia)^2
        d2 = _trigamma(t + 1) - _trigamma(n + t)
        d4 = np.sum(their_counts * (_trigamma(1 - a) - _trigamma(larger - a)))
        return np.array([[d2 - s2, -i1], [-i1, -i2 - d4]])

    return function, jacobian


def pitman_uniques(class_sizes: np.ndarray, n: int, population: float) -> float:
    """Population uniques by the Pitman model (Hoshino 2001), as ARX's ``ModelPitman``."""
    from scipy import special  # imported when used: scipy is slow to import at start-up

    sizes, counts = _histogram(class_sizes)
    c1 = counts[sizes == 1].sum()
    if c1 == 0:
        return 0.0
    c2 = counts[sizes == 2].sum() or 1.0  # ARX: "overestimate"
    u = counts.sum()
    c = c1 * (c1 - 1) / c2
    t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    function, jacobian = pitman_equations(class_sizes, n)
    theta, alpha = _newton(function, jacobian, (t, a), constraint=lambda x, y: x >= 0)
    if math.isnan(theta) or math.isnan(alpha) or alpha == 0:
        return math.nan
    candidates = []
    with np.errstate(all="ignore"):
        if theta + 1 > 0 and theta + alpha > 0:
            log_ratio = special.gammaln(theta + 1) - special.gammaln(theta + alpha)
            candidates.append(float(np.exp(log_ratio + alpha * np.log(population))))
        candidates.append(float(special.gamma(theta + 1) / special.gamma(theta + alpha) * population**alpha))
    valid = [value for value in candidates if math.isfinite(value) and 0 <= value <= population]
    return max(valid) if valid else math.nan


def shlosser_classes(class_sizes: np.ndarray, f: float) -> float:
    """Haas et al.'s (1995) Shlosser-type estimate of the number of population classes."""
    sizes, counts = _histogram(class_sizes)
    j = sizes.astype(np.float64)
    u = counts.sum()
    c1 = counts[sizes == 1].sum()
    numerator = np.sum(j * f * f * (1 - f * f) ** (j - 1) * counts)
    denominator = np.sum(((1 + f) ** j - 1) * (1 - f) ** j * counts)
    ratio = np.sum((1 - f) ** j * counts) / np.sum(j * f * (1 - f) ** (j - 1) * counts)
    return float(u + c1 * numerator / denominator * ratio**2)


def snb_equations(k: float, f: float, c1: float, c2: float) -> Callable[[float, float], tuple[float, float]]:
    """E[c_1] - c_1 and E[c_2] - c_2 under the shifted negative binomial model (alpha, beta)."""

    def function(a: float, b: float) -> tuple[float, float]:
        d = (1 - f) * (1 - b)
        first = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1
        second = k * a * b**a * f * f * (1 - b) / 2 * (1 - d) ** (-(a + 2)) * (2 - (1 - a) * d) - c2
        return float(first), float(second)

    return function


def _difference_jacobian(function: Callable[[float, float], tuple[float, float]]) -> Callable:
    def jacobian(x: float, y: float) -> np.ndarray:
        hx, hy = 1e-7 * max(1.0, abs(x)), 1e-7 * max(1.0, abs(y))
        fx1, fx0 = function(x + hx, y), function(x - hx, y)
        fy1, fy0 = function(x, y + hy), function(x, y - hy)
        return np.array(
            [
                [(fx1[0] - fx0[0]) / (2 * hx), (fy1[0] - fy0[0]) / (2 * hy)],
                [(fx1[1] - fx0[1]) / (2 * hx), (fy1[1] - fy0[1]) / (2 * hy)],
            ]
        )

    return jacobian


def snb_parameters(class_sizes: np.ndarray, n: int, population: float) -> tuple[float, float, float]:
    """K (Shlosser), alpha and beta of the SNB model (NaN when Newton-Raphson finds no solution)."""
    sizes, counts = _histogram(class_sizes)
    c1, c2 = counts[sizes == 1].sum(), counts[sizes == 2].sum()
    f = n / population
    k = shlosser_classes(class_sizes, f)
    function = snb_equations(k, f, c1, c2)
    alpha, beta = _newton(function, _difference_jacobian(function), (1.0, 1.0))
    return k, alpha, beta


def snb_uniques(class_sizes: np.ndarray, n: int, population: float) -> float:
    """Population uniques by the SNB model (Chen & Keller-McNulty 1998), as ARX's ``ModelSNB``."""
    if not np.any(np.asarray(class_sizes) == 1):
        return 0.0
    k, alpha, beta = snb_parameters(class_sizes, n, population)
    with np.errstate(all="ignore"):
        return float(k * np.power(beta, alpha))


@dataclass(frozen=True)
class PopulationUniqueness:
    """Estimated population uniques (ARX's ``RiskModelPopulationUniqueness``): for each model the
    number (None when the model gives no estimate) and ``share = uniques / population size``."""

    sampling_fraction: float
    population_size: float
    sample_uniques: int
    classes: int
    uniques: dict[str, float | None]
    dankar_model: str

    def figures(self) -> dict[str, Any]:
        def entry(value: float | None) -> dict[str, Any]:
            if value is None or not math.isfinite(value):
                return {"uniques": None, "share": None}
            return {"uniques": value, "share": value / self.population_size}

        result = {
            "sampling_fraction": self.sampling_fraction,
            "population_size": self.population_size,
            "sample_uniques": self.sample_uniques,
            "classes": self.classes,
        }
        for name in ("pitman", "zayatz", "snb"):
            result[name] = entry(self.uniques[name])
        result["dankar"] = {**entry(self.uniques["dankar"]), "model": self.dankar_model}
        return result


def population_uniqueness(class_sizes: np.ndarray, population_size: float) -> PopulationUniqueness:
    """Every estimator of ARX and Dankar et al.'s decision rule, from the sizes of the sample's
    equivalence classes and the population size (at least the sample size)."""
    class_sizes = np.asarray(class_sizes, dtype=np.int64)
    n = int(class_sizes.sum())
    f = n / population_size
    c1 = int(np.count_nonzero(class_sizes == 1))
    if c1 == 0 or f >= 1:
        value = float(c1)
        uniques: dict[str, float | None] = dict.fromkeys(("pitman", "zayatz", "snb", "dankar"), value)
        return PopulationUniqueness(
            float(f), float(population_size), c1, len(class_sizes), uniques, "sample" if c1 else "none"
        )

    def valid(value: float) -> float | None:
        return value if math.isfinite(value) and value != 0 else None

    pitman = valid(pitman_uniques(class_sizes, n, population_size))
    zayatz = valid(zayatz_uniques(class_sizes, n, population_size))
    snb = valid(snb_uniques(class_sizes, n, population_size))
    if f <= 0.1:
        dankar, model = (pitman, "pitman") if pitman is not None else (zayatz, "zayatz")
    elif snb is None or zayatz is not None and zayatz < snb:
        dankar, model = zayatz, "zayatz"
    else:
        dankar, model = snb, "snb"
    uniques = {"pitman": pitman, "zayatz": zayatz, "snb": snb, "dankar": dankar}
    uniques = {name: None if value is None else float(value) for name, value in uniques.items()}
    return PopulationUniqueness(float(f), float(population_size), c1, len(class_sizes), uniques, model)


# l-diversity ------------------------------------------------------------------------------------------


def _distinct_l(
    key_patterns: np.ndarray,
    pattern_of: np.ndarray,
    cardinalities: list[int],
    sensitive: np.ndarray,
    wildcard: bool,
) -> np.ndarray:
    """Distinct l-diversity of every record: distinct sensitive values (code -1 = missing) among the
    records matching its key pattern; a missing value counts once when another value is present."""
    n_patterns = len(key_patterns)
    pairs = (
        pl.DataFrame({"pattern": pattern_of.astype(np.int64), "value": sensitive.astype(np.int64)})
        .unique()
        .sort("pattern", "value")
    )
    has_missing = key_patterns.shape[1] and (key_patterns < 0).any()
    if not wildcard or not has_missing:
        found = pairs
    else:
        k = key_patterns.shape[1]
        bit = np.int64(1) << np.arange(k, dtype=np.int64)
        masks = (key_patterns < 0).astype(np.int64) @ bit
        distinct_masks = np.unique(masks)
        full = (1 << k) - 1
        radices = [max(c, 1) for c in cardinalities]
        pair_pattern = pairs.get_column("pattern").to_numpy()
        pair_mask = masks[pair_pattern]
        frames = []
        for mask_a in distinct_masks:
            rows_a = np.flatnonzero(masks == mask_a)
            for mask_b in distinct_masks:
                observed = [j for j in range(k) if (full & ~(int(mask_a) | int(mask_b))) >> j & 1]
                if math.fsum(math.log2(radices[j]) for j in observed) >= 62:
                    raise ConfigError("l-diversity with wildcard nulls supports keys of at most 2**62 values")
                chosen = np.flatnonzero(pair_mask == mask_b)
                key_a = np.zeros(len(rows_a), dtype=np.int64)
                key_b = np.zeros(len(chosen), dtype=np.int64)
                for j in observed:
                    key_a = key_a * radices[j] + key_patterns[rows_a, j]
                    key_b = key_b * radices[j] + key_patterns[pair_pattern[chosen], j]
                left = pl.DataFrame({"pattern": rows_a.astype(np.int64), "key": key_a})
                right = pl.DataFrame(
                    {"key": key_b, "value": pairs.get_column("value").to_numpy()[chosen]}
                ).unique()
                frames.append(left.join(right, on="key").select("pattern", "value"))
        found = pl.concat(frames).unique()
    counted = found.group_by("pattern").agg(
        (pl.col("value") >= 0).sum().alias("values"), (pl.col("value") < 0).any().alias("missing")
    )
    per_pattern = np.zeros(n_patterns, dtype=np.int64)
    values = counted.get_column("values").to_numpy().astype(np.int64)
    missing = counted.get_column("missing").to_numpy()
    per_pattern[counted.get_column("pattern").to_numpy()] = values + ((values > 0) & missing)
    return per_pattern[pattern_of]


# The measure ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReidentificationRisk:
    """Re-identification risk of every record and of the file (sdcMicro's ``freqCalc``,
    ``indivRisk``, ``measure_risk`` and ``ldiversity``; ARX's prosecutor, journalist, marketer and
    population-uniqueness risks). See the module docstring for the formulas and deviations.

    ``fk``, ``Fk``, ``risk`` and ``household_risk`` (None without a household attribute) are per
    record in input order; ``population_class_sizes`` are ``max(F_k, f_k)``; ``l_diversity`` maps
    each sensitive attribute to the distinct l-diversity of every record.
    """

    keys: tuple[str, ...]
    fk: np.ndarray
    Fk: np.ndarray
    risk: np.ndarray
    household_risk: np.ndarray | None
    household: str | None
    n_households: int
    weighted: bool
    missing: str
    method: str
    qual: float
    threshold: float
    top: int
    clipped: int
    key_values: pl.DataFrame
    l_diversity: dict[str, np.ndarray]
    population: PopulationUniqueness | None
    # Each record's key pattern (nulls as values), and each pattern's risk and number of records.
    pattern_of: np.ndarray
    pattern_risk: np.ndarray
    pattern_records: np.ndarray
    #: Records per row when each row stands for several identical records (the patterns of a data
    #: set, :mod:`sdckit.scale`), and the number of the first record of each; None: one record a row.
    multiplicity: np.ndarray | None = None
    first_record: np.ndarray | None = None

    @property
    def n_records(self) -> int:
        return len(self.fk) if self.multiplicity is None else int(self.multiplicity.sum())

    def _count(self, flags: np.ndarray) -> int:
        return (
            int(np.count_nonzero(flags)) if self.multiplicity is None else int(self.multiplicity[flags].sum())
        )

    def _sum(self, values: np.ndarray) -> float:
        return float(values.sum()) if self.multiplicity is None else float(values @ self.multiplicity)

    def records(self) -> pl.DataFrame:
        """One row per record, input order: fk, Fk, individual_risk, household_risk."""
        household = (
            pl.Series("household_risk", self.household_risk, dtype=pl.Float64)
            if self.household_risk is not None
            else pl.Series("household_risk", [None] * self.n_records, dtype=pl.Float64)
        )
        return pl.DataFrame(
            [
                pl.Series("fk", self.fk.astype(np.int64)),
                pl.Series("Fk", self.Fk),
                pl.Series("individual_risk", self.risk),
                household,
            ]
        )

    def riskiest(self, count: int | None = None) -> pl.DataFrame:
        """The ``count`` records of highest individual risk (ties in record order) with their keys."""
        count = min(self.top if count is None else count, len(self.risk))
        if self.first_record is not None:
            # Rows are patterns: each is listed once, by its first record.
            order = np.lexsort((self.first_record, -self.risk))[:count]
            numbers = self.first_record[order]
        else:
            order = _top_records(self.risk, self.pattern_risk, self.pattern_records, count)
            numbers = order
        index = pl.Series(order)
        frame = pl.DataFrame({"record": numbers.astype(np.int64)})
        frame = frame.hstack(self.key_values[index].select(pl.all().cast(pl.String)))
        frame = frame.with_columns(
            pl.Series("fk", self.fk[order].astype(np.int64)),
            pl.Series("Fk", self.Fk[order]),
            pl.Series("individual_risk", self.risk[order]),
        )
        if self.household_risk is not None:
            frame = frame.with_columns(pl.Series("household_risk", self.household_risk[order]))
        return frame

    def summary(self) -> dict[str, Any]:
        n = self.n_records
        fk, risk = self.fk, self.risk
        expected = self._sum(risk)
        percent = 100.0 / n if n else 0.0
        result: dict[str, Any] = {
            "records": n,
            "keys": list(self.keys),
            "weighted": self.weighted,
            "missing": self.missing,
            "method": self.method if self.weighted else None,
            "qual": self.qual,
            "expected_reidentifications": expected,
            "global_risk": expected / n if n else 0.0,
            "global_risk_percent": expected * percent,
            "k_anonymity_violations": {
                str(k): {
                    "records": self._count(fk < k),
                    "percent": float(self._count(fk < k) * percent),
                }
                for k in K_ANONYMITY
            },
            "sample_uniques": self._count(fk == 1),
            "sample_uniques_percent": float(self._count(fk == 1) * percent),
            "individual_risk": _quantiles(self.pattern_risk, self.pattern_records),
            "higher_risk_records": _higher_risk(
                risk, self.pattern_risk, self.pattern_records, self.multiplicity
            ),
            "clipped_records": self.clipped,
            **self.attacker_models(),
        }
        if self.household_risk is not None:
            hier = float(self.household_risk.sum())
            result["household"] = {
                "attribute": self.household,
                "households": self.n_households,
                "expected_reidentifications": hier,
                "global_risk": hier / n if n else 0.0,
                "global_risk_percent": hier * percent,
            }
        if self.l_diversity:
            result["l_diversity"] = {
                name: {
                    **_quantiles(np.arange(values.max() + 1), np.bincount(values, weights=self.multiplicity)),
                    "records_with_l_1": self._count(values <= 1),
                }
                for name, values in self.l_diversity.items()
            }
        if self.population is not None:
            result["population_uniqueness"] = self.population.figures()
        result["riskiest"] = self.riskiest().to_dicts()
        return result

    def attacker_models(self) -> dict[str, Any]:
        """Prosecutor, journalist and marketer risk (ARX's ``RiskModelSampleSummary``)."""
        n = self.n_records
        if n == 0:
            empty = {"average": 0.0, "highest": 0.0, "records_at_risk": 0.0, "threshold": self.threshold}
            return {"prosecutor": empty, "journalist": empty, "marketer": {"average": 0.0}}
        inverse = 1.0 / self.fk
        classes = self._sum(inverse)
        prosecutor = {
            "average": classes / n,
            "highest": float(inverse.max()),
            "records_at_risk": float(self._count(inverse > self.threshold) / n),
            "threshold": self.threshold,
        }
        if not self.weighted:
            return {
                "prosecutor": prosecutor,
                "journalist": {**prosecutor, "population": "sample"},
                "marketer": {"average": classes / n},
            }
        population = np.maximum(self.Fk, self.fk)
        population_inverse = 1.0 / population
        success = self._sum(population_inverse) / n
        journalist = {
            "average": max(classes / self._sum(population * inverse), success),
            "highest": float(population_inverse.max()),
            "records_at_risk": float(self._count(population_inverse > self.threshold) / n),
            "threshold": self.threshold,
            "population": "weights",
        }
        return {"prosecutor": prosecutor, "journalist": journalist, "marketer": {"average": success}}


def _quantiles(values: np.ndarray, counts: np.ndarray) -> dict[str, float | None]:
    """Min, quartiles, mean and max of ``values[i]`` repeated ``counts[i]`` times."""
    if counts.sum() == 0:
        return {"min": None, "p25": None, "median": None, "mean": None, "p75": None, "max": None}
    q = grouped_quantiles(values, counts, QUANTILES)
    return {
        "min": float(q[0]),
        "p25": float(q[1]),
        "median": float(q[2]),
        "mean": float(np.dot(values, counts) / counts.sum()),
        "p75": float(q[3]),
        "max": float(q[4]),
    }


def _higher_risk(
    risk: np.ndarray,
    pattern_risk: np.ndarray,
    pattern_records: np.ndarray,
    multiplicity: np.ndarray | None = None,
) -> int:
    """sdcMicro's "obs. with higher risk as the main part": risk > median + 3 MAD and > 0.1 (R's mad,
    scaled by 1.4826)."""
    if len(risk) == 0:
        return 0
    median = grouped_quantiles(pattern_risk, pattern_records, [0.5])[0]
    mad = 1.4826 * grouped_quantiles(np.abs(pattern_risk - median), pattern_records, [0.5])[0]
    higher = (risk > median + 3 * mad) & (risk > 0.1)
    return int(np.count_nonzero(higher)) if multiplicity is None else int(multiplicity[higher].sum())


def _top_records(
    risk: np.ndarray, pattern_risk: np.ndarray, pattern_records: np.ndarray, count: int
) -> np.ndarray:
    """The ``count`` records of highest risk, ties in record order, without sorting every record:
    the cut-off risk is found on the patterns, then only records at or above it are ordered."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    by_risk = np.argsort(-pattern_risk, kind="stable")
    reached = np.searchsorted(np.cumsum(pattern_records[by_risk]), count)
    cut = pattern_risk[by_risk[min(reached, len(by_risk) - 1)]]
    above = np.flatnonzero(risk > cut)
    at = np.flatnonzero(risk == cut)[: count - len(above)]
    chosen = np.concatenate([above, at])
    return chosen[np.lexsort((chosen, -risk[chosen]))][:count]


def reidentification_risk(
    table: Table,
    *,
    weights: str | None = None,
    missing: str = "wildcard",
    method: str = "approx",
    qual: float = 1.0,
    threshold: float = 0.2,
    top: int = 10,
    sampling_fraction: float | None = None,
    population_size: float | None = None,
    multiplicity: np.ndarray | None = None,
    weight_sums: np.ndarray | None = None,
    first_record: np.ndarray | None = None,
    original: Table | None = None,
    hierarchies: dict[str, Hierarchy] | None = None,
) -> ReidentificationRisk:
    """Re-identification risk of ``table``: keys are the attributes with role quasi-identifier,
    ``weights`` the column of sampling weights (None: not a sample survey), the household id the
    attribute with role household, l-diversity for every attribute with role sensitive. The
    population-uniqueness estimators run when ``sampling_fraction`` (in (0, 1]) or
    ``population_size`` (at least the number of records) is given.

    ``multiplicity`` (records per row), ``weight_sums`` (their sum of sampling weights, instead of
    ``weights``) and ``first_record`` (the number of each row's first record) describe a table of
    distinct patterns standing for the records of a data set (:mod:`sdckit.scale`): the figures are
    then those of the records.

    With ``original``, ``table`` is a release of it (same records, same order) measured as an
    adversary who knows the original key values sees it: ``f_k`` of a record is the number of released
    records whose key values *cover* its original ones (:mod:`sdckit.coverage`; ``hierarchies``: the
    nodes labels may be, default those of the original's schema), ``F_k`` their weight sum, and every
    figure built on them (individual, global, household risk, k-anonymity violations, attacker
    models) follows. l-diversity and population uniqueness stay those of the release's classes as
    released (identical labels). A record that no released record covers (an untruthful release)
    is an error."""
    keys = [attribute.name for attribute in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    where = f"{table.source}: " if table.source else ""
    if not keys:
        raise ConfigError("re-identification risk needs at least one attribute with role quasi-identifier")
    absent = [name for name in keys if name not in table.data.columns]
    if absent:
        raise ConfigError(f"{where}quasi-identifier '{absent[0]}' is not a column of the data")
    if missing not in ("wildcard", "category"):
        raise ConfigError(f"missing must be wildcard or category, got {missing!r}")
    if sampling_fraction is not None and population_size is not None:
        raise ConfigError("give sampling_fraction or population_size, not both")
    if sampling_fraction is not None and not 0 < sampling_fraction <= 1:
        raise ConfigError(f"sampling_fraction must be in (0, 1], got {sampling_fraction:g}")
    n = table.n_records if multiplicity is None else int(multiplicity.sum())
    if population_size is not None and not population_size >= n:
        raise ConfigError(
            f"population_size must be at least the number of records ({n:,}), got {population_size:g}"
        )
    households = [attribute.name for attribute in table.schema.with_role(Role.HOUSEHOLD)]
    if len(households) > 1:
        raise ConfigError(f"at most one attribute may have role household, got {', '.join(households)}")

    weight_values = None
    if weights is not None:
        if weights not in table.data.columns:
            raise ConfigError(f"{where}weights column '{weights}' is not a column of the data")
        column = table.column(weights).cast(pl.Float64, strict=False).to_numpy()
        weight_values = check_weights(column, table.n_records, f"{where}weights column '{weights}'")
    elif weight_sums is not None:
        weight_values = np.asarray(weight_sums, dtype=np.float64)

    # The records' value patterns (nulls as values), then the integer codes of one record per
    # pattern: the records are grouped once and only the patterns are encoded.
    grouping = group_records(table.data, keys)
    pattern_of, n_patterns = grouping.keys, grouping.n_groups
    encoding = encode(table.data.select(keys)[grouping.first], keys)
    patterns = np.stack(encoding.codes, axis=1) if n_patterns else np.zeros((0, len(keys)), dtype=np.int32)
    if multiplicity is None:
        counts = grouping.sizes.astype(np.float64)
    else:
        counts = np.bincount(pattern_of, weights=multiplicity, minlength=n_patterns).astype(np.float64)
    sums = group_sizes(pattern_of, n_patterns, weight_values) if weight_values is not None else counts
    cardinalities = list(encoding.cardinalities)
    wildcard = missing == "wildcard" and any(encoding.has_missing)
    if wildcard:
        both = wildcard_pattern_sizes(patterns, np.stack([counts, sums], axis=1), cardinalities)
        f_pattern, F_pattern = both[:, 0], both[:, 1]  # noqa: N806
    else:
        f_pattern, F_pattern = counts, np.asarray(sums, dtype=np.float64)  # noqa: N806
    released_pattern_of, released_counts = pattern_of, counts
    if original is not None:
        pattern_of, f_pattern, F_pattern, counts = _covered_frequencies(  # noqa: N806
            table, original, keys, missing, weight_values, hierarchies
        )
    if weight_values is not None and np.any(F_pattern <= 0):
        bad = int(np.flatnonzero(F_pattern[pattern_of] <= 0)[0])
        described = ", ".join(f"{name}={table.column(name)[bad]}" for name in keys)
        raise InputError(
            f"{where}record {bad + 1} ({described}): estimated population frequency F = 0, all records "
            f"of its key have weight 0 in weights column '{weights}'"
        )
    risk_pattern, clipped_patterns = individual_risk(
        f_pattern, F_pattern if weight_values is not None else None, method=method, qual=qual
    )
    clipped = 0
    if clipped_patterns:
        too_small = F_pattern < f_pattern
        clipped = int(
            np.count_nonzero(too_small[pattern_of])
            if multiplicity is None
            else multiplicity[too_small[pattern_of]].sum()
        )
        warnings.warn(
            SdcWarning(
                f"{where}{clipped:,} records have F < f (weights below 1): their p = f/F is clipped to 1 "
                "and their individual risk is 1/f"
            ),
            stacklevel=2,
        )
    fk, Fk, risk = f_pattern[pattern_of], F_pattern[pattern_of], risk_pattern[pattern_of]  # noqa: N806
    household_values, n_households, household = None, 0, None
    if households:
        household = households[0]
        codes = encode(table.data, [household]).codes[0]
        if (codes < 0).any():
            row = int(np.flatnonzero(codes < 0)[0])
            raise InputError(f"{where}record {row + 1}: household attribute '{household}' has no value")
        n_households = int(codes.max()) + 1 if n else 0
        household_values = household_risk(risk, codes.astype(np.int64))

    l_diversity = {}
    for attribute in table.schema.with_role(Role.SENSITIVE):
        sensitive = encode(table.data, [attribute.name]).codes[0]
        l_diversity[attribute.name] = _distinct_l(
            patterns, released_pattern_of, cardinalities, sensitive, wildcard
        )

    population = None
    if sampling_fraction is not None or population_size is not None:
        size = population_size if population_size is not None else n / sampling_fraction
        population = population_uniqueness(released_counts, size) if n else None

    return ReidentificationRisk(
        keys=tuple(keys),
        fk=fk,
        Fk=np.asarray(Fk, dtype=np.float64),
        risk=risk,
        household_risk=household_values,
        household=household,
        n_households=n_households,
        weighted=weight_values is not None,
        missing=missing,
        method=method,
        qual=qual,
        threshold=threshold,
        top=top,
        clipped=clipped,
        key_values=table.data.select(keys),
        l_diversity=l_diversity,
        population=population,
        pattern_of=pattern_of,
        pattern_risk=risk_pattern,
        pattern_records=counts.astype(np.int64),
        multiplicity=multiplicity,
        first_record=first_record,
    )


def _covered_frequencies(
    release: Table,
    original: Table,
    keys: list[str],
    missing: str,
    weights: np.ndarray | None,
    hierarchies: dict[str, Hierarchy] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """f_k and F_k by coverage (see :func:`reidentification_risk`): each record's pattern (its
    released and original key values), and per pattern f, F and the number of records."""
    from sdckit.coverage import attribute_covers
    from sdckit.risk.combined import schema_hierarchies

    where = f"{release.source}: " if release.source else ""
    if original.n_records != release.n_records:
        raise InputError(
            f"{where}the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "coverage needs the original's records, in the same order"
        )
    covers = attribute_covers(
        original.data,
        release.data,
        keys,
        hierarchies=schema_hierarchies(original) if hierarchies is None else hierarchies,
        missing=missing,
        where=where,
    )
    n = release.n_records
    t_keys, t_sizes = initial_keys(n)
    r_keys, r_sizes = initial_keys(n)
    for cover in covers:
        t_keys, t_sizes = extend_keys(t_keys, t_sizes, cover.target_slots, cover.n_slots)
        r_keys, r_sizes = extend_keys(r_keys, r_sizes, cover.released_labels, len(cover.labels))
    ones = np.ones(n, dtype=np.float64)
    sizes = np.stack([ones, weights if weights is not None else ones], axis=1)
    per_target, _ = coverage_group_sizes(
        t_keys,
        len(t_sizes),
        [cover.target_slots for cover in covers],
        r_keys,
        len(r_sizes),
        [cover.released_labels for cover in covers],
        sizes,
        [(cover.pointer, cover.covering) for cover in covers],
    )
    if np.any(per_target[:, 0] <= 0):
        bad = int(np.flatnonzero(per_target[t_keys, 0] <= 0)[0])
        described = ", ".join(f"{name}={original.column(name)[bad]}" for name in keys)
        raise InputError(
            f"{where}record {bad + 1} ({described}): no released record covers its original key values "
            "(the release is not truthful: coverage measures generalization and suppression only)"
        )
    if weights is not None and np.any(per_target[:, 1] <= 0):
        bad = int(np.flatnonzero(per_target[t_keys, 1] <= 0)[0])
        raise InputError(
            f"{where}record {bad + 1}: estimated population frequency F = 0, all released records "
            "covering its key values have weight 0"
        )
    # A record's pattern: its released key values and its original ones.
    combined = r_keys.astype(np.int64) * len(t_sizes) + t_keys
    pattern_of, counts = dense_keys(combined)
    first = first_of_groups(pattern_of.astype(np.int64), len(counts))
    f_pattern = per_target[t_keys[first], 0]
    F_pattern = per_target[t_keys[first], 1]  # noqa: N806
    return pattern_of, f_pattern, F_pattern, counts.astype(np.float64)


class ReidentificationParams(MethodParams):
    """Parameters of the re-identification risk (``sdckit risk reidentification``)."""

    missing: Annotated[
        Literal["wildcard", "category"] | None,
        Field(
            description="Missing key values: wildcard (sdcMicro) or category (default: the configuration's)."
        ),
    ] = None
    method: Annotated[
        Literal["approx", "exact"],
        Field(description="Individual risk for f >= 3: approx (sdcMicro's) or exact."),
    ] = "approx"
    qual: Annotated[Finite, Field(gt=0, description="Final correction factor of the individual risk.")] = 1.0
    threshold: Annotated[
        Finite, Field(ge=0, le=1, description="Records at risk: 1/class size above it (ARX's default 0.2).")
    ] = 0.2
    top: Annotated[Whole, Field(ge=0, description="How many records of highest risk to list.")] = 10
    sampling_fraction: Annotated[
        Finite | None, Field(gt=0, le=1, description="Sampling fraction, for population uniqueness.")
    ] = None
    population_size: Annotated[
        Finite | None, Field(gt=0, description="Population size, for population uniqueness.")
    ] = None

    @model_validator(mode="after")
    def _one_population(self) -> Self:
        if self.sampling_fraction is not None and self.population_size is not None:
            raise ValueError("takes {sampling_fraction} or {population_size}, not both")
        return self


def _summary(result: ReidentificationRisk) -> dict[str, Any]:
    return result.summary()


def _records(result: ReidentificationRisk) -> pl.DataFrame:
    return result.records()


def _percent(value: float) -> str:
    return f"{value:.2f}%"


def _report(figures: dict[str, Any]) -> list[Any]:
    from rich.table import Table as RichTable
    from rich.text import Text

    lines: list[Any] = [
        f"keys: {', '.join(figures['keys'])} ({'weighted' if figures['weighted'] else 'unweighted'}, "
        f"missing values as {figures['missing']})",
        f"expected re-identifications: {figures['expected_reidentifications']:.2f} "
        f"({_percent(figures['global_risk_percent'])} of the records)",
        f"sample uniques: {figures['sample_uniques']:,} ({_percent(figures['sample_uniques_percent'])})",
        "k-anonymity violated by: "
        + ", ".join(
            f"{k}: {v['records']:,} ({_percent(v['percent'])})"
            for k, v in figures["k_anonymity_violations"].items()
        ),
    ]
    if figures.get("household"):
        household = figures["household"]
        lines.append(
            f"household risk ({household['attribute']}, {household['households']:,} households): "
            f"{household['expected_reidentifications']:.2f} expected re-identifications "
            f"({_percent(household['global_risk_percent'])})"
        )
    models = RichTable(title=f"attacker models (threshold {figures['prosecutor']['threshold']:g})")
    for column in ("model", "average", "highest", "records at risk"):
        models.add_column(column, justify="left" if column == "model" else "right")
    for name in ("prosecutor", "journalist"):
        model = figures[name]
        models.add_row(
            name,
            f"{model['average']:.4f}",
            f"{model['highest']:.4f}",
            _percent(100 * model["records_at_risk"]),
        )
    models.add_row("marketer", f"{figures['marketer']['average']:.4f}", "", "")
    lines.append(models)
    if figures.get("l_diversity"):
        diversity = RichTable(title="distinct l-diversity of the sensitive attributes (per record)")
        for column in ("attribute", "min", "median", "mean", "max", "records with l = 1"):
            diversity.add_column(column, justify="left" if column == "attribute" else "right")
        for name, values in figures["l_diversity"].items():
            diversity.add_row(
                name,
                f"{values['min']:g}",
                f"{values['median']:g}",
                f"{values['mean']:.2f}",
                f"{values['max']:g}",
                f"{values['records_with_l_1']:,}",
            )
        lines.append(diversity)
    population = figures.get("population_uniqueness")
    if population:
        table = RichTable(
            title=f"population uniques (sampling fraction {population['sampling_fraction']:.4g}, "
            f"population {population['population_size']:,.0f})"
        )
        for column in ("model", "uniques", "share"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for name in ("pitman", "zayatz", "snb", "dankar"):
            entry = population[name]
            label = f"dankar ({entry['model']})" if name == "dankar" else name
            uniques = "—" if entry["uniques"] is None else f"{entry['uniques']:,.1f}"
            share = "—" if entry["share"] is None else f"{100 * entry['share']:.4f}%"
            table.add_row(label, uniques, share)
        lines.append(table)
    if figures["riskiest"]:
        riskiest = RichTable(title="records of highest individual risk")
        shown = ["record", "fk", "Fk", "individual_risk"] + (
            ["household_risk"] if figures.get("household") else []
        )
        # The identifier's value after the record, when the configuration has one
        # (sdckit.risk.identifiers).
        identifier = figures.get("identifier")
        for column in [*shown, "key"]:
            riskiest.add_column(column.replace("_", " "), justify="left" if column == "key" else "right")
            if column == "record" and identifier:
                riskiest.add_column(identifier)
        for row in figures["riskiest"]:
            values: list[Any] = [f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]) for c in shown]
            if identifier:
                values.insert(1, Text(row["identifier"] or ""))  # as text, not markup
            key = ", ".join(f"{name}={row[name]}" for name in figures["keys"])
            riskiest.add_row(*values, key)
        lines.append(riskiest)
    return lines


@register_measure(
    "reidentification",
    "risk",
    ReidentificationParams,
    summary=_summary,
    help="Re-identification risk: fk/Fk, individual and global risk, k-anonymity, household, l-diversity, "
    "prosecutor/journalist/marketer and population uniqueness (sdcMicro measure_risk, ARX).",
    report=_report,
    records=_records,
    headline="global_risk",
    original=True,
)
def _run(table: Table, params: ReidentificationParams, context: Context) -> ReidentificationRisk:
    config = context.config
    weights = config.data.weights if config is not None else table.weights
    missing = params.missing or (config.risk.missing if config is not None else "wildcard")
    return reidentification_risk(
        table,
        weights=weights,
        missing=missing,
        method=params.method,
        qual=params.qual,
        threshold=params.threshold,
        top=params.top,
        sampling_fraction=params.sampling_fraction,
        population_size=params.population_size,
        original=context.original,
    )
