"""Check a table, as it is, against privacy models: the computation behind ``sdckit check``.

The equivalence classes are the distinct combinations of the quasi-identifier values as they appear
in the table (a null is a value of its own). A record whose quasi-identifiers are all ``'*'`` counts
as suppressed: it belongs to no class, but still counts in the whole-table distribution of each
sensitive attribute that t-closeness compares with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.frequency import check_weights, group_records
from sdckit.models.base import ClassStatistics, ModelResult, PrivacyModel, evaluate_all
from sdckit.table import Table

SUPPRESSED = "*"


@dataclass(frozen=True)
class CheckReport:
    """The verdict of some privacy models on every equivalence class of a table.

    ``class_table`` has one row per class (in order of first appearance): the quasi-identifier values,
    ``size``, then for every model ``"<model> achieved"`` and ``"<model> passes"``, and ``passes all``.
    Sizes are sums of weights when weights were given.
    """

    n_records: int
    n_classes: int
    n_suppressed: int
    results: list[ModelResult]
    passes_all: np.ndarray
    class_table: pl.DataFrame

    def violating(self) -> pl.DataFrame:
        """The rows of ``class_table`` of the classes that fail at least one model."""
        return self.class_table.filter(~pl.col("passes all"))

    def summary(self) -> dict[str, Any]:
        """The figures of the check, as plain JSON-ready values (nan -> None)."""
        sizes = self.class_table.get_column("size").to_numpy() if self.n_classes else np.zeros(0)
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


def _suppressed_records(data: pl.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    textual = (pl.String, pl.Categorical, pl.Enum)
    if not quasi_identifiers or any(data.schema[name] not in textual for name in quasi_identifiers):
        return np.zeros(data.height, dtype=bool)
    condition = pl.all_horizontal(
        (pl.col(name).cast(pl.String) == SUPPRESSED).fill_null(False) for name in quasi_identifiers
    )
    return data.select(condition.alias("suppressed")).get_column("suppressed").to_numpy()


def check_table(
    table: Table,
    quasi_identifiers: Sequence[str],
    models: Sequence[PrivacyModel],
    weights: np.ndarray | None = None,
) -> CheckReport:
    """Evaluate ``models`` on the equivalence classes of ``table`` over ``quasi_identifiers``.

    ``weights`` (one non-negative number per record) turn class sizes and value counts into sums of
    weights; by default records are counted (the table's sampling weights are not used unless passed).
    """
    data = table.data
    quasi_identifiers = list(dict.fromkeys(quasi_identifiers))
    unknown = [name for name in quasi_identifiers if name not in data.columns]
    if unknown:
        raise ConfigError(
            f"quasi-identifier '{unknown[0]}' is not a column of the data "
            f"(columns: {', '.join(data.columns)})"
        )
    weights = check_weights(weights, data.height)
    keys, n_keys = group_records(data, quasi_identifiers)
    keys = keys.astype(np.int64)
    suppressed = _suppressed_records(data, quasi_identifiers)
    if suppressed.any():
        used = np.zeros(n_keys, dtype=bool)
        used[keys[~suppressed]] = True
        renumber = np.cumsum(used) - 1
        keys = np.where(suppressed, -1, renumber[keys])
        n_keys = int(used.sum())
    sensitive = [model.sensitive_attribute for model in models if model.sensitive_attribute is not None]
    statistics = ClassStatistics.from_records(keys, n_keys, data, sensitive, weights)
    passes_all, results = evaluate_all(models, statistics)

    kept = np.flatnonzero(keys >= 0)
    _, first = np.unique(keys[kept], return_index=True)
    representatives = kept[first]
    columns: list[pl.Series] = [data.get_column(name).gather(representatives) for name in quasi_identifiers]
    sizes = statistics.sizes
    columns.append(pl.Series("size", sizes if weights is not None else sizes.astype(np.int64)))
    for result in results:
        columns.append(pl.Series(f"{result.model} achieved", result.achieved))
        columns.append(pl.Series(f"{result.model} passes", result.passes))
    columns.append(pl.Series("passes all", passes_all))
    return CheckReport(
        n_records=data.height,
        n_classes=n_keys,
        n_suppressed=int(suppressed.sum()),
        results=results,
        passes_all=passes_all,
        class_table=pl.DataFrame(columns),
    )
