"""A target that can only entitle a whole service (SUPPLEMENT §10.6): apimctl says so in the
plan and removes the endpoints the manifests do not grant in the same apply.

Neither known dialect behaves this way (both honour the endpoint list of a new entitlement),
so the test rehearses it: the reference server in the ``mashery`` dialect with
``ServerConfig.whole_service_entitlements`` and the reconciler's ``mashery`` table with
``whole_service_entitlements``. Without the reconciler knowing, the same apply is caught by the
convergence check: the plan would hold an endpoint the manifests never granted.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

import apimctl.kinds.dialects as dialects
from apimctl.api.client import ApiClient
from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.planning import make_plan
from apimctl.server import ServerConfig, create_app

from .export_support import BASE, TOKEN, load, replan

MANIFEST = {
    "domains": ["example.com", "example.net"],
    "services": [{
        "name": "Weather",
        "endpoints": [
            {"name": "Forecast", "requestPathAlias": "/forecast", "trafficManagerDomain": "api.example.com",
             "publicDomains": ["api.example.com"],
             "systemDomains": ["backend.example.net"], "supportedHttpMethods": ["get"]},
            {"name": "Admin", "requestPathAlias": "/admin", "trafficManagerDomain": "api.example.com",
             "publicDomains": ["api.example.com"],
             "systemDomains": ["backend.example.net"], "supportedHttpMethods": ["get"]},
        ],
    }],
    "packages": [{
        "name": "Public",
        "plans": [{"name": "Free", "services": [{"name": "Weather", "endpoints": [{"name": "Forecast"}]}]}],
    }],
}


def _app(tmp: Path) -> Any:
    return create_app(ServerConfig(db_path=str(tmp / "area.db"), tokens={TOKEN: "area"},
                                   auto_approve_domains=True, dialect="mashery",
                                   whole_service_entitlements=True))


async def _entitled(client: ApiClient) -> list[str]:
    """The endpoints the plan ``Free`` is entitled to in service ``Weather``, by name."""
    (package,) = await client.list_all("/packages", {"fields": "id,name,plans.id,plans.name"})
    plan_id = package["plans"][0]["id"]
    services = await client.get(f"/packages/{package['id']}/plans/{plan_id}/services",
                                {"fields": "id,name,endpoints.id,endpoints.name"})
    return sorted(e["name"] for s in services for e in s.get("endpoints") or [])


def _manifest(tmp: Path, doc: dict[str, Any]) -> Any:
    (tmp / "weather.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return load([tmp / "weather.yaml"], {})


async def _apply(tmp: Path, later: bool = False) -> tuple[list[str], list[str], bool, int]:
    """Plan warnings, the entitled endpoints after apply, whether it converged, replan size.
    ``later``: the plan exists, without entitlements, before the apply entitles it (an update
    rather than a create)."""
    async with ApiClient(BASE, token=TOKEN, qps=None, transport=httpx.ASGITransport(app=_app(tmp))) as client:
        if later:
            bare = copy.deepcopy(MANIFEST)
            del bare["packages"][0]["plans"][0]["services"]
            first = await apply_plan(client, await make_plan(client, _manifest(tmp, bare)), ApplyOptions(env={}))
            assert first.ok, first.to_json()
        manifest = _manifest(tmp, MANIFEST)
        plan = await make_plan(client, manifest)
        assert [s.action for s in plan.steps if s.kind == "plan"] == ["update" if later else "create"]
        result = await apply_plan(client, plan, ApplyOptions(env={}))
        entitled = await _entitled(client)
        again = await replan(client, manifest)
    assert not result.failed, result.to_json()
    return plan.warnings, entitled, not result.non_converged, len(again.steps)


@pytest.fixture
def whole_service(monkeypatch: pytest.MonkeyPatch) -> None:
    table = dataclasses.replace(dialects.MASHERY, whole_service_entitlements=True)
    monkeypatch.setattr(dialects, "DIALECTS", {**dialects.DIALECTS, table.name: table})


@pytest.mark.usefixtures("whole_service")
@pytest.mark.parametrize("later", [False, True], ids=["new-plan", "plan-entitled-later"])
def test_the_plan_says_so_and_apply_removes_the_extras(tmp_path: Path, later: bool) -> None:
    warnings, entitled, converged, replanned = asyncio.run(_apply(tmp_path, later))
    assert any(w.startswith("plan:Public/Free: this mashery target entitles a whole "
                            "service at once: entitling Weather") for w in warnings), warnings
    assert entitled == ["Forecast"]
    assert converged and replanned == 0


def test_unknown_to_the_reconciler_the_convergence_check_catches_it(tmp_path: Path) -> None:
    warnings, entitled, converged, replanned = asyncio.run(_apply(tmp_path))
    assert not any("entitles a whole service" in w for w in warnings)
    assert entitled == ["Admin", "Forecast"]  # the target ignored the list
    assert not converged and replanned == 1
