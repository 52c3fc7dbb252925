"""β-likeness, basic and enhanced (Cao & Karras 2012).

With p_s the share of sensitive value s in the whole table and q_s its share inside an equivalence
class, an adversary who learns a person's class raises his belief in s from p_s to q_s. β-likeness
bounds the *relative* gain of every value whose belief grows:

* basic β-likeness: (q_s - p_s) / p_s <= β for every s with q_s > p_s;
* enhanced β-likeness: (q_s - p_s) / p_s <= min(β, -ln p_s), which tightens the bound of frequent
  values (a value held by 60% of the table may then rise by at most -ln 0.6 = 51%, not to 1 + β).

Values whose share falls (q_s <= p_s, absent values included) are never at risk. The inequality is
not strict (as ARX's ``BasicBLikeness`` and ``EnhancedBLikeness``); β > 0 as in ARX. p is the
distribution over every record of the table, suppressed ones included (as ARX and t-closeness here).

**Monotonicity.** Each condition bounds q_s from above by a constant of the table (p_s (1 + β), or
p_s (1 + min(β, -ln p_s))). The share of s in the union of two classes is a weighted mean of their
shares, so the union of two passing classes passes: both variants are monotonic under
generalization, as ARX declares them. They are not monotonic with suppression: a passing class merged
with a failing one can fail (tests/test_likeness.py shows the lattice counter-example).

**Achieved value** of a class: its largest relative gain max_s (q_s - p_s) / p_s (>= 0, as some value
always gains), the smallest β the class satisfies. For enhanced β-likeness a class where some value
gains more than -ln p_s satisfies no β: its achieved value is +inf.

References
----------
Cao, J. & Karras, P. (2012). Publishing microdata with a robust privacy guarantee. Proceedings of the
VLDB Endowment 5(11), 1388-1399.
"""

from __future__ import annotations

import numpy as np

from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    SensitiveCounts,
    attribute_parameter,
    number_text,
)
from sdckit.params import BETA_BOUNDS, Argument, Finite

_BETA = Argument("beta", Finite, BETA_BOUNDS)


def class_maxima(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per class, the largest of ``values`` over the class's triples (``starts``: the classes'
    offsets, as :meth:`SensitiveCounts.segments`); 0 for a class without triples."""
    n_classes = len(starts) - 1
    result = np.zeros(n_classes)
    if n_classes == 0 or values.size == 0:
        return result
    present = starts[:-1] < starts[1:]
    result[present] = np.maximum.reduceat(values, starts[:-1][present])
    return result


def class_shares(counts: SensitiveCounts, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per (class, value) triple, the share q of the value in its class and the value's share p in the
    table: one pass over the triples, no classes x values array."""
    _, totals = counts.segments(n_classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = counts.counts / totals[counts.classes]
    return q, counts.overall[counts.values]


class _BetaLikeness(PrivacyModel):
    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True
    monotonic_with_suppression = False
    variant = ""

    def __init__(self, attribute: str, beta: float) -> None:
        self.sensitive_attribute = attribute_parameter(attribute)
        self.beta: float = _BETA(beta)
        self.name = f"{self.variant} {number_text(self.beta)}-likeness ({self.sensitive_attribute})"

    def achieved(self, statistics: ClassStatistics) -> np.ndarray:
        """The achieved value (the smallest β satisfied) of every class."""
        counts = statistics.counts_of(self.sensitive_attribute)
        starts, _ = counts.segments(statistics.n_classes)
        q, p = class_shares(counts, statistics.n_classes)
        with np.errstate(divide="ignore", invalid="ignore"):
            gains = np.where(p > 0, (q - p) / np.where(p > 0, p, 1.0), np.inf)
        achieved = class_maxima(gains, starts)
        if self.variant == "enhanced":
            # A gain above -ln p fails whatever β; gains + ln p > 0 marks it.
            with np.errstate(divide="ignore"):
                excess = class_maxima(gains + np.log(p), starts)
            achieved[excess > TOLERANCE] = np.inf
        return achieved

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        achieved = self.achieved(statistics)
        return ModelResult(
            model=self.name,
            passes=achieved <= self.beta + TOLERANCE,
            achieved=achieved,
            higher_is_better=False,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """Always feasible: in the whole table q = p, every gain is 0 <= β (and <= -ln p)."""
        statistics_of_whole_table.counts_of(self.sensitive_attribute)


class BasicBetaLikeness(_BetaLikeness):
    """Each class raises no value's share by more than ``beta`` relative to the whole table:
    (q_s - p_s) / p_s <= β (Cao & Karras 2012; ARX's ``BasicBLikeness``).

    Achieved value: the class's largest relative gain.
    """

    variant = "basic"


class EnhancedBetaLikeness(_BetaLikeness):
    """Each class raises no value's share by more than min(``beta``, -ln p_s) relative to the whole
    table (Cao & Karras 2012; ARX's ``EnhancedBLikeness``).

    Achieved value: the class's largest relative gain, +inf when a gain exceeds -ln p_s.
    """

    variant = "enhanced"


BETA_LIKENESS = {"basic": BasicBetaLikeness, "enhanced": EnhancedBetaLikeness}
