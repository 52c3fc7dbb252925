"""Group statistics of sdcMicro's microaggregation (``means()`` in sdcMicro's ``R/microaggregation.R``):
the value every record of a group receives, column by column.

Measures (``measure``), each exactly as sdcMicro computes it from R's functions:

``mean``
    The arithmetic mean (``colMeans``). With weights: ``stats::weighted.mean``, ``Σ wᵢxᵢ / Σ wᵢ``
    (``NaN`` for a group whose weights sum to 0, as R's 0/0).
``median``
    R's ``median``: the middle value, the mean of the two middle values of an even count. With
    weights: sdcMicro's ``weightedQuantile(x, w, probs = 0.5)``: sort the values (ties keep their
    order), ``rw = cumsum(w) / sum(w)``, take the first position ``s`` with ``rw[s] ≥ 0.5``; the value
    there, or the mean of it and the next one when ``rw[s] == 0.5`` exactly. A group whose weights
    are all 0 gets 0 (sdcMicro's rule, with its warning).
``trim``
    R's ``mean(x, trim = t)``: ``lo = floor(m·t)`` values dropped at each end of the ``m`` sorted
    values, the mean of the rest; ``t ≥ 0.5`` gives the median, ``t = 0`` the mean. Weights are not
    used (sdcMicro ignores them for this measure).
``onestep``
    sdcMicro's one-step Huber-type location: every value is clipped to ``median ± c·mad`` with
    ``c = 3/1.486 ≈ 2.01884`` and ``mad`` R's ``mad`` (``1.4826 · median|x − median(x)|``), then
    averaged: the bound is ``median ± 2.99314 · median|x − median(x)|``. Weights are not used
    (sdcMicro ignores them for this measure).

Groups are given by labels ``0 … g−1`` (one per record); a label with no record gets ``NaN``. The
statistics run in one compiled pass over the records sorted by label (stable, so equal values keep
their record order, as R's ``order``); the mean without weights and the weighted mean are sums by
label (numpy). Sums are float64 (R accumulates ``mean`` and ``cumsum`` in long double and refines
``mean`` by a second pass): results can differ from R's in the last bits.
"""

from __future__ import annotations

import math

import numpy as np

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.params import spell

__all__ = ["MEASURES", "ONESTEP_CONSTANT", "group_statistics", "record_statistics"]

#: The measures of sdcMicro's ``microaggregation(measure = ...)``.
MEASURES = ("mean", "median", "trim", "onestep")
#: sdcMicro's clipping constant of ``onestep`` (``3/1.486``), applied to R's scaled ``mad``.
ONESTEP_CONSTANT = 3.0 / 1.486
#: R's ``mad`` consistency constant.
_MAD_CONSTANT = 1.4826

_MEDIAN, _TRIM, _ONESTEP, _WEIGHTED_MEDIAN = 1, 2, 3, 4


#: Groups up to this size are sorted by insertion in the kernel's buffer (no allocation).
_INSERTION = 32


@njit(cache=True, nogil=True)
def _sort_prefix(v: np.ndarray, m: int) -> None:  # pragma: no cover (compiled)
    """Sort ``v[:m]`` in place."""
    if m > _INSERTION:
        v[:m].sort()
        return
    for i in range(1, m):
        key = v[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            j -= 1
        v[j + 1] = key


@njit(cache=True, nogil=True)
def _sort_pairs(v: np.ndarray, w: np.ndarray, m: int) -> None:  # pragma: no cover (compiled)
    """Sort ``v[:m]`` in place, stably (equal values keep their order, as R's ``order``), and
    ``w[:m]`` along with it."""
    if m > _INSERTION:
        perm = np.argsort(v[:m], kind="mergesort")
        sv, sw = v[:m][perm], w[:m][perm]
        v[:m] = sv
        w[:m] = sw
        return
    for i in range(1, m):
        key, weight = v[i], w[i]
        j = i - 1
        while j >= 0 and v[j] > key:
            v[j + 1] = v[j]
            w[j + 1] = w[j]
            j -= 1
        v[j + 1] = key
        w[j + 1] = weight


@njit(cache=True, nogil=True)
def _sorted_median(v: np.ndarray, m: int) -> float:  # pragma: no cover (compiled)
    """R's median of the already sorted ``v[:m]`` (``m ≥ 1``)."""
    half = m // 2
    if m % 2 == 1:
        return v[half]
    return 0.5 * (v[half - 1] + v[half])


@njit(cache=True, nogil=True)
def _weighted_median(v: np.ndarray, w: np.ndarray, m: int) -> float:  # pragma: no cover (compiled)
    """sdcMicro's ``weightedQuantile(v[:m], w[:m], 0.5)`` of values sorted with their weights."""
    total = 0.0
    for i in range(m):
        total += w[i]
    if total == 0.0:
        return 0.0
    running = 0.0
    for i in range(m):
        running += w[i]
        share = running / total
        if share >= 0.5:
            if share == 0.5 and i + 1 < m:
                return 0.5 * (v[i] + v[i + 1])
            return v[i]
    return v[m - 1]


@njit(cache=True, nogil=True)
def _segment_statistics(
    x: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    code: int,
    trim: float,
    constant: float,
    weights: np.ndarray,
) -> np.ndarray:  # pragma: no cover (compiled)
    """The statistic ``code`` of every column of every group: group ``g`` is the records
    ``order[starts[g]:starts[g + 1]]``; an empty group gets NaN. ``weights`` is read only by the
    weighted median (``code`` 4). One buffer of the largest group's size serves every group."""
    groups = len(starts) - 1
    p = x.shape[1]
    out = np.full((groups, p), np.nan)
    largest = 0
    for g in range(groups):
        largest = max(largest, starts[g + 1] - starts[g])
    v = np.empty(largest)
    w = np.empty(largest)
    for g in range(groups):
        a, b = starts[g], starts[g + 1]
        m = b - a
        if m == 0:
            continue
        for c in range(p):
            for i in range(m):
                v[i] = x[order[a + i], c]
            if code == _WEIGHTED_MEDIAN:
                for i in range(m):
                    w[i] = weights[order[a + i]]
                _sort_pairs(v, w, m)
                out[g, c] = _weighted_median(v, w, m)
                continue
            _sort_prefix(v, m)
            if code == _MEDIAN or (code == _TRIM and trim >= 0.5):
                out[g, c] = _sorted_median(v, m)
            elif code == _TRIM:
                lo = int(math.floor(m * trim))
                total = 0.0
                for i in range(lo, m - lo):
                    total += v[i]
                out[g, c] = total / (m - 2 * lo)
            else:  # onestep
                med = _sorted_median(v, m)
                for i in range(m):
                    w[i] = abs(v[i] - med)
                _sort_prefix(w, m)
                spread = constant * _MAD_CONSTANT * _sorted_median(w, m)
                total = 0.0
                for i in range(m):
                    total += min(max(v[i], med - spread), med + spread)
                out[g, c] = total / m
    return out


def group_statistics(
    x: np.ndarray,
    labels: np.ndarray,
    measure: str = "mean",
    *,
    trim: float = 0.0,
    weights: np.ndarray | None = None,
    groups: int | None = None,
) -> np.ndarray:
    """The ``groups × p`` matrix of the statistic ``measure`` of each column of ``x`` (``n × p``, or
    a vector) in each group of ``labels`` (``n`` integers ``0 … groups−1``; ``groups`` defaults to
    ``labels.max() + 1``). ``weights`` (``n``, non-negative) turn ``mean`` and ``median`` into their
    weighted versions and are ignored by ``trim`` and ``onestep`` (sdcMicro's behaviour); ``trim`` is
    the share cut at each end for ``trim``. See the module docstring for the exact definitions.
    """
    if measure not in MEASURES:
        raise ConfigError(f"{spell('measure')} must be one of {', '.join(MEASURES)}, got {measure!r}")
    values = np.asarray(x, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    codes = np.asarray(labels, dtype=np.int64)
    count = int(codes.max()) + 1 if groups is None and len(codes) else int(groups or 0)
    if measure == "mean":
        return _group_means(values, codes, count, weights)
    order = np.argsort(codes, kind="stable").astype(np.int64)
    starts = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=count), out=starts[1:])
    if measure == "median" and weights is not None:
        code, w = _WEIGHTED_MEDIAN, np.asarray(weights, dtype=np.float64)
    else:
        code = {"median": _MEDIAN, "trim": _TRIM, "onestep": _ONESTEP}[measure]
        w = np.zeros(0)
    return _segment_statistics(
        np.ascontiguousarray(values), order, starts, code, float(trim), ONESTEP_CONSTANT, w
    )


def _group_means(values: np.ndarray, codes: np.ndarray, count: int, weights: np.ndarray | None) -> np.ndarray:
    """Plain or weighted group means by sums over labels (NaN for an empty or zero-weight group)."""
    w = np.ones(len(codes)) if weights is None else np.asarray(weights, dtype=np.float64)
    totals = np.bincount(codes, weights=w, minlength=count)
    out = np.empty((count, values.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        for c in range(values.shape[1]):
            out[:, c] = np.bincount(codes, weights=w * values[:, c], minlength=count) / totals
    return out


def record_statistics(
    x: np.ndarray,
    labels: np.ndarray,
    measure: str = "mean",
    *,
    trim: float = 0.0,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Every record's row of :func:`group_statistics` (``n × p``): the values microaggregation releases
    (sdcMicro's ``blowup``)."""
    codes = np.asarray(labels, dtype=np.int64)
    return group_statistics(x, codes, measure, trim=trim, weights=weights)[codes]
