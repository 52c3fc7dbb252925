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

Implementation: one group's search is :mod:`sdckit.anonymize._quasi_sensitive_group`, on
compiled kernels (:mod:`sdckit.anonymize._quasi_sensitive_kernels`).

References
----------
Shi, P., Xiong, L. & Fung, B. C. M. (2010). Anonymizing data with quasi-sensitive attribute values.
CIKM 2010, 1389-1392.
LeFevre, K., DeWitt, D. J. & Ramakrishnan, R. (2006). Mondrian multidimensional k-anonymity. ICDE 2006.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Self, cast

import numpy as np
import polars as pl
from pydantic import ConfigDict, Field, model_validator

from sdckit.anonymize import _quasi_sensitive_group as group_search
from sdckit.anonymize import _quasi_sensitive_kernels as kernels
from sdckit.anonymize._quasi_sensitive_group import (
    STRATEGIES,
    GroupSearch,
    inverse_weighted_cost,
    suppress_group,
)
from sdckit.anonymize.base import Context, register_method, run_method
from sdckit.anonymize.mondrian import mondrian
from sdckit.anonymize.release import Figures, Release
from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.models import KAnonymity
from sdckit.models.quasi_sensitive import QSCLDiversity, QSModel, QSTCloseness, beliefs
from sdckit.params import (
    C_BOUNDS,
    K_BOUNDS,
    L_BOUNDS,
    QS_T_BOUNDS,
    Finite,
    MethodParams,
    QSDistance,
    Whole,
    spell,
)
from sdckit.setvalued import ItemSets, Knowledge
from sdckit.table import Kind, Role, Schema, Table

__all__ = [
    "STRATEGIES",
    "GroupSearch",
    "QuasiSensitiveCall",
    "QuasiSensitiveFigures",
    "QuasiSensitiveParams",
    "inverse_weighted_cost",
    "quasi_sensitive_anonymize",
    "suppress_group",
]


@dataclass(frozen=True)
class QuasiSensitiveFigures(Figures):
    """What the two phases found (see :func:`quasi_sensitive_anonymize`): the model's name and the
    number of labels of the knowledge; the QI ``groups``, those violating the model before and after
    phase 2 (re-checked), the groups ``searched``, ``proven_optimal`` and ``unsatisfied``; the removal
    cost T (sum and mean over the searched groups, and over the whole table as one group); the items
    suppressed of all ``items``; ``nodes_visited``; the seconds of both phases and the mean time to a
    first solution; the NCP of phase 1's generalization; and ``per_group``, a dict of lists (group,
    records, cells, cost, satisfied, optimal, nodes, seconds, first_solution_cost,
    first_solution_seconds, achieved)."""

    model: str
    labels: int
    groups: int
    violating_before: int
    violating_after: int
    searched: int
    proven_optimal: int
    unsatisfied: int
    removal_cost_sum: float
    removal_cost_mean: float
    removal_cost_table: float
    suppressed_items: int
    items: int
    nodes_visited: int
    phase1_seconds: float
    phase2_seconds: float
    first_solution_seconds_mean: float
    generalization_ncp: float
    per_group: dict[str, list[Any]] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------
# The two phases over a table
# ---------------------------------------------------------------------------------------------------


def _exact_groups(table: Table, names: list[str]) -> tuple[np.ndarray, int]:
    """Groups of records sharing all QI values (numbered in order of their first record)."""
    frame = table.data.select(names).with_row_index("__record")
    grouped = frame.group_by(names, maintain_order=True).agg(pl.col("__record"))
    classes = np.empty(table.n_records, dtype=np.int64)
    members = grouped.get_column("__record")
    sizes = members.list.len().to_numpy()
    classes[members.explode().to_numpy()] = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return classes, len(sizes)


@dataclass(frozen=True)
class _Groups:
    """Phase 1's QI groups: each record's group, the table released so far (identifiers dropped, QIs
    generalized), and what the Release keeps of it."""

    classes: np.ndarray
    n_groups: int
    table: Table
    cell_penalty: np.ndarray | None
    suppressed_cells: np.ndarray | None
    quasi_identifiers: tuple[str, ...]
    hierarchies: dict[str, Hierarchy]


def _phase_one(
    table: Table,
    set_column: str,
    k: int,
    quasi_identifiers: Sequence[str] | None,
    hierarchies: Mapping[str, Hierarchy] | None,
) -> _Groups:
    """Phase 1: Mondrian k-anonymity on the quasi-identifiers, or (``k = 1``) the records sharing
    all QI values, ungeneralized."""
    if quasi_identifiers is not None and set_column in quasi_identifiers:
        raise ConfigError(f"'{set_column}' cannot be both quasi-identifier and the quasi-sensitive column")
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
        return _Groups(
            classes, n_groups, base_table, np.zeros((table.n_records, len(names))), None, tuple(names), {}
        )
    if quasi_identifiers is None:
        quasi_identifiers = [
            a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name != set_column
        ]
    phase1 = mondrian(
        table, [KAnonymity(int(k))], quasi_identifiers=quasi_identifiers, hierarchies=hierarchies
    )
    return _Groups(
        phase1.classes,
        int(phase1.classes.max()) + 1,
        phase1.table,
        phase1.cell_penalty,
        phase1.suppressed_cells,
        phase1.quasi_identifiers,
        dict(phase1.hierarchies),
    )


def _search_groups(
    violating: np.ndarray,
    classes: np.ndarray,
    n_groups: int,
    records: ItemSets,
    item_bits: np.ndarray,
    prior: np.ndarray,
    model_parameters: tuple[int, float, float, float],
    *,
    strategy: str,
    time_limit: float | None,
    total_time_limit: float | None,
    node_limit: int | None,
    progress: ProgressCallback | None,
) -> tuple[np.ndarray, dict[str, list[Any]]]:
    """Phase 2: search every violating group on its own (:func:`group_search.search_group`), each
    with its time bound (and its share of ``total_time_limit``). Returns which stored items are
    removed and the figures of every group searched (``per_group`` of :class:`QuasiSensitiveFigures`)."""
    kind, c, required_l, required_t = model_parameters
    n_labels = len(prior)
    order = np.argsort(classes, kind="stable")
    group_starts = np.concatenate(([0], np.cumsum(np.bincount(classes, minlength=n_groups))))
    lengths = records.lengths()
    removed = np.zeros(records.items.size, dtype=bool)
    alpha_sum, alpha_square = float(prior.sum()), float(np.square(prior).sum())
    scratch = group_search.Scratch.of(n_labels)
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
        result = group_search.search_group(
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
    return removed, per_group


def _released_column(column: pl.Series, released_sets: ItemSets, separator: str) -> pl.Series:
    """The set column with the removed items taken out: items in vocabulary order, an empty set as
    ``""``, a null kept null, text unless the column held lists."""
    new_column = released_sets.to_column(separator, name=column.name)
    if column.null_count():
        new_column = pl.select(
            pl.when(pl.lit(column.is_null())).then(None).otherwise(pl.lit(new_column)).alias(column.name)
        ).to_series()
    if column.dtype != pl.String and not isinstance(column.dtype, pl.List):
        new_column = new_column.cast(pl.String)
    return new_column


def _group_figures(
    n_groups: int,
    violating: np.ndarray,
    after: Any,
    per_group: dict[str, list[Any]],
    records: ItemSets,
    released_sets: ItemSets,
    removed: np.ndarray,
) -> dict[str, Any]:
    """The figures of the groups and their searches (:class:`QuasiSensitiveFigures` from ``groups``
    to ``nodes_visited``)."""
    lengths = records.lengths()
    costs = np.array(per_group["cost"], dtype=np.float64)
    remaining = np.bincount(released_sets.record_of_entries(), minlength=records.n_records)
    return {
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
    }


# ---------------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------------

# Seconds of search, more than 0: one rule for the command line and the Python function.
_Seconds = Annotated[Finite | None, Field(gt=0)]


class QuasiSensitiveParams(MethodParams):
    """Parameters of QS anonymization (``sdckit anonymize quasi-sensitive``; Shi, Xiong & Fung, 2010).

    Give ``l`` (with ``c``) for QS (c,l)-diversity or ``t`` for QS t-closeness. Each violating group's
    search is bounded by ``node_limit`` evaluations (deterministic: a recipe replays exactly) or, when
    no node limit is given, by ``time_limit`` seconds (default 1) and ``total_time_limit`` (then the
    result depends on the machine's speed and a recipe says it will not replay exactly).
    """

    knowledge: Annotated[Path, Field(description="External knowledge (label -> items), CSV or YAML.")]
    k: Annotated[Whole, K_BOUNDS, Field(description="k of the k-anonymity of phase 1 (Mondrian).")] = 1
    l: Annotated[Whole | None, L_BOUNDS, Field(description="l of QS (c,l)-diversity.")] = None  # noqa: E741
    c: Annotated[
        Finite, C_BOUNDS, Field(description="c of QS (c,l)-diversity.", json_schema_extra={"option": "--c"})
    ] = 1.0
    t: Annotated[QSDistance | None, QS_T_BOUNDS, Field(description="t of QS t-closeness.")] = None
    set_column: Annotated[
        str | None, Field(description="The set-valued column (default: the one with role quasi-sensitive).")
    ] = None
    separator: Annotated[str, Field(min_length=1, description="Separator of the items in a set.")] = ";"
    strategy: Annotated[
        Literal["adaptive", "baseline"], Field(description="adaptive (tailset reordering) or baseline DFS.")
    ] = "adaptive"
    time_limit: Annotated[
        _Seconds, Field(description="Seconds of search per violating group (default 1).")
    ] = None
    total_time_limit: Annotated[_Seconds, Field(description="Seconds for all group searches together.")] = (
        None
    )
    node_limit: Annotated[
        Whole | None, Field(ge=1, description="Node evaluations per group search (deterministic).")
    ] = None

    @model_validator(mode="after")
    def _one_model(self) -> Self:
        if self.l is None and self.t is None:
            raise ValueError("needs a model: {l} (with {c}) for QS (c,l)-diversity or {t} for QS t-closeness")
        if self.l is not None and self.t is not None:
            raise ValueError("takes {l} or {t}, not both")
        return self

    @model_validator(mode="after")
    def _one_bound(self) -> Self:
        # A replayable run is bounded by nodes alone: a time limit beside it would make the result
        # depend on the machine again.
        if self.node_limit is not None and (self.time_limit is not None or self.total_time_limit is not None):
            raise ValueError(
                "takes {node_limit} or the time limits ({time_limit}, {total_time_limit}), not both"
            )
        return self

    @property
    def effective_time_limit(self) -> float | None:
        """The bound of every group's search: none under a node limit, else ``time_limit`` (1 s when
        not given)."""
        return None if self.node_limit is not None else (1.0 if self.time_limit is None else self.time_limit)

    def qs_model(self) -> QSModel:
        """QS (c,l)-diversity or QS t-closeness, as ``l`` (with ``c``) or ``t`` ask."""
        # The validator asks for l or t.
        return QSCLDiversity(self.c, self.l) if self.l is not None else QSTCloseness(cast(float, self.t))


class QuasiSensitiveCall(QuasiSensitiveParams):
    """QS anonymization's parameters as the Python function :func:`quasi_sensitive_anonymize` takes
    them: the external knowledge as a :class:`~sdckit.setvalued.Knowledge` instead of a file, the
    ``model`` object instead of l, c and t, the quasi-identifiers and hierarchies of phase 1 (default:
    the schema's) and ``items``, the set column already parsed. Not a command-line method's
    parameters (the objects have no text form); its recipe names the model.

    The search bounds are the keyword function's: ``time_limit`` defaults to 1 s and ``None`` means
    no per-group bound (the experiments bound a whole run by ``total_time_limit`` alone, and the
    tests run searches to their proven optimum), and a ``node_limit`` applies together with the time
    limits, whichever is reached first. Only a command line's run, whose recipe must replay, takes
    the node limit alone.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    knowledge: Knowledge  # type: ignore[assignment]  # the object in place of the command line's file
    model: QSModel | None = None
    quasi_identifiers: tuple[str, ...] | None = None
    hierarchies: dict[str, Hierarchy] | None = None
    items: ItemSets | None = None
    time_limit: Annotated[
        _Seconds, Field(description="Seconds of search per violating group (None: no bound).")
    ] = 1.0

    @model_validator(mode="after")
    def _one_model(self) -> Self:  # in place of the rule on l and t
        if self.model is None:
            raise ValueError("needs a {model}: QSCLDiversity(c, l) or QSTCloseness(t)")
        given = [name for name in ("l", "c", "t") if name in self.model_fields_set]
        if given:
            raise ValueError(
                f"takes the {{model}} object, not {', '.join('{' + name + '}' for name in given)}"
            )
        return self

    @model_validator(mode="after")
    def _one_bound(self) -> Self:  # in place of "node_limit or the time limits": both may bound
        return self

    @property
    def effective_time_limit(self) -> float | None:
        """``time_limit`` as given (None: no per-group bound)."""
        return self.time_limit

    def qs_model(self) -> QSModel:
        """The model object given (its validator asks for one)."""
        return cast(QSModel, self.model)

    def to_recipe(self) -> dict[str, Any]:
        """The model by name and the run's settings (the objects have no text form)."""
        return {
            "model": self.qs_model().name,
            "k": self.k,
            "set_column": self.set_column,
            "separator": self.separator,
            "strategy": self.strategy,
            "time_limit": self.time_limit,
            "total_time_limit": self.total_time_limit,
            "node_limit": self.node_limit,
            "quasi_identifiers": None if self.quasi_identifiers is None else list(self.quasi_identifiers),
        }


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
        Of every group's search (:func:`suppress_group`); ``time_limit`` (seconds, > 0) bounds each
        group, ``None``: no bound.
    total_time_limit
        Optional bound of the whole of phase 2: each group then gets at most its share of what is left
        (remaining time / groups left to search).
    node_limit
        Most node evaluations of every group's search (None: no bound), together with the time
        limits. Alone (``time_limit=None``) it makes the result independent of the machine's speed, so
        a recipe replays exactly.
    items
        ``set_column`` already parsed (:meth:`ItemSets.from_column` with ``separator``), so that a
        caller who read the knowledge against its vocabulary does not parse the column twice.
    progress
        Called as ``progress(groups_searched, groups_to_search)``.

    Returns a :class:`Release` with method ``"quasi-sensitive"`` and ``params`` a
    :class:`QuasiSensitiveCall`: the table of phase 1 (identifiers dropped, QIs generalized) with
    the removed items taken out of ``set_column`` (items written in vocabulary order, an empty set as
    ``""``, a null stays null); ``classes`` the QI groups; ``cell_penalty`` / ``suppressed_cells``
    those of the QI part from Mondrian (zeros for ``k = 1``), so :func:`sdckit.utility.release_ncp`
    is the generalization loss; ``figures`` a :class:`QuasiSensitiveFigures`: ``model``, ``labels``,
    ``groups``, ``violating_before``, ``violating_after`` (re-checked with
    :mod:`sdckit.models.quasi_sensitive`), ``searched``, ``proven_optimal``, ``unsatisfied`` (groups
    where no satisfying node was found: best effort, see :func:`suppress_group`),
    ``removal_cost_sum`` / ``removal_cost_mean`` (T of the searched groups), ``removal_cost_table``
    (equation 1 over the whole table as one group), ``suppressed_items`` / ``items``,
    ``nodes_visited``, ``phase1_seconds``, ``phase2_seconds``, ``first_solution_seconds_mean``,
    ``generalization_ncp``, and ``per_group`` (a dict of lists: group, records, cells, cost,
    satisfied, optimal, nodes, seconds, first_solution_cost, first_solution_seconds, achieved).

    Raises :class:`ConfigError` for bad parameters (those of :class:`QuasiSensitiveCall`: ``k < 1``,
    an unknown strategy, a time limit <= 0, a model that is not a QS model, ...; the models
    themselves reject ``c <= 0``, ``l < 1`` and ``t`` outside [0, sqrt 2]), an unknown set column,
    empty knowledge or no records.
    """
    return run_method(
        "quasi-sensitive",
        table,
        QuasiSensitiveCall.parse(
            {
                "set_column": set_column,
                "knowledge": knowledge,
                "k": k,
                "model": model,
                "quasi_identifiers": quasi_identifiers,
                "hierarchies": hierarchies,
                "separator": separator,
                "strategy": strategy,
                "time_limit": time_limit,
                "total_time_limit": total_time_limit,
                "node_limit": node_limit,
                "items": items,
            },
            method="quasi-sensitive",
        ),
        Context(progress=progress),
    )


# ---------------------------------------------------------------------------------------------------
# Registered method
# ---------------------------------------------------------------------------------------------------


def _qs_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import class_figures

    figures = release.figures_as(QuasiSensitiveFigures)
    params = release.params
    return {
        "model": figures.model,
        "k": params.k,
        "set_column": params.set_column,
        "strategy": params.strategy,
        "time_limit": params.effective_time_limit,
        "total_time_limit": params.total_time_limit,
        "node_limit": params.node_limit,
        "groups": figures.groups,
        "violating_before": figures.violating_before,
        "violating_after": figures.violating_after,
        "searched": figures.searched,
        "proven_optimal": figures.proven_optimal,
        "suppressed_items": figures.suppressed_items,
        "items": figures.items,
        "removal_cost_mean": figures.removal_cost_mean,
        "phase1_seconds": figures.phase1_seconds,
        "phase2_seconds": figures.phase2_seconds,
        **class_figures(release),
        "metrics": {
            "generalization_ncp": figures.generalization_ncp,
            "removal_cost": figures.removal_cost_mean,
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
    examples={
        "minimal": {"knowledge": "knowledge.csv", "l": 2},
        "replay on set-valued": {"k": 2, "l": 2, "node_limit": 1000, "knowledge": "knowledge.csv"},
    },
)
def _run_quasi_sensitive(table: Table, params: QuasiSensitiveParams, context: Context) -> Release:
    """The two phases (see :func:`quasi_sensitive_anonymize`) with the knowledge file, l, c and t of
    ``params`` (:class:`QuasiSensitiveParams`), or the objects of a :class:`QuasiSensitiveCall`."""
    set_column, items, knowledge = _inputs(table, params)
    model = params.qs_model()
    model_parameters = group_search.model_parameters(model)
    quasi_identifiers, hierarchies = (
        (params.quasi_identifiers, params.hierarchies)
        if isinstance(params, QuasiSensitiveCall)
        else (None, None)
    )
    group_search.warm_up()
    started = time.perf_counter()
    groups = _phase_one(table, set_column, params.k, quasi_identifiers, hierarchies)
    classes, n_groups = groups.classes, groups.n_groups
    phase1_seconds = time.perf_counter() - started

    # Phase 2 ------------------------------------------------------------------------------------
    started = time.perf_counter()
    column = table.column(set_column)
    vocabulary = tuple(sorted(set(items.vocabulary) | set(knowledge.sets.vocabulary)))
    records = items.recode(vocabulary)
    n_labels = knowledge.n_labels
    item_bits = kernels.item_bitsets(knowledge.sets.recode(vocabulary), len(vocabulary))
    linked = kernels.linked_matrix(records, item_bits, n_labels)
    prior = kernels.prior(linked)
    before = model.evaluate(beliefs(classes, n_groups, linked, prior))
    violating = np.flatnonzero(~before.passes)

    removed, per_group = _search_groups(
        violating,
        classes,
        n_groups,
        records,
        item_bits,
        prior,
        model_parameters,
        strategy=params.strategy,
        time_limit=params.effective_time_limit,
        total_time_limit=params.total_time_limit,
        node_limit=params.node_limit,
        progress=context.progress,
    )

    released_sets = records.without(removed)
    after_linked = kernels.linked_matrix(released_sets, item_bits, n_labels)
    after = model.evaluate(beliefs(classes, n_groups, after_linked, prior))
    released = groups.table.data.with_columns(_released_column(column, released_sets, params.separator))
    phase2_seconds = time.perf_counter() - started

    from sdckit.utility import release_ncp

    first = np.array(per_group["first_solution_seconds"], dtype=np.float64)
    figures = QuasiSensitiveFigures(
        model=model.name,
        labels=n_labels,
        **_group_figures(n_groups, violating, after, per_group, records, released_sets, removed),
        phase1_seconds=phase1_seconds,
        phase2_seconds=phase2_seconds,
        first_solution_seconds_mean=float(np.nanmean(first)) if np.isfinite(first).any() else math.nan,
        generalization_ncp=math.nan,
        per_group=per_group,
    )
    release = Release(
        table=Table(released, groups.table.schema, source=table.source),
        original=table,
        method="quasi-sensitive",
        params=params.model_copy(update={"set_column": set_column}),
        quasi_identifiers=groups.quasi_identifiers,
        suppressed_records=np.zeros(table.n_records, dtype=bool),
        classes=classes,
        hierarchies=groups.hierarchies,
        heuristic=bool(violating.size and len(per_group["optimal"]) > sum(per_group["optimal"])),
        figures=figures,
        cell_penalty=groups.cell_penalty,
        suppressed_cells=groups.suppressed_cells,
    )
    return replace(release, figures=replace(figures, generalization_ncp=release_ncp(release)))


def _inputs(table: Table, params: QuasiSensitiveParams) -> tuple[str, ItemSets, Knowledge]:
    """The data's rules: the set column (given, or the schema's), parsed, and the knowledge (read
    against its vocabulary from the file, or the object given); not empty, and records to release."""
    set_column = params.set_column or _set_column(table)
    if set_column not in table.data.columns:
        columns = ", ".join(table.data.columns)
        raise ConfigError(f"set_column '{set_column}' is not a column of the data (columns: {columns})")
    if isinstance(params, QuasiSensitiveCall):
        knowledge = params.knowledge
        items = (
            params.items
            if params.items is not None
            else ItemSets.from_column(table.column(set_column), params.separator)
        )
    else:
        from sdckit.setvalued import read_knowledge

        items = ItemSets.from_column(table.column(set_column), separator=params.separator)
        knowledge = read_knowledge(params.knowledge, vocabulary=items.vocabulary, separator=params.separator)
    if knowledge.n_labels == 0 or knowledge.sets.items.size == 0:
        kind = table.schema[set_column].kind if set_column in table.schema else None
        if knowledge.n_labels and kind is not Kind.SET_VALUED:
            raise ConfigError(
                f"{spell('set_column')} '{set_column}' is not set-valued: no item of the external knowledge "
                f"occurs in it (its kind is {kind.value if kind else 'unknown'}); a set-valued column holds "
                f"items separated by '{params.separator}', such as 'Coughing{params.separator}Headache', "
                "and has kind set-valued (or role quasi-sensitive) in the configuration"
            )
        raise ConfigError("the external knowledge is empty: give at least one label with its item set")
    if table.n_records == 0:
        raise ConfigError("the data has no records")
    return set_column, items, knowledge


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
