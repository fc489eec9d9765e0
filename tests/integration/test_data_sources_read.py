"""Read only what the manifests manage: a plan (and apply, drift) lists a data source
(organizations, email template sets) only when the manifests declare it or name one of its
objects; an area or a key refused such a list (403, 404) still plans, applies and drifts, and
``export`` and ``lint --live`` say so once and go on without it. Against both dialects of the
reference server, every request counted."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from apimctl import kinds
from apimctl.api.client import ApiClient
from apimctl.cli import cli
from apimctl.drift import detect_drift
from apimctl.export import export_area
from apimctl.lint import RECOMMENDED, lint_area, load_rulesets
from apimctl.planning import make_plan
from apimctl.server import ServerConfig, create_app

from .export_support import apply, load
from .inprocess import close_server, uvicorn_in_thread

SOURCES = [k for k in kinds.TOP_LEVEL if k.read_only]
TEMPLATE_SETS = next(k for k in SOURCES if k.name == "emailTemplateSet")

MANIFEST = """
domains: [example.com]
roles: [Partners]
services:
  - name: Weather
    endpoints:
      - {name: Forecast, requestPathAlias: /forecast, trafficManagerDomain: api.example.com,
         publicDomains: [api.example.com]}
packages:
  - name: Partners
    plans:
      - {name: Gold, services: [{name: Weather}]}
"""


class Area:
    """The reference server, every request counted by path; ``refused`` paths answer 403."""

    def __init__(self, db: Path, dialect: str, refused: tuple[str, ...] = ()) -> None:
        self.app = create_app(ServerConfig(db_path=str(db), tokens={"t": "area"}, auto_approve_domains=True,
                                           dialect=dialect))
        self.refused = refused
        self.calls: Counter[str] = Counter()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"].removeprefix("/v3/rest")
            self.calls[path] += 1
            if path in self.refused:
                body = b'{"errorCode": "403", "errorMessage": "Forbidden"}'
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)

    def client(self) -> ApiClient:
        return ApiClient("http://x/v3/rest", token="t", qps=None, transport=httpx.ASGITransport(app=self))

    def sources_listed(self) -> int:
        return sum(self.calls[k.path] for k in SOURCES)


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "m.yaml").write_text(text)
    return folder


def test_plan_apply_and_drift_list_no_data_source_the_manifests_do_not_name(tmp_path: Path, dialect: str) -> None:
    area = Area(tmp_path / "a.db", dialect)
    manifest = load([_write(tmp_path / "m", MANIFEST)], {})

    async def scenario() -> None:
        async with area.client() as client:
            await apply(client, manifest, {})
            assert area.sources_listed() == 0
            plan = await make_plan(client, manifest)
            assert plan.steps == [] and area.sources_listed() == 0
            report = await detect_drift(client, manifest)
            assert not report.drifted and area.sources_listed() == 0
            # a plan naming a set reads the sets (once), and finds the area's
            named = yaml.safe_load(MANIFEST)
            named["packages"][0]["plans"][0]["emailTemplateSet"] = "Default"  # the area's own set
            plan = await make_plan(client, load([_write(tmp_path / "named", yaml.safe_dump(named))], {}))
            assert area.calls[TEMPLATE_SETS.path] == 1
            assert [s.address for s in plan.steps] == ["plan:Partners/Gold"]

    asyncio.run(scenario())
    close_server(area.app)


def test_an_area_refusing_the_data_sources_still_plans_and_exports_with_one_notice(
        tmp_path: Path, dialect: str) -> None:
    area = Area(tmp_path / "a.db", dialect, refused=tuple(k.path for k in SOURCES))
    manifest = load([_write(tmp_path / "m", MANIFEST)], {})
    notices: list[str] = []

    async def scenario() -> None:
        async with area.client() as client:
            await apply(client, manifest, {})
            assert (await make_plan(client, manifest)).steps == []
            assert not (await detect_drift(client, manifest)).drifted
            exported = await export_area(client, notice=notices.append)
            assert "roles" in exported.kinds and not {k.manifest_key for k in SOURCES} & set(exported.kinds)
            linted = await lint_area(client, load_rulesets([RECOMMENDED]))
            assert [w.split(" not read: ")[0] for w in linted.warnings] == [k.manifest_key for k in SOURCES]

    asyncio.run(scenario())
    assert [n.split(" not read: ")[0] for n in notices] == [f"Warning: {k.manifest_key}" for k in SOURCES]
    assert all("403" in n for n in notices)
    assert area.sources_listed() == 2 * len(SOURCES)  # export's and lint's, refused
    close_server(area.app)


def test_export_through_the_command_line_says_so_once(tmp_path: Path, dialect: str) -> None:
    area = Area(tmp_path / "a.db", dialect, refused=(TEMPLATE_SETS.path,))
    folder = _write(tmp_path / "m", MANIFEST)
    with uvicorn_in_thread(area, timeout_graceful_shutdown=1) as port:
        url = f"http://127.0.0.1:{port}/v3/rest"
        result = CliRunner().invoke(cli, ["apply", str(folder), "--url", url, "--token", "t", "--auto-approve"])
        assert result.exit_code == 0, result.output
        result = CliRunner().invoke(cli, ["plan", str(folder), "--url", url, "--token", "t"])
        assert result.exit_code == 0 and "No changes" in result.stdout, result.output
        result = CliRunner().invoke(cli, ["export", "--url", url, "--token", "t"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count(f"Warning: {TEMPLATE_SETS.manifest_key} not read: ") == 1, result.stderr
    assert yaml.safe_load(result.stdout)["services"][0]["name"] == "Weather"
    assert area.calls[TEMPLATE_SETS.path] == 1  # the export's: apply and plan listed none
    close_server(area.app)


@pytest.mark.parametrize("status", [403, 404])
def test_a_refusal_is_told_apart_from_a_failure(status: int) -> None:
    from apimctl.errors import ApiError, QuotaExhausted, ServerError, Throttled
    from apimctl.state.live import refusal

    assert refusal(ApiError("no", status=status))
    assert not refusal(Throttled("slow", status=403)) and not refusal(QuotaExhausted("gone", status=403))
    assert not refusal(ServerError("down", status=500))
