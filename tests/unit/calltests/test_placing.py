"""The caller's side of ``apimctl call`` and ``apimctl test``: the key put where the routed
endpoint reads it; the endpoint chosen as the traffic manager chooses it (the reference
server's router is the oracle here, the reconciler never imports it); the fields read name
every field (no nested wildcard, SUPPLEMENT §10.10.8)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.calltests.placing import CALLER_FIELDS, place_key, serving
from apimctl.server.traffic.area import Area
from apimctl.server.traffic.model import Final
from apimctl.server.traffic.route import route


def _services(endpoint: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"id": "s", "endpoints": [endpoint]}]


def test_a_key_is_placed_where_the_endpoint_reads_it() -> None:
    endpoint: dict[str, Any] = {"id": "e", "requestPathAlias": "/v1", "supportedHttpMethods": ["get", "post"],
                                "publicDomains": [{"address": "api.example.com"}]}
    services = _services(endpoint)
    url = "https://api.example.com/v1/x?a=1"
    assert place_key(services, "GET", url, [], b"", "k") == ("https://api.example.com/v1/x?a=1&api_key=k", [], b"")
    assert place_key(services, "DELETE", url, [], b"", "k") == (url, [], b"")  # no endpoint: left alone
    endpoint.update(apiKeyValueLocations=["request-header"], apiKeyValueLocationKey="X-Key")
    assert place_key(services, "GET", url, [], b"", "k") == (url, [("X-Key", "k")], b"")
    endpoint.update(apiKeyValueLocations=["request-path"], apiKeyValueLocationKey="2")
    assert place_key(services, "GET", "https://api.example.com/v1/placeholder/more", [], b"", "k")[0] == \
        "https://api.example.com/v1/k/more"
    endpoint.update(apiKeyValueLocations=["request-body"], apiKeyValueLocationKey="key")
    json_type = [("Content-Type", "application/json")]
    assert place_key(services, "POST", url, json_type, b'{"a": 1}', "k")[2] == b'{"a": 1, "key": "k"}'
    assert place_key(services, "POST", url, [], b"a=1", "k") == (
        url, [("Content-Type", "application/x-www-form-urlencoded")], b"a=1&key=k")


def test_the_services_read_name_every_field() -> None:
    fields = CALLER_FIELDS.split(",")
    assert not any("*" in f for f in fields)
    for needed in ("endpoints.requestPathAlias", "endpoints.publicDomains.address", "endpoints.supportedHttpMethods",
                   "endpoints.apiKeyValueLocations", "endpoints.apiKeyValueLocationKey"):
        assert needed in fields


HOSTS = ("api.example.com", "api.example.com:8443", "other.example.com")
ALIASES = ("", "/", "/v1", "/v1/", "/v1/forecast", "/v2", "v1")
METHODS = ("get", "post", "put")

endpoints = st.lists(st.fixed_dictionaries({
    "requestPathAlias": st.sampled_from(ALIASES),
    "publicDomains": st.lists(st.sampled_from(HOSTS).map(lambda h: {"address": h}), max_size=2),
    "supportedHttpMethods": st.lists(st.sampled_from(METHODS), min_size=1, max_size=3, unique=True),
    "apiKeyValueLocationKey": st.sampled_from(("api_key", "k")),
}), min_size=1, max_size=6)


@settings(max_examples=80, deadline=None)
@given(endpoints, st.sampled_from(("GET", "POST", "PUT")), st.sampled_from(("api.example.com", "api.example.com:8443",
                                                                            "other.example.com:80")),
       st.sampled_from(("/", "/v1", "/v1/forecast", "/v1/forecast/daily", "/v2/x", "/v10")))
def test_the_endpoint_chosen_is_the_one_the_traffic_manager_routes_to(
        found: list[dict[str, Any]], method: str, host: str, path: str) -> None:
    for i, endpoint in enumerate(found):
        endpoint["id"] = f"e{i}"
    services = [{"id": "s1", "endpoints": found[:3]}, {"id": "s2", "endpoints": found[3:]}]
    try:
        expected: dict[str, Any] | None = route([Area("a", services=services)], method, host, path).endpoint
    except Final:
        expected = None
    assert serving(services, method, host, path) is expected
    url, _, _ = place_key(services, method, f"https://{host}{path}", [], b"", "the-key")
    query = dict(parse_qsl(urlsplit(url).query))
    if expected is None:
        assert query == {}
    else:
        assert query == {expected["apiKeyValueLocationKey"]: "the-key"}
