"""The pure parts of export, without a server: variable names, escaping, layouts, and output
that does not depend on the order in which the API lists objects or keys."""

from __future__ import annotations

import random
import re
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl import kinds
from apimctl.export import (
    escape_literal,
    export_state,
    layout_files,
    schema_url,
    service_file_names,
    variable_names,
)
from apimctl.kinds.dialects import dialect_of
from apimctl.manifests.variables import substitute
from apimctl.state.live import from_raw

from .dialect_support import MASHERY, foreign_words, message_default, spoken


def test_variable_names_are_deterministic_and_never_collide() -> None:
    plain = ("Weather", "Forecast", "BACKEND_SECRET")
    a, b = ("A-B", "Forecast", "BACKEND_SECRET"), ("A B", "Forecast", "BACKEND_SECRET")
    names = variable_names([plain, a, b, a])
    assert names[plain] == "WEATHER_FORECAST_BACKEND_SECRET"
    assert names[a] != names[b]
    assert names[a].startswith("A_B_FORECAST_BACKEND_SECRET_")
    assert names[b].startswith("A_B_FORECAST_BACKEND_SECRET_")
    assert variable_names([("2024 API", "Ünïcode ☃", "BACKEND_SECRET")]) == {
        ("2024 API", "Ünïcode ☃", "BACKEND_SECRET"): "_2024_API_UNICODE_BACKEND_SECRET"}
    assert variable_names([("天气", "x", "BACKEND_SECRET")])[("天气", "x", "BACKEND_SECRET")] == "X_BACKEND_SECRET"


def test_variable_names_do_not_move_when_another_service_appears() -> None:
    """A variable keeps naming the same endpoint: a newcomer whose name folds alike must not
    take over the variable (and so the secret value) of an existing endpoint."""
    first, newcomer = ("a-b", "Forecast", "BACKEND_SECRET"), ("A B", "Forecast", "BACKEND_SECRET")
    third = ("A:B", "Forecast", "BACKEND_SECRET")
    before = variable_names([first, newcomer])
    after = variable_names([newcomer, first, third])
    assert before[first] == after[first] and before[newcomer] == after[newcomer]
    assert len(set(after.values())) == 3
    for order in ([first, newcomer, third], [third, newcomer, first]):
        assert variable_names(order) == after


@given(st.text(alphabet=st.sampled_from("${}ab:-_\n"), max_size=30))
@settings(max_examples=200, deadline=None)
def test_escaped_strings_survive_substitution(text: str) -> None:
    result = substitute(escape_literal(text), {})
    assert result.text == text and not result.problems


def test_per_service_file_names_do_not_collide() -> None:
    docs = {"services": [{"name": "A B"}, {"name": "a-b"}, {"name": "***"}, {"name": "Ünïcode ☃"},
                         {"name": "a/b"}, {"name": "天气"}, {"name": "${HOME} api"}], "roles": ["R"]}
    files = layout_files(docs, "per-service")
    names = [f.name for f in files]
    assert len(set(names)) == len(names) == 8
    assert "roles.yaml" in names and "service-unicode.yaml" in names
    assert "service-home-api.yaml" in names
    assert all(re.fullmatch(r"[a-z0-9.-]+", n) for n in names)
    # names that slug alike each get a suffix of their own; nothing slugs to a bare "service-"
    assert sorted(n for n in names if n.startswith("service-a-b")) == sorted(
        service_file_names(["A B", "a-b", "a/b"]).values())
    assert all(n.startswith("service-a-b-") for n in names if n.startswith("service-a-b"))
    by_service = {yaml.safe_load(f.text)["services"][0]["name"]: f.name for f in files
                  if f.name.startswith("service-")}
    assert by_service["${HOME} api"] == "service-home-api.yaml"
    single = layout_files(docs, "single")
    assert [f.name for f in single] == ["apimctl.yaml"]
    assert single[0].text.startswith(f"# yaml-language-server: $schema={schema_url()}\n")


def test_the_modeline_names_the_schema_of_this_release() -> None:
    from apimctl import __version__

    assert schema_url() == ("https://raw.githubusercontent.com/apimctl/apimctl/"
                            f"v{__version__}/schemas/manifest.schema.json")


def test_per_service_file_names_are_stable_when_services_come_and_go() -> None:
    """A file always holds the same service: a colliding newcomer never takes an existing
    service's file (git would show one service's history in another's file)."""
    before = service_file_names(["a-b", "Weather"])
    after = service_file_names(["A B", "a-b", "Weather", "a b"])
    assert before["Weather"] == after["Weather"] == "service-weather.yaml"
    assert after["a-b"] not in {after["A B"], after["a b"]}
    assert service_file_names(["a b", "A B", "a-b"]) == {n: after[n] for n in ("a b", "A B", "a-b")}
    assert service_file_names(["x" * 300])["x" * 300] == f"service-{'x' * 60}.yaml"


def _raw(dialect: str) -> dict[str, list[dict[str, Any]]]:
    """An area as ``dialect`` lists it: its enum words, its defaults (a ``mashery`` endpoint
    returns ``mashery-responder`` unless told not to), ``roles: null`` for none (§10.7)."""
    endpoint = {
        "id": "e1", "name": "Forecast", "requestPathAlias": "/f", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "www.example.com"}, {"address": "api.example.com"}],
        "systemDomains": [{"address": "b.example.net"}],
        "supportedHttpMethods": ["post", "get"], "apiKeyValueLocations": "request-header",
        "cors": {"maxAge": 5, "allDomainsEnabled": True, "domainsAllowed": []},
        "processor": {"preInputs": {"z": "1", "a": "2"}, "adapter": "x"},
        "methods": [{"id": "m2", "name": "b"}, {"id": "m1", "name": "a", "sampleJsonResponse": "{}"}],
        "errorSet": {"id": "s1", "name": "Errors"},
        "forwardedHeaders": spoken(dialect, ["svc-service-id", "svc-host"]),
        "returnedHeaders": ["mashery-responder"] if dialect == MASHERY else [],
    }
    no_roles: dict[str, Any] = {"roles": None} if dialect == MASHERY else {}  # a role-less plan
    messages = [
        {"id": "ERR_502_BAD_GATEWAY", "code": 502, "status": "Bad Gateway", "responseBody": "x"},
        {"id": "ERR_400_BAD_REQUEST", "code": 400, "status": "Nope"}]
    if dialect == MASHERY:  # the rest of the catalog as the area lists it, at the dialect's defaults
        messages += [{"id": mid, "code": code, "status": status, "detailHeader": message_default(dialect, mid),
                      "responseBody": ""}
                     for mid, (code, status) in kinds.ERROR_CATALOG.items()
                     if mid not in ("ERR_502_BAD_GATEWAY", "ERR_400_BAD_REQUEST")]
    return {
        "domain": [{"id": "d2", "domain": "example.net"}, {"id": "d1", "domain": "example.com"}],
        "role": [{"id": "r2", "name": "Zeta"}, {"id": "r1", "name": "Alpha", "description": "x"}],
        "service": [{
            "id": "s", "name": "Weather", "version": 2, "roles": [{"id": "r2"}, {"id": "r1"}],
            "errorSets": [{"id": "s1", "name": "Errors", "errorMessages": messages}],
            "endpoints": [endpoint, {**endpoint, "id": "e2", "name": "Alerts", "requestPathAlias": "/a"}],
        }],
        "package": [{"id": "p", "name": "P", "eav": {"b": 1, "a": {"y": 2, "x": 1}}, "plans": [
            {"id": "pl2", "name": "Silver", "roles": [{"id": "r1"}]},
            {"id": "pl1", "name": "Gold", **no_roles, "services": [{"id": "s", "endpoints": [
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


def test_output_does_not_depend_on_api_order(dialect: str) -> None:
    target = dialect_of(dialect)
    expected = export_state(from_raw(_raw(dialect)), dialect=target).files[0].text
    for seed in range(20):
        raw = _shuffled(_raw(dialect), random.Random(seed))
        # the first error set is the endpoints' default: keep the service's set order meaningful
        raw["service"][0]["errorSets"] = _raw(dialect)["service"][0]["errorSets"]
        assert export_state(from_raw(raw), dialect=target).files[0].text == expected
    assert [w for w in foreign_words(dialect) if w in expected] == []
    doc = yaml.safe_load(expected)
    forecast = next(e for e in doc["services"][0]["endpoints"] if e["name"] == "Forecast")
    assert forecast["publicDomains"] == ["api.example.com", "www.example.com"]
    assert forecast["supportedHttpMethods"] == ["get", "post"]
    assert forecast["apiKeyValueLocations"] == ["request-header"]
    assert forecast["forwardedHeaders"] == spoken(dialect, ["svc-host", "svc-service-id"])  # the area's words
    assert "returnedHeaders" not in forecast  # the dialect's default
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


def test_fields_the_manifests_cannot_hold_are_dropped_and_reported(dialect: str) -> None:
    raw = _raw(dialect)
    endpoint = raw["service"][0]["endpoints"][0]
    endpoint["stringsToTrimFromApiKey"] = "x"  # only on maintenance-event endpoints
    endpoint["cors"]["vendorExtension"] = True  # both endpoints share this cors object
    result = export_state(from_raw(raw), dialect=dialect_of(dialect))
    assert sorted(result.dropped) == ["services[0].endpoints[0].cors.vendorExtension",
                                      "services[0].endpoints[1].cors.vendorExtension",
                                      "services[0].endpoints[1].stringsToTrimFromApiKey"]
    assert "vendorExtension" not in result.files[0].text
    assert "stringsToTrimFromApiKey" not in result.files[0].text
    assert export_state(from_raw(_raw(dialect)), dialect=dialect_of(dialect)).dropped == []


@given(st.text(alphabet=st.sampled_from("ab :#-'\"\n\t ${}é☃\u2028\u2029\x85\r\\|>"), max_size=25),
       st.text(alphabet=st.sampled_from("ab :#-'\"\n ${}é\\"), min_size=1, max_size=12))
@settings(max_examples=150, deadline=None)
def test_any_text_reads_back_exactly(description: str, name: str) -> None:
    """Whatever text the area holds (newlines, quotes, ``${``, YAML punctuation, other line
    breaks), the exported manifest reads back, through the manifest loader, to the same text."""
    import tempfile
    from pathlib import Path

    from apimctl.manifests import load_manifests

    text = export_state(from_raw({"role": [{"id": "r", "name": name, "description": description}]}))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "roles.yaml"
        path.write_text(text.files[0].text, encoding="utf-8")
        roles = load_manifests([str(path)], [], env={}).doc["roles"]
    role = roles[0] if isinstance(roles[0], dict) else {"name": roles[0]}
    assert role["name"] == name
    assert role.get("description", "") == description
