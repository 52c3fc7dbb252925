"""Check a table, as it is, against privacy models: the computation behind ``sdckit check``.

The equivalence classes are the distinct combinations of the quasi-identifier values as they appear
in the table. A missing (null) value is by default a wildcard that matches every value, as in
sdcMicro and ``sdckit risk`` (``risk.missing``): a class's size counts every record that matches it
(see :func:`check_table`); with ``missing="category"`` a null is a value of its own. A record whose
quasi-identifiers are all ``'*'`` counts as suppressed. The suppressed records form one more class,
listed last, which every model checks as any other (issue 36): an adversary who knows that a person
is in the data and matches no released class knows that she is one of them, so a group of fewer
than k, or one that gives its sensitive values away, discloses as a class would. They count in the
whole-table distribution of each sensitive attribute that t-closeness compares with, as every record.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import (
    Grouping,
    check_missing,
    check_weights,
    encode,
    group_records,
    wildcard_pattern_sizes,
)
from sdckit.models.base import ClassStatistics, ModelResult, PrivacyModel, SensitiveCounts, evaluate_all
from sdckit.models.presence import released_classes, subset_columns, subset_weights
from sdckit.params import spell
from sdckit.table import Table

SUPPRESSED = "*"


@dataclass(frozen=True)
class CheckReport:
    """The verdict of some privacy models on every equivalence class of a table.

    ``first[c]`` is the first record of class ``c`` (classes in order of first appearance, the group
    of suppressed records, all '*', last) and ``sizes[c]`` its size (sum of weights when weights
    were given). ``class_table`` (built on first use) has one row per class: its quasi-identifier
    values, ``size``, then for every model
    ``"<model> achieved"`` and ``"<model> passes"``, and ``passes all``.
    """

    n_records: int
    n_classes: int
    n_suppressed: int
    results: list[ModelResult]
    passes_all: np.ndarray
    representatives: pl.DataFrame
    first: np.ndarray
    sizes: np.ndarray
    weighted: bool = False

    @cached_property
    def class_table(self) -> pl.DataFrame:
        columns = self.representatives[self.first].get_columns()
        sizes = self.sizes if self.weighted else self.sizes.astype(np.int64)
        columns.append(pl.Series("size", sizes))
        for result in self.results:
            columns.append(pl.Series(f"{result.model} achieved", result.achieved))
            columns.append(pl.Series(f"{result.model} passes", result.passes))
        columns.append(pl.Series("passes all", self.passes_all))
        return pl.DataFrame(columns)

    def violating(self) -> pl.DataFrame:
        """The rows of ``class_table`` of the classes that fail at least one model."""
        return self.class_table.filter(~pl.col("passes all"))

    def summary(self) -> dict[str, Any]:
        """The figures of the check, as plain JSON-ready values (nan -> None)."""
        sizes = self.sizes
        models = {}
        for result in self.results:
            failing = ~result.passes
            models[result.model] = {
                "achieved": _plain(result.worst()),
                "higher_is_better": result.higher_is_better,
                "passes": bool(result.passes.all()),
                "violating_classes": int(failing.sum()),
                "violating_records": _plain(sizes[failing].sum()),
            }
        failing = ~self.passes_all
        return {
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "n_suppressed": self.n_suppressed,
            "k": _plain(sizes.min()) if self.n_classes else None,
            "models": models,
            "passes": bool(self.passes_all.all()),
            "violating_classes": int(failing.sum()),
            "violating_records": _plain(sizes[failing].sum()),
        }


def _plain(value: float) -> float | int | None:
    value = float(value)
    if math.isnan(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _suppressed_classes(
    data: pl.DataFrame, schema: pl.Schema, quasi_identifiers: Sequence[str], grouping: Grouping
) -> np.ndarray:
    """Which classes (given by their first record) have every quasi-identifier '*'.

    Enum columns are judged on their integer codes; the other columns are read only for the classes
    still in question (usually none or one), so the cost hardly grows with the number of columns.
    """
    textual = (pl.String, pl.Categorical, pl.Enum)
    first = grouping.first
    if not quasi_identifiers or not all(isinstance(schema[name], textual) for name in quasi_identifiers):
        return np.zeros(len(first), dtype=bool)
    candidates = np.arange(len(first))
    rest = []
    for name in quasi_identifiers:
        dtype = schema[name]
        if name not in grouping.tokens:
            rest.append(name)
            continue
        categories = cast(pl.Enum, dtype).categories.to_list()  # grouping.tokens: Enum columns only
        if SUPPRESSED not in categories:
            return np.zeros(len(first), dtype=bool)
        star = categories.index(SUPPRESSED) + grouping.token_offset
        candidates = candidates[grouping.tokens[name][first[candidates]] == star]
    if len(candidates) and rest:
        rows = data.select(rest)[first[candidates]]
        condition = pl.all_horizontal(pl.all().cast(pl.String).eq_missing(SUPPRESSED))
        candidates = candidates[rows.select(condition).to_series().to_numpy()]
    suppressed = np.zeros(len(first), dtype=bool)
    suppressed[candidates] = True
    return suppressed


def _wildcard_sizes(representatives: pl.DataFrame, sizes: np.ndarray) -> np.ndarray:
    """For every class (one representative row each, nulls included), the total size of the classes
    that match it when a null matches every value."""
    if not representatives.width or not any(representatives.null_count().row(0)):
        return sizes
    encoding = encode(representatives)
    patterns = np.stack(encoding.codes, axis=1)
    return wildcard_pattern_sizes(patterns, sizes, encoding.cardinalities)


def check_table(
    table: Table,
    quasi_identifiers: Sequence[str],
    models: Sequence[PrivacyModel],
    weights: np.ndarray | None = None,
    missing: str = "wildcard",
    multiplicity: np.ndarray | None = None,
) -> CheckReport:
    """Evaluate ``models`` on the equivalence classes of ``table`` over ``quasi_identifiers``.

    ``weights`` (one non-negative number per record) turn class sizes and value counts into sums of
    weights; by default records are counted (the table's sampling weights are not used unless passed).

    ``missing`` says how a missing (null) quasi-identifier value counts, as in
    :mod:`sdckit.frequency`: ``"wildcard"`` (the default, as everywhere in sdckit: ``sdckit risk``,
    :func:`verdict`, which ``sdckit check`` runs, and
    :func:`sdckit.anonymize.local_suppression.local_suppression`), a null matches every value (the
    convention of sdcMicro), so the size of a class (a distinct combination of values and nulls) is
    the number (or weight) of the records that match it, and a release made k-anonymous by local
    suppression checks as k; ``"category"``, a null is a value of its own, so records with a
    suppressed value form classes of their own (the classes that generalization and Mondrian form
    when missing values are members of a hierarchy). Classes under wildcards overlap, so when the
    quasi-identifiers hold nulls ``"wildcard"`` is for models that read only class sizes
    (k-anonymity), and models with a sensitive attribute need ``"category"`` (asking for them with
    ``"wildcard"`` raises :class:`ConfigError`); without nulls both treatments count alike.
    """
    check_missing(missing)
    weighted = weights is not None
    if multiplicity is not None:
        # Each row stands for ``multiplicity`` identical records (the patterns of a data set): they
        # count as records (times their sampling weight, if any).
        multiplicity = np.asarray(multiplicity, dtype=np.int64)
        if weights is None:
            weights = multiplicity.astype(np.float64)
    names = list(dict.fromkeys(quasi_identifiers))
    present = [name for name in names if name in table.data.columns]
    has_nulls = bool(present) and bool(
        table.data.select(pl.any_horizontal(pl.col(present).is_null()).any()).item()
    )
    wildcard = missing == "wildcard" and has_nulls  # without nulls, both treatments count alike
    if wildcard:
        reading = [model.name for model in models if model.sensitive_attribute is not None]
        if reading:
            raise ConfigError(
                "missing must be 'category' for models that read a sensitive attribute "
                f"({', '.join(reading)}): classes overlap when nulls are wildcards, got 'wildcard'"
            )
    data = table.data
    quasi_identifiers = list(dict.fromkeys(quasi_identifiers))
    unknown = [name for name in quasi_identifiers if name not in data.columns]
    if unknown:
        raise ConfigError(
            f"quasi-identifier '{unknown[0]}' is not a column of the data "
            f"(columns: {', '.join(data.columns)})"
        )
    weights = check_weights(weights, data.height)
    schema = data.schema  # polars builds it anew on every access
    grouping = group_records(data, quasi_identifiers, schema)
    # Only one class can be all '*' (the grouping is exact), so suppression is judged per class. The
    # suppressed records are a class the models check, moved last.
    suppressed_class = _suppressed_classes(data, schema, quasi_identifiers, grouping)
    keys = grouping.keys.astype(np.int64)
    sizes = grouping.sizes
    first = grouping.first
    n_keys = len(first)
    suppressed = np.zeros(len(keys), dtype=bool)
    if suppressed_class.any():
        renumber = np.cumsum(~suppressed_class) - 1
        renumber[suppressed_class] = n_keys - 1
        keys = renumber[keys]
        order = np.concatenate([np.flatnonzero(~suppressed_class), np.flatnonzero(suppressed_class)])
        sizes = sizes[order]
        first = first[order]
        suppressed = keys == n_keys - 1
    sensitive = [model.sensitive_attribute for model in models if model.sensitive_attribute is not None]
    # With a research subset its records are counted (ARX's count, as generalize and Mondrian count
    # them), the models reading the population from its column's counts in records.
    columns = subset_columns(models)
    counted = subset_weights(table, models, weights) if columns else weights
    if sensitive or (weights is not None and not wildcard):
        statistics = ClassStatistics.from_records(keys, n_keys, data, sensitive, counted)
        population = {
            name: SensitiveCounts.from_column(data.get_column(name), keys, n_keys) for name in columns
        }
        statistics = ClassStatistics(sizes=statistics.sizes, sensitive={**statistics.sensitive, **population})
    else:
        if weights is not None:
            kept = keys >= 0
            sizes = np.bincount(keys[kept], weights=weights[kept], minlength=n_keys)
        sizes = sizes.astype(np.float64)
        if wildcard:
            sizes = _wildcard_sizes(data.select(quasi_identifiers)[first], sizes)
        statistics = ClassStatistics(sizes=sizes)
    passes_all, results = evaluate_all(models, statistics)
    if columns:
        passes_all, results = released_classes(models, results, statistics.sizes, passes_all)
        multiplicity = np.asarray(counted, dtype=np.int64)  # the records counted: the subset's

    return CheckReport(
        n_records=data.height if multiplicity is None else int(multiplicity.sum()),
        n_classes=n_keys,
        n_suppressed=int(suppressed.sum()) if multiplicity is None else int(multiplicity[suppressed].sum()),
        results=results,
        passes_all=passes_all,
        representatives=data.select(quasi_identifiers),
        first=first,
        sizes=statistics.sizes,
        weighted=weighted,
    )


@dataclass(frozen=True)
class Verdict:
    """What ``sdckit check`` reports: the achieved values of k, l and t (``report``), which of them
    were required, whether they all pass, and the figures for a summary."""

    report: CheckReport
    quasi_identifiers: list[str]
    required: list[str]
    satisfied: bool
    missing: str

    @property
    def failing(self) -> list[str]:
        """The required models that some class fails."""
        return [r.model for r in self.report.results if r.model in self.required and not r.passes.all()]

    def figures(self) -> dict[str, Any]:
        figures = self.report.summary()
        figures.update(
            required=self.required,
            satisfied=self.satisfied,
            quasi_identifiers=self.quasi_identifiers,
            missing=self.missing,
        )
        return figures


def verdict(
    table: Table,
    *,
    k: int | None = None,
    l: float | None = None,  # noqa: E741
    l_variant: str = "distinct",
    c: float = 2.0,
    t: float | None = None,
    t_distance: str = "equal",
    beta: float | None = None,
    beta_variant: str = "basic",
    delta_disclosure: float | None = None,
    presence: dict[str, Any] | None = None,
    risk: dict[str, Any] | None = None,
    missing: str = "wildcard",
    multiplicity: np.ndarray | None = None,
) -> Verdict:
    """Check ``table`` (a release as written) against the required models, reporting k, l and t even
    when not required (β-likeness and δ-disclosure privacy when required). With
    ``missing="wildcard"`` (the default, as ``risk.missing``) and nulls among the quasi-identifiers a
    null matches every value and only k-anonymity is reported (l, t, β and δ need exact classes);
    without nulls both treatments count alike, so every model is reported. The verdict's ``missing``
    is the treatment asked for. ``presence`` holds the parameters of δ-presence and k-map
    (research_subset, delta_min, delta_max, k_map, k_map_estimator, significance_level,
    sampling_fraction, population_size), checked when given; ``risk`` those of the risk-based models
    (average_risk, sample_uniqueness, population_uniqueness, uniqueness_model; the population in
    ``presence``), whose figure is the table's, the suppressed group one class of it."""
    from sdckit.params import privacy_models
    from sdckit.table import Role

    check_missing(missing)
    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    has_nulls = bool(table.data.select(pl.any_horizontal(pl.col(names).is_null()).any()).item())
    wildcard = missing == "wildcard" and has_nulls
    exact = (l, t, beta, delta_disclosure, *(presence or {}).values(), *(risk or {}).values())
    if wildcard and any(value is not None for value in exact):
        raise ConfigError(
            "with nulls as wildcards only k-anonymity can be checked (a null joins every class, so classes "
            f"overlap); check l and t with nulls as a category ({spell('missing')} category)"
        )
    likeness: dict[str, Any] = dict(beta=beta, beta_variant=beta_variant, delta_disclosure=delta_disclosure)
    likeness.update(presence=presence, risk=risk)
    required = privacy_models(
        table, k=k, l=l, l_variant=l_variant, c=c, t=t, t_distance=t_distance, **likeness, method="check"
    )
    sensitive = bool(table.schema.with_role(Role.SENSITIVE)) and not wildcard
    reported = privacy_models(
        table,
        k=k or 1,
        l=l if l is not None else (1 if sensitive else None),
        l_variant=l_variant,
        c=c,
        t=t if t is not None else (1.0 if sensitive else None),
        t_distance=t_distance,
        **likeness,
    )
    report = check_table(
        table, names, reported, missing="wildcard" if wildcard else "category", multiplicity=multiplicity
    )
    required_names = sorted({model.name for model in required})
    satisfied = all(bool(r.passes.all()) for r in report.results if r.model in required_names)
    return Verdict(report, names, required_names, satisfied, missing)
