"""Reading and writing tables: delimiters, types, missing values, weights, and the error messages."""

from __future__ import annotations

import warnings
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.io import atomic_write, read_table, sniff_delimiter, write_table
from sdckit.table import Attribute, Kind, Role, Table, ValueRange

DATA = Path(__file__).parent / "data"

PAPER_COLUMNS = ["ssn", "age", "gender", "race", "income", "disease"]
PAPER_INCOME = [60, 36, 45, 50, 65]
PAPER_DISEASE = ["Flu", "Flu", "Flu", "Cancer", "Flu"]

# Table 2 of Orooji & Knapp (2019): income ranges in thousands, disease values.
INCOME = Attribute(
    "income",
    role=Role.SENSITIVE,
    kind=Kind.NUMERIC,
    public_probability=0.005,
    sensitivity=0.9,
    range_weights=(ValueRange(1.0, maximum=40), ValueRange(0.7, minimum=40, maximum=70)),
)
DISEASE = Attribute(
    "disease",
    role=Role.SENSITIVE,
    public_probability=0.001,
    sensitivity=1.0,
    value_weights={"Flu": 0.2, "Cancer": 1.0},
)


def write(tmp_path: Path, text: str, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# Delimiters and sources ---------------------------------------------------------------------------


@pytest.mark.parametrize("file_name", ["paper.csv", "paper_semicolon.csv", "paper_tab.tsv"])
def test_reads_the_paper_table_whatever_the_delimiter(file_name: str) -> None:
    table = read_table(DATA / file_name)
    assert table.data.columns == PAPER_COLUMNS
    assert table.column("income").to_list() == PAPER_INCOME
    assert table.column("income").dtype == pl.Int64
    assert table.column("disease").to_list() == PAPER_DISEASE
    assert table.source == str(DATA / file_name)


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_sniffs_each_candidate_delimiter(tmp_path: Path, delimiter: str) -> None:
    rows = [["name", "score", "note"], ["Ann", "1.5", "a b"], ["Bob", "2", "c"]]
    path = write(tmp_path, "".join(delimiter.join(row) + "\n" for row in rows))
    assert sniff_delimiter(path.read_text()) == delimiter
    table = read_table(path)
    assert table.data.columns == ["name", "score", "note"]
    assert table.column("score").to_list() == [1.5, 2.0]


def test_sniffing_falls_back_to_comma_for_one_column(tmp_path: Path) -> None:
    assert sniff_delimiter("age\n1\n2\n") == ","
    assert read_table(write(tmp_path, "age\n1\n2\n")).column("age").to_list() == [1, 2]


def test_a_given_delimiter_is_used_as_given(tmp_path: Path) -> None:
    path = write(tmp_path, "a;b,c\n1;2,3\n4;5,6\n")
    assert read_table(path, delimiter=";").data.columns == ["a", "b,c"]
    assert read_table(path, delimiter=",").data.columns == ["a;b", "c"]


def test_quoted_fields_keep_delimiters_and_line_breaks(tmp_path: Path) -> None:
    path = write(tmp_path, 'name,comment\nAnn,"likes a, b"\nBob,"two\nlines"\n')
    table = read_table(path)
    assert table.column("comment").to_list() == ["likes a, b", "two\nlines"]


def test_polars_and_pandas_frames_read_like_the_csv_file() -> None:
    from_file = read_table(DATA / "paper.csv")
    from_polars = read_table(from_file.data)
    from_pandas = read_table(from_file.data.to_pandas())
    assert from_polars.data.equals(from_file.data)
    assert from_pandas.data.equals(from_file.data)
    assert from_pandas.source == "<data frame>"
    assert [a.kind for a in from_pandas.schema] == [a.kind for a in from_file.schema]


def test_a_pandas_frame_with_nan_gives_nulls() -> None:
    frame = pd.DataFrame({"income": [60.0, np.nan, 45.0], "disease": ["Flu", None, "NA"]})
    table = read_table(frame)
    assert table.column("income").to_list() == [60.0, None, 45.0]
    assert table.column("disease").to_list() == ["Flu", None, None]


def test_parquet_round_trip_keeps_values_and_types(tmp_path: Path) -> None:
    frame = pl.DataFrame(
        {
            "age": [34, None, 40],
            "income": [60.5, 36.0, None],
            "zip": ["01234", "99999", None],
            "born": [date(1990, 1, 2), date(2001, 12, 31), None],
        }
    )
    for name in ("data.parquet", "data.pq"):
        write_table(frame, tmp_path / name)
        table = read_table(tmp_path / name)
        assert table.data.equals(frame)
        assert table.data.schema == frame.schema
        assert [a.kind for a in table.schema] == [Kind.NUMERIC, Kind.NUMERIC, Kind.CATEGORICAL, Kind.DATE]


def test_csv_round_trip_writes_missing_values_as_empty_fields(tmp_path: Path) -> None:
    frame = pl.DataFrame({"age": [34, None], "disease": ["Flu", None]})
    write_table(frame, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text() == "age,disease\n34,Flu\n,\n"
    assert read_table(tmp_path / "out.csv").data.equals(frame)
    write_table(Table.from_frame(frame), tmp_path / "out.tsv")
    assert (tmp_path / "out.tsv").read_text() == "age\tdisease\n34\tFlu\n\t\n"


# Types ---------------------------------------------------------------------------------------------


def test_numeric_columns_become_int64_when_integral_else_float64(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "count,ratio,whole,padded,text,mixed,empty\n"
        "1,0.5,1.0,  7 ,a,1,\n"
        "-2,1e3,2.0, 8,b,x,\n"
        "+3,2,3e2,9 ,c,2,\n",
    )
    data = read_table(path).data
    assert data.schema == pl.Schema(
        {
            "count": pl.Int64,
            "ratio": pl.Float64,
            "whole": pl.Int64,
            "padded": pl.Int64,
            "text": pl.String,
            "mixed": pl.String,
            "empty": pl.String,
        }
    )
    assert data.get_column("count").to_list() == [1, -2, 3]
    assert data.get_column("ratio").to_list() == [0.5, 1000.0, 2.0]
    assert data.get_column("whole").to_list() == [1, 2, 300]
    assert data.get_column("padded").to_list() == [7, 8, 9]
    assert data.get_column("mixed").to_list() == ["1", "x", "2"]


def test_big_integers_are_read_exactly(tmp_path: Path) -> None:
    path = write(tmp_path, "id\n9007199254740993\n1\n")
    assert read_table(path).column("id").to_list() == [9007199254740993, 1]


def test_described_kinds_decide_the_types(tmp_path: Path) -> None:
    path = write(tmp_path, "zip,score,level,born\n01234,1,2,2020-01-02\n99999,,10,1999-12-31\n")
    table = read_table(
        path,
        attributes=[
            Attribute("zip", kind=Kind.CATEGORICAL),
            Attribute("score", kind=Kind.NUMERIC),
            Attribute("level", kind=Kind.ORDINAL),
            Attribute("born", kind=Kind.DATE),
        ],
    )
    assert table.column("zip").to_list() == ["01234", "99999"]
    assert table.column("score").to_list() == [1, None]
    assert table.column("score").dtype == pl.Int64
    assert table.column("level").to_list() == [2, 10]
    assert table.column("born").to_list() == [date(2020, 1, 2), date(1999, 12, 31)]
    assert [a.kind for a in table.schema] == [Kind.CATEGORICAL, Kind.NUMERIC, Kind.ORDINAL, Kind.DATE]
    # Undescribed, the same zip codes are numbers: describe codes as categorical to keep them.
    assert read_table(path).column("zip").to_list() == [1234, 99999]


def test_undescribed_columns_get_the_default_attribute(tmp_path: Path) -> None:
    table = read_table(DATA / "paper.csv", attributes=[DISEASE])
    assert table.schema["disease"] is DISEASE
    age = table.schema["age"]
    assert (age.role, age.kind, age.public_probability, age.sensitivity) == (
        Role.INSENSITIVE,
        Kind.NUMERIC,
        0,
        0,
    )
    assert table.schema["gender"].kind is Kind.CATEGORICAL
    assert table.schema.names == PAPER_COLUMNS


def test_missing_value_tokens(tmp_path: Path) -> None:
    path = write(tmp_path, "age,disease\n34,NA\nNA,\n-999,Flu\n")
    default = read_table(path)
    assert default.column("age").to_list() == [34, None, -999]
    assert default.column("disease").to_list() == [None, None, "Flu"]
    custom = read_table(path, missing_values=["-999", ""])
    assert custom.column("age").to_list() == ["34", "NA", None]  # "NA" is text now, so age is too
    assert custom.column("disease").to_list() == ["NA", None, "Flu"]
    with pytest.raises(InputError, match=r"data\.csv:3: attribute 'age': non-numeric value 'NA'"):
        read_table(path, missing_values=["-999"], attributes=[Attribute("age", kind=Kind.NUMERIC)])


def test_blank_lines_are_skipped_and_lines_still_counted(tmp_path: Path) -> None:
    path = write(tmp_path, "\nage,disease\n34,Flu\n\n19,\r\n\n\n")
    table = read_table(path)
    assert table.column("age").to_list() == [34, 19]
    assert table.column("disease").to_list() == ["Flu", None]
    bad = write(tmp_path, "age,disease\n34,Flu\n\n19,Flu\nold,Flu\n", "bad.csv")
    with pytest.raises(InputError, match=r"bad\.csv:5: attribute 'age': non-numeric value 'old'"):
        read_table(bad, attributes=[Attribute("age", kind=Kind.NUMERIC)])


def test_spaces_after_delimiters_are_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, "age, sex, salary\n39, Male, <=50K\n50, Female, >50K\n")
    table = read_table(path)
    assert table.data.columns == ["age", "sex", "salary"]
    assert table.column("sex").to_list() == ["Male", "Female"]
    assert table.column("age").to_list() == [39, 50]


# Value weights (Orooji & Knapp 2019, Tables 1 and 2) ------------------------------------------------


def test_value_weights_of_the_paper_example() -> None:
    table = read_table(DATA / "paper.csv", attributes=[INCOME, DISEASE])
    income = table.schema["income"].value_weight_array(table.column("income"))
    disease = table.schema["disease"].value_weight_array(table.column("disease"))
    np.testing.assert_allclose(income, [0.7, 1.0, 0.7, 0.7, 0.7])
    np.testing.assert_allclose(disease, [0.2, 0.2, 0.2, 1.0, 0.2])
    # C_{income, disease}(r4) = 0.9 * 0.7 + 1 * 1 = 1.63
    consequence = INCOME.consequence_weights(table.column("income")) + DISEASE.consequence_weights(
        table.column("disease")
    )
    assert consequence[3] == pytest.approx(1.63)


def test_missing_values_weigh_nothing_and_unlisted_values_weigh_one(tmp_path: Path) -> None:
    path = write(tmp_path, "income,disease\n,Flu\n80,\n39.5,Asthma\nNA,Cancer\n")
    table = read_table(path, attributes=[INCOME, DISEASE])
    np.testing.assert_allclose(INCOME.value_weight_array(table.column("income")), [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_allclose(DISEASE.value_weight_array(table.column("disease")), [0.2, 0.0, 1.0, 1.0])


def test_a_weight_for_a_value_that_never_occurs_warns(tmp_path: Path) -> None:
    misspelt = Attribute("disease", value_weights={"Flu": 0.2, "Cancr": 1.0})
    with pytest.warns(
        SdcWarning, match=r"attribute 'disease': a weight is given for value 'Cancr'"
    ) as caught:
        table = read_table(DATA / "paper.csv", attributes=[misspelt])
    assert "paper.csv" in str(caught[0].message)
    assert table.column("disease").to_list() == PAPER_DISEASE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_table(DATA / "paper.csv", attributes=[DISEASE])  # every value occurs: no warning


def test_integer_value_weights_match_integer_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "flag\n1\n0\n1.0\n")
    attribute = Attribute("flag", sensitivity=1.0, value_weights={"1": 1.0, "0": 0.0})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = read_table(path, attributes=[attribute])
    np.testing.assert_allclose(attribute.value_weight_array(table.column("flag")), [1.0, 0.0, 1.0])


# Sampling weights ----------------------------------------------------------------------------------


def test_sampling_weights_column(tmp_path: Path) -> None:
    path = write(tmp_path, "age,w\n34,1.5\n19,2\n")
    table = read_table(path, weights="w")
    assert table.weights == "w"
    np.testing.assert_allclose(table.sampling_weights(), [1.5, 2.0])
    assert read_table(path).sampling_weights() is None


@pytest.mark.parametrize(
    ("text", "error", "pattern"),
    [
        (
            "age,w\n34,1\n19,heavy\n",
            InputError,
            r"data\.csv:3: weights column 'w': non-numeric value 'heavy'",
        ),
        (
            "age,w\n34,1\n19,-2\n",
            InputError,
            r"data\.csv:3: weights column 'w': holds the negative weight -2",
        ),
        ("age,w\n34,\n19,1\n", InputError, r"data\.csv:2: weights column 'w': has no value"),
        ("age,v\n34,1\n", ConfigError, r"data\.csv: the weights column 'w' is not a column.*columns: age, v"),
    ],
)
def test_bad_sampling_weights(tmp_path: Path, text: str, error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        read_table(write(tmp_path, text), weights="w")


# Bad input -------------------------------------------------------------------------------------------


def test_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere\.csv: no such file"):
        read_table(tmp_path / "nowhere.csv")


@pytest.mark.parametrize("text", ["", "\n\n", "\r\n"])
def test_empty_file(tmp_path: Path, text: str) -> None:
    with pytest.raises(InputError, match=r"data\.csv: the file is empty \(no header line\)"):
        read_table(write(tmp_path, text))


def test_header_without_records(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"data\.csv: the file has a header \(line 1\) but no records"):
        read_table(write(tmp_path, "age,sex\n\n"))


def test_empty_frame() -> None:
    with pytest.raises(InputError, match=r"<data frame>: the data frame has columns \(age\) but no records"):
        read_table(pl.DataFrame({"age": []}, schema={"age": pl.Int64}))


def test_duplicate_column_names(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"data\.csv:1: column 'age' appears more than once .*columns 1, 3"):
        read_table(write(tmp_path, "age,sex,age\n1,M,2\n"))
    with pytest.raises(InputError, match=r"<data frame>: column 'age' appears more than once"):
        read_table(pd.DataFrame([[1, 2]], columns=["age", "age"]))


def test_unnamed_column(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"data\.csv:1: column 3 of the header has no name"):
        read_table(write(tmp_path, "age,sex,\n1,M,\n"))


def test_ragged_line_with_too_many_fields(tmp_path: Path) -> None:
    path = write(tmp_path, 'age,note\n34,"a\nb"\n19,x,extra\n')
    with pytest.raises(
        InputError, match=r"data\.csv:4: expected 2 fields as in the header \(line 1\), found 3"
    ):
        read_table(path)


def test_ragged_line_with_too_few_fields(tmp_path: Path) -> None:
    path = write(tmp_path, "age,sex,disease\n34,M,Flu\n19,F,\n40,M\n51,F,Flu\n7\n")
    with pytest.raises(
        InputError,
        match=r"data\.csv:4: expected 3 fields as in the header \(line 1\), found 2 \(1 more such line\)",
    ):
        read_table(path)


def test_ragged_line_in_a_quoted_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'age,sex,disease\n"34","M","Flu, bad"\n"19","F"\n')
    with pytest.raises(InputError, match=r"data\.csv:3: expected 3 fields .* found 2"):
        read_table(path)


def test_non_numeric_value_in_a_numeric_attribute(tmp_path: Path) -> None:
    path = write(tmp_path, "age,sex\n34,M\n19,F\nforty,M\n51,F\n?,F\n")
    with pytest.raises(InputError) as caught:
        read_table(path, attributes=[Attribute("age", kind=Kind.NUMERIC)])
    assert str(caught.value) == (
        f"{path}:4: attribute 'age': non-numeric value 'forty' in a numeric attribute"
        " (1 more non-numeric value)"
    )


def test_non_numeric_value_in_a_frame_names_the_record() -> None:
    frame = pl.DataFrame({"age": ["34", "x"]})
    with pytest.raises(InputError, match=r"<data frame>: record 2: attribute 'age': non-numeric value 'x'"):
        read_table(frame, attributes=[Attribute("age", kind=Kind.NUMERIC)])


def test_a_value_that_is_not_a_date(tmp_path: Path) -> None:
    path = write(tmp_path, "born\n2020-01-02\nyesterday\n")
    with pytest.raises(InputError, match=r"data\.csv:3: attribute 'born': value 'yesterday' is not a date"):
        read_table(path, attributes=[Attribute("born", kind=Kind.DATE)])


def test_unknown_attribute_lists_the_columns() -> None:
    with pytest.raises(ConfigError) as caught:
        read_table(DATA / "paper.csv", attributes=[Attribute("agee")])
    message = str(caught.value)
    assert "paper.csv: unknown attribute 'agee', did you mean 'age'?" in message
    assert "columns: ssn, age, gender, race, income, disease" in message


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes("name,city\nAnn,Paris\nBob,Z\u00fcrich\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin1\.csv:3: the file is not UTF-8 text"):
        read_table(path)


def test_a_parquet_file_that_is_not_parquet(tmp_path: Path) -> None:
    path = write(tmp_path, "age\n1\n", "data.parquet")
    with pytest.raises(InputError, match=r"data\.parquet: cannot read the Parquet file"):
        read_table(path)


# Writing ---------------------------------------------------------------------------------------------


def test_atomic_write_renames_on_success(tmp_path: Path) -> None:
    target = tmp_path / "summary.json"
    with atomic_write(target) as temporary:
        assert temporary.parent == tmp_path
        assert temporary.suffix == ".json"
        assert not target.exists()
        temporary.write_text("{}")
    assert target.read_text() == "{}"
    assert [path.name for path in tmp_path.iterdir()] == ["summary.json"]


def test_atomic_write_leaves_nothing_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "risk.png"
    with pytest.raises(RuntimeError), atomic_write(target) as temporary:
        temporary.write_bytes(b"half a pic")
        raise RuntimeError("disk full")
    assert list(tmp_path.iterdir()) == []
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as temporary:
        temporary.write_text("new but broken")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["risk.png"]


def test_write_table_failure_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    nested = pl.DataFrame({"values": [[1, 2], [3]]})  # CSV cannot hold lists
    with pytest.raises(InputError, match=r"out\.csv: cannot write"):
        write_table(nested, target)
    assert target.read_text() == "old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.csv"]


def test_write_table_failure_names_the_file_asked_for_not_the_temporary(tmp_path, monkeypatch) -> None:
    # polars names the path it failed to open: the temporary beside the target, which the message
    # must not show (`-o /proc/x.csv` said "... (os error 2): /proc/..x.csv.<hex>.tmp.csv").
    def failing(self, file, **options):
        raise pl.exceptions.ComputeError(f"No such file or directory (os error 2): {file}")

    monkeypatch.setattr(pl.DataFrame, "write_csv", failing)
    target = tmp_path / "out.csv"
    with pytest.raises(InputError) as caught:
        write_table(pl.DataFrame({"a": [1]}), target)
    assert str(caught.value) == f"{target}: cannot write: No such file or directory (os error 2)"
    assert list(tmp_path.iterdir()) == []


def test_write_table_rejects_unknown_extensions_and_missing_directories(tmp_path: Path) -> None:
    frame = pl.DataFrame({"age": [1]})
    with pytest.raises(ConfigError, match=r"out\.xlsx: cannot tell the format from the extension '\.xlsx'"):
        write_table(frame, tmp_path / "out.xlsx")
    with pytest.raises(InputError, match=r"the directory .*missing.* does not exist"):
        write_table(frame, tmp_path / "missing" / "out.csv")
    assert list(tmp_path.iterdir()) == []
