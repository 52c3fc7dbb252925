"""Record-level combined identity and attribute disclosure risk (Orooji & Knapp, 2019).

For a record r and every split of the attributes into a known set KS (what an adversary knows) and
its complement, the unknown set UKS::

    D(r)       = sum_i  L_KS_i(r) * alpha * C_UKS_i(r)                       (1)
    L_KS(r)    = PK(KS) / count(r(KS))                                        (2)
    PK(KS)     = prod_{A in KS} PK(A)                                         (3)
    C_UKS(r)   = sum_{A in UKS} W(A) * W(r(A))                                (4)

Known sets are enumerated with the paper's pruning algorithm (its Figure 1): a set is kept iff
PK(KS) > epsilon; the empty known set (PK = 1) is always kept. Because PK only decreases when an
attribute is added, pruning a set prunes all its supersets, and the kept sets come out in pre-order
of the subset tree, each right after its parent (the set minus its largest attribute).

Implementation: attributes are integer-coded once; the group keys of a known set are computed from
its parent's keys plus one attribute (:func:`sdckit.frequency.extend_keys`), so the cost grows with
the number of kept sets, not with their sizes. Under the ``category`` treatment of missing values a
record that is alone in its parent's group stays alone in every superset, so only records in groups
of two or more are carried down the tree. C is updated the same way: C_UKS(child) = C_UKS(parent) -
W(A) * W(r(A)). On many records, a set's contributions are added in a second thread while the next
set's keys are found: each record still receives the same additions in the same order.

``count`` is the number of records sharing r's values on KS (the record itself included), or the sum
of their sampling weights when weights are given; a record of weight 0 stands for nobody: it adds
nothing to a count and its risk is 0. Missing values are treated as a category of their
own or as wildcards matching every value (sdcMicro's convention), see :mod:`sdckit.frequency`.

Identifier attributes are dropped. Attributes that can be in no kept known set (PK <= epsilon) and
have sensitivity 0 play no part and are skipped.

References
----------
Orooji, M. and Knapp, G. M. (2019). A novel microdata privacy disclosure risk measure. Proceedings of
the IISE Annual Conference.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.context import Context, ExtraOutput, ProgressCallback
from sdckit.coverage import AttributeCover, attribute_covers
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import (
    Encoding,
    add_known_contributions,
    add_value_weights,
    check_missing,
    check_weights,
    combine_codes,
    dense_keys,
    encode,
    grouped_quantiles,
    initial_keys,
    key_extender,
    weighted_group_sizes,
    wildcard_group_sizes,
)
from sdckit.hierarchy import Hierarchy
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, Whole
from sdckit.risk._combined_active import _ActivePatterns
from sdckit.risk._combined_coverage import _coverage_known_sets, _inverse
from sdckit.table import Role, Table

QUANTILES = (0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0)


def enumerate_known_sets(probabilities: Sequence[float], epsilon: float) -> list[tuple[int, ...]]:
    """Known sets (tuples of attribute indices) with PK(KS) > epsilon, by the paper's Figure 1.

    ``SUB`` holds the kept subsets, ``NEXT`` for each the indices that may still extend it; the
    pointer ``i`` sweeps both lists from the end. A subset is extended by each remaining index in
    turn; an extension whose probability product exceeds epsilon is appended and becomes the current
    subset. The empty set is always first. Returns the sets in the order they are appended (pre-order
    of the subset tree), so every set's parent ``set[:-1]`` comes before it.
    """
    if epsilon < 0:
        raise ConfigError(f"epsilon must be >= 0, got {epsilon}")
    probabilities = [float(p) for p in probabilities]
    m = len(probabilities)
    subsets: list[tuple[int, ...]] = [()]
    products: list[float] = [1.0]
    remaining: list[list[int]] = [list(range(m))]
    i = 0
    while len(subsets) - i != 0:
        position = len(subsets) - 1 - i
        current, product, next_indices = subsets[position], products[position], remaining[position]
        while next_indices:
            index = next_indices.pop(0)
            union = (*current, index)
            union_product = product * probabilities[index]
            if union_product > epsilon:
                subsets.append(union)
                products.append(union_product)
                remaining.append(list(range(index + 1, m)))
                position = len(subsets) - 1
                current, product, next_indices = union, union_product, remaining[position]
                i = 0
        i += 1
    return subsets


@dataclass(frozen=True)
class RecordRisk:
    """Per-record combined disclosure risk D(r) and what drives it.

    ``risk[r]`` is D(r); ``top_known_set[r]`` indexes ``known_sets`` (row = known set) at the known set
    with the largest contribution L * alpha * C for record r (the first such set in enumeration order
    on ties), and ``top_contribution[r]`` is that contribution. ``known_sets`` has one row per kept
    known set: ``known_set`` (index), ``name`` (attributes joined by '+', empty for the empty set),
    ``attributes`` (list), ``size``, ``public_probability`` PK(KS), ``combinations`` (number of
    distinct value combinations of the set in the data, nulls as values).
    """

    risk: np.ndarray
    top_known_set: np.ndarray
    top_contribution: np.ndarray
    known_sets: pl.DataFrame
    attributes: tuple[str, ...]
    alpha: float
    epsilon: float
    missing: str
    weighted: bool = False
    parameters: dict[str, Any] = field(default_factory=dict)
    #: Records per row when each row stands for several identical records (risk computed on the
    #: distinct patterns of a data set, :mod:`sdckit.scale`), and the number of the first record of
    #: each; None: one record per row, numbered by position.
    multiplicity: np.ndarray | None = None
    first_record: np.ndarray | None = None

    @property
    def n_records(self) -> int:
        return len(self.risk) if self.multiplicity is None else int(self.multiplicity.sum())

    @property
    def _counts(self) -> np.ndarray:
        return np.ones(len(self.risk), dtype=np.int64) if self.multiplicity is None else self.multiplicity

    def top_known_set_names(self) -> pl.Series:
        """The dominant known set of every record, as attribute names joined by '+'."""
        return self.known_sets.get_column("name").gather(self.top_known_set).alias("top_known_set")

    def scores(self) -> pl.DataFrame:
        """One row per record in input order: record, risk, top_known_set, top_contribution."""
        return pl.DataFrame(
            {
                "record": np.arange(self.n_records, dtype=np.int64),
                "risk": self.risk,
                "top_known_set": self.top_known_set_names(),
                "top_contribution": self.top_contribution,
            }
        )

    def riskiest(self, count: int = 10) -> pl.DataFrame:
        """The ``count`` records with the highest risk (ties by record order). With a multiplicity,
        rows are patterns: each is listed once, by its first record, with its number of records."""
        count = min(count, len(self.risk))
        if self.first_record is not None:
            order = np.lexsort((self.first_record, -self.risk))[:count]
            return pl.DataFrame(
                {
                    "record": self.first_record[order].astype(np.int64),
                    "records": self._counts[order].astype(np.int64),
                    "risk": self.risk[order],
                    "top_known_set": self.top_known_set_names().gather(order),
                    "top_contribution": self.top_contribution[order],
                }
            )
        order = _top_records(self.risk, count)
        return pl.DataFrame(
            {
                "record": order.astype(np.int64),
                "risk": self.risk[order],
                "top_known_set": self.top_known_set_names().gather(order),
                "top_contribution": self.top_contribution[order],
            }
        )

    def above(self, threshold: float) -> int:
        """Number of records whose risk exceeds ``threshold``."""
        return int(self._counts[self.risk > threshold].sum())

    def summary(self, threshold: float | None = None) -> dict[str, Any]:
        """The figures of a report: counts, mean and quantiles of D(r), records above a threshold."""
        n = self.n_records
        if not n:
            quantiles = np.full(len(QUANTILES), np.nan)
        elif self.multiplicity is None:
            quantiles = np.quantile(self.risk, QUANTILES)
        else:
            quantiles = grouped_quantiles(self.risk, self.multiplicity, QUANTILES)
        total = float(self.risk.sum()) if self.multiplicity is None else float(self.risk @ self.multiplicity)
        result: dict[str, Any] = {
            "records": n,
            "attributes": list(self.attributes),
            "known_sets": self.known_sets.height,
            "alpha": self.alpha,
            "epsilon": self.epsilon,
            "missing": self.missing,
            "weighted": self.weighted,
            "mean_risk": total / n if n else None,
            "total_risk": total,
            "quantiles": {_quantile_label(q): float(v) for q, v in zip(QUANTILES, quantiles, strict=True)},
        }
        if threshold is not None:
            above = self.above(threshold)
            result["threshold"] = threshold
            result["above_threshold"] = above
            result["above_threshold_percent"] = 100.0 * above / n if n else 0.0
        return result


def _top_records(values: np.ndarray, count: int) -> np.ndarray:
    """The indices of the ``count`` largest values, largest first and ties in index order: what
    ``np.argsort(-values, kind="stable")[:count]`` gives, without sorting every value."""
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if 4 * count >= len(values):
        return np.argsort(-values, kind="stable")[:count]
    threshold = np.partition(values, len(values) - count)[len(values) - count]
    candidates = np.flatnonzero(values >= threshold)  # every value tied with the last one kept
    return candidates[np.argsort(-values[candidates], kind="stable")[:count]]


def _quantile_label(q: float) -> str:
    return {0.0: "min", 1.0: "max"}.get(q, f"p{round(q * 100)}")


@dataclass
class _Node:
    """State of a known set on the depth-first stack."""

    known_set: tuple[int, ...]
    # Per record, its group key on this known set, or -1 once the record is alone in its group.
    keys: np.ndarray
    # Records per group.
    sizes: np.ndarray
    # Sum of W(A) * W(r(A)) over the attributes of the known set, per record.
    known_weight: np.ndarray


def _measured_attributes(table: Table, epsilon: float, weights_column: str | None) -> list[str]:
    names = []
    for attribute in table.schema:
        if attribute.role in (Role.IDENTIFIER, Role.HOUSEHOLD) or attribute.name == weights_column:
            continue
        if attribute.public_probability > epsilon or attribute.sensitivity > 0:
            names.append(attribute.name)
    return names


def combined_risk(
    table: Table,
    *,
    alpha: float = 100.0,
    epsilon: float = 0.01,
    missing: str = "wildcard",
    weights: str | np.ndarray | None = None,
    progress: ProgressCallback | None = None,
    original: Table | None = None,
    hierarchies: dict[str, Hierarchy] | None = None,
    null_label: str | None = None,
) -> RecordRisk:
    """Combined identity + attribute disclosure risk D(r) of every record (Orooji & Knapp, 2019).

    Parameters
    ----------
    table
        The data and its schema: each attribute's public-knowledge probability PK(A), sensitivity
        W(A) and value weights W(v). Identifiers are dropped.
    alpha
        Consequence coefficient, > 1 (the paper uses 100).
    epsilon
        Pruning threshold >= 0: known sets with PK(KS) <= epsilon are not considered (0 keeps every
        set whose probability is positive).
    missing
        ``"wildcard"`` (a null matches every value, as in sdcMicro) or ``"category"`` (a null is a
        value of its own). A null always has sensitivity weight 0.
    weights
        Optional sampling weights (a column name or one number per record, finite and not negative):
        count(r(KS)) becomes the sum of the weights of the matching records, an estimate of how many
        persons of the population share r's values. A weight may be 0: such a record stands for
        nobody, so it adds nothing to any count and its own risk D(r) is 0 (with top known set the
        empty set and top contribution 0); every other record's count includes its own positive
        weight, so no count is 0.
    progress
        Called as ``progress(done, total)`` after each known set.
    original
        Measure ``table`` as a *release* of ``original`` (same records in the same order), as an
        adversary who knows the original values sees it: count(r(KS)) is the number (weight sum) of
        released records whose values *cover* r's original values on KS (:mod:`sdckit.coverage`:
        ``38-40`` covers 39, a hierarchy node its leaves, ``{a,b}`` a and b, ``*`` everything; a
        null as ``missing`` says). C_UKS(r) is read from r's released values, as without
        ``original``. A release that changes nothing gives the risk of the original.
    hierarchies
        With ``original``: the hierarchies whose nodes labels may be (default: those of the original's
        schema).
    null_label
        With ``original``: a hierarchy leaf that stands for a missing original value.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not alpha > 1:
        raise ConfigError(
            f"alpha must be a number greater than 1 (the consequence coefficient), got {alpha!r}"
        )
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float) or not epsilon >= 0:
        raise ConfigError(f"epsilon must be a number >= 0, got {epsilon!r}")
    check_missing(missing)
    alpha, epsilon = float(alpha), float(epsilon)
    n = table.n_records

    weights_column = weights if isinstance(weights, str) else None
    weights_array = _sampling_weights(table, weights)

    names = _measured_attributes(table, epsilon, weights_column)
    schema = table.schema
    candidates = [name for name in names if schema[name].public_probability > epsilon]
    covers = None
    if original is not None:
        covers = _release_covers(table, original, candidates, hierarchies, missing, null_label)
    encoding, total_consequence, per_value = _record_consequences(table, names, candidates)
    candidate_probabilities = [schema[name].public_probability for name in candidates]
    known_sets = enumerate_known_sets(candidate_probabilities, epsilon)
    found = _Patterns.of(table, candidates, encoding, total_consequence, per_value, covers, weights_array)
    n_patterns = found.patterns.n_records
    risk = np.zeros(n_patterns, dtype=np.float64)
    best = np.full(n_patterns, -np.inf, dtype=np.float64)
    top = np.zeros(n_patterns, dtype=np.int32)
    combinations = np.zeros(len(known_sets), dtype=np.int64)
    probabilities = np.ones(len(known_sets), dtype=np.float64)
    state = (risk, best, top, combinations, probabilities)
    if covers is not None:
        released_sizes = weights_array if weights_array is not None else np.ones(n, dtype=np.float64)
        _coverage_known_sets(
            covers,
            found.representative,
            released_sizes,
            known_sets,
            candidate_probabilities,
            alpha,
            found.consequence,
            found.zero,
            found.pattern_total,
            state,
            progress,
        )
    else:
        # Wildcard nulls can make records of different patterns match.
        wildcard = missing == "wildcard" and any(found.patterns.has_missing)
        _plain_known_sets(
            found.patterns,
            found.multiplicity,
            found.pattern_weights if weights_array is not None else None,
            wildcard,
            known_sets,
            candidate_probabilities,
            alpha,
            found.consequence,
            found.zero,
            found.pattern_total,
            state,
            progress,
        )
    if not found.one_record_each:
        record_pattern = found.record_pattern
        risk, top, best = risk[record_pattern], top[record_pattern], best[record_pattern]
    if weights_array is not None:
        # A record of weight 0 stands for nobody in the population: there is nobody to disclose.
        nobody = weights_array == 0
        if nobody.any():
            risk[nobody], top[nobody], best[nobody] = 0.0, 0, 0.0

    table_of_sets = _known_sets_frame(candidates, known_sets, probabilities, combinations)
    if n == 0:
        best = np.zeros(0, dtype=np.float64)
    parameters: dict[str, Any] = {"alpha": alpha, "epsilon": epsilon, "missing": missing}
    if covers is not None:
        parameters["coverage"] = True
    return RecordRisk(
        risk=risk,
        top_known_set=top,
        top_contribution=best,
        known_sets=table_of_sets,
        attributes=tuple(names),
        alpha=alpha,
        epsilon=epsilon,
        missing=missing,
        weighted=weights_array is not None,
        parameters=parameters,
    )


def _record_consequences(
    table: Table, names: list[str], candidates: list[str]
) -> tuple[Encoding, np.ndarray, dict[str, np.ndarray]]:
    """C of the full unknown set of every record: the sum of W(A) * W(r(A)) over the sensitive
    attributes (a missing value weighs 0). Returns the encoding of the candidate attributes (first,
    so that a known set's attribute indices are also encoding indices) and of the sensitive
    attributes summed per category, the consequences, and the weight per category of each of those
    sensitive attributes."""
    schema = table.schema
    n = table.n_records
    sensitive = [name for name in names if schema[name].sensitivity > 0]
    # Sensitive attributes that can be known are encoded (their weights are needed per pattern);
    # the others are summed by polars expressions where possible, in one parallel pass.
    expressions = {}
    for name in sensitive:
        if name not in candidates:
            expression = schema[name].consequence_expression(table.data.schema[name])
            if expression is not None:
                expressions[name] = expression
    encoded = candidates + [name for name in sensitive if name not in candidates and name not in expressions]
    encoding = encode(table.data, encoded)
    if expressions:
        total = table.data.select(pl.sum_horizontal(list(expressions.values())).alias("total"))
        total_consequence = np.array(total.get_column("total").to_numpy(), dtype=np.float64)
    else:
        total_consequence = np.zeros(n, dtype=np.float64)
    per_value = {}
    for name in sensitive:
        if name in expressions:
            continue
        j = encoding.index(name)
        per_value[name] = schema[name].weights_of_categories(encoding.categories[j])
        add_value_weights(
            total_consequence, encoding.codes[j], per_value[name], float(schema[name].sensitivity)
        )
    return encoding, total_consequence, per_value


@dataclass(frozen=True)
class _Patterns:
    """The distinct (candidate values, C) patterns of the records (with an original: and the original
    values), on which D(r), its top known set and contribution depend: each record's pattern, a
    record of each pattern (``representative``), the patterns' candidate codes, their records
    (``multiplicity``) and weight sums, their C, and per candidate attribute the consequence weight
    of each pattern's value (``zero``, shared, for an attribute that weighs nothing)."""

    record_pattern: np.ndarray
    representative: np.ndarray
    patterns: Encoding
    multiplicity: np.ndarray
    pattern_weights: np.ndarray
    pattern_total: np.ndarray
    consequence: dict[str, np.ndarray]
    zero: np.ndarray

    @property
    def one_record_each(self) -> bool:
        """Whether every record is a pattern of its own (pattern r is then record r)."""
        return len(self.representative) == len(self.record_pattern)

    @classmethod
    def of(
        cls,
        table: Table,
        candidates: list[str],
        encoding: Encoding,
        total_consequence: np.ndarray,
        per_value: dict[str, np.ndarray],
        covers: list[Any] | None,
        weights_array: np.ndarray | None,
    ) -> _Patterns:
        # D(r), its top known set and contribution depend only on r's values of the candidate
        # attributes and on C(r): work on the distinct (candidate values, C) patterns, with their
        # number of records (or sum of weights), and give each record its pattern's figures at the end.
        n, d, schema = table.n_records, len(candidates), table.schema
        consequence_codes, consequence_counts = dense_keys(total_consequence.view(np.int64))
        columns = [encoding.codes[j] for j in range(d)] + [consequence_codes]
        cardinalities = list(encoding.cardinalities[:d]) + [len(consequence_counts)]
        if covers is not None:
            # Records with the same released values may hold different original values: they are
            # counted apart, so the original values are part of a pattern.
            columns += [cover.target_slots for cover in covers]
            cardinalities += [cover.n_slots for cover in covers]
        record_pattern, pattern_sizes = combine_codes(columns, cardinalities, n)
        n_patterns = len(pattern_sizes)
        # Patterns are numbered by first appearance: when every record's is its own, pattern r is
        # record r, and the records' arrays are the patterns' as they are.
        one_record_each = n_patterns == n
        representative = (
            np.arange(n, dtype=np.int64) if one_record_each else np.empty(n_patterns, dtype=np.int64)
        )
        if not one_record_each:
            representative[record_pattern] = np.arange(n, dtype=np.int64)
        patterns = Encoding(
            names=tuple(candidates),
            codes=tuple(
                encoding.codes[j]
                if one_record_each
                else np.ascontiguousarray(encoding.codes[j][representative])
                for j in range(d)
            ),
            cardinalities=encoding.cardinalities[:d],
            has_missing=encoding.has_missing[:d],
            categories=encoding.categories[:d],
            n_records=n_patterns,
        )
        multiplicity = pattern_sizes
        pattern_weights = (
            np.bincount(record_pattern, weights=weights_array, minlength=n_patterns)
            if weights_array is not None
            else multiplicity.astype(np.float64)
        )
        pattern_total = total_consequence if one_record_each else total_consequence[representative]
        zero = np.zeros(n_patterns, dtype=np.float64)
        consequence = dict.fromkeys(candidates, zero)
        for j, name in enumerate(candidates):
            if name in per_value:
                weights_of_pattern = np.zeros(n_patterns, dtype=np.float64)
                add_value_weights(
                    weights_of_pattern, patterns.codes[j], per_value[name], float(schema[name].sensitivity)
                )
                consequence[name] = weights_of_pattern
        return cls(
            record_pattern,
            representative,
            patterns,
            multiplicity,
            pattern_weights,
            pattern_total,
            consequence,
            zero,
        )


def _sampling_weights(table: Table, weights: str | np.ndarray | None) -> np.ndarray | None:
    """The sampling weights of :func:`combined_risk`: a column of ``table`` (named in errors with the
    file) or one number per record, checked; None without weights."""
    n = table.n_records
    if not isinstance(weights, str):
        return check_weights(weights, n) if weights is not None else None
    if weights not in table.data.columns:
        raise ConfigError(f"weights column '{weights}' is not in the data")
    weight_values = table.column(weights).cast(pl.Float64, strict=False).to_numpy()
    where = f"{table.source}: " if table.source else ""
    return check_weights(weight_values, n, f"{where}weights column '{weights}'")


# From this many patterns, a known set's contributions are added in a second thread while the next
# set's groups are found (the kernels release the interpreter lock); below, a thread saves nothing.
PIPELINE_FROM = 50_000
# Known sets whose contributions may wait (their keys are kept until then).
PENDING = 4
# A leaf known set (one no kept set extends) whose contributions would be added while fewer than
# this many sets wait in the worker thread has its keys found there too, with its own scratch
# tables: the main thread goes on to the next set instead of leaving the worker idle.
HANDOVER_BELOW = 2


class _Contributions:
    """Adds the known sets' contributions (:func:`sdckit.frequency.add_known_contributions`) in
    the order they are given, in one worker thread when ``threaded``, and reports ``progress`` as
    each set is done. The caller does not touch the arrays it passed until :meth:`__exit__`."""

    def __init__(
        self,
        threaded: bool,
        progress: ProgressCallback | None,
        total: int,
        accumulate: Callable[..., None] = add_known_contributions,
    ) -> None:
        self._accumulate = accumulate
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sdckit-risk") if threaded else None
        self._pending: deque[Future[None]] = deque()
        self._progress = progress
        self._total = total
        self._done = 0

    def __enter__(self) -> _Contributions:
        return self

    def add(self, *arguments: Any, kernel: Callable[..., None] | None = None) -> None:
        """Add the next set's contributions: ``kernel(*arguments)``, by default
        :func:`~sdckit.frequency.add_known_contributions`."""
        accumulate = self._accumulate if kernel is None else kernel
        if self._pool is None:
            accumulate(*arguments)
            self._report()
            return
        self._pending.append(self._pool.submit(accumulate, *arguments))
        while self._pending and (len(self._pending) > PENDING or self._pending[0].done()):
            self._pending.popleft().result()
            self._report()

    def idle(self) -> bool:
        """Whether the worker thread has at most :data:`HANDOVER_BELOW` sets left before it idles
        (never without a worker)."""
        if self._pool is None:
            return False
        return sum(not future.done() for future in self._pending) < HANDOVER_BELOW

    def _report(self) -> None:
        self._done += 1
        if self._progress is not None:
            self._progress(self._done, self._total)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        try:
            while self._pending:
                future = self._pending.popleft()
                if kind is None:
                    future.result()
                    self._report()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)


class _Handover:
    """A leaf known set's keys found in the worker thread, then its contributions added there
    (:meth:`extend_and_add`): the same keys, sizes and contributions as in the main thread, with
    scratch tables of the worker's own."""

    def __init__(
        self,
        n: int,
        skip_singletons: bool,
        multiplicity: np.ndarray,
        combinations: np.ndarray,
        active: np.ndarray | None = None,
    ) -> None:
        self._n = n
        self._active = active
        self._skip_singletons = skip_singletons
        self._multiplicity = multiplicity
        self._combinations = combinations
        self._extender: Any = None

    def extend_and_add(self, extension: tuple[Any, ...], index: int, *arguments: Any) -> None:
        """Extend the parent's keys by ``extension`` (parent keys, parent sizes, codes and
        cardinality), write the set's combinations, and add its contributions
        (:func:`sdckit.frequency.add_known_contributions` with ``arguments`` and the new keys; with
        ``active``, the active patterns' keys only, the arguments being theirs too)."""
        if self._extender is None:
            self._extender = key_extender(self._n)
        keys, sizes, untracked = _extend_leaf(
            self._extender, extension, self._skip_singletons, self._multiplicity, self._active
        )
        self._combinations[index] = len(sizes) + untracked
        *contribution, alone = arguments
        add_known_contributions(*contribution, keys, 1.0 / sizes, alone)


def _extend_leaf(
    extender: Any,
    extension: tuple[Any, ...],
    skip_singletons: bool,
    multiplicity: np.ndarray,
    active: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The keys of a known set no other set extends (of the ``active`` patterns only, if given), its
    groups' sizes and its untracked patterns: the parent's keys extended by ``extension`` (parent
    keys, parent sizes, codes and cardinality)."""
    if active is not None:
        return cast(
            tuple[np.ndarray, np.ndarray, int],
            extender.extend_at(*extension, skip_singletons, multiplicity, active),
        )
    return cast(
        tuple[np.ndarray, np.ndarray, int],
        extender.extend(*extension, skip_singletons, multiplicity, any_order=skip_singletons),
    )


def _plain_known_sets(
    patterns: Encoding,
    multiplicity: np.ndarray,
    weights: np.ndarray | None,
    wildcard: bool,
    known_sets: list[tuple[int, ...]],
    probabilities: list[float],
    alpha: float,
    consequence: dict[str, np.ndarray],
    zero: np.ndarray,
    pattern_total: np.ndarray,
    state: tuple[np.ndarray, ...],
    progress: ProgressCallback | None,
) -> None:
    """The loop over known sets of :func:`combined_risk` without an original, depth first: each set's
    group keys are its parent set's extended by its last attribute, and every pattern's contribution
    PK * alpha * C_UKS / count is summed into its risk (the largest kept). ``multiplicity``: records
    per pattern; ``weights``: their summed sampling weights, or None."""
    risk, best, top, combinations, pk_of_set = state
    n_patterns = patterns.n_records
    n = int(multiplicity.sum())
    candidates = patterns.names
    pattern_weights = weights if weights is not None else multiplicity.astype(np.float64)
    # Records alone in their group stay alone in every superset, so they are no longer tracked:
    # exact unless wildcard nulls can make records match.
    skip_singletons = not wildcard
    # Inverse count of a pattern alone in its group (it is then a single record): 1 or 1/weight.
    alone = _inverse(pattern_weights)
    # Contributions are added to the patterns some contribution can change only, when they are few.
    full_state, accumulate = (risk, best, top), add_known_contributions
    active = _ActivePatterns.of(pattern_total, consequence, zero)
    if active is not None:
        risk, best, top = active.state()
        pattern_total, alone, consequence, zero = active.take(pattern_total, alone, consequence, zero)
        accumulate = active.accumulate
    extender = key_extender(n_patterns)
    # A known set's weight is its parent's plus its attribute's, written into the buffer of its depth
    # (a set at that depth is the parent of none but its descendants, which come before the next).
    known_buffers: list[np.ndarray] = []
    stack: list[_Node] = []
    # Leaves whose group inverse is 1 / size may have their keys found in the worker thread.
    parents = {known_set[:-1] for known_set in known_sets} if weights is None else set()
    handover = _Handover(
        n_patterns, skip_singletons, multiplicity, combinations, None if active is None else active.active
    )
    threaded = n_patterns >= PIPELINE_FROM
    with _Contributions(threaded, progress, len(known_sets), accumulate) as contributions:
        for index, known_set in enumerate(known_sets):
            untracked = 0
            depth = len(known_set)
            if (
                depth
                and weights is None
                and known_set not in parents
                and not (wildcard and any(patterns.has_missing[j] for j in known_set))
                and contributions.idle()
            ):
                while stack and stack[-1].known_set != known_set[:-1]:
                    stack.pop()
                parent, attribute = stack[-1], known_set[-1]
                added = consequence[candidates[attribute]]
                known_weight = parent.known_weight
                if added is not zero:
                    while len(known_buffers) < depth:
                        known_buffers.append(np.empty(len(zero), dtype=np.float64))
                    known_weight = known_buffers[depth - 1]
                pk = float(np.prod([probabilities[j] for j in known_set]))
                pk_of_set[index] = pk
                contributions.add(
                    (parent.keys, parent.sizes, patterns.codes[attribute], patterns.cardinalities[attribute]),
                    index, risk, best, top, np.int32(index), pk * alpha, pattern_total, parent.known_weight,
                    added, added is not zero, known_weight, alone, kernel=handover.extend_and_add,
                )  # fmt: skip
                continue
            kernel = None
            if not depth:
                keys, sizes = initial_keys(n_patterns)
                sizes = np.array([n] if n else [], dtype=np.int64)
                node = _Node((), keys, sizes, zero)
                parent_known, added = zero, zero
                pk = 1.0
            else:
                while stack and stack[-1].known_set != known_set[:-1]:
                    stack.pop()
                parent = stack[-1]
                attribute = known_set[-1]
                extension = (
                    parent.keys,
                    parent.sizes,
                    patterns.codes[attribute],
                    patterns.cardinalities[attribute],
                )
                # Only the groups and their sizes matter here (any order); a leaf's contributions need
                # the keys of the active patterns only, when its counts are its groups' sizes.
                leaf = (
                    active.active
                    if active is not None
                    and weights is None
                    and known_set not in parents
                    and not (wildcard and any(patterns.has_missing[j] for j in known_set))
                    else None
                )
                keys, sizes, untracked = _extend_leaf(
                    extender, extension, skip_singletons, multiplicity, leaf
                )
                kernel = None if leaf is None else add_known_contributions
                parent_known, added = parent.known_weight, consequence[candidates[attribute]]
                known_weight = parent_known
                if added is not zero:
                    while len(known_buffers) < depth:
                        known_buffers.append(np.empty(len(zero), dtype=np.float64))
                    known_weight = known_buffers[depth - 1]
                node = _Node(known_set, keys, sizes, known_weight)
                pk = float(np.prod([probabilities[j] for j in known_set]))

            if wildcard and any(patterns.has_missing[j] for j in known_set):
                counts = wildcard_group_sizes(patterns, known_set, keys, len(sizes), pattern_weights)
                group_inverse = _inverse(counts)
            elif weights is not None:
                group_inverse = _inverse(weighted_group_sizes(keys, pattern_weights, len(sizes)))
            else:
                group_inverse = 1.0 / sizes
            pk_of_set[index] = pk
            combinations[index] = len(sizes) + untracked
            # contribution = PK * alpha * C_UKS / count, summed into D(r); the largest one is kept; the
            # set's weight (the parent's + its attribute's) is computed in the same pass.
            contributions.add(
                risk, best, top, np.int32(index), pk * alpha, pattern_total, parent_known, added,
                added is not zero, node.known_weight, keys, group_inverse, alone, kernel=kernel,
            )  # fmt: skip
            stack.append(node)
    if active is not None:
        active.scatter(full_state, (risk, best, top))


def _known_sets_frame(
    candidates: Sequence[str],
    known_sets: list[tuple[int, ...]],
    probabilities: np.ndarray,
    combinations: np.ndarray,
) -> pl.DataFrame:
    """``RecordRisk.known_sets``: one row per known set (its attributes, size, PK and number of
    value combinations)."""
    return pl.DataFrame(
        {
            "known_set": np.arange(len(known_sets), dtype=np.int64),
            "name": ["+".join(candidates[j] for j in ks) for ks in known_sets],
            "attributes": [[candidates[j] for j in ks] for ks in known_sets],
            "size": [len(ks) for ks in known_sets],
            "public_probability": probabilities,
            "combinations": combinations,
        },
        schema={
            "known_set": pl.Int64,
            "name": pl.String,
            "attributes": pl.List(pl.String),
            "size": pl.Int64,
            "public_probability": pl.Float64,
            "combinations": pl.Int64,
        },
    )


def _release_covers(
    release: Table,
    original: Table,
    candidates: Sequence[str],
    hierarchies: dict[str, Hierarchy] | None,
    missing: str,
    null_label: str | None,
) -> list[AttributeCover]:
    """The covers of the attributes that can be known, read from a release of ``original``."""
    if original.n_records != release.n_records:
        where = f"{release.source}: " if release.source else ""
        raise InputError(
            f"{where}the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "coverage needs the original's records, in the same order"
        )
    if hierarchies is None:
        hierarchies = schema_hierarchies(original)
    return attribute_covers(
        original.data,
        release.data,
        candidates,
        hierarchies=hierarchies,
        missing=missing,
        null_label=null_label,
        where=f"{release.source}: " if release.source else "",
    )


def schema_hierarchies(table: Table) -> dict[str, Hierarchy]:
    """The hierarchies of a table's schema (configured ones, read with the data)."""
    return {
        attribute.name: attribute.hierarchy
        for attribute in table.schema
        if isinstance(attribute.hierarchy, Hierarchy)
    }


# The measure: parameters, run, figures, registration ------------------------------------------


class CombinedParams(MethodParams):
    """Defaults of alpha, epsilon and missing come from the configuration's ``risk:`` section."""

    threshold: Finite = Field(
        0.01,
        ge=0,
        description="Risk threshold DELTA: records above it are counted.",
        json_schema_extra={"aliases": ["-t"]},
    )
    alpha: Finite | None = Field(None, gt=1, description="Override the config's consequence coefficient.")
    epsilon: Finite | None = Field(None, ge=0, description="Override the config's pruning threshold.")
    missing: Literal["wildcard", "category"] | None = Field(
        None, description="Override the config's treatment of nulls."
    )
    top: Whole = Field(10, ge=0, description="How many of the riskiest records to list.")


def _combined_risk(result: RecordRisk, path: Path, title: str) -> None:
    from sdckit.evaluate.plots import risk_histogram

    threshold = result.parameters["threshold"]
    risk_histogram(result.risk, path, threshold=threshold, title=f"Record disclosure risk — {title}")


@register_measure(
    "combined",
    "risk",
    CombinedParams,
    summary=lambda result: combined_figures(result),
    help="Combined identity + attribute disclosure risk D(r) of every record (Orooji & Knapp, 2019).",
    report=lambda figures: combined_report(figures),
    records=lambda result: result.scores(),
    progress_label="known sets",
    outputs=(
        ExtraOutput(
            "--histogram", "Histogram of D(r), .png/.pdf/.svg.", (".png", ".pdf", ".svg"), _combined_risk
        ),
    ),
    headline="mean_risk",
    original=True,
)
def run(table: Table, params: CombinedParams, context: Context) -> RecordRisk:
    chosen = chosen_parameters(params, context.config)
    weights = context.config.data.weights if context.config is not None else None
    result = combined_risk(
        table, weights=weights, progress=context.progress, original=context.original, **chosen
    )
    return replace(result, parameters={**result.parameters, "threshold": params.threshold, "top": params.top})


def chosen_parameters(params: CombinedParams, config: Any) -> dict[str, Any]:
    """alpha, epsilon and missing: as given, else as the configuration's risk settings say."""
    settings = config.risk if config is not None else None
    return {
        name: getattr(params, name) if getattr(params, name) is not None else getattr(settings, name, default)
        for name, default in (("alpha", 100.0), ("epsilon", 0.01), ("missing", "wildcard"))
    }


def combined_figures(result: RecordRisk) -> dict[str, Any]:
    figures = result.summary(result.parameters.get("threshold"))
    figures["riskiest"] = result.riskiest(result.parameters.get("top", 10)).to_dicts()
    figures["known_set_list"] = result.known_sets.drop("attributes").to_dicts()
    return figures


def combined_report(figures: dict[str, Any]) -> list[Any]:
    from rich.table import Table as RichTable
    from rich.text import Text

    weighted = ", sampling weights" if figures["weighted"] else ""
    lines: list[Any] = [
        f"{len(figures['attributes'])} attributes measured, {figures['known_sets']:,} known sets kept "
        f"(epsilon {figures['epsilon']:g}), alpha {figures['alpha']:g}, missing values as "
        f"{figures['missing']}{weighted}"
    ]
    quantiles = RichTable(title="Disclosure risk D(r)", title_justify="left")
    for label in ("mean", *figures["quantiles"]):
        quantiles.add_column(label, justify="right")
    values = [figures["mean_risk"], *figures["quantiles"].values()]
    quantiles.add_row(*(f"{v:.4g}" if v is not None else "-" for v in values))
    lines.append(quantiles)
    lines.append(
        f"records above {figures['threshold']:g}: [bold]{figures['above_threshold']:,}[/] "
        f"({figures['above_threshold_percent']:.2f}%)"
    )
    if figures["riskiest"]:
        table = RichTable(title=f"The {len(figures['riskiest'])} riskiest records", title_justify="left")
        # The identifier's value, when the configuration has one (sdckit.risk.identifiers).
        identifier = figures.get("identifier")
        table.add_column("record", justify="right")
        if identifier:
            table.add_column(identifier)
        table.add_column("risk", justify="right")
        table.add_column("dominant known set", justify="left")
        table.add_column("its contribution", justify="right")
        for row in figures["riskiest"]:
            named = [Text(row["identifier"] or "")] if identifier else []  # as text, not markup
            table.add_row(
                str(row["record"]),
                *named,
                f"{row['risk']:.4g}",
                row["top_known_set"] or "(empty set)",
                f"{row['top_contribution']:.4g}",
            )
        lines.append(table)
    return lines
