"""Finding and loading the data of the experiments.

The CASC benchmark files of sdcMicro (``Tarragona.csv``, ``CASCrefmicrodata.csv``: comma-separated,
numeric) are looked for in the folder given to :func:`casc_table`, by default
:func:`sdcmicro_directory` (``../shared/data/sdcmicro`` beside the project folder).

The Adult data (``adult.csv``, ';'-separated, with ARX's hierarchies ``adult_hierarchy_<column>.csv``)
is never copied into the repository: :func:`adult_directory` looks for it, when called, in the folder
named by the environment variable ``SDCKIT_ADULT_DIR``, else in ``../shared/data/adult`` beside the
project folder (the layout of this project's workspace).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from sdckit.errors import ConfigError, InputError
from sdckit.experiments import Say
from sdckit.hierarchy import Hierarchy
from sdckit.params import spell
from sdckit.table import Table

#: The environment variable naming the folder of the Adult data.
ADULT_ENVIRONMENT_VARIABLE = "SDCKIT_ADULT_DIR"

#: The 8 quasi-identifiers of the quasi-sensitive experiment: every Adult column but ``occupation``
#: (as in the Mondrian benchmark; age numeric, the others categorical with ARX's hierarchies).
ADULT_QUASI_IDENTIFIERS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
)

#: The Adult attributes the slicing papers treat as continuous (discretized for the correlation).
ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def adult_directory() -> Path:
    """The folder of the Adult data: ``$SDCKIT_ADULT_DIR`` when set (and not empty), else
    ``../shared/data/adult`` beside the project folder. Read at every call, never at import."""
    configured = os.environ.get(ADULT_ENVIRONMENT_VARIABLE)
    if configured:
        return Path(configured)
    project = Path(__file__).resolve().parents[3]  # src/sdckit/experiments/data.py -> the project folder
    return project.parent / "shared" / "data" / "adult"


#: The CASC data sets of the masking experiment: short name -> (file in the sdcMicro folder, title).
CASC_DATASETS = {
    "tarragona": ("Tarragona.csv", "Tarragona"),
    "casc": ("CASCrefmicrodata.csv", "CASCrefmicrodata"),
}


def sdcmicro_directory() -> Path:
    """``../shared/data/sdcmicro`` beside the project folder: where the CASC files are looked for
    when no folder is given."""
    project = Path(__file__).resolve().parents[3]
    return project.parent / "shared" / "data" / "sdcmicro"


def casc_table(name: str, directory: str | os.PathLike | None = None) -> Table:
    """The CASC data set ``name`` (a key of :data:`CASC_DATASETS`) from ``directory`` (default
    :func:`sdcmicro_directory`), every column a numeric quasi-identifier. :class:`ConfigError` for
    an unknown name, :class:`InputError` when the file is absent or a column is not numeric or has
    missing values."""
    from sdckit.table import Attribute, Kind, Role, Schema

    if name not in CASC_DATASETS:
        raise ConfigError(
            f"{spell('datasets')}: unknown data set {name!r}: choose among {', '.join(CASC_DATASETS)}"
        )
    directory = Path(directory) if directory is not None else sdcmicro_directory()
    path = directory / CASC_DATASETS[name][0]
    if not path.is_file():
        raise InputError(
            f"{path}: the CASC data set {name} is not available; give its folder with "
            f"{spell('directory', '--data-dir')}"
        )
    frame = pl.read_csv(path)
    for column in frame.columns:
        if not frame.schema[column].is_numeric():
            raise InputError(f"{path}: column '{column}' is not numeric ({frame.schema[column]})")
        if frame.get_column(column).null_count():
            raise InputError(f"{path}: column '{column}' has missing values")
    schema = Schema(tuple(Attribute(c, Role.QUASI_IDENTIFIER, Kind.NUMERIC) for c in frame.columns))
    return Table(frame, schema, source=str(path))


def adult_quasi_identifiers(
    directory: str | os.PathLike | None = None,
) -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """The columns :data:`ADULT_QUASI_IDENTIFIERS` of ``directory``/adult.csv (default
    :func:`adult_directory`), age as an integer and the others as text, and ARX's hierarchy of every
    one but age whose file is present. :class:`~sdckit.errors.InputError` when the file or a column is
    missing."""
    directory = Path(directory) if directory is not None else adult_directory()
    path = directory / "adult.csv"
    if not path.is_file():
        raise InputError(
            f"{path}: the Adult data is not available; set {ADULT_ENVIRONMENT_VARIABLE} to its folder "
            "or pass a frame of quasi-identifiers instead"
        )
    frame = pl.read_csv(path, separator=";", infer_schema=False)
    missing = [name for name in ADULT_QUASI_IDENTIFIERS if name not in frame.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    frame = frame.select(ADULT_QUASI_IDENTIFIERS).with_columns(pl.col("age").cast(pl.Int64))
    hierarchies = {}
    for name in ADULT_QUASI_IDENTIFIERS:
        hierarchy_path = directory / f"adult_hierarchy_{name}.csv"
        if name != "age" and hierarchy_path.is_file():
            hierarchies[name] = Hierarchy.from_csv(hierarchy_path, name)
    return frame, hierarchies


def complete_records(table: Table, say: Say | None = None) -> Table:
    """``table`` without the records that miss a value (the slicing papers' preparation of Adult)."""
    frame = table.data.drop_nulls()
    if say is not None:
        say(f"{table.n_records:,} records, {frame.height:,} without a missing value")
    if frame.height == 0:
        raise ConfigError("every record has a missing value: nothing is left to slice")
    return Table(frame, table.schema, source=table.source)
