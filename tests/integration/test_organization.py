"""Organizations, the read-only kind (a data source), against the reference server
(in-process, over ``httpx.ASGITransport``): read into live state, exported with the roles that
name them, checked by validate, never planned, pruned or written.

The reference server has no API that creates organizations: every area is seeded with
``Default Organization`` and its child ``Partners`` (``apimctl.server.seed``). Each test runs
against both dialects of the server (SUPPLEMENT §10)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.errors import PlanError
from apimctl.export import export_area, write_export
from apimctl.manifests import load_manifests, validate_paths
from apimctl.planning import PlanOptions, make_plan
from apimctl.server import ServerConfig, create_app
from apimctl.state.live import read_live

pytestmark = pytest.mark.anyio

SEEDED = ["Default Organization", "Partners"]
ORG = kinds.ORGANIZATION


@pytest.fixture
async def client(tmp_path: Path, dialect: str) -> AsyncIterator[ApiClient]:
    """A client of a fresh area of the reference server, in each dialect (SUPPLEMENT §10)."""
    app = create_app(ServerConfig(db_path=str(tmp_path / "s.db"), tokens={"t": "area-1"}, dialect=dialect))
    async with ApiClient("http://apim.test/v3/rest", token="t", qps=None,
                         transport=httpx.ASGITransport(app=app)) as c:
        yield c


def _write(folder: Path, doc: dict[str, Any]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "apimctl.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return [str(folder)]


async def _org_id(client: ApiClient, name: str) -> str:
    orgs = await client.list_all(ORG.path, [("fields", "id,name")])
    return str(next(o["id"] for o in orgs if o["name"] == name))


async def test_live_state_holds_the_organizations(client: ApiClient) -> None:
    live = await read_live(client)
    assert sorted(o.name for o in live.of(ORG.name)) == SEEDED
    assert all(o.doc == {"name": o.name} and o.id for o in live.of(ORG.name))


async def test_export_writes_the_organizations_roles_name_and_plans_to_zero(
        client: ApiClient, tmp_path: Path) -> None:
    await client.post("/roles", {"name": "Resellers",
                                 "organization": {"id": await _org_id(client, "Partners")}})
    await client.post("/roles", {"name": "Staff"})
    exported = await export_area(client)
    doc = yaml.safe_load(exported.files[0].text)
    # only the organizations the exported roles name (Default Organization is left out)
    assert doc["organizations"] == ["Partners"]
    assert doc["roles"] == [{"name": "Resellers", "organization": "Partners"}, "Staff"]
    assert list(doc)[:2] == ["organizations", "roles"]
    write_export(exported, str(tmp_path / "out"))
    assert not [p for p in validate_paths([str(tmp_path / "out")], env={}) if p.severity == "error"]
    plan = await make_plan(client, load_manifests([str(tmp_path / "out")], env={}), PlanOptions(prune=True))
    assert not plan.steps and not plan.unmanaged

    asked = await export_area(client, kinds_=[ORG.manifest_key])
    assert yaml.safe_load(asked.files[0].text) == {"organizations": SEEDED}


async def test_export_without_organization_references_writes_none(client: ApiClient) -> None:
    await client.post("/roles", {"name": "Staff"})
    exported = await export_area(client)
    assert "organizations" not in yaml.safe_load(exported.files[0].text)
    assert ORG.manifest_key not in exported.kinds


async def test_plan_never_touches_organizations(client: ApiClient, tmp_path: Path, dialect: str) -> None:
    paths = _write(tmp_path / "m", {
        "organizations": ["Partners"],
        "roles": [{"name": "Resellers", "organization": "Partners"}],
    })
    manifest = load_manifests(paths, env={})
    for prune in (False, True):
        plan = await make_plan(client, manifest, PlanOptions(prune=prune))
        assert [(s.action, s.address) for s in plan.steps] == [("create", "role:Resellers")]
        assert plan.dialect == dialect
        assert not [u for u in plan.unmanaged if u.kind == ORG.name]
    result = await apply_plan(client, plan, ApplyOptions(env={}))
    assert result.ok, result.to_json()
    roles = await client.list_all("/roles", [("fields", "id,name,organization")], page_index=True)
    resellers = next(r for r in roles if r["name"] == "Resellers")
    assert resellers["organization"]["id"] == await _org_id(client, "Partners")
    again = await make_plan(client, manifest, PlanOptions(prune=True))
    assert not again.steps and not again.unmanaged
    assert sorted(o.name for o in (await read_live(client)).of(ORG.name)) == SEEDED


async def test_a_declared_organization_the_area_lacks_is_a_plan_error(
        client: ApiClient, tmp_path: Path) -> None:
    paths = _write(tmp_path / "m", {"organizations": ["Partners", "Ghost"], "roles": ["Staff"]})
    with pytest.raises(PlanError, match=r"organization 'Ghost' does not exist in the area"):
        await make_plan(client, load_manifests(paths, env={}))


def test_validate_checks_role_organization_references(tmp_path: Path) -> None:
    declared = _write(tmp_path / "a", {
        "organizations": ["Partners"],
        "roles": [{"name": "Resellers", "organization": "Partners"},
                  {"name": "Lost", "organization": "Ghost"}],
    })
    errors = [p for p in validate_paths(declared, env={}) if p.severity == "error"]
    assert len(errors) == 1 and "Ghost" in str(errors[0]) and "organization" in str(errors[0])
    # without an organizations list, references to them are left to the area (not checkable)
    undeclared = _write(tmp_path / "b", {"roles": [{"name": "Lost", "organization": "Ghost"}]})
    assert not [p for p in validate_paths(undeclared, env={}) if p.severity == "error"]
