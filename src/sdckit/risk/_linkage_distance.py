"""Record linkage: distance-based linkage of every released record with its nearest originals
(SPEC §6.2; Pagliuca & Seri, 1999; Domingo-Ferrer & Torra, 2001). The method, the KD-tree and the
search over cells are described in :mod:`sdckit.risk.linkage`; the one-to-one assignment is
sdcMicro's ``recordLinkage``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit._numba import njit
from sdckit.errors import ConfigError
from sdckit.frequency import group_records
from sdckit.params import finite_or_none, spell
from sdckit.risk._linkage_encoding import (
    TIE_TOLERANCE,
    CategoricalAttribute,
    Covers,
    Encoded,
    NumericAttribute,
    _agree,
)


@dataclass(frozen=True)
class DistanceLinkage:
    """Distance-based record linkage of every released record (SPEC §6.2; Pagliuca & Seri, 1999).

    ``nearest[i]``: the first (smallest-index) original record among the nearest ``B_i``;
    ``tied[i]`` = |B_i|; ``true_match[i]``: the true source (original row i) is in ``B_i``;
    ``credit[i]`` = 1/|B_i| if so, else 0; ``rank[i]`` = 1 + number of originals strictly closer
    (by more than 1e-12) than the true source; ``distance[i]`` the distance to the true source,
    ``nearest_distance[i]`` to the nearest.
    """

    attributes: tuple[str, ...]
    nearest: np.ndarray
    tied: np.ndarray
    true_match: np.ndarray
    credit: np.ndarray
    rank: np.ndarray
    distance: np.ndarray
    nearest_distance: np.ndarray
    kd_tree_records: int
    assignment: str = "nearest"
    metric: str = "standardized"
    weights: dict[str, float] | None = None

    @property
    def linked(self) -> float:
        return float(self.credit.sum())

    def summary(self) -> dict[str, Any]:
        n = len(self.credit)
        share = self.linked / n if n else 0.0
        return {
            "attributes": list(self.attributes),
            "assignment": self.assignment,
            "linked": finite_or_none(self.linked),
            "linked_records": int(self.true_match.sum()),
            "linked_share": finite_or_none(share),
            "linked_percent": finite_or_none(100 * share),
            "mean_rank": finite_or_none(float(self.rank.mean())) if n else None,
            "median_rank": finite_or_none(float(np.median(self.rank))) if n else None,
            "kd_tree_records": self.kd_tree_records,
        } | ({"metric": self.metric, "weights": self.weights} if self.metric != "standardized" else {})


def distance_linkage(
    encoded: Sequence[Encoded], n_original: int, progress: Any = None, names: Sequence[str] | None = None
) -> DistanceLinkage:
    """Link every released record to its nearest original records (see the module docstring)."""
    numeric = [a for a in encoded if isinstance(a, NumericAttribute)]
    categorical = [a for a in encoded if isinstance(a, CategoricalAttribute)]
    n = n_original
    orig_num = np.zeros((n, len(numeric)))
    lo = np.zeros((n, len(numeric)))
    hi = np.zeros((n, len(numeric)))
    for a, attribute in enumerate(numeric):
        orig_num[:, a], lo[:, a], hi[:, a] = attribute.standardized()
    orig_cat = np.zeros((n, len(categorical)), dtype=np.int32)
    rel_cat = np.zeros((n, len(categorical)), dtype=np.int32)
    for a, category in enumerate(categorical):
        orig_cat[:, a], rel_cat[:, a] = category.original, category.labels
    distance = _true_distances(orig_num, lo, hi, categorical)
    dmin = np.empty(n)
    tied = np.empty(n, dtype=np.int64)
    nearest = np.empty(n, dtype=np.int64)
    closer = np.empty(n, dtype=np.int64)
    # KD-tree: records whose numeric values are points or wildcards and categorical ones wildcards.
    in_tree = np.ones(n, dtype=np.bool_)
    wildcard = np.zeros((n, len(numeric)), dtype=np.bool_)
    for a, attribute in enumerate(numeric):
        in_tree &= attribute.is_point | attribute.is_all
        wildcard[:, a] = attribute.is_all
    for category in categorical:
        in_tree &= category.is_all
    tree_rows, scan_rows = np.flatnonzero(in_tree), np.flatnonzero(~in_tree)
    total, done = n, 0
    if tree_rows.size:
        masks = wildcard[tree_rows] @ (1 << np.arange(len(numeric), dtype=np.int64))
        for mask in np.unique(masks):
            rows = tree_rows[masks == mask]
            active = [a for a in range(len(numeric)) if not (mask >> a) & 1]
            found = _tree_search(rows, active, orig_num, lo, distance)
            dmin[rows], tied[rows], nearest[rows], closer[rows] = found
            done += len(rows)
            if progress is not None:
                progress(done, total)
    if scan_rows.size:
        for d_, t_, n_, c_, positions in _cell_search(
            scan_rows, orig_num, lo, hi, orig_cat, rel_cat, categorical, distance
        ):
            rows = scan_rows[positions]
            dmin[rows], tied[rows], nearest[rows], closer[rows] = d_, t_, n_, c_
            done += len(rows)
            if progress is not None:
                progress(done, total)
    true_match = distance <= dmin + TIE_TOLERANCE
    credit = np.where(true_match, 1.0 / tied, 0.0)
    rank = np.where(true_match, 1, closer + 1).astype(np.int64)
    return DistanceLinkage(
        attributes=tuple(names if names is not None else [a.name for a in encoded]),
        nearest=nearest,
        tied=tied,
        true_match=true_match,
        credit=credit,
        rank=rank,
        distance=distance,
        nearest_distance=dmin,
        kd_tree_records=int(tree_rows.size),
    )


MAX_ONE_TO_ONE = 5_000  # the assignment needs the n x n matrix of distances


def check_one_to_one(n: int) -> None:
    """Refuse a one-to-one assignment of more than :data:`MAX_ONE_TO_ONE` records."""
    if n > MAX_ONE_TO_ONE:
        raise ConfigError(
            f"{spell('assignment')} one-to-one needs an n x n matrix of distances: at most "
            f"{MAX_ONE_TO_ONE:,} "
            f"records, the data has {n:,} (use {spell('assignment')} nearest)"
        )


def one_to_one_linkage(
    encoded: Sequence[Encoded],
    n_original: int,
    names: Sequence[str] | None = None,
    cost: np.ndarray | None = None,
    metric: str = "standardized",
    weights: dict[str, float] | None = None,
) -> DistanceLinkage:
    """Distance-based linkage by a one-to-one assignment (SPEC §6.2's option; what sdcMicro's
    ``recordLinkage()`` does): the released records are matched with distinct original records so
    that the total distance is smallest (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``),
    on the same distances as the nearest-neighbour linkage (standardized Euclidean, 0/1 per
    categorical attribute, a covering value at distance 0). ``nearest[i]`` is the original assigned
    to released record i, ``credit[i]`` 1 when it is its source; ranks are those of the distances.
    Among assignments of equal total distance one is chosen at random (a fixed seed), not the one in
    file order, which would credit every tie.
    Needs the whole n x n matrix: at most :data:`MAX_ONE_TO_ONE` records. ``cost``: that matrix when
    the caller computed it with another distance (Gower's, named by ``metric``)."""
    from scipy.optimize import linear_sum_assignment

    n = n_original
    check_one_to_one(n)
    if cost is None:
        cost = _standardized_matrix(encoded, n)
    # Among assignments of equal total distance the solver returns the first it meets: in the file's
    # order that would be the identity, crediting every tie (a k-anonymous release would link 100 %).
    # The originals are therefore offered in a random (seeded) order, so ties fall where chance puts them.
    order = np.random.default_rng(0).permutation(n)
    _, chosen = linear_sum_assignment(cost[:, order])
    assigned = order[chosen]
    own = np.diagonal(cost).copy()
    true_match = assigned == np.arange(n)
    closer = (cost < own[:, None] - TIE_TOLERANCE).sum(axis=1)
    return DistanceLinkage(
        attributes=tuple(names if names is not None else [a.name for a in encoded]),
        nearest=assigned.astype(np.int64),
        tied=np.ones(n, dtype=np.int64),
        true_match=true_match,
        credit=true_match.astype(np.float64),
        rank=(closer + 1).astype(np.int64),
        distance=own,
        nearest_distance=cost[np.arange(n), assigned],
        kd_tree_records=0,
        assignment="one-to-one",
        metric=metric,
        weights=weights,
    )


def _standardized_matrix(encoded: Sequence[Encoded], n: int) -> np.ndarray:
    """The n x n matrix of the default distances (released rows, original columns)."""
    numeric = [a for a in encoded if isinstance(a, NumericAttribute)]
    categorical = [a for a in encoded if isinstance(a, CategoricalAttribute)]
    squared = np.zeros((n, n))
    for attribute in numeric:
        x, lo, hi = attribute.standardized()
        gap = np.maximum(np.maximum(lo[:, None] - x[None, :], x[None, :] - hi[:, None]), 0.0)
        squared += gap * gap
    released_rows = np.repeat(np.arange(n), n)
    original_rows = np.tile(np.arange(n), n)
    for category in categorical:
        squared += ~category.agrees(released_rows, original_rows).reshape(n, n)
    return np.sqrt(squared)


def _true_distances(
    orig_num: np.ndarray, lo: np.ndarray, hi: np.ndarray, categorical: Sequence[CategoricalAttribute]
) -> np.ndarray:
    """Distance of every released record to its own source record."""
    gap = np.maximum(np.maximum(lo - orig_num, orig_num - hi), 0.0)
    squared = (gap**2).sum(axis=1)
    rows = np.arange(len(orig_num))
    for attribute in categorical:
        squared += ~attribute.agrees(rows, rows)
    return np.sqrt(squared)


def _tree_search(
    rows: np.ndarray, active: list[int], orig_num: np.ndarray, rel_num: np.ndarray, distance: np.ndarray
) -> tuple[Any, Any, Any, Any]:
    """KD-tree search of released records whose numeric values are points (``active`` attributes)
    or wildcards (left out) and whose other values are wildcards."""
    from scipy.spatial import cKDTree

    if not active:  # every attribute a wildcard: all originals tie at distance 0
        return 0.0, len(orig_num), 0, 0
    # The tree holds the distinct original points; each weighs its number of records.
    points, first_of, weight = np.unique(orig_num[:, active], axis=0, return_index=True, return_counts=True)
    tree = cKDTree(points)
    queries = rel_num[rows][:, active]
    found, _ = tree.query(queries, k=1)
    counts, first = _ball_sums(tree, queries, found + TIE_TOLERANCE, weight, first_of)
    # Originals strictly closer than the true source (only for records whose source is not nearest).
    inner = np.zeros(len(rows), dtype=np.int64)
    missed = np.flatnonzero(distance[rows] > found + TIE_TOLERANCE)
    if missed.size:
        radius = np.nextafter(distance[rows[missed]] - TIE_TOLERANCE, 0)
        inner[missed], _ = _ball_sums(tree, queries[missed], radius, weight, first_of, want_first=False)
    return found, counts, first, inner


def _ball_sums(
    tree: Any,
    queries: np.ndarray,
    radius: np.ndarray,
    weight: np.ndarray,
    first_of: np.ndarray,
    want_first: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the records (weights) of the distinct points within ``radius`` and the first
    record among them (-1 if none)."""
    if weight.max(initial=0) == 1:  # no repeated point: counts without the lists
        totals = np.asarray(tree.query_ball_point(queries, radius, return_length=True), dtype=np.int64)
        firsts = np.full(len(queries), -1, dtype=np.int64)
        if not want_first:
            return totals, firsts
        one = np.flatnonzero(totals == 1)
        if one.size:
            _, nearest = tree.query(queries[one], k=1)
            firsts[one] = first_of[nearest]
        several = np.flatnonzero(totals > 1)
        if several.size:
            _, firsts[several] = _ball_sums_lists(tree, queries[several], radius[several], weight, first_of)
        return totals, firsts
    return _ball_sums_lists(tree, queries, radius, weight, first_of)


def _ball_sums_lists(
    tree: Any, queries: np.ndarray, radius: np.ndarray, weight: np.ndarray, first_of: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    lists = tree.query_ball_point(queries, radius)
    lengths = np.fromiter((len(members) for members in lists), dtype=np.int64, count=len(lists))
    members = np.fromiter((m for found in lists for m in found), dtype=np.int64, count=int(lengths.sum()))
    totals = np.zeros(len(lists), dtype=np.int64)
    firsts = np.full(len(lists), -1, dtype=np.int64)
    some = lengths > 0
    if members.size:
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])[some]
        totals[some] = np.add.reduceat(weight[members], offsets)
        firsts[some] = np.minimum.reduceat(first_of[members], offsets)
    return totals, firsts


def _cell_search(
    rows: np.ndarray,
    orig_num: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    orig_cat: np.ndarray,
    rel_cat: np.ndarray,
    categorical: Sequence[CategoricalAttribute],
    distance: np.ndarray,
    block: int = 64,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Exact nearest-neighbour search for the other released records, over cells: the originals
    grouped by their categorical values. A released combination of categorical values is at the
    same number of mismatches h from every record of a cell, so cells are visited by increasing h
    and the search stops once √h exceeds the best distance (or, for the rank, the distance to the
    true source); inside a visited cell the numeric distances are computed record by record.
    Distinct released rows are searched once. Yields, per block of released categorical
    combinations, the nearest distance, tie count, first nearest original and count strictly
    closer than the true source of the released records it covers, and their positions in ``rows``."""
    covers = Covers.of(categorical).arrays()
    n = len(orig_num)
    # Cells of the originals, members in row order.
    cells = group_records(pl.DataFrame(orig_cat), [f"column_{a}" for a in range(orig_cat.shape[1])])
    member_rows = np.argsort(cells.keys, kind="stable").astype(np.int64)
    member_ptr = np.zeros(len(cells.sizes) + 1, dtype=np.int64)
    member_ptr[1:] = np.cumsum(cells.sizes)
    member_num = np.ascontiguousarray(orig_num[member_rows])
    cell_cat = np.ascontiguousarray(orig_cat[cells.first]) if n else orig_cat
    # Distinct released rows, grouped by their categorical labels (combinations).
    frame = pl.DataFrame(
        [pl.Series(f"c{a}", rel_cat[rows, a]) for a in range(rel_cat.shape[1])]
        + [pl.Series(f"lo{a}", lo[rows, a]) for a in range(lo.shape[1])]
        + [pl.Series(f"hi{a}", hi[rows, a]) for a in range(hi.shape[1])]
    )
    distinct = group_records(frame, frame.columns)
    representatives = rows[distinct.first]
    combos = group_records(
        frame[distinct.first], [f"c{a}" for a in range(rel_cat.shape[1])]
    )  # the combination of every distinct row
    row_order = np.argsort(combos.keys, kind="stable")  # distinct rows sorted by combination
    combo_ptr = np.zeros(len(combos.sizes) + 1, dtype=np.int64)
    combo_ptr[1:] = np.cumsum(combos.sizes)
    rank_of_row = np.empty(len(row_order), dtype=np.int64)
    rank_of_row[row_order] = np.arange(len(row_order))
    sorted_rows = representatives[row_order]
    row_lo = np.ascontiguousarray(lo[sorted_rows])
    row_hi = np.ascontiguousarray(hi[sorted_rows])
    combo_cat = np.ascontiguousarray(rel_cat[sorted_rows[combo_ptr[:-1]]])
    # Released records sorted by their distinct row (in that order).
    record_row = rank_of_row[distinct.keys]
    record_order = np.argsort(record_row, kind="stable")
    record_ptr = np.zeros(len(row_order) + 1, dtype=np.int64)
    record_ptr[1:] = np.cumsum(np.bincount(record_row, minlength=len(row_order)))
    thresholds = distance[rows[record_order]] - TIE_TOLERANCE
    for start in range(0, len(combos.sizes), block):
        stop = min(start + block, len(combos.sizes))
        first_row, last_row = combo_ptr[start], combo_ptr[stop]
        first_record, last_record = record_ptr[first_row], record_ptr[last_row]
        out_min = np.empty(last_row - first_row)
        out_tied = np.empty(last_row - first_row, dtype=np.int64)
        out_near = np.empty(last_row - first_row, dtype=np.int64)
        out_closer = np.zeros(last_record - first_record, dtype=np.int64)
        _cell_kernel(
            cell_cat,
            member_ptr,
            member_rows,
            member_num,
            combo_cat[start:stop],
            combo_ptr[start : stop + 1] - first_row,
            row_lo[first_row:last_row],
            row_hi[first_row:last_row],
            *covers,
            record_ptr[first_row : last_row + 1] - first_record,
            thresholds[first_record:last_record],
            TIE_TOLERANCE,
            out_min,
            out_tied,
            out_near,
            out_closer,
        )
        positions = record_order[first_record:last_record]
        own = record_row[positions] - first_row
        yield out_min[own], out_tied[own], out_near[own], out_closer, positions


@njit(cache=True)
def _cell_kernel(
    cell_cat,
    member_ptr,
    member_rows,
    member_num,
    combo_cat,
    combo_ptr,
    row_lo,
    row_hi,
    label_offset,
    kind,
    point,
    set_keys,
    set_ptr,
    width,
    record_ptr,
    thresholds,
    tol,
    out_min,
    out_tied,
    out_near,
    out_closer,
):  # pragma: no cover - compiled
    n_cells = cell_cat.shape[0]
    n_cat = cell_cat.shape[1]
    n_num = member_num.shape[1]
    mismatches = np.empty(n_cells, dtype=np.int64)
    order = np.empty(n_cells, dtype=np.int64)
    starts = np.zeros(n_cat + 2, dtype=np.int64)
    fill = np.zeros(n_cat + 1, dtype=np.int64)
    for c in range(combo_cat.shape[0]):
        starts[:] = 0
        for g in range(n_cells):
            h = 0
            for a in range(n_cat):
                if not _agree(
                    a, combo_cat[c, a], cell_cat[g, a], label_offset, kind, point, set_keys, set_ptr, width
                ):
                    h += 1
            mismatches[g] = h
            starts[h + 1] += 1
        for h in range(n_cat + 1):
            starts[h + 1] += starts[h]
            fill[h] = starts[h]
        for g in range(n_cells):
            h = mismatches[g]
            order[fill[h]] = g
            fill[h] += 1
        for r in range(combo_ptr[c], combo_ptr[c + 1]):
            best = np.inf
            for h in range(n_cat + 1):
                if np.sqrt(h) > best + tol:
                    break
                for index in range(starts[h], starts[h + 1]):
                    g = order[index]
                    for m in range(member_ptr[g], member_ptr[g + 1]):
                        s = float(h)
                        for a in range(n_num):
                            x = member_num[m, a]
                            if x < row_lo[r, a]:
                                s += (row_lo[r, a] - x) ** 2
                            elif x > row_hi[r, a]:
                                s += (x - row_hi[r, a]) ** 2
                        d = np.sqrt(s)
                        if d < best:
                            best = d
            count = 0
            first = -1
            for h in range(n_cat + 1):
                if np.sqrt(h) > best + tol:
                    break
                for index in range(starts[h], starts[h + 1]):
                    g = order[index]
                    for m in range(member_ptr[g], member_ptr[g + 1]):
                        s = float(h)
                        for a in range(n_num):
                            x = member_num[m, a]
                            if x < row_lo[r, a]:
                                s += (row_lo[r, a] - x) ** 2
                            elif x > row_hi[r, a]:
                                s += (x - row_hi[r, a]) ** 2
                        if np.sqrt(s) <= best + tol:
                            count += 1
                            if first < 0 or member_rows[m] < first:
                                first = member_rows[m]
            out_min[r] = best
            out_tied[r] = count
            out_near[r] = first
            for k in range(record_ptr[r], record_ptr[r + 1]):
                limit = thresholds[k]
                if limit <= best:  # the source is among the nearest: nothing strictly closer
                    continue
                closer = 0
                for h in range(n_cat + 1):
                    if np.sqrt(h) >= limit:
                        break
                    for index in range(starts[h], starts[h + 1]):
                        g = order[index]
                        for m in range(member_ptr[g], member_ptr[g + 1]):
                            s = float(h)
                            for a in range(n_num):
                                x = member_num[m, a]
                                if x < row_lo[r, a]:
                                    s += (row_lo[r, a] - x) ** 2
                                elif x > row_hi[r, a]:
                                    s += (x - row_hi[r, a]) ** 2
                            if np.sqrt(s) < limit:
                                closer += 1
                out_closer[k] = closer
