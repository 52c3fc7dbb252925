"""Registries: one dict from a name to the specification of a method or measure.

Each method module registers itself (``@register``-style, at import); the command line, recipes,
documentation and the common tests loop over a registry, so a new method is one new file. A name
registered twice is an error (two modules claiming one command), and an unknown name lists the valid
names with the closest match, as pip does for commands.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Generic, Protocol, TypeVar

from sdckit.errors import ConfigError


class _Named(Protocol):
    name: str


Spec = TypeVar("Spec", bound=_Named)


class Registry(Generic[Spec]):
    """Specifications by name, in the order they were registered.

    ``kind`` is what the names are, as messages say it ("anonymization method").
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._specs: dict[str, Spec] = {}

    def add(self, spec: Spec) -> Spec:
        if spec.name in self._specs:
            raise ValueError(f"{self.kind} '{spec.name}' is registered twice")
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str) -> Spec:
        """The specification called ``name``; a ``ConfigError`` naming the valid names otherwise."""
        try:
            return self._specs[name]
        except (KeyError, TypeError):
            raise ConfigError(self.unknown_message(name)) from None

    def unknown_message(self, name: object) -> str:
        close = difflib.get_close_matches(str(name), list(self._specs), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        return f"unknown {self.kind} {name!r}: choose one of {', '.join(self._specs)}{hint}"

    def names(self) -> list[str]:
        return list(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Iterator[Spec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)
