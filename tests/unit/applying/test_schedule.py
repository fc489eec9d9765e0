"""The apply scheduler with hand-made plans and a fake executor: order, concurrency, failures."""

from __future__ import annotations

import asyncio

import pytest

from apimctl.applying.command import check_deletes
from apimctl.applying.run import execute_units
from apimctl.applying.schedule import PartlyDone, Unit, build_graph, is_acyclic
from apimctl.errors import Invalid, PlanError, QuotaExhausted, ServerError
from apimctl.plans.model import Plan, Step
from apimctl.plans.progress import ProgressEvent
from apimctl.plans.result import ApplyResult, StepOutcome


def step(kind: str, key: str, action: str = "create", deps: tuple[str, ...] = ()) -> Step:
    return Step(action=action, kind=kind, key=key, depends_on=deps)  # type: ignore[arg-type]


def units(*steps: Step) -> list[Unit]:
    return [Unit((s,)) for s in steps]


class FakeExecutor:
    def __init__(self, fail: dict[str, BaseException] | None = None, delay: float = 0.01) -> None:
        self.fail = fail or {}
        self.delay = delay
        self.order: list[str] = []
        self.running = 0
        self.max_running = 0

    async def __call__(self, unit: Unit) -> None:
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(self.delay)
            if unit.name in self.fail:
                raise self.fail[unit.name]
            self.order.append(unit.name)
        finally:
            self.running -= 1


def run(us: list[Unit], ex: FakeExecutor, parallelism: int = 4,
        events: list[ProgressEvent] | None = None) -> ApplyResult:
    cb = events.append if events is not None else None
    return asyncio.run(execute_units(us, ex, parallelism=parallelism, progress=cb))


def test_parents_before_children_and_all_done() -> None:
    svc = step("service", "W")
    ep = step("endpoint", "W/F", deps=("service:W",))
    dom = step("domain", "example.com")
    ep2 = step("endpoint", "W/G", deps=("service:W", "domain:example.com"))
    ex = FakeExecutor()
    result = run(units(ep2, ep, svc, dom), ex)
    assert result.exit_code == 0
    assert ex.order.index("service:W") < ex.order.index("endpoint:W/F")
    assert ex.order.index("domain:example.com") < ex.order.index("endpoint:W/G")
    assert sorted(o.address for o in result.done) == sorted(ex.order)


def test_independent_steps_run_concurrently_bounded_by_parallelism() -> None:
    ex = FakeExecutor(delay=0.05)
    result = run(units(*(step("role", f"r{i}") for i in range(10))), ex, parallelism=3)
    assert result.exit_code == 0
    assert ex.max_running == 3


def test_failure_skips_dependants_transitively_and_independent_steps_finish() -> None:
    svc = step("service", "W")
    ep = step("endpoint", "W/F", deps=("service:W",))
    plan_ = step("plan", "P/Gold", deps=("endpoint:W/F",))
    other = step("role", "Partners")
    ex = FakeExecutor(fail={"service:W": Invalid("create service W: 400 name: duplicate", 400)})
    result = run(units(svc, ep, plan_, other), ex)
    assert [o.address for o in result.done] == ["role:Partners"]
    assert result.failed == [StepOutcome("service:W", "create", "create service W: 400 name: duplicate")]
    skipped = {o.address: o.reason for o in result.skipped}
    assert set(skipped) == {"endpoint:W/F", "plan:P/Gold"}
    assert "service:W" in skipped["endpoint:W/F"]
    assert "endpoint:W/F" in skipped["plan:P/Gold"]
    assert result.exit_code == 3


def test_nothing_written_is_exit_1() -> None:
    ex = FakeExecutor(fail={"role:a": ServerError("boom", 500)})
    result = run(units(step("role", "a"), step("role", "b", deps=("role:a",))), ex)
    assert not result.done and result.exit_code == 1


def test_quota_exhausted_stops_starting_new_units() -> None:
    first = step("role", "a")
    later = [step("role", f"b{i}", deps=("role:a",)) for i in range(3)]
    indep = step("domain", "x.com", deps=("role:zzz",))  # unknown dep = already satisfied
    ex = FakeExecutor(fail={"role:a": QuotaExhausted("daily quota exhausted", 403)})
    result = run(units(first, *later, indep), ex, parallelism=1)
    assert result.stopped == "daily quota exhausted"
    assert {o.address for o in result.failed} == {"role:a"}
    assert len(result.done) + len(result.skipped) == 4
    assert all("not started" in o.reason or "did not complete" in o.reason for o in result.skipped)


def test_units_carry_several_steps_and_inner_dependencies_are_ignored() -> None:
    svc = step("service", "W")
    ep = step("endpoint", "W/F", deps=("service:W",))
    pkg = step("package", "P", deps=("endpoint:W/F",))
    us = [Unit((svc, ep)), Unit((pkg,))]
    graph = build_graph(us)
    assert graph[us[0]] == set() and graph[us[1]] == {us[0]}
    ex = FakeExecutor()
    result = run(us, ex)
    assert [o.address for o in result.done] == ["service:W", "endpoint:W/F", "package:P"]


def test_cycle_detection() -> None:
    a = step("x", "a", deps=("x:b",))
    b = step("x", "b", deps=("x:a",))
    assert not is_acyclic(units(a, b))
    assert is_acyclic(units(a, step("x", "b")))


def test_progress_events() -> None:
    events: list[ProgressEvent] = []
    ex = FakeExecutor(fail={"role:b": ServerError("boom", 500)})
    run(units(step("role", "a"), step("role", "b"), step("role", "c", deps=("role:b",))), ex, events=events)
    kinds = [(e.kind, e.address) for e in events]
    assert ("start", "role:a") in kinds and ("done", "role:a") in kinds
    assert ("failed", "role:b") in kinds and ("skipped", "role:c") in kinds
    assert ("start", "role:c") not in kinds
    assert events[-1].completed == events[-1].total == 3


def test_max_deletes() -> None:
    plan = Plan(steps=[step("role", f"r{i}", action="delete") for i in range(3)])
    check_deletes(plan, None)
    check_deletes(plan, 3)
    with pytest.raises(PlanError, match="deletes 3 objects, more than --max-deletes 2"):
        check_deletes(plan, 2)


def test_result_json_shape() -> None:
    result = ApplyResult(done=[StepOutcome("role:a", "create")], failed=[StepOutcome("role:b", "update", "x")])
    data = result.to_json()
    assert data["exit_code"] == 3
    assert data["summary"] == {"done": 1, "failed": 1, "skipped": 0, "non_converged": 0}
    assert data["failed"] == [{"address": "role:b", "action": "update", "reason": "x"}]


def test_a_unit_done_without_some_steps_holds_back_only_their_dependants() -> None:
    svc = step("service", "W")
    bad = step("endpoint", "W/Bad", deps=("service:W",))
    good = step("endpoint", "W/Good", deps=("service:W",))
    on_bad = step("plan", "P/Gold", deps=("endpoint:W/Bad",))
    on_good = step("plan", "P/Silver", deps=("endpoint:W/Good",))
    ex = FakeExecutor(fail={"service:W": PartlyDone({"endpoint:W/Bad": "POST /services: 400: maxAge: bad"})})
    events: list[ProgressEvent] = []
    result = run([Unit((svc, bad, good)), *units(on_bad, on_good)], ex, events=events)
    assert {o.address for o in result.done} == {"service:W", "endpoint:W/Good", "plan:P/Silver"}
    assert [(o.address, o.reason) for o in result.failed] == [("endpoint:W/Bad", "POST /services: 400: maxAge: bad")]
    assert [o.address for o in result.skipped] == ["plan:P/Gold"]
    assert "endpoint:W/Bad" in result.skipped[0].reason
    assert result.exit_code == 3
    assert ("failed", "endpoint:W/Bad") in {(e.kind, e.address) for e in events}


def test_an_interrupt_starts_no_new_unit_and_lets_the_running_one_finish() -> None:
    asyncio.run(_interrupt_during_a_unit())


async def _interrupt_during_a_unit() -> None:
    interrupt = asyncio.Event()
    chain = units(step("role", "a"), step("role", "b", deps=("role:a",)), step("role", "c", deps=("role:b",)))
    events: list[ProgressEvent] = []

    async def execute(unit: Unit) -> None:
        if unit.name == "role:a":
            interrupt.set()  # the signal comes while role:a is being written
            await asyncio.sleep(0.05)

    result = await execute_units(chain, execute, parallelism=4, progress=events.append, interrupt=interrupt)
    assert [o.address for o in result.done] == ["role:a"]
    assert [o.address for o in result.skipped] == ["role:b", "role:c"]
    assert result.interrupted and result.exit_code == 130
    assert [e.address for e in events if e.kind == "start"] == ["role:a"]


def test_running_calls_that_outlive_the_grace_are_cancelled() -> None:
    asyncio.run(_interrupt_with_a_slow_unit())


async def _interrupt_with_a_slow_unit() -> None:
    interrupt = asyncio.Event()

    async def execute(unit: Unit) -> None:
        if unit.name == "role:slow":
            await asyncio.sleep(30)

    async def signal_soon() -> None:
        await asyncio.sleep(0.05)
        interrupt.set()

    task = asyncio.ensure_future(signal_soon())
    result = await execute_units(units(step("role", "slow"), step("role", "next", deps=("role:slow",))),
                                 execute, parallelism=2, progress=None, interrupt=interrupt, grace=0.1)
    await task
    assert [(o.address, o.reason) for o in result.failed] == [("role:slow", "cancelled: interrupted (Ctrl-C or SIGTERM)")]
    assert [o.address for o in result.skipped] == ["role:next"]
    assert result.exit_code == 130
