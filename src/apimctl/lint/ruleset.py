"""The ruleset as a value: rules, their checks, and the overrides that change them per file.

:mod:`apimctl.lint.loading` builds a :class:`Ruleset` from ruleset files (the format is
described there); :mod:`apimctl.lint.engine` runs its :meth:`Ruleset.candidates` and asks
:meth:`Ruleset.severity_for` what a finding in a given file weighs. Nothing here reads files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import jsonpath_rfc9535 as jsonpath

from apimctl.lint.functions import Function
from apimctl.lint.model import RuleInfo, Severity

Setting = Severity | Literal["off", "on"]


@dataclass(frozen=True)
class Then:
    """One check of a rule: the function, its prepared options, and the field it looks at
    (``None``: the node itself; ``@key``: each key; ``$...``: a JSONPath from the node;
    otherwise a dotted path)."""

    function: Function
    options: Any
    field: str | None = None
    query: jsonpath.JSONPathQuery | None = None
    parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """A named rule. ``enabled`` is its state before overrides; ``severity`` is what its
    findings carry when on."""

    name: str
    severity: Severity
    enabled: bool
    given: tuple[tuple[str, jsonpath.JSONPathQuery], ...]
    then: tuple[Then, ...]
    description: str = ""
    message: str = ""
    rationale: str = ""
    documentation_url: str = ""
    recommended: bool = True
    origin: str = ""

    def info(self) -> RuleInfo:
        return RuleInfo(self.name, self.severity, self.description, self.rationale,
                        self.documentation_url, self.origin)


@dataclass
class Override:
    """Rule settings for the files matching ``patterns`` (relative to ``base``)."""

    base: str
    patterns: tuple[re.Pattern[str], ...]
    settings: dict[str, Setting]
    _seen: dict[str, bool] = field(default_factory=dict, repr=False)

    def matches(self, file: str) -> bool:
        hit = self._seen.get(file)
        if hit is None:
            rel = os.path.relpath(os.path.abspath(file), self.base).replace(os.sep, "/")
            hit = self._seen[file] = any(p.fullmatch(rel) for p in self.patterns)
        return hit


@dataclass
class Ruleset:
    """The rules in force, by name, and the overrides that change them per file."""

    rules: dict[str, Rule] = field(default_factory=dict)
    overrides: list[Override] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def merge(self, other: Ruleset) -> None:
        self.rules.update(other.rules)
        self.overrides.extend(other.overrides)
        self.sources.extend(s for s in other.sources if s not in self.sources)

    def candidates(self) -> list[Rule]:
        """Rules on somewhere: by default, or for the files of some override."""
        switched = {n for o in self.overrides for n, s in o.settings.items() if s != "off"}
        return [r for r in self.rules.values() if r.enabled or r.name in switched]

    def severity_for(self, rule: Rule, file: str) -> Severity | None:
        """The severity of ``rule``'s findings located in ``file`` (``""``: no file), or
        ``None`` when the rule is off there. Later overrides win."""
        severity: Severity | None = rule.severity if rule.enabled else None
        if file:
            for override in self.overrides:
                setting = override.settings.get(rule.name)
                if setting is not None and override.matches(file):
                    severity = None if setting == "off" else rule.severity if setting == "on" else setting
        return severity


def glob_pattern(pattern: str) -> re.Pattern[str]:
    """A file glob as a regular expression over ``/``-separated relative paths.

    ``**`` spans directories, ``*`` and ``?`` stay inside one, ``[...]`` is a class, a
    trailing ``/`` means everything below; a pattern without ``/`` matches a file name in any
    directory."""
    text = pattern[2:] if pattern.startswith("./") else pattern
    if text.endswith("/"):
        text += "**"
    out: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] in "*?":
            out.append("[^/]*" if text[i] == "*" else "[^/]")
            i += 1
        elif text[i] == "[" and "]" in text[i + 2:]:
            end = text.index("]", i + 2)
            body = text[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    body = "".join(out)
    return re.compile(body if "/" in text else "(?:.*/)?" + body)
