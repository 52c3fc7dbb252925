"""Record linkage: Fellegi–Sunter probabilistic linkage (Fellegi & Sunter, 1969; EM estimation of
m and u: Winkler, 1988; Jaro, 1989; SPEC §6.1): candidate pairs by blocking, their agreement
patterns counted in compiled code, EM, pattern weights, thresholds from the target error rates and
the decisions. The method is described in :mod:`sdckit.risk.linkage`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit._numba import njit
from sdckit.errors import ConfigError, InputError
from sdckit.params import finite_or_none, spell
from sdckit.risk._linkage_encoding import (
    ALL,
    POINT,
    TIE_TOLERANCE,
    CategoricalAttribute,
    Covers,
    Encoded,
    NumericAttribute,
    _agree,
)

EM_MAX_ITER = 1000
EM_TOL = 1e-8
EM_EPS = 1e-6
MAX_COMPARED = 20  # 2**K patterns are enumerated for the thresholds


@dataclass(frozen=True)
class EMResult:
    """m, u (one per compared attribute), π, the number of iterations and whether it converged."""

    m: np.ndarray
    u: np.ndarray
    pi: float
    iterations: int
    converged: bool


def fellegi_sunter_em(
    patterns: np.ndarray,
    counts: np.ndarray,
    *,
    m0: float = 0.9,
    u0: float = 0.1,
    pi0: float = 0.1,
    max_iter: int = EM_MAX_ITER,
    tol: float = EM_TOL,
    eps: float = EM_EPS,
) -> EMResult:
    """EM estimation of the Fellegi–Sunter mixture (SPEC §6.1; Winkler, 1988; Jaro, 1989).

    ``patterns`` is a ``(G, K)`` 0/1 matrix of the distinct agreement patterns and ``counts`` their
    numbers of pairs. Stops when the largest absolute change of m, u and π is below ``tol`` (the
    iteration count includes that last iteration); swaps the classes when Σ log(m/u) < 0.
    """
    gamma = np.asarray(patterns, dtype=np.float64)
    n_g = np.asarray(counts, dtype=np.float64)
    total = n_g.sum()
    k = gamma.shape[1]
    m = np.clip(np.full(k, m0), eps, 1 - eps)
    u = np.clip(np.full(k, u0), eps, 1 - eps)
    pi = float(np.clip(pi0, eps, 1 - eps))
    iterations, converged = 0, False
    for iterations in range(1, max_iter + 1):  # noqa: B007
        log_m = gamma @ np.log(m) + (1 - gamma) @ np.log1p(-m)
        log_u = gamma @ np.log(u) + (1 - gamma) @ np.log1p(-u)
        a = math.log(pi) + log_m
        b = math.log1p(-pi) + log_u
        w = 1 / (1 + np.exp(b - a))
        weight = n_g * w
        matched = weight.sum()
        new_m = np.clip(weight @ gamma / matched, eps, 1 - eps) if matched > 0 else m
        unmatched = n_g * (1 - w)
        new_u = np.clip(unmatched @ gamma / (total - matched), eps, 1 - eps) if total > matched else u
        new_pi = float(np.clip(matched / total, eps, 1 - eps))
        change = max(np.abs(new_m - m).max(), np.abs(new_u - u).max(), abs(new_pi - pi))
        m, u, pi = new_m, new_u, new_pi
        if change < tol:
            converged = True
            break
    if np.sum(np.log(m / u)) < 0:
        m, u, pi = u, m, 1 - pi
    return EMResult(m=m, u=u, pi=pi, iterations=iterations, converged=converged)


def pattern_weights(patterns: np.ndarray, m: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``W(γ) = Σ_k γ_k log2(m_k/u_k) + (1 − γ_k) log2((1 − m_k)/(1 − u_k))``."""
    gamma = np.asarray(patterns, dtype=np.float64)
    return gamma @ np.log2(m / u) + (1 - gamma) @ np.log2((1 - m) / (1 - u))


def all_patterns(k: int) -> np.ndarray:
    """Every 0/1 pattern of ``k`` fields, row g = the bits of g (field 0 the lowest bit)."""
    codes = np.arange(2**k, dtype=np.int64)
    return ((codes[:, None] >> np.arange(k)) & 1).astype(np.int8)


def thresholds(m: np.ndarray, u: np.ndarray, mu: float, lam: float) -> tuple[float, float]:
    """``(T_upper, T_lower)`` from the target false-match rate μ and missed-match rate λ (SPEC §6.1):
    blocks of patterns of equal weight (within 1e-12) are added whole, from the top to the link set
    while its u-mass stays at most μ, from the bottom to the non-link set while its m-mass stays at
    most λ. ``T_upper`` is +inf when no block fits (nothing is linked), ``T_lower`` −inf likewise."""
    patterns = all_patterns(len(m)).astype(np.float64)
    weight = pattern_weights(patterns, m, u)
    m_mass = np.exp(patterns @ np.log(m) + (1 - patterns) @ np.log1p(-m))
    u_mass = np.exp(patterns @ np.log(u) + (1 - patterns) @ np.log1p(-u))
    order = np.argsort(-weight, kind="stable")
    weight, m_mass, u_mass = weight[order], m_mass[order], u_mass[order]
    starts = np.flatnonzero(np.r_[True, np.abs(np.diff(weight)) > TIE_TOLERANCE])
    ends = np.r_[starts[1:], len(weight)]
    block_u = np.add.reduceat(u_mass, starts)
    block_m = np.add.reduceat(m_mass, starts)
    upper_blocks = 0
    total = 0.0
    for u_block in block_u:
        if total + u_block > mu + TIE_TOLERANCE:
            break
        total += u_block
        upper_blocks += 1
    lower_blocks = 0
    total = 0.0
    for index in range(len(starts) - 1, upper_blocks - 1, -1):
        if total + block_m[index] > lam + TIE_TOLERANCE:
            break
        total += block_m[index]
        lower_blocks += 1
    upper = float(weight[ends[upper_blocks - 1] - 1]) if upper_blocks else math.inf
    lower = float(weight[starts[len(starts) - lower_blocks]]) if lower_blocks else -math.inf
    return upper, lower


def decide(weight: np.ndarray, upper: float, lower: float) -> np.ndarray:
    """2 = link (W ≥ T_upper), 0 = non-link (W ≤ T_lower), 1 = possible link, per weight."""
    weight = np.asarray(weight, dtype=np.float64)
    return np.where(
        weight >= upper - TIE_TOLERANCE, 2, np.where(weight <= lower + TIE_TOLERANCE, 0, 1)
    ).astype(np.int8)


@dataclass(frozen=True)
class FellegiSunter:
    """Fellegi–Sunter linkage (SPEC §6.1): the compared and blocking attributes, the EM estimates,
    the thresholds, the candidate pairs and their patterns, link counts, and per released record
    whether its true pair was a candidate, its weight (NaN if not) and decision (-1 if not)."""

    attributes: tuple[str, ...]
    blocking: tuple[str, ...]
    m: np.ndarray
    u: np.ndarray
    pi: float
    iterations: int
    converged: bool
    upper: float
    lower: float
    pairs: int
    patterns: int
    links: int
    possible: int
    true_candidate: np.ndarray
    true_weight: np.ndarray
    true_decision: np.ndarray

    def summary(self) -> dict[str, Any]:
        n = len(self.true_decision)
        true_links = int((self.true_decision == 2).sum())
        return {
            "attributes": list(self.attributes),
            "blocking": list(self.blocking),
            "m": {name: finite_or_none(v) for name, v in zip(self.attributes, self.m, strict=True)},
            "u": {name: finite_or_none(v) for name, v in zip(self.attributes, self.u, strict=True)},
            "pi": finite_or_none(self.pi),
            "iterations": self.iterations,
            "converged": self.converged,
            "upper_threshold": finite_or_none(self.upper),
            "lower_threshold": finite_or_none(self.lower),
            "pairs": self.pairs,
            "patterns": self.patterns,
            "links": self.links,
            "possible_links": self.possible,
            "true_pairs_compared": int(self.true_candidate.sum()),
            "true_links": true_links,
            "true_links_share": finite_or_none(true_links / n) if n else None,
            "false_matches": self.links - true_links,
        }


def candidate_pairs(
    encoded: dict[str, Encoded], blocking: Sequence[str], n: int, max_pairs: int, progress: Any = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Candidate pairs ``(release rows, original rows)`` in chunks: every pair without blocking,
    else the pairs whose blocking attributes agree (a covering released value is expanded to the
    original values it covers), by a join on the block keys. Raises ``ConfigError`` when there are
    more than ``max_pairs``. ``progress(pairs, total)`` is called once a chunk has been used."""
    chunk = 1 << 20
    if not blocking:
        total = n * n
        if total > max_pairs:
            raise ConfigError(
                f"Fellegi–Sunter without blocking compares all {n:,} × {n:,} = {total:,} pairs, more than "
                f"max_pairs ({max_pairs:,}): give blocking attributes ({spell('blocking')}) whose values "
                "must agree"
            )
        rows_per_chunk = max(1, chunk // max(n, 1))
        for start in range(0, n, rows_per_chunk):
            stop = min(start + rows_per_chunk, n)
            release_rows = np.repeat(np.arange(start, stop, dtype=np.int64), n)
            original_rows = np.tile(np.arange(n, dtype=np.int64), stop - start)
            yield release_rows, original_rows
            if progress is not None:
                progress(stop * n, total)
        return
    originals = pl.DataFrame({"original": np.arange(n, dtype=np.int64)})
    releases = pl.DataFrame({"release": np.arange(n, dtype=np.int64)})
    for name in blocking:
        codes, labels, table_labels, table_codes = _block_codes(encoded[name])
        originals = originals.with_columns(pl.Series(name, codes))
        table = pl.DataFrame({"label": table_labels, name: table_codes})
        releases = (
            releases.with_columns(pl.Series("label", labels[releases.get_column("release").to_numpy()]))
            .join(table, on="label", how="inner")
            .drop("label")
        )
    sizes = originals.group_by(list(blocking)).len()
    total = int(releases.join(sizes, on=list(blocking), how="inner").get_column("len").sum() or 0)
    if total > max_pairs:
        raise ConfigError(
            f"blocking on {', '.join(blocking)} leaves {total:,} candidate pairs, more than max_pairs "
            f"({max_pairs:,}): block on more attributes or raise {spell('max_pairs')}"
        )
    # The join in slices of released keys of about ``chunk`` pairs each: never all pairs at once.
    step = max(1, int(releases.height * chunk / max(total, 1)))
    done = 0
    for start in range(0, releases.height, step):
        part = releases.slice(start, step).join(originals, on=list(blocking), how="inner")
        yield part.get_column("release").to_numpy(), part.get_column("original").to_numpy()
        done += part.height
        if progress is not None:
            progress(done, total)


def _block_codes(attribute: Encoded) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Original codes of a blocking attribute, each released record's label, and the table of
    (label, covered original code) pairs."""
    if isinstance(attribute, CategoricalAttribute):
        width = attribute.n_categories
        point = np.flatnonzero(attribute.kind == POINT)
        every = np.flatnonzero(attribute.kind == ALL)
        table_labels = np.concatenate([point, np.repeat(every, width), attribute.set_keys // width]).astype(
            np.int64
        )
        table_codes = np.concatenate(
            [attribute.point[point], np.tile(np.arange(width), len(every)), attribute.set_keys % width]
        ).astype(np.int64)
        return (
            attribute.original.astype(np.int64),
            attribute.labels.astype(np.int64),
            table_labels,
            table_codes,
        )
    distinct, codes = np.unique(attribute.original, return_inverse=True)
    lo, hi = attribute.lo, attribute.hi
    first = np.where(attribute.lo_open, np.searchsorted(distinct, lo, "right"), np.searchsorted(distinct, lo))
    last = np.where(attribute.hi_open, np.searchsorted(distinct, hi), np.searchsorted(distinct, hi, "right"))
    spans, labels = np.unique(np.stack([first, last], axis=1), axis=0, return_inverse=True)
    lengths = np.maximum(spans[:, 1] - spans[:, 0], 0)
    table_labels = np.repeat(np.arange(len(spans), dtype=np.int64), lengths)
    starts = np.repeat(spans[:, 0] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    table_codes = (np.arange(int(lengths.sum()), dtype=np.int64) + starts).astype(np.int64)
    return codes.astype(np.int64), labels.reshape(-1).astype(np.int64), table_labels, table_codes


@njit(cache=True)
def _pattern_counts(
    release_rows,
    original_rows,
    cat_bit,
    rel_labels,
    orig_codes,
    label_offset,
    kind,
    point,
    set_keys,
    set_ptr,
    width,
    num_bit,
    values,
    lows,
    highs,
    low_open,
    high_open,
    counts,
):  # pragma: no cover - compiled
    """Count the agreement pattern of every pair (bit ``cat_bit[t]`` / ``num_bit[t]`` set when the
    pair agrees on that attribute)."""
    for p in range(len(release_rows)):
        i = release_rows[p]
        j = original_rows[p]
        code = 0
        for t in range(len(cat_bit)):
            if _agree(
                t, rel_labels[t, i], orig_codes[t, j], label_offset, kind, point, set_keys, set_ptr, width
            ):
                code |= 1 << cat_bit[t]
        for t in range(len(num_bit)):
            x = values[t, j]
            above = x > lows[t, i] if low_open[t, i] else x >= lows[t, i]
            below = x < highs[t, i] if high_open[t, i] else x <= highs[t, i]
            if above and below:
                code |= 1 << num_bit[t]
        counts[code] += 1


def fellegi_sunter(
    encoded: Sequence[Encoded],
    blocking: Sequence[str],
    n: int,
    *,
    max_pairs: int,
    false_match_rate: float,
    missed_match_rate: float,
    progress: Any = None,
) -> FellegiSunter:
    """Fellegi–Sunter linkage of the released records with the original ones (see the module
    docstring): candidate pairs by blocking, agreement patterns, EM, weights, thresholds, decisions."""
    by_name = {attribute.name: attribute for attribute in encoded}
    compared = [attribute for attribute in encoded if attribute.name not in blocking]
    k = len(compared)
    if k < 3:
        names = ", ".join(a.name for a in compared) or "none"
        raise ConfigError(
            f"Fellegi–Sunter needs at least 3 compared attributes besides the blocking ones to identify m, "
            f"u and π (compared: {names}); block on fewer attributes or compare more"
        )
    if k > MAX_COMPARED:
        raise ConfigError(f"Fellegi–Sunter compares at most {MAX_COMPARED} attributes, got {k}")
    bits = (1 << np.arange(k, dtype=np.int64)).astype(np.int64)
    counts = np.zeros(2**k, dtype=np.int64)
    categorical = [a for a in compared if isinstance(a, CategoricalAttribute)]
    numeric = [a for a in compared if isinstance(a, NumericAttribute)]
    cat_bit = np.array([compared.index(a) for a in categorical], dtype=np.int64)
    num_bit = np.array([compared.index(a) for a in numeric], dtype=np.int64)
    rel_labels = np.array([a.labels for a in categorical], dtype=np.int64).reshape(len(categorical), n)
    orig_codes = np.array([a.original for a in categorical], dtype=np.int64).reshape(len(categorical), n)
    values = np.array([a.original for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    lows = np.array([a.lo for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    highs = np.array([a.hi for a in numeric], dtype=np.float64).reshape(len(numeric), n)
    low_open = np.array([a.lo_open for a in numeric], dtype=np.bool_).reshape(len(numeric), n)
    high_open = np.array([a.hi_open for a in numeric], dtype=np.bool_).reshape(len(numeric), n)
    covers = Covers.of(categorical).arrays()
    for release_rows, original_rows in candidate_pairs(by_name, blocking, n, max_pairs, progress):
        _pattern_counts(
            np.ascontiguousarray(release_rows, dtype=np.int64),
            np.ascontiguousarray(original_rows, dtype=np.int64),
            cat_bit,
            rel_labels,
            orig_codes,
            *covers,
            num_bit,
            values,
            lows,
            highs,
            low_open,
            high_open,
            counts,
        )
    pairs = int(counts.sum())
    if pairs == 0:
        raise InputError(f"blocking on {', '.join(blocking)} leaves no candidate pair")
    observed = np.flatnonzero(counts)
    patterns = ((observed[:, None] & bits) > 0).astype(np.int8)
    em = fellegi_sunter_em(patterns, counts[observed])
    upper, lower = thresholds(em.m, em.u, false_match_rate, missed_match_rate)
    decisions = decide(pattern_weights(patterns, em.m, em.u), upper, lower)
    links = int(counts[observed][decisions == 2].sum())
    possible = int(counts[observed][decisions == 1].sum())
    rows = np.arange(n)
    candidate = np.ones(n, dtype=np.bool_)
    for name in blocking:
        candidate &= by_name[name].agrees(rows, rows)
    own = np.zeros((n, k), dtype=np.int8)
    for index, attribute in enumerate(compared):
        own[:, index] = attribute.agrees(rows, rows)
    weight = np.where(candidate, pattern_weights(own, em.m, em.u), np.nan)
    decision = np.where(candidate, decide(np.nan_to_num(weight), upper, lower), -1).astype(np.int8)
    return FellegiSunter(
        attributes=tuple(a.name for a in compared),
        blocking=tuple(blocking),
        m=em.m,
        u=em.u,
        pi=em.pi,
        iterations=em.iterations,
        converged=em.converged,
        upper=upper,
        lower=lower,
        pairs=pairs,
        patterns=len(observed),
        links=links,
        possible=possible,
        true_candidate=candidate,
        true_weight=weight,
        true_decision=decision,
    )
