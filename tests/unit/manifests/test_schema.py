"""The manifest JSON Schema itself: well-formed, described, closed, and faithful to the
specification's enums; the fast validity gate agrees with jsonschema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.manifests import manifest_schema
from apimctl.manifests.schema import checker

ROOT = Path(__file__).resolve().parents[3]


def objects(node: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if "properties" in node:
            yield path, node
        for key, value in node.items():
            yield from objects(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from objects(value, f"{path}/{index}")


def test_schema_is_valid_draft_2020_12() -> None:
    schema = manifest_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_top_level_schema_is_a_copy_of_the_packaged_schema() -> None:
    """A real file (editors and checkouts without symlinks read it), identical to the one the
    package ships."""
    copy = ROOT / "schemas" / "manifest.schema.json"
    assert not copy.is_symlink()
    packaged = ROOT / "src" / "apimctl" / "schemas" / "manifest.schema.json"
    assert copy.read_bytes() == packaged.read_bytes()


def test_every_field_has_a_description_and_objects_are_closed() -> None:
    found = 0
    for path, obj in objects(manifest_schema()):
        assert obj.get("additionalProperties") is False, path
        for name, field in obj["properties"].items():
            found += 1
            assert field.get("description"), f"{path}/{name}"
    assert found > 150


def test_specification_enums() -> None:
    defs = manifest_schema()["$defs"]
    endpoint = defs["endpoint"]["properties"]
    assert endpoint["connectionTimeoutForSystemDomainRequest"]["enum"] == [2, 5, 10, 20, 30, 45, 60]
    assert endpoint["connectionTimeoutForSystemDomainResponse"]["enum"] == [2, 5, 10, 20, 30, 45, 60, 120, 300, 600, 900, 1200]
    assert endpoint["requestProtocol"]["enum"] == ["rest", "soap", "xml-rpc", "json-rpc", "other"]
    assert endpoint["outboundTransportProtocol"]["enum"] == ["use-inbound", "http", "https"]
    assert endpoint["apiKeyValueLocations"]["items"]["enum"] == [
        "request-parameters", "request-path", "request-body", "request-header", "custom"]
    assert defs["plan"]["properties"]["rateLimitPeriod"]["enum"] == ["minute", "hour", "day", "month"]
    assert defs["package"]["properties"]["notifyDeveloperPeriod"]["enum"] == ["minute", "hour", "day", "week", "month"]
    assert len(defs["errorMessage"]["properties"]["id"]["enum"]) == 23
    assert defs["systemDomainAuthentication"]["properties"]["type"]["enum"] == ["httpBasic", "clientSslCert"]
    # every kind except domains can be pinned and renamed; methods and response filters are
    # matched by name inside their endpoint (a renamed one is deleted and created again)
    for kind in ("service", "endpoint", "errorSet", "package", "plan", "roleObject", "maintenanceEvent"):
        assert {"id", "previousNames"} <= set(defs[kind]["properties"]), kind
    for kind in ("domainObject", "method", "responseFilter"):
        assert not {"id", "previousNames"} & set(defs[kind]["properties"]), kind


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 2000) | st.sampled_from(
        ["", "x", "get", "day", "oauth", "example.com", "2026-12-01T02:00:00Z", "ERR_400_BAD_REQUEST", "service:x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["name", "endpoints", "cors", "maxAge", "methods", "requestPathAlias", "trafficManagerDomain",
                         "plans", "services", "errorSets", "id", "type", "supportedHttpMethods", "x"]),
        inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["services", "packages", "roles", "domains", "scheduledMaintenanceEvents"]),
       value=json_values)
def test_fast_gate_never_accepts_what_jsonschema_rejects(kind: str, value: Any) -> None:
    validator = checker().kinds[kind]
    if validator.fast is None:
        return
    try:
        validator.fast(value)
    except Exception:
        return
    assert validator.full.is_valid(value)
