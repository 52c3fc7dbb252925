"""Re-identification by coverage: the adversary holds a person's quasi-identifiers and looks for her
record in a generalized release (Sweeney 2002, "k-anonymity: a model for protecting privacy"; the
coverage reading of issue 18, :mod:`sdckit.coverage`).

For every original record (the target), the adversary collects the released records whose labels
cover its quasi-identifier values: its **covered set** ``C`` (``[1984, 1988)`` covers 1986, ``0*****``
covers ``028051``, ``*`` every value; a missing value is a wildcard). Without more knowledge she names
one record of ``C`` at random, and is right with probability ``1/|C|`` when the target's own released
record is in ``C`` (a truthful release always puts it there). The **attack rate** is the expected share
of targets re-identified, ``Σ [own ∈ C] / |C| / n``: sdcMicro's individual risk ``1/f_k`` read by
coverage, averaged. (Counting only the certain re-identifications, ``|C| = 1``, would call a
2-anonymous release safe although a guess in a class of two is right half the time; the share of
certain ones is reported as ``unique_share``.) For Wilson's interval the expected number of
successes is rounded to a whole number of records.

**Baseline**: the adversary without the release names one of the ``n`` records at random: one
expected success in ``n`` trials.

**claims_k** checks the k-anonymity the release claims, from the adversary's side: the attack rate is
then the share of targets whose covered set holds fewer than ``k`` released records (a 2-anonymous
release attacked as 5-anonymous fails; an honest k-anonymous one scores 0), the baseline the share an
adversary without the release sees hidden among fewer than ``k`` (0 once ``n ≥ k``).

The release must be row-aligned with the original (record ``i`` released from original record
``i``, as every sdckit method writes it). Suppressed records must stay in the file, their
quasi-identifiers ``*`` or missing: they then cover every target, and widen every covered set, as
they do for the adversary. A release whose suppressed records were dropped (``--drop-suppressed``)
no longer says which released record is whose: the attack refuses it. Control records are not used
(a record held out of the release has no released record to be found by).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from sdckit.attack._coverage import covered_sets, qi_reason
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.params import Whole
from sdckit.table import Table


class ReidentificationParams(AttackParams):
    """Re-identification by coverage of the quasi-identifiers."""

    claims_k: Annotated[
        Whole | None,
        Field(
            ge=2,
            description="The k of k-anonymity the release claims: the attack rate is then the share of "
            "records covered by fewer than k released records (none: the expected share re-identified).",
        ),
    ] = None


def _applies(original: Table, release: Any, control: Any, params: ReidentificationParams) -> str | None:
    reason = qi_reason(original, release)
    if reason is None and release.n_records != original.n_records:
        reason = (
            f"the release has {release.n_records:,} records and the original {original.n_records:,}: "
            "re-identification needs a release row-aligned with its original, suppressed records kept "
            "(not dropped)"
        )
    return reason


@register_attack(
    "reidentification",
    ReidentificationParams,
    help="Re-identification by coverage: find a person's record from her quasi-identifiers.",
    releases="row-aligned generalized releases: generalization, Mondrian, local suppression, masked codes",
    measures="the expected share of records re-identified by a guess among the released records that "
    "cover their quasi-identifiers (with claims_k: the share covered by fewer than k records)",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Any, params: ReidentificationParams, context: Context
) -> AttackResult:
    n = original.n_records
    sets = covered_sets(original, release)
    size = sets.sizes()
    own = sets.own_covered(n)
    expected = np.where(own & (size > 0), 1.0 / np.maximum(size, 1), 0.0)
    details: dict[str, Any] = {
        "quasi_identifiers": list(sets.keys),
        "expected_rate": float(expected.sum() / n),
        "unique_share": float(np.count_nonzero(own & (size == 1)) / n),
        "smallest_covered_set": int(size.min()),
        "mean_covered_set": float(size.mean()),
        "own_record_not_covered": int(np.count_nonzero(~own)),
    }
    if params.claims_k is None:
        attack = wilson_rate(int(math.floor(expected.sum() + 0.5)), n, params.confidence)
        baseline = wilson_rate(1, n, params.confidence)
        assumes = (
            "the quasi-identifiers of every target, and that the release is row-aligned; she names one "
            "released record covering them at random"
        )
    else:
        k = params.claims_k
        attack = wilson_rate(int(np.count_nonzero(size < k)), n, params.confidence)
        baseline = wilson_rate(n if n < k else 0, n, params.confidence)
        details["claims_k"] = k
        assumes = "the quasi-identifiers of every target: she counts the released records covering them"
    return AttackResult(
        name="reidentification",
        assumes=assumes,
        attack=attack,
        baseline=baseline,
        max_risk=params.max_risk,
        details=details,
    )
