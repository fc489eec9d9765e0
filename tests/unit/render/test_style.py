"""Helpers shared by the renderers (``apimctl.render.style``)."""

from __future__ import annotations

import pytest

from apimctl.plans.model import Change, Plan, Step
from apimctl.render.style import (
    SENSITIVE,
    Redactor,
    field_lines,
    format_value,
    is_risky_field,
    safe_target,
)


@pytest.mark.parametrize(("target", "shown"), [
    ("https://user:pw@api.example.com/v3/rest?access_token=x#f", "https://api.example.com/v3/rest"),
    ("http://127.0.0.1:8080/v3/rest", "http://127.0.0.1:8080/v3/rest"),
    ("http://[::1]:9000/v3", "http://[::1]:9000/v3"),
    ("embedded (.apimctl/local.db)", "embedded (.apimctl/local.db)"),
    ("http://host:notaport/x", "(unreadable address)"),
    ("", ""),
])
def test_safe_target(target: str, shown: str) -> None:
    assert safe_target(target) == shown


@pytest.mark.parametrize(("kind", "path", "risky"), [
    ("plan", "rateLimitCeiling", True),
    ("plan", "rateLimitPeriod", True),
    ("plan", "qpsLimitExempt", True),
    ("plan", "rateLimitKeyOverrideAllowed", True),
    ("plan", "description", False),
    ("plan", "services", False),
    ("service", "qpsLimitOverall", True),
    ("service", "securityProfile.oauth.qpsLimitCeiling", True),
    ("service", "securityProfile.oauth.rateLimitCeiling", True),
    ("service", "securityProfile.oauth.refreshTokenTtl", False),
    ("endpoint", "rateLimitCeiling", False),
])
def test_is_risky_field(kind: str, path: str, risky: bool) -> None:
    assert is_risky_field(kind, path) is risky


def test_format_value() -> None:
    assert format_value("a\"b") == '"a\\"b"'
    assert format_value(None) == "null"
    assert format_value([1, True]) == "[1, true]"
    assert format_value({"k": "é"}) == '{"k": "é"}'
    assert format_value(SENSITIVE) == "(sensitive)"
    assert format_value({"password": SENSITIVE}) == '{"password": "(sensitive)"}'


def test_redactor_sources_of_secrecy() -> None:
    plan = Plan(
        steps=[Step("update", "service", "S", id="s", changes=(Change("oauth.key", None, None, sensitive=True),))],
        secret_values={"service:T#custom.token": "tok-123456", "service:U#x": "ab"},
    )
    r = Redactor(plan)
    assert r.is_secret("endpoint:W/F", "systemDomainCredentialSecret")  # kind registry
    assert r.is_secret("endpoint:W/F", "systemDomainAuthentication.password")
    assert not r.is_secret("endpoint:W/F", "systemDomainAuthentication.username")
    assert r.is_secret("service:S", "oauth.key")  # marked sensitive by the planner
    assert r.is_secret("service:S", "oauth.key.inner")
    assert not r.is_secret("service:S", "oauth.keyring")
    assert r.is_secret("service:T", "custom.token")  # has a resolved value
    assert r.is_secret("package:P", "nested.password")  # by name
    assert r.leaks("tok-123456") and r.leaks("x tok-123456 y")
    assert r.leaks("ab") and not r.leaks("abc")  # short values only when whole
    assert r.text("a tok-123456 b") == "a (sensitive) b"
    assert r.value("service:T", "desc", {"k": ["tok-123456", 1]}) == {"k": [SENSITIVE, 1]}


def test_field_lines_for_each_action() -> None:
    r = Redactor(Plan())
    create = Step("create", "service", "S", desired={"name": "S", "cache": {"cacheTtl": 5}, "eav": {}})
    assert [(f.symbol, f.path, f.after) for f in field_lines(create, r)] == [
        ("+", "name", "S"), ("+", "cache.cacheTtl", 5), ("+", "eav", {})]
    update = Step("update", "service", "S", id="s", changes=(
        Change("a", None, 1), Change("b", 1, None), Change("c", 1, 2), Change("d", None, None, sensitive=True)))
    assert [(f.symbol, f.sensitive) for f in field_lines(update, r)] == [
        ("+", False), ("-", False), ("~", False), ("~", True)]
    assert field_lines(Step("delete", "service", "S", id="s"), r) == []
