"""The traffic listener on a real port (uvicorn), forwarding over HTTP to a real back end on
127.0.0.1. The endpoint's system domain is ``127.0.0.1:PORT`` where the
server accepts an address with a port (SUPPLEMENT §10.10.2); otherwise ``localhost``, sent to
the back end's port by the test run's back-end transport (as ``apimctl test`` does for a back
end declared with a ``url``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import serve_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from apimctl.calltests.backends import BackendTransport, Stub
from apimctl.server import UVICORN_OPTIONS, ServerConfig, create_app
from apimctl.server.traffic import create_traffic_app


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"path": request.url.path, "query": request.url.query,
                         "host": request.headers.get("x-svc-host") or request.headers.get("x-mashery-host")})


def _one(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    return body[0] if isinstance(body, list) else body  # type: ignore[no-any-return]


@pytest.mark.parametrize("dialect", ["mashery"])  # the in-process tests cover both dialects
@pytest.mark.parametrize("default_transport", [False, True], ids=["mapped", "kept-alive"])
def test_a_call_through_real_sockets(tmp_path: Path, dialect: str, default_transport: bool) -> None:
    backend_app = Starlette(routes=[Route("/{path:path}", _echo)])
    config = ServerConfig(db_path=str(tmp_path / "s.db"), tokens={"t": "a"}, auto_approve_domains=True, dialect=dialect)
    management_app = create_app(config)
    with serve_in_thread(backend_app) as backend_url:
        port = httpx.URL(backend_url).port
        no_keepalive = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        transport = BackendTransport([Stub("localhost", url=backend_url)], network=no_keepalive)
        traffic_app = create_traffic_app(management_app, transport=None if default_transport else transport)
        with serve_in_thread(management_app, **UVICORN_OPTIONS) as api, serve_in_thread(traffic_app) as traffic:
            auth = {"Authorization": "Bearer t"}
            for domain in ("example.com", "localhost", "127.0.0.1"):
                assert httpx.post(f"{api}/v3/rest/domains", json={"domain": domain}, headers=auth).status_code == 200
            prefix = "svc" if dialect == "spec" else "mashery"
            endpoint = {"name": "E", "requestPathAlias": "/v1", "trafficManagerDomain": "api.example.com",
                        "publicDomains": [{"address": "api.example.com"}], "supportedHttpMethods": ["get", "head"],
                        "outboundTransportProtocol": "http", "allowMissingApiKey": True,
                        "forwardedHeaders": [f"{prefix}-host"], "systemDomains": [{"address": f"127.0.0.1:{port}"}]}
            created = httpx.post(f"{api}/v3/rest/services", json={"name": "S", "endpoints": [endpoint]}, headers=auth)
            if created.status_code == 400 and not default_transport:  # no port in a system domain: mapped
                endpoint["systemDomains"] = [{"address": "localhost"}]
                created = httpx.post(f"{api}/v3/rest/services", json={"name": "S", "endpoints": [endpoint]}, headers=auth)
            assert created.status_code == 200, created.text
            service = _one(httpx.get(f"{api}/v3/rest/services/{_one(created)['id']}",
                                     params={"fields": "id,endpoints"}, headers=auth))
            package = _one(httpx.post(f"{api}/v3/rest/packages", headers=auth, json={"name": "P", "plans": [
                {"name": "Open", "services": [{"id": service["id"], "endpoints": [
                    {"id": e["id"]} for e in service["endpoints"]]}]}]}))
            package = _one(httpx.get(f"{api}/v3/rest/packages/{package['id']}", params={"fields": "id,plans"},
                                     headers=auth))
            _one(httpx.post(f"{api}/v3/rest/members", headers=auth, json={
                "username": "u", "email": "u@example.com", "displayName": "U", "externalId": "u",
                "passwdNew": "pw-u-1234567", "applications": [{"name": "A", "username": "u", "packageKeys": [
                    {"apikey": "noapikey", "package": {"id": package["id"]},
                     "plan": {"id": package["plans"][0]["id"]}}]}]}))
            answer = httpx.get(f"{traffic}/v1/x?q=1", headers={"Host": "api.example.com"})
            assert answer.status_code == 200, answer.text
            assert answer.json() == {"path": "/v1/x", "query": "q=1", "host": "api.example.com"}
            with httpx.Client() as caller:  # one connection to the listener, several calls on it
                again = [caller.get(f"{traffic}/v1/y", headers={"Host": "api.example.com"}) for _ in range(3)]
            assert [a.json()["path"] for a in again] == ["/v1/y"] * 3
            head = httpx.head(f"{traffic}/v1/x?q=1", headers={"Host": "api.example.com"})
            assert (head.status_code, head.content) == (200, b"")
            assert head.headers["content-length"] == answer.headers["content-length"]
    management_app.state.server.close()
