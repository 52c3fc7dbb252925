"""The shape of an anonymization method, and the registry of them.

A method is one module: a parameters object (a :class:`~sdckit.params.MethodParams`), a function
``run(table, params, context) -> Release`` and a function ``summary(release) -> dict`` of the figures
it reports, registered with :func:`register_method`. The command line makes one command per entry
(``sdckit anonymize <name>``), recipes look steps up by name, and the common tests loop over
:data:`METHODS`.

The functions of the Python API (``full_domain_generalization``, ``mondrian``, ...) stay as they
are; a method's ``run`` reads its parameters object and calls them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sdckit.context import Context, ExtraOutput
from sdckit.errors import ConfigError
from sdckit.params import MethodParams
from sdckit.registry import Registry
from sdckit.table import Role, Table


@dataclass(frozen=True)
class MethodSpec:
    """A registered anonymization method.

    ``summary(release)`` returns the figures of the release (JSON-ready); ``report(figures)`` the
    lines a person reads; ``violation(release, figures)`` says what the release fails of what was
    asked (None when it satisfies it); ``released(release)`` the table written and handed to the next
    step of a recipe; ``reapplicable``: the learnt transformation can be applied to new data
    (``sdckit apply``); ``exact_replay(params)``: a recipe replays bit for bit.
    """

    name: str
    params: type[MethodParams]
    run: Callable[[Table, Any, Context], Any]
    summary: Callable[[Any], dict[str, Any]]
    help: str
    report: Callable[[dict[str, Any]], list[str]] = lambda figures: []
    violation: Callable[[Any, dict[str, Any]], str | None] = lambda release, figures: None
    released: Callable[[Any], Table] = lambda release: release.table
    reapplicable: bool = False
    exact_replay: Callable[[Any], bool] = lambda params: True
    progress_label: str = "progress"
    outputs: tuple[ExtraOutput, ...] = ()


METHODS: Registry[MethodSpec] = Registry("anonymization method")


def register_method(
    name: str,
    params: type[MethodParams],
    *,
    summary: Callable[[Any], dict[str, Any]],
    help: str,
    **options: Any,
) -> Callable[[Callable[[Table, Any, Context], Any]], Callable[[Table, Any, Context], Any]]:
    """Register the decorated ``run(table, params, context)`` as method ``name``."""

    def decorate(run: Callable[[Table, Any, Context], Any]) -> Callable[[Table, Any, Context], Any]:
        METHODS.add(MethodSpec(name=name, params=params, run=run, summary=summary, help=help, **options))
        return run

    return decorate


def run_method(
    method: str | MethodSpec,
    table: Table,
    params: MethodParams | dict[str, Any],
    context: Context | None = None,
) -> Any:
    """Run a registered method; ``params`` may be its parameters object or a mapping of them.

    The returned release keeps, in ``release.params``, the parameters as resolved by the method
    (defaults taken from the configuration filled in), which is the step of its recipe.
    """
    spec = METHODS.get(method) if isinstance(method, str) else method
    if not isinstance(params, spec.params):
        if isinstance(params, MethodParams):
            raise ConfigError(f"{spec.name} takes {spec.params.__name__}, got {type(params).__name__}")
        params = spec.params.parse(params, method=spec.name)
    release = spec.run(table, params, context or Context())
    if getattr(release, "params", None) is None:
        release = dataclasses.replace(release, params=params)
    return release


# Figures shared by several methods ------------------------------------------------------------


def config_value(value: Any, context: Context, section: str, key: str, default: Any) -> Any:
    """``value`` if given, else the configuration's ``section.key``, else ``default``."""
    if value is not None:
        return value
    if context.config is not None:
        return getattr(getattr(context.config, section), key)
    return default


def quasi_identifiers(table: Table) -> list[str]:
    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    return names


def class_figures(release: Any) -> dict[str, Any]:
    sizes = release.class_sizes()
    return {
        "suppressed_records": release.n_suppressed,
        "equivalence_classes": int(len(sizes)),
        "smallest_class": int(sizes.min()) if len(sizes) else 0,
    }


def cell_figures(release: Any) -> dict[str, Any]:
    return {
        "suppressed_cells": {
            "total": release.n_suppressed_cells,
            "per_attribute": release.suppressed_cells_per_attribute(),
        }
    }


def achieved(release: Any, models: Sequence[Any]) -> dict[str, float]:
    """The models re-checked independently on the released values (records all '*' left out), a
    missing value counting as a value of its own."""
    from sdckit.models import check_table

    # The methods that re-check their release (generalization, Mondrian and their re-application)
    # form classes in which a released missing value is a value of its own (a node of the missing
    # value), so that is what they verify, whatever check_table's default.
    recheck = check_table(
        release.table,
        list(release.quasi_identifiers),
        models,
        weights=_multiplicity(release),
        missing="category",
    )
    return {result.model: float(result.worst()) for result in recheck.results}


def _multiplicity(release: Any) -> Any:
    multiplicity = getattr(release, "multiplicity", None)
    return None if multiplicity is None else multiplicity.astype(float)


def cells_report(figures: dict[str, Any]) -> list[str]:
    cells = figures["suppressed_cells"]
    shown = ", ".join(f"{name} {count:,}" for name, count in cells["per_attribute"].items() if count)
    return [f"suppressed cells: {cells['total']:,}" + (f" ({shown})" if shown else "")]


def classes_report(figures: dict[str, Any]) -> list[str]:
    return [
        f"suppressed records: {figures['suppressed_records']:,}; equivalence classes: "
        f"{figures['equivalence_classes']:,}; smallest class: {figures['smallest_class']:,}"
    ]


def achieved_report(figures: dict[str, Any]) -> list[str]:
    lines = []
    if figures.get("achieved"):
        lines.append(
            "achieved: " + "; ".join(f"{name} → {value:.4g}" for name, value in figures["achieved"].items())
        )
    if figures.get("metrics"):
        lines.append(
            "utility: " + "; ".join(f"{name} {value:.4g}" for name, value in figures["metrics"].items())
        )
    return lines


def models_unmet(release: Any, figures: dict[str, Any]) -> str | None:
    """A method's ``violation`` when what was asked is its parameters' privacy models."""
    return unmet(release, release.params.privacy_models(release.original))


def unmet(release: Any, models: Sequence[Any]) -> str | None:
    """The models that some released class fails, re-checked on the released values (None if all
    pass), a missing value counting as a value of its own as in :func:`achieved`."""
    from sdckit.models import check_table

    recheck = check_table(
        release.table,
        list(release.quasi_identifiers),
        models,
        weights=_multiplicity(release),
        missing="category",
    )
    failing = [
        f"{r.model} ({int((~r.passes).sum()):,} classes)" for r in recheck.results if not r.passes.all()
    ]
    return "fails " + ", ".join(failing) if failing else None
