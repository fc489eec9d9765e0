"""Properties of the call to the back end: which redirects are followed (only to the
endpoint's system domains, without credentials on another origin), and that the back end
reads only the emulator's forwarded headers, whatever the caller sends."""

from __future__ import annotations

import asyncio

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from apimctl.server.traffic.forward import _exchange, _follows, backend_request
from apimctl.server.traffic.key import KeyFound
from apimctl.server.traffic.model import Call
from apimctl.server.traffic.route import Route

HOSTS = st.sampled_from(["backend.example.net", "other.example.net", "127.0.0.1", "evil.example.com"])
PORTS = st.sampled_from([None, 80, 443, 8080, 9000])
SCHEMES = st.sampled_from(["http", "https", "ftp", "file"])


def _address(host: str, port: int | None) -> str:
    return f"{host}:{port}" if port else host


def _url(scheme: str, host: str, port: int | None) -> httpx.URL:
    return httpx.URL(f"{scheme}://{host}{f':{port}' if port else ''}/next")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(HOSTS, PORTS), min_size=1, max_size=3), SCHEMES, HOSTS, PORTS)
def test_a_redirect_is_followed_only_to_a_system_domain(domains: list[tuple[str, int | None]], scheme: str,
                                                        host: str, port: int | None) -> None:
    endpoint = {"systemDomains": [{"address": _address(h, p)} for h, p in domains]}
    default = 443 if scheme == "https" else 80
    declared = {(h, p or default) for h, p in domains}
    expected = scheme in ("http", "https") and (host, port or default) in declared
    assert _follows(_url(scheme, host, port), endpoint) is expected


NAMES = st.sampled_from(["X-Svc-Host", "X-Svc-Message-ID", "X-Svc-Service-ID",
                         "X-Mashery-Host", "X-Mashery-Message-ID", "X-Mashery-Service-ID"])


def _any_case(name: str) -> st.SearchStrategy[str]:
    return st.tuples(*[st.sampled_from([c.lower(), c.upper()]) for c in name]).map("".join)


@settings(max_examples=50, deadline=None)
@given(st.lists(NAMES.flatmap(_any_case), max_size=6), st.sampled_from(["svc", "mashery"]), st.booleans())
def test_the_back_end_reads_only_the_emulators_forwarded_headers(forged: list[str], prefix: str,
                                                                passthrough: bool) -> None:
    endpoint = {"id": "e", "requestPathAlias": "/api", "systemDomains": [{"address": "backend.example.net"}],
                "outboundTransportProtocol": "http", "hostPassthroughIncludedInBackendCallHeader": passthrough,
                "forwardedHeaders": [f"{prefix}-host", f"{prefix}-message-id", f"{prefix}-service-id"]}
    call = Call("GET", "http", "api.example.com", "/api/x", [],
                [("Host", "api.example.com"), *[(name, "forged") for name in forged]], b"", 0.0)
    route = Route(None, {"id": "s"}, endpoint, "/api", "/x")  # type: ignore[arg-type]
    _, _, headers, _ = backend_request(call, route, KeyFound("", None, None, None), "m-1", f"X-{prefix.title()}-Host")
    named = [(n.lower(), v) for n, v in headers if n.lower().startswith(("x-svc-", "x-mashery-"))]
    assert "forged" not in [v for _, v in named]
    host = f"x-{prefix}-host"
    assert sorted(n for n, _ in named) == [host, f"x-{prefix}-message-id", f"x-{prefix}-service-id"]
    assert dict(named) == {host: "api.example.com", f"x-{prefix}-message-id": "m-1", f"x-{prefix}-service-id": "s"}


def test_a_redirect_to_another_system_domain_keeps_the_body_and_drops_the_credentials() -> None:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.host == "a.example.net":
            return httpx.Response(307, headers={"Location": "http://b.example.net:8080/landed"})
        return httpx.Response(200, content=b"landed")

    endpoint = {"systemDomains": [{"address": "a.example.net"}, {"address": "b.example.net:8080"}],
                "numberOfHttpRedirectsToFollow": 1}
    response, content, hops, unfollowed = asyncio.run(_exchange(
        httpx.MockTransport(handle), "POST", "http://a.example.net/start", [("Authorization", "Basic dTpw")],
        b"payload", endpoint, "a.example.net", 1000))
    assert (response.status_code, content, hops, unfollowed) == (200, b"landed", 1, "")
    assert seen[0].headers["authorization"] == "Basic dTpw"
    assert "authorization" not in seen[1].headers  # another origin
    assert (seen[1].method, seen[1].content) == ("POST", b"payload")  # 307: the same call, to a system domain
