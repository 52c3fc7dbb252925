"""Issue 34, items 4, 5, 15 and 16: finite releases, recipes that match their original, values
shortened in messages, and messages that name the option and say what is wrong.

Each test is the campaign's failing case, its inputs built here; the command runs as a subprocess
(``python -m sdckit``) inside :func:`nothing_left_behind`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from conftest import make_table
from leftovers import nothing_left_behind
from sdckit.anonymize.base import check_finite
from sdckit.errors import ConfigError, capped, shown
from sdckit.recipes import fingerprint, input_mismatch
from sdckit.table import Kind


def sdckit(*arguments: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "sdckit", *map(str, arguments)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


def incomes(path: Path, rows: int = 20, offset: int = 0) -> Path:
    lines = ["age,zip,income"] + [f"{20 + (i + offset) % 30},{1000 + i % 3},{1000 * i}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


# item 4: a release is finite ----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("noise", ["additive", "correlated", "correlated-exact"])
def test_noise_amount_that_overflows_is_refused_naming_amount_and_attribute(
    tmp_path: Path, noise: str
) -> None:
    data = incomes(tmp_path / "data.csv")
    out = tmp_path / "out"
    out.mkdir()
    with nothing_left_behind(tmp_path, out) as env:
        result = sdckit(
            "anonymize", "noise", data, "--qi", "income", "--noise", noise, "--amount", "1e308",
            "-o", out / "release.csv", "--summary", out / "s.json", env=env,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    message = one_line(result.stderr)
    assert message.startswith(
        "error: --amount must keep the noise finite: 1e+308% of the spread of attribute 'income'"
    )
    assert "Traceback" not in result.stderr
    assert not (out / "release.csv").exists()


def test_dp_noise_bounds_whose_scale_overflows_are_refused(tmp_path: Path) -> None:
    pytest.importorskip("opendp")
    data = incomes(tmp_path / "data.csv")
    with nothing_left_behind(tmp_path) as env:
        result = sdckit(
            "anonymize", "dp-noise", data, "--qi", "age", "--attributes", "age", "--bounds", "age:0:1e308",
            "--epsilon", "0.001", "-o", tmp_path / "release.csv", env=env,
        )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "--bounds age:0:1e+308 with --epsilon 0.001" in one_line(result.stderr)


def test_microaggregation_of_values_whose_mean_overflows_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "big.csv"
    data.write_text(
        "age,income\n" + "".join(f"{20 + i},{1.7e308 if i % 2 else 1.6e308}\n" for i in range(12))
    )
    with nothing_left_behind(tmp_path) as env:
        result = sdckit(
            "anonymize", "mdav", data, "--qi", "income", "-k", "3", "-o", tmp_path / "r.csv", env=env
        )
    assert result.returncode == 2, result.stderr
    assert one_line(result.stderr).startswith("error: attribute 'income': mdav cannot average its values")


def test_every_release_is_checked_finite_before_it_is_returned() -> None:
    original = make_table(
        pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, np.inf, 2.0, 3.0]}), x=Kind.NUMERIC
    )
    overflowed = make_table(pl.DataFrame({"x": [np.inf, 2.0, -np.inf, np.nan], "y": [1.0, np.inf, 2.0, 3.0]}))
    with pytest.raises(ConfigError) as raised:
        check_finite("noise", original, overflowed)
    assert str(raised.value).startswith(
        "noise: attribute 'x' would be released with 3 values that are not finite (infinite or NaN) "
        "where the original is finite"
    )
    # an infinite value of the original, moved by a swap, is not the method's doing
    swapped = make_table(pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [np.inf, 1.0, 2.0, 3.0]}))
    check_finite("rank-swap", original, swapped)
    # missing values are not overflow
    missing = make_table(pl.DataFrame({"x": [None, 2.0, 3.0, 4.0], "y": [1.0, np.inf, 2.0, 3.0]}))
    check_finite("noise", original, missing)


def test_valid_noise_is_still_written(tmp_path: Path) -> None:
    data = incomes(tmp_path / "data.csv")
    result = sdckit(
        "anonymize", "noise", data, "--qi", "income", "--amount", "10", "-o", tmp_path / "r.csv", "-q"
    )
    assert result.returncode == 0, result.stderr
    released = pl.read_csv(tmp_path / "r.csv")
    assert released["income"].is_finite().all() and released.height == 20


# item 5: a recipe made on other data ---------------------------------------------------------------


def _mondrian(data: Path, summary: Path) -> None:
    release = summary.with_suffix(".csv")
    result = sdckit(
        "anonymize", "mondrian", data, "--qi", "age,zip", "-k", "3", "-o", release, "--summary", summary
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_evaluate_refuses_a_recipe_made_on_other_data(tmp_path: Path) -> None:
    original = incomes(tmp_path / "a.csv", rows=40)
    other = incomes(tmp_path / "b.csv", rows=40, offset=5)
    _mondrian(original, tmp_path / "ra.json")
    _mondrian(other, tmp_path / "rb.json")
    common = [
        "evaluate",
        original,
        tmp_path / "ra.csv",
        "--qi",
        "age,zip",
        "--utility",
        "numeric,tables",
        "-q",
    ]
    out = tmp_path / "out"
    out.mkdir()
    with nothing_left_behind(tmp_path, out) as env:
        refused = sdckit(*common, "--recipe", tmp_path / "rb.json", "--summary", out / "e.json", env=env)
    assert refused.returncode == 2, refused.stderr
    assert one_line(refused.stderr) == (
        f"error: {tmp_path / 'rb.json'}: --recipe was not made on {original}: it was made on other values "
        f"(the SHA-256 of the records differs); give the recipe of a release of {original}, or --force to "
        "attribute it anyway"
    )
    forced = sdckit(*common, "--recipe", tmp_path / "rb.json", "--force", "--summary", out / "e.json")
    assert forced.returncode == 0, forced.stderr
    assert "warning:" in forced.stderr and "(attributed all the same: --force)" in one_line(forced.stderr)
    summary = json.loads((out / "e.json").read_text())
    assert summary["releases"][0]["recipe"]["input"]["rows"] == 40
    matching = sdckit(*common, "--recipe", tmp_path / "ra.json")
    assert matching.returncode == 0, matching.stderr
    assert "warning" not in matching.stderr


def test_recipe_input_mismatch_names_rows_and_columns() -> None:
    table = make_table(pl.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    record = {"input": fingerprint(table)}
    assert input_mismatch(record, table) is None
    assert input_mismatch({"input": {**record["input"], "rows": 5}}, table) == (
        "it was made on 5 records, this data has 3"
    )
    renamed = {"input": {**record["input"], "columns": [["a", "Int64"], ["c", "String"]]}}
    assert input_mismatch(renamed, table) == "it was made on the columns 'a, c', this data has 'a, b'"
    # read with another configuration (other types): rows and names only
    retyped = {"input": {**record["input"], "columns": [["a", "String"], ["b", "String"]], "sha256": "0"}}
    assert input_mismatch(retyped, table) is None
    # over partitions the recipe has rows only
    assert input_mismatch({"input": {"rows": 3, "sha256": None}}, table) is None
    assert input_mismatch({"steps": []}, table) is None


# item 15: a huge value is shortened ----------------------------------------------------------------


def test_shown_keeps_the_start_the_end_and_the_length() -> None:
    assert shown("abc") == "'abc'"
    assert (
        shown("a" * 40 + "b" * 599_940 + "c" * 20)
        == "'" + "a" * 40 + "…" + "c" * 20 + "' (600,000 characters)"
    )
    assert shown("x" * 100, quoted=False) == "x" * 40 + "…" + "x" * 20 + " (100 characters)"
    long = "m" * 100_000
    assert len(capped(long)) < 4_100 and "96,000 characters cut" in capped(long)


def test_a_600000_character_value_is_not_echoed_whole(tmp_path: Path) -> None:
    data = tmp_path / "big.csv"
    data.write_text(
        "age,zip\n" + "".join(f"{20 + i},{1000 + i % 3}\n" for i in range(10)) + "x" * 600_000 + ",1000\n"
    )
    config = tmp_path / "c.yaml"
    config.write_text(
        "attributes:\n  age: {kind: numeric, role: quasi-identifier}\n  zip: {role: quasi-identifier}\n"
    )
    with nothing_left_behind(tmp_path) as env:
        result = sdckit("risk", "reidentification", data, "-c", config, env=env)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"error: {data}:12: attribute 'age': non-numeric value '{'x' * 40}…{'x' * 20}' (600,000 characters) "
        "in a numeric attribute"
    )


def test_a_huge_configuration_value_is_shortened(tmp_path: Path) -> None:
    data = incomes(tmp_path / "data.csv")
    config = tmp_path / "c.yaml"
    config.write_text(f"attributes:\n  age: {{kind: numeric, role: {'q' * 200_000}}}\n")
    result = sdckit("risk", "reidentification", data, "-c", config)
    assert result.returncode == 2
    assert len(result.stderr) < 4_200
    assert "(200,000 characters)" in one_line(result.stderr)


def test_a_huge_parameter_value_is_shortened(tmp_path: Path) -> None:
    data = incomes(tmp_path / "data.csv")
    result = sdckit(
        "anonymize", "noise", data, "--qi", "income", "--noise", "z" * 100_000, "-o", tmp_path / "r.csv"
    )
    assert result.returncode == 2
    assert len(result.stderr) < 4_200, result.stderr[:300]
    assert "(100,000 characters)" in one_line(result.stderr)


# item 16: messages say the option and what is wrong --------------------------------------------------

SYMPTOMS = (
    "age,gender,state,symptoms\n22,M,GA,Coughing;Headache;Sore Throat\n25,M,GA,Coughing;Headache\n"
    "30,F,TX,Headache;Vomiting\n35,F,TX,Headache;Sore Throat\n"
)


def test_slicing_without_a_sensitive_attribute_names_the_option_and_the_candidates(tmp_path: Path) -> None:
    data = tmp_path / "s.csv"
    data.write_text(SYMPTOMS)
    with nothing_left_behind(tmp_path) as env:
        result = sdckit("anonymize", "slicing", data, "--qi", "age,gender", "-o", tmp_path / "o.csv", env=env)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        "error: no sensitive attribute: give --sensitive one of the columns (state, symptoms), or one "
        "attribute role sensitive in the configuration"
    )


def test_quasi_sensitive_on_a_column_that_is_not_set_valued_says_so(tmp_path: Path) -> None:
    data = tmp_path / "s.csv"
    data.write_text(SYMPTOMS)
    knowledge = tmp_path / "k.csv"
    knowledge.write_text("label,items\nFlu,Coughing;Headache;Sore Throat\nHepatitis B,Vomiting;Dark urine\n")
    with nothing_left_behind(tmp_path) as env:
        result = sdckit(
            "anonymize", "quasi-sensitive", data, "--qi", "age,gender,state", "--knowledge", knowledge,
            "-k", "2", "-l", "2", "--set-column", "age", "-o", tmp_path / "o.csv", env=env,
        )  # fmt: skip
    assert result.returncode == 2
    error = one_line(result.stderr.split("error: ", 1)[1])
    assert error == (
        "--set-column 'age' is not set-valued: no item of the external knowledge occurs in it (its kind is "
        "numeric); a set-valued column holds items separated by ';', such as 'Coughing;Headache', and has "
        "kind set-valued (or role quasi-sensitive) in the configuration"
    )
    assert "external knowledge is empty" not in result.stderr
