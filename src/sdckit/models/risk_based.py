"""Risk-based privacy models: average re-identification risk, sample uniqueness and population
uniqueness at most a threshold (ARX's ``AverageReidentificationRisk``, ``SampleUniqueness`` and
``PopulationUniqueness``).

These models judge the *whole table*, not each class: the figure is a function of the histogram of
class sizes alone (how many classes of each size), so evaluating a node costs one sort of its class
sizes (and, for population uniqueness, one estimator call on the size histogram per candidate).

* **Average re-identification risk**: the number of classes over the number of records, the mean
  of 1 / class size over the records: the expected share of records an adversary who links every
  record by its quasi-identifiers to a random member of its class re-identifies. This is
  ``sdckit risk reidentification``'s prosecutor ``average`` (``attacker_models``); without sampling
  weights its journalist and marketer averages are the same figure (population "sample"), as ARX's
  criterion, which takes 1 / the average class size whatever the attacker model.
* **Sample uniqueness**: the share of records alone in their class (``sample_uniques_percent`` / 100).
* **Population uniqueness**: the share of the population estimated unique by the Pitman, Zayatz, SNB
  or Dankar model (``risk reidentification``'s ``population_uniqueness`` ``share``, the same
  estimators), for a population given by its size or the sampling fraction.

**Suppression.** Where a class-level model (k-anonymity, l-diversity, ...) already fails classes,
their records are suppressed first; then, as ARX's ``RiskBasedCriterion.enforce``, the *smallest*
classes still released are suppressed (ties in class order) until the figure is met: the fewest
classes for average risk and sample uniqueness (the figure falls with every class taken, found for
every count at once); for population uniqueness by ARX's binary search over that count (the figure
need not fall monotonically, so the count found need not be the least). The records suppressed are
released ``*`` on every quasi-identifier and form one more class, which the figure counts as any
other (issue 36; ``sdckit check`` sees that class too). ARX leaves them out of the histogram instead;
the two agree whenever nothing is suppressed.

The figures read class sizes as record counts: with sampling weights (``GeneralizeCall.weights``)
the sizes are sums of weights and the figures those of the estimated population classes instead.

**Monotonicity** (proved by brute force on every lattice edge and pruned == exhaustive search in
tests/test_risk_models.py): generalizing merges classes, so the number of classes and of sample
uniques can only fall: average risk and sample uniqueness are monotonic. Average risk is monotonic
with suppression too, as ARX declares (the classes of a generalization made only of records the node
suppressed are at least as many as the node's suppressed classes less the merges). Sample uniqueness
is not, where ARX declares it so: the group of suppressed records is a class here, and a
generalization can leave a single unique whose group of one is still unique, so that a larger class
must go too (tests/test_risk_models.py's counter-example); with a suppression limit the search does
not prune with it. Population uniqueness is not monotonic (an estimate can rise when classes merge;
ARX declares only Zayatz monotonic with generalization, which sdckit does not rely on): the search
does not prune with it.

References
----------
Dankar, F. K., El Emam, K., Neisa, A. & Roffey, T. (2012). Estimating the re-identification risk of
clinical data sets. BMC Medical Informatics and Decision Making 12, 66.
El Emam, K. (2013). Guide to the De-Identification of Personal Health Information. CRC Press.
Prasser, F., Kohlmayer, F. & Kuhn, K. A. (2016). The importance of context: risk-based
de-identification of biomedical data. Methods of Information in Medicine 55(4), 347-355.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from typing import Literal

import numpy as np

from sdckit.errors import ConfigError
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    number_text,
    whole_table,
)
from sdckit.params import RISK_THRESHOLD_BOUNDS, Argument, Finite

UniquenessModel = Literal["pitman", "zayatz", "snb", "dankar"]
UNIQUENESS_MODELS: tuple[str, ...] = ("pitman", "zayatz", "snb", "dankar")

_AVERAGE = Argument("average_risk", Finite, RISK_THRESHOLD_BOUNDS)
_UNIQUES = Argument("sample_uniqueness", Finite, RISK_THRESHOLD_BOUNDS)
_POPULATION = Argument("population_uniqueness", Finite, RISK_THRESHOLD_BOUNDS)


class TableModel(PrivacyModel):
    """A privacy model that judges the whole table through its histogram of class sizes.

    ``evaluate`` judges the table as it is; :meth:`enforce` takes the classes other models already
    fail (suppressed) and marks, as failing, the smallest further classes to suppress for the figure
    to be met. :func:`sdckit.models.evaluate_all` calls it after every class-level model.
    ``achieved`` holds the table's figure (before the further suppression) for every class.
    """

    table_level = True
    sensitive_attribute = None
    threshold: float

    @abstractmethod
    def figure(self, sizes: np.ndarray) -> float:
        """The figure of a table whose classes have ``sizes`` (a nan fails)."""

    def figures(self, kept_sizes: np.ndarray, suppressed: float, total: float) -> np.ndarray | None:
        """The figure after suppressing the ``j`` smallest of ``kept_sizes`` (sorted ascending),
        for every ``j`` in ``0 .. len(kept_sizes)`` at once; None when only :meth:`figure` knows it."""
        return None

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        return self.enforce(statistics, np.ones(statistics.n_classes, dtype=bool))

    def enforce(self, statistics: ClassStatistics, kept: np.ndarray, budget: float = math.inf) -> ModelResult:
        """The verdict when the classes where ``~kept`` are suppressed already: the smallest kept
        classes the figure needs suppressed fail, every other class passes. ``budget``: the records a
        search may suppress; when the figure is not met within it, every kept class fails (the
        estimators of population uniqueness are not run past it, as ARX aborts)."""
        sizes = np.asarray(statistics.sizes, dtype=np.float64)
        passes = np.ones(len(sizes), dtype=bool)
        order = np.flatnonzero(kept)
        order = order[np.argsort(sizes[order], kind="stable")]
        sorted_sizes = sizes[order]
        suppressed = float(sizes[~kept].sum())
        total = float(sizes.sum())
        curve = self.figures(sorted_sizes, suppressed, total)
        if curve is not None:
            start = float(curve[0])
            met = np.flatnonzero(curve <= self.threshold + TOLERANCE)
            count = int(met[0]) if met.size else len(order)
        else:
            start = self._figure_after(sorted_sizes, suppressed, 0)
            count = self._binary_count(sorted_sizes, suppressed, start, budget)
        passes[order[:count]] = False
        achieved = np.full(len(sizes), start if math.isfinite(start) else math.inf)
        return ModelResult(model=self.name, passes=passes, achieved=achieved, higher_is_better=False)

    def _figure_after(self, sorted_sizes: np.ndarray, suppressed: float, count: int) -> float:
        group = suppressed + float(sorted_sizes[:count].sum())
        released = sorted_sizes[count:]
        return self.figure(np.append(released, group) if group > 0 else released)

    def _met(self, value: float) -> bool:
        return math.isfinite(value) and value <= self.threshold + TOLERANCE

    def _binary_count(self, sorted_sizes: np.ndarray, suppressed: float, start: float, budget: float) -> int:
        """ARX's ``suppressWhileNotFulfilledBinary``: the count of smallest classes to suppress, by
        binary search among the counts within ``budget`` (all of them if none is found)."""
        if self._met(start):
            return 0
        within = suppressed + np.cumsum(sorted_sizes) <= budget + 1e-9
        high = int(np.count_nonzero(within)) if math.isfinite(budget) else len(sorted_sizes)
        if high == 0 < len(sorted_sizes):
            return len(sorted_sizes)  # nothing more within the budget: the figure is ``start``, not met
        if high < len(sorted_sizes) and not self._met(self._figure_after(sorted_sizes, suppressed, high)):
            return len(sorted_sizes)  # not met within the budget: the search's node fails
        low, found = 1, len(sorted_sizes) if high == len(sorted_sizes) else high
        while low <= high:
            mid = (low + high) // 2
            if self._met(self._figure_after(sorted_sizes, suppressed, mid)):
                found, high = mid, mid - 1
            else:
                low = mid + 1
        return found

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """The release that suppresses every record (one class of them all) must meet the figure."""
        total = float(whole_table(statistics_of_whole_table).sizes.sum())
        value = self.figure(np.array([total]))
        if not self._met(value):
            raise ConfigError(
                f"{self.name} cannot be satisfied: the table as one class of {number_text(total)} "
                f"records has {number_text(value)}"
            )


class AverageRisk(TableModel):
    """Average re-identification risk (classes / records) at most ``threshold`` (ARX's
    ``AverageReidentificationRisk``; ``risk reidentification``'s prosecutor average)."""

    monotonic = True
    monotonic_with_suppression = True

    def __init__(self, threshold: float) -> None:
        self.threshold: float = _AVERAGE(threshold)
        self.name = f"average risk <= {number_text(self.threshold)}"

    def figure(self, sizes: np.ndarray) -> float:
        total = float(np.sum(sizes))
        return len(sizes) / total if total > 0 else 0.0

    def figures(self, kept_sizes: np.ndarray, suppressed: float, total: float) -> np.ndarray:
        if total <= 0:
            return np.zeros(len(kept_sizes) + 1)
        taken = np.arange(len(kept_sizes) + 1)
        group = suppressed + np.concatenate(([0.0], np.cumsum(kept_sizes)))
        return (len(kept_sizes) - taken + (group > 0)) / total


class SampleUniqueness(TableModel):
    """Share of records alone in their class at most ``threshold`` (ARX's ``SampleUniqueness``)."""

    monotonic = True
    monotonic_with_suppression = False  # a group of one suppressed record is unique (module docstring)

    def __init__(self, threshold: float) -> None:
        self.threshold: float = _UNIQUES(threshold)
        self.name = f"sample uniqueness <= {number_text(self.threshold)}"

    def figure(self, sizes: np.ndarray) -> float:
        total = float(np.sum(sizes))
        return float(np.count_nonzero(np.asarray(sizes) == 1)) / total if total > 0 else 0.0

    def figures(self, kept_sizes: np.ndarray, suppressed: float, total: float) -> np.ndarray:
        if total <= 0:
            return np.zeros(len(kept_sizes) + 1)
        unique = (kept_sizes == 1).astype(np.float64)
        # Kept uniques left after taking the j smallest, plus the suppressed group when it is one record.
        left = unique.sum() - np.concatenate(([0.0], np.cumsum(unique)))
        group = suppressed + np.concatenate(([0.0], np.cumsum(kept_sizes)))
        return (left + (group == 1)) / total


class PopulationUniqueness(TableModel):
    """Share of the population estimated unique (Pitman, Zayatz, SNB or Dankar) at most
    ``threshold`` (ARX's ``PopulationUniqueness``; ``risk reidentification``'s
    ``population_uniqueness``). The population is ``population_size`` records, or the table's
    records over ``sampling_fraction``.

    As ARX: an estimate of 0 (or none: the solver did not converge) passes only when the table has no
    sample unique.
    """

    monotonic = False
    monotonic_with_suppression = False

    def __init__(
        self,
        threshold: float,
        model: str = "dankar",
        *,
        population_size: float | None = None,
        sampling_fraction: float | None = None,
    ) -> None:
        self.threshold: float = _POPULATION(threshold)
        if model not in UNIQUENESS_MODELS:
            raise ConfigError(
                f"uniqueness_model must be one of {', '.join(UNIQUENESS_MODELS)}, got {model!r}"
            )
        if (population_size is None) == (sampling_fraction is None):
            raise ConfigError(
                "population uniqueness needs sampling_fraction or population_size (one of them)"
            )
        self.model = model
        self.population_size = population_size
        self.sampling_fraction = sampling_fraction
        self.name = f"population uniqueness ({model}) <= {number_text(self.threshold)}"

    def population(self, records: float) -> float:
        """The population size for a table of ``records`` records."""
        if self.population_size is not None:
            return float(self.population_size)
        assert self.sampling_fraction is not None
        return records / self.sampling_fraction

    def figure(self, sizes: np.ndarray) -> float:
        sizes = np.asarray(sizes)
        total = float(sizes.sum())
        if total <= 0:
            return 0.0
        population = self.population(total)
        if population < total - TOLERANCE:
            raise ConfigError(
                f"population_size must be at least the number of records ({number_text(total)}), "
                f"got {number_text(population)}"
            )
        uniques, sample_uniques = estimated_uniques(sizes, max(population, total), self.model)
        if uniques is None:
            return 0.0 if sample_uniques == 0 else math.nan
        return uniques / max(population, total)


def estimated_uniques(sizes: np.ndarray, population: float, model: str) -> tuple[float | None, int]:
    """Population uniques of one estimator and the number of sample uniques, as
    :func:`sdckit.risk._risk_estimators.population_uniqueness` figures them (the same estimators, the
    same Dankar rule: Pitman, else Zayatz, for a sampling fraction up to 0.1; above it the smaller
    of Zayatz and SNB), computing only the estimators the model needs. None: no estimate (the
    solver did not converge, or 0)."""
    from sdckit.risk import _risk_estimators as estimators

    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    c1 = int(np.count_nonzero(sizes == 1))
    fraction = n / population
    if c1 == 0 or fraction >= 1:
        return float(c1) or None, c1

    def valid(value: float) -> float | None:
        return float(value) if math.isfinite(value) and value != 0 else None

    def of(name: str) -> float | None:
        function = {
            "pitman": estimators.pitman_uniques,
            "zayatz": estimators.zayatz_uniques,
            "snb": estimators.snb_uniques,
        }[name]
        return valid(function(sizes, n, population))

    if model != "dankar":
        return of(model), c1
    if fraction <= 0.1:
        pitman = of("pitman")
        return (pitman if pitman is not None else of("zayatz")), c1
    zayatz, snb = of("zayatz"), of("snb")
    return (zayatz if snb is None or zayatz is not None and zayatz < snb else snb), c1


def table_figures(models: list[PrivacyModel], sizes: np.ndarray) -> dict[str, float]:
    """Each table-level model's figure on a table whose classes have ``sizes``."""
    return {model.name: model.figure(sizes) for model in models if isinstance(model, TableModel)}
