"""The built-in ``apimctl:recommended`` ruleset, rule by rule: a manifest that breaks the rule
is reported at the right object, one that keeps it (or relies on a safe default) is not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from .lintkit import WEATHER, by_rule, lint, write

Doc = dict[str, Any]


def endpoint(doc: Doc) -> Doc:
    result: Doc = doc["services"][0]["endpoints"][0]
    return result


def plan(doc: Doc) -> Doc:
    result: Doc = doc["packages"][0]["plans"][0]
    return result


def window(start: str, end: str) -> Callable[[Doc], None]:
    def add(doc: Doc) -> None:
        doc["scheduledMaintenanceEvents"] = [{"name": "Upgrade", "startDateTime": start, "endDateTime": end,
                                              "endpoints": [{"service": "Weather", "endpoint": "Forecast"}]}]
    return add


# rule, a change that breaks it, the address reported, a change that keeps it
CASES: list[tuple[str, Callable[[Doc], Any], str, Callable[[Doc], Any]]] = [
    ("apimctl-endpoint-ssl-required", lambda d: endpoint(d).pop("inboundSslRequired"),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).pop("publicDomains")),  # not public
    ("apimctl-endpoint-high-security", lambda d: endpoint(d).update(highSecurity=False),
     "endpoint:Weather/Forecast", lambda d: None),
    ("apimctl-cors-credentials-any-origin", lambda d: endpoint(d).update(cors={"cookiesAllowed": True}),
     "endpoint:Weather/Forecast",
     lambda d: endpoint(d).update(cors={"cookiesAllowed": True, "allDomainsEnabled": False,
                                        "domainsAllowed": ["https://app.example.com"]})),
    ("apimctl-cors-credentials-any-origin",
     lambda d: endpoint(d).update(cors={"cookiesAllowed": True, "allDomainsEnabled": False, "domainsAllowed": ["*"]}),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(cors={"allDomainsEnabled": True})),  # no cookies
    ("apimctl-plan-rate-limit", lambda d: plan(d).pop("rateLimitCeiling"), "plan:Partners/Gold",
     lambda d: plan(d).update(rateLimitPeriod="hour")),
    ("apimctl-plan-rate-limit", lambda d: plan(d).update(rateLimitExempt=True), "plan:Partners/Gold",
     lambda d: plan(d).update(rateLimitExempt=False)),
    ("apimctl-plan-qps-limit", lambda d: plan(d).update(qpsLimitCeiling=0), "plan:Partners/Gold",
     lambda d: None),
    ("apimctl-public-service-error-set", lambda d: d["services"][0].pop("errorSets") and endpoint(d).pop("errorSet"),
     "service:Weather", lambda d: None),
    ("apimctl-public-service-error-set", lambda d: d["services"][0]["errorSets"][0].pop("errorMessages"),
     "service:Weather", lambda d: None),
    ("apimctl-backend-timeouts", lambda d: endpoint(d).update(connectionTimeoutForSystemDomainResponse=120),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(connectionTimeoutForSystemDomainResponse=60)),
    ("apimctl-backend-timeouts", lambda d: endpoint(d).update(connectionTimeoutForSystemDomainRequest=20),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(connectionTimeoutForSystemDomainRequest=10)),
    ("apimctl-backend-redirects", lambda d: endpoint(d).update(numberOfHttpRedirectsToFollow=5),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(numberOfHttpRedirectsToFollow=3)),
    ("apimctl-backend-https", lambda d: endpoint(d).update(outboundTransportProtocol="http"),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(outboundTransportProtocol="use-inbound")),
    ("apimctl-no-missing-api-key", lambda d: endpoint(d).update(allowMissingApiKey=True),
     "endpoint:Weather/Forecast", lambda d: endpoint(d).update(allowMissingApiKey=False)),
    # lintkit.NOW is 2026-06-01T12:00Z
    ("apimctl-maintenance-in-future", window("2026-05-01T00:00:00Z", "2026-05-01T02:00:00Z"),
     "maintenanceEvent:Upgrade", window("2026-06-01T11:00:00Z", "2026-06-01T13:00:00Z")),
    ("apimctl-maintenance-max-duration", window("2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z"),
     "maintenanceEvent:Upgrade", window("2026-07-01T00:00:00Z", "2026-07-01T12:00:00Z")),
]


def lint_doc(tmp_path: Path, change: Callable[[Doc], Any], rulesets: tuple[str, ...] = ()) -> Any:
    doc = yaml.safe_load(WEATHER)
    change(doc)
    write(tmp_path, "m.yaml", yaml.safe_dump(doc, sort_keys=False))
    return lint(tmp_path, "m.yaml", rulesets=rulesets)


@pytest.mark.parametrize("rule, breaks, address, keeps", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_recommended_rule(tmp_path: Path, rule: str, breaks: Callable[[Doc], Any], address: str,
                          keeps: Callable[[Doc], Any]) -> None:
    report = lint_doc(tmp_path, breaks)
    found = by_rule(report, rule)
    assert found and {f.address for f in found} == {address}, report.findings
    assert all(f.file.endswith("m.yaml") and f.line > 0 for f in found)
    assert by_rule(lint_doc(tmp_path, keeps), rule) == []


def test_every_recommended_rule_has_a_case() -> None:
    from apimctl.lint import RECOMMENDED, load_rulesets

    on = {r.name for r in load_rulesets([RECOMMENDED]).candidates()}
    # the rules on OpenAPI documents (lint --openapi-spec) have theirs in tests/unit/openapi/test_lint.py
    openapi = {"apimctl-openapi-operation-id", "apimctl-openapi-path-covered"}
    # a finding on two endpoints at once: its own test below
    assert on == {c[0] for c in CASES} | openapi | {"apimctl-shared-route"}


def test_endpoints_sharing_a_path_with_other_methods_are_a_warning(tmp_path: Path) -> None:
    """Valid input (SUPPLEMENT §10.10.1: validate accepts it), but worth a warning."""
    def share(d: Doc) -> None:
        d["services"][0]["endpoints"].append({**endpoint(d), "name": "Submit",
                                              "supportedHttpMethods": ["post"]})

    found = by_rule(lint_doc(tmp_path, share), "apimctl-shared-route")
    assert {(f.address, f.severity) for f in found} == {
        ("endpoint:Weather/Forecast", "warn"),
        ("endpoint:Weather/Submit", "warn")}, found
    assert "shared by 2 endpoints" in found[0].message

    def apart(d: Doc) -> None:
        share(d)
        d["services"][0]["endpoints"][-1]["requestPathAlias"] = "/v2/submit"

    assert by_rule(lint_doc(tmp_path, apart), "apimctl-shared-route") == []


def test_the_weather_example_itself(tmp_path: Path) -> None:
    """The DESIGN.md example lacks inboundSslRequired and highSecurity (platform defaults)."""
    report = lint(Path(__file__).parents[3] / "examples", "weather")
    assert [(f.rule, f.severity, f.address) for f in report.findings] == [
        ("apimctl-endpoint-ssl-required", "error", "endpoint:Weather/Forecast"),
        ("apimctl-endpoint-high-security", "warn", "endpoint:Weather/Forecast"),
    ]


def test_rules_off_by_default_run_with_all(tmp_path: Path) -> None:
    write(tmp_path, "all.yaml", "extends: [[apimctl:recommended, all]]\n")
    report = lint_doc(tmp_path, lambda d: endpoint(d).update(requestPathAlias="/v2/GetForecast"),
                      rulesets=("all.yaml",))
    assert {f.rule for f in report.findings} == {"apimctl-service-description", "apimctl-path-alias-lowercase"}
    assert {f.severity for f in report.findings} == {"hint"}
