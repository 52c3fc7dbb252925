"""The attacks of an evaluation: which of :mod:`sdckit.attack` run on the releases, their parameters
taken out of the settings the measures share, and their run on each release.

``attacks`` is a list of attack names (each must apply to every release, as a measure named with
``--risk`` must) or ``"all"``: every attack on microdata releases, those that do not apply to a
release listed with the reason (as the default measures that cannot run are). Their parameters come
in the same mapping as the measures' (``settings[name][parameter]``, ``--set NAME.PARAMETER=VALUE``):
the registries of measures and attacks share names (``linkage``, ``reidentification``), so a name that
is both a measure and an attack run in this evaluation must say which, ``measure:NAME`` or
``attack:NAME``; a name of one of them alone needs no prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.table import Table

#: The prefixes that say whether a setting is a measure's or an attack's.
GROUPS = ("measure", "attack")


def attack_plan(attacks: Sequence[str] | str | None, control: Table | None) -> tuple[list[Any], bool]:
    """The attacks to run (their specifications, in the registry's order for ``"all"``, as given
    otherwise) and whether they were named (then each must apply). An unknown name, an attack of a
    query server, an attack that needs held-out records without ``control``: a ConfigError."""
    from sdckit.attack.base import ATTACKS, attack_spec

    if attacks is None:
        if control is not None:
            raise ConfigError(
                f"{spell('control', '--control')} holds the records the attacks compare with: "
                f"name the attacks too ({spell('attacks', '--attack')} NAME or all)"
            )
        return [], False
    names = [attacks] if isinstance(attacks, str) else list(dict.fromkeys(attacks))
    if not names:
        raise ConfigError(f"{spell('attacks', '--attack')} names no attack: name one, or all")
    if "all" in names:
        if len(names) > 1:
            others = ", ".join(name for name in names if name != "all")
            raise ConfigError(
                f"{spell('attacks', '--attack')} all runs every attack that applies: name no other with it, "
                f"got {others}"
            )
        specs = [attack_spec(name) for name in ATTACKS.names()]
        return [spec for spec in specs if spec.inputs == "microdata"], False
    specs = [attack_spec(name) for name in names]  # an unknown name lists the valid ones
    for spec in specs:
        if spec.inputs != "microdata":
            what = "a running query server" if spec.inputs == "server" else "a published table"
            raise ConfigError(f"attack {spec.name} attacks {what}, not a microdata release")
        if spec.needs_control and control is None:
            raise ConfigError(
                f"attack {spec.name} needs original records held out of the releases "
                f"({spell('control', '--control')}): hold some out before protecting and pass them"
            )
    return specs, True


def split_settings(
    settings: Mapping[str, Mapping[str, Any]], measures: Sequence[str], attacks: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The measures' settings and the attacks' (name -> parameters), from one mapping whose names are
    measures or attacks run (``measure:NAME`` or ``attack:NAME`` when a name is both)."""
    measured: dict[str, dict[str, Any]] = {}
    attacked: dict[str, dict[str, Any]] = {}
    for key, values in settings.items():
        group, colon, name = str(key).partition(":")
        if colon:
            if group not in GROUPS:
                raise ConfigError(
                    f"{spell('settings', '--set')} {key}.…: the prefix {group}: must be measure: or attack:"
                )
        else:
            name = str(key)
            if name in measures and name in attacks:
                raise ConfigError(
                    f"{spell('settings', '--set')} {name}.…: {name} is both a measure and an attack run "
                    f"here: write measure:{name}.PARAMETER or attack:{name}.PARAMETER"
                )
            group = "attack" if name in attacks else "measure"
        target = attacked if group == "attack" else measured
        target.setdefault(name, {}).update(values)
    unknown = [name for name in attacked if name not in attacks]
    if unknown:
        run = f"the attacks run are {', '.join(attacks)}" if attacks else "no attack is run"
        raise ConfigError(
            f"{spell('settings', '--set')} attack:{unknown[0]}.…: {unknown[0]} is not among the attacks run "
            f"({run}): name it in {spell('attacks', '--attack')} or drop the setting"
        )
    return measured, attacked


def attack_params(specs: Sequence[Any], settings: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each attack's parameters object from its settings, a problem named ``--set NAME.PARAMETER``."""
    parsed = {}
    for spec in specs:

        def spelled(name: str, attack: str = spec.name) -> str:
            return spell(f"{attack}.{name}", f"--set {attack}.{name}")

        parsed[spec.name] = spec.params.parse(
            dict(settings.get(spec.name, {})), spell=spelled, method=spec.name
        )
    return parsed


def check_applies(
    specs: Sequence[Any],
    params: Mapping[str, Any],
    original: Table,
    releases: Sequence[tuple[str, Table]],
    control: Table | None,
) -> None:
    """Every named attack applies to every release, checked before anything is measured."""
    for name, release in releases:
        for spec in specs:
            reason = spec.applies(original, release, control, params[spec.name])
            if reason is not None:
                raise ConfigError(f"{name}: attack {spec.name} does not apply to this release: {reason}")


def attack_release(
    name: str,
    original: Table,
    release: Table,
    control: Table | None,
    specs: Sequence[Any],
    named: bool,
    settings: Mapping[str, Mapping[str, Any]],
    context: Context,
) -> Any:
    """The :class:`~sdckit.attack.base.AttackReport` of the attacks on one release (its stage
    messages prefixed with the release's name)."""
    from sdckit.attack.base import run_attacks

    stage: Callable[[str], None] | None = None
    if context.stage is not None:
        outer = context.stage

        def stage(message: str) -> None:
            outer(f"{name}: {message}")

    own = Context(config=context.config, progress=context.progress, stage=stage)
    names = [spec.name for spec in specs]
    # "all": every attack of the plan, unnamed, so that one that does not apply is skipped with its reason
    given = {attack: dict(values) for attack, values in settings.items()}
    try:
        return run_attacks(
            original, release, control, attacks=names if named else None, settings=given, context=own
        )
    except ConfigError as error:
        raise ConfigError(f"{name}: {error}") from None


__all__ = ["attack_plan", "attack_params", "attack_release", "check_applies", "split_settings"]
