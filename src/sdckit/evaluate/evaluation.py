"""Measure an original and its releases with the registered risk and utility measures, and place the
releases on an R-U map.

The statistician's loop of sdcMicro and of the tutorial's "Evaluation of SDC methods": measure the
file, protect it, measure again what each release still discloses and what it lost. Every measure
comes from the registries of :mod:`sdckit.measures` (a new measure is one more name here, no code):
risk measures of one file run on the original and on each release; comparing measures (record
linkage, information loss) run on (original, release). The R-U map plots each release's headline
risk figure against its headline loss figure (:attr:`MeasureSpec.headline`).

Attacks of :mod:`sdckit.attack` (``attacks=``) run on each release beside the measures, as ``sdckit
attack`` runs them: their rates, risk and verdict go into the release's :class:`Measured`. Their
parameters share ``settings`` with the measures' (``{"interval-disclosure": {"k": 0.1}}``); a name
that is both a measure and an attack run here (``linkage``, ``reidentification``) says which with a
prefix, ``measure:linkage`` or ``attack:linkage``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.evaluate.riskiest import riskiest_sample
from sdckit.evaluate.rumap import RUPoint, pareto_front, ru_score
from sdckit.measures import MeasureSpec, first_implicate, measure_spec, run_measure
from sdckit.params import spell
from sdckit.table import Kind, Role, Table

if TYPE_CHECKING:
    from sdckit.attack.base import AttackReport

#: What ``evaluate`` measures when not told otherwise.
DEFAULT_RISK = ("reidentification", "linkage")
DEFAULT_UTILITY = ("numeric", "tables", "propensity", "classifier")
NUMERIC_KINDS = (Kind.NUMERIC,)
#: Parameters ``evaluate`` gives a measure instead of its defaults: Fellegi–Sunter linkage needs a
#: blocking chosen for the data (without one it compares every pair), so only distance linkage runs.
EVALUATE_PARAMS: dict[str, dict[str, Any]] = {"linkage": {"method": "distance"}}


@dataclass(frozen=True)
class Measured:
    """The figures of one file: ``risk`` and ``utility`` map a measure to its figures (its
    ``summary``); ``skipped`` a measure to why it did not apply; ``individual_risk`` the per-record
    risk of the re-identification measure (for histograms), when it ran."""

    name: str
    source: str
    records: int
    risk: dict[str, dict[str, Any]] = field(default_factory=dict)
    utility: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    recipe: dict[str, Any] | None = None
    individual_risk: np.ndarray | None = None
    #: The attacks run on this release (:class:`sdckit.attack.base.AttackReport`: results and the
    #: attacks that did not apply, with the reason); None when no attack was asked for.
    attacks: AttackReport | None = None


@dataclass(frozen=True)
class Evaluation:
    """An original, its releases and their R-U map.

    ``points[i]`` is release i on the map (risk: the ``risk_axis`` measure's headline figure, loss:
    the ``loss_axis`` measure's); ``front`` the indices of the releases on the Pareto front;
    ``scores[i]`` the combined score ``weight·IL + (1 − weight)·DR`` (both in percent).
    """

    original: Measured
    releases: list[Measured]
    risk_axis: str
    loss_axis: str
    points: list[RUPoint]
    front: list[int]
    scores: list[float]
    weight: float
    #: The original's riskiest records beside each release's (:mod:`sdckit.evaluate.riskiest`)
    riskiest: Any = None

    def summary(self) -> dict[str, Any]:
        def measured(item: Measured) -> dict[str, Any]:
            figures: dict[str, Any] = {
                "name": item.name,
                "source": item.source,
                "records": item.records,
                "risk": item.risk,
                "utility": item.utility,
                "skipped": item.skipped,
            }
            if item.recipe is not None:
                figures["recipe"] = item.recipe
            if item.attacks is not None:
                figures["attacks"] = item.attacks.summary()
            return figures

        return {
            "original": measured(self.original),
            "releases": [measured(item) for item in self.releases],
            "ru_map": {
                "risk": f"{self.risk_axis}.{headline(self.risk_axis, 'risk')}",
                "loss": f"{self.loss_axis}.{headline(self.loss_axis, 'utility')}",
                "weight": self.weight,
                "points": [
                    {
                        "name": p.name,
                        "risk": _number(p.risk),
                        "loss": _number(p.loss),
                        "score": _number(s),
                        "on_front": i in self.front,
                    }
                    for i, (p, s) in enumerate(zip(self.points, self.scores, strict=True))
                ],
                "front": [self.points[i].name for i in self.front],
            },
        }


def headline(name: str, group: str) -> str:
    spec = measure_spec(name, group)
    if spec.headline is None:
        raise ConfigError(f"{group} measure {name} has no headline figure to place on an R-U map")
    return spec.headline


def figure_at(figures: Mapping[str, Any], path: str) -> float:
    """The number at a dotted path of a measure's figures (NaN when absent or not a number)."""
    value: Any = figures
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return float("nan")
        value = value[part]
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else float("nan")


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _names(chosen: Sequence[str] | None, default: Sequence[str], group: str) -> tuple[list[str], bool]:
    """The measures to run and whether the caller chose them (then each must apply)."""
    names = list(default if chosen is None else chosen)
    for name in names:
        measure_spec(name, group)  # an unknown name is an error naming the valid ones
    return names, chosen is not None


def _not_applicable(spec: MeasureSpec, original: Table) -> str | None:
    """Why a measure cannot run on this data (None if it can)."""
    if spec.name == "numeric":
        numeric = [
            a.name
            for a in original.schema.attributes
            if a.kind in NUMERIC_KINDS and a.role is not Role.IDENTIFIER
        ]
        if not numeric:
            return "no attribute of kind numeric"
    if spec.name == "classifier" and not original.schema.with_role(Role.SENSITIVE):
        return "no sensitive attribute to predict"
    return None


def evaluate(
    original: Table,
    releases: Sequence[tuple[str, Table]],
    *,
    config: Any = None,
    risk: Sequence[str] | None = None,
    utility: Sequence[str] | None = None,
    risk_axis: str = "linkage",
    loss_axis: str = "tables",
    weight: float = 0.5,
    recipes: Sequence[dict[str, Any] | None] | None = None,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    original_name: str = "original",
    stage: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    attacks: Sequence[str] | str | None = None,
    control: Table | None = None,
) -> Evaluation:
    """Measure ``original`` and every ``(name, release)`` with the registered measures.

    ``risk`` and ``utility`` name the measures (default :data:`DEFAULT_RISK`,
    :data:`DEFAULT_UTILITY`; a default one that cannot apply, such as numeric information loss
    without numeric attributes, is skipped and the reason reported; a named one must apply).
    ``risk_axis`` and ``loss_axis`` choose the measures whose headline figures make the R-U map;
    ``weight`` is λ of the combined score; ``settings`` gives measures parameters
    (``{"propensity": {"model": "main"}}``). ``config``: the :class:`~sdckit.config.Config` the tables
    were read with (weights, missing values). Measures run with their default parameters, but for
    :data:`EVALUATE_PARAMS` (record linkage: distance-based only). ``stage(message)`` is called as
    each measure starts, ``progress(done, total)`` by the measures that report their progress.

    ``attacks`` names attacks of :mod:`sdckit.attack` to run on every release (each must apply), or
    is ``"all"``: every attack on microdata releases, those that do not apply to a release listed in
    its report's ``skipped`` with the reason; ``control`` the original records held out of the
    releases before they were protected (the attacks' control set). Their parameters are set in
    ``settings`` as the measures' are (``{"interval-disclosure": {"max_risk": 0.05}}``); a name that
    is a measure and an attack run here takes the prefix ``measure:`` or ``attack:``
    (:mod:`sdckit.evaluate.attacks`). Each release's :class:`~sdckit.attack.base.AttackReport` is
    its :attr:`Measured.attacks`.
    """
    from sdckit.evaluate.attacks import (
        attack_params,
        attack_plan,
        attack_release,
        check_applies,
        split_settings,
    )

    risk_names, risk_chosen = _names(risk, DEFAULT_RISK, "risk")
    utility_names, utility_chosen = _names(utility, DEFAULT_UTILITY, "utility")
    if risk_axis not in risk_names:
        raise ConfigError(
            f"{spell('risk_axis')} {risk_axis} is not among the risk measures run ({', '.join(risk_names)})"
        )
    if loss_axis not in utility_names:
        raise ConfigError(
            f"{spell('loss_axis')} {loss_axis} is not among the utility measures run "
            f"({', '.join(utility_names)})"
        )
    headline(risk_axis, "risk")  # each axis must have a headline figure
    headline(loss_axis, "utility")
    ru_score(0, 0, weight)  # refuses a weight outside [0, 1]
    if not releases:
        raise ConfigError("evaluate needs at least one release")
    recipes = list(recipes) if recipes is not None else [None] * len(releases)
    if len(recipes) != len(releases):
        raise ConfigError(f"{len(recipes)} recipes given for {len(releases)} releases: give one per release")
    context = Context(config=config, progress=progress, stage=stage)

    plan: list[tuple[MeasureSpec, str]] = []
    skipped: dict[str, str] = {}
    for names, chosen, group in (
        (risk_names, risk_chosen, "risk"),
        (utility_names, utility_chosen, "utility"),
    ):
        for name in names:
            spec = measure_spec(name, group)
            why = _not_applicable(spec, original)
            if why is not None:
                if chosen:
                    raise ConfigError(f"{group} measure {name} cannot run on this data: {why}")
                skipped[name] = why
            else:
                plan.append((spec, group))
    for axis, group in ((risk_axis, "risk"), (loss_axis, "utility")):
        if axis in skipped:
            raise ConfigError(
                f"the R-U map's {group} measure {axis} cannot run on this data: {skipped[axis]}"
            )

    planned = {spec.name for spec, _ in plan} | set(skipped)
    attack_specs, attacks_named = attack_plan(attacks, control)
    settings, attack_settings = split_settings(
        settings or {}, sorted(planned), [spec.name for spec in attack_specs]
    )
    unknown = [name for name in settings if name not in planned]
    if unknown:
        raise ConfigError(
            f"{spell('settings', '--set')} {unknown[0]}.…: {unknown[0]} is not among the measures run "
            f"({', '.join(sorted(planned))})"
        )
    parameters = {spec.name: _params(spec, settings) for spec, _ in plan}
    if attacks_named:
        check_applies(attack_specs, attack_params(attack_specs, attack_settings), original, releases, control)
    else:
        attack_params(attack_specs, attack_settings)  # every parameter checked before anything runs
    measured_original = _measure(
        original_name, original, None, original, plan, parameters, skipped, context, None
    )
    measured = []
    for (name, release), recipe in zip(releases, recipes, strict=True):
        item = _measure(name, release, original, release, plan, parameters, skipped, context, recipe)
        if attacks is not None:
            report = attack_release(
                name, original, release, control, attack_specs, attacks_named, attack_settings, context
            )
            item = replace(item, attacks=report)
        measured.append(item)
    points = [
        RUPoint(
            item.name,
            figure_at(item.risk.get(risk_axis, {}), headline(risk_axis, "risk")),
            figure_at(item.utility.get(loss_axis, {}), headline(loss_axis, "utility")),
        )
        for item in measured
    ]
    scores = [ru_score(p.loss, p.risk, weight) for p in points]
    return Evaluation(
        original=measured_original,
        releases=measured,
        risk_axis=risk_axis,
        loss_axis=loss_axis,
        points=points,
        front=pareto_front(points),
        scores=scores,
        weight=weight,
        riskiest=riskiest_sample(original, releases, measured_original.individual_risk),
    )


def _params(spec: MeasureSpec, given: Mapping[str, Mapping[str, Any]]) -> Any:
    """The measure's parameters object: :data:`EVALUATE_PARAMS` and what the caller set
    (``settings[measure][parameter]``), validated, a problem named as ``--set measure.parameter``."""
    values = {**EVALUATE_PARAMS.get(spec.name, {}), **given.get(spec.name, {})}
    return spec.params.parse(
        values, spell=lambda name: spell(f"{spec.name}.{name}", f"--set {spec.name}.{name}"), method=spec.name
    )


def parse_settings(
    items: Sequence[str], what: str = "MEASURE.PARAMETER=VALUE", example: str = "propensity.model=main"
) -> dict[str, dict[str, Any]]:
    """``["propensity.model=main", "linkage.method=both"]`` -> ``{"propensity": {"model": "main"},
    ...}``; values are read as YAML scalars (``3`` a whole number, ``0.5`` a real, ``true`` a flag).
    ``what`` and ``example`` word the message about a malformed item."""
    import yaml

    settings: dict[str, dict[str, Any]] = {}
    for item in items:
        key, equals, text = item.partition("=")
        measure, dot, name = key.strip().partition(".")
        if not equals or not dot or not measure or not name:
            raise ConfigError(f"{spell('settings', '--set')} {item!r}: write {what}, e.g. {example}")
        try:
            value = yaml.safe_load(text) if text.strip() else text
        except yaml.YAMLError:
            value = text
        if isinstance(value, dict | list):
            value = text
        settings.setdefault(measure, {})[name.replace("-", "_")] = value
    return settings


def _measure(
    name: str,
    table: Table,
    original: Table | None,
    release: Table,
    plan: Sequence[tuple[MeasureSpec, str]],
    parameters: Mapping[str, Any],
    skipped: Mapping[str, str],
    context: Context,
    recipe: dict[str, Any] | None,
) -> Measured:
    """One file's figures: its own risk, and (for a release) what compares it with the original."""
    figures: dict[str, dict[str, dict[str, Any]]] = {"risk": {}, "utility": {}}
    individual = None
    for spec, group in plan:
        if context.stage is not None and not (spec.compares and original is None and group == "utility"):
            context.stage(f"{name}: {group} {spec.name}")
        if spec.compares:
            if original is None:
                if group == "utility":
                    continue  # the original loses nothing against itself
                # The original linked to itself: what an unprotected release would disclose.
                result = run_measure(spec, table, table, params=parameters[spec.name], context=context)
            else:
                result = run_measure(spec, original, release, params=parameters[spec.name], context=context)
        else:
            # A stacked synthetic release is measured on its first implicate, as comparing measures read it.
            own = first_implicate(original, table) if original is not None else table
            result = run_measure(spec, own, params=parameters[spec.name], context=context)
            if spec.name == "reidentification" and spec.records is not None:
                individual = spec.records(result).get_column("individual_risk").to_numpy()
        figures[group][spec.name] = spec.summary(result)
    return Measured(
        name=name,
        source=str(table.source or name),
        records=table.n_records,
        risk=figures["risk"],
        utility=figures["utility"],
        skipped=dict(skipped),
        recipe=recipe,
        individual_risk=individual,
    )


__all__ = ["DEFAULT_RISK", "DEFAULT_UTILITY", "Evaluation", "Measured", "evaluate", "figure_at", "headline"]
