"""The server configuration: where the ledger lives and which datasets are served, how protected.

.. code-block:: yaml

    store: ledger.sqlite                 # budget ledger, API keys and query log (SQLite, WAL)
    max_body_bytes: 65536                # largest query body the server reads
    datasets:
      people:
        data: people.csv                 # CSV or Parquet, read once, read-only
        config: people.yaml              # the usual attribute configuration (kinds, roles)
        protection: dp                   # dp | restriction | camouflage
        budget: 1.0                      # dp: total epsilon per analyst (sequential composition)
        mechanism: laplace               # dp: laplace (epsilon-DP) | gaussian ((epsilon, delta)-DP)
        delta: 1.0e-6                    # dp, gaussian: the delta of each answer
        max_epsilon_per_query: 0.5       # dp: largest epsilon one query may spend
        bounds: {age: [17, 90]}          # dp: clamping bounds of numeric attributes
        domains: {sex: [Female, Male]}   # dp: the group-by keys of categorical attributes
        min_query_set: 10                # restriction: the threshold k
        width: 0.1                       # camouflage: relative half-width (0.1 = +-10% per record)

Paths are relative to the YAML file. Every key is checked: an unknown key, or a key that does not
belong to the dataset's protection (``budget`` on a restriction dataset), is an error naming the
file and line. The attributes named in ``bounds`` and ``domains`` are checked against the attribute
configuration when the service loads the data (:mod:`sdckit.query.service`).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, StrictFloat, StrictInt, StrictStr, ValidationError, model_validator

from sdckit._files import MAX_CONFIG_BYTES, read_text_file
from sdckit.config import _format_error, _line_of, _parse_yaml, _Strict
from sdckit.errors import ConfigError

Protection = Literal["dp", "restriction", "camouflage"]
Scalar = StrictStr | StrictInt | StrictFloat

#: Keys only one protection accepts.
_ONLY = {
    "budget": "dp",
    "mechanism": "dp",
    "delta": "dp",
    "max_epsilon_per_query": "dp",
    "bounds": "dp",
    "min_query_set": "restriction",
    "width": "camouflage",
}
_REQUIRED = {"dp": ("budget",), "restriction": ("min_query_set",), "camouflage": ("width",)}


class _DatasetModel(_Strict):
    data: StrictStr
    config: StrictStr
    protection: Protection
    budget: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    mechanism: Literal["laplace", "gaussian"] | None = None
    delta: Annotated[float, Field(gt=0, lt=1)] | None = None
    max_epsilon_per_query: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    bounds: dict[StrictStr, tuple[float, float]] = {}
    domains: dict[StrictStr, Annotated[list[Scalar], Field(min_length=1, max_length=10_000)]] = {}
    min_query_set: Annotated[int, Field(ge=1)] | None = None
    width: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> _DatasetModel:
        for key, protection in _ONLY.items():
            if key in self.model_fields_set and self.protection != protection:
                raise ValueError(f"'{key}' applies to protection {protection}, not {self.protection}")
        for key in _REQUIRED[self.protection]:
            if getattr(self, key) is None:
                raise ValueError(f"protection {self.protection} needs '{key}'")
        if self.mechanism == "gaussian" and self.delta is None:
            raise ValueError("mechanism gaussian needs 'delta' (the delta of each answer)")
        if self.delta is not None and self.mechanism != "gaussian":
            raise ValueError("'delta' applies to mechanism gaussian only")
        for name, (lower, upper) in self.bounds.items():
            if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
                raise ValueError(
                    f"bounds of '{name}' must be two finite numbers [lower, upper] with lower < upper"
                )
        return self


class _ServerModel(_Strict):
    store: StrictStr
    max_body_bytes: Annotated[int, Field(ge=256, le=16 * 1024 * 1024)] = 65536
    datasets: Annotated[dict[StrictStr, _DatasetModel], Field(min_length=1)]


@dataclass(frozen=True)
class DatasetConfig:
    """One served dataset, paths resolved; ``location`` is "file:line" of its entry, for messages."""

    name: str
    data: Path
    config: Path
    protection: str
    budget: float | None = None
    mechanism: str = "laplace"
    delta: float | None = None
    max_epsilon_per_query: float | None = None
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    domains: dict[str, list[Any]] = field(default_factory=dict)
    min_query_set: int | None = None
    width: float | None = None
    location: str = ""


@dataclass(frozen=True)
class ServerConfig:
    """The parsed server configuration (:func:`load_server_config`)."""

    store: Path
    datasets: dict[str, DatasetConfig]
    max_body_bytes: int = 65536
    path: str | None = None


def _format_errors(error: ValidationError, source: str, lines: dict) -> str:
    """One line per problem, in the order of the file, with the allowed keys of unknown ones."""
    problems = set()
    for item in error.errors():
        path = tuple(item["loc"])
        line = _line_of(lines, path)
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        if item["type"] == "extra_forbidden":
            model = _DatasetModel if len(path) == 3 and path[0] == "datasets" else _ServerModel
            allowed = list(model.model_fields)
            key = str(path[-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            place = " in datasets." + str(path[1]) if len(path) == 3 else ""
            problems.add(
                (line or 0, f"{where}unknown key '{key}'{place}{hint} (allowed: {', '.join(allowed)})")
            )
        elif item["type"] == "value_error" and len(path) == 2 and path[0] == "datasets":
            message = str(item["msg"]).removeprefix("Value error, ")
            problems.add((line or 0, f"{where}dataset '{path[1]}': {message}"))
        else:
            problems.add(_format_error(item, source, lines))
    return "\n".join(text for _, text in sorted(problems))


def load_server_config(path: str | Path) -> ServerConfig:
    """Read and check a server configuration file; raise :class:`ConfigError` naming file and line."""
    label = str(path)
    text = read_text_file(
        path,
        label,
        "server configuration file",
        ConfigError,
        max_bytes=MAX_CONFIG_BYTES,
        missing=f"{label}: no such server configuration file",
    )
    document, lines = _parse_yaml(text, label)
    if not isinstance(document, dict):
        raise ConfigError(f"{label}: the server configuration must be a mapping with 'store' and 'datasets'")
    try:
        model = _ServerModel.model_validate(document)
    except ValidationError as error:
        raise ConfigError(_format_errors(error, label, lines)) from None
    base = Path(path).resolve().parent
    datasets = {}
    for name, entry in model.datasets.items():
        line = lines.get(("datasets", name))
        datasets[name] = DatasetConfig(
            name=name,
            data=base / entry.data,
            config=base / entry.config,
            protection=entry.protection,
            budget=entry.budget,
            mechanism=entry.mechanism or "laplace",
            delta=entry.delta,
            max_epsilon_per_query=entry.max_epsilon_per_query,
            bounds={key: (float(low), float(high)) for key, (low, high) in entry.bounds.items()},
            domains={key: list(values) for key, values in entry.domains.items()},
            min_query_set=entry.min_query_set,
            width=entry.width,
            location=f"{label}:{line}" if line is not None else label,
        )
    return ServerConfig(
        store=base / model.store, datasets=datasets, max_body_bytes=model.max_body_bytes, path=label
    )


__all__ = ["DatasetConfig", "ServerConfig", "load_server_config"]
