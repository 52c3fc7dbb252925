"""The background-knowledge attack on a generalized release (Machanavajjhala, Kifer, Gehrke &
Venkitasubramaniam 2007, "l-diversity: privacy beyond k-anonymity", ACM TKDD 1(1), §3.1): the
adversary knows the target's quasi-identifiers, and also enough about the target to rule out up to
``b`` sensitive values it does not hold (the paper's Umeko, known to rarely suffer heart disease).

The adversary finds the released records covering the target's quasi-identifiers (its covered set,
:mod:`sdckit.coverage`), rules out the ``b`` wrong values most frequent in that set (the worst case
for the release: the knowledge that helps her most) and takes the share of the true value among the
records left as her posterior. A target is **disclosed** when that posterior reaches ``bound``
(default 1: the value is determined; with ``b = 0`` this is the homogeneity attack). The **attack
rate** is the share of original records disclosed (several attacked attributes: for one of them);
the **baseline** the same reading of the whole release (the overall distribution, the b most frequent
wrong values ruled out); with ``--control`` the **control rate** the share of held-out records
disclosed.

**claims_l** checks a release that claims distinct l-diversity (every class holds at least ``l``
distinct sensitive values, the paper's §4.1 instantiation): an adversary who rules out ``l − 2``
wrong values must still face two values, so ``claims_l`` sets ``b = l − 2`` and ``bound = 1`` and
the attack rate is the share of records whose value is nevertheless determined; it is 0 exactly when
every covered set holds at least ``l − 1`` distinct values besides the true one.

With ``claims_c`` as well, the release claims recursive (c, l)-diversity, ``r₁ < c (r_l + … + r_m)``
for the sorted counts of every class (§4.2): whichever ``l − 2`` values are ruled out, the most
frequent remaining one keeps ``r₁' < c (r₂' + …)``, so no value's posterior reaches ``c / (c + 1)``
(the paper's remark after Definition 4.3). The attack then uses ``b = l − 2`` and ``bound = c / (c +
1)``. A covered set that is a union of classes (overlapping labels, suppressed records) keeps the
property, so an honest release scores 0; a record whose only cover is a group of suppressed records
is judged on that group. Entropy l-diversity bounds no posterior after values are ruled out, and is
not checked.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field, model_validator

from sdckit.attack._coverage import sensitive_attributes, sensitive_disclosure, sensitive_reason
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.params import Finite, Whole, spell
from sdckit.table import Table


class BackgroundKnowledgeParams(AttackParams):
    """The background-knowledge attack (b wrong values ruled out) on a generalized release."""

    sensitive: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Attacked sensitive attributes, comma-separated (default: every attribute of role "
            "sensitive the release holds).",
        ),
    ] = None
    b: Annotated[
        Whole,
        Field(ge=0, description="Wrong sensitive values the adversary rules out (the most frequent ones)."),
    ] = 1
    bound: Annotated[
        Finite,
        Field(gt=0.0, le=1.0, description="Posterior of the true value at which the target is disclosed."),
    ] = 1.0
    claims_l: Annotated[
        Whole | None,
        Field(
            ge=2,
            description="The l of distinct l-diversity the release claims: sets b = l - 2 and bound = 1 "
            "(none: b and bound as given).",
        ),
    ] = None

    claims_c: Annotated[
        Finite | None,
        Field(
            gt=0.0,
            description="With claims_l: the c of recursive (c,l)-diversity the release claims; sets bound = "
            "c / (c + 1) (none: distinct l-diversity, bound 1).",
        ),
    ] = None

    @model_validator(mode="after")
    def _claims_set_b(self) -> BackgroundKnowledgeParams:
        given = [name for name in ("b", "bound") if name in self.model_fields_set]
        if self.claims_l is not None and given:
            raise ValueError(
                "takes no " + " or ".join(f"{{{name}}}" for name in given) + " with {claims_l}, which sets "
                "b = l - 2 and the bound"
            )
        if self.claims_c is not None and self.claims_l is None:
            raise ValueError("takes {claims_c} only with {claims_l} (recursive (c,l)-diversity)")
        return self

    def ruled_out_and_bound(self) -> tuple[int, float]:
        """The b and bound the attack runs with: as given, or those the claimed l (and c) imply."""
        if self.claims_l is None:
            return self.b, self.bound
        if self.claims_c is None:
            return self.claims_l - 2, 1.0
        return self.claims_l - 2, self.claims_c / (self.claims_c + 1.0)


def _applies(original: Table, release: Any, control: Any, params: BackgroundKnowledgeParams) -> str | None:
    reason = sensitive_reason(original, release, params.sensitive)
    if reason is not None:
        return reason
    b = params.b
    few = [
        name
        for name in sensitive_attributes(original, release, params.sensitive)
        if params.claims_l is None and b > 0 and original.data.get_column(name).n_unique() <= b + 1
    ]
    if few:
        # Ruling out b of at most b + 1 values determines the value without the release. (A claimed
        # l above the number of values is false on its face: claims_l runs, and the release fails.)
        return (
            f"ruling out {spell('b')} = {b} values determines {', '.join(repr(name) for name in few)} "
            f"(at most {b + 1} values) without the release: lower {spell('b')} or name other "
            f"{spell('sensitive')} attributes"
        )
    return None


@register_attack(
    "background-knowledge",
    BackgroundKnowledgeParams,
    help="Background-knowledge attack: rule out b wrong sensitive values, then read the covered set.",
    releases="generalized releases with a sensitive attribute: generalization, Mondrian, local suppression",
    measures="the share of records whose true sensitive value reaches the posterior bound in their covered "
    "set once the b most frequent wrong values are ruled out (with claims_l: b = l - 2, determined)",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Any, params: BackgroundKnowledgeParams, context: Context
) -> AttackResult:
    names = sensitive_attributes(original, release, params.sensitive)
    b, bound = params.ruled_out_and_bound()
    found = sensitive_disclosure(original, release, control, names, b=b, bound=bound)
    n = original.n_records
    held = found.control
    details = {"b": b, "bound": bound, **found.details}
    if params.claims_l is not None:
        details["claims_l"] = params.claims_l
    if params.claims_c is not None:
        details["claims_c"] = params.claims_c
    return AttackResult(
        name="background-knowledge",
        assumes=f"the quasi-identifiers of every target and {b} sensitive value{'s' if b != 1 else ''} it "
        "does not hold (the most frequent in its covered set)",
        attack=wilson_rate(int(np.count_nonzero(found.attack)), n, params.confidence),
        baseline=wilson_rate(int(np.count_nonzero(found.baseline)), n, params.confidence),
        control=None
        if held is None
        else wilson_rate(int(np.count_nonzero(held)), len(held), params.confidence),
        max_risk=params.max_risk,
        details=details,
    )
