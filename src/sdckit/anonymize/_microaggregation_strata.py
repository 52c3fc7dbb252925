"""Microaggregation inside strata (sdcMicro's ``strata_variables`` / ``strataVar``).

The records are split by the combinations of the strata attributes' values (a missing value a stratum
value of its own, as sdcMicro's ``paste`` makes "NA" one) and the grouping runs on each stratum's
records alone, with the stratum's own standardization (sdcMicro calls its method once per stratum,
so ``Mdav.cpp`` computes the variances inside the stratum). Groups never straddle two strata; they
are numbered stratum after stratum (strata in order of first appearance).

A stratum with fewer than k records is refused, naming it and its size. sdcMicro does not refuse it:
its ``mdav`` averages the whole stratum into one group smaller than k (``Mdav.cpp`` skips its loop
when fewer than 2k records are left and averages the rest), and its other methods stop with an R
error ("Too less observations", or a failed index for ``rmd``); a group smaller than k would break
the k the user asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sdckit.errors import ConfigError
from sdckit.frequency import encode, first_of_groups, group_keys
from sdckit.params import spell
from sdckit.table import Role, Table

#: A grouping of one stratum's records: its rows (ascending) -> group labels 0..G-1 of those rows.
Grouping = Callable[[np.ndarray], np.ndarray]


def stratum_keys(table: Table, strata: list[str] | None, names: list[str], method: str) -> np.ndarray:
    """Each record's stratum, dense in order of first appearance (all 0 without ``strata``)."""
    if not strata:
        return np.zeros(table.n_records, dtype=np.int64)
    for name in strata:
        if name not in table.data.columns:
            raise ConfigError(
                f"{spell('strata')}: '{name}' is not a column of the data (columns: "
                f"{', '.join(table.data.columns)})"
            )
        if name in names:
            raise ConfigError(
                f"{spell('strata')}: '{name}' is microaggregated by {method}; stratify by an attribute "
                "that is not"
            )
        if name in table.schema and table.schema[name].role is Role.IDENTIFIER:
            raise ConfigError(f"{spell('strata')}: '{name}' is an identifier (dropped from every release)")
    if len(set(strata)) != len(strata):
        raise ConfigError(f"{spell('strata')}: an attribute is named twice in {', '.join(strata)}")
    keys, _ = group_keys(encode(table.data, strata), list(range(len(strata))))
    return _first_appearance(keys.astype(np.int64))


def _first_appearance(keys: np.ndarray) -> np.ndarray:
    """Renumber dense keys in order of their first record."""
    first = np.full(int(keys.max()) + 1, len(keys), dtype=np.int64)
    np.minimum.at(first, keys, np.arange(len(keys), dtype=np.int64))
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[keys]


def stratum_rows(keys: np.ndarray) -> list[np.ndarray]:
    """The rows of every stratum (ascending row order), strata in key order."""
    order = np.argsort(keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order])) + 1
    return np.split(order, bounds)


def check_strata_sizes(table: Table, strata: list[str] | None, keys: np.ndarray, k: int, method: str) -> None:
    """Refuse a stratum of fewer than ``k`` records, naming its values (the first such stratum) and
    how many strata are that small."""
    if not strata:
        return
    sizes = np.bincount(keys)
    small = np.flatnonzero(sizes < k)
    if not len(small):
        return
    row = int(first_of_groups(keys, len(sizes))[small[0]])
    values = ", ".join(f"{name}={table.data.get_column(name)[row]!r}" for name in strata)
    others = f" ({len(small):,} strata of {len(sizes):,} are)" if len(small) > 1 else ""
    raise ConfigError(
        f"{method}: the stratum {values} has {int(sizes[small[0]]):,} records, fewer than {spell('k')} = {k}"
        f"{others}; merge strata or lower {spell('k')} (sdcMicro would release it as one group of fewer "
        "than k records)"
    )


def stratified(
    keys: np.ndarray, grouping: Grouping, progress: Callable[[int, int], Any] | None = None
) -> tuple[np.ndarray, int]:
    """Group labels of every record from ``grouping`` run on each stratum's rows alone, numbered
    stratum after stratum; and the number of strata. ``progress(done, strata)`` after each."""
    n = len(keys)
    labels = np.empty(n, dtype=np.int64)
    offset = 0
    parts = stratum_rows(keys) if n else []
    for number, rows in enumerate(parts):
        local = grouping(rows)
        labels[rows] = local + offset
        offset += int(local.max()) + 1
        if progress is not None:
            progress(number + 1, len(parts))
    return labels, len(parts)
