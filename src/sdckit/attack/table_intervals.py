"""The outside attacker of a published table (sdcTable's attack; SPEC §8.3): the interval of every
suppressed cell from the published cells, the table's additivity and ``y ≥ 0``
(:mod:`sdckit.attack._table`).

The adversary holds the published table (labels and released values; a suppressed cell is empty)
and knows that totals are sums of their categories and that cells are not negative. For each cell
that the sensitivity rules flag on the original (the p%-rule, a minimum frequency; computed here,
independently of the code that protected the table), the attack counts a success when the cell is
published, or its interval ``[min y_c, max y_c]`` does not reach the protection interval ``[a −
level, a + level]`` the rule requires, or is one value. The attack rate is the share of sensitive
cells disclosed. There is no baseline: without the table no cell is bounded. The audit verdict the
suppression code wrote into the table (its status, rule and interval columns) is never read.
"""

from __future__ import annotations

from typing import Any

from sdckit.attack._table import (
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

NAME = "table-intervals"


class TableIntervalsParams(TableAttackParams):
    """The outside attacker's intervals of a published table's sensitive cells."""


@register_attack(
    "table-intervals",
    TableIntervalsParams,
    help="The outside attacker's interval of each sensitive cell of a published table (sdcTable's LP).",
    releases="a published table (one row per cell; suppressed cells empty): sdckit table suppress",
    measures="the share of sensitive cells published, or whose attacker interval falls short of their "
    "required protection (or is one value)",
    applies=applies_to_table,
    inputs="table",
)
def _run(
    original: Table, release: Table, control: Any, params: TableIntervalsParams, context: Context
) -> AttackResult:
    table = read_published(release, params, NAME)
    sensitive = sensitive_cells(original, table, params)
    if not sensitive.cells:
        raise ConfigError("the rules flag no cell of the original: there is nothing to attack")
    found: dict[str, Any] = {}
    successes = 0
    for cell in sensitive.cells:
        low, high = interval(table, cell, params)
        hit = disclosed(low, high, sensitive.truth[cell], sensitive.level[cell])
        successes += hit
        if hit:
            found["/".join(table.labels[cell])] = {
                "value": sensitive.truth[cell],
                "required": sensitive.level[cell],
                "interval": [low, high],
                "rule": sensitive.rule[cell],
                "published": not bool(table.suppressed[cell]),
            }
    n = len(sensitive.cells)
    return AttackResult(
        name=NAME,
        assumes="the published table, that totals are the sums of their categories, and that cells are "
        + ("not negative" if params.nonnegative else "unbounded"),
        attack=wilson_rate(successes, n, params.confidence),
        max_risk=params.max_risk,
        details={"sensitive_cells": n, "suppressed_cells": int(table.suppressed.sum()), "disclosed": found},
    )
