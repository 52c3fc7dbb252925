"""Attribute inference, anonymeter's third attack (Giomi, Boenisch, Wehmeyer & Tasnádi 2023, "A
unified framework for quantifying privacy risk in synthetic data", PoPETs).

The adversary knows some attributes of a person (``aux_cols``) and wants a secret one (``secret``).
For each of ``n_attacks`` original records drawn at random (without replacement) it takes the
secret of the release record nearest on the auxiliary attributes, in anonymeter's mixed-type
distance (:mod:`sdckit.attack._mixed`). A guess is **right** when it equals the secret (both missing
counts as equal); with ``regression`` when ``|guess − secret| / (|guess| + 10⁻¹²) ≤ tolerance``
(anonymeter's relative tolerance, 0.05). The attack rate is the share of right guesses.

**Baseline**: the secrets of as many release records drawn at random, matched against as many
original records drawn anew (at most the release's size). anonymeter 1.1 means the same, but aligns
the drawn release records with the targets by their row labels (``reindex_like``), so that almost
every guess is missing and its baseline is near 0 (0.02 on Adult, where guessing the commonest
salary class is right three times in four); here the guesses are matched in order.

**Control**: the same attack on ``n_attacks`` held-out records. Without a control the risk is the
attack rate (as anonymeter): what the auxiliary attributes predict of the secret in any population
counts as risk then.

Deviations from anonymeter 1.1: the tolerance is relative to the guess's magnitude (anonymeter
divides by the signed guess, so every negative guess counts as right); ties between equally close
release records are broken at random (anonymeter: by the unspecified order of numpy's quicksort);
columns are numeric only when numeric in every frame (a generalized release's labels are
categories, and a secret generalized in the release is never guessed exactly); the random choices
come from ``seed`` in another order, so the figures agree in distribution only.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field, model_validator

from sdckit.attack import _mixed
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import Finite, spell
from sdckit.table import Role, Table


class InferenceParams(AttackParams):
    """anonymeter's attribute-inference attack."""

    n_attacks: Annotated[int, Field(ge=1, description="Original records to attack (anonymeter: 500).")] = 500
    secret: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The attribute to guess (default: the configuration's first sensitive one).",
        ),
    ] = None
    aux_cols: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The attributes the adversary knows, comma-separated (default: the "
            "quasi-identifiers; without any, every other attribute).",
        ),
    ] = None
    regression: Annotated[
        bool,
        Field(
            description="Count a numeric guess within tolerance as right (anonymeter: false, exact match)."
        ),
    ] = False
    tolerance: Annotated[
        Finite,
        Field(
            ge=0.0,
            description="With regression: the relative error a right guess may have (anonymeter: 0.05).",
        ),
    ] = 0.05

    @model_validator(mode="after")
    def _tolerance_needs_regression(self) -> InferenceParams:
        if not self.regression and "tolerance" in self.model_fields_set:
            raise ValueError("tolerance only applies with regression true")
        return self


def _secret(original: Table, release: Table, params: InferenceParams) -> str | None:
    if params.secret is not None:
        return params.secret
    sensitive = _mixed.with_role(original, release, Role.SENSITIVE)
    return sensitive[0] if sensitive else None


def _aux(
    original: Table, release: Table, control: Table | None, params: InferenceParams, secret: str
) -> list[str]:
    if params.aux_cols is not None:
        names = _mixed.names_list(params.aux_cols, "aux_cols")
        _mixed.check_columns(
            names, "aux_cols", (original, "original"), (release, "release"), (control, "control")
        )
        if secret in names:
            raise ConfigError(f"{spell('aux_cols')}: '{secret}' is the secret the adversary guesses")
        return names
    known = [n for n in _mixed.with_role(original, release, Role.QUASI_IDENTIFIER) if n != secret]
    return known or [n for n in _mixed.default_columns(original, release) if n != secret]


def _applies(original: Table, release: Any, control: Any, params: InferenceParams) -> str | None:
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    secret = _secret(original, release, params)
    if secret is None:
        return "no secret to guess: name one (inference.secret) or give an attribute the role sensitive"
    _mixed.check_columns(
        [secret], "secret", (original, "original"), (release, "release"), (control, "control")
    )
    if not _aux(original, release, control, params, secret):
        return "the adversary knows no attribute: the release holds none besides the secret"
    if params.regression:
        frames = [t.data for t in (original, release, control) if t is not None]
        if not all(frame.schema[secret].is_numeric() for frame in frames):
            return f"regression guesses a number and the secret '{secret}' is not numeric in every file"
    return None


def _right(guesses: np.ndarray, secrets: np.ndarray, params: InferenceParams) -> np.ndarray:
    both_missing = np.isnan(guesses) & np.isnan(secrets)
    if params.regression:
        close = np.abs(guesses - secrets) / (np.abs(guesses) + 1e-12) <= params.tolerance
    else:
        close = guesses == secrets
    return both_missing | close


@register_attack(
    "inference",
    InferenceParams,
    help="Attribute inference (anonymeter): guess a secret attribute from the nearest release record.",
    releases="any microdata release: synthetic, generalized, masked",
    measures="the share of attacked original records whose secret the nearest release record gives",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Table | None, params: InferenceParams, context: Context
) -> AttackResult:
    secret = _secret(original, release, params)
    assert secret is not None
    aux = _aux(original, release, control, params, secret)
    names = [*aux, secret]
    rng = np.random.default_rng(params.seed)
    frames = [original.data, release.data, None if control is None else control.data]
    (ori, rel, ctl), numeric = _mixed.encode(names, frames)
    assert ori is not None and rel is not None
    width = len(aux)

    def attacked(data: np.ndarray) -> tuple[int, int]:
        n = min(params.n_attacks, data.shape[0])
        targets = data[rng.choice(data.shape[0], size=n, replace=False)]
        nearest = _mixed.neighbours(targets[:, :width], rel[:, :width], numeric[:width], 1, rng)[:, 0]
        return int(np.count_nonzero(_right(rel[nearest, width], targets[:, width], params))), n

    successes, n = attacked(ori)
    n_baseline = min(n, rel.shape[0])
    guesses = rel[rng.choice(rel.shape[0], size=n_baseline, replace=False), width]
    targets = ori[rng.choice(ori.shape[0], size=n_baseline, replace=False), width]
    guessed = int(np.count_nonzero(_right(guesses, targets, params)))
    control_rate = None
    if ctl is not None:
        right, n_control = attacked(ctl)
        control_rate = wilson_rate(right, n_control, params.confidence)
    return AttackResult(
        name="inference",
        assumes=f"{', '.join(aux)} of the attacked person, and the release; it guesses {secret}",
        attack=wilson_rate(successes, n, params.confidence),
        baseline=wilson_rate(guessed, n_baseline, params.confidence),
        control=control_rate,
        max_risk=params.max_risk,
        details={"secret": secret, "aux_cols": aux, "regression": params.regression},
    )
