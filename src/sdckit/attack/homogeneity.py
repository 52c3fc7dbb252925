"""The homogeneity attack on a generalized release (Machanavajjhala, Kifer, Gehrke &
Venkitasubramaniam 2007, "l-diversity: privacy beyond k-anonymity", ACM TKDD 1(1), §3.1): the
adversary knows the target's quasi-identifiers, finds the released records that cover them (its
covered set, :mod:`sdckit.coverage`), and learns the target's sensitive value when every record of
that set holds the same one. k-anonymity does not prevent it: a class of five records that all
hold ``cancer`` tells the adversary the target has cancer.

A target is **disclosed** when its covered set is not empty and every released record in it holds the
target's true sensitive value (with several attacked attributes: for one of them). The **attack
rate** is the share of original records disclosed. The **baseline** is the adversary without the
release, whose posterior is the overall released frequency of the value: disclosed only when every
released record holds it. With ``--control``, the **control rate** is the share of held-out records
the same reading discloses: what the release says of anyone with those quasi-identifiers rather than
of its own records.

The covered set may be wider than the target's equivalence class (Mondrian's overlapping boxes,
suppressed records ``*``): the attack reads what the adversary reads, not the classes the method
formed. The release need not be row-aligned (records may have been dropped). Values are compared
as text; a missing sensitive value is a value of its own.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from sdckit.attack._coverage import sensitive_attributes, sensitive_disclosure, sensitive_reason
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.table import Table


class HomogeneityParams(AttackParams):
    """The homogeneity attack on the sensitive attributes of a generalized release."""

    sensitive: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Attacked sensitive attributes, comma-separated (default: every attribute of role "
            "sensitive the release holds).",
        ),
    ] = None


def _applies(original: Table, release: Any, control: Any, params: HomogeneityParams) -> str | None:
    return sensitive_reason(original, release, params.sensitive)


@register_attack(
    "homogeneity",
    HomogeneityParams,
    help="Homogeneity attack: a sensitive value every record covering the target shares.",
    releases="generalized releases with a sensitive attribute: generalization, Mondrian, local suppression",
    measures="the share of records whose covered set holds their true sensitive value only",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Any, params: HomogeneityParams, context: Context
) -> AttackResult:
    names = sensitive_attributes(original, release, params.sensitive)
    found = sensitive_disclosure(original, release, control, names, b=0, bound=1.0)
    n = original.n_records
    held = found.control
    return AttackResult(
        name="homogeneity",
        assumes="the quasi-identifiers of every target; she reads the sensitive values of the released "
        "records that cover them",
        attack=wilson_rate(int(np.count_nonzero(found.attack)), n, params.confidence),
        baseline=wilson_rate(int(np.count_nonzero(found.baseline)), n, params.confidence),
        control=None
        if held is None
        else wilson_rate(int(np.count_nonzero(held)), len(held), params.confidence),
        max_risk=params.max_risk,
        details=found.details,
    )
