"""The respondent attacks on a published table (issue 31; sdcTable's singleton detection, τ-Argus's
singleton option): a contributor who knows its own contribution narrows a suppressed cell
(:mod:`sdckit.attack._table`).

A respondent is the largest contributor of a suppressed cell (a record of ORIGINAL; with one
contributor, the cell's only one). It knows its own contribution x to every cell it is in: each
suppressed such cell is at least x, and exactly x when the respondent is its only contributor (a
singleton). With that knowledge added to the outside attacker's (published cells, additivity, ``y ≥
0``), it attacks every sensitive cell it does not contribute to. Two suppressed singletons in one
relation (``a + c = 2``) are the classic case: each recomputes the other. A sensitive cell counts as
disclosed when it is published or some respondent's interval of it falls short of its required
protection (or is one value); the attack rate is the share of sensitive cells disclosed. There is
no baseline. Holdings (several records of one enterprise) and coalitions of contributors are not
modelled here. The respondents are those of the original's records; which cells they are in is
read from the original, as a respondent knows it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sdckit.attack._table import (
    Published,
    Sensitive,
    TableAttackParams,
    applies_to_table,
    disclosed,
    interval,
    read_published,
    sensitive_cells,
)
from sdckit.attack.base import AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.table import Table

NAME = "table-respondents"


class TableRespondentsParams(TableAttackParams):
    """Respondents who know their own contributions, attacking a published table."""


def respondents(
    table: Published, sensitive: Sensitive
) -> dict[int, tuple[dict[int, float], dict[int, float]]]:
    """Each respondent (a record: the largest contributor of a suppressed cell) and what it knows:
    ``(low, high)`` bounds of the suppressed cells it is in."""
    x = sensitive.contributions
    members: dict[int, list[int]] = {}
    chosen = []
    for suppressed in np.flatnonzero(table.suppressed).tolist():
        rows = sensitive.records.get(suppressed)
        if rows is None or rows.size == 0:
            continue
        chosen.append(int(rows[np.argmax(x[rows])]))
        for row in rows.tolist():
            members.setdefault(row, []).append(suppressed)
    known = {}
    for record in dict.fromkeys(chosen):
        low: dict[int, float] = {}
        high: dict[int, float] = {}
        for cell in members.get(record, []):
            low[cell] = float(x[record])
            if sensitive.records[cell].size == 1:
                high[cell] = float(x[record])
        known[record] = (low, high)
    return known


def components(table: Published) -> np.ndarray:
    """The connected component of every cell: suppressed cells sharing a relation are connected."""
    from scipy import sparse
    from scipy.sparse import csgraph

    touches = sparse.csr_matrix((np.abs(table.matrix) > 0) & table.suppressed[None, :])
    adjacency = (touches.T @ touches).astype(bool)
    return csgraph.connected_components(adjacency, directed=False)[1]


def useful(
    table: Published, known: dict[int, tuple[dict[int, float], dict[int, float]]], params: TableAttackParams
) -> dict[int, tuple[dict[int, float], dict[int, float], set[int]]]:
    """The respondents whose knowledge the outside attacker's polytope does not already imply (a
    bound inside a cell's outside interval), with the components their knowledge reaches: a bound the
    polytope satisfies changes no interval, so the others are left out (exactly)."""
    outside = {int(c): interval(table, int(c), params) for c in np.flatnonzero(table.suppressed)}
    component = components(table)
    kept = {}
    for record, (low, high) in known.items():
        reached = {
            int(component[c])
            for c in set(low) | set(high)
            if low.get(c, -np.inf) > outside[c][0] + 1e-9 * max(1.0, abs(outside[c][0]))
            or high.get(c, np.inf) < outside[c][1] - 1e-9 * max(1.0, abs(outside[c][1]))
        }
        if reached:
            kept[record] = (low, high, reached)
    return kept


@register_attack(
    "table-respondents",
    TableRespondentsParams,
    help="Respondents who know their own contributions (singletons) narrowing a published table's cells.",
    releases="a published table (one row per cell; suppressed cells empty): sdckit table suppress",
    measures="the share of sensitive cells published, or whose interval for some respondent outside them "
    "falls short of their required protection (or is one value)",
    applies=applies_to_table,
    inputs="table",
)
def _run(
    original: Table, release: Table, control: Any, params: TableRespondentsParams, context: Context
) -> AttackResult:
    table = read_published(release, params, NAME)
    sensitive = sensitive_cells(original, table, params)
    if not sensitive.cells:
        raise ConfigError("the rules flag no cell of the original: there is nothing to attack")
    component = components(table)
    known = useful(table, respondents(table, sensitive), params)
    found: dict[str, Any] = {}
    for cell in sensitive.cells:
        truth, level = sensitive.truth[cell], sensitive.level[cell]
        name = "/".join(table.labels[cell])
        if not table.suppressed[cell]:
            found[name] = {"by": "everyone (published)", "interval": [truth, truth]}
            continue
        inside = set(sensitive.records[cell].tolist())
        for record, (low, high, reach) in known.items():
            if record in inside or component[cell] not in reach:
                continue  # a respondent does not attack a cell it contributes to, nor one it cannot move
            bounds = interval(table, cell, params, low, high)
            if disclosed(*bounds, truth, level):
                found[name] = {"by": f"record {record} of the original", "interval": list(bounds)}
                break
    n = len(sensitive.cells)
    return AttackResult(
        name=NAME,
        assumes="the published table, its additivity and y ≥ 0, and a respondent's own contribution to "
        "every cell it is in (exactly the cell's value where it is the only contributor)",
        attack=wilson_rate(len(found), n, params.confidence),
        max_risk=params.max_risk,
        details={"sensitive_cells": n, "respondents": len(known), "disclosed": found},  # the useful ones
    )
