"""Fencing: an apply writes only while its lease is known to be held (``apimctl.applying.fence``).

A paused holder is simulated with an injected monotonic clock (``ticks``) that jumps while a
write is answered, and "another apply" replaces the lease role meanwhile: nothing may be
written after that, the apply stops (exit 3, or 1 when nothing was written) and its summary
lists what was done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.fence import LeaseLost, Term
from apimctl.applying.lease import Holder, Lease, LeaseHeld, unreadable
from apimctl.kinds.role import LEASE_NAME
from apimctl.plans.result import ApplyResult

from ..areakit import ROLES, role
from .test_command_lease import UniqueRoles, held

TTL = 120.0
FOUR_ROLES = "roles: [R1, R2, R3, R4]\n"


class Ticks:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Pausing(UniqueRoles):
    """After the ``after``-th role of the plan is created, the holder "was paused" for
    ``pause`` seconds; with ``takeover`` another apply took the lease over meanwhile."""

    def __init__(self, ticks: Ticks, *, after: int, pause: float, takeover: bool) -> None:
        super().__init__()
        self.ticks, self.after, self.pause, self.takeover = ticks, after, pause, takeover
        self.created = 0
        self.paused_at: int | None = None  # index in ``calls`` of the pause

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        made = await super().post(path, body, params)
        if path == ROLES and body.get("name") != LEASE_NAME:
            self.created += 1
            if self.created == self.after:
                self.ticks.now += self.pause
                if self.takeover:
                    self.rows[ROLES] = [r for r in self.rows[ROLES] if r["name"] != LEASE_NAME]
                    self.rows[ROLES].append(held(run_id="taker-run"))
                self.paused_at = len(self.calls)
        return made

    def after_pause(self) -> list[tuple[str, str]]:
        assert self.paused_at is not None
        return [c for c in self.calls[self.paused_at:] if c[0] in ("POST", "PUT", "DELETE")]

    def roles(self) -> list[str]:
        return sorted(r["name"] for r in self.rows[ROLES] if r["name"] != LEASE_NAME)


def run(area: UniqueRoles, path: str, ticks: Ticks, notes: list[str] | None = None) -> ApplyResult:
    request = ApplyRequest(paths=(path,), parallelism=1)
    return asyncio.run(apply(request, area.connect, ticks=ticks,
                             notice=(notes.append if notes is not None else lambda line: None)))


def test_a_holder_paused_past_its_lifetime_writes_nothing_more(manifests: Callable[..., str]) -> None:
    ticks = Ticks()
    area = Pausing(ticks, after=2, pause=TTL + 1, takeover=True)
    notes: list[str] = []
    result = run(area, manifests(FOUR_ROLES), ticks, notes)
    assert area.after_pause() == []  # not even a renewal of the lease: it may be another's
    assert area.roles() == ["R1", "R2"]
    assert [o.address for o in result.done] == ["role:R1", "role:R2"]  # the summary says what was done
    assert result.stopped is not None and "apply lease was lost" in result.stopped
    assert "not renewed within its lifetime" in result.stopped
    assert result.exit_code == 3 and len(result.failed) + len(result.skipped) == 2
    assert [r["description"] for r in area.lease()] == [held(run_id="taker-run")["description"]]
    assert any("lease was lost" in n for n in notes)


def test_a_lease_taken_within_its_lifetime_is_noticed_before_the_next_write(
        manifests: Callable[..., str]) -> None:
    ticks = Ticks()
    area = Pausing(ticks, after=1, pause=TTL / 2, takeover=True)  # older than a third: confirmed
    result = run(area, manifests(FOUR_ROLES), ticks)
    assert area.after_pause() == []  # the confirmation read it back: another's, nothing written
    assert area.roles() == ["R1"] and result.exit_code == 3
    assert result.stopped is not None and "taken over by another apply" in result.stopped
    assert len(area.lease()) == 1  # the taker's, left alone


def test_a_stale_confirmation_is_renewed_before_the_next_write(manifests: Callable[..., str]) -> None:
    ticks = Ticks()
    area = Pausing(ticks, after=1, pause=TTL / 2, takeover=False)
    result = run(area, manifests(FOUR_ROLES), ticks)
    assert result.ok and area.roles() == ["R1", "R2", "R3", "R4"]
    writes = area.after_pause()
    assert writes[0] == ("PUT", f"{ROLES}/id1")  # the lease renewed first (its id: the first POST)
    assert [w[0] for w in writes[1:]] == ["POST", "POST", "POST", "DELETE"]


def test_a_fresh_confirmation_costs_no_call(manifests: Callable[..., str]) -> None:
    ticks = Ticks()
    area = Pausing(ticks, after=1, pause=TTL / 3 - 1, takeover=False)
    assert run(area, manifests(FOUR_ROLES), ticks).ok
    assert [w[0] for w in area.after_pause()] == ["POST", "POST", "POST", "DELETE"]


def test_a_lease_lost_before_the_first_write_writes_nothing(manifests: Callable[..., str]) -> None:
    ticks = Ticks()
    area = UniqueRoles()

    def pause(body: dict[str, Any]) -> None:  # the run stops right after creating its lease
        if body.get("name") == LEASE_NAME:
            ticks.now += TTL + 1

    area.before_post = pause
    result = run(area, manifests(FOUR_ROLES), ticks)
    assert result.exit_code == 1 and not result.done
    # no role of the plan; the lease, lost, is left to expire by itself
    assert area.writes() == [("POST", ROLES)] and len(area.lease()) == 1
    assert result.stopped is not None and "lease was lost" in result.stopped


# --- the term: deadlines of the writes in flight ---------------------------------------------


def test_a_write_waiting_when_the_lease_is_lost_is_cut() -> None:
    async def scenario() -> None:
        term = Term(TTL)
        term.confirm(term.ticks())
        sent: list[str] = []

        async def slow_write() -> None:
            await asyncio.sleep(30)  # e.g. a retry's back-off
            sent.append("write")

        task = asyncio.create_task(term.within(slow_write))
        await asyncio.sleep(0.01)
        assert term.lose("taken over")
        with pytest.raises(LeaseLost, match="taken over"):
            await asyncio.wait_for(task, 2)
        assert sent == []
        with pytest.raises(LeaseLost):
            await term.within(slow_write)  # and nothing afterwards

    asyncio.run(scenario())


def test_a_write_still_waiting_when_the_term_ends_is_cut_and_a_renewal_moves_the_end() -> None:
    async def scenario() -> None:
        term = Term(0.6)
        term.confirm(term.ticks())

        async def write(seconds: float) -> str:
            await asyncio.sleep(seconds)
            return "sent"

        renewing = asyncio.create_task(term.within(lambda: write(0.8)))
        await asyncio.sleep(0.3)
        term.confirm(term.ticks())  # renewed meanwhile: the write may finish
        assert await renewing == "sent"
        with pytest.raises(LeaseLost, match=r"lifetime|term ended"):
            await term.within(lambda: write(5))
        assert term.lost is not None

    asyncio.run(scenario())


def test_other_timeouts_inside_a_write_are_not_a_lost_lease() -> None:
    async def scenario() -> None:
        term = Term(TTL)
        term.confirm(term.ticks())

        async def failing() -> None:
            raise TimeoutError("the server did not answer")

        with pytest.raises(TimeoutError, match="did not answer"):
            await term.within(failing)
        assert term.lost is None

    asyncio.run(scenario())


# --- a lease whose description cannot be read ------------------------------------------------


NOW = 1_800_000_000.0
RECENT = "2027-01-15T08:00:00Z"  # NOW is 2027-01-15T08:00:00Z


@pytest.mark.parametrize("description", [None, "", "someone wrote this by hand", "apimctl apply lease {"])
def test_an_unreadable_lease_is_held_until_its_last_write_plus_the_lifetime(description: str | None) -> None:
    row = role(LEASE_NAME, "lease-9", updated=RECENT, created="2020-01-01T00:00:00Z")
    if description is None:
        row.pop("description")
    else:
        row["description"] = description
    found = Holder.parse(row, TTL)
    assert not found.readable and found.role_id == "lease-9"
    assert found.expires == NOW + TTL
    assert not found.expired(NOW + TTL - 1) and found.expired(NOW + TTL)


def test_an_unreadable_lease_falls_back_to_created_then_to_held_until_broken() -> None:
    created = unreadable({"id": "x", "name": LEASE_NAME, "created": RECENT}, TTL)
    assert created.expires == NOW + TTL
    nothing = unreadable({"id": "x", "name": LEASE_NAME}, TTL)
    assert not nothing.expired(float("1e12"))
    message = str(LeaseHeld(nothing, 0))
    assert "until it is broken by hand" in message and "apimctl unlock --force" in message
    assert "no readable description" in message


def test_an_unreadable_lease_is_not_taken_over_before_its_time() -> None:
    class Clock:
        now = NOW + TTL - 5

        def __call__(self) -> float:
            return self.now

    clock = Clock()
    area = UniqueRoles({ROLES: [role(LEASE_NAME, "lease-9", description=None, updated=RECENT)]})

    async def scenario() -> None:
        with pytest.raises(LeaseHeld, match="no readable description"):
            await Lease(area, clock=clock).acquire()
        assert [r["id"] for r in area.lease()] == ["lease-9"]
        clock.now = NOW + TTL + 1
        lease = Lease(area, clock=clock)
        await lease.acquire()  # now stale: taken over
        assert [r["name"] for r in area.rows[ROLES]] == [LEASE_NAME] and area.lease()[0]["id"] != "lease-9"
        await lease.release()
        assert area.lease() == []

    asyncio.run(scenario())


def test_the_holder_knows_its_own_lease_by_id_when_the_area_hides_descriptions() -> None:
    class Mute(UniqueRoles):
        async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                           page_index: bool = False) -> list[dict[str, Any]]:
            rows = await super().list_all(path, params, page_size=page_size, page_index=page_index)
            return [{k: v for k, v in r.items() if k != "description"} for r in rows]

    area = Mute()

    async def scenario() -> None:
        lease = Lease(area)
        await lease.acquire()
        await lease.renew()
        assert not lease.lost
        await lease.hold()
        await lease.release()
        assert area.lease() == []

    asyncio.run(scenario())
