"""The daily quota in ``apimctl apply``, as the platform's quota headers tell it: an apply that
cannot fit in what is left is refused up front, saying when it would fit; one that runs out of
it stops one call short, so that its lease is released (``apimctl.applying.budget``).

The area is served through the real client (``ApiClient``) by a mock transport that counts the
calls of the key and answers each with ``X-Packagekey-Quota-Allotted``, ``-Current`` and
``X-Plan-Quota-Reset``, and ``ERR_403_DEVELOPER_OVER_RATE`` once the quota is gone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest

from apimctl.api.calls import QuotaSeen
from apimctl.api.client import ApiClient
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.lease import LEASE_NAME
from apimctl.errors import PlanError

BASE = "https://apim.test/v3/rest"
RESET = "Monday, January 04, 2027 12:00:00 AM GMT"


class QuotaArea:
    """Roles behind a transport: every call counts against ``allotted`` calls a day."""

    def __init__(self, allotted: int, current: int = 0) -> None:
        self.allotted, self.current = allotted, current
        self.roles: list[dict[str, Any]] = []
        self.sent: list[tuple[str, str]] = []
        self.refused = 0
        self.after: Callable[[], None] = lambda: None  # run after each answered call

    def headers(self) -> dict[str, str]:
        return {"X-Packagekey-Quota-Allotted": str(self.allotted),
                "X-Packagekey-Quota-Current": str(self.current), "X-Plan-Quota-Reset": RESET}

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.current >= self.allotted:
            self.refused += 1
            return httpx.Response(403, headers={"X-Svc-Error-Code": "ERR_403_DEVELOPER_OVER_RATE"},
                                  json={"errorCode": 403, "errorMessage": "Developer Over Rate"})
        self.current += 1
        self.sent.append((request.method, request.url.path))
        try:
            status, body = self._answer(request)
            return httpx.Response(status, json=body, headers=self.headers())
        finally:
            self.after()

    def _answer(self, request: httpx.Request) -> tuple[int, Any]:
        path = request.url.path.removeprefix("/v3/rest")
        if path == "/roles" and request.method == "GET":
            field, _, values = request.url.params.get("filter", "").partition(":")
            return 200, [r for r in self.roles if not field or str(r.get(field)) in values.split("|")]
        if path == "/roles" and request.method == "POST":
            role = {"id": f"r{len(self.sent)}", **json.loads(request.content)}
            self.roles.append(role)
            return 200, role
        if path.startswith("/roles/") and request.method == "DELETE":
            self.roles = [r for r in self.roles if r["id"] != path.rsplit("/", 1)[1]]
            return 200, None
        if request.method == "GET":
            return 200, []
        return 404, {"errorCode": 404, "errorMessage": "not here"}

    def connect(self) -> AbstractAsyncContextManager[ApiClient]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[ApiClient]:
            async with ApiClient(BASE, token="t", qps=None, max_retries=0,
                                 transport=httpx.MockTransport(self.handle)) as client:
                yield client

        return opened()

    def created(self) -> list[str]:
        return sorted(r["name"] for r in self.roles)


def roles_yaml(count: int) -> str:
    return "roles: [" + ", ".join(f"R{i}" for i in range(count)) + "]\n"


def test_the_quota_headers_are_read() -> None:
    seen = QuotaSeen()
    seen.observe(httpx.Headers({"X-Packagekey-Quota-Allotted": "5000", "X-Packagekey-Quota-Current": "4990",
                                "X-Plan-Quota-Reset": RESET}))
    assert seen.left == 10 and seen.reset is not None and seen.reset.isoformat() == "2027-01-04T00:00:00+00:00"
    seen.observe(httpx.Headers({"Content-Type": "application/json"}))  # an answer without them
    assert seen.left == 10
    assert QuotaSeen().left is None


def test_an_apply_that_does_not_fit_in_what_the_headers_leave_is_refused(
        manifests: Callable[..., str]) -> None:
    area = QuotaArea(allotted=5000, current=4990)
    request = ApplyRequest(paths=(manifests(roles_yaml(12)),), target=BASE, lock=False, journaled=False)
    with pytest.raises(PlanError) as refused:
        asyncio.run(apply(request, area.connect))
    message = str(refused.value)
    assert "the daily quota of 5000 leaves" in message
    assert "it would fit after the quota resets at 2027-01-04 00:00 UTC" in message
    assert "nothing was written" in message
    assert not [c for c in area.sent if c[0] != "GET"] and area.roles == []


def test_an_apply_that_fits_is_applied(manifests: Callable[..., str]) -> None:
    area = QuotaArea(allotted=5000, current=4900)
    request = ApplyRequest(paths=(manifests(roles_yaml(12)),), target=BASE, lock=False, journaled=False)
    result = asyncio.run(apply(request, area.connect))
    assert result.exit_code == 0 and area.created() == [f"R{i}" for i in sorted(range(12), key=str)]


def test_a_run_out_of_quota_stops_one_call_short_and_releases_its_lease(
        manifests: Callable[..., str]) -> None:
    area = QuotaArea(allotted=5000, current=4900)
    burnt: list[bool] = []

    def burn() -> None:  # another user of the key spends the quota once the first role exists
        if not burnt and any(r["name"] == "R0" for r in area.roles):
            burnt.append(True)
            area.current = area.allotted - 3

    area.after = burn
    request = ApplyRequest(paths=(manifests(roles_yaml(12)),), target=BASE, journaled=False,
                           parallelism=1)
    result = asyncio.run(apply(request, area.connect))
    assert result.exit_code == 3 and result.stopped is not None
    assert "ERR_403_DEVELOPER_OVER_RATE" in result.stopped and "releasing the apply lease" in result.stopped
    assert area.refused == 0  # the platform never had to refuse a call
    assert LEASE_NAME not in area.created()  # released: the next apply takes it at once
    assert ("DELETE" in {m for m, _ in area.sent[-1:]})

