"""Property tests: generated valid manifests validate; mutated manifests never raise and
always yield either a valid result or located problems."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.manifests import validate
from apimctl.manifests.pipeline import ValidationResult

NAME = st.text(alphabet="abcXYZ09 -_.éø中", min_size=1, max_size=10).filter(lambda s: s.strip() == s and s)
METHODS = ["get", "post", "put", "delete", "head", "options", "patch"]
CATALOG = ["ERR_400_BAD_REQUEST", "ERR_403_NOT_AUTHORIZED", "ERR_403_DEVELOPER_OVER_QPS", "ERR_504_GATEWAY_TIMEOUT"]
FILE_LEVEL = ("no objects found",)


@st.composite
def endpoints(draw: st.DrawFn, service: int, error_sets: list[str]) -> list[dict[str, Any]]:
    names = draw(st.lists(NAME, unique=True, max_size=4))
    out = []
    for index, name in enumerate(names):
        endpoint: dict[str, Any] = {
            "name": name,
            "requestPathAlias": f"/s{service}/e{index}",
            "trafficManagerDomain": "api.example.com",
            "publicDomains": draw(st.lists(st.sampled_from(["api.example.com", "www.example.com"]), unique=True)),
            "systemDomains": ["backend.example.net"],
        }
        optional = {
            "supportedHttpMethods": st.lists(st.sampled_from(METHODS), unique=True),
            "connectionTimeoutForSystemDomainRequest": st.sampled_from([2, 5, 10, 20, 30, 45, 60]),
            "requestProtocol": st.sampled_from(["rest", "soap", "xml-rpc", "json-rpc", "other"]),
            "highSecurity": st.booleans(),
            "numberOfHttpRedirectsToFollow": st.integers(0, 10),
            "cors": st.fixed_dictionaries({}, optional={"maxAge": st.integers(0, 10**6), "allDomainsEnabled": st.booleans(),
                                                        "domainsAllowed": st.lists(NAME, max_size=2)}),
            "cache": st.fixed_dictionaries({}, optional={"cacheTtlOverride": st.integers(0, 3600)}),
            "methods": st.lists(NAME, unique=True, max_size=3).map(lambda ms: [{"name": m} for m in ms]),
            "systemDomainCredentialSecret": st.just("${SECRET:-}"),
        }
        if error_sets:
            optional["errorSet"] = st.sampled_from(error_sets)
        for key in draw(st.lists(st.sampled_from(sorted(optional)), unique=True)):
            endpoint[key] = draw(optional[key])
        out.append(endpoint)
    return out


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = {"domains": ["example.com", {"domain": "example.net"}]}
    roles = draw(st.lists(NAME, unique=True, max_size=3))
    if roles:
        doc["roles"] = [r if draw(st.booleans()) else {"name": r} for r in roles]
    services = []
    for index, name in enumerate(draw(st.lists(NAME, unique=True, max_size=3))):
        service: dict[str, Any] = {"name": name}
        sets = draw(st.lists(NAME, unique=True, max_size=2))
        if sets:
            service["errorSets"] = [{"name": s, "errorMessages": [{"id": i} for i in draw(
                st.lists(st.sampled_from(CATALOG), unique=True, max_size=2))]} for s in sets]
        service["endpoints"] = draw(endpoints(index, sets))
        if roles and draw(st.booleans()):
            service["roles"] = draw(st.lists(st.sampled_from(roles), unique=True, min_size=1))
        services.append(service)
    if services:
        doc["services"] = services
        plans = []
        for plan in draw(st.lists(NAME, unique=True, max_size=2)):
            entitled = draw(st.lists(st.sampled_from(services), unique_by=lambda s: s["name"], max_size=2))
            plans.append({"name": plan, "rateLimitPeriod": draw(st.sampled_from(["minute", "hour", "day", "month"])),
                          "services": [{"name": s["name"]} if draw(st.booleans()) else
                                       {"name": s["name"], "endpoints": [e["name"] for e in s["endpoints"]]}
                                       for s in entitled]})
        doc["packages"] = [{"name": "Package", "plans": plans}]
        endpoint_refs = [{"service": s["name"], "endpoint": e["name"]} for s in services for e in s["endpoints"]]
        doc["scheduledMaintenanceEvents"] = [{
            "name": "Window", "startDateTime": "2026-12-01T02:00:00Z", "endDateTime": "2026-12-01T04:00:00.000+0000",
            "endpoints": draw(st.lists(st.sampled_from(endpoint_refs), unique_by=lambda r: tuple(r.values())))
            if endpoint_refs else []}]
    return doc


def run(text: str | bytes) -> ValidationResult:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.yaml")
        with open(path, "wb") as fh:
            fh.write(text.encode() if isinstance(text, str) else text)
        result = validate([path], env={})
        for problem in result.problems:
            problem_file = problem.file
            assert problem_file == path, problem
            assert problem.line >= 1 or problem.message.startswith(FILE_LEVEL), problem
            assert problem.message
        assert result.valid == (result.errors == 0)
        assert (result.manifest is not None) == result.valid
        return result


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=manifests())
def test_generated_manifests_validate(doc: dict[str, Any]) -> None:
    result = run(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))
    assert result.problems == []
    assert result.manifest is not None
    for package in result.manifest.doc.get("packages", []):
        for plan in package["plans"]:
            assert all(isinstance(e, dict) for s in plan["services"] for e in s["endpoints"])


JUNK = st.sampled_from([":", "-", "- ", "[", "]", "{", "}", "\t", "&a", "*a", "!x", "${X}", "$", "\x00", "#", "'",
                        '"', "\n", "  ", "<<: *a", "? ", "|", ">", "%", "@", "`", ",", "é", "\ufeff"])


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=manifests(), data=st.data())
def test_text_mutations_never_raise(doc: dict[str, Any], data: st.DataObject) -> None:
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["insert", "delete", "duplicate-line"]))
        if action == "insert":
            text = text[:at] + data.draw(JUNK) + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + data.draw(st.integers(1, 20)):]
        else:
            lines = text.splitlines(keepends=True) or [""]
            index = at % len(lines)
            text = "".join([*lines[:index], lines[index], *lines[index:]])
    run(text)


@settings(max_examples=40, deadline=None)
@given(doc=manifests(), data=st.data())
def test_byte_mutations_never_raise(doc: dict[str, Any], data: st.DataObject) -> None:
    raw = bytearray(yaml.safe_dump(doc, allow_unicode=True).encode())
    at = data.draw(st.integers(0, len(raw)))
    raw[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    run(bytes(raw))


any_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | NAME,
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAME, inner, max_size=3),
                        max_leaves=6)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*path, index))
    return out


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=manifests(), data=st.data())
def test_structural_mutations_never_raise(doc: dict[str, Any], data: st.DataObject) -> None:
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(any_json)
        else:
            del parent[path[-1]]
    run(yaml.safe_dump(doc, allow_unicode=True))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=manifests(), data=st.data())
def test_overlay_mutations_never_raise_and_stay_located(doc: dict[str, Any], data: st.DataObject) -> None:
    overlay = yaml.safe_load(yaml.safe_dump(doc))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(overlay) if len(p) > 1]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = overlay
        for part in path[:-1]:
            parent = parent[part]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(any_json)
        else:
            del parent[path[-1]]
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "prod"))
        for name, content in (("m.yaml", doc), (os.path.join("prod", "o.yaml"), overlay)):
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as fh:
                fh.write(yaml.safe_dump(content, allow_unicode=True))
        result = validate([os.path.join(tmp, "m.yaml")], [os.path.join(tmp, "prod")], env={})
    for problem in result.problems:
        assert problem.file.startswith(tmp) and problem.message, problem
        assert problem.line >= 1 or problem.message.startswith(FILE_LEVEL), problem
    assert (result.manifest is not None) == result.valid
