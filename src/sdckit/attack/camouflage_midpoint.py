"""The midpoint attack on camouflage answers (Gopal, Garfinkel & Goes 2002, "Confidentiality via
camouflage", Operations Research 50(3)).

A camouflage server answers a query with an interval ``[lower, upper]`` that holds the true answer.
The adversary (an analyst's key, and the public attributes of every record:
:mod:`sdckit.attack._server`) isolates a target by its public values and takes the midpoint of the
interval as its estimate: ``sum(y | T)`` for a numeric confidential attribute y; for a categorical
one, ``count(T ∧ a = v)`` for every category v, the target's category being the one whose midpoint
is 1 while every other's is 0. An interval centred on the true answer (``s ± w·|s|``, the camouflage
of issue 30 before it was fixed) gives the value away to any precision; camouflage drawn from a set
of camouflage vectors, the value anywhere in its interval, does not. A server that answers numbers
(restriction) is attacked the same way, the answer being its own midpoint.
"""

from __future__ import annotations

from typing import Any

from sdckit.attack._server import (
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

NAME = "camouflage-midpoint"


class CamouflageMidpointParams(ServerAttackParams):
    """The midpoint attack on a camouflage server."""


def guess_by_midpoint(view: View, row: dict[str, Any], attribute: str) -> Guess:
    target = [isolating(view, row)]
    if view.numeric[attribute]:
        return view.measure(attribute, target)
    return categorical_guess(
        {value: view.measure(attribute, target, value) for value in view.domains[attribute]}
    )


@register_attack(
    "camouflage-midpoint",
    CamouflageMidpointParams,
    help="The midpoint of a camouflage interval as the estimate of one person's confidential value.",
    releases="a running query server (sdckit serve) with camouflage (or any server: a number is its "
    "own midpoint)",
    measures="the share of (target, confidential attribute) pairs whose value the midpoint of the answer "
    "about the target alone gives (numbers within tolerance, categories exactly)",
    applies=applies_to_server,
    inputs="server",
)
def _run(
    original: Table,
    release: ServerTarget,
    control: Any,
    params: CamouflageMidpointParams,
    context: Context,
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
            lambda row, attribute: guess_by_midpoint(view, row, attribute),
            params,
        )
    finally:
        view.client.close()
