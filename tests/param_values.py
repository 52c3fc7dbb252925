"""Values that a parameters object's field must refuse, read from its type and bounds: the generic
tests of methods (tests/test_cli_anonymize.py) and measures (tests/test_measures.py) use them."""

from __future__ import annotations

import math
import types
import typing
from pathlib import Path
from typing import Annotated, Literal

import annotated_types
from pydantic import Strict


def _unwrap(annotation):
    """The base type of an annotation without Optional and Annotated, and the metadata met on the way."""
    metadata: list = []
    while True:
        if typing.get_origin(annotation) is Annotated:
            annotation, *more = typing.get_args(annotation)
            metadata += more
        elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        else:
            return annotation, metadata


def _admits(annotation, kind) -> bool:
    """Whether a union in ``annotation`` (under Annotated) has ``kind`` among its members."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and kind in typing.get_args(
        annotation
    )


def bad_values(field) -> list:
    """Values the field's type and bounds refuse: nonsense for choices and flags, NaN and infinity for
    real numbers, fractions for whole numbers, values beyond every bound, and wrong types."""
    base, inner = _unwrap(field.annotation)
    metadata = [*field.metadata, *inner]
    metadata += [m for item in list(metadata) for m in getattr(item, "metadata", [])]  # nested FieldInfo
    if typing.get_origin(base) is Literal:
        return ["nonsense", 1]
    if base is bool:
        return ["nonsense"]
    if base in (int, float):
        values: list = [math.nan, math.inf, "abc"] if base is float else [2.5, "abc"]
        if base is int and any(isinstance(m, Strict) and m.strict for m in metadata):
            values.append(True)  # a whole number: True is not read as 1
        for m in metadata:
            if isinstance(m, annotated_types.Ge):
                values.append(m.ge - 1)
            if isinstance(m, annotated_types.Gt):
                values.append(m.gt)
            if isinstance(m, annotated_types.Le):
                values.append(m.le + 1)
            if isinstance(m, annotated_types.Lt):
                values.append(m.lt)
        return values
    if base is str:
        return [5, *([""] if any(isinstance(m, annotated_types.MinLen) for m in metadata) else [])]
    if typing.get_origin(base) is dict:
        # A mapping (generalize's attribute_weights), which the command line writes a=2,b=0.5.
        return [5, "abc"]
    if base is Path or typing.get_origin(base) is list:
        # A list that may also be one whole number (recode's breaks: cut points or a number of
        # intervals) refuses a word instead.
        return ["abc"] if _admits(field.annotation, int) else [5]
    raise AssertionError(f"no bad value known for {base!r}: add one to bad_values")


def assert_fields_refuse_bad_values(spec, valid: dict) -> None:
    """Every field of a registered spec's parameters object refuses each of its bad values, with a
    message that names the field's option; ``valid`` completes the required fields."""
    from sdckit.errors import ConfigError
    from sdckit.params import option_name

    fields = spec.params.model_fields
    spec.params.parse(valid, method=spec.name)
    for name, field in fields.items():
        for value in bad_values(field):
            try:
                spec.params.parse(
                    {**valid, name: value},
                    spell=lambda field_name: option_name(field_name, fields.get(field_name)),
                    method=spec.name,
                )
            except ConfigError as error:
                option = option_name(name, field)
                assert any(p.startswith(option) for p in str(error).split("; ")), (name, value, error)
            else:
                raise AssertionError(f"{spec.name}: {name}={value!r} was accepted")
