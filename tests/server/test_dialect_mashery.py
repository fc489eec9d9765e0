"""The ``mashery`` dialect of the reference server (SUPPLEMENT §10), fact by fact.

Each section below is one numbered fact of §10; the last tests check that the ``spec``
dialect keeps its own vocabulary and shapes (it rejects the ``mashery`` spellings).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from spec_helpers import (
    AREA_A,
    CLIENT_KEY,
    CLIENT_SECRET,
    TOKEN_A,
    Api,
    describe,
    endpoint_body,
    member_body,
    serve,
    with_domains,
)

from apimctl.server.dialects import DIALECTS, dialect_of

MASHERY_ENDPOINT = {"forwardedHeaders": ["mashery-host", "mashery-message-id", "mashery-service-id"],
                    "returnedHeaders": ["mashery-message-id", "mashery-responder"]}


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with serve(tmp_path, dialect="mashery") as test_client:
        yield test_client


@pytest.fixture
def m(http: httpx.Client) -> Api:
    """A client of area A on a ``mashery`` server, with the test domains."""
    api = Api(http, TOKEN_A)
    with_domains(api)
    return api


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Api]:
    """A client of area A on a ``spec`` server, with the test domains."""
    (tmp_path / "spec").mkdir()
    with serve(tmp_path / "spec", dialect="spec") as c:
        api = Api(c, TOKEN_A)
        with_domains(api)
        yield api


def bare(resp: httpx.Response) -> dict[str, Any]:
    """A single object answered bare (§10.3)."""
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    assert isinstance(body, dict), describe(resp)
    return body


def mashery_error(resp: httpx.Response, status: int) -> dict[str, Any]:
    """``{"errorCode": "<string>", "errorMessage": ..., "errors": [...]}`` (§10.3)."""
    assert resp.status_code == status, describe(resp)
    body = resp.json()
    assert isinstance(body, dict), describe(resp)
    assert isinstance(body["errorCode"], str) and body["errorCode"], describe(resp)
    assert isinstance(body["errorMessage"], str), describe(resp)
    assert isinstance(body["errors"], list), describe(resp)
    return body


def invalid_at(resp: httpx.Response, prop: str) -> None:
    body = mashery_error(resp, 400)
    assert any(prop in e["property"] for e in body["errors"]), describe(resp)


def service_with_endpoint(api: Api, **endpoint: Any) -> tuple[str, dict[str, Any]]:
    sid = bare(api.post("/services", {"name": "Weather"}))["id"]
    ep = bare(api.post(f"/services/{sid}/endpoints", endpoint_body(**endpoint), {"fields": "*"}))
    return sid, ep


# 10.1 headers ------------------------------------------------------------------------------


def test_throttled_reply_is_the_traffic_managers(tmp_path: Path) -> None:
    """§10.10.6 (which wins over §10.1's "no Retry-After"): text/xml, Retry-After: 1."""
    with serve(tmp_path, dialect="mashery", qps=1) as http:
        api = Api(http, TOKEN_A)
        assert api.get("/services").status_code == 200
        throttled = api.get("/services")
    assert throttled.status_code == 403
    assert throttled.headers["Content-Type"] == "text/xml"
    assert throttled.text == "<h1>Developer Over Qps</h1>"
    assert throttled.headers["Retry-After"] == "1"
    assert throttled.headers["X-Mashery-Error-Code"] == "ERR_403_DEVELOPER_OVER_QPS"
    assert throttled.headers["X-Error-Detail-Header"] == "Account Over Queries Per Second Limit"
    assert "X-Svc-Error-Code" not in throttled.headers
    assert "X-Mashery-Responder" in throttled.headers


def test_over_quota_reply_is_the_traffic_managers(tmp_path: Path) -> None:
    with serve(tmp_path, dialect="mashery", daily_quota=1) as http:
        api = Api(http, TOKEN_A)
        assert api.get("/services").status_code == 200
        refused = api.get("/services")
    assert refused.status_code == 403
    assert refused.headers["Content-Type"] == "text/xml"
    assert refused.text == "<h1>Developer Over Rate</h1>"
    assert refused.headers["X-Mashery-Error-Code"] == "ERR_403_DEVELOPER_OVER_RATE"
    assert refused.headers["X-Error-Detail-Header"] == "Account Over Rate Limit"
    assert "Retry-After" not in refused.headers


def test_auth_failure_carries_the_error_code_header(http: httpx.Client) -> None:
    resp = Api(http, "no-such-token").get("/services")
    body = mashery_error(resp, 401)
    assert resp.headers["X-Mashery-Error-Code"] == body["errorCode"] == "ERR_401_INVALID_OR_EXPIRED_TOKEN"
    assert resp.headers["X-Error-Detail-Header"] == "Invalid Or Expired Token"
    assert mashery_error(Api(http, None).get("/services"), 401)


def _basic(key: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()


def test_token_errors_carry_the_error_code_header(http: httpx.Client) -> None:
    form = {"grant_type": "password", "username": "alice", "password": "wrong", "scope": AREA_A}
    bad_client = http.post("/v3/token", data=form, headers={"Authorization": _basic(CLIENT_KEY, "nope")})
    assert bad_client.status_code == 403  # §10.10.7
    assert bad_client.headers["X-Mashery-Error-Code"] == "ERR_403_DEVELOPER_INACTIVE"
    assert bad_client.headers["X-Error-Detail-Header"] == "Account Inactive"
    assert bad_client.json() == {"error": "invalid_client"}
    bad_user = http.post("/v3/token", data=form, headers={"Authorization": _basic(CLIENT_KEY, CLIENT_SECRET)})
    assert bad_user.status_code == 400
    assert bad_user.headers["X-Mashery-Error-Code"] == "ERR_400_BAD_REQUEST"
    good = http.post("/v3/token", data={**form, "password": "alice-password"},
                     headers={"Authorization": _basic(CLIENT_KEY, CLIENT_SECRET)})
    assert good.status_code == 200 and "X-Mashery-Error-Code" not in good.headers


def test_the_original_host_header_is_x_mashery_host() -> None:
    assert dialect_of("mashery").host_header == "X-Mashery-Host"
    assert dialect_of("spec").host_header == "X-Svc-Host"


# 10.2 enum vocabularies ----------------------------------------------------------------------


def test_mashery_header_enums_are_accepted(m: Api) -> None:
    sid, ep = service_with_endpoint(m, **MASHERY_ENDPOINT)
    fetched = bare(m.get(f"/services/{sid}/endpoints/{ep['id']}", {"fields": "forwardedHeaders,returnedHeaders"}))
    assert fetched["forwardedHeaders"] == MASHERY_ENDPOINT["forwardedHeaders"]
    assert fetched["returnedHeaders"] == MASHERY_ENDPOINT["returnedHeaders"]


@pytest.mark.parametrize(("prop", "value"), [
    ("forwardedHeaders", ["svc-host"]),
    ("forwardedHeaders", ["svc-message-id"]),
    ("returnedHeaders", ["svc-responder"]),
])
def test_svc_header_spellings_are_rejected(m: Api, prop: str, value: list[str]) -> None:
    sid = bare(m.post("/services", {"name": "Weather"}))["id"]
    invalid_at(m.post(f"/services/{sid}/endpoints", endpoint_body(**{prop: value})), prop)


def test_grant_types_take_underscores(m: Api) -> None:
    grants = ["authorization_code", "implicit", "password", "client_credentials"]
    _, ep = service_with_endpoint(m, requestAuthenticationType="oauth", oauthGrantTypes=grants)
    assert ep["oauthGrantTypes"] == grants
    sid = bare(m.post("/services", {"name": "Other"}))["id"]
    oauth = bare(m.post(f"/services/{sid}/securityProfile/oauth", {"grantTypes": grants}))
    assert oauth["grantTypes"] == grants


def test_hyphenated_grant_types_are_rejected(m: Api) -> None:
    sid = bare(m.post("/services", {"name": "Weather"}))["id"]
    body = endpoint_body(requestAuthenticationType="oauth", oauthGrantTypes=["client-credentials"])
    invalid_at(m.post(f"/services/{sid}/endpoints", body), "oauthGrantTypes")
    invalid_at(m.post(f"/services/{sid}/securityProfile/oauth", {"grantTypes": ["authorization-code"]}),
               "grantTypes")


def test_spec_dialect_rejects_the_mashery_spellings(s: Api) -> None:
    sid = s.create("/services", {"name": "Weather"})["id"]
    for prop, value in (("forwardedHeaders", ["mashery-host"]), ("returnedHeaders", ["mashery-responder"])):
        resp = s.post(f"/services/{sid}/endpoints", endpoint_body(**{prop: value}))
        assert resp.status_code == 400 and any(prop in i["property"] for i in resp.json()), describe(resp)
    resp = s.post(f"/services/{sid}/securityProfile/oauth", {"grantTypes": ["client_credentials"]})
    assert resp.status_code == 400, describe(resp)
    ok = s.post(f"/services/{sid}/endpoints", endpoint_body(forwardedHeaders=["svc-host"]))
    assert ok.status_code == 200, describe(ok)


# 10.3 bodies -------------------------------------------------------------------------------


def test_single_objects_are_bare(m: Api) -> None:
    created = bare(m.post("/services", {"name": "Weather"}))
    assert bare(m.get(f"/services/{created['id']}"))["name"] == "Weather"
    assert bare(m.put(f"/services/{created['id']}", {"description": "d"}))["id"] == created["id"]
    listed = m.get("/services")
    assert isinstance(listed.json(), list) and listed.headers["X-Total-Count"] == "1"


def test_error_bodies_have_string_codes_and_errors(m: Api) -> None:
    body = mashery_error(m.post("/services", {}), 400)
    assert body["errorCode"] == "400"  # a validation failure: the status as a string (§10.10.5)
    assert body["errors"] and body["errors"][0]["property"] == "name"
    missing = mashery_error(m.get("/services/nosuchservice"), 404)
    assert missing["errors"] == []


def test_credential_fields_accept_null(m: Api) -> None:
    sid, ep = service_with_endpoint(m, systemDomainCredentialKey=None, systemDomainCredentialSecret=None)
    assert ep["systemDomainCredentialKey"] is None and ep["systemDomainCredentialSecret"] is None
    updated = bare(m.put(f"/services/{sid}/endpoints/{ep['id']}",
                         {"systemDomainCredentialKey": "k", "systemDomainCredentialSecret": None}, {"fields": "*"}))
    assert updated["systemDomainCredentialKey"] == "k" and updated["systemDomainCredentialSecret"] is None


def test_spec_dialect_refuses_null_credentials(s: Api) -> None:
    sid = s.create("/services", {"name": "Weather"})["id"]
    resp = s.post(f"/services/{sid}/endpoints", endpoint_body(systemDomainCredentialKey=None))
    assert resp.status_code == 400, describe(resp)


def test_filters_may_be_comma_joined(m: Api) -> None:
    a = bare(m.post("/services", {"name": "Alpha"}))
    b = bare(m.post("/services", {"name": "Beta"}))
    found = m.get("/services", {"filter": f"name:Alpha,id:{a['id']}"})
    assert [x["id"] for x in found.json()] == [a["id"]] and found.headers["X-Total-Count"] == "1"
    assert m.get("/services", {"filter": f"name:Alpha,id:{b['id']}"}).json() == []
    sid = a["id"]
    bare(m.post(f"/services/{sid}/endpoints", endpoint_body(name="One", path="/one")))
    bare(m.post(f"/services/{sid}/endpoints", endpoint_body(name="Two", path="/two")))
    names = [e["name"] for e in m.get(f"/services/{sid}/endpoints", {"filter": "name:Two,requestPathAlias:/two"}).json()]
    assert names == ["Two"]


def test_spec_dialect_reads_one_filter_per_parameter(s: Api) -> None:
    a = s.create("/services", {"name": "Alpha"})
    assert s.list("/services", {"filter": f"name:Alpha,id:{a['id']}"}) == []


# 10.4 types --------------------------------------------------------------------------------


def _package(api: Api, **plan: Any) -> dict[str, Any]:
    return bare(api.post("/packages", {"name": "Basic", "plans": [{"name": "Gold", **plan}]},
                         # named: the dialect ignores nested wildcards (§10.10.8)
                         {"fields": "id,name,plans.id,plans.name,plans.emailTemplateSetId,"
                                    "plans.adminEmailTemplateSetId"}))


def test_email_template_set_ids_are_strings(m: Api) -> None:
    uuid = "8d9c1f4e-5a7b-4c1d-9e2f-3a4b5c6d7e8f"
    package = _package(m, emailTemplateSetId=uuid, adminEmailTemplateSetId=uuid)
    plan = package["plans"][0]
    assert plan["emailTemplateSetId"] == uuid and plan["adminEmailTemplateSetId"] == uuid
    resp = m.put(f"/packages/{package['id']}/plans/{plan['id']}", {"emailTemplateSetId": 7})
    invalid_at(resp, "emailTemplateSetId")


def test_spec_dialect_keeps_integer_template_set_ids(s: Api) -> None:
    resp = s.post("/packages", {"name": "Basic", "plans": [{"name": "Gold", "emailTemplateSetId": "x"}]})
    assert resp.status_code == 400, describe(resp)


# 10.5 defaults -----------------------------------------------------------------------------

DETAILS = {
    "ERR_403_NOT_AUTHORIZED": "Not Authorized",
    "ERR_403_DEVELOPER_INACTIVE": "Account Inactive",
    "ERR_403_DEVELOPER_OVER_QPS": "Account Over Queries Per Second Limit",
    "ERR_403_DEVELOPER_OVER_RATE": "Account Over Rate Limit",
    "ERR_403_DEVELOPER_UNKNOWN_REFERER": "Invalid Referer",
    "ERR_403_SERVICE_OVER_QPS": "Rate Limit Exceeded",
    "ERR_403_SERVICE_REQUIRES_SSL": "Service Requires SSL",
    "ERR_503_SERVICE_UNAVAILABLE": "Scheduled Maintenance",
    "ERR_400_UNSUPPORTED_PARAMETER": "Unsupported Parameter",
    "ERR_400_UNSUPPORTED_SIGNATURE_METHOD": "Unsupported Signature Method",
    "ERR_400_MISSING_REQUIRED_CONSUMER_KEY": "Missing Required Consumer Key",
    "ERR_400_MISSING_REQUIRED_REQUEST_TOKEN": "Missing Required Request Token",
    "ERR_400_MISSING_REQUIRED_ACCESS_TOKEN": "Missing Required Access Token",
    "ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER": "Duplicated OAuth Protocol Parameter",
    "ERR_401_TIMESTAMP_IS_INVALID": "Timestamp Is Invalid",
    "ERR_401_INVALID_SIGNATURE": "Invalid Signature",
    "ERR_401_INVALID_OR_EXPIRED_TOKEN": "Invalid Or Expired Token",
    "ERR_401_INVALID_CONSUMER_KEY": "Invalid Consumer Key",
    "ERR_401_INVALID_NONCE": "Invalid NONCE",
}


def test_new_endpoint_returns_mashery_responder(m: Api) -> None:
    _, ep = service_with_endpoint(m)
    assert ep["returnedHeaders"] == ["mashery-responder"]


def test_new_error_sets_have_the_published_detail_headers(m: Api) -> None:
    sid = bare(m.post("/services", {"name": "Weather"}))["id"]
    sets = m.get(f"/services/{sid}/errorSets", {"fields": "id,name,errorMessages"}).json()
    messages = {x["id"]: x for x in sets[0]["errorMessages"]}
    assert {mid: x["detailHeader"] for mid, x in messages.items() if x["detailHeader"]} == DETAILS
    assert messages["ERR_400_BAD_REQUEST"]["detailHeader"] == ""
    assert messages["ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER"]["code"] == 504
    assert messages["ERR_400_BAD_REQUEST"]["code"] == 400
    added = bare(m.post(f"/services/{sid}/errorSets", {"name": "Other"}, {"fields": "id,errorMessages"}))
    assert {x["id"]: x["detailHeader"] for x in added["errorMessages"]}["ERR_403_NOT_AUTHORIZED"] == "Not Authorized"
    path = f"/services/{sid}/errorSets/{added['id']}/errorMessages/ERR_403_NOT_AUTHORIZED"
    assert bare(m.put(path, {"detailHeader": "Nope"}))["detailHeader"] == "Nope"
    assert m.delete(path).status_code == 200
    assert bare(m.get(path))["detailHeader"] == "Not Authorized"


def test_a_listed_message_without_detail_header_gets_the_default(m: Api) -> None:
    """A message a new error set lists without ``detailHeader`` has the dialect's default too."""
    body = {"name": "Weather", "errorSets": [{"name": "JSON", "errorMessages": [
        {"id": "ERR_403_DEVELOPER_OVER_RATE", "responseBody": "x"},
        {"id": "ERR_403_NOT_AUTHORIZED", "detailHeader": ""}]}]}
    sid = bare(m.post("/services", body))["id"]
    sets = m.get(f"/services/{sid}/errorSets", {"fields": "id,name,errorMessages"}).json()
    messages = {x["id"]: x for x in sets[0]["errorMessages"]}
    assert messages["ERR_403_DEVELOPER_OVER_RATE"]["detailHeader"] == "Account Over Rate Limit"
    assert messages["ERR_403_DEVELOPER_OVER_RATE"]["responseBody"] == "x"
    assert messages["ERR_403_NOT_AUTHORIZED"]["detailHeader"] == ""  # written: kept


def test_spec_dialect_keeps_empty_detail_headers(s: Api) -> None:
    sid = s.create("/services", {"name": "Weather"})["id"]
    sets = s.list(f"/services/{sid}/errorSets", {"fields": "id,errorMessages"})
    assert all(x["detailHeader"] == "" for x in sets[0]["errorMessages"])
    assert {x["id"]: x["code"] for x in sets[0]["errorMessages"]}["ERR_400_DUPLICATED_OAUTH_PROTOCOL_PARAMETER"] == 400
    ep = s.create(f"/services/{sid}/endpoints", endpoint_body())
    assert s.fetch(f"/services/{sid}/endpoints/{ep['id']}", {"fields": "returnedHeaders"})["returnedHeaders"] == []


# 10.6 plan entitlements -------------------------------------------------------------------


def _tree(api: Api) -> tuple[str, list[dict[str, Any]]]:
    """A service with two endpoints of two methods each."""
    sid = bare(api.post("/services", {"name": "Weather"}))["id"]
    endpoints = []
    for i in (1, 2):
        ep = bare(api.post(f"/services/{sid}/endpoints", endpoint_body(name=f"E{i}", path=f"/e{i}")))
        ep["methods"] = [bare(api.post(f"/services/{sid}/endpoints/{ep['id']}/methods", {"name": f"m{i}{j}"}))
                         for j in (1, 2)]
        endpoints.append(ep)
    return sid, endpoints


def test_entitling_a_service_entitles_its_endpoints_and_methods(m: Api) -> None:
    sid, endpoints = _tree(m)
    package = _package(m)
    base = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}/services"
    bare(m.post(base, {"id": sid}))
    entitled = bare(m.get(f"{base}/{sid}", {"fields": "id,name,endpoints.id,endpoints.methods"}))
    assert {e["id"] for e in entitled["endpoints"]} == {e["id"] for e in endpoints}
    for pe in entitled["endpoints"]:
        ep = next(e for e in endpoints if e["id"] == pe["id"])
        assert {x["id"] for x in pe["methods"]} == {x["id"] for x in ep["methods"]}
        assert {x["name"] for x in pe["methods"]} == {x["name"] for x in ep["methods"]}


def test_explicit_endpoints_entitle_only_those(m: Api) -> None:
    sid, endpoints = _tree(m)
    package = _package(m)
    base = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}/services"
    bare(m.post(base, {"id": sid, "endpoints": [{"id": endpoints[0]["id"]}]}))
    entitled = bare(m.get(f"{base}/{sid}", {"fields": "id,endpoints"}))
    assert [e["id"] for e in entitled["endpoints"]] == [endpoints[0]["id"]]
    replaced = bare(m.put(f"{base}/{sid}", {"endpoints": [{"id": endpoints[1]["id"]}]}, {"fields": "id,endpoints"}))
    assert [e["id"] for e in replaced["endpoints"]] == [endpoints[1]["id"]]
    invalid_at(m.put(f"{base}/{sid}", {"endpoints": [{"id": "nosuchendpoint"}]}), "endpoints")


def test_plan_entitlement_endpoints_and_methods_are_exp(m: Api) -> None:
    sid, _ = _tree(m)
    package = _package(m)
    pid = package["id"]
    bare(m.post(f"/packages/{pid}/plans/{package['plans'][0]['id']}/services", {"id": sid}))
    services = bare(m.get(f"/packages/{pid}", {"fields": "id,plans.services"}))["plans"][0]["services"]
    assert services[0]["id"] == sid and "endpoints" not in services[0]
    eps = bare(m.get(f"/packages/{pid}", {"fields": "plans.services.endpoints"}))["plans"][0]["services"][0]["endpoints"]
    assert len(eps) == 2 and all("methods" not in e for e in eps)
    deep = bare(m.get(f"/packages/{pid}", {"fields": "plans.services.endpoints.methods"}))
    assert all(len(e["methods"]) == 2 for e in deep["plans"][0]["services"][0]["endpoints"])
    listed = m.get(f"/packages/{pid}/plans/{package['plans'][0]['id']}/services").json()
    assert "endpoints" not in listed[0]


def test_spec_dialect_entitles_only_what_is_named(s: Api) -> None:
    sid = s.create("/services", {"name": "Weather"})["id"]
    s.create(f"/services/{sid}/endpoints", endpoint_body())
    package = s.create("/packages", {"name": "Basic", "plans": [{"name": "Gold"}]}, {"fields": "id,plans"})
    base = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}/services"
    assert s.create(base, {"id": sid})["endpoints"] == []


# 10.7 role permissions --------------------------------------------------------------------


def test_service_roles_are_written_as_a_collection(m: Api) -> None:
    r1 = bare(m.post("/roles", {"name": "Readers"}))
    r2 = bare(m.post("/roles", {"name": "Writers"}))
    sid = bare(m.post("/services", {"name": "Weather"}))["id"]
    assert bare(m.get(f"/services/{sid}", {"fields": "id,roles"}))["roles"] is None
    put = m.put(f"/services/{sid}/roles", {"roles": [{"id": r1["id"], "action": "read"},
                                                      {"id": r2["id"], "action": "read"}]})
    assert put.status_code == 200, describe(put)
    roles = bare(m.get(f"/services/{sid}", {"fields": "id,roles"}))["roles"]
    assert [(r["id"], r["name"], r["action"]) for r in roles] == [(r1["id"], "Readers", "read"),
                                                                  (r2["id"], "Writers", "read")]
    m.put(f"/services/{sid}/roles", {"roles": [{"id": r2["id"], "action": "read"}]})
    assert [r["id"] for r in m.get(f"/services/{sid}/roles").json()] == [r2["id"]]
    invalid_at(m.put(f"/services/{sid}/roles", {"roles": [{"id": r1["id"]}]}), "action")
    invalid_at(m.put(f"/services/{sid}/roles", {"roles": [{"id": r1["id"], "action": "register_keys"}]}), "action")
    assert m.post(f"/services/{sid}/roles", {"id": r1["id"], "action": "read"}).status_code == 405
    assert m.delete(f"/services/{sid}/roles/{r2['id']}").status_code == 405
    assert m.delete(f"/services/{sid}/roles").status_code == 200
    assert bare(m.get(f"/services/{sid}", {"fields": "id,roles"}))["roles"] is None


def test_plan_roles_are_written_as_a_collection(m: Api) -> None:
    role = bare(m.post("/roles", {"name": "Partners"}))
    package = _package(m)
    base = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}/roles"
    assert m.put(base, {"roles": [{"id": role["id"], "action": "register_keys"}]}).status_code == 200
    assert [(r["id"], r["action"]) for r in m.get(base).json()] == [(role["id"], "register_keys")]
    invalid_at(m.put(base, {"roles": [{"id": role["id"], "action": "read"}]}), "action")
    assert m.post(base, {"id": role["id"], "action": "register_keys"}).status_code == 405
    assert m.delete(base).status_code == 200
    assert m.get(base).json() == []


def test_spec_dialect_keeps_item_level_roles(s: Api) -> None:
    role = s.create("/roles", {"name": "Readers"})
    sid = s.create("/services", {"name": "Weather"})["id"]
    assert s.post(f"/services/{sid}/roles", {"id": role["id"]}).status_code == 200
    assert s.put(f"/services/{sid}/roles", {"roles": []}).status_code == 405
    assert s.fetch(f"/services/{sid}", {"fields": "id,roles"})["roles"] != []


# 10.8 extra fields ------------------------------------------------------------------------


def test_endpoint_extra_fields(m: Api) -> None:
    sid, ep = service_with_endpoint(m)
    assert (ep["inboundMsslRequired"], ep["userControlledErrorLocation"], ep["userControlledErrorLocationKey"],
            ep["rateLimitHeadersEnabled"]) == (False, "", "", False)
    extra = {"inboundMsslRequired": True, "userControlledErrorLocation": "parameter",
             "userControlledErrorLocationKey": "err", "rateLimitHeadersEnabled": True}
    bare(m.put(f"/services/{sid}/endpoints/{ep['id']}", extra))
    fetched = bare(m.get(f"/services/{sid}/endpoints/{ep['id']}", {"fields": ",".join(extra)}))
    assert fetched == extra


def test_oauth_extra_fields(m: Api) -> None:
    sid = bare(m.post("/services", {"name": "Weather"}))["id"]
    oauth = bare(m.post(f"/services/{sid}/securityProfile/oauth", {}))
    assert (oauth["masheryTokenApiEnabled"], oauth["enableRefreshTokenTtl"], oauth["forceOauthRedirectUrl"],
            oauth["macAlgorithm"]) == (False, False, False, None)
    changed = bare(m.put(f"/services/{sid}/securityProfile/oauth",
                         {"masheryTokenApiEnabled": True, "macAlgorithm": "hmac-sha-256"}))
    assert changed["masheryTokenApiEnabled"] is True and changed["macAlgorithm"] == "hmac-sha-256"
    invalid_at(m.put(f"/services/{sid}/securityProfile/oauth", {"macAlgorithm": "md5"}), "macAlgorithm")


def test_service_and_package_organization(m: Api) -> None:
    org = {"id": "00000000-0000-4000-8000-000000000002", "name": "Partners"}
    service = bare(m.post("/services", {"name": "Weather"}, {"fields": "id,organization"}))
    assert service["organization"] is None
    bare(m.put(f"/services/{service['id']}", {"organization": org}))
    assert bare(m.get(f"/services/{service['id']}", {"fields": "organization"}))["organization"] == org
    package = bare(m.post("/packages", {"name": "Basic", "organization": org}, {"fields": "id,organization"}))
    assert package["organization"] == org


def test_package_key_expires(m: Api) -> None:
    package = _package(m)
    member = bare(m.post("/members", member_body()))
    app = bare(m.post(f"/members/{member['id']}/applications", {"name": "App", "username": member["username"]}))
    key = bare(m.post(f"/applications/{app['id']}/packageKeys",
                      {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}}))
    assert key["expires"] is None
    updated = bare(m.put(f"/packageKeys/{key['id']}", {"expires": "2027-01-01T00:00:00Z"}))
    assert updated["expires"].startswith("2027-01-01T00:00:00")


def test_spec_dialect_has_no_extra_fields(s: Api) -> None:
    sid = s.create("/services", {"name": "Weather"})["id"]
    ep = s.create(f"/services/{sid}/endpoints", endpoint_body(inboundMsslRequired=True))
    assert "inboundMsslRequired" not in s.fetch(f"/services/{sid}/endpoints/{ep['id']}", {"fields": "*"})


# 10.9 extra paths -------------------------------------------------------------------------


def test_domains_by_kind(m: Api) -> None:
    service_with_endpoint(m, host="api.example.com", backend="backend.example.net")
    public = m.get("/domains/public")
    assert public.status_code == 200 and public.json() == [{"address": "api.example.com"}]
    assert public.headers["X-Total-Count"] == "1"
    assert m.get("/domains/system").json() == [{"address": "backend.example.net"}]
    assert m.get("/domains/public/hostnames").json() == [{"address": "api.example.com"}]


def test_spec_dialect_has_no_domains_by_kind(s: Api) -> None:
    assert s.get("/domains/public").status_code == 404


def test_plan_method_response_filter(m: Api) -> None:
    sid, endpoints = _tree(m)
    ep, method = endpoints[0], endpoints[0]["methods"][0]
    mbase = f"/services/{sid}/endpoints/{ep['id']}/methods/{method['id']}/responseFilters"
    flt = bare(m.post(mbase, {"name": "Trim"}))
    package = _package(m)
    base = f"/packages/{package['id']}/plans/{package['plans'][0]['id']}/services"
    bare(m.post(base, {"id": sid}))
    path = f"{base}/{sid}/endpoints/{ep['id']}/methods/{method['id']}/responseFilter"
    assert m.get(path).status_code == 404
    set_ = bare(m.post(path, {"id": flt["id"]}))
    assert set_ == {"id": flt["id"], "name": "Trim"}
    assert bare(m.get(path)) == {"id": flt["id"], "name": "Trim"}
    invalid_at(m.post(path, {"id": "nosuchfilter"}), "responseFilter")
    assert m.delete(path).status_code == 200
    assert m.get(path).status_code == 404


# the table -------------------------------------------------------------------------------


def test_the_dialect_table_names_both_dialects() -> None:
    assert set(DIALECTS) == {"spec", "mashery"}
    with pytest.raises(ValueError, match="unknown dialect"):
        dialect_of("nope")


# apimctl serve --dialect -----------------------------------------------------------------


def test_serve_takes_the_dialect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from apimctl.cli import serve

    started: list[Any] = []
    monkeypatch.setattr(serve, "_run", lambda listeners, *_: (started.append(listeners[0][0]), listeners[0][3].close()))
    runner = CliRunner()
    base = ["--port", "0", "--db", str(tmp_path / "x.db"), "--token", "t=a"]
    result = runner.invoke(serve.command, [*base, "--dialect", "mashery"])
    assert result.exit_code == 0, result.output
    assert "(database " + str(tmp_path / "x.db") + ", dialect mashery)" in result.output
    assert started[0].state.server.config.dialect == "mashery"
    result = runner.invoke(serve.command, base)
    assert result.exit_code == 0 and ", dialect" not in result.output
    assert started[1].state.server.config.dialect == "spec"
    result = runner.invoke(serve.command, base, env={"APIMCTL_SERVE_DIALECT": "mashery"})
    assert started[2].state.server.config.dialect == "mashery"
    result = runner.invoke(serve.command, [*base, "--dialect", "auto"])
    assert result.exit_code != 0 and "auto" in result.output
    for app in started:
        app.state.server.close()
