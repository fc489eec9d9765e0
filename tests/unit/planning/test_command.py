"""``apimctl.planning.command.plan``: every refusal of ``apimctl plan``, without click."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from apimctl.errors import ManifestError, PlanError
from apimctl.planning.command import PlanRequest, plan
from apimctl.plans.file import load_plan
from apimctl.plans.model import Plan

from ..areakit import ROLES, FakeArea, role

ROLES_YAML = "roles: [Partners, Interns]\n"
LITERAL = """\
domains: [example.com, example.net]
services:
  - name: Weather
    endpoints:
      - name: Forecast
        requestPathAlias: /forecast
        trafficManagerDomain: example.com
        publicDomains: [example.com]
        systemDomains: [example.net]
        systemDomainCredentialSecret: plain-text-secret
"""


def run(request: PlanRequest, area: FakeArea, notices: list[str] | None = None) -> Plan:
    told = notices if notices is not None else []
    return asyncio.run(plan(request, area.connect, notice=told.append))


def test_a_plan_of_the_manifests_named_for_its_target(area: FakeArea, manifests: Callable[..., str]) -> None:
    made = run(PlanRequest((manifests(ROLES_YAML),), target="http://apim.test/v3/rest"), area)
    assert [s.address for s in made.steps] == ["role:Interns", "role:Partners"]
    assert made.target == "http://apim.test/v3/rest"
    assert area.opened == 1 and area.writes() == []


@pytest.mark.parametrize(("text", "error", "message"), [
    ("roles: [{name: Partners, colour: red}]\n", ManifestError, "colour"),
    ("settings: {prune: true}\n", ManifestError, "no objects found"),
])
def test_invalid_or_empty_manifests_are_refused_before_the_client_is_opened(
        area: FakeArea, manifests: Callable[..., str], text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        run(PlanRequest((manifests(text),)), area)
    assert area.opened == 0


@pytest.mark.parametrize(("field", "value", "message"), [
    ("targets", ("nonsense",), "KIND:NAME"),
    ("ignores", ("role:Partners",), "expected KIND:NAME:FIELD_PATH"),
])
def test_malformed_target_or_ignore_is_refused_before_the_client_is_opened(
        area: FakeArea, manifests: Callable[..., str], field: str, value: tuple[str, ...], message: str) -> None:
    request = PlanRequest((manifests(ROLES_YAML),), **{field: value})  # type: ignore[arg-type]
    with pytest.raises(PlanError, match=message):
        run(request, area)
    assert area.opened == 0


def test_a_target_that_names_nothing_is_refused(area: FakeArea, manifests: Callable[..., str]) -> None:
    with pytest.raises(PlanError, match="role:Nobody"):
        run(PlanRequest((manifests(ROLES_YAML),), targets=("role:Nobody",)), area)


def test_more_deletes_than_allowed_are_refused(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Old", "r1"), role("Older", "r2")]})
    request = PlanRequest((manifests(ROLES_YAML),), prune=True, max_deletes=1)
    with pytest.raises(PlanError, match=r"deletes 2 objects, more than --max-deletes 1 allows: role:Old, role:Older"):
        run(request, area)
    assert run(PlanRequest((manifests(ROLES_YAML),), prune=True, max_deletes=2), area).summary()["delete"] == 2


def test_an_unsaveable_destination_is_refused_before_anything_is_read(
        area: FakeArea, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "plan.json"
    with pytest.raises(PlanError, match=f"cannot save the plan to {out}: directory .* does not exist"):
        run(PlanRequest((str(tmp_path / "not-even-read.yaml"),), out=str(out)), area)
    assert area.opened == 0


def test_a_plan_with_literal_secrets_is_not_saved(area: FakeArea, manifests: Callable[..., str],
                                                  tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    with pytest.raises(PlanError, match=r"literal values .* endpoint:Weather/Forecast#systemDomainCredentialSecret"):
        run(PlanRequest((manifests(LITERAL),), out=str(out)), area)
    assert not out.exists()
    assert run(PlanRequest((manifests(LITERAL),)), area).has_changes  # planning alone is fine


def test_the_saved_plan_is_the_plan_returned(area: FakeArea, manifests: Callable[..., str], tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    made = run(PlanRequest((manifests(ROLES_YAML),), out=str(out), target="t"), area)
    assert load_plan(str(out)) == made


def test_manifest_warnings_are_told_before_the_client_is_opened(manifests: Callable[..., str]) -> None:
    told: list[str] = []

    class Watched(FakeArea):
        async def list_all(self, *args: object, **kwargs: object) -> list[dict[str, object]]:
            told.append("(read)")
            return []

    area = Watched()
    run(PlanRequest((manifests(LITERAL),)), area, told)
    assert told[0].startswith("Warning: ") and "literal" in told[0] and told[-1] == "(read)"
