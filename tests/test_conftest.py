"""The shared test machinery of conftest.py: the reference data skips or fails as asked, the table
builder describes what it is told, and the hypothesis profiles are the ones make test selects."""

from __future__ import annotations

import re

import polars as pl
import pytest
from hypothesis import HealthCheck, settings

from conftest import REQUIRE_DATA, SharedData, data_required, make_table
from sdckit.table import Attribute, Kind, Role


def test_absent_reference_data_is_a_skip_naming_the_path(tmp_path):
    missing = tmp_path / "nowhere" / "adult" / "adult.csv"
    with pytest.raises(
        pytest.skip.Exception, match=f"the reference data {re.escape(str(missing))} is absent"
    ):
        SharedData(tmp_path / "nowhere", required=False)("adult", "adult.csv")


def test_absent_reference_data_fails_when_it_is_required(tmp_path):
    missing = tmp_path / "nowhere" / "sdcmicro" / "testdata.csv"
    with pytest.raises(
        pytest.fail.Exception, match=f"{missing} is absent .*SDCKIT_REQUIRE_DATA=1 requires it"
    ):
        SharedData(tmp_path / "nowhere", required=True)("sdcmicro", "testdata.csv")


def test_present_reference_data_is_its_path(tmp_path):
    (tmp_path / "adult").mkdir()
    (tmp_path / "adult" / "adult.csv").write_text("age\n1\n")
    for required in (False, True):
        assert SharedData(tmp_path, required)("adult", "adult.csv") == tmp_path / "adult" / "adult.csv"
        assert SharedData(tmp_path, required)("adult") == tmp_path / "adult"


@pytest.mark.parametrize(("value", "required"), [(None, False), ("", False), ("0", False), ("1", True)])
def test_the_environment_variable_requires_the_data(monkeypatch, value, required):
    if value is None:
        monkeypatch.delenv(REQUIRE_DATA, raising=False)
    else:
        monkeypatch.setenv(REQUIRE_DATA, value)
    assert data_required() is required


def test_make_table_describes_the_named_columns_and_infers_the_others():
    frame = pl.DataFrame({"id": ["a", "b"], "age": [30, 40], "zip": [1, 2], "w": [1.5, 2.0], "s": ["x", "y"]})
    table = make_table(
        frame,
        id=Role.IDENTIFIER,
        age=Kind.NUMERIC,
        zip=(Role.QUASI_IDENTIFIER, Kind.CATEGORICAL),
        roles={"s": Attribute("s", Role.SENSITIVE, sensitivity=1.0)},
        weights="w",
    )
    schema = table.schema
    assert schema.names == ["id", "age", "zip", "w", "s"]  # the frame's order
    assert (schema["id"].role, schema["id"].kind) == (Role.IDENTIFIER, Kind.CATEGORICAL)
    assert (schema["age"].role, schema["age"].kind) == (Role.INSENSITIVE, Kind.NUMERIC)
    assert (schema["zip"].role, schema["zip"].kind) == (Role.QUASI_IDENTIFIER, Kind.CATEGORICAL)
    assert (schema["s"].role, schema["s"].sensitivity) == (Role.SENSITIVE, 1.0)
    # not described: Schema.infer's defaults
    assert (schema["w"].role, schema["w"].kind, schema["w"].described) == (
        Role.INSENSITIVE,
        Kind.NUMERIC,
        False,
    )
    assert table.weights == "w" and table.data.equals(frame)


def test_make_table_refuses_a_column_the_frame_lacks():
    with pytest.raises(AssertionError, match=r"\['sex'\] are not columns"):
        make_table(pl.DataFrame({"age": [1]}), sex=Role.QUASI_IDENTIFIER)


def test_the_profiles_lift_the_time_limits_and_ci_is_deterministic():
    for name in ("dev", "ci"):
        profile = settings.get_profile(name)
        assert profile.deadline is None
        assert HealthCheck.too_slow in profile.suppress_health_check
    assert settings.get_profile("ci").derandomize is True
    assert settings.get_profile("dev").derandomize is False
