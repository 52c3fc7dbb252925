"""Record linkage between an original file and a release of it: how many released records an intruder
who holds the original can link back to their true source.

Two linkage methods (``sdckit risk linkage ORIGINAL RELEASE --config C``):

* **Distance-based record linkage** (Pagliuca & Seri, 1999; Domingo-Ferrer & Torra, 2001; SPEC §6.2).
  Over the chosen attributes (default: the quasi-identifiers), numeric attributes are standardized
  with the ORIGINAL file's mean and standard deviation (ddof 1; a constant attribute is left
  unscaled) and compared by Euclidean distance, other attributes by 0 (equal) / 1 (different), so
  ``d(y, x)² = Σ_numeric ((y_a − x_a) / sd_a)² + Σ_categorical [y_a ≠ x_a]``. Every released record
  ``y_i`` is linked to its nearest original records ``B_i`` (ties within 1e-12); it earns credit
  ``1/|B_i|`` when its true source ``x_i`` is among them. The linkage rate is ``Σ credit / n``. The
  rank of the true match is ``1 + #{j : d(y_i, x_j) < d(y_i, x_i) − 1e-12}`` (competition ranking:
  originals tied with the true match do not push it down), so rank 1 ⇔ credit > 0.
  Released records whose numeric values are points or wildcards and whose other values are
  wildcards are searched with a KD-tree (:class:`scipy.spatial.cKDTree`, one per combination of
  wildcard attributes, which are left out); ranks are counts of a ball query. The others are
  searched exactly over *cells*, the originals grouped by their categorical values: a released
  combination of categorical values has the same number of mismatches h with every member of a
  cell, so cells are visited by increasing h and the search stops once √h exceeds the best distance
  found (for the rank: the distance to the true source); inside a cell numeric distances (to a
  range: to its nearer bound) are computed member by member, in compiled code, once per distinct
  released row. No n × n matrix is ever held. (A KD-tree over categories one-hot coded and scaled
  by 1/√2, which makes a mismatch add 1 to the squared distance, was measured 3-7 times slower than
  brute force on Adult's 79 dimensions, so it is not used.)

* **Fellegi–Sunter probabilistic linkage** (Fellegi & Sunter, 1969; EM estimation of m and u:
  Winkler, 1988; Jaro, 1989; SPEC §6.1). Candidate pairs (released record, original record) are the
  pairs that agree exactly on the ``blocking`` attributes (all pairs without blocking, refused above
  ``max_pairs``); each pair gets an agreement vector over the other attributes, compressed to
  patterns with counts; m, u and π are estimated by EM (start m=0.9, u=0.1, π=0.1; max 1000
  iterations, tolerance 1e-8 on the largest parameter change, parameters clipped to [1e-6, 1−1e-6];
  classes swapped when Σ log(m/u) < 0); the match weight of a pattern is ``log2(m(γ)/u(γ))``;
  thresholds come from the target false-match rate μ and missed-match rate λ over all 2^K patterns,
  blocks of equal weight added whole. Pairs are links, possible links or non-links.

**Covering values.** The release may be any file sdckit writes; its labels are read by the one grammar
of :mod:`sdckit.labels`. A released value agrees with (is at
distance 0 from) every original value it covers: a missing value and ``*`` cover everything; a
numeric range ``a-b`` (Mondrian), an interval ``[a, b)``, ``<a`` or ``>=b`` (interval hierarchies)
covers the numbers inside it (on an integer attribute ``[a, b)`` is ``a .. ⌈b⌉−1``); a set ``{a,b}``
covers its members; a node of the attribute's hierarchy in the configuration covers its leaves; a
masked code ``02****`` covers the codes of its length that start with ``02`` (on a numeric attribute
a mask of digits, ``19**``, spans 1900 … 1999). For numeric distance
a range's distance to an original value is 0 inside it and the distance to the nearer bound outside
it (on a real-valued attribute, to the closure of the range). A sliced release (``slicing``,
``overlapping-slicing``: a ``bucket`` column, rows permuted inside buckets) is refused: its rows are
no longer row-aligned with the original, so there is no true match to count.

Deviations: sdcMicro's ``recordLinkage`` uses Gower distance and a one-to-one assignment; this module
follows SPEC §6.2 (nearest neighbour, shared credit) by default; ``distance="gower"`` with ``weights``
is sdcMicro's distance (:mod:`sdckit.risk._linkage_gower`, its own deviations there). Ordinal and
date attributes are compared as categories (0/1). The Fellegi–Sunter boundary randomization is
omitted (SPEC §6.1).

The parts, as splink separates its linker's: the compared attributes encoded with what each released
value covers (:mod:`sdckit.risk._linkage_encoding`), distance-based linkage
(:mod:`sdckit.risk._linkage_distance`), Fellegi–Sunter linkage (:mod:`sdckit.risk._fellegi_sunter`);
this module is the measure: its parameters, its result and figures, and its registration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.measures import register_measure
from sdckit.params import Finite, MethodParams, Whole
from sdckit.risk._fellegi_sunter import FellegiSunter, fellegi_sunter
from sdckit.risk._linkage_distance import DistanceLinkage, distance_linkage, one_to_one_linkage
from sdckit.risk._linkage_encoding import check_alignment, compared_attributes, encode_attributes
from sdckit.risk._linkage_gower import gower_linkage, parse_weights
from sdckit.table import Table

DECISIONS = ("non-link", "possible", "link")


class LinkageParams(MethodParams):
    """Record linkage of a release with its original (row i of the release comes from row i of the
    original): distance-based linkage (share of records linked to their source, rank of the true
    match) and Fellegi–Sunter probabilistic linkage with EM-estimated m and u and blocking."""

    method: Annotated[
        Literal["distance", "probabilistic", "both"],
        Field(description="distance (nearest neighbour), probabilistic (Fellegi–Sunter) or both."),
    ] = "both"
    attributes: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Compared attributes, comma-separated quasi-identifiers (default: all of them).",
        ),
    ] = None
    assignment: Annotated[
        Literal["nearest", "one-to-one"],
        Field(
            description="Distance linkage: each released record to its nearest originals (ties share "
            "credit), or a one-to-one assignment of least total distance (sdcMicro's recordLinkage)."
        ),
    ] = "nearest"
    distance: Annotated[
        Literal["standardized", "gower"],
        Field(
            description="Distance linkage: standardized Euclidean with 0/1 per category (SPEC §6.2), or "
            "Gower's distance as sdcMicro's recordLinkage (|x - y| / range, 0/1, missing values left out)."
        ),
    ] = "standardized"
    weights: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Gower: attribute weights, name=weight comma-separated (others weigh 1) or one "
            "number per compared attribute in order (sdcMicro's form).",
        ),
    ] = None
    blocking: Annotated[
        str | None,
        Field(
            min_length=1,
            description="Fellegi–Sunter: attributes whose values must agree for a pair to be compared.",
        ),
    ] = None
    max_pairs: Annotated[
        Whole, Field(ge=1, description="Fellegi–Sunter: most candidate pairs (block to stay below).")
    ] = 10_000_000
    false_match_rate: Annotated[
        Finite, Field(gt=0, lt=1, description="Fellegi–Sunter: target false-match rate mu (P(link | U)).")
    ] = 0.01
    missed_match_rate: Annotated[
        Finite,
        Field(gt=0, lt=1, description="Fellegi–Sunter: target missed-match rate lambda (P(non-link | M))."),
    ] = 0.05

    @model_validator(mode="after")
    def _probabilistic_only(self) -> LinkageParams:
        if self.method == "probabilistic":
            for name in ("assignment", "distance", "weights"):
                if name in self.model_fields_set:
                    raise ValueError(
                        f"takes no {{{name}}} with {{method}} probabilistic (it is distance linkage's)"
                    )
        if self.weights is not None and self.distance != "gower":
            raise ValueError("{weights} weigh Gower's distance: give {distance} gower")
        if self.method == "distance":
            given = [name for name in ("blocking",) if getattr(self, name) is not None]
            given += [
                name
                for name in ("max_pairs", "false_match_rate", "missed_match_rate")
                if name in self.model_fields_set
            ]
            if given:
                raise ValueError(
                    "takes no Fellegi–Sunter parameter with {method} distance: "
                    + ", ".join(f"{{{name}}}" for name in given)
                )
        return self


@dataclass(frozen=True)
class LinkageResult:
    """Record linkage of a release with its original: ``distance`` (:class:`DistanceLinkage`) and
    ``probabilistic`` (:class:`FellegiSunter`), each None when not run."""

    n_records: int
    attributes: tuple[str, ...]
    distance: DistanceLinkage | None
    probabilistic: FellegiSunter | None

    def summary(self) -> dict[str, Any]:
        figures: dict[str, Any] = {"records": self.n_records, "attributes": list(self.attributes)}
        if self.distance is not None:
            figures["distance"] = self.distance.summary()
        if self.probabilistic is not None:
            figures["probabilistic"] = self.probabilistic.summary()
        return figures

    def records(self) -> pl.DataFrame:
        """One row per released record: its nearest original, whether that is its source, the rank of
        its source, and the Fellegi–Sunter weight and decision of its true pair (null when the pair was
        not a candidate)."""
        columns: dict[str, Any] = {"record": np.arange(self.n_records, dtype=np.int64)}
        if self.distance is not None:
            d = self.distance
            columns.update(
                nearest=d.nearest,
                tied=d.tied,
                true_match=d.true_match,
                credit=d.credit,
                rank=d.rank,
                distance=d.distance,
            )
        frame = pl.DataFrame(columns)
        if self.probabilistic is not None:
            p = self.probabilistic
            chosen = np.where(p.true_decision < 0, 3, p.true_decision)
            labels = np.array([*DECISIONS, None], dtype=object)[chosen]
            frame = frame.with_columns(
                pl.Series("fs_weight", p.true_weight).fill_nan(None),
                pl.Series("fs_decision", labels.tolist(), dtype=pl.String),
            )
        return frame


def record_linkage(
    original: Table, release: Table, params: LinkageParams | None = None, progress: Any = None
) -> LinkageResult:
    """Distance-based and/or Fellegi–Sunter linkage of ``release`` with ``original`` (row i of the
    release comes from row i of the original)."""
    params = params or LinkageParams()
    attributes = compared_attributes(original, release, params.attributes)
    blocking: list[str] = []
    if params.blocking is not None:
        blocking = [name.strip() for name in params.blocking.split(",") if name.strip()]
        outside = [name for name in blocking if name not in attributes]
        if outside:
            raise ConfigError(
                f"blocking: {', '.join(repr(n) for n in outside)} not among the compared attributes "
                f"({', '.join(attributes)})"
            )
        if len(set(blocking)) != len(blocking):
            raise ConfigError("blocking lists an attribute twice")
    check_alignment(original, release, attributes)
    encoded = encode_attributes(original, release, attributes)
    n = original.n_records
    distance = probabilistic = None
    if params.method in ("distance", "both") and params.distance == "gower":
        weights = parse_weights(params.weights, attributes)
        distance = gower_linkage(encoded, weights, attributes, params.assignment, progress)
    elif params.method in ("distance", "both"):
        if params.assignment == "one-to-one":
            distance = one_to_one_linkage(encoded, n, attributes)
        else:
            distance = distance_linkage(encoded, n, progress, attributes)
    if params.method in ("probabilistic", "both"):
        probabilistic = fellegi_sunter(
            encoded,
            blocking,
            n,
            max_pairs=params.max_pairs,
            false_match_rate=params.false_match_rate,
            missed_match_rate=params.missed_match_rate,
            progress=progress,
        )
    return LinkageResult(n, tuple(attributes), distance, probabilistic)


def _report(figures: dict[str, Any]) -> list[Any]:
    lines = [f"compared: {', '.join(figures['attributes'])}"]
    if "distance" in figures:
        d = figures["distance"]
        lines.append(
            f"distance linkage: [bold]{d['linked_percent']:.2f}%[/] of the records linked to their source "
            f"({d['linked']:g} of {figures['records']:,}); mean rank of the true match {d['mean_rank']:.3g}"
        )
    if "probabilistic" in figures:
        p = figures["probabilistic"]
        blocking = ", ".join(p["blocking"]) or "none"
        upper = "∞" if p["upper_threshold"] is None else f"{p['upper_threshold']:.4g}"
        lower = "−∞" if p["lower_threshold"] is None else f"{p['lower_threshold']:.4g}"
        lines.append(
            f"Fellegi–Sunter (blocking: {blocking}): {p['pairs']:,} pairs, {p['patterns']} patterns, "
            f"π {p['pi']:.4g} after {p['iterations']} EM iterations; thresholds {lower} / {upper}"
        )
        share = p["true_links_share"] or 0.0
        lines.append(
            f"links: {p['links']:,} ({p['possible_links']:,} possible); true matches linked: "
            f"[bold]{100 * share:.2f}%[/]; false matches: {p['false_matches']:,}"
        )
    return lines


@register_measure(
    "linkage",
    "risk",
    LinkageParams,
    summary=lambda result: result.summary(),
    help="Record linkage of a release with its original: distance-based and Fellegi–Sunter.",
    report=_report,
    records=lambda result: result.records(),
    compares=True,
    progress_label="records linked",
    headline="distance.linked_share",
)
def _run_linkage(original: Table, release: Table, params: LinkageParams, context: Context) -> LinkageResult:
    return record_linkage(original, release, params, context.progress)
