"""The methods that run over partitions: on the distinct patterns of the attributes they read.

Each method here reads only the patterns of some attributes with their counts, so it runs on the
aggregate of pass 1 (:func:`sdckit.scale.aggregate.aggregate`) with the records' multiplicities as
weights (or the sums of their sampling weights), and returns the same result type as its in-memory
run, with ``multiplicity`` set, so that its summary and report are the in-memory ones. Pass 2 writes
the per-record output (scores, or the release) from the per-pattern result.

Covered: the combined risk (``risk combined``), the re-identification measures (``risk
reidentification``: fk, Fk, individual and global risk), ``check`` (k-anonymity, l-diversity,
t-closeness), full-domain generalization (``anonymize generalize``), local suppression and targeted
suppression (``anonymize local-suppression``, ``anonymize targeted-suppression``); Mondrian runs by
fragments (:mod:`sdckit.scale.mondrian`). A method names its function here in its specification
(``partitioned=``); :func:`partitioned_methods` reads them from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from sdckit.context import ProgressCallback
from sdckit.errors import ConfigError
from sdckit.params import spell
from sdckit.scale.aggregate import Aggregate, aggregate, map_back
from sdckit.scale.dataset import Dataset, Partition
from sdckit.scale.engine import Engine
from sdckit.scale.result import ScaledRun
from sdckit.table import Role

if TYPE_CHECKING:  # the models are imported where a method runs, not with the registry
    from sdckit.models import ModelResult

_RELEASED = "__released_"
_SUPPRESSED = "__suppressed"


def _records(joined: pl.DataFrame, partition: Partition) -> pl.Series:
    first = partition.first_record or 0
    return pl.Series("record", np.arange(first, first + joined.height, dtype=np.int64))


# ----------------------------------------------------------------------------------------------
# The combined risk D(r)


def measured_attributes(config: Any, epsilon: float) -> list[str]:
    """The attributes the combined risk reads (as ``combined_risk`` chooses them)."""
    weights = config.data.weights
    return [
        attribute.name
        for attribute in config.attributes
        if attribute.role not in (Role.IDENTIFIER, Role.HOUSEHOLD)
        and attribute.name != weights
        and (attribute.public_probability > epsilon or attribute.sensitivity > 0)
    ]


def _scores(joined: pl.DataFrame, partition: Partition) -> pl.DataFrame:
    return pl.DataFrame(
        [
            _records(joined, partition),
            joined.get_column("risk"),
            joined.get_column("top_known_set"),
            joined.get_column("top_contribution"),
        ]
    )


def combined(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    from sdckit.risk.combined import chosen_parameters, combined_risk

    chosen = chosen_parameters(params, config)
    names = measured_attributes(config, chosen["epsilon"])
    if not names:
        raise ConfigError(
            "no attribute is measured: give some attribute a public probability above epsilon or a "
            "sensitivity"
        )
    patterns = aggregate(dataset, config, names, engine, progress)
    risk = combined_risk(patterns.table, weights=patterns.counts(), **chosen)
    risk = replace(
        risk,
        multiplicity=patterns.multiplicity,
        first_record=patterns.first_record,
        weighted=config.data.weights is not None,
        parameters={**risk.parameters, "threshold": params.threshold, "top": params.top},
    )
    parts: tuple[Path, ...] = ()
    if folder is not None:
        per_pattern = patterns.table.data.with_columns(
            pl.Series("risk", risk.risk),
            risk.top_known_set_names(),
            pl.Series("top_contribution", risk.top_contribution),
        )
        parts = map_back(patterns, per_pattern, _scores, folder, engine, columns=names)
    return ScaledRun(result=risk, parts=parts, records=patterns.n_records, patterns=patterns.frame.height)


# ----------------------------------------------------------------------------------------------
# Re-identification risk


def reidentification(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    """fk, Fk, individual and global risk, attacker models and l-diversity of the key patterns."""
    from sdckit.risk.reidentification import reidentification_risk

    keys = [a.name for a in config.attributes if a.role is Role.QUASI_IDENTIFIER]
    if not keys:
        raise ConfigError("re-identification risk needs at least one attribute with role quasi-identifier")
    household = [a.name for a in config.attributes if a.role is Role.HOUSEHOLD]
    if household:
        raise ConfigError(
            f"the household risk (attribute '{household[0]}' has role household) needs every record of a "
            "household together and is not computed over partitions; run without "
            f"{spell('engine')}/{spell('chunk_rows')}"
        )
    sensitive = [a.name for a in config.attributes if a.role is Role.SENSITIVE and a.name not in keys]
    patterns = aggregate(dataset, config, keys + sensitive, engine, progress)
    result = reidentification_risk(
        patterns.table,
        missing=params.missing or config.risk.missing,
        method=params.method,
        qual=params.qual,
        threshold=params.threshold,
        top=params.top,
        sampling_fraction=params.sampling_fraction,
        population_size=params.population_size,
        multiplicity=patterns.multiplicity,
        weight_sums=patterns.counts() if config.data.weights else None,
        first_record=patterns.first_record,
        alpha=params.alpha,
        max_global_risk=params.max_global_risk,
    )
    parts: tuple[Path, ...] = ()
    if folder is not None:
        # The rows are patterns: the records file of the patterns (the columns of the in-memory
        # run's, l-diversity included) is mapped back to every record of each pattern.
        per_record = result.records()
        per_pattern = patterns.table.data.with_columns(
            per_record.rename({name: _RECORDS_PREFIX + name for name in per_record.columns})
        )
        parts = map_back(
            patterns, per_pattern, _reidentification_records, folder, engine, columns=keys + sensitive
        )
    return ScaledRun(result=result, parts=parts, records=patterns.n_records, patterns=patterns.frame.height)


#: Marks the records file's columns in the joined frame, apart from the attributes' own names.
_RECORDS_PREFIX = "\x00records:"


def _reidentification_records(joined: pl.DataFrame, partition: Partition) -> pl.DataFrame:
    names = [name for name in joined.columns if name.startswith(_RECORDS_PREFIX)]
    return joined.select(names).rename({name: name[len(_RECORDS_PREFIX) :] for name in names})


# ----------------------------------------------------------------------------------------------
# check


def check(
    dataset: Dataset,
    config: Any,
    asked: dict[str, Any],
    missing: str,
    engine: Engine,
    folder: Path | None = None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    """``sdckit check`` of a release: the classes of its quasi-identifiers and sensitive values."""
    from sdckit.models.check import verdict

    present = set(dataset.columns)
    keys = [a.name for a in config.attributes if a.role is Role.QUASI_IDENTIFIER and a.name in present]
    if not keys:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    sensitive = [a.name for a in config.attributes if a.role is Role.SENSITIVE and a.name in present]
    patterns = aggregate(dataset, config, keys + sensitive, engine, progress, release=True)
    result = verdict(patterns.table, **asked, missing=missing, multiplicity=patterns.multiplicity)
    return ScaledRun(result=result, records=patterns.n_records, patterns=patterns.frame.height)


# ----------------------------------------------------------------------------------------------
# Releases: full-domain generalization, local suppression, targeted suppression


@dataclass(frozen=True)
class _ReleaseColumns:
    """How pass 2 writes a release: the released columns in order, which of them come from the
    pattern's result, and whether suppressed records are dropped."""

    columns: tuple[str, ...]
    replaced: tuple[str, ...]
    drop_suppressed: bool

    def __call__(self, joined: pl.DataFrame, partition: Partition) -> pl.DataFrame:
        if self.drop_suppressed:
            joined = joined.filter(~pl.col(_SUPPRESSED))
        return joined.select(
            pl.col(f"{_RELEASED}{name}").alias(name) if name in self.replaced else pl.col(name)
            for name in self.columns
        )


def _release_run(
    patterns: Aggregate,
    release: Any,
    columns: list[str],
    engine: Engine,
    folder: Path | None,
    drop_suppressed: bool = False,
) -> ScaledRun:
    release = replace(release, multiplicity=patterns.multiplicity)
    parts: tuple[Path, ...] = ()
    if folder is not None:
        released = release.table.data
        replaced = [name for name in released.columns if name in patterns.table.data.columns]
        per_pattern = patterns.table.data.with_columns(
            *(released.get_column(name).alias(f"{_RELEASED}{name}") for name in replaced),
            pl.Series(_SUPPRESSED, release.suppressed_records),
        )
        identifiers = {a.name for a in patterns.reader.attributes if a.role is Role.IDENTIFIER}
        output_columns = [name for name in patterns.dataset.columns if name not in identifiers]
        writer = _ReleaseColumns(tuple(output_columns), tuple(replaced), drop_suppressed)
        parts = map_back(
            patterns, per_pattern, writer, folder, engine, columns=list(patterns.dataset.columns)
        )
    return ScaledRun(result=release, parts=parts, records=patterns.n_records, patterns=patterns.frame.height)


def _quasi_identifiers(config: Any, dataset: Dataset) -> list[str]:
    names = [a.name for a in config.attributes if a.role is Role.QUASI_IDENTIFIER]
    if not names:
        raise ConfigError("no attribute has role quasi-identifier in the configuration")
    return names


def generalize(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    from sdckit.anonymize.recoding import full_domain_generalization

    keys = _quasi_identifiers(config, dataset)
    sensitive = [a.name for a in config.attributes if a.role is Role.SENSITIVE]
    # The classification metric's target is counted with the patterns too.
    sensitive += [params.target] if params.target is not None and params.target not in sensitive else []
    patterns = aggregate(dataset, config, keys + [s for s in sensitive if s not in keys], engine, progress)
    release = full_domain_generalization(
        patterns.table,
        params.privacy_models(patterns.table),
        quasi_identifiers=keys,
        suppression_limit=params.suppression_limit,
        metric=params.metric,
        max_nodes=params.max_nodes,
        weights=patterns.counts(),
        gs_factor=params.gs_factor,
        attribute_weights=params.attribute_weights,
        target=params.target,
    )
    release = replace(release, params=params)
    return _release_run(patterns, release, keys, engine, folder, drop_suppressed=params.drop_suppressed)


def local_suppression(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    from sdckit.anonymize.base import check_k_at_most_records
    from sdckit.anonymize.local_suppression import local_suppression as suppress

    keys = _quasi_identifiers(config, dataset)
    if params.strata is not None:
        raise ConfigError(
            f"local-suppression: {spell('strata')} are not supported over partitions (a partitioned or "
            "distributed run); run it in memory"
        )
    missing = params.missing or config.risk.missing
    params = params.model_copy(update={"missing": missing})
    patterns = aggregate(dataset, config, keys, engine, progress)
    check_k_at_most_records(params.k, patterns.n_records)
    release = suppress(
        patterns.table,
        params.k,
        quasi_identifiers=keys,
        importance=params.importance,
        missing=missing,
        strict_importance=params.strict_importance,
        weights=patterns.counts(),
        combs=params.combs,
        combs_k=params.combs_k,
    )
    return _release_run(patterns, replace(release, params=params), keys, engine, folder)


def targeted_suppression(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    """Risk-targeted suppression on the patterns of the measured attributes: the records of a pattern
    have the same risk and dominant known set, so they lose the same values."""
    from sdckit.anonymize.targeted_suppression import targeted_suppression as suppress

    resolved = {
        name: getattr(params, name) if getattr(params, name) is not None else getattr(config.risk, name)
        for name in ("alpha", "epsilon", "missing")
    }
    params = params.model_copy(update=resolved)
    names = measured_attributes(config, params.epsilon)
    if not names:
        raise ConfigError(
            "no attribute is measured: give some attribute a public probability above epsilon or a "
            "sensitivity"
        )
    patterns = aggregate(dataset, config, names, engine, progress)
    release = suppress(
        patterns.table,
        delta=params.delta,
        alpha=params.alpha,
        epsilon=params.epsilon,
        missing=params.missing,
        weights=patterns.counts(),
        repeat=params.repeat,
        max_rounds=params.max_rounds,
        cell_budget=params.cell_budget,
        multiplicity=patterns.multiplicity,
    )
    return _release_run(patterns, replace(release, params=params), names, engine, folder)


def mondrian(
    dataset: Dataset,
    config: Any,
    params: Any,
    engine: Engine,
    folder: Path | None,
    progress: ProgressCallback | None = None,
) -> ScaledRun:
    """Mondrian by fragments (:func:`sdckit.scale.mondrian.run_mondrian`); its figures are computed
    from the fragments' releases, and ``details["violation"]`` says which asked model fails, if any."""
    import tempfile

    from sdckit.scale.mondrian import run_mondrian

    if folder is None:
        with tempfile.TemporaryDirectory() as scratch:
            run = run_mondrian(dataset, config, params, engine, Path(scratch), progress=progress)
    else:
        run = run_mondrian(dataset, config, params, engine, folder, progress=progress)
    violation = _unmet(run.details["model_results"])
    return replace(run, records=run.figures["records"], details={**run.details, "violation": violation})


def _unmet(results: list[ModelResult]) -> str | None:
    """The asked models that some released class fails, as each model's result on the release says
    (:attr:`sdckit.models.ModelResult.holds`); none asked of a release of centroids."""
    failing = [result.model for result in results if not result.holds]
    return f"some released class fails {', '.join(failing)}" if failing else None


#: The measures that run over partitions, and the function that runs each.
MEASURES = {"combined": combined, "reidentification": reidentification}


def partitioned_methods() -> dict[str, Any]:
    """The anonymization methods that run over partitions (their specification's ``partitioned``),
    and the function that runs each, in the registry's order."""
    from sdckit.anonymize.base import METHODS as REGISTERED

    return {spec.name: spec.partitioned for spec in REGISTERED if spec.partitioned is not None}


def __getattr__(name: str) -> Any:
    if name == "METHODS":  # read from the registry on use: the methods' modules import this one
        return partitioned_methods()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
