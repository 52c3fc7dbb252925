"""What every registered measure (``sdckit risk <measure>``, ``sdckit utility <measure>``) shares:
a command with exactly its own options, parameters that refuse bad values naming the option, an
option of another measure named as such, and a summary that is plain JSON."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import typer.main
from typer.testing import CliRunner

from param_values import assert_fields_refuse_bad_values
from sdckit.cli import app
from sdckit.cli._measures import measure_options
from sdckit.errors import ConfigError
from sdckit.measures import RISK_MEASURES, UTILITY_MEASURES, measure_spec, run_measure

runner = CliRunner()
SPECS = [*RISK_MEASURES, *UTILITY_MEASURES]
IDS = [f"{spec.group}-{spec.name}" for spec in SPECS]

#: Parameters that make each measure's object valid when its defaults alone are not.
VALID_PARAMS: dict[str, dict] = {}


def valid(spec) -> dict:
    return VALID_PARAMS.get(spec.name, {})


def test_both_groups_have_measures():
    assert "combined" in RISK_MEASURES
    assert len(SPECS) >= 2


def test_the_measure_registries_discover_their_modules_without_importing_them():
    script = (
        "import sys\n"
        "from sdckit.measures import RISK_MEASURES, UTILITY_MEASURES\n"
        "print(','.join(RISK_MEASURES.names())); print(','.join(UTILITY_MEASURES.names()))\n"
        "print(RISK_MEASURES.help_of('suda'))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sdckit.risk.', 'sdckit.utility.'))))\n"
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    risk, utility, help_text, imported = output.stdout.splitlines()
    # the order the command line lists them in
    assert risk == "combined,reidentification,suda,loglinear,linkage,interval,attribute-disclosure"
    assert utility == "numeric,variables,tables,propensity,classifier"
    assert help_text == measure_spec("suda").help
    declaring = {entry.module for entry in [*RISK_MEASURES.entries(), *UTILITY_MEASURES.entries()]}
    assert not declaring & set(eval(imported)), imported


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_defaults_are_valid_and_each_field_refuses_bad_values(spec):
    assert_fields_refuse_bad_values(spec, valid(spec))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_command_takes_exactly_its_own_and_the_shared_options(spec):
    command = typer.main.get_command(app).commands[spec.group].commands[spec.name]
    declared = {o for parameter in command.params for o in parameter.opts if o.startswith("-")}
    shared = {"--config", "-c", "--summary", "--quiet", "-q"}
    shared |= {"--qi", "--sensitive", "--weight"}  # the roles inline (attribute-disclosure's own --sensitive)
    if spec.records is not None:
        shared |= {"--output", "-o"}
    if not spec.compares:
        shared.add("--release")
        shared |= {"--engine", "--scheduler", "--workers", "--chunk-rows"}  # a measure of microdata
    if spec.original:
        shared.add("--original")  # DATA measured as a release of ORIGINAL, by coverage
    aliases = {
        alias
        for field in spec.params.model_fields.values()
        for alias in (field.json_schema_extra or {}).get("aliases", [])
        if isinstance(field.json_schema_extra, dict)
    }
    assert declared == set(measure_options(spec)) | shared | aliases
    arguments = [p.name for p in command.params if not p.opts[0].startswith("-")]
    assert arguments == (["original", "released"] if spec.compares else ["data"])


@pytest.mark.parametrize("group", ["risk", "utility"])
def test_an_option_of_another_measure_is_named_as_such(group, tmp_path):
    registry = RISK_MEASURES if group == "risk" else UTILITY_MEASURES
    specs = list(registry)
    pairs = [
        (spec, option, other)
        for spec in specs
        for other in specs
        if other is not spec
        for option in measure_options(other)
        if option not in measure_options(spec)
    ]
    if not pairs:
        pytest.skip(f"the {group} group has one measure: no foreign option to try")
    spec, option, other = pairs[0]
    files = ["a.csv", "b.csv"] if spec.compares else ["a.csv"]
    result = runner.invoke(app, [group, spec.name, *files, "-c", "c.yaml", option, "1"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert re.search(
        rf"{re.escape(option)} is not an option of {spec.name}; it is an option of .*{other.name}", text
    )


def test_run_measure_checks_what_it_is_given():
    from sdckit.config import parse_config

    table = parse_config({"attributes": {"a": {"role": "quasi-identifier", "public": 0.5}}}).read(
        __import__("polars").DataFrame({"a": ["x", "y", "y"]})
    )
    with pytest.raises(ConfigError, match="takes one table, got 2 tables"):
        run_measure("combined", table, table)
    with pytest.raises(ConfigError, match="unknown risk measure 'combnied'.*did you mean combined"):
        measure_spec("combnied")
    with pytest.raises(ConfigError, match="thresholdx is not a parameter of combined"):
        run_measure("combined", table, params={"thresholdx": 1})
    result = run_measure("combined", table, params={"threshold": 0.5})
    assert result.n_records == 3


def test_a_stacked_synthetic_release_is_compared_on_its_first_implicate():
    import polars as pl

    from sdckit.config import parse_config

    config = parse_config(
        {
            "attributes": {
                "x": {"role": "quasi-identifier", "kind": "numeric"},
                "g": {"role": "quasi-identifier"},
            }
        }
    )
    original = config.read(pl.DataFrame({"x": [1, 2, 3, 4], "g": ["a", "b", "a", "b"]}))
    first = pl.DataFrame({"x": [1, 2, 3, 9], "g": ["a", "b", "a", "a"]})
    second = pl.DataFrame({"x": [4, 3, 2, 1], "g": ["b", "a", "b", "a"]})
    stacked = pl.concat(
        [first.with_columns(implicate=pl.lit(1)), second.with_columns(implicate=pl.lit(2))]
    ).select("implicate", "x", "g")
    release = config.read_release(stacked)
    alone = config.read_release(first)
    params = {"method": "distance"}
    on_stack = run_measure("linkage", original, release, params=params)
    on_first = run_measure("linkage", original, alone, params=params)
    assert on_stack.summary()["distance"] == on_first.summary()["distance"]
    assert on_stack.summary()["distance"]["linked_records"] == 4
