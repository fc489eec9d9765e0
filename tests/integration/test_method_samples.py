"""A method's sample responses (``sampleJsonResponse``, ``sampleXmlResponse``) are fields like
any other: users edit them in the portal, so a live change of either is drift, and a plan sets
it back. Through the command line against ``apimctl serve`` of both dialects: apply, export,
change each sample through the API (the method's own resource, and the endpoint's ``methods``
as a portal writes them), then ``drift`` reports it, ``plan`` plans it back from the manifests
and from the export, and ``apply`` restores it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner

from apimctl.cli import cli

from .dialect_support import served_in_thread

MANIFEST = """
domains: [example.com]
services:
  - name: Weather
    endpoints:
      - name: Forecast
        requestPathAlias: /forecast
        trafficManagerDomain: api.example.com
        publicDomains: [api.example.com]
        methods:
          - {name: daily, sampleJsonResponse: '{"days": 7}', sampleXmlResponse: '<days>7</days>'}
          - {name: hourly}
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), standalone_mode=False, catch_exceptions=False)
    return int(result.return_value or 0), result.stdout, result.stderr


async def _edit(url: str, token: str) -> None:
    """What a user does in the portal: the daily method's XML sample on its own resource,
    the hourly method's JSON sample through the endpoint's methods."""
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}) as api:
        fields = "id,endpoints.id,endpoints.methods.id,endpoints.methods.name"
        listed = (await api.get("/services", params={"fields": fields})).json()
        service = listed[0]
        endpoint = service["endpoints"][0]
        methods = {m["name"]: m["id"] for m in endpoint["methods"]}
        at = f"/services/{service['id']}/endpoints/{endpoint['id']}"
        reply = await api.put(f"{at}/methods/{methods['daily']}", json={"sampleXmlResponse": "<days>3</days>"})
        assert reply.status_code < 300, reply.text
        body: dict[str, Any] = {"methods": [{"id": methods["daily"], "name": "daily"},
                                            {"id": methods["hourly"], "name": "hourly",
                                             "sampleJsonResponse": '{"hours": 24}'}]}
        reply = await api.put(at, json=body)
        assert reply.status_code < 300, reply.text


def test_a_live_change_of_a_sample_response_is_drift_and_planned_back(tmp_path: Path, dialect: str) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "weather.yaml").write_text(MANIFEST)
    manifests, exported = str(tmp_path / "m"), str(tmp_path / "x")
    with served_in_thread(tmp_path / "area.db", dialect, 1) as server:
        token = server.fresh_token()
        area = ("--url", server.url, "--token", token)
        code, out, err = run("apply", manifests, *area, "--auto-approve")
        assert code == 0, out + err
        code, out, err = run("export", *area, "--out", exported)
        assert code == 0, err
        assert "sampleXmlResponse: <days>7</days>" in (tmp_path / "x" / "apimctl.yaml").read_text()

        asyncio.run(_edit(server.url, token))

        code, out, err = run("drift", manifests, *area, "--format", "json")
        assert code == 2, out + err
        (found,) = json.loads(out)["differences"]
        assert found["changes"] == [
            {"path": "methods[daily].sampleXmlResponse", "git": "<days>7</days>", "live": "<days>3</days>"},
            {"path": "methods[hourly].sampleJsonResponse", "git": "", "live": '{"hours": 24}'}]
        for source in (manifests, exported):  # the export plans them back too
            code, out, err = run("plan", source, *area, "--detailed-exitcode")
            assert code == 2, out + err
            assert 'methods[daily].sampleXmlResponse: "<days>3</days>" -> "<days>7</days>"' in out
            assert 'methods[hourly].sampleJsonResponse: "{\\"hours\\": 24}" -> ""' in out

        code, out, err = run("apply", manifests, *area, "--auto-approve")
        assert code == 0, out + err
        assert run("drift", manifests, *area)[0] == 0
