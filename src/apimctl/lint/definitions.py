"""Reading one rule's definition: severity, ``given`` JSONPaths, ``then`` entries and their
function options, each problem located. The base of the ruleset loader
(:mod:`apimctl.lint.loading`), which adds files, ``extends``, rules and ``overrides``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import jsonpath_rfc9535 as jsonpath
import jsonschema

from apimctl.lint.functions import FUNCTIONS, Function, OptionError
from apimctl.lint.model import RECOMMENDED, SEVERITIES, Severity
from apimctl.lint.ruleset import Rule, Then
from apimctl.lint.yamldoc import YamlDoc
from apimctl.manifests.model import JsonPath, Position, Problems, format_path

BUILTIN: Mapping[str, str] = {RECOMMENDED: "recommended.yaml"}
MODES = ("recommended", "all", "off")

_TOP_KEYS = ("extends", "rules", "overrides", "description", "documentationUrl")
_RULE_KEYS = ("description", "message", "severity", "given", "then", "recommended", "rationale",
              "documentationUrl", "resolved")
_TWEAK_KEYS = ("description", "message", "severity", "recommended", "rationale", "documentationUrl")
_THEN_KEYS = ("field", "function", "functionOptions")
_OVERRIDE_KEYS = ("files", "rules")


def _severity(value: Any) -> Severity | Literal["off"] | None:
    """A severity as Spectral writes it (a name, or 0-3 / -1 for off); ``None`` if invalid."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return SEVERITIES[value] if 0 <= value < len(SEVERITIES) else "off" if value == -1 else None
    if value == "warning":
        return "warn"
    if value == "off" or value in SEVERITIES:
        return value  # type: ignore[no-any-return]
    return None


def _hint(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


_INVALID: Any = object()


def _option_message(error: jsonschema.ValidationError, function: Function) -> str:
    if error.validator == "additionalProperties" and function.options is not None:
        known = ", ".join(function.options.get("properties", {}))
        return f"{error.message} (options: {known})"
    if error.validator == "anyOf" and not error.absolute_path:
        needed = " or ".join(str(s["required"][0]) for s in error.validator_value)
        return f"needs {needed}"
    return str(error.message)


class DefinitionReader:
    """Reads rule definitions, recording problems (see the module docstring)."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def error(self, where: Position | None, path: JsonPath, message: str) -> None:
        self.problems.error(where, format_path(path), message)

    def bad_severity(self, doc: YamlDoc, path: JsonPath, value: Any) -> None:
        self.error(doc.at(path), path, f"unknown severity {value!r}; expected one of "
                                          f"{', '.join(SEVERITIES)}, off")

    def text(self, doc: YamlDoc, path: JsonPath, value: Any) -> str:
        if isinstance(value, str):
            return value
        self.error(doc.where(path), path, "must be a string")
        return ""

    def definition(self, doc: YamlDoc, path: JsonPath, spec: dict[str, Any], name: str) -> Rule | None:
        errors = self.problems.errors
        for key in spec:
            if key not in _RULE_KEYS:
                self.error(doc.where((*path, key)), (*path, key),
                           f"unknown key {key!r}{_hint(key, _RULE_KEYS)}; a rule has {', '.join(_RULE_KEYS)}")
        for key in ("given", "then"):
            if key not in spec:
                self.error(doc.where(path), path, f"rule {name!r} has no {key!r}")
        severity = _severity(spec.get("severity", "warn"))
        if severity is None:
            self.bad_severity(doc, (*path, "severity"), spec.get("severity"))
        recommended = spec.get("recommended", True)
        if not isinstance(recommended, bool):
            self.error(doc.where((*path, "recommended")), (*path, "recommended"), "must be true or false")
        given = self.givens(doc, (*path, "given"), spec.get("given"))
        thens = self.thens(doc, (*path, "then"), spec.get("then"))
        texts = {k: self.text(doc, (*path, k), spec[k]) for k in
                 ("description", "message", "rationale", "documentationUrl") if k in spec}
        if self.problems.errors > errors or severity is None:
            return None
        return Rule(name=name, severity="warn" if severity == "off" else severity,
                    enabled=severity != "off" and recommended is not False, given=tuple(given),
                    then=tuple(thens), description=texts.get("description", ""),
                    message=texts.get("message", ""), rationale=texts.get("rationale", ""),
                    documentation_url=texts.get("documentationUrl", ""),
                    recommended=recommended is not False, origin=doc.file)

    def givens(self, doc: YamlDoc, path: JsonPath, raw: Any) -> list[tuple[str, jsonpath.JSONPathQuery]]:
        if raw is None:
            return []
        entries = [(path, raw)] if isinstance(raw, str) else [((*path, i), g) for i, g in enumerate(raw)] \
            if isinstance(raw, list) and raw else []
        if not entries:
            self.error(doc.where(path), path, "must be a JSONPath expression or a list of them")
        out = []
        for at, text in entries:
            query = self.query(doc, at, text)
            if query is not None:
                out.append((text, query))
        return out

    def query(self, doc: YamlDoc, path: JsonPath, text: Any) -> jsonpath.JSONPathQuery | None:
        if not isinstance(text, str):
            self.error(doc.where(path), path, "must be a JSONPath expression (a string)")
            return None
        try:
            return jsonpath.compile(text)
        except jsonpath.JSONPathError as exc:
            token = getattr(exc, "token", None)
            index = token.index if token is not None and isinstance(token.index, int) else 0
            reason = getattr(token, "message", None) or str(exc).split(", line ")[0]
            self.error(doc.inside(path, index), path, f"invalid JSONPath {text!r}: {reason}")
            return None

    def thens(self, doc: YamlDoc, path: JsonPath, raw: Any) -> list[Then]:
        if raw is None:
            return []
        entries = [(path, raw)] if isinstance(raw, dict) else [((*path, i), t) for i, t in enumerate(raw)] \
            if isinstance(raw, list) and raw else []
        if not entries:
            self.error(doc.where(path), path, "must be a mapping with function (and field, "
                                              "functionOptions), or a list of them")
        out = []
        for at, spec in entries:
            then = self.then(doc, at, spec)
            if then is not None:
                out.append(then)
        return out

    def then(self, doc: YamlDoc, path: JsonPath, spec: Any) -> Then | None:
        if not isinstance(spec, dict):
            self.error(doc.where(path), path, "must be a mapping with function (and field, functionOptions)")
            return None
        for key in spec:
            if key not in _THEN_KEYS:
                self.error(doc.where((*path, key)), (*path, key), f"unknown key {key!r}{_hint(key, _THEN_KEYS)}")
        name = spec.get("function")
        function = FUNCTIONS.get(name) if isinstance(name, str) else None
        if function is None:
            at = (*path, "function") if "function" in spec else path
            what = f"unknown function {name!r}{_hint(str(name), list(FUNCTIONS))}" if "function" in spec \
                else "no function"
            self.error(doc.at(at) if "function" in spec else doc.where(at), at,
                       f"{what}; known: {', '.join(FUNCTIONS)}")
        options = self.options(doc, (*path, "functionOptions"), spec.get("functionOptions"), function)
        target = spec.get("field")
        query = None
        parts: tuple[str, ...] = ()
        if target is not None:
            if not isinstance(target, str) or not target:
                self.error(doc.where((*path, "field")), (*path, "field"), "must be a field name, "
                           "a dotted path, @key, or a JSONPath starting with $")
                return None
            if target.startswith("$"):
                query = self.query(doc, (*path, "field"), target)
                if query is None:
                    return None
            elif target != "@key":
                parts = tuple(target.split("."))
        if function is None or options is _INVALID:
            return None
        return Then(function, options, target, query, parts)

    def options(self, doc: YamlDoc, path: JsonPath, raw: Any, function: Function | None) -> Any:
        if function is None:
            return _INVALID
        if function.options is None:
            if raw is not None:
                self.error(doc.where(path), path, f"function {function.name!r} takes no functionOptions")
                return _INVALID
            return None
        value = {} if raw is None else raw
        validator = jsonschema.Draft202012Validator(dict(function.options))
        errors = sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
        for error in errors:
            at = (*path, *error.absolute_path) if raw is not None else path[:-1]
            message = _option_message(error, function)
            self.error(doc.at(at) if raw is not None else doc.where(at), at, f"{function.name}: {message}")
        if errors:
            return _INVALID
        try:
            return function.prepare(value)
        except OptionError as exc:
            at = (*path, *exc.path)
            self.error(doc.at(at), at, f"{function.name}: {exc.message}")
            return _INVALID
