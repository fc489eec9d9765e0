"""Steps 1-3 of SUPPLEMENT §11 through the traffic listener, in both dialects: route (596,
405, segment boundaries, ports, longest alias, several endpoints on one path), transport
(inbound SSL) and maintenance windows on the virtual clock; and live configuration."""

from __future__ import annotations

from typing import Any

import pytest

from apimctl.server.traffic.area import Area as LiveArea
from apimctl.server.traffic.model import Final
from apimctl.server.traffic.route import route

from .support import HOST, T0, Area, echo


def test_unknown_host_and_path_answer_596(area: Area) -> None:
    key = area.keys["free"]
    for url in (f"http://other.example.com/v2/forecast?api_key={key}", f"http://{HOST}/v3/nothing",
                f"http://{HOST}/v2/forecastle?api_key={key}"):
        response = area.traffic.get(url)
        assert response.status_code == 596, url
        assert "Service Not Found" in response.text


def test_a_method_no_endpoint_supports_is_405_with_allow(area: Area) -> None:
    response = area.call("PATCH", f"/v2/forecast?api_key={area.keys['free']}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST"


def test_host_port_is_ignored_and_the_rest_of_the_path_follows(area: Area) -> None:
    response = area.traffic.get(f"http://{HOST}:8443/v2/forecast/daily/x?api_key={area.keys['free']}")
    assert echo(response)["path"] == "/internal/forecast/daily/x"


def _endpoint(name: str, alias: str, methods: list[str]) -> dict[str, Any]:
    return {"id": name, "name": name, "requestPathAlias": alias, "supportedHttpMethods": methods,
            "publicDomains": [{"address": "api.example.com"}]}


def test_route_prefers_the_longest_alias_and_tells_shared_paths_apart_by_method() -> None:
    live = LiveArea("a", services=[{"id": "s", "name": "S", "endpoints": [
        _endpoint("read", "/v1/items", ["get"]), _endpoint("write", "/v1/items", ["post", "put"]),
        _endpoint("root", "/v1", ["get"])]}])
    assert route([live], "GET", "api.example.com", "/v1/items/7").endpoint["name"] == "read"
    assert route([live], "POST", "api.example.com", "/v1/items").endpoint["name"] == "write"
    assert route([live], "GET", "api.example.com", "/v1/other").endpoint["name"] == "root"
    with pytest.raises(Final) as refused:
        route([live], "DELETE", "api.example.com", "/v1/items/7")
    assert refused.value.answer.status == 405
    assert dict(refused.value.answer.headers)["Allow"] == "GET, POST, PUT"


def test_a_public_domain_with_a_port_must_match_the_port() -> None:
    ep = {**_endpoint("e", "/x", ["get"]), "publicDomains": [{"address": "api.example.com:8443"}]}
    live = LiveArea("a", services=[{"id": "s", "endpoints": [ep]}])
    assert route([live], "GET", "api.example.com:8443", "/x").endpoint["name"] == "e"
    with pytest.raises(Final):
        route([live], "GET", "api.example.com", "/x")


def test_domains_are_matched_without_case_or_spaces_and_ties_go_to_the_first_area() -> None:
    first = LiveArea("a", services=[{"id": "s", "endpoints": [
        {**_endpoint("first", "/v1", ["get"]), "publicDomains": [{"address": " API.Example.com "}]}]}])
    second = LiveArea("b", services=[{"id": "t", "endpoints": [
        _endpoint("second", "/v1", ["get"]), _endpoint("deeper", "/v1/deep", ["get"])]}])
    assert route([first, second], "GET", "api.example.com:8080", "/v1/x").endpoint["name"] == "first"
    assert route([second, first], "GET", "api.example.com", "/v1/x").endpoint["name"] == "second"
    assert route([first, second], "GET", "API.EXAMPLE.COM", "/v1/deep/x").endpoint["name"] == "deeper"


def test_plain_http_to_an_ssl_endpoint_is_refused(area: Area) -> None:
    key = area.keys["free"]
    response = area.call("GET", f"/v2/secure?api_key={key}")
    assert response.status_code == 403
    assert response.headers[area.error_header] == "ERR_403_SERVICE_REQUIRES_SSL"
    assert area.traffic.get(f"https://{HOST}/v2/secure?api_key={key}").status_code == 200
    assert area.call("GET", f"/v2/secure?api_key={key}", headers={"X-Forwarded-Proto": "https"}).status_code == 200


def test_maintenance_window_on_the_virtual_clock(area: Area) -> None:
    key = area.keys["free"]
    try:
        area.clock.now = T0 + 12 * 3600  # 2030-03-18T05:46:40Z: after the window
        assert area.call("GET", f"/v2/maintained?api_key={key}").status_code == 200
        area.clock.now = T0 + 9 * 3600  # 02:46:40Z: inside [02:00, 04:00)
        inside = area.call("GET", f"/v2/maintained?api_key={key}")
        assert inside.status_code == 503
        assert inside.headers[area.error_header] == "ERR_503_SERVICE_UNAVAILABLE"
        assert area.call("GET", f"/v2/open?api_key={key}").status_code == 200  # other endpoints serve
    finally:
        area.clock.now = T0


def test_an_update_through_the_management_api_is_visible_to_the_next_call(area: Area) -> None:
    ep = area.endpoint("Open")
    path = f"/services/{area.service['id']}/endpoints/{ep['id']}"
    assert area.call("GET", "/v2/open").status_code == 200
    assert area.api("PUT", path, json={"allowMissingApiKey": False}).status_code == 200
    try:
        refused = area.call("GET", "/v2/open")
        assert refused.headers[area.error_header] == "ERR_403_NOT_AUTHORIZED"
    finally:
        assert area.api("PUT", path, json={"allowMissingApiKey": True}).status_code == 200
    assert area.call("GET", "/v2/open").status_code == 200


def test_a_new_alias_routes_the_next_call_and_the_old_one_no_longer(area: Area) -> None:
    ep = area.endpoint("Open")
    path = f"/services/{area.service['id']}/endpoints/{ep['id']}"

    def status(alias: str) -> int:
        area.clock.now += 1  # a second apart: the keyless plan's QPS limit stays out of it
        return area.call("GET", alias).status_code

    try:
        assert status("/v2/open") == 200  # the area's route table is made
        assert area.api("PUT", path, json={"requestPathAlias": "/v2/opened", "allowMissingApiKey": True}).status_code == 200
        assert (status("/v2/opened"), status("/v2/open")) == (200, 596)
        assert area.api("PUT", path, json={"requestPathAlias": "/v2/open", "allowMissingApiKey": True}).status_code == 200
        assert (status("/v2/open"), status("/v2/opened")) == (200, 596)
    finally:
        area.clock.now = T0


def test_operator_traffic_lists_calls_with_the_deciding_step(area: Area) -> None:
    area.call("GET", f"/v2/secure?api_key={area.keys['free']}")
    assert area.management.get("/operator/traffic").status_code == 401
    calls = area.management.get("/operator/traffic", headers={"Authorization": "Bearer traffic-operator"}).json()
    last = calls[-1]
    assert (last["path"], last["status"], last["decidedBy"]) == ("/v2/secure", 403, "transport")
    assert [s["step"] for s in last["steps"]] == ["route", "transport"]
    one = area.management.get("/operator/traffic", params={"id": last["id"]},
                              headers={"Authorization": "Bearer traffic-operator"}).json()
    assert one == [last]
