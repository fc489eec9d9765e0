"""Steps 4-5 of SUPPLEMENT §11 through the traffic listener, in both dialects: the key in each
location (query, header, JSON and form body, path position), dropped or swapped for the
system-domain key, missing, unknown, inactive, the reserved ``noapikey``; entitlements of
endpoints and of methods (detected from a query parameter)."""

from __future__ import annotations

import json

from .support import Area, echo


def test_key_in_the_query_reaches_the_back_end(area: Area) -> None:
    seen = echo(area.call("GET", f"/v2/forecast?api_key={area.keys['free']}"))
    assert f"api_key={area.keys['free']}" in seen["query"]


def test_missing_key_is_refused_through_the_endpoints_error_set(area: Area) -> None:
    response = area.call("GET", "/v2/forecast")
    assert response.status_code == 403
    assert response.headers[area.error_header] == "ERR_403_NOT_AUTHORIZED"
    assert response.headers["x-error-detail-header"] == "No key"
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": "key please"}


def test_unknown_and_inactive_keys_are_developer_inactive(area: Area) -> None:
    for key in ("nobody-knows-this-key", area.keys["waiting"]):
        response = area.call("GET", f"/v2/forecast?api_key={key}")
        assert response.status_code == 403
        assert response.headers[area.error_header] == "ERR_403_DEVELOPER_INACTIVE"


def test_key_in_a_header_is_found_and_dropped(area: Area) -> None:
    seen = echo(area.call("GET", "/v2/hdr/x", headers={"X-Api-Key": area.keys["free"]}))
    assert "x-api-key" not in seen["headers"]
    assert area.call("GET", f"/v2/hdr/x?api_key={area.keys['free']}").status_code == 403  # not read from the query


def test_key_at_a_path_position_is_found_and_dropped(area: Area) -> None:
    seen = echo(area.call("GET", f"/v2/path/{area.keys['free']}/items"))
    assert seen["path"] == "/v2/path/items"
    refused = area.call("GET", "/v2/path/unknown-key/items")
    assert refused.headers[area.error_header] == "ERR_403_DEVELOPER_INACTIVE"


def test_key_in_a_json_or_form_body_is_swapped_for_the_system_domain_key(area: Area) -> None:
    seen = echo(area.call("POST", "/v2/body", json={"key": area.keys["free"], "q": 1}))
    assert json.loads(seen["body"]) == {"key": "backend-key", "q": 1}
    seen = echo(area.call("POST", "/v2/body", data={"key": area.keys["free"], "q": "1"}))
    assert seen["body"] == "key=backend-key&q=1"


def test_allow_missing_key_proceeds_as_noapikey(area: Area) -> None:
    area.clock.now += 60
    assert area.call("GET", "/v2/open").status_code == 200
    log = area.management.get("/operator/traffic", headers={"Authorization": "Bearer traffic-operator"}).json()
    decisions = [s["decision"] for s in log[-1]["steps"] if s["step"] == "key"]
    assert decisions == ["none in request-parameters 'api_key'; allowMissingApiKey: proceeding as noapikey",
                         "found in the reserved key noapikey, plan Gold"]


def test_plan_method_entitlements(area: Area) -> None:
    key = area.keys["gold"]
    area.clock.now += 60  # a fresh minute for Gold's rate limit
    assert area.call("GET", f"/v2/methods?api_key={key}&method=daily").status_code == 200
    refused = area.call("GET", f"/v2/methods?api_key={key}&method=hourly")
    assert refused.headers[area.error_header] == "ERR_403_NOT_AUTHORIZED"
    # a method the endpoint does not define passes: undefined methods are allowed by default
    assert area.call("GET", f"/v2/methods?api_key={key}&method=weekly").status_code == 200


def test_a_plan_that_does_not_entitle_the_endpoint_refuses(area: Area) -> None:
    # Free entitles every Weather endpoint but Methods, and not the Limited service
    for path in ("/v2/methods?method=daily", "/v2/busy"):
        response = area.call("GET", f"{path}{'&' if '?' in path else '?'}api_key={area.keys['free']}")
        assert response.status_code == 403, path
        assert response.headers[area.error_header] == "ERR_403_NOT_AUTHORIZED"


def test_the_call_log_never_shows_a_key_in_the_path(area: Area) -> None:
    key = area.keys["free"]
    echo(area.call("GET", f"/v2/path/{key}/items"))
    log = area.management.get("/operator/traffic", headers={"Authorization": "Bearer traffic-operator"})
    assert log.json()[-1]["path"] == "/v2/path/(key)/items"
    assert key not in log.text
