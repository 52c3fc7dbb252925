"""Risk-targeted value suppression (Orooji & Knapp, 2019).

Value suppression replaces single quasi-identifier cells by a real null (never a whole record).
:func:`targeted_suppression` is the algorithm of Figure 1 of Orooji & Knapp (2019): only the
records whose combined risk D(r) (:mod:`sdckit.risk.combined`) exceeds a threshold are touched, and in
each only the values of the known set with the largest contribution ``L * alpha * C`` to its risk.

References
----------
Orooji, M. and Knapp, G. M. (2019). Improving suppression to reduce disclosure risk and enhance data
utility. *Proceedings of the IISE Annual Conference*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.anonymize.base import Context, ExtraOutput, achieved_report, cells_report, register_method
from sdckit.anonymize.local_suppression import Missing
from sdckit.anonymize.release import Figures, Release
from sdckit.context import StageCallback
from sdckit.errors import ConfigError
from sdckit.params import Finite, MethodParams, Whole, spell
from sdckit.risk.combined import RecordRisk, combined_risk
from sdckit.scale import methods as scaled
from sdckit.table import Role, Schema, Table


@dataclass(frozen=True)
class TargetedSuppressionFigures(Figures):
    """What a targeted suppression found: the records above DELTA before and after (counted in
    records), each round's ``high_risk_records`` and ``suppressed_cells``, the records left above
    DELTA with every suppressible value suppressed (``irreducible``), why the rounds stopped, and the
    risk measurements of the original and of the release."""

    high_risk_before: int
    high_risk_after: int
    rounds: list[dict[str, int]]
    irreducible: int
    stopped: str
    risk_before: RecordRisk
    risk_after: RecordRisk


def _known_set_matrix(risk: RecordRisk, attributes: list[str]) -> np.ndarray:
    """Boolean (known sets x attributes): which attributes each kept known set holds."""
    position = {name: j for j, name in enumerate(attributes)}
    matrix = np.zeros((risk.known_sets.height, len(attributes)), dtype=bool)
    for row, names in enumerate(risk.known_sets.get_column("attributes").to_list()):
        for name in names:
            matrix[row, position[name]] = True
    return matrix


def _within_budget(mask: np.ndarray, risk: np.ndarray, remaining: int) -> np.ndarray:
    """Keep whole records of ``mask``, riskiest first, while their cells fit in ``remaining``."""
    cells = mask.sum(axis=1)
    rows = np.flatnonzero(cells)
    order = rows[np.argsort(-risk[rows], kind="stable")]
    fits = np.cumsum(cells[order]) <= remaining
    kept = np.zeros(len(mask), dtype=bool)
    kept[order[fits]] = True
    return mask & kept[:, None]


@dataclass(frozen=True)
class _Rounds:
    """What every round of :func:`targeted_suppression` reads: the threshold, the records per row,
    which attributes each known set holds (``holds``), the suppressible ``attributes``, the fallback
    order (most public first) and the three stopping rules."""

    delta: float
    per_row: np.ndarray
    holds: np.ndarray
    attributes: list[str]
    fallback_order: np.ndarray
    repeat: bool
    max_rounds: int | None
    cell_budget: int | None


def _suppress_in_rounds(
    data: pl.DataFrame,
    current: RecordRisk,
    measure: Callable[[pl.DataFrame], RecordRisk],
    say: Callable[[str], None],
    rounds: _Rounds,
    suppressed: np.ndarray,
    null: np.ndarray,
) -> tuple[pl.DataFrame, RecordRisk, list[dict[str, int]], str]:
    """Run the rounds of :func:`targeted_suppression` from the risk ``current`` of ``data``: each
    suppresses the dominant known set's values of the records above DELTA and measures again.

    ``suppressed`` (cells suppressed here) and ``null`` (cells missing) are updated in place. Returns
    the released data, its risk, each round's figures and why the loop stopped.
    """
    delta, per_row, attributes = rounds.delta, rounds.per_row, rounds.attributes
    run: list[dict[str, int]] = []
    while True:
        high = current.risk > delta
        n_high = int(per_row[high].sum())
        if not n_high:
            return data, current, run, "no record above delta"
        if run and not rounds.repeat:
            return data, current, run, "one round (repeat is off)"
        if rounds.max_rounds is not None and len(run) >= rounds.max_rounds:
            return data, current, run, f"max_rounds ({rounds.max_rounds}) reached"
        mask = rounds.holds[current.top_known_set] & high[:, None] & ~null
        stuck = high & ~mask.any(axis=1)
        if rounds.repeat and stuck.any():
            # The dominant set's values are gone: take the most public value still present.
            free = ~null[stuck][:, rounds.fallback_order]
            has_free = free.any(axis=1)
            choice = rounds.fallback_order[np.argmax(free, axis=1)]
            rows = np.flatnonzero(stuck)[has_free]
            mask[rows, choice[has_free]] = True
        wanted = mask.any()
        if rounds.cell_budget is not None:
            mask = _within_budget(mask, current.risk, rounds.cell_budget - int(suppressed.sum()))
        if not mask.any():
            spent = f"cell budget ({rounds.cell_budget}) spent"
            return data, current, run, spent if wanted else "nothing left to suppress"
        changed = np.flatnonzero(mask.any(axis=0))
        data = data.with_columns(
            pl.when(pl.Series(mask[:, j])).then(None).otherwise(pl.col(attributes[j])).alias(attributes[j])
            for j in changed
        )
        suppressed |= mask
        null |= mask
        cells = int(per_row @ mask.sum(axis=1))
        run.append({"high_risk_records": n_high, "suppressed_cells": cells})
        say(f"round {len(run)}: {n_high:,} records above {delta:g}, {cells:,} cells suppressed; re-measuring")
        current = measure(data)


def targeted_suppression(
    table: Table,
    *,
    delta: float,
    alpha: float = 100.0,
    epsilon: float = 0.01,
    missing: str = "wildcard",
    weights: str | np.ndarray | None = None,
    repeat: bool = False,
    max_rounds: int | None = None,
    cell_budget: int | None = None,
    progress: StageCallback | None = None,
    multiplicity: np.ndarray | None = None,
) -> Release:
    """Suppress the values that drive the risk of the high-risk records (Orooji & Knapp, 2019).

    The algorithm of Figure 1 of the paper: the records with ``D(r) > delta`` are found with the
    combined risk measure (parameters ``alpha``, ``epsilon``, ``missing`` and ``weights`` as in
    :func:`sdckit.risk.combined.combined_risk`); for each, the known set with the largest
    contribution ``L * alpha * C`` is taken (the first in enumeration order on ties) and the record's
    values of its attributes are suppressed (set to null). Every other record stays intact. The
    risk is then measured again on the release, so that the Release holds the risk before and after.

    Options beyond the paper (off by default):

    ``repeat``
        Repeat the round on the release (re-measuring the risk each time) until no record exceeds
        ``delta``, ``max_rounds`` rounds were run or ``cell_budget`` cells are suppressed. In a
        repeated round a record whose dominant known set has no value left to suppress loses
        instead its remaining value of the most public attribute (highest PK, then column order),
        so every round makes progress. A record all of whose known-set values are suppressed and
        that still exceeds ``delta`` cannot be helped by this method; such records are counted as
        ``irreducible``. Under wildcard semantics a null matches every value, so a record's
        likelihoods only fall as its values are suppressed.
    ``cell_budget``
        The most cells to suppress in total; when a round would exceed it, the riskiest records
        of the round are treated first, whole, as long as their cells fit.

    The suppressible attributes (the Release's ``quasi_identifiers``) are those with public
    probability above ``epsilon``, the only ones that can belong to a kept known set; the paper
    calls them the QIDs. ``cell_penalty`` is 1 for a suppressed cell, so
    :func:`sdckit.utility.release_ncp` is equation (5) of the paper, ``S / (n q)``.

    ``release.figures`` (:class:`TargetedSuppressionFigures`) holds ``high_risk_before``,
    ``high_risk_after``, ``rounds`` (cells and high-risk records per round), ``irreducible``,
    ``stopped`` (why the loop ended) and the :class:`RecordRisk` measurements ``risk_before`` and
    ``risk_after``.

    ``multiplicity`` (records per row) says that each row stands for that many identical records (the
    patterns of a data set, :mod:`sdckit.scale`; ``weights`` then holds their counts or sums of
    sampling weights): the records of a pattern are treated alike, and every count is of records. A
    cell budget would have to split a pattern's records, so it is refused with a multiplicity.
    ``weights`` and ``multiplicity``, arrays, are not parameters of the method (a run reads the
    weights from the configuration's ``data.weights``); the parameters are validated by
    :class:`TargetedSuppressionParams`.
    """
    params = TargetedSuppressionParams.parse(
        {
            "delta": delta,
            "alpha": alpha,
            "epsilon": epsilon,
            "missing": missing,
            "repeat": repeat,
            "max_rounds": max_rounds,
            "cell_budget": cell_budget,
        },
        method="targeted-suppression",
    )
    return _suppress(table, params, weights=weights, multiplicity=multiplicity, progress=progress)


def _suppress(
    table: Table,
    params: TargetedSuppressionParams,
    *,
    weights: str | np.ndarray | None,
    multiplicity: np.ndarray | None,
    progress: StageCallback | None,
) -> Release:
    """The method, on resolved parameters (``alpha``, ``epsilon`` and ``missing`` given)."""
    delta, alpha, epsilon, missing = float(params.delta), params.alpha, params.epsilon, params.missing
    if alpha is None or epsilon is None or missing is None:
        # A run takes them from the configuration, the keyword function has defaults.
        raise ConfigError("alpha, epsilon and missing must be given")
    repeat, max_rounds, cell_budget = params.repeat, params.max_rounds, params.cell_budget
    if multiplicity is not None and cell_budget is not None:
        raise ConfigError(
            "cell_budget picks records one by one, which a run over partitions (on distinct patterns) "
            "cannot; run in memory for a cell budget"
        )
    per_row = np.ones(table.n_records, dtype=np.int64) if multiplicity is None else np.asarray(multiplicity)
    say = progress if progress is not None else (lambda message: None)
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    data = table.data.drop(identifiers)

    def measure(frame: pl.DataFrame) -> RecordRisk:
        risk = combined_risk(
            Table(frame, schema, source=table.source),
            alpha=alpha,
            epsilon=epsilon,
            missing=missing,
            weights=weights,
        )
        return risk if multiplicity is None else replace(risk, multiplicity=per_row)

    say("measuring the risk of the original records")
    before = measure(data)
    # Attributes of the kept known sets, in column order.
    in_sets = {name for names in before.known_sets.get_column("attributes").to_list() for name in names}
    attributes = [name for name in data.columns if name in in_sets]
    holds = _known_set_matrix(before, attributes)
    public = np.array([schema[name].public_probability for name in attributes], dtype=np.float64)
    # Fallback order of attributes: most public first, ties by column order.
    fallback_order = np.argsort(-public, kind="stable")

    n = data.height
    suppressed = np.zeros((n, len(attributes)), dtype=bool)
    null = (
        data.select(pl.col(name).is_null() for name in attributes).to_numpy()
        if attributes
        else np.zeros((n, 0), dtype=bool)
    )
    plan = _Rounds(delta, per_row, holds, attributes, fallback_order, repeat, max_rounds, cell_budget)
    data, after, run, stopped = _suppress_in_rounds(data, before, measure, say, plan, suppressed, null)
    high_after = int(per_row[after.risk > delta].sum())
    irreducible = int(per_row[(after.risk > delta) & null.all(axis=1)].sum())
    return Release(
        table=Table(data, schema, source=table.source),
        original=table,
        method="targeted-suppression",
        params=params,
        quasi_identifiers=tuple(attributes),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        figures=TargetedSuppressionFigures(
            high_risk_before=before.above(delta),
            high_risk_after=high_after,
            rounds=run,
            irreducible=irreducible,
            stopped=stopped,
            risk_before=before,
            risk_after=after,
        ),
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )


# Registered methods ---------------------------------------------------------------------------


class TargetedSuppressionParams(MethodParams):
    """Parameters of risk-targeted suppression (``sdckit anonymize targeted-suppression``)."""

    delta: Annotated[Finite, Field(ge=0, description="Risk threshold DELTA: records above it are treated.")]
    alpha: Annotated[
        Finite | None, Field(gt=1, description="Consequence coefficient (default: the config's risk.alpha).")
    ] = None
    epsilon: Annotated[
        Finite | None,
        Field(ge=0, description="Known-set pruning threshold (default: the config's risk.epsilon)."),
    ] = None
    missing: Annotated[
        Missing | None,
        Field(description="How a null matches: wildcard or category (default: the config's risk.missing)."),
    ] = None
    repeat: Annotated[bool, Field(description="Repeat rounds until no record exceeds DELTA.")] = False
    max_rounds: Annotated[Whole | None, Field(ge=1, description="Most rounds with --repeat.")] = None
    cell_budget: Annotated[Whole | None, Field(ge=0, description="Most cells to suppress in total.")] = None

    @model_validator(mode="after")
    def _rounds_need_repeat(self) -> TargetedSuppressionParams:
        if self.max_rounds is not None and not self.repeat:
            raise ValueError("takes {max_rounds} only with {repeat} (a single round is run otherwise)")
        return self


def _targeted_summary(release: Release) -> dict[str, Any]:
    from sdckit.anonymize.base import cell_figures
    from sdckit.utility import release_ncp

    figures = release.figures_as(TargetedSuppressionFigures)
    return {
        "delta": release.params.delta,
        "high_risk_before": figures.high_risk_before,
        "high_risk_after": figures.high_risk_after,
        "rounds": figures.rounds,
        "irreducible": figures.irreducible,
        "stopped": figures.stopped,
        **cell_figures(release),
        "metrics": {"ncp": release_ncp(release)},
    }


def _targeted_report(figures: dict[str, Any]) -> list[str]:
    lines = [
        *cells_report(figures),
        f"records above {figures['delta']:g}: {figures['high_risk_before']:,} before, "
        f"{figures['high_risk_after']:,} after ({len(figures['rounds'])} round(s); {figures['stopped']})",
    ]
    if figures["irreducible"]:
        lines.append(
            f"{figures['irreducible']:,} records stay above DELTA with every suppressible value suppressed"
        )
    return [*lines, *achieved_report(figures)]


def _targeted_violation(release: Release, figures: dict[str, Any]) -> str | None:
    left = figures["high_risk_after"]
    if not left:
        return None
    hint = "" if release.params.repeat else f" ({spell('repeat')} runs further rounds)"
    return f"{left:,} records stay above DELTA {release.params.delta:g}{hint}"


def _write_histogram(release: Release, path: Any, title: str) -> None:
    from sdckit.evaluate.plots import risk_histogram

    figures = release.figures_as(TargetedSuppressionFigures)
    risk_histogram(
        {"original": figures.risk_before.risk, "released": figures.risk_after.risk},
        path,
        threshold=release.params.delta,
        title=f"Record disclosure risk before and after targeted suppression — {title}",
    )


@register_method(
    "targeted-suppression",
    TargetedSuppressionParams,
    summary=_targeted_summary,
    help="Suppress the values that drive the risk of the records above DELTA (Orooji & Knapp, 2019).",
    report=_targeted_report,
    violation=_targeted_violation,
    outputs=(
        ExtraOutput(
            "--histogram",
            "Risk before and after, .png/.pdf/.svg.",
            (".png", ".pdf", ".svg"),
            _write_histogram,
        ),
    ),
    not_reapplicable="which records it suppresses depends on their risk within the whole data",
    partitioned=scaled.targeted_suppression,
    examples={
        "minimal": {"delta": 0.1},
        "replay": {"delta": 0.5, "repeat": True},
    },
)
def _run_targeted_suppression(table: Table, params: TargetedSuppressionParams, context: Context) -> Release:
    from sdckit.anonymize.base import config_value

    params = params.model_copy(
        update={
            "alpha": config_value(params.alpha, context, "risk", "alpha", 100.0),
            "epsilon": config_value(params.epsilon, context, "risk", "epsilon", 0.01),
            "missing": config_value(params.missing, context, "risk", "missing", "wildcard"),
        }
    )
    return _suppress(
        table,
        params,
        weights=config_value(None, context, "data", "weights", None),
        multiplicity=None,
        progress=context.stage,
    )
