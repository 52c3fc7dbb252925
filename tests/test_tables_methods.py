"""What the registry of table methods promises for every method: its parameters validated up front
(each field refuses the values its type and bounds forbid, naming the option), a command with exactly
its own and the shared options, a run with its defaults that gives a TableResult whose long form
has one row per cell, and the figures of a summary that JSON can write."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
import typer.main

from param_values import assert_fields_refuse_bad_values
from sdckit.cli import app
from sdckit.cli.table import SHARED
from sdckit.table import Schema, Table
from sdckit.tabular.base import TABLE_METHODS, TableResult, run_table_method
from sdckit.tabular.build import TableSpec
from sdckit.tabular.problem import make_problem
from sdckit.tabular.rules import Rule

SPECS = list(TABLE_METHODS)
IDS = [spec.name for spec in SPECS]


def test_the_registry_discovers_the_method_modules_without_importing_them():
    """A table method is one file: the registry finds it by its declaration, imports it when asked."""
    script = (
        "import sys\n"
        "from sdckit.tabular.base import TABLE_METHODS\n"
        "print(','.join(TABLE_METHODS.names())); print(TABLE_METHODS.help_of('suppress'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('sdckit.tabular.')))\n"
    )
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    names, help_text, imported = output.stdout.splitlines()
    assert names == "audit,cell-key,cta,round,suppress"
    assert help_text == TABLE_METHODS.get("suppress").help
    declaring = {entry.module for entry in TABLE_METHODS.entries()}
    assert not declaring & set(eval(imported)), imported
    for entry, spec in zip(TABLE_METHODS.entries(), SPECS, strict=True):
        assert (entry.name, entry.help, entry.module) == (spec.name, spec.help, spec.run.__module__)


def valid(spec) -> dict:
    return {"pattern": "pattern.csv"} if spec.name == "audit" else {}


def test_the_methods_of_the_issue_are_registered():
    assert {"suppress", "audit", "round", "cta", "cell-key"} <= set(IDS)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_defaults_are_valid_and_each_field_refuses_bad_values(spec):
    assert_fields_refuse_bad_values(spec, valid(spec))


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_the_command_takes_exactly_its_own_and_the_shared_options(spec):
    command = typer.main.get_command(app).commands["table"].commands[spec.name]
    declared = {parameter.name for parameter in command.params if parameter.name not in ("help", "data")}
    assert declared == set(SHARED) | set(spec.params.model_fields)


def problem(seed: int = 3):
    rng = np.random.default_rng(seed)
    n = 300
    frame = pl.DataFrame(
        {
            "a": rng.choice(["x", "y", "z"], n, p=[0.6, 0.35, 0.05]),
            "b": rng.choice(["u", "v", "w", "t"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "value": np.round(rng.lognormal(3, 1.3, n), 1),
        }
    )
    source = Table(data=frame, schema=Schema.infer(frame))
    rules = [Rule.parse("p=15"), Rule.parse("freq=3")]
    return make_problem(source, TableSpec.of("a", "b", value="value"), rules)


@pytest.mark.parametrize(
    "spec", [s for s in SPECS if s.name != "audit"], ids=[i for i in IDS if i != "audit"]
)
def test_every_method_runs_with_its_defaults(spec):
    built = problem()
    assert built.protection.primary.any()
    result = run_table_method(spec, built, {})
    assert isinstance(result, TableResult)
    assert result.method == spec.name
    frame = result.frame()
    assert frame.height == built.table.n_cells
    assert set(frame.get_column("status").unique()) <= {"published", "primary", "secondary"}
    figures = spec.summary(result)
    json.dumps(figures)
    assert spec.violation(result, figures) is None
    for line in spec.report(figures):
        assert isinstance(line, str)
    released = result.released
    if spec.audits:
        assert result.audit is not None and result.audit.passed
        assert np.isnan(released[built.protection.primary]).all()
    else:
        assert not np.isnan(released).any()
