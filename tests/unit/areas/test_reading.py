"""Sides exported on two cores give what one core gives."""

from __future__ import annotations

import pytest

from apimctl import workers
from apimctl.areas import reading
from apimctl.areas.reading import Read, all_documents, documents, manifest_state
from apimctl.kinds.dialects import dialect_of


def _read(name: str, qps: int) -> Read:
    doc = {"domains": [{"domain": "example.com"}], "services": [
        {"name": f"S{s}", "qpsLimitOverall": qps, "endpoints": [
            {"name": f"E{e}", "requestPathAlias": f"/s{s}/e{e}", "trafficManagerDomain": "api.example.com",
             "publicDomains": ["api.example.com"], "systemDomains": ["backend.example.com"],
             "systemDomainCredentialSecret": "x"} for e in range(3)]} for s in range(4)]}
    return Read(name, name, manifest_state(doc), dialect_of("mashery"), declared=True)


def test_the_worker_exports_as_this_process_does(monkeypatch: pytest.MonkeyPatch) -> None:
    alone = [_read("a", 5), _read("b", 7)]
    expected = [documents(r) for r in alone]
    monkeypatch.setattr(reading, "PARALLEL_OBJECTS", 0)
    sides = [_read("a", 5), _read("b", 7)]
    assert all_documents(sides) == expected
    assert [r.variables for r in sides] == [r.variables for r in alone]
    assert sides[1].variables  # the secret's reference, named in the worker
    if workers.enabled():
        assert workers.running()  # the worker took the last side (and is still there)
