"""The apply lease in ``apimctl.applying.command.apply``: taken after the refusals and the
question, before the first write; the plan checked again under it; released on every exit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.lease import LeaseHeld
from apimctl.errors import Invalid, PlanError, ServerError
from apimctl.kinds.role import LEASE_NAME
from apimctl.plans.model import Plan
from apimctl.plans.result import ApplyResult

from ..areakit import ROLES, FakeArea, role

ROLES_YAML = "roles: [Partners, Interns]\n"


class UniqueRoles(FakeArea):
    """Role names are unique, as on the platform: that is what makes the lease atomic."""

    def __init__(self, rows: dict[str, list[dict[str, Any]]] | None = None) -> None:
        super().__init__(rows)
        self.before_post: Callable[[dict[str, Any]], None] | None = None
        self.fail: str | None = None  # "POST /roles/1" etc.: raise a 500 on this write

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        if self.before_post is not None:
            self.before_post(body)
        if path == ROLES and any(r.get("name") == body.get("name") for r in self.rows.get(ROLES, [])):
            self.calls.append(("POST", path))
            raise Invalid(f"POST {ROLES}: 400 Bad Request: name: duplicate", status=400)
        if self.fail == f"POST {path}:{body.get('name')}":
            raise ServerError(f"POST {path}: 500 Internal Server Error", status=500)
        return await super().post(path, body, params)

    def lease(self) -> list[dict[str, Any]]:
        return [r for r in self.rows.get(ROLES, []) if r.get("name") == LEASE_NAME]


def held(expires: float = 4_000_000_000.0, run_id: str = "other-run") -> dict[str, Any]:
    text = json.dumps({"user": "ci", "host": "runner-7", "started": "2026-01-01T00:00:00Z",
                       "run_id": run_id, "expires": expires})
    return role(LEASE_NAME, "lease-1", description=f"apimctl apply lease {text}")


def run(request: ApplyRequest, area: FakeArea, **callbacks: Any) -> ApplyResult:
    return asyncio.run(apply(request, area.connect, **callbacks))


def test_the_lease_wraps_the_writes(manifests: Callable[..., str]) -> None:
    area = UniqueRoles()
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area)
    assert result.ok and result.write_calls == 4  # every call counts, the lease's too
    assert result.calls == len(area.calls)
    writes = area.writes()
    assert writes[0] == ("POST", ROLES) and writes[-1][0] == "DELETE" and len(writes) == 4
    assert area.lease() == [] and sorted(r["name"] for r in area.rows[ROLES]) == ["Interns", "Partners"]


def test_no_lock_writes_only_the_plan(manifests: Callable[..., str]) -> None:
    area = UniqueRoles({ROLES: [held()]})
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),), lock=False), area)
    assert result.ok and area.writes() == [("POST", ROLES), ("POST", ROLES)]
    assert len(area.lease()) == 1  # someone else's lease, untouched


def test_a_held_lease_refuses_naming_the_holder(manifests: Callable[..., str]) -> None:
    area = UniqueRoles({ROLES: [held()]})
    notes: list[str] = []
    with pytest.raises(LeaseHeld) as refused:
        run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area, notice=notes.append)
    message = str(refused.value)
    assert "ci@runner-7" in message and "other-run" in message and "apimctl unlock other-run" in message
    assert refused.value.exit_code == 1
    assert area.writes() == [("POST", ROLES)]  # the refused create of the lease, nothing else
    assert [r["name"] for r in area.rows[ROLES]] == [LEASE_NAME]


def test_a_refused_or_empty_apply_takes_no_lease(manifests: Callable[..., str]) -> None:
    area = UniqueRoles({ROLES: [role("Partners", "r1"), role("Interns", "r2")]})
    assert run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area).ok
    with pytest.raises(PlanError, match="max-deletes"):
        run(ApplyRequest(paths=(manifests("roles: [Other]\n"),), prune=True, max_deletes=0), area)
    declined = run(ApplyRequest(paths=(manifests("roles: [Other]\n"),)), area, confirm=lambda plan: False)
    assert declined.cancelled and area.writes() == []


def test_a_stale_lease_is_taken_over(manifests: Callable[..., str]) -> None:
    area = UniqueRoles({ROLES: [held(expires=1.0)]})
    notes: list[str] = []
    assert run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area, notice=notes.append).ok
    assert any("stale" in n and "ci@runner-7" in n for n in notes)
    assert area.lease() == []


def test_the_plan_is_made_again_under_the_lease(manifests: Callable[..., str]) -> None:
    """The second of two serialised applies: what the first created is not created again."""
    area = UniqueRoles()

    def first_apply_done(body: dict[str, Any]) -> None:  # between planning and the lease
        if body.get("name") == LEASE_NAME and not area.rows.get(ROLES):
            area.rows[ROLES] = [role("Partners", "r1"), role("Interns", "r2")]

    area.before_post = first_apply_done
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area)
    assert result.ok and result.plan is not None and not result.plan.steps
    assert [w[0] for w in area.writes()] == ["POST", "DELETE"]  # the lease only
    assert sorted(r["name"] for r in area.rows[ROLES]) == ["Interns", "Partners"]


def test_a_confirmed_plan_that_changed_under_the_lease_is_refused(manifests: Callable[..., str]) -> None:
    area = UniqueRoles()
    shown: list[Plan] = []

    def confirm(plan: Plan) -> bool:
        shown.append(plan)
        area.rows[ROLES] = [role("Partners", "r1")]  # another apply while the user read
        return True

    with pytest.raises(PlanError, match="changed while the plan waited for confirmation"):
        run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area, confirm=confirm)
    # the lease taken, renewed after the question (it may have outlived it), released
    assert len(shown) == 1 and [w[0] for w in area.writes()] == ["POST", "PUT", "DELETE"]
    assert area.lease() == []


def test_the_lease_is_released_after_an_error(manifests: Callable[..., str]) -> None:
    area = UniqueRoles()
    area.fail = f"POST {ROLES}:Partners"
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),), parallelism=1), area)
    assert result.failed and area.lease() == []


def test_the_lease_is_released_on_cancellation(manifests: Callable[..., str]) -> None:
    area = UniqueRoles()
    started = asyncio.Event()

    async def scenario() -> None:
        original = area.put

        async def hang(path: str, body: Any, params: Any = None) -> Any:
            started.set()
            await asyncio.sleep(3600)
            return await original(path, body, params)

        area.rows[ROLES] = [role("Partners", "r1", description="old")]
        area.put = hang  # type: ignore[method-assign]
        task = asyncio.create_task(apply(ApplyRequest(paths=(manifests("roles: [{name: Partners, description: new}]\n"),)),
                                         area.connect))
        await asyncio.wait_for(started.wait(), 10)
        assert len(area.lease()) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert area.lease() == []


def test_a_create_of_the_lease_with_an_unknown_outcome_is_looked_up(manifests: Callable[..., str]) -> None:
    area = UniqueRoles()
    original = FakeArea.post

    async def lost_reply(self: FakeArea, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        made = await original(self, path, body, params)
        if body.get("name") == LEASE_NAME and len(self.writes()) == 1:
            raise ServerError(f"POST {path}: 502 Bad Gateway", status=502)
        return made

    area.post = lost_reply.__get__(area)  # type: ignore[method-assign]
    assert run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area).ok
    assert area.lease() == []
