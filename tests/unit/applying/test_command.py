"""``apimctl.applying.command.apply``: every refusal of ``apimctl apply`` comes before any
write (and before the question), without click."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from apimctl import kinds
from apimctl.applying.command import ApplyRequest, apply
from apimctl.errors import ManifestError, PlanError
from apimctl.plans.file import save_plan
from apimctl.plans.model import Fingerprint, Plan, Step
from apimctl.plans.progress import ProgressCallback, ProgressEvent
from apimctl.plans.result import ApplyResult

from ..areakit import ROLES, FakeArea, role

ROLES_YAML = "roles: [Partners, Interns]\n"
TARGET = "http://apim.test/v3/rest"


class Asked:
    """A confirmation that records the plans it was shown and answers ``answer``."""

    def __init__(self, answer: bool = True, then: Callable[[], None] | None = None) -> None:
        self.answer, self.then, self.plans = answer, then, []

    def __call__(self, plan: Plan) -> bool:
        self.plans.append(plan)
        if self.then is not None:
            self.then()
        return self.answer


def run(request: ApplyRequest, area: FakeArea, **callbacks: Any) -> ApplyResult:
    return asyncio.run(apply(request, area.connect, **callbacks))


def saved(tmp_path: Path, plan: Plan) -> str:
    path = tmp_path / "plan.json"
    save_plan(plan, str(path))
    return str(path)


CREATE_PARTNERS = Step("create", "role", "Partners", desired={"name": "Partners"})


def test_the_manifests_are_planned_asked_about_and_applied(area: FakeArea, manifests: Callable[..., str]) -> None:
    asked = Asked()
    events: list[ProgressEvent] = []
    shown: list[Plan] = []

    @contextmanager
    def progress(plan: Plan) -> Iterator[ProgressCallback]:
        shown.append(plan)
        yield events.append

    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),), target=TARGET, lock=False), area,
                 confirm=asked, progress=progress)
    assert result.ok and result.exit_code == 0, result.to_json()
    assert sorted(o.address for o in result.done) == ["role:Interns", "role:Partners"]
    assert area.writes() == [("POST", ROLES), ("POST", ROLES)]
    assert asked.plans == shown == [result.plan]
    assert result.plan is not None and result.plan.target == TARGET
    assert {e.kind for e in events} >= {"start", "done"}


def test_nothing_to_do_asks_nothing(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1"), role("Interns", "r2")]})
    asked = Asked()
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area, confirm=asked)
    assert result.exit_code == 0 and result.plan is not None and not result.plan.steps
    assert asked.plans == [] and area.writes() == []


def test_a_declined_confirmation_writes_nothing(area: FakeArea, manifests: Callable[..., str]) -> None:
    result = run(ApplyRequest(paths=(manifests(ROLES_YAML),)), area, confirm=Asked(answer=False))
    assert result.cancelled and result.exit_code == 1 and area.writes() == []


@pytest.mark.parametrize(("text", "message"), [
    ("roles: [{name: Partners, colour: red}]\n", "colour"),
    ("settings: {prune: true}\n", "no objects found"),
])
def test_invalid_or_empty_manifests_are_refused_before_the_client_is_opened(
        area: FakeArea, manifests: Callable[..., str], text: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        run(ApplyRequest(paths=(manifests(text),)), area)
    assert area.opened == 0


def test_an_unknown_target_is_refused_before_any_write(area: FakeArea, manifests: Callable[..., str]) -> None:
    asked = Asked()
    with pytest.raises(PlanError, match="role:Nobody"):
        run(ApplyRequest(paths=(manifests(ROLES_YAML),), targets=("role:Nobody",)), area, confirm=asked)
    assert asked.plans == [] and area.writes() == []
    with pytest.raises(PlanError, match="KIND:NAME"):
        run(ApplyRequest(paths=(manifests(ROLES_YAML),), targets=("nonsense",)), area)
    assert area.opened == 1  # the malformed one never opened it


def test_more_deletes_than_allowed_are_refused_before_the_question(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Old", "r1"), role("Older", "r2")]})
    asked = Asked()
    request = ApplyRequest(paths=(manifests(ROLES_YAML),), prune=True, max_deletes=1)
    with pytest.raises(PlanError) as info:
        run(request, area, confirm=asked)
    assert str(info.value) == ("the plan deletes 2 objects, more than --max-deletes 1: "
                               "role:Old, role:Older; nothing was written")
    assert asked.plans == [] and area.writes() == []


def test_an_invalid_saved_plan_is_refused_before_the_client_is_opened(area: FakeArea, tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"format_version": "1.0", "steps": [{"kind": "spaceship"}]}')
    with pytest.raises(PlanError, match=r"plan.json: not a valid saved plan: missing target, summary, .*; steps\[0\]: missing action, key"):
        run(ApplyRequest(plan_file=str(path)), area)
    assert area.opened == 0


def test_a_saved_plan_for_another_area_is_refused(area: FakeArea, tmp_path: Path) -> None:
    path = saved(tmp_path, Plan(steps=[CREATE_PARTNERS], target="http://other/v3/rest"))
    with pytest.raises(PlanError) as info:
        run(ApplyRequest(plan_file=path, target=TARGET), area, confirm=Asked())
    assert str(info.value) == f"the saved plan was made for http://other/v3/rest; this run targets {TARGET}"
    assert area.writes() == []


def test_a_saved_plan_needs_its_secret_variables(area: FakeArea, tmp_path: Path) -> None:
    step = Step("create", "endpoint", "Weather/Forecast", parent="service:Weather",
                desired={"name": "Forecast", "systemDomainCredentialSecret": "${CORE_TEST_SECRET}"})
    path = saved(tmp_path, Plan(steps=[Step("create", "service", "Weather", desired={"name": "Weather"}), step]))
    asked = Asked()
    with pytest.raises(PlanError, match="CORE_TEST_SECRET is not set") as info:
        run(ApplyRequest(plan_file=path, env={}), area, confirm=asked)
    assert str(info.value).endswith("nothing was written")
    assert asked.plans == [] and area.writes() == []


def test_a_stale_saved_plan_is_refused_before_the_question(tmp_path: Path) -> None:
    area = FakeArea({ROLES: [role("Partners", "r7")]})  # created since the plan was made
    asked = Asked()
    with pytest.raises(PlanError, match=r"stale; .*\n  role:Partners: now exists"):
        run(ApplyRequest(plan_file=saved(tmp_path, Plan(steps=[CREATE_PARTNERS]))), area, confirm=asked)
    assert asked.plans == [] and area.writes() == []


def test_a_stale_saved_plan_is_refused_without_a_question_too(tmp_path: Path) -> None:
    plan = Plan(steps=[Step("update", "role", "Interns", id="r2", desired={"name": "Interns"})],
                fingerprints={"role:Interns": Fingerprint("role", "Interns", "r2", "2026-01-01T00:00:00Z")})
    area = FakeArea({ROLES: [role("Interns", "r2", updated="2026-02-02T00:00:00Z")]})
    with pytest.raises(PlanError, match="role:Interns: changed"):
        run(ApplyRequest(plan_file=saved(tmp_path, plan), lock=False), area)
    assert area.writes() == []


def test_a_saved_plan_that_went_stale_while_asking_is_refused(tmp_path: Path) -> None:
    area = FakeArea()
    asked = Asked(then=lambda: area.rows.setdefault(ROLES, []).append(role("Partners", "r7")))
    with pytest.raises(PlanError, match="role:Partners: now exists"):
        run(ApplyRequest(plan_file=saved(tmp_path, Plan(steps=[CREATE_PARTNERS])), lock=False), area,
            confirm=asked)
    assert len(asked.plans) == 1 and area.writes() == []


def test_a_fresh_saved_plan_is_applied(area: FakeArea, tmp_path: Path) -> None:
    result = run(ApplyRequest(plan_file=saved(tmp_path, Plan(steps=[CREATE_PARTNERS], target=TARGET)),
                              target=TARGET, lock=False), area, confirm=Asked())
    assert result.ok and area.writes() == [("POST", ROLES)]
    # every read is counted: the stale check before asking, the read the writes start from
    # (neither lists a data source: no step names one), and the convergence check (one list
    # of the roles touched)
    written = [k for k in kinds.TOP_LEVEL if not k.read_only]
    assert result.write_calls == 1 and result.read_calls == 2 * len(written) + 1
