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

from dataclasses import dataclass
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

    def value_counts(self, released_codes: np.ndarray, n_values: int) -> np.ndarray:
        """Per target (rows) and sensitive value code (columns), the released records of the covered
        set holding that value; counted ``_BLOCK`` values per pass."""
        out = np.zeros((self.n_targets, n_values), dtype=np.float64)
        for start in range(0, n_values, _BLOCK):
            stop = min(start + _BLOCK, n_values)
            onehot = (released_codes[:, None] == np.arange(start, stop)[None, :]).astype(np.float64)
            out[:, start:stop] = counts_of_covers(self.covers, self.n_targets, onehot)
        return out


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


def posterior_after_ruling_out(counts: np.ndarray, true: np.ndarray, b: int) -> np.ndarray:
    """Per row of ``counts`` (values counted in a covered set or in the whole release), the share of
    the true value ``true`` once the ``b`` most frequent *other* values are ruled out (the worst case
    for the release); 0 where nothing is left or the true value is absent."""
    rows = np.arange(len(counts))
    right = counts[rows, true]
    total = counts.sum(axis=1)
    ruled = np.zeros(len(counts))
    if b > 0 and counts.shape[1] > 1:
        wrong = counts.copy()
        wrong[rows, true] = 0.0
        keep = min(b, wrong.shape[1])
        top = -np.partition(-wrong, keep - 1, axis=1)[:, :keep] if keep < wrong.shape[1] else wrong
        ruled = top.sum(axis=1)
    left = total - ruled
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(left > 0, right / np.where(left > 0, left, 1.0), 0.0)


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
        counts = sets.value_counts(released, n_values)
        posterior = posterior_after_ruling_out(counts, true, b)
        smallest = int(counts[:n].sum(axis=1).min()) if n else 0
        disclosed = posterior >= bound - tolerance
        overall = np.bincount(released, minlength=n_values).astype(np.float64)
        by_value = posterior_after_ruling_out(np.tile(overall, (n_values, 1)), np.arange(n_values), b)
        guessed = by_value[true[:n]] >= bound - tolerance
        attack |= disclosed[:n]
        held |= disclosed[n:]
        baseline |= guessed
        per_attribute[name] = {
            "disclosed_share": float(np.count_nonzero(disclosed[:n]) / n),
            "mean_posterior": float(posterior[:n].mean()),
            "baseline_mean_posterior": float(by_value[true[:n]].mean()),
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
