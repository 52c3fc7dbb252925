"""Forms of the workbench, generated, never written per method.

:func:`param_fields` turns a parameters object (:class:`~sdckit.params.MethodParams`: a method's or a
measure's) into the fields of an HTML form: one per pydantic field, with its widget (a choice list for
a ``Literal`` or a flag, a text box otherwise), default, bounds and description as help text. The
values a form sends are converted as the command line converts its options
(:func:`values_from_form`) and validated by the parameters object itself, with the options spelled
as on the command line, so a bad value gives the message ``sdckit anonymize`` gives.

The configuration form is the attributes of a configuration file, one row per column of the data:
:func:`draft_yaml` writes the rows as the YAML file they stand for (one line per attribute), which
:func:`sdckit.config.load_config` then validates; :func:`errors_by_field` places each line of its
message next to the field it is about, and :func:`setting_errors` checks the YAML typed in a field
before it joins the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdckit.params import MethodParams, option_name, unwrap_annotation

#: The settings of an attribute the form edits, in the order of the configuration page.
ATTRIBUTE_SETTINGS = ("role", "kind", "public", "sensitivity", "values", "ranges", "hierarchy")
RISK_SETTINGS = ("alpha", "epsilon", "missing")
_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


# Parameters objects -> form fields ---------------------------------------------------------------


@dataclass
class FormField:
    """One field of a generated form: ``name`` (the parameter), ``label`` (its command-line option),
    ``widget`` ("select" or "text"), ``choices`` for a select, the ``default`` as text, ``help``."""

    name: str
    label: str
    widget: str
    help: str
    default: str
    choices: list[str] = field(default_factory=list)
    required: bool = False
    kind: str = "text"


def _bounds(info: Any) -> str:
    """The bounds of a field as text: ``≥ 1``, ``in [0, 1]``, ``> 0``."""
    low = high = ""
    for item in info.metadata:
        for attribute, sign in (("ge", "≥"), ("gt", ">")):
            if getattr(item, attribute, None) is not None:
                low = f"{sign} {getattr(item, attribute)}"
        for attribute, sign in (("le", "≤"), ("lt", "<")):
            if getattr(item, attribute, None) is not None:
                high = f"{sign} {getattr(item, attribute)}"
    return " and ".join(part for part in (low, high) if part)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | dict):
        return json.dumps(value)
    return str(value)


def param_fields(params: type[MethodParams]) -> list[FormField]:
    """The form fields of a parameters object, in the order of its fields."""
    fields = []
    for name, info in params.model_fields.items():
        base, choices = unwrap_annotation(info.annotation)
        required = info.is_required()
        default = None if required else info.get_default(call_default_factory=True)
        kind = {int: "whole number", float: "number", bool: "yes/no", Path: "file path"}.get(base, "text")
        if choices:
            kind = "one of " + ", ".join(map(str, choices))
        parts = [info.description or ""]
        bounds = _bounds(info)
        if bounds:
            parts.append(f"A {kind} {bounds}.")
        elif not choices:
            parts.append(f"A {kind}.")
        parts.append("Required." if required else f"Default: {_shown(default) or 'none'}.")
        if base is bool:
            widget, options = "select", ["true", "false"]
        elif choices:
            widget, options = "select", [str(choice) for choice in choices]
        else:
            widget, options = "text", []
        if widget == "select" and (default is None or required):
            options = ["", *options]  # "" keeps the default (none): the option is not given
        fields.append(
            FormField(
                name=name,
                label=option_name(name, info),
                widget=widget,
                help=" ".join(part for part in parts if part),
                default=_shown(default),
                choices=options,
                required=required,
                kind=kind,
            )
        )
    return fields


def values_from_form(params: type[MethodParams], form: Mapping[str, str]) -> dict[str, Any]:
    """The parameters a form gives (an empty field is not given: its default applies), converted
    as the command line converts its options (int, float, path, flag; anything else as text)."""
    given: dict[str, Any] = {}
    for name, info in params.model_fields.items():
        text = str(form.get(name, "")).strip()
        if not text:
            continue
        base, choices = unwrap_annotation(info.annotation)
        value: Any = text
        if base is bool:
            value = {"true": True, "false": False}.get(text.lower(), text)
        elif base is int and not choices:
            value = _convert(int, text)
        elif base is float:
            value = _convert(float, text)
        elif base is Path:
            value = Path(text)
        given[name] = value
    return given


def _convert(kind: type, text: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        return text  # the parameters object says what is wrong with it


def parse_params(params: type[MethodParams], form: Mapping[str, str], method: str) -> tuple[Any, dict]:
    """Validate a form's values: ``(parameters object, {})``, or ``(None, {field: message})`` with
    each problem next to its field ("" for a rule between fields), worded as the command line's."""
    from sdckit.errors import ConfigError

    given = values_from_form(params, form)
    fields = params.model_fields
    try:
        return params.parse(given, spell=lambda name: option_name(name, fields.get(name)), method=method), {}
    except ConfigError as error:
        return None, split_param_errors(params, str(error))


def split_param_errors(params: type[MethodParams], message: str) -> dict[str, str]:
    """A parameters object's message (problems joined by '; ') by field."""
    spelled = {option_name(name, info): name for name, info in params.model_fields.items()}
    placed: dict[str, list[str]] = {}
    for problem in message.split("; "):
        owner = ""
        for spelling, name in sorted(spelled.items(), key=lambda item: -len(item[0])):
            if re.match(rf"{re.escape(spelling)}([ :\[]|$)", problem):
                owner = name
                break
        if not owner and problem.startswith("did you mean") and placed:
            owner = list(placed)[-1]
        placed.setdefault(owner, []).append(problem)
    return {name: "; ".join(problems) for name, problems in placed.items()}


# The configuration form --------------------------------------------------------------------------


@dataclass
class AttributeRow:
    """One column of the data and what the form says of it (texts as typed; "" = not set)."""

    name: str
    dtype: str = ""
    distinct: int = 0
    missing: float = 0.0
    settings: dict[str, str] = field(default_factory=dict)

    def setting(self, key: str) -> str:
        return self.settings.get(key, "")


def _scalar(text: str) -> str:
    """A typed value in YAML: a number as written, anything else quoted (so it stays text)."""
    return text if _NUMBER.match(text) else json.dumps(text)


def _flow(text: str) -> str:
    """A typed mapping or list (``Yes: 1, No: 0`` or ``{Yes: 1}``) in YAML flow style, on one line."""
    flat = " ".join(text.split())
    return flat if flat.startswith(("{", "[")) else "{" + flat + "}"


def attribute_yaml(row: AttributeRow) -> str | None:
    """The attribute's line of the configuration (flow style), or None when nothing is set."""
    items = []
    for key in ATTRIBUTE_SETTINGS:
        text = row.setting(key).strip()
        if not text:
            continue
        if key in ("role", "kind"):
            items.append(f"{key}: {json.dumps(text)}")
        elif key in ("public", "sensitivity"):
            items.append(f"{key}: {_scalar(text)}")
        elif key in ("values", "ranges") or text.startswith("{"):
            items.append(f"{key}: {_flow(text)}")
        else:  # an ARX hierarchy file
            items.append(f"{key}: {json.dumps(text)}")
    if not items:
        return None
    return f"  {json.dumps(row.name)}: {{{', '.join(items)}}}"


def draft_yaml(
    rows: Sequence[AttributeRow], risk: Mapping[str, str], data: Mapping[str, Any]
) -> tuple[str, dict]:
    """The configuration the form stands for, and the line of each attribute in it."""
    lines = ["# written by sdckit ui", "attributes:"]
    at: dict[int, str] = {}
    for row in rows:
        line = attribute_yaml(row)
        if line is not None:
            lines.append(line)
            at[len(lines)] = row.name
    if len(lines) == 2:
        lines[-1] = "attributes: {}"
    risk_items = []
    for key in RISK_SETTINGS:
        text = str(risk.get(key, "")).strip()
        if text:
            risk_items.append(f"{key}: {_scalar(text) if key != 'missing' else json.dumps(text)}")
    if risk_items:
        lines.append(f"risk: {{{', '.join(risk_items)}}}")
        at[len(lines)] = "\x00risk"
    if data:
        lines.append(f"data: {json.dumps(dict(data))}")
        at[len(lines)] = "\x00data"
    return "\n".join(lines) + "\n", at


def rows_from_document(document: Any, base: Path | None) -> tuple[dict[str, dict[str, str]], dict, dict]:
    """The form's texts of a configuration document (as read from YAML): per attribute, the risk and
    the data sections. Hierarchy files are made absolute (relative to ``base``, the file's folder)."""
    attributes: dict[str, dict[str, str]] = {}
    described = document.get("attributes") or {} if isinstance(document, Mapping) else {}
    for name, settings in described.items():
        texts: dict[str, str] = {}
        for key, value in (settings or {}).items():
            if key in ("values", "ranges"):
                texts[key] = json.dumps(value)
            elif key == "hierarchy":
                if isinstance(value, str):
                    path = Path(value)
                    texts[key] = str(path if path.is_absolute() or base is None else (base / path).resolve())
                else:
                    texts[key] = json.dumps(value)
            else:
                texts[key] = _shown(value)
        attributes[str(name)] = texts
    risk = {key: _shown(value) for key, value in (document.get("risk") or {}).items()}
    data = dict(document.get("data") or {})
    return attributes, risk, data


_ATTRIBUTE = re.compile(r"^(?P<where>.*?:(?P<line>\d+): )?attribute '(?P<name>.*?)': (?P<rest>.*)$")
_HIERARCHY = re.compile(r"hierarchy for '(?P<name>.*?)'")
_LINE = re.compile(r"^.*?:(?P<line>\d+): ")


def setting_errors(rows: Sequence[AttributeRow]) -> dict[tuple[str, str], str]:
    """The settings typed as YAML (value weights, ranges, a hierarchy builder) that are not valid
    YAML, each by ``(attribute, setting)`` with a message about that field.

    Checked one field at a time, before the fields are written together as the configuration file:
    a brace left open in one attribute's hierarchy would otherwise be reported by the YAML parser at
    the next line of the generated file, that is under the next attribute, and at a line of a file
    the user never wrote (issue 32)."""
    from sdckit.config import _parse_yaml
    from sdckit.errors import ConfigError

    errors: dict[tuple[str, str], str] = {}
    for row in rows:
        for key in ("values", "ranges", "hierarchy"):
            text = row.setting(key).strip()
            if not text or (key == "hierarchy" and not text.startswith(("{", "["))):
                continue  # a hierarchy file's path is read (and reported) by the configuration
            try:
                _parse_yaml(_flow(text), "")
            except ConfigError as error:
                problem = re.sub(r"^:\d+: (YAML syntax error: )?", "", str(error))
                problem = problem.replace(" (first on line 1)", "").replace(" on line 1)", ")")
                errors[(row.name, key)] = (
                    f"attribute {row.name!r}: {key} is not valid YAML, got {text!r}: {problem}"
                )
    return errors


def errors_by_field(
    message: str, lines: Mapping[int, str], generated: str | None = None
) -> dict[tuple[str, str], str]:
    """Each line of a configuration message by ``(attribute, setting)``: the setting the line is
    about (``("", "")`` when it is about no attribute; ``(name, "")`` about the attribute as a whole).

    ``generated``: the path of the configuration file written from the form; a line's location in it
    (``config.yaml:4:``) is left out of the text, since the page places the line at its field and the
    user never wrote that file. Locations in the user's own files (a hierarchy file) stay."""
    location = re.compile(rf"^{re.escape(generated)}(:\d+)?: ") if generated else None
    placed: dict[tuple[str, str], list[str]] = {}
    for line in message.splitlines():
        key = ("", "")
        found = _ATTRIBUTE.match(line)
        hierarchy = _HIERARCHY.search(line)
        if found:
            rest = found.group("rest")
            setting = next((s for s in ATTRIBUTE_SETTINGS if rest.startswith(s)), "")
            if rest.startswith("weight of value"):
                setting = "values"
            elif rest.startswith("unknown key"):
                setting = ""
            key = (found.group("name"), setting)
        elif hierarchy:
            key = (hierarchy.group("name"), "hierarchy")
        else:
            number = _LINE.match(line)
            owner = lines.get(int(number.group("line")), "") if number else ""
            key = (owner, "")
        placed.setdefault(key, []).append(location.sub("", line) if location else line)
    return {key: "\n".join(found) for key, found in placed.items()}
