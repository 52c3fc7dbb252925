"""k-map (Sweeney; El Emam & Dankar 2008): every released class matches at least k people of the
population, not only k records of the release.

Two settings, as ARX's ``KMap``:

* **Against a population table** (:class:`KMap`): the data is the population and a column marks the
  research subset released (see :mod:`sdckit.models.presence`). A class passes when its population
  count (``ClassStatistics.sizes``) is at least k, or when it holds no record of the subset (nothing
  of it is released; ARX counts such a class as no outlier either). Achieved value: the population
  count of a class with subset records (+inf for a class without).
* **Estimated from the sample** (:class:`EstimatedKMap`): the data is the release's sample, the
  population is known by its size N or the sampling fraction f = n / N. The population count F of a
  class of sample count f_c is modelled as Poisson (Pannekoek 1999) or zero-truncated Poisson (El
  Emam & Dankar 2008) with mean λ = f k, and k-map is enforced as k'-anonymity of the sample, with k'
  the smallest class size for which P(F < k) stays below the significance level α; ARX's derivation
  (and its off-by-one on the Poisson side) is reproduced exactly: :func:`derived_k`.

**Monotonicity.** Estimated k-map is k'-anonymity: monotonic, with suppression too. k-map against a
population table is monotonic (a union of passing classes either has no subset record or holds a
class of population >= k), and monotonic with suppression as generalization counts the records
released (the class sizes and the suppression limit are over the research subset,
:func:`sdckit.models.presence.subset_weights`), as ARX declares it (``KMap``: ``super(true, true)``):
a class of a generalization that fails holds subset records and fewer than k people, so each class of
the node below inside it has fewer than k people too, and either fails or holds no subset record.
Every record it suppresses was suppressed below: a generalization suppresses a subset of the records
its specialization suppresses. (The union of a passing class without subset records with a failing
one fails, but adds no released record to those suppressed; counted over the population table, it
would: tests/test_presence_kmap.py.)

References
----------
Sweeney, L. (2002). k-anonymity: a model for protecting privacy. IJUFKS 10(5), 557-570.
El Emam, K. & Dankar, F. K. (2008). Protecting privacy using k-anonymity. JAMIA 15(5), 627-637.
Pannekoek, J. (1999). Statistical methods for some simple disclosure limitation rules. Statistica
Neerlandica 53(1), 55-67.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from sdckit.errors import ConfigError
from sdckit.models.anonymity import KAnonymity
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    attribute_parameter,
    number_text,
    whole_table,
)
from sdckit.models.presence import population_counts, subset_counts
from sdckit.params import K_BOUNDS, SIGNIFICANCE_BOUNDS, Argument, Finite, Whole, spell

_K = Argument("k_map", Whole, K_BOUNDS)
_SIGNIFICANCE = Argument("significance_level", Finite, SIGNIFICANCE_BOUNDS)
_FRACTION = Argument("sampling_fraction", Finite)

Estimator = Literal["poisson", "zero_truncated_poisson"]
ESTIMATORS: tuple[str, ...] = ("poisson", "zero_truncated_poisson")


def _poisson_pmf(count: int, mean: float) -> float:
    if mean <= 0:
        return 1.0 if count == 0 else 0.0
    return math.exp(count * math.log(mean) - mean - math.lgamma(count + 1))


def derived_k(
    k: int, sampling_fraction: float, significance_level: float, estimator: str
) -> tuple[int, float]:
    """The k' of estimated k-map and the type I error it leaves, as ARX's ``KMap`` derives them.

    λ = ``sampling_fraction`` * k. Poisson: the first c = 0, 1, ... with P(X <= c) >= 1 - α gives
    k' = c + 2 (ARX's loop returns its counter plus one). Zero-truncated Poisson: the first c = 1, 2, ...
    with P(1 <= X <= c) / P(X >= 1) >= 1 - α gives k' = c + 1. Either loop stops, with no type I error
    left, once its counter reaches k; k' is at most k.
    """
    mean = sampling_fraction * k
    threshold = 1.0 - significance_level
    if estimator == "poisson":
        counter, value = 0, 0.0
        cumulative = 0.0
        while value < threshold:
            cumulative += _poisson_pmf(counter, mean)
            value = cumulative
            counter += 1
            if counter >= k:
                value = 1.0
                break
        result = counter + 1
    elif estimator == "zero_truncated_poisson":
        positive = 1.0 - _poisson_pmf(0, mean)
        counter, value = 1, 0.0
        while value < threshold:
            value += _poisson_pmf(counter, mean) / positive if positive > 0 else 1.0
            counter += 1
            if counter >= k:
                value = 1.0
                break
        result = counter
    else:
        raise ConfigError(
            f"{spell('k_map_estimator')} must be one of {', '.join(ESTIMATORS)}, got {estimator!r}"
        )
    return min(k, result), 1.0 - value


class KMap(PrivacyModel):
    """Each class holding research-subset records covers at least ``k`` records of the population
    table (ARX's ``KMap(k, subset)``); ``research_subset`` names the column marking the subset.
    Achieved value: the class's population count (+inf for a class without subset records)."""

    sensitive_attribute: str
    monotonic = True
    # With suppression too, as the sizes count the subset's records (the module's docstring proves it).
    monotonic_with_suppression = True
    counts_records = True  # the column's counts are of records, the sizes over the subset

    def __init__(self, k: int, research_subset: str) -> None:
        self.k: int = _K(k)
        self.sensitive_attribute = attribute_parameter(research_subset)
        self.name = f"{self.k}-map ({self.sensitive_attribute})"

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        inside = subset_counts(statistics, self.sensitive_attribute)
        released = inside > 0
        sizes = population_counts(statistics, self.sensitive_attribute)
        return ModelResult(
            model=self.name,
            passes=~released | (sizes >= self.k - TOLERANCE),
            achieved=np.where(released, sizes, np.inf),
            higher_is_better=True,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        whole = whole_table(statistics_of_whole_table)
        total = float(population_counts(whole, self.sensitive_attribute).sum())
        if subset_counts(whole, self.sensitive_attribute).sum() > 0 and total < self.k - TOLERANCE:
            raise ConfigError(
                f"{self.name} cannot be satisfied: the population has {number_text(total)} records"
            )


class EstimatedKMap(PrivacyModel):
    """k-map estimated from the sample: every class holds at least k' records, k' derived from ``k``,
    the ``sampling_fraction`` (n / N), the ``significance_level`` and the ``estimator`` (ARX's
    ``KMap(k, α, population, estimator)``; :func:`derived_k`). ``n_records``, when given, caps k' at
    the number of records as ARX does. Achieved value: the class size."""

    sensitive_attribute = None
    monotonic = True
    monotonic_with_suppression = True

    def __init__(
        self,
        k: int,
        sampling_fraction: float,
        significance_level: float = 0.01,
        estimator: str = "poisson",
        n_records: int | None = None,
    ) -> None:
        self.k = _K(k)
        fraction = _FRACTION(sampling_fraction)
        if not 0 < fraction <= 1:
            raise ConfigError(f"{spell('sampling_fraction')} must be in (0, 1], got {fraction:g}")
        self.sampling_fraction: float = fraction
        self.significance_level: float = _SIGNIFICANCE(significance_level)
        self.estimator = estimator
        derived, self.type_1_error = derived_k(self.k, fraction, self.significance_level, estimator)
        if n_records is not None and n_records >= 1:
            derived = min(derived, int(n_records))
        self.derived_k: int = derived
        label = "Poisson" if estimator == "poisson" else "zero-truncated Poisson"
        self.name = (
            f"{self.k}-map estimated as {self.derived_k}-anonymity ({label}, "
            f"significance {number_text(self.significance_level)}, sampling fraction {fraction:.6g})"
        )

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        sizes = statistics.sizes
        return ModelResult(
            model=self.name,
            passes=sizes >= self.derived_k - TOLERANCE,
            achieved=sizes.astype(np.float64, copy=True),
            higher_is_better=True,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        total = float(whole_table(statistics_of_whole_table).sizes.sum())
        if total < self.derived_k - TOLERANCE:
            raise ConfigError(f"{self.name} cannot be satisfied: only {number_text(total)} records")


def anonymity_k(model: PrivacyModel) -> int | None:
    """The k of the k-anonymity a model is, class by class: k-anonymity's k and estimated k-map's k'
    (:class:`EstimatedKMap` passes a class of at least k' records, as ``KAnonymity(k')`` does, with
    the same tolerance), else None. A search under such models alone judges a node by its class
    sizes only (:class:`sdckit.anonymize._lattice_search.Search`'s ``k_only``)."""
    if type(model) is EstimatedKMap:
        return model.derived_k
    return model.k if type(model) is KAnonymity else None
