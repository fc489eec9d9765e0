"""ControlsMiddleware around a tiny Starlette app: counters, limits, faults (in-process and uvicorn)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import serve_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from apimctl.server.config import ServerConfig
from apimctl.server.controls import ControlsMiddleware, FaultInjector, RateLimiter

OPERATOR = {"Authorization": "Bearer op-token"}
T1 = {"Authorization": "Bearer t1"}
T2 = {"Authorization": "Bearer t2"}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def tiny_app() -> tuple[Starlette, list[str]]:
    """A stand-in for the management API; ``commits`` records every write it carried out."""
    commits: list[str] = []

    async def thing(request: Request) -> JSONResponse:
        return JSONResponse([{"id": request.path_params["thing_id"]}])

    async def create(request: Request) -> JSONResponse:
        commits.append((await request.json())["name"])
        return JSONResponse([{"id": str(len(commits))}])

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    api = [Route("/things", create, methods=["POST"]), Route("/things/{thing_id}", thing)]
    app = Starlette(routes=[Mount("/v3/rest", routes=api), Route("/health", health)])
    return app, commits


def controls(tmp_path: Path, **settings: Any) -> tuple[ControlsMiddleware, list[str]]:
    kw = {k: settings.pop(k) for k in ("fault_kinds", "fault_delay", "limiter") if k in settings}
    config = ServerConfig(db_path=str(tmp_path / "x.db"), operator_token="op-token", **settings)
    app, commits = tiny_app()
    return ControlsMiddleware(app, config, **kw), commits


def run(middleware: ControlsMiddleware, *requests: tuple[str, str, dict[str, str], Any]) -> list[httpx.Response]:
    """Send requests in-process, in order."""

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=middleware)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return [await client.request(m, u, headers=h, json=b) for m, u, h, b in requests]

    return asyncio.run(go())


def eventually(read: Callable[[], Any], expected: Any, settle: float = 5.0) -> Any:
    """``read()`` once it equals ``expected`` or ``settle`` seconds have passed (the server may
    still be finishing its side of a dropped call)."""
    deadline = time.monotonic() + settle
    value = read()
    while value != expected and time.monotonic() < deadline:
        time.sleep(0.02)
        value = read()
    return value


def get(url: str, headers: dict[str, str] = T1) -> tuple[str, str, dict[str, str], Any]:
    return ("GET", url, headers, None)


# --- rate limiter (pure) -------------------------------------------------------------------


def test_qps_token_bucket() -> None:
    clock = Clock()
    limiter = RateLimiter(2, None, monotonic=clock, wall=clock)
    assert limiter.check("a") is None and limiter.check("a") is None
    refusal = limiter.check("a")
    assert refusal is not None and refusal.code == "ERR_403_DEVELOPER_OVER_QPS" and refusal.retry_after == 1
    assert limiter.check("b") is None  # per token
    clock.now += 0.5
    assert limiter.check("a") is None
    assert limiter.check("a") is not None
    clock.now += 10
    assert limiter.check("a") is None and limiter.check("a") is None and limiter.check("a") is not None


def test_fractional_qps_retry_after() -> None:
    clock = Clock()
    limiter = RateLimiter(0.2, None, monotonic=clock, wall=clock)
    assert limiter.check("a") is None
    refusal = limiter.check("a")
    assert refusal is not None and refusal.retry_after == 5
    clock.now += 5
    assert limiter.check("a") is None


def test_daily_quota_per_utc_day() -> None:
    clock = Clock(86400 * 20_000 + 3600)
    limiter = RateLimiter(None, 2, monotonic=clock, wall=clock)
    assert limiter.check("a") is None and limiter.check("a") is None
    refusal = limiter.check("a")
    assert refusal is not None and refusal.code == "ERR_403_DEVELOPER_OVER_RATE" and refusal.retry_after is None
    assert limiter.check("b") is None
    clock.now += 86400
    assert limiter.check("a") is None


def test_throttled_calls_do_not_use_quota() -> None:
    clock = Clock()
    limiter = RateLimiter(1, 2, monotonic=clock, wall=clock)
    assert limiter.check("a") is None
    assert [limiter.check("a").code for _ in range(5)] == ["ERR_403_DEVELOPER_OVER_QPS"] * 5  # type: ignore[union-attr]
    clock.now += 1
    assert limiter.check("a") is None
    clock.now += 1
    refusal = limiter.check("a")
    assert refusal is not None and refusal.code == "ERR_403_DEVELOPER_OVER_RATE"


# --- fault injector (pure) -----------------------------------------------------------------


def test_fault_injector_rate_and_seed() -> None:
    assert {FaultInjector(0.0, 1).draw() for _ in range(200)} == {None}
    always = FaultInjector(1.0, 1)
    assert {always.draw() for _ in range(200)} == {"503", "500", "drop", "delay", "lost"}
    first = [FaultInjector(0.3, 42).draw() for _ in range(1)]
    a, b = FaultInjector(0.3, 42), FaultInjector(0.3, 42)
    seq_a, seq_b = [a.draw() for _ in range(1000)], [b.draw() for _ in range(1000)]
    assert seq_a == seq_b and seq_a[:1] == first
    assert 200 < sum(x is not None for x in seq_a) < 400
    with pytest.raises(ValueError, match="fault kinds"):
        FaultInjector(0.5, 1, ["teapot"])


# --- counters and operator endpoint (in-process) -------------------------------------------


def test_calls_counted_per_route_template(tmp_path: Path) -> None:
    mw, _ = controls(tmp_path)
    responses = run(
        mw,
        get("/v3/rest/things/a"), get("/v3/rest/things/b"), ("POST", "/v3/rest/things", T1, {"name": "n"}),
        get("/v3/rest/nowhere"), get("/health"),
        get("/operator/calls", OPERATOR),
    )
    assert [r.status_code for r in responses] == [200, 200, 200, 404, 200, 200]
    body = responses[-1].json()
    assert body["total"] == 5
    assert body["faults"] == {}
    assert {(c["method"], c["path"]): (c["count"], c["statuses"]) for c in body["calls"]} == {
        ("GET", "/v3/rest/things/{thing_id}"): (2, {"200": 2}),
        ("POST", "/v3/rest/things"): (1, {"200": 1}),
        ("GET", "/v3/rest/nowhere"): (1, {"404": 1}),
        ("GET", "/health"): (1, {"200": 1}),
    }


def test_operator_calls_needs_operator_token_and_resets(tmp_path: Path) -> None:
    mw, _ = controls(tmp_path)
    no_token, wrong, api_token, reset, after, bad_method = run(
        mw, get("/v3/rest/things/a"),
        get("/operator/calls", {}), get("/operator/calls", {"Authorization": "Bearer nope"}),
        get("/operator/calls", T1), ("DELETE", "/operator/calls", OPERATOR, None),
        get("/operator/calls", OPERATOR), ("POST", "/operator/calls", OPERATOR, None),
    )[1:]
    for resp in (no_token, wrong, api_token):
        assert resp.status_code == 401 and resp.json()["errorCode"] == 401
    assert reset.status_code == 200 and reset.json()["total"] == 0
    assert after.json() == {"total": 0, "calls": [], "faults": {}}
    assert bad_method.status_code == 405


def test_operator_calls_disabled_without_operator_token(tmp_path: Path) -> None:
    app, _ = tiny_app()
    mw = ControlsMiddleware(app, ServerConfig(db_path=str(tmp_path / "x.db")))
    [resp] = run(mw, get("/operator/calls", {"Authorization": "Bearer "}))
    assert resp.status_code == 401


# --- limits through the middleware ---------------------------------------------------------


def test_qps_limit_response(tmp_path: Path) -> None:
    mw, _ = controls(tmp_path, qps=1)
    ok, throttled, other_token, outside = run(
        mw, get("/v3/rest/things/a"), get("/v3/rest/things/a"), get("/v3/rest/things/a", T2), get("/health")
    )
    assert ok.status_code == 200 and other_token.status_code == 200 and outside.status_code == 200
    assert [r.status_code for r in run(mw, get("/v3/rest/things/a", {}), get("/v3/rest/things/a", {}))] == [200, 200]
    assert throttled.status_code == 403
    assert throttled.headers["X-Svc-Error-Code"] == "ERR_403_DEVELOPER_OVER_QPS"
    assert int(throttled.headers["Retry-After"]) >= 1
    assert throttled.json()["errorCode"] == 403


def test_daily_quota_response(tmp_path: Path) -> None:
    mw, commits = controls(tmp_path, daily_quota=2)
    write = ("POST", "/v3/rest/things", T1, {"name": "n"})
    responses = run(mw, write, write, write, get("/v3/rest/things/a", T2))
    assert [r.status_code for r in responses] == [200, 200, 403, 200]
    assert responses[2].headers["X-Svc-Error-Code"] == "ERR_403_DEVELOPER_OVER_RATE"
    assert "Retry-After" not in responses[2].headers
    assert commits == ["n", "n"]  # the refused call never reached the application


def test_quota_headers(tmp_path: Path) -> None:
    """``--quota-headers``: each answer says what the token used of its daily quota, as the
    platform's traffic manager does (X-Packagekey-Quota-*, X-Plan-Quota-Reset)."""
    mw, _ = controls(tmp_path, daily_quota=5, quota_headers=True)
    first, second, other = run(mw, get("/v3/rest/things/a"), get("/v3/rest/things/b"), get("/v3/rest/things/c", T2))
    assert first.headers["X-Packagekey-Quota-Allotted"] == "5"
    assert [first.headers["X-Packagekey-Quota-Current"], second.headers["X-Packagekey-Quota-Current"],
            other.headers["X-Packagekey-Quota-Current"]] == ["1", "2", "1"]  # per token
    assert first.headers["X-Plan-Quota-Reset"].endswith("12:00:00 AM GMT")
    plain, = run(controls(tmp_path, daily_quota=5)[0], get("/v3/rest/things/a"))
    assert "X-Packagekey-Quota-Current" not in plain.headers  # not unless asked for


def test_faults_of_some_tokens_only(tmp_path: Path) -> None:
    mw, commits = controls(tmp_path, fault_rate=1.0, fault_seed=7, fault_kinds=["503"], fault_tokens=("t1",))
    write = ("POST", "/v3/rest/things", T1, {"name": "n"})
    faulted, spared = run(mw, write, ("POST", "/v3/rest/things", T2, {"name": "m"}))
    assert (faulted.status_code, spared.status_code) == (503, 200) and commits == ["m"]


# --- faults --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["503", "500"])
def test_error_faults(tmp_path: Path, kind: str) -> None:
    mw, commits = controls(tmp_path, fault_rate=1.0, fault_seed=7, fault_kinds=[kind])
    resp, counts = run(mw, ("POST", "/v3/rest/things", T1, {"name": "n"}), get("/operator/calls", OPERATOR))
    assert resp.status_code == int(kind) and resp.json()["errorCode"] == int(kind)
    assert "Traceback" not in resp.text
    assert commits == []
    assert counts.json()["faults"] == {kind: 1}


def test_faults_only_on_management_api(tmp_path: Path) -> None:
    mw, _ = controls(tmp_path, fault_rate=1.0, fault_seed=7, fault_kinds=["503"])
    assert [r.status_code for r in run(mw, get("/health"), get("/operator/calls", OPERATOR))] == [200, 200]


def test_seeded_faults_are_reproducible(tmp_path: Path) -> None:
    def statuses() -> list[int]:
        mw, _ = controls(tmp_path, fault_rate=0.5, fault_seed=99, fault_kinds=["503", "500"])
        return [r.status_code for r in run(mw, *[get(f"/v3/rest/things/{i}") for i in range(30)])]

    first = statuses()
    assert first == statuses()
    assert {200, 500, 503} == set(first)


def test_drop_in_process_raises_transport_error(tmp_path: Path) -> None:
    mw, commits = controls(tmp_path, fault_rate=1.0, fault_seed=1, fault_kinds=["drop"])
    with pytest.raises(httpx.RemoteProtocolError):
        run(mw, ("POST", "/v3/rest/things", T1, {"name": "n"}))
    assert commits == []


def test_lost_in_process_commits_then_fails(tmp_path: Path) -> None:
    mw, commits = controls(tmp_path, fault_rate=1.0, fault_seed=1, fault_kinds=["lost"])
    with pytest.raises(httpx.RemoteProtocolError):
        run(mw, ("POST", "/v3/rest/things", T1, {"name": "n"}))
    assert commits == ["n"]
    snapshot = mw.counter.snapshot()
    assert snapshot["faults"] == {"lost": 1}
    assert snapshot["calls"][0]["statuses"] == {"dropped": 1}


# --- faults under a real uvicorn server ----------------------------------------------------


@pytest.fixture
def uvicorn_controls(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, ControlsMiddleware, list[str]]]:
    mw, commits = controls(tmp_path, fault_rate=1.0, fault_seed=3, **request.param)
    with serve_in_thread(mw) as base:
        yield base, mw, commits

def raw_answer(base: str) -> bytes:
    """What the server at ``base`` sends back to one call written on a bare socket (``b""``:
    the connection closed without a byte)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"GET /v3/rest/things/a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t1\r\n\r\n")
        try:
            return sock.recv(1024)
        except ConnectionResetError:
            return b""


@pytest.mark.parametrize("uvicorn_controls", [{"fault_kinds": ["drop"]}], indirect=True)
def test_drop_under_uvicorn(uvicorn_controls: tuple[str, ControlsMiddleware, list[str]]) -> None:
    base, mw, commits = uvicorn_controls
    with httpx.Client(base_url=base, timeout=5) as client:
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            client.post("/v3/rest/things", json={"name": "n"}, headers=T1)
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            client.get("/v3/rest/things/a", headers=T1)
        assert client.get("/health").status_code == 200  # the server lives on
    assert raw_answer(base) == b""  # not even a status line
    assert commits == []
    assert eventually(lambda: mw.counter.snapshot()["faults"], {"drop": 3}) == {"drop": 3}


@pytest.mark.parametrize("uvicorn_controls", [{"fault_kinds": ["lost"]}], indirect=True)
def test_lost_response_under_uvicorn(uvicorn_controls: tuple[str, ControlsMiddleware, list[str]]) -> None:
    base, _, commits = uvicorn_controls
    with httpx.Client(base_url=base, timeout=5) as client, pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        client.post("/v3/rest/things", json={"name": "committed"}, headers=T1)
    assert commits == ["committed"]


@pytest.mark.parametrize("uvicorn_controls", [{"fault_kinds": ["delay"], "fault_delay": 0.6}], indirect=True)
def test_delay_past_client_timeout_under_uvicorn(uvicorn_controls: tuple[str, ControlsMiddleware, list[str]]) -> None:
    base, mw, commits = uvicorn_controls
    with httpx.Client(base_url=base, timeout=0.1) as client, pytest.raises(httpx.ReadTimeout):
        client.post("/v3/rest/things", json={"name": "slow"}, headers=T1)
    assert eventually(lambda: commits, ["slow"]) == ["slow"]
    with httpx.Client(base_url=base, timeout=5) as client:
        resp = client.get("/v3/rest/things/x", headers=T1)  # a patient client gets the answer
    assert resp.status_code == 200 and resp.json() == [{"id": "x"}]
    assert eventually(lambda: mw.counter.snapshot()["faults"], {"delay": 2}) == {"delay": 2}


def test_drop_under_uvicorn_behind_the_dialects_answer_headers(tmp_path: Path) -> None:
    """The mashery dialect's headers wrap ``send``; a dropped call still sends nothing."""
    from apimctl.server.answer_headers import AnswerHeaders
    from apimctl.server.dialects import MASHERY

    mw, _ = controls(tmp_path, fault_rate=1.0, fault_seed=3, fault_kinds=["drop"])
    with serve_in_thread(AnswerHeaders(mw, MASHERY)) as base:
        assert raw_answer(base) == b""  # not even a status line
        assert eventually(lambda: mw.counter.snapshot()["faults"], {"drop": 1}) == {"drop": 1}
