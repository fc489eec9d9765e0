"""Reading the live state from an in-process reference server: one list call per 1,000 objects
per kind (the translation into manifest shape is unit-tested in ``tests/unit/state/test_live.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import read_call_bound, read_live

pytestmark = pytest.mark.slow


def test_read_calls_grow_by_thousands(tmp_path: Path) -> None:
    """1,001 domains cost two list calls; everything else one each."""
    config = ServerConfig(db_path=str(tmp_path / "a.db"), tokens={"t": "a"},
                          auto_approve_domains=True)
    transport = httpx.ASGITransport(app=create_app(config))

    async def scenario() -> tuple[int, int, int]:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as c:
            gate = asyncio.Semaphore(16)

            async def add(i: int) -> None:
                async with gate:
                    await c.post("/domains", {"domain": f"d{i}.example"})

            await asyncio.gather(*(add(i) for i in range(1001)))
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as c:
            state = await read_live(c)
            return c.stats.reads(), read_call_bound(state), len(state.of("domain"))

    reads, bound, domains = asyncio.run(scenario())
    assert domains == 1001
    assert reads == bound == 2 + len(kinds.TOP_LEVEL) - 1
