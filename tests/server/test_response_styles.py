"""Response styles: one-element arrays by default, bare objects with `--object-responses`
(spec "Common rules" 5; SUPPLEMENT §1, §9)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from spec_helpers import (
    TOKEN_A,
    Api,
    assert_deleted,
    describe,
    endpoint_body,
    member_body,
    serve,
    with_domains,
)

Check = Callable[[httpx.Response], dict[str, Any]]


def arrayed(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    assert isinstance(body, list) and len(body) == 1, describe(resp)
    assert isinstance(body[0], dict)
    return body[0]


def bare(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, describe(resp)
    body = resp.json()
    assert isinstance(body, dict), describe(resp)
    return body


def exercise(api: Api, check: Check) -> None:
    """Create, update and fetch one object of most kinds; every answer passes `check`."""
    with_domains(api)
    svc = check(api.post("/services", {"name": "Weather"}))
    sid = svc["id"]
    check(api.get(f"/services/{sid}"))
    check(api.put(f"/services/{sid}", {"description": "x"}))
    ep = check(api.post(f"/services/{sid}/endpoints", endpoint_body()))
    eid = ep["id"]
    check(api.get(f"/services/{sid}/endpoints/{eid}"))
    check(api.put(f"/services/{sid}/endpoints/{eid}", {"inboundSslRequired": True}))
    check(api.get(f"/services/{sid}/endpoints/{eid}/cors"))
    check(api.put(f"/services/{sid}/endpoints/{eid}/cors", {"maxAge": 3}))
    check(api.post(f"/services/{sid}/endpoints/{eid}/cache", {"cacheTtlOverride": 3}))
    check(api.get(f"/services/{sid}/cache"))
    es = check(api.post(f"/services/{sid}/errorSets", {"name": "Extra"}))
    check(api.get(f"/services/{sid}/errorSets/{es['id']}"))
    check(api.get(f"/services/{sid}/errorSets/{es['id']}/errorMessages/ERR_502_BAD_GATEWAY"))
    pkg = check(api.post("/packages", {"name": "P"}))
    check(api.put(f"/packages/{pkg['id']}", {"description": "d"}))
    plan = check(api.post(f"/packages/{pkg['id']}/plans", {"name": "Gold"}))
    check(api.get(f"/packages/{pkg['id']}/plans/{plan['id']}"))
    role = check(api.post("/roles", {"name": "R"}))
    check(api.get(f"/roles/{role['id']}"))
    dom = api.list("/domains")[0]
    check(api.get(f"/domains/{dom['id']}"))
    event = check(
        api.post(
            "/scheduledMaintenanceEvents",
            {
                "name": "E",
                "startDateTime": "2030-01-01T00:00:00Z",
                "endDateTime": "2030-01-02T00:00:00Z",
            },
        )
    )
    check(api.get(f"/scheduledMaintenanceEvents/{event['id']}"))
    member = check(api.post("/members", member_body("dev1")))
    check(api.get(f"/members/{member['id']}"))
    app = check(
        api.post(f"/members/{member['id']}/applications", {"name": "A", "username": "dev1"})
    )
    check(api.get(f"/applications/{app['id']}"))
    key = check(
        api.post(
            f"/applications/{app['id']}/packageKeys",
            {"package": {"id": pkg["id"]}, "plan": {"id": plan["id"]}},
        )
    )
    check(api.get(f"/packageKeys/{key['id']}"))
    check(api.put(f"/packageKeys/{key['id']}", {"status": "active"}))
    # lists stay bare arrays in both styles
    for path in ("/services", f"/services/{sid}/endpoints", "/packages", "/roles", "/domains"):
        assert isinstance(api.list(path), list)
    assert_deleted(api.delete(f"/roles/{role['id']}"))


def test_one_element_arrays_by_default(tmp_path: Path) -> None:
    with serve(tmp_path) as http:
        exercise(Api(http, TOKEN_A), arrayed)


def test_bare_objects_with_object_responses(tmp_path: Path) -> None:
    with serve(tmp_path, object_responses=True) as http:
        exercise(Api(http, TOKEN_A), bare)


@pytest.mark.parametrize("object_responses", [False, True])
def test_application_update_is_bare_in_both_styles(
    tmp_path: Path, object_responses: bool
) -> None:
    with serve(tmp_path, object_responses=object_responses) as http:
        api = Api(http, TOKEN_A)
        member = api.create("/members", member_body("dev1"))
        app = api.create(
            f"/members/{member['id']}/applications", {"name": "A", "username": "dev1"}
        )
        assert bare(api.put(f"/applications/{app['id']}", {"notes": "n"}))["notes"] == "n"


@pytest.mark.parametrize("object_responses", [False, True])
def test_errors_look_the_same_in_both_styles(tmp_path: Path, object_responses: bool) -> None:
    with serve(tmp_path, object_responses=object_responses) as http:
        api = Api(http, TOKEN_A)
        resp = api.post("/services", {})
        assert resp.status_code == 400
        assert isinstance(resp.json(), list)
        resp = api.get("/services/aaaaaaaaaaaaaaaaaaaaaaaa")
        assert resp.status_code == 404
        assert resp.json()["errorCode"] == 404
