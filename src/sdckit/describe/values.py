"""What a column's values look like: e-mail addresses, telephone numbers, IP addresses, URLs, social
security numbers, IBANs, payment card numbers (with their Luhn check digit) and dates of birth.

Every test is a polars expression (no Python loop over the records), run once per distinct value of
the column (a category is tested once, not once per record) and weighted by the number of records
holding it, so that a share is a share of the records with a value (missing values and the missing
tokens ``""`` and ``NA`` left out). ARX's HIPAA value matchers count distinct values instead;
a share of records is what the reason printed beside a proposal says ("97% of the values look like
e-mail addresses").
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import polars as pl

#: A column is said to hold a kind of value when at least this share of its values look like it.
THRESHOLD = 0.8
#: The earliest year of birth that is plausible for a living person, and the least spread of years
#: (in years) of a column of dates of birth: people of one population are born over decades.
BIRTH_YEAR_FROM = 1900
BIRTH_YEAR_SPREAD = 15


@dataclass(frozen=True)
class ValuePattern:
    """A kind of value: its regular expression (Rust syntax, whole value) and HIPAA category."""

    name: str
    what: str
    category: str
    regex: str


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_HEX = r"[0-9A-Fa-f]{1,4}"

PATTERNS: tuple[ValuePattern, ...] = (
    ValuePattern(
        "email",
        "e-mail addresses",
        "HIPAA 6: e-mail addresses",
        r"^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$",
    ),
    ValuePattern(
        "phone",
        "telephone numbers",
        "HIPAA 4-5: telephone and fax numbers",
        r"^(?:(?:\+|00)[1-9][0-9]{0,2}[ .-]?(?:\(?[0-9]{1,4}\)?[ .-]?){1,4}[0-9]{2,4}"
        r"|\(?[0-9]{3}\)?[ .-]?[0-9]{3}[ .-][0-9]{4}"
        r"|0[1-9][0-9]{1,4}[ /.-][0-9]{2,4}(?:[ .-]?[0-9]{2,4}){0,3})$",
    ),
    ValuePattern(
        "ssn",
        "social security numbers (ddd-dd-dddd)",
        "HIPAA 7: social security numbers",
        r"^[0-8][0-9]{2}-[0-9]{2}-[0-9]{4}$",
    ),
    ValuePattern("ipv4", "IPv4 addresses", "HIPAA 15: IP addresses", rf"^{_OCTET}(?:\.{_OCTET}){{3}}$"),
    ValuePattern(
        "ipv6",
        "IPv6 addresses",
        "HIPAA 15: IP addresses",
        rf"^(?:(?:{_HEX}:){{7}}{_HEX}|(?:{_HEX}(?::{_HEX}){{0,6}})?::(?:{_HEX}(?::{_HEX}){{0,6}})?)$",
    ),
    ValuePattern(
        "url", "web addresses (URLs)", "HIPAA 14: URLs", r"(?i)^(?:(?:https?|ftp)://|www\.)[^\s/?#]+\.[^\s]+$"
    ),
    ValuePattern(
        "iban",
        "IBANs (bank account numbers)",
        "HIPAA 10: account numbers",
        r"^[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?$",
    ),
    ValuePattern(
        "card",
        "payment card numbers (Luhn check digit valid)",
        "HIPAA 10: account numbers",
        r"^[0-9]{4}(?:[ -]?[0-9]{4}){2}[ -]?[0-9]{1,7}$",
    ),
    ValuePattern(
        "date",
        "dates of birth (full dates, plausible years of birth)",
        "HIPAA 3: dates of birth",
        r"^(?:[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[0-9]{1,2}[./][0-9]{1,2}[./][0-9]{4})$",
    ),
)
BY_NAME = {pattern.name: pattern for pattern in PATTERNS}


@dataclass(frozen=True)
class ValueMatch:
    """The kind of value most records of a column hold: ``share`` of its non-missing values."""

    pattern: ValuePattern
    share: float


def _luhn_valid(digits: pl.Expr) -> pl.Expr:
    """Whether a string of 13 to 19 digits passes the Luhn check (ISO/IEC 7812): from the right,
    every second digit doubled (less 9 above 9), the sum a multiple of 10. Left-padded with zeros
    to 19 digits, which adds nothing to the sum."""
    padded = digits.str.zfill(19)
    total = pl.lit(0, dtype=pl.Int32)
    for position in range(19):
        digit = padded.str.slice(position, 1).cast(pl.Int32, strict=False)
        if (18 - position) % 2 == 1:
            digit = pl.when(digit * 2 > 9).then(digit * 2 - 9).otherwise(digit * 2)
        total = total + digit
    length = digits.str.len_chars()
    return (length >= 13) & (length <= 19) & (total % 10 == 0)


def _birth_dates(text: pl.Expr, this_year: int) -> pl.Expr:
    """The year of a full date written yyyy-mm-dd or dd/mm/yyyy (dd.mm.yyyy), if it is a plausible
    year of birth; null otherwise."""
    year = pl.coalesce(
        text.str.extract(r"^([0-9]{4})-[0-9]{1,2}-[0-9]{1,2}$", 1),
        text.str.extract(r"^[0-9]{1,2}[./][0-9]{1,2}[./]([0-9]{4})$", 1),
    ).cast(pl.Int32, strict=False)
    return pl.when((year >= BIRTH_YEAR_FROM) & (year <= this_year)).then(year)


def _confirmed(frame: pl.DataFrame, weight: pl.Expr, name: str, this_year: int) -> int:
    """The records among those matching pattern ``name``'s expression that pass its further check:
    the Luhn check digit of a card number, a plausible year of birth of a date (and a spread of
    years of at least :data:`BIRTH_YEAR_SPREAD`, else none). Run only on the matching values."""
    text = pl.col("value")
    matching = frame.filter(text.str.contains(BY_NAME[name].regex))
    if name == "card":
        valid = _luhn_valid(text.str.replace_all(r"[ -]", ""))
        return int(matching.select((valid.cast(pl.Int64) * weight).sum()).item() or 0)
    years = matching.select(_birth_dates(text, this_year).alias("year"), weight.alias("weight"))
    years = years.filter(pl.col("year").is_not_null())
    if _spread(years["year"]) < BIRTH_YEAR_SPREAD:
        return 0
    return int(years["weight"].sum())


def value_matches(
    frame: pl.DataFrame,
    columns: list[str],
    this_year: int | None = None,
    counts: dict[str, pl.DataFrame] | None = None,
) -> dict[str, ValueMatch]:
    """For each text column of ``columns`` whose values are mostly of one kind (a share of at least
    :data:`THRESHOLD` of its non-missing values), that kind and its share. A column of dates (a
    Date or Datetime column, or text dates) is reported as dates of birth only when at least the
    threshold share of its years are plausible years of birth and they spread over at least
    :data:`BIRTH_YEAR_SPREAD` years. ``counts``: the ``value_counts(name="count")`` of text columns
    when already computed, their values in a column ``value``."""
    this_year = this_year or datetime.date.today().year
    found: dict[str, ValueMatch] = {}
    for name in columns:
        column = frame.get_column(name)
        if column.dtype in (pl.Date, pl.Datetime):
            years = column.drop_nulls().dt.year()
            plausible = years.filter((years >= BIRTH_YEAR_FROM) & (years <= this_year))
            share = len(plausible) / len(years) if len(years) else 0.0
            spread = _spread(plausible)
            if share >= THRESHOLD and spread >= BIRTH_YEAR_SPREAD:
                found[name] = ValueMatch(BY_NAME["date"], share)
            continue
        if column.dtype != pl.String:
            continue
        counted = (counts or {}).get(name)
        best = _best_match(column if counted is None else counted, this_year)
        if best is not None:
            found[name] = best
    return found


def _spread(years: pl.Series) -> int:
    """The number of years between the first and the last of ``years`` (0 when empty)."""
    if years.is_empty():
        return 0
    low, high = years.cast(pl.Int64).min(), years.cast(pl.Int64).max()
    return int(high) - int(low)  # type: ignore[arg-type]


def _best_match(column: pl.Series | pl.DataFrame, this_year: int) -> ValueMatch | None:
    """The kind of value of a text column (or of its value counts, a frame of the column's distinct
    values and their ``count``)."""
    # one hash pass: the distinct values and their records, then trimmed (two spellings that trim
    # alike stay two rows, their weights adding up)
    distinct = column.alias("value").value_counts(name="count") if isinstance(column, pl.Series) else column
    counted = distinct.select(pl.col("value").str.strip_chars(), pl.col("count"))
    frame = counted.filter(pl.col("value").is_not_null() & ~pl.col("value").is_in(["", "NA"]))
    weight = pl.col("count")
    total = int(frame["count"].sum())
    if total == 0:
        return None
    text = pl.col("value")
    shares = frame.select(
        [(text.str.contains(p.regex).cast(pl.Int64) * weight).sum().alias(p.name) for p in PATTERNS]
    ).row(0, named=True)
    # the patterns in order of their share, first listed first among equals; a card number or date
    # is confirmed (Luhn, year of birth) on its matching values only
    for name, hits in sorted(shares.items(), key=lambda item: -item[1]):
        if hits < THRESHOLD * total:
            return None
        if name in ("card", "date"):
            hits = _confirmed(frame, weight, name, this_year)
        if hits >= THRESHOLD * total:
            return ValueMatch(BY_NAME[name], hits / total)
    return None
