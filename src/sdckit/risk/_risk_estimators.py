"""Re-identification risk: the estimators the measure reports (:mod:`sdckit.risk.reidentification`
describes them, with their papers and their deviations): individual risk of a record from its sample
and population frequencies, household risk, the population uniques of Zayatz, Pitman and SNB with
ARX's decision rule, and distinct l-diversity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, InputError

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


def _start_values() -> tuple[tuple[float, float], ...]:
    """ARX's ``ARXSolverConfiguration.getDefaultStartValues``: the 16 points (d1, d2) for d1, d2 in
    0, 0.33, 0.66, 0.99 (accumulated by += 0.33 as ARX does), d1 the outer loop."""
    grid = []
    d = 0.0
    while d < 1.0:
        grid.append(d)
        d += 0.33
    return tuple((d1, d2) for d1 in grid for d2 in grid)


START_VALUES = _start_values()


def _newton(
    function: Callable[[float, float], tuple[float, float]],
    jacobian: Callable[[float, float], np.ndarray],
    start: tuple[float, float],
    constraint: Callable[[float, float], bool] | None = None,
    accept: Callable[[float, float], bool] | None = None,
) -> tuple[float, float]:
    """Newton-Raphson in two unknowns as ARX 3.9.2's NewtonRaphson2D with its default
    (deterministic) configuration: a try from ``start``, then one from each of ARX's 16 prepared
    start values (:data:`START_VALUES`); each try ends when a step leaves ``constraint``, gives a
    non-finite point or exceeds ``ITERATIONS_PER_TRY`` steps; a point whose two equations are within
    ``ACCURACY`` of 0 is the root. NaN when no try finds one within ``ITERATIONS_TOTAL`` steps.

    Deviations from ARX: where ARX gives up after its prepared start values, sdckit goes on from
    points drawn uniformly in [0, start) (seeded: the same points every call), as the
    newtonraphson library does without prepared values, until ``ITERATIONS_TOTAL`` steps in all (on
    Adult, the SNB equations' root is often found only so). ARX's solver also stops after 100 ms a try
    and 1 s in all (wall clock: its result depends on the machine's load; sdckit counts steps
    only), and it gives up after the first step from its 16th start value (an off-by-one in the
    jar's loop; sdckit gives that start a full try). ``accept``: a root where it is false is no
    solution (the try ends, the next start is tried), as a root outside the model's parameter space
    (:func:`pitman_valid`)."""
    rng = np.random.default_rng(0)
    total = 0
    tries = 0
    while total <= ITERATIONS_TOTAL:
        if tries == 0:
            begin = start
        elif tries <= len(START_VALUES):
            begin = START_VALUES[tries - 1]
        else:
            begin = (rng.random() * start[0], rng.random() * start[1])
        tries += 1
        x, y = np.float64(begin[0]), np.float64(begin[1])  # as Java's doubles: x / 0 is no error
        iterations = 0
        while True:
            total += 1
            with np.errstate(all="ignore"):
                f1, f2 = function(x, y)
            if abs(f1) <= ACCURACY and abs(f2) <= ACCURACY:
                if accept is None or accept(x, y):
                    return float(x), float(y)
                break
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


_ONE_SUCCESS: dict[tuple[int, int], dict[int, float]] = {}


def _one_success(whole: int, sizes: np.ndarray, n: int) -> np.ndarray:
    """scipy's ``hypergeom.pmf(1, whole, sizes, n)``, remembered per (whole, n): scipy takes about
    0.2 ms a value for a population of 10^8 and a search asks for the same few sizes at every node
    (the same values: each is scipy's, computed once)."""
    from scipy import stats  # imported when used: scipy is slow to import at start-up

    if len(_ONE_SUCCESS) > 64:
        _ONE_SUCCESS.clear()
    known = _ONE_SUCCESS.setdefault((whole, n), {})
    missing = [int(size) for size in sizes if int(size) not in known]
    if missing:
        values = np.atleast_1d(stats.hypergeom.pmf(1, whole, np.array(missing, dtype=np.int64), n))
        known.update(zip(missing, (float(value) for value in values), strict=True))
    return np.array([known[int(size)] for size in sizes], dtype=np.float64)


def zayatz_uniques(class_sizes: np.ndarray, n: int, population: float) -> float:
    """Population uniques by Zayatz (1991), as ARX's ``ModelZayatz``."""
    sizes, counts = _histogram(class_sizes)
    c1 = counts[sizes == 1].sum()
    if c1 == 0:
        return 0.0
    u = counts.sum()
    whole = round(population)
    probabilities = _one_success(whole, sizes, n)
    conditional = (c1 / u * _one_success(whole, np.array([1]), n)[0]) / np.sum(counts / u * probabilities)
    return float(c1 * conditional / (n / population))


def _trigamma(x: Any) -> Any:
    """psi_1(x): the Hurwitz zeta(2, x) for x > 0, the reflection formula below (scipy's polygamma
    recurses for a long time on large negative arguments)."""
    from scipy import special  # imported when used: scipy is slow to import at start-up

    if isinstance(x, float):  # a Python or numpy float: the same operations without the arrays
        with np.errstate(all="ignore"):
            if x > 0:
                return special.zeta(2, x)
            if math.isnan(x):
                return math.nan
            return np.pi**2 / np.sin(np.pi * x) ** 2 - special.zeta(2, 1 - x)
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


def pitman_valid(theta: float, alpha: float, classes: float) -> bool:
    """Whether (theta, alpha) lies where the Pitman sampling formula's likelihood of ``classes``
    classes is defined: alpha < 1 and theta + i alpha > 0 for i = 1 .. classes - 1 (its factors
    log(theta + i alpha)). The closed-form likelihood equations (digamma, trigamma) extend past it and
    have roots there (alpha < 0 with theta + (classes - 1) alpha < 0: on Adult, ARX's and the random
    restarts' solvers found such roots and gave 7 and 1e-87 population uniques where the root inside
    gives 4842 and 35732); such a root is no maximum-likelihood estimate."""
    return alpha < 1 and theta + alpha > 0 and theta + (classes - 1) * alpha > 0


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
    theta, alpha = _newton(
        function, jacobian, (t, a), constraint=lambda x, y: x >= 0, accept=lambda x, y: pitman_valid(x, y, u)
    )
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
    from sdckit.risk._kernels_population import snb_newton

    # _newton(function, _difference_jacobian(function), (1.0, 1.0)) on snb_equations(k, f, c1, c2),
    # compiled (the same steps; tests/test_risk_models.py compares the two).
    alpha, beta = snb_newton(
        float(k),
        float(f),
        float(c1),
        float(c2),
        START_ARRAY,
        _random_starts(),
        ACCURACY,
        ITERATIONS_PER_TRY,
        ITERATIONS_TOTAL,
    )
    return k, alpha, beta


START_ARRAY = np.array(START_VALUES, dtype=np.float64)
_RANDOM_STARTS: list[np.ndarray] = []


def _random_starts() -> np.ndarray:
    """The points _newton draws after the prepared start values (``default_rng(0)``, two a try; no more
    tries than steps): the same every call, drawn once."""
    if not _RANDOM_STARTS:
        _RANDOM_STARTS.append(np.random.default_rng(0).random(2 * (ITERATIONS_TOTAL + 1)))
    return _RANDOM_STARTS[0]


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

        result: dict[str, Any] = {
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


def distinct_l_diversity(
    key_patterns: np.ndarray,
    pattern_of: np.ndarray,
    cardinalities: list[int],
    sensitive: np.ndarray,
    wildcard: bool,
) -> np.ndarray:
    """Distinct l-diversity of every record (see :func:`l_diversities`)."""
    return l_diversities(key_patterns, pattern_of, cardinalities, sensitive, wildcard)[0]


def l_diversities(
    key_patterns: np.ndarray,
    pattern_of: np.ndarray,
    cardinalities: list[int],
    sensitive: np.ndarray,
    wildcard: bool,
    c: float = 2.0,
    multiplicity: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct, entropy and recursive (c) l-diversity of every record (every row: a row stands for
    ``multiplicity`` identical records when given), as sdcMicro's ``ldiversity``
    computes them over the records matching its key pattern (its class; with ``wildcard`` a missing
    key value matches every value) and their sensitive values (code -1 = missing):

    * distinct: the distinct values; a missing value counts once when another value is present;
    * entropy: exp(−Σ p log p) over the values' shares of the class, a missing value a value of its
      own when another is present (sdcMicro's ``Group_Entropy_Ldiversity``);
    * recursive: with the counts of the values present r1 ≥ r2 ≥ … ≥ rm (missing values not
      counted), the largest l such that r1 < c·(r_l + … + r_m), or 1 (sdcMicro's
      ``Group_Recursive_Ldiversity``, which sums in 32-bit floats: the same for whole counts below
      2**24 and a ``c`` with few binary digits, such as its default 2)."""
    return l_diversities_of_many(
        key_patterns, pattern_of, cardinalities, [sensitive], wildcard, c, multiplicity
    )[0]


def l_diversities_of_many(
    key_patterns: np.ndarray,
    pattern_of: np.ndarray,
    cardinalities: list[int],
    sensitives: list[np.ndarray],
    wildcard: bool,
    c: float = 2.0,
    multiplicity: np.ndarray | None = None,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`l_diversities` of several sensitive attributes (codes -1 = missing) over the same
    classes: the records matching each key pattern are found once for all of them (with wildcard
    nulls, one pass over the pairs of missing-value masks instead of one per attribute)."""
    n_patterns = len(key_patterns)
    frames = []
    offset = 0
    offsets = []
    for sensitive in sensitives:
        # (attribute, value) as one code: attribute i's values from offset_i + 1 (+0: missing)
        offsets.append(offset)
        frame = pl.DataFrame(
            {"pattern": pattern_of.astype(np.int64), "value": sensitive.astype(np.int64) + (offset + 1)}
        )
        if multiplicity is not None:
            frame = frame.with_columns(pl.Series("records", multiplicity, dtype=pl.Int64))
        frames.append(frame)
        offset += int(sensitive.max(initial=-1)) + 2
    counted_as = pl.len().cast(pl.Int64) if multiplicity is None else pl.col("records").sum()
    pairs = pl.concat(frames).group_by("pattern", "value").agg(counted_as.alias("n"))
    has_missing = key_patterns.shape[1] and (key_patterns < 0).any()
    found = _wildcard_pairs(key_patterns, cardinalities, pairs) if wildcard and has_missing else pairs
    results = []
    for first, sensitive in zip(offsets, sensitives, strict=True):
        last = first + int(sensitive.max(initial=-1)) + 2
        own = found.filter((pl.col("value") >= first) & (pl.col("value") < last)).with_columns(
            pl.col("value") - (first + 1)
        )
        results.append(_diversities(own, n_patterns, pattern_of, c))
    return results


def _diversities(
    found: pl.DataFrame, n_patterns: int, pattern_of: np.ndarray, c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct, entropy and recursive l-diversity per record from the (pattern, value, n) counts of
    the records matching each pattern (value -1: missing)."""
    pattern = found.get_column("pattern").to_numpy().astype(np.int64)
    value = found.get_column("value").to_numpy()
    count = found.get_column("n").to_numpy().astype(np.float64)
    present = value >= 0
    total = np.bincount(pattern, weights=count, minlength=n_patterns)
    values = np.bincount(pattern[present], minlength=n_patterns)
    missing = np.bincount(pattern[~present], weights=count[~present], minlength=n_patterns)
    distinct = values + ((values > 0) & (missing > 0))
    # A missing value counts (in distinct and entropy) only when another value is present.
    counted = present | (values[pattern] > 0)
    share = count[counted] / total[pattern[counted]]
    entropy = np.exp(-np.bincount(pattern[counted], weights=share * np.log(share), minlength=n_patterns))
    ranked = found.filter(pl.col("value") >= 0).sort("pattern", "n", descending=[False, True])
    recursive = _recursive_l(
        ranked.get_column("pattern").to_numpy().astype(np.int64),
        ranked.get_column("n").to_numpy().astype(np.float64),
        n_patterns,
        c,
    )
    return distinct[pattern_of], entropy[pattern_of], recursive[pattern_of]


def _recursive_l(pattern: np.ndarray, count: np.ndarray, n_patterns: int, c: float) -> np.ndarray:
    """Per pattern, with the counts of its values r1 ≥ … ≥ rm (``pattern`` ascending, ``count``
    descending within it): 1 + the number of l ≥ 2 with r1 < c·(r_l + … + r_m) (the suffix sums
    decrease, so these l are 2, 3, … up to the largest)."""
    starts = (
        np.flatnonzero(np.r_[True, pattern[1:] != pattern[:-1]]) if len(pattern) else np.zeros(0, np.int64)
    )
    group_of = np.cumsum(np.r_[False, pattern[1:] != pattern[:-1]]) if len(pattern) else pattern
    inclusive = np.cumsum(count)
    before = inclusive - count  # the counts of the group's earlier (larger) values, plus earlier groups
    group_sum = np.add.reduceat(count, starts) if len(starts) else count
    group_start_sum = before[starts] if len(starts) else count
    suffix = group_sum[group_of] - (before - group_start_sum[group_of])
    first = count[starts][group_of] if len(starts) else count
    position = np.arange(len(pattern)) - (starts[group_of] if len(starts) else 0)
    holds = (position >= 1) & (c * suffix > first)
    result = np.ones(n_patterns, dtype=np.int64)
    np.add.at(result, pattern[holds], 1)
    return result


def _wildcard_pairs(key_patterns: np.ndarray, cardinalities: list[int], pairs: pl.DataFrame) -> pl.DataFrame:
    """The (pattern, value, n) of the records matching each key pattern when a missing key value
    matches every value: per pair of missing-value masks, the patterns of the first joined with the
    value counts of the second on the key values both observe."""
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
            right = (
                pl.DataFrame(
                    {
                        "key": key_b,
                        "value": pairs.get_column("value").to_numpy()[chosen],
                        "n": pairs.get_column("n").to_numpy()[chosen],
                    }
                )
                .group_by("key", "value")
                .agg(pl.col("n").sum())
            )
            frames.append(left.join(right, on="key").select("pattern", "value", "n"))
    return pl.concat(frames).group_by("pattern", "value").agg(pl.col("n").sum())
