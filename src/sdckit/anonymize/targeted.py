"""Risk-targeted value suppression (Orooji & Knapp, 2019), Figure 1 of the paper.

Only the records at high risk are touched, and in each only the values that drive its risk: the
attributes of the known set with the largest contribution ``L_KS(r) * alpha * C_UKS(r)`` to the
record's combined risk D(r) (:mod:`sdckit.risk.combined`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from sdckit.anonymize.release import Release
from sdckit.errors import ConfigError
from sdckit.risk.combined import RecordRisk, combined_risk
from sdckit.table import Role, Schema, Table

#: Called as ``progress(message)`` at each stage of a long run.
StageCallback = Callable[[str], None]


def _check_parameters(delta: Any, max_rounds: Any, cell_budget: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not np.isfinite(delta) or delta < 0:
        raise ConfigError(f"delta (the risk threshold) must be a number >= 0, got {delta!r}")
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, numbers.Integral) or max_rounds < 1
    ):
        raise ConfigError(f"max_rounds must be a whole number >= 1, got {max_rounds!r}")
    if cell_budget is not None and (
        isinstance(cell_budget, bool) or not isinstance(cell_budget, numbers.Integral) or cell_budget < 0
    ):
        raise ConfigError(f"cell_budget must be a whole number >= 0, got {cell_budget!r}")
    return float(delta)


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

    ``release.search`` holds ``high_risk_before``, ``high_risk_after``, ``rounds`` (cells and high-risk
    records per round), ``irreducible`` and ``stopped`` (why the loop ended);
    ``release.search["risk_before"]`` and ``["risk_after"]`` are the :class:`RecordRisk` measurements.
    """
    delta = _check_parameters(delta, max_rounds, cell_budget)
    say = progress if progress is not None else (lambda message: None)
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    data = table.data.drop(identifiers)

    def measure(frame: pl.DataFrame) -> RecordRisk:
        return combined_risk(
            Table(frame, schema, source=table.source),
            alpha=alpha,
            epsilon=epsilon,
            missing=missing,
            weights=weights,
        )

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
    current = before
    rounds: list[dict[str, int]] = []
    stopped = "no record above delta"
    while True:
        high = current.risk > delta
        n_high = int(high.sum())
        if not n_high:
            stopped = "no record above delta"
            break
        if rounds and not repeat:
            stopped = "one round (repeat is off)"
            break
        if max_rounds is not None and len(rounds) >= max_rounds:
            stopped = f"max_rounds ({max_rounds}) reached"
            break
        mask = holds[current.top_known_set] & high[:, None] & ~null
        stuck = high & ~mask.any(axis=1)
        if repeat and stuck.any():
            # The dominant set's values are gone: take the most public value still present.
            free = ~null[stuck][:, fallback_order]
            has_free = free.any(axis=1)
            choice = fallback_order[np.argmax(free, axis=1)]
            rows = np.flatnonzero(stuck)[has_free]
            mask[rows, choice[has_free]] = True
        wanted = mask.any()
        if cell_budget is not None:
            mask = _within_budget(mask, current.risk, cell_budget - int(suppressed.sum()))
        if not mask.any():
            stopped = f"cell budget ({cell_budget}) spent" if wanted else "nothing left to suppress"
            break
        changed = np.flatnonzero(mask.any(axis=0))
        data = data.with_columns(
            pl.when(pl.Series(mask[:, j])).then(None).otherwise(pl.col(attributes[j])).alias(attributes[j])
            for j in changed
        )
        suppressed |= mask
        null |= mask
        rounds.append({"high_risk_records": n_high, "suppressed_cells": int(mask.sum())})
        say(
            f"round {len(rounds)}: {n_high:,} records above {delta:g}, "
            f"{int(mask.sum()):,} cells suppressed; re-measuring"
        )
        current = measure(data)
    after = current
    high_after = int((after.risk > delta).sum())
    irreducible = int(((after.risk > delta) & null.all(axis=1)).sum())
    return Release(
        table=Table(data, schema, source=table.source),
        original=table,
        method="targeted-suppression",
        parameters={
            "delta": delta,
            "alpha": float(alpha),
            "epsilon": float(epsilon),
            "missing": missing,
            "repeat": bool(repeat),
            "max_rounds": max_rounds,
            "cell_budget": cell_budget,
        },
        quasi_identifiers=tuple(attributes),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        search={
            "high_risk_before": before.above(delta),
            "high_risk_after": high_after,
            "rounds": rounds,
            "irreducible": irreducible,
            "stopped": stopped,
            "risk_before": before,
            "risk_after": after,
        },
        cell_penalty=suppressed.astype(np.float64),
        suppressed_cells=suppressed,
    )
