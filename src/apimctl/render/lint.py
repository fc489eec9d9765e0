"""Rendering of lint findings for ``apimctl lint`` (and ``plan``/``apply --lint``).

``text``: one ``file:line:col: severity rule: message`` line per finding (a live object is
named ``kind:key:field`` instead); ``json``: a versioned document for tools; ``github``:
GitHub Actions workflow commands (annotations on the pull request); ``sarif``: a SARIF 2.1.0
log that GitHub code scanning accepts (``github/codeql-action/upload-sarif``). :func:`summary`
is the one-line verdict printed on stderr. Renderers return strings and never print.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from apimctl import __version__, sensitive
from apimctl.lint.model import Finding, LintReport, Severity, at_or_above

FORMATS = ("text", "json", "github", "sarif")
JSON_FORMAT_VERSION = "1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/apimctl/apimctl"
SARIF_LEVEL: dict[Severity, str] = {"error": "error", "warn": "warning", "info": "note", "hint": "note"}
GITHUB_LEVEL: dict[Severity, str] = {"error": "error", "warn": "warning", "info": "notice", "hint": "notice"}


def render(report: LintReport, fmt: str, threshold: Severity = "error") -> str:
    """The findings in ``fmt``; ends with a newline unless empty (text and github). Scrubbed
    of every value registered with :mod:`apimctl.sensitive`."""
    if fmt == "json":
        return sensitive.scrub(render_json(report, threshold))
    if fmt == "sarif":
        return sensitive.scrub(render_sarif(report))
    line = render_github if fmt == "github" else render_text
    return sensitive.scrub("".join(line(f) + "\n" for f in report.findings))


def render_text(finding: Finding) -> str:
    return str(finding)


def render_github(finding: Finding) -> str:
    """``::warning file=F,line=L,col=C,title=T::message`` (a workflow command)."""
    props = []
    message = finding.message
    if finding.file:
        props.append(f"file={_property(finding.file)}")
        if finding.line:
            props += [f"line={finding.line}", f"col={finding.col}"]
    else:
        message = f"{finding.where}: {message}"
    props.append(f"title={_property('apimctl lint: ' + finding.rule)}")
    return f"::{GITHUB_LEVEL[finding.severity]} {','.join(props)}::{_data(message)}"


def render_json(report: LintReport, threshold: Severity = "error") -> str:
    """``{"format_version", "source", "summary": {...}, "rules": [...], "findings": [...]}``."""
    failures = len(report.failures(threshold))
    body: dict[str, Any] = {
        "format_version": JSON_FORMAT_VERSION,
        "source": report.source,
        "live": report.live,
        "summary": {**report.counts(), "fail_severity": threshold, "failures": failures,
                    "passed": failures == 0, "files": len(report.files), "rules": len(report.rules)},
        "rules": [{"name": r.name, "severity": r.severity, "description": r.description,
                   "origin": r.origin} for r in report.rules],
        "findings": [
            {"rule": f.rule, "severity": f.severity, "message": f.message, "file": f.file,
             "line": f.line, "column": f.col, "path": f.path, "address": f.address, "field": f.field}
            for f in report.findings
        ],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def render_sarif(report: LintReport) -> str:
    """A SARIF 2.1.0 log with one run: every rule that ran, and one result per finding."""
    names = [r.name for r in report.rules]
    names += sorted({f.rule for f in report.findings} - set(names))
    index = {name: i for i, name in enumerate(names)}
    infos = {r.name: r for r in report.rules}
    rules = []
    for name in names:
        info = infos.get(name)
        short = (info.description if info else "") or name
        entry: dict[str, Any] = {
            "id": name,
            "shortDescription": {"text": short},
            "fullDescription": {"text": (info.rationale if info else "") or short},
            "help": {"text": (info.rationale if info else "") or short},
            "defaultConfiguration": {"level": SARIF_LEVEL[info.severity] if info else "warning"},
            "properties": {"tags": ["apimctl", "configuration"]},
        }
        if info and info.documentation_url:
            entry["helpUri"] = info.documentation_url
        rules.append(entry)
    results = [_result(f, index[f.rule]) for f in report.findings]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "apimctl", "version": __version__,
                                "informationUri": INFORMATION_URI, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    location: dict[str, Any] = {}
    if finding.file:
        physical: dict[str, Any] = {"artifactLocation": artifact(finding.file)}
        if finding.line:
            physical["region"] = {"startLine": finding.line, "startColumn": max(finding.col, 1)}
        location["physicalLocation"] = physical
    logical = finding.address or finding.path
    if logical:
        name = f"{finding.address}:{finding.field}" if finding.address and finding.field else logical
        location["logicalLocations"] = [{"fullyQualifiedName": name, "kind": "object"}]
    return {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
    }


def artifact(file: str) -> dict[str, str]:
    """A file as a SARIF artifact location: relative to the checkout (``%SRCROOT%``), or an
    absolute ``file:`` URI."""
    if os.path.isabs(file):
        return {"uri": Path(file).as_uri()}
    return {"uri": quote(Path(file).as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def summary(report: LintReport, threshold: Severity) -> str:
    """``1 error, 2 warnings in 1 file (12 rules); failing: 1 at or above error``."""
    counts = report.counts()
    where = report.source if report.live else _plural(len(report.files), "file")
    rules = _plural(len(report.rules), "rule")
    if not report.findings:
        return f"No findings in {where} ({rules})."
    names = {"error": "error", "warn": "warning", "info": "info", "hint": "hint"}
    found = ", ".join(_plural(n, names[s]) for s, n in counts.items() if n)
    failing = sum(n for s, n in counts.items() if at_or_above(s, threshold))
    verdict = f"failing: {failing} at or above {threshold}" if failing else f"passing: none at or above {threshold}"
    return f"{found} in {where} ({rules}); {verdict}."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
