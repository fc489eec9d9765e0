"""A peer client: the public Python client of the real API (``masheryapi`` 1.0.20.2,
``MasheryV3`` and ``Base``), unchanged, against ``apimctl serve --dialect mashery``
(SUPPLEMENT §10): token exchange, lists with ``fields`` and ``X-Total-Count``, create,
update and delete of a service and an endpoint, and a throttled reply's headers.

``masheryapi`` and its ``requests`` are test dependencies only (the ``test`` extra).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .apply_support import Server

pytest.importorskip("requests")
masheryV3 = pytest.importorskip("masheryapi.api.masheryV3")
base_module = pytest.importorskip("masheryapi.services.v3.base")

KEY, SECRET = "peer-key", "peer-secret"
USER, PASSWORD, AREA = "peer-user", "peer-password", "7f3c9a1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b"
CREDENTIALS = ("--dialect", "mashery", "--client", f"{KEY}:{SECRET}", "--user", f"{USER}:{PASSWORD}:{AREA}")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # Base writes mashery_v3.log into the working directory
    return tmp_path


def running(tmp: Path, *extra: str) -> Iterator[Server]:
    srv = Server(tmp, extra=(*CREDENTIALS, *extra)).start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def server(workdir: Path) -> Iterator[Server]:
    yield from running(workdir)


def host_of(srv: Server) -> str:
    return f"127.0.0.1:{srv.port}"


def token_of(api: Any) -> str:
    reply = api.authenticate(KEY, SECRET, USER, PASSWORD, AREA)
    assert reply["token_type"] == "bearer" and reply["scope"] == AREA
    token: str = reply["access_token"]
    return token


def test_token_exchange_and_crud_of_a_service_and_an_endpoint(server: Server) -> None:
    api = masheryV3.MasheryV3("http", host_of(server))
    base = base_module.Base("http", host_of(server), "apimctl-peer-test")
    token = token_of(api)
    with pytest.raises(ValueError, match="invalid_grant"):
        api.authenticate(KEY, SECRET, USER, "wrong", AREA)

    assert base.create(token, "/domains", "", {"domain": "example.com"}).status_code == 200

    created = base.create(token, "/services", "fields=id,name,version", {"name": "Weather", "version": "1"})
    assert created.status_code == 200, created.text
    service = created.json()
    assert isinstance(service, dict) and service["name"] == "Weather"  # a bare object
    sid = service["id"]
    base.create(token, "/services", "", {"name": "Traffic"})

    listed = base.get(token, "/services", "fields=id,name")
    assert listed.status_code == 200 and listed.headers["X-Total-Count"] == "2"
    assert sorted(s["name"] for s in listed.json()) == ["Traffic", "Weather"]
    assert all(set(s) == {"id", "name"} for s in listed.json())
    assert sorted(s["name"] for s in base.get_all(token, "/services", "fields=id,name")) == ["Traffic", "Weather"]

    updated = base.update(token, f"/services/{sid}", "fields=id,name,description",
                          {"description": "forecasts"})
    assert updated.status_code == 200 and updated.json()["description"] == "forecasts"

    endpoint_body = {
        "name": "Forecast", "requestPathAlias": "/forecast", "trafficManagerDomain": "api.example.com",
        "publicDomains": [{"address": "api.example.com"}], "systemDomains": [{"address": "backend.example.com"}],
        "forwardedHeaders": ["mashery-host"], "systemDomainCredentialKey": None,
    }
    ep = base.create(token, f"/services/{sid}/endpoints", "fields=id,name,returnedHeaders,forwardedHeaders",
                     endpoint_body)
    assert ep.status_code == 200, ep.text
    endpoint = ep.json()
    assert endpoint["returnedHeaders"] == ["mashery-responder"]
    assert endpoint["forwardedHeaders"] == ["mashery-host"]
    eps = base.get(token, f"/services/{sid}/endpoints", "fields=id,name")
    assert eps.headers["X-Total-Count"] == "1" and eps.json()[0]["name"] == "Forecast"
    renamed = base.update(token, f"/services/{sid}/endpoints/{endpoint['id']}", "", {"name": "Forecasts"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Forecasts"

    refused = base.create(token, f"/services/{sid}/endpoints", "", {**endpoint_body, "name": "Bad",
                                                                     "forwardedHeaders": ["svc-host"]})
    assert refused.status_code == 400
    error = refused.json()
    assert isinstance(error["errorCode"], str) and error["errors"][0]["property"].startswith("forwardedHeaders")

    assert api.delete(token, f"/services/{sid}/endpoints/{endpoint['id']}") == 200
    assert api.delete(token, f"/services/{sid}") == 200
    assert api.get(token, f"/services/{sid}", "").status_code == 404
    assert base.get(token, "/services", "fields=id").headers["X-Total-Count"] == "1"
    assert json.loads(api.get(token, "/services", "filter=name:Traffic,id:nope").text) == []


def test_throttled_replies_carry_the_mashery_headers(workdir: Path) -> None:
    for srv in running(workdir, "--qps", "1", "--daily-quota", "3"):
        api = masheryV3.MasheryV3("http", host_of(srv))
        token = token_of(api)
        replies = [api.get(token, "/services", "fields=id") for _ in range(2)]
        throttled = replies[1]
        assert replies[0].status_code == 200
        assert throttled.status_code == 403, throttled.text
        assert throttled.headers["X-Mashery-Error-Code"] == "ERR_403_DEVELOPER_OVER_QPS"
        assert throttled.headers["X-Error-Detail-Header"] == "Account Over Queries Per Second Limit"
        # the traffic manager's answer (SUPPLEMENT §10.10.6): text/XML, Retry-After: 1
        assert throttled.headers["Retry-After"] == "1"
        assert throttled.headers["Content-Type"].startswith("text/xml")
        assert throttled.text == "<h1>Developer Over Qps</h1>"
        for _ in range(20):  # a real client waits about a second and retries
            time.sleep(1.05)
            reply = api.get(token, "/services", "fields=id")
            if reply.headers.get("X-Mashery-Error-Code") == "ERR_403_DEVELOPER_OVER_RATE":
                break
        assert reply.status_code == 403
        assert reply.headers["X-Error-Detail-Header"] == "Account Over Rate Limit"
        assert "Retry-After" not in reply.headers
