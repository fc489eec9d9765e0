"""Fencing: no write is sent unless the apply lease is known to be held.

The lease (:mod:`apimctl.applying.lease`) is renewed in the background, but a run can stop
for longer than the lease lives (a frozen CI runner, SIGSTOP, a laptop lid) and be taken over
as stale meanwhile; when it resumes, its renewals and writes must not carry on as if nothing
happened. The :class:`Term` of a lease is what this run *knows*: the lease was confirmed as
its own at the start of the last successful renewal, so it is held until that instant plus
the lease's lifetime, and no later (the expiry written in the role is later still, so no other
run may take it over before then). Time is read from a monotonic clock that also counts a
suspended machine (:func:`elapsed`), injectable for tests.

A :class:`FencedClient` sends each write (``post``, ``put``, ``delete``) only after
:meth:`Fenced.hold` returned: a lease confirmed longer ago than :data:`CONFIRM_AFTER` of its
lifetime is confirmed again first (read back by name, still carrying this run's id), and a
lease lost (the role gone, another run's, or the term over) raises :class:`LeaseLost`. Each
write also runs under the term's deadline (moved on by every renewal): a write still waiting
for its turn (the rate limiter, a retry's back-off) when the term ends, or when the lease is
found lost, is cancelled, so not even a retry goes out afterwards. What cannot be fenced
without the platform's help is a request already on the wire.

:class:`LeaseLost` stops the apply like the other stopping errors
(:mod:`apimctl.applying.schedule`): no new step is started, and the summary lists what was
done.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from apimctl.applying.calls import Client
from apimctl.errors import ApimctlError

CONFIRM_AFTER = 1 / 3  # of the lease's lifetime: an older confirmation is renewed before a write

T = TypeVar("T")


def elapsed() -> float:
    """Seconds on a monotonic clock that keeps counting while the machine is suspended
    (``CLOCK_BOOTTIME`` where there is one; ``time.monotonic`` elsewhere)."""
    boottime = getattr(time, "CLOCK_BOOTTIME", None)
    if boottime is not None:
        return time.clock_gettime(boottime)
    return time.monotonic()


class LeaseLost(ApimctlError):
    """The apply lease is no longer known to be held: nothing more may be written."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the apply lease was lost ({reason}); no further write was sent. "
                         "Another apply may have taken over: run plan to see what is left")


class Term:
    """How long this run knows it holds the lease; the deadlines of the writes in flight."""

    def __init__(self, ttl: float, ticks: Callable[[], float] = elapsed) -> None:
        self.ttl, self.ticks = ttl, ticks
        self.confirmed: float | None = None  # ticks at the start of the last confirmation
        self.lost: str | None = None  # why the lease was lost, once it is
        self._deadlines: set[asyncio.Timeout] = set()

    def age(self) -> float:
        """Seconds since the last confirmation (infinite before the first)."""
        return float("inf") if self.confirmed is None else self.ticks() - self.confirmed

    def stale(self) -> bool:
        return self.age() >= self.ttl * CONFIRM_AFTER

    def over(self) -> bool:
        return self.confirmed is not None and self.age() >= self.ttl

    def left(self) -> float:
        """Seconds the lease is still known to be held."""
        return max(0.0, self.ttl - self.age())

    def confirm(self, began: float) -> None:
        """The lease was confirmed by a renewal that started at ``began`` (ticks)."""
        self.confirmed = began if self.confirmed is None else max(self.confirmed, began)
        self._move_deadlines(self.left())

    def lose(self, reason: str) -> bool:
        """Mark the lease lost and cut the writes in flight; ``True`` the first time."""
        first = self.lost is None
        if first:
            self.lost = reason
        self._move_deadlines(0.0)
        return first

    def check(self) -> None:
        """Raise :class:`LeaseLost` unless the lease is still known to be held."""
        if self.lost is None and self.over():
            self.lose(f"not renewed within its lifetime of {self.ttl:g} s: this run was paused "
                      "or could not reach the area")
        if self.lost is not None:
            raise LeaseLost(self.lost)

    async def within(self, send: Callable[[], Awaitable[T]]) -> T:
        """``send()`` under the term's deadline: cut when the term ends or the lease is lost."""
        self.check()
        try:
            async with asyncio.timeout(self.left()) as deadline:
                self._deadlines.add(deadline)
                try:
                    return await send()
                finally:
                    self._deadlines.discard(deadline)
        except TimeoutError:
            if not deadline.expired():
                raise
            self.check()
            self.lose("its term ended during a write")
            raise LeaseLost("its term ended during a write") from None

    def _move_deadlines(self, seconds: float) -> None:
        if not self._deadlines:
            return
        when = asyncio.get_running_loop().time() + seconds
        for deadline in list(self._deadlines):
            if not deadline.expired():
                deadline.reschedule(when)


class Fenced(Protocol):
    """What a :class:`FencedClient` asks of the lease (:class:`apimctl.applying.lease.Lease`)."""

    term: Term

    async def hold(self) -> None: ...


class FencedClient:
    """A client whose writes are sent only while ``lease`` is known to be held; reads and
    everything else (``stats``, ``dialect``) are the wrapped client's."""

    def __init__(self, client: Client, lease: Fenced) -> None:
        self._client, self._lease = client, lease

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def get(self, path: str, params: Any = None) -> Any:
        return await self._client.get(path, params)

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        return await self._client.list_all(path, params, page_size=page_size, page_index=page_index)

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        await self._lease.hold()
        return await self._lease.term.within(lambda: self._client.post(path, body, params))

    async def put(self, path: str, body: Any, params: Any = None) -> Any:
        await self._lease.hold()
        return await self._lease.term.within(lambda: self._client.put(path, body, params))

    async def delete(self, path: str) -> None:
        await self._lease.hold()
        await self._lease.term.within(lambda: self._client.delete(path))
