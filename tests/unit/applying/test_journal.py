"""The journal file: what a run writes is what :func:`apimctl.applying.journal.load` reads
back, a line at a time, flushed (a reader sees each line as soon as it is written); a line cut
short, a journal of another run or area, and a file that is no journal are refused."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl import sensitive
from apimctl.applying.journal import Journal, JournalError, load
from apimctl.applying.schedule import PartlyDone, Unit
from apimctl.plans.model import Change, Plan, Step
from apimctl.plans.result import ApplyResult

OUTCOMES = st.sampled_from(["done", "failed", "partial", "crashed"])


def step(i: int, action: str) -> Step:
    changes = (Change("description", "old", "new"),) if action == "update" else ()
    return Step(action, "role", f"R{i}", id=None if action == "create" else f"id-{i}", changes=changes,  # type: ignore[arg-type]
                desired=None if action == "delete" else {"name": f"R{i}", "description": "${ROLE_TEXT}"})


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["create", "update", "delete"]), OUTCOMES), min_size=1, max_size=8),
       st.booleans())
def test_what_a_run_journals_is_read_back(tmp_path_factory: pytest.TempPathFactory,
                                          steps: list[tuple[str, str]], finished: bool) -> None:
    path = tmp_path_factory.mktemp("j") / "run.jsonl"
    plan = Plan(steps=[step(i, a) for i, (a, _) in enumerate(steps)], target="https://x/v3/rest")
    created = {s.address: f"new-{i}" for i, s in enumerate(plan.steps)}
    log = Journal(path, "r1")
    log.begin(plan, area="https://x/v3/rest", sources=["/m"])
    execute = log.wrap(_executor(dict(zip((s.address for s in plan.steps), (o for _, o in steps), strict=True))),
                       created.get)
    for s in plan.steps:
        with contextlib.suppress(RuntimeError, PartlyDone, KeyboardInterrupt):
            asyncio.run(execute(Unit((s,))))
        assert path.read_text().endswith("\n")  # flushed line by line
    if finished:
        log.finish(ApplyResult(plan=plan))
    run = load(path, run_id="r1", area="https://x/v3/rest")
    outcome = {s.address: o for s, (_, o) in zip(plan.steps, steps, strict=True)}
    assert run.complete == finished and run.sources == ["/m"]
    assert run.done == {a for a, o in outcome.items() if o == "done"}
    assert run.failed == {a for a, o in outcome.items() if o != "done"}
    assert not run.begun  # every unit's end was recorded
    assert run.created == {s.address: created[s.address] for s in plan.steps
                           if s.action == "create" and outcome[s.address] == "done"}
    assert [s.to_json()["desired"] for s in run.plan.steps] == [s.desired for s in plan.steps]


def _executor(outcome: dict[str, str]):  # type: ignore[no-untyped-def]
    async def execute(unit: Unit) -> None:
        result = outcome[unit.steps[0].address]
        if result == "failed":
            raise RuntimeError("refused")
        if result == "partial":
            raise PartlyDone({unit.steps[0].address: "refused"})
        if result == "crashed":
            raise KeyboardInterrupt  # the end is still recorded: only a kill leaves none

    return execute


def test_bad_journals_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = Journal(path, "r1")
    log.begin(Plan(steps=[step(0, "create")]), area="a")
    log.finish(ApplyResult())
    text = path.read_text()
    with pytest.raises(JournalError, match="of run 'r1', not 'r2'"):
        load(path, run_id="r2")
    with pytest.raises(JournalError, match="of the area 'a', not 'b'"):
        load(path, area="b")
    (tmp_path / "cut.jsonl").write_text(text[:-5])
    with pytest.raises(JournalError, match=r"cut.jsonl:2: the journal is truncated"):
        load(tmp_path / "cut.jsonl")
    (tmp_path / "other.jsonl").write_text('{"type": "something"}\n')
    with pytest.raises(JournalError, match="not an apply journal"):
        load(tmp_path / "other.jsonl")


def test_no_registered_secret_value_is_written(tmp_path: Path) -> None:
    sensitive.register("s3cr3t-journal-value")
    path = tmp_path / "run.jsonl"
    log = Journal(path, "r1")
    leaky = Step("update", "role", "R", id="1", changes=(Change("description", "s3cr3t-journal-value", "x"),),
                 desired={"name": "R", "description": "x"})
    log.begin(Plan(steps=[leaky]), area="a")
    log.started(Unit((leaky,)))
    log.ended(Unit((leaky,)), "failed", {}, "the server echoed s3cr3t-journal-value")
    log.close()
    assert "s3cr3t-journal-value" not in path.read_text()
    assert "(sensitive)" in path.read_text()
