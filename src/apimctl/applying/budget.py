"""The call budget of a plan, and the daily quota it must fit in.

:func:`estimate` counts the calls applying a plan makes: reading the area (``reads``: what
planning read, which apply reads again), the lease (:data:`LEASE_CALLS`: looking for it,
creating it, reading it back, releasing it), the writes (one per unit of
:func:`apimctl.applying.units.group_units`, and one per nested part an update changes:
``Kind.ops.writes``) and the convergence check (the list calls of
:func:`apimctl.applying.converge.list_calls` for the objects touched). At the configured
client-side rate the calls take ``calls / qps`` seconds.

:func:`check_quota` refuses, before anything is written, an apply whose calls do not fit in
what is left of the daily quota (``--daily-quota N`` or a profile's ``daily_quota``, less the
calls of today's runs journaled on this machine; the platform counts calls per token and UTC
day, SUPPLEMENT §6) and says when it would fit: after
the quota resets at midnight UTC, or, when the apply needs more than a whole day's quota,
never in one run (split it with ``--target``). What is left is also read from the platform's
quota headers where an answer carries them (``X-Packagekey-Quota-Allotted`` and ``-Current``,
``X-Plan-Quota-Reset``: :class:`apimctl.api.calls.QuotaSeen`); the smaller figure counts, and
the told reset time says when it would fit.

While the apply runs, :class:`Guarded` keeps the last calls of a known quota for releasing the
lease (:data:`RELEASE_CALLS`): a quota exhausted by the platform's own refusal
(``ERR_403_DEVELOPER_OVER_RATE``) refuses every further call of the key, the release included,
and would leave the lease held until it expires. So the apply stops one call short, the way the
platform's refusal stops it (a :class:`~apimctl.errors.QuotaExhausted`), releases its lease and
says how to resume. A quota nothing tells (no header, no ``--daily-quota``) is met only by the
refusal; the lease is then left to expire, and ``apply --resume`` takes it over at once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import Any, TypeVar

from apimctl import kinds
from apimctl.applying import converge
from apimctl.applying.bodies import changed_fields
from apimctl.applying.calls import Client
from apimctl.applying.units import group_units
from apimctl.errors import PlanError, QuotaExhausted
from apimctl.plans.model import Budget, Plan

T = TypeVar("T")
LEASE_CALLS = 4  # find the lease, create it, read it back, release it
RELEASE_CALLS = 1  # the call that releases the lease (a delete by its id)
OVER_RATE = "ERR_403_DEVELOPER_OVER_RATE"
_SOME_ID = "00000000-0000-0000-0000-000000000000"  # the length of an id, for the check's calls


def estimate(plan: Plan, reads: int, *, qps: float | None, lease: bool = True) -> Budget:
    """The calls applying ``plan`` makes (see the module docstring)."""
    writes = len(group_units(plan))
    for step in plan.steps:
        if step.action == "update":
            parts = kinds.get(step.kind).ops.writes
            writes += sum(1 for name in changed_fields(step) if name in parts)
    ids = {s.address: s.id or _SOME_ID for s in plan.steps}
    ids.update({s.parent: s.parent_id or _SOME_ID for s in plan.steps if s.parent})
    checks = len(converge.list_calls(converge.wanted(plan.steps, ids))) if plan.steps else 0
    return Budget(reads=reads, lease=LEASE_CALLS if lease and plan.steps else 0, writes=writes,
                  checks=checks, qps=qps if qps else None)


def check_quota(budget: Budget, quota: int | None, used: int, earlier: int = 0,
                now: dt.datetime | None = None, told: Any = None) -> None:
    """Refuse an apply whose remaining calls (those of ``budget`` but the ``used`` reads this
    command made already) do not fit in what is left of the daily ``quota`` (``None``: no quota
    known) after the ``earlier`` calls of today's runs, or in what the quota headers ``told``
    (a :class:`~apimctl.api.calls.QuotaSeen`) say is left."""
    told_left = getattr(told, "left", None)
    lefts = [] if quota is None else [max(0, quota - used - earlier)]
    days = [] if quota is None else [quota]
    if told_left is not None:  # told after this command's reads: they are counted already
        lefts.append(told_left)
        days.append(int(told.allotted))
    if not lefts:
        return
    quota, left = min(days), min(lefts)
    needed = max(0, budget.calls - min(used, budget.reads))
    if needed <= left:
        return
    moment = now or dt.datetime.now(dt.UTC)
    reset = (moment + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    told_reset = getattr(told, "reset", None)
    if told_left is not None and isinstance(told_reset, dt.datetime) and told_reset > moment:
        reset = told_reset
    if budget.calls > quota:
        when = (f"it needs more than a whole day's quota of {quota} calls: split it with --target "
                "(or raise the quota)")
    else:
        wait = reset - moment
        when = (f"it would fit after the quota resets at {reset:%Y-%m-%d %H:%M} UTC "
                f"(in {int(wait.total_seconds() // 3600)} h {int(wait.total_seconds() % 3600 // 60)} min)")
    spent = f" (today's runs made {earlier})" if earlier else ""
    raise PlanError(f"the apply needs about {needed} more calls ({budget.counts()}); the daily "
                    f"quota of {quota} leaves {left}{spent}: {when}; nothing was written")


class Gauge:
    """What is left of the daily quota while a command runs: what the last answer carrying the
    quota headers told, less the calls sent since that are not answered yet, and what
    ``quota`` leaves after the ``earlier`` calls of today's runs and the calls of this command
    (the client's ``stats``); the smaller when both are known, ``None`` when neither is."""

    def __init__(self, stats: Any, quota: int | None = None, earlier: int = 0) -> None:
        self.stats, self.quota, self.earlier = stats, quota, earlier
        self.sending = 0  # calls sent through :class:`Guarded` and not answered yet

    def left(self) -> int | None:
        told = getattr(getattr(self.stats, "quota", None), "left", None)
        found = [] if told is None else [told - self.sending]
        if self.quota is not None and self.stats is not None:
            found.append(self.quota - self.earlier - int(self.stats.reads()) - int(self.stats.writes()))
        return max(0, min(found)) if found else None


class Guarded:
    """``client`` for the execution of an apply: a call is not sent when it would leave fewer
    than ``reserve`` calls of the daily quota (see the module docstring); it raises
    :class:`~apimctl.errors.QuotaExhausted` instead, which stops the apply as the platform's
    refusal does. Everything else is the wrapped client's."""

    def __init__(self, client: Client, gauge: Gauge, reserve: int = RELEASE_CALLS) -> None:
        self._client, self._gauge, self._reserve = client, gauge, reserve

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def _sent(self, where: str, call: Callable[[], Awaitable[T]]) -> T:
        left = self._gauge.left()
        if left is not None and left <= self._reserve:
            raise QuotaExhausted(f"{where}: not sent: the daily quota of API calls is down to the "
                                 f"{left} kept for releasing the apply lease ({OVER_RATE} next); "
                                 "nothing more can be done today, rerun later when the quota is reset")
        self._gauge.sending += 1
        try:
            return await call()
        finally:
            self._gauge.sending -= 1

    async def get(self, path: str, params: Any = None) -> Any:
        return await self._sent(f"GET {path}", lambda: self._client.get(path, params))

    async def list_all(self, path: str, params: Any = None, *, page_size: int = 1000,
                       page_index: bool = False) -> list[dict[str, Any]]:
        return await self._sent(f"GET {path}", lambda: self._client.list_all(
            path, params, page_size=page_size, page_index=page_index))

    async def pages(self, path: str, params: Any = None, *, page_size: int = 1000,
                    page_index: bool = False) -> AsyncGenerator[Iterable[dict[str, Any]], None]:
        async for page in self._client.pages(path, params, page_size=page_size, page_index=page_index):
            yield page

    async def post(self, path: str, body: Any, params: Any = None) -> dict[str, Any]:
        return await self._sent(f"POST {path}", lambda: self._client.post(path, body, params))

    async def put(self, path: str, body: Any, params: Any = None) -> Any:
        return await self._sent(f"PUT {path}", lambda: self._client.put(path, body, params))

    async def delete(self, path: str) -> None:
        await self._sent(f"DELETE {path}", lambda: self._client.delete(path))
