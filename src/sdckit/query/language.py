"""The JSON query language: what an analyst may ask, never SQL.

A query is one JSON object::

    {"aggregate": "count" | "sum" | "mean" | "quantile" | "histogram",
     "column": null | "<numeric attribute>" (sum, mean, quantile; histogram: any attribute),
     "filters": [<node>, ...],            # all must hold (an implicit "and")
     "group_by": ["<categorical attribute>", ...],
     "epsilon": 0.1,                      # dp datasets only, required there
     "delta": 1e-6,                       # dp datasets with the gaussian mechanism only
     "quantile": 0.5,                     # quantile only, in (0, 1)
     "bins": 10 | [0, 10, 20]}            # histogram of a numeric attribute only

where a node is a comparison ``{"column": "age", "op": ">", "value": 40}`` (ops ``=  !=  <  <=
>  >=  in``, also written ``≠ ≤ ≥``; ``in`` takes a list) or ``{"and": [<node>, ...]}``,
``{"or": [<node>, ...]}``, ``{"not": <node>}``. A comparison with a missing value is false, and
``not`` is the complement (``not (age > 40)`` holds for a record whose age is missing).

:func:`parse_query` checks the shape (unknown keys, types, limits) and :func:`check_query` checks
it against a dataset's schema (the columns exist and are of the right kind for the aggregate, the
values have the column's type); both raise :class:`~sdckit.query.errors.QueryError` naming the
place in the query (``filters[0].and[1].value``). Names and values are only ever compared with
the schema and passed to the engine as values: ``"age; DROP TABLE"`` is an unknown column.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from sdckit.query.errors import QueryError
from sdckit.table import Kind

#: Limits that keep one query cheap to check and run.
MAX_NODES = 200
MAX_DEPTH = 12
MAX_IN_VALUES = 1000
MAX_GROUP_BY = 3
MAX_BINS = 1000
MAX_TEXT = 1000

OPS = ("=", "!=", "<", "<=", ">", ">=", "in")
_SYNONYMS = {"≠": "!=", "≤": "<=", "≥": ">=", "==": "="}
AGGREGATES = ("count", "sum", "mean", "quantile", "histogram")

Text = Annotated[StrictStr, Field(max_length=MAX_TEXT)]
Scalar = StrictBool | StrictInt | StrictFloat | Text


class _Strict(BaseModel):
    # strict: a number is a JSON number (true is not 1.0, "0.1" is not 0.1); an integer is
    # accepted where a float is expected
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


class Filter(_Strict):
    """A comparison of one column with a value (or, for ``in``, a list of values)."""

    column: Text
    op: Literal["=", "!=", "<", "<=", ">", ">=", "in"]
    value: Scalar | Annotated[list[Scalar], Field(min_length=1, max_length=MAX_IN_VALUES)]

    @field_validator("op", mode="before")
    @classmethod
    def _synonym(cls, op: Any) -> Any:
        return _SYNONYMS.get(op, op) if isinstance(op, str) else op

    @model_validator(mode="after")
    def _value_shape(self) -> Filter:
        if (self.op == "in") != isinstance(self.value, list):
            raise ValueError("op 'in' takes a list of values, the other ops one value")
        return self


class And(_Strict):
    """All of the nodes hold."""

    and_: Annotated[list[Node], Field(alias="and", min_length=1)]


class Or(_Strict):
    """At least one of the nodes holds."""

    or_: Annotated[list[Node], Field(alias="or", min_length=1)]


class Not(_Strict):
    """The node does not hold (the complement of its records)."""

    not_: Annotated[Node, Field(alias="not")]


def _node_kind(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("and", "or", "not"):
            if key in value:
                return key
    elif isinstance(value, BaseModel):
        return {And: "and", Or: "or", Not: "not"}.get(type(value), "filter")
    return "filter"


Node = Annotated[
    Annotated[Filter, Tag("filter")]
    | Annotated[And, Tag("and")]
    | Annotated[Or, Tag("or")]
    | Annotated[Not, Tag("not")],
    Discriminator(_node_kind),
]
And.model_rebuild()
Or.model_rebuild()
Not.model_rebuild()


class Query(_Strict):
    """One statistical query (see the module docstring)."""

    aggregate: Literal["count", "sum", "mean", "quantile", "histogram"]
    column: Text | None = None
    filters: Annotated[list[Node], Field(max_length=MAX_NODES)] = []
    group_by: Annotated[list[Text], Field(max_length=MAX_GROUP_BY)] = []
    epsilon: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    delta: Annotated[float, Field(gt=0, lt=1)] | None = None
    quantile: Annotated[float, Field(gt=0, lt=1)] | None = None
    bins: (
        Annotated[int, Field(ge=1, le=MAX_BINS)]
        | Annotated[list[float], Field(min_length=2, max_length=MAX_BINS + 1)]
        | None
    ) = None

    @model_validator(mode="after")
    def _fields_fit(self) -> Query:
        if self.aggregate == "count" and self.column is not None:
            raise ValueError("count counts records: leave 'column' null")
        if self.aggregate != "count" and self.column is None:
            raise ValueError(f"{self.aggregate} needs a 'column'")
        if (self.aggregate == "quantile") != (self.quantile is not None):
            raise ValueError("'quantile' (in (0, 1)) is given with aggregate quantile, and only then")
        if self.bins is not None and self.aggregate != "histogram":
            raise ValueError("'bins' is given with aggregate histogram only")
        if self.aggregate == "histogram" and self.group_by:
            raise ValueError("a histogram has no group_by (group with a count instead)")
        if isinstance(self.bins, list) and (
            not all(math.isfinite(b) for b in self.bins)
            or any(b >= c for b, c in zip(self.bins, self.bins[1:], strict=False))
        ):
            raise ValueError("'bins' as a list must be increasing finite edges")
        if len(set(self.group_by)) != len(self.group_by):
            raise ValueError("group_by names a column twice")
        return self

    @property
    def measured(self) -> str:
        """The column a sum, mean, quantile or histogram reads (:meth:`_fields_fit` requires one for every
        aggregate but count)."""
        return cast(str, self.column)

    def nodes(self) -> int:
        return sum(_count(node) for node in self.filters)


def _count(node: Any, depth: int = 1) -> int:
    if depth > MAX_DEPTH:
        raise QueryError(f"filters are nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, Filter):
        return 1
    if isinstance(node, Not):
        return 1 + _count(node.not_, depth + 1)
    children = node.and_ if isinstance(node, And) else node.or_
    return 1 + sum(_count(child, depth + 1) for child in children)


def _label(path: tuple[Any, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _clean(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the union tags pydantic puts after a list index.

    ``filters.0.and.and.1`` becomes ``filters.0.and.1``.
    """
    return tuple(
        part
        for index, part in enumerate(path)
        if not (index > 0 and isinstance(path[index - 1], int) and part in ("filter", "and", "or", "not"))
        and part != "filter"
    )


_UNIONS = {
    "value": "must be a number, text (at most 1000 characters), true/false, or for op 'in' a list of them",
    "bins": "must be a number of bins (1 to 1000) or a list of increasing edges",
}
_ALLOWED = {"query": list(Query.model_fields), "filter": ["column", "op", "value"]}


def _message(item: Mapping[str, Any]) -> str:
    path = _clean(tuple(item["loc"]))
    place = _label(path)
    kind = item["type"]
    if kind == "extra_forbidden":
        key = str(path[-1])
        allowed = _ALLOWED["query"] if len(path) == 1 else _ALLOWED["filter"]
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        where = f" in {_label(path[:-1])}" if len(path) > 1 else ""
        return f"unknown key '{key[:100]}'{where}{hint} (allowed: {', '.join(allowed)})"
    if kind == "missing":
        where = f" in {_label(path[:-1])}" if len(path) > 1 else ""
        return f"missing key '{path[-1]}'{where}"
    if kind == "literal_error" and path and path[-1] == "op":
        return f"{place}: unknown op {item['input']!r:.100} (allowed: {', '.join(OPS)}, also ≠ ≤ ≥)"
    if kind == "literal_error" and path == ("aggregate",):
        return f"aggregate: unknown aggregate {item['input']!r:.100} (allowed: {', '.join(AGGREGATES)})"
    for name, expected in _UNIONS.items():
        if name in path[:-1] or (name in path and kind.endswith("_type")):
            cut = path[: path.index(name) + 1]
            return f"{_label(cut)}: {expected}"
    if kind in ("float_type", "int_type", "bool_type", "string_type", "finite_number"):
        expected = {
            "float_type": "a number",
            "int_type": "a whole number",
            "bool_type": "true or false",
            "string_type": "text",
            "finite_number": "a finite number",
        }[kind]
        given = f"{item['input']!r:.100}"
        return f"{place}: must be {expected} (JSON's own type, not one written as another), got {given}"
    message = str(item["msg"]).removeprefix("Value error, ")
    return f"{place}: {message}" if place else message


def parse_query(body: Any) -> Query:
    """The query of a JSON body (already decoded), or :class:`QueryError` naming every problem."""
    if not isinstance(body, dict):
        raise QueryError('the query must be a JSON object such as {"aggregate": "count"}')
    try:
        query = Query.model_validate(body)
    except ValidationError as error:
        messages = list(dict.fromkeys(_message(item) for item in error.errors()))
        raise QueryError("; ".join(messages[:10])) from None
    except RecursionError:
        raise QueryError(f"filters are nested deeper than {MAX_DEPTH} levels") from None
    if query.nodes() > MAX_NODES:
        raise QueryError(f"filters have more than {MAX_NODES} nodes")
    return query


# --- checks against a dataset's schema ------------------------------------------------------------


def _unknown_column(name: str, columns: list[str], where: str) -> QueryError:
    close = difflib.get_close_matches(name, columns, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return QueryError(f"{where}: unknown column {name[:100]!r}{hint}")


def column_type(dtype: Any) -> str:
    """'number', 'text' or 'date' for a polars dtype."""
    if dtype.is_numeric():
        return "number"
    if dtype.is_temporal():
        return "date"
    return "text"


def _check_value(value: Any, kind: str, where: str) -> Any:
    """The value in the column's type (a date from ISO text), or QueryError."""
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise QueryError(
                f"{where}: the column is numeric, so the value must be a finite number, got {value!r:.100}"
            )
        return float(value)
    if kind == "date":
        try:
            return dt.date.fromisoformat(value) if isinstance(value, str) else _raise()
        except (ValueError, TypeError):
            raise QueryError(
                f"{where}: the column holds dates, so the value must be a date like '2020-01-31', "
                f"got {value!r:.100}"
            ) from None
    if not isinstance(value, str):
        raise QueryError(
            f"{where}: the column holds text, so the value must be text (in quotes), got {value!r:.100}"
        )
    return value


def _raise() -> Any:
    raise ValueError


def check_query(query: Query, kinds: dict[str, Kind], types: dict[str, str], protection: str) -> None:
    """Check ``query`` against a dataset: ``kinds`` maps each queryable column to its attribute
    kind, ``types`` to 'number', 'text' or 'date' (:func:`column_type`)."""
    columns = list(kinds)

    def walk(node: Any, where: str) -> None:
        if isinstance(node, Filter):
            if node.column not in kinds:
                raise _unknown_column(node.column, columns, f"{where}.column")
            kind = types[node.column]
            if (
                node.op in ("<", "<=", ">", ">=")
                and kind == "text"
                and kinds[node.column] is not Kind.ORDINAL
            ):
                raise QueryError(
                    f"{where}.op: '{node.op}' needs a numeric or date column, '{node.column}' holds text"
                )
            values = node.value if isinstance(node.value, list) else [node.value]
            for index, value in enumerate(values):
                _check_value(value, kind, f"{where}.value" + (f"[{index}]" if node.op == "in" else ""))
        elif isinstance(node, Not):
            walk(node.not_, f"{where}.not")
        else:
            name, children = ("and", node.and_) if isinstance(node, And) else ("or", node.or_)
            for index, child in enumerate(children):
                walk(child, f"{where}.{name}[{index}]")

    for index, node in enumerate(query.filters):
        walk(node, f"filters[{index}]")
    if query.column is not None:
        if query.column not in kinds:
            raise _unknown_column(query.column, columns, "column")
        if query.aggregate in ("sum", "mean", "quantile") and types[query.column] != "number":
            raise QueryError(
                f"column: {query.aggregate} needs a numeric column, '{query.column}' is "
                f"{kinds[query.column].value}"
            )
        if query.aggregate == "histogram":
            numeric = types[query.column] == "number" and kinds[query.column] is Kind.NUMERIC
            if numeric and query.bins is None:
                raise QueryError(
                    f"bins: a histogram of the numeric column '{query.column}' needs 'bins' (a "
                    "number of bins or the edges)"
                )
            if not numeric and query.bins is not None:
                raise QueryError(
                    f"bins: '{query.column}' is {kinds[query.column].value}: its histogram counts "
                    "each category, without bins"
                )
    for index, name in enumerate(query.group_by):
        if name not in kinds:
            raise _unknown_column(name, columns, f"group_by[{index}]")
        if kinds[name] not in (Kind.CATEGORICAL, Kind.ORDINAL):
            raise QueryError(
                f"group_by[{index}]: '{name}' is {kinds[name].value}; group_by takes categorical attributes "
                "(use a histogram with bins for a numeric one)"
            )
    if protection == "dp":
        if query.epsilon is None:
            raise QueryError(
                "epsilon: this dataset is protected by differential privacy: give the 'epsilon' to spend"
            )
    else:
        for key in ("epsilon", "delta"):
            if getattr(query, key) is not None:
                raise QueryError(
                    f"{key}: this dataset is protected by {protection}, not differential privacy: "
                    f"leave out '{key}'"
                )


__all__ = ["And", "Filter", "Not", "Or", "Query", "check_query", "column_type", "parse_query"]
