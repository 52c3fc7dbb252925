"""The shape of an anonymization method, and the registry of them.

A method is one module: a parameters object (a :class:`~sdckit.params.MethodParams`), a function
``run(table, params, context) -> Release`` and a function ``summary(release) -> dict`` of the figures
it reports, registered with :func:`register_method`. The command line makes one command per entry
(``sdckit anonymize <name>``), recipes look steps up by name, and the common tests loop over
:data:`METHODS`.

The functions of the Python API (``full_domain_generalization``, ``mondrian``, ...) stay as they
are; a method's ``run`` reads its parameters object and calls them.

The registry discovers the modules of :mod:`sdckit.anonymize` that declare a method (see
:mod:`sdckit.registry`) and imports a module when its method is run or its parameters are needed.
A specification owns what its method can do besides running: ``transformation`` (re-applying the
learnt transformation to other data: ``sdckit apply``), ``partitioned`` (a run over the partitions of
a data set: ``--engine``, ``--chunk-rows``) and ``examples`` (parameters the common tests run it
with).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sdckit.context import Context, ExtraOutput
from sdckit.errors import ConfigError
from sdckit.registry import Registry

if TYPE_CHECKING:  # polars, the counting kernels and pydantic: not needed to list the methods
    from sdckit.anonymize.release import Release
    from sdckit.params import MethodParams
    from sdckit.table import Table


@dataclass(frozen=True)
class Transformation:
    """How a method's release is re-applied to other data (:mod:`sdckit.anonymize.transform`).

    ``learn(release)`` returns the method's part of the transformation (``parameters``, what the
    header records of the release, built from its params and figures; ``attributes`` and what else it
    stores), JSON-ready; ``apply(table, transformation, names, unknown)`` releases ``table``
    (``names``: its quasi-identifiers, ``unknown``: ``"error"`` or ``"suppress"``) as the method would
    have, with ``params`` a :class:`~sdckit.anonymize.transform.RecordedParams` and figures an
    :class:`~sdckit.anonymize.release.AppliedFigures`; ``export(transformation)`` the CSV files that
    document it, as ``(key, frame)`` pairs: an attribute's name, or a file of its own named after
    ``"\0"`` (``"\0boxes"``).
    """

    learn: Callable[[Any], dict[str, Any]]
    apply: Callable[[Table, Mapping[str, Any], list[str], str], Any]
    export: Callable[[Mapping[str, Any]], list[tuple[str, Any]]]


@dataclass(frozen=True)
class MethodSpec:
    """A registered anonymization method.

    ``summary(release)`` returns the figures of the release (JSON-ready); ``report(figures)`` the
    lines a person reads; ``violation(release, figures)`` says what the release fails of what was
    asked (None when it satisfies it); ``released(release)`` the table written and handed to the next
    step of a recipe; ``exact_replay(params)``: a recipe replays bit for bit.

    Capabilities: ``transformation``: the learnt transformation can be applied to new data
    (``sdckit apply``; :class:`Transformation`), else ``not_reapplicable`` says why not;
    ``partitioned(dataset, config, params, engine, folder, progress)``: the method runs over the
    partitions of a data set (:mod:`sdckit.scale.methods`); ``examples``: named parameters (a
    mapping of field values) that the common tests run the method with, the first one its smallest
    run; the one named ``replay`` (or ``replay on <data set>``) is what the recipe replay tests
    run (``tests/test_recipes.py``).
    """

    name: str
    params: type[MethodParams]
    run: Callable[[Table, Any, Context], Release]
    summary: Callable[[Any], dict[str, Any]]
    help: str
    report: Callable[[dict[str, Any]], list[str]] = lambda figures: []
    violation: Callable[[Any, dict[str, Any]], str | None] = lambda release, figures: None
    released: Callable[[Any], Table] = lambda release: release.table
    exact_replay: Callable[[Any], bool] = lambda params: True
    progress_label: str = "progress"
    outputs: tuple[ExtraOutput, ...] = ()
    transformation: Transformation | None = None
    not_reapplicable: str | None = None
    partitioned: Callable[..., Any] | None = None
    examples: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def reapplicable(self) -> bool:
        """The learnt transformation can be applied to new data (``sdckit apply``)."""
        return self.transformation is not None


# Listed first, in this order, by the command line, the workbench and the documentation; a method
# not listed here follows, in the order of its module's name.
_LISTED_FIRST = (
    "generalize",
    "top-bottom-coding",
    "mondrian",
    "local-suppression",
    "targeted-suppression",
    "risk-suppression",
    "slicing",
    "overlapping-slicing",
    "quasi-sensitive",
    "mdav",
    "vmdav",
    "rmd",
    "univariate-microaggregation",
    "categorical-microaggregation",
    "noise",
    "romm",
    "shuffle",
    "dp-noise",
    "rank-swap",
    "swap",
    "pram",
    "record-swap",
    "sample",
    "recode",
    "pseudonymize",
    "synthesize",
)

METHODS: Registry[MethodSpec] = Registry(
    "anonymization method", package="sdckit.anonymize", declaration="register_method", first=_LISTED_FIRST
)


def register_method(
    name: str,
    params: type[MethodParams],
    *,
    summary: Callable[[Any], dict[str, Any]],
    help: str,
    **options: Any,
) -> Callable[[Callable[[Table, Any, Context], Any]], Callable[[Table, Any, Context], Any]]:
    """Register the decorated ``run(table, params, context)`` as method ``name``.

    Written at a module's top level with ``name`` and ``help`` as plain strings: the registry reads
    them from the module's source, without importing it (:func:`sdckit.registry.discover`)."""

    def decorate(run: Callable[[Table, Any, Context], Any]) -> Callable[[Table, Any, Context], Any]:
        METHODS.add(MethodSpec(name=name, params=params, run=run, summary=summary, help=help, **options))
        return run

    return decorate


def run_method(
    method: str | MethodSpec,
    table: Table,
    params: MethodParams | dict[str, Any],
    context: Context | None = None,
) -> Release:
    """Run a registered method; ``params`` may be its parameters object or a mapping of them.

    The returned release keeps, in ``release.params``, the parameters as resolved by the method
    (defaults taken from the configuration filled in), which is the step of its recipe.
    """
    from sdckit.params import MethodParams

    spec = METHODS.get(method) if isinstance(method, str) else method
    if not isinstance(params, spec.params):
        if isinstance(params, MethodParams):
            raise ConfigError(f"{spec.name} takes {spec.params.__name__}, got {type(params).__name__}")
        params = spec.params.parse(params, method=spec.name)
    release = spec.run(table, params, context or Context())
    check_finite(spec.name, table, spec.released(release))
    return release


def check_finite(method: str, original: Table, released: Table) -> None:
    """Refuse a release whose numbers overflowed: an attribute of ``released`` with more infinite or NaN
    values than ``original`` holds (those of the original are not the method's doing, wherever a swap
    moved them). The one check of every method, so that no release of ±inf is written."""
    import polars as pl

    floats = [name for name, dtype in released.data.schema.items() if dtype.is_float()]
    if not floats:
        return
    after = released.data.select(
        (~pl.col(name).is_finite()).fill_null(False).sum().alias(name) for name in floats
    ).row(0, named=True)
    for name in floats:
        if not after[name]:
            continue
        before = 0
        if name in original.data.columns and original.data.schema[name].is_numeric():
            column = pl.col(name).cast(pl.Float64)
            before = original.data.select((~column.is_finite()).fill_null(False).sum()).item()
        if after[name] > before:
            count = after[name] - before
            raise ConfigError(
                f"{method}: attribute '{name}' would be released with {count:,} value"
                f"{'s' if count != 1 else ''} that {'are' if count != 1 else 'is'} not finite "
                "(infinite or NaN) where the original is finite: the parameters take the values beyond "
                "the range of floating-point numbers; nothing is released"
            )


# Figures shared by several methods ------------------------------------------------------------


def config_value(value: Any, context: Context, section: str, key: str, default: Any) -> Any:
    """``value`` if given, else the configuration's ``section.key``, else ``default``."""
    if value is not None:
        return value
    if context.config is not None:
        return getattr(getattr(context.config, section), key)
    return default


def quasi_identifiers(table: Table) -> list[str]:
    from sdckit.table import Role

    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    return names


def check_k_at_most_records(k: int, n_records: int) -> None:
    """The data rule of every method that takes ``k`` (its parameters object bounds k below): k at
    most the number of records, written once here."""
    if k > n_records:
        raise ConfigError(f"k must be at most the number of records ({n_records}), got {k}")


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
