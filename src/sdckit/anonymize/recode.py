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

    With ``attribute`` and ``breaks`` instead of a mapping: sdcMicro's ``globalRecode`` of a numeric
    attribute into intervals (cut points, or a number of intervals by ``cut_method`` equidistant, logEqui
    or equalAmount; labels as R's ``cut`` writes them, or ``labels``, or the interval numbers with
    ``codes``); with ``attribute``, ``before`` and ``after``: sdcMicro's ``groupAndRename`` of
    categories (``add_missing``: missing values too). See
    :mod:`sdckit.anonymize._recode_intervals` for the rules and the deviations from sdcMicro.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import polars as pl
from pydantic import BeforeValidator, Field, model_validator

from sdckit.anonymize._recode_intervals import (
    METHODS,
    changed_by_intervals,
    grouped_column,
    intervals,
    recoded_intervals,
)
from sdckit.anonymize._recoding_transform import RECODE
from sdckit.anonymize.base import register_method, run_method
from sdckit.anonymize.release import Figures, Release, without_identifiers
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.params import MethodParams, names_list
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


def _breaks(value: Any) -> Any:
    """``"1,9,19"`` -> [1.0, 9.0, 19.0] (``-inf`` and ``inf`` allowed), ``"6"`` -> 6: the command line's
    breaks; a list or a number from a recipe or Python passes as it is."""
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if len(parts) == 1 and parts[0].lstrip("+").isdigit():
            return int(parts[0])
        try:
            return [float(part) for part in parts]
        except ValueError:
            raise ValueError(
                f"breaks are numbers separated by commas, or one whole number, got {value!r}"
            ) from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Names = Annotated[list[str] | None, BeforeValidator(names_list)]


class RecodeParams(MethodParams):
    """Parameters of global recoding (``sdckit anonymize recode``): a mapping, or one attribute cut into
    intervals (``breaks``), or one attribute's categories grouped (``before`` / ``after``)."""

    # A file on the command line and in recipes; the mapping itself from Python (recode()).
    mapping: Annotated[
        Path | dict[str, dict[str, str]] | None,
        Field(description="Mapping file: CSV attribute,from,to or YAML {attribute: {from: to}}."),
    ] = None
    attribute: Annotated[
        str | None, Field(min_length=1, description="The attribute to cut into intervals or to group.")
    ] = None
    breaks: Annotated[
        list[float] | int | None,
        BeforeValidator(_breaks),
        Field(description="A number of intervals, or cut points 1,9,19,... (inf for an open end)."),
    ] = None
    # sdcMicro's ``method``; "method" names the step's method in a recipe.
    cut_method: Annotated[
        Literal["equidistant", "logEqui", "equalAmount"] | None,
        Field(description="How a number of intervals is cut (default equidistant)."),
    ] = None
    labels: Annotated[Names, Field(description="The intervals' labels, in order (default: R's (a,b]).")] = (
        None
    )
    codes: Annotated[bool, Field(description="Write interval numbers 1, 2, ... instead of labels.")] = False
    before: Annotated[Names, Field(description="The categories to group into --after.")] = None
    after: Annotated[str | None, Field(description="The category the --before categories become.")] = None
    add_missing: Annotated[bool, Field(description="Missing values become --after too.")] = False

    @model_validator(mode="after")
    def _one_kind_of_recoding(self) -> RecodeParams:
        chosen = [name for name in ("mapping", "breaks", "before") if getattr(self, name) is not None]
        if len(chosen) != 1:
            raise ValueError(
                "needs one of {mapping} (a mapping file), {breaks} (intervals of {attribute}) or "
                "{before} with {after} (a group of {attribute}'s categories)"
                + (f"; got {' and '.join('{' + name + '}' for name in chosen)}" if chosen else "")
            )
        if self.mapping is not None and self.attribute is not None:
            raise ValueError(
                "takes {attribute} only with {breaks} or {before} (a mapping names its attributes)"
            )
        if self.mapping is None and self.attribute is None:
            raise ValueError(f"needs {{attribute}} with {{{chosen[0]}}}")
        interval_options = [name for name in ("cut_method", "labels") if getattr(self, name) is not None]
        interval_options += ["codes"] if self.codes else []
        if self.breaks is None and interval_options:
            raise ValueError(f"takes {{{interval_options[0]}}} only with {{breaks}}")
        group_options = [name for name in ("after",) if getattr(self, name) is not None]
        group_options += ["add_missing"] if self.add_missing else []
        if self.before is None and group_options:
            raise ValueError(f"takes {{{group_options[0]}}} only with {{before}}")
        if self.before is not None and self.after is None:
            raise ValueError("needs {after}, the category the {before} categories become")
        if self.before is not None and not self.before:
            raise ValueError("needs at least one category in {before}")
        if isinstance(self.breaks, int):
            if self.breaks < 1:
                raise ValueError(f"needs {{breaks}} at least 1 (a number of intervals), got {self.breaks}")
        elif self.breaks is not None:
            if len(self.breaks) < 2:
                raise ValueError("needs at least two cut points in {breaks}, or one number of intervals")
            if self.cut_method is not None:
                raise ValueError(
                    "takes {cut_method} only with a number of intervals in {breaks}, not cut points"
                )
        if self.labels is not None and self.codes:
            raise ValueError("takes {labels} or {codes}, not both")
        return self


@dataclass(frozen=True)
class RecodeFigures(Figures):
    """What global recoding did: the mapping applied (read from the file: ``{attribute: {from:
    to}}``, as text), the values changed per attribute, and per attribute the listed values that do
    not occur in the data."""

    mapping: dict[str, dict[str, str]] = field(default_factory=dict)
    changed: dict[str, int] = field(default_factory=dict)
    unused: dict[str, list[str]] = field(default_factory=dict)
    #: Per attribute cut into intervals: {"breaks": [...], "lowest_closed": bool, "labels": [...],
    #: "codes": bool, "counts": records per interval}.
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Per attribute grouped with add_missing: the category missing values became.
    missing_to: dict[str, str] = field(default_factory=dict)


def recode(table: Table, mapping: Mapping[str, Mapping[str, str]]) -> Release:
    """Global recoding: every attribute of ``mapping`` recoded with :func:`recoded_column`. The
    release's figures (:class:`RecodeFigures`) count the changed values per attribute and list the
    listed values that do not occur in the data."""
    values = {name: dict(targets) for name, targets in mapping.items()}
    return run_method("recode", table, {"mapping": values})


def _recode_summary(release: Release) -> dict[str, Any]:
    figures = release.figures_as(RecodeFigures)
    summary = {"mapping": figures.mapping, "changed": figures.changed, "unused": figures.unused}
    if figures.intervals:
        summary["intervals"] = figures.intervals
    if figures.missing_to:
        summary["missing_to"] = figures.missing_to
    return summary


def _recode_report(figures: dict[str, Any]) -> list[str]:
    lines = [f"{name}: {count:,} values recoded" for name, count in figures["changed"].items()]
    for name, spec in figures.get("intervals", {}).items():
        shown = ", ".join(
            f"{label} {count:,}" for label, count in zip(spec["labels"], spec["counts"], strict=True)
        )
        lines.append(f"{name}: {len(spec['labels'])} intervals ({shown})")
    for name, values in figures["unused"].items():
        if values:
            shown = ", ".join(values[:5]) + (" ..." if len(values) > 5 else "")
            lines.append(f"{name}: {len(values)} mapped values do not occur in the data ({shown})")
    return lines


@register_method(
    "recode",
    RecodeParams,
    summary=_recode_summary,
    help="Global recoding: categories from a mapping file (attribute,from,to), a numeric attribute into "
    "intervals (--breaks, as sdcMicro's globalRecode), or categories into a group (--before/--after).",
    report=_recode_report,
    transformation=RECODE,
    examples={"minimal": {"mapping": "mapping.csv"}},
)
def _run_recode(table: Table, params: RecodeParams, context: Context) -> Release:
    if params.mapping is None:
        return _recode_one_attribute(table, params)
    mapping = read_mapping(params.mapping) if isinstance(params.mapping, Path) else params.mapping
    missing = [name for name in mapping if name not in table.data.columns]
    if missing:
        raise ConfigError(
            f"the mapping recodes attribute '{missing[0]}', which is not a column of the data "
            f"(columns: {', '.join(table.data.columns)})"
        )
    columns = [recoded_column(table.column(name), values) for name, values in mapping.items()]
    unused = {}
    for name, values in mapping.items():
        present = set(value_strings(table.column(name)).drop_nulls().unique().to_list())
        unused[name] = sorted(value for value in values if value not in present)
    figures = RecodeFigures(mapping={name: dict(values) for name, values in mapping.items()}, unused=unused)
    return recode_release(table, columns, params, figures)


def recode_release(
    table: Table,
    columns: list[pl.Series],
    params: Any,
    figures: RecodeFigures,
    known_changes: dict[str, int | None] | None = None,
) -> Release:
    """The release of ``table`` with ``columns`` replacing its columns of the same names, and
    ``figures`` completed with the values changed per attribute (those of ``known_changes`` as given,
    the others by comparing the texts). A numeric attribute that became text becomes categorical."""
    frame = table.data.with_columns(columns)
    changed = {}
    schema = table.schema
    for column in columns:
        name = column.name
        known = (known_changes or {}).get(name)
        if known is not None:
            changed[name] = known
        else:
            before = value_strings(table.column(name))
            after = value_strings(frame.get_column(name))
            changed[name] = int((before.ne_missing(after)).sum())
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
        quasi_identifiers=tuple(column.name for column in columns),
        suppressed_records=np.zeros(n, dtype=bool),
        classes=np.full(n, -1, dtype=np.int64),
        params=params,
        figures=dataclasses.replace(figures, changed=changed),
    )


def _recode_one_attribute(table: Table, params: RecodeParams) -> Release:
    name = params.attribute
    assert name is not None  # the parameters require it without a mapping
    if name not in table.data.columns:
        raise ConfigError(
            f"attribute '{name}' is not a column of the data (columns: {', '.join(table.data.columns)})"
        )
    column = table.column(name)
    if params.before is not None:
        assert params.after is not None  # required with before
        grouped = grouped_column(column, params.before, params.after, params.add_missing)
        figures = RecodeFigures(
            mapping={name: dict.fromkeys(params.before, params.after)},
            unused={name: []},
            missing_to={name: params.after} if params.add_missing else {},
        )
        return recode_release(table, [grouped], params, figures)
    assert params.breaks is not None  # the parameters require one kind of recoding
    spec = intervals(column, params.breaks, params.cut_method or METHODS[0], params.labels, params.codes)
    recoded, slot = recoded_intervals(column, spec, table.source or "")
    figures = RecodeFigures(intervals={name: interval_figures(spec, slot)})
    return recode_release(table, [recoded], params, figures, {name: changed_by_intervals(spec, slot)})


def interval_figures(spec: Any, slot: np.ndarray) -> dict[str, Any]:
    """What the summary says of an attribute cut into intervals: the cut points, whether the lowest
    interval is closed on the left, the labels and the records in each interval (``slot``: each
    record's interval, negative when missing)."""
    counts = np.bincount(slot[slot >= 0], minlength=len(spec.labels))
    return {
        "breaks": list(spec.breaks),
        "lowest_closed": spec.lowest_closed,
        "labels": list(spec.labels),
        "codes": spec.codes,
        "counts": [int(count) for count in counts],
    }
