"""Apply: execute a :class:`~apimctl.plans.model.Plan` against a live area, safely and concurrently.

Called by ``apimctl.cli.apply`` (and by tests and benchmarks). The stages:

1. a saved plan is checked for staleness (:func:`check_fresh`): the fingerprints of every
   live object it touches are read again, and any difference refuses the plan;
2. ``--max-deletes`` is enforced before anything is written (:func:`check_deletes`);
3. the steps are grouped into units (nested writes, see :mod:`apimctl.applying.writes`) and run by
   :mod:`apimctl.applying.schedule` in dependency order, ``parallelism`` at a time, every call through
   the client's one shared rate limiter;
4. the area is read again and every done step is compared with it the way ``plan`` compares
   (normalise + diff); anything still different is reported as not converged.

The outcome is an :class:`ApplyResult` (rendered by ``apimctl.render``). Nothing here prints;
progress is reported through a callback.
"""

from __future__ import annotations

import asyncio
import fnmatch
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apimctl import kinds
from apimctl.applying.bodies import (
    SECRET_PATHS,
    LiveIndex,
    StepError,
    env_mapping,
    path_value,
    resolve_secrets,
)
from apimctl.applying.calls import Client
from apimctl.applying.schedule import Execute, ProgressCallback, ScheduleResult, Unit, run_units
from apimctl.applying.units import group_units
from apimctl.applying.writes import Writer
from apimctl.errors import ApiError, PlanError
from apimctl.planning.diff import diff, ignored
from apimctl.plans.model import Plan, Step, address
from apimctl.state import live
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import Context, canonical_datetime, normalise

EXIT_OK, EXIT_ERROR, EXIT_PARTIAL = 0, 1, 3
VISIBILITY_DELAY = 1.0  # seconds before the convergence check reads a second time


@dataclass(frozen=True)
class StepOutcome:
    """One line of the apply summary: a step's address, its action, and why (if not done)."""

    address: str
    action: str
    reason: str = ""

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "action": self.action, "reason": self.reason}


@dataclass
class ApplyResult:
    """What an apply did. ``exit_code``: 0 all done, 3 partial, 1 nothing written and errors."""

    done: list[StepOutcome] = field(default_factory=list)
    failed: list[StepOutcome] = field(default_factory=list)
    skipped: list[StepOutcome] = field(default_factory=list)
    non_converged: list[StepOutcome] = field(default_factory=list)
    calls: int = 0  # HTTP requests sent during the apply (reads and writes, retries included)
    write_calls: int = 0
    read_calls: int = 0
    stopped: str | None = None  # why the apply stopped starting new steps, if it did
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not (self.failed or self.skipped or self.non_converged)

    @property
    def exit_code(self) -> int:
        if self.ok:
            return EXIT_OK
        return EXIT_PARTIAL if self.done else EXIT_ERROR

    def summary(self) -> dict[str, int]:
        return {"done": len(self.done), "failed": len(self.failed), "skipped": len(self.skipped),
                "non_converged": len(self.non_converged)}

    def to_json(self) -> dict[str, Any]:
        return {
            "format_version": "1.0",
            "exit_code": self.exit_code,
            "summary": self.summary(),
            "done": [o.to_json() for o in self.done],
            "failed": [o.to_json() for o in self.failed],
            "skipped": [o.to_json() for o in self.skipped],
            "non_converged": [o.to_json() for o in self.non_converged],
            "stopped": self.stopped,
            "calls": {"total": self.calls, "writes": self.write_calls, "reads": self.read_calls},
            "seconds": round(self.seconds, 3),
        }


def check_deletes(plan: Plan, max_deletes: int | None) -> None:
    """Refuse, before anything is written, a plan deleting more than ``max_deletes`` objects."""
    if max_deletes is None:
        return
    deletes = [s.address for s in plan.steps if s.action == "delete"]
    if len(deletes) > max_deletes:
        shown = ", ".join(deletes[:10]) + (", ..." if len(deletes) > 10 else "")
        raise PlanError(f"the plan deletes {len(deletes)} objects, more than --max-deletes {max_deletes}: "
                        f"{shown}; nothing was written")


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


async def execute_units(units: list[Unit], execute: Execute, *,
                        parallelism: int, progress: ProgressCallback | None) -> ApplyResult:
    """Run ``units`` with the scheduler and summarise (no API knowledge here; tests use it)."""
    result = ApplyResult()
    collect(result, await run_units(units, execute, parallelism=parallelism, progress=progress))
    return result


def step_index(plan: Plan) -> Mapping[str, Step]:
    return {s.address: s for s in plan.steps}


# --------------------------------------------------------------------------- live state


async def read_state(client: Client) -> tuple[LiveIndex, LiveState]:
    raw = await live.read_raw(client)
    return LiveIndex.from_raw(raw), live.from_raw(raw)


async def add_organizations(client: Client, plan: Plan, index: LiveIndex) -> None:
    """Organizations are read only when a role step names one."""
    if not any(s.kind == "role" and (s.desired or {}).get("organization") for s in plan.steps):
        return
    for org in await client.list_all("/organizations", {"fields": "id,name"}):
        index.add(address("organization", str(org.get("name"))), org)


def by_address(state: LiveState) -> dict[str, LiveObject]:
    return {address(o.kind, o.key): o for objs in state.objects.values() for o in objs}


def by_id(state: LiveState) -> dict[tuple[str, str], LiveObject]:
    return {(o.kind, o.id): o for objs in state.objects.values() for o in objs if o.id}


# --------------------------------------------------------------------------- stale plans


def _same_instant(a: str | None, b: str | None) -> bool:
    return a == b or canonical_datetime(a) == canonical_datetime(b)


def stale_reasons(plan: Plan, state: LiveState) -> list[str]:
    """What changed in the area since ``plan`` was made (empty: the plan is fresh)."""
    now = by_address(state)
    ids = by_id(state)
    reasons: list[str] = []
    for addr, fp in sorted(plan.fingerprints.items()):
        # a renamed object (previousNames, a pinned id) is still listed under its old name
        obj = ids.get((fp.kind, fp.id)) or now.get(addr)
        if obj is None or obj.id != fp.id:
            reasons.append(f"{addr}: no longer exists" if obj is None else f"{addr}: was replaced (new id)")
        elif fp.revision is not None and obj.revision != fp.revision:
            reasons.append(f"{addr}: changed (revision {fp.revision} -> {obj.revision})")
        elif fp.updated is not None and not _same_instant(obj.updated, fp.updated):
            reasons.append(f"{addr}: changed (updated {fp.updated} -> {obj.updated})")
    for step in plan.steps:
        obj = now.get(step.address)
        if step.action == "create" and obj is not None:
            reasons.append(f"{step.address}: now exists (created since the plan was made)")
        elif step.action != "create" and step.address not in plan.fingerprints:
            obj = (ids.get((step.kind, step.id)) if step.id else None) or obj
            if obj is None:
                reasons.append(f"{step.address}: no longer exists")
            elif step.id and obj.id != step.id:
                reasons.append(f"{step.address}: was replaced (new id)")
    return reasons


def check_fresh(plan: Plan, state: LiveState) -> None:
    reasons = stale_reasons(plan, state)
    if reasons:
        raise PlanError("the saved plan is stale; the area changed since it was made:\n  "
                        + "\n  ".join(reasons) + "\nmake a new plan")


async def check_saved_plan(client: Client, plan: Plan, env: Mapping[str, str] | None = None) -> None:
    """Refuse a saved plan early (before a confirmation prompt): stale, or missing variables.
    :func:`apply_plan` checks again right before writing."""
    check_secrets(plan, env)
    _, state = await read_state(client)
    check_fresh(plan, state)


def check_secrets(plan: Plan, env: Mapping[str, str] | None) -> None:
    """Every secret reference resolves before anything is written. The values resolved for a
    saved plan are kept in ``plan.secret_values`` (never serialised), so that output can be
    scrubbed of them."""
    problems: list[str] = []
    environ = env_mapping(env)
    for step in plan.steps:
        if step.desired is None:
            continue
        try:
            resolved = resolve_secrets(step, step.desired, plan.secret_values, environ)
        except StepError as exc:
            problems.append(str(exc))
            continue
        for path in SECRET_PATHS.get(step.kind, ()):
            value = path_value(resolved, path)
            if isinstance(value, str) and value:
                plan.secret_values.setdefault(f"{step.address}#{path}", value)
    if problems:
        raise PlanError("\n".join(problems) + "\nnothing was written")


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
    first: dict[str, str] = {}
    for obj in state.of("errorSet"):
        if obj.parent_key is not None:
            first.setdefault(obj.parent_key, obj.name)
    return first


def remaining_changes(plan: Plan, step: Step, now: Mapping[str, LiveObject],
                      default_sets: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """Why ``step`` has not converged, or ``None`` when the live object matches it."""
    obj = now.get(step.address)
    if step.action == "delete":
        return None if obj is None else "still exists"
    if obj is None:
        return "does not exist"
    kind = kinds.get(step.kind)
    ctx = Context(default_error_set=default_sets.get(obj.parent_key or ""))
    desired = resolve_secrets(step, step.desired or {}, plan.secret_values, env)
    changes = diff(kind, normalise(kind, obj.doc, ctx), normalise(kind, desired, ctx))
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
    """How to apply: ``saved`` plans are checked for staleness first."""

    parallelism: int = 8
    saved: bool = False
    max_deletes: int | None = None
    env: Mapping[str, str] | None = None
    batch: bool = True
    verify: bool = True
    progress: ProgressCallback | None = None
    note: Callable[[str], None] | None = None


async def apply_plan(client: Client, plan: Plan, options: ApplyOptions | None = None, *,
                     raw: Mapping[str, list[dict[str, Any]]] | None = None) -> ApplyResult:
    """Execute ``plan`` (see the module docstring). Raises ``PlanError`` before any write when
    the plan is refused (stale, too many deletes, a secret variable missing).

    ``raw`` is the live state the plan was just made from (``live.read_raw``), which saves
    reading it again; a saved plan is always checked against a fresh read.
    """
    opts = options or ApplyOptions()
    started = time.monotonic()
    stats = getattr(client, "stats", None)
    before = _counts(stats)
    check_deletes(plan, opts.max_deletes)
    check_secrets(plan, opts.env)
    if not plan.steps:
        return ApplyResult()
    if raw is None or opts.saved:
        index, state = await read_state(client)
    else:
        index, state = LiveIndex.from_raw(raw), live.from_raw(raw)
    if opts.saved:
        check_fresh(plan, state)
    await add_organizations(client, plan, index)
    index.add_renames(plan.steps)
    writer = Writer(client, plan, index, env=opts.env, note=opts.note)
    units = group_units(plan, batch=opts.batch)
    result = await execute_units(units, writer.execute, parallelism=opts.parallelism, progress=opts.progress)
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
