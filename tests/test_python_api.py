"""pandas in, pandas out: ``sdckit.protect`` on pandas, polars and Arrow frames with the roles given
inline, the short ``repr`` of a release, the subpackages reachable after ``import sdckit``, and the
same inline roles on the command line (``--qi``, ``--sensitive``, ``--weight``).

k-anonymity is checked independently of the library, with nulls as wildcards as sdcMicro counts them
(and as local suppression does by default): a record's class is every record that agrees with it on
each quasi-identifier that neither of the two misses. The distinct patterns are grouped with pandas
and compared pairwise with numpy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import sdckit
from sdckit.cli import app
from sdckit.errors import ConfigError

QUASI_IDENTIFIERS = ["gender", "birth_year", "ethnicity", "parish"]
UNTOUCHED = ["student_id", "school", "income", "gifted", "w"]
N_RECORDS = 400


def students(records: int = N_RECORDS, seed: int = 3) -> pd.DataFrame:
    """Records with identifying combinations of four quasi-identifiers (no missing values, so that
    every null of a release is a suppressed cell) and columns no method may touch: IDs and school
    codes with leading zeros, amounts, a flag, sampling weights."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "student_id": [f"{number:06d}" for number in rng.permutation(records)],
            "gender": rng.choice(["F", "M"], records),
            "birth_year": rng.integers(1985, 2001, records),
            "ethnicity": rng.choice(["Asian", "Black", "Hispanic", "White", "Other"], records),
            "parish": rng.choice([f"parish {number}" for number in range(12)], records),
            "school": [f"0{number:05d}" for number in rng.integers(0, 3000, records)],
            "income": rng.normal(40_000, 9_000, records).round(2),
            "gifted": rng.choice(["Yes", "No"], records),
            "w": rng.integers(1, 4, records).astype(np.float64),
        }
    )


def wildcard_class_sizes(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """Every distinct pattern's class size with nulls as wildcards: the records that agree with it on
    each quasi-identifier both observe (a pattern's own records included)."""
    patterns = frame[names].astype(object).where(frame[names].notna(), None)
    counts = patterns.groupby(names, dropna=False, sort=False).size().reset_index(name="records")
    values = counts[names].to_numpy(dtype=object)
    missing = pd.isna(counts[names]).to_numpy()
    codes = np.zeros(values.shape, dtype=np.int64)
    for column in range(values.shape[1]):
        observed = ~missing[:, column]
        _, codes[observed, column] = np.unique(values[observed, column].astype(str), return_inverse=True)
    agree = (codes[:, None, :] == codes[None, :, :]) | missing[:, None, :] | missing[None, :, :]
    return (agree.all(axis=2) * counts["records"].to_numpy()[None, :]).sum(axis=1)


def check_release(released: pd.DataFrame, original: pd.DataFrame, k: int) -> int:
    """A local-suppression release of ``original``: k-anonymous with nulls as wildcards, every
    quasi-identifier cell either kept or suppressed, every other column unchanged. Returns the number
    of suppressed cells."""
    assert list(released.columns) == list(original.columns)
    assert len(released) == len(original)
    assert wildcard_class_sizes(released, QUASI_IDENTIFIERS).min() >= k
    suppressed = 0
    for name in QUASI_IDENTIFIERS:
        kept = released[name].notna().to_numpy()
        kept_values = released[name][kept].astype(str).to_numpy()
        assert (kept_values == original[name][kept].astype(str).to_numpy()).all()
        suppressed += int((~kept).sum())
    assert suppressed > 0  # the data has unique combinations: something must be suppressed
    for name in UNTOUCHED:
        pd.testing.assert_series_equal(released[name], original[name], check_dtype=True)
    return suppressed


def test_the_oracle_counts_wildcard_classes_by_hand():
    frame = pd.DataFrame({"a": ["x", "x", None, "y"], "b": [1.0, 2.0, 1.0, None]})
    # (x,1) matches itself and (null,1); (x,2) only itself (b differs from 1, a from y); (null,1)
    # matches (x,1), itself and (y,null) (each null a wildcard); (y,null) matches (null,1) and itself.
    assert wildcard_class_sizes(frame, ["a", "b"]).tolist() == [2, 1, 3, 2]


def test_protect_a_pandas_frame():
    original = students()
    release = sdckit.protect(original, method="local-suppression", k=3, quasi_identifiers=QUASI_IDENTIFIERS)
    released = release.to_pandas()
    suppressed = check_release(released, original, k=3)
    assert release.n_suppressed_cells == suppressed
    # An integer column with suppressed values stays integer (nullable), not float.
    assert str(released["birth_year"].dtype) == "Int64"
    kept = released["birth_year"].notna()
    assert (released["birth_year"][kept].astype("int64") == original["birth_year"][kept]).all()


def test_protect_a_polars_frame():
    original = pl.from_pandas(students())
    release = sdckit.protect(original, method="local-suppression", k=3, quasi_identifiers=QUASI_IDENTIFIERS)
    released = release.to_polars()
    assert isinstance(released, pl.DataFrame)
    assert released.schema == original.schema  # every column keeps its type
    assert released.select(UNTOUCHED).equals(original.select(UNTOUCHED))
    check_release(release.to_pandas(), students(), k=3)


def test_protect_an_arrow_table():
    original = pa.Table.from_pandas(students(), preserve_index=False)
    release = sdckit.protect(original, method="local-suppression", k=3, quasi_identifiers=QUASI_IDENTIFIERS)
    released = release.to_polars()
    expected = pl.from_arrow(original)
    assert released.schema == expected.schema
    assert released.select(UNTOUCHED).equals(expected.select(UNTOUCHED))
    check_release(release.to_pandas(), students(), k=3)


def test_nulls_as_a_category_give_classes_of_k_grouped_by_pandas():
    original = students()
    release = sdckit.protect(
        original, method="local-suppression", k=3, missing="category", quasi_identifiers=QUASI_IDENTIFIERS
    )
    released = release.to_pandas()
    # A null is a value of its own: pandas' groups (nulls kept as a group) are the classes.
    sizes = released.groupby(QUASI_IDENTIFIERS, dropna=False).size()
    assert sizes.min() >= 3
    assert "k reached" in repr(release)
    assert f"k reached: {sizes.min()} " in repr(release)


def test_the_repr_is_a_short_summary():
    original = students()
    release = sdckit.protect(original, method="local-suppression", k=3, quasi_identifiers=QUASI_IDENTIFIERS)
    text = repr(release)
    lines = text.splitlines()
    assert len(lines) < 15
    assert all(len(line) <= 110 for line in lines)
    assert "array(" not in text and "DataFrame" not in text and "shape:" not in text
    assert lines[0] == f"Release of local-suppression: {N_RECORDS:,} records × {original.shape[1]} columns"
    assert "k=3" in text
    nulls = int(release.to_pandas()[QUASI_IDENTIFIERS].isna().to_numpy().sum())
    assert f"suppressed cells: {nulls:,}" in text
    assert str(release) == text


def test_an_unknown_keyword_names_it_and_the_methods_parameters():
    with pytest.raises(ConfigError) as caught:
        sdckit.protect(students(), method="local-suppression", k=3, kk=2, quasi_identifiers=QUASI_IDENTIFIERS)
    message = str(caught.value)
    assert "kk is not a parameter of local-suppression" in message
    assert "k, importance, missing, strict_importance" in message


@pytest.mark.parametrize(
    ("keywords", "words"),
    [
        ({"method": "local-supression", "k": 3}, ["unknown anonymization method", "local-suppression"]),
        ({"method": "local-suppression", "k": 0}, ["k", "0"]),
        ({"method": "local-suppression", "k": 3, "seed": 1}, ["seed", "local-suppression takes no seed"]),
        ({"k": 3}, ["method is required"]),
        ({"method": "local-suppression", "steps": [{"method": "mondrian"}]}, ["steps=", "method"]),
    ],
)
def test_bad_calls_are_one_clear_error(keywords, words):
    with pytest.raises(ConfigError) as caught:
        sdckit.protect(students(), quasi_identifiers=QUASI_IDENTIFIERS, **keywords)
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))


def test_a_role_naming_no_column_names_it():
    with pytest.raises(
        ConfigError, match=r"quasi_identifiers: unknown attribute 'parrish'.*did you mean 'parish'"
    ):
        sdckit.protect(students(), method="local-suppression", k=3, quasi_identifiers=["gender", "parrish"])
    with pytest.raises(ConfigError, match="weight: .*the weights column 'weight' is not a column"):
        sdckit.protect(
            students(), method="local-suppression", k=3, quasi_identifiers=["gender"], weight="weight"
        )
    with pytest.raises(ConfigError, match="'gender' is named by both quasi_identifiers and sensitive"):
        sdckit.protect(
            students(), method="local-suppression", quasi_identifiers=["gender"], sensitive=["gender"]
        )


def test_weight_names_the_sampling_weights():
    """A sample of half the records doubles the sampling weights of the records kept (each now stands
    for twice as many): the weights column named inline is the table's."""
    original = students()
    release = sdckit.protect(original, method="sample", fraction=0.5, seed=7, weight="w")
    assert release.original.weights == "w"
    released = release.to_pandas()
    assert len(released) == N_RECORDS // 2
    before = original.set_index("student_id").loc[released["student_id"], "w"].to_numpy()
    assert released["w"].tolist() == (before * 2).tolist()


def test_a_configuration_and_inline_roles_merge():
    """The inline quasi-identifiers replace the configuration's: a configuration with four and the
    two inline give the release of the two alone; the configuration's other settings stay."""
    original = students()
    config = {"attributes": {name: {"role": "quasi-identifier"} for name in QUASI_IDENTIFIERS}}
    merged = sdckit.protect(
        original, method="local-suppression", k=3, config=config, quasi_identifiers=["gender", "birth_year"]
    )
    alone = sdckit.protect(
        original, method="local-suppression", k=3, quasi_identifiers=["gender", "birth_year"]
    )
    assert merged.quasi_identifiers == alone.quasi_identifiers == ("gender", "birth_year")
    assert merged.to_polars().equals(alone.to_polars())
    from_config = sdckit.protect(
        original, method="local-suppression", k=3, config=sdckit.parse_config(config)
    )
    assert set(from_config.quasi_identifiers) == set(QUASI_IDENTIFIERS)
    check_release(from_config.to_pandas(), original, k=3)


def test_inline_roles_keep_the_hierarchy_files_of_the_configuration(tmp_path, monkeypatch):
    """Hierarchy files are named relative to the configuration file; with inline roles the run still
    finds them from another working directory, and its recipe records no configuration (the file's
    roles were not the run's)."""
    (tmp_path / "gender.csv").write_text("F;*\nM;*\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        "attributes:\n"
        "  gender: {role: quasi-identifier, hierarchy: gender.csv}\n"
        "  birth_year: {role: quasi-identifier, "
        "hierarchy: {intervals: {width: 4, bottom: 1985, top: 2001}}}\n"
        "  ethnicity: {role: quasi-identifier, hierarchy: {order: true}}\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    original = students()
    release = sdckit.protect(
        original, method="generalize", k=5, config=str(config), quasi_identifiers=["gender", "birth_year"]
    )
    assert release.quasi_identifiers == ("gender", "birth_year")  # in the order of the configuration
    released = release.to_pandas()
    assert released["ethnicity"].equals(original["ethnicity"])  # no longer a quasi-identifier
    sizes = released.groupby(["birth_year", "gender"], dropna=False).size()
    assert sizes.min() >= 5
    data = tmp_path / "data.csv"
    original.to_csv(data, index=False)
    summary = tmp_path / "summary.json"
    result = runner.invoke(
        app,
        ["anonymize", "generalize", str(data), "-c", str(config), "--qi", "gender,birth_year", "-k", "5"]
        + ["-o", str(tmp_path / "g.csv"), "--summary", str(summary)],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(summary.read_text())["recipe"]["config"] is None


def test_steps_run_a_chain():
    original = students()
    chain = sdckit.protect(
        original, steps=[{"method": "local-suppression", "k": 3}], quasi_identifiers=QUASI_IDENTIFIERS
    )
    single = sdckit.protect(original, method="local-suppression", k=3, quasi_identifiers=QUASI_IDENTIFIERS)
    assert chain.table.data.equals(single.to_polars())
    assert chain.recipe["steps"][0]["method"] == "local-suppression"


def test_a_seed_makes_a_randomized_method_repeatable():
    original = students()
    first = sdckit.protect(original, method="sample", fraction=0.5, seed=7)
    again = sdckit.protect(original, method="sample", fraction=0.5, seed=7)
    assert first.params.seed == 7
    assert len(first.to_pandas()) == N_RECORDS // 2
    assert first.to_polars().equals(again.to_polars())


def test_import_sdckit_reaches_the_subpackages_lazily():
    script = (
        "import sys\n"
        "import sdckit\n"
        "assert 'polars' not in sys.modules and 'numba' not in sys.modules, 'import sdckit loaded them'\n"
        "assert callable(sdckit.anonymize.run_method)\n"
        "for name in ('risk', 'utility', 'tabular', 'evaluate', 'models'):\n"
        "    assert getattr(sdckit, name).__name__ == 'sdckit.' + name\n"
        "assert sdckit.protect.__module__ == 'sdckit.api'\n"
        "assert 'anonymize' in dir(sdckit)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# The command line: --qi, --sensitive, --weight ----------------------------------------------------

runner = CliRunner()


def written(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data.csv"
    students().to_csv(data, index=False)
    config = tmp_path / "config.yaml"
    config.write_text(
        "attributes:\n" + "".join(f"  {name}: {{role: quasi-identifier}}\n" for name in QUASI_IDENTIFIERS)
    )
    return data, config


def test_qi_on_the_command_line_equals_the_configuration(tmp_path):
    data, config = written(tmp_path)
    common = ["anonymize", "local-suppression", str(data), "-k", "3"]
    inline = runner.invoke(app, [*common, "--qi", ",".join(QUASI_IDENTIFIERS), "-o", str(tmp_path / "a.csv")])
    assert inline.exit_code == 0, inline.output
    configured = runner.invoke(app, [*common, "-c", str(config), "-o", str(tmp_path / "b.csv")])
    assert configured.exit_code == 0, configured.output
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    released = pd.read_csv(tmp_path / "a.csv", dtype={"student_id": str, "school": str})
    assert wildcard_class_sizes(released, QUASI_IDENTIFIERS).min() >= 3
    # check reads the release with the same inline roles
    checked = runner.invoke(
        app, ["check", str(tmp_path / "a.csv"), "--qi", ",".join(QUASI_IDENTIFIERS), "-k", "3"]
    )
    assert checked.exit_code == 0, checked.output


def test_qi_with_a_configuration_replaces_its_quasi_identifiers(tmp_path):
    data, config = written(tmp_path)
    common = ["anonymize", "local-suppression", str(data), "-k", "3", "--qi", "gender, birth_year"]
    merged = runner.invoke(app, [*common, "-c", str(config), "-o", str(tmp_path / "a.csv")])
    assert merged.exit_code == 0, merged.output
    alone = runner.invoke(app, [*common, "-o", str(tmp_path / "b.csv")])
    assert alone.exit_code == 0, alone.output
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    released = pd.read_csv(tmp_path / "a.csv")
    assert released["ethnicity"].notna().all() and released["parish"].notna().all()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--qi", "gender,zip"], ["--qi: unknown attribute 'zip'", "data.csv has no such column"]),
        (["--qi", "gender,,parish"], ["--qi must be column names separated by commas"]),
        (["--qi", "gender", "--weight", "weights"], ["--weight:", "data.csv", "'weights' is not a column"]),
        ([], ["no configuration", "-c/--config", "--qi"]),
    ],
)
def test_bad_inline_roles_exit_2_naming_them(tmp_path, options, words):
    data, _ = written(tmp_path)
    result = runner.invoke(
        app, ["anonymize", "local-suppression", str(data), "-k", "3", *options, "-o", str(tmp_path / "a.csv")]
    )
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    for word in words:
        assert word in text, (word, text)
    assert not (tmp_path / "a.csv").exists()


def test_weight_and_sensitive_on_the_command_line_equal_the_configuration(tmp_path):
    data, _ = written(tmp_path)
    config = tmp_path / "weighted.yaml"
    config.write_text(
        "attributes:\n"
        + "".join(f"  {name}: {{role: quasi-identifier}}\n" for name in QUASI_IDENTIFIERS)
        + "  gifted: {role: sensitive}\ndata: {weights: w}\n"
    )
    common = ["risk", "reidentification", str(data)]
    inline = ["--qi", ",".join(QUASI_IDENTIFIERS), "--sensitive", "gifted", "--weight", "w"]
    for options, name in ((inline, "a.json"), (["-c", str(config)], "b.json")):
        result = runner.invoke(app, [*common, *options, "--summary", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    first, second = (json.loads((tmp_path / name).read_text()) for name in ("a.json", "b.json"))
    for document in (first, second):
        document.pop("elapsed_seconds", None)
        document.pop("config", None)
    assert first == second
    assert first["weighted"] is True and first["journalist"]["population"] == "weights"


def test_a_numpy_integer_counts_as_the_number_it_holds():
    from sdckit.anonymize.microaggregation import mdav
    from sdckit.anonymize.recoding import GeneralizeCall
    from sdckit.models import KAnonymity
    from sdckit.table import Table
    from sdckit.tabular.rounding import RoundParams

    table = Table.from_frame(pl.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "b": [3.0, 1, 2, 5, 4, 6]}))
    release = mdav(table, k=np.int64(3), attributes=["a", "b"])
    assert release.params.k == 3 and type(release.params.k) is int
    assert release.class_sizes().tolist() == [3, 3]
    assert RoundParams.parse({"base": np.int32(5)}).base == 5
    # An array is not a number: it is handed on as it is (generalize's weights).
    weights = np.ones(6)
    assert GeneralizeCall.parse({"models": (KAnonymity(2),), "weights": weights}).weights is weights
