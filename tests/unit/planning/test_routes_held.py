"""Planning leaves out the route check that ``validate`` has made already.

``validate`` refuses two declared endpoints sharing a route by method, public domain and path
(or, when the manifests say the target is of the ``spec`` dialect, by public domain and path);
planning checks the target's own rule only where that is stricter than the one held.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.api.dialect import Detected
from apimctl.errors import ManifestError, PlanError
from apimctl.manifests import Manifest, load_manifests
from apimctl.planning import build
from apimctl.planning.build import build_plan
from apimctl.state.live import LiveState

TARGETS = {name: Detected(name, "test") for name in ("spec", "mashery")}


def _manifest(folder: Path, doc: dict[str, Any]) -> Manifest:
    path = folder / "m.yaml"
    path.write_text(yaml.safe_dump(doc))
    return load_manifests([str(path)], env={})


def _outcome(manifest: Manifest, target: str) -> str | list[str]:
    """The refusal's message, or the planned steps."""
    try:
        plan = build_plan(manifest, LiveState(), dialect=TARGETS[target])
    except PlanError as exc:
        return str(exc)
    return sorted(s.address for s in plan.steps)


def _endpoint(name: str, alias: str, hosts: list[str] | None, methods: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "requestPathAlias": alias, "trafficManagerDomain": "api.example.com"}
    if hosts is not None:
        out["publicDomains"] = hosts
    if methods is not None:
        out["supportedHttpMethods"] = methods
    return out


_HOSTS = st.none() | st.lists(st.sampled_from(["a.example.com", "b.example.com"]), max_size=2, unique=True)
_METHODS = st.none() | st.lists(st.sampled_from(["get", "post", "put"]), min_size=1, max_size=2, unique=True)
_ENDPOINTS = st.lists(st.tuples(st.sampled_from(["/x", "/y"]), _HOSTS, _METHODS), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_ENDPOINTS, st.sampled_from([None, "spec", "mashery"]))
def test_a_plan_is_the_same_whether_or_not_validate_held_the_routes(
        tmp_path: Path, endpoints: list[tuple[str, list[str] | None, list[str] | None]],
        setting: str | None) -> None:
    doc: dict[str, Any] = {"services": [
        {"name": f"S{s}", "endpoints": [_endpoint(f"E{i}", *e) for i, e in enumerate(endpoints) if i % 2 == s]}
        for s in range(2)]}
    doc["services"] = [s for s in doc["services"] if s["endpoints"]]
    if setting is not None:
        doc["settings"] = {"dialect": setting}
    try:
        manifest = _manifest(tmp_path, doc)
    except ManifestError:
        return  # refused offline: never planned
    unchecked = dataclasses.replace(manifest, validated=False)
    for target in TARGETS:
        assert _outcome(manifest, target) == _outcome(unchecked, target), target


@pytest.mark.parametrize(("setting", "target", "checked"), [
    (None, "mashery", False),  # validate held every endpoint to the rule by method already
    (None, "spec", True),  # the target's rule is stricter than the one held
    ("spec", "spec", False),
    ("spec", "mashery", False),
])
def test_the_route_check_runs_only_where_validate_did_not_hold_the_targets_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None, target: str,
        checked: bool) -> None:
    doc: dict[str, Any] = {"services": [{"name": "S", "endpoints": [
        _endpoint("A", "/x", ["a.example.com"], ["get"]), _endpoint("B", "/y", ["a.example.com"], ["get"])]}]}
    if setting is not None:
        doc["settings"] = {"dialect": setting}
    calls: list[bool] = []
    real = build.check_routes
    monkeypatch.setattr(build, "check_routes", lambda desired, by_method: calls.append(by_method) or real(desired, by_method))
    manifest = _manifest(tmp_path, doc)
    build_plan(manifest, LiveState(), dialect=TARGETS[target])
    assert bool(calls) == checked
    calls.clear()
    build_plan(dataclasses.replace(manifest, validated=False), LiveState(), dialect=TARGETS[target])
    assert calls == [target == "mashery"]  # a manifest never validated: always checked


def test_a_route_shared_by_method_is_still_refused_by_a_spec_target(tmp_path: Path) -> None:
    doc = {"services": [{"name": "S", "endpoints": [
        _endpoint("A", "/x", ["a.example.com"], ["get"]), _endpoint("B", "/x", ["a.example.com"], ["post"])]}]}
    manifest = _manifest(tmp_path, doc)
    assert isinstance(_outcome(manifest, "mashery"), list)
    refusal = _outcome(manifest, "spec")
    assert isinstance(refusal, str) and "public domain and path" in refusal and "S/A and S/B" in refusal
