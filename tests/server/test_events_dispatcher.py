"""EventDispatcher against a real receiver: wire format, pre-event decisions, post events, log."""

from __future__ import annotations

import json
import re
import socket
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from receiver import PROCEED, Receiver, Reply, proceed_with_changes, stop
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from apimctl.server.errors import ServerConfigError
from apimctl.server.events import (
    AGENT,
    DEFAULT_TIMEOUT,
    MAX_REPLY_BYTES,
    EventDispatcher,
    EventVeto,
    application_payload,
    apply_changes,
    event_log_endpoint,
    key_payload,
    load_events_config,
    member_payload,
    parse_events_config,
)

ALL = ["pre-create", "post-create", "pre-update", "post-update", "pre-delete", "post-delete"]

MEMBER = {
    "id": "7b0c6a52-8d53-4f0e-9a55-2f1f3b8b3c11",
    "username": "jane@example.org",
    "email": "jane@example.org",
    "displayName": "Jane",
    "externalId": "ext-1",
    "firstName": "Jane",
    "lastName": "Doe",
    "areaStatus": "active",
    "passwdNew": "never-sent",
    "created": "2026-01-02T03:04:05Z",
    "updated": "2026-01-02T03:04:05Z",
}
APP = {"id": "a1", "name": "Mobile", "username": "jane@example.org", "ads": True, "tags": "x"}
PACKAGE = {"id": "p1", "name": "Partners"}
PLAN = {"id": "pl1", "name": "Gold", "qpsLimitCeiling": 10, "rateLimitCeiling": 5000, "rateLimitPeriod": "day"}
KEY = {"id": "k1", "apikey": "abc123", "secret": "top-secret-value", "status": "active", "qpsLimitCeiling": 2}

MEMBER_FIELDS = {
    "region", "external_id", "phone", "address1", "address2", "area_status", "registration_ipaddr",
    "blog", "im", "country_code", "uri", "object_type", "first_name", "display_name", "username",
    "created", "updated", "email", "postal_code", "company", "last_name", "locality", "imsvc",
}
APPLICATION_FIELDS = {
    "member", "preferred_protocol", "tags", "external_id", "status", "ads_system", "type", "uri",
    "object_type", "id", "username", "preferred_output", "how_did_you_hear", "created", "updated",
    "description", "usage_model", "name", "ads", "notes", "commercial",
}
KEY_FIELDS = {
    "member", "application", "service", "limits", "oauth_rate_limit_ceiling",
    "oauth_rate_limit_exempt", "oauth_qps_limit_ceiling", "oauth_qps_limit_exempt",
    "oauth_user_limits", "qps_limit_ceiling", "qps_limit_exempt", "rate_limit_ceiling",
    "rate_limit_exempt", "status", "group_id", "apikey", "secret", "service_key", "object_type",
    "username", "protected_methods", "required_referer", "created", "updated",
}


def config(url: str, encoding: str = "json", timeout: float | None = None, **events: list[str]) -> dict[str, Any]:
    area: dict[str, Any] = {"url": url, "encoding": encoding, "events": events or {"member": ALL, "application": ALL, "key": ALL}}
    if timeout is not None:
        area["timeout"] = timeout
    return {"areas": {"area-1": area}}


@pytest.fixture
def dispatcher(receiver: Receiver) -> Iterator[EventDispatcher]:
    d = EventDispatcher(config(receiver.url, timeout=2))
    yield d
    d.close()


# --- configuration -------------------------------------------------------------------------


def test_config_defaults() -> None:
    areas = parse_events_config({"areas": {"a": {"url": "http://127.0.0.1:9/hooks/"}}})
    assert areas["a"].url == "http://127.0.0.1:9/hooks"
    assert areas["a"].encoding == "json"
    assert areas["a"].timeout == DEFAULT_TIMEOUT == 10.0
    assert areas["a"].events == frozenset()


def test_config_reports_every_problem() -> None:
    raw = {"areas": {"a": {"url": "ftp://x", "encoding": "xml", "timeout": -1,
                           "events": {"member": ["pre-create", "pre-explode"], "robot": []}}}}
    with pytest.raises(ServerConfigError) as info:
        parse_events_config(raw, source="events.yaml")
    text = str(info.value)
    for fragment in ("areas.a.url", "areas.a.encoding", "areas.a.timeout", "areas.a.events.member.1", "robot"):
        assert fragment in text, text
    assert all(line.startswith("events.yaml: ") for line in text.splitlines())


def test_config_missing_url() -> None:
    with pytest.raises(ServerConfigError, match=r"areas\.a: 'url' is a required property"):
        parse_events_config({"areas": {"a": {"encoding": "json"}}})


def test_load_config_file(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text("areas:\n  area-1:\n    url: http://127.0.0.1:9000/hooks\n    encoding: form\n"
                    "    timeout: 3\n    events:\n      member: [pre-create, post-create]\n")
    raw = load_events_config(str(path))
    area = EventDispatcher(raw).areas["area-1"]
    assert area.encoding == "form" and area.timeout == 3
    assert area.events == {("member", "pre-create"), ("member", "post-create")}


def test_load_config_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text("areas:\n  a: [unclosed\n")
    with pytest.raises(ServerConfigError, match=r"events\.yaml:\d+:\d+: invalid YAML"):
        load_events_config(str(path))
    with pytest.raises(ServerConfigError, match="cannot read events config"):
        load_events_config(str(tmp_path / "missing.yaml"))


# --- payloads ------------------------------------------------------------------------------


def test_member_payload_shape() -> None:
    payload = member_payload(MEMBER)
    assert set(payload) == MEMBER_FIELDS
    assert payload["object_type"] == "member"
    assert payload["display_name"] == "Jane" and payload["external_id"] == "ext-1"
    assert payload["phone"] == ""
    assert "never-sent" not in json.dumps(payload)


def test_application_payload_shape() -> None:
    payload = application_payload(APP, MEMBER)
    assert set(payload) == APPLICATION_FIELDS
    assert payload["member"] == member_payload(MEMBER)
    assert payload["ads"] is True and payload["commercial"] is False
    pre_create = application_payload({k: v for k, v in APP.items() if k != "id"}, MEMBER)
    assert "id" not in pre_create


def test_key_payload_shape() -> None:
    payload = key_payload(KEY, APP, MEMBER, PACKAGE, PLAN)
    assert set(payload) == KEY_FIELDS
    assert payload["object_type"] == "key"
    assert payload["service"]["service_key"] == "pl1" == payload["service_key"]
    assert set(payload["service"]) == {"service_key", "updated", "created", "name", "limits"}
    assert payload["limits"] == [
        {"source": "plan", "ceiling": 5000, "period": "day"},
        {"source": "key", "ceiling": 2, "period": "second"},
    ]
    assert payload["username"] == "jane@example.org"
    # exempt flags take a limit away, as in the key's ``limits`` field
    exempt = key_payload({**KEY, "qpsLimitExempt": True}, APP, MEMBER, PACKAGE, {**PLAN, "rateLimitExempt": True})
    assert exempt["limits"] == [] and exempt["qps_limit_exempt"] is True


def test_apply_changes_to_camel_case() -> None:
    changed = apply_changes(MEMBER, {"first_name": "Janet", "postal_code": "1000", "address1": "Main"})
    assert changed["firstName"] == "Janet" and changed["postalCode"] == "1000" and changed["address1"] == "Main"
    assert MEMBER["firstName"] == "Jane"


# --- wire format ---------------------------------------------------------------------------


def test_pre_create_member_json(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    txn = dispatcher.new_txn()
    payload = member_payload(MEMBER)
    assert dispatcher.pre("area-1", "member", "pre-create", payload, None, txn) == {}
    [call] = receiver.wait_for(1)
    assert call.method == "POST"
    assert call.path == "/v1/member"
    assert call.query == {"event": "pre-create", "txn": txn}
    assert call.headers["accept"] == "application/json"
    assert call.headers["content-type"] == "application/json"
    assert call.headers["user-agent"] == AGENT
    assert "key-agent" not in call.headers and "application-agent" not in call.headers
    assert call.json() == payload


@pytest.mark.parametrize(("obj", "header"), [("application", "application-agent"), ("key", "key-agent")])
def test_agent_header_per_object(receiver: Receiver, dispatcher: EventDispatcher, obj: str, header: str) -> None:
    dispatcher.pre("area-1", obj, "pre-update", {"name": "x"}, "id-1", dispatcher.new_txn())
    [call] = receiver.wait_for(1)
    assert call.method == "PUT" and call.path == f"/v1/{obj}/id-1"
    assert call.headers[header] == AGENT
    assert call.headers["user-agent"] != AGENT


def test_methods_paths_and_shared_txn(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    txn = dispatcher.new_txn()
    assert re.fullmatch(r"[0-9a-f]{32}", txn) and txn != dispatcher.new_txn()
    for event in ALL:
        obj_id = None if event == "pre-create" else "jane@example.org"
        payload = None if event.endswith("delete") else member_payload(MEMBER)
        if event.startswith("pre"):
            dispatcher.pre("area-1", "member", event, payload, obj_id, txn)
        else:
            dispatcher.post("area-1", "member", event, payload, obj_id, txn)
    calls = receiver.wait_for(6)
    seen = [(c.method, c.path, c.event) for c in calls]
    assert seen == [
        ("POST", "/v1/member", "pre-create"),
        ("PUT", "/v1/member/jane@example.org", "post-create"),
        ("PUT", "/v1/member/jane@example.org", "pre-update"),
        ("PUT", "/v1/member/jane@example.org", "post-update"),
        ("DELETE", "/v1/member/jane@example.org", "pre-delete"),
        ("DELETE", "/v1/member/jane@example.org", "post-delete"),
    ]
    assert {c.txn for c in calls} == {txn}
    assert all(c.body == b"" for c in calls if c.method == "DELETE")
    assert all(c.json() == member_payload(MEMBER) for c in calls if c.method != "DELETE")


def test_form_encoding(receiver: Receiver) -> None:
    d = EventDispatcher(config(receiver.url, encoding="form"))
    payload = application_payload(APP, MEMBER)
    d.pre("area-1", "application", "pre-create", payload, None, d.new_txn())
    d.close()
    [call] = receiver.wait_for(1)
    assert call.headers["content-type"] == "application/x-www-form-urlencoded"
    form = call.form()
    assert set(form) == set(payload)
    assert form["name"] == "Mobile" and form["ads"] == "true" and form["commercial"] == "false"
    assert form["created"] == ""
    assert json.loads(form["member"]) == member_payload(MEMBER)


def test_events_not_enabled_make_no_call(receiver: Receiver) -> None:
    d = EventDispatcher(config(receiver.url, member=["post-create"]))
    assert d.pre("area-1", "member", "pre-create", {}, None, d.new_txn()) == {}
    assert d.pre("area-2", "member", "post-create", {}, "x", d.new_txn()) == {}
    d.post("area-1", "key", "post-create", {}, "k", d.new_txn())
    assert EventDispatcher(None).pre("area-1", "member", "pre-create", {}, None, "0" * 32) == {}
    assert receiver.calls == []
    d.close()


# --- pre-event decisions -------------------------------------------------------------------


def test_proceed_with_changes(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("pre-create", proceed_with_changes({"first_name": "Janet"}, {"external_id": "crm-9"}))
    changes = dispatcher.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, dispatcher.new_txn())
    assert changes == {"first_name": "Janet", "external_id": "crm-9"}
    [entry] = dispatcher.log()
    assert entry["outcome"] == "proceed_with_changes" and entry["status"] == 200


def test_proceed_with_changes_to_read_only_field_refuses(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("pre-update", proceed_with_changes({"created": "2020-01-01T00:00:00Z"}))
    with pytest.raises(EventVeto) as info:
        dispatcher.pre("area-1", "member", "pre-update", member_payload(MEMBER), "jane", dispatcher.new_txn())
    assert info.value.items[0]["property"] == "created"
    assert dispatcher.log()[-1]["outcome"] == "failed"


def test_stop_with_field_data(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("pre-create", stop("Invalid member", {"field": "external_id", "message": "unknown in CRM"},
                                       {"field": "email", "message": "blocked domain"}))
    with pytest.raises(EventVeto) as info:
        dispatcher.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, dispatcher.new_txn())
    assert info.value.items == [
        {"property": "externalId", "message": "unknown in CRM"},
        {"property": "email", "message": "blocked domain"},
    ]
    entry = dispatcher.log()[-1]
    assert entry["outcome"] == "stop" and entry["status"] == 400


def test_stop_without_data_uses_message(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("pre-delete", stop("members are never deleted"))
    with pytest.raises(EventVeto) as info:
        dispatcher.pre("area-1", "member", "pre-delete", None, "jane", dispatcher.new_txn())
    assert info.value.items == [{"property": "", "message": "members are never deleted"}]


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(status=500, body={"type": "proceed"}), "HTTP 500"),
        (Reply(raw=b"{not json"), "not a JSON object"),
        (Reply(body={"type": "maybe"}), "HTTP 200"),
        (Reply(status=400, body={"type": "proceed"}), "HTTP 400"),
        (Reply(status=201, body={"type": "proceed"}), "HTTP 201"),
    ],
    ids=["500", "malformed", "unknown-type", "400-not-stop", "201"],
)
def test_anything_else_refuses(receiver: Receiver, dispatcher: EventDispatcher, reply: Reply, fragment: str) -> None:
    receiver.answer("pre-create", reply)
    with pytest.raises(EventVeto) as info:
        dispatcher.pre("area-1", "key", "pre-create", {"apikey": "x"}, None, dispatcher.new_txn())
    [item] = info.value.items
    assert "event trigger pre-create for key failed" in item["message"] and fragment in item["message"]
    assert dispatcher.log()[-1]["outcome"] == "failed"


PIECE = b" " * 65536  # 64 KiB of JSON whitespace


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_reply_over_a_megabyte_is_a_failed_delivery(receiver: Receiver, dispatcher: EventDispatcher,
                                                     chunked: bool) -> None:
    receiver.answer("pre-create", Reply(raw=PIECE, repeat=64, chunked=chunked))  # 4 MiB
    with pytest.raises(EventVeto) as info:
        dispatcher.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, dispatcher.new_txn())
    [item] = info.value.items
    assert "event trigger pre-create for member failed" in item["message"]
    assert f"reply larger than {MAX_REPLY_BYTES} bytes" in item["message"]
    entry = dispatcher.log()[-1]
    assert entry["outcome"] == "failed" and entry["status"] == 200 and entry["reply"] is None
    receiver.answer("post-create", Reply(raw=PIECE, repeat=64, chunked=chunked))
    dispatcher.post("area-1", "member", "post-create", member_payload(MEMBER), "jane", dispatcher.new_txn())
    entry = dispatcher.log()[-1]
    assert entry["outcome"] == "failed" and "larger than" in entry["error"]


def test_reply_up_to_a_megabyte_is_read(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    proceed = b'{"type": "proceed"}'
    padded = proceed + b" " * (MAX_REPLY_BYTES - len(proceed))
    receiver.answer("pre-create", Reply(raw=padded, chunked=True))
    assert dispatcher.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, dispatcher.new_txn()) == {}
    assert dispatcher.log()[-1]["outcome"] == "proceed"


def test_huge_reply_is_never_held_in_memory(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("pre-create", Reply(raw=PIECE, repeat=1024, chunked=True))  # 64 MiB, streamed
    tracemalloc.start()
    try:
        with pytest.raises(EventVeto, match="larger than"):
            dispatcher.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, dispatcher.new_txn())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_REPLY_BYTES, peak


def test_slow_reply_times_out(receiver: Receiver) -> None:
    d = EventDispatcher(config(receiver.url, timeout=0.3))
    receiver.answer("pre-create", Reply(delay=1.5))
    with pytest.raises(EventVeto, match="timed out"):
        d.pre("area-1", "member", "pre-create", member_payload(MEMBER), None, d.new_txn())
    entry = d.log()[-1]
    assert entry["outcome"] == "timeout" and entry["status"] is None
    assert isinstance(entry["duration_ms"], float)
    d.close()


def test_unreachable_receiver_refuses() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    d = EventDispatcher(config(f"http://127.0.0.1:{port}/hooks", timeout=2))
    with pytest.raises(EventVeto, match="failed: cannot reach the receiver"):
        d.pre("area-1", "member", "pre-create", {}, None, d.new_txn())
    d.post("area-1", "member", "post-create", {}, "jane", d.new_txn())  # never raises
    assert [e["outcome"] for e in d.log()] == ["failed", "failed"]
    d.close()


# --- post events and the log ---------------------------------------------------------------


def test_post_failure_is_recorded_not_raised(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    receiver.answer("post-create", Reply(status=503, body={"oops": True}))
    dispatcher.post("area-1", "application", "post-create", application_payload(APP, MEMBER), "a1", "ab" * 16)
    [entry] = dispatcher.log()
    assert entry["outcome"] == "failed" and entry["status"] == 503 and "503" in entry["error"]
    receiver.answer("post-update", PROCEED)
    dispatcher.post("area-1", "application", "post-update", application_payload(APP, MEMBER), "a1", "cd" * 16)
    assert dispatcher.log()[-1]["outcome"] == "ok"


def test_log_redacts_secrets_but_receiver_gets_them(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    payload = key_payload(KEY, APP, MEMBER, PACKAGE, PLAN)
    receiver.answer("pre-create", proceed_with_changes({"secret": "another-secret"}))
    assert dispatcher.pre("area-1", "key", "pre-create", payload, None, "ef" * 16) == {"secret": "another-secret"}
    [call] = receiver.wait_for(1)
    assert call.json()["secret"] == "top-secret-value"
    entry = dispatcher.log()[0]
    text = json.dumps(entry)
    assert "top-secret-value" not in text and "another-secret" not in text
    assert entry["request"]["body"]["secret"] == "(sensitive)"
    assert entry["request"]["method"] == "POST"
    assert entry["request"]["url"] == f"{receiver.url}/v1/key?event=pre-create&txn={'ef' * 16}"
    assert entry["request"]["headers"]["Key-Agent"] == AGENT
    assert {"time", "area", "object", "event", "txn", "status", "reply", "outcome", "duration_ms"} <= set(entry)


def test_log_is_bounded_and_filterable(receiver: Receiver) -> None:
    raw = config(receiver.url)
    raw["areas"]["area-2"] = raw["areas"]["area-1"]
    d = EventDispatcher(raw, log_size=3)
    for i in range(4):
        d.post("area-1" if i % 2 else "area-2", "member", "post-update", {}, f"u{i}", d.new_txn())
    assert [e["request"]["url"].split("?")[0].rsplit("/", 1)[1] for e in d.log()] == ["u1", "u2", "u3"]
    assert [e["area"] for e in d.log("area-1")] == ["area-1", "area-1"]
    assert len(d.log(limit=1)) == 1
    d.close()


def test_event_log_endpoint(receiver: Receiver, dispatcher: EventDispatcher) -> None:
    dispatcher.post("area-1", "member", "post-delete", None, "jane", "12" * 16)
    app = Starlette(routes=[Route("/operator/events", event_log_endpoint(dispatcher))])
    with TestClient(app) as client:
        body = client.get("/operator/events", params={"area": "area-1"}).json()
        assert [e["txn"] for e in body] == ["12" * 16]
        assert client.get("/operator/events", params={"area": "nope"}).json() == []
        bad = client.get("/operator/events", params={"limit": "x"})
        assert bad.status_code == 400 and bad.json()[0]["property"] == "limit"


def test_load_config_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text("areas:\n  a1:\n    url: ftp://x\n    events:\n      member: [pre-create, pre-explode]\n")
    with pytest.raises(ServerConfigError) as info:
        load_events_config(str(path))
    lines = str(info.value).splitlines()
    assert any(line.startswith(f"{path}:3:10: areas.a1.url:") for line in lines), lines
    assert any(line.startswith(f"{path}:5:28: areas.a1.events.member.1:") for line in lines), lines


def test_load_config_empty_file_means_no_triggers(tmp_path: Path) -> None:
    path = tmp_path / "events.yaml"
    path.write_text("# nothing configured yet\n")
    assert EventDispatcher(load_events_config(str(path))).areas == {}
