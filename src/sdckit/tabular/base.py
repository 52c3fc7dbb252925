"""The shape of a tabular protection method, and the registry of them (``sdckit table <method>``).

A method is one module, as an anonymization method is (:mod:`sdckit.anonymize.base`): a parameters
object (a :class:`~sdckit.params.MethodParams`), a function ``run(problem, params, context) ->
TableResult`` registered with :func:`register_table_method`. The command line makes one command per
entry; the common tests loop over :data:`TABLE_METHODS`. The registry discovers the modules of
:mod:`sdckit.tabular` that declare a method (:mod:`sdckit.registry`), as the anonymization methods'
does: a new table method is one new file.

A :class:`TableProblem` is what every method reads: the cells and relations
(:class:`~sdckit.tabular.model.LinearTable`), the primary cells with their protection levels
(:class:`~sdckit.tabular.model.Protection`) and, when the table was built from microdata, the records
and the specification it was built with (the cell key method sums record keys over the same cells).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import MethodParams, spell
from sdckit.registry import Registry
from sdckit.tabular.model import PRIMARY, PUBLISHED, SECONDARY, TOTAL, AuditResult, LinearTable, Protection


@dataclass(frozen=True, eq=False)
class TableProblem:
    """A table to protect: ``table`` (cells and relations), ``protection`` (primary cells and
    levels), and the microdata ``source`` with the ``spec`` it was built with (None for a table read
    as cells); ``total_label``: how files label a margin (read and written); ``statuses``: the cell
    statuses set by hand (:func:`sdckit.tabular.statuses.apply_statuses` has applied them)."""

    table: LinearTable
    protection: Protection
    source: Any = None
    spec: Any = None
    total_label: str = TOTAL
    statuses: Any = None  # the cell statuses set by hand (sdckit.tabular.statuses), already applied


@dataclass(frozen=True, eq=False)
class TableResult:
    """A protected table.

    ``released``: ``(n,)`` the published value of every cell, NaN where suppressed; ``status``:
    ``published``, ``primary`` or ``secondary`` per cell (a suppression method's pattern; a
    perturbative method marks the primary cells it moved as ``primary``); ``audit``: the attacker's
    intervals of the suppressed cells (None for methods that publish every cell); ``figures``: the
    method's own figures (cost, optimality, deviation, ...), JSON-ready.
    """

    method: str
    problem: TableProblem
    released: np.ndarray
    status: np.ndarray
    figures: dict[str, Any] = field(default_factory=dict)
    audit: AuditResult | None = None
    params: MethodParams | None = None

    @property
    def table(self) -> LinearTable:
        return self.problem.table

    @property
    def protection(self) -> Protection:
        return self.problem.protection

    @property
    def suppressed(self) -> np.ndarray:
        return np.isnan(self.released)

    def frame(self) -> pl.DataFrame:
        """The protected table in long form: one row per cell with its labels, original value,
        status, released value, the rule that flagged it, its protection levels and, for a
        suppression audited exactly, the attacker's interval."""
        table, protection = self.table, self.protection
        columns: dict[str, Any] = {
            table.value_name: table.values,
            "status": self.status.astype(str),
            "released": self.released,
            "rule": protection.rule.astype(str),
            "upper_protection": protection.upper,
            "lower_protection": protection.lower,
        }
        if table.kind == "magnitude" and table.frequency is not None:
            columns = {"frequency": table.frequency, **columns}
        if self.audit is not None and self.audit.exact:
            suppressed = self.audit.suppressed
            columns["feasible_low"] = np.where(suppressed, self.audit.low, np.nan)
            columns["feasible_high"] = np.where(suppressed, self.audit.high, np.nan)
        extra = pl.DataFrame(columns, nan_to_null=True)
        return pl.concat([table.cells, extra], how="horizontal")


def pattern_status(protection: Protection, suppressed: np.ndarray) -> np.ndarray:
    """``published``/``primary``/``secondary`` per cell of a suppression pattern."""
    status = np.full(suppressed.shape[0], PUBLISHED, dtype=object)
    status[suppressed] = SECONDARY
    status[protection.primary] = PRIMARY
    return status


@dataclass(frozen=True)
class TableMethodSpec:
    """A registered tabular method.

    ``summary(result)`` the figures it reports (JSON-ready); ``report(figures)`` the lines a person
    reads; ``violation(result, figures)`` what the result fails of what was asked (None when it
    satisfies it: a suppression pattern that fails its audit, say); ``needs_primary``: the method
    protects primary cells (False for rounding, which treats every cell alike, and for the cell key
    method); ``audits``: the result is a suppression pattern that ``sdckit table`` audits and reports.
    """

    name: str
    params: type[MethodParams]
    run: Callable[[TableProblem, Any, Context], TableResult]
    summary: Callable[[TableResult], dict[str, Any]]
    help: str
    report: Callable[[dict[str, Any]], list[str]] = lambda figures: []
    violation: Callable[[TableResult, dict[str, Any]], str | None] = lambda result, figures: None
    needs_primary: bool = True
    audits: bool = False
    statuses: bool = False  # honours cell statuses set by hand (--status): suppression and its audit
    outputs: tuple[Any, ...] = ()  # no extra files of their own (the CLI's shared options write them)


TABLE_METHODS: Registry[TableMethodSpec] = Registry(
    "table method", package="sdckit.tabular", declaration="register_table_method"
)


def register_table_method(
    name: str,
    params: type[MethodParams],
    *,
    summary: Callable[[TableResult], dict[str, Any]],
    help: str,
    **options: Any,
) -> Callable[[Callable[..., TableResult]], Callable[..., TableResult]]:
    """Register the decorated ``run(problem, params, context)`` as table method ``name``.

    Written at a module's top level with ``name`` and ``help`` as plain strings: the registry reads
    them from the module's source, without importing it (:func:`sdckit.registry.discover`)."""

    def decorate(run: Callable[..., TableResult]) -> Callable[..., TableResult]:
        TABLE_METHODS.add(
            TableMethodSpec(name=name, params=params, run=run, summary=summary, help=help, **options)
        )
        return run

    return decorate


def run_table_method(
    method: str | TableMethodSpec,
    problem: TableProblem,
    params: MethodParams | dict[str, Any] | None = None,
    context: Context | None = None,
) -> TableResult:
    """Run a registered tabular method; ``params`` may be its parameters object or a mapping."""
    spec = TABLE_METHODS.get(method) if isinstance(method, str) else method
    if problem.statuses is not None and not spec.statuses:
        raise ConfigError(
            f"{spec.name} does not take cell statuses ({spell('statuses', '--status')}): it publishes "
            "every cell; they apply to "
            "suppress and audit"
        )
    if not isinstance(params, spec.params):
        if isinstance(params, MethodParams):
            raise ConfigError(f"{spec.name} takes {spec.params.__name__}, got {type(params).__name__}")
        params = spec.params.parse(params or {}, method=spec.name)
    result = spec.run(problem, params, context or Context())
    if result.params is None:
        result = dataclasses.replace(result, params=params)
    return result
