"""``drift --adopt``: values changed in the area by hand (through the API, as another user) are
written back into the manifests where each is defined, the base or the overlay that sets it,
and every other byte of every file stays as it was; ``${VAR}`` values and secrets are reported,
never written; a value that cannot be written back faithfully is refused with its location and
nothing is written. Against both dialects of the reference server (the ``dialect`` fixture).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from apimctl.adopt import Unfaithful, plan_adoption, read_exported
from apimctl.api.client import ApiClient
from apimctl.cli import cli
from apimctl.drift import detect_drift
from apimctl.manifests.edits import write_edits
from apimctl.plans.adoption import ADDED, OBJECT, REMOVED, UNDECLARED, VARIABLE, WRITTEN
from apimctl.plans.adoption import SECRET as SECRET_STATUS
from apimctl.render.adopt import render_adoption

from .dialect_support import ThreadServer, served_in_thread
from .export_support import EDITOR, apply, client_for, load, replan, server_app

SECRET = "adopt-backend-secret-51fe"
ENV = {"FORECAST_BACKEND_SECRET": SECRET, "ALERTS_TEXT": "Alerts for a region"}

BASE = """\
# The weather area, as the platform team keeps it.
domains: [example.com, example.net]

services:
  - name: Weather
    description: 'Forecasts and alerts'   # shown on the portal
    endpoints:
      # the busiest endpoint
      - name: Forecast
        jsonpCallbackParameter: "callback for a city"
        requestPathAlias: /v2/forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        systemDomainCredentialSecret: ${FORECAST_BACKEND_SECRET}

        cors: {allDomainsEnabled: false, maxAge: 60}
      - name: Alerts
        jsonpCallbackParameter: ${ALERTS_TEXT}
        requestPathAlias: /v2/alerts
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
        cors:
          allDomainsEnabled: false
          maxAge: 30      # seconds
      - name: History
        jsonpCallbackParameter: past weather
        requestPathAlias: /v2/history
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        systemDomains: [backend.example.net]
packages:
  - name: Weather Partners
    description: For partners
    plans:
      - name: Gold     # the big one
        description: Gold plan
        rateLimitCeiling: 100000
        services: [{name: Weather, endpoints: [{name: Forecast}, {name: Alerts}, {name: History}]}]
      - name: Silver
        description: 'Silver plan'
        rateLimitCeiling: 1000
"""
OVERLAY = """\
# production tunes these
services:
  - name: Weather
    endpoints:
      - name: History
        jsonpCallbackParameter: "past weather, production"   # longer in production
packages:
  - name: Weather Partners
    plans:
      - name: Gold
        rateLimitCeiling: 5000   # production ceiling
"""


def repo(tmp: Path) -> tuple[Path, Path]:
    """The manifests in a git repository: ``base/`` and ``overlays/prod/``, committed."""
    base, overlay = tmp / "base", tmp / "overlays" / "prod"
    base.mkdir(parents=True)
    overlay.mkdir(parents=True)
    (base / "weather.yaml").write_text(BASE)
    (overlay / "overlay.yaml").write_text(OVERLAY)
    git(tmp, "init", "-q")
    git(tmp, "add", ".")
    git(tmp, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "manifests")
    return base, overlay


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, text=True).stdout


def changed_lines(folder: Path) -> dict[str, set[int]]:
    """The lines ``git diff`` says changed, by file (old line numbers; every change in place)."""
    out: dict[str, set[int]] = {}
    current = ""
    for line in git(folder, "diff", "-U0").splitlines():
        if line.startswith("--- a/"):
            current = line[6:]
        elif line.startswith("@@"):
            old, new = line.split()[1:3]
            assert old[1:] == new[1:], line  # lines replaced in place, none added or removed
            start, _, count = old[1:].partition(",")
            out.setdefault(current, set()).update(range(int(start), int(start) + int(count or 1)))
    return out


async def ids(client: ApiClient) -> dict[str, str]:
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


# what a person may change by hand: (object, field) -> (file, line) defining it
WHERE = {
    ("service:Weather", "description"): ("base/weather.yaml", 6),
    ("endpoint:Weather/Forecast", "jsonpCallbackParameter"): ("base/weather.yaml", 10),
    ("endpoint:Weather/Forecast", "cors.maxAge"): ("base/weather.yaml", 17),
    ("endpoint:Weather/Alerts", "cors.maxAge"): ("base/weather.yaml", 26),
    ("endpoint:Weather/History", "jsonpCallbackParameter"): ("overlays/prod/overlay.yaml", 6),
    ("package:Weather Partners", "description"): ("base/weather.yaml", 35),
    ("plan:Weather Partners/Gold", "description"): ("base/weather.yaml", 38),
    ("plan:Weather Partners/Gold", "rateLimitCeiling"): ("overlays/prod/overlay.yaml", 11),
    ("plan:Weather Partners/Silver", "description"): ("base/weather.yaml", 42),
    ("plan:Weather Partners/Silver", "rateLimitCeiling"): ("base/weather.yaml", 43),
}
TEXT = st.text(alphabet="abcXYZ 019:#'-\"", min_size=1, max_size=12).filter(lambda t: t == t.strip())
VALUES = {"description": TEXT, "jsonpCallbackParameter": TEXT, "cors.maxAge": st.integers(0, 86_400),
          "rateLimitCeiling": st.integers(1, 10**6)}


async def change(client: ApiClient, address: str, path: str, value: Any) -> None:
    """One out-of-band change through the API."""
    got = await ids(client)
    kind, _, key = address.partition(":")
    body: dict[str, Any] = {path: value}
    if kind == "service":
        url = f"/services/{got[key]}"
    elif kind == "package":
        url = f"/packages/{got[key]}"
    elif kind == "plan":
        url = f"/packages/{got[key.split('/')[0]]}/plans/{got[key]}"
    else:
        url = f"/services/{got[key.split('/')[0]]}/endpoints/{got[key]}"
    if path == "cors.maxAge":
        url, body = f"{url}/cors", {"maxAge": value}
    await client.put(url, body)


@asynccontextmanager
async def clients(tmp: Path, dialect: str, served: tuple[str, str] | None) -> AsyncIterator[tuple[ApiClient, Any]]:
    """A client of a new area and a way to open another, as the user ``alice``: in process,
    or with ``served`` (url, token) an area of ``apimctl serve`` over HTTP."""
    if served is not None:
        url, token = served
        async with ApiClient(url, token=token, qps=None) as client:
            yield client, lambda: ApiClient(url, token=token, qps=None)
        return
    app = server_app(tmp / "area.db", dialect=dialect)
    async with client_for(app) as client:
        yield client, lambda: client_for(app, as_user=True)


async def key_on_gold(client: ApiClient) -> None:
    """A developer's key on the plan Gold: a change of Gold's limits reaches its calls."""
    got = await ids(client)
    member = await client.post("/members", {"username": "dev", "email": "dev@example.org", "displayName": "dev",
                                            "externalId": "ext-dev", "passwdNew": "S3cret-pass!"})
    app = await client.post(f"/members/{member['id']}/applications", {"name": "Dashboard", "username": "dev"})
    await client.post(f"/applications/{app['id']}/packageKeys", {
        "package": {"id": got["Weather Partners"]}, "plan": {"id": got["Weather Partners/Gold"]}})


async def scenario(tmp: Path, dialect: str, changes: list[tuple[tuple[str, str], Any]],
                   overlay: str | None = OVERLAY, objects: bool = False,
                   served: tuple[str, str] | None = None, keys: bool = False) -> tuple[Path, Any]:
    base, over = repo(tmp)
    (over / "overlay.yaml").write_text(overlay or "")
    git(tmp, "commit", "-qam", "overlay", "--allow-empty")
    overlays = [over] if overlay is not None else []
    manifest = load([base], ENV, overlays)
    async with clients(tmp, dialect, served) as (client, operator_of):
        await apply(client, manifest, ENV)
        if keys:
            await key_on_gold(client)
        async with operator_of() as operator:
            for (address, path), value in changes:
                await change(operator, address, path, value)
            if objects:
                await objects_by_hand(operator)
        report = await detect_drift(client, manifest, target="http://area/v3/rest", impact="auto")
        exported = await read_exported(client) if objects else {}
        try:
            adoption = plan_adoption(report, [str(base)], [str(o) for o in overlays], exported=exported,
                                     deletes=objects)
        except Unfaithful as exc:
            return tmp, exc
        write_edits(adoption.edits, "drift --adopt")
        after = load([base], ENV, overlays)
        again = await detect_drift(client, after)
        plan = await replan(client, after)
        return tmp, (adoption, again, plan)


EXAMPLES = 4


@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(sorted(WHERE)), st.data()), min_size=1, max_size=50))
def test_adopted_values_land_on_their_own_lines(tmp_path_factory: pytest.TempPathFactory, served: ThreadServer,
                                                dialect: str, changes: list[Any]) -> None:
    """Against ``apimctl serve`` over HTTP in each dialect, an area per example."""
    made = [(target, data.draw(VALUES[target[1]])) for target, data in changes]
    last = dict(made)  # a later change of a field replaces an earlier one
    tmp, (adoption, again, plan) = asyncio.run(scenario(tmp_path_factory.mktemp("adopt"), dialect, made,
                                                        served=(served.url, served.fresh_token())))
    original = {(f"{v.address}", v.path): v for v in adoption.values}
    wanted: dict[str, set[int]] = {}
    for target, value in last.items():
        found = original.get(target)
        git_value = found.git if found else None
        if found is None:
            continue  # set back to the value git has: no drift there
        assert found.status == WRITTEN and found.live == value and git_value != value
        file, line = WHERE[target]
        wanted.setdefault(file, set()).add(line)
    assert changed_lines(tmp) == wanted  # zero unrelated lines
    assert "# production ceiling" in (tmp / "overlays/prod/overlay.yaml").read_text()
    assert "# the busiest endpoint" in (tmp / "base/weather.yaml").read_text()
    assert not again.drifted and not plan.steps


def test_report_variables_and_secrets_are_never_written(tmp_path: Path, dialect: str) -> None:
    made = [(("endpoint:Weather/Alerts", "jsonpCallbackParameter"), "changed by hand"),
            (("endpoint:Weather/Forecast", "systemDomainCredentialSecret"), "hand-secret-9c1d"),
            (("endpoint:Weather/Forecast", "cors.maxAge"), 120),
            (("plan:Weather Partners/Gold", "rateLimitCeiling"), 10)]
    tmp, (adoption, again, _) = asyncio.run(scenario(tmp_path, dialect, made, keys=True))
    status = {(v.address, v.path): v.status for v in adoption.values}
    assert status == {("endpoint:Weather/Alerts", "jsonpCallbackParameter"): VARIABLE,
                      ("endpoint:Weather/Forecast", "systemDomainCredentialSecret"): SECRET_STATUS,
                      ("endpoint:Weather/Forecast", "cors.maxAge"): WRITTEN,
                      ("plan:Weather Partners/Gold", "rateLimitCeiling"): WRITTEN}
    assert changed_lines(tmp) == {"base/weather.yaml": {17}, "overlays/prod/overlay.yaml": {11}}
    gold = next(v for v in adoption.values if v.address == "plan:Weather Partners/Gold")
    assert "by whom not recorded at 20" in render_adoption(adoption, "text")  # a plan keeps no editor
    assert gold.impact and "1 key" in gold.impact[0], gold.impact  # the key impact of the change
    assert "cors: {allDomainsEnabled: false, maxAge: 120}" in (tmp / "base/weather.yaml").read_text()
    assert again.drifted  # the variable and the secret are left for a person
    for fmt in ("text", "json", "markdown"):
        out = render_adoption(adoption, fmt)
        assert "hand-secret-9c1d" not in out and SECRET not in out
    text = render_adoption(adoption, "text")
    assert "endpoint:Weather/Forecast cors.maxAge: git 60 -> live 120" in text
    assert f"by {EDITOR} at " in text and "base/weather.yaml:17:" in text
    assert "comes from a ${VAR}" in text and "never written into git" in text
    doc = json.loads(render_adoption(adoption, "json"))
    written = next(c for c in doc["changes"] if c["status"] == WRITTEN)
    assert (written["git"], written["live"], written["who"], written["line"]) == (60, 120, EDITOR, 17)
    md = render_adoption(adoption, "markdown")
    assert md.startswith("### Adopt changes made by hand") and "| `endpoint` Weather/Forecast |" in md


SHARED = OVERLAY + """\
  - name: Extra
    $patch: add
    description: &text shared text
    plans:
      - name: Bronze
        description: *text
"""


def test_a_shared_anchor_is_refused_with_its_location_and_nothing_is_written(tmp_path: Path, dialect: str) -> None:
    made = [(("package:Extra", "description"), "one of them"), (("plan:Weather Partners/Silver", "rateLimitCeiling"), 7)]
    tmp, refused = asyncio.run(scenario(tmp_path, dialect, made, overlay=SHARED))
    assert isinstance(refused, Unfaithful)
    assert "overlays/prod/overlay.yaml:14:" in str(refused) and "package:Extra description" in str(refused)
    assert git(tmp, "status", "--porcelain", "--untracked-files=no") == ""


# --- the command line, against the reference server over HTTP ---------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Iterator[ThreadServer]:
    with served_in_thread(tmp_path_factory.mktemp("adopt-cli") / "area.db", dialect, areas=2 * EXAMPLES + 3) as srv:
        yield srv


def test_cli_adopts_then_drift_and_plan_are_clean(tmp_path: Path, served: ThreadServer) -> None:
    base, over = repo(tmp_path)
    token = served.fresh_token()
    env = {**ENV, "APIMCTL_URL": served.url, "APIMCTL_TOKEN": token, "APIMCTL_QPS": "0"}

    def run(*args: str) -> Any:
        return CliRunner().invoke(cli, [*args, str(base), "--overlay", str(over)], env=env,
                                  catch_exceptions=False, standalone_mode=False)

    assert run("apply", "--auto-approve").return_value == 0

    async def by_hand() -> None:
        async with ApiClient(served.url, token=token, qps=None) as client:
            await change(client, "plan:Weather Partners/Gold", "rateLimitCeiling", 7500)
            await change(client, "service:Weather", "description", "Forecasts: alerts #1")

    asyncio.run(by_hand())
    adopted = run("drift", "--adopt", "--format", "markdown")
    assert adopted.return_value == 0, adopted.output
    assert "| `plan` Weather Partners/Gold | `rateLimitCeiling` | `5000` | `7500` |" in adopted.stdout
    assert changed_lines(tmp_path) == {"base/weather.yaml": {6}, "overlays/prod/overlay.yaml": {11}}
    assert "    description: 'Forecasts: alerts #1'   # shown on the portal\n" in (base / "weather.yaml").read_text()
    assert "        rateLimitCeiling: 7500   # production ceiling\n" in (over / "overlay.yaml").read_text()
    assert run("drift").return_value == 0
    assert run("plan", "--detailed-exitcode").return_value == 0
    again = run("drift", "--adopt", "--format", "json")
    assert again.return_value == 0 and json.loads(again.stdout)["summary"]["adopted"] == 0


async def objects_by_hand(client: ApiClient) -> None:
    """An endpoint added to Weather and the plan Silver deleted, in the dashboard."""
    got = await ids(client)
    await client.post(f"/services/{got['Weather']}/endpoints", {
        "name": "Debug", "requestPathAlias": "/v2/debug", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "api.example.com"}],
        "systemDomains": [{"address": "backend.example.net"}]})
    await client.delete(f"/packages/{got['Weather Partners']}/plans/{got['Weather Partners/Silver']}")


def test_objects_made_live_are_written_beside_their_parent_and_deletes_removed(tmp_path: Path,
                                                                               dialect: str) -> None:
    tmp, (adoption, again, plan) = asyncio.run(scenario(tmp_path, dialect, [], overlay=None, objects=True))
    status = {v.address: v.status for v in adoption.values}
    assert status == {"endpoint:Weather/Debug": ADDED, "plan:Weather Partners/Silver": REMOVED}
    text = (tmp / "base/weather.yaml").read_text()
    assert "      - name: Debug\n        requestPathAlias: /v2/debug\n" in text
    assert text.index("name: History") < text.index("name: Debug") < text.index("packages:")
    assert "name: Silver" not in text and "# the big one" in text and "# seconds" in text
    diff = git(tmp, "diff", "-U0")
    assert "\n-      - name: Silver\n-        description: 'Silver plan'\n-        rateLimitCeiling: 1000\n" in diff
    assert not again.drifted and not plan.steps, [(s.key, s.changes) for s in again.plan.steps]


def test_with_an_overlay_an_object_made_live_is_added_there(tmp_path: Path, dialect: str) -> None:
    tmp, (adoption, _, plan) = asyncio.run(scenario(tmp_path, dialect, [], objects=True))
    status = {v.address: v.status for v in adoption.values}
    # the plan Silver is declared in the base, which the other areas share: left for a person
    assert status == {"endpoint:Weather/Debug": ADDED, "plan:Weather Partners/Silver": OBJECT}
    overlay = (tmp / "overlays/prod/overlay.yaml").read_text()
    assert "      - name: Debug\n" in overlay and "$patch: add" in overlay
    assert git(tmp, "diff", "--name-only") == "overlays/prod/overlay.yaml\n"
    assert [s.key for s in plan.steps] == ["Weather Partners/Silver"]


def test_cli_refuses_an_unfaithful_value_with_exit_1_and_writes_nothing(
        tmp_path: Path, served: ThreadServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from apimctl.cli.common import run_guarded

    base, over = repo(tmp_path)
    (over / "overlay.yaml").write_text(SHARED)
    git(tmp_path, "commit", "-qam", "shared")
    token = served.fresh_token()
    for name, value in {**ENV, "APIMCTL_URL": served.url, "APIMCTL_TOKEN": token, "APIMCTL_QPS": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.argv", ["apimctl", "apply", "--auto-approve", str(base), "--overlay", str(over)])
    assert run_guarded(cli) == 0

    async def by_hand() -> None:
        async with ApiClient(served.url, token=token, qps=None) as client:
            await change(client, "package:Extra", "description", "one of them")
            await change(client, "plan:Weather Partners/Silver", "rateLimitCeiling", 7)

    asyncio.run(by_hand())
    capsys.readouterr()
    monkeypatch.setattr("sys.argv", ["apimctl", "drift", "--adopt", str(base), "--overlay", str(over)])
    assert run_guarded(cli) == 1
    err = capsys.readouterr().err
    assert "overlay.yaml:14:" in err and "shared" in err and "Traceback" not in err
    assert git(tmp_path, "status", "--porcelain", "--untracked-files=no") == ""  # Silver's line neither


def test_a_field_the_manifests_leave_out_is_added_to_its_object(tmp_path: Path, dialect: str) -> None:
    """The platform's default changed by hand: the field is added as the object's last key, in
    the overlay's entry of the object when there is one, else left for a person."""
    made = [(("plan:Weather Partners/Silver", "notes"), "set by hand"), (("service:Weather", "version"), "2.0")]
    tmp, (adoption, again, plan) = asyncio.run(scenario(tmp_path, dialect, made))
    status = {(v.address, v.path): v.status for v in adoption.values}
    assert status == {("plan:Weather Partners/Silver", "notes"): UNDECLARED,  # the overlay does not name it
                      ("service:Weather", "version"): WRITTEN}
    overlay = (tmp / "overlays/prod/overlay.yaml").read_text()
    assert "        jsonpCallbackParameter: \"past weather, production\"   # longer in production\n" \
           "    version: '2.0'\npackages:\n" in overlay
    assert git(tmp, "diff", "--numstat") == "1\t0\toverlays/prod/overlay.yaml\n"

    tmp, (adoption, again, plan) = asyncio.run(scenario(tmp_path / "no-overlay", dialect, made, overlay=None))
    assert {v.status for v in adoption.values} == {WRITTEN}
    base = (tmp / "base/weather.yaml").read_text()
    assert "        rateLimitCeiling: 1000\n        notes: set by hand\n" in base
    assert "      - name: History\n" in base and "\n    version: '2.0'\npackages:\n" in base
    assert git(tmp, "diff", "--numstat") == "2\t0\tbase/weather.yaml\n"
    assert not again.drifted and not plan.steps
