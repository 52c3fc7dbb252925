"""Recipes: how a release was made, written so that it can be made again.

Every release summary records a ``recipe``::

    {"sdckit_version": "0.1.0",
     "steps": [{"method": "generalize", "k": 5, "suppression_limit": 0.02, ...every parameter...}],
     "seed": null,                       # the seed of the seeded steps (null when none is seeded)
     "config": {"path": "adult.yaml", "text": "...the configuration file as read..."},
     "input": {"rows": 30162, "columns": [["age", "Int64"], ...], "sha256": "..."},
     "replays_exactly": true}

A plan is the same without the figures: ``steps: [{method: generalize, k: 5}, {method:
local-suppression, k: 5}]``, parameter names as in the methods' parameter objects (the command-line
options with ``_`` for ``-``). :func:`protect` runs the steps in order, each step's release feeding the
next, and reports every step's figures and the final state. Replaying the recipe of any run on the same
data reproduces the release bit for bit, except a step bounded by wall-clock time (the quasi-sensitive
search with a time limit), whose recipe says ``replays_exactly: false``.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from sdckit.errors import ConfigError, shown
from sdckit.params import spell
from sdckit.table import Role, Table

RECIPE_KEYS = ("steps",)
PLAN_KEYS = ("steps", "risk_threshold")


def fingerprint(table: Table) -> dict[str, Any]:
    """Rows, columns (name and type) and a SHA-256 of the data's content (Arrow IPC of the frame)."""
    buffer = io.BytesIO()
    table.data.write_ipc(buffer, compression="uncompressed")
    return {
        "rows": table.n_records,
        "columns": [[name, str(dtype)] for name, dtype in table.data.schema.items()],
        "sha256": hashlib.sha256(buffer.getvalue()).hexdigest(),
    }


def input_mismatch(record: Mapping[str, Any], table: Table) -> str | None:
    """How ``table`` differs from the input a recipe records (its fingerprint's rows, column names and,
    when the columns' types are the same, content hash), or None when it matches or the recipe records
    no input. The types differ when the data was read with another configuration: then only the rows
    and names are compared."""
    recorded = record.get("input")
    if not isinstance(recorded, Mapping):
        return None
    rows = recorded.get("rows")
    if isinstance(rows, int) and not isinstance(rows, bool) and rows != table.n_records:
        return f"it was made on {rows:,} records, this data has {table.n_records:,}"
    current = fingerprint(table)
    columns = recorded.get("columns")
    if isinstance(columns, list):
        names = [str(column[0]) for column in columns if isinstance(column, list | tuple) and column]
        now = [name for name, _ in current["columns"]]
        if names != now:
            return (
                f"it was made on the columns {shown(', '.join(names))}, this data has {shown(', '.join(now))}"
            )
        if [list(column) for column in columns] != current["columns"]:
            return None
    sha256 = recorded.get("sha256")
    if isinstance(sha256, str) and sha256 != current["sha256"]:
        return "it was made on other values (the SHA-256 of the records differs)"
    return None


def config_record(config: Any) -> dict[str, Any] | None:
    """The configuration as read: its path and its text (None without a configuration file)."""
    if config is None or getattr(config, "path", None) is None:
        return None
    try:
        text = Path(config.path).read_text(encoding="utf-8")
    except OSError:
        text = None
    return {"path": str(config.path), "text": text}


@dataclass(frozen=True)
class Step:
    """One step of a plan: a registered method and its validated parameters."""

    spec: Any
    params: Any

    def to_recipe(self) -> dict[str, Any]:
        return {"method": self.spec.name, **self.params.to_recipe()}


def split_attack_step(steps: Any, where: str = "recipe") -> tuple[Any, dict[str, dict[str, Any]] | None]:
    """A plan's steps without its last step when that is an attack step (``{attack: {singling-out:
    {max_risk: 0.05}, ...}}``: the attacks to run on the final release and their parameters), and
    that step's mapping (None when the plan has none). An attack step anywhere but last is an error;
    the attacks and their parameters are validated here, before any step runs."""
    if not isinstance(steps, list):
        return steps, None
    placed = [
        number for number, step in enumerate(steps, start=1) if isinstance(step, Mapping) and "attack" in step
    ]
    if not placed:
        return steps, None
    if placed != [len(steps)] or len(steps) < 2:
        raise ConfigError(
            f"{where}: step {placed[0]}: an attack step comes last, after at least one method step"
        )
    last = dict(steps[-1])
    attacks = last.pop("attack")
    if last:
        raise ConfigError(
            f"{where}: step {len(steps)}: an attack step has the key attack only, got {sorted(last)}"
        )
    if not isinstance(attacks, Mapping) or not attacks:
        raise ConfigError(
            f"{where}: step {len(steps)}: attack must map attack names to their parameters, "
            f"e.g. {{singling-out: {{max_risk: 0.05}}}}, got {attacks!r}"
        )
    from sdckit.attack.base import validate_attacks

    settings = {str(name): dict(values or {}) for name, values in attacks.items()}
    validate_attacks(settings, where=f"{where}: step {len(steps)}")
    return steps[:-1], settings


def parse_steps(steps: Any, where: str = "recipe") -> list[Step]:
    """Validate a plan's ``steps`` (a list of mappings with a ``method`` key) against the registry."""
    from sdckit.anonymize import METHODS

    if not isinstance(steps, list) or not steps:
        raise ConfigError(
            f"{where}: steps must be a non-empty list of {{method: ..., parameters}}, got {steps!r}"
        )
    parsed = []
    for number, step in enumerate(steps, start=1):
        label = f"{where}: step {number}"
        if not isinstance(step, Mapping) or "method" not in step:
            raise ConfigError(f"{label} must be a mapping with a method key, got {step!r}")
        values = dict(step)
        name = values.pop("method")
        if name not in METHODS:
            raise ConfigError(f"{label}: {METHODS.unknown_message(name)}")
        spec = METHODS.get(name)
        parsed.append(Step(spec, spec.params.parse(values, where=f"{label} ({name})", method=name)))
    return parsed


def load_plan(path: str | Path) -> tuple[list[Step], dict[str, Any]]:
    """Read a plan (YAML or JSON with ``steps``), a recipe, or the summary JSON of an earlier run
    (whose ``recipe`` is replayed). Returns the steps and the plan's other settings."""
    from sdckit.config import read_document

    label = str(path)
    document = read_document(path, what="recipe")
    if isinstance(document, Mapping) and "recipe" in document and isinstance(document["recipe"], Mapping):
        document = document["recipe"]  # the summary JSON of an earlier run
    if not isinstance(document, Mapping) or "steps" not in document:
        raise ConfigError(f"{label}: a recipe must be a mapping with steps (or a summary JSON with a recipe)")
    known = {
        "steps",
        "risk_threshold",
        "applied_to",
        "sdckit_version",
        "seed",
        "config",
        "input",
        "replays_exactly",
        "transformation",
    }
    unknown = sorted(set(document) - known)
    if unknown:
        raise ConfigError(f"{label}: unknown key {unknown[0]!r}; a recipe has {', '.join(sorted(known))}")
    steps, attack = split_attack_step(document["steps"], where=label)
    settings = {"risk_threshold": document.get("risk_threshold"), "attack": attack}
    return parse_steps(steps, where=label), settings


def recipe(steps: Sequence[Step], table: Table | None, config: Any = None) -> dict[str, Any]:
    """The recipe of a run of ``steps`` (with parameters as resolved by the run) on ``table`` (None:
    the records were never in memory together, so they have no fingerprint)."""
    from sdckit import __version__

    seeds = [step.params.seed for step in steps if "seed" in type(step.params).model_fields]
    return {
        "sdckit_version": __version__,
        "steps": [step.to_recipe() for step in steps],
        "seed": seeds[0] if len(seeds) == 1 else (seeds or None),
        "config": config_record(config),
        "input": fingerprint(table) if table is not None else None,
        "replays_exactly": all(step.spec.exact_replay(step.params) for step in steps),
    }


@dataclass
class Protection:
    """The result of :func:`protect`: every step's release and figures, the final table and state."""

    releases: list[Any]
    steps: list[dict[str, Any]]
    final: dict[str, Any]
    recipe: dict[str, Any]
    table: Table
    violations: list[str] = field(default_factory=list)
    #: The figures of the plan's attack step on the final release (``AttackReport.summary()``), if any.
    attack: dict[str, Any] | None = None


def _step_figures(
    spec: Any, release: Any, released: Table, threshold: float | None, config: Any
) -> dict[str, Any]:
    from sdckit.utility import release_ncp

    figures: dict[str, Any] = {"method": spec.name, "records": released.n_records}
    cells = getattr(release, "suppressed_cells", None)
    figures["suppressed_cells"] = int(np.count_nonzero(cells)) if cells is not None else 0
    figures["suppressed_records"] = int(getattr(release, "n_suppressed", 0))
    figures["equivalence_classes"] = _classes(released)
    figures["ncp"] = release_ncp(release) if getattr(release, "cell_penalty", None) is not None else None
    figures["above_threshold"] = _above(released, threshold, config)
    return figures


def _classes(table: Table) -> int | None:
    from sdckit.frequency import group_records

    names = [a.name for a in table.schema.with_role(Role.QUASI_IDENTIFIER) if a.name in table.data.columns]
    if not names:
        return None
    return int(len(group_records(table.data, names, table.data.schema).sizes))


def _above(table: Table, threshold: float | None, config: Any) -> int | None:
    """Records whose combined risk D(r) exceeds the threshold (None when not measurable)."""
    from sdckit.risk.combined import combined_risk

    if threshold is None:
        return None
    risk = getattr(config, "risk", None)
    try:
        result = combined_risk(
            table,
            alpha=risk.alpha if risk else 100.0,
            epsilon=risk.epsilon if risk else 0.01,
            missing=risk.missing if risk else "wildcard",
        )
    except ConfigError:
        return None
    return int(np.count_nonzero(result.risk > threshold))


def protect(
    table: Table,
    steps: Sequence[Step | Mapping[str, Any]],
    *,
    config: Any = None,
    risk_threshold: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    stage: Callable[[str], None] | None = None,
    attack: Mapping[str, Mapping[str, Any]] | None = None,
) -> Protection:
    """Run ``steps`` in order on ``table``, each step's release feeding the next.

    ``attack``: the attacks to run on the final release against ``table`` (name -> parameters, as a
    plan's last step ``{attack: {...}}`` gives them; :mod:`sdckit.attack`); an attack that does not
    show that the release holds (a ``max_risk`` it may exceed) is a violation.

    ``steps``: :class:`Step` objects or plan mappings (``{"method": "generalize", "k": 5}``).
    ``risk_threshold``: records above it (combined risk D(r), the configuration's risk settings) are
    counted after every step; default: the ``delta`` of the first targeted-suppression step, else none.
    The final state's NCP is the mean over records and the configuration's quasi-identifiers
    (``ncp_attributes``) of the cellwise maximum of the steps' cell penalties (a cell suppressed by
    any step counts 1), when every step kept every record; so it is never below the NCP of a step
    over those attributes. Its ``suppressed_cells`` counts the cells any step suppressed, once each.
    """
    from sdckit.anonymize.base import Context, run_method

    plain, attack_step = split_attack_step(list(steps), where="steps")
    if attack_step is not None:
        if attack:
            raise ConfigError("steps end with an attack step and attack is given too: give one of them")
        attack = attack_step
    parsed = [step if isinstance(step, Step) else parse_steps([step])[0] for step in plain]
    if risk_threshold is None:
        deltas = [s.params.delta for s in parsed if s.spec.name == "targeted-suppression"]
        risk_threshold = deltas[0] if deltas else None
    context = Context(config=config, progress=progress, stage=stage)
    current = table
    releases: list[Any] = []
    figures: list[dict[str, Any]] = []
    resolved: list[Step] = []
    violations: list[str] = []
    for step in parsed:
        if stage is not None:
            stage(f"step {len(releases) + 1}: {step.spec.name}")
        release = run_method(step.spec, current, step.params, context)
        released = step.spec.released(release)
        summary = step.spec.summary(release)
        violation = step.spec.violation(release, summary)
        if violation:
            violations.append(f"step {len(releases) + 1} ({step.spec.name}): {violation}")
        releases.append(release)
        resolved.append(Step(step.spec, release.params))
        figures.append(
            {**_step_figures(step.spec, release, released, risk_threshold, config), "summary": summary}
        )
        current = released
    final = _final_state(table, releases, current, risk_threshold, config)
    record = recipe(resolved, table, config)
    attacked = None
    if attack:
        from sdckit.attack.base import run_attacks

        settings = {name: dict(values) for name, values in attack.items()}
        report = run_attacks(table, current, None, attacks=list(settings), settings=settings, context=context)
        attacked = report.summary()
        if not report.holds:
            violations.append(
                f"attack: the release is not shown to hold against {', '.join(report.failing())}"
            )
        record["steps"].append({"attack": settings})
    if len(parsed) == 1 and parsed[0].spec.reapplicable:  # so that apply can re-apply a one-step run
        record["transformation"] = transformation_record(releases[0])
    return Protection(releases, figures, final, record, current, violations, attacked)


def _final_state(
    original: Table, releases: list[Any], final: Table, threshold: float | None, config: Any
) -> dict[str, Any]:
    names, penalty = _final_penalty(original, releases)
    return {
        "records": final.n_records,
        "suppressed_cells": _suppressed_cells(original, releases),
        "equivalence_classes": _classes(final),
        "ncp": float(penalty.mean()) if penalty is not None and penalty.size else None,
        "ncp_attributes": names if penalty is not None else None,
        "above_threshold": _above(final, threshold, config),
        "risk_threshold": threshold,
    }


def _final_penalty(original: Table, releases: list[Any]) -> tuple[list[str], np.ndarray | None]:
    """The cellwise maximum of the steps' cell penalties (NCP per cell, 1 for a suppressed cell) over
    the configuration's quasi-identifiers, or over the union of the steps' quasi-identifiers when the
    configuration names none; None when a step records no penalty or dropped or added records.

    The attributes are the configuration's, not the union of the steps', because a step such as
    targeted suppression measures its penalty over every attribute of its known sets: averaging over
    that wider union would dilute the first steps' penalties, and the final NCP would read below a
    step's although no cell got less specific (issue 32)."""
    if not releases or not all(getattr(r, "cell_penalty", None) is not None for r in releases):
        return [], None
    if not all(_records(r) == original.n_records for r in releases):
        return [], None
    names = [a.name for a in original.schema.with_role(Role.QUASI_IDENTIFIER)]
    if not names:
        for release in releases:
            names += [n for n in release.quasi_identifiers if n not in names]
    penalty = np.zeros((original.n_records, len(names)))
    for release in releases:
        for position, name in enumerate(release.quasi_identifiers):
            if name in names:
                column = names.index(name)
                penalty[:, column] = np.maximum(penalty[:, column], release.cell_penalty[:, position])
    return names, penalty


def _records(release: Any) -> int:
    """The number of records of a step's release (a sliced release holds a polars frame)."""
    table = release.table
    return table.n_records if isinstance(table, Table) else table.height


def _suppressed_cells(original: Table, releases: list[Any]) -> int:
    """Cells suppressed by any step (to null by value suppression, to '*' by record suppression),
    each counted once: the union of the steps' ``suppressed_cells`` masks by record and attribute.
    When a step dropped or added records the rows no longer pair up: the sum of the steps' counts."""
    masks = [(r, r.suppressed_cells) for r in releases if getattr(r, "suppressed_cells", None) is not None]
    if not all(_records(r) == original.n_records for r in releases):
        return sum(int(np.count_nonzero(mask)) for _, mask in masks)
    union: dict[str, np.ndarray] = {}
    for release, mask in masks:
        for position, name in enumerate(release.quasi_identifiers):
            column = np.asarray(mask[:, position], dtype=bool)
            union[name] = union[name] | column if name in union else column
    return int(sum(np.count_nonzero(column) for column in union.values()))


def transformation_record(release: Any) -> dict[str, Any] | None:
    """The learnt transformation of a re-applicable release (for ``sdckit apply``), or None when
    this release cannot be re-applied (relaxed Mondrian: its classes overlap)."""
    from sdckit.anonymize.transform import transformation_of

    try:
        return transformation_of(release)
    except ConfigError:
        return None


@dataclass(frozen=True)
class Learnt:
    """What ``sdckit apply`` reads from a recipe: the transformation, the configuration to read new
    data with, and the step that learnt it (for the models to re-check)."""

    transformation: dict[str, Any]
    config: Any
    step: Step
    recipe: dict[str, Any] = field(default_factory=dict)


def read_transformation(path: str | Path, config_path: str | Path | None = None) -> Learnt:
    """The learnt transformation of a summary JSON (or of the recipe in it), with the configuration
    it records (or the one at ``config_path``)."""
    from sdckit.config import load_config, parse_config, read_document

    label = str(path)
    document = read_document(path, what="recipe")
    if isinstance(document, Mapping) and isinstance(document.get("recipe"), Mapping):
        document = document["recipe"]
    transformation = document.get("transformation") if isinstance(document, Mapping) else None
    if not isinstance(transformation, Mapping):
        raise ConfigError(
            f"{label}: holds no learnt transformation; apply re-applies a run of "
            f"generalize, top-bottom-coding or strict mondrian (its {spell('summary')} JSON)"
        )
    steps = parse_steps(document.get("steps"), where=label)
    if config_path is not None:
        config = load_config(config_path)
    else:
        recorded = document.get("config") or {}
        if not recorded.get("path"):
            raise ConfigError(f"{label}: records no configuration; give {spell('config_path', '--config')}")
        if recorded.get("text") is None:
            config = load_config(recorded["path"])
        else:
            parsed = parse_config(recorded["text"], source=f"{label} (configuration {recorded['path']})")
            config = replace(parsed, path=str(recorded["path"]))
    return Learnt(dict(transformation), config, steps[0], dict(document))


def applied_figures(release: Any, learnt: Learnt) -> tuple[dict[str, Any], str | None]:
    """Figures of a transformation re-applied to new data: what the learnt step's privacy models
    achieve there, and what they miss (None when all pass)."""
    from sdckit.anonymize.base import achieved, cell_figures, class_figures, unmet
    from sdckit.anonymize.release import AppliedFigures

    params = learnt.step.params
    figures: dict[str, Any] = {
        "method": learnt.transformation["method"],
        # how this release was made: the learnt recipe, re-applied to this input
        "recipe": {**learnt.recipe, "applied_to": fingerprint(release.original)},
        **class_figures(release),
        **cell_figures(release),
        # per attribute, the records suppressed for uncovered values; null for a coding that covers
        # every value (top and bottom coding, recoding: no entries)
        "unknown": (release.figures.unknown or None) if isinstance(release.figures, AppliedFigures) else None,
    }
    violation = None
    if hasattr(params, "privacy_models"):
        models = params.privacy_models(release.table)
        figures["achieved"] = achieved(release, models)
        violation = unmet(release, models)
    lines = [f"suppressed records: {figures['suppressed_records']:,}"]
    if figures["equivalence_classes"]:
        lines[0] += (
            f"; equivalence classes: {figures['equivalence_classes']:,}; "
            f"smallest class: {figures['smallest_class']:,}"
        )
    if figures.get("achieved"):
        lines.append("achieved: " + "; ".join(f"{m} → {v:.4g}" for m, v in figures["achieved"].items()))
    figures["report"] = lines
    return figures, violation


def dumps(value: Any) -> str:
    """JSON of figures and recipes (numpy numbers and arrays, paths, NaN as null)."""
    return json.dumps(_clean(value), indent=2) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if np.isfinite(number) else None
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, str | int | bool) or value is None:
        return value
    if isinstance(value, pl.DataFrame):
        return _clean(value.to_dicts())
    if hasattr(value, "summary") and callable(value.summary):
        return _clean(value.summary())
    return str(value)
