"""Linting manifests: findings located in the source files, field forms, message templates,
overrides by file glob, inline disables, ``settings.lint``, overlays, and secrets kept out."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.errors import ManifestError
from apimctl.lint import RulesetError

from .lintkit import WEATHER, by_rule, lint, rules_of, write

RULES = """\
rules:
  endpoint-path-versioned:
    description: Public paths start with a version
    severity: error
    given: $.services[*].endpoints[*]
    then: {field: requestPathAlias, function: pattern, functionOptions: {match: "^/v[0-9]+/"}}
  endpoint-has-methods:
    given: $.services[*].endpoints[*]
    then: {field: supportedHttpMethods, function: defined}
"""

ENDPOINTS = """\
domains: [example.com]
services:
  - name: Catalog
    endpoints:
      - name: Items
        requestPathAlias: /items
        trafficManagerDomain: api.example.com
        supportedHttpMethods: [get]
      - name: Orders
        requestPathAlias: /v1/orders
        trafficManagerDomain: api.example.com
"""


def test_findings_are_located_at_the_field_or_its_object(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", RULES)
    path = write(tmp_path, "m/catalog.yaml", ENDPOINTS)
    report = lint(tmp_path, "m", rulesets=("rules.yaml",))
    assert [str(f) for f in report.findings] == [
        f"{path}:6:9: error endpoint-path-versioned: Public paths start with a version: "
        "requestPathAlias must match the pattern '^/v[0-9]+/'",
        f"{path}:9:9: warn endpoint-has-methods: supportedHttpMethods must be defined",  # missing: at its object
    ]
    first, second = report.findings
    assert (first.address, first.field) == ("endpoint:Catalog/Items", "requestPathAlias")
    assert first.path == "services[0].endpoints[0].requestPathAlias"
    assert (second.address, second.field, second.line) == ("endpoint:Catalog/Orders", "supportedHttpMethods", 9)
    assert report.files == [str(path)] and not report.live
    assert [r.name for r in report.rules] == ["endpoint-path-versioned", "endpoint-has-methods"]


def test_field_forms_and_message_templates(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", """\
        rules:
          dotted:
            given: $.services[*].endpoints[*]
            then: {field: cors.maxAge, function: length, functionOptions: {max: 60}}
            message: "{{address}} {{property}}={{value}} at {{path}}: {{error}} ({{description}})"
            description: short pre-flight caching
          keys:
            given: $.services[*].endpoints[*].cors
            then: {field: "@key", function: pattern, functionOptions: {notMatch: "^cookiesAllowed$"}}
          jsonpath-field:
            given: $.services[*].endpoints[*]
            then: {field: "$.cors.domainsAllowed[*]", function: pattern, functionOptions: {match: "^https://"}}
          whole-node:
            given: $.services[*].endpoints[*].cors
            then: {function: xor, functionOptions: {properties: [allDomainsEnabled, domainsAllowed]}}
        """)
    path = write(tmp_path, "m.yaml", """\
        domains: [example.com]
        services:
          - name: Catalog
            endpoints:
              - name: Items
                requestPathAlias: /v1/items
                trafficManagerDomain: api.example.com
                cors:
                  maxAge: 600
                  cookiesAllowed: false
                  allDomainsEnabled: false
                  domainsAllowed: ["https://a.example.com", "http://b.example.com"]
        """)
    report = lint(tmp_path, "m.yaml", rulesets=("rules.yaml",))
    found = {f.rule: f for f in report.findings}
    assert found["dotted"].message == ("endpoint:Catalog/Items maxAge=600 at services[0].endpoints[0].cors.maxAge: "
                                       "cors.maxAge must be at most 60 (it is 600) (short pre-flight caching)")
    assert (found["dotted"].line, found["dotted"].col) == (9, 11)
    assert found["keys"].line == 10 and found["keys"].field == "cors.cookiesAllowed"
    assert found["jsonpath-field"].field == "cors.domainsAllowed[1]"
    assert found["jsonpath-field"].message == "cors.domainsAllowed[1] must match the pattern '^https://'"
    assert found["whole-node"].field == "cors" and "(allDomainsEnabled and domainsAllowed are)" in found["whole-node"].message
    assert str(path) == found["whole-node"].file


def test_overrides_by_file_glob(tmp_path: Path) -> None:
    write(tmp_path, "lint/rules.yaml", f"""\
        {RULES.replace(chr(10), chr(10) + '        ')}
        overrides:
          - files: ["../m/sandbox-*.yaml"]
            rules:
              endpoint-path-versioned: "off"
              endpoint-has-methods: error
          - files: ["**/legacy/*.yaml"]
            rules:
              legacy-has-description:
                given: $.services[*]
                then: {{field: description, function: truthy}}
        """)
    write(tmp_path, "m/main.yaml", ENDPOINTS)
    write(tmp_path, "m/sandbox-a.yaml", ENDPOINTS.replace("Catalog", "Sandbox").replace("domains: [example.com]\n", ""))
    report = lint(tmp_path, "m", rulesets=("lint/rules.yaml",))
    seen = {(Path(f.file).name, f.rule, f.severity) for f in report.findings}
    assert seen == {("main.yaml", "endpoint-path-versioned", "error"), ("main.yaml", "endpoint-has-methods", "warn"),
                    ("sandbox-a.yaml", "endpoint-has-methods", "error")}
    write(tmp_path, "legacy/old.yaml", "services:\n  - name: Old\n")
    report = lint(tmp_path, "m", "legacy", rulesets=("lint/rules.yaml",))
    [legacy] = by_rule(report, "legacy-has-description")
    assert legacy.file.endswith("legacy/old.yaml") and legacy.address == "service:Old"


def test_inline_disable_next_line(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", RULES)
    write(tmp_path, "m.yaml", """\
        domains: [example.com]
        services:
          - name: Catalog
            endpoints:
              # apimctl-lint-disable-next-line endpoint-has-methods
              - name: Items
                requestPathAlias: /items
                trafficManagerDomain: api.example.com
              - name: Orders
                # the legacy path stays until v2 ships
                # apimctl-lint-disable-next-line endpoint-has-methods, endpoint-path-versioned
                # (ticket API-123)
                requestPathAlias: /orders
                trafficManagerDomain: api.example.com
              - name: Stock
                # apimctl-lint-disable-next-line endpoint-path-versioned

                requestPathAlias: /stock
                trafficManagerDomain: api.example.com
              # apimctl-lint-disable-next-line
              - name: Prices
                # apimctl-lint-disable-next-line
                requestPathAlias: /prices
                trafficManagerDomain: api.example.com
        """)
    report = lint(tmp_path, "m.yaml", rulesets=("rules.yaml",))
    left = [(f.address, f.rule, f.line) for f in report.findings]
    assert left == [
        ("endpoint:Catalog/Items", "endpoint-path-versioned", 7),  # the directive named the other rule
        ("endpoint:Catalog/Orders", "endpoint-has-methods", 9),     # located at the item, not the path line
        ("endpoint:Catalog/Stock", "endpoint-has-methods", 15),
        ("endpoint:Catalog/Stock", "endpoint-path-versioned", 18),  # a blank line breaks the directive
    ]  # Prices: a directive without names silences every rule on its next line


def test_settings_lint_disables_rules_and_names_rulesets(tmp_path: Path) -> None:
    write(tmp_path, "conf/team.yaml", RULES)
    write(tmp_path, "m/catalog.yaml", ENDPOINTS)
    write(tmp_path, "m/settings.yaml", """\
        settings:
          lint:
            rulesets: [../conf/team.yaml]
            disable: [endpoint-has-methods, no-such-rule]
        """)
    report = lint(tmp_path, "m")
    assert rules_of(report) == ["endpoint-path-versioned"]
    assert [r.name for r in report.rules] == ["endpoint-path-versioned"]
    assert report.warnings == ["settings.lint.disable: no rule is named 'no-such-rule'"]
    # --ruleset wins over settings.lint.rulesets; disable still applies
    report = lint(tmp_path, "m", rulesets=("apimctl:recommended",))
    assert "endpoint-path-versioned" not in rules_of(report)


def test_settings_lint_is_checked_by_the_schema(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", WEATHER + "settings:\n  lint:\n    disabled: [x]\n")
    with pytest.raises(ManifestError) as caught:
        lint(tmp_path, "m.yaml")
    assert "settings.lint" in str(caught.value) and "disabled" in str(caught.value)


def test_default_is_the_recommended_ruleset(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", WEATHER)
    report = lint(tmp_path, "m.yaml")
    assert report.findings == []
    assert len(report.rules) == 13


def test_overlay_values_are_located_in_the_overlay(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", """\
        rules:
          short-timeouts:
            given: $.services[*].endpoints[*]
            then: {field: connectionTimeoutForSystemDomainResponse, function: length, functionOptions: {max: 10}}
        """)
    write(tmp_path, "base/m.yaml", WEATHER)
    overlay = write(tmp_path, "prod/m.yaml", """\
        services:
          - name: Weather
            endpoints:
              - name: Forecast
                connectionTimeoutForSystemDomainResponse: 60
        """)
    report = lint(tmp_path, "base", rulesets=("rules.yaml",), overlays=("prod",))
    [finding] = report.findings
    assert (finding.file, finding.line, finding.col) == (str(overlay), 5, 9)


def test_secrets_never_reach_rules_or_messages(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", """\
        rules:
          secret-is-a-reference:
            given: $.services[*].endpoints[*]
            then: {field: systemDomainCredentialSecret, function: pattern, functionOptions: {match: "^[$][{]"}}
            message: "{{value}}: {{error}}"
          show-everything:
            given: $.services[*].endpoints[*]
            then: {function: schema, functionOptions: {schema: {not: {required: [systemDomainCredentialSecret]}}}}
        """)
    text = WEATHER.replace("        errorSet: JSON errors\n",
                           "        errorSet: JSON errors\n        systemDomainCredentialSecret: ${FC_SECRET}\n")
    write(tmp_path, "m.yaml", text)
    report = lint(tmp_path, "m.yaml", rulesets=("rules.yaml",), env={"FC_SECRET": "s3cr3t-value-91"})
    assert rules_of(report) == ["show-everything"]
    assert "s3cr3t-value-91" not in repr(report)
    write(tmp_path, "m.yaml", text.replace("${FC_SECRET}", "literal-s3cr3t-17"))
    report = lint(tmp_path, "m.yaml", rulesets=("rules.yaml",))
    assert "literal-s3cr3t-17" not in repr(report)
    [ref] = by_rule(report, "secret-is-a-reference")
    assert ref.message.startswith('"(sensitive)": systemDomainCredentialSecret must match')


def test_lint_needs_no_secret_values(tmp_path: Path) -> None:
    text = WEATHER.replace("        errorSet: JSON errors\n",
                           "        errorSet: JSON errors\n        systemDomainCredentialSecret: ${UNSET_SECRET}\n")
    write(tmp_path, "m.yaml", text)
    assert lint(tmp_path, "m.yaml").findings == []


def test_invalid_manifests_and_rulesets_are_errors(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", "services:\n  - name: X\n    qpsLimitOverall: lots\n")
    with pytest.raises(ManifestError) as caught:
        lint(tmp_path, "m.yaml")
    assert "m.yaml:3:" in str(caught.value)
    write(tmp_path, "bad.yaml", "rules: [\n")
    with pytest.raises(RulesetError):  # the ruleset is checked before the manifests
        lint(tmp_path, "m.yaml", rulesets=("bad.yaml",))


def test_every_kind_is_named_by_its_address(tmp_path: Path) -> None:
    write(tmp_path, "rules.yaml", """\
        rules:
          no-x:
            given: ["$.domains[*]", "$.roles[*]", "$.services[*]", "$.services[*].errorSets[*]",
                    "$.services[*].endpoints[*]", "$.packages[*]", "$.packages[*].plans[*]",
                    "$.scheduledMaintenanceEvents[*]"]
            then: {function: schema, functionOptions: {schema: {not: {}}}}
        """)
    write(tmp_path, "m.yaml", WEATHER + """\
roles: [Partners]
scheduledMaintenanceEvents:
  - {name: Upgrade, startDateTime: "2027-01-01T00:00:00Z", endDateTime: "2027-01-01T01:00:00Z"}
settings:
  lint: {disable: []}
""")
    report = lint(tmp_path, "m.yaml", rulesets=("rules.yaml",))
    assert {f.address for f in report.findings} == {
        "domain:example.com", "domain:example.net", "role:Partners", "service:Weather",
        "errorSet:Weather/JSON errors", "endpoint:Weather/Forecast", "package:Partners",
        "plan:Partners/Gold", "maintenanceEvent:Upgrade"}
    assert all(f.field == "" and f.line > 0 for f in report.findings)
