"""Registries: one dict from a name to the specification of a method or measure.

Each method module declares its specification at its end (``register_method("name", Params,
help="...", ...)``); the command line, recipes, documentation and the common tests loop over a
registry, so a new method is one new file. A name registered twice is an error (two modules claiming
one command), and an unknown name lists the valid names with the closest match, as pip does for
commands.

A registry given a package *discovers* its modules (:mod:`pkgutil`) without importing them: it reads
each module's declaration, whose name and help are plain strings, and keeps an :class:`Entry` (name,
module, help) in the specification's place. The module is imported when its specification is asked
for (a run, its parameters object), as pip imports a command's module only to run it; so listing the
names, a mistyped name's message and the command line's help of a group import no method.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import pkgutil
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from sdckit.errors import ConfigError


class _Named(Protocol):
    @property
    def name(self) -> str: ...


Spec = TypeVar("Spec", bound=_Named)


@dataclass(frozen=True)
class Entry:
    """A discovered specification, its module not imported yet: ``help`` is its one-line help."""

    name: str
    module: str
    help: str


class Registry(Generic[Spec]):
    """Specifications by name, in the order they were registered.

    ``kind`` is what the names are, as messages say it ("anonymization method"). With ``package``
    and ``declaration`` (the name of the registering function), the registry discovers the modules of
    ``package`` (those whose names do not start with ``_``) that call ``declaration`` at their top
    level; ``first`` lists names to place first, in that order (the order the command line lists
    them); the others follow in the order of their modules' names and of their declarations.
    """

    def __init__(
        self,
        kind: str,
        *,
        package: str | None = None,
        declaration: str | None = None,
        first: Iterable[str] = (),
    ) -> None:
        self.kind = kind
        self._specs: dict[str, Spec | Entry] = {}
        self._package = package
        self._declaration = declaration
        self._first = tuple(first)
        self._discovered = package is None

    def add(self, spec: Spec) -> Spec:
        """Register ``spec``; it takes the place of its discovered entry (its module is being imported)."""
        self._discover()
        present = self._specs.get(spec.name)
        if present is not None and not isinstance(present, Entry):
            raise ValueError(f"{self.kind} '{spec.name}' is registered twice")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> Spec:
        """The specification called ``name`` (its module imported if needed); a ``ConfigError``
        naming the valid names otherwise."""
        self._discover()
        try:
            found = self._specs[name]
        except (KeyError, TypeError):
            raise ConfigError(self.unknown_message(name)) from None
        return self._load(found) if isinstance(found, Entry) else found

    def help_of(self, name: str) -> str:
        """The one-line help of ``name``, without importing its module."""
        self._discover()
        return self._specs[name].help  # type: ignore[union-attr]

    def entries(self) -> list[Entry]:
        """Name, module and help of every specification, in order, importing no module."""
        self._discover()
        return [
            spec if isinstance(spec, Entry) else Entry(spec.name, _module_of(spec), spec.help)  # type: ignore[attr-defined]
            for spec in self._specs.values()
        ]

    def unknown_message(self, name: object) -> str:
        self._discover()
        close = difflib.get_close_matches(str(name), list(self._specs), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return f"unknown {self.kind} {name!r}: choose one of {', '.join(self._specs)}{hint}"

    def names(self) -> list[str]:
        self._discover()
        return list(self._specs)

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._specs

    def __iter__(self) -> Iterator[Spec]:
        """Every specification, in order; the modules not yet imported are imported."""
        return iter([self.get(name) for name in self.names()])

    def __len__(self) -> int:
        self._discover()
        return len(self._specs)

    def _load(self, entry: Entry) -> Spec:
        importlib.import_module(entry.module)
        found = self._specs.get(entry.name)
        if found is None or isinstance(found, Entry):
            raise ConfigError(
                f"{self.kind} '{entry.name}': its module {entry.module} did not register it when imported"
            )
        return found

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        assert self._package is not None and self._declaration is not None
        found = discover(self._package, self._declaration)
        ranked = sorted(
            found,
            key=lambda entry: (
                self._first.index(entry.name) if entry.name in self._first else len(self._first)
            ),
        )
        registered, self._specs = self._specs, {}
        for entry in ranked:
            if entry.name in self._specs:
                raise ValueError(f"{self.kind} '{entry.name}' is registered twice")
            self._specs[entry.name] = entry
        self._specs.update(registered)  # registered while discovering (a module imported meanwhile)


def discover(package: str, declaration: str) -> list[Entry]:
    """The specifications the modules of ``package`` declare with ``declaration(name, ..., help=...)``
    at their top level (a call or a decorator), read from their sources without importing them; in
    the order of the modules' names, then of the declarations in a module.

    Raises ``ValueError`` naming the file and line of a declaration whose name or help is not a plain
    string (it could not be listed without running the module)."""
    paths = importlib.import_module(package).__path__
    starts = re.compile(rf"^@?{re.escape(declaration)}\(", re.MULTILINE)
    entries = []
    for module in sorted(pkgutil.iter_modules(paths), key=lambda info: info.name):
        if module.name.startswith("_") or module.ispkg:
            continue
        source = Path(module.module_finder.path, f"{module.name}.py")  # type: ignore[union-attr]
        if not source.is_file():
            continue
        text = source.read_text(encoding="utf-8")
        for match in starts.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            call = _declaration_call(text[match.start() :].lstrip("@"), declaration)
            name, help_text = _literal(call, 0, "name"), _literal(call, None, "help")
            if name is None or help_text is None:
                raise ValueError(
                    f"{source}:{line}: {declaration}'s name and help must be plain strings, so that the "
                    "registry lists it without importing the module"
                )
            entries.append(Entry(name, f"{package}.{module.name}", help_text))
    return entries


def _declaration_call(text: str, declaration: str) -> ast.Call | None:
    """The call to ``declaration`` that ``text`` starts with: its lines are added until they parse."""
    lines = text.splitlines()
    for end in range(1, len(lines) + 1):
        try:
            tree = ast.parse("\n".join(lines[:end]), mode="eval")
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == declaration:
                return node
        return None
    return None


def _literal(call: ast.Call | None, position: int | None, keyword: str) -> str | None:
    """The plain string given to ``call`` at ``position`` or as ``keyword``; None otherwise."""
    if call is None:
        return None
    value: ast.expr | None = None
    if position is not None and len(call.args) > position:
        value = call.args[position]
    for item in call.keywords:
        if item.arg == keyword:
            value = item.value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None


def _module_of(spec: object) -> str:
    run = getattr(spec, "run", None)
    return getattr(run, "__module__", None) or ""
