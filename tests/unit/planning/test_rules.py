"""Prune, ignore, rotate and target rules: parsing, matching, selection with dependencies."""

from __future__ import annotations

import pytest

from apimctl import kinds
from apimctl.errors import PlanError
from apimctl.planning.rules import (
    ROTATE_ALL,
    IgnoreRule,
    PruneRule,
    RotateRule,
    check_ignores,
    check_targets,
    ignore_rules,
    parse_target,
    prune_rules,
    rotate_rules,
    select,
    targeted,
)
from apimctl.plans.model import Step


def test_parse_target_splits_at_the_first_colon() -> None:
    assert parse_target("endpoint:Weather/Forecast") == ("endpoint", "Weather/Forecast")
    assert parse_target("service:a:b") == ("service", "a:b")


@pytest.mark.parametrize(("text", "message"), [
    ("service", "expected KIND:NAME"),
    ("service:", "expected KIND:NAME"),
    ("gadget:x", "unknown kind 'gadget'"),
])
def test_parse_target_refuses(text: str, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        parse_target(text)


def test_ignore_rule_key_and_path_split_at_the_last_colon() -> None:
    rule = IgnoreRule.parse("endpoint:Weather/*:cors.maxAge", "tuned by ops")
    assert (rule.kind, rule.key, rule.path, rule.reason) == ("endpoint", "Weather/*", "cors.maxAge", "tuned by ops")
    assert rule.applies("endpoint", "Weather/Forecast")
    assert not rule.applies("endpoint", "Other/Forecast")
    assert not rule.applies("service", "Weather/Forecast")


@pytest.mark.parametrize("text", ["endpoint", "endpoint:x", "endpoint::path", "endpoint:key:"])
def test_ignore_rule_needs_three_parts(text: str) -> None:
    with pytest.raises(PlanError, match="KIND:NAME:FIELD_PATH"):
        IgnoreRule.parse(text, "")


def test_ignore_rules_from_settings_then_cli() -> None:
    settings = {"ignore": [{"target": "role:R*:description", "reason": "HR"}, {"reason": "no target"},
                           "not a mapping"]}
    rules = ignore_rules(settings, ["service:Weather:description"])
    assert [(r.kind, r.key, r.path, r.reason) for r in rules] == [
        ("role", "R*", "description", "HR"), ("service", "Weather", "description", "--ignore")]
    assert ignore_rules({}, []) == []


def test_rotate_rules_match_every_part_by_pattern() -> None:
    everything = RotateRule.parse(ROTATE_ALL)
    assert everything.applies("endpoint", "W/F", "systemDomainAuthentication.password")
    one = RotateRule.parse("endpoint:W/F:systemDomainAuthentication.*")
    assert one.applies("endpoint", "W/F", "systemDomainAuthentication.password")
    assert not one.applies("endpoint", "W/G", "systemDomainAuthentication.password")
    assert [r.path for r in rotate_rules(["endpoint:*:x", ROTATE_ALL])] == ["x", "*"]
    with pytest.raises(PlanError, match="unknown kind"):
        RotateRule.parse("gadget:x:y")
    with pytest.raises(PlanError, match="expected KIND:NAME:FIELD_PATH"):
        RotateRule.parse("endpoint:x")


def test_prune_rule() -> None:
    assert not PruneRule(False).prunes("x")
    assert PruneRule(True).prunes("anything")
    patterns = PruneRule(True, ("tmp-*", "old"))
    assert patterns.prunes("tmp-1") and patterns.prunes("old")
    assert not patterns.prunes("older") and not patterns.prunes("keep")


def test_prune_rules_per_top_level_kind() -> None:
    top = {k.name for k in kinds.TOP_LEVEL}
    assert set(prune_rules({}, False)) == top
    assert not any(r.enabled for r in prune_rules({}, False).values())
    assert all(r == PruneRule(True) for r in prune_rules({}, True).values())
    assert all(r == PruneRule(True) for r in prune_rules({"prune": True}, False).values())
    rules = prune_rules({"prune": {kinds.ROLE.manifest_key: ["tmp-*"], kinds.SERVICE.manifest_key: True,
                                   kinds.PACKAGE.manifest_key: []}}, False)
    assert rules[kinds.ROLE.name] == PruneRule(True, ("tmp-*",))
    assert rules[kinds.SERVICE.name] == PruneRule(True)
    assert rules[kinds.PACKAGE.name] == PruneRule(False, ())  # an empty list prunes nothing
    assert rules[kinds.DOMAIN.name] == PruneRule(False)
    # --prune wins over a pattern list
    assert prune_rules({"prune": {kinds.ROLE.manifest_key: ["tmp-*"]}}, True)[kinds.ROLE.name] == PruneRule(True)


def _steps() -> list[Step]:
    return [
        Step("create", "role", "Partners"),
        Step("create", "service", "Weather", depends_on=("role:Partners",)),
        Step("create", "endpoint", "Weather/Forecast", parent="service:Weather", depends_on=("service:Weather",)),
        Step("update", "service", "a\\/b"),
        Step("update", "endpoint", "a\\/b/E", parent="service:a\\/b"),
        Step("create", "role", "Interns"),
    ]


def test_select_takes_children_and_dependencies_transitively() -> None:
    steps = _steps()
    assert [s.address for s in select(steps, [("endpoint", "Weather/Forecast")])] == [
        "role:Partners", "service:Weather", "endpoint:Weather/Forecast"]
    assert [s.address for s in select(steps, [("service", "Weather")])] == [
        "role:Partners", "service:Weather", "endpoint:Weather/Forecast"]
    assert [s.address for s in select(steps, [("role", "I*")])] == ["role:Interns"]
    assert select(steps, [("role", "Nobody")]) == []


def test_select_finds_children_of_a_name_with_a_slash() -> None:
    assert [s.address for s in select(_steps(), [("service", "a\\/b")])] == [
        "service:a\\/b", "endpoint:a\\/b/E"]


def test_targeted() -> None:
    assert targeted([("service", "Weather")], "endpoint", "Weather/Forecast")
    assert targeted([("endpoint", "Weather/*")], "endpoint", "Weather/Forecast")
    assert not targeted([("service", "Weather")], "endpoint", "Other/Forecast")
    assert not targeted([("role", "Weather")], "endpoint", "Weather/Forecast")


def test_check_targets() -> None:
    known = {("service", "Weather"), ("role", "Partners")}
    check_targets([("service", "Weather"), ("role", "Part*")], known)
    with pytest.raises(PlanError, match=r"matches no declared or live object$"):
        check_targets([("service", "Nothing")], known)
    with pytest.raises(PlanError, match=r"inside a name, / is written \\/"):
        check_targets([("service", "a/b")], known)


def test_a_mistyped_target_or_ignore_names_the_closest_object() -> None:
    known = {("service", "Weather"), ("endpoint", "Weather/Forecast"), ("role", "Partners")}
    with pytest.raises(PlanError, match=r"\(did you mean 'endpoint:Weather/Forecast'\?\)"):
        check_targets([("endpoint", "Weather/Forcast")], known)
    with pytest.raises(PlanError, match=r"\(did you mean 'role:Partners'\?\)"):
        check_targets([("service", "Partner")], known)  # no close service: any kind
    with pytest.raises(PlanError, match=r"unknown kind 'servce' \(did you mean 'service'\?\)"):
        parse_target("servce:Weather")
    with pytest.raises(PlanError, match=r"did you mean 'endpoint:Weather/Forecast'"):
        check_ignores([IgnoreRule.parse("endpoint:Wether/Forecast:cors", "--ignore")], known)
    with pytest.raises(PlanError, match=r"no field 'cros' \(did you mean 'cors'\?\)"):
        check_ignores([IgnoreRule.parse("endpoint:Weather/Forecast:cros.maxAge", "--ignore")], known)
