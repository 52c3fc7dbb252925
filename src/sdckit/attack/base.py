"""The shape of an attack, its registry, and the statistics every attack reports.

An attack is one module of :mod:`sdckit.attack`, as a method or a measure is: a parameters object
derived from :class:`AttackParams`, a function ``run(original, release, control, params, context) ->
AttackResult`` registered with :func:`register_attack` (name and help as plain strings, so that the
registry lists attacks without importing them), and ``applies(original, release, params) -> str |
None``: None when the attack can be run on this release, else the reason it cannot (a masked
numeric attack on a release without numeric attributes, a singling-out attack without a control set).

Every attack counts, over ``n`` trials, how often the adversary succeeds with the release (the
**attack rate**), how often an adversary without it succeeds (the **baseline rate**: a guess from
public knowledge or at random, as the attack defines it) and, when original records were held out of
the release (``control``), how often the same attack succeeds on them (the **control rate**: what the
release teaches about the population rather than about its own records). Rates are estimated with
Wilson's score interval (Wilson 1927) at ``confidence`` (0.95 by default), and the **risk** is the
attack's excess over the control, normalized by the room left, ``(attack − control) / (1 −
control)``, its error propagated from both rates to first order, as anonymeter does (Giomi, Boenisch,
Wehmeyer & Tasnádi 2023, "A unified framework for quantifying privacy risk in synthetic data", PoPETs);
without a control the risk is the attack rate itself. Both are clipped to [0, 1].

The **verdict** against ``max_risk`` (when the caller sets one) is deliberately one-sided: a release
*holds* only when the upper end of the risk's interval is at most ``max_risk``; it *fails* when the
lower end is above it; otherwise the attack could not decide (more trials are needed), which counts
as not holding (a release is shown to hold, not assumed to).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import Finite, MethodParams
from sdckit.registry import Registry

__all__ = [
    "ATTACKS",
    "AttackParams",
    "AttackResult",
    "AttackReport",
    "AttackSpec",
    "ServerTarget",
    "Rate",
    "Risk",
    "attack_spec",
    "register_attack",
    "residual_risk",
    "run_attack",
    "run_attacks",
    "validate_attacks",
    "wilson_rate",
]

Verdict = Literal["holds", "fails", "undecided", "no threshold"]


class AttackParams(MethodParams):
    """Parameters every attack takes."""

    confidence: Annotated[
        Finite,
        Field(gt=0.0, lt=1.0, description="Confidence level of the intervals of the rates and the risk."),
    ] = 0.95
    max_risk: Annotated[
        Finite | None,
        Field(
            ge=0.0,
            le=1.0,
            description="The risk the release must stay below: it holds when the risk's interval lies at or "
            "below it (none: report the figures, no verdict).",
        ),
    ] = None
    seed: Annotated[int, Field(ge=0, description="Seed of the attack's random choices.")] = 0


@dataclass(frozen=True)
class Rate:
    """A success rate over Bernoulli trials: Wilson's score estimate ``value`` and its symmetric
    ``error`` at the confidence level (``ci`` clips value ± error to [0, 1])."""

    successes: int
    trials: int
    value: float
    error: float

    @property
    def ci(self) -> tuple[float, float]:
        return (_clip(self.value - self.error), _clip(self.value + self.error))

    def to_dict(self) -> dict[str, Any]:
        low, high = self.ci
        return {
            "successes": self.successes,
            "trials": self.trials,
            "value": _clip(self.value),
            "ci": [low, high],
        }


@dataclass(frozen=True)
class Risk:
    """The privacy risk an attack measures: a point ``value`` in [0, 1] and its interval."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci": [self.low, self.high]}


def _clip(value: float) -> float:
    return min(max(float(value), 0.0), 1.0)


def _probit(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 * (1.0 + confidence)))


def wilson_rate(successes: int, trials: int, confidence: float = 0.95) -> Rate:
    """Wilson's score interval for ``successes`` of ``trials`` Bernoulli trials: the centre
    ``(s + z²/2) / (n + z²)`` and the half-width ``z / (n + z²) · sqrt(s (n − s) / n + z² / 4)``,
    ``z`` the normal quantile of ``(1 + confidence) / 2`` (Wilson 1927)."""
    if trials <= 0:
        raise ConfigError("an attack needs at least one trial, got 0")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, {trials}], got {successes}")
    z = _probit(confidence)
    z2 = z * z
    denominator = trials + z2
    centre = (successes + 0.5 * z2) / denominator
    error = z / denominator * math.sqrt(successes * (trials - successes) / trials + 0.25 * z2)
    return Rate(successes=int(successes), trials=int(trials), value=centre, error=error)


def residual_risk(attack: Rate, control: Rate | None) -> Risk:
    """The risk of an attack: ``(attack − control) / (1 − control)`` with its first-order propagated
    error, or the attack rate itself without a control; clipped to [0, 1]. A control attack that
    always succeeds leaves no room to measure: the risk is then undefined (NaN)."""
    if control is None:
        low, high = attack.ci
        return Risk(_clip(attack.value), low, high)
    room = 1.0 - control.value
    if room <= 0.0:
        return Risk(math.nan, math.nan, math.nan)
    value = (attack.value - control.value) / room
    by_attack = attack.error / abs(room)
    by_control = control.error * (attack.value - 1.0) / room**2
    error = math.hypot(by_attack, by_control)
    return Risk(_clip(value), _clip(value - error), _clip(value + error))


@dataclass(frozen=True)
class AttackResult:
    """What one attack found.

    ``attack``, ``baseline`` and ``control`` are the rates (``baseline``/``control`` None when the
    attack has none); ``risk`` follows from ``attack`` and ``control`` (:func:`residual_risk`);
    ``assumes`` says in words what the adversary knows; ``details`` holds the attack's own figures
    (JSON-ready); ``max_risk`` the threshold it was judged against, if any.
    """

    name: str
    assumes: str
    attack: Rate
    baseline: Rate | None = None
    control: Rate | None = None
    max_risk: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def risk(self) -> Risk:
        return residual_risk(self.attack, self.control)

    @property
    def verdict(self) -> Verdict:
        if self.max_risk is None:
            return "no threshold"
        risk = self.risk
        if math.isnan(risk.value):
            return "undecided"
        if risk.high <= self.max_risk:
            return "holds"
        if risk.low > self.max_risk:
            return "fails"
        return "undecided"

    @property
    def holds(self) -> bool:
        """True when the release is shown to hold against this attack (or no threshold was set)."""
        return self.verdict in ("holds", "no threshold")

    def summary(self) -> dict[str, Any]:
        risk = self.risk
        return {
            "attack": self.name,
            "assumes": self.assumes,
            "attack_rate": self.attack.to_dict(),
            "baseline_rate": None if self.baseline is None else self.baseline.to_dict(),
            "control_rate": None if self.control is None else self.control.to_dict(),
            "risk": None if math.isnan(risk.value) else risk.to_dict(),
            "max_risk": self.max_risk,
            "verdict": self.verdict,
            **({"details": self.details} if self.details else {}),
        }


@dataclass(frozen=True)
class AttackSpec:
    """A registered attack.

    ``run(original, release, control, params, context) -> AttackResult``; ``applies(original,
    release, control, params) -> str | None`` (None: it can run; else why not, in words);
    ``releases`` names in words the releases it is meant for (shown in ``--help`` and the docs);
    ``measures`` what its rate counts; ``needs_control``: it cannot run without held-out records;
    ``inputs``: ``"microdata"`` (ORIGINAL and RELEASE files), ``"server"`` (a running query
    server, ``--server URL --key K``) or ``"table"`` (ORIGINAL and a published table, one row per
    cell, read as written; run when named with ``--attack``).
    """

    name: str
    params: type[AttackParams]
    run: Callable[..., AttackResult]
    help: str
    releases: str
    measures: str
    applies: Callable[..., str | None] = lambda original, release, control, params: None
    needs_control: bool = False
    inputs: Literal["microdata", "server", "table"] = "microdata"


#: The order the command line lists and runs the attacks in; attacks not named here follow, in the
#: order of their modules' names.
_FIRST = ("singling-out", "linkability", "inference")

ATTACKS: Registry[AttackSpec] = Registry(
    "attack", package="sdckit.attack", declaration="register_attack", first=_FIRST
)


def register_attack(
    name: str,
    params: type[AttackParams],
    *,
    help: str,
    releases: str,
    measures: str,
    **options: Any,
) -> Callable[[Callable[..., AttackResult]], Callable[..., AttackResult]]:
    """Register the decorated ``run`` as attack ``name`` (written at the top level of a module of
    :mod:`sdckit.attack`, ``name`` and ``help`` plain strings: the registry reads them unimported)."""

    def decorate(run: Callable[..., AttackResult]) -> Callable[..., AttackResult]:
        ATTACKS.add(
            AttackSpec(
                name=name, params=params, run=run, help=help, releases=releases, measures=measures, **options
            )
        )
        return run

    return decorate


def attack_spec(name: str) -> AttackSpec:
    """The registered attack ``name`` (its module imported); an unknown name lists the valid ones."""
    return ATTACKS.get(name)


def run_attack(
    attack: str | AttackSpec,
    original: Any,
    release: Any,
    control: Any = None,
    *,
    params: AttackParams | dict[str, Any] | None = None,
    context: Context | None = None,
) -> AttackResult:
    """Run one registered attack on ``release`` (a Table) of ``original``, with ``control`` original
    records held out of the release when there are any; ``params`` its parameters object or a
    mapping of them (defaults when None). An attack that does not apply raises a ConfigError saying
    why."""
    from sdckit.params import spell

    spec = attack_spec(attack) if isinstance(attack, str) else attack
    if not isinstance(params, spec.params):
        if isinstance(params, MethodParams):
            raise ConfigError(f"attack {spec.name} takes {spec.params.__name__}, got {type(params).__name__}")
        params = spec.params.parse(params or {}, method=spec.name)
    if spec.needs_control and control is None:
        raise ConfigError(
            f"attack {spec.name} needs original records held out of the release "
            f"({spell('control', '--control')}): hold some out before protecting and pass them"
        )
    reason = spec.applies(original, release, control, params)
    if reason is not None:
        raise ConfigError(f"attack {spec.name} does not apply to this release: {reason}")
    return spec.run(original, release, control, params, context or Context())


@dataclass(frozen=True)
class ServerTarget:
    """A running query server an attack of ``inputs="server"`` sends its queries to: its base
    ``url`` and the analyst's API ``key`` (what a real adversary holds)."""

    url: str
    key: str


@dataclass(frozen=True)
class AttackReport:
    """The results of the attacks run on one release, in the order they ran, and the attacks that
    were not run with the reason (``skipped``: name -> reason; only when no attack was named)."""

    results: tuple[AttackResult, ...]
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        """True when every attack with a threshold shows that the release holds."""
        return all(result.holds for result in self.results)

    def failing(self) -> list[str]:
        return [result.name for result in self.results if not result.holds]

    def summary(self) -> dict[str, Any]:
        return {
            "attacks": [result.summary() for result in self.results],
            "skipped": dict(self.skipped),
            "holds": self.holds,
        }


def run_attacks(
    original: Any,
    release: Any,
    control: Any = None,
    *,
    attacks: list[str] | None = None,
    settings: dict[str, dict[str, Any]] | None = None,
    inputs: str = "microdata",
    context: Context | None = None,
) -> AttackReport:
    """Run the named ``attacks`` (every registered attack of these ``inputs`` that applies, when
    None) on ``release`` of ``original``; ``settings[attack][parameter]`` sets an attack's
    parameters. A named attack that does not apply, or settings for an attack that is not run, are
    errors (nothing is silently ignored); unnamed attacks that do not apply are listed in
    ``skipped`` with the reason."""
    from sdckit.params import spell

    settings = settings or {}
    named = attacks is not None
    names = list(dict.fromkeys(attacks)) if attacks is not None else ATTACKS.names()
    specs = [attack_spec(name) for name in names]
    specs = [spec for spec in specs if named or spec.inputs == inputs]
    for spec in specs:
        if spec.inputs != inputs:
            where = {
                "server": "a running query server, not a release",
                "table": f"a published table: name only table attacks in {spell('attacks', '--attack')}",
            }.get(spec.inputs, "a release")
            raise ConfigError(f"attack {spec.name} attacks {where}")
    parsed = {spec.name: _parsed(spec, settings.get(spec.name, {})) for spec in specs}
    unknown = sorted(set(settings) - set(parsed))
    if unknown:
        raise ConfigError(
            f"{spell('settings', '--set')} names {', '.join(unknown)}, which "
            f"{'is' if len(unknown) == 1 else 'are'} not run: name it in {spell('attacks', '--attack')} "
            f"or drop the setting; attacks: {', '.join(ATTACKS.names())}"
        )
    results: list[AttackResult] = []
    skipped: dict[str, str] = {}
    for index, spec in enumerate(specs):
        params = parsed[spec.name]
        reason = "needs held-out control records" if spec.needs_control and control is None else None
        reason = reason or spec.applies(original, release, control, params)
        if reason is not None:
            if named:
                raise ConfigError(f"attack {spec.name} does not apply to this release: {reason}")
            skipped[spec.name] = reason
            continue
        if context is not None and context.stage is not None:
            context.stage(f"attack {spec.name} ({index + 1} of {len(specs)})")
        results.append(spec.run(original, release, control, params, context or Context()))
    return AttackReport(tuple(results), skipped)


def _parsed(spec: AttackSpec, values: dict[str, Any]) -> AttackParams:
    """The attack's parameters from ``values``, a problem named as ``attack.parameter`` (the command
    line's ``--set attack.parameter``)."""
    from sdckit.params import spell

    def spelled(name: str) -> str:
        return spell(f"{spec.name}.{name}", f"--set {spec.name}.{name}")

    return spec.params.parse(values, spell=spelled, method=spec.name)


def validate_attacks(settings: dict[str, dict[str, Any]], where: str = "") -> dict[str, AttackParams]:
    """The parameters object of every attack named in ``settings`` (name -> parameters), validated
    without running anything: an unknown attack or a bad parameter is a ConfigError prefixed by
    ``where`` (a recipe's file and step)."""
    prefix = f"{where}: " if where else ""
    parsed = {}
    for name, values in settings.items():
        if name not in ATTACKS:
            raise ConfigError(prefix + ATTACKS.unknown_message(name))
        spec = attack_spec(name)
        parsed[name] = spec.params.parse(values, where=where, method=name)
    return parsed
