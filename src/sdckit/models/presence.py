"""δ-presence (Nergiz, Atzori & Clifton 2007) and the research subset it is stated against.

The data steward holds a *population* table (every person an adversary may look for, e.g. a voter
list or a census extract) and releases a *research subset* of it (the people of a study). A column of
the population table marks the subset (yes/no, true/false or 1/0: :func:`subset_members`); the models
read it as the per-class counts of that column (it is a "sensitive" attribute of the models, so the
generalization search, Mondrian and ``check`` compute it for every class as they compute the counts
of a sensitive attribute). ``ClassStatistics.sizes`` are then the *population* counts of the classes.

An adversary who holds the population table and sees the release generalized to some classes knows,
for a person of class c, that ``subset(c)`` of the ``population(c)`` people of her class were
released, so his belief that she is in the study is δ(c) = subset(c) / population(c). δ-presence
bounds it for every class: δmin <= δ(c) <= δmax (both inclusive, as ARX's ``DPresence``; a class
without subset records has δ = 0).

**Monotonicity.** δ of the union of two classes is the population-weighted mean of their δ, so it lies
between them: the union of two passing classes passes (monotonic under generalization, as ARX
declares). It is not monotonic with suppression: a passing class merged with a failing one can fail
(tests/test_presence_kmap.py proves both and shows the lattice counter-example).

**Achieved value** of a class: its δ; the worst class is the one of largest δ (the bound δmax is the
privacy guarantee; δmin guards against inferring absence).

References
----------
Nergiz, M. E., Atzori, M. & Clifton, C. (2007). Hiding the presence of individuals from shared
databases. Proceedings of the 2007 ACM SIGMOD International Conference on Management of Data,
665-676.
"""

from __future__ import annotations

import numpy as np

from sdckit.errors import ConfigError
from sdckit.models.base import (
    TOLERANCE,
    ClassStatistics,
    ModelResult,
    PrivacyModel,
    SensitiveCounts,
    attribute_parameter,
    number_text,
    whole_table,
)
from sdckit.params import DELTA_PRESENCE_BOUNDS, Argument, Finite, spell

_DELTA_MIN = Argument("delta_min", Finite, DELTA_PRESENCE_BOUNDS)
_DELTA_MAX = Argument("delta_max", Finite, DELTA_PRESENCE_BOUNDS)

_YES = frozenset({"yes", "y", "true", "t", "1", "1.0"})
_NO = frozenset({"no", "n", "false", "f", "0", "0.0"})


def subset_members(counts: SensitiveCounts) -> np.ndarray:
    """Per value code of the research-subset column, whether it marks a member of the subset: yes,
    y, true, t, 1 (any case) or a true boolean; no, n, false, f, 0 or a false boolean mark the rest.
    Any other value (a null included) is a ConfigError naming the column. Computed once per counts."""
    key = "research subset"
    if key not in counts._cache:
        members = np.zeros(counts.n_values, dtype=bool)
        for code, value in enumerate(counts.categories.to_list()):
            text = str(value).strip().lower() if value is not None else None
            if text in _YES:
                members[code] = True
            elif text not in _NO:
                shown = "a missing value" if value is None else repr(value)
                raise ConfigError(
                    f"the research subset column '{counts.attribute}' ({spell('research_subset')}) must "
                    f"hold yes/no, true/false or 1/0 for every record, got {shown}"
                )
        counts._cache[key] = members
    cached: np.ndarray = counts._cache[key]
    return cached


def subset_counts(statistics: ClassStatistics, column: str) -> np.ndarray:
    """Per class, the records (or sum of weights) of the research subset marked by ``column``."""
    counts = statistics.counts_of(column)
    members = subset_members(counts)
    inside = members[counts.values]
    return np.bincount(
        counts.classes[inside], weights=counts.counts[inside], minlength=statistics.n_classes
    ).astype(np.float64)


class DeltaPresence(PrivacyModel):
    """Every class's share of research-subset records among its population records lies in
    [``delta_min``, ``delta_max``] (Nergiz, Atzori & Clifton 2007; ARX's ``DPresence``).

    ``research_subset`` names the column of the population table that marks the subset. Achieved
    value: the class's δ (worst: the largest).
    """

    sensitive_attribute: str
    monotonic = True
    monotonic_with_suppression = False

    def __init__(self, research_subset: str, delta_min: float = 0.0, delta_max: float = 1.0) -> None:
        self.sensitive_attribute = attribute_parameter(research_subset)
        self.delta_min: float = _DELTA_MIN(delta_min)
        self.delta_max: float = _DELTA_MAX(delta_max)
        if self.delta_min > self.delta_max:
            raise ConfigError(
                f"{spell('delta_min')} ({number_text(self.delta_min)}) must be at most "
                f"{spell('delta_max')} ({number_text(self.delta_max)})"
            )
        self.name = (
            f"({number_text(self.delta_min)}, {number_text(self.delta_max)})-presence "
            f"({self.sensitive_attribute})"
        )

    def deltas(self, statistics: ClassStatistics) -> np.ndarray:
        """δ of every class: its subset records over its population records (0 for an empty class)."""
        inside = subset_counts(statistics, self.sensitive_attribute)
        sizes = statistics.sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(sizes > 0, inside / np.where(sizes > 0, sizes, 1.0), 0.0)

    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        deltas = self.deltas(statistics)
        return ModelResult(
            model=self.name,
            passes=(deltas >= self.delta_min - TOLERANCE) & (deltas <= self.delta_max + TOLERANCE),
            achieved=deltas,
            higher_is_better=False,
        )

    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """The whole table's δ must lie in the bounds: every release's classes (and its group of
        suppressed records) partition the table, and a δ in the bounds for every part puts their
        population-weighted mean, the whole table's δ, in the bounds too."""
        whole = whole_table(statistics_of_whole_table)
        delta = float(self.deltas(whole)[0]) if whole.sizes.sum() > 0 else 0.0
        if not self.delta_min - TOLERANCE <= delta <= self.delta_max + TOLERANCE:
            raise ConfigError(
                f"{self.name} cannot be satisfied: the research subset is {delta:.6g} of the whole "
                f"table, outside [{number_text(self.delta_min)}, {number_text(self.delta_max)}]"
            )
