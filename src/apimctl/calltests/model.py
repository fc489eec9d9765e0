"""Reading call-test files: YAML, the schema (``schemas/calltests.schema.json``) and the
checks beyond it, every problem with its file, line and column (as ``validate`` reports).

A file is ``*.test.yaml`` (the manifest loader never reads those: put them in a folder of
their own, or name them on the command line); a directory given to ``apimctl test`` is
searched for them, recursively. Date-times stay strings (YAML would make them dates).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jsonpath_rfc9535
import jsonschema
import yaml

from apimctl.calltests.timing import parse_instant
from apimctl.errors import Problem
from apimctl.manifests.documents import CALL_TEST_SUFFIXES
from apimctl.manifests.model import Position, Problems, format_path

SUFFIXES = CALL_TEST_SUFFIXES
MAX_BYTES = 4 * 1024 * 1024


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
        if os.path.getsize(path) > MAX_BYTES:
            problems.error(Position(path, 0, 0), "", f"larger than {MAX_BYTES} bytes")
            return None
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        problems.error(Position(path, 0, 0), "", f"cannot read: {getattr(exc, 'strerror', None) or exc}")
        return None
    try:
        node = yaml.compose(text, Loader=_Loader)
        doc = yaml.load(text, Loader=_Loader)  # a safe loader, without timestamps
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Position(path, mark.line + 1, mark.column + 1) if mark else Position(path, 0, 0)
        problems.error(where, "", f"not valid YAML: {getattr(exc, 'problem', None) or exc}")
        return None
    if node is None or not isinstance(doc, dict):
        problems.error(Position(path, 1, 1), "", "a test file is a mapping with a 'calls' list")
        return None
    return TestFile(path, doc, node)


def _check(test_file: TestFile, problems: Problems) -> bool:
    before = len(problems.items)
    for error in sorted(_validator().iter_errors(test_file.doc), key=lambda e: list(map(str, e.absolute_path))):
        path = list(error.absolute_path)
        problems.error(test_file.position(*path), format_path(path), error.message)
    if len(problems.items) == before:
        _semantics(test_file, problems)
    return len(problems.items) == before


def _semantics(test_file: TestFile, problems: Problems) -> None:
    doc, pos = test_file.doc, test_file.position
    names: set[str] = set()
    for i, consumer in enumerate(doc.get("consumers") or []):
        if consumer["name"] in names:
            problems.error(pos("consumers", i, "name"), f"consumers[{i}].name", f"duplicate consumer {consumer['name']!r}")
        names.add(consumer["name"])
    if "start" in doc and parse_instant(doc["start"]) is None:
        problems.error(pos("start"), "start", "not an ISO 8601 date-time (e.g. 2030-01-07T09:00:00Z)")
    for i, call in enumerate(doc["calls"]):
        here = f"calls[{i}]"
        if "key" in call and call["key"] not in names:
            problems.error(pos("calls", i, "key"), f"{here}.key", f"no consumer {call['key']!r} in this file")
        if "at" in call and parse_instant(call["at"]) is None:
            problems.error(pos("calls", i, "at"), f"{here}.at", "not an ISO 8601 date-time (e.g. 2030-01-07T09:00:00Z)")
        expect = call["expect"]
        for name, check in (expect.get("headers") or {}).items():
            if isinstance(check, dict) and "matches" in check:
                try:
                    re.compile(check["matches"])
                except re.error as exc:
                    problems.error(pos("calls", i, "expect", "headers", name), f"{here}.expect.headers.{name}",
                                   f"not a regular expression: {exc}")
        for query in ((expect.get("body") or {}).get("json") or {}):
            try:
                jsonpath_rfc9535.compile(query)
            except jsonpath_rfc9535.JSONPathError as exc:
                problems.error(pos("calls", i, "expect", "body", "json"), f"{here}.expect.body.json",
                               f"{query!r} is not a JSONPath query (RFC 9535): {exc}")
