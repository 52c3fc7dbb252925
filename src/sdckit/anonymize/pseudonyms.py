"""Pseudonyms for direct identifiers and new household ids (issue 13, item 6).

Releases drop the attributes with role identifier. Data stewards who must link later deliveries keep
them pseudonymized instead:

``mode="hmac"``
    Every identifier value (spelled as the configuration spells it: integers without ``.0``) becomes
    ``HMAC-SHA-256(key, value)`` in lower-case hexadecimal (64 characters). The same key gives the same
    pseudonym for the same value in every file (and every identifier column), so deliveries link; without
    the key the pseudonyms cannot be computed from candidate values. The key is read from a file
    (``key_file``: its bytes, a trailing line break removed) or from an environment variable
    (``key_env``: its UTF-8 bytes); it must have at least 16 bytes (32 random bytes recommended,
    e.g. ``openssl rand -hex 32``). The key is never written to the release, the summary or the
    recipe: the recipe records the file's path or the variable's name, and a replay reads the key again.
``mode="random"``
    The distinct values of every identifier column are replaced by the numbers ``1..D`` in a random
    order (seeded): records of the same person still match within the file, and nothing links to other
    files.

Household ids (the attribute with role household) are renumbered as sdcMicro's ``createNewID`` does:
consecutive ids ``1..H``, in a random order (``households="random"``, the default) or in the sorted
order of the original ids (``"sorted"``: keeps whatever that order reveals, e.g. ids numbered along
streets), so that they still group the members of a household; ``"keep"`` leaves them as they are.

HMAC is computed once per distinct value (Python's ``hmac``), not once per record.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import Field, model_validator

from sdckit.anonymize.base import register_method
from sdckit.anonymize.release import Figures, Release
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.frequency import encode
from sdckit.params import MethodParams, Whole, spell
from sdckit.table import Role, Table, value_strings

MIN_KEY_BYTES = 16


def read_key(key_file: str | Path | None = None, key_env: str | None = None) -> bytes:
    """The HMAC key from a file (its bytes, one trailing line break removed) or an environment
    variable (its UTF-8 bytes); a ConfigError naming the file or variable (never the key) otherwise."""
    if (key_file is None) == (key_env is None):
        raise ConfigError(
            "pseudonymize with HMAC needs a key: "
            f"give {spell('key_file')} or {spell('key_env')} (one of them)"
        )
    if key_file is not None:
        path = Path(key_file)
        try:
            key = path.read_bytes()
        except OSError as error:
            raise ConfigError(f"{path}: cannot read the key file: {error.strerror or error}") from None
        key = key.removesuffix(b"\n").removesuffix(b"\r")
        where = f"key file {path}"
    else:
        value = os.environ.get(str(key_env))
        if value is None:
            raise ConfigError(f"environment variable {key_env} is not set (it must hold the HMAC key)")
        key = value.encode("utf-8")
        where = f"environment variable {key_env}"
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"the key in {where} has {len(key)} bytes; an HMAC key needs at least {MIN_KEY_BYTES} "
            "(32 random bytes recommended: openssl rand -hex 32)"
        )
    return key


def hmac_pseudonyms(column: pl.Series, key: bytes) -> pl.Series:
    """HMAC-SHA-256 of every value of ``column`` (as text), hexadecimal; missing values stay missing."""
    texts = value_strings(column)
    distinct = texts.drop_nulls().unique()
    digests = [hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest() for value in distinct]
    lookup = dict(zip(distinct.to_list(), digests, strict=True))
    return texts.replace_strict(lookup, default=None, return_dtype=pl.String).alias(column.name)


def random_ids(column: pl.Series, rng: np.random.Generator) -> pl.Series:
    """The distinct values of ``column`` replaced by ``1..D`` in a random order; missing stay missing."""
    codes = encode(column.to_frame(), [column.name]).codes[0].astype(np.int64)
    distinct = int(codes.max()) + 1 if len(codes) else 0
    permutation = rng.permutation(distinct) + 1
    ids = np.where(codes >= 0, permutation[np.maximum(codes, 0)], 0)
    return pl.Series(column.name, ids, dtype=pl.Int64).set(pl.Series(codes < 0), None)


def household_ids(column: pl.Series, order: str, rng: np.random.Generator) -> pl.Series:
    """New household ids ``1..H`` (sdcMicro's createNewID): random or sorted order of the old ids."""
    codes = encode(column.to_frame(), [column.name]).codes[0].astype(np.int64)
    if (codes < 0).any():
        raise ConfigError(f"household id '{column.name}' is missing in {int((codes < 0).sum()):,} records")
    distinct = int(codes.max()) + 1 if len(codes) else 0
    new = rng.permutation(distinct) + 1 if order == "random" else np.arange(1, distinct + 1)
    return pl.Series(column.name, new[codes], dtype=pl.Int64)


class PseudonymizeParams(MethodParams):
    """Parameters of pseudonymization (``sdckit anonymize pseudonymize``): identifiers (role identifier)
    are kept, pseudonymized; household ids (role household) renumbered."""

    mode: Annotated[
        Literal["hmac", "random"],
        Field(description="hmac: keyed hash HMAC-SHA-256 (links files); random: new random ids."),
    ] = "hmac"
    key_file: Annotated[Path | None, Field(description="File holding the HMAC key (never written out).")] = (
        None
    )
    key_env: Annotated[
        str | None, Field(min_length=1, description="Environment variable holding the HMAC key.")
    ] = None
    households: Annotated[
        Literal["random", "sorted", "keep"],
        Field(description="New household ids 1..H: random order, sorted order of the old ids, or keep."),
    ] = "random"
    seed: Annotated[Whole, Field(ge=0, description="Seed of random ids and household numbers.")] = 0

    @model_validator(mode="after")
    def _key(self) -> PseudonymizeParams:
        if self.key_file is not None and self.key_env is not None:
            raise ValueError("takes {key_file} or {key_env}, not both")
        if self.mode == "random" and (self.key_file is not None or self.key_env is not None):
            raise ValueError("uses no key with mode random: leave out {key_file} and {key_env}")
        return self


@dataclass(frozen=True)
class PseudonymizeFigures(Figures):
    """What pseudonymization replaced: the identifier columns and, per column, its distinct values
    pseudonymized; the household attribute (None without one) and the households renumbered (0 when
    kept)."""

    identifiers: list[str]
    pseudonymized_values: dict[str, int]
    household_attribute: str | None
    renumbered_households: int


def _summary(release: Release) -> dict[str, Any]:
    params, figures = release.params, release.figures_as(PseudonymizeFigures)
    return {
        "mode": params.mode,
        "identifiers": figures.identifiers,
        "pseudonymized_values": figures.pseudonymized_values,
        "households": params.households,
        "household_attribute": figures.household_attribute,
        "renumbered_households": figures.renumbered_households,
    }


def _report(figures: dict[str, Any]) -> list[str]:
    lines = []
    for name, count in figures["pseudonymized_values"].items():
        how = "HMAC-SHA-256 pseudonyms" if figures["mode"] == "hmac" else "random ids"
        lines.append(f"{name}: {count:,} distinct values replaced by {how}")
    if figures["renumbered_households"]:
        lines.append(
            f"{figures['household_attribute']}: {figures['renumbered_households']:,} households renumbered "
            f"1..H ({figures['households']} order)"
        )
    return lines


@register_method(
    "pseudonymize",
    PseudonymizeParams,
    summary=_summary,
    help="Keep direct identifiers as keyed-hash (HMAC-SHA-256) or random pseudonyms; renumber households.",
    report=_report,
    not_reapplicable=(
        "its random ids and household numbers are drawn over the whole data (run it again with the "
        "same key instead)"
    ),
    examples={
        "minimal": {"key_env": "SDCKIT_KEY"},
        "replay on households": {"seed": 4, "key_file": "key.txt"},
    },
)
def _run_pseudonymize(table: Table, params: PseudonymizeParams, context: Context) -> Release:
    """Pseudonymization (see :func:`pseudonymize`), with the key read from ``key_file`` or
    ``key_env`` when there are identifiers to hash."""
    needs_key = params.mode == "hmac" and any(
        a.name in table.data.columns for a in table.schema.with_role(Role.IDENTIFIER)
    )
    key = read_key(params.key_file, params.key_env) if needs_key else None
    return _pseudonymized(table, params, key)


def _pseudonymized(table: Table, params: PseudonymizeParams, key: bytes | None) -> Release:
    """The release of pseudonymization with ``key`` (the HMAC key, read by the caller: it is never a
    parameter, so that it is never written to a recipe)."""
    mode, households = params.mode, params.households
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER) if a.name in table.data.columns]
    household = [a.name for a in table.schema.with_role(Role.HOUSEHOLD)]
    renumbered = household if households != "keep" else []
    if not identifiers and not renumbered:
        raise ConfigError(
            "nothing to pseudonymize: no attribute has role identifier"
            + (" and households is keep" if household else " or household")
            + " in the configuration"
        )
    if mode == "hmac" and identifiers and key is None:
        raise ConfigError(
            f"pseudonymize with HMAC needs a key: give {spell('key_file')} or {spell('key_env')}"
        )
    rng = np.random.default_rng(params.seed)
    columns = []
    for name in identifiers:
        column = table.column(name)
        columns.append(
            hmac_pseudonyms(column, key) if key is not None and mode == "hmac" else random_ids(column, rng)
        )
    for name in renumbered:
        columns.append(household_ids(table.column(name), households, rng))
    frame = table.data.with_columns(columns)
    n = table.n_records
    figures = PseudonymizeFigures(
        identifiers=identifiers,
        pseudonymized_values={name: int(table.column(name).drop_nulls().n_unique()) for name in identifiers},
        household_attribute=household[0] if household else None,
        renumbered_households=(int(table.column(renumbered[0]).n_unique()) if renumbered else 0),
    )
    return Release(
        table=Table(frame, table.schema, source=table.source, weights=table.weights),
        original=table,
        method="pseudonymize",
        quasi_identifiers=(),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        seed=params.seed,
        params=params,
        figures=figures,
    )


def pseudonymize(
    table: Table,
    *,
    mode: str = "hmac",
    key: bytes | None = None,
    households: str = "random",
    seed: int = 0,
) -> Release:
    """Pseudonymize the identifiers of ``table`` and renumber its household ids (see the module
    documentation). ``key`` is needed for ``mode="hmac"``. The release keeps every column, identifiers
    included, in the original order; its figures are :class:`PseudonymizeFigures`.

    The key, a Python value, is not a parameter (the command line and recipes name a key file or
    variable instead, :class:`PseudonymizeParams`), so this builds the parameters and calls the
    method's implementation with it rather than going through :func:`run_method`."""
    values = {"mode": mode, "households": households, "seed": seed}
    return _pseudonymized(table, PseudonymizeParams.parse(values, method="pseudonymize"), key)
