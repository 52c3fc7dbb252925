"""Two-phase anonymization of quasi-sensitive set-valued attributes (Shi, Xiong & Fung, 2010).

A quasi-sensitive (QS) set-valued attribute (symptoms, purchased items) is harmless alone, but an
adversary holding external knowledge E (sensitive label -> item set) links a record to the labels K(t)
whose item sets contain all of its items (Definition 2, :func:`sdckit.setvalued.linked_labels`), and so
to a belief about each QI group's labels (:mod:`sdckit.models.quasi_sensitive`). The paper protects
them in two phases:

1. **QI generalization**: Mondrian k-anonymity (LeFevre et al., 2006) on the quasi-identifiers; with
   ``k = 1`` no generalization, the groups are the records sharing their QI values exactly.
2. **QS term suppression**: every group that violates QS (c,l)-diversity or QS t-closeness is searched,
   on its own and with its own time bound, for the cheapest set of (record, item) cells whose removal
   makes it pass. Removing items only enlarges K(t) (fewer items are contained in more label sets), so
   it spreads the posterior over more labels.

The search (:func:`suppress_group`) walks the set-enumeration tree of Figure 3: the root removes
nothing, a node is a set of removed cells, and its children remove one more cell from its *tailset*
(the cells after the node's last removed cell in the node's order), so every removal pattern is one
node, reached once. The cost of a node is equation (1), the "inverse weighted cost"

    T = sum_i sum_{j = w_i - v_i + 1}^{w_i} 1/j  /  sum_i sum_{j = 1}^{w_i} 1/j

(record i has w_i items of which v_i are removed): removing a record's first item costs 1/w_i, its next
1/(w_i - 1), ... normalized by the cost of removing everything. Two strategies:

* ``"baseline"``: depth-first in lexicographic cell order (Figure 3).
* ``"adaptive"`` (adaptive tailset reordering, section 2.2): at every node each tailset cell is removed
  tentatively, and the tailset is reordered by decreasing ``gain / ΔT`` where the gain is Δl' (QS
  (c,l)-diversity: l' = the largest l the group satisfies) or the decrease of the distance to the prior
  (QS t-closeness); ties keep the cell order. The first satisfying node is the greedy solution; the
  search then goes on for cheaper ones.

Both keep the cheapest satisfying node found and prune with it: a child whose cost is already >= the
best cost is not visited, and a satisfying node is not expanded. Every removal adds a positive amount to
T, so every node below a pruned (or satisfying) node costs strictly more than it: the pruning never
loses the optimum, and a search that runs to the end has *proven* its answer optimal (``optimal=True``).
The models are not monotone in the removed set (removing an item may add a dominant label), so no
stronger bound is used. The search stops at its time bound with the best node so far
(``optimal=False``).

Implementation: the search runs in compiled kernels (:mod:`sdckit.anonymize._quasi_sensitive_kernels`).

References
----------
Shi, P., Xiong, L. & Fung, B. C. M. (2010). Anonymizing data with quasi-sensitive attribute values.
CIKM 2010, 1389-1392.
LeFevre, K., DeWitt, D. J. & Ramakrishnan, R. (2006). Mondrian multidimensional k-anonymity. ICDE 2006.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
import scipy.sparse as sp
from pydantic import Field, model_validator

from sdckit.anonymize import _quasi_sensitive_kernels as kernels
from sdckit.anonymize.base import Context, register_method
from sdckit.anonymize.mondrian import mondrian
from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.models import KAnonymity
from sdckit.models.quasi_sensitive import QSCLDiversity, QSModel, QSTCloseness, beliefs
from sdckit.params import Finite, MethodParams, Whole
from sdckit.setvalued import ItemSets, Knowledge
from sdckit.table import Kind, Role, Schema, Table

__all__ = [
    "STRATEGIES",
    "GroupSearch",
    "inverse_weighted_cost",
    "quasi_sensitive_anonymize",
    "suppress_group",
]

STRATEGIES = ("adaptive", "baseline")

ProgressCallback = Callable[[int, int], None]

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


def _model_parameters(model: QSModel) -> tuple[int, float, float, float]:
    if isinstance(model, QSCLDiversity):
        return kernels.CL, float(model.c), float(model.l), 0.0
    if isinstance(model, QSTCloseness):
        return kernels.T, 1.0, 0.0, float(model.t)
    raise ConfigError(f"model must be QSCLDiversity or QSTCloseness, got {model!r}")


@dataclass
class _Scratch:
    """Per-label scratch space of the evaluations, shared by the groups of one table."""

    stamp: np.ndarray
    acc: np.ndarray
    touched: np.ndarray
    ints: np.ndarray  # only slot kernels.STAMP is shared

    @classmethod
    def of(cls, n_labels: int) -> _Scratch:
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
    _scratch: _Scratch | None = None,
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
    kind, c, required_l, required_t = _model_parameters(model)
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
    _warm_up()
    scratch = _scratch if _scratch is not None else _Scratch.of(n_labels)
    return _search_group(
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


def _warm_up() -> None:
    """Compile (or load from numba's cache) the kernels once, so that no group's time bound pays it."""
    global _WARM
    if _WARM:
        return
    _WARM = True
    item_bits = np.array([[1], [3]], dtype=np.uint64)
    alpha = np.array([0.5, 0.5])
    scratch = _Scratch.of(2)
    for adaptive in (True, False):
        _search_group(
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


def _search_group(
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
    scratch: _Scratch,
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
    fallback = False
    if m and norm > 0:
        ksize_all = np.full(d, -1, dtype=np.int64)
        full = kernels.evaluate(
            kbits,
            ksize_all,
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
            ints,
        )
        if kernels.passes(full, kind, required_l, required_t):
            fallback = True
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
    budget = 64
    first_seconds = math.nan
    while True:
        if node_limit is not None:
            # A deterministic bound: the search stops after exactly node_limit evaluations.
            budget = min(budget, node_limit - int(ints[kernels.EVALUATIONS]))
            if budget <= 0:
                break
        status = kernels.search(*args, budget)
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


# ---------------------------------------------------------------------------------------------------
# The two phases over a table
# ---------------------------------------------------------------------------------------------------


def _check_parameters(
    table: Table,
    set_column: str,
    knowledge: Knowledge,
    k: Any,
    model: Any,
    separator: str,
    strategy: str,
    time_limit: Any,
    total_time_limit: Any,
    node_limit: Any = None,
) -> None:
    if node_limit is not None and (
        isinstance(node_limit, bool) or not isinstance(node_limit, int) or node_limit < 1
    ):
        raise ConfigError(f"node_limit must be a whole number >= 1 or None, got {node_limit!r}")
    if not isinstance(model, QSModel):
        raise ConfigError(f"model must be QSCLDiversity(c, l) or QSTCloseness(t), got {model!r}")
    _model_parameters(model)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ConfigError(f"k must be an integer >= 1, got {k!r}")
    if strategy not in STRATEGIES:
        raise ConfigError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    for name, value in (("time_limit", time_limit), ("total_time_limit", total_time_limit)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0
        ):
            raise ConfigError(f"{name} must be a number of seconds >= 0 or None, got {value!r}")
    if not isinstance(set_column, str) or set_column not in table.data.columns:
        raise ConfigError(
            f"set column {set_column!r} is not a column of the data "
            f"(columns: {', '.join(table.data.columns)})"
        )
    if not isinstance(knowledge, Knowledge):
        raise ConfigError(f"knowledge must be a sdckit.setvalued.Knowledge, got {type(knowledge).__name__}")
    if knowledge.n_labels == 0 or knowledge.sets.items.size == 0:
        raise ConfigError("the external knowledge is empty: give at least one label with its item set")
    if not isinstance(separator, str) or not separator:
        raise ConfigError(f"separator must be a non-empty string, got {separator!r}")
    if table.n_records == 0:
        raise ConfigError("the data has no records")


def _exact_groups(table: Table, names: list[str]) -> tuple[np.ndarray, int]:
    """Groups of records sharing all QI values (numbered in order of their first record)."""
    frame = table.data.select(names).with_row_index("__record")
    grouped = frame.group_by(names, maintain_order=True).agg(pl.col("__record"))
    classes = np.empty(table.n_records, dtype=np.int64)
    members = grouped.get_column("__record")
    sizes = members.list.len().to_numpy()
    classes[members.explode().to_numpy()] = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return classes, len(sizes)


def quasi_sensitive_anonymize(
    table: Table,
    *,
    set_column: str,
    knowledge: Knowledge,
    k: int,
    model: QSModel,
    quasi_identifiers: Sequence[str] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    separator: str = ";",
    strategy: str = "adaptive",
    time_limit: float | None = 1.0,
    total_time_limit: float | None = None,
    node_limit: int | None = None,
    items: ItemSets | None = None,
    progress: ProgressCallback | None = None,
) -> Release:
    """Two-phase anonymization of Shi, Xiong & Fung (2010): Mondrian k-anonymity on the
    quasi-identifiers, then QS term suppression in every QI group that violates ``model``.

    Parameters
    ----------
    set_column
        The quasi-sensitive set-valued column, items separated by ``separator`` (or lists of strings).
    knowledge
        External knowledge E (:class:`~sdckit.setvalued.Knowledge`), over any vocabulary: both are
        recoded to the union of the data's and E's items.
    k
        k-anonymity of phase 1 (Mondrian, strict mode, generalized output); ``k = 1``: no
        generalization, the groups are the records sharing all QI values.
    model
        :class:`~sdckit.models.quasi_sensitive.QSCLDiversity` or
        :class:`~sdckit.models.quasi_sensitive.QSTCloseness`; the prior of QS t-closeness is the
        table-wide prior of the *original* data (the mean of P(t -> L) over all records).
    strategy, time_limit
        Of every group's search (:func:`suppress_group`); ``time_limit`` bounds each group.
    total_time_limit
        Optional bound of the whole of phase 2: each group then gets at most its share of what is left
        (remaining time / groups left to search).
    node_limit
        Most node evaluations of every group's search (None: no bound). Unlike the time limits it
        makes the result independent of the machine's speed, so a recipe replays exactly.
    items
        ``set_column`` already parsed (:meth:`ItemSets.from_column` with ``separator``), so that a
        caller who read the knowledge against its vocabulary does not parse the column twice.
    progress
        Called as ``progress(groups_searched, groups_to_search)``.

    Returns a :class:`Release` with method ``"quasi-sensitive"``: the table of phase 1 (identifiers
    dropped, QIs generalized) with the removed items taken out of ``set_column`` (items written in
    vocabulary order, an empty set as ``""``, a null stays null); ``classes`` the QI groups;
    ``cell_penalty`` / ``suppressed_cells`` those of the QI part from Mondrian (zeros for ``k = 1``),
    so :func:`sdckit.utility.release_ncp` is the generalization loss; ``search`` a summary:
    ``groups``, ``violating_before``, ``violating_after`` (re-checked with
    :mod:`sdckit.models.quasi_sensitive`), ``searched``, ``proven_optimal``, ``unsatisfied`` (groups
    where no satisfying node was found: best effort, see :func:`suppress_group`), ``removal_cost_sum`` /
    ``removal_cost_mean`` (T of the searched groups), ``removal_cost_table`` (equation 1 over the whole
    table as one group), ``suppressed_items`` / ``items``, ``nodes_visited``, ``phase1_seconds``,
    ``phase2_seconds``, ``first_solution_seconds_mean``, ``generalization_ncp``, and ``per_group``
    (a dict of lists: group, records, cells, cost, satisfied, optimal, nodes, seconds,
    first_solution_cost, first_solution_seconds, achieved).

    Raises :class:`ConfigError` for bad parameters (``k < 1``, an unknown set column, empty knowledge,
    a model that is not a QS model; the models themselves reject ``c <= 0``, ``l < 1`` and ``t``
    outside [0, sqrt 2]).
    """
    _check_parameters(
        table, set_column, knowledge, k, model, separator, strategy, time_limit, total_time_limit, node_limit
    )
    kind, c, required_l, required_t = _model_parameters(model)
    _warm_up()
    started = time.perf_counter()
    if quasi_identifiers is not None and set_column in quasi_identifiers:
        raise ConfigError(f"'{set_column}' cannot be both quasi-identifier and the quasi-sensitive column")
    # Phase 1 ------------------------------------------------------------------------------------
    if k == 1:
        names = (
            list(quasi_identifiers)
            if quasi_identifiers is not None
            else [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name != set_column]
        )
        if not names:
            raise ConfigError("no quasi-identifiers: give role quasi-identifier to some attributes")
        for name in names:
            if name not in table.data.columns:
                raise ConfigError(
                    f"quasi-identifier '{name}' is not a column of the data "
                    f"(columns: {', '.join(table.data.columns)})"
                )
        classes, n_groups = _exact_groups(table, names)
        identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
        base_table = Table(
            table.data.drop(identifiers),
            Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER)),
            source=table.source,
        )
        cell_penalty = np.zeros((table.n_records, len(names)))
        suppressed_cells = None
        qi_names = tuple(names)
        used_hierarchies: dict[str, Hierarchy] = {}
    else:
        if quasi_identifiers is None:
            quasi_identifiers = [
                a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name != set_column
            ]
        phase1 = mondrian(
            table, [KAnonymity(int(k))], quasi_identifiers=quasi_identifiers, hierarchies=hierarchies
        )
        classes = phase1.classes
        n_groups = int(classes.max()) + 1
        base_table = phase1.table
        cell_penalty = phase1.cell_penalty
        suppressed_cells = phase1.suppressed_cells
        qi_names = phase1.quasi_identifiers
        used_hierarchies = dict(phase1.hierarchies)
    phase1_seconds = time.perf_counter() - started

    # Phase 2 ------------------------------------------------------------------------------------
    started = time.perf_counter()
    column = table.column(set_column)
    parsed = items if items is not None else ItemSets.from_column(column, separator)
    vocabulary = tuple(sorted(set(parsed.vocabulary) | set(knowledge.sets.vocabulary)))
    records = parsed.recode(vocabulary)
    sets = knowledge.sets.recode(vocabulary)
    n_labels = knowledge.n_labels
    item_bits = kernels.item_bitsets(sets, len(vocabulary))
    linked = kernels.linked_matrix(records, item_bits, n_labels)
    prior = kernels.prior(linked)
    before = model.evaluate(beliefs(classes, n_groups, linked, prior))
    violating = np.flatnonzero(~before.passes)

    order = np.argsort(classes, kind="stable")
    group_starts = np.concatenate(([0], np.cumsum(np.bincount(classes, minlength=n_groups))))
    lengths = records.lengths()
    removed = np.zeros(records.items.size, dtype=bool)
    alpha_sum, alpha_square = float(prior.sum()), float(np.square(prior).sum())
    scratch = _Scratch.of(n_labels)
    per_group: dict[str, list[Any]] = {
        key: []
        for key in (
            "group",
            "records",
            "cells",
            "cost",
            "satisfied",
            "optimal",
            "nodes",
            "seconds",
            "first_solution_cost",
            "first_solution_seconds",
            "achieved",
        )
    }
    phase2_clock = time.perf_counter()
    for index, group in enumerate(violating.tolist()):
        members = order[group_starts[group] : group_starts[group + 1]]
        member_lengths = lengths[members]
        record_start = np.concatenate(([0], np.cumsum(member_lengths)))
        # positions of the group's cells among the stored items, record by record
        positions = np.repeat(records.indptr[members] - record_start[:-1], member_lengths) + np.arange(
            record_start[-1]
        )
        limit = time_limit
        if total_time_limit is not None:
            left = total_time_limit - (time.perf_counter() - phase2_clock)
            share = max(left, 0.0) / (len(violating) - index)
            limit = share if limit is None else min(limit, share)
        result = _search_group(
            record_start.astype(np.int64),
            records.items[positions].astype(np.int64),
            item_bits,
            n_labels,
            prior,
            alpha_sum,
            alpha_square,
            kind,
            c,
            required_l,
            required_t,
            strategy == "adaptive",
            limit,
            scratch,
            node_limit,
        )
        removed[positions[result.removed]] = True
        for key, value in (
            ("group", group),
            ("records", len(members)),
            ("cells", int(record_start[-1])),
            ("cost", result.cost),
            ("satisfied", result.satisfied),
            ("optimal", result.optimal),
            ("nodes", result.nodes_visited),
            ("seconds", result.seconds),
            ("first_solution_cost", result.first_solution_cost),
            ("first_solution_seconds", result.first_solution_seconds),
            ("achieved", result.achieved),
        ):
            per_group[key].append(value)
        if progress is not None:
            progress(index + 1, len(violating))

    released_sets = records.without(removed)
    after_linked = kernels.linked_matrix(released_sets, item_bits, n_labels)
    after = model.evaluate(beliefs(classes, n_groups, after_linked, prior))
    new_column = released_sets.to_column(separator, name=set_column)
    if column.null_count():
        new_column = pl.select(
            pl.when(pl.lit(column.is_null())).then(None).otherwise(pl.lit(new_column)).alias(set_column)
        ).to_series()
    if column.dtype != pl.String and not isinstance(column.dtype, pl.List):
        new_column = new_column.cast(pl.String)
    released = base_table.data.with_columns(new_column)
    phase2_seconds = time.perf_counter() - started

    from sdckit.utility import release_ncp

    costs = np.array(per_group["cost"], dtype=np.float64)
    first = np.array(per_group["first_solution_seconds"], dtype=np.float64)
    remaining = np.bincount(released_sets.record_of_entries(), minlength=records.n_records)
    search = {
        "strategy": strategy,
        "time_limit": time_limit,
        "total_time_limit": total_time_limit,
        "groups": n_groups,
        "violating_before": int(violating.size),
        "violating_after": int(np.count_nonzero(~after.passes)),
        "searched": int(violating.size),
        "proven_optimal": int(np.count_nonzero(per_group["optimal"])),
        "unsatisfied": int(violating.size - np.count_nonzero(per_group["satisfied"])),
        "removal_cost_sum": float(costs.sum()),
        "removal_cost_mean": float(costs.mean()) if costs.size else 0.0,
        "removal_cost_table": inverse_weighted_cost(lengths, lengths - remaining),
        "suppressed_items": int(np.count_nonzero(removed)),
        "items": int(records.items.size),
        "nodes_visited": int(np.sum(per_group["nodes"])),
        "phase1_seconds": phase1_seconds,
        "phase2_seconds": phase2_seconds,
        "first_solution_seconds_mean": float(np.nanmean(first)) if np.isfinite(first).any() else math.nan,
        "per_group": per_group,
    }
    release = Release(
        table=Table(released, base_table.schema, source=table.source),
        original=table,
        method="quasi-sensitive",
        parameters={
            "k": int(k),
            "model": model.name,
            "set_column": set_column,
            "separator": separator,
            "strategy": strategy,
            "time_limit": time_limit,
            "total_time_limit": total_time_limit,
            "labels": n_labels,
        },
        quasi_identifiers=qi_names,
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=classes,
        hierarchies=used_hierarchies,
        heuristic=bool(violating.size and len(per_group["optimal"]) > sum(per_group["optimal"])),
        search=search,
        cell_penalty=cell_penalty,
        suppressed_cells=suppressed_cells,
    )
    search["generalization_ncp"] = release_ncp(release)
    return release


# ---------------------------------------------------------------------------------------------------
# Registered method
# ---------------------------------------------------------------------------------------------------


class QuasiSensitiveParams(MethodParams):
    """Parameters of QS anonymization (``sdckit anonymize quasi-sensitive``; Shi, Xiong & Fung, 2010).

    Give ``l`` (with ``c``) for QS (c,l)-diversity or ``t`` for QS t-closeness. Each violating group's
    search is bounded by ``node_limit`` evaluations (deterministic: a recipe replays exactly) or, when
    no node limit is given, by ``time_limit`` seconds (default 1) and ``total_time_limit`` (then the
    result depends on the machine's speed and a recipe says it will not replay exactly).
    """

    knowledge: Annotated[Path, Field(description="External knowledge (label -> items), CSV or YAML.")]
    k: Annotated[Whole, Field(ge=1, description="k of the k-anonymity of phase 1 (Mondrian).")] = 1
    l: Annotated[Whole | None, Field(ge=1, description="l of QS (c,l)-diversity.")] = None  # noqa: E741
    c: Annotated[
        Finite, Field(gt=0, description="c of QS (c,l)-diversity.", json_schema_extra={"option": "--c"})
    ] = 1.0
    t: Annotated[Finite | None, Field(ge=0, description="t of QS t-closeness.")] = None
    set_column: Annotated[
        str | None, Field(description="The set-valued column (default: the one with role quasi-sensitive).")
    ] = None
    separator: Annotated[str, Field(min_length=1, description="Separator of the items in a set.")] = ";"
    strategy: Annotated[
        Literal["adaptive", "baseline"], Field(description="adaptive (tailset reordering) or baseline DFS.")
    ] = "adaptive"
    time_limit: Annotated[
        Finite | None, Field(gt=0, description="Seconds of search per violating group (default 1).")
    ] = None
    total_time_limit: Annotated[
        Finite | None, Field(gt=0, description="Seconds for all group searches together.")
    ] = None
    node_limit: Annotated[
        Whole | None, Field(ge=1, description="Node evaluations per group search (deterministic).")
    ] = None

    @model_validator(mode="after")
    def _one_model_one_bound(self) -> QuasiSensitiveParams:
        if self.l is None and self.t is None:
            raise ValueError("needs a model: {l} (with {c}) for QS (c,l)-diversity or {t} for QS t-closeness")
        if self.l is not None and self.t is not None:
            raise ValueError("takes {l} or {t}, not both")
        if self.node_limit is not None and (self.time_limit is not None or self.total_time_limit is not None):
            raise ValueError(
                "takes {node_limit} or the time limits ({time_limit}, {total_time_limit}), not both"
            )
        return self

    @property
    def effective_time_limit(self) -> float | None:
        return None if self.node_limit is not None else (1.0 if self.time_limit is None else self.time_limit)


def _qs_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import class_figures

    search = release.search
    params = release.params
    return {
        "model": release.parameters["model"],
        "k": params.k,
        "set_column": release.parameters["set_column"],
        "strategy": params.strategy,
        "time_limit": params.effective_time_limit,
        "total_time_limit": params.total_time_limit,
        "node_limit": params.node_limit,
        "groups": search["groups"],
        "violating_before": search["violating_before"],
        "violating_after": search["violating_after"],
        "searched": search["searched"],
        "proven_optimal": search["proven_optimal"],
        "suppressed_items": search["suppressed_items"],
        "items": search["items"],
        "removal_cost_mean": search["removal_cost_mean"],
        "phase1_seconds": search["phase1_seconds"],
        "phase2_seconds": search["phase2_seconds"],
        **class_figures(release),
        "metrics": {
            "generalization_ncp": search["generalization_ncp"],
            "removal_cost": search["removal_cost_mean"],
        },
    }


def _qs_report(f: dict[str, Any]) -> list[str]:
    bound = f"{f['node_limit']:,} nodes" if f["node_limit"] is not None else f"{f['time_limit']:g} s"
    return [
        f"{f['model']}: {f['violating_before']:,} of {f['groups']:,} groups violated it after k-anonymity "
        f"(k = {f['k']}), {f['violating_after']:,} after suppressing {f['suppressed_items']:,} of "
        f"{f['items']:,} items; {f['proven_optimal']:,} of {f['searched']:,} searches proven optimal within "
        f"{bound} each",
        "utility: " + "; ".join(f"{name} {value:.4g}" for name, value in f["metrics"].items()),
    ]


def _qs_violation(release: Release, figures: dict[str, Any]) -> str | None:
    left = figures["violating_after"]
    return f"{left:,} of {figures['groups']:,} groups still violate {figures['model']}" if left else None


@register_method(
    "quasi-sensitive",
    QuasiSensitiveParams,
    summary=_qs_summary,
    help="k-anonymity, then item suppression for QS (c,l)-diversity or QS t-closeness (Shi et al.).",
    report=_qs_report,
    violation=_qs_violation,
    exact_replay=lambda params: params.node_limit is not None,
    progress_label="groups",
    not_reapplicable=(
        "what it releases for a record depends on the other records of its group, not only on the "
        "record's own values"
    ),
    examples={"minimal": {"knowledge": "knowledge.csv", "l": 2}},
)
def _run_quasi_sensitive(table: Table, params: QuasiSensitiveParams, context: Context) -> Release:
    from sdckit.setvalued import read_knowledge

    set_column = params.set_column or _set_column(table)
    if set_column not in table.data.columns:
        raise ConfigError(f"set_column '{set_column}' is not a column of the data")
    items = ItemSets.from_column(table.column(set_column), separator=params.separator)
    facts = read_knowledge(params.knowledge, vocabulary=items.vocabulary, separator=params.separator)
    model = QSCLDiversity(params.c, params.l) if params.l is not None else QSTCloseness(params.t)
    release = quasi_sensitive_anonymize(
        table,
        set_column=set_column,
        knowledge=facts,
        k=params.k,
        model=model,
        separator=params.separator,
        strategy=params.strategy,
        time_limit=params.effective_time_limit,
        total_time_limit=params.total_time_limit,
        node_limit=params.node_limit,
        items=items,
        progress=context.progress,
    )
    return replace(release, params=params.model_copy(update={"set_column": set_column}))


def _set_column(table: Table) -> str:
    candidates = [
        a.name for a in table.schema.attributes if a.role is Role.QUASI_SENSITIVE or a.kind is Kind.SET_VALUED
    ]
    if len(candidates) != 1:
        found = (
            "no attribute has role quasi-sensitive or kind set-valued"
            if not candidates
            else f"several attributes could be the set-valued one ({', '.join(candidates)})"
        )
        raise ConfigError(f"set_column is needed: {found}")
    return candidates[0]
