"""The values of YAML events, read without the event reader's state.

The pieces of :class:`apimctl.manifests.yaml_events.EventReader` that work on one event or one
value: the tags and event types it compares with, the common scalars read at once
(:func:`quick`: strings, plain integers and booleans; short texts shared), the implicit tag of
a plain scalar (:func:`resolve`), the value of any other (:func:`build`), anchors replayed at an alias (:class:`Anchor`,
:func:`replay`), YAML merge keys (:func:`merge`) and the position of a character inside a
scalar (:func:`offset_position`).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from sys import intern
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from apimctl.manifests.model import JsonPath, Position

TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL = TAG + "str", TAG + "int", TAG + "float", TAG + "bool", TAG + "null"
TIMESTAMP, SEQ, MAP = TAG + "timestamp", TAG + "seq", TAG + "map"
SCALAR, ALIAS = yaml.ScalarEvent, yaml.AliasEvent
SEQ_START, SEQ_END = yaml.SequenceStartEvent, yaml.SequenceEndEvent
MAP_START, MAP_END = yaml.MappingStartEvent, yaml.MappingEndEvent
CONSTRUCTOR = SafeConstructor()
RESOLVER = Resolver()
CONSTRUCT = {
    INT: CONSTRUCTOR.construct_yaml_int,
    FLOAT: CONSTRUCTOR.construct_yaml_float,
    BOOL: CONSTRUCTOR.construct_yaml_bool,
}
BOOLS: dict[str, bool] = CONSTRUCTOR.bool_values
# first characters of the plain scalars an implicit resolver may read as something else than
# a string (numbers, booleans, null, timestamps, ``<<``, ``=``): any other plain text is a string
RESOLVED_FIRST = frozenset(k for k in RESOLVER.yaml_implicit_resolvers if k)
SLOW = object()


@dataclass
class Anchor:
    """An anchored node: its value, the positions and references inside it, its node count
    (what an alias of it adds to the expansion budget)."""

    value: Any
    positions: dict[JsonPath, Position]
    refs: dict[JsonPath, str]
    nodes: int


def replay(anchor: Anchor, rel: JsonPath, positions: MutableMapping[JsonPath, Position],
           refs: dict[JsonPath, str]) -> None:
    """The positions and references of an anchored node, again at ``rel`` (an alias of it)."""
    for sub, where in anchor.positions.items():
        if sub:
            positions[rel + sub] = where
    for sub, raw in anchor.refs.items():
        refs[rel + sub] = raw


def merge(out: dict[str, Any], merged: Any, sub_pos: dict[JsonPath, Position],
          sub_refs: dict[JsonPath, str], rel: JsonPath, positions: MutableMapping[JsonPath, Position],
          refs: dict[JsonPath, str]) -> bool:
    """YAML merge keys (``<<: *defaults``): keys written in the mapping win. ``False`` (nothing
    merged) when ``merged`` is not a mapping or a list of mappings."""
    sources = [(merged, ())] if isinstance(merged, dict) else \
        [(m, (i,)) for i, m in enumerate(merged)] if isinstance(merged, list) else []
    if not sources or not all(isinstance(m, dict) for m, _ in sources):
        return False
    for source, base in sources:
        for key, val in source.items():
            if key in out:
                continue
            out[key] = val
            for sub, p in sub_pos.items():
                if sub[:len(base) + 1] == (*base, key):
                    positions[(*rel, *sub[len(base):])] = p
            for sub, raw in sub_refs.items():
                if sub[:len(base) + 1] == (*base, key):
                    refs[(*rel, *sub[len(base):])] = raw
    return True


def build(tag: str, text: str) -> tuple[Any, str | None]:
    """The value of a scalar of ``tag`` (timestamps kept as text), with the problem when it
    cannot be built (the value is then its text)."""
    if tag == NULL:
        return None, None
    if tag == TIMESTAMP:
        return text, None
    make = CONSTRUCT.get(tag)
    if make is None:
        return text, f"unsupported YAML tag {tag.replace(TAG, '!!')}"
    try:
        return make(yaml.ScalarNode(tag, text)), None
    except (ValueError, ConstructorError):
        return text, f"'{text}' is not a valid {tag.replace(TAG, '')}"


def offset_position(start: Position, ev: Any, offset: int) -> Position:
    """Where the character ``offset`` of a scalar event's value is, the event starting at
    ``start`` (its start, when the value spans lines or has escapes before it)."""
    if ev.start_mark.line != ev.end_mark.line:
        return start
    if not ev.style:
        return Position(start.file, start.line, start.col + offset)
    if (ev.style == "'" and "'" not in ev.value[:offset]) or (ev.style == '"' and "\\" not in ev.value[:offset]):
        return Position(start.file, start.line, start.col + 1 + offset)
    return start


def quick(ev: Any) -> Any:
    """The value of a scalar event (not anchored) that needs no path: a string without ``$``,
    a plain decimal integer or boolean; ``SLOW`` for any other (tags, ``${VAR}``, floats,
    null, timestamps, problems), which :meth:`apimctl.manifests.yaml_events.EventReader.scalar` builds."""
    text = ev.value
    if ev.tag is not None or "$" in text:
        return SLOW
    if not ev.implicit[0] or (text and text[0] not in RESOLVED_FIRST):
        return shared(text)  # quoted, or plain text no resolver reads as anything else
    tag = RESOLVED.get(text)
    if tag == STR:
        return shared(text)
    if tag == INT and text.isdigit() and (text[0] != "0" or text == "0"):
        return int(text)
    if tag == BOOL:
        return BOOLS[text.lower()]
    return SLOW


SHARED_UP_TO = 100  # characters: longer texts rarely repeat


def shared(text: str) -> str:
    """One copy of each short text (manifests repeat their values: hosts, methods, ``true``
    spelled as text; a large manifest takes a third less memory)."""
    return intern(text) if len(text) <= SHARED_UP_TO else text


RESOLVED: dict[str, str] = {}


def resolve(value: str) -> str:
    """The implicit tag of a plain scalar (cached: manifests repeat true, false and numbers)."""
    if value and value[0] not in RESOLVED_FIRST:
        return STR
    tag = RESOLVED.get(value)
    if tag is None:
        tag = str(RESOLVER.resolve(yaml.ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]
        if len(RESOLVED) < 10_000:
            RESOLVED[value] = tag
    return tag
