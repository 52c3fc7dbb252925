"""What every privacy model reads and returns.

A privacy model judges *equivalence classes* (the groups of records that share their
quasi-identifier values). All it needs of a class is its size and, for each sensitive attribute,
how many records of the class hold each sensitive value. :class:`ClassStatistics` holds exactly
that for every class of a table at once, the sensitive part as sparse ``(class, value, count)``
triples sorted by class (:class:`SensitiveCounts`), so a model is evaluated for all classes in a
few linear passes over the triples, never in a Python loop over classes. A model answers with a
:class:`ModelResult`: per class, whether it passes and the value it achieves (k, l or t), so that a
search can tell how far a class is from passing and a report can show the worst class.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import check_weights, encode_column
from sdckit.models import _kernels

#: Tolerance of every threshold comparison (SPEC §0): ``achieved >= threshold - TOLERANCE`` for k and l,
#: ``achieved <= threshold + TOLERANCE`` for t.
TOLERANCE = 1e-12

# Above this many (class, value) cells the triples are found by sorting instead of a dense bincount.
_DENSE_CELLS = 1 << 21


@dataclass(frozen=True)
class SensitiveCounts:
    """Per equivalence class, the counts of one sensitive attribute's values, as sparse triples.

    ``classes[i]``, ``values[i]``, ``counts[i]``: class ``classes[i]`` holds ``counts[i]`` records (or
    that sum of weights) with value code ``values[i]``. The triples are sorted by class (and by value
    within a class), each ``(class, value)`` pair occurs once and every count is positive. Value codes
    follow the sorted order of the distinct values (as :func:`sdckit.frequency.encode`); a missing value
    is a value of its own, coded last, and shown as a null in ``categories``. ``overall`` is Q, the
    distribution of the values over the whole table (t-closeness compares every class with it).
    """

    attribute: str
    classes: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    n_values: int
    overall: np.ndarray
    categories: pl.Series
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # One dtype per array, so that the compiled kernels are specialized once.
        object.__setattr__(self, "classes", np.ascontiguousarray(self.classes, dtype=np.int64))
        object.__setattr__(self, "values", np.ascontiguousarray(self.values, dtype=np.int32))
        object.__setattr__(self, "counts", np.ascontiguousarray(self.counts, dtype=np.float64))
        object.__setattr__(self, "overall", np.ascontiguousarray(self.overall, dtype=np.float64))
        if not (len(self.classes) == len(self.values) == len(self.counts)):
            raise ValueError("classes, values and counts must have the same length")
        if self.overall.shape != (self.n_values,):
            raise ValueError(f"overall must hold one share per value ({self.n_values})")

    def segments(self, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
        """Where each class's triples start (``n_classes + 1`` offsets) and each class's total count.

        Computed once and shared by every model that reads these counts.
        """
        key = ("segments", n_classes)
        if key not in self._cache:
            starts, totals = _kernels.segments(self.classes, self.counts, n_classes)
            if starts[-1] != len(self.classes):  # the scan stopped at a class out of order or range
                raise ValueError(
                    f"the classes of the counts of '{self.attribute}' must be sorted and lie in "
                    f"0 .. {n_classes - 1}"
                )
            self._cache[key] = starts, totals
        return self._cache[key]

    def log_counts(self) -> np.ndarray:
        """The natural logarithm of every count (computed once)."""
        if "log" not in self._cache:
            self._cache["log"] = np.log(self.counts)
        return self._cache["log"]

    @classmethod
    def from_codes(
        cls,
        attribute: str,
        class_keys: np.ndarray,
        n_classes: int,
        codes: np.ndarray,
        n_values: int,
        categories: pl.Series,
        weights: np.ndarray | None = None,
    ) -> SensitiveCounts:
        """Triples from per-record class keys and value codes (``0 .. n_values-1``).

        Records whose class key is ``-1`` (suppressed) are left out of the triples but counted in
        ``overall``, which is the distribution over every record given.
        """
        codes = np.asarray(codes)
        class_keys = np.asarray(class_keys)
        if codes.size and (codes.min() < 0 or codes.max() >= n_values):
            raise ValueError(f"value codes of '{attribute}' must lie in 0 .. {n_values - 1}")
        overall = np.bincount(codes, weights=weights, minlength=n_values).astype(np.float64)
        total = overall.sum()
        if total > 0:
            overall /= total
        kept = class_keys >= 0
        every = bool(kept.all())
        keys = class_keys if every else class_keys[kept]
        keys = keys.astype(np.int64, copy=False) * n_values + (codes if every else codes[kept])
        kept_weights = None if weights is None else (weights if every else weights[kept])
        cells = n_classes * n_values
        if cells <= max(_DENSE_CELLS, 4 * len(keys)):
            dense = np.bincount(keys, weights=kept_weights, minlength=cells)
            cell = np.flatnonzero(dense)
            counts = dense[cell].astype(np.float64)
        else:
            cell, inverse = np.unique(keys, return_inverse=True)
            counts = np.bincount(inverse, weights=kept_weights, minlength=len(cell)).astype(np.float64)
            positive = counts > 0
            if not positive.all():
                cell, counts = cell[positive], counts[positive]
        return cls(
            attribute=attribute,
            classes=(cell // n_values).astype(np.int64),
            values=(cell % n_values).astype(np.int32),
            counts=counts,
            n_values=n_values,
            overall=overall,
            categories=categories,
        )

    @classmethod
    def from_column(
        cls,
        column: pl.Series,
        class_keys: np.ndarray,
        n_classes: int,
        weights: np.ndarray | None = None,
    ) -> SensitiveCounts:
        """Triples of a sensitive column (its name is the attribute); nulls are a value of their own."""
        codes, n_values, has_missing, categories = encode_column(column)
        if has_missing:
            codes = np.where(codes < 0, n_values, codes).astype(np.int32)
            n_values += 1
            categories = pl.concat([categories, pl.Series([None], dtype=categories.dtype)])
        return cls.from_codes(
            column.name, class_keys, n_classes, codes, n_values, categories.alias(column.name), weights
        )

    def subset(self, keep: np.ndarray, renumber: np.ndarray) -> SensitiveCounts:
        """The triples of the classes where ``keep``, with classes renumbered by ``renumber``."""
        mask = keep[self.classes]
        return SensitiveCounts(
            attribute=self.attribute,
            classes=renumber[self.classes[mask]],
            values=self.values[mask],
            counts=self.counts[mask],
            n_values=self.n_values,
            overall=self.overall,
            categories=self.categories,
        )

    def merged(self) -> SensitiveCounts:
        """All classes merged into one (class 0)."""
        counts = np.bincount(self.values, weights=self.counts, minlength=self.n_values)
        values = np.flatnonzero(counts > 0)
        return SensitiveCounts(
            attribute=self.attribute,
            classes=np.zeros(len(values), dtype=np.int64),
            values=values.astype(np.int32),
            counts=counts[values].astype(np.float64),
            n_values=self.n_values,
            overall=self.overall,
            categories=self.categories,
        )


@dataclass(frozen=True)
class ClassStatistics:
    """What the privacy models see of a table partitioned into equivalence classes.

    ``sizes[c]`` is the number of records of class ``c`` (or their sum of sampling weights);
    ``sensitive`` maps each sensitive attribute to its :class:`SensitiveCounts`.
    """

    sizes: np.ndarray
    sensitive: Mapping[str, SensitiveCounts] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitive", MappingProxyType(dict(self.sensitive)))

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @classmethod
    def from_records(
        cls,
        class_keys: np.ndarray,
        n_classes: int,
        frame: pl.DataFrame,
        sensitive: Sequence[str],
        weights: np.ndarray | None = None,
    ) -> ClassStatistics:
        """Statistics from the class key of every record (dense ``0 .. n_classes-1``).

        Records with key ``-1`` (suppressed) belong to no class; they still count in each sensitive
        attribute's ``overall`` distribution, which is taken over every record of ``frame``, as ARX does.
        ``weights`` (sampling weights, one per record) replace counts by sums of weights.
        """
        class_keys = np.asarray(class_keys)
        if class_keys.shape != (frame.height,):
            raise ValueError(
                f"class_keys must hold one key per record ({frame.height}), got shape {class_keys.shape}"
            )
        if class_keys.size and (class_keys.min() < -1 or class_keys.max() >= n_classes):
            raise ValueError(f"class keys must lie in -1 .. {n_classes - 1}")
        weights = check_weights(weights, frame.height)
        kept = class_keys >= 0
        sizes = np.bincount(
            class_keys[kept], weights=None if weights is None else weights[kept], minlength=n_classes
        ).astype(np.float64)
        missing = [name for name in sensitive if name not in frame.columns]
        if missing:
            raise ConfigError(
                f"sensitive attribute '{missing[0]}' is not a column of the data "
                f"(columns: {', '.join(frame.columns)})"
            )
        counts = {
            name: SensitiveCounts.from_column(frame.get_column(name), class_keys, n_classes, weights)
            for name in dict.fromkeys(sensitive)
        }
        return cls(sizes=sizes, sensitive=counts)

    def counts_of(self, attribute: str) -> SensitiveCounts:
        """The sensitive counts of ``attribute``; ConfigError if these statistics lack them."""
        try:
            return self.sensitive[attribute]
        except KeyError:
            held = ", ".join(self.sensitive) or "none"
            raise ConfigError(
                f"no counts of sensitive attribute '{attribute}' in the class statistics (held: {held})"
            ) from None

    def subset(self, keep: np.ndarray) -> ClassStatistics:
        """Only the classes where ``keep[class]``, renumbered in order; ``overall`` is unchanged."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != self.sizes.shape:
            raise ValueError(f"keep must hold one flag per class ({self.n_classes}), got shape {keep.shape}")
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        return ClassStatistics(
            sizes=self.sizes[keep],
            sensitive={name: counts.subset(keep, renumber) for name, counts in self.sensitive.items()},
        )

    def merged(self) -> ClassStatistics:
        """One class holding the records of every class (for feasibility checks)."""
        return ClassStatistics(
            sizes=np.array([self.sizes.sum()], dtype=np.float64),
            sensitive={name: counts.merged() for name, counts in self.sensitive.items()},
        )


@dataclass(frozen=True)
class ModelResult:
    """A privacy model's verdict on every equivalence class.

    ``passes[c]``: class ``c`` satisfies the model. ``achieved[c]``: the value the class reaches
    (k-anonymity: its size; distinct l-diversity: its number of distinct sensitive values; entropy
    l-diversity: exp(entropy); recursive (c,l)-diversity: the largest l' it satisfies for the model's c;
    t-closeness: the earth mover's distance to the whole table). ``higher_is_better`` is True for k and
    l, False for t.
    """

    model: str
    passes: np.ndarray
    achieved: np.ndarray
    higher_is_better: bool

    def worst(self, mask: np.ndarray | None = None) -> float:
        """The worst achieved value (min for k and l, max for t) over the classes in ``mask``; nan if none."""
        values = self.achieved if mask is None else self.achieved[np.asarray(mask, dtype=bool)]
        if values.size == 0:
            return math.nan
        return float(values.min() if self.higher_is_better else values.max())

    @property
    def n_violating(self) -> int:
        return int(np.count_nonzero(~self.passes))

    @property
    def holds(self) -> bool:
        """The verdict on the whole table: every class satisfies the model (true of no class at all)."""
        return bool(self.passes.all())

    def condensed(self) -> ModelResult:
        """The same verdict (:attr:`holds`) and worst value (:meth:`worst`) on at most two classes: the
        worst class and, when another class fails, the first failing one. What a part of a table
        evaluated apart (a fragment of a run over partitions) sends back, instead of one entry per
        class, to be joined with the other parts' by :meth:`of_parts`."""
        if self.passes.size == 0:
            return self
        worst = int(np.argmin(self.achieved) if self.higher_is_better else np.argmax(self.achieved))
        failing = np.flatnonzero(~self.passes)
        kept = sorted({worst, int(failing[0])}) if failing.size else [worst]
        return replace(self, passes=self.passes[kept], achieved=self.achieved[kept])

    @classmethod
    def of_parts(cls, parts: Sequence[ModelResult]) -> ModelResult:
        """One model's verdict on a table whose classes are split among disjoint parts (no class spans
        two parts), from the parts' results (whole or :meth:`condensed`): their classes side by side."""
        if not parts:
            raise ValueError("ModelResult.of_parts needs the result of at least one part")
        models = {part.model for part in parts}
        if len(models) > 1:
            raise ValueError(f"ModelResult.of_parts joins the results of one model, got {sorted(models)}")
        return cls(
            model=parts[0].model,
            passes=np.concatenate([part.passes for part in parts]),
            achieved=np.concatenate([part.achieved for part in parts]),
            higher_is_better=parts[0].higher_is_better,
        )


class PrivacyModel(ABC):
    """A privacy model evaluated over all equivalence classes at once.

    ``name`` describes the model and its parameters; ``sensitive_attribute`` is the attribute it
    protects (None for k-anonymity); ``monotonic`` is True when the union of two passing classes always
    passes, which lets a generalization search prune the lattice. ``monotonic_with_suppression`` is
    True when the union of a passing class with *any* class passes: then, with a suppression limit,
    a generalization of a node satisfying the model within the limit satisfies it within the limit
    too (its suppressed records are among the node's), as ARX's ``isMonotonicWithSuppression``. It
    holds for k-anonymity and distinct l-diversity, as in ARX, and fails for entropy and recursive
    l-diversity and t-closeness (counter-examples in tests/test_recoding.py).
    """

    name: str
    sensitive_attribute: str | None = None
    monotonic: bool = True
    monotonic_with_suppression: bool = False

    @abstractmethod
    def evaluate(self, statistics: ClassStatistics) -> ModelResult:
        """Whether each class passes, and what it achieves."""

    @abstractmethod
    def check_feasible(self, statistics_of_whole_table: ClassStatistics) -> None:
        """Raise ConfigError if no partition of the table can satisfy the model.

        ``statistics_of_whole_table`` should hold one class with every record; statistics with several
        classes are merged into one first.
        """

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def whole_table(statistics: ClassStatistics) -> ClassStatistics:
    return statistics if statistics.n_classes == 1 else statistics.merged()


def evaluate_all(
    models: Sequence[PrivacyModel], statistics: ClassStatistics, budget: float = math.inf
) -> tuple[np.ndarray, list[ModelResult]]:
    """Evaluate every model; returns the per-class mask of classes passing all of them, and the results.

    Table-level models (``table_level``, :mod:`sdckit.models.risk_based`) come after the class-level
    ones, in their order, each told which classes the models before it fail (``enforce``) and the
    records a search may suppress (``budget``: past it, the node fails however many are suppressed)."""
    results: list[ModelResult | None] = [None] * len(models)
    passes = np.ones(statistics.n_classes, dtype=bool)
    for index, model in enumerate(models):
        if not getattr(model, "table_level", False):
            results[index] = result = model.evaluate(statistics)
            passes &= result.passes
    for index, model in enumerate(models):
        if getattr(model, "table_level", False):
            results[index] = result = model.enforce(statistics, passes.copy(), budget)  # type: ignore[attr-defined]
            passes &= result.passes
    return passes, [result for result in results if result is not None]


# Parameters: the rules of k, l, c and t are sdckit.params' (Argument), shared with the parameters objects


def number_text(value: float) -> str:
    """A parameter as it appears in a model name: 5, 0.2, 2.5."""
    return f"{value:g}"


def attribute_parameter(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"attribute must name a sensitive attribute, got {value!r}")
    return value
