"""The shape the command line keeps: thin modules, one per command group, no long command function."""

from __future__ import annotations

import ast
from pathlib import Path

import sdckit.cli

CLI = Path(sdckit.cli.__file__).parent
#: "about 60 lines": a command's options are declared one per line in its signature, so the longest
#: (experiment slicing: 15 options, a docstring and ~35 lines of body) is allowed a little more.
LONGEST = 70


def test_no_function_in_the_cli_is_long():
    long = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > LONGEST:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    assert not long, long


def test_one_module_per_command_group():
    from sdckit.cli._root import app

    groups = {group.name for group in app.registered_groups}
    commands = {command.name for command in app.registered_commands}
    assert groups == {"risk", "utility", "anonymize", "experiment", "table", "keys", "ledger"}
    assert commands == {"check", "protect", "apply", "evaluate", "serve", "query", "ui"}
    modules = {path.stem for path in CLI.glob("*.py")}
    assert {
        "risk",
        "utility",
        "anonymize",
        "experiment",
        "check",
        "protect",
        "table",
        "serve",
        "query",
    } <= modules


def test_a_mistyped_command_is_suggested_once(capsys):
    from sdckit.cli._root import run

    assert run(["anonymize", "mondrain", "data.csv"]) == 2
    assert capsys.readouterr().err.count("Did you mean 'mondrian'?") == 1
