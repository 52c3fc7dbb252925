"""The state of one workbench: the data, the configuration being written, the recipe being put
together, the jobs and the releases they made. No HTTP here (:mod:`sdckit.ui.app` serves it).

The configuration is always a file, ``config.yaml`` in the workbench's folder, written from the form
(:func:`sdckit.ui.forms.draft_yaml`) and validated by :func:`sdckit.config.load_config` and, with the
data, :meth:`Config.read`: what the page says of a bad value is what ``sdckit ... --config`` says of
that file, word for word, less the location in the generated file (``config.yaml:4:``), since the page
shows it at its field. The YAML typed in a field is checked alone first, so that a syntax error is
placed at its own field (:func:`sdckit.ui.forms.setting_errors`). A job runs on a copy of the file,
so editing the form does not change a run.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdckit.errors import SdcError
from sdckit.ui.forms import (
    ATTRIBUTE_SETTINGS,
    RISK_SETTINGS,
    AttributeRow,
    draft_yaml,
    errors_by_field,
    setting_errors,
)
from sdckit.ui.jobs import DONE, Job, Jobs

#: The hierarchy builders the form suggests (docs/configuration.md).
BUILDERS = (
    "{intervals: {width: 10}}",
    "{intervals: [0, 20, 40, 60]}",
    "{order: [low, mid, high]}",
    "{mask: 5}",
)
#: Compare's defaults: the measures of ``sdckit evaluate`` that stay quick on a laptop.
COMPARE_RISK = ("reidentification", "linkage")
COMPARE_UTILITY = ("propensity", "tables")


@dataclass
class WorkbenchRelease:
    """A release the workbench made: a run of the recipe (its job), the plan it ran and a short name
    for the map. Not :class:`sdckit.anonymize.Release`, the released table, which the job writes."""

    id: str
    name: str
    job: Job
    plan: list[dict[str, Any]]

    @property
    def ready(self) -> bool:
        return self.job.state == DONE

    def path(self, name: str) -> Path:
        return self.job.folder / name


@dataclass
class Session:
    """Everything the pages show and change (one per server: the workbench has one user)."""

    workdir: Path
    data_path: str | None = None
    data_error: str | None = None
    records: int = 0
    rows: list[AttributeRow] = field(default_factory=list)
    risk: dict[str, str] = field(default_factory=dict)
    data_section: dict[str, Any] = field(default_factory=dict)
    config: Any = None
    config_text: str = ""
    config_errors: dict[tuple[str, str], str] = field(default_factory=dict)
    load_error: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    releases: list[WorkbenchRelease] = field(default_factory=list)
    kept: str | None = None
    measure_job: str | None = None
    compare_job: str | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: start the jobs' fork server at once (a server does; a test of the form need not)
    warm_up: bool = True

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.jobs = Jobs(self.workdir / "jobs", warm_up=self.warm_up)

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    @property
    def ready(self) -> bool:
        """Data opened and a configuration that reads it: measuring and protecting may start."""
        return self.data_path is not None and self.config is not None

    # Describe ----------------------------------------------------------------------------------

    def open_data(self, path: str) -> None:
        """Read the data (as ``--config`` would: with the configuration's data settings) and list its
        columns; a file that cannot be read leaves the session as it was, with the message."""
        from sdckit.config import parse_config

        path = path.strip()
        with self.lock:
            try:
                if not path:
                    raise SdcError("give the path of a CSV or Parquet file")
                table = parse_config({"data": self.data_section} if self.data_section else {}).read(path)
            except SdcError as error:
                self.data_error = str(error)
                return
            self.data_error = None
            self.data_path = path
            self.records = table.n_records
            described = _describe(table.data, {row.name: row.settings for row in self.rows})
            columns = set(table.data.columns)
            # attributes of the configuration that are no column of these data stay (and are reported)
            self.rows = described + [
                AttributeRow(row.name, settings=row.settings)
                for row in self.rows
                if row.name not in columns and row.settings
            ]
            self.validate()

    def load_config(self, path: str) -> None:
        """Fill the form from a configuration file (validated first, as ``--config`` validates it)."""
        from sdckit.config import _parse_yaml, load_config
        from sdckit.ui.forms import rows_from_document

        path = path.strip()
        with self.lock:
            try:
                load_config(path)
                document, _ = _parse_yaml(Path(path).read_text(encoding="utf-8"), path)
            except SdcError as error:
                self.load_error = str(error)
                return
            self.load_error = None
            attributes, self.risk, self.data_section = rows_from_document(document, Path(path).parent)
            known = {row.name for row in self.rows}
            for row in self.rows:
                row.settings = attributes.get(row.name, {})
            self.rows += [
                AttributeRow(name, settings=texts) for name, texts in attributes.items() if name not in known
            ]
            self.validate()

    def update_config(self, form: dict[str, str]) -> None:
        """Take the form's texts (``attr-<i>-<setting>``, ``risk-<setting>``) and validate them."""
        with self.lock:
            self.data_error = self.load_error = None  # said once, next to the file that failed
            for number, row in enumerate(self.rows):
                row.settings = {
                    key: form[f"attr-{number}-{key}"].strip()
                    for key in ATTRIBUTE_SETTINGS
                    if form.get(f"attr-{number}-{key}", "").strip()
                }
            self.risk = {
                key: form[f"risk-{key}"].strip()
                for key in RISK_SETTINGS
                if form.get(f"risk-{key}", "").strip()
            }
            self.validate()

    def validate(self) -> None:
        """Write the form as ``config.yaml`` and read the data with it, as the command line would."""
        from sdckit.config import load_config

        text, lines = draft_yaml(self.rows, self.risk, self.data_section)
        self.config_text = text
        self.config_path.write_text(text, encoding="utf-8")
        self.config, self.config_errors = None, setting_errors(self.rows)
        if self.config_errors:
            return
        try:
            config = load_config(self.config_path)
            if self.data_path is not None:
                config.read(self.data_path)
        except SdcError as error:
            self.config_errors = errors_by_field(str(error), lines, generated=str(self.config_path))
            return
        self.config = config

    def hierarchy_choices(self) -> list[str]:
        """What the hierarchy fields suggest: the builders, and the ARX hierarchy files (``*.csv``
        with "hierarchy" in the name) beside the data and beside the configuration loaded."""
        found: list[str] = []
        folders = {Path(self.data_path).resolve().parent} if self.data_path else set()
        folders |= {
            Path(t).parent for row in self.rows if (t := row.setting("hierarchy")) and not t.startswith("{")
        }
        for folder in sorted(folders):
            try:
                found += sorted(str(p) for p in folder.glob("*.csv") if "hierarchy" in p.name.lower())
            except OSError:
                continue
        return [*BUILDERS, *dict.fromkeys(found)]

    def field_error(self, attribute: str, setting: str) -> str | None:
        return self.config_errors.get((attribute, setting))

    # Jobs --------------------------------------------------------------------------------------

    def start_measure(self, params: dict[str, dict[str, Any]]) -> Job:
        with self.lock:
            job = self._launch("measure", "risk of the data", {"params": params})
            self.measure_job = job.id
            return job

    def start_protect(self, risk_threshold: float | None = None) -> WorkbenchRelease:
        with self.lock:
            plan = [dict(step["params"], method=step["method"]) for step in self.steps]
            number = len(self.releases) + 1
            name = f"R{number} " + " + ".join(step["label"] for step in self.steps)
            job = self._launch("protect", name, {"steps": plan, "risk_threshold": risk_threshold})
            release = WorkbenchRelease(f"r{number}", name, job, plan)
            self.releases.append(release)
            return release

    def start_compare(self, options: dict[str, Any]) -> Job:
        with self.lock:
            entries = [
                {
                    "name": release.name,
                    "path": str(release.path("release.csv")),
                    "recipe": str(release.path("recipe.json")),
                }
                for release in self.releases
                if release.ready
            ]
            job = self._launch("compare", "R-U map of the releases", {"releases": entries, **options})
            self.compare_job = job.id
            return job

    def _launch(self, kind: str, title: str, extra: dict[str, Any]) -> Job:
        """A job on a copy of the configuration (editing the form afterwards does not change it)."""
        if not self.ready:
            raise SdcError("open the data and give it a valid configuration first (Describe)")

        def prepare(folder: Path) -> dict[str, Any]:
            copy = folder / "config.yaml"
            shutil.copyfile(self.config_path, copy)
            return {"config": str(copy), "data": self.data_path, **extra}

        return self.jobs.start(kind, title, prepare)

    def release(self, identifier: str) -> WorkbenchRelease | None:
        return next((release for release in self.releases if release.id == identifier), None)


def _describe(frame: Any, settings: dict[str, dict[str, str]]) -> list[AttributeRow]:
    """One row per column: its type, distinct values and share of missing values."""
    import polars as pl

    n = max(frame.height, 1)
    stats = frame.select(
        [pl.col(name).n_unique().alias(f"d{i}") for i, name in enumerate(frame.columns)]
        + [pl.col(name).null_count().alias(f"m{i}") for i, name in enumerate(frame.columns)]
    ).row(0)
    width = len(frame.columns)
    return [
        AttributeRow(
            name,
            dtype=str(frame.schema[name]),
            distinct=int(stats[i]),
            missing=float(stats[width + i]) / n,
            settings=dict(settings.get(name, {})),
        )
        for i, name in enumerate(frame.columns)
    ]
