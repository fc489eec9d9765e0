"""``apimctl apply`` as a function: plan the manifests (or load a saved plan), refuse what
must be refused, ask, execute.

The core of ``apimctl.cli.apply``. :func:`apply` makes every refusal, once, before anything is
written:

- before the client is opened (no call, no embedded server created): invalid manifests, a
  malformed ``--target`` or ``--ignore``, an unreadable or invalid saved plan
  (:func:`apimctl.plans.file.load_plan`);
- a saved plan made for another area, and everything planning refuses
  (:func:`apimctl.planning.build.build_plan`: no objects declared, an unknown target);
- more deletes than ``max_deletes`` (:func:`check_deletes`); changes that cut off or tighten
  more package keys than ``max_affected_keys``
  (:func:`apimctl.planning.impact.check_affected_keys`, from the plan's caller impact);
- a write to an object the area holds more than once, unless the plan repairs the copies
  or an ``id:`` pin tells them apart (:func:`apimctl.planning.duplicates.check_duplicates`);
- a secret variable that is not set (:func:`check_secrets`);
- a stale saved plan (:func:`check_fresh`): before asking, and against the read the writes
  start from (the area may change while the question waits).

Then the area's lease is taken (:mod:`apimctl.applying.lease`; unless ``lock`` is off): after
the refusals and the confirmation, so that a refused, cancelled or empty apply writes nothing,
and before the first write, and every write is fenced by it (:mod:`apimctl.applying.fence`):
sent only while the lease is known to be held; a lease lost stops the apply (exit 3, or 1 when
nothing was written). Under the lease the plan is checked once more: a plan made from
manifests is made again if the area changed since it was read (a light read of every object's
fingerprint, :mod:`apimctl.applying.snapshot`; a second apply that waited for the first finds
nothing left to do; one that was confirmed on a terminal is refused if it changed), and a saved
plan gets its stale check. The lease is renewed while the apply runs and released at the end,
whatever the end (done, partial, an error, Ctrl-C).

Then :func:`apimctl.applying.run.apply_plan` executes the plan. Of the live state the plan was
made from, only the ids are kept for the writes (:class:`~apimctl.applying.reading.Keeper`):
the live model is dropped before the first write. Asking and drawing progress are the caller's, through callbacks;
nothing here prints. A server may echo a value it refused: a caller showing progress messages
scrubs them of ``plan.secret_values`` (filled by :func:`check_secrets` for a saved plan).

The result counts every call the command made through the client (reading the area, the
lease, the writes, the convergence check) and the seconds it took, without the time the
confirmation question waited.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from apimctl import sensitive
from apimctl.applying import budget, journal, reading
from apimctl.applying.bodies import (
    SECRET_PATHS,
    StepError,
    env_mapping,
    path_value,
    resolve_secrets,
)
from apimctl.applying.calls import Client
from apimctl.applying.fence import FencedClient, elapsed
from apimctl.applying.journal import Journal
from apimctl.applying.lease import DEFAULT_TTL, Lease, unlock
from apimctl.applying.reading import Keeper
from apimctl.applying.run import ApplyOptions, apply_plan, by_address, read_state
from apimctl.applying.schedule import ProgressCallback
from apimctl.applying.snapshot import Snapshot
from apimctl.errors import ApimctlError, PlanError
from apimctl.manifests import Manifest
from apimctl.planning import PlanOptions, read_and_plan
from apimctl.planning.command import Keep, Notice, keep_nothing, quiet, read_manifests
from apimctl.planning.duplicates import check_duplicates
from apimctl.planning.impact import attach_impact, check_affected_keys
from apimctl.plans.file import load_plan
from apimctl.plans.model import Plan
from apimctl.plans.result import ApplyResult
from apimctl.state.live import LiveObject, LiveState
from apimctl.state.normalise import canonical_datetime

Connect = Callable[[], AbstractAsyncContextManager[Client]]
RELEASE_WITHIN = 10.0  # seconds releasing the lease may take at most (a hung server)
# seconds from the first Ctrl-C or SIGTERM to the summary: the running calls get GRACE of
# them, releasing the lease the rest (GitHub's runner sends SIGTERM 7.5 s after SIGINT)
STOP_WITHIN = 6.0
Confirm = Callable[[Plan], bool]
Display = Callable[[Plan], AbstractContextManager[ProgressCallback]]


@dataclass(frozen=True)
class ApplyRequest:
    """The inputs of one apply: manifest ``paths`` (shaped by ``overlays``, ``prune``,
    ``targets``, ``ignores``) or a saved ``plan_file``. ``target`` names the area this run
    targets (a saved plan made for another is refused); ``env`` supplies secret variables
    (default: the process environment)."""

    paths: tuple[str, ...] = ()
    overlays: tuple[str, ...] = ()
    plan_file: str | None = None
    prune: bool = False
    targets: tuple[str, ...] = ()
    ignores: tuple[str, ...] = ()
    max_deletes: int | None = None
    target: str = ""
    parallelism: int = 8
    env: Mapping[str, str] | None = None
    repair_duplicates: bool = False
    lock: bool = True
    lock_timeout: float = 0.0
    lease_ttl: float = DEFAULT_TTL  # seconds the lease lives without renewal
    rotate: tuple[str, ...] = ()  # --rotate KIND:KEY:PATH; --rotate-secrets is ROTATE_ALL
    max_affected_keys: int | None = None
    impact: str = "auto"  # --impact: the callers each change affects
    journal: str | None = None  # --journal PATH; default .apimctl/runs/RUN_ID.jsonl
    journaled: bool = True  # write the run's journal (tests and benchmarks may turn it off)
    resumes: str | None = None  # the run id this apply resumes (apply --resume)
    # the (action, address) steps the resumed run left undone: a new plan must stay within them
    remaining: frozenset[tuple[str, str]] | None = None
    resumed_manifests: str = ""  # the digest of the resumed run's manifests ("": unknown)
    read_all: bool = False  # a resume reads the whole area (its journal cannot tell what it needs)
    daily_quota: int | None = None  # --daily-quota N: calls per day; refused up front beyond
    quota_used: int = 0  # calls already made today by the runs journaled here
    show_budget: bool = True  # say the plan's budget (not against the embedded server)


async def apply(request: ApplyRequest, connect: Connect, *, confirm: Confirm | None = None,
                progress: Display | None = None, notice: Notice = quiet,
                note: Callable[[str], None] | None = None,
                interrupt: asyncio.Event | None = None,
                ticks: Callable[[], float] = elapsed, keep: Keep = keep_nothing) -> ApplyResult:
    """Apply ``request`` to the area ``connect()`` opens a client to.

    ``confirm(plan)`` is asked after every refusal and before any write; without it the
    plan is applied unasked (``--auto-approve``). ``progress(plan)`` opens the display of
    the execution and gives its callback; ``notice`` gets manifest warnings, ``note`` the
    verbose log of the writes, ``keep`` the manifests. The result carries the plan; an empty plan gives an empty
    result, a declined confirmation a ``cancelled`` one. ``notice`` also hears about the
    lease (waiting for it, taking over a stale one); another apply holding it past
    ``lock_timeout`` raises :class:`~apimctl.applying.lease.LeaseHeld`.

    ``interrupt`` is set by the caller on Ctrl-C or SIGTERM: before the lease is taken it
    cancels the apply (nothing written); during the execution no new step is started, the
    running ones finish (bounded), and the result is ``interrupted`` (exit code 130).

    ``ticks`` is the monotonic clock the lease's fencing reads (injectable for tests).
    """
    source = _read_input(request, notice, keep)
    request = _resume_reads(request, source, notice)
    async with connect() as client:
        meter = Meter(client)
        plan, planned = await _plan_of(source, client, request)
        if not plan.steps:
            return meter.counted(ApplyResult(plan=plan))
        check_resumable(plan, request)
        check_deletes(plan, request.max_deletes)
        check_affected_keys(plan, request.max_affected_keys)
        check_duplicates(plan)
        check_secrets(plan, request.env)
        plan.budget = budget.estimate(plan, meter.spent()[0], qps=_qps(client), lease=request.lock)
        if request.show_budget:
            notice(plan.budget.text())
        budget.check_quota(plan.budget, request.daily_quota, sum(meter.spent()), request.quota_used,
                           told=getattr(client.stats, "quota", None))
        if planned is None and (confirm is not None or request.lock):
            # do not ask about a plan that is stale already, nor take the lease for it
            check_fresh(plan, (await read_state(client))[1])
        if _interrupted(interrupt):
            return ApplyResult(cancelled=True, interrupted=True, plan=plan)
        if confirm is not None:
            with meter.paused():
                if not confirm(plan):
                    return ApplyResult(cancelled=True, plan=plan)
        if _interrupted(interrupt):  # a signal that waited for the prompt to end
            return ApplyResult(cancelled=True, interrupted=True, plan=plan)
        async with _leased(client, request, notice, ticks, interrupt) as lease:
            if lease is not None:
                plan, planned = await _recheck(source, client, request, plan, planned, lease,
                                               asked=confirm is not None)
            writer: Client = client if lease is None else FencedClient(client, lease)
            # the last calls of a known daily quota are kept for releasing the lease
            writer = budget.Guarded(writer, budget.Gauge(client.stats, request.daily_quota, request.quota_used),
                                    reserve=budget.RELEASE_CALLS if lease is not None else 0)
            run_id = lease.holder.run_id if lease is not None else uuid.uuid4().hex[:12]
            result = (await _execute(writer, plan, planned, request, progress, note, interrupt,
                                     _journal(request, run_id, plan, source))
                      if plan.steps else ApplyResult(plan=plan))
        return meter.counted(result)  # the lease released: its calls are counted too


def _qps(client: Client) -> float | None:
    limiter = getattr(client, "limiter", None)
    qps = getattr(limiter, "qps", None)
    return float(qps) if isinstance(qps, int | float) and qps > 0 else None


def _interrupted(interrupt: asyncio.Event | None) -> bool:
    return interrupt is not None and interrupt.is_set()


class Meter:
    """Counts the calls a client made since the meter was made, and the seconds, without the
    time spent :meth:`paused` (a confirmation question waiting for its answer)."""

    def __init__(self, client: Client) -> None:
        self.stats = client.stats
        self.reads, self.writes = self._now()
        self.started = time.monotonic()
        self.waited = 0.0

    def _now(self) -> tuple[int, int]:
        if self.stats is None:
            return (0, 0)
        return (int(self.stats.reads()), int(self.stats.writes()))

    @contextmanager
    def paused(self) -> Iterator[None]:
        began = time.monotonic()
        try:
            yield
        finally:
            self.waited += time.monotonic() - began

    def spent(self) -> tuple[int, int]:
        """The reads and the writes made so far."""
        reads, writes = self._now()
        return reads - self.reads, writes - self.writes

    def counted(self, result: ApplyResult) -> ApplyResult:
        """``result`` with every call since the start and the seconds taken."""
        reads, writes = self._now()
        result.read_calls, result.write_calls = reads - self.reads, writes - self.writes
        result.calls = result.read_calls + result.write_calls
        result.seconds = time.monotonic() - self.started - self.waited
        return result


def _resume_reads(request: ApplyRequest, source: Plan | Manifest, notice: Notice) -> ApplyRequest:
    """``request``, reading the whole area when a resume cannot read less: its journal cannot
    tell what the remaining steps need, or the manifests changed since the run (then anything
    may differ, and the whole plan is checked against the run's), which is said."""
    if request.remaining is None or isinstance(source, Plan):
        return request
    why = ""
    if reading.resume_reads(request.remaining) is None:
        why = f"the journal of run {request.resumes} cannot tell what its remaining steps need"
    elif request.resumed_manifests != journal.manifests_digest(source.doc):
        why = (f"the manifests changed since run {request.resumes}" if request.resumed_manifests
               else f"the journal of run {request.resumes} keeps no digest of its manifests")
    if not why:
        return request
    notice(f"{why}: reading the whole area")
    return replace(request, read_all=True)


def _narrow(request: ApplyRequest) -> reading.ResumeReads | None:
    return None if request.read_all else reading.resume_reads(request.remaining)


def _journal(request: ApplyRequest, run_id: str, plan: Plan, source: Plan | Manifest | None = None) -> Journal | None:
    """The run's journal, opened with its header written (``None`` when turned off)."""
    if not request.journaled:
        return None
    path = Path(request.journal) if request.journal else journal.default_path(run_id)
    try:
        opened = Journal(path, run_id)
    except OSError as exc:
        raise PlanError(f"cannot write the apply journal {path}: {exc}; nothing was written") from None
    sources = [str(Path(p).resolve()) for p in (*request.paths, *request.overlays)]
    digest = journal.manifests_digest(source.doc) if isinstance(source, Manifest) else ""
    opened.begin(plan, area=request.target, sources=sources, resumes=request.resumes, manifests=digest)
    return opened


async def _execute(client: Client, plan: Plan, planned: Keeper | None, request: ApplyRequest,
                   progress: Display | None, note: Callable[[str], None] | None,
                   interrupt: asyncio.Event | None, log: Journal | None = None) -> ApplyResult:
    with _display(progress, plan) as update:
        options = ApplyOptions(
            parallelism=request.parallelism, env=request.env, progress=update, note=note,
            check=(lambda state: _checked(plan, state)) if planned is None else None,
            interrupt=interrupt, journal=log)
        try:
            result = await apply_plan(client, plan, options,
                                      index=planned.index if planned is not None else None)
        except BaseException:
            if log is not None:
                log.close()  # a run that raised is left unfinished: rollback and resume know
            raise
        if log is not None:
            log.finish(result)
            result.run_id, result.journal = log.run_id, str(log.path)
        return result


def _checked(plan: Plan, state: LiveState) -> None:
    """A saved plan's stale check, on the read its writes start from, which also gives the
    images of what its deletes take away (for the journal)."""
    check_fresh(plan, state)
    plan.deleted_images = journal.deleted_images(plan, state)


@asynccontextmanager
async def _leased(client: Client, request: ApplyRequest, notice: Notice,
                  ticks: Callable[[], float],
                  interrupt: asyncio.Event | None = None) -> AsyncIterator[Lease | None]:
    """The area's lease for the writes (``None`` with ``lock`` off), released on every exit:
    within :data:`RELEASE_WITHIN` seconds, or after an interrupt within what is left of
    :data:`STOP_WITHIN` seconds from it; a lease not released by then is left to expire."""
    if not request.lock:
        yield None
        return
    lease = Lease(client, timeout=request.lock_timeout, ttl=request.lease_ttl, note=notice,
                  ticks=ticks)
    signalled = _SignalTime(interrupt)
    try:
        if request.resumes:
            await _take_over(client, request.resumes, notice)
        await lease.acquire()
        yield lease
    finally:
        within = signalled.left(RELEASE_WITHIN)
        signalled.close()
        try:  # bounded: a hung server (or an interrupted run) must not hold the exit
            async with asyncio.timeout(within):
                await lease.release()
        except TimeoutError:
            notice(f"could not release the apply lease within {within:.1f} s; it is left to expire "
                   f"(within {request.lease_ttl:g} s), or break it with "
                   f"`apimctl unlock {lease.holder.run_id}`")


async def _take_over(client: Client, run_id: str, notice: Notice) -> None:
    """Break the lease the resumed run left (the daily quota stopped it before it could release
    it); another run's lease is waited for, or refused, as usual."""
    with contextlib.suppress(ApimctlError):
        if await unlock(client, run_id) is not None:
            notice(f"took over the apply lease run {run_id} left")


class _SignalTime:
    """When ``interrupt`` was set (Ctrl-C, SIGTERM, the deadline), and the seconds left to
    release the lease: what remains of :data:`STOP_WITHIN` from then."""

    def __init__(self, interrupt: asyncio.Event | None) -> None:
        self.interrupt = interrupt
        self.at: float | None = None
        self._watch = None if interrupt is None else asyncio.ensure_future(self._wait(interrupt))

    async def _wait(self, interrupt: asyncio.Event) -> None:
        await interrupt.wait()
        self.at = time.monotonic()

    def left(self, otherwise: float) -> float:
        """Seconds the release may take: ``otherwise`` when no interrupt came."""
        if self.interrupt is None or not self.interrupt.is_set():
            return otherwise
        at = self.at if self.at is not None else time.monotonic()
        return max(0.0, min(otherwise, STOP_WITHIN - (time.monotonic() - at)))

    def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()


async def _recheck(source: Plan | Manifest, client: Client, request: ApplyRequest, plan: Plan,
                   planned: Keeper | None, lease: Lease, *, asked: bool) -> tuple[Plan, Keeper | None]:
    """The plan to execute under the lease.

    Manifests are planned again when the area changed since they were planned (its snapshot
    differs): what another apply did meanwhile is not done twice. A plan the user confirmed
    must still be that plan. A saved plan is kept; ``apply_plan`` reads the area under the
    lease and refuses it if stale."""
    if asked:
        await lease.confirm()  # the prompt may have outlived the lease
    if planned is None:
        return plan, None
    narrow = _narrow(request)
    if await Snapshot.read(client, narrow.skip if narrow else ()) == planned.snapshot:
        return plan, planned
    fresh, planned = await _plan_of(source, client, request)
    if asked and _signature(fresh) != _signature(plan):
        raise PlanError("the area changed while the plan waited for confirmation (another apply?); "
                        "nothing was written; run apply again to see the new plan")
    if fresh.steps:
        check_resumable(fresh, request)
        check_deletes(fresh, request.max_deletes)
        check_affected_keys(fresh, request.max_affected_keys)
        check_secrets(fresh, request.env)
    return fresh, planned


def _signature(plan: Plan) -> list[tuple[str, str, tuple[Any, ...]]]:
    return [(s.action, s.address, s.changes) for s in plan.steps]



def _read_input(request: ApplyRequest, notice: Notice, keep: Keep) -> Plan | Manifest:
    """The saved plan, or the manifests (``--target`` and ``--ignore`` checked): everything
    that can be refused before a call."""
    if request.plan_file is not None:
        if request.rotate:
            raise PlanError("--rotate-secrets and --rotate shape a new plan: use them with "
                            "`plan --out FILE`, and apply that plan")
        return load_plan(request.plan_file)
    return read_manifests(request.paths, request.overlays, request.targets, request.ignores,
                          notice, rotate=request.rotate, keep=keep)


async def _plan_of(source: Plan | Manifest, client: Client,
                   request: ApplyRequest) -> tuple[Plan, Keeper | None]:
    """The plan to apply, and what is kept of the live state it was made from (``None`` for a
    saved plan): the area is read and held as ``plan`` reads and holds it, and the live model
    is gone when this returns."""
    if isinstance(source, Plan):
        if source.target and source.target != request.target:
            raise PlanError(f"the saved plan was made for {source.target}; this run targets {request.target}")
        return source, None
    narrow = _narrow(request)  # a resume reads what its steps need
    options = PlanOptions(prune=request.prune, targets=request.targets or (narrow.targets if narrow else ()),
                          ignores=request.ignores,
                          repair_duplicates=request.repair_duplicates, rotate=request.rotate)
    kept = Keeper()
    made, state = await read_and_plan(client, source, options, read=kept.read,
                                      skip=narrow.skip if narrow else ())
    await attach_impact(client, made, state, request.impact)
    made.target = request.target
    made.deleted_images = journal.deleted_images(made, state)
    return made, kept


@contextmanager
def _display(progress: Display | None, plan: Plan) -> Iterator[ProgressCallback | None]:
    if progress is None:
        yield None
        return
    with progress(plan) as update:
        yield update


# --- refusals --------------------------------------------------------------------------------


def check_deletes(plan: Plan, max_deletes: int | None) -> None:
    """Refuse, before anything is written, a plan deleting more than ``max_deletes`` objects."""
    if max_deletes is None:
        return
    deletes = [s.address for s in plan.steps if s.action == "delete"]
    if len(deletes) > max_deletes:
        shown = ", ".join(deletes[:10]) + (", ..." if len(deletes) > 10 else "")
        objects = "object" if len(deletes) == 1 else "objects"
        raise PlanError(f"the plan deletes {len(deletes)} {objects}, more than --max-deletes {max_deletes}: "
                        f"{shown}; nothing was written")


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
    sensitive.register(*plan.secret_values.values())  # never shown, in any line
    if problems:
        raise PlanError("\n".join(problems) + "\nnothing was written")


def check_resumable(plan: Plan, request: ApplyRequest) -> None:
    """Refuse to resume a run when the manifests now plan a step its plan did not leave
    undone (the manifests or the area changed since)."""
    if request.remaining is None:
        return
    extra = [f"{s.action} {s.address}" for s in plan.steps if (s.action, s.address) not in request.remaining]
    if extra:
        raise PlanError(f"the plan no longer matches run {request.resumes}'s: the manifests now also "
                        "plan\n  " + "\n  ".join(extra[:20]) + ("\n  ..." if len(extra) > 20 else "")
                        + "\nnothing was written; apply them without --resume")


def check_fresh(plan: Plan, state: LiveState) -> None:
    """Refuse a saved plan when the area changed since it was made."""
    reasons = stale_reasons(plan, state)
    if reasons:
        raise PlanError("the saved plan is stale; the area changed since it was made:\n  "
                        + "\n  ".join(reasons) + "\nmake a new plan")


def stale_reasons(plan: Plan, state: LiveState) -> list[str]:
    """What changed in the area since ``plan`` was made (empty: the plan is fresh)."""
    now = by_address(state)
    ids = _by_id(state)
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


def _by_id(state: LiveState) -> dict[tuple[str, str], LiveObject]:
    return {(o.kind, o.id): o for objs in state.objects.values() for o in objs if o.id}


def _same_instant(a: str | None, b: str | None) -> bool:
    return a == b or canonical_datetime(a) == canonical_datetime(b)
