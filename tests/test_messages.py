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


#: Plain ValueError/RuntimeError/AssertionError raises that stay, by (file, function), each with why:
#: none of them can be caused by a parameter, a file or data (those raise SdcError subclasses).
PLAIN_ALLOWED = {
    ("_extras.py", "require"): "a programming error: the callers name the extras and modules literally",
    ("_kernels_counting.py", "extend"): "an invariant of the key extender (sized by its caller)",
    ("attack/base.py", "wilson_rate"): "counts an attack computes itself (successes of its own trials)",
    ("anonymize/_quasi_sensitive_group.py", "inverse_weighted_cost"): "arrays built by the search itself",
    ("anonymize/perturbation.py", "parse_bounds"): "a parser whose callers (the parameters' validator, "
    "dp-noise's run) turn its ValueError into the ConfigError naming bounds",
    ("models/base.py", "__post_init__"): "arrays sdckit's counting builds (frequency.py)",
    ("models/base.py", "segments"): "arrays sdckit's counting builds",
    ("models/base.py", "from_codes"): "codes sdckit's encoding builds",
    ("models/base.py", "from_records"): "class keys sdckit's counting builds",
    ("models/base.py", "subset"): "flags a method builds from the classes",
    ("models/base.py", "of_parts"): "the scale path joins the parts of one model",
    ("models/quasi_sensitive.py", "beliefs"): "groups and priors the method builds",
    ("models/quasi_sensitive.py", "qs_check"): "groups the method builds",
    ("query/dp.py", "gaussian"): "raised and caught in the same function (an uncalibrated-mechanism error)",
    ("query/dp.py", "quantile"): "raised and caught in the same function (an uncalibrated-mechanism error)",
    ("query/dp.py", "aggregate"): "an unreachable branch: the query language admits only known aggregates",
    ("query/language.py", "_raise"): "pydantic's hook: turned into the query's validation error",
    ("query/restriction.py", "_public"): "a safety invariant: the audit never reads confidential columns",
    ("query/restriction.py", "audit_rows"): "a consistency check between two computations of one envelope",
    ("query/server.py", "_no_constant"): "json.loads's hook: the body's parse error answers 400",
    ("query/server.py", "_finite_float"): "json.loads's hook: the body's parse error answers 400",
    ("registry.py", "add"): "a programming error: two modules register one name",
    ("registry.py", "_discover"): "a programming error: two modules register one name",
    ("registry.py", "discover"): "a programming error in a module's registration (names must be literal)",
    ("scale/aggregate.py", "_map_partition"): "an invariant of the partition join",
    ("scale/dataset.py", "with_first_records"): "an invariant of the partition listing",
    ("scale/engine.py", "map_reduce"): "an invariant: a data set always has a partition",
    ("setvalued.py", "__post_init__"): "arrays sdckit's reader builds (from_lists)",
    ("setvalued.py", "without"): "flags a method builds from the stored items",
    ("tabular/_highs.py", "_run"): "the solver failed: not the user's input (internal error, exit 1)",
    ("tabular/argus.py", "write_argus"): "statuses a method builds, one per cell",
    ("tabular/build.py", "add"): "an invariant of the hierarchy walk",
    ("tabular/build.py", "cell_sums"): "record values the caller builds, and two builds of one table",
    ("tabular/cta.py", "_verify"): "a check of the solver's answer (internal error, exit 1)",
    ("tabular/cta.py", "_run_cta"): "a check of the solver's answer",
    ("tabular/model.py", "__post_init__"): "the model's arrays, built by tabular/build.py",
    ("tabular/model.py", "from_array"): "the model's arrays, built by tabular/build.py",
    ("tabular/respondents.py", "with_contributions"): "two builds of one table must agree",
    ("anonymize/recoding.py", "_not_a_truth_value"): "pydantic's hook (suppression_limit's validator): "
    "MethodParams.parse turns its ValueError into the ConfigError naming suppression_limit",
    ("anonymize/recoding.py", "_weights_text"): "pydantic's hook (attribute_weights' validator): "
    "MethodParams.parse turns its ValueError into the ConfigError naming attribute_weights",
    ("tabular/respondents.py", "_coalition_size"): "pydantic's hook (the Coalition type's validator): "
    "MethodParams.parse turns its ValueError into the ConfigError naming coalition",
    ("anonymize/recode.py", "_breaks"): "pydantic's hook (the breaks field's validator): "
    "MethodParams.parse turns its ValueError into the ConfigError naming breaks",
    ("tabular/rounding.py", "_controlled_rounding"): "a check of the solver's answer",
    ("tabular/rounding.py", "_run_round"): "a check of the rounding's answer",
    ("tabular/suppression.py", "_run_suppress"): "a check of the solver's answer",
}

PLAIN = {"ValueError", "RuntimeError", "AssertionError"}
_VALIDATORS = {"field_validator", "model_validator"}


def _plain_raises(trees: dict[Path, ast.Module]) -> list[tuple[str, str, int, str]]:
    """(file, function, line, exception) of every plain raise outside pydantic validators (where
    pydantic needs a ValueError or AssertionError, which MethodParams.parse turns into one
    ConfigError naming the parameter)."""
    found = []

    def visit(node: ast.AST, where: str, function: str, validator: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                decorated = any(_called(d) in _VALIDATORS for d in child.decorator_list)
                visit(child, where, child.name, decorated)
            elif isinstance(child, ast.Raise) and child.exc is not None:
                name = _called(child.exc)
                if name in PLAIN and not validator:
                    found.append((where, function, child.lineno, name))
            else:
                visit(child, where, function, validator)

    for path, tree in trees.items():
        visit(tree, str(path.relative_to(SOURCE)), "<module>", False)
    return found


def test_every_error_a_user_can_cause_is_an_sdc_error(trees):
    found = _plain_raises(trees)
    offending = [
        f"{where}:{line}: {name} in {function}"
        for where, function, line, name in found
        if (where, function) not in PLAIN_ALLOWED
    ]
    assert not offending, (
        "plain raises (raise ConfigError/InputError for what a user can cause, or allow them here with "
        "why):\n" + "\n".join(offending)
    )
    unused = set(PLAIN_ALLOWED) - {(where, function) for where, function, _, _ in found}
    assert not unused, f"allowlist entries that no longer match a raise: {sorted(unused)}"


def test_a_bad_argument_of_a_public_function_is_a_config_error_naming_it():
    from sdckit.hierarchy import Hierarchy

    with pytest.raises(ConfigError, match=r"^lines must give one line per row \(2\), got 1$"):
        Hierarchy.from_rows("age", [["1", "*"], ["2", "*"]], lines=[1])
