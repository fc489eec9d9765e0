"""Reading the live state with a fake lister: one list call per top-level kind with its
projection, and the translation of API objects into manifest shape (references by name, quirks
accepted). The call count against a reference server is in
``tests/integration/test_live_read_calls.py``."""

from __future__ import annotations

import asyncio
from typing import Any

from apimctl import kinds
from apimctl.state.live import from_raw, read_raw


class FakeLister:
    def __init__(self, data: dict[str, list[dict[str, Any]]]) -> None:
        self.data = data
        self.calls: list[tuple[str, Any, int, bool]] = []

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 100,
                       page_index: bool = False) -> list[dict[str, Any]]:
        self.calls.append((path, params, page_size, page_index))
        return self.data.get(path, [])


def test_one_list_call_per_top_level_kind_with_projection() -> None:
    lister = FakeLister({"/services": [{"id": "s1", "name": "W"}]})
    raw = asyncio.run(read_raw(lister))
    assert raw["service"] == [{"id": "s1", "name": "W"}]
    paths = sorted(c[0] for c in lister.calls)
    assert paths == sorted(k.path for k in kinds.TOP_LEVEL)
    for path, params, size, page_index in lister.calls:
        kind = next(k for k in kinds.TOP_LEVEL if k.path == path)
        assert ("fields", kind.fields_param()) in params and size == 1000
        assert page_index == (path == "/roles")


def test_translation_into_manifest_shape() -> None:
    raw = {
        "role": [{"id": "r1", "name": "Partners", "organization": {"id": "o", "name": "Org"}}],
        "service": [{"id": "s1", "name": "W", "revisionNumber": 7, "updated": "t",
                     "roles": [{"id": "r1", "name": "stale", "action": "read"}],
                     "errorSets": [{"id": "x1", "name": "First", "errorMessages": [
                         {"id": "ERR_502_BAD_GATEWAY", "code": 502, "status": "Bad"}]}],
                     "endpoints": [{"id": "e1", "name": "F", "errorSet": None,
                                    "apiKeyValueLocations": "request-header",
                                    "publicDomains": [{"address": "api.example.com"}],
                                    "systemDomainAuthentication": {"type": "httpBasic",
                                                                   "password": "never"},
                                    "methods": [{"id": "m", "name": "get", "created": "c",
                                                 "responseFilters": [{"id": "f", "name": "pub"}]}]}]}],
        "package": [{"id": "p1", "name": "P", "plans": [{"id": "q1", "name": "G", "services": [
            {"id": "s1", "name": "old name", "endpoints": [
                {"id": "e1", "name": "F", "methods": [{"id": "m", "name": "get"}]}]}],
            "roles": [{"id": "r1"}]}]}],
        "maintenanceEvent": [{"id": "v1", "name": "M", "endpoints": [{"id": "e1", "name": "F"}]}],
    }
    state = from_raw(raw)
    (role,) = state.of("role")
    assert role.doc["organization"] == "Org"
    (svc,) = state.of("service")
    assert svc.doc["roles"] == ["Partners"] and svc.revision == 7 and "endpoints" not in svc.doc
    (ep,) = state.of("endpoint")
    assert ep.key == "W/F" and ep.parent_id == "s1" and ep.doc["errorSet"] == "First"
    assert ep.doc["publicDomains"] == ["api.example.com"]
    assert "password" not in ep.doc["systemDomainAuthentication"]
    assert ep.doc["methods"] == [{"name": "get", "responseFilters": [{"name": "pub"}]}]
    (es,) = state.of("errorSet")
    assert es.doc["errorMessages"] == [{"id": "ERR_502_BAD_GATEWAY", "status": "Bad"}]
    (plan,) = state.of("plan")
    assert plan.key == "P/G" and plan.doc["roles"] == ["Partners"]
    assert plan.doc["services"] == [{"name": "W", "endpoints": [
        {"name": "F", "undefinedMethodsAllowed": True, "methods": ["get"]}]}]
    (event,) = state.of("maintenanceEvent")
    assert event.doc["endpoints"] == [{"service": "W", "endpoint": "F"}]
