"""Non-perturbative masking: global recoding of categories (issue 13, item 5).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import polars as pl
from pydantic import Field

from sdckit.anonymize._recoding_transform import RECODE
from sdckit.anonymize.base import register_method, run_method
from sdckit.anonymize.release import Figures, Release, without_identifiers
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import MethodParams
from sdckit.table import Kind, Table, value_strings

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


class RecodeParams(MethodParams):
    """Parameters of global recoding (``sdckit anonymize recode``)."""

    # A file on the command line and in recipes; the mapping itself from Python (recode()).
    mapping: Annotated[
        Path | dict[str, dict[str, str]],
        Field(description="Mapping file: CSV attribute,from,to or YAML {attribute: {from: to}}."),
    ]


@dataclass(frozen=True)
class RecodeFigures(Figures):
    """What global recoding did: the mapping applied (read from the file: ``{attribute: {from:
    to}}``, as text), the values changed per attribute, and per attribute the listed values that do
    not occur in the data."""

    mapping: dict[str, dict[str, str]] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    unused: dict[str, list[str]] = field(default_factory=dict)


def recode(table: Table, mapping: Mapping[str, Mapping[str, str]]) -> Release:
    """Global recoding: every attribute of ``mapping`` recoded with :func:`recoded_column`. The
    release's figures (:class:`RecodeFigures`) count the changed values per attribute and list the
    listed values that do not occur in the data."""
    values = {name: dict(targets) for name, targets in mapping.items()}
    return run_method("recode", table, {"mapping": values})


def _recode_summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(RecodeFigures)
    return {"mapping": figures.mapping, "changed": figures.changed, "unused": figures.unused}


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
    summary=_recode_summary,
    help="Global recoding of categories from a mapping file (attribute,from,to).",
    report=_recode_report,
    transformation=RECODE,
    examples={"minimal": {"mapping": "mapping.csv"}},
)
def _run_recode(table: Table, params: RecodeParams, context: Context) -> Release:
    mapping = read_mapping(params.mapping) if isinstance(params.mapping, Path) else params.mapping
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
    release_table = without_identifiers(
        Table(frame, schema, source=table.source, weights=table.weights), frame
    )
    n = table.n_records
    return Release(
        table=release_table,
        original=table,
        method="recode",
        quasi_identifiers=tuple(mapping),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        params=params,
        figures=RecodeFigures(
            mapping={name: dict(values) for name, values in mapping.items()}, changed=changed, unused=unused
        ),
    )
