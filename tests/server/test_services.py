"""Services: CRUD, field rules, defaults, ids, revisions, singletons (spec "Service", SUPPLEMENT §2-§4)."""

from __future__ import annotations

import re

import pytest
from spec_helpers import (
    ID24_ALPHABET,
    MS_TIME_RE,
    Api,
    assert_deleted,
    assert_duplicate,
    assert_error,
    assert_invalid,
    make_endpoint,
    make_service,
    revision,
    with_domains,
)

SERVICE_EXP = [
    "endpoints",
    "editorHandle",
    "revisionNumber",
    "robotsPolicy",
    "crossdomainPolicy",
    "description",
    "errorSets",
    "qpsLimitOverall",
    "rfc3986Encode",
    "securityProfile",
]


def test_create_returns_imp_fields_only(api: Api) -> None:
    svc = make_service(api, "Weather", version="2", description="internal")
    assert svc["name"] == "Weather"
    assert svc["version"] == "2"
    for key in ("id", "created", "updated"):
        assert key in svc
    for key in SERVICE_EXP:
        assert key not in svc, key


def test_service_id_and_timestamps(api: Api) -> None:
    svc = make_service(api)
    assert len(svc["id"]) == 24
    assert set(svc["id"]) <= ID24_ALPHABET
    assert re.match(MS_TIME_RE, svc["created"]), svc["created"]
    assert re.match(MS_TIME_RE, svc["updated"]), svc["updated"]


def test_crud_round_trip(api: Api) -> None:
    svc = make_service(api, "Weather", version="1")
    sid = svc["id"]
    assert api.fetch(f"/services/{sid}")["name"] == "Weather"
    updated = api.update(f"/services/{sid}", {"name": "Weather v2", "version": "2"})
    assert updated["id"] == sid
    assert updated["name"] == "Weather v2"
    assert updated["version"] == "2"
    assert [s["name"] for s in api.list("/services")] == ["Weather v2"]
    assert_deleted(api.delete(f"/services/{sid}"))
    assert_error(api.get(f"/services/{sid}"), 404)
    assert_error(api.delete(f"/services/{sid}"), 404)
    assert api.list("/services") == []


def test_fetch_unknown_service_is_404(api: Api) -> None:
    assert_error(api.get("/services/aaaaaaaaaaaaaaaaaaaaaaaa"), 404)
    assert_error(api.put("/services/aaaaaaaaaaaaaaaaaaaaaaaa", {"name": "x"}), 404)


def test_name_is_required_on_create(api: Api) -> None:
    assert_invalid(api.post("/services", {"version": "1"}), "name")


def test_name_is_optional_on_update(api: Api) -> None:
    sid = make_service(api, "Keep Me")["id"]
    got = api.update(f"/services/{sid}", {"description": "changed"})
    assert got["name"] == "Keep Me"


def test_ignored_fields_are_ignored_on_create(api: Api) -> None:
    body = {
        "name": "Ignoring",
        "id": "zzzzzzzzzzzzzzzzzzzzzzzz",
        "created": "2001-01-01T00:00:00.000+0000",
        "revisionNumber": 99,
        "editorHandle": "someone",
        "robotsPolicy": "deny all",
        "crossdomainPolicy": "<cross-domain-policy/>",
    }
    svc = api.create("/services", body)
    assert svc["id"] != "zzzzzzzzzzzzzzzzzzzzzzzz"
    assert svc["created"] != "2001-01-01T00:00:00.000+0000"
    got = api.fetch(
        f"/services/{svc['id']}", {"fields": "id,revisionNumber,editorHandle,robotsPolicy"}
    )
    assert got["revisionNumber"] == 1
    assert got["editorHandle"] is None
    assert got["robotsPolicy"] == ""


def test_ignored_fields_are_ignored_on_update(api: Api) -> None:
    svc = make_service(api)
    sid = svc["id"]
    api.update(f"/services/{sid}", {"revisionNumber": 500, "created": "2001-01-01T00:00:00Z"})
    got = api.fetch(f"/services/{sid}", {"fields": "id,created,revisionNumber"})
    assert got["revisionNumber"] == 2
    assert got["created"] == svc["created"]


def test_id_is_taken_from_the_path_on_update(api: Api) -> None:
    sid = make_service(api, "Path Id")["id"]
    other = make_service(api, "Other")["id"]
    got = api.update(f"/services/{sid}", {"description": "no id in body"})
    assert got["id"] == sid
    assert api.fetch(f"/services/{other}")["name"] == "Other"


def test_exp_fields_only_when_asked(api: Api) -> None:
    sid = make_service(api, description="hello", qpsLimitOverall=7)["id"]
    plain = api.fetch(f"/services/{sid}")
    assert "description" not in plain
    assert "qpsLimitOverall" not in plain
    asked = api.fetch(f"/services/{sid}", {"fields": "id,name,description,qpsLimitOverall"})
    assert asked["description"] == "hello"
    assert asked["qpsLimitOverall"] == 7
    assert "version" not in asked  # with `fields`, only the named fields are returned


def test_create_and_update_honour_fields(api: Api) -> None:
    created = api.create("/services", {"name": "F", "description": "d"}, {"fields": "id,description"})
    assert created["description"] == "d"
    updated = api.update(
        f"/services/{created['id']}", {"description": "e"}, {"fields": "id,description"}
    )
    assert updated["description"] == "e"


def test_service_defaults(api: Api) -> None:
    sid = make_service(api, "Defaults")["id"]
    got = api.fetch(
        f"/services/{sid}",
        {
            "fields": "id,revisionNumber,robotsPolicy,crossdomainPolicy,qpsLimitOverall,"
            "rfc3986Encode,description,version,cache,securityProfile,editorHandle"
        },
    )
    assert got["revisionNumber"] == 1
    assert got["robotsPolicy"] == ""
    assert isinstance(got["crossdomainPolicy"], str) and got["crossdomainPolicy"].strip()
    assert got["qpsLimitOverall"] == 0
    assert got["rfc3986Encode"] is False
    assert got["description"] == ""
    assert got["version"] == ""
    assert got["cache"] == {"cacheTtl": 0}
    assert got["securityProfile"] == {"oauth": None}


def test_default_error_set_with_full_catalog(api: Api) -> None:
    sid = make_service(api)["id"]
    sets = api.list(f"/services/{sid}/errorSets")
    assert len(sets) == 1
    assert sets[0]["name"] == "Default"
    assert sets[0]["type"] == "application/json"
    assert sets[0]["jsonp"] is False
    assert sets[0]["jsonpType"] == ""


def test_duplicate_service_name(api: Api) -> None:
    make_service(api, "Weather")
    assert_duplicate(api.post("/services", {"name": "Weather"}))
    sid = make_service(api, "Climate")["id"]
    assert_duplicate(api.put(f"/services/{sid}", {"name": "Weather"}))
    assert len(api.list("/services")) == 2


def test_renaming_to_own_name_is_not_a_duplicate(api: Api) -> None:
    sid = make_service(api, "Same")["id"]
    assert api.update(f"/services/{sid}", {"name": "Same"})["name"] == "Same"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", 12),
        ("name", ["x"]),
        ("qpsLimitOverall", "many"),
        ("qpsLimitOverall", 1.5),
        ("rfc3986Encode", "yes"),
        ("description", {"a": 1}),
    ],
)
def test_wrong_types_are_400_naming_the_property(api: Api, field: str, value: object) -> None:
    body = {"name": "Typed", field: value}
    assert_invalid(api.post("/services", body), field)


def test_revision_number_increments_on_every_write(api: Api) -> None:
    with_domains(api)
    sid = make_service(api)["id"]
    assert revision(api, sid) == 1
    api.update(f"/services/{sid}", {"description": "one"})
    assert revision(api, sid) == 2
    eid = make_endpoint(api, sid)["id"]
    assert revision(api, sid) == 3
    api.update(f"/services/{sid}/endpoints/{eid}/cors", {"maxAge": 5})
    assert revision(api, sid) == 4
    api.update(f"/services/{sid}/endpoints/{eid}/cache", {"cacheTtlOverride": 30})
    assert revision(api, sid) == 5
    api.create(f"/services/{sid}/endpoints/{eid}/methods", {"name": "getForecast"})
    assert revision(api, sid) == 6
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    api.update(
        f"/services/{sid}/errorSets/{esid}/errorMessages/ERR_403_DEVELOPER_OVER_QPS",
        {"id": "ERR_403_DEVELOPER_OVER_QPS", "responseBody": "slow down"},
    )
    assert revision(api, sid) == 7
    api.update(f"/services/{sid}/cache", {"cacheTtl": 10})
    assert revision(api, sid) == 8
    api.update(f"/services/{sid}/endpoints/{eid}", {"name": "Renamed"})
    assert revision(api, sid) == 9
    assert_deleted(api.delete(f"/services/{sid}/endpoints/{eid}"))
    assert revision(api, sid) == 10


def test_failed_write_does_not_bump_revision(api: Api) -> None:
    sid = make_service(api)["id"]
    assert_invalid(api.put(f"/services/{sid}", {"qpsLimitOverall": "x"}), "qpsLimitOverall")
    assert revision(api, sid) == 1


def test_updated_moves_with_revision(api: Api) -> None:
    svc = make_service(api)
    api.update(f"/services/{svc['id']}", {"description": "x"})
    got = api.fetch(f"/services/{svc['id']}")
    assert got["updated"] >= svc["updated"]
    assert got["created"] == svc["created"]


# service cache singleton ---------------------------------------------------------------


def test_service_cache_singleton(api: Api) -> None:
    sid = make_service(api)["id"]
    assert api.fetch(f"/services/{sid}/cache") == {"cacheTtl": 0}
    assert api.update(f"/services/{sid}/cache", {"cacheTtl": 300})["cacheTtl"] == 300
    assert api.fetch(f"/services/{sid}/cache")["cacheTtl"] == 300
    assert api.create(f"/services/{sid}/cache", {"cacheTtl": 60})["cacheTtl"] == 60
    assert_deleted(api.delete(f"/services/{sid}/cache"))
    assert api.fetch(f"/services/{sid}", {"fields": "id,cache"})["cache"] in (
        None,
        {"cacheTtl": 0},
    )


@pytest.mark.parametrize("value", [-1, "ten", 1.5, None])
def test_service_cache_ttl_must_be_a_non_negative_integer(api: Api, value: object) -> None:
    sid = make_service(api)["id"]
    assert_invalid(api.put(f"/services/{sid}/cache", {"cacheTtl": value}), "cacheTtl")


# securityProfile/oauth -------------------------------------------------------------------

OAUTH = {
    "accessTokenTtlEnabled": True,
    "accessTokenTtl": 3600,
    "authorizationCodeTtl": 300,
    "refreshTokenEnabled": True,
    "refreshTokenTtl": 86400,
    "accessTokenType": "bearer",
    "allowMultipleToken": False,
    "secureTokensEnabled": True,
    "forwardedHeaders": ["access-token", "scope"],
    "grantTypes": ["client-credentials", "password"],
    "tokenBasedRateLimitsEnabled": False,
    "qpsLimitCeiling": 10,
    "rateLimitCeiling": 1000,
    "forceSslRedirectUrlEnabled": True,
}


def test_oauth_security_profile_crud(api: Api) -> None:
    sid = make_service(api)["id"]
    path = f"/services/{sid}/securityProfile/oauth"
    created = api.create(path, OAUTH)
    for key, value in OAUTH.items():
        if isinstance(value, list):
            assert sorted(created[key]) == sorted(value), key
        else:
            assert created[key] == value, key
    assert api.update(path, {"accessTokenType": "mac"})["accessTokenType"] == "mac"
    assert api.fetch(path)["accessTokenTtl"] == 3600
    profile = api.fetch(f"/services/{sid}", {"fields": "id,securityProfile"})["securityProfile"]
    assert profile["oauth"]["accessTokenType"] == "mac"
    assert_deleted(api.delete(path))
    profile = api.fetch(f"/services/{sid}", {"fields": "id,securityProfile"})["securityProfile"]
    assert profile == {"oauth": None}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("accessTokenType", "jwt"),
        ("forwardedHeaders", ["access-token", "cookie"]),
        ("grantTypes", ["magic"]),
        ("accessTokenTtl", "long"),
    ],
)
def test_oauth_enum_and_type_validation(api: Api, field: str, value: object) -> None:
    sid = make_service(api)["id"]
    resp = api.post(f"/services/{sid}/securityProfile/oauth", {**OAUTH, field: value})
    assert_invalid(resp, field)


# service roles -----------------------------------------------------------------------------


def test_service_roles(api: Api) -> None:
    sid = make_service(api)["id"]
    role = api.create("/roles", {"name": "Partners"})
    path = f"/services/{sid}/roles"
    assert api.list(path) == []
    created = api.create(path, {"id": role["id"], "action": "read"})
    assert created["id"] == role["id"]
    assert created["action"] == "read"
    listed = api.list(path)
    assert [(r["id"], r["name"], r["action"]) for r in listed] == [
        (role["id"], "Partners", "read")
    ]
    assert api.fetch(f"{path}/{role['id']}")["name"] == "Partners"
    assert_deleted(api.delete(f"{path}/{role['id']}"))
    assert api.list(path) == []


def test_service_role_action_is_read(api: Api) -> None:
    sid = make_service(api)["id"]
    role = api.create("/roles", {"name": "Partners"})
    assert_invalid(api.post(f"/services/{sid}/roles", {"id": role["id"], "action": "write"}), "action")


def test_service_role_for_unknown_role(api: Api) -> None:
    sid = make_service(api)["id"]
    resp = api.post(
        f"/services/{sid}/roles", {"id": "00000000-0000-0000-0000-000000000000", "action": "read"}
    )
    assert resp.status_code in (400, 404), resp.text


def test_deleting_a_service_removes_its_tree(api: Api) -> None:
    with_domains(api)
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    assert_deleted(api.delete(f"/services/{sid}"))
    assert_error(api.get(f"/services/{sid}/endpoints/{eid}"), 404)
    # the address is free again
    sid2 = make_service(api, "Weather")["id"]
    make_endpoint(api, sid2)
