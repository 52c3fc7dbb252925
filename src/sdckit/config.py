"""Configuration files: which columns are what, and the parameters of a run.

A YAML file (see docs/configuration.md) describes attributes (role, kind, public-knowledge
probability PK(A), sensitivity W(A) and value weights W(v) of the combined record-level risk measure
of Orooji & Knapp, 2019), the risk parameters (alpha, epsilon, treatment of missing values) and how
to read the data (delimiter, missing-value tokens, sampling weights column).

The file is validated with pydantic, unknown keys included, and every problem is reported in one
:class:`~sdckit.errors.ConfigError` whose message names the file, the line of the offending key, the
attribute and what is wrong, e.g. ``study.yaml:7: attribute 'income': public must be a number in
[0, 1], got 1.5``.

The YAML is read with the YAML 1.2 rules for plain values: only ``true``/``false`` are booleans (so
``Yes``/``No``/``on``/``off`` stay text), ``1e-3`` is a number and ``010`` is ten. Mapping keys (attribute
names, category values) are always taken as the text written in the file. Hostile files are refused
fast (:mod:`sdckit._yaml`): aliases that expand to more than 100,000 values, nesting deeper than 100,
tags outside YAML's core schema (``!!python/...``); only a regular file of at most 16 MiB is read.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import polars as pl
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from sdckit._files import MAX_CONFIG_BYTES, read_text_file
from sdckit._yaml import BoundedLoader
from sdckit.errors import ConfigError, shown
from sdckit.hierarchy import Hierarchy, build_hierarchy
from sdckit.io import DEFAULT_MISSING_VALUES, to_polars
from sdckit.io.common import _kind_of
from sdckit.io.read import _read_table, _release_layout
from sdckit.table import Attribute, Kind, Role, Schema, Table, ValueRange

MISSING_TREATMENTS = ("wildcard", "category")
# Kinds whose values are ordered numbers, so that ranges of values can carry weights.
RANGE_KINDS = (Kind.NUMERIC, Kind.ORDINAL)


@dataclass(frozen=True)
class RiskSettings:
    """Parameters of the combined record-level risk measure (Orooji & Knapp, 2019).

    ``alpha`` is the consequence coefficient (α > 1; the paper uses 100), ``epsilon`` the pruning
    threshold on the probability that a known set is public (the paper uses 0.01), ``missing`` how a
    missing value counts when records are matched: ``"wildcard"`` (it matches every value, as in
    sdcMicro) or ``"category"`` (it is a value of its own).
    """

    alpha: float = 100.0
    epsilon: float = 0.01
    missing: str = "wildcard"

    def __post_init__(self) -> None:
        if not _is_number(self.alpha) or not math.isfinite(self.alpha) or self.alpha <= 1:
            raise ConfigError(f"alpha must be a number greater than 1, got {self.alpha!r}")
        if not _is_number(self.epsilon) or not math.isfinite(self.epsilon) or self.epsilon < 0:
            raise ConfigError(f"epsilon must be a number of at least 0, got {self.epsilon!r}")
        if self.missing not in MISSING_TREATMENTS:
            raise ConfigError(
                f"missing must be one of {', '.join(MISSING_TREATMENTS)}, got {shown(self.missing)}"
            )


@dataclass(frozen=True)
class DataSettings:
    """How to read the data: the CSV delimiter (guessed if None), the text fields that mean a missing
    value, and the column of sampling weights (None if the records are not weighted)."""

    delimiter: str | None = None
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES
    weights: str | None = None


@dataclass(frozen=True)
class Config:
    """A parsed configuration.

    ``attributes`` are the described columns in the order of the file. An attribute whose kind the
    file leaves out has a placeholder kind (numeric if it has ranges, else categorical) and its name in
    ``inferred_kinds``: :meth:`read` and :meth:`schema_for` give it the kind of its column (numeric for
    a numeric column, date for a date column, categorical otherwise). Attributes with role identifier
    are kept in the schema, marked as such; risk measures and releases drop them
    (:meth:`Schema.without_identifiers`).
    """

    attributes: tuple[Attribute, ...] = ()
    risk: RiskSettings = field(default_factory=RiskSettings)
    data: DataSettings = field(default_factory=DataSettings)
    path: str | None = None
    inferred_kinds: frozenset[str] = frozenset()
    # Where each attribute and the weights key are written, "file:line", for messages.
    locations: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    # Per attribute with a ``missing`` key: how its hierarchy takes missing values as members
    # ("leaf", "suppress" or {"under": NODE}; see Hierarchy.with_missing).
    missing_choices: Mapping[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """What messages call this configuration: its path, or the name given to
        :func:`parse_config`."""
        return self.path if self.path is not None else self.locations.get(_SOURCE_KEY, "<config>")

    def read(self, source: Any, *, keep_undescribed: bool = True) -> Table:
        """Read a data file or DataFrame (see :func:`sdckit.io.read_table`) with this
        configuration's attributes and data settings. An attribute that is not a column is reported
        with the configuration file and line that describe it. Hierarchies are loaded or built
        (:func:`sdckit.hierarchy.build_hierarchy`) and checked against the data.

        The columns the configuration does not describe are kept as read, so that a release writes
        them back unchanged: text in a CSV file (``053005`` stays ``053005``; not trimmed; only an
        empty field is missing), their own type in a Parquet file or DataFrame (no missing-value token
        or NaN made missing). ``keep_undescribed=False`` reads them as :func:`~sdckit.io.read_table`
        does (numbers when every value is one), for commands that write no records back."""
        table = _read_table(
            source,
            attributes=self.attributes,
            delimiter=self.data.delimiter,
            missing_values=self.data.missing_values,
            weights=self.data.weights,
            inferred_kinds=self.inferred_kinds,
            described_at={
                attribute.name: self.locations.get(attribute.name, self.source)
                for attribute in self.attributes
            },
            weights_at=self.locations.get(_WEIGHTS_KEY, self.source),
            keep_undescribed=keep_undescribed,
        )
        return replace(table, schema=self._with_hierarchies(table.schema, table.data))

    def read_release(self, source: Any) -> Table:
        """Read a release that sdckit wrote (:func:`sdckit.io.write_table`) from data read with this
        configuration, so that it can be checked or measured with the configuration that produced it.

        Reading differs from :meth:`read` in four ways, and only these:

        - an attribute with role identifier that is not a column is left out of the schema (releases
          drop identifiers); one that is a column stays an identifier;
        - in a CSV file the configured delimiter is used if it splits the header into columns that
          include every described attribute present in the release; otherwise comma (sdckit writes
          releases with commas), tab, semicolon and pipe are tried in turn, and failing all of them
          the delimiter is guessed as in :meth:`read`;
        - a quasi-identifier of kind numeric, ordinal or date whose values are not all numbers (dates)
          is read as text: kind categorical, without range weights (generalized values such as
          ``19-34``, ``{a,b}`` or ``*`` are classes, not numbers);
        - quasi-identifiers lose their hierarchies: a release's values are generalized labels, not
          leaves of the hierarchy, and neither checking nor measuring needs one.

        Missing values (``data.missing_values``; a suppressed value written as an empty field is
        missing), roles, sensitive attributes, weights, the columns the configuration does not
        describe (kept as read) and every other setting are read as by :meth:`read`.
        """
        expected = [attribute.name for attribute in self.attributes if attribute.role is not Role.IDENTIFIER]
        if self.data.weights is not None:
            expected.append(self.data.weights)
        columns, delimiter = _release_layout(source, self.data.delimiter, expected)
        quasi_identifiers = [
            attribute.name for attribute in self.attributes if attribute.role is Role.QUASI_IDENTIFIER
        ]
        attributes = tuple(
            replace(attribute, hierarchy=None) if attribute.role is Role.QUASI_IDENTIFIER else attribute
            for attribute in self.attributes
            if attribute.role is not Role.IDENTIFIER or attribute.name in columns
        )
        table = _read_table(
            source,
            attributes=attributes,
            delimiter=delimiter,
            missing_values=self.data.missing_values,
            weights=self.data.weights,
            inferred_kinds=self.inferred_kinds,
            described_at={
                attribute.name: self.locations.get(attribute.name, self.source) for attribute in attributes
            },
            weights_at=self.locations.get(_WEIGHTS_KEY, self.source),
            as_text_if_not_numeric=quasi_identifiers,
            keep_undescribed=True,
        )
        return replace(table, schema=self._with_hierarchies(table.schema, table.data))

    def schema_for(self, frame: Any) -> Schema:
        """The schema of an already typed polars or pandas DataFrame under this configuration: the
        described attributes (kinds left out taken from the column types) and defaults for the rest."""
        data = to_polars(frame)
        missing = [attribute.name for attribute in self.attributes if attribute.name not in data.columns]
        if missing:
            where = self.locations.get(missing[0], self.source)
            raise ConfigError(
                f"{where}: unknown attribute '{missing[0]}': the data has no such column "
                f"(columns: {', '.join(data.columns)})"
            )
        resolved = tuple(
            replace(attribute, kind=_kind_of(data.schema[attribute.name]))
            if attribute.name in self.inferred_kinds
            else attribute
            for attribute in self.attributes
        )
        return self._with_hierarchies(Schema.infer(data, resolved), data)

    def _with_hierarchies(self, schema: Schema, data: pl.DataFrame) -> Schema:
        """The schema with every attribute's ``hierarchy`` (a file name, relative to the configuration
        file, or an inline builder) replaced by the :class:`Hierarchy` it describes."""
        base_dir = Path(self.path).parent if self.path is not None else None
        for attribute in schema:
            if attribute.hierarchy is None or isinstance(attribute.hierarchy, Hierarchy):
                continue
            choice = self.missing_choices.get(attribute.name)
            try:
                # A file's row for the missing value is read as such only when a choice asks for it.
                hierarchy = build_hierarchy(
                    attribute.hierarchy,
                    data.get_column(attribute.name),
                    attribute.name,
                    base_dir,
                    missing_values=self.data.missing_values if choice is not None else None,
                )
            except ConfigError as error:
                where = self.locations.get(attribute.name, self.source)
                raise ConfigError(f"{where}: {error}") from None  # the error names the attribute
            if choice is not None:
                try:
                    hierarchy = hierarchy.with_missing(choice)
                except ConfigError as error:
                    where = self.locations.get(_MISSING_KEY + attribute.name, self.source)
                    raise ConfigError(f"{where}: {error}") from None
            schema = schema.replace(attribute.name, hierarchy=hierarchy)
        return schema


def load_config(path: str | Path) -> Config:
    """Read and validate a YAML configuration file."""
    label = str(path)
    text = read_text_file(
        path,
        label,
        "configuration file",
        ConfigError,
        max_bytes=MAX_CONFIG_BYTES,
        missing=f"{label}: no such configuration file",
    )
    config = parse_config(text, source=label)
    return Config(
        attributes=config.attributes,
        risk=config.risk,
        data=config.data,
        path=label,
        inferred_kinds=config.inferred_kinds,
        locations=config.locations,
        missing_choices=config.missing_choices,
    )


def parse_config(mapping_or_yaml_text: str | Mapping[str, Any], source: str = "<config>") -> Config:
    """Validate a configuration given as YAML text or as an already parsed mapping; ``source`` names
    it in messages. The returned Config has ``path`` None (see :func:`load_config`)."""
    if isinstance(mapping_or_yaml_text, str):
        document, lines = _parse_yaml(mapping_or_yaml_text, source)
    elif isinstance(mapping_or_yaml_text, Mapping):
        document, lines = _normalize_keys(mapping_or_yaml_text), {}
    else:
        raise TypeError(
            f"expected YAML text or a mapping, got {type(mapping_or_yaml_text).__name__} "
            "(use load_config to read a file)"
        )
    if document is None:
        raise ConfigError(f"{source}: the configuration is empty")
    if not isinstance(document, dict):
        hint = " (use load_config to read a file)" if isinstance(document, str) else ""
        raise ConfigError(
            f"{_where(source, lines, ())}the configuration must be a mapping with the sections "
            f"attributes, risk and data, got {_describe_value(document)}{hint}"
        )
    try:
        model = _ConfigModel.model_validate(document)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, source, lines)) from None
    return _build(model, source, lines)


# YAML --------------------------------------------------------------------------------------------


class _Loader(BoundedLoader):
    """The bounded loader (:mod:`sdckit._yaml`) with YAML 1.2 integers (no octal ``010``)."""


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)  # YAML 1.2: a leading zero is not octal


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)

Lines = dict[tuple[Any, ...], int]


def _parse_yaml(text: str, source: str) -> tuple[Any, Lines]:
    """The document (mapping keys as written) and the 1-based line of every key and list item."""
    loader = _Loader(text)
    loader.source, loader.error = source, ConfigError
    try:
        node = loader.get_single_node()
        lines: Lines = {}
        return (None if node is None else _to_python(loader, node, (), lines, source, set())), lines
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = error.problem or "cannot parse"
        if error.context and error.context_mark is not None:
            problem += f" ({error.context} on line {error.context_mark.line + 1})"
        elif error.context:
            problem += f" ({error.context})"
        raise ConfigError(f"{source}{line}: YAML syntax error: {problem}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: YAML syntax error: {error}") from None
    finally:
        loader.dispose()


def _to_python(
    loader: _Loader, node: yaml.Node, path: tuple[Any, ...], lines: Lines, source: str, active: set[int]
) -> Any:
    if id(node) in active:
        raise ConfigError(
            f"{source}:{node.start_mark.line + 1}: an alias refers to the mapping that holds it"
        )
    if isinstance(node, yaml.MappingNode):
        active.add(id(node))
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise ConfigError(f"{source}:{line}: a key must be a plain name, not a list or mapping")
            key = key_node.value
            if key in result:
                first = lines[(*path, key)]
                raise ConfigError(f"{source}:{line}: key '{key}' appears twice (first on line {first})")
            lines[(*path, key)] = line
            result[key] = _to_python(loader, value_node, (*path, key), lines, source, active)
        active.discard(id(node))
        return result
    if isinstance(node, yaml.SequenceNode):
        active.add(id(node))
        items = []
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            items.append(_to_python(loader, item, (*path, index), lines, source, active))
        active.discard(id(node))
        return items
    return loader.construct_object(node)


def _normalize_keys(value: Any) -> Any:
    """Mapping keys as strings the way the data spells values: 1 and 1.0 as '1', True as 'true'."""
    if isinstance(value, Mapping):
        return {_key_text(key): _normalize_keys(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalize_keys(item) for item in value]
    return value


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    if isinstance(key, Role | Kind):
        return key.value
    return str(key)


# Validation --------------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("sdckit", "{message}", {"message": message})


def _number(value: Any) -> float:
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(f"must be a number, got {_describe_value(value)}")
    return float(value)


def _weight(value: Any) -> float:
    if not _is_number(value) or not 0.0 <= float(value) <= 1.0:
        raise _fail(f"must be a number in [0, 1], got {_describe_value(value)}")
    return float(value)


def _choice(enumeration: type[Role] | type[Kind], optional: bool = False) -> Any:
    def check(value: Any) -> Any:
        if isinstance(value, enumeration) or (optional and value is None):
            return value
        text = value.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(value, str) else value
        for member in enumeration:
            if text == member.value:
                return member
        allowed = ", ".join(member.value for member in enumeration)
        raise _fail(f"must be one of {allowed}, got {_describe_value(value)}")

    return check


def _empty_as(default: Any) -> Any:
    return lambda value: default() if value is None else value


Number = Annotated[float, BeforeValidator(_number)]
Weight = Annotated[float, BeforeValidator(_weight)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _RangeModel(_Strict):
    min: Number | None = None
    max: Number | None = None
    weight: Weight

    @field_validator("max")
    @classmethod
    def _above_min(cls, maximum: float | None, info: ValidationInfo) -> float | None:
        minimum = info.data.get("min")
        if maximum is not None and minimum is not None and minimum >= maximum:
            raise _fail(f"must be above min {minimum:g} (min is inclusive, max exclusive), got {maximum:g}")
        return maximum


class _AttributeModel(_Strict):
    role: Annotated[Role, BeforeValidator(_choice(Role))] = Role.INSENSITIVE
    kind: Annotated[Kind | None, BeforeValidator(_choice(Kind, optional=True))] = None
    public: Weight = 0.0
    sensitivity: Weight = 0.0
    values: Annotated[dict[str, Weight], BeforeValidator(_empty_as(dict))] = Field(default_factory=dict)
    ranges: Annotated[list[_RangeModel], BeforeValidator(_empty_as(list))] = Field(default_factory=list)
    hierarchy: Any = None
    missing: Any = None

    @field_validator("missing", mode="before")
    @classmethod
    def _missing_member(cls, missing: Any, info: ValidationInfo) -> Any:
        allowed = "leaf, suppress or {under: NODE}"
        if missing is None:
            return None
        if isinstance(missing, Mapping):
            unknown = [key for key in missing if key != "under"]
            if unknown:
                close = difflib.get_close_matches(str(unknown[0]), ["under"], n=1)
                hint = "; did you mean 'under'?" if close else ""
                raise _fail(f"has an unknown key '{unknown[0]}'{hint} (allowed: {allowed})")
            node = missing.get("under")
            if node is None or isinstance(node, Mapping | list) or str(node).strip() == "":
                raise _fail(f"{{under: NODE}} needs the label of a node as NODE, got {_describe_value(node)}")
            missing = {"under": _key_text(node)}
        elif missing not in ("leaf", "suppress"):
            close = difflib.get_close_matches(str(missing), ["leaf", "suppress"], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise _fail(f"must be {allowed}, got {_describe_value(missing)}{hint}")
        if info.data.get("hierarchy") is None:
            raise _fail(
                "needs a hierarchy: it says where missing values sit in the attribute's hierarchy "
                "(give hierarchy: file.csv or a builder)"
            )
        return missing

    @field_validator("values", mode="before")
    @classmethod
    def _value_keys(cls, values: Any) -> Any:
        return (
            {_key_text(key): weight for key, weight in values.items()}
            if isinstance(values, Mapping)
            else values
        )

    @field_validator("ranges")
    @classmethod
    def _ranges_fit(cls, ranges: list[_RangeModel], info: ValidationInfo) -> list[_RangeModel]:
        kind = info.data.get("kind")
        if ranges and kind is not None and kind not in RANGE_KINDS:
            raise _fail(f"need a numeric or ordinal attribute, but kind is {kind.value}")
        if ranges and info.data.get("values"):
            raise _fail("cannot be given together with values: weight either values or ranges")
        return ranges


class _RiskModel(_Strict):
    alpha: Number = 100.0
    epsilon: Number = 0.01
    missing: str = "wildcard"

    @field_validator("alpha")
    @classmethod
    def _alpha_above_one(cls, alpha: float) -> float:
        if alpha <= 1:
            raise _fail(f"must be greater than 1 (the consequence coefficient α > 1), got {alpha:g}")
        return alpha

    @field_validator("epsilon")
    @classmethod
    def _epsilon_not_negative(cls, epsilon: float) -> float:
        if epsilon < 0:
            raise _fail(f"must be at least 0, got {epsilon:g}")
        return epsilon

    @field_validator("missing", mode="before")
    @classmethod
    def _missing_treatment(cls, missing: Any) -> Any:
        if missing not in MISSING_TREATMENTS:
            raise _fail(f"must be one of {', '.join(MISSING_TREATMENTS)}, got {_describe_value(missing)}")
        return missing


_DELIMITER_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}


class _DataModel(_Strict):
    delimiter: str | None = None
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES
    weights: str | None = None

    @field_validator("delimiter", mode="before")
    @classmethod
    def _one_character(cls, delimiter: Any) -> Any:
        if delimiter is None:
            return None
        delimiter = _DELIMITER_NAMES.get(delimiter, delimiter) if isinstance(delimiter, str) else delimiter
        if not isinstance(delimiter, str) or len(delimiter) != 1 or not delimiter.isascii():
            raise _fail(f'must be one ASCII character (quote it: ","), got {_describe_value(delimiter)}')
        if delimiter in ('"', "\n", "\r"):
            raise _fail(f"cannot be a quote or a line break, got {shown(delimiter)}")
        return delimiter

    @field_validator("missing_values", mode="before")
    @classmethod
    def _texts(cls, tokens: Any) -> Any:
        if tokens is None:
            return ()
        if isinstance(tokens, str):
            tokens = [tokens]
        if not isinstance(tokens, list | tuple):
            raise _fail(f"must be a list of texts, got {_describe_value(tokens)}")
        for token in tokens:
            if not isinstance(token, str) and not _is_number(token):
                raise _fail(f"must be a list of texts, but holds {_describe_value(token)}")
        return tuple(str(token) for token in tokens)

    @field_validator("weights", mode="before")
    @classmethod
    def _column_name(cls, weights: Any) -> Any:
        if weights is None or isinstance(weights, str):
            return weights
        raise _fail(f"must be the name of a column, got {_describe_value(weights)}")


class _ConfigModel(_Strict):
    attributes: Annotated[
        dict[str, Annotated[_AttributeModel, BeforeValidator(_empty_as(dict))]],
        BeforeValidator(_empty_as(dict)),
    ] = Field(default_factory=dict)
    risk: Annotated[_RiskModel, BeforeValidator(_empty_as(dict))] = Field(default_factory=_RiskModel)
    data: Annotated[_DataModel, BeforeValidator(_empty_as(dict))] = Field(default_factory=_DataModel)


# Keys of Config.locations besides attribute names (which cannot start with a NUL character).
_WEIGHTS_KEY = "\x00data.weights"
_SOURCE_KEY = "\x00source"
_MISSING_KEY = "\x00missing "  # + attribute name: where its missing key is written
_SECTION_MODELS: dict[str, type[BaseModel]] = {"risk": _RiskModel, "data": _DataModel}


def _build(model: _ConfigModel, source: str, lines: Lines) -> Config:
    attributes = []
    inferred = set()
    locations: dict[str, str] = {_SOURCE_KEY: source}
    missing_choices: dict[str, Any] = {}
    for name, described in model.attributes.items():
        where = f"{source}:{lines[('attributes', name)]}" if ("attributes", name) in lines else source
        locations[name] = where
        if described.missing is not None:
            missing_choices[name] = described.missing
            key = ("attributes", name, "missing")
            locations[_MISSING_KEY + name] = f"{source}:{lines[key]}" if key in lines else where
        kind = described.kind
        if kind is None:
            if described.ranges:
                kind = Kind.NUMERIC
            else:
                kind = Kind.CATEGORICAL  # placeholder until the data is seen
                inferred.add(name)
        try:
            attributes.append(
                Attribute(
                    name=name,
                    role=described.role,
                    kind=kind,
                    public_probability=described.public,
                    sensitivity=described.sensitivity,
                    value_weights=dict(described.values),
                    range_weights=tuple(
                        ValueRange(weight=item.weight, minimum=item.min, maximum=item.max)
                        for item in described.ranges
                    ),
                    hierarchy=described.hierarchy,
                )
            )
        except ConfigError as error:  # the models check the same; kept in case Attribute learns more
            raise ConfigError(f"{where}: {error}") from None
    if ("data", "weights") in lines:
        locations[_WEIGHTS_KEY] = f"{source}:{lines[('data', 'weights')]}"
    return Config(
        attributes=tuple(attributes),
        risk=RiskSettings(alpha=model.risk.alpha, epsilon=model.risk.epsilon, missing=model.risk.missing),
        data=DataSettings(
            delimiter=model.data.delimiter,
            missing_values=model.data.missing_values,
            weights=model.data.weights,
        ),
        path=None,
        inferred_kinds=frozenset(inferred),
        locations=locations,
        missing_choices=missing_choices,
    )


# Messages ----------------------------------------------------------------------------------------


def _describe_value(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return shown(value)


def _line_of(lines: Lines, path: tuple[Any, ...]) -> int | None:
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def _where(source: str, lines: Lines, path: tuple[Any, ...]) -> str:
    line = _line_of(lines, path)
    return f"{source}:{line}: " if line is not None else f"{source}: "


def _allowed_keys(path: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the mapping at ``path``."""
    if not path:
        return list(_ConfigModel.model_fields)
    if path[0] == "attributes" and len(path) == 2:
        return list(_AttributeModel.model_fields)
    if path[0] == "attributes" and len(path) == 4 and path[2] == "ranges":
        return list(_RangeModel.model_fields)
    if len(path) == 1 and path[0] in _SECTION_MODELS:
        return list(_SECTION_MODELS[path[0]].model_fields)
    return []


def _label(path: tuple[Any, ...]) -> str:
    """How a message names the setting at ``path`` (below the attribute, if any)."""
    if len(path) == 2 and path[0] == "values":
        return f"weight of value '{path[1]}'"
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _format_error(error: Mapping[str, Any], source: str, lines: Lines) -> tuple[int, str]:
    path = tuple(error["loc"])
    kind = error["type"]
    line = _line_of(lines, path)
    where = f"{source}:{line}: " if line is not None else f"{source}: "
    inner = path
    if len(path) >= 2 and path[0] == "attributes":
        where += f"attribute '{path[1]}': "
        inner = path[2:]
    if kind == "extra_forbidden":
        key = str(path[-1])
        allowed = _allowed_keys(path[:-1])
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        place = f" in {_label(inner[:-1])}" if inner[:-1] else ""
        return line or 0, f"{where}unknown key '{key}'{place}{hint} (allowed: {', '.join(allowed)})"
    if kind == "missing":
        return line or 0, f"{where}{_label(inner[:-1]) + ': ' if inner[:-1] else ''}missing key '{path[-1]}'"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        text = f"must be a mapping of keys, got {_describe_value(error['input'])}"
    elif kind in ("list_type", "tuple_type"):
        text = f"must be a list, got {_describe_value(error['input'])}"
    elif kind == "string_type":
        text = f"must be text, got {_describe_value(error['input'])}"
    else:
        text = error["msg"]
    subject = _label(inner)
    if not subject and len(path) == 2 and path[0] == "attributes":
        subject = "the description"
    return line or 0, f"{where}{subject} {text}" if subject else f"{where}{text}"


def _format_errors(error: ValidationError, source: str, lines: Lines) -> str:
    """One message for all problems, one line each, in the order of the file."""
    problems = sorted({_format_error(item, source, lines) for item in error.errors()})
    return "\n".join(text for _, text in problems)


__all__ = [
    "MISSING_TREATMENTS",
    "Config",
    "DataSettings",
    "RiskSettings",
    "load_config",
    "parse_config",
]


def read_document(path: str | Path, what: str = "file") -> Any:
    """Read a document other than a configuration, such as a recipe or a summary JSON: ``.json``
    with the JSON parser (a summary may hold a large learnt transformation), anything else with the
    bounded YAML loader of configurations; errors name the file (and line)."""
    import json

    label = str(path)
    text = read_text_file(
        path, label, what, ConfigError, max_bytes=MAX_DOCUMENT_BYTES, missing=f"{label}: no such {what} file"
    )
    if Path(path).suffix.lower() == ".json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{label}:{error.lineno}: the {what} is not valid JSON: {error.msg}") from None
        except RecursionError:
            raise ConfigError(f"{label}: the {what} is nested too deeply") from None
    else:
        document, _ = _parse_yaml(text, label)
    if document is None:
        raise ConfigError(f"{label}: the {what} is empty")
    return document


#: Largest recipe or summary read back (a summary may hold a learnt transformation).
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
