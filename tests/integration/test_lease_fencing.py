"""The apply lease against areas that hide a role's description, in both dialects (the
``dialect`` fixture). A holder paused past the lease's lifetime, and duplicates as changes:
``test_lease_paused_holder``.

- Racing applies (8 at once, in one process) of manifests creating maintenance events, whose
  names the platform does not keep unique: against an area whose roles carry no
  ``description`` unless ``fields`` names it (SUPPLEMENT 10.10.8), and against one that never
  shows it, 0 duplicates, and the lease is released at the end.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl.api.client import ApiClient
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.lease import LeaseHeld
from apimctl.kinds.role import LEASE_NAME
from apimctl.plans.result import ApplyResult
from apimctl.server import ServerConfig, create_app

from .apply_support import Server

EVENTS = 6
RACERS = 8


def events_manifest(folder: Path, events: int = EVENTS) -> Path:
    """A role and ``events`` maintenance events (names the platform lets repeat)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["roles: [Partners]", "scheduledMaintenanceEvents:"]
    for i in range(events):
        lines += [f"  - name: Upgrade {i}", '    startDateTime: "2026-12-01T02:00:00Z"',
                  '    endDateTime: "2026-12-01T04:00:00Z"']
    (folder / "main.yaml").write_text("\n".join(lines) + "\n")
    return folder


def wanted(events: int = EVENTS) -> Counter[str]:
    return Counter({"role:Partners": 1, **{f"maintenanceEvent:Upgrade {i}": 1 for i in range(events)}})


# --- racing applies against an area that hides descriptions --------------------------------


class HiddenDescriptions(httpx.AsyncBaseTransport):
    """The reference server as an area that leaves a role's ``description`` out of its
    answers unless the request's ``fields`` names it (``always``: out of every answer)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, always: bool) -> None:
        self.inner, self.always = inner, always
        self.hidden = 0  # answers a description was taken out of
        self.unnamed = 0  # reads of the lease that did not name its description

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if "/roles" not in request.url.path:
            return response
        named = "description" in request.url.params.get("fields", "").split(",")
        if request.method == "GET" and LEASE_NAME in request.url.params.get("filter", "") and not named:
            self.unnamed += 1
        if named and not self.always:
            return response
        body = await response.aread()
        try:
            data = json.loads(body)
        except ValueError:
            return response
        items = data if isinstance(data, list) else [data]
        for item in items:
            if isinstance(item, dict) and item.pop("description", None) is not None:
                self.hidden += 1
        headers = [(k, v) for k, v in response.headers.items() if k.lower() != "content-length"]
        return httpx.Response(response.status_code, headers=headers, content=json.dumps(data).encode())


def race(app: Any, transport: HiddenDescriptions, folder: Path) -> list[ApplyResult | BaseException]:
    def connect() -> ApiClient:
        return ApiClient("http://apim.test/v3/rest", token="t", qps=None, transport=transport)

    async def all_at_once() -> list[ApplyResult | BaseException]:
        runs = [apply(ApplyRequest(paths=(str(folder),)), connect) for _ in range(RACERS)]
        return await asyncio.gather(*runs, return_exceptions=True)

    return asyncio.run(all_at_once())


async def holdings(transport: httpx.AsyncBaseTransport) -> Counter[str]:
    async with ApiClient("http://apim.test/v3/rest", token="t", qps=None, transport=transport) as c:
        found = Counter(f"role:{r['name']}" for r in await c.list_all("/roles", {"fields": "id,name"},
                                                                    page_index=True))
        found.update(f"maintenanceEvent:{e['name']}"
                     for e in await c.list_all("/scheduledMaintenanceEvents", {"fields": "id,name"}))
    return found


@pytest.mark.parametrize("always", [False, True], ids=["unless-named", "never"])
def test_racing_applies_never_duplicate_where_descriptions_are_hidden(
        tmp_path: Path, dialect: str, always: bool) -> None:
    app = create_app(ServerConfig(db_path=str(tmp_path / "s.db"), tokens={"t": "area-1"}, dialect=dialect))
    transport = HiddenDescriptions(httpx.ASGITransport(app=app), always=always)
    results = race(app, transport, events_manifest(tmp_path / "m"))
    done = [r for r in results if isinstance(r, ApplyResult)]
    refused = [r for r in results if isinstance(r, LeaseHeld)]
    assert len(done) + len(refused) == RACERS, [r for r in results if not isinstance(r, ApplyResult | LeaseHeld)]
    assert all(r.ok for r in done) and sum(len(r.done) for r in done) == EVENTS + 1
    assert refused  # the applies did overlap
    # the lease reads its description by name; where the area never shows it, the lease
    # still counts as held (not expired at once) and its holder knows it by its id
    assert transport.unnamed == 0
    assert all(("no readable description" in str(r)) == always for r in refused)
    assert transport.hidden > 0  # the area did hide descriptions
    found = asyncio.run(holdings(transport))
    assert found == wanted(), found  # every object once, and the lease released


def events_in(srv: Server, token: str) -> Counter[str]:
    return Counter(e["name"] for e in srv.get("/scheduledMaintenanceEvents", {"limit": "1000"}, token))
