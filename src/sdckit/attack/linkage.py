"""Record linkage as an attack on a masked release: the adversary holds the original records (their
quasi-identifiers) and links every released record to the original it most resembles; she succeeds
when the link is the record's own original (Pagliuca & Seri 1999; Domingo-Ferrer & Torra 2001;
Fellegi & Sunter 1969). The linkage itself is that of ``sdckit risk linkage``
(:func:`sdckit.risk.linkage.record_linkage`), used as a library: this module only counts its wins.

* ``method: distance`` (default): every released record is linked to its nearest original records
  (standardized Euclidean distance on numeric attributes, 0/1 on the others; a released range or
  ``*`` is at distance 0 from the values it covers); among ``t`` tied nearest records the adversary
  picks one at random, so a record whose own original is among them counts ``1/t``. The attack rate
  is the expected share of released records linked to their own original, the expected number of
  successes rounded to a whole record for Wilson's interval (the measure's ``linked_share``).
  ``assignment: one-to-one`` links by a one-to-one assignment of least total distance instead
  (sdcMicro's ``recordLinkage``).
* ``method: probabilistic``: Fellegi–Sunter linkage with EM-estimated m and u probabilities
  (``blocking``, ``max_pairs``, ``false_match_rate``, ``missed_match_rate``); a released record
  succeeds when the pair it forms with its own original is classified a link. The links to other
  originals (false matches, which the adversary cannot tell apart) are reported in the details.

**Baseline**: a random link, right with probability ``1/n``: one expected success in ``n``
trials. The release must be row-aligned with the original (record ``i`` released from original
record ``i``): that is how the attack knows the true match. Control records are not used.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.params import Finite, Whole
from sdckit.risk.linkage import LinkageParams, record_linkage
from sdckit.table import Role, Table

_PROBABILISTIC = ("blocking", "max_pairs", "false_match_rate", "missed_match_rate")


class LinkageAttackParams(AttackParams):
    """Record linkage of the released records to their originals (distance-based or Fellegi–Sunter)."""

    method: Annotated[
        Literal["distance", "probabilistic"],
        Field(description="distance (nearest neighbour) or probabilistic (Fellegi–Sunter)."),
    ] = "distance"
    attributes: Annotated[
        str | None,
        Field(
            min_length=1, description="Compared quasi-identifiers, comma-separated (default: all of them)."
        ),
    ] = None
    assignment: Annotated[
        Literal["nearest", "one-to-one"],
        Field(
            description="Distance linkage: nearest originals (ties share credit) or a one-to-one assignment."
        ),
    ] = "nearest"
    blocking: Annotated[
        str | None,
        Field(min_length=1, description="Fellegi–Sunter: attributes whose values must agree for a pair."),
    ] = None
    max_pairs: Annotated[Whole, Field(ge=1, description="Fellegi–Sunter: most candidate pairs.")] = 10_000_000
    false_match_rate: Annotated[
        Finite, Field(gt=0, lt=1, description="Fellegi–Sunter: target false-match rate mu.")
    ] = 0.01
    missed_match_rate: Annotated[
        Finite, Field(gt=0, lt=1, description="Fellegi–Sunter: target missed-match rate lambda.")
    ] = 0.05

    @model_validator(mode="after")
    def _method_parameters(self) -> LinkageAttackParams:
        if self.method == "probabilistic" and "assignment" in self.model_fields_set:
            raise ValueError("takes no {assignment} with {method} probabilistic (it is distance linkage's)")
        if self.method == "distance":
            given = [name for name in _PROBABILISTIC if name in self.model_fields_set]
            if given:
                raise ValueError(
                    "takes no Fellegi–Sunter parameter with {method} distance: "
                    + ", ".join(f"{{{name}}}" for name in given)
                )
        return self

    def linkage(self) -> LinkageParams:
        """The measure's parameters for the same linkage."""
        chosen: dict[str, Any] = {"method": self.method, "attributes": self.attributes}
        chosen.update({name: getattr(self, name) for name in self.model_fields_set if name in _PROBABILISTIC})
        if self.method == "distance":
            chosen["assignment"] = self.assignment
        return LinkageParams(**chosen)


def _applies(original: Table, release: Any, control: Any, params: LinkageAttackParams) -> str | None:
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    if params.attributes is None and not original.schema.with_role(Role.QUASI_IDENTIFIER):
        return "the configuration names no quasi-identifier (role quasi-identifier, or --qi)"
    if release.n_records != original.n_records:
        return (
            f"the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "record linkage needs a release row-aligned with its original"
        )
    if "bucket" in release.data.columns and "bucket" not in original.data.columns:
        return "a sliced release (a 'bucket' column) is not row-aligned with its original"
    return None


@register_attack(
    "linkage",
    LinkageAttackParams,
    help="Record linkage: link every released record to its original (distance-based or Fellegi–Sunter).",
    releases="row-aligned masked releases: microaggregation, noise, swapping, rounding, generalization",
    measures="the share of released records linked to their own original record",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Any, params: LinkageAttackParams, context: Context
) -> AttackResult:
    found = record_linkage(original, release, params.linkage(), context.progress)
    n = original.n_records
    details: dict[str, Any] = {"method": params.method, "attributes": list(found.attributes)}
    if found.distance is not None:
        distance = found.distance
        expected = float(distance.credit.sum())
        successes = int(math.floor(expected + 0.5))
        details.update(
            assignment=distance.assignment,
            expected_rate=expected / n,
            unique_links=int(np.count_nonzero(distance.true_match & (distance.tied == 1))),
            mean_rank=float(distance.rank.mean()),
        )
    else:
        probabilistic = found.probabilistic
        assert probabilistic is not None  # method probabilistic
        successes = int(np.count_nonzero(probabilistic.true_decision == 2))
        details.update(
            links=probabilistic.links,
            false_links=probabilistic.links - successes,
            possible_links=probabilistic.possible,
            pairs=probabilistic.pairs,
        )
    return AttackResult(
        name="linkage",
        assumes="the original records' compared attributes, and that the release is row-aligned (to tell "
        "a right link from a wrong one)",
        attack=wilson_rate(successes, n, params.confidence),
        baseline=wilson_rate(1, n, params.confidence),
        max_risk=params.max_risk,
        details=details,
    )
