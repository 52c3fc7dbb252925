"""The privacy side of SafePub (:mod:`sdckit.anonymize.safepub`): the parameters k and β of
(k, β)-SDGS from (ε, δ), the exponential mechanism of the search and its accounting.

Sampling, generalization and suppression ((k, β)-SDGS; Li, Qardaji & Su 2012, Theorem 5, as SafePub
uses it, Bild, Kuhn & Prasser 2018, Section 3): every record is kept with probability β, the kept
ones are generalized by a scheme chosen without looking at them, and the classes of fewer than k
records are suppressed. That is (ε, δ)-differentially private when

* β ≤ 1 − e^(−ε) (SafePub takes the largest, β = 1 − e^(−ε)), and
* δ ≥ d(k, β, ε) = max over n ≥ n_m of Σ_{j > γn} f(j; n, β), with γ = (e^ε − 1 + β) / e^ε,
  n_m = ⌈k/γ − 1⌉ and f the binomial probability of j successes in n trials.

The maximum is over infinitely many n; the sum a_n is at most the Chernoff bound
c_n = exp(−n (γ ln(γ/β) − (γ − β))), which decreases in n, so the walk over n stops at the first n
whose bound no longer exceeds the largest sum seen (ARX's ``ParameterCalculation`` does the same).
k is the smallest k with d(k, β, ε) ≤ δ (d never increases with k). The floor of γn is taken
of a lower bound of the product (γn less a relative 10⁻¹²), so that a product that is an integer
in exact arithmetic but rounds above it keeps its term: the sum is never below its exact value
(ARX takes the lower end of an interval for the same reason). ARX's loop returns one more than
that smallest k (it increments k after the test that succeeds): its k is this k + 1, which is also
private, and suppresses more.

The exponential mechanism (McSherry & Talwar 2007) picks candidate i with probability proportional
to exp(ε·s_i / 2), the scores s_i already divided by their sensitivity. It is drawn by the Gumbel-max
trick (the argmax of s_i + Gumbel noise of scale 2/ε has exactly that distribution), from the
method's seeded generator: OpenDP's noisy max (``make_noisy_max``) is the same mechanism, but its
samplers draw from the system's cryptographic generator and cannot be seeded, and a release of
sdckit is reproducible from its seed. OpenDP does the accounting instead: the ε of every draw is the
privacy map of ``make_noisy_max`` at the same scale for scores whose sensitivity is 1.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.stats import binom

from sdckit.errors import ConfigError

__all__ = [
    "K_LIMIT",
    "draw_epsilon",
    "exponential_mechanism",
    "k_threshold",
    "sampling_probability",
    "sdgs_delta",
]

#: The largest k searched for: (ε, δ) asking for more leaves nothing a release could keep.
K_LIMIT = 100_000

_RELATIVE = 1e-12  # the lower bound of γn taken before the floor
_CHUNK = 512  # values of n evaluated at once


def sampling_probability(epsilon: float) -> float:
    """β = 1 − e^(−ε), the largest sampling probability (k, β)-SDGS allows for ε."""
    return -math.expm1(-epsilon)


def _gamma(epsilon: float, beta: float) -> float:
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


def sdgs_delta(k: int, epsilon: float, beta: float) -> float:
    """d(k, β, ε): the δ of (k, β)-SDGS for ε (see the module documentation)."""
    gamma = _gamma(epsilon, beta)
    rate = gamma * math.log(gamma / beta) - (gamma - beta)
    n = max(math.ceil(k / gamma - 1.0), 1)
    largest = 0.0
    while True:
        # Chunks that grow with n: where β is small the walk over n is long.
        trials = np.arange(n, n + max(_CHUNK, n // 8), dtype=np.float64)
        cut = np.floor(trials * gamma * (1.0 - _RELATIVE))  # Σ over j > γn: from floor(γn) + 1
        sums = binom.sf(cut, trials, beta)
        bounds = np.exp(-trials * rate)
        running = np.maximum.accumulate(np.maximum(sums, largest))
        stop = np.flatnonzero(running >= bounds)
        if len(stop):
            return float(running[stop[0]])
        largest = float(running[-1])
        n += len(trials)


@lru_cache(maxsize=64)
def k_threshold(epsilon: float, delta: float) -> int:
    """The smallest k whose (k, β)-SDGS, β = 1 − e^(−ε), is (ε, δ)-differentially private.

    d(k, β, ε) never increases with k (a maximum over the n from ⌈k/γ − 1⌉ on, a set that shrinks
    as k grows), so the smallest k is found by doubling k until d(k) ≤ δ and bisecting."""
    beta = sampling_probability(epsilon)

    def holds(k: int) -> bool:
        return sdgs_delta(k, epsilon, beta) <= delta

    if holds(1):
        return 1
    low, high = 1, 2  # d(low) > δ
    while not holds(high):
        if high >= K_LIMIT:
            raise ConfigError(
                f"epsilon and delta ask for classes of more than {K_LIMIT:,} records: "
                "a larger delta (or a smaller epsilon) asks for fewer"
            )
        low, high = high, min(2 * high, K_LIMIT)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def exponential_mechanism(scores: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Index drawn with probability proportional to exp(ε·score/2), the scores divided by their
    sensitivity (Gumbel-max: the argmax of score + Gumbel(2/ε) noise). Ties of the noisy scores,
    of probability zero, go to the first."""
    noise = rng.gumbel(loc=0.0, scale=2.0 / epsilon, size=len(scores))
    return int(np.argmax(np.asarray(scores, dtype=np.float64) + noise))


@lru_cache(maxsize=64)
def draw_epsilon(epsilon: float) -> float:
    """The ε of one draw of :func:`exponential_mechanism` at ``epsilon`` as OpenDP accounts it: the
    privacy map of its report-noisy-max (Gumbel noise of scale 2/ε over scores of sensitivity 1 in
    the L∞ distance, not monotonic)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    measurement = dp.m.make_noisy_max(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)),
        dp.linf_distance(T=float),
        dp.max_divergence(),
        scale=2.0 / epsilon,
    )
    return float(measurement.map(1.0))
