"""What a job of the workbench runs, in a process of its own (:mod:`sdckit.ui.jobs`).

A job reads its inputs from ``payload.json`` in its folder and writes there: ``progress.json``
(``{"done", "total", "stage"}``, replaced as it advances), then ``result.json`` (its figures) or
``error.json`` (``{"message"}``: the one line the command line would print). Every computation is
the library's: the combined risk, the re-identification measures and the check of ``sdckit risk``
and ``sdckit check``, the steps of ``sdckit protect``, the evaluation of ``sdckit evaluate``; files
are written as those commands write them.

The module imports the library at the top so that a fork server that preloads it starts jobs
without paying the imports again.
"""

from __future__ import annotations

import json
import os
import signal
import time
import traceback
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl  # noqa: F401  (preloaded for the jobs)

import sdckit.anonymize  # noqa: F401  (registers the methods)
import sdckit.risk.combined  # noqa: F401  (preloaded for the jobs: the measures they run)
import sdckit.risk.reidentification  # noqa: F401
from sdckit.config import load_config
from sdckit.context import Context
from sdckit.errors import SdcError
from sdckit.recipes import dumps


class Reporter:
    """Progress of a job, written to ``progress.json`` at most every 0.2 s (and at every stage)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "progress.json"
        self.state: dict[str, Any] = {"done": 0, "total": 0, "stage": "starting"}
        self.last = 0.0
        self._write()

    def _write(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.state), encoding="utf-8")
        os.replace(temporary, self.path)
        self.last = time.monotonic()

    def progress(self, done: int, total: int) -> None:
        self.state.update(done=int(done), total=int(total or 0))
        if time.monotonic() - self.last > 0.2:
            self._write()

    def stage(self, message: str) -> None:
        self.state.update(stage=message, done=0, total=0)
        self._write()


def _write_json(path: Path, value: Any) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(dumps(value), encoding="utf-8")
    os.replace(temporary, path)


def main(kind: str, folder_name: str) -> None:
    """Run job ``kind`` on the payload in ``folder_name``; its outcome as a file there."""
    # Ctrl-C in the terminal reaches the whole process group: the server stops its jobs itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    folder = Path(folder_name)
    payload = json.loads((folder / "payload.json").read_text(encoding="utf-8"))
    reporter = Reporter(folder)
    try:
        result = RUNNERS[kind](payload, folder, reporter)
    except SdcError as error:
        _write_json(folder / "error.json", {"message": str(error)})
        return
    except Exception as error:  # a bug: say so, with its traceback for the report
        _write_json(
            folder / "error.json",
            {
                "message": f"internal error: {type(error).__name__}: {error}",
                "traceback": traceback.format_exc(),
            },
        )
        return
    _write_json(folder / "result.json", result)


def _inputs(payload: dict[str, Any]) -> tuple[Any, Any]:
    config = load_config(payload["config"])
    return config, config.read(payload["data"])


def _options_of(fields: Mapping[str, Any]) -> Callable[[str], str]:
    """How a parameter of a measure with ``fields`` is spelled to the user: its option."""
    from sdckit.params import option_name

    return lambda name: option_name(name, fields.get(name))


def _skipping(skipped: dict[str, str], name: str, run: Callable[[], Any]) -> Any:
    """``run()``, or None with the reason in ``skipped`` when the data does not allow it."""
    try:
        return run()
    except SdcError as error:
        skipped[name] = str(error)
        return None


def measure(payload: dict[str, Any], folder: Path, reporter: Reporter) -> dict[str, Any]:
    """The combined risk (figures of ``sdckit risk combined``, per-record risks, histogram counts),
    the k-anonymity check of ``sdckit check -k`` and the re-identification measures."""
    from sdckit.evaluate.plots import risk_bins
    from sdckit.measures import measure_spec, run_measure
    from sdckit.models.check import verdict
    from sdckit.risk.identifiers import identifier_column, with_identifiers

    config, table = _inputs(payload)
    context = Context(config=config, progress=reporter.progress, stage=reporter.stage)
    figures: dict[str, Any] = {"records": table.n_records}
    skipped: dict[str, str] = {}
    for name in ("combined", "reidentification"):
        spec = measure_spec(name)
        fields = spec.params.model_fields
        params = spec.params.parse(payload["params"].get(name, {}), spell=_options_of(fields), method=name)
        reporter.stage(f"risk {name}")
        result = _skipping(skipped, name, partial(run_measure, spec, table, params=params, context=context))
        if result is None:
            continue
        # The riskiest records with the identifier's value, when the configuration has one.
        figures[name] = with_identifiers(spec.summary(result), identifier_column(table))
        if name == "combined":
            figures["histogram"] = risk_bins(result.risk)
            result.scores().write_parquet(folder / "scores.parquet")
    k = payload["params"].get("check", {}).get("k")
    if k is not None:
        reporter.stage(f"check {k}-anonymity")
        treatment = config.risk.missing

        def check() -> dict[str, Any]:
            return verdict(config.read_release(payload["data"]), k=int(k), missing=treatment).figures()

        checked = _skipping(skipped, "check", check)
        if checked is not None:
            figures["check"] = checked
    figures["skipped"] = skipped
    return figures


def protect(payload: dict[str, Any], folder: Path, reporter: Reporter) -> dict[str, Any]:
    """The steps of a recipe, as ``sdckit protect`` runs them: the release (CSV), the summary JSON
    the command writes, and the recipe alone."""
    from sdckit.io import write_table
    from sdckit.recipes import parse_steps
    from sdckit.recipes import protect as run_steps

    started = time.perf_counter()
    steps = parse_steps(payload["steps"], where="recipe")
    config, table = _inputs(payload)
    result = run_steps(
        table,
        steps,
        config=config,
        risk_threshold=payload.get("risk_threshold"),
        progress=reporter.progress,
        stage=reporter.stage,
    )
    violation = "; ".join(result.violations) or None
    document = {
        "data": str(payload["data"]),
        "steps": result.steps,
        "final": result.final,
        "satisfied": violation is None,
        "violation": violation,
        "elapsed_seconds": round(time.perf_counter() - started, 3),
        "recipe": result.recipe,
    }
    reporter.stage("writing the release")
    write_table(result.table, folder / "release.csv")
    _write_json(folder / "summary.json", document)
    _write_json(folder / "recipe.json", result.recipe)
    return {key: document[key] for key in ("steps", "final", "satisfied", "violation", "elapsed_seconds")}


def compare(payload: dict[str, Any], folder: Path, reporter: Reporter) -> dict[str, Any]:
    """``sdckit evaluate`` of the session's releases (with the attacks chosen, ``--attack``): the
    summary and the HTML report."""
    from sdckit.evaluate import evaluate
    from sdckit.evaluate.report import write_report

    config, original = _inputs(payload)
    attacks = payload.get("attacks")
    settings = None
    if payload.get("max_risk") is not None:
        from sdckit.evaluate.attacks import attack_plan

        specs, _ = attack_plan(attacks, None)
        settings = {f"attack:{spec.name}": {"max_risk": payload["max_risk"]} for spec in specs}
    releases, recipes = [], []
    for entry in payload["releases"]:
        releases.append((entry["name"], config.read_release(entry["path"])))
        recipes.append(json.loads(Path(entry["recipe"]).read_text(encoding="utf-8")))
    result = evaluate(
        original,
        releases,
        config=config,
        risk=payload["risk"],
        utility=payload["utility"],
        risk_axis=payload["risk_axis"],
        loss_axis=payload["loss_axis"],
        weight=payload["weight"],
        recipes=recipes,
        original_name=Path(payload["data"]).name,
        stage=reporter.stage,
        attacks=attacks,
        settings=settings,
    )
    reporter.stage("writing the report")
    write_report(result, folder / "report.html", title=f"Evaluation of {Path(payload['data']).name}")
    summary = result.summary()
    summary["points"] = summary["ru_map"]["points"]
    return summary


RUNNERS: dict[str, Callable[[dict[str, Any], Path, Reporter], dict[str, Any]]] = {
    "measure": measure,
    "protect": protect,
    "compare": compare,
}

__all__ = ["RUNNERS", "main", "np"]
