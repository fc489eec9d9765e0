"""Steps 8-9 of SUPPLEMENT §11 and the error answers, through the traffic listener, in both
dialects: target path and query, excluded, forwarded and returned headers (the dialect's
names), redirects with cookies, gzip passthrough, 502 on a dead and 504 on a slow back end,
JSONP error answers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from apimctl.server.traffic.forward import backend_request, header_name
from apimctl.server.traffic.key import KeyFound
from apimctl.server.traffic.model import Call
from apimctl.server.traffic.route import Route

from .support import Area, echo


def _prefix(area: Area) -> str:
    return "x-svc" if area.dialect == "spec" else "x-mashery"


def test_forwarded_call_and_returned_headers(area: Area) -> None:
    response = area.call("GET", f"/v2/forecast/daily?api_key={area.keys['free']}&q=1",
                         headers={"X-Secret": "s3", "X-Kept": "k"})
    seen = echo(response)
    assert seen["url"].startswith("http://backend.example.net/internal/forecast/daily?")
    assert seen["query"] == f"api_key={area.keys['free']}&q=1&src=tm"
    headers = seen["headers"]
    assert "x-secret" not in headers
    assert headers["x-kept"] == "k"
    prefix = _prefix(area)
    assert headers[f"{prefix}-host"] == "api.example.com"
    assert headers[f"{prefix}-service-id"] == area.service["id"]
    assert headers[f"{prefix}-message-id"] == response.headers[f"{prefix}-message-id"]
    assert response.headers[f"{prefix}-responder"]
    assert response.headers["x-backend"] == "stub"


def test_redirects_are_followed_up_to_the_endpoints_number(area: Area) -> None:
    followed = area.call("GET", f"/v2/hops/2?api_key={area.keys['free']}", follow_redirects=False)
    seen = echo(followed)
    assert seen["path"] == "/hop/0"
    assert seen["headers"]["cookie"] == "s=1"
    assert area.backend.last.extensions["timeout"]["read"] == 5.0  # the endpoint's timeouts on every hop
    too_many = area.call("GET", f"/v2/hops/3?api_key={area.keys['free']}", follow_redirects=False)
    assert too_many.status_code == 302
    assert too_many.headers["location"] == "/hop/0"


def test_gzip_passthrough(area: Area) -> None:
    response = area.call("GET", f"/v2/zip?api_key={area.keys['free']}", headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.text == "zipped"  # decoded by the client
    assert area.backend.last.headers["accept-encoding"] == "gzip"


def test_dead_back_end_is_502_and_slow_one_504(area: Area) -> None:
    dead = area.call("GET", f"/v2/dead?api_key={area.keys['free']}")
    assert (dead.status_code, dead.headers[area.error_header]) == (502, "ERR_502_BAD_GATEWAY")
    slow = area.call("GET", f"/v2/slow?api_key={area.keys['free']}")
    assert (slow.status_code, slow.headers[area.error_header]) == (504, "ERR_504_GATEWAY_TIMEOUT")
    timeout = area.backend.last.extensions["timeout"]
    assert (timeout["connect"], timeout["read"]) == (2.0, 5.0)  # the endpoint's defaults


def test_jsonp_error_answers(area: Area) -> None:
    wrapped = area.call("GET", "/v2/jsonp?callback=show")
    assert wrapped.status_code == 200
    assert wrapped.headers[area.error_header] == "ERR_403_NOT_AUTHORIZED"
    assert wrapped.text.startswith("show({") and wrapped.text.endswith("})")
    default = area.call("GET", "/v2/jsonp?callback=")
    assert default.text.startswith("cb(")
    plain = area.call("GET", "/v2/jsonp")
    assert plain.status_code == 403
    assert plain.json()["errorCode"] == "ERR_403_NOT_AUTHORIZED"


def test_header_names_of_the_enum_values() -> None:
    assert header_name("svc-message-id") == "X-Svc-Message-ID"
    assert header_name("mashery-host") == "X-Mashery-Host"
    assert header_name("mashery-responder") == "X-Mashery-Responder"


def test_a_system_domain_with_a_port_is_called_on_that_port() -> None:
    endpoint = {"id": "e", "requestPathAlias": "/api", "systemDomains": [{"address": "127.0.0.1:8123"}],
                "outboundTransportProtocol": "use-inbound", "outboundRequestTargetPath": "/v1"}
    call = Call("GET", "https", "api.example.com", "/api/x", [("a", "1")], [("Host", "api.example.com")], b"", 0.0)
    route = Route(None, {"id": "s"}, endpoint, "/api", "/x")  # type: ignore[arg-type]
    method, url, _, _ = backend_request(call, route, KeyFound("", None, None, None), "m", "X-Svc-Host")
    assert (method, httpx.URL(url).port, url) == ("GET", 8123, "https://127.0.0.1:8123/v1/x?a=1")


def test_a_failure_of_the_emulator_is_a_plain_500(area: Area, monkeypatch: pytest.MonkeyPatch) -> None:
    manager = area.traffic.app.manager  # type: ignore[attr-defined]

    def broken() -> list[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(manager.reader, "areas", broken)
    response = area.call("GET", "/v2/forecast")
    assert (response.status_code, response.text) == (500, "internal error of the traffic emulator")
    assert "boom" not in response.text
