"""The YAML text of an exported document, written directly: the bytes PyYAML's pure-Python
emitter writes for it (:mod:`apimctl.export.dump` defines that output), some twenty times faster.

Called by :func:`apimctl.export.dump.export_file`. An export's documents are plain data
(mappings with string keys, lists, strings, numbers, booleans, ``null``), so the layout is
fixed: block mappings, block sequences indented under their key, short lists and mappings of
scalars in flow style (the rule of ``dump``'s representers). Strings that read as themselves
are written here; any other scalar is rendered by PyYAML once, in the same context (block,
flow, key), and the text reused. Whatever could come out differently is handed back to PyYAML
itself: a top-level object holding a line longer than the width (PyYAML would fold it), a
scalar written over several lines other than a ``|`` block, or a type the representers do not
know is written by PyYAML alone (``{key: [object]}``, its first line dropped: the items of a
block sequence do not depend on each other); a container that occurs twice (PyYAML writes an
anchor) or a ``|+`` block (it may end the stream with ``...``) sends the whole document.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.resolver import Resolver

WIDTH = 100  # PyYAML's best_width for export (``width=100``)
FLOW_LIMIT = 60  # a list or mapping of scalars goes in flow style when its JSON is this short

Dump = Callable[[Any], str]

# Text that PyYAML writes plain in every context (no indicator, no leading or trailing space,
# printable characters only) and that no implicit resolver reads as anything but a string
# unless it starts with one of ``_RESOLVED_FIRST``.
_SAFE = "A-Za-z0-9_./@$+=()\\-\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010fffe"
_PLAIN = re.compile(f"[A-Za-z_/$\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010fffe]"
                    f"(?:[{_SAFE} ]*[{_SAFE}])?")
_RESOLVED_FIRST = frozenset(k for k in Resolver.yaml_implicit_resolvers if k)
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()


class _Unsupported(Exception):
    """This writer cannot place the value exactly as PyYAML would; PyYAML writes its object."""


class _WholeDocument(Exception):
    """PyYAML must write the whole document (an anchor, or a ``...`` at its end)."""


@dataclass(frozen=True)
class _Literal:
    """A ``|`` block: its header (``|-``, ``|2``, ...) and lines relative to its indentation."""

    header: str
    lines: tuple[str, ...]


def document(doc: dict[str, Any], pure: Dump) -> str:
    """The YAML text ``pure(doc)`` returns, for a mapping of top-level keys to lists."""
    try:
        return _Writer(pure).document(doc)
    except _WholeDocument:
        return pure(doc)


class _Writer:
    """Writes one document line by line; remembers every container to notice one written twice."""

    def __init__(self, pure: Dump) -> None:
        self.pure = pure
        self.lines: list[str] = []
        self.seen: set[int] = set()
        self.order: list[int] = []  # ``seen`` in the order met, to forget an object given up
        self.keys: dict[str, str] = {}

    def document(self, doc: dict[str, Any]) -> str:
        if type(doc) is not dict or not doc:
            raise _WholeDocument
        try:
            if _flow_mapping(doc):
                raise _WholeDocument
            self.enter(doc)
            for key, value in doc.items():
                head = self.key(key)
                if type(value) is list and value and not _flow_list(value):
                    self.enter(value)
                    self.line(head)
                    for item in value:
                        self.top_item(key, item)
                else:
                    self.value(value, head, "")
        except _Unsupported:
            raise _WholeDocument from None
        self.lines.append("")  # the last line's break
        return "\n".join(self.lines)

    def top_item(self, key: str, item: Any) -> None:
        """One object of a top-level list: written here, else by PyYAML."""
        lines, marked = len(self.lines), len(self.order)
        try:
            self.value(item, "  -", "  ")
        except _Unsupported:
            del self.lines[lines:]
            self.seen.difference_update(self.order[marked:])
            del self.order[marked:]
            self.lines.append(self.pure_item(key, item))

    def pure_item(self, key: str, item: Any) -> str:
        for container in _containers(item):
            self.enter(container)
        head = self.key(key) + "\n"
        text = self.pure({key: [item]})
        if not text.startswith(head + "  - ") or text.endswith("\n...\n"):
            raise _WholeDocument
        return text[len(head):-1]

    def enter(self, container: Any) -> None:
        ident = id(container)
        if ident in self.seen:
            raise _WholeDocument
        self.seen.add(ident)
        self.order.append(ident)

    def key(self, key: Any) -> str:
        """``key:`` (the same few field names again and again: remembered)."""
        head = self.keys.get(key) if type(key) is str else None
        if head is None:
            if type(key) is not str:
                raise _Unsupported
            head = self.keys[key] = _scalar(key, "key", self.pure) + ":"
        return head

    def line(self, text: str) -> None:
        if len(text) > WIDTH:
            raise _Unsupported
        self.lines.append(text)

    # --- block layout: ``head`` is the text before the value on its line (``key:`` or ``-``)

    def value(self, value: Any, head: str, pad: str) -> None:
        kind = type(value)
        if kind is dict:
            self.mapping(value, head, pad)
        elif kind is list:
            self.sequence(value, head, pad)
        else:
            text = _block_scalar(value, self.pure)
            if isinstance(text, str):
                self.line(f"{head} {text}")
            else:
                self.literal(text, head, pad)

    def literal(self, block: _Literal, head: str, pad: str) -> None:
        self.line(f"{head} {block.header}")
        inner = pad + "  "
        self.lines.extend(inner + text if text else "" for text in block.lines)

    def mapping(self, data: dict[str, Any], head: str, pad: str) -> None:
        self.enter(data)
        if not data or _flow_mapping(data):
            self.line(f"{head} {self.flow_mapping(data)}")
            return
        inner = pad + "  "
        if head.endswith("-"):
            first = head + " "  # ``- key: value``
        else:
            self.line(head)
            first = inner
        for key, value in data.items():
            self.value(value, first + self.key(key), inner)
            first = inner

    def sequence(self, data: list[Any], head: str, pad: str) -> None:
        self.enter(data)
        if not data or _flow_list(data):
            self.line(f"{head} [{', '.join(_scalar(v, 'flow', self.pure) for v in data)}]")
            return
        inner = pad + "  "
        if head.endswith("-"):
            first = head + " -"  # ``- - item``
        else:
            self.line(head)
            first = inner + "-"
        for item in data:
            self.value(item, first, inner)
            first = inner + "-"

    def flow_mapping(self, data: dict[str, Any]) -> str:
        pairs = []
        for key, value in data.items():
            if type(key) is not str:
                raise _Unsupported
            pairs.append(f"{_scalar(key, 'flow key', self.pure)}: {_scalar(value, 'flow', self.pure)}")
        return "{" + ", ".join(pairs) + "}"


def _containers(value: Any) -> Iterator[Any]:
    """Every list and mapping in ``value`` (itself included), as PyYAML's representer meets them."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.values())
            stack.extend(node.keys())
        elif isinstance(node, list):
            yield node
            stack.extend(node)


# --- flow style: the rule of ``dump``'s representers, from the JSON length ------------------


def _flow_list(data: list[Any]) -> bool:
    total = 2 * len(data)  # brackets and ", " between items
    for item in data:
        size = _json_size(item)
        if size < 0:
            return False
        total += size
    return total <= FLOW_LIMIT


def _flow_mapping(data: dict[str, Any]) -> bool:
    if len(data) > 3:
        return False
    total = 2 * len(data)  # braces and ", " between pairs
    for key, value in data.items():
        size = _json_size(value)
        if size < 0 or type(key) is not str:
            return False
        total += (len(json.dumps(key)) if "\n" in key else _json_size(key)) + 2 + size  # '"key": value'
    return total <= FLOW_LIMIT


def _json_size(value: Any) -> int:
    """The length of ``json.dumps(value)`` for a scalar the representers allow in flow style;
    -1 for any other value (a string holding a line break, ``null``, a collection)."""
    kind = type(value)
    if kind is str:
        if "\n" in value:
            return -1
        if value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
            return len(value) + 2
        return len(json.dumps(value))
    if kind is bool:
        return 4 if value else 5
    if kind is int:
        return len(int.__repr__(value))
    if kind is float:
        return len(json.dumps(value))
    if isinstance(value, bool | int | float | str):
        raise _Unsupported  # a subclass: the representers see it differently
    return -1


# --- scalars ---------------------------------------------------------------------------------


def _scalar(value: Any, context: str, pure: Dump) -> str:
    """``value`` as PyYAML writes it on one line in ``context`` (``key``, ``flow``, ``flow key``)."""
    kind = type(value)
    if kind is str:
        plain = _PLAIN_TEXT.get(value)
        if plain is None:
            plain = _is_plain(value)
            if len(_PLAIN_TEXT) < _PLAIN_TEXT_MAX:
                _PLAIN_TEXT[value] = plain
        if plain:
            return str(value)
    elif kind is bool:
        return "true" if value else "false"
    elif kind is int:
        return int.__repr__(value)
    elif value is None:
        return "null"
    elif kind is not float:
        raise _Unsupported
    rendered = _rendered(context, value, pure)
    if not isinstance(rendered, str):
        raise _Unsupported
    return rendered


def _block_scalar(value: Any, pure: Dump) -> str | _Literal:
    """``value`` as a block mapping value or sequence item: one line, or a ``|`` block."""
    if type(value) is str and "\n" in value:
        rendered = _rendered("block", value, pure)
        if rendered is None:
            raise _Unsupported
        return rendered
    return _scalar(value, "block", pure)


_PLAIN_TEXT: dict[str, bool] = {}  # text -> written as itself (values repeat: hosts, methods)
_PLAIN_TEXT_MAX = 100_000


def _is_plain(text: str) -> bool:
    return _PLAIN.fullmatch(text) is not None and (text[0] not in _RESOLVED_FIRST or _reads_as_string(text))


@functools.lru_cache(maxsize=4096)
def _reads_as_string(text: str) -> bool:
    resolved: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return resolved == _STR_TAG


# What PyYAML writes around a value in each context, and where the value sits in it.
_TEMPLATES: dict[str, Callable[[Any], tuple[Any, str, str]]] = {
    "block": lambda v: ({"a": [0], "k": v}, "a: [0]\nk: ", "\n"),
    "key": lambda v: ({v: [0]}, "", ": [0]\n"),
    "flow": lambda v: ({"k": [v]}, "k: [", "]\n"),
    "flow key": lambda v: ({"k": {v: 0}}, "k: {", ": 0}\n"),
}


def _rendered(context: str, value: str | float, pure: Dump) -> str | _Literal | None:
    """PyYAML's text for ``value`` in ``context`` (``None``: not on one line, nor a ``|`` block).
    Cached by value (a float by its ``repr``, since ``0.0 == -0.0``)."""
    key = repr(value) if type(value) is float else value
    return _rendered_cached(context, type(value) is float, key, value, pure)


@functools.lru_cache(maxsize=65536)
def _rendered_cached(context: str, is_float: bool, key: str, value: Any, pure: Dump) -> str | _Literal | None:
    doc, before, after = _TEMPLATES[context](value)
    text = pure(doc)
    if not text.startswith(before) or not text.endswith(after):
        return None
    inner = text[len(before):len(text) - len(after)]
    if "\n" not in inner:
        return inner
    if context != "block" or not inner.startswith("|"):
        return None
    header, _, body = (inner + after).partition("\n")
    if "+" in header:
        raise _WholeDocument
    lines = body.split("\n")[:-1]
    if any(line and not line.startswith("  ") for line in lines):
        return None
    return _Literal(header, tuple(line[2:] for line in lines))
