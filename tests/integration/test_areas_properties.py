"""The several-areas workflow as a property, against ``apimctl serve`` in both dialects.

Hypothesis generates an area, makes two or three copies of it with differences injected
(a changed field, an object only one copy has) and with values that differ by a rewrite rule
(each copy's host), seeds them as areas of the server (through the management API, a call
per service) and checks:

- each overlay ``export --into`` writes holds exactly the differences injected into its copy
  (the first copy is the original: a difference is in one copy only, so the base keeps the
  original, by majority or, between two, as the first area's);
- ``plan`` of base plus overlay against each area finds nothing to change;
- ``diff`` of any two areas reports exactly the differences injected into either;
- ``promote`` of one difference, then ``apply``, makes ``diff`` report one fewer.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .apply_support import Server
from .areas_support import Area, Fleet, secrets_of

EXAMPLES = 4  # per dialect


@pytest.fixture(scope="module")
def srv(areas_server: Server) -> Server:
    return areas_server


@dataclass
class Copy:
    """One copy of the area: the fields changed (address, field) -> value, the objects added."""

    changed: dict[tuple[str, str], Any] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)  # addresses

    def differences(self) -> set[tuple[str, str]]:
        return {(a, f) for a, f in self.changed} | {(a, "") for a in self.added}


@dataclass
class Shape:
    services: int
    endpoints: int
    qps: list[int]
    paths: list[str]
    copies: list[Copy]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    services, endpoints = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    qps = draw(st.lists(st.integers(2, 50), min_size=services, max_size=services))
    paths = draw(st.lists(st.sampled_from(["/v1", "/v2", "/api"]), min_size=services * endpoints,
                          max_size=services * endpoints))
    count = draw(st.integers(2, 3))
    # every object changes in one copy at most; copy 1 has at least one difference
    objects = [f"service:S{s}" for s in range(services)] + [
        f"endpoint:S{s}/E{e}" for s in range(services) for e in range(endpoints)]
    owners = draw(st.lists(st.sampled_from([None, *range(1, count)]), min_size=len(objects), max_size=len(objects)))
    copies = [Copy() for _ in range(count)]
    for obj, owner in zip(objects, owners, strict=True):
        if owner is None:
            continue
        if obj.startswith("service:"):
            index = int(obj.split(":S")[1])
            copies[owner].changed[(obj, "qpsLimitOverall")] = qps[index] + 100
        else:
            copies[owner].changed[(obj, "outboundRequestTargetPath")] = "/changed"
    for i in range(1, count):
        if draw(st.booleans()):
            copies[i].added.append(f"service:New{i}")
        if draw(st.booleans()):
            copies[i].added.append(f"endpoint:S0/X{i}")
    if not copies[1].differences():
        copies[1].added.append("service:New1")
    return Shape(services, endpoints, qps, paths, copies)


def _services(shape: Shape, index: int) -> list[dict[str, Any]]:
    """The services of copy ``index`` as the API writes them (with their endpoints)."""
    copy = shape.copies[index]
    host = f"api-a{index}.example.com"

    def endpoint(service: str, name: str, path: str, prefix: str) -> dict[str, Any]:
        target = copy.changed.get((f"endpoint:{service}/{name}", "outboundRequestTargetPath"), path)
        return {"name": name, "requestPathAlias": f"/{prefix}/{name.lower()}", "trafficManagerDomain": host,
                "publicDomains": [{"address": host}], "systemDomains": [{"address": "backend.example.com"}],
                "outboundRequestTargetPath": target}

    services = []
    for s in range(shape.services):
        name = f"S{s}"
        endpoints = [endpoint(name, f"E{e}", shape.paths[s * shape.endpoints + e], name.lower())
                     for e in range(shape.endpoints)]
        endpoints += [endpoint(name, added.rsplit("/", 1)[1], "/new", name.lower())
                      for added in copy.added if added.startswith(f"endpoint:{name}/")]
        qps = copy.changed.get((f"service:{name}", "qpsLimitOverall"), shape.qps[s])
        services.append({"name": name, "qpsLimitOverall": qps, "endpoints": endpoints})
    for added in copy.added:
        if added.startswith("service:"):
            name = added.split(":", 1)[1]
            services.append({"name": name, "endpoints": [endpoint(name, "E0", "/v9", name.lower())]})
    return services


def _seed(area: Area, services: list[dict[str, Any]]) -> None:
    """The area's domain and services, written through the management API (one call each)."""
    with httpx.Client(base_url=area.server.url, timeout=10, verify=False,
                      headers={"Authorization": f"Bearer {area.token}"}) as client:
        for path, body in [("/domains", {"domain": "example.com"}), *(("/services", s) for s in services)]:
            reply = client.post(path, json=body)
            assert reply.status_code in (200, 201), reply.text


def _overlay_differences(path: Path) -> set[tuple[str, str]]:
    """What an overlay holds: (address, field) changed, (address, "") added."""
    doc = yaml.safe_load(path.read_text()) or {}
    found: set[tuple[str, str]] = set()
    for service in doc.get("services", []):
        address = f"service:{service['name']}"
        if service.get("$patch") == "add":
            found.add((address, ""))
            continue
        found |= {(address, k) for k in service if k not in ("name", "endpoints")}
        for ep in service.get("endpoints", []):
            ep_address = f"endpoint:{service['name']}/{ep['name']}"
            if ep.get("$patch") == "add":
                found.add((ep_address, ""))
            else:
                found |= {(ep_address, k) for k in ep if k != "name"}
    assert set(doc) <= {"services"}, doc
    return found


def _diff(fleet: Fleet, a: str, b: str, rules: Path) -> set[tuple[str, str]]:
    done = fleet.run("diff", a, b, "--rewrite", str(rules), "--format", "json")
    assert done.returncode == 0, done.stderr
    found: set[tuple[str, str]] = set()
    for obj in json.loads(done.stdout)["objects"]:
        if obj["status"] == "different":
            found |= {(obj["address"], f["path"]) for f in obj["fields"]}
        else:
            found.add((obj["address"], ""))
    return found


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes())
def test_export_diff_promote(srv: Server, shape: Shape) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        fleet = Fleet(tmp / "home")
        names = [f"a{i}" for i in range(len(shape.copies))]
        areas = [fleet.add(name, srv) for name in names]
        for i, area in enumerate(areas):
            _seed(area, _services(shape, i))
        rules = tmp / "rules.yaml"
        rules.write_text("rewrites:\n  - variable: API_HOST\n    values: {"
                         + ", ".join(f"{n}: api-{n}.example.com" for n in names) + "}\n")
        repo = tmp / "repo"
        args = [a for n in names for a in ("--area", f"{n}={n}")]
        done = fleet.run("export", *args, "--into", str(repo), "--rewrite", str(rules))
        assert done.returncode == 0, done.stderr
        for i, name in enumerate(names):
            assert _overlay_differences(repo / "overlays" / name / "overlay.yaml") == shape.copies[i].differences()
            planned = fleet.plan(areas[i], str(repo / "base"), "--overlay", str(repo / "overlays" / name))
            assert planned.returncode == 0, planned.stdout + planned.stderr
        diffs = {}
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                expected = shape.copies[i].differences() | shape.copies[j].differences()
                diffs[(i, j)] = _diff(fleet, names[i], names[j], rules)
                assert diffs[(i, j)] == expected
        # promote one difference of a1 to a0, apply a0: one difference fewer
        before = diffs[(0, 1)]
        chosen = _promotable(shape.copies[1])
        done = fleet.run("promote", "--from", "a1", "--to", "a0", "--only", chosen, "--repo", str(repo))
        assert done.returncode == 0, done.stderr
        folders = [repo / "base", repo / "overlays" / "a0"]
        applied = fleet.run("apply", "--auto-approve", str(folders[0]), "--overlay", str(folders[1]),
                            area=areas[0], env=secrets_of(folders))
        assert applied.returncode == 0, applied.stdout + applied.stderr
        after = _diff(fleet, "a0", "a1", rules)
        assert after == {d for d in before if d[0] != chosen}
        assert len({d[0] for d in after}) == len({d[0] for d in before}) - 1


def _promotable(copy: Copy) -> str:
    """An address of ``copy``'s differences whose promotion carries no other difference."""
    addresses = sorted({a for a, _ in copy.differences()})
    for address in addresses:
        inner = [a for a in addresses if a != address and a.startswith(address.replace("service:", "endpoint:") + "/")]
        if not inner:
            return address
    raise AssertionError(addresses)
