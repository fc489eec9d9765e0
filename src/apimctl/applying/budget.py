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
never in one run (split it with ``--target``).
"""

from __future__ import annotations

import datetime as dt

from apimctl import kinds
from apimctl.applying import converge
from apimctl.applying.bodies import changed_fields
from apimctl.applying.units import group_units
from apimctl.errors import PlanError
from apimctl.plans.model import Budget, Plan

LEASE_CALLS = 4  # find the lease, create it, read it back, release it
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
                now: dt.datetime | None = None) -> None:
    """Refuse an apply whose remaining calls (those of ``budget`` but the ``used`` reads this
    command made already) do not fit in what is left of the daily ``quota`` (``None``: no quota
    known) after the ``earlier`` calls of today's runs."""
    if quota is None:
        return
    needed = max(0, budget.calls - min(used, budget.reads))
    left = max(0, quota - used - earlier)
    if needed <= left:
        return
    moment = now or dt.datetime.now(dt.UTC)
    reset = (moment + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
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
