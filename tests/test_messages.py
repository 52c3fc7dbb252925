"""The library's error messages, read from the source with ``ast``: they name parameters, not
command-line options (``spell`` writes the option while the command line runs), and every error a
user can cause is an :class:`~sdckit.errors.SdcError`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sdckit.errors import ConfigError
from sdckit.params import option_name, options_spelled, spell

SOURCE = Path(__file__).resolve().parents[1] / "src" / "sdckit"

#: Library messages that may hold ``--flag``, each with why: (file under src/sdckit, text in it, reason).
FLAG_ALLOWED = [
    (
        "query/ledger.py",
        "'sdckit serve --init'",
        "tells the data steward which sdckit command creates a ledger: a command line, not a parameter",
    ),
    (
        "query/service.py",
        "sdckit keys add --dataset",
        "tells an analyst (over HTTP) which command the data steward runs to widen a key's scope",
    ),
    (
        "query/service.py",
        "'sdckit serve --init'",
        "tells the data steward which sdckit command registers a new data source in the ledger",
    ),
]


def _library_files() -> list[Path]:
    return sorted(path for path in SOURCE.rglob("*.py") if path.relative_to(SOURCE).parts[0] != "cli")


def _called(node: ast.expr) -> str | None:
    """The name of what ``raise X(...)`` or ``raise X`` raises."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _sdc_error_names(trees: dict[Path, ast.Module]) -> set[str]:
    """SdcError and every class of src/sdckit derived from it, through any number of steps."""
    bases: dict[str, set[str]] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(
                    name for base in node.bases if (name := _called(base)) is not None
                )
    names = {"SdcError"}
    while True:
        grown = names | {name for name, parents in bases.items() if parents & names}
        if grown == names:
            return names
        names = grown


def _texts(node: ast.AST) -> list[str]:
    """The string literals of an expression, but not the arguments of ``spell(...)`` (which declare
    the option the command line writes)."""
    if isinstance(node, ast.Call) and _called(node) == "spell":
        return []
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    return [text for child in ast.iter_child_nodes(node) for text in _texts(child)]


@pytest.fixture(scope="module")
def trees() -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in _library_files()}


def _raises(trees: dict[Path, ast.Module]) -> list[tuple[Path, ast.Raise, str]]:
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                found.append((path, node, _called(node.exc) or ""))
    return found


def test_library_messages_name_parameters_not_options(trees):
    errors = _sdc_error_names(trees)
    assert {"SdcError", "ConfigError", "InputError", "LedgerError"} <= errors
    flag = re.compile(r"--[A-Za-z]")
    offending = []
    used = set()
    for path, node, name in _raises(trees):
        if name not in errors:
            continue
        where = str(path.relative_to(SOURCE))
        for text in _texts(node.exc):
            if not flag.search(text):
                continue
            allowed = [entry for entry in FLAG_ALLOWED if entry[0] == where and entry[1] in text]
            if allowed:
                used.update((entry[0], entry[1]) for entry in allowed)
            else:
                offending.append(f"{where}:{node.lineno}: {text!r}")
    assert not offending, (
        "library messages naming a --flag (write it with sdckit.params.spell):\n" + "\n".join(offending)
    )
    assert used == {(file, text) for file, text, _ in FLAG_ALLOWED}, "an allowlist entry no longer matches"


def test_spell_names_the_parameter_in_the_library_and_the_option_on_the_command_line():
    assert spell("max_rounds") == "max_rounds"
    assert spell("settings", "--set") == "settings"
    with options_spelled():
        assert spell("max_rounds") == "--max-rounds"
        assert spell("k") == "-k"
        assert spell("settings", "--set") == "--set"
        with options_spelled():
            assert spell("weight") == "--weight"
        assert spell("weight") == "--weight"
    assert spell("max_rounds") == "max_rounds"
    assert option_name("max_rounds") == "--max-rounds"


def test_a_library_message_says_the_parameter_and_the_command_line_its_option():
    from sdckit.evaluate.rumap import ru_score

    with pytest.raises(ConfigError, match="^weight must be between 0 and 1, got 1.5$"):
        ru_score(0.1, 0.2, weight=1.5)
    with options_spelled(), pytest.raises(ConfigError, match="^--weight must be between 0 and 1, got 1.5$"):
        ru_score(0.1, 0.2, weight=1.5)
