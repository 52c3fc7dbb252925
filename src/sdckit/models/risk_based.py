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
  ARX's relaxed variant (``highest_risk``, ``records_at_risk``) also bounds the share of records in
  classes whose risk exceeds the highest risk, read through ARX's size threshold (:func:`size_threshold`).
  With a population table (``research_subset``, :mod:`sdckit.models.presence`) the journalist's and the
  marketer's averages differ from it (:class:`PopulationAverageRisk`, ``risk reidentification``'s
  journalist and marketer figures with each released class weighing its population).
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

The relaxed variant is monotonic (merging classes moves no record into a smaller class) but not with
suppression (sample uniqueness's counter-example: a group of one suppressed record is at risk). With a
population (F a class's people, f its released records), merging two classes gives
(f1 + f2) / (F1 + F2) <= f1 / F1 + f2 / F2 and one class fewer over the same people, or more people
(a class without released records joined): the marketer's and journalist's averages can only fall,
and no record's population shrinks: monotonic. Not with suppression: a class the node suppressed,
merged into one it kept, adds its f / F to the kept one's where the group's share had been smaller
(tests/test_risk_models_relaxed.py's counter-example).

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
    attribute_parameter,
    number_text,
    whole_table,
)
from sdckit.models.presence import population_counts, subset_counts
from sdckit.params import HIGHEST_RISK_BOUNDS, RISK_THRESHOLD_BOUNDS, Argument, Finite, spell

UniquenessModel = Literal["pitman", "zayatz", "snb", "dankar"]
UNIQUENESS_MODELS: tuple[str, ...] = ("pitman", "zayatz", "snb", "dankar")

_AVERAGE = Argument("average_risk", Finite, RISK_THRESHOLD_BOUNDS)
_HIGHEST = Argument("highest_risk", Finite, HIGHEST_RISK_BOUNDS)
_AT_RISK = Argument("records_at_risk", Finite, RISK_THRESHOLD_BOUNDS)
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
    sensitive_attribute: str | None = None
    threshold: float

    @abstractmethod
    def figure(self, sizes: np.ndarray) -> float:
        """The figure of a table whose classes have ``sizes`` (a nan fails)."""

    def figures(self, kept_sizes: np.ndarray, suppressed: float, total: float) -> np.ndarray | None:
        """The figure after suppressing the ``j`` smallest of ``kept_sizes`` (sorted ascending),
        for every ``j`` in ``0 .. len(kept_sizes)`` at once; None when only :meth:`figure` knows it."""
        return None

    def curves(
        self, statistics: ClassStatistics, kept: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The classes it may suppress (``kept`` ones, in the order taken), and for every count ``j``
        of them taken, the figure and whether the model is met; None when only :meth:`figure`
        knows it (then a binary search). The figure must not rise with ``j``."""
        sizes = np.asarray(statistics.sizes, dtype=np.float64)
        order = np.flatnonzero(kept)
        order = order[np.argsort(sizes[order], kind="stable")]
        curve = self.figures(sizes[order], float(sizes[~kept].sum()), float(sizes.sum()))
        if curve is None:
            return None
        return order, curve, curve <= self.threshold + TOLERANCE

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        return self.enforce(statistics, np.ones(statistics.n_classes, dtype=bool))

    def enforce(self, statistics: ClassStatistics, kept: np.ndarray, budget: float = math.inf) -> ModelResult:
        """The verdict when the classes where ``~kept`` are suppressed already: the smallest kept
        classes the figure needs suppressed fail, every other class passes. ``budget``: the records a
        search may suppress; when the figure is not met within it, every kept class fails (the
        estimators of population uniqueness are not run past it, as ARX aborts)."""
        sizes = np.asarray(statistics.sizes, dtype=np.float64)
        passes = np.ones(len(sizes), dtype=bool)
        curves = self.curves(statistics, kept)
        if curves is not None:
            order, curve, meets = curves
            start = float(curve[0])
            met = np.flatnonzero(meets)
            count = int(met[0]) if met.size else len(order)
        else:
            order = np.flatnonzero(kept)
            order = order[np.argsort(sizes[order], kind="stable")]
            sorted_sizes = sizes[order]
            suppressed = float(sizes[~kept].sum())
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


def size_threshold(highest_risk: float) -> float:
    """The smallest class size whose risk is not above ``highest_risk``, as ARX's
    ``ParameterTranslation.getSizeThreshold``: ``floor(1 / highest_risk)``, plus 1 unless
    ``1 / floor`` exceeds ``highest_risk`` by less than 1% of it (so a class's risk may exceed the
    highest risk by up to 1%: 0.199 gives 5, whose risk 0.2 is taken as not above it)."""
    if highest_risk <= 0:
        return math.inf
    size = 1.0 / highest_risk
    floor = math.floor(size)
    if 1.0 / floor - 1.0 / size >= 0.01 * highest_risk:
        floor += 1
    return float(floor)


def at_risk_curve(
    kept_sizes: np.ndarray,
    kept_populations: np.ndarray,
    group: np.ndarray,
    group_populations: np.ndarray,
    smallest: float,
    total: float,
) -> np.ndarray:
    """The share of ``total`` records in classes whose population is below ``smallest`` after the
    ``j`` first kept classes are taken into the group of suppressed records (of ``group[j]`` records,
    ``group_populations[j]`` people), for every ``j``; populations are the sizes without one."""
    small = np.where(kept_populations < smallest - TOLERANCE, kept_sizes, 0.0)
    left = small.sum() - np.concatenate(([0.0], np.cumsum(small)))
    grouped = np.where((group > 0) & (group_populations < smallest - TOLERANCE), group, 0.0)
    return (left + grouped) / total


class AverageRisk(TableModel):
    """Average re-identification risk (classes / records) at most ``threshold`` (ARX's
    ``AverageReidentificationRisk``; ``risk reidentification``'s prosecutor average).

    With ``highest_risk``, ARX's relaxed variant: also at most ``records_at_risk`` (default 0) of the
    records in classes whose risk 1 / size exceeds ``highest_risk``, read as ARX reads it: classes
    smaller than :func:`size_threshold` (``effective_highest_risk`` = 1 / that size)."""

    monotonic = True
    monotonic_with_suppression = True

    def __init__(
        self, threshold: float, highest_risk: float | None = None, records_at_risk: float | None = None
    ) -> None:
        self.threshold: float = _AVERAGE(threshold)
        if records_at_risk is not None and highest_risk is None:
            raise ConfigError(f"{spell('records_at_risk')} needs {spell('highest_risk')}")
        self.highest_risk: float | None = None if highest_risk is None else _HIGHEST(highest_risk)
        self.records_at_risk: float = 0.0 if records_at_risk is None else _AT_RISK(records_at_risk)
        self.smallest_size = math.inf if self.highest_risk is None else size_threshold(self.highest_risk)
        self.name = f"{self._attacker}average risk <= {number_text(self.threshold)}{self._relaxed_name()}"
        if self.highest_risk is not None:
            # A group of one suppressed record is at risk (sample uniqueness's counter-example).
            self.monotonic_with_suppression = False

    _attacker = ""

    def _relaxed_name(self) -> str:
        if self.highest_risk is None:
            return ""
        effective = 1.0 / self.smallest_size
        shown = "" if math.isclose(effective, self.highest_risk) else f" (effective {number_text(effective)})"
        return (
            f", highest risk <= {number_text(self.highest_risk)}{shown} but for "
            f"{number_text(self.records_at_risk)} of records"
        )

    @property
    def effective_highest_risk(self) -> float | None:
        """The highest risk the model enforces (1 / :func:`size_threshold`), None without one."""
        return None if self.highest_risk is None else 1.0 / self.smallest_size

    def figure(self, sizes: np.ndarray) -> float:
        total = float(np.sum(sizes))
        return len(sizes) / total if total > 0 else 0.0

    def records_at_risk_share(self, sizes: np.ndarray) -> float:
        """The share of records in classes smaller than :func:`size_threshold` (0 without a highest risk)."""
        sizes = np.asarray(sizes, dtype=np.float64)
        total = float(sizes.sum())
        if total <= 0 or self.highest_risk is None:
            return 0.0
        return float(sizes[sizes < self.smallest_size - TOLERANCE].sum()) / total

    def figures(self, kept_sizes: np.ndarray, suppressed: float, total: float) -> np.ndarray:
        if total <= 0:
            return np.zeros(len(kept_sizes) + 1)
        taken = np.arange(len(kept_sizes) + 1)
        group = suppressed + np.concatenate(([0.0], np.cumsum(kept_sizes)))
        return (len(kept_sizes) - taken + (group > 0)) / total

    def curves(
        self, statistics: ClassStatistics, kept: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        found = super().curves(statistics, kept)
        if found is None or self.highest_risk is None or float(np.sum(statistics.sizes)) <= 0:
            return found
        order, curve, meets = found
        sizes = np.asarray(statistics.sizes, dtype=np.float64)
        kept_sizes = sizes[order]
        group = float(sizes[~kept].sum()) + np.concatenate(([0.0], np.cumsum(kept_sizes)))
        shares = at_risk_curve(kept_sizes, kept_sizes, group, group, self.smallest_size, float(sizes.sum()))
        return order, curve, meets & (shares <= self.records_at_risk + TOLERANCE)

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        super().check_feasible(statistics_of_whole_table)
        total = float(whole_table(statistics_of_whole_table).sizes.sum())
        if self.highest_risk is not None and self.records_at_risk_share(np.array([total])) > (
            self.records_at_risk + TOLERANCE
        ):
            raise ConfigError(
                f"{self.name} cannot be satisfied: the table as one class of {number_text(total)} "
                f"records has a risk of {number_text(1 / total)} for every record"
            )


class PopulationAverageRisk(AverageRisk):
    """The journalist's or the marketer's average re-identification risk at most ``threshold``,
    against the population table whose column ``research_subset`` marks the records released (the
    figures of ``risk reidentification``'s ``journalist`` and ``marketer``, as ARX's
    ``RiskModelSampleSummary`` computes them with a population: F the population of a released
    class, f its released records, n theirs in all).

    * marketer: the expected share of released records re-identified, sum of f / F over n;
    * journalist: the larger of that and the released classes over their population (sum of F);
    * with ``highest_risk`` (journalist only), at most ``records_at_risk`` of the released records in
      classes whose population is below :func:`size_threshold`.

    A class without a released record counts for nothing (its people are not in the release) and is
    never suppressed; the suppressed records are one class whose population is that of their classes.
    Monotonic (module docstring), not with suppression (tests/test_risk_models_relaxed.py).
    """

    monotonic = True
    monotonic_with_suppression = False
    counts_records = True  # the column's counts are of records, the sizes over the subset

    def __init__(
        self,
        threshold: float,
        attacker: str,
        research_subset: str,
        highest_risk: float | None = None,
        records_at_risk: float | None = None,
    ) -> None:
        if attacker not in ("journalist", "marketer"):
            raise ConfigError(f"{spell('attacker')} must be journalist or marketer here, got {attacker!r}")
        if attacker == "marketer" and highest_risk is not None:
            raise ConfigError(
                f"{spell('highest_risk')} applies to the prosecutor and journalist attackers: a "
                "marketer's risk is an average only"
            )
        self.attacker = attacker
        self._attacker = f"{attacker} "
        self.sensitive_attribute = attribute_parameter(research_subset)
        super().__init__(threshold, highest_risk, records_at_risk)
        self.name += f" ({self.sensitive_attribute})"
        self.monotonic_with_suppression = False

    def _counts(self, statistics: ClassStatistics) -> tuple[np.ndarray, np.ndarray]:
        column = str(self.sensitive_attribute)
        return subset_counts(statistics, column), population_counts(statistics, column)

    def curves(
        self, statistics: ClassStatistics, kept: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        inside, people = self._counts(statistics)
        released = inside > 0
        order = np.flatnonzero(kept & released)
        order = order[np.argsort(inside[order], kind="stable")]
        total = float(inside.sum())
        if total <= 0:
            return order, np.zeros(len(order) + 1), np.ones(len(order) + 1, dtype=bool)
        out = ~kept & released
        kept_inside, kept_people = inside[order], people[order]
        group = float(inside[out].sum()) + np.concatenate(([0.0], np.cumsum(kept_inside)))
        group_people = float(people[out].sum()) + np.concatenate(([0.0], np.cumsum(kept_people)))
        ratios = kept_inside / kept_people
        left = ratios.sum() - np.concatenate(([0.0], np.cumsum(ratios)))
        grouped = np.where(group > 0, group / np.where(group_people > 0, group_people, 1.0), 0.0)
        curve = (left + grouped) / total
        if self.attacker == "journalist":
            classes = len(order) - np.arange(len(order) + 1) + (group > 0)
            curve = np.maximum(classes / float(people[released].sum()), curve)
        meets = curve <= self.threshold + TOLERANCE
        if self.highest_risk is not None:
            shares = at_risk_curve(kept_inside, kept_people, group, group_people, self.smallest_size, total)
            meets &= shares <= self.records_at_risk + TOLERANCE
        return order, curve, meets

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """The release that suppresses every record: one class of the whole population, risk 1 / N."""
        inside, people = self._counts(whole_table(statistics_of_whole_table))
        if inside.sum() <= 0:
            return  # nothing released: the research subset's own message says so
        population = float(people.sum())
        risky = self.highest_risk is not None and population < self.smallest_size - TOLERANCE
        if 1.0 / population > self.threshold + TOLERANCE or (risky and self.records_at_risk < 1 - TOLERANCE):
            raise ConfigError(
                f"{self.name} cannot be satisfied: the population as one class of "
                f"{number_text(population)} people has a risk of {number_text(1 / population)}"
            )


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
