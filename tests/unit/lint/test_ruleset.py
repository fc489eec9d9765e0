"""Loading rulesets: the built-in one, ``extends`` (files, built-ins, modes), severity
changes, ``overrides`` parsing, globs, and bad rulesets reported at ``file:line:col``."""

from __future__ import annotations

from pathlib import Path

import pytest

from apimctl.lint import RECOMMENDED, RulesetError, load_rulesets
from apimctl.lint.loading import builtin_text
from apimctl.lint.ruleset import glob_pattern

from .lintkit import write

EXPECTED_RECOMMENDED = {
    "apimctl-endpoint-ssl-required", "apimctl-endpoint-high-security",
    "apimctl-cors-credentials-any-origin", "apimctl-plan-rate-limit", "apimctl-plan-qps-limit",
    "apimctl-public-service-error-set", "apimctl-backend-timeouts", "apimctl-backend-redirects",
    "apimctl-backend-https", "apimctl-no-missing-api-key", "apimctl-maintenance-in-future",
    "apimctl-maintenance-max-duration",
    "apimctl-openapi-operation-id", "apimctl-openapi-path-covered", "apimctl-shared-route",
}
OFF_BY_DEFAULT = {"apimctl-service-description", "apimctl-path-alias-lowercase"}

def errors_of(*refs: str, base: str = ".") -> list[str]:
    with pytest.raises(RulesetError) as caught:
        load_rulesets(list(refs), base)
    return [str(p) for p in caught.value.problems]


def test_the_recommended_ruleset_documents_every_rule() -> None:
    ruleset = load_rulesets([RECOMMENDED])
    on = {r.name for r in ruleset.candidates()}
    assert on == EXPECTED_RECOMMENDED
    assert set(ruleset.rules) == EXPECTED_RECOMMENDED | OFF_BY_DEFAULT
    for rule in ruleset.rules.values():
        assert rule.description and len(rule.rationale) > 80, rule.name  # each says why
        assert rule.origin == RECOMMENDED
    assert ruleset.rules["apimctl-endpoint-ssl-required"].severity == "error"
    assert "PT12H" in builtin_text(RECOMMENDED)


def test_extends_a_file_and_changes_severities(tmp_path: Path) -> None:
    write(tmp_path, "shared/base.yaml", """\
        rules:
          has-description:
            given: $.services[*]
            then: {field: description, function: truthy}
        """)
    write(tmp_path, "team.yaml", """\
        extends: [apimctl:recommended, ./shared/base.yaml]
        rules:
          apimctl-endpoint-high-security: error
          apimctl-backend-https: off
          apimctl-plan-qps-limit: {severity: info, message: "no QPS limit: {{error}}"}
          has-description: false
        """)
    ruleset = load_rulesets([str(tmp_path / "team.yaml")])
    rules = ruleset.rules
    assert rules["apimctl-endpoint-high-security"].severity == "error"
    assert not rules["apimctl-backend-https"].enabled
    assert rules["apimctl-plan-qps-limit"].severity == "info"
    assert rules["apimctl-plan-qps-limit"].message == "no QPS limit: {{error}}"
    assert not rules["has-description"].enabled
    assert rules["has-description"].origin == str(tmp_path / "shared" / "base.yaml")
    assert ruleset.sources == [str(tmp_path / "team.yaml"), RECOMMENDED, str(tmp_path / "shared" / "base.yaml")]


def test_extends_modes_all_and_off(tmp_path: Path) -> None:
    write(tmp_path, "all.yaml", "extends: [[apimctl:recommended, all]]\n")
    assert {r.name for r in load_rulesets([str(tmp_path / "all.yaml")]).candidates()} == \
        EXPECTED_RECOMMENDED | OFF_BY_DEFAULT
    write(tmp_path, "off.yaml", """\
        extends: [[apimctl:recommended, "off"]]
        rules:
          apimctl-endpoint-ssl-required: true
          apimctl-service-description: warn
        """)
    ruleset = load_rulesets([str(tmp_path / "off.yaml")])
    assert {r.name for r in ruleset.candidates()} == {"apimctl-endpoint-ssl-required", "apimctl-service-description"}
    assert ruleset.rules["apimctl-endpoint-ssl-required"].severity == "error"  # true keeps its own
    assert ruleset.rules["apimctl-service-description"].severity == "warn"


def test_a_redefined_rule_replaces_the_extended_one(tmp_path: Path) -> None:
    write(tmp_path, "r.yaml", """\
        extends: apimctl:recommended
        rules:
          apimctl-backend-redirects:
            description: At most one redirect
            severity: error
            given: $.services[*].endpoints[*]
            then: {field: numberOfHttpRedirectsToFollow, function: length, functionOptions: {max: 1}}
        """)
    rule = load_rulesets([str(tmp_path / "r.yaml")]).rules["apimctl-backend-redirects"]
    assert rule.description == "At most one redirect" and rule.severity == "error"
    assert rule.then[0].options == {"max": 1}


def test_later_rulesets_win(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "extends: apimctl:recommended\nrules:\n  apimctl-backend-https: error\n")
    write(tmp_path, "b.yaml", "extends: apimctl:recommended\nrules:\n  apimctl-backend-https: hint\n")
    assert load_rulesets([str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]).rules[
        "apimctl-backend-https"].severity == "hint"
    assert load_rulesets([str(tmp_path / "b.yaml"), str(tmp_path / "a.yaml")]).rules[
        "apimctl-backend-https"].severity == "error"


def test_spectral_severity_numbers_and_defaults(tmp_path: Path) -> None:
    write(tmp_path, "r.yaml", """\
        rules:
          zero: {severity: 0, given: "$.services[*]", then: {function: defined}}
          three: {severity: 3, given: "$.services[*]", then: {function: defined}}
          default: {given: "$.services[*]", then: {function: defined}}
        """)
    rules = load_rulesets([str(tmp_path / "r.yaml")]).rules
    assert (rules["zero"].severity, rules["three"].severity, rules["default"].severity) == ("error", "hint", "warn")


def test_overrides_are_parsed_relative_to_their_ruleset(tmp_path: Path) -> None:
    write(tmp_path, "lint/rules.yaml", """\
        extends: apimctl:recommended
        overrides:
          - files: ["../manifests/sandbox/**"]
            rules:
              apimctl-no-missing-api-key: "off"
              apimctl-endpoint-ssl-required: warn
          - files: "*.dev.yaml"
            rules:
              dev-only:
                given: $.services[*]
                then: {field: description, function: truthy}
        """)
    ruleset = load_rulesets([str(tmp_path / "lint" / "rules.yaml")])
    ssl = ruleset.rules["apimctl-endpoint-ssl-required"]
    sandbox = str(tmp_path / "manifests" / "sandbox" / "a.yaml")
    elsewhere = str(tmp_path / "manifests" / "prod" / "a.yaml")
    assert ruleset.severity_for(ssl, sandbox) == "warn"
    assert ruleset.severity_for(ssl, elsewhere) == "error"
    assert ruleset.severity_for(ssl, "") == "error"  # live objects have no file
    assert ruleset.severity_for(ruleset.rules["apimctl-no-missing-api-key"], sandbox) is None
    dev = ruleset.rules["dev-only"]
    assert not dev.enabled and dev in ruleset.candidates()
    assert ruleset.severity_for(dev, str(tmp_path / "deep" / "x.dev.yaml")) == "warn"
    assert ruleset.severity_for(dev, str(tmp_path / "x.yaml")) is None


@pytest.mark.parametrize("pattern, path, hit", [
    ("sandbox/**", "sandbox/a/b.yaml", True),
    ("sandbox/**", "other/sandbox/a.yaml", False),
    ("**/sandbox/*.yaml", "other/sandbox/a.yaml", True),
    ("**/sandbox/*.yaml", "sandbox/a.yaml", True),
    ("sandbox/*.yaml", "sandbox/a/b.yaml", False),
    ("*.dev.yaml", "deep/in/x.dev.yaml", True),
    ("sandbox/", "sandbox/x.yaml", True),
    ("./team-[ab].yaml", "team-a.yaml", True),
    ("team-[!ab].yaml", "team-a.yaml", False),
    ("te?m.yaml", "team.yaml", True),
])
def test_globs(pattern: str, path: str, hit: bool) -> None:
    assert bool(glob_pattern(pattern).fullmatch(path)) is hit


# --- bad rulesets: every problem, each located ------------------------------------------------


def test_unknown_function_is_located_with_a_suggestion(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", """\
        rules:
          r1:
            given: $.services[*]
            then:
              function: truthyy
        """)
    [error] = errors_of(str(path))
    assert error.startswith(f"{path}:5:17: rules.r1.then.function: unknown function 'truthyy' (did you mean 'truthy'?)")


def test_invalid_jsonpath_points_at_the_character(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", """\
        rules:
          plain:
            given: $.services[?@.name ==]
            then: {function: defined}
          quoted:
            given: ["$.ok[*]", "$.services[*"]
            then: {field: "$.x[", function: defined}
        """)
    errors = errors_of(str(path))
    assert errors[0].startswith(f"{path}:3:33: rules.plain.given: invalid JSONPath '$.services[?@.name ==]'")
    assert errors[1].startswith(f"{path}:6:37: rules.quoted.given[1]: invalid JSONPath '$.services[*'")
    assert errors[2].startswith(f"{path}:7:24: rules.quoted.then.field: invalid JSONPath '$.x['")
    assert len(errors) == 3


def test_bad_yaml_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", "rules:\n  r1:\n    given: [$.a\n    then: x\n")
    [error] = errors_of(str(path))
    assert error.startswith(f"{path}:4:") and "invalid YAML" in error


@pytest.mark.parametrize("text, expected", [
    ("", "1:1: a ruleset is a mapping with rules, extends and overrides; this one is empty"),
    ("- a\n", "1:1: a ruleset is a mapping with rules, extends and overrides; this one is a list"),
    ("rules: {}\nrule: {}\n", "2:1: rule: unknown key 'rule' (did you mean 'rules'?)"),
    ("rules:\n  a: {given: $.x, then: {function: truthy}}\n  a: {}\n", "3:3: duplicate key 'a' (first at"),
    ("rules:\n  a: {given: $.x}\n", "2:3: rules.a: rule 'a' has no 'then'"),
    ("rules:\n  a: {given: $.x, then: {function: truthy}, severity: fatal}\n",
     "2:55: rules.a.severity: unknown severity 'fatal'"),
    ("rules:\n  a: {given: $.x, then: {function: truthy, functionOptions: {x: 1}}}\n",
     "2:44: rules.a.then.functionOptions: function 'truthy' takes no functionOptions"),
    ("rules:\n  a: {given: $.x, then: {function: enumeration}}\n",
     "2:19: rules.a.then: enumeration: 'values' is a required property"),
    ("rules:\n  a: {given: $.x, then: {function: length, functionOptions: {mx: 1}}}\n",
     "2:61: rules.a.then.functionOptions: length: Additional properties are not allowed ('mx' was unexpected)"),
    ("rules:\n  a: {given: $.x, then: {function: pattern, functionOptions: {match: '[a'}}}\n",
     "2:70: rules.a.then.functionOptions.match: pattern: invalid regular expression '[a'"),
    ("rules:\n  a: {given: $.x, then: {funktion: truthy}}\n", "2:26: rules.a.then.funktion: unknown key 'funktion'"),
    ("rules:\n  nope: warn\n", "2:3: rules.nope: rule 'nope' is not defined here or in the rulesets this one extends"),
    ("extends: apimctl:strict\n", "1:10: unknown built-in ruleset 'apimctl:strict'"),
    ("extends: [[apimctl:recommended, some]]\n", "1:11: extends[0]: expected a ruleset file or built-in name"),
    ("extends: missing.yaml\n", "1:10: ruleset "),
    ("overrides:\n  - files: []\n    rules: {apimctl-x: off}\n", "2:12: overrides[0].files: must be a list of file globs"),
    ("extends: apimctl:recommended\noverrides:\n  - files: [a]\n    rules:\n      apimctl-backend-https: {message: x}\n",
     "5:31: overrides[0].rules.apimctl-backend-https.message: unknown key 'message' (an override may only change the severity)"),
])
def test_bad_rulesets(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, "r.yaml", text)
    errors = errors_of(str(path))
    assert any(e.startswith(f"{path}:{expected}") for e in errors), errors


def test_every_problem_is_reported_not_the_first(tmp_path: Path) -> None:
    path = write(tmp_path, "r.yaml", """\
        rules:
          a: {given: "$[", then: {function: truthy}}
          b: {given: $.x, then: {function: nope}}
          c: {given: $.x, then: {function: truthy}, severity: loud}
        """)
    assert len(errors_of(str(path))) == 3


def test_extends_cycle_and_missing_files(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "extends: ./b.yaml\n")
    write(tmp_path, "b.yaml", "extends: [x.yaml, a.yaml]\n")
    errors = errors_of(str(tmp_path / "a.yaml"))
    assert errors[0] == f"{tmp_path / 'b.yaml'}:1:11: ruleset {tmp_path / 'x.yaml'}: no such file"
    assert errors[1].startswith(f"{tmp_path / 'b.yaml'}:1:19: rulesets extend each other in a cycle: ")
    assert errors_of(str(tmp_path / "none.yaml")) == [f"{tmp_path / 'none.yaml'}: no such file"]
    assert errors_of(str(tmp_path)) == [f"{tmp_path}: a directory, not a ruleset file"]
