"""The core functions of ``apimctl drift``, ``export`` and ``validate``, without click: bad
input refused before the client is opened, the result a value."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from areakit import ROLES, FakeArea, role

from apimctl.drift import DriftRequest, drift
from apimctl.errors import ApimctlError, ManifestError, PlanError
from apimctl.export.command import ExportRequest, export
from apimctl.manifests.command import ValidateRequest, validate

ROLES_YAML = "roles: [Partners, {name: Interns, description: Students}]\n"


# --- drift -----------------------------------------------------------------------------------


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


# --- export ----------------------------------------------------------------------------------


def test_export_prints_nothing_and_returns_the_files() -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")]})
    done = asyncio.run(export(ExportRequest(target="t"), area.connect))
    assert [f.name for f in done.export.files] == ["apimctl.yaml"]
    assert "Partners" in done.export.files[0].text and done.written == ()


def test_export_writes_the_directory_and_says_what_it_added(tmp_path: Path) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")]})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.yaml").write_text("roles: [Mine]\n")
    told: list[str] = []
    done = asyncio.run(export(ExportRequest(kinds=("roles",), out=str(tmp_path / "out")), area.connect,
                              notice=told.append))
    assert done.written == (str(tmp_path / "out" / "apimctl.yaml"),)
    assert done.foreign == (str(tmp_path / "out" / "mine.yaml"),) and done.removed == ()
    assert told == []
    asyncio.run(export(ExportRequest(kinds=("packages",)), area.connect, notice=told.append))
    assert told == ["Also exporting roles, services: the objects asked for refer to them."]
    with pytest.raises(ApimctlError, match="nothing to export"):
        asyncio.run(export(ExportRequest(kinds=("domains",)), area.connect))


@pytest.mark.parametrize(("request_", "message"), [
    (ExportRequest(kinds=("spaceships",)), "--kinds: unknown kind 'spaceships'"),
    (ExportRequest(out="afile/out"), "cannot write the export to afile/out: .*afile is not a directory"),
])
def test_export_refuses_before_the_client_is_opened(area: FakeArea, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    request_: ExportRequest, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ApimctlError, match=message):
        asyncio.run(export(request_, area.connect))
    assert area.opened == 0


# --- validate --------------------------------------------------------------------------------


def test_validate_returns_every_problem(manifests: Callable[..., str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORE_TEST_UNSET", raising=False)
    path = manifests("roles: [{name: Partners, colour: red}, {name: '${CORE_TEST_UNSET}'}]\n")
    strict = validate(ValidateRequest((path,)))
    assert not strict.valid and strict.errors == 2 and strict.files == [path]
    lenient = validate(ValidateRequest((path,), allow_missing_vars=True))
    assert lenient.errors == 1 and lenient.warnings == 1
