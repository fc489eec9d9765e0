"""The ``mashery`` dialect (SUPPLEMENT §10) end to end: detection, throttling parity, and
export -> apply round trips across dialects."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from apimctl.api.replies import error_for
from apimctl.errors import QuotaExhausted, Throttled

from .apply_support import Runs, count_calls, server, write_manifest
from .export_support import (
    EXAMPLES,
    apply,
    client_for,
    describe,
    export_env,
    export_to,
    load,
    replan,
    secret_values,
    server_app,
)

WEATHER_ENV = {"FORECAST_BACKEND_SECRET": "weather-secret-5e1f"}


def _reply(status: int, headers: dict[str, str], body: object) -> httpx.Response:
    return httpx.Response(status, headers=headers, json=body,
                          request=httpx.Request("GET", "http://x/v3/rest/services"))


def test_both_error_code_headers_are_understood() -> None:
    body = {"errorCode": "ERR_403_DEVELOPER_OVER_QPS", "errorMessage": "slow", "errors": []}
    throttled = error_for("GET /services", _reply(403, {"X-Mashery-Error-Code": "ERR_403_DEVELOPER_OVER_QPS"}, body))
    assert isinstance(throttled, Throttled) and throttled.retry_after == 1.0  # no Retry-After: ~1 s
    spec = error_for("GET /services", _reply(403, {"X-Svc-Error-Code": "ERR_403_DEVELOPER_OVER_QPS",
                                                   "Retry-After": "2"}, {"errorCode": 403}))
    assert isinstance(spec, Throttled) and spec.retry_after == 2.0
    for headers in ({"X-Mashery-Error-Code": "ERR_403_DEVELOPER_OVER_RATE"},
                    {"X-Svc-Error-Code": "ERR_403_DEVELOPER_OVER_RATE"}):
        assert isinstance(error_for("GET /services", _reply(403, headers, {})), QuotaExhausted)


def test_an_unknown_host_answering_mashery_is_detected_and_dialect_forces(tmp_path: Path) -> None:
    folder = write_manifest(tmp_path / "m", services=1)
    with server(tmp_path, "--dialect", "mashery") as srv:
        runs = Runs()
        auto = runs.run(srv, "plan", "--format", "json", str(folder))
        doc = json.loads(auto.stdout)
        # every answer of a real area carries X-Mashery-Responder (SUPPLEMENT §10.10.5)
        assert doc["dialect"] == "mashery" and "X-Mashery-Responder header" in doc["dialect_reason"], doc
        text = runs.run(srv, "plan", str(folder))
        assert "(dialect mashery:" in text.stdout
        forced = json.loads(runs.run(srv, "plan", "--dialect", "spec", "--format", "json", str(folder)).stdout)
        assert (forced["dialect"], forced["dialect_reason"]) == ("spec", "--dialect")
        env = json.loads(runs.run(srv, "plan", "--format", "json", str(folder),
                                  env={"APIMCTL_DIALECT": "mashery"}).stdout)
        assert (env["dialect"], env["dialect_reason"]) == ("mashery", "APIMCTL_DIALECT")


@pytest.mark.parametrize("dialect", ["spec", "mashery"])
def test_throttled_apply_converges_in_both_dialects(dialect: str, tmp_path: Path) -> None:
    folder = write_manifest(tmp_path / "m", services=1)
    with server(tmp_path, "--qps", "3", "--dialect", dialect) as srv:
        runs = Runs()
        proc = runs.run(srv, "apply", "--auto-approve", "--qps", "10", "--format", "json", str(folder), timeout=90)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert count_calls(srv.calls(), ("GET", "POST", "PUT", "DELETE"), status="403") > 0
        again = runs.run(srv, "plan", "--detailed-exitcode", str(folder))
        assert again.returncode == 0, again.stdout + again.stderr


async def _cross(tmp: Path) -> None:
    manifest = load([EXAMPLES / "weather"], WEATHER_ENV)
    async with client_for(server_app(tmp / "m1.db", dialect="mashery")) as first:
        await apply(first, manifest, WEATHER_ENV)
        await export_to(first, tmp / "out")
    text = (tmp / "out" / "apimctl.yaml").read_text() if (tmp / "out" / "apimctl.yaml").exists() else ""
    assert "svc-" not in text
    env = export_env(tmp / "out", secret_values(manifest))
    exported = load([tmp / "out"], env)
    for db, dialect in (("m2.db", "mashery"), ("s.db", "spec")):
        async with client_for(server_app(tmp / db, dialect=dialect)) as other:
            made = await apply(other, exported, env)
            assert made.dialect == dialect
            zero = await replan(other, exported)
            assert not zero.steps, f"{dialect}:\n{describe(zero)}"
            back = await replan(other, manifest)
            assert not back.steps, f"{dialect}:\n{describe(back)}"


def test_export_from_mashery_applies_to_mashery_and_to_spec(tmp_path: Path) -> None:
    asyncio.run(_cross(tmp_path))
