"""The registry of methods: discovered from the modules' declarations without importing them, each
module imported when its method is asked for, and each specification owning its capabilities."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest

from sdckit.anonymize import METHODS
from sdckit.errors import ConfigError
from sdckit.registry import Entry, Registry, discover


def _imported_after(code: str) -> list[str]:
    """The ``sdckit.anonymize`` modules imported, in a fresh interpreter, after running ``code``."""
    script = code + "\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith('sdckit.anonymize.')))"
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return eval(output.stdout.strip().splitlines()[-1])  # a list of names printed by repr


def test_listing_the_methods_imports_no_method_module():
    imported = _imported_after(
        "import sdckit.anonymize as a; a.METHODS.names(); a.METHODS.entries(); 'mondrian' in a.METHODS"
    )
    assert imported == ["sdckit.anonymize.base"], imported


def test_the_help_of_sdckit_anonymize_imports_no_method_module():
    code = (
        "import contextlib, io\nfrom sdckit.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['anonymize', '--help'])"
    )
    assert _imported_after(code) == ["sdckit.anonymize.base"]


def test_a_method_is_imported_when_asked_for_and_alone():
    imported = _imported_after("import sdckit.anonymize as a; a.METHODS.get('sample').params")
    assert "sdckit.anonymize.sampling" in imported
    assert "sdckit.anonymize.mondrian" not in imported and "sdckit.anonymize.recoding" not in imported


def test_discovered_entries_are_the_registered_specifications():
    """What discovery reads from the sources is what the modules register when imported."""
    entries = METHODS.entries()
    specs = list(METHODS)
    assert [entry.name for entry in entries] == [spec.name for spec in specs]
    for entry, spec in zip(METHODS.entries(), specs, strict=True):
        assert entry.help == spec.help
        assert entry.module == spec.run.__module__, (entry, spec.run.__module__)


def test_the_command_line_order_is_kept():
    assert METHODS.names()[:5] == [
        "generalize",
        "top-bottom-coding",
        "mondrian",
        "local-suppression",
        "targeted-suppression",
    ]
    assert len(METHODS.names()) == len(set(METHODS.names())) == 28


def test_capabilities_are_owned_by_the_specifications():
    reapplicable = [spec.name for spec in METHODS if spec.transformation is not None]
    assert reapplicable == ["generalize", "top-bottom-coding", "mondrian", "recode"]
    partitioned = [spec.name for spec in METHODS if spec.partitioned is not None]
    assert partitioned == ["generalize", "mondrian", "local-suppression", "targeted-suppression"]
    from sdckit.scale.methods import METHODS as SCALED

    assert list(SCALED) == partitioned
    for spec in METHODS:  # a method that cannot be re-applied says why, or is named by the default
        assert spec.transformation is None or spec.not_reapplicable is None, spec.name


def test_every_method_with_a_required_parameter_has_a_minimal_example():
    for spec in METHODS:
        required = [name for name, field in spec.params.model_fields.items() if field.is_required()]
        example = spec.examples.get("minimal", {})
        assert set(required) <= set(example), (spec.name, required)
        spec.params.parse(dict(example), method=spec.name)


def _package(tmp_path, name: str, files: dict[str, str]) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for file, text in files.items():
        (folder / file).write_text(textwrap.dedent(text))
    return name


def test_discovery_reads_calls_and_decorators_and_skips_private_modules(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    package = _package(
        tmp_path,
        "fake_methods_one",
        {
            "beta.py": """
                @declare(
                    "b-two",
                    object,
                    help="Second (in beta).",
                )
                def run(): ...

                declare("b-one", object, help="First " "joined.")(lambda: None)
            """,
            "alpha.py": 'declare("a", object, help="In alpha.")\n',
            "_helpers.py": 'declare("hidden", object, help="Private.")\n',
        },
    )
    found = discover(package, "declare")
    assert found == [
        Entry("a", f"{package}.alpha", "In alpha."),
        Entry("b-two", f"{package}.beta", "Second (in beta)."),
        Entry("b-one", f"{package}.beta", "First joined."),
    ]
    registry = Registry("thing", package=package, declaration="declare", first=("b-one",))
    assert registry.names() == ["b-one", "a", "b-two"]
    assert registry.help_of("a") == "In alpha."
    assert "unknown thing 'b-tow': choose one of b-one, a, b-two; did you mean b-two?" in (
        registry.unknown_message("b-tow")
    )


def test_a_declaration_whose_name_is_not_a_plain_string_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    package = _package(
        tmp_path, "fake_methods_two", {"gamma.py": 'NAME = "g"\ndeclare(NAME, object, help="x")\n'}
    )
    with pytest.raises(ValueError, match=r"gamma\.py:2: declare's name and help must be plain strings"):
        discover(package, "declare")


def test_a_module_that_does_not_register_what_it_declares_is_named(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    source = 'def declare(*given, **options):\n    pass\n\n\ndeclare("d", object, help="x")\n'
    package = _package(tmp_path, "fake_methods_three", {"delta.py": source})
    registry = Registry("thing", package=package, declaration="declare")
    with pytest.raises(ConfigError, match=f"thing 'd': its module {package}.delta did not register it"):
        registry.get("d")


@dataclass(frozen=True)
class _Spec:
    name: str
    help: str = ""


def test_registering_a_name_twice_is_an_error():
    registry: Registry[_Spec] = Registry("thing")
    registry.add(_Spec("x"))
    with pytest.raises(ValueError, match="thing 'x' is registered twice"):
        registry.add(_Spec("x"))
