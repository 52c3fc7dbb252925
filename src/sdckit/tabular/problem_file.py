"""Problem files: several linked tables in one YAML file (``sdckit table METHOD DATA --problem P.yaml``).

.. code-block:: yaml

    value: turnover               # optional: sum this attribute (magnitude tables); default: count
    holding: enterprise           # optional: the records of one enterprise are one contributor
    tables:                       # one or more tables, by name
      regions:
        dimensions:
          - {attribute: district, level: 1}          # level 1 of the configuration's hierarchy
          - size                                     # an attribute, as the configuration gives it
      districts:
        dimensions:
          - {attribute: district, subtotals: false}  # its values and their total only
          - activity
      coast:
        dimensions:
          - {attribute: district, hierarchy: coast.csv}  # a hierarchy file (ARX's CSV format)

A dimension is an attribute name, or a mapping with ``attribute`` and any of ``hierarchy`` (a file
in ARX's format, relative to the problem file, for this table only; default: the configuration's
hierarchy of the attribute, or none), ``level`` (the level of that hierarchy whose nodes are the
table's categories, default 0: the values) and ``subtotals`` (false: no levels between the categories
and the total; default true).

The tables are linked through the records their cells have in common
(:mod:`sdckit.tabular.build`): cells over the same records are one cell whatever hierarchy a table
reads them through, each table adds its own relations, and a node of one table's hierarchy that is
the sum of nodes of another's (a region, of the districts another table lists) adds that sum. Every
key is checked: an unknown key or a wrong value is an error naming the file and line.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, StrictBool, StrictStr, ValidationError

from sdckit._files import MAX_CONFIG_BYTES, read_text_file
from sdckit.config import Lines, _describe_value, _line_of, _parse_yaml, _Strict
from sdckit.errors import ConfigError
from sdckit.hierarchy import Hierarchy
from sdckit.tabular.build import HierarchyView, TableSpec


def _attribute_only(value: Any) -> Any:
    return {"attribute": value} if isinstance(value, str) else value


class _DimensionModel(_Strict):
    attribute: StrictStr
    hierarchy: StrictStr | None = None
    level: Annotated[int, Field(ge=0, strict=True)] = 0
    subtotals: StrictBool = True


class _TableModel(_Strict):
    dimensions: Annotated[
        list[Annotated[_DimensionModel, BeforeValidator(_attribute_only)]], Field(min_length=1)
    ]


class _ProblemModel(_Strict):
    value: StrictStr | None = None
    holding: StrictStr | None = None
    tables: Annotated[dict[StrictStr, _TableModel], Field(min_length=1)]


@dataclass(frozen=True)
class ProblemFile:
    """A parsed problem file: the tables (``names[i]``: ``tables[i]``, its dimensions), the hierarchy
    of its own each gives some of its dimensions, the value summed (None: frequency tables) and the
    holding. ``files``: the hierarchy files it reads; ``locations``: "file:line" of every table and of
    every dimension ``(table, attribute)``, for messages."""

    path: str
    names: tuple[str, ...]
    tables: tuple[tuple[str, ...], ...]
    hierarchies: tuple[dict[str, HierarchyView], ...]
    value: str | None = None
    holding: str | None = None
    files: tuple[Path, ...] = ()
    locations: Mapping[Any, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def own_hierarchies(self) -> bool:
        """Whether a table sees a dimension otherwise than through the configuration's hierarchy."""
        return any(self.hierarchies)

    def spec(self, **options: Any) -> TableSpec:
        """The :class:`~sdckit.tabular.build.TableSpec` of the tables; ``options`` are its other
        fields (``value``, ``holding``, ``weights``, ...), the file's value and holding by default."""
        options = {"value": self.value, "holding": self.holding, **options}
        return TableSpec(tables=self.tables, table_hierarchies=self.hierarchies, names=self.names, **options)

    def check_columns(self, columns: Sequence[str], what: str = "the data") -> None:
        """Refuse an attribute the data lacks, naming the file and line where the problem file uses it."""
        for name, dims in zip(self.names, self.tables, strict=True):
            for attribute in dims:
                if attribute not in columns:
                    close = difflib.get_close_matches(attribute, list(columns), n=1)
                    hint = f"; did you mean '{close[0]}'?" if close else ""
                    raise ConfigError(
                        f"{self.locations.get((name, attribute), self.path)}: table '{name}': unknown "
                        f"attribute '{attribute}': {what} has no such column (columns: "
                        f"{', '.join(columns)}){hint}"
                    )
        for key, given in (("value", self.value), ("holding", self.holding)):
            if given is not None and given not in columns:
                at = self.locations.get(key, self.path)
                raise ConfigError(
                    f"{at}: {key}: unknown attribute '{given}': {what} has no such column "
                    f"(columns: {', '.join(columns)})"
                )


def load_problem(path: str | Path) -> ProblemFile:
    """Read and check a problem file (hierarchy files relative to it); :class:`ConfigError` naming
    the file and line for anything wrong."""
    label = str(path)
    text = read_text_file(
        path,
        label,
        "problem file",
        ConfigError,
        max_bytes=MAX_CONFIG_BYTES,
        missing=f"{label}: no such problem file",
    )
    return parse_problem(text, label, Path(path).parent)


def parse_problem(text: str, source: str = "<problem>", base: Path | None = None) -> ProblemFile:
    """A problem file from its YAML ``text``; ``source`` names it in messages, hierarchy files are
    read relative to ``base`` (default: the working directory)."""
    document, lines = _parse_yaml(text, source)
    if document is None:
        raise ConfigError(f"{source}: the problem file is empty")
    if not isinstance(document, dict):
        raise ConfigError(
            f"{source}: the problem file must be a mapping with 'tables' (and optionally 'value', "
            f"'holding'), got {_describe_value(document)}"
        )
    try:
        model = _ProblemModel.model_validate(document)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, source, lines)) from None
    base = base if base is not None else Path()

    def where(*path: Any) -> str:
        line = _line_of(lines, path)
        return f"{source}:{line}" if line is not None else source

    names, tables, hierarchies, files = [], [], [], []
    locations: dict[Any, str] = {key: where(key) for key in ("value", "holding")}
    read: dict[tuple[Path, str], Hierarchy] = {}
    for name, table in model.tables.items():
        dims: list[str] = []
        own: dict[str, HierarchyView] = {}
        locations[name] = where("tables", name)
        for index, dimension in enumerate(table.dimensions):
            at = where("tables", name, "dimensions", index)
            attribute = dimension.attribute
            if not attribute.strip():
                raise ConfigError(f"{at}: table '{name}': an attribute name is empty")
            if attribute in dims:
                raise ConfigError(f"{at}: table '{name}': attribute '{attribute}' is a dimension twice")
            if attribute in (model.value, model.holding):
                role = "value summed" if attribute == model.value else "holding"
                raise ConfigError(
                    f"{at}: table '{name}': attribute '{attribute}' is the {role}, not a dimension"
                )
            dims.append(attribute)
            locations[(name, attribute)] = at
            hierarchy = None
            if dimension.hierarchy is not None:
                path = Path(dimension.hierarchy)
                path = path if path.is_absolute() else base / path
                if (path, attribute) not in read:
                    try:
                        read[(path, attribute)] = Hierarchy.from_csv(path, attribute)
                    except ConfigError as error:
                        raise ConfigError(f"{at}: table '{name}': {error}") from None
                    files.append(path)
                hierarchy = read[(path, attribute)]
                if dimension.level > hierarchy.height:
                    raise ConfigError(
                        f"{at}: table '{name}': level {dimension.level} is not a level of {path} "
                        f"(levels 0 to {hierarchy.height})"
                    )
            fields = dimension.model_fields_set - {"attribute"}
            if fields:
                own[attribute] = HierarchyView(hierarchy, dimension.level, dimension.subtotals)
        names.append(name)
        tables.append(tuple(dims))
        hierarchies.append(own)
    return ProblemFile(
        path=source,
        names=tuple(names),
        tables=tuple(tables),
        hierarchies=tuple(hierarchies),
        value=model.value,
        holding=model.holding,
        files=tuple(files),
        locations=locations,
    )


_MODELS: dict[int, type[_Strict]] = {1: _ProblemModel, 3: _TableModel, 5: _DimensionModel}


def _label(path: tuple[Any, ...]) -> str:
    """How a message names the setting at ``path``: ``tables.regions.dimensions[0].level``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _format_errors(error: ValidationError, source: str, lines: Lines) -> str:
    """One line per problem, in the order of the file, with the allowed keys of an unknown one."""
    problems = set()
    for item in error.errors():
        path = tuple(item["loc"])
        line = _line_of(lines, path)
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        kind = item["type"]
        if kind == "extra_forbidden":
            allowed = list(_MODELS.get(len(path), _ProblemModel).model_fields)
            key = str(path[-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            place = f" in {_label(path[:-1])}" if len(path) > 1 else ""
            text = f"unknown key '{key}'{place}{hint} (allowed: {', '.join(allowed)})"
        elif kind == "missing":
            place = f"{_label(path[:-1])}: " if len(path) > 1 else ""
            text = f"{place}missing key '{path[-1]}'"
        else:
            if len(path) == 4 and path[2] == "dimensions" and kind in ("model_type", "dict_type"):
                problem = (
                    "must be an attribute name or a mapping with 'attribute' (and 'hierarchy', 'level', "
                    f"'subtotals'), got {_describe_value(item['input'])}"
                )
            elif kind in ("dict_type", "model_type", "model_attributes_type"):
                problem = f"must be a mapping of keys, got {_describe_value(item['input'])}"
            elif kind == "list_type":
                problem = f"must be a list, got {_describe_value(item['input'])}"
            elif kind == "string_type":
                problem = f"must be text, got {_describe_value(item['input'])}"
            elif kind == "bool_type":
                problem = f"must be true or false, got {_describe_value(item['input'])}"
            elif kind in ("int_type", "greater_than_equal"):
                problem = f"must be a whole number of at least 0, got {_describe_value(item['input'])}"
            elif kind == "too_short":
                problem = "must not be empty"
            else:
                problem = str(item["msg"])
            text = f"{_label(path)} {problem}" if path else problem
        problems.add((line or 0, where + text))
    return "\n".join(text for _, text in sorted(problems))
