"""Non-perturbative masking: sampling (issue 13, item 5; global recoding is :mod:`sdckit.anonymize.recode`).

``sample``
    Simple random sampling without replacement, or stratified sampling with proportional allocation:
    every stratum (a combination of the ``strata`` attributes; a missing value is a category of its
    own) keeps ``n_s = max(1, round(fraction * N_s))`` of its ``N_s`` records (halves rounded up), drawn
    uniformly without replacement; without strata the whole file is one stratum. The kept records stay
    in file order. When the configuration names a sampling weights column, the release's weights are
    the original weights divided by the stratum's realized sampling fraction ``n_s / N_s`` (the
    fraction asked, up to the rounding), so that the weights of the sample still add up to the
    weighted total of every stratum. The fraction asked and the fractions realized go to the summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field

from sdckit._numba import njit
from sdckit.anonymize.base import register_method, run_method
from sdckit.anonymize.release import Figures, Release, without_identifiers
from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import encode, extend_keys, initial_keys
from sdckit.params import Finite, MethodParams, Whole, names_list
from sdckit.table import Table

# Sampling -----------------------------------------------------------------------------------------


@njit(cache=True)
def _first_of_each_stratum(permutation: np.ndarray, keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Records visited in a uniformly random order: the first ``wanted[s]`` of every stratum ``s``
    are kept, a uniform sample without replacement of each stratum in one pass."""
    kept = np.zeros(len(keys), dtype=np.bool_)
    taken = np.zeros(len(wanted), dtype=np.int64)
    for i in permutation:
        stratum = keys[i]
        if taken[stratum] < wanted[stratum]:
            kept[i] = True
            taken[stratum] += 1
    return kept


class SampleParams(MethodParams):
    """Parameters of sampling (``sdckit anonymize sample``): simple random, or stratified with
    proportional allocation; the weights column, if any, is divided by the realized fraction."""

    fraction: Annotated[Finite, Field(gt=0, le=1, description="Sampling fraction, in (0, 1].")]
    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(description="Strata attributes, comma-separated (default: simple random sampling)."),
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the random draws.")] = 0


@dataclass(frozen=True, eq=False)
class SampleFigures(Figures):
    """What sampling drew: the strata and the records, the records kept (``kept``: the mask of kept
    records, in file order), the fraction realized overall and the smallest and largest realized
    fraction of a stratum, and the weights column rescaled (None without one)."""

    n_strata: int
    records: int
    records_kept: int
    fraction_realized: float
    smallest_stratum_fraction: float
    largest_stratum_fraction: float
    weights: str | None
    kept: np.ndarray


def _sample_summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(SampleFigures)
    return {
        "fraction": float(params.fraction),
        "strata": list(params.strata or []),
        "n_strata": figures.n_strata,
        "records": figures.records,
        "records_kept": figures.records_kept,
        "fraction_realized": figures.fraction_realized,
        "smallest_stratum_fraction": figures.smallest_stratum_fraction,
        "largest_stratum_fraction": figures.largest_stratum_fraction,
        "weights": figures.weights,
    }


def _sample_report(figures: dict[str, Any]) -> list[str]:
    strata = f" in {figures['n_strata']:,} strata" if figures["strata"] else ""
    lines = [
        f"kept {figures['records_kept']:,} of {figures['records']:,} records{strata} "
        f"(fraction {figures['fraction_realized']:.4f}, asked {figures['fraction']:g})"
    ]
    if figures["weights"]:
        lines.append(f"weights '{figures['weights']}' divided by the realized fraction of each stratum")
    return lines


@register_method(
    "sample",
    SampleParams,
    summary=_sample_summary,
    help="Simple random or stratified sampling; the fraction recorded and the weights rescaled.",
    report=_sample_report,
    not_reapplicable="which records it keeps is a random draw over the whole data, not a rule per record",
    examples={
        "minimal": {"fraction": 0.5},
        "replay on people": {"fraction": 0.3, "strata": ["Sex"], "seed": 2},
    },
)
def _run_sample(table: Table, params: SampleParams, context: Context) -> Release:
    """Sampling (see :func:`sample`)."""
    fraction = params.fraction
    strata = list(params.strata or [])
    for name in strata:
        if name not in table.data.columns:
            raise ConfigError(
                f"strata: attribute '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
    n = table.n_records
    if n == 0:
        raise InputError("the data has no records to sample")
    keys, sizes = initial_keys(n)
    if strata:
        encoding = encode(table.data, strata)
        for values, cardinality in zip(encoding.codes, encoding.cardinalities, strict=True):
            keys, sizes = extend_keys(keys, sizes, values, cardinality)
    keys = keys.astype(np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    wanted = np.maximum(1, np.floor(fraction * sizes + 0.5).astype(np.int64))
    wanted = np.minimum(wanted, sizes)
    rng = np.random.default_rng(params.seed)
    if len(sizes) == 1:
        kept = np.zeros(n, dtype=bool)
        kept[rng.permutation(n)[: wanted[0]]] = True
    else:
        kept = _first_of_each_stratum(rng.permutation(n), keys, wanted)
    frame = table.data
    realized = wanted / sizes
    if table.weights is not None:
        scaled = pl.Series(table.weights, table.sampling_weights() / realized[keys])
        frame = frame.with_columns(scaled)
    frame = frame.filter(pl.Series(kept))
    figures = SampleFigures(
        n_strata=int(len(sizes)),
        records=int(n),
        records_kept=int(kept.sum()),
        fraction_realized=float(kept.sum() / n),
        smallest_stratum_fraction=float(realized.min()),
        largest_stratum_fraction=float(realized.max()),
        weights=table.weights,
        kept=kept,
    )
    return Release(
        table=without_identifiers(table, frame),
        original=table,
        method="sample",
        quasi_identifiers=(),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        seed=params.seed,
        params=params,
        figures=figures,
    )


def sample(table: Table, fraction: float, *, strata: list[str] | None = None, seed: int = 0) -> Release:
    """A simple random or stratified (proportional allocation) sample of ``table`` (see the module
    documentation): ``Release.table`` holds the kept records in file order, identifiers dropped, the
    weights column (if the table has one) divided by the realized fraction of each record's stratum;
    ``Release.figures`` (:class:`SampleFigures`) the figures, and its ``kept`` the mask of kept
    records."""
    return run_method("sample", table, {"fraction": fraction, "strata": strata, "seed": seed}, Context())
