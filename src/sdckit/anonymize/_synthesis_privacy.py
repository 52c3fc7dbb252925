"""How close synthetic records come to the records the synthesizer was trained on (issue 36).

Records are compared on the released attributes, encoded as the synthesizer encodes them: a
categorical attribute as its category code (-1 missing), a numeric one as its value (NaN missing).

**Distance** (Gower 1971, unweighted): the mean over the ``p`` attributes of a per-attribute
dissimilarity in [0, 1] — for a categorical attribute 0 when the codes agree (two missing values
agree) and 1 otherwise; for a numeric one ``|a − b| / range`` with ``range`` = max − min of the
training values (1 when they are constant), capped at 1, 0 when both are missing and 1 when one is.
Distance 0 is an **exact copy**.

**DCR** (distance to the closest record) of a record: its smallest distance to a training record.
The training records are deduplicated first (a copy of a record is at the same distance); the
search is an exhaustive scan in a compiled kernel that stops a record's scan as soon as it reaches
a distance it is asked to stop at (0 for a DCR: nothing is closer than an exact copy), and skips a
training record as soon as its partial sum exceeds the best distance found.

**Exact copies** are found for every record at once by hashing (``numpy.unique`` of the rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sdckit._numba import njit

#: The quantiles of the DCR the summary reports.
DCR_QUANTILES = (0.01, 0.05, 0.1, 0.25, 0.5)


@njit(cache=True, nogil=True)
def _nearest(
    query_codes: np.ndarray,
    query_values: np.ndarray,
    ref_codes: np.ndarray,
    ref_values: np.ndarray,
    ranges: np.ndarray,
    stop: float,
) -> np.ndarray:
    """For every query row, the smallest summed dissimilarity to a reference row (not yet divided
    by the number of attributes); a row's scan ends once it is at most ``stop``."""
    rows, refs = query_codes.shape[0], ref_codes.shape[0]
    cats, nums = query_codes.shape[1], query_values.shape[1]
    out = np.empty(rows)
    for i in range(rows):
        best = np.inf
        for j in range(refs):
            total = 0.0
            for k in range(cats):
                if query_codes[i, k] != ref_codes[j, k]:
                    total += 1.0
                    if total >= best:
                        break
            if total >= best:
                continue
            for k in range(nums):
                a, b = query_values[i, k], ref_values[j, k]
                if np.isnan(a) or np.isnan(b):
                    if not (np.isnan(a) and np.isnan(b)):
                        total += 1.0
                else:
                    total += min(abs(a - b) / ranges[k], 1.0)
                if total >= best:
                    break
            if total < best:
                best = total
                if best <= stop:
                    break
        out[i] = best
    return out


class Reference:
    """The training records to measure against: categorical codes ``(n, c)`` and numeric values
    ``(n, v)``; deduplicated for the scan."""

    def __init__(self, codes: np.ndarray, values: np.ndarray) -> None:
        self.attributes = codes.shape[1] + values.shape[1]
        ranges = np.ones(values.shape[1])
        for k in range(values.shape[1]):  # per numeric attribute
            column = values[:, k][~np.isnan(values[:, k])]
            if column.size and column.max() > column.min():
                ranges[k] = column.max() - column.min()
        self.ranges = ranges.astype(np.float64)
        keys = _keys(codes, values)
        _, first = np.unique(keys, axis=0, return_index=True)
        self.codes = np.ascontiguousarray(codes[first], dtype=np.int64)
        self.values = np.ascontiguousarray(values[first], dtype=np.float64)
        self.keys = keys[first]

    def copies(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Whether each record equals a reference record on every attribute."""
        if len(codes) == 0:
            return np.zeros(0, dtype=bool)
        keys = _keys(codes, values)
        _, inverse = np.unique(np.vstack([self.keys, keys]), axis=0, return_inverse=True)
        inverse = inverse.ravel()
        known = np.zeros(int(inverse.max()) + 1, dtype=bool)
        known[inverse[: len(self.keys)]] = True
        return known[inverse[len(self.keys) :]]

    def dcr(self, codes: np.ndarray, values: np.ndarray, stop: float = 0.0) -> np.ndarray:
        """The distance of each record to its closest reference record (see the module docstring);
        ``stop``: a distance at or below which a record's scan may end early (its result is then
        at most ``stop``, not necessarily the smallest)."""
        if self.attributes == 0 or len(codes) == 0:
            return np.zeros(len(codes))
        sums = _nearest(
            np.ascontiguousarray(codes, dtype=np.int64),
            np.ascontiguousarray(values, dtype=np.float64),
            self.codes,
            self.values,
            self.ranges,
            stop * self.attributes,
        )
        return sums / self.attributes


def _keys(codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Rows to hash: codes and values side by side, a missing value as -inf (NaN never equals)."""
    numbers = np.where(np.isnan(values), -np.inf, values) if values.size else values
    return np.hstack([codes.astype(np.float64), numbers.astype(np.float64)])


def quantiles(distances: np.ndarray) -> dict[str, float]:
    """The DCR quantiles of :data:`DCR_QUANTILES` (empty when there is no distance)."""
    if len(distances) == 0:
        return {}
    points = np.quantile(distances, DCR_QUANTILES)
    return {f"q{round(q * 100):02d}": round(float(v), 6) for q, v in zip(DCR_QUANTILES, points, strict=True)}


#: Synthetic records whose distance to the closest training record the summary reports (a sample
#: drawn with the seed; every record is checked for exact copies).
DCR_SAMPLE = 2000


def too_close(reference: Reference, codes: np.ndarray, values: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each record is at most ``threshold`` from a training record (0: an exact copy)."""
    if threshold <= 0:
        return reference.copies(codes, values)
    return reference.dcr(codes, values, stop=threshold) <= threshold


def closeness(
    reference: Reference, codes: np.ndarray, values: np.ndarray, training_records: int, seed: int
) -> dict[str, Any]:
    """The share of the records that are exact copies of a training record (all of them) and the
    quantiles of their DCR (a sample of ``DCR_SAMPLE`` drawn with ``default_rng([seed, 37])``)."""
    total = len(codes)
    sample = np.arange(total)
    if total > DCR_SAMPLE:
        sample = np.sort(np.random.default_rng([seed, 37]).choice(total, DCR_SAMPLE, replace=False))
    return {
        "distance": "gower",
        "attributes": reference.attributes,
        "training_records": training_records,
        "exact_copies": round(float(reference.copies(codes, values).mean()), 6) if total else 0.0,
        "dcr": quantiles(reference.dcr(codes[sample], values[sample])),
        "dcr_records": len(sample),
    }
