"""Error sets and error messages (spec "ErrorSet", "ErrorMessage"; SUPPLEMENT §2, §3, §5)."""

from __future__ import annotations

import pytest
from spec_helpers import (
    CATALOG,
    Api,
    assert_deleted,
    assert_error,
    assert_invalid,
    make_service,
)


@pytest.fixture
def sid(api: Api) -> str:
    value: str = make_service(api)["id"]
    return value


def check_catalog(messages: list[dict[str, object]]) -> None:
    by_id = {m["id"]: m for m in messages}
    assert set(by_id) == set(CATALOG)
    for mid, (code, status) in CATALOG.items():
        message = by_id[mid]
        assert message["code"] == code, mid
        if status is not None:
            assert message["status"] == status, mid
        assert message["detailHeader"] == "", mid
        assert message["responseBody"] == "", mid


def test_default_set_holds_the_catalog(api: Api, sid: str) -> None:
    (default,) = api.list(f"/services/{sid}/errorSets")
    assert "errorMessages" not in default  # Exp
    messages = api.list(f"/services/{sid}/errorSets/{default['id']}/errorMessages")
    check_catalog(messages)
    with_messages = api.fetch(
        f"/services/{sid}/errorSets/{default['id']}", {"fields": "id,name,errorMessages"}
    )
    check_catalog(with_messages["errorMessages"])


def test_new_set_is_filled_with_the_catalog(api: Api, sid: str) -> None:
    created = api.create(
        f"/services/{sid}/errorSets",
        {"name": "XML", "type": "application/xml", "jsonp": True, "jsonpType": "text/javascript"},
    )
    assert created["name"] == "XML"
    assert created["type"] == "application/xml"
    assert created["jsonp"] is True
    assert created["jsonpType"] == "text/javascript"
    check_catalog(api.list(f"/services/{sid}/errorSets/{created['id']}/errorMessages"))


def test_error_set_crud(api: Api, sid: str) -> None:
    esid = api.create(f"/services/{sid}/errorSets", {"name": "Second"})["id"]
    path = f"/services/{sid}/errorSets/{esid}"
    assert api.fetch(path)["name"] == "Second"
    assert api.fetch(path, {"indent": "true"})["name"] == "Second"
    assert api.update(path, {"name": "Renamed", "jsonp": True})["name"] == "Renamed"
    assert api.fetch(path)["jsonp"] is True
    assert sorted(s["name"] for s in api.list(f"/services/{sid}/errorSets")) == [
        "Default",
        "Renamed",
    ]
    assert_deleted(api.delete(path))
    assert_error(api.get(path), 404)
    assert [s["name"] for s in api.list(f"/services/{sid}/errorSets")] == ["Default"]


def test_last_error_set_cannot_be_deleted(api: Api, sid: str) -> None:
    (default,) = api.list(f"/services/{sid}/errorSets")
    assert_invalid(api.delete(f"/services/{sid}/errorSets/{default['id']}"))
    assert len(api.list(f"/services/{sid}/errorSets")) == 1
    # once there is a second one, the first may go
    second = api.create(f"/services/{sid}/errorSets", {"name": "Second"})
    assert_deleted(api.delete(f"/services/{sid}/errorSets/{default['id']}"))
    assert_invalid(api.delete(f"/services/{sid}/errorSets/{second['id']}"))


@pytest.mark.parametrize(("field", "value"), [("jsonp", "yes"), ("name", 3), ("type", [])])
def test_error_set_type_validation(api: Api, sid: str, field: str, value: object) -> None:
    assert_invalid(api.post(f"/services/{sid}/errorSets", {"name": "x", field: value}), field)


def test_message_upsert_with_put(api: Api, sid: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    path = f"/services/{sid}/errorSets/{esid}/errorMessages/ERR_403_DEVELOPER_OVER_QPS"
    body = {
        "id": "ERR_403_DEVELOPER_OVER_QPS",
        "code": 999,  # Ign: follows from the id
        "status": "Too Many Requests",
        "detailHeader": "X-Slow: down",
        "responseBody": '{"error":"slow down"}',
    }
    got = api.update(path, body)
    assert got["id"] == "ERR_403_DEVELOPER_OVER_QPS"
    assert got["code"] == 403
    assert got["status"] == "Too Many Requests"
    assert got["responseBody"] == '{"error":"slow down"}'
    fetched = api.fetch(path)
    assert fetched == got
    assert api.fetch(path, {"indent": "true"}) == got
    messages = api.list(f"/services/{sid}/errorSets/{esid}/errorMessages")
    assert len(messages) == len(CATALOG)


def test_message_partial_update_keeps_other_fields(api: Api, sid: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    path = f"/services/{sid}/errorSets/{esid}/errorMessages/ERR_502_BAD_GATEWAY"
    api.update(path, {"id": "ERR_502_BAD_GATEWAY", "responseBody": "down"})
    got = api.update(path, {"id": "ERR_502_BAD_GATEWAY", "detailHeader": "h"})
    assert got["responseBody"] == "down"
    assert got["status"] == "Bad Gateway"


def test_message_post_and_delete(api: Api, sid: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    base = f"/services/{sid}/errorSets/{esid}/errorMessages"
    created = api.create(base, {"id": "ERR_504_GATEWAY_TIMEOUT", "responseBody": "late"})
    assert created["code"] == 504
    assert created["responseBody"] == "late"
    assert_deleted(api.delete(f"{base}/ERR_504_GATEWAY_TIMEOUT"))


@pytest.mark.parametrize("method", ["PUT", "POST"])
def test_unknown_message_id_is_400(api: Api, sid: str, method: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    base = f"/services/{sid}/errorSets/{esid}/errorMessages"
    if method == "PUT":
        resp = api.put(f"{base}/ERR_999_MADE_UP", {"id": "ERR_999_MADE_UP", "status": "x"})
    else:
        resp = api.post(base, {"id": "ERR_999_MADE_UP", "status": "x"})
    assert_invalid(resp)
    assert len(api.list(base)) == len(CATALOG)


def test_message_id_is_required(api: Api, sid: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    resp = api.post(f"/services/{sid}/errorSets/{esid}/errorMessages", {"status": "x"})
    assert_invalid(resp, "id")


def test_error_set_put_with_messages_upserts(api: Api, sid: str) -> None:
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    api.update(
        f"/services/{sid}/errorSets/{esid}",
        {"errorMessages": [{"id": "ERR_400_BAD_REQUEST", "responseBody": "bad"}]},
    )
    got = api.fetch(f"/services/{sid}/errorSets/{esid}/errorMessages/ERR_400_BAD_REQUEST")
    assert got["responseBody"] == "bad"
    assert len(api.list(f"/services/{sid}/errorSets/{esid}/errorMessages")) == len(CATALOG)


def test_create_set_with_messages(api: Api, sid: str) -> None:
    created = api.create(
        f"/services/{sid}/errorSets",
        {
            "name": "Custom",
            "errorMessages": [{"id": "ERR_403_NOT_AUTHORIZED", "responseBody": "no"}],
        },
    )
    messages = api.list(f"/services/{sid}/errorSets/{created['id']}/errorMessages")
    assert len(messages) == len(CATALOG)
    by_id = {m["id"]: m for m in messages}
    assert by_id["ERR_403_NOT_AUTHORIZED"]["responseBody"] == "no"
    assert by_id["ERR_400_BAD_REQUEST"]["responseBody"] == ""


def test_sets_are_per_service(api: Api, sid: str) -> None:
    other = make_service(api, "Other")["id"]
    esid = api.list(f"/services/{sid}/errorSets")[0]["id"]
    assert_error(api.get(f"/services/{other}/errorSets/{esid}"), 404)
