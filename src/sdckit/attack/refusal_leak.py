"""Learning a confidential category from whether the server refuses a query (Kenthapadi, Mishra &
Nissim 2005, "Simulatable auditing", PODS).

An audit that looks at the data to decide a refusal answers a question by refusing. The adversary
(an analyst's key, and the public attributes of every record: :mod:`sdckit.attack._server`) takes a
large public set W (the largest category of one public attribute) and asks ``count(W)`` once.
Then, for a target T outside W and each category v of a confidential attribute a, it asks
``count((T ∧ a = v) ∨ W)``: its query set is W itself when T's category is not v, and W plus one
record when it is, so an audit that refuses two answered sets differing by fewer than k records
refuses exactly the probe of T's category. The adversary learns T's category when ``count(W)`` was
answered and exactly one probe was refused; otherwise (no refusal, every probe refused) it learns
nothing. A simulatable audit decides from the queries and the public attributes only, so its
decisions are the same whatever T's category: it refuses every probe or none. The answers'
values are not used (that is :mod:`differencing`); only the decisions.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from sdckit.attack._server import (
    Filter,
    Guess,
    ServerAttackParams,
    View,
    applies_to_server,
    draw_targets,
    isolating,
    open_view,
    score,
    spelled,
)
from sdckit.attack.base import AttackResult, ServerTarget, register_attack
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.table import Table

NAME = "refusal-leak"


class RefusalLeakParams(ServerAttackParams):
    """Learning a confidential category from the server's refusals."""


def public_set(view: View) -> tuple[str, Any]:
    """W: the most frequent category of the public attribute whose largest category is largest,
    short of every record."""
    best: tuple[int, str, Any] | None = None
    for column in view.public:
        counts = view.data[column].drop_nulls().value_counts(sort=True)
        if counts.height < 2:
            continue
        value, size = counts.row(0)
        if best is None or size > best[0]:
            best = (int(size), column, value)
    if best is None:
        raise ConfigError(f"dataset {view.name}: no public attribute has two categories to hide a probe in")
    return best[1], best[2]


def guess_by_refusal(view: View, row: dict[str, Any], attribute: str, within: Filter) -> Guess:
    target = isolating(view, row)
    refused = []
    for value in view.domains[attribute]:
        probe = {"or": [{"and": [target, {"column": attribute, "op": "=", "value": value}]}, within]}
        if view.answer("count", None, [probe]) is None:
            refused.append(value)
    return refused[0] if len(refused) == 1 else None


@register_attack(
    "refusal-leak",
    RefusalLeakParams,
    help="Learning a confidential category from which queries the server refuses.",
    releases="a running query server (sdckit serve) with an auditing protection (restriction)",
    measures="the share of (target, categorical confidential attribute) pairs whose category the "
    "pattern of refusals gives",
    applies=applies_to_server,
    inputs="server",
)
def _run(
    original: Table, release: ServerTarget, control: Any, params: RefusalLeakParams, context: Context
) -> AttackResult:
    view = open_view(NAME, original, release, params)
    try:
        numeric = [name for name in view.attacked if view.numeric[name]]
        if numeric and params.attributes is not None:
            raise ConfigError(
                f"{spelled(NAME, 'attributes')}: {', '.join(numeric)} is numeric; the refusal leak "
                "attacks categorical attributes"
            )
        view.attacked = [name for name in view.attacked if not view.numeric[name]]
        if not view.attacked:
            raise ConfigError(f"dataset {view.name} declares no categorical confidential attribute to attack")
        column, value = public_set(view)
        within = {"column": column, "op": "=", "value": value}
        targets = draw_targets(view, params.targets, params.seed, exclude=pl.col(column) == value)
        answered = view.answer("count", None, [within]) is not None

        def guess(row: dict[str, Any], attribute: str) -> Guess:
            return guess_by_refusal(view, row, attribute, within) if answered else None

        return score(
            NAME,
            "an analyst's key, the public attributes of every record, and how a data-dependent audit "
            "decides (two answered query sets must differ by k records or more)",
            view,
            targets,
            guess,
            params,
            details={"public_set": {column: str(value)}, "public_set_answered": answered},
        )
    finally:
        view.client.close()
