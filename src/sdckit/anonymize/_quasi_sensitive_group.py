"""One QI group's term suppression (Shi, Xiong & Fung, 2010), for :mod:`sdckit.anonymize.quasi_sensitive`:
the set-enumeration search of Figure 3 over the group's (record, item) cells with the inverse weighted
cost of equation (1), under a time bound and a node bound, on the compiled kernels of
:mod:`sdckit.anonymize._quasi_sensitive_kernels`; :func:`suppress_group` is its public form on item
lists, :func:`search_group` the form phase 2 calls with the group's cells already in place."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from sdckit.anonymize import _quasi_sensitive_kernels as kernels
from sdckit.errors import ConfigError
from sdckit.models.quasi_sensitive import QSCLDiversity, QSModel, QSTCloseness
from sdckit.setvalued import ItemSets

STRATEGIES = ("adaptive", "baseline")

# ---------------------------------------------------------------------------------------------------
# One group
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupSearch:
    """The result of searching one QI group.

    ``removed``: bool mask over the group's cells (record by record, items in code order) of the
    answer; ``cost``: its T (equation 1); ``satisfied``: whether it passes the model; ``optimal``: the
    search exhausted the tree, so no cheaper satisfying pattern exists; ``nodes_visited``: node
    evaluations (for ``"adaptive"`` including the tentative ones that order the tailsets, each node is
    evaluated once); ``seconds``: time spent; ``first_solution_cost`` / ``first_solution_seconds``: the
    first satisfying node the search met (NaN when it met none); ``achieved``: the model's value of the
    answer (l' or the distance).
    """

    removed: np.ndarray
    cost: float
    satisfied: bool
    optimal: bool
    nodes_visited: int
    seconds: float
    first_solution_cost: float
    first_solution_seconds: float
    achieved: float = math.nan


def inverse_weighted_cost(
    lengths: Sequence[int] | np.ndarray, removed_counts: Sequence[int] | np.ndarray
) -> float:
    """Equation (1) of Shi et al. (2010): with w_i items in record i of which v_i are removed,
    ``sum_i sum_{j=w_i-v_i+1}^{w_i} 1/j`` over ``sum_i sum_{j=1}^{w_i} 1/j`` (0 when no record has items)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    removed_counts = np.asarray(removed_counts, dtype=np.int64)
    if lengths.shape != removed_counts.shape:
        raise ValueError("lengths and removed_counts must have the same shape")
    if np.any(removed_counts < 0) or np.any(removed_counts > lengths):
        raise ValueError("removed counts must lie in 0 .. the record's number of items")
    top = int(lengths.max()) if lengths.size else 0
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, top + 1))))
    total = harmonic[lengths].sum()
    if total == 0:
        return 0.0
    return float((harmonic[lengths] - harmonic[lengths - removed_counts]).sum() / total)


def model_parameters(model: QSModel) -> tuple[int, float, float, float]:
    if isinstance(model, QSCLDiversity):
        return kernels.CL, float(model.c), float(model.l), 0.0
    if isinstance(model, QSTCloseness):
        return kernels.T, 1.0, 0.0, float(model.t)
    raise ConfigError(f"model must be QSCLDiversity or QSTCloseness, got {model!r}")


@dataclass
class Scratch:
    """Per-label scratch space of the evaluations, shared by the groups of one table."""

    stamp: np.ndarray
    acc: np.ndarray
    touched: np.ndarray
    ints: np.ndarray  # only slot kernels.STAMP is shared

    @classmethod
    def of(cls, n_labels: int) -> Scratch:
        size = max(n_labels, 1)
        return cls(
            np.zeros(size, dtype=np.int64),
            np.zeros(size, dtype=np.float64),
            np.zeros(size, dtype=np.int64),
            np.zeros(8, dtype=np.int64),
        )


def _as_rows(records_items: Any) -> tuple[np.ndarray, np.ndarray]:
    """(record_start, cell items) of a group given as ItemSets, a scipy CSR or a list of item lists."""
    if isinstance(records_items, ItemSets):
        return records_items.indptr.astype(np.int64), records_items.items.astype(np.int64)
    if sp.issparse(records_items):
        matrix = sp.csr_matrix(records_items)
        matrix.sum_duplicates()
        matrix.sort_indices()
        return matrix.indptr.astype(np.int64), matrix.indices.astype(np.int64)
    rows = [np.unique(np.asarray(row, dtype=np.int64)) for row in records_items]
    lengths = np.array([len(row) for row in rows], dtype=np.int64)
    start = np.concatenate(([0], np.cumsum(lengths)))
    items = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return start, items.astype(np.int64)


def suppress_group(
    records_items: Any,
    linked_incidence: Any,
    prior: np.ndarray,
    model: QSModel,
    *,
    strategy: str = "adaptive",
    time_limit: float | None = 1.0,
    _scratch: Scratch | None = None,
) -> GroupSearch:
    """Search one QI group for the cheapest removal of (record, item) cells that makes it pass ``model``.

    Parameters
    ----------
    records_items
        The group's records: a list of item-code lists, a scipy CSR (records x items) or an
        :class:`~sdckit.setvalued.ItemSets`. The cells are numbered record by record, items in code
        order; ``GroupSearch.removed`` follows that numbering.
    linked_incidence
        Which labels each item belongs to: a scipy sparse ``items x |E|`` matrix (entry [x, L] true iff
        x is in S_L), e.g. ``knowledge.sets.to_sparse().T``, or the packed ``items x ceil(|E|/64)``
        uint64 bitsets used internally.
    prior
        alpha over the ``|E|`` labels (the table-wide prior of the original data; used by QS
        t-closeness).
    model
        :class:`~sdckit.models.quasi_sensitive.QSCLDiversity` or ``QSTCloseness``.
    strategy
        ``"adaptive"`` (tailset reordering) or ``"baseline"`` (lexicographic depth-first search).
    time_limit
        Seconds, or None to search until the tree is exhausted (the answer is then optimal).

    If no node satisfies the model (only possible with QS t-closeness, or an l above what removing
    every item reaches), the answer is the *best effort*: the visited node with the best l' (largest) or
    distance (smallest), ties to the cheaper one, with ``satisfied=False``.
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if time_limit is not None and not (isinstance(time_limit, int | float) and time_limit >= 0):
        raise ConfigError(f"time_limit must be a number of seconds >= 0 or None, got {time_limit!r}")
    kind, c, required_l, required_t = model_parameters(model)
    prior = np.ascontiguousarray(prior, dtype=np.float64)
    n_labels = prior.shape[0]
    if isinstance(linked_incidence, np.ndarray) and linked_incidence.dtype == np.uint64:
        item_bits = linked_incidence
    else:
        incidence = sp.csr_matrix(linked_incidence)
        if incidence.shape[1] != n_labels:
            raise ConfigError(f"linked_incidence has {incidence.shape[1]} labels, the prior {n_labels}")
        coo = incidence.tocoo()
        item_bits = np.zeros((incidence.shape[0], max((n_labels + 63) // 64, 1)), dtype=np.uint64)
        keep = coo.data != 0
        rows, labels = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
        np.bitwise_or.at(
            item_bits, (rows, labels >> 6), np.left_shift(np.uint64(1), (labels & 63).astype(np.uint64))
        )
    record_start, cell_items = _as_rows(records_items)
    warm_up()
    scratch = _scratch if _scratch is not None else Scratch.of(n_labels)
    return search_group(
        record_start,
        cell_items,
        item_bits,
        n_labels,
        prior,
        float(prior.sum()),
        float(np.square(prior).sum()),
        kind,
        c,
        required_l,
        required_t,
        strategy == "adaptive",
        time_limit,
        scratch,
    )


_WARM = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels once, so that no group's time bound pays it."""
    global _WARM
    if _WARM:
        return
    _WARM = True
    item_bits = np.array([[1], [3]], dtype=np.uint64)
    alpha = np.array([0.5, 0.5])
    scratch = Scratch.of(2)
    for adaptive in (True, False):
        search_group(
            np.array([0, 2, 3], dtype=np.int64),
            np.array([0, 1, 1], dtype=np.int64),
            item_bits,
            2,
            alpha,
            1.0,
            0.5,
            kernels.CL,
            1.0,
            2.0,
            0.0,
            adaptive,
            None,
            scratch,
        )
    kernels.link_bitsets(np.array([0, 1], dtype=np.int64), np.array([0], dtype=np.int32), item_bits, 2)


def search_group(
    record_start: np.ndarray,
    cell_items: np.ndarray,
    item_bits: np.ndarray,
    n_labels: int,
    alpha: np.ndarray,
    alpha_sum: float,
    alpha_square: float,
    kind: int,
    c: float,
    required_l: float,
    required_t: float,
    adaptive: bool,
    time_limit: float | None,
    scratch: Scratch,
    node_limit: int | None = None,
) -> GroupSearch:
    clock = time.perf_counter()
    d = record_start.shape[0] - 1
    m = cell_items.shape[0]
    w = np.diff(record_start).astype(np.int64)
    cell_record = np.repeat(np.arange(d, dtype=np.int64), w)
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, int(w.max(initial=0)) + 1))))
    norm = float(harmonic[w].sum()) if d else 0.0
    rows = item_bits[cell_items] if m else np.zeros((0, item_bits.shape[1]), dtype=np.uint64)
    used_words = np.flatnonzero(np.bitwise_or.reduce(rows, axis=0)) if m else np.zeros(0, np.int64)
    if used_words.size == 0:
        used_words = np.zeros(1, dtype=np.int64)
    cell_bits = np.ascontiguousarray(rows[:, used_words]) if m else np.zeros((0, 1), dtype=np.uint64)
    n_words = cell_bits.shape[1]
    removed = np.zeros(m, dtype=np.bool_)
    v = np.zeros(d, dtype=np.int64)
    kbits = np.zeros((d, n_words), dtype=np.uint64)
    ksize = np.zeros(d, dtype=np.int64)
    order = np.zeros((m + 1, max(m, 1)), dtype=np.int64)
    tail_length = np.zeros(m + 1, dtype=np.int64)
    position = np.zeros(m + 1, dtype=np.int64)
    cost = np.zeros(m + 1)
    score = np.zeros(m + 1)
    child_score = np.zeros((m + 1, max(m, 1)))
    best_mask = np.zeros(m, dtype=np.bool_)
    effort_mask = np.zeros(m, dtype=np.bool_)
    ints = scratch.ints
    ints[kernels.RESET] = 0
    floats = np.array([np.inf, np.nan, -np.inf, np.inf])
    # Removing every item is a solution unless even that fails; as an upper bound it prunes nothing
    # but the all-removed node itself (every other node costs less than 1), and it is the answer
    # if the search meets no cheaper satisfying node in time.
    fallback = bool(m and norm > 0) and _all_removed_passes(
        (d, n_words),
        used_words,
        n_labels,
        (alpha, alpha_sum, alpha_square),
        (kind, c, required_l, required_t),
        scratch,
    )
    if fallback:
        floats[kernels.BEST_COST] = 1.0
    args = (
        cell_record,
        record_start,
        w,
        cell_bits,
        used_words,
        n_labels,
        alpha,
        alpha_sum,
        alpha_square,
        kind,
        c,
        required_l,
        required_t,
        norm if norm > 0 else 1.0,
        adaptive,
        removed,
        v,
        kbits,
        ksize,
        scratch.stamp,
        scratch.acc,
        scratch.touched,
        order,
        tail_length,
        position,
        cost,
        score,
        child_score,
        best_mask,
        effort_mask,
        ints,
        floats,
    )
    first_seconds = _search_in_chunks(args, ints, clock, time_limit, node_limit)
    finished = bool(ints[kernels.FINISHED])
    found = bool(ints[kernels.FOUND])
    if found:
        answer, satisfied = best_mask.copy(), True
    elif fallback:
        answer, satisfied = np.ones(m, dtype=bool), True
    else:
        answer, satisfied = effort_mask.copy(), False
    achieved = _achieved(
        answer,
        cell_record,
        record_start,
        cell_bits,
        used_words,
        n_labels,
        alpha,
        alpha_sum,
        alpha_square,
        kind,
        c,
        scratch,
    )
    return GroupSearch(
        removed=answer,
        cost=inverse_weighted_cost(w, np.bincount(cell_record[answer], minlength=d)) if m else 0.0,
        satisfied=satisfied,
        optimal=finished,
        nodes_visited=int(ints[kernels.EVALUATIONS]),
        seconds=time.perf_counter() - clock,
        first_solution_cost=float(floats[kernels.FIRST_COST]) if found else math.nan,
        first_solution_seconds=first_seconds,
        achieved=achieved,
    )


def _all_removed_passes(
    shape: tuple[int, int],
    used_words: np.ndarray,
    n_labels: int,
    prior: tuple[np.ndarray, float, float],
    model: tuple[int, float, float, float],
    scratch: Scratch,
) -> bool:
    """Whether the group passes with every item removed (``shape``: its records and bit words): the
    fallback answer and the search's first upper bound."""
    d, n_words = shape
    alpha, alpha_sum, alpha_square = prior
    kind, c, required_l, required_t = model
    full = kernels.evaluate(
        np.zeros((d, n_words), dtype=np.uint64),
        np.full(d, -1, dtype=np.int64),
        used_words,
        n_labels,
        alpha,
        alpha_sum,
        alpha_square,
        kind,
        c,
        scratch.stamp,
        scratch.acc,
        scratch.touched,
        scratch.ints,
    )
    return bool(kernels.passes(full, kind, required_l, required_t))


def _search_in_chunks(
    args: tuple[Any, ...], ints: np.ndarray, clock: float, time_limit: float | None, node_limit: int | None
) -> float:
    """Run the compiled search in chunks of evaluations until it finishes, ``node_limit`` evaluations
    are spent or ``time_limit`` seconds from ``clock`` have passed; returns the seconds to the first
    solution (NaN if none)."""
    # numba's Dispatcher, as typed for mypy, takes no arguments: called through a plain callable.
    search: Callable[..., int] = kernels.search
    budget = 64
    first_seconds = math.nan
    while True:
        if node_limit is not None:
            # A deterministic bound: the search stops after exactly node_limit evaluations.
            budget = min(budget, node_limit - int(ints[kernels.EVALUATIONS]))
            if budget <= 0:
                break
        status = search(*args, budget)
        elapsed = time.perf_counter() - clock
        if status == 2:
            first_seconds = elapsed
            continue
        if status == 1:
            break
        if time_limit is not None and elapsed >= time_limit:
            break
        # Chunks of about 5 ms between two looks at the clock.
        rate = ints[kernels.EVALUATIONS] / max(elapsed, 1e-6)
        budget = int(min(max(rate * 0.005, 64), 1_000_000))
    return first_seconds


def _achieved(
    answer,
    cell_record,
    record_start,
    cell_bits,
    word_map,
    n_labels,
    alpha,
    alpha_sum,
    alpha_square,
    kind,
    c,
    scratch,
) -> float:
    d = record_start.shape[0] - 1
    kbits = np.zeros((d, cell_bits.shape[1]), dtype=np.uint64)
    ksize = np.zeros(d, dtype=np.int64)
    removed = np.ascontiguousarray(answer, dtype=np.bool_)
    for i in range(d):
        kernels.recompute_record(i, record_start, removed, cell_bits, kbits, ksize)
    value = kernels.evaluate(
        kbits,
        ksize,
        word_map,
        n_labels,
        alpha,
        alpha_sum,
        alpha_square,
        kind,
        c,
        scratch.stamp,
        scratch.acc,
        scratch.touched,
        scratch.ints,
    )
    if kind == kernels.T:
        return -value
    return value
