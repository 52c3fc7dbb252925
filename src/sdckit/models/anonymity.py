"""k-anonymity (Samarati & Sweeney 1998; Sweeney 2002).

Every equivalence class must hold at least k records: each record is then indistinguishable, on its
quasi-identifiers, from at least k - 1 others. With sampling weights the class size is the sum of the
weights (an estimate of the population frequency).
"""

from __future__ import annotations

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
from sdckit.params import K_BOUNDS, Argument, Whole

_K = Argument("k", Whole, K_BOUNDS)


class KAnonymity(PrivacyModel):
    """Each class holds at least ``k`` records. Achieved value: the class size.

    References
    ----------
    Sweeney, L. (2002). k-anonymity: a model for protecting privacy. International Journal of
    Uncertainty, Fuzziness and Knowledge-Based Systems 10(5), 557-570.
    """

    sensitive_attribute = None
    monotonic = True
    monotonic_with_suppression = True

    def __init__(self, k: int) -> None:
        self.k: int = _K(k)
        self.name = f"{self.k}-anonymity"

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        sizes = statistics.sizes
        return ModelResult(
            model=self.name,
            passes=sizes >= self.k - TOLERANCE,
            achieved=sizes.astype(np.float64, copy=True),
            higher_is_better=True,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        total = float(whole_table(statistics_of_whole_table).sizes.sum())
        if total < self.k - TOLERANCE:
            records = "record" if total == 1 else "records"
            raise ConfigError(f"{self.name} cannot be satisfied: only {number_text(total)} {records}")
