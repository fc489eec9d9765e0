"""The shared rate limiter and the backoff, on a virtual clock (never wall time)."""

from __future__ import annotations

import asyncio

import pytest

from apimctl.api.ratelimit import Backoff, RateLimiter

from .clientkit import VirtualClock

pytestmark = pytest.mark.anyio


async def _stamp(limiter: RateLimiter, clock: VirtualClock, out: list[float]) -> None:
    await limiter.acquire()
    out.append(clock.now)


async def test_sequential_calls_are_spaced_by_one_over_qps(clock: VirtualClock) -> None:
    limiter = RateLimiter(2.0, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def five() -> None:
        for _ in range(5):
            await _stamp(limiter, clock, starts)

    await clock.run(five())
    assert starts == [0.0, 0.5, 1.0, 1.5, 2.0]


async def test_concurrent_callers_get_distinct_slots(clock: VirtualClock) -> None:
    limiter = RateLimiter(4.0, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def many() -> None:
        await asyncio.gather(*(_stamp(limiter, clock, starts) for _ in range(9)))

    await clock.run(many())
    assert sorted(starts) == [i * 0.25 for i in range(9)]


async def test_idle_time_is_not_saved_up_without_burst(clock: VirtualClock) -> None:
    limiter = RateLimiter(1.0, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def scenario() -> None:
        await _stamp(limiter, clock, starts)
        await clock.sleep(10)
        await asyncio.gather(*(_stamp(limiter, clock, starts) for _ in range(3)))

    await clock.run(scenario())
    assert starts == [0.0, 10.0, 11.0, 12.0]


async def test_burst_allows_that_many_at_once(clock: VirtualClock) -> None:
    limiter = RateLimiter(1.0, burst=3, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def scenario() -> None:
        await clock.sleep(100)
        await asyncio.gather(*(_stamp(limiter, clock, starts) for _ in range(5)))

    await clock.run(scenario())
    assert sorted(starts) == [100.0, 100.0, 100.0, 101.0, 102.0]


@pytest.mark.parametrize("qps", [None, 0, -1])
async def test_unlimited_never_sleeps(clock: VirtualClock, qps: float | None) -> None:
    limiter = RateLimiter(qps, clock=clock, sleep=clock.sleep)
    for _ in range(100):
        await limiter.acquire()
    assert clock.sleeps == [] and limiter.interval == 0.0


async def test_pause_holds_every_caller_even_when_unlimited(clock: VirtualClock) -> None:
    limiter = RateLimiter(None, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def scenario() -> None:
        limiter.pause(3.0)
        await asyncio.gather(*(_stamp(limiter, clock, starts) for _ in range(3)))

    await clock.run(scenario())
    assert starts == [3.0, 3.0, 3.0]


async def test_pause_pushes_the_schedule(clock: VirtualClock) -> None:
    limiter = RateLimiter(2.0, clock=clock, sleep=clock.sleep)
    starts: list[float] = []

    async def scenario() -> None:
        await _stamp(limiter, clock, starts)
        limiter.pause(5.0)
        await asyncio.gather(*(_stamp(limiter, clock, starts) for _ in range(2)))

    await clock.run(scenario())
    assert starts == [0.0, 5.0, 5.5]


def test_backoff_grows_exponentially_and_is_capped() -> None:
    top = Backoff(base=0.5, cap=8.0, rand=lambda: 1.0)
    assert [top.delay(n) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    bottom = Backoff(base=0.5, cap=8.0, rand=lambda: 0.0)
    assert [bottom.delay(n) for n in range(6)] == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]


def test_backoff_jitter_stays_within_bounds() -> None:
    backoff = Backoff()
    for attempt in range(10):
        ceiling = min(8.0, 0.5 * 2**attempt)
        for _ in range(20):
            assert ceiling / 2 <= backoff.delay(attempt) <= ceiling
