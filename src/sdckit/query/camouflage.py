"""Camouflage of a queryable dataset (Gopal, Garfinkel & Goes, "Confidentiality via camouflage",
Operations Research 50(3), 2002): the confidential data is one point of a compact set Π of
possible datasets, and every query f is answered with an interval containing [min f, max f] over
Π, computed from Π and the public attributes only, never from the confidential values themselves.
An analyst therefore learns that the data lies in Π and nothing more, from one answer or from any
combination of answers: every answer is a function of Π, so any dataset of Π would have given the
same answers.

How Π is built
    Π is a product, over records and confidential attributes, of one set of possible values per
    record and attribute, drawn once when the dataset is loaded.

    - A numeric confidential attribute a gives each record an interval [lo_i, hi_i] containing
      a_i. On the scale y = asinh(a/τ) the interval has the fixed length L = log((1+w)/(1−w)) (w =
      ``width``, in (0, 1)) and a_i sits at a uniformly random place in it: y_lo = asinh(a_i/τ) −
      U_i·L with U_i ~ Uniform(0, 1), y_hi = y_lo + L, lo = τ·sinh(y_lo), hi = τ·sinh(y_hi). For
      large values hi/lo = (1+w)/(1−w) (a relative width), near zero the width is about τ·L (an
      absolute one), and an interval around 0 spans both signs. τ is the median of |a| over the
      non-missing values (if it is 0, their mean |a|, if that is 0 too, 1).
    - A categorical (or ordinal) confidential attribute gives each record a set of 1 + ``decoys``
      values: its own and ``decoys`` distinct other values of the attribute's domain (the declared
      ``domains`` plus any other value in the data, else the values in the data), drawn without
      replacement with probability proportional to their frequencies in the data (successive
      sampling; a declared value absent from the data is drawn, uniformly among the absent ones,
      only once every value that occurs is in the set). When the domain has at most ``decoys``
      other values, the set is the whole domain: for a Yes/No attribute every record's set is
      {Yes, No}.

    Π holds one interval per record and numeric confidential attribute and one set of 1 + decoys
    values per record and categorical one (kept as domain codes, records × (1 + decoys)). The
    random draws come from ``numpy.random.default_rng`` seeded with HMAC-SHA256(secret, source NUL
    attribute): ``secret`` is 32 random bytes kept by the server in its ledger and ``source`` the
    content hash of the data file, so the same file gets the same Π after every restart, and a
    different secret an independent Π. The server serves one camouflage (one width and number of
    decoys) per source: the same file under two widths would give two independent Π whose
    intersection is narrower than either.

What an analyst learns
    For each record only the interval or the set. Given the interval, a_i was at a uniformly random
    place of it on the asinh scale, so every value of the interval is equally consistent with it:
    the midpoint does not estimate a_i, and the width, a function of the interval's place only,
    does not reveal |a_i|; a zero is inside an interval of width about τ·L. Given a set, the true
    value is one of its values; the decoys follow the data's frequencies, so a common value is
    about as likely a decoy as the true value: with the frequencies p as prior and one decoy, the
    set {t, u} leaves the odds of t against u at (1 − p_u) : (1 − p_t), near even between
    uncommon values, and at the prior odds p_t : p_u when the set is the whole domain (a Yes/No
    attribute, whose set says nothing about the record). Public
    attributes are answered exactly: filters on them select exactly, a count with public filters
    only is the exact count, a sum of a public attribute over a public query set the exact sum.

    Answers: the filters are evaluated in three-valued logic (a record is surely, possibly or
    not in the query set, and in each group its set allows); a count is [records surely in,
    records possibly in]; a sum adds per record its lowest and highest possible contribution; a
    mean is the smallest and largest mean over the subsets between the sure and the possible
    records with values in their intervals. These are the exact min and max over Π when no
    confidential attribute is compared twice (filters and group key together) and the aggregated
    attribute is not compared, otherwise an interval containing them. A quantile (inverted CDF)
    is answered only when the query set is exact (no confidential attribute in the filters or
    group-by; a decision on the query alone) and is then [quantile of the lo, quantile of the hi],
    exact by monotonicity. A numeric histogram gives per bin [records surely in the query set
    whose whole interval lies in the bin, records possibly in it whose interval meets the bin]. A
    sum, mean or quantile of a numeric-coded categorical attribute uses each set's smallest and
    largest value.

What it does not cover
    Missingness: a missing confidential value stays missing in Π, so whether a record's value is
    missing is answered exactly. A new version of the data file has another content hash and so
    an independent Π: an analyst who queried both versions can intersect a record's intervals
    (or sets), which is narrower than either. τ, the median of |a|, is a property of the data that
    the interval widths near zero reveal.
"""

from __future__ import annotations

import hmac
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError
from sdckit.query.engine import Engine
from sdckit.query.errors import Refused
from sdckit.query.language import And, Filter, Not, Query
from sdckit.table import Kind

_QUANTILE_REFUSED = (
    "camouflage does not answer a quantile whose query set depends on a confidential attribute"
)


def generator(secret: bytes, source: str, attribute: str) -> np.random.Generator:
    """The random generator of one attribute's part of Π: seeded with HMAC-SHA256(secret,
    ``source`` NUL ``attribute``)."""
    digest = hmac.new(secret, f"{source}\0{attribute}".encode(), "sha256").digest()
    return np.random.default_rng(int.from_bytes(digest, "big"))


def interval_scale(values: np.ndarray) -> float:
    """τ: the median of |a| over the non-missing values, else their mean |a|, else 1."""
    magnitudes = np.abs(values[~np.isnan(values)])
    if len(magnitudes) == 0:
        return 1.0
    for scale in (float(np.median(magnitudes)), float(np.mean(magnitudes))):
        if scale > 0 and math.isfinite(scale):
            return scale
    return 1.0


def numeric_intervals(
    values: np.ndarray, width: float, random: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """Each record's interval [lower, upper] (NaN where the value is missing) and τ: of length
    L = log((1+w)/(1−w)) on the scale asinh(a/τ), with the value at a uniformly random place."""
    scale = interval_scale(values)
    length = math.log((1 + width) / (1 - width))
    place = random.random(len(values))
    with np.errstate(over="ignore", invalid="ignore"):
        y_lower = np.arcsinh(values / scale) - place * length
        lower = scale * np.sinh(y_lower)
        upper = scale * np.sinh(y_lower + length)
    # rounding of sinh(asinh(.)) may miss the value by an ulp; overflow only above ~1e305
    biggest = np.finfo(float).max
    lower = np.clip(np.fmin(lower, values), -biggest, biggest)
    upper = np.clip(np.fmax(upper, values), -biggest, biggest)
    missing = np.isnan(values)
    lower[missing] = np.nan
    upper[missing] = np.nan
    return lower, upper, scale


def categorical_sets(
    codes: np.ndarray, domain_size: int, decoys: int, random: np.random.Generator
) -> np.ndarray:
    """Each record's set of possible values as sorted domain codes, records × (1 + d) with
    d = min(decoys, domain_size − 1): its own code (``codes``; ``domain_size`` where missing) and
    d other codes drawn one after the other, each with probability proportional to its frequency
    among the values not yet in the set (sampling without replacement); a value absent from the
    data is drawn (uniformly among the absent ones) only when every value that occurs is already
    in the set. A missing value gives a row of ``domain_size``."""
    records = len(codes)
    present = codes < domain_size
    others = max(min(decoys, domain_size - 1), 0)
    if others == 0 or not present.any():
        sets = np.full((records, 1 + others), domain_size, dtype=np.int32)
        sets[:, 0] = codes
        return sets
    frequencies = np.bincount(codes[present], minlength=domain_size).astype(np.int64)
    absent = (frequencies == 0).astype(np.int64)
    uniforms = random.random((records, others))
    chosen = np.where(present, codes, 0).astype(np.int64)[:, None]
    for step in range(others):
        pick = _weighted_pick(frequencies, chosen, uniforms[:, step])
        fill = pick < 0
        if fill.any():
            pick[fill] = _weighted_pick(absent, chosen[fill], uniforms[fill, step])
        chosen = np.column_stack([chosen, pick])
    sets = chosen.astype(np.int32)
    sets[~present] = domain_size
    sets.sort(axis=1)
    return sets


def _weighted_pick(weights: np.ndarray, excluded: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Per row, a value drawn with probability proportional to its integer weight among the
    values not in the row of ``excluded`` (distinct codes), by inverting the cumulative weights
    with the excluded values skipped; -1 where no weight is left."""
    cumulative = np.cumsum(weights)
    starts = cumulative - weights
    skipped = np.sort(excluded, axis=1)
    remaining = cumulative[-1] - weights[skipped].sum(axis=1)
    target = np.minimum((uniforms * remaining).astype(np.int64), remaining - 1)
    for column in range(skipped.shape[1]):
        value = skipped[:, column]
        target += np.where(starts[value] <= target, weights[value], 0)
    pick = np.searchsorted(cumulative, target, side="right")
    pick[remaining <= 0] = -1
    return pick


@dataclass(frozen=True)
class _Sets:
    """Π of a categorical attribute: ``domain`` (floats for a numeric column, else text), ``codes``
    (records × (1 + d), ``len(domain)`` where missing) and ``index`` (value → code)."""

    domain: np.ndarray
    codes: np.ndarray
    index: dict[Any, int]


class Camouflage:
    """Answers queries on ``engine`` from a set Π of possible datasets (see the module docstring).

    Parameters
    ----------
    engine : Engine
        The dataset.
    confidential : sequence of str
        The confidential attributes (numeric, categorical or ordinal); the others are public.
    width : float
        w in (0, 1): a numeric interval has length log((1+w)/(1−w)) on the asinh scale.
    decoys : int
        At least 1: the other values in each record's set of a categorical attribute.
    secret, source : bytes, str
        The server's secret and the data file's content hash, which seed Π.
    domains : dict
        Declared domains of categorical attributes (values not declared but in the data are added).

    Raises
    ------
    ConfigError
        An unknown confidential attribute, one that is neither numeric nor categorical, a width
        outside (0, 1) or fewer than one decoy.
    """

    def __init__(
        self,
        engine: Engine,
        confidential: Sequence[str],
        width: float,
        decoys: int,
        secret: bytes,
        source: str,
        domains: dict[str, list],
    ) -> None:
        if isinstance(width, bool) or not isinstance(width, int | float) or not 0 < width < 1:
            raise ConfigError(f"camouflage: width must be a number in (0, 1), got {width!r:.100}")
        if isinstance(decoys, bool) or not isinstance(decoys, int) or decoys < 1:
            raise ConfigError(f"camouflage: decoys must be an integer of at least 1, got {decoys!r:.100}")
        if not isinstance(secret, bytes) or not secret:
            raise ConfigError("camouflage: the secret must be non-empty bytes")
        self.engine = engine
        self.width = float(width)
        self.decoys = decoys
        self.confidential = list(dict.fromkeys(confidential))
        #: numeric attributes: (lower, upper) per record, NaN where missing
        self.intervals: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        #: τ of each numeric attribute
        self.scales: dict[str, float] = {}
        #: categorical attributes: the set of possible values per record
        self.sets: dict[str, _Sets] = {}
        self._public_values: dict[str, np.ndarray] = {}
        for name in self.confidential:
            if name not in engine.kinds:
                raise ConfigError(
                    f"camouflage: confidential attribute '{name}' is not a queryable attribute of the dataset"
                )
            kind, column_type = engine.kinds[name], engine.types[name]
            random = generator(secret, source, name)
            if kind is Kind.NUMERIC and column_type == "number":
                values = engine.frame.get_column(name).cast(pl.Float64).to_numpy().astype(float, copy=True)
                lower, upper, scale = numeric_intervals(values, self.width, random)
                self.intervals[name] = (lower, upper)
                self.scales[name] = scale
            elif kind in (Kind.CATEGORICAL, Kind.ORDINAL) and column_type in ("number", "text"):
                self.sets[name] = self._build_sets(name, domains.get(name), random)
            else:
                raise ConfigError(
                    f"camouflage: confidential attribute '{name}' is {kind.value} ({column_type}); "
                    "camouflage protects numeric and categorical or ordinal attributes"
                )

    # --- Π --------------------------------------------------------------------------------------

    def _normal(self, name: str, value: Any) -> Any:
        """A value as the column compares it: a float for a numeric column, else text."""
        return float(value) if self.engine.types[name] == "number" else str(value)

    def _build_sets(self, name: str, declared: list | None, random: np.random.Generator) -> _Sets:
        column = self.engine.frame.get_column(name)
        numeric = self.engine.types[name] == "number"
        column = column.cast(pl.Float64) if numeric else column.cast(pl.String)
        present = column.drop_nulls().unique().sort().to_list()
        values = list(dict.fromkeys([self._normal(name, v) for v in declared or []] + present))
        index = {value: code for code, value in enumerate(values)}
        codes = (
            column.replace_strict(
                values, list(range(len(values))), default=len(values), return_dtype=pl.Int32
            )
            .fill_null(len(values))
            .to_numpy()
        )
        sets = categorical_sets(codes, len(values), self.decoys, random)
        domain = np.asarray(values, dtype=float) if numeric else np.asarray(values, dtype=str)
        return _Sets(domain=domain, codes=sets, index=index)

    # --- filters ----------------------------------------------------------------------------------

    def _leaf(self, node: Filter) -> tuple[np.ndarray, np.ndarray] | None:
        """(surely, possibly) of a comparison on a confidential attribute, None on a public one."""
        if node.column in self.intervals:
            return self._interval_leaf(node)
        if node.column in self.sets:
            return self._set_leaf(node)
        return None

    def _interval_leaf(self, node: Filter) -> tuple[np.ndarray, np.ndarray]:
        lower, upper = self.intervals[node.column]
        if node.op == "in":
            targets = np.unique(np.asarray([float(v) for v in node.value], dtype=np.float64))  # type: ignore[union-attr]
            # some target in [lower, upper]: the first target >= lower is <= upper
            with np.errstate(invalid="ignore"):
                possibly = np.searchsorted(targets, lower, side="left") < np.searchsorted(
                    targets, upper, side="right"
                )
            possibly &= ~np.isnan(lower)
            surely = (lower == upper) & np.isin(lower, targets)
            return surely, possibly
        value = float(node.value)  # type: ignore[arg-type]
        with np.errstate(invalid="ignore"):
            if node.op in ("=", "!="):
                surely = (lower == value) & (upper == value)
                possibly = (lower <= value) & (value <= upper)
                if node.op == "!=":
                    present = ~np.isnan(lower)
                    return present & ~possibly, present & ~surely
                return surely, possibly
            return {
                ">": (lower > value, upper > value),
                ">=": (lower >= value, upper >= value),
                "<": (upper < value, lower < value),
                "<=": (upper <= value, lower <= value),
            }[node.op]

    def _set_leaf(self, node: Filter) -> tuple[np.ndarray, np.ndarray]:
        sets = self.sets[node.column]
        domain = sets.domain
        if node.op == "in":
            holds = np.isin(domain, [self._normal(node.column, v) for v in node.value])  # type: ignore[union-attr]
        else:
            value = self._normal(node.column, node.value)
            holds = {
                "=": domain == value,
                "!=": domain != value,
                "<": domain < value,
                "<=": domain <= value,
                ">": domain > value,
                ">=": domain >= value,
            }[node.op]
        return self._over_sets(sets, np.asarray(holds, dtype=bool))

    @staticmethod
    def _over_sets(
        sets: _Sets, holds: np.ndarray, records: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(every value of the set satisfies, some value does) for a predicate ``holds`` on the
        domain; false for a missing value."""
        holds = np.append(holds, False)  # the code of a missing value
        codes = sets.codes if records is None else sets.codes[records]
        satisfied = holds[codes]
        return satisfied.all(axis=1), satisfied.any(axis=1)

    def _involves_confidential(self, query: Query) -> bool:
        def walk(node: Any) -> bool:
            if isinstance(node, Filter):
                return node.column in self.intervals or node.column in self.sets
            if isinstance(node, Not):
                return walk(node.not_)
            return any(walk(child) for child in (node.and_ if isinstance(node, And) else node.or_))

        grouped = list(query.group_by) + ([query.column] if query.aggregate == "histogram" else [])
        return any(walk(node) for node in query.filters) or any(
            name in self.sets or name in self.intervals for name in grouped
        )

    # --- answers ----------------------------------------------------------------------------------

    def answer(self, query: Query, keys: list[tuple] | None, edges: list[float] | None) -> dict[str, Any]:
        """The interval answer of a checked query, from Π and the public attributes only.

        ``keys`` are the groups' key tuples (in the order of ``query.group_by``, or of
        ``[query.column]`` for a histogram without bins), None without groups; ``edges`` the bin
        edges of a numeric histogram. Returns ``{"lower", "upper"}`` or ``{"groups": [{"key",
        "lower", "upper"}, ...]}``.
        """
        if query.aggregate == "quantile" and self._involves_confidential(query):
            raise Refused(_QUANTILE_REFUSED, reason="not_supported")
        base_surely, base_possibly = self.engine.envelope(query.filters, self._leaf)
        records = np.flatnonzero(base_possibly)
        surely = base_surely[records]
        if edges is not None:
            return {"groups": self._histogram(query.measured, edges, records, surely)}
        aggregate = "count" if query.aggregate == "histogram" else query.aggregate
        by = [query.measured] if query.aggregate == "histogram" else list(query.group_by)
        if keys is None or not by:
            everyone = np.arange(len(records))
            single = np.zeros(len(records), dtype=np.int64)
            return self._per_group(aggregate, query, records, everyone, single, surely, 1)[0]
        if not keys:
            return {"groups": []}
        member, group, member_surely, groups, position = self._memberships(by, keys, records, surely)
        intervals = self._per_group(aggregate, query, records, member, group, member_surely, groups)
        return {
            "groups": [
                {"key": dict(zip(by, key, strict=True)), **intervals[position[index]]}
                for index, key in enumerate(keys)
            ]
        }

    def _public_codes(self, name: str, values: list[Any], records: np.ndarray) -> np.ndarray:
        """Index in ``values`` of each record's value of a public column, -1 if none."""
        column = self.engine.frame.get_column(name).gather(records)
        column = column.cast(pl.Float64) if self.engine.types[name] == "number" else column.cast(pl.String)
        return (
            column.replace_strict(values, list(range(len(values))), default=-1, return_dtype=pl.Int64)
            .fill_null(-1)
            .to_numpy()
        )

    def _memberships(
        self, by: list[str], keys: list[tuple], records: np.ndarray, surely: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
        """The (record, group) pairs where the record is possibly in the group: the record's place
        in ``records``, the group (an index of the distinct keys), whether it is surely in; the
        number of distinct keys and each key's distinct index.

        A record may be in one group per combination of the values its sets allow, so the pairs
        are the product, per record, of each group column's possible key values (one for a public
        column), numbered in mixed radix and matched with the keys' numbers.
        """
        count = len(records)
        combined = np.zeros((count, 1), dtype=np.int64)
        valid = np.ones((count, 1), dtype=bool)
        certain = surely[:, None].copy()
        key_numbers = np.zeros(len(keys), dtype=np.int64)
        for column, name in enumerate(by):
            normal = [self._normal(name, key[column]) for key in keys]
            values = list(dict.fromkeys(normal))
            place = {value: index for index, value in enumerate(values)}
            key_numbers = key_numbers * len(values) + np.asarray([place[v] for v in normal], dtype=np.int64)
            if name in self.sets:
                sets = self.sets[name]
                lookup = np.full(len(sets.domain) + 1, -1, dtype=np.int64)
                for value, index in place.items():
                    code = sets.index.get(value)
                    if code is not None:
                        lookup[code] = index
                local = lookup[sets.codes[records]]
                local_surely = (local >= 0) & (sets.codes.shape[1] == 1)
            else:
                local = self._public_codes(name, values, records)[:, None]
                local_surely = local >= 0
            width = combined.shape[1] * local.shape[1]
            combined = (combined[:, :, None] * len(values) + local[:, None, :]).reshape(count, width)
            valid = (valid[:, :, None] & (local >= 0)[:, None, :]).reshape(count, width)
            certain = (certain[:, :, None] & local_surely[:, None, :]).reshape(count, width)
        distinct, position = np.unique(key_numbers, return_inverse=True)
        member = np.repeat(np.arange(count), combined.shape[1])[valid.ravel()]
        numbers = combined[valid]
        member_surely = certain[valid]
        found = np.searchsorted(distinct, numbers)
        found = np.minimum(found, len(distinct) - 1)
        matched = distinct[found] == numbers
        return member[matched], found[matched], member_surely[matched], len(distinct), position

    def _bounds(self, name: str, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The lowest and highest value each record may have (NaN where missing): its interval, the
        extremes of its set, or its exact value for a public attribute."""
        if name in self.intervals:
            lower, upper = self.intervals[name]
            return lower[records], upper[records]
        if name in self.sets:
            sets = self.sets[name]
            values = np.append(sets.domain, np.nan)[sets.codes[records]]
            return values.min(axis=1), values.max(axis=1)
        if name not in self._public_values:
            column = self.engine.frame.get_column(name).cast(pl.Float64)
            self._public_values[name] = column.to_numpy().astype(float, copy=False)
        values = self._public_values[name][records]
        return values, values

    def _per_group(
        self,
        aggregate: str,
        query: Query,
        records: np.ndarray,
        member: np.ndarray,
        group: np.ndarray,
        surely: np.ndarray,
        groups: int,
    ) -> list[dict[str, Any]]:
        if aggregate == "count":
            lower = np.bincount(group, weights=surely, minlength=groups)
            upper = np.bincount(group, minlength=groups)
            return [{"lower": int(round(a)), "upper": int(b)} for a, b in zip(lower, upper, strict=True)]
        low, high = self._bounds(query.column, records[member])  # type: ignore[arg-type]
        if aggregate == "sum":
            with np.errstate(invalid="ignore"):
                least = np.where(surely, low, np.minimum(low, 0.0))
                most = np.where(surely, high, np.maximum(high, 0.0))
            least = np.nan_to_num(least, nan=0.0)
            most = np.nan_to_num(most, nan=0.0)
            lower = np.bincount(group, weights=least, minlength=groups)
            upper = np.bincount(group, weights=most, minlength=groups)
            return [{"lower": float(a), "upper": float(b)} for a, b in zip(lower, upper, strict=True)]
        present = ~np.isnan(low)
        group, surely, low, high = group[present], surely[present], low[present], high[present]
        order = np.argsort(group, kind="stable")
        group, surely, low, high = group[order], surely[order], low[order], high[order]
        starts = np.searchsorted(group, np.arange(groups + 1))
        out = []
        for g in range(groups):
            part = slice(starts[g], starts[g + 1])
            if aggregate == "mean":
                out.append(mean_bounds(surely[part], low[part], high[part]))
            else:
                out.append(quantile_bounds(low[part], high[part], query.quantile))  # type: ignore[arg-type]
        return out

    def _histogram(
        self, column: str, edges: list[float], records: np.ndarray, surely: np.ndarray
    ) -> list[dict[str, Any]]:
        """Per bin [e_b, e_b+1) (the last closed): records surely in the query set whose whole
        interval lies in the bin, records possibly in it whose interval meets the bin."""
        low, high = self._bounds(column, records)
        bins = len(edges) - 1
        low_bin, high_bin = bin_codes(low, edges), bin_codes(high, edges)
        present = ~np.isnan(low)
        inside = present & surely & (low_bin == high_bin) & (low_bin >= 0) & (low_bin < bins)
        lower = np.bincount(low_bin[inside], minlength=bins)
        meets = present & (low_bin < bins) & (high_bin >= 0)
        first = np.maximum(low_bin[meets], 0)
        last = np.minimum(high_bin[meets], bins - 1)
        steps = np.bincount(first, minlength=bins + 1) - np.bincount(last + 1, minlength=bins + 1)
        upper = np.cumsum(steps)[:bins]
        return [
            {"key": {column: [edges[b], edges[b + 1]]}, "lower": int(lower[b]), "upper": int(upper[b])}
            for b in range(bins)
        ]


def bin_codes(values: np.ndarray, edges: list[float]) -> np.ndarray:
    """The bin of each value (``edges[b] <= x < edges[b+1]``, the last bin closed); -1 below the
    first edge, the number of bins above the last (and for NaN)."""
    edge_array = np.asarray(edges, dtype=float)
    codes = np.searchsorted(edge_array, values, side="right") - 1
    codes[values == edge_array[-1]] = len(edges) - 2
    codes[np.isnan(values)] = len(edges) - 1
    return codes


def _smallest_mean(fixed: np.ndarray, optional: np.ndarray) -> float | None:
    """The smallest mean of ``fixed`` with any subset of ``optional`` (non-empty in all): with
    the t smallest optional values, over t."""
    totals = fixed.sum() + np.concatenate([[0.0], np.cumsum(np.sort(optional))])
    counts = len(fixed) + np.arange(len(optional) + 1)
    means = totals[counts > 0] / counts[counts > 0]
    return float(means.min()) if len(means) else None


def mean_bounds(surely: np.ndarray, low: np.ndarray, high: np.ndarray) -> dict[str, Any]:
    """[min, max] of the mean over the record subsets T with surely ⊆ T ⊆ all (T non-empty) and
    each value within [low, high]."""
    least = _smallest_mean(low[surely], low[~surely])
    if least is None:
        return {"lower": None, "upper": None}
    most = _smallest_mean(-high[surely], -high[~surely])
    return {"lower": least, "upper": -most}  # type: ignore[operator]


def quantile_bounds(low: np.ndarray, high: np.ndarray, alpha: float) -> dict[str, Any]:
    """[quantile of the lows, quantile of the highs] (inverted CDF) over an exact query set."""
    if len(low) == 0:
        return {"lower": None, "upper": None}
    return {
        "lower": float(np.quantile(low, alpha, method="inverted_cdf")),
        "upper": float(np.quantile(high, alpha, method="inverted_cdf")),
    }


__all__ = [
    "Camouflage",
    "bin_codes",
    "categorical_sets",
    "generator",
    "interval_scale",
    "mean_bounds",
    "numeric_intervals",
    "quantile_bounds",
]
