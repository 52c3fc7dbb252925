"""SafePub: differentially private full-domain generalization (``sdckit anonymize safepub``).

Bild, Kuhn & Prasser (2018), "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy
Guarantees", PoPETs 2018(1):67-87; ARX's ``EDDifferentialPrivacy`` and
``DataDependentEDDPAlgorithm``. The release is truthful: records are drawn at random and generalized,
never perturbed or synthesized.

1. Every record is kept with probability β = 1 − e^(−ε_anon); the others are not released.
2. A full-domain generalization (one level per quasi-identifier, the hierarchies and lattice of
   ``generalize``) is applied to the kept records, and the records of every class with fewer than k
   records are suppressed (left out of the release). k is the smallest that makes this (ε_anon,
   δ)-differentially private (Li, Qardaji & Su 2012; :mod:`sdckit.anonymize._safepub_privacy`).
3. The generalization is either given (``levels``: the data-independent scheme, ε_anon = ε) or
   searched for (the data-dependent scheme, ε_anon = ε − ε_search, ε_search = ``search_share`` · ε):
   from the top of the lattice, ``steps`` times, the predecessors (one level lower on one attribute)
   of the current node join the candidates, the current node leaves them, and the next node is drawn
   from the candidates by the exponential mechanism with ε_search / steps and the score function
   (``score``) on the sample:

   * ``loss`` (Section 5.1, granularity): −(1/m) Σ over the records of the data of Σ over the m
     quasi-identifiers of the share of the domain covered by the released value (leaves under the
     node / leaves of the hierarchy), 1 for a suppressed or not sampled record; sensitivity k − 1
     (1 when k = 1), since one record more can release k − 1 suppressed records and its own;
   * ``discernibility`` (Section 5.2): −(Σ over released classes of |E|² + N · records suppressed or
     not sampled), N the records of the data; sensitivity N (k²/(k − 1) + 1) (5N when k = 1).

   The scores are ARX's (``MetricMDNMLoss.getScore``, ``MetricSDNMDiscernability.getScore``): on
   ARX's deterministic sample of Adult they are the values ARX's own tests expect.

The release is (ε, δ)-differentially private with ε = ε_anon + ε_search (sequential composition; the
paper's Theorem), stated in the summary with ε_anon, ε_search, β, k, the steps and the chosen node.

Deviations and choices:

* ``final_choice``: the paper and ARX release the visited node with the best score on the sample.
  That comparison reads the sample without noise and is none of the accounted draws, so the stated ε
  would not cover it. The default, ``exponential``, draws the released node from the visited ones by
  the exponential mechanism, with one more share of ε_search (ε_search / (steps + 1) per draw), so
  that every data-dependent choice is accounted. ``best`` (ties to the lower node) reproduces the
  paper and ARX; the summary then says the choice is outside the stated ε.
* k is the smallest k the theorem allows; ARX's is one larger (see
  :mod:`sdckit.anonymize._safepub_privacy`).
* Suppressed records are left out of the release, as (k, β)-SDGS defines it; ARX writes them as '*'.
* The guarantee covers the quasi-identifiers. Attributes of other roles are released as they are,
  as ARX releases insensitive attributes; the summary lists them (``not_generalized``).
* The exponential mechanism is drawn by the Gumbel-max trick from the seeded generator and accounted
  by OpenDP's privacy map of the same mechanism (OpenDP's own samplers cannot be seeded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field, field_validator, model_validator

from sdckit import _kernels_lattice
from sdckit.anonymize._safepub_privacy import (
    draw_epsilon,
    exponential_mechanism,
    k_threshold,
    sampling_probability,
)
from sdckit.anonymize.base import register_method
from sdckit.anonymize.release import Figures, Release, without_identifiers
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.frequency import dense_keys
from sdckit.hierarchy import MISSING_LABEL, Hierarchy
from sdckit.params import Finite, MethodParams, Whole, names_list
from sdckit.table import Role, Table

__all__ = ["SafePubFigures", "SafePubParams", "node_scores"]


def _levels_list(value: Any) -> Any:
    if isinstance(value, dict):
        return [f"{name}={level}" for name, level in value.items()]
    return names_list(value)


class SafePubParams(MethodParams):
    """Parameters of SafePub (``sdckit anonymize safepub``)."""

    epsilon: Annotated[
        Finite,
        Field(gt=0, le=5, description="Total ε of the release's (ε, δ)-differential privacy (at most 5)."),
    ] = 2.0
    delta: Annotated[Finite, Field(gt=0, lt=1, description="δ of (ε, δ)-differential privacy.")] = 1e-6
    levels: Annotated[
        list[str] | None,
        BeforeValidator(_levels_list),
        Field(
            description="Data-independent scheme: the level of every quasi-identifier, as name=level, "
            "comma-separated (default: the data-dependent search)."
        ),
    ] = None
    search_share: Annotated[
        Finite,
        Field(gt=0, lt=1, description="Share of ε spent on the data-dependent search (ARX's 0.1)."),
    ] = 0.1
    steps: Annotated[Whole, Field(ge=1, description="Steps of the data-dependent search.")] = 100
    score: Annotated[
        Literal["loss", "discernibility"],
        Field(description="Score the search's exponential mechanism uses (SafePub's Section 5)."),
    ] = "loss"
    final_choice: Annotated[
        Literal["best", "exponential"],
        Field(
            description="Released node among those visited: an exponential-mechanism draw with its "
            "own share of the search's ε (accounted), or the best score (the paper and ARX; outside the "
            "stated ε)."
        ),
    ] = "exponential"
    seed: Annotated[Whole, Field(ge=0, description="Seed of the sampling and of the search's draws.")] = 0

    @field_validator("levels")
    @classmethod
    def _levels_pairs(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one attribute as name=level")
        seen = set()
        for item in value:
            name, sign, level = item.partition("=")
            if not sign or not name.strip() or not level.strip().isdigit():
                raise ValueError(f"must be name=level pairs (level a whole number ≥ 0), got '{item}'")
            if name.strip() in seen:
                raise ValueError(f"names '{name.strip()}' twice")
            seen.add(name.strip())
        return [f"{item.partition('=')[0].strip()}={int(item.partition('=')[2])}" for item in value]

    @model_validator(mode="after")
    def _search_options(self) -> Self:
        if self.levels is not None:
            used = [
                name
                for name in ("search_share", "steps", "score", "final_choice")
                if name in self.model_fields_set
            ]
            if used:
                raise ValueError(
                    f"takes {{{used[0]}}} only without {{levels}} (the data-dependent search; "
                    "given levels are the data-independent scheme)"
                )
        return self

    def scheme_levels(self) -> dict[str, int] | None:
        """The given levels by attribute (None: the data-dependent search)."""
        if self.levels is None:
            return None
        return {item.partition("=")[0]: int(item.partition("=")[2]) for item in self.levels}


@dataclass(frozen=True, eq=False)
class SafePubFigures(Figures):
    """What SafePub did: the privacy parameters (``epsilon`` = ``epsilon_anon`` +
    ``epsilon_search``, ``delta``, ``beta``, ``k``; ``epsilon_per_draw`` as OpenDP accounts one draw),
    the scheme and the search (``steps`` taken, ``draws``, nodes ``evaluated``, the ``visited``
    nodes' levels), the chosen node's ``score``, and the records (``sampled`` and ``released``: masks
    over the original records, in file order)."""

    epsilon: float
    delta: float
    epsilon_anon: float
    epsilon_search: float
    epsilon_per_draw: float
    beta: float
    k: int
    scheme: str
    steps: int
    draws: int
    evaluated: int
    visited: tuple[tuple[int, ...], ...]
    score: float | None
    sampled: np.ndarray
    released: np.ndarray
    not_generalized: tuple[str, ...]


# Scores ------------------------------------------------------------------------------------------


@dataclass
class _Problem:
    """The sample's distinct quasi-identifier combinations and what a node's score needs: the
    generalized code and the domain share of every combination at every level of every attribute,
    computed once."""

    hierarchies: list[Hierarchy]
    leaf_codes: np.ndarray  # (C, m) leaves of every combination
    counts: np.ndarray  # (C,) sampled records of every combination
    n_records: int  # N: records of the data (sampled or not)
    k: int

    def __post_init__(self) -> None:
        self.generalized = [
            [
                np.ascontiguousarray(h.codes[:, level], dtype=np.int64)[self.leaf_codes[:, j]]
                for level in range(h.n_levels)
            ]
            for j, h in enumerate(self.hierarchies)
        ]
        self.cards = [[h.n_nodes(level) for level in range(h.n_levels)] for h in self.hierarchies]
        self.shares = [
            [h.leaf_counts(level)[codes] / max(h.n_leaves, 1) for level, codes in enumerate(per_level)]
            for h, per_level in zip(self.hierarchies, self.generalized, strict=True)
        ]
        self.total = float(self.counts.sum())  # whole numbers: exact in any order
        # A node is grouped by the full-domain search's compiled call (``classes_k``): the codes as
        # one padded (attribute, level, combination) array, the class count of every (attribute,
        # level) as the mixed radix, and a scratch table (all -1, left so). Skipped (the numpy path
        # of :meth:`classes`) when that array would be large. 16-bit codes even where 8 would do:
        # the search's own 16-bit specialization (compiled ahead of time) serves every data set of
        # fewer than 65,536 leaves, at no measurable cost on Adult.
        count, m = len(self.counts), len(self.hierarchies)
        depth = max((h.n_levels for h in self.hierarchies), default=0)
        self.stack: np.ndarray | None = None
        if count and m and m * depth * count * 4 <= 256 * 2**20:
            widest = max(h.n_leaves for h in self.hierarchies)
            self.stack = np.zeros((m, depth, count), dtype=np.uint16 if widest <= 2**16 else np.int32)
            for j, h in enumerate(self.hierarchies):
                _kernels_lattice.level_codes(
                    self.stack[j],
                    np.ascontiguousarray(h.codes, dtype=np.int32),
                    np.ascontiguousarray(self.leaf_codes[:, j], dtype=np.int32),
                )
            self.level_counts = np.ones((m, depth), dtype=np.int64)
            for j, per_level in enumerate(self.cards):
                self.level_counts[j, : len(per_level)] = per_level
            self.scratch = np.full(4 * count + 1024, -1, dtype=np.int32)

    def grouped(self, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, float] | None:
        """The node's classes for its score, in one compiled call: the class of every combination
        (numbered by first appearance, not as :meth:`classes` numbers them), the records of every
        class, whether each class reaches k, and the records of those that do not (sums of whole
        numbers: exact, as numpy's). None when the keys would not fit in int64 (or no array)."""
        if self.stack is None:
            return None
        fits, keys, sizes, _, passes, _, suppressed = _kernels_lattice.classes_k(
            self.stack,
            np.array(levels, dtype=np.int64),
            self.level_counts,
            self.counts,
            float(self.k),
            self.scratch,
        )
        return (keys, sizes, passes, float(suppressed)) if fits else None

    def classes(self, levels: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Class of every combination and the records of every class."""
        count = len(self.counts)
        if not count:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        combined = np.zeros(count, dtype=np.int64)
        upper = 1
        for j, level in enumerate(levels):
            cardinality = self.cards[j][level]
            if upper * cardinality >= 2**62:  # the key so far, renumbered densely, then this column
                dense, _ = dense_keys(combined)
                combined, upper = dense.astype(np.int64), int(dense.max(initial=-1)) + 1
            combined *= cardinality
            combined += self.generalized[j][level]
            upper *= cardinality
        classes, _ = dense_keys(combined, upper if upper <= 4 * count + 1024 else 0)
        classes = classes.astype(np.int64)
        sizes = np.bincount(classes, weights=self.counts).astype(np.float64)
        return classes, sizes


def node_scores(problem: _Problem, levels: tuple[int, ...], score: str) -> float:
    """The score of the node at ``levels`` on the sample, divided by its sensitivity (SafePub's
    Section 5; higher is better)."""
    k, n = problem.k, problem.n_records
    grouped = problem.grouped(levels)
    if grouped is not None:
        keys, sizes, class_released, suppressed = grouped
        released = class_released.take(keys)
        released_records = problem.total - suppressed
    else:
        classes, sizes = problem.classes(levels)
        released = sizes[classes] >= k if len(classes) else np.zeros(0, dtype=bool)
        class_released = sizes >= k
        released_records = float(problem.counts[released].sum())
    if score == "loss":
        m = len(problem.hierarchies)
        # Σ over the attributes in their order, from 0 as before (0 + x is x: the shares are > 0).
        first = 2 if m > 1 else 0
        pair = problem.shares[0][levels[0]] + problem.shares[1][levels[1]] if first else None
        shares = pair if pair is not None else np.zeros(len(problem.counts))
        for j in range(first, m):
            shares += problem.shares[j][levels[j]]
        # The products of the released combinations in their order, summed by numpy (pairwise):
        # the same floating-point sum whichever way the classes were found.
        shares *= problem.counts
        penalty = float(shares[released].sum()) / m + (n - released_records)
        return -penalty / (k - 1 if k > 1 else 1)
    penalty = float((sizes[class_released] ** 2).sum()) + n * (n - released_records)
    sensitivity = n * (k * k / (k - 1) + 1 if k > 1 else 5)
    return -penalty / sensitivity


# The search ---------------------------------------------------------------------------------------


def _search(
    problem: _Problem, params: SafePubParams, epsilon_search: float, rng: np.random.Generator
) -> tuple[tuple[int, ...], float, list[tuple[int, ...]], int, int, float]:
    """SafePub's data-dependent search (ARX's ``DataDependentEDDPAlgorithm``): the chosen levels,
    their score, the visited nodes, the nodes evaluated, the draws and the ε of each draw."""
    top = tuple(h.n_levels - 1 for h in problem.hierarchies)
    draws = params.steps + (1 if params.final_choice == "exponential" else 0)
    per_draw = epsilon_search / draws
    known: dict[tuple[int, ...], float] = {}

    def scored(levels: tuple[int, ...]) -> float:
        if levels not in known:
            known[levels] = node_scores(problem, levels, params.score)
        return known[levels]

    pivot = top
    candidates: dict[tuple[int, ...], float] = {top: scored(top)}
    visited = [top]
    made = 0
    for _ in range(params.steps):
        for j, level in enumerate(pivot):
            if level > 0:
                predecessor = (*pivot[:j], level - 1, *pivot[j + 1 :])
                if predecessor not in candidates:
                    candidates[predecessor] = scored(predecessor)
        candidates.pop(pivot, None)
        if not candidates:
            break
        nodes = list(candidates)
        pivot = nodes[exponential_mechanism(np.array([candidates[n] for n in nodes]), per_draw, rng)]
        made += 1
        if pivot not in visited:
            visited.append(pivot)
    if params.final_choice == "exponential":
        chosen = visited[exponential_mechanism(np.array([known[n] for n in visited]), per_draw, rng)]
        made += 1
    else:
        # The best score; a tie goes to the lower node (ARX's trackOptimum), then to the first visited.
        chosen = max(visited, key=lambda node: (known[node], -sum(node)))
    return chosen, known[chosen], visited, len(known), made, draw_epsilon(per_draw)


# The method ---------------------------------------------------------------------------------------


def _resolve_levels(names: list[str], hierarchies: list[Hierarchy], given: dict[str, int]) -> tuple[int, ...]:
    unknown = [name for name in given if name not in names]
    if unknown:
        raise ConfigError(
            f"levels: '{unknown[0]}' is not a quasi-identifier (quasi-identifiers: {', '.join(names)})"
        )
    missing = [name for name in names if name not in given]
    if missing:
        raise ConfigError(f"levels: give a level for every quasi-identifier; missing: {', '.join(missing)}")
    for name, hierarchy in zip(names, hierarchies, strict=True):
        if given[name] > hierarchy.height:
            raise ConfigError(f"levels: '{name}' has levels 0 to {hierarchy.height}, got {given[name]}")
    return tuple(given[name] for name in names)


def _released_column(name: str, hierarchy: Hierarchy, level: int, codes: np.ndarray) -> pl.Series:
    """The released values of one quasi-identifier: the level's labels as an Enum, a node of the
    missing value as a missing value."""
    categories = list(dict.fromkeys(hierarchy.labels[level]))
    labels = [hierarchy.labels[level][code] for code in range(len(hierarchy.labels[level]))]
    index = {label: position for position, label in enumerate(categories)}
    positions = np.array([index[label] for label in labels], dtype=np.uint32)[codes]
    text = pl.Series(name, categories, dtype=pl.String)
    column = text.cast(pl.Enum(text))[positions]
    if MISSING_LABEL in categories:
        kept = [label for label in categories if label != MISSING_LABEL]
        column = column.cast(pl.String).replace(MISSING_LABEL, None).cast(pl.Enum(kept))
    return column


def _run(table: Table, params: SafePubParams, context: Context) -> Release:
    from sdckit.anonymize._lattice_search import distinct_combinations
    from sdckit.anonymize.base import quasi_identifiers
    from sdckit.anonymize.recoding import _resolve

    if table.n_records == 0:
        raise ConfigError("the data has no records")
    names, hierarchies = _resolve(table, quasi_identifiers(table), None)
    given = params.scheme_levels()
    fixed = _resolve_levels(names, hierarchies, given) if given is not None else None
    combinations = distinct_combinations(table, names, hierarchies, [], None)
    epsilon_search = 0.0 if fixed is not None else params.epsilon * params.search_share
    epsilon_anon = params.epsilon - epsilon_search
    beta = sampling_probability(epsilon_anon)
    k = k_threshold(epsilon_anon, params.delta)
    rng = np.random.default_rng(params.seed)
    sampled = rng.random(table.n_records) < beta
    # The sample's combinations: those of the data with at least one sampled record.
    record_combination = combinations.record_combination.astype(np.int64)
    sampled_counts = np.bincount(record_combination[sampled], minlength=len(combinations.counts))
    present = np.flatnonzero(sampled_counts)
    problem = _Problem(
        hierarchies,
        combinations.leaf_codes[present].astype(np.int64),
        sampled_counts[present].astype(np.float64),
        table.n_records,
        k,
    )
    if fixed is not None:
        chosen, score, visited, evaluated, draws, per_draw = fixed, None, [fixed], 0, 0, 0.0
    else:
        chosen, chosen_score, visited, evaluated, draws, per_draw = _search(
            problem, params, epsilon_search, rng
        )
        score = chosen_score
    classes, sizes = problem.classes(chosen)
    # Per combination of the data: its place among the sample's, and whether its class is released.
    place = np.full(len(combinations.counts), -1, dtype=np.int64)
    place[present] = np.arange(len(present))
    kept = np.zeros(len(combinations.counts), dtype=bool)
    kept[present] = sizes[classes] >= k
    released = sampled & kept[record_combination]
    rows = place[record_combination[released]]
    frame = table.data.filter(pl.Series(released))
    columns = [
        _released_column(name, hierarchy, chosen[j], problem.generalized[j][chosen[j]][rows])
        for j, (name, hierarchy) in enumerate(zip(names, hierarchies, strict=True))
    ]
    frame = frame.with_columns(columns)
    others = tuple(
        a.name
        for a in table.schema.attributes
        if a.name not in names and a.role is not Role.IDENTIFIER and a.name in frame.columns
    )
    figures = SafePubFigures(
        epsilon=params.epsilon,
        delta=params.delta,
        epsilon_anon=epsilon_anon,
        epsilon_search=per_draw * draws,
        epsilon_per_draw=per_draw,
        beta=beta,
        k=k,
        scheme="data-independent" if fixed is not None else "data-dependent",
        steps=draws - (1 if fixed is None and params.final_choice == "exponential" else 0),
        draws=draws,
        evaluated=evaluated,
        visited=tuple(visited),
        score=score,
        sampled=sampled,
        released=released,
        not_generalized=others,
    )
    suppressed = sampled & ~released
    record_classes = np.full(table.n_records, -1, dtype=np.int64)
    record_classes[released] = classes[rows]
    return Release(
        table=without_identifiers(table, frame),
        original=table,
        method="safepub",
        quasi_identifiers=tuple(names),
        suppressed_records=suppressed,
        classes=record_classes,
        seed=params.seed,
        levels=dict(zip(names, chosen, strict=True)),
        hierarchies=dict(zip(names, hierarchies, strict=True)),
        params=params,
        figures=figures,
    )


def _summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(SafePubFigures)
    return {
        "epsilon": figures.epsilon_anon + figures.epsilon_search,
        "delta": figures.delta,
        "epsilon_anon": figures.epsilon_anon,
        "epsilon_search": figures.epsilon_search,
        "epsilon_per_draw": figures.epsilon_per_draw,
        "beta": figures.beta,
        "k": figures.k,
        "scheme": figures.scheme,
        "score": release.params.score if figures.scheme == "data-dependent" else None,
        "final_choice": release.params.final_choice if figures.scheme == "data-dependent" else None,
        "steps": figures.steps,
        "draws": figures.draws,
        "evaluated": figures.evaluated,
        "levels": release.levels,
        "chosen_score": figures.score,
        "records": int(release.original.n_records),
        "sampled": int(figures.sampled.sum()),
        "suppressed": int((figures.sampled & ~figures.released).sum()),
        "released": int(figures.released.sum()),
        "not_generalized": list(figures.not_generalized),
    }


def _report(figures: dict[str, Any]) -> list[str]:
    levels = ", ".join(f"{name} {level}" for name, level in figures["levels"].items())
    lines = [
        f"({figures['epsilon']:g}, {figures['delta']:g})-differential privacy: ε_anon "
        f"{figures['epsilon_anon']:g}, ε_search {figures['epsilon_search']:g}; "
        f"β {figures['beta']:.4f}, k {figures['k']}",
        f"{figures['scheme']} generalization levels: {levels}",
        f"sampled {figures['sampled']:,} of {figures['records']:,} records; {figures['suppressed']:,} "
        f"suppressed in classes below k; {figures['released']:,} released",
    ]
    if figures["scheme"] == "data-dependent":
        lines.append(
            f"search: {figures['steps']} steps, {figures['draws']} draws of ε "
            f"{figures['epsilon_per_draw']:.3g}, {figures['evaluated']} nodes scored "
            f"({figures['score']}, final choice {figures['final_choice']})"
        )
        if figures["final_choice"] == "best":
            lines.append(
                "the best-scoring visited node was released (as the paper and ARX): that choice reads "
                "the sample without noise and is outside the stated ε"
            )
    if figures["not_generalized"]:
        lines.append(f"released as read, outside the guarantee: {', '.join(figures['not_generalized'])}")
    return lines


@register_method(
    "safepub",
    SafePubParams,
    summary=_summary,
    help="SafePub: (ε, δ)-differentially private sampling, full-domain generalization and suppression "
    "(ARX's EDDifferentialPrivacy).",
    report=_report,
    not_reapplicable="its release is a random sample of the data, and its privacy is of one release",
    examples={"minimal": {}, "replay": {"epsilon": 3.0, "delta": 0.01, "steps": 10, "seed": 3}},
)
def _run_safepub(table: Table, params: SafePubParams, context: Context) -> Release:
    """SafePub (see the module documentation)."""
    return _run(table, params, context)
