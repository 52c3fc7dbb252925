"""The differencing attack on a query server: two queries whose query sets differ by one person.

The adversary (an analyst's key, and the public attributes of every record: :mod:`sdckit.attack._server`)
isolates a target T by its public values and picks a public set S holding it (the records sharing
T's value of one public attribute, the largest such group). For a confidential numeric attribute y,
``sum(y | S) − sum(y | S ∧ ¬T)`` is T's value; for a categorical one, ``count(S ∧ a = v) − count(S ∧
¬T ∧ a = v)`` is 1 for T's category and 0 for every other. This is the attack a query-set-size
control alone does not stop (both sets are large) and an audit of the answered queries must
(Denning & Schlörer 1983; Adam & Wortmann 1989, "Security-control methods for statistical
databases", ACM Computing Surveys). A refused query leaves the value unlearned.
"""

from __future__ import annotations

from typing import Any

from sdckit.attack._server import (
    Filter,
    Guess,
    ServerAttackParams,
    View,
    applies_to_server,
    categorical_guess,
    draw_targets,
    isolating,
    open_view,
    score,
)
from sdckit.attack.base import AttackResult, ServerTarget, register_attack
from sdckit.context import Context
from sdckit.table import Table

NAME = "differencing"


class DifferencingParams(ServerAttackParams):
    """The differencing attack on a query server."""


def _container(view: View, row: dict[str, Any]) -> Filter:
    """The public set holding the target: its value of the public attribute shared by most records."""
    sizes = {column: view.data.filter(view.data[column] == row[column]).height for column in view.public}
    column = max(view.public, key=lambda name: sizes[name])
    return {"column": column, "op": "=", "value": row[column]}


def guess_by_difference(view: View, row: dict[str, Any], attribute: str) -> Guess:
    container = _container(view, row)
    without = {"not": isolating(view, row)}
    values = [None] if view.numeric[attribute] else view.domains[attribute]
    differences: dict[Any, float | None] = {}
    for value in values:
        whole = view.measure(attribute, [container], value)
        rest = None if whole is None else view.measure(attribute, [container, without], value)
        differences[value] = None if whole is None or rest is None else whole - rest
    if view.numeric[attribute]:
        return differences[None]
    return categorical_guess(differences)


@register_attack(
    "differencing",
    DifferencingParams,
    help="Differencing on a query server: two queries whose query sets differ by one person.",
    releases="a running query server (sdckit serve): restriction, camouflage, dp",
    measures="the share of (target, confidential attribute) pairs whose value the difference of two "
    "answers gives (numbers within tolerance, categories exactly)",
    applies=applies_to_server,
    inputs="server",
)
def _run(
    original: Table, release: ServerTarget, control: Any, params: DifferencingParams, context: Context
) -> AttackResult:
    view = open_view(NAME, original, release, params)
    try:
        targets = draw_targets(view, params.targets, params.seed)
        return score(
            NAME,
            "an analyst's key, the public attributes of every record, and that the target's public values "
            "are unique",
            view,
            targets,
            lambda row, attribute: guess_by_difference(view, row, attribute),
            params,
        )
    finally:
        view.client.close()
