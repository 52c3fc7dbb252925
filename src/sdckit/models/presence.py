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

**One-sided δ-presence suppresses nothing.** With ``delta_min = 0`` every failing class has δ above
``delta_max``, so the group of suppressed records (their union, a mean of those δ: at least the
smallest, and rounding is monotone) fails too; a generalization search releases that group as one
more class that must satisfy the models (issue 36; :mod:`sdckit.anonymize._suppressed_group`), so a
node satisfying δ-presence alone suppresses no record, whatever the limit, and the search under
these models is the search without suppression (monotonic: its nodes and optimum are the same).
Likewise with ``delta_max = 1`` (every failing class below ``delta_min``). It fails when another
model joins (a class failing k-anonymity but not δ-presence can bring the group's δ into the bounds),
when both bounds bind (a class above and one below average out), and where a class labelled ``*``
on every quasi-identifier, which joins the group, can be one of several classes
(:func:`sdckit.anonymize._research_subset.limit_in_effect`; counter-examples in the tests).

**Achieved value** of a class: its δ; the worst class is the one of largest δ (the bound δmax is the
privacy guarantee; δmin guards against inferring absence).

References
----------
Nergiz, M. E., Atzori, M. & Clifton, C. (2007). Hiding the presence of individuals from shared
databases. Proceedings of the 2007 ACM SIGMOD International Conference on Management of Data,
665-676.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

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

if TYPE_CHECKING:
    from sdckit.table import Table

_DELTA_MIN = Argument("delta_min", Finite, DELTA_PRESENCE_BOUNDS)
_DELTA_MAX = Argument("delta_max", Finite, DELTA_PRESENCE_BOUNDS)

_YES = frozenset({"yes", "y", "true", "t", "1", "1.0"})
_NO = frozenset({"no", "n", "false", "f", "0", "0.0"})


def _member(value: object, column: str) -> bool:
    """Whether a value of the research-subset column marks a member (ConfigError if it marks none)."""
    text = str(value).strip().lower() if value is not None else None
    if text in _YES:
        return True
    if text not in _NO:
        shown = "a missing value" if value is None else repr(value)
        raise ConfigError(
            f"the research subset column '{column}' ({spell('research_subset')}) must "
            f"hold yes/no, true/false or 1/0 for every record, got {shown}"
        )
    return False


def subset_members(counts: SensitiveCounts) -> np.ndarray:
    """Per value code of the research-subset column, whether it marks a member of the subset: yes,
    y, true, t, 1 (any case) or a true boolean; no, n, false, f, 0 or a false boolean mark the rest.
    Any other value (a null included) is a ConfigError naming the column. Computed once per counts."""
    key = "research subset"
    if key not in counts._cache:
        counts._cache[key] = np.array(
            [_member(value, counts.attribute) for value in counts.categories.to_list()], dtype=bool
        )
    cached: np.ndarray = counts._cache[key]
    return cached


def subset_counts(statistics: ClassStatistics, column: str) -> np.ndarray:
    """Per class, the records of the research subset marked by ``column``."""
    counts = statistics.counts_of(column)
    members = subset_members(counts)
    inside = members[counts.values]
    return np.bincount(
        counts.classes[inside], weights=counts.counts[inside], minlength=statistics.n_classes
    ).astype(np.float64)


def population_counts(statistics: ClassStatistics, column: str) -> np.ndarray:
    """Per class, the records of the population table: the counts of every value of ``column``.

    Read from the column's counts, not from ``statistics.sizes``: generalization, Mondrian and
    ``check`` count the class sizes, the suppression limit and the metric over the research subset
    (what is released, as ARX does: :func:`subset_weights`), and the column's counts stay counts of
    records."""
    counts = statistics.counts_of(column)
    return np.bincount(counts.classes, weights=counts.counts, minlength=statistics.n_classes).astype(
        np.float64
    )


def subset_columns(models: Sequence[PrivacyModel]) -> list[str]:
    """The research-subset columns of the models stated against a population table (``counts_records``)."""
    return [str(m.sensitive_attribute) for m in models if getattr(m, "counts_records", False)]


def research_subset(models: Sequence[PrivacyModel]) -> str | None:
    """The research-subset column of the models stated against a population table, if any (one
    column: two different ones are a ConfigError)."""
    columns = set(subset_columns(models))
    if len(columns) > 1:
        raise ConfigError(
            f"the models name different research subsets ({', '.join(sorted(columns))}): "
            f"give one {spell('research_subset')}"
        )
    return next(iter(columns), None)


def subset_figures(table: Table, models: Sequence[PrivacyModel], suppressed: np.ndarray) -> dict[str, Any]:
    """A release's figures over its research subset, if the models have one (else none): the column,
    the records of the subset and those of them suppressed (what the suppression limit counts)."""
    column = research_subset(models)
    if column is None:
        return {}
    inside = subset_weights(table, models, None)
    assert inside is not None
    members = inside > 0
    return {
        "research_subset": {
            "column": column,
            "records": int(members.sum()),
            "suppressed_records": int((members & np.asarray(suppressed, dtype=bool)).sum()),
        }
    }


def subset_report(figures: dict[str, Any]) -> list[str]:
    """The line of :func:`subset_figures` in a method's report (none without a research subset)."""
    subset = figures.get("research_subset")
    if not subset:
        return []
    return [
        f"research subset '{subset['column']}': {subset['records']:,} records released, "
        f"{subset['suppressed_records']:,} of them suppressed"
    ]


def released_classes(
    models: Sequence[PrivacyModel], results: Sequence[ModelResult], sizes: np.ndarray, passes: np.ndarray
) -> tuple[np.ndarray, list[ModelResult]]:
    """With a research subset (``sizes`` count its records), ARX's rule for a class without a subset
    record: nothing of it is released, so it passes every model but δ-presence (an adversary who
    holds the population still learns that its people are not in the study), its achieved value
    left out of the worst (+inf, or -inf where lower is better). Returns the classes passing every
    model (``passes``, of :func:`sdckit.models.evaluate_all`, amended) and the results."""
    empty = sizes <= 0
    if not empty.any():
        return passes, list(results)
    changed, presence_ok = [], np.ones(len(sizes), dtype=bool)
    for model, result in zip(models, results, strict=True):
        if isinstance(model, DeltaPresence):
            changed.append(result)
            presence_ok &= result.passes
            continue
        blank = np.inf if result.higher_is_better else -np.inf
        changed.append(
            ModelResult(
                model=result.model,
                passes=result.passes | empty,
                achieved=np.where(empty, blank, result.achieved),
                higher_is_better=result.higher_is_better,
            )
        )
    return passes | (empty & presence_ok), changed


def subset_weights(
    table: Table, models: Sequence[PrivacyModel], weights: np.ndarray | None
) -> np.ndarray | None:
    """The weights that count the released records: with a research subset, 1 for a record of the
    subset and 0 for the rest of the population (class sizes, the suppression limit and the metric
    are then over the subset, as ARX counts them), else ``weights`` unchanged. Sampling weights
    with a research subset are a ConfigError: the data is a population table, whose records stand
    for themselves."""
    column = research_subset(models)
    if column is None or column not in table.data.columns:
        return weights
    if weights is not None:
        raise ConfigError(
            f"sampling weights cannot be combined with a research subset ({spell('research_subset')} "
            f"'{column}'): the data is the population table, each record one person"
        )
    members = _members_by_code(table, column)
    if members is None:  # a value that marks nothing: named in order of appearance, as before
        series = table.data.get_column(column)
        values = series.unique(maintain_order=True)
        marked = values.filter(
            pl.Series([_member(value, column) for value in values.to_list()], dtype=pl.Boolean)
        )
        members = series.is_in(marked.implode()).to_numpy()
    if not members.any():
        raise ConfigError(
            f"the privacy models cannot be satisfied: the research subset column '{column}' "
            f"({spell('research_subset')}) marks no record, so nothing is released"
        )
    return members.astype(np.float64)


def _members_by_code(table: Table, column: str) -> np.ndarray | None:
    """Whether each record of a text column is a member, through the column's codes (one compiled pass
    over its values, :func:`sdckit.anonymize._lattice_encoding.sensitive_codes`) and one look-up per
    distinct value; None for another column, a missing value or a value that marks nothing."""
    from sdckit.anonymize._lattice_encoding import sensitive_codes

    if table.data.schema[column] != pl.String:
        return None
    codes, _, has_missing, categories = sensitive_codes(table, [column])[column]
    values = categories.to_list()
    if has_missing or any(str(v).strip().lower() not in _YES | _NO for v in values):
        return None
    marks = np.array([_member(value, column) for value in values], dtype=bool)
    return marks[codes]


class DeltaPresence(PrivacyModel):
    """Every class's share of research-subset records among its population records lies in
    [``delta_min``, ``delta_max``] (Nergiz, Atzori & Clifton 2007; ARX's ``DPresence``).

    ``research_subset`` names the column of the population table that marks the subset. Achieved
    value: the class's δ (worst: the largest).
    """

    sensitive_attribute: str
    monotonic = True
    monotonic_with_suppression = False
    counts_records = True  # the column's counts are of records, the sizes over the subset

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
        sizes = population_counts(statistics, self.sensitive_attribute)
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
        delta = float(self.deltas(whole)[0])
        if not self.delta_min - TOLERANCE <= delta <= self.delta_max + TOLERANCE:
            raise ConfigError(
                f"{self.name} cannot be satisfied: the research subset is {delta:.6g} of the whole "
                f"table, outside [{number_text(self.delta_min)}, {number_text(self.delta_max)}]"
            )
