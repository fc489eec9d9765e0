"""The pure parts of export, without a server: variable names, escaping, layouts, and output
that does not depend on the order in which the API lists objects or keys."""

from __future__ import annotations

import random
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.export import VariableNames, escape_literal, export_state, layout_files, schema_url
from apimctl.live import from_raw
from apimctl.manifests.variables import substitute


def test_variable_names_are_deterministic_and_never_collide() -> None:
    names = VariableNames()
    first = names.name("A-B", "Forecast", "BACKEND_SECRET")
    again = names.name("A-B", "Forecast", "BACKEND_SECRET")
    other = names.name("A B", "Forecast", "BACKEND_SECRET")
    assert first == again == "A_B_FORECAST_BACKEND_SECRET"
    assert other == "A_B_FORECAST_BACKEND_SECRET_2"
    assert names.name("2024 API", "ü", "BACKEND_SECRET") == "_2024_API_BACKEND_SECRET"


@given(st.text(alphabet=st.sampled_from("${}ab:-_\n"), max_size=30))
@settings(max_examples=200, deadline=None)
def test_escaped_strings_survive_substitution(text: str) -> None:
    result = substitute(escape_literal(text), {})
    assert result.text == text and not result.problems


def test_per_service_file_names_do_not_collide() -> None:
    docs = {"services": [{"name": "A B"}, {"name": "a-b"}, {"name": "***"}], "roles": ["R"]}
    names = [f.name for f in layout_files(docs, "per-service")]
    assert names == ["roles.yaml", "service-a-b-2.yaml", "service-a-b.yaml", "service-unnamed.yaml"]
    single = layout_files(docs, "single")
    assert [f.name for f in single] == ["apimctl.yaml"]
    assert single[0].text.startswith(f"# yaml-language-server: $schema={schema_url()}\n")


def _raw() -> dict[str, list[dict[str, Any]]]:
    endpoint = {
        "id": "e1", "name": "Forecast", "requestPathAlias": "/f", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "www.example.com"}, {"address": "api.example.com"}],
        "systemDomains": [{"address": "b.example.net"}],
        "supportedHttpMethods": ["post", "get"], "apiKeyValueLocations": "request-header",
        "cors": {"maxAge": 5, "allDomainsEnabled": True, "domainsAllowed": []},
        "processor": {"preInputs": {"z": "1", "a": "2"}, "adapter": "x"},
        "methods": [{"id": "m2", "name": "b"}, {"id": "m1", "name": "a", "sampleJsonResponse": "{}"}],
        "errorSet": {"id": "s1", "name": "Errors"},
    }
    return {
        "domain": [{"id": "d2", "domain": "example.net"}, {"id": "d1", "domain": "example.com"}],
        "role": [{"id": "r2", "name": "Zeta"}, {"id": "r1", "name": "Alpha", "description": "x"}],
        "service": [{
            "id": "s", "name": "Weather", "version": 2, "roles": [{"id": "r2"}, {"id": "r1"}],
            "errorSets": [{"id": "s1", "name": "Errors", "errorMessages": [
                {"id": "ERR_502_BAD_GATEWAY", "code": 502, "status": "Bad Gateway", "responseBody": "x"},
                {"id": "ERR_400_BAD_REQUEST", "code": 400, "status": "Nope"}]}],
            "endpoints": [endpoint, {**endpoint, "id": "e2", "name": "Alerts", "requestPathAlias": "/a"}],
        }],
        "package": [{"id": "p", "name": "P", "eav": {"b": 1, "a": {"y": 2, "x": 1}}, "plans": [
            {"id": "pl2", "name": "Silver", "roles": [{"id": "r1"}]},
            {"id": "pl1", "name": "Gold", "services": [{"id": "s", "endpoints": [
                {"id": "e2", "undefinedMethodsAllowed": True},
                {"id": "e1", "undefinedMethodsAllowed": False, "methods": [{"id": "m2", "name": "b"}]}]}]}]}],
        "maintenanceEvent": [{"id": "ev", "name": "W", "startDateTime": "2027-01-16T02:00:00.000+0000",
                              "endDateTime": "2027-01-16T04:00:00Z",
                              "endpoints": [{"id": "e2"}, {"id": "e1"}]}],
    }


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same data with every list and every object's keys in another order (quirk §9)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        items = [_shuffled(v, rng) for v in value]
        rng.shuffle(items)
        return items
    return value


def test_output_does_not_depend_on_api_order() -> None:
    expected = export_state(from_raw(_raw())).files[0].text
    for seed in range(20):
        raw = _shuffled(_raw(), random.Random(seed))
        # the first error set is the endpoints' default: keep the service's set order meaningful
        raw["service"][0]["errorSets"] = _raw()["service"][0]["errorSets"]
        assert export_state(from_raw(raw)).files[0].text == expected
    doc = yaml.safe_load(expected)
    forecast = next(e for e in doc["services"][0]["endpoints"] if e["name"] == "Forecast")
    assert forecast["publicDomains"] == ["api.example.com", "www.example.com"]
    assert forecast["supportedHttpMethods"] == ["get", "post"]
    assert forecast["apiKeyValueLocations"] == ["request-header"]
    assert list(forecast["processor"]["preInputs"]) == ["a", "z"]
    assert "errorSet" not in forecast  # the service's only set: the default
    assert [m["id"] for m in doc["services"][0]["errorSets"][0]["errorMessages"]] == [
        "ERR_400_BAD_REQUEST", "ERR_502_BAD_GATEWAY"]
    assert doc["services"][0]["version"] == "2"
    assert doc["roles"] == [{"name": "Alpha", "description": "x"}, "Zeta"]
    gold = doc["packages"][0]["plans"][0]
    assert gold["services"] == [{"name": "Weather", "endpoints": [
        "Alerts", {"name": "Forecast", "undefinedMethodsAllowed": False, "methods": ["b"]}]}]
    assert doc["scheduledMaintenanceEvents"][0]["startDateTime"] == "2027-01-16T02:00:00Z"


def test_fields_the_manifests_cannot_hold_are_dropped_and_reported() -> None:
    raw = _raw()
    endpoint = raw["service"][0]["endpoints"][0]
    endpoint["stringsToTrimFromApiKey"] = "x"  # only on maintenance-event endpoints
    endpoint["cors"]["vendorExtension"] = True  # both endpoints share this cors object
    result = export_state(from_raw(raw))
    assert sorted(result.dropped) == ["services[0].endpoints[0].cors.vendorExtension",
                                      "services[0].endpoints[1].cors.vendorExtension",
                                      "services[0].endpoints[1].stringsToTrimFromApiKey"]
    assert "vendorExtension" not in result.files[0].text
    assert "stringsToTrimFromApiKey" not in result.files[0].text
    assert export_state(from_raw(_raw())).dropped == []
