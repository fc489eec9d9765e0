"""Reading call-test files: YAML, the schema (``schemas/calltests.schema.json``) and the
checks beyond it, every problem with its file, line and column (as ``validate`` reports).

A file is ``*.test.yaml`` (the manifest loader never reads those: put them in a folder of
their own, or name them on the command line); a directory given to ``apimctl test`` is
searched for them, recursively. A file is read as manifests are (the bounded reader of
:mod:`apimctl.manifests.yaml_events`: at most 4 MB, nesting depth, alias expansion and entries
bounded, duplicate keys refused), without ``${VAR}`` substitution; date-times stay strings
(YAML would make them dates). Numbers the virtual clock cannot take (``after: .inf``) and
patterns that are not regular expressions are refused with their place.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jsonpath_rfc9535
import jsonschema
import yaml

from apimctl.calltests import patterns
from apimctl.calltests.timing import EARLIEST, LATEST, iso, parse_instant
from apimctl.errors import Problem
from apimctl.manifests.documents import CALL_TEST_SUFFIXES
from apimctl.manifests.model import JsonPath, Position, Problems, format_path
from apimctl.manifests.yaml_events import Abort, EventReader

SUFFIXES = CALL_TEST_SUFFIXES
MAX_BYTES = 4 * 1024 * 1024  # a test file of thousands of calls is well below


def schema_text() -> str:
    return resources.files("apimctl").joinpath("schemas/calltests.schema.json").read_text("utf-8")


_VALIDATOR: list[jsonschema.protocols.Validator] = []


def _validator() -> jsonschema.protocols.Validator:
    if not _VALIDATOR:
        _VALIDATOR.append(jsonschema.Draft202012Validator(json.loads(schema_text())))
    return _VALIDATOR[0]


class _Loader(yaml.SafeLoader):
    """Safe YAML without the timestamp type: ``at: 2030-01-07T09:00:00Z`` stays a string."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class TestFile:
    path: str
    doc: dict[str, Any]
    node: yaml.Node

    def position(self, *path: str | int) -> Position:
        """Where the value at ``path`` was written (its nearest written ancestor)."""
        node = self.node
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return Position(self.path, node.start_mark.line + 1, node.start_mark.column + 1)


def _child(node: yaml.Node, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode) and isinstance(part, str):
        return next((value for key, value in node.value if key.value == part), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]  # type: ignore[no-any-return]
    return None


@dataclass
class Loaded:
    files: list[TestFile] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def discover(paths: Sequence[str], problems: Problems) -> list[str]:
    """The test files named, and the ``*.test.yaml`` files under the directories named."""
    found: list[str] = []
    for arg in paths:
        if os.path.isdir(arg):
            inside = sorted(os.path.join(root, name) for root, _, names in os.walk(arg)
                            for name in names if name.endswith(SUFFIXES))
            if not inside:
                problems.error(Position(arg, 0, 0), "", "no *.test.yaml files under this directory")
            found += inside
        elif os.path.isfile(arg):
            found.append(arg)
        else:
            problems.error(Position(arg, 0, 0), "", "no such file or directory")
    return list(dict.fromkeys(os.path.normpath(p) for p in found))


def load(paths: Sequence[str]) -> Loaded:
    """Every test file under ``paths``, checked; the problems of all of them."""
    problems = Problems()
    out = Loaded()
    for path in discover(paths, problems):
        test_file = _read(path, problems)
        if test_file is not None and _check(test_file, problems):
            out.files.append(test_file)
    out.problems = problems.sorted()
    return out


def _read(path: str, problems: Problems) -> TestFile | None:
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            problems.error(Position(path, 0, 0), "", f"file is {size / (1024 * 1024):.1f} MB, larger than the "
                           f"{MAX_BYTES // (1024 * 1024)} MB limit for one test file; split it")
            return None
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        problems.error(Position(path, 0, 0), "", f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return None
    before = len(problems.items)
    doc = _values(path, text, problems)
    if len(problems.items) > before:
        return None
    if not isinstance(doc, dict):
        problems.error(Position(path, 1, 1), "", "a test file is a mapping with a 'calls' list")
        return None
    # the positions, from the nodes of a document known to be bounded (depth, aliases, size)
    node = yaml.compose(text, Loader=_Loader)
    assert node is not None  # the document is a mapping
    return TestFile(path, doc, node)


class _Reader(EventReader):
    """The manifests' bounded YAML reader (nesting depth, alias expansion, entries, duplicate
    keys, timestamps kept as text), on one document of any shape; strings are taken as
    written (a test file reads no environment variables)."""

    def substituted(self, ev: Any, rel: JsonPath, refs: dict[JsonPath, str]) -> Any:
        return ev.value

    def single(self) -> Any:
        """The value of the stream's only document (``None`` when it is empty)."""
        self.next()  # StreamStart
        if isinstance(self.loader.peek_event(), yaml.StreamEndEvent):
            return None
        self.next()  # DocumentStart
        value = self.value(self.next(), (), {}, {}, 1)
        self.next()  # DocumentEnd
        extra = self.loader.peek_event()
        if not isinstance(extra, yaml.StreamEndEvent):
            self.problems.error(self.pos(extra.start_mark), "", "a test file holds one YAML document")
        return value


def _values(path: str, text: str, problems: Problems) -> Any:
    """The file's one document as plain values; its problems (file:line:col) in ``problems``."""
    reader = _Reader(path, text, {}, problems, every_position=True)
    try:
        return reader.single()
    except Abort:
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Position(path, mark.line + 1, mark.column + 1) if mark else Position(path, 0, 0)
        problems.error(where, "", f"not valid YAML: {getattr(exc, 'problem', None) or exc}")
        return None
    finally:
        reader.dispose()


def _check(test_file: TestFile, problems: Problems) -> bool:
    before = len(problems.items)
    for error in sorted(_validator().iter_errors(test_file.doc), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        problems.error(test_file.position(*path), format_path(path), error.message)
    if len(problems.items) == before:
        _semantics(test_file, problems)
    return len(problems.items) == before


INSTANT = f"not an ISO 8601 date-time from {iso(EARLIEST)} to {iso(LATEST)} (e.g. 2030-01-07T09:00:00Z)"


def _instant(value: str) -> bool:
    moment = parse_instant(value)
    return moment is not None and EARLIEST <= moment <= LATEST


def _semantics(test_file: TestFile, problems: Problems) -> None:
    doc, pos = test_file.doc, test_file.position
    names: set[str] = set()
    for i, consumer in enumerate(doc.get("consumers") or []):
        if consumer["name"] in names:
            problems.error(pos("consumers", i, "name"), f"consumers[{i}].name", f"duplicate consumer {consumer['name']!r}")
        names.add(consumer["name"])
    if "start" in doc and not _instant(doc["start"]):
        problems.error(pos("start"), "start", INSTANT)
    for i, backend in enumerate(doc.get("backends") or []):
        if "delay" in backend and not math.isfinite(backend["delay"]):
            problems.error(pos("backends", i, "delay"), f"backends[{i}].delay", "not a finite number of seconds")
    for i, call in enumerate(doc["calls"]):
        here = f"calls[{i}]"
        if "key" in call and call["key"] not in names:
            problems.error(pos("calls", i, "key"), f"{here}.key", f"no consumer {call['key']!r} in this file")
        if "at" in call and not _instant(call["at"]):
            problems.error(pos("calls", i, "at"), f"{here}.at", INSTANT)
        if "after" in call and not math.isfinite(call["after"]):
            problems.error(pos("calls", i, "after"), f"{here}.after", "not a finite number of seconds")
        expect = call["expect"]
        for name, check in (expect.get("headers") or {}).items():
            why = patterns.problem(check["matches"]) if isinstance(check, dict) and "matches" in check else None
            if why:
                problems.error(pos("calls", i, "expect", "headers", name), f"{here}.expect.headers.{name}", why)
        for query in ((expect.get("body") or {}).get("json") or {}):
            try:
                jsonpath_rfc9535.compile(query)
            except jsonpath_rfc9535.JSONPathError as exc:
                problems.error(pos("calls", i, "expect", "body", "json"), f"{here}.expect.body.json",
                               f"{query!r} is not a JSONPath query (RFC 9535): {exc}")
