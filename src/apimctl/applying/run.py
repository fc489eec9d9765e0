"""Apply: execute a :class:`~apimctl.plans.model.Plan` against a live area, safely and concurrently.

Called by the apply command (:mod:`apimctl.applying.command`, which refuses a plan before
anything is written: too many deletes, a missing secret variable, a stale saved plan) and by
tests and benchmarks. :func:`apply_plan` does what the plan says and nothing else:

1. the area is read (unless the caller hands in the state the plan was just made from), and
   ``ApplyOptions.check`` sees it before the first write (the command refuses a stale saved
   plan there);
2. the steps are grouped into units (nested writes, see :mod:`apimctl.applying.units`) and run by
   :mod:`apimctl.applying.schedule` in dependency order, ``parallelism`` at a time, every call through
   the client's one shared rate limiter;
3. the area is read again and every done step is compared with it the way ``plan`` compares
   (normalise + diff); anything still different is reported as not converged.

The outcome is an :class:`~apimctl.plans.result.ApplyResult` (rendered by ``apimctl.render``).
Nothing here prints; progress is reported through a callback.
"""

from __future__ import annotations

import asyncio
import fnmatch
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.applying.bodies import LiveIndex, env_mapping, resolve_secrets
from apimctl.applying.calls import Client
from apimctl.applying.schedule import (
    GRACE,
    Execute,
    ProgressCallback,
    ScheduleResult,
    Unit,
    run_units,
)
from apimctl.applying.units import group_units
from apimctl.applying.writes import Writer
from apimctl.errors import ApiError
from apimctl.kinds.dialects import comparable, dialect_of
from apimctl.kinds.endpoint import default_error_sets
from apimctl.kinds.role import ORGANIZATION, ORGANIZATION_PATH
from apimctl.planning.diff import diff, ignored
from apimctl.plans.model import Plan, Step, address
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.state import live
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context, normalise

VISIBILITY_DELAY = 1.0  # seconds before the convergence check reads a second time


def collect(result: ApplyResult, sched: ScheduleResult) -> None:
    """Turn the scheduler's unit outcomes into the per-step lists of the summary."""
    for outcome in sched.outcomes:
        target = {"done": result.done, "failed": result.failed, "skipped": result.skipped}[outcome.status]
        for step in outcome.unit.steps:
            if step.address in outcome.failed_steps:
                result.failed.append(StepOutcome(step.address, step.action, outcome.failed_steps[step.address]))
            else:
                target.append(StepOutcome(step.address, step.action, outcome.reason))
    result.stopped = sched.stopped
    result.interrupted = result.interrupted or sched.interrupted


async def execute_units(units: list[Unit], execute: Execute, *,
                        parallelism: int, progress: ProgressCallback | None,
                        interrupt: asyncio.Event | None = None, grace: float = GRACE) -> ApplyResult:
    """Run ``units`` with the scheduler and summarise (no API knowledge here; tests use it)."""
    result = ApplyResult()
    collect(result, await run_units(units, execute, parallelism=parallelism, progress=progress,
                                    interrupt=interrupt, grace=grace))
    return result


def step_index(plan: Plan) -> Mapping[str, Step]:
    return {s.address: s for s in plan.steps}


# --------------------------------------------------------------------------- live state


async def read_state(client: Client) -> tuple[LiveIndex, LiveState]:
    raw = await live.read_raw(client)
    return LiveIndex.from_raw(raw), live.from_raw(raw)


async def add_organizations(client: Client, plan: Plan, index: LiveIndex) -> None:
    """Organizations are read only when a role step names one."""
    if not any(s.kind == kinds.ROLE.name and (s.desired or {}).get(ORGANIZATION) for s in plan.steps):
        return
    for org in await client.list_all(ORGANIZATION_PATH, {"fields": "id,name"}):
        index.add(address(ORGANIZATION, str(org.get("name"))), org)


def by_address(state: LiveState) -> dict[str, LiveObject]:
    return {address(o.kind, o.key): o for objs in state.objects.values() for o in objs}


# --------------------------------------------------------------------------- convergence


def _ignore_patterns(plan: Plan, addr: str) -> list[str]:
    out = []
    for entry in plan.ignored:
        target = str(entry.get("target", ""))
        kind, _, rest = target.partition(":")
        key, sep, path = rest.rpartition(":")
        if sep and fnmatch.fnmatchcase(addr, f"{kind}:{key}"):
            out.append(path)
    return out


def _default_error_sets(state: LiveState) -> dict[str, str]:
    return default_error_sets((o.parent_key, o.name) for o in state.of(kinds.ERROR_SET.name))


def remaining_changes(plan: Plan, step: Step, now: Mapping[str, LiveObject],
                      default_sets: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """Why ``step`` has not converged, or ``None`` when the live object matches it."""
    if step.temporary:
        return None  # a temporary route: its object's own step says where it ends up
    obj = now.get(step.address)
    if step.action == "delete":
        return None if obj is None else "still exists"
    if obj is None:
        return "does not exist"
    kind = kinds.get(step.kind)
    ctx = Context(default_error_set=default_sets.get(obj.parent_key or ""))
    desired = resolve_secrets(step, step.desired or {}, plan.secret_values, env)
    have, want = normalise(kind, obj.doc, ctx), normalise(kind, desired, ctx)
    comparable(kind.name, have, want, desired, dialect_of(plan.dialect))
    changes = diff(kind, have, want)
    changes, _ = ignored(changes, _ignore_patterns(plan, step.address))
    if not changes:
        return None
    paths = [c.path for c in changes]
    return "still differs: " + ", ".join(paths[:8]) + (", ..." if len(paths) > 8 else "")


def not_converged(plan: Plan, done: list[StepOutcome], state: LiveState,
                  env: Mapping[str, str]) -> list[StepOutcome]:
    now = by_address(state)
    default_sets = _default_error_sets(state)
    steps = step_index(plan)
    out = []
    for outcome in done:
        reason = remaining_changes(plan, steps[outcome.address], now, default_sets, env)
        if reason is not None:
            out.append(StepOutcome(outcome.address, outcome.action, reason))
    return out


# --------------------------------------------------------------------------- the apply


@dataclass
class ApplyOptions:
    """How to apply. ``check`` sees the area as read right before the first write and raises
    to refuse the plan (the apply command refuses a stale saved plan there). ``interrupt``,
    once set (Ctrl-C, SIGTERM), stops the start of new steps; the running ones get ``grace``
    seconds to finish (see :mod:`apimctl.applying.schedule`)."""

    parallelism: int = 8
    env: Mapping[str, str] | None = None
    batch: bool = True
    verify: bool = True
    progress: ProgressCallback | None = None
    note: Callable[[str], None] | None = None
    check: Callable[[LiveState], None] | None = None
    interrupt: asyncio.Event | None = None
    grace: float = GRACE


async def apply_plan(client: Client, plan: Plan, options: ApplyOptions | None = None, *,
                     raw: Mapping[str, list[dict[str, Any]]] | None = None) -> ApplyResult:
    """Execute ``plan`` (see the module docstring). Whatever ``options.check`` raises, it
    raises before any write.

    ``raw`` is the live state the plan was just made from (``live.read_raw``), which saves
    reading it again; without it the area is read first.
    """
    opts = options or ApplyOptions()
    started = time.monotonic()
    stats = getattr(client, "stats", None)
    before = _counts(stats)
    if not plan.steps:
        return ApplyResult(plan=plan)
    if raw is None:
        index, state = await read_state(client)
    else:
        index, state = LiveIndex.from_raw(raw), live.from_raw(raw)
    if opts.check is not None:
        opts.check(state)
    await add_organizations(client, plan, index)
    index.add_renames(plan.steps)
    writer = Writer(client, plan, index, env=opts.env, note=opts.note)
    units = group_units(plan, batch=opts.batch)
    result = await execute_units(units, writer.execute, parallelism=opts.parallelism, progress=opts.progress,
                                 interrupt=opts.interrupt, grace=opts.grace)
    result.plan = plan
    if opts.verify and result.done:
        result.non_converged = await verify(client, plan, result, env_mapping(opts.env))
    after_counts = _counts(stats)
    result.read_calls = after_counts[0] - before[0]
    result.write_calls = after_counts[1] - before[1]
    result.calls = result.read_calls + result.write_calls
    result.seconds = time.monotonic() - started
    return result


async def verify(client: Client, plan: Plan, result: ApplyResult, env: Mapping[str, str]) -> list[StepOutcome]:
    """Re-read the area and compare every done step with it. When the area cannot be read
    (the API is down), the done steps are reported as not verified. After a stop (the daily
    quota is gone) nothing is read: the summary already says why it stopped, and listing every
    write that succeeded as "not converged" would only bury that."""
    if result.stopped:
        return []
    outcomes: list[StepOutcome] = []
    for attempt in range(2):  # writes may briefly be invisible to an immediate read: look twice
        if attempt:
            await asyncio.sleep(VISIBILITY_DELAY)
        try:
            _, after = await read_state(client)
        except ApiError as exc:
            return [StepOutcome(o.address, o.action, f"not verified: {exc}") for o in result.done]
        outcomes = not_converged(plan, result.done, after, env)
        if not outcomes:
            break
    return outcomes


def _counts(stats: Any) -> tuple[int, int]:
    if stats is None:
        return (0, 0)
    return (int(stats.reads()), int(stats.writes()))
