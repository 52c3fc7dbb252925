"""The server configuration: where the ledger lives, which data sources and datasets are served, how.

.. code-block:: yaml

    store: ledger.sqlite                 # the ledger: keys, spends, answered queries (SQLite)
    max_body_bytes: 65536                # largest query body the server reads
    max_failed_logins: 10                # per client address and minute; then 429 for a minute
    sources:                             # optional: settings of a data file as a whole
      people:
        data: people.csv
        total_budget: 20.0               # dp: epsilon of all analysts together on this source
        allow_mixed_protection: false    # serve it under more than one protection (unsafe)
    datasets:
      people:
        source: people                   # a source above, or `data: people.csv` directly
        config: people.yaml              # the usual attribute configuration (kinds, roles)
        protection: dp                   # dp | restriction | camouflage
        budget: 1.0                      # dp: total epsilon per analyst on the data source
        mechanism: laplace               # dp: laplace (epsilon-DP) | gaussian ((epsilon, delta)-DP)
        delta: 1.0e-6                    # dp, gaussian: the largest delta of one answer
        delta_budget: 1.0e-5             # dp, gaussian: total delta per analyst on the data source
        max_epsilon_per_query: 0.5       # dp: largest epsilon one query may spend
        bounds: {age: [17, 90]}          # dp: clamping bounds of numeric attributes
        domains: {sex: [Female, Male]}   # dp: the group-by keys of categorical attributes
        min_query_set: 10                # restriction: the threshold k
        width: 0.1                       # camouflage: relative half-width of each record's interval
        decoys: 1                        # camouflage: other possible values per categorical value
        confidential: [income]           # restriction, camouflage: the confidential attributes

Paths are relative to the YAML file. Every key is checked: an unknown key, or a key that does not
belong to the dataset's protection (``budget`` on a restriction dataset), is an error naming the
file and line. Budgets, audits and camouflage belong to the **data source** (the file's content,
by its SHA-256), whatever the entries that serve it are called: :func:`group_sources` reads the
files and refuses a source served under two protections (unless ``allow_mixed_protection``) or
under disagreeing settings. The attributes named in ``bounds``, ``domains`` and ``confidential``
are checked against the attribute configuration when the service loads the data
(:mod:`sdckit.query.service`).
"""

from __future__ import annotations

import difflib
import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from sdckit._files import MAX_CONFIG_BYTES, read_text_file
from sdckit.config import _format_error, _line_of, _parse_yaml, _Strict, _where
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
    "delta_budget": "dp",
    "min_query_set": "restriction",
    "width": "camouflage",
    "decoys": "camouflage",
}
_REQUIRED = {"dp": ("budget",), "restriction": ("min_query_set",), "camouflage": ("width",)}


Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]


class _Checked(_Strict):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _SourceModel(_Checked):
    data: StrictStr
    total_budget: Positive | None = None
    allow_mixed_protection: StrictBool = False


class _DatasetModel(_Checked):
    data: StrictStr | None = None
    source: StrictStr | None = None
    config: StrictStr
    protection: Protection
    budget: Positive | None = None
    mechanism: Literal["laplace", "gaussian"] | None = None
    delta: Annotated[float, Field(gt=0, lt=1)] | None = None
    delta_budget: Annotated[float, Field(gt=0, lt=1)] | None = None
    max_epsilon_per_query: Positive | None = None
    bounds: dict[StrictStr, Annotated[list[float], Field(min_length=2, max_length=2)]] = {}
    domains: dict[StrictStr, Annotated[list[Scalar], Field(min_length=1, max_length=10_000)]] = {}
    min_query_set: Annotated[int, Field(ge=1)] | None = None
    width: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] | None = None
    decoys: Annotated[int, Field(ge=1, le=1000)] | None = None
    confidential: list[StrictStr] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> _DatasetModel:
        if (self.data is None) == (self.source is None):
            raise ValueError("give either 'data' (a file) or 'source' (an entry of sources), not both")
        if self.confidential is not None and self.protection == "dp":
            raise ValueError("'confidential' applies to protections restriction and camouflage, not dp")
        for key, protection in _ONLY.items():
            if key in self.model_fields_set and self.protection != protection:
                raise ValueError(f"'{key}' applies to protection {protection}, not {self.protection}")
        for key in _REQUIRED[self.protection]:
            if getattr(self, key) is None:
                raise ValueError(f"protection {self.protection} needs '{key}'")
        if self.mechanism == "gaussian" and self.delta is None:
            raise ValueError("mechanism gaussian needs 'delta' (the largest delta of one answer)")
        if self.mechanism == "gaussian" and self.delta_budget is None:
            raise ValueError(
                "mechanism gaussian needs 'delta_budget' (the total delta per analyst: every answer's "
                "delta is spent from it)"
            )
        for key in ("delta", "delta_budget"):
            if getattr(self, key) is not None and self.mechanism != "gaussian":
                raise ValueError(f"'{key}' applies to mechanism gaussian only")
        if self.delta is not None and self.delta_budget is not None and self.delta > self.delta_budget:
            raise ValueError("'delta' (of one answer) is above 'delta_budget' (of all answers)")
        for name, (lower, upper) in self.bounds.items():
            if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
                raise ValueError(
                    f"bounds of '{name}' must be two finite numbers [lower, upper] with lower < upper"
                )
        return self


class _ServerModel(_Checked):
    store: StrictStr
    max_body_bytes: Annotated[int, Field(ge=256, le=16 * 1024 * 1024)] = 65536
    max_failed_logins: Annotated[int, Field(ge=1, le=1_000_000)] = 10
    sources: dict[StrictStr, _SourceModel] = {}
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
    delta_budget: float | None = None
    max_epsilon_per_query: float | None = None
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    domains: dict[str, list[Any]] = field(default_factory=dict)
    min_query_set: int | None = None
    width: float | None = None
    decoys: int = 1
    confidential: tuple[str, ...] | None = None
    source: str | None = None
    location: str = ""


@dataclass(frozen=True)
class SourceConfig:
    """A data file's settings as a whole (an entry of ``sources``, or the defaults)."""

    name: str
    data: Path
    total_budget: float | None = None
    allow_mixed_protection: bool = False
    location: str = ""


@dataclass(frozen=True)
class ServerConfig:
    """The parsed server configuration (:func:`load_server_config`)."""

    store: Path
    datasets: dict[str, DatasetConfig]
    max_body_bytes: int = 65536
    path: str | None = None
    sources: dict[str, SourceConfig] = field(default_factory=dict)
    max_failed_logins: int = 10


def _format_errors(error: ValidationError, source: str, lines: dict) -> str:
    """One line per problem, in the order of the file, with the allowed keys of unknown ones."""
    problems = set()
    for item in error.errors():
        path = tuple(item["loc"])
        line = _line_of(lines, path)
        where = f"{source}:{line}: " if line is not None else f"{source}: "
        if item["type"] == "extra_forbidden":
            models: dict[str, type[BaseModel]] = {"datasets": _DatasetModel, "sources": _SourceModel}
            model = models.get(str(path[0]) if len(path) == 3 else "", _ServerModel)
            allowed = list(model.model_fields)
            key = str(path[-1])
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            place = f" in {path[0]}.{path[1]}" if len(path) == 3 else ""
            problems.add(
                (line or 0, f"{where}unknown key '{key}'{place}{hint} (allowed: {', '.join(allowed)})")
            )
        elif item["type"] == "value_error" and len(path) == 2 and path[0] in ("datasets", "sources"):
            message = str(item["msg"]).removeprefix("Value error, ")
            what = "dataset" if path[0] == "datasets" else "source"
            problems.add((line or 0, f"{where}{what} '{path[1]}': {message}"))
        else:
            problems.add(_format_error(item, source, lines))
    return "\n".join(text for _, text in sorted(problems))


#: What a dataset's name may hold: it is a segment of a URL path, written as it is.
NAME_RULE = (
    "1 to 200 letters, digits, '_', '-', '.' and '~' (not '.' or '..' alone; no '/', '?', '#', '%', "
    "spaces or other characters a URL path cannot carry as they are)"
)


def dataset_name_ok(name: str) -> bool:
    """Whether ``name`` can be a dataset's name: a URL path segment that needs no escaping
    (:data:`NAME_RULE`), so that /datasets/NAME/query reaches it from every client."""
    return (
        0 < len(name) <= 200
        and name not in (".", "..")
        and all((c.isascii() and c.isalnum()) or c in "_-.~" for c in name)
    )


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
    bad = [
        f"{_where(label, lines, ('datasets', name))}dataset {name!r:.100}: a dataset's name is a part "
        f"of its address (/datasets/NAME/query), so it must be {NAME_RULE}"
        for name in model.datasets
        if not dataset_name_ok(name)
    ]
    if bad:
        raise ConfigError("\n".join(bad))
    base = Path(path).resolve().parent
    sources = {}
    for name, source in model.sources.items():
        line = lines.get(("sources", name))
        sources[name] = SourceConfig(
            name=name,
            data=base / source.data,
            total_budget=source.total_budget,
            allow_mixed_protection=source.allow_mixed_protection,
            location=f"{label}:{line}" if line is not None else label,
        )
    datasets = {}
    for name, entry in model.datasets.items():
        line = lines.get(("datasets", name))
        where = f"{label}:{line}" if line is not None else label
        if entry.source is not None and entry.source not in sources:
            known = ", ".join(sources) or "none: add a 'sources' section"
            raise ConfigError(
                f"{where}: dataset '{name}': unknown source '{entry.source}' (sources: {known})"
            )
        # _DatasetModel gives either a source or data
        data = sources[entry.source].data if entry.source is not None else base / cast(str, entry.data)
        datasets[name] = DatasetConfig(
            name=name,
            data=data,
            config=base / entry.config,
            protection=entry.protection,
            budget=entry.budget,
            mechanism=entry.mechanism or "laplace",
            delta=entry.delta,
            delta_budget=entry.delta_budget,
            max_epsilon_per_query=entry.max_epsilon_per_query,
            bounds={key: (float(low), float(high)) for key, (low, high) in entry.bounds.items()},
            domains={key: list(values) for key, values in entry.domains.items()},
            min_query_set=entry.min_query_set,
            width=entry.width,
            decoys=entry.decoys or 1,
            confidential=tuple(entry.confidential) if entry.confidential is not None else None,
            source=entry.source,
            location=where,
        )
    return ServerConfig(
        store=base / model.store,
        datasets=datasets,
        max_body_bytes=model.max_body_bytes,
        path=label,
        sources=sources,
        max_failed_logins=model.max_failed_logins,
    )


# --- data sources ------------------------------------------------------------------------------------


def content_hash(path: Path, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's bytes (hex): the identity of a data source."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while block := handle.read(chunk):
                digest.update(block)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the data file: {error.strerror}") from None
    return digest.hexdigest()


@dataclass(frozen=True)
class DataSource:
    """One data file (by content) and the dataset entries that serve it."""

    id: str
    data: Path
    entries: tuple[str, ...]
    settings: SourceConfig


#: Settings that every entry of one protection over one data source must share (the budget, the
#: audit and the camouflage belong to the source, not to an entry).
_SHARED = {
    "dp": ("budget", "delta_budget"),
    "restriction": ("min_query_set", "confidential"),
    "camouflage": ("width", "decoys", "confidential"),
}


def group_sources(config: ServerConfig) -> tuple[dict[str, DataSource], list[str]]:
    """The data sources of a configuration, by content hash, and the warnings to print at start.

    Reads every data file once. Raises :class:`ConfigError` (naming both entries) when one source is
    served under two protections without ``allow_mixed_protection: true`` on its ``sources`` entry,
    when two entries of one protection disagree on a setting that belongs to the source
    (``budget``, ``delta_budget``; ``min_query_set``; ``width``, ``decoys``, ``confidential``), or
    when two ``sources`` entries name the same content.
    """
    hashes: dict[Path, str] = {}

    def identity(path: Path) -> str:
        if path not in hashes:
            hashes[path] = content_hash(path)
        return hashes[path]

    declared: dict[str, SourceConfig] = {}
    for source in config.sources.values():
        key = identity(source.data)
        if key in declared:
            raise ConfigError(
                f"{source.location}: source '{source.name}' has the same content as source "
                f"'{declared[key].name}' ({declared[key].location}): one data source, one entry"
            )
        declared[key] = source
    members: dict[str, list[DatasetConfig]] = {}
    for entry in config.datasets.values():
        members.setdefault(identity(entry.data), []).append(entry)
    warnings = []
    sources = {}
    for key, entries in members.items():
        settings = declared.get(key) or SourceConfig(name=entries[0].data.name, data=entries[0].data)
        first: dict[str, DatasetConfig] = {}
        for entry in entries:
            other = first.setdefault(entry.protection, entry)
            for setting in _SHARED[entry.protection]:
                if getattr(entry, setting) != getattr(other, setting):
                    raise ConfigError(
                        f"{entry.location}: datasets '{other.name}' ({other.location}) and "
                        f"'{entry.name}' serve the same data ({entry.data.name}) under "
                        f"{entry.protection} with different '{setting}' ({getattr(other, setting)} and "
                        f"{getattr(entry, setting)}): it belongs to the data source, give both the same"
                    )
        if len(first) > 1:
            a, b = list(first.values())[:2]
            text = (
                f"datasets '{a.name}' ({a.location}) and '{b.name}' ({b.location}) serve the same data "
                f"({a.data.name}, sha256 {key[:12]}) under {a.protection} and under {b.protection}"
            )
            if not settings.allow_mixed_protection:
                raise ConfigError(
                    f"{text}: the answers of one protection help defeat the other (exact or interval "
                    "answers next to differentially private ones). Serve each data source under one "
                    "protection, or declare it under 'sources' with allow_mixed_protection: true"
                )
            warnings.append(
                f"{text} (allow_mixed_protection: true): the guarantees of each protection no longer "
                "hold on their own"
            )
        if settings.total_budget is not None and "dp" not in first:
            raise ConfigError(
                f"{settings.location}: source '{settings.name}' has a total_budget but no dp dataset"
            )
        sources[key] = DataSource(
            id=key, data=entries[0].data, entries=tuple(e.name for e in entries), settings=settings
        )
    for key, source in declared.items():
        if key not in members:
            raise ConfigError(f"{source.location}: source '{source.name}' is not served by any dataset")
    return sources, warnings


__all__ = [
    "DataSource",
    "DatasetConfig",
    "ServerConfig",
    "SourceConfig",
    "content_hash",
    "group_sources",
    "load_server_config",
]
