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
import os
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from apimctl.lint.definitions import (
    _OVERRIDE_KEYS,
    _TOP_KEYS,
    _TWEAK_KEYS,
    BUILTIN,
    MODES,
    DefinitionReader,
    _hint,
    _severity,
)
from apimctl.lint.model import SEVERITIES, RulesetError
from apimctl.lint.ruleset import Override, Rule, Ruleset, Setting, glob_pattern
from apimctl.lint.yamldoc import YamlDoc, YamlError, read_yaml
from apimctl.manifests.model import JsonPath, Position, Problems


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


class _Loader(DefinitionReader):
    """Loads ruleset files into :class:`Ruleset` values, recording problems."""


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
