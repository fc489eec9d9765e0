"""The apply lease against the reference server (in-process, over ``httpx.ASGITransport``), in
either dialect (the ``dialect`` fixture: ``spec`` and ``mashery``, SUPPLEMENT §10)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from apimctl.api.client import ApiClient
from apimctl.applying.lease import Lease, LeaseHeld, find, unlock
from apimctl.errors import ApimctlError
from apimctl.kinds.role import LEASE_NAME
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import read_live

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def client(tmp_path: Path, dialect: str) -> AsyncIterator[ApiClient]:
    app = create_app(ServerConfig(db_path=str(tmp_path / "s.db"), tokens={"t": "area-1"}, dialect=dialect))
    async with ApiClient("http://apim.test/v3/rest", token="t", qps=None,
                         transport=httpx.ASGITransport(app=app)) as c:
        yield c


async def test_a_second_apply_is_refused_naming_the_holder(client: ApiClient) -> None:
    async with Lease(client) as first:
        held = await find(client)
        assert held is not None and held.run_id == first.holder.run_id
        with pytest.raises(LeaseHeld) as refused:
            await Lease(client).acquire()
        message = str(refused.value)
        assert first.holder.run_id in message and first.holder.user in message
        assert first.holder.host in message and "apimctl unlock" in message
    assert await find(client) is None  # released at the end


async def test_two_applies_racing_for_the_lease_one_wins(client: ApiClient) -> None:
    leases = [Lease(client) for _ in range(5)]
    results = await asyncio.gather(*(lease.acquire() for lease in leases), return_exceptions=True)
    winners = [lease for lease, r in zip(leases, results, strict=True) if r is None]
    assert len(winners) == 1
    assert all(isinstance(r, LeaseHeld) for r in results if r is not None)
    roles = await client.list_all("/roles", {"filter": f"name:{LEASE_NAME}"}, page_index=True)
    assert len(roles) == 1
    await winners[0].release()


async def test_a_waiting_apply_gets_the_lease_when_it_is_released(client: ApiClient) -> None:
    first = Lease(client)
    await first.acquire()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await first.release()

    second = Lease(client, timeout=30, sleep=sleep)
    await second.acquire()
    assert slept and (await find(client)).run_id == second.holder.run_id  # type: ignore[union-attr]
    await second.release()


async def test_a_stale_lease_is_taken_over(client: ApiClient) -> None:
    clock = Clock()
    notes: list[str] = []
    stale = Lease(client, clock=clock, ttl=60)
    await stale.acquire()
    assert stale._renewer is not None
    stale._renewer.cancel()  # the holder died: nothing renews it
    clock.now += 61
    taker = Lease(client, clock=clock, note=notes.append)
    await taker.acquire()
    assert (await find(client)).run_id == taker.holder.run_id  # type: ignore[union-attr]
    assert any("stale" in n for n in notes)
    await taker.release()


async def test_renewal_moves_the_expiry_and_notices_a_broken_lease(client: ApiClient) -> None:
    clock = Clock()
    notes: list[str] = []
    lease = Lease(client, clock=clock, ttl=60, note=notes.append)
    await lease.acquire()
    clock.now += 50
    await lease.renew()
    held = await find(client)
    assert held is not None and held.expires == clock.now + 60
    await unlock(client)
    await lease.renew()
    assert lease.lost and any("broken" in n for n in notes)
    await lease.release()


async def test_unlock_checks_the_run_id(client: ApiClient) -> None:
    lease = Lease(client)
    await lease.acquire()
    with pytest.raises(ApimctlError, match="not nope"):
        await unlock(client, "nope")
    broken = await unlock(client, lease.holder.run_id)
    assert broken is not None and broken.run_id == lease.holder.run_id
    assert await find(client) is None
    assert await unlock(client) is None
    await lease.release()


async def test_the_lease_role_is_never_live_state(client: ApiClient) -> None:
    await client.post("/roles", {"name": "Readers"})
    async with Lease(client):
        state = await read_live(client)
        assert [o.name for o in state.of("role")] == ["Readers"]
