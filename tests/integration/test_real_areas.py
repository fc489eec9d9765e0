"""Real areas round-trip: whatever an area of either dialect can hold exports, validates, plans
to zero and drifts clean; one change to the export plans as exactly that change and applies in
one run.

The areas are generated (hypothesis) from the kind tables and the facts of SUPPLEMENT §10.10,
and written through the management API as an existing area would have been built by hand:

- endpoints sharing a path and public domain with other HTTP methods (§10.10.1: a real service
  of 60 endpoints has 9 such groups), in the ``mashery`` dialect, whose routes are unique by
  (method, domain, path);
- addresses with a port (``backend.example.net:8443``, §10.10.2);
- every spelling of "not set" (§10.10.3): secrets and credential keys ``null``, ``""`` or never
  written; ``headersToExcludeFromIncomingCall`` ``null``, ``[]`` or ``[""]``;
  ``customRequestAuthenticationAdapter`` ``null`` or ``""``; CORS never set (``cors: null`` in
  ``mashery``) or written; method sample responses ``null``; package integers and plan
  ceilings ``null`` (public clients type them nullable: the Go client of the v3 API,
  aliakseiyanchuk/mashery-v3-go-client, ``masherytypes``);
- a service's error set of type ``text/xml`` (§10.10.4).

``spec`` areas hold what that dialect accepts (§3, §4). ``APIMCTL_REAL_AREA_EXAMPLES`` sets the
number of examples per dialect (default 6: the suite's time budget).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apimctl.applying.run import ApplyOptions, apply_plan
from apimctl.drift import detect_drift
from apimctl.planning import make_plan

from .dialect_support import MASHERY
from .export_support import (
    BASE,
    TOKEN,
    client_for,
    describe,
    export_env,
    export_to,
    load,
    server_app,
)

EXAMPLES = int(os.environ.get("APIMCTL_REAL_AREA_EXAMPLES", "6"))
DOMAINS = ("example.com", "example.net")
PUBLIC = ("api.example.com", "public.example.com")
BACKENDS = ("backend.example.net", "backend.example.net:8443", "legacy.example.net:443")
METHOD_SETS = (["get"], ["post"], ["put", "patch"], ["delete"], ["head", "options"])  # disjoint
_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

NAMES = st.sampled_from(["Orders", "Catalog", "Track order", "Pay", "Status", "Lookup", "Refunds"])


def _unset(dialect: str, *spellings: Any) -> st.SearchStrategy[Any]:
    """A field left unset, in one of the spellings the dialect's areas hold (``...``: the key is
    not written at all)."""
    usable = [s for s in spellings if dialect == MASHERY or s is not None]
    return st.sampled_from([..., *usable])


@st.composite
def endpoints(draw: st.DrawFn, dialect: str, service: int) -> list[dict[str, Any]]:
    """A service's endpoints: in ``mashery``, groups sharing a path with other methods."""
    out: list[dict[str, Any]] = []
    for group in range(draw(st.integers(1, 3))):
        alias = f"/s{service}/r{group}"
        host = draw(st.sampled_from(PUBLIC))
        sizes = draw(st.integers(1, 3)) if dialect == MASHERY else 1
        method_sets = draw(st.permutations(METHOD_SETS))[:sizes]
        for n, methods in enumerate(method_sets):
            out.append(draw(endpoint(dialect, f"E{group}.{n}", alias if n == 0 or dialect == MASHERY
                                     else f"{alias}/{n}", host, methods)))
    return out


@st.composite
def endpoint(draw: st.DrawFn, dialect: str, name: str, alias: str, host: str,
             methods: list[str]) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "name": name, "requestPathAlias": alias, "trafficManagerDomain": "tm.example.com",
        "publicDomains": [{"address": host}],
        "systemDomains": [{"address": draw(st.sampled_from(BACKENDS))}],
        "supportedHttpMethods": methods,
    }
    fields = {
        "systemDomainCredentialKey": st.one_of(_unset(dialect, None, ""), st.just("svc-key")),
        "systemDomainCredentialSecret": st.one_of(_unset(dialect, None, ""), st.just("s3cr3t-" + name)),
        "headersToExcludeFromIncomingCall": st.one_of(_unset(dialect, None, [], [""]),
                                                      st.just(["x-debug"])),
        "customRequestAuthenticationAdapter": _unset(dialect, None, ""),
        "cors": st.one_of(_unset(dialect, None),
                          st.just({"allDomainsEnabled": False, "maxAge": 60,
                                   "domainsAllowed": ["https://app.example.com"]})),
        "methods": st.one_of(st.just(...), st.lists(method(dialect), max_size=2,
                                                     unique_by=lambda m: m["name"])),
    }
    for key, strategy in fields.items():
        value = draw(strategy)
        if value is not ...:
            doc[key] = value
    return doc


@st.composite
def method(draw: st.DrawFn, dialect: str) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": draw(st.sampled_from(["list", "get", "create"]))}
    for key in ("sampleJsonResponse", "sampleXmlResponse"):
        value = draw(st.one_of(_unset(dialect, None, ""), st.just('{"ok":true}')))
        if value is not ...:
            doc[key] = value
    return doc


@st.composite
def areas(draw: st.DrawFn, dialect: str) -> dict[str, Any]:
    services = []
    for n in range(draw(st.integers(1, 2))):
        service: dict[str, Any] = {"name": f"{draw(NAMES)} {n}",
                                   "endpoints": draw(endpoints(dialect, n))}
        if draw(st.booleans()):  # the default set of a real service may be text/xml
            service["errorSets"] = [{"name": "Default", "type": "text/xml"}]
        if dialect == MASHERY and draw(st.booleans()):
            service["qpsLimitOverall"] = None
        services.append(service)
    package: dict[str, Any] = {"name": "Partners"}
    if dialect == MASHERY:
        for key in ("nearQuotaThreshold", "keyLength", "sharedSecretLength"):
            if draw(st.booleans()):
                package[key] = None
    plan: dict[str, Any] = {"name": "Gold", "rateLimitPeriod": "day"}
    for key in ("qpsLimitCeiling", "rateLimitCeiling"):
        plan[key] = draw(st.sampled_from([5, 0, None] if dialect == MASHERY else [5, 0]))
    # a plan's notices: no email template set, null, or the area's own set by its id (a string
    # in the mashery dialect, SUPPLEMENT §10 types)
    template_set = draw(st.sampled_from(["absent", "null", "the area's"]))
    return {"services": services, "package": package, "plan": plan, "template_set": template_set,
            "dialect": dialect}


# --- the area, through the API ---------------------------------------------------------------


async def _seed(api: httpx.AsyncClient, area: dict[str, Any]) -> None:
    for domain in DOMAINS:
        _ok(await api.post("/domains", json={"domain": domain}))
    service_ids = []
    for service in area["services"]:
        made = _one(_ok(await api.post("/services", json=service, params={"fields": "id"})))
        service_ids.append(made["id"])
    plan = dict(area["plan"])
    if area["template_set"] == "null":
        plan["emailTemplateSetId"] = None
    elif area["template_set"] == "the area's":
        sets = _ok(await api.get("/emailTemplateSets", params={"fields": "id"}))
        set_id = sets[0]["id"]
        plan["emailTemplateSetId"] = str(set_id) if area["dialect"] == MASHERY else int(set_id)
    package = _one(_ok(await api.post("/packages", json={**area["package"], "plans": [plan]},
                                      params={"fields": "id,plans.id"})))
    plan_id = package["plans"][0]["id"]
    for sid in service_ids:
        _ok(await api.post(f"/packages/{package['id']}/plans/{plan_id}/services", json={"id": sid}))


def _ok(reply: httpx.Response) -> Any:
    assert reply.status_code == 200, f"{reply.request.method} {reply.request.url}: {reply.text}"
    return reply.json() if reply.content else None


def _one(body: Any) -> dict[str, Any]:
    return body[0] if isinstance(body, list) else body


def _secrets(area: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(s["name"], e["name"]): e["systemDomainCredentialSecret"]
            for s in area["services"] for e in s["endpoints"]
            if e.get("systemDomainCredentialSecret")}


# --- one random change to the export -------------------------------------------------------------


CHANGES = ("cors.maxAge", "description", "methods", "rateLimitCeiling", "headersToExcludeFromIncomingCall")


def _change(folder: Path, which: str) -> tuple[str, str]:
    """Change one field in the exported files; answer the step address and change path the
    plan must then show."""
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for service in doc.get("services") or []:
            endpoint = (service.get("endpoints") or [None])[0]
            if which == "description":
                service["description"] = "changed in git"
                return _write(path, doc, f"service:{service['name']}", "description")
            if endpoint is None:
                continue
            key = f"endpoint:{service['name']}/{endpoint['name']}"
            if which == "cors.maxAge":
                endpoint.setdefault("cors", {})["maxAge"] = 777
                return _write(path, doc, key, "cors.maxAge")
            if which == "methods":
                endpoint["methods"] = [*(endpoint.get("methods") or []),
                                       {"name": "added", "sampleJsonResponse": '{"n":1}'}]
                return _write(path, doc, key, "methods[added]")
            if which == "headersToExcludeFromIncomingCall":
                endpoint["headersToExcludeFromIncomingCall"] = ["x-changed"]
                return _write(path, doc, key, "headersToExcludeFromIncomingCall")
        for package in doc.get("packages") or []:
            if which == "rateLimitCeiling":
                plan = package["plans"][0]
                plan["rateLimitCeiling"] = 4242
                return _write(path, doc, f"plan:{package['name']}/{plan['name']}", "rateLimitCeiling")
    raise AssertionError(f"nothing to change for {which}")


def _write(path: Path, doc: dict[str, Any], address: str, change: str) -> tuple[str, str]:
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return address, change


# --- the round trip ----------------------------------------------------------------------------------


def _round_trip(dialect: str, area: dict[str, Any], which: str, where: Path) -> None:
    app = server_app(where / "area.db", dialect=dialect)
    transport = httpx.ASGITransport(app=app)

    async def run() -> None:
        async with httpx.AsyncClient(transport=transport, base_url=BASE,
                                     headers={"Authorization": f"Bearer {TOKEN}"}) as raw:
            await _seed(raw, area)
        folder = where / "export"
        async with client_for(app) as client:
            await export_to(client, folder)
            text = "".join(p.read_text() for p in sorted(folder.glob("*.yaml")))
            known = _secrets(area)
            referenced = set(_REF.findall(text))
            # a secret that was never set is exported as nothing, never as a reference
            assert len(referenced) == len(known), text
            # the plan's email template set is written by name (the area's set is "Default")
            assert ("emailTemplateSet: Default" in text) == (area["template_set"] == "the area's"), text
            env = export_env(folder, known)
            manifest = load([folder], env)  # validate: no error
            plan = await make_plan(client, manifest)
            assert not plan.steps, describe(plan)
            report = await detect_drift(client, manifest)
            assert not report.drifted, describe(report.plan)
            address, change = _change(folder, which)
            changed = load([folder], env)
            plan = await make_plan(client, changed)
            shown = [(s.address, [c.path for c in s.changes]) for s in plan.steps]
            assert [a for a, _ in shown] == [address], describe(plan)
            assert [c for _, cs in shown for c in cs if not c.startswith(change)] == [], describe(plan)
            result = await apply_plan(client, plan, ApplyOptions(env=env))
            assert result.ok, result.to_json()  # one run: done and converged
            again = await make_plan(client, changed)
            assert not again.steps, describe(again)

    asyncio.run(run())


@pytest.mark.parametrize("dialect", ["spec", MASHERY])
def test_a_real_area_round_trips(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(area=areas(dialect), which=st.sampled_from(CHANGES))
    def check(area: dict[str, Any], which: str) -> None:
        _round_trip(dialect, area, which, tmp_path_factory.mktemp(dialect))

    check()
