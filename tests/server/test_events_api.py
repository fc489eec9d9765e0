"""Event triggers end to end: writes through the management API call a real receiver (SUPPLEMENT §8).

For each reply of the receiver the tests check what was stored, what the API answered, and
the exact calls received (method, path, query, headers, body in both encodings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from receiver import PROCEED, Received, Receiver, Reply, proceed_with_changes, stop
from spec_helpers import (
    OPERATOR_TOKEN,
    TOKEN_A,
    TOKEN_B,
    Api,
    assert_deleted,
    assert_duplicate,
    describe,
    member_body,
    serve,
    validation_items,
)

AGENT = "Svc Event Trigger 1.0"
ALL = ["pre-create", "post-create", "pre-update", "post-update", "pre-delete", "post-delete"]
TXN_RE = r"^[0-9a-f]{32}$"
MEMBER_FIELDS = {
    "region", "external_id", "phone", "address1", "address2", "area_status", "registration_ipaddr",
    "blog", "im", "country_code", "uri", "object_type", "first_name", "display_name", "username",
    "created", "updated", "email", "postal_code", "company", "last_name", "locality", "imsvc",
}
APPLICATION_FIELDS = {
    "member", "preferred_protocol", "tags", "external_id", "status", "ads_system", "type", "uri",
    "object_type", "username", "preferred_output", "how_did_you_hear", "created", "updated",
    "description", "usage_model", "name", "ads", "notes", "commercial",
}  # plus "id" once the application exists
KEY_FIELDS = {
    "member", "application", "service", "limits", "oauth_rate_limit_ceiling",
    "oauth_rate_limit_exempt", "oauth_qps_limit_ceiling", "oauth_qps_limit_exempt",
    "oauth_user_limits", "qps_limit_ceiling", "qps_limit_exempt", "rate_limit_ceiling",
    "rate_limit_exempt", "status", "group_id", "apikey", "secret", "service_key", "object_type",
    "username", "protected_methods", "required_referer", "created", "updated",
}
AGENT_HEADERS = {"member": "user-agent", "application": "application-agent", "key": "key-agent"}


def events_config(url: str, encoding: str = "json", timeout: float = 2.0) -> dict[str, Any]:
    return {"areas": {"area-a": {
        "url": url, "encoding": encoding, "timeout": timeout,
        "events": {"member": ALL, "application": ALL, "key": ALL},
    }}}


@pytest.fixture
def http(tmp_path: Path, receiver: Receiver) -> Iterator[httpx.Client]:
    with serve(tmp_path, events_config=events_config(receiver.url)) as client:
        yield client


def check_call(call: Received, method: str, obj: str, event: str, obj_id: str | None = None,
               content_type: str = "application/json") -> None:
    """Method, path, query and headers of one callback, as the specification lists them."""
    assert call.method == method, call
    path = f"/v1/{obj}" if obj_id is None else f"/v1/{obj}/{obj_id}"
    assert call.path == path, call
    assert set(call.query) == {"event", "txn"} and call.event == event, call
    assert re.match(TXN_RE, call.txn), call
    assert call.headers["accept"] == "application/json"
    assert call.headers["content-type"] == content_type
    assert call.headers[AGENT_HEADERS[obj]] == AGENT
    for other in ("application-agent", "key-agent"):
        if other != AGENT_HEADERS[obj]:
            assert other not in call.headers, call
    if method == "DELETE":
        assert call.body == b"", call


def event_log(http: httpx.Client, **params: str) -> list[dict[str, Any]]:
    resp = http.get("/operator/events", params=params, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    assert resp.status_code == 200, describe(resp)
    entries: list[dict[str, Any]] = resp.json()
    return entries


def member_path_id(member: dict[str, Any]) -> set[str]:
    """Member callbacks may name the member by id or by username (spec "Events")."""
    return {member["id"], member["username"]}


# --- members -------------------------------------------------------------------------------


def test_member_create_proceed(api: Api, receiver: Receiver) -> None:
    created = api.create("/members", member_body("dev1", company="Example Ltd"))
    pre, post = receiver.wait_for(2)
    check_call(pre, "POST", "member", "pre-create")
    assert post.path.rsplit("/", 1)[1] in member_path_id(created)
    check_call(post, "PUT", "member", "post-create", post.path.rsplit("/", 1)[1])
    assert pre.txn == post.txn
    before, after = pre.json(), post.json()
    assert set(before) == set(after) == MEMBER_FIELDS
    assert before["username"] == "dev1" and before["company"] == "Example Ltd"
    assert before["object_type"] == "member" and before["display_name"] == "Dev1"
    assert after["created"] == created["created"] and after["email"] == "dev1@example.org"
    assert "S3cret-pass!" not in pre.body.decode() + post.body.decode()
    assert [m["username"] for m in api.list("/members")] == ["dev1"]


def test_member_proceed_with_changes(api: Api, receiver: Receiver) -> None:
    receiver.answer("pre-create", proceed_with_changes({"first_name": "Enriched"}, {"external_id": "crm-42"}))
    created = api.create("/members", member_body("dev1"))
    assert created["firstName"] == "Enriched" and created["externalId"] == "crm-42"
    stored = api.fetch(f"/members/{created['id']}")
    assert stored["firstName"] == "Enriched" and stored["externalId"] == "crm-42"
    _, post = receiver.wait_for(2)
    assert post.json()["first_name"] == "Enriched"


def test_member_stop_with_field_data(api: Api, receiver: Receiver, http: httpx.Client) -> None:
    receiver.answer("pre-create", stop("Invalid member", {"field": "external_id", "message": "not in the CRM"},
                                       {"field": "email", "message": "domain blocked"}))
    items = validation_items(api.post("/members", member_body("dev1")))
    assert items == [
        {"property": "externalId", "message": "not in the CRM"},
        {"property": "email", "message": "domain blocked"},
    ]
    assert api.list("/members") == []
    assert [c.event for c in receiver.wait_for(1)] == ["pre-create"]
    receiver.answer("pre-create", PROCEED)  # a refused write left nothing behind: the name is free
    api.create("/members", member_body("dev1"))
    [entry] = [e for e in event_log(http) if e["outcome"] == "stop"]
    assert entry["status"] == 400 and entry["event"] == "pre-create"


@pytest.mark.parametrize(
    "reply",
    [Reply(status=500, body={"error": "boom"}), Reply(raw=b"<html>proxy error"), Reply(raw=b'{"type": "proceed"'),
     Reply(body={"type": "proceed", "x": 1}, status=202)],
    ids=["500", "html", "truncated-json", "202"],
)
def test_member_create_refused_on_failure(api: Api, receiver: Receiver, reply: Reply) -> None:
    receiver.answer("pre-create", reply)
    [item] = validation_items(api.post("/members", member_body("dev1")))
    assert "event trigger" in item["message"] and "failed" in item["message"]
    assert api.list("/members") == []
    assert [c.event for c in receiver.wait_for(1)] == ["pre-create"]


def test_member_create_refused_on_a_huge_reply(api: Api, receiver: Receiver, http: httpx.Client) -> None:
    receiver.answer("pre-create", Reply(raw=b" " * 65536, repeat=256, chunked=True))  # 16 MiB
    [item] = validation_items(api.post("/members", member_body("dev1")))
    assert "event trigger" in item["message"] and "reply larger than" in item["message"]
    assert api.list("/members") == []
    [entry] = event_log(http)
    assert entry["outcome"] == "failed" and entry["reply"] is None


def test_member_create_refused_on_timeout(tmp_path: Path, receiver: Receiver) -> None:
    receiver.answer("pre-create", Reply(delay=1.5))
    with serve(tmp_path, events_config=events_config(receiver.url, timeout=0.3)) as http:
        api = Api(http, TOKEN_A)
        [item] = validation_items(api.post("/members", member_body("dev1")))
        assert "timed out" in item["message"]
        assert api.list("/members") == []
        [entry] = event_log(http)
        assert entry["outcome"] == "timeout" and entry["status"] is None


def test_member_update_and_refused_update(api: Api, receiver: Receiver) -> None:
    member = api.create("/members", member_body("dev1"))
    mid = member["id"]
    receiver.clear()
    updated = api.update(f"/members/{mid}", {"phone": "+1 555"})
    assert updated["phone"] == "+1 555"
    pre, post = receiver.wait_for(2)
    path_id = pre.path.rsplit("/", 1)[1]
    assert path_id in member_path_id(member)
    check_call(pre, "PUT", "member", "pre-update", path_id)
    check_call(post, "PUT", "member", "post-update", path_id)
    assert pre.txn == post.txn
    assert pre.json()["phone"] == "+1 555" and post.json()["phone"] == "+1 555"

    receiver.clear()
    receiver.answer("pre-update", stop("no", {"field": "phone", "message": "invalid phone"}))
    assert validation_items(api.put(f"/members/{mid}", {"phone": "0"})) == [{"property": "phone", "message": "invalid phone"}]
    assert api.fetch(f"/members/{mid}")["phone"] == "+1 555"
    assert [c.event for c in receiver.wait_for(1)] == ["pre-update"]


def test_member_delete_and_username_rule(api: Api, receiver: Receiver) -> None:
    member = api.create("/members", member_body("dev1"))
    mid = member["id"]
    receiver.clear()
    receiver.answer("pre-delete", stop("members are kept"))
    assert validation_items(api.delete(f"/members/{mid}")) == [{"property": "", "message": "members are kept"}]
    assert api.fetch(f"/members/{mid}")["username"] == "dev1"

    receiver.answer("pre-delete", PROCEED)
    assert_deleted(api.delete(f"/members/{mid}"))
    refused, pre, post = receiver.wait_for(3)
    path_id = pre.path.rsplit("/", 1)[1]
    assert path_id in member_path_id(member)
    for call, event in ((refused, "pre-delete"), (pre, "pre-delete"), (post, "post-delete")):
        check_call(call, "DELETE", "member", event, path_id)
    assert pre.txn == post.txn != refused.txn

    # Deleting a member does not release its username (spec "Events", "Errors" 5).
    receiver.clear()
    assert_duplicate(api.post("/members", member_body("dev1")))
    assert all(c.event != "post-create" for c in receiver.calls)


def test_post_event_failure_changes_nothing(tmp_path: Path, receiver: Receiver) -> None:
    receiver.answer("post-create", Reply(status=500, body={"error": "down"}))
    receiver.answer("post-update", Reply(delay=1.5))  # slower than the timeout
    with serve(tmp_path, events_config=events_config(receiver.url, timeout=0.4)) as http:
        api = Api(http, TOKEN_A)
        created = api.create("/members", member_body("dev1"))
        assert api.fetch(f"/members/{created['id']}")["username"] == "dev1"
        updated = api.update(f"/members/{created['id']}", {"company": "ACME"})
        assert updated["company"] == "ACME"
        assert api.fetch(f"/members/{created['id']}")["company"] == "ACME"
        outcomes = [(e["event"], e["outcome"]) for e in event_log(http)]
        assert outcomes == [("pre-create", "proceed"), ("post-create", "failed"),
                            ("pre-update", "proceed"), ("post-update", "timeout")]


def test_form_encoding(tmp_path: Path, receiver: Receiver) -> None:
    with serve(tmp_path, events_config=events_config(receiver.url, encoding="form")) as http:
        api = Api(http, TOKEN_A)
        created = api.create("/members", member_body("dev1", firstName="Ada"))
        pre, post = receiver.wait_for(2)
        form = "application/x-www-form-urlencoded"
        check_call(pre, "POST", "member", "pre-create", content_type=form)
        check_call(post, "PUT", "member", "post-create", post.path.rsplit("/", 1)[1], content_type=form)
        assert set(pre.form()) == MEMBER_FIELDS
        assert pre.form()["first_name"] == "Ada" and pre.form()["object_type"] == "member"
        assert post.form()["created"] == created["created"]

        receiver.clear()
        app = api.create(f"/members/{created['id']}/applications", {"name": "App", "username": "dev1", "ads": True})
        pre, post = receiver.wait_for(2)
        check_call(pre, "POST", "application", "pre-create", content_type=form)
        assert pre.form()["ads"] == "true" and pre.form()["commercial"] == "false"
        assert json.loads(post.form()["member"])["username"] == "dev1"
        assert post.form()["id"] == app["id"]


def test_areas_without_configuration_make_no_calls(http: httpx.Client, receiver: Receiver) -> None:
    Api(http, TOKEN_B).create("/members", member_body("dev1"))
    assert receiver.calls == []


# --- applications and keys -----------------------------------------------------------------


@pytest.fixture
def member(api: Api) -> dict[str, Any]:
    return api.create("/members", member_body("dev1"))


@pytest.fixture
def package(api: Api) -> dict[str, Any]:
    return api.create("/packages", {"name": "Partners", "plans": [{"name": "Gold", "qpsLimitCeiling": 10, "rateLimitCeiling": 1000}]},
                      {"fields": "id,name,plans"})


def test_application_events(api: Api, receiver: Receiver, member: dict[str, Any]) -> None:
    receiver.clear()
    receiver.answer("pre-create", proceed_with_changes({"description": "from CRM"}))
    app = api.create(f"/members/{member['id']}/applications", {"name": "Weather App", "username": "dev1"})
    assert app["description"] == "from CRM"
    pre, post = receiver.wait_for(2)
    check_call(pre, "POST", "application", "pre-create")
    check_call(post, "PUT", "application", "post-create", app["id"])
    assert pre.txn == post.txn
    assert set(pre.json()) == APPLICATION_FIELDS  # no id before it exists
    assert set(post.json()) == APPLICATION_FIELDS | {"id"}
    assert post.json()["id"] == app["id"] and post.json()["object_type"] == "application"
    assert post.json()["member"]["username"] == "dev1" and post.json()["description"] == "from CRM"

    receiver.clear()
    api.request("PUT", f"/applications/{app['id']}", {"name": "Renamed"})
    pre, post = receiver.wait_for(2)
    check_call(pre, "PUT", "application", "pre-update", app["id"])
    check_call(post, "PUT", "application", "post-update", app["id"])
    assert pre.json()["name"] == "Renamed" and pre.txn == post.txn

    receiver.clear()
    receiver.answer("pre-delete", Reply(status=500))
    assert validation_items(api.delete(f"/applications/{app['id']}"))
    assert api.fetch(f"/applications/{app['id']}")["name"] == "Renamed"
    receiver.answer("pre-delete", PROCEED)
    assert_deleted(api.delete(f"/applications/{app['id']}"))
    _, pre, post = receiver.wait_for(3)
    check_call(pre, "DELETE", "application", "pre-delete", app["id"])
    check_call(post, "DELETE", "application", "post-delete", app["id"])


def test_key_events(api: Api, receiver: Receiver, http: httpx.Client, member: dict[str, Any],
                    package: dict[str, Any]) -> None:
    app = api.create(f"/members/{member['id']}/applications", {"name": "Weather App", "username": "dev1"})
    plan_id = package["plans"][0]["id"]
    receiver.clear()
    receiver.answer("pre-create", proceed_with_changes({"status": "waiting"}))
    key = api.create(f"/applications/{app['id']}/packageKeys", {"package": {"id": package["id"]}, "plan": {"id": plan_id}})
    assert key["status"] == "waiting"
    pre, post = receiver.wait_for(2)
    check_call(pre, "POST", "key", "pre-create")
    check_call(post, "PUT", "key", "post-create", key["id"])
    assert pre.txn == post.txn
    body = post.json()
    assert set(body) == KEY_FIELDS
    assert body["apikey"] == key["apikey"] and body["secret"] == key["secret"]
    assert body["object_type"] == "key" and body["status"] == "waiting"
    assert body["application"]["id"] == app["id"] and body["member"]["username"] == "dev1"
    assert body["service_key"] == plan_id and body["service"]["service_key"] == plan_id
    assert {(lim["period"], lim["ceiling"]) for lim in body["limits"]} == {("second", 10), ("day", 1000)}

    receiver.clear()
    receiver.answer("pre-update", stop("Invalid key", {"field": "status", "message": "cannot activate yet"}))
    assert validation_items(api.put(f"/packageKeys/{key['id']}", {"status": "active"})) == [
        {"property": "status", "message": "cannot activate yet"}]
    assert api.fetch(f"/packageKeys/{key['id']}")["status"] == "waiting"

    receiver.clear()
    assert_deleted(api.delete(f"/packageKeys/{key['id']}"))
    pre, post = receiver.wait_for(2)
    check_call(pre, "DELETE", "key", "pre-delete", key["id"])
    check_call(post, "DELETE", "key", "post-delete", key["id"])

    # the operator's log shows the calls but never the key's secret
    text = json.dumps(event_log(http, area="area-a"))
    assert key["secret"] not in text and "(sensitive)" in text


# --- the operator's event log --------------------------------------------------------------


def test_event_log_needs_operator_token(http: httpx.Client, api: Api, receiver: Receiver) -> None:
    api.create("/members", member_body("dev1"))
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Bearer {TOKEN_A}"}):
        resp = http.get("/operator/events", headers=headers)
        assert resp.status_code == 401, describe(resp)
        assert "dev1" not in resp.text
    entries = event_log(http)
    assert [(e["object"], e["event"], e["outcome"], e["status"]) for e in entries] == [
        ("member", "pre-create", "proceed", 200), ("member", "post-create", "ok", 200)]
    for entry in entries:
        assert entry["request"]["method"] in ("POST", "PUT")
        assert entry["request"]["url"].startswith(receiver.url + "/v1/member")
        assert entry["request"]["body"]["username"] == "dev1"
        assert isinstance(entry["duration_ms"], float)
    assert entries[0]["txn"] == entries[1]["txn"]
    assert len(event_log(http, limit="1")) == 1


# --- objects created inside their owner's body ----------------------------------------------


def nested_member_body(package: dict[str, Any]) -> dict[str, Any]:
    key = {"package": {"id": package["id"]}, "plan": {"id": package["plans"][0]["id"]}}
    return member_body("dev2", applications=[{"name": "Nested App", "username": "dev2", "packageKeys": [key]}])


def test_nested_creates_fire_their_own_events(api: Api, receiver: Receiver, package: dict[str, Any]) -> None:
    receiver.clear()
    receiver.answer("pre-create", proceed_with_changes({"description": "from CRM"}), obj="application")
    member = api.create("/members", nested_member_body(package))
    [app] = api.list(f"/members/{member['id']}/applications", {"fields": "id,name,description"})
    [key] = api.list(f"/applications/{app['id']}/packageKeys")
    assert app["description"] == "from CRM"
    calls = receiver.wait_for(6)
    assert [(c.path.split("/")[2], c.event) for c in calls] == [
        ("member", "pre-create"), ("application", "pre-create"), ("key", "pre-create"),
        ("member", "post-create"), ("application", "post-create"), ("key", "post-create")]
    by_obj = {(c.path.split("/")[2], c.event): c for c in calls}
    check_call(by_obj["application", "pre-create"], "POST", "application", "pre-create")
    check_call(by_obj["key", "pre-create"], "POST", "key", "pre-create")
    check_call(by_obj["application", "post-create"], "PUT", "application", "post-create", app["id"])
    check_call(by_obj["key", "post-create"], "PUT", "key", "post-create", key["id"])
    txns = {obj: by_obj[obj, "pre-create"].txn for obj in ("member", "application", "key")}
    assert len(set(txns.values())) == 3  # one change each
    for obj, txn in txns.items():
        assert by_obj[obj, "post-create"].txn == txn
    app_pre, key_pre = by_obj["application", "pre-create"].json(), by_obj["key", "pre-create"].json()
    assert set(app_pre) == APPLICATION_FIELDS and app_pre["member"]["username"] == "dev2"
    assert set(key_pre) == KEY_FIELDS and key_pre["application"]["name"] == "Nested App"
    # the values the pre event was shown are the values saved
    assert key_pre["apikey"] == key["apikey"] and key_pre["secret"] == key["secret"]
    assert by_obj["application", "post-create"].json()["description"] == "from CRM"


def test_nested_create_vetoed_leaves_nothing(api: Api, receiver: Receiver, package: dict[str, Any]) -> None:
    receiver.clear()
    receiver.answer("pre-create", stop("no keys today", {"field": "status", "message": "closed"}), obj="key")
    items = validation_items(api.post("/members", nested_member_body(package)))
    assert items == [{"property": "status", "message": "closed"}]
    assert api.list("/members") == []
    assert api.list("/applications") == [] and api.list("/packageKeys") == []
    assert [c.event for c in receiver.wait_for(3)] == ["pre-create"] * 3
    receiver.answer("pre-create", PROCEED, obj="key")
    api.create("/members", nested_member_body(package))  # the username was not taken


def test_key_pre_create_shows_the_saved_values(api: Api, receiver: Receiver, member: dict[str, Any],
                                               package: dict[str, Any]) -> None:
    app = api.create(f"/members/{member['id']}/applications", {"name": "Weather App", "username": "dev1"})
    receiver.clear()
    key = api.create(f"/applications/{app['id']}/packageKeys", {"package": {"id": package["id"]}})
    pre, post = receiver.wait_for(2)
    assert pre.json()["apikey"] == post.json()["apikey"] == key["apikey"]
    assert pre.json()["secret"] == post.json()["secret"] == key["secret"]


def test_deleting_a_member_fires_the_deletes_of_what_goes_with_it(
    api: Api, receiver: Receiver, package: dict[str, Any]
) -> None:
    member = api.create("/members", nested_member_body(package))
    [app] = api.list("/applications")
    [key] = api.list("/packageKeys")
    receiver.clear()
    receiver.answer("pre-delete", stop("key in use"), obj="key")
    assert validation_items(api.delete(f"/members/{member['id']}")) == [{"property": "", "message": "key in use"}]
    assert api.fetch(f"/packageKeys/{key['id']}")["id"] == key["id"]  # nothing deleted
    receiver.answer("pre-delete", PROCEED, obj="key")
    receiver.clear()
    assert_deleted(api.delete(f"/members/{member['id']}"))
    calls = receiver.wait_for(6)
    assert [(c.method, c.path.split("/")[2], c.event) for c in calls] == [
        ("DELETE", "member", "pre-delete"), ("DELETE", "application", "pre-delete"), ("DELETE", "key", "pre-delete"),
        ("DELETE", "member", "post-delete"), ("DELETE", "application", "post-delete"), ("DELETE", "key", "post-delete")]
    check_call(calls[1], "DELETE", "application", "pre-delete", app["id"])
    check_call(calls[5], "DELETE", "key", "post-delete", key["id"])
    assert calls[1].txn == calls[4].txn and calls[2].txn == calls[5].txn != calls[1].txn
    assert api.list("/applications") == [] and api.list("/packageKeys") == []


def test_writes_the_server_refuses_anyway_reach_no_receiver(api: Api, receiver: Receiver,
                                                            member: dict[str, Any]) -> None:
    receiver.clear()
    assert validation_items(api.post("/members", {"username": "incomplete"}))  # required fields missing
    assert validation_items(api.post("/members", member_body("dev1")))  # duplicate username
    assert validation_items(api.put(f"/members/{member['id']}", {"email": 42}))  # wrong type
    app_body = {"name": "App", "username": "dev1", "packageKeys": [{"plan": {"id": "no-such-plan"}}]}
    assert validation_items(api.post(f"/members/{member['id']}/applications", app_body))
    api.update(f"/members/{member['id']}", {"phone": "1"})  # a valid write still calls out
    assert [c.event for c in receiver.wait_for(2)] == ["pre-update", "post-update"]


def test_key_pre_update_shows_the_plan_it_moves_to(api: Api, receiver: Receiver, member: dict[str, Any]) -> None:
    package = api.create("/packages", {"name": "Two plans", "plans": [{"name": "A"}, {"name": "B", "qpsLimitCeiling": 3}]},
                         {"fields": "id,plans"})
    plan_a, plan_b = (p["id"] for p in package["plans"])
    app = api.create(f"/members/{member['id']}/applications", {"name": "Weather App", "username": "dev1"})
    key = api.create(f"/applications/{app['id']}/packageKeys", {"plan": {"id": plan_a}})
    receiver.clear()
    api.update(f"/packageKeys/{key['id']}", {"plan": {"id": plan_b}})
    pre, post = receiver.wait_for(2)
    for call in (pre, post):
        assert call.json()["service_key"] == plan_b
        assert {"source": "plan", "ceiling": 3, "period": "second"} in call.json()["limits"]
