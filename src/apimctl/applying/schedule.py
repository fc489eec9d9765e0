"""Run the units of an apply in dependency order, concurrently where the graph allows.

``apimctl.applying.run`` groups the steps of a :class:`~apimctl.plans.model.Plan` into :class:`Unit` values
(one step, or several that one nested API call covers), and hands them here with an async
``execute`` function. The scheduler walks the graph with :class:`graphlib.TopologicalSorter`:
every unit whose dependencies are done is started, up to ``parallelism`` at a time. A unit
that fails marks its dependants (transitively) as skipped; independent units still run.
A unit written without some of its steps (:class:`PartlyDone`) counts those steps as failed
and holds back only what depends on them.
An error of a *stopping* type (the daily quota is gone, the token was refused, the server is
unreachable, the apply lease was lost) stops the start of new units: what is running finishes, the rest is reported as
not started.
An *interrupt* (``interrupt``: an :class:`asyncio.Event` the caller sets on Ctrl-C or SIGTERM)
stops the start of new units the same way; the running calls get up to ``grace`` seconds to
finish, then are cancelled (reported as failed: ``interrupted``).

Nothing here talks to the network or prints; progress goes through a callback.
"""

from __future__ import annotations

import asyncio
import graphlib
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from apimctl.applying.fence import LeaseLost
from apimctl.errors import ApimctlError, AuthError, QuotaExhausted, Unreachable
from apimctl.plans.model import Step
from apimctl.plans.progress import EventKind, ProgressEvent
from apimctl.plans.progress import ProgressCallback as ProgressCallback

STOPPING_ERRORS: tuple[type[BaseException], ...] = (QuotaExhausted, AuthError, Unreachable, LeaseLost)

INTERRUPTED = "interrupted (Ctrl-C or SIGTERM)"
# seconds the running calls get to finish after an interrupt: a CI runner sends SIGKILL 10 s
# after its first signal, and the lease and the summary still need their turn
GRACE = 3.0


@dataclass(frozen=True, eq=False)
class Unit:
    """Steps executed together (one step, or a parent create carrying its children).

    Compared and hashed by identity: a unit is a node of the apply graph.
    """

    steps: tuple[Step, ...]

    @property
    def name(self) -> str:
        return self.steps[0].address

    @property
    def addresses(self) -> tuple[str, ...]:
        return tuple(s.address for s in self.steps)


Execute = Callable[["Unit"], Coroutine[Any, Any, None]]


class PartlyDone(ApimctlError):
    """Raised by ``execute`` when a unit was written without some of its steps (a nested
    create the API refused because of one child, sent again without it): ``failed`` maps the
    address of each step left out to why. The others are done."""

    def __init__(self, failed: dict[str, str]) -> None:
        super().__init__("; ".join(f"{a}: {r}" for a, r in failed.items()))
        self.failed = failed


@dataclass
class UnitOutcome:
    """What became of one unit: ``status`` done | failed | skipped, and why. ``failed_steps``:
    the steps of a done unit that failed on their own (see :class:`PartlyDone`)."""

    unit: Unit
    status: Literal["done", "failed", "skipped"]
    reason: str = ""
    error: BaseException | None = None
    failed_steps: dict[str, str] = field(default_factory=dict)


@dataclass
class ScheduleResult:
    outcomes: list[UnitOutcome] = field(default_factory=list)
    stopped: str | None = None  # why no further unit was started, if so
    interrupted: bool = False  # the stop was an interrupt (Ctrl-C, SIGTERM)


def build_graph(units: Sequence[Unit]) -> dict[Unit, set[Unit]]:
    """Unit -> the units it depends on, from the ``depends_on`` of its steps.

    A dependency on an address that no unit carries is already satisfied (the object exists
    live); a dependency inside the same unit is covered by the nested call.
    """
    owner = {addr: unit for unit in units for addr in unit.addresses}
    graph: dict[Unit, set[Unit]] = {}
    for unit in units:
        deps = {owner[d] for s in unit.steps for d in s.depends_on if d in owner}
        deps.discard(unit)
        graph[unit] = deps
    return graph


def is_acyclic(units: Sequence[Unit]) -> bool:
    try:
        graphlib.TopologicalSorter(build_graph(units)).prepare()
    except graphlib.CycleError:
        return False
    return True


def describe(exc: BaseException) -> str:
    """A one-line reason for a failure; our own errors already say where and what."""
    if isinstance(exc, ApimctlError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class Scheduler:
    """Walks the unit graph once; see the module docstring."""

    def __init__(self, units: Sequence[Unit], execute: Execute, *,
                 parallelism: int = 8, progress: ProgressCallback | None = None,
                 interrupt: asyncio.Event | None = None, grace: float = GRACE) -> None:
        self.units = list(units)
        self.interrupt = interrupt
        self.grace = grace
        self.execute = execute
        self.parallelism = max(1, parallelism)
        self.progress = progress or (lambda event: None)
        self.total = sum(len(u.steps) for u in self.units)
        self.completed = 0
        self.result = ScheduleResult()
        self._graph = build_graph(self.units)
        self._bad: set[str] = set()  # addresses of the failed and skipped steps

    async def run(self) -> ScheduleResult:
        sorter = graphlib.TopologicalSorter(self._graph)
        sorter.prepare()
        queue: list[Unit] = []
        running: dict[asyncio.Task[None], Unit] = {}
        try:
            while sorter.is_active() or running:
                for unit in sorter.get_ready():
                    if not self._skip_if_blocked(unit):
                        queue.append(unit)
                    else:
                        sorter.done(unit)
                if self.interrupt is not None and self.interrupt.is_set() and not self.result.stopped:
                    self.result.stopped = INTERRUPTED
                    self.result.interrupted = True
                    await self._drain(running, sorter)
                if self.result.stopped:
                    for unit in queue:
                        self._finish(unit, "skipped", f"not started: {self.result.stopped}")
                        sorter.done(unit)
                    queue.clear()
                while queue and len(running) < self.parallelism:
                    unit = queue.pop(0)
                    self._emit("start", unit)
                    running[asyncio.create_task(self.execute(unit))] = unit
                if not running:
                    if queue or sorter.is_active():
                        continue
                    break
                finished = await self._wait(running)
                for task in finished:
                    unit = running.pop(task)
                    self._settle(unit, task)
                    sorter.done(unit)
        except BaseException:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            raise
        return self.result

    async def _wait(self, running: dict[asyncio.Task[None], Unit]) -> set[asyncio.Task[None]]:
        """The tasks that finished first, or none when an interrupt came first."""
        if self.interrupt is None:
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            return finished
        waiter: asyncio.Future[Any] = asyncio.ensure_future(self.interrupt.wait())
        waited: set[asyncio.Future[Any]] = {*running, waiter}
        try:
            done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        return {task for task in running if task in done}

    async def _drain(self, running: dict[asyncio.Task[None], Unit],
                     sorter: graphlib.TopologicalSorter[Unit]) -> None:
        """After an interrupt: the running calls finish within ``grace`` seconds, or are cancelled."""
        if running:
            await asyncio.wait(running, timeout=self.grace)
        for task, unit in list(running.items()):
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                running.pop(task)
                self._finish(unit, "failed", f"cancelled: {INTERRUPTED}")
            else:
                running.pop(task)
                self._settle(unit, task)
            sorter.done(unit)

    def _settle(self, unit: Unit, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            self._finish(unit, "failed", f"cancelled: {INTERRUPTED}")
            return
        exc = task.exception()
        if exc is None:
            self._finish(unit, "done", "")
            return
        if isinstance(exc, PartlyDone):
            self._finish(unit, "done", "", failed_steps=exc.failed)
            return
        if isinstance(exc, STOPPING_ERRORS) and not self.result.stopped:
            self.result.stopped = describe(exc)
        self._finish(unit, "failed", describe(exc), exc)

    def _skip_if_blocked(self, unit: Unit) -> bool:
        own = set(unit.addresses)
        blockers = sorted({d for s in unit.steps for d in s.depends_on if d in self._bad and d not in own})
        if not blockers:
            return False
        self._finish(unit, "skipped", "depends on " + ", ".join(blockers) + " which did not complete")
        return True

    def _finish(self, unit: Unit, status: Literal["done", "failed", "skipped"], reason: str,
                error: BaseException | None = None, failed_steps: dict[str, str] | None = None) -> None:
        failed_steps = failed_steps or {}
        self.result.outcomes.append(UnitOutcome(unit, status, reason, error, failed_steps))
        self._bad |= set(unit.addresses) if status != "done" else set(failed_steps)
        self.completed += len(unit.steps)
        self._emit(status, unit, reason, failed_steps)

    def _emit(self, kind: EventKind, unit: Unit, message: str = "",
              failed_steps: dict[str, str] | None = None) -> None:
        for step in unit.steps:
            if failed_steps and step.address in failed_steps:
                event = ProgressEvent("failed", step.address, step.action, failed_steps[step.address],
                                      self.completed, self.total)
            else:
                event = ProgressEvent(kind, step.address, step.action, message, self.completed, self.total)
            self.progress(event)


async def run_units(units: Iterable[Unit], execute: Execute, *,
                    parallelism: int = 8, progress: ProgressCallback | None = None,
                    interrupt: asyncio.Event | None = None, grace: float = GRACE) -> ScheduleResult:
    """Execute ``units`` in dependency order; see :class:`Scheduler`."""
    return await Scheduler(list(units), execute, parallelism=parallelism, progress=progress,
                           interrupt=interrupt, grace=grace).run()
