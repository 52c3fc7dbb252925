"""Non-perturbative masking: sampling and global recoding (issue 13, item 5).

``sample``
    Simple random sampling without replacement, or stratified sampling with proportional allocation:
    every stratum (a combination of the ``strata`` attributes; a missing value is a category of its
    own) keeps ``n_s = max(1, round(fraction * N_s))`` of its ``N_s`` records (halves rounded up), drawn
    uniformly without replacement; without strata the whole file is one stratum. The kept records stay
    in file order. When the configuration names a sampling weights column, the release's weights are
    the original weights divided by the stratum's realized sampling fraction ``n_s / N_s`` (the
    fraction asked, up to the rounding), so that the weights of the sample still add up to the
    weighted total of every stratum. The fraction asked and the fractions realized go to the summary.

``recode``
    Global recoding of categories from a mapping file: a CSV file with the header
    ``attribute,from,to`` (one row per original value; values compared as the configuration spells
    them: integers without ``.0``) or a YAML file ``{attribute: {from: to, ...}, ...}``. Every value
    of a mapped attribute that the mapping lists becomes its ``to`` value; values the mapping does not
    list stay as they are (pass-through), and so do missing values. An attribute the mapping names
    that is not a column of the data is an error. A recoded attribute stays numeric when it was
    numeric and every ``to`` value is a number (whole numbers keep an integer column); otherwise it
    becomes text. Top and bottom coding of numbers is the method ``top-bottom-coding``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import numba
import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field

from sdckit.anonymize._recoding_transform import RECODE
from sdckit.anonymize.base import register_method
from sdckit.anonymize.release import Release
from sdckit.context import Context
from sdckit.errors import ConfigError, InputError
from sdckit.frequency import encode, extend_keys, initial_keys
from sdckit.params import Finite, MethodParams, Whole, names_list
from sdckit.table import Kind, Role, Schema, Table, value_strings

# Sampling -----------------------------------------------------------------------------------------


def _without_identifiers(table: Table, frame: pl.DataFrame) -> Table:
    identifiers = [a.name for a in table.schema.with_role(Role.IDENTIFIER)]
    schema = Schema(tuple(a for a in table.schema.attributes if a.role is not Role.IDENTIFIER))
    return Table(frame.drop(identifiers), schema, source=table.source, weights=table.weights)


@numba.njit(cache=True)
def _first_of_each_stratum(permutation: np.ndarray, keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Records visited in a uniformly random order: the first ``wanted[s]`` of every stratum ``s``
    are kept, a uniform sample without replacement of each stratum in one pass."""
    kept = np.zeros(len(keys), dtype=np.bool_)
    taken = np.zeros(len(wanted), dtype=np.int64)
    for i in permutation:
        stratum = keys[i]
        if taken[stratum] < wanted[stratum]:
            kept[i] = True
            taken[stratum] += 1
    return kept


def sample(table: Table, fraction: float, *, strata: list[str] | None = None, seed: int = 0) -> Release:
    """A simple random or stratified (proportional allocation) sample of ``table`` (see the module
    documentation): ``Release.table`` holds the kept records in file order, identifiers dropped, the
    weights column (if the table has one) divided by the realized fraction of each record's stratum;
    ``Release.search`` the figures and ``search["kept"]`` the mask of kept records."""
    if not 0 < fraction <= 1:
        raise ConfigError(f"fraction must be in (0, 1], got {fraction}")
    strata = list(strata or [])
    for name in strata:
        if name not in table.data.columns:
            raise ConfigError(
                f"strata: attribute '{name}' is not a column of the data "
                f"(columns: {', '.join(table.data.columns)})"
            )
    n = table.n_records
    if n == 0:
        raise InputError("the data has no records to sample")
    keys, sizes = initial_keys(n)
    if strata:
        encoding = encode(table.data, strata)
        for values, cardinality in zip(encoding.codes, encoding.cardinalities, strict=True):
            keys, sizes = extend_keys(keys, sizes, values, cardinality)
    keys = keys.astype(np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    wanted = np.maximum(1, np.floor(fraction * sizes + 0.5).astype(np.int64))
    wanted = np.minimum(wanted, sizes)
    rng = np.random.default_rng(seed)
    if len(sizes) == 1:
        kept = np.zeros(n, dtype=bool)
        kept[rng.permutation(n)[: wanted[0]]] = True
    else:
        kept = _first_of_each_stratum(rng.permutation(n), keys, wanted)
    frame = table.data
    realized = wanted / sizes
    if table.weights is not None:
        scaled = pl.Series(table.weights, table.sampling_weights() / realized[keys])
        frame = frame.with_columns(scaled)
    frame = frame.filter(pl.Series(kept))
    figures = {
        "fraction": float(fraction),
        "strata": strata,
        "n_strata": int(len(sizes)),
        "records": int(n),
        "records_kept": int(kept.sum()),
        "fraction_realized": float(kept.sum() / n),
        "smallest_stratum_fraction": float(realized.min()),
        "largest_stratum_fraction": float(realized.max()),
        "weights": table.weights,
    }
    return Release(
        table=_without_identifiers(table, frame),
        original=table,
        method="sample",
        parameters={"fraction": fraction, "strata": strata},
        quasi_identifiers=(),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        seed=seed,
        search={**figures, "kept": kept},
    )


class SampleParams(MethodParams):
    """Parameters of sampling (``sdckit anonymize sample``): simple random, or stratified with
    proportional allocation; the weights column, if any, is divided by the realized fraction."""

    fraction: Annotated[Finite, Field(gt=0, le=1, description="Sampling fraction, in (0, 1].")]
    strata: Annotated[
        list[str] | None,
        BeforeValidator(names_list),
        Field(description="Strata attributes, comma-separated (default: simple random sampling)."),
    ] = None
    seed: Annotated[Whole, Field(ge=0, description="Seed of the random draws.")] = 0


_SAMPLE_KEYS = (
    "fraction",
    "strata",
    "n_strata",
    "records",
    "records_kept",
    "fraction_realized",
    "smallest_stratum_fraction",
    "largest_stratum_fraction",
    "weights",
)


def _sample_report(figures: dict[str, Any]) -> list[str]:
    strata = f" in {figures['n_strata']:,} strata" if figures["strata"] else ""
    lines = [
        f"kept {figures['records_kept']:,} of {figures['records']:,} records{strata} "
        f"(fraction {figures['fraction_realized']:.4f}, asked {figures['fraction']:g})"
    ]
    if figures["weights"]:
        lines.append(f"weights '{figures['weights']}' divided by the realized fraction of each stratum")
    return lines


@register_method(
    "sample",
    SampleParams,
    summary=lambda release: {key: release.search[key] for key in _SAMPLE_KEYS},
    help="Simple random or stratified sampling; the fraction recorded and the weights rescaled.",
    report=_sample_report,
    not_reapplicable="which records it keeps is a random draw over the whole data, not a rule per record",
    examples={"minimal": {"fraction": 0.5}},
)
def _run_sample(table: Table, params: SampleParams, context: Context) -> Release:
    return sample(table, params.fraction, strata=params.strata, seed=params.seed)


# Global recoding ----------------------------------------------------------------------------------


def read_mapping(path: str | Path) -> dict[str, dict[str, str]]:
    """A recoding mapping file: CSV (header ``attribute,from,to``) or YAML (``.yaml``/``.yml``:
    ``{attribute: {from: to}}``), as ``{attribute: {from: to}}`` with every value as text."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the mapping file: {error}") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        return _yaml_mapping(path, text)
    rows = list(csv.reader(io.StringIO(text)))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows or [cell.strip().lower() for cell in rows[0]] != ["attribute", "from", "to"]:
        raise ConfigError(f"{path}: a mapping CSV starts with the header attribute,from,to")
    mapping: dict[str, dict[str, str]] = {}
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != 3:
            raise ConfigError(f"{path}, line {number}: expected 3 fields (attribute,from,to), got {len(row)}")
        attribute, source, target = (cell.strip() for cell in row)
        if not attribute:
            raise ConfigError(f"{path}, line {number}: the attribute is empty")
        _add(mapping, attribute, source, target, f"{path}, line {number}")
    if not mapping:
        raise ConfigError(f"{path}: the mapping lists no value")
    return mapping


def _yaml_mapping(path: Path, text: str) -> dict[str, dict[str, str]]:
    import yaml

    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(loaded, Mapping) or not loaded:
        raise ConfigError(f"{path}: a mapping YAML is {{attribute: {{from: to, ...}}, ...}}")
    mapping: dict[str, dict[str, str]] = {}
    for attribute, values in loaded.items():
        if not isinstance(values, Mapping) or not values:
            raise ConfigError(f"{path}: attribute '{attribute}' must map values to values")
        for source, target in values.items():
            if isinstance(source, Mapping | list) or isinstance(target, Mapping | list) or target is None:
                raise ConfigError(f"{path}: attribute '{attribute}': value {source!r} must map to one value")
            _add(mapping, str(attribute), _text(source), _text(target), str(path))
    return mapping


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _add(mapping: dict[str, dict[str, str]], attribute: str, source: str, target: str, where: str) -> None:
    values = mapping.setdefault(attribute, {})
    if source in values and values[source] != target:
        raise ConfigError(
            f"{where}: attribute '{attribute}' maps value '{source}' twice "
            f"('{values[source]}' and '{target}')"
        )
    values[source] = target


def recoded_column(column: pl.Series, mapping: Mapping[str, str]) -> pl.Series:
    """``column`` with every value listed in ``mapping`` (as text) replaced by its target; others and
    missing values unchanged. Numeric stays numeric when every target is a number."""
    texts = value_strings(column)
    replaced = texts.replace(dict(mapping))
    if column.dtype.is_numeric():
        targets = pl.Series(list(mapping.values()), dtype=pl.String)
        as_float = targets.cast(pl.Float64, strict=False)
        if as_float.null_count() == 0:
            whole = bool((as_float == as_float.round(0)).all())
            dtype = column.dtype if (column.dtype.is_integer() and whole) else pl.Float64
            if column.dtype.is_integer() and whole:
                return replaced.cast(pl.Float64).cast(dtype).alias(column.name)
            return replaced.cast(pl.Float64).alias(column.name)
    return replaced.alias(column.name)


def recode(table: Table, mapping: Mapping[str, Mapping[str, str]]) -> Release:
    """Global recoding: every attribute of ``mapping`` recoded with :func:`recoded_column`.
    ``Release.search`` counts the changed values per attribute and lists the listed values that do
    not occur in the data."""
    missing = [name for name in mapping if name not in table.data.columns]
    if missing:
        raise ConfigError(
            f"the mapping recodes attribute '{missing[0]}', which is not a column of the data "
            f"(columns: {', '.join(table.data.columns)})"
        )
    columns = [recoded_column(table.column(name), values) for name, values in mapping.items()]
    frame = table.data.with_columns(columns)
    changed, unused = {}, {}
    schema = table.schema
    for name, values in mapping.items():
        before = value_strings(table.column(name))
        after = value_strings(frame.get_column(name))
        changed[name] = int((before != after).fill_null(False).sum())
        present = set(before.drop_nulls().unique().to_list())
        unused[name] = sorted(value for value in values if value not in present)
        if name in schema and schema[name].kind is Kind.NUMERIC and not frame.schema[name].is_numeric():
            schema = schema.replace(name, kind=Kind.CATEGORICAL, range_weights=())
    release_table = _without_identifiers(
        Table(frame, schema, source=table.source, weights=table.weights), frame
    )
    n = table.n_records
    return Release(
        table=release_table,
        original=table,
        method="recode",
        parameters={"mapping": {name: dict(values) for name, values in mapping.items()}},
        quasi_identifiers=tuple(mapping),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        search={"changed": changed, "unused": unused},
    )


class RecodeParams(MethodParams):
    """Parameters of global recoding (``sdckit anonymize recode``)."""

    mapping: Annotated[
        Path, Field(description="Mapping file: CSV attribute,from,to or YAML {attribute: {from: to}}.")
    ]


def _recode_report(figures: dict[str, Any]) -> list[str]:
    lines = [f"{name}: {count:,} values recoded" for name, count in figures["changed"].items()]
    for name, values in figures["unused"].items():
        if values:
            shown = ", ".join(values[:5]) + (" ..." if len(values) > 5 else "")
            lines.append(f"{name}: {len(values)} mapped values do not occur in the data ({shown})")
    return lines


@register_method(
    "recode",
    RecodeParams,
    summary=lambda release: {"mapping": release.parameters["mapping"], **release.search},
    help="Global recoding of categories from a mapping file (attribute,from,to).",
    report=_recode_report,
    transformation=RECODE,
    examples={"minimal": {"mapping": "mapping.csv"}},
)
def _run_recode(table: Table, params: RecodeParams, context: Context) -> Release:
    return recode(table, read_mapping(params.mapping))
