"""Server-side controls of the real reference server (``create_app``): limits, counters, faults.

Limits and counters run in-process; dropped connections and lost responses run under uvicorn,
where a client really sees the connection go away.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import serve_in_thread
from spec_helpers import (
    OPERATOR_TOKEN,
    TOKEN_A,
    TOKEN_B,
    Api,
    assert_error,
    describe,
    make_config,
    serve,
)

from apimctl.server import create_app
from apimctl.server.controls import ControlsMiddleware, FaultInjector

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


def calls(http: httpx.Client) -> dict[str, Any]:
    resp = http.get("/operator/calls", headers=OPERATOR)
    assert resp.status_code == 200, describe(resp)
    body: dict[str, Any] = resp.json()
    return body


def counts(http: httpx.Client) -> dict[tuple[str, str], int]:
    return {(c["method"], c["path"]): c["count"] for c in calls(http)["calls"]}


def test_qps_limit(tmp_path: Path) -> None:
    with serve(tmp_path, qps=1) as http:
        a, b = Api(http, TOKEN_A), Api(http, TOKEN_B)
        assert a.get("/services").status_code == 200
        throttled = a.get("/services")
        assert_error(throttled, 403)
        assert throttled.headers["X-Svc-Error-Code"] == "ERR_403_DEVELOPER_OVER_QPS"
        assert int(throttled.headers["Retry-After"]) >= 1
        assert b.get("/services").status_code == 200  # limits are per token
        assert http.get("/operator/calls", headers=OPERATOR).status_code == 200  # operator not limited


def test_daily_quota(tmp_path: Path) -> None:
    with serve(tmp_path, daily_quota=2) as http:
        a = Api(http, TOKEN_A)
        assert a.post("/services", {"name": "One"}).status_code == 200
        assert a.get("/services").status_code == 200
        refused = a.post("/services", {"name": "Two"})
        assert_error(refused, 403)
        assert refused.headers["X-Svc-Error-Code"] == "ERR_403_DEVELOPER_OVER_RATE"
        assert "Retry-After" not in refused.headers
        assert Api(http, TOKEN_B).get("/services").status_code == 200
        statuses = {(c["method"], c["path"]): c["statuses"] for c in calls(http)["calls"]}
        assert statuses[("POST", "/v3/rest/services")] == {"200": 1, "403": 1}
    with serve(tmp_path) as http:  # same database, no quota: the refused write never happened
        assert [s["name"] for s in Api(http, TOKEN_A).list("/services")] == ["One"]


def test_call_counter_per_route_template(tmp_path: Path) -> None:
    with serve(tmp_path) as http:
        api = Api(http, TOKEN_A)
        sid = api.create("/services", {"name": "Weather"})["id"]
        api.fetch(f"/services/{sid}")
        api.fetch(f"/services/{sid}")
        api.list("/services")
        api.get("/no/such/thing")
        table = counts(http)
        assert table[("POST", "/v3/rest/services")] == 1
        assert table[("GET", "/v3/rest/services")] == 1
        assert table[("GET", "/v3/rest/services/{serviceId}")] == 2
        assert table[("GET", "/v3/rest/no/such/thing")] == 1
        assert calls(http)["total"] == 5
        statuses = {(c["method"], c["path"]): c["statuses"] for c in calls(http)["calls"]}
        assert statuses[("GET", "/v3/rest/no/such/thing")] == {"404": 1}

        assert http.delete("/operator/calls", headers=OPERATOR).status_code == 200
        assert calls(http)["total"] == 0
        for headers in ({}, {"Authorization": f"Bearer {TOKEN_A}"}):
            assert_error(http.get("/operator/calls", headers=headers), 401)


def test_error_faults_are_seeded(tmp_path: Path) -> None:
    def statuses(db: str) -> list[int]:
        (tmp_path / db).mkdir()
        with serve(tmp_path / db, fault_rate=0.5, fault_seed=11) as http:
            controls: ControlsMiddleware = http.app.state.controls  # type: ignore[attr-defined]
            assert controls.faults.rate == 0.5
            controls.faults = FaultInjector(0.5, 11, ["503", "500"])  # no drops in-process
            return [Api(http, TOKEN_A).get("/services").status_code for _ in range(20)]

    first = statuses("a")
    assert first == statuses("b")
    assert set(first) == {200, 500, 503}


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[httpx.Client, ControlsMiddleware]]:
    """The reference server under uvicorn, with its controls at hand."""
    app = create_app(make_config(tmp_path))
    controls: ControlsMiddleware = app.state.controls
    with serve_in_thread(app) as base, httpx.Client(base_url=base, timeout=5,
                                                      headers={"Authorization": f"Bearer {TOKEN_A}"}) as client:
        yield client, controls


def names(client: httpx.Client) -> list[str]:
    resp = client.get("/v3/rest/services")
    assert resp.status_code == 200, describe(resp)
    return [s["name"] for s in resp.json()]


def test_dropped_connection(live: tuple[httpx.Client, ControlsMiddleware]) -> None:
    client, controls = live
    controls.faults = FaultInjector(1.0, 0, ["drop"])
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        client.post("/v3/rest/services", json={"name": "Weather"})
    controls.faults = FaultInjector(0.0, 0)
    assert names(client) == []  # the call never reached the application


def test_write_committed_but_response_lost(live: tuple[httpx.Client, ControlsMiddleware]) -> None:
    client, controls = live
    controls.faults = FaultInjector(1.0, 0, ["lost"])
    with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
        client.post("/v3/rest/services", json={"name": "Weather"})
    controls.faults = FaultInjector(0.0, 0)
    assert names(client) == ["Weather"]  # committed all the same
    assert controls.counter.snapshot()["faults"] == {"lost": 1}


def test_response_delayed_past_client_timeout(live: tuple[httpx.Client, ControlsMiddleware]) -> None:
    client, controls = live
    controls.faults = FaultInjector(1.0, 0, ["delay"])
    controls.fault_delay = 1.0
    with pytest.raises(httpx.ReadTimeout):
        client.post("/v3/rest/services", json={"name": "Weather"}, timeout=0.2)
    controls.faults = FaultInjector(0.0, 0)
    deadline = time.monotonic() + 5
    while names(client) != ["Weather"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert names(client) == ["Weather"]
