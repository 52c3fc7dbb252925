"""``sdckit describe``: roles proposed from names, values and α figures; the starting configuration.

Oracles: α-distinction and α-separation counted by hand on a 5-record table; Luhn check digits of
published test card numbers; minimal sample uniques against the brute-force search of
:mod:`sdckit.risk.suda`; planted identifiers whose kind is known by construction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from sdckit.config import load_config
from sdckit.describe import alpha, attribute_sets, config_text, describe, describe_file, minimal_uniques
from sdckit.describe.names import IDENTIFIER_NAMES, match, words
from sdckit.describe.values import value_matches

ROOT = Path(__file__).resolve().parent.parent
ADULT = ROOT.parent / "shared" / "data" / "adult" / "adult.csv"


def cli(*arguments: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from sdckit.cli import app

    result = CliRunner().invoke(app, list(arguments))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def one_error(*arguments: str) -> str:
    status, _, err = cli(*arguments)
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# α-distinction and α-separation -------------------------------------------------------------------

FIVE = pl.DataFrame({"a": ["1", "1", "2", "2", "3"], "b": ["x", "y", "x", "x", "y"]})


def test_alpha_of_a_five_record_table_by_hand():
    # a: classes {1,1}, {2,2}, {3} -> 3 classes of 5; together: 2 pairs of the 10 -> separation 8/10
    # b: classes {x,x,x}, {y,y} -> 2 of 5; together 3 + 1 = 4 pairs of 10 -> separation 6/10
    # a,b: (1x), (1y), (2x,2x), (3y) -> 4 of 5; together 1 pair of 10 -> separation 9/10
    sets = attribute_sets(FIVE, ["a", "b"], max_size=2)
    got = {
        s.attributes: (s.distinction, s.separation, s.classes, s.uniques) for size in sets for s in sets[size]
    }
    assert got[("a",)] == pytest.approx((0.6, 0.8, 3, 1))
    assert got[("b",)] == pytest.approx((0.4, 0.6, 2, 0))
    assert got[("a", "b")] == pytest.approx((0.8, 0.9, 4, 3))
    assert [s.attributes for s in sets[1]] == [("a",), ("b",)]  # strongest first
    assert alpha(np.array([1, 1, 1]), 3) == (1.0, 1.0)  # a key
    assert alpha(np.array([1]), 1) == (0.0, 0.0)  # undefined: ARX's 0


def test_larger_sets_extend_the_strongest_ones():
    rng = np.random.default_rng(3)
    frame = pl.DataFrame({f"c{j}": rng.integers(0, 3 + j, 300).astype(str) for j in range(5)})
    sets = attribute_sets(frame, frame.columns, max_size=3, beam=2)
    assert len(sets[1]) == 5 and len(sets[2]) == 10
    for s in sets[3]:
        # every triple measured holds one of the two strongest pairs
        assert any(set(p.attributes) <= set(s.attributes) for p in sets[2][:2])
        keys = frame.select(s.attributes).group_by(s.attributes).len()["len"].to_numpy()
        assert (s.distinction, s.separation) == pytest.approx(alpha(keys, 300))


def test_records_in_minimal_sample_uniques_agree_with_the_brute_force_search():
    from sdckit.frequency import encode
    from sdckit.risk.suda import brute_force_msus

    rng = np.random.default_rng(5)
    frame = pl.DataFrame({f"k{j}": rng.integers(0, 4, 60).astype(str) for j in range(4)})
    found = minimal_uniques(frame, frame.columns, max_size=3)
    encoding = encode(frame, frame.columns)
    records, masks = brute_force_msus(np.column_stack(encoding.codes), 3, list(encoding.cardinalities))
    assert found.records == len(np.unique(records))
    for j, name in enumerate(encoding.names):
        assert found.by_attribute[name] == len(np.unique(records[(masks >> j) & 1 == 1]))


# Names and values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("first_name", "HIPAA 1: names"),
        ("patientLastName", "HIPAA 1: names"),
        ("E-Mail", "HIPAA 6: e-mail addresses"),
        ("home_tel", "HIPAA 4-5: telephone and fax numbers"),
        ("SSN", "HIPAA 7: social security numbers"),
        ("dateOfBirth", "HIPAA 3: dates of birth"),
        ("ip_address", "HIPAA 15: IP addresses"),
        ("street address", "HIPAA 2: street address"),
        ("student_id", "HIPAA 18: other unique identifiers"),
        ("hotel", None),
        ("school_name", None),
        ("age", None),
    ],
)
def test_identifier_names(name, category):
    rule = match(name, IDENTIFIER_NAMES)
    assert (rule.category if rule else None) == category
    assert words("dateOfBirth_2") == "date of birth 2"


def test_luhn_check_digits_of_published_test_numbers():
    valid = ["4111 1111 1111 1111", "5500-0000-0000-0004", "340000000000009", "6011000000000004"]
    invalid = ["4111 1111 1111 1112", "5500-0000-0000-0005", "340000000000008", "6011000000000005"]
    frame = pl.DataFrame({"good": valid * 5, "bad": invalid * 5})
    found = value_matches(frame, ["good", "bad"])
    assert found["good"].pattern.name == "card" and found["good"].share == 1.0
    assert "bad" not in found


def planted(n: int = 200) -> pl.DataFrame:
    """Identifiers under names that do not say so (found by value), under names that do, and
    quasi-identifiers, sensitive and insensitive columns; zip codes with leading zeros."""
    rng = np.random.default_rng(7)
    i = np.arange(n)
    emails = [f"user{k}@example.org" for k in i]
    emails[:6] = ["n/a"] * 6  # 97% of the values look like e-mail addresses
    return pl.DataFrame(
        {
            "contact": emails,
            "reach": [f"({200 + k % 700}) {100 + k % 900}-{1000 + k:04d}" for k in i],
            "ref": [f"{100 + k % 800:03d}-{10 + k % 90:02d}-{1000 + k:04d}" for k in i],
            "host": [f"10.{k // 256}.{k % 256}.{(7 * k) % 255}" for k in i],
            "site": [f"https://example.org/people/{k}" for k in i],
            "born": [f"{1930 + k % 70}-{1 + k % 12:02d}-{1 + k % 28:02d}" for k in i],
            "customer": [f"Person Number{k} Smith{k * 7}" for k in i],
            "record_id": (i + 1000).tolist(),
            "full_name": [f"A{k % 150}" for k in i],
            "age": rng.integers(18, 90, n).tolist(),
            "sex": rng.choice(["F", "M"], n).tolist(),
            "zip": [f"{z:05d}" for z in rng.integers(1000, 1300, n)],
            "income": rng.integers(1000, 90000, n).tolist(),
            "score": rng.integers(0, 5, n).astype(str).tolist(),
            "count": rng.integers(0, 3, n).astype(str).tolist(),  # a name polars' value_counts uses
            "running": rng.permutation(n) * 7 + 100,  # whole numbers, all distinct: a record number
            "height": np.round(rng.uniform(150.0, 200.0, n), 6)
            + np.arange(n) * 1e-7,  # all distinct, not whole
        }
    ).with_columns(pl.all().cast(pl.String))


def test_planted_identifiers_are_found_by_name_and_by_value():
    found = {c.name: c for c in describe(planted()).columns}
    by_value = {
        "contact": "97% of the values look like e-mail addresses",
        "reach": "telephone numbers",
        "ref": "social security numbers",
        "host": "IPv4 addresses",
        "site": "web addresses",
        "born": "dates of birth",
    }
    for name, reason in by_value.items():
        assert found[name].role == "identifier", (name, found[name].why)
        assert reason in found[name].why
    assert found["customer"].role == "identifier" and "almost unique text" in found["customer"].why
    assert found["record_id"].role == "identifier" and "HIPAA 18" in found["record_id"].why
    assert found["full_name"].role == "identifier" and "HIPAA 1" in found["full_name"].why
    assert {found[n].role for n in ("age", "sex", "zip")} == {"quasi-identifier"}
    assert found["income"].role == "sensitive"
    assert found["score"].role == "insensitive" and "make it a quasi-identifier" in found["score"].why
    assert found["running"].role == "identifier" and "every value distinct" in found["running"].why
    assert found["height"].role == "insensitive" and found["height"].kind == "numeric"
    assert found["zip"].kind == "categorical" and found["zip"].leading_zeros
    assert found["age"].kind == "numeric" and found["age"].rank is not None
    assert found["zip"].msu_records is not None


def test_without_a_telling_name_the_best_separating_columns_are_proposed():
    rng = np.random.default_rng(2)
    frame = pl.DataFrame(
        {"u": rng.integers(0, 2, 500), "v": rng.integers(0, 50, 500), "w": rng.integers(0, 5, 500)}
    )
    found = {c.name: c for c in describe(frame).columns}
    assert [found[n].rank for n in ("v", "w", "u")] == [1, 2, 3]
    assert all(found[n].role == "quasi-identifier" and "no name says" in found[n].why for n in "uvw")


# The configuration and the command ------------------------------------------------------------------


def test_the_configuration_loads_and_runs_reidentification_end_to_end(tmp_path):
    data = tmp_path / "people.csv"
    planted().write_csv(data)
    config = tmp_path / "proposed.yaml"
    status, out, err = cli("describe", str(data), "-o", str(config), "--summary", str(tmp_path / "s.json"))
    assert status == 0, err
    assert "Proposed roles of people.csv" in out
    text = config.read_text()
    assert "  # direct identifier: 97% of the values look like e-mail addresses (HIPAA 6" in text
    settings = load_config(config)
    roles = {a.name: a.role.value for a in settings.attributes}
    assert roles["contact"] == "identifier" and roles["zip"] == "quasi-identifier"
    table = settings.read(data)
    assert table.data["zip"].to_list() == planted()["zip"].to_list()  # leading zeros survive
    status, out, err = cli("risk", "reidentification", str(data), "-c", str(config))
    assert status == 0, err
    assert config_text(describe(planted())) == text.replace(
        "`sdckit describe people.csv` from people.csv", "`sdckit describe` from <data frame>"
    )


def test_the_summary_holds_the_figures(tmp_path):
    import json

    data = tmp_path / "five.csv"
    FIVE.write_csv(data)
    status, _, err = cli(
        "describe", str(data), "--summary", str(tmp_path / "s.json"), "--max-combination", "2"
    )
    assert status == 0, err
    figures = json.loads((tmp_path / "s.json").read_text())
    pair = figures["attribute_sets"]["2"][0]
    assert pair["attributes"] == ["a", "b"] and pair["alpha_separation"] == pytest.approx(0.9)
    assert figures["records"] == 5


def test_sample_analyses_that_many_records(tmp_path):
    described = describe(planted(), sample=50)
    assert (described.records, described.analysed) == (200, 50)
    assert "50 of them analysed" in config_text(described)


def test_bad_input_one_message_exit_2_nothing_written(tmp_path):
    data = tmp_path / "d.csv"
    FIVE.write_csv(data)
    output = tmp_path / "c.yaml"
    one_error("describe", str(tmp_path / "missing.csv"), "-o", str(output))
    binary = tmp_path / "b.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00")
    one_error("describe", str(binary), "-o", str(output))
    one_error("describe", str(tmp_path), "-o", str(output))
    same = tmp_path / "d.yaml"
    same.write_text("a,b\n1,2\n")
    assert "--output" in one_error("describe", str(same), "-o", str(same))
    assert same.read_text() == "a,b\n1,2\n"
    assert "--sample" in one_error("describe", str(data), "--sample", "0", "-o", str(output))
    assert "--max-combination" in one_error(
        "describe", str(data), "--max-combination", "9", "-o", str(output)
    )
    assert "--output" in one_error("describe", str(data), "-o", str(tmp_path / "c.txt"))
    assert not output.exists() and not (tmp_path / "c.txt").exists()


def test_the_generated_census_data(tmp_path):
    from examples.generate import main as generate

    data = tmp_path / "census.csv"
    assert generate(["--records", "3000", "--seed", "1", "--output", str(data)]) == 0
    found = {c.name: c for c in describe_file(data).columns}
    assert found["student_id"].role == "identifier"
    assert found["school"].leading_zeros and found["school"].role == "quasi-identifier"
    assert {"birth_year", "gender", "ethnicity", "parish"} <= {
        n for n, c in found.items() if c.role == "quasi-identifier"
    }
    assert found["mental_health_referral"].role == "sensitive"


@pytest.mark.skipif(not ADULT.exists(), reason="Adult is not in ../shared/data")
def test_adult():
    found = {c.name: c for c in describe_file(ADULT).columns}
    assert {n for n, c in found.items() if c.role == "quasi-identifier"} == {
        "sex",
        "age",
        "race",
        "marital-status",
        "education",
        "native-country",
        "workclass",
        "occupation",
    }
    assert found["salary-class"].role == "sensitive"
    assert not [n for n, c in found.items() if c.role == "identifier"]
    assert found["age"].rank == 1
