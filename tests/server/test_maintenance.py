"""Scheduled maintenance events and their endpoints (spec "ScheduledMaintenanceEvent"; SUPPLEMENT §2, §4)."""

from __future__ import annotations

import re

import pytest
from spec_helpers import (
    MS_TIME_RE,
    UUID_RE,
    Api,
    assert_deleted,
    assert_error,
    assert_invalid,
    make_endpoint,
    make_service,
)

EVENT = {
    "name": "Night work",
    "startDateTime": "2030-01-01T02:00:00Z",
    "endDateTime": "2030-01-01T04:00:00Z",
}

# the shared `api` fixture (conftest.py) declares the test domains first
WITH_DOMAINS = True


def same_instant(value: str, expected: str) -> bool:
    """Both datetime renderings of the specification name the same instant."""
    from datetime import datetime

    def parse(text: str) -> datetime:
        return datetime.fromisoformat(text.replace("Z", "+00:00").replace("+0000", "+00:00"))

    return parse(value) == parse(expected)


def test_event_crud(api: Api) -> None:
    created = api.create("/scheduledMaintenanceEvents", EVENT)
    evid = created["id"]
    assert re.match(UUID_RE, evid), evid
    assert created["name"] == "Night work"
    assert same_instant(created["startDateTime"], EVENT["startDateTime"])
    assert same_instant(created["endDateTime"], EVENT["endDateTime"])
    assert created["endpoints"] == []  # Imp
    path = f"/scheduledMaintenanceEvents/{evid}"
    assert api.fetch(path)["name"] == "Night work"
    assert api.fetch(path, {"indent": "true"})["id"] == evid
    updated = api.update(path, {"endDateTime": "2030-01-01T06:00:00Z"})
    assert same_instant(updated["endDateTime"], "2030-01-01T06:00:00Z")
    assert updated["name"] == "Night work"
    assert [e["id"] for e in api.list("/scheduledMaintenanceEvents")] == [evid]
    assert_deleted(api.delete(path))
    assert_error(api.get(path), 404)
    assert_error(api.delete(path), 404)


def test_event_timestamps(api: Api) -> None:
    created = api.create("/scheduledMaintenanceEvents", EVENT)
    got = api.fetch(f"/scheduledMaintenanceEvents/{created['id']}", {"fields": "id,created,updated"})
    assert re.match(MS_TIME_RE, got["created"]), got
    assert re.match(MS_TIME_RE, got["updated"]), got


def test_other_datetime_rendering_accepted(api: Api) -> None:
    body = {**EVENT, "startDateTime": "2030-01-01T02:00:00.000+0000"}
    created = api.create("/scheduledMaintenanceEvents", body)
    assert same_instant(created["startDateTime"], EVENT["startDateTime"])


@pytest.mark.parametrize("field", ["name", "startDateTime", "endDateTime"])
def test_required_event_fields(api: Api, field: str) -> None:
    body = {k: v for k, v in EVENT.items() if k != field}
    assert_invalid(api.post("/scheduledMaintenanceEvents", body), field)


@pytest.mark.parametrize("value", ["tomorrow", "2030-13-45T99:00:00Z", 12])
def test_datetime_validation(api: Api, value: object) -> None:
    resp = api.post("/scheduledMaintenanceEvents", {**EVENT, "startDateTime": value})
    assert_invalid(resp, "startDateTime")


def test_start_must_be_before_end(api: Api) -> None:
    body = {**EVENT, "startDateTime": EVENT["endDateTime"], "endDateTime": EVENT["startDateTime"]}
    assert_invalid(api.post("/scheduledMaintenanceEvents", body), "DateTime")
    evid = api.create("/scheduledMaintenanceEvents", EVENT)["id"]
    resp = api.put(f"/scheduledMaintenanceEvents/{evid}", {"endDateTime": "2029-01-01T00:00:00Z"})
    assert_invalid(resp, "DateTime")


def test_event_id_is_ignored_on_update(api: Api) -> None:
    evid = api.create("/scheduledMaintenanceEvents", EVENT)["id"]
    other = "00000000-0000-0000-0000-000000000000"
    got = api.update(f"/scheduledMaintenanceEvents/{evid}", {"id": other, "name": "Renamed"})
    assert got["id"] == evid
    assert api.fetch(f"/scheduledMaintenanceEvents/{evid}")["name"] == "Renamed"


def test_event_endpoints(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    eid2 = make_endpoint(api, sid, name="Two", path="/two")["id"]
    evid = api.create("/scheduledMaintenanceEvents", EVENT)["id"]
    base = f"/scheduledMaintenanceEvents/{evid}/endpoints"
    assert api.list(base) == []
    added = api.create(base, {"id": eid})
    assert added["id"] == eid
    assert added["name"] == "Forecast"
    api.create(base, {"id": eid2})
    assert sorted(e["id"] for e in api.list(base)) == sorted([eid, eid2])
    assert api.fetch(f"{base}/{eid}")["name"] == "Forecast"
    event = api.fetch(f"/scheduledMaintenanceEvents/{evid}")
    assert sorted(e["id"] for e in event["endpoints"]) == sorted([eid, eid2])
    endpoint = api.fetch(f"/services/{sid}/endpoints/{eid}", {"fields": "scheduledMaintenanceEvent"})
    assert endpoint["scheduledMaintenanceEvent"]["id"] == evid
    assert_deleted(api.delete(f"{base}/{eid}"))
    assert [e["id"] for e in api.list(base)] == [eid2]
    assert_error(api.get(f"{base}/{eid}"), 404)


def test_event_endpoint_must_exist(api: Api) -> None:
    evid = api.create("/scheduledMaintenanceEvents", EVENT)["id"]
    resp = api.post(
        f"/scheduledMaintenanceEvents/{evid}/endpoints", {"id": "aaaaaaaaaaaaaaaaaaaaaaaa"}
    )
    assert resp.status_code in (400, 404), resp.text
    assert api.list(f"/scheduledMaintenanceEvents/{evid}/endpoints") == []


def test_event_created_with_endpoints(api: Api) -> None:
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    created = api.create("/scheduledMaintenanceEvents", {**EVENT, "endpoints": [{"id": eid}]})
    assert [e["id"] for e in created["endpoints"]] == [eid]
    assert [e["id"] for e in api.list(f"/scheduledMaintenanceEvents/{created['id']}/endpoints")] == [
        eid
    ]


def test_event_endpoint_objects_use_the_endpoint_field_set(api: Api) -> None:
    """Spec: the endpoint objects of an event have the Endpoint field set, plus
    `stringsToTrimFromApiKey` (Opt/Opt/Exp) that exists only there."""
    sid = make_service(api)["id"]
    eid = make_endpoint(api, sid)["id"]
    evid = api.create("/scheduledMaintenanceEvents", EVENT)["id"]
    base = f"/scheduledMaintenanceEvents/{evid}/endpoints"
    added = api.create(base, {"id": eid, "stringsToTrimFromApiKey": "abc"})
    assert "stringsToTrimFromApiKey" not in added  # Exp
    fields = {"fields": "id,name,requestPathAlias,trafficManagerDomain,stringsToTrimFromApiKey"}
    got = api.fetch(f"{base}/{eid}", fields)
    assert got["name"] == "Forecast"
    assert got["requestPathAlias"] == "/forecast"
    assert got["trafficManagerDomain"] == "api.example.com"
    assert got["stringsToTrimFromApiKey"] == "abc"
    api.update(f"{base}/{eid}", {"stringsToTrimFromApiKey": "xyz"})
    assert api.fetch(f"{base}/{eid}", fields)["stringsToTrimFromApiKey"] == "xyz"
    (listed,) = api.list(base, fields)
    assert listed["stringsToTrimFromApiKey"] == "xyz"
