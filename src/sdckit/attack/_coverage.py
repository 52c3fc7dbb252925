"""What an adversary who knows a person's quasi-identifiers reads in a generalized release: the
*covered set* of every target, the released records whose labels cover the target's values
(:mod:`sdckit.coverage`: ``[1984, 1988)`` covers 1986, ``0*****`` covers ``028051``, ``*`` covers
everything), its size, whether it holds the target's own released record, and how its released
sensitive values are distributed. Shared by the attacks ``reidentification``, ``homogeneity`` and
``background-knowledge``; none of it reads how the release was made.

A missing value follows the wildcard convention of sdcMicro (a missing released value covers every
value, a missing original value is covered by every label), as ``sdckit risk reidentification
--original`` reads releases.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl

from sdckit.coverage import AttributeCover, attribute_covers, counts_of_covers
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import encode_column
from sdckit.params import spell
from sdckit.table import Role, Table

#: Sensitive values counted per pass of the coverage join (bounds the targets x values matrix).
_BLOCK = 128


def quasi_identifiers(original: Table, release: Any) -> list[str]:
    """The original's quasi-identifiers (configuration roles), every one a column of the release."""
    return [
        attribute.name
        for attribute in original.schema.with_role(Role.QUASI_IDENTIFIER)
        if isinstance(release, Table) and attribute.name in release.data.columns
    ]


def qi_reason(original: Table, release: Any) -> str | None:
    """Why a coverage attack cannot run on ``release`` (None: it can)."""
    if not isinstance(release, Table):
        return "it attacks a microdata release"
    keys = [attribute.name for attribute in original.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not keys:
        return "the configuration names no quasi-identifier (role quasi-identifier, or --qi)"
    absent = [name for name in keys if name not in release.data.columns]
    if absent:
        return f"the release has no column {', '.join(repr(name) for name in absent)} (a quasi-identifier)"
    try:
        covered_sets(original, release)
    except InputError as error:
        # A perturbed or synthetic value covers no original value: not a release read by coverage.
        return f"its quasi-identifiers are not generalized values of the original's ({error})"
    return None


def sensitive_attributes(original: Table, release: Any, chosen: str | None) -> list[str]:
    """The attacked sensitive attributes: ``chosen`` (comma-separated, parameter ``sensitive``) or
    every attribute of role sensitive that the release holds."""
    if chosen is not None:
        names = [name.strip() for name in chosen.split(",") if name.strip()]
        for name in names:
            for table, side in ((original, "original"), (release, "release")):
                if name not in table.data.columns:
                    raise ConfigError(f"{spell('sensitive')}: '{name}' is not a column of the {side}")
        return names
    return [
        attribute.name
        for attribute in original.schema.with_role(Role.SENSITIVE)
        if isinstance(release, Table) and attribute.name in release.data.columns
    ]


@dataclass(frozen=True)
class CoveredSets:
    """The targets' covered sets: ``targets`` original records first, then the control records;
    ``covers`` the per-attribute covers (for :func:`counts_of_covers`)."""

    keys: tuple[str, ...]
    covers: list[AttributeCover]
    n_targets: int

    def sizes(self) -> np.ndarray:
        """Per target, the number of released records covering it."""
        n_released = len(self.covers[0].released_labels)
        return counts_of_covers(self.covers, self.n_targets, np.ones(n_released))[:, 0].astype(np.int64)

    def own_covered(self, n: int) -> np.ndarray:
        """For the first ``n`` targets (the original's records, row-aligned with the release): does
        released record i cover original record i on every quasi-identifier?"""
        own = np.ones(n, dtype=bool)
        for cover in self.covers:
            n_labels = max(len(cover.labels), 1)
            slot_of = np.repeat(np.arange(cover.n_slots, dtype=np.int64), np.diff(cover.pointer))
            pairs = slot_of * n_labels + cover.covering.astype(np.int64)  # ascending: slot, then label
            query = cover.target_slots[:n].astype(np.int64) * n_labels + cover.released_labels[:n]
            at = np.searchsorted(pairs, query)
            found = at < len(pairs)
            found[found] = pairs[at[found]] == query[found]
            own &= found
        return own

    def posterior(self, released_codes: np.ndarray, n_values: int, true: np.ndarray, b: int) -> Posterior:
        """Per target, the share of its ``true`` value code among the released records of its covered
        set once the ``b`` most frequent other values there are ruled out (:class:`Posterior`).

        Targets with the same quasi-identifiers share a covered set: the sensitive values are counted
        per distinct pattern, ``_BLOCK`` values per pass of the coverage join, keeping per pattern
        only the counts of the true values, the totals and the ``b + 1`` largest counts (memory:
        patterns x (block + b))."""
        slots = np.stack([cover.target_slots for cover in self.covers], axis=1)
        patterns, pattern_of = np.unique(slots, axis=0, return_inverse=True)
        pattern_of = pattern_of.reshape(-1)
        covers = [replace(cover, target_slots=patterns[:, j]) for j, cover in enumerate(self.covers)]
        n_patterns = len(patterns)
        right = np.zeros(self.n_targets)
        total = np.zeros(n_patterns)
        top = _Top.empty(n_patterns, b + 1)
        for start in range(0, n_values, _BLOCK):
            stop = min(start + _BLOCK, n_values)
            onehot = (released_codes[:, None] == np.arange(start, stop)[None, :]).astype(np.float64)
            block = counts_of_covers(covers, n_patterns, onehot)
            total += block.sum(axis=1)
            inside = np.flatnonzero((true >= start) & (true < stop))
            right[inside] = block[pattern_of[inside], true[inside] - start]
            top = top.merged(block, start)
        return Posterior.of(right, total[pattern_of], top.wrong(pattern_of, true, b))


@dataclass(frozen=True)
class _Top:
    """Per row, the ``width`` largest counts seen so far and the codes of their values (-1: none)."""

    counts: np.ndarray
    codes: np.ndarray

    @classmethod
    def empty(cls, rows: int, width: int) -> _Top:
        return cls(np.zeros((rows, width)), np.full((rows, width), -1, dtype=np.int64))

    def merged(self, block: np.ndarray, start: int) -> _Top:
        """Keep the largest of these and of ``block`` (counts of value codes ``start``, ``start + 1``...)."""
        width = self.counts.shape[1]
        counts = np.concatenate([self.counts, block], axis=1)
        codes = np.concatenate(
            [self.codes, np.broadcast_to(np.arange(start, start + block.shape[1]), block.shape)], axis=1
        )
        chosen = np.argpartition(-counts, width - 1, axis=1)[:, :width]
        return _Top(np.take_along_axis(counts, chosen, axis=1), np.take_along_axis(codes, chosen, axis=1))

    def wrong(self, rows: np.ndarray, true: np.ndarray, b: int) -> np.ndarray:
        """Per target (its row and true value code), the sum of the ``b`` largest counts of other
        values: of the ``b + 1`` largest, all but the true value's, or all but the smallest."""
        if b == 0:
            return np.zeros(len(rows))
        counts, codes = self.counts[rows], self.codes[rows]
        is_true = codes == true[:, None]
        dropped = np.where(is_true.any(axis=1), (counts * is_true).sum(axis=1), counts.min(axis=1))
        return counts.sum(axis=1) - dropped


@dataclass(frozen=True)
class Posterior:
    """Per target: ``value`` the share of its true value once ``b`` wrong values are ruled out (0 when
    nothing is left), ``total`` the size of its covered set."""

    value: np.ndarray
    total: np.ndarray

    @classmethod
    def of(cls, right: np.ndarray, total: np.ndarray, wrong: np.ndarray) -> Posterior:
        left = total - wrong
        value = np.where(left > 0, right / np.where(left > 0, left, 1.0), 0.0)
        return cls(value, total)


def overall_posterior(released_codes: np.ndarray, n_values: int, true: np.ndarray, b: int) -> np.ndarray:
    """The posterior of every target's true value read from the whole release (the baseline)."""
    overall = np.bincount(released_codes, minlength=n_values).astype(np.float64)[None, :]
    top = _Top.empty(1, b + 1).merged(overall, 0)
    rows = np.zeros(len(true), dtype=np.int64)
    total = np.full(len(true), overall.sum())
    return Posterior.of(overall[0, true], total, top.wrong(rows, true, b)).value


def covered_sets(original: Table, release: Table, control: Any = None) -> CoveredSets:
    """The covered sets of every original record (then of every control record, when given)."""
    from sdckit.risk.combined import schema_hierarchies

    keys = quasi_identifiers(original, release)
    targets = original.data.select(keys)
    if isinstance(control, Table):
        absent = [name for name in keys if name not in control.data.columns]
        if absent:
            raise ConfigError(f"the control records have no column {', '.join(repr(n) for n in absent)}")
        targets = pl.concat([targets, control.data.select(keys)], how="vertical_relaxed")
    where = f"{release.source}: " if release.source else ""
    covers = attribute_covers(
        targets, release.data, keys, hierarchies=schema_hierarchies(original), missing="wildcard", where=where
    )
    return CoveredSets(tuple(keys), covers, targets.height)


def sensitive_codes(truth: pl.Series, released: pl.Series) -> tuple[np.ndarray, np.ndarray, int]:
    """The targets' true values and the released values as codes of one dictionary (their text;
    a missing value is a value of its own): (true codes, released codes, number of values)."""
    both = pl.concat([truth.cast(pl.String), released.cast(pl.String)])
    codes, cardinality, has_missing, _ = encode_column(both)
    codes = np.where(codes < 0, cardinality, codes).astype(np.int64)
    n_values = cardinality + (1 if has_missing else 0)
    return codes[: len(truth)], codes[len(truth) :], max(n_values, 1)


@dataclass(frozen=True)
class Disclosure:
    """Per target, whether a sensitive value is disclosed (any attacked attribute), for the
    original's records (``attack``), the control records (``control``, None without) and the
    adversary without the release (``baseline``); ``details`` per attribute."""

    attack: np.ndarray
    control: np.ndarray | None
    baseline: np.ndarray
    details: dict[str, Any]


def sensitive_disclosure(
    original: Table, release: Table, control: Any, names: list[str], b: int, bound: float
) -> Disclosure:
    """Which targets' true value of some attribute of ``names`` reaches a posterior of ``bound`` in
    its covered set once ``b`` wrong values are ruled out (the most frequent ones there), and the
    same from the whole release's distribution of the attribute (the baseline)."""
    sets = covered_sets(original, release, control)
    n = original.n_records
    attack = np.zeros(n, dtype=bool)
    others = sets.n_targets - n
    held = np.zeros(others, dtype=bool)
    baseline = np.zeros(n, dtype=bool)
    per_attribute: dict[str, Any] = {}
    tolerance = 1e-12
    smallest = 0
    for name in names:
        truth = original.data.get_column(name)
        if isinstance(control, Table):
            truth = pl.concat([truth.cast(pl.String), control.data.get_column(name).cast(pl.String)])
        true, released, n_values = sensitive_codes(truth, release.data.get_column(name))
        found = sets.posterior(released, n_values, true, b)
        posterior = found.value
        smallest = int(found.total[:n].min()) if n else 0
        disclosed = posterior >= bound - tolerance
        baseline_posterior = overall_posterior(released, n_values, true[:n], b)
        guessed = baseline_posterior >= bound - tolerance
        attack |= disclosed[:n]
        held |= disclosed[n:]
        baseline |= guessed
        per_attribute[name] = {
            "disclosed_share": float(np.count_nonzero(disclosed[:n]) / n),
            "mean_posterior": float(posterior[:n].mean()),
            "baseline_mean_posterior": float(baseline_posterior.mean()),
        }
    details = {
        "quasi_identifiers": list(sets.keys),
        "sensitive": names,
        "by_attribute": per_attribute,
        "smallest_covered_set": smallest,
    }
    return Disclosure(attack, held if isinstance(control, Table) else None, baseline, details)


def sensitive_reason(original: Table, release: Any, chosen: str | None) -> str | None:
    """Why a sensitive-value attack cannot run (None: it can)."""
    reason = qi_reason(original, release)
    if reason is None and chosen is None and not sensitive_attributes(original, release, None):
        reason = "the configuration names no sensitive attribute the release holds (role sensitive)"
    return reason
