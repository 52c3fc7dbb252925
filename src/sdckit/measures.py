"""The shape of a measure (disclosure risk or information loss), and the registries of them.

A measure is one module, as a method is (:mod:`sdckit.anonymize.base`): a parameters object (a
:class:`~sdckit.params.MethodParams`), a function that computes a result object and a function
``summary(result) -> dict`` of the figures it reports, registered with :func:`register_measure` in
:data:`RISK_MEASURES` (``sdckit risk <name>``) or :data:`UTILITY_MEASURES` (``sdckit utility
<name>``). The command line makes one command per entry; :mod:`sdckit.evaluate` and the common tests
loop over the registries.

The registries discover their measures as the method registry does (:mod:`sdckit.registry`): the
modules of :mod:`sdckit.risk` and :mod:`sdckit.utility` that declare one (``register_measure("name",
"risk", Params, ..., help="...")`` at their top level, name and help plain strings) are found without
importing them, and a module is imported when its measure is asked for. So a new measure is one new
file.

A measure of one file is ``run(table, params, context)``; a measure that compares an original with a
release (``compares=True``: record linkage, information loss) is ``run(original, release, params,
context)``. A comparing measure given a stacked synthetic release (an ``implicate`` column) reads its
first implicate, unless its parameters choose one (``implicate``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sdckit.context import Context, ExtraOutput
from sdckit.errors import ConfigError
from sdckit.params import MethodParams
from sdckit.registry import Registry

__all__ = [
    "RISK_MEASURES",
    "UTILITY_MEASURES",
    "Context",
    "ExtraOutput",
    "MeasureSpec",
    "register_measure",
    "run_measure",
]


@dataclass(frozen=True)
class MeasureSpec:
    """A registered measure.

    ``summary(result)`` returns the file-level figures (JSON-ready); ``report(figures)`` the lines a
    person reads (text with rich markup, or rich renderables such as tables); ``records(result)`` a
    polars frame with one row per record in input order (written by ``--output``), or None when the
    measure has no per-record figures; ``compares``: the measure takes an original and a release;
    ``outputs``: further files it can write (``write(result, path, title)``); ``headline``: the dotted
    path in the figures of the one number an R-U map plots for this measure (a share in [0, 1] or a
    risk; for a utility measure, a loss: lower is better), None if it has none; ``original``: the
    measure of one file also measures it as a release of an original (``--original``, given to
    ``run`` as ``context.original``), with coverage matching (:mod:`sdckit.coverage`).
    """

    name: str
    group: str
    params: type[MethodParams]
    run: Callable[..., Any]
    summary: Callable[[Any], dict[str, Any]]
    help: str
    report: Callable[[dict[str, Any]], list[Any]] = lambda figures: []
    records: Callable[[Any], Any] | None = None
    compares: bool = False
    progress_label: str = "progress"
    outputs: tuple[ExtraOutput, ...] = ()
    headline: str | None = None
    original: bool = False


#: The order the command line lists the measures in; measures not named here follow, in the order of
#: their modules' names.
_RISK_FIRST = (
    "combined",
    "reidentification",
    "suda",
    "loglinear",
    "linkage",
    "interval",
    "attribute-disclosure",
)
_UTILITY_FIRST = ("numeric", "variables", "tables", "propensity", "classifier")

RISK_MEASURES: Registry[MeasureSpec] = Registry(
    "risk measure", package="sdckit.risk", declaration="register_measure", first=_RISK_FIRST
)
UTILITY_MEASURES: Registry[MeasureSpec] = Registry(
    "utility measure", package="sdckit.utility", declaration="register_measure", first=_UTILITY_FIRST
)
_GROUPS = {"risk": RISK_MEASURES, "utility": UTILITY_MEASURES}


def register_measure(
    name: str,
    group: str,
    params: type[MethodParams],
    *,
    summary: Callable[[Any], dict[str, Any]],
    help: str,
    **options: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``run`` as measure ``name`` of ``group`` ("risk" or "utility").

    Written at the top level of a module of the group's package (:mod:`sdckit.risk`,
    :mod:`sdckit.utility`) with ``name`` and ``help`` as plain strings: the registry reads them from
    the module's source, without importing it (:func:`sdckit.registry.discover`)."""

    def decorate(run: Callable[..., Any]) -> Callable[..., Any]:
        spec = MeasureSpec(
            name=name, group=group, params=params, run=run, summary=summary, help=help, **options
        )
        _GROUPS[group].add(spec)
        return run

    return decorate


def measure_spec(name: str, group: str = "risk") -> MeasureSpec:
    _load(group)
    return _GROUPS[group].get(name)


def run_measure(
    measure: str | MeasureSpec,
    *tables: Any,
    params: MethodParams | dict[str, Any] | None = None,
    context: Context | None = None,
    group: str = "risk",
) -> Any:
    """Run a registered measure on one table (or an original and a release when it compares);
    ``params`` may be its parameters object or a mapping of them (defaults when None)."""
    spec = measure_spec(measure, group) if isinstance(measure, str) else measure
    wanted = 2 if spec.compares else 1
    if len(tables) != wanted:
        takes = "an original and a release" if spec.compares else "one table"
        raise ConfigError(f"{spec.group} measure {spec.name} takes {takes}, got {len(tables)} tables")
    if not isinstance(params, spec.params):
        if isinstance(params, MethodParams):
            raise ConfigError(f"{spec.name} takes {spec.params.__name__}, got {type(params).__name__}")
        params = spec.params.parse(params or {}, method=spec.name)
    if spec.compares and "implicate" not in spec.params.model_fields:
        tables = (tables[0], first_implicate(tables[0], tables[1]))
    return spec.run(*tables, params, context or Context())


def first_implicate(original: Any, release: Any) -> Any:
    """A stacked synthetic release (``sdckit anonymize synthesize``: an ``implicate`` column, M
    implicates one after another) as a comparing measure reads it: its first implicate, without the
    column. Any other release is returned as it is."""
    import dataclasses

    import polars as pl

    data = release.data
    if "implicate" not in data.columns or "implicate" in original.data.columns:
        return release
    first = data.filter(pl.col("implicate") == pl.col("implicate").min()).drop("implicate")
    schema = release.schema
    if "implicate" in schema.names:
        schema = type(schema)(tuple(a for a in schema.attributes if a.name != "implicate"))
    return dataclasses.replace(release, data=first, schema=schema)


def _load(group: str) -> None:
    """Check that ``group`` is a measure group. Its registry discovers the modules that declare its
    measures (:mod:`sdckit.registry`) and imports one when its measure is asked for."""
    if group not in _GROUPS:
        raise ConfigError(f"unknown measure group {group!r}: choose one of {', '.join(_GROUPS)}")
