"""δ-disclosure privacy (Brickell & Shmatikov 2008).

With p_s the share of sensitive value s in the whole table and q_s its share inside an equivalence
class, a class is δ-disclosure private when |ln(q_s / p_s)| < δ for *every* value s of the table: no
value's belief rises or falls by a factor e^δ or more once the adversary knows the class. A value
absent from a class has q_s = 0 and |ln 0| = inf: every class must hold every value of the table.
The inequality is strict, as in the paper and ARX; δ > 0. p is the distribution over every record of
the table, suppressed ones included (as ARX and t-closeness here).

**Deviations from ARX** (``DDisclosurePrivacy``), documented: ARX takes the logarithm to base 2 (its
δ is ours divided by ln 2: ARX's δ = 1 is our δ = 0.693) and checks only the values present in a
class, so a class missing a value passes there. Here the paper's definition holds: natural logarithm,
every value of the table. ARX's reading is not monotonic (a class holding one value only passes
there, and merged with another class it may lower the other class's share of a value below p e^-δ),
which is why ARX declares the model non-monotonic; the paper's is.

**Monotonicity.** The condition is p_s e^-δ < q_s < p_s e^δ for every s, an interval of q_s fixed by
the table. The share of s in the union of two classes is a weighted mean of their shares, so it lies
in the interval when both do: the model is monotonic under generalization. It is not monotonic with
suppression (a passing class merged with a failing one can fail).

**Achieved value** of a class: max_s |ln(q_s / p_s)| (+inf when a value of the table is absent from
the class), the infimum of the δ it satisfies; it passes when that is below δ.

References
----------
Brickell, J. & Shmatikov, V. (2008). The cost of privacy: destruction of data-mining utility in
anonymized data publishing. Proceedings of the 14th ACM SIGKDD International Conference on Knowledge
Discovery and Data Mining, 70-78.
"""

from __future__ import annotations

import numpy as np

from sdckit.models.base import (
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    attribute_parameter,
    number_text,
)
from sdckit.models.likeness import class_maxima, class_shares
from sdckit.params import DELTA_DISCLOSURE_BOUNDS, Argument, Finite

_DELTA = Argument("delta", Finite, DELTA_DISCLOSURE_BOUNDS, option="--delta-disclosure")


class DeltaDisclosure(PrivacyModel):
    """Each class changes no value's share by a factor e^``delta`` or more: |ln(q_s / p_s)| < δ for
    every value s of the table.

    Achieved value: max_s |ln(q_s / p_s)|, +inf when the class lacks a value of the table.
    """

    sensitive_attribute: str  # always given (PrivacyModel allows None for k-anonymity)

    monotonic = True
    monotonic_with_suppression = False

    def __init__(self, attribute: str, delta: float) -> None:
        self.sensitive_attribute = attribute_parameter(attribute)
        self.delta: float = _DELTA(delta)
        self.name = f"{number_text(self.delta)}-disclosure privacy ({self.sensitive_attribute})"

    def achieved(self, statistics: ClassStatistics) -> np.ndarray:
        """max_s |ln(q_s / p_s)| of every class."""
        counts = statistics.counts_of(self.sensitive_attribute)
        n_classes = statistics.n_classes
        starts, _ = counts.segments(n_classes)
        q, p = class_shares(counts, n_classes)
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.abs(np.log(q / p))
        achieved = class_maxima(logs, starts)
        # A class that lacks a value of the table (one with p > 0) has q = 0 for it.
        held = np.diff(starts)
        achieved[held < np.count_nonzero(counts.overall > 0)] = np.inf
        return achieved

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        achieved = self.achieved(statistics)
        # Strict, without tolerance: the boundary |ln(q/p)| = δ fails, as the definition says.
        return ModelResult(
            model=self.name, passes=achieved < self.delta, achieved=achieved, higher_is_better=False
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """Always feasible: in the whole table q = p, |ln 1| = 0 < δ."""
        statistics_of_whole_table.counts_of(self.sensitive_attribute)
