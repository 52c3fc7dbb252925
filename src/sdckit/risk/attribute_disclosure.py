"""Attribute disclosure from a release: how often an intruder who knows an original record's
quasi-identifiers infers its sensitive value from the released records (the tutorial's caveat on
synthetic data: a synthetic record that matches a respondent's attributes discloses as a real one
would).

``sdckit risk attribute-disclosure ORIGINAL RELEASE --config C``. For every original record ``i``
and every sensitive attribute ``S``:

* the intruder looks up the released records whose quasi-identifiers equal ``i``'s exactly (values
  compared as written, a missing value equal only to a missing value): ``R_i``; ``i`` is *matched*
  when ``R_i`` is not empty. Unmatched records take no part in the shares below (the matched share
  is reported beside them);
* the prediction is the most frequent value of ``S`` among ``R_i`` (missing values of ``S`` left out
  of the vote); when several values tie for the most frequent, the intruder picks one of them at
  random, so ``i`` earns the credit ``1 / #tied`` if its true value is among them, else 0 (no
  prediction when every record of ``R_i`` has ``S`` missing: credit 0);
* the match is *unanimous* when the records of ``R_i`` with ``S`` present all have one value;
* the baseline is the intruder who ignores the quasi-identifiers and guesses the release's most
  frequent value of ``S`` overall (ties shared alike).

Over the original records that are matched and whose own value of ``S`` is present:
``correct_share`` = Σ credit / count, ``baseline_share`` likewise for the baseline guess,
``excess = correct_share − baseline_share`` (the disclosure the quasi-identifiers add),
``unanimous_share`` and ``unanimous_correct_share`` (unanimous and right). ``overall`` pools the
(record, attribute) pairs of every sensitive attribute.

The release needs no row alignment with the original (it may have another number of records, in
another order): only its columns are read. A release with an ``implicate`` column (synthetic data,
``sdckit anonymize synthesize``) is read one implicate at a time: implicate 1 by default
(``--implicate N``), or all implicates pooled (``--implicate all``: the intruder uses every record).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field, field_validator

from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import encode, group_keys
from sdckit.measures import register_measure
from sdckit.params import MethodParams, spell
from sdckit.table import Role, Table, value_strings

IMPLICATE = "implicate"


def _names(value: str | None, table: Table, role: Role, parameter: str, what: str) -> list[str]:
    if value is None:
        chosen = [a.name for a in table.schema.with_role(role)]
        if not chosen:
            raise ConfigError(
                f"attribute disclosure needs {what}: give some attributes role {role.value} or name them "
                f"with --{parameter}"
            )
        return chosen
    chosen = [name.strip() for name in value.split(",") if name.strip()]
    if not chosen:
        raise ConfigError(f"{parameter} lists no attribute")
    if len(set(chosen)) != len(chosen):
        raise ConfigError(f"{parameter} lists an attribute twice ({', '.join(chosen)})")
    for name in chosen:
        if name not in table.data.columns:
            raise ConfigError(
                f"{parameter}: '{name}' is not a column of the original "
                f"(columns: {', '.join(table.data.columns)})"
            )
    return chosen


def _implicate_rows(release: Table, implicate: str) -> tuple[pl.DataFrame, str | None]:
    """The release records the intruder reads, and which implicate(s) they are."""
    frame = release.data
    name = release.source or "release"
    if IMPLICATE not in frame.columns:
        if implicate != "1":
            raise ConfigError(
                f"implicate: {name} has no column '{IMPLICATE}' (it is not a set of synthetic implicates); "
                f"leave out {spell('implicate')}"
            )
        return frame, None
    if implicate == "all":
        return frame, "all"
    column = frame.get_column(IMPLICATE)
    chosen = frame.filter(column == int(implicate))
    if chosen.height == 0:
        present = sorted(set(column.drop_nulls().to_list()))
        raise InputError(
            f"{name} has no implicate {implicate} (implicates: {', '.join(map(str, present)) or 'none'})"
        )
    return chosen, implicate


def _strings(frame: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame([value_strings(frame.get_column(name)).alias(name) for name in names])


@dataclass(frozen=True)
class SensitiveInference:
    """The inference of one sensitive attribute: per original record its ``credit`` (share of a
    correct guess), ``unanimous`` and ``eligible`` (matched and its value present), and the counts."""

    name: str
    credit: np.ndarray
    baseline: np.ndarray
    unanimous: np.ndarray
    eligible: np.ndarray

    def counts(self) -> tuple[int, float, float, int, int]:
        return (
            int(self.eligible.sum()),
            float(self.credit[self.eligible].sum()),
            float(self.baseline[self.eligible].sum()),
            int((self.unanimous & self.eligible).sum()),
            int((self.unanimous & self.eligible & (self.credit == 1)).sum()),
        )

    def figures(self) -> dict[str, Any]:
        return _shares(*self.counts())


def _shares(count: int, correct: float, baseline: float, unanimous: int, unanimous_correct: int) -> dict:
    share = (lambda x: x / count) if count else (lambda x: 0.0)
    return {
        "records": count,
        "correct": correct,
        "correct_share": share(correct),
        "baseline_share": share(baseline),
        "excess": share(correct) - share(baseline),
        "unanimous_share": share(unanimous),
        "unanimous_correct_share": share(unanimous_correct),
    }


def _infer(keys_original: np.ndarray, keys_release: np.ndarray, groups: int, codes_o, codes_r, size: int):
    """Credit, baseline credit and unanimity of every original record for one sensitive attribute
    (codes -1 = missing)."""
    present = codes_r >= 0
    pairs = keys_release[present].astype(np.int64) * (size + 1) + codes_r[present]
    unique, counts = np.unique(pairs, return_counts=True)
    pair_key = unique // (size + 1)
    best = np.zeros(groups, dtype=np.int64)
    np.maximum.at(best, pair_key, counts)
    ties = np.bincount(pair_key[counts == best[pair_key]], minlength=groups)
    distinct = np.bincount(pair_key, minlength=groups)
    own = keys_original.astype(np.int64) * (size + 1) + np.maximum(codes_o, 0)
    if len(unique):
        position = np.minimum(np.searchsorted(unique, own), len(unique) - 1)
        count_own = np.where(unique[position] == own, counts[position], 0)
    else:
        count_own = np.zeros(len(own), dtype=np.int64)
    top = best[keys_original]
    credit = np.where(
        (codes_o >= 0) & (count_own > 0) & (count_own == top), 1.0 / np.maximum(ties[keys_original], 1), 0.0
    )
    overall = np.bincount(codes_r[present], minlength=size)
    modes = overall == overall.max() if present.any() else np.zeros(size, bool)
    baseline = np.where((codes_o >= 0) & modes[np.maximum(codes_o, 0)], 1.0 / max(int(modes.sum()), 1), 0.0)
    unanimous = distinct[keys_original] == 1
    return credit, baseline, unanimous


@dataclass(frozen=True)
class AttributeDisclosure:
    """Attribute disclosure of a release: per original record whether it is matched and how many
    released records match it, and per sensitive attribute its :class:`SensitiveInference`."""

    quasi_identifiers: tuple[str, ...]
    implicate: str | None
    released_records: int
    matches: np.ndarray
    inferences: tuple[SensitiveInference, ...]

    @property
    def n_records(self) -> int:
        return len(self.matches)

    def summary(self) -> dict[str, Any]:
        per = {inference.name: inference.figures() for inference in self.inferences}
        totals = np.array([inference.counts() for inference in self.inferences], dtype=np.float64).sum(axis=0)
        pooled = _shares(int(totals[0]), float(totals[1]), float(totals[2]), int(totals[3]), int(totals[4]))
        matched = int((self.matches > 0).sum())
        return {
            "records": self.n_records,
            "released_records": self.released_records,
            "implicate": self.implicate,
            "quasi_identifiers": list(self.quasi_identifiers),
            "sensitive": [inference.name for inference in self.inferences],
            "matched": matched,
            "matched_share": matched / self.n_records if self.n_records else 0.0,
            "overall": pooled,
            "per_attribute": per,
        }

    def records(self) -> pl.DataFrame:
        columns: dict[str, Any] = {
            "record": np.arange(self.n_records, dtype=np.int64),
            "matches": self.matches.astype(np.int64),
        }
        for inference in self.inferences:
            columns[f"{inference.name}_credit"] = np.where(inference.eligible, inference.credit, np.nan)
            columns[f"{inference.name}_unanimous"] = inference.unanimous & inference.eligible
        return pl.DataFrame(columns).with_columns(pl.selectors.float().fill_nan(None))


def attribute_disclosure(
    original: Table,
    release: Table,
    *,
    attributes: str | None = None,
    sensitive: str | None = None,
    implicate: str = "1",
) -> AttributeDisclosure:
    """Attribute disclosure of ``release`` about ``original`` (see the module docstring)."""
    qis = _names(attributes, original, Role.QUASI_IDENTIFIER, "attributes", "quasi-identifiers")
    targets = _names(sensitive, original, Role.SENSITIVE, "sensitive", "sensitive attributes")
    both = [name for name in targets if name in qis]
    if both:
        raise ConfigError(
            f"sensitive: '{both[0]}' is also a quasi-identifier; an attribute is one or the other"
        )
    frame, which = _implicate_rows(release, implicate)
    missing = [name for name in (*qis, *targets) if name not in frame.columns]
    if missing:
        raise InputError(
            f"{release.source or 'release'} has no column {', '.join(repr(n) for n in missing)}: it has "
            f"{', '.join(frame.columns)}"
        )
    n, r = original.n_records, frame.height
    joined = pl.concat([_strings(original.data, [*qis, *targets]), _strings(frame, [*qis, *targets])])
    encoding = encode(joined, [*qis, *targets])
    keys, groups = group_keys(encoding, qis)
    keys_o, keys_r = keys[:n], keys[n:]
    released_per_key = np.bincount(keys_r, minlength=groups)
    matches = released_per_key[keys_o]
    matched = matches > 0
    inferences = []
    for name in targets:
        j = encoding.index(name)
        codes = encoding.codes[j].astype(np.int64)
        credit, baseline, unanimous = _infer(
            keys_o, keys_r, groups, codes[:n], codes[n:], encoding.cardinalities[j]
        )
        eligible = matched & (codes[:n] >= 0)
        inferences.append(SensitiveInference(name, credit, baseline, unanimous & matched, eligible))
    return AttributeDisclosure(tuple(qis), which, r, matches, tuple(inferences))


class AttributeDisclosureParams(MethodParams):
    """Attribute disclosure: an intruder matches each original record's quasi-identifiers exactly in the
    release and predicts its sensitive values as the most frequent among the matches."""

    attributes: Annotated[
        str | None,
        Field(
            min_length=1, description="Quasi-identifiers the intruder knows, comma-separated (default: all)."
        ),
    ] = None
    sensitive: Annotated[
        str | None,
        Field(min_length=1, description="Sensitive attributes, comma-separated (default: role sensitive)."),
    ] = None
    implicate: Annotated[
        str, Field(min_length=1, description="Synthetic releases: the implicate read (1, 2, ...) or all.")
    ] = "1"

    @field_validator("implicate")
    @classmethod
    def _implicate(cls, value: str) -> str:
        value = value.strip()
        if value != "all" and not (value.isdigit() and int(value) >= 1):
            raise ValueError("must be an implicate number (1, 2, ...) or all")
        return value if value == "all" else str(int(value))


def _report(figures: dict[str, Any]) -> list[str]:
    source = "" if figures["implicate"] is None else f" (implicate {figures['implicate']})"
    lines = [
        f"quasi-identifiers: {', '.join(figures['quasi_identifiers'])}; matched{source}: "
        f"{figures['matched']:,} of {figures['records']:,} original records "
        f"({100 * figures['matched_share']:.2f}%)"
    ]
    for name, f in figures["per_attribute"].items():
        lines.append(
            f"{name}: inferred correctly [bold]{100 * f['correct_share']:.2f}%[/] against a baseline of "
            f"{100 * f['baseline_share']:.2f}% (excess {100 * f['excess']:+.2f} points); unanimous "
            f"{100 * f['unanimous_share']:.2f}%, unanimous and right "
            f"{100 * f['unanimous_correct_share']:.2f}%"
        )
    return lines


@register_measure(
    "attribute-disclosure",
    "risk",
    AttributeDisclosureParams,
    summary=lambda result: result.summary(),
    help="Attribute disclosure: sensitive values inferred from exact quasi-identifier matches in a release.",
    report=_report,
    records=lambda result: result.records(),
    compares=True,
    headline="overall.correct_share",
)
def _run(original: Table, release: Table, params: AttributeDisclosureParams, context: Context) -> Any:
    return attribute_disclosure(
        original,
        release,
        attributes=params.attributes,
        sensitive=params.sensitive,
        implicate=params.implicate,
    )


__all__ = ["AttributeDisclosure", "AttributeDisclosureParams", "SensitiveInference", "attribute_disclosure"]
