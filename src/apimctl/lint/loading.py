"""Loading rulesets: Spectral-style YAML files of named rules, read, merged and checked.

:func:`load_rulesets` is what :mod:`apimctl.lint.run` calls with the ``--ruleset`` files (or
``settings.lint.rulesets``, or the built-in ``apimctl:recommended``). A ruleset file::

    extends: [apimctl:recommended, ./team.yaml]      # or [[apimctl:recommended, all]]
    rules:
      endpoint-path-versioned:
        description: Public paths start with a version.
        severity: error                              # error | warn (default) | info | hint | off
        given: $.services[*].endpoints[*]             # RFC 9535 JSONPath over the manifest
        then: {field: requestPathAlias, function: pattern, functionOptions: {match: "^/v[0-9]+/"}}
      apimctl-endpoint-high-security: off            # change an extended rule's severity
    overrides:
      - files: ["sandbox/**"]                        # globs relative to this ruleset file
        rules: {apimctl-no-missing-api-key: off}

``extends`` takes files (relative to the ruleset) and built-in names, each optionally as
``[name, recommended|all|off]``: ``recommended`` (the default) leaves off the rules marked
``recommended: false``, ``all`` turns every rule on, ``off`` every rule off (then switch
some on by name with ``true`` or a severity). Later rulesets win over earlier ones, a
ruleset's own rules over those it extends.

Every problem is reported at once, located ``file:line:col`` (an invalid JSONPath at the
character it stops at), as a :class:`~apimctl.lint.model.RulesetError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, Literal

import jsonpath_rfc9535 as jsonpath
import jsonschema

from apimctl.lint.functions import FUNCTIONS, Function, OptionError
from apimctl.lint.model import SEVERITIES, RulesetError, Severity
from apimctl.lint.ruleset import Override, Rule, Ruleset, Setting, Then, glob_pattern
from apimctl.lint.yamldoc import YamlDoc, YamlError, read_yaml
from apimctl.manifests.model import JsonPath, Position, Problems, format_path

RECOMMENDED = "apimctl:recommended"
BUILTIN: Mapping[str, str] = {RECOMMENDED: "recommended.yaml"}
MODES = ("recommended", "all", "off")

_TOP_KEYS = ("extends", "rules", "overrides", "description", "documentationUrl")
_RULE_KEYS = ("description", "message", "severity", "given", "then", "recommended", "rationale",
              "documentationUrl", "resolved")
_TWEAK_KEYS = ("description", "message", "severity", "recommended", "rationale", "documentationUrl")
_THEN_KEYS = ("field", "function", "functionOptions")
_OVERRIDE_KEYS = ("files", "rules")


def load_rulesets(refs: Sequence[str], base: str = ".") -> Ruleset:
    """The rulesets ``refs`` (files relative to ``base``, or built-in names) merged in order.
    Raises :class:`RulesetError` with every problem found."""
    problems = Problems()
    loader = _Loader(problems)
    merged = Ruleset()
    for ref in refs:
        loaded = loader.load(ref, base, None, ())
        if loaded is not None:
            merged.merge(loaded)
    if problems.errors:
        raise RulesetError(problems.sorted())
    return merged


def builtin_text(name: str) -> str:
    """The YAML of a built-in ruleset (``apimctl:recommended``)."""
    return resources.files("apimctl.lint").joinpath(BUILTIN[name]).read_text("utf-8")


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


class _Loader:
    """Loads ruleset files into :class:`Ruleset` values, recording problems."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def error(self, where: Position | None, path: JsonPath, message: str) -> None:
        self.problems.error(where, format_path(path), message)

    # -- files

    def load(self, ref: str, base: str, where: Position | None,
             stack: tuple[tuple[str, str], ...]) -> Ruleset | None:
        name = ref if ref in BUILTIN else os.path.normpath(os.path.join(base, ref))
        if ref.startswith("apimctl:") and ref not in BUILTIN:
            self.error(where, (), f"unknown built-in ruleset {ref!r} (known: {', '.join(BUILTIN)})")
            return None
        identity = name if ref in BUILTIN else os.path.abspath(name)
        if identity in (seen for seen, _ in stack):
            chain = " -> ".join([*(shown for _, shown in stack), name])
            self.error(where, (), f"rulesets extend each other in a cycle: {chain}")
            return None
        text = self.read(name, ref in BUILTIN, where)
        if text is None:
            return None
        try:
            doc = read_yaml(name, text)
        except YamlError as exc:
            self.problems.error(exc.position, "", exc.message)
            return None
        if not isinstance(doc.value, dict):
            what = "empty" if doc.value is None else f"a {type(doc.value).__name__}"
            self.error(Position(name, 1, 1) if doc.value is None else doc.where(()), (),
                       f"a ruleset is a mapping with rules, extends and overrides; this one is {what}")
            return None
        folder = "." if ref in BUILTIN else os.path.dirname(name) or "."
        return self.ruleset(doc, folder, (*stack, (identity, name)))

    def read(self, name: str, builtin: bool, where: Position | None) -> str | None:
        if builtin:
            return builtin_text(name)
        try:
            with open(name, encoding="utf-8") as handle:
                return handle.read()
        except FileNotFoundError:
            reason = "no such file"
        except IsADirectoryError:
            reason = "a directory, not a ruleset file"
        except UnicodeDecodeError:
            reason = "not UTF-8 text"
        except OSError as exc:
            reason = f"cannot read it: {exc.strerror or exc}"
        # located at the extends entry that names the file, or at the file itself
        self.problems.error(where or Position(name, 0, 0), "", f"ruleset {name}: {reason}" if where else reason)
        return None

    def ruleset(self, doc: YamlDoc, folder: str, stack: tuple[tuple[str, str], ...]) -> Ruleset:
        root: dict[str, Any] = doc.value
        for key in root:
            if key not in _TOP_KEYS:
                self.error(doc.where((key,)), (key,), f"unknown key {key!r}{_hint(key, _TOP_KEYS)}; "
                           f"a ruleset has {', '.join(_TOP_KEYS)}")
        result = Ruleset(sources=[doc.file])
        for ref, mode, at in self.extends(doc):
            sub = self.load(ref, folder, at, stack)
            if sub is not None:
                result.merge(_with_mode(sub, mode))
        rules = root.get("rules", {})
        if not isinstance(rules, dict):
            self.error(doc.where(("rules",)), ("rules",), "must be a mapping of rule names to rules")
            rules = {}
        for name, spec in rules.items():
            self.rule(doc, ("rules", name), spec, result, None)
        result.overrides.extend(self.overrides(doc, folder, result))
        return result

    def extends(self, doc: YamlDoc) -> list[tuple[str, str, Position]]:
        raw = doc.value.get("extends")
        if raw is None:
            return []
        entries = [raw] if isinstance(raw, str) else raw
        if not isinstance(entries, list):
            self.error(doc.where(("extends",)), ("extends",), "must be a ruleset name or a list of them")
            return []
        out = []
        for i, entry in enumerate(entries):
            path: JsonPath = ("extends",) if isinstance(raw, str) else ("extends", i)
            at = doc.at(path)
            if isinstance(entry, str) and entry:
                out.append((entry, "recommended", at))
            elif (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                  and entry[0] and entry[1] in MODES):
                out.append((entry[0], str(entry[1]), at))
            else:
                self.error(at, path, f"expected a ruleset file or built-in name, or [name, MODE] "
                                     f"with MODE one of {', '.join(MODES)}")
        return out

    # -- rules

    def rule(self, doc: YamlDoc, path: JsonPath, spec: Any, into: Ruleset,
             override: dict[str, Setting] | None) -> None:
        """Read one entry of ``rules`` (of the ruleset, or of an override when ``override``
        is given) into ``into`` (and the override's settings)."""
        name = str(path[-1])
        inherited = into.rules.get(name)
        where = doc.where(path)
        if isinstance(spec, dict) and ("given" in spec or "then" in spec):
            if override is not None and inherited is not None:
                self.error(where, path, f"rule {name!r} is already defined; an override may change "
                                        "its severity, or define a new rule")
                return
            rule = self.definition(doc, path, spec, name)
            if rule is None:
                return
            if override is not None:
                override[name] = rule.severity if rule.enabled else "off"
                rule = dataclasses.replace(rule, enabled=False)
            into.rules[name] = rule
            return
        if inherited is None:
            known = list(into.rules)
            self.error(where, path, f"rule {name!r} is not defined here or in the rulesets this one "
                                    f"extends{_hint(name, known)}; a new rule needs given and then")
            return
        setting = self.setting(doc, path, spec, override is not None)
        if setting is None:
            return
        if override is not None and setting[0] is not None:
            override[name] = setting[0]
        elif override is None:
            into.rules[name] = _tweak(inherited, setting[0], setting[1])

    def setting(self, doc: YamlDoc, path: JsonPath, spec: Any,
                in_override: bool) -> tuple[Setting | None, dict[str, Any]] | None:
        """A change to an existing rule: a severity, ``true``/``false``, or (outside
        overrides) a mapping of descriptive fields and ``severity``."""
        where = doc.where(path)
        if isinstance(spec, bool):
            return ("on" if spec else "off"), {}
        if not isinstance(spec, dict):
            level = _severity(spec)
            if level is None:
                self.error(doc.at(path), path, f"expected a severity ({', '.join(SEVERITIES)}, off), "
                                               f"true/false, or a rule definition; got {spec!r}")
                return None
            return level, {}
        allowed = ("severity",) if in_override else _TWEAK_KEYS
        fields: dict[str, Any] = {}
        for key, value in spec.items():
            if key not in allowed:
                extra = " (an override may only change the severity)" if in_override else ""
                self.error(doc.where((*path, key)), (*path, key), f"unknown key {key!r}{extra}")
            elif key == "recommended" and not isinstance(value, bool):
                self.error(doc.at((*path, key)), (*path, key), "must be true or false")
            elif key != "severity":
                fields[key] = self.text(doc, (*path, key), value) if key != "recommended" else value
        severity: Setting | None = None  # unchanged
        if in_override and "severity" not in spec:
            self.error(where, path, "an override changes a rule's severity: give severity")
            return None
        if "severity" in spec:
            parsed = _severity(spec["severity"])
            if parsed is None:
                self.bad_severity(doc, (*path, "severity"), spec["severity"])
                return None
            severity = parsed
        return severity, fields

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

    # -- overrides

    def overrides(self, doc: YamlDoc, folder: str, into: Ruleset) -> list[Override]:
        raw = doc.value.get("overrides")
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.error(doc.where(("overrides",)), ("overrides",), "must be a list of {files, rules}")
            return []
        out = []
        for i, entry in enumerate(raw):
            path: JsonPath = ("overrides", i)
            if not isinstance(entry, dict):
                self.error(doc.where(path), path, "must be a mapping with files and rules")
                continue
            for key in entry:
                if key not in _OVERRIDE_KEYS:
                    self.error(doc.where((*path, key)), (*path, key),
                               f"unknown key {key!r}; an override has files and rules")
            patterns = self.patterns(doc, (*path, "files"), entry.get("files"))
            settings: dict[str, Setting] = {}
            rules = entry.get("rules")
            if not isinstance(rules, dict) or not rules:
                self.error(doc.where((*path, "rules")), (*path, "rules"),
                           "must be a mapping of rule names to severities or new rules")
                rules = {}
            for name, spec in rules.items():
                self.rule(doc, (*path, "rules", name), spec, into, settings)
            if patterns:
                out.append(Override(os.path.abspath(folder), tuple(patterns), settings))
        return out

    def patterns(self, doc: YamlDoc, path: JsonPath, raw: Any) -> list[re.Pattern[str]]:
        entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else None
        if not entries or not all(isinstance(p, str) and p for p in entries):
            self.error(doc.at(path), path, "must be a list of file globs (relative to the ruleset)")
            return []
        return [glob_pattern(p) for p in entries]


_INVALID: Any = object()


def _option_message(error: jsonschema.ValidationError, function: Function) -> str:
    if error.validator == "additionalProperties" and function.options is not None:
        known = ", ".join(function.options.get("properties", {}))
        return f"{error.message} (options: {known})"
    if error.validator == "anyOf" and not error.absolute_path:
        needed = " or ".join(str(s["required"][0]) for s in error.validator_value)
        return f"needs {needed}"
    return str(error.message)


def _with_mode(ruleset: Ruleset, mode: str) -> Ruleset:
    """``ruleset`` as extended with ``mode`` (``recommended`` leaves it as loaded)."""
    if mode == "recommended":
        return ruleset
    on = mode == "all"
    rules = {n: dataclasses.replace(r, enabled=on) for n, r in ruleset.rules.items()}
    return Ruleset(rules, list(ruleset.overrides), list(ruleset.sources))


def _tweak(rule: Rule, setting: Setting | None, fields: Mapping[str, Any]) -> Rule:
    changes: dict[str, Any] = {}
    names = {"description": "description", "message": "message", "rationale": "rationale",
             "documentationUrl": "documentation_url", "recommended": "recommended"}
    for key, value in fields.items():
        changes[names[key]] = value
    if setting == "off":
        changes["enabled"] = False
    elif setting == "on":
        changes["enabled"] = True
    elif setting is not None:
        changes["enabled"], changes["severity"] = True, setting
    return dataclasses.replace(rule, **changes)
