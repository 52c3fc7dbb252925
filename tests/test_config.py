"""YAML configuration: the paper's example, defaults, and a precise message for every mistake."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sdckit.config import Config, DataSettings, RiskSettings, load_config, parse_config
from sdckit.errors import ConfigError, InputError, SdcWarning
from sdckit.table import Kind, Role, ValueRange

DATA = Path(__file__).parent / "data"


def write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_paper_example_loads() -> None:
    config = load_config(DATA / "paper.yaml")
    assert config.path == str(DATA / "paper.yaml")
    assert [a.name for a in config.attributes] == ["age", "gender", "race", "income", "disease", "ssn"]
    by_name = {a.name: a for a in config.attributes}
    age = by_name["age"]
    assert (age.role, age.kind, age.public_probability, age.sensitivity) == (
        Role.QUASI_IDENTIFIER,
        Kind.NUMERIC,
        0.3,
        0.0,
    )
    assert by_name["gender"].public_probability == 0.8
    assert by_name["race"].public_probability == 0.7
    income = by_name["income"]
    assert (income.role, income.public_probability, income.sensitivity) == (Role.SENSITIVE, 0.005, 0.9)
    assert income.range_weights == (ValueRange(1.0, None, 40.0), ValueRange(0.7, 40.0, 70.0))
    disease = by_name["disease"]
    assert disease.value_weights == {"Flu": 0.2, "Cancer": 1.0}
    assert (disease.kind, disease.sensitivity) == (Kind.CATEGORICAL, 1.0)
    assert by_name["ssn"].role is Role.IDENTIFIER
    assert config.inferred_kinds == {"gender", "race", "ssn"}
    assert config.risk == RiskSettings(alpha=100.0, epsilon=0.01, missing="wildcard")
    assert config.data == DataSettings(delimiter=",", missing_values=("", "NA"), weights=None)


def test_reading_data_with_the_paper_configuration() -> None:
    config = load_config(DATA / "paper.yaml")
    table = config.read(DATA / "paper.csv")
    schema = table.schema
    assert schema.names == ["ssn", "age", "gender", "race", "income", "disease"]
    assert schema["gender"].kind is Kind.CATEGORICAL  # inferred from the text column
    assert schema["age"].kind is Kind.NUMERIC
    # The identifier stays in the schema, marked, for measures and releases to drop.
    assert schema["ssn"].role is Role.IDENTIFIER
    assert "ssn" not in schema.without_identifiers()
    income = schema["income"].value_weight_array(table.column("income"))
    disease = schema["disease"].value_weight_array(table.column("disease"))
    np.testing.assert_allclose(income, [0.7, 1.0, 0.7, 0.7, 0.7])
    np.testing.assert_allclose(disease, [0.2, 0.2, 0.2, 1.0, 0.2])
    # A frame reads the same way, and schema_for gives the same schema for it.
    assert config.read(table.data).schema == schema
    assert config.schema_for(table.data) == schema


def test_defaults() -> None:
    config = parse_config("attributes:\n  age:\n  sex: {}\n")
    for attribute in config.attributes:
        assert (attribute.role, attribute.public_probability, attribute.sensitivity) == (
            Role.INSENSITIVE,
            0,
            0,
        )
        assert attribute.value_weights == {}
        assert attribute.range_weights == ()
    assert config.inferred_kinds == {"age", "sex"}
    assert config.risk == RiskSettings()
    assert config.data == DataSettings()
    assert config.path is None
    table = config.read(pl.DataFrame({"age": [30, 40], "sex": ["F", "M"], "town": ["A", "B"]}))
    assert [a.kind for a in table.schema] == [Kind.NUMERIC, Kind.CATEGORICAL, Kind.CATEGORICAL]


def test_ranges_without_a_kind_make_a_numeric_attribute() -> None:
    config = parse_config("attributes: {income: {ranges: [{min: 0, weight: 0.5}]}}")
    assert config.attributes[0].kind is Kind.NUMERIC
    assert config.attributes[0].range_weights == (ValueRange(0.5, 0.0, None),)
    assert config.inferred_kinds == frozenset()


def test_value_keys_are_text_as_written() -> None:
    config = parse_config(
        """
        attributes:
          flag:    {values: {1: 1, 0: 0}}
          dropout: {values: {Yes: 1, No: 0}}
          zip:     {kind: categorical, values: {01234: 0.5, "99": 1e-1}}
        """
    )
    flag, dropout, zip_code = config.attributes
    assert flag.value_weights == {"1": 1.0, "0": 0.0}
    assert dropout.value_weights == {"Yes": 1.0, "No": 0.0}
    assert zip_code.value_weights == {"01234": 0.5, "99": 0.1}


def test_a_mapping_is_accepted_too() -> None:
    config = parse_config(
        {
            "attributes": {"flag": {"role": "sensitive", "sensitivity": 1, "values": {1: 1, 0: 0, 2.0: 0.5}}},
            "risk": {"alpha": 10, "missing": "category"},
        }
    )
    assert config.attributes[0].value_weights == {"1": 1.0, "0": 0.0, "2": 0.5}
    assert config.risk == RiskSettings(alpha=10.0, epsilon=0.01, missing="category")


def test_hierarchy_is_kept_untouched() -> None:
    config = parse_config("attributes: {age: {hierarchy: {type: intervals, width: [5, 10]}}}")
    assert config.attributes[0].hierarchy == {"type": "intervals", "width": [5, 10]}


def test_data_settings_are_used_to_read(tmp_path: Path) -> None:
    config = parse_config(
        """
        attributes: {age: {kind: numeric}}
        data: {delimiter: ";", missing_values: ["-999", ""], weights: w}
        """
    )
    path = tmp_path / "data.csv"
    path.write_text("age;w\n34;1,5\n-999;2\n")  # "1,5" is no number with ";" as delimiter
    with pytest.raises(InputError, match=r"data\.csv:2: weights column 'w': non-numeric value '1,5'"):
        config.read(path)
    path.write_text("age;w;code\n34;1.5;-999\n-999;2;007\n")
    table = config.read(path)
    assert table.column("age").to_list() == [34, None]
    # A column the configuration does not describe is kept as read, missing-value tokens included.
    assert table.column("code").to_list() == ["-999", "007"]
    np.testing.assert_allclose(table.sampling_weights(), [1.5, 2.0])


def test_tab_delimiter_by_name() -> None:
    assert parse_config("data: {delimiter: tab}").data.delimiter == "\t"
    assert parse_config('data: {delimiter: "\\t"}').data.delimiter == "\t"


# Mistakes ---------------------------------------------------------------------------------------------

BAD_CONFIGS = [
    (
        "attributes:\n  age: {role: qid}\n",
        ["study.yaml:2:", "attribute 'age'", "role must be one of", "'qid'"],
    ),
    (
        "attributes:\n  age: {kind: number}\n",
        ["study.yaml:2:", "attribute 'age'", "kind must be one of", "'number'"],
    ),
    (
        "attributes:\n  age:\n    public: 1.5\n",
        ["study.yaml:3:", "attribute 'age'", "public must be a number in [0, 1], got 1.5"],
    ),
    (
        "attributes:\n  age: {public: high}\n",
        ["study.yaml:2:", "public must be a number in [0, 1], got 'high'"],
    ),
    (
        "attributes:\n  age: {public: true}\n",
        ["study.yaml:2:", "public must be a number in [0, 1], got True"],
    ),
    (
        "attributes:\n  age: {sensitivity: -0.1}\n",
        ["attribute 'age'", "sensitivity must be a number in [0, 1]"],
    ),
    (
        "attributes:\n  disease:\n    values:\n      Flu: 0.2\n      Cancer: 2\n",
        [
            "study.yaml:5:",
            "attribute 'disease'",
            "weight of value 'Cancer' must be a number in [0, 1], got 2",
        ],
    ),
    (
        "attributes:\n  income:\n    ranges:\n      - {max: 40, weight: 1}\n      - {min: 40, weight: -1}\n",
        ["study.yaml:5:", "attribute 'income'", "ranges[1].weight must be a number in [0, 1], got -1"],
    ),
    (
        "attributes:\n  income:\n    kind: categorical\n    ranges: [{max: 40, weight: 1}]\n",
        [
            "study.yaml:4:",
            "attribute 'income'",
            "ranges need a numeric or ordinal attribute, but kind is categorical",
        ],
    ),
    (
        "attributes:\n  income:\n    ranges:\n      - {min: 70, max: 40, weight: 1}\n",
        ["study.yaml:4:", "attribute 'income'", "ranges[0].max must be above min 70", "got 40"],
    ),
    (
        "attributes:\n  income: {ranges: [{max: 40}]}\n",
        ["study.yaml:2:", "attribute 'income'", "ranges[0]: missing key 'weight'"],
    ),
    (
        "attributes:\n  age: {values: {a: 1}, ranges: [{max: 1, weight: 1}]}\n",
        ["study.yaml:2:", "ranges cannot be given together with values"],
    ),
    ("risk:\n  alpha: 1\n", ["study.yaml:2:", "risk.alpha must be greater than 1", "got 1"]),
    ("risk: {alpha: 0.5}\n", ["study.yaml:1:", "risk.alpha must be greater than 1"]),
    ("risk: {alpha: many}\n", ["study.yaml:1:", "risk.alpha must be a number, got 'many'"]),
    ("risk:\n  epsilon: -0.01\n", ["study.yaml:2:", "risk.epsilon must be at least 0, got -0.01"]),
    (
        "risk:\n  missing: ignore\n",
        ["study.yaml:2:", "risk.missing must be one of wildcard, category, got 'ignore'"],
    ),
    ("atributes: {}\n", ["study.yaml:1:", "unknown key 'atributes'", "did you mean 'attributes'?"]),
    (
        "attributes:\n  age:\n    role: sensitive\n    publc: 0.3\n",
        [
            "study.yaml:4:",
            "attribute 'age'",
            "unknown key 'publc'",
            "did you mean 'public'?",
            "allowed: role, kind",
        ],
    ),
    ("risk: {alpha: 2, beta: 3}\n", ["study.yaml:1:", "unknown key 'beta' in risk"]),
    ("attributes:\n  age: {ranges: [{max: 1, weight: 1, step: 2}]}\n", ["unknown key 'step' in ranges[0]"]),
    ("data: {delimiter: ',,'}\n", ["study.yaml:1:", "data.delimiter must be one ASCII character"]),
    (
        "data:\n  missing_values: [NA, [1]]\n",
        ["study.yaml:2:", "data.missing_values must be a list of texts"],
    ),
    (
        "attributes:\n  age: quasi-identifier\n",
        ["study.yaml:2:", "attribute 'age': the description must be a mapping"],
    ),
    ("attributes: [age, sex]\n", ["study.yaml:1:", "attributes must be a mapping of keys, got a list"]),
    ("", ["study.yaml: the configuration is empty"]),
    ("# nothing but a comment\n", ["study.yaml: the configuration is empty"]),
    ("[1, 2]\n", ["study.yaml: the configuration must be a mapping", "got a list"]),
    ("attributes:\n  age: {role: sensitive\n", ["study.yaml:3:", "YAML syntax error"]),
    ("attributes:\n\t- age\n", ["study.yaml:2:", "YAML syntax error"]),
    (
        "attributes:\n  age: {}\n  sex: {}\n  age: {}\n",
        ["study.yaml:4:", "key 'age' appears twice (first on line 2)"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_CONFIGS)
def test_mistakes_name_file_line_attribute_and_problem(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"


def test_every_mistake_is_reported_in_file_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        risk: {alpha: 1}
        attributes:
          age: {public: 2}
          sex: {role: other}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    lines = str(caught.value).splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"{path}:1: risk.alpha")
    assert lines[1].startswith(f"{path}:3: attribute 'age': public")
    assert lines[2].startswith(f"{path}:4: attribute 'sex': role")


def test_missing_configuration_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nowhere\.yaml: no such configuration file"):
        load_config(tmp_path / "nowhere.yaml")


def test_unknown_attribute_names_the_configuration_and_the_data(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        attributes:
          age: {role: quasi-identifier}
          incme: {role: sensitive}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path).read(DATA / "paper.csv")
    message = str(caught.value)
    assert message.startswith(f"{path}:3: unknown attribute 'incme': ")
    assert "paper.csv has no such column, did you mean 'income'?" in message
    assert "columns: ssn, age, gender, race, income, disease" in message


def test_missing_weights_column_names_the_configuration(tmp_path: Path) -> None:
    path = write(tmp_path, "data:\n  weights: sampling_weight\n")
    with pytest.raises(
        ConfigError, match=r"study\.yaml:2: .*paper\.csv: the weights column 'sampling_weight'"
    ):
        load_config(path).read(DATA / "paper.csv")


def test_value_weight_that_never_occurs_warns_with_the_configuration_line(tmp_path: Path) -> None:
    path = write(tmp_path, "attributes:\n  disease: {values: {Flu: 0.2, Cancer: 1, Ebola: 1}}\n")
    with pytest.warns(
        SdcWarning, match=r"study\.yaml:2: attribute 'disease': a weight is given for value 'Ebola'"
    ):
        load_config(path).read(DATA / "paper.csv")


def test_settings_check_themselves() -> None:
    with pytest.raises(ConfigError, match="alpha must be a number greater than 1"):
        RiskSettings(alpha=1.0)
    with pytest.raises(ConfigError, match="epsilon must be a number of at least 0"):
        RiskSettings(epsilon=-1.0)
    with pytest.raises(ConfigError, match="missing must be one of wildcard, category"):
        RiskSettings(missing="drop")


def test_config_is_frozen() -> None:
    config = parse_config("risk: {alpha: 2}")
    assert isinstance(config, Config)
    with pytest.raises(AttributeError):
        config.risk = RiskSettings()  # type: ignore[misc]
