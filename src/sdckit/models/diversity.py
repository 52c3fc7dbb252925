"""l-diversity: distinct, entropy and recursive (c,l) (Machanavajjhala et al. 2007).

Each equivalence class must hold "well represented" values of a sensitive attribute. With the counts
of the class's values sorted r_1 >= r_2 >= ... >= r_m and N = r_1 + ... + r_m:

* distinct l-diversity: m >= l;
* entropy l-diversity: H = -sum (r_s / N) log(r_s / N) >= log l, i.e. exp(H) >= l;
* recursive (c,l)-diversity: r_1 < c (r_l + r_{l+1} + ... + r_m), which fails when m < l.

All three are monotonic: the union of two classes that satisfy one of them satisfies it too
(Machanavajjhala et al. 2007, section 4), so a generalization search may prune with them. A missing
sensitive value counts as a value of its own.

References
----------
Machanavajjhala, A., Kifer, D., Gehrke, J. & Venkitasubramaniam, M. (2007). l-diversity: privacy beyond
k-anonymity. ACM Transactions on Knowledge Discovery from Data 1(1), 3.
"""

from __future__ import annotations

import math

import numpy as np

from sdckit.errors import ConfigError
from sdckit.models import _kernels
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    attribute_parameter,
    number_text,
    whole_table,
)
from sdckit.params import C_BOUNDS, L_BOUNDS, Argument, Finite, Whole

_WHOLE_L = Argument("l", Whole, L_BOUNDS)
_REAL_L = Argument("l", Finite, L_BOUNDS)
_C = Argument("c", Finite, C_BOUNDS, option="--c")


class DistinctLDiversity(PrivacyModel):
    """Each class holds at least ``l`` distinct values of ``attribute``.

    Achieved value: the number of distinct values of the class.
    """

    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True
    monotonic_with_suppression = True

    def __init__(self, attribute: str, l: int) -> None:  # noqa: E741 (the literature's name)
        self.sensitive_attribute = attribute_parameter(attribute)
        self.l: int = _WHOLE_L(l)
        self.name = f"distinct {self.l}-diversity ({self.sensitive_attribute})"

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        counts = statistics.counts_of(self.sensitive_attribute)
        starts, _ = counts.segments(statistics.n_classes)
        distinct = np.diff(starts).astype(np.float64)
        return ModelResult(
            model=self.name,
            passes=distinct >= self.l - TOLERANCE,
            achieved=distinct,
            higher_is_better=True,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        counts = whole_table(statistics_of_whole_table).counts_of(self.sensitive_attribute)
        distinct = len(counts.values)
        if distinct < self.l:
            raise ConfigError(
                f"distinct {self.l}-diversity on '{self.sensitive_attribute}' cannot be satisfied: "
                f"the data has only {distinct} distinct value{'' if distinct == 1 else 's'}"
            )


class EntropyLDiversity(PrivacyModel):
    """Each class's entropy of ``attribute`` is at least log ``l``.

    Achieved value: exp(entropy), the class's "effective l".
    """

    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True

    def __init__(self, attribute: str, l: float) -> None:  # noqa: E741
        self.sensitive_attribute = attribute_parameter(attribute)
        self.l: float = _REAL_L(l)
        self.name = f"entropy {number_text(self.l)}-diversity ({self.sensitive_attribute})"

    def _entropies(self, statistics: ClassStatistics) -> np.ndarray:
        counts = statistics.counts_of(self.sensitive_attribute)
        starts, totals = counts.segments(statistics.n_classes)
        return _kernels.entropy(starts, counts.counts, counts.log_counts(), totals)

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        entropy = self._entropies(statistics)
        return ModelResult(
            model=self.name,
            passes=entropy >= math.log(self.l) - TOLERANCE,
            achieved=np.exp(entropy),
            higher_is_better=True,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        entropy = float(self._entropies(whole_table(statistics_of_whole_table))[0])
        if entropy < math.log(self.l) - TOLERANCE:
            raise ConfigError(
                f"entropy {number_text(self.l)}-diversity on '{self.sensitive_attribute}' cannot be "
                f"satisfied: the entropy of the whole table is {entropy:.4g} < log l = "
                f"{math.log(self.l):.4g} (its effective l is {math.exp(entropy):.4g})"
            )


class RecursiveCLDiversity(PrivacyModel):
    """Each class satisfies r_1 < c (r_l + ... + r_m) for ``attribute``.

    Achieved value: the largest l' (at most the number m of distinct values of the class) such that
    r_1 < c (r_l' + ... + r_m), or 0 when even r_1 < c N fails (possible only for c <= 1). The l' that
    satisfy the inequality are exactly 1 .. achieved, so a class passes iff achieved >= l. The strict
    inequality is evaluated exactly, without tolerance: a lenient tolerance would let the boundary case
    r_1 = c (r_l + ... + r_m) pass, which the definition excludes.
    """

    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True

    def __init__(self, attribute: str, c: float, l: int) -> None:  # noqa: E741
        self.sensitive_attribute = attribute_parameter(attribute)
        self.c: float = _C(c)
        self.l: int = _WHOLE_L(l)
        self.name = f"recursive ({number_text(self.c)},{self.l})-diversity ({self.sensitive_attribute})"

    def _levels(self, statistics: ClassStatistics) -> np.ndarray:
        counts = statistics.counts_of(self.sensitive_attribute)
        starts, totals = counts.segments(statistics.n_classes)
        return _kernels.recursive_level(starts, counts.counts, totals, self.c, *_kernels.NETWORKS)

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        levels = self._levels(statistics)
        return ModelResult(model=self.name, passes=levels >= self.l, achieved=levels, higher_is_better=True)

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        statistics = whole_table(statistics_of_whole_table)
        counts = statistics.counts_of(self.sensitive_attribute)
        if float(self._levels(statistics)[0]) >= self.l:
            return
        distinct = len(counts.values)
        prefix = f"{self.name.rsplit(' (', 1)[0]} on '{self.sensitive_attribute}' cannot be satisfied: "
        if distinct < self.l:
            raise ConfigError(
                f"{prefix}the data has only {distinct} distinct value{'' if distinct == 1 else 's'}"
            )
        ranked = np.sort(counts.counts)[::-1]
        raise ConfigError(
            f"{prefix}the whole table fails it (r_1 = {number_text(ranked[0])} is not below "
            f"c * (r_{self.l} + ... + r_{distinct}) = {number_text(self.c * ranked[self.l - 1 :].sum())})"
        )
