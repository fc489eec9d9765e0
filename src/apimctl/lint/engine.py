"""Running a ruleset over one manifest-shaped document.

:func:`run_rules` is called by :mod:`apimctl.lint.run` for the manifests (with a locator that
turns document paths into ``file:line:col``) and for a live area (without one). For each rule
on somewhere, each ``given`` JSONPath is evaluated once per run (rules sharing a ``given``
share the nodes), each ``then`` resolves its field on every node and calls the function;
each result becomes a :class:`~apimctl.lint.model.Finding` located in the source, named by
the object address (``endpoint:Weather/Forecast``) and the field inside it, with the
severity the ruleset's overrides give it for that file.

Messages: a rule's ``message`` is a template (``{{error}}`` the function's message,
``{{description}}``, ``{{path}}``, ``{{property}}``, ``{{value}}``, ``{{address}}``);
without one, the message is the rule's description followed by the function's message.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from datetime import datetime
from typing import Any

import jsonpath_rfc9535 as jsonpath

from apimctl import kinds
from apimctl.lint.functions import ABSENT, Context, show
from apimctl.lint.model import SEVERITIES, Finding
from apimctl.lint.ruleset import Rule, Ruleset, Then
from apimctl.manifests.model import JsonPath, Position, format_path
from apimctl.plans.model import address

Locate = Callable[[JsonPath], Position | None]


def run_rules(ruleset: Ruleset, doc: Mapping[str, Any], *, now: datetime,
              locate: Locate | None = None, disabled: Collection[str] = ()) -> list[Finding]:
    """Every finding of the rules of ``ruleset`` on ``doc``, sorted and without duplicates."""
    run = _Run(ruleset, doc, Context(now), locate)
    for rule in ruleset.candidates():
        if rule.name not in disabled:
            run.rule(rule)
    return sorted(dict.fromkeys(run.findings), key=_order)


def _order(f: Finding) -> tuple[Any, ...]:
    return (f.file, f.line, f.col, f.address, SEVERITIES.index(f.severity), f.field, f.rule, f.message)


class _Run:
    def __init__(self, ruleset: Ruleset, doc: Mapping[str, Any], ctx: Context,
                 locate: Locate | None) -> None:
        self.ruleset, self.doc, self.ctx, self.locate = ruleset, doc, ctx, locate
        self.nodes: dict[str, list[jsonpath.JSONPathNode]] = {}
        self.findings: list[Finding] = []

    def given(self, text: str, query: jsonpath.JSONPathQuery) -> list[jsonpath.JSONPathNode]:
        nodes = self.nodes.get(text)
        if nodes is None:
            nodes = self.nodes[text] = list(query.finditer(self.doc))  # type: ignore[arg-type]
        return nodes

    def rule(self, rule: Rule) -> None:
        for text, query in rule.given:
            for node in self.given(text, query):
                for then in rule.then:
                    self.check(rule, then, node.value, tuple(node.location))

    def check(self, rule: Rule, then: Then, value: Any, location: JsonPath) -> None:
        function = then.function
        for target, found, label in _targets(value, location, then):
            if found is ABSENT and not function.on_absent:
                continue
            for rel, message in function.check(found, then.options, label, self.ctx):
                self.add(rule, (*target, *rel), message, found)

    def add(self, rule: Rule, path: JsonPath, error: str, value: Any) -> None:
        where = self.locate(path) if self.locate is not None else None
        file = where.file if where is not None else ""
        severity = self.ruleset.severity_for(rule, file)
        if severity is None:
            return
        obj, rest = address_of(self.doc, path)
        text = message(rule, error, path, value, obj)
        self.findings.append(Finding(
            rule=rule.name, severity=severity, message=text, path=format_path(path) or "$",
            address=obj, field=format_path(rest), file=file,
            line=where.line if where is not None else 0, col=where.col if where is not None else 0))


def _targets(value: Any, location: JsonPath, then: Then) -> Iterator[tuple[JsonPath, Any, str]]:
    """What ``then`` looks at on the node ``value``: (path, value or ABSENT, label)."""
    if then.field is None:
        yield location, value, _label(location)
    elif then.query is not None:
        nodes = then.query.find(value) if isinstance(value, dict | list) else []
        if not nodes:
            yield location, ABSENT, then.field
        for node in nodes:
            rel = tuple(node.location)
            yield (*location, *rel), node.value, format_path(rel) or then.field
    elif then.field == "@key":
        if isinstance(value, dict):
            for key in value:
                yield (*location, key), key, f"key {show(key)}"
    else:
        found, rel = _walk(value, then.parts)
        yield (*location, *rel), found, then.field


def _walk(value: Any, parts: tuple[str, ...]) -> tuple[Any, JsonPath]:
    """The value at the dotted ``parts`` under ``value`` (ABSENT if missing), and its path."""
    rel: list[str | int] = []
    for part in parts:
        if isinstance(value, dict):
            rel.append(part)
            value = value.get(part, ABSENT)
        elif isinstance(value, list) and part.isdigit():
            rel.append(int(part))
            value = value[int(part)] if int(part) < len(value) else ABSENT
        else:
            rel.append(part)
            value = ABSENT
        if value is ABSENT:
            rel.extend(parts[len(rel):])
            return ABSENT, tuple(rel)
    return value, tuple(rel)


def _label(location: JsonPath) -> str:
    if not location:
        return "the document"
    if isinstance(location[-1], int) and len(location) >= 2:
        return format_path(location[-2:])
    return str(location[-1])


def message(rule: Rule, error: str, path: JsonPath, value: Any, obj: str) -> str:
    """The finding's message: the rule's template filled in, or description and error."""
    if not rule.message:
        return f"{rule.description.rstrip('.')}: {error}" if rule.description else error
    fields = {
        "error": error, "description": rule.description, "path": format_path(path) or "$",
        "property": str(path[-1]) if path else "", "address": obj,
        "value": "(missing)" if value is ABSENT else show(value),
    }
    text = rule.message
    for name, filled in fields.items():
        text = text.replace("{{" + name + "}}", filled)
    return text


def address_of(doc: Mapping[str, Any], path: JsonPath) -> tuple[str, JsonPath]:
    """The address of the object ``path`` is in (``endpoint:Weather/Forecast``), and the
    rest of the path inside it; ``("", path)`` outside any object (``settings``)."""
    index = path[1] if len(path) >= 2 else None
    kind = kinds.by_manifest_key(str(path[0])) if isinstance(index, int) else None
    if kind is None or not isinstance(index, int):
        return "", path
    items = doc.get(kind.manifest_key)
    obj = items[index] if isinstance(items, list) and index < len(items) else None
    key = _identity(kind, obj)
    rest = path[2:]
    while len(rest) >= 2 and isinstance(rest[1], int) and isinstance(obj, dict):
        child = next((c for c in kinds.children_of(kind) if c.manifest_key == rest[0]), None)
        children = obj.get(str(rest[0]))
        if child is None or not isinstance(children, list) or rest[1] >= len(children):
            break
        kind, obj = child, children[rest[1]]
        key = kind.key_of(_identity(kind, obj), key)
        rest = rest[2:]
    return address(kind.name, key), rest


def _identity(kind: kinds.Kind, obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get(kind.identity, "?"))
    return str(obj)
