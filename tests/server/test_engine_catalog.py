"""Catalog-driven building, merging and projection (no HTTP)."""

from __future__ import annotations

from typing import Any

import pytest

from apimctl.server import catalog as c
from apimctl.server.query import Projector, parse_fields
from apimctl.server.validation import WriteCtx, build, format_ts, merge, parse_ts

ENDPOINT = {"name": "E", "requestPathAlias": "/e", "trafficManagerDomain": "api.example.com"}


def built(resource: str, body: dict[str, Any]) -> tuple[dict[str, Any], WriteCtx]:
    ctx = WriteCtx()
    return build(c.resource(resource), body, "", ctx), ctx


def test_endpoint_defaults_follow_the_supplement() -> None:
    ep, ctx = built("Endpoint", dict(ENDPOINT))
    assert ctx.problems == []
    assert ep["connectionTimeoutForSystemDomainRequest"] == 2
    assert ep["connectionTimeoutForSystemDomainResponse"] == 5
    assert ep["apiKeyValueLocations"] == ["request-parameters"]
    assert ep["supportedHttpMethods"] == ["get"]
    assert ep["cors"]["allDomainsEnabled"] is True and ep["cors"]["maxAge"] == 0
    assert ep["cache"]["cacheTtlOverride"] == 0
    assert ep["processor"] == {"adapter": "", "preProcessEnabled": False, "postProcessEnabled": False,
                               "preInputs": {}, "postInputs": {}}
    assert ep["systemDomainAuthentication"] is None
    assert ep["customRequestAuthenticationAdapter"] is None
    assert len(ep["id"]) == 24 and set(ep["id"]) <= set(c.SHORT_ID_ALPHABET)


def test_required_fields_and_types_are_reported_with_their_paths() -> None:
    ctx = WriteCtx()
    build(c.resource("Service"), {"endpoints": [{"name": 5, "connectionTimeoutForSystemDomainRequest": 3}]}, "", ctx)
    problems = {(p["property"], p["message"].split(" ")[0]) for p in ctx.problems}
    assert ("name", "is") in problems
    assert ("endpoints[0].name", "must") in problems
    assert ("endpoints[0].requestPathAlias", "is") in problems
    assert ("endpoints[0].connectionTimeoutForSystemDomainRequest", "must") in problems


@pytest.mark.parametrize(("field", "value"), [
    ("supportedHttpMethods", ["get", "fetch"]), ("requestProtocol", "graphql"), ("maxAge", None),
    ("allowMissingApiKey", "yes"), ("numberOfHttpRedirectsToFollow", True), ("publicDomains", "x"),
])
def test_bad_values_are_problems(field: str, value: Any) -> None:
    body = dict(ENDPOINT)
    if field == "maxAge":
        body["cors"] = {"maxAge": value}
    else:
        body[field] = value
    _, ctx = built("Endpoint", body)
    assert ctx.problems, field


def test_enum_array_accepts_a_single_string() -> None:
    ep, ctx = built("Endpoint", {**ENDPOINT, "apiKeyValueLocations": "request-header"})
    assert ctx.problems == [] and ep["apiKeyValueLocations"] == ["request-header"]


def test_oauth_clears_the_default_key_locations_but_rejects_explicit_ones() -> None:
    ep, ctx = built("Endpoint", {**ENDPOINT, "requestAuthenticationType": "oauth"})
    assert ctx.problems == [] and ep["apiKeyValueLocations"] == []
    _, ctx = built("Endpoint", {**ENDPOINT, "requestAuthenticationType": "oauth",
                                "apiKeyValueLocations": ["request-header"]})
    assert [p["property"] for p in ctx.problems] == ["apiKeyValueLocations"]
    _, ctx = built("Endpoint", {**ENDPOINT, "oauthGrantTypes": ["password"]})
    assert [p["property"] for p in ctx.problems] == ["oauthGrantTypes"]


def test_merge_updates_listed_children_creates_new_ones_and_keeps_the_rest() -> None:
    service, _ = built("Service", {"name": "S", "endpoints": [dict(ENDPOINT, name="A"), dict(ENDPOINT, name="B")]})
    a, b = service["endpoints"]
    ctx = WriteCtx()
    merge(c.resource("Service"), service, {"endpoints": [
        {"id": a["id"], "cors": {"maxAge": 9}}, dict(ENDPOINT, name="C")]}, "", ctx)
    assert ctx.problems == []
    assert [e["name"] for e in service["endpoints"]] == ["A", "B", "C"]
    assert a["cors"]["maxAge"] == 9 and a["cors"]["allDomainsEnabled"] is True  # other cors fields kept
    merge(c.resource("Service"), service, {"endpoints": [{"id": "nope"}]}, "", ctx)
    assert ctx.problems[0]["property"] == "endpoints[0].id"
    assert b["name"] == "B"


def test_ignored_fields_are_not_written() -> None:
    service, _ = built("Service", {"name": "S", "id": "mine", "revisionNumber": 99, "robotsPolicy": "x"})
    assert service["id"] != "mine" and service["revisionNumber"] == 1 and service["robotsPolicy"] == ""


def test_timestamps_in_both_styles() -> None:
    moment = parse_ts("2026-12-01T02:00:00Z")
    assert moment is not None
    assert format_ts(moment, "ms") == "2026-12-01T02:00:00.000+0000"
    assert format_ts(moment, "z") == "2026-12-01T02:00:00Z"
    assert parse_ts("2026-12-01T02:00:00.000+0000") == moment
    assert parse_ts("yesterday") is None


def test_projection_defaults_to_imp_fields() -> None:
    service, _ = built("Service", {"name": "S", "endpoints": [dict(ENDPOINT)]})
    out = Projector().render(c.resource("Service"), None, service)
    assert set(out) == {"id", "created", "updated", "name", "version"}


def test_projection_of_named_and_nested_fields() -> None:
    service, _ = built("Service", {"name": "S", "endpoints": [dict(ENDPOINT)]})
    p = Projector({"endpoint_event": lambda ep: None})
    res = c.resource("Service")
    out = p.render(res, parse_fields(["name,endpoints.cors,nonsense"]), service)
    assert out == {"name": "S", "endpoints": [{"cors": service["endpoints"][0]["cors"]}]}
    bare = p.render(res, parse_fields(["endpoints"]), service)
    assert set(bare["endpoints"][0]) == {"id", "created", "updated", "name"}
    full = p.render(res, parse_fields(["endpoints.*"]), service)["endpoints"][0]
    assert {"cors", "cache", "processor", "methods", "publicDomains", "scheduledMaintenanceEvent",
            "systemDomainCredentialSecret"} <= set(full)
    narrowed = p.render(res, parse_fields(["endpoints.*,endpoints.cors.maxAge"]), service)["endpoints"][0]
    assert narrowed["cors"] == {"maxAge": 0} and "processor" in narrowed


def test_write_only_and_internal_keys_never_leave() -> None:
    member, _ = built("Member", {"username": "u", "email": "e", "displayName": "d", "externalId": "x",
                                 "passwdNew": "s3cret"})
    p = Projector()
    for sel in (None, parse_fields(["*"]), parse_fields(["passwdNew"])):
        assert "passwdNew" not in p.render(c.resource("Member"), sel, member)
    app, _ = built("Application", {"name": "a", "username": "u"})
    app["_memberId"] = "m"
    assert "_memberId" not in p.render(c.resource("Application"), parse_fields(["*"]), app)
    sda, _ = built("SystemDomainAuthentication", {"type": "httpBasic", "username": "u", "password": "pw"})
    assert sda["password"] == "pw"
    assert "password" not in p.render(c.resource("SystemDomainAuthentication"), parse_fields(["*"]), sda)


def test_every_catalog_reference_resolves() -> None:
    for res in c.CATALOG.values():
        for f in res.fields:
            if f.nested:
                assert f.nested in c.CATALOG, (res.name, f.name)
            assert f.create in ("Req", "Opt", "Ign", "ReqCtx") and f.update in ("Req", "Opt", "Ign", "ReqCtx")
            assert f.fetch in ("Imp", "Exp")
