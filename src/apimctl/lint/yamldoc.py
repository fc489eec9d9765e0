"""Ruleset files read as YAML with a position for every key and value.

:mod:`apimctl.lint.ruleset` calls :func:`read_yaml`, so that a problem in a ruleset (an
unknown function, an invalid JSONPath, a bad option) is reported at ``file:line:col``.
Rulesets are small, so PyYAML's composer builds the node tree and this module turns it into
plain values; aliases are followed with a bound on the nodes built, duplicate keys and deep
nesting are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from apimctl.manifests.model import JsonPath, Position, format_path

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAX_NODES = 200_000
_MAX_DEPTH = 64


class YamlError(Exception):
    """The text is not usable YAML; ``position`` says where."""

    def __init__(self, position: Position, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


@dataclass
class YamlDoc:
    """A YAML document: the value, where each key was written, and where each value starts.

    ``styles`` holds the scalar style of each string value (``'"'``, ``"'"``, ``None`` for
    plain, ``|``/``>`` for blocks), so a column inside a string can be located.
    """

    file: str
    value: Any
    keys: dict[JsonPath, Position] = field(default_factory=dict)
    values: dict[JsonPath, Position] = field(default_factory=dict)
    styles: dict[JsonPath, str | None] = field(default_factory=dict)

    def where(self, path: JsonPath) -> Position:
        """Where ``path`` was written (its key, or its value), or its nearest ancestor."""
        key = tuple(path)
        while key:
            pos = self.keys.get(key) or self.values.get(key)
            if pos is not None:
                return pos
            key = key[:-1]
        return self.values.get((), Position(self.file, 1, 1))

    def at(self, path: JsonPath) -> Position:
        """Where the value at ``path`` starts (for a problem with the value, not the key)."""
        return self.values.get(tuple(path)) or self.where(path)

    def inside(self, path: JsonPath, index: int) -> Position:
        """The position of character ``index`` of the one-line string value at ``path``."""
        start = self.values.get(tuple(path))
        if start is None:
            return self.where(path)
        style = self.styles.get(tuple(path))
        if style in ("|", ">"):
            return start
        return Position(start.file, start.line, start.col + index + (1 if style in ('"', "'") else 0))


def read_yaml(file: str, text: str) -> YamlDoc:
    """Parse ``text`` (one YAML document) into a :class:`YamlDoc`; raises :class:`YamlError`."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = Position(file, mark.line + 1, mark.column + 1) if mark else Position(file, 0, 0)
        raise YamlError(where, f"invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise YamlError(Position(file, 0, 0), f"invalid YAML: {exc}") from None
    doc = YamlDoc(file, None)
    if node is not None:
        doc.value = _Builder(doc).build(node, (), 0)
    return doc


class _Builder:
    def __init__(self, doc: YamlDoc) -> None:
        self.doc = doc
        self.nodes = 0
        self.constructor = yaml.SafeLoader("")

    def position(self, node: yaml.Node) -> Position:
        return Position(self.doc.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def build(self, node: yaml.Node, path: JsonPath, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > _MAX_NODES or depth > _MAX_DEPTH:
            raise YamlError(self.position(node), "the ruleset is too large or nested too deeply")
        self.doc.values[path] = self.position(node)
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        return self.scalar(node, path)

    def mapping(self, node: yaml.MappingNode, path: JsonPath, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlError(self.position(key_node), f"{format_path(path) or 'the document'}: keys must be strings")
            key = str(key_node.value)
            if key in out:
                first = self.doc.keys[(*path, key)]
                raise YamlError(self.position(key_node), f"duplicate key {key!r} (first at {first})")
            self.doc.keys[(*path, key)] = self.position(key_node)
            out[key] = self.build(value_node, (*path, key), depth + 1)
        return out

    def scalar(self, node: yaml.Node, path: JsonPath) -> Any:
        if node.tag == "tag:yaml.org,2002:str" and isinstance(node, yaml.ScalarNode):
            self.doc.styles[path] = node.style
            return str(node.value)
        if node.tag == "tag:yaml.org,2002:timestamp":  # keep datetimes as written
            return str(node.value)
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise YamlError(self.position(node), f"invalid YAML value: {exc}") from None
