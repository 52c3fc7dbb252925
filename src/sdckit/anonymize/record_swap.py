"""Targeted record swapping of households (sdcMicro's ``recordSwap``; the method the European 2021
census programme recommended for census microdata and tables).

The algorithm (Gussenbauer's C++ ``recordSwap`` in sdcMicro, after the ONS SAS code):

1. **Risk.** For every geographic level ``h`` of the hierarchy (coarsest first, say region > county
   > district), every record is counted with the records sharing its risk variables *and* its area
   at levels ``0..h``; a household's count at level ``h`` is the smallest count of its members and
   its risk ``1 / count``. A household whose count is below ``k_anonymity`` at some level must be
   swapped across the coarsest such level ``h`` (with a household of another area of level ``h``):
   it is *at risk at level h*.
2. **Draws.** ``ceil(H * swap_rate / 2)`` swaps (pairs of households; ``H`` households) are
   distributed over the areas of the finest level in proportion to their number of households, the
   fractional parts rounded at random.
3. **Swapping, coarsest level first.** At level ``h`` every household at risk at ``h`` that is still
   unswapped gets a donor: the first household of a random order (households sorted by
   ``risk_h / E``, ``E`` standard exponential: a weighted sample without replacement, Efraimidis and
   Spirakis, so riskier households come first) that is unswapped, lies in another area of level
   ``h`` and has the same values of the similarity variables (profiles tried in turn). At the finest
   level, each area also draws, with probability proportional to risk, enough further households to
   reach its share of the swaps (households it already gave as initiators count). A household for
   which no donor exists is left unswapped and takes no further part.
4. **Output.** Swapping two households exchanges the values of every geography attribute (and of the
   ``carry_along`` attributes) between all their members. Every other value, and every household's
   composition, stays as it was; the release keeps the row order.

Deviations from sdcMicro, all on purpose:

* the number of swaps is ``ceil(H * swap_rate / 2)`` (sdcMicro rounds up or down at random), so the
  rate achieved reaches the rate asked whenever donors exist;
* when the areas of the finest level cannot supply their share of households (households taken as
  donors by other areas are gone), the shortfall is drawn from all the unswapped households in
  order of risk (sdcMicro falls short);
* the fractional parts of the per-area shares are rounded up with probability proportional to the
  fraction (sdcMicro picks the areas rounded up uniformly);
* a donor always lies in another area of the level (sdcMicro may pick, as donor, a household of the
  same area that earlier failed to find its own donor);
* only the k-anonymity risk is implemented (sdcMicro's user-supplied risk matrix "is not fully
  tested" there);
* similarity variables are read on the household's first record in file order, as sdcMicro reads
  them on the first record of the household; geography must be the same for every member of a
  household (an error otherwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field

from sdckit._numba import njit
from sdckit.anonymize.base import register_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import Context
from sdckit.errors import ConfigError, InputError, location
from sdckit.frequency import encode, extend_keys, initial_keys
from sdckit.params import Finite, MethodParams, Whole, names_list, spell
from sdckit.table import Role, Schema, Table, value_strings


def household_attribute(table: Table, household: str | None = None) -> str:
    """The household id attribute: ``household`` if given, else the one attribute with role household."""
    if household is not None:
        if household not in table.data.columns:
            raise ConfigError(f"household attribute '{household}' is not a column of the data")
        return household
    found = [a.name for a in table.schema.with_role(Role.HOUSEHOLD)]
    if not found:
        raise ConfigError(
            "no attribute has role household in the configuration (give the household id `role: household`)"
        )
    if len(found) > 1:
        raise ConfigError(f"several attributes have role household: {', '.join(found)}; keep one")
    return found[0]


def _households(table: Table, household: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record its household number (0..H-1, in sorted order of the ids), the first record of every
    household in file order, and the number of records of every household."""
    column = table.column(household)
    if column.null_count():
        raise InputError(
            f"{location(table.source)}household id '{household}' is missing in "
            f"{column.null_count():,} records"
        )
    codes = encode(table.data, [household]).codes[0].astype(np.int64)
    sizes = np.bincount(codes)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    return codes, order[starts], sizes


def _check_constant(
    table: Table, names: list[str], codes: np.ndarray, first: np.ndarray, household: str
) -> None:
    encoding = encode(table.data, names)
    for name, values in zip(names, encoding.codes, strict=True):
        differ = values != values[first[codes]]
        if differ.any():
            record = int(np.argmax(differ))
            identifier = value_strings(table.column(household))[record]
            raise InputError(
                f"{location(table.source)}geography attribute '{name}' differs between the members of "
                f"household {identifier} (record {record + 1}); a household lives in one area"
            )


def _level_keys(
    table: Table, names: list[str], start: tuple[np.ndarray, np.ndarray]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Dense keys of ``start``'s groups extended by ``names[0]``, then ``names[0..1]``, ..."""
    encoding = encode(table.data, names)
    keys, sizes = start
    out = []
    for values, cardinality in zip(encoding.codes, encoding.cardinalities, strict=True):
        keys, sizes = extend_keys(keys, sizes, values, cardinality)
        out.append((keys.astype(np.int64), sizes))
    return out


@njit(cache=True)
def _find_donor(i, h, geo, used, sim_class, donor_order, class_start, pointer):
    """The first unswapped household of level ``h``'s donor order in another area of level ``h`` with
    ``i``'s similarity class, trying the profiles in turn; -1 if none."""
    for p in range(sim_class.shape[0]):
        c = sim_class[p, i]
        end = class_start[p, c + 1]
        position = pointer[p, c]
        while position < end and used[donor_order[h, p, position]]:
            position += 1
        pointer[p, c] = position
        while position < end:
            d = donor_order[h, p, position]
            if not used[d] and geo[h, d] != geo[h, i]:
                return d
            position += 1
    return -1


@njit(cache=True)
def _swap(
    geo,
    level,
    initiators,
    initiator_start,
    donor_order,
    class_start,
    sim_class,
    area_start,
    area_members,
    draws,
    sample_key,
    target,
):
    n_hier, n = geo.shape
    last = n_hier - 1
    used = np.zeros(n, dtype=np.bool_)
    failed = np.zeros(n, dtype=np.bool_)
    partner = np.full(n, -1, dtype=np.int64)
    swap_level = np.full(n, -1, dtype=np.int64)
    initiator = np.zeros(n, dtype=np.bool_)
    given = np.zeros(len(draws), dtype=np.int64)  # initiators swapped, per finest area
    pairs = 0
    topped_up = 0
    n_classes = class_start.shape[1] - 1
    pointer = np.empty((class_start.shape[0], n_classes), dtype=np.int64)
    for h in range(n_hier):
        pointer[:, :] = class_start[:, :n_classes]
        if h < last:
            for j in range(initiator_start[h], initiator_start[h + 1]):
                i = initiators[j]
                if used[i] or failed[i]:
                    continue
                d = _find_donor(i, h, geo, used, sim_class, donor_order, class_start, pointer)
                if d < 0:
                    failed[i] = True
                    continue
                used[i] = True
                used[d] = True
                partner[i] = d
                partner[d] = i
                swap_level[i] = h
                swap_level[d] = h
                initiator[i] = True
                given[geo[last, i]] += 1
                pairs += 1
            continue
        for g in range(len(draws)):
            members = area_members[area_start[g] : area_start[g + 1]]
            must = 0
            others = 0
            for i in members:
                if used[i] or failed[i]:
                    continue
                if level[i] == last:
                    must += 1
                else:
                    others += 1
            chosen = np.empty(must + others, dtype=np.int64)
            candidates = np.empty(others, dtype=np.int64)
            keys = np.empty(others, dtype=np.float64)
            m = 0
            o = 0
            for i in members:
                if used[i] or failed[i]:
                    continue
                if level[i] == last:
                    chosen[m] = i
                    m += 1
                else:
                    candidates[o] = i
                    keys[o] = -sample_key[i]
                    o += 1
            rest = max(0, draws[g] - given[g])
            n_sample = max(0, min(others, rest - must))
            if n_sample > 0:
                ranked = np.argsort(keys, kind="mergesort")
                for t in range(n_sample):
                    chosen[m + t] = candidates[ranked[t]]
            for t in range(m + n_sample):
                i = chosen[t]
                if used[i]:
                    continue
                d = _find_donor(i, last, geo, used, sim_class, donor_order, class_start, pointer)
                if d < 0:
                    failed[i] = True
                    continue
                used[i] = True
                used[d] = True
                partner[i] = d
                partner[d] = i
                swap_level[i] = last
                swap_level[d] = last
                initiator[i] = True
                given[g] += 1
                pairs += 1
    if pairs < target:
        # Top-up (not in sdcMicro): areas drained by donors leave the swap rate short.
        keys = np.empty(n, dtype=np.float64)
        for i in range(n):
            keys[i] = -sample_key[i]
        ranked = np.argsort(keys, kind="mergesort")
        for t in range(n):
            if pairs >= target:
                break
            i = ranked[t]
            if used[i] or failed[i]:
                continue
            d = _find_donor(i, last, geo, used, sim_class, donor_order, class_start, pointer)
            if d < 0:
                continue
            used[i] = True
            used[d] = True
            partner[i] = d
            partner[d] = i
            swap_level[i] = last
            swap_level[d] = last
            initiator[i] = True
            pairs += 1
            topped_up += 1
    return partner, swap_level, initiator, failed, topped_up


def _distribute(counts: np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """``total`` draws over groups in proportion to ``counts``; fractions rounded up at random with
    probability proportional to the fraction, so the draws sum to ``total`` exactly."""
    if total == 0 or counts.sum() == 0:
        return np.zeros(len(counts), dtype=np.int64)
    share = counts / counts.sum() * total
    draws = np.floor(share).astype(np.int64)
    excess = int(total - draws.sum())
    if excess > 0:
        fraction = share - draws
        keys = fraction / rng.exponential(size=len(counts))
        draws[np.argsort(-keys, kind="stable")[:excess]] += 1
    return draws


def record_swap(
    table: Table,
    hierarchy: list[str],
    *,
    similarity: list[list[str]] | None = None,
    risk_variables: list[str] | None = None,
    swap_rate: float = 0.05,
    k_anonymity: int = 3,
    carry_along: list[str] | None = None,
    seed: int = 0,
    household: str | None = None,
) -> Release:
    """Targeted record swapping of households (see the module documentation for the algorithm).

    Parameters
    ----------
    table
        Records (persons) with a household id (the attribute with role household, or ``household``).
    hierarchy
        Geography attributes, coarsest first (region, county, district).
    similarity
        Profiles of attributes a donor must share with the household it swaps with, tried in turn
        (None: any household may be a donor).
    risk_variables
        Attributes counted with the geography to find households at risk (None: the quasi-identifiers
        of the schema not in ``hierarchy``; an empty list counts geography alone).
    swap_rate
        Share of households to swap (at-risk households are swapped whatever the rate).
    k_anonymity
        A household with a member whose combination is shared by fewer than ``k_anonymity`` records of
        its area is at risk (0: none is).
    carry_along
        Further attributes swapped with the geography.
    seed
        Seed of the random draws (numpy ``default_rng``).

    Returns
    -------
    Release
        Identifiers dropped, rows in the original order; ``figures`` (:class:`RecordSwapFigures`)
        holds the figures (per level: the households at risk, those moved to another area of that
        level and those left; the swap rate achieved) and, per household number
        (``household_codes`` of every record), ``partner`` (-1 unswapped), ``swap_level`` and
        ``level`` (the level it is at risk at, or the number of levels).

    The parameters are checked by :class:`RecordSwapParams`; ``household``, which a run reads from
    the attribute with role household, is not one of them.
    """
    params = RecordSwapParams.parse(
        {
            "hierarchy": hierarchy,
            "similarity": similarity,
            "risk_variables": risk_variables,
            "swap_rate": swap_rate,
            "k_anonymity": k_anonymity,
            "carry_along": carry_along,
            "seed": seed,
        },
        method="record-swap",
    )
    return _record_swap(table, params, household)


@dataclass(frozen=True)
class _Risk:
    """Every household's area at every level (``geo``, levels x households), the level it is at risk
    at (the number of levels when none) and its risk ``1 / count`` at every level."""

    geo: np.ndarray
    level: np.ndarray
    risk: np.ndarray


def _household_risk(
    table: Table,
    hierarchy: list[str],
    risk_variables: list[str],
    households: tuple[np.ndarray, np.ndarray, np.ndarray],
    k_anonymity: int,
) -> _Risk:
    """Step 1: a household's count at level h is the smallest count of its members with their risk
    variables in their area of levels 0..h; it is at risk at the coarsest level where that count is
    below ``k_anonymity``."""
    codes, first, sizes = households
    n = table.n_records
    # Areas: dense keys of the geography prefixes, per household.
    geo_records = _level_keys(table, hierarchy, initial_keys(n))
    geo = np.stack([keys[first] for keys, _ in geo_records])
    start = initial_keys(n)
    if risk_variables:
        risk_encoding = encode(table.data, risk_variables)
        for values, cardinality in zip(risk_encoding.codes, risk_encoding.cardinalities, strict=True):
            start = extend_keys(*start, values, cardinality)
    risk_records = _level_keys(table, hierarchy, start)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    smallest = np.stack([np.minimum.reduceat(counts[keys][order], starts) for keys, counts in risk_records])
    at_risk = smallest < k_anonymity  # (n_hier, H)
    level = np.where(at_risk.any(axis=0), np.argmax(at_risk, axis=0), len(hierarchy)).astype(np.int64)
    return _Risk(geo, level, 1.0 / smallest)


def _donor_orders(
    table: Table, similarity: list[list[str]], first: np.ndarray, donor_keys: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per similarity profile, every household's class, the start of every class, and per level and
    profile the households by class then by decreasing ``donor_keys`` (risk / Exp(1))."""
    n_hier, n_households = donor_keys.shape
    n = table.n_records
    profiles = similarity or [[]]
    sim_class = np.zeros((len(profiles), n_households), dtype=np.int64)
    for p, profile in enumerate(profiles):
        if profile:
            keys = _level_keys(table, profile, initial_keys(n))[-1][0]
            sim_class[p] = keys[first]
    n_classes = int(sim_class.max()) + 1 if n_households else 1
    class_start = np.zeros((len(profiles), n_classes + 1), dtype=np.int64)
    donor_order = np.empty((n_hier, len(profiles), n_households), dtype=np.int64)
    for p in range(len(profiles)):
        class_start[p, 1:] = np.cumsum(np.bincount(sim_class[p], minlength=n_classes))
        for h in range(n_hier):
            donor_order[h, p] = np.lexsort((-donor_keys[h], sim_class[p]))
    return sim_class, class_start, donor_order


def _initiators(level: np.ndarray, geo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The households at risk at the coarser levels, level by level, by area then household, and
    where every level's start."""
    initiators, initiator_start = [], [0]
    for h in range(len(geo) - 1):
        chosen = np.flatnonzero(level == h)
        chosen = chosen[np.lexsort((chosen, geo[h, chosen]))]
        initiators.append(chosen)
        initiator_start.append(initiator_start[-1] + len(chosen))
    initiators_flat = np.concatenate(initiators) if initiators else np.zeros(0, dtype=np.int64)
    return initiators_flat.astype(np.int64), np.asarray(initiator_start, dtype=np.int64)


def _record_swap(table: Table, params: RecordSwapParams, household: str | None = None) -> Release:
    """The method (see the module documentation); ``household`` names the household id when no
    attribute has role household."""
    hierarchy = list(params.hierarchy)
    household = household_attribute(table, household)
    similarity = [list(profile) for profile in (params.similarity or [])]
    carry_along = list(params.carry_along or [])
    risk_variables = (
        list(params.risk_variables)
        if params.risk_variables is not None
        else [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name not in hierarchy]
    )
    _check_names(table, household, hierarchy, similarity, risk_variables, carry_along)
    n = table.n_records
    if n == 0:
        raise InputError(f"{location(table.source)}the data has no records to swap")
    rng = np.random.default_rng(params.seed)
    codes, first, sizes = _households(table, household)
    n_households = len(sizes)
    _check_constant(table, hierarchy, codes, first, household)
    n_hier = len(hierarchy)
    at_risk = _household_risk(table, hierarchy, risk_variables, (codes, first, sizes), params.k_anonymity)
    geo, level, risk = at_risk.geo, at_risk.level, at_risk.risk

    # Donor orders: per level, households by decreasing risk / Exp(1) within each similarity class.
    donor_keys = risk / rng.exponential(size=(n_hier, n_households))
    sim_class, class_start, donor_order = _donor_orders(table, similarity, first, donor_keys)
    initiators, initiator_start = _initiators(level, geo)

    finest = geo[-1]
    n_areas = int(finest.max()) + 1 if n_households else 0
    area_members = np.argsort(finest, kind="stable").astype(np.int64)
    area_start = np.concatenate(([0], np.cumsum(np.bincount(finest, minlength=n_areas)))).astype(np.int64)
    target = math.ceil(round(n_households * params.swap_rate / 2, 9))
    draws = _distribute(np.bincount(finest, minlength=n_areas).astype(np.float64), target, rng)
    sample_key = risk[-1] / rng.exponential(size=n_households)

    partner, swap_level, initiator, failed, topped_up = _swap(
        geo,
        level,
        initiators,
        initiator_start,
        donor_order,
        class_start,
        sim_class,
        area_start,
        area_members,
        draws,
        sample_key,
        target,
    )

    # Exchange the geography (and carried) values of swapped households, member by member.
    swapped_records = partner[codes] >= 0
    source = np.where(swapped_records, first[np.maximum(partner[codes], 0)], np.arange(n))
    index = pl.Series(source)
    released = table.data.with_columns(
        table.column(name).gather(index) for name in [*hierarchy, *carry_along]
    )
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    released = released.drop(identifiers)
    figures = _swap_figures(
        hierarchy, at_risk, (partner, swap_level, initiator, failed), int(topped_up), codes, target
    )
    return Release(
        table=Table(released, schema, source=table.source, weights=table.weights),
        original=table,
        method="record-swap",
        params=params,
        quasi_identifiers=tuple(hierarchy),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        seed=params.seed,
        figures=figures,
    )


def _swap_figures(
    hierarchy: list[str],
    at_risk: _Risk,
    swaps: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    topped_up: int,
    codes: np.ndarray,
    target: int,
) -> RecordSwapFigures:
    """The figures of the swaps: ``swaps`` is every household's partner (-1 unswapped), swap level,
    whether it initiated its swap and whether it found no donor."""
    partner, swap_level, initiator, failed = swaps
    geo, level = at_risk.geo, at_risk.level
    n_hier, n_households = geo.shape
    swapped = partner >= 0
    # An at-risk household is protected when it moved to another area of its level (a household that
    # found no donor may still serve as a donor at a finer level, and move inside its area).
    households = np.arange(n_households)
    mate = np.where(swapped, partner, households)
    crossed = np.zeros(n_households, dtype=bool)
    risky_all = level < n_hier
    crossed[risky_all] = (
        geo[level[risky_all], households[risky_all]] != geo[level[risky_all], mate[risky_all]]
    )
    per_level = {}
    for h, name in enumerate(hierarchy):
        risky = level == h
        per_level[name] = {
            "at_risk": int(risky.sum()),
            "swapped": int((risky & crossed).sum()),
            "left": int((risky & ~crossed).sum()),
            "pairs": int((initiator & (swap_level == h)).sum()),
        }
    return RecordSwapFigures(
        households=int(n_households),
        records=len(codes),
        target_pairs=int(target),
        pairs=int(initiator.sum()),
        households_swapped=int(swapped.sum()),
        records_swapped=int((partner[codes] >= 0).sum()),
        swap_rate_achieved=float(swapped.sum() / n_households) if n_households else 0.0,
        risky_households=int((level < n_hier).sum()),
        risky_households_left=int((risky_all & ~crossed).sum()),
        no_donor=int(failed.sum()),
        topped_up_pairs=topped_up,
        levels=per_level,
        partner=partner,
        swap_level=swap_level,
        household_codes=codes,
        level=level,
    )


@dataclass(frozen=True)
class RecordSwapFigures(Figures):
    """What a record swap found and did: households and records, the pairs aimed at and made,
    households and records swapped, the swap rate achieved, households at risk and those left
    unswapped, households with no donor, pairs drawn beyond the areas' shares (``topped_up_pairs``),
    per geography level its ``at_risk``, ``swapped``, ``left`` and ``pairs``; and, per household number
    (``household_codes``: every record's), ``partner`` (-1 unswapped), ``swap_level`` and ``level``
    (the level it is at risk at, or the number of levels)."""

    households: int
    records: int
    target_pairs: int
    pairs: int
    households_swapped: int
    records_swapped: int
    swap_rate_achieved: float
    risky_households: int
    risky_households_left: int
    no_donor: int
    topped_up_pairs: int
    levels: dict[str, dict[str, int]]
    partner: np.ndarray
    swap_level: np.ndarray
    household_codes: np.ndarray
    level: np.ndarray


def _check_names(
    table: Table,
    household: str,
    hierarchy: list[str],
    similarity: list[list[str]],
    risk_variables: list[str],
    carry_along: list[str],
) -> None:
    columns = set(table.data.columns)
    groups = {
        "hierarchy": hierarchy,
        "similarity": [name for profile in similarity for name in profile],
        "risk_variables": risk_variables,
        "carry_along": carry_along,
    }
    for label, names in groups.items():
        for name in names:
            if name not in columns:
                raise ConfigError(
                    f"{label}: attribute '{name}' is not a column of the data "
                    f"(columns: {', '.join(table.data.columns)})"
                )
            if name == household:
                raise ConfigError(f"{label}: '{name}' is the household id")
    if len(set(hierarchy)) != len(hierarchy):
        raise ConfigError(f"hierarchy names an attribute twice: {', '.join(hierarchy)}")
    for label in ("risk_variables", "carry_along"):
        both = [name for name in groups[label] if name in hierarchy]
        if both:
            raise ConfigError(f"{label}: '{both[0]}' is a geography attribute of the hierarchy")
    if any(not profile for profile in similarity):
        raise ConfigError("similarity: a profile names no attribute")


# Registered method ------------------------------------------------------------------------------


def _profiles(value: Any) -> Any:
    """``"hsize,tenure;hsize"`` -> ``[["hsize", "tenure"], ["hsize"]]``."""
    if isinstance(value, str):
        return [[name.strip() for name in part.split(",") if name.strip()] for part in value.split(";")]
    return value


class RecordSwapParams(MethodParams):
    """Parameters of targeted record swapping (``sdckit anonymize record-swap``; sdcMicro's recordSwap).
    The household id is the attribute with role household."""

    hierarchy: Annotated[
        list[str],
        BeforeValidator(names_list),
        Field(min_length=1, description="Geography attributes, coarsest first, comma-separated."),
    ]
    similarity: Annotated[
        list[list[str]] | None,
        BeforeValidator(_profiles),
        Field(description='Donors share these values, e.g. "hsize,tenure;hsize" (profiles tried in turn).'),
    ] = None
    risk_variables: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(description="Counted with geography for the risk (default: the other quasi-identifiers)."),
    ] = None
    swap_rate: Annotated[Finite, Field(ge=0, le=1, description="Share of households to swap.")] = 0.05
    k_anonymity: Annotated[
        Whole, Field(ge=0, description="Households with a count below it in an area are swapped (0: none).")
    ] = 3
    carry_along: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(description="Further attributes swapped with the geography, comma-separated."),
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the random draws.")] = 0


def _summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(RecordSwapFigures)
    return {
        "households": figures.households,
        "records": figures.records,
        "swap_rate": float(release.params.swap_rate),
        "target_pairs": figures.target_pairs,
        "pairs": figures.pairs,
        "households_swapped": figures.households_swapped,
        "records_swapped": figures.records_swapped,
        "swap_rate_achieved": figures.swap_rate_achieved,
        "risky_households": figures.risky_households,
        "risky_households_left": figures.risky_households_left,
        "no_donor": figures.no_donor,
        "topped_up_pairs": figures.topped_up_pairs,
        "levels": figures.levels,
    }


def _report(figures: dict[str, Any]) -> list[str]:
    lines = [
        f"households swapped: {figures['households_swapped']:,} of {figures['households']:,} "
        f"(swap rate {figures['swap_rate_achieved']:.4f}, asked {figures['swap_rate']:g}); "
        f"records swapped: {figures['records_swapped']:,}",
        f"households at risk: {figures['risky_households']:,}; left unswapped: "
        f"{figures['risky_households_left']:,}",
    ]
    for name, level in figures["levels"].items():
        lines.append(
            f"  {name}: at risk {level['at_risk']:,}, swapped {level['swapped']:,}, left {level['left']:,}; "
            f"swaps at this level {level['pairs']:,}"
        )
    return lines


def _violation(release: Release, figures: dict[str, Any]) -> str | None:
    if figures["risky_households_left"]:
        return (
            f"{figures['risky_households_left']:,} households at risk found no donor "
            f"(relax {spell('similarity')} or use a coarser {spell('hierarchy')})"
        )
    return None


@register_method(
    "record-swap",
    RecordSwapParams,
    summary=_summary,
    help="Targeted record swapping of households across geographic areas (sdcMicro's recordSwap).",
    report=_report,
    violation=_violation,
    progress_label="households",
    not_reapplicable="which households it swaps depends on their risk and on donors in the whole data",
    examples={
        "minimal": {"hierarchy": ["region", "district"]},
        "replay on households": {
            "hierarchy": ["region", "district"],
            "similarity": [["hsize"]],
            "swap_rate": 0.2,
            "seed": 3,
        },
    },
)
def _run_record_swap(table: Table, params: RecordSwapParams, context: Context) -> Release:
    return _record_swap(table, params)
