"""Value types of linting: severities, findings, the report, and the ruleset error.

The engine (:mod:`apimctl.lint.engine`) produces :class:`Finding` values, the entry points of
:mod:`apimctl.lint` wrap them in a :class:`LintReport`, and the renderers
(:mod:`apimctl.render.lint`) and the CLI read them. Nothing here reads files or prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from apimctl.errors import ApimctlError, Problem

RECOMMENDED = "apimctl:recommended"  # the built-in ruleset's reference

Severity = Literal["error", "warn", "info", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warn", "info", "hint")
"""Most severe first, as in Spectral (whose numbers 0-3 are the indices here)."""


def at_or_above(severity: Severity, threshold: Severity) -> bool:
    """Whether ``severity`` is ``threshold`` or more severe (``error`` is the most severe)."""
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold)


@dataclass(frozen=True)
class Finding:
    """One rule not satisfied at one place.

    ``file:line:col`` is where the offending node (or, for a field that is missing, the
    nearest node that is there) was written; empty for a live area. ``address`` names the
    object (``endpoint:Weather/Forecast``) and ``field`` the place inside it
    (``cors.allDomainsEnabled``); ``path`` is the place in the linted document
    (``services[0].endpoints[0].cors.allDomainsEnabled``).
    """

    rule: str
    severity: Severity
    message: str
    path: str
    address: str = ""
    field: str = ""
    file: str = ""
    line: int = 0
    col: int = 0

    @property
    def where(self) -> str:
        """``file:line:col`` for a manifest; ``kind:key:field`` for a live object."""
        if self.file:
            return f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        if self.address:
            return f"{self.address}:{self.field}" if self.field else self.address
        return self.path or "$"

    def __str__(self) -> str:
        return f"{self.where}: {self.severity} {self.rule}: {self.message}"


@dataclass(frozen=True)
class RuleInfo:
    """What the renderers say about a rule that ran (SARIF's ``tool.driver.rules``)."""

    name: str
    severity: Severity
    description: str = ""
    rationale: str = ""
    documentation_url: str = ""
    origin: str = ""  # the ruleset file (or built-in name) that defined it


@dataclass
class LintReport:
    """The result of one lint run: findings (sorted), the rules that ran, what was read."""

    findings: list[Finding]
    rules: list[RuleInfo]
    files: list[str] = field(default_factory=list)
    source: str = ""  # "manifests", or the target of a live lint
    live: bool = False
    warnings: list[str] = field(default_factory=list)  # about the configuration, not findings

    def counts(self) -> dict[Severity, int]:
        seen = Counter(f.severity for f in self.findings)
        return {s: seen.get(s, 0) for s in SEVERITIES}

    def failures(self, threshold: Severity) -> list[Finding]:
        """The findings at or above ``threshold``: those that fail the run."""
        return [f for f in self.findings if at_or_above(f.severity, threshold)]


class RulesetError(ApimctlError):
    """A ruleset cannot be used; ``problems`` holds every problem found, each located."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(dict.fromkeys(problems), key=lambda p: (p.file, p.line, p.col, p.path))
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid ruleset")
