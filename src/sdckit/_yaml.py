"""A YAML composer with bounds, for every YAML file sdckit reads.

PyYAML composes a document into a graph of nodes in which an alias is the very node its anchor
names, so a walk over the graph expands every alias: nine nested aliases of ten items each (the
"billion laughs") make a file of a few hundred bytes expand to a billion nodes. The composer here
counts, while it composes, the nodes of the document *as expanded* (an alias counts the nodes of what
it refers to) and refuses a document above :data:`MAX_NODES`; it refuses nesting deeper than
:data:`MAX_DEPTH` (PyYAML composes recursively, so 5,000 nested brackets would exhaust the
interpreter's stack) and any tag outside YAML's core schema (``!!python/object`` and the like),
naming the file and line. Composition itself is linear in the size of the file.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from sdckit.errors import SdcError

#: Most nodes a document may hold, every alias expanded.
MAX_NODES = 100_000
#: Deepest nesting of lists and mappings.
MAX_DEPTH = 100

_CORE = "tag:yaml.org,2002:"
CORE_TAGS = frozenset(f"{_CORE}{name}" for name in ("str", "int", "float", "bool", "null", "seq", "map"))


def short_tag(tag: str) -> str:
    """A tag as a file writes it: ``!!python/object`` for ``tag:yaml.org,2002:python/object``."""
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader whose composer bounds the expanded size, the depth and the tags of a document.

    Set ``source`` (how messages name the file) and ``error`` (the SdcError subclass raised) on an
    instance before composing.
    """

    source = "<yaml>"
    error: type[SdcError] = SdcError

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._expanded = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def _refuse(self, mark: yaml.Mark | None, message: str) -> None:
        line = f":{mark.line + 1}" if mark is not None else ""
        raise self.error(f"{self.source}{line}: {message}")

    def fetch_flow_collection_start(self, token_class: Any) -> None:
        # Refused as soon as scanned: the scanner keeps a possible key per open bracket and scans
        # them all for every token, so thousands of brackets would take seconds before composing.
        if self.flow_level >= MAX_DEPTH:
            self._refuse(self.get_mark(), self._too_deep)
        super().fetch_flow_collection_start(token_class)

    _too_deep = f"lists and mappings must be nested at most {MAX_DEPTH} deep, got deeper"

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            target = self.anchors.get(event.anchor)
            if target is not None:
                self._count(self._sizes.get(id(target), 1), event.start_mark)
            return super().compose_node(parent, index)
        event = self.peek_event()
        collection = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        if collection:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                self._refuse(event.start_mark, self._too_deep)
        start = self._expanded
        self._count(1, event.start_mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            if collection:
                self._depth -= 1
        if node.tag not in CORE_TAGS:
            self._refuse(
                node.start_mark,
                "a YAML tag must be one of !!str, !!int, !!float, !!bool, !!null, !!seq, !!map, "
                f"got the unsupported tag '{short_tag(node.tag)}'",
            )
        if collection:
            self._sizes[id(node)] = self._expanded - start
        return node

    def _count(self, nodes: int, mark: yaml.Mark) -> None:
        self._expanded += nodes
        if self._expanded > MAX_NODES:
            self._refuse(
                mark,
                f"the document must hold at most {MAX_NODES:,} values with every alias expanded, "
                "got more (aliases nested to expand exponentially?)",
            )


# The YAML 1.2 core schema for plain scalars: only true/false are booleans (yes/no/on/off stay text),
# no timestamps, no merge keys.
BoundedLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    BoundedLoader.add_implicit_resolver(f"{_CORE}{_tag}", re.compile(_pattern), list(_first))


def compose(
    text: str, source: str, error: type[SdcError], loader: type[BoundedLoader] = BoundedLoader
) -> Any:
    """The node graph of a one-document YAML text, within the bounds (see :class:`BoundedLoader`).

    PyYAML's own errors (syntax) are raised as they are; the bounds raise ``error``."""
    instance = loader(text)
    instance.source = source
    instance.error = error
    try:
        return instance.get_single_node()
    finally:
        instance.dispose()
