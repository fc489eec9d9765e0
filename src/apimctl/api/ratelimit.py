"""Pacing of API calls: the shared client-side rate limiter and the backoff between retries.

``apimctl.api.client.ApiClient`` owns one ``RateLimiter`` that every request of the client passes
through (paging and the concurrent steps of ``apply`` alike), and waits a ``Backoff`` delay
before retrying a transient failure. Clock and sleep are injectable so that tests run on a
fake clock instead of waiting.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


class RateLimiter:
    """Token bucket shared by every request of one client; ``qps`` ≤ 0 or ``None`` = unlimited.

    Each ``acquire`` reserves the next free slot (``1/qps`` apart, with up to ``burst`` slots
    available at once after idle time) and sleeps until it. The reservation happens before the
    first ``await``, so concurrent callers on one event loop never share a slot.
    """

    def __init__(
        self,
        qps: float | None,
        *,
        burst: int = 1,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.qps = qps if qps is not None and qps > 0 else None
        self.burst = max(1, burst)
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")  # the earliest time the next call may start

    @property
    def interval(self) -> float:
        """Seconds between two calls at the steady rate (0 when unlimited)."""
        return 1.0 / self.qps if self.qps else 0.0

    async def acquire(self) -> None:
        """Wait for this call's slot."""
        if self.qps is None and self._next == float("-inf"):
            return
        now = self._clock()
        earliest = now - (self.burst - 1) * self.interval
        slot = max(self._next, earliest)
        self._next = slot + self.interval
        delay = slot - now
        if delay > 0:
            await self._sleep(delay)

    def pause(self, seconds: float) -> None:
        """Let no call start for ``seconds`` (the server asked everyone to slow down)."""
        if seconds <= 0:
            return
        self._next = max(self._next, self._clock() + seconds)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: attempt ``n`` waits about ``base * 2**n``, capped.

    The wait is drawn between half and all of the exponential value ("equal jitter"), so
    clients that failed together do not retry together.
    """

    base: float = 0.5
    cap: float = 8.0
    rand: Callable[[], float] = random.random

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0 for the first retry)."""
        ceiling = min(self.cap, self.base * 2.0 ** max(0, attempt))
        return ceiling / 2 + ceiling / 2 * self.rand()
