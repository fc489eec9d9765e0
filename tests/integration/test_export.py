"""Export: an area built by hand through the API (randomly, from a seed) exports to manifests
that validate, plan to zero against it, never contain a secret value, and are byte-identical
from one export to the next; applied to an empty area they give back the same export.
Also: layouts, ``--with-ids``, ``--kinds``, escaping, stale files, and the command line."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.cli import cli
from apimctl.errors import ApimctlError
from apimctl.export import MARKER, export_area, resolve_kinds, write_export

from .dialect_support import (
    MASHERY,
    ThreadServer,
    foreign_words,
    role_writes,
    served_in_thread,
    spoken,
)
from .export_support import (
    apply,
    client_for,
    describe,
    export_env,
    export_to,
    load,
    replan,
    server_app,
)

METHODS = ["get", "post", "put", "delete", "head", "options", "patch"]
LOCATIONS = ["request-parameters", "request-path", "request-body", "request-header"]
GRANTS = ["authorization-code", "implicit", "password", "client-credentials"]
TIMEOUT_REQ = [2, 5, 10, 20, 30, 45, 60]
TIMEOUT_RESP = [2, 5, 10, 20, 30, 45, 60, 120, 300, 600, 900, 1200]
CACHE_HEADERS = ["accept", "accept-charset", "accept-encoding", "accept-language"]
PERIODS = ["minute", "hour", "day", "week", "month"]
ODD_NAMES = ["a/b", "A B", "a-b", "yes", "1.0", "  leading", "#tag: x", "null", "~", "天气",
             "Ünïcode ☃", "trailing "]


@dataclass
class Built:
    """What the generator put into the area: secret values by (service, endpoint)."""

    secrets: dict[tuple[str, str], str] = field(default_factory=dict)
    objects: int = 0
    endpoints: int = 0


def _subset(rng: random.Random, items: list[Any], at_least: int = 0) -> list[Any]:
    picked = [i for i in items if rng.random() < 0.4]
    return picked if len(picked) >= at_least else items[:at_least]


def _text(rng: random.Random, words: int = 4) -> str:
    pool = ["forecast", "partner", "Wetter", "Ø", "literal ${NOT_A_VAR}", "a|b", "`tick`",
            "quota", "yes", "1.0", "#hash", "multi\nline"]
    return " ".join(rng.choice(pool) for _ in range(words))


class Generator:
    """Builds a random but valid area through raw API calls, as an existing area would be."""

    def __init__(self, client: ApiClient, seed: int, dialect: str) -> None:
        self.client = client
        self.dialect = dialect  # raw bodies are written in its vocabulary and shapes
        self.rng = random.Random(seed)
        self.built = Built()
        # names a YAML writer must quote, names that slug to the same file, a "/" in a name
        self.service_names = ["Wetter — Ø ${HOME}", *self.rng.sample(ODD_NAMES, 3)]
        self.orgs: list[dict[str, Any]] = []

    async def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.built.objects += 1
        return await self.client.post(path, body)

    async def grant(self, path: str, roles: list[dict[str, Any]], action: str) -> None:
        """Role permissions at ``path``, written the dialect's way (§10.7)."""
        for method, at, body in role_writes(self.dialect, path, [r["id"] for r in roles], action):
            if method == "POST":
                await self.client.post(at, body)
            else:
                await self.client.put(at, body)

    async def build(self) -> Built:
        rng = self.rng
        for domain in ("example.com", "example.net"):
            await self.post("/domains", {"domain": domain})
        roles = []
        orgs = self.orgs = await self.client.list_all("/organizations", [("fields", "id,name")])
        for i in range(rng.randint(0, 3)):
            body: dict[str, Any] = {"name": f"Role {i} {_text(rng, 1)}".strip()}
            if rng.random() < 0.5:
                body["description"] = _text(rng)
            if rng.random() < 0.5:
                body["organization"] = {"id": rng.choice(orgs)["id"]}
            roles.append(await self.post("/roles", body))
        services = [await self.service(i, roles) for i in range(rng.randint(1, 4))]
        for i in range(rng.randint(0, 2)):
            await self.package(i, services, roles)
        if rng.random() < 0.6 and any(eps for _, eps in services):
            await self.event(services)
        return self.built

    def endpoint_body(self, s: int, e: int, oauth_grants: list[str]) -> dict[str, Any]:
        rng = self.rng
        body: dict[str, Any] = {
            "name": f"Endpoint {e}" if rng.random() < 0.7 else f"ep-{e} {_text(rng, 1)}",
            "requestPathAlias": f"/s{s}/e{e}",
            "trafficManagerDomain": "api.example.com",
            "publicDomains": [{"address": a} for a in _subset(rng, ["api.example.com", "www.example.com"], 1)],
            "systemDomains": [{"address": f"b{s}.example.net"}],
            "supportedHttpMethods": _subset(rng, METHODS, 1),
            "connectionTimeoutForSystemDomainRequest": rng.choice(TIMEOUT_REQ),
            "connectionTimeoutForSystemDomainResponse": rng.choice(TIMEOUT_RESP),
            "inboundSslRequired": rng.random() < 0.5,
            "numberOfHttpRedirectsToFollow": rng.randint(0, 3),
            "outboundTransportProtocol": rng.choice(["use-inbound", "http", "https"]),
            "forwardedHeaders": spoken(self.dialect, _subset(rng, ["svc-host", "svc-message-id", "svc-service-id"])),
            "headersToExcludeFromIncomingCall": _subset(rng, ["X-Debug", "Cookie"]),
            "cors": {"allDomainsEnabled": rng.random() < 0.5, "maxAge": rng.randint(0, 3) * 30,
                     "domainsAllowed": _subset(rng, ["https://a.example.com", "https://b.example.com"]),
                     "cookiesAllowed": rng.random() < 0.3},
            "cache": {"contentCacheKeyHeaders": _subset(rng, CACHE_HEADERS),
                      "cacheTtlOverride": rng.choice([0, 60, 3600]),
                      "varyHeaderEnabled": rng.random() < 0.3},
        }
        if oauth_grants and rng.random() < 0.5:
            body.update(requestAuthenticationType="oauth", apiKeyValueLocations=[],
                        oauthGrantTypes=_subset(rng, oauth_grants, 1))
        else:
            body["apiKeyValueLocations"] = _subset(rng, LOCATIONS, 1)
            body["apiKeyValueLocationKey"] = rng.choice(["api_key", "X-Api-Key"])
        if rng.random() < 0.3:
            body["processor"] = {"adapter": "com.example.Adapter", "preProcessEnabled": True,
                                 "preInputs": {"z": "1", "a": _text(rng, 1)}}
        if self.dialect == MASHERY and rng.random() < 0.5:  # §10.8: carried along, never compared
            body.update(inboundMsslRequired=True, rateLimitHeadersEnabled=rng.random() < 0.5,
                        userControlledErrorLocation="parameter", userControlledErrorLocationKey="format")
        if rng.random() < 0.4:
            body["systemDomainAuthentication"] = rng.choice([
                {"type": "httpBasic", "username": "svc", "password": "pw-never-exported"},
                {"type": "clientSslCert", "certificate": "-----CERT-----"}])
        if rng.random() < 0.3:
            body["methods"] = [{"name": f"m{k}", "sampleJsonResponse": rng.choice(["", "{}", '{"a":1}'])}
                               for k in range(rng.randint(1, 2))]
        return body

    async def service(self, s: int, roles: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        rng = self.rng
        body: dict[str, Any] = {"name": self.service_names[s]}
        if rng.random() < 0.6:
            body.update(description=_text(rng), version=str(rng.randint(1, 9)),
                        qpsLimitOverall=rng.choice([0, 10, 500]), rfc3986Encode=rng.random() < 0.5)
        if rng.random() < 0.4:
            body["cache"] = {"cacheTtl": rng.choice([0, 30, 300])}
        grants: list[str] = []
        if rng.random() < 0.4:
            grants = spoken(self.dialect, _subset(rng, GRANTS, 1))
            body["securityProfile"] = {"oauth": {"accessTokenTtlEnabled": True,
                                                 "accessTokenTtl": rng.choice([600, 3600]),
                                                 "grantTypes": grants,
                                                 "forwardedHeaders": _subset(rng, ["client-id", "scope"])}}
            if self.dialect == MASHERY and rng.random() < 0.5:
                body["securityProfile"]["oauth"].update(masheryTokenApiEnabled=True, macAlgorithm="hmac-sha-256")
        if self.dialect == MASHERY and rng.random() < 0.5:
            body["organization"] = {"id": rng.choice(self.orgs)["id"]}
        sets = []
        for k in range(rng.randint(0, 2)):
            ids = list(kinds.ERROR_CATALOG)
            msgs = [{"id": m, "status": _text(rng, 2), "responseBody": rng.choice(["", '{"e":1}'])}
                    for m in rng.sample(ids, rng.randint(0, 3))]
            sets.append({"name": f"Set {k}", "type": rng.choice(["application/json", "text/xml"]),
                         "jsonp": rng.random() < 0.2, "errorMessages": msgs})
        if sets:
            body["errorSets"] = sets
        body["endpoints"] = [self.endpoint_body(s, e, grants) for e in range(rng.randint(0, 4))]
        created = await self.post("/services", body)
        self.built.objects += len(body["endpoints"]) + len(sets)
        self.built.endpoints += len(body["endpoints"])
        sid = created["id"]
        full = await self.client.get_object(
            f"/services/{sid}", [("fields", "id,name,errorSets.id,endpoints.id,endpoints.name,endpoints.methods.id,endpoints.methods.name")])
        endpoints = full.get("endpoints") or []
        set_ids = [es["id"] for es in full.get("errorSets") or []]
        for ep in endpoints:
            path = f"/services/{sid}/endpoints/{ep['id']}"
            update: dict[str, Any] = {}
            if rng.random() < 0.4:
                secret = f"secret-{rng.getrandbits(48):x}"
                update["systemDomainCredentialSecret"] = secret
                self.built.secrets[(body["name"], ep["name"])] = secret
            if len(set_ids) > 1 and rng.random() < 0.6:
                update["errorSet"] = {"id": rng.choice(set_ids)}
            if update:
                await self.client.put(path, update)
            for method in ep.get("methods") or []:
                if rng.random() < 0.5:
                    await self.post(f"{path}/methods/{method['id']}/responseFilters",
                                    {"name": "public", "notes": _text(rng, 2), "jsonFilterFields": "a,b"})
        picked = _subset(rng, roles)
        if picked:
            await self.grant(f"/services/{sid}/roles", picked, "read")
        return created, endpoints

    async def package(self, p: int, services: list[tuple[dict[str, Any], list[dict[str, Any]]]],
                      roles: list[dict[str, Any]]) -> None:
        rng = self.rng
        body: dict[str, Any] = {"name": f"Package {p}"}
        if rng.random() < 0.6:
            body.update(description=_text(rng), notifyDeveloperPeriod=rng.choice(PERIODS),
                        notifyAdminNearQuota=rng.random() < 0.5, nearQuotaThreshold=rng.choice([80, 90]),
                        keyLength=rng.choice([24, 32]), eav={"tier": "b", "owner": "a"})
        plans = []
        for k in range(rng.randint(0, 3)):
            plan: dict[str, Any] = {"name": f"Plan {k}", "rateLimitCeiling": rng.choice([0, 1000, 100000]),
                                    "rateLimitPeriod": rng.choice(["minute", "hour", "day", "month"]),
                                    "qpsLimitCeiling": rng.randint(0, 20),
                                    "maxNumKeysAllowed": rng.randint(1, 9),
                                    "qpsLimitExempt": rng.random() < 0.2}
            entitled = []
            for svc, eps in services:
                if rng.random() < 0.5:
                    entitled.append({"id": svc["id"], "endpoints": [
                        {"id": ep["id"], "undefinedMethodsAllowed": True} for ep in _subset(rng, eps)]})
            plan["services"] = entitled
            plans.append(plan)
        body["plans"] = plans
        created = await self.post("/packages", body)
        self.built.objects += len(plans)
        got = await self.client.get_object(f"/packages/{created['id']}", [("fields", "id,plans.id")])
        for plan_doc in got.get("plans") or []:
            await self.entitle_methods(f"/packages/{created['id']}/plans/{plan_doc['id']}", services)
        if roles and plans:
            for plan_doc in got.get("plans") or []:
                picked = _subset(rng, roles)
                if picked:
                    await self.grant(f"/packages/{created['id']}/plans/{plan_doc['id']}/roles", picked,
                                     "register_keys")

    async def entitle_methods(self, plan_path: str,
                              services: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
        """Entitle single methods of an endpoint (rather than all of them), sometimes."""
        for svc, eps in services:
            for ep in eps:
                if ep.get("methods") and self.rng.random() < 0.5:
                    base = f"{plan_path}/services/{svc['id']}"
                    if not any(s.get("id") == svc["id"] for s in await self.client.list_all(
                            f"{plan_path}/services", [])):
                        # no endpoints listed: none entitled (``mashery`` would entitle them all)
                        await self.client.post(f"{plan_path}/services", {"id": svc["id"], "endpoints": []})
                    if not any(e.get("id") == ep["id"] for e in await self.client.list_all(
                            f"{base}/endpoints", [])):
                        await self.client.post(f"{base}/endpoints", {"id": ep["id"]})
                    method = self.rng.choice(ep["methods"])
                    await self.client.post(f"{base}/endpoints/{ep['id']}/methods", {"id": method["id"]})
                    return

    async def event(self, services: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
        endpoints = [ep for _, eps in services for ep in eps]
        created = await self.post("/scheduledMaintenanceEvents", {
            "name": "Window", "startDateTime": "2027-01-16T02:00:00.000+0000",
            "endDateTime": "2027-01-16T04:00:00Z"})
        for ep in self.rng.sample(endpoints, min(2, len(endpoints))):
            await self.client.post(f"/scheduledMaintenanceEvents/{created['id']}/endpoints", {"id": ep["id"]})


async def _random_round_trip(tmp: Path, seed: int, object_responses: bool, dialect: str) -> None:
    app = server_app(tmp / "area.db", object_responses=object_responses, dialect=dialect)
    async with client_for(app) as client:
        built = await Generator(client, seed, dialect).build()
        reads = client.stats.reads()
        first = await export_to(client, tmp / "out")
        # one list call per top-level kind (fewer than 1,000 objects each), nested `fields`;
        # in a spec area without endpoints (whose values tell the dialect) one probe more; a
        # mashery area says what it is in every answer (X-Mashery-Responder, SUPPLEMENT 10.10.5)
        probe = built.endpoints == 0 and dialect != MASHERY
        assert client.stats.reads() - reads == len(kinds.TOP_LEVEL) + probe
        assert first.dropped == []  # every field the area holds fits the manifest schema
        second = await export_area(client)
        assert [f.text for f in first.files] == [f.text for f in second.files]
        text = first.files[0].text
        assert [w for w in foreign_words(dialect) if w in text] == []  # the target's vocabulary
        for value in [*built.secrets.values(), "pw-never-exported"]:
            assert value not in text
        assert "$${HOME}" in text  # a literal ${ in a name is escaped, not substituted
        assert not re.search(r"(?<!\$)\$\{(NOT_A_VAR|HOME)\}", text)
        env = export_env(tmp / "out", built.secrets)
        manifest = load([tmp / "out"], env)
        zero = await replan(client, manifest)
        assert not zero.steps, f"seed {seed}:\n{describe(zero)}\n\n{text}"
        per_service = await export_to(client, tmp / "per-service", layout="per-service")
        assert len({f.name for f in per_service.files}) == len(per_service.files)
        split = await replan(client, load([tmp / "per-service"], export_env(tmp / "per-service", built.secrets)))
        assert not split.steps, describe(split)
        ids_export = await export_area(client, with_ids=True)
        ids_text = ids_export.files[0].text
        assert "id: " in ids_text
        (tmp / "ids").mkdir()
        write_export(ids_export, str(tmp / "ids"))
        pinned = await replan(client, load([tmp / "ids"], env))
        assert not pinned.steps, describe(pinned)
    # The export applied to an empty area exports back to the same text.
    async with client_for(server_app(tmp / "other.db", dialect=dialect)) as other:
        await apply(other, manifest, env)
        again = await export_area(other)
        assert again.files[0].text == text


@pytest.mark.parametrize("seed", range(10))
def test_random_area_round_trips(tmp_path: Path, seed: int, dialect: str) -> None:
    # ``object_responses`` changes only the ``spec`` replies (``mashery`` answers bare objects)
    asyncio.run(_random_round_trip(tmp_path, seed, object_responses=seed % 2 == 1, dialect=dialect))


# --- smaller properties -------------------------------------------------------------------

SMALL = """
domains: [example.com, example.net]
roles: [Partners]
services:
  - name: Weather
    description: "costs $${NOT_A_VARIABLE} nothing"
    roles: [Partners]
    endpoints:
      - name: Forecast
        requestPathAlias: /f
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainCredentialSecret: ${SMALL_SECRET}
        systemDomainAuthentication: {type: httpBasic, username: svc, password: "${SMALL_PASSWORD}"}
packages:
  - name: Partners
    plans:
      - {name: Gold, services: [{name: Weather}], roles: [Partners]}
scheduledMaintenanceEvents:
  - name: Window
    startDateTime: "2027-01-16T02:00:00Z"
    endDateTime: "2027-01-16T04:00:00Z"
    endpoints: [{service: Weather, endpoint: Forecast}]
"""
SMALL_ENV = {"SMALL_SECRET": "small-secret-value-1", "SMALL_PASSWORD": "small-password-2"}


async def _small_area(tmp: Path, dialect: str) -> Any:
    folder = tmp / "m"
    folder.mkdir()
    (folder / "m.yaml").write_text(SMALL)
    manifest = load([folder], SMALL_ENV)
    app = server_app(tmp / "area.db", dialect=dialect)
    async with client_for(app) as client:
        await apply(client, manifest, SMALL_ENV)
    return app


def test_secrets_become_references_listed_in_the_header(tmp_path: Path, dialect: str) -> None:
    async def go() -> None:
        app = await _small_area(tmp_path, dialect)
        async with client_for(app) as client:
            result = await export_area(client)
        text = result.files[0].text
        assert result.variables == ["WEATHER_FORECAST_BACKEND_PASSWORD", "WEATHER_FORECAST_BACKEND_SECRET"]
        assert "systemDomainCredentialSecret: ${WEATHER_FORECAST_BACKEND_SECRET}" in text
        assert "password: ${WEATHER_FORECAST_BACKEND_PASSWORD}" in text
        assert "#   WEATHER_FORECAST_BACKEND_SECRET" in text.split("\ndomains:")[0]
        for value in SMALL_ENV.values():
            assert value not in text
        assert "costs $${NOT_A_VARIABLE} nothing" in text  # escaped again on the way out
        doc = yaml.safe_load(text)
        assert doc["services"][0]["endpoints"][0]["systemDomainAuthentication"]["username"] == "svc"

    asyncio.run(go())


def test_kinds_pull_in_what_they_refer_to(tmp_path: Path, dialect: str) -> None:
    assert resolve_kinds(["packages"]) == (["roles", "services", "packages"], ["roles", "services"])
    assert resolve_kinds(["domains", "role"]) == (["domains", "roles"], [])
    assert resolve_kinds(["scheduledMaintenanceEvents"])[0] == ["roles", "services", "scheduledMaintenanceEvents"]
    with pytest.raises(ApimctlError, match="unknown kind 'endpoints'"):
        resolve_kinds(["endpoints"])

    async def go() -> None:
        app = await _small_area(tmp_path, dialect)
        async with client_for(app) as client:
            only = await export_area(client, kinds_=["packages"])
        assert only.kinds == ["roles", "services", "packages"]
        out = tmp_path / "only"
        write_export(only, str(out))
        env = {"WEATHER_FORECAST_BACKEND_SECRET": SMALL_ENV["SMALL_SECRET"],
               "WEATHER_FORECAST_BACKEND_PASSWORD": "x"}
        async with client_for(app) as client:
            plan = await replan(client, load([out], env))
        assert not plan.steps and {u.kind for u in plan.unmanaged} == {"domain", "maintenanceEvent"}

    asyncio.run(go())


def test_per_service_layout_and_stale_files(tmp_path: Path, dialect: str) -> None:
    async def go() -> None:
        app = await _small_area(tmp_path, dialect)
        out = tmp_path / "out"
        out.mkdir()
        (out / "service-gone.yaml").write_text(f"# yaml-language-server: $schema=x\n{MARKER}\nroles: [X]\n")
        (out / "mine.yaml").write_text("roles: [Mine]\n")
        async with client_for(app) as client:
            result = await export_area(client, layout="per-service")
        written, removed = write_export(result, str(out))
        names = sorted(p.name for p in out.iterdir())
        assert names == ["domains.yaml", "maintenance.yaml", "mine.yaml", "packages.yaml",
                         "roles.yaml", "service-weather.yaml"]
        assert removed == [str(out / "service-gone.yaml")] and len(written) == 5

    asyncio.run(go())


def test_empty_area_is_an_error(tmp_path: Path, dialect: str) -> None:
    async def go() -> None:
        async with client_for(server_app(tmp_path / "empty.db", dialect=dialect)) as client:
            with pytest.raises(ApimctlError, match="nothing to export"):
                await export_area(client)

    asyncio.run(go())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    """One reference server per dialect for the command-line test of this module."""
    with served_in_thread(tmp_path_factory.mktemp("export-cli") / "area.db", dialect, areas=1) as srv:
        yield srv


def command_line(tmp_path: Path, target: dict[str, str | None]) -> None:
    """apply, then export to stdout and to files, and the usage errors, against ``target``."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.yaml").write_text(SMALL)
    runner = CliRunner()
    env: dict[str, str | None] = {**SMALL_ENV, **target}
    applied = runner.invoke(cli, ["apply", "--auto-approve", "m"], env=env, standalone_mode=False)
    assert applied.exception is None, applied.output

    shown = runner.invoke(cli, ["export"], env=env, standalone_mode=False)
    assert shown.return_value == 0 and shown.stdout.startswith("# yaml-language-server: $schema=")
    assert "WEATHER_FORECAST_BACKEND_SECRET" in shown.stderr
    for value in SMALL_ENV.values():
        assert value not in shown.output
    # the target's defaults are left out, whatever they are (returnedHeaders, §10.5)
    assert "returnedHeaders" not in shown.stdout and "detailHeader" not in shown.stdout

    written = runner.invoke(cli, ["export", "--out", "exported", "--layout", "per-service",
                                  "--kinds", "services,roles"], env=env, standalone_mode=False)
    assert written.return_value == 0, written.output
    assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == ["roles.yaml", "service-weather.yaml"]

    usage = runner.invoke(cli, ["export", "--layout", "per-service"], env=env, standalone_mode=False)
    assert usage.exception is not None and "--out" in str(usage.exception)
    bad = runner.invoke(cli, ["export", "--kinds", "nope"], env=env, standalone_mode=False)
    assert isinstance(bad.exception, ApimctlError) and "unknown kind 'nope'" in str(bad.exception)


def test_command_line_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    command_line(tmp_path, {"APIMCTL_URL": None})  # unset: the embedded default


def test_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, served: ThreadServer) -> None:
    """Against the reference server over HTTP in each dialect, detected by the client."""
    monkeypatch.chdir(tmp_path)
    command_line(tmp_path, {"APIMCTL_URL": served.url, "APIMCTL_TOKEN": served.fresh_token(), "APIMCTL_QPS": "0"})
