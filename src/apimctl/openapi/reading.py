"""Reading the text of an OpenAPI document (or of a file one of its ``$ref`` names) safely,
and parsing it with a position for every node.

Called by :mod:`apimctl.openapi.document` and :mod:`apimctl.openapi.refs`. Only a regular
file is read (a FIFO, a device or a directory is refused without being opened for reading,
so neither blocks nor runs out of memory), or standard input for ``-``; at most
:data:`MAX_DOCUMENT_BYTES` are read. The YAML is read by the manifests' event reader
(:class:`~apimctl.manifests.yaml_events.EventReader`): duplicate keys, alias expansion beyond
its bound (a "billion laughs" document), deep nesting and too many entries are refused, each
at ``file:line:col``; ``${...}`` in a value is kept as written (an OpenAPI document is not a
manifest: nothing is substituted).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from typing import IO, Any

import yaml

from apimctl.errors import ApimctlError, Problem
from apimctl.manifests.documents import MAX_FILE_BYTES, NotUtf8, utf8_text
from apimctl.manifests.model import JsonPath, Position, Problems
from apimctl.manifests.yaml_events import Abort, EventReader

MAX_DOCUMENT_BYTES = MAX_FILE_BYTES
STDIN = "-"
SHOWN = 20  # problems an error message lists

Pointer = tuple[str | int, ...]


class OpenApiError(ApimctlError):
    """An OpenAPI document that cannot be read; ``problems`` are located in the document, and
    the message shows the first :data:`SHOWN` of them. ``lenient_would_help``: every problem
    lies in a part the import does not read."""

    def __init__(self, problems: list[Problem], *, lenient_would_help: bool = False) -> None:
        self.problems = problems
        self.lenient_would_help = lenient_would_help
        lines = [str(p) for p in problems[:SHOWN]]
        if len(problems) > SHOWN:
            lines.append(f"… and {len(problems) - SHOWN} more")
        super().__init__("\n".join(lines))


def read_bytes(file: str, stdin: IO[bytes] | None = None, *, what: str = "the document") -> bytes:
    """The bytes of ``file`` (``-``: standard input), refused unless it is a regular file of
    at most :data:`MAX_DOCUMENT_BYTES` (opened without blocking: a FIFO is refused, not
    waited for). ``what`` names the file in the message."""
    if file == STDIN:
        return _bounded(file, stdin if stdin is not None else sys.stdin.buffer, what)
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _unreadable(file, what, exc.strerror or str(exc)) from None
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _unreadable(file, what, f"not a regular file ({_kind(mode)})")
        return _bounded(file, fh, what)


def _bounded(file: str, stream: IO[bytes], what: str) -> bytes:
    try:
        data = stream.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise _unreadable(file, what, exc.strerror or str(exc)) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _unreadable(file, what, f"larger than the {MAX_DOCUMENT_BYTES // (1024 * 1024)} MB "
                                      "limit for one file")
    return data


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")


def _unreadable(file: str, what: str, reason: str) -> OpenApiError:
    return OpenApiError([Problem(file, 0, 0, "", f"cannot read {what}: {reason}")])


def decode(file: str, data: bytes) -> str:
    """``data`` as UTF-8 text (a byte order mark dropped)."""
    try:
        return utf8_text(data)
    except NotUtf8 as exc:
        raise OpenApiError([Problem(file, exc.line, exc.column, "", "not UTF-8 text: an OpenAPI document "
                                                                    "must be UTF-8 encoded")]) from None


class _DocumentReader(EventReader):
    """The manifests' reader, with strings kept as written (no ``${VAR}`` substitution)."""

    def substituted(self, ev: Any, rel: JsonPath, refs: dict[JsonPath, str]) -> Any:
        return ev.value


def parse(file: str, text: str) -> tuple[Any, dict[Pointer, tuple[int, int]]]:
    """The value of the one YAML (or JSON) document in ``text`` and where each key and list
    item was written; raises :class:`OpenApiError` with every problem the reader found."""
    problems = Problems()
    reader = _DocumentReader(file, text, {}, problems, every_position=True)
    positions: dict[JsonPath, Position] = {}
    value: Any = None
    try:
        reader.next()  # StreamStart
        if not isinstance(reader.loader.peek_event(), yaml.StreamEndEvent):
            start = reader.next()  # DocumentStart
            first = reader.next()
            positions[()] = reader.pos(first.start_mark)
            value = reader.value(first, (), positions, {}, 0)
            reader.next()  # DocumentEnd
            if not isinstance(reader.loader.peek_event(), yaml.StreamEndEvent):
                problems.error(reader.pos(start.start_mark), "",
                               "more than one YAML document: an OpenAPI document is one")
    except Abort:
        pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Position(file, mark.line + 1, mark.column + 1) if mark is not None else Position(file, 0, 0)
        problems.error(where, "", f"not YAML or JSON: {getattr(exc, 'problem', None) or exc}")
    finally:
        reader.dispose()
    if problems.errors:
        raise OpenApiError([p for p in problems.sorted() if p.severity == "error"])
    return _json_value(file, value), {k: (p.line, p.col) for k, p in positions.items()}


def _json_value(file: str, value: Any) -> Any:
    """``value`` as JSON has it (the validator's view); refused when YAML wrote a value JSON
    has no word for (binary, a date object)."""
    if _is_json(value):
        return value
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise OpenApiError([Problem(file, 1, 1, "", f"not an OpenAPI document: {exc}")]) from None


def _is_json(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not (item is None or isinstance(item, str | int | float | bool)):
            return False
    return True
