"""An event trigger's ``timeout`` is a total deadline per call, whatever the receiver drips, and
writes waiting on a slow receiver never stall another area's calls (SUPPLEMENT §8).

The receiver (``receiver.Reply(drip=...)``) sends its headers at once, then its body one byte
at a time, each well within the timeout: only a deadline on the whole call cuts it. The storm
runs against a real uvicorn server (its shared worker pool, AnyIO's 40 threads) in both
dialects: 45 writes to area A wait on the dripping receiver while area B is read.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import Receiver, Reply
from spec_helpers import AREA_A, BASE, TOKEN_A, TOKEN_B, make_config, member_body

from apimctl.server.events import EventDispatcher, EventVeto, member_payload

TIMEOUT = 1.5  # seconds: the receivers' timeout in these tests
MARGIN = 1.0  # seconds a cut call may take beyond it on a busy machine
WRITES = 45  # more than the server's shared worker pool (40)
DRIP = Reply(raw=b'{"type": "proceed"}' + b" " * 200, drip=0.1)  # 22 s in all, a byte every 0.1 s


def events(url: str, timeout: float = TIMEOUT) -> dict[str, Any]:
    return {"areas": {AREA_A: {"url": url, "timeout": timeout,
                               "events": {"member": ["pre-create", "post-create"]}}}}


@pytest.mark.parametrize("event", ["pre-create", "post-create"])
def test_a_dripping_receiver_is_cut_at_the_timeout(receiver: Receiver, event: str) -> None:
    dispatcher = EventDispatcher(events(receiver.url, timeout=0.5))
    receiver.answer(event, DRIP)
    payload = member_payload({"username": "dev1", "email": "dev1@example.org"})
    started = time.monotonic()
    if event == "pre-create":
        with pytest.raises(EventVeto, match=r"timed out \(no complete reply within 0.5 s\)"):
            dispatcher.pre(AREA_A, "member", event, payload, None, dispatcher.new_txn())
    else:
        dispatcher.post(AREA_A, "member", event, payload, "m1", dispatcher.new_txn())  # never raises
    took = time.monotonic() - started
    entry = dispatcher.log()[-1]
    dispatcher.close()
    assert 0.5 <= took < 0.5 + MARGIN, took
    assert entry["outcome"] == "timeout" and entry["duration_ms"] < (0.5 + MARGIN) * 1000, entry


Timed = tuple[int, str, float]  # status, body, seconds


def storm(base: str, count: int) -> tuple[threading.Thread, list[Timed]]:
    """``count`` member creates in area A at once, in a thread; their outcomes, once joined."""
    outcomes: list[Timed] = []

    async def one(client: httpx.AsyncClient, i: int) -> Timed:
        started = time.monotonic()
        reply = await client.post(f"{base}{BASE}/members", json=member_body(f"dev{i}"),
                                  headers={"Authorization": f"Bearer {TOKEN_A}"})
        return reply.status_code, reply.text, time.monotonic() - started

    async def all_at_once() -> None:
        limits = httpx.Limits(max_connections=count + 5)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            outcomes.extend(await asyncio.gather(*(one(client, i) for i in range(count))))

    thread = threading.Thread(target=lambda: asyncio.run(all_at_once()), daemon=True)
    thread.start()
    return thread, outcomes


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_writes_waiting_on_a_slow_receiver_stall_no_other_area(
        tmp_path: Path, receiver: Receiver, dialect: str,
        uvicorn_runner: Callable[[Any], AbstractContextManager[str]]) -> None:
    receiver.answer("pre-create", DRIP)
    config = make_config(tmp_path, events_config=events(receiver.url), dialect=dialect)
    with uvicorn_runner(config) as base, httpx.Client(base_url=base, timeout=30) as reader:
        other = {"Authorization": f"Bearer {TOKEN_B}"}
        assert reader.get(f"{BASE}/members", headers=other).status_code == 200
        thread, outcomes = storm(base, WRITES)
        receiver.wait_for(40, timeout=20)  # the whole shared pool's worth waits on the receiver
        reads = []
        for _ in range(5):
            started = time.monotonic()
            assert reader.get(f"{BASE}/members", headers=other).status_code == 200
            reads.append(time.monotonic() - started)
        thread.join(timeout=30)
    assert max(reads) < TIMEOUT / 2, reads  # not held behind the writes
    assert len(outcomes) == WRITES
    for status, body, took in outcomes:
        assert status == 400 and "timed out" in body, body
        assert took < TIMEOUT + MARGIN + 1.0, took  # each cut at its deadline (queued a little)
