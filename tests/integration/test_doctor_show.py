"""``apimctl doctor`` (the checks against the reference server in both dialects, the quota
headers, the command's lines and exit codes) and ``apimctl show PLANFILE``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from apimctl.api.client import ApiClient
from apimctl.applying.doctor import Check, Target, diagnose
from apimctl.applying.lease import Lease
from apimctl.cli import cli
from apimctl.server import ServerConfig, create_app

from .inprocess import entry_point, uvicorn_in_thread

WEATHER = Path(__file__).resolve().parents[2] / "examples" / "weather"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, dialect: str) -> Any:
    db = tmp_path_factory.mktemp(f"doctor-{dialect}") / "s.db"
    return create_app(ServerConfig(db_path=str(db), tokens={"good": "area-1"}, dialect=dialect))


def connector(app: Any, token: str, base: str = "http://apim.test/v3/rest",
              headers: dict[str, str] | None = None,
              seen: dict[str, str] | None = None) -> Callable[[], Any]:
    inner = httpx.ASGITransport(app=app)

    class Recording(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await inner.handle_async_request(request)
            response.headers.update(headers or {})
            if seen is not None:
                seen.update({k.lower(): v for k, v in response.headers.items()})
            return response

    @asynccontextmanager
    async def connect() -> AsyncIterator[ApiClient]:
        async with ApiClient(base, token=token, qps=None, transport=Recording(),
                             max_retries=0) as client:
            yield client

    return connect


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> Callable[..., tuple[int, str, str]]:
    """``run(*args)``: the real entry point in-process: (exit code, stdout, stderr)."""

    return entry_point(monkeypatch, capsys)


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


TARGET = Target("https://apim.test/v3/rest", exchange=False, qps=2.0)


@pytest.mark.anyio
async def test_every_check_passes_against_a_healthy_area(app: Any, dialect: str) -> None:
    checks = by_name(await diagnose(connector(app, "good"), TARGET, dict))
    assert [c.status for c in checks.values()] == ["ok"] * 5, checks
    assert list(checks) == ["url", "token", "dialect", "quota", "lease"]
    assert checks["dialect"].detail.startswith(dialect)
    assert "no quota headers" in checks["quota"].detail and "2 calls/s" in checks["quota"].detail


@pytest.mark.anyio
async def test_a_refused_token_is_named_and_the_rest_skipped(app: Any) -> None:
    checks = by_name(await diagnose(connector(app, "wrong"), TARGET, dict))
    assert checks["url"].status == "ok"
    assert checks["token"].status == "fail" and "refused" in checks["token"].detail
    assert checks["lease"].status == "skip"


@pytest.mark.anyio
async def test_a_wrong_base_says_where_the_api_is(app: Any) -> None:
    checks = by_name(await diagnose(connector(app, "good", "http://apim.test/v2"), TARGET, dict))
    assert checks["url"].status == "fail" and "/v3/rest" in checks["url"].detail


@pytest.mark.anyio
async def test_a_held_lease_is_a_warning(app: Any) -> None:
    async with connector(app, "good")() as client, Lease(client):
        checks = by_name(await diagnose(connector(app, "good"), TARGET, dict))
    assert checks["lease"].status == "warn" and "held by" in checks["lease"].detail
    assert all(c.status == "ok" for name, c in checks.items() if name != "lease")


@pytest.mark.anyio
async def test_quota_headers_are_read(app: Any) -> None:
    seen: dict[str, str] = {}
    headers = {"X-Packagekey-Quota-Allotted": "5000", "X-Packagekey-Quota-Current": "4800",
               "X-Plan-Quota-Reset": "2026-11-28T00:00:00Z"}
    checks = by_name(await diagnose(connector(app, "good", headers=headers, seen=seen),
                                    TARGET, lambda: seen))
    assert checks["quota"].status == "warn"
    assert "4800 of 5000 calls used" in checks["quota"].detail
    assert "resets 2026-11-28T00:00:00Z" in checks["quota"].detail


def test_doctor_command_embedded_and_unreachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 run: Callable[..., tuple[int, str, str]]) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("doctor", "--url", "embedded", "--no-color")
    assert code == 0, out + err
    lines = [line for line in out.splitlines() if line]
    assert [line.split()[0] for line in lines] == ["ok"] * 5
    assert lines[0].startswith("ok   url: embedded")
    code, out, err = run("doctor", "--url", "http://127.0.0.1:9/v3/rest", "--token", "secret-token",
                         "--timeout", "2")
    assert code == 1
    assert out.startswith("FAIL url: http://127.0.0.1:9/v3/rest")
    assert "secret-token" not in out + err
    assert "-    token: not checked" in out


@pytest.mark.parametrize(("given", "said"), [((), "apimctl's own limit: off"),
                                            (("--qps", "3"), "apimctl's own limit: 3 calls/s")])
def test_doctor_names_the_limit_in_effect_against_this_machine(app: Any, given: tuple[str, ...], said: str,
                                                               run: Callable[..., tuple[int, str, str]]) -> None:
    """Against 127.0.0.1 (``apimctl serve``) no client-side limit applies unless ``--qps`` is
    given: doctor says the limit the commands run with, not the option's default."""
    with uvicorn_in_thread(app) as port:
        code, out, err = run("doctor", "--url", f"http://127.0.0.1:{port}/v3/rest", "--token", "good",
                             "--no-color", *given)
    assert code == 0, out + err
    quota = next(line for line in out.splitlines() if line.startswith("ok   quota:"))
    assert said in quota, quota


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("show")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("FORECAST_BACKEND_SECRET", "s3cret-value")
        done = CliRunner().invoke(cli, ["plan", str(WEATHER), "--url", "embedded", "--out", "plan.json"],
                                  standalone_mode=False, catch_exceptions=False)
    assert done.return_value == 0, done.output
    return folder / "plan.json"


def test_show_prints_a_saved_plan_in_each_format(saved: Path, run: Callable[..., tuple[int, str, str]]) -> None:
    code, text, err = run("show", str(saved), "--no-color")
    assert code == 0, err
    assert 'create service "Weather"' in text
    code, markdown, _ = run("show", str(saved), "--format", "markdown")
    assert markdown.startswith("## apimctl plan")
    data = json.loads(run("show", str(saved), "--format", "json")[1])
    assert [s["address"] for s in data["steps"]] == [
        s["address"] for s in json.loads(saved.read_text())["steps"]]
    assert "s3cret-value" not in text + markdown
    assert run("show", str(saved), "--detailed-exitcode")[0] == 2


def test_show_refuses_what_is_not_a_plan(tmp_path: Path, run: Callable[..., tuple[int, str, str]]) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    code, _, err = run("show", str(bad))
    assert code == 1 and "not a saved plan" in err and "Traceback" not in err
    code, _, err = run("show", str(tmp_path / "none.json"))
    assert code == 1 and "none.json" in err
