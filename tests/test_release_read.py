"""Releases read back with the configuration that produced them (:meth:`Config.read_release`), and
checked with the k they were made with (:func:`check_table`, including ``missing="wildcard"``)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracles import brute_frequencies
from sdckit.anonymize.local_suppression import local_suppression
from sdckit.anonymize.mondrian import mondrian
from sdckit.anonymize.recoding import full_domain_generalization
from sdckit.config import load_config
from sdckit.errors import ConfigError
from sdckit.frequency import frequencies
from sdckit.io import write_table
from sdckit.models import DistinctLDiversity, KAnonymity, check_table
from sdckit.table import Kind, Role, Table

# test2.csv-style data with an identifier, written with ';' as the configuration says.
DATA = """Name;ZIPCode;Age;Disease
Ann;47677;29;gastric ulcer
Bob;47602;22;gastritis
Cid;47678;27;stomach cancer
Dan;47905;43;gastritis
Eve;47909;52;flu
Fay;47906;47;bronchitis
Gus;47605;30;bronchitis
Hal;47673;36;pneumonia
Ida;47607;32;stomach cancer
Jon;47677;25;flu
Kim;47911;55;gastritis
Lea;47603;38;pneumonia
Max;47906;41;flu
Ned;47678;28;gastritis
"""
CONFIG = """attributes:
  Name:    {role: identifier}
  ZIPCode: {role: quasi-identifier, kind: categorical, public: 0.5, hierarchy: zip.csv}
  Age:     {role: quasi-identifier, kind: numeric, public: 0.5,
            ranges: [{max: 30, weight: 0.5}], hierarchy: {intervals: [20, 30, 40, 50, 60], fanout: 2}}
  Disease: {role: sensitive, sensitivity: 1}
data:
  delimiter: ";"
"""
QI = ["ZIPCode", "Age"]
K = 3


@pytest.fixture
def study(tmp_path: Path):
    (tmp_path / "data.csv").write_text(DATA)
    (tmp_path / "config.yaml").write_text(CONFIG)
    zips = sorted({line.split(";")[1] for line in DATA.strip().splitlines()[1:]})
    (tmp_path / "zip.csv").write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;{z[:2]}***;*\n" for z in zips))
    config = load_config(tmp_path / "config.yaml")
    return tmp_path, config, config.read(tmp_path / "data.csv")


METHODS = {
    "full-domain": lambda table: full_domain_generalization(table, [KAnonymity(K)], suppression_limit=0.2),
    "mondrian": lambda table: mondrian(table, [KAnonymity(K)]),
    "local-suppression": lambda table: local_suppression(table, K),
}


def release_k(release, missing: str) -> float:
    """k of the release as made, in memory, by direct counting: the smallest number of records that
    match a (non-suppressed) record on the quasi-identifiers."""
    kept = ~release.suppressed_records
    counts = frequencies(release.table.data.filter(pl.Series(kept)), QI, missing=missing)
    return float(counts.min())


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("extension", ["csv", "parquet", "tsv"])
def test_a_release_reads_back_and_checks_with_its_k(study, method, extension):
    directory, config, table = study
    release = METHODS[method](table)
    path = directory / f"release.{extension}"
    write_table(release.table, path)
    with pytest.raises(ConfigError, match="unknown attribute 'Name'"):
        config.read(path)  # what the issue reported: the identifier is gone
    back = config.read_release(path)
    assert "Name" not in back.schema and back.data.columns == ["ZIPCode", "Age", "Disease"]
    assert back.n_records == len(DATA.strip().splitlines()) - 1
    assert back.schema["ZIPCode"].hierarchy is None and back.schema["Age"].hierarchy is None
    assert back.schema["Disease"].role is Role.SENSITIVE and back.schema["Disease"].sensitivity == 1
    missing = "wildcard" if method == "local-suppression" else "category"
    report = check_table(back, QI, [KAnonymity(K)], missing=missing)
    assert report.summary()["k"] == release_k(release, missing) >= K
    assert report.n_suppressed == release.n_suppressed
    # The values read back are the values released (nulls stay nulls, labels stay labels).
    released = release.table.data.select(pl.col(name).cast(pl.String) for name in back.data.columns)
    again = back.data.select(pl.all().cast(pl.String))
    assert released.equals(again)


def test_generalized_numbers_become_categories_and_plain_numbers_stay_numeric(study):
    directory, config, table = study
    generalized = mondrian(table, [KAnonymity(K)])
    write_table(generalized.table, directory / "mondrian.csv")
    back = config.read_release(directory / "mondrian.csv")
    assert back.schema["Age"].kind is Kind.CATEGORICAL and back.schema["Age"].range_weights == ()
    assert back.column("Age").dtype == pl.String
    assert set(back.column("Age").to_list()) == set(generalized.table.column("Age").to_list())
    suppressed = local_suppression(table, K)
    write_table(suppressed.table, directory / "suppressed.csv")
    back = config.read_release(directory / "suppressed.csv")
    assert back.schema["Age"].kind is Kind.NUMERIC and back.schema["Age"].range_weights != ()
    assert back.column("Age").dtype == pl.Int64
    assert back.column("Age").null_count() == suppressed.table.column("Age").null_count() > 0


def test_local_suppression_checks_as_k_with_wildcards_and_lower_as_categories(study):
    """Documented: under "category" every pattern of suppressed values is a class of its own, so the
    same 3-anonymous release reports a lower k."""
    directory, config, table = study
    release = local_suppression(table, K)
    write_table(release.table, directory / "release.csv")
    back = config.read_release(directory / "release.csv")
    wildcard = check_table(back, QI, [KAnonymity(K)], missing="wildcard")
    category = check_table(back, QI, [KAnonymity(K)], missing="category")
    assert wildcard.summary()["k"] == release_k(release, "wildcard") >= K
    assert wildcard.summary()["passes"]
    assert category.summary()["k"] == release_k(release, "category") < K
    assert not category.summary()["passes"]


def test_the_risk_of_a_release_is_measured_with_its_configuration(study):
    from sdckit.risk.combined import combined_risk

    directory, config, table = study
    release = full_domain_generalization(table, [KAnonymity(K)])
    write_table(release.table, directory / "release.csv")
    back = config.read_release(directory / "release.csv")
    before = combined_risk(table, missing="category").risk.mean()
    after = combined_risk(back, missing="category").risk.mean()
    assert 0 < after < before  # generalization lowers the risk


def test_an_identifier_still_in_the_release_stays_an_identifier(study):
    directory, config, table = study
    write_table(table, directory / "copy.csv")
    back = config.read_release(directory / "copy.csv")
    assert back.schema["Name"].role is Role.IDENTIFIER
    assert back.schema["Age"].kind is Kind.NUMERIC  # every value a number: kind kept


def test_the_configured_delimiter_is_kept_when_it_splits_the_header(study):
    directory, config, table = study
    # A ';' file whose values hold commas: sniffing could guess ',', the configuration says ';'.
    (directory / "semi.csv").write_text("ZIPCode;Age;Disease\n476**;20,5;flu, severe\n476**;20,5;flu\n")
    back = config.read_release(directory / "semi.csv")
    assert back.column("Disease").to_list() == ["flu, severe", "flu"]
    assert back.column("Age").to_list() == ["20,5", "20,5"]


def test_a_release_missing_a_non_identifier_attribute_is_still_an_error(study):
    directory, config, table = study
    write_table(table.data.drop("Disease"), directory / "partial.csv")
    with pytest.raises(ConfigError, match=r"config\.yaml:6: unknown attribute 'Disease'"):
        config.read_release(directory / "partial.csv")


def test_a_release_frame_reads_too(study):
    _, config, table = study
    release = mondrian(table, [KAnonymity(K)])
    back = config.read_release(release.table.data)
    assert back.schema["Age"].kind is Kind.CATEGORICAL
    assert check_table(back, QI, [KAnonymity(K)], missing="category").summary()["k"] == release_k(
        release, "category"
    )


# check_table(missing=...) -----------------------------------------------------------------------


def test_wildcard_check_by_hand():
    frame = pl.DataFrame({"a": ["x", "x", None, "y"], "b": [1, None, 1, 2]})
    table = Table.from_frame(frame)
    report = check_table(table, ["a", "b"], [KAnonymity(2)], missing="wildcard")
    # (x,1) matches itself, (x,null), (null,1): 3; (x,null): (x,1), itself, (null,1): 3;
    # (null,1): (x,1), (x,null), itself: 3; (y,2): itself: 1.
    np.testing.assert_array_equal(report.sizes, [3, 3, 3, 1])
    assert report.summary()["k"] == 1
    weighted = check_table(
        table, ["a", "b"], [KAnonymity(2)], missing="wildcard", weights=np.array([1, 2, 0, 4])
    )
    np.testing.assert_array_equal(weighted.sizes, [3, 3, 3, 4])


def test_wildcard_check_refuses_models_that_read_a_sensitive_attribute():
    table = Table.from_frame(pl.DataFrame({"a": ["x", None], "s": ["p", "q"]}))
    with pytest.raises(
        ConfigError, match=r"missing must be 'category' for models that read a sensitive attribute"
    ):
        check_table(table, ["a"], [KAnonymity(1), DistinctLDiversity("s", 1)], missing="wildcard")
    with pytest.raises(ConfigError, match=r"missing must be one of category, wildcard, got 'drop'"):
        check_table(table, ["a"], [KAnonymity(1)], missing="drop")


@settings(max_examples=80)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(["x", "y", None]), min_size=n, max_size=n),
            st.lists(st.sampled_from([1, 2, None]), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=n, max_size=n),
        )
    ),
    st.booleans(),
)
def test_wildcard_class_sizes_equal_brute_force(columns, weighted):
    a, b, w = columns
    frame = pl.DataFrame({"a": a, "b": b}, schema={"a": pl.String, "b": pl.Int64})
    weights = np.array(w) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = check_table(
            Table.from_frame(frame), ["a", "b"], [KAnonymity(1)], missing="wildcard", weights=weights
        )
    brute = brute_frequencies(frame.to_dicts(), ["a", "b"], "wildcard", None if weights is None else list(w))
    np.testing.assert_allclose(report.sizes, [brute[i] for i in report.first])
    assert report.summary()["k"] == pytest.approx(min(brute))
