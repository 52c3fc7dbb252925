"""Linkability, anonymeter's second attack (Giomi, Boenisch, Wehmeyer & Tasnádi 2023, "A unified
framework for quantifying privacy risk in synthetic data", PoPETs).

The adversary holds two datasets about the same people, each with some of the original attributes
(``aux_cols``: two lists), and the release, and tries to tell which records of the two belong to the
same person. The attack splits ``n_attacks`` original records drawn at random (without replacement)
into their two halves and looks up, for each half, its ``n_neighbors`` nearest release records in
anonymeter's mixed-type distance on that half's attributes (:mod:`sdckit.attack._mixed`). A record
is **linked** when the two lists share a release record. The attack rate is the share of attacked
records linked.

**Baseline**: each half's ``n_neighbors`` release records drawn at random, without replacement.
**Control**: the same attack on ``n_attacks`` held-out records. Without a control the risk is the
attack rate (as anonymeter): links that come from the population's structure count as risk then.

Deviations from anonymeter 1.1: ``n_attacks`` larger than the original (or the control) attacks every
record of it (anonymeter refuses); ties between equally close release records are broken at random
(anonymeter: by the unspecified order of numpy's quicksort); columns are numeric only when numeric in
every frame (a generalized release's labels are categories); the random choices come from ``seed``
in another order, so the figures agree in distribution only.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field

from sdckit.attack import _mixed
from sdckit.attack.base import AttackParams, AttackResult, register_attack, wilson_rate
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.table import Role, Table


class LinkabilityParams(AttackParams):
    """anonymeter's linkability attack."""

    n_attacks: Annotated[int, Field(ge=1, description="Original records to attack (anonymeter: 500).")] = 500
    n_neighbors: Annotated[
        int, Field(ge=1, description="Nearest release records each half looks up (anonymeter: 1).")
    ] = 1
    aux_cols: Annotated[
        str | None,
        Field(
            min_length=1,
            description="The two adversary datasets' attributes, each comma-separated, the two parted by "
            "'/', e.g. age,sex/zip,education (default: the quasi-identifiers, first half / second half).",
        ),
    ] = None


def _halves(
    original: Table, release: Table, control: Table | None, params: LinkabilityParams
) -> tuple[list[str], list[str]]:
    if params.aux_cols is None:
        names = _mixed.with_role(original, release, Role.QUASI_IDENTIFIER) or _mixed.default_columns(
            original, release
        )
        middle = (len(names) + 1) // 2
        return names[:middle], names[middle:]
    parts = params.aux_cols.split("/")
    if len(parts) != 2:
        raise ConfigError(
            f"{spell('aux_cols')} must give two lists of attributes parted by '/', e.g. age,sex/zip, "
            f"got {params.aux_cols!r}"
        )
    first, second = (_mixed.names_list(part, "aux_cols") for part in parts)
    _mixed.check_columns(
        first + second, "aux_cols", (original, "original"), (release, "release"), (control, "control")
    )
    return first, second


def _applies(original: Table, release: Any, control: Any, params: LinkabilityParams) -> str | None:
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    first, second = _halves(original, release, control, params)
    if not first or not second:
        return (
            "the adversary's two datasets need an attribute each: the release holds fewer than two attributes"
        )
    return None


def _links(
    targets: np.ndarray,
    release: np.ndarray,
    numeric: np.ndarray,
    split: tuple[np.ndarray, np.ndarray],
    k: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Whether each target's two halves share one of their ``k`` nearest release records."""
    first, second = (
        _mixed.neighbours(targets[:, half], release[:, half], numeric[half], k, rng) for half in split
    )
    return _share(first, second)


def _share(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    return (first[:, :, None] == second[:, None, :]).any(axis=(1, 2))


def _random_neighbours(n_release: int, n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    k = min(k, n_release)
    if k == 1:
        return rng.integers(0, n_release, size=(n, 1))
    return np.stack([rng.choice(n_release, size=k, replace=False) for _ in range(n)])  # per trial


@register_attack(
    "linkability",
    LinkabilityParams,
    help="Linkability (anonymeter): two datasets of the original's attributes linked through the release.",
    releases="any microdata release: synthetic, generalized, masked",
    measures="the share of attacked original records whose two halves have a common nearest release record",
    applies=_applies,
)
def _run(
    original: Table, release: Table, control: Table | None, params: LinkabilityParams, context: Context
) -> AttackResult:
    first, second = _halves(original, release, control, params)
    names = list(dict.fromkeys(first + second))
    split = (np.array([names.index(n) for n in first]), np.array([names.index(n) for n in second]))
    rng = np.random.default_rng(params.seed)
    frames = [original.data, release.data, None if control is None else control.data]
    (ori, rel, ctl), numeric = _mixed.encode(names, frames)
    assert ori is not None and rel is not None
    k = params.n_neighbors

    def attacked(data: np.ndarray) -> tuple[int, int]:
        n = min(params.n_attacks, data.shape[0])
        targets = data[rng.choice(data.shape[0], size=n, replace=False)]
        return int(np.count_nonzero(_links(targets, rel, numeric, split, k, rng))), n

    successes, n = attacked(ori)
    guessed = int(
        np.count_nonzero(
            _share(_random_neighbours(rel.shape[0], n, k, rng), _random_neighbours(rel.shape[0], n, k, rng))
        )
    )
    control_rate = None
    if ctl is not None:
        linked, n_control = attacked(ctl)
        control_rate = wilson_rate(linked, n_control, params.confidence)
    return AttackResult(
        name="linkability",
        assumes=f"two datasets about the same people, one with {', '.join(first)}, the other with "
        f"{', '.join(second)}, and the release",
        attack=wilson_rate(successes, n, params.confidence),
        baseline=wilson_rate(guessed, n, params.confidence),
        control=control_rate,
        max_risk=params.max_risk,
        details={"aux_cols": [first, second], "n_neighbors": k},
    )
