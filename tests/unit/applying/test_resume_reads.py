"""``apply --resume`` reads only what the steps its journal left undone need: their
collections and those they reference, never the whole area (unless the journal cannot tell,
which it says)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from apimctl.applying import journal
from apimctl.applying.command import ApplyRequest, apply
from apimctl.applying.reading import resume_reads
from apimctl.errors import PlanError
from apimctl.planning.command import read_manifests

from ..areakit import DOMAINS, ROLES, FakeArea, role

MANIFEST = """domains: [example.com]
roles: [Partners, Interns]
services:
  - name: Weather
    endpoints:
      - name: Forecast
        requestPathAlias: /forecast
        trafficManagerDomain: example.com
        publicDomains: [example.com]
        systemDomains: [backend.example.com]
"""


def test_the_collections_a_resume_reads() -> None:
    roles = resume_reads({("create", "role:Interns")})
    assert roles is not None and roles.targets == ("role:Interns",)
    assert "role" not in roles.skip and {"domain", "service", "package", "maintenanceEvent"} <= roles.skip
    endpoint = resume_reads({("update", "endpoint:Weather/Forecast")})
    assert endpoint is not None and endpoint.targets == ("service:Weather",)
    # an endpoint names domains and error sets; its service names roles
    assert {"domain", "role", "service"}.isdisjoint(endpoint.skip)
    assert {"package", "maintenanceEvent"} <= endpoint.skip
    plan = resume_reads({("create", "plan:Partners/Gold")})
    assert plan is not None and plan.targets == ("package:Partners",)
    assert {"service", "role", "package"}.isdisjoint(plan.skip) and "maintenanceEvent" in plan.skip
    assert resume_reads(None) is None and resume_reads(frozenset()) is None
    assert resume_reads({("create", "gadget:X")}) is None


def test_a_resume_lists_only_the_collections_its_steps_need(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")],
                     DOMAINS: [{"id": "d1", "domain": "example.com", "status": "active"}]})
    told: list[str] = []
    path = manifests(MANIFEST)
    digest = journal.manifests_digest(read_manifests((path,), (), (), (), lambda line: None).doc)
    request = ApplyRequest(paths=(path,), lock=False, journaled=False, resumes="run1",
                           remaining=frozenset({("create", "role:Interns")}), resumed_manifests=digest)
    result = asyncio.run(apply(request, area.connect, notice=told.append))
    assert result.exit_code == 0, result.to_json()
    assert [o.address for o in result.done] == ["role:Interns"]
    first_write = area.calls.index(("POST", ROLES))
    assert area.calls[:first_write] == [("LIST", ROLES)]  # one list call: not the whole area
    assert not [t for t in told if "whole area" in t]


def test_a_resume_of_changed_manifests_reads_the_whole_area_and_says_so(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1")],
                     DOMAINS: [{"id": "d1", "domain": "example.com", "status": "active"}]})
    told: list[str] = []
    request = ApplyRequest(paths=(manifests(MANIFEST),), lock=False, journaled=False, resumes="run1",
                           remaining=frozenset({("create", "role:Interns")}), resumed_manifests="sha256:0")
    with pytest.raises(PlanError, match="no longer matches"):  # the service is planned too
        asyncio.run(apply(request, area.connect, notice=told.append))
    assert "the manifests changed since run run1: reading the whole area" in told


def test_a_journal_that_cannot_tell_reads_the_whole_area_and_says_so(manifests: Callable[..., str]) -> None:
    area = FakeArea({ROLES: [role("Partners", "r1"), role("Interns", "r2")],
                     DOMAINS: [{"id": "d1", "domain": "example.com", "status": "active"}]})
    told: list[str] = []
    request = ApplyRequest(paths=(manifests(MANIFEST),), lock=False, journaled=False, resumes="run1",
                           remaining=frozenset())
    with pytest.raises(PlanError, match="no longer matches"):  # the service was never made
        asyncio.run(apply(request, area.connect, notice=told.append))
    assert any("run run1 cannot tell" in t and "reading the whole area" in t for t in told)
    assert {path for method, path in area.calls if method == "LIST"} >= {ROLES, DOMAINS, "/services"}
