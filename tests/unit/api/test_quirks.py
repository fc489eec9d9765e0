"""The readers of the platform's irregular replies (spec/SUPPLEMENT.md §9)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from apimctl.api.quirks import as_list, parse_datetime, read_error_body, unwrap_one


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, []),
        ([], []),
        ("request-header", ["request-header"]),
        (["request-header", "request-body"], ["request-header", "request-body"]),
        ({"id": "x"}, [{"id": "x"}]),
        (("a", "b"), ["a", "b"]),
        (0, [0]),
    ],
)
def test_as_list(value: object, expected: list[object]) -> None:
    assert as_list(value) == expected


def test_both_platform_renderings_are_the_same_instant() -> None:
    a = parse_datetime("2026-12-01T02:00:00.000+0000")
    b = parse_datetime("2026-12-01T02:00:00Z")
    assert a == b == datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
    assert a.tzinfo is UTC and b.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2026-12-01T04:00:00+02:00",
        "2026-12-01T04:00:00.000+0200",
        "2026-11-30T21:00:00-05:00",
        "2026-12-01T02:00:00",  # no offset: UTC
        " 2026-12-01T02:00:00Z ",
    ],
)
def test_offsets_are_converted_to_utc(text: str) -> None:
    assert parse_datetime(text) == datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
    assert parse_datetime(text).utcoffset() == timedelta(0)


@pytest.mark.parametrize("bad", ["", "tomorrow", "2026-13-01T00:00:00Z", 1700000000, None])
def test_bad_datetimes_say_which_value(bad: object) -> None:
    with pytest.raises(ValueError, match="not an ISO 8601 date-time"):
        parse_datetime(bad)  # type: ignore[arg-type]


@given(
    st.datetimes(
        min_value=datetime(1970, 1, 1), max_value=datetime(2999, 12, 31), timezones=st.just(UTC)
    )
)
def test_both_renderings_round_trip(moment: datetime) -> None:
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    millis = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"
    zulu = moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"
    assert parse_datetime(millis) == parse_datetime(zulu) == moment


def test_aware_datetimes_pass_through_as_utc() -> None:
    local = datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=1)))
    assert parse_datetime(local) == datetime(2026, 1, 1, 11, tzinfo=UTC)


def test_unwrap_one() -> None:
    assert unwrap_one([{"id": 1}]) == {"id": 1}
    assert unwrap_one({"id": 1}) == {"id": 1}
    with pytest.raises(ValueError, match="array of 2"):
        unwrap_one([{"id": 1}, {"id": 2}])
    with pytest.raises(ValueError, match="array of 0"):
        unwrap_one([])


def test_validation_array() -> None:
    body = read_error_body(
        '[{"property": "name", "message": "duplicate"}, {"property": "", "message": "bad"}]'
    )
    assert body.items == [
        {"property": "name", "message": "duplicate"},
        {"property": "", "message": "bad"},
    ]
    assert body.describe() == "name: duplicate; bad"


def test_error_object_with_errors() -> None:
    body = read_error_body(
        '{"errorCode": 400, "errorMessage": "Validation failed",'
        ' "errors": [{"property": "cors.maxAge", "message": "must be integer"}]}'
    )
    assert body.message == "Validation failed"
    assert body.code is None
    assert body.items == [{"property": "cors.maxAge", "message": "must be integer"}]
    assert body.describe() == "Validation failed; cors.maxAge: must be integer"


def test_error_object_with_a_string_code() -> None:
    body = read_error_body(
        '{"errorCode": "ERR_403_DEVELOPER_OVER_QPS", "errorMessage": "slow down"}'
    )
    assert (body.code, body.message) == ("ERR_403_DEVELOPER_OVER_QPS", "slow down")


def test_oauth_error() -> None:
    body = read_error_body('{"error": "invalid_grant", "error_description": "bad user"}')
    assert (body.code, body.message) == ("invalid_grant", "bad user")


def test_html_from_a_gateway_is_summarised_not_dumped() -> None:
    page = (
        "<html><head><title>502 Bad Gateway</title></head><body>"
        + "<p>x</p>" * 500
        + "</body></html>"
    )
    body = read_error_body(page, "text/html; charset=utf-8")
    assert "HTML page" in body.message and "gateway" in body.message
    assert "(502 Bad Gateway)" in body.message
    assert "<" not in body.message and len(body.message) < 200


def test_html_without_content_type() -> None:
    assert "HTML page" in read_error_body("<!DOCTYPE html><html><body>oops</body></html>").message


def test_plain_text_is_shortened() -> None:
    body = read_error_body("upstream connect error " * 50, "text/plain")
    assert body.message.startswith("upstream connect error")
    assert len(body.message) <= 200


def test_empty_body() -> None:
    assert read_error_body("  ").describe() == ""


@given(st.text(max_size=300), st.sampled_from(["", "application/json", "text/html", "text/plain"]))
def test_any_error_body_is_read_without_failing(text: str, content_type: str) -> None:
    body = read_error_body(text, content_type)
    assert isinstance(body.describe(), str)
    assert len(body.message) <= 200
    assert all(set(item) == {"property", "message"} for item in body.items)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_json_error_body_is_read_without_failing(data: object) -> None:
    body = read_error_body(json.dumps(data), "application/json")
    assert isinstance(body.describe(), str)
