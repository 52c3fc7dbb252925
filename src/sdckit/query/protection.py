"""The three protections of a queryable database (Hundepool et al., the tutorial's "queryable
database protection"): output perturbation by differential privacy, query restriction, camouflage.

Differential privacy (``dp``)
    Neighbouring datasets differ by **changing one record** (the tutorial's "modifying a single
    record"; bounded DP: the number of records is public). Sensitivities under that relation, with
    numeric values clamped to the declared ``bounds`` [L, U] and M = max(|L|, |U|):

    ===========================  ====================  ===========================
    query                        L1 (Laplace)          L2 (Gaussian)
    ===========================  ====================  ===========================
    count                        1                     1
    sum                          max(U − L, M)         max(U − L, M)
    count per group / bin        2                     √2
    sum per group                max(U − L, 2M)        max(U − L, √2·M)
    ===========================  ====================  ===========================

    (a changed record may leave the query set, or move from one group to another, changing two
    groups). A group-by answers every key of the declared domain (``domains`` in the server
    configuration, else the values with weights in the attribute configuration), zero-count keys
    included, and never a key taken from the data; the groups are one vector query (parallel
    composition). A mean spends ε/2 on the sum and ε/2 on the count of non-missing values and
    is their ratio clamped to [L, U]. A numeric histogram with a number of bins uses equal bins
    over [L, U] (values clamped); with explicit edges, values outside them are not counted.
    A quantile is OpenDP's exponential mechanism over 201 equally spaced candidates in [L, U]
    (``make_quantile_score_candidates`` then ``then_noisy_max``, symmetric distance 2 for one
    changed record), without group-by. The noise is OpenDP's (``make_laplace`` for ε-DP,
    ``make_gaussian`` through ``make_zCDP_to_approxDP`` and ``make_fix_delta`` for (ε, δ)-DP),
    scaled so that OpenDP's privacy map of the stated sensitivity is within the ε asked; noisy
    values are returned as they come (not rounded). The per-analyst budget composes sequentially:
    the sum of the ε of the answers never exceeds ``budget``.

Query restriction (``restriction``), threshold k = ``min_query_set``
    1. Query-set-size control: refused when |Q| < k or N − |Q| < k, for the query set and for each
       group or bin of a group-by or histogram.
    2. Pairwise audit: refused when, for a query set A answered before to the same analyst,
       0 < |Q \\ A| < k or 0 < |A \\ Q| < k (the differencing attack count(all) − count(all but
       the victim) and the overlap of two nearly equal sets).
    3. Exact linear audit (Chin & Özsoyoglu 1982; Dobkin, Jones & Lipton 1979): the answered sets,
       the new ones and the whole dataset (N and the totals are taken as known) are the rows of a
       0/1 matrix; records with the same membership in every row form an atom. The total (count or
       sum) over an atom is determined by the answers iff the atom's unit vector lies in the row
       space of the atom-level matrix, i.e. iff its leverage (squared norm of its column of the
       right singular vectors of the non-zero singular values) is 1. Refused when an atom of
       fewer than k records is determined. This covers every linear combination of answers,
       hence differences, intersections with complements and trackers (Denning's general
       tracker: q(C) = q(C ∨ T) + q(C ∨ ¬T) − q(T) − q(¬T)). Not covered: the total over a union of
       several small atoms that is determined while none of them is, non-linear inference
       (means are audited as sums and counts over their set, quantiles only as sets), and
       collusion between analysts (each analyst is audited alone).
    The answered query bodies are kept in the ledger and their sets recomputed from the read-only
    data after a restart. In memory, per analyst and dataset, the auditor keeps one atom number per
    record and the answered sets as a 0/1 matrix over the atoms. On 1,000,000 generated records,
    40 group-by queries (78 answered sets, 351 atoms) took 3.5 s in all, 90 ms a query.

Camouflage (``camouflage``), relative width w = ``width`` (Gopal, Garfinkel & Goes 2002)
    The confidential vector a of the aggregated column is hidden in the box
    Π = {x : |x_i − a_i| ≤ w·|a_i|}; each answer is the interval [min f, max f] over Π, which
    contains the true value: for a sum over Q, [q − w·Σ_Q|a_i|, q + w·Σ_Q|a_i|]; for a mean the same
    divided by the number of values; a quantile between the quantiles of a − w|a| and a + w|a|;
    for a numeric histogram, per bin, the records whose whole interval lies in the bin and those
    whose interval meets it. Counts (no confidential value) use the same box on the records'
    weights 1: [c − w·c, c + w·c] rounded outward. Filters select on the recorded values.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import opendp.prelude as dp

from sdckit.query.engine import Engine, GroupStats
from sdckit.query.errors import Refused

dp.enable_features("contrib")

NEIGHBOURS = "change-one"
QUANTILE_CANDIDATES = 201
LEVERAGE_TOLERANCE = 1e-8


# --- differential privacy ----------------------------------------------------------------------


def _vector_domain() -> Any:
    return dp.vector_domain(dp.atom_domain(T=float, nan=False))


def laplace(sensitivity: float, epsilon: float) -> Any:
    """OpenDP's Laplace measurement of a vector with the given L1 sensitivity, spending ``epsilon``."""
    measurement = dp.m.make_laplace(_vector_domain(), dp.l1_distance(T=float), sensitivity / epsilon)
    assert measurement.map(sensitivity) <= epsilon * (1 + 1e-9)
    return measurement


def gaussian(sensitivity: float, epsilon: float, delta: float) -> Any:
    """OpenDP's Gaussian measurement (zCDP converted to (ε, δ)) with the given L2 sensitivity."""

    def make(scale: float) -> Any:
        base = dp.m.make_gaussian(_vector_domain(), dp.l2_distance(T=float), scale)
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(base), delta)

    # the privacy loss depends on sensitivity / scale only: calibrate for sensitivity 1 (a search
    # with a large sensitivity overflows OpenDP's bounds), then scale up and check OpenDP's map
    scale = dp.binary_search_param(make, d_in=1.0, d_out=(epsilon, delta)) * sensitivity
    measurement = make(scale)
    spent = measurement.map(sensitivity)
    assert spent[0] <= epsilon * (1 + 1e-6) and spent[1] <= delta * (1 + 1e-9), spent
    return measurement


def dp_noise(values: list[float], l1: float, l2: float, epsilon: float, delta: float | None) -> list[float]:
    if not values:
        return []
    if delta is None:
        return list(laplace(l1, epsilon)([float(v) for v in values]))
    return list(gaussian(l2, epsilon, delta)([float(v) for v in values]))


def dp_quantile(values: np.ndarray, alpha: float, bounds: tuple[float, float], epsilon: float) -> float:
    candidates = [float(c) for c in np.linspace(bounds[0], bounds[1], QUANTILE_CANDIDATES)]
    score = dp.t.make_quantile_score_candidates(_vector_domain(), dp.symmetric_distance(), candidates, alpha)

    def make(scale: float) -> Any:
        return score >> dp.m.then_noisy_max(dp.max_divergence(), scale=scale, negate=True)

    measurement = make(dp.binary_search_param(make, d_in=2, d_out=epsilon))
    return candidates[measurement(np.clip(values, *bounds).astype(float).tolist())]


def sensitivities(aggregate: str, grouped: bool, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """(L1, L2) sensitivity of one vector query under change-one (table in the module docstring)."""
    if aggregate == "count":
        return (2.0, math.sqrt(2.0)) if grouped else (1.0, 1.0)
    assert bounds is not None
    low, high = bounds
    m = max(abs(low), abs(high))
    if grouped:
        return max(high - low, 2 * m), max(high - low, math.sqrt(2.0) * m)
    return max(high - low, m), max(high - low, m)


def dp_values(
    aggregate: str,
    stats: list[GroupStats],
    grouped: bool,
    bounds: tuple[float, float] | None,
    epsilon: float,
    delta: float | None,
) -> list[float | None]:
    """The noisy value of each group (the spend is committed before this is called)."""
    if aggregate in ("count", "histogram"):
        l1, l2 = sensitivities("count", grouped, None)
        return dp_noise([g.n for g in stats], l1, l2, epsilon, delta)
    if aggregate == "sum":
        l1, l2 = sensitivities("sum", grouped, bounds)
        return dp_noise([g.s for g in stats], l1, l2, epsilon, delta)
    if aggregate == "mean":
        assert bounds is not None
        half_delta = None if delta is None else delta / 2
        l1, l2 = sensitivities("sum", grouped, bounds)
        sums = dp_noise([g.s for g in stats], l1, l2, epsilon / 2, half_delta)
        c1, c2 = sensitivities("count", grouped, None)
        counts = dp_noise([g.m for g in stats], c1, c2, epsilon / 2, half_delta)
        return [min(max(s / max(c, 1.0), bounds[0]), bounds[1]) for s, c in zip(sums, counts, strict=True)]
    raise AssertionError(aggregate)


# --- query restriction -------------------------------------------------------------------------


class Auditor:
    """The answered query sets of one analyst on one dataset, and the audit of a new query.

    The records are partitioned into atoms (records with the same membership in every answered
    set); the auditor keeps each record's atom (one integer per record) and the answered sets as a
    0/1 matrix over the atoms, so that its memory does not grow with the records per query and
    the pairwise and linear audits run on the atoms.
    """

    def __init__(self, records: int, k: int) -> None:
        self.records = records
        self.k = k
        self.labels = np.zeros(records, dtype=np.int64)
        self.sizes = np.array([records], dtype=np.int64)
        self.rows = np.zeros((0, 1), dtype=bool)
        self.last_id = 0

    def _combine(self, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The atoms with ``sets`` added: (labels, sizes, old rows and new rows over the new atoms)."""
        labels = self.labels
        atoms = len(self.sizes)
        for start in range(0, len(sets), 4):
            chunk = sets[start : start + 4]
            code = np.zeros(self.records, dtype=np.int64)
            for bit, member in enumerate(chunk):
                code |= member.astype(np.int64) << bit
            combined = (labels << len(chunk)) | code  # labels < records < 2**40: fits in an int64
            if atoms << len(chunk) <= 1 << 22:  # dense relabelling through a table (no sort)
                present = np.zeros(atoms << len(chunk), dtype=bool)
                present[combined] = True
                ids = np.cumsum(present) - 1
                labels, atoms = ids[combined], int(ids[-1]) + 1
            else:
                _, labels = np.unique(combined, return_inverse=True)
                atoms = int(labels.max()) + 1
        sizes = np.bincount(labels, minlength=atoms)
        first = np.empty(atoms, dtype=np.int64)
        first[labels[::-1]] = np.arange(self.records - 1, -1, -1)
        parent = self.labels[first]
        new = np.array([member[first] for member in sets], dtype=bool).reshape(len(sets), len(first))
        return labels, sizes, self.rows[:, parent], new

    def check(self, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Refuse (:class:`Refused`) or return the state :meth:`commit` records once answered."""
        k, n = self.k, self.records
        for member in sets:
            size = int(np.count_nonzero(member))
            if size < k or n - size < k:
                raise Refused(
                    "query set size control: the query set (or a group of it) or its complement has "
                    f"fewer than {k} records",
                    reason="query_set_size",
                )
        labels, sizes, old, new = self._combine(sets)
        if len(old):
            only_new = (new[:, None, :] & ~old[None, :, :]).astype(np.int64) @ sizes
            only_old = (old[None, :, :] & ~new[:, None, :]).astype(np.int64) @ sizes
            if np.any(((only_new > 0) & (only_new < k)) | ((only_old > 0) & (only_old < k))):
                raise Refused(
                    f"audit: this query set differs from one answered before by fewer than {k} records "
                    "(a differencing attack would isolate them)",
                    reason="audit",
                )
        small = sizes < k
        if small.any():
            matrix = np.vstack([np.ones((1, len(sizes))), old, new]).astype(float)
            _, singular, vt = np.linalg.svd(matrix, full_matrices=False)
            rank = int(np.sum(singular > singular[0] * 1e-10))
            leverage = np.sum(vt[:rank] ** 2, axis=0)
            if np.any(small & (leverage > 1 - LEVERAGE_TOLERANCE)):
                raise Refused(
                    "audit: with the answers you were given before, this answer would determine the total "
                    f"of fewer than {k} records",
                    reason="audit",
                )
        return labels, sizes, np.vstack([old, new])

    def commit(self, state: tuple[np.ndarray, np.ndarray, np.ndarray], answer_id: int = 0) -> None:
        self.labels, self.sizes, rows = state
        self.rows = np.unique(rows, axis=0) if len(rows) else rows
        self.last_id = max(self.last_id, answer_id)

    def add(self, sets: list[np.ndarray], answer_id: int = 0) -> None:
        """Record sets answered before (read back from the ledger), without checking them."""
        labels, sizes, old, new = self._combine(sets)
        self.commit((labels, sizes, np.vstack([old, new])), answer_id)


# --- camouflage --------------------------------------------------------------------------------


def camouflage_interval(
    aggregate: str, group: GroupStats, width: float, alpha: float | None = None
) -> dict[str, Any]:
    if aggregate in ("count", "histogram"):
        return {"lower": max(math.floor(group.n * (1 - width)), 0), "upper": math.ceil(group.n * (1 + width))}
    if aggregate == "sum":
        return {"lower": group.s - width * group.sabs, "upper": group.s + width * group.sabs}
    if aggregate == "mean":
        if group.m == 0:
            return {"lower": None, "upper": None}
        return {
            "lower": (group.s - width * group.sabs) / group.m,
            "upper": (group.s + width * group.sabs) / group.m,
        }
    if aggregate == "quantile":
        values = group.values if group.values is not None else np.array([])
        if len(values) == 0:
            return {"lower": None, "upper": None}
        low = values - width * np.abs(values)
        high = values + width * np.abs(values)
        return {
            "lower": float(np.quantile(low, alpha, method="inverted_cdf")),
            "upper": float(np.quantile(high, alpha, method="inverted_cdf")),
        }
    raise AssertionError(aggregate)


def camouflage_histogram(
    engine: Engine, mask: np.ndarray, column: str, edges: list[float], width: float
) -> list[dict[str, int]]:
    """Per bin, [records surely in it, records possibly in it] over the box Π."""
    a = engine.frame.get_column(column).cast(float).to_numpy()[mask]
    a = a[~np.isnan(a)]
    edges_array = np.asarray(edges, dtype=float)
    bins = len(edges) - 1

    def code(x: np.ndarray) -> np.ndarray:
        index = np.searchsorted(edges_array, x, side="right") - 1
        index[x == edges_array[-1]] = bins - 1
        index[x < edges_array[0]] = -1
        index[x > edges_array[-1]] = bins
        return index

    low, high = code(a - width * np.abs(a)), code(a + width * np.abs(a))
    return [
        {
            "lower": int(np.count_nonzero((low == b) & (high == b))),
            "upper": int(np.count_nonzero((low <= b) & (high >= b))),
        }
        for b in range(bins)
    ]


__all__ = [
    "NEIGHBOURS",
    "Auditor",
    "camouflage_histogram",
    "camouflage_interval",
    "dp_quantile",
    "dp_values",
    "gaussian",
    "laplace",
    "sensitivities",
]
