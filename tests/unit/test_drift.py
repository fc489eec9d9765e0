"""The core function of ``apimctl drift``, without click: bad input refused before the client
is opened, the result a value (the fake area and the fixtures are in ``conftest``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from apimctl.drift import DriftRequest, drift
from apimctl.errors import ManifestError, PlanError

from .areakit import ROLES, FakeArea, role

ROLES_YAML = "roles: [Partners, {name: Interns, description: Students}]\n"


def test_drift_reports_what_differs(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1"), role("Interns", "r2", description="changed")]})
    told: list[str] = []
    report = asyncio.run(drift(DriftRequest((manifests(ROLES_YAML),), target="t"), area.connect,
                               notice=told.append))
    assert report.drifted and report.target == "t"
    assert [(d.step.address, d.what) for d in report.differences] == [("role:Interns", "changed outside git")]
    assert area.writes() == [] and told == []


@pytest.mark.parametrize(("request_", "error", "message"), [
    (DriftRequest(("missing.yaml",)), ManifestError, "missing.yaml"),
    (DriftRequest(("m.yaml",), targets=("nonsense",)), PlanError, "KIND:NAME"),
    (DriftRequest(("m.yaml",), ignores=("role:x",)), PlanError, "KIND:NAME:FIELD_PATH"),
])
def test_drift_refuses_bad_input_before_the_client_is_opened(
        area: FakeArea, manifests: Callable[..., str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        request_: DriftRequest, error: type[Exception], message: str) -> None:
    manifests(ROLES_YAML)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error, match=message):
        asyncio.run(drift(request_, area.connect))
    assert area.opened == 0


def test_drift_refuses_a_target_that_names_nothing(area: FakeArea, manifests: Callable[..., str]) -> None:
    with pytest.raises(PlanError, match="role:Nobody"):
        asyncio.run(drift(DriftRequest((manifests(ROLES_YAML),), targets=("role:Nobody",)), area.connect))
