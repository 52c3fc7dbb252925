"""Nothing changes that the user did not ask to change (issue 32, item 1).

Every registered method runs on a generated file whose columns the configuration does not describe
hold what re-typing would break: codes with leading zeros (``053005``), mixed case, thousands
separators (``"1,234"``), quoted commas, white space, empty fields, the token ``NA``, decimals written
``1.50`` and a column of record ids. Each such column must come back exactly as read, in its place
among the columns: in CSV the text of every field (both files parsed with Python's csv module), in
Parquet the Arrow type and the values. The described columns a method does not change come back as
read too (same text, same type), and an integer column with suppressed cells stays integer.
"""

from __future__ import annotations

import csv
import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from sdckit.anonymize import METHODS, run_method
from sdckit.cli import app
from sdckit.config import parse_config
from sdckit.context import Context
from sdckit.errors import ConfigError
from sdckit.io import write_table
from sdckit.utility.information_loss import NumericLossParams, numeric_matrices

RECORDS = 200
UNDESCRIBED = ["birth_year", "school", "surname", "amount", "note", "record_id", "count", "ratio"]
SURNAMES = ["McDonald", "van der Berg", "Smith, John", "O'Neil", "DE LA CRUZ", "lee", "  Padded  "]
DISEASES = ["flu", "ulcer", "cancer", "bronchitis"]
SYMPTOMS = ["Coughing;Headache", "Headache;Vomiting", "Sore Throat", "Coughing;Headache;Sore Throat"]


def data_text() -> str:
    """The generated CSV file: quasi-identifiers age, sex, zip; disease sensitive; households for
    record swapping; then the columns that no configuration below describes."""
    rng = np.random.default_rng(7)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")  # quotes "1,234" and "Smith, John"
    writer.writerow(
        ["pid", "hid", "region", "district", "age", "sex", "zip", "disease", "symptoms", *UNDESCRIBED]
    )
    for i in range(RECORDS):
        household = i // 2
        age = int(rng.integers(18, 90))
        writer.writerow(
            [
                f"P{i:04d}",
                household,
                "AB"[household // 10 % 2],
                f"{'AB'[household // 10 % 2]}{household % 3}",
                age,
                "MF"[int(rng.integers(0, 2))],
                f"4760{int(rng.integers(0, 5))}",
                DISEASES[i % 4],
                SYMPTOMS[i % 4],
                2020 - age,
                f"0{53000 + i % 9:05d}",
                SURNAMES[i % len(SURNAMES)],
                f"{1000 + i * 37:,}",
                ["", "NA", "x y", "Ok"][i % 4],
                f"{i:07d}",
                "" if i % 11 == 0 else str(i % 13),
                f"{(i % 7) / 2:.2f}",
            ]
        )
    return out.getvalue()


BASE = """attributes:
  pid:     {role: identifier}
  age:     {role: quasi-identifier, kind: numeric, public: 0.6,
            hierarchy: {intervals: [20, 40, 60, 80], fanout: 2}}
  sex:     {role: quasi-identifier, public: 0.6}
  zip:     {role: quasi-identifier, kind: categorical, public: 0.6, hierarchy: {mask: 5}}
  disease: {role: sensitive, sensitivity: 1}
"""
# Full-domain generalization needs a hierarchy for every quasi-identifier.
GENERALIZE = BASE.replace("sex:     {role: quasi-identifier, public: 0.6}", "sex:     {role: insensitive}")
HOUSEHOLDS = """attributes:
  pid:      {role: identifier}
  hid:      {role: household}
  region:   {role: quasi-identifier}
  district: {role: quasi-identifier}
  sex:      {role: quasi-identifier}
"""
QUASI_SENSITIVE = """attributes:
  age:      {role: quasi-identifier, kind: numeric}
  sex:      {role: quasi-identifier}
  symptoms: {role: quasi-sensitive, kind: set-valued}
"""
SUPPRESSING = {"local-suppression", "targeted-suppression"}
SLICING = {"slicing", "overlapping-slicing"}

# method -> (configuration, parameters, the described columns it may change)
RUNS: dict[str, tuple[str, dict[str, Any], set[str]]] = {
    "generalize": (GENERALIZE, {"k": 3, "suppression_limit": 0.1}, {"age", "zip"}),
    "top-bottom-coding": (BASE, {"attribute": "age", "top": 60, "bottom": 25}, {"age"}),
    "mondrian": (BASE, {"k": 3}, {"age", "sex", "zip"}),
    "local-suppression": (BASE, {"k": 3}, {"age", "sex", "zip"}),
    "targeted-suppression": (BASE, {"delta": 0.05, "repeat": True}, {"age", "sex", "zip"}),
    "slicing": (BASE, {"l": 2, "sensitive_column_size": 1, "seed": 5}, set()),
    "overlapping-slicing": (BASE, {"l": 2, "sensitive_column_size": 1, "seed": 7}, set()),
    "quasi-sensitive": (
        QUASI_SENSITIVE,
        {"knowledge": "knowledge.csv", "k": 2, "l": 2, "node_limit": 1000},
        {"age", "sex", "symptoms"},
    ),
    "mdav": (BASE, {"k": 3}, {"age"}),
    "vmdav": (BASE, {"k": 3}, {"age"}),
    "rmd": (BASE, {"k": 3, "seed": 2}, {"age"}),
    "univariate-microaggregation": (BASE, {"k": 3}, {"age"}),
    "sorted-microaggregation": (BASE, {"k": 3, "order": "single"}, {"age"}),
    "categorical-microaggregation": (BASE, {"k": 3}, {"age", "sex", "zip"}),
    "noise": (BASE, {"seed": 3}, {"age"}),
    "dp-noise": (BASE, {"epsilon": 1.0, "bounds": ["age:0:100"], "attributes": ["age"]}, {"age"}),
    "rank-swap": (BASE, {"seed": 4}, {"age"}),
    "swap": (BASE, {"attributes": ["disease"], "seed": 2}, {"disease"}),
    "pram": (BASE, {"seed": 5}, {"sex", "zip"}),
    "record-swap": (
        HOUSEHOLDS,
        {"hierarchy": ["region", "district"], "swap_rate": 0.2, "seed": 3},
        {"region", "district"},
    ),
    "sample": (BASE, {"fraction": 0.3, "seed": 2}, set()),
    "safepub": (
        GENERALIZE,
        {"epsilon": 3.0, "delta": 0.05, "levels": "age=1,zip=2", "seed": 2},
        {"age", "zip"},
    ),
    "recode": (BASE, {"mapping": "mapping.csv"}, {"disease"}),
    "risk-suppression": (BASE, {"attribute": "zip", "threshold": 0.15}, {"zip"}),
    "romm": (BASE, {"attributes": ["age"], "p": 0.2, "block": 3, "seed": 5}, {"age"}),
    "shuffle": (BASE, {"attributes": ["age"], "predictors": ["disease"], "seed": 2}, {"age"}),
    "pseudonymize": (HOUSEHOLDS, {"key_file": "key.txt", "seed": 4}, {"pid", "hid"}),
    "synthesize": (BASE, {"m": 1, "synthesize": ["age", "sex"], "seed": 6}, {"age", "sex"}),
}
FILE_PARAMETERS = ("knowledge", "mapping", "key_file")
# Arrow types of the Parquet copy: narrower integers, 32-bit floats, dictionaries and plain
# (not large) strings, none of which polars writes by itself.
ARROW_TYPES = {
    "hid": pa.int32(),
    "age": pa.int32(),
    "birth_year": pa.int16(),
    "count": pa.int64(),
    "ratio": pa.float32(),
}
DICTIONARIES = {"sex", "surname"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data as CSV and Parquet, and the files some methods read."""
    folder = tmp_path_factory.mktemp("untouched")
    (folder / "data.csv").write_text(data_text())
    header, columns = read_columns(folder / "data.csv")
    arrays = {}
    for name in header:
        values = [None if value == "" else value for value in columns[name]]
        arrow_type = ARROW_TYPES.get(name, pa.string())
        if pa.types.is_integer(arrow_type):
            values = [None if value is None else int(value) for value in values]
        elif pa.types.is_floating(arrow_type):
            values = [None if value is None else float(value) for value in values]
        array = pa.array(values, arrow_type)
        arrays[name] = array.dictionary_encode() if name in DICTIONARIES else array
    pq.write_table(pa.table(arrays), folder / "data.parquet")
    (folder / "knowledge.csv").write_text(
        "label,items\nFlu,Coughing;Headache;Sore Throat\nGastro,Headache;Vomiting\n"
    )
    (folder / "mapping.csv").write_text(
        "attribute,from,to\ndisease,flu,respiratory\ndisease,bronchitis,respiratory\n"
    )
    (folder / "key.txt").write_text("a-key-for-the-untouched-columns-test-0123456789")
    return folder


def read_columns(path: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The header and the text of every field of a CSV file, column by column, as Python's csv
    module reads them."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], {name: [row[j] for row in rows[1:]] for j, name in enumerate(rows[0])}


def params_of(method: str, folder: Path) -> dict[str, Any]:
    params = dict(RUNS[method][1])
    for name in FILE_PARAMETERS:
        if name in params:
            params[name] = str(folder / params[name])
    return params


def run(method: str, folder: Path, suffix: str) -> tuple[Any, Any, Path]:
    """Read the data with the method's configuration, run the method, write its release."""
    config = parse_config(RUNS[method][0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the risk and model warnings of a small file
        table = config.read(folder / f"data{suffix}")
        release = run_method(method, table, params_of(method, folder), Context(config=config))
    released = METHODS.get(method).released(release)
    path = folder / f"{method}{suffix}"
    write_table(released, path)
    return table, release, path


def kept_rows(method: str, release: Any) -> np.ndarray:
    """The original rows of the release's rows, in order (sampling keeps some records)."""
    if method == "sample":
        from sdckit.anonymize.sampling import SampleFigures

        return np.flatnonzero(release.figures_as(SampleFigures).kept)
    if method == "safepub":
        from sdckit.anonymize.safepub import SafePubFigures

        return np.flatnonzero(release.figures_as(SafePubFigures).released)
    return np.arange(RECORDS)


def test_every_method_has_a_case():
    assert set(RUNS) == set(METHODS.names())


def test_the_generated_file_holds_what_retyping_breaks(folder):
    text = (folder / "data.csv").read_text()
    for written in ('"1,000"', '"Smith, John"', ",053000,", ",0000007,", ",1.50", "  Padded  ", ",NA,", ",,"):
        assert written in text, written
    assert "McDonald" in text and "DE LA CRUZ" in text


def check_csv(method: str, folder: Path, path: Path, rows: np.ndarray) -> None:
    """Every undescribed column of the release at ``path`` is the original's, field for field and in
    the original's order; so is every described column the method does not change; a suppressed
    cell is empty, every other cell as it was."""
    original_header, original = read_columns(folder / "data.csv")
    header, released = read_columns(path)
    changes = RUNS[method][2]
    if method in SLICING:
        # Slicing permutes every column inside buckets (overlapping slicing copies some, as name@j):
        # each column still holds the values read, as text.
        for name in UNDESCRIBED:
            copies = [column for column in header if column.split("@")[0] == name]
            assert copies, (method, name)
            for column in copies:
                assert sorted(released[column]) == sorted(original[name]), (method, column)
        return
    assert [name for name in header if name in UNDESCRIBED] == UNDESCRIBED
    for name in header:
        if name not in original or name in changes:
            continue
        expected = [original[name][row] for row in rows]
        assert released[name] == expected, (method, name)
    if method in SUPPRESSING:
        changed = {
            name: {value for value, was in zip(released[name], original[name], strict=True) if value != was}
            for name in changes
        }
        assert changed["age"] == {""}, (method, changed)  # suppressed; the other ages as written
        assert all(values <= {""} for values in changed.values()), (method, changed)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(RUNS))
def test_untouched_columns_come_back_as_read_in_csv(folder, method):
    table, release, path = run(method, folder, ".csv")
    # read as text, as the file spells them
    assert all(table.data.schema[name] == pl.String for name in UNDESCRIBED)
    check_csv(method, folder, path, kept_rows(method, release))
    if method in SLICING:
        return
    released = METHODS.get(method).released(release).data
    for name in released.columns:
        if name in table.data.columns and name not in RUNS[method][2]:
            assert released.schema[name] == table.data.schema[name], (method, name)
    if method in SUPPRESSING or method == "top-bottom-coding":
        assert released.schema["age"] == pl.Int64  # 2005, never 2005.0


@pytest.mark.parametrize("method", list(RUNS))
def test_untouched_columns_keep_their_arrow_type_in_parquet(folder, method):
    table, release, path = run(method, folder, ".parquet")
    original = pq.read_table(folder / "data.parquet")
    got = pq.read_table(path)
    rows = kept_rows(method, release)
    if method in SLICING:
        for name in UNDESCRIBED:
            for column in (column for column in got.column_names if column.split("@")[0] == name):
                values = got.column(column).to_pylist()
                assert sorted(values, key=repr) == sorted(original.column(name).to_pylist(), key=repr)
        return
    assert [name for name in got.column_names if name in UNDESCRIBED] == UNDESCRIBED
    for name in got.column_names:
        if name not in original.column_names or name in RUNS[method][2]:
            continue
        assert got.schema.field(name).type == original.schema.field(name).type, (method, name)
        assert got.column(name).to_pylist() == original.column(name).take(rows).to_pylist(), (method, name)
    if method in SUPPRESSING or method == "top-bottom-coding":
        assert got.schema.field("age").type == pa.int32()


# Through the command line, as a data steward runs them: the same columns, written the same way.
CLI_RUNS = {
    "local-suppression": ["-k", "3"],
    "generalize": ["-k", "3", "--suppression-limit", "0.1"],
    "mdav": ["-k", "3"],
    "top-bottom-coding": ["--attribute", "age", "--top", "60", "--bottom", "25"],
    "pram": ["--seed", "5"],
}


@pytest.mark.parametrize("method", list(CLI_RUNS))
def test_the_command_line_writes_untouched_columns_back_as_read(folder, tmp_path, method):
    config = tmp_path / "config.yaml"
    config.write_text(RUNS[method][0])
    output = tmp_path / "release.csv"
    arguments = ["anonymize", method, str(folder / "data.csv"), "-c", str(config), "-o", str(output)]
    result = CliRunner().invoke(app, [*arguments, "-q", "--allow-violations", *CLI_RUNS[method]])
    assert result.exit_code in (0, 3), result.output
    check_csv(method, folder, output, np.arange(RECORDS))


def test_the_command_line_keeps_arrow_types_from_parquet_to_parquet(folder, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(BASE)
    output = tmp_path / "release.parquet"
    arguments = ["anonymize", "local-suppression", str(folder / "data.parquet"), "-c", str(config)]
    result = CliRunner().invoke(app, [*arguments, "-o", str(output), "-q", "-k", "3"])
    assert result.exit_code == 0, result.output
    original, got = pq.read_table(folder / "data.parquet"), pq.read_table(output)
    for name in [*UNDESCRIBED, "age", "sex", "disease"]:
        assert got.schema.field(name).type == original.schema.field(name).type, name
    for name in UNDESCRIBED:
        assert got.column(name).to_pylist() == original.column(name).to_pylist(), name


def test_numeric_information_loss_leaves_undescribed_codes_out(folder):
    """The codes and counts the configuration does not describe are text, so the default numeric
    information loss measures the numeric attribute it describes, and naming a code column says why
    it is no number."""
    table, release, _ = run("local-suppression", folder, ".csv")
    names, *_ = numeric_matrices(table, release.table, NumericLossParams())
    assert names == ["age"]
    with pytest.raises(ConfigError, match="does not describe 'school', so it is kept as read, as text"):
        run_method("top-bottom-coding", table, {"attribute": "school", "top": 5})
