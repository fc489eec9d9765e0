"""Apply: execute a :class:`~apimctl.plans.model.Plan` against a live area, safely and concurrently.

Called by the apply command (:mod:`apimctl.applying.command`, which refuses a plan before
anything is written: too many deletes, a missing secret variable, a stale saved plan) and by
tests and benchmarks. :func:`apply_plan` does what the plan says and nothing else:

1. the area is read (unless the caller hands in the ids of the state the plan was just made
   from), and ``ApplyOptions.check`` sees it before the first write (the command refuses a
   stale saved plan there); only the live ids are kept for the writes;
2. the steps are grouped into units (nested writes, see :mod:`apimctl.applying.units`) and run by
   :mod:`apimctl.applying.schedule` in dependency order, ``parallelism`` at a time, every call through
   the client's one shared rate limiter;
3. the objects the done steps touched are read again, and only those
   (:mod:`apimctl.applying.converge`), and every done step is compared with them the way
   ``plan`` compares (normalise + diff); anything still different is reported as not
   converged.

The outcome is an :class:`~apimctl.plans.result.ApplyResult` (rendered by ``apimctl.render``).
Nothing here prints; progress is reported through a callback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from apimctl import kinds
from apimctl.applying import converge, reading
from apimctl.applying.bodies import LiveIndex, env_mapping
from apimctl.applying.calls import Client
from apimctl.applying.journal import Journal
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
from apimctl.kinds import Kind
from apimctl.planning.domains import awaited_domains
from apimctl.plans.model import Plan, Step, address
from apimctl.plans.result import ApplyResult, StepOutcome
from apimctl.state import live
from apimctl.state.live import LiveObject, LiveState

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
    state, kept = await reading.read(client)
    return kept.index, state


async def add_read_only(client: Client, plan: Plan, index: LiveIndex) -> None:
    """The objects of read-only kinds (organizations) are indexed only when a step names
    one (a role's ``organization``): listed then, by id and identity."""
    for target in kinds.KINDS:
        if target.read_only and target.top_level and any(_names(s, target) for s in plan.steps):
            fields = f"id,{target.identity}"
            for obj in await client.list_all(target.collection_path(), {"fields": fields}):
                index.add(address(target.name, str(obj.get(target.identity))), obj)


def _names(step: Step, target: Kind) -> bool:
    """Whether ``step``'s object names an object of the ``target`` kind in a top-level field."""
    return any(r.kind == target.name and (step.desired or {}).get(r.field)
               for r in kinds.get(step.kind).references)


def by_address(state: LiveState) -> dict[str, LiveObject]:
    return {address(o.kind, o.key): o for objs in state.objects.values() for o in objs}


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
    journal: Journal | None = None  # each unit journaled as it starts and ends


async def apply_plan(client: Client, plan: Plan, options: ApplyOptions | None = None, *,
                     raw: Mapping[str, list[dict[str, Any]]] | None = None,
                     index: LiveIndex | None = None) -> ApplyResult:
    """Execute ``plan`` (see the module docstring). Whatever ``options.check`` raises, it
    raises before any write.

    ``index`` holds the live ids of the state the plan was just made from (or ``raw``, that
    state's lists as ``live.read_raw`` answered them), which saves reading the area again;
    without either the area is read first. The result counts the calls made here, the
    convergence check's included.
    """
    opts = options or ApplyOptions()
    started = time.monotonic()
    stats = client.stats
    before = _counts(stats)
    if not plan.steps:
        return ApplyResult(plan=plan)
    index = await _index_for(client, opts, raw, index)
    await add_read_only(client, plan, index)
    index.add_renames(plan.steps)
    writer = Writer(client, plan, index, env=opts.env, note=opts.note)
    units = group_units(plan, batch=opts.batch)
    execute: Execute = writer.execute
    if opts.journal is not None:
        await opts.journal.keep_deleted(client, plan, index.ids)
        execute = opts.journal.wrap(writer.execute, writer.index.ids.get)
    result = await execute_units(units, execute, parallelism=opts.parallelism, progress=opts.progress,
                                 interrupt=opts.interrupt, grace=opts.grace)
    result.plan = plan
    if result.failed:
        result.awaited_domains = awaited_domains(plan, [o.address for o in result.done],
                                                 {o.address for o in result.failed})
    if opts.verify and result.done:
        result.non_converged = await verify(client, plan, result, env_mapping(opts.env), index)
    after_counts = _counts(stats)
    result.read_calls = after_counts[0] - before[0]
    result.write_calls = after_counts[1] - before[1]
    result.calls = result.read_calls + result.write_calls
    result.seconds = time.monotonic() - started
    return result


async def _index_for(client: Client, opts: ApplyOptions, raw: Mapping[str, list[dict[str, Any]]] | None,
                     index: LiveIndex | None) -> LiveIndex:
    """The live ids the writes start from. The live model ``opts.check`` sees is built only for
    it, and dropped before the first write."""
    if opts.check is None and (index is not None or raw is not None):
        return index if index is not None else LiveIndex.from_raw(raw or {})
    if raw is None:
        index, state = await read_state(client)
    else:
        index, state = LiveIndex.from_raw(raw), live.from_raw(raw)
    if opts.check is not None:
        opts.check(state)
    return index


async def verify(client: Client, plan: Plan, result: ApplyResult, env: Mapping[str, str],
                 index: LiveIndex | None = None) -> list[StepOutcome]:
    """Read again the objects the done steps touched (:mod:`apimctl.applying.converge`) and
    compare every done step with them; ``index`` holds the ids of the objects the apply knows
    (the live ones and those it created). When the area cannot be read (the API is down), the
    steps are reported as not verified. After a stop (the daily quota is gone) nothing is
    read: the summary already says why it stopped, and listing every write that succeeded as
    "not converged" would only bury that."""
    if result.stopped:
        return []
    ids = index.ids if index is not None else {}
    steps = step_index(plan)
    pending = [(o, steps[o.address]) for o in result.done]
    outcomes: list[StepOutcome] = []
    for attempt in range(2):  # writes may briefly be invisible to an immediate read: look twice
        if attempt:
            await asyncio.sleep(VISIBILITY_DELAY)
        try:
            raw = await converge.read_again(client, converge.wanted((s for _, s in pending), ids))
        except ApiError as exc:
            return [StepOutcome(o.address, o.action, f"not verified: {exc}") for o, _ in pending]
        outcomes = converge.not_converged(plan, pending, converge.found_in(raw, ids), env, ids)
        if not outcomes:
            break
        left = {o.address for o in outcomes}  # looked at again: only what has not converged
        pending = [(o, s) for o, s in pending if o.address in left]
    return outcomes


def _counts(stats: Any) -> tuple[int, int]:
    if stats is None:
        return (0, 0)
    return (int(stats.reads()), int(stats.writes()))
