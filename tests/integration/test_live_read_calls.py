"""Reading the live state from an in-process reference server: one list call per 1,000 objects
per kind, in both dialects of the server, nested collections included (plan entitlements are
Exp in the ``mashery`` dialect, SUPPLEMENT §10.6; the translation into manifest shape is
unit-tested in ``tests/unit/state/test_live.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import read_call_bound, read_live

from .export_support import apply, load

pytestmark = pytest.mark.slow

# nested collections of every kind that has them: endpoints, methods, roles, plans, entitlements
NESTED = """
domains: [example.com]
roles: [Partners]
services:
  - name: Weather
    roles: [Partners]
    endpoints:
      - {name: Forecast, requestPathAlias: /forecast, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], methods: [{name: get}]}
packages:
  - name: Partners
    plans:
      - {name: Gold, roles: [Partners], services: [{name: Weather, endpoints: [{name: Forecast, methods: [get]}]}]}
"""


def test_read_calls_grow_by_thousands(tmp_path: Path, dialect: str) -> None:
    """1,001 domains cost two list calls; everything else one each."""
    config = ServerConfig(db_path=str(tmp_path / "a.db"), tokens={"t": "a"},
                          auto_approve_domains=True, dialect=dialect)
    transport = httpx.ASGITransport(app=create_app(config))
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.yaml").write_text(NESTED)

    async def scenario() -> tuple[int, int, int, Any]:
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as c:
            await apply(c, load([tmp_path / "m"], {}), {})
            gate = asyncio.Semaphore(16)

            async def add(i: int) -> None:
                async with gate:
                    await c.post("/domains", {"domain": f"d{i}.example"})

            await asyncio.gather(*(add(i) for i in range(1000)))
        async with ApiClient("http://x/v3/rest", token="t", qps=None, transport=transport) as c:
            state = await read_live(c)
            (gold,) = state.of("plan")
            return c.stats.reads(), read_call_bound(state), len(state.of("domain")), gold.doc

    reads, bound, domains, gold = asyncio.run(scenario())
    assert domains == 1001
    # the nested collections came with the list calls, whatever the dialect nests by default
    assert gold["roles"] == ["Partners"] and gold["services"] == [{"name": "Weather", "endpoints": [
        {"name": "Forecast", "undefinedMethodsAllowed": True, "methods": ["get"]}]}]
    assert reads == bound == 2 + len(kinds.TOP_LEVEL) - 1
