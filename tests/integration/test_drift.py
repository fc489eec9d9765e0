"""Drift: out-of-band changes made through the API (as another user) are reported with what
changed and, where the platform records it, who and when; ignore rules hold with their
reasons; unmanaged objects alone are not drift; secrets never show; exit codes 0/2/1.
Against both dialects of the reference server (the ``dialect`` fixture, SUPPLEMENT §10)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.cli import cli
from apimctl.drift import detect_drift
from apimctl.plans.drift import DriftReport
from apimctl.render.drift import render_drift
from apimctl.server import ServerConfig, create_app

from .dialect_support import ThreadServer, served_in_thread
from .export_support import EDITOR, apply, client_for, load, server_app
from .inprocess import close_server

SECRET = "drift-backend-secret-91ab"
CHANGED_SECRET = "changed-by-hand-secret-77cd"
ENV = {"FORECAST_BACKEND_SECRET": SECRET}

MANIFEST = """
domains: [example.com, example.net]
services:
  - name: Weather
    errorSets:
      - name: JSON errors
    endpoints:
      - name: Forecast
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        errorSet: JSON errors
        systemDomainCredentialSecret: ${FORECAST_BACKEND_SECRET}
        cors: {allDomainsEnabled: false, maxAge: 60}
      - name: Alerts
        requestPathAlias: /v2/alerts
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
packages:
  - name: Weather Partners
    plans:
      - name: Gold
        rateLimitCeiling: 100000
        services: [{name: Weather}]
      - name: Silver
        rateLimitCeiling: 1000
"""
IGNORE = """
settings:
  ignore:
    - {target: "endpoint:Weather/Forecast:cors.maxAge", reason: ops tune this by hand}
"""


def write(folder: Path, *texts: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (folder / f"m{i}.yaml").write_text(text)
    return folder


async def ids(client: ApiClient) -> dict[str, str]:
    """Ids of the Weather service, its endpoints, the package and its plans, by name."""
    out: dict[str, str] = {}
    for svc in await client.list_all("/services", [("fields", "id,name,endpoints.id,endpoints.name")]):
        out[svc["name"]] = svc["id"]
        for ep in svc.get("endpoints") or []:
            out[f"{svc['name']}/{ep['name']}"] = ep["id"]
    for pkg in await client.list_all("/packages", [("fields", "id,name,plans.id,plans.name")]):
        out[pkg["name"]] = pkg["id"]
        for plan in pkg.get("plans") or []:
            out[f"{pkg['name']}/{plan['name']}"] = plan["id"]
    return out


async def change_by_hand(client: ApiClient, *, secret: bool = False) -> None:
    """What an operator does in the dashboard: edit CORS, add an endpoint, delete a plan."""
    got = await ids(client)
    svc, ep = got["Weather"], got["Weather/Forecast"]
    await client.put(f"/services/{svc}/endpoints/{ep}/cors", {"maxAge": 120})
    await client.post(f"/services/{svc}/endpoints", {
        "name": "Debug", "requestPathAlias": "/v2/debug", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "api.example.com"}],
        "systemDomains": [{"address": "backend.example.net"}]})
    await client.delete(f"/packages/{got['Weather Partners']}/plans/{got['Weather Partners/Silver']}")
    if secret:
        await client.put(f"/services/{svc}/endpoints/{ep}", {"systemDomainCredentialSecret": CHANGED_SECRET})


async def scenario(tmp: Path, dialect: str, *extra: str, secret: bool = False,
                   ignores: tuple[str, ...] = (), by_hand: bool = True) -> DriftReport:
    folder = write(tmp / "m", MANIFEST, *extra)
    manifest = load([folder], ENV)
    app = server_app(tmp / "area.db", dialect=dialect)
    async with client_for(app) as client:
        await apply(client, manifest, ENV)
        if by_hand:
            async with client_for(app, as_user=True) as operator:
                await change_by_hand(operator, secret=secret)
        reads = client.stats.reads()
        found = await detect_drift(client, manifest, ignores=ignores, target="http://area/v3/rest")
        # the live read (of the data sources the manifests name: none), plus one call for
        # editorHandle only when a service is involved
        services_involved = any(d.attribution and d.attribution.source.startswith("service:")
                                for d in found.differences)
        read = [k for k in kinds.TOP_LEVEL if not k.read_only]
        assert client.stats.reads() - reads == len(read) + services_involved
        assert found.plan.dialect == dialect  # detected from the replies
        return found


def by_address(report: DriftReport) -> dict[str, Any]:
    return {d.step.address: d for d in report.differences}


def test_no_drift_right_after_apply(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect, by_hand=False))
    assert not report.drifted and report.differences == []
    assert "No drift" in render_drift(report, "text")
    assert json.loads(render_drift(report, "json"))["drift"] is False


def test_out_of_band_changes_are_reported_with_who_and_when(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect))
    found = by_address(report)
    assert set(found) == {"endpoint:Weather/Forecast", "endpoint:Weather/Debug",
                          "plan:Weather Partners/Silver"}
    changed = found["endpoint:Weather/Forecast"]
    assert changed.step.action == "update"
    assert [(c.path, c.before, c.after) for c in changed.step.changes] == [("cors.maxAge", 120, 60)]
    assert changed.attribution is not None
    assert changed.attribution.who == EDITOR and changed.attribution.when
    assert changed.attribution.source == "service:Weather"
    assert found["endpoint:Weather/Debug"].step.action == "delete"  # added outside git
    missing = found["plan:Weather Partners/Silver"]
    assert missing.step.action == "create"  # deleted outside git
    assert missing.attribution is not None and missing.attribution.source == "package:Weather Partners"

    text = render_drift(report, "text")
    assert '~ endpoint "Weather/Forecast": changed outside git' in text
    assert "cors.maxAge: git 60, live 120" in text
    assert f"by {EDITOR} at " in text
    assert '+ endpoint "Weather/Debug": in the area but not in git' in text
    assert '- plan "Weather Partners/Silver": missing from the area' in text
    assert "Drift: 1 changed, 1 added outside git, 1 missing." in text
    assert "\x1b[" not in text and "\x1b[33m~ endpoint" in render_drift(report, "text", color=True)

    doc = json.loads(render_drift(report, "json"))
    assert doc["drift"] is True and doc["summary"]["differences"] == 3
    forecast = next(d for d in doc["differences"] if d["key"] == "Weather/Forecast")
    assert forecast["changes"] == [{"path": "cors.maxAge", "git": 60, "live": 120}]
    assert forecast["attribution"]["who"] == EDITOR

    md = render_drift(report, "markdown")
    assert md.startswith("### Drift") and "| Field | Git | Live |" in md and EDITOR in md


def test_ignored_fields_are_skipped_and_their_reason_printed(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect, IGNORE))
    assert "endpoint:Weather/Forecast" not in by_address(report)
    assert report.ignored == [{"target": "endpoint:Weather/Forecast:cors.maxAge",
                               "reason": "ops tune this by hand"}]
    text = render_drift(report, "text")
    assert "endpoint:Weather/Forecast:cors.maxAge: ops tune this by hand" in text
    assert "ops tune this by hand" in render_drift(report, "markdown")


def test_cli_ignore_option(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect, ignores=("endpoint:Weather/*:cors.*",)))
    assert "endpoint:Weather/Forecast" not in by_address(report)
    assert any(r.target == "endpoint:Weather/*:cors.*" for r in report.rules)


def test_secret_drift_is_detected_and_never_shown(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect, secret=True))
    changes = {c.path: c for c in by_address(report)["endpoint:Weather/Forecast"].step.changes}
    assert changes["systemDomainCredentialSecret"].sensitive
    for fmt in ("text", "json", "markdown"):
        out = render_drift(report, fmt)
        assert SECRET not in out and CHANGED_SECRET not in out
        assert "(sensitive)" in out


def test_markdown_stays_under_the_limit(tmp_path: Path, dialect: str) -> None:
    report = asyncio.run(scenario(tmp_path, dialect))
    md = render_drift(report, "markdown", limit=700)
    assert len(md) <= 700 + 200  # the header and tail are always kept
    assert "more object" in md


# --- the command line: exit codes against the embedded default and a served area ---------


@dataclass
class Target:
    """Where the command line runs (its environment) and how a person edits that area by hand
    (a client of the same area)."""

    env: dict[str, str | None]
    url: str
    token: str
    app_db: Path | None = None  # the embedded area's database (edited in process)

    def by_hand(self, edit: Callable[[ApiClient], Awaitable[Any]]) -> None:
        async def go() -> None:
            transport, app = None, None
            if self.app_db is not None:
                app = create_app(ServerConfig(db_path=str(self.app_db), tokens={self.token: "local"}))
                transport = httpx.ASGITransport(app=app)
            async with ApiClient(self.url, token=self.token, qps=None, transport=transport) as client:
                await edit(client)
            close_server(app)

        asyncio.run(go())

    def run(self, command: str, *args: str) -> Any:
        return CliRunner().invoke(cli, [command, *args], env={**ENV, **self.env},
                                  catch_exceptions=False, standalone_mode=False)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    """One reference server per dialect for the command-line tests of this module."""
    with served_in_thread(tmp_path_factory.mktemp("drift-cli") / "area.db", dialect, areas=1) as srv:
        yield srv


async def edit_cors(client: ApiClient) -> None:
    got = await ids(client)
    await client.put(f"/services/{got['Weather']}/endpoints/{got['Weather/Forecast']}/cors", {"maxAge": 5})


async def add_role(client: ApiClient) -> None:
    await client.post("/roles", {"name": "Made by hand"})


def exit_codes(target: Target, folder: Path) -> None:
    applied = target.run("apply", "--auto-approve", str(folder))
    assert applied.exception is None and applied.return_value == 0, applied.output

    clean = target.run("drift", str(folder))
    assert clean.return_value == 0 and "No drift" in clean.stdout

    target.by_hand(edit_cors)
    drifted = target.run("drift", str(folder), "--format", "json")
    assert drifted.return_value == 2
    doc = json.loads(drifted.stdout)
    assert [d["address"] for d in doc["differences"]] == ["endpoint:Weather/Forecast"]
    assert SECRET not in drifted.output

    accepted = target.run("drift", str(folder), "--ignore", "endpoint:Weather/Forecast:cors.maxAge")
    assert accepted.return_value == 0

    target.by_hand(add_role)
    unmanaged = target.run("drift", str(folder), "--ignore", "endpoint:Weather/Forecast:cors.maxAge")
    assert unmanaged.return_value == 0 and 'role "Made by hand"' in unmanaged.stdout
    pruned = target.run("drift", str(folder), "--ignore", "endpoint:Weather/Forecast:cors.maxAge", "--prune")
    assert pruned.return_value == 2 and '+ role "Made by hand"' in pruned.stdout


def test_cli_exit_codes_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the embedded default (``.apimctl/local.db``, area ``local``)."""
    monkeypatch.chdir(tmp_path)
    exit_codes(Target({"APIMCTL_URL": None}, "http://testserver/v3/rest", "hand",
                      app_db=tmp_path / ".apimctl" / "local.db"), write(tmp_path / "m", MANIFEST))


def test_cli_exit_codes(tmp_path: Path, served: ThreadServer) -> None:
    """Against the reference server over HTTP in each dialect, detected by the client."""
    token = served.fresh_token()
    env: dict[str, str | None] = {"APIMCTL_URL": served.url, "APIMCTL_TOKEN": token, "APIMCTL_QPS": "0"}
    exit_codes(Target(env, served.url, token), write(tmp_path / "m", MANIFEST))


def test_cli_errors_exit_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from apimctl.cli.common import run_guarded

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["apimctl", "drift", str(tmp_path / "missing")])
    assert run_guarded(cli) == 1
    folder = write(tmp_path / "m", MANIFEST)
    monkeypatch.setattr("sys.argv", ["apimctl", "drift", str(folder), "--ignore", "nonsense"])
    monkeypatch.setenv("FORECAST_BACKEND_SECRET", SECRET)
    assert run_guarded(cli) == 1


SLASHED = """
domains: [example.com, example.net]
services:
  - name: Ops
    endpoints:
      - {name: Status, requestPathAlias: /ops/status, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], systemDomains: [backend.example.net]}
  - name: Ops/Weather
    endpoints:
      - {name: Forecast, requestPathAlias: /ops/forecast, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com], systemDomains: [backend.example.net]}
packages:
  - name: Partners/EU
    plans: [{name: Gold}, {name: Silver}]
"""


def test_attribution_when_names_contain_a_slash(tmp_path: Path, dialect: str) -> None:
    """``Ops/Weather/Forecast`` belongs to the service ``Ops/Weather``, not to ``Ops``: the
    platform allows ``/`` in names, so the owner comes from the step's parent, not its key."""

    async def go() -> DriftReport:
        manifest = load([write(tmp_path / "m", SLASHED)], {})
        app = server_app(tmp_path / "area.db", dialect=dialect)
        async with client_for(app) as client:
            await apply(client, manifest, {})
            got = await ids(client)
            async with client_for(app, as_user=True) as operator:
                await operator.put(f"/services/{got['Ops/Weather']}/endpoints/"
                                   f"{got['Ops/Weather/Forecast']}/cors", {"maxAge": 7})
                await operator.delete(f"/packages/{got['Partners/EU']}/plans/"
                                      f"{got['Partners/EU/Silver']}")
            return await detect_drift(client, manifest)

    found = by_address(asyncio.run(go()))
    # keys escape a "/" inside a name as "\/" (service "Ops/Weather" is "Ops\/Weather")
    assert set(found) == {"endpoint:Ops\\/Weather/Forecast", "plan:Partners\\/EU/Silver"}
    forecast = found["endpoint:Ops\\/Weather/Forecast"].attribution
    assert forecast is not None and forecast.source == "service:Ops\\/Weather"
    assert forecast.who == EDITOR and forecast.when and forecast.revision
    silver = found["plan:Partners\\/EU/Silver"].attribution
    assert silver is not None and silver.source == "package:Partners\\/EU" and silver.when


def test_markdown_shows_odd_names_as_written_and_counts_agree() -> None:
    from apimctl.plans.drift import Difference
    from apimctl.plans.model import Change, Plan, Step, Unmanaged

    step = Step("update", "endpoint", "<b>*Ops*</b>/</details> [x]", "e1", "service:<b>*Ops*</b>",
                "s1", (Change("cors.maxAge", 1, 2),))
    plan = Plan(steps=[step], unmanaged=[Unmanaged("role", "_team_ <i>", "r1")])
    report = DriftReport(plan, [Difference(step)])
    md = render_drift(report, "markdown")
    assert "</details> [x]" not in md.replace("\n</details>\n", "\n")
    assert "&lt;b&gt;\\*Ops\\*&lt;/b&gt;/&lt;/details&gt; \\[x\\]" in md  # table cell
    assert "<summary>~ endpoint &lt;b&gt;*Ops*&lt;/b&gt;/&lt;/details&gt; [x] (1 field)</summary>" in md
    assert "\\_team\\_ &lt;i&gt;" in md
    assert md.count("<details>") == md.count("</details>") == 1
    assert "1 object differs from git" in md
    assert "1 object differs from the manifests." in render_drift(report, "text")


def test_markdown_with_thousands_of_differences_stays_under_the_limit() -> None:
    """The summary table is cut too, not only the details: an issue body holds 65,536
    characters at most, and the nightly job posts this text as one."""
    from apimctl.plans.drift import Difference
    from apimctl.plans.model import Change, Plan, Step

    steps = [Step("update", "endpoint", f"Service {i:04}/A rather long endpoint name {i}", f"e{i}",
                  f"service:Service {i:04}", "s", (Change("cors.maxAge", 1, 2),))
             for i in range(3000)]
    report = DriftReport(Plan(steps=steps), [Difference(s) for s in steps])
    md = render_drift(report, "markdown")
    assert len(md) <= 60_000
    listed = md.count("| ~ | `endpoint`")
    assert 100 < listed < 3000
    assert f"… and {3000 - listed} more objects not listed" in md
    assert "3000 objects differ from git" in md
