"""Shared vocabulary of the lint tests: a small valid manifest, files written into a
temporary directory, and a lint run over them with a fixed "now"."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apimctl.lint import Finding, LintReport, lint_paths
from apimctl.lint.functions import FUNCTIONS, Context

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

WEATHER = """\
domains: [example.com, example.net]
services:
  - name: Weather
    errorSets:
      - name: JSON errors
        errorMessages:
          - {id: ERR_403_DEVELOPER_OVER_QPS, status: Too Many Requests}
    endpoints:
      - name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        inboundSslRequired: true
        highSecurity: true
        errorSet: JSON errors
packages:
  - name: Partners
    plans:
      - name: Gold
        rateLimitCeiling: 1000
        qpsLimitCeiling: 5
        services: [{name: Weather}]
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def lint(folder: Path, *paths: str, rulesets: tuple[str, ...] = (), overlays: tuple[str, ...] = (),
         env: dict[str, str] | None = None) -> LintReport:
    """Lint ``paths`` (relative to ``folder``) with the ruleset files named (also relative)."""
    return lint_paths([str(folder / p) for p in paths], [str(folder / o) for o in overlays],
                      rulesets=[r if r.startswith("apimctl:") else str(folder / r) for r in rulesets],
                      now=NOW, env=env or {})


def rules_of(report: LintReport) -> list[str]:
    return [f.rule for f in report.findings]


def by_rule(report: LintReport, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def check(name: str, value: Any, options: Any = None) -> list[tuple[tuple[Any, ...], str]]:
    """Run the function ``name`` on ``value`` with ``options`` prepared as a ruleset would."""
    function = FUNCTIONS[name]
    prepared = function.prepare(options if options is not None else {}) if function.options else None
    return function.check(value, prepared, "field", Context(NOW))
