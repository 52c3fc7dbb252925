"""The proposal: a role and a reason for every column, from its name, its values and how well it
singles out records, and the starting configuration written from it.

The rules, in order (the first that applies gives the role):

1. a name saying household (``household_id``, ``hh_id``): ``household``;
2. a name of a HIPAA Safe Harbor category (:data:`sdckit.describe.names.IDENTIFIER_NAMES`):
   ``identifier``;
3. values mostly of an identifying kind (:func:`sdckit.describe.values.value_matches`: e-mail,
   telephone, SSN, IP, URL, IBAN, payment card, date of birth): ``identifier``;
4. the id of a group (``school_id``): ``identifier`` when almost unique, else ``quasi-identifier``;
5. a sampling weight by name: ``insensitive``, with a reminder of ``data.weights``;
6. a name of a special category or of what an adversary wants to learn (health, income, beliefs,
   sexual life, justice): ``sensitive``;
7. almost unique (more than 90% of its values distinct) text, or whole numbers all distinct:
   ``identifier`` (a code, a record number);
8. a demographic or geographic name (age, sex, race, marital status, education, occupation, ZIP
   code, country...): ``quasi-identifier``;
9. otherwise ``insensitive``; when no name suggests a quasi-identifier at all, the three columns that
   separate records best (α-separation, :mod:`sdckit.describe.attributes`) among those that are not
   near keys are proposed as quasi-identifiers, saying so.

Every column that is not an identifier, sensitive or a weight is ranked by its α-separation and
α-distinction, and the reason of each candidate gives its rank, so that the person reading the
proposal sees which insensitive columns would single out records if an adversary knew them. The
records in minimal sample uniques (SUDA2) are counted over the proposed quasi-identifiers.
Nothing is decided silently: the configuration says why on the line above each attribute.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from sdckit.describe import names as named
from sdckit.describe.attributes import AttributeSet, MinimalUniques, attribute_sets, minimal_uniques
from sdckit.describe.values import value_matches

#: A column with more than this share of distinct values is almost unique.
ALMOST_UNIQUE = 0.9
#: Quasi-identifiers proposed by their α-separation when no name suggests any.
BY_SEPARATION = 3
_NUMBER = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
_LEADING_ZERO = r"^[+-]?0[0-9]"
_ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ColumnProposal:
    """One column: its ``kind`` (numeric, categorical or date), ``distinct`` values, ``missing``
    values, the proposed ``role`` and ``why``; ``rank`` among the quasi-identifier candidates (1 =
    separates records best) with its ``distinction`` and ``separation``; ``msu_records``, the
    records with a minimal sample unique holding it (proposed quasi-identifiers only)."""

    name: str
    kind: str
    distinct: int
    missing: int
    role: str
    why: str
    leading_zeros: bool = False
    weights: bool = False
    rank: int | None = None
    distinction: float | None = None
    separation: float | None = None
    msu_records: int | None = None

    def figures(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if value is not None}


@dataclass(frozen=True)
class Description:
    """The proposal for a table: one :class:`ColumnProposal` per column, the attribute sets measured
    (size -> strongest first) and the minimal sample uniques of the proposed quasi-identifiers."""

    source: str
    records: int
    analysed: int
    columns: tuple[ColumnProposal, ...]
    sets: dict[int, list[AttributeSet]] = field(default_factory=dict)
    uniques: MinimalUniques | None = None

    def with_role(self, role: str) -> list[ColumnProposal]:
        return [column for column in self.columns if column.role == role]

    def figures(self) -> dict[str, Any]:
        """Everything as plain values (the ``--summary`` JSON)."""
        return {
            "source": self.source,
            "records": self.records,
            "analysed_records": self.analysed,
            "columns": [column.figures() for column in self.columns],
            "attribute_sets": {
                str(size): [
                    {
                        "attributes": list(s.attributes),
                        "alpha_distinction": s.distinction,
                        "alpha_separation": s.separation,
                        "classes": s.classes,
                        "sample_uniques": s.uniques,
                    }
                    for s in sets
                ]
                for size, sets in self.sets.items()
            },
            "minimal_sample_uniques": None
            if self.uniques is None
            else {
                "keys": list(self.uniques.keys),
                "max_size": self.uniques.max_size,
                "records": self.uniques.records,
                "records_by_attribute": self.uniques.by_attribute,
                "msus_by_size": {str(k): v for k, v in self.uniques.by_size.items()},
            },
        }


def _kinds(frame: pl.DataFrame, counts: dict[str, pl.DataFrame]) -> dict[str, tuple[str, bool, int, int]]:
    """Per column: kind, leading zeros, distinct and missing values (the tokens ``""`` and ``NA`` of
    a text column counted missing, as a configuration reads them). A text column is read from its
    ``counts`` (its distinct values and their records): each value tested once."""
    kinds = {}
    for name in frame.columns:
        column, dtype = frame.get_column(name), frame.schema[name]
        leading = False
        if dtype == pl.String:
            values = counts[name].get_column("value")
            cleaned = values.str.strip_chars()
            absent = values.is_null() | cleaned.is_in(["", "NA"])
            missing = int(counts[name].get_column("count").filter(absent).sum())
            present_values = cleaned.filter(~absent).unique()
            distinct = len(present_values)
            numbers = bool(distinct) and bool(present_values.str.contains(_NUMBER).all())
            leading = numbers and bool(present_values.str.contains(_LEADING_ZERO).any())
            if numbers and not leading:
                kind = "numeric"
            elif distinct and bool(present_values.str.contains(_ISO_DATE).all()):
                kind = "date"
            else:
                kind = "categorical"
        else:
            missing = column.null_count()
            distinct = column.drop_nulls().n_unique()
            if dtype.is_numeric():
                kind = "numeric"
            elif dtype in (pl.Date, pl.Datetime):
                kind = "date"
            else:
                kind = "categorical"
        kinds[name] = (kind, leading, distinct, missing)
    return kinds


def _whole_numbers(column: pl.Series) -> bool:
    """Whether every value of a numeric column (or of a text column of numbers) is a whole number."""
    values = column.drop_nulls()
    if values.dtype == pl.String:
        return bool(values.str.strip_chars().str.contains(r"^[+-]?[0-9]+$").all())
    if values.dtype.is_integer():
        return True
    return bool(values.dtype.is_float() and (values == values.floor()).all())


def _first_role(
    name: str, kind: str, distinct: int, present: int, value_match: Any, whole: bool = False
) -> tuple[str, str, bool]:
    """Rules 1-8 of the module docstring: role, reason and whether it is a sampling weight."""
    ratio = distinct / present if present else 0.0
    distinct_text = f"{100 * ratio:.0f}% of the values distinct"
    if (rule := named.match(name, (named.HOUSEHOLD_NAME,))) is not None:
        return "household", f"household: the name says {rule.what}", False
    if (rule := named.match(name, named.IDENTIFIER_NAMES)) is not None:
        return "identifier", f"direct identifier: the name says {rule.what} ({rule.category})", False
    if value_match is not None:
        pattern = value_match.pattern
        share = f"{100 * value_match.share:.0f}%"
        return (
            "identifier",
            f"direct identifier: {share} of the values look like {pattern.what} ({pattern.category})",
            False,
        )
    words = named.words(name)
    if named.GROUP_ID.search(words) and " " in words:
        if ratio > ALMOST_UNIQUE:
            return "identifier", f"direct identifier: a code or number, {distinct_text}", False
        return "quasi-identifier", f"quasi-identifier: the code of a group, {distinct_text}", False
    if kind == "numeric" and named.match(name, (named.WEIGHT_NAME,)) is not None:
        return "insensitive", f"insensitive: a sampling weight? if so, set data.weights: {name}", True
    if (rule := named.match(name, named.SENSITIVE_NAMES)) is not None:
        return "sensitive", f"sensitive: the name says {rule.what}", False
    if present >= 10 and kind == "categorical" and ratio > ALMOST_UNIQUE:
        return "identifier", f"direct identifier candidate: almost unique text, {distinct_text}", False
    if present >= 10 and kind == "numeric" and distinct == present and whole:
        return "identifier", "direct identifier candidate: every value distinct (a record number?)", False
    if (rule := named.match(name, named.QUASI_IDENTIFIER_NAMES)) is not None:
        return "quasi-identifier", f"quasi-identifier: the name says {rule.what}", False
    if distinct <= 1:
        return "insensitive", "insensitive: a single value", False
    return "insensitive", "insensitive: nothing in its name or values says otherwise", False


def describe(
    frame: pl.DataFrame,
    *,
    source: str = "<data frame>",
    sample: int | None = None,
    max_combination: int = 3,
    seed: int = 0,
) -> Description:
    """Propose a role for every column of ``frame`` (see the module docstring). ``sample``: analyse
    that many records drawn at random (``seed``) instead of all; ``max_combination``: the largest
    attribute sets measured and the largest minimal sample uniques searched."""
    from sdckit.errors import ConfigError
    from sdckit.params import spell

    if sample is not None and sample < 1:
        raise ConfigError(f"{spell('sample')} must be a whole number of at least 1, got {sample}")
    if not 1 <= max_combination <= 5:
        raise ConfigError(f"{spell('max_combination')} must be between 1 and 5, got {max_combination}")
    records = frame.height
    if sample is not None and sample < records:
        frame = frame.sample(n=sample, seed=seed)
    # one hash pass per text column: its distinct values and their records, for the kinds and patterns
    counts = {
        name: frame.get_column(name).alias("value").value_counts(name="count")
        for name in frame.columns
        if frame.schema[name] == pl.String
    }
    kinds = _kinds(frame, counts)
    matches = value_matches(frame, list(frame.columns), counts=counts)
    columns = []
    for name in frame.columns:
        kind, leading, distinct, missing = kinds[name]
        present = frame.height - missing
        whole = kind == "numeric" and distinct == present and _whole_numbers(frame.get_column(name))
        role, why, weights = _first_role(name, kind, distinct, present, matches.get(name), whole)
        columns.append(ColumnProposal(name, kind, distinct, missing, role, why, leading, weights))
    return _ranked(frame, columns, source, records, max_combination)


def _ranked(
    frame: pl.DataFrame, columns: list[ColumnProposal], source: str, records: int, max_combination: int
) -> Description:
    """Rank the candidates (rule 9 and the figures in every candidate's reason)."""
    candidates = [
        c.name
        for c in columns
        if c.role in ("quasi-identifier", "insensitive") and not c.weights and c.distinct > 1
    ]
    from sdckit.frequency import encode

    named_keys = [c.name for c in columns if c.role == "quasi-identifier" and c.name not in candidates]
    encoding = encode(frame, candidates + named_keys)
    singles = {
        s.attributes[0]: s
        for s in attribute_sets(frame, candidates, max_size=1, encoding=encoding).get(1, [])
    }
    ranking = sorted(singles.values(), key=lambda s: (-s.separation, -s.distinction, s.attributes))
    rank = {s.attributes[0]: i + 1 for i, s in enumerate(ranking)}
    if not any(c.role == "quasi-identifier" for c in columns):
        chosen = [s.attributes[0] for s in ranking if s.distinction <= ALMOST_UNIQUE][:BY_SEPARATION]
        columns = [
            replace(
                c,
                role="quasi-identifier",
                why="quasi-identifier candidate: no name says what an adversary "
                "knows; proposed for separating records best",
            )
            if c.name in chosen
            else c
            for c in columns
        ]
    keys = [c.name for c in columns if c.role == "quasi-identifier"]
    pool = keys if len(keys) >= 2 else [s.attributes[0] for s in ranking]
    sets = attribute_sets(frame, pool, max_size=max_combination, encoding=encoding) if pool else {}
    uniques = minimal_uniques(frame, keys, max_combination, encoding=encoding) if keys else None
    ranked = []
    for c in columns:
        if c.name not in singles:
            ranked.append(c)
            continue
        s = singles[c.name]
        figures = (
            f"rank {rank[c.name]} of {len(ranking)}: α-distinction {s.distinction:.4g}, "
            f"α-separation {s.separation:.4g}"
        )
        msu = uniques.by_attribute.get(c.name) if uniques is not None else None
        if msu is not None:
            figures += f", in the minimal sample uniques of {msu:,} records"
        why = f"{c.why}; {figures}"
        if c.role == "insensitive" and not c.why.startswith("insensitive: a single"):
            why += "; make it a quasi-identifier if an adversary can know it"
        ranked.append(
            replace(
                c,
                why=why,
                rank=rank[c.name],
                distinction=s.distinction,
                separation=s.separation,
                msu_records=msu,
            )
        )
    return Description(source, records, frame.height, tuple(ranked), sets, uniques)


def _key(name: str) -> str:
    return (
        name
        if _PLAIN_KEY.match(name) and name.lower() not in ("yes", "no", "true", "false", "null", "on", "off")
        else json.dumps(name)
    )


def config_text(description: Description, command: str = "sdckit describe") -> str:
    """The starting configuration: every column with its proposed role (and kind where reading
    needs it), the reason on the line above. YAML that :func:`sdckit.config.load_config` reads."""
    lines = [
        f"# Proposed by `{command}` from {description.source} ({description.records:,} records"
        + (
            f", {description.analysed:,} of them analysed"
            if description.analysed < description.records
            else ""
        )
        + ").",
        "# A proposal, not a decision: check every role before measuring or releasing anything.",
        "# identifier: dropped by every measure and release; quasi-identifier: what an adversary",
        "# can know and link on; sensitive: what an adversary wants to learn.",
        "attributes:",
    ]
    for column in description.columns:
        settings = [f"role: {column.role}"]
        if column.role in ("quasi-identifier", "sensitive") or column.leading_zeros:
            settings.append(f"kind: {column.kind}")
        why = " ".join(column.why.split())
        if column.leading_zeros:
            why += " (codes with leading zeros: read as text)"
        lines.append(f"  # {why}")
        lines.append(f"  {_key(column.name)}: {{{', '.join(settings)}}}")
    return "\n".join(lines) + "\n"
